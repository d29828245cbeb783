#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A standing server restarted under its clients (docs/ARCHITECTURE.md
# section 11, "A server restart"): what a PowerVM LPAR sees when its VIOS
# restarts.
#
#   vnic bench stream --server S --+              server 1 --kill -9--> gone, its children too
#   vnic bench stream --server S --+-- S (0600) --+
#   vnic bench rr     --server S --+              server 2 (started on S) <-- each client again:
#                                                   connect, settings, the same memory
#
# Checks: each client sees its server go (split.lost), its drivers reset for
# the transport event (drv_X.resets_xport) and log in again (reset_done), it
# reconnects (split.reconnects), and it ends with status 0, no payload error,
# its pools full and, for the streams, every byte; the new server took all
# three. A client whose server never comes back exits 1 with one line
# within --reconnect-timeout and the 5 s an attempt may take, never hangs.
#
# Usage: test_restart.sh PATH/TO/vnic   (no root needed)
set -u

VNIC=${1:?usage: test_restart.sh PATH/TO/vnic}
D=$(mktemp -d)
S=$D/s.sock
PIDS=()
FAILS=0

cleanup() {
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/server_lib.sh"

# Each client serves its control socket (vnic stats) in the scratch folder.
export XDG_RUNTIME_DIR=$D/run
mkdir -p "$XDG_RUNTIME_DIR"

# flowing NAME: client NAME's drivers both received bytes: it attached, its
# drivers logged in and its workload runs, both ways.
flowing() {
	"$VNIC" stats "$1" 2>/dev/null | awk '
		$1 ~ /^drv_a\.rx[0-9]+_bytes$/ { a += $2 }
		$1 ~ /^drv_b\.rx[0-9]+_bytes$/ { b += $2 }
		END { exit !(a > 0 && b > 0) }'
}

# wait_flowing NAME...: up to 30 s (a hang guard) for each to be flowing.
wait_flowing() {
	local n

	for n in "$@"; do
		for _ in $(seq 300); do
			flowing "$n" && continue 2
			sleep 0.1
		done
		return 1
	done
}

# wait_children PID N: up to 20 s for N children of PID (one per client it serves).
wait_children() {
	for _ in $(seq 200); do
		[ "$(pgrep -P "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# at_least FILE KEY MIN: the counter KEY is there and at least MIN.
at_least() {
	local v

	v=$(json_u64 "$1" "$2")
	[ -n "$v" ] && [ "$v" -ge "$3" ]
}

# check_client NAME FILE RC [BYTES]
check_client() {
	local name=$1 f=$2 rc=$3 want=${4:-} side lost rec

	if [ "$rc" != 0 ]; then
		fail "$name: exit status $rc: $(tail -2 "$f.err")"
		return
	fi
	lost=$(json_u64 "$f" split.lost)
	rec=$(json_u64 "$f" split.reconnects)
	if [ "${lost:-0}" -lt 1 ] || [ "$rec" != "$lost" ]; then
		fail "$name: split.lost ${lost:-none}, split.reconnects ${rec:-none}"
		return
	fi
	for side in a b; do
		if ! at_least "$f" "drv_$side.resets_xport" 1 || ! at_least "$f" "drv_$side.reset_done" 1 ||
			! at_least "$f" "hv_$side.split_partner_lost" 1; then
			fail "$name: driver $side: resets_xport $(json_u64 "$f" "drv_$side.resets_xport")," \
				"reset_done $(json_u64 "$f" "drv_$side.reset_done")," \
				"split_partner_lost $(json_u64 "$f" "hv_$side.split_partner_lost")"
			return
		fi
	done
	if [ "$(json_u64 "$f" payload)" != 0 ]; then
		fail "$name: payload errors $(json_u64 "$f" payload)"
		return
	fi
	if ! grep -q '"pools_full": true' "$f"; then
		fail "$name: the pools are not full after the run"
		return
	fi
	if [ -n "$want" ] && [ "$(json_u64 "$f" bytes)" != "$want" ]; then
		fail "$name: $(json_u64 "$f" bytes) bytes of $want"
		return
	fi
	ok "$name: lost its server $lost time(s), reset and logged in again, reconnected after" \
		"$(($(json_u64 "$f" split.down_ns) / 1000000)) ms, 0 payload errors${want:+, all $want bytes}"
}

# --- a restart under three clients --------------------------------------------------------
"$VNIC" server --listen "$S" --no-ctl --quiet 2>"$D/s1.log" &
S1=$!
PIDS+=($S1)
wait_file "$S" || { echo "FAIL: the server made no socket: $(cat "$D/s1.log")"; exit 1; }

# No client may end before the kill, however slowly the machine runs them.
# The cable's rate is a floor under a stream's time in wall-clock time (a
# frame leaves no earlier than its bits take at the rate: a starved client
# only takes longer), so 30 MB at 30 Mbit/s last LAST_S at least from
# their first frame; the rr runs LAST_S from its traffic's start. The kill
# waits for traffic both ways in every client, not for a time (a kill
# during a client's first bring-up is a failed start, not a restart under
# it), and comes at once then: no client can be done unless another took
# LAST_S longer than it to start. The time from the clients' start to the
# kill is printed, for a client that was done all the same.
SIZE=30000000
LAST_S=8
T0=$(date +%s%N)
cpids=()
for i in 1 2; do
	nice "$VNIC" bench stream --server "$S" --size $SIZE --rate 30M --duration 120 \
		--json --name st$i --quiet >"$D/st$i" 2>"$D/st$i.err" &
	cpids+=($!)
done
nice "$VNIC" bench rr --server "$S" --sessions 2 --duration $LAST_S --json --name rr --quiet \
	>"$D/rr" 2>"$D/rr.err" &
cpids+=($!)
PIDS+=("${cpids[@]}")
wait_children $S1 3 || fail "server 1 serves $(pgrep -P $S1 | wc -l) clients, want 3"
wait_flowing st1 st2 rr || fail "the clients' traffic did not start within 30 s"
kill -KILL $S1
echo "the kill: $((($(date +%s%N) - T0) / 1000000)) ms after the clients' start"
wait $S1 2>/dev/null
sleep 0.5
"$VNIC" server --listen "$S" --no-ctl 2>"$D/s2.log" &
S2=$!
PIDS+=($S2)
names=(st1 st2 rr)
for k in "${!cpids[@]}"; do
	wait "${cpids[$k]}"
	rc=$?
	n=${names[$k]}
	case $n in
	rr) check_client "$n" "$D/$n" $rc ;;
	*) check_client "$n" "$D/$n" $rc $SIZE ;;
	esac
done
kill -TERM $S2
wait $S2
grep -q "3 accepted, .* 3 ended, 0 ended abnormally" "$D/s2.log" &&
	ok "server 2 took the three clients, each ended normally" ||
	fail "server 2's counts: $(tail -1 "$D/s2.log")"

# --- a server that never comes back: one line, status 1, in time ---------------------------
G=$D/g.sock
"$VNIC" server --listen "$G" --no-ctl --quiet 2>"$D/g.log" &
GS=$!
PIDS+=($GS)
wait_file "$G" || fail "the second server made no socket: $(cat "$D/g.log")"
"$VNIC" bench rr --server "$G" --duration 60 --reconnect-timeout 2 --json --name g --quiet \
	>"$D/g.out" 2>"$D/g.err" &
GC=$!
PIDS+=($GC)
wait_children $GS 1 || fail "the second server serves no client"
wait_flowing g || fail "the client's traffic did not start within 30 s"
kill -KILL $GS
wait $GS 2>/dev/null
start=$(date +%s%N)
wait $GC
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
lines=$(wc -l <"$D/g.err")
if [ $rc != 1 ]; then
	fail "a server gone for good: exit status $rc, want 1: $(cat "$D/g.err")"
elif [ "$lines" != 1 ] || ! grep -q "was not back within 2 s" "$D/g.err"; then
	fail "a server gone for good: want one line, got: $(cat "$D/g.err")"
elif [ $took -gt 9000 ]; then
	fail "a server gone for good: the client took $took ms to give up (2 s, and 5 s an attempt)"
else
	ok "a server gone for good: status 1 after $took ms: $(cat "$D/g.err")"
fi

[ $FAILS = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo "all checks passed"
