// SPDX-License-Identifier: MIT
// The address spaces of a recording, as perf's machine keeps them (Linux 6.12
// tools/perf/util/machine.c, maps.c, map.c, dso.c): kernel mappings apart from the processes', a
// mapping over others cutting them, a new process a copy of its parent's; and which file holds a
// binary's symbols (its separate debug file by debuglink or build id, else itself).
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "perfspec/symbols.hpp"
#include "record/address_space.hpp"
#include "record/debuginfod.hpp"
#include "record/demangle.hpp"
#include "record/elf_files.hpp"

namespace perfspec::record {

using detail::anon_memory;
using detail::file_build_id;
using detail::find;
using detail::insert;
using detail::MapKind;
using detail::Mapping;
using detail::Maps;
using detail::module_name;
using detail::no_dso_memory;
using detail::notes_build_id;
using detail::own_vdso;
using detail::read_file;

namespace {

constexpr std::uint32_t prot_exec = 0x4;        // PROT_EXEC
constexpr std::uint32_t map_hugetlb = 0x40000;  // MAP_HUGETLB

}  // namespace

struct Symbolizer::Impl {
  SymbolOptions options;
  SourceLines lines;                      // srcline's line tables
  std::unordered_set<std::string> names;  // dso names, interned: Locations point into them
  std::unordered_map<std::uint32_t, std::shared_ptr<Maps>> processes;
  Maps kernel;
  std::unordered_map<std::string, std::unique_ptr<SymbolTable>> tables;  // nullptr: could not be read
  // The same by the interned name of a mapping's binary: a lookup per address without a string made
  std::map<std::pair<const std::string*, const std::string*>, const SymbolTable*> by_name;
  struct Sources {
    std::string symbols, runtime;
  };
  // The files of a binary's build, by its interned name and build id (Symbolizer::binary_at)
  std::map<std::pair<const std::string*, const std::string*>, std::optional<Sources>> files;
  std::unique_ptr<SymbolTable> kallsyms;
  bool kallsyms_read = false;
  std::pair<std::uint64_t, std::uint64_t>
      kernel_span;  // the kernel's symbols (not modules'): first start, last end
  std::unique_ptr<SymbolTable> vdso;
  bool vdso_read = false;
  std::string vdso_path;  // the file its symbols came from
  int vdso_fd = -1;       // this process's vdso, when that was the file
  ~Impl() {
    if (vdso_fd >= 0) ::close(vdso_fd);
  }
  std::vector<std::string> problems;
  std::unordered_map<std::string, std::string> build_ids;  // recorded: path -> build id, lowercase hex
  // inlined(): the frames by symbol and address, and the inlined functions' symbols (stable) by the
  // symbol they were inlined into and their name
  std::map<std::pair<const Symbol*, std::uint64_t>, std::vector<Symbolizer::InlinedLocation>> inlined;
  std::map<std::pair<const Symbol*, std::string>, const Symbol*> inlined_names;
  std::deque<Symbol> inlined_symbols;

  const std::string* name(std::string_view n) { return &*names.emplace(n).first; }
  std::string under_symfs(std::string_view path) const {
    if (options.symfs.empty()) return std::string(path);
    return options.symfs + (path.starts_with('/') ? "" : "/") + std::string(path);
  }
  Maps& maps_of(std::uint32_t pid) {
    auto& m = processes[pid];
    if (!m) m = std::make_shared<Maps>();
    return *m;
  }

  // Locations found, by their process's mappings and address: the same return addresses come again
  // in sample after sample. Any change to a mapping makes them all stale (a new generation).
  struct Cached {
    const Maps* maps = nullptr;
    std::uint64_t address = 0, generation = 0;
    Location where;
  };
  static constexpr std::size_t cache_size = 4096;
  std::vector<Cached> cache = std::vector<Cached>(cache_size);
  std::uint64_t generation = 1;

