// SPDX-License-Identifier: MIT
// Named events from perf-format JSON tables, CPU ids, the compiled index, list and snapshot.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "perfspec/perfspec.hpp"
#include "perfspec/tables.hpp"
#include "spec/builtin.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using spec::cpuid_matches;

namespace {

std::string shared_events() { return test::source_dir() + "/../shared/pmu-events/x86"; }
bool have_shared_events() { return std::filesystem::exists(shared_events() + "/mapfile.csv"); }

// A small perf-format events directory in a temp tree.
struct TableTree {
  test::TempTree tree;
  std::string dir() const { return tree.root() + "/events"; }
  std::string cache() const { return tree.root() + "/cache"; }
  TableTree() {
    tree.write("events/mapfile.csv",
               "Family-model,Version,Filename,EventType\n"
               "GenuineIntel-6-55-[01234],v1,testmodel,core\n"
               "GenuineIntel-6-99,v1,other,core\n");
    tree.write("events/testmodel/cache.json", R"([
      {"EventName": "MEM_LOAD_RETIRED.L1_MISS", "EventCode": "0xd1", "UMask": "0x8", "SampleAfterValue": "100003",
       "BriefDescription": "Retired load instructions missed L1 cache as data sources"},
      {"EventName": "OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE", "EventCode": "0xB7, 0xBB", "UMask": "0x1",
       "MSRIndex": "0x1a6,0x1a7", "MSRValue": "0x10001", "SampleAfterValue": "100003"},
      {"EventName": "CYCLE_ACTIVITY.STALLS_L1D_MISS", "EventCode": "0xa3", "UMask": "0xc", "CounterMask": "12",
       "Invert": "0", "EdgeDetect": "0"},
      {"MetricName": "ipc", "MetricExpr": "instructions / cycles"}
    ])");
    tree.write("events/testmodel/uncore-memory.json", R"([
      {"EventName": "UNC_M_CAS_COUNT.RD", "EventCode": "0x04", "UMask": "0x03", "Unit": "iMC",
       "ScaleUnit": "6.103515625E-5MiB", "PerPkg": "1"},
      {"EventName": "UNC_CHA_TOR_INSERTS.IA", "EventCode": "0x35", "UMask": "0x31", "Unit": "CHA",
       "Filter": "config1=0x40233"}
    ])");
    tree.write("events/other/x.json", R"([{"EventName": "ONLY_ON_OTHER", "EventCode": "0x1"}])");
  }
  spec::MachineOptions options(std::string cpuid = "GenuineIntel-6-55-4") const {
    return {dir(), std::move(cpuid), cache(), /*libpfm4=*/false};
  }
};

std::string one(std::string_view text, const spec::Machine& m) {
  auto set = resolve(text, m);
  REQUIRE(set.events.size() == 1);
  return test::attr_summary(set.events[0].attr);
}

}  // namespace

TEST_CASE("CPU ids match mapfile regexes as perf does") {
  CHECK(cpuid_matches("GenuineIntel-6-55-[01234]", "GenuineIntel-6-55-4"));
  CHECK_FALSE(cpuid_matches("GenuineIntel-6-55-[01234]", "GenuineIntel-6-55-5"));
  CHECK_FALSE(
      cpuid_matches("GenuineIntel-6-55-[01234]", "GenuineIntel-6-55"));  // full pattern needs a full id
  CHECK(cpuid_matches("GenuineIntel-6-6[AC]", "GenuineIntel-6-6A-6"));   // no stepping in the pattern
  CHECK(cpuid_matches("GenuineIntel-6-6[AC]", "GenuineIntel-6-6C"));
  CHECK_FALSE(cpuid_matches("GenuineIntel-6-6[AC]", "GenuineIntel-6-6D-1"));
  CHECK_FALSE(cpuid_matches("GenuineIntel-6-6[AC]", "XGenuineIntel-6-6A-1"));  // anchored at the start
  CHECK(cpuid_matches("AuthenticAMD-25-[[:xdigit:]]+", "AuthenticAMD-25-1-1"));
  CHECK(cpuid_matches("GenuineIntel-6-(97|9A|B7|BA|BE|BF)", "GenuineIntel-6-9A-3"));
  CHECK_FALSE(cpuid_matches("GenuineIntel-6-(97|9A", "GenuineIntel-6-97-1"));  // a bad regex matches nothing
}

TEST_CASE("this machine's CPU id is read the way perf reads it") {
  test::TempTree t;
  t.write("cpuinfo",
          "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
          "model name\t: Intel(R) Xeon(R)\nstepping\t: 4\n\nprocessor\t: 1\n");
  CHECK(spec::detect_cpuid(t.root() + "/cpuinfo", t.root() + "/none") == "GenuineIntel-6-55-4");
  t.write("arm", "processor\t: 0\nBogoMIPS\t: 50.00\n");
  t.write("midr", "0x00000000410fd0c0\n");
  CHECK(spec::detect_cpuid(t.root() + "/arm", t.root() + "/midr") == "0x00000000410fd0c0");
}

TEST_CASE("units name PMUs as perf's jevents does") {
  CHECK(spec::table_unit_pmu("") == "");
  CHECK(spec::table_unit_pmu("iMC") == "uncore_imc");
  CHECK(spec::table_unit_pmu("cha") == "uncore_cha");
  CHECK(spec::table_unit_pmu("L3PMC") == "amd_l3");
  CHECK(spec::table_unit_pmu("DFPMC") == "amd_df");
  CHECK(spec::table_unit_pmu("cpu_atom") == "cpu_atom");
  CHECK(spec::table_unit_pmu("UPI LL") == "uncore_upi");
  CHECK(spec::table_unit_pmu("CBO") == "uncore_cbox");
}

TEST_CASE("table entries become terms as REFERENCE.md section 5 says") {
  spec::TableFields f;
  f.event_code = "0xd1";
  f.umask = "0x8";
  f.sample_after_value = "100003";
  CHECK(spec::table_terms(f) ==
        "event=0xd1,period=100003,umask=8");  // jevents prints hex below 10 in decimal
  f.counter_mask = "2";
  f.invert = "1";
  f.edge_detect = "1";
  f.any_thread = "1";
  CHECK(spec::table_terms(f) == "event=0xd1,any=1,cmask=2,edge=1,inv=1,period=100003,umask=8");
  spec::TableFields z;
  z.event_code = "0xB7, 0xBB";  // the first code
  z.umask = "0x00";             // zero fields are left out
  z.msr_index = "0x1a6,0x1a7";
  z.msr_value = "0x10001";
  CHECK(spec::table_terms(z) == "event=0xb7,offcore_rsp=0x10001");
  z.msr_index = "0x3F6";
  z.msr_value = "3";
  CHECK(spec::table_terms(z) == "event=0xb7,ldlat=3");  // MSRValue as written
  z.msr_index = "0x3F7";
  CHECK(spec::table_terms(z) == "event=0xb7,frontend=3");
  spec::TableFields c;
  c.config_code = "0x1234";
  c.filter = "filter_tid=0x3f";
  CHECK(spec::table_terms(c) == "config=0x1234,filter_tid=0x3f");
  spec::TableFields bad;
  bad.event_code = "zz";
  CHECK_THROWS_WITH(spec::table_terms(bad), "EventCode 'zz' is not a number");
  // The fields jevents adds for uncore tables, in its order; hex values of 10 and more stay hex.
  spec::TableFields u;
  u.eventid_code = "0x1";
  u.node_type = "0x5";
  CHECK(spec::table_terms(u) == "eventid=1,type=5");
  spec::TableFields l3;
  l3.event_code = "0x04";
  l3.umask = "0xff";
  l3.en_all_cores = "0x1";
  l3.en_all_slices = "0x1";
  l3.slice_id = "0x3";
  l3.thread_mask = "0x3";
  l3.port_mask = "0x1F";
  l3.fc_mask = "0x07";
  l3.rdwr_mask = "0x1";
  CHECK(spec::table_terms(l3) ==
        "event=4,ch_mask=0x1f,fc_mask=7,umask=0xff,rdwrmask=1,enallcores=1,enallslices=1,"
        "sliceid=3,threadmask=3");
  spec::TableFields ext;
  ext.event_code = "0x2A,0x2B";
  ext.ext_sel = "1";
  CHECK(spec::table_terms(ext) == "event=0x12a");
  spec::TableFields msr;
  msr.event_code = "0xb";
  msr.msr_index = "0x3F6";  // five Nehalem/Westmere entries have no MSRValue: perf writes `ldlat=None`
  CHECK_THROWS_WITH(spec::table_terms(msr), "MSRIndex '0x3F6' without an MSRValue");
  msr.msr_index = "0x123";
  msr.msr_value = "1";
  CHECK_THROWS_WITH(spec::table_terms(msr),
                    "MSRIndex '0x123' is not one perf knows (0x3F6, 0x1A6, 0x1A7, 0x3F7)");
}

