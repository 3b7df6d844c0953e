// SPDX-License-Identifier: MIT
#include "spec/libpfm4.hpp"

#include <cstring>
#include <mutex>

#ifdef PERFSPEC_HAVE_LIBPFM4
#include <dlfcn.h>
#include <perfmon/pfmlib_perf_event.h>
#endif

namespace perfspec::spec::pfm {

#ifdef PERFSPEC_HAVE_LIBPFM4
namespace {
std::mutex mutex;  // libpfm4 keeps global state; one caller at a time

// libpfm4 is opened on first use, not linked: loading it costs every process ~0.6 ms of relocations
// (41k of them) and 2 MiB, and most runs never ask it anything.
using initialize_fn = int (*)();
using encode_fn = int (*)(const char*, int, pfm_os_t, void*);
encode_fn encode_event = nullptr;

bool initialize() {
  static const bool ok = [] {
    void* lib = ::dlopen(PERFSPEC_LIBPFM4_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    auto init = reinterpret_cast<initialize_fn>(::dlsym(lib, "pfm_initialize"));
    encode_event = reinterpret_cast<encode_fn>(::dlsym(lib, "pfm_get_os_event_encoding"));
    return init && encode_event && init() == PFM_SUCCESS;
  }();
  return ok;
}
}  // namespace

bool available() {
  std::lock_guard lock(mutex);
  return initialize();
}

std::optional<Encoding> encode(std::string_view name) {
  std::lock_guard lock(mutex);
  if (!initialize() || name.empty() || name.size() > 1024) return std::nullopt;
  std::string text(name);
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  char* fstr = nullptr;
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.attr = &attr;
  arg.fstr = &fstr;
  arg.size = sizeof arg;
  // Count user and kernel unless the name's own modifiers say otherwise, as perfspec does.
  int r = encode_event(text.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  if (r != PFM_SUCCESS) {
    std::free(fstr);
    return std::nullopt;
  }
  Encoding e;
  e.type = attr.type;
  e.config = attr.config;
  e.config1 = attr.config1;
  e.config2 = attr.config2;
  e.exclude_user = attr.exclude_user;
  e.exclude_kernel = attr.exclude_kernel;
  e.exclude_hv = attr.exclude_hv;
  if (fstr) e.canonical = fstr;
  std::free(fstr);
  return e;
}
#else
bool available() { return false; }
std::optional<Encoding> encode(std::string_view) { return std::nullopt; }
#endif

}  // namespace perfspec::spec::pfm
