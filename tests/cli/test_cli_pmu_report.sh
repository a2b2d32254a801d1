#!/usr/bin/env bash
# CLI test of `taskprof pmu PMU_CSV`: a hand-written pmu.csv gives the
# expected per-function summary (rows, mean / median pmu_total_cycles,
# counter means, pipe shares for PIPE_UTILIZATION); a reference-style file
# without run_epoch and a non-PIPE group are accepted; a run folder or no
# argument (the newest outputs/*/pmu.csv) finds the file; bad files exit 1
# with one line naming the file, the line and the column; usage errors
# exit 2.
# usage: test_cli_pmu_report.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: some checks cd
cli_init /tmp/tp_cli_pmu_XXXXXX
expect_err() { # file, expected substring
	local err rc
	err=$("$bin" pmu "$1" 2>&1 >/dev/null)
	rc=$?
	[[ $rc -eq 1 ]] || bad "$1: exit $rc, want 1"
	[[ $(wc -l <<<"$err") -eq 1 ]] || bad "$1: not one line: $err"
	grep -qF -- "$2" <<<"$err" || bad "$1: want '$2', got: $err"
}

H='thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles'
PIPE="$H,vec_busy_cycles,cube_busy_cycles,scalar_busy_cycles,mte1_busy_cycles,mte2_busy_cycles,mte3_busy_cycles,icache_miss,icache_req,event_type,run_epoch"
cat >"$root/pmu.csv" <<CSV
$PIPE
0,0,0x0000000000000010,3,0,1000,0,500,10,200,100,0,0,0,2,4
0,0,0x0000000000000011,3,0,3000,0,1500,30,600,300,0,0,0,2,4
1,1,0x0000000200000a00,7,1,2000,1000,0,0,0,400,200,0,0,2,4
1,2,0x0000000200000a01,7,1,4000,2000,0,0,0,800,400,0,0,2,4
1,2,0x0000000200000a02,7,1,9000,3000,0,0,0,900,300,0,0,2,4
CSV
out=$("$bin" pmu "$root/pmu.csv") || bad "pmu exited $?"
has "$out" "$root/pmu.csv: 5 rows, 2 functions, event_type 2 (PIPE_UTILIZATION), run_epoch 4"
has "$out" "func_id 3: 2 rows (AIC 2, AIV 0), pmu_total_cycles mean 2000.0 median 2000.0"
has "$out" "func_id 7: 3 rows (AIC 0, AIV 3), pmu_total_cycles mean 5000.0 median 4000.0"
# A UTF-8 byte-order mark before the header (a spreadsheet's export) is
# skipped: the same summary.
{ printf '\xef\xbb\xbf'; cat "$root/pmu.csv"; } >"$root/bom.csv"
outb=$("$bin" pmu "$root/bom.csv") || bad "pmu bom.csv exited $?"
has "$outb" "$root/bom.csv: 5 rows, 2 functions, event_type 2 (PIPE_UTILIZATION), run_epoch 4"
has "$outb" "func_id 7: 3 rows (AIC 0, AIV 3), pmu_total_cycles mean 5000.0 median 4000.0"
# Blank lines at the end (an editor's, or `echo >>`) are no rows: the same
# summary; a blank line between rows is an error naming it; lines ended by
# CR alone are named as such, not read as one long header.
{ cat "$root/pmu.csv"; printf '\n\r\n\n'; } >"$root/trail.csv"
outt=$("$bin" pmu "$root/trail.csv") || bad "pmu trail.csv exited $?"
has "$outt" "$root/trail.csv: 5 rows, 2 functions, event_type 2 (PIPE_UTILIZATION), run_epoch 4"
# A file joined from several runs' pmu.csv: their distinct run_epoch
# values are counted (epoch 2 twice, not adjacent: still 3 runs).
{ head -1 "$root/pmu.csv"; sed -n 2p "$root/pmu.csv" | sed 's/,4$/,2/';
  sed -n 3p "$root/pmu.csv" | sed 's/,4$/,5/'; sed -n 4p "$root/pmu.csv" | sed 's/,4$/,2/';
  sed -n '5,6p' "$root/pmu.csv"; } >"$root/runs.csv"
