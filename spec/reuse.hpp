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
  if (used < nodes.size()) reset(nodes[used]);
  else nodes.emplace_back();
  return nodes[used++];
}

/// Drops the nodes an earlier fill left beyond the `used` this one took.
template <typename Node>
void trim_nodes(std::vector<Node>& nodes, std::size_t used) {
  if (nodes.size() > used) nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(used), nodes.end());
}

}  // namespace perfspec::spec
