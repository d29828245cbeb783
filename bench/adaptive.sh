#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tx-submit=adaptive against the two fixed policies, on every boundary the
# driver can have, in one run (docs/BENCHMARKS.md, "tx-submit=adaptive"):
#   inproc         the hypervisor in-process, no cost model
#   cost-indirect  the indirect hcall charged 2500 ns (docs/EXPERIMENTS.md's
#                  cost model: ibmvnic's gap between the two sends)
#   cost-direct    the direct hcall charged 2000 ns: the boundary where auto's
#                  assumption is wrong and indirect is the cheaper send
#   split          the devices in a server process (--split): shared memory
#                  rings, eventfd doorbells
# each with rr 1 session and rr 150 sessions, as
#   vnic bench rr --sessions N --compare tx-submit=auto,indirect,adaptive --repeat R
# (the three cases alternate round by round in one process). Writes each
# comparison's JSON into DIR as LAYOUT-WORKLOAD.json and a markdown table into
# DIR/summary.md (also printed): the median rate of each case, adaptive
# against the better fixed policy as the median of the per-round ratios with
# the 95 % interval of vnic bench --compare (a percentile bootstrap), a
# verdict (more than 5 % below only when the whole interval is), and the
# share of lone packets adaptive sent indirect. With
# no lone packet in any case (rr 150 in-process sends every packet in a
# batch), the three run the same code: the row says "same path", and its
# ratio is the spread of the machine. With -c a fourth case, auto again,
# runs after adaptive in every round: auto against auto is the spread of
# identical code and of the place in the round, the floor under which a
# difference between the policies means nothing.
#
# Usage: bench/adaptive.sh -o DIR [-n REPEAT] [-d SECONDS] [-b VNIC] [-l LAYOUTS] [-c] [-s] [-- EXTRA...]
#   -o DIR       where the JSON files and summary.md go (created; must be empty)
#   -n REPEAT    rounds per case (5)
#   -d SECONDS   each round's --duration (1)
#   -b VNIC      the vnic binary (build-rel/src/app/vnic: a Release build)
#   -l LAYOUTS   a comma-separated subset of the layouts above (all four)
#   -s           only summarise the JSON files already in DIR
#   -c           the control case: auto,indirect,adaptive,auto
#   EXTRA        more options for every run (--threads 1, --pin auto, ...)
# Needs python3. No root.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

out=
repeat=5
dur=1
vnic=$repo/build-rel/src/app/vnic
layouts=inproc,cost-indirect,cost-direct,split
summary_only=
cases=auto,indirect,adaptive
while getopts o:n:d:b:l:sch opt; do
	case $opt in
	o) out=$OPTARG ;;
	n) repeat=$OPTARG ;;
	d) dur=$OPTARG ;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	l) layouts=$OPTARG ;;
	s) summary_only=1 ;;
	c) cases=auto,indirect,adaptive,auto ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
extra=("$@")

[ -n "$out" ] || { echo "bench/adaptive.sh: -o DIR is required" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/adaptive.sh: needs python3" >&2; exit 1; }
[ -x "$vnic" ] || { echo "bench/adaptive.sh: no $vnic (build Release first)" >&2; exit 1; }
if [ -z "$summary_only" ]; then
	mkdir -p "$out"
	[ -z "$(ls -A "$out")" ] || { echo "bench/adaptive.sh: $out has files already" >&2; exit 1; }
fi
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

layout_args() {
	case $1 in
	inproc) ;;
	cost-indirect) echo --cost-indirect-ns 2500 ;;
	cost-direct) echo --cost-direct-ns 2000 ;;
	split) echo --split ;;
	*) echo "bench/adaptive.sh: no layout '$1'" >&2; exit 2 ;;
	esac
}

IFS=, read -r -a want <<<"$layouts"
for layout in "${want[@]}"; do layout_args "$layout" >/dev/null; done
[ -n "$summary_only" ] || echo "bench/adaptive.sh: $repeat rounds of ${dur} s, commit $commit, load $(cut -d' ' -f1 /proc/loadavg)" >&2
for layout in "${want[@]}"; do
	[ -z "$summary_only" ] || break
	read -r -a largs <<<"$(layout_args "$layout")"
	for sessions in 1 150; do
		f=$out/$layout-rr$sessions.json
		"$vnic" bench rr --sessions "$sessions" --duration "$dur" \
			--compare tx-submit=$cases --repeat "$repeat" \
			--no-ctl --quiet --json "${largs[@]}" "${extra[@]}" >"$f"
		echo "bench/adaptive.sh: $layout rr$sessions done, load $(cut -d' ' -f1 /proc/loadavg)" >&2
	done
done

python3 - "$out" "$commit" "$layouts" <<'EOF' | tee "$out/summary.md"
import json, random, statistics, sys
out, commit, layouts = sys.argv[1], sys.argv[2], sys.argv[3].split(",")

def ci(ratios):
    # the percentile bootstrap of vnic bench --compare: median of resampled rounds, 95 %
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return meds[49], meds[1949]

first = json.load(open(f"{out}/{layouts[0]}-rr1.json"))["machine"]
print(f"commit {first.get('commit', commit)}, started {first['start']}; rates in transactions/s, medians of the rounds")
print()
print("| layout | workload | auto | indirect | adaptive | adaptive / better fixed: median of rounds, 95 % interval "
      "| verdict | lone packets adaptive sent indirect | others' cpus |")
print("|---|---|---:|---:|---:|---:|---|---:|---:|")
for layout in layouts:
    for wl in ("rr1", "rr150"):
        d = json.load(open(f"{out}/{layout}-{wl}.json"))
        # the first case of each value; a second auto is the control
        cases = {}
        for c in d["cases"]:
            cases.setdefault(c["value"], c)
        again = [c for c in d["cases"] if c["value"] == "auto"][1:]
        med = {v: cases[v]["rate"]["median"] for v in cases}
        best = max(("auto", "indirect"), key=lambda v: med[v])
        rounds = zip(cases["adaptive"]["rounds"], cases[best]["rounds"])
        ratios = [a["rate"] / b["rate"] for a, b in rounds if b["rate"] > 0]
        r = statistics.median(ratios)
        lo, hi = ci(ratios)
        ad = cases["adaptive"]["rounds"]
        ind = sum(x["submit_indirect_bursts"] for x in ad)
        lone = ind + sum(x["direct_packets"] for x in ad)
        share = f"{100 * ind / lone:.1f} %" if lone else "no lone packet"
        auto_direct = sum(x["direct_packets"] for x in cases["auto"]["rounds"])
        if not lone and not auto_direct:
            verdict = "same path"
        elif hi < 0.95:
            verdict = "**misses**: more than 5 % below"
        elif lo > 1:
            verdict = "beats it"
        elif r >= 0.95:
            verdict = "within 5 %"
        else:
            verdict = "cannot tell: the spread is wider than 5 %"
        control = ""
        if again:
            cr = [a["rate"] / b["rate"] for a, b in zip(again[0]["rounds"], cases["auto"]["rounds"])
                  if b["rate"] > 0]
            clo, chi = ci(cr)
            control = f"; auto again / auto {statistics.median(cr):.3f} ({clo:.3f}..{chi:.3f})"
        print(f"| {layout} | {wl} | {med['auto']:,.0f} | {med['indirect']:,.0f} | {med['adaptive']:,.0f} "
              f"| {r:.3f} ({lo:.3f}..{hi:.3f}) vs {best}{control} | {verdict} | {share} "
              f"| {d['machine']['others_cpus']:.2f} |")
EOF
