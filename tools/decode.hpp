// SPDX-License-Identifier: MIT
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::tools {

struct DecodeOptions {
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
  std::vector<std::pair<std::string, std::string>> fields;  ///< attr field -> value; empty: read stdin
  std::string format = "text";
};

/// `perfspec decode`: prints the best event string for each attr.
int run_decode(const DecodeOptions& options);

}  // namespace perfspec::tools