TEST_CASE("named table events resolve with modifiers, extra terms, pmu/name/ and pmu/event=name/") {
  TableTree t;
  spec::Machine m(test::fixture("intel_skx"), t.options());
  CHECK(one("mem_load_retired.l1_miss", m) == "type=4 config=0x8d1 sample_period=100003");
  CHECK(one("MEM_LOAD_RETIRED.L1_MISS:pp", m) == "type=4 config=0x8d1 sample_period=100003 precise_ip=2");
  CHECK(one("cpu/mem_load_retired.l1_miss,cmask=2/u", m) ==
        "type=4 config=0x20008d1 sample_period=100003 exclude_kernel=1 exclude_hv=1");
  CHECK(one("cpu/event=mem_load_retired.l1_miss/", m) == "type=4 config=0x8d1 sample_period=100003");
  CHECK(one("offcore_response.demand_data_rd.any_response", m) ==
        "type=4 config=0x1b7 sample_period=100003 config1=0x10001");
  CHECK(one("cycle_activity.stalls_l1d_miss", m) == "type=4 config=0xc000ca3");
  auto imc = resolve("unc_m_cas_count.rd", m);
  REQUIRE(imc.events.size() == 6);
  CHECK(imc.events[5].pmu == "uncore_imc_5");
  CHECK(imc.events[5].attr.config == 0x304);
  CHECK(imc.events[0].unit == "MiB");
  CHECK(imc.events[0].scale == doctest::Approx(6.103515625e-5));
  CHECK(imc.events[0].per_pkg);
  auto cha = resolve("UNC_CHA_TOR_INSERTS.IA", m);
  REQUIRE(cha.events.size() == 4);
  CHECK(test::attr_summary(cha.events[0].attr) == "type=19 config=0x3135 config1=0x40233");
  // sysfs aliases come first: the table does not shadow them
  CHECK(one("mem-loads", m) == "type=4 config=0x1cd config1=0x3");
}

TEST_CASE("the CPU id picks the model; an unknown one has no table events") {
  TableTree t;
  spec::Machine other(test::fixture("intel_skx"), t.options("GenuineIntel-6-99-1"));
  CHECK(one("only_on_other", other) == "type=4 config=0x1");
  CHECK(test::error_of("mem_load_retired.l1_miss", other).find("unknown event 'mem_load_retired.l1_miss'") !=
        std::string::npos);
  spec::Machine none(test::fixture("intel_skx"), t.options("AuthenticAMD-23-1-1"));
  CHECK(none.tables() == nullptr);
  CHECK(none.cpuid() == "AuthenticAMD-23-1-1");
}

TEST_CASE("unknown names get suggestions from the tables too") {
  TableTree t;
  spec::Machine m(test::fixture("intel_skx"), t.options());
  CHECK(test::error_of("mem_load_retired.l1_mis", m) ==
        "event syntax error: 'mem_load_retired.l1_mis'\n"
        "                     \\___ unknown event 'mem_load_retired.l1_mis'\n"
        "help: did you mean 'MEM_LOAD_RETIRED.L1_MISS'?\n");
  CHECK(test::error_of("cpu/event=mem_load_retired.l2_miss/", m)
            .find("did you mean 'MEM_LOAD_RETIRED.L1_MISS'?") != std::string::npos);
}

TEST_CASE("the compiled index: written on first use, used after, rebuilt when a table changes") {
  TableTree t;
  spec::EventTables::Options o{t.cache()};
  auto first = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK_FALSE(first->from_index());
  auto second = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK(second->from_index());
  REQUIRE(second->events().size() == first->events().size());
  for (std::size_t i = 0; i < first->events().size(); ++i) {
    CHECK(second->events()[i].alias.name == first->events()[i].alias.name);
    CHECK(second->events()[i].alias.terms == first->events()[i].alias.terms);
    CHECK(second->events()[i].pmu == first->events()[i].pmu);
    CHECK(second->events()[i].alias.unit == first->events()[i].alias.unit);
  }
  CHECK(second->find("unc_m_cas_count.rd").size() == 1);
  // A changed table (size or time) invalidates the index.
  t.tree.write("events/testmodel/cache.json", R"([{"EventName": "NEW.EVENT", "EventCode": "0x7"}])");
  auto third = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK_FALSE(third->from_index());
  CHECK(third->find("new.event").size() == 1);
  CHECK(third->find("mem_load_retired.l1_miss").empty());
  // "none": never written
  CHECK_FALSE(spec::EventTables::load(t.dir(), "testmodel", {"none"})->from_index());
}

TEST_CASE("a malformed entry or file is skipped and reported; it takes no other name down") {
  TableTree t;
  auto problems = [&](std::string_view json) {
    t.tree.write("events/testmodel/cache.json", json);
    auto tables = spec::EventTables::load(t.dir(), "testmodel", {"none"});
    std::vector<std::string> out;
    for (const auto& d : tables->diagnostics()) out.push_back(d.text());
    CHECK(tables->find("unc_m_cas_count.rd").size() == 1);  // the other file still loads
    return out;
  };
  std::string file = t.dir() + "/testmodel/cache.json";
  using V = std::vector<std::string>;
  CHECK(problems("[{\"EventName\": \"A\", ") == V{file + ": invalid JSON at byte 21"});
  CHECK(problems("{}") == V{file + ": expected a JSON array of events"});
  CHECK(problems("[{\"EventName\": \"A.B\", \"EventCode\": \"0xzz\"}, {\"EventName\": \"C\", \"EventCode\": "
                 "\"1\"}]") == V{file + ": entry 0 (A.B): EventCode '0xzz' is not a number"});
  CHECK(problems("[{\"EventName\": \"A\", \"EventCode\": \"1\"}, {\"EventCode\": \"1\"}]") ==
        V{file + ": entry 1: no EventName, MetricName or counter counts: not an event"});
  CHECK(problems("[{\"EventName\": \"A\", \"EventCode\": [1]}]") ==
        V{file + ": entry 0 (A): 'EventCode' must be a string, not array"});
  CHECK(problems("[{\"EventName\": \"A,B\", \"EventCode\": \"1\"}]") ==
        V{file + ": entry 0 (A,B): the name cannot be written in an event string"});
  CHECK(problems("[{\"ArchStdEvent\": \"NOSUCH\"}]") ==
        V{file + ": entry 0: ArchStdEvent 'NOSUCH' is not an architecture-standard event"});
  CHECK(problems("[\"text\"]") == V{file + ": entry 0: expected an object"});
  // What perf's jevents accepts: no EventCode is event 0; unknown fields are ignored; counter counts,
  // metrics and metric-group descriptions are no events and no problems.
  CHECK(problems(R"([{"EventName": "ZERO", "Frobnicate": "1"}, {"Unit": "core", "CountersNumFixed": "3",
                     "CountersNumGeneric": "4"}, {"MetricName": "m", "MetricExpr": "a / b"}])")
            .empty());
  auto full = spec::EventTables::load_full(t.dir(), "testmodel");
  REQUIRE(full->find("zero").size() == 1);
  CHECK(full->find("zero")[0]->alias.terms == "event=0");
  REQUIRE(full->counters().size() == 1);
  CHECK(full->counters()[0].pmu.empty());  // Unit `core`: every core PMU, as a core event's pmu
  CHECK(full->counters()[0].generic == 4);
  REQUIRE(full->metrics().size() == 1);
  CHECK(full->metrics()[0].expr == "a / b");
  t.tree.write("events/testmodel/metricgroups.json", R"({"TopdownL1": "Top-down level 1"})");
  CHECK(spec::EventTables::load_full(t.dir(), "testmodel")->metric_groups().at("TopdownL1") ==
        "Top-down level 1");
  CHECK(spec::EventTables::load(t.dir(), "testmodel", {"none"})->diagnostics().empty());

  // A broken file is named where a name is not found (it may be defined there), and only there.
  t.tree.write("events/testmodel/cache.json", "[{\"EventName\": \"A\", ");
  spec::Machine m(test::fixture("intel_skx"), {t.dir(), "GenuineIntel-6-55-4", "none", false});
  CHECK(one("uncore_imc_0/unc_m_cas_count.rd/", m) == "type=13 config=0x304");
  CHECK(test::error_of("cycles,mem_load_retired.l1_miss", m) ==
        "event syntax error: 'cycles,mem_load_retired.l1_miss'\n"
        "                            \\___ unknown event 'mem_load_retired.l1_miss'\n"
        "help: the event tables have 1 file(s) that could not be read, which may define it: " +
            file + ": invalid JSON at byte 21\n");
  // The compiled index keeps the diagnostics.
  test::TempTree cache;
  spec::EventTables::load(t.dir(), "testmodel", {cache.root()});
  auto indexed = spec::EventTables::load(t.dir(), "testmodel", {cache.root()});
  CHECK(indexed->from_index());
  REQUIRE(indexed->diagnostics().size() == 1);
  CHECK(indexed->diagnostics()[0].text() == file + ": invalid JSON at byte 21");

  // mapfile.csv: the first line is a header, as jevents reads it; a short row is an error.
  t.tree.write("events/mapfile.csv", "Family-model,Version,Filename,EventType\nGenuineIntel-6-55-[01234]\n");
  CHECK_THROWS_WITH(spec::find_model(t.dir(), "GenuineIntel-6-55-4"),
                    doctest::Contains("line 2: expected 'cpuid,version,folder,type'"));
  for (std::string folder : {"/etc", "../testmodel", "a/../../b"}) {
    t.tree.write(
        "events/mapfile.csv",
        "Family-model,Version,Filename,EventType\nGenuineIntel-6-55-[01234],v1," + folder + ",core\n");
    CHECK_THROWS_WITH(spec::find_model(t.dir(), "GenuineIntel-6-55-4"),
                      doctest::Contains("leaves the events directory"));
  }
}

