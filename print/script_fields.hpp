// SPDX-License-Identifier: MIT
#pragma once
// perf script's -F field lists (tools/perf/builtin-script.c of Linux 6.12), read as perf reads them:
// the fields by event type with perf's defaults and the fields each type cannot have, `type:fields`,
// `+field` and `-field`, several -F in a row; and the texts of the fields that are no plain number:
// the data source of a memory access, register names, page sizes.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "perfspec/perf_data.hpp"
#include "perfspec/record.hpp"

namespace perfspec::script_fields {

// perf's enum perf_output_field: one bit per field. The values are perf's (their order is the order of
// its help text, not the order the fields are printed in).
inline constexpr std::uint64_t out_comm = 1ULL << 0, out_tid = 1ULL << 1, out_pid = 1ULL << 2,
                               out_time = 1ULL << 3, out_cpu = 1ULL << 4, out_event = 1ULL << 5,
                               out_trace = 1ULL << 6, out_ip = 1ULL << 7, out_sym = 1ULL << 8,
                               out_dso = 1ULL << 9, out_addr = 1ULL << 10, out_symoff = 1ULL << 11,
                               out_srcline = 1ULL << 12, out_period = 1ULL << 13, out_iregs = 1ULL << 14,
                               out_brstack = 1ULL << 15, out_brstacksym = 1ULL << 16,
                               out_data_src = 1ULL << 17, out_weight = 1ULL << 18,
                               out_bpf_output = 1ULL << 19, out_callindent = 1ULL << 20,
                               out_insn = 1ULL << 21, out_insnlen = 1ULL << 22, out_brstackinsn = 1ULL << 23,
                               out_brstackoff = 1ULL << 24, out_synth = 1ULL << 25,
                               out_phys_addr = 1ULL << 26, out_uregs = 1ULL << 27, out_metric = 1ULL << 28,
                               out_misc = 1ULL << 29, out_srccode = 1ULL << 30, out_ipc = 1ULL << 31,
                               out_tod = 1ULL << 32, out_data_page_size = 1ULL << 33,
                               out_code_page_size = 1ULL << 34, out_ins_lat = 1ULL << 35,
                               out_brstackinsnlen = 1ULL << 36, out_machine_pid = 1ULL << 37,
                               out_vcpu = 1ULL << 38, out_cgroup = 1ULL << 39, out_retire_lat = 1ULL << 40,
                               out_dsoff = 1ULL << 41, out_disasm = 1ULL << 42,
                               out_brstackdisasm = 1ULL << 43, out_brcntr = 1ULL << 44;

/// The fields perfspec script prints. The others need source lines, the binaries' code, branch stacks,
/// an AUX-area trace decoder, guest machines or clock data, which perfspec does not have yet; asking
/// for one of them is an error (removing one from the defaults is not).
inline constexpr std::uint64_t printable =
    out_comm | out_tid | out_pid | out_time | out_cpu | out_event | out_trace | out_ip | out_sym |
    out_symoff | out_dso | out_srcline | out_addr | out_period | out_iregs | out_uregs | out_data_src |
    out_weight | out_phys_addr | out_misc | out_data_page_size | out_code_page_size | out_ins_lat |
    out_retire_lat | out_cgroup | out_brstack | out_metric;

/// perf's field name of one field (output_field2str): empty for a mask of none or several.
std::string_view field_name(std::uint64_t field);

/// perf's output types: PERF_TYPE_HARDWARE .. PERF_TYPE_BREAKPOINT by their attr type, then
/// PERF_TYPE_SYNTH's and every other attr type's (a PMU of sysfs).
enum OutputType : int { hardware, software, tracepoint, hw_cache, raw, breakpoint, synth, other, n_types };
/// The output type of an attr type (perf's output_type()).
int output_type(std::uint32_t attr_type);
/// perf's name of a type in its messages (event_type(): "hardware", "software", "tracepoint",
/// "hardware-cache", else "unknown").
std::string_view event_type_name(int type);

/// What perf keeps per output type (builtin-script.c's `output[]`).
struct TypeFields {
  bool user_set = false;      ///< a -F named this type, or was for every type
  bool wildcard_set = false;  ///< ... with a field to print, or for every type
  std::uint64_t fields = 0;   ///< what is printed
  std::uint64_t invalid_fields = 0;
  std::uint64_t user_set_fields = 0;  ///< named by a -F for every type: missing from the samples is an error
  std::uint64_t user_unset_fields = 0;  ///< removed by a -F for every type (-field)
};

/// The -F options, read in order as perf's parse_output_fields reads each.
class FieldSpec {
 public:
  FieldSpec();  // perf's defaults per type
  /// One -F argument. `warn` gets each of perf's warnings (without its newline) as it comes. Throws
  /// Error (usage) with perf's message for a list perf refuses.
  void parse(std::string_view arg, const std::function<void(std::string_view)>& warn);
  /// After the last -F: an Error (usage) naming the first field asked for that perfspec cannot print
  /// yet, and why.
  void refuse_unprintable() const;
  const TypeFields& operator[](int type) const { return types_[static_cast<std::size_t>(type)]; }
  TypeFields& operator[](int type) { return types_[static_cast<std::size_t>(type)]; }
  /// Some -F was given (perf's output_set_by_user()).
  bool user_set() const;

