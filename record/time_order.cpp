// SPDX-License-Identifier: MIT
// The records of a perf.data file in time order, as perf's session sorts them before its tools see
// them (perf script, perf report): a stable sort by time, or for a compressed file perf's own ordering
// round by round.
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

  void round() {}

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

// A compressed file's records (perf record -z), as perf's session orders them (ordered_events): each
// is queued as read, and at each FINISHED_ROUND those no later than the latest time queued when the
// round before ended are visited in order (perf record ends a round once it has emptied every ring
// buffer, so no record after it can be earlier than what the round before had). A record of time 0 is
// visited at once, as perf does; the rest at the end. Once visited, a record's decompressed chunk is
// released: the memory held is what the rounds have yet to deliver, not the whole decompressed file.
class Rounds {
 public:
  Rounds(PerfData& file, const std::function<void(const Record&)>& visit) : file_(file), visit_(visit) {}

  void first(const Record& r) {
    std::uint64_t time = time_of(r);
    if (time == 0) {  // perf's ordered_events__queue: -ETIME, delivered as it comes
      visit_(r);
      return;
    }
    latest_ = queued_.empty() ? time : std::max(latest_, time);
    queued_.push_back({time, seq_++, r.offset});
  }

  void round() {
    if (limit_ != 0) flush(limit_);  // perf's first round delivers nothing: its limit is still 0
    limit_ = latest_;
  }

  Order second() {
    flush(~std::uint64_t{0});
    return Order::time;
  }

 private:
  struct Queued {
    std::uint64_t time, seq, offset;
    bool operator<(const Queued& o) const { return time != o.time ? time < o.time : seq < o.seq; }
  };
  PerfData& file_;
  const std::function<void(const Record&)>& visit_;
  std::vector<Queued> queued_;
  std::uint64_t seq_ = 0, latest_ = 0, limit_ = 0;
  Record record_;

  void flush(std::uint64_t limit) {
    auto due = std::stable_partition(queued_.begin(), queued_.end(),
                                     [&](const Queued& q) { return q.time <= limit; });
    std::sort(queued_.begin(), due);
    for (auto it = queued_.begin(); it != due; ++it) {
      file_.decode_at(it->offset, record_);
      visit_(record_);
    }
    queued_.erase(queued_.begin(), due);
    std::uint64_t keep = ~std::uint64_t{0};
    for (const Queued& q : queued_)
      if (file_.decompressed(q.offset)) keep = std::min(keep, q.offset);
    file_.release_decompressed_before(keep);
  }
};

// A pipe's records are all kept instead and sorted once, as decoded (a later ATTR could change how one
// decodes; the stream stays in memory, so their views stay valid).
class KeptAll {
 public:
  KeptAll(PerfData& file, const std::function<void(const Record&)>& visit) : file_(file), visit_(visit) {}

  void first(const Record& r) {
    order_.push_back({time_of(r), kept_.size()});
    kept_.push_back(r);
  }
  void round() {}

  // Sorted when every attr of the whole stream has its time.
  Order second() {
    Order order = all_timed(file_) ? Order::time : Order::file;
    if (order == Order::time)
      std::stable_sort(order_.begin(), order_.end(),
                       [](const At& a, const At& b) { return a.time < b.time; });
    for (const At& a : order_) visit_(kept_[a.offset]);
    return order;
  }

 private:
  PerfData& file_;
  const std::function<void(const Record&)>& visit_;
  std::vector<At> order_;  // offset: an index of kept_
  std::vector<Record> kept_;
};

// The first pass over the file, then the second over what it kept (also when a record ends the first).
template <typename Passes>
Order two_passes(PerfData& file, Passes& passes, const std::function<void(std::size_t)>& on_attr) {
  Record r;
  try {
    while (file.next(r)) {
      if (r.kind() == Type::header_attr && file.pipe() && on_attr) on_attr(file.events().size() - 1);
      if (r.type < user_type_start)
        passes.first(r);
      else if (r.kind() == Type::finished_round)
        passes.round();
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
    Rounds passes(file, visit);
    return two_passes(file, passes, on_attr);
  }
  TwoPasses passes(file, visit);
  return two_passes(file, passes, on_attr);
}

}  // namespace perfspec::record
