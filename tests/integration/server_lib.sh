# SPDX-License-Identifier: MIT
#
# What the tests of `vnic server` and its clients share (test_server.sh,
# test_restart.sh, test_switch.sh source it). The sourcing script sets
# VNIC (the binary), NAME (the server's instance name) and FAILS=0.

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

ok() {
	echo "ok: $*"
}

# wait_file PATH: up to 5 s for a socket file to appear.
wait_file() {
	for _ in $(seq 50); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# json_u64 FILE KEY: the first "KEY": N of a JSON report (N, or empty when absent).
json_u64() {
	sed -n "s/^ *\"$2\": \([0-9]*\),\{0,1\}$/\1/p" "$1" | head -1
}

# check_client NAME FILE RC [BYTES]: status 0, payload errors 0, and every byte.
check_client() {
	local name=$1 f=$2 rc=$3 want=${4:-}

	if [ "$rc" != 0 ]; then
		fail "$name: exit status $rc: $(tail -2 "$f.err")"
		return
	fi
	if [ "$(json_u64 "$f" payload)" != 0 ]; then
		fail "$name: payload errors $(json_u64 "$f" payload)"
		return
	fi
	if [ -n "$want" ] && [ "$(json_u64 "$f" bytes)" != "$want" ]; then
		fail "$name: $(json_u64 "$f" bytes) bytes of $want"
		return
	fi
	ok "$name: 0 payload errors${want:+, all $want bytes}"
}

# stat_of NAME: a counter of the server's control socket (0 when absent: vnic stats hides zeros).
stat_of() {
	local v

	v=$("$VNIC" stats "$NAME" 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }')
	echo "${v:-0}"
}
