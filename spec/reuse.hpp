// SPDX-License-Identifier: MIT
#pragma once
// Reusing nodes in place: the parser and the resolver fill vectors that an earlier call into the same
// list or set left behind, so that their strings keep their storage from call to call; each node type's
// clear() (or the parser's reset) empties one. Internal to the library.
#include <cstddef>
#include <vector>

namespace perfspec::spec {

/// The next node of `nodes` for a fill that has taken `used` of them: one an earlier fill left there,
/// reset by `reset(node)`, or a new one appended. Nodes past `used` are erased by `trim_nodes` at the end.
template <typename Node, typename Reset>
Node& next_node(std::vector<Node>& nodes, std::size_t& used, Reset&& reset) {
  if (used < nodes.size())
    reset(nodes[used]);
  else
    nodes.emplace_back();
  return nodes[used++];
}

/// Drops the nodes an earlier fill left beyond the `used` this one took.
template <typename Node> void trim_nodes(std::vector<Node>& nodes, std::size_t used) {
  if (nodes.size() > used) nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(used), nodes.end());
}

/// One fill of `storage` that reuses the nodes an earlier fill left (each emptied by its clear()):
/// it reads like a vector (size, emplace_back, indexing, resize to drop the last ones), and finish()
/// drops what the earlier fill left beyond this one.
///
/// Example: `Refill<ResolvedEvent> events(set.events); events.emplace_back().name = "x"; events.finish();`
template <typename Node> class Refill {
 public:
  explicit Refill(std::vector<Node>& storage) : v_(storage) {}
  std::size_t size() const { return used_; }
  Node& emplace_back() {
    return next_node(v_, used_, [](Node& n) { n.clear(); });
  }
  void resize(std::size_t n) { used_ = n < used_ ? n : used_; }  // drops the last ones (a rollback)
  Node& operator[](std::size_t i) { return v_[i]; }
  const Node& operator[](std::size_t i) const { return v_[i]; }
  void reserve(std::size_t n) {
    if (v_.capacity() < n) v_.reserve(n);
  }
  void finish() { trim_nodes(v_, used_); }

 private:
  std::vector<Node>& v_;
  std::size_t used_ = 0;
};

}  // namespace perfspec::spec