  void map(std::uint32_t pid, std::uint16_t misc, std::uint64_t start, std::uint64_t len, std::uint64_t pgoff,
           std::uint32_t prot, std::uint32_t flags, std::string_view filename) {
    const std::uint16_t mode = misc & misc_cpumode_mask;
    if (len == 0 || start + len < start) return;
    ++generation;
    Mapping m;
    m.end = start + len;
    m.pgoff = pgoff;
    if (mode == misc_kernel || mode == misc_guest_kernel) {
      m.kind = MapKind::kernel;
      m.dso = name(filename.starts_with("[kernel.kallsyms]") || filename.starts_with("[guest.kernel")
                       ? std::string("[kernel.kallsyms]")
                       : module_name(filename));
      insert(kernel, start, m);
      return;
    }
    const bool anon = anon_memory(filename) || (flags & map_hugetlb), no_dso = no_dso_memory(filename);
    if ((anon || no_dso) && (prot & prot_exec)) {
      m.dso = name(fmt::format("/tmp/perf-{}.map", pid));  // a JIT's symbols
      m.kind = MapKind::identity;
    } else if (filename == "[vdso]") {
      m.dso = name(filename);
      m.kind = MapKind::vdso;
      m.pgoff = 0;
    } else {
      m.dso = name(filename);
      m.kind = anon || no_dso ? MapKind::identity : MapKind::file;
      if (auto b = build_ids.find(std::string(filename)); b != build_ids.end()) m.build_id = name(b->second);
    }
    insert(maps_of(pid), start, m);
  }

  const SymbolTable* kernel_symbols() {
    if (!kallsyms_read) {
      kallsyms_read = true;
      std::string path = options.kallsyms.empty() ? std::string("/proc/kallsyms") : options.kallsyms;
      // This machine's kallsyms say nothing of another kernel's addresses: when the recording names
      // its kernel's build id, it must be the running kernel's (as perf checks it; a --kallsyms file
      // is taken as it is).
      if (auto k = build_ids.find("[kernel.kallsyms]"); options.kallsyms.empty() && k != build_ids.end()) {
        std::string running = notes_build_id("/sys/kernel/notes");
        if (running != k->second) {
          problems.push_back(fmt::format("no kallsyms of the kernel with build id {} (this one's is {})",
                                         k->second, running.empty() ? "unknown" : running));
          return nullptr;
        }
      }
      try {
        kallsyms = std::make_unique<SymbolTable>(SymbolTable::from_kallsyms(read_file(path).view(), path));
        // Addresses hidden (kptr_restrict): every symbol at 0 says nothing.
        if (!kallsyms->symbols().empty() && kallsyms->symbols().back().start == 0) kallsyms.reset();
        kernel_span = {~std::uint64_t{0}, 0};
        if (kallsyms)
          for (const Symbol& sym : kallsyms->symbols())
            if (sym.module.empty())
              kernel_span = {std::min(kernel_span.first, sym.start), std::max(kernel_span.second, sym.end)};
      } catch (const Error& e) {
        problems.push_back(e.message());
      }
    }
    return kallsyms.get();
  }

  Location locate_in(const Maps& maps, std::uint64_t address);

  // A kernel address, as perf's kernel maps place it once kallsyms is read. From /proc/kallsyms perf
  // maps the kernel as /proc/kcore lays it out, which covers every address kallsyms names (init text,
  // modules). From a kallsyms file of a caller's (no kcore beside it) the kernel's map spans its
  // symbols (map__fixup_start, map__fixup_end), and a module's symbols count only where the
  // recording mapped that module. Without kallsyms, the recorded mappings alone.
  Location locate_kernel(std::uint64_t address) {
    Location out;
    out.dso_address = address;
    const auto* hit = find(kernel, address);
    const SymbolTable* k = kernel_symbols();
    if (k && !options.kallsyms.empty()) {
      if (address >= kernel_span.first && address < kernel_span.second) {
        out.dso = *name("[kernel.kallsyms]");
        out.symbol = k->find(address);
        if (out.symbol && !out.symbol->module.empty()) out.symbol = nullptr;
      } else if (hit && *hit->second.dso != "[kernel.kallsyms]") {
        out.dso = *hit->second.dso;
        out.symbol = k->find(address);
        if (out.symbol && out.symbol->module != out.dso) out.symbol = nullptr;
      }
      return out;
    }
    if (k && (out.symbol = k->find(address)))
      out.dso =
          *name(out.symbol->module.empty() ? std::string_view("[kernel.kallsyms]") : out.symbol->module);
    else if (hit)
      out.dso = *hit->second.dso;
    return out;
  }

