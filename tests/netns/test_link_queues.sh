#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic link --queues 2`: flows spread over both queue pairs, each queue pair
# of both vNICs on a thread of its own, and the data arrives (docs/LINK.md,
# docs/ARCHITECTURE.md sections 4.2 and 4.3).
#
#   netns $NA                                                     netns $NB
#   vnic0 (TAP, 2 queue fds) 10.99.0.1/24         10.99.0.2/24 vnic0 (TAP, 2 fds)
#        |  tun picks the fd by flow            tun steers replies to the fd |
#   driver A tx q - device A tx q == cable ring q == device B rx q - driver B rx q
#   (queue pair q of both vNICs on cpu q: threads a and b)
#
# Checks: iperf3 TCP with 4 streams a -> b and b -> a; both of A's tx queues,
# both cable rings (device B's rx queue q is ring q) and both of B's rx queues
# carried packets (drv_a.txN_completions, dev_b.rxN_frames,
# drv_b.rxN_packets), and the same the other way; both drivers and devices
# parked their other cpu around control polls (the queues really are on two
# threads); a 64 MiB transfer each way whose sha256 matches. Four flows hash
# to one queue one time in eight, so the 4-stream run is repeated (new ports
# each time) until both queues are used, five times at most.
#
# Usage: test_link_queues.sh PATH/TO/vnic    (root; exit 77 = skipped)
# Every address is inside namespaces this script creates.

set -u

VNIC=${1:?usage: test_link_queues.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip iperf3 python3
netns_setup queues
NA=vnq-a-$$
NB=vnq-b-$$
NAME=vnq-$$
track_ns "$NA" "$NB"

# both_used PREFIX SUFFIX: PREFIX0SUFFIX and PREFIX1SUFFIX both above 0.
both_used() {
	ctr_is "$NAME" "${1}0$2" -gt 0 && ctr_is "$NAME" "${1}1$2" -gt 0
}

# streams4 FLAGS...: 4-stream iperf3 runs from A (FLAGS: -R for b -> a)
# until A's and B's queues of that direction are all used (5 runs at most).
streams4() {
	local tx=drv_a.tx rx=drv_b.rx ring=dev_b.rx i
	case " $* " in *" -R "*) tx=drv_b.tx rx=drv_a.rx ring=dev_a.rx ;; esac
	for i in 1 2 3 4 5; do
		iperf_run "$NA" 10.99.0.2 -t 2 -P 4 "$@" || return 1
		both_used "$tx" _completions && both_used "$ring" _frames &&
			both_used "$rx" _packets && return 0
		echo "run $i: not every queue used yet"
	done
	return 1
}

make_blob 64

check "vnic link --queues 2 comes up" link_pair --quiet --queues 2 || exit 1
check "two queues negotiated, each side" test "$(grep -c ", 2 queue(s)," "$WORK/link.out")" -eq 2
iperf_server "$NB"
check "iperf3 4 streams a -> b use both of A's tx and B's rx queues" streams4
check "iperf3 4 streams b -> a use both of B's tx and A's rx queues" streams4 -R
stop_servers
check "64 MiB a -> b, sha256 matches" transfer "$NA" "$NB" 10.99.0.2 5301
check "64 MiB b -> a, sha256 matches" transfer "$NB" "$NA" 10.99.0.1 5302
check "nothing dropped for a bad queue" ctr_is "$NAME" drv_a.drop_bad_queue -eq 0
check "no frame on a ring past B's rx queues" ctr_is "$NAME" dev_b.rx_drop_bad_queue -eq 0
check "no frame on a ring past A's rx queues" ctr_is "$NAME" dev_a.rx_drop_bad_queue -eq 0
check "driver A parked its other queue cpu" ctr_is "$NAME" drv_a.parks -gt 0
check "device B parked its other queue cpu" ctr_is "$NAME" dev_b.parks -gt 0
check "stops cleanly" stop_link_reported

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
