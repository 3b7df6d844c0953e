// SPDX-License-Identifier: MIT
// The recording session (perfspec/recording.hpp) without the CLI: a command recorded into a perf.data
// file, read back; exact sample counts from a workload whose page faults are known.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/recording.hpp"
#include "perfspec/symbols.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {

// What a command writes on standard error while `body` runs (it inherits this process's).
template <typename Body> std::string stderr_of(const test::TempTree& dir, Body&& body) {
  const std::string path = dir.root() + "/stderr";
  int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(file >= 0);
  std::fflush(stderr);
  int saved = ::dup(2);
  ::dup2(file, 2);
  ::close(file);
  struct Restore {  // also when a REQUIRE in `body` ends the test
    int saved;
    ~Restore() {
      std::fflush(stderr);
      ::dup2(saved, 2);
      ::close(saved);
    }
  } restore{saved};
  body();
  std::fflush(stderr);
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a recording of a command: every page fault a sample, the file perf record writes") {
  spec::Machine machine("/sys", test::no_libpfm4());
  test::TempTree dir;
  const std::string path = dir.root() + "/perf.data";
  const int pages = 300;
  runtime::RecordingSummary summary;
  int cmd_pid = 0;
  std::string err = stderr_of(dir, [&] {
    runtime::Command cmd({PERFSPEC_WORKLOAD, "touch", std::to_string(pages)});
    cmd_pid = cmd.pid();
    runtime::SamplingOptions sampling;
    sampling.period = 1;
    sampling.sample_type = record::sample_ip | record::sample_tid | record::sample_time | record::sample_addr;
    auto rec = runtime::Recording::open(machine, resolve("page-faults:u", machine),
                                        runtime::Target::command(cmd, true),
                                        {.sampling = sampling, .cmdline = {"test", "record"}});
    REQUIRE(rec.sampling());
    REQUIRE(rec.file_events().size() == 1);
    auto out = record::PerfDataWriter::create(path, rec.file_events());
    rec.begin(out);
    REQUIRE(cmd.start() == 0);
    while (rec.drain(100) != runtime::Wakeup::target_gone) {
    }
    summary = rec.finish();
    cmd.wait();
    CHECK(cmd.exit_status() == 0);
  });
  // "region START END": the pages the workload wrote one byte to, each a fault
  unsigned long long start = 0, end = 0;
  REQUIRE(std::sscanf(err.c_str(), "region %llx %llx", &start, &end) == 2);
  REQUIRE(end - start ==
          static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(::getpagesize()));

  auto file = record::PerfData::open(path);
  REQUIRE(file.events().size() == 1);
  CHECK(file.events()[0].name == "page-faults:u");
  CHECK(file.cmdline() == std::vector<std::string>{"test", "record"});
  CHECK(file.feature_string(record::Feature::hostname).has_value());
  CHECK(file.has_feature(record::Feature::sample_time_range));
  // perf record's build ids: the binaries samples hit, each with its ELF build id (the workload's,
  // whose touch_pages made the faults)
  REQUIRE(file.has_feature(record::Feature::build_id));
  record::Symbolizer symbols;
  symbols.read_build_ids(file.feature(record::Feature::build_id));
  const std::vector<std::byte> id = record::elf_build_id(PERFSPEC_WORKLOAD);
  REQUIRE(id.size() == 20);
  // In time order, as perf script reads a file: the workload's MMAP2 is written from the buffer of the
  // CPU it exec'd on, and when it then ran on another CPU its first samples can come before that
  // record in the file (seen in the arm64 guest: none of 300 samples found their function in file order).
  std::uint64_t samples = 0, in_region = 0, comms = 0, waiting_comms = 0, rounds = 0, in_touch_pages = 0;
  record::for_each_in_time_order(file, [&](const record::Record& r) {
    symbols.apply(r);
    if (auto* s = r.get<record::Sample>()) {
      ++samples;
      if (s->addr >= start && s->addr < end) {
        ++in_region;
        record::Location where = symbols.locate(s->pid, s->ip, r.misc);
        if (where.dso == PERFSPEC_WORKLOAD && where.symbol && where.symbol->name == "touch_pages")
          ++in_touch_pages;
      }
    }
    if (auto* c = r.get<record::Comm>()) {
      if (c->exec && c->comm == "perfspec_worklo") ++comms;
      // the command's name before its exec, synthesized first as perf record does (time 0)
      if (!c->exec && c->comm == "perf-exec" && c->pid == static_cast<std::uint32_t>(cmd_pid) &&
          c->tid == c->pid && comms == 0 && samples == 0 && r.sample_id.time == 0)
        ++waiting_comms;
    }
  });
  file.rewind();
  for (record::Record r; file.next(r);)
    if (r.kind() == record::Type::finished_round) ++rounds;
  CHECK(in_region == static_cast<std::uint64_t>(pages));
  CHECK(in_touch_pages == in_region);  // found only where the build recorded is the file's
  CHECK(symbols.problems().empty());
  CHECK(samples == summary.samples);
  CHECK(samples >= in_region);
  CHECK(waiting_comms == 1);
  CHECK(comms == 1);   // named at its exec (its file name, cut to 15 bytes), where its counting began
  CHECK(rounds >= 2);  // after what was synthesized, and after each pass that wrote
  CHECK(summary.losses.dropped == 0);
  CHECK(summary.bytes == file.data_size());
}

