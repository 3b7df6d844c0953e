// SPDX-License-Identifier: MIT
// The symbols of one binary as perf keeps them (Linux 6.12 tools/perf/util/symbol.c, symbol-elf.c):
// which symbols of an ELF table count, how their addresses become file offsets, how sizes of zero are
// filled in and which of several symbols at one address is kept; and the same for /proc/kallsyms and
// a JIT's perf map.
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "perfspec/symbols.hpp"
#include "record/demangle.hpp"
#include "record/elf_files.hpp"

namespace perfspec::record {

namespace {

constexpr std::uint64_t page = 4096;
std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

// perf's choose_best_symbol: true when `a` is to be kept over `b` (they start at the same address).
bool better(const Symbol& a, SymbolTable::Weight wa, const Symbol& b, SymbolTable::Weight wb) {
  const bool a_sized = a.end > a.start, b_sized = b.end > b.start;
  if (a_sized != b_sized) return a_sized;  // a symbol with a size
  const bool a_weak = wa.binding == STB_WEAK, b_weak = wb.binding == STB_WEAK;
  if (a_weak != b_weak) return b_weak;  // not a weak one
  const bool a_global = wa.binding == STB_GLOBAL, b_global = wb.binding == STB_GLOBAL;
  if (a_global != b_global) return a_global;  // a global one
  auto underscores = [](const std::string& s) {
    std::size_t n = 0;
    while (n < s.size() && s[n] == '_') ++n;
    return n;
  };
  const std::size_t ua = underscores(a.name), ub = underscores(b.name);
  if (ua != ub) return ua < ub;           // fewer leading underscores
  return a.name.size() >= b.name.size();  // the longer name; the first of equals
}

struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  GElf_Ehdr ehdr{};
  ElfFile() = default;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
  void open(const std::string& path) {
    fd = detail::open_regular(path);
    if (fd < 0)
      throw Error(ErrorKind::io, fmt::format("cannot open {}: {}", path,
                                             errno == EINVAL ? "not a regular file" : std::strerror(errno)));
    elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
      throw Error(ErrorKind::io, fmt::format("{}: not an ELF file", path));
  }
  // The section header of index `i`, nullopt when there is none.
  bool section(std::size_t i, GElf_Shdr& out) const {
    Elf_Scn* scn = elf_getscn(elf, i);
    return scn && gelf_getshdr(scn, &out);
  }
  std::string_view section_name(const GElf_Shdr& shdr) const {
    std::size_t strndx = 0;
    if (elf_getshdrstrndx(elf, &strndx) != 0) return {};
    const char* n = elf_strptr(elf, strndx, shdr.sh_name);
    return n ? std::string_view(n) : std::string_view{};
  }
  // perf's elf_read_program_header: the loadable segment holding `vaddr`.
  bool segment_of(std::uint64_t vaddr, GElf_Phdr& out) const {
    std::size_t n = 0;
    if (elf_getphdrnum(elf, &n) != 0) return false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!gelf_getphdr(elf, static_cast<int>(i), &out) || out.p_type != PT_LOAD) continue;
      std::uint64_t size = std::max(out.p_memsz, out.p_filesz);
      if (size && vaddr >= out.p_vaddr && vaddr < out.p_vaddr + size) return true;
    }
    return false;
  }
  // The section named `name`, and its index; nullptr when there is none.
  Elf_Scn* section_named(std::string_view name, GElf_Shdr& shdr) const {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn))
      if (gelf_getshdr(scn, &shdr) && section_name(shdr) == name) return scn;
    return nullptr;
  }
  // The symbol table: .symtab, else .dynsym.
  Elf_Scn* symbols(GElf_Shdr& shdr) const {
    Elf_Scn* dyn = nullptr;
    GElf_Shdr dyn_shdr{};
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr s;
      if (!gelf_getshdr(scn, &s)) continue;
      if (s.sh_type == SHT_SYMTAB) {
        shdr = s;
        return scn;
      }
      if (s.sh_type == SHT_DYNSYM && !dyn) dyn = scn, dyn_shdr = s;
    }
    shdr = dyn_shdr;
    return dyn;
  }
};

