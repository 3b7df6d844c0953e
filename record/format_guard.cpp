// SPDX-License-Identifier: MIT
#include "format_guard.hpp"

#include <event-parse.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec::record {

namespace {

// The C locale's classes, for a char as libtraceevent reads it (a signed char: a byte from 0x80 up
// is negative, and no class of its own).
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool printable(char c) { return c >= 0x20 && c < 0x7f; }
bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

struct Token {
  enum Kind { word, string, delim, op, end } kind = end;
  std::size_t at = 0, size = 0;
};

// The print fmt's tokens from `at`, newlines and spaces between them skipped (read_token_item). The
// stream ends where libtraceevent's does: the text's end, or a byte that is neither printable nor a
// space (it reads it as TEP_EVENT_NONE), also inside a string.
std::vector<Token> tokens_of(std::string_view text, std::size_t at) {
  std::vector<Token> out;
  auto is = [&](std::size_t i, char c) { return i < text.size() && text[i] == c; };
  while (at < text.size()) {
    char c = text[at];
    if (space(c)) {
      ++at;
      continue;
    }
    if (!printable(c)) break;
    Token t;
    t.at = at;
    if (word_char(c)) {
      t.kind = Token::word;
      while (at < text.size() && word_char(text[at])) ++at;
    } else if (c == '"' || c == '\'') {
      // Up to the quote no backslash precedes, or to the first byte that is neither printable nor a
      // newline (consumed with it); a NUL, a byte from 0x80 up or the text's end ends the stream.
      t.kind = Token::string;
      char last = c;
      bool open = true;
      for (++at; open; ++at) {
        if (at >= text.size() || text[at] == '\0' || static_cast<unsigned char>(text[at]) >= 0x80) return out;
        char ch = text[at];
        open = (ch != c && printable(ch)) || last == '\\' || ch == '\n';
        last = ch;
      }
    } else if (c == '(' || c == ')' || c == ',') {
      t.kind = Token::delim;
      ++at;
    } else {
      t.kind = Token::op;
      ++at;
      if (c == '-' && (is(at, '>') || is(at, '-'))) ++at;  // "->", and "--" (no "->" starts inside it)
    }
    t.size = at - t.at;
    out.push_back(t);
  }
  return out;
}

// The offset of the line that begins with the word "print" (the print fmt), or npos.
std::size_t print_line(std::string_view format) {
  for (std::size_t pos = 0; pos < format.size();) {
    std::size_t end = std::min(format.find('\n', pos), format.size());
    std::size_t at = pos;
    while (at < end && (format[at] == ' ' || format[at] == '\t')) ++at;
    if (format.substr(at, 5) == "print" && (at + 5 >= end || !word_char(format[at + 5]))) return pos;
    pos = end + 1;
  }
  return std::string_view::npos;
}

struct TepFree {
  void operator()(tep_handle* t) const { tep_free(t); }
};

// A format whose print fmt reads a field twice: after it, libtraceevent's "a flag field is next" and
// "a symbol field is next" are both clear, whatever an earlier file left in them.
constexpr std::string_view reset_format =
    "name: perfspec_reset\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int b;\toffset:4;\tsize:4;\tsigned:1;\n\nprint fmt: \"%d %d\", REC->b, REC->b\n";

}  // namespace

std::mutex& format_parse_mutex() {
  static std::mutex m;
  return m;
}

