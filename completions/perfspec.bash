# SPDX-License-Identifier: MIT
# bash completion for perfspec: subcommands, options, and event names (from `perfspec list`).
_perfspec_stat_options="-e --event --filter -M --metrics --metric-no-group --metric-no-merge --metric-no-threshold --topdown --td-level -T --transaction --cputype -p --pid -t --tid -a --all-cpus -C --cpu -I --interval --interval-count --timeout -r --repeat
  -A --no-aggr --no-merge --per-core --per-die --per-socket --per-node --per-thread --per-cache --per-cluster -G --cgroup --for-each-cgroup
  --all-user --all-kernel -D --delay --control -n --null -d --detailed -j --json-output --metric-only --color -v --verbose --format -x
  --field-separator --sysfs -o --output --no-inherit --events-dir --no-tables --cpuid --no-libpfm4 -S --sync --pre --post --append --quiet --table --interval-clear
  --summary --no-csv-summary -B --big-num --no-big-num"
_perfspec() {
  local cur prev words cword
  _init_completion -n =: 2>/dev/null || { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; }
  local sub=""
  local i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in resolve|stat|list|snapshot|decode|script|report|record|trace|top|exporter) sub=${COMP_WORDS[i]}; break ;; esac
  done
  if [[ -z $sub ]]; then
    COMPREPLY=($(compgen -W "resolve stat list snapshot decode script report record trace top exporter --help --version" -- "$cur"))
    return
  fi
  if [[ $sub == stat ]]; then
    # After `--` (or the first word that is not an option), the command to count: its name, then
    # whatever completes for it (files here).
    local j dashdash=0
    for ((j = i + 1; j < COMP_CWORD; j++)); do
      [[ ${COMP_WORDS[j]} == -- ]] && { dashdash=$j; break; }
    done
    if ((dashdash)); then
      if ((COMP_CWORD == dashdash + 1)); then COMPREPLY=($(compgen -c -- "$cur" | sort -u)); else COMPREPLY=($(compgen -f -- "$cur")); fi
      return
    fi
    case $prev in
      -p|--pid|-t|--tid) COMPREPLY=($(compgen -W "$(ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur")); return ;;
      -C|--cpu|-r|--repeat|-D|--delay|-I|--interval|--interval-count) return ;;
      -G|--cgroup|--for-each-cgroup)
        local cg
        cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts 2>/dev/null)
        [[ -n $cg ]] && COMPREPLY=($(cd "$cg" 2>/dev/null && compgen -d -- "$cur"))
        return ;;
      --control) COMPREPLY=($(compgen -W "fifo: fd:" -- "$cur")); return ;;
      --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
    esac
  fi
  if [[ $sub == top && ( $prev == -s || $prev == --sort ) ]]; then
    COMPREPLY=($(compgen -W "comm pid dso sym" -- "${cur##*,}")); return
  fi
  if [[ $sub == trace ]]; then
    case $prev in
      -e|--event|--expr)  # system calls by the names of their tracepoints
        local ev
        for ev in /sys/kernel/tracing/events/syscalls /sys/kernel/debug/tracing/events/syscalls; do
          [[ -d $ev ]] && { COMPREPLY=($(compgen -W "$(ls "$ev" | sed -n 's/^sys_enter_//p')" -- "${cur##*,}")); return; }
        done
        return ;;
      -F|--pf) COMPREPLY=($(compgen -W "maj min all" -- "$cur")); return ;;
      --call-graph) COMPREPLY=($(compgen -W "fp dwarf" -- "$cur")); return ;;
      -p|--pid|-t|--tid) COMPREPLY=($(compgen -W "$(ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur")); return ;;
      -o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
  fi
  case $prev in
    --sysfs|--events-dir|-o|--output|--symfs) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -i|--input|--config|--kallsyms|--web.config.file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -F|--fields)  # script -F (perf's fields perfspec prints; a list may start with hw: sw: trace: raw: break: synth:)
      COMPREPLY=($(compgen -W "comm tid pid time cpu misc event trace ip sym symoff dso addr period iregs uregs data_src weight ins_lat retire_lat phys_addr data_page_size code_page_size cgroup" -- "${cur##*,}")); return ;;
    --format) COMPREPLY=($(compgen -W "text json csv" -- "$cur")); return ;;
    --source) COMPREPLY=($(compgen -W "builtin sysfs json tracepoint" -- "$cur")); return ;;
    -x|--field-separator) return ;;
    -e|--event) ;;
    *) if [[ $sub != resolve && $cur == -* ]]; then :; elif [[ $sub == stat && $prev != -e && $prev != --event ]]; then
         COMPREPLY=($(compgen -W "$_perfspec_stat_options" -- "$cur")); return
       fi ;;
  esac
  if [[ $cur == -* ]]; then
    case $sub in
      stat) COMPREPLY=($(compgen -W "$_perfspec_stat_options" -- "$cur")) ;;
      resolve) COMPREPLY=($(compgen -W "-M --metrics --metric-no-group --metric-no-merge --metric-no-threshold -k --keep-going --stdin --sysfs --format --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      list) COMPREPLY=($(compgen -W "--pmu --unit --topic --source --tracepoints --deprecated --pmus --metrics -v --verbose -d --desc --no-desc --details -o --output -j --json --format --sysfs --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      snapshot) COMPREPLY=($(compgen -W "--sysfs --tracepoints --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      decode) COMPREPLY=($(compgen -W "--type --config --config1 --config2 --config3 --attr --format --sysfs --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      script) COMPREPLY=($(compgen -W "-f --force --time -i --input --format -F --fields --samples --summary --ns --symfs --kallsyms --debuginfod --inline --no-inline --header --header-only -I --show-info --show-task-events --show-mmap-events --show-switch-events --show-namespace-events --show-lost-events --show-bpf-events --show-cgroup-events --show-text-poke-events --pid --tid -C --cpu --comm -S --symbols --addr-range --reltime --max-stack -G --hide-call-graph --per-event-dump -D --dump-raw-trace --dump-unsorted-raw-trace -v --verbose" -- "$cur")) ;;
      report) COMPREPLY=($(compgen -W "-f --force --no-call-graph -G --inverted --samples --pid --tid --time -i --input --format -o --output --stdio -s --sort --children --no-children -g --call-graph --percent-limit -n --show-nr-samples -q --quiet -D --dump-raw-trace --disable-order --max-stack --no-comm --include-pid --include-tid --kernel --symfs --kallsyms --debuginfod --inline --no-inline --header --header-only -I --show-info -T --threads --show-cpu-utilization --hierarchy --group --show-ref-call-graph --total-cycles --stitch-lbr -b --branch-stack --mem-mode" -- "$cur")) ;;
      top) COMPREPLY=($(compgen -W "-e --event -c --count -F --freq -p --pid -t --tid -a --all-cpus -C --cpu -d --delay -s --sort -n --show-nr-samples -K --hide_kernel_symbols -U --hide_user_symbols -z --zero -g -E --entries -m --mmap-pages --stdio --tui --sysfs --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      trace) COMPREPLY=($(compgen -W "-e --event --expr -o --output -p --pid -t --tid -a --all-cpus -C --cpu -s --summary -S --with-summary --errno-summary --failure --duration --max-events -F --pf --syscalls --no-syscalls --comm --no-comm --no-inherit -G --cgroup --call-graph --max-stack -m --mmap-pages --sysfs --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      record) COMPREPLY=($(compgen -W "-e --event --filter -b --branch-any -j --branch-filter -P --period -W --weight --sample-cpu --phys-data --data-page-size --code-page-size --all-user --all-kernel -c --count -F --freq --strict-freq -g --call-graph -d --data -p --pid -t --tid -a --all-cpus -C --cpu -G --cgroup -o --output -m --mmap-pages -z --compression-level --no-inherit -q --quiet -v --verbose -k --clockid -s --stat -T --timestamp -B --no-buildid --switch-events --namespaces --overwrite -D --delay --all-cgroups --max-size --user-regs -I --intr-regs --switch-output --switch-max-files --proc-map-timeout --sysfs --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
      exporter) COMPREPLY=($(compgen -W "--config --listen --web.config.file --check --threads --sysfs --events-dir --no-tables --cpuid --no-libpfm4" -- "$cur")) ;;
    esac
    return
  fi
  if [[ $sub == resolve || $sub == stat ]]; then
    # Complete the last event of a comma-separated list.
    local prefix=${cur%,*} last=${cur##*,}
    [[ $prefix == "$cur" ]] && prefix="" || prefix="$prefix,"
    local names what=()
    # A colon asks for tracepoints (sys:name), as perf list does.
    [[ $last == *:* ]] && what=(--tracepoints)
    names=$(perfspec list "${what[@]}" --format json 2>/dev/null | python3 -c 'import json,sys; print("\n".join(e["name"] for e in json.load(sys.stdin)["events"]))' 2>/dev/null)
    COMPREPLY=($(compgen -P "$prefix" -W "$names" -- "$last"))
    # Without bash-completion's -n :, readline splits at the colon: complete the part after it.
    if [[ $last == *:* && $COMP_WORDBREAKS == *:* && -z $prefix ]]; then
      local colon=${last%"${last##*:}"}
      COMPREPLY=("${COMPREPLY[@]#"$colon"}")
    fi
  fi
}
complete -F _perfspec perfspec
