// SPDX-License-Identifier: MIT
// Opening an event set for sampling and reading its ring buffers (REFERENCE §11).
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "perfspec/error.hpp"
#include "perfspec/sampling.hpp"
#include "runtime/open.hpp"
#include "runtime/read_format.hpp"
#include "spec/abi.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::runtime {

static_assert(record::sample_ip == spec::sample_ip && record::sample_tid == spec::sample_tid &&
              record::sample_time == spec::sample_time && record::sample_addr == spec::sample_addr &&
              record::sample_read == spec::sample_read &&
              record::sample_callchain == spec::sample_callchain && record::sample_id == spec::sample_id &&
              record::sample_cpu == spec::sample_cpu && record::sample_period == spec::sample_period &&
              record::sample_stream_id == spec::sample_stream_id && record::sample_raw == spec::sample_raw &&
              record::sample_branch_stack == spec::sample_branch_stack &&
              record::sample_regs_user == spec::sample_regs_user &&
              record::sample_stack_user == spec::sample_stack_user && record::sample_aux == spec::sample_aux);
static_assert(record::sample_weight == PERF_SAMPLE_WEIGHT &&
              record::sample_data_src == PERF_SAMPLE_DATA_SRC &&
              record::sample_identifier == PERF_SAMPLE_IDENTIFIER &&
              record::sample_transaction == PERF_SAMPLE_TRANSACTION &&
              record::sample_regs_intr == PERF_SAMPLE_REGS_INTR &&
              record::sample_phys_addr == PERF_SAMPLE_PHYS_ADDR &&
              record::sample_cgroup == PERF_SAMPLE_CGROUP &&
              record::sample_data_page_size == PERF_SAMPLE_DATA_PAGE_SIZE &&
              record::sample_code_page_size == PERF_SAMPLE_CODE_PAGE_SIZE &&
              record::sample_weight_struct == PERF_SAMPLE_WEIGHT_STRUCT);

