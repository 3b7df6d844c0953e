// SPDX-License-Identifier: MIT
// `perfspec decode`: attrs in (options, resolve's JSON, or perf stat -vv text), event strings out.
#include <cstdio>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "spec/printable.hpp"
#include "tools/decode.hpp"

namespace perfspec::tools {

namespace {

std::uint64_t parse_u64(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    unsigned long long v = std::stoull(text, &used, 0);
    if (used != text.size() || text.starts_with('-')) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw Error(perfspec::ErrorKind::usage, fmt::format("{}: '{}' is not a number", what, text));
  }
}

// Standard input, read up to one byte past the library's limit so that too much is refused
// without reading (or holding) all of it.
std::string read_bounded(std::FILE* in) {
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) {
    text.append(buf, n);
    if (text.size() > attr_input_max_bytes)
      throw Error(perfspec::ErrorKind::bad_value,
                  fmt::format("stdin: more than {} MiB of input", attr_input_max_bytes >> 20));
  }
  if (std::ferror(in)) throw Error(perfspec::ErrorKind::io, "stdin: read error");
  return text;
}

}  // namespace

int run_decode(const DecodeOptions& o) {
  spec::Machine machine(o.sysfs, o.machine);
  std::vector<Attr> attrs;
  if (o.fields.empty()) {
    attrs = parse_attr_input(read_bounded(stdin), machine);
  } else {
    Attr a;
    for (const auto& [name, value] : o.fields) {
      const AttrField* f = find_attr_field(name);
      if (!f) throw Error(perfspec::ErrorKind::usage, fmt::format("unknown attr field '{}'", name));
      f->set(a, parse_u64(value, name));
    }
    attrs.push_back(a);
  }
  std::vector<Decoded> all;
  for (const auto& a : attrs) {
    Decoded d = decode(a, machine);
    if (o.format == "json") {
      all.push_back(std::move(d));
      continue;
    }
    std::printf("%s\n", spec::printable(d.event).c_str());
    for (const auto& l : d.leftovers) std::fprintf(stderr, "note: %s\n", spec::printable(l).c_str());
    for (const auto& n : d.notes) std::fprintf(stderr, "note: %s\n", spec::printable(n).c_str());
  }
  if (o.format == "json") std::fputs(decode_json(all).c_str(), stdout);
  return 0;
}

}  // namespace perfspec::tools
