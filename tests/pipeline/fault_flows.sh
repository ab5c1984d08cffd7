#!/bin/bash
# Injected faults end to end, each as a user meets it: every one ends in one error line with its
# exit code (or is survived, saying so), and never hangs (every command runs under a timeout).
# Usage: fault_flows.sh INGOT_BINARY FLOW
#   checkpoint_fields  a changed position or optimizer field in the latest checkpoint is damage:
#                      resume falls back to the previous checkpoint (5 fields)
#   checkpoint_unfit   a checkpoint that verifies but does not fit (its batch index, its shapes)
#                      is skipped like a damaged one, not an exit 1
#   checkpoint_format1 a checkpoint of format 1 (older Ingot) resumes with a note
#   fifo               a FIFO in place of latest, a checkpoint, model.safetensors, init_from, an
#                      npy file, the config, a predict input: refused (or skipped) at once
#   unbounded          `ingot run /dev/zero`, an npy path of /dev/zero, a 17 MiB config: refused
#   model_checksum     a flipped byte in model.safetensors: predict, export and init_from refuse it;
#                      the same weights without the checksum (a torch file) load
#   nonfinite_weights  a NaN and an Inf weight in model.safetensors: refused by predict, export and
#                      init_from
#   small              a damaged config.resolved.yaml (predict: FILE:LINE, exit 2); random bytes in
#                      checkpoints/latest (escaped); NaN in an npy dataset; lr: .inf; absurd sizes
#   disk_full          a checkpoint write that fails (file size limit): exit 1, summary.json failed
#   blocked_startup    SIGTERM while start-up waits for a rank that never comes: ended within the
#                      grace period, exit 143
set -euo pipefail
ingot=$1
flow=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$(dirname "$0")
cfg=tests/pipeline/configs/tiny_mlp.yaml
st() { python3 "$here/st_edit.py" "$@"; }

# expect CODE REGEX CMD...: runs CMD (60 s at most), checks its exit code and that its output matches.
expect() {
  local code=$1 regex=$2 got
  shift 2
  set +e
  timeout -s KILL 60 "$@" > "$work/out.txt" 2>&1
  got=$?
  set -e
  [ $got -ne 137 ] || fail "hung (killed after 60 s): $*"
  [ $got -eq "$code" ] || fail "exit $got, expected $code: $*: $(tail -3 "$work/out.txt")"
  grep -Eq -- "$regex" "$work/out.txt" || fail "no match for '$regex': $*: $(tail -3 "$work/out.txt")"
}

train() {  # train RUNS_DIR [ARGS...]: tiny_mlp, three epoch checkpoints
  local dir=$1
  shift
  timeout -s KILL 120 "$ingot" run $cfg --runs-dir "$dir" "$@" > "$work/train.txt" 2>&1 ||
    fail "training: $(tail -3 "$work/train.txt")"
}

npy() {  # npy FILE N: float32 samples [N, 1, 8, 8] (value i / 100); labels FILE.y.npy [N] int64
  python3 - "$1" "$2" <<'PY'
import struct, sys
def save(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    header += " " * ((-(10 + len(header) + 1)) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload)
path, n = sys.argv[1], int(sys.argv[2])
save(path, "<f4", (n, 1, 8, 8), struct.pack("<%df" % (n * 64), *[(i % 100) / 100 for i in range(n * 64)]))
save(path[:-4] + ".y.npy", "<i8", (n,), struct.pack("<%dq" % n, *[i % 4 for i in range(n)]))
PY
}

case "$flow" in
checkpoint_fields)
  train "$work/base"
  ck=checkpoints/epoch-003.safetensors
  for field in step epoch rng_offset optimizer/state.0.step optimizer/group.0.lr; do
    rm -rf "$work/r"
    cp -a "$work/base" "$work/r"
    value=$(python3 -c "import json,struct,sys; b=open(sys.argv[1],'rb').read(); n=struct.unpack('<Q',b[:8])[0]; print(json.loads(b[8:8+n])['__metadata__'][sys.argv[2]])" "$work/r/tiny_mlp/$ck" "$field")
    st "$work/r/tiny_mlp/$ck" meta "$field" "1$value" --keep-crc  # (as an editor or a bit flip would)
    expect 0 "resuming from .*epoch-002.safetensors \(epoch 3, batch 0, step 64\)" \
      "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/r"
    grep -q "epoch-003.safetensors: the file is damaged: its content has CRC-32" "$work/out.txt" ||
      fail "$field: the damage is not named: $(grep warning "$work/out.txt")"
    grep -q '"status":"completed"' "$work/r/tiny_mlp/summary.json" || fail "$field: not completed"
  done
  echo "checkpoint fields: ok"
  ;;