  // The vdso's symbols: from perf's build-id cache when the recording names the vdso's build id,
  // else this process's vdso when it is that build (or no build is named), as perf reads it.
  const SymbolTable* vdso_symbols() {
    if (vdso_read) return vdso.get();
    vdso_read = true;
    auto b = build_ids.find("[vdso]");
    const std::string* wanted = b == build_ids.end() ? nullptr : &b->second;
    std::vector<std::string> candidates;
    if (auto ids = buildid_dir(); ids && wanted)
      candidates.push_back(fmt::format("{}/[vdso]/{}/vdso", *ids, *wanted));
    int fd = own_vdso();
    if (fd >= 0) candidates.push_back(fmt::format("/proc/self/fd/{}", fd));
    for (const auto& c : candidates) {
      if (::access(c.c_str(), R_OK) != 0 || (wanted && file_build_id(c) != *wanted)) continue;
      try {
        vdso = std::make_unique<SymbolTable>(SymbolTable::from_elf(c, {}, options.demangle));
        vdso_path = c;  // kept open for the unwinder (binary_at) when it is this process's
        if (fd >= 0 && c == candidates.back()) std::swap(vdso_fd, fd);
      } catch (const Error& e) {
        problems.push_back(e.message());
      }
      break;
    }
    if (fd >= 0) ::close(fd);
    if (!vdso && wanted) problems.push_back(fmt::format("[vdso] with build id {} not found", *wanted));
    return vdso.get();
  }

  // Where a binary's symbols are read from, in perf's order (dso__load's binary types): its
  // .gnu_debuglink file (beside it, in .debug/ beside it, under /usr/lib/debug), perf's build-id
  // cache, /usr/lib/debug/.build-id, the binary itself. When the recording says the binary's build
  // id, a file with another is passed over. The symbols come from the first with a .symtab, the
  // segments (and the PLT) from the first with a .dynsym; nothing when no file is left.
  std::optional<Sources> sources(std::string_view dso, const std::string& path, const std::string* wanted) {
    std::vector<std::string> candidates;
    int fd = detail::open_regular(path);
    if (fd >= 0) {
      if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
        GElf_Word crc = 0;
        if (const char* link = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_debuglink(elf, &crc) : nullptr) {
          std::string dir = path.substr(0, path.rfind('/'));
          std::string inner = std::string(dso.substr(0, dso.rfind('/')));
          candidates.push_back(dir + "/" + link);
          candidates.push_back(dir + "/.debug/" + link);
          candidates.push_back(under_symfs("/usr/lib/debug" + inner + "/" + link));
        }
        elf_end(elf);
      }
      ::close(fd);
    }
    std::string id = wanted ? *wanted : file_build_id(path);
    if (id.size() > 2) {
      if (auto ids = buildid_dir())
        candidates.push_back(*ids + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + "/elf");
      candidates.push_back(
          under_symfs("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug"));
    }
    candidates.push_back(path);
    Sources out;
    for (const auto& c : candidates) {
      bool symtab = false, dynsym = false;
      std::string found = file_build_id(c, &symtab, &dynsym);
      if (::access(c.c_str(), R_OK) != 0) continue;
      if (wanted && found != *wanted) continue;
      if (out.symbols.empty() && symtab) out.symbols = c;
      if (out.runtime.empty() && dynsym) out.runtime = c;
    }
    if (out.symbols.empty() && !options.debuginfod.empty() && id.size() > 2) {  // no symbol table here
      std::string problem;
      if (auto fetched = detail::debuginfod_debuginfo(id, problem)) {
        bool symtab = false;
        if (file_build_id(*fetched, &symtab) == id && symtab) out.symbols = *fetched;
      } else {
        problems.push_back(problem);
      }
    }
    if (out.symbols.empty()) out.symbols = out.runtime;
    if (out.runtime.empty()) out.runtime = out.symbols;
    if (out.symbols.empty()) {
      int file = detail::open_regular(path);
      if (file < 0)
        problems.push_back(fmt::format("cannot open {}: {}", path,
                                       errno == EINVAL ? "not a regular file" : std::strerror(errno)));
      else if (wanted)
        problems.push_back(fmt::format("{}: not the build recorded (build id {})", path, *wanted));
      else
        problems.push_back(fmt::format("{}: no symbol table", path));
      if (file >= 0) ::close(file);
      return std::nullopt;
    }
    return out;
  }

