// SPDX-License-Identifier: MIT
#pragma once
// Reading perf.data files (tools/perf/Documentation/perf.data-file-format.txt): the header, the
// attrs with their ids, the feature sections, and the data section's records, in file mode and in
// pipe mode (`perf record -o -`), whoever wrote them.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfspec/record.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::record {

class Tracepoints;

/// Feature bits of the header (HEADER_TRACING_DATA = 1 ... HEADER_PMU_CAPS = 31).
enum class Feature : unsigned {
  tracing_data = 1,
  build_id,
  hostname,
  osrelease,
  version,
  arch,
  nrcpus,
  cpudesc,
  cpuid,
  total_mem,
  cmdline,
  event_desc,
  cpu_topology,
  numa_topology,
  branch_stack,
  pmu_mappings,
  group_desc,
  auxtrace,
  stat,
  cache,
  sample_time_range,  // HEADER_SAMPLE_TIME ("sample_time")
  mem_topology,
  clockid,
  dir_format,
  bpf_prog_info,
  bpf_btf,
  compressed,
  cpu_pmu_caps,
  clock_data,
  hybrid_topology,
  pmu_caps,
};

/// perf's name of a feature ("hostname", "event_desc"), empty for an unknown bit.
///
/// Example: `feature_name(Feature::cmdline) == "cmdline"`.
std::string_view feature_name(Feature feature);

/// The name perf gives an event from its attr alone (evsel__name): `task-clock`, `cycles:u`,
/// `L1-dcache-load-misses`, `r1a8`, `mem:0x1000:w`.
///
/// Example: `attr_name(Attr{.type = 1, .config = 1}) == "task-clock:HG"` (the default excludes the guest
/// as perf record sets it: `exclude_guest = 1` gives `task-clock`).
std::string attr_name(const Attr& attr);

/// One event of the file: its attr, the kernel ids of its fds, and its name (from HEADER_EVENT_DESC, or
/// the last EVENT_UPDATE record read that renamed it, as perf renames it; until then, or when the file
/// does not name it, a tracepoint's `sys:name` from the tracing data, else attr_name's).
struct FileEvent {
  Attr attr;
  std::vector<std::uint64_t> ids;
  std::string name;
};

/// An open perf.data file. The records it yields are views into its bytes: valid while it lives.
///
/// Example:
/// ```
/// auto file = record::PerfData::open("perf.data");
/// record::Record r;
/// while (file.next(r))
///   if (auto* s = r.get<record::Sample>()) std::printf("%s %llx\n", file.event_name(r.attr).c_str(), ...);
/// ```
class PerfData {
 public:
  /// Map `path` (`-` reads standard input, a pipe-mode stream). A folder is read as perf record
  /// --threads writes one: the header in `data`, the records of the data.N files after its own (the
  /// `data` file alone is refused: its records are elsewhere). Throws Error (io) when it cannot be
  /// read, DecodeError when its header does not follow the format or says the recording was never
  /// finished (a data size of 0 with records after it).
  static PerfData open(const std::string& path);
  /// The same over bytes already in memory (a test, a fuzzer, a network stream).
  static PerfData from_bytes(std::vector<std::byte> bytes);
  PerfData(PerfData&&) noexcept;
  PerfData& operator=(PerfData&&) noexcept;
  ~PerfData();

  /// Written in pipe mode: attrs, features and tracing data arrive as records in the stream.
  bool pipe() const;
  /// The events known so far (all of them in file mode; in pipe mode, those whose ATTR record has
  /// been read).
  const std::vector<FileEvent>& events() const;
  /// The name of attr `index` (FileEvent::name); "unknown" for no attr.
  const std::string& event_name(std::size_t index) const;
  const Formats& formats() const;

