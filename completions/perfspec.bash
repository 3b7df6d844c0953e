# SPDX-License-Identifier: MIT
# bash completion for perfspec: subcommands, options, and event names (from `perfspec list`).
_perfspec() {
  local cur prev words cword
  _init_completion -n =: 2>/dev/null || { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; }
  local sub=""
  local i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in resolve|stat|list|snapshot|decode) sub=${COMP_WORDS[i]}; break ;; esac
  done
  if [[ -z $sub ]]; then
    COMPREPLY=($(compgen -W "resolve stat list snapshot decode --help --version" -- "$cur"))
    return
  fi
  case $prev in
    --sysfs|--events-dir|-o|--output) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "text json csv" -- "$cur")); return ;;
    --source) COMPREPLY=($(compgen -W "builtin sysfs json tracepoint" -- "$cur")); return ;;
    -x|--field-separator) return ;;
    -e|--event) ;;
    *) if [[ $sub != resolve && $cur == -* ]]; then :; elif [[ $sub == stat && $prev != -e && $prev != --event ]]; then
         COMPREPLY=($(compgen -W "-e --event -p --pid -a --all-cpus -C --cpu -I --interval --format -x --field-separator --sysfs -o --output --no-inherit --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")); return
       fi ;;
  esac
  if [[ $cur == -* ]]; then
    case $sub in
      resolve) COMPREPLY=($(compgen -W "--sysfs --format --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      list) COMPREPLY=($(compgen -W "--pmu --topic --source --tracepoints --deprecated --pmus --format --sysfs --events-dir --no-tables --cpuid" -- "$cur")) ;;
      snapshot) COMPREPLY=($(compgen -W "--sysfs --tracepoints --cpuid" -- "$cur")) ;;
      decode) COMPREPLY=($(compgen -W "--type --config --config1 --config2 --config3 --attr --format --sysfs --events-dir --no-tables --cpuid" -- "$cur")) ;;
    esac
    return
  fi
  if [[ $sub == resolve || $sub == stat ]]; then
    # Complete the last event of a comma-separated list.
    local prefix=${cur%,*} last=${cur##*,}
    [[ $prefix == "$cur" ]] && prefix="" || prefix="$prefix,"
    local names
    names=$(perfspec list --format json 2>/dev/null | python3 -c 'import json,sys; print("\n".join(e["name"] for e in json.load(sys.stdin)["events"]))' 2>/dev/null)
    COMPREPLY=($(compgen -P "$prefix" -W "$names" -- "$last"))
  fi
}
complete -F _perfspec perfspec
