#!/usr/bin/env bash
# PyTorch 2.x (TORCH2_PYTHON, a venv with PyPI's torch) and this binary's LibTorch 1.13 work on
# each other's files: a model scripted and saved by 2.x trains and predicts here; every model
# sparktorch writes (from a JSON spec, MLP and CNN, and from the 2.x file) loads in 2.x with
# torch.jit.load, gives the outputs `sparktorch predict --prediction vector` prints, and its
# state_dict loads into the equivalent torch.nn module; its optimizer.pt loads into 2.x's
# torch.optim.Adam with torch.load's defaults, and a step from it is the step sparktorch takes.
# A model that calls an operator the binary's LibTorch lacks (nn.RMSNorm's) is refused by name.
# (Python starts four times: importing PyPI's torch takes seconds on a busy machine.)
source "$(dirname "$0")/lib.sh"
setup_workdir pytorch2
require_data train2k.csv test2k.csv test2k.labels

[[ -n ${TORCH2_PYTHON:-} ]] ||
  fail "TORCH2_PYTHON is not set: set it to a python with PyTorch 2.x (examples/install_python.sh)"
PY=$TORCH2_PYTHON
version=$("$PY" -c 'import torch; print(torch.__version__)' 2>&1) ||
  fail "TORCH2_PYTHON=$PY cannot import torch: $version"
[[ $version == 2.* ]] || fail "TORCH2_PYTHON=$PY has torch $version, not 2.x"
echo "torch $version ($PY)"
export PYTHONWARNINGS=ignore # 2.x warns that torch.jit.script is deprecated

head -n 200 "$DATA/test2k.csv" >rows.csv
head -n 64 "$DATA/train2k.csv" >batch.csv # one step at --batch-size 64

# Net: a CNN with batch norm, layer norm and tanh-GELU, written in 2.x. GELU's approximate
# argument makes 2.x write file format version 10 (an operator upgrader's), not the plain 3.
# mlp() and cnn(): the torch.nn equivalents of examples/fashion_mnist_{mlp,cnn}.json.
# Run as a script, it writes net.pt (with net.json, its loss and optimizer) and rms.pt.
cat >modules.py <<'PY'
import torch
from torch import nn
from torch.nn import functional as F


def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(1568, 128), nn.ReLU(), nn.Linear(128, 10))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 14 * 14, 64)
        self.norm = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            x = x.reshape(x.size(0), 1, 28, 28)
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = F.gelu(self.norm(self.fc1(torch.flatten(x, 1))), approximate="tanh")
        return self.fc2(x)


if __name__ == "__main__":
    import json
    import zipfile
    torch.manual_seed(0)
    torch.jit.script(Net()).save("net.pt")
    json.dump({"loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}},
              open("net.json", "w"))
    z = zipfile.ZipFile("net.pt")
    print(z.read([n for n in z.namelist() if n.endswith("/version")][0]).decode().strip())
    # nn.RMSNorm (new in 2.4) calls aten::rms_norm.
    rms = nn.Sequential(nn.Linear(784, 16), nn.RMSNorm(16), nn.Linear(16, 10))
    torch.jit.script(rms).save("rms.pt")
PY

check "a model scripted and saved by torch $version trains and predicts in sparktorch"
"$PY" modules.py >format_version.txt 2>&1 || fail "torch $version: $(cat format_version.txt)"
assert_eq 10 "$(cat format_version.txt)" "net.pt's file format version"
run_ok net_train.txt "$SPARKTORCH" train --model net.pt --input "$DATA/train2k.csv" --epochs 3 \
  --output net_trained.pt
assert_eq 2000 "$(summary_field net_train.txt rows_read)" "rows_read"
run_ok net_predictions.txt "$SPARKTORCH" predict --model net_trained.pt --input "$DATA/test2k.csv"
assert_cmp "$(accuracy net_predictions.txt "$DATA/test2k.labels")" ">=" 0.7 \
  "test accuracy of the model written in $version (chance: 0.1)"

check "a model that calls an operator newer than the binary's LibTorch: exit 5, naming it"
rc=0
"$SPARKTORCH" train -q --model rms.pt --train-config net.json --input "$DATA/train2k.csv" \
  --epochs 1 --output rms_trained.pt >rms.out 2>rms.err || rc=$?
if [[ $rc -eq 0 ]]; then
  echo "  ok: this LibTorch has aten::rms_norm (PyTorch 2.4+): rms.pt trains"
else
  # The message names the binary's LibTorch version; X stands for it here.
  expected="rms.pt: its TorchScript code does not compile with LibTorch X (Unknown builtin op:"
  expected+=" aten::rms_norm.); a model scripted by a newer PyTorch may call operators it lacks"
  assert_eq "5 sparktorch: error: $expected" \
    "$rc $(sed -E 's/LibTorch [0-9][0-9.a-z+]* [(]/LibTorch X (/' rms.err)" "exit status and stderr"
fi

check "torch $version loads each model sparktorch wrote: outputs, state_dict, torch.nn module"
run_ok mlp_train.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_mlp.json" \
  --input "$DATA/train2k.csv" --epochs 2 --output mlp.pt
run_ok cnn_train.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_cnn.json" \
  --input "$DATA/train2k.csv" --epochs 1 --output cnn.pt
for model in mlp cnn net_trained; do
  run_ok "$model.vector" "$SPARKTORCH" predict --model "$model.pt" --input rows.csv \
    --prediction vector
done
# For each model: torch.jit.load; the exact state_dict keys; outputs on rows.csv equal `sparktorch
# predict --prediction vector`'s, and the torch.nn module with the .pt's state_dict gives them too.
"$PY" - >agrees.txt 2>&1 <<'PY' || fail "$(cat agrees.txt)"
import json, sys
import numpy as np
import torch
sys.path.insert(0, ".")
import modules

models = {
    "mlp": (modules.mlp, ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]),
    "cnn": (modules.cnn, ["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias",
                          "9.weight", "9.bias"]),
    "net_trained": (modules.Net, [
        "conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
        "bn.num_batches_tracked", "fc1.weight", "fc1.bias", "norm.weight", "norm.bias",
        "fc2.weight", "fc2.bias"]),
}
rows = torch.from_numpy(np.loadtxt("rows.csv", delimiter=",", dtype=np.float32)[:, 1:].copy())
for name, (module, keys) in models.items():
    extra = {"sparktorch.json": ""}
    scripted = torch.jit.load(name + ".pt", _extra_files=extra)
    manifest = json.loads(extra["sparktorch.json"])
    got = list(scripted.state_dict())
    assert got == keys, "%s.pt: state_dict keys %s" % (name, got)
    net = module()
    net.load_state_dict(scripted.state_dict())  # strict: the same keys and shapes
    net.eval()
    scripted.eval()
    x = rows.reshape([len(rows)] + manifest["input_shape"])
    printed = torch.from_numpy(np.loadtxt(name + ".vector", delimiter=",", dtype=np.float32))
    with torch.no_grad():
        out, ref = scripted(x), net(x)
    assert out.shape == printed.shape == (200, 10), "shapes %s, %s" % (out.shape, printed.shape)
    diff = (out - printed).abs().max().item()
    assert torch.allclose(out, printed, rtol=1e-4, atol=1e-4), \
        "%s.pt: 2.x and sparktorch predict differ by %g" % (name, diff)
    assert torch.allclose(out, ref, rtol=1e-5, atol=1e-5), "%s: torch.nn and the .pt differ" % name
    print("%s.pt: %d keys, input_shape %s, max |2.x - sparktorch| %.2g" %
          (name, len(got), manifest["input_shape"], diff))
