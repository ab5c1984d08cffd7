#!/bin/bash
# End-to-end checks of `ingot run` on small synthetic pipelines: the run folder's files, the
# never-overwrite rule, --force, init_from, and resume after SIGINT / SIGTERM matching an
# uninterrupted run (SGD with momentum; AdamW under a warm-up), and the memory check before a run.
# Usage: pipeline_flows.sh INGOT_BINARY FLOW   (FLOW: files | refuse | resume_changed | init_from |
#        torch_init_from | resume_int | resume_term | resume_hup | resume_kill | kill_loop | resume_adamw | resources)
set -euo pipefail
ingot=$1
flow=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The losses of train_step lines, one "step loss" pair per line.
losses() { grep '"event":"train_step"' "$1" | sed -E 's/.*"step":([0-9]+).*"loss":([^,}]+).*/\1 \2/'; }

# Wait (polling every $3 seconds, 1000 times at most) until metrics file $1 holds $2 train_step lines.
wait_for_steps() {
  local n
  for _ in $(seq 1 1000); do
    n=$(grep -c '"event":"train_step"' "$1" 2>/dev/null || true)
    [ "${n:-0}" -ge "$2" ] && return
    sleep "$3"
  done
}

case "$flow" in
files)
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "run failed"; }
  run="$work/tiny_mlp"
  for f in metrics.jsonl config.resolved.yaml summary.json model.safetensors checkpoints/latest \
           checkpoints/epoch-003.safetensors; do
    [ -s "$run/$f" ] || fail "missing $run/$f"
  done
  grep -q '"status":"completed"' "$run/summary.json" || fail "summary not completed: $(cat "$run/summary.json")"
  grep -q '"event":"eval"' "$run/metrics.jsonl" || fail "no eval line in metrics.jsonl"
  [ "$(losses "$run/metrics.jsonl" | wc -l)" -eq 96 ] || fail "expected 96 train_step lines"
  grep -q 'optimizer:' "$run/config.resolved.yaml" || fail "resolved config lacks the optimizer"
  grep -q 'evaluate: 128 samples' "$work/out.txt" || fail "no evaluation line in the output"
  # One evaluation per epoch; the evaluate stage reuses the last one instead of repeating it.
  [ "$(grep -c 'evaluate: 128 samples' "$work/out.txt")" -eq 3 ] || fail "evaluation printed $(grep -c 'evaluate: 128' "$work/out.txt") times"
  [ "$(grep -c '"event":"eval"' "$run/metrics.jsonl")" -eq 3 ] || fail "evaluation logged $(grep -c '"event":"eval"' "$run/metrics.jsonl") times"
  grep -q 'loss -0\.0000' "$work/out.txt" && fail "a loss printed as -0.0000"
  ;;
refuse)
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" > /dev/null 2>&1 || fail "first run failed"
  before=$(md5sum "$work/tiny_mlp/metrics.jsonl")
  set +e
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" > "$work/out.txt" 2> "$work/err.txt"
  code=$?
  set -e
  [ $code -eq 2 ] || fail "second run exit $code, expected 2"
  grep -q "already exists: pass --resume to continue it or --force to replace it" "$work/err.txt" || fail "$(cat "$work/err.txt")"
  [ "$(md5sum "$work/tiny_mlp/metrics.jsonl")" = "$before" ] || fail "the refused run touched the old folder"
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" --force > "$work/out.txt" 2>&1 || fail "--force failed"
  old=$(ls -d "$work"/tiny_mlp.old-* | head -1)
  [ -n "$old" ] && [ "$(cd "$old" && md5sum metrics.jsonl)" = "$(echo "$before" | sed "s|$work/tiny_mlp/||")" ] ||
    fail "--force did not keep the old run aside"
  # Same seed, same threads: the new run repeats the old one exactly.
  [ "$(losses "$old/metrics.jsonl")" = "$(losses "$work/tiny_mlp/metrics.jsonl")" ] || fail "a rerun differs"
  # Only the newest --keep-old copies stay (2 by default), each deletion said.
  for i in 1 2; do
    sleep 1  # a copy's name has the second it was moved aside
    "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" --force > "$work/out$i.txt" 2>&1 || fail "--force $i failed"
  done
  [ "$(ls -d "$work"/tiny_mlp.old-* | wc -l)" -eq 2 ] || fail "copies kept: $(ls "$work")"
  [ ! -e "$old" ] || fail "the oldest copy $old was kept"
  grep -q "^deleted $old (--keep-old 2 keeps the newest copies only)" "$work/out2.txt" || fail "$(cat "$work/out2.txt")"
  ;;
