// SPDX-License-Identifier: MIT
// The library's script printer (perfspec/script.hpp) and the time-ordered walk of a perf.data file
// (record::for_each_in_time_order), without the CLI: over files perf 6.12 wrote, against what perf
// 6.12's own `perf script` printed for them (tests/cli/expected, made by
// tests/fixtures/perf_data/make.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <zstd.h>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using namespace perfspec::record;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string perf_data(const std::string& name) { return test::fixture("perf_data/" + name); }

PerfData from_bytes(const std::string& path) {
  std::string text = slurp(path);
  std::vector<std::byte> bytes(text.size());
  std::transform(text.begin(), text.end(), bytes.begin(), [](char c) { return static_cast<std::byte>(c); });
  return PerfData::from_bytes(std::move(bytes));
}

struct Printed {
  std::string text;
  std::size_t pieces = 0;
};

Printed print(const ScriptPrinter& printer, PerfData& file) {
  Printed p;
  printer.print(file, [&](std::string_view piece) {
    CHECK(!piece.empty());
    p.text += piece;
    ++p.pieces;
  });
  return p;
}

}  // namespace

TEST_CASE("script: the text layout prints what perf 6.12's perf script printed, file and pipe") {
  SUBCASE("a file with callchains, in time order") {
    ScriptPrinter printer({.fields = {"comm,tid,time,event,ip"}, .samples_only = true});
    auto file = PerfData::open(perf_data("callchain.data"));
    CHECK(print(printer, file).text == test::expected_stdout("script_callchain.txt"));
  }
  SUBCASE("a pipe-mode stream, from bytes in memory") {
    ScriptPrinter printer({.fields = {"comm,pid,tid,time,period,event,ip"}, .samples_only = true});
    auto file = from_bytes(perf_data("pipe.data"));
    REQUIRE(file.pipe());
    CHECK(print(printer, file).text == test::expected_stdout("script_pipe.txt"));
  }
  SUBCASE("every record, by the default fields of a tracepoint with its payload") {
    ScriptPrinter printer({.samples_only = true});
    auto file = PerfData::open(perf_data("tracepoint_switch.data"));
    CHECK(print(printer, file).text == test::expected_stdout("script_switch_default.txt"));
  }
  SUBCASE("one printer prints several files, each from perf's defaults and its own checks") {
    ScriptPrinter printer({.fields = {"comm,pid,tid,time,period,event,addr,ip"}, .samples_only = true});
    auto addr = PerfData::open(perf_data("addr.data"));
    CHECK(print(printer, addr).text == test::expected_stdout("script_addr.txt"));
    auto again = PerfData::open(perf_data("addr.data"));
    CHECK(print(printer, again).text == test::expected_stdout("script_addr.txt"));
  }
}

TEST_CASE("script: -F lists are read when the printer is made, with perf's warnings and errors") {
  std::vector<std::string> warnings;
  auto warn = [&](std::string_view w) { warnings.emplace_back(w); };
  ScriptPrinter printer({.fields = {"trace"}, .samples_only = true}, warn);
  CHECK(warnings == std::vector<std::string>{
                        "'trace' not valid for hardware events. Ignoring.",
                        "'trace' not valid for software events. Ignoring.",
                        "'trace' not valid for hardware-cache events. Ignoring.",
                        "'trace' not valid for unknown events. Ignoring.",
                        "'trace' not valid for unknown events. Ignoring.",
                        "'trace' not valid for unknown events. Ignoring.",
                        "'trace' not valid for unknown events. Ignoring.",
                    });
  auto file = PerfData::open(perf_data("addr.data"));
  CHECK(print(printer, file).text == test::expected_stdout("script_fields_trace_sw.txt"));

  // JSON reads the lists too (a wrong one is wrong there as well), but says nothing of text's fields
  warnings.clear();
  ScriptPrinter json({.format = ScriptOptions::Format::json, .fields = {"trace"}}, warn);
  CHECK(warnings.empty());

  try {
    ScriptPrinter refused({.fields = {"comm,colour"}});
    FAIL("a field perf does not know was taken");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(e.message() == "Invalid field requested.");
  }
  // what the samples lack: an error before anything is written
  ScriptPrinter no_cpu({.fields = {"comm,cpu"}});
  auto addr = PerfData::open(perf_data("addr.data"));
  std::string written;
  try {
    no_cpu.print(addr, [&](std::string_view piece) { written += piece; });
    FAIL("a field the samples lack was printed");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(e.message() ==
          "Samples for 'page-faults' event do not have CPU attribute set. Cannot print 'cpu' field.");
  }
  CHECK(written.empty());
}

