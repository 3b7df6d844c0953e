// SPDX-License-Identifier: MIT
// A perf.data file's header: struct perf_file_header, the attrs with their ids, the feature sections
// after the data (names, tracing data, event descriptions), and in pipe mode the records that carry
// the same facts.
#include <algorithm>
#include <bit>

#include "perfspec/perf_data.hpp"
#include "record/perf_data_impl.hpp"

namespace perfspec::record {

using namespace detail;

namespace {

constexpr std::string_view feature_names[] = {"",
                                              "tracing_data",
                                              "build_id",
                                              "hostname",
                                              "osrelease",
                                              "version",
                                              "arch",
                                              "nrcpus",
                                              "cpudesc",
                                              "cpuid",
                                              "total_mem",
                                              "cmdline",
                                              "event_desc",
                                              "cpu_topology",
                                              "numa_topology",
                                              "branch_stack",
                                              "pmu_mappings",
                                              "group_desc",
                                              "auxtrace",
                                              "stat",
                                              "cache",
                                              "sample_time",
                                              "mem_topology",
                                              "clockid",
                                              "dir_format",
                                              "bpf_prog_info",
                                              "bpf_btf",
                                              "compressed",
                                              "cpu_pmu_caps",
                                              "clock_data",
                                              "hybrid_topology",
                                              "pmu_caps"};

}  // namespace

std::string_view feature_name(Feature feature) {
  auto i = static_cast<unsigned>(feature);
  return i < std::size(feature_names) ? feature_names[i] : std::string_view{};
}

const Tracepoints* PerfData::Impl::get_tracepoints() const {
  if (tracing.empty()) return nullptr;
  if (!tracepoints_read) {
    tracepoints_read = true;
    try {
      try {
        tracepoints = std::make_unique<Tracepoints>(Tracepoints::from_tracing_data(
            tracing, static_cast<std::uint64_t>(tracing.data() - bytes.data())));
      } catch (const DecodeError& e) {
        rethrow_in(name, e);
      }
    } catch (...) {
      tracepoints_error = std::current_exception();
    }
  }
  if (tracepoints_error) std::rethrow_exception(tracepoints_error);
  return tracepoints.get();
}

// perf names a tracepoint event the file does not name after its format in the tracing data
// (evsel__prepare_tracepoint_event). Tracing data that cannot be read leaves the name as it was:
// the error is for whoever asks for the tracepoints.
void PerfData::Impl::name_tracepoints() {
  if (tracing.empty()) return;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (named[i] || events[i].attr.type != 2) continue;
    try {
      if (const Tracepoint* tp = get_tracepoints() ? get_tracepoints()->find(events[i].attr) : nullptr)
        events[i].name = tp->full_name();
    } catch (const Error&) {
      return;
    }
  }
}

void detail::check_magic(std::span<const std::byte> head) {
  if (head.size() < pipe_header_size)
    bad(0, fmt::format("{} bytes: too short for a perf.data header", head.size()));
  std::uint64_t magic = u64_at(head, 0);
  if (magic != magic2) {
    if (magic == __builtin_bswap64(magic2))
      bad(0, "written on a machine of the other byte order: perfspec reads native-endian files only");
    if (std::memcmp(head.data(), "PERFFILE", 8) == 0)
      bad(0, "a version 1 file (PERFFILE): only PERFILE2 files are read");
    bad(0, "not a perf.data file (no PERFILE2 magic)");
  }
}

void PerfData::Impl::parse() {
  check_magic(bytes.first(std::min<std::size_t>(bytes.size(), pipe_header_size)));
  std::uint64_t size = u64_at(bytes, 8);
  if (size == pipe_header_size) {
    pipe = true;
    data_offset = pipe_header_size;
    data_size = bytes.size() - pipe_header_size;
    pos = data_offset;
    return;
  }
  parse_file_header();
  pos = data_offset;
}

