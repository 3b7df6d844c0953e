// SPDX-License-Identifier: MIT
#include <linux/perf_event.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "perfspec/runtime.hpp"
#include "runtime/open.hpp"
#include "runtime/read_format.hpp"
#include "runtime/user_page.hpp"

namespace perfspec::runtime {

double scale_count(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) {
  if (running == 0) return 0.0;
  if (running >= enabled) return static_cast<double>(raw);
  // raw * enabled can exceed 64 bits; do it in 128 (a GCC/Clang extension, hence __extension__).
  __extension__ using u128 = unsigned __int128;
  u128 product = static_cast<u128>(raw) * enabled;
  return static_cast<double>(product / running) +
         static_cast<double>(product % running) / static_cast<double>(running);
}

double Count::scaled() const { return scale_count(raw, time_enabled, time_running); }

double Count::running_fraction() const {
  if (time_enabled == 0) return time_running ? 1.0 : 0.0;
  return std::min(1.0, static_cast<double>(time_running) / static_cast<double>(time_enabled));
}

namespace {

constexpr std::uint64_t read_format =
    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_GROUP;

// Counting, not sampling (as perf stat): a period from an event table or a tracepoint would only
// add overflow interrupts with nowhere to write samples. Groups start disabled, at their leader.
void prepare_for_counting(Attr& a, bool leader, bool enable_on_exec) {
  a.sample_period = 0;
  a.freq = 0;
  a.sample_type = 0;
  a.read_format = read_format;
  a.disabled = leader ? 1 : 0;
  a.enable_on_exec = leader && enable_on_exec ? 1 : 0;
}

}  // namespace

struct Counters::Impl {
  Syscalls* sys = nullptr;
  OpenedSet opened;
  std::vector<Place> places;                       // distinct (cpu, thread) of the instances, sorted
  std::vector<std::vector<std::size_t>> at_place;  // per place: its instances
  std::vector<std::vector<char>> here;             // per place, per event: opened there
  std::vector<std::uint64_t> buffer;               // group reads, reused across read() calls
  std::vector<UserRead> fast;                      // user-page reads of one group, reused across read() calls
  std::vector<std::uint8_t> noted;  // per event: the kinds of runtime fault already noted by this read()
  std::vector<char> present;        // per fd of one instance: its value was in the group read

  // The read in progress: its output and which faults it noted.
  std::vector<Count>* out = nullptr;
  bool noted_ready = false;  // `noted` is cleared on the first fault: a read without faults does not touch it
  bool open_notes = false;   // some event has a note from opening (a fallback)
  std::optional<char> access_off;  // user_access_off(), read at the first user-read fallback

  void begin_read(std::vector<Count>& counts) {
    out = &counts;
    noted_ready = false;
    counts.resize(opened.set.events.size());
    // Until finish_read, `state` only says whether a value was read for the event: counted when one
    // was (a value may be 0, so the value itself cannot say).
    for (std::size_t e = 0; e < counts.size(); ++e) {
      Count& c = counts[e];
      c.raw = c.time_enabled = c.time_running = 0;
      c.state = Count::State::not_counted;
      // The fallback taken when opening comes first. assign() copies onto the note an earlier read
      // left there, so reading again allocates nothing.
      if (open_notes && opened.notes[e])
        c.notes.assign(&*opened.notes[e], &*opened.notes[e] + 1);
      else
        c.notes.clear();
    }
  }

  // Runtime faults are noted once per kind and event, for the first CPU that had one: on a large
  // machine the same fault on every CPU would otherwise repeat the note hundreds of times.
  void note(std::size_t e, Note::Kind kind, int error, int cpu, std::size_t bytes = 0, std::size_t wanted = 0,
            Note::Obstacle obstacle = Note::Obstacle::none) {
    static_assert(static_cast<int>(Note::Kind::user_read_fallback) < 8, "one bit of `noted` per kind");
    if (!noted_ready) noted.assign(out->size(), 0), noted_ready = true;
    const auto bit = static_cast<std::uint8_t>(1u << static_cast<unsigned>(kind));
    if (noted[e] & bit) return;
    noted[e] = static_cast<std::uint8_t>(noted[e] | bit);
    Note& n = (*out)[e].notes.emplace_back();
    n.kind = kind;
    n.error = error;
    n.cpu = cpu;
    n.bytes = bytes;
    n.wanted = wanted;
    n.obstacle = obstacle;
  }

