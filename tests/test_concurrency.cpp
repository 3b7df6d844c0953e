// SPDX-License-Identifier: MIT
// A Machine is shared by threads: its lazily loaded parts (PMUs, formats, aliases, core PMUs,
// tracepoint ids, event tables, the name caches) must load once and safely. Run under TSan by
// `scripts/test.sh --tsan`.
#include <doctest/doctest.h>

#include <filesystem>
#include <thread>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using namespace perfspec;

TEST_CASE("concurrent resolves against one cold Machine give the single-threaded answers") {
  const std::vector<std::string> lists = {"cpu/event=0x2,inv,ldlat=3/u",
                                          "{cycles,instructions}:u",
                                          "uncore_imc/cas_count_read/",
                                          "mem-loads:pp",
                                          "sched:sched_*",
                                          "L1-dcache-load-misses",
                                          "power/energy-pkg/",
                                          "cas_count_read",
                                          "imc/clockticks/",
                                          "topdown-total-slots",
                                          "mem:0x1000/8:w",
                                          "cycles:P",
                                          "inst_retired.any",
                                          "unc_m_cas_count.rd",
                                          "cpu/mem_load_retired.l1_miss,cmask=2/",
                                          "nonesuch_event",
                                          "cpu/foo=1/"};
  spec::MachineOptions o = test::no_libpfm4();
  std::string events = test::source_dir() + "/../shared/pmu-events/x86";
  test::TempTree cache;
  if (std::filesystem::exists(events + "/mapfile.csv")) {
    o.events_dir = events;
    o.cpuid = "GenuineIntel-6-55-4";
    o.cache_dir = cache.root();
  }
  auto answer = [&](const spec::Machine& m, const std::string& text) {
    try {
      return to_json(resolve(text, m));
    } catch (const Error& e) {
      return "error: " + e.message();
    }
  };
  std::vector<std::string> expected;
  {
    spec::Machine reference(test::fixture("intel_skx"), o);
    for (const auto& l : lists) expected.push_back(answer(reference, l));
  }
  for (int round = 0; round < 3; ++round) {
    spec::Machine shared(test::fixture("intel_skx"), o);  // cold: every thread races to load
    constexpr int threads = 8;
    std::vector<std::vector<std::string>> got(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        got[t].resize(lists.size());
        for (int pass = 0; pass < 2; ++pass)  // the second from the memos the first filled, racing others
          for (std::size_t k = 0; k < lists.size(); ++k) {
            std::size_t i = (k + static_cast<std::size_t>(t) * 5) % lists.size();  // different orders
            std::string a = answer(shared, lists[i]);
            if (pass == 1 && a != got[t][i]) a = "changed from the first pass: " + a;
            got[t][i] = a;
          }
      });
    for (auto& th : pool) th.join();
    for (int t = 0; t < threads; ++t) CHECK(got[t] == expected);
  }
}
