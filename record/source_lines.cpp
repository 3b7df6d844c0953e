// SPDX-License-Identifier: MIT
// Source lines of addresses (perf's srcline), from DWARF line tables read with elfutils' libdw.
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <unordered_map>
#include <vector>

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

// The name binutils gives a function's DIE: its linkage name, else its name, each found through
// DW_AT_abstract_origin and DW_AT_specification; "??" for none.
std::string function_name(Dwarf_Die& die) {
  Dwarf_Attribute a;
  for (unsigned at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
    if (dwarf_attr_integrate(&die, at, &a))
      if (const char* s = dwarf_formstring(&a); s && *s) return s;
  const char* name = dwarf_diename(&die);
  return name && *name ? name : "??";
}

// How deep the walk below goes into nested scopes: DWARF made by a compiler nests far less; a file
// made to nest without end must not exhaust the stack.
constexpr int max_nesting = 1024;

// The functions whose ranges hold `pc`, outermost first, below `parent` (a unit, a namespace, a
// function, a block): the subprogram, then each inlined instance in it.
bool functions_at(Dwarf_Die& parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& out, int depth) {
  if (depth > max_nesting) return false;
  Dwarf_Die child;
  if (dwarf_child(&parent, &child) != 0) return false;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
      case DW_TAG_entry_point:
        if (dwarf_haspc(&child, pc) == 1) {
          out.push_back(child);
          functions_at(child, pc, out, depth + 1);
          return true;
        }
        break;
      case DW_TAG_lexical_block:
      case DW_TAG_try_block:
      case DW_TAG_catch_block:
        if (dwarf_haspc(&child, pc) == 1) return functions_at(child, pc, out, depth + 1);
        break;
      case DW_TAG_namespace:
      case DW_TAG_module:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
        if (functions_at(child, pc, out, depth + 1)) return true;
        break;
      default: break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
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

std::vector<InlineFrame> SourceLines::inlines(const std::string& path, std::uint64_t vaddr) {
  std::vector<InlineFrame> out;
  File& f = impl_->open(path);
  Dwarf_Die unit;
  if (!f.dwarf || !unit_at(f.dwarf, vaddr, unit)) return out;
  Dwarf_Line* row = dwarf_getsrc_die(&unit, vaddr);
  int number = 0;
  const char* source = row ? dwarf_linesrc(row, nullptr, nullptr) : nullptr;
  if (!source || dwarf_lineno(row, &number) != 0 || number == 0) return out;
  std::vector<Dwarf_Die> chain;
  functions_at(unit, vaddr, chain, 0);
  out.push_back({chain.empty() ? std::string("??") : function_name(chain.back()), source,
                 static_cast<unsigned>(number)});
  // Each inlined instance, from the innermost: the function around it, at the line of its call.
  Dwarf_Files* files = nullptr;
  std::size_t nfiles = 0;
  for (std::size_t k = chain.size(); k-- > 1;) {
    if (dwarf_tag(&chain[k]) != DW_TAG_inlined_subroutine) break;
    Dwarf_Attribute a;
    Dwarf_Word file = 0, line = 0;
    if (!dwarf_attr(&chain[k], DW_AT_call_file, &a) || dwarf_formudata(&a, &file) != 0) break;
    if (!dwarf_attr(&chain[k], DW_AT_call_line, &a) || dwarf_formudata(&a, &line) != 0 || line == 0) break;
    if (!files && dwarf_getsrcfiles(&unit, &files, &nfiles) != 0) break;
    const char* name = file < nfiles ? dwarf_filesrc(files, file, nullptr, nullptr) : nullptr;
    if (!name) break;
    out.push_back({function_name(chain[k - 1]), name, static_cast<unsigned>(line)});
  }
  return out;
}

std::uint64_t SourceLines::text_offset(const std::string& path) { return impl_->open(path).text_offset; }

bool SourceLines::has_lines(const std::string& path) { return impl_->open(path).debug_line; }

}  // namespace perfspec::record
