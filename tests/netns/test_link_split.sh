#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic link` with the devices and the cable in a server process
# (docs/ARCHITECTURE.md section 11): forked for the run (--split), then a
# standing `vnic server --listen` this script starts (--server PATH).
#
#   netns $NA                 vnic link (this process)            netns $NB
#   vnic0 (TAP) - driver A - client hv A    client hv B - driver B - vnic0 (TAP)
#                               |  shared memory, eventfds  |
#                     server process: device A == cable == device B
#
# Checks, in each mode: ping both ways (IPv4 and IPv6, 56 B and 1400 B),
# iperf3 TCP both ways, a 64 MiB transfer each way whose sha256 matches at
# the other end; `vnic stats` shows the server's counters under the usual
# names (the cable's frames); `vnic set` of a driver policy is applied live
# and of a device setting refused with one clear line; SIGINT ends the link
# with status 0, its server process (or the standing server's child) ends
# too, and nothing is left behind. --split also: `vnic set NAME mtu 9000`
# carries 8000 B pings afterwards (the forked server's cable takes jumbo
# frames). --server also: `vnic set NAME mtu` refused (the standing server's
# cable is sized to the MTU at the start), and with no server listening one
# line, exit status 1 and nothing left. --split: the server killed with
# SIGKILL stops the link with one line and status 1, and the link killed
# with SIGKILL ends its server. --server: the standing server's child killed
# with SIGKILL, the link reconnects (the parent forks it another) and
# carries pings again (tests/netns/test_link_restart.sh restarts the whole
# server under a transfer).
#
# Usage: test_link_split.sh PATH/TO/vnic    (root; exit 77 = skipped)

set -u

