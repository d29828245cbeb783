#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic link --server PATH` across a restart of its standing server
# (docs/ARCHITECTURE.md section 11, "A server restart"): what a Linux
# partition with an ibmvnic sees when its VIOS restarts.
#
#   netns $NA                     vnic link --server S                     netns $NB
#   vnic0 (TAP) - driver A - client hv A        client hv B - driver B - vnic0 (TAP)
#   sender: 48 MiB over TCP ------------------------------------------> receiver: sha256
#                                   |  S (0600)  |
#          vnic server 1 (device A == cable == device B) --kill -9--> gone
#          vnic server 2, started on S 0.5 s later <-- the link connects again
#
# Checks: the transfer, still running when server 1 is killed (after that
# server carried 8 MiB of it), completes and its sha256 matches (TCP
# retransmits what the reset dropped); the link is still running, says the
# loss and the reconnect on stderr and counts them (split.lost,
# split.reconnects), both drivers
# reset for the transport event (drv_X.resets_xport) and both hvs saw their
# partner go (hv_X.split_partner_lost); each TAP is the same interface
# (ifindex) and up; pings get through; SIGINT ends the link with status 0,
# and its report counts the frames server 1 carried too (4 MiB more a>b
# than server 2's cable counted). Then a server killed for good: the link
# says the loss, then ends by itself within --reconnect-timeout 2 and the 5
# s an attempt may take, exit status 1, with one line saying why, the
# namespaces it made removed.
#
# Usage: test_link_restart.sh PATH/TO/vnic    (root; exit 77 = skipped)

set -u