namespace {

constexpr std::uint64_t sample_read_format =
    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;

// The data pages of one buffer: the caller's, else 512 KiB worth (perf's default, from the default
// perf_event_mlock_kb of 516: 512 KiB plus the metadata page), a power of two.
std::size_t data_pages(const SamplingOptions& o, std::size_t page_size) {
  if (o.pages) {
    if ((o.pages & (o.pages - 1)) != 0)
      throw Error(ErrorKind::usage,
                  fmt::format("a ring buffer has a power of two of data pages, not {}", o.pages));
    return o.pages;
  }
  std::size_t pages = std::max<std::size_t>(1, (512 * 1024) / std::max<std::size_t>(page_size, 1));
  while (pages & (pages - 1)) pages &= pages - 1;  // down to a power of two
  return pages;
}

// Each event's attr for sampling, as perf record sets it (tools/perf/util/evsel.c behaviour).
void configure(EventSet& set, const Target& target, const SamplingOptions& o) {
  std::size_t kernel_events = 0;
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < set.events.size(); ++i)
    if (set.events[i].tool == ToolEvent::none) {
      ++kernel_events;
      if (!first) first = i;
    }
  const bool shared = kernel_events > 1;  // several events write into each buffer
  for (const auto& g : set.groups) {
    const bool leader_samples_group =
        g.members.size() > 1 && (set.events[g.members.front()].attr.sample_type & record::sample_read);
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      ResolvedEvent& e = set.events[g.members[k]];
      if (e.tool != ToolEvent::none) continue;
      Attr& a = e.attr;
      if (leader_samples_group && k > 0) {
        // Leader sampling (`:S`): the members' values come in the leader's samples; they do not sample.
        a.sample_period = 0;
        a.freq = 0;
      } else if (a.sample_period == 0) {
        // No period= / freq= term of its own (a tracepoint already has period 1): -c, else -F.
        a.freq = o.period ? 0 : 1;
        a.sample_period = o.period ? o.period : o.frequency;
      }
      a.sample_type |= o.sample_type;
      // Each event counts the records it could not write into a full buffer (Linux 6.0): losses()
      // reads them, whatever the caller's read pattern (a kernel that refuses it: see open_one).
      a.read_format |= spec::format_lost;
      if (shared) {
        a.sample_type |= record::sample_identifier;
        a.read_format |= PERF_FORMAT_ID;
      }
      if (target.kind == Target::Kind::cpus) a.sample_type |= record::sample_cpu;
      if (a.sample_type & record::sample_read) {
        // The values of a read carry their ids; with inherit the kernel (6.12+) also needs the TID to
        // keep each thread's values apart.
        a.sample_type |= record::sample_id;
        a.read_format |= sample_read_format;
        if (target.inherit) a.sample_type |= record::sample_tid;
      }
      if ((a.sample_type & record::sample_branch_stack) && !a.branch_sample_type)
        a.branch_sample_type = o.branch_sample_type ? o.branch_sample_type : spec::branch_any;
      if ((a.sample_type & record::sample_regs_user) && !a.sample_regs_user)
        a.sample_regs_user = o.sample_regs_user;
      if ((a.sample_type & record::sample_regs_intr) && !a.sample_regs_intr)
        a.sample_regs_intr = o.sample_regs_intr;
      if ((a.sample_type & record::sample_stack_user) && !a.sample_stack_user)
        a.sample_stack_user = o.sample_stack_user;
      if ((a.sample_type & record::sample_callchain) && o.sample_max_stack && !a.sample_max_stack)
        a.sample_max_stack = o.sample_max_stack;
      if ((a.sample_type & record::sample_callchain) && o.exclude_callchain_user)
        a.exclude_callchain_user = 1;
      a.sample_id_all = 1;
      if (o.wakeup_watermark) {
        a.watermark = 1;
        a.wakeup_events = o.wakeup_watermark;
      } else if (o.wakeup_events) {
        a.watermark = 0;
        a.wakeup_events = o.wakeup_events;
      }
      if (o.overwrite) a.write_backward = 1;
      if (o.clockid) {
        a.use_clockid = 1;
        a.clockid = *o.clockid;
      }
      if (o.inherit_stat) a.inherit_stat = 1;
    }
  }
  if (o.track && first) {
    Attr& a = set.events[o.track_at_open || o.start_disabled ? set.events.size() - 1 : *first].attr;
    a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 1;
    // each MMAP2 with the build id of the file mapped, read by the kernel as it maps it (so a process
    // of another mount namespace gives its own file's): what HEADER_BUILD_ID is made from
    if (o.mmap_build_id) a.build_id = 1;
    if (o.mmap_data) a.mmap_data = 1;
    if (o.context_switch) a.context_switch = 1;
    if (o.namespaces) a.namespaces = 1;
    if (o.cgroup) a.cgroup = 1;
  }
}

// perf record's tracking event for -a: a software dummy of user space (it counts nothing and samples
// nothing; it carries the side-band records), in a group of its own at the end of the set.
void add_tracking_event(EventSet& set) {
  ResolvedEvent e;
  e.attr.type = 1;    // PERF_TYPE_SOFTWARE
  e.attr.config = 9;  // PERF_COUNT_SW_DUMMY
  e.attr.exclude_kernel = e.attr.exclude_hv = e.attr.exclude_guest = 1;
  e.name = "dummy:u";
  e.pmu = "software";
  e.group = set.groups.size();
  e.leader = set.events.size();
  EventGroup g;
  g.members.push_back(set.events.size());
  set.events.push_back(std::move(e));
  set.groups.push_back(std::move(g));
}

