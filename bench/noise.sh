#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# How far a figure of `vnic bench` can be trusted: the spread of repeated
# runs on an idle machine, and what one CPU-bound process beside the bench
# (a shell loop) does to them. In one run, the cases interleaved round by
# round so that the machine's drift moves them all alike:
#
#   for each round 1..N:
#     for each binary (after, and before if given) and layout:
#       for rr 1 session, rr 150 sessions, stream 1 flow:
#         one run idle, then one run with the busy loop beside
#
# Prints, per binary, layout and workload: the median rate and its
# IQR/median, the median work CPU per transaction (or per GB) and its
# IQR/median, the process CPU per transaction, the busy/idle ratio of the
# rate medians, and for rr 1 session the p99.9/p50 of latency (medians).
# Then the two upper bounds work CPU is the smaller of: the threads' CPU
# less their spin, and the wall clock of their work turns (work_turn_s).
# Last, what the placement (--pin adaptive) did: in how many runs the two
# threads were on cores of their own at the end, and its pins and unpins
# (medians; binaries without the placement counters are left out).
#
# Usage: bench/noise.sh [-n ROUNDS] [-d SECONDS] [-o OUTDIR] [-l "LAYOUT;LAYOUT"] VNIC [VNIC_BEFORE]
#   VNIC          the binary to measure (build/src/app/vnic of a Release build)
#   VNIC_BEFORE   an older binary to compare against, in the same run
#   -n ROUNDS     rounds (10); -d SECONDS per run (1)
#   -l LAYOUTS    extra options per layout, ';'-separated ("" = the defaults;
#                 default: ";--threads 1"); layouts apply to VNIC only
#   -o OUTDIR     where the raw JSON and the CSV go (default: a new mktemp folder;
#                 never inside the repository)
set -euo pipefail

rounds=10
secs=1
out=
layouts=";--threads 1"
while getopts "n:d:o:l:" opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) secs=$OPTARG ;;
	o) out=$OPTARG ;;
	l) layouts=$OPTARG ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
after=${1:?usage: bench/noise.sh [-n N] [-d S] [-o DIR] VNIC [VNIC_BEFORE]}
before=${2:-}
[ -x "$after" ] || { echo "noise.sh: $after is not executable" >&2; exit 2; }
[ -z "$before" ] || [ -x "$before" ] || { echo "noise.sh: $before is not executable" >&2; exit 2; }
command -v python3 >/dev/null || { echo "noise.sh: needs python3" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/vnic-noise.XXXXXX)}
mkdir -p "$out"
csv=$out/runs.csv
echo "round,binary,layout,workload,load,file" >"$csv"

hog=
stop_hog() {
	if [ -n "$hog" ]; then
		kill "$hog" 2>/dev/null || true
		wait "$hog" 2>/dev/null || true
	fi
	hog=
}
trap stop_hog EXIT

workloads=("rr1:rr --sessions 1" "rr150:rr --sessions 150" "stream1:stream --flows 1")