// Which symbols of an ELF table perf keeps: functions and objects, and labels (no type) of text
// sections, defined in a section that is loaded; not ARM's mapping symbols ($a, $d, $t, $x).
bool wanted(const GElf_Sym& sym, const char* name, const GElf_Ehdr& ehdr) {
  const unsigned type = GELF_ST_TYPE(sym.st_info);
  if (sym.st_name == 0 || sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS) return false;
  if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT && type != STT_NOTYPE) return false;
  if (type == STT_NOTYPE) {
    const unsigned vis = GELF_ST_VISIBILITY(sym.st_other);
    if (vis == STV_HIDDEN || vis == STV_INTERNAL) return false;
  }
  if ((ehdr.e_machine == EM_ARM || ehdr.e_machine == EM_AARCH64) && name[0] == '$' && name[1] &&
      std::strchr("adtx", name[1]) && (name[2] == '\0' || name[2] == '.'))
    return false;
  return true;
}

// perf's get_plt_sizes: the sizes of a PLT's header and entries, by machine; false when unknown.
bool plt_sizes(const GElf_Ehdr& ehdr, const GElf_Shdr& plt, std::uint64_t& header, std::uint64_t& entry) {
  switch (ehdr.e_machine) {
    case EM_ARM: header = 20, entry = 12; return true;
    case EM_AARCH64:
    case EM_LOONGARCH: header = 32, entry = 16; return true;
    case EM_SPARC: header = 48, entry = 12; return true;
    case EM_SPARCV9: header = 128, entry = 32; return true;
    case EM_386:
    case EM_X86_64:
      entry = plt.sh_entsize;
      if (entry != 8 && entry != 16) entry = plt.sh_addralign == 8 ? 8 : 16;
      header = entry;
      return true;
    default: header = entry = plt.sh_entsize; return entry != 0;
  }
}

// The symbol a relocation of `rel` names, by its index (.rela.plt or .rel.plt).
struct Relocations {
  Elf_Data* data = nullptr;
  bool rela = false;
  std::size_t count = 0;
  std::uint64_t offset(std::size_t i) const {
    if (rela) {
      GElf_Rela r;
      return gelf_getrela(data, static_cast<int>(i), &r) ? r.r_offset : 0;
    }
    GElf_Rel r;
    return gelf_getrel(data, static_cast<int>(i), &r) ? r.r_offset : 0;
  }
  std::size_t symbol(std::size_t i) const {
    if (rela) {
      GElf_Rela r;
      return gelf_getrela(data, static_cast<int>(i), &r) ? GELF_R_SYM(r.r_info) : 0;
    }
    GElf_Rel r;
    return gelf_getrel(data, static_cast<int>(i), &r) ? GELF_R_SYM(r.r_info) : 0;
  }
  // An x86-64 IRELATIVE relocation's addend: the address of the IFUNC resolver it names.
  std::optional<std::uint64_t> ifunc_address(std::size_t i) const {
    GElf_Rela r;
    if (!rela || !gelf_getrela(data, static_cast<int>(i), &r) || GELF_R_TYPE(r.r_info) != R_X86_64_IRELATIVE)
      return std::nullopt;
    return static_cast<std::uint64_t>(r.r_addend);
  }
};

