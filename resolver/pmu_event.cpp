// SPDX-License-Identifier: MIT
// One event on one PMU: the term that names it (an alias, a symbol), its definition, and each term
// through the PMU's formats.
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "perfspec/event_source.hpp"

#include "grammar/terms.hpp"
#include "perfspec/tables.hpp"
#include "resolver/resolver.hpp"
#include "resolver/terms.hpp"

namespace perfspec::resolver {

namespace {

using Value = ast::Term::Value;

// Alias term lists parse once per process: the same text always gives the same terms (keyed by the
// text, so a cache entry can never belong to a Machine that is gone).
const std::vector<ast::Term>& parsed_terms(const std::string& text) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::vector<ast::Term>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  auto terms = grammar::parse_terms(text);  // throws: nothing cached
  return cache.emplace(text, std::move(terms)).first->second;
}

}  // namespace

[[noreturn]] void Resolver::unknown_term(const ast::Term& t, std::string_view what, const Pmu* pmu) const {
  std::vector<std::string> valid;
  if (pmu)
    for (const auto& f : pmu->formats()) valid.push_back(f.name);
  for (auto b : builtin_term_names()) valid.emplace_back(b);
  std::string help = fmt::format("valid terms: {}", fmt::join(valid, ","));
  // The closest of the terms and of the PMU's own event names (`msr/tcs/`: did you mean 'tsc'?).
  std::vector<std::string> close = valid;
  if (pmu)
    for (const spec::EventSource* source : machine_.sources()) source->names(*pmu, close, false);
  if (std::string did_you_mean = suggest(t.name, close); !did_you_mean.empty())
    help = did_you_mean + "\n" + help;
  throw Error(ErrorKind::unknown_name, fmt::format("unknown term '{}' for {}", t.name, what), t.name_span,
              help);
}

void Resolver::apply_format(ResolvedEvent& out, const Pmu& pmu, const spec::Format& f, const ast::Term& t,
                            bool from_alias) const {
  // Format::width(), max_value() and scatter() each recompute the mask (width by a popcount that is a
  // library call without -mpopcnt): calling them here cost the single-string benchmark about 35 ns of
  // its 280. The same quantities, computed once; the ranges do not overlap (parse_format checks), so
  // their lengths add up to the width, and a single range scatters by a shift.
  const std::uint64_t mask = f.mask();
  unsigned width = 0;
  for (const auto& r : f.ranges) width += r.hi - r.lo + 1u;
  const std::uint64_t max_value = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  std::uint64_t v = 0;
  if (t.kind == Value::none) {
    if (width != 1)
      throw Error(
          ErrorKind::bad_value, fmt::format("no value assigned for term '{}'", t.name), t.name_span,
          fmt::format("'{}' is {} bits wide in pmu '{}': write {}=N", t.name, width, pmu.name(), t.name));
    v = 1;
  } else if (t.kind == Value::number) {
    v = t.number;
  } else {
    throw Error(ErrorKind::bad_value, "expected numeric value", t.value_span,
                fmt::format("'{}' is a {}-bit field of pmu '{}'", t.name, width, pmu.name()));
  }
  if (v > max_value) {
    if (from_alias)
      throw Error(ErrorKind::machine,
                  fmt::format("value too big for format ({}), maximum is {} (in the alias of pmu '{}')",
                              f.name, max_value, pmu.name()));
    throw Error(ErrorKind::bad_value,
                fmt::format("value too big for format ({}), maximum is {}", f.name, max_value), t.value_span);
  }
  std::uint64_t* words[] = {&out.attr.config, &out.attr.config1, &out.attr.config2, &out.attr.config3};
  std::uint64_t& w = *words[f.word];
  // A later term replaces an earlier one's bits (perf 6.1 ORed them; current perf replaces).
  w = (w & ~mask) | (f.ranges.size() == 1 ? (v << f.ranges.front().lo) & mask : f.scatter(v));
}

void Resolver::apply_alias(ResolvedEvent& out, const Pmu& pmu, const spec::Alias& alias, Span where,
                           std::vector<std::string>& required) {
  const std::vector<ast::Term>* terms = nullptr;
  // Where the definition came from, for messages only.
  auto file = [&] {
    return alias.source == spec::Source::sysfs
               ? fmt::format("event file '{}'", alias.origin)
               : fmt::format("event '{}' of table '{}'", alias.name, alias.origin);
  };
  try {
    terms = &parsed_terms(alias.terms);
  } catch (const Error& e) {
    throw Error(ErrorKind::machine,
                fmt::format("pmu '{}': {} holds '{}': {}", pmu.name(), file(), alias.terms, e.message()),
                where);
  }
  CallGraph cg;
  for (const auto& t : *terms) {
    if (t.kind == Value::query) {
      required.push_back(t.name);
      continue;
    }
    try {
      if (apply_builtin(out, t, cg)) continue;
      if (const auto* f = pmu.format(t.name)) {
        apply_format(out, pmu, *f, t, true);
        continue;
      }
    } catch (const Error& e) {
      throw Error(ErrorKind::machine, fmt::format("pmu '{}': {}: {}", pmu.name(), file(), e.message()),
                  where);
    }
    throw Error(ErrorKind::machine,
                fmt::format("pmu '{}': {} uses term '{}', which the pmu has no format for", pmu.name(),
                            file(), t.name),
                where);
  }
  finish_call_graph(out.attr, cg);
  if (!alias.scale_text.empty()) out.scale = alias.scale;
  out.unit = alias.unit;
  out.per_pkg = alias.per_pkg;
  out.snapshot = alias.snapshot;
}