TEST_CASE("script: a payload that cannot be printed is an error naming the file, its line unwritten") {
  // the record's error names the file as the options name it
  ScriptPrinter printer({.fields = {"comm,tid,event,trace"}, .samples_only = true, .name = "the-file"});
  auto file = PerfData::open(perf_data("tracepoint_hex_overrun.data"));
  std::string written;
  try {
    printer.print(file, [&](std::string_view piece) { written += piece; });
    FAIL("an unprintable payload was printed");
  } catch (const DecodeError& e) {
    CHECK(
        e.message().starts_with("the-file: the record at offset 0xd210: sched:sched_process_exec payload: "));
  }
  CHECK(written == test::expected_stdout("script_tracepoint_hex_overrun.txt"));  // nothing: its first sample
}

TEST_CASE("script: a record that does not follow the format ends the printing, after what came before") {
  std::string bytes = slurp(perf_data("callchain.data"));
  // the 20th record's size made 4, less than its own header
  std::uint64_t bad = 0;
  {
    auto file = PerfData::open(perf_data("callchain.data"));
    Record r;
    for (int i = 0; i < 20; ++i) REQUIRE(file.next(r));
    bad = r.offset;
  }
  std::string broken = bytes;
  broken[bad + 6] = 4;
  broken[bad + 7] = 0;
  auto as_file = [](const std::string& text) {
    std::vector<std::byte> b(text.size());
    std::memcpy(b.data(), text.data(), text.size());
    return PerfData::from_bytes(std::move(b));
  };
  ScriptPrinter json({.format = ScriptOptions::Format::json});
  auto intact = as_file(bytes);
  std::string all = print(json, intact).text;
  // the lines of the records before the broken one, the events' line first
  std::string before;
  for (std::size_t at = 0; at < all.size();) {
    std::size_t end = all.find('\n', at) + 1;
    std::string line = all.substr(at, end - at);
    if (line.starts_with("{\"offset\":") && std::stoull(line.substr(10)) >= bad) break;
    before += line;
    at = end;
  }
  REQUIRE(before.size() < all.size());
  auto file = as_file(broken);
  std::string written;
  try {
    json.print(file, [&](std::string_view piece) { written += piece; });
    FAIL("a broken record was printed");
  } catch (const DecodeError& e) {
    CHECK(e.offset() == bad);
  }
  CHECK(written == before);
}

TEST_CASE("script: --summary and JSON") {
  ScriptPrinter summary({.summary = true});
  auto file = PerfData::open(perf_data("group_read.data"));
  CHECK(print(summary, file).text == test::expected_stdout("script_summary.txt"));

  ScriptPrinter json({.format = ScriptOptions::Format::json});
  auto addr = PerfData::open(perf_data("addr.data"));
  std::string text = print(json, addr).text;
  CHECK(text.starts_with(R"({"schema":"perfspec-script/1","pipe":false,"events":[{"name":"page-faults")"));
  // a line per record after the first, each a JSON object with its offset
  std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  std::size_t records = 0;
  Record r;
  auto again = PerfData::open(perf_data("addr.data"));
  while (again.next(r)) ++records;
  CHECK(lines == records + 1);
}

TEST_CASE("time order: every record of the kernel once, sorted by time, stable") {
  for (std::string name : {"callchain.data", "tracepoint.data", "tracepoint_switch.data", "mixed.data",
                           "threads_dir.data", "pipe.data", "callchain_pipe.data", "tracepoint_pipe.data"}) {
    CAPTURE(name);
    bool pipe = name.find("pipe") != std::string::npos;
    auto file = pipe ? from_bytes(perf_data(name)) : PerfData::open(perf_data(name));
    // file order first: (time, offset) of each record of the kernel's, and the events' ATTRs in a pipe
    std::vector<std::pair<std::uint64_t, std::uint64_t>> in_file;
    Record r;
    std::size_t attrs = 0;
    while (file.next(r)) {
      if (r.kind() == Type::header_attr) ++attrs;
      if (r.type < user_type_start) in_file.emplace_back(r.sample_id.time, r.offset);
    }
    // a fresh file: in a pipe, events() holds every event once its ATTRs have been read
    auto walked = pipe ? from_bytes(perf_data(name)) : PerfData::open(perf_data(name));
    std::vector<std::pair<std::uint64_t, std::uint64_t>> visited;
    std::vector<std::size_t> on_attr;
    Order order = for_each_in_time_order(
        walked, [&](const Record& rec) { visited.emplace_back(rec.sample_id.time, rec.offset); },
        [&](std::size_t index) { on_attr.push_back(index); });
    CHECK(order == Order::time);
    // the stable sort by time is the sort by (time, offset)
    auto sorted = in_file;
    std::sort(sorted.begin(), sorted.end());
    CHECK(visited == sorted);
    if (pipe) {
      CHECK(on_attr.size() == attrs);
      for (std::size_t i = 0; i < on_attr.size(); ++i) CHECK(on_attr[i] == i);
    } else {
      CHECK(on_attr.empty());
    }
  }
}

