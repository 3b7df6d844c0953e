// SPDX-License-Identifier: MIT
#pragma once
// Sampling, the live side: events opened with a period or a frequency write records into ring buffers
// mapped from their fds (REFERENCE §11; perf_event_open(2), "MMAP layout"). RingBuffer reads one such
// buffer; Sampler opens an event set for sampling, one buffer per CPU or per thread, and reads them all.
// Records are handed out as bytes, header included: decoding their bodies is not done here.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "perfspec/record.hpp"
#include "perfspec/runtime.hpp"

namespace perfspec::runtime {

/// struct perf_event_header: the first 8 bytes of every record.
struct RecordHeader {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::uint16_t size = 0;  ///< of the whole record, header included
};

/// The header of a record the reader handed out (which always holds at least 8 bytes).
///
/// Example: `for (auto r : batch) if (record_header(r).type ==
/// static_cast<std::uint32_t>(record::Type::lost)) ...`
inline RecordHeader record_header(std::span<const std::byte> record) {
  RecordHeader h;
  if (record.size() >= sizeof h) std::memcpy(&h, record.data(), sizeof h);
  return h;
}

/// What a RingBuffer met since it was made. Nothing is lost silently: data the reader had to pass over
/// is counted here.
///
/// Example: `if (ring.stats().overruns) warn("the reader fell behind");`
struct RingStats {
  std::uint64_t records = 0;        ///< records handed out
  std::uint64_t bytes = 0;          ///< their bytes
  std::uint64_t copied = 0;         ///< of them, records that wrapped the end and were copied out
  std::uint64_t overruns = 0;       ///< forward: data_head was more than the data area ahead of data_tail
  std::uint64_t bad_records = 0;    ///< headers no record can have (size < 8, not a multiple of 8, larger
                                    ///< than the data area, or past data_head)
  std::uint64_t skipped_bytes = 0;  ///< bytes passed over because of an overrun or a bad record
  std::uint64_t overwritten = 0;    ///< overwrite: reads that found more written since the last read than
                                    ///< the buffer holds (the oldest records were overwritten)
  /// Forward: reads that found less room left than the largest record (64 KiB, or the whole data
  /// area when smaller): the kernel may have dropped records since the previous read. Not proof of a
  /// loss (the exact count is Losses::dropped); proof of none when 0.
  std::uint64_t full_reads = 0;
};

/// A reader of one perf ring buffer: the metadata page (struct perf_event_mmap_page) then a data area of
/// 2^n pages. It does not own the memory: a Sampler maps and unmaps it; a test lays one out in plain
/// memory as the kernel does.
///
/// Forward (the default): records are read from data_tail up to data_head (loaded with acquire
/// ordering) and data_tail is stored back (release ordering) as they are consumed. A record that wraps
/// the end of the data area is copied into a scratch buffer, so every record comes as one contiguous
/// span. A head more than the data area ahead of the tail (an overrun), or a header no record can have,
/// is never read through: the reader counts it (stats()), says so (problem()) and skips to data_head,
/// where the kernel's next record starts.
///
/// Overwrite (a PROT_READ mapping of events with write_backward): the kernel writes backwards and never
/// waits for the reader; a read walks from data_head, newest record first, up to what the previous read
/// saw or one buffer's worth. The writer must be paused meanwhile (PERF_EVENT_IOC_PAUSE_OUTPUT: Sampler
/// does it).
///
/// The steps are libperf's read_init / read_event / consume / read_done, typed: begin(), next() (which
/// consumes the record before it), end(). read() and records() do all three.
///
/// Example:
/// ```
/// runtime::RingBuffer ring(base, (1 + pages) * page_size, page_size);
/// ring.read([&](std::span<const std::byte> r) { handle(runtime::record_header(r).type, r); });
/// ```
class RingBuffer {
 public:
  enum class Mode : std::uint8_t { forward, overwrite };
  /// What the last read met.
  enum class Problem : std::uint8_t { none, overrun, bad_record };

