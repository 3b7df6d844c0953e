// SPDX-License-Identifier: MIT
#pragma once
// perf report's callchain graphs (Linux 6.12 tools/perf/util/callchain.c, ui/stdio/hist.c): the
// chains of a row's samples merged into a tree whose nodes hold runs of frames, printed with perf's
// `|`, `---` and `--N.NN%--` drawing.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "perfspec/profile.hpp"

namespace perfspec::report_detail {

/// A run of frames that chains share, the period of the chains that end in it (hit) and of those
/// that go on (children_hit).
struct Node {
  std::vector<std::uint32_t> frames;
  std::uint64_t hit = 0, children_hit = 0;
  std::vector<std::unique_ptr<Node>> children;
  std::uint64_t cumul() const { return hit + children_hit; }
};

/// How frames compare in a graph (perf's match_chain with key=function): the same binary and
/// symbol, or, without a symbol, the same binary and address; and the order perf's tree keeps
/// siblings in before it sorts them by period.
class FrameKeys {
 public:
  /// `addresses`: the frames as perf's --hierarchy draws them, whose callchain_merge into the leaf
  /// entries keeps each frame's binary but not its symbol: named by address, ordered by binary and
  /// address (the graph's branches stay the functions' of the samples' chains).
  explicit FrameKeys(const record::Profile& profile, bool addresses = false);
  bool same(std::uint32_t a, std::uint32_t b) const;
  /// perf's sibling order: descending by binary (the one perf made later first) and by address.
  bool before(std::uint32_t a, std::uint32_t b) const;
  /// The frame as a graph line names it: its function, else its address (`%#llx`).
  std::string name(std::uint32_t frame) const;

 private:
  const record::Profile& profile_;
  bool addresses_ = false;
  std::vector<std::uint32_t> dso_rank_;  // by frame: the order its binary first appeared in
};

/// Adds a chain (frames in the order the graph shows them) of `period` below the root.
void add_chain(Node& root, std::span<const std::uint32_t> chain, std::uint64_t period, const FrameKeys& keys);

struct GraphStyle {
  std::uint64_t total = 0;    ///< the event's period: what percentages are of
  std::uint64_t min_hit = 0;  ///< branches with less are left out
  std::uint64_t parent = 0;   ///< the row's period (Self, or Children with children)
  bool skip_first = false;    ///< the sort starts with sym: a lone root's first frame is the row's
  bool folded = false;        ///< -g folded: one line per chain
};

/// The graph of one row, as perf's callchain__fprintf_graph prints it (a blank line after it when it
/// printed anything); with `folded`, as its callchain__fprintf_folded: per node where chains end (of
/// at least min_hit), `PCT frame;...;frame` from the root, by that period, most first (ties in the
/// order perf's flat sort visits them: children before their parent, siblings in its tree's order).
void print_graph(std::string& out, Node& root, const GraphStyle& style, const FrameKeys& keys);

}  // namespace perfspec::report_detail
