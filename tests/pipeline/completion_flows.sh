#!/bin/bash
# Bash completion of `ingot`: the commands, run's options, config files, overrides, launch's
# options and the run after it; YAML files with bash's extglob off and on.
# Usage: completion_flows.sh
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
source scripts/completion/ingot.bash
complete -p ingot | grep -q "_ingot" || fail "not registered"
complete_line() {  # the words of a command line, the last one being completed
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _ingot
  echo "${COMPREPLY[*]}"
}
yml=$(mktemp -d)
trap 'rm -rf "$yml"' EXIT
touch "$yml/a.yml" "$yml/b.yaml" "$yml/c.txt"
# Bash's default (extglob off, as in a non-interactive shell or without bash-completion), then on.
for extglob in -u -s; do
  shopt $extglob extglob
  [[ "$(complete_line ingot d)" == "doctor" ]] || fail "command: '$(complete_line ingot d)'"
  [[ " $(complete_line ingot run --re) " == *" --resume "* ]] || fail "run option"
  [[ " $(complete_line ingot run configs/fashion_mnist_c) " == *" configs/fashion_mnist_cnn.yaml "* ]] ||
    fail "config file (shopt $extglob extglob): '$(complete_line ingot run configs/fashion_mnist_c)'"
  got=$(complete_line ingot run "$yml/")
  [[ "$(tr ' ' '\n' <<< "$got" | sort | paste -sd' ')" == "$yml/a.yml $yml/b.yaml" ]] ||
    fail "YAML files only (shopt $extglob extglob): '$got'"
  [[ " $(complete_line ingot run configs/x.yaml train.ep) " == *" train.epochs= "* ]] || fail "override key"
  [[ " $(complete_line ingot launch --npr) " == *" --nproc-per-node "* ]] || fail "launch option"
  [[ " $(complete_line ingot launch --nproc-per-node 2 run --pr) " == *" --print-config "* ]] || fail "launch ... run"
  [[ "$(complete_line ingot --log w)" == "warn" ]] || fail "--log level"
done
echo "bash completion: ok (extglob off and on)"
