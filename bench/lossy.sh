#!/usr/bin/env bash
# The workloads' transport under loss: stream (1 flow) and rr (1 and 150
# sessions), each on a clean cable and on one that loses and reorders 1% of
# frames, the two taking turns in every round (which goes first alternates)
# so that both see the same machine. Prints a markdown table of medians with
# [min, max] over the rounds, and the lossy/clean ratio of each round.
#
# Usage: bench/lossy.sh [-n ROUNDS] [-d SECONDS] [-b VNIC] [-i IMPAIRMENT] [OUTDIR]
#   -n ROUNDS      rounds (5)
#   -d SECONDS     duration of each run (5)
#   -b VNIC        the vnic binary (the repository's build-rel/src/app/vnic:
#                  a Release build)
#   -i IMPAIRMENT  the lossy cable's options ("--loss 0.01 --reorder 0.01")
#   OUTDIR         where the JSON of every run goes: a scratch folder outside
#                  the repository (default: a new mktemp -d folder)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=5
dur=5
vnic=$repo/build-rel/src/app/vnic
imp="--loss 0.01 --reorder 0.01"
while getopts n:d:b:i:h opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) dur=$OPTARG ;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	i) imp=$OPTARG ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

command -v python3 >/dev/null || { echo "bench/lossy.sh: needs python3" >&2; exit 1; }
[ -x "$vnic" ] || { echo "bench/lossy.sh: no $vnic (build Release first)" >&2; exit 1; }
if [ $# -gt 0 ]; then
	out=$(realpath -m "$1")
	case "$out/" in
	"$repo"/*) echo "bench/lossy.sh: $out is inside the repository; give a scratch folder" >&2; exit 1 ;;
	esac
	mkdir -p "$out"
else
	out=$(mktemp -d -t vnic-lossy.XXXXXX)
fi
cd "$repo"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

workloads=(
	"stream1|stream --flows 1"
	"rr1|rr --sessions 1"
	"rr150|rr --sessions 150"
)

run() { # name round cable-args...
	local name=$1 round=$2 flags
	shift 2
	flags=${wl#*|}
	cut -d' ' -f1 /proc/loadavg >"$out/$name.$round.load"
	# shellcheck disable=SC2086
	"$vnic" bench $flags --duration "$dur" --quiet --no-ctl --json "$@" >"$out/$name.$round.json"
}

for ((r = 1; r <= rounds; r++)); do
	for wl in "${workloads[@]}"; do
		w=${wl%%|*}
		if ((r % 2)); then
			run "$w.clean" "$r"
			# shellcheck disable=SC2086
			run "$w.lossy" "$r" $imp
		else
			# shellcheck disable=SC2086
			run "$w.lossy" "$r" $imp
			run "$w.clean" "$r"
		fi
	done
	echo "bench/lossy.sh: round $r of $rounds done" >&2
done

python3 - "$out" "$rounds" "$dur" "$vnic" "$commit" "$imp" <<'PY'
import json, os, statistics, sys
out, rounds, dur, vnic, commit, imp = sys.argv[1:]
rounds = int(rounds)

def load(name, r):
    with open(os.path.join(out, f'{name}.{r}.json')) as f:
        return json.load(f)

def cell(vals, fmt):
    return f'{fmt(statistics.median(vals))} [{fmt(min(vals))}, {fmt(max(vals))}]'

rows = [
    ('stream, 1 flow', 'stream1', 'Gbit/s of payload', lambda j: j['gbps'], lambda v: f'{v:.2f}'),
    ('rr, 1 session', 'rr1', 'transactions/s', lambda j: j['rate_tps'], lambda v: f'{v:,.0f}'),
    ('rr, 1 session', 'rr1', 'p99 latency, us', lambda j: j['latency_us']['p99'], lambda v: f'{v:,.0f}'),
    ('rr, 150 sessions', 'rr150', 'transactions/s', lambda j: j['rate_tps'], lambda v: f'{v:,.0f}'),
    ('rr, 150 sessions', 'rr150', 'p99 latency, us', lambda j: j['latency_us']['p99'], lambda v: f'{v:,.0f}'),
]
loads = []
for f in os.listdir(out):
    if f.endswith('.load'):
        with open(os.path.join(out, f)) as fh:
            loads.append(float(fh.read().split()[0]))

shown = os.path.relpath(vnic)
if shown.startswith('..'):
    shown = vnic
print(f'`bench/lossy.sh -n {rounds} -d {dur}` ({shown}) at commit {commit}: {rounds} rounds of '
      f'{dur} s runs, clean and lossy (`{imp}`) taking turns; median [min, max] over the rounds; '
      f'the ratio is lossy / clean within each round.')
if loads:
    print(f'1-minute load average at the start of the runs: median {statistics.median(loads):.2f} '
          f'[{min(loads):.2f}, {max(loads):.2f}] on {os.cpu_count()} CPUs.')
print()
print('| workload | figure | clean | lossy | lossy / clean |')
print('|---|---|---:|---:|---:|')
bad = 0
for label, w, what, get, fmt in rows:
    clean = [get(load(f'{w}.clean', r)) for r in range(1, rounds + 1)]
    lossy = [get(load(f'{w}.lossy', r)) for r in range(1, rounds + 1)]
    ratio = [l / c if c else 0.0 for c, l in zip(clean, lossy)]
    print(f'| {label} | {what} | {cell(clean, fmt)} | {cell(lossy, fmt)} | '
          f'{cell(ratio, lambda v: f"{v:.2f}")} |')

print()
print('Recovery in the lossy runs (median per run): frames the cable lost, and what the '
      'transport did about them.')
print()
keys = ['lost', 'fast_retransmits', 'sack_recovered', 'probes', 'timeouts', 'spurious',
        'retransmits']
print('| workload | cable drops | ' + ' | '.join(keys) + ' |')
print('|---|---:|' + '---:|' * len(keys))
for label, w in (('stream, 1 flow', 'stream1'), ('rr, 1 session', 'rr1'),
                 ('rr, 150 sessions', 'rr150')):
    js = [load(f'{w}.lossy', r) for r in range(1, rounds + 1)]
    drops = statistics.median(j['counters'].get('cable.ab_drop_loss', 0) +
                              j['counters'].get('cable.ba_drop_loss', 0) for j in js)
    vals = [statistics.median(j['errors'].get(k, 0) for j in js) for k in keys]
    print(f'| {label} | {drops:,.0f} | ' + ' | '.join(f'{v:,.0f}' for v in vals) + ' |')
for name in sorted(os.listdir(out)):
    if name.endswith('.json'):
        j = json.load(open(os.path.join(out, name)))
        if j['errors']['payload'] or j['errors']['bad_csum'] or not j['pools_full']:
            bad += 1
            print(f'\nbench/lossy.sh: {name}: integrity errors or pools not full', file=sys.stderr)
print(f'\nJSON of every run: {out}', file=sys.stderr)
sys.exit(1 if bad else 0)
PY