outr=$("$bin" pmu "$root/runs.csv") || bad "pmu runs.csv exited $?"
has "$outr" "$root/runs.csv: 5 rows, 2 functions, event_type 2 (PIPE_UTILIZATION), 3 runs (run_epoch 2..5, pooled below)"
has "$outr" "func_id 7: 3 rows (AIC 0, AIV 3), pmu_total_cycles mean 5000.0 median 4000.0"
sed '3s/.*//' "$root/pmu.csv" >"$root/gap.csv"
err=$("$bin" pmu "$root/gap.csv" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 && $err == "taskprof pmu: $root/gap.csv:3: empty line; expected a data row" ]] ||
	bad "blank line between rows: exit $rc, stderr '$err'"
tr '\n' '\r' <"$root/pmu.csv" >"$root/cr.csv"
err=$("$bin" pmu "$root/cr.csv" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 && $err == "taskprof pmu: $root/cr.csv:1: a line ends with CR alone; expected lines ended by LF or CRLF" ]] ||
	bad "CR line endings: exit $rc, stderr '$err'"
# func 3: cube 2000 of 4000 cycles = 50 %, mte1 800/4000 = 20 %.
grep -qE '^  cube_busy_cycles +1000\.0 +50\.0%$' <<<"$out" || bad "cube share: $out"
grep -qE '^  mte1_busy_cycles +400\.0 +20\.0%$' <<<"$out" || bad "mte1 share: $out"
# func 7: vec 6000 of 15000 = 40 %, mte2 2100/15000 = 14 %.
grep -qE '^  vec_busy_cycles +2000\.0 +40\.0%$' <<<"$out" || bad "vec share: $out"
grep -qE '^  mte2_busy_cycles +700\.0 +14\.0%$' <<<"$out" || bad "mte2 share: $out"
# icache columns are not pipes: a mean, no share.
grep -qE '^  icache_req +0\.0$' <<<"$out" || bad "icache line: $out"
# The rows above count no more busy cycles than in all: no warning. One
# that does (the 2nd data row: vec 500 of 10) is said once, named.
err=$("$bin" pmu "$root/pmu.csv" 2>&1 >/dev/null)
[[ -z $err ]] || bad "warning on a sound file: $err"
{ echo "$PIPE"; echo "0,0,0x1,3,0,1000,0,500,10,200,100,0,0,0,2,4"
  echo "0,0,0x2,3,0,10,500,2,3,4,5,6,7,8,2,4"; } >"$root/over.csv"
err=$("$bin" pmu "$root/over.csv" 2>&1 >/dev/null)
[[ $err == "taskprof pmu: warning: $root/over.csv: 1 row counts more busy cycles than pmu_total_cycles (the first: data row 2, vec_busy_cycles 500 > 10): the shares of total go past 100%" ]] ||
	bad "busy > total: $err"
echo "ok: PIPE_UTILIZATION summary"

# Names: the unique sibling name map, or --func-names (func 7 has no name).
mkdir "$root/named"
cp "$root/pmu.csv" "$root/named/pmu.csv"
printf '{\n  "level": 2,\n  "orchestrator_name": "O",\n  "callable_id_to_name": {\n    "3": "QK"\n  }\n}' \
    >"$root/named/name_map_X_Y.json"
out=$("$bin" pmu "$root/named/pmu.csv") || bad "named exited $?"
has "$out" "func_id 3 (QK): 2 rows (AIC 2, AIV 0)"
has "$out" "func_id 7: 3 rows (AIC 0, AIV 3)"
out=$("$bin" pmu --func-names "$root/named/name_map_X_Y.json" "$root/pmu.csv") || bad "--func-names exited $?"
has "$out" "func_id 3 (QK): 2 rows"
"$bin" pmu --func-names "$root/none.json" "$root/pmu.csv" >/dev/null 2>&1
[[ $? -eq 1 ]] || bad "--func-names missing: want exit 1"
# a JSON object that is not a name map (a flat map here): no names, a warning
echo '{"3": "QK"}' >"$root/flat.json"
err=$("$bin" pmu --func-names "$root/flat.json" "$root/pmu.csv" 2>&1 >"$root/flat.out"); rc=$?
[[ $rc -eq 0 ]] || bad "--func-names flat map: exit $rc, want 0"
[[ $err == "taskprof pmu: warning: $root/flat.json: no callable_id_to_name key, so no function names from it (a name map looks like {\"callable_id_to_name\": {\"0\": \"QK\"}}, as \`taskprof run\` writes name_map_<case>.json)" ]] ||
	bad "--func-names flat map: stderr '$err'"
