#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts over the kernel's VXLAN (and Geneve), each with a vNIC backed by
# its tunnel device: docs/MULTIHOST.md's recipe, built on one machine.
# Network namespaces stand in for the hosts.
#
#   netns $A1 (application)                               netns $A2 (application)
#   10.61.0.1/24 fd00:61::1/64                             10.61.0.2/24 fd00:61::2/64
#   vnic0 (TAP)                                                          vnic0 (TAP)
#     |  vnic link --backing vx0 --backing-ns $H1            ... --backing-ns $H2  |
#   netns $H1 (host 1)                                    netns $H2 (host 2)
#   vx0: VXLAN 42 (or Geneve 42), MTU 1450                vx0
#   u1 192.168.213.1/24 ============ veth underlay ============ u2 192.168.213.2/24
#
# Both vNICs run from the root namespace: --backing-ns makes the AF_PACKET
# socket inside the host namespace, so the application namespaces vnic
# creates are visible to `ip netns` everywhere.
#
# Checks, for VXLAN and then Geneve (skipped with a message where the kernel
# has no Geneve): the vNIC takes the tunnel's MTU (1450) and says so; ping
# both ways over IPv4 and IPv6, at 56 bytes and at the MTU; iperf3 TCP both
# ways over IPv4 and IPv6; a 256 MiB transfer whose sha256 matches at the
# other end, over IPv4 and over IPv6; that superframes crossed each wire both
# ways with their vnet headers (the default), their payloads sent from the
# driver's buffer (by reference: the device copies only their headers), and
# none was refused; no frame
# dropped for its size on either wire; and nothing left behind. Then VXLAN
# once more with what `vnic link --help` recommends for latency
# (--busy-poll-us 50): the threads spin before they sleep, and a spinning
# thread that finds the backing's frame itself must lose none: 50 pings
# each way, 20 ms apart, all answered; iperf3 both ways; both threads
# spun; a clean stop. Last, VXLAN with --tx-buf map --rx-agg frags (each
# driver sends a superpacket from the TAP's buffer, which the device then
# hands to the socket by reference): 256 MiB each way, sha256 matching, the
# superpackets mapped and sent by reference, a clean stop.
#
# Usage: test_multihost.sh PATH/TO/vnic    (root; exit 77 = skipped)

set -u

VNIC=${1:?usage: test_multihost.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip ping iperf3 python3
netns_setup multihost
H1=vmh-h1-$$
H2=vmh-h2-$$
A1=vmh-a1-$$
A2=vmh-a2-$$
PIDS=()
track_ns "$A1" "$A2"

# Two hosts joined by a veth underlay.
hosts() {
	ns_add "$H1" "$H2" && veth "$H1" u1 "$H2" u2 &&
		ip -n "$H1" addr add 192.168.213.1/24 dev u1 &&
		ip -n "$H2" addr add 192.168.213.2/24 dev u2
}

# tunnel KIND: vx0 of that kind in each host, pointing at the other.
tunnel() {
	local kind=$1 h ns here there dev
	for h in 1 2; do
		ns=H$h
		ns=${!ns}
		here="192.168.213.$h"
		there="192.168.213.$((3 - h))"
		dev=u$h
		case $kind in
		vxlan)
			ip -n "$ns" link add vx0 type vxlan id 42 local "$here" remote "$there" \
				dstport 4789 dev "$dev" || return 1
			;;
		geneve)
			ip -n "$ns" link add vx0 type geneve id 42 remote "$there" || return 1
			;;
		esac
		ip -n "$ns" link set vx0 up || return 1
	done
}

untunnel() {
	ip -n "$H1" link del vx0 2>/dev/null
	ip -n "$H2" link del vx0 2>/dev/null
}

