// SPDX-License-Identifier: MIT
// A MetricExpr as perf 6.12's build prints it again (pmu-events/metric.py, read for its rules): the
// text made Python by metric.py's substitutions, read with Python's grammar and arithmetic, simplified
// and printed with perf's precedence.
#include "spec/perf_metric_expr.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace perfspec::spec {

namespace {

struct Failed {};  // where Python, and so perf's build, would have raised

// A number as Python holds it while metric.py's expression is evaluated: an int or a float.
struct Num {
  bool is_int = true;
  long long i = 0;
  double f = 0;
  double value() const { return is_int ? static_cast<double>(i) : f; }
};

// metric.py's Expression classes.
struct Node {
  enum class Kind { op, select, function, event, constant, literal } kind;
  std::string text;  // the operator, function, event name, constant or literal
  std::vector<std::shared_ptr<const Node>> args;
};
using NodeP = std::shared_ptr<const Node>;
using Value = std::variant<Num, NodeP>;

NodeP node(Node::Kind kind, std::string text, std::vector<NodeP> args = {}) {
  return std::make_shared<const Node>(Node{kind, std::move(text), std::move(args)});
}

// Python's Decimal of a number (an int exactly, a float by its repr), normalized, in engineering
// notation, as metric.py's Constant writes it: `+` dropped, `E` as `e` (1000 -> 1e3, 100 -> 100,
// 1e-7 -> 100e-9).
std::string decimal_text(const Num& n) {
  std::string sign, digits;
  long long exponent = 0;
  if (n.is_int) {
    if (n.i < 0) sign = "-";
    digits = std::to_string(n.i < 0 ? -static_cast<unsigned long long>(n.i)
                                    : static_cast<unsigned long long>(n.i));
  } else {
    if (!std::isfinite(n.f)) throw Failed{};
    std::string s = fmt::format("{}", n.f);  // the shortest text that reads back: Python's repr's digits
    if (s[0] == '-') sign = "-", s.erase(0, 1);
    const std::size_t e = s.find('e');
    if (e != std::string::npos) {
      exponent = std::strtoll(s.c_str() + e + 1, nullptr, 10);
      s.resize(e);
    }
    if (const std::size_t dot = s.find('.'); dot != std::string::npos) {
      exponent -= static_cast<long long>(s.size() - dot - 1);
      s.erase(dot, 1);
    }
    digits = s;
  }
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  if (digits == "0") {
    exponent = 0;
  } else {
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back(), ++exponent;
  }
  const long long left = exponent + static_cast<long long>(digits.size());
  long long dot = 0;
  if (exponent <= 0 && left > -6)
    dot = left;
  else if (digits == "0")
    dot = ((left + 1) % 3 + 3) % 3 - 1;
  else
    dot = ((left - 1) % 3 + 3) % 3 + 1;
  std::string out = sign;
  if (dot <= 0)
    out += "0." + std::string(static_cast<std::size_t>(-dot), '0') + digits;
  else if (dot >= static_cast<long long>(digits.size()))
    out += digits + std::string(static_cast<std::size_t>(dot) - digits.size(), '0');
  else
    out +=
        digits.substr(0, static_cast<std::size_t>(dot)) + "." + digits.substr(static_cast<std::size_t>(dot));
  if (left != dot) out += fmt::format("e{}", left - dot);
  return out;
}

NodeP constify(const Value& v) {
  if (const Num* n = std::get_if<Num>(&v)) return node(Node::Kind::constant, decimal_text(*n));
  return std::get<NodeP>(v);
}

// Python's arithmetic on two numbers.
Num arithmetic(const std::string& op, const Num& a, const Num& b) {
  const bool ints = a.is_int && b.is_int;
  auto integer = [](long long v) { return Num{true, v, 0}; };
  auto real = [](double v) { return Num{false, 0, v}; };
  if (op == "<") return integer(a.value() < b.value());
  if (op == ">") return integer(a.value() > b.value());
  if (op == "+") return ints ? integer(a.i + b.i) : real(a.value() + b.value());
  if (op == "-") return ints ? integer(a.i - b.i) : real(a.value() - b.value());
  if (op == "*") return ints ? integer(a.i * b.i) : real(a.value() * b.value());
  if (op == "/") {
    if (b.value() == 0) throw Failed{};
    return real(a.value() / b.value());
  }
  if (op == "%") {
    if (b.value() == 0) throw Failed{};
    if (ints) return integer(((a.i % b.i) + b.i) % b.i);
    double r = std::fmod(a.value(), b.value());
    if (r != 0 && ((r < 0) != (b.value() < 0))) r += b.value();
    return real(r);
  }
  if (!ints) throw Failed{};  // | ^ & on a float
  if (op == "|") return integer(a.i | b.i);
  if (op == "^") return integer(a.i ^ b.i);
  return integer(a.i & b.i);
}

// A binary operator as Python applies it: numbers computed; otherwise an Expression's operator
// method, or the reflected one (a number on the left): `<` reflected is `>`; there is none for `^`
// and `%` (TypeError).
Value apply(const std::string& op, const Value& a, const Value& b) {
  const Num* na = std::get_if<Num>(&a);
  const Num* nb = std::get_if<Num>(&b);
  if (na && nb) return arithmetic(op, *na, *nb);
  if (na) {
    if (op == "^" || op == "%") throw Failed{};
    if (op == "<") return node(Node::Kind::op, ">", {constify(b), constify(a)});
    if (op == ">") return node(Node::Kind::op, "<", {constify(b), constify(a)});
  }
  return node(Node::Kind::op, op, {constify(a), constify(b)});
}

// The Python text metric.py makes of an expression, its regular expressions' work done by hand (a
// scan, where std::regex recurses once a character and a long name would take the stack): every name
// (a letter, then anything but `-+/* \(),` or a backslash and the character after it) becomes
// Event(r"NAME"); then `#` and a name a Literal, `0` and `x` with hex digits an Event of that number,
// digits and `e` with digits a number again, and the keywords and functions themselves.
std::string python_text(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return {};
  text = text.substr(first, text.find_last_not_of(" \t\r\n\f\v") - first + 1);
  auto in_name = [](char c) { return std::string_view("-+/* \\(),").find(c) == std::string_view::npos; };
  auto all = [](std::string_view s, auto pred) {
    for (char c : s)
      if (!pred(static_cast<unsigned char>(c))) return false;
    return true;
  };
  static constexpr std::string_view keywords[] = {"if",      "else",         "min",       "max",
                                                  "d_ratio", "source_count", "has_event", "strcmp_cpuid_str"};
  std::string py;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!std::isalpha(static_cast<unsigned char>(text[i]))) {
      py += text[i++];
      continue;
    }
    std::size_t end = i + 1;
    for (;;) {
      while (end < text.size() && in_name(text[end]) && text[end] != '\\') ++end;
      if (end + 1 < text.size() && text[end] == '\\' && text[end + 1] != '\n')
        end += 2;
      else
        break;
    }
    const std::string_view name = text.substr(i, end - i);
    i = end;
    const bool quoted = name.find('"') != std::string_view::npos;
    std::size_t digits = 0;  // the digits just before it
    while (digits < py.size() && std::isdigit(static_cast<unsigned char>(py[py.size() - 1 - digits])))
      ++digits;
    if (!py.empty() && py.back() == '#' && !quoted) {
      py.pop_back();
      py += "Literal(\"#" + std::string(name) + "\")";
    } else if (!py.empty() && py.back() == '0' && (name[0] == 'x' || name[0] == 'X') &&
               all(name.substr(1), [](int c) { return std::isxdigit(c) != 0; })) {
      py.pop_back();
      py += "Event(\"0x" + std::string(name.substr(1)) + "\")";
    } else if (digits > 0 && name.size() > 1 && name[0] == 'e' &&
               all(name.substr(1), [](int c) { return std::isdigit(c) != 0; })) {
      py += name;
    } else if (std::find(std::begin(keywords), std::end(keywords), name) != std::end(keywords)) {
      py += name;
    } else {
      py += "Event(r\"" + std::string(name) + "\")";
    }
  }
  return py;
}