std::string guard_format(std::string_view format, std::string_view system) {
  std::unique_ptr<tep_handle, TepFree> tep(tep_alloc());
  if (!tep) throw std::bad_alloc();
  tep_event* reset = nullptr;
  tep_parse_format(tep.get(), &reset, reset_format.data(), reset_format.size(), "perfspec");

  std::string text(format);
  std::size_t print_at = print_line(format);
  if (print_at == std::string_view::npos) return text;  // refused by libtraceevent, safely
  // The event's fields, as libtraceevent reads them: the file with an empty print fmt.
  std::string fields_only(format.substr(0, print_at));
  fields_only += "print fmt: \"\"\n";
  std::string sys(system);
  tep_event* event = nullptr;
  tep_parse_format(tep.get(), &event, fields_only.data(), fields_only.size(), sys.c_str());
  if (!event) return text;  // its fields cannot be read: libtraceevent stops before the print fmt
  auto field = [&](std::string_view name) -> tep_format_field* {
    return tep_find_any_field(event, std::string(name).c_str());
  };
  auto line_of = [&](std::size_t at) {
    return 1 +
           static_cast<std::size_t>(std::count(format.begin(), format.begin() + static_cast<long>(at), '\n'));
  };

  std::vector<Token> toks = tokens_of(format, print_at);
  auto tok = [&](std::size_t i) { return i < toks.size() ? toks[i] : Token{}; };
  auto str = [&](const Token& t) { return format.substr(t.at, t.size); };
  auto is = [&](std::size_t i, Token::Kind k, std::string_view s) {
    Token t = tok(i);
    return t.kind == k && str(t) == s;
  };
  // Replacements of [at, at + size) by text, in the order of the file.
  struct Edit {
    std::size_t at, size;
    std::string by;
  };
  std::vector<Edit> edits;
  bool flag_next = false, symbol_next = false;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (toks[i].kind != Token::word) continue;
    std::string_view w = str(toks[i]);
    if ((w == "__print_flags" || w == "__print_symbolic") && is(i + 1, Token::delim, "(")) {
      (w == "__print_flags" ? flag_next : symbol_next) = true;
      ++i;
    } else if (w == "REC" && is(i + 1, Token::op, "->") && tok(i + 2).kind == Token::word) {
      std::string_view name = str(toks[i + 2]);
      if (!field(name) && (flag_next || symbol_next))
        throw Error(ErrorKind::bad_value,
                    fmt::format("a {} format file libtraceevent cannot parse: line {}: the print fmt "
                                "reads REC->{} in {}, and the event has no field {}",
                                system, line_of(toks[i].at), name,
                                flag_next ? "__print_flags" : "__print_symbolic", name));
      (flag_next ? flag_next : symbol_next) = false;
      i += 2;
    } else if (w == "sizeof" && is(i + 1, Token::delim, "(")) {
      // process_sizeof, on the tokens after "sizeof(": where 1.7.1 reads a freed token, `bad` is the
      // token that took it there and `size` what a fixed libtraceevent makes of the sizeof.
      std::size_t j = i + 2;
      std::size_t bad = 0;
      std::string size;
      if (is(j, Token::word, "unsigned")) {
        ++j;
        if (tok(j).kind != Token::word) continue;  // "unsigned" alone: 4, read safely
      }
      if (is(j, Token::word, "int")) {
        bad = j;
        size = "4";
      } else if (is(j, Token::word, "long")) {
        if (!is(j + 1, Token::word, "long")) continue;  // long: the traced kernel's, read safely
        bad = ++j;
        size = "8";
      } else if (is(j, Token::word, "REC") && is(j + 1, Token::op, "->") && tok(j + 2).kind == Token::word) {
        const tep_format_field* f = field(str(toks[j + 2]));
        if (!f || (f->flags & TEP_FIELD_IS_ARRAY)) continue;  // refused by libtraceevent, safely
        bad = j;
        j += 2;
        size = std::to_string(f->size);
      } else {
        continue;  // a type libtraceevent refuses, safely
      }
      if (is(j + 1, Token::delim, ")")) {
        edits.push_back({toks[i].at, toks[j + 1].at + 1 - toks[i].at, size});
        i = j + 1;
      } else {
        // A fixed libtraceevent refuses it for the missing ')': a word sizeof does not know here
        // makes 1.7.1 refuse it too, without the freed token.
        edits.push_back({toks[bad].at, toks[bad].size, "__perfspec_not_a_type"});
        i = j;
      }
    }
  }
  for (auto e = edits.rbegin(); e != edits.rend(); ++e) text.replace(e->at, e->size, e->by);
  return text;
}

std::optional<ChildFault> parse_in_child(std::size_t n, const std::function<void(std::size_t)>& parse,
                                         int timeout_ms) {
  if (n == 0) return std::nullopt;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  constexpr std::uint32_t all_returned = UINT32_MAX;
  if (pid == 0) {
    // The child: each index before its parse, then all_returned; _exit, no atexit (nor a leak check:
    // what libtraceevent loses here is lost with the process).
    ::close(fds[0]);
    // A fault ends the child as the kernel ends it: not in the handlers of whoever made the process
    // (a test framework's, a crash reporter's, a sanitizer's).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) ::signal(sig, SIG_DFL);
    tep_set_loglevel(TEP_LOG_NONE);
    for (std::size_t i = 0; i < n; ++i) {
      auto index = static_cast<std::uint32_t>(i);
      if (::write(fds[1], &index, sizeof index) != sizeof index) ::_exit(2);
      try {
        parse(i);
      } catch (...) {
      }
    }
    if (::write(fds[1], &all_returned, sizeof all_returned) != sizeof all_returned) ::_exit(2);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::optional<std::size_t> begun;
  bool returned = false, timed_out = false, unwatched = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {  // too long, or this process cannot watch (then no file is to blame)
      timed_out = ready == 0;
      unwatched = ready < 0;
      ::kill(pid, SIGKILL);
      break;
    }
    std::uint32_t v = 0;
    ssize_t got = ::read(fds[0], &v, sizeof v);  // 4 bytes: written and read whole
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof v)) break;  // the child has ended
    if (v == all_returned)
      returned = true;
    else
      begun = v;
  }
  ::close(fds[0]);
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if ((returned && !timed_out) || !begun || unwatched) return std::nullopt;
  ChildFault fault{*begun, {}};
  if (timed_out) {
    fault.how = fmt::format("a parse still running after {} ms", timeout_ms);
  } else if (waited == pid && WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    fault.how = name ? fmt::format("SIG{}", name) : fmt::format("signal {}", WTERMSIG(status));
  } else if (waited == pid && WIFEXITED(status)) {
    fault.how = fmt::format("exit status {}", WEXITSTATUS(status));
  } else {
    fault.how = "an end whose status is lost (SIGCHLD ignored)";
  }
  return fault;
}

