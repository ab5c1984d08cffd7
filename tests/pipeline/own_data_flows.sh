#!/bin/bash
# Bring-your-own-data end to end: a generated CSV of three well-separated species (four numeric
# features, a name label in the last column) trains a small MLP to over 90% test accuracy, and
# the class names from the file reach the run's records, the file names its resolved config.
# Usage: own_data_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Class c has its features near (2c, -2c, c, 1) with uniform noise of +-0.8: separable.
make_csv() {  # make_csv FILE ROWS SEED
  awk -v rows="$2" -v seed="$3" 'BEGIN {
    srand(seed); split("setosa versicolor virginica", name, " ");
    print "sepal_length,sepal_width,petal_length,petal_width,species";
    for (i = 0; i < rows; i++) {
      c = i % 3;
      printf "%.3f,%.3f,%.3f,%.3f,%s\n", 2*c + 1.6*(rand()-0.5), -2*c + 1.6*(rand()-0.5),
             c + 1.6*(rand()-0.5), 1 + 1.6*(rand()-0.5), name[c+1];
    }
  }' > "$1"
}
make_csv "$work/train.csv" 300 1
make_csv "$work/test.csv" 90 2
"$ingot" run tests/pipeline/configs/own_csv.yaml --set data.csv.train="$work/train.csv" \
  --set data.csv.test="$work/test.csv" --runs-dir "$work/runs" > "$work/out.txt" 2>&1 ||
  fail "exit $?: $(tail -5 "$work/out.txt")"
line=$(grep -E "evaluate: 90 samples +accuracy" "$work/out.txt" | tail -1) ||
  fail "no evaluation: $(tail -5 "$work/out.txt")"
accuracy=$(echo "$line" | sed -E 's/.*accuracy ([0-9.]+)%.*/\1/')
awk -v a="$accuracy" 'BEGIN { exit !(a > 90) }' || fail "accuracy $accuracy% <= 90%: $line"
grep -rqs "versicolor" "$work/runs/own_csv" || fail "the class names from the CSV are not in the run's records"
grep -q "train: $work/train.csv" "$work/runs/own_csv/config.resolved.yaml" ||
  fail "the resolved config does not name the CSV files: $(grep -A3 "csv:" "$work/runs/own_csv/config.resolved.yaml")"
echo "own csv: accuracy $accuracy%: ok"
