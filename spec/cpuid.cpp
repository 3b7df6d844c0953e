// SPDX-License-Identifier: MIT
// CPU ids as perf reads them on each architecture, how mapfile.csv rows match them, and the model
// folder a CPU id selects.
#include <regex.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/table_json.hpp"

namespace perfspec::spec {

namespace fs = std::filesystem;
using detail::jevents_number;
using detail::safe_relative_folder;

namespace {

bool is_full_cpuid(std::string_view id) { return std::count(id.begin(), id.end(), '-') == 3; }

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value after `key` on the first cpuinfo line that starts with it: the text after its last space.
std::optional<std::string> last_word_of(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key)) {
      auto sp = line.rfind(' ');
      if (sp == std::string::npos) return std::nullopt;
      return line.substr(sp + 1);
    }
  return std::nullopt;
}

std::string x86_cpuid(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  std::string line, vendor;
  long family = -1, model = -1, stepping = -1;
  while (std::getline(in, line)) {
    if (line.empty()) break;  // the first processor is enough
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(io::trim(std::string_view(line).substr(0, colon)));
    std::string value(io::trim(std::string_view(line).substr(colon + 1)));
    if (key == "vendor_id")
      vendor = value;
    else if (key == "cpu family")
      family = std::strtol(value.c_str(), nullptr, 10);
    else if (key == "model")
      model = std::strtol(value.c_str(), nullptr, 10);
    else if (key == "stepping")
      stepping = std::strtol(value.c_str(), nullptr, 10);
  }
  if (vendor.empty() || family < 0 || model < 0 || stepping < 0) return {};
  return fmt::format("{}-{}-{:X}-{:X}", vendor, family, model, stepping);
}

// powerpc: perf reads the PVR with mfspr; the kernel shows it in cpuinfo as `(pvr 004e 1202)`.
std::string powerpc_cpuid(const std::string& cpuinfo) {
  auto at = cpuinfo.find("(pvr ");
  if (at == std::string::npos) return {};
  unsigned hi = 0, lo = 0;
  if (std::sscanf(cpuinfo.c_str() + at, "(pvr %x %x)", &hi, &lo) != 2) return {};
  return fmt::format("0x{:04x}{:04x}", hi & 0xffff, lo & 0xffff);
}

// s390: Manufacturer, Type and Model of /proc/sysinfo, then the CPU-MF version and authorization of
// /proc/service_levels when both are there (arch/s390/util/header.c).
std::string s390_cpuid(const std::string& sysinfo, const std::optional<std::string>& service_levels) {
  std::string manufacturer, type, model;
  std::istringstream in(sysinfo);
  std::string line;
  auto words = [](std::string_view rest) {
    std::vector<std::string> out;
    std::istringstream w{std::string(rest)};
    std::string word;
    while (w >> word) out.push_back(word);
    return out;
  };
  while (std::getline(in, line)) {
    std::string_view l = line;
    if (l.starts_with("Manufacturer:"))
      for (auto& w : words(l.substr(13))) manufacturer += w;
    if (l.starts_with("Type:"))
      for (auto& w : words(l.substr(5))) type += w;
    if (l.starts_with("Model:")) {
      for (auto& w : words(l.substr(6))) model += (model.empty() ? "" : ",") + w;
      break;
    }
  }
  if (manufacturer.empty() || type.empty() || model.empty()) return {};
  std::string version, authorization;
  if (service_levels) {
    std::istringstream s(*service_levels);
    while (std::getline(s, line)) {
      if (!line.starts_with("CPU-MF:")) continue;
      for (auto& w : words(std::string_view(line).substr(7))) {
        if (w.starts_with("version=")) version += w.substr(8);
        if (w.starts_with("authorization=")) authorization += w.substr(14);
      }
    }
  }
  if (!version.empty() && !authorization.empty())
    return fmt::format("{},{},{},{},{}", manufacturer, type, model, version, authorization);
  return fmt::format("{},{},{}", manufacturer, type, model);
}

}  // namespace

std::string detect_cpuid(const std::string& cpuinfo, const std::string& midr, const std::string& sysinfo,
                         const std::string& service_levels) {
  if (auto text = slurp(cpuinfo)) {
    if (auto id = x86_cpuid(*text); !id.empty()) return id;
    auto vendor = last_word_of(*text, "mvendorid"), arch = last_word_of(*text, "marchid"),
         impl = last_word_of(*text, "mimpid");
    if (vendor && arch && impl) return fmt::format("{}-{}-{}", *vendor, *arch, *impl);
    if (auto id = powerpc_cpuid(*text); !id.empty()) return id;
  }
  if (auto text = slurp(sysinfo))
    if (auto id = s390_cpuid(*text, slurp(service_levels)); !id.empty()) return id;
  // arm64: the MIDR of the first CPU.
  if (auto text = slurp(midr)) {
    std::string id(io::trim(*text));
    if (!id.empty()) return id;
  }
  return {};
}