  /// A reader over `length` bytes at `base`, laid out as the kernel maps a ring: data_offset and
  /// data_size are taken from the metadata page when set there (Linux 4.1+), else the data area is
  /// everything after the first `page_size` bytes. Throws perfspec::Error (usage) when the layout is
  /// impossible (a data area that is not a power of two or does not fit).
  ///
  /// Example: `runtime::RingBuffer ring(memory.data(), memory.size(), 4096);`
  RingBuffer(void* base, std::size_t length, std::size_t page_size, Mode mode = Mode::forward);
  RingBuffer(RingBuffer&&) noexcept = default;
  RingBuffer& operator=(RingBuffer&&) noexcept = default;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;

  /// read_init: take data_head (and, forward, data_tail). Returns the bytes there are to read (0: none),
  /// after an overrun the bytes after it (0).
  ///
  /// Example: `if (ring.begin()) { while (auto r = ring.next()) use(*r); ring.end(); }`
  std::size_t begin();
  /// read_event: the next whole record, header included, or nullopt at the end (or at a bad record:
  /// see problem()). The span stays valid until the next call of next() or end(), which consume it.
  ///
  /// Example: `while (auto r = ring.next()) use(*r);`
  std::optional<std::span<const std::byte>> next();
  /// read_done: store data_tail past every record handed out (forward), so the kernel may reuse the
  /// space; in overwrite mode remember data_head for the next read.
  ///
  /// Example: `ring.end();`
  void end();

  /// begin(), `consumer(record)` for every record there is now, end(). Returns how many records.
  ///
  /// Example: `ring.read([&](std::span<const std::byte> r) { ++count[runtime::record_header(r).type]; });`
  template <typename Consumer> std::size_t read(Consumer&& consumer) {
    struct Done {  // end() also when the consumer throws (the record it threw on counts as read)
      RingBuffer& ring;
      ~Done() { ring.end(); }
    } done{*this};
    std::size_t n = 0;
    if (begin()) {
      while (auto r = next()) {
        consumer(*r);
        ++n;
      }
    }
    return n;
  }

  /// One read as a range: begin() when made, end() when destroyed.
  ///
  /// Example: `auto batch = ring.records(); for (auto r : batch) use(r);`
  class Batch {
   public:
    class iterator {
     public:
      using value_type = std::span<const std::byte>;
      using difference_type = std::ptrdiff_t;
      iterator() = default;
      explicit iterator(RingBuffer* ring) : ring_(ring) { advance(); }
      value_type operator*() const { return current_; }
      iterator& operator++() {
        advance();
        return *this;
      }
      void operator++(int) { advance(); }
      friend bool operator==(const iterator& a, const iterator& b) { return a.ring_ == b.ring_; }

     private:
      void advance() {
        if (auto r = ring_->next())
          current_ = *r;
        else
          ring_ = nullptr;
      }
      RingBuffer* ring_ = nullptr;
      value_type current_{};
    };
    explicit Batch(RingBuffer& ring) : ring_(ring) { ring_.begin(); }
    ~Batch() { ring_.end(); }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;
    iterator begin() { return iterator(&ring_); }
    iterator end() { return iterator(); }

   private:
    RingBuffer& ring_;
  };
  Batch records() { return Batch(*this); }

  /// What the last begin() .. end() met (none, overrun or bad_record); the counts are in stats().
  ///
  /// Example: `if (ring.problem() == runtime::RingBuffer::Problem::overrun) ...`
  Problem problem() const { return problem_; }
  /// Counts since the reader was made.
  const RingStats& stats() const { return stats_; }
  /// The size of the data area in bytes (a power of two).
  ///
  /// Example: `ring.data_size() == pages * page_size`
  std::size_t data_size() const { return data_size_; }
  Mode mode() const { return mode_; }

 private:
  std::byte* meta_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t data_size_ = 0;
  Mode mode_ = Mode::forward;
  Problem problem_ = Problem::none;
  bool reading_ = false;
  bool clipped_ = false;    // overwrite: more was written since the last read than the buffer holds
  std::uint64_t head_ = 0;  // data_head taken by begin()
  std::uint64_t pos_ = 0;   // where the next record starts
  std::uint64_t stop_ = 0;  // where this read stops (forward: head_)
  std::uint64_t seen_ = 0;  // overwrite: data_head at the previous read (where its records begin)
  std::uint64_t last_ = 0;  // the size of the record handed out last (consumed by the next step)
  std::vector<std::byte> scratch_;
  RingStats stats_;

