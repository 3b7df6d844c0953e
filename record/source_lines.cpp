// SPDX-License-Identifier: MIT
// Source lines of addresses (perf's srcline), from DWARF line tables read with elfutils' libdw.
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "perfspec/symbols.hpp"
#include "record/elf_files.hpp"

namespace perfspec::record {

namespace {

// One file: its descriptor, its DWARF (nullptr: no line table to read) and .text's offset.
struct File {
  int fd = -1;
  Dwarf* dwarf = nullptr;
  std::uint64_t text_offset = 0;
  bool debug_line = false;  // it has a .debug_line section
  File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (dwarf) dwarf_end(dwarf);
    if (fd >= 0) ::close(fd);
  }
};

// .text's sh_addr - sh_offset (perf's dso__text_offset; 0 without one), and whether it has .debug_line
void read_sections(Elf* elf, File& f) {
  std::size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr h;
    if (!gelf_getshdr(scn, &h)) continue;
    const char* name = elf_strptr(elf, names, h.sh_name);
    if (!name) continue;
    if (std::strcmp(name, ".text") == 0) f.text_offset = h.sh_addr - h.sh_offset;
    if (std::strcmp(name, ".debug_line") == 0) f.debug_line = true;
  }
}

// The unit whose ranges hold `vaddr`: by .debug_aranges, else by each unit's own ranges.
bool unit_at(Dwarf* dwarf, std::uint64_t vaddr, Dwarf_Die& out) {
  if (dwarf_addrdie(dwarf, vaddr, &out)) return true;
  Dwarf_Off offset = 0, next = 0;
  std::size_t header = 0;
  while (dwarf_nextcu(dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die die;
    if (dwarf_offdie(dwarf, offset + header, &die)) {
      Dwarf_Addr base = 0, start = 0, end = 0;
      for (std::ptrdiff_t at = 0; (at = dwarf_ranges(&die, at, &base, &start, &end)) > 0;)
        if (vaddr >= start && vaddr < end) {
          out = die;
          return true;
        }
    }
    offset = next;
  }
  return false;
}

}  // namespace

struct SourceLines::Impl {
  std::unordered_map<std::string, std::unique_ptr<File>> files;

  File& open(const std::string& path) {
    auto [it, made] = files.try_emplace(path);
    if (!made) return *it->second;
    it->second = std::make_unique<File>();
    File& f = *it->second;
    f.fd = detail::open_regular(path);
    if (f.fd < 0) return f;
    if (Elf* elf = elf_begin(f.fd, ELF_C_READ_MMAP, nullptr)) {
      read_sections(elf, f);
      elf_end(elf);
    }
    f.dwarf = dwarf_begin(f.fd, DWARF_C_READ);
    return f;
  }
};

SourceLines::SourceLines() : impl_(std::make_unique<Impl>()) {}
SourceLines::SourceLines(SourceLines&&) noexcept = default;
SourceLines& SourceLines::operator=(SourceLines&&) noexcept = default;
SourceLines::~SourceLines() = default;

std::optional<std::string> SourceLines::line(const std::string& path, std::uint64_t vaddr) {
  File& f = impl_->open(path);
  Dwarf_Die unit;
  if (!f.dwarf || !unit_at(f.dwarf, vaddr, unit)) return std::nullopt;
  Dwarf_Line* row = dwarf_getsrc_die(&unit, vaddr);
  if (!row) return std::nullopt;
  const char* source = dwarf_linesrc(row, nullptr, nullptr);
  int number = 0;
  if (!source || dwarf_lineno(row, &number) != 0) return std::nullopt;
  const char* base = std::strrchr(source, '/');
  return fmt::format("{}:{}", base ? base + 1 : source, static_cast<unsigned>(number));
}

std::uint64_t SourceLines::text_offset(const std::string& path) { return impl_->open(path).text_offset; }

bool SourceLines::has_lines(const std::string& path) { return impl_->open(path).debug_line; }

}  // namespace perfspec::record
