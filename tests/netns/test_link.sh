#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Real traffic across `vnic link`: the kernel's own TCP/IP in two network
# namespaces, talking through two vNICs.
#
#   netns $NA                                                       netns $NB
#   +-----------------+                                    +-----------------+
#   | iperf3, ping,   |                                    | iperf3 -s, ping |
#   | sockperf, cat   |                                    | sockperf server |
#   | 10.99.0.1/24    |                                    | 10.99.0.2/24    |
#   | fd00:99::1/64   |                                    | fd00:99::2/64   |
#   |  vnic0 (TAP)    |                                    |  vnic0 (TAP)    |
#   +-------|---------+                                    +-------|---------+
#           |   vnet hdr, TSO superpackets                         |
#   +-------|--------------------------------------------------------|-------+
#   |  driver A - hv A - device A ====== cable ====== device B - hv B - driver B |
#   |                      `vnic link` (root namespace, 2 threads)            |
#   +--------------------------------------------------------------------------+
#
# Backing mode (--backing): one vNIC whose device is an AF_PACKET socket on
# one end of a veth pair; the other end sits in a third namespace.
#
#   netns $NA                     root namespace                  netns $NC
#   vnic0 (TAP) - vNIC - device - AF_PACKET on $VB ==veth== $VP  10.98.0.2/24
#   10.98.0.1/24                                                  fd00:98::2/64
#
# Checks: iperf3 TCP both ways over IPv4 and IPv6, iperf3 UDP, sockperf
# ping-pong, ping 56/1400/8000 at MTU 1500 and 9000, a TAP MTU changed from
# inside its namespace put back, a 64 MiB transfer
# whose sha256 matches at the other end (with offloads, then with TSO and
# checksum offload off on a TAP), --pcap read back by tshark, 24 MiB of iperf3
# through --pcap --snaplen 128 (fewer frames than a ring holds) with no frame
# left out of the capture, ping
# and iperf3 with --spinners 1 (an idle thread sleeps while the other spins), the
# errors a user meets (a loopback or TUN backing, a --pcap directory among
# them), the backing mode, and that teardown leaves nothing behind:
# after SIGINT, SIGTERM, SIGHUP, and a reader of stdout that went away
# (vnic link | head -1); a control socket left by kill -9 is replaced.
#
# Usage: test_link.sh PATH/TO/vnic    (root; exit 77 = skipped)
# Every address is inside namespaces this script (or vnic link) creates.

set -u

VNIC=${1:?usage: test_link.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip ping iperf3 python3
netns_setup netns
NA=vnt-a-$$
NB=vnt-b-$$
NC=vnt-c-$$
VB=vntb$$
VP=vntp$$
VT=vntt$$
NAME=vnt-$$
LAST_PID=
track_ns "$NA" "$NB" "$NC"
track_dev "$VT"

# Starts `vnic link` in the background with extra flags; waits until it says
# it is up. Returns non-zero if it never does.
start_link() {
	link_start "$WORK/link.out" - --name "$NAME" "$@"
	local rc=$?
	LAST_PID=$LINK_PID
	return $rc
}

# Stops the background link with SIGINT (or $1); non-zero if it failed to exit cleanly.
stop_link() {
	link_stop "$LINK_PID" "${1:-INT}" "$WORK/link.out"
	local rc=$?
	LINK_PID=
	return $rc
}

iface_up() {
	ip -n "$1" -o link show dev vnic0 | grep -q "state UP\|,UP"
}

# Nothing of ours is left: no namespace, no interface in the root namespace.
nothing_left() {
	ns_gone "$@" || return 1
	# The TAPs are born in the root namespace as vnic<pid of vnic link>a and b.
	ip -o link show | grep -q "vnic${LAST_PID}[ab]" && { echo "TAP left in the root namespace"; return 1; }
	return 0
}

iperf_udp() { # NS ADDR
	# -b bounds the rate so the check is about delivery, not about loss under overload.
	ip netns exec "$1" iperf3 -c "$2" -p 5201 -u -b 200M -t 1 | tee -a "$LOG" |
		grep -E "receiver$" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, a, "/"); if (a[2] - a[1] > 0) ok = 1 } } END { exit !ok }'
}

