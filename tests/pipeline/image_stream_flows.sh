#!/bin/bash
# Streamed image folders end to end, on an ImageNet-layout folder of JPEGs written by make_jpegs:
# - a torchvision-layout ResNet trains through RandomResizedCrop + flip + jitter with 0 and with 2
#   workers to byte-identical weights (every draw keyed by seed, epoch and sample); the progress
#   line and the epoch records say how much of the time went to waiting for data;
# - `ingot pack` of the train folder trains, as data.image_folder.train, the folder's weights byte
#   for byte; a used output folder and a failed write are refused, leaving no pack behind;
# - `ingot bench --data` times the loader alone per worker count;
# - a truncated JPEG stops the run with one line naming it, or (on_bad_image: skip) is named once,
#   counted in the epoch record and replaced;
# - `ingot run --devices 2` gives the weights `ingot launch --nproc-per-node 2 run` gives;
# - configs/imagenet_resnet50.yaml runs two steps of ResNet-50 at 224 on 224-pixel JPEGs.
# Usage: image_stream_flows.sh INGOT_BINARY MAKE_JPEGS_BINARY
set -euo pipefail
ingot=$1
make_jpegs=$2
work=$(mktemp -d)
trap "rm -rf \"$work\"" EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cfg=tests/pipeline/configs/image_stream.yaml

"$make_jpegs" "$work/img" --classes 3 --train 12 --val 4 --width 80 --height 64 --jitter 12
folders=(--set data.image_folder.train="$work/img/train" --set data.image_folder.test="$work/img/val")

for w in 0 2; do
  "$ingot" run "$cfg" "${folders[@]}" --set data.workers=$w --runs-dir "$work/runs$w" > "$work/out$w.txt" 2>&1 ||
    fail "workers $w: exit $?: $(tail -5 "$work/out$w.txt")"
done
cmp -s "$work/runs0/image_stream/model.safetensors" "$work/runs2/image_stream/model.safetensors" ||
  fail "0 and 2 workers trained different weights"
grep -q "^data: 36 train / 12 test samples of \[3, 48, 48\], batch 8, 0 workers, streamed" "$work/out0.txt" || fail "no streaming line: $(head -5 "$work/out0.txt")"
grep -qE "^epoch 2/2 done .* data [0-9]+%" "$work/out2.txt" || fail "no data share: $(grep '^epoch' "$work/out2.txt")"
grep -q '"event":"epoch".*"data_share":' "$work/runs2/image_stream/metrics.jsonl" || fail "no data_share in the epoch record"
echo "stream: 0 and 2 workers give the same weights, data share shown: ok"

# The train folder packed: the same samples in the same order, so the same weights.
"$ingot" pack --help > "$work/pack_help.txt" || fail "pack --help: exit $?"
grep -q -- "--shard-mb" "$work/pack_help.txt" && grep -q "pack.json" "$work/pack_help.txt" ||
  fail "pack --help: $(cat "$work/pack_help.txt")"
"$ingot" pack "$work/img/train" -o "$work/pack" > "$work/pack.txt" 2>&1 || fail "pack: exit $?: $(cat "$work/pack.txt")"
grep -qE "^packed 36 images of 3 classes into 1 shard \([0-9]+ bytes" "$work/pack.txt" || fail "pack summary: $(cat "$work/pack.txt")"
"$ingot" run "$cfg" --set data.image_folder.train="$work/pack" --set data.image_folder.test="$work/img/val" \
  --set data.workers=2 --runs-dir "$work/runs_pack" > "$work/out_pack.txt" 2>&1 ||
  fail "run on the pack: exit $?: $(tail -5 "$work/out_pack.txt")"
cmp -s "$work/runs0/image_stream/model.safetensors" "$work/runs_pack/image_stream/model.safetensors" ||
  fail "the pack trained other weights than its folder"