torch_init_from)
  # Weights trained and saved by torch.nn, loaded with init_from: the same test accuracy and loss.
  data=/usr/share/datasets/fashion-mnist
  /usr/bin/python3 -c "import torch" 2> /dev/null || { echo "INGOT_SKIP: Debian's python3-torch is not installed"; exit 0; }
  [ -f $data/t10k-images-idx3-ubyte.gz ] || { echo "INGOT_SKIP: dataset-fashion-mnist is not installed"; exit 0; }
  read -r correct loss < <(/usr/bin/python3 tests/pipeline/torch_weights.py "$work/torch.safetensors" $data)
  cat > "$work/eval.yaml" <<YAML
name: torch_init
data: {dataset: fashion_mnist, path: $data, eval_batch_size: 1000, workers: 0}
model: {preset: simple_cnn, input_shape: [1, 28, 28], width: 8, hidden: 32, dropout: 0.0, classes: 10}
init_from: $work/torch.safetensors
stages: [evaluate]
YAML
  "$ingot" run "$work/eval.yaml" --runs-dir "$work" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "ingot run failed"; }
  line=$(grep '^evaluate:' "$work/out.txt" | tail -1)
  got_acc=$(echo "$line" | sed -E 's/.*accuracy ([0-9.]+)%.*/\1/')
  got_loss=$(echo "$line" | sed -E 's/.*loss ([0-9.]+) .*/\1/')
  # Accuracy within 2 samples (near-ties may break differently), loss within 1e-3.
  awk -v c="$correct" -v a="$got_acc" -v l="$loss" -v g="$got_loss" \
    'BEGIN { d = c / 100 - a; e = l - g; exit !(d <= 0.02 && d >= -0.02 && e <= 1e-3 && e >= -1e-3) }' ||
    fail "torch: $correct correct, loss $loss; ingot: $line"
  echo "torch: $correct/10000 correct, loss $loss; ingot: $line"
  ;;
resume_changed)
  # A resume with another config is refused and changes nothing.
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" > /dev/null 2>&1 || fail "run failed"
  before=$(md5sum "$work/tiny_mlp/metrics.jsonl" "$work/tiny_mlp/config.resolved.yaml")
  sed 's/lr: 0.01/lr: 0.02/' tests/pipeline/configs/tiny_mlp.yaml > "$work/changed.yaml"
  set +e; "$ingot" run "$work/changed.yaml" --runs-dir "$work" --resume > /dev/null 2> "$work/err.txt"; code=$?; set -e
  [ $code -eq 2 ] && grep -q "the config changed since the run started.*lr: 0.02" "$work/err.txt" ||
    fail "changed config: exit $code, $(cat "$work/err.txt")"
  [ "$(md5sum "$work/tiny_mlp/metrics.jsonl" "$work/tiny_mlp/config.resolved.yaml")" = "$before" ] ||
    fail "the refused resume touched the run"
  # The same config resumes a finished run: nothing left to train, evaluation and save run again.
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" --resume > "$work/out.txt" 2>&1 ||
    { cat "$work/out.txt"; fail "resume of a finished run failed"; }
  [ "$(losses "$work/tiny_mlp/metrics.jsonl" | wc -l)" -eq 96 ] || fail "a finished run trained again"
  # Keys that change how a run goes, not what it computes, may change: a note names them, and a
  # thread count that differs warns that losses will not match bit for bit.
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" --resume --set threads=2 \
    --set data.workers=0 --set train.log_every=5 > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "runtime keys refused"; }
  grep -q "note: resuming with changed threads, data.workers, train.log_every" "$work/out.txt" || fail "$(cat "$work/out.txt")"
  grep -q "warning: resuming with different threads" "$work/out.txt" || fail "no threads warning: $(cat "$work/out.txt")"
  ;;
