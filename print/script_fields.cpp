// SPDX-License-Identifier: MIT
// perf script's -F: its table of fields by event type and the rules of parse_output_fields
// (tools/perf/builtin-script.c of Linux 6.12), and the texts perf gives data_src, registers and page
// sizes (util/mem-events.c, util/perf-regs-arch/, util/units.c).
#include "print/script_fields.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec::script_fields {
namespace {

struct Name {
  std::string_view name;
  std::uint64_t field;
};
// perf's all_output_options, in its order (the order "Invalid field requested." is decided in does
// not matter: a name is one field)
constexpr Name names[] = {
    {"comm", out_comm},
    {"tid", out_tid},
    {"pid", out_pid},
    {"time", out_time},
    {"cpu", out_cpu},
    {"event", out_event},
    {"trace", out_trace},
    {"ip", out_ip},
    {"sym", out_sym},
    {"dso", out_dso},
    {"dsoff", out_dsoff},
    {"addr", out_addr},
    {"symoff", out_symoff},
    {"srcline", out_srcline},
    {"period", out_period},
    {"iregs", out_iregs},
    {"uregs", out_uregs},
    {"brstack", out_brstack},
    {"brstacksym", out_brstacksym},
    {"data_src", out_data_src},
    {"weight", out_weight},
    {"bpf-output", out_bpf_output},
    {"callindent", out_callindent},
    {"insn", out_insn},
    {"disasm", out_disasm},
    {"insnlen", out_insnlen},
    {"brstackinsn", out_brstackinsn},
    {"brstackoff", out_brstackoff},
    {"synth", out_synth},
    {"phys_addr", out_phys_addr},
    {"metric", out_metric},
    {"misc", out_misc},
    {"srccode", out_srccode},
    {"ipc", out_ipc},
    {"tod", out_tod},
    {"data_page_size", out_data_page_size},
    {"code_page_size", out_code_page_size},
    {"ins_lat", out_ins_lat},
    {"brstackinsnlen", out_brstackinsnlen},
    {"machine_pid", out_machine_pid},
    {"vcpu", out_vcpu},
    {"cgroup", out_cgroup},
    {"retire_lat", out_retire_lat},
    {"brstackdisasm", out_brstackdisasm},
    {"brcntr", out_brcntr},
};

// Why perfspec cannot print a field yet (the fields outside `printable`).
std::string_view why_not(std::uint64_t field) {
  if (field & (out_dsoff | out_srccode | out_callindent))
    return "perfspec does not print source code, dso offsets or call indents";
  if (field & (out_brstacksym | out_brstackoff)) return "perfspec does not print branch stacks";
  if (field & (out_brstackinsn | out_brstackinsnlen | out_brstackdisasm | out_brcntr))
    return "perfspec does not print branch stacks";
  if (field & (out_insn | out_insnlen | out_disasm))
    return "perfspec does not read the binaries' instructions";
  if (field & (out_synth | out_ipc)) return "perfspec does not decode AUX-area traces";
  if (field & out_bpf_output) return "perfspec does not print BPF output";
  if (field & (out_machine_pid | out_vcpu)) return "perfspec does not read guest machines";
  return "perfspec does not read the file's clock data";  // tod
}

constexpr std::string_view printable_list =
    "comm, tid, pid, time, cpu, misc, event, trace, ip, sym, symoff, dso, srcline, addr, period, iregs, "
    "uregs, "
    "data_src, weight, ins_lat, retire_lat, phys_addr, data_page_size, code_page_size, cgroup, brstack, "
    "metric (of samples without group reads)";

[[noreturn]] void refuse(std::string message, std::string help = {}) {
  throw Error(ErrorKind::usage, std::move(message), std::move(help));
}

}  // namespace

std::string_view field_name(std::uint64_t field) {
  for (const Name& n : names)
    if (n.field == field) return n.name;
  return {};
}

int output_type(std::uint32_t attr_type) {
  if (attr_type == 0x80000000U) return synth;  // PERF_TYPE_SYNTH
  return attr_type < 6 ? static_cast<int>(attr_type) : other;
}

