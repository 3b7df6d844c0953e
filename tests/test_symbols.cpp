// SPDX-License-Identifier: MIT
// Symbols: perf's rules for which symbol names an address (kallsyms, JIT maps, ELF tables with their
// fix-ups), on this test program's own binary and on texts shaped as the kernel and JITs write them;
// and the address spaces a recording's MMAP2 and FORK records make.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/symbols.hpp"
#include "record/elf_files.hpp"
#include "tests/support.hpp"

namespace symbols_test {
// Functions of this binary, looked up by their addresses: not inlined, not merged.
extern "C" __attribute__((noinline, used)) int symbols_test_marker(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}
template <typename T> __attribute__((noinline, used)) T twice(T x) {
  asm volatile("" ::: "memory");
  return x + x;
}
template int twice<int>(int);
}  // namespace symbols_test

namespace {

using perfspec::record::Location;
using perfspec::record::Mmap2;
using perfspec::record::Record;
using perfspec::record::Symbol;
using perfspec::record::Symbolizer;
using perfspec::record::SymbolTable;
using perfspec::record::Task;

std::string name_at(const SymbolTable& t, std::uint64_t address) {
  const Symbol* s = t.find(address);
  return s ? s->name : "(none)";
}

// An MMAP2 record of process `pid`, as a recording holds it.
Record mmap2(std::uint32_t pid, std::uint64_t start, std::uint64_t len, std::uint64_t pgoff,
             std::string_view file, std::uint32_t prot = 5,
             std::uint16_t misc = perfspec::record::misc_user) {
  Record r;
  r.type = static_cast<std::uint32_t>(perfspec::record::Type::mmap2);
  r.misc = misc;
  Mmap2 m;
  m.pid = m.tid = pid;
  m.addr = start, m.len = len, m.pgoff = pgoff;
  m.prot = prot;
  m.flags = 2;  // MAP_PRIVATE
  m.filename = file;
  r.body = m;
  return r;
}

Record fork(std::uint32_t pid, std::uint32_t ppid) {
  Record r;
  r.type = static_cast<std::uint32_t>(perfspec::record::Type::fork);
  r.body = Task{pid, ppid, pid, ppid, 0};
  return r;
}

// The mapping of this program's own code: start, end, file offset, path (from /proc/self/maps).
struct OwnCode {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
};
OwnCode own_code(std::uint64_t inside) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    OwnCode c;
    char perms[8] = {};
    char path[4096] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %4095s", &c.start, &c.end, perms, &c.pgoff, path) <
        5)
      continue;
    if (inside >= c.start && inside < c.end) {
      c.path = path;
      return c;
    }
  }
  return {};
}

std::uint64_t address_of(int (*f)(int)) {
  return reinterpret_cast<std::uint64_t>(reinterpret_cast<void*>(f));
}

}  // namespace