 private:
  enum class Change { unchanged, set, add, remove };
  // The `type:` prefix of `arg` (-1: every type), `list` set to what follows; a list without +/-
  // clears what the type(s) print first.
  int take_type(std::string_view arg, std::string_view& list,
                const std::function<void(std::string_view)>& warn);
  // One field set, added or removed for `type` (-1: every type that can have it).
  void apply(int type, Change change, std::string_view name, std::uint64_t field,
             const std::function<void(std::string_view)>& warn);

  std::array<TypeFields, n_types> types_;
  // perfspec's own: the fields each type prints because a -F named them (set or added), and `flags`
  // (perf keeps that one apart: print_flags)
  std::array<std::uint64_t, n_types> asked_{};
  bool flags_asked_ = false;
};

/// perf_script__meminfo_scnprintf(data_src) with perf's "%16lx %s" before it, cut at 99 characters as
/// perf's buffer of 100 cuts it (perf then pads it to the longest so far).
///
/// Example: `data_src_text(0x29080021) == "        29080021 |OP N/A|LVL N/A|SNP N/A|TLB N/A|LCK N/A|BLK N/A"`
std::string data_src_text(std::uint64_t data_src);

/// perf's arch of a file (perf_env__arch): HEADER_ARCH, or this machine's uname, normalised
/// ("x86_64" and "i686" are "x86", "aarch64" is "arm64", "ppc64le" is "powerpc", ...).
std::string normalize_arch(std::string_view uname_machine);
/// perf_env__arch of `file`: its HEADER_ARCH normalised, else this machine's.
std::string file_arch(const record::PerfData& file);
/// perf's get_branch_type (util/branch.c) of a branch entry's type and new_type bits.
///
/// Example: `branch_type_name(4, 0) == "CALL"`, `branch_type_name(0, 0) == ""`
std::string_view branch_type_name(std::uint64_t type, std::uint64_t new_type);
/// perf's branch_spec_desc of a branch entry's spec bits, "-" for 0.
std::string_view branch_spec_name(std::uint64_t spec);
/// perf_reg_name(id, arch): the register's name, "unknown" for one perf does not name.
///
/// Example: `register_name("x86", 8) == "IP"`, `register_name("arm64", 32) == "pc"`
std::string_view register_name(std::string_view arch, unsigned id);

/// get_page_size_name(): "4K", "2M", "1024B", "N/A" for 0.
std::string page_size_name(std::uint64_t size);

/// How perf reads the weight of a sample (arch_perf_parse_sample_weight), which depends on the machine
/// perf runs on, not on the file's: on x86 and powerpc PERF_SAMPLE_WEIGHT_STRUCT is split into the
/// weight (its low 32 bits), ins_lat (the next 16) and, on x86, retire_lat (the top 16); elsewhere the
/// weight is the whole value and the other two are 0. perfspec does as perf built for its own machine.
struct Weights {
  std::uint64_t weight = 0;
  std::uint16_t ins_lat = 0, retire_lat = 0;
};
Weights weights_of(const record::Sample& s);

}  // namespace perfspec::script_fields