TEST_CASE("perf's own tables (Linux 6.12): skylakex, icelakex, amdzen3") {
  if (!have_shared_events()) return;
  CHECK(spec::find_model(shared_events(), "GenuineIntel-6-55-4") == "skylakex");
  CHECK(spec::find_model(shared_events(), "GenuineIntel-6-6A-6") == "icelakex");
  CHECK(spec::find_model(shared_events(), "AuthenticAMD-25-1-1") == "amdzen3");
  CHECK(spec::find_model(shared_events(), "GenuineIntel-6-A7-1") == "rocketlake");
  CHECK(spec::find_model(shared_events(), "GenuineIntel-6-0-0") == std::nullopt);
  test::TempTree cache;
  spec::Machine skx(test::fixture("intel_skx"),
                    {shared_events(), "GenuineIntel-6-55-4", cache.root(), false});
  CHECK(one("mem_load_retired.l1_miss:pp", skx) == "type=4 config=0x8d1 sample_period=100003 precise_ip=2");
  CHECK(one("cpu/inst_retired.any,cmask=2/", skx) == "type=4 config=0x20000c0 sample_period=2000003");
  CHECK(resolve("unc_m_cas_count.rd", skx).events.size() == 6);
  spec::Machine zen(test::fixture("amd_zen3"), {shared_events(), "AuthenticAMD-25-1-1", cache.root(), false});
  CHECK(one("ls_dc_accesses", zen) == "type=4 config=0x40");
  auto icx = spec::EventTables::load(shared_events(), "icelakex", {cache.root()});
  CHECK(icx->events().size() > 4000);
}

TEST_CASE("every table name resolves the same the first time, again, and in lower case") {
  if (!have_shared_events()) return;
  test::TempTree cache;
  for (const char* cpuid : {"GenuineIntel-6-55-4", "GenuineIntel-6-6A-6"}) {
    CAPTURE(cpuid);
    spec::MachineOptions o{shared_events(), cpuid, cache.root(), false};
    spec::Machine first(test::fixture("intel_skx"), o), again(test::fixture("intel_skx"), o);
    auto json_of = [](const std::string& text, const spec::Machine& m) -> std::optional<std::string> {
      try {
        return to_json(resolve(text, m));
      } catch (const Error&) {
        return std::nullopt;
      }
    };
    // The names this fixture has the PMUs for (an unknown name is not kept, and slow: it is suggested
    // among all the others), each also in lower case with a modifier.
    std::vector<std::string> names;
    for (const auto& e : first.tables()->events()) {
      if (!e.pmu.empty() && !e.pmu.starts_with("uncore_imc")) continue;
      std::string lower = e.alias.name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (std::string n : {e.alias.name, lower + ":u"})
        if (json_of(n, again)) names.push_back(n);
    }
    CHECK(names.size() > 800);
    for (const auto& n : names) json_of(n, again);
    for (const auto& n : names) {
      CAPTURE(n);
      auto cold = json_of(n, first);  // the first time this Machine meets the name
      REQUIRE(cold);
      CHECK(*cold == json_of(n, again));  // met twice before
    }
  }
}

TEST_CASE(
    "suggestions for unknown names are the closest three of every name known, as a plain search finds") {
  if (!have_shared_events()) return;
  test::TempTree cache;
  spec::Machine m(test::fixture("intel_skx"), {shared_events(), "GenuineIntel-6-6A-6", cache.root(), false});
  // What the resolver may suggest: symbols, every PMU's aliases, the table's names.
  std::vector<std::string> known;
  for (const auto& sym : spec::symbols()) known.emplace_back(sym.name);
  for (const auto& n : m.pmu_names())
    if (const auto* p = m.pmu(n))
      for (const auto& a : p->aliases()) known.push_back(a.name);
  for (auto n : m.tables()->names()) known.emplace_back(n);
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  auto distance = [](const std::string& a, const std::string& b) {  // the textbook table, whole
    std::vector<std::vector<unsigned>> d(a.size() + 1, std::vector<unsigned>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<unsigned>(i);
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<unsigned>(j);
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j)
        d[i][j] =
            std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u)});
    return d[a.size()][b.size()];
  };
  auto expected_help = [&](const std::string& typo) {
    unsigned limit = std::max<unsigned>(2, static_cast<unsigned>(typo.size() / 3));
    std::set<std::pair<unsigned, std::string>> scored;
    for (const auto& k : known)
      if (unsigned d = distance(lower(typo), lower(k)); d <= limit) scored.emplace(d, k);
    if (scored.empty()) return std::string{};
    std::vector<std::string> top;
    for (const auto& [d, k] : scored)
      if (top.size() < 3) top.push_back("'" + k + "'");
    std::string out = "did you mean " + top[0];
    for (std::size_t i = 1; i < top.size(); ++i) out += (i + 1 == top.size() ? " or " : ", ") + top[i];
    return out + "?";
  };
  // Typos of table names (a letter doubled, dropped, changed; a word swapped) and of symbols.
  std::vector<std::string> typos = {
      "cylces",           "instrutions", "cache-misess",    "brnach-misses",
      "L1-dcache-lods",   "xyzzy",       "INST_RETIRED.AN", "mem_load_retired.l1_mis",
      "UNC_CHA_CLOCKTICK"};
  for (const auto& sym : spec::symbols())  // short names: ties at the third place are common
    if (sym.name.size() > 4 && typos.size() < 30) {
      std::string n(sym.name);
      n[n.size() / 2] = 'q';
      typos.push_back(n);
    }
  auto names = m.tables()->names();
  for (std::size_t i = 0; i < names.size() && typos.size() < 60; i += names.size() / 31) {
    std::string n(names[i]);
    switch (typos.size() % 4) {
      case 0: typos.push_back(n + n.back()); break;
      case 1: typos.push_back(n.substr(0, n.size() / 2) + n.substr(n.size() / 2 + 1)); break;
      case 2:
        n[n.size() / 3] = n[n.size() / 3] == 'X' ? 'Y' : 'X';
        typos.push_back(n);
        break;
      default: typos.push_back(n.substr(n.find('.') + 1) + "." + n.substr(0, n.find('.'))); break;
    }
  }
  auto help_of = [&](const std::string& typo) {
    try {
      resolve(typo, m);
    } catch (const Error& e) {
      return e.help();
    }
    return std::string("(resolved)");
  };
  std::size_t with_help = 0;
  for (const auto& typo : typos) {
    CAPTURE(typo);
    std::string help = help_of(typo);
    CHECK(help == expected_help(typo));
    with_help += !help.empty();
  }
  CHECK(typos.size() == 60);
  CHECK(with_help > 45);
  // Past 64 characters the distance is computed by the table, not by bit vectors; past 128 there are
  // no suggestions at all.
  std::string longest;
  for (auto n : names)
    if (n.size() > longest.size()) longest = n;
  REQUIRE(longest.size() > 40);
  for (const std::string& typo :
       {longest + "_" + longest.substr(0, 70 - longest.size()), longest + longest, std::string(129, 'x')}) {
    CAPTURE(typo);
    CHECK(help_of(typo) == (typo.size() > 128 ? "" : expected_help(typo)));
  }
  CHECK(!expected_help(longest + "_" + longest.substr(0, 70 - longest.size())).empty());
}

