// SPDX-License-Identifier: MIT
// `perfspec script`: every record of a perf.data file. Text follows perf script's layout for the
// fields it shares with perf (comm, pid, tid, cpu, time, period, event, trace, addr, ip and the
// callchain), in time order as perf sorts them; JSON lines carry every decoded field, a tracepoint's
// payload as named fields, in file order.
#include "tools/script.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <variant>

#include <sys/utsname.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "perfspec/error.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/tracepoint.hpp"
#include "tools/script_fields.hpp"

namespace perfspec::tools {
// C's %#lx, as perf prints addresses: 0 is written "0", not "0x0".
struct CHex {
  std::uint64_t v;
};
}  // namespace perfspec::tools

template <> struct fmt::formatter<perfspec::tools::CHex> : fmt::formatter<std::string_view> {
  auto format(perfspec::tools::CHex h, fmt::format_context& ctx) const {
    return h.v ? fmt::format_to(ctx.out(), "{:#x}", h.v) : fmt::format_to(ctx.out(), "0");
  }
};

namespace perfspec::tools {
namespace {

using namespace perfspec::record;

// The text path's hot fields, written straight into the output buffer: fmt::format_to parses its
// format string and pads through its width machinery for each of them, which was most of the time of
// `perfspec script` over a large file. Each writes exactly what the fmt specification in its comment does.
class Out {
 public:
  // Writes from the end of `b`, into its spare capacity (grown as needed); the size is set when the Out
  // ends. Nothing else may write to `b` while an Out on it lives.
  explicit Out(fmt::memory_buffer& b) : b_(b), p_(b.data() + b.size()), end_(b.data() + b.capacity()) {}
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;
  ~Out() { b_.resize(size()); }

  std::size_t size() const { return static_cast<std::size_t>(p_ - b_.data()); }
  void cut(std::size_t size) { p_ = b_.data() + size; }  // back to an earlier size()
  void put(char c) {
    need(1);
    *p_++ = c;
  }
  void put(std::string_view s) {
    need(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // What fmt formats, for the fields written seldom: through the buffer itself, then on from there.
  template <typename... A> void format(fmt::format_string<A...> f, A&&... args) {
    b_.resize(size());
    fmt::format_to(std::back_inserter(b_), f, std::forward<A>(args)...);
    p_ = b_.data() + b_.size();
    end_ = b_.data() + b_.capacity();
  }
  // "{:>W}" of a string: fmt pads by display width, which is the byte count for ASCII; other strings go
  // through fmt.
  void right_str(std::string_view s, std::size_t width) {
    if (!ascii(s)) return format("{:>{}}", s, width);
    if (s.size() < width) fill(' ', width - s.size());
    put(s);
  }
  // "{:>W}" / "{:0W}" / "{:<W}" of an integer
  template <typename T> void right(T v, std::size_t width, char pad = ' ') {
    fmt::format_int d(v);
    if (d.size() < width) fill(pad, width - d.size());
    put(std::string_view(d.data(), d.size()));
  }
  template <typename T> void left(T v, std::size_t width) {
    fmt::format_int d(v);
    put(std::string_view(d.data(), d.size()));
    if (d.size() < width) fill(' ', width - d.size());
  }
  // "{:>16x}": two digits a step, from a table of the 256 byte values
  void hex16(std::uint64_t v) {
    static constexpr auto pairs = [] {
      std::array<char, 512> t{};
      for (int i = 0; i < 256; ++i) {
        t[2 * i] = "0123456789abcdef"[i >> 4];
        t[2 * i + 1] = "0123456789abcdef"[i & 15];
      }
      return t;
    }();
    need(16);
    char digits[16];
    for (int i = 7; i >= 0; --i, v >>= 8) std::memcpy(digits + 2 * i, &pairs[2 * (v & 0xff)], 2);
    std::size_t zeros = 0;  // leading zeros become spaces; 0 itself is "0"
    while (zeros < 15 && digits[zeros] == '0') ++zeros;
    std::memset(p_, ' ', zeros);
    std::memcpy(p_ + zeros, digits + zeros, 16 - zeros);
    p_ += 16;
  }

 private:
  fmt::memory_buffer& b_;
  char* p_;
  char* end_;
  static bool ascii(std::string_view s) {
    for (char c : s)
      if (static_cast<unsigned char>(c) >= 0x80) return false;
    return true;
  }
  void need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) [[unlikely]]
      grow(n);
  }
  [[gnu::noinline]] void grow(std::size_t n) {
    std::size_t used = size();
    b_.resize(used);
    b_.reserve(used + n + 4096);
    p_ = b_.data() + used;
    end_ = b_.data() + b_.capacity();
  }
  void fill(char c, std::size_t n) {
    need(n);
    std::memset(p_, c, n);
    p_ += n;
  }
};

using namespace script_fields;

// How perf reads the weight of a sample (arch_perf_parse_sample_weight), which depends on the machine
// perf runs on, not on the file's: on x86 and powerpc PERF_SAMPLE_WEIGHT_STRUCT is split into the
// weight (its low 32 bits), ins_lat (the next 16) and, on x86, retire_lat (the top 16); elsewhere the
// weight is the whole value and the other two are 0. perfspec does as perf built for its own machine.
struct Weights {
  std::uint64_t weight = 0;
  std::uint16_t ins_lat = 0, retire_lat = 0;
};
Weights weights_of(const Sample& s) {
  Weights w;
  if (!s.has(sample_weight) && !s.has(sample_weight_struct)) return w;
#if defined(__x86_64__) || defined(__i386__) || defined(__powerpc__) || defined(__powerpc64__)
  if (s.has(sample_weight)) {
    w.weight = s.weight.full;
  } else {
    w.weight = s.weight.var1_dw();
    w.ins_lat = s.weight.var2_w();
#if defined(__x86_64__) || defined(__i386__)
    w.retire_lat = s.weight.var3_w();
#endif
  }
#else
  w.weight = s.weight.full;
#endif
  return w;
}

// The threads' names, as perf's machine keeps them (tools/perf/util/machine.c): a thread is made by the
// first record that names its tid, with that record's pid; COMM names it; FORK makes the child anew
// (forgetting a thread the tid had before: a pid reused) and gives it the parent's name only when the
// parent was named (else it is `:CHILD`, never the parent's `:PARENT`), after forgetting a "parent"
// whose pid is not the FORK's ppid; EXIT forgets the thread. A thread never named shows as `:TID`.
class Threads {
 public:
  Threads() {
    Thread& swapper = threads_[0];
    swapper = {"swapper", 0, true};
  }
  void apply(const Record& r) {
    last_ = nullptr;
    if (auto* c = r.get<Comm>()) {
      Thread& t = findnew(static_cast<std::int32_t>(c->pid), static_cast<std::int32_t>(c->tid));
      t.name = std::string(c->comm);
      t.named = true;
    } else if (auto* f = r.get<Task>(); f && r.kind() == Type::fork) {
      auto ptid = static_cast<std::int32_t>(f->ptid), ppid = static_cast<std::int32_t>(f->ppid);
      auto tid = static_cast<std::int32_t>(f->tid);
      auto parent = threads_.find(ptid);
      if (parent != threads_.end() && parent->second.pid != ppid && ptid != 0) {
        threads_.erase(parent);  // not the parent: a thread of a pid since reused
        parent = threads_.end();
      }
      std::optional<std::string> inherited;
      if (parent != threads_.end() && parent->second.named) inherited = parent->second.name;
      if (tid != 0) threads_.erase(tid);
      Thread& child = findnew(static_cast<std::int32_t>(f->pid), tid);
      if (inherited) child.name = std::move(*inherited), child.named = true;
    } else if (auto* x = r.get<Task>(); x && r.kind() == Type::exit && x->tid != 0) {
      threads_.erase(static_cast<std::int32_t>(x->tid));  // perf forgets a thread that exited
    }
  }
  std::string_view name(std::int32_t pid, std::int32_t tid) {
    // The last thread asked for, remembered: samples come in runs of one thread. Its node (and so the
    // string) lives until apply() changes the threads, which forgets it here too.
    if (last_ && last_tid_ == tid) return *last_;
    last_tid_ = tid;
    last_ = &findnew(pid, tid).name;
    return *last_;
  }

