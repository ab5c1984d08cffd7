# Bash completion of the `ingot` command: its commands, each command's options, config files
# for run / bench / launch ... run, and the config keys of KEY=VALUE overrides from the config's own
# top-level sections. Installed to share/bash-completion/completions/ingot; in a source tree:
#   source scripts/completion/ingot.bash
_ingot() {
  local cur prev words cword
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD - 1]}"
  local commands="plugins doctor run predict report export bench launch"
  # The command: the first word that is not a global option (or --log's value).
  local cmd="" i
  for ((i = 1; i < COMP_CWORD; ++i)); do
    case "${COMP_WORDS[i]}" in
      --log) ((++i)) ;;
      -*) ;;
      *) cmd="${COMP_WORDS[i]}"; break ;;
    esac
  done
  if [[ -z "$cmd" ]]; then
    if [[ "$prev" == "--log" ]]; then
      COMPREPLY=($(compgen -W "debug info warn error off" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands --help --version --log" -- "$cur"))
    fi
    return 0
  fi
  case "$cmd" in
    plugins) COMPREPLY=($(compgen -W "--verbose" -- "$cur")) ;;
    doctor) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
    predict)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--top-k --output --batch --compile --set --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      ;;
    export)
      case "$prev" in
        --format) COMPREPLY=($(compgen -W "onnx" -- "$cur")) ;;
        *)
          if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "--format --output --set --help" -- "$cur"))
          else
            COMPREPLY=($(compgen -f -- "$cur"))
          fi
          ;;
      esac
      ;;
    report)
      if [[ "$prev" == "-o" || "$prev" == "--output" ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--output --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -d -- "$cur"))
      fi
      ;;
    launch)
      if [[ " ${COMP_WORDS[*]:0:COMP_CWORD} " == *" run "* ]]; then
        _ingot_run_args
      else
        COMPREPLY=($(compgen -W "--nproc-per-node --nnodes --node-rank --master-addr --master-port --stop-timeout
          --threads-per-rank --help run --" -- "$cur"))
      fi
      ;;
    run | bench) _ingot_run_args ;;
  esac
  return 0
}

# Options and arguments of `run` (and `bench`): options, YAML files, and section.key= overrides.
_ingot_run_args() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD - 1]}"
  case "$prev" in
    --runs-dir | --profile) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "--resume --force --keep-old --runs-dir --profile --memory-report --set --print-config
      --help --json --steps" -- "$cur"))
  elif [[ "$cur" == *.* || "$cur" == *=* ]] && [[ "$cur" != */* && "$cur" != *.yaml && "$cur" != *.yml ]]; then
    COMPREPLY=($(compgen -W "name= seed= threads= backend= init_from= data.batch_size= data.dataset= data.workers=
      train.epochs= train.steps= train.optimizer.lr= train.accumulate= model.layers. parallel.mode=" -- "$cur"))
    compopt -o nospace 2>/dev/null
  else
    # Plain patterns, one per extension: an extglob pattern (`*.y?(a)ml`) matches nothing unless the
    # user's shell has `shopt -s extglob`.
    COMPREPLY=($(compgen -f -X '!*.yaml' -- "$cur") $(compgen -f -X '!*.yml' -- "$cur") $(compgen -d -- "$cur"))
  fi
}

complete -F _ingot ingot
