// SPDX-License-Identifier: MIT
// perf's probe cache (`perf buildid-cache --add` stores a binary's SDT notes there, `perf probe
// --cache` its probes): the events `perf list sdt` lists from it (print-events.c's print_sdt_events).
#include <dirent.h>
#include <libelf.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perfspec/symbols.hpp"
#include "record/elf_files.hpp"

namespace perfspec::record {
namespace {

bool all_hex(std::string_view s) {
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The names in `dir` that `keep` keeps, sorted (perf's lsdir: a strlist, sorted and unique).
template <typename Keep> std::set<std::string> names_in(const std::string& dir, Keep keep) {
  std::set<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d))
    if (keep(std::string_view(e->d_name))) out.insert(e->d_name);
  ::closedir(d);
  return out;
}

// build_id_cache__origname: the path of the binary a build id's link names ("../..PATH/ID"; a
// kernel's "../../[kernel.kallsyms]/ID"), nullopt for a link that names none.
std::optional<std::string> origname(const std::string& link) {
  char buf[4096];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  std::string target(buf, static_cast<std::size_t>(n));
  const std::size_t slash = target.rfind('/');
  constexpr std::size_t skip = 5;  // "../.."
  if (slash == std::string::npos || slash <= skip) return std::nullopt;
  target.resize(slash);
  return target.substr(target.size() > skip + 1 && target[skip + 1] == '[' ? skip + 1 : skip);
}

// build_id_cache__valid_id: the binary is still there with that build (the kernel: the running one)
bool valid(const std::string& build_id, const std::string& path) {
  if (path == "[kernel.kallsyms]") return detail::notes_build_id("/sys/kernel/notes") == build_id;
  (void)elf_version(EV_CURRENT);
  return !path.empty() && path[0] == '/' && detail::file_build_id(path) == build_id;
}

bool c_name(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// GROUP:EVENT of a cache entry's perf probe command (`sdt_libc:setjmp=setjmp`, `probe:f=f`), perf's
// "(null)" for a part it has none of; nullopt where perf's parse_perf_probe_command fails, which makes
// perf skip the binary's whole cache.
std::optional<std::string> entry_name(std::string_view command) {
  command = command.substr(0, command.find_first_of(" \t"));
  std::size_t at = 0;
  while (at < command.size() && std::string_view(";=@+%").find(command[at]) == std::string_view::npos)
    at += command[at] == '\\' ? 2 : 1;
  if (at >= command.size() || command[at] != '=') return "(null):(null)";  // an event perf names later
  std::string_view name = command.substr(0, at), group = "(null)";
  if (const std::size_t colon = name.find(':'); colon != std::string_view::npos) {
    group = name.substr(0, colon);
    name = name.substr(colon + 1);
    if (!c_name(group)) return std::nullopt;
  }
  if (!c_name(name)) return std::nullopt;
  return fmt::format("{}:{}", group, name);
}

// probe_cache__load: the entries of a binary's probes file (`%` an SDT note's, `#` a perf probe's,
// each followed by its trace_probe lines); nullopt when one cannot be read, or there is no file.
std::optional<std::vector<std::string>> cache_entries(const std::string& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::vector<std::string> names;
  std::string line;
  bool entry = false;
  while (std::getline(in, line)) {
    if (!line.empty() && (line[0] == '%' || line[0] == '#')) {
      auto name = entry_name(std::string_view(line).substr(1));
      if (!name) return std::nullopt;
      names.push_back(std::move(*name));
      entry = true;
    } else if (!entry) {
      return std::nullopt;  // a probe line before any entry
    }
  }
  return names;
}

}  // namespace

std::optional<std::string> buildid_dir() {
  if (const char* dir = std::getenv("PERF_BUILDID_DIR"); dir && *dir) return std::string(dir);
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.debug";
  return std::nullopt;
}

std::vector<std::string> cached_probe_events() {
  const auto dir = buildid_dir();
  if (!dir) return {};
  const std::string top = *dir + "/.build-id/";
  // every "GROUP:EVENT@BUILDID", sorted and unique as perf's strlist
  std::set<std::string> all;
  for (const std::string& head :
       names_in(top, [](std::string_view n) { return n.size() == 2 && all_hex(n); }))
    for (const std::string& tail : names_in(top + head, [](std::string_view n) {
           std::size_t i = 0;
           while (i < n.size() && i < 38 && std::isxdigit(static_cast<unsigned char>(n[i]))) ++i;
           return i >= 30 && i == n.size();  // SBUILD_ID_MIN_SIZE - 3 .. SBUILD_ID_SIZE - 3 digits
         })) {
      const std::string id = head + tail, link = top + head + "/" + tail;
      const auto path = origname(link);
      if (!path || !valid(id, *path)) continue;
      // the probes file is created by perf for every binary it caches (empty when it has no notes)
      if (const auto entries = cache_entries(link + "/probes"))
        for (const std::string& name : *entries) all.insert(name + "@" + id);
    }
  // a name cached for one binary alone is listed bare, one of several with each binary's path and id
  std::vector<std::string> out;
  std::string last;
  for (auto it = all.begin(); it != all.end(); ++it) {
    const std::size_t at = it->rfind('@');
    const std::string name = it->substr(0, at), id = it->substr(at + 1);
    bool detail = name == last;
    if (!detail && std::next(it) != all.end())
      detail = std::next(it)->substr(0, std::next(it)->rfind('@')) == name;
    last = name;
    const auto path = detail ? origname(top + id.substr(0, 2) + "/" + id.substr(2)) : std::nullopt;
    out.push_back(path ? fmt::format("{}@{}({})", name, *path, id.substr(0, 12)) : name);
  }
  return out;
}

}  // namespace perfspec::record