const EncodedAlias& Resolver::encoded_alias(const Pmu& pmu, const spec::Alias& alias, Span where,
                                            const Attr& blank) {
  auto& memo = MachineMemo::of(machine_);
  const EncodedAlias* found = nullptr;
  const MachineMemo::Key key{&pmu, &alias};
  {
    std::lock_guard lock(memo.mutex);
    if (auto it = memo.aliases.find(key); it != memo.aliases.end()) found = &it->second;
  }
  if (!found) {
    // A definition that does not apply throws here, each time, pointing at `where`: failures are not kept.
    EncodedAlias e;
    e.event.attr = blank;  // blank but for size and type
    apply_alias(e.event, pmu, alias, where, e.required);
    for (const auto& t : parsed_terms(alias.terms))
      if (!t.driver && t.name == std::string_view("name")) e.sets_name = true;
    std::lock_guard lock(memo.mutex);
    found = &memo.aliases.emplace(key, std::move(e)).first->second;  // nodes stay where they are
  }
  return *found;
}

void Resolver::copy_encoded(ResolvedEvent& out, const EncodedAlias& encoded,
                            std::vector<std::string>& required) {
  // `out` is fresh from start(): its strings are empty, so only what the definition set is copied.
  const ResolvedEvent& from = encoded.event;
  out.attr = from.attr;
  if (encoded.sets_name) out.name = from.name;
  out.scale = from.scale;
  if (!from.unit.empty()) out.unit = from.unit;
  out.per_pkg = from.per_pkg;
  out.snapshot = from.snapshot;
  if (!from.metric_id.empty()) out.metric_id = from.metric_id;
  if (!from.driver_config.empty()) out.driver_config = from.driver_config;
  if (!from.cpus.empty()) out.cpus = from.cpus;
  out.percore = from.percore;
  if (!encoded.required.empty()) required = encoded.required;
}

namespace {
// Calls `f` on the name a caller knows (a bare alias name) and then on each of the event's terms.
template <typename F> void for_each_term(const ast::Event& ev, const KnownName& known, F&& f) {
  if (known.term) f(*known.term);
  for (const auto& t : ev.terms) f(t);
}
}  // namespace

void Resolver::on_pmu(const ast::Event& ev, const Pmu& pmu, Events& result, const KnownName& known) {
  std::size_t mark = result.size();
  try {
    ResolvedEvent& out = start(result, ev, pmu.name(), &pmu);
    out.attr.type = pmu.type();
    EventTerm which = find_event_term(ev, pmu, known);
    std::vector<std::string> required;
    apply_definition(out, pmu, which, known, required);
    apply_terms(out, ev, pmu, which, known, required);
  } catch (...) {
    result.resize(mark);
    throw;
  }
}

EventTerm Resolver::find_event_term(const ast::Event& ev, const Pmu& pmu, const KnownName& known) const {
  EventTerm which;
  // The caller's lookup stands when the name can only be the event (the checks of the loop below).
  const ast::Term* named = known.term;
  if (named && known.alias &&
      (known.encoded ||
       (!is_builtin_term(named->name) && !pmu.format(named->name) && !raw_term_value(named->name)))) {
    which.term = named;
    which.alias = known.alias;
  }
  // A definition that cannot be read (a folder, a symlink to nothing) is named at the term that asked.
  auto alias_at = [&](std::string_view name, Span where) {
    try {
      return machine_.alias(pmu, name);
    } catch (const Error& e) {
      if (e.positioned()) throw;
      throw Error(e.kind(), e.message(), where, e.help());
    }
  };
  for_each_term(ev, known, [&](const ast::Term& t) {
    if (&t == which.term) return;
    if (t.driver || is_builtin_term(t.name)) return;
    bool names_event = false;
    if (t.kind == ast::Term::Value::none && !pmu.format(t.name) && !raw_term_value(t.name)) {
      if (const auto* a = alias_at(t.name, t.span))
        which.alias = a, names_event = true;
      else if (const auto* s = spec::find_symbol(t.name);
               s && s->type == spec::type_hardware && pmu.is_core())
        which.symbol = s, names_event = true;
      else if (auto c = spec::parse_cache_name(t.name); c && pmu.is_core())
        which.cache = c, names_event = true;
    } else if (t.name == std::string_view("event") &&
               (t.kind == ast::Term::Value::name || t.kind == ast::Term::Value::quoted)) {
      which.alias = alias_at(t.text, t.value_span);
      if (!which.alias) {
        std::vector<std::string> names;
        for (const spec::EventSource* source : machine_.sources()) source->names(pmu, names, true);
        throw Error(ErrorKind::unknown_name,
                    fmt::format("unknown event '{}' for pmu '{}'", t.text, pmu.name()), t.value_span,
                    with_table_problems(suggest(t.text, names)));
      }
      names_event = true;
    }
    if (names_event) {
      if (which.term)
        throw Error(ErrorKind::bad_value,
                    fmt::format("more than one event named in the terms of pmu '{}'", pmu.name()), t.span,
                    fmt::format("'{}' already names the event", text(which.term->span)));
      which.term = &t;
    }
  });
  return which;
}