bool cpuid_matches(std::string_view pattern, std::string_view cpuid) {
  bool full_pattern = is_full_cpuid(pattern), full_id = is_full_cpuid(cpuid);
  if (full_pattern && !full_id) return false;
  // Whatever the regex matches holds its literal start (up to its first special character): a row
  // whose start is nowhere in the id cannot match, and compiling its regex (most of a cold start's
  // table lookup) is skipped.
  std::string_view literal = pattern.substr(0, pattern.find_first_of(".[]()*+?{}|^$\\"));
  if (cpuid.find(literal) == std::string_view::npos) return false;
  std::string p(pattern), id(cpuid);
  regex_t re;
  if (::regcomp(&re, p.c_str(), REG_EXTENDED) != 0) return false;
  regmatch_t m[1];
  bool found = ::regexec(&re, id.c_str(), 1, m, 0) == 0;
  ::regfree(&re);
  if (!found) return false;
  // The match must be as long as the id (perf compares lengths only), or as the id up to its last '-'
  // when the regex has no stepping.
  std::size_t want = !full_pattern && full_id ? id.rfind('-') : id.size();
  return static_cast<std::size_t>(m[0].rm_eo - m[0].rm_so) == want;
}

bool midr_matches(std::string_view map_id, std::string_view midr) {
  auto parse = [](std::string_view s) -> std::optional<std::uint64_t> {
    std::string t(io::trim(s));
    if (t.starts_with("0x") || t.starts_with("0X")) t.erase(0, 2);
    return jevents_number("0x" + t);
  };
  auto m = parse(map_id), id = parse(midr);
  if (!m || !id) return false;
  constexpr std::uint64_t variant = 0xfull << 20, revision = 0xf;
  if ((*m & ~(variant | revision)) != (*id & ~(variant | revision))) return false;
  // Variant and revision compare like r<variant>p<revision>: the CPU must be at least the mapfile's.
  auto version = [&](std::uint64_t v) { return ((v & variant) >> 16) | (v & revision); };
  return version(*id) >= version(*m);
}

TableArch table_arch(std::string_view dir, std::string_view cpuid) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  std::string_view base = dir.substr(dir.rfind('/') == std::string_view::npos ? 0 : dir.rfind('/') + 1);
  static constexpr std::pair<std::string_view, TableArch> named[] = {
      {"x86", TableArch::x86},   {"arm64", TableArch::arm64}, {"powerpc", TableArch::powerpc},
      {"s390", TableArch::s390}, {"riscv", TableArch::riscv},
  };
  for (auto [n, a] : named)
    if (base == n) return a;
  // A copy under another name: the id's shape tells (arm64 prints the MIDR as 0x and 16 hex digits).
  std::string_view id = io::trim(cpuid);
  if (id.size() == 18 && id.starts_with("0x") &&
      id.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos)
    return TableArch::arm64;
  if (id.starts_with("GenuineIntel-") || id.starts_with("AuthenticAMD-") || id.starts_with("HygonGenuine-"))
    return TableArch::x86;
  return TableArch::other;
}

namespace {

struct MapRow {
  std::string cpuid, folder;
  int line = 0;
};

// mapfile.csv as jevents reads it: the first row is a header, rows starting with '#' are comments.
std::vector<MapRow> read_mapfile(const std::string& dir) {
  std::string path = dir + "/mapfile.csv";
  auto text = io::read_small_file(path);
  if (!text) throw Error(ErrorKind::machine, fmt::format("events directory '{}' has no mapfile.csv", dir));
  std::vector<MapRow> rows;
  std::istringstream in(*text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    if (++lineno == 1) continue;
    std::string_view l = io::trim(line);
    if (l.empty() || l.front() == '#') continue;
    std::vector<std::string> fields;
    std::string field;
    std::istringstream ls{std::string(l)};
    while (std::getline(ls, field, ',')) fields.push_back(std::string(io::trim(field)));
    if (fields.size() < 3 || fields[0].empty() || fields[2].empty())
      throw Error(
          ErrorKind::machine,
          fmt::format("'{}' line {}: expected 'cpuid,version,folder,type', got '{}'", path, lineno, l));
    rows.push_back({fields[0], fields[2], lineno});
  }
  return rows;
}

// jevents leaves a mapfile row out of perf when its folder holds no table.
bool holds_tables(const fs::path& folder) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const auto name = e.path().filename().string();
    if (name.ends_with(".json") && name != "metricgroups.json" && e.is_regular_file(ec)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> detail::mapfile_models(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& row : read_mapfile(dir)) {
    if (!safe_relative_folder(row.folder))
      throw Error(ErrorKind::machine,
                  fmt::format("'{}/mapfile.csv' line {}: folder '{}' leaves the events directory", dir,
                              row.line, row.folder));
    if (std::find(out.begin(), out.end(), row.folder) == out.end() &&
        holds_tables(fs::path(dir) / row.folder))
      out.push_back(row.folder);
  }
  return out;
}

std::optional<std::string> find_model(const std::string& dir, const std::string& cpuid) {
  if (cpuid.empty()) return std::nullopt;
  const TableArch arch = table_arch(dir, cpuid);
  for (const auto& row : read_mapfile(dir)) {
    bool match = arch == TableArch::arm64 ? midr_matches(row.cpuid, cpuid) : cpuid_matches(row.cpuid, cpuid);
    if (!match) continue;
    if (!safe_relative_folder(row.folder))
      throw Error(ErrorKind::machine,
                  fmt::format("'{}/mapfile.csv' line {}: folder '{}' leaves the events directory", dir,
                              row.line, row.folder));
    if (holds_tables(fs::path(dir) / row.folder)) return row.folder;
  }
  return std::nullopt;
}

}  // namespace perfspec::spec