# Raises the TAP's MTU in namespace $1 to 9000 behind the vNIC's back; vnic
# link must put it back to 1500 within a second.
mtu_put_back() {
	ip -n "$1" link set vnic0 mtu 9000 || return 1
	wait_for 1 tap_mtu "$1" 1500 && return 0
	ip -n "$1" -o link show vnic0
	return 1
}

tap_mtu() { # NS MTU: vnic0 in NS has that MTU
	ip -n "$1" -o link show vnic0 | grep -q " mtu $2 "
}

# A don't-fragment datagram larger than the MTU fails at once, at the sender,
# rather than leaving and vanishing: ping says "message too long", and a
# program's send gets EMSGSIZE. After a send that fails ping still waits one
# interval (1 s by default) before it ends: -i 0.01 takes that wait out, and
# nothing is lost, since the error comes from the send itself.
df_too_long() { # NS ADDR
	local out rc
	out=$(ip netns exec "$1" ping -M "do" -c 1 -i 0.01 -W 2 -s 8000 "$2" 2>&1)
	rc=$?
	echo "$out (exit $rc)"
	[ $rc -ne 0 ] && echo "$out" | grep -q "local error: message too long, mtu=1500" || return 1
	ip netns exec "$1" "$PY" -c '
import errno, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# IP_MTU_DISCOVER, IP_PMTUDISC_DO (Linux values: Python does not name them all)
s.setsockopt(socket.IPPROTO_IP, 10, 2)
try:
    s.sendto(b"x" * 8000, (sys.argv[1], 9))
except OSError as e:
    print("send:", e)
    sys.exit(e.errno != errno.EMSGSIZE)
print("send: 8000 bytes sent whole")
sys.exit(1)' "$2"
}

pings() { # NS ADDR6? MTU-label
	local ns=$1 dst=$2 label=$3 sz
	for sz in 56 1400 8000; do
		check "ping $dst $sz B at $label" nsping "$ns" "$dst" -s "$sz"
	done
}

make_blob 64

# ---------------------------------------------------------------- errors a user meets
# refused PATTERN NS CMD...: one_line_error, and no namespace NS after (nothing created).
refused() {
	local pat=$1 ns=$2
	shift 2
	one_line_error "$pat" "$@" && ns_gone "$ns"
}

# The namespaces given are attached, not made: a refusal leaves them.
in_use_kept() {
	one_line_error "already in use" "$VNIC" link --ns-a "$NA" --ns-b "$NB" &&
		ip netns list | grep -qw "$NA"
}

check "not root: one line, exit 1" one_line_error "needs root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$VNIC" link
check "no /dev/net/tun: one line, exit 1" one_line_error "/dev/net/tun" \
	unshare -m bash -c "mount -t tmpfs none /dev/net && '$VNIC' link --new-ns-a $NA --new-ns-b $NB"

ns_add "$NA"
check "namespace name taken: one line, exit 1, nothing created" refused "already exists" "$NB" \
	"$VNIC" link --new-ns-a "$NA" --new-ns-b "$NB"
ns_add "$NB"
# On loopback: every namespace has one (the dummy module may be missing).
ip -n "$NB" addr add 10.99.0.2/24 dev lo
check "address in use: one line, exit 1, attached namespaces kept" in_use_kept
ip netns del "$NA"
ip netns del "$NB"

# A backing must be a dedicated Ethernet device: lo would copy the host's own
# traffic (127.0.0.1 included) into namespace A, and an L3 device has no
# Ethernet frames. Refused with one line before anything is built.
check "--backing lo: refused, one line, exit 1, nothing created" refused "lo: a loopback device" \
	"$NA" "$VNIC" link --backing lo --new-ns-a "$NA"

if ip tuntap add "$VT" mode tun 2>>"$LOG" && ip link set "$VT" up; then
	check "--backing on a TUN (L3): refused, one line, exit 1, nothing created" \
		refused "$VT: not an Ethernet device" "$NA" "$VNIC" link --backing "$VT" --new-ns-a "$NA"
	ip link del "$VT"
else
	fail "ip tuntap add $VT mode tun"
fi

# An output path is opened before anything is built: a directory is one line.
check "--pcap on a directory: one line, exit 1, nothing created" refused "pcap $WORK: a directory" \
	"$NA" "$VNIC" link --new-ns-a "$NA" --new-ns-b "$NB" --pcap "$WORK"

