#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare two Chrome-trace files as multisets of events.

Usage: swimlane_events_equal.py OURS REFERENCE

Both files are {"traceEvents": [...]} in any layout. Events are compared
JSON-equal after sorting keys and sorting the event lists; numbers that are
floats may differ by at most 1e-6 (spec/swimlane-format.md §2.3 allows the
last-digit differences of another arithmetic order). Exit 0 when equal,
1 with a short report otherwise.
"""
import json
import sys

TOL = 1e-6


def canon(v):
    """A sort key that ignores float noise below the tolerance."""
    if isinstance(v, float):
        return round(v, 4)
    if isinstance(v, dict):
        return tuple(sorted((k, canon(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(canon(x) for x in v)
    return v


def close(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) != isinstance(b, float):
            return False
        return abs(a - b) <= TOL
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a == b


def main():
    with open(sys.argv[1]) as f:
        ours = json.load(f)
    with open(sys.argv[2]) as f:
        ref = json.load(f)
    if list(ours.keys()) != ["traceEvents"]:
        print(f"top-level keys {list(ours.keys())}, expected ['traceEvents']")
        return 1
    a = sorted(ours["traceEvents"], key=lambda e: repr(canon(e)))
    b = sorted(ref["traceEvents"], key=lambda e: repr(canon(e)))
    if len(a) != len(b):
        print(f"{len(a)} events, reference has {len(b)}")
    bad = 0
    for x, y in zip(a, b):
        if not close(x, y):
            bad += 1
            if bad <= 5:
                print("ours:", json.dumps(x, sort_keys=True))
                print("ref: ", json.dumps(y, sort_keys=True))
    if bad or len(a) != len(b):
        print(f"{bad} differing events")
        return 1
    print(f"{len(a)} events equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
