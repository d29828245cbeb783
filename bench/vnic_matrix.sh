#!/usr/bin/env bash
# The vNIC benchmark matrix of docs/BENCHMARKS.md: rr with 1 and 150
# sessions and stream with 1 and 4 flows, for the defaults and for each
# "before" policy, all in one run so the ratios compare like with like.
# Usage: bench/vnic_matrix.sh [VNIC_BINARY [DURATION_S]]
# Prints a markdown table; raw JSON goes to bench/out/matrix-<commit>/.
set -euo pipefail
cd "$(dirname "$0")/.."
vnic=${1:-build/src/app/vnic}
dur=${2:-3}
command -v python3 >/dev/null || { echo "bench/vnic_matrix.sh: needs python3" >&2; exit 1; }
[ -x "$vnic" ] || { echo "bench/vnic_matrix.sh: no $vnic (build Release first)" >&2; exit 1; }
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
out=bench/out/matrix-$commit
mkdir -p "$out"

policies=(
	"defaults|"
	"rx-replenish=always|--rx-replenish always"
	"tx-hdr-build=copy|--tx-hdr-build copy"
	"tx-submit=indirect|--tx-submit indirect"
	"bql-complete=per-entry|--bql-complete per-entry"
	"tx-csum=hw-headers|--tx-csum hw-headers"
	"tx-csum=hw-noheaders|--tx-csum hw-noheaders"
	"rx-deliver=list|--rx-deliver list"
	"rx-deliver=gro|--rx-deliver gro"
	"tx-reclaim=lazy|--tx-reclaim lazy"
	"tx-reclaim=napi|--tx-reclaim napi"
	"tx-reclaim=orphan|--tx-reclaim orphan"
)
workloads=(
	"rr1|rr --sessions 1"
	"rr150|rr --sessions 150"
	"stream1|stream --flows 1"
	"stream4|stream --flows 4"
)

for p in "${policies[@]}"; do
	pname=${p%%|*}
	pflags=${p#*|}
	for w in "${workloads[@]}"; do
		wname=${w%%|*}
		wflags=${w#*|}
		# shellcheck disable=SC2086
		"$vnic" bench $wflags $pflags --duration "$dur" --quiet --json \
			>"$out/$pname.$wname.json"
	done
done

python3 - "$out" "$commit" "$dur" "$vnic" <<'PY'
import json, sys, os
out, commit, dur, vnic = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
pols = []
for f in sorted(os.listdir(out)):
    p = f.split('.')[0]
    if p not in pols:
        pols.append(p)
pols.remove('defaults'); pols.insert(0, 'defaults')
wls = ['rr1', 'rr150', 'stream1', 'stream4']
def val(p, w):
    j = json.load(open(os.path.join(out, f'{p}.{w}.json')))
    err = j['errors']['payload'] + j['errors']['bad_csum']
    v = j['rate_tps'] if w.startswith('rr') else j['gbps']
    return v, err, j
base = {w: val('defaults', w)[0] for w in wls}
print(f'`bench/vnic_matrix.sh {vnic} {dur}` at commit {commit}; '
      'rr in transactions/s, stream in Gbit/s of payload; (x) = ratio to the defaults in the same run.\n')
print('| policy | rr 1 session | rr 150 sessions | stream 1 flow | stream 4 flows |')
print('|---|---:|---:|---:|---:|')
for p in pols:
    cells = []
    for w in wls:
        v, err, j = val(p, w)
        s = f'{v:,.0f}' if w.startswith('rr') else f'{v:.2f}'
        if p != 'defaults':
            s += f' ({v / base[w]:.2f}x)' if base[w] else ''
        if err:
            s += f' ERR {err}'
        cells.append(s)
    print(f'| {p} | ' + ' | '.join(cells) + ' |')
print()
print('| policy | rr150 p50 / p99 us | rr150 cpu us/txn | stream1 cpu s/GB |')
print('|---|---:|---:|---:|')
for p in pols:
    _, _, r = val(p, 'rr150')
    _, _, s = val(p, 'stream1')
    cpt = r['cpu_s'] * 1e6 / r['transactions'] if r['transactions'] else 0
    cpg = s['cpu_s'] / (s['bytes'] / 1e9) if s['bytes'] else 0
    print(f"| {p} | {r['latency_us']['p50']:.1f} / {r['latency_us']['p99']:.1f} | {cpt:.2f} | {cpg:.3f} |")
PY