void PerfData::Impl::parse_file_header() {
  std::uint64_t size = u64_at(bytes, 8);
  if (size < file_header_size || bytes.size() < file_header_size || size > bytes.size())
    bad(8, fmt::format("header size {} (a file header is {} bytes, the file {})", size, file_header_size,
                       bytes.size()));
  std::uint64_t attr_size = u64_at(bytes, 16);
  auto attrs = section(bytes, u64_at(bytes, 24), u64_at(bytes, 32), "attrs", 24);
  auto data = section(bytes, u64_at(bytes, 40), u64_at(bytes, 48), "data", 40);
  data_offset = u64_at(bytes, 40);
  data_size = data.size();
  // attrs: perf_event_attr (attr_size - 16 bytes) then a perf_file_section of its ids
  if (attr_size < 64 + 16 || attr_size % 8 != 0 || attr_size > 4096)
    bad(16, fmt::format("attr_size {} is not the size of an attr and its ids section", attr_size));
  if (attrs.size() % attr_size != 0)
    bad(24, fmt::format("the attrs section ({} bytes) is not a whole number of {}-byte attrs", attrs.size(),
                        attr_size));
  for (std::size_t at = 0; at < attrs.size(); at += attr_size) {
    std::uint64_t where = u64_at(bytes, 24) + at;
    auto entry = attrs.subspan(at, attr_size);
    auto attr_bytes = entry.first(attr_size - 16);
    std::uint32_t own = u32_at(attr_bytes, 4);
    if (own > attr_bytes.size())
      bad(where, fmt::format("an attr says it is {} bytes, the file gives it {}", own, attr_bytes.size()));
    FileEvent e;
    e.attr = attr_from_bytes(attr_bytes);
    auto ids = section(bytes, u64_at(entry, attr_size - 16), u64_at(entry, attr_size - 8), "ids", where);
    if (ids.size() % 8 != 0)
      bad(where, fmt::format("an ids section of {} bytes is not whole u64s", ids.size()));
    e.ids.resize(ids.size() / 8);
    if (!e.ids.empty()) std::memcpy(e.ids.data(), ids.data(), ids.size());
    add_event(std::move(e), where);
  }
  // features: one perf_file_section per set bit, in bit order, right after the data section
  std::uint64_t at = data_offset + data_size;
  // A data size of 0 is what perf record (and PerfDataWriter) leave in the header until the recording
  // ends, when the features are written after the data: a file that says so, and has no features or
  // more than them after the data offset, was never finished (perf killed, a full disk). Its records
  // cannot be told from its features: refused, saying so.
  auto unfinished = [&] {
    bad(48,
        "the header's data size is 0, as perf record leaves it until the recording ends: the recording was "
        "not finished (was 'perf record' properly terminated?)");
  };
  std::uint64_t features_end = at;
  bool any_feature = false;
  try {
    for (unsigned bit = 0; bit < feature_bits; ++bit) {
      if (!(u64_at(bytes, 72 + 8 * (bit / 64)) >> (bit % 64) & 1)) continue;
      auto s = section(bytes, at, 16, "feature index", 72);
      features[bit] =
          section(bytes, u64_at(s, 0), u64_at(s, 8),
                  feature_name(static_cast<Feature>(bit)).empty() ? std::string_view("feature")
                                                                  : feature_name(static_cast<Feature>(bit)),
                  at);
      present[bit] = true;
      any_feature = true;
      at += 16;
      features_end = std::max({features_end, at, u64_at(s, 0) + u64_at(s, 8)});
    }
  } catch (const DecodeError&) {
    if (data_size == 0) unfinished();
    throw;
  }
  if (data_size == 0 && (!any_feature || features_end != bytes.size())) unfinished();
  if (present[static_cast<unsigned>(Feature::tracing_data)])
    tracing = features[static_cast<unsigned>(Feature::tracing_data)];
  parse_event_desc();
  name_tracepoints();
}

void PerfData::Impl::add_event(FileEvent e, std::uint64_t where) {
  try {
    formats.add(e.attr, e.ids);
  } catch (const DecodeError&) {
    throw;
  } catch (const Error& err) {
    bad(where, err.message());
  }
  named.push_back(!e.name.empty());
  if (e.name.empty()) e.name = attr_name(e.attr);
  events.push_back(std::move(e));
  if (tracepoints_read) name_tracepoints();
}

