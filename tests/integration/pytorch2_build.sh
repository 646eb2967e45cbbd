#!/usr/bin/env bash
# torch2/sparktorch, the binary built against the LibTorch of PyPI's PyTorch 2.x (TORCH_WHEEL, its
# torch folder; core/libtorch_wheel.cmake): it says which LibTorch it has, loads that wheel's CPU
# libraries and no CUDA one, refuses --device cuda, and trains and predicts the models that
# Debian's LibTorch 1.13 (SPARKTORCH_DEFAULT, the main binary) refuses: nn.RMSNorm's
# aten::rms_norm, and a transformer encoder layer's aten::scaled_dot_product_attention. Its
# predictions are 2.x's own forward of the models it wrote, which torch.jit.load reads.
#
# The environment, besides lib.sh's (SPARKTORCH is torch2/sparktorch here):
#   SPARKTORCH_DEFAULT   the main build's binary
#   SPARKTORCH_VERSION   the project's version
#   TORCH_WHEEL          the torch folder torch2/sparktorch was built against
#   TORCH2_PYTHON        a python that imports that torch
source "$(dirname "$0")/lib.sh"
setup_workdir pytorch2_build
require_data train2k.csv test2k.csv test2k.labels
: "${SPARKTORCH_DEFAULT:?set SPARKTORCH_DEFAULT to the main build's sparktorch}"
: "${SPARKTORCH_VERSION:?set SPARKTORCH_VERSION to the project's version}"
: "${TORCH_WHEEL:?set TORCH_WHEEL to the torch folder of the wheel}"
: "${TORCH2_PYTHON:?set TORCH2_PYTHON to a python with PyTorch 2.x}"
PY=$TORCH2_PYTHON
export PYTHONWARNINGS=ignore # 2.x warns that torch.jit.script is deprecated
unset LD_LIBRARY_PATH

check "--version names the wheel's LibTorch"
"$PY" -c 'import torch; print(torch.__version__.split("+")[0]); print(torch.__path__[0])' \
  >torch.txt 2>&1 || fail "TORCH2_PYTHON=$PY cannot import torch: $(cat torch.txt)"
libtorch=$(sed -n 1p torch.txt)
assert_eq "$(realpath "$TORCH_WHEEL")" "$(realpath "$(sed -n 2p torch.txt)")" "the torch folder of $PY"
assert_eq "sparktorch $SPARKTORCH_VERSION (LibTorch $libtorch)" "$("$SPARKTORCH" --version)" \
  "torch2/sparktorch --version"
default_version=$("$SPARKTORCH_DEFAULT" --version)
[[ $default_version =~ ^sparktorch\ $SPARKTORCH_VERSION\ \(LibTorch\ (1\.[0-9.]+)\)$ ]] ||
  fail "the main binary's --version: expected 'sparktorch $SPARKTORCH_VERSION (LibTorch 1.x.y)', got '$default_version'"
default_libtorch=${BASH_REMATCH[1]}
echo "  ok: the main binary says '$default_version'"

check "it loads the wheel's libtorch_cpu and libc10, with LD_LIBRARY_PATH unset, and no CUDA LibTorch"
ldd "$SPARKTORCH" >ldd.txt 2>&1 || fail "ldd $SPARKTORCH: $(cat ldd.txt)"
! grep 'not found' ldd.txt || fail "the loader cannot find a library (above)"
wheel_lib=$(realpath "$TORCH_WHEEL/lib")
for lib in libtorch_cpu.so libc10.so libgomp.so.1; do
  path=$(awk -v l="$lib" '$1 == l { print $3 }' ldd.txt)
  assert_eq "$wheel_lib/$lib" "$(realpath -m "$path")" "where $lib comes from"
done
for lib in libcudart.so.13 libcupti.so.13; do # libtorch_cpu's own RPATH finds them
  grep -q "^[[:space:]]*$lib => .*/nvidia/" ldd.txt || fail "$lib not loaded from pip's nvidia folder"
  echo "  ok: $lib from pip's nvidia folder"
done
if grep -E 'libtorch\.so|libtorch_cuda|libc10_cuda|libtorch_cpu\.so\.1' ldd.txt; then
  fail "it loads a CUDA LibTorch or Debian's (above)"
fi
echo "  ok: no libtorch.so, libtorch_cuda.so, libc10_cuda.so or Debian's libtorch_cpu.so.1.x"

# rms.pt: nn.RMSNorm (2.4+); transformer.pt: the 784 features as 16 tokens of 49, a linear embedding
# to 32, one nn.TransformerEncoderLayer (4 heads), the mean over the tokens, 10 classes.
cat >modules.py <<'PY'
import torch
from torch import nn


