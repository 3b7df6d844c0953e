// SPDX-License-Identifier: MIT
#pragma once
// What perf script's session decides before and while it prints (builtin-script.c's output[] and
// its checks): which fields each output type prints for this file, whether callchains are shown, the
// tracepoints' formats. Each layout prints from it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "perfspec/perf_data.hpp"
#include "perfspec/script.hpp"
#include "perfspec/time_ranges.hpp"
#include "perfspec/tracepoint.hpp"
#include "print/script_fields.hpp"
#include "print/script_out.hpp"

namespace perfspec::script {

class Session {
 public:
  Session(record::PerfData& file, const ScriptOptions& options, script_fields::FieldSpec fields)
      : file_(file), options_(options), fields_(std::move(fields)) {}

  record::PerfData& file() { return file_; }
  const ScriptOptions& options() const { return options_; }
  /// perf's perf_session__check_output_opt, at the start of the session: throws Error (usage) with
  /// perf's message for a field asked for that an event's samples lack.
  void check_output();
  /// perf script's process_attr, for each ATTR of a pipe (`index` of the event it added).
  void pipe_attr(std::size_t index);
  /// What the output type of `attr` prints (script_fields' out_* bits).
  std::uint64_t fields_of(const Attr& attr) const {
    return fields_[script_fields::output_type(attr.type)].fields;
  }
  /// Some output type prints one of `fields`.
  bool fields_any(std::uint64_t fields) const {
    for (int t = 0; t < script_fields::n_types; ++t)
      if (fields_[t].fields & fields) return true;
    return false;
  }
  /// perf's symbol_conf.use_callchain: callchains are printed.
  bool use_callchain() const { return use_callchain_; }
  /// The format of a tracepoint event in the file's tracing data (nullptr: none, and perf prints no
  /// trace).
  const record::Tracepoint* tracepoint_of(const Attr& attr) const;
  /// Whether --time, --pid, --tid and --cpu keep sample `s` (one without a time always is for --time).
  bool keeps(const record::Sample& s) const {
    return time_.keeps(s.has(record::sample_time) ? s.time : 0) && (!by_ids_ || keeps_ids(s));
  }
  /// Whether --cpu keeps a record other than a sample: one without a CPU in its sample_id always is.
  bool keeps_other(const record::Record& r) const {
    return cpus_.empty() || !r.sample_id.has(record::sample_cpu) || on_cpus(r.sample_id.cpu);
  }

 private:
  record::PerfData& file_;
  const ScriptOptions& options_;
  // What each output type prints: the -F options, then what perf's checks at the start of the session
  // (and, in pipe mode, at each ATTR) leave out or add.
  script_fields::FieldSpec fields_;
  bool use_callchain_ = true;
  record::TimeRanges time_;  // --time
  std::vector<bool> cpus_;   // --cpu: by CPU
  bool by_ids_ = false;      // --pid, --tid or --cpu given
  bool keeps_ids(const record::Sample& s) const;
  bool on_cpus(std::uint32_t cpu) const { return cpu < cpus_.size() && cpus_[cpu]; }

  void check_cpus();
  void check_attr(const Attr& a, std::string_view name);
  void check_stype(const Attr& a, std::string_view name, std::uint64_t sample_bits, std::string_view bit_name,
                   std::uint64_t field, bool allow_user_set);
  void read_tracepoint_format(std::size_t i);
};

/// What a layout prints from (the session, its file) and into (the buffer, and its text).
class Layout {
 protected:
  Layout(Session& session, Buffer& out) : s_(session), file_(session.file()), b_(out), out_(out.text()) {}
  Session& s_;
  record::PerfData& file_;
  Buffer& b_;
  fmt::memory_buffer& out_;
};

/// A record other than a sample as perf script prints it after the line's start (perf's
/// perf_event__fprintf): `PERF_RECORD_COMM: ...`, ending with a newline.
void other_record_text(fmt::memory_buffer& out, const record::Record& r);
/// What a NAMESPACES record says, after its name: ` PID/TID - nr_namespaces: N` and the namespaces
/// four a line, as perf_event__fprintf_namespaces.
void namespaces_text(fmt::memory_buffer& out, const record::Record& r);

/// `perfspec script`'s layouts, each over a session whose check_output() has passed.
void print_text(Session& session, Buffer& out);
void print_json(Session& session, Buffer& out);
void print_summary(Session& session, Buffer& out);

}  // namespace perfspec::script
