#!/usr/bin/env bash
# Installs the Debian packages vnic needs that are missing, and says which.
# Usage: scripts/deps.sh [build|test|all]
#   build: compiler, CMake, libraries (what the main job needs)
#   test:  build + cmocka, clang for the fuzz targets
#   all:   test + the real-traffic and plotting tools
set -euo pipefail

level=${1:-build}
# build: compiler, CMake, cmocka (the tests are part of the build), libpcap
# (vnic link --pcap), libxdp and libbpf (the AF_XDP backing, vnic link
# --backing-mode afxdp), sys/sdt.h for the USDT probes, gnuplot for the plots
# of vnic experiment.
pkgs=(gcc make cmake pkg-config libcmocka-dev libpcap-dev libxdp-dev libbpf-dev systemtap-sdt-dev
	gnuplot-nox)
# test: clang and its fuzzer runtime for the fuzz targets; the tools the
# network-namespace tests drive across vnic link; QEMU and a static busybox
# for the VM on a socket wire (the test fetches a kernel with apt-get
# download); groff, which renders the manual page for its test (skipped
# without it).
test_pkgs=(clang libclang-rt-dev iproute2 iputils-ping ethtool iperf3 sockperf python3 tshark groff-base
	qemu-system-x86 busybox-static)
case "$level" in
build) ;;
test) pkgs+=("${test_pkgs[@]}") ;;
all) pkgs+=("${test_pkgs[@]}" vde2 linux-perf bpftrace) ;;
*) echo "usage: $0 [build|test|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: everything needed for '$level' is installed"
	exit 0
fi

echo "deps: installing missing packages: ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deps: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# tshark asks whether non-root users may capture; the default (no) is fine.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	"${sudo[@]}" debconf-set-selections 2>/dev/null || true
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
