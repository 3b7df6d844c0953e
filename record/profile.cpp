// SPDX-License-Identifier: MIT
// A recording's samples gathered into distinct stacks, as perf report's session resolves them
// (tools/perf/util/machine.c thread__resolve_callchain, hist.c): frames interned, stacks keyed by
// event, thread, CPU and frames.
#include <cstring>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <tsl/robin_map.h>

#include "perfspec/error.hpp"
#include "perfspec/profile.hpp"
#include "perfspec/unwind.hpp"
#include "spec/hash.hpp"

namespace perfspec::record {

std::string_view Frame::short_dso() const {
  if (dso.empty() || dso.front() == '[') return dso;
  auto slash = dso.rfind('/');
  return slash == std::string_view::npos ? dso : dso.substr(slash + 1);
}

namespace {

struct BytesHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return spec::hash_bytes(s); }
};
struct BytesEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};
using Index = tsl::robin_map<std::string, std::uint32_t, BytesHash, BytesEqual>;

// The key's bytes appended: what a stack or a frame is told apart by.
template <typename T> void put(std::string& key, T value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  key.append(bytes, sizeof value);
}

char level_of(std::uint16_t cpumode) {
  switch (cpumode) {
    case misc_kernel: return 'k';
    case misc_guest_kernel: return 'g';
    case misc_guest_user: return 'u';
    case misc_hypervisor: return 'H';
    default: return '.';
  }
}

}  // namespace

struct Profile::Impl {
  explicit Impl(const ProfileOptions& o) : options(o), symbols(o.symbols), unwinder(symbols) {}

  ProfileOptions options;
  Symbolizer symbols;
  Unwinder unwinder;  // --call-graph dwarf samples' user frames
  std::vector<std::uint64_t> unwound;
  std::string arch;       // the recording's (HEADER_ARCH), for the unwinder
  Threads threads{true};  // perf report keeps exited threads: a sample after its EXIT keeps its name
  std::vector<Event> events;
  std::deque<Frame> frames;  // stable: frames point into the symbolizer, which lives as long
  std::vector<std::string> comms;
  Index frame_index, stack_index, comm_index;
  std::uint64_t lost = 0;          // LOST_SAMPLES
  std::uint64_t lost_records = 0;  // LOST
  Reads reads;
  std::vector<std::size_t> read_counter;  // by event: its index in reads.counters, npos before its first
  std::unordered_map<std::uint64_t, std::size_t> read_thread;  // by pid << 32 | tid: in reads.threads
  bool pipe = false;
  std::unordered_map<std::int32_t, std::uint32_t> last_name;  // by tid: a comms() index
  std::string key, frame_key;                                 // a stack's and a frame's key, reused
  std::vector<std::uint32_t> current;                         // a stack's frames, reused

  // Frames found, by what locating them depends on: a profile's addresses come again in sample after
  // sample, and where one lies stays the same while no mapping changes (Symbolizer::generation).
  struct Found {
    std::uint64_t generation = 0, ip = 0;
    std::uint32_t pid = 0, frame = 0;
    std::uint16_t cpumode = 0;
  };
  static constexpr std::size_t found_size = 4096;
  std::vector<Found> found = std::vector<Found>(found_size);
  std::string last_comm;  // the name comm() was last asked for, and its index
  std::uint32_t last_comm_index = ~0u;

  std::uint32_t frame(std::uint32_t pid, std::uint64_t ip, std::uint16_t cpumode);
  std::uint32_t interned(std::uint32_t pid, std::uint64_t ip, std::uint16_t cpumode);
  std::uint32_t interned(const Location& where, std::uint64_t ip, std::uint16_t cpumode);
  std::uint32_t comm(std::string_view name);
  void sample(const PerfData& file, const Record& r, const Sample& s);
  void read(const PerfData& file, const Record& r, const Read& rd);
  void callchain(const Sample& s);
};

std::uint32_t Profile::Impl::frame(std::uint32_t pid, std::uint64_t ip, std::uint16_t cpumode) {
  const std::uint64_t generation = symbols.generation();
  Found& c = found[(ip ^ (ip >> 12) ^ (std::uint64_t{pid} << 7) ^ cpumode) % found_size];
  if (c.generation == generation && c.ip == ip && c.pid == pid && c.cpumode == cpumode) return c.frame;
  c = {generation, ip, pid, interned(pid, ip, cpumode), cpumode};
  return c.frame;
}

