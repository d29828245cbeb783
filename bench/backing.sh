#!/usr/bin/env bash
# AF_PACKET against AF_XDP under one backed vNIC (docs/LINK.md, "--backing
# IFNAME"), and AF_PACKET with its thread spinning before it sleeps
# (--busy-poll-us 50, what vnic link --help recommends for latency), the
# cases taking turns in every round (each round starts one further along)
# so that all see the same machine:
#
#   netns bk-vnic          netns bk-host                  netns bk-peer
#   vnic0 10.97.0.1 -- vnic link --backing vb0 --backing-ns bk-host
#                          vb0 <========== veth ==========> vp0 10.97.0.2
#
# Throughput: iperf3, one TCP stream, each way (out: from the vNIC's
# namespace to the peer; in: back). Round trip: sockperf ping-pong over UDP,
# 14-byte messages, the median round trip. AF_PACKET runs with its defaults
# (superframes with a vnet header, TPACKET_V2); AF_XDP carries MTU frames,
# and the peer's tx checksumming is off while it runs (a veth peer's kernel
# leaves its checksums partial, which AF_XDP cannot tell: docs/LINK.md).
# Prints a markdown table of medians with [min, max] over the rounds, and
# the AF_XDP / AF_PACKET ratio of each round; then where a round trip's time
# goes on the vNIC's side, from its counters (vnic stats) across the
# ping-pong: the CPU time of its threads (the kernel's send path included:
# a send runs the peer's receive in the same syscall) and their time waiting
# for a CPU (/proc/PID/task/*/schedstat), its sleeps, its looks at its fds
# (epoll_wait, the sleeps' included), the backing's notifications and its
# send syscalls, each per round trip.
#
# Usage: bench/backing.sh [-n ROUNDS] [-d SECONDS] [-c CASES] [-b VNIC] [OUTDIR]
#   -n ROUNDS    rounds (3)
#   -d SECONDS   each iperf3 and sockperf run (5)
#   -c CASES     comma-separated, of afpacket, afxdp, afpacket-spin
#                (default: all three)
#   -b VNIC      the vnic binary (the repository's build-rel/src/app/vnic:
#                a Release build, with libxdp)
#   OUTDIR       where every raw output goes: a scratch folder outside the
#                repository (default: a new mktemp -d folder)
#
# Needs root, iproute2, ethtool, iperf3, sockperf, python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=3
dur=5
vnic=$repo/build-rel/src/app/vnic
cases=afpacket,afxdp,afpacket-spin
while getopts n:d:c:b:h opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) dur=$OPTARG ;;
	c) cases=$OPTARG ;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

[ "$(id -u)" -eq 0 ] || { echo "bench/backing.sh: needs root" >&2; exit 1; }
for c in ip ethtool iperf3 sockperf python3; do
	command -v $c >/dev/null || { echo "bench/backing.sh: needs $c" >&2; exit 1; }
