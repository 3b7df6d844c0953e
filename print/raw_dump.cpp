// SPDX-License-Identifier: MIT
// perf's -D (--dump-raw-trace), record by record: util/session.c's dump_event and dump_sample, and the
// text each record's handler prints in dump mode, for perf script and perf report.
#include "print/raw_dump.hpp"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>

#include "perfspec/header_info.hpp"
#include "perfspec/record.hpp"
#include "print/script_fields.hpp"
#include "print/script_out.hpp"
#include "print/script_session.hpp"

namespace perfspec::raw_dump {

using namespace perfspec::record;
using script::CHex;

namespace {

constexpr std::uint64_t branch_call_stack = 1U << 11;  // PERF_SAMPLE_BRANCH_CALL_STACK
constexpr std::uint64_t branch_counters = 1U << 19;    // PERF_SAMPLE_BRANCH_COUNTERS (Linux 6.8)
constexpr std::string_view unhandled = ": unhandled!\n";

// A field of a record perf's own tools lay out (their bodies are not decoded): 0 past its end, as a
// record too short for its type is perf's to reject, not a reason to read past it here.
template <typename T> T field(const Record& r, std::size_t at) {
  T v{};
  if (at + sizeof(T) <= r.bytes.size()) std::memcpy(&v, r.bytes.data() + at, sizeof(T));
  return v;
}

// The bytes as perf's hex printer (trace_event_raw) shows them: 16 a line, each line as long as a full
// one.
void hex_dump(fmt::memory_buffer& out, std::span<const std::byte> bytes) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, ".\n. ... raw event: size {} bytes\n", bytes.size());
  for (std::size_t line = 0; line < bytes.size(); line += 16) {
    const std::size_t n = std::min<std::size_t>(16, bytes.size() - line);
    fmt::format_to(it, ".  {:04x}: ", line);
    for (std::size_t i = 0; i < 16; ++i)
      if (i < n)
        fmt::format_to(it, " {:02x}", std::to_integer<unsigned>(bytes[line + i]));
      else
        out.append(std::string_view("   "));
    out.append(std::string_view("  "));
    for (std::size_t i = 0; i < 16; ++i) {
      const auto c = i < n ? std::to_integer<unsigned char>(bytes[line + i]) : ' ';
      out.push_back(c >= 0x20 && c <= 0x7e ? static_cast<char>(c) : '.');
    }
    out.push_back('\n');
  }
  out.push_back('\n');
}