namespace {

// libtraceevent's eval_type_str: a cast keeps the bits of the type's size (it never sign-extends).
std::uint64_t cast(std::uint64_t v, std::string_view type, bool pointer) {
  if (type.size() < 2) return v;
  if (pointer) {
    if (type.back() != '*') return v;
    return cast(v, type.substr(0, type.size() - 2), false);
  }
  if (type.back() == '*' || type.starts_with("struct")) return v;
  if (type == "u8" || type == "s8") return v & 0xff;
  if (type == "u16" || type == "s16") return v & 0xffff;
  if (type == "u32" || type == "s32") return v & 0xffffffff;
  if (type.starts_with("unsigned ")) type.remove_prefix(9);
  if (type == "char") return v & 0xff;
  if (type == "short") return v & 0xffff;
  if (type == "int") return v & 0xffffffff;
  return v;
}

// libtraceevent's evaluation of a print fmt's arguments on one payload, reading what it reads; the first
// fault found is kept. A value this cannot know (a symbol libtraceevent looks up, an address) is
// nullopt; it is a fault only where a length, an index or a divisor needs it. No function is
// registered with perfspec's tep_handles (no plugin is loaded), so no print fmt has a TEP_PRINT_FUNC:
// libtraceevent refuses a call of one it does not know.
class Evaluation {
 public:
  Evaluation(const tep_event* e, std::span<const std::byte> raw)
      : e_(e), tep_(e->tep), data_(raw.data()), size_(static_cast<std::int64_t>(raw.size())) {}
  std::optional<std::string> fault;

  using Value = std::optional<std::uint64_t>;

  Value num(const tep_print_arg* a) {
    if (!a || fault) return 0;
    switch (a->type) {
      case TEP_PRINT_ATOM: {
        std::uint64_t v = std::strtoull(a->atom.atom, nullptr, 0);
        if (v == 0 && !(a->atom.atom[0] >= '0' && a->atom.atom[0] <= '9')) return std::nullopt;
        return v;
      }
      case TEP_PRINT_FIELD: {
        const tep_format_field* f = field_of(a);
        if (!f || f->offset + f->size > size_) return 0;
        return tep_read_number(tep_, data_ + f->offset, f->size);
      }
      case TEP_PRINT_TYPE: {
        Value v = num(a->typecast.item);
        if (!v) return v;
        return cast(*v, a->typecast.type, false);
      }
      case TEP_PRINT_OP: return op(a);
      case TEP_PRINT_DYNAMIC_ARRAY_LEN: {
        std::uint64_t len = 0;
        dynamic(a->dynarray.field, nullptr, &len);
        return len;
      }
      case TEP_PRINT_DYNAMIC_ARRAY: return std::nullopt;  // an address
      default:  // NULL, flags, symbols, hex, arrays, strings, bitmasks: 0
        return 0;
    }
  }

