// SPDX-License-Identifier: MIT
#pragma once
// Shared helpers for the libFuzzer targets: a per-process scratch folder (removed at exit), file
// writing, and the source tree's fixtures.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

}  // namespace fuzz
