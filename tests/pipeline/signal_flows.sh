#!/bin/bash
# Signals outside the training loop: a SIGINT during start-up stops the run before training (exit
# 130, status interrupted, no weights saved), instead of being printed and ignored.
# Usage: signal_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$ingot" run tests/pipeline/configs/slow_start.yaml --runs-dir "$work" > "$work/out.txt" 2>&1 &
pid=$!
# The backend line comes before the pipeline is built (the large dataset takes about a second).
for _ in $(seq 1 500); do
  grep -q "^backend:" "$work/out.txt" 2>/dev/null && break
  sleep 0.01
done
kill -INT $pid
set +e; wait $pid; code=$?; set -e
[ $code -eq 130 ] || fail "exit $code, expected 130: $(cat "$work/out.txt")"
grep -q "interrupted before the train stage" "$work/out.txt" || fail "not stopped before training: $(cat "$work/out.txt")"
grep -q '"status":"interrupted"' "$work/slow_start/summary.json" || fail "summary: $(cat "$work/slow_start/summary.json")"
[ ! -e "$work/slow_start/model.safetensors" ] || fail "weights saved"
grep -q '"event":"train_step"' "$work/slow_start/metrics.jsonl" && fail "it trained"
echo "signal during start-up: ok"
