// SPDX-License-Identifier: MIT
// print_fault: a tracepoint payload's print fmt evaluated as libtraceevent 1.7.1 would print it, for
// the reads past the payload and the divisions by zero that would crash it.
#include <event-parse.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "format_guard.hpp"

namespace perfspec::record {

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
      // an index into anything but a field or a dynamic array: evaluated as an operator libtraceevent
      // does not know, 0
      if (auto v = index(a)) return *v;
    } else if (o == "?") {
      return ternary(a);
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
    return binary(o, *l, *r);
  }

  // `field[i]` or `dynamic_array[i]`, under any casts; nothing for an index into anything else.
  std::optional<Value> index(const tep_print_arg* a) {
    Value right = num(a->op.right);
    const tep_print_arg* larg = a->op.left;
    const tep_print_arg* typearg = nullptr;
    while (larg && larg->type == TEP_PRINT_TYPE) {
      if (!typearg) typearg = larg;
      larg = larg->typecast.item;
    }
    if (!larg || (larg->type != TEP_PRINT_DYNAMIC_ARRAY && larg->type != TEP_PRINT_FIELD))
      return std::nullopt;
    if (!right) {
      cannot_check("an array index");
      return Value(0);
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
      if (!f) return Value(0);
      field_size = f->elementsize;
      offset = static_cast<std::uint32_t>(
          static_cast<std::uint64_t>(f->offset) +
          *right * static_cast<std::uint64_t>(static_cast<std::int64_t>(f->elementsize)));
    }
    // libtraceevent's own check adds them as ints: an offset from 2 GiB up passes it.
    if (static_cast<std::int64_t>(static_cast<std::int32_t>(offset)) + static_cast<std::int32_t>(field_size) >
        size_)
      return Value(0);
    if (std::uint64_t{offset} + static_cast<std::uint64_t>(field_size) > static_cast<std::uint64_t>(size_)) {
      fault = fmt::format("the print fmt's index reads [{}, +{}), past the payload ({} bytes)", offset,
                          field_size, size_);
      return Value(0);
    }
    std::uint64_t v = tep_read_number(tep_, data_ + offset, static_cast<int>(field_size));
    return Value(typearg ? cast(v, typearg->typecast.type, true) : v);
  }

  Value ternary(const tep_print_arg* a) {
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

  // A binary (or, `!` and `~`, unary on the right) operator as libtraceevent computes it; 0 for one it
  // does not know.
  static std::uint64_t binary(std::string_view o, std::uint64_t x, std::uint64_t y) {
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
