// SPDX-License-Identifier: MIT
// Fuzz target: perf.data files (record::PerfData) and the `perfspec script` printer over them.
//
// Input: the bytes of a perf.data file (file mode or pipe mode), as they would be on disk.
//   1. PerfData::from_bytes; every record through next() to the end of the data section or the first
//      DecodeError, each field read (a view past the file is an ASan report); then every feature accessor
//      and every event's name.
//   2. In file mode, decode_at on each offset next() returned must give the same record again (the
//      formats do not change once the header is read), and on offsets in between must either decode or
//      throw DecodeError.
//   3. The script printer (perfspec::ScriptPrinter, as `perfspec script` runs it) over the same bytes
//      written to a scratch file and opened as a file, in the mode the input's last byte picks (text in
//      time order, text with every record, JSON lines, --summary), its output dropped.
//      PERFSPEC_FUZZ_SCRIPT=0 leaves it out.
// Any exception but perfspec::Error (a DecodeError for the decoding itself) is a failure.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/common.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/script.hpp"

namespace {

using namespace perfspec::record;

[[noreturn]] void fail(const char* what, std::uint64_t offset) {
  std::fprintf(stderr, "perf_data: %s (offset %#llx)\n", what, static_cast<unsigned long long>(offset));
  std::abort();
}

using fuzz::sink;
using fuzz::touch;

// The views of a record that point into the file (the record_decode target reads every field; here the
// spans that matter are the record's own bytes and its strings).
void touch(const Record& r) {
  touch(r.bytes);
  if (const auto* s = r.get<Sample>()) {
    for (std::uint64_t ip : s->callchain) sink = sink + ip;
    touch(s->raw);
    for (std::size_t i = 0; i < s->read.size(); ++i) sink = sink + s->read[i].value;
  } else if (const auto* m = r.get<Mmap>()) {
    touch(m->filename);
  } else if (const auto* m2 = r.get<Mmap2>()) {
    touch(m2->filename);
    touch(m2->build_id);
  } else if (const auto* c = r.get<Comm>()) {
    touch(c->comm);
  } else if (const auto* h = r.get<HeaderAttr>()) {
    for (std::uint64_t id : h->ids) sink = sink + id;
  } else if (const auto* t = r.get<ThreadMap>()) {
    for (std::size_t i = 0; i < t->nr; ++i) touch((*t)[i].comm);
  } else if (const auto* f = r.get<HeaderFeature>()) {
    touch(f->data);
  } else if (const auto* o = r.get<Opaque>()) {
    touch(o->body);
  }
}

bool script_on() {
  static const bool on = [] {
    const char* e = std::getenv("PERFSPEC_FUZZ_SCRIPT");
    return !(e && *e == '0');
  }();
  return on;
}

void features(const PerfData& file) {
  for (unsigned bit = 0; bit < 300; ++bit) {  // past the 256 bits of the header too
    auto f = static_cast<Feature>(bit);
    touch(feature_name(f));
    if (file.has_feature(f) != !file.feature(f).empty() && !file.feature(f).empty())
      fail("a feature with bytes that has_feature denies", bit);
    touch(file.feature(f));
    try {
      if (auto s = file.feature_string(f)) touch(*s);
    } catch (const DecodeError& e) {
      (void)e.message();
    }
  }
  try {
    for (const auto& arg : file.cmdline()) touch(arg);
  } catch (const DecodeError& e) {
    (void)e.message();
  }
  if (auto n = file.nr_cpus()) sink = sink + n->first + n->second;
  if (auto m = file.total_mem()) sink = sink + *m;
  touch(file.tracing_data());
  for (std::size_t i = 0; i <= file.events().size(); ++i) touch(file.event_name(i));
  touch(file.event_name(Record::npos));
  for (const auto& e : file.events()) {
    touch(attr_name(e.attr));
    for (std::uint64_t id : e.ids) sink = sink + id;
  }
}

void script(const std::uint8_t* data, std::size_t size) {
  static const std::string path = fuzz::scratch() + "/in.data";
  fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  perfspec::ScriptOptions o;
  o.name = path;
  // Symbols from nothing of this machine's: no binaries under an empty folder, a kallsyms of its own
  // (the names a record gives are opened there, each once).
  static const std::string symfs = [] {
    std::string d = fuzz::scratch() + "/symfs";
    fuzz::write_file(fuzz::scratch() + "/kallsyms", "ffffffff81000000 T _text\nffffffff81000100 T do_work\n");
    return d;
  }();
  o.symfs = symfs;
  o.kallsyms = fuzz::scratch() + "/kallsyms";
  switch (data[size - 1] % 6) {
    case 0:
      o.fields = {"comm,tid,time,event,ip"};
      o.samples_only = true;
      break;
    case 1: break;
    case 2:
      o.fields = {"comm,pid,tid,cpu,time,period,event,addr,ip"};
      o.ns = true;
      break;
    case 4: {
      // every field perfspec prints, by type: what a type's first event lacks is left out, not refused
      const std::string all =
          "comm,tid,pid,time,cpu,misc,event,addr,data_src,weight,ins_lat,retire_lat,cgroup,ip,sym,symoff,dso,"
          "iregs,uregs,phys_addr,data_page_size,code_page_size";
      o.fields = {"hw:" + all, "sw:" + all, "trace:" + all + ",trace", "raw:" + all, "break:" + all};
      o.samples_only = true;
      break;
    }
    case 3: o.format = perfspec::ScriptOptions::Format::json; break;
    default: o.summary = true; break;
  }
  try {
    perfspec::ScriptPrinter printer(std::move(o));
    auto file = PerfData::open(path);
    printer.print(file, [](std::string_view text) { sink = sink + text.size(); });
  } catch (const perfspec::Error& e) {
    (void)e.message();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size) std::memcpy(bytes.data(), data, size);
  std::optional<PerfData> file;
  try {
    file.emplace(PerfData::from_bytes(std::move(bytes)));
  } catch (const DecodeError& e) {
    (void)e.message();
    return 0;
  }
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint32_t> types;
  Record r;
  try {
    while (file->next(r)) {
      touch(r);
      // A COMPRESSED record's records are numbered past the end of the file (PerfData::decode_at finds
      // them there); every other record lies in the data section.
      const bool decompressed = r.offset >= size;
      if (!decompressed &&
          (r.offset < file->data_offset() || r.offset + r.size > file->data_offset() + file->data_size()))
        fail("a record outside the data section", r.offset);
      if (offsets.size() < 4096) {
        offsets.push_back(r.offset);
        types.push_back(r.type);
      }
    }
  } catch (const DecodeError& e) {
    (void)e.message();
  }
  if (!file->pipe()) {
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      try {
        file->decode_at(offsets[i], r);
      } catch (const DecodeError&) {
        fail("decode_at rejects a record next() returned", offsets[i]);
      }
      if (r.type != types[i] || r.offset != offsets[i]) fail("decode_at gives another record", offsets[i]);
      touch(r);
      for (std::uint64_t off : {offsets[i] + 1, offsets[i] + 4, offsets[i] + 8}) {
        try {
          file->decode_at(off, r);
          touch(r);
        } catch (const DecodeError& e) {
          (void)e.message();
        }
      }
    }
  }
  for (std::uint64_t off :
       {std::uint64_t{0}, file->data_offset() + file->data_size(), ~std::uint64_t{0} - 4}) {
    try {
      file->decode_at(off, r);
      touch(r);
    } catch (const DecodeError& e) {
      (void)e.message();
    }
  }
  features(*file);
  file->rewind();
  try {
    if (file->next(r) && !offsets.empty() && r.offset != offsets.front())
      fail("rewind does not start again at the first record", r.offset);
  } catch (const DecodeError& e) {
    (void)e.message();
  }
  file.reset();
  if (script_on() && size) script(data, size);
  return 0;
}