// Names of x86-64 .plt.got entries: the symbol of the .rela.dyn relocation at the GOT slot each
// entry's `jmp *disp(%rip)` reads (perf's get_plt_got_name).
std::string plt_got_name(const ElfFile& f, const GElf_Shdr& shdr, Elf_Data* code, std::size_t i,
                         bool demangle) {
  if (f.ehdr.e_machine != EM_X86_64 || !code || !code->d_buf || i >= code->d_size) return {};
  const auto* p = static_cast<const unsigned char*>(code->d_buf) + i;
  const std::size_t left = code->d_size - i;  // an entry is 8 or 16 bytes: the last may have only 8
  std::size_t n = 0;
  if (left >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) n += 4;  // endbr64
  if (left > n && p[n] == 0xf2) n += 1;                                                   // bnd
  if (left < n + 6 || p[n] != 0xff || p[n + 1] != 0x25) return {};
  std::uint32_t disp = 0;
  std::memcpy(&disp, p + n + 2, 4);
  const std::uint64_t target = shdr.sh_offset + code->d_off + i + n + 6 + disp;
  GElf_Shdr rel_shdr;
  Elf_Scn* rel = f.section_named(".rela.dyn", rel_shdr);
  if (!rel || !rel_shdr.sh_link || !rel_shdr.sh_entsize) return {};
  Elf_Data* rel_data = elf_getdata(rel, nullptr);
  GElf_Shdr dynsym_shdr;
  Elf_Scn* dynsym = elf_getscn(f.elf, rel_shdr.sh_link);
  if (!rel_data || !dynsym || !gelf_getshdr(dynsym, &dynsym_shdr)) return {};
  Elf_Data* syms = elf_getdata(dynsym, nullptr);
  for (std::size_t k = 0; syms && k < rel_shdr.sh_size / rel_shdr.sh_entsize; ++k) {
    GElf_Rela r;
    if (!gelf_getrela(rel_data, static_cast<int>(k), &r) || GELF_R_SYM(r.r_info) == 0 || r.r_offset != target)
      continue;
    GElf_Sym sym;
    if (!gelf_getsym(syms, static_cast<int>(GELF_R_SYM(r.r_info)), &sym)) return {};
    const char* name = elf_strptr(f.elf, dynsym_shdr.sh_link, sym.st_name);
    if (!name || !*name) return {};
    std::string d = demangle ? detail::demangled_name(name) : std::string{};
    return (d.empty() ? std::string(name) : d) + "@plt";
  }
  return {};
}

// The .plt.got entries of x86 (`NAME@plt`, or `offset_0x...@plt`).
void add_plt_got_symbols(std::vector<Symbol>& added, const ElfFile& f, bool demangle) {
  GElf_Shdr got{};
  Elf_Scn* scn = f.section_named(".plt.got", got);
  if (!scn || !got.sh_entsize || got.sh_type == SHT_NOBITS) return;
  Elf_Data* code = elf_getdata(scn, nullptr);
  for (std::size_t i = 0; i < got.sh_size; i += got.sh_entsize) {
    std::string name = plt_got_name(f, got, code, i, demangle);
    if (name.empty()) name = fmt::format("offset_{:#x}@plt", got.sh_offset + i);
    added.push_back({std::move(name), got.sh_offset + i, got.sh_offset + i + got.sh_entsize});
  }
}

// The PLT entry of relocation `i`, at file offset `at`: `NAME@plt` after the symbol it names; for an
// x86-64 IFUNC's entry (no symbol: IRELATIVE), after the IFUNC (or an alias of one) its resolver is;
// else `offset_0x...@plt`.
struct PltNames {
  const ElfFile& f;
  const Relocations& r;
  Elf_Data* syms;
  std::size_t strings;  // the symbols' string table
  const std::vector<Symbol>& known;
  const std::vector<char>& ifunc;
  bool demangle;

  std::string operator()(std::size_t i, std::uint64_t at) const {
    GElf_Sym sym{};
    const char* name = gelf_getsym(syms, static_cast<int>(r.symbol(i)), &sym)
                           ? elf_strptr(f.elf, strings, sym.st_name)
                           : nullptr;
    if (name && *name) {
      std::string d = demangle ? detail::demangled_name(name) : std::string{};
      return (d.empty() ? std::string(name) : d) + "@plt";
    }
    if (auto resolver = f.ehdr.e_machine == EM_X86_64 ? r.ifunc_address(i) : std::nullopt) {
      GElf_Phdr phdr;
      if (f.segment_of(*resolver, phdr)) {
        const std::uint64_t offset = *resolver - (phdr.p_vaddr - phdr.p_offset);
        auto it = std::lower_bound(known.begin(), known.end(), offset,
                                   [](const Symbol& s, std::uint64_t a) { return s.start < a; });
        if (it != known.end() && it->start == offset && ifunc[static_cast<std::size_t>(it - known.begin())])
          return it->name + "@plt";
      }
    }
    return fmt::format("offset_{:#x}@plt", at);
  }
};

