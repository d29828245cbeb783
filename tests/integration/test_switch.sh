#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic server --switch`: every client's two devices are ports of one
# learning switch in shared memory (docs/ARCHITECTURE.md section 11):
#
#   vnic bench rr     --server S ---+                 +-- child 1: devices on ports 0, 1 --+
#   vnic bench rr     --server S ---+-- S (0600) -->  +-- child 2: devices on ports 2, 3 --+-- the switch
#   vnic bench stream --server S ---+  vnic server    +-- ...                             --+   (memfd made
#   vnic bench stream --server S ---+  --switch       +-- child of the victim (SIGKILL)  --+    before the forks)
#
# Checks: four clients at once (two rr, two stream --size N) each end with
# status 0, no payload error and, for streams, every byte; their devices
# have distinct MACs, so the frames flooded before the switch learned a
# station reach the other clients' devices, which filter them and count
# them (dev_*.rx_filtered), and the switch counts the floods
# (switch_*.flooded); a client's child killed with SIGKILL while four
# others stream leaves them every byte, and the parent releases its ports
# (switch.ports_released, switch.macs_forgotten); a client asking for an
# MTU the switch does not carry is refused with one line; SIGTERM ends the
# server with status 0.
#
# Usage: test_switch.sh PATH/TO/vnic   (no root needed)
set -u

VNIC=${1:?usage: test_switch.sh PATH/TO/vnic}
D=$(mktemp -d)
S=$D/s.sock
NAME=test-switch-$$
SP=
FAILS=0

cleanup() {
	[ -n "$SP" ] && kill -TERM "$SP" 2>/dev/null && wait "$SP" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/server_lib.sh"

# json_sum FILE KEY...: the sum of the keys' values (an absent one counts 0).
json_sum() {
	local f=$1 sum=0 v

	shift
	for k in "$@"; do
		v=$(json_u64 "$f" "$k")
		sum=$((sum + ${v:-0}))
	done
	echo $sum
}

# wait_stat NAME VALUE: up to 10 s for a server counter to reach VALUE.
wait_stat() {
	for _ in $(seq 100); do
		[ "$(stat_of "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

"$VNIC" server --listen "$S" --switch --name "$NAME" --max-clients 6 2>"$D/server.log" &
SP=$!
for _ in $(seq 50); do
	[ -S "$S" ] && break
	sleep 0.1
done
[ -S "$S" ] || { echo "FAIL: the server made no socket: $(cat "$D/server.log")"; exit 1; }

# --- four clients at once on one switch ----------------------------------------------------
SIZE=20000000
pids=()
for i in 1 2; do
	nice "$VNIC" bench rr --server "$S" --duration 1 --sessions 2 --json --no-ctl \
		>"$D/rr$i" 2>"$D/rr$i.err" &
	pids+=($!)
done
for i in 1 2; do
	nice "$VNIC" bench stream --server "$S" --size $SIZE --duration 120 --json --no-ctl \
		>"$D/st$i" 2>"$D/st$i.err" &
	pids+=($!)
done
names=(rr1 rr2 st1 st2)
filtered=0
flooded=0
for k in "${!pids[@]}"; do
	wait "${pids[$k]}"
	rc=$?
	n=${names[$k]}
	case $n in
	rr*) check_client "4 at once: $n" "$D/$n" $rc ;;
	*) check_client "4 at once: $n" "$D/$n" $rc $SIZE ;;
	esac
	filtered=$((filtered + $(json_sum "$D/$n" dev_a.rx_filtered dev_b.rx_filtered)))
	flooded=$((flooded + $(json_sum "$D/$n" switch_a.flooded switch_b.flooded)))
	bad=$(json_sum "$D/$n" switch_a.rx_bad_len switch_b.rx_bad_len switch_a.rx_bad_index \
		switch_b.rx_bad_index switch_a.drop_mtu switch_b.drop_mtu)
	[ "$bad" = 0 ] || fail "$n: $bad frames of bad length or index on the switch"
done
# Each client's first frames go to a MAC nobody has learned yet: flooded to
# every port in use, where other clients' devices leave them.
[ "$flooded" -gt 0 ] && ok "the switch flooded $flooded frames to unknown stations" ||
	fail "no frame flooded (switch_*.flooded)"
[ "$filtered" -gt 0 ] && ok "the devices filtered $filtered frames for other stations" ||
	fail "no frame filtered (dev_*.rx_filtered)"

# --- a child killed with SIGKILL while four stream -------------------------------------------
"$VNIC" bench stream --server "$S" --duration 120 --json --no-ctl >"$D/victim" 2>"$D/victim.err" &
VP=$!
wait_stat server.accepted 5 || fail "the victim was not accepted"
vchild=$(sed -n 's/^vnic server: client 5 .* in child \([0-9]*\)$/\1/p' "$D/server.log")
KSIZE=200000000
pids=()
for i in 1 2 3 4; do
	nice "$VNIC" bench stream --server "$S" --size $KSIZE --duration 120 --json --no-ctl \
		>"$D/kst$i" 2>"$D/kst$i.err" &
	pids+=($!)
done
wait_stat server.active 5 || fail "not five clients at once: $(stat_of server.active)"
# the four are streaming: their frames and the victim's share the switch
sleep 0.5
released=$(stat_of switch.ports_released)
if [ -n "$vchild" ]; then
	kill -KILL "$vchild"
else
	fail "no child for the victim in the server's log"
fi
kill -KILL $VP 2>/dev/null
wait $VP 2>/dev/null
for i in 1 2 3 4; do
	wait "${pids[$((i - 1))]}"
	check_client "beside a killed child: stream $i" "$D/kst$i" $? $KSIZE
done
wait_stat switch.ports_released $((released + 2)) &&
	ok "the killed child's two ports were released" ||
	fail "switch.ports_released $(stat_of switch.ports_released), want $((released + 2))"
[ "$(stat_of server.ended_abnormal)" -ge 1 ] && ok "the server counted the abnormal end" ||
	fail "server.ended_abnormal is 0"
[ "$(stat_of switch.macs_forgotten)" -gt 0 ] && ok "ended clients' MACs forgotten" ||
	fail "switch.macs_forgotten is 0"
kill -0 $SP 2>/dev/null && ok "the server is still up" || fail "the server is gone"

# --- a client comes back on the freed ports --------------------------------------------------
"$VNIC" bench rr --server "$S" --duration 0.3 --json --no-ctl >"$D/again" 2>"$D/again.err"
check_client "a client attaches again" "$D/again" $?

# --- an MTU the switch does not carry: one line, status 1 ---------------------------------------
timeout 30 "$VNIC" bench rr --server "$S" --mtu 9000 --duration 0.3 --no-ctl \
	>"$D/mtu.out" 2>"$D/mtu.err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$D/mtu.err")" = 1 ] && grep -q "refused the settings" "$D/mtu.err"; then
	ok "--mtu 9000 refused: $(cat "$D/mtu.err")"
else
	fail "--mtu 9000: status $rc, want 1 and one line: $(cat "$D/mtu.err")"
fi

# --- SIGTERM ---------------------------------------------------------------------------------
kill -TERM $SP
wait $SP
rc=$?
SP=
[ $rc = 0 ] && ok "the server exits 0 on SIGTERM" || fail "the server exited $rc on SIGTERM"
grep -q "vnic server: switch: [0-9]* MACs forgotten" "$D/server.log" &&
	ok "the switch's counts at exit" || fail "no switch counts at exit: $(tail -2 "$D/server.log")"

[ $FAILS = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo "all checks passed"
