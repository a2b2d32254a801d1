#!/usr/bin/env bash
# CLI test of the dummy-task path under host_build_graph (seed 002 §2, §8:
# "dummy_task is emitted by both a2a3 runtimes ... a5 host_build_graph has
# no dummy-task phase path") and of the converter's warning for deps.json
# pairs that get no arrow (seed 002 §3.3). `taskprof run synthetic
# --runtime host_build_graph --enable-l2-swimlane L --enable-dep-gen`:
#   a2a3sim, levels 3 and 4: exactly one dummy_task record (t2) and one
#     predicated_skip record (t5), dummy bars handling both (tasks_processed
#     2 in all), no resolve / release bar, no orchestrator records; the
#     trace has the dummy(t2) and ADDS(t5) markers on AICPU lanes and an
#     arrow for every deps.json pair but the two of alloc_tensors t1528
#     (no orchestrator record under host_build_graph), 1523 arrows as
#     tensormap_and_ringbuffer at level 3; the run prints the one-line
#     warning naming t1528;
#   a5sim, level 4: no marker, no dummy bar; the arrows of t2, t5 and
#     t1528 are missing and the warning counts and names them;
#   a2a3sim with --enable-pmu too: the markers, and a pmu.csv row per
#     AICore subtask.
# usage: test_cli_hbg_markers.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_hbgmark_XXXXXX

# The warning's fixed parts (tools/swimlane/trace.c warn_unanchored()).
alloc_part="1 alloc_tensors task (not in deps.json tasks[]) without an orch_submit record (t1528)"
alloc_hint="alloc bars need level-4 orchestrator records, which host_build_graph does not write"
warn_a2a3="note: 2 of 1523 producer-consumer pairs of deps.json have no dependency arrow, \
for 1 task with no record to anchor on: $alloc_part; $alloc_hint"
warn_a2a3_l3="note: 2 of 1523 producer-consumer pairs of deps.json have no dependency arrow, \
for 1 task with no record to anchor on: $alloc_part; alloc bars need level-4 orchestrator \
records and the records are level 3"
warn_a5="note: 7 of 1523 producer-consumer pairs of deps.json have no dependency arrow, \
for 3 tasks with no record to anchor on: 1 dummy task without a dummy_task record (t2); \
1 task without task rows or a predicated_skip record (t5); $alloc_part; the records hold \
no dummy_task / predicated_skip marker at all (a5sim host_build_graph writes none); $alloc_hint"