PY
sed 's/^/  ok: /' agrees.txt

check "optimizer.pt loads into torch $version's Adam with torch.load's defaults;" \
  "a step from it is sparktorch's"
for model in mlp net_trained; do
  run_ok "${model}_step.txt" "$SPARKTORCH" train --model "$model.pt" --input batch.csv --epochs 1 \
    --no-shuffle --output "${model}_step.pt"
done
"$PY" - >optimizer.txt 2>&1 <<'PY' || fail "$(cat optimizer.txt)"
import io, json, sys
import numpy as np
import torch
from torch import nn
sys.path.insert(0, ".")
import modules

rows = np.loadtxt("batch.csv", delimiter=",", dtype=np.float32)
x, y = torch.from_numpy(rows[:, 1:].copy()), torch.from_numpy(rows[:, 0]).long()


def step(net, opt):
    net.train()
    opt.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    opt.step()


def max_diff(a, b):
    return max((a[k].double() - b[k].double()).abs().max().item() for k in a)


for name, module in [("mlp", modules.mlp), ("net_trained", modules.Net)]:
    extra = {"sparktorch.json": "", "optimizer.pt": ""}
    scripted = torch.jit.load(name + ".pt", _extra_files=extra)
    net = module()
    net.load_state_dict(scripted.state_dict())
    before = {k: v.clone() for k, v in net.state_dict().items()}
    steps = 32 * json.loads(extra["sparktorch.json"])["training"]["epochs"]  # 2000 rows / 64
    state = torch.load(io.BytesIO(extra["optimizer.pt"]))  # the default: weights_only=True in 2.6+
    assert torch.load(io.BytesIO(extra["optimizer.pt"]), weights_only=True).keys() == state.keys()
    params = list(net.parameters())
    assert sorted(state["state"]) == list(range(len(params))), "states %s" % sorted(state["state"])
    for i, s in state["state"].items():
        assert sorted(s) == ["exp_avg", "exp_avg_sq", "step"], "state %d: %s" % (i, sorted(s))
        assert s["step"].item() == steps, "%s: step %s, expected %d" % (name, s["step"], steps)
    opt = torch.optim.Adam(net.parameters())
    opt.load_state_dict(state)
    assert opt.param_groups[0]["lr"] == 0.001 and opt.param_groups[0]["betas"] == (0.9, 0.999)
    step(net, opt)
    theirs = torch.jit.load(name + "_step.pt").state_dict()
    diff = max_diff(net.state_dict(), theirs)
    assert diff < 2e-5, "%s: a step from optimizer.pt: 2.x and sparktorch: %g" % (name, diff)
    # A fresh Adam (step 1, no moments) moves the weights elsewhere: the comparison has teeth.
    other = module()
    other.load_state_dict(before)
    step(other, torch.optim.Adam(other.parameters()))
    assert max_diff(other.state_dict(), theirs) > 1e-4, "%s: a fresh Adam's step too" % name
    print("%s: step %d, max |2.x - sparktorch| %.2g" % (name, steps + 1, diff))
PY
sed 's/^/  ok: /' optimizer.txt
