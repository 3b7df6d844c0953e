// SPDX-License-Identifier: MIT
// perf report's callchain graphs: the tree of a row's chains and its drawing.
#include "print/report_graph.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

namespace perfspec::report_detail {

using record::Frame;

FrameKeys::FrameKeys(const record::Profile& profile, bool addresses)
    : profile_(profile), addresses_(addresses) {
  std::unordered_map<std::string_view, std::uint32_t> ranks;
  dso_rank_.reserve(profile.frames());
  for (std::uint32_t i = 0; i < profile.frames(); ++i) {
    auto [it, made] = ranks.try_emplace(profile.frame(i).dso, static_cast<std::uint32_t>(ranks.size()));
    dso_rank_.push_back(it->second);
  }
}

bool FrameKeys::same(std::uint32_t a, std::uint32_t b) const {
  if (a == b) return true;
  const Frame &l = profile_.frame(a), &r = profile_.frame(b);
  // perf's match_chain: a function inlined (either) by its name, others by binary and symbol start
  if (l.symbol && r.symbol && (l.symbol->inlined || r.symbol->inlined))
    return l.symbol->name == r.symbol->name;
  if (l.dso != r.dso) return false;
  return l.symbol && r.symbol ? l.symbol->start == r.symbol->start : l.ip == r.ip;
}

bool FrameKeys::before(std::uint32_t a, std::uint32_t b) const {
  const Frame &l = profile_.frame(a), &r = profile_.frame(b);
  const bool symbols = !addresses_ && l.symbol && r.symbol;
  if (symbols && (l.symbol->inlined || r.symbol->inlined)) return l.symbol->name > r.symbol->name;
  // perf's match_chain_dso_addresses compares the binaries' objects by address: no binary (NULL)
  // is the least, the others as malloc placed them (the one made later, usually)
  if (l.dso.empty() != r.dso.empty()) return r.dso.empty();
  if (dso_rank_[a] != dso_rank_[b]) return dso_rank_[a] > dso_rank_[b];
  if (symbols) return l.symbol->start > r.symbol->start;
  return l.ip > r.ip;
}

std::string FrameKeys::name(std::uint32_t frame) const {
  const Frame& f = profile_.frame(frame);
  if (f.symbol && !addresses_) return f.symbol->inlined ? f.symbol->name + " (inlined)" : f.symbol->name;
  return f.ip ? fmt::format("{:#x}", f.ip) : "0";  // printf's %#llx: no 0x before a 0
}

namespace {

// `chain` goes on below `node`, all of whose frames it matched.
void add_below(Node* node, std::span<const std::uint32_t> chain, std::uint64_t period,
               const FrameKeys& keys) {
  while (!chain.empty()) {
    node->children_hit += period;
    Node* next = nullptr;
    for (auto& c : node->children)
      if (keys.same(c->frames.front(), chain.front())) next = c.get();
    if (!next) {
      auto made = std::make_unique<Node>();
      made->frames.assign(chain.begin(), chain.end());
      made->hit = period;
      node->children.push_back(std::move(made));
      return;
    }
    std::size_t k = 1;
    while (k < next->frames.size() && k < chain.size() && keys.same(next->frames[k], chain[k])) ++k;
    if (k < next->frames.size()) {  // the chain leaves the run (or ends) within it: split it there
      auto tail = std::make_unique<Node>();
      tail->frames.assign(next->frames.begin() + static_cast<std::ptrdiff_t>(k), next->frames.end());
      tail->hit = next->hit, tail->children_hit = next->children_hit;
      tail->children = std::move(next->children);
      next->frames.resize(k);
      next->hit = 0, next->children_hit = tail->cumul();
      next->children.clear();
      next->children.push_back(std::move(tail));
    }
    chain = chain.subspan(k);
    if (chain.empty()) next->hit += period;
    node = next;
  }
}

}  // namespace

void add_chain(Node& root, std::span<const std::uint32_t> chain, std::uint64_t period,
               const FrameKeys& keys) {
  if (chain.empty()) {
    root.hit += period;
    return;
  }
  add_below(&root, chain, period, keys);
}

namespace {

// The children perf shows, in its order: those of at least min_hit, by period (descending), ties in
// the order its tree keeps them.
std::vector<Node*> shown(Node& node, const GraphStyle& style, const FrameKeys& keys) {
  std::vector<Node*> out;
  for (auto& c : node.children)
    if (c->cumul() >= style.min_hit) out.push_back(c.get());
  std::sort(out.begin(), out.end(),
            [&](Node* a, Node* b) { return keys.before(a->frames[0], b->frames[0]); });
  std::stable_sort(out.begin(), out.end(), [](Node* a, Node* b) { return a->cumul() > b->cumul(); });
  return out;
}

struct Printer {
  std::string& out;
  const GraphStyle& style;
  const FrameKeys& keys;
  std::size_t margin = 0;

