// SPDX-License-Identifier: MIT
// The system calls of the architecture this process runs on, by number and by name: Debian's libaudit
// (libaudit-dev) keeps the table for each architecture it knows; it is read once, whole.
#include <libaudit.h>

#include <algorithm>
#include <string>
#include <vector>

#include "perfspec/trace.hpp"

namespace perfspec::spec {

namespace {

// libaudit's numbers stay below this on every architecture it knows (x32 calls are 512 and up on x86_64).
constexpr long last_number = 1024;

const std::vector<std::pair<long, std::string>>& table() {
  static const std::vector<std::pair<long, std::string>> all = [] {
    std::vector<std::pair<long, std::string>> out;
    int machine = audit_detect_machine();
    if (machine < 0) return out;
    for (long n = 0; n < last_number; ++n)
      if (const char* name = audit_syscall_to_name(static_cast<int>(n), machine)) out.emplace_back(n, name);
    return out;
  }();
  return all;
}

}  // namespace

std::optional<std::string> syscall_name(long number) {
  const auto& all = table();
  auto it = std::lower_bound(all.begin(), all.end(), number,
                             [](const auto& entry, long n) { return entry.first < n; });
  if (it == all.end() || it->first != number) return std::nullopt;
  return it->second;
}

std::optional<long> syscall_number(std::string_view name) {
  for (const auto& [number, n] : table())
    if (n == name) return number;
  return std::nullopt;
}

std::vector<std::pair<long, std::string>> syscalls() { return table(); }

}  // namespace perfspec::spec
