#!/usr/bin/env bash
# Checkpoint and resume (man sparktorch, --model, --checkpoint-every, --fresh-optimizer): a model
# trained 2 epochs and continued for 3 has the weights of the same job trained 5 epochs in one
# go, with Adam's state and a cosine schedule; a job killed after a checkpoint restarts from it
# to the same weights; PyTorch reads the optimizer state and loads it into torch.optim.Adam; a
# hogwild server resumes the optimizer state of the model it starts from.
source "$(dirname "$0")/lib.sh"
setup_workdir resume
require_data train2k.csv train12k.csv

MLP="$REPO/examples/fashion_mnist_mlp.json"
ERR="sparktorch: error:"
PY=$(torch_python)
# T_max: the cosine over all 5 epochs, also in a run that trains only the first 2 of them.
TRAIN=("$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --lr 0.002
  --lr-schedule '{"type": "cosine", "T_max": 5}' --seed 3)

# max_diff A.pt B.pt: the largest absolute difference between the two models' parameters.
max_diff() {
  "$PY" -c '
import sys, torch
a = torch.jit.load(sys.argv[1]).state_dict()
b = torch.jit.load(sys.argv[2]).state_dict()
assert a.keys() == b.keys(), (a.keys(), b.keys())
print("%.3g" % max((a[k] - b[k]).abs().max().item() for k in a))' "$1" "$2"
}

check "5 epochs at once against 2, then 3 more from the trained model"
run_ok five.records "${TRAIN[@]}" --epochs 5 --metrics five.metrics -o five.pt
run_ok two.records "${TRAIN[@]}" --epochs 2 -o two.pt
run_ok more.records "$SPARKTORCH" train --model two.pt --input "$DATA/train2k.csv" --epochs 3 \
  --seed 3 --metrics more.metrics -o more.pt
grep -q "resuming after epoch 2: the adam state and the schedule's position" more.records.err ||
  fail "no resuming line in the log: $(head -5 more.records.err)"
assert_eq "3 4 5" "$(python3 -c '
import json, sys
print(" ".join(str(json.loads(l)["epoch"]) for l in open(sys.argv[1])))' more.metrics)" \
  "the continued run's epochs, numbered on"
assert_eq "$(tail -n 3 five.metrics | python3 -c '
import json, sys
print(" ".join("%.10g" % json.loads(l)["lr"] for l in sys.stdin))')" "$(python3 -c '
import json, sys
print(" ".join("%.10g" % json.loads(l)["lr"] for l in open(sys.argv[1])))' more.metrics)" \
  "the rates of epochs 3-5: the cosine over 5 epochs goes on"
assert_cmp "$(max_diff five.pt more.pt)" "<" 1e-5 "largest weight difference, 5 against 2 + 3 epochs"
assert_eq 5 "$(summary_field more.records epochs)" "the continued run's summary: epochs"

check "--fresh-optimizer starts over: epochs from 1, Adam's moments gone, other weights"
run_ok fresh.records "$SPARKTORCH" -q train --model two.pt --input "$DATA/train2k.csv" --epochs 3 \
  --seed 3 --fresh-optimizer -o fresh.pt
assert_eq 3 "$(summary_field fresh.records epochs)" "the fresh run's summary: epochs"
assert_cmp "$(max_diff five.pt fresh.pt)" ">" 1e-3 "largest weight difference, 5 against 2 + 3 fresh"

check "a job killed after a checkpoint restarts from it to the same weights"
# 12,000 rows (about 0.4 s an epoch): the job is killed at its first checkpoint, long before its end.
LONG=("$SPARKTORCH" train --model "$MLP" --input "$DATA/train12k.csv" --seed 5 --epochs 8)
run_ok whole.records "${LONG[@]}" -o whole.pt
"${LONG[@]}" --checkpoint-every 2 -o killed.pt >killed.records 2>killed.err &
pid=$!
for _ in $(seq 1200); do
  grep -q "checkpoint after epoch [0-9]* written to killed.pt" killed.err && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null || fail "the job ended before it was killed: $(tail -3 killed.err)"
wait "$pid" 2>/dev/null || true
run_ok inspect.json "$SPARKTORCH" inspect killed.pt --json
epochs_run=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifest"]["training"]["epochs_run"])' inspect.json)
[[ $epochs_run =~ ^[246]$ ]] || fail "the checkpoint's epochs_run: $epochs_run"
run_ok restarted.records "$SPARKTORCH" -q train --model killed.pt --input "$DATA/train12k.csv" \
  --seed 5 --epochs $((8 - epochs_run)) -o restarted.pt
assert_cmp "$(max_diff whole.pt restarted.pt)" "<" 1e-5 \
  "largest weight difference, 8 epochs at once against a restart after epoch $epochs_run"

check "--resume: the job restarts from its own checkpoint to the same weights, --epochs its total"
assert_eq "$epochs_run" "$("${LONG[@]}" -q --checkpoint-every 2 --check-resume --resume killed.pt)" \
  "--check-resume: the epoch it would resume after"
run_ok resumed.records "${LONG[@]}" -q --checkpoint-every 2 --resume killed.pt -o resumed.pt
assert_cmp "$(max_diff whole.pt resumed.pt)" "<" 1e-5 \
  "largest weight difference, 8 epochs at once against --resume after epoch $epochs_run"
