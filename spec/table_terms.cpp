// SPDX-License-Identifier: MIT
// How perf's jevents.py (Linux 6.12) turns a table entry's Unit into a PMU name and its fields into
// the terms of an event string, and how a table's PMU name matches the PMUs of a machine.
#include <algorithm>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/table_json.hpp"

namespace perfspec::spec {

using detail::jevents_number;

namespace {

// jevents' llx(): `%#llx`, but single digits in decimal.
std::string llx(std::uint64_t v) { return v < 10 ? fmt::format("{}", v) : fmt::format("{:#x}", v); }

}  // namespace

// ------------------------------------------------------------------------------------- PMU names

std::string table_unit_pmu(std::string_view unit) {
  // perf's jevents names these PMUs explicitly; every other unit is `uncore_<unit>` in lower case.
  static constexpr std::pair<std::string_view, std::string_view> named[] = {
      {"CBO", "uncore_cbox"},
      {"QPI LL", "uncore_qpi"},
      {"SBO", "uncore_sbox"},
      {"iMPH-U", "uncore_arb"},
      {"CPU-M-CF", "cpum_cf"},
      {"CPU-M-SF", "cpum_sf"},
      {"PAI-CRYPTO", "pai_crypto"},
      {"PAI-EXT", "pai_ext"},
      {"UPI LL", "uncore_upi"},
      {"hisi_sicl,cpa", "hisi_sicl,cpa"},
      {"hisi_sccl,ddrc", "hisi_sccl,ddrc"},
      {"hisi_sccl,hha", "hisi_sccl,hha"},
      {"hisi_sccl,l3c", "hisi_sccl,l3c"},
      {"imx8_ddr", "imx8_ddr"},
      {"imx9_ddr", "imx9_ddr"},
      {"L3PMC", "amd_l3"},
      {"DFPMC", "amd_df"},
      {"UMCPMC", "amd_umc"},
      {"cpu_core", "cpu_core"},
      {"cpu_atom", "cpu_atom"},
      {"ali_drw", "ali_drw"},
      {"arm_cmn", "arm_cmn"},
  };
  if (unit.empty()) return {};
  for (const auto& [u, pmu] : named)
    if (u == unit) return std::string(pmu);
  return "uncore_" + ascii_lowered(unit);
}

namespace {

bool is_xdigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// perf's perf_pmu__match_ignoring_suffix (pmu.c): `name` is `tok` followed by nothing, or by an optional
// `_` and an instance number: decimal of any length, or hex of more than two digits (so that s390's
// `cpum_cf` is not `cpum` with instance `cf`).
bool matches_ignoring_suffix(std::string_view name, std::string_view tok) {
  if (!name.starts_with(tok)) return false;
  std::string_view suffix = name.substr(tok.size());
  if (suffix.empty()) return true;
  if (suffix.front() == '_') suffix.remove_prefix(1);
  if (suffix.empty()) return false;
  bool hex = false;
  for (char c : suffix) {
    if (!is_xdigit(c)) return false;
    hex = hex || !(c >= '0' && c <= '9');
  }
  return !hex || suffix.size() > 2;
}

}  // namespace

bool table_pmu_matches(std::string_view table_pmu, std::string_view pmu_name) {
  if (table_pmu.find(',') == std::string_view::npos) return matches_ignoring_suffix(pmu_name, table_pmu);
  // `hisi_sccl,ddrc` names `hisi_sccl1_ddrc0`: each part is found in order within the name, and the
  // last one ends it but for an instance suffix (pmu_uncore_alias_match).
  std::vector<std::string_view> toks;
  for (std::size_t b = 0; b <= table_pmu.size();) {
    std::size_t e = table_pmu.find(',', b);
    if (e == std::string_view::npos) e = table_pmu.size();
    if (e > b) toks.push_back(table_pmu.substr(b, e - b));
    b = e + 1;
  }
  std::string_view name = pmu_name;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    auto at = name.find(toks[i]);
    if (at == std::string_view::npos) return false;
    name = name.substr(at);
    if (i + 1 == toks.size()) return matches_ignoring_suffix(name, toks[i]);
    // perf steps over as many characters as the next part has (not this one's): kept, for the same answers.
    name = name.substr(std::min(name.size(), toks[i + 1].size()));
  }
  return false;
}

