// SPDX-License-Identifier: MIT
// perf trace's lines (perf 6.12's builtin-trace.c: trace__sys_enter, trace__sys_exit,
// trace__event_handler, trace__pgfault): a thread's system call is printed when it returns, with the
// time it entered and how long it took; an entry another event interrupts is printed as it stands
// ("... ") and its return later as "... [continued]".
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "perfspec/trace.hpp"
#include "print/trace_args.hpp"
#include "print/trace_state.hpp"

namespace perfspec {

using trace_detail::ThreadTrace;

struct SyscallTrace::Impl {
  std::vector<TraceEvent> events;
  TraceOptions options;
  TraceHost host;
  std::function<void(std::string_view)> out;
  trace_detail::ArgContext args;
  std::unordered_map<int, std::string> comms;   // tid -> name, from COMM and FORK records and the host
  std::map<int, ThreadTrace> threads;           // by tid: those perf's handlers have seen
  std::unordered_map<long, std::string> names;  // system call names, by number
  int current = -1;                             // the thread of the last sys_enter
  std::uint64_t base_time = 0, all_events = 0, printed = 0;
  std::vector<std::uint64_t> printed_per_event;
  std::string text;
  bool stop = false;
  bool syscalls_traced = false;  // tracepoint lines then have an empty duration column, as perf's

  Impl(std::vector<TraceEvent> e, TraceOptions o, TraceHost h, std::function<void(std::string_view)> w)
      : events(std::move(e)),
        options(o),
        host(std::move(h)),
        out(std::move(w)),
        args(host, options.fd_paths),
        printed_per_event(events.size(), 0) {
    args.comm = [this](int tid, bool ask_host) { return comm(tid, ask_host); };
    for (const auto& event : events) syscalls_traced |= event.kind == TraceEvent::Kind::sys_enter;
  }

  std::string comm(int tid, bool ask_host) {
    if (auto it = comms.find(tid); it != comms.end()) return it->second;
    if (ask_host && host.comm)
      if (auto c = host.comm(tid)) return comms[tid] = *c;
    return {};
  }
  // perf names a thread it has no name for ":TID".
  std::string shown_comm(int tid) {
    std::string c = comm(tid, true);
    return c.empty() ? fmt::format(":{}", tid) : c;
  }
  const std::string& syscall_name(long nr) {
    auto it = names.find(nr);
    if (it != names.end()) return it->second;
    std::optional<std::string> n = host.syscall_name ? host.syscall_name(nr) : spec::syscall_name(nr);
    return names[nr] = n ? *n : fmt::format("syscall_{}", nr);
  }

  void head(int tid, std::uint64_t duration, bool calculated, std::uint64_t tstamp) {
    if (tstamp > 0)
      text += fmt::format("{:10.3f} ", static_cast<double>(tstamp - base_time) / 1e6);
    else
      text += "         ? ";
    text += calculated ? fmt::format("({:6.3f} ms): ", static_cast<double>(duration) / 1e6) : "(         ): ";
    comm_tid(tid);
  }
  void comm_tid(int tid) {
    if (!options.multiple_threads) return;
    if (options.show_comm) text += fmt::format("{:.14}/", shown_comm(tid));
    text += fmt::format("{} ", tid);
  }
  void count_printed() {
    ++printed;
    if (options.max_events && printed >= options.max_events) stop = true;
  }

  void interrupted_entry() {
    if (options.failure_only || current < 0) return;
    ThreadTrace& t = threads[current];
    if (!t.entry_pending) return;
    head(current, 0, false, t.entry_time);
    std::size_t len = t.entry.size() + 1;
    text += t.entry + ")";
    if (len + 4 < options.args_alignment) text.append(options.args_alignment - 4 - len, ' ');
    text += " ...\n";
    t.entry_pending = false;
    count_printed();
  }

