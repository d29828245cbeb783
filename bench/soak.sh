#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A soak: a stream and an rr bench side by side for a set time, through
# device resets, error indications, hcall faults, CRQ loss and a lossy
# cable, while the settings change under them (vnic set: policies, the
# cable, busy-poll, faults). Every SAMPLE seconds it records each
# process's RSS and the drivers' buffers in flight; at the end it fails on
# a payload error, on pools not full after the quiesce, or on RSS that
# grew after the warm-up. Not for CI: run it for an hour.
#
# Usage: bench/soak.sh [-t SECONDS] [-s SAMPLE] [-o OUTDIR] VNIC
#   -t   total run time (3600); -s sample period (10); -o where the CSV and
#        the final JSON go (a new mktemp folder; never inside the repository)
#   VNIC the binary (a Release build: build/src/app/vnic)
# Exit status: 0 the soak held, 1 it did not (said why).
set -euo pipefail

secs=3600
sample=10
out=
while getopts "t:s:o:" opt; do
	case $opt in
	t) secs=$OPTARG ;;
	s) sample=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
vnic=${1:?usage: bench/soak.sh [-t S] [-s S] [-o DIR] VNIC}
[ -x "$vnic" ] || { echo "soak.sh: $vnic is not executable" >&2; exit 2; }
command -v python3 >/dev/null || { echo "soak.sh: needs python3" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/vnic-soak.XXXXXX)}
mkdir -p "$out"
tag=soak-$$
faults="reset-every=5s,err-ind-every=7s,hcall-busy=0.0005,hcall-dropped=0.0002,crq-loss=0.02,link-flap-every=11s,seed=7"
cable=(--loss 0.002 --reorder 0.002)

echo "soak.sh: ${secs} s, samples every ${sample} s, into $out" >&2
"$vnic" bench stream --flows 2 --duration "$secs" --fault "$faults" "${cable[@]}" --quiet \
	--name "$tag-stream" --json >"$out/stream.json" 2>"$out/stream.err" &
spid=$!
"$vnic" bench rr --sessions 32 --duration "$secs" --fault "$faults" "${cable[@]}" --quiet \
	--name "$tag-rr" --json >"$out/rr.json" 2>"$out/rr.err" &
rpid=$!
trap 'kill $spid $rpid 2>/dev/null || true' EXIT

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
ctr() { # NAME COUNTER
	"$vnic" stats "$1" --all 2>/dev/null | awk -v c="$2" '$1 == c { print $2 }'
}

# The settings a user might flip while it runs, in turn.
changes=(
	"tx-submit indirect" "tx-submit auto" "rx-deliver list" "rx-deliver gro-list"
	"tx-reclaim napi" "tx-reclaim irq" "busy-poll fixed" "busy-poll adaptive"
	"loss 0.01" "loss 0.002" "tx-csum hw-headers" "tx-csum sw-direct"
	"bql-complete per-entry" "bql-complete per-round" "fault none" "fault $faults"
)
echo "t_s,stream_rss_kb,rr_rss_kb,stream_tx_used,rr_tx_used,stream_resets,rr_resets" >"$out/samples.csv"
start=$(date +%s)
i=0
while kill -0 "$spid" 2>/dev/null && kill -0 "$rpid" 2>/dev/null; do
	sleep "$sample"
	# a sample of a process that just ended would read as no memory at all
	if ! kill -0 "$spid" 2>/dev/null || ! kill -0 "$rpid" 2>/dev/null; then
		break
	fi
	t=$(($(date +%s) - start))
	echo "$t,$(rss $spid),$(rss $rpid),$(ctr $tag-stream drv_a.tx0_used),$(ctr $tag-rr drv_a.tx0_used),$(ctr $tag-stream drv_a.resets),$(ctr $tag-rr drv_a.resets)" >>"$out/samples.csv"
	for name in "$tag-stream" "$tag-rr"; do
		# shellcheck disable=SC2086
		"$vnic" set "$name" ${changes[$((i % ${#changes[@]}))]} >>"$out/changes.log" 2>&1 || true
	done
	i=$((i + 1))
done
wait "$spid" || true
wait "$rpid" || true
trap - EXIT

python3 - "$out" "$sample" <<'EOF'
import csv, json, sys
out, sample = sys.argv[1], float(sys.argv[2])
bad = []
for wl in ("stream", "rr"):
    try:
        d = json.load(open(f"{out}/{wl}.json"))
    except (OSError, ValueError) as e:
        bad.append(f"{wl}: no report ({e})")
        continue
    c = d["counters"]
    resets = c.get("drv_a.resets", 0) + c.get("drv_b.resets", 0)
    print(f"{wl}: {d['duration_s']:.0f} s, rate {d['rate_tps']:.0f} tps / {d['gbps']:.2f} Gbit/s, "
          f"payload errors {d['errors']['payload']}, bad csum {d['errors']['bad_csum']}, "
          f"resets {resets}, pools full {d['pools_full']}")
    if d["errors"]["payload"] or d["errors"]["bad_csum"]:
        bad.append(f"{wl}: payload or checksum errors")
    if not d["pools_full"]:
        bad.append(f"{wl}: pools not full after the quiesce")
rows = list(csv.DictReader(open(f"{out}/samples.csv")))
# RSS after the warm-up (a tenth of the run, at least one sample) against the end.
if len(rows) >= 3:
    warm = rows[max(1, len(rows) // 10)]
    last = rows[-1]
    for k in ("stream_rss_kb", "rr_rss_kb"):
        a, b = int(warm[k] or 0), int(last[k] or 0)
        print(f"{k}: {a} kB after the warm-up (t={warm['t_s']} s), {b} kB at t={last['t_s']} s")
        # Flat: within 2 % or 1 MiB, whichever is larger.
        if b > a + max(a // 50, 1024):
            bad.append(f"{k} grew from {a} to {b} kB")
for b in bad:
    print("FAIL:", b)
print("soak held" if not bad else "soak did not hold")
sys.exit(1 if bad else 0)
EOF
