#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `vnic link --split` and `--server PATH` refuse what needs the devices or the
# cable in the link's own process (docs/ARCHITECTURE.md section 11): --backing,
# --wire, --pcap and --fault each get one line naming the option and exit
# status 1, before anything is made (no root needed: the check comes first;
# no --pcap file is created). The same options without --split are not
# refused by it.
#
# Usage: test_link_refusals.sh PATH/TO/vnic
set -u

VNIC=${1:?usage: test_link_refusals.sh PATH/TO/vnic}
D=$(mktemp -d)
FAILS=0
trap 'rm -rf "$D"' EXIT

# refused WANT ARGS...: exit 1, one line on stderr containing WANT, nothing on stdout.
refused() {
	local want=$1 rc
	shift
	# a hang guard: a link that wrongly starts must not hold the test
	timeout 20 "$VNIC" link --new-ns-a "vlr-a-$$" --new-ns-b "vlr-b-$$" --duration 1 "$@" \
		>"$D/out" 2>"$D/err"
	rc=$?
	if [ $rc -ne 1 ] || [ "$(wc -l <"$D/err")" -ne 1 ] || ! grep -q -- "$want" "$D/err" ||
		[ -s "$D/out" ]; then
		echo "FAIL: link $*: exit $rc, stderr '$(head -c 300 "$D/err")'"
		FAILS=$((FAILS + 1))
		return
	fi
	echo "ok: link $*: $(cat "$D/err")"
}

refused "--split: --backing" --split --backing eth0
refused "--server: --backing" --server "$D/s.sock" --backing eth0
refused "--split: --wire" --split --wire dgram:udp:127.0.0.1:7001,127.0.0.1:7002
refused "no --pcap" --split --pcap "$D/w.pcap"
refused "--server: the cable is in the server process: no --pcap" --server "$D/s.sock" --pcap "$D/w.pcap"
refused "--split: --fault" --split --fault crq-loss=0.01
refused "--server: --fault" --fault seed=3,crq-dup=0.01 --server "$D/s.sock"
if [ -e "$D/w.pcap" ]; then
	echo "FAIL: a refused --pcap created its file"
	FAILS=$((FAILS + 1))
fi

# Not --split's refusal without --split: the option goes on to its own checks.
timeout 20 "$VNIC" link --new-ns-a "vlr-a-$$" --new-ns-b "vlr-b-$$" --duration 1 \
	--backing vlr-none-$$ >/dev/null 2>"$D/err"
if grep -q -- "--split" "$D/err"; then
	echo "FAIL: --backing without --split: $(cat "$D/err")"
	FAILS=$((FAILS + 1))
else
	echo "ok: --backing without --split: $(cat "$D/err")"
fi

[ "$FAILS" -eq 0 ]
