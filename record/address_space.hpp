// SPDX-License-Identifier: MIT
#pragma once
// The address spaces of a recording as perf's maps keep them: mappings by start, a new one cutting
// what it covers of the old ones out, and perf's names for kinds of memory. Internal to record/
// (symbolizer.cpp).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace perfspec::record::detail {

enum class MapKind { file, identity, vdso, kernel };

struct Mapping {
  std::uint64_t end = 0, pgoff = 0;
  const std::string* dso = nullptr;       // interned
  const std::string* build_id = nullptr;  // interned hex: the build recorded for this mapping
  MapKind kind = MapKind::file;
};
using Maps = std::map<std::uint64_t, Mapping>;  // by start

// perf's is_anon_memory and is_no_dso_memory
bool anon_memory(std::string_view f);
bool no_dso_memory(std::string_view f);
// A mapping over others: what it covers of them is gone (perf's maps__fixup_overlap_and_insert).
void insert(Maps& maps, std::uint64_t start, Mapping m);
// The mapping holding `address`, nullptr when none does.
const std::pair<const std::uint64_t, Mapping>* find(const Maps& maps, std::uint64_t address);
// A kernel module's path as perf names its dso: `/lib/modules/6.1.0/kernel/fs/xfs/xfs.ko.xz` -> `[xfs]`
// (dashes become underscores, as the kernel names modules).
std::string module_name(std::string_view path);

}  // namespace perfspec::record::detail
