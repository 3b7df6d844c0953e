// SPDX-License-Identifier: MIT
#pragma once
// The inverse of resolve: from a perf_event_attr back to the best event string.
#include <optional>
#include <string>
#include <vector>

#include "perfspec/attr.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/spec.hpp"

namespace perfspec {

struct Decoded {
  std::string event;  ///< the best event string (parses and resolves back to the attr's
                      ///< type and config words, where no leftover bits are reported)
  std::string how;    ///< "symbol", "alias", "table", "formats", "raw", "tracepoint", "breakpoint"
  std::vector<std::string>
      leftovers;                   ///< e.g. "config bits 0x300000000 are covered by no format of pmu 'cpu'"
  std::vector<std::string> notes;  ///< other things the string cannot say (sampling fields, ...)
};

/// Decode `attr` against a machine: a built-in symbol, a sysfs alias or table event that encodes to
/// exactly the same config words, else `pmu/term=...,.../` gathered through the PMU's formats, else
/// a raw or `type:config` event; modifiers from the exclude and precise bits.
///
/// Example: `decode({.type = 4, .config = 0x8d1}, machine).event == "mem_load_retired.l1_miss"` with
/// the skylakex table; `cpu/event=0xd1,umask=0x8/` without it.
Decoded decode(const Attr& attr, const spec::Machine& machine);

/// The canonical event string of a resolved event: `decode(event.attr, machine).event`, which
/// resolves back to the same type, config words, flags and period.
///
/// Example: `to_string(resolve("cpu/event=0xcd,umask=1,ldlat=3/", m).events[0], m) == "mem-loads"`.
std::string to_string(const ResolvedEvent& event, const spec::Machine& machine);

/// The name perf 6.12 gives an attr's config where it prints attrs (perf_pmu__name_from_config): the
/// first sysfs alias, else table event (in lower case), of `pmu` that encodes to this config word
/// (config1 and on are not compared, as in perf); nullopt when none does.
///
/// Example: `config_name(machine, *machine.pmu_of_type(4), 0x1cd) == "mem-loads"` on Skylake-X.
std::optional<std::string> config_name(const spec::Machine& machine, const spec::Pmu& pmu,
                                       std::uint64_t config);
/// A tracepoint's `sys:name` by the id the machine's tracefs gives it; nullopt when none has it.
std::optional<std::string> tracepoint_name(const spec::Machine& machine, std::uint64_t id);
/// Parse `perf stat -vv` text: the `perf_event_attr:` blocks of `field  value` lines that perf prints
/// (each block ends at its `----` rule; everything outside the blocks is skipped). It reads perf 6.1's
/// plain numbers, perf 6.12's annotated forms (`type 1 (software)`, `config 0x2
/// (PERF_COUNT_SW_PAGE_FAULTS)`, `config 0x10000 (PERF_COUNT_HW_CACHE_RESULT_MISS | ...)`,
/// `config 0x1cd (mem-loads)`, `config 0x174 (sched:sched_switch)`), the bit names of `sample_type`,
/// `read_format` and `branch_sample_type` (`IP|TID`), the union labels (`{ bp_addr, config1 }`) and
/// what `perfspec resolve --format text` prints. An annotation is checked against its number where
/// its meaning is the same on every machine (the PERF_* enums, the software, tracepoint and breakpoint
/// PMUs). Anything else in a block (a field perfspec does not know, a malformed or out-of-range
/// number, a name that is not a bit, trailing text, a field given twice) throws Error with
/// `stdin:LINE:COLUMN:` in its message; nothing is left at 0 for want of reading it.
///
/// Example: `for (auto& a : parse_perf_attr_text(perf_output)) std::puts(decode(a, machine).event.c_str());`
std::vector<Attr> parse_perf_attr_text(std::string_view text);
/// The same, also checking the annotations whose meaning depends on the machine against `machine`: a
/// PMU's name for its type (`type 10 (msr)`), an alias or table event's name for its config
/// (`config 0x1cd (mem-loads)`), a tracepoint's name for its id. A name the machine lacks cannot be
/// checked and is let be; a name it has with another number is an error (the text was made on another
/// machine, or edited).
std::vector<Attr> parse_perf_attr_text(std::string_view text, const spec::Machine& machine);

/// The most bytes `parse_attr_input` takes (64 MiB: about 40,000 events of `resolve --format json`).
inline constexpr std::size_t attr_input_max_bytes = std::size_t{64} << 20;
/// The deepest JSON nesting `parse_attr_input` takes: resolve's JSON is 3 deep, a bare attr array 2.
inline constexpr int attr_input_max_depth = 16;

/// Attrs from what `perfspec decode` reads on standard input: the JSON of `perfspec resolve --format json`
/// (`{"events":[{"attr":{...}}]}`, or an array of attr objects), or `perf stat -vv` text. Input over
/// `attr_input_max_bytes` or JSON nested deeper than `attr_input_max_depth` is refused before it is
/// parsed further, so hostile input costs bounded time and memory. Throws Error naming the byte.
std::vector<Attr> parse_attr_input(std::string_view text);
/// The same, with perf text's machine-dependent annotations checked against `machine` (see
/// parse_perf_attr_text). `perfspec decode` reads its input so, against the machine it decodes for.
std::vector<Attr> parse_attr_input(std::string_view text, const spec::Machine& machine);

}  // namespace perfspec
