#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reads OpenMetrics text on stdin and parses it with Python's prometheus_client (Debian's
python3-prometheus-client). Prints each family (name, type, help) and its samples, one a line, for
diffing; on a parse error, prints the parser's message and exits 1. Exits 77 (skipped) without
prometheus_client.

Example: build/tests/print_openmetrics counter | tests/exporter/check_openmetrics.py
"""
import json
import os
import sys

# 77 tells ctest the test was skipped (what it needs is not here); where CI has installed everything
# (PERFSPEC_REQUIRE_ALL=1, .ci/run), a skip is a failure.
SKIPPED = 1 if os.environ.get("PERFSPEC_REQUIRE_ALL") == "1" else 77

try:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
except ImportError:
    print("check_openmetrics: no prometheus_client (apt-get install python3-prometheus-client)", file=sys.stderr)
    sys.exit(SKIPPED)


def main():
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as e:
        print(f"check_openmetrics: not OpenMetrics: {e}", file=sys.stderr)
        return 1
    for family in families:
        print(f"{family.name} {family.type} help={json.dumps(family.documentation)}")
        for s in family.samples:
            labels = ",".join(f"{k}={json.dumps(v)}" for k, v in s.labels.items())
            line = f"  {s.name}{{{labels}}} {s.value!r}"
            if s.timestamp is not None:
                line += f" ts={s.timestamp}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
