#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The plan samples in docs/ are what `taskprof op --list-passes` prints:
# the plan is a pure function of the request (docs/op-metrics.md), so a
# change of the packing that leaves the docs behind fails here.
# Usage: test_cli_doc_samples.sh TASKPROF_BINARY
bin=${1:?usage: $0 TASKPROF_BINARY}
docs=$(cd "$(dirname "$0")/../../docs" && pwd) || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

plan=$(TASKPROF_PLATFORM=a2a3sim "$bin" op --list-passes) || bad "--list-passes exited $?"
# docs/op-metrics.md: the header line and every pass line, as printed.
while IFS= read -r line; do
	[[ $line == "pass "* ]] || continue
	grep -qxF -- "$line" "$docs/op-metrics.md" || bad "docs/op-metrics.md lacks the line '$line'"
done <<<"$plan"
first_event=$(grep -m1 '^  pass 0 AIC' <<<"$plan")
grep -qxF -- "$first_event" "$docs/op-metrics.md" || bad "docs/op-metrics.md lacks '$first_event'"
grep -qxF -- "$first_event" "$docs/op.md" || bad "docs/op.md lacks '$first_event'"
# docs/op.md shows pass 0 with its AIV half cut short: the line's start.
pass0=$(grep -m1 '^pass 0 ' <<<"$plan")
aic=${pass0%%    AIV:*}
grep -qF -- "$aic    AIV: " "$docs/op.md" || bad "docs/op.md lacks the AIC half of '$pass0'"
# The counts both docs give: 4 passes (27 + 32) on a2a3, 3 (29 + 26) on a5.
grep -qxF "pass plan: arch a2a3, 8 slots per core type, 4 passes, 27 AIC + 32 AIV events" <<<"$plan" ||
	bad "a2a3 plan header: $(sed -n 2p <<<"$plan")"
a5=$(TASKPROF_PLATFORM=a5sim "$bin" op --list-passes | sed -n 2p)
[[ $a5 == "pass plan: arch a5, 10 slots per core type, 3 passes, 29 AIC + 26 AIV events" ]] ||
	bad "a5 plan header: $a5"
[[ $fail -eq 0 ]] && echo "ok: the --list-passes samples of docs/op.md and docs/op-metrics.md"
exit $fail
