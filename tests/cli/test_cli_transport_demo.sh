#!/usr/bin/env bash
# tests/cli/test_cli_transport_demo.sh — `taskprof transport-demo` options
# and summary.txt:
#  - --producers is bounded by the platform's AICPU threads (4 on a2a3sim,
#    7 on a5sim), whichever order -t and -p come in, and the usage error
#    says that range (not the transport's 16);
#  - summary.txt lists every drop cause, the device's and the host's, and
#    they sum to its `dropped`.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" || exit 1
bin=${1:?usage: $0 path/to/taskprof}
cli_init "${TMPDIR:-/tmp}/tp_cli_transport_demo_XXXXXX"

# usage ARGS... WANT: exit 2 and the one stderr line WANT
usage() {
	local want=${*: -1} err code
	err=$("$bin" transport-demo "${@:1:$#-1}" -o "$root/u" 2>&1 >/dev/null)
	code=$?
	[[ $code -eq 2 ]] || bad "transport-demo ${*:1:$#-1}: exit $code, expected 2"
	[[ $err == "$want" ]] || bad "transport-demo ${*:1:$#-1}: stderr '$err', expected '$want'"
}
p="taskprof transport-demo: --producers expects an integer from"
usage -t 0 "$p 1 to 4 (the AICPU threads of a2a3sim), got '0'"
usage -t 5 "$p 1 to 4 (the AICPU threads of a2a3sim), got '5'"
usage -t 16 "$p 1 to 4 (the AICPU threads of a2a3sim), got '16'"
usage -t x "$p 1 to 4 (the AICPU threads of a2a3sim), got 'x'"
usage -p a5sim -t 0 "$p 1 to 7 (the AICPU threads of a5sim), got '0'"
usage -t 8 -p a5sim "$p 1 to 7 (the AICPU threads of a5sim), got '8'"
[[ -z $(ls -A "$root/u" 2>/dev/null) ]] || bad "a usage error left $(ls -A "$root/u")"

# The platform's maximum is accepted, -t before -p too.
for args in "-t 4" "-t 7 -p a5sim"; do
	# shellcheck disable=SC2086
	out=$("$bin" transport-demo $args -n 2000 -o "$root/ok" 2>"$root/err") ||
		bad "transport-demo $args: exit $?: $(cat "$root/err")"
	grep -q "^reconcile: collected=.* OK$" <<<"$out" || bad "transport-demo $args: $out"
done

# summary.txt: every cause, device and host, summing to dropped.
for s in "$root"/ok/transport_demo_*/summary.txt; do
	for k in dropped_no_buffer dropped_ready_full dropped_flush_failed dropped_invalid \
		host_lost_bad_entry host_lost_unmapped host_lost_copy_failed host_lost_shard_full \
		host_lost_collector; do
		grep -qE "^$k [0-9]+$" "$s" || bad "$s: no '$k N' line"
	done
	sum=$(awk '/^(dropped_|host_lost_)/ { n += $2 } END { print n + 0 }' "$s")
	dropped=$(awk '$1 == "dropped" { print $2 }' "$s")
	[[ $sum == "$dropped" ]] || bad "$s: causes sum to $sum, dropped is $dropped"
done
[[ $(ls -d "$root"/ok/transport_demo_* 2>/dev/null | wc -l) -eq 2 ]] || bad "expected 2 run folders"

# A full disk: summary.txt cannot be written. All or nothing: exit 1, the
# message, and no half-written run folder (nor the -o folders it made).
# Needs root for the tmpfs mount (CI runs as root).
sm=$root/small
mkdir -p "$sm"
if [[ $(id -u) -eq 0 ]] && mount -t tmpfs -o size=4k tmpfs "$sm" 2>/dev/null; then
	"$bin" transport-demo -n 1000 --instances 4 -o "$sm/x/y" >/dev/null 2>"$root/err"
	code=$?
	left=$(find "$sm" -mindepth 1)
	if [[ $code -eq 1 ]] && grep -q "^taskprof transport-demo: cannot write outputs: $sm/x/y/transport_demo_[0-9_]*/summary.txt: .*No space left on device$" "$root/err" &&
		[[ -z $left ]]; then
		echo "ok: full disk: exit 1, the message, nothing left"
	else
		bad "full disk: exit $code, left: $left; $(cat "$root/err")"
	fi
	umount "$sm"
else
	echo "skipped: full disk (needs root and a tmpfs mount)"
fi

[[ $fail -eq 0 ]] && echo "PASS test_cli_transport_demo"
exit $fail
