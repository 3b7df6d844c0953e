// SPDX-License-Identifier: MIT
// Tracepoints (`sys:name`, with globs), and why one was not found.
#include <fmt/format.h>

#include "resolver/resolver.hpp"
#include "resolver/terms.hpp"
#include "spec/abi.hpp"

namespace perfspec::resolver {

// Says which it is: tracefs missing or unreadable (each with its remedy), or no such tracepoint, with
// the closest names that exist.
void Resolver::tracepoint_not_found(const ast::Event& ev, Span where) {
  using Kind = spec::Machine::TracefsProblem::Kind;
  std::string text = fmt::format("{}:{}", ev.name, ev.tp_event);
  auto problem = machine_.tracefs_problem(ev.name, ev.tp_event);
  std::string message = fmt::format(
      "{} '{}'", problem.kind == Kind::denied ? "cannot look up tracepoint" : "unknown tracepoint", text);
  if (!problem.reason.empty()) message += ": " + problem.reason;
  std::string help = std::move(problem.remedy);
  bool glob = has_glob(ev.name) || has_glob(ev.tp_event);
  if (problem.kind == Kind::none && !glob && text.size() <= max_suggest_length)
    help = suggest(text, machine_.tracepoint_names());
  // No such tracepoint is an unknown name; tracefs unreadable is a permission problem, tracefs
  // missing a problem of the machine.
  ErrorKind kind = problem.kind == Kind::none     ? ErrorKind::unknown_name
                   : problem.kind == Kind::denied ? ErrorKind::permission
                                                  : ErrorKind::machine;
  throw Error(kind, std::move(message), where, std::move(help));
}

void Resolver::resolve_tracepoint(const ast::Event& ev, Events& out) {
  std::vector<std::pair<std::string, std::string>> found;
  if (has_glob(ev.name) || has_glob(ev.tp_event)) {
    found = machine_.tracepoints(ev.name, ev.tp_event);
  } else if (machine_.tracepoint_id(ev.name, ev.tp_event)) {
    found.emplace_back(ev.name, ev.tp_event);
  }
  Span where{ev.name_span.begin, ev.tp_event_span.end};
  if (found.empty() && !has_glob(ev.name) && !has_glob(ev.tp_event)) {
    // `INST_RETIRED:ANY_P` is libpfm4's form of a core event, not a tracepoint.
    ast::Term t;
    t.name = ev.name + ":" + ev.tp_event;
    t.span = t.name_span = where;
    std::size_t first = out.size();
    try {
      for (const Pmu* pmu : cores())
        if (const spec::Alias* alias = machine_.alias(*pmu, t.name))
          on_pmu(ev, *pmu, out, KnownName{&t, alias});
    } catch (...) {
      out.resize(first);
      throw;
    }
    if (out.size() > first) return;
  }
  if (found.empty()) tracepoint_not_found(ev, where);
  std::string suffix = list_.text.substr(ev.tp_event_span.end, ev.span.end - ev.tp_event_span.end);
  std::size_t first = out.size();
  try {
    for (const auto& [sys, name] : found) {
      ResolvedEvent& e = start(out, ev, "tracepoint", nullptr, false);
      if (found.size() > 1 || has_glob(ev.name) || has_glob(ev.tp_event)) e.name = sys + ":" + name + suffix;
      e.attr.type = spec::type_tracepoint;
      e.tracepoint = sys + ":" + name;
      e.attr.config = *machine_.tracepoint_id(sys, name);
      // As perf's evsel__newtp_idx: every sample carries the raw record, time, CPU and period.
      e.attr.sample_type = spec::sample_raw | spec::sample_time | spec::sample_cpu | spec::sample_period;
      e.attr.sample_period = 1;
      CallGraph cg;
      for (const auto& t : ev.terms)
        if (!apply_builtin(e, t, cg)) unknown_term(t, fmt::format("tracepoint '{}:{}'", sys, name), nullptr);
      finish_call_graph(e.attr, cg);
    }
  } catch (...) {
    out.resize(first);
    throw;
  }
}

}  // namespace perfspec::resolver
