#pragma once
// Small-file helpers for sysfs reading (internal to spec/).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfspec::spec::io {

/// sysfs attributes are at most a page; anything much larger is not a sysfs attribute.
inline constexpr std::size_t max_file_size = 64 * 1024;

/// Contents of a file, nullopt when it does not exist; throws perfspec::Error naming the file when it
/// exists but cannot be read or is too large.
std::optional<std::string> read_small_file(const std::string& path);
std::string_view trim(std::string_view s);
/// Entries of a folder, sorted; empty when it does not exist.
std::vector<std::string> list_dir(const std::string& path);
bool exists(const std::string& path);

}  // namespace perfspec::spec::io