// A CPU map record's CPUs (perf_record_cpu_map_data at `at`), in its order: a list of u16 (0xffff the
// "any CPU" -1), a bitmap of 32- or 64-bit words, or a range after an optional -1.
std::vector<int> cpu_map_cpus(const Record& r, std::size_t at) {
  std::vector<int> cpus;
  const auto type = field<std::uint16_t>(r, at);
  if (type == 0) {
    const auto nr = field<std::uint16_t>(r, at + 2);
    for (std::size_t i = 0; i < nr && at + 4 + 2 * i + 2 <= r.bytes.size(); ++i) {
      const auto cpu = field<std::uint16_t>(r, at + 4 + 2 * i);
      cpus.push_back(cpu == 0xffff ? -1 : cpu);
    }
  } else if (type == 1) {
    const auto nr = field<std::uint16_t>(r, at + 2), long_size = field<std::uint16_t>(r, at + 4);
    const std::size_t words = long_size == 8 ? at + 10 : at + 6, bits = long_size == 8 ? 64 : 32;
    for (std::size_t w = 0; w < nr && words + (w + 1) * (bits / 8) <= r.bytes.size(); ++w) {
      const std::uint64_t v =
          bits == 64 ? field<std::uint64_t>(r, words + w * 8) : field<std::uint32_t>(r, words + w * 4);
      for (std::size_t b = 0; b < bits; ++b)
        if (v >> b & 1) cpus.push_back(static_cast<int>(w * bits + b));
    }
  } else if (type == 2) {
    if (field<std::uint8_t>(r, at + 2)) cpus.push_back(-1);
    const auto start = field<std::uint16_t>(r, at + 4), end = field<std::uint16_t>(r, at + 6);
    for (int cpu = start; cpu <= end; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

// perf's cpu_map__snprint: runs of consecutive CPUs as "a-b", the others alone, joined by commas.
std::string cpu_list(const std::vector<int>& cpus) {
  std::string s;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= cpus.size(); ++i) {
    if (i < cpus.size() && static_cast<long>(i - start) == cpus[i] - static_cast<long>(cpus[start])) continue;
    if (!s.empty()) s += ',';
    s += i - 1 == start ? fmt::format("{}", cpus[start]) : fmt::format("{}-{}", cpus[start], cpus[i - 1]);
    start = i;
  }
  return s;
}

// SWITCH and SWITCH_CPU_WIDE (perf_event__fprintf_switch)
void switch_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  if (auto* sw = r.get<Switch>()) {
    const std::string_view dir = !sw->out ? "IN         " : !sw->preempt ? "OUT        " : "OUT preempt";
    if (r.kind() == Type::switch_)
      fmt::format_to(it, " {}\n", dir);
    else
      fmt::format_to(it, " {}  {} pid/tid: {:>5}/{:<5}\n", dir, sw->out ? "next" : "prev",
                     static_cast<std::int32_t>(sw->next_prev_pid),
                     static_cast<std::int32_t>(sw->next_prev_tid));
  }
}

// perf_event__process_id_index's dump: each entry, and its machine pid and vcpu when the record has them
void id_index_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  const auto nr = field<std::uint64_t>(r, 8);
  const bool second = nr && (r.bytes.size() - 16) / nr >= 48;  // machine_pid, vcpu after the entries
  fmt::format_to(it, " nr: {}\n", nr);
  for (std::uint64_t i = 0; i < nr && 16 + (i + 1) * 32 <= r.bytes.size(); ++i) {
    const std::size_t e = 16 + i * 32;
    fmt::format_to(it, " ... id: {}  idx: {}  cpu: {}  tid: {}", field<std::uint64_t>(r, e),
                   field<std::uint64_t>(r, e + 8), field<std::int64_t>(r, e + 16),
                   field<std::int64_t>(r, e + 24));
    if (second) {
      const std::size_t e2 = 16 + nr * 32 + i * 16;
      fmt::format_to(it, "  machine_pid: {}  vcpu: {}", field<std::int64_t>(r, e2),
                     field<std::uint64_t>(r, e2 + 8));
    }
    out.push_back('\n');
  }
}

// perf_event__fprintf_event_update: by its type, the unit, scale, name or CPUs
void event_update_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "\n... id:    {}\n", field<std::uint64_t>(r, 16));
  const auto text = [&] {
    auto bytes = r.bytes.size() > 24 ? r.bytes.subspan(24) : std::span<const std::byte>{};
    std::string_view s(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return s.substr(0, s.find('\0'));
  };
  switch (field<std::uint64_t>(r, 8)) {
    case 0: fmt::format_to(it, "... unit:  {}\n", text()); break;
    case 1: fmt::format_to(it, "... scale: {:f}\n", field<double>(r, 24)); break;
    case 2: fmt::format_to(it, "... name:  {}\n", text()); break;  // (PerfData renamed the event)
    case 3: fmt::format_to(it, "... {}\n", cpu_list(cpu_map_cpus(r, 24))); break;
    default: out.append(std::string_view("... unknown type\n"));
  }
}

// TIME_CONV: the clock's conversion, and the newer fields when the record has them
void time_conv_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  if (auto* t = r.get<TimeConv>()) {
    fmt::format_to(it, "\n... Time Shift      {}\n... Time Muliplier  {}\n... Time Zero       {}\n",
                   t->time_shift, t->time_mult, t->time_zero);
    if (t->time_cycles)
      fmt::format_to(it,
                     "... Time Cycles     {}\n... Time Mask       {}\n... Cap Time Zero   {}\n"
                     "... Cap Time Short  {}\n",
                     *t->time_cycles, CHex{t->time_mask.value_or(0)}, int{t->cap_user_time_zero},
                     int{t->cap_user_time_short});
  }
}