// A ring buffer that could not be mapped (`set_output_error`: after the kernel refused to redirect the
// fd into the buffer it shares).
Failure mmap_failure(int error, int cpu, std::size_t pages, std::size_t page_size, int set_output_error = 0) {
  Failure f;
  f.error = error;
  f.name = spec::errno_name(error);
  f.cpu = cpu;
  spec::FailureFacts facts{
      .what = set_output_error ? spec::FailureCase::set_output : spec::FailureCase::ring_buffer,
      .error = error,
      .error2 = set_output_error,
      .cpu = cpu,
      .count = pages,
      .size = (pages + 1) * page_size};
  if (error == EPERM)
    if (auto limit = spec::io::read_proc_number("/proc/sys/kernel/perf_event_mlock_kb")) facts.limit = *limit;
  auto words = spec::failure_words(facts);
  f.meaning = std::move(words.meaning);
  f.hint = std::move(words.hint);
  f.detail = std::move(words.detail);
  return f;
}

// The key of the buffer an instance writes into: its CPU when it has one (several tasks may share a
// CPU's buffer), else its thread (the kernel sends only the same task's events into a per-task buffer).
BufferPlace buffer_key(const Instance& inst) { return {inst.cpu, inst.cpu >= 0 ? -1 : inst.thread}; }
bool same_place(const BufferPlace& a, const BufferPlace& b) { return a.cpu == b.cpu && a.thread == b.thread; }

struct Buffer {
  BufferPlace place;
  int fd = -1;  // the fd mapped (owned by an instance)
  Mapping mapping;
  RingBuffer ring;
  bool hung_up = false;
};

}  // namespace

struct Sampler::Impl {
  Syscalls* sys = nullptr;
  OpenedSet opened;
  std::vector<Buffer> buffers;  // after `opened`: unmapped before the fds close
  std::vector<std::vector<std::uint64_t>> ids;
  std::vector<std::pair<std::uint64_t, std::size_t>> by_id;  // sorted: id -> event
  std::vector<::pollfd> pollfds;
  Losses kernel;  // what the records said
  bool overwrite = false;
  std::size_t pages = 0, page_size = 0;
  std::size_t tracking = ~std::size_t{0};  // the tracking event's index (track_at_open), else none

  void fail(std::size_t event, const Failure& f) {
    if (!opened.failures[event]) opened.failures[event] = f;
  }

  // Maps a buffer for `fd`; false (and errno in `error`) when the kernel refuses.
  bool map(int fd, BufferPlace place, int& error) {
    const std::size_t length = (pages + 1) * page_size;
    errno = 0;
    void* p = sys->mmap(fd, length, overwrite ? PROT_READ : PROT_READ | PROT_WRITE);
    if (!p) {
      error = errno ? errno : ENOMEM;
      return false;
    }
    Mapping m(*sys, p, length);
    RingBuffer ring(p, length, page_size,
                    overwrite ? RingBuffer::Mode::overwrite : RingBuffer::Mode::forward);
    buffers.push_back(Buffer{place, fd, std::move(m), std::move(ring), false});
    return true;
  }

  void map_buffers() {
    std::vector<char> drop(opened.instances.size(), 0);
    std::vector<char> placed(opened.instances.size(), 0);
    for (std::size_t i = 0; i < opened.instances.size(); ++i) {
      if (placed[i]) continue;
      const BufferPlace place = buffer_key(opened.instances[i]);
      std::vector<std::size_t> here;
      for (std::size_t j = i; j < opened.instances.size(); ++j)
        if (!placed[j] && same_place(buffer_key(opened.instances[j]), place))
          here.push_back(j), placed[j] = 1;
      const int out = opened.instances[i].fds.front().get();
      int error = 0;
      if (!map(out, place, error)) {
        // No buffer here: these fds would sample into nothing. Closed, and said on each event.
        Failure f = mmap_failure(error, place.cpu, pages, page_size);
        for (std::size_t j : here) {
          drop[j] = 1;
          for (std::size_t e : opened.instances[j].events) fail(e, f);
        }
        continue;
      }
      for (std::size_t j : here) redirect(opened.instances[j], out, place);
    }
    if (std::find(drop.begin(), drop.end(), 1) == drop.end()) return;
    std::vector<Instance> kept;
    for (std::size_t i = 0; i < opened.instances.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(opened.instances[i]));
    opened.instances = std::move(kept);
    std::fill(opened.opened.begin(), opened.opened.end(), 0);
    for (const auto& inst : opened.instances)
      for (std::size_t e : inst.events) opened.opened[e] = 1;
  }

