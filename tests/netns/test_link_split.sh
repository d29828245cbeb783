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
netns_setup linksplit
NA=vls-a-$$
NB=vls-b-$$
NAME=vls-$$
SOCK=$WORK/server.sock
track_ns "$NA" "$NB"

pings() { # FROM TO4 TO6
	nsping "$1" "$2" && nsping "$1" "$2" -c 2 -s 1400 && nsping "$1" "$3" -c 2
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
	nsping "$NA" 10.99.0.2 -s 8000
}

mtu_fixed() {
	local out
	out=$("$VNIC" set "$NAME" mtu 9000 2>&1)
	echo "$out"
	echo "$out" | grep -q "^error: mtu cannot change while running here" &&
		ip -n "$NA" -o link show vnic0 | grep -q " mtu 1500 "
}

# srv_counts ENDED ABNORMAL: the standing server's clients ended so far, of
# which abnormally, and none served now.
srv_counts() {
	ctr_is "vls-srv-$$" server.ended -eq "$1" && ctr_is "vls-srv-$$" server.ended_abnormal -eq "$2" &&
		ctr_is "vls-srv-$$" server.active -eq 0
}

# traffic MODE: the checks both modes share, on a link that is up.
traffic() {
	local m=$1
	check "$m: ping a -> b (IPv4 56 B, 1400 B, IPv6)" pings "$NA" 10.99.0.2 fd00:99::2
	check "$m: ping b -> a" pings "$NB" 10.99.0.1 fd00:99::1
	iperf_server "$NB"
	check "$m: iperf3 TCP a -> b" iperf_tcp "$NA" 10.99.0.2
	check "$m: iperf3 TCP b -> a (-R)" iperf_tcp "$NA" 10.99.0.2 -R
	stop_servers
	check "$m: 64 MiB a -> b, sha256 matches" transfer "$NA" "$NB" 10.99.0.2 5301
	check "$m: 64 MiB b -> a, sha256 matches" transfer "$NB" "$NA" 10.99.0.1 5302
	check "$m: the server's counters under the usual names (cable.ab_tx_frames)" \
		ctr_is "$NAME" cable.ab_tx_frames -gt 0
	check "$m: the server's device counters (dev_b.rx0_frames)" \
		ctr_is "$NAME" dev_b.rx0_frames -gt 0
	check "$m: vnic set: a driver policy live, a device setting refused" live_set
}

# The server (pid $1) killed with SIGKILL: the link stops by itself, one
# line saying so, status 1, and nothing left.
server_killed() {
	local rc
	kill -KILL "$1" || return 1
	# a hang guard: the link notices within its next wait (a second)
	timeout 20 tail --pid="$LINK_PID" -f /dev/null
	link_stop "$LINK_PID" 0 "$WORK/link.out"
	rc=$?
	LINK_PID=
	[ $rc -eq 1 ] && grep -q "is gone (its socket closed): stopping" "$WORK/link.out" &&
		ns_gone "$NA" "$NB"
}

# The standing server's child (pid $1) killed with SIGKILL: the link stays,
# its drivers reset and it reconnects to a new child (a hang guard of 10 s on
# the counter), then pings get through again.
child_killed() {
	kill -KILL "$1" || return 1
	wait_for 10 ctr_is "$NAME" split.reconnects -eq 1 >/dev/null
	"$VNIC" stats "$NAME" | grep -E "^(split\.|drv_a\.resets_xport)"
	kill -0 "$LINK_PID" && ctr_is "$NAME" split.reconnects -gt 0 &&
		ctr_is "$NAME" drv_a.resets_xport -gt 0 && nsping "$NA" 10.99.0.2 -W 3
}

# The link killed with SIGKILL: its forked server (pid $1) sees the socket
# close and ends within 5 s (a hang guard). The namespaces stay (kill -9).
link_killed() {
	link_stop "$LINK_PID" KILL 2>/dev/null
	LINK_PID=
	wait_for 5 not_running "$1"
	ip netns del "$NA"
	ip netns del "$NB"
	# gone, or a zombie its new parent has not reaped yet
	not_running "$1" || [ "$(awk '{ print $3 }' "/proc/$1/stat")" = Z ]
}

not_running() {
	! kill -0 "$1" 2>/dev/null
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

make_blob 64

# ---------------------------------------------------------------- --split
if check "split: up" link_pair --quiet --split; then
	SPID=$(sed -n 's/.*run in server process \([0-9]*\)$/\1/p' "$WORK/link.out")
	echo "server process: ${SPID:-none}" >>"$LOG"
	check "split: a server process of its own" test -n "$SPID" -a "$SPID" != "$LINK_PID"
	traffic split
	check "split: vnic set mtu 9000, then 8000 B pings" jumbo
	check "split: SIGINT: exit 0 with the report" stop_link_reported
	check "split: the server process ended with the link" not_running "${SPID:-0}"
	check "split: nothing left" ns_gone "$NA" "$NB"
fi
if check "split: up again" link_pair --quiet --split; then
	SPID=$(sed -n 's/.*run in server process \([0-9]*\)$/\1/p' "$WORK/link.out")
	check "split: the server killed: the link stops, one line, status 1" server_killed "${SPID:-0}"
fi
if check "split: up once more" link_pair --quiet --split; then
	SPID=$(sed -n 's/.*run in server process \([0-9]*\)$/\1/p' "$WORK/link.out")
	check "split: the link killed (SIGKILL): its server ends" link_killed "${SPID:-0}"
fi

# ---------------------------------------------------------------- --server PATH
check "server: none listening: one line, exit 1" one_line_error connect \
	"$VNIC" link --new-ns-a "$NA" --new-ns-b "$NB" --server "$WORK/none.sock"
check "server: none listening: the namespaces made for the run removed again" ns_gone "$NA" "$NB"
vnic_server "$SOCK" --name "vls-srv-$$"
if check "server: up" link_pair --quiet --server "$SOCK"; then
	traffic server
	check "server: vnic set mtu refused (the standing server's cable is sized at the start)" \
		mtu_fixed
	check "server: SIGINT: exit 0 with the report" stop_link_reported
	check "server: nothing left" ns_gone "$NA" "$NB"
	# the standing server counted one client, ended normally, and serves none now
	wait_for 5 srv_counts 1 0 >/dev/null
	check "server: one client, ended normally" srv_counts 1 0
fi
if check "server: up again" link_pair --quiet --server "$SOCK"; then
	CPID=$(child_of "$SRV_PID")
	echo "the standing server's child: ${CPID:-none}" >>"$LOG"
	check "server: its child killed: the link reconnects and pings again" child_killed "${CPID:-0}"
	check "server: SIGINT after the reconnect: exit 0 with the report" stop_link_reported
	wait_for 5 ctr_is "vls-srv-$$" server.ended_abnormal -eq 1 >/dev/null
	check "server: the killed child counted as an abnormal end" \
		ctr_is "vls-srv-$$" server.ended_abnormal -eq 1
fi
check "server: SIGTERM: exit 0" link_stop "$SRV_PID" TERM

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
