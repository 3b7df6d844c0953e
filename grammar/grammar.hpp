// SPDX-License-Identifier: MIT
#pragma once
// The perf event language as PEGTL rules (REFERENCE.md section 2). Internal to grammar/: only
// grammar/parse.cpp and the grammar tests include this header. Every rule that sits behind must<> has
// an error message in parse.cpp (a static_assert there enforces it).
#include <array>
#include <cstdint>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze_traits.hpp>

namespace perfspec::grammar {

using namespace tao::pegtl;

// Lexical pieces (REFERENCE.md section 1).
struct name_first : sor<alnum, one<'_', '*', '?', '[', ']'>> {};
struct name_rest : sor<alnum, one<'_', '*', '?', '.', '[', ']', '!', '-'>> {};

// The same character classes as a table, for the rules that scan whole names: the lookaheads that pick
// an event's form read its name several times, so a scan costs one load per character.
namespace chars {
enum : std::uint8_t { first = 1, rest = 2, term_rest = 4 };  // name_first, name_rest, name_rest or ':'
constexpr std::array<std::uint8_t, 256> table = [] {
  std::array<std::uint8_t, 256> t{};
  auto set = [&](unsigned char c, std::uint8_t bits) { t[c] = static_cast<std::uint8_t>(t[c] | bits); };
  for (unsigned c = 0; c < 256; ++c)
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
      set(static_cast<unsigned char>(c), first | rest | term_rest);
  for (char c : {'_', '*', '?', '[', ']'}) set(static_cast<unsigned char>(c), first | rest | term_rest);
  for (char c : {'.', '!', '-'}) set(static_cast<unsigned char>(c), rest | term_rest);
  set(':', term_rest);
  return t;
}();
}  // namespace chars

// One character of class `First`, then any number of class `Rest`.
template <std::uint8_t First, std::uint8_t Rest> struct scan {
  using rule_t = scan;
  using subs_t = empty_list;
  template <typename ParseInput> static bool match(ParseInput& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    if (p == end || !(chars::table[static_cast<unsigned char>(*p)] & First)) return false;
    ++p;
    while (p != end && (chars::table[static_cast<unsigned char>(*p)] & Rest)) ++p;
    in.bump_in_this_line(static_cast<std::size_t>(p - in.current()));
    return true;
  }
};

// A name. The lookaheads that pick an event's form each start by reading the name at the same place,
// so the parse state (when there is one) keeps where the last name scanned began and ended: the
// second and later reads of it take no time.
struct name {
  using rule_t = name;
  using subs_t = empty_list;
  static const char* end_of(const char* p, const char* end) noexcept {
    if (p == end || !(chars::table[static_cast<unsigned char>(*p)] & chars::first)) return p;
    ++p;
    while (p != end && (chars::table[static_cast<unsigned char>(*p)] & chars::rest)) ++p;
    return p;
  }
  template <apply_mode, rewind_mode, template <typename...> class, template <typename...> class,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... st) noexcept {
    const char* p = in.current();
    const char* e = nullptr;
    if constexpr (sizeof...(States) == 1 && requires { (st.name_from, ...); }) {
      auto& state = (st, ...);
      if (state.name_from != p) state.name_from = p, state.name_to = end_of(p, in.end());
      e = state.name_to;
    } else {
      e = end_of(p, in.end());
    }
    if (e == p) return false;
    in.bump_in_this_line(static_cast<std::size_t>(e - p));
    return true;
  }
};
struct hex_number : seq<one<'0'>, one<'x', 'X'>, plus<xdigit>> {};
struct dec_number : plus<digit> {};
struct number : seq<sor<hex_number, dec_number>, not_at<name_rest>> {};
struct blanks : star<one<' ', '\t'>> {};
struct comma : seq<blanks, one<','>, blanks> {};

// The modifier alphabet (REFERENCE.md section 1), written once: the rule below and the action that
// validates modifiers (parse.cpp) both take it from here.
template <char... Letters> struct alphabet {
  using rule = one<Letters...>;
  static constexpr char letters[] = {Letters..., '\0'};
};
using modifier_alphabet = alphabet<'u', 'k', 'h', 'I', 'G', 'H', 'p', 'P', 'S', 'D', 'W', 'e', 'b', 'R'>;
// Modifiers: any letters here; the action validates them so that `:x` gets a precise message.
struct mod_letter : modifier_alphabet::rule {};
struct event_mods : plus<alpha> {};
struct group_mods : plus<alpha> {};
struct colon_mods : seq<one<':'>, must<event_mods>> {};
// After `/.../` perf takes the letters directly (`cpu/event=1/u`); `/:u` is accepted as well.
struct slash_mods : sor<colon_mods, event_mods> {};

