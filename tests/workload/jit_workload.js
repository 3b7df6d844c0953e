// SPDX-License-Identifier: MIT
// A JIT's workload: two JavaScript functions on the stack while they spin, compiled by V8. Run as
// `node --perf-basic-prof jit_workload.js [ROUNDS]`, node writes /tmp/perf-PID.map naming the code it
// compiles, which perf and perfspec read for the samples in that code
// (tests/cli/perf_script_side_by_side.py).
function spinInner(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += i % 7;
  return s;
}
function spinOuter(rounds) {
  let t = 0;
  for (let j = 0; j < rounds; j++) t += spinInner(100000);
  return t;
}
console.log(spinOuter(Number(process.argv[2] || 3000)));
