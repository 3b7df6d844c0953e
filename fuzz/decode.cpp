// SPDX-License-Identifier: MIT
// Fuzz target: `perfspec decode` (perfspec::decode and perfspec::parse_perf_attr_text).
//
// Input: byte 0 picks the tree (as the events target); byte 1 picks the form of the rest:
//   even: what `perfspec decode` reads on stdin (resolve's JSON or `perf stat -vv` text), parsed with
//         parse_attr_input against the tree (perf 6.12's annotations checked against it), each attr
//         decoded (at most 8);
//   odd:  binary: a type selector byte (below 0xe0: one of the tree's PMU types or a generic type; else
//         the next 4 bytes), then config, config1, config2, config3 (8 bytes each, little-endian), then
//         one byte each for exclude_user, exclude_kernel, exclude_hv, exclude_idle, exclude_host,
//         exclude_guest, precise_ip, freq, sample_period (8 bytes); missing bytes are 0.
// decode.hpp promises that a decoded string without leftovers parses and resolves back to the attr's
// type and config words: a violation aborts (set PERFSPEC_FUZZ_DECODE_ORACLE=0 to only look for crashes).
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/common.hpp"
#include "perfspec/perfspec.hpp"

namespace {

constexpr std::array<const char*, 4> trees = {"intel_skx", "amd_zen3", "arm_n1", "hybrid_adl"};

struct Tree {
  std::unique_ptr<perfspec::spec::Machine> machine;
  std::vector<std::uint32_t> types;
};

Tree& tree(std::size_t i) {
  static std::array<Tree, 4> all;
  Tree& t = all[i];
  if (!t.machine) {
    perfspec::spec::MachineOptions o;
    o.libpfm4 = false;
    if (const char* d = std::getenv("PERFSPEC_FUZZ_EVENTS_DIR"); d && *d) {
      o.events_dir = d;
      o.cache_dir = fuzz::scratch() + "/cache";
    }
    static constexpr const char* cpuids[] = {"GenuineIntel-6-55-4", "AuthenticAMD-25-21-0",
                                             "0x00000000410fd0c0", "GenuineIntel-6-97-2"};
    o.cpuid = cpuids[i];
    t.machine = std::make_unique<perfspec::spec::Machine>(fuzz::fixture(trees[i]), o);
    t.types = {0, 1, 2, 3, 4, 5};
    for (const auto& n : t.machine->pmu_names())
      if (const auto* p = t.machine->pmu(n)) t.types.push_back(p->type());
  }
  return t;
}

using fuzz::Reader;

void set(perfspec::Attr& a, std::string_view field, std::uint64_t v) {
  const perfspec::AttrField* f = perfspec::find_attr_field(field);
  if (!f) {
    std::fprintf(stderr, "decode target: no attr field '%.*s'\n", static_cast<int>(field.size()),
                 field.data());
    std::abort();
  }
  f->set(a, v);
}

bool oracle() {
  static const bool on = [] {
    const char* e = std::getenv("PERFSPEC_FUZZ_DECODE_ORACLE");
    return !(e && *e == '0');
  }();
  return on;
}

void check(const perfspec::Attr& attr, const perfspec::spec::Machine& machine) {
  perfspec::Decoded d;
  try {
    d = perfspec::decode(attr, machine);
  } catch (const perfspec::Error& e) {
    (void)e.message();
    return;
  }
  if (!oracle() || !d.leftovers.empty()) return;
  std::string why;
  try {
    auto set = perfspec::resolve(d.event, machine);
    bool same = false;
    for (const auto& e : set.events)
      same = same ||
             (e.attr.type == attr.type && e.attr.config == attr.config && e.attr.config1 == attr.config1 &&
              e.attr.config2 == attr.config2 && e.attr.config3 == attr.config3);
    if (same) return;
    why = "resolves to other type/config words";
  } catch (const perfspec::Error& e) {
    why = "does not resolve: " + e.message();
  }
  std::fprintf(
      stderr,
      "decode oracle: type=%u config=%#llx config1=%#llx config2=%#llx config3=%#llx decoded to '%s' (%s), "
      "no leftovers, but it %s\n",
      attr.type, static_cast<unsigned long long>(attr.config), static_cast<unsigned long long>(attr.config1),
      static_cast<unsigned long long>(attr.config2), static_cast<unsigned long long>(attr.config3),
      d.event.c_str(), d.how.c_str(), why.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  Tree& t = tree(data[0] % trees.size());
  if (data[1] % 2 == 0) {
    std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
    std::vector<perfspec::Attr> attrs;
    try {
      attrs = perfspec::parse_attr_input(text, *t.machine);
    } catch (const perfspec::Error& e) {
      (void)e.message();
      return 0;
    }
    for (std::size_t i = 0; i < attrs.size() && i < 8; ++i) check(attrs[i], *t.machine);
    return 0;
  }
  Reader r{data + 2, size - 2};
  perfspec::Attr a;
  a.size = perfspec::attr_size_ver8;
  auto sel = static_cast<std::uint8_t>(r.take(1));
  a.type = sel < 0xe0 ? t.types[sel % t.types.size()] : static_cast<std::uint32_t>(r.take(4));
  for (const char* w : {"config", "config1", "config2", "config3"}) set(a, w, r.take(8));
  for (const char* flag : {"exclude_user", "exclude_kernel", "exclude_hv", "exclude_idle", "exclude_host",
                           "exclude_guest", "precise_ip", "freq"})
    set(a, flag, r.take(1));
  set(a, "sample_period", r.take(8));
  check(a, *t.machine);
  return 0;
}