TEST_CASE("a recording switched to a second file (--switch-output): the next file maps what exists") {
  // The workload (--wait) execs, maps its pages, says "ready" and waits for a line on its standard input:
  // the file is switched then, and the faults it makes next are all the second file's, each found in
  // touch_pages through the mappings synthesized at the switch (its exec's are in the first file).
  spec::Machine machine("/sys", test::no_libpfm4());
  test::TempTree dir;
  const std::string first_path = dir.root() + "/one.data", second_path = dir.root() + "/two.data";
  const int pages = 300;
  int in[2], out[2];
  REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const int saved_stdin = ::dup(0);
  ::dup2(in[0], 0);  // the command's standard input, from its fork on
  runtime::Command cmd({PERFSPEC_WORKLOAD, "--wait", "touch", std::to_string(pages)}, out[1]);
  ::dup2(saved_stdin, 0);
  ::close(saved_stdin);
  ::close(in[0]);
  ::close(out[1]);
  runtime::SamplingOptions sampling;
  sampling.period = 1;
  sampling.sample_type = record::sample_ip | record::sample_tid | record::sample_time;
  auto rec = runtime::Recording::open(machine, resolve("page-faults:u", machine),
                                      runtime::Target::command(cmd, true), {.sampling = sampling});
  auto one = record::PerfDataWriter::create(first_path, rec.file_events());
  rec.begin(one);
  REQUIRE(cmd.start() == 0);
  std::string said;
  for (char c = 0; c != '\n' && ::read(out[0], &c, 1) == 1;) said += c;
  REQUIRE(said == "ready\n");
  const runtime::RecordingSummary first = rec.end_file();
  CHECK_THROWS_AS(rec.drain(0), Error);  // no file to write into between the two
  auto two = record::PerfDataWriter::create(second_path, rec.file_events());
  rec.begin(two);
  REQUIRE(::write(in[1], "\n", 1) == 1);
  ::close(in[1]);  // then the end of its input: it exits
  while (rec.drain(100) != runtime::Wakeup::target_gone) {
  }
  const runtime::RecordingSummary second = rec.finish();
  ::close(out[0]);
  cmd.wait();
  CHECK(cmd.exit_status() == 0);
  std::vector<std::uint64_t> in_touch;
  for (const auto& [path, summary] : {std::pair{first_path, first}, std::pair{second_path, second}}) {
    CAPTURE(path);
    auto file = record::PerfData::open(path);
    record::Symbolizer symbols;
    std::uint64_t located = 0, count = 0;
    record::for_each_in_time_order(file, [&](const record::Record& r) {
      symbols.apply(r);
      if (auto* s = r.get<record::Sample>()) {
        ++count;
        record::Location where = symbols.locate(s->pid, s->ip, r.misc);
        if (where.dso == PERFSPEC_WORKLOAD && where.symbol && where.symbol->name == "touch_pages") ++located;
      }
    });
    CHECK(count == summary.samples);
    CHECK(summary.bytes == file.data_size());
    in_touch.push_back(located);
  }
  CHECK(in_touch[1] == static_cast<std::uint64_t>(pages));
  CHECK(second.losses.dropped == 0);
}

