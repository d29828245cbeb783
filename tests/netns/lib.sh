# SPDX-License-Identifier: MIT
#
# Helpers shared by the netns tests: sourced, not run. The sourcing script
# sets WORK (a scratch folder) and LOG (a file in it) before calling them,
# and PY before transfer.

npass=0
nfail=0
SERVERS=()

skip() {
	echo "SKIP: $*"
	exit 77
}

# require WHAT...: skips the test (exit 77, CTest's SKIP_RETURN_CODE) with
# one line naming what is missing and how to get it. WHAT is root, tun, or a
# command; PY is set when python3 is asked for. Every netns test opens with it.
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
	*" python3 "*) PY=$(command -v python3) ;;
	esac
}

# wait_link_up PID OUT [MORE...]: 0 once OUT, the stdout of a `vnic link` run
# in the background as PID, says it is up; 1 if PID ends first or after 20 s
# (a hang guard, not a timing check), with OUT and the files MORE printed.
wait_link_up() {
	local pid=$1 out=$2
	shift 2
	for _ in $(seq 400); do
		grep -q "vnic link: up" "$out" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$out" "$@"
	return 1
}

# stop_link_reported: SIGINT to the link LINK_PID, whose stdout is
# $WORK/link.out; status 0 and the final report in it.
stop_link_reported() {
	local rc
	kill -INT "$LINK_PID"
	wait "$LINK_PID"
	rc=$?
	LINK_PID=
	cat "$WORK/link.out"
	echo "exit status $rc"
	[ $rc -eq 0 ] && grep -q "^vnic link: .* s; a>b" "$WORK/link.out"
}

pass() {
	echo "PASS: $*"
	npass=$((npass + 1))
}

fail() {
	echo "FAIL: $*"
	nfail=$((nfail + 1))
}

# check NAME CMD...: PASS if CMD exits 0; its output goes to the log.
check() {
	local name=$1
	shift
	echo "--- $name: $*" >>"$LOG"
	if "$@" >>"$LOG" 2>&1; then
		pass "$name"
	else
		fail "$name (see $LOG)"
	fi
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

# Waits until TCP port $2 listens in namespace $1.
wait_port() {
	local i
	for i in $(seq 100); do
		ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# iperf3 TCP from namespace $1 to $2 (a server on port 5201), 3 s: passes if
# the receiver counted more than nothing.
iperf_tcp() { # NS ADDR [flags]
	local ns=$1 addr=$2
	shift 2
	ip netns exec "$ns" iperf3 -c "$addr" -p 5201 -t 3 -f g "$@" | tee -a "$LOG" |
		grep -E "receiver$" | awk '{ if ($7 + 0 > 0) ok = 1 } END { exit !ok }'
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