  // The symbols of a binary, of the build `wanted` (hex; nullptr: the build the recording's header
  // names, else any): one table per binary and build.
  const SymbolTable* table(std::string_view dso, const std::string* wanted = nullptr) {
    if (!wanted)
      if (auto b = build_ids.find(std::string(dso)); b != build_ids.end()) wanted = &b->second;
    auto [it, made] = tables.try_emplace(std::string(dso) + '\0' + (wanted ? *wanted : std::string{}));
    if (!made) return it->second.get();
    const std::string path = under_symfs(dso);
    try {
      if (dso.starts_with("/tmp/perf-") && dso.ends_with(".map")) {
        it->second = std::make_unique<SymbolTable>(SymbolTable::from_perf_map(read_file(path).view()));
      } else {
        if (auto from = sources(dso, path, wanted))
          it->second = std::make_unique<SymbolTable>(
              SymbolTable::from_elf(from->symbols, from->runtime, options.demangle));
      }
    } catch (const Error& e) {
      problems.push_back(e.message());
    }
    return it->second.get();
  }
};

Symbolizer::Symbolizer(SymbolOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (!impl_->options.debuginfod.empty()) detail::use_debuginfod(impl_->options.debuginfod);
  // libelf refuses every file until a version is set: set here, before the first file of any kind
  if (elf_version(EV_CURRENT) == EV_NONE)
    impl_->problems.push_back("libelf is out of date: no binary can be read");
}
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;
Symbolizer::~Symbolizer() = default;

void Symbolizer::apply(const Record& r) {
  Impl& I = *impl_;
  if (auto* m = r.get<Mmap2>()) {
    if ((r.misc & misc_mmap_build_id) && !m->build_id.empty()) build_id(m->filename, m->build_id);
    I.map(m->pid, r.misc, m->addr, m->len, m->pgoff, m->prot, m->flags, m->filename);
  } else if (auto* b = r.get<BuildId>()) {
    build_id(b->filename, b->build_id);
  } else if (auto* m1 = r.get<Mmap>()) {
    // An MMAP record says no protection: perf takes it for code unless it is a data mapping.
    I.map(m1->pid, r.misc, m1->addr, m1->len, m1->pgoff, (r.misc & misc_mmap_data) ? 0 : prot_exec, 0,
          m1->filename);
  } else if (auto* t = r.get<Task>(); t && r.kind() == Type::fork && t->pid != t->ppid) {
    // A new process: a copy of its parent's mappings (a new thread shares its process's).
    ++I.generation;
    auto parent = I.processes.find(t->ppid);
    I.processes[t->pid] = parent != I.processes.end() && parent->second
                              ? std::make_shared<Maps>(*parent->second)
                              : std::make_shared<Maps>();
  }
}

Location Symbolizer::locate(std::uint32_t pid, std::uint64_t address, std::uint16_t misc) {
  Impl& I = *impl_;
  Location out;
  const std::uint16_t mode = misc & misc_cpumode_mask;
  const Maps* maps = nullptr;
  if (mode == misc_kernel || mode == misc_guest_kernel || mode == misc_hypervisor) {
    maps = &I.kernel;
  } else if (auto it = I.processes.find(pid); it != I.processes.end()) {
    maps = it->second.get();
  }
  if (!maps) return out;
  Impl::Cached& c =
      I.cache[(address ^ (address >> 12) ^ reinterpret_cast<std::uintptr_t>(maps)) % Impl::cache_size];
  if (c.generation == I.generation && c.maps == maps && c.address == address) return c.where;
  out = I.locate_in(*maps, address);
  c = {maps, address, I.generation, out};
  return out;
}

std::uint64_t Symbolizer::generation() const noexcept { return impl_->generation; }

