// SPDX-License-Identifier: MIT
#pragma once
// A recording's samples as a profile: per event, the distinct stacks its samples had (each frame a
// binary and a symbol, as perf report resolves them), with how many samples and how much period each
// stack had, and the thread and CPU they were taken on. What perf report's tables, a pprof profile and
// folded stacks are all made from.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/perf_data.hpp"
#include "perfspec/symbols.hpp"

namespace perfspec::record {

/// One place a stack passed through: an address, where it lies and what perf report calls its level.
struct Frame {
  /// The binary as the recording names it (Location::dso); empty when no mapping covers the address.
  std::string_view dso;
  /// nullptr when the binary has no symbol there (or could not be read).
  const Symbol* symbol = nullptr;
  /// The address in the binary's terms (Location::dso_address), the address itself when no mapping
  /// covers it: what perf report shows for an address without a symbol.
  std::uint64_t address = 0;
  /// The address as the kernel wrote it.
  std::uint64_t ip = 0;
  /// perf report's level: 'k' kernel, '.' user, 'g' guest kernel, 'u' guest user, 'H' hypervisor.
  char level = '.';
  /// perf's short name of the binary: its file name (`libc.so.6`), `[kernel.kallsyms]` as it is.
  std::string_view short_dso() const;
};

/// Every member has an initializer, so that `ProfileOptions{.symbols = ...}` names only what it sets.
struct ProfileOptions {
  SymbolOptions symbols{};
  /// Stacks from PERF_SAMPLE_CALLCHAIN where the samples have one (else each stack is the sample's ip).
  bool callchains = true;
  /// At most this many frames of a callchain (perf's --max-stack, 127 by default).
  std::size_t max_stack = 127;
  /// The functions inlined at each user frame unwound from DWARF, each a frame of its own
  /// (Symbolizer::inlined): perf report's --inline, its default; false: --no-inline.
  bool inline_frames = true;
  /// The samples to gather (perf report's --time, --tid, --pid); empty: every one.
  std::function<bool(const Record&, const Sample&)> keep{};
};

/// The samples of a recording, gathered.
///
/// Example (the hottest functions of the first event, as `perf report --no-children` weighs them):
/// ```
/// auto file = perfspec::record::PerfData::open("perf.data");
/// auto profile = perfspec::record::Profile::read(file);
/// for (const auto& stack : profile.events()[0].stacks) {
///   const auto& leaf = profile.frame(stack.frames[0]);
///   std::printf("%llu %s\n", (unsigned long long)stack.period, leaf.symbol ? leaf.symbol->name.c_str() :
///   "?");
/// }
/// ```
class Profile {
 public:
  /// A distinct stack of one event on one thread and CPU.
  struct Stack {
    std::uint32_t comm = 0;  ///< the thread's name when the samples were taken: an index of comms()
    std::int32_t pid = 0, tid = 0;
    std::uint32_t cpu = 0;  ///< 0 without PERF_SAMPLE_CPU
    /// Indexes of frame(), the sample's own address first, its callers after it.
    std::vector<std::uint32_t> frames;
    /// Index of frame(): the sample's own address and the binary's symbol there (frames[0] but where
    /// that is a function inlined at the address): what perf report's row of the sample shows.
    std::uint32_t self = 0;
    std::uint64_t samples = 0, period = 0;
  };
  struct Event {
    std::string name;
    std::vector<Stack> stacks;  ///< in the order first seen
    std::uint64_t samples = 0;  ///< of every stack
    std::uint64_t period = 0;   ///< of every stack: perf report's "Event count"
    bool callchains = false;    ///< its samples have PERF_SAMPLE_CALLCHAIN
    bool cpu = false;           ///< its samples have PERF_SAMPLE_CPU
  };

  /// Reads every sample of `file` in time order (for_each_in_time_order), following its mappings
  /// and threads. Throws DecodeError for a record that does not follow the format, Error (usage) for
  /// samples that read their group's counts (PERF_SAMPLE_READ), which it does not gather yet.
  static Profile read(PerfData& file, const ProfileOptions& options = {});
  Profile(Profile&&) noexcept;
  Profile& operator=(Profile&&) noexcept;
  ~Profile();

  /// One per event of the file, in the file's order.
  const std::vector<Event>& events() const;
  const Frame& frame(std::uint32_t index) const;
  std::size_t frames() const;
  std::string_view comm(std::uint32_t index) const;
  /// The last name thread `tid` had in the recording (a COMM after its last sample counts: an exec);
  /// empty for a thread that took no sample.
  std::string_view thread_name(std::int32_t tid) const;
  /// Read from a pipe-mode stream (its events came as records, after a reader sets itself up).
  bool pipe() const;
  /// Samples lost, from the file's LOST_SAMPLES records: perf report's "Total Lost Samples" (perf record
  /// writes them at the end, from each event's PERF_FORMAT_LOST count).
  std::uint64_t lost() const;
  /// Records the kernel's LOST records say it dropped as they happened: the same losses as lost() in a
  /// file perf wrote, the only count in a file without LOST_SAMPLES (perf only warns of them).
  std::uint64_t lost_by_kernel() const;
  /// The counts of the recording's PERF_RECORD_READ records (perf record -s: each thread's counts as
  /// it exits), summed by thread and event: perf report -T's table.
  struct ThreadCounts {
    std::int32_t pid = 0, tid = 0;
    std::vector<std::uint64_t> values;  ///< by counter (0 where the thread has no READ of it)
  };
  struct Reads {
    std::vector<std::string> counters;  ///< the events' names, in the order their first READ came
    std::vector<ThreadCounts> threads;  ///< in the order their first READ came
  };
  const Reads& reads() const;
  /// The build id the recording gives the binary `dso` (Frame::dso), lowercase hex; empty when none.
  std::string build_id(std::string_view dso) const;
  /// Binaries whose symbols could not be read, each once, with why (Symbolizer::problems).
  const std::vector<std::string>& problems() const;

 private:
  struct Impl;
  explicit Profile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec::record