  /// The next record of the data section, false at its end. Throws DecodeError for a record that
  /// does not follow the format (the offset is the file's). In pipe mode, ATTR, EVENT_UPDATE and
  /// FEATURE records are also applied to events() and the features as they pass; in file mode
  /// EVENT_UPDATE records (an event's new name).
  bool next(Record& out);
  /// Start again from the first record.
  void rewind();
  /// The record at `offset` of the file (one next() returned), decoded again: for a reader that
  /// visits records out of file order (sorted by time). Not in pipe mode. Throws DecodeError.
  void decode_at(std::uint64_t offset, Record& out) const;
  /// perf record -z: whether `offset` is that of a record decompressed from a COMPRESSED record (those
  /// are numbered past the end of the file and of its data.N files).
  bool decompressed(std::uint64_t offset) const;
  /// perf record -z: frees the decompressed records before `offset` but those of the chunk being read
  /// (decode_at no longer finds them): a reader that has visited them keeps the file's memory to what
  /// it has yet to visit. rewind() makes them again.
  void release_decompressed_before(std::uint64_t offset);
  /// The bytes of decompressed records held in memory.
  std::uint64_t decompressed_held() const;
  /// perf record -z: the COMPRESSED records read so far (next() yields the records they hold instead).
  std::uint64_t compressed_records() const;

  /// Where a record is, as perf's -D names it: the file (a folder's `data` or `data.N`; `pipe` for a
  /// stream) and the offset in it (a stream's counted after its 16-byte header); a record decompressed
  /// from a COMPRESSED record is at that record's place. For the record next() returned last (the
  /// chunk of a decompressed one is released later).
  struct Place {
    std::string_view path;
    std::uint64_t offset = 0;
  };
  Place place(const Record& r) const;

  /// Where the data section starts and how long it is (in pipe mode: everything after the header).
  std::uint64_t data_offset() const;
  std::uint64_t data_size() const;

  bool has_feature(Feature feature) const;
  /// The bytes of a feature section (empty when absent).
  std::span<const std::byte> feature(Feature feature) const;
  /// Where a feature's bytes start in the file (for errors; in pipe mode, in the stream as read).
  std::uint64_t feature_offset(Feature feature) const;
  /// A perf_header_string feature: hostname, osrelease, version, arch, cpudesc, cpuid.
  std::optional<std::string> feature_string(Feature feature) const;
  /// HEADER_CMDLINE: the perf command line that wrote the file.
  std::vector<std::string> cmdline() const;
  /// HEADER_NRCPUS: (available, online).
  std::optional<std::pair<std::uint32_t, std::uint32_t>> nr_cpus() const;
  /// HEADER_TOTAL_MEM, in kB.
  std::optional<std::uint64_t> total_mem() const;
  /// HEADER_TRACING_DATA (file mode) or the bytes after a TRACING_DATA record (pipe mode, once read).
  std::span<const std::byte> tracing_data() const;
  /// The tracepoints of tracing_data(), parsed on first use; nullptr when there is none (yet). Throws
  /// DecodeError (the offset is the file's) for tracing data that does not follow perf's layout.
  ///
  /// Example: `if (auto* tps = file.tracepoints()) if (auto* tp = tps->find(attr)) text = tp->print(raw);`
  const Tracepoints* tracepoints() const;