TEST_CASE("snapshot round trip: the same output from the snapshot as from the original") {
  TableTree t;
  spec::Machine original(test::fixture("intel_skx"), t.options());
  test::TempTree out;
  std::string snap = out.root() + "/snap";
  auto report = spec::snapshot(original, snap, {true});
  CHECK(report.pmus == 19);
  CHECK(report.tracepoints == 6);
  CHECK(report.skipped.empty());
  spec::Machine copy(snap, {t.dir(), "", t.cache(), false});  // no cpuid given: the snapshot's is used
  CHECK(copy.cpuid() == "GenuineIntel-6-55-4");
  const char* lists[] = {
      "cpu/event=0x2,inv,ldlat=3/u", "{cycles,instructions}:u", "uncore_imc/cas_count_read/",
      "mem_load_retired.l1_miss:pp", "sched:sched_*",           "power/energy-pkg/",
      "topdown-total-slots",         "unc_m_cas_count.rd",      "intel_pt/cyc,mtc_period=3/"};
  for (const char* l : lists) {
    CAPTURE(l);
    CHECK(to_json(resolve(l, copy)) == to_json(resolve(l, original)));
  }
  CHECK_THROWS_WITH(spec::snapshot(original, snap, {}), doctest::Contains("exists and is not empty"));
}

TEST_CASE("list: every source, filters, exact text") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/cpu/events/mem-loads", "event=0xcd\n");
  tree.write("kernel/tracing/events/sched/sched_switch/id", "5\n");
  TableTree t;
  spec::Machine m(tree.root(), t.options());
  spec::ListFilter f;
  f.pattern = "l1";
  auto events = spec::list_events(m, f);
  std::vector<std::string> names;
  for (const auto& e : events)
    names.push_back(fmt::format("{}:{}:{}", spec::source_name(e.source), e.pmu, e.name));
  CHECK(fmt::format("{}", fmt::join(names, " ")) ==
        "builtin:cpu:L1-dcache-load-misses builtin:cpu:L1-dcache-loads builtin:cpu:L1-dcache-prefetch-misses "
        "builtin:cpu:L1-dcache-prefetches builtin:cpu:L1-dcache-store-misses builtin:cpu:L1-dcache-stores "
        "builtin:cpu:L1-icache-load-misses builtin:cpu:L1-icache-loads builtin:cpu:L1-icache-prefetch-misses "
        "builtin:cpu:L1-icache-prefetches json:cpu:CYCLE_ACTIVITY.STALLS_L1D_MISS "
        "json:cpu:MEM_LOAD_RETIRED.L1_MISS");
  f.pattern = "*L1_MISS";
  f.source = "json";
  auto one_event = spec::list_events(m, f);
  CHECK(list_text({}, one_event, 60) ==
        "json events on cpu:\n"
        "  MEM_LOAD_RETIRED.L1_MISS                 event=0xd1,period=100003,umask=8\n"
        "      Retired load instructions missed L1 cache as data\n"
        "      sources\n");
  f = {};
  f.source = "sysfs";
  CHECK(list_json({}, spec::list_events(m, f)) ==
        "{\"schema\":\"perfspec-list/"
        "1\",\"pmus\":[],\"events\":[{\"name\":\"mem-loads\",\"pmu\":\"cpu\",\"encoding\":\"event=0xcd\","
        "\"description\":\"\","
        "\"topic\":\"sysfs\",\"unit\":\"\",\"scale\":1.0,\"source\":\"sysfs\",\"deprecated\":false}]}\n");
  f = {};
  f.tracepoints = true;
  f.pattern = "sched:";
  auto tps = spec::list_events(m, f);
  REQUIRE(tps.size() == 1);
  CHECK(tps[0].encoding == "2:5");
  auto pmus = spec::list_pmus(m, {});
  REQUIRE(pmus.size() == 1);
  CHECK(pmus[0].formats == std::vector<std::string>{"event=config:0-7"});
}

TEST_CASE("fuzzer regressions: empty table index, huge numbers, invalid UTF-8 names") {
  TableTree t;
  t.tree.write("events/testmodel/cache.json", "[]");
  t.tree.write("events/testmodel/uncore-memory.json", "[]");
  spec::EventTables::Options o{t.cache()};
  CHECK(spec::EventTables::load(t.dir(), "testmodel", o)->events().empty());
  auto again = spec::EventTables::load(t.dir(), "testmodel", o);  // from the (empty) index
  CHECK(again->from_index());
  CHECK(again->find("anything").empty());
  CHECK(again->names().empty());
  auto problem = [&](std::string_view json) {
    t.tree.write("events/testmodel/cache.json", json);
    auto tables = spec::EventTables::load(t.dir(), "testmodel", {"none"});
    CHECK(tables->events().empty());
    return tables->diagnostics().empty() ? std::string("none") : tables->diagnostics().front().message;
  };
  CHECK(problem("[{\"EventName\": \"A\", \"EventCode\": 1e400}]").starts_with("invalid JSON"));
  // Control characters would break the index's lines: the entry is refused, naming it.
  CHECK(problem("[{\"EventName\": \"A\\nB\", \"EventCode\": \"1\"}]") ==
        "the name cannot be written in an event string");
  CHECK(problem("[{\"EventName\": \"A\", \"EventCode\": \"1\", \"ScaleUnit\": \"1\\tMiB\"}]") ==
        "ScaleUnit has control characters");
  // A sysfs alias whose name is not UTF-8 lists as JSON with a replacement character.
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/events/\xff", "event=0x1\n");
  spec::Machine m(tree.root(), test::no_libpfm4());
  spec::ListFilter f;
  f.source = "sysfs";
  std::string json;
  CHECK_NOTHROW(json = list_json({}, spec::list_events(m, f)));
  CHECK(json.find("\xEF\xBF\xBD") != std::string::npos);
}

TEST_CASE("PMU names match as perf 6.12's perf_pmu__match") {
  using spec::pmu_name_matches;
  CHECK(pmu_name_matches("uncore_imc", "uncore_imc_3"));
  CHECK(pmu_name_matches("imc", "uncore_imc_3"));                  // `uncore_` dropped from both
  CHECK(pmu_name_matches("uncore_cpum_cf", "cpum_cf"));            // ...even when the PMU has none
  CHECK(pmu_name_matches("hisi_sccl1_ddrc", "hisi_sccl1_ddrc0"));  // no `_` before the instance
  CHECK(pmu_name_matches("uncore_imc_", "uncore_imc_0"));          // a trailing `_`
  CHECK(pmu_name_matches("imc_1", "uncore_imc_10"));               // a partial instance number
  CHECK(pmu_name_matches("uncore_foo", "uncore_foo_abc"));         // hex of more than two digits
  CHECK_FALSE(pmu_name_matches("uncore_cha", "uncore_cha_a"));     // ...not of one or two
  CHECK_FALSE(pmu_name_matches("cpum", "cpum_cf"));
  CHECK_FALSE(pmu_name_matches("uncore_imc", "uncore_imc_free_running_0"));
  CHECK_FALSE(pmu_name_matches("uncore_im", "uncore_imc_0"));
  CHECK_FALSE(pmu_name_matches("uncore_imc_0x1", "uncore_imc_1"));
  CHECK(pmu_name_matches("uncore_imc_*", "uncore_imc_0"));
  CHECK(pmu_name_matches("*imc_1", "uncore_imc_1"));
  CHECK_FALSE(pmu_name_matches("uncore*", "uncore_imc_0"));  // the glob meets `imc_0`
  CHECK_FALSE(pmu_name_matches("*_imc_1", "uncore_imc_1"));

  using spec::table_pmu_matches;  // a table unit against a sysfs name (no `uncore_` dropping)
  CHECK(table_pmu_matches("uncore_imc", "uncore_imc_3"));
  CHECK_FALSE(table_pmu_matches("imc", "uncore_imc_3"));
  CHECK(table_pmu_matches("hisi_sccl,ddrc", "hisi_sccl1_ddrc0"));
  CHECK(table_pmu_matches("hisi_sccl,hha", "hisi_sccl3_hha12"));
  CHECK_FALSE(table_pmu_matches("hisi_sccl,ddrc", "hisi_sccl1_hha0"));
  CHECK_FALSE(table_pmu_matches("hisi_sccl,ddrc", "hisi_sicl1_ddrc0"));
}

