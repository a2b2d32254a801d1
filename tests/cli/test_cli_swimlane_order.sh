#!/usr/bin/env bash
# CLI test of the swimlane stamps' order (seed 002 §4, spec swimlane-format
# §1.4-§1.5): on every joined row of synthetic runs at level 2 (a2a3sim
# and a5sim), dispatch <= receive <= start <= end <= finish. The finish is
# stamped when a scheduler observes the FIN and the receive when an AICore
# reads its token; each must come after the store it observes, which the
# other thread made after its own stamp (dispatch, end). With an unordered
# rdtsc, finish < end turned up in about 1 row in 1,000 (21 of 19,884
# rows over 12 runs): this test runs 8 per platform (2 under sanitizers).
# usage: test_cli_swimlane_order.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_swlord_XXXXXX
runs=8
[[ -n ${TASKPROF_TEST_SANITIZE:-} ]] && runs=2

for p in a2a3sim a5sim; do
	for i in $(seq "$runs"); do
		if ! "$bin" run synthetic -p "$p" --enable-l2-swimlane 2 -o "$root/$p" \
			>/dev/null 2>"$root/err"; then
			echo "FAIL: synthetic on $p, run $i: $(tail -3 "$root/err")"
			fail=1
		fi
	done
	if msg=$(python3 - "$root/$p"/*/l2_swimlane_records.json <<'PY'
import json, sys

rows = bad = 0
worst = ""
for fn in sys.argv[1:]:
    with open(fn) as f:
        d = json.load(f)
    # aicore_tasks: [core_id, task_token, reg_task_id, start, end,
    # receive_to_start]; aicpu_tasks: [core_id, reg_task_id, dispatch, finish]
    core = {(r[0], r[2]): r for r in d["aicore_tasks"]}
    for core_id, reg, dispatch, finish in d["aicpu_tasks"]:
        c = core[(core_id, reg)]
        start, end, r2s = c[3], c[4], c[5]
        receive = start - r2s
        rows += 1
        if not dispatch <= receive <= start <= end <= finish:
            bad += 1
            worst = worst or ("core %d reg %d: dispatch %d receive %d start %d end %d "
                              "finish %d" % (core_id, reg, dispatch, receive, start, end, finish))
print("%d files, %d rows, %d out of order%s" % (len(sys.argv) - 1, rows, bad,
                                               (": first " + worst) if worst else ""))
sys.exit(1 if bad or not rows else 0)
PY
	); then
		echo "ok: $p: $msg"
	else
		echo "FAIL: $p: $msg"
		fail=1
	fi
done
exit $fail
