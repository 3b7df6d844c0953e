// SPDX-License-Identifier: MIT
// Every record of a perf.data file in the order perf's session delivers it to a tool (what perf
// script -D and perf report -D print): perf's ordered events, round by round.
#include <map>

#include "perfspec/perf_data.hpp"

namespace perfspec::record {
namespace {

// perf's ordered_events: a queue sorted by time, stable (a record goes after those of its time), and
// the limit each FINISHED_ROUND sets for the next: the latest time queued when it came.
class Queue {
 public:
  Queue(PerfData& file, const DeliveryVisit& visit) : file_(file), visit_(visit) {}

  void hold(const Record& r, std::uint64_t time) {
    queued_.emplace(time, Held{r, file_.place(r)});  // multimap: after the records of equal time
  }

  // perf's ordered_events__flush(OE_FLUSH__ROUND): nothing while the queue is empty; else what is no
  // later than the limit the round before set (none for the first), then the latest time queued is
  // the next round's limit.
  void round() {
    if (queued_.empty()) return;
    const std::uint64_t latest = std::prev(queued_.end())->first;
    if (limit_ != 0) deliver(queued_.upper_bound(limit_));
    limit_ = latest;
  }

  void finish() { deliver(queued_.end()); }

 private:
  struct Held {
    Record record;
    PerfData::Place place;
  };
  PerfData& file_;
  const DeliveryVisit& visit_;
  std::multimap<std::uint64_t, Held> queued_;
  std::uint64_t limit_ = 0;

  void deliver(std::multimap<std::uint64_t, Held>::iterator end) {
    for (auto it = queued_.begin(); it != end;) {
      visit_(it->second.record, it->second.place);
      it = queued_.erase(it);
    }
    // the decompressed records no longer queued are let go (the chunk being read stays)
    std::uint64_t keep = ~std::uint64_t{0};
    for (const auto& [time, held] : queued_)
      if (file_.decompressed(held.record.offset)) keep = std::min(keep, held.record.offset);
    file_.release_decompressed_before(keep);
  }
};

// The time perf's session queues a kernel record by: a sample's TIME, another record's sample_id
// trailer's (with sample_id_all); 0 when it has none, which perf delivers at once (as it does the
// times 0 and all ones).
std::uint64_t queue_time(const Record& r) {
  if (!r.sample_id.has(sample_time)) return 0;
  return r.sample_id.time == ~std::uint64_t{0} ? 0 : r.sample_id.time;
}

}  // namespace

bool delivered_unordered(const PerfData& file) {
  return !file.pipe() && !file.events().empty() && !file.events().front().attr.sample_id_all;
}

void for_each_as_delivered(PerfData& file, bool ordered, const DeliveryVisit& visit) {
  ordered = ordered && !delivered_unordered(file);
  Queue queue(file, visit);
  Record r;
  while (file.next(r)) {
    const std::uint64_t time = ordered && r.type < user_type_start ? queue_time(r) : 0;
    if (time != 0) {
      queue.hold(r, time);
      continue;
    }
    visit(r, file.place(r));
    if (ordered && r.kind() == Type::finished_round) queue.round();
  }
  queue.finish();
}

}  // namespace perfspec::record
