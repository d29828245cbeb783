#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds the libFuzzer targets (fuzz/fuzz_*.c) with clang, ASan and UBSan and
# runs each for a fixed time or a fixed number of inputs. Nothing is written into the source tree: the
# objects, the binaries, the working corpora (started from fuzz/corpus/<name>/),
# logs and crash artifacts all go to WORKDIR, so a corpus grown there can be
# kept and reused by the next run, and library objects are rebuilt only when
# a source or header changed.
#
#   fuzz/run.sh WORKDIR SECONDS [TARGET...]
#   fuzz/run.sh WORKDIR runs [TARGET...]
#
# SECONDS: each target runs that long. runs: each target runs its own number
# of inputs (short_runs below), whatever the machine's load: the work is
# the same on a busy machine, only slower, and the run ends (CTest's
# fuzz_short). A target of a runs run that has not done its inputs in
# FUZZ_CAP seconds (default 300) is stopped and fails: a hang outside one
# input's -timeout, or a target grown much slower, costs that target its
# cap and a line that says so, not the whole test its CTest timeout. A
# target still running 60 s after its time (SECONDS, or the cap) is killed
# and fails.
# TARGET is fuzz_parse, parse or fuzz/fuzz_parse.c; default: every fuzz/fuzz_*.c.
# FUZZ_JOBS (default 2) compiles that many files at once.
# FUZZ_TRACE_CMP=0 builds the layers without libFuzzer's comparison tracing
# (-fno-sanitize-coverage=trace-cmp): the targets that bring a link up and
# down in every input run about 2.5x the inputs per second, for long
# campaigns, at the price of the mutations guided by compared values. The
# target file itself keeps the tracing.
# Exit status: 0 if every target built and ran its time without a crash.
set -u -o pipefail

usage() {
	echo "usage: $0 WORKDIR SECONDS|runs [TARGET...]" >&2
	exit 2
}

[ $# -ge 2 ] || usage
workdir=$1
seconds=$2
shift 2
if [ "$seconds" != runs ] && { ! [[ $seconds =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; }; then
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
jobs=${FUZZ_JOBS:-2}
cap=${FUZZ_CAP:-300}
if ! [[ $cap =~ ^[0-9]+$ ]] || [ "$cap" -eq 0 ]; then
	echo "fuzz/run.sh: FUZZ_CAP is a number of seconds, not '$cap'" >&2
	exit 2
fi
lib_cov=(-fsanitize=fuzzer-no-link)
case ${FUZZ_TRACE_CMP:-1} in
0) lib_cov+=(-fno-sanitize-coverage=trace-cmp) ;;
1) ;;
*)
	echo "fuzz/run.sh: FUZZ_TRACE_CMP is 0 or 1, not '$FUZZ_TRACE_CMP'" >&2
	exit 2
	;;
esac

