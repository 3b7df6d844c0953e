// SPDX-License-Identifier: MIT
// Fuzz target: the compiled index file of an events table (spec/table_index.cpp).
//
// A scratch events folder holds one small model; its first load writes a good index and teaches the
// target the index's name and signature. Each input then becomes the payload of an index file whose
// header is made consistent with it (its length, the checksums of its blocks, the header's own), so that
// the fuzzer reaches what a damaged or hostile file could hold past the header: diagnostics lines,
// offsets, lines without their fields, offsets out of order or out of the body. The first three bytes
// choose the number of lines and of diagnostics, and where the offsets start.
//
// Whatever the payload, a load must not crash, and every answer must be the JSON's or come from the
// index as written: find() of the model's names, events(), names() and diagnostics() are all called;
// an index whose lines cannot be read falls back to the JSON.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/common.hpp"
#include "perfspec/tables.hpp"
#include "spec/table_index.hpp"

namespace {

struct Model {
  std::string dir, cache, index, sig;
};

const Model& model() {
  static const Model m = [] {
    Model out;
    out.dir = fuzz::scratch() + "/events";
    out.cache = fuzz::scratch() + "/cache";
    fuzz::write_file(out.dir + "/mapfile.csv",
                     "Family-model,Version,Filename,EventType\nGenuineIntel-6-55-4,v1,m,core\n");
    fuzz::write_file(out.dir + "/m/cache.json",
                     R"([{"EventName": "MEM_LOAD_RETIRED.L1_MISS", "EventCode": "0xd1", "UMask": "0x8"},
                         {"EventName": "UNC_M_CAS_COUNT.RD", "EventCode": "0x04", "UMask": "0x03", "Unit": "iMC",
                          "ScaleUnit": "6.103515625E-5MiB"},
                         {"EventName": "BAD", "UMask": "zz"}])");
    perfspec::spec::EventTables::load(out.dir, "m", {out.cache});
    for (const auto& e : fuzz::fs::directory_iterator(out.cache)) out.index = e.path().string();
    // The signature is the index's second line.
    std::ifstream in(out.index);
    std::string line;
    std::getline(in, line);
    std::getline(in, out.sig);
    return out;
  }();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Model& m = model();
  if (size < 3) return 0;
  std::size_t lines = data[0] % 16, diagnostics = data[1] % 4;
  std::string_view payload(reinterpret_cast<const char*>(data) + 3, size - 3);
  std::size_t offsets_at = payload.empty() ? 0 : data[2] % (payload.size() + 1);
  std::size_t body_at = offsets_at + 8 * lines;
  if (body_at > payload.size())
    body_at = payload.size(), lines = (body_at - offsets_at) / 8, body_at = offsets_at + 8 * lines;
  fuzz::write_file(
      m.index, perfspec::spec::detail::index_image(m.sig, payload, lines, diagnostics, offsets_at, body_at));
  auto tables = perfspec::spec::EventTables::load(m.dir, "m", {m.cache});
  for (const char* name : {"mem_load_retired.l1_miss", "UNC_M_CAS_COUNT.RD", "bad", "", "zzz"})
    for (const auto* e : tables->find(name)) {
      if (e->alias.name.empty() || e->alias.terms.empty()) std::abort();  // an index line without its fields
    }
  (void)tables->diagnostics();
  for (const auto& e : tables->events())
    if (e.alias.name.empty()) std::abort();
  (void)tables->names();
  return 0;
}
