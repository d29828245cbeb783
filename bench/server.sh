#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Many `vnic bench --server` clients at once against one standing `vnic
# server` (docs/ARCHITECTURE.md section 11):
#   rr       N clients of vnic bench rr --sessions 150, started together
#   stream   N clients of vnic bench stream (one flow each), started together
# Prints, per workload, the sum of the clients' rates (tps, Gbit/s), the
# slowest and fastest client, and the payload errors of all of them; with
# -s, also the frames the switch flooded and the devices filtered.
#
# Usage: bench/server.sh [-c CLIENTS] [-d SECONDS] [-b VNIC] [-s] [-- EXTRA...]
#   -c CLIENTS   clients at once (8)
#   -s           the server runs with --switch: every client's devices on one switch
#   -d SECONDS   each client's --duration (3)
#   -b VNIC      the vnic binary (build-rel/src/app/vnic: a Release build)
#   EXTRA        more options for every client (--threads 1, ...)
# Needs python3. No root.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)

clients=8
dur=3
switch=()
vnic=$repo/build-rel/src/app/vnic
while getopts c:d:b:sh opt; do
	case $opt in
	s) switch=(--switch) ;;
	c) clients=$OPTARG ;;
	d) dur=$OPTARG ;;
	b) vnic=$(realpath -m "$OPTARG") ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
extra=("$@")

command -v python3 >/dev/null || { echo "bench/server.sh: needs python3" >&2; exit 1; }
[ -x "$vnic" ] || { echo "bench/server.sh: no $vnic (build Release first)" >&2; exit 1; }
dir=$(mktemp -d -t vnic-server.XXXXXX)
sock=$dir/s.sock
"$vnic" server --listen "$sock" --max-clients "$clients" "${switch[@]}" --no-ctl --quiet &
srv=$!
trap 'kill -TERM $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "vnic $commit, $clients clients at once${switch:+ on one switch}, ${dur} s each, $(nproc) cpus," \
	"load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| workload | clients | total | slowest client | fastest client | payload errors | flooded | filtered |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for wl in rr stream; do
	args=(--duration "$dur" --json --no-ctl --quiet "${extra[@]}")
	[ $wl = rr ] && args+=(--sessions 150)
	pids=()
	for i in $(seq "$clients"); do
		"$vnic" bench $wl --server "$sock" "${args[@]}" >"$dir/$wl$i.json" 2>"$dir/$wl$i.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { echo "bench/server.sh: a $wl client failed: see $dir" >&2; trap - EXIT; exit 1; }
	done
	python3 - "$wl" "$dir" "$clients" <<'EOF'
import json, sys
wl, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [json.load(open(f"{d}/{wl}{i}.json")) for i in range(1, n + 1)]
key, unit, fmt = ("rate_tps", "tps", "{:,.0f}") if wl == "rr" else ("gbps", "Gbit/s", "{:.2f}")
rates = [r[key] for r in runs]
errs = sum(r["errors"]["payload"] for r in runs)
def total(*names):
    out = 0
    def walk(o):
        nonlocal out
        if isinstance(o, dict):
            for k, v in o.items():
                if k in names and isinstance(v, int):
                    out += v
                else:
                    walk(v)
    for r in runs:
        walk(r)
    return out
flooded = total("switch_a.flooded", "switch_b.flooded")
filtered = total("dev_a.rx_filtered", "dev_b.rx_filtered")
f = lambda v: fmt.format(v) + " " + unit
print(f"| {wl} | {n} | {f(sum(rates))} | {f(min(rates))} | {f(max(rates))} | {errs} | {flooded} | {filtered} |")
EOF
done