// HEADER_EVENT_DESC: the events' names, matched to the attrs by their first id (else by order).
void PerfData::Impl::parse_event_desc() {
  constexpr auto bit = static_cast<unsigned>(Feature::event_desc);
  if (!present[bit]) return;
  auto b = features[bit];
  std::uint64_t where = static_cast<std::uint64_t>(b.data() - bytes.data());
  if (b.size() < 8) bad(where, "event_desc: too short");
  std::uint32_t nr = u32_at(b, 0), attr_size = u32_at(b, 4);
  b = b.subspan(8);
  for (std::uint32_t i = 0; i < nr; ++i) {
    if (b.size() < std::size_t{attr_size} + 4) bad(where, fmt::format("event_desc: event {} is cut off", i));
    b = b.subspan(attr_size);
    std::uint32_t nr_ids = u32_at(b, 0);
    b = b.subspan(4);
    std::string event = header_string(b, where, "event_desc");
    if (nr_ids > b.size() / 8)
      bad(where, fmt::format("event_desc: {} ids of event {} run past the section", nr_ids, i));
    std::uint64_t first = nr_ids ? u64_at(b, 0) : 0;
    b = b.subspan(std::size_t{nr_ids} * 8);
    std::size_t target = i < events.size() ? i : Record::npos;
    if (nr_ids) {
      std::size_t by_id = formats.attr_of_id(first);
      if (by_id != Record::npos) target = by_id;
    }
    if (target != Record::npos) {
      events[target].name = std::move(event);
      named[target] = true;
    }
  }
}

void PerfData::Impl::apply_pipe_record(const Record& r) {
  switch (r.kind()) {
    case Type::header_attr: {
      const auto& h = *r.get<HeaderAttr>();
      FileEvent e;
      e.attr = h.attr;
      for (std::uint64_t id : h.ids) e.ids.push_back(id);
      add_event(std::move(e), r.offset);
      break;
    }
    case Type::header_feature: {
      const auto& f = *r.get<HeaderFeature>();
      if (f.feature < feature_bits) {
        features[f.feature] = f.data;
        present[f.feature] = true;
        if (f.feature == static_cast<unsigned>(Feature::event_desc)) parse_event_desc();
      }
      break;
    }
    case Type::event_update: {
      // struct perf_record_event_update: u64 type, u64 id, then the payload; type 2 (NAME) is a
      // string (0 UNIT, 1 SCALE, 3 CPUS)
      auto body = r.bytes.subspan(8);
      if (body.size() >= 16 && u64_at(body, 0) == 2) {
        auto s = body.subspan(16);
        const auto* p = reinterpret_cast<const char*>(s.data());
        std::size_t at = formats.attr_of_id(u64_at(body, 8));
        if (at != Record::npos) {
          events[at].name.assign(p, strnlen(p, s.size()));
          named[at] = true;
        }
      }
      break;
    }
    default: break;
  }
}

bool PerfData::has_feature(Feature f) const {
  auto i = static_cast<unsigned>(f);
  return i < feature_bits && impl_->present[i];
}

std::span<const std::byte> PerfData::feature(Feature f) const {
  return has_feature(f) ? impl_->features[static_cast<unsigned>(f)] : std::span<const std::byte>{};
}

std::uint64_t PerfData::feature_offset(Feature f) const {
  auto b = feature(f);
  const std::byte* start = impl_->bytes.data();
  if (b.empty() || b.data() < start || b.data() >= start + impl_->bytes.size()) return 0;
  return static_cast<std::uint64_t>(b.data() - start);
}

std::optional<std::string> PerfData::feature_string(Feature f) const {
  if (!has_feature(f)) return std::nullopt;
  auto b = feature(f);
  return header_string(b, static_cast<std::uint64_t>(b.data() - impl_->bytes.data()), feature_name(f));
}

std::vector<std::string> PerfData::cmdline() const {
  std::vector<std::string> out;
  auto b = feature(Feature::cmdline);
  if (b.size() < 4) return out;
  std::uint64_t where = static_cast<std::uint64_t>(b.data() - impl_->bytes.data());
  std::uint32_t nr = u32_at(b, 0);
  b = b.subspan(4);
  for (std::uint32_t i = 0; i < nr; ++i) out.push_back(header_string(b, where, "cmdline"));
  return out;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> PerfData::nr_cpus() const {
  auto b = feature(Feature::nrcpus);
  if (b.size() < 8) return std::nullopt;
  return std::pair{u32_at(b, 0), u32_at(b, 4)};
}

std::optional<std::uint64_t> PerfData::total_mem() const {
  auto b = feature(Feature::total_mem);
  if (b.size() < 8) return std::nullopt;
  return u64_at(b, 0);
}

std::span<const std::byte> PerfData::tracing_data() const { return impl_->tracing; }

const Tracepoints* PerfData::tracepoints() const { return impl_->get_tracepoints(); }

}  // namespace perfspec::record
