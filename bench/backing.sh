#!/usr/bin/env bash
# AF_PACKET against AF_XDP under one backed vNIC (docs/LINK.md, "--backing
# IFNAME"): AF_PACKET as it comes (superframes), AF_PACKET with MTU frames
# (like for like with AF_XDP), and AF_PACKET with its thread spinning
# before it sleeps (--busy-poll-us 50, what vnic link --help recommends for
# latency), the cases taking turns in every round (each round starts one
# further along) so that all see the same machine:
#
#   netns bk-vnic          netns bk-host                  netns bk-peer
#   vnic0 10.97.0.1 -- vnic link --backing vb0 --backing-ns bk-host
#                          vb0 <========== veth ==========> vp0 10.97.0.2
#
# Throughput: iperf3, one TCP stream, each way (out: from the vNIC's
# namespace to the peer; in: back). Round trip: sockperf ping-pong over UDP,
# 14-byte messages, the median round trip. afpacket runs with its defaults
# (superframes with a vnet header, TPACKET_V2). afxdp carries MTU frames,
# and the peer's tx checksumming is off while it runs (a veth peer's kernel
# leaves its checksums partial, which AF_XDP cannot tell: docs/LINK.md),
# which turns the peer's segmentation off too. afpacket-mtu is AF_PACKET
# under the same conditions: --backing-offload off, the peer's tx
# checksumming off and GRO off on the backing, so that MTU frames cross the
# socket both ways, as they do AF_XDP's.
# Prints a markdown table of medians with [min, max] over the rounds, and
# each case's ratio to afpacket per round (and AF_XDP's to afpacket-mtu,
# the like-for-like one); with -o, each case also runs on a second binary
# (its name suffixed "-old") in the same rounds, and the table gives each
# case's ratio new / old per round. Then where a round trip's time
# goes on the vNIC's side, from its counters (vnic stats) across the
# ping-pong: the CPU time of its threads (the kernel's send path included:
# a send runs the peer's receive in the same syscall) and their time waiting
# for a CPU (/proc/PID/task/*/schedstat), its sleeps, its looks at its fds
# (epoll_wait, the sleeps' included), the backing's notifications and its
# send syscalls, each per round trip.
#
# Usage: bench/backing.sh [-n ROUNDS] [-d SECONDS] [-c CASES] [-b VNIC]
#                         [-o VNIC] [-p] [OUTDIR]
#   -n ROUNDS    rounds (3)
#   -d SECONDS   each iperf3 and sockperf run (5)
#   -c CASES     comma-separated, of afpacket, afpacket-mtu, afxdp,
#                afpacket-spin (default: those four), and afxdp-spin
#                (AF_XDP with --busy-poll-us 50: the spin looks at the
#                RX ring, as at AF_PACKET's, without a syscall)
#   -b VNIC      the vnic binary (the repository's build-rel/src/app/vnic:
#                a Release build, with libxdp)
#   -o VNIC      a second vnic binary (an older build, say) whose cases
#                alternate with -b's in every round
#   -p           perf record -g on the vnic process during each outbound
#                iperf3 (OUTDIR/perf.CASE.ROUND.data; needs perf)
#   OUTDIR       where every raw output goes: a scratch folder outside the
#                repository (default: a new mktemp -d folder)
#
# Needs root, iproute2, ethtool, iperf3, sockperf, python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=3
dur=5
vnic=$repo/build-rel/src/app/vnic
old=
prof=0
cases=afpacket,afpacket-mtu,afxdp,afpacket-spin
while getopts n:d:c:b:o:ph opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) dur=$OPTARG ;;
	c) cases=$OPTARG ;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	o) old=$(realpath -m "$OPTARG") ;;
	p) prof=1 ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

[ "$(id -u)" -eq 0 ] || { echo "bench/backing.sh: needs root" >&2; exit 1; }
for c in ip ethtool iperf3 sockperf python3; do
	command -v $c >/dev/null || { echo "bench/backing.sh: needs $c" >&2; exit 1; }
done
[ -x "$vnic" ] || { echo "bench/backing.sh: no $vnic (build Release first)" >&2; exit 1; }
[ -z "$old" ] || [ -x "$old" ] || { echo "bench/backing.sh: no $old" >&2; exit 1; }
[ "$prof" = 0 ] || command -v perf >/dev/null || { echo "bench/backing.sh: -p needs perf" >&2; exit 1; }
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

