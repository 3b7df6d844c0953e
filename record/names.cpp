// SPDX-License-Identifier: MIT
// The name perf gives an event from its attr alone (tools/perf/util/evsel.c, evsel__name), for files
// that do not name their events (pipe mode before EVENT_UPDATE, files without HEADER_EVENT_DESC).
#include <fmt/format.h>

#include "perfspec/perf_data.hpp"
#include "spec/builtin.hpp"

namespace perfspec::record {

namespace {

// perf's modifiers after the name: the privilege levels counted when some are excluded, the
// precision, and host/guest when the host is excluded or the guest is excluded as the modifiers
// before imply (a privilege level or a precision: excluded; neither: counted).
std::string modifiers(const Attr& a) {
  std::string m;
  bool guest_excluded_by_default = false;
  if (a.exclude_kernel || a.exclude_user || a.exclude_hv) {
    if (!a.exclude_kernel) m += 'k';
    if (!a.exclude_user) m += 'u';
    if (!a.exclude_hv) m += 'h';
    guest_excluded_by_default = true;
  }
  m.append(std::min<unsigned>(a.precise_ip, 3), 'p');
  if (a.precise_ip) guest_excluded_by_default = true;
  if (a.exclude_host || (a.exclude_guest != 0) == guest_excluded_by_default) {
    if (!a.exclude_host) m += 'H';
    if (!a.exclude_guest) m += 'G';
  }
  return m.empty() ? m : ":" + m;
}

}  // namespace

std::string attr_name(const Attr& a) {
  std::string base;
  switch (a.type) {
    case spec::type_hardware:
    case spec::type_software: {
      base = std::string(spec::symbol_name(a.type, a.config));
      if (base.empty())
        base =
            fmt::format("unknown-{}:{}", a.type == spec::type_hardware ? "hardware" : "software", a.config);
      break;
    }
    case spec::type_hw_cache: {
      spec::CacheEvent c{static_cast<unsigned>(a.config & 0xff), static_cast<unsigned>(a.config >> 8 & 0xff),
                         static_cast<unsigned>(a.config >> 16 & 0xff)};
      base = c.cache < 7 && c.op < 3 && c.result < 2 && spec::cache_op_valid(c.cache, c.op)
                 ? spec::cache_event_name(c)
                 : "unknown-ext-hardware-cache-type";
      break;
    }
    // without the tracing data's formats (PerfData names the event `sys:name` from them)
    case spec::type_tracepoint: return "unknown tracepoint";
    case spec::type_raw: base = fmt::format("r{:x}", a.config); break;
    case spec::type_breakpoint: {
      base = fmt::format("mem:{:#x}:", a.config1);
      if (a.bp_type & spec::breakpoint_r) base += 'r';
      if (a.bp_type & spec::breakpoint_w) base += 'w';
      if (a.bp_type & spec::breakpoint_x) base += 'x';
      break;
    }
    default: base = fmt::format("unknown attr type: {}", a.type); return base;
  }
  return base + modifiers(a);
}

}  // namespace perfspec::record