done
[ -x "$vnic" ] || { echo "bench/backing.sh: no $vnic (build Release first)" >&2; exit 1; }
if [ $# -gt 0 ]; then
	out=$(realpath -m "$1")
	case "$out/" in
	"$repo"/*) echo "bench/backing.sh: $out is inside the repository; give a scratch folder" >&2; exit 1 ;;
	esac
	mkdir -p "$out"
else
	out=$(mktemp -d -t vnic-backing.XXXXXX)
fi
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

HOST=bk-host PEER=bk-peer VNS=bk-vnic
for n in $HOST $PEER $VNS; do
	if ip netns list | grep -qw "$n"; then
		echo "bench/backing.sh: namespace $n exists; remove it first (ip netns del $n)" >&2
		exit 1
	fi
done

PIDS=() SRV=()
stop_servers() {
	local p
	for p in "${SRV[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${SRV[@]}"; do wait "$p" 2>/dev/null || true; done
	SRV=()
}
stop_vnic() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}
cleanup() {
	stop_servers
	stop_vnic
	ip netns del $HOST 2>/dev/null || true
	ip netns del $PEER 2>/dev/null || true
}
trap cleanup EXIT

ip netns add $HOST
ip netns add $PEER
ip -n $HOST link add vb0 type veth peer name vp0 netns $PEER
ip -n $PEER addr add 10.97.0.2/24 dev vp0
ip -n $HOST link set vb0 up
ip -n $PEER link set vp0 up
ip -n $PEER link set lo up

start_vnic() { # name round mode [flags...]
	local log=$out/vnic.$1.$2.log mode=$3 i
	shift 3
	"$vnic" link --backing vb0 --backing-ns $HOST --backing-mode "$mode" "$@" --new-ns-a $VNS \
		--addr-a 10.97.0.1/24 --addr6-a none --name "bk-$$" --quiet >"$log" 2>&1 &
	PIDS+=($!)
	for i in $(seq 600); do
		grep -q "vnic link: up" "$log" && break
		sleep 0.05
	done
	grep -q "vnic link: up" "$log" || { cat "$log" >&2; return 1; }
	# neighbours resolved before anything is timed
	ip netns exec $VNS ping -c 2 -i 0.2 -W 2 10.97.0.2 >/dev/null
}

server() { # ns cmd...
	local ns=$1
	shift
	ip netns exec "$ns" "$@" >/dev/null 2>&1 &
	SRV+=($!)
	sleep 0.3
}

tput() { # case round iperf3-flags...
	local name=$1 round=$2
	shift 2
	server $PEER iperf3 -s -1 -p 5209
	ip netns exec $VNS iperf3 -c 10.97.0.2 -p 5209 -t "$dur" -J "$@" >"$out/$name.$round.json"
	stop_servers
	python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e9))' \
		"$out/$name.$round.json" >"$out/$name.$round.val"
}

# The vNIC's counters, and its datapath thread's (cpu a: vnic link --backing
# has one) time on a CPU and waiting for one
snapshot() { # file
	local t
	"$vnic" stats "bk-$$" --all >"$1"
	for t in /proc/"${PIDS[0]}"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = a ] || continue
		awk '{ printf "sched.oncpu_ns %.0f\nsched.runq_ns %.0f\n", $1, $2 }' "$t/schedstat" >>"$1"
	done
}

rtt() { # case round
	server $PEER sockperf server -i 10.97.0.2 -p 11111
	snapshot "$out/$1.$2.before"
	ip netns exec $VNS sockperf ping-pong -i 10.97.0.2 -p 11111 -t "$dur" -m 14 \
		>"$out/$1.$2.txt" 2>&1
	snapshot "$out/$1.$2.after"
	stop_servers
	# sockperf reports half the round trip; the table shows the round trip at
	# the median (the mean moves with every preemption on a shared machine)
	python3 -c 'import re,sys; m=re.search(r"percentile 50\.000 =\s*([0-9.]+)", open(sys.argv[1]).read()); print("%.1f" % (2 * float(m.group(1))))' \
		"$out/$1.$2.txt" >"$out/$1.$2.val"
}

declare -A FLAGS=(
	[afpacket]="afpacket"
	[afxdp]="afxdp"
	[afpacket-spin]="afpacket --busy-poll-us 50"
)
IFS=, read -r -a CASES <<<"$cases"
for c in "${CASES[@]}"; do
	[ -n "${FLAGS[$c]+set}" ] || { echo "bench/backing.sh: no case '$c' (${!FLAGS[*]})" >&2; exit 2; }
done

run_case() { # case round
	local name=$1 r=$2 csum=on
	[ "$name" = afxdp ] && csum=off
	ip netns exec $PEER ethtool -K vp0 tx $csum >/dev/null
	cut -d' ' -f1 /proc/loadavg >"$out/$name.$r.load"
	# shellcheck disable=SC2086
	start_vnic "$name" "$r" ${FLAGS[$name]}
	tput "out-$name" "$r"
	tput "in-$name" "$r" -R
	rtt "rtt-$name" "$r"
	stop_vnic
}

echo "bench/backing.sh: commit $commit, $rounds rounds of $dur s, cases $cases; raw outputs in $out" >&2
for r in $(seq "$rounds"); do
	for i in $(seq 0 $((${#CASES[@]} - 1))); do
		run_case "${CASES[$(((i + r - 1) % ${#CASES[@]}))]}" "$r"
	done
	echo "bench/backing.sh: round $r of $rounds done" >&2
done

python3 - "$out" "$rounds" "$dur" "$commit" "$cases" <<'PY'
import os, re, statistics, sys
out, rounds, dur, commit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cases = sys.argv[5].split(',')

def val(name, r):
    with open(os.path.join(out, f'{name}.{r}.val')) as f:
        return float(f.read())

def cell(v, fmt='{:g}'):
    return f'{fmt.format(statistics.median(v))} [{fmt.format(min(v))}, {fmt.format(max(v))}]'

loads = []
for f in os.listdir(out):
    if f.endswith('.load'):
        loads.append(float(open(os.path.join(out, f)).read().split()[0]))
mode = '?'
if 'afxdp' in cases:
    m = re.search(r'\(AF_XDP, ([^,]+),', open(os.path.join(out, 'vnic.afxdp.1.log')).read())
    if m:
        mode = m.group(1)
print(f'`bench/backing.sh -n {rounds} -d {dur} -c {",".join(cases)}` at commit {commit}: {rounds} rounds, '
      f'the cases taking turns (AF_XDP: {mode}); median [min, max] over the rounds.')
if loads:
    print(f'1-minute load average at the start of the runs: median {statistics.median(loads):.2f} '
          f'[{min(loads):.2f}, {max(loads):.2f}] on {os.cpu_count()} CPUs.')
print()
print('| backing | TCP out, Gbit/s | TCP in, Gbit/s | UDP ping-pong round trip (median), us |')
print('|---|---:|---:|---:|')
names = {'afpacket': '`--backing-mode afpacket` (the default)', 'afxdp': '`--backing-mode afxdp`',
         'afpacket-spin': '`--busy-poll-us 50` (AF_PACKET)'}
short = {'afxdp': 'AF_XDP', 'afpacket-spin': '`--busy-poll-us 50`'}
cols = ('out', 'in', 'rtt')
for mode_ in cases:
    row = [cell([val(f'{c}-{mode_}', r) for r in range(1, rounds + 1)]) for c in cols]
    print(f'| {names[mode_]} | ' + ' | '.join(row) + ' |')
for mode_ in cases:
    if mode_ == 'afpacket' or 'afpacket' not in cases:
        continue
    ratio = [cell([val(f'{c}-{mode_}', r) / val(f'{c}-afpacket', r) for r in range(1, rounds + 1)],
                  '{:.2f}') for c in cols]
    print(f'| {short[mode_]} / AF_PACKET, per round | ' + ' | '.join(ratio) + ' |')

def ctrs(path):
    c = {}
    for line in open(path):
        f = line.split()
        if len(f) == 2 and f[1].isdigit():
            c[f[0]] = int(f[1])
    return c

def per_rt(mode_, r):
    # every message sockperf sent in the run, warm-up included, as the counters are
    m = re.search(r'\[Total Run\].*SentMessages=(\d+)', open(os.path.join(out, f'rtt-{mode_}.{r}.txt')).read())
    n = int(m.group(1))
    a, b = ctrs(os.path.join(out, f'rtt-{mode_}.{r}.before')), ctrs(os.path.join(out, f'rtt-{mode_}.{r}.after'))
    d = lambda k: (b.get(k, 0) - a.get(k, 0)) / n
    return {'oncpu': d('sched.oncpu_ns') / 1000, 'runq': d('sched.runq_ns') / 1000, 'sleeps': d('cpu_a.sleeps'), 'looks': d('cpu_a.fd_waits'),
            'notifies': d('wire.rx_notifies'),
            'sends': d('wire.tx_syscalls') if 'wire.tx_syscalls' in b else d('wire.tx_kicks')}

print()
print("Per round trip of the ping-pong, on the vNIC's thread: each counter's change over the run over the messages sent, warm-up included (a mean), median over the rounds:")
print()
print('| backing | round trip, us | on a CPU, us | waiting for a CPU, us | sleeps | fd looks | backing notifications | send syscalls |')
print('|---|---:|---:|---:|---:|---:|---:|---:|')
for mode_ in cases:
    rows = [per_rt(mode_, r) for r in range(1, rounds + 1)]
    med = lambda k: statistics.median(x[k] for x in rows)
    rt = statistics.median(val(f'rtt-{mode_}', r) for r in range(1, rounds + 1))
    print(f'| {names[mode_]} | {rt:g} | {med("oncpu"):.1f} | {med("runq"):.1f} | {med("sleeps"):.2f} | {med("looks"):.2f} | '
          f'{med("notifies"):.2f} | {med("sends"):.2f} |')
print(f'\nraw outputs: {out}', file=sys.stderr)
PY
