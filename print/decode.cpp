// SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "perfspec/print.hpp"

namespace perfspec {

std::string decode_json(const std::vector<Decoded>& decoded) {
  auto events = nlohmann::ordered_json::array();
  for (const auto& d : decoded)
    events.push_back({{"event", d.event}, {"how", d.how}, {"leftovers", d.leftovers}, {"notes", d.notes}});
  nlohmann::ordered_json j;
  j["schema"] = decode_schema;
  j["events"] = std::move(events);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace perfspec
