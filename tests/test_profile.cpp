// SPDX-License-Identifier: MIT
// A recording's profile (perfspec/profile.hpp) and its printers (perfspec/report.hpp), without the
// CLI: over files perf 6.12 wrote, against what perf 6.12's own `perf report --stdio` and its
// stackcollapse script printed for them (tests/cli/expected, made by tests/fixtures/perf_data/make.sh).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <zlib.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/profile.hpp"
#include "perfspec/report.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using namespace perfspec::record;

namespace {

// As the CLI tests read the fixtures: the kallsyms fixture, no binaries (user space unresolved).
Profile profile_of(const std::string& name) {
  auto file = PerfData::open(test::fixture("perf_data/" + name));
  ProfileOptions o{.symbols = {.symfs = test::fixture("perf_data/no-binaries"),
                               .kallsyms = test::fixture("perf_data/kallsyms")}};
  return Profile::read(file, o);
}

std::string gunzip(const std::vector<std::byte>& in) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(inflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

// A protobuf message's fields: number -> each value (varints as numbers, the rest as bytes).
struct Fields {
  std::multimap<int, std::uint64_t> numbers;
  std::multimap<int, std::string> bytes;
};

std::uint64_t varint(std::string_view& s) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    REQUIRE(!s.empty());
    auto b = static_cast<unsigned char>(s.front());
    s.remove_prefix(1);
    v |= std::uint64_t{b & 0x7fU} << shift;
    if (!(b & 0x80)) return v;
  }
}

Fields fields(std::string_view s) {
  Fields f;
  while (!s.empty()) {
    std::uint64_t key = varint(s);
    int number = static_cast<int>(key >> 3);
    if ((key & 7) == 0) {
      f.numbers.emplace(number, varint(s));
    } else {
      REQUIRE((key & 7) == 2);
      std::uint64_t size = varint(s);
      REQUIRE(size <= s.size());
      f.bytes.emplace(number, std::string(s.substr(0, size)));
      s.remove_prefix(size);
    }
  }
  return f;
}

std::vector<std::uint64_t> packed(std::string_view s) {
  std::vector<std::uint64_t> out;
  while (!s.empty()) out.push_back(varint(s));
  return out;
}

}  // namespace

TEST_CASE("profile: a recording's samples gathered by event, thread and stack") {
  Profile p = profile_of("callchain.data");
  REQUIRE(p.events().size() == 2);
  const auto& clock = p.events()[0];
  CHECK(clock.name == "task-clock");
  CHECK(clock.samples == 37);
  CHECK(clock.period == 9250000);  // perf report's "Event count (approx.)"
  CHECK(clock.callchains);
  CHECK(p.events()[1].name == "page-faults");
  CHECK(p.events()[1].samples == 26);
  CHECK(p.events()[1].period == 111);
  std::uint64_t samples = 0;
  for (const auto& s : clock.stacks) {
    samples += s.samples;
    CHECK(p.comm(s.comm) == "ls");
    REQUIRE(!s.frames.empty());
  }
  CHECK(samples == 37);
  // the first sample's stack as perf script shows it: kernel frames named from the kallsyms fixture,
  // one address of no symbol there, the user frame in no binary
  const auto& first = clock.stacks[0];
  REQUIRE(first.frames.size() == 8);
  const Frame& leaf = p.frame(first.frames[0]);
  CHECK(leaf.ip == 0xffffffff81775b9aULL);
  CHECK(leaf.level == 'k');
  CHECK(leaf.dso == "[kernel.kallsyms]");
  REQUIRE(leaf.symbol);
  CHECK(leaf.symbol->name == "do_filp_open");
  const Frame& user = p.frame(first.frames.back());
  CHECK(user.ip == 0x7f878dce9b57ULL);
  CHECK(user.level == '.');
  CHECK(user.symbol == nullptr);
  CHECK(p.lost() == 0);
}

TEST_CASE("profile: max_stack cuts callchains, callchains off gives each sample's own address") {
  auto file = PerfData::open(test::fixture("perf_data/callchain.data"));
  Profile cut = Profile::read(
      file, ProfileOptions{.symbols = {.symfs = test::fixture("perf_data/no-binaries")}, .max_stack = 3});
  for (const auto& s : cut.events()[0].stacks) CHECK(s.frames.size() <= 3);
  auto again = PerfData::open(test::fixture("perf_data/callchain.data"));
  Profile flat = Profile::read(
      again,
      ProfileOptions{.symbols = {.symfs = test::fixture("perf_data/no-binaries")}, .callchains = false});
  for (const auto& s : flat.events()[0].stacks) CHECK(s.frames.size() == 1);
}

