// SPDX-License-Identifier: MIT
#pragma once
// `perfspec record`: sample events into a perf.data file that perf report and perf script read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::tools {

/// --switch-output's WHAT, as perf reads it: `signal` (each SIGUSR2 switches), a size (a number and B, K,
/// M or G: once the file's data reach it) or a time (a number and s, m, h or d: that often).
struct SwitchOutput {
  bool signal = false;
  std::uint64_t size = 0;
  unsigned seconds = 0;
};

struct RecordOptions {
  std::vector<std::string> events;         ///< -e lists; empty: cycles, else cpu-clock (as perf falls back)
  std::optional<std::uint64_t> period;     ///< -c
  std::optional<std::uint64_t> frequency;  ///< -F (default 4000 Hz, for events without period=/freq=)
  bool callgraph = false;                  ///< -g: frame-pointer callchains
  std::string call_graph;                  ///< --call-graph fp|dwarf[,SIZE] (wins over -g)
  bool data_addr = false;                  ///< -d: the data address of each sample
  std::optional<int> pid;                  ///< -p
  bool all_cpus = false;                   ///< -a
  std::string cpus;                        ///< -C
  std::string output = "perf.data";        ///< -o
  bool inherit = true;                     ///< --no-inherit clears it
  std::size_t pages = 0;                   ///< -m: data pages per buffer (0: perf's default)
  int compression = 0;                     ///< -z[N]: zstd level of the records written (0: none)
  bool quiet = false;                      ///< -q
  int verbose = 0;                         ///< -v: the fallbacks taken; -vv: each event's attr as opened
  std::string clockid;                     ///< -k: a clock's name or number (empty: the perf clock)
  bool inherit_stat = false;               ///< -s: per-thread counts (attr.inherit_stat)
  bool no_buildid = false;                 ///< -B: no HEADER_BUILD_ID
  bool switch_events = false;              ///< --switch-events
  bool namespaces = false;                 ///< --namespaces
  bool overwrite = false;                  ///< --overwrite: the newest records, kept in the buffers
  std::uint64_t branch_sample_type = 0;    ///< -b (ANY), -j FILTERS: branch stacks of these branches
  bool sample_period = false;              ///< -P: the period in each sample with -c too
  bool weight = false;                     ///< -W: each sample's weight
  bool sample_cpu = false;                 ///< --sample-cpu: each sample's CPU without -a/-C too
  bool phys_data = false;                  ///< --phys-data: the data address's physical address
  bool data_page_size = false, code_page_size = false;  ///< --data-page-size, --code-page-size
  bool all_user = false, all_kernel = false;            ///< --all-user, --all-kernel: every event's
  /// --filter: (the -e list it follows, by index; the filter), for that list's tracepoints
  std::vector<std::pair<std::size_t, std::string>> filters;
  std::vector<int> tids;                      ///< -t: these threads only (no inheritance)
  std::vector<std::string> cgroups;           ///< -G/--cgroup: per event (one for all), with -a/-C
  bool frequency_max = false;                 ///< -F max: kernel.perf_event_max_sample_rate
  bool strict_freq = false;                   ///< --strict-freq: -F over the kernel's limit is an error
  unsigned proc_map_timeout_ms = 500;         ///< --proc-map-timeout
  std::string delay;                          ///< -D: MSEC, -1, or ranges START-END,... (record_delay)
  bool all_cgroups = false;                   ///< --all-cgroups: each sample's cgroup, CGROUP records
  std::uint64_t max_size = 0;                 ///< --max-size: bytes of data after which the recording ends
  std::optional<SwitchOutput> switch_output;  ///< --switch-output: files switched, each named PATH.TIME
  unsigned switch_max_files = 0;              ///< --switch-max-files: only the newest N kept (0: all)
  std::uint64_t sample_regs_user = 0;         ///< --user-regs: each sample's user registers (perf_regs bits)
  std::uint64_t sample_regs_intr = 0;         ///< -I/--intr-regs: each sample's registers at the interrupt
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
  std::vector<std::string> command;
  std::vector<std::string> argv;  ///< the whole command line, for the file's HEADER_CMDLINE
};

/// -k: a clock by perf's names (monotonic, monotonic_raw, realtime, boottime, tai, their short forms
/// mono, raw, real, boot, with or without CLOCK_, any case) or number; nullopt for none. Throws Error
/// (usage) for another word.
std::optional<std::int32_t> clock_id(const std::string& text);
/// --switch-output's WHAT (SwitchOutput). Throws Error (usage) for anything else.
SwitchOutput switch_output(std::string_view what);
/// The name a file switched out gets, as perf names it: PATH.YYYYmmddHHMMSScc (local time, to the
/// hundredth of a second).
std::string timestamped(const std::string& path);
/// --call-graph dwarf[,SIZE]: the bytes of user stack each sample copies (perf's rules: rounded up to 8,
/// at most 65528); nullopt for fp or none. Throws Error (usage) for a mode perfspec does not record.
std::optional<std::uint32_t> dwarf_stack_size(std::string_view mode);
/// The user registers perf's dwarf mode samples on this architecture (its PERF_REGS_MASK); 0: unknown.
/// With --user-regs' subset, perf's DWARF_MINIMAL_REGS: the instruction and stack pointers.
#if defined(__x86_64__)
constexpr std::uint64_t user_regs_mask = 0xff0fff;                   // ax..r15 but ds, es, fs, gs
constexpr std::uint64_t dwarf_minimal_regs = (1u << 8) | (1u << 7);  // IP, SP
#elif defined(__aarch64__)
constexpr std::uint64_t user_regs_mask = 0x1ffffffff;  // x0..x28, fp, lr, sp, pc
constexpr std::uint64_t dwarf_minimal_regs = (std::uint64_t{1} << 32) | (std::uint64_t{1} << 31);  // pc, sp
#else
constexpr std::uint64_t user_regs_mask = 0;
constexpr std::uint64_t dwarf_minimal_regs = 0;
#endif

/// perf record -j's filter: names of PERF_SAMPLE_BRANCH_* bits apart by commas (u, k, hv, any, any_call,
/// any_ret, ind_call, ind_jmp, call, cond, ...; any case), ANY when only privilege levels are named.
/// Throws Error (usage) naming a word that is none.
std::uint64_t branch_filter(std::string_view text);

/// perf record -D: the milliseconds after the command starts (the recording, without one) that sampling
/// starts, -1 for never (the events stay disabled), or ranges `START-END,...` (each START past the END
/// before it) that sampling is on in, the recording ending with the last.
struct RecordDelay {
  int initial = 0;                          ///< when sampling starts (0: at once; -1: never)
  std::vector<std::pair<int, int>> ranges;  ///< [start, end) in ms, when given as ranges
};
/// Reads -D's text as perf's: an integer from -1 on that is not 0, else ranges. Throws Error (usage).
RecordDelay record_delay(std::string_view text);

/// perf record --max-size: digits and one of B, K, M, G (powers of 1024). Throws Error (usage).
std::uint64_t record_max_size(std::string_view text);

/// Runs `perfspec record`. Returns the exit status (the command's, when one was run).
int run_record(const RecordOptions& options);

}  // namespace perfspec::tools
