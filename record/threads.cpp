// SPDX-License-Identifier: MIT
// The threads of a recording and their names, as perf's machine keeps them.
#include <optional>

#include <fmt/format.h>

#include "perfspec/symbols.hpp"

namespace perfspec::record {

Threads::Threads(bool keep_exited) : keep_exited_(keep_exited) { threads_[0] = {"swapper", 0, true}; }

void Threads::apply(const Record& r) {
  last_ = nullptr;
  if (auto* c = r.get<Comm>()) {
    Thread& t = findnew(static_cast<std::int32_t>(c->pid), static_cast<std::int32_t>(c->tid));
    t.name = std::string(c->comm);
    t.named = true;
  } else if (auto* f = r.get<Task>(); f && r.kind() == Type::fork) {
    auto ptid = static_cast<std::int32_t>(f->ptid), ppid = static_cast<std::int32_t>(f->ppid);
    auto tid = static_cast<std::int32_t>(f->tid);
    auto parent = threads_.find(ptid);
    if (parent != threads_.end() && parent->second.pid != ppid && ptid != 0) {
      threads_.erase(parent);  // not the parent: a thread of a pid since reused
      parent = threads_.end();
    }
    std::optional<std::string> inherited;
    if (parent != threads_.end() && parent->second.named) inherited = parent->second.name;
    if (tid != 0) threads_.erase(tid);
    Thread& child = findnew(static_cast<std::int32_t>(f->pid), tid);
    if (inherited) child.name = std::move(*inherited), child.named = true;
  } else if (auto* x = r.get<Task>(); x && r.kind() == Type::exit && x->tid != 0 && !keep_exited_) {
    threads_.erase(static_cast<std::int32_t>(x->tid));  // perf forgets a thread that exited
  }
}

std::int32_t Threads::pid_of(std::int32_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? -1 : it->second.pid;
}

// perf's machine__findnew_thread: the thread of `tid`, made unnamed with `pid` when there is none; a
// known pid is kept.
Threads::Thread& Threads::findnew(std::int32_t pid, std::int32_t tid) {
  auto [it, made] = threads_.try_emplace(tid);
  if (made)
    it->second = {fmt::format(":{}", tid), pid, false};
  else if (it->second.pid == -1)
    it->second.pid = pid;
  return it->second;
}

}  // namespace perfspec::record
