// SPDX-License-Identifier: MIT
#pragma once
// libpfm4 as an optional named-event provider (internal to spec/). Present when perfspec was built
// with libpfm4 (PERFSPEC_LIBPFM4); libpfm4 picks its CPU model itself from this host's CPU, or takes
// the one LIBPFM_FORCE_PMU names (libpfm4's name for it: `skx`, `amd64_fam19h_zen3`). libpfm4 reads
// the variable once per process, when perfspec first asks it something: one model for every Machine,
// whatever its sysfs root, which is why a fixture of another CPU needs the variable. A Machine told
// it is another CPU (a cpuid given, or a snapshot's, that is not this host's) is not asked libpfm4's
// names without it (describes()).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfspec::spec {
class Machine;
}

namespace perfspec::spec::pfm {

struct Encoding {
  std::uint32_t type = 0;
  std::uint64_t config = 0, config1 = 0, config2 = 0;
  bool exclude_user = false, exclude_kernel = false, exclude_hv = false;
  std::string canonical;  ///< libpfm4's fully qualified name (`skx::INST_RETIRED:ANY_P:...`)
  std::string pmu;        ///< the libpfm4 PMU that encoded it (`skx`, `perf_raw`, `amd64_fam19h_zen3_l3`)
  bool core = false;      ///< that PMU is one of the core models libpfm4 uses (models().active)
};

/// Whether the library was built with libpfm4 and it initialized.
bool available();

/// libpfm4's CPU models, for messages (all empty when libpfm4 is not available).
struct Models {
  std::vector<std::string> active;  ///< the core PMUs libpfm4 uses (`skx`); none on a CPU it does not know
  /// Core PMUs libpfm4 registered, names LIBPFM_FORCE_PMU takes: every one it supports when neither
  /// this CPU nor LIBPFM_FORCE_PMU matched one, else only those it tried before the match.
  std::vector<std::string> known;
  std::optional<std::string> forced;  ///< LIBPFM_FORCE_PMU as libpfm4 read it, when it was set
};
const Models& models();
/// Encode `name` (`INST_RETIRED:ANY_P`, `INST_RETIRED.ANY_P`, `skx::INST_RETIRED:ANY_P:u`) for
/// perf_event_open; nullopt when libpfm4 does not know it (or is absent). Thread-safe.
std::optional<Encoding> encode(std::string_view name);
/// Whether libpfm4's model is the CPU `machine` describes: LIBPFM_FORCE_PMU is set (the user picked
/// the model), or the machine's cpuid is this host's (the one libpfm4 detected its model from).
bool describes(const Machine& machine);

}  // namespace perfspec::spec::pfm
