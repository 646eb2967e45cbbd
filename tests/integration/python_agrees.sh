#!/usr/bin/env bash
# A model sparktorch trained is a TorchScript file Python loads: its state_dict fits the
# nn.Sequential the spec describes, that module's argmax equals `sparktorch predict` row for row,
# and the sparktorch.json manifest is there. A TorchScript model written in Python trains with
# sparktorch (loss and optimizer from net.json beside net.pt).
source "$(dirname "$0")/lib.sh"
setup_workdir python_agrees
require_data train2k.csv test2k.csv test2k.labels
PY=$(torch_python)

run_ok train.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_mlp.json" \
  --input "$DATA/train2k.csv" --epochs 2 --output mlp.pt
head -n 500 "$DATA/test2k.csv" >rows.csv
run_ok predictions.txt "$SPARKTORCH" predict --model mlp.pt --input rows.csv

check "Python: torch.jit.load, state_dict into nn.Sequential, manifest, argmax"
"$PY" - mlp.pt rows.csv >python.txt <<'PY'
import json, sys
import numpy as np
import torch
from torch import nn

extra = {"sparktorch.json": ""}
scripted = torch.jit.load(sys.argv[1], _extra_files=extra)
manifest = json.loads(extra["sparktorch.json"])
assert manifest["input_shape"] == [784], "manifest input_shape: %r" % manifest["input_shape"]
net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                    nn.Linear(256, 10))
net.load_state_dict(scripted.state_dict())  # strict: same keys and shapes
rows = np.loadtxt(sys.argv[2], delimiter=",", dtype=np.float32, ndmin=2)
with torch.no_grad():
    x = torch.from_numpy(rows[:, 1:])
    out = net(x)
    assert torch.allclose(out, scripted(x), atol=1e-5), "nn.Sequential and the .pt disagree"
for c in out.argmax(dim=1).tolist():
    print(c)
PY
assert_same_file predictions.txt python.txt "Python's argmax vs sparktorch predict"

check "a TorchScript model written in Python trains with sparktorch train --model net.pt"
"$PY" - <<'PY'
import json
import torch
from torch import nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
torch.jit.script(net).save("net.pt")
json.dump({"loss": "cross_entropy", "optimizer": {"type": "sgd", "lr": 0.05}}, open("net.json", "w"))
PY
run_ok user_train.txt "$SPARKTORCH" train --model net.pt --input "$DATA/train2k.csv" \
  --epochs 3 --output net_trained.pt
assert_eq 2000 "$(summary_field user_train.txt rows_read)" "rows_read"
run_ok user_predictions.txt "$SPARKTORCH" predict --model net_trained.pt --input "$DATA/test2k.csv"
assert_cmp "$(accuracy user_predictions.txt "$DATA/test2k.labels")" ">=" 0.6 \
  "test accuracy of the Python-written model (chance: 0.1)"
"$PY" -c 'import sys, torch; torch.jit.load(sys.argv[1])' net_trained.pt ||
  fail "Python cannot load the trained net_trained.pt"