  // print_str_arg's reads.
  void str(const tep_print_arg* a) {
    if (!a || fault) return;
    switch (a->type) {
      case TEP_PRINT_FLAGS: (void)num(a->flags.field); break;
      case TEP_PRINT_SYMBOL: (void)num(a->symbol.field); break;
      case TEP_PRINT_HEX:
      case TEP_PRINT_HEX_STR: {
        auto base = base_of(a->hex.field, a->type == TEP_PRINT_HEX ? "__print_hex" : "__print_hex_str");
        if (!base) break;
        Value len = num(a->hex.size);
        if (!len) return cannot_check("the length of a __print_hex");
        bound(*base, static_cast<std::uint32_t>(*len), "__print_hex");
        break;
      }
      case TEP_PRINT_INT_ARRAY: {
        auto base = base_of(a->int_array.field, "__print_array");
        if (!base) break;
        Value count = num(a->int_array.count);
        Value el = num(a->int_array.el_size);
        if (!count || !el) return cannot_check("the length of a __print_array");
        auto n = static_cast<std::uint32_t>(*count);
        auto size = static_cast<std::int32_t>(*el);
        // An element of another size is read as one byte (and printed as BAD SIZE).
        std::uint64_t each =
            size == 1 || size == 2 || size == 4 || size == 8 ? static_cast<std::uint64_t>(size) : 1;
        bound(*base, n * each, "__print_array");
        break;
      }
      case TEP_PRINT_OP: {
        if (a->op.op[0] != '?') break;
        Value c = num(a->op.left);
        const tep_print_arg* branches = a->op.right;
        if (!branches) break;
        if (!c || *c) str(branches->op.left);
        if (!c || !*c) str(branches->op.right);
        break;
      }
      default: break;
    }
  }

 private:
  const tep_event* e_;
  tep_handle* tep_;
  const std::byte* data_;
  std::int64_t size_;

  const tep_format_field* field_of(const tep_print_arg* a) const {
    if (a->field.field) return a->field.field;
    return tep_find_any_field(const_cast<tep_event*>(e_), a->field.name);
  }

  // dynamic_offset_field: the data_loc word's offset and length, each 0 when past the payload (in
  // libtraceevent's unsigned int arithmetic). Asked for the length only of a __rel_loc field, it
  // writes the offset through a null pointer.
  void dynamic(const tep_format_field* f, std::uint64_t* offset, std::uint64_t* len) {
    if (offset) *offset = 0;
    if (len) *len = 0;
    if (!f || f->offset + f->size > size_) return;
    std::uint64_t word = tep_read_number(tep_, data_ + f->offset, f->size);
    auto data_size = static_cast<std::uint32_t>(size_);
    auto o = static_cast<std::uint32_t>(word & 0xffff);
    std::uint32_t l = f->size == 2 ? data_size - o : static_cast<std::uint32_t>((word >> 16) & 0xffff);
    if (offset) *offset = o > data_size ? 0 : o;
    if (len) *len = static_cast<std::uint32_t>(o + l) > data_size ? 0 : l;
    if (f->flags & TEP_FIELD_IS_RELATIVE) {
      if (!offset) {
        fault = fmt::format(
            "the print fmt's __get_rel_dynamic_array_len({}) makes libtraceevent write through a "
            "null pointer",
            f->name);
        return;
      }
      *offset = static_cast<std::uint32_t>(*offset + static_cast<std::uint32_t>(f->offset + f->size));
    }
  }

  // Where a __print_hex / __print_array reads from; nullopt when libtraceevent reads nothing (a field
  // it does not find) or on a fault.
  std::optional<std::uint64_t> base_of(const tep_print_arg* f, std::string_view what) {
    if (!f) return std::nullopt;
    if (f->type == TEP_PRINT_DYNAMIC_ARRAY) {
      std::uint64_t offset = 0;
      dynamic(f->dynarray.field, &offset, nullptr);
      return offset;
    }
    if (f->type != TEP_PRINT_FIELD) {
      fault = fmt::format("the print fmt's {} reads an argument that is neither a field nor a dynamic array",
                          what);
      return std::nullopt;
    }
    const tep_format_field* field = field_of(f);
    if (!field) return std::nullopt;
    return static_cast<std::uint64_t>(field->offset);
  }

  void bound(std::uint64_t at, std::uint64_t n, std::string_view what) {
    if (at + n > static_cast<std::uint64_t>(size_))
      fault =
          fmt::format("the print fmt's {} reads [{}, +{}), past the payload ({} bytes)", what, at, n, size_);
  }

  void cannot_check(std::string_view what) {
    if (!fault)
      fault = fmt::format("{} depends on what perfspec cannot evaluate (a symbol or an address)", what);
  }

