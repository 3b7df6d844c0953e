// SPDX-License-Identifier: MIT
#pragma once
// A recording session as perf record runs one: events sampled for a target (runtime::Sampler), the
// perf.data file written as records come (record::PerfDataWriter), with what perf writes beside them:
// the tracing data of tracepoints, the features that say where the data was taken, the records perf
// synthesizes for what existed before (the kernel's text, the target's processes), a FINISHED_ROUND
// after each pass, the samples' time range. `perfspec record` is this and a command line.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perfspec/perf_data.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::runtime {

// Every member has an initializer, so that `RecordingOptions{.sampling = ...}` names only what it sets.
struct RecordingOptions {
  /// How the events sample (period or frequency, sample_type, pages). For a target that exists before
  /// the recording (a process, every CPU) `track_at_open` is set, as perf sets it: the side-band
  /// records come from a tracking event enabled as it opens, so that a process born while /proc is
  /// read is named all the same.
  SamplingOptions sampling{};
  std::vector<std::string> cmdline{};  ///< HEADER_CMDLINE: the command line that recorded
  /// HEADER_BUILD_ID of the binaries samples hit, and MMAP2 records with build ids (perf record -B: none).
  bool build_ids = true;
  /// The longest a process's /proc/PID/maps is read when the processes that exist are synthesized
  /// (perf record --proc-map-timeout): Recording::map_timeouts() names those cut short.
  std::chrono::milliseconds proc_map_timeout{500};
  /// A CGROUP record of every cgroup that exists, at the start (synthesize_cgroups; perf record
  /// --all-cgroups, with SamplingOptions::cgroup for those made later).
  bool cgroups = false;
};

/// What a recording wrote, once finished.
struct RecordingSummary {
  std::uint64_t samples = 0;  ///< SAMPLE records written
  std::uint64_t bytes = 0;    ///< the data section's size
  int wakeups =
      0;  ///< passes that found records, as perf counts its wake-ups (overwrite: waits that ended early)
  Losses losses{};  ///< what was not recorded, and why (Sampler::losses)
};

/// A recording: open, begin writing, drain while the target runs, finish.
///
/// Example (a command recorded into perf.data, as `perfspec record -F 999 -- ./work`):
/// ```
/// runtime::Command cmd({"./work"});
/// auto rec = runtime::Recording::open(machine, resolve("cpu-clock", machine),
///                                     runtime::Target::command(cmd, true), {.sampling = {.frequency =
///                                     999}});
/// auto out = record::PerfDataWriter::create("perf.data", rec.file_events());
/// rec.begin(out);
/// cmd.start();
/// while (rec.drain(100) != runtime::Wakeup::target_gone) {}
/// auto summary = rec.finish();
/// ```
class Recording {
 public:
  /// `machine` must outlive the Recording (begin() reads it), and the writer given to begin() must
  /// live until finish().
  ///
  /// Open `set` for `target` (Sampler::open): events that cannot sample are in failures() (when none
  /// can, sampling() is false and there is nothing to record). Throws Error (usage) for options or a
  /// target that cannot be used.
  static Recording open(const spec::Machine& machine, const EventSet& set, const Target& target,
                        const RecordingOptions& options = {});
  Recording(Recording&&) noexcept;
  Recording& operator=(Recording&&) noexcept;
  ~Recording();

  /// The events as opened (Sampler::events), and per event why it cannot sample (nullopt: it does).
  const EventSet& events() const;
  const std::vector<std::optional<Failure>>& failures() const;
  /// Whether event `index` samples (somewhere: on some CPUs at least), and whether some event does.
  bool opened(std::size_t index) const;
  bool sampling() const;
  /// The file's events: those that opened (and the tracking event of a system-wide or process target),
  /// each with its attr and ids; what a PerfDataWriter is created with.
  const std::vector<record::FileEvent>& file_events() const;
  /// After begin(): the processes whose mappings took longer than RecordingOptions::proc_map_timeout to
  /// read (their last MMAP2 is marked, the rest left out).
  const std::vector<int>& map_timeouts() const;

  /// Start writing into `out` (created with file_events(), and kept alive until finish()): the
  /// tracing data of the tracepoints among the events, the features that describe this machine
  /// (hostname, osrelease, arch, nrcpus, cpudesc, cpuid, total memory, cmdline), the records of what
  /// exists (the kernel's text; the target's process, or every process for every CPU), a
  /// FINISHED_ROUND. Then enables the events, unless the target is a command not yet started
  /// (Target::command: they enable at its exec) or SamplingOptions::start_disabled asks for enable(). Throws
  /// Error (usage) when no event samples, Error (io) when the file cannot be written.
  void begin(record::PerfDataWriter& out);
  /// Start or stop sampling (perf record -D, --control): the events but the tracking event, whose
  /// side-band records go on. Returns 0 or the first errno (Sampler::enable).
  int enable();
  int disable();
  /// Wait up to `timeout_ms` for records, then write every record the buffers hold, and a
  /// FINISHED_ROUND when there were some. With SamplingOptions::overwrite, only wait: finish() writes
  /// what the buffers hold then, the newest records (perf record --overwrite). Returns what the wait found
  /// (target_gone: every buffer hung up, the target has exited). Throws Error (io) when the file cannot be
  /// written or poll fails.
  Wakeup drain(int timeout_ms);
  /// Disable the events, write what is left, the samples' time range, and finish the file. With
  /// SamplingOptions::overwrite, what the buffers hold is followed by the records of what exists then
  /// (the command's or process's, the kernel's, every process for every CPU), not written at begin():
  /// perf's tail synthesis, since the kernel may have written over the side-band of the start.
  RecordingSummary finish();
  /// Finish the file as finish() does, but with the events still sampling, and return what it holds
  /// (its samples, bytes and wake-ups; the losses so far): perf record --switch-output. The records the
  /// buffers take meanwhile wait for the next file, which begin() starts (its features, and the records
  /// of what exists then: the command's or process's, or every process for every CPU).
  RecordingSummary end_file();

 private:
  struct Impl;
  explicit Recording(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec::runtime