start_vnic() { # binary name round mode [flags...]
	local bin=$1 log=$out/vnic.$2.$3.log mode=$4 i
	shift 4
	"$bin" link --backing vb0 --backing-ns $HOST --backing-mode "$mode" "$@" --new-ns-a $VNS \
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
	local name=$1 round=$2 perf=
	shift 2
	server $PEER iperf3 -s -1 -p 5209
	if [ "$prof" = 1 ] && [ "${name#out-}" != "$name" ]; then
		perf record -g -q -o "$out/perf.${name#out-}.$round.data" -p "${PIDS[0]}" \
			>/dev/null 2>&1 &
		perf=$!
	fi
	ip netns exec $VNS iperf3 -c 10.97.0.2 -p 5209 -t "$dur" -J "$@" >"$out/$name.$round.json"
	if [ -n "$perf" ]; then
		kill -INT "$perf" 2>/dev/null || true
		wait "$perf" 2>/dev/null || true
	fi
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
	[afpacket-mtu]="afpacket --backing-offload off"
	[afxdp]="afxdp"
	[afpacket-spin]="afpacket --busy-poll-us 50"
	[afxdp-spin]="afxdp --busy-poll-us 50"
)
IFS=, read -r -a CASES <<<"$cases"
for c in "${CASES[@]}"; do
	[ -n "${FLAGS[$c]+set}" ] || { echo "bench/backing.sh: no case '$c' (${!FLAGS[*]})" >&2; exit 2; }
done
RUNS=("${CASES[@]}")
[ -z "$old" ] || for c in "${CASES[@]}"; do RUNS+=("$c-old"); done
gro=$(ip netns exec $HOST ethtool -k vb0 | awk '/^generic-receive-offload:/ { print $2 }')

run_case() { # case round
	local name=$1 r=$2 csum=on g=$gro base=${1%-old} bin=$vnic
	[ "$base" = "$name" ] || bin=$old
	# MTU frames both ways: the peer segments, the backing does not aggregate
	case $base in
	afxdp | afxdp-spin) csum=off ;;
	afpacket-mtu) csum=off g=off ;;
	esac
	ip netns exec $PEER ethtool -K vp0 tx $csum >/dev/null
	ip netns exec $HOST ethtool -K vb0 gro "$g" >/dev/null
	cut -d' ' -f1 /proc/loadavg >"$out/$name.$r.load"
	# shellcheck disable=SC2086
	start_vnic "$bin" "$name" "$r" ${FLAGS[$base]}
	tput "out-$name" "$r"
	tput "in-$name" "$r" -R
	rtt "rtt-$name" "$r"
	stop_vnic
}

runs=$(IFS=,; echo "${RUNS[*]}")
echo "bench/backing.sh: commit $commit, $rounds rounds of $dur s, cases $runs; raw outputs in $out" >&2
for r in $(seq "$rounds"); do
	for i in $(seq 0 $((${#RUNS[@]} - 1))); do
		run_case "${RUNS[$(((i + r - 1) % ${#RUNS[@]}))]}" "$r"
	done
	echo "bench/backing.sh: round $r of $rounds done" >&2
done

python3 - "$out" "$rounds" "$dur" "$commit" "$runs" "$cases" "${old:+-o $old}" <<'PY'
import os, re, statistics, sys
out, rounds, dur, commit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cases, asked, oldopt = sys.argv[5].split(','), sys.argv[6], sys.argv[7]

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
print(f'`bench/backing.sh -n {rounds} -d {dur} -c {asked}{" " + oldopt if oldopt else ""}` at commit {commit}: '
      f'{rounds} rounds, the cases taking turns (AF_XDP: {mode}); median [min, max] over the rounds.')
if loads:
    print(f'1-minute load average at the start of the runs: median {statistics.median(loads):.2f} '
          f'[{min(loads):.2f}, {max(loads):.2f}] on {os.cpu_count()} CPUs.')
print()
print('| backing | TCP out, Gbit/s | TCP in, Gbit/s | UDP ping-pong round trip (median), us |')
print('|---|---:|---:|---:|')
names = {'afpacket': '`--backing-mode afpacket` (the default)', 'afxdp': '`--backing-mode afxdp`',
         'afpacket-mtu': '`--backing-offload off` (AF_PACKET, MTU frames)',
         'afpacket-spin': '`--busy-poll-us 50` (AF_PACKET)',
         'afxdp-spin': '`--busy-poll-us 50` (AF_XDP)'}
short = {'afpacket': 'AF_PACKET', 'afxdp': 'AF_XDP', 'afpacket-mtu': 'AF_PACKET MTU frames',
         'afpacket-spin': '`--busy-poll-us 50`', 'afxdp-spin': 'AF_XDP `--busy-poll-us 50`'}
for c in list(names):
    names[c + '-old'] = names[c] + ', -o build'
    short[c + '-old'] = short[c] + ' (-o)'
cols = ('out', 'in', 'rtt')
for mode_ in cases:
    row = [cell([val(f'{c}-{mode_}', r) for r in range(1, rounds + 1)]) for c in cols]
    print(f'| {names[mode_]} | ' + ' | '.join(row) + ' |')

def ratio_row(a, b):
    if a not in cases or b not in cases or a == b:
        return
    ratio = [cell([val(f'{c}-{a}', r) / val(f'{c}-{b}', r) for r in range(1, rounds + 1)],
                  '{:.2f}') for c in cols]
    print(f'| {short[a]} / {short[b]}, per round | ' + ' | '.join(ratio) + ' |')

for mode_ in cases:
    if not mode_.endswith('-old'):
        ratio_row(mode_, 'afpacket')
ratio_row('afxdp', 'afpacket-mtu')
ratio_row('afxdp-spin', 'afxdp')
for mode_ in cases:
    ratio_row(mode_, mode_ + '-old')

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