namespace {

// A file of page-faults samples written here: with PERF_SAMPLE_TIME (and sample_id_all) or without,
// each sample's ip and (when timed) time as given.
std::string write_samples(const test::TempTree& dir, bool timed,
                          const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ip_time) {
  std::string path = dir.root() + (timed ? "/timed.data" : "/untimed.data");
  Attr attr{};
  attr.type = 1;
  attr.config = 2;  // page-faults
  attr.sample_period = 1;
  attr.sample_type = sample_ip | sample_tid | (timed ? sample_time : 0);
  attr.sample_id_all = timed;
  auto out = PerfDataWriter::create(path, {{attr, {7}, "page-faults"}});
  for (auto [ip, time] : ip_time) {
    std::vector<std::byte> rec(timed ? 32 : 24);
    std::uint32_t type = 9, pid = 42;  // PERF_RECORD_SAMPLE
    std::uint16_t misc = 2, size = static_cast<std::uint16_t>(rec.size());
    std::memcpy(rec.data(), &type, 4);
    std::memcpy(rec.data() + 4, &misc, 2);
    std::memcpy(rec.data() + 6, &size, 2);
    std::memcpy(rec.data() + 8, &ip, 8);
    std::memcpy(rec.data() + 16, &pid, 4);
    std::memcpy(rec.data() + 20, &pid, 4);
    if (timed) std::memcpy(rec.data() + 24, &time, 8);
    out.write(rec);
  }
  out.finish();
  return path;
}

}  // namespace

TEST_CASE("time order: late records go before the first later one, records of one time in file order") {
  test::TempTree dir;
  auto file =
      PerfData::open(write_samples(dir, true, {{1, 30}, {2, 10}, {3, 40}, {4, 10}, {5, 30}, {6, 50}}));
  std::vector<std::uint64_t> ips;
  Order order = for_each_in_time_order(file, [&](const Record& r) { ips.push_back(r.get<Sample>()->ip); });
  CHECK(order == Order::time);
  CHECK(ips == std::vector<std::uint64_t>{2, 4, 1, 5, 3, 6});
}

TEST_CASE("time order: records without time are visited in file order") {
  // perf records time by default: a file whose one event has no PERF_SAMPLE_TIME
  test::TempTree dir;
  auto file = PerfData::open(write_samples(dir, false, {{0x3000, 0}, {0x1000, 0}, {0x2000, 0}}));
  std::vector<std::uint64_t> ips;
  Order order = for_each_in_time_order(file, [&](const Record& r) { ips.push_back(r.get<Sample>()->ip); });
  CHECK(order == Order::file);
  CHECK(ips == std::vector<std::uint64_t>{0x3000, 0x1000, 0x2000});
}

namespace {

// A record's bytes: header, then 64-bit words.
std::vector<std::byte> words_record(std::uint32_t type, std::uint16_t misc,
                                    std::vector<std::uint64_t> words) {
  std::vector<std::byte> rec(8 + 8 * words.size());
  auto size = static_cast<std::uint16_t>(rec.size());
  std::memcpy(rec.data(), &type, 4);
  std::memcpy(rec.data() + 4, &misc, 2);
  std::memcpy(rec.data() + 6, &size, 2);
  std::memcpy(rec.data() + 8, words.data(), 8 * words.size());
  return rec;
}

}  // namespace

