// SPDX-License-Identifier: MIT
#pragma once
// The named-event sources a Machine asks (internal to spec/): each implements EventSource.
#include <memory>

#include "perfspec/event_source.hpp"

namespace perfspec::spec {

/// Which of perf's tables a table source reads: the CPU model's folder, or the `sys` folders whose
/// uncore events are matched to PMUs by identifier (Compat).
enum class TableScope { model, sys };

std::unique_ptr<const EventSource> make_sysfs_source(const Machine& machine);
std::unique_ptr<const EventSource> make_table_source(const Machine& machine, TableScope scope);
std::unique_ptr<const EventSource> make_libpfm4_source(const Machine& machine);

}  // namespace perfspec::spec
