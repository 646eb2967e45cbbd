#!/usr/bin/env bash
# Bad rows, bad specs, bad model files, unavailable devices and bad flags: each ends the run with
# its own exit status and one exact line on stderr naming what is at fault (man sparktorch,
# EXIT STATUS and DIAGNOSTICS), and leaves nothing on stdout. The skip policy counts bad rows.
source "$(dirname "$0")/lib.sh"
setup_workdir bad_input
require_data train12k.csv

MLP="$REPO/examples/fashion_mnist_mlp.json"
ERR="sparktorch: error:"
head -n 2 "$DATA/train12k.csv" >good2.csv
row=$(head -n 1 good2.csv)  # label 9, then 784 pixels starting "0,0,0,..."

# train_stdin FLAG...: trains the MLP spec for one epoch on the rows on stdin, quietly.
# shellcheck disable=SC2120  # called with flags through expect_exit and run_ok
train_stdin() { "$SPARKTORCH" -q train --model "$MLP" --epochs 1 --output model.pt "$@"; }
bad_third_row() {  # bad_third_row ROW: writes good2.csv plus ROW as bad.csv
  { cat good2.csv; printf '%s\n' "$1"; } >bad.csv
}

check "csv: wrong feature count (exit 3, line number, expected and actual count)"
bad_third_row "1,2,3,4,5,6,7,8,9,10,11,12"
expect_exit 3 "$ERR stdin:3: expected 785 columns (784 features + 1 label), got 12" --stdout-empty \
  -- train_stdin <bad.csv

check "csv: a field that is not a number (column is the byte offset of the field)"
bad_third_row "${row/#9,0,/9,abc,}"
expect_exit 3 "$ERR stdin:3:3: expected a number, got \"abc\"" --stdout-empty -- train_stdin <bad.csv
expect_exit 3 "$ERR bad.csv:3:3: expected a number, got \"abc\"" --stdout-empty \
  -- train_stdin --input bad.csv

check "csv: NaN is refused by default (exit 3 at stdin:3:3) and accepted with --allow-nan"
bad_third_row "${row/#9,0,/9,nan,}"
rc=0
train_stdin <bad.csv >last.out 2>last.err || rc=$?
assert_eq 3 "$rc" "exit status for a NaN feature"
[[ $(wc -l <last.err) -eq 1 && $(cat last.err) == "$ERR stdin:3:3: "* ]] ||
  fail "NaN: expected one line starting '$ERR stdin:3:3: ', got: $(cat last.err)"
run_ok nan.txt train_stdin --allow-nan <bad.csv
assert_eq 3 "$(summary_field nan.txt rows_read)" "rows_read with --allow-nan"

check "class label out of range for cross_entropy over 10 outputs"
bad_third_row "${row/#9,/10,}"
expect_exit 3 "$ERR stdin:3: label 10 is not a class index 0..9 (cross_entropy over 10 outputs)" \
  --stdout-empty -- train_stdin <bad.csv
bad_third_row "${row/#9,/-1,}"
expect_exit 3 "$ERR stdin:3: label -1 is not a class index 0..9 (cross_entropy over 10 outputs)" \
  --stdout-empty -- train_stdin <bad.csv
bad_third_row "${row/#9,/2.5,}"
expect_exit 3 "$ERR stdin:3: label 2.5 is not a class index 0..9 (cross_entropy over 10 outputs)" \
  --stdout-empty -- train_stdin <bad.csv

check "an empty line is a bad row"
bad_third_row ""
expect_exit 3 "$ERR stdin:3: empty line" --stdout-empty -- train_stdin <bad.csv

check "libsvm: index out of range, repeated and descending indices (column of the index)"
printf '3 1:0.5 784:0.25\n4 2:1\n' >good.svm
{ cat good.svm; echo "3 1:0.5 785:0.25"; } >bad.svm
expect_exit 3 "$ERR stdin:3:9: index 785 out of range 1..784" --stdout-empty \
  -- train_stdin --format libsvm <bad.svm
{ cat good.svm; echo "3 1:0.5 0:0.25"; } >bad.svm
expect_exit 3 "$ERR stdin:3:9: index 0 out of range 1..784" --stdout-empty \
  -- train_stdin --format libsvm <bad.svm
{ cat good.svm; echo "3 9:0.5 5:0.25"; } >bad.svm
expect_exit 3 "$ERR stdin:3:9: index 5 after 9: indices must be ascending" --stdout-empty \
  -- train_stdin --format libsvm <bad.svm
{ cat good.svm; echo "3 9:0.5 9:0.25"; } >bad.svm
expect_exit 3 "$ERR stdin:3:9: index 9 after 9: indices must be ascending" --stdout-empty \
  -- train_stdin --format libsvm <bad.svm