init_from)
  # Weights saved by one run, loaded by another that only evaluates: the same test results.
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" > "$work/a.txt" 2>&1 || fail "run failed"
  { sed 's/^name: tiny_mlp/name: tiny_mlp_eval/' tests/pipeline/configs/tiny_mlp.yaml
    echo "init_from: $work/tiny_mlp/model.safetensors"
    echo "stages: [evaluate]"; } > "$work/eval.yaml"
  "$ingot" run "$work/eval.yaml" --runs-dir "$work" > "$work/b.txt" 2>&1 || { cat "$work/b.txt"; fail "init_from run failed"; }
  want=$(grep -m1 -o 'accuracy [0-9.]*%  loss [0-9.]*' <(grep '^evaluate:' "$work/a.txt" | tail -1))
  got=$(grep -m1 -o 'accuracy [0-9.]*%  loss [0-9.]*' <(grep '^evaluate:' "$work/b.txt" | tail -1))
  [ -n "$want" ] && [ "$want" = "$got" ] || fail "init_from evaluation '$got' differs from the trained run's '$want'"
  ! grep -q '"event":"train_step"' "$work/tiny_mlp_eval/metrics.jsonl" || fail "an evaluate-only run trained"
  # Weights of another model are refused by name, exit 2, one line.
  { sed 's/^name: tiny_mlp/name: tiny_mlp_wrong/; s/sizes: \[64, 32, 4\]/sizes: [64, 16, 4]/' tests/pipeline/configs/tiny_mlp.yaml
    echo "init_from: $work/tiny_mlp/model.safetensors"; } > "$work/wrong.yaml"
  set +e; "$ingot" run "$work/wrong.yaml" --runs-dir "$work" > /dev/null 2> "$work/err.txt"; code=$?; set -e
  [ $code -eq 2 ] && grep -q "init_from.*size mismatch\|init_from.*shape" "$work/err.txt" ||
    fail "wrong weights: exit $code, $(cat "$work/err.txt")"
  ;;
resume_int|resume_term|resume_hup)
  sig=INT; want=130
  [ "$flow" = resume_term ] && sig=TERM && want=143
  [ "$flow" = resume_hup ] && sig=HUP && want=129
  cfg=tests/pipeline/configs/slow_cnn.yaml
  "$ingot" run $cfg --runs-dir "$work/a" > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "uninterrupted run failed"; }
  total=$(losses "$work/a/slow_cnn/metrics.jsonl" | wc -l)
  "$ingot" run $cfg --runs-dir "$work/b" > "$work/b1.txt" 2>&1 &
  pid=$!
  # Interrupt mid-epoch: once a third of the steps are logged.
  wait_for_steps "$work/b/slow_cnn/metrics.jsonl" $((total / 3)) 0.1
  kill -$sig $pid
  set +e; wait $pid; code=$?; set -e
  [ $code -eq $want ] || { cat "$work/b1.txt"; fail "interrupted run exit $code, expected $want"; }
  grep -q "checkpoint saved" "$work/b1.txt" || fail "no checkpoint message: $(cat "$work/b1.txt")"
  grep -q '"status":"interrupted"' "$work/b/slow_cnn/summary.json" || fail "summary does not say interrupted"
  stopped=$(losses "$work/b/slow_cnn/metrics.jsonl" | wc -l)
  [ "$stopped" -lt "$total" ] || fail "the run finished before the signal arrived"
  "$ingot" run $cfg --runs-dir "$work/b" --resume > "$work/b2.txt" 2>&1 || { cat "$work/b2.txt"; fail "resume failed"; }
  grep -q "resuming from" "$work/b2.txt" || fail "no resume line"
  diff <(losses "$work/a/slow_cnn/metrics.jsonl") <(losses "$work/b/slow_cnn/metrics.jsonl") > "$work/diff.txt" ||
    { head -20 "$work/diff.txt"; fail "resumed losses differ from the uninterrupted run"; }
  echo "interrupted at step $stopped of $total; resumed losses equal the uninterrupted run's"
  ;;
