// SPDX-License-Identifier: MIT
// The versioned JSON documents of docs/output-formats.md: each names its schema first, and an error is
// one line of perfspec-error/1 with its kind, message, input, span and help, exactly.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {
const spec::Machine& skx() {
  static spec::Machine m(test::fixture("intel_skx"), test::no_libpfm4());
  return m;
}
// The error resolving `text` gives, as error_json prints it with the text as its input.
std::string json_error_of(std::string_view text) {
  try {
    resolve(text, skx());
  } catch (const Error& e) {
    return error_json(e, text);
  }
  return "resolved";
}
}  // namespace

TEST_CASE("error_json: kind, message, input, span and help, one line, exactly") {
  CHECK(
      json_error_of("cpu/event=0x3c,umsk=1/") ==
      R"({"schema":"perfspec-error/1","kind":"unknown_name","message":"unknown term 'umsk' for pmu 'cpu'",)"
      R"("input":"cpu/event=0x3c,umsk=1/","span":[15,19],"help":"did you mean 'umask' or 'cmask'?\n)"
      R"(valid terms: any,cmask,edge,event,frontend,in_tx,in_tx_cp,inv,ldlat,offcore_rsp,pc,umask,config,)"
      R"(config1,config2,config3,name,period,freq,branch_type,time,call-graph,stack-size,max-stack,nr,inherit,)"
      R"(no-inherit,overwrite,no-overwrite,percore,aux-output,aux-sample-size,metric-id,cpu"})"
      "\n");
  CHECK(json_error_of("cycles:uu") ==
        R"({"schema":"perfspec-error/1","kind":"syntax","message":"Duplicate modifier 'u'",)"
        R"("input":"cycles:uu","span":[8,9],"help":null})"
        "\n");
  // An error at the end of the text points one past it: the empty span at the end in the document.
  CHECK(json_error_of("{cycles") ==
        R"({"schema":"perfspec-error/1","kind":"syntax","message":"expected ',' or '}' to close the group",)"
        R"("input":"{cycles","span":[7,7],"help":null})"
        "\n");
  // Without an input, or without a position, there is no span.
  Error positioned(ErrorKind::bad_value, "too big", Span{2, 4}, "smaller");
  CHECK(
      error_json(positioned) ==
      R"({"schema":"perfspec-error/1","kind":"bad_value","message":"too big","input":null,"span":null,"help":"smaller"})"
      "\n");
  CHECK(
      error_json(Error(ErrorKind::io, "cannot write 'x'"), "cycles") ==
      R"({"schema":"perfspec-error/1","kind":"io","message":"cannot write 'x'","input":"cycles","span":null,"help":null})"
      "\n");
  // Control bytes are escaped and bytes that are no UTF-8 replaced (U+FFFD): still one line of JSON.
  std::string odd = error_json(Error(ErrorKind::machine, "bad\n\x1b[31m\xff"), "a\tb");
  CHECK(odd ==
        "{\"schema\":\"perfspec-error/1\",\"kind\":\"machine\",\"message\":\"bad\\n\\u001b[31m\xef\xbf\xbd\","
        "\"input\":\"a\\tb\",\"span\":null,\"help\":null}\n");
}

TEST_CASE("error_json: every ErrorKind by its name in the enum") {
  const std::pair<ErrorKind, const char*> kinds[] = {
      {ErrorKind::syntax, "syntax"},
      {ErrorKind::unknown_name, "unknown_name"},
      {ErrorKind::bad_value, "bad_value"},
      {ErrorKind::machine, "machine"},
      {ErrorKind::io, "io"},
      {ErrorKind::permission, "permission"},
      {ErrorKind::usage, "usage"},
  };
  for (auto [kind, name] : kinds) {
    auto j = nlohmann::json::parse(error_json(Error(kind, "m")));
    CHECK(j["kind"] == name);
    CHECK(j.size() == 6);  // schema kind message input span help: always all of them
  }
}

TEST_CASE("resolve, list and decode documents name their schema first") {
  auto set = resolve("cycles:u", skx());
  auto r = nlohmann::ordered_json::parse(to_json(set));
  CHECK(r.begin().key() == "schema");
  CHECK(r["schema"] == resolve_schema);
  CHECK(resolve_schema == "perfspec-resolve/1");

  auto l = nlohmann::ordered_json::parse(list_json({}, {}));
  CHECK(l.dump() == R"({"schema":"perfspec-list/1","pmus":[],"events":[]})");

  std::vector<Decoded> decoded = {decode(set.events[0].attr, skx())};
  CHECK(
      decode_json(decoded) ==
      R"({"schema":"perfspec-decode/1","events":[{"event":"cycles:u","how":"symbol","leftovers":[],"notes":[]}]})"
      "\n");
  CHECK(decode_json({}) == "{\"schema\":\"perfspec-decode/1\",\"events\":[]}\n");
}

TEST_CASE("decode reads resolve's document, with or without its schema, and refuses other documents") {
  auto set = resolve("mem-loads:u", skx());
  auto attrs = parse_attr_input(to_json(set));
  REQUIRE(attrs.size() == 1);
  CHECK(attrs[0].config == 0x1cd);
  CHECK(attrs[0].exclude_kernel);
  const auto error_of = test::attr_input_error;
  CHECK(
      error_of(R"({"schema":"perfspec-resolve/2","events":[]})") ==
      R"(stdin: schema "perfspec-resolve/2" is not one decode reads (perfspec-resolve/1, as 'perfspec resolve --format json' prints))");
  CHECK(
      error_of(decode_json({decode(set.events[0].attr, skx())})) ==
      R"(stdin: schema "perfspec-decode/1" is not one decode reads (perfspec-resolve/1, as 'perfspec resolve --format json' prints))");
  CHECK(error_of(R"({"schema":1,"events":[]})") ==
        "stdin: schema 1 is not one decode reads (perfspec-resolve/1, as 'perfspec resolve --format json' "
        "prints)");
}
