// SPDX-License-Identifier: MIT
#include "exporter/cpu_readers.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace perfspec::exporter {

CpuReaders::CpuReaders(std::vector<int> cpus) : cpus_(std::move(cpus)) {
  for (std::size_t i = 0; i < cpus_.size(); ++i) threads_.emplace_back([this, i] { loop(i); });
}

CpuReaders::~CpuReaders() {
  {
    std::lock_guard l(m_);
    stop_ = true;
  }
  go_.notify_all();
  for (auto& t : threads_) t.join();
}

bool CpuReaders::serves(int cpu) const { return std::find(cpus_.begin(), cpus_.end(), cpu) != cpus_.end(); }

void CpuReaders::run(const std::function<void(int)>& work) {
  if (threads_.empty()) return;
  std::unique_lock l(m_);
  work_ = &work;
  pending_ = threads_.size();
  ++generation_;
  go_.notify_all();
  done_.wait(l, [this] { return pending_ == 0; });
  work_ = nullptr;
}

void CpuReaders::loop(std::size_t index) {
  const int cpu = cpus_[index];
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0 && cpu < CPU_SETSIZE) {
    CPU_SET(cpu, &set);
    (void)::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);  // else: from anywhere
  }
  std::uint64_t seen = 0;
  std::unique_lock l(m_);
  for (;;) {
    go_.wait(l, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* work = work_;
    l.unlock();
    (*work)(cpu);
    l.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace perfspec::exporter
