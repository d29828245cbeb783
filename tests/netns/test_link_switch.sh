#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two `vnic link --server S` and a `vnic bench --server S` on one
# `vnic server --switch` (docs/ARCHITECTURE.md section 11, "The switch"):
# every device is a port of one learning switch, and each link's vNICs take
# the MACs of their ports, so the four namespaces share one Ethernet segment.
#
#   netns $A1 10.99.0.1  vnic0 - link 1 - port 0 -+                  +- port 2 - link 2 - vnic0  10.99.0.3 netns $A2
#   netns $B1 10.99.0.2  vnic0 - link 1 - port 1 -+-- the switch  ---+- port 3 - link 2 - vnic0  10.99.0.4 netns $B2
#                              vnic bench stream - ports 4, 5 -+      (vnic server --listen S --switch)
#
# Checks: each TAP carries its port's MAC (02:76:6e:73:00:0N, four distinct);
# ping within a link and between the two links (IPv4 and IPv6); iperf3 TCP
# between the links both ways while a bench stream runs on the same switch,
# which ends with status 0, no payload error and every byte (the links' ARP
# and neighbour discovery reach its hosts, which count and drop them); the
# links' devices filter the frames the switch floods to them that are not
# theirs (dev_X.rx_filtered); SIGINT ends both links with status 0.
#
# Usage: test_link_switch.sh PATH/TO/vnic    (root; exit 77 = skipped)

set -u

VNIC=${1:?usage: test_link_switch.sh PATH/TO/vnic}
# server_lib.sh first: lib.sh's pass and fail count the checks
# shellcheck source=tests/integration/server_lib.sh
. "$(dirname "$0")/../integration/server_lib.sh"
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun iperf3 ip ping
netns_setup linkswitch
A1=vlw-a1-$$
B1=vlw-b1-$$
A2=vlw-a2-$$
B2=vlw-b2-$$
SOCK=$WORK/server.sock
LINK_PIDS=()
track_ns "$A1" "$B1" "$A2" "$B2"

# start_link K NS_A NS_B FLAGS...: link K on the switch, in the background; waits until it is up.
start_link() {
	local k=$1 na=$2 nb=$3
	shift 3
	link_start "$WORK/l$k.out" "$WORK/l$k.err" --name "vlw-l$k-$$" --new-ns-a "$na" \
		--new-ns-b "$nb" --quiet --server "$SOCK" "$@" || return 1
	LINK_PIDS+=("$LINK_PID")
}

mac_of() {
	ip -n "$1" -o link show vnic0 | sed -n 's/.*link\/ether \([0-9a-f:]*\) .*/\1/p'
}

# Each TAP's MAC is a switch port's, and no two are the same.
macs() {
	local n m all=()
	for n in "$A1" "$B1" "$A2" "$B2"; do
		m=$(mac_of "$n")
		echo "$n: ${m:-none}"
		[[ $m == 02:76:6e:73:00:0[0-9a-f] ]] || return 1
		all+=("$m")
	done
	[ "$(printf '%s\n' "${all[@]}" | sort -u | wc -l)" -eq 4 ]
}

# The links' devices, together, filtered frames flooded to them that were not theirs.
filtered() {
	local k s v sum=0
	for k in 1 2; do
		for s in a b; do
			v=$(ctr "vlw-l$k-$$" "dev_$s.rx_filtered")
			echo "link $k dev_$s.rx_filtered = ${v:-0}"
			sum=$((sum + ${v:-0}))
		done
	done
	[ $sum -gt 0 ]
}

stop_links() {
	local p ok=0
	for p in "${LINK_PIDS[@]}"; do
		echo "link $p:"
		link_stop "$p" || ok=1
	done
	LINK_PIDS=()
	cat "$WORK"/l*.out "$WORK"/l*.err
	return $ok
}

vnic_server "$SOCK" --switch --no-ctl || { echo "FAIL: the server made no socket: $(cat "$LOG")"; exit 1; }

if start_link 1 "$A1" "$B1" >>"$LOG" 2>&1 &&
	start_link 2 "$A2" "$B2" --addr-a 10.99.0.3/24 --addr-b 10.99.0.4/24 \
		--addr6-a fd00:99::3/64 --addr6-b fd00:99::4/64 >>"$LOG" 2>&1; then
	pass "two links up on the switch"
	check "each TAP has its switch port's MAC, four distinct" macs
	check "ping within link 1 (a -> b)" nsping "$A1" 10.99.0.2
	check "ping link 1 a -> link 2 a" nsping "$A1" 10.99.0.3
	check "ping link 2 b -> link 1 b (IPv6)" nsping "$B2" fd00:99::2
	check "ping link 2 a -> link 1 b, 1400 B" nsping "$A2" 10.99.0.2 -s 1400
	# a bench client on the same switch, streaming while the links carry iperf3
	SIZE=20000000
	nice "$VNIC" bench stream --server "$SOCK" --size $SIZE --duration 60 --json --no-ctl \
		--quiet >"$WORK/st" 2>"$WORK/st.err" &
	BENCH=$!
	iperf_server "$A2"
	check "iperf3 TCP link 1 a -> link 2 a" iperf_tcp "$A1" 10.99.0.3
	check "iperf3 TCP link 2 a -> link 1 a (-R)" iperf_tcp "$A1" 10.99.0.3 -R
	stop_servers
	wait "$BENCH"
	rc=$?
	cat "$WORK/st.err" >>"$LOG"
	before=$nfail
	check_client "bench stream on the same switch" "$WORK/st" $rc $SIZE
	[ "$nfail" -eq "$before" ] && pass "bench stream on the same switch: status 0, every byte"
	check "the links' devices filter what is flooded to them and not theirs" filtered
	check "ping link 1 a -> link 2 b after the stream" nsping "$A1" 10.99.0.4 -c 2
	check "SIGINT: both links exit 0" stop_links
else
	fail "two links up on the switch (see $LOG)"
fi
check "server: SIGTERM: exit 0" link_stop "$SRV_PID" TERM

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
