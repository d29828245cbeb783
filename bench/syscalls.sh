#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Syscalls of vnic link per request/response transaction: one sockperf TCP
# ping-pong flow through vnic link between two namespaces, and perf stat
# counting the vnic process's syscalls (the ones its datapath makes) while
# it runs. A transaction is one request and its reply: one frame each way,
# so one TAP writev each way; the counts are divided by half the writevs.
#
#   netns $NS1 (10.99.2.1)  <== vnic link ==>  netns $NS2 (10.99.2.2)
#   sockperf ping-pong -m 14                   sockperf server
#
# Usage: bench/syscalls.sh [--vnic PATH] [--time S] [--vnic-args "ARGS"]
# Needs root, perf (package linux-perf) and sockperf. Prints the syscalls per
# transaction and sockperf's latency summary (half the round trip).

set -u

VNIC=build/src/app/vnic
T=5
VNIC_ARGS=""
while [ $# -gt 0 ]; do
	case $1 in
	--vnic) VNIC=$2; shift 2 ;;
	--time) T=$2; shift 2 ;;
	--vnic-args) VNIC_ARGS=$2; shift 2 ;;
	-h | --help) sed -n '3,16p' "$0"; exit 0 ;;
	*) echo "syscalls: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

[ "$(id -u)" -eq 0 ] || { echo "syscalls: needs root (namespaces, TAPs)" >&2; exit 1; }
for t in perf sockperf ip; do
	command -v $t >/dev/null || { echo "syscalls: needs $t" >&2; exit 1; }
done
[ -x "$VNIC" ] || { echo "syscalls: no $VNIC (build first, or --vnic PATH)" >&2; exit 1; }

NS1=vns-a-$$
NS2=vns-b-$$
A1=10.99.2.1
A2=10.99.2.2
WORK=$(mktemp -d /tmp/vnic-syscalls.XXXXXX)
VPID=
SPID=

cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$VPID" ] && kill -INT "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
	ip netns del "$NS1" 2>/dev/null
	ip netns del "$NS2" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

ip netns add "$NS1" && ip netns add "$NS2" || exit 1
ip -n "$NS1" link set lo up
ip -n "$NS2" link set lo up
# shellcheck disable=SC2086
"$VNIC" link --ns-a "$NS1" --ns-b "$NS2" --addr-a $A1/24 --addr-b $A2/24 \
	--addr6-a none --addr6-b none --no-ctl --quiet $VNIC_ARGS >"$WORK/vnic.out" 2>&1 &
VPID=$!
for i in $(seq 50); do
	ip netns exec "$NS1" ping -c 1 -W 1 $A2 >/dev/null 2>&1 && break
	if [ "$i" = 50 ]; then
		echo "syscalls: the link did not come up" >&2
		cat "$WORK/vnic.out" >&2
		exit 1
	fi
	sleep 0.2
done
ip netns exec "$NS2" sockperf server --tcp -i $A2 -p 11111 >/dev/null 2>&1 &
SPID=$!
sleep 1
# The client runs a second longer on each side of the count: no start or end in it.
ip netns exec "$NS1" sockperf ping-pong --tcp -i $A2 -p 11111 -m 14 -t $((T + 2)) \
	>"$WORK/sockperf.out" 2>&1 &
CPID=$!
sleep 1
EVENTS=
for s in epoll_pwait2 epoll_pwait epoll_wait epoll_ctl read write readv writev futex sched_yield \
	recvfrom sendto; do
	EVENTS=$EVENTS${EVENTS:+,}syscalls:sys_enter_$s
done
perf stat -e "$EVENTS" -p "$VPID" -o "$WORK/stat.out" -- sleep "$T" || exit 1
wait $CPID

grep -E "Summary|percentile (50|99)\.000" "$WORK/sockperf.out"
awk '/syscalls:/ {
	gsub(",", "", $1); n = $2; sub("syscalls:sys_enter_", "", n); v[n] = $1; tot += $1
} END {
	tx = v["writev"] / 2
	if (tx < 1) { print "syscalls: no transactions counted"; exit 1 }
	printf "%d transactions in the window; syscalls per transaction:\n", tx
	for (n in v) if (v[n]) printf "  %-14s %6.2f\n", n, v[n] / tx
	printf "  %-14s %6.2f\n", "total", tot / tx
}' "$WORK/stat.out"
