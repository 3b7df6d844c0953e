// SPDX-License-Identifier: MIT
// Fuzz target: sysfs alias files (`events/<name>` with `.scale` and `.unit`).
//
// One scratch sysfs tree per process holds `cpu` (a core PMU) and `uncore_imc_0`, formats, type and
// caps copied from tests/fixtures/intel_skx. Each input is written as `events/fuzz` of both PMUs and a
// fresh Machine resolves a few strings that use the alias, lists the PMUs' events, and prints.
//
// Input: `<alias text>[\x01<.scale text>[\x01<.unit text>]]`; a part that is absent removes its file. A
// part that is exactly `\x02D` is a folder in place of the file, `\x02L` a symlink to nothing (what a
// hostile or broken tree holds).
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/common.hpp"
#include "perfspec/catalog.hpp"
#include "perfspec/perfspec.hpp"

namespace {

const std::string& tree() {
  static const std::string root = [] {
    std::string r = fuzz::scratch() + "/sysfs";
    std::string from = fuzz::fixture("intel_skx") + "/bus/event_source/devices/";
    std::string to = r + "/bus/event_source/devices/";
    for (const char* pmu : {"cpu", "uncore_imc_0"}) {
      fuzz::copy_tree(from + pmu + "/format", to + pmu + "/format");
      fuzz::fs::copy_file(from + pmu + "/type", to + pmu + "/type");
      fuzz::fs::create_directories(to + pmu + "/events");
    }
    fuzz::copy_tree(from + "cpu/caps", to + "cpu/caps");
    fuzz::fs::copy_file(from + "uncore_imc_0/cpumask", to + "uncore_imc_0/cpumask");
    return r;
  }();
  return root;
}

void put(const std::string& path, std::string_view part, bool present) {
  std::error_code ec;
  fuzz::fs::remove_all(path, ec);
  if (!present) return;
  if (part == "\x02D")
    fuzz::fs::create_directory(path, ec);
  else if (part == "\x02L")
    fuzz::fs::create_symlink("missing", path, ec);
  else
    fuzz::write_file(path, part);
}

constexpr const char* uses[] = {
    "cpu/fuzz/",
    "fuzz",
    "cpu/fuzz,umask=0x1,config1=2/uk",
    "cpu/event=fuzz/",
    "uncore_imc_0/fuzz/",
    "{cpu/fuzz/,cycles,uncore_imc_0/fuzz/}:S",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view parts[3];
  bool present[3] = {true, false, false};
  std::string_view rest = input;
  for (int i = 0; i < 3; ++i) {
    auto cut = i < 2 ? rest.find('\x01') : std::string_view::npos;
    parts[i] = rest.substr(0, cut);
    if (cut == std::string_view::npos) break;
    rest = rest.substr(cut + 1);
    present[i + 1] = true;
  }
  const std::string devices = tree() + "/bus/event_source/devices/";
  for (const char* pmu : {"cpu", "uncore_imc_0"}) {
    std::string base = devices + pmu + "/events/fuzz";
    put(base, parts[0], present[0]);
    put(base + ".scale", parts[1], present[1]);
    put(base + ".unit", parts[2], present[2]);
  }

  perfspec::spec::MachineOptions o;
  o.libpfm4 = false;
  o.cpuid = "GenuineIntel-6-55-4";
  perfspec::spec::Machine machine(tree(), o);
  for (const char* text : uses) {
    try {
      auto set = perfspec::resolve(text, machine);
      (void)perfspec::to_text(set);
      (void)perfspec::to_json(set);
    } catch (const perfspec::Error& e) {
      (void)perfspec::render(e, text);
    }
  }
  try {
    perfspec::spec::ListFilter filter;
    filter.source = "sysfs";
    auto events = perfspec::spec::list_events(machine, filter);
    auto pmus = perfspec::spec::list_pmus(machine, filter);
    (void)perfspec::list_text(pmus, events, 60);
    (void)perfspec::list_json(pmus, events);
  } catch (const perfspec::Error& e) {
    (void)e.message();
  }
  return 0;
}
