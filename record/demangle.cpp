// SPDX-License-Identifier: MIT
// How perf 6.12 shows an ELF symbol's name (tools/perf/util/symbol-elf.c, demangle_sym, as Debian
// builds it: without libbfd). A C++ name goes through abi::__cxa_demangle, and a C++ name that then
// reads as a Rust path with its hash (rustc's legacy mangling, `_ZN...17h<16 hex>E`) is written as
// Rust writes it; a name that is no C++ is tried as OCaml's (`camlModule__name`), then as a Java
// method's signature. Rust's v0 mangling (`_R...`) is left as it is: perf 6.12 has no reader for it.
#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "perfspec/symbols.hpp"
#include "record/demangle.hpp"

namespace perfspec::record {

namespace {

bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool ascii_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool any_hex(char c) { return lower_hex(c) || (c >= 'A' && c <= 'F'); }
int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

std::string cxx(const char* name) {
  if (name[0] != '_' || name[1] != 'Z') return {};  // see docs/perf-compatibility.md: names as types
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                  &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string{};
}

// ---- Rust, legacy mangling: a demangled C++ path whose last part is `h` and 16 hex digits ----------

// The escapes rustc writes for the characters a symbol cannot hold.
struct RustEscape {
  std::string_view text;
  char value;
};
constexpr std::array<RustEscape, 13> rust_escapes{{{"$C$", ','},
                                                   {"$SP$", '@'},
                                                   {"$BP$", '*'},
                                                   {"$RF$", '&'},
                                                   {"$LT$", '<'},
                                                   {"$GT$", '>'},
                                                   {"$LP$", '('},
                                                   {"$RP$", ')'},
                                                   {"$u20$", ' '},
                                                   {"$u27$", '\''},
                                                   {"$u5b$", '['},
                                                   {"$u5d$", ']'},
                                                   {"$u7e$", '~'}}};
constexpr std::size_t rust_hash_size = 3 + 16;  // "::h" and the digits

const RustEscape* rust_escape_at(std::string_view s, std::size_t at) {
  for (const auto& e : rust_escapes)
    if (s.substr(at, e.text.size()) == e.text) return &e;
  return nullptr;
}

// The hash uses between 5 and 15 of the 16 digits: a path part such as `haaaaaaaaaaaaaaaa` is more
// likely a name than a hash, and keeping it is the smaller harm (perf's rule).
bool rust_hash(std::string_view h) {
  if (h.substr(0, 3) != "::h") return false;
  unsigned seen = 0;
  for (char c : h.substr(3)) {
    if (!lower_hex(c)) return false;
    seen |= 1u << hex_value(c);
  }
  const int distinct = __builtin_popcount(seen);
  return distinct >= 5 && distinct <= 15;
}

bool rust_path(std::string_view s, std::size_t end) {
  for (std::size_t i = 0; i < end;) {
    const char c = s[i];
    if (c == '$') {
      const RustEscape* e = rust_escape_at(s, i);
      if (!e) return false;
      i += e->text.size();
    } else if (c == '.' && s.substr(i, 3) == "...") {
      return false;
    } else if (ascii_alnum(c) || c == '_' || c == ':' || c == '.') {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// `name` read as Rust wrote it, the hash left out; empty when it is no such path.
std::string rust(std::string_view s) {
  if (s.size() <= rust_hash_size) return {};
  const std::size_t end = s.size() - rust_hash_size;
  if (!rust_hash(s.substr(end)) || !rust_path(s, end)) return {};
  std::string out;
  out.reserve(end);
  for (std::size_t i = 0; i < end;) {
    const char c = s[i];
    if (c == '$') {
      const RustEscape* e = rust_escape_at(s, i);
      if (!e) break;  // cannot happen after rust_path; perf stops there too
      out += e->value;
      i += e->text.size();
    } else if (c == '_' && (i == 0 || s[i - 1] == ':') && s[i + 1] == '$') {
      ++i;  // the `_` rustc puts before a path part that starts with an escape
    } else if (c == '.') {
      const bool pair = s[i + 1] == '.';
      out += pair ? "::" : "-";
      i += pair ? 2 : 1;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// ---- OCaml: `caml`, a capital, `__` between module and name, `$xx` for other characters -------------

std::string ocaml(std::string_view s) {
  if (s.substr(0, 4) != "caml" || s.size() < 5 || !(s[4] >= 'A' && s[4] <= 'Z')) return {};
  std::string out;
  for (std::size_t i = 4; i < s.size();) {
    if (s[i] == '_' && i + 1 < s.size() && s[i + 1] == '_') {
      out += '.';
      i += 2;
    } else if (s[i] == '$' && i + 2 < s.size() && any_hex(s[i + 1]) && any_hex(s[i + 2])) {
      const char c = static_cast<char>(hex_value(s[i + 1]) << 4 | hex_value(s[i + 2]));
      if (c == 0) break;  // a NUL ends perf's string there
      out += c;
      i += 3;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// ---- Java: an OpenJDK method signature, `Lpkg/Class;method(ARGS)RET`, shown without its return ----

std::string_view java_base_type(char c) {
  switch (c) {
    case 'B': return "byte";
    case 'C': return "char";
    case 'D': return "double";
    case 'F': return "float";
    case 'I': return "int";
    case 'J': return "long";
    case 'S': return "short";
    case 'Z': return "boolean";
    default: return {};
  }
}

// perf's reader, state for state, with its output bound (three times the input, less one).
class JavaSignature {
 public:
  explicit JavaSignature(std::size_t input) : limit_(input * 3) {}

  // `s` up to its last ')'; `next` is the character after each (perf looks one past a ';').
  bool read(std::string_view s, std::size_t end) {
    for (std::size_t i = 0; i < end && out_.size() < limit_; ++i)
      if (!step(s[i], i + 1 < s.size() ? s[i + 1] : '\0')) return false;
    return true;
  }
  std::string take() { return std::move(out_); }

 private:
  enum class Mode { prefix, klass, function, type, class_type };

  void put(std::string_view text) { out_.append(text.substr(0, limit_ - out_.size())); }
  void put(char c) { out_ += c; }
  void argument_separator() {
    if (args_++) put(", ");
  }
  void array_suffix() {
    for (; arrays_ > 0; --arrays_) put("[]");
  }

  bool step(char c, char next) {
    switch (c) {
      case 'L':
        if (mode_ == Mode::prefix) {
          mode_ = Mode::klass;
        } else if (mode_ == Mode::type) {
          argument_separator();
          mode_ = Mode::class_type;
        } else {
          put(c);
        }
        return true;
      case 'B':
      case 'C':
      case 'D':
      case 'F':
      case 'I':
      case 'J':
      case 'S':
      case 'Z':
        if (mode_ != Mode::type) {
          put(c);
          return true;
        }
        argument_separator();
        put(java_base_type(c));
        array_suffix();
        return true;
      case 'V':
        if (mode_ != Mode::type) {
          put(c);
          return true;
        }
        put("void");
        array_suffix();
        return true;
      case '[':
        if (mode_ != Mode::type) return false;
        ++arrays_;
        return true;
      case '(':
        if (mode_ != Mode::function) return false;
        put(c);
        mode_ = Mode::type;
        return true;
      case ')':
        if (mode_ != Mode::type) return false;
        put(c);
        args_ = 0;
        return true;
      case ';':
        if (mode_ != Mode::klass && mode_ != Mode::class_type) return false;
        if (mode_ == Mode::klass && ascii_alpha(next)) put('.');
        mode_ = mode_ == Mode::klass ? Mode::function : Mode::type;
        return true;
      case '/':
        if (mode_ != Mode::klass && mode_ != Mode::class_type) return false;
        put('.');
        return true;
      default: put(c); return true;
    }
  }

  std::size_t limit_;
  std::string out_;
  Mode mode_ = Mode::prefix;
  int args_ = 0, arrays_ = 0;
};

std::string java(std::string_view s) {
  const std::size_t close = s.rfind(')');
  if (close == std::string_view::npos) return {};
  JavaSignature reader(s.size());
  if (!reader.read(s, close + 1)) return {};
  return reader.take();
}

}  // namespace

namespace detail {

std::string demangled_name(const char* name) {
  std::string out = cxx(name);
  if (!out.empty()) {
    std::string r = rust(out);
    return r.empty() ? out : r;
  }
  const std::string_view s(name);
  out = ocaml(s);
  return out.empty() ? java(s) : out;
}

}  // namespace detail

std::string demangle(const std::string& name) {
  std::string out = detail::demangled_name(name.c_str());
  return out.empty() ? name : out;
}

}  // namespace perfspec::record