// metric.py's _FixEscapes: `re.sub(r'([^\\]),', r'\1\\,', s)`, then the same for `=`: a `,` (then an
// `=`) after a character that is no backslash gets one, the matches not overlapping.
std::string fix_escapes(std::string s) {
  for (char mark : {',', '='}) {
    std::string out;
    std::size_t free = 0;  // where the next match may begin
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (s[k] == mark && k >= 1 && k - 1 >= free && s[k - 1] != '\\') {
        out += '\\';
        free = k + 1;
      }
      out += s[k];
    }
    s = std::move(out);
  }
  return s;
}

// Python's grammar over that text, as far as metric expressions reach (a conditional, comparisons,
// | ^ &, + -, * / %, unary minus, calls, parentheses), evaluated as Python evaluates it.
class Python {
 public:
  explicit Python(std::string text) : s_(std::move(text)) {}

  Value whole() {
    Value v = test();
    blanks();
    if (i_ != s_.size()) throw Failed{};
    return v;
  }

 private:
  void blanks() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(std::string_view token) {
    blanks();
    if (s_.compare(i_, token.size(), token) != 0) return false;
    // a keyword, not the start of a longer name
    if (std::isalpha(static_cast<unsigned char>(token[0])) && i_ + token.size() < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[i_ + token.size()])) || s_[i_ + token.size()] == '_'))
      return false;
    i_ += token.size();
    return true;
  }

  // Python's parser refuses more than 200 nested parentheses; the recursion here stops there too (and
  // at 200 unary signs in a row).
  struct Deeper {
    explicit Deeper(int& depth) : depth_(depth) {
      if (++depth_ > 200) throw Failed{};
    }
    ~Deeper() { --depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    int& depth_;
  };

  // test: or_test ['if' or_test 'else' test], which metric.py makes Select(body, test, orelse)
  Value test() {
    Value body = comparison();
    if (!eat("if")) return body;
    Value cond = comparison();
    if (!eat("else")) throw Failed{};
    Value orelse = test();
    return node(Node::Kind::select, "", {constify(body), constify(cond), constify(orelse)});
  }
  Value comparison() {
    Value a = binary(0);
    for (const char* op : {"<=", ">=", "==", "!="})
      if (eat(op)) throw Failed{};  // no Expression method makes an operator of these
    std::string op = eat("<") ? "<" : eat(">") ? ">" : "";
    if (op.empty()) return a;
    Value b = binary(0);
    blanks();
    if (i_ < s_.size() && (s_[i_] == '<' || s_[i_] == '>')) throw Failed{};  // a chain: Python's `and`
    return apply(op, a, b);
  }
  // | (0), ^ (1), & (2), + - (3), * / % (4): Python's levels above comparisons
  Value binary(int level) {
    static const std::vector<std::vector<const char*>> ops = {
        {"|"}, {"^"}, {"&"}, {"+", "-"}, {"*", "/", "%"}};
    if (level == 5) return unary();
    Value v = binary(level + 1);
    for (;;) {
      blanks();
      const char* found = nullptr;
      for (const char* op : ops[static_cast<std::size_t>(level)])
        if (s_.compare(i_, 1, op) == 0 && s_.compare(i_, 2, "**") != 0 && s_.compare(i_, 2, "//") != 0)
          found = op;
      if (!found) return v;
      ++i_;
      Value rhs = binary(level + 1);
      v = apply(found, v, rhs);
    }
  }
  Value unary() {
    if (eat("-")) {
      Deeper deeper(depth_);
      Value v = unary();
      Num* n = std::get_if<Num>(&v);
      if (!n) throw Failed{};  // an Expression has no __neg__
      if (n->is_int)
        n->i = -n->i;
      else
        n->f = -n->f;
      return v;
    }
    if (eat("+")) {
      Deeper deeper(depth_);
      Value v = unary();
      if (!std::holds_alternative<Num>(v)) throw Failed{};
      return v;
    }
    if (eat("**")) throw Failed{};
    return atom();
  }
  std::string string_literal() {
    blanks();
    if (s_.compare(i_, 2, "r\"") == 0) ++i_;
    if (i_ >= s_.size() || s_[i_] != '"') throw Failed{};
    const std::size_t end = s_.find('"', i_ + 1);
    if (end == std::string::npos) throw Failed{};
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  std::vector<Value> arguments() {
    Deeper deeper(depth_);
    std::vector<Value> out;
    if (eat(")")) return out;
    for (;;) {
      out.push_back(test());
      if (eat(")")) return out;
      if (!eat(",")) throw Failed{};
    }
  }
  Value atom() {
    blanks();
    if (eat("(")) {
      Deeper deeper(depth_);
      Value v = test();
      if (!eat(")")) throw Failed{};
      return v;
    }
    if (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.'))
      return number();
    std::size_t end = i_;
    while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) ++end;
    const std::string name = s_.substr(i_, end - i_);
    if (name.empty()) throw Failed{};
    i_ = end;
    if (!eat("(")) throw Failed{};
    if (name == "Event" || name == "Literal") {
      std::string text = string_literal();
      if (!eat(")")) throw Failed{};
      if (name == "Literal") return node(Node::Kind::literal, text);
      return node(Node::Kind::event, fix_escapes(std::move(text)));
    }
    auto args = arguments();
    std::vector<NodeP> nodes;
    for (const auto& a : args) nodes.push_back(constify(a));
    if (name == "Select" && nodes.size() == 3) return node(Node::Kind::select, "", nodes);
    if ((name == "min" || name == "max" || name == "d_ratio") && nodes.size() == 2)
      return node(Node::Kind::function, name, nodes);
    if ((name == "source_count" || name == "has_event" || name == "strcmp_cpuid_str") && nodes.size() == 1)
      return node(Node::Kind::function, name, nodes);
    throw Failed{};
  }
  Value number() {
    const std::size_t start = i_;
    bool real = false;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      real = true;
      ++i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      std::size_t j = i_ + 1;
      if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
      if (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
        real = true;
        i_ = j;
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      }
    }
    if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) throw Failed{};
    const std::string text = s_.substr(start, i_ - start);
    if (text == ".") throw Failed{};
    if (real) return Num{false, 0, std::strtod(text.c_str(), nullptr)};
    if (text.size() > 1 && text[0] == '0' && text.find_first_not_of('0') != std::string::npos)
      throw Failed{};  // Python refuses 012
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) throw Failed{};
    return Num{true, v, 0};
  }

  std::string s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