  // Every fd of `inst` but the buffer's own writes into it (PERF_EVENT_IOC_SET_OUTPUT); one the kernel
  // will not redirect gets a buffer of its own.
  void redirect(const Instance& inst, int out, BufferPlace place) {
    for (std::size_t k = 0; k < inst.fds.size(); ++k) {
      const int fd = inst.fds[k].get();
      if (fd == out) continue;
      int r = retry_eintr(
          [&] { return sys->ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(out)); });
      if (r == 0) continue;
      int error = 0;
      if (map(fd, place, error)) continue;
      fail(inst.events[k], mmap_failure(error, place.cpu, pages, page_size, -r));
    }
  }

  void index_ids() {
    ids.assign(opened.set.events.size(), {});
    for (const auto& inst : opened.instances)
      for (std::size_t k = 0; k < inst.fds.size() && k < inst.ids.size(); ++k) {
        ids[inst.events[k]].push_back(inst.ids[k]);
        by_id.emplace_back(inst.ids[k], inst.events[k]);
      }
    std::sort(by_id.begin(), by_id.end());
  }

  // The kernel's own reports of what it did not record: counted, and passed on like every record.
  void account(std::span<const std::byte> r) {
    const RecordHeader h = record_header(r);
    auto word = [&](std::size_t at) {
      std::uint64_t v = 0;
      if (r.size() >= at + sizeof v) std::memcpy(&v, r.data() + at, sizeof v);
      return v;
    };
    switch (h.type) {
      case static_cast<std::uint32_t>(record::Type::lost):  // u64 id, u64 lost
        ++kernel.lost_records;
        kernel.lost += word(16);
        break;
      case static_cast<std::uint32_t>(record::Type::lost_samples):
        kernel.lost_samples += word(8);
        break;  // u64 lost
      case static_cast<std::uint32_t>(record::Type::throttle): ++kernel.throttles; break;
      case static_cast<std::uint32_t>(record::Type::unthrottle): ++kernel.unthrottles; break;
      default: break;
    }
  }

  // An EINVAL the sampling attr explains better than the generic text.
  void explain_einval(const Target& target) {
    for (std::size_t e = 0; e < opened.failures.size(); ++e) {
      auto& f = opened.failures[e];
      if (!f || f->error != EINVAL) continue;
      const Attr& a = opened.attrs[e];
      std::optional<spec::FailureWords> words;
      if (target.inherit && (a.sample_type & record::sample_read)) {
        words = spec::failure_words({.what = spec::FailureCase::inherit_sample_read});
      } else if (a.freq) {
        auto max = max_sample_rate();
        if (max && a.sample_period > *max)
          words = spec::failure_words({.what = spec::FailureCase::frequency_too_high,
                                       .count = a.sample_period,
                                       .limit = static_cast<std::int64_t>(*max)});
      }
      if (words) {
        f->detail = std::move(words->detail);
        f->hint = std::move(words->hint);
      }
    }
  }
};

