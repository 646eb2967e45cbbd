#!/usr/bin/env bash
# The model of examples/torchscript_model.py (a residual CNN in plain torch.nn, scripted in
# Python, loss and optimizer in net.json beside net.pt) trains with `sparktorch train --model
# net.pt` on flat csv rows and on rows shaped 1,28,28, learns (2 epochs on 12,000 rows: test
# accuracy 0.858 measured; 0.842 to 0.876 over seeds 0-5; about 8 s), and comes back to Python:
# the example's --check loads it with torch.jit.load, into a fresh instance of the class with
# load_state_dict, and finds the same outputs and the same classes as `sparktorch predict`; the
# check fails on a model without a manifest, on other state_dict keys and on other classes.
# A wrong net.json or --train-config stops training with exit 4 and the exact message.
source "$(dirname "$0")/lib.sh"
setup_workdir torchscript_example
require_data train12k.csv train2k.csv test2k.csv test2k.labels
PY=$(torch_python)
EXAMPLE="$REPO/examples/torchscript_model.py"
ERR="sparktorch: error:"

check "examples/torchscript_model.py writes net.pt and net.json"
run_ok write.txt "$PY" "$EXAMPLE" --out model
[[ -s model/net.pt ]] || fail "no model/net.pt"
assert_eq '{"loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}' \
  "$(cat model/net.json)" "model/net.json"

check "train it for 2 epochs on 12,000 rows: loss and optimizer from net.json"
start=$(now)
run_ok train.txt "$SPARKTORCH" train --model model/net.pt --input "$DATA/train12k.csv" \
  --epochs 2 --output trained.pt
echo "  trained in $(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
assert_eq 12000 "$(summary_field train.txt rows_read)" "rows_read"
assert_eq 2 "$(summary_field train.txt epochs)" "epochs"
assert_eq 1 "$(grep -c 'loss and optimizer from model/net.json' train.txt.err)" \
  "net.json named on stderr"

check "predict the 2,000 test rows"
run_ok predictions.txt "$SPARKTORCH" predict --model trained.pt --input "$DATA/test2k.csv"
assert_cmp "$(accuracy predictions.txt "$DATA/test2k.labels")" ">=" 0.80 \
  "test accuracy (measured 0.858; 0.842 to 0.876 over seeds)"

check "the example's --check: torch.jit.load, load_state_dict into the class, same outputs"
run_ok check.txt "$PY" "$EXAMPLE" --check trained.pt --rows "$DATA/test2k.csv" --limit 2000 \
  --predictions predictions.txt
cat check.txt
assert_eq 'manifest: source torchscript, input_shape [784], loss {"label_smoothing": 0.0, "type": "cross_entropy"}, optimizer {"amsgrad": false, "betas": [0.9, 0.999], "eps": 1e-08, "lr": 0.001, "type": "adam", "weight_decay": 0.0}' \
  "$(sed -n 1p check.txt)" "the manifest (loss and optimizer of net.json)"
assert_eq "state_dict: 18 tensors, the same keys as FashionResNet, loaded" \
  "$(sed -n 2p check.txt)" "the state_dict"
assert_eq "outputs: FashionResNet equals trained.pt on 2000 rows" \
  "$(sed -n '3s/ (max .*//p' check.txt)" "the outputs"
assert_eq "argmax: the same class as predictions.txt on all 2000 rows" \
  "$(sed -n 4p check.txt)" "the classes"
assert_eq "check passed" "$(tail -n 1 check.txt)" "the last line"

check "the check fails on a model without a manifest, on other keys, on predictions that differ"
rc=0
"$PY" "$EXAMPLE" --check model/net.pt --rows "$DATA/test2k.csv" >last.out 2>last.err || rc=$?
assert_eq 1 "$rc" "exit status for the untrained net.pt"
assert_eq "torchscript_model.py: check failed: model/net.pt has no sparktorch.json manifest: not a model sparktorch trained" \
  "$(cat last.err)" "stderr for the untrained net.pt"
awk 'NR == 7 { $0 = ($0 + 1) % 10 } { print }' predictions.txt >wrong.txt
rc=0
"$PY" "$EXAMPLE" --check trained.pt --rows "$DATA/test2k.csv" --limit 2000 \
  --predictions wrong.txt >last.out 2>last.err || rc=$?
assert_eq 1 "$rc" "exit status for one changed prediction"
assert_eq "torchscript_model.py: check failed: argmax agrees with wrong.txt on 1999 of 2000 rows" \
  "$(cat last.err)" "stderr for one changed prediction"

run_ok mlp.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_mlp.json" \
  --input "$DATA/train2k.csv" --epochs 1 --output mlp.pt
rc=0
"$PY" "$EXAMPLE" --check mlp.pt --rows "$DATA/test2k.csv" >last.out 2>last.err || rc=$?
assert_eq 1 "$rc" "exit status for a model of other state_dict keys (the MLP spec)"
assert_eq "torchscript_model.py: check failed: state_dict keys differ: only in FashionResNet ['block.bn1.bias', " \
  "$(head -c 101 last.err)" "stderr for the MLP (its start)"
assert_eq "only in mlp.pt ['0.bias', '0.weight', '2.bias', '2.weight', '4.bias', '4.weight']" \
  "$(sed 's/.*, only in mlp/only in mlp/' last.err)" "stderr for the MLP (its end)"

check "the same net.pt trains on rows shaped --input-shape 1,28,28 (2,000 rows, 1 epoch)"
run_ok shaped.txt "$SPARKTORCH" train --model model/net.pt --input "$DATA/train2k.csv" \
  --epochs 1 --input-shape 1,28,28 --output shaped.pt
run_ok shaped_predictions.txt "$SPARKTORCH" predict --model shaped.pt --input "$DATA/test2k.csv"
assert_lines 2000 shaped_predictions.txt "predictions of shaped.pt"
"$PY" - shaped.pt <<'PY' >shaped_manifest.txt || fail "reading shaped.pt's manifest"
import json, sys, torch
extra = {"sparktorch.json": ""}
torch.jit.load(sys.argv[1], _extra_files=extra)
print(json.loads(extra["sparktorch.json"])["input_shape"])
PY
assert_eq "[1, 28, 28]" "$(cat shaped_manifest.txt)" "input_shape in shaped.pt's manifest"

check "a wrong net.json beside net.pt, or --train-config, stops training (exit 4)"
mkdir bad
cp model/net.pt bad/net.pt
echo '{"loss": "hinge", "optimizer": {"type": "adam", "lr": 0.001}}' >bad/net.json
expect_exit 4 "$ERR loss: unknown type \"hinge\"; known: cross_entropy, nll, mse, l1, smooth_l1, bce, bce_with_logits" \
  --stdout-empty -- "$SPARKTORCH" -q train --model bad/net.pt --input "$DATA/train2k.csv" --epochs 1
echo '{"loss": "cross_entropy", "optimizer": {"type": "adamm"}}' >optimizer.json
expect_exit 4 "$ERR optimizer: unknown type \"adamm\"; known: sgd, adam, adamw, rmsprop, adagrad" \
  --stdout-empty -- "$SPARKTORCH" -q train --model model/net.pt --train-config optimizer.json \
  --input "$DATA/train2k.csv" --epochs 1
echo '{"loss": "cross_entropy", "optimizer": {"type": "adam", "lrr": 0.001}}' >field.json
expect_exit 4 "$ERR optimizer (adam): unknown field \"lrr\"" \
  --stdout-empty -- "$SPARKTORCH" -q train --model model/net.pt --train-config field.json \
  --input "$DATA/train2k.csv" --epochs 1