bool equal(const NodeP& a, const NodeP& b) {
  if (a->kind != b->kind || a->text != b->text || a->args.size() != b->args.size()) return false;
  for (std::size_t k = 0; k < a->args.size(); ++k)
    if (!equal(a->args[k], b->args[k])) return false;
  return true;
}

bool is_constant(const NodeP& n, std::string_view value) {
  return n->kind == Node::Kind::constant && n->text == value;
}

// metric.py's Simplify.
NodeP simplify(const NodeP& n) {
  switch (n->kind) {
    case Node::Kind::op: {
      const NodeP lhs = simplify(n->args[0]), rhs = simplify(n->args[1]);
      if (lhs->kind == Node::Kind::constant && rhs->kind == Node::Kind::constant) throw Failed{};
      const std::string& op = n->text;
      if (n->args[0]->kind == Node::Kind::constant) {
        if ((op == "+" || op == "|") && is_constant(lhs, "0")) return rhs;
        if (op == "*" && is_constant(lhs, "0")) {
          std::string lower = rhs->text;
          for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (rhs->kind != Node::Kind::event || lower.find("slots") == std::string::npos)
            return node(Node::Kind::constant, "0");
        }
        if (op == "*" && is_constant(lhs, "1")) return rhs;
      }
      if (rhs->kind == Node::Kind::constant) {
        if ((op == "+" || op == "|") && is_constant(rhs, "0")) return lhs;
        if (op == "*" && is_constant(rhs, "0")) return node(Node::Kind::constant, "0");
        if (op == "*") {
          if (n->args[1]->kind != Node::Kind::constant) throw Failed{};  // metric.py reads self.rhs.value
          if (is_constant(n->args[1], "1")) return lhs;
        }
      }
      return node(Node::Kind::op, op, {lhs, rhs});
    }
    case Node::Kind::select: {
      const NodeP cond = simplify(n->args[1]), yes = simplify(n->args[0]), no = simplify(n->args[2]);
      if (cond->kind == Node::Kind::constant) return is_constant(cond, "0") ? no : yes;
      if (equal(yes, no)) return yes;
      return node(Node::Kind::select, "", {yes, cond, no});
    }
    case Node::Kind::function: {
      std::vector<NodeP> args;
      for (const auto& a : n->args) args.push_back(simplify(a));
      if (args.size() == 2 && args[0]->kind == Node::Kind::constant &&
          args[1]->kind == Node::Kind::constant) {
        if (n->text == "d_ratio" && is_constant(args[1], "0")) return node(Node::Kind::constant, "0");
        throw Failed{};  // metric.py hands "min(1, 2)" to ast.literal_eval, which refuses it
      }
      return node(Node::Kind::function, n->text, args);
    }
    default: return n;
  }
}