// Symbols for the PLT of the binary itself, as perf 6.12's dso__synthesize_plt_symbols makes them:
// `.plt` for its header, `NAME@plt` for each entry in the order of the relocations' GOT slots,
// `NAME@plt` for .plt.got entries. Added after the fix-ups, as perf adds them. None for a debug file
// read without its binary: its PLT sections have no bytes (SHT_NOBITS; reading .plt.got's entries
// there read through a null pointer).
void add_plt_symbols(std::vector<Symbol>& out, const std::vector<char>& ifunc, const ElfFile& f,
                     bool demangle) {
  GElf_Shdr plt{};
  if (!f.section_named(".plt", plt) || plt.sh_type == SHT_NOBITS) return;
  for (Symbol& s : out)  // a symbol stretched over the PLT by the fix-ups ends where it starts
    if (s.start < plt.sh_offset && s.end > plt.sh_offset) s.end = plt.sh_offset;
  std::uint64_t header = 0, entry = 0;
  if (!plt_sizes(f.ehdr, plt, header, entry)) return;
  std::vector<Symbol> added;
  added.push_back({".plt", plt.sh_offset, plt.sh_offset + header});
  const bool x86 = f.ehdr.e_machine == EM_386 || f.ehdr.e_machine == EM_X86_64;
  if (x86) add_plt_got_symbols(added, f, demangle);
  std::uint64_t at = plt.sh_offset;
  bool lazy = true;
  GElf_Shdr sec{};
  if (x86 && f.section_named(".plt.sec", sec)) {
    if (!plt_sizes(f.ehdr, sec, header, entry)) return;
    added.front().end = plt.sh_offset + plt.sh_size;
    at = sec.sh_offset;
    lazy = false;
  }
  auto finish = [&] {
    out.insert(out.end(), added.begin(), added.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  };
  GElf_Shdr rel_shdr{}, syms_shdr{};
  Elf_Scn* rel = f.section_named(".rela.plt", rel_shdr);
  if (!rel) rel = f.section_named(".rel.plt", rel_shdr);
  Elf_Scn* syms_scn = rel && rel_shdr.sh_link ? elf_getscn(f.elf, rel_shdr.sh_link) : nullptr;
  if (!syms_scn || (rel_shdr.sh_type != SHT_RELA && rel_shdr.sh_type != SHT_REL) || !rel_shdr.sh_entsize ||
      !gelf_getshdr(syms_scn, &syms_shdr) ||
      (syms_shdr.sh_type != SHT_DYNSYM && syms_shdr.sh_type != SHT_SYMTAB))
    return finish();
  Relocations r{elf_getdata(rel, nullptr), rel_shdr.sh_type == SHT_RELA,
                rel_shdr.sh_size / rel_shdr.sh_entsize};
  Elf_Data* syms = elf_getdata(syms_scn, nullptr);
  if (!r.data || !syms) return finish();
  if (lazy) {  // a .plt with as many entries as relocations is not lazy: it has no header
    if (r.count * entry == plt.sh_size)
      added.erase(added.begin());
    else
      at += header;
  }
  std::vector<std::size_t> order(r.count);
  for (std::size_t i = 0; i < r.count; ++i) order[i] = i;
  if (x86)  // x86 does not put IFUNC relocations in .plt order: the GOT slots' order is
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r.offset(a) < r.offset(b); });
  PltNames names{f, r, syms, syms_shdr.sh_link, out, ifunc, demangle};
  for (std::size_t i : order) {
    added.push_back({names(i, at), at, at + entry});
    at += entry;
  }
  finish();
}

}  // namespace

SymbolTable::SymbolTable(std::vector<Symbol> symbols) {
  std::vector<Weight> weights(symbols.size(), Weight{STB_GLOBAL, false});
  *this = from_candidates(std::move(symbols), std::move(weights), false);
}

