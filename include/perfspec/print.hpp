#pragma once
#include <string>

#include "perfspec/event_set.hpp"

namespace perfspec {

/// One block per event in the style of `perf stat -vv`: field name, value, zero fields omitted.
std::string to_text(const EventSet& set);

/// `{"events":[{"name":..., "pmu":..., "group":G, "leader":L, "scale":..., "unit":..., "attr":{...}}]}`;
/// `attr` lists every field of the attr table (union members under each of their names).
std::string to_json(const EventSet& set, int indent = -1);

}  // namespace perfspec