set +e
"$ingot" pack "$work/img/train" -o "$work/pack" > "$work/pack_again.txt" 2>&1
code=$?
set -e
[ $code -ne 0 ] || fail "pack into a folder that holds a pack was accepted"
grep -q "ingot: error: ingot pack: .*pack is not empty .*--force" "$work/pack_again.txt" ||
  fail "pack into a used folder: exit $code: $(cat "$work/pack_again.txt")"
# A write that fails (the file size limit stands in for a full disk): one line, exit 1, nothing left.
set +e
(trap '' XFSZ; ulimit -f 16; "$ingot" pack "$work/img/train" -o "$work/pack_full") > "$work/pack_full.txt" 2>&1
code=$?
set -e
[ $code -eq 1 ] || fail "a failed write: exit $code: $(cat "$work/pack_full.txt")"
[ "$(wc -l < "$work/pack_full.txt")" -eq 1 ] && grep -q "shard-00000.bin: write failed: .*run ingot pack again" \
  "$work/pack_full.txt" || fail "a failed write: $(cat "$work/pack_full.txt")"
[ -z "$(ls -A "$work/pack_full")" ] || fail "a failed pack left $(ls -A "$work/pack_full")"
echo "pack: the folder's weights from its pack, a used folder and a failed write refused: ok"

# predict prepares images as the run's test split: its test transforms (Resize 56 + CenterCrop 48),
# so its accuracy on the val folder is the evaluate stage's.
"$ingot" predict "$work/runs0/image_stream" "$work/img/val" -o "$work/pred.csv" > "$work/pred.txt" 2>&1 ||
  fail "predict: $(cat "$work/pred.txt")"
[ "$(wc -l < "$work/pred.csv")" -eq 13 ] || fail "predict wrote $(wc -l < "$work/pred.csv") lines, expected 1 + 12"
agree=$(tail -n +2 "$work/pred.csv" | awk -F, '{ n = split($1, p, "/"); if (p[n - 1] == $4) a++ } END { print a + 0 }')
acc=$(grep -E "^evaluate: 12 samples" "$work/out0.txt" | tail -1 | sed -E 's/.*accuracy ([0-9.]+)%.*/\1/')
awk -v a="$agree" -v e="$acc" 'BEGIN { exit !(a == int(e * 12 / 100 + 0.5)) }' ||
  fail "predict agrees with $agree of 12 folders, evaluate said $acc%"
echo "predict with the test transforms: $agree of 12, as evaluate: ok"

"$ingot" bench --data "$cfg" "${folders[@]}" --workers 0,2 --steps 3 --repeat 1 > "$work/bench.txt" 2>&1 ||
  fail "bench --data: $(tail -5 "$work/bench.txt")"
grep -qE "^ +2 +[0-9.]+ " "$work/bench.txt" || fail "bench --data table: $(cat "$work/bench.txt")"
echo "bench --data: ok"

# A truncated JPEG: one error line naming it, or (skip) named once and counted.
head -c 300 "$work/img/train/class_01/00003.jpg" > "$work/cut.jpg"
mv "$work/cut.jpg" "$work/img/train/class_01/00003.jpg"
set +e
"$ingot" run "$cfg" "${folders[@]}" --runs-dir "$work/runs_bad" > "$work/bad.txt" 2>&1
code=$?
set -e
[ $code -ne 0 ] || fail "a truncated JPEG was accepted"
grep -q "ingot: error: .*class_01/00003.jpg: corrupt or truncated JPEG" "$work/bad.txt" ||
  fail "truncated JPEG: exit $code: $(tail -3 "$work/bad.txt")"
"$ingot" run "$cfg" "${folders[@]}" --set data.image_folder.on_bad_image=skip --runs-dir "$work/runs_skip" \
  > "$work/skip.txt" 2>&1 || fail "skip: exit $?: $(tail -5 "$work/skip.txt")"