  void left() { out.append(12 + margin, ' '); }
  std::string percent(const Node& n) const {
    double share =
        style.total ? 100.0 * static_cast<double>(n.cumul()) / static_cast<double>(style.total) : 0;
    return fmt::format("--{:.2f}%--", share);
  }
  // perf's __callchain__fprintf_graph: a separator line, then each child's frames, the first with its
  // share; bit i of the mask says whether column i still has a `|`.
  void branches(const std::vector<Node*>& children, int depth, std::uint64_t mask) {
    std::uint64_t newmask = mask;
    for (std::size_t c = 0; c < children.size(); ++c) {
      const Node& child = *children[c];
      if (c + 1 == children.size()) newmask &= ~(std::uint64_t{1} << (depth - 1));
      left();
      for (int i = 0; i < depth; ++i) out += (mask >> i) & 1 ? "|          " : "           ";
      out += '\n';
      for (std::size_t k = 0; k < child.frames.size(); ++k) {
        left();
        for (int i = 0; i < depth; ++i) {
          out += (newmask >> i) & 1 ? '|' : ' ';
          if (k == 0 && i == depth - 1)
            out += percent(child);
          else
            out.append(10, ' ');
        }
        out += keys.name(child.frames[k]);
        out += '\n';
      }
      branches(shown(*children[c], style, keys), depth + 1, newmask | (std::uint64_t{1} << depth));
    }
  }
};

}  // namespace

namespace {

struct Folded {
  const Node* node;
  std::vector<const Node*> path;  // from the root's child down to the node
};

void collect_folded(const Node& node, std::vector<const Node*>& path, const GraphStyle& style,
                    const FrameKeys& keys, std::vector<Folded>& out) {
  std::vector<const Node*> children;
  for (const auto& c : node.children) children.push_back(c.get());
  std::sort(children.begin(), children.end(),
            [&](const Node* a, const Node* b) { return keys.before(a->frames[0], b->frames[0]); });
  for (const Node* c : children) {
    path.push_back(c);
    collect_folded(*c, path, style, keys, out);
    path.pop_back();
  }
  if (node.hit && node.hit >= style.min_hit && !path.empty()) out.push_back({&node, path});
}

void print_folded(std::string& out, const Node& root, const GraphStyle& style, const FrameKeys& keys) {
  std::vector<Folded> chains;
  std::vector<const Node*> path;
  collect_folded(root, path, style, keys, chains);
  std::stable_sort(chains.begin(), chains.end(),
                   [](const Folded& a, const Folded& b) { return a.node->hit > b.node->hit; });
  for (const Folded& f : chains) {
    double share =
        style.total ? 100.0 * static_cast<double>(f.node->hit) / static_cast<double>(style.total) : 0;
    out += fmt::format("{:.2f}% ", share);
    bool first = true;
    for (const Node* n : f.path)
      for (std::uint32_t frame : n->frames) {
        if (!first) out += ';';
        out += keys.name(frame);
        first = false;
      }
    out += '\n';
  }
}

}  // namespace

void print_graph(std::string& out, Node& root, const GraphStyle& style, const FrameKeys& keys) {
  if (style.folded) {
    print_folded(out, root, style, keys);
    return;
  }
  std::size_t start = out.size();
  Printer p{out, style, keys};
  std::vector<Node*> roots = shown(root, style, keys);
  if (roots.size() == 1 && roots[0]->cumul() == style.parent) {
    // a lone root of the row's whole period: its frames after `---`, no share
    bool printed = false;
    for (std::size_t i = 0; i < roots[0]->frames.size(); ++i) {
      if (i == 0 && style.skip_first) continue;
      p.left();
      if (!printed) {
        out += "|\n";
        p.left();
        out += "---";
        p.margin += 3;
        printed = true;
      }
      out += keys.name(roots[0]->frames[i]);
      out += '\n';
    }
    roots = shown(*roots[0], style, keys);
  }
  p.branches(roots, 1, 1);
  if (out.size() != start) out += '\n';
}

}  // namespace perfspec::report_detail
