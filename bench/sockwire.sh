#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The socket wire (docs/LINK.md, "--wire SPEC") against the in-process
# cable, on one machine: two `vnic link` instances, each with its own
# namespace, joined over 127.0.0.1 by
#   udp     --wire dgram:udp:127.0.0.1:P1,127.0.0.1:P2 (and the reverse)
#   tcp     --wire stream:tcp:127.0.0.1:P,server and stream:tcp:127.0.0.1:P
# beside one `vnic link` whose two vNICs share the in-process cable (cable).
# One TCP stream (iperf3) and the UDP ping-pong round trip (sockperf, 14-byte
# messages, median) between the two namespaces. Every round runs the three
# cases, each round starting one further along. Prints a markdown table of
# medians with [min, max] and the per-round ratios to the cable.
#
# Usage: bench/sockwire.sh [-n ROUNDS] [-d SECONDS] [-b VNIC] [OUTDIR]
#   -n ROUNDS    rounds (3)
#   -d SECONDS   each iperf3 and sockperf run (5)
#   -b VNIC      the vnic binary (build-rel/src/app/vnic: a Release build)
#   OUTDIR       a scratch folder outside the repository for the raw outputs
#                (default: a new mktemp -d folder)
# Needs root, iproute2, iperf3, sockperf, python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=3
dur=5
vnic=$repo/build-rel/src/app/vnic
while getopts n:d:b:h opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) dur=$OPTARG ;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

[ "$(id -u)" -eq 0 ] || { echo "bench/sockwire.sh: needs root" >&2; exit 1; }
for c in ip iperf3 sockperf python3; do
	command -v $c >/dev/null || { echo "bench/sockwire.sh: needs $c" >&2; exit 1; }
done
[ -x "$vnic" ] || { echo "bench/sockwire.sh: no $vnic (build Release first)" >&2; exit 1; }
if [ $# -gt 0 ]; then
	out=$(realpath -m "$1")
	case "$out/" in
	"$repo"/*) echo "bench/sockwire.sh: $out is inside the repository; give a scratch folder" >&2; exit 1 ;;
	esac
	mkdir -p "$out"
else
	out=$(mktemp -d -t vnic-sockwire.XXXXXX)
fi
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

N1=vsb-1-$$
N2=vsb-2-$$
PIDS=()
SRV=()

stop_all() {
	local p
	for p in "${SRV[@]}"; do
		{ kill "$p"; wait "$p"; } 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		{ kill -INT "$p"; wait "$p"; } 2>/dev/null || true
	done
	SRV=()
	PIDS=()
}
trap 'stop_all; ip netns del $N1 2>/dev/null; ip netns del $N2 2>/dev/null' EXIT

free_port() {
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_STREAM if sys.argv[1]=="tcp" else socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"
}

up() { # log
	local i
	for i in $(seq 400); do
		grep -q "vnic link: up" "$1" && return 0
		sleep 0.05
	done
	cat "$1" >&2
	return 1
}

start_case() { # case
	local p1 p2 flags1 flags2
	case $1 in
	cable)
		"$vnic" link --new-ns-a "$N1" --new-ns-b "$N2" --addr-a 10.67.0.1/24 --addr-b 10.67.0.2/24 \
			--addr6-a none --addr6-b none --no-ctl --quiet >"$out/cable.log" 2>&1 &
		PIDS+=($!)
		up "$out/cable.log"
		return
		;;
	udp)
		p1=$(free_port udp)
		p2=$(free_port udp)
		flags1="dgram:udp:127.0.0.1:$p1,127.0.0.1:$p2"
		flags2="dgram:udp:127.0.0.1:$p2,127.0.0.1:$p1"
		;;
	tcp)
		p1=$(free_port tcp)
		flags1="stream:tcp:127.0.0.1:$p1,server"
		flags2="stream:tcp:127.0.0.1:$p1"
		;;
	esac
	"$vnic" link --wire "$flags1" --new-ns-a "$N1" --addr-a 10.67.0.1/24 --addr6-a none \
		--no-ctl --quiet >"$out/w1.log" 2>&1 &
	PIDS+=($!)
	up "$out/w1.log"
	"$vnic" link --wire "$flags2" --new-ns-a "$N2" --addr-a 10.67.0.2/24 --addr6-a none \
		--no-ctl --quiet >"$out/w2.log" 2>&1 &
	PIDS+=($!)
	up "$out/w2.log"
}

server() { # cmd...
	ip netns exec "$N2" "$@" >/dev/null 2>&1 &
	SRV+=($!)
	sleep 0.3
}

run_case() { # case round
	local c=$1 r=$2 i
	start_case "$c"
	# the wire carries (a stream client connects in the background) and neighbours are resolved
	for i in $(seq 50); do
		ip netns exec "$N1" ping -c 1 -W 1 10.67.0.2 >/dev/null 2>&1 && break
	done
	server iperf3 -s -1 -p 5210
	ip netns exec "$N1" iperf3 -c 10.67.0.2 -p 5210 -t "$dur" -J >"$out/tput-$c.$r.json"
	python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e9))' \
		"$out/tput-$c.$r.json" >"$out/tput-$c.$r.val"
	server sockperf server -i 10.67.0.2 -p 11112
	ip netns exec "$N1" sockperf ping-pong -i 10.67.0.2 -p 11112 -t "$dur" -m 14 >"$out/rtt-$c.$r.txt" 2>&1
	python3 -c 'import re,sys; m=re.search(r"percentile 50\.000 =\s*([0-9.]+)", open(sys.argv[1]).read()); print("%.1f" % (2 * float(m.group(1))))' \
		"$out/rtt-$c.$r.txt" >"$out/rtt-$c.$r.val"
	stop_all
	# the namespaces go with the instances that made them
	sleep 0.5
}

CASES=(cable udp tcp)
echo "bench/sockwire.sh: commit $commit, $rounds rounds of $dur s; raw outputs in $out" >&2
cut -d' ' -f1-3 /proc/loadavg | sed 's/^/load before: /' >&2
for r in $(seq "$rounds"); do
	for i in $(seq 0 $((${#CASES[@]} - 1))); do
		run_case "${CASES[$(((i + r - 1) % ${#CASES[@]}))]}" "$r"
	done
	echo "round $r done" >&2
done

python3 - "$out" "$rounds" <<'EOF'
import sys, statistics
out, n = sys.argv[1], int(sys.argv[2])
def vals(kind, case):
    return [float(open(f"{out}/{kind}-{case}.{r}.val").read()) for r in range(1, n + 1)]
def cell(v):
    return f"{statistics.median(v):g} [{min(v):g}, {max(v):g}]"
names = {"cable": "one vnic link, the in-process cable", "udp": "two instances, --wire dgram:udp",
         "tcp": "two instances, --wire stream:tcp"}
print("| path | TCP 1 stream, Gbit/s | UDP ping-pong round trip (median), us |")
print("|---|---:|---:|")
for c, label in names.items():
    print(f"| {label} | {cell(vals('tput', c))} | {cell(vals('rtt', c))} |")
print()
for c in ("udp", "tcp"):
    t = [a / b for a, b in zip(vals("tput", c), vals("tput", "cable"))]
    l = [a / b for a, b in zip(vals("rtt", c), vals("rtt", "cable"))]
    print(f"- {c} / cable: throughput {statistics.median(t):.2f}x [{min(t):.2f}, {max(t):.2f}], "
          f"round trip {statistics.median(l):.2f}x [{min(l):.2f}, {max(l):.2f}]")
EOF
cut -d' ' -f1-3 /proc/loadavg | sed 's/^/load after: /' >&2
