// SPDX-License-Identifier: MIT
#pragma once
// Text from a sysfs tree, a table or a config file on its way to a terminal: names and file contents
// can hold any byte, and an ESC or BEL in a PMU or alias name would reach the terminal as a control
// sequence. Internal to the library.
#include <string>
#include <string_view>

namespace perfspec::spec {

/// `text` with every byte a terminal could act on written as `\xNN`: C0 controls (newline and tab
/// included), DEL, the C1 controls U+0080..U+009F in UTF-8, and bytes that are not UTF-8. Printable
/// ASCII and other UTF-8 (`µs`) are kept as they are.
///
/// Example: `printable("esc\x1b[31m") == "esc\\x1b[31m"`.
std::string printable(std::string_view text);

}  // namespace perfspec::spec