 private:
  struct Thread {
    std::string name;
    std::int32_t pid = -1;
    bool named = false;
  };
  // perf's machine__findnew_thread: the thread of `tid`, made unnamed with `pid` when there is none; a
  // known pid is kept.
  Thread& findnew(std::int32_t pid, std::int32_t tid) {
    auto [it, made] = threads_.try_emplace(tid);
    if (made)
      it->second = {fmt::format(":{}", tid), pid, false};
    else if (it->second.pid == -1)
      it->second.pid = pid;
    return it->second;
  }
  std::unordered_map<std::int32_t, Thread> threads_;
  std::int32_t last_tid_ = 0;
  const std::string* last_ = nullptr;
};

class Printer {
 public:
  Printer(PerfData& file, const ScriptOptions& o, const FieldSpec& fields)
      : file_(file), o_(o), out_fields_(fields) {}

  int run();

 private:
  PerfData& file_;
  const ScriptOptions& o_;
  fmt::memory_buffer out_;
  Threads threads_;
  // What each output type prints: the -F options, then what perf's checks at the start of the session
  // (and, in pipe mode, at each ATTR) leave out or add.
  FieldSpec out_fields_;
  bool use_callchain_ = true;        // perf's symbol_conf.use_callchain
  int name_width_ = -1;              // perf's: the longest event name when the first sample is printed
  std::size_t data_src_width_ = 0;   // perf's: the longest data_src text so far, the width of the next
  std::optional<std::string> arch_;  // perf_env__arch, when first needed
  std::unordered_map<std::uint64_t, std::string> cgroups_;  // CGROUP records so far: id -> path
  std::map<std::string, std::uint64_t> counts_;
  std::unordered_map<std::uint64_t, std::uint64_t> last_read_;  // PERF_SAMPLE_READ: value by id
  std::uint64_t lost_ = 0, lost_samples_ = 0, throttled_ = 0, unthrottled_ = 0, unknown_id_ = 0;

  // perf's values of a record's sample fields at the start of a line: what its sample says, else
  // perf's defaults (-1; but a record without sample_id_all is at CPU 0 and its FORK/EXIT time)
  struct Start {
    std::int32_t pid = -1, tid = -1, cpu = -1;
    std::uint64_t time = ~std::uint64_t{0};
  };

