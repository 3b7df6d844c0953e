// SPDX-License-Identifier: MIT
// Count a function of this program with an event string from the command line:
//   count_function 'task-clock,page-faults,{cycles,instructions}:u'
#include <cstdio>
#include <vector>

#include <perfspec/perfspec.hpp>

namespace {
// The work being measured: touch fresh memory and sum it.
long work() {
  std::vector<long> v(1 << 20);
  long sum = 0;
  for (std::size_t i = 0; i < v.size(); ++i) sum += static_cast<long>(v[i] = static_cast<long>(i));
  return sum;
}
}  // namespace

int main(int argc, char** argv) {
  const char* events = argc > 1 ? argv[1] : "task-clock,page-faults";
  perfspec::spec::Machine machine;  // /sys
  perfspec::EventSet set;
  try {
    set = perfspec::resolve(events, machine);
  } catch (const perfspec::Error& e) {
    std::fputs(perfspec::render(e, events).c_str(), stderr);
    return 1;
  }
  auto counters = perfspec::runtime::Counters::open(set, perfspec::runtime::Target::self_thread());
  counters.enable();
  long result = work();
  counters.disable();
  auto counts = counters.read();
  std::printf("work() = %ld\n", result);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto& c = counts[i];
    if (c.state == perfspec::runtime::Count::State::counted)
      std::printf("%20.0f  %s\n", c.scaled(), set.events[i].name.c_str());
    else
      std::printf("%20s  %s  (%s: %s)\n", "<not supported>", set.events[i].name.c_str(),
                  c.failure ? c.failure->name.c_str() : "",
                  c.failure ? c.failure->hint.c_str() : "never scheduled");
  }
  return 0;
}
