// SPDX-License-Identifier: MIT
// Canonical printing and decoding: text -> tree -> text, and attr -> text -> attr, over the whole
// golden corpus and the generated perf-agreement strings.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {

bool same_tree(const ast::EventList& a, const ast::EventList& b, std::string& why) {
  auto term_eq = [](const ast::Term& x, const ast::Term& y) {
    return x.name == y.name && x.driver == y.driver && x.kind == y.kind &&
           (x.kind == ast::Term::Value::number ? x.number == y.number : x.text == y.text);
  };
  if (a.items.size() != b.items.size()) return why = "item count", false;
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    const auto &x = a.items[i], &y = b.items[i];
    if (x.braces != y.braces || x.group_name != y.group_name || x.modifiers.letters != y.modifiers.letters ||
        x.events.size() != y.events.size())
      return why = fmt::format("item {}", i), false;
    for (std::size_t k = 0; k < x.events.size(); ++k) {
      const auto &e = x.events[k], &f = y.events[k];
      bool literal =
          e.kind == ast::EventKind::raw || e.kind == ast::EventKind::numeric;  // the number matters
      bool ok = e.kind == f.kind && (literal || e.name == f.name) && e.tp_event == f.tp_event &&
                e.number1 == f.number1 && e.number2 == f.number2 && e.has_length == f.has_length &&
                e.access == f.access && e.has_terms == f.has_terms && e.terms.size() == f.terms.size() &&
                e.modifiers.letters == f.modifiers.letters;
      for (std::size_t t = 0; ok && t < e.terms.size(); ++t) ok = term_eq(e.terms[t], f.terms[t]);
      if (!ok) return why = fmt::format("item {} event {}", i, k), false;
    }
  }
  return true;
}

struct Case {
  std::string fixture, text;
};

std::vector<Case> golden_cases() {
  std::vector<Case> out;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() + "/tests/golden")) {
    std::ifstream in(entry.path());
    std::string line, fixture;
    while (std::getline(in, line)) {
      if (line.starts_with("@fixture ")) fixture = line.substr(9);
      if (line.starts_with("=== ")) out.push_back({fixture, line.substr(4)});
    }
  }
  return out;
}

std::vector<std::string> generated_strings() {
  std::vector<std::string> out;
  for (const char* name : {"perf_oracle.json", "tables_oracle.json"}) {
    std::ifstream in(test::source_dir() + "/tests/perf_agreement/" + name);
    if (!in) continue;
    auto doc = nlohmann::json::parse(in);
    for (const auto& [fixture, cases] : doc["fixtures"].items())
      for (const auto& [event, _] : cases.items()) out.push_back(event);
  }
  return out;
}

void check_round_trip(const std::string& text, std::size_t& checked) {
  ast::EventList tree;
  try {
    tree = parse(text);
  } catch (const Error&) {
    return;  // not valid syntax: nothing to print
  }
  std::string canon = to_string(tree);
  CAPTURE(text);
  CAPTURE(canon);
  ast::EventList again;
  REQUIRE_NOTHROW(again = parse(canon));
  std::string why;
  CHECK_MESSAGE(same_tree(tree, again, why), why);
  CHECK(to_string(again) == canon);  // a fixed point
  ++checked;
}

// Every field, spans included: what a parse into a reused list must give.
bool identical(const ast::EventList& a, const ast::EventList& b) {
  auto span_eq = [](Span x, Span y) { return x.begin == y.begin && x.end == y.end; };
  auto mods_eq = [&](const ast::Modifiers& x, const ast::Modifiers& y) {
    return x.letters == y.letters && span_eq(x.span, y.span);
  };
  if (a.text != b.text || a.items.size() != b.items.size()) return false;
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    const auto &x = a.items[i], &y = b.items[i];
    if (x.braces != y.braces || x.group_name != y.group_name || !span_eq(x.span, y.span) ||
        !mods_eq(x.modifiers, y.modifiers) || x.events.size() != y.events.size())
      return false;
    for (std::size_t k = 0; k < x.events.size(); ++k) {
      const auto &e = x.events[k], &f = y.events[k];
      if (e.kind != f.kind || !span_eq(e.span, f.span) || e.name != f.name ||
          !span_eq(e.name_span, f.name_span) || e.tp_event != f.tp_event ||
          !span_eq(e.tp_event_span, f.tp_event_span) || e.number1 != f.number1 || e.number2 != f.number2 ||
          e.has_length != f.has_length || e.access != f.access || !span_eq(e.access_span, f.access_span) ||
          e.has_terms != f.has_terms || !span_eq(e.terms_span, f.terms_span) ||
          !mods_eq(e.modifiers, f.modifiers) || e.terms.size() != f.terms.size())
        return false;
      for (std::size_t t = 0; t < e.terms.size(); ++t) {
        const auto &u = e.terms[t], &v = f.terms[t];
        if (u.name != v.name || u.driver != v.driver || u.kind != v.kind || u.number != v.number ||
            u.text != v.text || !span_eq(u.span, v.span) || !span_eq(u.name_span, v.name_span) ||
            !span_eq(u.value_span, v.value_span))
          return false;
      }
    }
  }
  return true;
}

}  // namespace