resume_kill)
  # SIGKILL (nothing to catch) mid-epoch with step checkpoints every 3 steps: resume continues
  # from the newest one and the losses equal the uninterrupted run's.
  cfg=tests/pipeline/configs/slow_cnn.yaml
  ck=(--set train.checkpoint.every_steps=3 --set train.checkpoint.keep_last=2)
  "$ingot" run $cfg "${ck[@]}" --runs-dir "$work/a" > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "uninterrupted run failed"; }
  total=$(losses "$work/a/slow_cnn/metrics.jsonl" | wc -l)
  "$ingot" run $cfg "${ck[@]}" --runs-dir "$work/b" > "$work/b1.txt" 2>&1 &
  pid=$!
  wait_for_steps "$work/b/slow_cnn/metrics.jsonl" $((total / 3)) 0.1
  kill -9 $pid
  set +e; wait $pid; set -e
  # keep_last: exactly 2 after a whole run; 3 at most when the kill lands between a save and the
  # removal of the oldest.
  [ "$(ls "$work/a/slow_cnn/checkpoints" | grep -c '^step-.*safetensors$')" -eq 2 ] || fail "keep_last 2 not kept"
  [ "$(ls "$work/b/slow_cnn/checkpoints" | grep -c '^step-.*safetensors$')" -le 3 ] || fail "keep_last 2 not kept"
  "$ingot" run $cfg "${ck[@]}" --runs-dir "$work/b" --resume > "$work/b2.txt" 2>&1 || { cat "$work/b2.txt"; fail "resume failed"; }
  grep -q "resuming from .*step-" "$work/b2.txt" || fail "not resumed from a step checkpoint: $(grep resum "$work/b2.txt")"
  diff <(losses "$work/a/slow_cnn/metrics.jsonl") <(losses "$work/b/slow_cnn/metrics.jsonl") > "$work/diff.txt" ||
    { head -20 "$work/diff.txt"; fail "resumed losses differ from the uninterrupted run"; }
  echo "killed after a third of $total steps; resumed from a step checkpoint, losses equal"
  ;;