Location Symbolizer::Impl::locate_in(const Maps& maps, std::uint64_t address) {
  Impl& I = *this;
  Location out;
  if (&maps == &I.kernel) return I.locate_kernel(address);
  const auto* hit = find(maps, address);
  if (!hit) return out;
  const Mapping& m = hit->second;
  out.dso = *m.dso;
  switch (m.kind) {
    case MapKind::kernel:
    case MapKind::identity: out.dso_address = address; break;
    case MapKind::file:
    case MapKind::vdso: out.dso_address = address - hit->first + m.pgoff; break;
  }
  const SymbolTable* t = nullptr;
  if (m.kind == MapKind::vdso) {
    t = I.vdso_symbols();
  } else if (m.kind == MapKind::identity && !(m.dso->starts_with("/tmp/perf-") && m.dso->ends_with(".map"))) {
    return out;  // memory of no file (//anon, [heap], [stack], /dev/zero): no symbols, as for perf
  } else if (auto known = I.by_name.find({m.dso, m.build_id}); known != I.by_name.end()) {
    t = known->second;
  } else {
    t = I.by_name[{m.dso, m.build_id}] = I.table(*m.dso, m.build_id);
  }
  if (t) out.symbol = t->find(out.dso_address);
  return out;
}

std::optional<MappedBinary> Symbolizer::binary_at(std::uint32_t pid, std::uint64_t address) {
  Impl& I = *impl_;
  auto process = I.processes.find(pid);
  if (process == I.processes.end()) return std::nullopt;
  const auto* hit = find(*process->second, address);
  if (!hit) return std::nullopt;
  const Mapping& m = hit->second;
  if (m.kind == MapKind::vdso) {  // the vdso the recording names (perf's build-id cache), else this one
    if (!I.vdso_symbols() || I.vdso_path.empty()) return std::nullopt;
    return MappedBinary{hit->first, m.end, m.pgoff, *m.dso, I.vdso_path, {}};
  }
  if (m.kind != MapKind::file) return std::nullopt;
  auto [it, made] = I.files.try_emplace({m.dso, m.build_id});
  if (made) {
    const std::string* wanted = m.build_id;
    if (!wanted)
      if (auto b = I.build_ids.find(*m.dso); b != I.build_ids.end()) wanted = &b->second;
    std::size_t said = I.problems.size();  // what cannot be read is said when its symbols are asked for
    it->second = I.sources(*m.dso, I.under_symfs(*m.dso), wanted);
    I.problems.resize(said);
  }
  if (!it->second) return std::nullopt;
  MappedBinary out{hit->first, m.end, m.pgoff, *m.dso, it->second->runtime, {}};
  if (it->second->symbols != it->second->runtime) out.debug_file = it->second->symbols;
  return out;
}

std::string Symbolizer::srcline(std::uint32_t pid, std::uint64_t address, std::uint16_t misc) {
  Location where = locate(pid, address, misc);
  if (where.dso.empty()) return {};
  const std::uint16_t mode = misc & misc_cpumode_mask;
  std::uint64_t own = where.dso_address;  // perf's map__rip_2objdump
  if (mode != misc_kernel && mode != misc_guest_kernel && mode != misc_hypervisor) {
    if (auto bin = binary_at(pid, address); bin && !bin->file.empty()) {
      own += impl_->lines.text_offset(bin->file);
      const std::string& source = bin->debug_file.empty() ? bin->file : bin->debug_file;
      if (impl_->lines.has_lines(source)) {  // what addr2line answers: a line, else "??:?" in a function
        if (auto line = impl_->lines.line(source, own)) return *line;
        // (a PLT entry's name is perf's, made from the relocations: addr2line knows no function there)
        if (where.symbol && !where.symbol->name.ends_with("@plt")) return "??:0";
      }
    }
  }
  // as perf when addr2line has no line: the binary's short name and the address
  std::string_view dso = where.dso;
  if (dso.front() != '[') dso = dso.substr(dso.rfind('/') + 1);
  return fmt::format("{}[{:x}]", dso, own);
}