TEST_CASE("an overwrite recording (--overwrite): the newest samples, then the records of what exists") {
  // The workload (--wait) execs, maps, says "ready", touches its pages on a line of input, says "done"
  // and waits: the file ends then. Its one-page buffer (on the one CPU it may run on) holds the newest
  // faults only, the last pages in order; its exec's side-band is long overwritten, and the records of
  // its process written after the samples (perf's tail synthesis) find them in touch_pages.
  spec::Machine machine("/sys", test::no_libpfm4());
  test::TempTree dir;
  const std::string path = dir.root() + "/perf.data";
  const long pages = 3000, page = ::getpagesize();
  int in[2], out[2];
  REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  cpu_set_t all, one;
  REQUIRE(::sched_getaffinity(0, sizeof all, &all) == 0);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  const int saved_stdin = ::dup(0);
  ::dup2(in[0], 0);                                        // the command's standard input, from its fork on
  REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);  // and its one CPU
  runtime::Command cmd({PERFSPEC_WORKLOAD, "--wait", "touch", std::to_string(pages)}, out[1]);
  REQUIRE(::sched_setaffinity(0, sizeof all, &all) == 0);
  ::dup2(saved_stdin, 0);
  ::close(saved_stdin);
  ::close(in[0]);
  ::close(out[1]);
  runtime::SamplingOptions sampling;
  sampling.period = 1;
  sampling.sample_type = record::sample_ip | record::sample_tid | record::sample_time | record::sample_addr;
  sampling.overwrite = true;
  sampling.pages = 1;
  auto rec = runtime::Recording::open(machine, resolve("page-faults:u", machine),
                                      runtime::Target::command(cmd, true), {.sampling = sampling});
  REQUIRE(rec.sampling());
  CHECK(rec.file_events()[0].attr.write_backward == 1);
  auto file_out = record::PerfDataWriter::create(path, rec.file_events());
  rec.begin(file_out);
  REQUIRE(cmd.start() == 0);
  auto line = [&] {
    std::string said;
    for (char c = 0; c != '\n' && ::read(out[0], &c, 1) == 1;) said += c;
    return said;
  };
  REQUIRE(line() == "ready\n");
  REQUIRE(::write(in[1], "\n", 1) == 1);
  REQUIRE(line() == "done\n");
  CHECK(rec.drain(0) == runtime::Wakeup::timeout);  // nothing read while it runs
  const runtime::RecordingSummary summary = rec.finish();
  ::close(in[1]);
  ::close(out[0]);
  cmd.wait();
  CHECK(cmd.exit_status() == 0);

  // The records in the file's order: the command's name before its exec, the samples, then what exists.
  auto file = record::PerfData::open(path);
  std::vector<std::string> order;  // the kinds, runs of samples as one
  std::uint64_t samples = 0;
  for (record::Record r; file.next(r);) {
    std::string kind;
    if (auto* c = r.get<record::Comm>())
      kind =
          "COMM " + std::string(c->comm) + (c->pid == static_cast<std::uint32_t>(cmd.pid()) ? "" : " other");
    else if (auto* m = r.get<record::Mmap2>())
      kind = m->filename == PERFSPEC_WORKLOAD ? "MMAP2 workload" : "MMAP2";
    else if (r.get<record::Mmap>())
      kind = "MMAP";
    else if (r.get<record::Sample>()) {
      kind = "SAMPLE";
      ++samples;
    } else
      continue;
    if (order.empty() || order.back() != kind) order.push_back(kind);
  }
  REQUIRE(order.size() >= 4);
  CHECK(order[0] == "COMM perf-exec");
  CHECK(order[1] == "SAMPLE");
  CHECK(order[2] == "COMM perfspec_worklo");
  CHECK(std::find(order.begin() + 2, order.end(), "MMAP2 workload") != order.end());
  CHECK(std::find(order.begin() + 2, order.end(), "SAMPLE") == order.end());
  CHECK(samples == summary.samples);
  CHECK(summary.losses.overwritten == 1);
  // The newest faults, one a page, the last pages in order, each found in touch_pages through the
  // mappings written after them.
  record::Symbolizer symbols;
  std::vector<std::uint64_t> addrs;
  std::uint64_t located = 0;
  file.rewind();
  record::for_each_in_time_order(file, [&](const record::Record& r) {
    symbols.apply(r);
    if (auto* smp = r.get<record::Sample>()) {
      record::Location where = symbols.locate(smp->pid, smp->ip, r.misc);
      if (where.dso == PERFSPEC_WORKLOAD && where.symbol && where.symbol->name == "touch_pages") {
        ++located;
        addrs.push_back(smp->addr);
      }
    }
  });
  REQUIRE(addrs.size() > 10);
  CHECK(addrs.size() < static_cast<std::size_t>(pages) / 2);  // a page of records: far fewer than the faults
  CHECK(located + 4 >= samples);  // but a few faults outside touch_pages, after it
  for (std::size_t i = 1; i < addrs.size(); ++i)
    CHECK(addrs[i] == addrs[i - 1] + static_cast<std::uint64_t>(page));
}

TEST_CASE("a recording whose events cannot sample has nothing to begin") {
  // a tracepoint id no kernel has: EINVAL everywhere
  test::TempTree tree;
  tree.write("kernel/tracing/events/fake/gone/id", "999999\n");
  spec::Machine fake(tree.root(), test::no_libpfm4());
  auto rec = runtime::Recording::open(fake, resolve("fake:gone", fake), runtime::Target::self_thread());
  CHECK_FALSE(rec.sampling());
  CHECK_FALSE(rec.opened(0));
  REQUIRE(rec.failures()[0]);
  CHECK(rec.failures()[0]->name == "EINVAL");
  CHECK(rec.file_events().empty());
  test::TempTree dir;
  auto out = record::PerfDataWriter::create(dir.root() + "/perf.data", {});
  try {
    rec.begin(out);
    FAIL("a recording of nothing began");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(e.message() == "no event of the recording samples: nothing to record");
  }
}

