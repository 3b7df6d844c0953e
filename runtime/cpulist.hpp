// SPDX-License-Identifier: MIT
#pragma once
// Linux CPU list strings ("0-3,8,10-11"), as in sysfs cpumask/cpus files and -C arguments.
#include <string_view>
#include <vector>

namespace perfspec::runtime {

/// Parse a CPU list; throws perfspec::Error on malformed text.
std::vector<int> parse_cpu_list(std::string_view text);
/// The online CPUs (/sys/devices/system/cpu/online, else 0..nproc-1).
std::vector<int> online_cpus();

}  // namespace perfspec::runtime
