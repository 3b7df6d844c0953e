#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house's layering, checked on every #include: each folder may include the project's own
headers only from the layers below it, and some libraries belong to one layer only. Prints each
include that crosses a layer the wrong way as FILE:LINE: what, why; exits 1 when there is one.

    scripts/check-layers.py [ROOT]

The rules are the table below; docs/architecture.md says what each layer owns and may see. A
change of the house is a change of this table, made on purpose.
"""
import re
import sys
from pathlib import Path

# Layer: the project folders whose headers it may include ("perfspec" is the public API,
# include/perfspec/). Folders not listed are not layers (tests, bench, fuzz, examples: below).
MAY_INCLUDE = {
    "include/perfspec": {"perfspec"},
    "spec": {"perfspec", "spec"},
    "grammar": {"perfspec", "spec", "grammar"},
    "resolver": {"perfspec", "spec", "grammar", "resolver"},
    "runtime": {"perfspec", "spec", "runtime"},
    "record": {"perfspec", "spec", "record"},
    "print": {"perfspec", "spec", "print"},
    "capi": {"perfspec", "capi"},
    # The exporter's engine: configuration, sets and reloads, reading, series, its HTTP server.
    "exporter": {"perfspec", "spec", "runtime", "print", "exporter"},
    "tools": {"perfspec", "spec", "grammar", "resolver", "runtime", "record", "print", "exporter", "tools"},
    # Programs written against the installed library: its public headers only.
    "examples": {"perfspec"},
}

# Libraries that belong to one place (a layer, or one file of a layer by its path): a header of theirs
# anywhere else is a layer crossed.
OWNED = [
    (re.compile(r"^CLI/"), {"tools"}, "CLI11 is the command line's (tools/)"),
    (re.compile(r"^tao/pegtl"), {"grammar"}, "PEGTL is the grammars' (grammar/)"),
    (re.compile(r"^toml\+\+/"), {"exporter"}, "toml++ reads the exporter's configuration (exporter/)"),
    (re.compile(r"^yaml-cpp/"), {"exporter"}, "yaml-cpp reads the exporter's web configuration (exporter/)"),
    (re.compile(r"^(openssl/|crypt\.h$)"), {"exporter"}, "OpenSSL and libxcrypt secure the exporter (exporter/)"),
    (re.compile(r"^prometheus/"), {"exporter", "print/openmetrics."},
     "prometheus-cpp is the exporter's (exporter/, and its OpenMetrics printer print/openmetrics.*)"),
    (re.compile(r"^(CivetServer\.h|civetweb\.h)$"), {"exporter"}, "civetweb serves the exporter (exporter/)"),
    (re.compile(r"^perfmon/"), {"spec"}, "libpfm4 is a named-event source (spec/)"),
    (re.compile(r"^zstd\.h$"), {"record"}, "zstd compresses perf.data records (record/)"),
    (re.compile(r"^(traceevent/|event-parse\.h$)"), {"record"}, "libtraceevent decodes tracepoint payloads (record/)"),
    (re.compile(r"^(libelf\.h$|gelf\.h$|elfutils/)"), {"record"}, "elfutils reads the binaries' symbols (record/)"),
    (re.compile(r"^zlib\.h$"), {"print/gzip."}, "zlib gzips pprof profiles and the exporter's answers (print/gzip.*)"),
]


def owns(owners, layer, rel):
    return layer in owners or any("/" in o and str(rel).startswith(o) for o in owners)


# The resolver turns text and a machine into attrs: it reads no files and writes none.
NO_IO = {
    "resolver": re.compile(r"^(fstream|filesystem|cstdio|stdio\.h|iostream|fcntl\.h|unistd\.h|sys/.*)$"),
}

# runtime/ says what happened as data (counts, Note kinds, Failure facts); the words a user reads are
# print/'s, and spec/'s for errno facts and failures. A string literal of three words or more is prose;
# the messages of the errors a layer throws (every layer's Error carries one) and compile-time
# assertions are not checked.
NO_PROSE = {"runtime"}
WORD = re.compile(r"[A-Za-z]{2,}")
# A string or character literal, or a comment: read in one pass, so that `//` in a string is no
# comment and a quote in a comment no string.
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', re.S)
NOT_PROSE_CONTEXT = re.compile(r"\b(throw|Error|DecodeError|fail|static_assert|asm|__asm__)\b")


def prose(text: str):
    """(line, literal) of each string literal of prose outside thrown errors, in C++ `text`."""
    # comments blanked (newlines kept, so that lines still count)
    code = TOKEN.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else re.sub(r"[^\n]", " ", m.group(0)), text)
    # and the statements' own text, the literals' insides blanked too (their words are not the code's)
    bare = TOKEN.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1]
                     if m.group(0)[0] in "\"'" else m.group(0), code)
    for m in TOKEN.finditer(code):
        if not m.group(0).startswith('"'):
            continue
        words = [w for w in m.group(0)[1:-1].split() if WORD.search(w) and not w.startswith("%")]
        if len(words) < 3:
            continue
        start = max(bare.rfind(c, 0, m.start()) for c in ";{}")
        end = bare.find(";", m.end())
        if NOT_PROSE_CONTEXT.search(bare[start + 1:end if end >= 0 else len(bare)]):
            continue
        yield code.count("\n", 0, m.start()) + 1, m.group(0)


INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCES = {".cpp", ".hpp", ".h", ".c"}


def layer_of(rel: Path):
    parts = rel.parts
    if len(parts) >= 2 and parts[0] == "include" and parts[1] == "perfspec":
        return "include/perfspec"
    return parts[0] if parts and parts[0] in MAY_INCLUDE else None


def check(root: Path):
    problems = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        rel = path.relative_to(root)
        if rel.parts[0].startswith("build") or rel.parts[0].startswith("."):
            continue
        layer = layer_of(rel)
        if layer is None:
            continue
        text = path.read_text(errors="replace")
        if layer in NO_PROSE:
            for number, literal in prose(text):
                shown = literal if len(literal) <= 60 else literal[:57] + '..."'
                problems.append((str(rel), number, f"the text {shown}: {layer}/ makes no text for users "
                                 "(print/ words it, spec/ for errno facts and failures)"))
        for number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(2)
            top = header.split("/", 1)[0] if "/" in header else None
            where = (str(rel), number)
            if top in {"perfspec", "spec", "grammar", "resolver", "runtime", "record", "print", "capi", "exporter", "tools"}:
                if top not in MAY_INCLUDE[layer]:
                    problems.append((*where, f"includes {header}: {layer}/ may include only "
                                             f"{', '.join(sorted(MAY_INCLUDE[layer]))}"))
                continue
            for pattern, owners, why in OWNED:
                if pattern.match(header) and not owns(owners, layer, rel):
                    problems.append((*where, f"includes <{header}>: {why}"))
            no_io = NO_IO.get(layer)
            if no_io and no_io.match(header):
                problems.append((*where, f"includes <{header}>: {layer}/ does no I/O"))
    return [f"{path}:{number}: {what}" for path, number, what in sorted(problems, key=lambda p: (p[0], p[1]))]


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    if not (root / "include" / "perfspec").is_dir():
        print(f"check-layers: {root} is not a perfspec source tree (no include/perfspec)", file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(p)
    sys.stdout.flush()  # the crossings before the summary on stderr, when both go to one pipe
    if problems:
        print(f"check-layers: {len(problems)} crossing(s) of a layer's rules", file=sys.stderr)
        return 1
    print("check-layers: every include stays within its layer's rules, and runtime/ writes no prose")
    return 0


if __name__ == "__main__":
    sys.exit(main())
