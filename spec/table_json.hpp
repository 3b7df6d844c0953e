// SPDX-License-Identifier: MIT
#pragma once
// Internal to spec/: perf's jevents.py rules (Linux 6.12) for the JSON files of one architecture's
// tables, shared by the mapfile code (cpuid.cpp) and the loader with its index (tables.cpp).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/tables.hpp"

namespace perfspec::spec::detail {

/// Control characters have no place in names, terms or units, and would break the index's lines.
bool has_control(std::string_view s);
/// A number as jevents reads one: `0x`-prefixed hex, else decimal; nullopt when it is neither or
/// does not fit 64 bits.
std::optional<std::uint64_t> jevents_number(std::string_view text);
/// A folder named by a mapfile: relative, and no component that leaves or hides in the tree.
bool safe_relative_folder(std::string_view folder);
/// perf's topic of a table file: `metrics` for *metrics.json, else the name without .json, `-` as space.
std::string table_topic(const std::string& file);

/// Every model folder that `dir/mapfile.csv` names and that holds tables, once each, in the file's
/// order. Throws perfspec::Error as find_model does.
std::vector<std::string> mapfile_models(const std::string& dir);

/// The files one table is made of: the architecture-standard events beside mapfile.csv, and the
/// model folder's files (or every `sys` folder's).
struct TableFiles {
  std::vector<std::filesystem::path> std_files, files;
};
/// Throws perfspec::Error when the model folder does not exist.
TableFiles table_files(const std::string& dir, const std::string& model, bool sys);

/// What the files hold, or why some of it was skipped.
struct LoadedTables {
  std::vector<TableEvent> events;
  std::vector<TableMetric> metrics;
  std::vector<TableCounters> counters;
  std::map<std::string, std::string> groups;
  std::vector<TableDiagnostic> diagnostics;
};
LoadedTables parse_table_files(const TableFiles& files, bool descriptions);

}  // namespace perfspec::spec::detail