  void flush() {
    std::fwrite(out_.data(), 1, out_.size(), stdout);
    out_.clear();
  }
  void maybe_flush() {
    if (out_.size() > (1 << 16)) flush();
  }
  void count(const Record& r);
  void text(const Record& r);
  void text_sample(const Record& r, const Sample& s, std::size_t attr, std::uint64_t period);
  void text_start(const Record& r, const Start& v, std::int32_t thread_pid, std::int32_t thread_tid,
                  std::uint64_t fields, bool chain);
  void text_regs(Out& o, const Registers& regs, std::uint64_t mask);
  void text_other(const Record& r);
  void json(const Record& r);
  void json_header();
  void json_sample(const Record& r, const Sample& s, const Attr& attr);
  void print_summary();
  void check_output();
  void check_attr(const Attr& a, std::string_view name);
  void check_stype(const Attr& a, std::string_view name, std::uint64_t sample_bits, std::string_view bit_name,
                   std::uint64_t field, bool allow_user_set);
  void pipe_attr(std::size_t i);
  void read_tracepoint_format(std::size_t i);
  std::uint64_t fields_of(const Attr& attr) const { return out_fields_[output_type(attr.type)].fields; }
  const std::string& arch();
  const Tracepoint* tracepoint_of(const Attr& attr) const;
};

// The format of a tracepoint event in the file's tracing data (nullptr: none, and perf prints no trace).
const Tracepoint* Printer::tracepoint_of(const Attr& attr) const {
  if (attr.type != 2) return nullptr;
  const Tracepoints* tps = file_.tracepoints();
  return tps ? tps->find(attr) : nullptr;
}

const std::string& Printer::arch() {
  if (!arch_) {
    std::optional<std::string> a = file_.feature_string(Feature::arch);
    if (!a) {
      utsname u{};
      a = uname(&u) == 0 ? u.machine : "";
    }
    arch_ = normalize_arch(*a);
  }
  return *arch_;
}

bool is_dummy(const Attr& a) { return a.type == 1 && a.config == 9; }  // PERF_COUNT_SW_DUMMY

// perf's evsel__do_check_stype: a field printed for the type of `a` whose sample_type bits its samples
// lack. Named in a -F for every type, it is an error (unless allow_user_set: an AUX-area trace may
// make such samples); otherwise the type stops printing it.
void Printer::check_stype(const Attr& a, std::string_view name, std::uint64_t sample_bits,
                          std::string_view bit_name, std::uint64_t field, bool allow_user_set) {
  if (a.sample_type & sample_bits) return;
  TypeFields& t = out_fields_[output_type(a.type)];
  if (t.user_set_fields & field) {
    if (allow_user_set) return;
    // perf names the field by output_field2str, which finds no name for pid|tid: ''
    throw Error(ErrorKind::usage,
                fmt::format("Samples for '{}' event do not have {} attribute set. Cannot print '{}' field.",
                            name, bit_name, field_name(field)),
                field == out_cgroup ? "run 'perf record --all-cgroups ...'" : "");
  }
  t.fields &= ~field;
}

// perf's evsel__check_attr, in its order: the fields of the event's type must be in its samples.
// (perf's checks of srcline, srccode, branch stack and tod fields are not here: perfspec refuses
// those fields when -F is read, and no type prints them by default.)
void Printer::check_attr(const Attr& a, std::string_view name) {
  if (is_dummy(a) || file_.has_feature(Feature::stat)) return;
  bool allow_user_set = file_.has_feature(Feature::auxtrace);
  auto printed = [&](std::uint64_t field) { return (fields_of(a) & field) != 0; };
  auto usage = [](std::string message) { throw Error(ErrorKind::usage, std::move(message)); };
  // (perf's check that a printed trace has tracepoints to come from always passes: only the
  // tracepoint type may print one)
  if (printed(out_ip)) check_stype(a, name, sample_ip, "IP", out_ip, false);
  if (printed(out_addr)) check_stype(a, name, sample_addr, "ADDR", out_addr, allow_user_set);
  if (printed(out_data_src)) check_stype(a, name, sample_data_src, "DATA_SRC", out_data_src, allow_user_set);
  if (printed(out_weight))
    check_stype(a, name, sample_weight | sample_weight_struct, "WEIGHT", out_weight, allow_user_set);
  if (printed(out_sym) && !(a.sample_type & (sample_ip | sample_addr)))
    usage(
        "Display of symbols requested but neither sample IP nor sample address\navailable. Hence, no "
        "addresses to convert to symbols.");
  if (printed(out_symoff) && !printed(out_sym))
    usage("Display of offsets requested but symbol is notselected.");
  if (printed(out_dso) && !(a.sample_type & (sample_ip | sample_addr)))
    usage("Display of DSO requested but no address to convert.");
  if (printed(out_pid | out_tid)) check_stype(a, name, sample_tid, "TID", out_tid | out_pid, false);
  if (printed(out_time)) check_stype(a, name, sample_time, "TIME", out_time, false);
  if (printed(out_cpu)) check_stype(a, name, sample_cpu, "CPU", out_cpu, allow_user_set);
  if (printed(out_iregs)) check_stype(a, name, sample_regs_intr, "IREGS", out_iregs, allow_user_set);
  if (printed(out_uregs)) check_stype(a, name, sample_regs_user, "UREGS", out_uregs, false);
  if (printed(out_phys_addr))
    check_stype(a, name, sample_phys_addr, "PHYS_ADDR", out_phys_addr, allow_user_set);
  if (printed(out_data_page_size))
    check_stype(a, name, sample_data_page_size, "DATA_PAGE_SIZE", out_data_page_size, false);
  if (printed(out_code_page_size))
    check_stype(a, name, sample_code_page_size, "CODE_PAGE_SIZE", out_code_page_size, false);
  if (printed(out_ins_lat)) check_stype(a, name, sample_weight_struct, "WEIGHT_STRUCT", out_ins_lat, false);
  if (printed(out_cgroup)) check_stype(a, name, sample_cgroup, "CGROUP", out_cgroup, false);
  if (printed(out_retire_lat))
    check_stype(a, name, sample_weight_struct, "WEIGHT_STRUCT", out_retire_lat, false);
}

// perf's perf_session__check_output_opt, at the start of the session. Each output type is checked
// against its first event (not a dummy one): what that one's samples lack, the type no longer prints
// (or it is an error, check_stype). A type named in a -F without a field (`sw:`) must have events.
// Tracepoints print their callchains by default when some have one. In pipe mode there are no events
// yet: pipe_attr() does the rest as their ATTRs come.
void Printer::check_output() {
  const auto& events = file_.events();
  for (int j = 0; j < n_types; ++j) {
    const FileEvent* first = nullptr;
    for (const FileEvent& e : events)
      if (!is_dummy(e.attr) && output_type(e.attr.type) == j) {
        first = &e;
        break;
      }
    const TypeFields& t = out_fields_[j];
    if (!first && t.user_set && !t.wildcard_set && j != synth)
      throw Error(ErrorKind::usage,
                  fmt::format("{} events do not exist. Remove corresponding -F option to proceed.",
                              event_type_name(j)));
    if (first && t.fields) check_attr(first->attr, first->name);
  }
  if (!file_.pipe())
    use_callchain_ = std::any_of(events.begin(), events.end(),
                                 [](const FileEvent& e) { return e.attr.sample_type & sample_callchain; });
  if (use_callchain_ && !out_fields_[tracepoint].user_set)
    for (const FileEvent& e : events)
      if (e.attr.type == 2 && (e.attr.sample_type & sample_callchain)) {
        out_fields_[tracepoint].fields |= out_ip | out_sym | out_symoff | out_dso;
        break;
      }
  for (std::size_t i = 0; i < events.size(); ++i) read_tracepoint_format(i);
}

// perf script's process_attr, for each ATTR of a pipe: the first event of each of perf's own types
// (a PMU's are left alone) is checked as check_output() checks a file's; and while some event of the
// stream so far has callchains (or a user stack with its registers), its type prints ip and sym
// unless a -F for every type removed them.
void Printer::pipe_attr(std::size_t i) {
  const auto& events = file_.events();
  const Attr& a = events[i].attr;
  read_tracepoint_format(i);
  if (a.type >= 6 && a.type != 0x80000000U) return;  // PERF_TYPE_MAX, PERF_TYPE_SYNTH
  for (std::size_t k = 0; k < i; ++k)
    if (events[k].attr.type == a.type) return;
  if (a.sample_type) check_attr(a, events[i].name);
  std::uint64_t combined = 0;
  for (std::size_t k = 0; k <= i; ++k) combined |= events[k].attr.sample_type;
  if ((combined & (sample_callchain | sample_branch_stack)) ||
      ((combined & sample_regs_user) && (combined & sample_stack_user))) {
    TypeFields& t = out_fields_[output_type(a.type)];
    if (!(t.user_unset_fields & out_ip)) t.fields |= out_ip;
    if (!(t.user_unset_fields & out_sym)) t.fields |= out_sym;
  }
}

// A tracepoint whose payload is printed: its format is read now, so that tracing data that cannot be
// read is an error before the first line rather than in the middle of one (in pipe mode, when it has
// come before the event).
void Printer::read_tracepoint_format(std::size_t i) {
  const Attr& a = file_.events()[i].attr;
  if (a.type == 2 && (fields_of(a) & out_trace)) (void)tracepoint_of(a);
}

void Printer::count(const Record& r) {
  auto name = type_name(r.type);
  ++counts_[name.empty() ? fmt::format("type {}", r.type) : std::string(name)];
  if (auto* l = r.get<Lost>()) lost_ += l->lost;
  if (auto* l = r.get<LostSamples>()) lost_samples_ += l->lost;
  if (r.kind() == Type::throttle) ++throttled_;
  if (r.kind() == Type::unthrottle) ++unthrottled_;
  if (r.type < user_type_start && r.attr == Record::npos) ++unknown_id_;
}

// perf script's perf_sample__fprintf_start: comm, pid/tid, cpu, misc, time.
// `chain`: the line's event has callchains and ip is printed, so perf writes comm unpadded.
void Printer::text_start(const Record& r, const Start& v, std::int32_t thread_pid, std::int32_t thread_tid,
                         std::uint64_t fields, bool chain) {
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
    o.right(v.time / 1000000000, 5);
    o.put('.');
    if (o_.ns)
      o.right(v.time % 1000000000, 9, '0');
    else
      o.right(v.time % 1000000000 / 1000, 6, '0');
    o.put(": ");
  }
}

void Printer::text(const Record& r) {
  if (const auto* s = r.get<Sample>()) {
    if (!s->has(sample_read)) {
      text_sample(r, *s, r.attr,
                  s->has(sample_period) ? s->period : file_.formats().attr(r.attr).sample_period);
      return;
    }
    // PERF_SAMPLE_READ: one sample per value read, of the event the value's id names, with the
    // count since that id's last sample as its period; a zero period is no sample (as perf delivers
    // them). A value whose id no attr has is counted, not printed.
    for (std::size_t i = 0; i < s->read.size(); ++i) {
      ReadValue v = s->read[i];
      std::size_t attr = (s->read.format & 4) ? file_.formats().attr_of_id(v.id) : r.attr;
      if (attr == Record::npos) {
        ++unknown_id_;
        continue;
      }
      std::uint64_t& last = last_read_[(s->read.format & 4) ? v.id : ~std::uint64_t{0}];
      std::uint64_t period = v.value - last;
      last = v.value;
      if (period) text_sample(r, *s, attr, period);
    }
    return;
  }
  // perf names the cgroup of a sample by the first CGROUP record of its id (cgroup__findnew)
  if (auto* g = r.get<Cgroup>()) cgroups_.try_emplace(g->id, g->path);
  // perf names the thread of a COMM or FORK after applying it, of an EXIT before forgetting it
  bool exit = r.kind() == Type::exit;
  if (!exit) threads_.apply(r);
  if (!o_.samples_only && r.type < user_type_start) text_other(r);
  if (exit) threads_.apply(r);
}

// perf_sample__fprintf_regs: " ABI:N " then "NAME:0xVALUE " for each register of the attr's mask
// ("%5s:0x%lx "), nothing when the sample has none (ABI 0: a kernel thread's user registers).
void Printer::text_regs(Out& o, const Registers& regs, std::uint64_t mask) {
  if (!regs.abi || regs.values.empty()) return;
  o.format(" ABI:{} ", regs.abi);
  std::size_t i = 0;
  for (unsigned reg = 0; reg < 64 && i < regs.values.size(); ++reg)
    if (mask & (1ULL << reg)) o.format("{:>5}:0x{:x} ", register_name(arch(), reg), regs.values[i++]);
}

// perf script's process_event: the fields of the event's type, in perf's order; nothing at all for a
// type that prints no field.
void Printer::text_sample(const Record& r, const Sample& s, std::size_t attr_index, std::uint64_t period) {
  const Attr& attr = file_.formats().attr(attr_index);
  std::uint64_t fields = fields_of(attr);
  if (!fields) return;
  if (name_width_ < 0 && (fields & out_event)) {  // when an event name is first printed
    name_width_ = 0;
    for (std::size_t i = 0; i < file_.events().size(); ++i)
      name_width_ = std::max<int>(name_width_, static_cast<int>(file_.event_name(i).size()));
  }
  // The payload's text before any of the line: one that cannot be printed is an error naming the file
  // and the record, with nothing of its line written.
  std::string trace;
  const Tracepoint* tp = (fields & out_trace) && s.has(sample_raw) ? tracepoint_of(attr) : nullptr;
  if (tp) {
    try {
      trace = tp->print(s.raw, s.has(sample_cpu) ? static_cast<int>(s.cpu) : -1, r.offset);
    } catch (const DecodeError& e) {
      throw DecodeError(e.offset(),
                        fmt::format("{}: the record at offset {:#x}: {}", o_.input, r.offset, e.message()));
    }
  }
  Start v;  // what the event's sample_type lacks is perf's default (another event of the type may have it)
  if (s.has(sample_tid)) v.pid = static_cast<std::int32_t>(s.pid), v.tid = static_cast<std::int32_t>(s.tid);
  if (s.has(sample_cpu)) v.cpu = static_cast<std::int32_t>(s.cpu);
  if (s.has(sample_time)) v.time = s.time;
  text_start(r, v, v.pid, v.tid, fields, (fields & out_ip) && (attr.sample_type & sample_callchain));
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
  if (fields & out_addr) o.hex16(s.has(sample_addr) ? s.addr : 0);  // "{:>16x}"
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
    if (s.has(sample_callchain) && use_callchain_) {
      o.put('\n');
      // perf's reading of a callchain: PERF_CONTEXT_* markers are not frames, a marker it does not
      // know means the chain is corrupt and none of it is shown, and at most 127 frames are
      // (PERF_MAX_STACK_DEPTH, perf script's --max-stack)
      std::size_t start = o.size(), frames = 0;
      for (std::uint64_t ip : s.callchain) {
        if (ip >= context_max) {
          if (ip == context_hv || ip == context_kernel || ip == context_user || ip == context_guest_kernel ||
              ip == context_guest_user)
            continue;
          o.cut(start);
          break;
        }
        if (++frames > 127) break;
        o.put('\t');  // "\t{:>16x}\n"
        o.hex16(ip);
        o.put('\n');
      }
    } else {  // " {:>16x}"
      o.put(' ');
      o.hex16(s.has(sample_ip) ? s.ip : 0);
    }
  }
  constexpr std::uint64_t seldom =
      out_iregs | out_uregs | out_phys_addr | out_data_page_size | out_code_page_size;
  if (!(fields & seldom)) {
    o.put('\n');
    return;
  }
  if ((fields & out_iregs) && s.has(sample_regs_intr)) text_regs(o, s.regs_intr, attr.sample_regs_intr);
  if ((fields & out_uregs) && s.has(sample_regs_user)) text_regs(o, s.regs_user, attr.sample_regs_user);
  if (fields & out_phys_addr) o.format("{:>16x}", s.has(sample_phys_addr) ? s.phys_addr : 0);
  if (fields & out_data_page_size)
    o.format(" {}", page_size_name(s.has(sample_data_page_size) ? s.data_page_size : 0));
  if (fields & out_code_page_size)
    o.format(" {}", page_size_name(s.has(sample_code_page_size) ? s.code_page_size : 0));
  o.put('\n');
}