check "a line longer than --max-line-bytes (a csv row of 784 pixels is over 1000 bytes)"
expect_exit 3 "$ERR good2.csv:1: line longer than 1000 bytes (--max-line-bytes)" --stdout-empty \
  -- train_stdin --input good2.csv --max-line-bytes 1000

check "no rows at all"
expect_exit 3 "$ERR stdin: no rows to train on (empty input)" --stdout-empty -- train_stdin </dev/null

check "an input file that does not exist"
expect_exit 3 "$ERR no-such.csv: No such file or directory" --stdout-empty \
  -- train_stdin --input no-such.csv

check "--on-bad-row skip: bad rows are counted in the summary and training goes on"
{
  head -n 100 "$DATA/train12k.csv"
  echo "1,2,3"
  echo "abc"
  printf '%s\n' "${row/#9,/10,}"
  sed -n 101,200p "$DATA/train12k.csv"
} >mixed.csv
run_ok skip.txt "$SPARKTORCH" train --model "$MLP" --epochs 1 --output skip.pt \
  --on-bad-row skip --input mixed.csv
assert_eq 3 "$(summary_field skip.txt rows_skipped)" "rows_skipped"
assert_eq 200 "$(summary_field skip.txt rows_read)" "rows_read (good rows)"
assert_eq 200 "$(summary_field skip.txt rows)" "rows trained on"
assert_eq 3 "$(grep -c 'skipping bad row mixed.csv:10[123]' skip.txt.err)" \
  "bad rows logged on stderr, by line"
[[ -s skip.pt ]] || fail "no model written with --on-bad-row skip"

check "bad spec: an unknown layer type names the layer (exit 4)"
sed 's/{"type": "relu"}/{"type": "relux"}/' "$MLP" >unknown_layer.json
assert_eq 2 "$(grep -c relux unknown_layer.json)" "relux layers in the edited spec"
expect_exit 4 "$ERR layer 1: unknown type \"relux\"; known: linear, conv1d, conv2d, max_pool2d, avg_pool2d, flatten, reshape, dropout, batch_norm1d, batch_norm2d, layer_norm, embedding, relu, leaky_relu, gelu, tanh, sigmoid, softmax, log_softmax" \
  --stdout-empty -- "$SPARKTORCH" -q train --model unknown_layer.json --input good2.csv

check "bad spec: a layer whose in_features does not fit names the layer and the shape (exit 4)"
sed 's/"in_features": 256, "out_features": 10/"in_features": 255, "out_features": 10/' "$MLP" \
  >misfit.json
assert_eq 1 "$(grep -c '"in_features": 255' misfit.json)" "edited layers in misfit.json"
expect_exit 4 "$ERR layer 4 (linear): does not fit its input of shape [256]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x256 and 255x10)" \
  --stdout-empty -- "$SPARKTORCH" -q train --model misfit.json --input good2.csv

check "bad spec: an unknown field, a missing field, an unknown loss, a JSON syntax error (exit 4)"
echo '{"layers":[{"type":"linear","in_features":784,"out_features":10,"bais":true}]}' >spec1.json
expect_exit 4 "$ERR layer 0 (linear): unknown field \"bais\"" --stdout-empty \
  -- "$SPARKTORCH" -q train --model spec1.json --input good2.csv
echo '{"layers":[{"type":"linear","in_features":784}]}' >spec2.json
expect_exit 4 "$ERR layer 0 (linear): \"out_features\" is required (a positive integer)" \
  --stdout-empty -- "$SPARKTORCH" -q train --model spec2.json --input good2.csv
echo '{"layers":[{"type":"linear","in_features":784,"out_features":10}],"loss":"hinge"}' >spec3.json
expect_exit 4 "$ERR loss: unknown type \"hinge\"; known: cross_entropy, nll, mse, l1, smooth_l1, bce, bce_with_logits" \
  --stdout-empty -- "$SPARKTORCH" -q train --model spec3.json --input good2.csv