int precedence(const NodeP& n) {
  if (n->kind != Node::Kind::op) return -1;
  static const std::pair<const char*, int> table[] = {{"|", 0}, {"^", 1}, {"&", 2}, {"<", 3}, {">", 3},
                                                      {"+", 4}, {"-", 4}, {"*", 5}, {"/", 5}, {"%", 5}};
  for (auto [op, p] : table)
    if (n->text == op) return p;
  return -1;
}

// metric.py's ToPerfJson.
std::string print(const NodeP& n) {
  switch (n->kind) {
    case Node::Kind::op: {
      auto side = [&](const NodeP& other, bool rhs) {
        std::string text = print(other);
        if (other->kind == Node::Kind::op &&
            (precedence(n) > precedence(other) || (rhs && precedence(n) == precedence(other))))
          return "(" + text + ")";
        return text;
      };
      return side(n->args[0], false) + " " + n->text + " " + side(n->args[1], true);
    }
    case Node::Kind::select:
      return "(" + print(n->args[0]) + " if " + print(n->args[1]) + " else " + print(n->args[2]) + ")";
    case Node::Kind::function:
      return n->text + "(" + print(n->args[0]) + (n->args.size() > 1 ? ", " + print(n->args[1]) : "") + ")";
    case Node::Kind::event: {
      std::string out = n->text;
      for (char& c : out)
        if (c == '/') c = '@';
      return out;
    }
    default: return n->text;
  }
}

}  // namespace

std::optional<std::string> perf_metric_expr(std::string_view text) {
  try {
    Python python(python_text(text));
    return print(simplify(constify(python.whole())));
  } catch (const Failed&) {
    return std::nullopt;
  }
}

}  // namespace perfspec::spec