# The two vNICs, each backed by its host's vx0, with FLAGS; waits until both are up.
start_vnics() { # [FLAGS...]
	local h hns app rc
	PIDS=()
	for h in 1 2; do
		hns=H$h
		app=A$h
		link_start "$WORK/vnic$h.out" - --backing vx0 --backing-ns "${!hns}" "$@" \
			--new-ns-a "${!app}" --addr-a "10.61.0.$h/24" --addr6-a "fd00:61::$h/64" \
			--name "vmh-$h-$$" --quiet
		rc=$?
		PIDS+=("$LINK_PID")
		[ $rc -eq 0 ] || return 1
		cat "$WORK/vnic$h.out"
	done
}

stop_vnics() {
	local p rc=0
	for p in "${PIDS[@]}"; do
		link_stop "$p" >/dev/null || rc=1
	done
	PIDS=()
	cat "$WORK"/vnic1.out "$WORK"/vnic2.out
	return $rc
}

# The vNIC took the tunnel's MTU and said so; its TAP carries it.
took_mtu() {
	grep -q "MTU 1450, vx0's" "$WORK/vnic1.out" &&
		ip -n "$A1" -o link show vnic0 | grep -q " mtu 1450 " &&
		ip -n "$A2" -o link show vnic0 | grep -q " mtu 1450 "
}

pings() { # FROM TO-ADDR SIZE
	nsping "$1" "$2" && nsping "$1" "$2" -c 2 -M "do" -s "$3"
}

# Each wire handed superframes to its kernel and took superframes from it
# (vnet headers on, the default), whole to its device, whose driver took
# large receive (the default): the transfers above made both on both hosts,
# since each side both sends data and receives it, their payloads chained
# by reference (tx_gso_frags). None refused.
superframes() {
	local h c
	for h in 1 2; do
		for c in tx_gso_frames tx_gso_frags rx_gso_whole; do
			echo "vnic $h:"
			ctr_is "vmh-$h-$$" "wire.$c" -gt 0 || return 1
		done
		for c in tx_drop_gso rx_drop_gso; do
			echo "vnic $h:"
			ctr_is "vmh-$h-$$" "wire.$c" -eq 0 || return 1
		done
	done
}

# No frame was dropped for its size on a wire (GRO on the tunnel device, or a
# frame larger than the vNIC's MTU), read from the final report.
no_size_drops() {
	! grep -E "wire\.(rx_drop_too_big|tx_drop_mtu)|drop_too_long" \
		"$WORK"/vnic1.out "$WORK"/vnic2.out
}

run_kind() {
	local kind=$1
	if ! check "$kind: both vNICs up on their hosts' tunnels" start_vnics; then
		stop_vnics >/dev/null
		untunnel
		return
	fi
	check "$kind: the vNIC takes the tunnel's MTU 1450 and says so" took_mtu
	check "$kind: ping 1 -> 2 over IPv4, 56 B and 1422 B don't-fragment" \
		pings "$A1" 10.61.0.2 1422
	check "$kind: ping 2 -> 1 over IPv4" pings "$A2" 10.61.0.1 1422
	check "$kind: ping 1 -> 2 over IPv6, 56 B and 1402 B" pings "$A1" fd00:61::2 1402
	check "$kind: ping 2 -> 1 over IPv6" pings "$A2" fd00:61::1 1402
	iperf_server "$A2"
	iperf_server "$A1"
	check "$kind: iperf3 TCP 1 -> 2 over IPv4" iperf_tcp "$A1" 10.61.0.2
	check "$kind: iperf3 TCP 2 -> 1 over IPv4" iperf_tcp "$A2" 10.61.0.1
	check "$kind: iperf3 TCP 1 -> 2 over IPv6" iperf_tcp "$A1" fd00:61::2
	check "$kind: iperf3 TCP 2 -> 1 over IPv6" iperf_tcp "$A2" fd00:61::1
	stop_servers
	check "$kind: 256 MiB 1 -> 2 over IPv4, sha256 matches" transfer "$A1" "$A2" 10.61.0.2 5301
	check "$kind: 256 MiB 2 -> 1 over IPv6, sha256 matches" transfer "$A2" "$A1" fd00:61::1 5302
	check "$kind: superframes crossed both wires both ways, none refused" superframes
	check "$kind: both vNICs stop cleanly at SIGINT" stop_vnics
	check "$kind: no frame dropped for its size" no_size_drops
	check "$kind: the application namespaces are removed" \
		ns_gone "$A1" "$A2"
	untunnel
}