std::uint32_t Profile::Impl::interned(std::uint32_t pid, std::uint64_t ip, std::uint16_t cpumode) {
  return interned(symbols.locate(pid, ip, cpumode), ip, cpumode);
}

// A frame by its address, level, binary and symbol (several functions inlined at one address are as
// many frames)
std::uint32_t Profile::Impl::interned(const Location& where, std::uint64_t ip, std::uint16_t cpumode) {
  Frame f{where.dso, where.symbol, where.dso.empty() ? ip : where.dso_address, ip, level_of(cpumode)};
  frame_key.clear();
  put(frame_key, f.address), put(frame_key, f.level), put(frame_key, f.symbol);
  frame_key.append(f.dso);
  auto it = frame_index.find(std::string_view(frame_key));
  if (it != frame_index.end()) return it->second;
  frames.push_back(f);
  return frame_index.emplace(frame_key, static_cast<std::uint32_t>(frames.size() - 1)).first->second;
}

std::uint32_t Profile::Impl::comm(std::string_view name) {
  if (last_comm_index != ~0u && name == last_comm) return last_comm_index;  // samples come in runs
  last_comm = name;
  auto it = comm_index.find(name);
  if (it != comm_index.end()) return last_comm_index = it->second;
  comms.emplace_back(name);
  return last_comm_index = comm_index.emplace(std::string(name), static_cast<std::uint32_t>(comms.size() - 1))
                               .first->second;
}

// The callchain's frames (perf's reading: for_each_frame), at most max_stack of them; none of a chain
// perf cannot read ("discard all": the sample counts with its own address alone).
void Profile::Impl::callchain(const Sample& s) {
  Chain read = for_each_frame(s.callchain, [&](std::uint64_t ip, std::uint16_t mode) {
    if (current.size() >= options.max_stack) return false;
    current.push_back(frame(s.pid, ip, mode));
    return true;
  });
  if (read == Chain::corrupt) current.clear();
}

void Profile::Impl::sample(const PerfData& file, const Record& r, const Sample& s) {
  if (options.keep && !options.keep(r, s)) return;
  if (r.attr >= events.size()) events.resize(file.events().size());
  if (r.attr >= events.size()) return;  // a sample of no attr the file names
  Event& event = events[r.attr];
  if (s.has(sample_read))  // perf report shows each value read as a sample of its event: not yet here
    throw Error(
        ErrorKind::usage,
        fmt::format("the samples of '{}' read their group's counts (PERF_SAMPLE_READ, perf record's :S): "
                    "a profile of them is not supported yet",
                    file.event_name(r.attr)));
  current.clear();
  if (options.callchains && s.has(sample_callchain)) callchain(s);
  std::uint32_t self = current.empty() ? 0 : current.front();
  if (options.callchains && unwindable(s.type)) {  // perf's order: the kernel's frames, then these
    unwound.clear();
    unwinder.unwind(s, arch, options.max_stack, unwound);
    for (std::uint64_t ip : unwound) {
      const bool first = current.empty();
      if (first) self = frame(s.pid, ip, misc_user);
      static const std::vector<Symbolizer::InlinedLocation> none;
      const auto& chain = options.inline_frames ? symbols.inlined(s.pid, ip, misc_user) : none;
      if (chain.empty()) {
        current.push_back(first ? self : frame(s.pid, ip, misc_user));
        continue;
      }
      for (const auto& in : chain) current.push_back(interned(in.where, ip, misc_user));
    }
  }
  if (current.empty()) current.push_back(self = frame(s.pid, s.ip, r.misc & misc_cpumode_mask));
  auto pid = static_cast<std::int32_t>(s.pid), tid = static_cast<std::int32_t>(s.tid);
  std::uint32_t name = comm(threads.name(pid, tid));
  last_name.try_emplace(tid, name);
  std::uint32_t cpu = s.has(sample_cpu) ? s.cpu : 0;
  key.clear();
  put(key, r.attr), put(key, name), put(key, pid), put(key, tid), put(key, cpu);
  key.append(reinterpret_cast<const char*>(current.data()), current.size() * sizeof current[0]);
  auto it = stack_index.find(std::string_view(key));
  if (it == stack_index.end()) {
    it = stack_index.emplace(key, static_cast<std::uint32_t>(event.stacks.size())).first;
    event.stacks.push_back(Stack{name, pid, tid, cpu, current, self, 0, 0});
  }
  Stack& stack = event.stacks[it->second];
  // perf's period: the sample's, or the attr's fixed one without PERF_SAMPLE_PERIOD
  std::uint64_t period = s.has(sample_period) ? s.period : file.events()[r.attr].attr.sample_period;
  ++stack.samples, stack.period += period;
  ++event.samples, event.period += period;
}