// perf report's STAT_CONFIG, STAT and STAT_ROUND texts (perf_event__fprintf_stat*)
void stat_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  if (r.kind() == Type::stat_config) {
    std::uint64_t values[3] = {};  // aggr_mode, interval, scale by tag
    const auto nr = field<std::uint64_t>(r, 8);
    for (std::uint64_t i = 0; i < nr && 16 + (i + 1) * 16 <= r.bytes.size(); ++i)
      if (const auto tag = field<std::uint64_t>(r, 16 + i * 16); tag < 3)
        values[tag] = field<std::uint64_t>(r, 24 + i * 16);
    fmt::format_to(it, "\n... aggr_mode {}\n... scale     {}\n... interval  {}\n",
                   static_cast<std::int32_t>(values[0]), values[2] ? 1 : 0, values[1]);
  } else if (r.kind() == Type::stat) {
    fmt::format_to(it, "\n... id {}, cpu {}, thread {}\n... value {}, enabled {}, running {}\n",
                   field<std::uint64_t>(r, 8), field<std::int32_t>(r, 16), field<std::int32_t>(r, 20),
                   field<std::uint64_t>(r, 24), field<std::uint64_t>(r, 32), field<std::uint64_t>(r, 40));
  } else {
    fmt::format_to(it, "\n... time {}, type {}\n", field<std::uint64_t>(r, 16),
                   field<std::uint64_t>(r, 8) == 1 ? "FINAL" : "INTERVAL");
  }
}

// perf script's AUXTRACE_ERROR text (perf_event__fprintf_auxtrace_error)
void auxtrace_error_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  const auto type = field<std::uint32_t>(r, 8), fmt_ = field<std::uint32_t>(r, 28);
  const auto time = field<std::uint64_t>(r, 40);
  fmt::format_to(it, " {} error type {}", type == 1 ? "instruction trace" : "unknown AUX", type);
  if (fmt_ && time)
    fmt::format_to(it, " time {}.{:09}", time / 1000000000, time % 1000000000);
  else
    out.append(std::string_view(" time 0"));
  const std::size_t msg = fmt_ ? 48 : 40;
  if (fmt_ >= 2 && field<std::uint32_t>(r, 112))
    fmt::format_to(it, " machine_pid {} vcpu {}", field<std::int32_t>(r, 112), field<std::int32_t>(r, 116));
  auto bytes = r.bytes.size() > msg ? r.bytes.subspan(msg, std::min<std::size_t>(64, r.bytes.size() - msg))
                                    : std::span<const std::byte>{};
  std::string_view m(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  fmt::format_to(it, " cpu {} pid {} tid {} ip {} code {}: {}\n", field<std::int32_t>(r, 16),
                 field<std::int32_t>(r, 20), field<std::int32_t>(r, 24), CHex{field<std::uint64_t>(r, 32)},
                 field<std::uint32_t>(r, 12), m.substr(0, m.find('\0')));
}

}  // namespace

void Dumper::record(fmt::memory_buffer& out, const Record& r, const PerfData::Place& at) {
  auto it = std::back_inserter(out);
  if (r.kind() == Type::sample && r.attr == Record::npos)  // perf: evlist__parse_sample fails, EFAULT
    throw DecodeError(
        r.offset, fmt::format("the sample at offset {:#x} names an id no event of the file has", r.offset));
  if (r.type < counts_.size()) ++counts_[r.type], ++counts_[0];
  fmt::format_to(it, "\n{}@{} [{}]: event: {}\n", CHex{at.offset}, at.path, CHex{r.size}, r.type);
  hex_dump(out, r.bytes);
  const Sample* s = r.get<Sample>();
  prefix(out, r);
  const std::string_view name = type_name(r.type);
  fmt::format_to(it, "{} [{}]: PERF_RECORD_{}", CHex{at.offset}, CHex{r.size},
                 name.empty() ? "UNKNOWN" : name);
  if (s)
    sample(out, r, *s);
  else if (r.type < user_type_start)
    kernel_text(out, r);
  else
    user_text(out, r);
}

// The time and CPU perf's dump_event prints before the record's name: of every event's sample_type
// together, those the record carries (perf's defaults where its own event lacks one); perf's own records
// have a zeroed sample; without sample_id_all only samples have them.
void Dumper::prefix(fmt::memory_buffer& out, const Record& r) {
  // a pipe's ATTR record has added its event by now; perf reads the events before it
  const auto& all = file_.events();
  const std::span<const FileEvent> events(
      all.data(), all.size() - (file_.pipe() && r.kind() == Type::header_attr && !all.empty() ? 1 : 0));
  std::uint64_t types = 0;
  for (const FileEvent& e : events) types |= e.attr.sample_type;
  auto it = std::back_inserter(out);
  const bool sample = r.kind() == Type::sample;
  if (!sample && (events.empty() || !events.front().attr.sample_id_all)) {
    out.append(std::string_view("-1 -1 "));
    return;
  }
  const bool own = r.type >= user_type_start;
  if (types & sample_cpu)
    fmt::format_to(it, "{} ", own ? 0 : r.sample_id.has(sample_cpu) ? r.sample_id.cpu : ~std::uint32_t{0});
  if (types & sample_time)
    fmt::format_to(it, "{} ", own ? 0 : r.sample_id.has(sample_time) ? r.sample_id.time : ~std::uint64_t{0});
}