// Terms inside `/.../`.
struct begin_term : success {};
struct term_name : scan<chars::first, chars::term_rest> {};
struct quoted_body : star<not_one<'\''>> {};
struct close_quote : one<'\''> {};
struct quoted_value : seq<one<'\''>, quoted_body, must<close_quote>> {};
struct query_value : seq<one<'?'>, not_at<name_rest>> {};
struct word_value : scan<chars::rest, chars::rest> {};
struct term_value : sor<quoted_value, query_value, word_value> {};
struct term_assign : seq<one<'='>, must<term_value>> {};
struct driver_name : scan<chars::rest, chars::rest> {};
struct driver_term : seq<one<'@'>, must<driver_name>, opt<term_assign>> {};
struct plain_term : seq<term_name, opt<term_assign>> {};
struct term : seq<begin_term, sor<driver_term, plain_term>> {};
struct next_term : seq<one<','>, must<term>> {};
struct close_slash : one<'/'> {};
struct begin_terms : success {};
struct slash_block : seq<one<'/'>, begin_terms, opt<term, star<next_term>>, must<close_slash>> {};
struct terms_and_mods : sor<seq<slash_block, opt<slash_mods>>, opt<colon_mods>> {};

// Events (REFERENCE.md section 2). Each alternative starts with begin_event, which resets the event
// being built, so a failed alternative leaves nothing behind.
struct begin_event : success {};
struct event_name : name {};
struct bp_prefix : string<'m', 'e', 'm', ':'> {};
struct bp_addr : number {};
struct bp_len : number {};
struct bp_access : seq<plus<one<'r', 'w', 'x'>>, not_at<name_rest>> {};
// Each alternative first checks, without actions, that it applies: resetting the event being built is
// the costly part of trying an alternative.
struct breakpoint : seq<at<bp_prefix, digit>, begin_event, bp_prefix, must<bp_addr>, opt<one<'/'>, bp_len>,
                        opt<one<':'>, bp_access>, terms_and_mods> {};
struct numeric_type : number {};
struct numeric_config : number {};
struct numeric
    : seq<at<number, one<':'>, number>, begin_event, numeric_type, one<':'>, numeric_config, terms_and_mods> {
};
struct raw_token : seq<one<'r'>, plus<xdigit>, not_at<name_rest>> {};
struct raw : seq<at<raw_token>, begin_event, raw_token, terms_and_mods> {};
struct pmu_event : seq<at<name, one<'/'>>, begin_event, event_name, slash_block, opt<slash_mods>> {};
// `cycles:u` is a modifier, `sched:sched_switch` a tracepoint: after ':' a word made only of modifier
// letters is taken as modifiers, as perf's lexer does.
struct mods_only : seq<plus<mod_letter>, not_at<name_rest>> {};
struct tp_system : name {};
// More `:word` parts than a tracepoint has are libpfm4's `EVENT:UMASK:UMASK` (resolved by the provider).
struct tp_event : seq<name, star<one<':'>, not_at<mods_only>, name>> {};
struct tracepoint : seq<at<name, one<':'>, not_at<mods_only>, name>, begin_event, tp_system, one<':'>,
                        tp_event, terms_and_mods> {};
struct named : seq<begin_event, event_name, opt<colon_mods>> {};
// libpfm4's fully qualified form `skx::INST_RETIRED:ANY_P:u:c=2`: taken whole (its modifiers are
// libpfm4's), resolved through the libpfm4 provider.
struct pfm_word : plus<sor<name_rest, one<'='>>> {};
struct pfm_text : seq<name, two<':'>, name, star<one<':'>, pfm_word>> {};
struct pfm_event : seq<at<name, two<':'>>, begin_event, pfm_text> {};
struct event : sor<breakpoint, numeric, raw, pfm_event, pmu_event, tracepoint, named> {};

// Groups and lists.
struct begin_item : success {};
struct nested_group : success {};
// pegtl::raise qualified: through the using-directive, <signal.h>'s ::raise(int) is found too when a
// translation unit has it before this header (the arm64 build's test_grammar.cpp did).
struct group_member : sor<seq<at<one<'{'>>, tao::pegtl::raise<nested_group>>, event> {};
struct group_name : name {};
struct close_brace : one<'}'> {};
struct open_brace : one<'{'> {};
// The lookahead keeps a lone event from being scanned as a group first (its name read twice).
struct group : seq<at<opt<name>, blanks, one<'{'>>, begin_item, opt<group_name, at<blanks, one<'{'>>>, blanks,
                   open_brace, blanks, must<group_member>, star<comma, must<group_member>>, blanks,
                   must<close_brace>, opt<one<':'>, must<group_mods>>> {};
struct lone : seq<begin_item, event> {};
struct item : sor<group, lone> {};
struct list_end : eof {};
struct event_list : seq<blanks, must<item>, star<comma, must<item>>, blanks, must<list_end>> {};

}  // namespace perfspec::grammar

namespace perfspec::grammar {
// A bare term list, as alias files (`events/<name>`) and event tables hold them.
struct term_list_only : seq<opt<term, star<next_term>>, must<list_end>> {};
}  // namespace perfspec::grammar

// A scan or a name consumes at least one character when it succeeds (for tao::pegtl::analyze).
template <typename Name, std::uint8_t First, std::uint8_t Rest>
struct tao::pegtl::analyze_traits<Name, perfspec::grammar::scan<First, Rest>> : analyze_any_traits<> {};
template <typename Name> struct tao::pegtl::analyze_traits<Name, perfspec::grammar::name>
    : analyze_any_traits<> {};