printf '{"layers": [\n  {"type": "linear", "in_features": 784, "out_features": 10}\n' >spec4.json
expect_exit 4 "$ERR spec4.json:2:61: syntax error while parsing array - unexpected end of input; expected ']'" \
  --stdout-empty -- "$SPARKTORCH" -q train --model spec4.json --input good2.csv

check "a model file that does not exist, and a file that is not a model (exit 5)"
expect_exit 5 "$ERR no-such.pt: No such file or directory" --stdout-empty \
  -- "$SPARKTORCH" -q train --model no-such.pt --input good2.csv
expect_exit 5 "$ERR no-such.pt: No such file or directory" --stdout-empty \
  -- "$SPARKTORCH" -q predict --model no-such.pt --input good2.csv
cp good2.csv not-a-model.pt
expect_exit 5 "$ERR not-a-model.pt: not a TorchScript model file (istream reader failed: reading file.); save one with torch.jit.script(net).save(path)" \
  --stdout-empty -- "$SPARKTORCH" -q predict --model not-a-model.pt --input good2.csv

check "--device cuda without CUDA (exit 6)"
if ldd "$SPARKTORCH" | grep -q 'libtorch_cuda'; then
  echo "  skipped: this sparktorch links a CUDA build of LibTorch"
else
  for device in cuda cuda:1; do
    expect_exit 6 "$ERR --device $device: this LibTorch was built without CUDA, or no CUDA driver or GPU is available on this machine; use --device cpu or a CUDA build of LibTorch" \
      --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input good2.csv --device "$device"
  done
fi

check "usage errors (exit 2)"
expect_exit 2 "$ERR The following argument was not expected: --frobnicate (run sparktorch --help, or sparktorch COMMAND --help)" \
  --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input good2.csv --frobnicate
expect_exit 2 "$ERR --device tpu: expected cpu, cuda, cuda:N or auto" --stdout-empty \
  -- "$SPARKTORCH" -q train --model "$MLP" --input good2.csv --device tpu
expect_exit 2 "$ERR --label-col and --no-label contradict each other" --stdout-empty \
  -- "$SPARKTORCH" -q train --model "$MLP" --input good2.csv --no-label --label-col 1
expect_exit 2 "$ERR A subcommand is required (run sparktorch --help, or sparktorch COMMAND --help)" \
  --stdout-empty -- "$SPARKTORCH"
# The flags that name one of a set (parsed into an enum once, in cli/): any other name, and the
# help lists the names.
for flag in "train --mode:auto,local,sync,hogwild" "train --lr-scaling:none,linear,sqrt" \
  "train --allreduce-dtype:fp32,bf16,fp16" \
  "train --prediction:argmax,vector,probabilities,class" \
  "predict --prediction:argmax,vector,probabilities,class" "serve --mode:sync,hogwild" \
  "train --on-bad-row:fail,skip" "predict --on-bad-row:fail,skip"; do
  command=${flag%% *} rest=${flag#* }
  name=${rest%%:*} names=${rest#*:}
  expect_exit 2 "$ERR $name: Sync not in {$names} (run sparktorch --help, or sparktorch COMMAND --help)" \
    --stdout-empty -- "$SPARKTORCH" -q "$command" "$name" Sync
  "$SPARKTORCH" "$command" --help | grep -qE -- "$name TEXT:\{$names\}" ||
    fail "$command --help does not list $name's names {$names}"
done

check "an output that cannot be written (exit 74)"
expect_exit 74 "$ERR no-such-dir/model.pt: cannot write the model: No such file or directory" \
  --stdout-empty -- "$SPARKTORCH" -q train --model "$MLP" --input good2.csv --epochs 1 \
  --output no-such-dir/model.pt
to_full() { "$@" >/dev/full; }
if [[ -w /dev/full ]]; then
  expect_exit 74 "$ERR stdout: cannot write records: No space left on device" \
    -- to_full "$SPARKTORCH" -q train --model "$MLP" --input good2.csv --epochs 1
  expect_exit 74 "$ERR stdout: cannot write predictions: No space left on device" \
    -- to_full "$SPARKTORCH" -q predict --model skip.pt --input good2.csv
fi
