// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "perfspec/attr.hpp"

using perfspec::Attr;

TEST_CASE("the field table lists every perf_event_attr field of the newest man page plus config3") {
  std::vector<std::string> names;
  for (const auto& f : perfspec::attr_fields()) names.emplace_back(f.name);
  const std::vector<std::string> expected = {"type",
                                             "size",
                                             "config",
                                             "sample_period",
                                             "sample_type",
                                             "read_format",
                                             "disabled",
                                             "inherit",
                                             "pinned",
                                             "exclusive",
                                             "exclude_user",
                                             "exclude_kernel",
                                             "exclude_hv",
                                             "exclude_idle",
                                             "mmap",
                                             "comm",
                                             "freq",
                                             "inherit_stat",
                                             "enable_on_exec",
                                             "task",
                                             "watermark",
                                             "precise_ip",
                                             "mmap_data",
                                             "sample_id_all",
                                             "exclude_host",
                                             "exclude_guest",
                                             "exclude_callchain_kernel",
                                             "exclude_callchain_user",
                                             "mmap2",
                                             "comm_exec",
                                             "use_clockid",
                                             "context_switch",
                                             "write_backward",
                                             "namespaces",
                                             "ksymbol",
                                             "bpf_event",
                                             "aux_output",
                                             "cgroup",
                                             "text_poke",
                                             "build_id",
                                             "inherit_thread",
                                             "remove_on_exec",
                                             "sigtrap",
                                             "wakeup_events",
                                             "bp_type",
                                             "config1",
                                             "config2",
                                             "branch_sample_type",
                                             "sample_regs_user",
                                             "sample_stack_user",
                                             "clockid",
                                             "sample_regs_intr",
                                             "aux_watermark",
                                             "sample_max_stack",
                                             "aux_sample_size",
                                             "sig_data",
                                             "config3"};
  CHECK(names == expected);
}

TEST_CASE("union members are found under every name") {
  CHECK(perfspec::find_attr_field("bp_addr")->name == "config1");
  CHECK(perfspec::find_attr_field("kprobe_func")->name == "config1");
  CHECK(perfspec::find_attr_field("uprobe_path")->name == "config1");
  CHECK(perfspec::find_attr_field("bp_len")->name == "config2");
  CHECK(perfspec::find_attr_field("probe_offset")->name == "config2");
  CHECK(perfspec::find_attr_field("sample_freq")->name == "sample_period");
  CHECK(perfspec::find_attr_field("wakeup_watermark")->name == "wakeup_events");
  CHECK(perfspec::find_attr_field("config3")->bits == 64);
  CHECK(perfspec::find_attr_field("nonsense") == nullptr);
}

TEST_CASE("setters truncate to the field width; clockid is signed") {
  Attr a;
  perfspec::find_attr_field("precise_ip")->set(a, 7);
  CHECK(a.precise_ip == 3);
  perfspec::find_attr_field("exclude_kernel")->set(a, 2);
  CHECK(a.exclude_kernel == 0);
  perfspec::find_attr_field("sample_max_stack")->set(a, 0x12345);
  CHECK(a.sample_max_stack == 0x2345);
  perfspec::find_attr_field("type")->set(a, 0x1'0000'0004);
  CHECK(a.type == 4);
  const auto* clockid = perfspec::find_attr_field("clockid");
  clockid->set(a, static_cast<std::uint64_t>(-1));
  CHECK(a.clockid == -1);
  CHECK(static_cast<std::int64_t>(clockid->get(a)) == -1);
  CHECK(clockid->is_signed);
}

TEST_CASE("flag fields are one bit, precise_ip two") {
  std::set<std::string_view> flags;
  for (const auto& f : perfspec::attr_fields())
    if (f.bits == 1) flags.insert(f.name);
  CHECK(flags.size() == 36);
  CHECK(perfspec::find_attr_field("precise_ip")->bits == 2);
}

TEST_CASE("sample_type and read_format print as perf names them") {
  CHECK(perfspec::flag_names("sample_type", 0x102) == "TID|PERIOD");
  CHECK(perfspec::flag_names("sample_type", (1u << 16) | (1ull << 40)) == "IDENTIFIER|0x10000000000");
  CHECK(perfspec::flag_names("read_format", 0xf) == "TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP");
  CHECK(perfspec::flag_names("read_format", 0) == "");
  CHECK(perfspec::flag_names("config", 5) == "");
  CHECK(perfspec::flag_names("branch_sample_type", 0x11) == "USER|ANY_CALL");  // perf 6.12's -vv
  CHECK(perfspec::flag_names("branch_sample_type", (1u << 19) | (1u << 20)) == "COUNTERS|0x100000");
}
