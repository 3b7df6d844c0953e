// SPDX-License-Identifier: MIT
// The records of a perf.data file in time order, as perf's session sorts them before its tools see
// them (perf script, perf report): a stable sort by time.
#include <algorithm>
#include <vector>

#include "perfspec/perf_data.hpp"

namespace perfspec::record {
namespace {

// A record's place in the order: ordering by (time, offset) is the stable sort by time.
struct At {
  std::uint64_t time, offset;
  bool operator<(const At& o) const { return time != o.time ? time < o.time : offset < o.offset; }
};

std::uint64_t time_of(const Record& r) { return r.sample_id.has(sample_time) ? r.sample_id.time : 0; }

// Every attr's samples and records carry their time: then they can be sorted.
bool all_timed(const PerfData& file) {
  const Formats& formats = file.formats();
  for (std::size_t i = 0; i < formats.size(); ++i)
    if (!(formats.attr(i).sample_type & sample_time) || !formats.attr(i).sample_id_all) return false;
  return true;
}

// A file's records mostly come in time order already (each CPU's are, and perf writes them out in
// rounds). The first pass keeps only the others, the late ones: those earlier than a record before
// them. The second pass reads the file again, visits the records in order as they come, and before
// each, the late ones that sort before it. Nothing is kept for the records in order: on a large file,
// a list of them (16 bytes each) cost more than decoding them twice.
class TwoPasses {
 public:
  TwoPasses(PerfData& file, const std::function<void(const Record&)>& visit) : file_(file), visit_(visit) {}

  void first(const Record& r) {
    std::uint64_t time = time_of(r);
    if (time >= last_time_) {
      last_time_ = time;
      ++in_order_;
    } else {
      late_.push_back({time, r.offset});
      late_offsets_.push_back(r.offset);
    }
  }

  Order second() {
    std::sort(late_.begin(), late_.end());
    file_.rewind();
    Record r;
    std::size_t skip = 0;
    for (std::size_t visited = 0; visited < in_order_;) {
      if (!file_.next(r)) break;  // cannot happen: the first pass read as far
      if (r.type >= user_type_start) continue;
      if (skip < late_offsets_.size() && late_offsets_[skip] == r.offset) {
        ++skip;
        continue;
      }
      At at{time_of(r), r.offset};
      late_before(&at);
      visit_(r);
      ++visited;
    }
    late_before(nullptr);
    return Order::time;
  }

 private:
  PerfData& file_;
  const std::function<void(const Record&)>& visit_;
  std::vector<At> late_;                     // sorted by (time, offset) before the second pass
  std::vector<std::uint64_t> late_offsets_;  // the same records, in file order
  std::size_t in_order_ = 0;                 // records the second pass visits as it reads them
  std::uint64_t last_time_ = 0;
  std::size_t next_late_ = 0;
  Record other_;

  void late_before(const At* limit) {
    for (; next_late_ < late_.size() && (!limit || late_[next_late_] < *limit); ++next_late_) {
      file_.decode_at(late_[next_late_].offset, other_);
      visit_(other_);
    }
  }
};

// A pipe's records, and those of a compressed file (whose decompressed chunks a second pass would
// make again in another order), are all kept instead and sorted once: a pipe's as decoded (a later
// ATTR could change how one decodes; the stream stays in memory, so their views stay valid), a
// compressed file's by offset (decode_at finds them in the chunks, all still there).
class KeptAll {
 public:
  KeptAll(PerfData& file, const std::function<void(const Record&)>& visit) : file_(file), visit_(visit) {}

  void first(const Record& r) {
    order_.push_back({time_of(r), file_.pipe() ? kept_.size() : r.offset});
    if (file_.pipe()) kept_.push_back(r);
  }

  // Sorted when every attr (in a pipe: of the whole stream) has its time.
  Order second() {
    Order order = all_timed(file_) ? Order::time : Order::file;
    if (order == Order::time)
      std::stable_sort(order_.begin(), order_.end(),
                       [](const At& a, const At& b) { return a.time < b.time; });
    Record r;
    for (const At& a : order_) {
      if (file_.pipe()) {
        visit_(kept_[a.offset]);
      } else {
        file_.decode_at(a.offset, r);
        visit_(r);
      }
    }
    return order;
  }

 private:
  PerfData& file_;
  const std::function<void(const Record&)>& visit_;
  std::vector<At> order_;  // offset: an index of kept_ in a pipe
  std::vector<Record> kept_;
};

// The first pass over the file, then the second over what it kept (also when a record ends the first).
template <typename Passes>
Order two_passes(PerfData& file, Passes& passes, const std::function<void(std::size_t)>& on_attr) {
  Record r;
  try {
    while (file.next(r)) {
      if (r.kind() == Type::header_attr && file.pipe() && on_attr) on_attr(file.events().size() - 1);
      if (r.type < user_type_start) passes.first(r);
    }
  } catch (const Error&) {
    passes.second();  // the records read before the one that does not follow the format
    throw;
  }
  return passes.second();
}

}  // namespace

Order for_each_in_time_order(PerfData& file, const std::function<void(const Record&)>& visit,
                             const std::function<void(std::size_t)>& on_attr) {
  // A pipe's attrs are known only at its end: whether its records can be sorted too.
  if (file.pipe()) {
    KeptAll passes(file, visit);
    return two_passes(file, passes, on_attr);
  }
  if (!all_timed(file)) {
    Record r;
    while (file.next(r))
      if (r.type < user_type_start) visit(r);
    return Order::file;
  }
  if (file.has_feature(Feature::compressed)) {
    KeptAll passes(file, visit);
    return two_passes(file, passes, on_attr);
  }
  TwoPasses passes(file, visit);
  return two_passes(file, passes, on_attr);
}

}  // namespace perfspec::record