// Non-sample records as perf script prints them with --show-task-events, --show-mmap-events, ...
void Printer::text_other(const Record& r) {
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
  if (auto* t = r.get<Task>()) {
    whose(t->pid, t->tid);
    if (!has_id) v.time = t->time;
  }
  // perf prints no start for a record of no event
  std::uint64_t fields = attr ? fields_of(*attr) : 0;
  text_start(r, v, thread_pid, thread,
             fields & (out_comm | out_pid | out_tid | out_cpu | out_misc | out_time),
             (fields & out_ip) && attr && (attr->sample_type & sample_callchain));
  auto name = type_name(r.type);
  auto it = std::back_inserter(out_);
  if (name.empty())
    fmt::format_to(it, "PERF_RECORD type {}", r.type);
  else
    fmt::format_to(it, "PERF_RECORD_{}", name);
  if (auto* m = r.get<Mmap>()) {
    fmt::format_to(it, " {}/{}: [{}({}) @ {}]: {} {}\n", static_cast<std::int32_t>(m->pid),
                   static_cast<std::int32_t>(m->tid), CHex{m->addr}, CHex{m->len}, CHex{m->pgoff},
                   (r.misc & misc_mmap_data) ? 'r' : 'x', m->filename);
  } else if (auto* m2 = r.get<Mmap2>()) {
    fmt::format_to(it, " {}/{}: [{}({}) @ {} ", static_cast<std::int32_t>(m2->pid),
                   static_cast<std::int32_t>(m2->tid), CHex{m2->addr}, CHex{m2->len}, CHex{m2->pgoff});
    if (r.misc & misc_mmap_build_id) {
      out_.push_back('<');
      for (std::byte b : m2->build_id) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
      out_.push_back('>');
    } else {
      fmt::format_to(it, "{:02x}:{:02x} {} {}", m2->maj, m2->min, m2->ino, m2->ino_generation);
    }
    fmt::format_to(it, "]: {}{}{}{} {}\n", (m2->prot & 1) ? 'r' : '-', (m2->prot & 2) ? 'w' : '-',
                   (m2->prot & 4) ? 'x' : '-', (m2->flags & 1) ? 's' : 'p', m2->filename);
  } else if (auto* c = r.get<Comm>()) {
    fmt::format_to(it, "{}: {}:{}/{}\n", c->exec ? " exec" : "", c->comm, static_cast<std::int32_t>(c->pid),
                   static_cast<std::int32_t>(c->tid));
  } else if (auto* t = r.get<Task>()) {
    fmt::format_to(it, "({}:{}):({}:{})\n", static_cast<std::int32_t>(t->pid),
                   static_cast<std::int32_t>(t->tid), static_cast<std::int32_t>(t->ppid),
                   static_cast<std::int32_t>(t->ptid));
  } else if (auto* l = r.get<Lost>()) {
    fmt::format_to(it, " lost {}\n", l->lost);
  } else if (auto* ls = r.get<LostSamples>()) {
    fmt::format_to(it, " lost {}\n", ls->lost);
  } else if (auto* th = r.get<Throttle>()) {
    fmt::format_to(it, " {} id {} stream_id {}\n", th->time, th->id, th->stream_id);
  } else if (auto* sw = r.get<Switch>()) {
    fmt::format_to(it, " {}{}", sw->out ? "OUT" : "IN ", sw->preempt ? " preempt" : "        ");
    if (r.kind() == Type::switch_cpu_wide)
      fmt::format_to(it, "  {} pid/tid: {:>5}/{:<5}", sw->out ? "next" : "prev",
                     static_cast<std::int32_t>(sw->next_prev_pid),
                     static_cast<std::int32_t>(sw->next_prev_tid));
    out_.push_back('\n');
  } else if (auto* k = r.get<Ksymbol>()) {
    fmt::format_to(it, " addr {:x} len {} type {} flags {:#x} name {}\n", k->addr, k->len, k->ksym_type,
                   k->flags, k->name);
  } else if (auto* g = r.get<Cgroup>()) {
    fmt::format_to(it, " cgroup: {} {}\n", g->id, g->path);
  } else if (auto* a = r.get<Aux>()) {
    fmt::format_to(it, " offset: {:#x} size: {:#x} flags: {:#x}\n", a->aux_offset, a->aux_size, a->flags);
  } else if (auto* b = r.get<BpfEvent>()) {
    fmt::format_to(it, " type {}, flags {}, id {}\n", b->type, b->flags, b->id);
  } else {
    out_.push_back('\n');
  }
}

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Printer::json_sample(const Record& rec, const Sample& s, const Attr& attr) {
  auto it = std::back_inserter(out_);
  if (s.has(sample_identifier)) fmt::format_to(it, ",\"identifier\":{}", s.identifier);
  if (s.has(sample_ip)) fmt::format_to(it, ",\"ip\":{}", s.ip);
  if (s.has(sample_tid))
    fmt::format_to(it, ",\"pid\":{},\"tid\":{}", static_cast<std::int32_t>(s.pid),
                   static_cast<std::int32_t>(s.tid));
  if (s.has(sample_time)) fmt::format_to(it, ",\"time\":{}", s.time);
  if (s.has(sample_addr)) fmt::format_to(it, ",\"addr\":{}", s.addr);
  if (s.has(sample_id)) fmt::format_to(it, ",\"id\":{}", s.id);
  if (s.has(sample_stream_id)) fmt::format_to(it, ",\"stream_id\":{}", s.stream_id);
  if (s.has(sample_cpu)) fmt::format_to(it, ",\"cpu\":{}", s.cpu);
  if (s.has(sample_period)) fmt::format_to(it, ",\"period\":{}", s.period);
  if (s.has(sample_read)) {
    fmt::format_to(it, ",\"read\":{{");
    if (s.read.format & 1) fmt::format_to(it, "\"time_enabled\":{},", s.read.time_enabled);
    if (s.read.format & 2) fmt::format_to(it, "\"time_running\":{},", s.read.time_running);
    fmt::format_to(it, "\"values\":[");
    for (std::size_t i = 0; i < s.read.size(); ++i) {
      ReadValue v = s.read[i];
      fmt::format_to(it, "{}{{\"value\":{}", i ? "," : "", v.value);
      if (s.read.format & 4) fmt::format_to(it, ",\"id\":{}", v.id);
      if (s.read.format & 16) fmt::format_to(it, ",\"lost\":{}", v.lost);
      out_.push_back('}');
    }
    fmt::format_to(it, "]}}");
  }
  if (s.has(sample_callchain)) {
    fmt::format_to(it, ",\"callchain\":[");
    bool first = true;
    for (std::uint64_t ip : s.callchain)
      fmt::format_to(it, "{}{}", std::exchange(first, false) ? "" : ",", ip);
    out_.push_back(']');
  }
  if (s.has(sample_raw)) {
    fmt::format_to(it, ",\"raw\":\"");
    for (std::byte b : s.raw) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
    out_.push_back('"');
    if (const Tracepoint* tp = tracepoint_of(attr)) {
      fmt::format_to(it, ",\"fields\":{{");
      bool first = true;
      for (const TracepointField& f : tp->decode(s.raw, false, rec.offset)) {
        fmt::format_to(it, "{}{}:", std::exchange(first, false) ? "" : ",", json_string(f.name));
        std::visit(
            [&](const auto& v) {
              using T = std::decay_t<decltype(v)>;
              if constexpr (std::is_same_v<T, std::string>) {
                out_.append(json_string(v));
              } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>) {
                fmt::format_to(it, "{}", v);
              } else {
                fmt::format_to(it, "[{}]", fmt::join(v, ","));
              }
            },
            f.value);
      }
      out_.push_back('}');
    }
  }
  if (s.has(sample_branch_stack)) {
    fmt::format_to(it, ",\"branch_stack\":{{");
    if (s.branches.hw_idx) fmt::format_to(it, "\"hw_idx\":{},", *s.branches.hw_idx);
    fmt::format_to(it, "\"entries\":[");
    for (std::size_t i = 0; i < s.branches.size(); ++i) {
      Branch b = s.branches[i];
      fmt::format_to(it, "{}{{\"from\":{},\"to\":{},\"flags\":{}", i ? "," : "", b.from, b.to, b.flags);
      if (!s.branches.counters.empty()) fmt::format_to(it, ",\"counters\":{}", s.branches.counters[i]);
      out_.push_back('}');
    }
    fmt::format_to(it, "]}}");
  }
  auto regs = [&](const char* name, const Registers& r) {
    fmt::format_to(it, ",\"{}\":{{\"abi\":{},\"mask\":{},\"values\":[", name, r.abi, r.mask);
    bool first = true;
    for (std::uint64_t v : r.values) fmt::format_to(it, "{}{}", std::exchange(first, false) ? "" : ",", v);
    fmt::format_to(it, "]}}");
  };
  if (s.has(sample_regs_user)) regs("regs_user", s.regs_user);
  if (s.has(sample_stack_user))
    fmt::format_to(it, ",\"stack_user\":{{\"size\":{},\"dyn_size\":{}}}", s.stack_user.data.size(),
                   s.stack_user.dyn_size);
  if (s.has(sample_weight)) fmt::format_to(it, ",\"weight\":{}", s.weight.full);
  if (s.has(sample_weight_struct))
    fmt::format_to(it, ",\"weight\":{{\"var1_dw\":{},\"var2_w\":{},\"var3_w\":{}}}", s.weight.var1_dw(),
                   s.weight.var2_w(), s.weight.var3_w());
  if (s.has(sample_data_src)) fmt::format_to(it, ",\"data_src\":{}", s.data_src);
  if (s.has(sample_transaction)) fmt::format_to(it, ",\"transaction\":{}", s.transaction);
  if (s.has(sample_regs_intr)) regs("regs_intr", s.regs_intr);
  if (s.has(sample_phys_addr)) fmt::format_to(it, ",\"phys_addr\":{}", s.phys_addr);
  if (s.has(sample_cgroup)) fmt::format_to(it, ",\"cgroup\":{}", s.cgroup);
  if (s.has(sample_data_page_size)) fmt::format_to(it, ",\"data_page_size\":{}", s.data_page_size);
  if (s.has(sample_code_page_size)) fmt::format_to(it, ",\"code_page_size\":{}", s.code_page_size);
  if (s.has(sample_aux)) fmt::format_to(it, ",\"aux_size\":{}", s.aux.size());
}