TEST_CASE("a PMU's alias file names it, exactly and as a wildcard") {
  test::TempTree tree;
  for (int i = 0; i < 2; ++i) {
    std::string pmu = fmt::format("uncore_iio_{}", i);
    tree.pmu(pmu, 40 + i);
    tree.write("bus/event_source/devices/" + pmu + "/format/event", "config:0-7\n");
    tree.write("bus/event_source/devices/" + pmu + "/cpumask", "0\n");
    tree.write("bus/event_source/devices/" + pmu + "/alias", fmt::format("uncore_type_1_{}\n", i));
  }
  spec::Machine m(tree.root(), test::no_libpfm4());
  CHECK(m.pmu("uncore_iio_1")->alias_name() == "uncore_type_1_1");
  CHECK(m.find_pmu("uncore_type_1_1") == m.pmu("uncore_iio_1"));
  CHECK(m.find_pmu("uncore_type_1") == nullptr);
  CHECK(one("uncore_type_1_0/event=5/", m) == "type=40 config=0x5");
  auto all = resolve("uncore_type_1/event=5/", m);
  REQUIRE(all.events.size() == 2);
  CHECK(all.events[1].pmu == "uncore_iio_1");
  CHECK(resolve("type_1_/event=5/", m).events.size() == 2);
  CHECK(test::error_of("uncore_type_2/event=5/", m).find("unknown PMU 'uncore_type_2'") != std::string::npos);
}

TEST_CASE("CPU ids of arm64, riscv, powerpc and s390 are read and matched as perf does") {
  test::TempTree t;
  t.write("midr", "0x00000000413fd0c1\n");
  t.write("riscv",
          "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n"
          "mvendorid\t: 0x489\nmarchid\t: 0x8000000000000007\nmimpid\t\t: 0x4210427\n\n");
  t.write("ppc",
          "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 3800.000000MHz\n"
          "revision\t: 2.2 (pvr 004e 1202)\n\n");
  t.write("sysinfo",
          "Manufacturer:         IBM\nType:                 3931\nLPAR Characteristics: Shared\n"
          "Model Capacity:       A01              701\nModel:                A01\n");
  t.write("levels", "VM: z/VM 7.3\nCPU-MF: Counter facility: version=3.8 authorization=002f\n");
  auto at = [&](const char* f) { return t.root() + "/" + f; };
  CHECK(spec::detect_cpuid(at("none"), at("midr"), at("none"), at("none")) == "0x00000000413fd0c1");
  CHECK(spec::detect_cpuid(at("riscv"), at("none"), at("none"), at("none")) ==
        "0x489-0x8000000000000007-0x4210427");
  CHECK(spec::detect_cpuid(at("ppc"), at("none"), at("none"), at("none")) == "0x004e1202");
  CHECK(spec::detect_cpuid(at("none"), at("none"), at("sysinfo"), at("levels")) == "IBM,3931,A01,3.8,002f");
  CHECK(spec::detect_cpuid(at("none"), at("none"), at("sysinfo"), at("none")) == "IBM,3931,A01");

  // arm64: the same part, at least the mapfile's variant and revision (r3p1 >= r0p0; r0p0 < r0p1).
  CHECK(spec::midr_matches("0x00000000410fd0c0", "0x00000000413fd0c1"));
  CHECK(spec::midr_matches("0x410fd0c0", "0x00000000410FD0C0"));
  CHECK_FALSE(spec::midr_matches("0x00000000410fd0c1", "0x00000000410fd0c0"));
  CHECK_FALSE(spec::midr_matches("0x00000000410fd0c0", "0x00000000410fd0d0"));
  CHECK(spec::table_arch("x/pmu-events/arm64/", "") == spec::TableArch::arm64);
  CHECK(spec::table_arch("copy", "0x00000000410fd0c0") == spec::TableArch::arm64);
  CHECK(spec::table_arch("copy", "GenuineIntel-6-55-4") == spec::TableArch::x86);
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/arm64/mapfile.csv")) return;
  const std::string root = test::source_dir() + "/../shared/pmu-events/";
  CHECK(spec::find_model(root + "arm64", "0x00000000413fd0c1") == "arm/neoverse-n1");
  CHECK(spec::find_model(root + "arm64", "0x00000000410fd4f0") == "arm/neoverse-n2-v2");
  CHECK(spec::find_model(root + "riscv", "0x489-0x8000000000000007-0x4210427") == "sifive/u74");
  CHECK(spec::find_model(root + "powerpc", "0x004e1202") == "power9");
  CHECK(spec::find_model(root + "s390", "IBM,3931,A01,3.8,002f") == "cf_z16");
}

namespace {

// An arm64 tables folder: mapfile, standard events, two core models, a sys folder of uncore events.
struct Arm64Tables {
  test::TempTree tree;
  std::string dir() const { return tree.root() + "/arm64"; }
  Arm64Tables() {
    tree.write("arm64/mapfile.csv",
               "# Format:\n#\tMIDR,Version,JSON/file/pathname,Type\n"
               "0x00000000410fd030,v1,arm/cortex-a53,core\n"
               "0x00000000410fd080,v1,arm/cortex-a72,core\n");
    tree.write("arm64/common-and-microarch.json", R"([
      {"EventCode": "0x11", "EventName": "CPU_CYCLES", "BriefDescription": "Cycle"},
      {"EventCode": "0x04", "EventName": "L1D_CACHE", "BriefDescription": "Level 1 data cache access"}])");
    tree.write("arm64/arm/cortex-a53/pipeline.json", R"([
      {"ArchStdEvent": "CPU_CYCLES"}, {"ArchStdEvent": "l1d_cache", "PublicDescription": "A53's own"},
      {"EventName": "PREFETCH_LINEFILL", "EventCode": "0xC2"}])");
    tree.write("arm64/arm/cortex-a72/pipeline.json", R"([
      {"ArchStdEvent": "CPU_CYCLES"}, {"EventName": "PREFETCH_LINEFILL", "EventCode": "0xC7"}])");
    tree.write("arm64/arm/cmn/sys/cmn.json", R"([
      {"EventName": "hnf_cache_miss", "EventidCode": "0x1", "NodeType": "0x5", "Unit": "arm_cmn",
       "Compat": "(434|436|43c|43a).*"},
      {"EventName": "no_compat", "EventidCode": "0x2", "NodeType": "0x5", "Unit": "arm_cmn"}])");
    // A big.LITTLE machine: each core PMU's CPUs report their own MIDR.
    auto core = [&](const std::string& name, unsigned type, const std::string& cpus) {
      tree.pmu(name, type);
      tree.write("bus/event_source/devices/" + name + "/format/event", "config:0-15\n");
      tree.write("bus/event_source/devices/" + name + "/cpus", cpus + "\n");
    };
    core("armv8_cortex_a53", 10, "0-3");
    core("armv8_cortex_a72", 11, "4-5");
    for (int cpu = 0; cpu < 6; ++cpu)
      tree.write(fmt::format("devices/system/cpu/cpu{}/regs/identification/midr_el1", cpu),
                 cpu < 4 ? "0x00000000410fd034\n" : "0x00000000410fd083\n");
    for (auto [name, id] : {std::pair{"arm_cmn_0", "43c"}, {"arm_cmn_1", "999"}}) {
      std::string pmu = name;
      tree.pmu(pmu, pmu == "arm_cmn_0" ? 20 : 21);
      tree.write("bus/event_source/devices/" + pmu + "/format/type", "config:0-15\n");
      tree.write("bus/event_source/devices/" + pmu + "/format/eventid", "config:16-26\n");
      tree.write("bus/event_source/devices/" + pmu + "/cpumask", "0\n");
      tree.write("bus/event_source/devices/" + pmu + "/identifier", std::string(id) + "\n");
    }
  }
};

}  // namespace