grep -qF "func_id 3: 2 rows" "$root/flat.out" || bad "--func-names flat map: $(cat "$root/flat.out")"
err=$("$bin" pmu --func-names "$root/named/name_map_X_Y.json" "$root/pmu.csv" 2>&1 >/dev/null)
[[ -z $err ]] || bad "--func-names a name map: stderr '$err'"
# control characters of a name (newline, escape, C1 U+0085) print as '?',
# the row stays one line
printf '{"callable_id_to_name": {"3": "a\\nb\\u001b[31mR\\u0085S"}}' >"$root/ctl.json"
out=$("$bin" pmu --func-names "$root/ctl.json" "$root/pmu.csv") || bad "control names exited $?"
has "$out" "func_id 3 (a?b?[31mR?S): 2 rows (AIC 2, AIV 0)"
[[ $out == *$'\e'* || $out == *$'\xc2\x85'* ]] && bad "control names: raw control characters: $out"
err=$(cd "$root" && "$bin" pmu - 2>&1 </dev/null); rc=$?
[[ $rc -eq 1 && $err == "taskprof pmu: -: cannot read: No such file or directory (taskprof reads no standard input: give the file's path)" ]] ||
	bad "pmu -: exit $rc, '$err'"
echo "ok: function names"
# Sibling name maps are found as `taskprof swimlane` finds them: a broken
# one is an error naming the file and the place (exit 1, no summary), two
# are the swimlane's warning and no names (exit 0).
mkdir "$root/broken"
cp "$root/pmu.csv" "$root/broken/pmu.csv"
echo '{"callable_id_to_name":' >"$root/broken/name_map_x.json"
err=$("$bin" pmu "$root/broken/pmu.csv" 2>&1 >"$root/broken.out"); rc=$?
[[ $rc -eq 1 ]] || bad "broken sibling name map: exit $rc, want 1"
[[ $(wc -l <<<"$err") -eq 1 ]] || bad "broken sibling name map: not one line: $err"
grep -qF -- "taskprof pmu: $root/broken/name_map_x.json: line 2, column 1: invalid JSON" <<<"$err" ||
	bad "broken sibling name map: got: $err"
[[ -s $root/broken.out ]] && bad "broken sibling name map: a summary was printed"
cp "$root/named/name_map_X_Y.json" "$root/named/name_map_Z.json"
err=$("$bin" pmu "$root/named/pmu.csv" 2>&1 >"$root/two.out"); rc=$?
[[ $rc -eq 0 ]] || bad "two sibling name maps: exit $rc, want 0"
[[ $err == "Warning: multiple sibling name maps found next to $root/named/pmu.csv: name_map_X_Y.json, name_map_Z.json; pass --func-names explicitly." ]] ||
	bad "two sibling name maps: stderr '$err'"
grep -qF "func_id 3: 2 rows" "$root/two.out" || bad "two sibling name maps: names used: $(cat "$root/two.out")"
# --func-names still picks one, silently
out=$("$bin" pmu --func-names "$root/named/name_map_Z.json" "$root/named/pmu.csv" 2>"$root/err") ||
	bad "two maps + --func-names exited $?"
has "$out" "func_id 3 (QK): 2 rows"
[[ -s $root/err ]] && bad "two maps + --func-names: stderr $(cat "$root/err")"
rm "$root/named/name_map_Z.json"
# A sibling that is a dangling link or a directory is named in a warning
# (exit 0, no names); --func-names on a dangling link says so (exit 1).
mkdir "$root/odd"
cp "$root/pmu.csv" "$root/odd/pmu.csv"
ln -s /nonexistent "$root/odd/name_map_d.json"
err=$("$bin" pmu "$root/odd/pmu.csv" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 0 && $err == "Warning: sibling name map skipped: $root/odd/name_map_d.json is a symbolic link whose target /nonexistent does not exist" ]] ||
	bad "dangling sibling name map: exit $rc, stderr '$err'"
rm "$root/odd/name_map_d.json"
mkdir "$root/odd/name_map_c.json"
err=$("$bin" pmu "$root/odd/pmu.csv" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 0 && $err == "Warning: sibling name map $root/odd/name_map_c.json skipped: it is a directory" ]] ||
	bad "directory sibling name map: exit $rc, stderr '$err'"
ln -s /nonexistent "$root/dang"
err=$("$bin" pmu --func-names "$root/dang" "$root/pmu.csv" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 && $err == "taskprof pmu: Func names JSON $root/dang: $root/dang is a symbolic link whose target /nonexistent does not exist" ]] ||
	bad "--func-names dangling link: exit $rc, stderr '$err'"
