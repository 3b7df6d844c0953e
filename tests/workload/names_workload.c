// SPDX-License-Identifier: MIT
// Functions named as other languages' compilers name them, each spinning in turn, for perf 6.12 and
// perfspec to show side by side (tests/cli/perf_script_side_by_side.py): rustc's legacy mangling
// (`_ZN...17h<hash>E`, with the escapes of its paths), Rust's v0 mangling (`_R...`), OCaml's
// (`camlModule__name`) and a JIT-less Java signature (`Lpkg/Class;method(ARGS)RET`). The names are
// given to the assembler as they are, so the binary's symbol table holds them unchanged.
//   names_workload [ITERATIONS-PER-FUNCTION]
#include <stdlib.h>

volatile unsigned long names_sink;

#define SPIN(fn, symbol)                                         \
  __attribute__((noinline)) void fn(long n) __asm__(symbol);     \
  void fn(long n) {                                              \
    for (long i = 0; i < n; ++i) names_sink += (unsigned long)i; \
  }

SPIN(rust_path, "_ZN4core3fmt5write17h4b8c6e0f1a2d3c5bE")
SPIN(rust_dot, "_ZN3a.b1c17h0123456789abcdeeE")
SPIN(rust_escapes, "_ZN47_$RF$T$C$$BP$u8$SP$$LP$$RP$$u27$$u5b$$u5d$$u7e$1f17h0123456789abcdedE")
SPIN(rust_few_digits, "_ZN3foo3bar17haaaaaaaaaaaaaaaaE")
SPIN(rust_all_digits, "_ZN3foo3baz17h0123456789abcdefE")
SPIN(rust_unknown_escape, "_ZN4main28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdeeE")
SPIN(rust_three_dots, "_ZN5a...b1c17h0123456789abcdeeE")
SPIN(rust_v0, "_RNvCs4fqI2P2rA04_7mycrate4spin")
SPIN(ocaml_path, "camlStdlib__List__map_413")
SPIN(ocaml_hex, "camlFoo$21bar")
SPIN(ocaml_lower, "camlfoo__bar")
SPIN(java_method, "\"Ljava/lang/String;hashCode()I\"")
SPIN(java_arguments, "\"Lcom/example/Foo;bar(I[JLjava/lang/Object;)V\"")
SPIN(java_arrays, "\"Lx;f([[Z[Ly/Z;)V\"")

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 3000000;
  rust_path(n);
  rust_dot(n);
  rust_escapes(n);
  rust_few_digits(n);
  rust_all_digits(n);
  rust_unknown_escape(n);
  rust_three_dots(n);
  rust_v0(n);
  ocaml_path(n);
  ocaml_hex(n);
  ocaml_lower(n);
  java_method(n);
  java_arguments(n);
  java_arrays(n);
  return 0;
}
