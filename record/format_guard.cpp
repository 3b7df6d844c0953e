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

// The print fmt's tokens, read for what libtraceevent 1.7.1 mishandles: the edits that make it safe.
class Guard {
 public:
  Guard(std::string_view format, std::string_view system, tep_event* event, std::size_t print_at)
      : format_(format), system_(system), event_(event), toks_(tokens_of(format, print_at)) {}

  std::string run() {
    for (std::size_t i = 0; i < toks_.size(); ++i) {
      if (toks_[i].kind != Token::word) continue;
      std::string_view w = str(toks_[i]);
      if ((w == "__print_flags" || w == "__print_symbolic") && is(i + 1, Token::delim, "(")) {
        (w == "__print_flags" ? flag_next_ : symbol_next_) = true;
        ++i;
      } else if (w == "REC" && is(i + 1, Token::op, "->") && tok(i + 2).kind == Token::word) {
        field_read(i);
        i += 2;
      } else if (w == "sizeof" && is(i + 1, Token::delim, "(")) {
        i = size_of(i);
      }
    }
    std::string text(format_);
    for (auto e = edits_.rbegin(); e != edits_.rend(); ++e) text.replace(e->at, e->size, e->by);
    return text;
  }

 private:
  // Replacements of [at, at + size) by text, in the order of the file.
  struct Edit {
    std::size_t at, size;
    std::string by;
  };
  std::string_view format_, system_;
  tep_event* event_;
  std::vector<Token> toks_;
  std::vector<Edit> edits_;
  bool flag_next_ = false, symbol_next_ = false;

  Token tok(std::size_t i) const { return i < toks_.size() ? toks_[i] : Token{}; }
  std::string_view str(const Token& t) const { return format_.substr(t.at, t.size); }
  bool is(std::size_t i, Token::Kind k, std::string_view s) const {
    Token t = tok(i);
    return t.kind == k && str(t) == s;
  }
  tep_format_field* field(std::string_view name) const {
    return tep_find_any_field(event_, std::string(name).c_str());
  }
  std::size_t line_of(std::size_t at) const {
    return 1 + static_cast<std::size_t>(
                   std::count(format_.begin(), format_.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  }

  // REC->name at token i: a field the event lacks, read where a flag or symbol field is next, is what
  // 1.7.1 crashes on.
  void field_read(std::size_t i) {
    std::string_view name = str(toks_[i + 2]);
    if (!field(name) && (flag_next_ || symbol_next_))
      throw Error(ErrorKind::bad_value,
                  fmt::format("a {} format file libtraceevent cannot parse: line {}: the print fmt "
                              "reads REC->{} in {}, and the event has no field {}",
                              system_, line_of(toks_[i].at), name,
                              flag_next_ ? "__print_flags" : "__print_symbolic", name));
    (flag_next_ ? flag_next_ : symbol_next_) = false;
  }

  // process_sizeof, on the tokens after "sizeof(" at token i: where 1.7.1 reads a freed token, `bad`
  // is the token that took it there and `size` what a fixed libtraceevent makes of the sizeof. The
  // token to go on after.
  std::size_t size_of(std::size_t i) {
    std::size_t j = i + 2;
    std::size_t bad = 0;
    std::string size;
    if (is(j, Token::word, "unsigned")) {
      ++j;
      if (tok(j).kind != Token::word) return i;  // "unsigned" alone: 4, read safely
    }
    if (is(j, Token::word, "int")) {
      bad = j;
      size = "4";
    } else if (is(j, Token::word, "long")) {
      if (!is(j + 1, Token::word, "long")) return i;  // long: the traced kernel's, read safely
      bad = ++j;
      size = "8";
    } else if (is(j, Token::word, "REC") && is(j + 1, Token::op, "->") && tok(j + 2).kind == Token::word) {
      const tep_format_field* f = field(str(toks_[j + 2]));
      if (!f || (f->flags & TEP_FIELD_IS_ARRAY)) return i;  // refused by libtraceevent, safely
      bad = j;
      j += 2;
      size = std::to_string(f->size);
    } else {
      return i;  // a type libtraceevent refuses, safely
    }
    if (is(j + 1, Token::delim, ")")) {
      edits_.push_back({toks_[i].at, toks_[j + 1].at + 1 - toks_[i].at, size});
      return j + 1;
    }
    // A fixed libtraceevent refuses it for the missing ')': a word sizeof does not know here makes
    // 1.7.1 refuse it too, without the freed token.
    edits_.push_back({toks_[bad].at, toks_[bad].size, "__perfspec_not_a_type"});
    return j;
  }
};

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

  std::size_t print_at = print_line(format);
  if (print_at == std::string_view::npos) return std::string(format);  // refused by libtraceevent, safely
  // The event's fields, as libtraceevent reads them: the file with an empty print fmt.
  std::string fields_only(format.substr(0, print_at));
  fields_only += "print fmt: \"\"\n";
  std::string sys(system);
  tep_event* event = nullptr;
  tep_parse_format(tep.get(), &event, fields_only.data(), fields_only.size(), sys.c_str());
  if (!event)
    return std::string(format);  // its fields cannot be read: libtraceevent stops before the print fmt
  return Guard(format, system, event, print_at).run();
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

}  // namespace perfspec::record