const std::vector<Symbolizer::InlinedLocation>& Symbolizer::inlined(std::uint32_t pid, std::uint64_t address,
                                                                    std::uint16_t misc) {
  Impl& I = *impl_;
  static const std::vector<InlinedLocation> none;
  const std::uint16_t mode = misc & misc_cpumode_mask;
  if (mode == misc_kernel || mode == misc_guest_kernel || mode == misc_hypervisor) return none;
  const Location where = locate(pid, address, misc);
  // perf's append_inlines: a symbol, a binary named by its path (not [vdso], not a JIT's map)
  if (!where.symbol || where.dso.empty() || where.dso.front() == '[') return none;
  auto [it, made] = I.inlined.try_emplace({where.symbol, where.dso_address});
  if (!made) return it->second;
  auto bin = binary_at(pid, address);
  if (!bin || bin->file.empty()) return it->second;
  const std::string& source = bin->debug_file.empty() ? bin->file : bin->debug_file;
  if (!I.lines.has_lines(source)) return it->second;  // perf asks addr2line only then
  const std::uint64_t own = where.dso_address + I.lines.text_offset(bin->file);  // perf's objdump address
  for (InlineFrame& f : I.lines.inlines(source, own)) {
    // no function of the DWARF covers it: binutils names the ELF symbol there, as perf's own
    std::string name = f.function == "??" ? where.symbol->name : detail::demangled_name(f.function.c_str());
    if (name.empty()) name = std::move(f.function);
    Location l = where;
    if (name != where.symbol->name) {
      auto [sym, added] = I.inlined_names.try_emplace({where.symbol, name});
      if (added) {
        Symbol& made_sym = I.inlined_symbols.emplace_back(*where.symbol);
        made_sym.name = std::move(name);
        made_sym.module.clear();
        made_sym.object = false;
        made_sym.inlined = true;
        sym->second = &made_sym;
      }
      l.symbol = sym->second;
    }
    const std::size_t slash = f.file.rfind('/');  // perf's srcline_from_fileline: the base name
    it->second.push_back({l, fmt::format("{}:{}", std::string_view(f.file).substr(slash + 1), f.line)});
  }
  return it->second;
}

std::string Symbolizer::recorded_build_id(std::string_view path) const {
  auto b = impl_->build_ids.find(std::string(path));
  return b == impl_->build_ids.end() ? std::string() : b->second;
}

void Symbolizer::build_id(std::string_view path, std::span<const std::byte> id) {
  std::string hex;
  for (std::byte b : id) hex += fmt::format("{:02x}", static_cast<unsigned>(b));
  impl_->build_ids[std::string(path)] = std::move(hex);
}

void Symbolizer::read_build_ids(std::span<const std::byte> section) {
  for (const BinaryBuildId& b : read_build_id_section(section)) build_id(b.name, b.build_id);
}

std::string_view Symbolizer::binary_of(std::uint32_t pid, std::uint64_t address, std::uint16_t misc) {
  Impl& I = *impl_;
  const std::uint16_t mode = misc & misc_cpumode_mask;
  const Maps* maps = nullptr;
  if (mode == misc_kernel || mode == misc_guest_kernel || mode == misc_hypervisor)
    maps = &I.kernel;
  else if (auto it = I.processes.find(pid); it != I.processes.end())
    maps = it->second.get();
  const auto* hit = maps ? find(*maps, address) : nullptr;
  return hit ? std::string_view(*hit->second.dso) : std::string_view{};
}

const SymbolTable* Symbolizer::table(std::string_view path) { return impl_->table(path); }

Location Symbolizer::locate_build_id(std::span<const std::byte> id, std::uint64_t offset) {
  Impl& I = *impl_;
  Location out;
  std::string hex;
  for (std::byte b : id) hex += fmt::format("{:02x}", static_cast<unsigned>(b));
  if (hex.size() < 4) return out;
  std::vector<std::string> candidates;
  if (auto ids = buildid_dir())
    candidates.push_back(fmt::format("{}/.build-id/{}/{}/elf", *ids, hex.substr(0, 2), hex.substr(2)));
  candidates.push_back(
      I.under_symfs(fmt::format("/usr/lib/debug/.build-id/{}/{}.debug", hex.substr(0, 2), hex.substr(2))));
  for (const auto& c : candidates) {
    if (::access(c.c_str(), R_OK) != 0 || file_build_id(c) != hex) continue;
    auto [it, made] = I.tables.try_emplace("build-id:" + hex);
    if (made) {
      try {
        it->second = std::make_unique<SymbolTable>(SymbolTable::from_elf(c, c, I.options.demangle));
      } catch (const Error& e) {
        I.problems.push_back(e.message());
      }
    }
    out.dso = *I.name(c);
    out.dso_address = offset;
    if (it->second) out.symbol = it->second->find(offset);
    return out;
  }
  return out;
}

const std::vector<std::string>& Symbolizer::problems() const { return impl_->problems; }

}  // namespace perfspec::record