// perf's symbols__fixup_end, then symbols__fixup_duplicate, over symbols sorted by start (equal starts
// in the order read). Sorted input (kallsyms, most tables) is fixed in place: /proc/kallsyms has a
// hundred thousand symbols and more, and each copy of them is megabytes of pages touched.
SymbolTable SymbolTable::from_candidates(std::vector<Symbol> s, std::vector<Weight> w, bool kallsyms,
                                         std::vector<char>* ifunc) {
  auto by_start = [](const Symbol& a, const Symbol& b) { return a.start < b.start; };
  if (!std::is_sorted(s.begin(), s.end(), by_start)) {
    std::vector<std::size_t> order(s.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return s[a].start < s[b].start; });
    std::vector<Symbol> sorted;
    std::vector<Weight> sorted_w;
    sorted.reserve(s.size());
    sorted_w.reserve(s.size());
    for (std::size_t i : order) {
      sorted.push_back(std::move(s[i]));
      sorted_w.push_back(w[i]);
    }
    s = std::move(sorted);
    w = std::move(sorted_w);
  }
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    Symbol& prev = s[i];
    if (prev.end != prev.start) continue;
    const Symbol& next = s[i + 1];
    // kallsyms: between the kernel's last symbol and a module's first (or the reverse), a page.
    if (kallsyms && prev.module.empty() != next.module.empty())
      prev.end = round_up(prev.end + page, page);
    else
      prev.end = next.start;
  }
  if (!s.empty() && s.back().end == s.back().start) s.back().end = round_up(s.back().start, page) + page;
  std::size_t kept = 0;  // s[0, kept) is the table so far; the group at i is past it
  for (std::size_t i = 0; i < s.size();) {
    std::size_t best = i, j = i + 1;
    bool any_ifunc = w[i].ifunc;
    for (; j < s.size() && s[j].start == s[i].start; ++j) {
      if (!better(s[best], w[best], s[j], w[j])) best = j;
      any_ifunc = any_ifunc || w[j].ifunc;
    }
    if (best != kept) s[kept] = std::move(s[best]);
    ++kept;
    if (ifunc) ifunc->push_back(any_ifunc);  // an IFUNC, or an alias of one (perf's ifunc_alias)
    i = j;
  }
  s.resize(kept);
  SymbolTable out;
  out.symbols_ = std::move(s);
  return out;
}

const Symbol* SymbolTable::find(std::uint64_t address) const {
  // perf's symbols__find: [start, end), and a symbol of no size at its own start
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](std::uint64_t a, const Symbol& s) { return a < s.start; });
  if (it == symbols_.begin()) return nullptr;
  const Symbol& s = *std::prev(it);
  if (address < s.end || address == s.start) return &s;
  return nullptr;
}

SymbolTable SymbolTable::from_elf(const std::string& path, const std::string& runtime_path, bool demangle) {
  if (elf_version(EV_CURRENT) == EV_NONE) throw Error(ErrorKind::io, "libelf is out of date");
  ElfFile syms;
  syms.open(path);
  ElfFile runtime_file;
  const ElfFile* runtime = &syms;
  if (!runtime_path.empty() && runtime_path != path) {
    runtime_file.open(runtime_path);
    runtime = &runtime_file;
  }
  GElf_Shdr table_shdr{};
  Elf_Scn* table = syms.symbols(table_shdr);
  std::vector<Symbol> c;
  std::vector<Weight> weights;
  if (!table || table_shdr.sh_entsize == 0) return {};
  Elf_Data* data = elf_getdata(table, nullptr);
  if (!data) return {};
  const std::size_t count = table_shdr.sh_size / table_shdr.sh_entsize;
  const bool adjust = syms.ehdr.e_type == ET_EXEC || syms.ehdr.e_type == ET_REL || syms.ehdr.e_type == ET_DYN;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
    const char* name = elf_strptr(syms.elf, table_shdr.sh_link, sym.st_name);
    if (!name || !wanted(sym, name, syms.ehdr)) continue;
    GElf_Shdr shdr;
    if (!syms.section(sym.st_shndx, shdr)) continue;
    if (!(shdr.sh_flags & SHF_ALLOC)) continue;  // not loaded (.gnu.warning.*)
    // A debug file's sections of no bits have no file offsets: the binary's say where they are.
    const ElfFile* holder = &syms;
    if (shdr.sh_type == SHT_NOBITS && runtime != &syms && runtime->section(sym.st_shndx, shdr))
      holder = runtime;
    if (GELF_ST_TYPE(sym.st_info) == STT_NOTYPE &&
        holder->section_name(shdr).find("text") == std::string_view::npos)
      continue;  // a label outside text
    std::uint64_t value = sym.st_value;
    if (syms.ehdr.e_machine == EM_ARM && GELF_ST_TYPE(sym.st_info) == STT_FUNC) value &= ~std::uint64_t{1};
    if (adjust) {
      GElf_Phdr phdr;
      if (runtime->segment_of(value, phdr))
        value -= phdr.p_vaddr - phdr.p_offset;
      else
        value -= shdr.sh_addr - shdr.sh_offset;
    }
    Symbol k;
    k.start = value;
    k.end = value + sym.st_size;
    std::string d = demangle ? detail::demangled_name(name) : std::string{};
    k.name = d.empty() ? std::string(name) : std::move(d);
    k.object = GELF_ST_TYPE(sym.st_info) == STT_OBJECT;
    c.push_back(std::move(k));
    weights.push_back(
        {static_cast<unsigned char>(GELF_ST_BIND(sym.st_info)), GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC});
  }
  std::vector<char> ifunc;
  SymbolTable out = from_candidates(std::move(c), std::move(weights), false, &ifunc);
  if (!out.symbols_.empty()) add_plt_symbols(out.symbols_, ifunc, *runtime, demangle);
  return out;
}

