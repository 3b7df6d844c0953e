// SPDX-License-Identifier: MIT
#pragma once
#include <string>
#include <string_view>

#include "perfspec/ast.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/spec.hpp"

namespace perfspec {

/// How names are looked up.
struct ResolveOptions {
  /// perf stat's --cputype: the one PMU (by its name) that the lookups made across PMUs may pick: a
  /// name found as an alias of several PMUs, a PMU name written as a wildcard (`imc/.../`), a generic
  /// hardware or cache event fanned out over a hybrid machine's core PMUs. A PMU written by its own
  /// name stays as written. Empty: every PMU.
  std::string pmu_filter;
};

/// Resolve a parsed event list against a machine's PMUs. Pure: reads sysfs files through `machine`
/// only. Throws perfspec::Error positioned on the offending text.
///
/// Example:
/// ```
/// perfspec::spec::Machine machine{"tests/fixtures/intel_skx"};
/// auto set = perfspec::resolve(perfspec::parse("cpu/event=0x2,inv,ldlat=3/u"), machine);
/// // set.events[0].attr.config == 0x800002, attr.config1 == 3, attr.exclude_kernel == 1
/// ```
EventSet resolve(const ast::EventList& list, const spec::Machine& machine);

/// parse + resolve.
///
/// Example: `auto set = perfspec::resolve("{cycles,instructions}:u", machine);`
EventSet resolve(std::string_view text, const spec::Machine& machine);

/// The same into `out`, reusing the storage an earlier resolve left in it (its vectors and the
/// events' strings): for a program that resolves many strings, resolving then allocates only when a
/// result is larger than any before. The result is exactly what the allocating form returns. On an
/// error `out` holds unspecified contents (resolve into it again to reuse it).
///
/// Example: `perfspec::EventSet set; for (auto& s : specs) { perfspec::resolve(s, machine, set); use(set); }`
void resolve(std::string_view text, const spec::Machine& machine, EventSet& out);
/// The same from a parsed list.
void resolve(const ast::EventList& list, const spec::Machine& machine, EventSet& out);
/// Any of them with options (ResolveOptions): `resolve(text, machine, {.pmu_filter = "cpu_atom"})`.
EventSet resolve(std::string_view text, const spec::Machine& machine, const ResolveOptions& options);
void resolve(std::string_view text, const spec::Machine& machine, EventSet& out,
             const ResolveOptions& options);
void resolve(const ast::EventList& list, const spec::Machine& machine, EventSet& out,
             const ResolveOptions& options);

}  // namespace perfspec