# The layers the targets reach, and of src/app only the control socket
# (and the JSON writer it uses). Every object goes into one archive: a
# target links only the objects it needs from it.
libsrcs=()
for layer in net core hv device driver port; do
	libsrcs+=("$src"/src/$layer/*.c)
done
libsrcs+=("$src/src/app/ctl.c" "$src/src/app/json.c" "$src/fuzz/harness.c")
lib="$workdir/obj/libvnic_fuzz.a"

# The flags an object was built with: a change rebuilds everything.
stamp="$workdir/obj/flags"
flags_now="$CC ${cflags[*]} ${san[*]} ${lib_cov[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$flags_now" ]; then
	rm -f "$workdir"/obj/*.o "$lib"
	echo "$flags_now" >"$stamp"
fi
newest_hdr=$(find "$src/src" "$src/fuzz" -name '*.h' -newer "$stamp" -print -quit)
if [ -n "$newest_hdr" ]; then
	rm -f "$workdir"/obj/*.o "$lib"
	touch "$stamp"
fi

# The AVX2 checksum must be compiled with -mavx2 and nothing else may be
# (it is only called after a CPUID check). The harness gets the sanitizers
# but no coverage: its loops over rings and pollers would only slow every
# input down and teach libFuzzer nothing about the code under test.
compile() {
	local f=$1 o=$2 extra=("${lib_cov[@]}")

	case $(basename "$f") in
	*_avx2.c) extra+=(-mavx2) ;;
	harness.c) extra=() ;;
	esac
	"$CC" "${cflags[@]}" "${extra[@]}" "${san[@]}" -c "$f" -o "$o"
}

build_lib() {
	local f o rel pids=() objs=() rebuilt=0 failed=0 pid

	for f in "${libsrcs[@]}"; do
		rel=${f#"$src"/}
		o="$workdir/obj/$(echo "${rel%.c}" | tr / _).o"
		objs+=("$o")
		if [ -f "$o" ] && [ "$o" -nt "$f" ]; then
			continue
		fi
		rebuilt=1
		compile "$f" "$o" 2>>"$workdir/logs/lib.build" &
		pids+=($!)
		if [ ${#pids[@]} -ge "$jobs" ]; then
			wait "${pids[0]}" || failed=1
			pids=("${pids[@]:1}")
		fi
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=1
	done
	[ $failed -eq 0 ] || return 1
	if [ $rebuilt -eq 1 ] || [ ! -f "$lib" ]; then
		rm -f "$lib"
		ar rcs "$lib" "${objs[@]}" || return 1
	fi
}

# Inputs a target can use; the network ones hold a superpacket.
max_len() {
	case $1 in
	fuzz_ctl_request) echo 1024 ;;
	fuzz_split_hv) echo 4096 ;;
	fuzz_dev_crq | fuzz_drv_crq) echo 4096 ;;
	fuzz_dev_subcrq | fuzz_drv_comp) echo 16384 ;;
	*) echo 70000 ;;
	esac
}

# The inputs of a `runs` run: about what each target ran in 10 s on the
# 2-vCPU CI machine under load, so that the coverage it reached then (still
# growing at the end for most) is reached now; fuzz_ctl_request and
# fuzz_parse stop gaining features after a few hundred thousand and a
# million inputs, well short of their millions in 10 s.
short_runs() {
	case $1 in
	fuzz_ctl_request) echo 200000 ;;
	fuzz_parse) echo 1200000 ;;
	fuzz_tap_vnet) echo 360000 ;;
	fuzz_gso) echo 160000 ;;
	fuzz_gro) echo 80000 ;;
	fuzz_dev_subcrq) echo 66000 ;;
	fuzz_dev_crq) echo 42000 ;;
	fuzz_drv_crq) echo 20000 ;;
	fuzz_drv_comp) echo 18000 ;;
	fuzz_switch) echo 9000 ;;
	fuzz_split_hv) echo 5400 ;;
	*) echo 20000 ;;
	esac
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
: >"$workdir/logs/lib.build"
if ! build_lib; then
	echo "fuzz/run.sh: building the library failed (see $workdir/logs/lib.build)" >&2
	exit 1
fi

for t in "${targets[@]}"; do
	name=${t#fuzz_}
	bin="$workdir/bin/$t"
	log="$workdir/logs/$t.log"
	corpus="$workdir/corpus/$name"
	arts="$workdir/artifacts/$name"

	if ! "$CC" "${cflags[@]}" -fsanitize=fuzzer "${san[@]}" "$src/fuzz/$t.c" "$lib" \
		-lpthread -lm -o "$bin" >"$log.build" 2>&1; then
		echo "$t: BUILD FAILED (see $log.build)"
		failed=1
		continue
	fi

	mkdir -p "$corpus" "$arts"
	if [ -d "$src/fuzz/corpus/$name" ]; then
		cp -R "$src/fuzz/corpus/$name/." "$corpus/"
	fi

	want=
	if [ "$seconds" = runs ]; then
		want=$(short_runs "$t")
		limit=(-runs="$want" -max_total_time="$cap")
	else
		limit=(-max_total_time="$seconds")
	fi
	start=$SECONDS
	# -max_total_time is checked between inputs: a target stuck where
	# libFuzzer does not look (its exit, a thread of the harness) is killed.
	timeout -k 10 $((${seconds/runs/$cap} + 60)) \
		"$bin" "${limit[@]}" -max_len="$(max_len "$t")" -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$arts/" "$corpus" >"$log" 2>&1
	rc=$?
	took=$((SECONDS - start))
	done_runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "$t: FAILED (killed after ${took}s: it did not end at its time limit; log $log)"
		failed=1
	elif [ $rc -eq 0 ] && [ -n "$want" ] && [ "${done_runs:-0}" -lt "$want" ]; then
		# libFuzzer ends at -max_total_time with status 0: short of its inputs is a failure here.
		echo "$t: FAILED (stopped at its cap of ${cap}s after ${done_runs:-0} of $want inputs; log $log)"
		failed=1
	elif [ $rc -ne 0 ]; then
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		echo "$t: FAILED (exit $rc after ${took}s; log $log; input ${crash:-none written})"
		grep -m 3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/    /'
		failed=1
	else
		echo "$t: ok in ${took}s, $(summary "$log")"
	fi
done
exit $failed