echo "ok: sibling name maps as in taskprof swimlane"

# Reference layout (no run_epoch), MEMORY group on a5-like columns: means only.
cat >"$root/mem.csv" <<CSV
$H,pmu_rd_l1_instr,pmu_wr_l1_instr,event_type
2,5,0x0000000000000001,0,1,100,10,4,4
2,5,0x0000000000000002,0,1,300,30,8,4
CSV
out=$("$bin" pmu "$root/mem.csv" 2>"$root/err") || bad "mem exited $?"
has "$out" "2 rows, 1 function, event_type 4 (MEMORY)"
# two of a5 MEMORY's eight counters: the others are named as missing
[[ $(cat "$root/err") == "Warning: $root/mem.csv:1: no column for the a5 MEMORY counter(s) bif_sc_pmu_read_main_instr_core, bif_sc_pmu_write_main_instr_core, pmu_aiv_ext_rd_ub_instr, ub_pmu_vec_rd_ub_acc, pmu_aiv_ext_wr_ub_instr, ub_pmu_vec_wr_ub_acc (event_type 4)" ]] ||
	bad "mem: stderr '$(cat "$root/err")'"
has "$out" "func_id 0: 2 rows (AIC 0, AIV 2), pmu_total_cycles mean 200.0 median 200.0"
grep -qE '^  pmu_rd_l1_instr +20\.0$' <<<"$out" || bad "mem mean: $out"
grep -q '%' <<<"$out" && bad "non-PIPE group shows shares: $out"
echo "ok: MEMORY without run_epoch"

# Counter columns are checked against the event group's (spec/pmu.md
# §2.2): the exact a2a3 / a5 PIPE headers pass in silence; a renamed
# counter is named with what was expected (its share of total would vanish
# without a word otherwise); a duplicated column is an error.
"$bin" pmu "$root/pmu.csv" >/dev/null 2>"$root/err" || bad "a2a3 PIPE exited $?"
[[ -s $root/err ]] && bad "a2a3 PIPE header: stderr $(cat "$root/err")"
A5PIPE="$H,pmu_idc_aic_vec_busy_o,cube_instr_busy,scalar_instr_busy,mte1_instr_busy,mte2_instr_busy,mte3_instr_busy,icache_req,icache_miss,pmu_fix_instr_busy,event_type,run_epoch"
{ echo "$A5PIPE"; echo "0,0,0x10,3,0,1000,1,2,3,4,5,6,7,8,9,2,1"; } >"$root/a5pipe.csv"
"$bin" pmu "$root/a5pipe.csv" >/dev/null 2>"$root/err" || bad "a5 PIPE exited $?"
[[ -s $root/err ]] && bad "a5 PIPE header: stderr $(cat "$root/err")"
sed '1s/vec_busy_cycles/foo/' "$root/pmu.csv" >"$root/foo.csv"
out=$("$bin" pmu "$root/foo.csv" 2>"$root/err") || bad "renamed counter: exit $?, want 0"
has "$out" "func_id 7: 3 rows (AIC 0, AIV 3)"
want="Warning: $root/foo.csv:1: column 7 (foo): not a counter of PIPE_UTILIZATION (event_type 2); expected the a2a3 columns vec_busy_cycles, cube_busy_cycles, scalar_busy_cycles, mte1_busy_cycles, mte2_busy_cycles, mte3_busy_cycles, icache_miss, icache_req
Warning: $root/foo.csv:1: no column for the a2a3 PIPE_UTILIZATION counter(s) vec_busy_cycles (event_type 2)"
[[ $(cat "$root/err") == "$want" ]] || bad "renamed counter: stderr '$(cat "$root/err")'"
# no rows: the closest group of any event type
head -1 "$root/foo.csv" >"$root/foo_hdr.csv"
"$bin" pmu "$root/foo_hdr.csv" >/dev/null 2>"$root/err" || bad "renamed counter, header only: exit $?"
grep -qF "Warning: $root/foo_hdr.csv:1: column 7 (foo): not a counter of PIPE_UTILIZATION" "$root/err" ||
	bad "renamed counter, header only: stderr '$(cat "$root/err")'"
