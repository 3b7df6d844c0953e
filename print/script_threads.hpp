// SPDX-License-Identifier: MIT
#pragma once
// The threads of a perf.data file and their names, as perf's machine keeps them for perf script.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "perfspec/record.hpp"

namespace perfspec::script {

// The threads' names, as perf's machine keeps them (tools/perf/util/machine.c): a thread is made by the
// first record that names its tid, with that record's pid; COMM names it; FORK makes the child anew
// (forgetting a thread the tid had before: a pid reused) and gives it the parent's name only when the
// parent was named (else it is `:CHILD`, never the parent's `:PARENT`), after forgetting a "parent"
// whose pid is not the FORK's ppid; EXIT forgets the thread. A thread never named shows as `:TID`.
class Threads {
 public:
  Threads() {
    Thread& swapper = threads_[0];
    swapper = {"swapper", 0, true};
  }
  void apply(const record::Record& r) {
    last_ = nullptr;
    if (auto* c = r.get<record::Comm>()) {
      Thread& t = findnew(static_cast<std::int32_t>(c->pid), static_cast<std::int32_t>(c->tid));
      t.name = std::string(c->comm);
      t.named = true;
    } else if (auto* f = r.get<record::Task>(); f && r.kind() == record::Type::fork) {
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
    } else if (auto* x = r.get<record::Task>(); x && r.kind() == record::Type::exit && x->tid != 0) {
      threads_.erase(static_cast<std::int32_t>(x->tid));  // perf forgets a thread that exited
    }
  }
  std::string_view name(std::int32_t pid, std::int32_t tid) {
    // The last thread asked for, remembered: samples come in runs of one thread. Its node (and so the
    // string) lives until apply() changes the threads, which forgets it here too.
    if (last_ && last_tid_ == tid) return *last_;
    last_tid_ = tid;
    last_ = &findnew(pid, tid).name;
    return *last_;
  }

 private:
  struct Thread {
    std::string name;
    std::int32_t pid = -1;
    bool named = false;
  };
  // perf's machine__findnew_thread: the thread of `tid`, made unnamed with `pid` when there is none; a
  // known pid is kept.
  Thread& findnew(std::int32_t pid, std::int32_t tid) {
    auto [it, made] = threads_.try_emplace(tid);
    if (made)
      it->second = {fmt::format(":{}", tid), pid, false};
    else if (it->second.pid == -1)
      it->second.pid = pid;
    return it->second;
  }
  std::unordered_map<std::int32_t, Thread> threads_;
  std::int32_t last_tid_ = 0;
  const std::string* last_ = nullptr;
};

}  // namespace perfspec::script
