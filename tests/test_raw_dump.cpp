// SPDX-License-Identifier: MIT
// perf's -D: the order perf's session delivers records in (record::for_each_as_delivered), and the
// text of the dump (ScriptOptions::dump_raw, dump_raw_trace) on files written here, byte for byte as
// perf 6.12 prints them (perf_script_side_by_side.py compares them with perf itself on recordings).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "perfspec/perfspec.hpp"
#include "perfspec/report.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using namespace perfspec::record;

namespace {

// A page-faults sample of pid/tid 42 at `ip` and `time` (IP, TID, TIME; 32 bytes; with IDENTIFIER,
// TID, TIME the same bytes say `ip` is its id).
std::vector<std::byte> sample(std::uint64_t ip, std::uint64_t time) {
  std::vector<std::byte> rec(32);
  std::uint32_t type = 9, pid = 42;
  std::uint16_t misc = 2, size = 32;
  std::memcpy(rec.data(), &type, 4);
  std::memcpy(rec.data() + 4, &misc, 2);
  std::memcpy(rec.data() + 6, &size, 2);
  std::memcpy(rec.data() + 8, &ip, 8);
  std::memcpy(rec.data() + 16, &pid, 4);
  std::memcpy(rec.data() + 20, &pid, 4);
  std::memcpy(rec.data() + 24, &time, 8);
  return rec;
}

// A file of such samples, `rounds` of them apart by FINISHED_ROUND records: (ip, time) each.
std::string write_rounds(const test::TempTree& dir,
                         const std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>>& rounds) {
  const std::string path = dir.root() + "/rounds.data";
  Attr attr{};
  attr.type = 1;
  attr.config = 2;  // page-faults
  attr.sample_period = 1;
  attr.sample_type = sample_ip | sample_tid | sample_time;
  attr.sample_id_all = true;
  auto out = PerfDataWriter::create(path, {{attr, {7}, "page-faults"}});
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    for (auto [ip, time] : rounds[i]) out.write(sample(ip, time));
    if (i + 1 < rounds.size()) out.finish_round();
  }
  out.finish();
  return path;
}

// What for_each_as_delivered visits: a sample as its ip, a FINISHED_ROUND as "R"
std::vector<std::string> delivered(PerfData& file, bool ordered) {
  std::vector<std::string> seen;
  for_each_as_delivered(file, ordered, [&](const Record& r, const PerfData::Place&) {
    if (auto* s = r.get<Sample>()) seen.push_back(std::to_string(s->ip));
    if (r.kind() == Type::finished_round) seen.push_back("R");
  });
  return seen;
}

}  // namespace

TEST_CASE("delivery: each round's records come out after the next round's FINISHED_ROUND, by time") {
  test::TempTree dir;
  // round 1: times 30, 10; round 2: 40, 20 and a time 0 (delivered as read); round 3: 50
  auto file = PerfData::open(write_rounds(dir, {{{1, 30}, {2, 10}}, {{3, 40}, {4, 20}, {5, 0}}, {{6, 50}}}));
  // the first round sets the limit (30) and lets nothing out; the second lets out what is no later
  // than 30, of both rounds, sorted; the rest at the end
  CHECK(delivered(file, true) == std::vector<std::string>{"R", "5", "R", "2", "4", "1", "3", "6"});
  auto again = PerfData::open(dir.root() + "/rounds.data");
  CHECK(delivered(again, false) == std::vector<std::string>{"1", "2", "R", "3", "4", "5", "R", "6"});
}

TEST_CASE("delivery: what a round leaves goes with the next; records of one time keep their order") {
  test::TempTree dir;
  // round 1 queues 20 (its limit); round 2, with nothing read, lets it out (no later than 20); round 3's
  // 15 and two 20s come out at the round after, the 20s in the order read
  auto file = PerfData::open(write_rounds(dir, {{{1, 20}}, {}, {{2, 20}, {3, 15}, {4, 20}}, {{5, 25}}}));
  CHECK(delivered(file, true) == std::vector<std::string>{"R", "R", "1", "R", "3", "2", "4", "5"});
}

TEST_CASE("dump: a sample's block and line as perf script -D prints them, and perf report -D's statistics") {
  test::TempTree dir;
  const std::string path = write_rounds(dir, {{{0x401000, 1000000123}}});
  auto file = PerfData::open(path);
  ScriptOptions o;
  o.dump_raw = true;
  o.fields = {"comm,tid,time,event,ip"};
  std::string text;
  ScriptPrinter(o).print(file, [&](std::string_view t) { text += t; });
  // the writer's data section starts after the header and the attr: the sample's offset
  const std::string at = fmt::format("{:#x}", file.data_offset());
  CHECK(text == "\n" + at + "@" + path +
                    " [0x20]: event: 9\n"
                    ".\n"
                    ". ... raw event: size 32 bytes\n"
                    ".  0000:  09 00 00 00 02 00 20 00 00 10 40 00 00 00 00 00  ...... ...@.....\n"
                    ".  0010:  2a 00 00 00 2a 00 00 00 7b ca 9a 3b 00 00 00 00  *...*...{..;....\n"
                    "\n"
                    "1000000123 " +
                    at +
                    " [0x20]: PERF_RECORD_SAMPLE(IP, 0x2): 42/42: 0x401000 period: 1 addr: 0\n"
                    " ... thread: :42:42\n"
                    " ...... dso: <not found>\n"
                    "             :42      42     1.000000: page-faults:            401000\n");
  auto again = PerfData::open(path);
  std::string report;
  dump_raw_trace(again, {}, [&](std::string_view t) { report += t; });
  const std::string stats = report.substr(report.find("\nAggregated stats:"));
  CHECK(stats ==
        "\nAggregated stats:\n"
        "               TOTAL events:          1\n"
        "              SAMPLE events:          1  (100.0%)\n"
        "page-faults stats:\n"
        "              SAMPLE events:          1\n");
}

TEST_CASE("dump: a sample of an id no event has ends the dump where perf's session fails") {
  test::TempTree dir;
  const std::string path = dir.root() + "/two.data";
  Attr attr{};
  attr.type = 1;
  attr.config = 2;
  attr.sample_period = 1;
  attr.sample_type = sample_identifier | sample_tid | sample_time;
  attr.sample_id_all = true;
  auto out = PerfDataWriter::create(path, {{attr, {7}, "page-faults"}, {attr, {8}, "minor-faults"}});
  out.write(sample(99, 5));  // IDENTIFIER where IP is, 99 of no event
  out.finish();
  auto file = PerfData::open(path);
  std::string report;
  try {
    dump_raw_trace(file, {}, [&](std::string_view t) { report += t; });
    FAIL("no error");
  } catch (const DecodeError& e) {
    CHECK(e.offset() == file.data_offset());
    CHECK(std::string(e.what()).find("names an id no event of the file has") != std::string::npos);
  }
  CHECK(report.find("event: 9") == std::string::npos);  // nothing of it, as perf
  CHECK(report.find("Aggregated stats") == std::string::npos);
}
