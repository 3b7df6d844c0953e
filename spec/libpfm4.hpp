// SPDX-License-Identifier: MIT
#pragma once
// libpfm4 as an optional named-event provider (internal to spec/). Present when perfspec was built
// with libpfm4 (PERFSPEC_LIBPFM4); libpfm4 picks its CPU model itself, or the one LIBPFM_FORCE_PMU
// names.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfspec::spec::pfm {

struct Encoding {
  std::uint32_t type = 0;
  std::uint64_t config = 0, config1 = 0, config2 = 0;
  bool exclude_user = false, exclude_kernel = false, exclude_hv = false;
  std::string canonical;  ///< libpfm4's fully qualified name (`skx::INST_RETIRED:ANY_P:...`)
};

/// Whether the library was built with libpfm4 and it initialized.
bool available();
/// Encode `name` (`INST_RETIRED:ANY_P`, `INST_RETIRED.ANY_P`, `skx::INST_RETIRED:ANY_P:u`) for
/// perf_event_open; nullopt when libpfm4 does not know it (or is absent). Thread-safe.
std::optional<Encoding> encode(std::string_view name);

}  // namespace perfspec::spec::pfm
