#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The rx ring of a split run with --cable-tso (docs/LINK.md, "--cable-tso"):
# a superframe takes tens of rx buffers at once, and a driver in another
# process than its device posts them late, so such a run asks for at least
# 2048 per queue, which the device grants up to its most (1024 by default,
# VNIC_DEV_DEFAULT_MAX_ENTRIES); a run that is not split, or carries no
# superframes, keeps the default 512. Each case is a short `vnic bench
# stream` (no root), read back from its JSON report: drv_b.neg_rx_entries,
# what driver B negotiated.
#
# Usage: test_split_rx.sh PATH/TO/vnic
set -u

vnic=${1:?usage: test_split_rx.sh PATH/TO/vnic}
failures=0

# neg_rx ARGS...: drv_b.neg_rx_entries after `vnic bench stream ARGS`.
neg_rx() {
	"$vnic" bench stream --duration 0.2 --quiet --json "$@" |
		grep -o '"drv_b\.neg_rx_entries": *[0-9]*' | grep -o '[0-9]*$'
}

# expect N ARGS...: the run with ARGS negotiated N rx buffers per queue.
expect() {
	local want=$1 got
	shift
	got=$(neg_rx "$@")
	if [ "$got" = "$want" ]; then
		echo "PASS: $* -> $got"
	else
		echo "FAIL: $* -> ${got:-no report}, not $want"
		failures=$((failures + 1))
	fi
}

expect 1024 --split --cable-tso
expect 1024 --split --cable-tso --rx-entries 256
expect 512 --split
expect 512 --cable-tso
exit $((failures > 0))