# check PLATFORM RUNTIME LEVEL WANT_MARKERS WANT_ARROWS WANT_WARNING
check() {
	local p=$1 rt=$2 lvl=$3 markers=$4 arrows=$5 warn=$6
	local tag="$p $rt level $lvl" out dir msg
	out=$("$bin" run synthetic -p "$p" --runtime "$rt" --enable-l2-swimlane "$lvl" \
		--enable-dep-gen -o "$root/$p-$rt-$lvl" 2>"$root/err")
	local code=$?
	if [[ $code -ne 0 ]]; then
		echo "FAIL: $tag exited $code: $(tail -3 "$root/err")"
		fail=1
		return
	fi
	dir=$(sed -n 's/^swimlane records: \(.*\)\/l2_swimlane_records.json$/\1/p' <<<"$out")
	if [[ ! -s $dir/merged_swimlane.json ]]; then
		echo "FAIL: $tag: no trace in: $out"
		fail=1
		return
	fi
	if [[ -n $warn ]]; then
		if [[ $(grep -cxF -- "$warn" "$root/err") -ne 1 ]]; then
			echo "FAIL: $tag: stderr lacks the arrow warning:"
			grep -F "producer-consumer" "$root/err" || echo "  (none)"
			fail=1
		else
			echo "ok: $tag: arrow warning"
		fi
	elif grep -qF "producer-consumer" "$root/err"; then
		echo "FAIL: $tag: unexpected arrow warning: $(grep -F producer-consumer "$root/err")"
		fail=1
	fi
	if msg=$(python3 - "$dir" "$lvl" "$markers" "$arrows" <<'EOF'
import json, sys

d, lvl, markers, want_arrows = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
rec = json.load(open(d + "/l2_swimlane_records.json"))
deps = json.load(open(d + "/deps.json"))
doc = json.load(open(d + "/merged_swimlane.json"))
ev = doc["traceEvents"] if isinstance(doc, dict) else doc
errs = []
ph = [p for th in rec.get("aicpu_scheduler_phases", []) for p in th]
kinds = lambda k: [p for p in ph if p.get("kind") == k]
marks = sorted((p["kind"], int(p["task_id"]), p["tasks_processed"])
               for p in kinds("dummy_task") + kinds("predicated_skip"))
want_marks = [("dummy_task", 2, 1), ("predicated_skip", 5, 1)] if markers else []
if marks != want_marks:
    errs.append("markers %s, want %s" % (marks, want_marks))
dummy_tasks = sum(p["tasks_processed"] for p in kinds("dummy"))
if dummy_tasks != (2 if markers else 0):
    errs.append("dummy bars handle %d tasks, want %d" % (dummy_tasks, 2 if markers else 0))
for k in ("resolve", "release"):
    if kinds(k):
        errs.append("%d %s records under host_build_graph" % (len(kinds(k)), k))
if rec.get("aicpu_orchestrator_phases"):
    errs.append("orchestrator records under host_build_graph")

# The trace: markers on AICPU lanes, arrows mapped back to task pairs.
x = {e["id"]: e for e in ev if e.get("ph") == "X" and e.get("pid") == 4 and "id" in e}
tid_of = lambda e: e["args"].get("taskId", e["args"].get("task_id"))
dm = [e for e in x.values() if e["name"] == "dummy(t2)" and e["args"].get("phase") == "dummy_task"]
sk = [e for e in x.values() if e["name"] == "ADDS(t5)" and e["args"].get("predicated_pass") is False]
if (len(dm), len(sk)) != ((1, 1) if markers else (0, 0)):
    errs.append("trace markers: %d dummy(t2), %d ADDS(t5)" % (len(dm), len(sk)))
if any(e["tid"] < 19000 for e in dm + sk):
    errs.append("a marker is not on an AICPU lane")
flows = {}
for e in ev:
    if e.get("cat") == "flow" and e.get("pid") == 4 and e.get("name") in ("dependency", "hb_violation"):
        flows.setdefault(e["id"], {})[e["ph"]] = e
arrows = 0
got = set()
for f in flows.values():
    if "s" in f and "f" in f:
        arrows += 1
        got.add((tid_of(x[f["s"]["bind_id"]]), tid_of(x[f["f"]["bind_id"]])))
pairs = {(int(e["pred"]), int(e["succ"])) for e in deps["edges"]}
gone = {2, 5, 1528} if not markers else {1528}
want = {q for q in pairs if not (set(q) & gone)}
if got != want:
    errs.append("arrow pairs: %d, want %d (missing %s, extra %s)" % (
        len(got), len(want), sorted(want - got)[:5], sorted(got - want)[:5]))
through = {(0, 2), (1, 2), (2, 3), (4, 5), (5, 6)}
if markers and not through <= got:
    errs.append("no arrow for %s" % sorted(through - got))
if arrows != want_arrows:
    errs.append("%d arrows, want %d" % (arrows, want_arrows))
print("; ".join(errs) if errs else "markers %s, dummy bars %d tasks, %d arrows over %d pairs"
      % (marks, dummy_tasks, arrows, len(got)))
sys.exit(1 if errs else 0)
EOF
	); then
		echo "ok: $tag: $msg"
	else
		echo "FAIL: $tag: $msg ($dir)"
		fail=1
	fi
}

check a2a3sim host_build_graph 3 1 1523 "$warn_a2a3_l3"
check a2a3sim host_build_graph 4 1 1523 "$warn_a2a3"
check a5sim host_build_graph 4 0 1518 "$warn_a5"