// dump_sample: the sample's fields its event asks for, one part after another.
void Dumper::sample(fmt::memory_buffer& out, const Record& r, const Sample& s) {
  auto it = std::back_inserter(out);
  const Attr& attr = file_.formats().attr(r.attr);
  const auto pid = s.has(sample_tid) ? static_cast<std::int32_t>(s.pid) : -1;
  const auto tid = s.has(sample_tid) ? static_cast<std::int32_t>(s.tid) : -1;
  fmt::format_to(it, "(IP, {:#x}): {}/{}: {} period: {} addr: {}\n", r.misc, pid, tid, CHex{s.ip},
                 s.has(sample_period) ? s.period : attr.sample_period, CHex{s.addr});
  const bool callstack = (attr.branch_sample_type & branch_call_stack) != 0;
  if (attr.sample_type & sample_callchain) {
    const auto& chain = s.callchain;
    std::size_t user = 0;
    while (user < chain.size() && chain[user] != context_user) ++user;
    if (callstack && user != chain.size() && s.branches.size()) {  // the user frames are in the LBR
      fmt::format_to(it, "... LBR call chain: nr:{}\n", user + 1 + s.branches.size() + 1);
      for (std::size_t i = 0; i <= user; ++i) fmt::format_to(it, "..... {:2}: {:016x}\n", i, chain[i]);
      fmt::format_to(it, "..... {:2}: {:016x}\n", user + 1, s.branches[0].to);
      for (std::size_t i = 0; i < s.branches.size(); ++i)
        fmt::format_to(it, "..... {:2}: {:016x}\n", i + user + 2, s.branches[i].from);
    }
    fmt::format_to(it, "... FP chain: nr:{}\n", chain.size());
    for (std::size_t i = 0; i < chain.size(); ++i) fmt::format_to(it, "..... {:2}: {:016x}\n", i, chain[i]);
  }
  if (attr.sample_type & sample_branch_stack) {
    const auto& b = s.branches;
    fmt::format_to(it, "... branch {}: nr:{}\n", callstack ? "callstack" : "stack", b.size() + callstack);
    for (std::size_t i = 0; i < b.size(); ++i) {
      const Branch e = b[i];
      if (callstack) {
        if (i == 0) fmt::format_to(it, "..... {:2}: {:016x}\n", 0, e.to);
        fmt::format_to(it, "..... {:2}: {:016x}\n", i + 1, e.from);
        continue;
      }
      fmt::format_to(it, "..... {:2}: {:016x} -> {:016x} {} cycles {}{}{}{} {:x} {} {}\n", i, e.from, e.to,
                     (e.flags >> 4) & 0xffff, (e.flags & 1) ? 'M' : ' ', (e.flags & 2) ? 'P' : ' ',
                     (e.flags & 8) ? 'A' : ' ', (e.flags & 4) ? 'T' : ' ', e.flags >> 33,
                     script_fields::branch_type_name((e.flags >> 20) & 15, (e.flags >> 26) & 15),
                     (e.flags >> 24 & 3) ? script_fields::branch_spec_name(e.flags >> 24 & 3) : "");
    }
  }
  if ((attr.sample_type & sample_branch_stack) && (attr.branch_sample_type & branch_counters)) {
    const auto [nr, width] = branch_counter_caps();
    fmt::format_to(it, "... branch stack counters: nr:{} (counter width: {} max counter nr:{})\n",
                   s.branches.size(), width, nr);
    for (std::size_t i = 0; i < s.branches.counters.size(); ++i)
      fmt::format_to(it, "..... {:2}: {:016x}\n", i, s.branches.counters[i]);
  }
  if (attr.sample_type & sample_regs_user) regs(out, "user", s.regs_user);
  if (attr.sample_type & sample_regs_intr) regs(out, "intr", s.regs_intr);
  if (attr.sample_type & sample_stack_user)
    fmt::format_to(it, "... ustack: size {}, offset {:#x}\n", s.stack_user.dyn_size, s.stack_user.offset);
  if (attr.sample_type & (sample_weight | sample_weight_struct)) {
    const script_fields::Weights w = script_fields::weights_of(s);
    fmt::format_to(it, "... weight: {}", w.weight);
    if (attr.sample_type & sample_weight_struct) fmt::format_to(it, ",{:#x},{:#x}", w.ins_lat, w.retire_lat);
    out.push_back('\n');
  }
  if (attr.sample_type & sample_data_src) fmt::format_to(it, " . data_src: 0x{:x}\n", s.data_src);
  if (attr.sample_type & sample_phys_addr) fmt::format_to(it, " .. phys_addr: 0x{:x}\n", s.phys_addr);
  if (attr.sample_type & sample_data_page_size)
    fmt::format_to(it, " .. data page size: {}\n", script_fields::page_size_name(s.data_page_size));
  if (attr.sample_type & sample_code_page_size)
    fmt::format_to(it, " .. code page size: {}\n", script_fields::page_size_name(s.code_page_size));
  if (attr.sample_type & sample_transaction) fmt::format_to(it, "... transaction: {:x}\n", s.transaction);
  if (attr.sample_type & sample_read) {
    const std::uint64_t format = attr.read_format;
    out.append(std::string_view("... sample_read:\n"));
    if (format & 1) fmt::format_to(it, "...... time enabled {:016x}\n", s.read.time_enabled);
    if (format & 2) fmt::format_to(it, "...... time running {:016x}\n", s.read.time_running);
    if (format & 8) fmt::format_to(it, ".... group nr {}\n", s.read.size());
    for (std::size_t i = 0; i < s.read.size(); ++i) {
      const ReadValue v = s.read[i];
      fmt::format_to(it, "..... id {:016x}, value {:016x}", v.id, v.value);
      if (format & 16) fmt::format_to(it, ", lost {}", v.lost);
      out.push_back('\n');
    }
  }
}