kill_loop)
  # SIGKILL again and again at moments spread over start-up, training and saving (up to 12 kills, each
  # resumed; a kill before the first checkpoint starts the run over): the finished run's losses
  # and weights equal an uninterrupted run's bit for bit.
  cfg=tests/pipeline/configs/slow_cnn.yaml
  ck=(--set train.checkpoint.every_steps=3 --set train.checkpoint.keep_last=2 --set train.epochs=10)
  "$ingot" run $cfg "${ck[@]}" --runs-dir "$work/a" > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "uninterrupted run failed"; }
  kills=0
  for delay in 0.05 0.6 0.3 0.9 0.15 0.45 0.7 0.2 0.5 0.35 0.8 0.25; do
    mode=()
    [ -e "$work/b/slow_cnn/checkpoints/latest" ] && mode=(--resume)
    [ -e "$work/b/slow_cnn" ] && [ ${#mode[@]} -eq 0 ] && mode=(--force)
    "$ingot" run $cfg "${ck[@]}" --runs-dir "$work/b" "${mode[@]}" > "$work/b.txt" 2>&1 &
    pid=$!
    sleep $delay
    kill -9 $pid 2>/dev/null && kills=$((kills + 1))
    set +e; wait $pid; set -e
    [ -e "$work/b/slow_cnn/summary.json" ] && grep -q '"status":"completed"' "$work/b/slow_cnn/summary.json" && break
  done
  if ! grep -qs '"status":"completed"' "$work/b/slow_cnn/summary.json"; then
    "$ingot" run $cfg "${ck[@]}" --runs-dir "$work/b" --resume > "$work/b.txt" 2>&1 || { cat "$work/b.txt"; fail "final resume failed"; }
  fi
  diff <(losses "$work/a/slow_cnn/metrics.jsonl") <(losses "$work/b/slow_cnn/metrics.jsonl") > "$work/diff.txt" ||
    { head -20 "$work/diff.txt"; fail "after $kills kills the losses differ from the uninterrupted run"; }
  cmp "$work/a/slow_cnn/model.safetensors" "$work/b/slow_cnn/model.safetensors" ||
    fail "after $kills kills the weights differ from the uninterrupted run's"
  [ -z "$(find "$work/b/slow_cnn" -name '*.tmp*')" ] || fail "temporary files left: $(find "$work/b/slow_cnn" -name '*.tmp*')"
  echo "$kills SIGKILLs, each resumed: losses and weights equal the uninterrupted run's"
  ;;
resume_adamw)
  # AdamW under a warm-up, interrupted (SIGINT) mid-epoch inside the warm-up and resumed: the losses
  # and the saved weights equal the uninterrupted run's bit for bit (the resume restores each
  # parameter's step count, which AdamW's bias corrections read, and the schedule's step).
  cfg=tests/pipeline/configs/adamw_resume.yaml
  "$ingot" run $cfg --runs-dir "$work/a" > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "uninterrupted run failed"; }
  total=$(losses "$work/a/adamw_resume/metrics.jsonl" | wc -l)
  per_epoch=$(grep -c '"event":"train_step","epoch":1,' "$work/a/adamw_resume/metrics.jsonl")
  "$ingot" run $cfg --runs-dir "$work/b" > "$work/b1.txt" 2>&1 &
  pid=$!
  wait_for_steps "$work/b/adamw_resume/metrics.jsonl" $((total / 3)) 0.02
  kill -INT $pid
  set +e; wait $pid; code=$?; set -e
  [ $code -eq 130 ] || { cat "$work/b1.txt"; fail "interrupted run exit $code, expected 130"; }
  stopped=$(losses "$work/b/adamw_resume/metrics.jsonl" | wc -l)
  [ "$stopped" -lt "$total" ] && [ $((stopped % per_epoch)) -ne 0 ] ||
    fail "stopped at step $stopped of $total ($per_epoch per epoch): not mid-epoch"
  [ ! -e "$work/b/adamw_resume/model.safetensors" ] || fail "the interrupted run saved its weights"
  "$ingot" run $cfg --runs-dir "$work/b" --resume > "$work/b2.txt" 2>&1 || { cat "$work/b2.txt"; fail "resume failed"; }
  grep -q "resuming from" "$work/b2.txt" || fail "no resume line"
  diff <(losses "$work/a/adamw_resume/metrics.jsonl") <(losses "$work/b/adamw_resume/metrics.jsonl") > "$work/diff.txt" ||
    { head -20 "$work/diff.txt"; fail "resumed losses differ from the uninterrupted run"; }
  cmp "$work/a/adamw_resume/model.safetensors" "$work/b/adamw_resume/model.safetensors" ||
    fail "the resumed run's weights differ from the uninterrupted run's"
  echo "interrupted at step $stopped of $total ($per_epoch per epoch); resumed losses and weights equal"
  ;;
resources)
  # A run whose estimate exceeds this machine's memory is refused before the run folder exists,
  # naming what dominates; more threads than cores gives a warning; the estimate is printed.
  set +e
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" --set 'model.sizes=[64,100000,4]' \
    --set data.batch_size=100000 --set data.synthetic.size=100000 --set 'train.scheduler={type: constant}' \
    > "$work/out.txt" 2>&1
  code=$?
  set -e
  [ $code -eq 2 ] || fail "exit $code, expected 2: $(cat "$work/out.txt")"
  grep -q "^ingot: error: not enough memory on cpu: training needs about .* GiB.* is available (.*): activations dominate" \
    "$work/out.txt" || fail "$(cat "$work/out.txt")"
  [ ! -e "$work/tiny_mlp" ] || fail "the refused run created its folder"
  # train.memory_check: false lets a run past the check (this one is small: it trains).
  "$ingot" run tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work" --set threads=4096 --set train.memory_check=false \
    --set train.epochs=1 > "$work/ok.txt" 2>&1 || { cat "$work/ok.txt"; fail "small run"; }
  grep -q "^warning: threads: 4096 is more than the [0-9]* cores this process may use" "$work/ok.txt" || fail "$(head -5 "$work/ok.txt")"
  grep -q "^memory: about .* KiB: weights .* available on cpu" "$work/ok.txt" || fail "no memory line: $(head -8 "$work/ok.txt")"
  ;;
*) fail "unknown flow $flow" ;;
esac
echo "flow $flow: ok"