  void sys_enter(const record::Sample& s, const TraceEvent& e);
  void sys_exit(const record::Sample& s, const TraceEvent& e);
  void return_value(long nr, long ret);
  void tracepoint(const record::Sample& s, std::size_t index);
  void fault(const record::Sample& s, const TraceEvent& e, std::uint16_t misc);
  void callchain(const record::Sample& s);
};

namespace {

// raw_syscalls' fields: `id` and `args` (sys_enter) or `ret` (sys_exit).
struct RawSyscall {
  long id = -1, ret = 0;
  std::vector<std::uint64_t> args;
};

RawSyscall raw_syscall(const TraceEvent& e, std::span<const std::byte> raw) {
  RawSyscall r;
  if (!e.format) return r;
  for (auto& field : e.format->decode(raw)) {
    if (field.name == "id") {
      if (auto* i = std::get_if<std::int64_t>(&field.value)) r.id = static_cast<long>(*i);
    } else if (field.name == "ret") {
      if (auto* i = std::get_if<std::int64_t>(&field.value)) r.ret = static_cast<long>(*i);
    } else if (field.name == "args") {
      if (auto* v = std::get_if<std::vector<std::uint64_t>>(&field.value)) r.args = *v;
    }
  }
  return r;
}

bool is_exit(std::string_view name) { return name == "exit" || name == "exit_group"; }

}  // namespace

void SyscallTrace::Impl::sys_enter(const record::Sample& s, const TraceEvent& e) {
  RawSyscall r = raw_syscall(e, s.raw);
  if (r.id < 0) return;
  int tid = static_cast<int>(s.tid);
  ThreadTrace& t = threads[tid];
  ++t.events;
  if (!(options.min_duration_ms > 0 || options.summary_only)) interrupted_entry();
  const std::string& name = syscall_name(r.id);
  const record::Tracepoint* format = host.enter_format ? host.enter_format(name) : nullptr;
  t.entry_time = s.time;
  t.entry = name + "(" + trace_detail::syscall_args(name, format, r.args, static_cast<int>(s.pid), args);
  if (is_exit(name)) {
    if (!(options.min_duration_ms > 0 || options.summary_only || options.failure_only)) {
      head(tid, 0, false, t.entry_time);
      std::size_t len = t.entry.size() + 1;
      text += t.entry + ")";
      std::size_t pad = options.args_alignment > len ? options.args_alignment - len : 0;
      text += fmt::format("{:>{}}= ?\n", " ", pad);
    }
  } else {
    t.entry_pending = true;
  }
  current = tid;
}

void SyscallTrace::Impl::sys_exit(const record::Sample& s, const TraceEvent& e) {
  RawSyscall r = raw_syscall(e, s.raw);
  if (r.id < 0) return;
  int tid = static_cast<int>(s.tid);
  ThreadTrace& t = threads[tid];
  ++t.events;
  if (options.summary) {
    auto& st = t.stats[r.id];
    st.add(t.entry_time && s.time > t.entry_time ? s.time - t.entry_time : 0);
    if (r.ret < 0) {
      ++st.failures;
      if (options.errno_summary) ++st.errnos[static_cast<int>(-r.ret)];
    }
  }
  std::uint64_t duration = 0;
  bool calculated = false;
  auto finish = [&] { t.entry_pending = false; };
  if (t.entry_time) {
    duration = s.time - t.entry_time;
    if (options.min_duration_ms > 0 && static_cast<double>(duration) < options.min_duration_ms * 1e6)
      return finish();
    calculated = true;
  } else if (options.min_duration_ms > 0) {
    return finish();
  }
  if (options.summary_only || (r.ret >= 0 && options.failure_only)) return finish();
  head(tid, duration, calculated, t.entry_time);
  const std::string& name = syscall_name(r.id);
  std::size_t len;
  if (t.entry_pending) {
    text += t.entry;
    len = t.entry.size();
  } else {
    std::string cont = fmt::format(" ... [continued]: {}()", name);
    text += cont;
    len = cont.size();
  }
  ++len;  // the closing ')'
  std::size_t pad = options.args_alignment > len ? options.args_alignment - len : 0;
  text += fmt::format("){:>{}}= ", " ", pad);
  return_value(r.id, r.ret);
  text += "\n";
  count_printed();
  callchain(s);
  finish();
}

// Each frame under the line, as perf's sample__fprintf_callchain with trace's options: the symbol, else
// the address in its binary in brackets, and the binary (the user frames only for system calls: perf
// trace leaves the kernel's out of their chains).
void SyscallTrace::Impl::callchain(const record::Sample& s) {
  if (!s.has(record::sample_callchain)) return;
  std::vector<std::pair<std::uint64_t, std::uint16_t>> frames;
  record::for_each_frame(s.callchain, [&](std::uint64_t ip, std::uint16_t mode) {
    frames.emplace_back(ip, mode);
    return true;
  });
  if (host.user_frames) {
    std::vector<std::uint64_t> user;
    host.user_frames(s, user);
    for (std::uint64_t ip : user) frames.emplace_back(ip, record::misc_user);
  }
  if (frames.size() > options.max_stack) frames.resize(options.max_stack);
  for (auto [ip, mode] : frames) {
    record::Location where;
    if (host.locate) where = host.locate(s.pid, ip, mode);
    text.append(39, ' ');
    text +=
        where.symbol ? where.symbol->name : fmt::format("[{:x}]", where.dso.empty() ? 0 : where.dso_address);
    text += fmt::format(" ({})\n", where.dso.empty() ? "[unknown]" : where.dso);
  }
}

void SyscallTrace::Impl::return_value(long nr, long ret) {
  const std::string& name = syscall_name(nr);
  if (ret < 0) {
    int error = static_cast<int>(-ret);
    text += fmt::format("-1 {} ({})", trace_detail::errno_name(error), std::strerror(error));
    return;
  }
  switch (trace_detail::return_style(name)) {
    case trace_detail::ReturnStyle::timeout:
      text += ret == 0 ? "0 (Timeout)" : fmt::format("{}", ret);
      return;
    case trace_detail::ReturnStyle::hex: text += ret ? fmt::format("{:#x}", ret) : "0"; return;
    case trace_detail::ReturnStyle::pid: {
      text += fmt::format("{}", ret);
      if (std::string c = comm(static_cast<int>(ret), false); !c.empty()) text += fmt::format(" ({})", c);
      return;
    }
    case trace_detail::ReturnStyle::decimal: text += fmt::format("{}", ret); return;
  }
}

void SyscallTrace::Impl::tracepoint(const record::Sample& s, std::size_t index) {
  const TraceEvent& e = events[index];
  if (e.max_events && printed_per_event[index] >= e.max_events) return;
  interrupted_entry();
  text +=
      s.time > 0 ? fmt::format("{:10.3f} ", static_cast<double>(s.time - base_time) / 1e6) : "         ? ";
  if (syscalls_traced) text += "(         ): ";
  comm_tid(static_cast<int>(s.tid));
  text += e.name + "(";
  if (e.format) text += trace_detail::tracepoint_fields(*e.format, s.raw, static_cast<int>(s.pid), args);
  text += ")\n";
  count_printed();
  callchain(s);
  if (e.max_events && ++printed_per_event[index] >= e.max_events) {
    bool all_done = true;
    for (std::size_t i = 0; i < events.size(); ++i)
      all_done &= events[i].kind == TraceEvent::Kind::tracepoint && events[i].max_events &&
                  printed_per_event[i] >= events[i].max_events;
    if (all_done) stop = true;
  }
}

void SyscallTrace::Impl::fault(const record::Sample& s, const TraceEvent& e, std::uint16_t misc) {
  int tid = static_cast<int>(s.tid);
  ThreadTrace& t = threads[tid];
  bool major = e.kind == TraceEvent::Kind::major_fault;
  ++t.events;
  ++(major ? t.major_faults : t.minor_faults);
  if (options.summary_only) return;
  head(tid, 0, true, s.time);
  // perf's print_location: the instruction by its symbol (else its address), the data by its binary
  // and address in it (else the address); 'd' when a mapping holds the data, '?' when none does, and
  // the level of the sample: '.' user space, 'k' the kernel.
  record::Location ip, data;
  if (host.locate) {
    ip = host.locate(s.pid, s.ip, misc);
    data = host.locate(s.pid, s.addr, misc);
  }
  char level = record::cpumode_letter(misc);
  std::string at = ip.symbol ? fmt::format("{}+{:#x}", ip.symbol->name, ip.symbol_offset())
                             : fmt::format("{:#x}", ip.dso.empty() ? s.ip : ip.dso_address);
  std::string to =
      data.dso.empty() ? fmt::format("{:#x}", s.addr) : fmt::format("{}@{:#x}", data.dso, data.dso_address);
  text += fmt::format("{}fault [{}] => {} ({}{})\n", major ? "maj" : "min", at, to,
                      data.dso.empty() ? '?' : 'd', level == 'u' ? '.' : level);
  count_printed();
  callchain(s);
}

SyscallTrace::SyscallTrace(std::vector<TraceEvent> events, TraceOptions options, TraceHost host,
                           std::function<void(std::string_view)> out)
    : impl_(std::make_unique<Impl>(std::move(events), options, std::move(host), std::move(out))) {}
SyscallTrace::SyscallTrace(SyscallTrace&&) noexcept = default;
SyscallTrace& SyscallTrace::operator=(SyscallTrace&&) noexcept = default;
SyscallTrace::~SyscallTrace() = default;

void SyscallTrace::add(const record::Record& record) {
  Impl& m = *impl_;
  ++m.all_events;
  if (const auto* c = record.get<record::Comm>()) {
    m.comms[static_cast<int>(c->tid)] = std::string(c->comm);
    return;
  }
  if (const auto* t = record.get<record::Task>(); t && record.kind() == record::Type::fork) {
    // The child has its parent's name (asked of the host now, while both are likely still there).
    int child = static_cast<int>(t->tid);
    if (!m.comms.count(child)) {
      std::string name = m.comm(static_cast<int>(t->ptid), true);
      if (name.empty()) name = m.comm(child, true);
      if (!name.empty()) m.comms[child] = name;
    }
    return;
  }
  const auto* s = record.get<record::Sample>();
  if (!s || record.attr >= m.events.size() || m.stop) return;
  if (m.base_time == 0 && s->has(record::sample_time)) m.base_time = s->time;
  const TraceEvent& e = m.events[record.attr];
  switch (e.kind) {
    case TraceEvent::Kind::sys_enter: m.sys_enter(*s, e); break;
    case TraceEvent::Kind::sys_exit: m.sys_exit(*s, e); break;
    case TraceEvent::Kind::tracepoint: m.tracepoint(*s, record.attr); break;
    case TraceEvent::Kind::major_fault:
    case TraceEvent::Kind::minor_fault: m.fault(*s, e, record.misc); break;
  }
  if (!m.text.empty()) {
    m.out(m.text);
    m.text.clear();
  }
}

void SyscallTrace::finish() {
  Impl& m = *impl_;
  if (!m.options.summary) return;
  m.out(trace_detail::summary_text(
      m.threads, m.all_events, [&m](int tid) { return m.shown_comm(tid); },
      [&m](long nr) { return m.syscall_name(nr); }, m.options.errno_summary));
}

bool SyscallTrace::done() const { return impl_->stop; }
std::uint64_t SyscallTrace::printed() const { return impl_->printed; }

}  // namespace perfspec
