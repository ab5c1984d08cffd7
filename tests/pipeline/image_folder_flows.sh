#!/bin/bash
# Folders of images end to end: PNGs of three classes of patterns (written here with Python's
# standard library: colour, grey and RGBA, two sizes) train an MLP on 12x12 grey inputs to over
# 90% test accuracy; `ingot predict` on the test folder (rows numbered, the file it wrote named) and
# on one file names the class folders; a corrupt PNG in the training folder stops the run with one
# line naming it.
# Usage: image_folder_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap "rm -rf \"$work\"" EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

/usr/bin/python3 tests/pipeline/make_pngs.py "$work"

"$ingot" run tests/pipeline/configs/image_folder.yaml --set data.image_folder.train="$work/train" \
  --set data.image_folder.test="$work/test" --runs-dir "$work/runs" > "$work/out.txt" 2>&1 ||
  fail "exit $?: $(tail -5 "$work/out.txt")"
line=$(grep -E "evaluate: 30 samples +accuracy" "$work/out.txt" | tail -1) ||
  fail "no evaluation: $(tail -5 "$work/out.txt")"
accuracy=$(echo "$line" | sed -E 's/.*accuracy ([0-9.]+)%.*/\1/')
awk -v a="$accuracy" 'BEGIN { exit !(a > 90) }' || fail "accuracy $accuracy% <= 90%: $line"
grep -q "skipped 1 file that is not" "$work/out.txt" || fail "no note of the skipped file: $(head -5 "$work/out.txt")"
grep -qE "^epoch 1/[0-9]+ done .* img/s " "$work/out.txt" || fail "images not counted as img/s: $(grep -m1 '^epoch' "$work/out.txt")"
grep -rqs "columns" "$work/runs/image_folder/config.resolved.yaml" || fail "the class names are not in the run's records"
echo "image_folder: accuracy $accuracy%: ok"

# ingot predict on the test folder (every image, sorted, named) and on one file.
"$ingot" predict "$work/runs/image_folder" "$work/test" -o "$work/pred.csv" > "$work/pred.txt" 2>&1 ||
  fail "predict: $(cat "$work/pred.txt")"
[ "$(wc -l < "$work/pred.csv")" -eq 31 ] || fail "predict wrote $(wc -l < "$work/pred.csv") lines, expected 1 + 30"
head -2 "$work/pred.csv" | tail -1 | grep -q "^$work/test/bars/00.png,0," || fail "first row: $(head -2 "$work/pred.csv")"
# Rows are numbered within their input (the folder): 0, 1, ..., 29.
[ "$(tail -n +2 "$work/pred.csv" | cut -d, -f2 | paste -sd' ')" = "$(seq -s' ' 0 29)" ] ||
  fail "index column: $(cut -d, -f2 "$work/pred.csv" | paste -sd' ')"
grep -q "^predict: 30 rows written to $work/pred.csv$" "$work/pred.txt" || fail "no written line: $(cat "$work/pred.txt")"
agree=$(tail -n +2 "$work/pred.csv" | awk -F, '{ n = split($1, p, "/"); if (p[n - 1] == $4) a++ } END { print a + 0 }')
[ "$agree" -gt 27 ] || fail "predict agrees with $agree of 30 folders"
"$ingot" predict "$work/runs/image_folder" "$work/test/frame/03.png" > "$work/one.txt" 2> /dev/null ||
  fail "predict on one file"
grep -qE "^$work/test/frame/03.png  frame  [0-9.]+  \(frame" "$work/one.txt" || fail "one file: $(cat "$work/one.txt")"
echo "predict: $agree of 30 agree with their folders: ok"

# A truncated PNG among the training images: exit 2, one line naming the file.
head -c 60 "$work/test/bars/01.png" > "$work/train/columns/broken.png"
set +e
"$ingot" run tests/pipeline/configs/image_folder.yaml --set data.image_folder.train="$work/train" \
  --set data.image_folder.test="$work/test" --runs-dir "$work/runs2" > "$work/bad.txt" 2>&1
code=$?
set -e
[ $code -ne 0 ] || fail "a corrupt PNG was accepted"
[ "$(grep -c "broken.png" "$work/bad.txt")" -eq 1 ] && grep -q "ingot: error: .*columns/broken.png: .*truncated" "$work/bad.txt" ||
  fail "corrupt PNG: exit $code: $(cat "$work/bad.txt")"
echo "corrupt PNG: exit $code, one line: ok"
