// SPDX-License-Identifier: MIT
#pragma once
// Addresses of a recording made into names, as perf's machine, maps and symbols make them (Linux 6.12
// tools/perf/util/{machine,maps,symbol,symbol-elf}.c): which binary an address of a process lies in,
// from the file's MMAP and MMAP2 records, and which function of it, from the binary's ELF symbol
// table (its separate debug file's when one is installed), the kernel's /proc/kallsyms, or a JIT's
// /tmp/perf-PID.map. What perf script prints as `ip sym+off (dso)`.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "perfspec/record.hpp"

namespace perfspec::record {

/// Every member has an initializer, so that `SymbolOptions{.symfs = ...}` names only what it sets.
struct SymbolOptions {
  /// Binaries are looked up under this folder (perf's --symfs): how a file recorded in a container or
  /// a chroot is read from outside. Empty: the paths as recorded.
  std::string symfs{};
  /// The kernel's symbols (perf's --kallsyms). Empty: /proc/kallsyms.
  std::string kallsyms{};
  /// Names demangled as perf shows them (record::demangle).
  bool demangle = true;
  /// debuginfod servers asked for a binary's debug file by its build id when none with a symbol table
  /// is found here (perf record's --debuginfod): empty, never (perf's default); "system", the servers
  /// the DEBUGINFOD_URLS environment variable names; else their URLs, set as DEBUGINFOD_URLS for the
  /// process (as perf sets them). Files come through elfutils' client (libdebuginfod.so.1, loaded when
  /// first needed) and its cache; a server that cannot be reached leaves the binary's own symbols.
  std::string debuginfod{};
};

/// An ELF symbol's name as perf 6.12 shows it: a C++ name demangled (parameters included), and when
/// that reads as a Rust path with its hash (rustc's legacy mangling), as Rust writes it without the
/// hash (`_ZN4core3fmt5write17h4b8c6e0f1a2d3c5bE` is `core::fmt::write`); otherwise an OCaml name
/// (`camlStdlib__List__map_413` is `Stdlib.List.map_413`) or a Java method's signature without its
/// return type (`Ljava/lang/String;hashCode()I` is `java.lang.String.hashCode()`). The name itself
/// when none applies, as for Rust's v0 mangling (`_R...`), which perf 6.12 does not read.
std::string demangle(const std::string& name);

/// One symbol: its name (demangled) and the addresses it covers, [start, end), in its binary's terms:
/// file offsets of an ELF binary (perf's adjusted symbols), absolute addresses of the kernel's and of
/// a JIT map's.
struct Symbol {
  std::string name;
  std::uint64_t start = 0, end = 0;
  std::string module{};  ///< a kernel module's symbol: the module, as perf names its dso (`[xfs]`)
  /// A data object (ELF STT_OBJECT; kallsyms' types other than text and weak): perf report shows the
  /// offset into it.
  bool object = false;
  /// A function inlined at the address it was found for (Symbolizer::inlined): no symbol of the
  /// binary's, but the name its debug information gives, with the start and end of the symbol it was
  /// inlined into (perf's sym->inlined; perf prints ` (inlined)` after it and no binary).
  bool inlined = false;
};

/// One function of a chain of inlined calls at an address, as `addr2line -i -f` prints it: the
/// function's name as the debug information has it (the linkage name where there is one, so C++
/// names are mangled) and the source line in it: for the innermost, the address's own line; for each
/// function around it, the line of the call that was inlined.
struct InlineFrame {
  std::string function;  ///< `??` when no function's debug information covers the address
  std::string file;      ///< as the line table names it (a path)
  unsigned line = 0;
};

/// The symbols of one binary, sorted by start, one per start (perf's choice among aliases).
class SymbolTable {
 public:
  /// Reads an ELF file's .symtab, else its .dynsym: functions, objects and text labels, at file
  /// offsets (st_value moved by its segment's p_vaddr - p_offset). `runtime` is the binary itself when
  /// `path` is its separate debug file (whose segments the offsets are taken from). Throws Error (io)
  /// when the file cannot be read or is no ELF file.
  static SymbolTable from_elf(const std::string& path, const std::string& runtime = {}, bool demangle = true);
  /// The text of /proc/kallsyms: text and data symbols (types T, W, D, B in either case), module
  /// symbols with their `[module]`. Throws Error (io) with `name` and the line for a malformed line.
  static SymbolTable from_kallsyms(std::string_view text, std::string_view name = "/proc/kallsyms");
  /// The text of a JIT's /tmp/perf-PID.map: `START SIZE NAME` lines, hexadecimal. A malformed line
  /// ends the reading there, as perf's does.
  static SymbolTable from_perf_map(std::string_view text);

