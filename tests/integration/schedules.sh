#!/usr/bin/env bash
# Learning-rate schedules, gradient clipping and early stopping's kept epoch, through the binary
# (man sparktorch, --lr-schedule, --clip-grad-norm, --early-stop-patience): the rate of every
# epoch in --metrics against torch.optim.lr_scheduler's formulas, the schedule in the spec, the
# flag and the manifest, its errors, and a hogwild server's schedule.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"
setup_workdir schedules
require_data train2k.csv

MLP="$REPO/examples/fashion_mnist_mlp.json"
ERR="sparktorch: error:"

# field_list METRICS KEY: the KEY of every line of a --metrics file, rounded to 10 digits.
field_list() {
  python3 -c '
import json, sys
print(" ".join("%.10g" % json.loads(l)[sys.argv[2]] for l in open(sys.argv[1])))' "$1" "$2"
}

check "--lr-schedule as JSON: cosine after a linear warm-up (SequentialLR of LinearLR, CosineAnnealingLR)"
run_ok cos.records "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --epochs 5 \
  --lr 0.002 --lr-schedule '{"type": "cosine", "warmup_epochs": 1, "warmup_start_factor": 0.5}' \
  --metrics cos.metrics --output cos.pt
# Epoch 1: 0.002 * 0.5; then CosineAnnealingLR(T_max=4) from 0.002: 0.002 * (1 + cos(pi i / 4)) / 2.
want=$(python3 -c '
import math
print(" ".join("%.10g" % x for x in [0.001] + [0.002 * (1 + math.cos(math.pi * i / 4)) / 2 for i in range(4)]))')
assert_eq "$want" "$(field_list cos.metrics lr)" "the rate of every epoch"
run_ok cos.json "$SPARKTORCH" inspect cos.pt --json
assert_eq '{"T_max": null, "eta_min": 0.0, "type": "cosine", "warmup_epochs": 1, "warmup_start_factor": 0.5}' \
  "$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["manifest"]["lr_schedule"], sort_keys=True))' cos.json)" \
  "the manifest's lr_schedule, every option spelled out"

check "a spec's lr_schedule, and --lr-schedule naming a type or none over it"
python3 - "$MLP" step.json <<'EOF'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["lr_schedule"] = {"type": "step", "step_size": 2, "gamma": 0.1}
json.dump(spec, open(sys.argv[2], "w"))
EOF
run_ok step.records "$SPARKTORCH" -q train --model step.json --input "$DATA/train2k.csv" --epochs 5 \
  --metrics step.metrics
assert_eq "0.001 0.001 0.0001 0.0001 1e-05" "$(field_list step.metrics lr)" "StepLR(step_size=2, gamma=0.1)"
run_ok none.records "$SPARKTORCH" -q train --model step.json --input "$DATA/train2k.csv" --epochs 3 \
  --lr-schedule none --metrics none.metrics
assert_eq "0.001 0.001 0.001" "$(field_list none.metrics lr)" "--lr-schedule none"
run_ok exp.records "$SPARKTORCH" -q train --model step.json --input "$DATA/train2k.csv" --epochs 3 \
  --lr-schedule '{"type": "exponential", "gamma": 0.5}' --metrics exp.metrics
assert_eq "0.001 0.0005 0.00025" "$(field_list exp.metrics lr)" "ExponentialLR(gamma=0.5)"

check "one_cycle changes the rate every step; the epoch's rate is its last step's"
run_ok cycle.records "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --epochs 2 \
  --batch-size 500 --lr 0.01 --lr-schedule one_cycle --metrics cycle.metrics
# OneCycleLR(max_lr=0.01, total_steps=8): step 3 (phase 1 ends at 0.3 * 8 - 1 = 1.4) and step 7.
want=$(python3 -c '
import math
a = lambda s, e, p: e + (s - e) / 2 * (math.cos(math.pi * p) + 1)
lo = 0.01 / 25; end = 1.4
print("%.10g %.10g" % (a(0.01, lo / 1e4, (3 - end) / (7 - end)), a(0.01, lo / 1e4, 1.0)))')
assert_eq "$want" "$(field_list cycle.metrics lr)" "the rate of each epoch's last step"

check "reduce_on_plateau and gradient clipping train"
run_ok plateau.records "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --epochs 3 \
  --lr-schedule '{"type": "reduce_on_plateau", "patience": 0}' --clip-grad-norm 1.0 \
  --clip-grad-value 0.5 --validation-pct 0.2 --metrics plateau.metrics
assert_lines 3 plateau.metrics "epochs"

check "schedule errors name the field"
expect_exit 4 "$ERR lr_schedule: unknown type \"linear\"; known: step, multistep, exponential, cosine, one_cycle, reduce_on_plateau, none" \
  --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --lr-schedule linear
expect_exit 4 "$ERR lr_schedule (step): \"step_size\" is required (a positive integer)" \
  --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --lr-schedule step
expect_exit 4 "$ERR --lr-schedule: not a JSON object: {\"type\": " \
  --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --lr-schedule '{"type": '
expect_exit 4 "$ERR lr_schedule (one_cycle): \"cycle_momentum\" needs an optimizer with a momentum or betas (sgd, rmsprop, adam, adamw); set it to false for this one" \
  --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --optimizer adagrad \
  --lr-schedule one_cycle

check "early stopping keeps the best epoch's weights and says which"
run_ok early.records "$SPARKTORCH" train --model "$MLP" --input "$DATA/train2k.csv" --epochs 8 \
  --lr 0.02 --validation-pct 0.25 --early-stop-patience 2 --metrics early.metrics --output early.pt
best=$(python3 -c '
import json, sys
h = [json.loads(l) for l in open(sys.argv[1])]
best = min(h, key=lambda e: (e["validation_loss"], e["epoch"]))
print(best["epoch"], "%.10g" % best["validation_loss"])' early.metrics)
assert_eq "${best%% *}" "$(summary_field early.records kept_epoch)" "the summary's kept_epoch: the best validation loss"
assert_eq "${best#* }" "$(summary_field early.records validation_loss | xargs printf '%.10g')" \
  "the summary's validation_loss: the kept epoch's"
if [[ ${best%% *} != "$(wc -l <early.metrics)" ]]; then
  grep -q "early stopping: kept the weights of epoch ${best%% *} (val_loss " early.records.err ||
    fail "no 'kept the weights of epoch ${best%% *}' line in the log: $(tail -3 early.records.err)"
fi

check "hogwild: the server follows the schedule, one rate change per epoch it decides"
split_rows "$DATA/train2k.csv" 1000 1000
start_server 2 --lr-schedule '{"type": "step", "step_size": 1, "gamma": 0.5}'
start_workers 2 3
finish_job 2
assert_eq "0.001 0.0005 0.00025" "$("$SPARKTORCH" inspect model.pt --json | python3 -c '
import json, sys
print(" ".join("%.10g" % e["lr"] for e in json.load(sys.stdin)["manifest"]["history"]))')" \
  "the served epochs' rates"
expect_exit 2 "$ERR --lr-schedule one_cycle: a hogwild server cannot know the steps of the run in advance; use cosine (with warmup_epochs) or another epoch schedule" \
  --stdout-empty -- env SPARKTORCH_SECRET=s3cret "$SPARKTORCH" -q serve --mode hogwild -n 1 --model "$MLP" \
  --lr-schedule one_cycle

check "--lr-scaling linear: 2 synchronous ranks step with twice the optimizer's lr"
export OMPI_MCA_btl_tcp_if_include=lo OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -f tracker.port
SPARKTORCH_SECRET=s3cret "$SPARKTORCH" -q serve --world-size 2 --listen 127.0.0.1:0 \
  --port-file tracker.port 2>tracker.err &
tracker=$!
wait_port_file "$tracker" tracker.port tracker tracker.err
for r in 0 1; do
  output=(); [[ $r == 0 ]] && output=(-o scaled.pt --metrics scaled.metrics)
  SPARKTORCH_SECRET=s3cret "$SPARKTORCH" train --model "$MLP" --tracker "$(cat tracker.port)" \
    --rank "$r" --world-size 2 --label-col 0 --epochs 1 --lr-scaling linear "${output[@]}" \
    <"part$r.csv" >"scaled.$r" 2>"scaled.$r.err" &
  rank[r]=$!
done
for r in 0 1; do wait "${rank[r]}" || fail "rank $r failed: $(tail -3 "scaled.$r.err")"; done
wait "$tracker" || fail "the tracker failed: $(tail -3 tracker.err)"
grep -q "lr 0.001 scaled (linear) for 2 ranks: 0.002" scaled.0.err ||
  fail "no scaling line: $(grep -i lr scaled.0.err | head -3)"
assert_eq 0.002 "$(field_list scaled.metrics lr)" "the epoch's rate"
assert_eq 0.002 "$("$SPARKTORCH" inspect scaled.pt --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest"]["optimizer"]["lr"])')" \
  "the manifest's optimizer lr"
expect_exit 2 "$ERR --lr-scaling: a hogwild worker does not step the server's optimizer; it is for synchronous ranks" \
  --stdout-empty -- "$SPARKTORCH" -q train --mode hogwild --server 127.0.0.1:9 --rank 0 --world-size 1 \
  --lr-scaling sqrt --input "$DATA/train2k.csv"
