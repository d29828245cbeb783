# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# Helpers shared by the netns tests: sourced, not run. A script opens with
# require, then netns_setup (WORK, a scratch folder, LOG in it, and the
# cleanup at exit), and registers what it makes outside the processes it
# starts through these helpers (track_ns, track_dev, track_pid); the
# cleanup takes all of it down whatever happened. A script that sets WORK
# and LOG itself can call the other helpers all the same; PY (require
# python3) is needed by transfer and free_port.

npass=0
nfail=0
SERVERS=()
CLEAN_PIDS=()	# "PID:SIGNAL", stopped at exit, the last started first
CLEAN_NS=()	# namespaces deleted at exit
CLEAN_DEVS=()	# interfaces of the root namespace deleted at exit

skip() {
	echo "SKIP: $*"
	exit 77
}

# require WHAT...: skips the test (exit 77, CTest's SKIP_RETURN_CODE) with
# one line naming what is missing and how to get it. WHAT is root, tun, or a
# command; PY is set when python3 is asked for: the interpreter itself, not
# a version manager's shim in front of it (pyenv's is a shell script that
# takes half a second or more to start, at every call). Every netns test
# opens with it.
require() {
	local w pkg

	for w in "$@"; do
		case $w in
		root) [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces and TAPs)" ;;
		tun) [ -c /dev/net/tun ] || skip "no /dev/net/tun (modprobe tun)" ;;
		*)
			command -v "$w" >/dev/null && continue
			case $w in
			ip) pkg=iproute2 ;;
			ping) pkg=iputils-ping ;;
			python3) pkg=python3-minimal ;;
			qemu-system-x86_64) pkg=qemu-system-x86 ;;
			busybox) pkg=busybox-static ;;
			*) pkg=$w ;;
			esac
			skip "no $w (apt-get install $pkg)"
			;;
		esac
	done
	case " $* " in
	*" python3 "*)
		PY=$(python3 -c 'import sys; print(sys.executable)') && [ -x "$PY" ] ||
			{ echo "FAIL: python3 does not say where its interpreter is"; exit 1; }
		;;
	esac
}

# ---------------------------------------------------------------- set-up and teardown

# netns_setup NAME: after require. Checks $VNIC, makes WORK
# (/tmp/vnic-NAME.XXXXXX) with LOG in it, and runs netns_cleanup at exit.
netns_setup() {
	[ -x "$VNIC" ] || { echo "FAIL: $VNIC is not executable"; exit 1; }
	WORK=$(mktemp -d "/tmp/vnic-$1.XXXXXX")
	LOG=$WORK/log
	trap netns_cleanup EXIT
	echo "vnic: $VNIC; logs: $LOG"
}

# track_pid PID [SIGNAL]: the cleanup stops PID with SIGNAL (TERM) and
# waits for it; untrack_pid PID once the script has waited for it itself.
track_pid() {
	CLEAN_PIDS+=("$1:${2:-TERM}")
}

untrack_pid() {
	local k
	for k in "${!CLEAN_PIDS[@]}"; do
		[ "${CLEAN_PIDS[k]%%:*}" = "$1" ] && unset "CLEAN_PIDS[k]"
	done
	return 0
}

# track_ns NS...: deleted at exit (a `vnic link` killed leaves the ones it made).
track_ns() {
	CLEAN_NS+=("$@")
}

# track_dev DEV...: interfaces of the root namespace, deleted at exit.
track_dev() {
	CLEAN_DEVS+=("$@")
}

