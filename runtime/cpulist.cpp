// SPDX-License-Identifier: MIT
#include "runtime/cpulist.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "perfspec/error.hpp"

namespace perfspec::runtime {

std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string line;
  if (std::getline(in, line)) {
    try {
      return parse_cpu_list(line);
    } catch (const Error&) {
    }
  }
  std::vector<int> out;
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < std::max(1L, n); ++c) out.push_back(static_cast<int>(c));
  return out;
}

}  // namespace perfspec::runtime
