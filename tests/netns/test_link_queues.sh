#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic link --queues 2`: flows spread over both queue pairs, and the data
# arrives (docs/LINK.md, docs/ARCHITECTURE.md section 4.2).
#
#   netns $NA                                                     netns $NB
#   vnic0 (TAP, 2 queue fds) 10.99.0.1/24         10.99.0.2/24 vnic0 (TAP, 2 fds)
#        |  tun picks the fd by flow            tun steers replies to the fd |
#   driver A tx 0/1 (RSS) - device A ==== cable ==== device B (RSS) - driver B rx 0/1
#
# Checks: iperf3 TCP with 4 streams a -> b and b -> a; both of A's tx queues
# and both of B's rx queues carried packets (drv_a.txN_completions,
# drv_b.rxN_packets), and both of B's tx queues and A's rx queues for the
# other way; a 64 MiB transfer each way whose sha256 matches. Four flows
# hash to one queue one time in eight, so the 4-stream run is repeated (new
# ports each time) until both queues are used, five times at most.
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
	local tx=drv_a.tx rx=drv_b.rx i
	case " $* " in *" -R "*) tx=drv_b.tx rx=drv_a.rx ;; esac
	for i in 1 2 3 4 5; do
		iperf_run "$NA" 10.99.0.2 -t 2 -P 4 "$@" || return 1
		both_used "$tx" _completions && both_used "$rx" _packets && return 0
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
check "stops cleanly" stop_link_reported

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