TEST_CASE("arm64: ArchStdEvent, each core PMU's own model by its MIDR, sys events by Compat") {
  Arm64Tables t;
  spec::MachineOptions o{t.dir(), "", "none", false};
  spec::Machine m(t.tree.root(), o);
  CHECK(m.cpuid() == "0x00000000410fd034");  // the first core CPU's MIDR, under the root
  auto cycles = resolve("cpu_cycles", m);    // a standard event both models take
  REQUIRE(cycles.events.size() == 2);
  CHECK(test::attr_summary(cycles.events[0].attr) == "type=10 config=0x11");
  CHECK(test::attr_summary(cycles.events[1].attr) == "type=11 config=0x11");
  auto prefetch = resolve("prefetch_linefill", m);  // each PMU its own model's encoding
  REQUIRE(prefetch.events.size() == 2);
  CHECK(prefetch.events[0].pmu == "armv8_cortex_a53");
  CHECK(prefetch.events[0].attr.config == 0xc2);
  CHECK(prefetch.events[1].attr.config == 0xc7);
  CHECK(one("l1d_cache", m) == "type=10 config=0x4");  // only the A53 table has it
  // The CMN's events reach the PMU whose identifier matches Compat; without Compat, none.
  CHECK(one("hnf_cache_miss", m) == "type=20 config=0x10005");
  CHECK(one("arm_cmn/hnf_cache_miss/", m) == "type=20 config=0x10005");
  CHECK(test::error_of("arm_cmn_1/hnf_cache_miss/", m)
            .find("unknown term 'hnf_cache_miss' for pmu 'arm_cmn_1'") != std::string::npos);
  CHECK(test::error_of("no_compat", m).find("no PMU of this machine has event 'no_compat'") !=
        std::string::npos);
  CHECK(test::error_of("no_compat", m)
            .find("help: the tables' sys folders define 'no_compat' for 'arm_cmn' without a Compat, which "
                  "matches no PMU") != std::string::npos);
  // A CPU id given applies to every PMU, as PERF_CPUID does.
  spec::Machine forced(t.tree.root(), {t.dir(), "0x00000000410fd080", "none", false});
  auto both = resolve("prefetch_linefill", forced);
  REQUIRE(both.events.size() == 2);
  CHECK(both.events[0].attr.config == 0xc7);
  CHECK(both.events[1].attr.config == 0xc7);
}

namespace {

// A cpu PMU whose sysfs alias mem_load_retired.l1_miss (event=0x11) the tables also define.
void cpu_with_a_table_name(test::TempTree& tree) {
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/cpu/format/umask", "config:8-15\n");
  tree.write("bus/event_source/devices/cpu/events/mem_load_retired.l1_miss", "event=0x11\n");
}

}  // namespace

TEST_CASE("a sysfs alias that the tables also define takes the table's encoding, as perf 6.12") {
  TableTree t;
  test::TempTree tree;
  cpu_with_a_table_name(tree);
  tree.write("bus/event_source/devices/cpu/events/mem_load_retired.l1_miss.scale", "2\n");
  tree.write("bus/event_source/devices/cpu/events/only-sysfs", "event=0x12\n");
  tree.pmu("uncore_imc_0", 13);
  tree.write("bus/event_source/devices/uncore_imc_0/cpumask", "0\n");
  tree.write("bus/event_source/devices/uncore_imc_0/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/uncore_imc_0/format/umask", "config:8-15\n");
  tree.write("bus/event_source/devices/uncore_imc_0/events/unc_m_cas_count.rd", "event=0x05,umask=0x01\n");
  tree.write("bus/event_source/devices/uncore_imc_0/events/unc_m_cas_count.rd.unit", "bytes\n");
  spec::Machine m(tree.root(), t.options());
  auto e = resolve("cpu/mem_load_retired.l1_miss/", m).events.at(0);
  CHECK(test::attr_summary(e.attr) == "type=4 config=0x8d1 sample_period=100003");  // the table's terms
  CHECK(e.scale == 2);  // the table has no ScaleUnit: the sysfs file's stays
  auto cas = resolve("unc_m_cas_count.rd", m).events.at(0);
  CHECK(cas.attr.config == 0x304);
  CHECK(cas.unit == "MiB");  // the table's ScaleUnit replaces the sysfs unit
  CHECK(cas.per_pkg);
  CHECK(one("only-sysfs", m) == "type=4 config=0x12");
  // list says what resolve does: the sysfs alias with the table's encoding, once.
  spec::ListFilter f;
  f.pattern = "mem_load_retired.l1_miss";
  auto listed = spec::list_events(m, f);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].source == spec::Source::sysfs);
  CHECK(listed[0].encoding == "event=0xd1,period=100003,umask=8");
  CHECK(listed[0].scale == 2);
}

TEST_CASE("a Machine's named-event sources: their order, and what each alone finds, names and lists") {
  TableTree t;
  test::TempTree tree;
  cpu_with_a_table_name(tree);
  tree.write("bus/event_source/devices/cpu/events/only-sysfs", "event=0x12\n");
  std::filesystem::create_directories(tree.root() + "/bus/event_source/devices/cpu/events/afolder");
  spec::MachineOptions o = t.options();
  o.libpfm4 = true;
  spec::Machine m(tree.root(), o);
  std::vector<std::string> labels;
  for (const spec::EventSource* s : m.sources()) labels.emplace_back(s->label());
  CHECK(labels == std::vector<std::string>{"sys tables", "sysfs", "tables", "libpfm4"});
  const spec::Pmu& cpu = *m.pmu("cpu");
  const auto& sources = m.sources();
  // Each source alone: sysfs has its file, the model's tables their entry; the Machine refines one
  // with the other.
  CHECK(sources[0]->find(cpu, "mem_load_retired.l1_miss") == nullptr);
  CHECK(sources[1]->find(cpu, "MEM_LOAD_RETIRED.L1_MISS")->terms == "event=0x11");
  CHECK(sources[2]->find(cpu, "mem_load_retired.l1_miss")->terms == "event=0xd1,period=100003,umask=8");
  CHECK(sources[2]->find(cpu, "only-sysfs") == nullptr);
  CHECK(m.alias(cpu, "mem_load_retired.l1_miss")->terms == "event=0xd1,period=100003,umask=8");
  CHECK(m.alias(cpu, "mem_load_retired.l1_miss")->source == spec::Source::json);
  CHECK(sources[3]->fallback());
  CHECK_FALSE(sources[1]->fallback());
  // Names per PMU (deprecated table events only when asked), and every name cheaply.
  std::vector<std::string> names;
  sources[1]->names(cpu, names, false);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"mem_load_retired.l1_miss", "only-sysfs"});
  names.clear();
  sources[2]->names(cpu, names, true);
  CHECK(std::count(names.begin(), names.end(), "MEM_LOAD_RETIRED.L1_MISS") == 1);
  CHECK(std::count(names.begin(), names.end(), "UNC_M_CAS_COUNT.RD") == 0);  // the iMC's, not the cpu's
  std::vector<std::string_view> all;
  sources[2]->all_names(all);
  CHECK(std::count(all.begin(), all.end(), "UNC_M_CAS_COUNT.RD") == 1);
  // Listing: the alias the tables also define is listed once, by sysfs, with the encoding resolve uses.
  spec::ListFilter f;
  f.pattern = "l1_miss";
  std::vector<spec::ListedEvent> by_sysfs, by_tables;
  sources[1]->list(f, by_sysfs);
  sources[2]->list(f, by_tables);
  REQUIRE(by_sysfs.size() == 1);
  CHECK(by_sysfs[0].encoding == "event=0xd1,period=100003,umask=8");
  CHECK(by_tables.empty());
  // Diagnostics: sysfs names the event file it could not read.
  auto d = sources[1]->diagnostics();
  REQUIRE(d.size() == 1);
  CHECK(d[0].text.find("/cpu/events/afolder") != std::string::npos);
  CHECK(sources[3]->diagnostics().empty());
}

TEST_CASE(
    "perf's own tables: counter.json, metric files and metricgroups.json load; deprecated names resolve") {
  if (!have_shared_events()) return;
  auto full = spec::EventTables::load_full(shared_events(), "skylakex");
  CHECK(full->diagnostics().empty());
  CHECK(full->counters().size() >= 1);
  CHECK(full->metrics().size() > 100);
  CHECK(full->metric_groups().size() > 10);
  std::size_t deprecated = 0;
  const spec::TableEvent* some = nullptr;
  for (const auto& e : full->events())
    if (e.deprecated && e.pmu.empty()) ++deprecated, some = &e;
  REQUIRE(some != nullptr);
  test::TempTree cache;
  spec::Machine m(test::fixture("intel_skx"), {shared_events(), "GenuineIntel-6-55-4", cache.root(), false});
  CHECK_NOTHROW(resolve(some->alias.name, m));  // resolvable, though listed only with --deprecated
  spec::ListFilter f;
  f.pattern = some->alias.name;
  f.source = "json";
  CHECK(spec::list_events(m, f).empty());
  f.deprecated = true;
  CHECK(spec::list_events(m, f).size() == 1);
  // arm64: a Neoverse N1's names come from the standard events through ArchStdEvent.
  spec::Machine n1(test::fixture("arm_n1"), {test::source_dir() + "/../shared/pmu-events/arm64",
                                             "0x00000000413fd0c1", cache.root(), false});
  CHECK(one("l1d_cache_refill", n1) == "type=10 config=0x3");
  CHECK(one("armv8_pmuv3_0/BUS_ACCESS_RD/", n1) == "type=10 config=0x60");
  CHECK(test::error_of("stall_backend_mem", n1).find("unknown event") !=
        std::string::npos);  // standard, not N1's
}