void Resolver::apply_definition(ResolvedEvent& out, const Pmu& pmu, const EventTerm& which,
                                const KnownName& known, std::vector<std::string>& required) {
  if (which.alias) {
    const EncodedAlias& encoded = known.encoded && which.alias == known.alias
                                      ? *known.encoded
                                      : encoded_alias(pmu, *which.alias, which.term->span, out.attr);
    copy_encoded(out, encoded, required);
    // Privilege levels carried by the definition itself (libpfm4's `:u`); event modifiers still apply.
    if (which.alias->modifiers == std::string_view("u")) out.attr.exclude_kernel = out.attr.exclude_hv = 1;
    if (which.alias->modifiers == std::string_view("k")) out.attr.exclude_user = out.attr.exclude_hv = 1;
  } else if (which.symbol || which.cache) {
    // A legacy hardware or cache event addressed to this core PMU (`cpu_atom/cycles/`): the generic type
    // with the PMU's type as extended type on hybrid machines.
    out.attr.type = which.symbol ? spec::type_hardware : spec::type_hw_cache;
    if (which.cache && !which.cache->invalid.empty())
      throw Error(ErrorKind::bad_value,
                  fmt::format("invalid cache event '{}': {}", which.term->name, which.cache->invalid),
                  which.term->span);
    out.attr.config = which.symbol ? which.symbol->config : which.cache->event.config();
    if (cores().size() > 1) out.attr.config |= std::uint64_t{pmu.type()} << 32;
  }
}

void Resolver::apply_terms(ResolvedEvent& out, const ast::Event& ev, const Pmu& pmu, const EventTerm& which,
                           const KnownName& known, std::vector<std::string>& required) const {
  CallGraph cg;
  for_each_term(ev, known, [&](const ast::Term& t) {
    if (&t == which.term) return;
    if (apply_builtin(out, t, cg)) return;
    if (which.symbol || which.cache) unknown_term(t, fmt::format("event '{}'", which.term->name), nullptr);
    if (const auto* f = pmu.format(t.name)) {
      apply_format(out, pmu, *f, t, false);
      if (!required.empty()) std::erase(required, t.name);
      return;
    }
    if (auto raw = raw_term_value(t.name); raw && t.kind == ast::Term::Value::none) {
      out.attr.config = *raw;
      return;
    }
    if (t.kind == ast::Term::Value::none && machine_.alias(pmu, t.name))
      throw Error(ErrorKind::bad_value,
                  fmt::format("more than one event named in the terms of pmu '{}'", pmu.name()), t.span);
    // A generic event this PMU does not count (`software/cpu-clock/`, `msr/cycles/`) is no term of it.
    if (const auto* s = t.kind == ast::Term::Value::none ? spec::find_symbol(t.name) : nullptr)
      throw Error(
          ErrorKind::unknown_name, fmt::format("unknown term '{}' for pmu '{}'", t.name, pmu.name()),
          t.name_span,
          fmt::format("'{}' is a generic {} event, not an event of pmu '{}': write it on its own, e.g. '{}'",
                      t.name, s->type == spec::type_software ? "software" : "hardware", pmu.name(), t.name));
    unknown_term(t, fmt::format("pmu '{}'", pmu.name()), &pmu);
  });
  if (!required.empty())
    throw Error(
        ErrorKind::bad_value,
        fmt::format("event '{}' of pmu '{}' needs '{}=N'", which.alias->name, pmu.name(), required.front()),
        which.term->span, fmt::format("its definition says {}=?", required.front()));
  finish_call_graph(out.attr, cg);
}

}  // namespace perfspec::resolver