SymbolTable SymbolTable::from_kallsyms(std::string_view text, std::string_view name) {
  std::vector<Symbol> c;
  std::vector<Weight> weights;
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  c.reserve(lines);
  weights.reserve(lines);
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty()) continue;
    // ADDRESS TYPE NAME[\t[MODULE]]
    std::uint64_t address = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), address, 16);
    std::size_t at = static_cast<std::size_t>(p - line.data());
    if (ec != std::errc{} || at + 3 > line.size() || line[at] != ' ' || line[at + 2] != ' ')
      throw Error(ErrorKind::io, fmt::format("{}:{}: not a kallsyms line: '{}'", name, line_no, line));
    const char type = line[at + 1];
    std::string_view symbol = line.substr(at + 3);
    const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
    // perf's symbol_type__filter (6.12): text, weak, data, bss, and the kinds Rust code brings
    if (!(upper == 'T' || upper == 'W' || upper == 'D' || upper == 'B' || type == 'u' || type == 'l' ||
          type == 'N' || type == '1'))
      continue;
    if (symbol.empty() || symbol[0] == '$') continue;  // ARM modules' local mapping symbols
    Symbol& k = c.emplace_back();
    k.start = k.end = address;
    if (auto tab = symbol.find('\t'); tab != std::string_view::npos) {
      k.module = std::string(symbol.substr(tab + 1));
      symbol = symbol.substr(0, tab);
    }
    k.name = std::string(symbol);
    k.object = !(upper == 'T' || upper == 'W');  // perf's kallsyms2elf_type
    weights.push_back(
        {static_cast<unsigned char>(
             upper == 'W' ? STB_WEAK
                          : (std::isupper(static_cast<unsigned char>(type)) ? STB_GLOBAL : STB_LOCAL)),
         false});
  }
  return from_candidates(std::move(c), std::move(weights), true);
}

SymbolTable SymbolTable::from_perf_map(std::string_view text) {
  std::vector<Symbol> c;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::uint64_t start = 0, size = 0;
    const char* end = line.data() + line.size();
    auto hex = [&](const char* from, std::uint64_t& v) -> const char* {
      if (end - from > 2 && from[0] == '0' && (from[1] == 'x' || from[1] == 'X')) from += 2;
      auto [q, ec] = std::from_chars(from, end, v, 16);
      return ec == std::errc{} && q < end && *q == ' ' ? q + 1 : nullptr;
    };
    const char* q = hex(line.data(), start);
    if (q) q = hex(q, size);
    if (!q || q == end) break;  // perf stops at the first line it cannot read
    c.push_back({std::string(q, end), start, start + size});
  }
  std::vector<Weight> weights(c.size(), Weight{STB_GLOBAL, false});
  return from_candidates(std::move(c), std::move(weights), false);
}

}  // namespace perfspec::record
