// SPDX-License-Identifier: MIT
// perf script's text layout (builtin-script.c of Linux 6.12) for the fields it shares with perf:
// comm, pid, tid, cpu, misc, time, period, event, trace, addr, data_src, weights, cgroup, ip and the
// callchain, registers, physical address and page sizes; the other records as perf script prints them
// with --show-task-events, --show-mmap-events, ...; in time order as perf sorts them.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/symbols.hpp"
#include "perfspec/unwind.hpp"
#include "print/raw_dump.hpp"
#include "print/script_session.hpp"

namespace perfspec::script {
namespace {

using namespace perfspec::record;
using namespace perfspec::script_fields;

// perf's sample_addr_correlates_sym: the address of a page fault is of memory a symbol may name.
bool addr_correlates(const Attr& attr) {
  return attr.type == 1 &&
         (attr.config == 2 || attr.config == 5 || attr.config == 6);  // PAGE_FAULTS, _MIN, _MAJ
}
// perf's fallback when an address is not in the mappings of the sample's cpumode: the other side's.
std::uint16_t other_cpumode(std::uint16_t misc) {
  return (misc & misc_cpumode_mask) == misc_kernel ? misc_user : misc_kernel;
}

// The words of -S that perf reads as addresses: hexadecimal numbers (strtoul's, base 16: 0x or not,
// blanks after them)
std::vector<std::uint64_t> hex_words(const std::vector<std::string>& words) {
  std::vector<std::uint64_t> out;
  for (const std::string& w : words) {
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(w.c_str(), &end, 16);
    if (errno != 0 || end == w.c_str()) continue;
    while (*end != '\0' && std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (*end == '\0') out.push_back(v);
  }
  return out;
}

class TextPrinter : Layout {
 public:
  TextPrinter(Session& session, Buffer& out)
      : Layout(session, out),
        symbols_({.symfs = session.options().symfs,
                  .kallsyms = session.options().kallsyms,
                  .debuginfod = session.options().debuginfod}),
        unwinder_(symbols_),
        symbol_addresses_(hex_words(session.options().symbols)) {}

  void run();

 private:
  record::Threads threads_;
  Symbolizer symbols_;         // the processes' mappings so far, and the binaries' symbols
  record::Unwinder unwinder_;  // --call-graph dwarf samples' user frames
  std::vector<std::uint64_t> unwound_;
  int name_width_ = -1;              // perf's: the longest event name when the first sample is printed
  std::size_t data_src_width_ = 0;   // perf's: the longest data_src text so far, the width of the next
  std::optional<std::string> arch_;  // perf_env__arch, when first needed
  std::unordered_map<std::uint64_t, std::string> cgroups_;      // CGROUP records so far: id -> path
  std::unordered_map<std::uint64_t, std::uint64_t> last_read_;  // PERF_SAMPLE_READ: value by id
  std::vector<std::uint64_t> symbol_addresses_;  // -S: its words that read as hexadecimal numbers
  std::uint64_t initial_time_ = 0;               // --reltime: the first record's time

  // Callchain frames as printed, by what their text depends on: a profile's return addresses come
  // again in sample after sample, and a frame's line is the same while no mapping changes
  // (Symbolizer::generation).
  struct FrameText {
    std::uint64_t generation = 0, ip = 0, fields = 0;
    std::uint32_t pid = 0;
    std::uint16_t mode = 0;
    std::string text;
  };
  static constexpr std::size_t frame_texts_size = 4096;
  std::vector<FrameText> frame_texts_ = std::vector<FrameText>(frame_texts_size);

  // perf's values of a record's sample fields at the start of a line: what its sample says, else
  // perf's defaults (-1; but a record without sample_id_all is at CPU 0 and its FORK/EXIT time)
  struct Start {
    std::int32_t pid = -1, tid = -1, cpu = -1;
    std::uint64_t time = ~std::uint64_t{0};
  };

  raw_dump::Dumper* dump_ = nullptr;  // -D

  void run_dump();
  void resolved(const Record& r, const Sample& s);
  void text(const Record& r);
  bool picked(const Record& r, const Sample& s);
  void text_read(const Record& r, const Sample& s);
  void text_sample(const Record& r, const Sample& s, std::size_t attr, std::uint64_t period);
  void text_start(const Record& r, const Start& v, std::int32_t thread_pid, std::int32_t thread_tid,
                  std::uint64_t fields, bool chain);
  void text_callchain(Out& o, const Sample& s, std::uint64_t fields);
  void text_srcline(Out& o, std::uint32_t pid, std::uint64_t ip, std::uint16_t mode);
  void text_frame(Out& o, const Sample& s, std::uint64_t ip, std::uint16_t mode, std::uint64_t fields);
  void frame_line(Out& o, std::uint64_t ip, const Location& where, std::string_view srcline,
                  std::uint64_t fields);
  void text_location(Out& o, const Location& where, std::uint64_t fields);
  void text_seldom(Out& o, const Record& r, const Sample& s, const Attr& attr, std::uint64_t fields);
  void text_brstack(Out& o, const Record& r, const Sample& s, std::uint64_t fields);
  void text_regs(Out& o, const Registers& regs, std::uint64_t mask);
  void text_other(const Record& r);
  std::uint64_t fields_of(const Attr& attr) const { return s_.fields_of(attr); }
  const std::string& arch();
};

void TextPrinter::run() {
  threads_ = record::Threads(file_.has_feature(Feature::auxtrace));  // perf script keeps exited threads then
  // Which builds of the binaries were recorded: another build is not read for their symbols.
  if (s_.fields_any(out_sym | out_dso) && file_.has_feature(Feature::build_id)) {
    try {
      symbols_.read_build_ids(file_.feature(Feature::build_id));
    } catch (const DecodeError& e) {
      throw DecodeError(e.offset(), fmt::format("{}: {}", s_.options().name, e.message()));
    }
  }
  if (s_.options().dump_raw) {
    run_dump();
    return;
  }
  for_each_in_time_order(
      file_,
      [&](const Record& r) {
        text(r);
        b_.maybe_flush();
      },
      [&](std::size_t i) { s_.pipe_attr(i); });
  if (s_.options().problems)
    for (const std::string& p : symbols_.problems()) s_.options().problems(p);
}

// perf's --comm and -S/--symbols (machine__resolve's filters): the thread's name when sampled; the
// function at the sample's address by its name, or the address itself, where a binary maps it, among
// -S's hexadecimal words (or up to --addr-range bytes after one)
bool TextPrinter::picked(const Record& r, const Sample& s) {
  const ScriptOptions& o = s_.options();
  if (!o.comms.empty() && std::find(o.comms.begin(), o.comms.end(),
                                    threads_.name(static_cast<std::int32_t>(s.pid),
                                                  static_cast<std::int32_t>(s.tid))) == o.comms.end())
    return false;
  if (o.symbols.empty()) return true;
  const Location at = symbols_.locate(s.pid, s.ip, r.misc);
  if (at.symbol && std::find(o.symbols.begin(), o.symbols.end(), at.symbol->name) != o.symbols.end())
    return true;
  if (at.dso.empty()) return false;
  return std::any_of(symbol_addresses_.begin(), symbol_addresses_.end(), [&](std::uint64_t a) {
    return s.ip >= a && s.ip - a < std::max<std::uint64_t>(o.addr_range, 1);
  });
}

const std::string& TextPrinter::arch() {
  if (!arch_) arch_ = file_arch(file_);
  return *arch_;
}

// perf script's perf_sample__fprintf_start: comm, pid/tid, cpu, misc, time.
// `chain`: the line's event has callchains and ip is printed, so perf writes comm unpadded.
void TextPrinter::text_start(const Record& r, const Start& v, std::int32_t thread_pid,
                             std::int32_t thread_tid, std::uint64_t fields, bool chain) {
  Out o(out_);
  if (fields & out_comm) {
    auto comm = threads_.name(thread_pid, thread_tid);
    if (chain)
      o.put(comm);  // "{} "
    else
      o.right_str(comm, 16);  // "{:>16} "
    o.put(' ');
  }
  if ((fields & out_pid) && (fields & out_tid)) {  // "{:>7}/{:<7} "
    o.right(v.pid, 7);
    o.put('/');
    o.left(v.tid, 7);
    o.put(' ');
  } else if (fields & (out_pid | out_tid)) {  // "{:>7} "
    o.right((fields & out_pid) ? v.pid : v.tid, 7);
    o.put(' ');
  }
  if (fields & out_cpu) {  // "[{:03}] " (C's %03d: -1 is "-01")
    o.put('[');
    if (v.cpu < 0) o.put('-');
    o.right(v.cpu < 0 ? -static_cast<std::int64_t>(v.cpu) : v.cpu, v.cpu < 0 ? 2 : 3, '0');
    o.put("] ");
  }
  if (fields & out_misc) {
    // The letters of the cpumode bits each set in misc (so the hypervisor's 3 is "KUH"), and of the
    // record's flag, then spaces to six columns.
    auto has = [&](std::uint16_t m) { return (r.misc & m) == m; };
    std::size_t start = o.size();
    if (has(misc_kernel)) o.put('K');
    if (has(misc_user)) o.put('U');
    if (has(misc_hypervisor)) o.put('H');
    if (has(misc_guest_kernel)) o.put('G');
    if (has(misc_guest_user)) o.put('g');
    switch (r.kind()) {
      case Type::mmap:
      case Type::mmap2:
        if (has(misc_mmap_data)) o.put('M');
        break;
      case Type::comm:
        if (has(misc_comm_exec)) o.put('E');
        break;
      case Type::switch_:
      case Type::switch_cpu_wide:
        if (has(misc_switch_out)) {
          o.put('S');
          if (r.misc & misc_switch_out_preempt) o.put('p');
        }
        break;
      default: break;
    }
    std::size_t letters = o.size() - start;  // "%*s" of " " in 6 - letters columns: at least one space
    o.put(std::string_view("      ").substr(0, letters < 5 ? 6 - letters : 1));
  }
  if (fields & out_time) {  // "{:>5}.{:09}: " (--ns) or "{:>5}.{:06}: "
    std::uint64_t time = v.time;
    if (s_.options().reltime) {  // perf's: since the first record printed
      if (initial_time_ == 0) initial_time_ = time;
      time -= initial_time_;
    }
    o.right(time / 1000000000, 5);
    o.put('.');
    if (s_.options().ns)
      o.right(time % 1000000000, 9, '0');
    else
      o.right(time % 1000000000 / 1000, 6, '0');
    o.put(": ");
  }
}

void TextPrinter::text(const Record& r) {
  if (const auto* s = r.get<Sample>()) {
    if (!s_.keeps(*s)) return;
    if (s->has(sample_read)) {
      text_read(r, *s);
      return;
    }
    if (dump_) resolved(r, *s);
    if (picked(r, *s))
      text_sample(r, *s, r.attr,
                  s->has(sample_period) ? s->period : file_.formats().attr(r.attr).sample_period);
    return;
  }
  // perf names the cgroup of a sample by the first CGROUP record of its id (cgroup__findnew)
  if (auto* g = r.get<Cgroup>()) cgroups_.try_emplace(g->id, g->path);
  // perf names the thread of a COMM or FORK after applying it, of an EXIT before forgetting it
  bool exit = r.kind() == Type::exit;
  symbols_.apply(r);
  if (!exit) threads_.apply(r);
  if (r.type < user_type_start && (!s_.options().samples_only || (s_.options().also_shown >> r.type) & 1) &&
      s_.keeps_other(r)) {
    b_.route(Buffer::others);
    text_other(r);
  }
  if (exit) threads_.apply(r);
}

// PERF_SAMPLE_READ: one sample per value read, of the event the value's id names, with the count since
// that id's last sample as its period; a zero period is no sample (as perf delivers them). A value
// whose id no attr has is not printed (--summary counts it).
void TextPrinter::text_read(const Record& r, const Sample& s) {
  const bool pick = picked(r, s);
  for (std::size_t i = 0; i < s.read.size(); ++i) {
    ReadValue v = s.read[i];
    std::size_t attr = (s.read.format & 4) ? file_.formats().attr_of_id(v.id) : r.attr;
    if (attr == Record::npos) continue;
    std::uint64_t& last = last_read_[(s.read.format & 4) ? v.id : ~std::uint64_t{0}];
    std::uint64_t period = v.value - last;
    last = v.value;
    if (!period) continue;
    if (dump_) resolved(r, s);
    if (pick) text_sample(r, s, attr, period);
  }
}

// -D: perf's lines as it resolves a sample's thread and binary (machine__resolve), before its line
void TextPrinter::resolved(const Record& r, const Sample& s) {
  const auto tid = static_cast<std::int32_t>(s.tid);
  raw_dump::Dumper::resolved(out_, threads_.name(static_cast<std::int32_t>(s.pid), tid), tid, r.misc,
                             symbols_.binary_of(s.pid, s.ip, r.misc));
}

// -D: every record as perf's session delivers it, its dump then what perf script prints of it
void TextPrinter::run_dump() {
  const bool ordered = s_.options().dump_ordered;
  if (ordered && delivered_unordered(file_))
    b_.text().append(
        std::string_view("WARNING: No sample_id_all support, falling back to unordered processing\n"));
  raw_dump::Dumper dump(file_, raw_dump::Tool::script, ordered, symbols_);
  dump_ = &dump;
  for_each_as_delivered(file_, ordered, [&](const Record& r, const PerfData::Place& at) {
    b_.route(Buffer::others);
    dump.record(out_, r, at);
    if (r.kind() == Type::header_attr && file_.pipe()) s_.pipe_attr(file_.events().size() - 1);
    if (r.type < user_type_start) text(r);
    b_.maybe_flush();
  });
  dump_ = nullptr;
}

// perf_sample__fprintf_regs: " ABI:N " then "NAME:0xVALUE " for each register of the attr's mask
// ("%5s:0x%lx "), nothing when the sample has none (ABI 0: a kernel thread's user registers).
void TextPrinter::text_regs(Out& o, const Registers& regs, std::uint64_t mask) {
  if (!regs.abi || regs.values.empty()) return;
  o.format(" ABI:{} ", regs.abi);
  std::size_t i = 0;
  for (unsigned reg = 0; reg < 64 && i < regs.values.size(); ++reg)
    if (mask & (1ULL << reg)) o.format("{:>5}:0x{:x} ", register_name(arch(), reg), regs.values[i++]);
}

// perf script's process_event: the fields of the event's type, in perf's order; nothing at all for a
// type that prints no field.
void TextPrinter::text_sample(const Record& r, const Sample& s, std::size_t attr_index,
                              std::uint64_t period) {
  const Attr& attr = file_.formats().attr(attr_index);
  std::uint64_t fields = fields_of(attr);
  if (!fields) return;
  b_.route(attr_index);
  if (name_width_ < 0 && (fields & out_event)) {  // when an event name is first printed
    name_width_ = 0;
    for (std::size_t i = 0; i < file_.events().size(); ++i)
      name_width_ = std::max<int>(name_width_, static_cast<int>(file_.event_name(i).size()));
  }
  // The payload's text before any of the line: one that cannot be printed is an error naming the file
  // and the record, with nothing of its line written.
  std::string trace;
  const Tracepoint* tp = (fields & out_trace) && s.has(sample_raw) ? s_.tracepoint_of(attr) : nullptr;
  if (tp) {
    try {
      trace = tp->print(s.raw, s.has(sample_cpu) ? static_cast<int>(s.cpu) : -1, r.offset);
    } catch (const DecodeError& e) {
      throw DecodeError(e.offset(), fmt::format("{}: the record at offset {:#x}: {}", s_.options().name,
                                                r.offset, e.message()));
    }
  }
  Start v;  // what the event's sample_type lacks is perf's default (another event of the type may have it)
  if (s.has(sample_tid)) v.pid = static_cast<std::int32_t>(s.pid), v.tid = static_cast<std::int32_t>(s.tid);
  if (s.has(sample_cpu)) v.cpu = static_cast<std::int32_t>(s.cpu);
  if (s.has(sample_time)) v.time = s.time;
  text_start(r, v, v.pid, v.tid, fields,
             (fields & out_ip) && (attr.sample_type & sample_callchain) && s_.use_callchain());
  // One writer for the line (it is the hot path of a large file): the common fields straight into the
  // buffer, fmt only for the fields written seldom.
  Out o(out_);
  if (fields & out_period) {  // "{:>10} "
    o.right(period, 10);
    o.put(' ');
  }
  if (fields & out_event) {  // "{:>{}}: " (name_width_)
    o.right_str(file_.event_name(attr_index), static_cast<std::size_t>(name_width_));
    o.put(": ");
  }
  if (tp) o.put(std::string_view(trace));
  if (fields &
      out_addr) {  // "{:>16x}", and its symbol where the address is of code or data the sample touched
    o.hex16(s.has(sample_addr) ? s.addr : 0);
    if (addr_correlates(attr) && (fields & (out_sym | out_dso))) {
      Location where = symbols_.locate(s.pid, s.addr, r.misc);
      if (where.dso.empty()) where = symbols_.locate(s.pid, s.addr, other_cpumode(r.misc));
      text_location(o, where, fields);
    }
  }
  if (fields & out_data_src) {
    // "%-*s", padded to the longest data_src text printed so far (perf's static maxlen); a sample
    // without one has perf's PERF_MEM_DATA_SRC_NONE
    std::string text = data_src_text(s.has(sample_data_src) ? s.data_src : 0x1e05080021);
    data_src_width_ = std::max(data_src_width_, text.size());
    o.format("{:<{}}", text, data_src_width_);
  }
  if (fields & (out_weight | out_ins_lat | out_retire_lat)) {
    Weights w = weights_of(s);
    if (fields & out_weight) o.format("{:>16}", w.weight);
    if (fields & out_ins_lat) o.format("{:>16}", w.ins_lat);
    if (fields & out_retire_lat) o.format("{:>16}", w.retire_lat);
  }
  if (fields & out_cgroup) {
    auto g = s.has(sample_cgroup) ? cgroups_.find(s.cgroup) : cgroups_.end();
    o.format(" {}", g == cgroups_.end() ? std::string_view("unknown") : std::string_view(g->second));
  }
  if (fields & out_ip) {
    if (s.has(sample_callchain) && s_.use_callchain()) {
      text_callchain(o, s, fields);
    } else {  // " {:>16x}", then " sym+off (dso)"
      o.put(' ');
      o.hex16(s.has(sample_ip) ? s.ip : 0);
      if (fields & (out_sym | out_dso)) text_location(o, symbols_.locate(s.pid, s.ip, r.misc), fields);
      if (fields & out_srcline) text_srcline(o, s.pid, s.ip, r.misc);
    }
  }
  constexpr std::uint64_t seldom =
      out_iregs | out_uregs | out_brstack | out_phys_addr | out_data_page_size | out_code_page_size;
  if (fields & seldom) text_seldom(o, r, s, attr, fields);
  o.put('\n');
}

// perf's reading of a callchain: PERF_CONTEXT_* markers are not frames, a marker it does not know means
// the chain is corrupt and none of it is shown, and at most 127 frames are (PERF_MAX_STACK_DEPTH, perf
// script's --max-stack)
void TextPrinter::text_callchain(Out& o, const Sample& s, std::uint64_t fields) {
  o.put('\n');
  std::size_t start = o.size(), frames = 0;
  Chain read = for_each_frame(s.callchain, [&](std::uint64_t ip, std::uint16_t mode) {
    if (++frames > s_.options().max_stack) return false;
    text_frame(o, s, ip, mode, fields);
    return true;
  });
  if (read == Chain::corrupt) {
    o.cut(start);
    return;
  }
  if (!unwindable(s.type)) return;
  // perf's order: the kernel's frames, then the user stack unwound (as many again at most)
  unwound_.clear();
  unwinder_.unwind(s, arch(), s_.options().max_stack, unwound_);
  for (std::uint64_t ip : unwound_) {
    if (!s_.options().inline_frames) {
      text_frame(o, s, ip, misc_user, fields);
      continue;
    }
    const auto& chain = symbols_.inlined(s.pid, ip, misc_user);
    if (chain.empty()) {
      text_frame(o, s, ip, misc_user, fields);
      continue;
    }
    for (const auto& [where, srcline] : chain) frame_line(o, ip, where, srcline, fields);
  }
}

void TextPrinter::text_frame(Out& o, const Sample& s, std::uint64_t ip, std::uint16_t mode,
                             std::uint64_t fields) {
  const std::uint64_t generation = symbols_.generation();
  FrameText& f = frame_texts_[(ip ^ (ip >> 12) ^ (std::uint64_t{s.pid} << 7) ^ mode) % frame_texts_size];
  if (f.generation == generation && f.ip == ip && f.pid == s.pid && f.mode == mode && f.fields == fields) {
    o.put(std::string_view(f.text));
    return;
  }
  const std::size_t from = o.size();
  frame_line(o, ip, fields & (out_sym | out_dso) ? symbols_.locate(s.pid, ip, mode) : Location{},
             fields & out_srcline ? symbols_.srcline(s.pid, ip, mode) : std::string(), fields);
  f.generation = generation;
  f.ip = ip;
  f.pid = s.pid;
  f.mode = mode;
  f.fields = fields;
  f.text.assign(o.since(from));
}

// One line of a callchain, as perf's sample__fprintf_callchain prints a node: "\t{:>16x}" of the
// address, " sym+off (dso)" (an inlined function names no binary), "\n  " and the srcline where there
// is one, " (inlined)" after an inlined function.
void TextPrinter::frame_line(Out& o, std::uint64_t ip, const Location& where, std::string_view srcline,
                             std::uint64_t fields) {
  const bool inlined = where.symbol && where.symbol->inlined;
  o.put('\t');
  o.hex16(ip);
  if (fields & (out_sym | out_dso)) text_location(o, where, inlined ? fields & ~out_dso : fields);
  if ((fields & out_srcline) && !srcline.empty()) {
    o.put("\n  ");
    o.put(srcline);
  }
  if (inlined) o.put(" (inlined)");
  o.put('\n');
}

// perf's map__fprintf_srcline: "\n  " and the srcline, nothing for an address of no mapping
void TextPrinter::text_srcline(Out& o, std::uint32_t pid, std::uint64_t ip, std::uint16_t mode) {
  std::string line = symbols_.srcline(pid, ip, mode);
  if (line.empty()) return;
  o.put("\n  ");
  o.put(std::string_view(line));
}

// perf's sample__fprintf_sym after the address: " NAME" (with "+0xOFFSET" for symoff) or " [unknown]",
// then " (DSO)" or " ([unknown])".
void TextPrinter::text_location(Out& o, const Location& where, std::uint64_t fields) {
  if (fields & out_sym) {
    o.put(' ');
    if (where.symbol) {
      o.put(std::string_view(where.symbol->name));
      if (fields & out_symoff) {  // "+{:#x}"
        o.put('+');
        o.hex0x(where.symbol_offset());
      }
    } else {
      o.put("[unknown]");
    }
  }
  if (fields & out_dso) {
    o.put(" (");
    o.put(where.dso.empty() ? std::string_view("[unknown]") : where.dso);
    o.put(')');
  }
}

// The fields after ip, seldom asked for: through fmt.
void TextPrinter::text_seldom(Out& o, const Record& r, const Sample& s, const Attr& attr,
                              std::uint64_t fields) {
  if ((fields & out_iregs) && s.has(sample_regs_intr)) text_regs(o, s.regs_intr, attr.sample_regs_intr);
  if ((fields & out_uregs) && s.has(sample_regs_user)) text_regs(o, s.regs_user, attr.sample_regs_user);
  if ((fields & out_brstack) && s.has(sample_branch_stack)) text_brstack(o, r, s, fields);
  if (fields & out_phys_addr) o.format("{:>16x}", s.has(sample_phys_addr) ? s.phys_addr : 0);
  if (fields & out_data_page_size)
    o.format(" {}", page_size_name(s.has(sample_data_page_size) ? s.data_page_size : 0));
  if (fields & out_code_page_size)
    o.format(" {}", page_size_name(s.has(sample_code_page_size) ? s.code_page_size : 0));
}

// perf's perf_sample__fprintf_brstack: each branch " 0xFROM/0xTO" (with dso: each address's binary,
// found in the sample's cpumode or else the other's) and its flags, print_bstack_flags'
// "/M|P|-/X|-/A|-/CYCLES/TYPE/SPEC "
void TextPrinter::text_brstack(Out& o, const Record& r, const Sample& s, std::uint64_t fields) {
  auto binary = [&](std::uint64_t address) {
    Location where = symbols_.locate(s.pid, address, r.misc);
    if (where.dso.empty()) where = symbols_.locate(s.pid, address, other_cpumode(r.misc));
    o.put(" (");
    o.put(where.dso.empty() ? std::string_view("[unknown]") : where.dso);
    o.put(')');
  };
  for (std::size_t i = 0; i < s.branches.size(); ++i) {
    const Branch b = s.branches[i];
    o.format(" {:#x}", b.from);
    if (fields & out_dso) binary(b.from);
    o.format("/{:#x}", b.to);
    if (fields & out_dso) binary(b.to);
    auto bits = [&](unsigned shift, unsigned width) { return (b.flags >> shift) & ((1ULL << width) - 1); };
    const char mispred = bits(1, 1) ? 'P' : bits(0, 1) ? 'M' : '-';
    o.format("/{}/{}/{}/{}/{}/{} ", mispred, bits(2, 1) ? 'X' : '-', bits(3, 1) ? 'A' : '-', bits(4, 16),
             branch_type_name(bits(20, 4), bits(26, 4)), branch_spec_name(bits(24, 2)));
  }
}

// Non-sample records as perf script prints them with --show-task-events, --show-mmap-events, ...
void TextPrinter::text_other(const Record& r) {
  std::int32_t thread = static_cast<std::int32_t>(r.sample_id.tid);
  std::int32_t thread_pid = static_cast<std::int32_t>(r.sample_id.pid);
  const Attr* attr =
      file_.formats().size() == 0 ? nullptr : &file_.formats().attr(r.attr == Record::npos ? 0 : r.attr);
  Start v;
  const SampleId& id = r.sample_id;
  if (id.has(sample_tid))
    v.pid = static_cast<std::int32_t>(id.pid), v.tid = static_cast<std::int32_t>(id.tid);
  if (id.has(sample_cpu)) v.cpu = static_cast<std::int32_t>(id.cpu);
  if (id.has(sample_time)) v.time = id.time;
  // Without sample_id_all the record itself says whose it is, at CPU 0, at the time of a FORK or EXIT
  // and else 0 (perf's print_event_with_time).
  bool has_id = attr && attr->sample_id_all;
  if (!has_id) {
    v.cpu = 0;
    v.time = 0;
  }
  auto whose = [&](std::uint32_t pid, std::uint32_t tid) {
    thread = static_cast<std::int32_t>(tid);
    thread_pid = static_cast<std::int32_t>(pid);
    if (!has_id) v.pid = thread_pid, v.tid = thread;
  };
  if (auto* m = r.get<Mmap>()) whose(m->pid, m->tid);
  if (auto* m = r.get<Mmap2>()) whose(m->pid, m->tid);
  if (auto* c = r.get<Comm>()) whose(c->pid, c->tid);
  if (auto* n = r.get<Namespaces>()) whose(n->pid, n->tid);
  if (auto* t = r.get<Task>()) {
    whose(t->pid, t->tid);
    if (!has_id) v.time = t->time;
  }
  // perf prints no start for a record of no event
  std::uint64_t fields = attr ? fields_of(*attr) : 0;
  text_start(r, v, thread_pid, thread,
             fields & (out_comm | out_pid | out_tid | out_cpu | out_misc | out_time),
             (fields & out_ip) && attr && (attr->sample_type & sample_callchain) && s_.use_callchain());
  other_record_text(out_, r);
}

}  // namespace

void print_text(Session& session, Buffer& out) { TextPrinter(session, out).run(); }

}  // namespace perfspec::script
