// SPDX-License-Identifier: MIT
// Fuzz target: perf-format JSON event tables.
//
// Each input is written as `fuzzmodel/table.json` of a scratch events folder whose mapfile.csv names
// fuzzmodel for GenuineIntel-6-55-4. Then:
//   1. EventTables::load with cache_dir "none" (the JSON parse); every loaded name is looked up with
//      find() and resolved, alone and as `pmu/name/` on its unit's PMU, against tests/fixtures/intel_skx;
//   2. the same through the compiled index: load with a scratch cache_dir writes the index, a second
//      load maps it; both must agree with (1) on the names found (a disagreement aborts);
//   3. list_events(source json) with descriptions, printed as text and JSON.
// perfspec::Error is the expected rejection of a bad table.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/common.hpp"
#include "perfspec/catalog.hpp"
#include "perfspec/perfspec.hpp"
#include "perfspec/tables.hpp"

namespace {

const std::string& events_dir() {
  static const std::string dir = [] {
    std::string d = fuzz::scratch() + "/events";
    fuzz::write_file(
        d + "/mapfile.csv",
        "Family-model,Version,Filename,EventType\nGenuineIntel-6-55-[01234],v1,fuzzmodel,core\n");
    fuzz::fs::create_directories(d + "/fuzzmodel");
    return d;
  }();
  return dir;
}

void clear_cache(const std::string& dir) {
  std::error_code ec;
  fuzz::fs::remove_all(dir, ec);
}

[[noreturn]] void fail(const char* what, std::string_view name) {
  std::fprintf(stderr, "json target: %s (name '%.*s')\n", what, static_cast<int>(name.size()), name.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string& dir = events_dir();
  fuzz::write_file(dir + "/fuzzmodel/table.json", input);
  const std::string cache = fuzz::scratch() + "/cache";

  std::shared_ptr<const perfspec::spec::EventTables> tables;
  try {
    tables = perfspec::spec::EventTables::load(dir, "fuzzmodel", {"none"});
  } catch (const perfspec::Error& e) {
    (void)e.message();
    return 0;
  }

  // Names to try: every loaded one (a bounded number) and a few that are not there.
  std::vector<std::string> names;
  for (const auto& e : tables->events()) {
    if (names.size() >= 16) break;
    names.push_back(e.alias.name);
  }

  perfspec::spec::MachineOptions o;
  o.libpfm4 = false;
  o.events_dir = dir;
  o.cpuid = "GenuineIntel-6-55-4";
  o.cache_dir = "none";
  perfspec::spec::Machine machine(fuzz::fixture("intel_skx"), o);
  for (const auto& e : tables->events()) {
    if (&e - tables->events().data() >= 16) break;
    std::vector<std::string> texts = {e.alias.name, e.alias.name + ":u"};
    std::string pmu = e.pmu.empty() ? "cpu" : e.pmu;
    texts.push_back(pmu + "/" + e.alias.name + "/");
    texts.push_back(pmu + "/event=" + e.alias.name + ",period=1000/");
    for (const auto& text : texts) {
      try {
        auto set = perfspec::resolve(text, machine);
        (void)perfspec::to_json(set);
      } catch (const perfspec::Error& err) {
        (void)perfspec::render(err, text);
      }
    }
  }
  try {
    (void)perfspec::resolve("cpu/no.such.event/", machine);  // suggestions over the table's names
  } catch (const perfspec::Error& err) {
    (void)err.help();
  }

  // The compiled index must give the same answers as the parsed JSON (for an empty table too).
  {
    clear_cache(cache);
    try {
      auto written = perfspec::spec::EventTables::load(dir, "fuzzmodel", {cache});
      auto mapped = perfspec::spec::EventTables::load(dir, "fuzzmodel", {cache});
      if (!mapped->from_index()) fail("the second load did not use the index it wrote", "");
      for (const auto& name : names) {
        auto want = tables->find(name);
        auto got = mapped->find(name);
        if (want.size() != got.size()) fail("index find() count differs from the JSON's", name);
        for (std::size_t i = 0; i < want.size(); ++i) {
          if (want[i]->alias.terms != got[i]->alias.terms) fail("index terms differ from the JSON's", name);
          if (want[i]->pmu != got[i]->pmu) fail("index pmu differs from the JSON's", name);
          if (want[i]->alias.unit != got[i]->alias.unit) fail("index unit differs from the JSON's", name);
          if (want[i]->compat != got[i]->compat) fail("index compat differs from the JSON's", name);
          if (want[i]->deprecated != got[i]->deprecated || want[i]->alias.per_pkg != got[i]->alias.per_pkg)
            fail("index flags differ from the JSON's", name);
        }
      }
      // What was skipped is kept too (control characters become spaces: the index is line-based).
      if (mapped->diagnostics().size() != tables->diagnostics().size())
        fail("index holds other diagnostics", "");
      for (std::size_t i = 0; i < tables->diagnostics().size(); ++i) {
        std::string want = tables->diagnostics()[i].text();
        for (char& c : want)
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
        if (mapped->diagnostics()[i].text() != want) fail("index diagnostic differs from the JSON's", want);
      }
      if (mapped->events().size() != tables->events().size())
        fail("index holds a different number of events", "");
      (void)mapped->names();
    } catch (const perfspec::Error& e) {
      fail("loading through the index threw where the JSON loaded", e.message());
    }
    clear_cache(cache);
  }

  try {
    perfspec::spec::ListFilter filter;
    filter.source = "json";
    filter.deprecated = true;
    auto listed = perfspec::spec::list_events(machine, filter);
    (void)perfspec::list_text({}, listed, 80);
    (void)perfspec::list_json({}, listed);
  } catch (const perfspec::Error& e) {
    (void)e.message();
  }
  return 0;
}