std::string_view event_type_name(int type) {
  switch (type) {
    case hardware: return "hardware";
    case software: return "software";
    case tracepoint: return "tracepoint";
    case hw_cache: return "hardware-cache";
    default: return "unknown";
  }
}

// perf's defaults: what each type prints without -F, and what it can never print (a tracepoint's
// payload is only a tracepoint's; BPF output only a software event's).
FieldSpec::FieldSpec() {
  constexpr std::uint64_t common = out_comm | out_tid | out_cpu | out_time | out_event;
  constexpr std::uint64_t located = common | out_ip | out_sym | out_symoff | out_dso;
  for (int t = 0; t < n_types; ++t) {
    types_[t].fields = located | out_period;
    types_[t].invalid_fields = out_trace | out_bpf_output;
  }
  types_[software].fields |= out_bpf_output;
  types_[software].invalid_fields = out_trace;
  types_[tracepoint].fields = common | out_trace;
  types_[tracepoint].invalid_fields = 0;
  types_[raw].fields |= out_addr | out_data_src | out_weight | out_phys_addr | out_data_page_size |
                        out_code_page_size | out_ins_lat | out_retire_lat;
  types_[synth].fields = located | out_synth;
}

bool FieldSpec::user_set() const {
  return std::any_of(types_.begin(), types_.end(), [](const TypeFields& t) { return t.user_set; });
}

// parse_output_fields: `[type:]field,...`. Without `+` or `-` anywhere in the text the list replaces
// what the type (or every type) prints; with them, each `+f` / `-f` changes it, and a list may not mix
// the two forms. A field for every type is ignored, with a warning, where the type cannot have it; named
// for one type, that is an error.
void FieldSpec::parse(std::string_view arg, const std::function<void(std::string_view)>& warn) {
  std::string_view list = arg;
  int type = take_type(arg, list, warn);
  Change change = Change::unchanged;
  // strtok: empty names between commas are skipped
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t comma = std::min(list.find(',', at), list.size());
    std::string_view tok = list.substr(at, comma - at);
    at = comma + 1;
    if (tok.empty()) continue;
    if (tok.front() == '+' || tok.front() == '-') {
      if (change == Change::set) refuse("Cannot mix +-field with overridden fields");
      change = tok.front() == '+' ? Change::add : Change::remove;
      tok.remove_prefix(1);
    } else {
      if (change != Change::set && change != Change::unchanged)
        refuse("Cannot mix +-field with overridden fields");
      change = Change::set;
    }
    if (tok == "flags") {  // not a field of the table: perf prints a sample's flags before the payload
      flags_asked_ = change != Change::remove;
      continue;
    }
    auto n = std::find_if(std::begin(names), std::end(names), [&](const Name& x) { return x.name == tok; });
    if (n == std::end(names)) refuse("Invalid field requested.", fmt::format("fields: {}", printable_list));
    apply(type, change, n->name, n->field, warn);
  }
}

int FieldSpec::take_type(std::string_view arg, std::string_view& list,
                         const std::function<void(std::string_view)>& warn) {
  // perf looks for `+` and `-` in the whole text after the type, so a name holding `-` (bpf-output)
  // keeps the defaults too
  auto changes_defaults = [](std::string_view s) { return s.find_first_of("+-") != std::string_view::npos; };
  auto colon = arg.find(':');
  if (colon == std::string_view::npos) {
    if (arg.empty()) refuse("Cannot set fields to 'none' for all event types.");
    if (!changes_defaults(arg)) {
      if (user_set()) warn("Overriding previous field request for all events.");
      for (int j = 0; j < n_types; ++j) {
        types_[j].fields = 0;
        asked_[j] = 0;
        types_[j].user_set = true;
        types_[j].wildcard_set = true;
      }
    }
    return -1;
  }
  static constexpr std::pair<std::string_view, int> prefixes[] = {{"hw", hardware},      {"sw", software},
                                                                  {"trace", tracepoint}, {"raw", raw},
                                                                  {"break", breakpoint}, {"synth", synth}};
  std::string_view t = arg.substr(0, colon);
  list = arg.substr(colon + 1);
  auto p =
      std::find_if(std::begin(prefixes), std::end(prefixes), [&](const auto& x) { return x.first == t; });
  if (p == std::end(prefixes))
    refuse("Invalid event type in field string.", "types: hw, sw, trace, raw, break, synth");
  int type = p->second;
  if (types_[type].user_set)
    warn(fmt::format("Overriding previous field request for {} events.", event_type_name(type)));
  if (!changes_defaults(list)) {
    types_[type].fields = 0;
    asked_[type] = 0;
    types_[type].user_set = true;
    types_[type].wildcard_set = false;
  }
  return type;
}