namespace {

// The one index file a load left in `folder` ("" when none).
std::string index_in(const std::string& folder) {
  std::string found;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.path().extension() == ".idx") found = e.path().string();
  return found;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

TEST_CASE("the cache folder is used only when it is this user's and no one else may write to it") {
  TableTree t;
  std::string folder = t.tree.root() + "/shared-cache";
  std::filesystem::create_directory(folder);
  ::chmod(folder.c_str(), 0777);
  auto tables = spec::EventTables::load(t.dir(), "testmodel", {folder});
  CHECK(tables->find("mem_load_retired.l1_miss").size() == 1);  // resolution still works
  CHECK(tables->cache_problem() ==
        "the cache folder '" + folder +
            "' is not used: others may write to it (mode 0777); named events are read "
            "from the JSON tables each time (set PERFSPEC_CACHE_DIR to a folder of your own)");
  CHECK(std::filesystem::is_empty(folder));  // nothing written where others may plant or read
  CHECK_FALSE(spec::EventTables::load(t.dir(), "testmodel", {folder})->from_index());
  spec::Machine m(test::fixture("intel_skx"), {t.dir(), "GenuineIntel-6-55-4", folder, false});
  CHECK(one("mem_load_retired.l1_miss", m) == "type=4 config=0x8d1 sample_period=100003");
  CHECK(m.table_cache_problem() == tables->cache_problem());
  ::chmod(folder.c_str(), 0755);
  if (::geteuid() == 0) {  // another user's folder (root can make one)
    REQUIRE(::chown(folder.c_str(), 65534, 65534) == 0);
    auto other = spec::EventTables::load(t.dir(), "testmodel", {folder});
    CHECK(other->cache_problem().starts_with("the cache folder '" + folder +
                                             "' is not used: it belongs to uid 65534"));
    CHECK(std::filesystem::is_empty(folder));
  }
  // A folder of one's own, created as needed, is private.
  std::string own = t.tree.root() + "/a/b/own-cache";
  auto fine = spec::EventTables::load(t.dir(), "testmodel", {own});
  CHECK(fine->cache_problem().empty());
  struct stat st {};
  REQUIRE(::stat(own.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(spec::EventTables::load(t.dir(), "testmodel", {own})->from_index());
}

TEST_CASE("a link planted at the index's names is replaced, never written through") {
  TableTree t;
  // Learn the index's name from a first load elsewhere.
  test::TempTree probe;
  spec::EventTables::load(t.dir(), "testmodel", {probe.root()});
  std::string name = std::filesystem::path(index_in(probe.root())).filename().string();
  REQUIRE_FALSE(name.empty());
  std::string victim = t.tree.root() + "/victim", cache = t.tree.root() + "/cache";
  spit(victim, "SECRET\n");
  std::filesystem::create_directory(cache);
  ::chmod(cache.c_str(), 0700);
  // At the index's own name, and at the temporary name earlier versions used (`NAME.PID.tmp`).
  std::filesystem::create_symlink(victim, cache + "/" + name);
  std::filesystem::create_symlink(victim, fmt::format("{}/{}.{}.tmp", cache, name, ::getpid()));
  auto first = spec::EventTables::load(t.dir(), "testmodel", {cache});
  CHECK_FALSE(first->from_index());  // a link is not an index
  CHECK(first->find("mem_load_retired.l1_miss").size() == 1);
  CHECK(slurp(victim) == "SECRET\n");
  CHECK(std::filesystem::is_regular_file(std::filesystem::symlink_status(cache + "/" + name)));
  CHECK(spec::EventTables::load(t.dir(), "testmodel", {cache})->from_index());
  CHECK(slurp(victim) == "SECRET\n");
}

TEST_CASE("a damaged index is never trusted: cut, emptied, edited or grown, it is rebuilt from the JSON") {
  TableTree t;
  test::TempTree cache;
  const spec::EventTables::Options o{cache.root()};
  auto fresh = [&] {
    std::filesystem::remove_all(index_in(cache.root()));
    spec::EventTables::load(t.dir(), "testmodel", o);
    return index_in(cache.root());
  };
  auto terms_of = [&](const spec::EventTables& tables, const char* name) {
    auto found = tables.find(name);
    return found.size() == 1 ? found[0]->alias.terms : std::string("(not found)");
  };
  // Cut at a line end: the last entries would be missing.
  std::string path = fresh();
  std::string good = slurp(path);
  std::size_t last_line = good.rfind('\n', good.size() - 2);
  spit(path, good.substr(0, last_line + 1));
  auto cut = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK_FALSE(cut->from_index());
  CHECK(cut->find("unc_m_cas_count.rd").size() == 1);
  CHECK(cut->find("unc_cha_tor_inserts.ia").size() == 1);
  CHECK(spec::EventTables::load(t.dir(), "testmodel", o)->from_index());  // written again, whole
  // Reduced to its header.
  path = fresh();
  good = slurp(path);
  spit(path, good.substr(0, good.find("check ") + 23));
  CHECK_FALSE(spec::EventTables::load(t.dir(), "testmodel", o)->from_index());
  // Terms edited in place (same length, header intact): the block's checksum catches it when read.
  path = fresh();
  good = slurp(path);
  std::string edited = good;
  auto at = edited.find("event=0xd1");
  REQUIRE(at != std::string::npos);
  edited[at + 9] = '2';
  spit(path, edited);
  auto tampered = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK(tampered->from_index());  // its header holds
  CHECK(terms_of(*tampered, "mem_load_retired.l1_miss") == "event=0xd1,period=100003,umask=8");  // the JSON's
  CHECK(terms_of(*tampered, "unc_m_cas_count.rd") == "event=4,umask=3");
  CHECK(tampered->events().size() == 5);
  CHECK(slurp(path) != edited);  // the index was written again
  CHECK(terms_of(*spec::EventTables::load(t.dir(), "testmodel", o), "mem_load_retired.l1_miss") ==
        "event=0xd1,period=100003,umask=8");
  // Edited where only a listing reads: events() and names() check every block first.
  path = fresh();
  edited = slurp(path);
  at = edited.find("UNC_M_CAS_COUNT.RD");
  REQUIRE(at != std::string::npos);
  edited[at] = 'X';
  spit(path, edited);
  auto listed = spec::EventTables::load(t.dir(), "testmodel", o);
  std::set<std::string> names;
  for (auto n : listed->names()) names.emplace(n);
  CHECK(names.count("UNC_M_CAS_COUNT.RD") == 1);
  CHECK(names.count("XNC_M_CAS_COUNT.RD") == 0);
  // Grown by 10 MB of NUL bytes after a valid index: refused by its length, at once.
  path = fresh();
  std::ofstream(path, std::ios::binary | std::ios::app) << std::string(10 << 20, '\0');
  auto grown = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK_FALSE(grown->from_index());
  CHECK(std::filesystem::file_size(index_in(cache.root())) < 100000);  // written again, whole
  // An index that is another user's, or writable by others, is not read either.
  path = fresh();
  ::chmod(path.c_str(), 0666);
  CHECK_FALSE(spec::EventTables::load(t.dir(), "testmodel", o)->from_index());
}

TEST_CASE("the bundled index: built once beside the tables, read-only, kept by a copy, dropped by a change") {
  namespace fs = std::filesystem;
  TableTree t;
  t.tree.write("events/testmodel/broken.json", "[{");
  CHECK(spec::EventTables::write_bundled_index(t.dir()) == 2);  // testmodel, other; no sys folders
  const std::string bundled = t.dir() + "/perfspec-index/testmodel.idx";
  REQUIRE(fs::is_regular_file(bundled));
  const std::string written = slurp(bundled);
  const spec::EventTables::Options o{t.cache()};
  auto parsed = spec::EventTables::load(t.dir(), "testmodel", {"none"});
  // Used before the cache folder, which is not even made.
  auto tables = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK(tables->from_index());
  CHECK_FALSE(fs::exists(t.cache()));
  CHECK(tables->cache_problem().empty());
  REQUIRE(tables->events().size() == parsed->events().size());
  for (std::size_t i = 0; i < parsed->events().size(); ++i) {
    CHECK(tables->events()[i].alias.name == parsed->events()[i].alias.name);
    CHECK(tables->events()[i].alias.terms == parsed->events()[i].alias.terms);
    CHECK(tables->events()[i].pmu == parsed->events()[i].pmu);
  }
  CHECK(tables->find("mem_load_retired.l1_miss")[0]->alias.origin == "cache.json");
  // It names files relative to the tables folder, and they are reported where the tables are now.
  REQUIRE(tables->diagnostics().size() == 1);
  CHECK(tables->diagnostics()[0].file == t.dir() + "/testmodel/broken.json");
  spec::Machine m(test::fixture("intel_skx"), t.options());
  CHECK(one("mem_load_retired.l1_miss", m) == "type=4 config=0x8d1 sample_period=100003");
  CHECK_FALSE(fs::exists(t.cache()));
  // Copied elsewhere with other times (an installation, a package): its contents still match.
  const std::string copy = t.tree.root() + "/copy";
  fs::copy(t.dir(), copy, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(copy))
    if (e.path().extension() == ".json")
      fs::last_write_time(e.path(), fs::last_write_time(e.path()) - std::chrono::hours(24 * 365));
  auto copied = spec::EventTables::load(copy, "testmodel", o);
  CHECK(copied->from_index());
  CHECK(copied->find("unc_m_cas_count.rd")[0]->alias.terms == "event=4,umask=3");
  REQUIRE(copied->diagnostics().size() == 1);
  CHECK(copied->diagnostics()[0].file == copy + "/testmodel/broken.json");
  CHECK_FALSE(fs::exists(t.cache()));
  // A block that fails its checksum: the JSON is read (the cache folder's index, if any, is used), and
  // the bundled index is not rewritten.
  std::string edited = written;
  auto at = edited.find("event=0xd1");
  REQUIRE(at != std::string::npos);
  edited[at + 9] = '2';
  spit(bundled, edited);
  auto tampered = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK(tampered->find("mem_load_retired.l1_miss")[0]->alias.terms == "event=0xd1,period=100003,umask=8");
  CHECK(slurp(bundled) == edited);
  fs::remove_all(t.cache());
  spit(bundled, written);
  CHECK(spec::EventTables::load(t.dir(), "testmodel", o)->from_index());
  CHECK_FALSE(fs::exists(t.cache()));
  // Not used when others may write to it or to its folder.
  ::chmod(bundled.c_str(), 0666);
  CHECK_FALSE(spec::EventTables::load(t.dir(), "testmodel", {"none"})->from_index());
  ::chmod(bundled.c_str(), 0644);
  ::chmod((t.dir() + "/perfspec-index").c_str(), 0777);
  CHECK_FALSE(spec::EventTables::load(t.dir(), "testmodel", {"none"})->from_index());
  ::chmod((t.dir() + "/perfspec-index").c_str(), 0755);
  CHECK(spec::EventTables::load(t.dir(), "testmodel", {"none"})->from_index());
  // A table changed since: the bundled index no longer applies; the cache folder takes over.
  t.tree.write("events/testmodel/cache.json", R"([{"EventName": "NEW.EVENT", "EventCode": "0x7"}])");
  auto changed = spec::EventTables::load(t.dir(), "testmodel", o);
  CHECK_FALSE(changed->from_index());
  CHECK(changed->find("new.event").size() == 1);
  CHECK(changed->find("mem_load_retired.l1_miss").empty());
  CHECK(spec::EventTables::load(t.dir(), "testmodel", o)->from_index());  // from the cache folder now
  CHECK(slurp(bundled) == written);
}

TEST_CASE("a table name for a PMU the machine lacks says so, instead of suggesting the name itself") {
  TableTree t;
  test::TempTree tree;
  tree.pmu("software", 1);
  spec::Machine m(tree.root(), t.options());
  auto error = [&](std::string_view text) -> std::pair<std::string, std::string> {
    try {
      resolve(text, m);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::unknown_name);
      return {e.message(), e.help()};
    }
    FAIL("resolved: " << text);
    return {};
  };
  auto [message, help] = error("mem_load_retired.l1_miss:u");
  CHECK(message == "no PMU of this machine has event 'mem_load_retired.l1_miss'");
  CHECK(help ==
        "the testmodel tables define 'MEM_LOAD_RETIRED.L1_MISS' for the core PMU, which this machine does "
        "not have (a virtual machine without a virtual PMU has none)");
  CHECK(error("unc_m_cas_count.rd").second ==
        "the testmodel tables define 'UNC_M_CAS_COUNT.RD' for PMU 'uncore_imc', which this machine does not "
        "have");
  CHECK(error("mem_load_retired.l1_mis").first ==
        "unknown event 'mem_load_retired.l1_mis'");  // a typo: suggestions
}

TEST_CASE("where the CPU id came from: the option, a snapshot's record, the MIDR under the root, this host") {
  using Origin = spec::Machine::CpuidOrigin;
  CHECK(
      spec::Machine(test::fixture("intel_skx"), {"", "GenuineIntel-6-55-4", "none", false}).cpuid_origin() ==
      Origin::option);
  CHECK(spec::Machine(test::fixture("intel_skx"), {"", "", "none", false}).cpuid_origin() ==
        Origin::this_host);
  spec::Machine arm(test::fixture("arm_neoverse_v2"), {"", "", "none", false});
  CHECK(arm.cpuid_origin() == Origin::midr);
  CHECK(arm.cpuid().starts_with("0x00000000410fd4f"));
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("perfspec-snapshot/cpuid", "GenuineIntel-6-6A-6\n");
  spec::Machine snap(tree.root(), {"", "", "none", false});
  CHECK(snap.cpuid() == "GenuineIntel-6-6A-6");
  CHECK(snap.cpuid_origin() == Origin::snapshot);
}

TEST_CASE("list on a machine without a core PMU: no hardware or cache events, as perf 6.12") {
  test::TempTree tree;
  tree.pmu("software", 1);
  spec::Machine m(tree.root(), {"", "", "none", false});
  spec::ListFilter builtin;
  builtin.source = "builtin";
  std::set<std::string> names;
  for (const auto& e : spec::list_events(m, builtin)) {
    CHECK((e.topic == "software" || e.topic == "tool"));
    CHECK(e.pmu == e.topic);
    names.insert(e.name);
  }
  CHECK(names.contains("task-clock"));
  CHECK(names.contains("duration_time"));  // perf's tool events, on every machine
  CHECK_FALSE(names.contains("cycles"));
  CHECK_FALSE(names.contains("L1-dcache-load-misses"));
  CHECK(resolve("cycles", m).events.at(0).attr.type == 0);  // still resolves, as perf's does
  spec::Machine skx(test::fixture("intel_skx"), {"", "", "none", false});
  auto with_core = spec::list_events(skx, builtin);
  CHECK(std::any_of(with_core.begin(), with_core.end(), [](const auto& e) { return e.name == "cycles"; }));
}

TEST_CASE("EVENT/terms/: a name that is no PMU is a named event, the terms added to its own (perf 6.12)") {
  if (!have_shared_events()) return;
  spec::Machine tgl(test::fixture("intel_tgl"), {shared_events(), "GenuineIntel-6-8C-1", "none", false});
  // As the Tiger Lake metrics write it; perf 6.12 encodes it so (perf-attrs --current).
  auto set = resolve("UNC_ARB_DAT_OCCUPANCY.RD/cmask=1/", tgl);
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].pmu == "uncore_arb");
  CHECK(set.events[0].attr.config == 0x1000285);
  CHECK(resolve("UNC_ARB_DAT_OCCUPANCY.RD", tgl).events[0].attr.config == 0x285);
  // A term the event's PMU does not have is still an error, at the term.
  CHECK(
      test::error_of("UNC_ARB_DAT_OCCUPANCY.RD/nosuch=1/", tgl) ==
      "event syntax error: 'UNC_ARB_DAT_OCCUPANCY.RD/nosuch=1/'\n"
      "                                              \\___ unknown term 'nosuch' for pmu 'uncore_arb'\n"
      "help: valid terms: cmask,edge,event,inv,umask,config,config1,config2,config3,name,period,freq,"
      "branch_type,time,call-graph,stack-size,max-stack,nr,inherit,no-inherit,overwrite,no-overwrite,percore,"
      "aux-output,aux-sample-size,metric-id,cpu\n");
  // Neither a PMU nor an event: unknown PMU, as before.
  CHECK(test::error_kind_of("NO_SUCH_EVENT/cmask=1/", tgl) == "unknown name");
}