assert_eq "$epochs_run" "$(summary_field resumed.records resumed_after_epoch)" \
  "the summary's resumed_after_epoch"
assert_eq 8 "$(summary_field resumed.records epochs)" "the summary's epochs"
assert_eq 0 "$("${LONG[@]}" -q --check-resume --resume none.pt)" \
  "--check-resume without the file: nothing to resume"

check "--resume refuses another job's checkpoint and a corrupt one, in one line"
expect_exit_match 5 "$ERR --resume killed\.pt: a checkpoint of another job \(job key [0-9a-f]{12}, this job's [0-9a-f]{12}\): another model, training config or training settings; remove it or resume into another file" \
  -- "${LONG[@]}" -q --batch-size 32 --resume killed.pt
head -c 4000 killed.pt >corrupt.pt
expect_exit_match 5 "$ERR --resume corrupt\.pt: not a checkpoint sparktorch can read \(a corrupt or partial file\?\): .+" \
  -- "${LONG[@]}" -q --resume corrupt.pt
expect_exit 5 "$ERR --resume whole.pt: a checkpoint of another job (it records no job key): another model, training config or training settings; remove it or resume into another file" \
  --stdout-empty -- "${LONG[@]}" -q --resume whole.pt

check "PyTorch reads the optimizer state and loads it into torch.optim.Adam"
"$PY" - more.pt >torch_state.txt <<'EOF' || fail "python: $(cat torch_state.txt)"
import io, sys, torch
extra = {"optimizer.pt": ""}
model = torch.jit.load(sys.argv[1], _extra_files=extra)
state = torch.load(io.BytesIO(extra["optimizer.pt"]))
params = list(model.parameters())
opt = torch.optim.Adam(params, lr=0.002)
opt.load_state_dict(state)
s = opt.state[params[0]]
print(len(state["state"]), int(s["step"].item()), tuple(s["exp_avg"].shape),
      state["param_groups"][0]["initial_lr"])
loss = model(torch.zeros(2, 784)).sum()
loss.backward()
opt.step()
print("stepped", int(opt.state[params[0]]["step"].item()))
EOF
# 2,000 rows, batch 64: 32 steps an epoch, 5 epochs.
assert_eq "6 160 (256, 784) 0.002|stepped 161" "$(paste -sd'|' torch_state.txt)" \
  "state entries, step, exp_avg's shape, initial_lr; a step after load_state_dict"

check "--checkpoint-every needs --output or a tracker"
expect_exit 2 "$ERR --checkpoint-every needs --output FILE, or a --tracker to send the checkpoints to: a checkpoint is the model file a restarted job continues from" \
  --stdout-empty -- "${TRAIN[@]}" --checkpoint-every 1

check "hogwild: a server resumes a trained model's Adam state (1 worker: 1 epoch, then 1 more = 2 local epochs)"
trap 'kill -9 $(jobs -p) 2>/dev/null || true' EXIT
# hogwild_epoch MODEL OUT [serve flags]: a server for one worker, which trains 1 epoch in input
# order on train2k.csv; the model goes to OUT, the server's log to OUT.err.
hogwild_epoch() {
  local model=$1 out=$2 server
  shift 2
  rm -f server.port
  "$SPARKTORCH" serve --mode hogwild -n 1 --model "$model" --seed 3 --listen 127.0.0.1:0 \
    --port-file server.port -o "$out" "$@" >/dev/null 2>"$out.err" &
  server=$!
  wait_port_file "$server" server.port server "$out.err"
  "$SPARKTORCH" -q train --mode hogwild --server "$(cat server.port)" --rank 0 --world-size 1 \
    --label-col 0 -e 1 --no-shuffle --seed 3 <"$DATA/train2k.csv" >/dev/null 2>"$out.worker.err" ||
    fail "the worker failed: $(tail -2 "$out.worker.err")"
  wait_for "$server"
  assert_eq 0 "$RC" "the server's exit status ($(tail -2 "$out.err"))"
}
run_ok local2.records "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --no-shuffle \
  --epochs 2 --seed 3 -o local2.pt
hogwild_epoch "$MLP" hogwild1.pt
hogwild_epoch hogwild1.pt hogwild2.pt
grep -q "resuming the adam state of hogwild1.pt (trained 1 epoch); the workers' epochs count from 1" \
  hogwild2.pt.err || fail "no resuming line in the server's log: $(grep -m3 info hogwild2.pt.err)"
assert_cmp "$(max_diff local2.pt hogwild2.pt)" "<" 1e-6 "largest weight difference, 1 + 1 hogwild epochs against 2 local"
assert_eq 2 "$("$SPARKTORCH" inspect hogwild2.pt --json | python3 -c '
import json, sys; print(json.load(sys.stdin)["manifest"]["training"]["epochs_run"])')" "the resumed model's epochs_run"
hogwild_epoch hogwild1.pt fresh2.pt --fresh-optimizer
assert_cmp "$(max_diff local2.pt fresh2.pt)" ">" 1e-4 "largest weight difference with --fresh-optimizer (Adam starts over)"
