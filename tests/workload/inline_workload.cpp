// SPDX-License-Identifier: MIT
// A workload whose hot code is inlined (perf's --inline): a class template's member function and a
// function template inlined into each other and into one function that is not, in a namespace, so
// that a DWARF-unwound profile shows inlined frames with C++ names. Built -O2 -g by the side by side.
#include <cstdio>
#include <cstdlib>

namespace calc {

template <typename T> struct Acc {
  T total{};
  [[gnu::always_inline]] inline void add(T v) { total += v * v + 1; }
};

[[gnu::always_inline]] inline unsigned long leaf(unsigned long x) { return (x << 3) ^ (x >> 2); }

template <typename T> [[gnu::always_inline]] inline T mid(T n) {
  Acc<T> a;
  for (T i = 0; i < n; ++i) a.add(i ^ leaf(i));
  return a.total;
}

[[gnu::noinline]] unsigned long top(unsigned long n) { return mid(n) * 3; }

}  // namespace calc

int main(int argc, char** argv) {
  const unsigned long n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
  unsigned long t = 0;
  for (unsigned k = 0; k < 100000; ++k) t += calc::top(n + (k & 7));
  std::printf("%lu\n", t);
  return 0;
}
