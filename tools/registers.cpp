// SPDX-License-Identifier: MIT
// perf record's --user-regs and -I/--intr-regs (perf's parse-regs-options.c rules): names, masks, `?`.
#include "tools/registers.hpp"

#include <strings.h>

#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "print/script_fields.hpp"

namespace perfspec::tools {

namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr std::string_view host_arch = "x86";
#elif defined(__aarch64__)
constexpr std::string_view host_arch = "arm64";
#else
constexpr std::string_view host_arch = "";
#endif

struct Register {
  std::string_view name;
  std::uint64_t mask;  // an XMM register takes two numbers (perf's SMPL_REG2)
};

// This architecture's registers within `available`, by number.
std::vector<Register> registers(std::uint64_t available) {
  std::vector<Register> out;
  for (unsigned id = 0; id < 64; ++id) {
    if (!(available & (std::uint64_t{1} << id))) continue;
    std::string_view name = script_fields::register_name(host_arch, id);
    if (name == "unknown") continue;
    if (!out.empty() && out.back().name == name)
      out.back().mask |= std::uint64_t{1} << id;
    else
      out.push_back({name, std::uint64_t{1} << id});
  }
  return out;
}

}  // namespace

std::string register_names(std::uint64_t available) {
  std::string out;
  for (const Register& r : registers(available)) {
    if (!out.empty()) out += ' ';
    out += r.name;
  }
  return out;
}

std::uint64_t sample_registers(std::string_view option, std::string_view names, std::uint64_t available) {
  const std::vector<Register> regs = registers(available);
  if (regs.empty())
    throw Error(ErrorKind::usage,
                fmt::format("{}: this architecture's registers are not known to perfspec", option));
  if (names.empty()) return available;
  std::uint64_t mask = 0;
  for (;;) {
    const std::size_t comma = names.find(',');
    const std::string_view name = names.substr(0, comma);
    if (name == "?")
      throw Error(ErrorKind::usage,
                  fmt::format("{}: available registers: {}", option, register_names(available)));
    const Register* found = nullptr;
    for (const Register& r : regs)
      if (r.name.size() == name.size() && ::strncasecmp(r.name.data(), name.data(), name.size()) == 0)
        found = &r;
    if (!found)
      throw Error(ErrorKind::usage, fmt::format("{}: unknown register '{}'", option, name),
                  fmt::format("the registers of this machine: {}", register_names(available)));
    mask |= found->mask;
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  return mask;
}

}  // namespace perfspec::tools