// regs__printf: the mask and ABI, then each register of the mask by name (the file's architecture's)
void Dumper::regs(fmt::memory_buffer& out, std::string_view kind, const Registers& regs) {
  if (!regs.abi) return;
  if (arch_.empty()) arch_ = script_fields::file_arch(file_);
  auto it = std::back_inserter(out);
  fmt::format_to(it, "... {} regs: mask {:#x} ABI {}\n", kind, regs.mask,
                 regs.abi == 1   ? "32-bit"
                 : regs.abi == 2 ? "64-bit"
                                 : "unknown");
  std::size_t i = 0;
  for (unsigned reg = 0; reg < 64 && i < regs.values.size(); ++reg)
    if (regs.mask >> reg & 1)
      fmt::format_to(it, ".... {:<5} 0x{:016x}\n", script_fields::register_name(arch_, reg),
                     regs.values[i++]);
}

// perf_env__find_br_cntr_info: the CPU PMU's branch_counter_nr and branch_counter_width capabilities as
// the header records them (HEADER_CPU_PMU_CAPS, else the first PMU of HEADER_PMU_CAPS); 0 when absent.
std::pair<unsigned, unsigned> Dumper::branch_counter_caps() {
  if (!branch_caps_) {
    const HeaderInfo info = read_header_info(file_);
    std::vector<std::string> caps;
    if (info.cpu_pmu_caps)
      caps = *info.cpu_pmu_caps;
    else if (info.pmu_caps && !info.pmu_caps->empty())
      caps = info.pmu_caps->front().caps;
    auto value = [&](std::string_view key) {
      for (const std::string& c : caps)
        if (c.size() > key.size() && c.compare(0, key.size(), key) == 0 && c[key.size()] == '=')
          return static_cast<unsigned>(std::strtoul(c.c_str() + key.size() + 1, nullptr, 0));
      return 0U;
    };
    branch_caps_ = {value("branch_counter_nr"), value("branch_counter_width")};
  }
  return *branch_caps_;
}

void Dumper::resolved(fmt::memory_buffer& out, std::string_view comm, std::int32_t tid, std::uint16_t misc,
                      std::string_view dso) {
  const auto mode = misc & misc_cpumode_mask;
  fmt::format_to(std::back_inserter(out), " ... thread: {}:{}\n ...... dso: {}\n", comm, tid,
                 !dso.empty()                               ? dso
                 : mode != misc_kernel && mode != misc_user ? std::string_view("[hypervisor]")
                                                            : std::string_view("<not found>"));
}

