// SPDX-License-Identifier: MIT
#include "spec/libpfm4.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "perfspec/spec.hpp"
#include "perfspec/tables.hpp"

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
using pmu_info_fn = int (*)(pfm_pmu_t, pfm_pmu_info_t*);
encode_fn encode_event = nullptr;
Models models_;

// The models libpfm4 took, read once beside its own initialization: libpfm4 reads LIBPFM_FORCE_PMU
// in pfm_initialize() and never again, so this is the value it uses even if the variable changes.
void read_models(pmu_info_fn pmu_info) {
  if (const char* forced = std::getenv("LIBPFM_FORCE_PMU")) models_.forced = forced;
  if (!pmu_info) return;
  for (int id = PFM_PMU_NONE; id < PFM_PMU_MAX; ++id) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pmu_info(static_cast<pfm_pmu_t>(id), &info) != PFM_SUCCESS || info.type != PFM_PMU_TYPE_CORE ||
        !info.name)
      continue;
    models_.known.emplace_back(info.name);
    if (info.is_present) models_.active.emplace_back(info.name);
  }
}

bool initialize() {
  static const bool ok = [] {
    void* lib = ::dlopen(PERFSPEC_LIBPFM4_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    auto init = reinterpret_cast<initialize_fn>(::dlsym(lib, "pfm_initialize"));
    encode_event = reinterpret_cast<encode_fn>(::dlsym(lib, "pfm_get_os_event_encoding"));
    if (!init || !encode_event || init() != PFM_SUCCESS) return false;
    read_models(reinterpret_cast<pmu_info_fn>(::dlsym(lib, "pfm_get_pmu_info")));
    return true;
  }();
  return ok;
}
}  // namespace

bool available() {
  std::lock_guard lock(mutex);
  return initialize();
}

const Models& models() {
  std::lock_guard lock(mutex);
  initialize();
  return models_;  // written once, inside initialize()
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
  e.pmu = e.canonical.substr(0, e.canonical.find("::"));
  e.core = std::find(models_.active.begin(), models_.active.end(), e.pmu) != models_.active.end();
  return e;
}
#else
bool available() { return false; }
const Models& models() {
  static const Models none;
  return none;
}
std::optional<Encoding> encode(std::string_view) { return std::nullopt; }
#endif

bool describes(const Machine& machine) {
  if (models().forced) return true;
  if (machine.cpuid_origin() == Machine::CpuidOrigin::this_host) return true;
  static const std::string host = detect_cpuid();
  return machine.cpuid() == host;
}

}  // namespace perfspec::spec::pfm
