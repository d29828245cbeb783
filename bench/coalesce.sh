#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Interrupt coalescing (docs/MECHANISMS.md section 9) on `vnic bench`: each
# round runs every workload under every setting, in turn, one further along
# each round, so that the settings share the machine's moments:
#   off       the default: an interrupt per completion entry
#   fixed     --rx-usecs 32 --rx-frames 32 --tx-usecs 32 --tx-frames 32
#   adaptive  --adaptive-rx --adaptive-tx
# workloads: rr --sessions 1, rr --sessions 150, stream. Prints one line per
# run: the rate, and per transaction (rr) or per MB (stream) the cpus'
# sleeps and cross-thread wake-ups (cpu_X.sleeps, cpu_X.wakeups) and the
# completion interrupts raised (dev_X.{tx,rx}0_irqs); then the medians.
#
# Usage: bench/coalesce.sh [-n ROUNDS] [-d SECONDS] [-b VNIC] [-- EXTRA...]
#   -n ROUNDS    rounds (3)
#   -d SECONDS   each run (5)
#   -b VNIC      the vnic binary (build-rel/src/app/vnic: a Release build)
#   EXTRA        more `vnic bench` options for every run (--threads 1, ...)
# Needs python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

rounds=3
dur=5
vnic=$repo/build-rel/src/app/vnic
while getopts n:d:b:h opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) dur=$OPTARG ;;
	b) vnic=$OPTARG ;;
	*) sed -n '3,21p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
extra=("$@")

settings=(off fixed adaptive)
declare -A opts=(
	[off]=""
	[fixed]="--rx-usecs 32 --rx-frames 32 --tx-usecs 32 --tx-frames 32"
	[adaptive]="--adaptive-rx --adaptive-tx"
)
workloads=("rr --sessions 1" "rr --sessions 150" "stream")
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for ((r = 0; r < rounds; r++)); do
	for w in "${workloads[@]}"; do
		for ((i = 0; i < ${#settings[@]}; i++)); do
			s=${settings[$(((i + r) % ${#settings[@]}))]}
			# shellcheck disable=SC2086
			"$vnic" bench $w --duration "$dur" ${opts[$s]} "${extra[@]}" --json --quiet |
				python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["counters"]
def both(name):
    return sum(c.get("%s_%s.%s" % (p, s, name), 0) for p in ("cpu", "dev") for s in "ab")
work = d["transactions"] if d["workload"] == "rr" else d["bytes"] / 1e6
unit = "txn" if d["workload"] == "rr" else "MB"
rate = d["rate_tps"] if d["workload"] == "rr" else d["gbps"]
irqs = both("tx0_irqs") + both("rx0_irqs")
print("%-18s %-9s rate %12.2f %s  sleeps/%s %.4f  wakeups/%s %.4f  irqs/%s %.3f" % (
    sys.argv[1], sys.argv[2], rate, "tps" if unit == "txn" else "Gbit/s", unit,
    both("sleeps") / work, unit, both("wakeups") / work, unit, irqs / work))
' "$w" "$s" | tee -a "$out"
		done
	done
done

echo
echo "medians over $rounds rounds:"
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(.{18}) (\S+)\s+rate\s+(\S+) \S+\s+sleeps/\S+ (\S+)\s+wakeups/\S+ (\S+)\s+irqs/\S+ (\S+)", line)
    if m:
        rows.setdefault((m.group(1).strip(), m.group(2)), []).append([float(x) for x in m.groups()[2:]])
for (w, s), v in rows.items():
    med = [statistics.median(col) for col in zip(*v)]
    print("%-18s %-9s rate %12.2f  sleeps %.4f  wakeups %.4f  irqs %.3f" % (w, s, *med))
PY
