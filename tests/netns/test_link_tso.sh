#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic link --cable-tso`: the cable carries TSO superpackets whole between
# the two vNICs, which both negotiate large receive (docs/LINK.md,
# docs/PROTOCOL.md section 8.5). In process, then with --split (the cable in
# the server process).
#
#   netns $NA                                                     netns $NB
#   vnic0 (TAP) 10.99.0.1/24                           10.99.0.2/24 vnic0 (TAP)
#        |  64 KiB GSO frames (vnet header)          64 KiB GSO frames  |
#   driver A - device A ==== one superframe per superpacket ==== device B - driver B
#                 send_super          cable (64 KiB slots)      rx_super: one large
#                                                               receive, many buffers
#
# Checks, each mode: iperf3 TCP both ways over IPv4 and IPv6, a 64 MiB transfer
# each way whose sha256 matches at the other end, superframes on the cable
# both ways (cable.ab_tx_super, cable.ba_tx_super) handed up as large receives
# (drv_b.rx0_lro_packets), none dropped as malformed, and `vnic set NAME
# cable-tso` refused (the slots are sized at the start); with --split, given
# no --rx-entries, the deeper rx ring (docs/LINK.md, "--cable-tso").
#
# Usage: test_link_tso.sh PATH/TO/vnic    (root; exit 77 = skipped)
# Every address is inside namespaces this script creates.

set -u

VNIC=${1:?usage: test_link_tso.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip iperf3 python3
netns_setup tso
NA=vnx-a-$$
NB=vnx-b-$$
NAME=vnx-$$
track_ns "$NA" "$NB"

# vnic set of cable-tso: one error line, nothing changed.
set_refused() {
	local out rc
	out=$("$VNIC" set "$NAME" cable-tso off 2>&1)
	rc=$?
	echo "$out (exit $rc)"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "^error"
}

make_blob 64

for mode in in-process split; do
	flags=(--cable-tso)
	[ $mode = split ] && flags+=(--split)
	check "$mode: vnic link ${flags[*]} comes up" link_pair --quiet "${flags[@]}" || continue
	iperf_server "$NB"
	check "$mode: iperf3 TCP a -> b" iperf_tcp "$NA" 10.99.0.2
	check "$mode: iperf3 TCP b -> a (-R)" iperf_tcp "$NA" 10.99.0.2 -R
	check "$mode: iperf3 TCP a -> b over IPv6" iperf_tcp "$NA" fd00:99::2
	stop_servers
	check "$mode: 64 MiB a -> b, sha256 matches" transfer "$NA" "$NB" 10.99.0.2 5301
	check "$mode: 64 MiB b -> a, sha256 matches" transfer "$NB" "$NA" 10.99.0.1 5302
	check "$mode: superframes a -> b on the cable" ctr_is "$NAME" cable.ab_tx_super -gt 0
	check "$mode: superframes b -> a on the cable" ctr_is "$NAME" cable.ba_tx_super -gt 0
	check "$mode: handed up as large receives" ctr_is "$NAME" drv_b.rx0_lro_packets -gt 0
	check "$mode: none malformed (device)" ctr_is "$NAME" dev_b.rx_drop_bad_super -eq 0
	check "$mode: none malformed (driver)" ctr_is "$NAME" drv_b.rx0_drop_lro_bad_meta -eq 0
	# split: the deeper rx ring without --rx-entries (2048 asked, the device's 1024 granted)
	[ $mode = split ] && check "$mode: 1024 rx buffers per queue" \
		ctr_is "$NAME" drv_b.neg_rx_entries -eq 1024
	[ $mode = in-process ] && check "$mode: vnic set cable-tso refused" set_refused
	check "$mode: stops cleanly" stop_link_reported
done

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
