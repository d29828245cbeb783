#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# docs/MULTIHOST.md's recipe against the paths it stands beside, on one
# machine: two "host" namespaces joined by a veth underlay, a kernel VXLAN
# device in each, and
#   overlay   iperf3 between the hosts' own VXLAN addresses (no vnic);
#   routed    an application namespace behind each host on a veth, the hosts
#             routing between it and the VXLAN (the kernel's path, no vnic);
#   vnic      an application namespace behind each host on a vNIC backed by
#             the VXLAN device (vnic link --backing vx0 --backing-ns HOST):
#             the defaults (TPACKET_V2, superframes with a vnet header);
#   vnic-plain  the same with --backing-offload off (MTU frames);
#   vnic-v3   the same with --backing-ring v3;
#   vnic-spin the defaults with --busy-poll-us 50 (each vNIC's thread spins
#             up to 50 us, adaptively, before it sleeps: docs/ARCHITECTURE.md
#             section 4);
#   vnic-pin  the defaults with each host's vNIC thread on a core of its own
#             (--threads 1 --pin 0 on host 1, --pin 1 on host 2);
#   vnic-spin-pin  both of the last two;
#   vnic-map  the defaults with --tx-buf map (each driver sends a
#             superpacket from the TAP's buffer instead of copying it into
#             its long-term buffer);
#   vnic-map-frags  --tx-buf map --rx-agg frags (and the receiving driver
#             hands its aggregates up as fragment lists, not copied whole);
#   vnic-t1   the defaults with --threads 1 (a backed vNIC has one datapath
#             thread already: a control that this changes nothing);
#   vnic-t1-spin    --threads 1 --busy-poll-us 50;
#   vnic-map-spin   --tx-buf map --busy-poll-us 50;
#   NAME      any case given with -x NAME=ARGS: ARGS added to vnic link's.
# Throughput: iperf3, one TCP stream. Round trip: sockperf ping-pong over
# UDP, 14-byte messages, the median round trip.
# Every round runs every case; the order of the vnic cases alternates from
# round to round. Prints a markdown table of medians with [min, max] and the
# per-round ratios the recipe is judged by; then, from the vNICs' counters
# and their threads' schedstat around each run (counts, which the machine's
# load does not change as it changes times): per GB of the stream, the two
# vNIC threads' time on a CPU, their sleeps and the wire's frames and send
# syscalls, and the share of the superframes sent with their payload by
# reference (wire.tx_gso_frags); per round trip, the same threads' sleeps,
# epoll_waits (the sleeps' and the busy looks', cpu_a.fd_waits) and time on a
# CPU.
#
# A case named CASE@base runs CASE with the binary -B names: a build of
# another commit, so that a change is measured against what it changes in
# the same run, the two alternating like any other cases.
#
# Usage: bench/multihost.sh [-n ROUNDS] [-d SECONDS] [-u UNDERLAY_MTU] [-m VXLAN_MTU] [-c CASES] [-x NAME=ARGS] [-b VNIC] [-B VNIC] [-p] [OUTDIR]
#   -n ROUNDS        rounds (3)
#   -d SECONDS       each iperf3 and sockperf run (5)
#   -c CASES         the vnic cases to run, comma-separated (default: vnic,
#                    vnic-plain,vnic-v3,vnic-spin; "all" adds the pinned
#                    ones and the vnic-map ones)
#   -x NAME=ARGS     a case of its own, NAME, that runs vnic link with ARGS
#                    added (e.g. -x 'bp20=--busy-poll-us 20'); put NAME in
#                    -c to run it; repeatable
#   -u UNDERLAY_MTU  the veth underlay's MTU (9000)
#   -m VXLAN_MTU     the VXLAN devices' MTU, and so the vNICs' (1500)
#   -b VNIC          the vnic binary (build-rel/src/app/vnic: a Release build)
#   -B VNIC          the vnic binary of the CASE@base cases
#   -p               perf record -g the sending host's vNIC during each vnic
#                    case's first iperf3 (OUTDIR/tput-CASE.perf.data) and
#                    print its top symbols, and from their shares and the
#                    thread's time on a CPU, its time per GB in user space
#                    and in copies (needs perf)
#   -P               a core per host, for every path: host 1's applications
#                    (and its vNIC, the whole process) on cpu 0, host 2's on
#                    cpu 1 (taskset), as on two one-core hosts; the vNIC
#                    cases add --pin none
#   -R               each host's underlay receive on its own core: RPS on u1
#                    to cpu 0 and on u2 to cpu 1, so that host 2's receive
#                    (VXLAN decapsulation, GRO, the AF_PACKET ring's copy)
#                    does not run inside host 1's send
#   OUTDIR           a scratch folder outside the repository for the raw
#                    outputs (default: a new mktemp -d folder)
# Needs root, iproute2, iperf3, sockperf, python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=3
dur=5
umtu=9000
vmtu=1500
vnic=$repo/build-rel/src/app/vnic
vnic_base=
perf=0
hostcore=0
rps=0
cases=vnic,vnic-plain,vnic-v3,vnic-spin
declare -A FLAGS=(
	[vnic]=""
	[vnic-plain]="--backing-offload off"
	[vnic-v3]="--backing-ring v3"
	[vnic-spin]="--busy-poll-us 50"
	[vnic-pin]="--threads 1 --pin %c"
	[vnic-spin-pin]="--busy-poll-us 50 --threads 1 --pin %c"
	[vnic-map]="--tx-buf map"
	[vnic-map-frags]="--tx-buf map --rx-agg frags"
	[vnic-t1]="--threads 1"
	[vnic-t1-spin]="--threads 1 --busy-poll-us 50"
	[vnic-map-spin]="--tx-buf map --busy-poll-us 50"
)
XCASES=
while getopts n:d:u:m:c:x:b:B:pPRh opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) dur=$OPTARG ;;
	u) umtu=$OPTARG ;;
	m) vmtu=$OPTARG ;;
	c) cases=$OPTARG ;;
	x)
		case $OPTARG in
		[A-Za-z0-9]*=*) ;;
		*) echo "bench/multihost.sh: -x '$OPTARG' is not NAME=ARGS" >&2; exit 2 ;;
		esac
		xn=${OPTARG%%=*}
		case $xn in
		*[!A-Za-z0-9_-]*) echo "bench/multihost.sh: -x: '$xn' is not a case name (letters, digits, - and _)" >&2; exit 2 ;;
		esac
		FLAGS[$xn]=${OPTARG#*=}
		XCASES+="$xn=${OPTARG#*=};"
		;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	B) vnic_base=$(realpath -m "$OPTARG") ;;
	p) perf=1 ;;
	P) hostcore=1 ;;
	R) rps=1 ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

