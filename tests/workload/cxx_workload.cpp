// SPDX-License-Identifier: MIT
// A C++ workload for symbol names: a class template's member function, a function taking a standard
// container, each on the stack while it spins (built without optimisation, with frame pointers).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace work {
template <typename T> struct Box {
  T v;
  __attribute__((noinline)) T spin(int n) const {
    T s{};
    for (int i = 0; i < n; ++i) s += v * i;
    return s;
  }
};
__attribute__((noinline)) double outer(const std::vector<double>& xs, int n) {
  Box<double> b{xs[0]};
  double s = 0;
  for (int k = 0; k < n; ++k) s += b.spin(100000);
  return s;
}
}  // namespace work

int main(int argc, char** argv) {
  std::vector<double> xs{1.5};
  std::map<std::string, int> m;
  m["a"] = 1;
  std::printf("%f\n", work::outer(xs, argc > 1 ? std::atoi(argv[1]) : 3000) + static_cast<double>(m.size()));
}
