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
# each time) until both queues are used, five times at most; the ready lines
# say no --profile. Then --profile latency --queues 3 (--json): the ready
# lines name the profile and its options, the third thread's counters,
# cpu_q2.*, are there and move, each ring pair's beside the sums; `vnic set
# busy-poll` reaches q2 as it does a and b (`vnic show`, and the fixed spin
# taken up: cpu_q2.spin_limit_ns), and the JSON report names the profile.
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
check "the ready lines say no profile" grep -qx "vnic link: profile none" "$WORK/link.out"
check "each side's line names its vNIC's MAC, a's and b's apart" \
	test "$(grep -oE "MAC 02:76:6e:([0-9a-f]{2}:){2}0[ab]," "$WORK/link.out" | sort -u | wc -l)" -eq 2
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

# --queues 3: queue pair 2 of both vNICs on a third thread, q2, whose
# counters `vnic stats` shows under its name and which move (the control
# polls park it, the kernel's own frames land on its queues). A machine with
# fewer than 3 cpus would keep the queues on the sides' threads ("more queue
# pairs than cpus"): there the link runs in a mount namespace of its own in
# which /sys/devices/system/cpu/online, what sysconf reads, says 0-3. Its
# namespaces are then mounted in that mount namespace alone, so this part
# looks at counters only.
REAL_VNIC=$VNIC
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 3 ]; then
	if ! command -v unshare >/dev/null; then
		echo "fewer than 3 cpus and no unshare: --queues 3 not tried"
		echo "$npass passed, $nfail failed"
		[ "$nfail" -eq 0 ]
		exit
	fi
	echo 0-3 >"$WORK/online"
	cat >"$WORK/vnic4" <<EOF2
#!/bin/sh
exec unshare --mount sh -c 'mount --bind "\$1" /sys/devices/system/cpu/online && shift && exec "\$@"' \
	- "$WORK/online" "$REAL_VNIC" "\$@"
EOF2
	chmod +x "$WORK/vnic4"
	VNIC=$WORK/vnic4
fi
NA=vnq3-a-$$
NB=vnq3-b-$$
NAME=vnq3-$$
track_ns "$NA" "$NB"
# q2_moves: cpu_q2.loops is there and grows within 3 s.
q2_moves() {
	local before after
	before=$(ctr "$NAME" cpu_q2.loops)
	sleep 3
	after=$(ctr "$NAME" cpu_q2.loops)
	echo "cpu_q2.loops $before -> $after"
	[ -n "$before" ] && [ -n "$after" ] && [ "$after" -gt "$before" ]
}
# show_has TEXT: `vnic show NAME` has the line TEXT.
show_has() {
	"$VNIC" show "$NAME" | grep -qx "$1"
}
# spin_taken THREAD NS: cpu_THREAD.spin_limit_ns is NS (the thread took a fixed spin up).
spin_taken() {
	[ "$(ctr "$NAME" "cpu_$1.spin_limit_ns")" = "$2" ]
}
# stop_json_reported: SIGINT, status 0, and the JSON report names the profile.
stop_json_reported() {
	local rc
	link_stop "$LINK_PID" INT "$WORK/link.out"
	rc=$?
	LINK_PID=
	[ $rc -eq 0 ] && grep -q '"type": "report"' "$WORK/link.out" &&
		grep -q '"profile": "latency"' "$WORK/link.out"
}
check "vnic link --profile latency --queues 3 comes up" \
	link_pair --quiet --json --profile latency --queues 3 || exit 1
check "three queue pairs on threads of their own" \
	sh -c "! grep -q 'stay on the sides' '$WORK/link.out'"
check "the ready lines name the profile and its options" \
	grep -qx "vnic link: profile latency: --queues 2 --busy-poll-us 50" "$WORK/link.out"
check "thread q2's counters are there and move" q2_moves
check "thread q2 parked by the drivers' control polls" ctr_is "$NAME" cpu_q2.wakeups -gt 0
check "a ring pair's counters beside the sums" ctr_is "$NAME" cable.ring2.ab_tx_frames -ge 0
check "vnic show: thread q2 spins as the profile says" \
	show_has "thread q2: busy-poll-us 50 busy-poll adaptive, .*"
# set_spin: `vnic set` of a fixed 20 us spin, answered for the busy-poll.
set_spin() {
	"$VNIC" set "$NAME" busy-poll fixed busy-poll-us 20 | grep -q "ok: busy-poll changed"
}
check "vnic set busy-poll fixed busy-poll-us 20" set_spin
for t in a b q2; do
	check "vnic show: thread $t at busy-poll-us 20 fixed" \
		show_has "thread $t: busy-poll-us 20 busy-poll fixed, .*"
	check "thread $t took the fixed spin up (cpu_$t.spin_limit_ns 20000)" \
		wait_for 10 spin_taken "$t" 20000
done
check "stops cleanly, the JSON report names the profile" stop_json_reported
VNIC=$REAL_VNIC

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