void Printer::json(const Record& r) {
  auto it = std::back_inserter(out_);
  auto name = type_name(r.type);
  fmt::format_to(it, "{{\"offset\":{},\"type\":\"{}\",\"misc\":{},\"size\":{}", r.offset,
                 name.empty() ? fmt::format("{}", r.type) : std::string(name), r.misc, r.size);
  if (r.type < user_type_start) {
    fmt::format_to(it, ",\"cpumode\":\"{}\"", cpumode_letter(r.misc));
    if (r.attr != Record::npos)
      fmt::format_to(it, ",\"event\":{}", json_string(file_.event_name(r.attr)));
    else
      fmt::format_to(it, ",\"event\":null");
  }
  if (auto* s = r.get<Sample>()) {
    json_sample(r, *s, file_.formats().attr(r.attr));
  } else if (auto* m = r.get<Mmap>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"addr\":{},\"len\":{},\"pgoff\":{},\"filename\":{}",
                   static_cast<std::int32_t>(m->pid), static_cast<std::int32_t>(m->tid), m->addr, m->len,
                   m->pgoff, json_string(m->filename));
  } else if (auto* m2 = r.get<Mmap2>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"addr\":{},\"len\":{},\"pgoff\":{}",
                   static_cast<std::int32_t>(m2->pid), static_cast<std::int32_t>(m2->tid), m2->addr, m2->len,
                   m2->pgoff);
    if (r.misc & misc_mmap_build_id) {
      fmt::format_to(it, ",\"build_id\":\"");
      for (std::byte b : m2->build_id) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
      out_.push_back('"');
    } else {
      fmt::format_to(it, ",\"maj\":{},\"min\":{},\"ino\":{},\"ino_generation\":{}", m2->maj, m2->min, m2->ino,
                     m2->ino_generation);
    }
    fmt::format_to(it, ",\"prot\":{},\"flags\":{},\"filename\":{}", m2->prot, m2->flags,
                   json_string(m2->filename));
  } else if (auto* c = r.get<Comm>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"comm\":{},\"exec\":{}", static_cast<std::int32_t>(c->pid),
                   static_cast<std::int32_t>(c->tid), json_string(c->comm), c->exec);
  } else if (auto* t = r.get<Task>()) {
    fmt::format_to(it, ",\"pid\":{},\"ppid\":{},\"tid\":{},\"ptid\":{},\"time\":{}",
                   static_cast<std::int32_t>(t->pid), static_cast<std::int32_t>(t->ppid),
                   static_cast<std::int32_t>(t->tid), static_cast<std::int32_t>(t->ptid), t->time);
  } else if (auto* l = r.get<Lost>()) {
    fmt::format_to(it, ",\"id\":{},\"lost\":{}", l->id, l->lost);
  } else if (auto* ls = r.get<LostSamples>()) {
    fmt::format_to(it, ",\"lost\":{}", ls->lost);
  } else if (auto* th = r.get<Throttle>()) {
    fmt::format_to(it, ",\"time\":{},\"id\":{},\"stream_id\":{}", th->time, th->id, th->stream_id);
  } else if (auto* rd = r.get<Read>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"values\":[", static_cast<std::int32_t>(rd->pid),
                   static_cast<std::int32_t>(rd->tid));
    for (std::size_t i = 0; i < rd->values.size(); ++i)
      fmt::format_to(it, "{}{{\"value\":{},\"id\":{}}}", i ? "," : "", rd->values[i].value, rd->values[i].id);
    out_.push_back(']');
  } else if (auto* sw = r.get<Switch>()) {
    fmt::format_to(it, ",\"out\":{},\"preempt\":{}", sw->out, sw->preempt);
    if (r.kind() == Type::switch_cpu_wide)
      fmt::format_to(it, ",\"next_prev_pid\":{},\"next_prev_tid\":{}",
                     static_cast<std::int32_t>(sw->next_prev_pid),
                     static_cast<std::int32_t>(sw->next_prev_tid));
  } else if (auto* a = r.get<Aux>()) {
    fmt::format_to(it, ",\"aux_offset\":{},\"aux_size\":{},\"flags\":{}", a->aux_offset, a->aux_size,
                   a->flags);
  } else if (auto* is = r.get<ItraceStart>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{}", static_cast<std::int32_t>(is->pid),
                   static_cast<std::int32_t>(is->tid));
  } else if (auto* ns = r.get<Namespaces>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"namespaces\":[", static_cast<std::int32_t>(ns->pid),
                   static_cast<std::int32_t>(ns->tid));
    for (std::size_t i = 0; i < ns->size(); ++i)
      fmt::format_to(it, "{}{{\"dev\":{},\"inode\":{}}}", i ? "," : "", ns->words[2 * i],
                     ns->words[2 * i + 1]);
    out_.push_back(']');
  } else if (auto* k = r.get<Ksymbol>()) {
    fmt::format_to(it, ",\"addr\":{},\"len\":{},\"ksym_type\":{},\"flags\":{},\"name\":{}", k->addr, k->len,
                   k->ksym_type, k->flags, json_string(k->name));
  } else if (auto* b = r.get<BpfEvent>()) {
    fmt::format_to(it, ",\"bpf_type\":{},\"flags\":{},\"id\":{},\"tag\":\"", b->type, b->flags, b->id);
    for (auto v : b->tag) fmt::format_to(it, "{:02x}", v);
    out_.push_back('"');
  } else if (auto* g = r.get<Cgroup>()) {
    fmt::format_to(it, ",\"id\":{},\"path\":{}", g->id, json_string(g->path));
  } else if (auto* tp = r.get<TextPoke>()) {
    fmt::format_to(it, ",\"addr\":{},\"old_len\":{},\"new_len\":{}", tp->addr, tp->old_bytes.size(),
                   tp->new_bytes.size());
  } else if (auto* hw = r.get<AuxOutputHwId>()) {
    fmt::format_to(it, ",\"hw_id\":{}", hw->hw_id);
  } else if (auto* x = r.get<IdIndex>()) {
    fmt::format_to(it, ",\"entries\":[");
    for (std::size_t i = 0; i < x->size(); ++i) {
      IdIndexEntry e = (*x)[i];
      fmt::format_to(it, "{}{{\"id\":{},\"idx\":{},\"cpu\":{},\"tid\":{}}}", i ? "," : "", e.id, e.idx,
                     static_cast<std::int64_t>(e.cpu), static_cast<std::int64_t>(e.tid));
    }
    out_.push_back(']');
  } else if (auto* tc = r.get<TimeConv>()) {
    fmt::format_to(it, ",\"time_shift\":{},\"time_mult\":{},\"time_zero\":{}", tc->time_shift, tc->time_mult,
                   tc->time_zero);
  } else if (auto* tm = r.get<ThreadMap>()) {
    fmt::format_to(it, ",\"threads\":[");
    for (std::size_t i = 0; i < tm->nr; ++i) {
      ThreadMapEntry e = (*tm)[i];
      fmt::format_to(it, "{}{{\"pid\":{},\"comm\":{}}}", i ? "," : "", static_cast<std::int64_t>(e.pid),
                     json_string(e.comm));
    }
    out_.push_back(']');
  } else if (auto* f = r.get<HeaderFeature>()) {
    fmt::format_to(it, ",\"feature\":{},\"data_size\":{}", f->feature, f->data.size());
  } else if (auto* ha = r.get<HeaderAttr>()) {
    fmt::format_to(it, ",\"attr_type\":{},\"config\":{},\"ids\":[", ha->attr.type, ha->attr.config);
    bool first = true;
    for (std::uint64_t id : ha->ids) fmt::format_to(it, "{}{}", std::exchange(first, false) ? "" : ",", id);
    out_.push_back(']');
  }
  if (r.sample_id.fields && !r.get<Sample>()) {
    const SampleId& s = r.sample_id;
    fmt::format_to(it, ",\"sample_id\":{{");
    bool first = true;
    auto sep = [&] { return std::exchange(first, false) ? "" : ","; };
    if (s.has(sample_tid))
      fmt::format_to(it, "{}\"pid\":{},\"tid\":{}", sep(), static_cast<std::int32_t>(s.pid),
                     static_cast<std::int32_t>(s.tid));
    if (s.has(sample_time)) fmt::format_to(it, "{}\"time\":{}", sep(), s.time);
    if (s.has(sample_id) || s.has(sample_identifier)) fmt::format_to(it, "{}\"id\":{}", sep(), s.id);
    if (s.has(sample_stream_id)) fmt::format_to(it, "{}\"stream_id\":{}", sep(), s.stream_id);
    if (s.has(sample_cpu)) fmt::format_to(it, "{}\"cpu\":{}", sep(), s.cpu);
    out_.push_back('}');
  }
  out_.append(std::string_view("}\n"));
}

