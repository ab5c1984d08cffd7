#!/bin/bash
# The run-folder lock: while a run trains, a second `ingot run` on its folder (--force or
# --resume) is refused with exit 2 naming the process, and the folder is left alone; once that
# process is killed (SIGKILL: the kernel drops the lock) the folder can be taken over, and the
# temp files of its interrupted writes are removed.
# Usage: lock_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'kill -9 $pid 2> /dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cfg=tests/pipeline/configs/slow_cnn.yaml
run=$work/slow_cnn
"$ingot" run $cfg --runs-dir "$work" > "$work/a.txt" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q '"event":"train_step"' "$run/metrics.jsonl" 2> /dev/null && break
  sleep 0.05
done
for mode in --force --resume; do
  set +e
  "$ingot" run $cfg $mode --runs-dir "$work" > "$work/b.txt" 2>&1
  code=$?
  set -e
  [ $code -eq 2 ] || fail "$mode while running: exit $code, expected 2: $(cat "$work/b.txt")"
  grep -q "slow_cnn is in use by process $pid " "$work/b.txt" || fail "$mode: $(cat "$work/b.txt")"
done
[ -z "$(ls -d "$work"/slow_cnn.old-* 2> /dev/null)" ] || fail "--force moved a folder in use"
kill -9 $pid
wait $pid 2> /dev/null || true
touch "$run/checkpoints/epoch-009.safetensors.tmp-12345"
set +e
"$ingot" run $cfg --resume --runs-dir "$work" > "$work/c.txt" 2>&1
set -e
grep -q "in use" "$work/c.txt" && fail "the lock outlived its process: $(cat "$work/c.txt")"
[ ! -e "$run/checkpoints/epoch-009.safetensors.tmp-12345" ] || fail "a stale temp file was kept"
echo "lock: ok"