VNIC=${1:?usage: test_link_restart.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip ping python3
netns_setup linkrestart
NA=vlr-a-$$
NB=vlr-b-$$
NAME=vlr-$$
SOCK=$WORK/server.sock
track_ns "$NA" "$NB"

# start_link FLAGS...: vnic link --server $SOCK in the background; waits until it is up.
start_link() {
	link_start "$WORK/link.out" "$WORK/link.err" --name "$NAME" --new-ns-a "$NA" \
		--new-ns-b "$NB" --quiet --server "$SOCK" "$@"
}

# The TAP of namespace $1 is interface $2 still, and up.
tap_kept() {
	local line
	line=$(ip -n "$1" -o link show vnic0) || return 1
	echo "$line"
	[ "${line%%:*}" = "$2" ] && echo "$line" | grep -q "<[^>]*\bUP\b"
}

# carried BYTES: the server's cable counts BYTES a -> b (a hang guard of 30 s).
carried() {
	wait_for 30 ctr_is "$NAME" cable.ab_tx_bytes -ge "$1" >/dev/null
	ctr_is "$NAME" cable.ab_tx_bytes -ge "$1"
}

# The counters, and a line on stderr at the loss and one at the reconnect.
counts() {
	"$VNIC" stats "$NAME" | grep -E "^(split\.|drv_.\.resets_xport|hv_.\.split_partner_lost)"
	cat "$WORK/link.err"
	grep -q "went away: the vNICs reset; connecting again for up to 20 s" "$WORK/link.err" &&
		grep -q "again after [0-9.]* s; the vNICs log in again" "$WORK/link.err" &&
		ctr_is "$NAME" split.lost -eq 1 && ctr_is "$NAME" split.reconnects -eq 1 &&
		ctr_is "$NAME" drv_a.resets_xport -ge 1 && ctr_is "$NAME" drv_b.resets_xport -ge 1 &&
		ctr_is "$NAME" hv_a.split_partner_lost -ge 1 && ctr_is "$NAME" hv_b.split_partner_lost -ge 1
}

# SIGINT: status 0, and the report's a>b bytes above what the second server's cable counted ($1).
stop_link() {
	local rc bytes
	link_stop "$LINK_PID" INT "$WORK/link.out" "$WORK/link.err"
	rc=$?
	LINK_PID=
	bytes=$(sed -n 's/^vnic link: .* s; a>b [0-9]* frames \([0-9]*\) bytes.*/\1/p' "$WORK/link.out")
	echo "a>b $bytes bytes in the report, $1 on the second server's cable"
	[ $rc -eq 0 ] && [ -n "$bytes" ] && [ "$bytes" -gt $(($1 + (4 << 20))) ]
}

# The server killed for good: the link says so, then ends by itself in time, status 1, with one line.
gave_up() {
	local rc start took
	link_stop "$SRV_PID" KILL 2>/dev/null
	start=$(date +%s%N)
	# a hang guard: 2 s, and 5 s an attempt may take
	timeout 20 tail --pid="$LINK_PID" -f /dev/null
	link_stop "$LINK_PID" 0 "$WORK/link.err"
	rc=$?
	LINK_PID=
	took=$((($(date +%s%N) - start) / 1000000))
	echo "after $took ms"
	[ $rc -eq 1 ] && [ "$(wc -l <"$WORK/link.err")" -eq 2 ] &&
		head -1 "$WORK/link.err" | grep -q "went away: the vNICs reset; connecting again" &&
		tail -1 "$WORK/link.err" | grep -q "the server went away and was not back within 2 s" &&
		[ $took -lt 9000 ] && ns_gone "$NA" "$NB"
}

make_blob 48

# ------------------------------------------------ a restart under a transfer
vnic_server "$SOCK" --no-ctl || { echo "FAIL: the server made no socket: $(cat "$LOG")"; exit 1; }
# The cable's rate makes the transfer last (about 4 s): the kill lands in the middle.
if check "restart: up" start_link --rate 100M --reconnect-timeout 20; then
	IDX_A=$(ip -n "$NA" -o link show vnic0 | cut -d: -f1)
	IDX_B=$(ip -n "$NB" -o link show vnic0 | cut -d: -f1)
	transfer "$NA" "$NB" 10.99.0.2 5301 >"$WORK/xfer.out" 2>&1 &
	XFER_PID=$!
	track_pid "$XFER_PID"
	# server 1 carries 8 MiB of it, and the link reads its counters once more (once a second)
	check "restart: 8 MiB through the first server" carried $((8 << 20))
	sleep 1.5
	check "restart: the transfer still running when the server is killed" kill -0 "$XFER_PID"
	link_stop "$SRV_PID" KILL >/dev/null 2>&1
	sleep 0.5
	vnic_server "$SOCK" --no-ctl || fail "restart: the second server made no socket"
	wait "$XFER_PID"
	rc=$?
	untrack_pid "$XFER_PID"
	cat "$WORK/xfer.out" >>"$LOG"
	if [ $rc -eq 0 ]; then
		pass "restart: 48 MiB a -> b across the restart, sha256 matches"
	else
		fail "restart: the transfer across the restart: $(tail -1 "$WORK/xfer.out")"
	fi
	check "restart: the link runs on" kill -0 "$LINK_PID"
	check "restart: one loss, one reconnect, both said and counted, both drivers reset" counts
	check "restart: TAP a is the same interface, up" tap_kept "$NA" "$IDX_A"
	check "restart: TAP b is the same interface, up" tap_kept "$NB" "$IDX_B"
	check "restart: ping a -> b after it" nsping "$NA" 10.99.0.2
	check "restart: ping b -> a (IPv6) after it" nsping "$NB" fd00:99::1
	NEW=$(ctr "$NAME" cable.ab_tx_bytes)
	check "restart: SIGINT: exit 0, the report counts both servers' frames" stop_link "${NEW:-0}"
	check "restart: nothing left" ns_gone "$NA" "$NB"
fi

# ------------------------------------------------ a server that never comes back
if check "gone for good: up" start_link --reconnect-timeout 2; then
	check "gone for good: the loss said, then exit status 1 with one line, in time" gave_up
fi

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
