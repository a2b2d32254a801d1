#!/usr/bin/env bash
# Integration test of in-kernel instrumentation under `taskprof op` (issue 6
# scope 8, acceptance 6; docs/op-internals.md dump/instr.txt;
# spec/opprof.md §4.12):
#
#   the instr app's kernel (4 blocks) calls, per block b, tp_mark(100+b),
#   tp_mark_range_begin/end(7), tp_scalar_begin("prep")/end,
#   tp_mark(200+b), tp_scalar_begin("post")/end. Under taskprof op:
#   - Instrumentation.csv lists per block, in order: block_begin, mark
#     100+b, range_begin 7, range_end 7, scalar_begin prep, scalar_end
#     prep, mark 200+b, scalar_begin post, scalar_end post, block_end,
#     with non-decreasing times
#   - ScalarSections.csv: per block, prep then post, 1 execution each,
#     cycles > 0, a share in (0, 100]
#   - trace.json (valid JSON): per block lane, mark 100+b, range 7, prep,
#     mark 200+b, post in time order, plus the pass slices
#   - the application's output equals an unprofiled run's, byte for byte
#     (also with --instr off, which writes no Instrumentation.csv)
#   - range replay (`instr range`: the kernel launched twice inside a
#     range): each profiled launch gets the same files, from measured pass 0
#
# usage: test_op_instr.sh TASKPROF_BINARY
. "$(dirname "$0")/op_test_lib.sh" "$1"

need "$APPS/instr"
BLOCKS=4

say "instr: unprofiled reference run"
OP_OUT_FILE=$WORK/ref.bin app_run plain "$APPS/instr"
[ $APPRC = 0 ] && ok "exit 0: $(cat "$WORK/plain.out")" ||
	{ bad "unprofiled run exited $APPRC"; show "$WORK/plain.err"; }

say "instr: taskprof op --aic-metrics PipeUtilization (instrumentation on by default)"
OP_OUT_FILE=$WORK/prof.bin op_run prof --aic-metrics PipeUtilization -- "$APPS/instr"
if [ $OPRC != 0 ] || [ -z "$OPDIR" ]; then
	bad "taskprof op exited $OPRC"
	show "$WORK/prof.err"
	finish
fi
ok "taskprof op exited 0"
same_bytes "instr" "$WORK/ref.bin" "$WORK/prof.bin"
D=$OPDIR/device0/instr_kernel/0

# check_instr LABEL DIR: the instrumentation files of one launch folder.
check_instr() {
	local D=$2 f
	for f in dump/instr.txt Instrumentation.csv ScalarSections.csv trace.json; do
		[ -s "$D/$f" ] || bad "$1: missing or empty ${D#"$WORK"/}/$f"
	done

say "$1 Instrumentation.csv: every block's points in program order"
if python3 - "$D/Instrumentation.csv" $BLOCKS <<'PY'; then
import csv, sys
path, nb = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(path, newline="")))
want_hdr = ["block_id", "core_id", "seq", "kind", "id", "name", "time(us)"]
hdr = list(rows[0].keys()) if rows else []
if hdr != want_hdr:
    print(f"   | header {hdr}, want {want_hdr}"); sys.exit(1)
bad = 0
for b in range(nb):
    rs = [r for r in rows if int(r["block_id"]) == b]
    got = []
    for r in rs:
        k = r["kind"]
        if k in ("block_begin", "block_end"):
            # their id is the core the block ran on
            if r["id"] != r["core_id"]:
                print(f"   | block {b}: {k} id {r['id']} != core_id {r['core_id']}"); bad += 1
            got.append(k)
        elif k.startswith("scalar"):
            got.append(f"{k} {r['name']}")
        else:
            got.append(f"{k} {r['id']}")
    want = ["block_begin", f"mark {100 + b}", "range_begin 7", "range_end 7",
            "scalar_begin prep", "scalar_end prep", f"mark {200 + b}",
            "scalar_begin post", "scalar_end post", "block_end"]
    if got != want:
        print(f"   | block {b}: {got}\n   |   want {want}"); bad += 1
    seqs = [int(r["seq"]) for r in rs]
    if seqs != list(range(len(rs))):
        print(f"   | block {b}: seq {seqs}"); bad += 1
    ts = [float(r["time(us)"]) for r in rs]
    if ts != sorted(ts) or (ts and ts[0] != 0.0):
        print(f"   | block {b}: times {ts} not non-decreasing from 0"); bad += 1
extra = {r["block_id"] for r in rows} - {str(b) for b in range(nb)}
if extra:
    print(f"   | rows of unexpected blocks {sorted(extra)}"); bad += 1
sys.exit(1 if bad else 0)
PY
	ok "$1: $BLOCKS blocks x 10 points in order, times non-decreasing"
else
	bad "$1: Instrumentation.csv does not list the points per block in order"
	show "$D/Instrumentation.csv"
