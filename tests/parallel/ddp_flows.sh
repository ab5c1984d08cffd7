#!/bin/bash
# Data and pipeline parallel end to end through `ingot launch`: with 1, 2 and 3 ranks the 20-step loss
# trajectory and the final weights equal one process's on the whole batch (the ranks' batches
# together), and so do a CNN's with sync_batchnorm and those of a model split over 2 ranks (GPipe,
# 4 micro-batches), and 2 ranks with train.compile equal 2 without; a
# resume with another world size is refused, with the same one it completes; a config without
# parallel: is refused when launched; a killed rank stops the job with a line naming it; Ctrl-C
# stops every rank at one step, rank 0 saves a checkpoint, and --resume finishes the run.
# Usage: ddp_flows.sh INGOT_BINARY COMMUNICATOR
set -euo pipefail
ingot=$1
comm=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cfg=tests/parallel/configs/ddp_mlp.yaml
set_comm="--set parallel.backend=$comm"

# Losses of the train_step records, and the weights, of two runs: equal within 1e-4 relative.
same_run() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, struct, sys
def losses(run):
    return [r["loss"] for r in map(json.loads, open(run + "/metrics.jsonl")) if r["event"] == "train_step"]
def weights(run):
    raw = open(run + "/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__": continue
        a, b = v["data_offsets"]
        out[k] = struct.unpack("<%df" % ((b - a) // 4), raw[8 + n + a:8 + n + b])
    return out
a, b = losses(sys.argv[1]), losses(sys.argv[2])
assert len(a) == len(b) == 20, (len(a), len(b))
for i, (x, y) in enumerate(zip(a, b)):
    assert abs(x - y) <= 1e-4 * abs(y), f"step {i + 1}: loss {x} vs {y}"
wa, wb = weights(sys.argv[1]), weights(sys.argv[2])
assert wa.keys() == wb.keys()
for k in wa:
    scale = max(abs(v) for v in wb[k])
    d = max(abs(x - y) for x, y in zip(wa[k], wb[k]))
    assert d <= 1e-4 * scale, f"{k}: max difference {d} (scale {scale})"
print(f"20 steps: losses {a[0]:.5f} -> {a[-1]:.5f} match, weights match")
PY
}

for world in 1 2 3; do
  whole=$((16 * world))
  "$ingot" run $cfg --runs-dir "$work" --set name=one$world --set data.batch_size=$whole $set_comm \
    > "$work/one$world.txt" 2>&1 || fail "one process: $(cat "$work/one$world.txt")"
  "$ingot" launch --nproc-per-node $world run $cfg --runs-dir "$work" --set name=ddp$world $set_comm \
    > "$work/ddp$world.txt" 2>&1 || fail "launch $world: $(cat "$work/ddp$world.txt")"
  grep -q "parallel: ddp as rank 0 of $world" "$work/ddp$world.txt" || fail "no group line: $(cat "$work/ddp$world.txt")"
  grep -q '"world_size":'$world "$work/ddp$world/summary.json" || fail "summary: $(cat "$work/ddp$world/summary.json")"
  # Rank 0 alone wrote: one summary line, one header.
  [ "$(grep -c '"event":"summary"' "$work/ddp$world/metrics.jsonl")" -eq 1 ] || fail "metrics written twice"
  [ "$(grep -c '^config:' "$work/ddp$world.txt")" -eq 1 ] || fail "every rank printed: $(cat "$work/ddp$world.txt")"
  same_run "$work/ddp$world" "$work/one$world" || fail "$world ranks differ from one process"
  echo "ddp with $world ranks: ok"
done

# train.compile under ddp: a replay calls the reducer's gradient hooks after the graph, so 2 ranks
# compiled give 2 ranks eager's losses and weights; most micro-batches and optimizer steps replay.
"$ingot" launch --nproc-per-node 2 run $cfg --runs-dir "$work" --set name=ddp2c --set train.compile=true $set_comm \
  > "$work/ddp2c.txt" 2>&1 || fail "launch 2 compiled: $(cat "$work/ddp2c.txt")"
same_run "$work/ddp2c" "$work/ddp2" || fail "2 ranks compiled differ from 2 ranks eager"
/usr/bin/python3 - "$work/ddp2c/metrics.jsonl" <<'PY' || fail "compiled ddp did not replay: $(grep compile "$work/ddp2c.txt")"
import json, sys
c = [r for r in map(json.loads, open(sys.argv[1])) if r["event"] == "compile"][-1]
assert c["replayed"] >= 15 and c["optimizer_replayed"] >= 15 and "fallback" not in c, c
PY
echo "ddp with 2 ranks and train.compile: ok"

# SyncBatchNorm: the CNN's BatchNorm statistics over both ranks' batches, so 2 x 16 equals one
# process at 32 (whose BatchNorm sees the whole batch) step for step.
bn="tests/parallel/configs/ddp_slow.yaml --set model.dropout=0 --set train.steps=20 --set parallel.sync_batchnorm=true"
"$ingot" run $bn --runs-dir "$work" --set name=bn_one --set data.batch_size=32 $set_comm > "$work/bn_one.txt" 2>&1 \
  || fail "sync_batchnorm, one process: $(cat "$work/bn_one.txt")"
"$ingot" launch --nproc-per-node 2 run $bn --runs-dir "$work" --set name=bn_two --set data.batch_size=16 $set_comm \
  > "$work/bn_two.txt" 2>&1 || fail "sync_batchnorm, 2 ranks: $(cat "$work/bn_two.txt")"
grep -q "sync_batchnorm: 2 BatchNorm layer(s)" "$work/bn_two.txt" || fail "no conversion line: $(cat "$work/bn_two.txt")"
same_run "$work/bn_two" "$work/bn_one" || fail "sync_batchnorm over 2 ranks differs from one process"
echo "sync_batchnorm with 2 ranks: ok"
# ... and with train.compile its all-reduce in forward keeps the micro-batches eager, saying why,
# while the optimizer step still replays.
"$ingot" launch --nproc-per-node 2 run $bn --runs-dir "$work" --set name=bn_two_c --set data.batch_size=16 \
  --set train.steps=6 --set train.compile=true $set_comm > "$work/bn_two_c.txt" 2>&1 ||
  fail "sync_batchnorm compiled, 2 ranks: $(cat "$work/bn_two_c.txt")"
grep -q "runs eager: a collective of a communicator" "$work/bn_two_c.txt" ||
  fail "sync_batchnorm compiled: no reason given: $(grep compile "$work/bn_two_c.txt")"
echo "sync_batchnorm with train.compile: eager, with the reason: ok"

# Pipeline parallel: two stages, 4 micro-batches, the same losses and weights as one process.
pcfg=tests/parallel/configs/pipeline_mlp.yaml
"$ingot" run $pcfg --runs-dir "$work" --set name=pp_one $set_comm > "$work/pp_one.txt" 2>&1 \
  || fail "pipeline, one process: $(cat "$work/pp_one.txt")"
"$ingot" launch --nproc-per-node 2 run $pcfg --runs-dir "$work" --set name=pp_two $set_comm > "$work/pp_two.txt" 2>&1 \
  || fail "pipeline, 2 ranks: $(cat "$work/pp_two.txt")"
grep -q "pipeline stage 1 of 2 holds layers \[0, 3)" "$work/pp_two.txt" || fail "no stage line: $(cat "$work/pp_two.txt")"
same_run "$work/pp_two" "$work/pp_one" || fail "pipeline differs from one process"
echo "pipeline parallel with 2 ranks: ok"

# Resume: another world size is refused with the reason; the same one continues.
set +e
"$ingot" launch --nproc-per-node 3 run $cfg --runs-dir "$work" --set name=ddp2 $set_comm --resume \
  > "$work/resume3.txt" 2>&1
code=$?
set -e
# Rank 0 refuses (exit 2) and is the rank the launcher names; the others stop naming its reason.
[ $code -eq 2 ] || fail "resume with 3 of a 2-rank run: exit $code: $(cat "$work/resume3.txt")"
grep -q "trained by 2 process(es) and this resume has 3" "$work/resume3.txt" || fail "$(cat "$work/resume3.txt")"
grep -q "ingot launch: rank 0 (pid [0-9]*) exited with code 2" "$work/resume3.txt" || fail "$(cat "$work/resume3.txt")"
[ "$(grep -c "stopped with the other ranks: rank 0: .*trained by 2 process(es)" "$work/resume3.txt")" -eq 2 ] \
  || fail "the other ranks do not name rank 0's reason: $(cat "$work/resume3.txt")"
echo "resume with another world size refused: ok"

# Launched without parallel: every rank would write the run: refused.
sed '/^parallel:/d' $cfg > "$work/no_parallel.yaml"
set +e
"$ingot" launch --nproc-per-node 2 run "$work/no_parallel.yaml" --runs-dir "$work" > "$work/nopar.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "no parallel: exit $code: $(cat "$work/nopar.txt")"  # (every rank refuses)
grep -q "has no parallel: section" "$work/nopar.txt" || fail "$(cat "$work/nopar.txt")"
echo "launched without parallel: refused: ok"

# Starts the slow config on 2 ranks in the background; waits for its first training step.
start_slow() {
  "$ingot" launch --nproc-per-node 2 --stop-timeout 20 run tests/parallel/configs/ddp_slow.yaml --runs-dir "$work" \
    --set name=$1 $set_comm > "$work/$1.txt" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    grep -q '"event":"train_step","epoch":1,"step":3' "$work/$1/metrics.jsonl" 2>/dev/null && return 0
    sleep 0.01
  done
  fail "$1 did not start: $(cat "$work/$1.txt")"
}

# A rank killed: the launcher names it and stops the other within the timeout.
start_slow killed
victim=$(pgrep -P $pid | sed -n 2p)
[ -n "$victim" ] || fail "no second rank under the launcher"
t0=$(date +%s)
kill -KILL "$victim"
set +e; wait $pid; code=$?; set -e
[ $code -eq 137 ] || fail "killed rank: launcher exit $code: $(cat "$work/killed.txt")"
grep -q "ingot launch: rank 1 (pid $victim) was killed by signal 9" "$work/killed.txt" || fail "$(cat "$work/killed.txt")"
[ $(( $(date +%s) - t0 )) -le 30 ] || fail "took $(( $(date +%s) - t0 )) s to stop"
pgrep -P $pid > /dev/null && fail "ranks left running"
echo "killed rank: ok"

# Ctrl-C: every rank stops at the same step; rank 0's checkpoint resumes.
start_slow stopped
kill -INT $pid
set +e; wait $pid; code=$?; set -e
[ $code -eq 130 ] || fail "Ctrl-C: exit $code: $(cat "$work/stopped.txt")"
grep -q "checkpoint saved" "$work/stopped.txt" || fail "no checkpoint: $(cat "$work/stopped.txt")"
grep -q '"status":"interrupted"' "$work/stopped/summary.json" || fail "summary: $(cat "$work/stopped/summary.json")"
"$ingot" launch --nproc-per-node 2 run tests/parallel/configs/ddp_slow.yaml --runs-dir "$work" --set name=stopped \
  $set_comm --resume > "$work/resumed.txt" 2>&1 || fail "resume: $(cat "$work/resumed.txt")"
grep -q '"status":"completed"' "$work/stopped/summary.json" || fail "resumed summary: $(cat "$work/stopped/summary.json")"
echo "Ctrl-C on the launcher, then --resume with the same world size: ok"
