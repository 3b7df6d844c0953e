// SPDX-License-Identifier: MIT
// Where the event tables installed with perfspec are (spec::default_events_dir).
#include <filesystem>
#include <system_error>

#include "perfspec/spec.hpp"

// The build defines both when it installs tables (PERFSPEC_EVENT_TABLES in CMakeLists.txt): the tables
// folder relative to the folder of the installed programs, and its absolute path in the install prefix.
#if defined(PERFSPEC_TABLES_FROM_BINDIR) != defined(PERFSPEC_TABLES_DIR)
#error "PERFSPEC_TABLES_FROM_BINDIR and PERFSPEC_TABLES_DIR go together"
#endif

namespace perfspec::spec {

std::string default_events_dir() {
#ifdef PERFSPEC_TABLES_DIR
  namespace fs = std::filesystem;
  std::error_code ec;
  // Beside the running program, so that an installation moved elsewhere (or unpacked under another
  // prefix) finds its own tables; then where the build installed them (a program of its own that
  // links the library, a binary run from the build folder).
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    fs::path dir = (exe.parent_path() / PERFSPEC_TABLES_FROM_BINDIR).lexically_normal();
    if (fs::is_directory(dir, ec)) return dir.string();
  }
  if (fs::is_directory(PERFSPEC_TABLES_DIR, ec)) return PERFSPEC_TABLES_DIR;
#endif
  return {};
}

}  // namespace perfspec::spec
