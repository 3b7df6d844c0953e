#pragma once
// Reusing nodes in place: the parser and the resolver fill vectors that an earlier call into the same
// list or set left behind, so that their strings keep their storage from call to call. Internal to the
// library.
#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

namespace perfspec::spec {

/// Back to a default-constructed `node`, by assignment (so that no field, including one added later,
/// can be missed), with the storage of the `members` named handed back to them emptied by their own
/// clear(): a string keeps its buffer, a nested node whatever its clear() keeps.
///
/// Example: `reset_keeping(event, &ResolvedEvent::name, &ResolvedEvent::unit);`
template <typename T, typename... Member>
void reset_keeping(T& node, Member T::*... members) {
  std::tuple<Member...> kept{std::move(node.*members)...};
  node = T{};
  std::apply([&](auto&... k) { ((node.*members = std::move(k), (node.*members).clear()), ...); }, kept);
}

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