# ---------------------------------------------------------------- MTU 1500
if check "vnic link up (MTU 1500)" start_link --new-ns-a "$NA" --new-ns-b "$NB"; then
	check "interfaces UP" bash -c "$(declare -f iface_up); iface_up $NA && iface_up $NB"
	check "vnic stats answers" "$VNIC" stats "$NAME"
	pings "$NA" 10.99.0.2 "MTU 1500"
	pings "$NA" fd00:99::2 "MTU 1500"

	# The TAP's MTU is the vNIC's: changed from inside its namespace, it is put back.
	check "TAP MTU raised to 9000 in $NA: put back to 1500 within a second" mtu_put_back "$NA"
	check "TAP MTU put back: one line says so" grep -q \
		"vnic link: a: vnic0 MTU set to 9000 from outside; put back to 1500 (the vNIC's MTU; restart with --mtu 9000)" \
		"$WORK/link.out"
	check "TAP MTU put back: link.mtu_restored 1" bash -c \
		"'$VNIC' stats '$NAME' | tee -a '$LOG' | grep -Eq '^link\.mtu_restored +1\$'"
	check "TAP MTU put back: ping 8000 B still crosses (fragments)" \
		nsping "$NA" 10.99.0.2 -s 8000
	check "TAP MTU put back: ping -M do 8000 B fails at once, message too long" \
		df_too_long "$NA" 10.99.0.2

	iperf_server "$NB"
	check "iperf3 TCP IPv4 a->b" iperf_tcp "$NA" 10.99.0.2
	check "iperf3 TCP IPv4 b->a" iperf_tcp "$NA" 10.99.0.2 -R
	check "iperf3 TCP IPv6 a->b" iperf_tcp "$NA" fd00:99::2
	check "iperf3 TCP IPv6 b->a" iperf_tcp "$NA" fd00:99::2 -R
	check "iperf3 UDP IPv4" iperf_udp "$NA" 10.99.0.2
	stop_servers

	if command -v sockperf >/dev/null; then
		server "$NB" sockperf server --tcp -i 10.99.0.2 -p 11111
		wait_port "$NB" 11111
		check "sockperf TCP ping-pong" bash -c "ip netns exec $NA sockperf ping-pong --tcp -i 10.99.0.2 -p 11111 -m 14 -t 1 | tee -a '$LOG' | grep -q avg-latency"
		stop_servers
	else
		echo "SKIP: sockperf ping-pong (apt-get install sockperf)"
	fi

	check "64 MiB a->b, sha256 matches" transfer "$NA" "$NB" 10.99.0.2 5301
	check "64 MiB b->a over IPv6, sha256 matches" transfer "$NB" "$NA" fd00:99::1 5302
	check "ethtool -K vnic0 tso off tx off (in $NA)" ip netns exec "$NA" ethtool -K vnic0 tso off tx off
	check "64 MiB a->b without TSO and tx checksum offload, sha256 matches" \
		transfer "$NA" "$NB" 10.99.0.2 5303
	check "64 MiB b->a towards the TAP without offloads, sha256 matches" \
		transfer "$NB" "$NA" 10.99.0.1 5304

	check "SIGINT: clean exit" stop_link
	check "teardown: no namespace, no interface left" nothing_left "$NA" "$NB"
fi

# ---------------------------------------------------------------- MTU 9000
if check "vnic link up (MTU 9000)" start_link --new-ns-a "$NA" --new-ns-b "$NB" --mtu 9000; then
	check "MTU 9000 in $NB" bash -c "ip -n $NB link show vnic0 | grep -q 'mtu 9000'"
	pings "$NA" 10.99.0.2 "MTU 9000"
	pings "$NA" fd00:99::2 "MTU 9000"
	iperf_server "$NB"
	check "iperf3 TCP IPv4 a->b at MTU 9000" iperf_tcp "$NA" 10.99.0.2
	stop_servers
	check "SIGTERM: clean exit" stop_link TERM
	check "teardown after MTU 9000: nothing left" nothing_left "$NA" "$NB"
fi

