// SPDX-License-Identifier: MIT
// perf report -D: the records as perf's session delivers them, dumped, each sample's thread and
// binary as perf report resolves them, then perf's statistics.
#include <unordered_map>

#include "perfspec/report.hpp"
#include "print/raw_dump.hpp"

namespace perfspec {

using namespace perfspec::record;

void dump_raw_trace(PerfData& file, const RawDumpOptions& options,
                    const std::function<void(std::string_view)>& write) {
  Symbolizer symbols(options.symbols);
  Threads threads(true);  // perf report keeps exited threads
  raw_dump::Dumper dump(file, raw_dump::Tool::report, options.ordered, symbols);
  std::vector<std::uint64_t> samples;                          // by event: those perf report took
  std::unordered_map<std::uint64_t, std::uint64_t> last_read;  // PERF_SAMPLE_READ: value by id
  fmt::memory_buffer out;
  auto flush = [&] {
    write(std::string_view(out.data(), out.size()));
    out.clear();
  };
  auto took = [&](const Record& r, const Sample& s, std::size_t event) {
    const auto tid = static_cast<std::int32_t>(s.tid);
    raw_dump::Dumper::resolved(out, threads.name(static_cast<std::int32_t>(s.pid), tid), tid, r.misc,
                               symbols.binary_of(s.pid, s.ip, r.misc));
    if (samples.size() <= event) samples.resize(event + 1);
    ++samples[event];
  };
  try {
    for_each_as_delivered(file, options.ordered, [&](const Record& r, const PerfData::Place& at) {
      dump.record(out, r, at);
      if (const auto* s = r.get<Sample>()) {
        if (!s->has(sample_read)) {
          took(r, *s, r.attr);
        } else {  // perf delivers a sample per value read that changed, as its id's event's
          for (std::size_t i = 0; i < s->read.size(); ++i) {
            const ReadValue v = s->read[i];
            const std::size_t event = (s->read.format & 4) ? file.formats().attr_of_id(v.id) : r.attr;
            if (event == Record::npos) continue;
            std::uint64_t& last = last_read[(s->read.format & 4) ? v.id : ~std::uint64_t{0}];
            const bool changed = v.value != last;
            last = v.value;
            if (changed) took(r, *s, event);
          }
        }
      } else if (r.type < user_type_start) {
        symbols.apply(r);
        threads.apply(r);
      }
      if (out.size() > (1 << 16)) flush();
    });
  } catch (const Error&) {
    flush();
    throw;
  }
  dump.statistics(out, samples);
  flush();
}

}  // namespace perfspec