std::optional<std::uint64_t> max_sample_rate() {
  auto rate = spec::io::read_proc_number("/proc/sys/kernel/perf_event_max_sample_rate");
  if (!rate || *rate <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(*rate);
}

Sampler::Sampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() = default;

Sampler Sampler::open(const EventSet& set, const Target& target, const SamplingOptions& options,
                      Syscalls& sys) {
  if (options.period == 0 && options.frequency == 0)
    throw Error(ErrorKind::usage, "sampling needs a period (-c) or a frequency (-F)");
  auto impl = std::make_unique<Impl>();
  impl->sys = &sys;
  impl->page_size = sys.page_size();
  impl->pages = data_pages(options, impl->page_size);
  impl->overwrite = options.overwrite;
  EventSet sampled = set;
  const bool immediate = options.track && (options.track_at_open || options.start_disabled) &&
                         std::any_of(set.events.begin(), set.events.end(),
                                     [](const ResolvedEvent& e) { return e.tool == ToolEvent::none; });
  if (immediate) add_tracking_event(sampled);
  configure(sampled, target, options);
  OpenOptions oo;
  oo.fallback_to_user = options.fallback_to_user;
  oo.filters = options.filters;
  const bool on_exec = target.enable_on_exec;
  const std::size_t tracking = immediate ? sampled.events.size() - 1 : sampled.events.size();
  if (immediate) impl->tracking = tracking;
  // The tracking event starts as it opens, or at a command's exec when the others wait for enable().
  auto prepare = [on_exec, tracking, later = options.start_disabled](Attr& a, bool leader,
                                                                     std::size_t event) {
    if (event == tracking) {
      a.disabled = on_exec && later ? 1 : 0;
      a.enable_on_exec = on_exec && later ? 1 : 0;
      return;
    }
    a.disabled = leader ? 1 : 0;
    a.enable_on_exec = leader && on_exec && !later ? 1 : 0;
  };
  // An inherited task has buffers per CPU: the kernel maps none for an inherited per-task event.
  const bool per_cpu = target.inherit && target.kind != Target::Kind::cpus;
  impl->opened = open_set(sampled, target, oo, sys, prepare, per_cpu);
  impl->explain_einval(target);
  impl->map_buffers();
  impl->index_ids();
  impl->pollfds.resize(impl->buffers.size());
  return Sampler(std::move(impl));
}

int Sampler::enable(bool tracking) {
  int first = 0;
  for (auto& inst : impl_->opened.instances) {
    if (!tracking && !inst.events.empty() && inst.events.front() == impl_->tracking) continue;
    int r = retry_eintr([&] {
      return impl_->sys->ioctl(inst.fds.front().get(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    });
    if (r < 0 && !first) first = -r;
  }
  return first;
}

int Sampler::disable(bool tracking) {
  int first = 0;
  for (auto& inst : impl_->opened.instances) {
    if (!tracking && !inst.events.empty() && inst.events.front() == impl_->tracking) continue;
    int r = retry_eintr([&] {
      return impl_->sys->ioctl(inst.fds.front().get(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    });
    if (r < 0 && !first) first = -r;
  }
  return first;
}

PollResult Sampler::poll(int timeout_ms) {
  auto& I = *impl_;
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  int wait = timeout_ms;
  for (int tries = 0;; ++tries) {
    std::size_t live = 0;
    for (std::size_t b = 0; b < I.buffers.size(); ++b) {
      // A buffer that hung up is left out: poll(2) would report it again at once, forever.
      I.pollfds[b].fd = I.buffers[b].hung_up ? -1 : I.buffers[b].fd;
      // Overwrite buffers are read when the reader chooses: waited on for their hangup only, as perf
      // polls its backward buffers (the kernel signals them readable whenever it wakes a reader).
      I.pollfds[b].events = I.overwrite ? 0 : POLLIN;
      I.pollfds[b].revents = 0;
      if (!I.buffers[b].hung_up) ++live;
    }
    if (live == 0) return {Wakeup::target_gone, 0};
    int n = I.sys->poll(I.pollfds.data(), I.pollfds.size(), wait);
    if (n == -EINTR && tries < max_eintr_retries) {
      if (timeout_ms >= 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        wait = static_cast<int>(std::max<decltype(left)>(0, left));
      }
      continue;
    }
    if (n < 0) return {Wakeup::failed, -n};
    if (n == 0) return {Wakeup::timeout, 0};
    for (std::size_t b = 0; b < I.buffers.size(); ++b) {
      const short rev = I.pollfds[b].revents;
      if (rev & POLLNVAL) return {Wakeup::failed, EBADF};
      if (rev & (POLLHUP | POLLERR)) I.buffers[b].hung_up = true;
    }
    const bool all_gone =
        std::all_of(I.buffers.begin(), I.buffers.end(), [](const Buffer& b) { return b.hung_up; });
    return {all_gone ? Wakeup::target_gone : Wakeup::ready, 0};
  }
}

std::size_t Sampler::read_erased(void* consumer, Erased call) {
  auto& I = *impl_;
  std::size_t n = 0;
  for (std::size_t b = 0; b < I.buffers.size(); ++b) {
    Buffer& buf = I.buffers[b];
    // Overwrite: the kernel must not write while the reader walks from data_head.
    struct Pause {
      Impl& I;
      int fd;
      bool on;
      ~Pause() {
        if (on) retry_eintr([&] { return I.sys->ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0); });
      }
    } pause{I, buf.fd, I.overwrite};
    if (pause.on) retry_eintr([&] { return I.sys->ioctl(buf.fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1); });
    n += buf.ring.read([&](std::span<const std::byte> r) {
      I.account(r);
      call(consumer, r, b);
    });
  }
  return n;
}

std::size_t Sampler::buffers() const { return impl_->buffers.size(); }
RingBuffer& Sampler::buffer(std::size_t index) { return impl_->buffers.at(index).ring; }
BufferPlace Sampler::place(std::size_t index) const { return impl_->buffers.at(index).place; }
const EventSet& Sampler::events() const { return impl_->opened.set; }
const std::vector<Attr>& Sampler::attrs() const { return impl_->opened.attrs; }
const std::vector<std::vector<std::uint64_t>>& Sampler::ids() const { return impl_->ids; }

std::optional<std::size_t> Sampler::event_of(std::uint64_t id) const {
  const auto& v = impl_->by_id;
  auto it = std::lower_bound(v.begin(), v.end(), std::pair<std::uint64_t, std::size_t>{id, 0});
  if (it == v.end() || it->first != id) return std::nullopt;
  return it->second;
}

const std::vector<std::optional<Failure>>& Sampler::failures() const { return impl_->opened.failures; }
bool Sampler::opened(std::size_t event) const {
  return event < impl_->opened.opened.size() && impl_->opened.opened[event];
}

Losses Sampler::losses() const {
  const Impl& I = *impl_;
  Losses l = I.kernel;
  for (const auto& b : I.buffers) {
    const RingStats& s = b.ring.stats();
    l.overruns += s.overruns;
    l.bad_records += s.bad_records;
    l.skipped_bytes += s.skipped_bytes;
    l.overwritten += s.overwritten;
    l.full_reads += s.full_reads;
  }
  // The events' own counts of what they could not write: one read per fd, its own value taken (with
  // PERF_FORMAT_GROUP a read gives the whole group: the value whose id is the fd's).
  std::vector<std::uint64_t> words;
  for (const auto& inst : I.opened.instances) {
    for (std::size_t k = 0; k < inst.fds.size(); ++k) {
      const Attr& a = I.opened.attrs[inst.events[k]];
      if (!(a.read_format & spec::format_lost)) {
        l.dropped_counted = false;
        continue;
      }
      const bool group = a.read_format & spec::format_group;
      words.assign(ReadFormatView::words_for(a.read_format, group ? inst.fds.size() : 1), 0);
      long n = retry_eintr([&] { return I.sys->read(inst.fds[k].get(), words.data(), words.size() * 8); });
      if (n <= 0) {
        l.dropped_counted = false;
        continue;
      }
      ReadFormatView v(a.read_format, words.data(), static_cast<std::size_t>(n) / 8);
      if (!group) {
        if (v.size() == 1) l.dropped += v.lost(0);
        continue;
      }
      const std::uint64_t own = k < inst.ids.size() ? inst.ids[k] : 0;
      bool found = false;
      for (std::size_t j = 0; j < v.size(); ++j)
        if (v.id(j) == own && own != 0) l.dropped += v.lost(j), found = true;
      if (!found) l.dropped_counted = false;
    }
  }
  return l;
}

std::size_t Sampler::open_fds() const {
  std::size_t n = 0;
  for (const auto& inst : impl_->opened.instances) n += inst.fds.size();
  return n;
}

}  // namespace perfspec::runtime