# ---------------------------------------------------------------- --pcap
# A short run of its own: the capture holds every frame, so keep it small.
if start_link --new-ns-a "$NA" --new-ns-b "$NB" --pcap "$WORK/wire.pcap"; then
	pass "vnic link --pcap up"
	check "ping through the capture" nsping "$NA" 10.99.0.2
	check "ping -6 through the capture" nsping "$NA" fd00:99::2
	iperf_server "$NB"
	check "iperf3 TCP through the capture" ip netns exec "$NA" iperf3 -c 10.99.0.2 -p 5201 -n 4M
	stop_servers
	check "--pcap: clean exit" stop_link
	if command -v tshark >/dev/null; then
		check "pcap: tshark reads ICMP, ICMPv6 and TCP in it" bash -c "
			s=\$(tshark -r '$WORK/wire.pcap' -q -z io,phs 2>&1) || exit 1
			echo \"\$s\"
			echo \"\$s\" | grep -q ' icmp ' && echo \"\$s\" | grep -q ' icmpv6 ' &&
				echo \"\$s\" | grep -q ' tcp '"
	else
		echo "SKIP: reading the pcap back (apt-get install tshark)"
		check "pcap: file written" test -s "$WORK/wire.pcap"
	fi
	check "teardown after --pcap: nothing left" nothing_left "$NA" "$NB"
elif grep -q "without libpcap" "$WORK/link.out"; then
	echo "SKIP: --pcap (vnic built without libpcap-dev)"
else
	fail "vnic link --pcap up"
fi

# ---------------------------------------------------------------- --pcap --snaplen, a bounded bulk transfer
# Headers only: 128 bytes of each frame, so each side's ring (8 MiB in slots
# of 192 bytes) holds 32,768 frames. 24 MiB over TCP is about 17,400 data
# frames one way and no more ACKs the other: fewer than a ring holds, so
# not one frame can be left out of the capture however slowly the writer
# drains the rings, on any machine. What is checked then: every frame
# counted, written, and read back cut to 128 bytes.

pcap_bulk_read_back() { # FILE FRAMES-AT-LEAST
	local f=$1 want=$2 n max cut phs
	# Every record: cut to 128 bytes, the frame's length kept (cheap: no IP dissection).
	read -r n max cut < <(tshark -r "$f" --disable-protocol ip --disable-protocol ipv6 \
		-T fields -e frame.cap_len -e frame.len |
		awk '{ n++; if ($1 > m) m = $1; if ($2 > 128) cut++ } END { print n + 0, m + 0, cut + 0 }')
	echo "tshark: $n frames, the largest record $max bytes, $cut frames cut (want at least $want frames)"
	[ "$n" -ge "$want" ] && [ "$n" -gt 10000 ] && [ "$max" -eq 128 ] && [ "$cut" -gt 0 ] || return 1
	# and the first frames decode as TCP/IP
	phs=$(tshark -r "$f" -c 2000 -q -z io,phs)
	echo "$phs"
	echo "$phs" | grep -q " tcp "
}

if check "vnic link --pcap --snaplen 128 up" start_link --new-ns-a "$NA" --new-ns-b "$NB" --pcap "$WORK/bulk.pcap" --snaplen 128; then
	iperf_server "$NB"
	check "iperf3 24 MiB through a --snaplen 128 capture" iperf_run "$NA" 10.99.0.2 -n 24M
	stop_servers
	# the writer may still be draining: a hang guard, not a timing check
	wait_for 10 ctr_is "$NAME" pcap.written -gt 10000 >/dev/null
	written=$(ctr "$NAME" pcap.written)
	left_out=$(ctr "$NAME" pcap.left_out)
	echo "--- bulk capture: pcap.written $written, pcap.left_out $left_out" >>"$LOG"
	echo "bulk capture: $written frames written, $left_out left out"
	check "--snaplen 128: vnic stats counts frames written" test "${written:-0}" -gt 10000
	check "--snaplen 128: pcap.left_out 0" test "$left_out" = 0
	check "--snaplen 128: clean exit" stop_link
	check "--snaplen 128: the report says 0 left out" \
		grep -q "vnic link: pcap: [0-9]* frames so far, 0 left out" "$WORK/link.out"
	if command -v tshark >/dev/null; then
		check "--snaplen 128: tshark reads every frame back, cut to 128 bytes" \
			pcap_bulk_read_back "$WORK/bulk.pcap" "${written:-1}"
	else
		echo "SKIP: reading the bulk capture back (apt-get install tshark)"
	fi
	rm -f "$WORK/bulk.pcap"
	check "teardown after --snaplen: nothing left" nothing_left "$NA" "$NB"