fi

say "$1 ScalarSections.csv: prep then post per block, one execution each"
if python3 - "$D/ScalarSections.csv" $BLOCKS <<'PY'; then
import csv, sys
path, nb = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(path, newline="")))
want_hdr = ["block_id", "section", "executions", "cycles", "share(%)"]
if not rows or list(rows[0].keys()) != want_hdr:
    print(f"   | header {list(rows[0].keys()) if rows else None}, want {want_hdr}"); sys.exit(1)
bad = 0
for b in range(nb):
    rs = [r for r in rows if int(r["block_id"]) == b]
    names = [r["section"] for r in rs]
    if names != ["prep", "post"]:
        print(f"   | block {b}: sections {names}, want ['prep', 'post']"); bad += 1
    for r in rs:
        share = float(r["share(%)"]) if r["share(%)"] != "N/A" else -1
        if r["executions"] != "1" or int(r["cycles"]) <= 0 or not 0 < share <= 100:
            print(f"   | block {b}: {dict(r)}"); bad += 1
if len(rows) != 2 * nb:
    print(f"   | {len(rows)} rows, want {2 * nb}"); bad += 1
sys.exit(1 if bad else 0)
PY
	ok "$1: $BLOCKS blocks x (prep, post), 1 execution, cycles > 0, share in (0, 100]"
else
	bad "$1: ScalarSections.csv is not as expected"
	show "$D/ScalarSections.csv"
fi

say "$1 trace.json: valid JSON, one lane per block with the points in order"
if python3 - "$D/trace.json" $BLOCKS <<'PY'; then
import json, re, sys
path, nb = sys.argv[1], int(sys.argv[2])
try:
    doc = json.load(open(path))
except ValueError as e:
    print(f"   | not JSON: {e}"); sys.exit(1)
evs = doc["traceEvents"] if isinstance(doc, dict) else doc
lanes = {}
for e in evs:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        m = re.match(r"block (\d+) ", e["args"]["name"])
        if m:
            lanes[int(m.group(1))] = e["tid"]
bad = 0
if sorted(lanes) != list(range(nb)):
    print(f"   | lanes for blocks {sorted(lanes)}, want 0..{nb - 1}"); sys.exit(1)
for b, tid in sorted(lanes.items()):
    mine = [(e["ts"], i, e) for i, e in enumerate(evs)
            if e.get("tid") == tid and e.get("ph") in ("i", "I", "X")]
    mine.sort(key=lambda x: (x[0], x[1]))
    pts = [e for _, _, e in mine if e.get("cat") in ("mark", "range", "scalar")]
    names = [(e["ph"].upper(), e["name"]) for e in pts]
    want = [("I", f"mark {100 + b}"), ("X", "range 7"), ("X", "prep"),
            ("I", f"mark {200 + b}"), ("X", "post")]
    if names != want:
        print(f"   | block {b}: {names}\n   |   want {want}"); bad += 1
    if not any(e.get("cat") == "pass" for _, _, e in mine):
        print(f"   | block {b}: no pass slice"); bad += 1
    # slices do not overlap: range 7 ends before prep starts, prep before post
    sl = [e for e in pts if e["ph"] == "X"]
    for x, y in zip(sl, sl[1:]):
        if x["ts"] + x.get("dur", 0) > y["ts"] + 0.0015:
            print(f"   | block {b}: {x['name']} ends after {y['name']} starts"); bad += 1
sys.exit(1 if bad else 0)
PY
	ok "$1: $BLOCKS lanes: mark 100+b, range 7, prep, mark 200+b, post; pass slices present"
else
	bad "$1: trace.json does not show the points per block in order"
	show "$D/trace.json"
fi


say "$1: block_begin is stamped inside the counting window, at the kernel call"
# Instrumentation.csv times are from the block's block_begin; trace.json
# has the pass 0 slice (from the counting window's start) and the marks,
# on one clock. The first mark (the kernel's first call) must be no later
# after block_begin than after the window's start: block_begin once came
# 10-30 µs before it, stamped before the window's opening read the CPU
# clock, and every time in the csv carried that delay.
if python3 - "$D/Instrumentation.csv" "$D/trace.json" $BLOCKS <<'PY'; then
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
nb = int(sys.argv[3])
evs = doc["traceEvents"] if isinstance(doc, dict) else doc
lanes = {}
for e in evs:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        m = re.match(r"block (\d+) ", e["args"]["name"])
        if m:
            lanes[int(m.group(1))] = e["tid"]
