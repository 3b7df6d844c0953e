// SPDX-License-Identifier: MIT
#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "perfspec/errno_facts.hpp"
#include "perfspec/fmt.hpp"
#include "perfspec/print.hpp"
#include "spec/builtin.hpp"
#include "spec/printable.hpp"

namespace perfspec {

namespace {

using runtime::Count;

bool is_software_clock(const Attr& a) {
  return a.type == spec::type_software && (a.config == 0 || a.config == 1);  // cpu-clock, task-clock
}

}  // namespace

std::string describe(runtime::Note::Obstacle o) {
  using O = runtime::Note::Obstacle;
  switch (o) {
    case O::none: return "nothing prevents it";
    case O::perf_user_access_off:
      return "user-space counter access is off (/proc/sys/kernel/perf_user_access is 0; 1 turns it on)";
    case O::rdpmc_off: return "rdpmc is off (/sys/bus/event_source/devices/cpu/rdpmc is 0)";
    case O::not_granted:
      return "the kernel did not grant it (cap_user_rdpmc is 0: not a hardware counter, or on arm64 an "
             "event opened without config1 bit 1, the 'rdpmc' term)";
    case O::not_on_counter:
      return "it was on no hardware counter when read (index 0: disabled, or multiplexed out)";
    case O::architecture: return "perfspec reads counters in user space on x86-64 and arm64 only";
  }
  return fmt::format("obstacle {}", static_cast<int>(o));
}

std::string describe(const runtime::Note& n) {
  using Kind = runtime::Note::Kind;
  // " on CPU 3" for a per-CPU counter; nothing for a task's (cpu -1: it counts wherever the task runs).
  const std::string on_cpu = n.cpu < 0 ? std::string{} : fmt::format(" on CPU {}", n.cpu);
  switch (n.kind) {
    case Kind::user_only:
      return fmt::format("counted user space only (':u'): kernel counting was refused with {}",
                         spec::errno_name(n.error));
    case Kind::weak_group_alone:
      return fmt::format("weak group fell back to counting its events alone ({} on '{}')",
                         spec::errno_name(n.error), n.event);
    case Kind::enable_failed: return fmt::format("enable failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::disable_failed: return fmt::format("disable failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::reset_failed: return fmt::format("reset failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::read_failed: return fmt::format("read failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::short_read: return fmt::format("short read{}: {} of {} bytes", on_cpu, n.bytes, n.wanted);
    case Kind::user_read_fallback: return "read with read(2), not in user space: " + describe(n.obstacle);
    case Kind::group_never_ran:
      return "its group never ran: enabled but never on the PMU (a group needing more counters than are free "
             "cannot be scheduled: split it)";
  }
  return fmt::format("note of kind {}", static_cast<int>(n.kind));
}

std::string describe(const std::vector<runtime::Note>& notes) {
  std::string out;
  for (const auto& n : notes) fmt::format_to(std::back_inserter(out), "{}{}", out.empty() ? "" : "; ", n);
  return out;
}

DisplayValue display_value(const ResolvedEvent& e, const Count& c) {
  DisplayValue d;
  double scaled = c.scaled();
  if (is_software_clock(e.attr)) {
    d.value = scaled / 1e6;  // nanoseconds
    d.unit = "msec";
    d.integral = false;
  } else if (e.scale != 1.0 || !e.unit.empty()) {
    d.value = scaled * e.scale;
    d.unit = e.unit;
    d.integral = false;
  } else {
    d.value = scaled;
  }
  return d;
}

}  // namespace perfspec
