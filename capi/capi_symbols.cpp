// SPDX-License-Identifier: MIT
// The C API's symbolizer (perfspec_symbolizer_*) over record::Symbolizer.
#include <algorithm>
#include <cstring>
#include <span>

#include "capi/capi.hpp"
#include "perfspec/perfspec.h"

using perfspec::capi::fail;
using perfspec::capi::guarded;

extern "C" {

struct perfspec_symbolizer {
  perfspec::record::Symbolizer symbols;
};

namespace {
void to_c(const perfspec::record::Location& l, perfspec_location* out) {
  *out = perfspec_location{};
  // Location's strings are the symbolizer's own (interned names, table symbols): NUL-terminated there
  out->dso = l.dso.data();
  out->symbol = l.symbol ? l.symbol->name.c_str() : nullptr;
  out->offset = l.symbol_offset();
  out->dso_address = l.dso_address;
}
}  // namespace

int perfspec_symbolizer_open(const char* symfs, const char* kallsyms, perfspec_symbolizer** out) {
  if (!out) return fail(PERFSPEC_E_INVALID, "perfspec_symbolizer_open: a NULL argument");
  *out = nullptr;
  return guarded([&] {
    perfspec::record::SymbolOptions o;
    if (symfs) o.symfs = symfs;
    if (kallsyms) o.kallsyms = kallsyms;
    *out = new perfspec_symbolizer{perfspec::record::Symbolizer(std::move(o))};
  });
}

void perfspec_symbolizer_free(perfspec_symbolizer* s) { delete s; }

int perfspec_symbolizer_read_build_ids(perfspec_symbolizer* s, const perfspec_perf_data* f) {
  if (!s || !f) return fail(PERFSPEC_E_INVALID, "perfspec_symbolizer_read_build_ids: a NULL argument");
  return guarded([&] {
    if (f->file.has_feature(perfspec::record::Feature::build_id))
      s->symbols.read_build_ids(f->file.feature(perfspec::record::Feature::build_id));
  });
}

int perfspec_symbolizer_follow(perfspec_symbolizer* s, const perfspec_perf_data* f) {
  if (!s || !f) return fail(PERFSPEC_E_INVALID, "perfspec_symbolizer_follow: a NULL argument");
  return guarded([&] { s->symbols.apply(f->record()); });
}

int perfspec_symbolizer_locate(perfspec_symbolizer* s, uint32_t pid, uint64_t address, uint16_t misc,
                               perfspec_location* out) {
  if (!s || !out) return fail(PERFSPEC_E_INVALID, "perfspec_symbolizer_locate: a NULL argument");
  int found = 0;
  int code = guarded([&] {
    perfspec::record::Location l = s->symbols.locate(pid, address, misc);
    if (l.dso.empty()) return;
    to_c(l, out);
    found = 1;
  });
  return code ? code : found;
}

int perfspec_symbolizer_srcline(perfspec_symbolizer* s, uint32_t pid, uint64_t address, uint16_t misc,
                                char* buf, size_t size) {
  if (!s || !buf || size == 0)
    return fail(PERFSPEC_E_INVALID, "perfspec_symbolizer_srcline: a NULL argument or size 0");
  buf[0] = '\0';
  int found = 0;
  int code = guarded([&] {
    std::string line = s->symbols.srcline(pid, address, misc);
    if (line.empty()) return;
    const std::size_t n = std::min(line.size(), size - 1);
    std::memcpy(buf, line.data(), n);
    buf[n] = '\0';
    found = 1;
  });
  return code ? code : found;
}

int perfspec_symbolizer_locate_build_id(perfspec_symbolizer* s, const void* build_id, size_t size,
                                        uint64_t offset, perfspec_location* out) {
  if (!s || !build_id || !out)
    return fail(PERFSPEC_E_INVALID, "perfspec_symbolizer_locate_build_id: a NULL argument");
  int found = 0;
  int code = guarded([&] {
    perfspec::record::Location l = s->symbols.locate_build_id(
        std::span<const std::byte>(static_cast<const std::byte*>(build_id), size), offset);
    if (l.dso.empty()) return;
    to_c(l, out);
    found = 1;
  });
  return code ? code : found;
}

}  // extern "C"