  void copy_out(std::uint64_t position, std::byte* to, std::size_t size) const;
  void skip_to_head(Problem why);
};

/// perf's default frequency for events without a period of their own (record_opts.freq): 4000 Hz.
inline constexpr std::uint64_t default_frequency = 4000;

/// How Sampler opens events.
///
/// Example: `runtime::SamplingOptions o; o.frequency = 1000; o.sample_type |=
/// record::sample_callchain;`
struct SamplingOptions {
  /// `-c N`: the period of every event that has none of its own (no `period=`/`freq=` term, not a
  /// tracepoint); 0: use `frequency`.
  std::uint64_t period = 0;
  /// `-F HZ`: samples per second for those events when `period` is 0 (perf's default is 4000).
  std::uint64_t frequency = default_frequency;
  /// What every sample holds (record::sample_* bits), added to what an event asks itself (a tracepoint's
  /// RAW). Sampler adds IDENTIFIER when several events share a buffer, CPU for CPUs, ID for `:S` reads, and
  /// TID for `:S` reads of an inherited event (the kernel needs it).
  std::uint64_t sample_type =
      record::sample_ip | record::sample_tid | record::sample_time | record::sample_period;
  /// For branch_stack when the event sets no branch_type: PERF_SAMPLE_BRANCH_* bits (0: ANY).
  std::uint64_t branch_sample_type = 0;
  /// For regs_user / regs_intr: the registers (perf_regs bits of the architecture); must be set then.
  std::uint64_t sample_regs_user = 0;
  std::uint64_t sample_regs_intr = 0;
  /// For stack_user: bytes of user stack per sample (perf's --call-graph dwarf default 8192).
  std::uint32_t sample_stack_user = 8192;
  /// For callchain: the most frames (0: the kernel's perf_event_max_stack).
  std::uint16_t sample_max_stack = 0;
  /// Callchains of the kernel's frames only (attr.exclude_callchain_user), as perf's --call-graph dwarf
  /// asks: the user frames are unwound from regs_user and stack_user afterwards.
  bool exclude_callchain_user = false;
  /// Data pages per buffer, a power of two; 0: 512 KiB worth, as perf (perf_event_mlock_kb's default).
  std::size_t pages = 0;
  /// Wake poll() after this many samples; 0 with `wakeup_watermark` 0: when the buffer is half full.
  std::uint32_t wakeup_events = 0;
  /// Wake poll() when this many bytes are waiting (attr.watermark); overrides `wakeup_events`.
  std::uint32_t wakeup_watermark = 0;
  /// Overwrite buffers (a flight recorder): the kernel writes backwards over the oldest records and
  /// never waits; a read gives the newest first. poll() then waits for the target's end or the
  /// timeout only: what the buffers hold is read when the reader chooses (perf record --overwrite: at
  /// the end).
  bool overwrite = false;
  /// Side-band records (mmap, mmap2, comm with comm_exec, task) from the first event, as perf record's
  /// tracking event.
  bool track = true;
  /// With `track`: the side-band records come from a tracking event of their own instead, `dummy:u`
  /// (PERF_COUNT_SW_DUMMY, as perf record adds for -a), enabled as it is opened rather than by enable().
  /// A recorder that writes what already exists (processes, mappings) between open() and enable() then
  /// misses nothing that changes meanwhile: a process born during the scan has its FORK and COMM. The
  /// event is the last of events(), in a group of its own.
  bool track_at_open = false;
  /// The events start disabled, at open and at a command's exec alike: enable() starts them (perf record
  /// -D). With `track`, the side-band records come from a tracking event as with track_at_open, which
  /// starts with the target (at a command's exec), so what the target maps meanwhile is known.
  bool start_disabled = false;
  /// With `track`: MMAP2 records of data mappings too (attr.mmap_data, perf record -d), not only of
  /// executable ones.
  bool mmap_data = false;
  /// With `track`: each MMAP2 carries the build id of the file mapped (attr.build_id, Linux 5.12, perf
  /// record --buildid-mmap), read by the kernel from the file the process mapped, whatever mount
  /// namespace it is in. Dropped on a kernel that refuses it.
  bool mmap_build_id = true;
  /// On EACCES for an event that counts the kernel, retry it user-only (`:u`), as perf does.
  bool fallback_to_user = true;
  /// The clock of every event's times (attr.use_clockid and clockid, perf record -k: CLOCK_MONOTONIC,
  /// CLOCK_MONOTONIC_RAW, ...); none: the kernel's perf clock.
  std::optional<std::int32_t> clockid{};
  /// Each inherited thread's counts added to its parent's as it exits (attr.inherit_stat, perf record -s).
  bool inherit_stat = false;
  /// With `track`: SWITCH records at each context switch (attr.context_switch, perf record --switch-events).
  bool context_switch = false;
  /// With `track`: NAMESPACES records as threads are created or change namespaces (attr.namespaces, perf
  /// record --namespaces).
  bool namespaces = false;
  /// With `track`: CGROUP records as cgroups are created (attr.cgroup, perf record --all-cgroups;
  /// each sample's cgroup is sample_type's PERF_SAMPLE_CGROUP).
  bool cgroup = false;
  /// Per event of the set (by index; a shorter list or an empty string: none), a tracepoint filter set on
  /// each of its fds (PERF_EVENT_IOC_SET_FILTER, perf record --filter). A filter the kernel refuses is the
  /// event's failure (EINVAL: the filter names no field of the tracepoint, or does not parse).
  std::vector<std::string> filters{};
};

/// What poll() saw.
///
/// Example: `if (sampler.poll(100).state == runtime::Wakeup::target_gone) { sampler.read(f); done = true; }`
enum class Wakeup : std::uint8_t {
  ready,        ///< some buffer has records (or something to drain): read()
  timeout,      ///< nothing within the timeout
  target_gone,  ///< every buffer hung up (the target exited): read() what is left, then stop
  failed,       ///< poll(2) failed: PollResult::error
};

/// poll()'s answer.
///
/// Example: `auto p = s.poll(100); if (p.state == runtime::Wakeup::failed)
/// std::perror(std::strerror(p.error));`
struct PollResult {
  Wakeup state = Wakeup::timeout;
  int error = 0;  ///< errno when failed
};

/// What was not recorded, never hidden: the kernel's own reports (which pass through as records too) and
/// what the readers had to skip.
///
/// Example: `if (sampler.losses().lost) std::printf("%llu records lost\n", (unsigned long
/// long)sampler.losses().lost);`
struct Losses {
  /// Records the kernel could not write because a buffer was full, counted by the events themselves
  /// (their PERF_FORMAT_LOST values, read from their fds): exact whatever the read pattern. The LOST
  /// records below say the same, but the kernel writes one only when a reader has freed room and the
  /// event writes again: a caller that enables, works, disables and only then reads sees no LOST record
  /// for what the full buffer dropped, and this count all the same.
  std::uint64_t dropped = 0;
  /// Whether `dropped` counts every event: false when one could not count (a kernel before Linux 6.0
  /// refuses PERF_FORMAT_LOST): then a non-zero `full_reads` says records may have been dropped.
  bool dropped_counted = true;
  std::uint64_t full_reads = 0;     ///< readers: RingStats::full_reads, summed
  std::uint64_t lost_records = 0;   ///< PERF_RECORD_LOST records
  std::uint64_t lost = 0;           ///< records they say the kernel dropped (a full buffer)
  std::uint64_t lost_samples = 0;   ///< PERF_RECORD_LOST_SAMPLES: samples the PMU dropped
  std::uint64_t throttles = 0;      ///< PERF_RECORD_THROTTLE: sampling stopped for too many interrupts
  std::uint64_t unthrottles = 0;    ///< PERF_RECORD_UNTHROTTLE
  std::uint64_t overruns = 0;       ///< readers: RingStats::overruns, summed
  std::uint64_t bad_records = 0;    ///< readers: RingStats::bad_records, summed
  std::uint64_t skipped_bytes = 0;  ///< readers: RingStats::skipped_bytes, summed
  std::uint64_t overwritten = 0;    ///< readers: RingStats::overwritten, summed
};

/// Where a buffer collects records from.
///
/// Example: `if (s.place(b).cpu >= 0) per_cpu[s.place(b).cpu] += n;`
struct BufferPlace {
  int cpu = -1;     ///< -1: a task's buffer, any CPU
  int thread = -1;  ///< the thread of a per-thread buffer, when the target has several; else -1
};

/// An event set opened for sampling: every fd and mapping owned (nothing leaks on any path), one ring
/// buffer per CPU (system-wide, or a task with inherit: the kernel maps no inherited per-task buffer)
/// or per thread, every other event of that CPU or thread sent into it (PERF_EVENT_IOC_SET_OUTPUT).
/// Events start disabled: enable() (Target::command: at exec).
///
/// A buffer holds what it holds: records the kernel cannot write into a full one are dropped, and
/// losses().dropped counts them, whenever the caller reads. Nothing is dropped when the buffers are read
/// while the events run (poll(), then read(), until the work is done: `perfspec record`'s loop), or when
/// one buffer holds all of it (SamplingOptions::pages). Enabling, working, disabling and reading once,
/// as below, keeps at most one buffer's worth: check losses().
///
/// Example:
/// ```
/// auto sampler = runtime::Sampler::open(resolve("task-clock", machine), runtime::Target::self_thread());
/// sampler.enable(); work(); sampler.disable();
/// sampler.read([&](std::span<const std::byte> r) { if (runtime::record_header(r).type == 9) ++samples; });
/// if (auto l = sampler.losses(); l.dropped) std::printf("%llu samples dropped\n", (unsigned long
/// long)l.dropped);
/// ```
class Sampler {
 public:
  /// Open `set` for `target` (see SamplingOptions for the attr it sets). Events that cannot be opened,
  /// or whose buffer cannot be mapped (EPERM: perf_event_mlock_kb), are reported in failures(), never
  /// thrown; the others sample. Throws perfspec::Error (usage) for options or a target that cannot be
  /// used at all (pages not a power of two, no period nor frequency, a cgroup without CPUs).
  ///
  /// Example: `auto s = runtime::Sampler::open(set, runtime::Target::system_wide(), o);`
  static Sampler open(const EventSet& set, const Target& target, const SamplingOptions& options = {},
                      Syscalls& sys = system_calls());
  Sampler(Sampler&&) noexcept;
  Sampler& operator=(Sampler&&) noexcept;
  ~Sampler();