  void note_ioctl_faults(const Instance& inst) {
    for (std::size_t op = 0; op < std::size(group_ioctls); ++op)
      if (int err = inst.ioctl_errors[op])
        for (std::size_t e : inst.events) note(e, group_ioctl_notes[op], err, inst.cpu);
  }

  // Self-monitoring: every counter of the group through its user page (rdpmc), when all allow it;
  // otherwise every event of the group notes why not, and read(2) reads it.
  bool read_user_pages(const Instance& inst) {
    if (inst.pages.empty() || inst.pages.size() != inst.fds.size()) return false;
    fast.clear();
    for (const auto& m : inst.pages) {
      auto r = read_mapped_page(m.get());
      if (!r) {
        if (!access_off) access_off = sys->user_access_off() ? 1 : 0;
        const Note::Obstacle why = user_read_obstacle(m.get(), *access_off);
        for (std::size_t e : inst.events) note(e, Note::Kind::user_read_fallback, 0, inst.cpu, 0, 0, why);
        return false;
      }
      fast.push_back(*r);
    }
    for (std::size_t k = 0; k < fast.size(); ++k) {
      Count& c = (*out)[inst.events[k]];
      c.raw += fast[k].value;
      c.time_enabled += fast[k].time_enabled;
      c.time_running += fast[k].time_running;
      c.state = Count::State::counted;
    }
    return true;
  }

  void read_group(const Instance& inst) {
    buffer.resize(ReadFormatView::words_for(read_format, inst.fds.size()));
    std::size_t want = buffer.size() * sizeof(std::uint64_t);
    long r = retry_eintr([&] { return sys->read(inst.fds.front().get(), buffer.data(), want); });
    if (r < 0) {
      for (std::size_t e : inst.events) note(e, Note::Kind::read_failed, static_cast<int>(-r), inst.cpu);
      return;
    }
    auto bytes = static_cast<std::size_t>(r);
    ReadFormatView view(read_format, buffer.data(), bytes / sizeof(std::uint64_t));
    const bool short_read_seen = bytes < want;
    if (short_read_seen) present.assign(inst.fds.size(), 0);  // which values a short read held
    add_values(inst, view, short_read_seen);
    // The values a short read left out are not counted on this CPU, which must not pass silently.
    if (short_read_seen)
      for (std::size_t k = 0; k < inst.fds.size(); ++k)
        if (!present[k]) note(inst.events[k], Note::Kind::short_read, 0, inst.cpu, bytes, want);
  }

  // Each value of a group read onto its event's count, matched by id.
  void add_values(const Instance& inst, const ReadFormatView& view, bool mark_present) {
    // Sizes and data held in locals: the stores into `out` below would otherwise make the compiler
    // reload them for every value (this loop is most of a group read's own time).
    const std::size_t fds = inst.fds.size(), known_ids = inst.ids.size();
    const std::size_t nr = std::min(view.size(), fds);
    const std::uint64_t* ids = inst.ids.data();
    const std::uint64_t enabled = view.time_enabled(), running = view.time_running();
    Count* counts = out->data();
    for (std::size_t k = 0; k < nr; ++k) {
      std::uint64_t value = view.value(k), id = view.id(k);
      // The kernel reports the leader, then the members in the order they were opened: the id at
      // position k is normally ids[k].
      std::size_t pos = k;
      if (k >= known_ids || ids[k] != id) {
        const std::uint64_t* it = std::find(ids, ids + known_ids, id);
        // Without ids (PERF_EVENT_IOC_ID failed) that order is the only map; with them an unknown id
        // is dropped rather than put on the wrong event.
        if (it == ids + known_ids && inst.ids_known) continue;
        if (it != ids + known_ids) pos = static_cast<std::size_t>(it - ids);
      }
      if (pos >= fds) continue;
      Count& c = counts[inst.events[pos]];
      if (mark_present) present[pos] = 1;
      c.raw += value;
      c.time_enabled += enabled;
      c.time_running += running;
      c.state = Count::State::counted;
    }
  }