bad = 0
for b in range(nb):
    tid = lanes.get(b)
    p0 = [e["ts"] for e in evs if e.get("tid") == tid and e.get("name") == "pass 0"]
    mk = [e["ts"] for e in evs if e.get("tid") == tid and e.get("name") == f"mark {100 + b}"]
    cm = [float(r["time(us)"]) for r in rows
          if int(r["block_id"]) == b and r["kind"] == "mark" and r["id"] == str(100 + b)]
    if len(p0) != 1 or len(mk) != 1 or len(cm) != 1:
        print(f"   | block {b}: pass 0 {p0}, trace mark {mk}, csv mark {cm}"); bad += 1
        continue
    in_trace = mk[0] - p0[0]
    if cm[0] > in_trace + 0.03:
        print(f"   | block {b}: mark {100 + b} at {cm[0]:.3f} us after block_begin, "
              f"but {in_trace:.3f} us after the window's start"); bad += 1
sys.exit(1 if bad else 0)
PY
	ok "$1: each block's first mark is no later after block_begin than after the window's start"
else
	bad "$1: block_begin precedes the counting window"
	show "$D/Instrumentation.csv"
fi
}

check_instr kernel "$D"

say "instr: range replay of 'instr range' (2 launches in a range), -c 10"
OP_OUT_FILE=$WORK/range.bin op_run range --replay-mode range --range-markers on -c 10 \
	--aic-metrics PipeUtilization -- "$APPS/instr" range
if [ $OPRC = 0 ] && [ -n "$OPDIR" ] && ! grep -q 'warning' "$WORK/range.err"; then
	ok "range replay: taskprof op exited 0, no warning"
else
	bad "range replay: taskprof op exited $OPRC (or warned)"
	show "$WORK/range.err"
fi
same_bytes "instr range" "$WORK/ref.bin" "$WORK/range.bin"
for k in 0 1; do
	check_instr "range launch $k" "${OPDIR:-/nonexistent}/device0/instr_kernel/$k"
done

say "instr: --instr off gives the same output and no Instrumentation.csv"
OP_OUT_FILE=$WORK/off.bin op_run off --instr off --aic-metrics PipeUtilization -- "$APPS/instr"
[ $OPRC = 0 ] || { bad "--instr off: taskprof op exited $OPRC"; show "$WORK/off.err"; }
same_bytes "instr --instr off" "$WORK/ref.bin" "$WORK/off.bin"
if [ -n "$OPDIR" ] && [ -f "$OPDIR/device0/instr_kernel/0/launch.txt" ] &&
	[ ! -e "$OPDIR/device0/instr_kernel/0/Instrumentation.csv" ]; then
	ok "--instr off: launch profiled, no Instrumentation.csv"
else
	bad "--instr off: want the launch folder without Instrumentation.csv"
fi

# 10 points per block (block_begin ... block_end): with room for 4, each
# block keeps its first 4 and the warning names the option that keeps more.
say "instr: --instr-cap 4 keeps 4 points per block and says how to keep more"
OP_OUT_FILE=$WORK/cap.bin op_run cap --instr-cap 4 --aic-metrics PipeUtilization -- "$APPS/instr"
[ $OPRC = 0 ] || { bad "--instr-cap 4: taskprof op exited $OPRC"; show "$WORK/cap.err"; }
same_bytes "instr --instr-cap 4" "$WORK/ref.bin" "$WORK/cap.bin"
n=$(grep -c 'block [0-3]: 6 instrumentation points did not fit (taskprof op --instr-cap N keeps more per block)' "$WORK/cap.err")
[ "$n" = $BLOCKS ] && ok "--instr-cap 4: $n warnings of 6 points not kept" ||
	{ bad "--instr-cap 4: $n of $BLOCKS warnings"; show "$WORK/cap.err"; }
C=${OPDIR:-/nonexistent}/device0/instr_kernel/0
rows=$(awk -F, 'NR > 1 { c[$1]++ } END { for (b in c) print b ":" c[b] }' "$C/Instrumentation.csv" 2>/dev/null | sort | tr '\n' ' ')
[ "$rows" = "0:4 1:4 2:4 3:4 " ] && ok "--instr-cap 4: Instrumentation.csv rows per block $rows" ||
	bad "--instr-cap 4: Instrumentation.csv rows per block '$rows', want 4 each"
[ "$(kv "${OPDIR:-/nonexistent}/config.txt" instr_cap)" = 4 ] && ok "config.txt instr_cap=4" ||
	bad "config.txt: instr_cap is '$(kv "${OPDIR:-/nonexistent}/config.txt" instr_cap)', want 4"
"$TP" op --instr-cap 0 -- "$APPS/instr" >"$WORK/cap0.out" 2>"$WORK/cap0.err"
rc=$?
[ $rc = 2 ] && grep -q "^taskprof op: --instr-cap expects an integer from 1 to 1048576, got '0'$" "$WORK/cap0.err" &&
	ok "--instr-cap 0: exit 2 and the option's range" ||
	{ bad "--instr-cap 0: exit $rc"; show "$WORK/cap0.err"; }

finish