TEST_CASE("time order: a compressed file round by round as perf orders it, visited records released") {
  // perf record -z: each round's records in a COMPRESSED record of one zstd stream, then FINISHED_ROUND.
  // Samples (ip, pid/tid, time) of one page-faults event; a COMM of time 0 in the third round.
  Attr attr{};
  attr.type = 1;
  attr.config = 2;
  attr.sample_period = 1;
  attr.sample_type = sample_ip | sample_tid | sample_time;
  attr.sample_id_all = 1;
  const std::uint64_t tid = (std::uint64_t{42} << 32) | 42;
  auto sample = [&](std::uint64_t ip, std::uint64_t time) { return words_record(9, 2, {ip, tid, time}); };
  std::vector<std::byte> comm_at_0 = words_record(3, 0, {tid, 0x6b726f77 /* "work" */, tid, 0});
  std::vector<std::vector<std::vector<std::byte>>> rounds = {
      {sample(1, 10), sample(2, 30), sample(3, 20)},
      {sample(4, 25), sample(5, 50)},
      {comm_at_0, sample(6, 15), sample(7, 60)},
  };
  test::TempTree dir;
  const std::string path = dir.root() + "/compressed.data";
  std::vector<std::uint64_t> chunk_size;
  {
    auto out = PerfDataWriter::create(path, {{attr, {7}, "page-faults"}});
    ZSTD_CStream* z = ZSTD_createCStream();
    ZSTD_initCStream(z, 1);
    for (const auto& round : rounds) {
      std::vector<std::byte> plain;
      for (const auto& r : round) plain.insert(plain.end(), r.begin(), r.end());
      chunk_size.push_back(plain.size());
      std::vector<std::byte> packed(ZSTD_compressBound(plain.size()) + 64);
      ZSTD_inBuffer in{plain.data(), plain.size(), 0};
      ZSTD_outBuffer o{packed.data(), packed.size(), 0};
      ZSTD_compressStream(z, &o, &in);
      ZSTD_flushStream(z, &o);
      std::vector<std::byte> compressed(8 + o.pos);
      std::uint32_t type = 81;  // PERF_RECORD_COMPRESSED
      auto size = static_cast<std::uint16_t>(compressed.size());
      std::memcpy(compressed.data(), &type, 4);
      std::memcpy(compressed.data() + 6, &size, 2);
      std::memcpy(compressed.data() + 8, packed.data(), o.pos);
      out.write(compressed);
      out.finish_round();
    }
    ZSTD_freeCStream(z);
    // HEADER_COMPRESSED: version 2, zstd (1), level 1, ratio, mmap_len
    std::vector<std::byte> info(20);
    std::uint32_t fields[5] = {2, 1, 1, 3, 528384};
    std::memcpy(info.data(), fields, sizeof fields);
    out.set_feature(Feature::compressed, info);
    out.finish();
  }
  auto file = PerfData::open(path);
  std::vector<std::uint64_t> seen, held;
  Order order = for_each_in_time_order(file, [&](const Record& r) {
    seen.push_back(r.get<Sample>() ? r.get<Sample>()->ip : 0);
    held.push_back(file.decompressed_held());
  });
  CHECK(order == Order::time);
  // The first round's end delivers nothing (perf's limit starts at 0), the second's what is no later
  // than 30 (the latest time at the first's end), the third's up to 50; 15 comes after 30, late, as
  // perf delivers it (and counts it out of order); the COMM of time 0 as it is read.
  CHECK(seen == std::vector<std::uint64_t>{1, 3, 4, 2, 0, 6, 5, 7});
  // After the second round's records, the first chunk is released; after the third's, the second.
  CHECK(held == std::vector<std::uint64_t>{chunk_size[0] + chunk_size[1], chunk_size[0] + chunk_size[1],
                                           chunk_size[0] + chunk_size[1], chunk_size[0] + chunk_size[1],
                                           chunk_size[1] + chunk_size[2], chunk_size[1] + chunk_size[2],
                                           chunk_size[1] + chunk_size[2], chunk_size[2]});
  // decode_at no longer finds what was released; rewind() makes it again
  Record r;
  file.rewind();
  std::vector<std::uint64_t> offsets;
  while (file.next(r))
    if (r.get<Sample>()) offsets.push_back(r.offset);
  REQUIRE(offsets.size() == 7);
  file.release_decompressed_before(offsets[5]);  // the third chunk's: the first two go
  CHECK(file.decompressed_held() == chunk_size[2]);
  const std::string gone = fmt::format("no record can start at offset {:#x}", offsets[0]);
  CHECK_THROWS_WITH_AS(file.decode_at(offsets[0], r), doctest::Contains(gone.c_str()), DecodeError);
  file.decode_at(offsets[6], r);
  CHECK(r.get<Sample>()->ip == 7);
}