  /// The symbol covering `address`, nullptr when none does.
  const Symbol* find(std::uint64_t address) const;
  const std::vector<Symbol>& symbols() const { return symbols_; }
  SymbolTable() = default;
  /// Made of symbols in any order (a caller's own): sorted and fixed up as perf does.
  explicit SymbolTable(std::vector<Symbol> symbols);

  // internal: what the choice among symbols at one address weighs besides the symbol itself (perf's
  // choose_best_symbol)
  struct Weight {
    unsigned char binding = 0;  ///< STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2
    bool ifunc = false;         ///< STT_GNU_IFUNC
  };
  /// `weights[i]` weighs `symbols[i]`; the table is made in `symbols`' own storage when they come
  /// sorted. `ifunc`, when given, gets per symbol kept whether it or a symbol dropped for it is an IFUNC.
  static SymbolTable from_candidates(std::vector<Symbol> symbols, std::vector<Weight> weights, bool kallsyms,
                                     std::vector<char>* ifunc = nullptr);

 private:
  std::vector<Symbol> symbols_;
};

/// Source lines of addresses of ELF files with DWARF line tables, each file opened once (elfutils'
/// libdw). Not thread-safe.
class SourceLines {
 public:
  SourceLines();
  SourceLines(SourceLines&&) noexcept;
  SourceLines& operator=(SourceLines&&) noexcept;
  ~SourceLines();
  /// `file.c:42` for the virtual address `vaddr` of the file at `path`: the row of its line table at
  /// or before the address in the compilation unit covering it, the source file's base name; nullopt
  /// when the file has no line table or no unit covers the address.
  std::optional<std::string> line(const std::string& path, std::uint64_t vaddr);
  /// What perf adds to an address in file-offset terms to make it the file's own (objdump) address:
  /// its .text section's address less its offset; 0 for a file without one.
  std::uint64_t text_offset(const std::string& path);
  /// Whether the file at `path` has a line table (a .debug_line section).
  bool has_lines(const std::string& path);
  /// The chain of inlined calls at `vaddr`, innermost first, the function they were all inlined into
  /// last (one frame where nothing is inlined): what binutils' `addr2line -i -f` answers, from the
  /// DWARF of the functions (DW_TAG_subprogram, DW_TAG_inlined_subroutine with its DW_AT_call_file and
  /// DW_AT_call_line) whose ranges hold the address. Empty when the line table has no row for it
  /// (addr2line's `??:0`); the chain ends before a call site the DWARF does not give.
  std::vector<InlineFrame> inlines(const std::string& path, std::uint64_t vaddr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An ELF binary mapped into a process, and the files of the build recorded: what unwinding a stack
/// reads (its .eh_frame, a separate debug file's .debug_frame).
struct MappedBinary {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  std::string_view dso;    ///< as the recording names it
  std::string file;        ///< the binary (under symfs), of the build recorded
  std::string debug_file;  ///< its separate debug file, when one was found (else empty)
};

/// Where an address lies: the binary (perf's dso) and the symbol.
struct Location {
  /// The binary as perf names it: its path as recorded, `[kernel.kallsyms]`, `[vdso]`, a module's
  /// `[name]`, `/tmp/perf-PID.map` for anonymous memory. Empty when no mapping covers the address
  /// (perf prints `[unknown]`).
  std::string_view dso;
  /// nullptr when the binary has no symbol there, or could not be read (perf prints `[unknown]`).
  const Symbol* symbol = nullptr;
  /// The address in the binary's terms, what its symbols are in (perf's map_ip).
  std::uint64_t dso_address = 0;
  /// How far past its symbol's start the address is (perf's symoff).
  std::uint64_t symbol_offset() const { return symbol ? dso_address - symbol->start : 0; }
};

/// The address spaces of a recording's processes and the kernel, built from its records in time
/// order, and the symbols of what they map. Each binary is read once, when an address in it is first
/// located; one that cannot be read has no symbols (and is read no more).
///
/// Example:
/// ```
/// perfspec::record::Symbolizer symbols;
/// perfspec::record::for_each_in_time_order(file, [&](const Record& r) {
///   symbols.apply(r);
///   if (auto* s = r.get<perfspec::record::Sample>()) {
///     auto where = symbols.locate(s->pid, s->ip, r.misc);
///     std::printf("%s\n", where.symbol ? where.symbol->name.c_str() : "[unknown]");
///   }
/// });
/// ```
class Symbolizer {
 public:
  explicit Symbolizer(SymbolOptions options = {});
  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;
  ~Symbolizer();

  /// Follows the record: MMAP and MMAP2 map a binary into a process (or the kernel), FORK gives a new
  /// process a copy of its parent's mappings, an MMAP2 or HEADER_BUILD_ID with a build id says which
  /// build of a binary was mapped. Other records change nothing.
  void apply(const Record& record);
  /// The build ids of a file's HEADER_BUILD_ID section (PerfData::feature(Feature::build_id)): a
  /// binary is read only when its build id is the one recorded (as perf reads it), from the path, a
  /// separate debug file or perf's build-id cache (~/.debug). Throws DecodeError for a section that
  /// does not follow the format.
  void read_build_ids(std::span<const std::byte> section);
  /// That the binary recorded at `path` had `build_id`.
  void build_id(std::string_view path, std::span<const std::byte> build_id);
  /// Where `address` of process `pid` lies, with the cpumode of the record's misc (kernel addresses
  /// in the kernel's mappings, user addresses in the process's).
  Location locate(std::uint32_t pid, std::uint64_t address, std::uint16_t misc);
  /// A number that changes whenever apply() changes a mapping (an MMAP, an MMAP2, a FORK's copy): while
  /// it stays the same, locate() answers the same for the same pid, address and cpumode, so a caller
  /// may keep what it made of an answer (a printed frame) under that key.
  std::uint64_t generation() const noexcept;
  /// perf 6.12's srcline of `address` (perf script's srcline field): `file.c:42` (the file's base
  /// name), the row of its binary's line table (.debug_line, in its separate debug file when symbols
  /// come from one) at the address; `??:0` where the table has no row for it but a symbol covers it
  /// (what addr2line says there); else the binary's short name and the address in its own terms
  /// (`libc.so.6[8ba7f]`, `[kernel.kallsyms][ffffffff81775b9a]`); empty when no mapping covers the
  /// address (perf prints nothing).
  std::string srcline(std::uint32_t pid, std::uint64_t address, std::uint16_t misc);
  /// One frame of Symbolizer::inlined.
  struct InlinedLocation {
    Location where;
    /// `file.c:42`, the line in this function: for the innermost, the address's own line; for each
    /// function around it, the line of the call inlined there (perf prints it for script's srcline).
    std::string srcline;
  };
  /// perf 6.12's frames for `address` with its inlined calls shown (perf script's and perf report's
  /// `--inline`, on by default, for the user frames perf unwinds from DWARF): one Location per
  /// function of SourceLines::inlines (names demangled), innermost first. The function they were
  /// inlined into is the binary's own symbol when its name is that symbol's; every other is a Symbol
  /// with `inlined` set, spanning the binary's symbol, the same object for the same name there.
  /// Empty where perf shows the frame as it is: no symbol there, a kernel address, the vdso, a JIT
  /// map, a binary without a line table (.debug_line), no row for the address. The reference is
  /// valid until the Symbolizer is destroyed.
  const std::vector<InlinedLocation>& inlined(std::uint32_t pid, std::uint64_t address, std::uint16_t misc);
  /// The ELF binary mapped at `address` of process `pid` (user space), with the files of its
  /// recorded build (the vdso's from perf's build-id cache, else this process's when it is that
  /// build); nullopt for memory of no file, or a binary of which no file of that build can be read.
  std::optional<MappedBinary> binary_at(std::uint32_t pid, std::uint64_t address);
  /// The binary only (Location::dso, no symbol: nothing is read): what a recording's post-processing
  /// needs to know which binaries its samples hit.
  std::string_view binary_of(std::uint32_t pid, std::uint64_t address, std::uint16_t misc);
  /// The symbols of the binary at `path` (under symfs), read on first use; nullptr when it cannot be
  /// read.
  const SymbolTable* table(std::string_view path);
  /// The symbol at file offset `offset` of the binary whose build id is `build_id`, wherever it is
  /// kept: perf's build-id cache (~/.debug/.build-id) or /usr/lib/debug/.build-id (under symfs).
  /// Location::dso is the file it was found in; empty when there is none.
  Location locate_build_id(std::span<const std::byte> build_id, std::uint64_t offset);
  /// The build id recorded for the binary at `path` (an MMAP2 with one, HEADER_BUILD_ID, build_id()),
  /// as lowercase hex; empty when none was.
  std::string recorded_build_id(std::string_view path) const;
  /// Binaries that could not be read, each once, with why.
  const std::vector<std::string>& problems() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The threads of a recording and their names, as perf's machine keeps them (Linux 6.12
/// tools/perf/util/machine.c) for perf script and perf report: a thread is made by the first record
/// that names its tid, with that record's pid; COMM names it; FORK makes the child anew (forgetting a
/// thread the tid had before: a pid reused) and gives it the parent's name only when the parent was
/// named (else it is `:CHILD`, never the parent's `:PARENT`), after forgetting a "parent" whose pid is
/// not the FORK's ppid; EXIT forgets the thread. A thread never named shows as `:TID`; tid 0 is
/// `swapper`. Feed it the records in time order, as Symbolizer.
class Threads {
 public:
  /// `keep_exited`: a thread that exited keeps its name for the records after its EXIT (perf report
  /// keeps exited threads; perf script does for a file with an AUX area trace), until a FORK makes its
  /// tid anew. Otherwise EXIT forgets it, as perf script.
  explicit Threads(bool keep_exited = false);
  /// Follows a COMM, FORK or EXIT record; other records change nothing.
  void apply(const Record& record);
  /// The name of thread `tid` (of process `pid`) now, made unnamed when it is not known. The view is
  /// valid until the next apply().
  std::string_view name(std::int32_t pid, std::int32_t tid) {
    // The last thread asked for, remembered: samples come in runs of one thread.
    if (last_ && last_tid_ == tid) return *last_;
    last_tid_ = tid;
    last_ = &findnew(pid, tid).name;
    return *last_;
  }
  /// The pid of thread `tid` as the records made it known, -1 when none did.
  std::int32_t pid_of(std::int32_t tid) const;

 private:
  struct Thread {
    std::string name;
    std::int32_t pid = -1;
    bool named = false;
  };
  Thread& findnew(std::int32_t pid, std::int32_t tid);
  std::unordered_map<std::int32_t, Thread> threads_;
  std::int32_t last_tid_ = 0;
  const std::string* last_ = nullptr;
  bool keep_exited_ = false;
};

/// The GNU build id of an ELF file (its NT_GNU_BUILD_ID note), empty when it has none or is no
/// readable ELF file.
std::vector<std::byte> elf_build_id(const std::string& path);
/// The running kernel's build id (/sys/kernel/notes), empty when it cannot be read.
std::vector<std::byte> kernel_build_id();
/// This process's vdso's build id (the kernel maps the same vdso into every process).
std::vector<std::byte> vdso_build_id();

/// The build-id cache: `$PERF_BUILDID_DIR` (the variable perf sets for the scripts it runs), else
/// `~/.debug`, perf's own default (perf takes another only from its --buildid-dir or its config's
/// buildid.dir); nullopt without either.
std::optional<std::string> buildid_dir();
/// The events of perf's probe cache as `perf list sdt` lists them: each cached probe (the SDT notes
/// `perf buildid-cache --add` found in a binary, the probes of `perf probe --cache`) of each binary of
/// the build-id cache that is still there with that build (the kernel: the running one), as
/// GROUP:EVENT, sorted; a name cached for several binaries is listed for each as
/// GROUP:EVENT@PATH(its build id's first 12 digits). Nothing is written (perf creates empty probes
/// files as it reads).
///
/// Example: `for (const auto& e : record::cached_probe_events()) std::puts(e.c_str());  //
/// sdt_libstdcxx:throw`
std::vector<std::string> cached_probe_events();

/// One binary of HEADER_BUILD_ID: its name as the recording's mappings name it, its build id, and
/// whether it is the kernel's (`[kernel.kallsyms]`, a module).
struct BinaryBuildId {
  std::string name;
  std::vector<std::byte> build_id;
  bool kernel = false;
};
/// HEADER_BUILD_ID's section as perf writes it (perf_record_header_build_id entries: misc KERNEL or
/// USER with BUILD_ID_SIZE, pid -1 for the host, 20 bytes of id and its size, the name NUL-padded to
/// 64 bytes). Binaries without a build id are left out.
std::vector<std::byte> build_id_section(const std::vector<BinaryBuildId>& binaries);
/// The binaries of a HEADER_BUILD_ID section (PerfData::feature(Feature::build_id)), in its order: the
/// inverse of build_id_section (an id of the size its entry gives, 20 bytes without misc
/// BUILD_ID_SIZE; `kernel` for the kernel's and a guest kernel's). Throws DecodeError for an entry
/// that does not fit the section.
std::vector<BinaryBuildId> read_build_id_section(std::span<const std::byte> section);

}  // namespace perfspec::record