Profile Profile::read(PerfData& file, const ProfileOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  Impl& p = *impl;
  p.pipe = file.pipe();
  p.arch = file.feature_string(Feature::arch).value_or("");
  if (file.has_feature(Feature::build_id)) p.symbols.read_build_ids(file.feature(Feature::build_id));
  for_each_in_time_order(file, [&](const Record& r) {
    if (auto* s = r.get<Sample>()) {
      p.sample(file, r, *s);
      return;
    }
    if (auto* c = r.get<Comm>())  // the name a thread's samples are counted under at the end (perf's thread)
      if (auto it = p.last_name.find(static_cast<std::int32_t>(c->tid)); it != p.last_name.end())
        it->second = p.comm(c->comm);
    // perf report's "Total Lost Samples" is the LOST_SAMPLES records' (perf record writes one per event
    // at the end, from the event's PERF_FORMAT_LOST count); the kernel's LOST records count the same
    // losses as they happen, and perf only warns of them ("lost N chunks")
    if (auto* l = r.get<Lost>()) p.lost_records += l->lost;
    if (auto* l = r.get<LostSamples>()) p.lost += l->lost;
    if (auto* rd = r.get<Read>()) p.read(file, r, *rd);
    p.symbols.apply(r);
    p.threads.apply(r);
  });
  p.events.resize(file.events().size());
  for (std::size_t i = 0; i < p.events.size(); ++i) {
    const Attr& attr = file.events()[i].attr;
    p.events[i].name = file.events()[i].name;
    p.events[i].callchains = (attr.sample_type & sample_callchain) != 0;
    p.events[i].cpu = (attr.sample_type & sample_cpu) != 0;
  }
  return Profile(std::move(impl));
}

// perf report's process_read_event: the first value of the READ (its event's own) added to the
// thread's count of the event the record names (the only event, in a file of one without ids)
void Profile::Impl::read(const PerfData& file, const Record& r, const Read& rd) {
  std::size_t event = r.attr;
  if (event >= file.events().size()) {
    if (file.events().size() != 1) return;
    event = 0;
  }
  if (read_counter.size() < file.events().size()) read_counter.resize(file.events().size(), Record::npos);
  std::size_t& counter = read_counter[event];
  if (counter == Record::npos) {
    counter = reads.counters.size();
    reads.counters.push_back(file.event_name(event));
  }
  auto [at, added] = read_thread.try_emplace(std::uint64_t{rd.pid} << 32 | rd.tid, reads.threads.size());
  if (added)
    reads.threads.push_back(
        {.pid = static_cast<std::int32_t>(rd.pid), .tid = static_cast<std::int32_t>(rd.tid), .values = {}});
  ThreadCounts& thread = reads.threads[at->second];
  if (thread.values.size() <= counter) thread.values.resize(counter + 1);
  if (rd.values.size() > 0) thread.values[counter] += rd.values[0].value;
}

Profile::Profile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Profile::Profile(Profile&&) noexcept = default;
Profile& Profile::operator=(Profile&&) noexcept = default;
Profile::~Profile() = default;

const std::vector<Profile::Event>& Profile::events() const { return impl_->events; }
const Frame& Profile::frame(std::uint32_t index) const { return impl_->frames.at(index); }
std::size_t Profile::frames() const { return impl_->frames.size(); }
std::string_view Profile::comm(std::uint32_t index) const { return impl_->comms.at(index); }
std::string_view Profile::thread_name(std::int32_t tid) const {
  auto it = impl_->last_name.find(tid);
  return it == impl_->last_name.end() ? std::string_view() : std::string_view(impl_->comms[it->second]);
}
bool Profile::pipe() const { return impl_->pipe; }
std::uint64_t Profile::lost() const { return impl_->lost; }
std::uint64_t Profile::lost_by_kernel() const { return impl_->lost_records; }
const Profile::Reads& Profile::reads() const { return impl_->reads; }
std::string Profile::build_id(std::string_view dso) const { return impl_->symbols.recorded_build_id(dso); }
const std::vector<std::string>& Profile::problems() const { return impl_->symbols.problems(); }

}  // namespace perfspec::record
