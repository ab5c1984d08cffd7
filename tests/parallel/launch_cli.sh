#!/bin/bash
# `ingot launch` end to end: the ranks' variables, a failed rank's line and exit code, `run` ranks
# running this ingot binary, options of the ranks' command passed through, --help, bad options
# (exit 2, one line) and Ctrl-C forwarded once (exit 130).
# Usage: launch_cli.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# run_launch NAME ARGS...: runs `ingot launch ARGS...`, stdout in $work/NAME.out, stderr in
# $work/NAME.err, the exit code in $code.
run_launch() {
  local name=$1
  shift
  set +e
  "$ingot" launch "$@" > "$work/$name.out" 2> "$work/$name.err"
  code=$?
  set -e
}

# Three ranks on one node: each prints its variables once; one free port for all.
run_launch vars --nproc-per-node 3 -- /bin/sh -c 'echo "rank $RANK of $WORLD_SIZE local $LOCAL_RANK/$LOCAL_WORLD_SIZE at $MASTER_ADDR:$MASTER_PORT"'
[ $code -eq 0 ] || fail "vars: exit $code: $(cat "$work/vars.err")"
sort "$work/vars.out" | sed -E 's/:[0-9]+$/:PORT/' > "$work/vars.sorted"
printf 'rank %s of 3 local %s/3 at 127.0.0.1:PORT\n' 0 0 1 1 2 2 | diff - "$work/vars.sorted" || fail "vars: $(cat "$work/vars.out")"
[ "$(sed -E 's/.*://' "$work/vars.out" | sort -u | wc -l)" -eq 1 ] || fail "ranks saw different ports: $(cat "$work/vars.out")"
[ ! -s "$work/vars.err" ] || fail "vars: launcher lines on success: $(cat "$work/vars.err")"

# The second node of two: global ranks 2 and 3.
run_launch node1 --nnodes 2 --node-rank 1 --nproc-per-node 2 --master-addr 10.0.0.5 --master-port 29400 \
  -- /bin/sh -c 'echo "$RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT"'
[ $code -eq 0 ] || fail "node1: exit $code: $(cat "$work/node1.err")"
printf '2 4 10.0.0.5 29400\n3 4 10.0.0.5 29400\n' | diff - <(sort "$work/node1.out") || fail "node1: $(cat "$work/node1.out")"

# A failing rank: the others are stopped, one launcher line names it, its exit code is the launch's.
run_launch failed --nproc-per-node 3 -- /bin/sh -c 'if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60'
[ $code -eq 3 ] || fail "failed: exit $code, expected 3: $(cat "$work/failed.err")"
[ "$(wc -l < "$work/failed.err")" -eq 1 ] || fail "failed: expected one line: $(cat "$work/failed.err")"
grep -Eq '^ingot launch: rank 1 \(pid [0-9]+\) exited with code 3; stopping the other ranks$' "$work/failed.err" ||
  fail "failed: $(cat "$work/failed.err")"

# A rank killed by a signal: 128 + the signal.
run_launch killed --nproc-per-node 2 -- /bin/sh -c 'if [ $RANK = 0 ]; then kill -KILL $$; fi; exec sleep 60'
[ $code -eq 137 ] || fail "killed: exit $code, expected 137: $(cat "$work/killed.err")"
grep -Eq '^ingot launch: rank 0 \(pid [0-9]+\) was killed by signal 9 \(SIGKILL\); stopping the other ranks$' \
  "$work/killed.err" || fail "killed: $(cat "$work/killed.err")"

# `run` ranks are this ingot binary: a missing config fails every rank with exit 2.
run_launch run --nproc-per-node 2 run "$work/missing.yaml"
[ $code -eq 2 ] || fail "run: exit $code, expected 2: $(cat "$work/run.err")"
grep -q "^ingot: error: .*missing.yaml" "$work/run.err" || fail "run: no rank error: $(cat "$work/run.err")"
grep -Eq '^ingot launch: rank [01] \(pid [0-9]+\) exited with code 2' "$work/run.err" || fail "run: $(cat "$work/run.err")"

# Options after the command belong to the ranks (not ingot's global --help / --log).
run_launch passthrough -- /bin/echo --help --log debug
[ $code -eq 0 ] || fail "passthrough: exit $code"
[ "$(cat "$work/passthrough.out")" = "--help --log debug" ] || fail "passthrough: $(cat "$work/passthrough.out")"

# --help documents the options.
run_launch help --help
[ $code -eq 0 ] || fail "help: exit $code"
for opt in --nproc-per-node --nnodes --node-rank --master-addr --master-port --stop-timeout --threads-per-rank \
  "run CONFIG.yaml" "-- COMMAND"; do
  grep -q -- "$opt" "$work/help.out" || fail "help does not mention $opt"
done

# Bad options: exit 2 and one line.
bad() {
  local expect=$1
  shift
  run_launch bad "$@"
  [ $code -eq 2 ] || fail "ingot launch $*: exit $code, expected 2"
  [ "$(wc -l < "$work/bad.err")" -eq 1 ] || fail "ingot launch $*: expected one line: $(cat "$work/bad.err")"
  grep -q -- "^ingot: error: launch: $expect" "$work/bad.err" || fail "ingot launch $*: $(cat "$work/bad.err")"
}
bad "unknown option '--bogus'" --nproc-per-node 2 --bogus 1 -- true
bad "--nproc-per-node expects an integer, got 'two'" --nproc-per-node two -- true
bad "nproc-per-node must be at least 1, got 0" --nproc-per-node 0 -- true
bad "2 nodes need an explicit master-addr and master-port" --nnodes 2 --nproc-per-node 1 -- true
bad "expected 'run CONFIG.yaml ...' or '-- COMMAND ...'" --nproc-per-node 1 config.yaml
bad "'--' needs a command" --nproc-per-node 1 --
bad "nothing to run" --nproc-per-node 1

# Ctrl-C: forwarded to each rank once; the launch exits 130.
"$ingot" launch --nproc-per-node 2 -- /bin/sh -c \
  "trap 'echo int >> $work/int.\$RANK; exit 130' INT; touch $work/ready.\$RANK; i=0; while [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done" \
  > "$work/int.out" 2> "$work/int.err" &
pid=$!
for _ in $(seq 1 1000); do
  [ -e "$work/ready.0" ] && [ -e "$work/ready.1" ] && break
  sleep 0.01
done
kill -INT $pid
set +e; wait $pid; code=$?; set -e
[ $code -eq 130 ] || fail "SIGINT: exit $code, expected 130: $(cat "$work/int.err")"
for r in 0 1; do
  [ "$(cat "$work/int.$r")" = "int" ] || fail "SIGINT: rank $r got: $(cat "$work/int.$r" 2>/dev/null)"
done
grep -q "^ingot launch: got SIGINT; forwarding it to the ranks" "$work/int.err" || fail "SIGINT: $(cat "$work/int.err")"
echo "ingot launch: ok"