void FieldSpec::apply(int type, Change change, std::string_view name, std::uint64_t f,
                      const std::function<void(std::string_view)>& warn) {
  if (type == -1) {
    for (int j = 0; j < n_types; ++j) {
      TypeFields& t = types_[j];
      if (t.invalid_fields & f) {
        warn(fmt::format("'{}' not valid for {} events. Ignoring.", name, event_type_name(j)));
        continue;
      }
      if (change == Change::remove) {
        t.fields &= ~f;
        t.user_set_fields &= ~f;
        t.user_unset_fields |= f;
        asked_[j] &= ~f;
      } else {
        t.fields |= f;
        t.user_set_fields |= f;
        t.user_unset_fields &= ~f;
        asked_[j] |= f;
      }
      t.user_set = true;
      t.wildcard_set = true;
    }
    return;
  }
  TypeFields& t = types_[type];
  if (t.invalid_fields & f) refuse(fmt::format("'{}' not valid for {} events.", name, event_type_name(type)));
  // named for one type, a field is not "set by the user" in perf's sense (user_set_fields): one the
  // samples lack is left out, not an error
  if (change == Change::remove) {
    t.fields &= ~f;
    asked_[type] &= ~f;
  } else {
    t.fields |= f;
    asked_[type] |= f;
  }
  t.user_set = true;
  t.wildcard_set = true;
}

void FieldSpec::refuse_unprintable() const {
  auto refuse_field = [](std::string_view name, std::string_view why) {
    refuse(fmt::format("-F {}: not supported yet ({})", name, why),
           fmt::format("fields: {}", printable_list));
  };
  if (flags_asked_) refuse_field("flags", "perfspec does not decode AUX-area traces");
  for (const Name& n : names)
    for (int j = 0; j < n_types; ++j)
      if (asked_[j] & types_[j].fields & n.field & ~printable) refuse_field(n.name, why_not(n.field));
}

