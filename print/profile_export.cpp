// SPDX-License-Identifier: MIT
// A profile in the formats other tools read: folded stacks (flame graphs) and pprof's profile.proto.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/report.hpp"
#include "print/gzip.hpp"

namespace perfspec {
namespace {

using record::Frame;
using record::Profile;

// stackcollapse's tidy_function_name: the function, `;` made `:` (the separator), `_[k]` with --kernel
void fold_frame(std::string& line, const Frame& f, const FoldedOptions& options) {
  if (f.symbol) {
    for (char c : f.symbol->name) line += c == ';' ? ':' : c;
  } else {
    line += "[unknown]";
  }
  if (options.kernel && f.dso == "[kernel.kallsyms]") line += "_[k]";
}

}  // namespace

std::string folded_stacks(const Profile& profile, const FoldedOptions& options) {
  std::map<std::string, std::uint64_t> lines;  // sorted by the stack's text, as the script sorts
  std::string line;
  for (const Profile::Event& event : profile.events()) {
    for (const Profile::Stack& stack : event.stacks) {
      line.clear();
      if (options.comm) {
        for (char c : profile.comm(stack.comm)) line += c == ' ' ? '_' : c;
        const char* sep = "-";
        if (options.pid) line += fmt::format("{}{}", sep, stack.pid), sep = "/";
        if (options.tid) line += fmt::format("{}{}", sep, stack.tid);
      }
      for (auto f = stack.frames.rbegin(); f != stack.frames.rend(); ++f) {
        if (!line.empty()) line += ';';
        fold_frame(line, profile.frame(*f), options);
      }
      lines[line] += options.period ? stack.period : stack.samples;
    }
  }
  std::string out;
  for (const auto& [text, count] : lines) fmt::format_to(std::back_inserter(out), "{} {}\n", text, count);
  return out;
}

namespace {

// profile.proto's wire format: varint keys and values, length-delimited messages and packed fields.
class Proto {
 public:
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
  }
  void number(int field, std::uint64_t v) {  // wire type 0, left out when 0 (proto3's default)
    if (v == 0) return;
    varint(static_cast<std::uint64_t>(field) << 3);
    varint(v);
  }
  void bytes(int field, std::string_view b) {  // wire type 2
    varint((static_cast<std::uint64_t>(field) << 3) | 2);
    varint(b.size());
    bytes_.append(b);
  }
  void message(int field, const Proto& m) { bytes(field, m.bytes_); }
  void packed(int field, const std::vector<std::uint64_t>& values) {
    Proto p;
    for (std::uint64_t v : values) p.varint(v);
    bytes(field, p.bytes_);
  }
  const std::string& data() const { return bytes_; }

 private:
  std::string bytes_;
};

// profile.proto's field numbers
enum : int {
  profile_sample_type = 1,
  profile_sample = 2,
  profile_mapping = 3,
  profile_location = 4,
  profile_function = 5,
  profile_string_table = 6,
  profile_default_sample_type = 14,
  value_type_type = 1,
  value_type_unit = 2,
  sample_location_id = 1,
  sample_value = 2,
  sample_label = 3,
  label_key = 1,
  label_str = 2,
  label_num = 3,
  mapping_id = 1,
  mapping_filename = 5,
  mapping_build_id = 6,
  mapping_has_functions = 7,
  location_id = 1,
  location_mapping_id = 2,
  location_address = 3,
  location_line = 4,
  line_function_id = 1,
  function_id = 1,
  function_name = 2,
  function_system_name = 3,
};

class Strings {
 public:
  Strings() { index(""); }
  std::uint64_t index(std::string_view s) {
    auto [it, made] = ids_.try_emplace(std::string(s), table_.size());
    if (made) table_.emplace_back(s);
    return it->second;
  }
  const std::vector<std::string>& table() const { return table_; }

 private:
  std::unordered_map<std::string, std::uint64_t> ids_;
  std::vector<std::string> table_;
};

// The unit of an event's period: the software clocks count nanoseconds.
std::string_view unit_of(std::string_view event) {
  std::string_view base = event.substr(0, event.find(':'));
  return base == "task-clock" || base == "cpu-clock" ? "nanoseconds" : "count";
}

// Mappings, functions and locations: each made once, numbered from 1 as profile.proto wants.
struct Tables {
  Strings strings;
  Proto out;
  std::unordered_map<std::string_view, std::uint64_t> mappings;  // by dso
  std::unordered_map<const record::Symbol*, std::uint64_t> functions;
  std::vector<std::uint64_t> locations;  // by frame index, 0 until made

