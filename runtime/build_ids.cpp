// SPDX-License-Identifier: MIT
#include "runtime/build_ids.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace perfspec::runtime {

void BuildIds::mapped(const record::Record& r, std::uint32_t pid, std::uint64_t start, std::uint64_t len,
                      std::string_view filename, std::span<const std::byte> id) {
  maps_.apply(r);
  const std::uint16_t mode = r.misc & record::misc_cpumode_mask;
  const bool kernel = mode == record::misc_kernel || mode == record::misc_guest_kernel;
  // The name the mappings give the binary (`[kernel.kallsyms]` for the kernel's text).
  std::string name(maps_.binary_of(pid, start, r.misc));
  if (name.empty() || known_.count(name)) return;
  record::BinaryBuildId b{name, {}, kernel};
  if (!id.empty()) {
    b.build_id.assign(id.begin(), id.end());  // the kernel read it from the file mapped
  } else if (name == "[kernel.kallsyms]") {
    b.build_id = record::kernel_build_id();
  } else if (name == "[vdso]") {
    b.build_id = record::vdso_build_id();
  } else if (!kernel && filename.starts_with('/') && !filename.starts_with("/dev/") &&
             !filename.starts_with("/anon_hugepage") && !filename.starts_with("/SYSV") &&
             !filename.starts_with("/tmp/perf-")) {
    // The file the process mapped, as it sees it; else the path here.
    b.build_id = record::elf_build_id(fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, start, start + len));
    if (b.build_id.empty()) b.build_id = record::elf_build_id(fmt::format("/proc/{}/root{}", pid, filename));
    if (b.build_id.empty()) b.build_id = record::elf_build_id(std::string(filename));
  }
  known_.emplace(name, std::move(b));
  order_.push_back(std::move(name));
}

void BuildIds::see(const record::Record& r, std::span<const std::byte> bytes) {
  Held h;
  h.misc = r.misc;
  if (auto* s = r.get<record::Sample>()) {
    if (!s->has(record::sample_ip) || !s->has(record::sample_tid)) return;
    h.time = s->has(record::sample_time) ? s->time : 0;
    h.pid = s->pid;
    h.ip = s->ip;
  } else if (r.get<record::Mmap2>() || r.get<record::Mmap>() || r.kind() == record::Type::fork) {
    h.time = r.sample_id.has(record::sample_time) ? r.sample_id.time : 0;
    h.mapping.assign(bytes.begin(), bytes.end());
  } else {
    return;
  }
  if (h.time == 0) return take(h);  // no time to order it by: as it comes
  latest_ = std::max(latest_, h.time);
  held_.push_back(std::move(h));
}

void BuildIds::settle() {
  constexpr std::uint64_t second = 1000000000;
  std::stable_sort(held_.begin(), held_.end(), [](const Held& a, const Held& b) { return a.time < b.time; });
  std::size_t n = 0;
  while (n < held_.size() && held_[n].time + second <= latest_) take(held_[n++]);
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(n));
}

void BuildIds::take(const Held& h) {
  if (h.mapping.empty()) {
    std::string_view name = maps_.binary_of(h.pid, h.ip, h.misc);
    if (!name.empty() && !hit_.contains(name)) hit_.emplace(name);
    return;
  }
  record::Record r;
  try {
    formats_.decode(h.mapping, 0, r);
  } catch (const record::DecodeError&) {
    return;
  }
  if (auto* m = r.get<record::Mmap2>()) {
    std::span<const std::byte> id =
        (r.misc & record::misc_mmap_build_id) ? m->build_id : std::span<const std::byte>{};
    mapped(r, m->pid, m->addr, m->len, m->filename, id);
  } else if (auto* m1 = r.get<record::Mmap>()) {
    mapped(r, m1->pid, m1->addr, m1->len, m1->filename, {});
  } else {
    maps_.apply(r);  // FORK
  }
}

std::vector<std::byte> BuildIds::section() {
  latest_ = ~std::uint64_t{0};
  settle();
  std::vector<record::BinaryBuildId> hit;
  for (const auto& name : order_)
    if (hit_.contains(name)) hit.push_back(known_.at(name));
  return record::build_id_section(hit);
}

}  // namespace perfspec::runtime