// ---- data_src: perf_script__meminfo_scnprintf (util/mem-events.c) ----
namespace {

// union perf_mem_data_src, as <linux/perf_event.h> lays it out
struct DataSrc {
  std::uint64_t v;
  unsigned bits(unsigned shift, unsigned width) const {
    return static_cast<unsigned>((v >> shift) & ((1ULL << width) - 1));
  }
  unsigned op() const { return bits(0, 5); }
  unsigned lvl() const { return bits(5, 14); }
  unsigned snoop() const { return bits(19, 5); }
  unsigned lock() const { return bits(24, 2); }
  unsigned dtlb() const { return bits(26, 7); }
  unsigned lvl_num() const { return bits(33, 4); }
  unsigned remote() const { return bits(37, 1); }
  unsigned snoopx() const { return bits(38, 2); }
  unsigned blk() const { return bits(40, 3); }
  unsigned hops() const { return bits(43, 3); }
};

// The names of the set bits of `mask`, bit i named names[i], joined by " or ".
template <std::size_t N>
void join_bits(std::string& out, unsigned mask, const std::string_view (&bit_names)[N]) {
  for (std::size_t i = 0; mask && i < N; ++i, mask >>= 1) {
    if (!(mask & 1)) continue;
    if (!out.empty()) out += " or ";
    out += bit_names[i];
  }
}

std::string op_text(const DataSrc& d) {
  unsigned op = d.op();
  if (op & 1) return "N/A";
  if (op & 2) return "LOAD";
  if (op & 4) return "STORE";
  if (op & 8) return "PFETCH";
  if (op & 16) return "EXEC";
  return "No";
}

std::string lvl_text(const DataSrc& d) {
  static constexpr std::string_view lvl_names[] = {"N/A",
                                                   "HIT",
                                                   "MISS",
                                                   "L1",
                                                   "LFB/MAB",
                                                   "L2",
                                                   "L3",
                                                   "Local RAM",
                                                   "Remote RAM (1 hop)",
                                                   "Remote RAM (2 hops)",
                                                   "Remote Cache (1 hop)",
                                                   "Remote Cache (2 hops)",
                                                   "I/O",
                                                   "Uncached"};
  // PERF_MEM_LVLNUM_*: 7 has no name; 15 is N/A, read as no level number at all
  static constexpr std::string_view lvlnum_names[16] = {
      {},    "L1",        "L2",      "L3",  "L4",   "L2 MHB", "Memory-side Cache", {}, "Uncached", "CXL",
      "I/O", "Any cache", "LFB/MAB", "RAM", "PMEM", "N/A"};
  // perf's table of hops has 5 names (0..4); the field has 3 bits, and perf 6.12 reads past the table for
  // 5..7, where its build finds null pointers, which glibc's printf writes "(null)"
  static constexpr std::string_view hops_names[8] = {
      "N/A",    "core, same node", "node, same socket", "socket, same board", "board", "(null)",
      "(null)", "(null)"};
  std::string_view hit_miss = (d.lvl() & 2) ? "hit" : (d.lvl() & 4) ? "miss" : "";
  unsigned num = d.lvl_num();
  if (num && num != 15) {
    std::string out = d.remote() ? "Remote " : "";
    if (d.hops()) out += fmt::format("{} ", hops_names[d.hops()]);
    if (!lvlnum_names[num].empty())
      out += lvlnum_names[num];
    else
      out += fmt::format("Unknown level {}", num);
    return out + " " + std::string(hit_miss);
  }
  unsigned lvl = d.lvl() & ~7U;  // not N/A, HIT or MISS
  if (!lvl) return "N/A";
  std::string out;
  join_bits(out, lvl, lvl_names);
  return out + " " + std::string(hit_miss);
}

std::string snoop_text(const DataSrc& d) {
  static constexpr std::string_view snoop_names[] = {"N/A", "None", "Hit", "Miss", "HitM"};
  static constexpr std::string_view snoopx_names[] = {"Fwd", "Peer"};
  std::string out;
  join_bits(out, d.snoop(), snoop_names);
  join_bits(out, d.snoopx(), snoopx_names);
  return out.empty() ? "N/A" : out;
}

std::string tlb_text(const DataSrc& d) {
  static constexpr std::string_view tlb_names[] = {"N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault"};
  unsigned m = d.dtlb();
  std::string out;
  join_bits(out, m & ~6U, tlb_names);  // HIT and MISS come after the levels
  if (out.empty()) out = "N/A";
  if (m & 2) out += " hit";
  if (m & 4) out += " miss";
  return out;
}

std::string lock_text(const DataSrc& d) {
  if (d.lock() & 1) return "N/A";
  return (d.lock() & 2) ? "Yes" : "No";
}

std::string blk_text(const DataSrc& d) {
  unsigned b = d.blk();
  if (!b || (b & 1)) return " N/A";
  std::string out;
  if (b & 2) out += " Data";
  if (b & 4) out += " Addr";
  return out;
}

}  // namespace

std::string data_src_text(std::uint64_t data_src) {
  DataSrc d{data_src};
  std::string text = fmt::format("{:>16x} |OP {}|LVL {}|SNP {}|TLB {}|LCK {}|BLK {}", data_src, op_text(d),
                                 lvl_text(d), snoop_text(d), tlb_text(d), lock_text(d), blk_text(d));
  // perf writes the decoding into a buffer of 100 and this line into another (scnprintf): what is
  // past 99 characters is lost, and the decoding is never cut before that
  if (text.size() > 99) text.resize(99);
  return text;
}

// ---- registers: perf_reg_name (util/perf_regs.c, util/perf-regs-arch/) ----