  /// PERF_EVENT_IOC_ENABLE / DISABLE on every group leader (with PERF_IOC_FLAG_GROUP). Returns 0, or the
  /// errno of the first that failed (the others are still tried). `tracking` false leaves the tracking
  /// event of SamplingOptions::track_at_open or start_disabled as it is (its side-band records go on).
  ///
  /// Example: `if (int err = sampler.enable()) std::printf("%s\n", std::strerror(err));`
  int enable(bool tracking = true);
  int disable(bool tracking = true);

  /// poll(2) on every buffer for up to `timeout_ms` (-1: no limit), EINTR repeated with the time left.
  /// A buffer that hung up is not polled again; when all have, target_gone (read() once more, then stop).
  ///
  /// Example: `while (sampler.poll(-1).state != runtime::Wakeup::target_gone) sampler.read(f);
  /// sampler.read(f);`
  PollResult poll(int timeout_ms);

  /// Every record of every buffer there is now, in buffer order, each as one span (header included):
  /// `consumer(record)` or `consumer(record, buffer_index)`. LOST, LOST_SAMPLES, THROTTLE and
  /// UNTHROTTLE are counted into losses() on the way and passed on too. Overwrite buffers are paused
  /// while read. Returns how many records.
  ///
  /// Example: `sampler.read([&](std::span<const std::byte> r, std::size_t b) { per_buffer[b]++; });`
  template <typename Consumer> std::size_t read(Consumer&& consumer) {
    using C = std::remove_reference_t<Consumer>;
    return read_erased(const_cast<void*>(static_cast<const void*>(&consumer)),
                       [](void* c, std::span<const std::byte> r, std::size_t b) {
                         if constexpr (std::is_invocable_v<C&, std::span<const std::byte>, std::size_t>)
                           (*static_cast<C*>(c))(r, b);
                         else
                           (*static_cast<C*>(c))(r);
                       });
  }

