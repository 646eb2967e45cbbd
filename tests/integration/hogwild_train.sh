#!/usr/bin/env bash
# Hogwild training through `sparktorch serve --mode hogwild`: 2 and 4 workers, with and without
# --lock, with --pull-every and --max-staleness, converge on 12,000 Fashion-MNIST rows split
# between them; the server's summary agrees with its workers' (every push is an update or a
# dropped gradient); a worker's --predict records use the final weights it pulled; the model
# loads in Python; workers that hold rows out give the server a validation loss, and the
# server's --early-stop-patience stops every worker early.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"
setup_workdir hogwild_train
require_data train12k.csv test2k.csv test2k.labels

# hogwild_run N EPOCHS [serve flags]: N workers on the 12,000 rows (equal parts), --predict;
# every process exits 0 and the summaries agree. Sets ACCURACY (on the test rows).
hogwild_run() {
  local n=$1 epochs=$2 i counts=()
  shift 2
  for ((i = 0; i < n; i++)); do counts+=($((12000 / n))); done
  split_rows "$DATA/train12k.csv" "${counts[@]}"
  start_server "$n" "$@"
  start_workers "$n" "$epochs" --predict
  finish_job "$n"
  assert_job_summary "$n"
  assert_eq "$epochs" "$(summary_field server.out epochs)" "server summary: epochs"
  assert_eq false "$(summary_field server.out stopped_early)" "server summary: stopped_early"
  assert_eq 12000 "$(summary_field server.out rows)" "server summary: rows of the last epoch"
  for ((i = 0; i < n; i++)); do assert_worker_records "$i" $((12000 / n)); done
  assert_final_weights "$n"
  ACCURACY=$(test_accuracy model.pt)
}

# assert_final_weights N: the workers that finished last pulled the server's final weights: the
# same checksum as the model, and their P records are what `sparktorch predict` says with it.
assert_final_weights() {
  local n=$1 i last=0 version crc
  version=$(summary_field server.out weights_version)
  crc=$(summary_field server.out weights_crc32)
  for ((i = 0; i < n; i++)); do
    [[ $(summary_field "out.$i" weights_version) == "$version" ]] || continue
    last=$((last + 1))
    assert_eq "$crc" "$(summary_field "out.$i" weights_crc32)" \
      "worker $i (finished at the final version $version): weights_crc32 against the server's"
    "$SPARKTORCH" -q predict --model model.pt --input "part$i.csv" >"predict.$i" ||
      fail "sparktorch predict --model model.pt --input part$i.csv failed"
    grep $'^P\t' "out.$i" | cut -f2 >"records.$i"
    assert_same_file "predict.$i" "records.$i" "worker $i's P records against predict with model.pt"
  done
  assert_cmp "$last" ">=" 1 "workers that finished with the final weights"
}

# Convergence runs take 3 epochs: hogwild's accuracy after a given update varies from run to run
# (the order of pushes differs), and after 2 epochs 4 workers measured 0.70-0.80 (one run in
# four at 0.70); after 3, 0.81-0.84, and 0.80-0.84 in 10 runs beside a busy core, but a CI run
# (two tests at a time on 2 cores) once measured 0.7525. The bound is 0.72, as with --pull-every
# below: it catches training that does not converge; the summaries' counts catch updates lost
# or applied twice.
check "2 workers, 6,000 rows each, 3 epochs: converges"
hogwild_run 2 3
assert_cmp "$ACCURACY" ">=" 0.72 "test accuracy (measured 0.80-0.84)"
assert_loads_in_python model.pt

check "2 workers with --lock: no gradient is stale"
hogwild_run 2 3 --lock
assert_eq 0 "$(summary_field server.out staleness_max)" "server summary: staleness_max"
assert_cmp "$(summary_field server.out staleness_mean)" "==" 0 "server summary: staleness_mean"
assert_cmp "$ACCURACY" ">=" 0.72 "test accuracy (measured 0.81-0.85)"

check "4 workers, 3,000 rows each, 3 epochs: converges"
hogwild_run 4 3
assert_cmp "$ACCURACY" ">=" 0.72 "test accuracy (measured 0.75-0.84)"

check "4 workers with --lock: no gradient is stale"
hogwild_run 4 3 --lock
assert_eq 0 "$(summary_field server.out staleness_max)" "server summary: staleness_max"
assert_cmp "$(summary_field server.out staleness_mean)" "==" 0 "server summary: staleness_mean"
assert_cmp "$ACCURACY" ">=" 0.72 "test accuracy (measured 0.80-0.85)"

