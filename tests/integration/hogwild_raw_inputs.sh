#!/usr/bin/env bash
# Raw, unscaled inputs (issue 25): Fashion-MNIST pixels as 0-255, as SparkTorch's own example
# feeds them. Hogwild on them is erratic (its stale gradients are far off; sync is not), and
# sparktorch does not rescale rows itself, so it says why and what to do: the hogwild server
# warns once on the driver, naming the worker whose rows are far from unit scale, and each
# worker warns in its own log. Rows scaled to [0, 1], a spec that normalises its input first, and
# sync or local training say nothing. The numbers in each warning are computed here from the
# rows (awk), not taken from the binary.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"
setup_workdir hogwild_raw_inputs
require_data train12k.csv

python3 "$REPO/examples/prepare_fashion_mnist.py" --split train --limit 2000 --raw --out raw.csv
head -2000 "$DATA/train12k.csv" >scaled.csv
split_rows raw.csv 1000 1000
mv part0.csv raw0.csv
mv part1.csv raw1.csv
split_rows scaled.csv 1000 1000
mv part0.csv scaled0.csv
mv part1.csv scaled1.csv

# expected_warning FILE WHERE: the warning for the features of FILE (label first), as
# UnscaledFeaturesWarning words it.
expected_warning() {
  awk -F, -v where="$2" -v q="'" '
    { for (i = 2; i <= NF; i++) { s += $i * $i; n++; a = $i < 0 ? -$i : $i; if (a > m) m = a } }
    END {
      printf "%s: features far from unit scale (root mean square %.3g, largest |value| %.3g): ",
        where, sqrt(s / n), m
      printf "hogwild%ss gradients, computed on weights an update or more old, then throw the ", q
      printf "model far off, and the accuracy a run ends with varies widely from run to run; "
      printf "scale the features to about [-1, 1] (pixels 0-255: divide by 255; Spark ML: "
      printf "StandardScaler or MinMaxScaler) and predict with rows scaled alike, or train "
      printf "synchronously\n"
    }' "$1"
}

# warnings FILE: the text of FILE's warning lines about the features' scale, one a line.
warnings() {
  grep -E ' warning: .*features far from unit scale' "$1" | sed -E 's/^.* warning: //' || true
}

check "hogwild on raw pixels: the server warns once, naming the worker; each worker warns"
cp raw0.csv part0.csv
cp raw1.csv part1.csv
start_server 2
start_workers 2 1
finish_job 2
assert_eq 1 "$(warnings server.err | wc -l)" "the server's warnings about the features' scale"
id=$(warnings server.err | sed -E "s/^worker ([01])'s rows: .*/\1/")
assert_eq "$(expected_warning "raw$id.csv" "worker $id's rows")" "$(warnings server.err)" \
  "the server's warning (server.err)"
for i in 0 1; do
  assert_eq "$(expected_warning "raw$i.csv" stdin)" "$(warnings "err.$i")" "worker $i's warning (err.$i)"
done

check "hogwild on pixels scaled to [0, 1]: no warning"
cp scaled0.csv part0.csv
cp scaled1.csv part1.csv
start_server 2
start_workers 2 1
finish_job 2
assert_eq "" "$(warnings server.err)" "the server's warnings"
assert_eq "" "$(warnings err.0)$(warnings err.1)" "the workers' warnings"

check "a spec that normalises its input first (batch_norm1d): no warning"
cat >normalised.json <<'JSON'
{"input_shape": [784],
 "layers": [{"type": "batch_norm1d", "num_features": 784},
            {"type": "linear", "in_features": 784, "out_features": 10}],
 "loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}
JSON
MLP_SPEC=normalised.json start_server 2
cp raw0.csv part0.csv
cp raw1.csv part1.csv
start_workers 2 1
finish_job 2
assert_eq "" "$(warnings server.err)" "the server's warnings"
assert_eq "" "$(warnings err.0)$(warnings err.1)" "the workers' warnings"

check "one process on raw pixels: no warning (not hogwild: no stale gradients)"
run_ok local.out "$SPARKTORCH" -q train --model "$MLP_SPEC" --input raw.csv --label-col 0 -e 1
assert_eq "" "$(warnings local.out.err)" "the warnings"

if [[ ${WITH_MPI:-0} == 1 ]]; then
  check "sync, 2 ranks under mpirun on raw pixels: no warning"
  export OMPI_MCA_btl_tcp_if_include=lo OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  run_ok sync.out mpirun -np 2 --oversubscribe "$SPARKTORCH" -q train --model "$MLP_SPEC" \
    --input raw.csv --label-col 0 -e 1 -o sync.pt
  assert_eq "" "$(warnings sync.out.err)" "the warnings"
fi
