// SPDX-License-Identifier: MIT
#pragma once
// Reading a counter through its mmap'd perf_event_mmap_page (internal to runtime/).
#include <optional>

#include "perfspec/runtime.hpp"

namespace perfspec::runtime {

/// Read the counter behind a mapped first page with rdpmc (x86-64) or the PMU registers (arm64),
/// following the seqlock protocol. nullopt when the page does not allow it (index 0, no
/// cap_user_rdpmc, or an architecture without user counter access): use read(2).
std::optional<UserRead> read_mapped_page(const void* page);

/// Why read_mapped_page(page) gave nullopt: the page's own reason (index 0, no cap_user_rdpmc), with
/// the switch that turns user access off when it is off (`access_off`: perf_user_access on arm64,
/// the cpu PMU's rdpmc file on x86). Obstacle::none when the page allows the read.
Note::Obstacle user_read_obstacle(const void* page, bool access_off);

}  // namespace perfspec::runtime