  /// The buffers, and where each collects from.
  ///
  /// Example: `for (std::size_t b = 0; b < s.buffers(); ++b) std::printf("CPU %d\n", s.place(b).cpu);`
  std::size_t buffers() const;
  RingBuffer& buffer(std::size_t index);
  BufferPlace place(std::size_t index) const;
  /// The event set as opened (names updated by fallbacks, `cycles` -> `cycles:u`).
  ///
  /// Example: `std::printf("%s\n", s.events().events[e].name.c_str());`
  const EventSet& events() const;
  /// Per event: the attr given to perf_event_open (the last successful open; for an event never opened,
  /// the attr that was tried) — what a perf.data file's attr section holds.
  ///
  /// Example: `write_attr(file, s.attrs()[e], s.ids()[e]);`
  const std::vector<Attr>& attrs() const;
  /// Per event: the kernel ids of its fds (PERF_EVENT_IOC_ID), one per CPU/thread it is open on.
  const std::vector<std::vector<std::uint64_t>>& ids() const;
  /// The event a sample's IDENTIFIER/ID belongs to.
  ///
  /// Example: `if (auto e = sampler.event_of(id)) ++per_event[*e];`
  std::optional<std::size_t> event_of(std::uint64_t id) const;
  /// Per event: why it could not be opened or mapped (on some CPUs, or at all); nullopt when it samples
  /// everywhere.
  ///
  /// Example: `if (!s.opened(e)) std::printf("%s: %s\n", s.failures()[e]->name.c_str(),
  /// s.failures()[e]->hint.c_str());`
  const std::vector<std::optional<Failure>>& failures() const;
  /// Per event: whether it is open somewhere with a buffer.
  bool opened(std::size_t event) const;
  /// What was not recorded, so far: the readers' counts, the kernel's LOST records read so far, and the
  /// events' own counts of dropped records (read from their fds: call it after disable() for the total).
  ///
  /// Example: `auto l = s.losses(); if (l.dropped + l.lost_samples + l.overruns) warn();`
  Losses losses() const;
  /// How many file descriptors are open.
  ///
  /// Example: `CHECK(s.open_fds() == 2 * cpus);`
  std::size_t open_fds() const;