// A callchain with a context marker the kernel does not write (-100, between PERF_CONTEXT_MAX and the
// markers perf knows) is corrupt: perf's thread__resolve_callchain_sample discards the whole chain and
// counts the sample at its own address, and so does the profile.
TEST_CASE("profile: a callchain with an unknown context marker is discarded, the sample kept at its ip") {
  Attr a{};
  a.type = 1;
  a.config = 1;
  a.sample_type = sample_ip | sample_tid | sample_time | sample_period | sample_callchain;
  a.sample_period = 1;
  test::TempTree dir;
  const std::string path = dir.root() + "/marker.data";
  auto sample = [](std::uint64_t time, std::vector<std::uint64_t> chain) {
    std::vector<std::uint64_t> words{0x1000, (std::uint64_t{7} << 32) | 7, time, 1, chain.size()};
    words.insert(words.end(), chain.begin(), chain.end());
    std::vector<std::byte> r(8 + words.size() * 8);
    const std::uint32_t type = 9;                                               // PERF_RECORD_SAMPLE
    const std::uint16_t misc = 2, size = static_cast<std::uint16_t>(r.size());  // user space
    std::memcpy(r.data(), &type, 4);
    std::memcpy(r.data() + 4, &misc, 2);
    std::memcpy(r.data() + 6, &size, 2);
    std::memcpy(r.data() + 8, words.data(), words.size() * 8);
    return r;
  };
  const std::uint64_t user = static_cast<std::uint64_t>(-512), unknown = static_cast<std::uint64_t>(-100);
  {
    auto out = PerfDataWriter::create(path, {{a, {1}, "task-clock"}});
    out.write(sample(10, {user, 0x1000, 0x2000}));
    out.write(sample(20, {user, 0x1000, unknown, 0x2000}));
    out.finish();
  }
  auto file = PerfData::open(path);
  Profile p = Profile::read(file);
  REQUIRE(p.events().size() == 1);
  const auto& stacks = p.events()[0].stacks;
  REQUIRE(stacks.size() == 2);
  auto ips = [&](const Profile::Stack& st) {
    std::vector<std::uint64_t> out;
    for (auto f : st.frames) out.push_back(p.frame(f).ip);
    return out;
  };
  CHECK(ips(stacks[0]) == std::vector<std::uint64_t>{0x1000, 0x2000});
  CHECK(ips(stacks[1]) == std::vector<std::uint64_t>{0x1000});
  CHECK(stacks[1].samples == 1);
  CHECK(p.events()[0].samples == 2);
}

// perf 6.12's "Total Lost Samples" is the LOST_SAMPLES records' sum (checked on perf's own recording of
// bench/record.sh with its LOST_SAMPLES count patched to 100: perf printed 100, its LOST record said
// 1764); the kernel's LOST records are kept apart, not added to it.
TEST_CASE("profile: lost samples are the LOST_SAMPLES records', the kernel's LOST records kept apart") {
  Attr a{};
  a.type = 1;
  a.config = 1;
  a.sample_type = sample_ip | sample_tid | sample_period;
  a.sample_period = 1;
  test::TempTree dir;
  const std::string path = dir.root() + "/lost.data";
  auto record = [](std::uint32_t type, std::vector<std::uint64_t> words) {
    std::vector<std::byte> r(8 + words.size() * 8);
    const std::uint16_t misc = 0, size = static_cast<std::uint16_t>(r.size());
    std::memcpy(r.data(), &type, 4);
    std::memcpy(r.data() + 4, &misc, 2);
    std::memcpy(r.data() + 6, &size, 2);
    std::memcpy(r.data() + 8, words.data(), words.size() * 8);
    return r;
  };
  {
    auto out = PerfDataWriter::create(path, {{a, {1}, "task-clock"}});
    out.write(record(2, {1, 7}));                                     // PERF_RECORD_LOST: id, lost
    out.write(record(13, {5}));                                       // PERF_RECORD_LOST_SAMPLES: lost
    out.write(record(9, {0x1000, (std::uint64_t{7} << 32) | 7, 1}));  // a sample: ip, pid/tid, period
    out.finish();
  }
  auto file = PerfData::open(path);
  Profile p = Profile::read(file);
  CHECK(p.lost() == 5);
  CHECK(p.lost_by_kernel() == 7);
  CHECK(report_text(p).find("# Total Lost Samples: 5\n") != std::string::npos);
}