// The text of the kernel's records other than samples, as their handlers print it in dump mode.
void Dumper::kernel_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  switch (r.kind()) {
    case Type::mmap:
    case Type::mmap2:
    case Type::comm:
    case Type::exit:
    case Type::fork: {  // perf_event__fprintf's texts, as perf script prints them, less the name
      fmt::memory_buffer text;
      script::other_record_text(text, r);
      const std::string_view t(text.data(), text.size());
      out.append(
          t.substr(std::min(t.size(), std::string_view("PERF_RECORD_").size() + type_name(r.type).size())));
      return;
    }
    case Type::lost:
      if (auto* l = r.get<Lost>()) fmt::format_to(it, ": id:{}: lost:{}\n", l->id, l->lost);
      return;
    case Type::throttle:
    case Type::unthrottle:
      if (tool_ == Tool::report) out.append(unhandled);
      return;
    case Type::read: {  // a fixed layout, whatever the event's read_format (perf's dump_read)
      const bool known = r.attr != Record::npos;
      fmt::format_to(it, ": {} {} {} {}\n", field<std::int32_t>(r, 8), field<std::int32_t>(r, 12),
                     file_.event_name(r.attr), field<std::uint64_t>(r, 16));
      const std::uint64_t format = known ? file_.formats().attr(r.attr).read_format : 0;
      if (format & 1) fmt::format_to(it, "... time enabled : {}\n", field<std::uint64_t>(r, 24));
      if (format & 2) fmt::format_to(it, "... time running : {}\n", field<std::uint64_t>(r, 32));
      if (format & 4) fmt::format_to(it, "... id           : {}\n", field<std::uint64_t>(r, 40));
      if (format & 16) fmt::format_to(it, "... lost         : {}\n", field<std::uint64_t>(r, 48));
      if (tool_ == Tool::script) out.append(unhandled);
      return;
    }
    case Type::aux:
      if (auto* a = r.get<Aux>())
        fmt::format_to(it, " offset: {} size: {} flags: {} [{}{}{}]\n", CHex{a->aux_offset},
                       CHex{a->aux_size}, CHex{a->flags}, (a->flags & 1) ? "T" : "",
                       (a->flags & 2) ? "O" : "", (a->flags & 4) ? "P" : "");
      return;
    case Type::itrace_start:
      if (auto* t = r.get<ItraceStart>()) fmt::format_to(it, " pid: {} tid: {}\n", t->pid, t->tid);
      return;
    case Type::lost_samples:
      if (auto* l = r.get<LostSamples>())
        fmt::format_to(it, ": id:{}: lost samples :{}{}\n",
                       r.sample_id.has(sample_id | sample_identifier) ? r.sample_id.id : ~0ULL, l->lost,
                       (r.misc & misc_ext_reserved) ? " (BPF)" : "");
      return;
    case Type::switch_:
    case Type::switch_cpu_wide: switch_text(out, r); return;
    case Type::namespaces: script::namespaces_text(out, r); return;
    case Type::ksymbol:
      if (auto* k = r.get<Ksymbol>())
        fmt::format_to(it, " addr {:x} len {} type {} flags {:#x} name {}\n", k->addr, k->len, k->ksym_type,
                       k->flags, k->name);
      return;
    case Type::bpf_event:
      if (auto* b = r.get<BpfEvent>())
        fmt::format_to(it, " type {}, flags {}, id {}\n", b->type, b->flags, b->id);
      return;
    case Type::cgroup:
      if (auto* g = r.get<Cgroup>()) fmt::format_to(it, " cgroup: {} {}\n", g->id, g->path);
      return;
    case Type::text_poke: text_poke(out, r); return;
    case Type::aux_output_hw_id:
      if (auto* h = r.get<AuxOutputHwId>()) fmt::format_to(it, " hw_id: {}\n", CHex{h->hw_id});
      return;
    default:  // perf's session fails on a type it does not know (perf_session__deliver_event)
      throw DecodeError(
          r.offset,
          fmt::format("the record at offset {:#x} has type {}, which perf does not know", r.offset, r.type));
  }
}