std::string normalize_arch(std::string_view m) {
  auto starts = [&](std::string_view p) { return m.substr(0, p.size()) == p; };
  if (m == "x86_64") return "x86";
  if (m.size() >= 4 && m[0] == 'i' && m[2] == '8' && m[3] == '6') return "x86";
  if (m == "sun4u" || starts("sparc")) return "sparc";
  if (starts("aarch64") || starts("arm64")) return "arm64";
  if (starts("arm") || m == "sa110") return "arm";
  if (starts("s390")) return "s390";
  if (starts("parisc")) return "parisc";
  if (starts("powerpc") || starts("ppc")) return "powerpc";
  if (starts("mips")) return "mips";
  if (m.size() >= 3 && starts("sh") && m[2] >= '0' && m[2] <= '9') return "sh";
  if (starts("loongarch")) return "loongarch";
  return std::string(m);  // riscv64 stays riscv64, which perf_reg_name does not know ("unknown")
}

namespace {
// The names perf 6.12's __perf_reg_name_<arch> gives each register number of the arch's
// <asm/perf_regs.h>, as perf built for x86 has them (csky's without __CSKYABIV2__); empty: none (perf's
// NULL).
constexpr std::string_view regs_x86[] = {
    "AX",    "BX",    "CX",    "DX",    "SI",    "DI",    "BP",    "SP",    "IP",    "FLAGS", "CS",
    "SS",    "DS",    "ES",    "FS",    "GS",    "R8",    "R9",    "R10",   "R11",   "R12",   "R13",
    "R14",   "R15",   {},      {},      {},      {},      {},      {},      {},      {},      "XMM0",
    "XMM0",  "XMM1",  "XMM1",  "XMM2",  "XMM2",  "XMM3",  "XMM3",  "XMM4",  "XMM4",  "XMM5",  "XMM5",
    "XMM6",  "XMM6",  "XMM7",  "XMM7",  "XMM8",  "XMM8",  "XMM9",  "XMM9",  "XMM10", "XMM10", "XMM11",
    "XMM11", "XMM12", "XMM12", "XMM13", "XMM13", "XMM14", "XMM14", "XMM15", "XMM15"};
constexpr std::string_view regs_arm64[] = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "lr",  "sp",  "pc",  {},    {},    {},
    {},    {},    {},    {},    {},    {},    {},    {},    {},    {},    "vg"};
constexpr std::string_view regs_arm[] = {"r0", "r1", "r2",  "r3", "r4", "r5", "r6", "r7",
                                         "r8", "r9", "r10", "fp", "ip", "sp", "lr", "pc"};
constexpr std::string_view regs_csky[] = {{},      "lr",    "pc",    {},      "sp",    {},      "a0",
                                          "a1",    "a2",    "a3",    "regs0", "regs1", "regs2", "regs3",
                                          "regs4", "regs5", "regs6", "regs7", "regs8", "regs9"};
constexpr std::string_view regs_loongarch[] = {
    "PC",   "%r1",  "%r2",  "%r3",  "%r4",  "%r5",  "%r6",  "%r7",  "%r8",  "%r9",  "%r10",
    "%r11", "%r12", "%r13", "%r14", "%r15", "%r16", "%r17", "%r18", "%r19", "%r20", "%r21",
    "%r22", "%r23", "%r24", "%r25", "%r26", "%r27", "%r28", "%r29", "%r30", "%r31"};
constexpr std::string_view regs_mips[] = {"PC",  "$1",  "$2",  "$3",  "$4",  "$5",  "$6",  "$7",
                                          "$8",  "$9",  "$10", "$11", "$12", "$13", "$14", "$15",
                                          "$16", "$17", "$18", "$19", "$20", "$21", "$22", "$23",
                                          "$24", "$25", {},    {},    "$28", "$29", "$30", "$31"};
constexpr std::string_view regs_powerpc[] = {
    "r0",    "r1",    "r2",    "r3",    "r4",   "r5",   "r6",    "r7",   "r8",    "r9",    "r10",     "r11",
    "r12",   "r13",   "r14",   "r15",   "r16",  "r17",  "r18",   "r19",  "r20",   "r21",   "r22",     "r23",
    "r24",   "r25",   "r26",   "r27",   "r28",  "r29",  "r30",   "r31",  "nip",   "msr",   "orig_r3", "ctr",
    "link",  "xer",   "ccr",   "softe", "trap", "dar",  "dsisr", "sier", "mmcra", "mmcr0", "mmcr1",   "mmcr2",
    "mmcr3", "sier2", "sier3", "pmc1",  "pmc2", "pmc3", "pmc4",  "pmc5", "pmc6",  "sdar",  "siar"};
