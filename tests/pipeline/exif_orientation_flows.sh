#!/bin/bash
# EXIF orientation end to end (data.image_folder.exif_orientation: apply), on JPEGs written by
# make_jpegs with an EXIF segment added here: a run with test transforms (streamed) and one without
# (in memory) train with apply and record it; `ingot predict` on each run then turns an image as
# the run did: a copy tagged 1 predicts as the untagged file, a copy tagged 6 (turned a quarter
# clockwise) otherwise, and the tagged copy under --set data.image_folder.exif_orientation=ignore
# as the untagged file again. A bad value is one error line naming the key and both choices.
# Usage: exif_orientation_flows.sh INGOT_BINARY MAKE_JPEGS_BINARY
set -euo pipefail
ingot=$1
make_jpegs=$2
work=$(mktemp -d)
trap "rm -rf \"$work\"" EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$make_jpegs" "$work/img" --classes 2 --train 4 --val 2 --width 64 --height 40
# tag SRC DST N: DST is SRC with an EXIF segment (little-endian TIFF, IFD0: Orientation = N) after
# its JFIF header; the compressed image is untouched, so the stored pixels are SRC's.
tag() {
  /usr/bin/python3 - "$@" << 'EOF'
import struct, sys
src, dst, orientation = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, "rb").read()
assert data[:4] == b"\xff\xd8\xff\xe0", "no JFIF header"
at = 4 + struct.unpack(">H", data[4:6])[0]
tiff = b"II*\x00" + struct.pack("<IH", 8, 1) + struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0) + b"\x00" * 4
segment = b"Exif\x00\x00" + tiff
open(dst, "wb").write(data[:at] + b"\xff\xe1" + struct.pack(">H", len(segment) + 2) + segment + data[at:])
EOF
}
mkdir -p "$work/in"
src="$work/img/val/class_01/00000.jpg"
cp "$src" "$work/in/plain.jpg"
tag "$src" "$work/in/tag1.jpg" 1
tag "$src" "$work/in/tag6.jpg" 6
# Every training image tagged 6: the runs learn from upright (40 x 64) images.
for f in "$work"/img/*/class_*/*.jpg; do tag "$f" "$f.tagged" 6 && mv "$f.tagged" "$f"; done

folders=(--set data.image_folder.train="$work/img/train" --set data.image_folder.test="$work/img/val"
  --set data.image_folder.exif_orientation=apply)
# The probabilities predict gives FILE (its row without the file name).
probabilities() { grep "^$work/in/$2," "$work/$1.csv" | cut -d, -f2-; }

check_run() {  # NAME CONFIG ARGS...: trains, then predicts on the three copies with and without ignore
  local name=$1 cfg=$2
  shift 2
  "$ingot" run "$cfg" "${folders[@]}" "$@" --runs-dir "$work/runs_$name" > "$work/$name.txt" 2>&1 ||
    fail "$name: exit $?: $(tail -5 "$work/$name.txt")"
  local run
  run=$(dirname "$(find "$work/runs_$name" -name config.resolved.yaml | head -1)")
  grep -q "exif_orientation: apply" "$run/config.resolved.yaml" || fail "$name: the run does not record apply"
  "$ingot" predict "$run" "$work/in" --top-k 2 -o "$work/$name.csv" > "$work/$name.pred.txt" 2>&1 ||
    fail "$name: predict: $(cat "$work/$name.pred.txt")"
  "$ingot" predict "$run" "$work/in" --top-k 2 --set data.image_folder.exif_orientation=ignore \
    -o "$work/$name.ignore.csv" > "$work/$name.pred.txt" 2>&1 || fail "$name: predict, ignore: $(cat "$work/$name.pred.txt")"
  local plain tag1 tag6 ignored
  plain=$(probabilities "$name" plain.jpg)
  tag1=$(probabilities "$name" tag1.jpg)
  tag6=$(probabilities "$name" tag6.jpg)
  ignored=$(probabilities "$name.ignore" tag6.jpg)
  [ -n "$plain" ] || fail "$name: no row for plain.jpg: $(cat "$work/$name.csv")"
  [ "${tag1#*,}" = "${plain#*,}" ] || fail "$name: tagged 1 predicts '$tag1', untagged '$plain'"
  [ "${tag6#*,}" != "${plain#*,}" ] || fail "$name: tagged 6 predicts as the untagged file: '$tag6'"
  [ "${ignored#*,}" = "${plain#*,}" ] || fail "$name: with ignore, tagged 6 predicts '$ignored', untagged '$plain'"
  echo "$name: predict applies the run's exif_orientation: ok"
}

# Streamed through the test transforms (Resize 56 + CenterCrop 48), a ResNet.
check_run streamed tests/pipeline/configs/image_stream.yaml --set model.classes=2 --set train.epochs=1
# In memory, no transforms: resized to 12 x 12 grey, an MLP.
check_run in_memory tests/pipeline/configs/image_folder.yaml --set model.sizes=[144,16,2] --set train.epochs=1

set +e
"$ingot" run tests/pipeline/configs/image_folder.yaml "${folders[@]}" --set model.sizes=[144,16,2] \
  --set data.image_folder.exif_orientation=upright --runs-dir "$work/runs_bad" > "$work/bad.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "exif_orientation: upright: exit $code: $(tail -3 "$work/bad.txt")"
[ "$(grep -c "error" "$work/bad.txt")" -eq 1 ] && grep -q "exif_orientation.*ignore, apply.*upright" "$work/bad.txt" ||
  fail "exif_orientation: upright: $(cat "$work/bad.txt")"
echo "a bad exif_orientation: one line naming the key and the choices: ok"