[ "$(grep -c "skipped a bad image.*00003.jpg" "$work/skip.txt")" -eq 1 ] || fail "skip warning: $(grep -i skip "$work/skip.txt")"
grep -q '"skipped_samples":2' "$work/runs_skip/image_stream/metrics.jsonl" ||
  fail "skipped samples not counted: $(grep '"epoch"' "$work/runs_skip/image_stream/metrics.jsonl")"
echo "bad JPEG: error line, or skipped and counted: ok"
rm "$work/img/train/class_01/00003.jpg"

# One command for every device: --devices 2 (CPU ranks) equals launching them by hand.
ddp=(--set parallel.mode=ddp --set train.epochs=1 --set data.workers=1)
"$ingot" run "$cfg" "${folders[@]}" --set train.epochs=1 --set data.workers=1 --devices 2 \
  --runs-dir "$work/runs_dev" > "$work/dev.txt" 2>&1 || fail "--devices 2: exit $?: $(tail -5 "$work/dev.txt")"
grep -q "devices 2: starting 2 CPU ranks" "$work/dev.txt" || fail "no launch line: $(head -3 "$work/dev.txt")"
"$ingot" launch --nproc-per-node 2 run "$cfg" "${folders[@]}" "${ddp[@]}" --runs-dir "$work/runs_launch" \
  > "$work/launch.txt" 2>&1 || fail "launch: exit $?: $(tail -5 "$work/launch.txt")"
cmp -s "$work/runs_dev/image_stream/model.safetensors" "$work/runs_launch/image_stream/model.safetensors" ||
  fail "--devices 2 and ingot launch trained different weights"
echo "--devices 2 equals ingot launch --nproc-per-node 2: ok"

# The shipped ImageNet config: two steps of ResNet-50 on 224-pixel JPEGs, with Mixup / CutMix on
# (the config's commented recipe line).
"$make_jpegs" "$work/inet" --classes 2 --train 4 --val 2 --width 250 --height 224 --jitter 20
"$ingot" run configs/imagenet_resnet50.yaml --set data.image_folder.train="$work/inet/train" \
  --set data.image_folder.test="$work/inet/val" --set train.steps=2 --set train.scheduler.warmup.steps=1 \
  --set data.batch_size=4 --set data.workers=2 --set data.mix.mixup_alpha=0.2 --set data.mix.cutmix_alpha=1.0 \
  --set model.classes=2 --runs-dir "$work/runs_inet" > "$work/inet.txt" 2>&1 ||
  fail "imagenet_resnet50: exit $?: $(tail -5 "$work/inet.txt")"
grep -q "evaluate: 4 samples" "$work/inet.txt" || fail "imagenet_resnet50: no evaluation: $(tail -3 "$work/inet.txt")"
grep -q "cutmix_alpha: 1" "$work/runs_inet/imagenet_resnet50/config.resolved.yaml" ||
  fail "imagenet_resnet50: data.mix is not in config.resolved.yaml"
echo "configs/imagenet_resnet50.yaml: 2 steps: ok"

# The shipped distillation config: ResNet-50 teacher, MobileNetV2 student, one short epoch each.
"$ingot" run configs/resnet_to_mobilenet_distill.yaml --set data.image_folder.train="$work/inet/train" \
  --set data.image_folder.test="$work/inet/val" --set train.steps=2 --set train.scheduler.warmup.steps=1 \
  --set data.batch_size=4 --set data.workers=2 --set model.classes=2 --set stages.2.student.classes=2 \
  --set stages.2.fine_tune.epochs=1 --set report.stages=false --runs-dir "$work/runs_distill" > "$work/distill.txt" 2>&1 ||
  fail "resnet_to_mobilenet_distill: exit $?: $(tail -5 "$work/distill.txt")"
grep -qi "distill" "$work/distill.txt" || fail "resnet_to_mobilenet_distill: no distill stage: $(tail -5 "$work/distill.txt")"
echo "configs/resnet_to_mobilenet_distill.yaml: teacher, student, report: ok"