elif grep -q "without libpcap" "$WORK/link.out"; then
	echo "SKIP: --pcap --snaplen (vnic built without libpcap-dev)"
else
	fail "vnic link --pcap --snaplen 128 up"
fi

# ---------------------------------------------------------------- live changes and resets
# `vnic set` while iperf3 runs: direct sends stop, the MTU goes to 9000 and back
# through change-param resets (the TAPs follow), and iperf3 ends without an error.
if check "vnic link up (live changes)" start_link --new-ns-a "$NA" --new-ns-b "$NB"; then
	iperf_server "$NB"
	ip netns exec "$NA" iperf3 -c 10.99.0.2 -p 5201 -t 8 >"$WORK/iperf-live.out" 2>&1 &
	iperf_pid=$!
	sleep 1
	check "vnic show: negotiated and settings" bash -c \
		"'$VNIC' show '$NAME' | grep -q 'channels     tx 1 rx 1' && '$VNIC' show '$NAME' | grep -q 'tx-submit'"
	check "vnic set tx-submit indirect" bash -c "'$VNIC' set '$NAME' tx-submit indirect | grep -q 'ok: policies'"
	d1=$(ctr "$NAME" drv_a.tx0_direct_packets)
	sleep 1
	d2=$(ctr "$NAME" drv_a.tx0_direct_packets)
	check "tx-submit indirect: direct sends stop ($d1 -> $d2)" test "$d1" = "$d2"
	check "vnic set mtu 9000 (change-param)" bash -c "'$VNIC' set '$NAME' mtu 9000 | grep -q 'change-param'"
	check "the TAPs follow: MTU 9000 in $NA and $NB" bash -c \
		"ip -n $NA link show vnic0 | grep -q 'mtu 9000' && ip -n $NB link show vnic0 | grep -q 'mtu 9000'"
	check "resets_change_param counted" test "$(ctr "$NAME" drv_a.resets_change_param)" -ge 1
	sleep 1
	check "vnic set mtu 1500 (and back)" bash -c "'$VNIC' set '$NAME' mtu 1500 | grep -q 'change-param'"
	check "the TAPs follow: MTU 1500" bash -c "ip -n $NA link show vnic0 | grep -q 'mtu 1500'"
	check "vnic set: a bad value changes nothing" bash -c \
		"! '$VNIC' set '$NAME' tx-submit auto queues 2 2>/dev/null && '$VNIC' show '$NAME' | grep -q 'tx-submit  *indirect'"
	check "iperf3 through the live changes" wait "$iperf_pid"
	cat "$WORK/iperf-live.out" >>"$LOG"
	stop_servers
	check "live changes: clean exit" stop_link
	check "live changes: nothing left" nothing_left "$NA" "$NB"
fi

# iperf3 through at least 10 device resets (--fault).
if check "vnic link --fault reset-every=700ms up" start_link --new-ns-a "$NA" --new-ns-b "$NB" --fault reset-every=700ms; then
	iperf_server "$NB"
	# A reset takes longer on a loaded or sanitized build, so 9 s may see
	# fewer than 10: traffic runs in rounds until 10 resets have happened
	# under it (at most 4 rounds), and every round must carry its bytes.
	rounds=0
	r=0
	while [ "${r:-0}" -lt 10 ] && [ $rounds -lt 4 ]; do
		rounds=$((rounds + 1))
		check "iperf3 through device resets (round $rounds)" \
			ip netns exec "$NA" iperf3 -c 10.99.0.2 -p 5201 -t 9
		r=$(ctr "$NAME" drv_a.resets)
	done
	check "at least 10 resets under traffic ($r in $rounds rounds)" test "${r:-0}" -ge 10
	stop_servers
	check "--fault: clean exit" stop_link
	check "--fault: nothing left" nothing_left "$NA" "$NB"
fi

# ---------------------------------------------------------------- one spinner
# --spinners 1 with a fixed spin: traffic flows, and a thread that went idle
# while the other spun slept at once instead of spinning too.
if check "vnic link up (--spinners 1)" start_link --new-ns-a "$NA" --new-ns-b "$NB" --busy-poll-us 50 --busy-poll fixed --spinners 1; then
	check "ping with one spinner" nsping "$NA" 10.99.0.2 -c 5
	iperf_server "$NB"
	check "iperf3 TCP IPv4 a->b with one spinner" iperf_tcp "$NA" 10.99.0.2
	stop_servers
	ceded=$(($(ctr "$NAME" cpu_a.spin_ceded) + $(ctr "$NAME" cpu_b.spin_ceded)))
	check "--spinners 1: idles ceded to the spinning thread ($ceded)" test "$ceded" -ge 1
	check "--spinners 1: clean exit" stop_link
	check "--spinners 1: nothing left" nothing_left "$NA" "$NB"