constexpr std::string_view regs_riscv[] = {"pc", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "s0", "s1", "a0",
                                           "a1", "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
                                           "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
constexpr std::string_view regs_s390[] = {
    "R0",  "R1",  "R2",   "R3",   "R4",   "R5",   "R6",   "R7",   "R8",   "R9",  "R10", "R11",
    "R12", "R13", "R14",  "R15",  "FP0",  "FP1",  "FP2",  "FP3",  "FP4",  "FP5", "FP6", "FP7",
    "FP8", "FP9", "FP10", "FP11", "FP12", "FP13", "FP14", "FP15", "MASK", "PC"};
struct ArchRegs {
  std::string_view arch;
  std::span<const std::string_view> names;  // by register number
};
constexpr ArchRegs arch_regs[] = {
    {"x86", regs_x86},         {"arm64", regs_arm64},         {"arm", regs_arm},
    {"csky", regs_csky},       {"loongarch", regs_loongarch}, {"mips", regs_mips},
    {"powerpc", regs_powerpc}, {"riscv", regs_riscv},         {"s390", regs_s390}};
}  // namespace

std::string_view register_name(std::string_view arch, unsigned id) {
  for (const ArchRegs& a : arch_regs) {
    if (a.arch != arch) continue;
    if (id < a.names.size() && !a.names[id].empty()) return a.names[id];
    break;
  }
  return "unknown";
}

// unit_number__scnprintf: divided by 1024 while the quotient is above 1, up to G
std::string page_size_name(std::uint64_t size) {
  if (!size) return "N/A";
  static constexpr char units[] = "BKMG";
  int i = 0;
  while (size / 1024 > 1 && i < 3) {
    size /= 1024;
    ++i;
  }
  return fmt::format("{}{}", size, units[i]);
}

Weights weights_of(const record::Sample& s) {
  Weights w;
  if (!s.has(record::sample_weight) && !s.has(record::sample_weight_struct)) return w;
#if defined(__x86_64__) || defined(__i386__) || defined(__powerpc__) || defined(__powerpc64__)
  if (s.has(record::sample_weight)) {
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

// perf's get_branch_type (util/branch.c) of a branch entry's type and new_type bits: nothing for
// PERF_BR_UNKNOWN, the new types' names for PERF_BR_EXTEND_ABI (those of perf built for x86, as the
// reference is; glibc's "(null)" for a new type perf has no name for)
std::string_view branch_type_name(std::uint64_t type, std::uint64_t new_type) {
  static constexpr std::string_view types[] = {"",         "COND", "UNCOND",  "IND",    "CALL",
                                               "IND_CALL", "RET",  "SYSCALL", "SYSRET", "COND_CALL",
                                               "COND_RET", "ERET", "IRQ",     "SERROR", "NO_TX"};
  static constexpr std::string_view new_types[] = {"FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1",
                                                   "ARCH_2",     "ARCH_3",     "ARCH_4",     "ARCH_5"};
  if (type == 15) return new_type < std::size(new_types) ? new_types[new_type] : "(null)";
  return type < std::size(types) ? types[type] : "(null)";
}

// perf's branch_spec_desc, "-" for 0
std::string_view branch_spec_name(std::uint64_t spec) {
  static constexpr std::string_view specs[] = {"-", "SPEC_WRONG_PATH", "NON_SPEC_CORRECT_PATH",
                                               "SPEC_CORRECT_PATH"};
  return specs[spec & 3];
}

std::string file_arch(const record::PerfData& file) {
  std::optional<std::string> a = file.feature_string(record::Feature::arch);
  if (!a) {
    utsname u{};
    a = ::uname(&u) == 0 ? u.machine : "";
  }
  return normalize_arch(*a);
}

}  // namespace perfspec::script_fields
