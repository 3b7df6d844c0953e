// SPDX-License-Identifier: MIT
// The records perf synthesizes for what existed before recording began (perf's synthetic-events.c
// does the same from the same files): the kernel's text mapping, and a process's threads and
// executable mappings.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "perfspec/record.hpp"
#include "perfspec/sampling.hpp"

namespace perfspec::runtime {

namespace {

// A record: header, `body`, then the zeroed trailer; the size a multiple of 8 (strings padded with NULs).
void put_record(std::vector<std::byte>& out, record::Type type, std::uint16_t misc,
                const std::vector<std::byte>& body, std::size_t trailer) {
  std::size_t size = 8 + (body.size() + 7) / 8 * 8 + trailer;
  if (size > 0xffff) return;  // a path too long for a record (perf truncates; this leaves it out)
  std::size_t at = out.size();
  out.resize(at + size);
  std::uint32_t t = static_cast<std::uint32_t>(type);
  std::uint16_t sz = static_cast<std::uint16_t>(size);
  std::memcpy(out.data() + at, &t, 4);
  std::memcpy(out.data() + at + 4, &misc, 2);
  std::memcpy(out.data() + at + 6, &sz, 2);
  std::memcpy(out.data() + at + 8, body.data(), body.size());
  std::memset(out.data() + at + 8 + body.size(), 0, size - 8 - body.size());
}

template <typename T> void put(std::vector<std::byte>& b, T v) {
  auto at = b.size();
  b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}
void put_cstring(std::vector<std::byte>& b, std::string_view s) {
  auto at = b.size();
  b.resize(at + s.size() + 1);
  std::memcpy(b.data() + at, s.data(), s.size());
  b.back() = std::byte{0};
}

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// A thread's COMM record; none for an empty name (the thread is gone): false then.
bool put_comm(std::vector<std::byte>& out, int pid, int tid, const std::string& comm, std::size_t trailer) {
  if (comm.empty()) return false;
  std::vector<std::byte> body;
  put<std::uint32_t>(body, static_cast<std::uint32_t>(pid));
  put<std::uint32_t>(body, static_cast<std::uint32_t>(tid));
  put_cstring(body, std::string_view(comm).substr(0, 15));
  put_record(out, record::Type::comm, 0, body, trailer);
  return true;
}

// A thread's NAMESPACES record: the device and inode of each of its namespaces (`task`/ns/NAME), in
// the kernel's order, zeros for one that cannot be read, as perf synthesizes them.
void put_namespaces(std::vector<std::byte>& out, int pid, int tid, const std::string& task,
                    std::size_t trailer) {
  static constexpr const char* names[] = {"net",  "uts", "ipc",   "pid",
                                          "user", "mnt", "cgroup"};  // NR_NAMESPACES
  std::vector<std::byte> body;
  put<std::uint32_t>(body, static_cast<std::uint32_t>(pid));
  put<std::uint32_t>(body, static_cast<std::uint32_t>(tid));
  put<std::uint64_t>(body, std::size(names));
  for (const char* name : names) {
    struct stat st {};
    const bool ok = ::stat((task + "/ns/" + name).c_str(), &st) == 0;
    put<std::uint64_t>(body, ok ? st.st_dev : 0);
    put<std::uint64_t>(body, ok ? st.st_ino : 0);
  }
  put_record(out, record::Type::namespaces, 0, body, trailer);
}

}  // namespace

void synthesize_kernel(const Attr& attr, std::vector<std::byte>& out, const std::string& proc) {
  std::ifstream f(proc + "/kallsyms");
  std::string line;
  std::uint64_t text = 0, etext = 0;
  while (std::getline(f, line) && (!text || !etext)) {
    auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    std::string_view name = std::string_view(line).substr(sp + 1);
    if (name != "_text" && name != "_etext") continue;
    std::uint64_t addr = std::strtoull(line.c_str(), nullptr, 16);
    (name == "_text" ? text : etext) = addr;
  }
  if (!text || etext <= text) return;  // hidden (kptr_restrict) or unreadable: perf then has none either
  std::vector<std::byte> body;
  put<std::uint32_t>(body, static_cast<std::uint32_t>(-1));  // pid -1: the kernel
  put<std::uint32_t>(body, 0);
  put<std::uint64_t>(body, text);
  put<std::uint64_t>(body, etext - text);
  put<std::uint64_t>(body, text);  // pgoff: the start, as perf writes it for the kernel map
  put_cstring(body, "[kernel.kallsyms]_text");
  put_record(out, record::Type::mmap, record::misc_kernel, body, record::sample_id_size(attr));
}

bool synthesize_process(int pid, const Attr& attr, std::vector<std::byte>& out, const std::string& proc,
                        std::chrono::milliseconds map_timeout, bool namespaces) {
  const std::size_t trailer = record::sample_id_size(attr);
  std::string dir = proc + "/" + std::to_string(pid);
  // a COMM for every thread
  if (DIR* d = ::opendir((dir + "/task").c_str())) {
    while (dirent* e = ::readdir(d)) {
      char* end = nullptr;
      long tid = std::strtol(e->d_name, &end, 10);
      if (*end || tid <= 0) continue;
      const std::string task = dir + "/task/" + e->d_name;
      if (put_comm(out, pid, static_cast<int>(tid), first_line(task + "/comm"), trailer) && namespaces)
        put_namespaces(out, pid, static_cast<int>(tid), task, trailer);
    }
    ::closedir(d);
  }
  // an MMAP2 for every executable mapping: start-end perms offset maj:min inode path
  std::ifstream maps(dir + "/maps");
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + map_timeout;
  std::size_t last = out.size();  // where the last MMAP2 starts (none yet: out's end)
  while (std::getline(maps, line)) {
    if (last < out.size() && std::chrono::steady_clock::now() > deadline) {
      constexpr std::uint16_t proc_map_parse_timeout = 1u << 12;  // PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT
      std::uint16_t misc = 0;
      std::memcpy(&misc, out.data() + last + 4, 2);
      misc |= proc_map_parse_timeout;
      std::memcpy(out.data() + last + 4, &misc, 2);
      return true;
    }
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode_s, path;
    if (!(in >> range >> perms >> offset >> dev >> inode_s)) continue;
    std::getline(in >> std::ws, path);
    if (perms.size() < 4 || perms[2] != 'x') continue;
    auto dash = range.find('-');
    auto colon = dev.find(':');
    if (dash == std::string::npos || colon == std::string::npos) continue;
    std::uint64_t start = std::strtoull(range.c_str(), nullptr, 16);
    std::uint64_t end = std::strtoull(range.c_str() + dash + 1, nullptr, 16);
    if (path.empty()) path = "//anon";
    std::vector<std::byte> body;
    put<std::uint32_t>(body, static_cast<std::uint32_t>(pid));
    put<std::uint32_t>(body, static_cast<std::uint32_t>(pid));
    put<std::uint64_t>(body, start);
    put<std::uint64_t>(body, end - start);
    put<std::uint64_t>(body, std::strtoull(offset.c_str(), nullptr, 16));
    put<std::uint32_t>(body, static_cast<std::uint32_t>(std::strtoul(dev.c_str(), nullptr, 16)));
    put<std::uint32_t>(body, static_cast<std::uint32_t>(std::strtoul(dev.c_str() + colon + 1, nullptr, 16)));
    put<std::uint64_t>(body, std::strtoull(inode_s.c_str(), nullptr, 10));
    put<std::uint64_t>(body, 0);  // ino_generation: not in maps
    std::uint32_t prot =
        (perms[0] == 'r' ? 1u : 0u) | (perms[1] == 'w' ? 2u : 0u) | (perms[2] == 'x' ? 4u : 0u);
    put<std::uint32_t>(body, prot);
    put<std::uint32_t>(body, perms[3] == 's' ? 1u : 2u);  // MAP_SHARED : MAP_PRIVATE
    put_cstring(body, path);
    last = out.size();
    put_record(out, record::Type::mmap2, record::misc_user, body, trailer);
  }
  return false;
}

void synthesize_comm(int pid, const Attr& attr, std::vector<std::byte>& out, const std::string& proc,
                     bool namespaces) {
  const std::string dir = proc + "/" + std::to_string(pid);
  const std::size_t trailer = record::sample_id_size(attr);
  if (put_comm(out, pid, pid, first_line(dir + "/comm"), trailer) && namespaces)
    put_namespaces(out, pid, pid, dir, trailer);
}

namespace {

// The cgroup at `path` and those below it, depth first: `name` is its path below the mount ("/" for
// the mount itself). Its id is the kernel's file handle of the folder (8 bytes on kernfs).
void cgroup_tree(const std::string& path, const std::string& name, std::size_t trailer,
                 std::vector<std::byte>& out, int depth) {
  std::uint64_t id = 0;
  alignas(file_handle) unsigned char buffer[sizeof(file_handle) + sizeof id] = {};
  auto* handle = reinterpret_cast<file_handle*>(buffer);
  handle->handle_bytes = sizeof id;
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, path.c_str(), handle, &mount_id, 0) != 0 ||
      handle->handle_bytes != sizeof id)
    return;
  std::memcpy(&id, buffer + sizeof(file_handle), sizeof id);
  std::vector<std::byte> body;
  put<std::uint64_t>(body, id);
  put_cstring(body, name);
  put_record(out, record::Type::cgroup, 0, body, trailer);
  if (depth >= 64) return;  // deeper than any cgroup tree: a loop of bind mounts
  DIR* d = ::opendir(path.c_str());
  if (!d) return;
  std::vector<std::string> children;
  while (dirent* e = ::readdir(d))
    if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      children.emplace_back(e->d_name);
  ::closedir(d);
  for (const auto& c : children)
    cgroup_tree(path + "/" + c, (name == "/" ? "" : name) + "/" + c, trailer, out, depth + 1);
}

}  // namespace

void synthesize_cgroups(const Attr& attr, std::vector<std::byte>& out, const std::string& root) {
  if (root.empty()) return;
  cgroup_tree(root, "/", record::sample_id_size(attr), out, 0);
}

}  // namespace perfspec::runtime
