#include "tests/support.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace test {

std::string source_dir() { return PERFSPEC_SOURCE_DIR; }
std::string fixture(std::string_view name) { return fmt::format("{}/tests/fixtures/{}", source_dir(), name); }

TempTree::TempTree() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "perfspec-test-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  root_ = tmpl;
}

TempTree::~TempTree() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void TempTree::write(std::string_view relative, std::string_view content) const {
  std::filesystem::path p = std::filesystem::path(root_) / relative;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

void TempTree::pmu(std::string_view name, unsigned type) const {
  write(fmt::format("bus/event_source/devices/{}/type", name), fmt::format("{}\n", type));
}

std::string attr_summary(const perfspec::Attr& attr) {
  std::string out;
  for (const auto& f : perfspec::attr_fields()) {
    std::uint64_t v = f.get(attr);
    if (f.name == "size" || (v == 0 && f.name != "type")) continue;
    if (!out.empty()) out += ' ';
    bool hex = f.name.starts_with("config") || f.name == "sample_type" || f.name == "read_format" ||
               f.name == "branch_sample_type" || f.name.starts_with("sample_regs");
    if (f.is_signed) out += fmt::format("{}={}", f.name, static_cast<std::int64_t>(v));
    else if (hex) out += fmt::format("{}={:#x}", f.name, v);
    else out += fmt::format("{}={}", f.name, v);
  }
  return out;
}

std::string error_of(std::string_view text, const perfspec::spec::Machine& machine) {
  try {
    perfspec::resolve(text, machine);
  } catch (const perfspec::Error& e) {
    return perfspec::render(e, text);
  }
  return {};
}

}  // namespace test
