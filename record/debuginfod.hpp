// SPDX-License-Identifier: MIT
#pragma once
// A binary's debug file from debuginfod servers (internal to record/): elfutils' client library,
// loaded when first asked for, so that libperfspec needs it only where it is used.
#include <optional>
#include <string>

namespace perfspec::record::detail {

/// Point the client at `urls` ("system": DEBUGINFOD_URLS as the process has it; else the URLs, set as
/// DEBUGINFOD_URLS, as perf's --debuginfod sets them).
void use_debuginfod(const std::string& urls);

/// The path of the debug file with build id `hex` in debuginfod's cache, fetched from the servers when
/// it is not there yet; nullopt when no server has it, with why in `problem` (an unreachable server, no
/// libdebuginfod.so.1).
std::optional<std::string> debuginfod_debuginfo(const std::string& hex, std::string& problem);

}  // namespace perfspec::record::detail
