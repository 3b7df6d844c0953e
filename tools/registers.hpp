// SPDX-License-Identifier: MIT
#pragma once
// perf record's --user-regs and -I/--intr-regs: registers named as perf names them on this
// architecture (AX .. R15 and XMM0 .. XMM15 on x86-64, x0 .. x29, lr, sp, pc and vg on arm64).
#include <cstdint>
#include <string>
#include <string_view>

namespace perfspec::tools {

/// The registers of `names` (comma-separated, case aside, as perf's parse_regs) as perf_regs bits,
/// among `available` (runtime::sample_register_masks); an empty text is every one available, as perf's
/// option without a value. Throws Error (usage) naming `option` for a name that is not one of them, and
/// for `?`, with the names available (perf prints them for `?`, and records nothing).
///
/// Example: `sample_registers("--user-regs", "ax,BX", 0xff0fff) == 0x3` on x86-64
std::uint64_t sample_registers(std::string_view option, std::string_view names, std::uint64_t available);
/// The names of `available`'s registers on this architecture, in perf's order, a space apart.
std::string register_names(std::uint64_t available);

}  // namespace perfspec::tools