TEST_CASE("script: a large output is handed over in pieces, and a failed write is an error") {
  // 4000 samples: a line each, handed over once past 64 KiB, at the end of a line
  test::TempTree dir;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> samples;
  for (std::uint64_t i = 0; i < 4000; ++i) samples.emplace_back(0x1000 + i, 1000000 + i);
  const std::string path = write_samples(dir, true, samples);
  ScriptPrinter printer({.fields = {"comm,tid,time,event,ip"}});
  auto file = PerfData::open(path);
  std::vector<std::string> pieces;
  printer.print(file, [&](std::string_view piece) { pieces.emplace_back(piece); });
  REQUIRE(pieces.size() >= 2);
  std::string all;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    CAPTURE(i);
    if (i + 1 < pieces.size()) CHECK(pieces[i].size() > (1u << 16));
    CHECK(pieces[i].back() == '\n');
    all += pieces[i];
  }
  CHECK(std::count(all.begin(), all.end(), '\n') == 4000);
  CHECK(all.substr(0, all.find('\n') + 1) ==
        "             :42      42     0.001000: page-faults:              1000\n");

  std::FILE* full = std::fopen("/dev/full", "w");
  REQUIRE(full);
  std::setvbuf(full, nullptr, _IONBF, 0);
  auto again = PerfData::open(path);
  try {
    printer.print(again, full);
    FAIL("writing to /dev/full succeeded");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK(e.message() == "cannot write the records: No space left on device");
  }
  std::fclose(full);
}

TEST_CASE("time ranges: perf's --time forms, exactly as perf 6.12 bounds them") {
  using R = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  // percents of [1000, 2000]: a share ends a nanosecond before the next starts, but at the last sample
  CHECK(TimeRanges::parse("10%/2", 1000, 2000).ranges() == R{{1100, 1199}});
  CHECK(TimeRanges::parse("0%-10%,30%-40%", 1000, 2000).ranges() == R{{1000, 1099}, {1300, 1399}});
  CHECK(TimeRanges::parse("10%/1,10%/2", 1000, 2000).ranges() == R{{1000, 1099}, {1100, 1199}});
  CHECK(TimeRanges::parse("25%", 1000, 2000).ranges() == R{{1000, 1249}});
  CHECK(TimeRanges::parse("50%-100%", 1000, 2000).ranges() == R{{1500, 2000}});
  CHECK(TimeRanges::parse("10%/1,", 1000, 2000).ranges() == R{{1000, 1099}});
  // seconds with up to 9 decimals, either end open; ranges apart by spaces
  CHECK(TimeRanges::parse("1.5,2", 0, 0).ranges() == R{{1500000000, 2000000000}});
  CHECK(TimeRanges::parse(",2.000000001", 0, 0).ranges() == R{{0, 2000000001}});
  CHECK(TimeRanges::parse("1,2 3,4", 0, 0).ranges() == R{{1000000000, 2000000000}, {3000000000, 4000000000}});
  CHECK(TimeRanges::parse("1, 2 3,4", 0, 0).ranges() ==
        R{{1000000000, 2000000000}, {3000000000, 4000000000}});
  for (const char* bad :
       {"1", "2,1", "1,3 2,4", "1.0123456789,2", "10%/0", "110%", "0%-10%/2", "x%", "10%x,"})
    CHECK_THROWS_AS(TimeRanges::parse(bad, 1000, 2000), Error);
  CHECK_THROWS_WITH(TimeRanges::parse("10%/2", 0, 0, false),
                    doctest::Contains("percents need the first and last sample's time"));
  // one range: either end open; several: in one of them; time 0 (no time) always kept
  auto one = TimeRanges::parse("1,2", 0, 0);
  CHECK(one.keeps(1000000000));
  CHECK(one.keeps(2000000000));
  CHECK_FALSE(one.keeps(2000000001));
  CHECK_FALSE(one.keeps(999999999));
  CHECK(one.keeps(0));
  auto open_end = TimeRanges::parse("1,", 0, 0);
  CHECK(open_end.keeps(~std::uint64_t{0}));
  auto two = TimeRanges::parse("1,2 3,", 0, 0);
  CHECK(two.keeps(1500000000));
  CHECK_FALSE(two.keeps(2500000000));
  CHECK(two.keeps(9000000000));
  CHECK(TimeRanges().keeps(12345));
}