# With the PMU on (single issue) the markers are there and pmu.csv has a
# row per AICore subtask (the audit's run: swimlane + dep_gen + PMU).
out=$("$bin" run synthetic -p a2a3sim --runtime host_build_graph --enable-l2-swimlane \
	--enable-dep-gen --enable-pmu -o "$root/pmu" 2>"$root/err")
code=$?
dir=$(sed -n 's/^swimlane records: \(.*\)\/l2_swimlane_records.json$/\1/p' <<<"$out")
if [[ $code -ne 0 || ! -s $dir/pmu.csv ]]; then
	echo "FAIL: host_build_graph with --enable-pmu: exit $code, no pmu.csv: $(tail -3 "$root/err")"
	fail=1
elif msg=$(python3 - "$dir" <<'EOF'
import csv, json, sys

d = sys.argv[1]
rec = json.load(open(d + "/l2_swimlane_records.json"))
marks = sorted((p["kind"], int(p["task_id"])) for th in rec["aicpu_scheduler_phases"] for p in th
               if p.get("kind") in ("dummy_task", "predicated_skip"))
rows = sum(1 for _ in csv.DictReader(open(d + "/pmu.csv")))
n = len(rec["aicore_tasks"])
print("markers %s, %d pmu.csv rows, %d aicore_tasks rows" % (marks, rows, n))
sys.exit(0 if marks == [("dummy_task", 2), ("predicated_skip", 5)] and rows == n == 1657 else 1)
EOF
); then
	echo "ok: host_build_graph with --enable-pmu: $msg"
else
	echo "FAIL: host_build_graph with --enable-pmu: $msg"
	fail=1
fi

# tensormap_and_ringbuffer at level 3 draws as many arrows when its
# deps.json has the same pairs (it may have fewer: a producer reclaimed
# before its consumer's submit is not an edge, docs/dep_gen.md).
out=$("$bin" run synthetic -p a2a3sim --enable-l2-swimlane 3 --enable-dep-gen \
	-o "$root/trb" 2>"$root/err")
# Its alloc task has no arrow for want of level-4 records, not of a
# runtime: the warning names the level.
if grep -qF "alloc bars need level-4 orchestrator records and the records are level 3" "$root/err" &&
	! grep -qF "host_build_graph does not write" "$root/err"; then
	echo "ok: tensormap_and_ringbuffer level 3: the arrow warning names the level"
else
	echo "FAIL: tensormap_and_ringbuffer level 3: want the level in the warning: $(grep -F producer-consumer "$root/err")"
	fail=1
fi
trb=$(sed -n 's/^swimlane records: \(.*\)\/l2_swimlane_records.json$/\1/p' <<<"$out")
hbg=$(ls -d "$root"/a2a3sim-host_build_graph-3/*/)
if msg=$(python3 - "$trb" "$hbg" <<'EOF'
import json, sys

def load(d):
    deps = json.load(open(d + "/deps.json"))
    doc = json.load(open(d + "/merged_swimlane.json"))
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    n = sum(1 for e in ev if e.get("cat") == "flow" and e.get("pid") == 4 and e.get("ph") == "s"
            and e.get("name") in ("dependency", "hb_violation"))
    return {(e["pred"], e["succ"]) for e in deps["edges"]}, n

tp, tn = load(sys.argv[1])
hp, hn = load(sys.argv[2])
if tp != hp:
    print("skipped: the tensormap_and_ringbuffer deps.json has %d pairs, host_build_graph %d"
          % (len(tp), len(hp)))
    sys.exit(0)
print("%d arrows under tensormap_and_ringbuffer, %d under host_build_graph" % (tn, hn))
sys.exit(0 if tn == hn else 1)
EOF
); then
	echo "ok: level 3 a2a3sim: $msg"
else
	echo "FAIL: level 3 a2a3sim: $msg"
	fail=1
fi
exit $fail
