# SPDX-License-Identifier: MIT
# fish completion for perfspec: subcommands; each subcommand's options as its own --help lists them (so
# they follow the installed binary); event names for -e and resolve (from `perfspec list`), after the
# comma of a list too; files and folders where an option takes one.

set -l __perfspec_subcommands resolve stat list snapshot decode script report record trace top exporter

# The long and short options `perfspec SUB --help` lists (`-e,--event TEXT` gives -e and --event).
function __perfspec_options
    set -l sub (commandline -opc)[2]
    perfspec $sub --help 2>/dev/null | awk '/^  -/ { n = split($1, names, ","); for (i = 1; i <= n; i++) { sub(/\{.*/, "", names[i]); print names[i] } }'
end

# Event names, each after what the word has up to its last comma; tracepoints once it has a colon.
function __perfspec_events
    set -l word (commandline -ct)
    set -l prefix (string replace -r '[^,]*$' '' -- $word)
    set -l what
    string match -q '*:*' -- $word; and set what --tracepoints
    for name in (perfspec list $what --format json 2>/dev/null | python3 -c 'import json, sys; print("\n".join(e["name"] for e in json.load(sys.stdin)["events"]))' 2>/dev/null)
        echo $prefix$name
    end
end

function __perfspec_after_event
    set -l words (commandline -opc)
    contains -- $words[-1] -e --event
end

complete -c perfspec -f
complete -c perfspec -n "not __fish_seen_subcommand_from $__perfspec_subcommands" -a "$__perfspec_subcommands"
complete -c perfspec -n "__fish_seen_subcommand_from $__perfspec_subcommands; and string match -q -- '-*' (commandline -ct)" -a '(__perfspec_options)'
complete -c perfspec -n "__fish_seen_subcommand_from $__perfspec_subcommands; and __perfspec_after_event" -a '(__perfspec_events)'
complete -c perfspec -n "__fish_seen_subcommand_from resolve; and not string match -q -- '-*' (commandline -ct)" -a '(__perfspec_events)'
complete -c perfspec -n "__fish_seen_subcommand_from script report; and __fish_prev_arg_in -i --input" -F
complete -c perfspec -n "__fish_seen_subcommand_from exporter; and __fish_prev_arg_in --config --web.config.file" -F
complete -c perfspec -n "__fish_seen_subcommand_from $__perfspec_subcommands; and __fish_prev_arg_in --sysfs --events-dir --symfs" -a '(__fish_complete_directories)'
