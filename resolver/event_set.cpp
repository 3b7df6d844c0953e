// The reuse of an EventSet's nodes when a set is resolved into again.
#include "perfspec/event_set.hpp"
#include "spec/reuse.hpp"

namespace perfspec {

void PmuPlacement::clear() { spec::reset_keeping(*this, &PmuPlacement::cpumask, &PmuPlacement::cpus); }

void ResolvedEvent::clear() {
  spec::reset_keeping(*this, &ResolvedEvent::name, &ResolvedEvent::pmu, &ResolvedEvent::placement,
                      &ResolvedEvent::unit, &ResolvedEvent::metric_id, &ResolvedEvent::driver_config,
                      &ResolvedEvent::cpus);
}

void EventGroup::clear() { spec::reset_keeping(*this, &EventGroup::name, &EventGroup::members); }

}  // namespace perfspec
