#!/bin/bash
# Bring-your-own-data end to end: a generated CSV of three well-separated species (four numeric
# features, a name label in the last column) trains a small MLP to over 90% test accuracy, and
# the class names from the file reach the run's records, the file names its resolved config, progress
# counts rows as samples/s; `ingot predict` on the test rows (.npy, .npz) agrees with their labels,
# and names a bad table it is given.
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
grep -qE "^epoch 1/[0-9]+ done .* samples/s " "$work/out.txt" || fail "table rows are not counted as samples/s: $(grep '^epoch' "$work/out.txt" | head -2)"
grep -q " img/s " "$work/out.txt" && fail "table rows counted as images: $(grep -m1 ' img/s ' "$work/out.txt")"
awk -v a="$accuracy" 'BEGIN { exit !(a > 90) }' || fail "accuracy $accuracy% <= 90%: $line"
grep -rqs "versicolor" "$work/runs/own_csv" || fail "the class names from the CSV are not in the run's records"
grep -q "train: $work/train.csv" "$work/runs/own_csv/config.resolved.yaml" ||
  fail "the resolved config does not name the CSV files: $(grep -A3 "csv:" "$work/runs/own_csv/config.resolved.yaml")"
echo "own csv: accuracy $accuracy%: ok"

# ingot predict: the trained run on the test rows as a .npy (and a .npz member x), written as CSV;
# the predicted names agree with the CSV's labels; a sample of the wrong size is one error line.
/usr/bin/python3 - "$work" <<'PY'
import csv, sys, numpy as np
rows = list(csv.reader(open(sys.argv[1] + "/test.csv")))[1:]
np.save(sys.argv[1] + "/x.npy", np.array([[float(v) for v in r[:4]] for r in rows], dtype=np.float32))
np.savez(sys.argv[1] + "/x.npz", x=np.array([[float(v) for v in r[:4]] for r in rows[:5]], dtype=np.float64))
np.save(sys.argv[1] + "/bad.npy", np.zeros((2, 3), dtype=np.float32))
open(sys.argv[1] + "/labels.txt", "w").write("\n".join(r[4] for r in rows) + "\n")
PY
"$ingot" predict "$work/runs/own_csv" "$work/x.npy" "$work/x.npz" -o "$work/pred.csv" --top-k 2 > "$work/pred.txt" 2>&1 \
  || fail "predict: $(cat "$work/pred.txt")"
[ "$(wc -l < "$work/pred.csv")" -eq 96 ] || fail "predict wrote $(wc -l < "$work/pred.csv") lines, expected 1 + 90 + 5"
head -1 "$work/pred.csv" | grep -q "^input,index,class,name,probability,top_k$" || fail "header: $(head -1 "$work/pred.csv")"
agree=$(grep "x.npy," "$work/pred.csv" | cut -d, -f4 | paste -d' ' - "$work/labels.txt" | awk '$1 == $2' | wc -l)
[ "$agree" -gt 81 ] || fail "predict agrees with $agree of 90 labels"
"$ingot" predict "$work/runs/own_csv" "$work/x.npy" > "$work/printed.txt" 2> /dev/null || fail "predict to the terminal"
grep -qE "x.npy\[0\]  (setosa|versicolor|virginica)  [0-9.]+  \(" "$work/printed.txt" \
  || fail "printed form: $(head -2 "$work/printed.txt")"
set +e
"$ingot" predict "$work/runs/own_csv" "$work/bad.npy" > "$work/bad.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "bad.npy: samples of 3 values (\[3\]), but the model takes 4" "$work/bad.txt" \
  || fail "wrong sample size: exit $code: $(cat "$work/bad.txt")"
# A table given to predict is its argument, not the run's data.csv files.
printf 'sepal_length,sepal_width,petal_length,petal_width\n1,2,3,abc\n' > "$work/bad.csv"
set +e
"$ingot" predict "$work/runs/own_csv" "$work/bad.csv" > "$work/bad_csv.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "^ingot: error: $work/bad.csv row 2, column petal_width: 'abc' is not a number$" \
  "$work/bad_csv.txt" || fail "bad table: exit $code: $(cat "$work/bad_csv.txt")"
echo "predict: $agree of 90 agree with the labels: ok"