// The first line of --format json: the schema, and the events the file describes up front.
void Printer::json_header() {
  auto it = std::back_inserter(out_);
  fmt::format_to(it, "{{\"schema\":\"perfspec-script/1\",\"pipe\":{},\"events\":[", file_.pipe());
  for (std::size_t i = 0; i < file_.events().size(); ++i) {
    const auto& e = file_.events()[i];
    fmt::format_to(
        it, "{}{{\"name\":{},\"type\":{},\"config\":{},\"sample_type\":{},\"read_format\":{},\"ids\":[",
        i ? "," : "", json_string(e.name), e.attr.type, e.attr.config, e.attr.sample_type,
        e.attr.read_format);
    for (std::size_t k = 0; k < e.ids.size(); ++k) fmt::format_to(it, "{}{}", k ? "," : "", e.ids[k]);
    out_.append(std::string_view("]}"));
  }
  out_.append(std::string_view("]}\n"));
}

void Printer::print_summary() {
  auto it = std::back_inserter(out_);
  if (o_.format == "json") {
    nlohmann::ordered_json j;
    j["schema"] = "perfspec-script-summary/1";
    for (const auto& [name, n] : counts_) j["records"][name] = n;
    j["lost"] = lost_;
    j["lost_samples"] = lost_samples_;
    j["throttle"] = throttled_;
    j["unthrottle"] = unthrottled_;
    j["unknown_id"] = unknown_id_;
    fmt::format_to(it, "{}\n", j.dump());
    return;
  }
  std::uint64_t total = 0;
  for (const auto& [name, n] : counts_) total += n;
  fmt::format_to(it, "{:<20} {:>12}\n", "record", "count");
  for (const auto& [name, n] : counts_) fmt::format_to(it, "{:<20} {:>12}\n", name, n);
  fmt::format_to(it, "{:<20} {:>12}\n", "total", total);
  fmt::format_to(it, "lost: {} records lost by the kernel (LOST), {} samples lost (LOST_SAMPLES)\n", lost_,
                 lost_samples_);
  if (throttled_ || unthrottled_)
    fmt::format_to(it, "throttled: {} times, unthrottled: {} times\n", throttled_, unthrottled_);
  if (unknown_id_) fmt::format_to(it, "{} records name an id no attr of the file has\n", unknown_id_);
}