[ "$(id -u)" -eq 0 ] || { echo "bench/multihost.sh: needs root" >&2; exit 1; }
for c in ip iperf3 sockperf python3; do
	command -v $c >/dev/null || { echo "bench/multihost.sh: needs $c" >&2; exit 1; }
done
[ "$perf" -eq 0 ] || command -v perf >/dev/null || { echo "bench/multihost.sh: -p needs perf" >&2; exit 1; }
[ -x "$vnic" ] || { echo "bench/multihost.sh: no $vnic (build Release first)" >&2; exit 1; }
if [ $# -gt 0 ]; then
	out=$(realpath -m "$1")
	case "$out/" in
	"$repo"/*) echo "bench/multihost.sh: $out is inside the repository; give a scratch folder" >&2; exit 1 ;;
	esac
	mkdir -p "$out"
else
	out=$(mktemp -d -t vnic-multihost.XXXXXX)
fi
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

H1=vmb-h1-$$
H2=vmb-h2-$$
R1=vmb-r1-$$
R2=vmb-r2-$$
A1=vmb-a1-$$
A2=vmb-a2-$$
PIDS=()
SRV=()

# SIGINT, then (a run must not hang on one that did not stop) SIGKILL after 20 s, said on stderr
stop_vnics() {
	local p i
	for p in "${PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null || continue
		for i in $(seq 200); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$p" 2>/dev/null; then
			echo "bench/multihost.sh: vnic $p still running 20 s after SIGINT: killed" >&2
			kill -KILL "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
}

stop_servers() {
	local p
	for p in "${SRV[@]}"; do
		{ kill "$p"; wait "$p"; } 2>/dev/null || true
	done
	SRV=()
}

cleanup() {
	stop_servers
	stop_vnics
	for n in "$H1" "$H2" "$R1" "$R2" "$A1" "$A2"; do
		ip netns del "$n" 2>/dev/null || true
	done
}
trap cleanup EXIT

# hosts, underlay, VXLAN (10.63.0.h on vx0), and a routed application namespace behind each
for h in 1 2; do
	hn=H$h rn=R$h
	hn=${!hn} rn=${!rn}
	ip netns add "$hn"
	ip netns add "$rn"
	ip -n "$hn" link set lo up
	ip -n "$rn" link set lo up
done
ip -n "$H1" link add u1 mtu "$umtu" type veth peer name u2 mtu "$umtu" netns "$H2"
for h in 1 2; do
	hn=H$h rn=R$h
	hn=${!hn} rn=${!rn}
	o=$((3 - h))
	ip -n "$hn" addr add "192.168.214.$h/24" dev "u$h"
	ip -n "$hn" link set "u$h" up
	ip -n "$hn" link add vx0 type vxlan id 43 local "192.168.214.$h" remote "192.168.214.$o" \
		dstport 4789 dev "u$h"
	ip -n "$hn" link set vx0 mtu "$vmtu" up
	ip -n "$hn" addr add "10.63.0.$h/24" dev vx0
	# the routed path: r (application) -- veth -- host, forwarding onto vx0
	ip -n "$hn" link add "hr$h" mtu "$vmtu" type veth peer name "r$h" mtu "$vmtu" netns "$rn"
	ip -n "$hn" addr add "10.64.$h.1/24" dev "hr$h"
	ip -n "$hn" link set "hr$h" up
	ip -n "$rn" addr add "10.64.$h.2/24" dev "r$h"
	ip -n "$rn" link set "r$h" up
	ip -n "$rn" route add default via "10.64.$h.1"
	ip -n "$hn" route add "10.64.$o.0/24" via "10.63.0.$o"
	ip netns exec "$hn" sysctl -qw net.ipv4.ip_forward=1
	[ "$rps" -eq 0 ] || ip netns exec "$hn" sh -c "echo $h >/sys/class/net/u$h/queues/rx-0/rps_cpus"
done

# With -P, the prefix that puts a command on host H's core
on_core() { # host
	[ "$hostcore" -eq 0 ] || echo "taskset -c $(($1 - 1))"
}

# %c in a case's flags is this host's core (0 or 1)
start_vnics() { # binary flags...
	local h i bin=$1
	shift
	local flags="$*"
	[ "$hostcore" -eq 0 ] || flags="$flags --pin none"
	PIDS=()
	for h in 1 2; do
		hn=H$h an=A$h
		hn=${!hn} an=${!an}
		# shellcheck disable=SC2046,SC2086
		$(on_core "$h") "$bin" link --backing vx0 --backing-ns "$hn" ${flags//%c/$((h - 1))} \
			--new-ns-a "$an" --addr-a "10.61.0.$h/24" --addr6-a none --name "vmb$h-$$" \
			--quiet >"$out/vnic$h.log" 2>&1 &
		PIDS+=($!)
	done
	for h in 1 2; do
		for i in $(seq 600); do
			grep -q "vnic link: up" "$out/vnic$h.log" && break
			sleep 0.05
		done
		grep -q "vnic link: up" "$out/vnic$h.log" || { cat "$out/vnic$h.log" >&2; return 1; }
	done
	# neighbours resolved before anything is timed (a loaded machine may take seconds)
	ip netns exec "$A1" ping -c 1 -w 20 10.61.0.2 >/dev/null
	ip netns exec "$A1" ping -c 2 -i 0.2 -W 2 10.61.0.2 >/dev/null
}

# Both vNICs' counters, prefixed h1. and h2., and their datapath threads'
# (cpu a: a backed vNIC has one) time on a CPU and waiting for one
snapshot() { # file
	local h t
	: >"$1"
	[ ${#PIDS[@]} -eq 2 ] || return 0
	for h in 1 2; do
		"$vnic" stats "vmb$h-$$" --all | sed "s/^/h$h./" >>"$1"
		for t in /proc/"${PIDS[$((h - 1))]}"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = a ] || continue
			awk -v h="$h" '{ printf "h%s.sched.oncpu_ns %.0f\nh%s.sched.runq_ns %.0f\n", h, $1, h, $2 }' \
				"$t/schedstat" >>"$1"
		done
	done
}

# servers run on host 2, clients on host 1
server() { # ns cmd...
	local ns=$1
	shift
	# shellcheck disable=SC2046
	ip netns exec "$ns" $(on_core 2) "$@" >/dev/null 2>&1 &
	SRV+=($!)
	sleep 0.3
}

tput() { # case round client-ns server-ns server-addr
	server "$4" iperf3 -s -1 -p 5209
	snapshot "$out/$1.$2.before"
	local rec=''
	if [ "$perf" -eq 1 ] && [ "$2" -eq 1 ] && [ ${#PIDS[@]} -eq 2 ]; then
		perf record -q -g -p "${PIDS[0]}" -o "$out/$1.perf.data" -- sleep "$dur" >/dev/null 2>&1 &
		rec=$!
	fi
	# shellcheck disable=SC2046
	ip netns exec "$3" $(on_core 1) iperf3 -c "$5" -p 5209 -t "$dur" -J >"$out/$1.$2.json"
	[ -z "$rec" ] || wait "$rec" || true
	snapshot "$out/$1.$2.after"
	stop_servers
	python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e9))' \
		"$out/$1.$2.json" >"$out/$1.$2.val"
}

rtt() { # case round client-ns server-ns server-addr
	server "$4" sockperf server -i "$5" -p 11111
	snapshot "$out/$1.$2.before"
	# shellcheck disable=SC2046
	ip netns exec "$3" $(on_core 1) sockperf ping-pong -i "$5" -p 11111 -t "$dur" -m 14 >"$out/$1.$2.txt" 2>&1
	snapshot "$out/$1.$2.after"
	stop_servers
	# sockperf reports half the round trip; the table shows the round trip at
	# the median (the mean moves with every preemption on a shared machine)
	python3 -c 'import re,sys; m=re.search(r"percentile 50\.000 =\s*([0-9.]+)", open(sys.argv[1]).read()); print("%.1f" % (2 * float(m.group(1))))' \
		"$out/$1.$2.txt" >"$out/$1.$2.val"
}

[ "$cases" = all ] && cases=vnic,vnic-plain,vnic-v3,vnic-spin,vnic-pin,vnic-spin-pin,vnic-map,vnic-map-frags
IFS=, read -r -a CASES <<<"$cases"
for c in "${CASES[@]}"; do
	[ -n "${FLAGS[${c%@base}]+set}" ] || { echo "bench/multihost.sh: no case '$c' (${!FLAGS[*]})" >&2; exit 2; }
	case $c in
	*@base) [ -x "$vnic_base" ] || { echo "bench/multihost.sh: case $c needs -B VNIC" >&2; exit 2; } ;;
	esac
done

vnic_case() { # index round
	local name=${CASES[$1]} bin=$vnic
	[ "$name" = "${name%@base}" ] || bin=$vnic_base
	# shellcheck disable=SC2086
	start_vnics "$bin" ${FLAGS[${name%@base}]}
	tput "tput-$name" "$2" "$A1" "$A2" 10.61.0.2
	rtt "rtt-$name" "$2" "$A1" "$A2" 10.61.0.2
	stop_vnics
}

if [ "$hostcore" -eq 1 ]; then
	for c in "${CASES[@]}"; do
		case " ${FLAGS[${c%@base}]} " in
		*" --pin "*) echo "bench/multihost.sh: -P places each host itself; case $c has its own --pin" >&2; exit 2 ;;
		esac
	done
fi

[ -z "$vnic_base" ] || echo "bench/multihost.sh: CASE@base cases run $vnic_base" >&2
echo "bench/multihost.sh: commit $commit, $rounds rounds of $dur s, underlay MTU $umtu, VXLAN MTU $vmtu, cases $cases; raw outputs in $out" >&2
[ "$hostcore" -eq 0 ] || echo "bench/multihost.sh: a core per host (-P): host 1 on cpu 0, host 2 on cpu 1" >&2
[ "$rps" -eq 0 ] || echo "bench/multihost.sh: each host's underlay receive on its core (-R): RPS u1 cpu 0, u2 cpu 1" >&2
[ -z "$XCASES" ] || echo "bench/multihost.sh: cases of -x: $XCASES" >&2
cut -d' ' -f1-3 /proc/loadavg | sed 's/^/load before: /' >&2
for r in $(seq "$rounds"); do
	tput tput-overlay "$r" "$H1" "$H2" 10.63.0.2
	rtt rtt-routed "$r" "$R1" "$R2" 10.64.2.2
	# the vnic cases in turn, each round starting one further along
	for i in $(seq 0 $((${#CASES[@]} - 1))); do
		vnic_case $(((i + r - 1) % ${#CASES[@]})) "$r"
	done
	echo "round $r done" >&2
done

if [ "$perf" -eq 1 ]; then
	for c in "${CASES[@]}"; do
		[ -f "$out/tput-$c.perf.data" ] || continue
		perf report -i "$out/tput-$c.perf.data" --no-children -g none --sort sym --stdio 2>/dev/null |
			grep -E '^ +[0-9.]+%' >"$out/tput-$c.perf.txt" || true
	done
fi
python3 - "$out" "$rounds" "$cases" "$perf" "$XCASES" <<'EOF'
import re, statistics, sys
out, n, cases, perf = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4] == "1"
def vals(case):
    return [float(open(f"{out}/{case}.{r}.val").read()) for r in range(1, n + 1)]
def cell(v):
    return f"{statistics.median(v):g} [{min(v):g}, {max(v):g}]"
def ratio(a, b):
    return [x / y for x, y in zip(vals(a), vals(b))]
labels = {"vnic": "vnic link --backing (defaults)", "vnic-plain": "vnic, --backing-offload off",
          "vnic-v3": "vnic, --backing-ring v3", "vnic-spin": "vnic, --busy-poll-us 50",
          "vnic-pin": "vnic, --threads 1 --pin (a core per host)",
          "vnic-spin-pin": "vnic, --busy-poll-us 50, a core per host",
          "vnic-map": "vnic, --tx-buf map", "vnic-map-frags": "vnic, --tx-buf map --rx-agg frags",
          "vnic-t1": "vnic, --threads 1", "vnic-t1-spin": "vnic, --threads 1 --busy-poll-us 50",
          "vnic-map-spin": "vnic, --tx-buf map --busy-poll-us 50"}
for x in filter(None, sys.argv[5].split(";")):
    name, args = x.split("=", 1)
    labels[name] = f"vnic, {args} ({name})"
print("| path | TCP 1 stream, Gbit/s | UDP ping-pong round trip (median), us |")
print("|---|---:|---:|")
print(f"| overlay (hosts over VXLAN, no vnic) | {cell(vals('tput-overlay'))} | |")
print(f"| routed (veth + forwarding + VXLAN, no vnic) | | {cell(vals('rtt-routed'))} |")
def label(c):
    b = c.split("@")[0]
    return labels[b] + (" (the -B build)" if b != c else "")
for c in cases:
    print(f"| {label(c)} | {cell(vals('tput-' + c))} | {cell(vals('rtt-' + c))} |")
print()
for c in cases:
    t = ratio(f"tput-{c}", "tput-overlay")
    l = ratio(f"rtt-{c}", "rtt-routed")
    print(f"- {c}: throughput / overlay {statistics.median(t):.2f}x [{min(t):.2f}, {max(t):.2f}]; "
          f"round trip / routed {statistics.median(l):.2f}x [{min(l):.2f}, {max(l):.2f}]")

def ctrs(path):
    c = {}
    for line in open(path):
        f = line.split()
        if len(f) == 2:
            try:
                c[f[0]] = float(f[1])
            except ValueError:
                pass
    return c
def delta(case, r):
    a, b = ctrs(f"{out}/{case}.{r}.before"), ctrs(f"{out}/{case}.{r}.after")
    return lambda k: b.get(k, 0) - a.get(k, 0)
def per_gb(c, r):
    d = delta("tput-" + c, r)
    gb = d("h2.wire.rx_bytes") / 1e9 or 1
    return {"cpu1": d("h1.sched.oncpu_ns") / 1e6 / gb, "cpu2": d("h2.sched.oncpu_ns") / 1e6 / gb,
            "sl1": d("h1.cpu_a.sleeps") / gb, "sl2": d("h2.cpu_a.sleeps") / gb,
            "fr": d("h1.wire.tx_frames") / gb, "sys": d("h1.wire.tx_syscalls") / gb,
            "whole": d("h2.wire.rx_gso_whole") / max(d("h2.wire.rx_frames"), 1),
            "ref": d("h1.wire.tx_gso_frags") / max(d("h1.wire.tx_gso_frames"), 1)}
def per_rt(c, r):
    m = re.search(r"\[Total Run\].*SentMessages=(\d+)", open(f"{out}/rtt-{c}.{r}.txt").read())
    k = int(m.group(1)) if m else 1
    d = delta("rtt-" + c, r)
    return {"cpu1": d("h1.sched.oncpu_ns") / 1e3 / k, "cpu2": d("h2.sched.oncpu_ns") / 1e3 / k,
            "sl1": d("h1.cpu_a.sleeps") / k, "sl2": d("h2.cpu_a.sleeps") / k,
            "ep1": d("h1.cpu_a.fd_waits") / k, "ep2": d("h2.cpu_a.fd_waits") / k,
            "q1": d("h1.sched.runq_ns") / 1e3 / k, "q2": d("h2.sched.runq_ns") / 1e3 / k}
def med(rows, k):
    return statistics.median(x[k] for x in rows)
print()
print("Per GB of the stream (host 1 sends, host 2 receives), from the vNICs' counters and their threads' schedstat, median over the rounds:")
print()
print("| case | host 1 thread on a CPU, ms | host 2, ms | host 1 sleeps | host 2 sleeps | wire frames sent | send syscalls | received whole | sent by reference |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for c in cases:
    rows = [per_gb(c, r) for r in range(1, n + 1)]
    print(f"| {c} | {med(rows, 'cpu1'):.0f} | {med(rows, 'cpu2'):.0f} | {med(rows, 'sl1'):.0f} | {med(rows, 'sl2'):.0f} | "
          f"{med(rows, 'fr'):.0f} | {med(rows, 'sys'):.0f} | {med(rows, 'whole'):.2f} | {med(rows, 'ref'):.2f} |")
print()
print("Per round trip of the ping-pong (over the messages sent, warm-up included: a mean), median over the rounds:")
print()
print("| case | host 1 thread on a CPU, us | host 2, us | waiting for a CPU, us (1, 2) | host 1 sleeps | host 2 sleeps | epoll_waits (1, 2) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for c in cases:
    rows = [per_rt(c, r) for r in range(1, n + 1)]
    print(f"| {c} | {med(rows, 'cpu1'):.1f} | {med(rows, 'cpu2'):.1f} | {med(rows, 'q1'):.1f}, {med(rows, 'q2'):.1f} | "
          f"{med(rows, 'sl1'):.2f} | {med(rows, 'sl2'):.2f} | {med(rows, 'ep1'):.2f}, {med(rows, 'ep2'):.2f} |")
if perf:
    for c in cases:
        try:
            top = open(f"{out}/tput-{c}.perf.txt").readlines()[:12]
        except OSError:
            continue
        print(f"\nHost 1's vNIC (the sender) during {c}'s first iperf3, self time by symbol:\n")
        print("".join(top), end="")
    print("\nHost 1's vNIC (the sender) during each case's first iperf3, per GB received: its thread's time on a CPU")
    print("(schedstat) split by the profile's shares (user space, and the copy functions in each):\n")
    copy = re.compile(r"memmove|memcpy|copy_(to|from)_iter|copy_user")
    print("| case | on a CPU, ms | user space, ms | copies in user space, ms | copies in the kernel, ms |")
    print("|---|---:|---:|---:|---:|")
    for c in cases:
        try:
            rows = [l.split() for l in open(f"{out}/tput-{c}.perf.txt")]
        except OSError:
            continue
        share = {"u": 0.0, "uc": 0.0, "kc": 0.0}
        for r in rows:
            pct, space, sym = float(r[0].rstrip("%")) / 100, r[1], " ".join(r[2:])
            user = space == "[.]"
            share["u"] += pct if user else 0
            if copy.search(sym):
                share["uc" if user else "kc"] += pct
        a, b = ctrs(f"{out}/tput-{c}.1.before"), ctrs(f"{out}/tput-{c}.1.after")
        gb = (b.get("h2.wire.rx_bytes", 0) - a.get("h2.wire.rx_bytes", 0)) / 1e9 or 1
        ms = (b.get("h1.sched.oncpu_ns", 0) - a.get("h1.sched.oncpu_ns", 0)) / 1e6 / gb
        print(f"| {c} | {ms:.0f} | {ms * share['u']:.0f} | {ms * share['uc']:.0f} | {ms * share['kc']:.0f} |")
EOF
cut -d' ' -f1-3 /proc/loadavg | sed 's/^/load after: /' >&2