// ------------------------------------------------------------------------------------ terms

std::string table_terms(const TableFields& f) {
  auto need = [](std::string_view what, std::string_view text) {
    auto v = jevents_number(text);
    if (!v) throw Error(ErrorKind::machine, fmt::format("{} '{}' is not a number", what, text));
    return *v;
  };
  std::string terms;
  if (!f.config_code.empty()) {
    terms = "config=" + llx(need("ConfigCode", f.config_code));
  } else if (!f.eventid_code.empty()) {
    terms = "eventid=" + llx(need("EventidCode", f.eventid_code));
  } else {
    // "0xB7, 0xBB": events that need either of two codes take the first, as perf does.
    std::string_view code = f.event_code;
    code = code.substr(0, code.find(','));
    std::uint64_t event = f.event_code.empty() ? 0 : need("EventCode", code);
    if (!f.ext_sel.empty()) {
      auto sel = io::trim(f.ext_sel);
      if (sel.find_first_not_of("0123456789") != std::string_view::npos || sel.empty())
        throw Error(ErrorKind::machine, fmt::format("ExtSel '{}' is not a decimal number", f.ext_sel));
      event |= need("ExtSel", sel) << 8;
    }
    terms = "event=" + llx(event);
  }
  // jevents' order; zero fields are left out, hex values print as llx(), decimal ones as decimal.
  const std::pair<const std::string*, std::string_view> fields[] = {
      {&f.any_thread, "any"},
      {&f.port_mask, "ch_mask"},
      {&f.counter_mask, "cmask"},
      {&f.edge_detect, "edge"},
      {&f.fc_mask, "fc_mask"},
      {&f.invert, "inv"},
      {&f.sample_after_value, "period"},
      {&f.umask, "umask"},
      {&f.node_type, "type"},
      {&f.rdwr_mask, "rdwrmask"},
      {&f.en_all_cores, "enallcores"},
      {&f.en_all_slices, "enallslices"},
      {&f.slice_id, "sliceid"},
      {&f.thread_mask, "threadmask"},
  };
  static constexpr std::string_view json_names[] = {
      "AnyThread", "PortMask", "CounterMask", "EdgeDetect", "FCMask",      "Invert",  "SampleAfterValue",
      "UMask",     "NodeType", "RdWrMask",    "EnAllCores", "EnAllSlices", "SliceId", "ThreadMask"};
  for (std::size_t i = 0; i < std::size(fields); ++i) {
    const std::string& value = *fields[i].first;
    if (value.empty()) continue;
    std::uint64_t v = need(json_names[i], value);
    if (v == 0) continue;
    std::string_view t = io::trim(value);
    bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
    terms += fmt::format(",{}={}", fields[i].second, hex ? llx(v) : fmt::format("{}", v));
  }
  if (!f.filter.empty()) terms += "," + std::string(io::trim(f.filter));
  if (!f.msr_index.empty()) {
    std::string_view first = f.msr_index;
    first = io::trim(first.substr(0, first.find(',')));
    std::uint64_t index = need("MSRIndex", first);
    const char* term = index == 0x3F6                     ? "ldlat"
                       : index == 0x1A6 || index == 0x1A7 ? "offcore_rsp"
                       : index == 0x3F7                   ? "frontend"
                                                          : nullptr;
    if (!term)
      throw Error(
          ErrorKind::machine,
          fmt::format("MSRIndex '{}' is not one perf knows (0x3F6, 0x1A6, 0x1A7, 0x3F7)", f.msr_index));
    // perf writes `ldlat=None` here, which no PMU accepts: the entry is left out instead.
    if (f.msr_value.empty())
      throw Error(ErrorKind::machine, fmt::format("MSRIndex '{}' without an MSRValue", f.msr_index));
    need("MSRValue", f.msr_value);
    terms += fmt::format(",{}={}", term, io::trim(f.msr_value));
  }
  return terms;
}

}  // namespace perfspec::spec
