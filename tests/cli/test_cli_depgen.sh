#!/usr/bin/env bash
# CLI test of `taskprof run --enable-dep-gen`: the run prints where deps.json
# and the name map are, both files are there (compact deps.json with a
# trailing newline), only the first of several rounds records, no flag means
# no file, and the three workflows of seed 002 §3.5 (paired, split,
# low-distortion) give the converter the same graph.
# usage: test_cli_depgen.sh TASKPROF_BINARY
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=$1
cli_init /tmp/tp_cli_depgen_XXXXXX

# Run folder of the last run printed in $1 (the "outputs:" line).
folder() { sed -n 's|^outputs: \(.*\)/result.txt$|\1|p' <<<"$1"; }

# CaseSmall1's graph: 12 tasks, 24 creator edges (from its alloc_tensors
# tasks) and up to 8 tensor-map edges. Edges are recorded as the runtime
# derives them at submit (docs/dep_gen.md): a producer that already
# retired (completed and reclaimed before its consumer was submitted, as
# happens on a slow build such as TSan's) gives no edge, so fewer than 8
# tensor-map edges is valid. check_graph LINE FILE: the line's counts, and
# the file agrees with them.
check_graph() {
	local n p
	n=$(sed -n 's/.*(12 tasks, \([0-9]*\) edges[,)].*/\1/p' <<<"$1")
	[[ -n $n ]] || { bad "no '(12 tasks, N edges)': $1"; return; }
	# the distinct producer-consumer pairs, when there are fewer than edges
	p=$(sed -n 's/.* edges, \([0-9]*\) producer-consumer pairs).*/\1/p' <<<"$1")
	python3 - "$2" "$n" "${p:-$n}" <<'PY' || bad "graph of $2 does not match '$n edges, ${p:-$n} pairs'"
import collections, json, sys
d = json.load(open(sys.argv[1]))
n, p = int(sys.argv[2]), int(sys.argv[3])
kinds = collections.Counter(e["source"] for e in d["edges"])
pairs = len({(e["pred"], e["succ"]) for e in d["edges"]})
ok = (len(d["tasks"]) == 12 and len(d["edges"]) == n and kinds["creator"] == 24
      and 0 <= kinds["tensormap"] <= 8 and set(kinds) <= {"creator", "tensormap"}
      and pairs == p and p < n)
if not ok:
    print(len(d["tasks"]), len(d["edges"]), pairs, dict(kinds), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

out=$("$bin" run paged_attention --enable-dep-gen -o "$root/a" 2>/dev/null) || bad "run failed"
dir=$(folder "$out")
grep -qF "dep_gen: $dir/deps.json (12 tasks, " <<<"$out" || bad "no dep_gen line: $out"
check_graph "$out" "$dir/deps.json"
grep -qF "name map: $dir/name_map_paged_attention_CaseSmall1.json" <<<"$out" ||
	bad "no name map line: $out"
[[ -s $dir/deps.json ]] || bad "no $dir/deps.json"
# Compact: one line, ends with a newline, starts with the tasks key.
[[ $(wc -l <"$dir/deps.json") -eq 1 ]] || bad "deps.json is not one line"
[[ $(head -c 10 "$dir/deps.json") == '{"tasks":[' ]] || bad "deps.json does not start with tasks"
[[ $(tail -c 1 "$dir/deps.json" | od -An -c | tr -d ' ') == '\n' ]] || bad "no trailing newline"
echo "ok: paged_attention --enable-dep-gen -> $dir/deps.json"

# Rounds: only the first records; the graph is the same.
out=$("$bin" run paged_attention --enable-dep-gen --rounds 3 -o "$root/b" 2>/dev/null) ||
	bad "rounds run failed"
check_graph "$out" "$(folder "$out")/deps.json"
grep -qxF "  (deps.json below: round 1 of 3 only; the result line gives the last round's figures)" <<<"$out" ||
	bad "rounds: no line saying deps.json is round 1's: $out"
echo "ok: --rounds 3 records the first round"

# No flag: no deps.json, no name map.
out=$("$bin" run paged_attention -o "$root/c" 2>/dev/null) || bad "plain run failed"
d2=$(folder "$out")
[[ ! -e $d2/deps.json ]] || bad "deps.json without --enable-dep-gen"
ls "$d2"/name_map_*.json >/dev/null 2>&1 && bad "name map without a collector"
grep -q "dep_gen" <<<"$out" && bad "dep_gen line without the flag"
echo "ok: no flag, no deps.json"

# Both runtimes and platforms.
for p in a2a3sim a5sim; do
	for rt in tensormap_and_ringbuffer host_build_graph; do
		out=$("$bin" run synthetic --enable-dep-gen -p "$p" --runtime "$rt" -o "$root/s" \
			2>/dev/null) || bad "synthetic $p $rt failed"
		grep -qF "(1530 tasks," <<<"$out" || bad "synthetic $p $rt: $out"
	done
done
echo "ok: synthetic on both platforms and runtimes"

# Workflows (seed 002 §3.5), when the swimlane collector is built in.
if "$bin" run --help | grep -q -- --enable-l2-swimlane; then
	flows() { python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"] if isinstance(t, dict) else t
print(sum(1 for e in ev if e.get("ph") == "s" and e.get("name") == "dependency"))' "$1"; }
	# Paired: one run, both flags.
	out=$("$bin" run paged_attention --enable-dep-gen --enable-l2-swimlane -o "$root/p" \
		2>/dev/null) || bad "paired run failed"
	pd=$(folder "$out")
	paired=$(flows "$pd/merged_swimlane.json")
	[[ $paired -gt 0 ]] || bad "paired: no dependency flows"
	# Split / low-distortion: a swimlane run at level 1 without dep_gen, then
	# the dep_gen run's deps.json joined offline.
	out=$("$bin" run paged_attention --enable-l2-swimlane 1 -o "$root/l" 2>/dev/null) ||
		bad "low-distortion run failed"
	ld=$(folder "$out")
	[[ -e $ld/deps.json ]] && bad "swimlane-only run wrote deps.json"
	"$bin" swimlane "$ld/l2_swimlane_records.json" --deps-json "$dir/deps.json" \
		-o "$root/joined.json" >/dev/null 2>&1 || bad "offline join failed"
	joined=$(flows "$root/joined.json")
	[[ $joined -gt 0 ]] || bad "offline join: no dependency flows"
	echo "ok: paired ($paired flows) and split ($joined flows) workflows"
fi

exit $fail
