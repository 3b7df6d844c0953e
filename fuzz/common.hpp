// SPDX-License-Identifier: MIT
#pragma once
// Shared helpers for the libFuzzer targets: a per-process scratch folder (removed at exit), file
// writing, and the source tree's fixtures.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

namespace fuzz {

namespace fs = std::filesystem;

inline std::string source_dir() {
  if (const char* s = std::getenv("PERFSPEC_SOURCE_DIR"); s && *s) return s;
  return PERFSPEC_SOURCE_DIR;
}

inline std::string fixture(std::string_view name) {
  return source_dir() + "/tests/fixtures/" + std::string(name);
}

/// One scratch folder per process, `$TMPDIR/perfspec-fuzz-<pid>-XXXXXX` (or under /tmp). libFuzzer ends with
/// _Exit, so atexit cleanup does not always run: each new process first removes the folders of processes
/// that are gone.
inline const std::string& scratch() {
  // Never destroyed, so that the atexit handler below can still read it.
  static const std::string& dir = *new std::string([] {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      std::string n = e.path().filename().string();
      if (!n.starts_with("perfspec-fuzz-")) continue;
      long pid = std::strtol(n.c_str() + 14, nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
    }
    std::string templ = base + "/perfspec-fuzz-" + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(templ.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec2;
      fs::remove_all(scratch(), ec2);
    });
    return templ;
  }());
  return dir;
}

inline void write_file(const std::string& path, std::string_view content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz harness: cannot write %s\n", path.c_str());
    std::abort();
  }
}

inline void copy_tree(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

/// Little-endian numbers taken from the front of a fuzz input (0 once it runs out): how a target
/// reads its choices before the bytes it hands the code under test.
struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  std::uint64_t take(unsigned bytes) {
    std::uint64_t v = 0;
    for (unsigned k = 0; k < bytes; ++k) {
      std::uint64_t b = n ? (--n, *p++) : 0;
      v |= b << (8 * k);
    }
    return v;
  }
};

/// Folds bytes into a value the optimiser cannot drop, so that every view a target is given is
/// really read (a view past its buffer is then an ASan report).
inline volatile std::uint64_t sink;
inline void touch(std::span<const std::byte> b) {
  std::uint64_t h = 0;
  for (std::byte x : b) h = h * 31 + std::to_integer<std::uint64_t>(x);
  sink = sink + h;
}
inline void touch(std::string_view s) { touch(std::as_bytes(std::span(s.data(), s.size()))); }

}  // namespace fuzz