// perf's pid key prints the name the thread has last (hist_entry__thread_snprintf), so that rows of
// samples taken before an exec (perf-exec) and after it (ls) both read `7:ls`; the comm key keeps each
// sample's own name. (Seen on a perf 6.12 recording where some kernel samples came before the exec.)
TEST_CASE("report: the pid key names the thread by its last name, the comm key by the samples'") {
  Attr a{};
  a.type = 1;
  a.config = 1;
  a.sample_type = sample_ip | sample_tid | sample_time | sample_period;
  a.sample_period = 1;  // no sample_id_all: the records in file order
  test::TempTree dir;
  const std::string path = dir.root() + "/exec.data";
  auto record = [](std::uint32_t type, std::uint16_t misc, std::vector<std::uint64_t> words,
                   std::string text = {}) {
    std::vector<std::byte> r(8 + words.size() * 8 + (text.size() + 8) / 8 * 8);
    const std::uint16_t size = static_cast<std::uint16_t>(r.size());
    std::memcpy(r.data(), &type, 4);
    std::memcpy(r.data() + 4, &misc, 2);
    std::memcpy(r.data() + 6, &size, 2);
    std::memcpy(r.data() + 8, words.data(), words.size() * 8);
    std::memcpy(r.data() + 8 + words.size() * 8, text.data(), text.size());
    return r;
  };
  const std::uint64_t pid_tid = (std::uint64_t{7} << 32) | 7;
  {
    auto out = PerfDataWriter::create(path, {{a, {1}, "task-clock"}});
    // COMM "perf-exec" (pid, tid, name), a kernel sample, then the exec
    out.write(record(3, 0, {pid_tid}, "perf-exec"));
    out.write(record(9, 1, {0xffffffff81000000, pid_tid, 10, 1}));
    out.write(record(3, 0x2000, {pid_tid}, "ls"));  // PERF_RECORD_MISC_COMM_EXEC
    out.write(record(9, 2, {0x1000, pid_tid, 20, 1}));
    out.finish();
  }
  auto file = PerfData::open(path);
  Profile p = Profile::read(file);
  std::string by_pid = report_text(p, {.sort = {"pid"}, .quiet = true});
  CHECK(by_pid.starts_with("   100.00%        7:ls "));  // one row: the samples of both names
  CHECK(by_pid.find("perf-ex") == std::string::npos);
  std::string by_comm = report_text(p, {.sort = {"comm"}, .quiet = true});
  // a row per name, cut to the width of the threads' last names (perf's)
  CHECK(by_comm.starts_with("    50.00%  ls     \n    50.00%  perf-ex\n"));
}

TEST_CASE("report: perf report --stdio's text, byte for byte but for its closing tip") {
  Profile cc = profile_of("callchain.data");
  CHECK(report_text(cc) == test::expected_stdout("report_callchain.txt"));
  CHECK(report_text(cc, {.children = false}) == test::expected_stdout("report_callchain_no_children.txt"));
  CHECK(report_text(cc, {.graph = false}) == test::expected_stdout("report_callchain_none.txt"));
  CHECK(report_text(cc, {.children = false, .caller = true, .graph_percent = 5}) ==
        test::expected_stdout("report_callchain_caller.txt"));
  CHECK(report_text(cc, {.sort = {"dso", "sym"}, .children = false, .percent_limit = 2, .samples = true}) ==
        test::expected_stdout("report_callchain_sort.txt"));
  CHECK(report_text(cc, {.sort = {"sym", "comm"}}) == test::expected_stdout("report_callchain_sym.txt"));
  CHECK(report_text(profile_of("callchain_pipe.data")) == test::expected_stdout("report_callchain_pipe.txt"));
  Profile addr = profile_of("addr.data");
  CHECK(report_text(addr) == test::expected_stdout("report_addr.txt"));
  CHECK(report_text(addr, {.sort = {"pid", "dso"}, .samples = true}) ==
        test::expected_stdout("report_addr_pid.txt"));
  // a folder of perf record --threads
  Profile threads = profile_of("threads_dir.data");
  CHECK(report_text(threads, {.sort = {"comm", "pid", "sym"}}) ==
        test::expected_stdout("report_threads_dir.txt"));
  CHECK(report_text(profile_of("rounds.data"), {.sort = {"comm", "pid", "dso", "sym"}}) ==
        test::expected_stdout("report_rounds.txt"));
}

