#!/usr/bin/env bash
# A trained model given as --model continues training from its weights, with its spec, loss and
# optimizer settings (man sparktorch, --model); inspect shows its tensors, the trainable
# parameter count and the manifest.
source "$(dirname "$0")/lib.sh"
setup_workdir continue_training
require_data train2k.csv test2k.csv test2k.labels

MLP="$REPO/examples/fashion_mnist_mlp.json"

# first_loss METRICS: the first epoch's train_loss; last_loss METRICS: the last epoch's.
first_loss() { head -n 1 "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["train_loss"])'; }
last_loss() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["train_loss"])'; }

check "train the MLP spec 2 epochs, then continue from the trained model for 2 more"
run_ok first.records "$SPARKTORCH" train --model "$MLP" --input "$DATA/train2k.csv" --epochs 2 \
  --metrics first.metrics --output first.pt
run_ok second.records "$SPARKTORCH" train --model first.pt --input "$DATA/train2k.csv" --epochs 2 \
  --metrics second.metrics --output second.pt
assert_lines 2 first.metrics "epochs in the first run's metrics"
assert_lines 2 second.metrics "epochs in the second run's metrics"
assert_cmp "$(first_loss second.metrics)" "<" "$(first_loss first.metrics)" \
  "continued run's first-epoch loss vs the first run's first-epoch loss"
assert_cmp "$(first_loss second.metrics)" "<" "$(last_loss first.metrics)" \
  "continued run's first-epoch loss vs the first run's last-epoch loss"

check "the continued model predicts the test rows better"
run_ok first.pred "$SPARKTORCH" predict --model first.pt --input "$DATA/test2k.csv"
run_ok second.pred "$SPARKTORCH" predict --model second.pt --input "$DATA/test2k.csv"
acc1=$(accuracy first.pred "$DATA/test2k.labels")
acc2=$(accuracy second.pred "$DATA/test2k.labels")
assert_cmp "$acc2" ">" "$acc1" "test accuracy after 4 epochs vs after 2"

check "inspect: the MLP's tensors, 269322 trainable parameters, the manifest"
run_ok inspect.txt "$SPARKTORCH" inspect second.pt
assert_eq "model: second.pt" "$(head -n 1 inspect.txt)" "first line"
assert_eq "trainable parameters: 269322" "$(grep '^trainable parameters:' inspect.txt)" \
  "parameter count line"
assert_eq "0.weight parameter [256,784] 200704|0.bias parameter [256] 256|2.weight parameter [256,256] 65536|2.bias parameter [256] 256|4.weight parameter [10,256] 2560|4.bias parameter [10] 10" \
  "$(sed -n '3,8p' inspect.txt | awk '{ print $1, $2, $3, $4 }' | paste -sd'|')" "tensor table"
assert_eq "manifest:" "$(sed -n 9,10p inspect.txt | grep -x 'manifest:')" "manifest heading"

run_ok inspect.json "$SPARKTORCH" inspect second.pt --json
python3 - inspect.json >manifest_check.txt <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["manifest"]
print("parameters", d["parameters"])
print("tensors", " ".join(t["name"] for t in d["tensors"]))
print("spec", m["spec"]["name"], len(m["spec"]["layers"]))
print("input_shape", m["input_shape"], "output_shape", m["output_shape"])
print("loss", m["loss"]["type"], "optimizer", m["optimizer"]["type"], m["optimizer"]["lr"])
print("training", m["training"]["epochs"], m["training"]["rows"], "format", m["row_format"]["format"])
print("prediction", m["prediction"], "version", m["sparktorch_version"])
EOF
version=$("$SPARKTORCH" --version | awk '{ print $2 }')
assert_eq "parameters 269322
tensors 0.weight 0.bias 2.weight 2.bias 4.weight 4.bias
spec fashion_mnist_mlp 5
input_shape [784] output_shape [10]
loss cross_entropy optimizer adam 0.001
training 2 2000 format csv
prediction argmax version $version" "$(cat manifest_check.txt)" "inspect --json fields"

check "--lr given when continuing overrides the trained model's learning rate"
run_ok third.records "$SPARKTORCH" train --model second.pt --input "$DATA/train2k.csv" --epochs 1 \
  --lr 0.0005 --output third.pt
run_ok third.json "$SPARKTORCH" inspect third.pt --json
assert_eq "adam 0.0005" "$(python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))["manifest"]["optimizer"]
print(o["type"], o["lr"])' third.json)" "optimizer in the third model's manifest"