int Printer::run() {
  check_output();
  Record r;
  // What was read before a record that does not follow the format is printed, then the error.
  auto finish_then_throw = [&](auto&& print_partial) {
    print_partial();
    flush();
    throw;
  };
  if (o_.summary) {
    try {
      while (file_.next(r)) count(r);
    } catch (const Error&) {
      finish_then_throw([&] { print_summary(); });
    }
    print_summary();
    flush();
    return 0;
  }
  if (o_.format == "json") json_header();
  // Every attr's samples and records carry their time: then perf sorts them (in pipe mode too, where
  // all of the stream is known only at its end).
  auto all_timed = [&] {
    for (std::size_t i = 0; i < file_.formats().size(); ++i)
      if (!(file_.formats().attr(i).sample_type & sample_time) || !file_.formats().attr(i).sample_id_all)
        return false;
    return true;
  };
  bool pipe = file_.pipe();
  if (o_.format == "json" || (!pipe && !all_timed())) {
    try {
      while (file_.next(r)) {
        // In pipe mode next() has just added the ATTR's event; in a file an ATTR record in the data
        // section adds none (the header's attrs are the file's), and there may be no event at all.
        if (r.kind() == Type::header_attr && file_.pipe()) pipe_attr(file_.events().size() - 1);
        if (o_.format == "json")
          json(r);
        else
          text(r);
        maybe_flush();
      }
    } catch (const Error&) {
      finish_then_throw([] {});
    }
    flush();
    return 0;
  }
  // Text: in time order, as perf sorts records (stable: records of one time keep their file order).
  // perf's own records (attrs, rounds) carry no time and are not printed.
  // A file's records mostly come in time order already (each CPU's are, and perf writes them out in
  // rounds). The first pass keeps only the others, `late`: those earlier than a record before them.
  // The second pass reads the file again, prints the records in order as they come, and before each,
  // the late ones that sort before it. Ordering by (time, offset) is the stable sort by time. Nothing
  // is kept for the records in order: on a large file, a list of them (16 bytes each) cost more than
  // decoding them twice. A pipe's records, and those of a compressed file (whose decompressed chunks
  // a second pass would make again in another order), are all kept instead and sorted once: a pipe's
  // as decoded (a later ATTR could change how one decodes; the stream stays in memory, so their views
  // stay valid), a compressed file's by offset (decode_at finds them in the chunks, all still there).
  struct At {
    std::uint64_t time, offset;
    bool operator<(const At& o) const { return time != o.time ? time < o.time : offset < o.offset; }
  };
  bool keep_all = pipe || file_.has_feature(Feature::compressed);
  std::vector<At> order;                    // keep_all: every record (offset: an index of `kept` in a pipe)
  std::vector<Record> kept;                 // keep_all in a pipe
  std::vector<At> late;                     // sorted by (time, offset) before the second pass
  std::vector<std::uint64_t> late_offsets;  // the same records, in file order
  std::size_t in_order = 0;                 // records the second pass prints as it reads them
  std::uint64_t last_time = 0;
  auto print_in_order = [&] {
    if (keep_all) {
      if (all_timed())
        std::stable_sort(order.begin(), order.end(),
                         [](const At& a, const At& b) { return a.time < b.time; });
      for (const At& a : order) {
        if (pipe) {
          text(kept[a.offset]);
        } else {
          file_.decode_at(a.offset, r);
          text(r);
        }
        maybe_flush();
      }
      return;
    }
    std::sort(late.begin(), late.end());
    Record other;
    std::size_t next_late = 0, skip = 0;
    auto print_late_before = [&](const At* limit) {
      for (; next_late < late.size() && (!limit || late[next_late] < *limit); ++next_late) {
        file_.decode_at(late[next_late].offset, other);
        text(other);
        maybe_flush();
      }
    };
    file_.rewind();
    for (std::size_t printed = 0; printed < in_order;) {
      if (!file_.next(r)) break;  // cannot happen: the first pass read as far
      if (r.type >= user_type_start) continue;
      if (skip < late_offsets.size() && late_offsets[skip] == r.offset) {
        ++skip;
        continue;
      }
      At at{r.sample_id.has(sample_time) ? r.sample_id.time : 0, r.offset};
      print_late_before(&at);
      text(r);
      maybe_flush();
      ++printed;
    }
    print_late_before(nullptr);
  };
  try {
    while (file_.next(r)) {
      if (r.kind() == Type::header_attr && pipe) pipe_attr(file_.events().size() - 1);
      if (r.type >= user_type_start) continue;
      if (keep_all) {
        order.push_back({r.sample_id.has(sample_time) ? r.sample_id.time : 0, pipe ? kept.size() : r.offset});
        if (pipe) kept.push_back(r);
        continue;
      }
      std::uint64_t time = r.sample_id.has(sample_time) ? r.sample_id.time : 0;
      if (time >= last_time) {
        last_time = time;
        ++in_order;
      } else {
        late.push_back({time, r.offset});
        late_offsets.push_back(r.offset);
      }
    }
  } catch (const Error&) {
    finish_then_throw(print_in_order);
  }
  try {
    print_in_order();  // a tracepoint payload that does not follow its format stops it here
  } catch (const Error&) {
    finish_then_throw([] {});
  }
  flush();
  return 0;
}

}  // namespace

int run_script(const ScriptOptions& options) {
  // The -F options are read first, in order, as perf reads them with its other options (its warnings
  // come before anything of the file); they are text's, but a list that is wrong is wrong in JSON too.
  FieldSpec fields;
  for (const std::string& f : options.fields)
    fields.parse(f, [&](std::string_view warning) {
      if (options.format == "text")
        std::fprintf(stderr, "%.*s\n", static_cast<int>(warning.size()), warning.data());
    });
  fields.refuse_unprintable();
  auto file = PerfData::open(options.input);
  Printer p(file, options, fields);
  return p.run();
}

}  // namespace perfspec::tools