 private:
  struct Impl;
  explicit Sampler(std::unique_ptr<Impl> impl);
  using Erased = void (*)(void*, std::span<const std::byte>, std::size_t);
  std::size_t read_erased(void* consumer, Erased call);
  std::unique_ptr<Impl> impl_;
};

/// The most samples a second the kernel lets an event ask for (kernel.perf_event_max_sample_rate): a
/// frequency above it is EINVAL. The kernel lowers it by itself when sampling interrupts take longer than
/// kernel.perf_cpu_time_max_percent of a CPU, so it can differ from one moment to the next; nullopt when
/// it cannot be read (an event's own frequency is then the kernel's to judge).
std::optional<std::uint64_t> max_sample_rate();

/// The registers a sample can carry on this machine, as perf_regs bits of its architecture (perf's
/// arch__user_reg_mask and arch__intr_reg_mask). x86-64: AX to R15 but DS, ES, FS and GS, and for
/// regs_intr the XMM registers too where the PMU samples them (a precise cycles event asking for them
/// opens); arm64: x0 to pc, and for regs_user the SVE vector granule (vg) where the CPU has SVE and a
/// cycles event asking for it opens. Both 0 where perfspec does not know the architecture's registers.
struct RegisterMasks {
  std::uint64_t user = 0;
  std::uint64_t intr = 0;
};
RegisterMasks sample_register_masks(Syscalls& sys = system_calls());

/// The records perf synthesizes at the start of a recording for what existed before it began, so that a
/// reader can name the threads and map the addresses of samples: the kernel's text as PERF_RECORD_MMAP
/// `[kernel.kallsyms]_text` (from /proc/kallsyms `_text`.._etext`; none when its addresses are hidden),
/// and for a process a PERF_RECORD_COMM per thread and a PERF_RECORD_MMAP2 per executable mapping
/// (/proc/PID/task, /proc/PID/maps). Each record ends with the zeroed sample_id trailer `attr` gives
/// (perf's id 0: "synthesized"). Appended to `out`; a process that is gone adds nothing. Reading a
/// process's maps stops once it has taken longer than `map_timeout` (perf record --proc-map-timeout,
/// 500 ms by default): its last MMAP2 then carries PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT, as perf
/// marks it, and synthesize_process returns true. With `namespaces` (perf record --namespaces), each
/// thread's COMM is followed by its PERF_RECORD_NAMESPACES: the device and inode of each of its
/// namespaces (/proc/PID/task/TID/ns: net, uts, ipc, pid, user, mnt, cgroup; zeros for one that cannot
/// be read), as perf synthesizes them; synthesize_comm's too.
///
/// Example: `runtime::synthesize_kernel(sampler.attrs()[0], bytes); writer.write(bytes);`
void synthesize_kernel(const Attr& attr, std::vector<std::byte>& out, const std::string& proc = "/proc");
bool synthesize_process(int pid, const Attr& attr, std::vector<std::byte>& out,
                        const std::string& proc = "/proc",
                        std::chrono::milliseconds map_timeout = std::chrono::milliseconds{500},
                        bool namespaces = false);
/// The one PERF_RECORD_COMM perf record synthesizes for the command it starts, while the command waits
/// before its exec (Command: named `perf-exec` then): samples the kernel takes after the exec enabled the
/// events and before the exec's own COMM are named from it. Nothing when the process is gone.
void synthesize_comm(int pid, const Attr& attr, std::vector<std::byte>& out,
                     const std::string& proc = "/proc", bool namespaces = false);
/// A PERF_RECORD_CGROUP for each cgroup under `root` (a cgroup file system's mount: perf's choice is the
/// hierarchy with the perf_event controller, else the cgroup2 mount), the root itself first as "/": its
/// id (the kernel's, from name_to_handle_at, as samples' PERF_SAMPLE_CGROUP give it) and its path below
/// `root`, as perf record --all-cgroups synthesizes them. A folder that cannot be read is left out.
///
/// Example: `runtime::synthesize_cgroups(attr, bytes, "/sys/fs/cgroup");`
void synthesize_cgroups(const Attr& attr, std::vector<std::byte>& out, const std::string& root);

/// What a live reader reads from every buffer, handed on in time order. Each buffer's records come in
/// time order, but a read of all the buffers, one after another, can take a CPU's record and miss an
/// earlier one of a CPU it read before it (a thread's system call entered on the one, left on the
/// other, while the buffers were read). As perf's ordered events do a recording's rounds, after each
/// read of every buffer (round()) only what is no later than the latest time the read before had seen
/// is handed on: a record a read missed was written after that read began, so later than anything the
/// read before had. The rest waits for the next read; flush() hands on everything (at the end).
/// Records of equal times keep the order they were held in; a record of time 0 goes with the next round.
///
/// Example: `order.hold(sample.time, copy); ... sampler.read(f); order.round([&](T& t) { print(t); });`
template <typename T> class TimeOrder {
 public:
  void hold(std::uint64_t time, T item) {
    latest_ = std::max(latest_, time);
    held_.push_back({time, std::move(item)});
  }

  /// After a read of every buffer: calls `take(T&)` for each held record no later than the limit.
  template <typename Take> void round(Take&& take) {
    hand_on(take, false);
    limit_ = latest_;
  }

  /// Calls `take(T&)` for every held record.
  template <typename Take> void flush(Take&& take) { hand_on(take, true); }

  std::size_t held() const { return held_.size(); }

 private:
  struct Entry {
    std::uint64_t time;
    T item;
  };
  std::vector<Entry> held_, due_;
  std::uint64_t latest_ = 0, limit_ = 0;

  template <typename Take> void hand_on(Take& take, bool all) {
    auto later = std::stable_partition(held_.begin(), held_.end(),
                                       [&](const Entry& e) { return all || e.time <= limit_; });
    due_.assign(std::make_move_iterator(held_.begin()), std::make_move_iterator(later));
    held_.erase(held_.begin(), later);
    std::stable_sort(due_.begin(), due_.end(),
                     [](const Entry& a, const Entry& b) { return a.time < b.time; });
    for (Entry& e : due_) take(e.item);
    due_.clear();
  }
};

}  // namespace perfspec::runtime
