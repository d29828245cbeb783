#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic server` with many `vnic bench --server` clients at once, each with a
# child process of its own in the server (docs/ARCHITECTURE.md section 11):
#
#   vnic bench rr     --server S ---+                +-- child: devices + cable (client 1)
#   vnic bench stream --server S ---+-- S (0600) --> +-- child: devices + cable (client 2)
#   ...  (6 at once)                |  vnic server   +-- ...
#   vnic bench stream (killed -9) --+  (counts)      +-- child of the killed one: ends too
#
# Checks: the socket file is mode 0600; six clients at once (rr and stream
# --size N) each end with status 0, no payload error and, for streams, every
# byte; a stream client killed with SIGKILL mid-run while four others stream
# leaves them every byte, and the server counts one abnormal end (vnic stats)
# and stays up; a client comes back and attaches again; refusals are one line
# and exit status 1, never a hang: a uid not allowed (--allow-uid; as root
# also a server run by another user, so the peer's uid really differs), over
# --max-clients, no server, a server that does not answer (SIGSTOP); a
# stale socket file is replaced; SIGTERM ends the server with status 0 and
# no socket file left.
#
# Usage: test_server.sh PATH/TO/vnic   (no root needed; some checks need it)
set -u

VNIC=${1:?usage: test_server.sh PATH/TO/vnic}
D=$(mktemp -d)
chmod 711 "$D" # another user may reach a file here, never list them
S=$D/s.sock
NAME=test-server-$$
SP=
FAILS=0

cleanup() {
	[ -n "$SP" ] && kill -TERM "$SP" 2>/dev/null && wait "$SP" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/server_lib.sh"

# refused WHAT EXPECT ARGS...: a client that must fail with one line matching EXPECT, status 1.
refused() {
	local what=$1 expect=$2 rc lines

	shift 2
	timeout 30 "$@" >"$D/ref.out" 2>"$D/ref.err"
	rc=$?
	lines=$(wc -l <"$D/ref.err")
	if [ "$rc" != 1 ]; then
		fail "$what: exit status $rc, want 1: $(cat "$D/ref.err")"
	elif [ "$lines" != 1 ] || ! grep -q -- "$expect" "$D/ref.err"; then
		fail "$what: want one line matching '$expect', got: $(cat "$D/ref.err")"
	else
		ok "$what: $(cat "$D/ref.err")"
	fi
}

"$VNIC" server --listen "$S" --name "$NAME" --max-clients 8 2>"$D/server.log" &
SP=$!
wait_file "$S" || { echo "FAIL: the server made no socket: $(cat "$D/server.log")"; exit 1; }
mode=$(stat -c %a "$S")
[ "$mode" = 600 ] && ok "socket file mode 0600" || fail "socket file mode $mode, want 600"

# --- six clients at once -----------------------------------------------------------------
SIZE=20000000
pids=()
for i in 1 2 3; do
	nice "$VNIC" bench rr --server "$S" --duration 1 --sessions 2 --json --no-ctl \
		>"$D/rr$i" 2>"$D/rr$i.err" &
	pids+=($!)
done
for i in 1 2 3; do
	nice "$VNIC" bench stream --server "$S" --size $SIZE --duration 120 --json --no-ctl \
		>"$D/st$i" 2>"$D/st$i.err" &
	pids+=($!)
done
names=(rr1 rr2 rr3 st1 st2 st3)
for k in "${!pids[@]}"; do
	wait "${pids[$k]}"
	rc=$?
	n=${names[$k]}
	case $n in
	rr*) check_client "6 at once: $n" "$D/$n" $rc ;;
	*) check_client "6 at once: $n" "$D/$n" $rc $SIZE ;;
	esac
done

# --- one killed mid-stream while four stream ----------------------------------------------
"$VNIC" bench stream --server "$S" --duration 120 --json --no-ctl >"$D/victim" 2>"$D/victim.err" &
VP=$!
# Big enough that the four still stream when the fifth is killed.
KSIZE=200000000
pids=()
for i in 1 2 3 4; do
	nice "$VNIC" bench stream --server "$S" --size $KSIZE --duration 120 --json --no-ctl \
		>"$D/kst$i" 2>"$D/kst$i.err" &
	pids+=($!)
done
# The children hold their client's socket, not the server's listening one
# (nor a control connection). /proc/net/unix gives the listening socket's
# inode: an accepted socket shows the path too, the listening one has the
# flag __SO_ACCEPTCON (00010000). A child just forked may not have closed
# it yet (slow under a sanitizer): look again, until all five are served.
lino=$(awk -v p="$S" '$8 == p && $4 == "00010000" { print $7; exit }' /proc/net/unix)
for _ in $(seq 200); do
	kids=$(pgrep -P $SP | wc -l)
	held=0
	for k in $(pgrep -P $SP); do
		ls -l /proc/$k/fd 2>/dev/null | grep -q "socket:\[$lino\]" && held=$((held + 1))
	done
	[ "$kids" -ge 5 ] && [ $held = 0 ] && break
	sleep 0.1
done
[ -n "$lino" ] && [ "$kids" -ge 5 ] && [ $held = 0 ] &&
	ok "$kids children, none holds the listening socket" ||
	fail "listening socket inode '$lino', $kids children, $held hold it"
kill -KILL $VP
wait $VP 2>/dev/null
for i in 1 2 3 4; do
	wait "${pids[$((i - 1))]}"
	check_client "beside a killed client: stream $i" "$D/kst$i" $? $KSIZE