fi

# ---------------------------------------------------------------- signals, a closed stdout
# The control socket of an instance, wherever vnic puts it.
ctl_sock() {
	echo "${XDG_RUNTIME_DIR:-/run}/vnic/$NAME.sock"
}

# A reader that goes away (vnic link | head -1) ends the link like SIGTERM.
head_one() {
	local fifo=$WORK/stdout.fifo rc
	rm -f "$fifo"
	mkfifo "$fifo"
	"$VNIC" link --name "$NAME" --new-ns-a "$NA" --new-ns-b "$NB" >"$fifo" 2>>"$LOG" &
	LAST_PID=$!
	head -1 <"$fifo" >"$WORK/head.out"
	# At most a second to notice: the link checks its stdout once a second.
	timeout 10 tail --pid="$LAST_PID" -f /dev/null || { kill -9 "$LAST_PID"; return 1; }
	wait "$LAST_PID"
	rc=$?
	grep -q "vnic link: a: namespace $NA" "$WORK/head.out" || return 1
	[ $rc -eq 0 ] || { echo "exit $rc"; return 1; }
}
check "vnic link | head -1: exits on its own, status 0" head_one
check "vnic link | head -1: nothing left" nothing_left "$NA" "$NB"
check "vnic link | head -1: no control socket left" bash -c "! test -e $(ctl_sock)"

if check "vnic link up (SIGHUP)" start_link --new-ns-a "$NA" --new-ns-b "$NB"; then
	check "SIGHUP: clean exit" stop_link HUP
	check "SIGHUP: nothing left" nothing_left "$NA" "$NB"
fi

# A socket file left by an instance that died (kill -9) is replaced at start.
if check "vnic link up (stale socket)" start_link --new-ns-a "$NA" --new-ns-b "$NB"; then
	stop_link KILL >/dev/null 2>&1
	check "kill -9 leaves a stale control socket" test -S "$(ctl_sock)"
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	if check "a stale control socket is replaced at start" start_link --new-ns-a "$NA" --new-ns-b "$NB"; then
		check "vnic stats answers on the replaced socket" bash -c \
			"'$VNIC' stats '$NAME' --all | grep -q 'drv_a.tx0_'"
		check "after the stale socket: clean exit" stop_link
		check "after the stale socket: nothing left" nothing_left "$NA" "$NB"
	fi
fi

# ---------------------------------------------------------------- backing device
ns_add "$NC"
veth "" "$VB" "$NC" "$VP"
ip -n "$NC" addr add 10.98.0.2/24 dev "$VP"
ip -n "$NC" addr add fd00:98::2/64 dev "$VP" nodad
# Wire frames are MTU frames: no aggregation on the backing end, no TSO towards it.
ethtool -K "$VB" gro off lro off >>"$LOG" 2>&1
ip netns exec "$NC" ethtool -K "$VP" tso off gso off >>"$LOG" 2>&1
if check "vnic link --backing $VB up" start_link --backing "$VB" --new-ns-a "$NA" --addr-a 10.98.0.1/24 --addr6-a fd00:98::1/64; then
	check "backing: ping 10.98.0.2" nsping "$NA" 10.98.0.2
	check "backing: ping fd00:98::2 1400 B" nsping "$NA" fd00:98::2 -s 1400
	iperf_server "$NC"
	check "backing: iperf3 TCP a->c" iperf_tcp "$NA" 10.98.0.2
	check "backing: iperf3 TCP c->a" iperf_tcp "$NA" 10.98.0.2 -R
	stop_servers
	check "backing: clean exit" stop_link
	check "backing: teardown leaves $NC and $VB alone" bash -c \
		"ip netns list | grep -qw $NC && ip link show $VB >/dev/null && ! ip netns list | grep -qw $NA"
fi
ip netns del "$NC"
ip link del "$VB" 2>/dev/null

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
