// SPDX-License-Identifier: MIT
// stat's report: the topology read from sysfs, grouping per CPU/core/socket/node/thread, averaging
// runs, and the perf layouts of each aggregation, over a fixture 2-socket machine.
#include <doctest/doctest.h>

#include <cerrno>
#include <cmath>
#include <ctime>
#include <filesystem>

#include <unistd.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/stat.hpp"
#include "runtime/process.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using runtime::Count;

namespace {

const spec::Machine& two_socket() {
  static spec::Machine m(test::fixture("two_socket"));
  return m;
}

// Counts that ran 1 µs, all of it.
Count counted(std::uint64_t raw) { return test::counted(raw, 1000, 1000); }

// Places for CPUs 0..3 of `events` counters each: event e on CPU c counts (c + 1) * 10^e.
std::vector<runtime::PlaceCounts> four_cpus(std::size_t events) {
  std::vector<runtime::PlaceCounts> out;
  for (int cpu = 0; cpu < 4; ++cpu) {
    runtime::PlaceCounts p;
    p.place = {cpu, -1};
    for (std::size_t e = 0; e < events; ++e) {
      p.counts.push_back(counted(static_cast<std::uint64_t>((cpu + 1) * std::pow(10, e))));
      p.here.push_back(1);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> labels(const StatReport& r) {
  std::vector<std::string> out;
  for (const auto& u : r.units) out.push_back(u.label);
  return out;
}

// task-clock (100 ms) and cs (10 + the CPU) counted on CPUs 0 and 1 of the two_socket fixture.
std::vector<runtime::PlaceCounts> two_cpus_counted() {
  std::vector<runtime::PlaceCounts> places(2);
  for (int cpu = 0; cpu < 2; ++cpu) {
    places[cpu].place = {cpu, -1};
    places[cpu].counts = {counted(100000000), counted(static_cast<std::uint64_t>(10 + cpu))};
    places[cpu].here = {1, 1};
  }
  return places;
}

}  // namespace

TEST_CASE("cpu topology from sysfs: sockets, dies, cores and nodes of a round-robin 2-socket machine") {
  const auto& t = two_socket().cpu_topology();
  REQUIRE(t.size() == 16);
  auto ids = [](const spec::CpuTopology& c) {
    return std::vector<int>{c.cpu, c.socket, c.die, c.core, c.node};
  };
  CHECK(ids(t[0]) == std::vector<int>{0, 0, 0, 0, 0});
  CHECK(ids(t[1]) == std::vector<int>{1, 1, 0, 0, 1});
  CHECK(ids(t[2]) == std::vector<int>{2, 0, 0, 1, 0});
  CHECK(ids(t[9]) == std::vector<int>{9, 1, 0, 0, 1});  // cpu1's SMT sibling
  CHECK(ids(t[15]) == std::vector<int>{15, 1, 0, 3, 1});
  // clusters of two cores; caches by index (L1 data, L1 instruction, L2 per core, L3 per socket), each
  // named by the first CPU that shares it
  using Cache = spec::CpuTopology::Cache;
  CHECK(t[1].cluster == 2);
  CHECK(t[15].cluster == 3);
  CHECK(t[9].caches == std::vector<Cache>{{1, 1}, {1, 1}, {2, 1}, {3, 1}});
  CHECK(t[15].caches == std::vector<Cache>{{1, 7}, {1, 7}, {2, 7}, {3, 1}});
  // A snapshot of the machine keeps what --per-cache and --per-cluster group by.
  test::TempTree snap;
  std::filesystem::remove_all(snap.root());
  spec::snapshot(two_socket(), snap.root(), {});
  spec::Machine copy(snap.root(), test::no_libpfm4());
  REQUIRE(copy.cpu_topology().size() == 16);
  for (std::size_t i = 0; i < 16; ++i) {
    CHECK(copy.cpu_topology()[i].cluster == t[i].cluster);
    CHECK(copy.cpu_topology()[i].caches == t[i].caches);
  }
  // A machine with no topology files (a fixture of PMUs only) has none, and that is not an error.
  spec::Machine bare(test::fixture("amd_zen3"));
  CHECK(bare.cpu_topology().empty());
}

TEST_CASE("aggregate: per socket, core, node and CPU sum the right CPUs, ordered by id") {
  auto places = four_cpus(2);
  const auto& topo = two_socket().cpu_topology();

  auto sockets = aggregate(places, Aggregation::socket, topo);
  CHECK(labels(sockets) == std::vector<std::string>{"S0", "S1"});
  CHECK(sockets.units[0].cells[0].count.raw == 1 + 3);  // CPUs 0 and 2
  CHECK(sockets.units[1].cells[0].count.raw == 2 + 4);  // CPUs 1 and 3
  CHECK(sockets.units[1].cells[1].count.raw == 20 + 40);
  CHECK(sockets.units[0].cells[0].members == 2);
  CHECK(sockets.units[0].cells[0].count.time_enabled == 2000);

  auto cores = aggregate(places, Aggregation::core, topo);
  CHECK(labels(cores) == std::vector<std::string>{"S0-D0-C0", "S0-D0-C1", "S1-D0-C0", "S1-D0-C1"});
  CHECK(cores.units[1].cells[0].count.raw == 3);  // CPU 2

  auto nodes = aggregate(places, Aggregation::node, topo);
  CHECK(labels(nodes) == std::vector<std::string>{"N0", "N1"});
  CHECK(aggregate(places, Aggregation::die, topo).units.size() == 2);

  auto cpus = aggregate(places, Aggregation::cpu, topo);
  CHECK(labels(cpus) == std::vector<std::string>{"CPU0", "CPU1", "CPU2", "CPU3"});
  CHECK(cpus.units[3].cpu == 3);

  // perf's --per-cache: the highest level by default (L3, a socket's here), or the level asked for; a
  // level the CPUs lack is instance -1; --per-cluster
  auto l3 = aggregate(places, Aggregation::cache, topo);
  CHECK(labels(l3) == std::vector<std::string>{"S0-D0-L3-ID0", "S1-D0-L3-ID1"});
  CHECK(l3.units[1].cells[0].count.raw == 2 + 4);
  auto l2 = aggregate(places, Aggregation::cache, topo, {}, 2);
  CHECK(labels(l2) ==
        std::vector<std::string>{"S0-D0-L2-ID0", "S0-D0-L2-ID2", "S1-D0-L2-ID1", "S1-D0-L2-ID3"});
  CHECK(labels(aggregate(places, Aggregation::cache, topo, {}, 4)) ==
        std::vector<std::string>{"S0-D0-L4-ID-1", "S1-D0-L4-ID-1"});
  auto clusters = aggregate(places, Aggregation::cluster, topo);
  CHECK(labels(clusters) == std::vector<std::string>{"S0-D0-CLS0", "S1-D0-CLS2"});
  CHECK(clusters.units[0].cells[0].members == 2);

  // An event opened only on CPU 0 (an uncore PMU's cpumask) is in socket 0 alone.
  for (auto& p : places)
    if (p.place.cpu != 0) p.here[1] = 0;
  sockets = aggregate(places, Aggregation::socket, topo);
  CHECK(sockets.units[0].cells[1].here);
  CHECK(sockets.units[0].cells[1].members == 1);
  CHECK(sockets.units[0].cells[1].count.raw == 10);
  CHECK_FALSE(sockets.units[1].cells[1].here);

  // An event opened on no CPU (its open failed everywhere) is shown in every unit, with its failure,
  // as perf prints <not supported> on each.
  for (auto& p : places) {
    p.here[1] = 0;
    p.counts[1] = Count{};
    p.counts[1].failure = runtime::Failure{ENOENT, "ENOENT", "", "the hint", -1, ""};
  }
  sockets = aggregate(places, Aggregation::socket, topo);
  for (const auto& u : sockets.units) {
    CHECK(u.cells[1].here);
    CHECK(u.cells[1].count.state == Count::State::not_supported);
    REQUIRE(u.cells[1].count.failure);
    CHECK(u.cells[1].count.failure->name == "ENOENT");
  }

  // Per thread: only counts taken per thread.
  CHECK_THROWS_WITH_AS(aggregate(places, Aggregation::thread, topo),
                       "--per-thread needs counts taken per thread (a process's threads)", Error);
  std::vector<runtime::PlaceCounts> threads(2);
  threads[0].place = {-1, 200};
  threads[1].place = {-1, 100};
  for (auto& t : threads) t.counts = {counted(5)}, t.here = {1};
  auto per_thread =
      aggregate(threads, Aggregation::thread, topo, [](int tid) { return tid == 100 ? "a" : "b"; });
  CHECK(labels(per_thread) == std::vector<std::string>{"a-100", "b-200"});
}

TEST_CASE("average of runs: the mean, and the deviation of the mean in percent as perf -r prints it") {
  auto [mean, sd] = mean_and_stddev({10, 12, 14});
  CHECK(mean == doctest::Approx(12.0));
  CHECK(sd == doctest::Approx(std::sqrt(4.0 / 3.0)));  // sample variance 4, over 3 runs
  CHECK(mean_and_stddev({7}).second == 0.0);

  std::vector<StatReport> runs;
  for (std::uint64_t v : {100u, 200u, 300u}) runs.push_back(global_report({counted(v)}));
  auto avg = average(runs);
  CHECK(avg.runs == 3);
  CHECK(avg.units[0].cells[0].count.scaled() == doctest::Approx(200.0));
  CHECK(avg.units[0].cells[0].noise == doctest::Approx(100.0 * std::sqrt(10000.0 / 3.0) / 200.0));
}

TEST_CASE("perf's layouts per aggregate: -A names the PMU, --per-socket shows the CPUs summed, exactly") {
  auto set = resolve("task-clock,cs", two_socket());
  const auto places = two_cpus_counted();
  const auto& topo = two_socket().cpu_topology();
  StatRun run;
  run.target = "'system wide'";
  run.elapsed_seconds = 0.1;
  CHECK(stat_text(set, aggregate(places, Aggregation::socket, topo), run) ==
        "\n Performance counter stats for 'system wide':\n\n"
        "S0        1             100.00 msec task-clock                       #    1.000 CPUs utilized"
        "             \n"
        "S0        1                 10      cs                               #  100.000 /sec"
        "                      \n"
        "S1        1             100.00 msec task-clock                       #    1.000 CPUs utilized"
        "             \n"
        "S1        1                 11      cs                               #  110.000 /sec"
        "                      \n"
        "\n       0.100000000 seconds time elapsed\n\n");
  CHECK(stat_text(set, aggregate(places, Aggregation::cpu, topo), run) ==
        "\n Performance counter stats for 'system wide':\n\n"
        "CPU0               100.00 msec task-clock [software]            #    1.000 CPUs utilized"
        "             \n"
        "CPU1               100.00 msec task-clock [software]            #    1.000 CPUs utilized"
        "             \n"
        "CPU0                   10      cs [software]                    #  100.000 /sec"
        "                      \n"
        "CPU1                   11      cs [software]                    #  110.000 /sec"
        "                      \n"
        "\n       0.100000000 seconds time elapsed\n\n");
  CHECK(stat_perf_csv(set, aggregate(places, Aggregation::socket, topo), run, ",") ==
        "S0,1,100.00,msec,task-clock,1000,100.00,1.000,CPUs utilized\n"
        "S0,1,10,,cs,1000,100.00,100.000,/sec\n"
        "S1,1,100.00,msec,task-clock,1000,100.00,1.000,CPUs utilized\n"
        "S1,1,11,,cs,1000,100.00,110.000,/sec\n");
  CHECK(stat_perf_json(set, aggregate(places, Aggregation::cpu, topo), run)
            .starts_with("{\"cpu\" : \"0\", \"counter-value\" : \"100.000000\", \"unit\" : \"msec\", "
                         "\"event\" : \"task-clock "
                         "[software]\", \"event-runtime\" : 1000, \"pcnt-running\" : 100.00, "
                         "\"metric-value\" : \"1.000000\", "
                         "\"metric-unit\" : \"CPUs utilized\"}\n"));
  // Interval mode: perf's column header, then each line starts with the time.
  run.interval_end = 1.000000001;
  run.interval_seconds = 1.0;
  run.print_interval_header = true;
  std::string text = stat_text(set, aggregate(places, Aggregation::socket, topo), run);
  CHECK(
      text.starts_with("#           time socket cpus             counts unit events\n"
                       "     1.000000001 S0        1             100.00 msec task-clock "));
  // Repeated runs: the header says how many, the variation follows the figure, the time its deviation.
  run = StatRun{.target = "'true'", .elapsed_seconds = 0.0031722, .elapsed_stddev = 0.0000824};
  auto avg =
      average({global_report({counted(2000000), counted(1)}), global_report({counted(2200000), counted(1)})});
  CHECK(stat_text(set, avg, run) ==
        "\n Performance counter stats for 'true' (2 runs):\n\n"
        "              2.10 msec task-clock                       #    0.662 CPUs utilized"
        "               ( +-  4.76% )\n"
        "                 1      cs                               #  476.190 /sec"
        "                      \n"
        "\n         0.0031722 +- 0.0000824 seconds time elapsed  ( +-  2.60% )\n\n");
}

TEST_CASE("--metric-only per aggregate: a line each, its label first, perf 6.12's headers, exactly") {
  // util/stat-display.c: print_metric_headers indents the table's header by one and the aggregate's
  // width (aggr_header_lens; not its cpus column, so per socket the header stands 5 left of its
  // column, as in perf) and names the aggregate's fields in -x (aggr_header_csv); print_metric_begin
  // starts each line with the aggregate as the counts' lines do.
  auto set = resolve("task-clock,cs", two_socket());
  const auto places = two_cpus_counted();
  const auto& topo = two_socket().cpu_topology();
  auto with_metric = [&](Aggregation a) {
    StatReport r = aggregate(places, a, topo);
    for (std::size_t u = 0; u < r.units.size(); ++u)
      r.units[u].cells[1].metrics = {{"m", "", 1.5 + static_cast<double>(u), false, false}};
    return r;
  };
  StatRun run{.target = "'system wide'", .elapsed_seconds = 0.1};
  run.metric_only = true;
  CHECK(stat_text(set, with_metric(Aggregation::socket), run) ==
        "\n Performance counter stats for 'system wide':\n\n"
        "                          m \n"
        "S0        1                 1.50 \n"
        "S1        1                 2.50 \n"
        "\n       0.100000000 seconds time elapsed\n\n");
  CHECK(stat_perf_csv(set, with_metric(Aggregation::socket), run, ",") ==
        "socket,cpus,m,\nS0,1,1.50,\nS1,1,2.50,\n");
  CHECK(stat_perf_json(set, with_metric(Aggregation::socket), run) ==
        "{\"socket\" : \"S0\", \"aggregate-number\" : 1, \"m\" : \"1.50\"}\n"
        "{\"socket\" : \"S1\", \"aggregate-number\" : 1, \"m\" : \"2.50\"}\n");
  CHECK(stat_text(set, with_metric(Aggregation::cpu), run) ==
        "\n Performance counter stats for 'system wide':\n\n"
        "                          m \n"
        "CPU0                   1.50 \n"
        "CPU1                   2.50 \n"
        "\n       0.100000000 seconds time elapsed\n\n");
  CHECK(stat_perf_csv(set, with_metric(Aggregation::cpu), run, ",") == "cpu,m,\nCPU0,1.50,\nCPU1,2.50,\n");
  CHECK(stat_perf_json(set, with_metric(Aggregation::cpu), run) ==
        "{\"cpu\" : \"0\", \"m\" : \"1.50\"}\n{\"cpu\" : \"1\", \"m\" : \"2.50\"}\n");
  // Interval mode: perf's interval header with the aggregate's column, the time on every line.
  run.interval_end = 1.0;
  run.interval_seconds = 1.0;
  run.print_interval_header = true;
  CHECK(stat_text(set, with_metric(Aggregation::socket), run) ==
        "#           time socket cpus                    m \n"
        "     1.000000000 S0        1                 1.50 \n"
        "     1.000000000 S1        1                 2.50 \n");
  CHECK(stat_perf_csv(set, with_metric(Aggregation::socket), run, ";") ==
        "time;socket;cpus;m;\n1.000000000;S0;1;1.50;\n1.000000000;S1;1;2.50;\n");
  CHECK(stat_perf_json(set, with_metric(Aggregation::socket), run) ==
        "{\"interval\" : 1.000000000, \"socket\" : \"S0\", \"aggregate-number\" : 1, \"m\" : \"1.50\"}\n"
        "{\"interval\" : 1.000000000, \"socket\" : \"S1\", \"aggregate-number\" : 1, \"m\" : \"2.50\"}\n");
}

TEST_CASE("interval_delta: each cell's counts since the last read, not counted when it did not run") {
  StatReport before = global_report({test::counted(100, 1000, 1000), test::counted(7, 1000, 500)});
  StatReport now = global_report({test::counted(350, 3000, 3000), test::counted(7, 2000, 500)});
  StatReport d = interval_delta(now, before);
  REQUIRE(d.units.size() == 1);
  const auto& a = d.units[0].cells[0].count;
  CHECK(a.raw == 250);
  CHECK(a.time_enabled == 2000);
  CHECK(a.time_running == 2000);
  CHECK(a.state == runtime::Count::State::counted);
  const auto& b = d.units[0].cells[1].count;  // enabled, never on a counter in between
  CHECK(b.raw == 0);
  CHECK(b.time_enabled == 1000);
  CHECK(b.time_running == 0);
  CHECK(b.state == runtime::Count::State::not_counted);
}

TEST_CASE("attach_metrics: a metric from its events' scaled counts, on its first event's cell") {
  spec::Machine machine(test::fixture("intel_skx"), test::no_libpfm4());
  metric::Plan plan = metric::plan("ipc = instructions / cycles", machine);
  REQUIRE(plan.events.events.size() == 2);
  // a counted event before the metric's: its events from offset 1
  std::vector<runtime::Count> counts{test::counted(5)};
  for (const auto& e : plan.events.events)
    counts.push_back(e.name == "instructions" ? test::counted(3000, 100, 50) : test::counted(1000, 100, 50));
  StatReport report = global_report(counts);
  attach_metrics(report, {{plan, 1}});
  const auto& cells = report.units[0].cells;
  CHECK(cells[0].metrics.empty());
  const std::size_t first = 1;  // the cell of the metric's first event: offset + 0
  REQUIRE(cells[first].metrics.size() == 1);
  CHECK(cells[first].metrics[0].name == "ipc");
  CHECK(cells[first].metrics[0].value == doctest::Approx(3.0));  // 6000 / 2000 scaled, the same ratio
  // an input not counted: no value, and the metric keeps its place
  report.units[0].cells[2].count.state = runtime::Count::State::not_counted;
  attach_metrics(report, {{plan, 1}});
  REQUIRE(cells[first].metrics.size() == 1);
  CHECK(std::isnan(cells[first].metrics[0].value));
}

TEST_CASE("CPU times from /proc: a thread's, a process's, every CPU's, as the kernel accounts them") {
  // The kernel gives utime + stime from the task's exact runtime, in clock ticks: after 200 ms of this
  // thread's CPU time, its figure has grown by 200 ms less at most two ticks each way.
  auto cpu_ns = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
  };
  const int tid = static_cast<int>(::gettid());
  auto before = runtime::thread_cpu_times(tid);
  auto process_before = runtime::process_cpu_times(::getpid());
  REQUIRE(before);
  REQUIRE(process_before);
  volatile std::uint64_t sink = 0;
  for (std::uint64_t start = cpu_ns(); cpu_ns() - start < 200000000u;) sink = sink + 1;
  auto after = runtime::thread_cpu_times(tid);
  auto process_after = runtime::process_cpu_times(::getpid());
  REQUIRE(after);
  REQUIRE(process_after);
  const double tick_ns = 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  const auto grown = [](const runtime::CpuTimes& a, const runtime::CpuTimes& b) {
    return static_cast<double>((b.user_ns + b.system_ns) - (a.user_ns + a.system_ns));
  };
  CHECK(grown(*before, *after) >= 200e6 - 2 * tick_ns);
  CHECK(grown(*process_before, *process_after) >= 200e6 - 2 * tick_ns);
  auto system = runtime::system_cpu_times();
  REQUIRE(system);
  CHECK(system->user_ns + system->system_ns >= after->user_ns + after->system_ns);
  CHECK_FALSE(runtime::thread_cpu_times(-5));
  CHECK_FALSE(runtime::process_cpu_times(-5));
}

TEST_CASE("/proc stat fields: after the name, whatever it holds; a process's start") {
  test::TempTree dir;
  // a name with spaces and parentheses, as a process may give itself
  dir.write("stat", "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 17 3 5 7 20 0 1 0 123456 1000\n");
  auto fields = runtime::stat_fields(dir.root() + "/stat");
  REQUIRE(fields);
  REQUIRE(fields->size() == 21);         // fields 3 to 23
  CHECK((*fields)[0] == "S");            // field 3
  CHECK((*fields)[14 - 3] == "17");      // utime
  CHECK((*fields)[17 - 3] == "7");       // cstime
  CHECK((*fields)[22 - 3] == "123456");  // starttime
  CHECK_FALSE(runtime::stat_fields(dir.root() + "/none"));
  dir.write("bad", "no name here\n");
  CHECK_FALSE(runtime::stat_fields(dir.root() + "/bad"));
  CHECK(runtime::stat_fields("/proc/self/stat")->front() == "R");  // reading it, it runs
  CHECK(runtime::process_state(::getpid()) == runtime::Process::running);
  const auto self = runtime::start_ticks(::getpid());
  REQUIRE(self);
  CHECK(*self >= *runtime::start_ticks(1));  // after init
  CHECK_FALSE(runtime::start_ticks(-5));
}

TEST_CASE("grouped_digits: a count's digits as a locale writes them (perf's %' after setlocale)") {
  const DigitStyle en{",", "\3\3", "."}, de{".", "\3", ","}, in{",", "\3\2", "."}, none{"", "", ","};
  CHECK(grouped_digits("1234567", en) == "1,234,567");
  CHECK(grouped_digits("1234567.50", en) == "1,234,567.50");
  CHECK(grouped_digits("-1234567.50", de) == "-1.234.567,50");
  CHECK(grouped_digits("123", en) == "123");
  CHECK(grouped_digits("1000", en) == "1,000");
  CHECK(grouped_digits("999.99", de) == "999,99");
  CHECK(grouped_digits("123456789", in) == "12,34,56,789");  // Indian grouping: 3, then 2 repeated
  CHECK(grouped_digits("1234567.25", none) == "1234567,25");
  CHECK(grouped_digits("1234567", {"\u202f", "\3", ","}) == "1\u202f234\u202f567");  // fr_FR's narrow space
  CHECK(grouped_digits("12345678", {",", "\3\x7f", "."}) == "12345,678");  // CHAR_MAX: no further groups
  CHECK(grouped_digits("nan", en) == "nan");
}
