#!/usr/bin/env bash
# Distillation against the same student trained alone, on Fashion-MNIST over several seeds. Trains
# the teacher (configs/fashion_mnist_cnn.yaml) once, then per seed trains the student of
# configs/fashion_mnist_compress.yaml (a CNN of half the width) from that run folder twice: with
# alpha 0.9 (distilled, T = 4) and with alpha 0 (the student alone: the same initial weights, data
# order and fine-tuning, and the teacher never runs). Prints the test accuracy of each and the mean
# gain; issue 14's target is a gain of at least 0.3 points.
# Usage: bench/distill_seeds.sh [BUILD_DIR] [SEED...]      (defaults: build, seeds 0 1 2)
# Environment: RUNS (default runs/distill_seeds: the runs and their configs), EPOCHS (the student's
# epochs, default 4), TEMPERATURE (default 4), ALPHA (default 0.9), STEPS (a smoke run: teacher and
# students stop after this many optimizer steps, without the warmup).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(0 1 2)
ingot=$build/apps/ingot/ingot
runs=${RUNS:-$root/runs/distill_seeds}
epochs=${EPOCHS:-4}
temperature=${TEMPERATURE:-4}
alpha=${ALPHA:-0.9}
steps=${STEPS:-0}
teacher_args=()
fine_tune="{epochs: $epochs}"
if [ "$steps" -gt 0 ]; then
  teacher_args=(--set "train.steps=$steps" --set "train.scheduler={type: constant}")
  fine_tune="{steps: $steps, scheduler: {type: constant}}"
fi
[ -x "$ingot" ] || { echo "no $ingot: build first (scripts/run or cmake --build $build)" >&2; exit 2; }
[ -f "$build/extensions/libingot_distill.so" ] || { echo "no distill extension in $build/extensions" >&2; exit 2; }
mkdir -p "$runs/configs"
cd "$root"

echo "== teacher: configs/fashion_mnist_cnn.yaml"
"$ingot" run configs/fashion_mnist_cnn.yaml --runs-dir "$runs" --force --keep-old 1 --set name=distill_teacher \
  "${teacher_args[@]}" | grep -E "^(evaluate|save|done)"
teacher=$runs/distill_teacher

# student NAME SEED ALPHA: the student of fashion_mnist_compress.yaml distilled from the teacher's run.
student() {
  local config=$runs/configs/$1.yaml
  cat > "$config" <<YAML
# Written by bench/distill_seeds.sh: the student distilled from $teacher (alpha $3; 0 = alone).
name: $1
backend: auto
seed: $2
data: {dataset: fashion_mnist, batch_size: 128, eval_batch_size: 1000, workers: 2}
model: {preset: simple_cnn, input_shape: [1, 28, 28], width: 32, hidden: 128, dropout: 0.25, classes: 10}
train:
  epochs: $epochs
  optimizer: {type: adamw, lr: 0.002, weight_decay: 0.01}
  scheduler: {type: cosine, eta_min: 0.0, warmup: {steps: 100, start_factor: 0.1}}
  log_every: 20
stages:
  - type: distill
    teacher: $teacher
    student: {preset: simple_cnn, input_shape: [1, 28, 28], width: 16, hidden: 64, dropout: 0.1, classes: 10}
    temperature: $temperature
    alpha: $3
    fine_tune: $fine_tune
  - evaluate
YAML
  echo "== $1 (seed $2, alpha $3)"
  "$ingot" run "$config" --runs-dir "$runs" --force --keep-old 1 | grep -E "^(distill|evaluate|done)"
}

for seed in "${seeds[@]}"; do
  student "distilled_s$seed" "$seed" "$alpha"
  student "alone_s$seed" "$seed" 0
done

python3 - "$runs" "$alpha" "${seeds[@]}" <<'PY'
import json, sys
runs, alpha, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
acc = lambda name: 100.0 * json.load(open(f"{runs}/{name}/summary.json"))["test_accuracy"]
teacher = acc("distill_teacher")
print(f"\nteacher: {teacher:.2f}%\n")
print(f"| seed | distilled (alpha {alpha}) | alone (alpha 0) | gain |")
print("|---|---|---|---|")
gains = []
for s in seeds:
    d, a = acc(f"distilled_s{s}"), acc(f"alone_s{s}")
    gains.append(d - a)
    print(f"| {s} | {d:.2f}% | {a:.2f}% | {d - a:+.2f} |")
mean = sum(gains) / len(gains)
verdict = "met" if mean >= 0.3 else "NOT met"
print(f"\nmean gain {mean:+.2f} points over {len(seeds)} seeds (target >= +0.30): {verdict}")
PY
