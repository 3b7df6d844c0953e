// SPDX-License-Identifier: MIT
// The address spaces of a recording, as perf's maps keep them (tools/perf/util/maps.c of Linux 6.12).
#include "record/address_space.hpp"

namespace perfspec::record::detail {

// perf's is_anon_memory and is_no_dso_memory
bool anon_memory(std::string_view f) {
  return f == "//anon" || f.starts_with("/dev/zero") || f.starts_with("/anon_hugepage");
}
bool no_dso_memory(std::string_view f) {
  return f.starts_with("[stack") || f.starts_with("/SYSV") || f == "[heap]";
}

// A mapping over others: what it covers of them is gone (perf's maps__fixup_overlap_and_insert).
void insert(Maps& maps, std::uint64_t start, Mapping m) {
  auto it = maps.lower_bound(start);
  if (it != maps.begin()) --it;
  while (it != maps.end() && it->first < m.end) {
    const std::uint64_t s = it->first;
    Mapping old = it->second;
    if (old.end <= start) {
      ++it;
      continue;
    }
    it = maps.erase(it);
    if (s < start) {  // the part before
      Mapping before = old;
      before.end = start;
      maps.emplace(s, before);
    }
    if (old.end > m.end) {  // the part after
      Mapping after = old;
      if (old.kind == MapKind::file || old.kind == MapKind::vdso) after.pgoff += m.end - s;
      maps.emplace(m.end, after);
    }
  }
  maps[start] = m;
}

const std::pair<const std::uint64_t, Mapping>* find(const Maps& maps, std::uint64_t address) {
  auto it = maps.upper_bound(address);
  if (it == maps.begin()) return nullptr;
  --it;
  return address < it->second.end ? &*it : nullptr;
}

// A kernel module's path as perf names its dso: `/lib/modules/6.1.0/kernel/fs/xfs/xfs.ko.xz` -> `[xfs]`
// (dashes become underscores, as the kernel names modules).
std::string module_name(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') + 1);
  base = base.substr(0, base.find(".ko"));
  std::string out = "[" + std::string(base) + "]";
  for (char& c : out)
    if (c == '-') c = '_';
  return out;
}

}  // namespace perfspec::record::detail