check "--pull-every 4: a worker pulls once every 4 steps (and at each epoch's start), and converges"
# (Local steps between pulls make the accuracy vary more; 2 epochs measured 0.73-0.79.)
hogwild_run 2 3 --pull-every 4
for i in 0 1; do
  steps=$(summary_field "out.$i" steps)
  assert_eq $((3 * steps)) "$(summary_field "out.$i" pushes)" "worker $i: pushes (one per step)"
  # A stretch of 4 steps (or an epoch's last) ends with a push that brings the next weights;
  # the first pull may be one of its own.
  pulls=$(summary_field "out.$i" pulls)
  stretches=$((3 * ((steps + 3) / 4)))
  assert_cmp "$pulls" ">=" "$stretches" "worker $i: pulls ($steps steps an epoch, 3 epochs)"
  assert_cmp "$pulls" "<=" $((stretches + 1)) "worker $i: pulls ($steps steps an epoch, 3 epochs)"
done
assert_cmp "$ACCURACY" ">=" 0.72 "test accuracy (measured 0.76-0.84)"

check "--max-staleness 0 without --lock: a gradient is dropped exactly when it is stale"
hogwild_run 2 2 --max-staleness 0
dropped=$(summary_field server.out updates_dropped_stale)
assert_eq "$(workers_sum 2 pushes)" "$(($(summary_field server.out updates) + dropped))" \
  "server's updates + updates_dropped_stale against the workers' pushes"
if [[ $(summary_field server.out staleness_max) -gt 0 ]]; then
  assert_cmp "$dropped" ">" 0 "dropped gradients when some were stale (staleness_max > 0)"
else
  assert_eq 0 "$dropped" "dropped gradients when none was stale (staleness_max 0)"
fi
echo "  (measured: $dropped of $(workers_sum 2 pushes) pushes dropped)"

check "--validation-pct 0.1 on the workers: the server reports the validation loss"
split_rows "$DATA/train12k.csv" 6000 6000
start_server 2
start_workers 2 2 --validation-pct 0.1
finish_job 2
assert_job_summary 2
for i in 0 1; do
  assert_eq 600 "$(summary_field "out.$i" validation_rows)" "worker $i: validation_rows"
done
assert_eq 1200 "$(summary_field server.out validation_rows)" "server summary: validation_rows"
assert_eq 10800 "$(summary_field server.out rows)" "server summary: training rows"
assert_cmp "$(summary_field server.out validation_loss)" ">" 0 "server summary: validation_loss"
assert_cmp "$(summary_field server.out validation_loss)" "<" 0.8 \
  "server summary: validation_loss (measured 0.48)"
assert_cmp "$(summary_field server.out validation_accuracy)" ">=" 0.72 \
  "server summary: validation_accuracy (measured 0.78-0.82)"

check "--early-stop-patience 1 on the server, -e 30 on 400 rows each: every worker stops early"
split_rows "$DATA/train12k.csv" 400 400
start_server 2 --early-stop-patience 1
start_workers 2 30 --validation-pct 0.25
finish_job 2
assert_job_summary 2
assert_eq true "$(summary_field server.out stopped_early)" "server summary: stopped_early"
grep -qE "stopping early after epoch [0-9]+: no improvement for 1 epoch$" server.err ||
  fail "the server did not log why it stopped: $(tail -5 server.err)"
stop_epoch=$(grep -oE "stopping early after epoch [0-9]+" server.err | grep -oE "[0-9]+$")
assert_cmp "$stop_epoch" "<" 30 "the epoch after which the server stopped the job (measured 5-13)"
# The epochs a faster worker was in the middle of when told to stop are not the job's.
assert_eq "$stop_epoch" "$(summary_field server.out epochs)" "server summary: epochs"
assert_eq 600 "$(summary_field server.out rows)" "server summary: training rows of that epoch"
assert_eq 200 "$(summary_field server.out validation_rows)" \
  "server summary: validation rows of that epoch"
for i in 0 1; do
  assert_eq true "$(summary_field "out.$i" stopped_early)" "worker $i: stopped_early"
  assert_cmp "$(summary_field "out.$i" epochs)" "<" 30 "worker $i: epochs"
done