TEST_CASE("parsing into a reused list gives exactly a fresh parse, whatever the list held before") {
  std::vector<std::string> texts;
  for (const auto& c : golden_cases()) texts.push_back(c.text);
  for (const auto& s : generated_strings()) texts.push_back(s);
  // Larger before smaller and the reverse, and errors in between (they leave the list unspecified).
  std::vector<std::string> order = texts;
  order.insert(order.end(), texts.rbegin(), texts.rend());
  order.insert(order.begin() + static_cast<std::ptrdiff_t>(order.size() / 2),
               "{cycles,cpu/event=1,umask=2,x=3/u}:W");
  order.insert(order.begin() + 3, "cpu/event=1,");
  ast::EventList reused;
  std::size_t compared = 0;
  for (const auto& text : order) {
    CAPTURE(text);
    ast::EventList fresh;
    bool fresh_ok = true;
    try {
      fresh = parse(text);
    } catch (const Error&) {
      fresh_ok = false;
    }
    bool reused_ok = true;
    try {
      parse(text, reused);
    } catch (const Error&) {
      reused_ok = false;
    }
    REQUIRE(fresh_ok == reused_ok);
    if (!fresh_ok) continue;
    CHECK(identical(fresh, reused));
    ++compared;
  }
  CHECK(compared > 2000);
}

namespace {
bool same(const ResolvedEvent& a, const ResolvedEvent& b) {
  return test::attr_summary(a.attr) == test::attr_summary(b.attr) && a.attr.size == b.attr.size &&
         a.name == b.name && a.pmu == b.pmu && a.group == b.group && a.leader == b.leader &&
         a.span.begin == b.span.begin && a.span.end == b.span.end && a.scale == b.scale && a.unit == b.unit &&
         a.per_pkg == b.per_pkg && a.snapshot == b.snapshot && a.bpf_counter == b.bpf_counter &&
         a.retire_latency == b.retire_latency && a.precise_max == b.precise_max &&
         a.metric_id == b.metric_id && a.driver_config == b.driver_config && a.cpus == b.cpus &&
         a.percore == b.percore;
}

// The resolve of `text`, or its error message.
std::pair<EventSet, std::string> attempt(const std::string& text, const spec::Machine& m) {
  try {
    return {resolve(text, m), ""};
  } catch (const Error& e) {
    return {EventSet{}, e.message()};
  }
}
}  // namespace

TEST_CASE("a Machine whose caches and memos are warm resolves exactly as a new one") {
  // Warm: every golden string of the fixture resolved twice before, in reverse order, so that each name,
  // alias and PMU is met again from the caches. Cold: a new Machine per string.
  std::map<std::string, std::unique_ptr<spec::Machine>> warm;
  auto cases = golden_cases();
  for (int pass = 0; pass < 2; ++pass)
    for (auto it = cases.rbegin(); it != cases.rend(); ++it) {
      auto& m = warm[it->fixture];
      if (!m) m = std::make_unique<spec::Machine>(test::fixture(it->fixture), test::no_libpfm4());
      attempt(it->text, *m);
    }
  std::size_t compared = 0;
  for (const auto& c : cases) {
    CAPTURE(c.text);
    spec::Machine cold_machine(test::fixture(c.fixture), test::no_libpfm4());
    auto [cold, cold_error] = attempt(c.text, cold_machine);
    auto [hot, hot_error] = attempt(c.text, *warm.at(c.fixture));
    REQUIRE(cold_error == hot_error);
    REQUIRE(cold.events.size() == hot.events.size());
    for (std::size_t i = 0; i < cold.events.size(); ++i) CHECK(same(cold.events[i], hot.events[i]));
    REQUIRE(cold.groups.size() == hot.groups.size());
    for (std::size_t g = 0; g < cold.groups.size(); ++g)
      CHECK(cold.groups[g].members == hot.groups[g].members);
    ++compared;
  }
  CHECK(compared == cases.size());
  CHECK(compared > 250);
}