TEST_CASE(
    "symbols: kallsyms as perf reads it: which types, which of several at an address, where each ends") {
  // The choice at one address (perf's choose_best_symbol), in order: a symbol with a size (after the
  // fix-up, the last of a run at one address is the one that reaches the next address), then not
  // weak, then global, then fewer leading underscores, then the longer name, then the first.
  auto t = SymbolTable::from_kallsyms(
      "ffffffff81000000 T _text\n"
      "ffffffff81000000 T startup_64\n"
      "ffffffff81000100 W weak_hook\n"
      "ffffffff81000100 t local_hook\n"
      "ffffffff81000200 t local_fn\n"
      "ffffffff81000200 T global_fn\n"
      "ffffffff81000300 T __two\n"
      "ffffffff81000300 T _one\n"
      "ffffffff81000400 T short\n"
      "ffffffff81000400 T longer\n"
      "ffffffff81000500 T first\n"
      "ffffffff81000500 T again\n"
      "ffffffff81000600 A absolute\n"
      "ffffffff81000700 d some_data\n"
      "ffffffff81000800 b some_bss\n"
      "ffffffff81000900 r read_only\n"
      "ffffffff81000a00 T _etext\n"
      "ffffffffc0000000 t mod_fn\t[xfs]\n");
  // In each pair at one address only the second gets a size from the fix-up (it ends where the next
  // address starts; the first ends where the second starts): the one with a size is kept.
  CHECK(name_at(t, 0xffffffff81000000) == "startup_64");
  CHECK(name_at(t, 0xffffffff81000100) == "local_hook");
  CHECK(name_at(t, 0xffffffff81000250) == "global_fn");
  CHECK(name_at(t, 0xffffffff81000300) == "_one");
  CHECK(name_at(t, 0xffffffff81000400) == "longer");
  CHECK(name_at(t, 0xffffffff81000500) == "again");
  CHECK(name_at(t, 0xffffffff81000650) == "again");  // 'A' is no symbol perf keeps: the one before reaches on
  CHECK(name_at(t, 0xffffffff81000700) == "some_data");
  CHECK(name_at(t, 0xffffffff81000800) == "some_bss");
  CHECK(name_at(t, 0xffffffff81000900) == "some_bss");  // 'r' neither
  // The kernel's last symbol before a module's ends a page later, not at the module.
  CHECK(name_at(t, 0xffffffff81001fff) == "_etext");
  CHECK(name_at(t, 0xffffffff81002000) == "(none)");
  const Symbol* m = t.find(0xffffffffc0000010);
  REQUIRE(m);
  CHECK(m->name == "mod_fn");
  CHECK(m->module == "[xfs]");
  CHECK(m->end == 0xffffffffc0001000);  // the last symbol: to the page after its start
}

TEST_CASE("symbols: the choice among symbols of one size, by binding, underscores and length") {
  std::vector<Symbol> c{
      {"weak", 0x100, 0x110},  {"local", 0x100, 0x110}, {"_a", 0x200, 0x210},    {"b", 0x200, 0x210},
      {"__x", 0x300, 0x310},   {"_yy", 0x300, 0x310},   {"short", 0x400, 0x410}, {"longest", 0x400, 0x410},
      {"first", 0x500, 0x510}, {"tie_2", 0x500, 0x510}, {"zero", 0x600, 0x600},  {"sized", 0x600, 0x610},
  };
  std::vector<SymbolTable::Weight> w{{2}, {0}, {1}, {0}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {2}};
  auto t = SymbolTable::from_candidates(c, w, false);
  CHECK(name_at(t, 0x100) == "local");    // not weak, before global or local
  CHECK(name_at(t, 0x200) == "_a");       // global
  CHECK(name_at(t, 0x300) == "_yy");      // fewer leading underscores
  CHECK(name_at(t, 0x400) == "longest");  // the longer name
  CHECK(name_at(t, 0x500) == "first");    // equal in all: the first read
  CHECK(name_at(t, 0x600) == "sized");    // a size, even weak
  CHECK(t.symbols().size() == 6);
  CHECK(name_at(t, 0x50f) == "first");
  CHECK(name_at(t, 0x510) == "(none)");  // [start, end)

  // Unsorted, as ELF tables come: equal starts keep the order read
  std::vector<Symbol> u{
      {"tie_1", 0x500, 0x510}, {"low", 0x100, 0x110}, {"tie_2", 0x500, 0x510}, {"mid", 0x300, 0x300}};
  auto t2 = SymbolTable::from_candidates(u, std::vector<SymbolTable::Weight>(4, {1}), false);
  REQUIRE(t2.symbols().size() == 3);
  CHECK(t2.symbols()[0].name == "low");
  CHECK(t2.symbols()[1].name == "mid");
  CHECK(t2.symbols()[1].end == 0x500);  // no size: to the next symbol
  CHECK(t2.symbols()[2].name == "tie_1");
}

TEST_CASE("symbols: a malformed kallsyms line is an error naming the file and the line") {
  try {
    (void)SymbolTable::from_kallsyms("ffffffff81000000 T _text\nnot a line\n", "my.kallsyms");
    FAIL("no error");
  } catch (const perfspec::Error& e) {
    CHECK(std::string(e.message()) == "my.kallsyms:2: not a kallsyms line: 'not a line'");
  }
}