VNIC=${1:?usage: test_link_split.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip ping iperf3 python3
[ -x "$VNIC" ] || { echo "FAIL: $VNIC is not executable"; exit 1; }
WORK=$(mktemp -d /tmp/vnic-linksplit.XXXXXX)
LOG=$WORK/log

NA=vls-a-$$
NB=vls-b-$$
NAME=vls-$$
SOCK=$WORK/server.sock
LINK_PID=
SRV_PID=

cleanup() {
	stop_servers
	if [ -n "$LINK_PID" ]; then
		kill -INT "$LINK_PID" 2>/dev/null
		wait "$LINK_PID" 2>/dev/null
	fi
	if [ -n "$SRV_PID" ]; then
		kill -TERM "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
	fi
	for n in "$NA" "$NB"; do
		ip netns del "$n" 2>/dev/null
	done
	if [ "$nfail" -eq 0 ]; then
		rm -rf "$WORK"
	else
		echo "logs kept in $WORK"
	fi
}
trap cleanup EXIT

# up NAME FLAGS...: start_link, its PASS or FAIL line, and its status (the
# checks that need the link run only when it is up).
up() {
	local name=$1
	shift
	echo "--- $name: start_link $*" >>"$LOG"
	if start_link "$@" >>"$LOG" 2>&1; then
		pass "$name"
		return 0
	fi
	fail "$name (see $LOG)"
	return 1
}

# start_link FLAGS...: vnic link in the background; waits until it is up.
start_link() {
	: >"$WORK/link.out"
	"$VNIC" link --name "$NAME" --new-ns-a "$NA" --new-ns-b "$NB" --quiet "$@" \
		>"$WORK/link.out" 2>&1 &
	LINK_PID=$!
	wait_link_up "$LINK_PID" "$WORK/link.out"
}


pings() { # FROM TO4 TO6
	ip netns exec "$1" ping -c 3 -i 0.2 -W 2 "$2" &&
		ip netns exec "$1" ping -c 2 -i 0.2 -W 2 -s 1400 "$2" &&
		ip netns exec "$1" ping -c 2 -i 0.2 -W 2 "$3"
}

# The counter $1 of the link (vnic stats), which must be above 0.
counter_positive() {
	local v
	v=$("$VNIC" stats "$NAME" | awk -v k="$1" '$1 == k { print $2 }')
	echo "$1 = ${v:-absent}"
	[ -n "$v" ] && [ "$v" -gt 0 ]
}

# vnic set of a driver policy: applied; of a device setting: one error line naming the server.
live_set() {
	local out
	"$VNIC" set "$NAME" tx-submit indirect | grep -q "^ok" || return 1
	"$VNIC" show "$NAME" | grep -E "^  tx-submit +indirect" || return 1
	out=$("$VNIC" set "$NAME" rx-usecs 10 2>&1)
	echo "$out"
	[ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "server process"
}

jumbo() {
	"$VNIC" set "$NAME" mtu 9000 | grep -q "^ok" || return 1
	ip netns exec "$NA" ping -c 3 -i 0.2 -W 2 -s 8000 10.99.0.2
}

mtu_fixed() {
	local out
	out=$("$VNIC" set "$NAME" mtu 9000 2>&1)
	echo "$out"
	echo "$out" | grep -q "^error: mtu cannot change while running here" &&
		ip -n "$NA" -o link show vnic0 | grep -q " mtu 1500 "
}

# One line, status 1, and the namespaces made for the run removed again.
no_server() {
	local out rc
	out=$(timeout 20 "$VNIC" link --new-ns-a "$NA" --new-ns-b "$NB" --server "$WORK/none.sock" 2>&1)
	rc=$?
	echo "$out (exit $rc)"
	[ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "connect" &&
		nothing_left
}

# traffic MODE: the checks both modes share, on a link that is up.
traffic() {
	local m=$1
	check "$m: ping a -> b (IPv4 56 B, 1400 B, IPv6)" pings "$NA" 10.99.0.2 fd00:99::2
	check "$m: ping b -> a" pings "$NB" 10.99.0.1 fd00:99::1
	server "$NB" iperf3 -s -p 5201
	wait_port "$NB" 5201
	check "$m: iperf3 TCP a -> b" iperf_tcp "$NA" 10.99.0.2
	check "$m: iperf3 TCP b -> a (-R)" iperf_tcp "$NA" 10.99.0.2 -R
	stop_servers
	check "$m: 64 MiB a -> b, sha256 matches" transfer "$NA" "$NB" 10.99.0.2 5301
	check "$m: 64 MiB b -> a, sha256 matches" transfer "$NB" "$NA" 10.99.0.1 5302
	check "$m: the server's counters under the usual names (cable.ab_tx_frames)" \
		counter_positive cable.ab_tx_frames
	check "$m: the server's device counters (dev_b.rx0_frames)" counter_positive dev_b.rx0_frames
	check "$m: vnic set: a driver policy live, a device setting refused" live_set
}

# The server (pid $1) killed with SIGKILL: the link stops by itself, one
# line saying so, status 1, and nothing left.
server_killed() {
	local rc
	kill -KILL "$1" || return 1
	# a hang guard: the link notices within its next wait (a second)
	timeout 20 tail --pid="$LINK_PID" -f /dev/null
	wait "$LINK_PID"
	rc=$?
	LINK_PID=
	cat "$WORK/link.out"
	echo "exit status $rc"
	[ $rc -eq 1 ] && grep -q "is gone (its socket closed): stopping" "$WORK/link.out" &&
		nothing_left
}

# The standing server's child (pid $1) killed with SIGKILL: the link stays,
# its drivers reset and it reconnects to a new child (a hang guard of 10 s on
# the counter), then pings get through again.
child_killed() {
	local i
	kill -KILL "$1" || return 1
	for i in $(seq 100); do
		[ "$("$VNIC" stats "$NAME" | awk '$1 == "split.reconnects" { print $2 }')" = 1 ] && break
		sleep 0.1
	done
	"$VNIC" stats "$NAME" | grep -E "^(split\.|drv_a\.resets_xport)"
	kill -0 "$LINK_PID" && counter_positive split.reconnects && counter_positive drv_a.resets_xport &&
		ip netns exec "$NA" ping -c 3 -i 0.2 -W 3 10.99.0.2
}

# The link killed with SIGKILL: its forked server (pid $1) sees the socket
# close and ends within 5 s (a hang guard). The namespaces stay (kill -9).
link_killed() {
	local i
	kill -KILL "$LINK_PID"
	wait "$LINK_PID" 2>/dev/null
	LINK_PID=
	for i in $(seq 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	ip netns del "$NA"
	ip netns del "$NB"
	# gone, or a zombie its new parent has not reaped yet
	! kill -0 "$1" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$1/stat")" = Z ]
}

# The first child of pid $1, from /proc (vnic's name has no space in it).
child_of() {
	local f pid ppid
	for f in /proc/[0-9]*/stat; do
		read -r pid _ _ ppid _ <"$f" 2>/dev/null || continue
		[ "$ppid" = "$1" ] && { echo "$pid"; return 0; }
	done
	return 1
}

nothing_left() {
	local n
	for n in "$NA" "$NB"; do
		ip netns list | grep -qw "$n" && { echo "namespace $n left"; return 1; }
	done
	return 0
}

echo "vnic: $VNIC; logs: $LOG"
make_blob 64

# ---------------------------------------------------------------- --split
if up "split: up" --split; then
	SPID=$(sed -n 's/.*run in server process \([0-9]*\)$/\1/p' "$WORK/link.out")
	echo "server process: ${SPID:-none}" >>"$LOG"
	check "split: a server process of its own" test -n "$SPID" -a "$SPID" != "$LINK_PID"
	traffic split
	check "split: vnic set mtu 9000, then 8000 B pings" jumbo
	check "split: SIGINT: exit 0 with the report" stop_link_reported
	check "split: the server process ended with the link" bash -c "! kill -0 ${SPID:-0} 2>/dev/null"
	check "split: nothing left" nothing_left
fi
if up "split: up again" --split; then
	SPID=$(sed -n 's/.*run in server process \([0-9]*\)$/\1/p' "$WORK/link.out")
	check "split: the server killed: the link stops, one line, status 1" server_killed "${SPID:-0}"
fi
if up "split: up once more" --split; then
	SPID=$(sed -n 's/.*run in server process \([0-9]*\)$/\1/p' "$WORK/link.out")
	check "split: the link killed (SIGKILL): its server ends" link_killed "${SPID:-0}"
fi

# ---------------------------------------------------------------- --server PATH
check "server: none listening: one line, exit 1, nothing left" no_server
"$VNIC" server --listen "$SOCK" --name "vls-srv-$$" >>"$LOG" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do
	[ -S "$SOCK" ] && break
	sleep 0.05
done
if up "server: up" --server "$SOCK"; then
	traffic server
	check "server: vnic set mtu refused (the standing server's cable is sized at the start)" \
		mtu_fixed
	check "server: SIGINT: exit 0 with the report" stop_link_reported
	check "server: nothing left" nothing_left
	# the standing server counted one client, ended normally, and serves none now
	sleep 0.5
	"$VNIC" stats "vls-srv-$$" >>"$LOG" 2>&1
	check "server: one client, ended normally" bash -c "'$VNIC' stats 'vls-srv-$$' |
		awk '\$1 == \"server.ended\" { e = \$2 } \$1 == \"server.ended_abnormal\" { a = \$2 }
		     \$1 == \"server.active\" { n = \$2 } END { exit !(e == 1 && a == 0 && n == 0) }'"
fi
if up "server: up again" --server "$SOCK"; then
	CPID=$(child_of "$SRV_PID")
	echo "the standing server's child: ${CPID:-none}" >>"$LOG"
	check "server: its child killed: the link reconnects and pings again" child_killed "${CPID:-0}"
	check "server: SIGINT after the reconnect: exit 0 with the report" stop_link_reported
	sleep 0.5
	check "server: the killed child counted as an abnormal end" bash -c "'$VNIC' stats 'vls-srv-$$' |
		awk '\$1 == \"server.ended_abnormal\" { a = \$2 } END { exit !(a == 1) }'"
fi
kill -TERM "$SRV_PID"
check "server: SIGTERM: exit 0" wait "$SRV_PID"
SRV_PID=

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
