#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds the libFuzzer targets (fuzz/fuzz_*.c) with clang, ASan and UBSan and
# runs each for a fixed time. Nothing is written into the source tree: the
# binaries, the working corpora (started from fuzz/corpus/<name>/), logs and
# crash artifacts all go to WORKDIR, so a corpus grown there can be kept and
# reused by the next run.
#
#   fuzz/run.sh WORKDIR SECONDS [TARGET...]
#
# TARGET is fuzz_parse, parse or fuzz/fuzz_parse.c; default: every fuzz/fuzz_*.c.
# Exit status: 0 if every target built and ran its time without a crash.
set -u -o pipefail

usage() {
	echo "usage: $0 WORKDIR SECONDS [TARGET...]" >&2
	exit 2
}

[ $# -ge 2 ] || usage
workdir=$1
seconds=$2
shift 2
if ! [[ $seconds =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
	usage
fi

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CC=${CC_FUZZ:-clang}
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz/run.sh: clang not found; libFuzzer needs it (apt-get install clang)" >&2
	exit 1
fi

targets=()
if [ $# -gt 0 ]; then
	for t in "$@"; do
		t=$(basename "$t" .c)
		t=fuzz_${t#fuzz_}
		if [ ! -f "$src/fuzz/$t.c" ]; then
			echo "fuzz/run.sh: no such target: fuzz/$t.c" >&2
			exit 2
		fi
		targets+=("$t")
	done
else
	for f in "$src"/fuzz/fuzz_*.c; do
		[ -e "$f" ] && targets+=("$(basename "$f" .c)")
	done
fi
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz/run.sh: no fuzz/fuzz_*.c targets" >&2
	exit 1
fi

mkdir -p "$workdir"/{bin,obj,corpus,logs,artifacts}
workdir=$(cd "$workdir" && pwd)

san=("-fsanitize=address,undefined" -fno-sanitize-recover=all)
cflags=(-std=gnu11 -g -O1 -fno-omit-frame-pointer -I "$src/src")

# The AVX2 checksum must be compiled with -mavx2 and nothing else may be
# (it is only called after a CPUID check), so it is built as its own object.
libsrcs=()
libobjs=()
build_lib() {
	local f o
	for f in "$src"/src/net/*.c; do
		case $(basename "$f") in
		*_avx2.c)
			o="$workdir/obj/$(basename "$f" .c).o"
			"$CC" "${cflags[@]}" -mavx2 -fsanitize=fuzzer-no-link "${san[@]}" \
				-c "$f" -o "$o" || return 1
			libobjs+=("$o")
			;;
		*)
			libsrcs+=("$f")
			;;
		esac
	done
}

summary() {
	# From libFuzzer's log: "Done N runs in S second(s)" and the last "cov:" status line.
	local log=$1 runs cov ft corp
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	corp=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	echo "runs ${runs:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
}

failed=0
if ! build_lib; then
	echo "fuzz/run.sh: building the AVX2 object failed" >&2
	exit 1
fi

for t in "${targets[@]}"; do
	name=${t#fuzz_}
	bin="$workdir/bin/$t"
	log="$workdir/logs/$t.log"
	corpus="$workdir/corpus/$name"
	arts="$workdir/artifacts/$name"

	if ! "$CC" "${cflags[@]}" -fsanitize=fuzzer "${san[@]}" \
		"$src/fuzz/$t.c" "${libsrcs[@]}" "${libobjs[@]}" -o "$bin" >"$log.build" 2>&1; then
		echo "$t: BUILD FAILED (see $log.build)"
		failed=1
		continue
	fi

	mkdir -p "$corpus" "$arts"
	if [ -d "$src/fuzz/corpus/$name" ]; then
		cp -R "$src/fuzz/corpus/$name/." "$corpus/"
	fi

	start=$SECONDS
	"$bin" -max_total_time="$seconds" -max_len=70000 -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$arts/" "$corpus" >"$log" 2>&1
	rc=$?
	took=$((SECONDS - start))
	if [ $rc -ne 0 ]; then
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		echo "$t: FAILED (exit $rc after ${took}s; log $log; input ${crash:-none written})"
		grep -m 3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/    /'
		failed=1
	else
		echo "$t: ok in ${took}s, $(summary "$log")"
	fi
done
exit $failed