# At exit: the servers, the processes (the last started first: a link
# before the standing server under it), the namespaces, the interfaces;
# WORK is removed, or kept when a check failed.
netns_cleanup() {
	local k keys p n
	stop_servers
	keys=("${!CLEAN_PIDS[@]}")
	for ((k = ${#keys[@]} - 1; k >= 0; k--)); do
		p=${CLEAN_PIDS[keys[k]]}
		kill -"${p#*:}" "${p%%:*}" 2>/dev/null
		wait "${p%%:*}" 2>/dev/null
	done
	CLEAN_PIDS=()
	for n in "${CLEAN_NS[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	for n in "${CLEAN_DEVS[@]}"; do
		ip link del "$n" 2>/dev/null
	done
	if [ "$nfail" -eq 0 ]; then
		rm -rf "$WORK"
	else
		echo "logs kept in $WORK"
	fi
}

# ns_add NS...: new namespaces, loopback up in each, deleted at exit.
ns_add() {
	local n
	for n in "$@"; do
		ip netns add "$n" || return 1
		track_ns "$n"
		ip -n "$n" link set lo up || return 1
	done
}

# ns_gone NS...: none of these namespaces is left.
ns_gone() {
	local n
	for n in "$@"; do
		ip netns list | grep -qw "$n" && { echo "namespace $n left"; return 1; }
	done
	return 0
}

# veth NS1 DEV1 NS2 DEV2: a veth pair, DEV1 in NS1 and DEV2 in NS2 ("" for
# the root namespace, whose end is deleted at exit), both up.
veth() {
	local n1=$1 d1=$2 n2=$3 d2=$4
	ip ${n1:+-n "$n1"} link add "$d1" type veth peer name "$d2" ${n2:+netns "$n2"} || return 1
	[ -n "$n1" ] || track_dev "$d1"
	ip ${n1:+-n "$n1"} link set "$d1" up && ip ${n2:+-n "$n2"} link set "$d2" up
}

# ---------------------------------------------------------------- waiting

# wait_for SECONDS CMD...: 0 as soon as CMD succeeds (tried every 0.05 s);
# 1 if it has not after SECONDS: a hang guard, not a timing check.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS <= end)) || return 1
		sleep 0.05
	done
}

# wait_link_up PID OUT [MORE...]: 0 once OUT, the stdout of a `vnic link` run
# in the background as PID, says it is up; 1 if PID ends first or after 30 s
# (a hang guard, not a timing check: a loaded machine may take seconds),
# with OUT and the files MORE printed.
wait_link_up() {
	local pid=$1 out=$2 end=$((SECONDS + 30))
	shift 2
	while ((SECONDS <= end)); do
		grep -q "vnic link: up" "$out" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$out" "$@"
	echo "not up at $SECONDS s; pid $pid $(kill -0 "$pid" 2>/dev/null && echo running || echo gone)"
	return 1
}

# ---------------------------------------------------------------- vnic link and vnic server

# link_start OUT ERR ARGS...: `vnic link ARGS` in the background, stdout
# into OUT and stderr into ERR (- : into OUT too), both emptied first (the
# wait must not find an earlier run's "up"); its pid in LINK_PID, stopped
# with SIGINT at exit. Then wait_link_up, whose status it returns.
link_start() {
	local out=$1 err=$2
	shift 2
	: >"$out"
	if [ "$err" = - ]; then
		"$VNIC" link "$@" >"$out" 2>&1 &
	else
		: >"$err"
		"$VNIC" link "$@" >"$out" 2>"$err" &
	fi
	LINK_PID=$!
	track_pid "$LINK_PID" INT
	if [ "$err" = - ]; then
		wait_link_up "$LINK_PID" "$out"
	else
		wait_link_up "$LINK_PID" "$out" "$err"
	fi
}

# link_stop PID [SIGNAL [FILE...]]: SIGNAL (INT) to the link PID, waits for
# it and returns its exit status, printing the FILEs (its output) and the
# status.
link_stop() {
	local pid=$1 sig=${2:-INT} rc
	shift
	[ $# -eq 0 ] || shift
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	untrack_pid "$pid"
	[ $# -eq 0 ] || cat "$@"
	echo "exit status $rc"
	return $rc
}

# link_pair [FLAGS...]: link_start of `vnic link --name $NAME --new-ns-a $NA
# --new-ns-b $NB FLAGS`, its output into $WORK/link.out: two namespaces it
# makes, 10.99.0.1 and fd00:99::1 in NA, 10.99.0.2 and fd00:99::2 in NB.
# shellcheck disable=SC2153 # NAME, NA and NB are the sourcing script's
link_pair() {
	link_start "$WORK/link.out" - --name "$NAME" --new-ns-a "$NA" --new-ns-b "$NB" "$@"
}

# stop_link_reported: SIGINT to the link LINK_PID, whose stdout is
# $WORK/link.out; status 0 and the final report in it.
stop_link_reported() {
	local rc
	link_stop "$LINK_PID" INT "$WORK/link.out"
	rc=$?
	LINK_PID=
	[ $rc -eq 0 ] && grep -q "^vnic link: .* s; a>b" "$WORK/link.out"
}

# vnic_server SOCK ARGS...: `vnic server --listen SOCK ARGS` in the
# background, its output into LOG, its pid in SRV_PID (SIGTERM at exit);
# 0 once the socket is there, 1 if it is not within 10 s.
vnic_server() {
	local sock=$1
	shift
	"$VNIC" server --listen "$sock" "$@" >>"$LOG" 2>&1 &
	SRV_PID=$!
	track_pid "$SRV_PID"
	wait_for 10 test -S "$sock"
}

# ctr NAME COUNTER: COUNTER's value in `vnic stats NAME --all`; empty if it has none.
ctr() {
	"$VNIC" stats "$1" --all 2>/dev/null | awk -v c="$2" '$1 == c { print $2 }'
}

# ctr_is NAME COUNTER OP VALUE: prints "COUNTER = value"; true if NAME has
# COUNTER and it is OP (-eq, -gt, -ge, ...) VALUE.
ctr_is() {
	local v
	v=$(ctr "$1" "$2")
	echo "$2 = ${v:-absent}"
	[ -n "$v" ] && test "$v" "$3" "$4"
}

# one_line_error PATTERN CMD...: CMD (20 s at most: a run that wrongly
# starts must not hang the test) exits with status 1 and one line of
# output, which matches PATTERN.
one_line_error() {
	local pat=$1 out rc
	shift
	out=$(timeout 20 "$@" 2>&1)
	rc=$?
	echo "$out (exit $rc)"
	[ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q -- "$pat"
}

pass() {
	echo "PASS: $*"
	npass=$((npass + 1))
}

fail() {
	echo "FAIL: $*"
	nfail=$((nfail + 1))
}

# check NAME CMD...: PASS if CMD exits 0; its output goes to the log. CMD's
# status, so that what needs it can follow: check "up" start_link || ...
check() {
	local name=$1
	shift
	echo "--- $name: $*" >>"$LOG"
	if "$@" >>"$LOG" 2>&1; then
		pass "$name"
		return 0
	fi
	fail "$name (see $LOG)"
	return 1
}

# A server in namespace $1 (the rest is its command); its pid joins SERVERS.
server() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@" >>"$LOG" 2>&1 &
	SERVERS+=($!)
}

stop_servers() {
	local p
	for p in "${SERVERS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	SERVERS=()
}

# A TCP listener on port $2 in namespace $1.
port_listens() {
	ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# Waits until TCP port $2 listens in namespace $1: 30 s at most (a hang
# guard: a loaded machine can take seconds to start a server).
wait_port() {
	wait_for 30 port_listens "$1" "$2" && return 0
	echo "nothing listens on port $2 in $1 after 30 s"
	return 1
}

# iperf_server NS: iperf3 -s on port 5201 in NS (one of SERVERS), listening.
iperf_server() {
	server "$1" iperf3 -s -p 5201
	wait_port "$1" 5201
}

# nsping NS ADDR [OPTIONS...]: ping -c 3 -i 0.2 -W 2 ADDR from NS; OPTIONS
# come after those, so -c 2 or -W 3 among them wins.
nsping() {
	ip netns exec "$1" ping -c 3 -i 0.2 -W 2 "${@:3}" "$2"
}

# iperf_run NS ADDR FLAGS...: iperf3 TCP from namespace NS to ADDR (a
# server on port 5201) for as long as FLAGS say (-t, -n): passes if the
# receiver counted more than nothing.
iperf_run() {
	local ns=$1 addr=$2
	shift 2
	ip netns exec "$ns" iperf3 -c "$addr" -p 5201 -f g "$@" | tee -a "$LOG" |
		grep -E "receiver$" | awk '{ if ($7 + 0 > 0) ok = 1 } END { exit !ok }'
}

# iperf_tcp NS ADDR [FLAGS...]: iperf_run for 1 s. What is checked is that
# the receiver got bytes and iperf3 ended without an error; one second
# carries hundreds of megabytes through a vNIC, more seconds only cost time.
iperf_tcp() {
	iperf_run "$1" "$2" -t 1 "${@:3}"
}

# make_blob MiB: $WORK/blob of random bytes, its sha256 in BLOB_SUM, its size in BLOB_BYTES.
make_blob() {
	head -c "$(($1 << 20))" /dev/urandom >"$WORK/blob"
	BLOB_SUM=$(sha256sum "$WORK/blob" | cut -d' ' -f1)
	BLOB_BYTES=$(($1 << 20))
}

# The blob from namespace $1 to namespace $2's address $3, port $4; the
# receiver hashes what it got, and it must match.
transfer() {
	local from=$1 to=$2 addr=$3 port=$4
	ip netns exec "$to" "$PY" -c '
import hashlib, socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
c, _ = s.accept()
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    h.update(b)
    n += len(b)
print(h.hexdigest(), n)' "$addr" "$port" >"$WORK/recv.out" 2>>"$LOG" &
	local rpid=$!
	wait_port "$to" "$port" || { kill $rpid; return 1; }
	ip netns exec "$from" timeout 120 bash -c "cat '$WORK/blob' > /dev/tcp/$addr/$port" || {
		kill $rpid
		return 1
	}
	wait $rpid
	echo "sent $BLOB_SUM $BLOB_BYTES, received $(cat "$WORK/recv.out")"
	[ "$(cat "$WORK/recv.out")" = "$BLOB_SUM $BLOB_BYTES" ]
}

# A free port of protocol $1 (tcp, udp) on 127.0.0.1, from the kernel.
free_port() {
	"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if sys.argv[1] == "tcp" else socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' "$1"
}
