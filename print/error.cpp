// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "perfspec/print.hpp"

namespace perfspec {

namespace {

// The "kind" member: ErrorKind's own names, stable identifiers for programs (error_kind_name() is
// for people and says "unknown name").
std::string_view kind_id(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::syntax: return "syntax";
    case ErrorKind::unknown_name: return "unknown_name";
    case ErrorKind::bad_value: return "bad_value";
    case ErrorKind::machine: return "machine";
    case ErrorKind::io: return "io";
    case ErrorKind::permission: return "permission";
    case ErrorKind::usage: return "usage";
  }
  return "bad_value";
}

}  // namespace

std::string error_json(const Error& error, std::optional<std::string_view> input) {
  nlohmann::ordered_json j;
  j["schema"] = error_schema;
  j["kind"] = kind_id(error.kind());
  j["message"] = error.message();
  j["input"] = input ? nlohmann::ordered_json(*input) : nullptr;
  // A span means something only beside the text it points into. An error at the end of the text
  // ("expected '}'") points one past it; in the document it is the empty span at the end, so that a
  // program can slice the input with it.
  if (input && error.positioned()) {
    auto size = static_cast<std::uint32_t>(std::min<std::size_t>(input->size(), UINT32_MAX));
    j["span"] = {std::min(error.span().begin, size), std::min(error.span().end, size)};
  } else {
    j["span"] = nullptr;
  }
  j["help"] = error.help().empty() ? nullptr : nlohmann::ordered_json(error.help());
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace perfspec