sed 's/,2,4$/,3,4/' "$root/pmu.csv" >"$root/et3.csv"
"$bin" pmu "$root/et3.csv" >/dev/null 2>"$root/err" || bad "event_type 3: exit $?"
[[ $(cat "$root/err") == "Warning: $root/et3.csv: event_type 3 is not a known event group (1, 2, 4, 5, 6, 7, 8); its counter columns are not checked" ]] ||
	bad "event_type 3: stderr '$(cat "$root/err")'"
sed '1s/vec_busy_cycles/cube_busy_cycles/' "$root/pmu.csv" >"$root/dup.csv"
expect_err "$root/dup.csv" "$root/dup.csv:1: column 8 (cube_busy_cycles): duplicate column name (also column 7)"
sed '1s/vec_busy_cycles/core_id/' "$root/pmu.csv" >"$root/dup2.csv"
expect_err "$root/dup2.csv" "$root/dup2.csv:1: column 7 (core_id): duplicate column name (also column 2)"
echo "ok: counter columns checked"

# Header only: a valid file with no rows.
echo "$PIPE" >"$root/empty.csv"
out=$("$bin" pmu "$root/empty.csv") || bad "header-only exited $?"
has "$out" "0 rows, 0 functions"

# Bad inputs: exit 1, one line naming file:line and the column.
{ echo "$PIPE"; echo "0,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; echo "0,0,0x11,3,0,12x,0,5,1,2,1,0,0,0,2,4"; } >"$root/b1.csv"
expect_err "$root/b1.csv" "$root/b1.csv:3: column 6 (pmu_total_cycles): expected an unsigned integer, got '12x'"
{ echo "$PIPE"; echo "0,0,0x10,3,0,1000,0,500,2,4"; } >"$root/b2.csv"
expect_err "$root/b2.csv" "$root/b2.csv:2: expected 16 columns, got 10"
{ echo "$PIPE"; echo "0,0,zz,3,0,1000,0,500,10,200,100,0,0,0,2,4"; } >"$root/b3.csv"
expect_err "$root/b3.csv" "$root/b3.csv:2: column 3 (task_id): expected a 0x-hex or decimal task id, got 'zz'"
echo "a,b,c" >"$root/b4.csv"
expect_err "$root/b4.csv" "$root/b4.csv:1: column 1: expected 'thread_id', got 'a'"
: >"$root/b5.csv"
expect_err "$root/b5.csv" "$root/b5.csv:1: empty file"
{ echo "$PIPE"; echo "0,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; echo "0,0,0x11,3,0,1000,0,500,10,200,100,0,0,0,4,4"; } >"$root/b6.csv"
expect_err "$root/b6.csv" "$root/b6.csv:3: column event_type: mixed event types"
{ echo "$PIPE"; echo "0,0,0x10,3,2,1000,0,500,10,200,100,0,0,0,2,4"; } >"$root/b7.csv"
expect_err "$root/b7.csv" "$root/b7.csv:2: column 5 (core_type): expected 0 (AIC) or 1 (AIV), got '2'"
expect_err "$root/missing.csv" "$root/missing.csv: cannot read: No such file or directory"
# event_type past 32 bits is an error, not cut to 2 (2^32 + 2)
{ echo "$PIPE"; echo "0,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,4294967298,4"; } >"$root/b8.csv"
expect_err "$root/b8.csv" "$root/b8.csv:2: column 15 (event_type): '4294967298' exceeds 32 bits"
# too many columns names the limit
{ printf '%s' "$PIPE"; for i in $(seq 1 250); do printf ',x%d' "$i"; done; echo; } >"$root/b9.csv"
expect_err "$root/b9.csv" "$root/b9.csv:1: too many columns (266; at most 256)"
# another of the run's files (a deps.json, the records): it is JSON
printf '{"tasks": [], "edges": [{"pred": 1, "succ": 2}]}\n' >"$root/deps.json"
expect_err "$root/deps.json" "$root/deps.json:1: not a pmu.csv: it starts with '{', like a JSON file (expected the CSV header 'thread_id,...')"
# JSON after a valid header and rows (files joined by hand): the line it
# starts on is named, not line 1, and the header is not called a non-pmu.csv
{ echo "$PIPE"; echo "0,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; echo '[1, 2]'; } >"$root/b12.csv"
expect_err "$root/b12.csv" "taskprof pmu: $root/b12.csv:3: the line starts with '[', like JSON; expected a data row (thread_id,...: numbers separated by commas)"
# signed columns (spec/pmu.md) hold indices: nothing below 0, and a value
# below INT64_MIN is no integer at all
{ echo "$PIPE"; echo "-9223372036854775808,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; } >"$root/min.csv"
expect_err "$root/min.csv" "$root/min.csv:2: column 1 (thread_id): expected an AICPU thread index >= 0, got '-9223372036854775808'"
{ echo "$PIPE"; echo "0,-1,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; } >"$root/negcore.csv"
expect_err "$root/negcore.csv" "$root/negcore.csv:2: column 2 (core_id): expected a core index >= 0, got '-1'"
{ echo "$PIPE"; echo "-9223372036854775809,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; } >"$root/b10.csv"
expect_err "$root/b10.csv" "$root/b10.csv:2: column 1 (thread_id): expected an integer, got '-9223372036854775809'"
{ echo "$PIPE"; echo "9223372036854775808,0,0x10,3,0,1000,0,500,10,200,100,0,0,0,2,4"; } >"$root/b11.csv"
expect_err "$root/b11.csv" "$root/b11.csv:2: column 1 (thread_id): expected an integer, got '9223372036854775808'"
# Not regular files: a FIFO would block the open, /dev/zero never ends.
mkfifo "$root/fifo.csv"
err=$(timeout 10 "$bin" pmu "$root/fifo.csv" 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 ]] || bad "fifo: exit $rc, want 1 (124 = hung)"
grep -qF "$root/fifo.csv: not a regular file" <<<"$err" || bad "fifo: got: $err"
err=$(timeout 10 "$bin" pmu /dev/zero 2>&1 >/dev/null); rc=$?
[[ $rc -eq 1 ]] || bad "/dev/zero: exit $rc, want 1 (124 = hung)"
grep -qF "/dev/zero: not a regular file" <<<"$err" || bad "/dev/zero: got: $err"
echo "ok: bad CSVs exit 1 with file:line"

# A run folder: its pmu.csv; no argument: the newest outputs/*/pmu.csv.
mkdir -p "$root/cwd/outputs/old" "$root/cwd/outputs/new" "$root/cwd/outputs/none"
cp "$root/pmu.csv" "$root/cwd/outputs/old/pmu.csv"
head -2 "$root/pmu.csv" >"$root/cwd/outputs/new/pmu.csv"
touch -d '2020-01-01' "$root/cwd/outputs/old/pmu.csv"
out=$("$bin" pmu "$root/cwd/outputs/old/" 2>&1) || bad "run folder: exit $?"
has "$out" "$root/cwd/outputs/old/pmu.csv: 5 rows, 2 functions"
out=$(cd "$root/cwd" && "$bin" pmu 2>&1) || bad "no argument: exit $?"
has "$out" "taskprof pmu: using $root/cwd/outputs/new/pmu.csv (the newest outputs/*/pmu.csv)"
has "$out" "$root/cwd/outputs/new/pmu.csv: 1 row, 1 function"
err=$("$bin" pmu "$root/cwd/outputs/none" 2>&1 >/dev/null)
[[ $? -eq 1 ]] || bad "folder without pmu.csv: want exit 1"
has "$err" "taskprof pmu: $root/cwd/outputs/none: a folder without a pmu.csv (a run with --enable-pmu writes one when a task ran on an AICore)"
err=$(cd "$root/cwd/outputs/none" && "$bin" pmu 2>&1 >/dev/null)
[[ $? -eq 1 ]] || bad "no argument, no outputs: want exit 1"
has "$err" "taskprof pmu: no PMU_CSV given and no outputs/*/pmu.csv under $root/cwd/outputs/none/outputs (run with --enable-pmu first, or name the file)"
echo "ok: run folder and the newest run"

# Usage.
err=$("$bin" pmu --bogus x 2>&1 >/dev/null); rc=$?
[[ $rc -eq 2 && $err == "taskprof pmu: unknown option '--bogus' (see --help)" ]] ||
	bad "unknown option: exit $rc, want 2 and one line: $err"
# "--" ends the options, as in the other commands
out=$("$bin" pmu -- "$root/pmu.csv") || bad "pmu -- FILE exited $?"
has "$out" "$root/pmu.csv: 5 rows, 2 functions"
"$bin" pmu --help | grep -q "usage: taskprof pmu" || bad "--help"
"$bin" --help | grep -q "^  pmu " || bad "pmu not listed in taskprof --help"
echo "ok: usage"
exit $fail
