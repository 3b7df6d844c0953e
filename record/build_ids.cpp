// SPDX-License-Identifier: MIT
// Build ids as perf records them: an ELF file's note, the kernel's (/sys/kernel/notes), the vdso's;
// and HEADER_BUILD_ID's layout.
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/symbols.hpp"
#include "record/elf_files.hpp"

namespace perfspec::record {

namespace detail {

int open_regular(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

FileText read_file(const std::string& path) {
  int fd = open_regular(path);
  if (fd < 0)
    throw Error(ErrorKind::io, fmt::format("cannot open {}: {}", path,
                                           errno == EINVAL ? "not a regular file" : std::strerror(errno)));
  struct stat st {};
  FileText out;
  std::size_t capacity =
      ::fstat(fd, &st) == 0 && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 65536;
  for (;;) {
    if (out.size_ == capacity || !out.data_) {
      if (out.data_) capacity *= 2;
      char* grown = static_cast<char*>(std::realloc(out.data_.get(), capacity));
      if (!grown) {
        ::close(fd);
        throw std::bad_alloc();
      }
      (void)out.data_.release();
      out.data_.reset(grown);
    }
    ssize_t n = ::read(fd, out.data_.get() + out.size_, capacity - out.size_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw Error(ErrorKind::io, fmt::format("cannot read {}: {}", path, std::strerror(e)));
    }
    if (n == 0) break;
    out.size_ += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return out;
}

// The GNU build id of an ELF notes file (/sys/kernel/notes), as lowercase hex; empty if none.
std::string notes_build_id(const std::string& path) {
  FileText text;
  try {
    text = read_file(path);
  } catch (const Error&) {
    return {};
  }
  const std::string_view notes = text.view();
  std::size_t at = 0;
  while (at + 12 <= notes.size()) {
    std::uint32_t namesz = 0, descsz = 0, type = 0;
    std::memcpy(&namesz, notes.data() + at, 4);
    std::memcpy(&descsz, notes.data() + at + 4, 4);
    std::memcpy(&type, notes.data() + at + 8, 4);
    const std::size_t name_at = at + 12, desc_at = name_at + ((namesz + 3) & ~3u);
    const std::size_t next = desc_at + ((descsz + 3) & ~3u);
    if (next > notes.size() || next <= at) break;
    if (type == NT_GNU_BUILD_ID && namesz == 4 && notes.substr(name_at, 4) == std::string_view("GNU\0", 4)) {
      std::string hex;
      for (std::size_t i = 0; i < descsz; ++i)
        hex += fmt::format("{:02x}", static_cast<unsigned char>(notes[desc_at + i]));
      return hex;
    }
    at = next;
  }
  return {};
}

// A copy of this process's vdso in a memory file (its fd; -1 when there is none): the kernel maps
// the same image into every process.
int own_vdso() {
  std::ifstream maps("/proc/self/maps");
  std::uint64_t lo = 0, hi = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.ends_with("[vdso]")) {
      std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi);
      break;
    }
  if (hi <= lo) return -1;
  int fd = ::memfd_create("perfspec-vdso", MFD_CLOEXEC);
  if (fd >= 0 && ::write(fd, reinterpret_cast<const void*>(lo), hi - lo) != static_cast<ssize_t>(hi - lo)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The build id an ELF file carries, as lowercase hex; empty when it has none or cannot be read.
std::string file_build_id(const std::string& path, bool* symtab, bool* dynsym) {
  std::string hex;
  int fd = open_regular(path);
  if (fd < 0) return hex;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    const void* id = nullptr;
    ssize_t n = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    for (ssize_t i = 0; i < n; ++i) hex += fmt::format("{:02x}", static_cast<const unsigned char*>(id)[i]);
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      if (symtab && sh.sh_type == SHT_SYMTAB) *symtab = true;
      if (dynsym && sh.sh_type == SHT_DYNSYM) *dynsym = true;
    }
    elf_end(elf);
  }
  ::close(fd);
  return hex;
}

}  // namespace detail

using detail::file_build_id;
using detail::notes_build_id;
using detail::own_vdso;

namespace {
std::vector<std::byte> from_hex(const std::string& hex) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}
}  // namespace

std::vector<std::byte> elf_build_id(const std::string& path) {
  (void)elf_version(EV_CURRENT);
  return from_hex(file_build_id(path));
}

std::vector<std::byte> kernel_build_id() { return from_hex(notes_build_id("/sys/kernel/notes")); }

std::vector<std::byte> vdso_build_id() {
  (void)elf_version(EV_CURRENT);
  int fd = own_vdso();
  if (fd < 0) return {};
  auto id = from_hex(file_build_id(fmt::format("/proc/self/fd/{}", fd)));
  ::close(fd);
  return id;
}

std::vector<std::byte> build_id_section(const std::vector<BinaryBuildId>& binaries) {
  std::vector<std::byte> out;
  for (const auto& b : binaries) {
    if (b.build_id.empty()) continue;
    const std::size_t name = (b.name.size() + 1 + 63) / 64 * 64;  // NUL-padded to perf's NAME_ALIGN
    const std::size_t size = 8 + 4 + 24 + name;
    if (size > 0xffff) continue;  // a name no record can hold
    const std::size_t at = out.size();
    out.resize(at + size);
    auto put = [&](std::size_t off, const void* p, std::size_t n) {
      std::memcpy(out.data() + at + off, p, n);
    };
    const std::uint32_t type = static_cast<std::uint32_t>(Type::header_build_id);
    const std::uint16_t misc =
        static_cast<std::uint16_t>((b.kernel ? misc_kernel : misc_user) | misc_ext_reserved);
    const auto size16 = static_cast<std::uint16_t>(size);
    const std::int32_t pid = -1;  // the host machine (perf's HOST_KERNEL_ID)
    put(0, &type, 4);
    put(4, &misc, 2);
    put(6, &size16, 2);
    put(8, &pid, 4);
    const std::size_t n = std::min<std::size_t>(b.build_id.size(), 20);
    put(12, b.build_id.data(), n);
    out[at + 12 + 20] = static_cast<std::byte>(n);  // its size (misc BUILD_ID_SIZE)
    put(36, b.name.data(), b.name.size());
  }
  return out;
}

// HEADER_BUILD_ID: perf_record_header_build_id entries, each its own header (type, misc, size), pid,
// 24 bytes of build id (20, then its size when misc has BUILD_ID_SIZE), a NUL-padded filename.
std::vector<BinaryBuildId> read_build_id_section(std::span<const std::byte> section) {
  std::vector<BinaryBuildId> out;
  std::size_t at = 0;
  while (at + 8 <= section.size()) {
    std::uint16_t misc = 0, size = 0;
    std::memcpy(&misc, section.data() + at + 4, 2);
    std::memcpy(&size, section.data() + at + 6, 2);
    if (size < 8 + 4 + 24 || at + size > section.size())
      throw DecodeError(
          at, fmt::format("a build id entry of {} bytes at byte {} of the build id section", size, at));
    const std::byte* id = section.data() + at + 12;
    std::size_t id_size = 20;
    if (misc & misc_ext_reserved) id_size = std::min<std::size_t>(static_cast<std::size_t>(id[20]), 20);
    const char* name = reinterpret_cast<const char*>(section.data() + at + 36);
    const std::uint16_t mode = misc & misc_cpumode_mask;
    out.push_back({.name = std::string(name, strnlen(name, size - 36u)),
                   .build_id = std::vector<std::byte>(id, id + id_size),
                   .kernel = mode == misc_kernel || mode == misc_guest_kernel});
    at += size;
  }
  return out;
}

}  // namespace perfspec::record