def rms():
    return nn.Sequential(nn.Linear(784, 16), nn.RMSNorm(16), nn.Linear(16, 10))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(49, 32)
        self.encoder = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0,
                                                  batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(x.size(0), 16, 49)
        return self.head(self.encoder(self.embed(x)).mean(1))


if __name__ == "__main__":
    import json
    torch.manual_seed(0)
    torch.jit.script(rms()).save("rms.pt")
    torch.jit.script(Transformer()).save("transformer.pt")
    json.dump({"loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.003}},
              open("train.json", "w"))
PY
"$PY" modules.py >modules.txt 2>&1 || fail "torch $libtorch: $(cat modules.txt)"

check "the main binary (LibTorch $default_libtorch) refuses both: exit 5, naming the operator"
head -n 1000 "$DATA/train2k.csv" >train1k.csv
for pair in rms:aten::rms_norm transformer:aten::scaled_dot_product_attention; do
  model=${pair%%:*} op=${pair#*:}
  expect_exit 5 "sparktorch: error: $model.pt: its TorchScript code does not compile with LibTorch $default_libtorch (Unknown builtin op: $op.); a model scripted by a newer PyTorch may call operators it lacks" \
    --stdout-empty -- "$SPARKTORCH_DEFAULT" -q train --model "$model.pt" --train-config train.json \
    --input train1k.csv --epochs 1 --output refused.pt
done

check "torch2/sparktorch trains them (1,000 rows, 5 epochs) and predicts 2,000 test rows"
# Measured: rms 0.770, transformer 0.623; chance is 0.1.
for pair in rms:0.65 transformer:0.45; do
  model=${pair%%:*} least=${pair#*:}
  run_ok "$model.records" "$SPARKTORCH" train --model "$model.pt" --train-config train.json \
    --input train1k.csv --epochs 5 --seed 1 --output "${model}_trained.pt"
  assert_eq 1000 "$(summary_field "$model.records" rows_read)" "$model: rows read"
  run_ok "$model.predictions" "$SPARKTORCH" predict --model "${model}_trained.pt" \
    --input "$DATA/test2k.csv"
  assert_cmp "$(accuracy "$model.predictions" "$DATA/test2k.labels")" ">=" "$least" \
    "$model: test accuracy"
done

check "torch $libtorch loads the models it wrote; its forward is predict --prediction vector's"
head -n 200 "$DATA/test2k.csv" >rows.csv
for model in rms transformer; do
  run_ok "$model.vector" "$SPARKTORCH" predict --model "${model}_trained.pt" --input rows.csv \
    --prediction vector
done
"$PY" - >agrees.txt 2>&1 <<'PY' || fail "$(cat agrees.txt)"
import sys
import numpy as np
import torch
sys.path.insert(0, ".")
import modules

rows = torch.from_numpy(np.loadtxt("rows.csv", delimiter=",", dtype=np.float32)[:, 1:].copy())
for name, module in [("rms", modules.rms), ("transformer", modules.Transformer)]:
    scripted = torch.jit.load(name + "_trained.pt").eval()
    untrained = torch.jit.load(name + ".pt")
    net = module()
    net.load_state_dict(scripted.state_dict())  # strict: the same keys and shapes
    net.eval()
    printed = torch.from_numpy(np.loadtxt(name + ".vector", delimiter=",", dtype=np.float32))
    with torch.no_grad():
        out, eager, before = scripted(rows), net(rows), untrained(rows)
    assert out.shape == printed.shape == (200, 10), "shapes %s, %s" % (out.shape, printed.shape)
    diff = (out - printed).abs().max().item()
    assert torch.allclose(out, printed, rtol=1e-4, atol=1e-4), \
        "%s: 2.x and sparktorch predict differ by %g" % (name, diff)
    assert torch.allclose(eager, printed, rtol=1e-4, atol=1e-4), \
        "%s: torch.nn with its state_dict and sparktorch differ" % name
    moved = (before - printed).abs().max().item()
    assert moved > 1e-2, "%s: the trained model predicts what the untrained one does" % name
    print("%s: max |2.x - sparktorch| %.2g (training moved the outputs by up to %.2g)"
          % (name, diff, moved))
PY
sed 's/^/  ok: /' agrees.txt

check "--device cuda: it has no CUDA (libtorch_cuda.so is not linked), exit 6"
expect_exit 6 "sparktorch: error: --device cuda: this LibTorch was built without CUDA, or no CUDA driver or GPU is available on this machine; use --device cpu or a CUDA build of LibTorch" \
  --stdout-empty -- "$SPARKTORCH" -q predict --device cuda --model rms_trained.pt --input rows.csv