TEST_CASE("the records of a process from /proc: each thread's COMM and NAMESPACES, its executable mappings") {
  // A /proc of one process, two threads: the second thread's ns/ lacks three namespaces (zeros then)
  test::TempTree proc;
  proc.write("4242/task/4242/comm", "server\n");
  proc.write("4242/task/4243/comm", "worker thread name\n");  // cut to 15 bytes, as the kernel's
  const char* names[] = {"net", "uts", "ipc", "pid", "user", "mnt", "cgroup"};
  for (const char* n : names) proc.write(std::string("4242/task/4242/ns/") + n, n);
  for (const char* n : {"net", "pid", "user", "mnt"}) proc.write(std::string("4242/task/4243/ns/") + n, n);
  proc.write("4242/maps",
             "55d0c0000000-55d0c0021000 r-xp 00002000 fe:01 1234567 /usr/bin/server\n"
             "55d0c0221000-55d0c0222000 rw-p 00023000 fe:01 1234567 /usr/bin/server\n");
  Attr attr;
  attr.sample_type = record::sample_tid | record::sample_time;
  attr.sample_id_all = 1;
  std::vector<std::byte> bytes;
  CHECK_FALSE(
      runtime::synthesize_process(4242, attr, bytes, proc.root(), std::chrono::milliseconds{500}, true));
  record::Formats formats;
  formats.add(attr);
  std::map<std::uint32_t, std::string> comms;
  std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> spaces;
  std::vector<std::string> order, mappings;
  for (std::size_t at = 0; at + 8 <= bytes.size();) {
    std::uint16_t size = 0;
    std::memcpy(&size, bytes.data() + at + 6, 2);
    REQUIRE(size >= 8);
    record::Record r = formats.decode(std::span<const std::byte>(bytes).subspan(at, size));
    if (auto* c = r.get<record::Comm>()) {
      CHECK(c->pid == 4242);
      comms[c->tid] = std::string(c->comm);
      order.push_back("COMM " + std::to_string(c->tid));
    } else if (auto* n = r.get<record::Namespaces>()) {
      CHECK(n->pid == 4242);
      REQUIRE(n->size() == 7);
      for (std::size_t i = 0; i < n->size(); ++i)
        spaces[n->tid].emplace_back(n->words[2 * i], n->words[2 * i + 1]);
      order.push_back("NAMESPACES " + std::to_string(n->tid));
    } else if (auto* m = r.get<record::Mmap2>()) {
      mappings.push_back(fmt::format("{:#x} {:#x} {:#x} {}", m->addr, m->len, m->pgoff, m->filename));
      order.push_back("MMAP2");
    }
    at += size;
  }
  CHECK(comms == std::map<std::uint32_t, std::string>{{4242, "server"}, {4243, "worker thread n"}});
  // each thread's NAMESPACES right after its COMM, the mappings after all
  REQUIRE(order.size() == 5);
  CHECK(order[0].starts_with("COMM "));
  CHECK(order[1] == "NAMESPACES " + order[0].substr(5));
  CHECK(order[3] == "NAMESPACES " + order[2].substr(5));
  CHECK(order[4] == "MMAP2");
  CHECK(mappings == std::vector<std::string>{"0x55d0c0000000 0x21000 0x2000 /usr/bin/server"});
  // the device and inode stat(2) gives of each namespace's file, in the kernel's order; zeros where none
  for (std::uint32_t tid : {4242u, 4243u}) {
    CAPTURE(tid);
    REQUIRE(spaces[tid].size() == 7);
    for (std::size_t i = 0; i < 7; ++i) {
      struct stat st {};
      const bool there =
          ::stat(fmt::format("{}/4242/task/{}/ns/{}", proc.root(), tid, names[i]).c_str(), &st) == 0;
      CHECK(there == (tid == 4242 || i == 0 || i == 3 || i == 4 || i == 5));
      CHECK(spaces[tid][i] == (there ? std::pair<std::uint64_t, std::uint64_t>{st.st_dev, st.st_ino}
                                     : std::pair<std::uint64_t, std::uint64_t>{0, 0}));
    }
  }
  // without --namespaces: the COMMs and the mapping only
  bytes.clear();
  runtime::synthesize_process(4242, attr, bytes, proc.root());
  std::size_t records = 0;
  for (std::size_t at = 0; at + 8 <= bytes.size(); ++records) {
    std::uint16_t size = 0;
    std::memcpy(&size, bytes.data() + at + 6, 2);
    at += size;
  }
  CHECK(records == 3);
}
