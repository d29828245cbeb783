#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two `vnic link` instances joined by the socket wire (--wire, docs/LINK.md),
# each with its own namespace, as two hosts or a vnic and a QEMU VM would be:
#
#   netns $A1  10.62.0.1/24 fd00:62::1/64        netns $A2  10.62.0.2/24 fd00:62::2/64
#   vnic0 (TAP)                                                          vnic0 (TAP)
#     |  vnic link --wire SPEC1                              vnic link --wire SPEC2  |
#     \______________ a socket on the root namespace's 127.0.0.1 _______________/
#
#   dgram:  SPEC1 dgram:udp:127.0.0.1:P1,127.0.0.1:P2   SPEC2 dgram:udp:127.0.0.1:P2,127.0.0.1:P1
#   stream: SPEC1 stream:tcp:127.0.0.1:P,server          SPEC2 stream:tcp:127.0.0.1:P
#
# Checks, over the UDP framing and then the TCP framing: both come up, ping
# both ways over IPv4 and IPv6, a 32 MiB transfer whose sha256 matches at the
# other end, and no frame dropped for its size or for a broken stream. Over
# TCP also: the connecting instance killed (SIGKILL) and started again,
# traffic resumes, and the listening one counted the reconnection. Then
# nothing is left behind.
#
# Usage: test_sockwire.sh PATH/TO/vnic    (root; exit 77 = skipped)

set -u

VNIC=${1:?usage: test_sockwire.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip ping python3
netns_setup sockwire
A1=vsw-a1-$$
A2=vsw-a2-$$
PIDS=(0 0)
track_ns "$A1" "$A2"

# start_vnic N SPEC: instance N (1, 2) in namespace A<N>; waits until it is up.
start_vnic() {
	local h=$1 app=A$1 rc
	link_start "$WORK/vnic$h.out" - --wire "$2" --new-ns-a "${!app}" --addr-a "10.62.0.$h/24" \
		--addr6-a "fd00:62::$h/64" --name "vsw-$h-$$" --quiet
	rc=$?
	PIDS[h - 1]=$LINK_PID
	cat "$WORK/vnic$h.out"
	return $rc
}

stop_vnic() { # N
	link_stop "${PIDS[$1 - 1]}" INT "$WORK/vnic$1.out"
	PIDS[$1 - 1]=0
}

# Ping until the wire carries (a stream client connects in the background),
# then the checks' own pings: IPv4 and IPv6, small and at the MTU.
pings() { # FROM TO4 TO6
	wait_for 50 nsping "$1" "$2" -c 1 -W 1 >/dev/null 2>&1
	nsping "$1" "$2" && nsping "$1" "$2" -c 2 -M "do" -s 1472 && nsping "$1" "$3" -c 2
}

# No frame dropped for its size, and no stream broke, on either wire (final reports).
clean_wires() {
	! grep -E "wire\.(rx_drop_too_long|rx_drop_runt|tx_drop_mtu|rx_drop_zero_len|rx_drop_bad_len|rx_drop_eof_mid_frame)" \
		"$WORK"/vnic1.out "$WORK"/vnic2.out
}

# Both instances stop at SIGINT, each with its final report.
stop_both() {
	local rc=0
	stop_vnic 1 || rc=1
	stop_vnic 2 || rc=1
	return $rc
}

both_ways() { # KIND
	check "$1: ping 1 -> 2 (IPv4 56 B and 1472 B don't-fragment, IPv6)" \
		pings "$A1" 10.62.0.2 fd00:62::2
	check "$1: ping 2 -> 1" pings "$A2" 10.62.0.1 fd00:62::1
	check "$1: 32 MiB 1 -> 2, sha256 matches" transfer "$A1" "$A2" 10.62.0.2 5301
	check "$1: 32 MiB 2 -> 1, sha256 matches" transfer "$A2" "$A1" 10.62.0.1 5302
}

make_blob 32

# UDP: one frame per datagram, each instance bound to its port.
P1=$(free_port udp)
P2=$(free_port udp)
check "udp: instance 1 up" start_vnic 1 "dgram:udp:127.0.0.1:$P1,127.0.0.1:$P2"
check "udp: instance 2 up" start_vnic 2 "dgram:udp:127.0.0.1:$P2,127.0.0.1:$P1"
both_ways udp
check "udp: both stop cleanly at SIGINT" stop_both
check "udp: no frame dropped for its size" clean_wires

# TCP: instance 1 listens, instance 2 connects.
P=$(free_port tcp)
check "tcp: the listening instance up" start_vnic 1 "stream:tcp:127.0.0.1:$P,server"
check "tcp: the connecting instance up" start_vnic 2 "stream:tcp:127.0.0.1:$P"
if [ "${PIDS[0]}" -gt 0 ] && [ "${PIDS[1]}" -gt 0 ]; then
	both_ways tcp
	# The connecting one dies without a word; its namespace is left, as after any kill -9.
	link_stop "${PIDS[1]}" KILL >/dev/null 2>&1
	PIDS[1]=0
	ip netns del "$A2"
	check "tcp: the connecting instance started again" \
		start_vnic 2 "stream:tcp:127.0.0.1:$P"
	check "tcp: traffic resumes, ping 2 -> 1" pings "$A2" 10.62.0.1 fd00:62::1
	check "tcp: traffic resumes, 32 MiB 1 -> 2" transfer "$A1" "$A2" 10.62.0.2 5303
	check "tcp: the listener counted one reconnection" ctr_is "vsw-1-$$" wire.reconnects -eq 1
	check "tcp: both stop cleanly at SIGINT" stop_both
	check "tcp: no frame dropped for its size, no stream broken" clean_wires
fi
check "the namespaces are removed" ns_gone "$A1" "$A2"

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