TEST_CASE("resolving into a reused EventSet gives exactly a fresh resolve, whatever the set held before") {
  std::map<std::string, std::unique_ptr<spec::Machine>> machines;
  auto cases = golden_cases();
  std::vector<Case> order = cases;
  order.insert(order.end(), cases.rbegin(), cases.rend());  // larger sets before smaller ones and back
  std::map<std::string, EventSet> reused;                   // one per fixture, reused across its strings
  std::size_t compared = 0;
  for (const auto& c : order) {
    auto& m = machines[c.fixture];
    if (!m) m = std::make_unique<spec::Machine>(test::fixture(c.fixture), test::no_libpfm4());
    CAPTURE(c.text);
    EventSet fresh;
    std::string fresh_error, reused_error;
    try {
      fresh = resolve(c.text, *m);
    } catch (const Error& e) {
      fresh_error = e.message();
    }
    EventSet& set = reused[c.fixture];
    try {
      resolve(c.text, *m, set);
    } catch (const Error& e) {
      reused_error = e.message();
    }
    REQUIRE(fresh_error == reused_error);
    if (!fresh_error.empty()) continue;
    REQUIRE(set.events.size() == fresh.events.size());
    REQUIRE(set.groups.size() == fresh.groups.size());
    for (std::size_t i = 0; i < set.events.size(); ++i) CHECK(same(set.events[i], fresh.events[i]));
    for (std::size_t g = 0; g < set.groups.size(); ++g) {
      CHECK(set.groups[g].name == fresh.groups[g].name);
      CHECK(set.groups[g].members == fresh.groups[g].members);
      CHECK(set.groups[g].braces == fresh.groups[g].braces);
      CHECK(set.groups[g].weak == fresh.groups[g].weak);
    }
    ++compared;
  }
  CHECK(compared > 300);
  // Slots that a group filled are reset for lone events: nothing of the group's flags remains.
  EventSet set;
  const auto& skx = *machines.at("intel_skx");
  resolve("g{cycles,instructions}:W", skx, set);
  resolve("cycles,instructions", skx, set);
  REQUIRE(set.groups.size() == 2);
  for (const auto& g : set.groups) {
    CHECK_FALSE(g.weak);
    CHECK_FALSE(g.braces);
    CHECK(g.name.empty());
    CHECK(g.members.size() == 1);
  }
}

TEST_CASE("canonical printing") {
  CHECK(to_string(parse("{ cycles , cpu/event=60,inv/u }")) == "{cycles,cpu/event=0x3c,inv/u}");
  CHECK(to_string(parse("g{cycles:u,instructions}:W")) == "g{cycles:u,instructions}:W");
  CHECK(to_string(parse("cpu/name='a,b',period=1000,@cfg=3,umask=?/")) ==
        "cpu/name='a,b',period=0x3e8,@cfg=0x3,umask=?/");
  CHECK(to_string(parse("mem:4096/8:rw:u")) == "mem:0x1000/8:rw:u");
  CHECK(to_string(parse("mem:4096:w/period=5/:k")) == "mem:0x1000:w/period=0x5/k");
  CHECK(to_string(parse("4:424/period=1/")) == "4:0x1a8/period=0x1/");
  CHECK(to_string(parse("r01a8:pp")) == "r1a8:pp");
  CHECK(to_string(parse("sched:sched_switch:u")) == "sched:sched_switch:u");
  CHECK(to_string(parse("skx::INST_RETIRED:ANY_P:u")) == "skx::INST_RETIRED:ANY_P:u");
}

TEST_CASE("canonical printing round-trips the golden corpus and every generated string") {
  std::size_t checked = 0;
  for (const auto& c : golden_cases()) check_round_trip(c.text, checked);
  for (const auto& s : generated_strings()) check_round_trip(s, checked);
  MESSAGE("round-tripped: " << checked);
  CHECK(checked > 1000);
}

