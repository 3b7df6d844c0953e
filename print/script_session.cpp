// SPDX-License-Identifier: MIT
// perf script's checks of the fields asked for against the file's events (builtin-script.c's
// perf_session__check_output_opt, evsel__check_attr, process_attr), in perf's order and with its
// messages.
#include "print/script_session.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/header_info.hpp"

namespace perfspec::script {

using namespace perfspec::record;
using namespace perfspec::script_fields;

namespace {
bool is_dummy(const Attr& a) { return a.type == 1 && a.config == 9; }  // PERF_COUNT_SW_DUMMY
}  // namespace

const Tracepoint* Session::tracepoint_of(const Attr& attr) const {
  if (attr.type != 2) return nullptr;
  const Tracepoints* tps = file_.tracepoints();
  return tps ? tps->find(attr) : nullptr;
}

// perf's evsel__do_check_stype: a field printed for the type of `a` whose sample_type bits its samples
// lack. Named in a -F for every type, it is an error (unless allow_user_set: an AUX-area trace may
// make such samples); otherwise the type stops printing it.
void Session::check_stype(const Attr& a, std::string_view name, std::uint64_t sample_bits,
                          std::string_view bit_name, std::uint64_t field, bool allow_user_set) {
  if (a.sample_type & sample_bits) return;
  TypeFields& t = fields_[output_type(a.type)];
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
// (perf's checks of srccode, branch stack and tod fields are not here: perfspec refuses those fields
// when -F is read, and no type prints them by default.)
void Session::check_attr(const Attr& a, std::string_view name) {
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
  if (printed(out_srcline) && !printed(out_ip))
    usage(
        "Display of source line number requested but sample IP is not\nselected. Hence, no address to lookup "
        "the source line number.");
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
bool Session::keeps_ids(const record::Sample& s) const {
  auto has = [](const std::vector<std::int32_t>& ids, std::int32_t id) {
    return ids.empty() || std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  return has(options_.pids, static_cast<std::int32_t>(s.pid)) &&
         has(options_.tids, static_cast<std::int32_t>(s.tid)) && (cpus_.empty() || on_cpus(s.cpu));
}

// perf's perf_session__cpu_bitmap: the first event of each of perf's types must sample its CPU
void Session::check_cpus() {
  by_ids_ = !options_.pids.empty() || !options_.tids.empty() || !options_.cpus.empty();
  if (options_.cpus.empty()) return;
  for (std::uint32_t type = 0; type < 6; ++type)  // PERF_TYPE_MAX
    for (const FileEvent& e : file_.events())
      if (e.attr.type == type) {
        if (!(e.attr.sample_type & sample_cpu))
          throw Error(ErrorKind::usage, "File does not contain CPU events. Remove -C option to proceed.");
        break;
      }
  for (int cpu : options_.cpus) {
    if (cpu < 0 || cpu >= 4096)  // perf's MAX_NR_CPUS
      throw Error(ErrorKind::usage,
                  fmt::format("Requested CPU {} too large. Consider raising MAX_NR_CPUS", cpu));
    if (static_cast<std::size_t>(cpu) >= cpus_.size()) cpus_.resize(static_cast<std::size_t>(cpu) + 1);
    cpus_[static_cast<std::size_t>(cpu)] = true;
  }
}

void Session::check_output() {
  check_cpus();
  // perf's metric field: the metrics of the events' group reads of each sample (PERF_SAMPLE_READ),
  // nothing without them
  if (fields_any(out_metric))
    for (const FileEvent& e : file_.events())
      if (e.attr.sample_type & sample_read)
        throw Error(ErrorKind::usage,
                    "-F metric: not supported yet (perfspec script does not compute the metrics of the "
                    "samples' group reads)");
  if (!options_.time.empty()) {
    const auto span = record::read_header_info(file_).sample_time;
    time_ = record::TimeRanges::parse(options_.time, span ? span->first : 0, span ? span->second : 0,
                                      span.has_value());
  }
  const auto& events = file_.events();
  for (int j = 0; j < n_types; ++j) {
    const FileEvent* first = nullptr;
    for (const FileEvent& e : events)
      if (!is_dummy(e.attr) && output_type(e.attr.type) == j) {
        first = &e;
        break;
      }
    const TypeFields& t = fields_[j];
    if (!first && t.user_set && !t.wildcard_set && j != synth)
      throw Error(ErrorKind::usage,
                  fmt::format("{} events do not exist. Remove corresponding -F option to proceed.",
                              event_type_name(j)));
    if (first && t.fields) check_attr(first->attr, first->name);
  }
  if (options_.hide_call_graph)
    use_callchain_ = false;
  else if (!file_.pipe())
    use_callchain_ = std::any_of(events.begin(), events.end(),
                                 [](const FileEvent& e) { return e.attr.sample_type & sample_callchain; });
  if (use_callchain_ && !fields_[tracepoint].user_set)
    for (const FileEvent& e : events)
      if (e.attr.type == 2 && (e.attr.sample_type & sample_callchain)) {
        fields_[tracepoint].fields |= out_ip | out_sym | out_symoff | out_dso;
        break;
      }
  for (std::size_t i = 0; i < events.size(); ++i) read_tracepoint_format(i);
}

// perf script's process_attr, for each ATTR of a pipe: the first event of each of perf's own types
// (a PMU's are left alone) is checked as check_output() checks a file's; and while some event of the
// stream so far has callchains (or a user stack with its registers), its type prints ip and sym
// unless a -F for every type removed them.
void Session::pipe_attr(std::size_t i) {
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
    TypeFields& t = fields_[output_type(a.type)];
    if (!(t.user_unset_fields & out_ip)) t.fields |= out_ip;
    if (!(t.user_unset_fields & out_sym)) t.fields |= out_sym;
  }
}

// A tracepoint whose payload is printed: its format is read now, so that tracing data that cannot be
// read is an error before the first line rather than in the middle of one (in pipe mode, when it has
// come before the event).
void Session::read_tracepoint_format(std::size_t i) {
  const Attr& a = file_.events()[i].attr;
  if (a.type == 2 && (fields_of(a) & out_trace)) (void)tracepoint_of(a);
}

}  // namespace perfspec::script