# binary-name TAB path TAB layout, one per line
cases=()
IFS=';' read -r -a lays <<<"$layouts"
[ ${#lays[@]} -gt 0 ] || lays=("")
for lay in "${lays[@]}"; do
	cases+=("after	$after	$lay")
done
[ -n "$before" ] && cases+=("before	$before	")

echo "noise.sh: $rounds rounds of ${#cases[@]} binary/layout cases x ${#workloads[@]} workloads x idle/busy, ${secs} s each; raw results in $out" >&2
n=0
for r in $(seq "$rounds"); do
	for c in "${cases[@]}"; do
		IFS=$'\t' read -r name bin lay <<<"$c"
		for w in "${workloads[@]}"; do
			wname=${w%%:*}
			wargs=${w#*:}
			for load in idle busy; do
				if [ "$load" = busy ]; then
					sh -c 'while :; do :; done' &
					hog=$!
				fi
				f=$out/$r-$name-$(echo "$lay" | tr -c 'a-z0-9\n' '_')-$wname-$load.json
				# shellcheck disable=SC2086
				"$bin" bench $wargs $lay --duration "$secs" --json --quiet --no-ctl >"$f" 2>/dev/null || true
				stop_hog
				echo "$r,$name,${lay:-default},$wname,$load,$f" >>"$csv"
				n=$((n + 1))
			done
		done
	done
	echo "noise.sh: round $r/$rounds done" >&2
done

python3 - "$csv" <<'EOF'
import csv, json, statistics, sys

def q(v, p):
    v = sorted(v)
    if not v:
        return 0.0
    pos = p * (len(v) - 1)
    lo = int(pos)
    return v[lo] + (pos - lo) * (v[min(lo + 1, len(v) - 1)] - v[lo])

rows = {}
bounds = {}
place = {}
for r in csv.DictReader(open(sys.argv[1])):
    try:
        d = json.load(open(r["file"]))
    except (OSError, ValueError):
        continue
    key = (r["binary"], r["layout"], r["workload"], r["load"])
    rr = r["workload"].startswith("rr")
    rate = d["rate_tps"] if rr else d["gbps"]
    work = d.get("work_cpu_ns_per_txn" if rr else "work_cpu_ns_per_gb")
    n = d["transactions"] if rr else d["bytes"] / 1e9
    proc = d["cpu_s"] * 1e9 / n if n else 0
    lat = d.get("latency_us", {})
    rows.setdefault(key, []).append((rate, work, proc, lat.get("p50", 0), lat.get("p999", 0)))
    ctr = d.get("counters", {})
    if "place.pins" in ctr:
        place.setdefault(key, []).append((ctr["place.pinned"], ctr["place.pins"], ctr["place.unpins"]))
    # the two upper bounds work CPU is the smaller of, per thread (older binaries: the first only)
    if n:
        less_spin = sum(max(0, c - s) for c, s in zip(d["thread_cpu_s"], d["spin_cpu_s"])) * 1e9 / n
        turns = sum(d["work_turn_s"]) * 1e9 / n if "work_turn_s" in d else None
        bounds.setdefault(key, []).append((less_spin, turns))

def spread(v):
    m = q(v, 0.5)
    return m, (q(v, 0.75) - q(v, 0.25)) / m * 100 if m else 0

print("| binary | layout | workload | load | runs | rate (median) | IQR/median | work CPU (median) | IQR/median | process CPU | p99.9/p50 |")
print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
for key in sorted(rows):
    v = rows[key]
    rate, rsp = spread([x[0] for x in v])
    works = [x[1] for x in v if x[1] is not None]
    wtxt = "n/a (no work CPU)"
    wsp = ""
    if works:
        w, s = spread(works)
        wtxt, wsp = f"{w:,.0f} ns", f"{s:.1f} %"
    proc, _ = spread([x[2] for x in v])
    tail = ""
    if key[2] == "rr1":
        tail = f"{q([x[4] for x in v], 0.5) / q([x[3] for x in v], 0.5):.1f}" if q([x[3] for x in v], 0.5) else ""
    unit = "tps" if key[2].startswith("rr") else "Gbit/s"
    rtxt = f"{rate:,.0f} {unit}" if unit == "tps" else f"{rate:.2f} {unit}"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(v)} | {rtxt} | {rsp:.1f} % | {wtxt} | {wsp} | {proc:,.0f} ns | {tail} |")

print()
print("| binary | layout | workload | busy/idle rate | busy/idle work CPU |")
print("|---|---|---|---:|---:|")
for key in sorted(rows):
    if key[3] != "idle":
        continue
    busy = rows.get(key[:3] + ("busy",))
    if not busy:
        continue
    ri, rb = q([x[0] for x in rows[key]], 0.5), q([x[0] for x in busy], 0.5)
    wi = [x[1] for x in rows[key] if x[1] is not None]
    wb = [x[1] for x in busy if x[1] is not None]
    wr = f"{q(wb, 0.5) / q(wi, 0.5):.2f}x" if wi and wb and q(wi, 0.5) else "n/a"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {rb / ri:.2f}x | {wr} |" if ri else f"| {key[0]} | {key[1]} | {key[2]} | n/a | {wr} |")

print()
print("| binary | layout | workload | load | CPU less spin | IQR/median | work turns | IQR/median |")
print("|---|---|---|---|---:|---:|---:|---:|")
for key in sorted(bounds):
    ls, lsp = spread([x[0] for x in bounds[key]])
    turns = [x[1] for x in bounds[key] if x[1] is not None]
    ttxt, tsp = ("n/a", "")
    if turns:
        t, ts = spread(turns)
        ttxt, tsp = f"{t:,.0f} ns", f"{ts:.1f} %"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {ls:,.0f} ns | {lsp:.1f} % | {ttxt} | {tsp} |")

if place:
    print()
    print("| binary | layout | workload | load | runs | pinned at the end | pins (median) | unpins (median) |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for key in sorted(place):
        v = place[key]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(v)} | {sum(1 for x in v if x[0])} "
              f"| {q([x[1] for x in v], 0.5):.0f} | {q([x[2] for x in v], 0.5):.0f} |")
EOF