TEST_CASE("decode: symbols, aliases, formats, leftovers, modifiers") {
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  auto d = [&](Attr a) { return decode(a, skx); };
  Attr a;
  a.type = 4;
  a.config = 0x1cd;
  a.config1 = 3;
  CHECK(d(a).event == "mem-loads");
  CHECK(d(a).how == "alias");
  a.config1 = 5;
  CHECK(d(a).event == "cpu/event=0xcd,umask=0x1,ldlat=0x5/");
  CHECK(d(a).how == "formats");
  a = {};
  a.type = 4;
  a.config = 0x800002 | (1ULL << 40);
  a.exclude_kernel = a.exclude_hv = 1;
  a.precise_ip = 2;
  auto r = d(a);
  CHECK(r.event == "cpu/config=0x10000800002,event=0x2,inv/upp");
  CHECK(r.leftovers ==
        std::vector<std::string>{"config bits 0x10000000000 are covered by no format of pmu 'cpu'"});
  a = {};
  a.type = 3;
  a.config = 0x10002;
  a.exclude_user = a.exclude_hv = 1;
  CHECK(d(a).event == "LLC-load-misses:k");
  a = {};
  a.type = 0;
  a.config = 4;
  a.sample_period = 1000;
  CHECK(d(a).event == "branches/period=1000/");
  a = {};
  a.type = 13;
  a.config = 0x304;
  CHECK(d(a).event == "uncore_imc_0/cas_count_read/");
  a = {};
  a.type = 5;
  a.config1 = 0x1000;
  a.config2 = 8;
  a.bp_type = 4;
  a.sample_period = 1;
  CHECK(d(a).event == "mem:0x1000/8:x");
  a = {};
  a.type = 77;
  a.config = 5;
  CHECK(d(a).event == "77:0x5");
  CHECK(d(a).notes == std::vector<std::string>{"no PMU of this machine has type 77"});
  spec::Machine adl(test::fixture("hybrid_adl"), test::no_libpfm4());
  a = {};
  a.type = 0;
  a.config = 0xa00000001;
  // cpu_atom/instructions/ would be the PMU's own alias: the literal form is the exact answer
  CHECK(decode(a, adl).event == "0:0xa00000001");
  CHECK(decode(a, adl).notes ==
        std::vector<std::string>{"'cpu_atom/instructions/' would not resolve to exactly this encoding here"});
  a.config = 0xa00000000;
  CHECK(decode(a, adl).event == "cpu_atom/cycles/");
}

TEST_CASE("decode inverts resolve over the golden corpus") {
  std::map<std::string, std::unique_ptr<spec::Machine>> machines;
  std::size_t checked = 0;
  for (const auto& c : golden_cases()) {
    auto& m = machines[c.fixture];
    if (!m) m = std::make_unique<spec::Machine>(test::fixture(c.fixture), test::no_libpfm4());
    EventSet set;
    try {
      set = resolve(c.text, *m);
    } catch (const Error&) {
      continue;
    }
    for (const auto& e : set.events) {
      Decoded dec = decode(e.attr, *m);
      CAPTURE(c.text);
      CAPTURE(dec.event);
      EventSet back;
      REQUIRE_NOTHROW(back = resolve(dec.event, *m));
      REQUIRE(back.events.size() == 1);
      const Attr &x = e.attr, &y = back.events[0].attr;
      CHECK(y.type == x.type);
      CHECK(y.config == x.config);
      CHECK(y.config1 == x.config1);
      CHECK(y.config2 == x.config2);
      CHECK(y.config3 == x.config3);
      CHECK(y.bp_type == x.bp_type);
      CHECK(y.exclude_user == x.exclude_user);
      CHECK(y.exclude_kernel == x.exclude_kernel);
      CHECK(y.exclude_hv == x.exclude_hv);
      CHECK(y.exclude_idle == x.exclude_idle);
      CHECK(y.exclude_host == x.exclude_host);
      CHECK(y.exclude_guest == x.exclude_guest);
      CHECK(y.precise_ip == x.precise_ip);
      CHECK(y.sample_period == x.sample_period);
      CHECK(y.pinned == x.pinned);
      CHECK(y.exclusive == x.exclusive);
      ++checked;
    }
  }
  MESSAGE("decoded and resolved back: " << checked);
  CHECK(checked > 250);
}