 private:
  struct Impl;
  explicit PerfData(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// How for_each_in_time_order() delivered the records.
enum class Order {
  time,  ///< sorted by time (stable: records of one time in file order)
  file,  ///< in file order: some attr's records carry no time (no PERF_SAMPLE_TIME or no sample_id_all)
};

/// Every record of the kernel's (type < user_type_start) in `file`, in time order as perf's session
/// delivers them to perf script and perf report, or in file order when some attr's records carry no
/// time. perf's own records (attrs, rounds, features) are not visited, but in pipe mode `on_attr` is
/// called with the index of each event as its ATTR record is read (before the records it describes
/// are visited: in pipe mode they are all read first). In file mode the records are decoded twice
/// (only those out of order are remembered between the passes); a pipe's are kept from the one pass.
/// A compressed file's (perf record -z) are ordered as perf orders them, round by round: at each
/// FINISHED_ROUND those no later than the latest time the round before had seen are visited, and the
/// decompressed records visited are released. A record that does not follow the format ends the walk: the
/// records read before it are visited first (in order), then its DecodeError is thrown; an exception from
/// `visit` ends it at once.
///
/// Example:
/// ```
/// auto file = record::PerfData::open("perf.data");
/// record::for_each_in_time_order(file, [&](const record::Record& r) { ... });
/// ```
Order for_each_in_time_order(PerfData& file, const std::function<void(const Record&)>& visit,
                             const std::function<void(std::size_t)>& on_attr = {});

/// What for_each_as_delivered() calls with each record: the record and where perf's -D says it is.
using DeliveryVisit = std::function<void(const Record&, const PerfData::Place&)>;

/// Every record of `file`, perf's own (attrs, rounds, features, ...) too, in the order perf's session
/// delivers them to a tool: what perf script -D and perf report -D print, record by record. perf's
/// records and the kernel's without a time (or of time 0) as read; the others queued by time (stable),
/// and at each FINISHED_ROUND those no later than the latest time queued at the round before with a
/// queue are delivered (after the round itself); the rest at the end. `ordered` false (perf's
/// --disable-order), or a file whose first attr has no sample_id_all (delivered_unordered()): all as
/// read. A record that does not follow the format ends the walk with its DecodeError, the records
/// still queued never visited (as perf, which fails before its last flush).
///
/// Example: `record::for_each_as_delivered(file, true, [&](const record::Record& r, const auto& at) {
/// std::printf("%#llx@%s\n", (unsigned long long)at.offset, std::string(at.path).c_str()); });`
void for_each_as_delivered(PerfData& file, bool ordered, const DeliveryVisit& visit);
/// perf's session falls back to the file's order: a file (not a pipe) whose first attr has no
/// sample_id_all (perf stat record's), "WARNING: No sample_id_all support, falling back to unordered
/// processing".
bool delivered_unordered(const PerfData& file);

/// Writes a perf.data file laid out as perf record lays it out. File mode: the header, the attrs with
/// their ids, the data section (records as they came, header included), then the feature sections;
/// `finish()` writes the features and the header's final sizes; a file never finished says so when
/// read (its data size is 0: "the recording was not finished"), never reads as a wrong one. Each attr has the
/// smallest size that holds the non-zero fields of every attr of the file (attr_size_needed), so that
/// perf 6.1, which refuses an attr longer than its 128 bytes, reads what perfspec writes.
///
/// Pipe mode (create_pipe, `perf record -o -`): a 16-byte header, then one stream of records: an
/// ATTR record per event (attrs of 136 bytes: see create_pipe), before the first data record the
/// features set so far as FEATURE records and the tracing data after a TRACING_DATA record, then the
/// data. A feature set after the first record follows where it is set.
///
/// Example:
/// ```
/// auto out = record::PerfDataWriter::create("perf.data", {{sampler.attrs()[0], sampler.ids()[0],
/// "task-clock"}}); sampler.read([&](std::span<const std::byte> r) { out.write(r); });
/// out.set_string(record::Feature::hostname, "build-7");
/// out.finish();
/// ```
class PerfDataWriter {
 public:
  /// Create `path` (truncating what is there) and write the header and the attrs. A path that is not a
  /// regular file (a device such as /dev/null, a FIFO) is written in pipe mode, as a stream. After a
  /// failed write (ENOSPC) the header says the whole records that reached the file. Throws Error (io).
  static PerfDataWriter create(const std::string& path, std::vector<FileEvent> events);
  /// Write pipe mode to `fd` (standard output, a pipe or a socket: it is written in order and never
  /// seeked, nor closed). `name` names it in errors ("standard output"). Throws Error (io) when a
  /// write fails (EPIPE when the reader is gone).
  ///
  /// Example: `auto out = record::PerfDataWriter::create_pipe(1, events, "standard output");`
  static PerfDataWriter create_pipe(int fd, std::vector<FileEvent> events, std::string name);
  /// Whether this writes pipe mode.
  bool pipe() const;
  PerfDataWriter(PerfDataWriter&&) noexcept;
  PerfDataWriter& operator=(PerfDataWriter&&) noexcept;
  /// Finishes the file if finish() was not called (errors are then lost: call finish()).
  ~PerfDataWriter();

  /// Append records (each with its header) to the data section. Throws Error (io) when a write fails.
  void write(std::span<const std::byte> records);
  /// A PERF_RECORD_FINISHED_ROUND: nothing before it is reordered after it by a reader. In pipe mode
  /// everything written so far is then sent.
  void finish_round();
  /// perf record -z: from here on the records written are gathered, and each round's (or each 128 KiB
  /// of them) written as one zstd frame of `level` (1 to 22) in PERF_RECORD_COMPRESSED records;
  /// HEADER_COMPRESSED says so, with the length a reader decompresses into (what one frame needs).
  /// Call before the first write (a pipe sends its features with the first).
  void compress(int level);
  /// With compress(): the bytes of records given to write() so far, and of the COMPRESSED records
  /// they became (perf's "original" size and its ratio).
  std::pair<std::uint64_t, std::uint64_t> compressed_sizes() const;
  /// The bytes of the data section so far.
  std::uint64_t data_size() const;

  /// Feature sections: hostname, osrelease, version, arch, cpudesc, cpuid (strings).
  void set_string(Feature feature, std::string value);
  void set_cmdline(std::vector<std::string> words);
  void set_nr_cpus(std::uint32_t available, std::uint32_t online);
  void set_total_mem(std::uint64_t kb);
  /// HEADER_SAMPLE_TIME: the first and last sample's time.
  void set_sample_time(std::uint64_t first, std::uint64_t last);
  /// Any feature, as its section's bytes (perf_data_writer does not check them).
  void set_feature(Feature feature, std::vector<std::byte> bytes);
  /// HEADER_CPU_TOPOLOGY, as perf writes it: the sibling lists, then per CPU from 0 to HEADER_NRCPUS'
  /// `available` less one its core and socket, then (only when `lists.dies` is not empty, as perf
  /// writes them only where the machine has dies) the die lists and each CPU's die. A CPU `cpus` does
  /// not hold has -1 for each.
  void set_cpu_topology(const spec::SiblingLists& lists, const std::vector<spec::CpuTopology>& cpus,
                        std::uint32_t available);
  /// HEADER_NUMA_TOPOLOGY: per node its number, memory (kB) and CPU list.
  void set_numa_topology(const std::vector<spec::NumaNode>& nodes);
  /// HEADER_PMU_MAPPINGS: each PMU's type and name, in perf's order (perfspec/recording.hpp's).
  void set_pmu_mappings(const std::vector<std::pair<std::uint32_t, std::string>>& pmus);
  /// One group of HEADER_GROUP_DESC: its name (perf's `{anon_group}` when it has none), its leader's
  /// index among the file's events and its number of members.
  struct GroupDescription {
    std::string name;
    std::uint32_t leader = 0, members = 0;
  };
  /// HEADER_GROUP_DESC: the groups of more than one event.
  void set_group_desc(const std::vector<GroupDescription>& groups);

  /// HEADER_TRACING_DATA: perf's tracing data (record::tracing_data_of), which perf script needs to read
  /// the payloads of tracepoint samples (without it perf refuses the file). Before the first record.
  void set_tracing_data(std::vector<std::byte> bytes);

  /// Write the features (with HEADER_EVENT_DESC from the events) and the final header. Throws Error (io).
  void finish();

 private:
  struct Impl;
  explicit PerfDataWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec::record
