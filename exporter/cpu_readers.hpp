// SPDX-License-Identifier: MIT
#pragma once
// The exporter's threads and locks: a thread per CPU that reads that CPU's counters, and a lock that
// a scrape waits for with a time limit.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace perfspec::exporter {

/// One thread per CPU, each bound to its CPU, that run a piece of work together: the exporter reads
/// each CPU's counters on that CPU (a read of a counter counting on another CPU interrupts that CPU,
/// which costs a virtual machine dearly) and the CPUs' reads in parallel. A thread that cannot be
/// bound to its CPU (offline, outside this process's cpuset) still runs its work, from anywhere.
class CpuReaders {
 public:
  explicit CpuReaders(std::vector<int> cpus);
  ~CpuReaders();
  CpuReaders(const CpuReaders&) = delete;
  CpuReaders& operator=(const CpuReaders&) = delete;
  /// Run `work(cpu)` for every CPU, each on its thread; returns once all have returned.
  void run(const std::function<void(int cpu)>& work);
  /// Whether `cpu` has a thread here.
  bool serves(int cpu) const;

 private:
  void loop(std::size_t index);
  std::vector<int> cpus_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable go_, done_;
  const std::function<void(int)>* work_ = nullptr;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
};

/// A lock that can be waited for with a time limit, made of a mutex and a condition variable
/// (std::timed_mutex waits in pthread_mutex_clocklock, which ThreadSanitizer does not see, so that
/// every access under it would be reported as a race). Meets Lockable and TimedLockable's try_lock_for.
class TimedLock {
 public:
  void lock() {
    std::unique_lock l(m_);
    free_.wait(l, [this] { return !held_; });
    held_ = true;
  }
  bool try_lock() {
    std::lock_guard l(m_);
    if (held_) return false;
    held_ = true;
    return true;
  }
  template <typename Rep, typename Period> bool try_lock_for(std::chrono::duration<Rep, Period> d) {
    std::unique_lock l(m_);
    if (!free_.wait_for(l, d, [this] { return !held_; })) return false;
    held_ = true;
    return true;
  }
  void unlock() {
    {
      std::lock_guard l(m_);
      held_ = false;
    }
    free_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable free_;
  bool held_ = false;
};

}  // namespace perfspec::exporter