TEST_CASE("perf stat -vv text parses into attrs") {
  auto attrs = parse_perf_attr_text(
      "Using CPUID GenuineIntel-6-A7-1\n"
      "------------------------------------------------------------\n"
      "perf_event_attr:\n"
      "  type                             5\n"
      "  size                             128\n"
      "  { sample_period, sample_freq }   1\n"
      "  sample_type                      IDENTIFIER\n"
      "  read_format                      TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING\n"
      "  disabled                         1\n"
      "  exclude_kernel                   1\n"
      "  bp_type                          2\n"
      "  { bp_addr, config1 }             0x1000\n"
      "  { bp_len, config2 }              0x4\n"
      "------------------------------------------------------------\n"
      "sys_perf_event_open: pid 0  cpu -1  group_fd -1  flags 0x8 = 3\n");
  REQUIRE(attrs.size() == 1);
  CHECK(attrs[0].type == 5);
  CHECK(attrs[0].sample_period == 1);
  CHECK(attrs[0].exclude_kernel == 1);
  CHECK(attrs[0].bp_type == 2);
  CHECK(attrs[0].config1 == 0x1000);
  CHECK(attrs[0].config2 == 4);
  CHECK(attrs[0].sample_type == sample_identifier);  // perf prints bit names: read as bits
  CHECK(attrs[0].read_format == 3);
  // Malformed union keys (a fuzzer's find) are an error at their line, not a crash, nor skipped.
  CHECK(test::attr_input_error("perf_event_attr:\n  {}  7\n") ==
        "stdin:2:3: '{}' is not one of the union labels perf prints ({ sample_period, sample_freq }, { "
        "wakeup_events, wakeup_watermark }, { bp_addr, config1 }, { bp_len, config2 })");
  CHECK(test::attr_input_error("perf_event_attr:\n  { , config1 }  0x9\n")
            .starts_with("stdin:2:3: '{ , config1 }' is not one of the union labels perf prints"));
}

TEST_CASE("decode's standard input: JSON or perf stat -vv text, bounded in size and depth") {
  const auto error_of = test::attr_input_error;
  auto attrs = parse_attr_input(R"({"events":[{"name":"x","attr":{"type":4,"config":461,"config1":3}},
                                              {"attr":{"type":1,"config":2,"exclude_kernel":1}}]})");
  REQUIRE(attrs.size() == 2);
  CHECK(attrs[0].type == 4);
  CHECK(attrs[0].config == 0x1cd);
  CHECK(attrs[0].config1 == 3);
  CHECK(attrs[1].exclude_kernel);
  CHECK(parse_attr_input(R"([{"type":1,"config":3}])")[0].config == 3);
  // Brackets inside strings are no nesting; 16 levels are taken, the 17th is refused where it opens.
  CHECK(parse_attr_input(R"({"x":"[[[[[[[[[[[[[[[[[[[[\"{{{{","events":[]})").empty());
  std::string deep16 = std::string(14, '[') + R"([{"type":1}])" + std::string(14, ']');
  CHECK(error_of(deep16) == "stdin: event 0 has no 'attr' object");  // parsed: 16 levels are within the bound
  CHECK(error_of(std::string(17, '[') + std::string(17, ']')) ==
        "stdin: JSON nested deeper than 16 levels at byte 17");
  CHECK(error_of("  \n{\"events\":[{\"attr\":{}}, 5]}") == "stdin: event 1 has no 'attr' object");
  CHECK(error_of(R"([{"config":"0x1"}])") == "stdin: event 0: attr field 'config' is not an integer");
  CHECK(error_of(R"({"events":{}})") ==
        R"(stdin: expected {"events":[...]} as 'perfspec resolve --format json' prints)");
  CHECK(error_of("[1,") == "stdin: invalid JSON at byte 4");
  CHECK(error_of(" \t\n") == "no input: give attr fields as options, or JSON or perf stat -vv text on stdin");
  CHECK(error_of("hello") == "stdin: no 'perf_event_attr:' block found (perf stat -vv output expected)");
  CHECK(error_of(std::string(attr_input_max_bytes + 1, ' ')) == "stdin: more than 64 MiB of input");
  CHECK(parse_attr_input("perf_event_attr:\n  type  1\n  config  0x2\n")[0].config == 2);
}

TEST_CASE("fuzzer regression: a breakpoint with modifiers and config3 decodes to something that resolves") {
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  Attr a;
  a.type = 5;
  a.config1 = 0x1000;
  a.config2 = 4;
  a.bp_type = 2;
  a.exclude_kernel = a.exclude_hv = 1;
  CHECK(decode(a, skx).event == "mem:0x1000/4:w:u");
  a.config3 = 1;
  Decoded d = decode(a, skx);
  CHECK(std::find(d.notes.begin(), d.notes.end(),
                  "a breakpoint's config and config3 cannot be written in an event string") != d.notes.end());
  CHECK_NOTHROW(resolve(d.event, skx));
}