// perf_event__fprintf_text_poke: the address and its kernel function, the lengths, the old bytes and
// the new, 16 a line.
void Dumper::text_poke(fmt::memory_buffer& out, const Record& r) {
  auto* p = r.get<TextPoke>();
  if (!p) return;
  auto it = std::back_inserter(out);
  fmt::format_to(it, " {:x} ", p->addr);
  const Location at = symbols_.locate(0, p->addr, misc_kernel);
  if (at.symbol) fmt::format_to(it, "{}+{:#x}", at.symbol->name, at.symbol_offset());
  fmt::format_to(it, " old len {} new len {}\n", p->old_bytes.size(), p->new_bytes.size());
  for (auto [bytes, kind] : {std::pair{p->old_bytes, "Old"}, std::pair{p->new_bytes, "New"}})
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (i % 16 == 0) fmt::format_to(it, "            {} bytes:", kind);
      fmt::format_to(it, " {:02x}", std::to_integer<unsigned>(bytes[i]));
      if (i % 16 == 15 || i + 1 == bytes.size()) out.push_back('\n');
    }
}

// perf's own records: what each tool's handler prints of them in dump mode.
void Dumper::user_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  const bool report = tool_ == Tool::report;
  switch (r.kind()) {
    case Type::finished_round: out.append(ordered_ ? std::string_view("\n") : unhandled); return;
    case Type::id_index: id_index_text(out, r); return;
    case Type::thread_map: {
      const auto nr = field<std::uint64_t>(r, 8);
      fmt::format_to(it, " nr: {} thread{}: ", nr, nr > 1 ? "s" : "");
      for (std::uint64_t i = 0; i < nr && 16 + (i + 1) * 24 <= r.bytes.size(); ++i)
        fmt::format_to(it, "{}{}", i ? ", " : "",
                       static_cast<std::int32_t>(field<std::uint64_t>(r, 16 + i * 24)));
      out.push_back('\n');
      if (report) out.append(unhandled);
      return;
    }
    case Type::cpu_map:
      fmt::format_to(it, ": {}\n", cpu_list(cpu_map_cpus(r, 8)));
      if (report) out.append(unhandled);
      return;
    case Type::event_update: event_update_text(out, r); return;
    case Type::time_conv:
      time_conv_text(out, r);
      out.append(unhandled);
      return;
    case Type::stat_config:
    case Type::stat:
    case Type::stat_round:
      if (!report) return;
      stat_text(out, r);
      out.append(unhandled);
      return;
    case Type::auxtrace_info: fmt::format_to(it, " type: {}\n", field<std::uint32_t>(r, 8)); return;
    case Type::auxtrace:
      fmt::format_to(it, " size: {}  offset: {}  ref: {}  idx: {}  tid: {}  cpu: {}\n",
                     CHex{field<std::uint64_t>(r, 8)}, CHex{field<std::uint64_t>(r, 16)},
                     CHex{field<std::uint64_t>(r, 24)}, field<std::uint32_t>(r, 32),
                     field<std::int32_t>(r, 36), field<std::int32_t>(r, 40));
      return;
    case Type::auxtrace_error:
      if (report)
        out.append(unhandled);
      else
        auxtrace_error_text(out, r);
      return;
    case Type::finished_init: out.append(unhandled); return;
    default: return;  // ATTR, EVENT_TYPE, TRACING_DATA, BUILD_ID, FEATURE: nothing
  }
}

void Dumper::statistics(fmt::memory_buffer& out, const std::vector<std::uint64_t>& samples) const {
  auto counts = counts_;
  counts[static_cast<std::size_t>(Type::compressed)] += file_.compressed_records();
  counts[0] += file_.compressed_records();
  auto it = std::back_inserter(out);
  fmt::format_to(it, "\nAggregated stats:{}\n",
                 file_.has_feature(Feature::auxtrace)
                     ? " (excludes AUX area (e.g. instruction trace) decoded / synthesized events)"
                     : "");
  for (std::uint32_t type = 0; type < counts.size(); ++type) {
    const std::string_view name = type == 0 ? "TOTAL" : type_name(type);
    if (name.empty() || !counts[type]) continue;
    fmt::format_to(it, "{:>20} events: {:>10}", name, counts[type]);
    if (type && counts[0])
      fmt::format_to(it, "  ({:4.1f}%)",
                     100.0 * static_cast<double>(counts[type]) / static_cast<double>(counts[0]));
    out.push_back('\n');
  }
  for (std::size_t e = 0; e < file_.events().size(); ++e) {
    if (e >= samples.size() || !samples[e]) continue;
    fmt::format_to(it, "{} stats:\n{:>20} events: {:>10}\n", file_.event_name(e), "SAMPLE", samples[e]);
  }
}

}  // namespace perfspec::raw_dump