TEST_CASE("symbols: a JIT's perf map: START SIZE NAME, hexadecimal, until a line that is none") {
  auto t = SymbolTable::from_perf_map(
      "7f0000001000 40 LazyCompile:~main /app/index.js:1\n"
      "0x7f0000002000 0x20 Builtin:ArgumentsAdaptor\n"
      "garbage\n"
      "7f0000003000 10 never read\n");
  CHECK(name_at(t, 0x7f0000001000) == "LazyCompile:~main /app/index.js:1");
  CHECK(name_at(t, 0x7f000000103f) == "LazyCompile:~main /app/index.js:1");
  CHECK(name_at(t, 0x7f0000001040) == "(none)");
  CHECK(name_at(t, 0x7f0000002010) == "Builtin:ArgumentsAdaptor");
  CHECK(name_at(t, 0x7f0000003000) == "(none)");
}

TEST_CASE("symbols: this program's own functions, by file offset, demangled as perf 6.12 shows them") {
  const std::uint64_t marker = address_of(&symbols_test::symbols_test_marker);
  OwnCode code = own_code(marker);
  REQUIRE(!code.path.empty());
  auto t = SymbolTable::from_elf(code.path);
  const std::uint64_t offset = marker - code.start + code.pgoff;
  const Symbol* s = t.find(offset);
  REQUIRE(s);
  CHECK(s->name == "symbols_test_marker");
  CHECK(s->start == offset);
  CHECK(t.find(offset + 3) == s);
  const std::uint64_t tw = address_of(&symbols_test::twice<int>);
  const Symbol* d = t.find(tw - code.start + code.pgoff);
  REQUIRE(d);
  CHECK(d->name == "int symbols_test::twice<int>(int)");
  auto raw = SymbolTable::from_elf(code.path, {}, false);
  REQUIRE(raw.find(tw - code.start + code.pgoff));
  CHECK(raw.find(tw - code.start + code.pgoff)->name == "_ZN12symbols_test5twiceIiEET_S1_");
}

// Each name as perf 6.12 showed it in `perf report --sort sym` of a program whose functions carry these
// names (tests/workload/names_workload.c, compared with perf in tests/cli/perf_script_side_by_side.py).
TEST_CASE("symbols: names demangled as perf 6.12 shows them: C++, Rust's legacy paths, OCaml, Java") {
  const std::pair<const char*, const char*> cases[] = {
      {"_ZN12symbols_test5twiceIiEET_S1_", "int symbols_test::twice<int>(int)"},
      // Rust: the hash is left out, `..` is `::`, `.` is `-`, escapes are characters, and the `_` before
      // a part that starts with an escape goes
      {"_ZN4core3fmt5write17h4b8c6e0f1a2d3c5bE", "core::fmt::write"},
      {"_ZN3a.b1c17h0123456789abcdeeE", "a-b::c"},
      {"_ZN47_$RF$T$C$$BP$u8$SP$$LP$$RP$$u27$$u5b$$u5d$$u7e$1f17h0123456789abcdedE", "&T,*u8@()'[]~::f"},
      // ...but not a hash of fewer than 5 or all 16 digits, an escape perf does not know, or three dots
      {"_ZN3foo3bar17haaaaaaaaaaaaaaaaE", "foo::bar::haaaaaaaaaaaaaaaa"},
      {"_ZN3foo3baz17h0123456789abcdefE", "foo::baz::h0123456789abcdef"},
      {"_ZN58_$LT$alloc..string..String$u20$as$u20$core..fmt..Debug$GT$3fmt17h0f1e2d3c4b5a6978E",
       "_$LT$alloc..string..String$u20$as$u20$core..fmt..Debug$GT$::fmt::h0f1e2d3c4b5a6978"},
      {"_ZN4main28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdeeE",
       "main::_$u7b$$u7b$closure$u7d$$u7d$::h0123456789abcdee"},
      {"_ZN5a...b1c17h0123456789abcdeeE", "a...b::c::h0123456789abcdee"},
      {"_RNvCs4fqI2P2rA04_7mycrate4spin", "_RNvCs4fqI2P2rA04_7mycrate4spin"},  // v0: perf 6.12 has no reader
      // OCaml: `caml` and a capital; `__` is `.`, `$xx` a character
      {"camlStdlib__List__map_413", "Stdlib.List.map_413"},
      {"camlFoo$21bar", "Foo!bar"},
      {"camlfoo__bar", "camlfoo__bar"},
      // Java: a method's signature, its return type left out
      {"Ljava/lang/String;hashCode()I", "java.lang.String.hashCode()"},
      {"Lcom/example/Foo;bar(I[JLjava/lang/Object;)V", "com.example.Foo.bar(int, long[], java.lang.Object)"},
      {"Lx;f([[Z[Ly/Z;)V", "x.f(boolean[][], y.Z)"},
      {"foo(int)", "foo(int)"},  // no `L...;` before the parenthesis: no signature
      {"main", "main"},
      {"i", "i"},  // perf 6.12 shows `int` (docs/perf-compatibility.md)
  };
  for (const auto& [mangled, shown] : cases) {
    CAPTURE(mangled);
    CHECK(perfspec::record::demangle(mangled) == shown);
  }
}