checkpoint_unfit)
  train "$work/base"
  # A batch index past the epoch's 32 batches, with a checksum that verifies.
  cp -a "$work/base" "$work/r"
  st "$work/r/tiny_mlp/checkpoints/epoch-003.safetensors" meta batch 40
  st "$work/r/tiny_mlp/checkpoints/epoch-003.safetensors" check || fail "the edit left a stale checksum"
  expect 0 "epoch-003.safetensors: the checkpoint does not fit this run: its position \(epoch 3, batch 40, step 96\) is impossible here.*resuming from .*epoch-002.safetensors" \
    "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/r"
  # Shapes: a checkpoint of another model (hidden size 16) in place of the newest.
  train "$work/other" --set model.sizes=[64,16,4] --set train.epochs=1
  rm -rf "$work/r"
  cp -a "$work/base" "$work/r"
  cp "$work/other/tiny_mlp/checkpoints/epoch-001.safetensors" "$work/r/tiny_mlp/checkpoints/epoch-003.safetensors"
  expect 0 "epoch-003.safetensors: the checkpoint does not fit this run: .*shape.*resuming from .*epoch-002.safetensors" \
    "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/r"
  grep -q '"status":"completed"' "$work/r/tiny_mlp/summary.json" || fail "not completed"
  # None fits: exit 2 naming each.
  for f in "$work"/r/tiny_mlp/checkpoints/*.safetensors; do cp "$work/other/tiny_mlp/checkpoints/epoch-001.safetensors" "$f"; done
  expect 2 "no checkpoint loads \(.*does not fit.*\): start over with --force" \
    "$ingot" run $cfg --set train.epochs=5 --resume --runs-dir "$work/r"
  echo "checkpoint unfit: ok"
  ;;
checkpoint_format1)
  train "$work/r"
  st "$work/r/tiny_mlp/checkpoints/epoch-003.safetensors" format1
  expect 0 "note: .*epoch-003.safetensors: it was written by an Ingot from before checkpoints covered their metadata" \
    "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/r"
  grep -q "resuming from .*epoch-003.safetensors (epoch 4, batch 0, step 96)" "$work/out.txt" || fail "$(cat "$work/out.txt")"
  echo "checkpoint format 1: ok"
  ;;
fifo)
  train "$work/base"
  run=$work/r/tiny_mlp
  cp -a "$work/base" "$work/r"
  rm "$run/checkpoints/latest" && mkfifo "$run/checkpoints/latest"
  expect 0 "latest: is a FIFO \(named pipe\), not a regular file.*resuming from .*epoch-003.safetensors" \
    "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/r"
  rm -rf "$work/r" && cp -a "$work/base" "$work/r"
  rm "$run/checkpoints/epoch-003.safetensors" && mkfifo "$run/checkpoints/epoch-003.safetensors"
  expect 0 "epoch-003.safetensors: is a FIFO.*resuming from .*epoch-002.safetensors" \
    "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/r"
  rm -rf "$work/r" && cp -a "$work/base" "$work/r"
  rm "$run/model.safetensors" && mkfifo "$run/model.safetensors"
  npy "$work/x.npy" 4
  expect 2 "model.safetensors: is a FIFO" "$ingot" predict "$run" "$work/x.npy"
  expect 2 "init_from: .*model.safetensors: is a FIFO" \
    "$ingot" run $cfg --set init_from="$run/model.safetensors" --set name=init --runs-dir "$work/r"
  mkfifo "$work/in.npy" "$work/config.yaml"
  expect 2 "in.npy: is a FIFO" "$ingot" predict "$work/base/tiny_mlp" "$work/in.npy"
  expect 2 "config.yaml: is a FIFO" "$ingot" run "$work/config.yaml" --runs-dir "$work/r"
  expect 2 "data.npy: .*in.npy: is a FIFO" "$ingot" run $cfg --set data.dataset=npy --set data.npy.train_x="$work/in.npy" \
    --set data.npy.train_y="$work/x.y.npy" --set data.npy.test_x="$work/x.npy" --set data.npy.test_y="$work/x.y.npy" \
    --set name=npy --runs-dir "$work/r"
  echo "fifo: ok"
  ;;
unbounded)
  expect 2 "/dev/zero: is a character device, not a regular file" "$ingot" run /dev/zero
  npy "$work/x.npy" 4
  expect 2 "data.npy: /dev/zero: is a character device" "$ingot" run $cfg --set data.dataset=npy \
    --set data.npy.train_x=/dev/zero --set data.npy.train_y="$work/x.y.npy" --set data.npy.test_x="$work/x.npy" \
    --set data.npy.test_y="$work/x.y.npy" --runs-dir "$work/r"
  { cat $cfg; head -c $((17 << 20)) /dev/zero | tr '\0' '#'; } > "$work/big.yaml"
  expect 2 "big.yaml: holds 17.0 MiB, more than a config file may \(16.0 MiB\)" "$ingot" run "$work/big.yaml"
  echo "unbounded: ok"
  ;;
model_checksum)
  train "$work/base"
  run=$work/base/tiny_mlp
  npy "$work/x.npy" 4
  expect 0 "x.npy\[3\]" "$ingot" predict "$run" "$work/x.npy"
  cp "$run/model.safetensors" "$work/good.safetensors"
  st "$run/model.safetensors" flip --keep-crc
  expect 2 "model.safetensors: the file is damaged: its content has CRC-32" "$ingot" predict "$run" "$work/x.npy"
  expect 2 "model.safetensors: the file is damaged" "$ingot" export "$run" --format onnx -o "$work/m.onnx"
  expect 2 "init_from: .*model.safetensors: the file is damaged" \
    "$ingot" run $cfg --set init_from="$run/model.safetensors" --set name=init --runs-dir "$work/r"
  # The same weights as a torch user's file (no checksum): loaded, for predict and init_from.
  cp "$work/good.safetensors" "$run/model.safetensors"
  st "$run/model.safetensors" drop ingot_crc32
  expect 0 "x.npy\[3\]" "$ingot" predict "$run" "$work/x.npy"
  expect 0 "init_from .*model.safetensors: 4 tensor\(s\) loaded" \
    "$ingot" run $cfg --set init_from="$run/model.safetensors" --set name=init --runs-dir "$work/r"
  echo "model checksum: ok"
  ;;
nonfinite_weights)
  train "$work/base"
  run=$work/base/tiny_mlp
  npy "$work/x.npy" 4
  cp "$run/model.safetensors" "$work/good.safetensors"
  for value in nan inf; do
    cp "$work/good.safetensors" "$run/model.safetensors"
    st "$run/model.safetensors" value 1.weight 5 "$value"  # (checksum recomputed: only the value is wrong)
    expect 2 "model.safetensors: '1.weight' holds $value at element 5 of \[32, 64\]: the weights are not finite" \
      "$ingot" predict "$run" "$work/x.npy"
    expect 2 "'1.weight' holds $value" "$ingot" export "$run" --format onnx -o "$work/m.onnx"
    expect 2 "init_from .*model.safetensors: '1.weight' holds $value" \
      "$ingot" run $cfg --set init_from="$run/model.safetensors" --set name=init --runs-dir "$work/r"
  done
  echo "non-finite weights: ok"
  ;;
small)
  train "$work/base"
  run=$work/base/tiny_mlp
  npy "$work/x.npy" 4
  cp "$run/config.resolved.yaml" "$work/resolved.yaml"
  printf 'model: {preset: mlp\n  sizes: [\n' >> "$run/config.resolved.yaml"
  expect 2 "^ingot: error: .*config.resolved.yaml:[0-9]+:[0-9]+: YAML syntax error: .*the run's config is damaged; restore" \
    "$ingot" predict "$run" "$work/x.npy"
  cp "$work/resolved.yaml" "$run/config.resolved.yaml"
  # Random bytes in checkpoints/latest: named escaped, never echoed raw.
  printf '\x1b[2J\x07\xff\x01epoch' > "$run/checkpoints/latest"
  expect 0 "latest: expected one line naming a checkpoint \(e.g. epoch-003\), got '\\\\x1b\[2J\\\\x07\\\\xff\\\\x01epoch'" \
    "$ingot" run $cfg --set train.epochs=4 --resume --runs-dir "$work/base"
  if LC_ALL=C grep -q $'\x1b' "$work/out.txt"; then fail "a raw escape byte reached the output"; fi
  # NaN in an npy dataset, as the CSV dataset refuses it.
  npy "$work/t.npy" 32
  python3 -c "
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<f', b, 10 + struct.unpack('<H', b[8:10])[0] + 4 * (64 * 7 + 3), float('nan'))
open(sys.argv[1], 'wb').write(b)" "$work/t.npy"
  expect 2 "data.npy: .*t.npy: sample 7 holds nan \(its value 3 of 64\)" "$ingot" run $cfg --set data.dataset=npy \
    --set data.npy.train_x="$work/t.npy" --set data.npy.train_y="$work/t.y.npy" --set data.npy.test_x="$work/x.npy" \
    --set data.npy.test_y="$work/x.y.npy" --set name=npy --runs-dir "$work/r"
  expect 2 "'train.optimizer.lr' must be a finite number, got '.inf'" \
    "$ingot" run $cfg --set train.optimizer.lr=.inf --set name=inf --runs-dir "$work/r"
  # Absurd sizes: a byte size past 2^63 (once an endless loop in the allocator), and one past 2^48;
  # the model's config asks for them (exit 2, as for smaller absurd sizes).
  expect 2 "a tensor of shape \[40000000000000000, 64\] would need more than 2\^63 bytes" \
    "$ingot" run $cfg --set "model.sizes=[64,40000000000000000,4]" --set name=huge --runs-dir "$work/r"
  expect 2 "out of memory: .*larger than any machine's memory" \
    "$ingot" run $cfg --set "model.sizes=[64,3000000000000000,4]" --set name=huge --runs-dir "$work/r"
  echo "small: ok"
  ;;
disk_full)
  # A file size limit makes the first checkpoint's write fail (EFBIG, as ENOSPC would: the same
  # path); summary.json (small) still records the failure.
  set +e
  (trap '' XFSZ; ulimit -f 20; exec timeout -s KILL 60 "$ingot" run $cfg --set train.log_every=8 --runs-dir "$work/r") \
    > "$work/out.txt" 2>&1
  code=$?
  set -e
  [ $code -eq 1 ] || fail "exit $code, expected 1: $(tail -3 "$work/out.txt")"
  grep -q "^ingot: error: .*epoch-001.safetensors: write failed: File too large" "$work/out.txt" || fail "$(tail -3 "$work/out.txt")"
  grep -q '"status":"failed"' "$work/r/tiny_mlp/summary.json" || fail "summary: $(cat "$work/r/tiny_mlp/summary.json" 2>&1)"
  grep -q '"error":".*write failed' "$work/r/tiny_mlp/summary.json" || fail "summary: $(cat "$work/r/tiny_mlp/summary.json")"
  [ -z "$(ls "$work/r/tiny_mlp/checkpoints" | grep -v '^latest$')" ] || fail "a partial checkpoint is left: $(ls -a "$work/r/tiny_mlp/checkpoints")"
  echo "disk full: ok"
  ;;
blocked_startup)
  # Rank 0 of two waits for rank 1, which never comes: start-up blocks where nothing polls.
  port=$((20000 + RANDOM % 20000))
  RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$ingot" run $cfg --set parallel.mode=ddp --runs-dir "$work/r" > "$work/out.txt" 2>&1 &
  pid=$!
  for _ in $(seq 1 500); do
    grep -q "^backend:" "$work/out.txt" 2>/dev/null && break
    sleep 0.01
  done
  sleep 0.5
  start=$(date +%s)
  kill -TERM $pid
  for _ in $(seq 1 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  kill -0 $pid 2>/dev/null && { kill -KILL $pid; fail "still running 30 s after SIGTERM: $(cat "$work/out.txt")"; }
  set +e; wait $pid; code=$?; set -e
  took=$(($(date +%s) - start))
  [ $code -eq 143 ] || fail "exit $code, expected 143: $(cat "$work/out.txt")"
  [ $took -le 20 ] || fail "ended $took s after SIGTERM"
  grep -q "not stopped 10 s after the signal" "$work/out.txt" || fail "$(cat "$work/out.txt")"
  echo "blocked start-up: ended $took s after SIGTERM: ok"
  ;;
*)
  fail "unknown flow $flow"
  ;;
esac