  std::uint64_t mapping(const Profile& profile, std::string_view dso) {
    auto [it, made] = mappings.try_emplace(dso, mappings.size() + 1);
    if (!made) return it->second;
    Proto m;
    m.number(mapping_id, it->second);
    m.number(mapping_filename, strings.index(dso));
    if (std::string id = profile.build_id(dso); !id.empty()) m.number(mapping_build_id, strings.index(id));
    m.number(mapping_has_functions, 1);
    out.message(profile_mapping, m);
    return it->second;
  }
  std::uint64_t function(const record::Symbol* symbol) {
    auto [it, made] = functions.try_emplace(symbol, functions.size() + 1);
    if (!made) return it->second;
    Proto f;
    f.number(function_id, it->second);
    f.number(function_name, strings.index(symbol->name));
    f.number(function_system_name, strings.index(symbol->name));
    out.message(profile_function, f);
    return it->second;
  }
  std::uint64_t location(const Profile& profile, std::uint32_t frame) {
    if (locations.size() <= frame) locations.resize(profile.frames(), 0);
    if (locations[frame]) return locations[frame];
    const Frame& f = profile.frame(frame);
    Proto l;
    locations[frame] = frame + 1;
    l.number(location_id, frame + 1);
    if (!f.dso.empty()) l.number(location_mapping_id, mapping(profile, f.dso));
    l.number(location_address, f.ip);
    if (f.symbol) {
      Proto line;
      line.number(line_function_id, function(f.symbol));
      l.message(location_line, line);
    }
    out.message(profile_location, l);
    return locations[frame];
  }
};

void label(Proto& sample, Strings& strings, std::string_view key, std::string_view text, std::uint64_t num) {
  Proto l;
  l.number(label_key, strings.index(key));
  if (!text.empty()) l.number(label_str, strings.index(text));
  l.number(label_num, num);
  sample.message(sample_label, l);
}

}  // namespace

std::vector<std::byte> pprof_profile(const Profile& profile) {
  Tables t;
  const auto& events = profile.events();
  for (const Profile::Event& e : events) {
    Proto samples, period;
    samples.number(value_type_type, t.strings.index(e.name + "_samples"));
    samples.number(value_type_unit, t.strings.index("count"));
    period.number(value_type_type, t.strings.index(e.name));
    period.number(value_type_unit, t.strings.index(unit_of(e.name)));
    t.out.message(profile_sample_type, samples);
    t.out.message(profile_sample_type, period);
  }
  // pprof takes the first mapping for the program ("File:"): the binary of user space most samples are in
  std::unordered_map<std::string_view, std::uint64_t> in_binary;
  for (const Profile::Event& e : events)
    for (const Profile::Stack& stack : e.stacks)
      if (std::string_view dso = profile.frame(stack.frames.front()).dso; !dso.empty() && dso.front() != '[')
        in_binary[dso] += stack.samples;
  auto main = std::max_element(in_binary.begin(), in_binary.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first > b.first;
  });
  if (main != in_binary.end()) t.mapping(profile, main->first);
  std::vector<std::uint64_t> ids, values(events.size() * 2);
  for (std::size_t i = 0; i < events.size(); ++i) {
    for (const Profile::Stack& stack : events[i].stacks) {
      ids.clear();
      for (std::uint32_t f : stack.frames) ids.push_back(t.location(profile, f));
      std::fill(values.begin(), values.end(), 0);
      values[2 * i] = stack.samples, values[2 * i + 1] = stack.period;
      Proto s;
      s.packed(sample_location_id, ids);
      s.packed(sample_value, values);
      label(s, t.strings, "pid", {}, static_cast<std::uint64_t>(stack.pid));
      label(s, t.strings, "tid", {}, static_cast<std::uint64_t>(stack.tid));
      label(s, t.strings, "comm", profile.comm(stack.comm), 0);
      if (events[i].cpu) label(s, t.strings, "cpu", {}, stack.cpu);
      t.out.message(profile_sample, s);
    }
  }
  if (!events.empty()) t.out.number(profile_default_sample_type, t.strings.index(events[0].name));
  for (const std::string& s : t.strings.table()) t.out.bytes(profile_string_table, s);
  const std::string packed = gzip(t.out.data());
  const auto* bytes = reinterpret_cast<const std::byte*>(packed.data());
  return {bytes, bytes + packed.size()};
}

}  // namespace perfspec
