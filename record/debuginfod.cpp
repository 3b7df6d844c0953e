// SPDX-License-Identifier: MIT
#include "record/debuginfod.hpp"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace perfspec::record::detail {

namespace {

// elfutils' libdebuginfod.so.1 (Debian's libdebuginfod1), opened once per process.
struct Client {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_debuginfo) find = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  std::string missing;  // why it could not be loaded

  Client() {
    void* lib = ::dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      missing = fmt::format("debuginfod: cannot load libdebuginfod.so.1 ({})", ::dlerror());
      return;
    }
    begin = reinterpret_cast<decltype(begin)>(::dlsym(lib, "debuginfod_begin"));
    find = reinterpret_cast<decltype(find)>(::dlsym(lib, "debuginfod_find_debuginfo"));
    end = reinterpret_cast<decltype(end)>(::dlsym(lib, "debuginfod_end"));
    if (!begin || !find || !end) missing = "debuginfod: libdebuginfod.so.1 lacks the client's functions";
  }
};

const Client& client() {
  static const Client c;
  return c;
}

}  // namespace

void use_debuginfod(const std::string& urls) {
  if (!urls.empty() && urls != "system") ::setenv("DEBUGINFOD_URLS", urls.c_str(), 1);
}

std::optional<std::string> debuginfod_debuginfo(const std::string& hex, std::string& problem) {
  const Client& c = client();
  if (!c.missing.empty()) {
    problem = c.missing;
    return std::nullopt;
  }
  debuginfod_client* session = c.begin();
  if (!session) {
    problem = "debuginfod: the client could not be started";
    return std::nullopt;
  }
  char* path = nullptr;
  // a build id given as hex text has length 0
  int fd = c.find(session, reinterpret_cast<const unsigned char*>(hex.c_str()), 0, &path);
  c.end(session);
  if (fd < 0) {
    problem = fmt::format("debuginfod: no debug file with build id {} ({})", hex, std::strerror(-fd));
    std::free(path);
    return std::nullopt;
  }
  ::close(fd);
  std::string out = path ? path : "";
  std::free(path);
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace perfspec::record::detail