TEST_CASE("report: options it cannot follow are usage errors, before a file is read") {
  auto message = [](const ReportOptions& o) {
    try {
      check_report_options(o);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::usage);
      return e.message();
    }
    return std::string("none");
  };
  CHECK(message({.sort = {"comm", "colour"}}) == "unknown --sort key: 'colour'");
  CHECK(message({.sort = {}}) == "--sort names no key");
  CHECK(message({.percent_limit = 101}) == "--percent-limit 101 is no percentage");
  CHECK(message({.sort = {"symbol", "sy"}}) == "unknown --sort key: 'sy'");
  CHECK(message({.sort = {"pid", "cpu", "sym", "dso"}}) == "none");
}

TEST_CASE("folded stacks: perf's stackcollapse lines, and a sample without a callchain is its function") {
  Profile cc = profile_of("callchain.data");
  CHECK(folded_stacks(cc) == test::expected_stdout("report_folded_callchain.txt"));
  CHECK(folded_stacks(cc, {.pid = true, .tid = true, .kernel = true}) ==
        test::expected_stdout("report_folded_callchain_kernel.txt"));
  // addr.data has no callchains: perf's script prints `true 55`, the samples' functions are kept here
  // (perf report: 3 samples in the kernel, the rest in no binary it could read)
  CHECK(folded_stacks(profile_of("addr.data"), {.comm = false}) == "[unknown] 52\ndo_filp_open 3\n");
  std::string periods = folded_stacks(profile_of("callchain.data"), {.period = true});
  // the 15 samples of that one frame, by perf script: 9 of task-clock (250000 ns), 6 of page-faults
  CHECK(periods.find("ls;[unknown] 2250034\n") != std::string::npos);
}

TEST_CASE("pprof: profile.proto, gzipped, with a sample per stack and each event's two values") {
  Profile cc = profile_of("callchain.data");
  Fields profile = fields(gunzip(pprof_profile(cc)));
  std::vector<std::string> strings;
  for (auto [it, end] = profile.bytes.equal_range(6); it != end; ++it) strings.push_back(it->second);
  REQUIRE(!strings.empty());
  CHECK(strings[0].empty());
  auto type_of = [&](const std::string& value_type) {
    Fields t = fields(value_type);
    return strings.at(t.numbers.find(1)->second) + "/" + strings.at(t.numbers.find(2)->second);
  };
  std::vector<std::string> types;
  for (auto [it, end] = profile.bytes.equal_range(1); it != end; ++it) types.push_back(type_of(it->second));
  CHECK(types == std::vector<std::string>{"task-clock_samples/count", "task-clock/nanoseconds",
                                          "page-faults_samples/count", "page-faults/count"});
  std::uint64_t stacks = cc.events()[0].stacks.size() + cc.events()[1].stacks.size();
  CHECK(profile.bytes.count(2) == stacks);
  std::vector<std::uint64_t> sums(4);
  std::size_t locations = 0;
  for (auto [it, end] = profile.bytes.equal_range(2); it != end; ++it) {
    Fields sample = fields(it->second);
    auto values = packed(sample.bytes.find(2)->second);
    REQUIRE(values.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) sums[i] += values[i];
    locations += packed(sample.bytes.find(1)->second).size();
    CHECK(sample.bytes.count(3) == 3);  // pid, tid, comm
  }
  CHECK(sums == std::vector<std::uint64_t>{37, 9250000, 26, 111});
  CHECK(locations > stacks);
  // each location names its function where the frame has one
  std::map<std::uint64_t, std::string> functions;
  for (auto [it, end] = profile.bytes.equal_range(5); it != end; ++it) {
    Fields f = fields(it->second);
    functions[f.numbers.find(1)->second] = strings.at(f.numbers.find(2)->second);
  }
  CHECK(std::count_if(functions.begin(), functions.end(),
                      [](const auto& f) { return f.second == "do_filp_open"; }) == 1);
  CHECK(profile.numbers.count(14) == 1);  // default_sample_type
}
