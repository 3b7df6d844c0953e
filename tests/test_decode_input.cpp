// SPDX-License-Identifier: MIT
// decode's reader of perf's -vv text (parse_attr_input, parse_perf_attr_text): perf 6.12's annotated
// forms and perf 6.1's plain ones, read from real captures (tests/fixtures/perf_vv, made by its
// make.sh), each decoded back to the event perf was asked for; and every value the reader cannot read
// as an error at its line and column, never a field left at 0.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "perfspec/perfspec.hpp"
#include "spec/abi.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {

std::string capture(std::string_view name) {
  std::ifstream in(fmt::format("{}/{}.txt", test::fixture("perf_vv"), name), std::ios::binary);
  REQUIRE_MESSAGE(in, name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every attr of a capture decoded on `m`; each answer must resolve back to the attr's encoding, its
// modifiers and its sampling period (what decode promises).
std::vector<std::string> decoded(std::string_view name, const spec::Machine& m) {
  std::vector<std::string> out;
  for (const Attr& a : parse_attr_input(capture(name), m)) {
    Decoded d = decode(a, m);
    INFO(name, ": ", d.event);
    auto set = resolve(d.event, m);
    REQUIRE(set.events.size() == 1);
    const Attr& b = set.events[0].attr;
    CHECK(std::tie(b.type, b.config, b.config1, b.config2, b.config3, b.bp_type) ==
          std::tie(a.type, a.config, a.config1, a.config2, a.config3, a.bp_type));
    CHECK(std::tie(b.exclude_user, b.exclude_kernel, b.exclude_hv, b.exclude_idle, b.exclude_host,
                   b.exclude_guest, b.precise_ip) == std::tie(a.exclude_user, a.exclude_kernel, a.exclude_hv,
                                                              a.exclude_idle, a.exclude_host, a.exclude_guest,
                                                              a.precise_ip));
    // (a table event's name brings its SampleAfterValue, which perf stat drops for counting)
    if (a.type != spec::type_tracepoint && a.type != spec::type_breakpoint && d.how != "table")
      CHECK(std::tie(b.sample_period, b.freq) == std::tie(a.sample_period, a.freq));
    out.push_back(d.event);
  }
  return out;
}

std::string error_on(std::string_view text, const spec::Machine& m) {
  try {
    parse_attr_input(text, m);
  } catch (const Error& e) {
    return e.message();
  }
  return "no error";
}

constexpr std::uint64_t identifier = sample_identifier;
constexpr std::uint64_t total_times = spec::format_total_time_enabled | spec::format_total_time_running;

}  // namespace

TEST_CASE("perf 6.12 -vv: issue 28's page-faults:u is read from its annotated type and config") {
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  // perf-current stat -vv -e page-faults:u true
  auto attrs = parse_attr_input(capture("issue28_page_faults_u"), skx);
  REQUIRE(attrs.size() == 1);
  const Attr& a = attrs[0];
  CHECK(a.type == 1);
  CHECK(a.size == 136);
  CHECK(a.config == 2);
  CHECK(a.sample_type == identifier);
  CHECK(a.read_format == total_times);
  CHECK(test::attr_summary(a) ==
        "type=1 config=0x2 sample_type=0x10000 read_format=0x3 disabled=1 inherit=1 exclude_kernel=1 "
        "exclude_hv=1 enable_on_exec=1 exclude_guest=1");
  CHECK(decode(a, skx).event == "page-faults:uH");  // perf's own default H made explicit
  // The same without a machine to check against
  CHECK(parse_attr_input(capture("issue28_page_faults_u")) == attrs);
}

TEST_CASE("perf 6.12 -vv over intel_skx: each attr decodes to the event perf was asked for") {
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  // perf stat -vv -e 'cycles:u,instructions:k,ref-cycles,...' (make.sh), one block per event: the
  // PERF_TYPE_* and PERF_COUNT_HW_* annotations, the hw cache triple, PMU names of types 4, 11, 12,
  // 13 and 19, configs named by a sysfs alias (bus-cycles, mem-loads, cycles-ct, cas_count_read,
  // tsc, energy-pkg) or by perf's table (lsd.uops, mem_load_retired.l1_miss, offcore_response,
  // unc_c_llc_lookup.any: not checked here, without tables), and none (config=0x300000000003c).
  CHECK(decoded("skx_stat", skx) ==
        std::vector<std::string>{"cycles:uH",
                                 "instructions:k",
                                 "ref-cycles:H",
                                 "L1-dcache-load-misses:H",
                                 "LLC-loads:H",
                                 "dTLB-load-misses:H",
                                 "node-loads:H",
                                 "branch-load-misses:H",
                                 "cpu/bus-cycles/H",            // cpu/event=0x3c,umask=0x1/
                                 "cpu/event=0xa8,umask=0x1/H",  // r1a8
                                 "mem-loads:H",                 // cpu/event=0xcd,umask=1,ldlat=3/
                                 "mem-loads:Hpp",               //
                                 "cpu/event=0xd1,umask=0x8/H",  // mem_load_retired.l1_miss
                                 "cycles-ct:H",                 // cpu/cycles-ct/
                                 "cpu/config=0x300000000003c,event=0x3c/H",
                                 "cpu/event=0xb7,umask=0x1,offcore_rsp=0x10003c0091/H",
                                 "cycles:G",
                                 "instructions:Hppp",
                                 "tsc:H",  // msr/tsc/
                                 "mem:0x1000/8:w:H",
                                 "page-faults:uH",
                                 "task-clock:H",
                                 "uncore_imc_0/cas_count_read/H",
                                 "uncore_cha_0/event=0x34,umask=0x11,filter_state=0x1/H",
                                 "energy-pkg:H"});
  // perf record -vv -e cycles:pp -b -d -W: the sampling fields as names; cycles fails to open here
  // and perf falls back to task-clock
  CHECK(decoded("skx_record", skx) ==
        std::vector<std::string>{"cycles/freq=4000/Hpp", "task-clock/freq=4000/Hpp"});
  auto rec = parse_attr_input(capture("skx_record"), skx);
  REQUIRE(rec.size() == 2);
  for (const Attr& a : rec) {
    CHECK(a.sample_type == (sample_ip | sample_tid | sample_time | sample_addr | sample_period |
                            sample_branch_stack | sample_data_src | sample_weight_struct));
    CHECK(a.read_format == (spec::format_id | spec::format_lost));
    CHECK(a.branch_sample_type == spec::branch_any);
    CHECK(a.sample_period == 4000);
    CHECK(a.freq == 1);
  }
}

TEST_CASE("perf 6.12 -vv over intel_skx with perf's tables: the table events perf named are checked") {
  const std::string events = test::source_dir() + "/../shared/pmu-events/x86";
  if (!std::filesystem::exists(events + "/mapfile.csv")) {
    MESSAGE("no ../shared/pmu-events: skipped");
    return;
  }
  spec::MachineOptions o = test::no_libpfm4();
  o.events_dir = events;
  o.cpuid = "GenuineIntel-6-55-4";
  spec::Machine skx(test::fixture("intel_skx"), o);
  auto names = decoded("skx_stat", skx);
  REQUIRE(names.size() == 25);
  CHECK(names[9] == "lsd.uops:H");
  CHECK(names[12] == "mem_load_retired.l1_miss:H");
  // The same text with lsd.uops's config changed is refused where the annotation stands
  std::string text = capture("skx_stat");
  auto at = text.find("0x1a8 (lsd.uops)");
  REQUIRE(at != std::string::npos);
  text.replace(at, 5, "0x1a9");
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  CHECK(error_on(text, skx) ==
        fmt::format("stdin:{}:42: config 0x1a9 is not 'lsd.uops', which is config 0x1a8 on pmu 'cpu' of this "
                    "machine",
                    line));
  CHECK(test::attr_input_error(text) == "no error");  // without the machine it cannot be told
}

TEST_CASE("perf 6.12 -vv on the machine it ran on: software, tracepoint, breakpoint, msr, sampling fields") {
  // tests/fixtures/perf_vv/vm: the PMU types and the sched_switch id of the machine of the captures
  spec::Machine vm(test::fixture("perf_vv/vm"), test::no_libpfm4());
  // perf stat -vv -e 'task-clock,...,sched:sched_switch,mem:0x1000/8:rw,msr/tsc/': msr fails twice
  // (perf retries without the cloexec flag, then without exclude_guest) and perf opens them all again
  const std::vector<std::string> first{
      "task-clock:H",       "context-switches:k",   "cpu-migrations:H", "minor-faults:H", "major-faults:H",
      "alignment-faults:H", "emulation-faults:H",   "dummy:H",          "bpf-output:H",   "cgroup-switches:H",
      "cpu-clock:uH",       "sched:sched_switch:H", "mem:0x1000/8:rw:H"};
  std::vector<std::string> want = first;
  want.insert(want.end(), {"tsc:H", "tsc:H", "tsc"});
  want.insert(want.end(), first.begin(), first.end());
  want.push_back("tsc");
  CHECK(decoded("vm_stat", vm) == want);

  // perf record -vv: sample_freq, the bit names of sample_type and read_format, perf's own tracking
  // event with `{ wakeup_events, wakeup_watermark } 1` (one space: the label is wider than 32 columns)
  CHECK(decoded("vm_record_data", vm) == std::vector<std::string>{"page-faults/freq=4000/H", "dummy"});
  auto data = parse_attr_input(capture("vm_record_data"), vm);
  REQUIRE(data.size() == 2);
  CHECK(data[0].sample_type ==
        (sample_ip | sample_tid | sample_time | sample_addr | sample_cpu | sample_period | sample_data_src |
         sample_phys_addr | sample_data_page_size | sample_code_page_size | sample_weight_struct));
  CHECK(data[0].read_format == (spec::format_id | spec::format_lost));
  CHECK(data[0].mmap_data == 1);
  CHECK(data[1].config == 9);
  CHECK(data[1].watermark == 1);
  CHECK(data[1].wakeup_events == 1);

  CHECK(decoded("vm_record_regs", vm) == std::vector<std::string>{"task-clock/freq=999/H", "dummy"});
  auto regs = parse_attr_input(capture("vm_record_regs"), vm);
  CHECK(regs[0].sample_type == (sample_ip | sample_tid | sample_time | sample_callchain | sample_period |
                                sample_regs_user | sample_regs_intr));
  CHECK(regs[0].sample_regs_user == 0x180);
  CHECK(regs[0].sample_regs_intr == 0x100);
  CHECK(regs[0].use_clockid == 1);
  CHECK(regs[0].clockid == 1);  // CLOCK_MONOTONIC

  CHECK(decoded("vm_record_branch", vm) == std::vector<std::string>{"page-faults/period=1/H"});
  auto branch = parse_attr_input(capture("vm_record_branch"), vm).at(0);
  CHECK(branch.sample_type ==
        (sample_ip | sample_tid | sample_time | sample_addr | sample_callchain | sample_branch_stack |
         sample_regs_user | sample_stack_user | identifier | sample_data_src));
  CHECK(branch.branch_sample_type == (spec::branch_user | spec::branch_any_call));
  CHECK(branch.sample_regs_user == 0xff0fff);
  CHECK(branch.sample_stack_user == 4096);
  CHECK(branch.exclude_callchain_user == 1);

  auto counters = parse_attr_input(capture("vm_record_counters"), vm).at(0);
  CHECK(counters.sample_type == (sample_ip | sample_tid | sample_time | sample_branch_stack | sample_cgroup));
  CHECK(counters.read_format == (total_times | spec::format_id | spec::format_lost));
  CHECK(counters.branch_sample_type == (spec::branch_any | spec::branch_type_save | spec::branch_hw_index |
                                        spec::branch_priv_save | spec::branch_counters));
  CHECK(std::tie(counters.inherit_stat, counters.context_switch, counters.namespaces, counters.cgroup) ==
        std::make_tuple(1, 1, 1, 1));
}

TEST_CASE("perf 6.1 -vv: plain numbers, type and config left out when 0, the bit names read") {
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  CHECK(decoded("perf61_skx_stat", skx) == std::vector<std::string>{"cycles:uH", "instructions:k",
                                                                    "L1-dcache-load-misses:H", "mem-loads:H",
                                                                    "page-faults:uH", "mem:0x1000/8:w:H"});
  for (const Attr& a : parse_attr_input(capture("perf61_skx_stat"), skx)) {
    CHECK(a.size == 128);
    CHECK(a.sample_type == identifier);
    CHECK(a.read_format == total_times);
  }
  spec::Machine vm(test::fixture("perf_vv/vm"), test::no_libpfm4());
  auto rec = parse_attr_input(capture("perf61_vm_record"), vm).at(0);
  CHECK(rec.sample_type ==
        (sample_ip | sample_tid | sample_time | sample_addr | sample_branch_stack | sample_data_src));
  CHECK(rec.branch_sample_type == (spec::branch_user | spec::branch_any_call));
  CHECK(rec.read_format == (spec::format_id | spec::format_lost));
}

TEST_CASE("perfspec's own resolve --format text reads back to the same attrs") {
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  EventSet set = resolve("{mem-loads:upp,page-faults},mem:0x1000/8:w,cpu/event=0x3c,period=1000/", skx);
  // fields resolve does not set, as perfspec prints them: bit names (TRANSACTION, which perf never
  // names, and an unnamed bit as hex), a negative clockid, config3
  set.events[0].attr.sample_type = sample_ip | sample_tid | sample_transaction | (std::uint64_t{1} << 40);
  set.events[0].attr.read_format = spec::format_group | spec::format_id;
  set.events[1].attr.clockid = -1;
  set.events[1].attr.use_clockid = 1;
  set.events[2].attr.config3 = 0x5;
  set.events[3].attr.branch_sample_type = spec::branch_any | spec::branch_counters;
  set.events[3].attr.wakeup_events = 7;
  const std::string text = to_text(set);
  REQUIRE(text.find("IP|TID|TRANSACTION|0x10000000000") != std::string::npos);
  auto attrs = parse_attr_input(text, skx);
  REQUIRE(attrs.size() == set.events.size());
  for (std::size_t i = 0; i < attrs.size(); ++i) CHECK(attrs[i] == set.events[i].attr);
}

TEST_CASE("an annotation is checked against its number") {
  const auto error_of = test::attr_input_error;
  const std::string block = "perf_event_attr:\n";
  // the enums and the PMUs of fixed type mean the same on every machine
  CHECK(error_of(block + "  type  1 (software)\n  config  0x2 (PERF_COUNT_SW_TASK_CLOCK)\n") ==
        "stdin:3:15: config 0x2 does not match its annotation 'PERF_COUNT_SW_TASK_CLOCK' (0x1)");
  CHECK(error_of(block + "  type  0 (software)\n") ==
        "stdin:2:11: type 0 does not match its annotation 'software' (type 1)");
  CHECK(error_of(block + "  type  5 (PERF_TYPE_RAW)\n") ==
        "stdin:2:11: type 5 does not match its annotation 'PERF_TYPE_RAW' (type 4)");
  CHECK(error_of(block + "  type  1 (cpu)\n") ==
        "stdin:2:11: type 1 is not a PMU 'cpu' can have: perf annotates it 'PERF_TYPE_SOFTWARE'");
  CHECK(
      error_of(block + "  type  4 (cpu)\n  config  0x2 (PERF_COUNT_SW_PAGE_FAULTS)\n") ==
      "stdin:3:15: the annotation 'PERF_COUNT_SW_PAGE_FAULTS' names a software event, but type is 4, not 1");
  CHECK(error_of(block + "  type  0 (PERF_TYPE_HARDWARE)\n  config  0x3 (PERF_COUNT_HW_CACHE_MISSES)\n") ==
        "no error");
  CHECK(error_of(block + "  type  0\n  config  0x4 (PERF_COUNT_HW_CACHE_MISSES)\n") ==
        "stdin:3:15: config 0x4 does not match its annotation 'PERF_COUNT_HW_CACHE_MISSES' (0x3)");
  const std::string l1d_miss =
      "(PERF_COUNT_HW_CACHE_RESULT_MISS | PERF_COUNT_HW_CACHE_OP_READ | PERF_COUNT_HW_CACHE_L1D)";
  CHECK(error_of(block + "  type  3\n  config  0x10001 " + l1d_miss + "\n") ==
        "stdin:3:19: config 0x10001 does not match its annotation '" +
            l1d_miss.substr(1, l1d_miss.size() - 2) + "' (0x10000 in the low 24 bits)");
  CHECK(error_of(block + "  type  0\n  config  0x10000 " + l1d_miss + "\n") ==
        "stdin:3:19: the annotation '" + l1d_miss.substr(1, l1d_miss.size() - 2) +
            "' names a hardware cache event, but type is 0, not 3");
  // a hybrid machine's extended type sits above the bytes perf names
  CHECK(error_of(block + "  type  3\n  config  0x400010000 " + l1d_miss + "\n") == "no error");
  CHECK(error_of(
            block +
            "  type  3\n  config  0x10000 (PERF_COUNT_HW_CACHE_RESULT_MISS | PERF_COUNT_HW_CACHE_L1D)\n") ==
        "stdin:3:19: 'PERF_COUNT_HW_CACHE_RESULT_MISS | PERF_COUNT_HW_CACHE_L1D' is not a hardware cache "
        "event as "
        "perf names it (RESULT | OP | CACHE)");
  CHECK(error_of(block + "  type  1\n  config  0x2 (PERF_COUNT_SW_PAGE_FAULT)\n") ==
        "stdin:3:15: 'PERF_COUNT_SW_PAGE_FAULT' is not a perf_sw_ids perf names");
  CHECK(error_of(block + "  type  0 (PERF_TYPE_HARDWAR)\n") ==
        "stdin:2:11: 'PERF_TYPE_HARDWAR' is not a perf_type_id");
  CHECK(error_of(block + "  type  1\n  config  0x2 (page-faults)\n") ==
        "stdin:3:15: perf names no config of type 1 'page-faults': the annotation does not go with the type");
  CHECK(error_of(block + "  type  2 (tracepoint)\n  config  0x13c (sched_switch)\n") ==
        "stdin:3:17: 'sched_switch' is not a tracepoint name (perf prints SYSTEM:EVENT)");
  CHECK(error_of(block + "  type  4 (cpu)\n  config  0x13c (bus cycles)\n") ==
        "stdin:3:17: 'bus cycles' is not an event name");
  // the order of the lines does not matter: type is known when the block ends
  CHECK(error_of(block + "  config  0x2 (PERF_COUNT_SW_PAGE_FAULTS)\n  type  1 (software)\n") == "no error");

  // with the machine decode runs for: PMU names, alias names and tracepoint ids of that machine
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  CHECK(error_on(block + "  type  13 (uncore_imc_1)\n", skx) ==
        "stdin:2:12: type 13 is pmu 'uncore_imc_0' on this machine, but the text names 'uncore_imc_1'");
  CHECK(error_on(block + "  type  99 (msr)\n", skx) ==
        "stdin:2:12: pmu 'msr' has type 12 on this machine, not 99");
  CHECK(error_on(block + "  type  4 (cpu)\n  config  0x1cc (mem-loads)\n", skx) ==
        "stdin:3:17: config 0x1cc is not 'mem-loads', which is config 0x1cd on pmu 'cpu' of this machine");
  const auto id = skx.tracepoint_id("sched", "sched_switch");
  REQUIRE(id);
  CHECK(
      error_on(block + fmt::format("  type  2 (tracepoint)\n  config  {:#x} (sched:sched_switch)\n", *id + 1),
               skx) == fmt::format("stdin:3:{}: config {:#x} is not tracepoint 'sched:sched_switch', whose "
                                   "id is {:#x} on this machine",
                                   11 + fmt::format("{:#x}", *id + 1).size() + 1, *id + 1, *id));
  // names the machine does not have cannot be checked: a PMU of another machine, a table event
  CHECK(error_on(block + "  type  99 (nosuch_pmu)\n", skx) == "no error");
  CHECK(error_on(block + "  type  4 (cpu)\n  config  0x1a8 (lsd.uops)\n", skx) == "no error");
  CHECK(error_on(block + "  type  2 (tracepoint)\n  config  0x5 (nosuch:event)\n", skx) == "no error");
  // a text made on another machine: msr is type 10 and sched_switch another id there
  CHECK(
      error_on(capture("vm_stat"), skx) ==
      "stdin:155:42: config 0x174 is not tracepoint 'sched:sched_switch', whose id is 0x13c on this machine");
  std::string vm_msr = capture("vm_stat");
  vm_msr =
      vm_msr.substr(vm_msr.find("------------------------------------------------------------\nperf_event_"
                                "attr:\n  type                             10 (msr)"));
  CHECK(error_on(vm_msr, skx) ==
        "stdin:3:39: type 10 is pmu 'intel_pt' on this machine, but the text names 'msr'");
}

TEST_CASE("what the reader cannot read is an error at its line and column, never a 0") {
  const auto error_of = test::attr_input_error;
  const std::string block = "perf_event_attr:\n  type  1\n";
  CHECK(error_of(block + "  config  0x2z\n") ==
        "stdin:3:11: '0x2z' is not a number (the value of 'config': decimal, or hex with 0x)");
  CHECK(error_of(block + "  config  0x\n") ==
        "stdin:3:11: '0x' is not a number (the value of 'config': decimal, or hex with 0x)");
  CHECK(error_of(block + "  config  -1\n") ==
        "stdin:3:11: '-1' is not a number (the value of 'config': decimal, or hex with 0x)");
  CHECK(
      error_of(block + "  config  0x2(PERF_COUNT_SW_PAGE_FAULTS)\n") ==
      "stdin:3:11: '0x2(PERF_COUNT_SW_PAGE_FAULTS)' is not a number (the value of 'config': decimal, or hex "
      "with 0x)");
  CHECK(error_of(block + "  config  0x10000000000000000\n") ==
        "stdin:3:11: '0x10000000000000000' does not fit in 64 bits (the value of 'config')");
  CHECK(error_of(block + "  exclude_user  2\n") ==
        "stdin:3:17: 2 does not fit 'exclude_user' (a 1-bit field)");
  CHECK(error_of(block + "  precise_ip  4\n") == "stdin:3:15: 4 does not fit 'precise_ip' (a 2-bit field)");
  CHECK(error_of(block + "  sample_max_stack  65536\n") ==
        "stdin:3:21: 65536 does not fit 'sample_max_stack' (a 16-bit field)");
  CHECK(error_of(block + "  clockid  2147483648\n") ==
        "stdin:3:12: '2147483648' does not fit 'clockid' (a signed 32-bit field)");
  CHECK(error_of(block + "  clockid  -2147483649\n") ==
        "stdin:3:12: '-2147483649' does not fit 'clockid' (a signed 32-bit field)");
  CHECK(parse_perf_attr_text(block + "  clockid  -2147483648\n").at(0).clockid == INT32_MIN);
  CHECK(error_of(block + "  size  136 bytes\n") ==
        "stdin:3:13: unexpected 'bytes' after the value of 'size'");
  CHECK(error_of(block + "  size  136 (VER8)\n") ==
        "stdin:3:13: unexpected '(VER8)' after the value of 'size'");
  CHECK(error_of("perf_event_attr:\n  type  1 junk\n") ==
        "stdin:2:11: unexpected 'junk' after the value of 'type'");
  CHECK(error_of("perf_event_attr:\n  type  1 (software\n") ==
        "stdin:2:11: the annotation '(software' of 'type' has no closing ')'");
  CHECK(error_of("perf_event_attr:\n  type  1 ()\n") == "stdin:2:11: '()' is not an annotation perf prints");
  CHECK(error_of(block + "  config\n") == "stdin:3:9: 'config' has no value");
  CHECK(error_of(block + "  config:  2\n") == "stdin:3:9: expected a space after 'config', found ':'");
  CHECK(error_of(block + "  frobnicate  1\n") ==
        "stdin:3:3: 'frobnicate' is not a perf_event_attr field perfspec knows (perf 6.1 and 6.12 print none "
        "other than perfspec's; a newer perf's field cannot be left out silently)");
  CHECK(error_of(block + "  aux_start_paused  1\n")
            .starts_with("stdin:3:3: 'aux_start_paused' is not a perf_event_attr field"));
  CHECK(error_of(block + "  = 1\n") == "stdin:3:3: expected an attr field name, found '= 1'");
  CHECK(error_of(block + "  { bp_addr, config }  1\n") ==
        "stdin:3:3: '{ bp_addr, config }' is not one of the union labels perf prints ({ sample_period, "
        "sample_freq }, { wakeup_events, wakeup_watermark }, { bp_addr, config1 }, { bp_len, config2 })");
  CHECK(error_of(block + "  { x  5\n").starts_with("stdin:3:3: '{ x  5' is not one of the union labels"));
  CHECK(error_of(block + "  type  1\n") ==
        "stdin:3:3: 'type' is given twice in this block (first on line 2)");
  CHECK(error_of(block + "  config1  1\n  { bp_addr, config1 }  2\n") ==
        "stdin:4:3: '{ bp_addr, config1 }' (config1) is given twice in this block (first on line 3)");
  CHECK(
      error_of(block + "  sample_type  IP|TIDD\n") ==
      "stdin:3:19: 'TIDD' is not a bit of 'sample_type' (its bits: IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, "
      "CPU, PERIOD, STREAM_ID, RAW, BRANCH_STACK, REGS_USER, STACK_USER, WEIGHT, DATA_SRC, IDENTIFIER, "
      "TRANSACTION, REGS_INTR, PHYS_ADDR, AUX, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, WEIGHT_STRUCT)");
  CHECK(error_of(block + "  sample_type  IP||TID\n") ==
        "stdin:3:19: an empty name in 'IP||TID' ('sample_type')");
  CHECK(error_of(block + "  sample_type  IP|TID|\n") ==
        "stdin:3:23: an empty name in 'IP|TID|' ('sample_type')");
  CHECK(error_of(block + "  read_format  ID|ID\n") == "stdin:3:19: 'ID' is named twice in 'read_format'");
  CHECK(error_of(block + "  read_format  ID | GROUP\n")
            .starts_with("stdin:3:16: 'ID ' is not a bit of 'read_format'"));
  CHECK(error_of(block + "  branch_sample_type  USER|IP\n")
            .starts_with("stdin:3:28: 'IP' is not a bit of 'branch_sample_type' (its bits: USER, KERNEL,"));
  CHECK(error_of(block + "  sample_type  0x10000 IP\n") ==
        "stdin:3:23: unexpected ' IP' after the value of 'sample_type'");
  // a block with nothing in it, and a line that is no field inside a block
  CHECK(error_of("perf_event_attr:\n------------------------------------------------------------\n") ==
        "stdin:1:1: this 'perf_event_attr:' block has no fields");
  CHECK(error_of(block + "sys_perf_event_open: pid 1  cpu -1  group_fd -1  flags 0x8 = 3\n") ==
        "stdin:3:1: 'sys_perf_event_open' is not a perf_event_attr field perfspec knows (perf 6.1 and 6.12 "
        "print "
        "none other than perfspec's; a newer perf's field cannot be left out silently)");
  // CRLF line ends and blank lines in a block are fine; the rule ends it; text outside is skipped
  auto ok = parse_perf_attr_text(
      "noise\r\nperf_event_attr:\r\n  type  1 (software)\r\n\r\n  config  0x2 "
      "(PERF_COUNT_SW_PAGE_FAULTS)\r\n---\r\n  not a field\r\n");
  REQUIRE(ok.size() == 1);
  CHECK(std::tie(ok[0].type, ok[0].config) == std::make_tuple(1U, std::uint64_t{2}));
}

TEST_CASE(
    "decode's JSON input: a value that does not fit its field, or a field's names that disagree, are "
    "errors") {
  const auto error_of = test::attr_input_error;
  CHECK(error_of(R"([{"type":1,"config":2,"exclude_user":2}])") ==
        "stdin: event 0: attr field 'exclude_user' is 2, which does not fit a 1-bit field");
  CHECK(error_of(R"([{"type":-1}])") ==
        "stdin: event 0: attr field 'type' is -1, which does not fit a 32-bit field");
  CHECK(error_of(R"([{"type":4294967296}])") ==
        "stdin: event 0: attr field 'type' is 4294967296, which does not fit a 32-bit field");
  CHECK(error_of(R"([{"clockid":2147483648}])") ==
        "stdin: event 0: attr field 'clockid' is 2147483648, which does not fit a signed 32-bit field");
  CHECK(error_of(R"([{"type":5,"config1":4096,"bp_addr":8192}])") ==
        "stdin: event 0: 'config1' and 'bp_addr' are one attr field, given different values");
  // an alias alone is read (it was left out before), a negative clockid is a clockid
  auto attrs = parse_attr_input(R"([{"type":5,"bp_addr":4096,"bp_len":8,"bp_type":2,"clockid":-1}])");
  REQUIRE(attrs.size() == 1);
  CHECK(std::tie(attrs[0].config1, attrs[0].config2, attrs[0].clockid) ==
        std::make_tuple(std::uint64_t{4096}, std::uint64_t{8}, -1));
  // resolve's own document, every field under every name, reads back exactly
  spec::Machine skx(test::fixture("intel_skx"), test::no_libpfm4());
  EventSet set = resolve("mem:0x1000/8:w,mem-loads:upp", skx);
  set.events[0].attr.clockid = -1;
  auto back = parse_attr_input(to_json(set));
  REQUIRE(back.size() == 2);
  CHECK(back[0] == set.events[0].attr);
  CHECK(back[1] == set.events[1].attr);
}

TEST_CASE("the reader's messages quote at most 100 bytes of a line") {
  const std::string huge(1 << 20, 'x');
  const std::string msg = test::attr_input_error("perf_event_attr:\n  type  1\n  config  " + huge + "\n");
  CHECK(msg == "stdin:3:11: '" + std::string(100, 'x') +
                   "...' is not a number (the value of 'config': decimal, or "
                   "hex with 0x)");
  CHECK(test::attr_input_error("perf_event_attr:\n  type  1\n  sample_type  IP|0x100 |TID\n") ==
        "stdin:3:24: unexpected ' ' in the value of 'sample_type'");
}