TEST_CASE("symbols: a file that is no ELF file, or none at all, is an error naming it") {
  auto dir = std::filesystem::temp_directory_path() / ("perfspec-sym-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "text") << "not an ELF file\n";
  CHECK_THROWS_WITH(SymbolTable::from_elf((dir / "text").string()),
                    ((dir / "text").string() + ": not an ELF file").c_str());
  CHECK_THROWS_WITH(SymbolTable::from_elf((dir / "absent").string()),
                    ("cannot open " + (dir / "absent").string() + ": No such file or directory").c_str());
  std::filesystem::remove_all(dir);
}

TEST_CASE("symbols: this process's own addresses, through the mappings a recording would hold") {
  const std::uint64_t marker = address_of(&symbols_test::symbols_test_marker);
  OwnCode code = own_code(marker);
  REQUIRE(!code.path.empty());
  Symbolizer symbols;
  const auto pid = static_cast<std::uint32_t>(::getpid());
  symbols.apply(mmap2(pid, code.start, code.end - code.start, code.pgoff, code.path));
  Location l = symbols.locate(pid, marker + 2, perfspec::record::misc_user);
  CHECK(l.dso == code.path);
  REQUIRE(l.symbol);
  CHECK(l.symbol->name == "symbols_test_marker");
  CHECK(l.symbol_offset() == 2);
  // Another process, and an address no mapping covers: no binary, no symbol
  CHECK(symbols.locate(pid + 1, marker, perfspec::record::misc_user).dso.empty());
  CHECK(symbols.locate(pid, 0x1000, perfspec::record::misc_user).dso.empty());
  // A new process has a copy of its parent's mappings; a thread of it is the same process
  symbols.apply(fork(pid + 7, pid));
  CHECK(symbols.locate(pid + 7, marker, perfspec::record::misc_user).symbol);
  // A build other than the one recorded is not read
  Symbolizer wrong;
  const std::byte id[20] = {};
  wrong.build_id(code.path, id);
  wrong.apply(mmap2(pid, code.start, code.end - code.start, code.pgoff, code.path));
  Location w = wrong.locate(pid, marker, perfspec::record::misc_user);
  CHECK(w.dso == code.path);
  CHECK(w.symbol == nullptr);
  REQUIRE(wrong.problems().size() == 1);
  CHECK(wrong.problems()[0] ==
        code.path + ": not the build recorded (build id 0000000000000000000000000000000000000000)");
}

TEST_CASE("symbols: an address of a binary known by its build id, from /usr/lib/debug/.build-id") {
  const std::uint64_t marker = address_of(&symbols_test::symbols_test_marker);
  OwnCode code = own_code(marker);
  REQUIRE(!code.path.empty());
  const std::vector<std::byte> id = perfspec::record::elf_build_id(code.path);
  REQUIRE(id.size() == 20);
  std::string hex;
  for (std::byte b : id)
    hex += "0123456789abcdef"[std::to_integer<unsigned>(b) >> 4],
        hex += "0123456789abcdef"[std::to_integer<unsigned>(b) & 15];
  auto dir = std::filesystem::temp_directory_path() / ("perfspec-bid-" + std::to_string(::getpid()));
  const auto kept = dir / "usr/lib/debug/.build-id" / hex.substr(0, 2) / (hex.substr(2) + ".debug");
  std::filesystem::create_directories(kept.parent_path());
  std::filesystem::copy_file(code.path, kept);
  Symbolizer symbols({.symfs = dir.string()});
  Location l = symbols.locate_build_id(id, marker - code.start + code.pgoff + 1);
  CHECK(l.dso == kept.string());
  REQUIRE(l.symbol);
  CHECK(l.symbol->name == "symbols_test_marker");
  CHECK(l.symbol_offset() == 1);
  std::vector<std::byte> other = id;
  other[0] ^= std::byte{1};
  CHECK(symbols.locate_build_id(other, 0).dso.empty());
  std::filesystem::remove_all(dir);
}

// A debug file read alone (`objcopy --only-keep-debug`, as -dbgsym packages hold them): its symbols,
// and no PLT symbols from PLT sections that have no bytes there (SHT_NOBITS). Reading .plt.got's
// entries there went through a null pointer: `perfspec trace -F all` ended by SIGSEGV when a process
// with such a file faulted (tests/cli/perf_cli_corpus.py, 1 run in 3).
TEST_CASE("symbols: a debug file without its binary: its symbols, no PLT entries; with it, the binary's") {
  const std::uint64_t marker = address_of(&symbols_test::symbols_test_marker);
  OwnCode code = own_code(marker);
  REQUIRE(!code.path.empty());
  if (std::system("command -v objcopy >/dev/null") != 0) {
    MESSAGE("skipped: no objcopy (binutils) here");
    return;
  }
  const auto debug =
      std::filesystem::temp_directory_path() / ("perfspec-debug-" + std::to_string(::getpid()));
  REQUIRE(std::system(("objcopy --only-keep-debug '" + code.path + "' '" + debug.string() + "'").c_str()) ==
          0);
  auto plt_symbols = [](const SymbolTable& t) {
    std::size_t n = 0;
    for (const Symbol& each : t.symbols()) n += each.name.ends_with("@plt") || each.name == ".plt";
    return n;
  };
  const SymbolTable alone = SymbolTable::from_elf(debug.string());
  CHECK(alone.symbols().size() > 1000);
  CHECK(plt_symbols(alone) == 0);
  // with its binary, as the symbolizer pairs them: the functions where the binary has them, and its PLT
  const SymbolTable paired = SymbolTable::from_elf(debug.string(), code.path);
  const SymbolTable binary = SymbolTable::from_elf(code.path);
  std::filesystem::remove(debug);
  const Symbol* s = paired.find(marker - code.start + code.pgoff);
  REQUIRE(s);
  CHECK(s->name == "symbols_test_marker");
  CHECK(plt_symbols(paired) > 10);
  CHECK(plt_symbols(paired) == plt_symbols(binary));
}

TEST_CASE("symbols: a mapped name that is a FIFO or a device is not read (it would block), and says so") {
  auto dir = std::filesystem::temp_directory_path() / ("perfspec-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "bin");
  REQUIRE(::mkfifo((dir / "bin" / "pipe").c_str(), 0600) == 0);
  Symbolizer symbols({.symfs = dir.string()});
  symbols.apply(mmap2(9, 0x400000, 0x1000, 0, "/bin/pipe"));
  symbols.apply(mmap2(9, 0x500000, 0x1000, 0, "/dev/null"));
  CHECK(symbols.locate(9, 0x400010, perfspec::record::misc_user).symbol == nullptr);
  CHECK(symbols.locate(9, 0x500010, perfspec::record::misc_user).symbol == nullptr);
  REQUIRE(symbols.problems().size() == 2);
  CHECK(symbols.problems()[0] == "cannot open " + (dir / "bin" / "pipe").string() + ": not a regular file");
  CHECK(symbols.problems()[1] ==
        "cannot open " + (dir / "dev" / "null").string() + ": No such file or directory");
  CHECK_THROWS_WITH(SymbolTable::from_elf((dir / "bin" / "pipe").string()),
                    ("cannot open " + (dir / "bin" / "pipe").string() + ": not a regular file").c_str());
  std::filesystem::remove_all(dir);
}

TEST_CASE("symbols: a mapping over others cuts them; anonymous code is a JIT's perf map") {
  auto dir = std::filesystem::temp_directory_path() / ("perfspec-symfs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "tmp");
  std::ofstream(dir / "tmp" / "perf-42.map") << "7f0000001000 100 jitted_fn\n";
  Symbolizer symbols({.symfs = dir.string()});
  symbols.apply(mmap2(42, 0x400000, 0x10000, 0, "/bin/a"));
  symbols.apply(mmap2(42, 0x404000, 0x2000, 0x8000, "/bin/b"));  // over the middle of /bin/a
  auto at = [&](std::uint64_t a) { return symbols.locate(42, a, perfspec::record::misc_user); };
  CHECK(at(0x403fff).dso == "/bin/a");
  CHECK(at(0x403fff).dso_address == 0x3fff);
  CHECK(at(0x404000).dso == "/bin/b");
  CHECK(at(0x404010).dso_address == 0x8010);
  CHECK(at(0x406000).dso == "/bin/a");
  CHECK(at(0x406000).dso_address == 0x6000);  // the part after keeps its file offsets
  symbols.apply(mmap2(42, 0x7f0000000000, 0x10000, 0, "//anon", PROT_READ | PROT_EXEC));
  Location j = at(0x7f0000001010);
  CHECK(j.dso == "/tmp/perf-42.map");
  REQUIRE(j.symbol);
  CHECK(j.symbol->name == "jitted_fn");
  CHECK(j.symbol_offset() == 0x10);
  // anonymous memory that is not code keeps its name and has no symbols
  symbols.apply(mmap2(42, 0x7e0000000000, 0x1000, 0, "//anon", PROT_READ | PROT_WRITE));
  CHECK(at(0x7e0000000010).dso == "//anon");
  CHECK(at(0x7e0000000010).symbol == nullptr);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "symbols: kernel addresses against a kallsyms file: the kernel's span, a module where it was mapped") {
  auto dir = std::filesystem::temp_directory_path() / ("perfspec-ksyms-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kallsyms") << "ffffffff81000000 T _text\n"
                                     "ffffffff81000100 T do_work\n"
                                     "ffffffff81000200 T _etext\n"
                                     "ffffffffc0000000 t mod_fn\t[mymod]\n"
                                     "ffffffffc1000000 t other_fn\t[othermod]\n";
  Symbolizer symbols({.kallsyms = (dir / "kallsyms").string()});
  const std::uint16_t k = perfspec::record::misc_kernel;
  symbols.apply(
      mmap2(0xffffffff, 0xffffffff81000000, 0x2000000, 0xffffffff81000000, "[kernel.kallsyms]_text", 5, k));
  symbols.apply(
      mmap2(0xffffffff, 0xffffffffc0000000, 0x10000, 0, "/lib/modules/6.1.0/kernel/mymod.ko", 5, k));
  Location l = symbols.locate(1, 0xffffffff81000123, k);
  CHECK(l.dso == "[kernel.kallsyms]");
  REQUIRE(l.symbol);
  CHECK(l.symbol->name == "do_work");
  CHECK(l.symbol_offset() == 0x23);
  // past the kernel's last symbol (and its page): outside perf's kernel map, though the MMAP covered it
  CHECK(symbols.locate(1, 0xffffffff81500000, k).dso.empty());
  Location m = symbols.locate(1, 0xffffffffc0000010, k);
  CHECK(m.dso == "[mymod]");
  REQUIRE(m.symbol);
  CHECK(m.symbol->name == "mod_fn");
  CHECK(symbols.locate(1, 0xffffffffc1000010, k).dso.empty());  // a module the recording did not map
  std::filesystem::remove_all(dir);
}

TEST_CASE("symbols: every .plt.got entry of this process's libc is named after the symbol its GOT slot has") {
  // x86-64 glibc calls free and malloc through .plt.got (8-byte `jmp *GOT(%rip)` entries, the last at
  // the section's end): perf 6.12 names each after the GLOB_DAT relocation of its slot
  std::string libc;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (auto at = line.find('/'); at != std::string::npos && line.find("/libc.so") != std::string::npos) {
      libc = line.substr(at);
      break;
    }
  REQUIRE(!libc.empty());
  int fd = ::open(libc.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  REQUIRE(elf);
  std::size_t names = 0;
  elf_getshdrstrndx(elf, &names);
  GElf_Shdr got{};
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && std::string_view(elf_strptr(elf, names, shdr.sh_name)) == ".plt.got")
      got = shdr;
  }
  elf_end(elf);
  ::close(fd);
  if (got.sh_size == 0 || got.sh_entsize == 0) {
    MESSAGE("skipped: " << libc << " has no .plt.got (not x86-64 glibc)");
    return;
  }
  auto table = perfspec::record::SymbolTable::from_elf(libc);
  std::size_t entries = 0;
  for (std::uint64_t at = got.sh_offset; at < got.sh_offset + got.sh_size; at += got.sh_entsize, ++entries) {
    const auto* s = table.find(at);
    REQUIRE(s);
    CHECK(s->start == at);
    CHECK(s->name.ends_with("@plt"));
    CHECK(!s->name.starts_with("offset_"));
  }
  CHECK(entries >= 2);
}

namespace symbols_test {
namespace {

// addr2line's records for each address (`-a -i -f`): function, base name:line, per inlined frame
std::vector<std::vector<std::pair<std::string, std::string>>> addr2line_chains(
    const std::string& path, const std::vector<std::uint64_t>& addresses) {
  std::string cmd = "addr2line -a -i -f -e '" + path + "'";
  for (std::uint64_t a : addresses) cmd += fmt::format(" {:#x}", a);
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  std::vector<std::string> lines;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string l(buf);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    lines.push_back(l);
  }
  if (::pclose(p) != 0) return {};
  for (std::size_t i = 0; i < lines.size();) {
    if (lines[i].starts_with("0x")) {
      out.emplace_back();
      ++i;
      continue;
    }
    if (out.empty() || i + 1 >= lines.size()) break;
    std::string where = lines[i + 1];
    where = where.substr(0, where.find(" (discriminator"));
    if (auto slash = where.rfind('/'); slash != std::string::npos) where = where.substr(slash + 1);
    out.back().emplace_back(lines[i], where);
    i += 2;
  }
  return out;
}

}  // namespace

TEST_CASE("source lines: the inlined calls at every address of a function, as addr2line -i -f answers") {
  using perfspec::record::SourceLines;
  using perfspec::record::SymbolTable;
  const std::string path = PERFSPEC_INLINE_WORKLOAD;
  const SymbolTable table = SymbolTable::from_elf(path, {}, false);
  const perfspec::record::Symbol* top = nullptr;
  for (const auto& s : table.symbols())
    if (s.name == "_ZN4calc3topEm") top = &s;
  REQUIRE(top != nullptr);
  SourceLines lines;
  REQUIRE(lines.has_lines(path));
  const std::uint64_t text = lines.text_offset(path);
  std::vector<std::uint64_t> addresses;
  std::size_t deepest = 0;
  for (std::uint64_t a = top->start; a < top->end; ++a) {
    addresses.push_back(a + text);
    auto chain = lines.inlines(path, a + text);
    REQUIRE(!chain.empty());
    deepest = std::max(deepest, chain.size());
    // the function all is inlined into, at the line of its inlined call (mid's, line 23) when any is
    CHECK(chain.back().function == "_ZN4calc3topEm");
    CHECK(chain.back().file.ends_with("tests/workload/inline_workload.cpp"));
    if (chain.size() > 1) {
      CHECK(chain.back().line == 23);
      CHECK(chain[chain.size() - 2].function == "_ZN4calc3midImEET_S1_");  // mid<unsigned long>
      if (chain.size() == 3) {
        CHECK((chain[0].function == "_ZN4calc3AccImE3addEm" || chain[0].function == "_ZN4calc4leafEm"));
        CHECK(chain[1].line == 19);  // mid's call of add and of leaf
        CHECK(chain[0].line == (chain[0].function == "_ZN4calc4leafEm" ? 15u : 12u));
      }
    }
  }
  CHECK(deepest == 3);  // add and leaf, in mid, in top
  // binutils' own answer, where this machine has addr2line: the same functions and lines
  auto theirs = addr2line_chains(path, addresses);
  if (theirs.empty()) {
    MESSAGE("no addr2line here: the chains are not compared with binutils'");
    return;
  }
  REQUIRE(theirs.size() == addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    auto ours = lines.inlines(path, addresses[i]);
    std::vector<std::pair<std::string, std::string>> mine;
    for (const auto& f : ours)
      mine.emplace_back(f.function, f.file.substr(f.file.rfind('/') + 1) + ":" + std::to_string(f.line));
    INFO("address ", fmt::format("{:#x}", addresses[i]));
    CHECK(mine == theirs[i]);
  }
}

}  // namespace symbols_test

namespace symbols_test {

TEST_CASE("read_file: a file of /proc (no size) read whole past its first buffer, a regular file exactly") {
  // /proc/self/maps says st_size 0; /proc/self/smaps is many times 64 KiB for a test program
  auto text = perfspec::record::detail::read_file("/proc/self/smaps");
  std::ifstream in("/proc/self/smaps");
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.view().size() > 65536);
  // the mappings differ between two reads only by what each read allocated: their first lines agree
  CHECK(text.view().substr(0, text.view().find('\n')) ==
        std::string_view(expected).substr(0, expected.find('\n')));
  const std::string path = std::string(PERFSPEC_SOURCE_DIR) + "/tests/workload/inline_workload.cpp";
  std::ifstream src(path);
  std::string whole((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  CHECK(perfspec::record::detail::read_file(path).view() == whole);
  CHECK_THROWS_WITH_AS((void)perfspec::record::detail::read_file("/proc"),
                       "cannot open /proc: not a regular file", perfspec::Error);
}

}  // namespace symbols_test

namespace {

// A build-id cache as perf makes one: .build-id/XX/REST a link to ../..PATH/ID, the binary's probes
// file there.
void cache_binary(const std::string& cache, const std::string& path, const std::string& id,
                  const std::string& probes) {
  const std::string dir = cache + path + "/" + id;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/probes") << probes;
  std::filesystem::create_directories(cache + "/.build-id/" + id.substr(0, 2));
  std::filesystem::create_symlink("../.." + path + "/" + id,
                                  cache + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2));
}

std::string hex_id(const std::vector<std::byte>& bytes) {
  std::string s;
  for (std::byte b : bytes) s += fmt::format("{:02x}", std::to_integer<unsigned>(b));
  return s;
}

}  // namespace

TEST_CASE(
    "probe cache: the SDT events of binaries still there with their build, as perf list sdt names them") {
  test::TempTree dir;
  const std::string cache = dir.root() + "/cache";
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  const std::string id = hex_id(perfspec::record::elf_build_id(self));
  REQUIRE(id.size() == 40);
  // this test's binary: two SDT notes (and their probe lines), a perf probe of it
  cache_binary(cache, self, id,
               "%sdt_app:start=start\np:sdt_app/start " + self +
                   ":0x10\n%sdt_app:done=done\np:sdt_app/done " + self +
                   ":0x20\n#probe_app:f=f\np:probe_app/f x\n");
  // a build no longer there (another id for the same path): left out
  const std::string stale = std::string(40, 'a');
  cache_binary(cache, self, stale, "%sdt_app:gone=gone\n");
  ::setenv("PERF_BUILDID_DIR", cache.c_str(), 1);
  CHECK(perfspec::record::cached_probe_events() ==
        std::vector<std::string>{"probe_app:f", "sdt_app:done", "sdt_app:start"});
  // a cache entry perf cannot parse (an event name that is no C name) leaves out the binary's whole file
  std::ofstream(cache + self + "/" + id + "/probes") << "%sdt_app:start=start\n%sdt_app:9bad=x\n";
  CHECK(perfspec::record::cached_probe_events().empty());
  ::setenv("PERF_BUILDID_DIR", "/nonexistent/perfspec-tests-build-id-cache", 1);  // as tests/main.cpp sets it
  CHECK(perfspec::record::cached_probe_events().empty());
}
