// SPDX-License-Identifier: MIT
#pragma once
// perf record's build-id post-processing, done as the records pass: which binaries a recording's
// samples hit, and each binary's build id (the one the kernel put in the MMAP2 record, else read while
// the process that mapped the binary still runs, through its /proc/PID/map_files or /proc/PID/root,
// so that a process in a container or chroot gives its own file's). What HEADER_BUILD_ID then holds.
// The records come buffer by buffer, not in time order: they are held back a second and taken in
// time order, so that a sample meets the mappings of its moment. Internal to runtime/.
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "perfspec/record.hpp"
#include "perfspec/symbols.hpp"

namespace perfspec::runtime {

class BuildIds {
 public:
  explicit BuildIds(const record::Formats& formats) : formats_(formats) {}
  /// A record as written (MMAP, MMAP2, FORK and samples matter).
  void see(const record::Record& r, std::span<const std::byte> bytes);
  /// Takes in time order what came more than a second before the latest time seen.
  void settle();
  /// HEADER_BUILD_ID's bytes: the binaries samples hit, in the order they were first mapped. Takes
  /// everything held back first.
  std::vector<std::byte> section();

 private:
  struct Held {
    std::uint64_t time = 0;
    std::uint32_t pid = 0;
    std::uint16_t misc = 0;
    std::uint64_t ip = 0;            // a sample's
    std::vector<std::byte> mapping;  // a mapping's or a FORK's record, to be decoded when taken
  };
  const record::Formats& formats_;
  record::Symbolizer maps_;
  std::map<std::string, record::BinaryBuildId> known_;  // by name
  std::vector<std::string> order_;                      // names, as first mapped
  std::set<std::string, std::less<>> hit_;
  std::vector<Held> held_;
  std::uint64_t latest_ = 0;
  void take(const Held& h);
  void mapped(const record::Record& r, std::uint32_t pid, std::uint64_t start, std::uint64_t len,
              std::string_view filename, std::span<const std::byte> id);
};

}  // namespace perfspec::runtime