  Value op(const tep_print_arg* a) {
    std::string_view o = a->op.op ? a->op.op : "";
    if (o == "[") {
      Value right = num(a->op.right);
      const tep_print_arg* larg = a->op.left;
      const tep_print_arg* typearg = nullptr;
      while (larg && larg->type == TEP_PRINT_TYPE) {
        if (!typearg) typearg = larg;
        larg = larg->typecast.item;
      }
      if (larg && (larg->type == TEP_PRINT_DYNAMIC_ARRAY || larg->type == TEP_PRINT_FIELD)) {
        if (!right) {
          cannot_check("an array index");
          return 0;
        }
        std::uint32_t offset = 0;
        std::int64_t field_size = tep_get_long_size(tep_);
        if (larg->type == TEP_PRINT_DYNAMIC_ARRAY) {
          std::uint64_t base = 0;
          dynamic(larg->dynarray.field, &base, nullptr);
          offset = static_cast<std::uint32_t>(base + *right);
          if (larg->dynarray.field->elementsize) field_size = larg->dynarray.field->elementsize;
        } else {
          const tep_format_field* f = field_of(larg);
          if (!f) return 0;
          field_size = f->elementsize;
          offset = static_cast<std::uint32_t>(
              static_cast<std::uint64_t>(f->offset) +
              *right * static_cast<std::uint64_t>(static_cast<std::int64_t>(f->elementsize)));
        }
        // libtraceevent's own check adds them as ints: an offset from 2 GiB up passes it.
        if (static_cast<std::int64_t>(static_cast<std::int32_t>(offset)) +
                static_cast<std::int32_t>(field_size) >
            size_)
          return 0;
        if (std::uint64_t{offset} + static_cast<std::uint64_t>(field_size) >
            static_cast<std::uint64_t>(size_)) {
          fault = fmt::format("the print fmt's index reads [{}, +{}), past the payload ({} bytes)", offset,
                              field_size, size_);
          return 0;
        }
        std::uint64_t v = tep_read_number(tep_, data_ + offset, static_cast<int>(field_size));
        return typearg ? cast(v, typearg->typecast.type, true) : v;
      }
      // anything else: evaluated as an operator libtraceevent does not know, 0
    } else if (o == "?") {
      Value c = num(a->op.left);
      const tep_print_arg* branches = a->op.right;
      if (!branches) return 0;
      if (!c) {
        (void)num(branches->op.left);
        (void)num(branches->op.right);
        return std::nullopt;
      }
      return *c ? num(branches->op.left) : num(branches->op.right);
    }
    Value l = num(a->op.left), r = num(a->op.right);
    if (fault) return 0;
    if (o == "/" || o == "%") {
      if (!r) {
        cannot_check("a divisor");
        return 0;
      }
      if (*r == 0) {
        fault = fmt::format("the print fmt divides by zero ('{}' by a value of 0 in this payload)", o);
        return 0;
      }
    }
    if (!l || !r) return std::nullopt;
    std::uint64_t x = *l, y = *r;
    if (o == "!") return !y;
    if (o == "!=") return x != y;
    if (o == "~") return ~y;
    if (o == "||") return x || y;
    if (o == "|") return x | y;
    if (o == "&&") return x && y;
    if (o == "&") return x & y;
    if (o == "<") return x < y;
    if (o == "<<") return x << (y & 63);
    if (o == "<=") return x <= y;
    if (o == ">") return x > y;
    if (o == ">>") return x >> (y & 63);
    if (o == ">=") return x >= y;
    if (o == "==") return x == y;
    if (o == "-") return x - y;
    if (o == "+") return x + y;
    if (o == "/") return x / y;
    if (o == "%") return x % y;
    if (o == "*") return x * y;
    return 0;
  }
};

// Whether an argument has anything print_fault looks for: a read by a length or an index, a division,
// the length of a dynamic array. Most print fmts have none, and are printed unevaluated.
bool may_fault(const tep_print_arg* a) {
  if (!a) return false;
  switch (a->type) {
    case TEP_PRINT_HEX:
    case TEP_PRINT_HEX_STR:
    case TEP_PRINT_INT_ARRAY:
    case TEP_PRINT_DYNAMIC_ARRAY_LEN: return true;
    case TEP_PRINT_OP: {
      std::string_view o = a->op.op ? a->op.op : "";
      if (o == "[" || o == "/" || o == "%") return true;
      return may_fault(a->op.left) || may_fault(a->op.right);
    }
    case TEP_PRINT_TYPE: return may_fault(a->typecast.item);
    case TEP_PRINT_FLAGS: return may_fault(a->flags.field);
    case TEP_PRINT_SYMBOL: return may_fault(a->symbol.field);
    default: return false;
  }
}

}  // namespace

std::optional<std::string> print_fault(const tep_event* event, std::span<const std::byte> raw) {
  if (!event || (event->flags & TEP_EVENT_FL_FAILED)) return std::nullopt;  // printed as its fields
  bool any = false;
  for (const tep_print_arg* a = event->print_fmt.args; a && !any; a = a->next) any = may_fault(a);
  if (!any) return std::nullopt;
  Evaluation eval(event, raw);
  for (const tep_print_arg* a = event->print_fmt.args; a && !eval.fault; a = a->next) {
    (void)eval.num(a);
    eval.str(a);
  }
  return eval.fault;
}

}  // namespace perfspec::record