done
abn=0
for _ in $(seq 50); do
	abn=$(stat_of server.ended_abnormal)
	[ "$abn" = 1 ] && break
	sleep 0.1
done
[ "$abn" = 1 ] && ok "the server counted 1 abnormal end" ||
	fail "server.ended_abnormal is $abn, want 1: $(tail -5 "$D/server.log")"
kill -0 $SP 2>/dev/null && ok "the server is still up" || fail "the server is gone"
acc=$(stat_of server.accepted)
ended=$(stat_of server.ended)
[ "$acc" = 11 ] && [ "$ended" = 10 ] && ok "11 accepted, 10 ended normally" ||
	fail "accepted $acc (want 11), ended $ended (want 10)"

# --- a client comes back -----------------------------------------------------------------
"$VNIC" bench rr --server "$S" --duration 0.3 --json --no-ctl >"$D/again" 2>"$D/again.err"
check_client "a client attaches again" "$D/again" $?

# --- refusals: one line, status 1, never a hang ----------------------------------------------
refused "no server" "connect" "$VNIC" bench rr --server "$D/none.sock" --duration 0.3 --no-ctl

OTHER=4242
[ "$(id -u)" = $OTHER ] && OTHER=4243
"$VNIC" server --listen "$D/r.sock" --allow-uid $OTHER --no-ctl 2>"$D/r.log" &
RP=$!
wait_file "$D/r.sock"
refused "uid not allowed" "not one the server allows" \
	"$VNIC" bench rr --server "$D/r.sock" --duration 0.3 --no-ctl
kill -STOP $RP
start=$(date +%s)
refused "a server that does not answer" "timed out" \
	"$VNIC" bench rr --server "$D/r.sock" --duration 0.3 --no-ctl
[ $(($(date +%s) - start)) -lt 20 ] || fail "the unanswered client took $(($(date +%s) - start)) s"
kill -CONT $RP
sleep 0.5 # it takes the connection the client left, and refuses it by its uid
kill -TERM $RP
wait $RP
grep -q "0 accepted, 2 refused (uid)" "$D/r.log" && ok "the refusing server counted 2 refusals" ||
	fail "the refusing server's counts: $(tail -1 "$D/r.log")"

"$VNIC" server --listen "$D/m.sock" --max-clients 1 --no-ctl 2>"$D/m.log" &
MP=$!
wait_file "$D/m.sock"
"$VNIC" bench rr --server "$D/m.sock" --duration 3 --json --no-ctl >"$D/hold" 2>"$D/hold.err" &
HP=$!
sleep 1
refused "over --max-clients" "max-clients" \
	"$VNIC" bench rr --server "$D/m.sock" --duration 0.3 --no-ctl
wait $HP
check_client "the client held while another was refused" "$D/hold" $?
kill -TERM $MP
wait $MP

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# A server run by nobody: root's client really is another uid, and the
	# file mode does not stop root, so the refusal is SO_PEERCRED's.
	mkdir "$D/n" && chown 65534 "$D/n"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$VNIC" server --listen "$D/n/s.sock" --no-ctl 2>"$D/n.log" &
	NP=$!
	if wait_file "$D/n/s.sock"; then
		refused "root against a server of uid 65534" "not one the server allows" \
			"$VNIC" bench rr --server "$D/n/s.sock" --duration 0.3 --no-ctl
		# and the file mode alone keeps another user out
		refused "uid 65534 against a root server's 0600 socket" "Permission denied" \
			setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$VNIC" bench rr --server "$S" --duration 0.3 --no-ctl
	else
		echo "skip: uid 65534 cannot run $VNIC here: $(cat "$D/n.log")"
	fi
	kill -TERM $NP 2>/dev/null
	wait $NP
else
	echo "skip: a client of another uid (needs root)"
fi

# --- stale socket file -------------------------------------------------------------------
"$VNIC" server --listen "$D/st.sock" --no-ctl --quiet 2>/dev/null &
TP=$!
wait_file "$D/st.sock"
kill -KILL $TP
wait $TP 2>/dev/null
"$VNIC" server --listen "$D/st.sock" --no-ctl --quiet 2>"$D/st.log" &
TP=$!
sleep 0.5
if kill -0 $TP 2>/dev/null && [ -S "$D/st.sock" ]; then
	ok "a stale socket file is replaced"
else
	fail "a stale socket file was not replaced: $(cat "$D/st.log")"
fi
"$VNIC" server --listen "$D/st.sock" --no-ctl 2>"$D/st2.log"
rc=$?
[ $rc = 1 ] && grep -q "already answers" "$D/st2.log" && ok "a live server's socket is not taken" ||
	fail "a second server on a live socket: status $rc: $(cat "$D/st2.log")"
kill -TERM $TP
wait $TP

# --- SIGTERM ---------------------------------------------------------------------------------
kill -TERM $SP
wait $SP
rc=$?
SP=
[ $rc = 0 ] && ok "the server exits 0 on SIGTERM" || fail "the server exited $rc on SIGTERM"
[ ! -e "$S" ] && ok "no socket file left" || fail "the socket file is left"
grep -q "12 accepted, 0 refused (uid), 0 refused (max clients), 11 ended, 1 ended abnormally" \
	"$D/server.log" && ok "the counts at exit" || fail "the counts at exit: $(tail -1 "$D/server.log")"

[ $FAILS = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo "all checks passed"
