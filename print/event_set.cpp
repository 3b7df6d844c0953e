// SPDX-License-Identifier: MIT
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/print.hpp"
#include "spec/printable.hpp"

namespace perfspec {

namespace {

bool hex_field(std::string_view n) {
  return n.starts_with("config") || n == "sample_type" || n == "read_format" || n == "branch_sample_type" ||
         n.starts_with("sample_regs") || n == "sig_data";
}

// perf prints union members as `{ bp_addr, config1 }`.
std::string label(const AttrField& f) {
  if (f.name == "sample_period") return "{ sample_period, sample_freq }";
  if (f.name == "config1") return "{ bp_addr, config1 }";
  if (f.name == "config2") return "{ bp_len, config2 }";
  if (f.name == "wakeup_events") return "{ wakeup_events, wakeup_watermark }";
  return std::string(f.name);
}

}  // namespace

std::string to_text(const EventSet& set) {
  std::string out;
  const std::string rule(60, '-');
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    const auto& e = set.events[i];
    const auto& g = set.groups[e.group];
    std::string role;
    if (g.braces) {
      role = e.leader == i ? fmt::format("leader of group {} ({} members)", e.group, g.members.size())
                           : fmt::format("member of group {} (leader: event {})", e.group, e.leader);
      if (!g.name.empty()) role += fmt::format(", group name '{}'", spec::printable(g.name));
      if (g.weak && e.leader == i) role += ", weak";
    } else {
      role = "not grouped";
    }
    out += fmt::format("event {}: {}\n  pmu: {}; {}\n", i, spec::printable(e.name), spec::printable(e.pmu),
                       role);
    if (!e.unit.empty() || e.scale != 1.0)
      out += fmt::format("  scale: {}  unit: {}\n", e.scale, spec::printable(e.unit));
    out += rule + "\nperf_event_attr:\n";
    for (const auto& f : attr_fields()) {
      std::uint64_t v = f.get(e.attr);
      if (v == 0 && f.name != "type") continue;  // type 0 (hardware) is still worth seeing
      if (auto names = flag_names(f.name, v); !names.empty())
        out += fmt::format("  {:<32} {}\n", label(f), names);
      else if (f.is_signed)
        out += fmt::format("  {:<32} {}\n", label(f), static_cast<std::int64_t>(v));
      else if (hex_field(f.name))
        out += fmt::format("  {:<32} {:#x}\n", label(f), v);
      else
        out += fmt::format("  {:<32} {}\n", label(f), v);
    }
    out += rule + "\n";
  }
  return out;
}

std::string to_json(const EventSet& set, int indent) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const auto& e : set.events) {
    nlohmann::ordered_json attr = nlohmann::ordered_json::object();
    for (const auto& f : attr_fields()) {
      std::uint64_t v = f.get(e.attr);
      if (f.is_signed)
        attr[std::string(f.name)] = static_cast<std::int64_t>(v);
      else
        attr[std::string(f.name)] = v;
      for (auto alias : f.aliases) attr[std::string(alias)] = v;
    }
    nlohmann::ordered_json j;
    j["name"] = e.name;
    j["pmu"] = e.pmu;
    j["group"] = e.group;
    j["leader"] = e.leader;
    j["scale"] = e.scale;
    j["unit"] = e.unit;
    j["attr"] = std::move(attr);
    events.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["schema"] = resolve_schema;
  root["events"] = std::move(events);
  return root.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string ungrouped_group_text(const runtime::Ungrouped& u) {
  if (!u.first) return {};
  std::string d = fmt::format("{} {{ ", u.group_name.empty() ? "anon group" : u.group_name);
  for (std::size_t k = 0; k < u.group_members.size(); ++k)
    d += fmt::format("{}{}", k ? ", " : "", u.group_members[k]);
  return d + " }";
}

std::string ungroup_warning(const std::vector<runtime::Ungrouped>& taken, bool verbose) {
  std::string out;
  for (const auto& u : taken) {
    if (u.first)
      out += fmt::format(
          "WARNING: grouped events cpus do not match.\nEvents with CPUs not matching the leader will be "
          "removed from the group.\n  {}\n",
          ungrouped_group_text(u));
    if (verbose)
      out += fmt::format("     {}: {}\n     {}: {}\n", u.leader, spec::cpu_list_text(u.leader_cpus), u.member,
                         spec::cpu_list_text(u.member_cpus));
  }
  return out;
}

}  // namespace perfspec