ping_all() { # FROM TO-ADDR: 50 pings 20 ms apart, every one answered
	nsping "$1" "$2" -q -c 50 -i 0.02 | grep " 0% packet loss"
}

# Both vNICs' threads spun before sleeping (cpu_a.spin_ns, from vnic stats).
spun() {
	local h
	for h in 1 2; do
		echo "vnic $h:"
		ctr_is "vmh-$h-$$" cpu_a.spin_ns -gt 0 || return 1
	done
}

run_spin() {
	if ! check "spin: both vNICs up with --busy-poll-us 50" start_vnics --busy-poll-us 50; then
		stop_vnics >/dev/null
		untunnel
		return
	fi
	check "spin: 50 pings 1 -> 2 over IPv4, all answered" ping_all "$A1" 10.61.0.2
	check "spin: 50 pings 2 -> 1 over IPv6, all answered" ping_all "$A2" fd00:61::1
	iperf_server "$A2"
	iperf_server "$A1"
	check "spin: iperf3 TCP 1 -> 2 over IPv4" iperf_tcp "$A1" 10.61.0.2
	check "spin: iperf3 TCP 2 -> 1 over IPv4" iperf_tcp "$A2" 10.61.0.1
	stop_servers
	check "spin: both vNICs' threads spun" spun
	check "spin: both vNICs stop cleanly at SIGINT" stop_vnics
	check "spin: no frame dropped for its size" no_size_drops
	untunnel
}

# Both drivers sent superpackets from the TAP's buffer (tx-buf map), and
# both wires sent payloads by reference, so from that buffer straight.
mapped() {
	local h
	for h in 1 2; do
		echo "vnic $h:"
		ctr_is "vmh-$h-$$" drv_a.tx0_mapped_packets -gt 0 || return 1
		ctr_is "vmh-$h-$$" wire.tx_gso_frags -gt 0 || return 1
	done
}

run_map() {
	if ! check "map: both vNICs up with --tx-buf map --rx-agg frags" \
		start_vnics --tx-buf map --rx-agg frags; then
		stop_vnics >/dev/null
		untunnel
		return
	fi
	check "map: 256 MiB 1 -> 2 over IPv4, sha256 matches" transfer "$A1" "$A2" 10.61.0.2 5303
	check "map: 256 MiB 2 -> 1 over IPv6, sha256 matches" transfer "$A2" "$A1" fd00:61::1 5304
	check "map: superpackets mapped and sent by reference on both hosts" mapped
	check "map: both vNICs stop cleanly at SIGINT" stop_vnics
	check "map: no frame dropped for its size" no_size_drops
	untunnel
}

make_blob 256
check "two hosts joined by a veth underlay" hosts || exit 1
if tunnel vxlan >>"$LOG" 2>&1; then
	run_kind vxlan
else
	fail "vxlan: no VXLAN device could be made (see $LOG)"
fi
if tunnel geneve >>"$LOG" 2>&1; then
	run_kind geneve
else
	echo "SKIP: geneve: this kernel makes no Geneve device (modprobe geneve; CONFIG_GENEVE)"
	untunnel
fi
if tunnel vxlan >>"$LOG" 2>&1; then
	run_spin
else
	fail "spin: no VXLAN device could be made (see $LOG)"
fi
if tunnel vxlan >>"$LOG" 2>&1; then
	run_map
else
	fail "map: no VXLAN device could be made (see $LOG)"
fi

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
