// SPDX-License-Identifier: MIT
// Fuzz target: PERF_RECORD_* decoding (record::Formats::decode, record::decode_sample) over a stream.
//
// Input: a control byte, then one or two attrs, then the stream.
//   byte 0: bit 0 a second attr; bit 1 sample_id_all (both attrs: they must agree); bit 2 the sample_type
//           and read_format bytes are taken whole (else masked to the bits the decoder knows, so that
//           most inputs get past Formats::add).
//   each attr: sample_type (4 bytes: bits 0-31), read_format (1 byte), branch_sample_type (1 byte: bit 0
//           HW_INDEX, bit 1 COUNTERS, the rest any of the low bits), sample_regs_user and
//           sample_regs_intr (8 bytes each), then a count of ids (low 2 bits) and one byte per id.
//   the rest: records, decoded one after another as a reader of a ring buffer or a data section does,
//           until the end or the first DecodeError (after which a reader cannot know where the next
//           record starts).
// Every field of every record is read (so that a view that runs past the input is an ASan report), and
// a sample is decoded a second time with decode_sample, which must agree. Any exception but a DecodeError
// from decode() is a failure.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz/common.hpp"
#include "perfspec/record.hpp"

namespace {

using namespace perfspec::record;

using fuzz::Reader;

[[noreturn]] void fail(const char* what, std::uint64_t offset) {
  std::fprintf(stderr, "record_decode: %s (record at offset %#llx)\n", what,
               static_cast<unsigned long long>(offset));
  std::abort();
}

using fuzz::sink;
using fuzz::touch;
void touch(const U64s& v) {
  std::uint64_t h = 0;
  for (std::uint64_t x : v) h ^= x;
  touch(v.bytes());
  sink = sink + h;
}
void touch(const ReadValues& r) {
  for (std::size_t i = 0; i < r.size(); ++i) {
    ReadValue v = r[i];
    sink = sink + v.value + v.id + v.lost;
  }
}
void touch(const Registers& r) {
  touch(r.values);
  for (unsigned reg = 0; reg < 64; ++reg)
    if (auto v = r.get(reg)) sink = sink + *v;
}

void touch(const Sample& s) {
  touch(s.read);
  touch(s.callchain);
  touch(s.raw);
  for (std::size_t i = 0; i < s.branches.size(); ++i) {
    Branch b = s.branches[i];
    sink = sink + b.from + b.to + b.flags;
  }
  touch(s.branches.counters);
  touch(s.regs_user);
  touch(s.regs_intr);
  touch(s.stack_user.data);
  if (s.stack_user.dyn_size > s.stack_user.data.size()) fail("STACK_USER dyn_size past its data", 0);
  sink = sink + s.weight.var1_dw() + s.weight.var2_w() + s.weight.var3_w();
  touch(s.aux);
}

struct Toucher {
  void operator()(const Opaque& o) const { touch(o.body); }
  void operator()(const Sample& s) const { touch(s); }
  void operator()(const Mmap& m) const { touch(m.filename); }
  void operator()(const Mmap2& m) const {
    touch(m.build_id);
    touch(m.filename);
  }
  void operator()(const Comm& c) const { touch(c.comm); }
  void operator()(const Read& r) const { touch(r.values); }
  void operator()(const Namespaces& n) const {
    touch(n.words);
    if (n.size() * 2 > n.words.size()) fail("namespaces past their words", 0);
  }
  void operator()(const Ksymbol& k) const { touch(k.name); }
  void operator()(const Cgroup& g) const { touch(g.path); }
  void operator()(const TextPoke& t) const {
    touch(t.old_bytes);
    touch(t.new_bytes);
  }
  void operator()(const HeaderAttr& h) const {
    touch(h.ids);
    sink = sink + h.attr.sample_type + h.attr.size;
  }
  void operator()(const IdIndex& x) const {
    for (std::size_t i = 0; i < x.size(); ++i) {
      IdIndexEntry e = x[i];
      sink = sink + e.id + e.idx + e.cpu + e.tid;
    }
  }
  void operator()(const ThreadMap& m) const {
    if (m.nr > m.entries.size() / 24) fail("THREAD_MAP nr past its entries", 0);
    for (std::size_t i = 0; i < m.nr; ++i) touch(m[i].comm);
  }
  void operator()(const HeaderFeature& f) const { touch(f.data); }
  void operator()(const BuildId& b) const {
    touch(b.build_id);
    touch(b.filename);
  }
  template <typename T> void operator()(const T&) const {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  Reader in{data + 1, size - 1};
  const std::uint8_t control = data[0];
  const int nattrs = (control & 1) ? 2 : 1;
  Formats formats;
  std::vector<perfspec::Attr> attrs;
  for (int i = 0; i < nattrs; ++i) {
    perfspec::Attr a;
    a.size = perfspec::attr_size_ver8;
    a.sample_id_all = (control >> 1) & 1;
    a.sample_type = in.take(4);
    a.read_format = in.take(1);
    if (!(control & 4)) {
      a.sample_type &= sample_known;
      a.read_format &= 31;
    }
    std::uint64_t branch = in.take(1);
    a.branch_sample_type = (branch & 0xfc) >> 2 | ((branch & 1) << 17) | ((branch & 2) << 18);
    a.sample_regs_user = in.take(8);
    a.sample_regs_intr = in.take(8);
    std::vector<std::uint64_t> ids(in.take(1) & 3);
    for (auto& id : ids) id = in.take(1);
    try {
      formats.add(a, ids);
      attrs.push_back(a);
    } catch (const DecodeError&) {
      fail("Formats::add threw a DecodeError (it names no record)", 0);
    } catch (const perfspec::Error& e) {
      (void)e.message();  // attrs that cannot share a stream, or bits the decoder does not know
    }
  }

  const auto* base = reinterpret_cast<const std::byte*>(in.p);
  std::span<const std::byte> stream(base, in.n);
  std::uint64_t offset = 0;
  Record r;
  while (offset < stream.size()) {
    auto rest = stream.subspan(static_cast<std::size_t>(offset));
    try {
      formats.decode(rest, offset, r);
    } catch (const DecodeError& e) {
      if (e.offset() != offset) fail("a DecodeError names another offset", offset);
      (void)e.message();
      break;
    }
    if (r.size < 8 || r.size > rest.size() || r.bytes.data() != rest.data() || r.bytes.size() != r.size)
      fail("the record's bytes are not the header's size at its offset", offset);
    if (r.attr != Record::npos && r.attr >= formats.size()) fail("attr index past the attrs", offset);
    std::visit(Toucher{}, r.body);
    if (const auto* s = r.get<Sample>()) {
      if (r.attr == Record::npos) fail("a sample decoded without an attr", offset);
      Sample again;
      try {
        again = decode_sample(r.bytes.subspan(8), formats.attr(r.attr), offset);
      } catch (const DecodeError&) {
        fail("decode_sample rejects a sample decode accepted", offset);
      }
      if (again.ip != s->ip || again.time != s->time || again.callchain.size() != s->callchain.size() ||
          again.raw.size() != s->raw.size() || again.read.size() != s->read.size())
        fail("decode_sample and decode disagree", offset);
    }
    offset += r.size;
  }
  return 0;
}
