#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic bench --split` against the in-process layout (docs/ARCHITECTURE.md
# section 11), alternating in one loop so that both see the same machine:
#   rr150    vnic bench rr --sessions 150
#   stream   vnic bench stream (one flow)
# each in-process, with --split, and with --split --doorbell spin, every
# round running the six in turn. Prints a markdown table of medians with
# [min, max], the median of the per-round ratios to in-process, and the
# payload errors of all runs.
#
# Usage: bench/split.sh [-n ROUNDS] [-d SECONDS] [-b VNIC] [-- EXTRA...]
#   -n ROUNDS    rounds (5)
#   -d SECONDS   each run's --duration (3)
#   -b VNIC      the vnic binary (build-rel/src/app/vnic: a Release build)
#   EXTRA        more options for every run (--threads 1, --pin auto, ...)
# Needs python3. No root.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=5
dur=3
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
[ "${1:-}" = "--" ] && shift
extra=("$@")

command -v python3 >/dev/null || { echo "bench/split.sh: needs python3" >&2; exit 1; }
[ -x "$vnic" ] || { echo "bench/split.sh: no $vnic (build Release first)" >&2; exit 1; }
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
out=$(mktemp -t vnic-split.XXXXXX)
trap 'rm -f "$out"' EXIT

# One run: "case mode rate errors" on a line of $out (rate: tps, or Gbit/s).
run() {
	local wl=$1 mode=$2 args=()

	[ "$wl" = rr150 ] && args=(rr --sessions 150) || args=(stream)
	[ "$mode" = split ] && args+=(--split)
	[ "$mode" = spin ] && args+=(--split --doorbell spin)
	"$vnic" bench "${args[@]}" --duration "$dur" --no-ctl --quiet --json "${extra[@]}" 2>/dev/null |
		python3 -c '
import json, sys
d = json.load(sys.stdin)
rate = d["rate_tps"] if sys.argv[1] == "rr150" else d["gbps"]
print(sys.argv[1], sys.argv[2], rate, d["errors"]["payload"])
' "$wl" "$mode" >>"$out"
}

echo "bench/split.sh: $rounds rounds of ${dur} s, commit $commit, load $(cut -d' ' -f1 /proc/loadavg)" >&2
for ((i = 1; i <= rounds; i++)); do
	for wl in rr150 stream; do
		# the rounds rotate the layouts: none always runs first
		case $((i % 3)) in
		1) order=(inproc split spin) ;;
		2) order=(split spin inproc) ;;
		*) order=(spin inproc split) ;;
		esac
		for mode in "${order[@]}"; do
			run "$wl" "$mode"
		done
	done
	echo "bench/split.sh: round $i/$rounds done, load $(cut -d' ' -f1 /proc/loadavg)" >&2
done

python3 - "$out" "$commit" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f"commit {sys.argv[2]}; rr150 in transactions/s, stream in Gbit/s of payload")
print()
print("| run | in-process | --split | --split --doorbell spin | split / in-process | spin / in-process "
      "(medians of rounds) | payload errors |")
print("|---|---:|---:|---:|---:|---:|---:|")
for wl in ("rr150", "stream"):
    a = [float(r[2]) for r in rows if r[0] == wl and r[1] == "inproc"]
    b = [float(r[2]) for r in rows if r[0] == wl and r[1] == "split"]
    c = [float(r[2]) for r in rows if r[0] == wl and r[1] == "spin"]
    errs = sum(int(r[3]) for r in rows if r[0] == wl)
    if not a or not b or not c:
        continue
    fmt = (lambda v: f"{v:,.0f}") if wl == "rr150" else (lambda v: f"{v:.2f}")
    cell = lambda v: f"{fmt(statistics.median(v))} [{fmt(min(v))}, {fmt(max(v))}]"
    ratio = lambda v: statistics.median([y / x for x, y in zip(a, v) if x > 0])
    print(f"| {wl} | {cell(a)} | {cell(b)} | {cell(c)} | {ratio(b):.2f}x | {ratio(c):.2f}x | {errs} |")
EOF