  void finish_read() {
    const std::size_t n = out->size();
    for (std::size_t e = 0; e < n; ++e) {
      Count& c = (*out)[e];
      if (opened.failures[e])
        c.failure = opened.failures[e];
      else
        c.failure.reset();
      if (!opened.opened[e])
        c.state = Count::State::not_supported;
      else if (c.state != Count::State::counted || c.time_running == 0) {
        c.state = Count::State::not_counted;
        // A group that never ran (a weak group's members, when they fell back to counting alone, are
        // no group).
        const auto& event = opened.set.events[e];
        const bool alone = opened.notes[e] && opened.notes[e]->kind == Note::Kind::weak_group_alone;
        if (c.time_enabled > 0 && c.time_running == 0 && !alone &&
            opened.set.groups[event.group].members.size() > 1)
          c.notes.push_back({.kind = Note::Kind::group_never_ran});
      }
    }
    out = nullptr;
  }

  void index_places() {
    for (const auto& inst : opened.instances) places.push_back({inst.cpu, inst.thread});
    std::sort(places.begin(), places.end());
    places.erase(std::unique(places.begin(), places.end()), places.end());
    at_place.resize(places.size());
    here.assign(places.size(), std::vector<char>(opened.set.events.size(), 0));
    for (std::size_t i = 0; i < opened.instances.size(); ++i) {
      const auto& inst = opened.instances[i];
      auto p = static_cast<std::size_t>(
          std::lower_bound(places.begin(), places.end(), Place{inst.cpu, inst.thread}) - places.begin());
      at_place[p].push_back(i);
      for (std::size_t e : inst.events) here[p][e] = 1;
    }
  }

  // One group ioctl on every instance; a failure is kept for read() to note, never thrown.
  void group_ioctl(std::size_t op) {
    for (auto& inst : opened.instances)
      inst.ioctl_errors[op] = -retry_eintr(
          [&] { return sys->ioctl(inst.fds.front().get(), group_ioctls[op], PERF_IOC_FLAG_GROUP); });
  }
};

Counters::Counters(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Counters::Counters(Counters&&) noexcept = default;
Counters& Counters::operator=(Counters&&) noexcept = default;
Counters::~Counters() = default;

Counters Counters::open(const EventSet& set, const Target& target, const OpenOptions& options,
                        Syscalls& sys) {
  auto impl = std::make_unique<Impl>();
  impl->sys = &sys;
  bool on_exec = target.enable_on_exec;
  impl->opened = open_set(set, target, options, sys, [on_exec](Attr& a, bool leader, std::size_t) {
    prepare_for_counting(a, leader, on_exec);
  });
  const auto& notes = impl->opened.notes;
  impl->open_notes = std::any_of(notes.begin(), notes.end(), [](const auto& n) { return n.has_value(); });
  impl->index_places();
  return Counters(std::move(impl));
}

void Counters::enable() { impl_->group_ioctl(0); }
void Counters::disable() { impl_->group_ioctl(1); }
void Counters::reset() { impl_->group_ioctl(2); }

std::vector<Count> Counters::read() {
  std::vector<Count> out;
  read(out);
  return out;
}

void Counters::read(std::vector<Count>& out) {
  auto& I = *impl_;
  I.begin_read(out);
  for (auto& inst : I.opened.instances) {
    I.note_ioctl_faults(inst);
    if (!I.read_user_pages(inst)) I.read_group(inst);
  }
  I.finish_read();
}

const std::vector<Place>& Counters::places() const { return impl_->places; }

void Counters::read_places(std::vector<PlaceCounts>& out) {
  auto& I = *impl_;
  out.resize(I.places.size());
  for (std::size_t p = 0; p < I.places.size(); ++p) {
    PlaceCounts& pc = out[p];
    pc.place = I.places[p];
    pc.here = I.here[p];
    I.begin_read(pc.counts);
    for (std::size_t i : I.at_place[p]) {
      const auto& inst = I.opened.instances[i];
      I.note_ioctl_faults(inst);
      if (!I.read_user_pages(inst)) I.read_group(inst);
    }
    I.finish_read();
    for (std::size_t e = 0; e < pc.counts.size(); ++e)
      if (!pc.here[e]) {
        Count& c = pc.counts[e];
        c.state = Count::State::not_supported;
        c.notes.clear();
      }
  }
}

const EventSet& Counters::events() const { return impl_->opened.set; }
const std::vector<std::optional<Failure>>& Counters::failures() const { return impl_->opened.failures; }
bool Counters::opened(std::size_t event) const {
  return event < impl_->opened.opened.size() && impl_->opened.opened[event];
}

std::size_t Counters::open_fds() const {
  std::size_t n = 0;
  for (const auto& inst : impl_->opened.instances) n += inst.fds.size();
  return n;
}

}  // namespace perfspec::runtime
