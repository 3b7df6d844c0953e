// SPDX-License-Identifier: MIT
#pragma once
// Linux CPU list strings ("0-3,8,10-11"), as in sysfs cpumask/cpus files and -C arguments.
#include <string_view>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::runtime {

using spec::parse_cpu_list;
/// The online CPUs (/sys/devices/system/cpu/online, else 0..nproc-1).
std::vector<int> online_cpus();

}  // namespace perfspec::runtime
