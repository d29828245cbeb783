#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A QEMU VM whose NIC is plugged straight into a vNIC device's wire
# (vnic link --wire, docs/LINK.md), over each of QEMU's socket backends:
#
#   netns $NS  10.63.0.1/24               VM (KVM, 256 MiB, busybox initramfs)
#   vnic0 (TAP) -- vnic link --wire SPEC -- virtio-net-pci, 10.63.0.2/24
#                                           -netdev stream (unix socket) or dgram (UDP)
#
# In the VM an init script loads virtio-net, pings the namespace, fetches a
# file from a web server in the namespace and uploads one to it (POST); the test
# compares the sha256 each side computed. The VM's console is the record.
#
# The kernel: $VNIC_VM_KERNEL (a bzImage; with $VNIC_VM_MODULES, the
# /lib/modules/<version> folder it loads virtio-net from, if that is a module),
# else the host's /boot/vmlinuz-$(uname -r) with its /lib/modules, else
# Debian's linux-image-amd64, downloaded with apt-get download into
# $VNIC_VM_CACHE (default /var/cache/vnic-vm) and unpacked there, never
# installed.
#
# Usage: test_qemu.sh PATH/TO/vnic    (root; exit 77 = skipped)

set -u

VNIC=${1:?usage: test_qemu.sh PATH/TO/vnic}
# shellcheck source=tests/netns/lib.sh
. "$(dirname "$0")/lib.sh"

require root tun ip qemu-system-x86_64 busybox python3
QEMU=$(command -v qemu-system-x86_64)
BUSYBOX=$(command -v busybox)
ldd "$BUSYBOX" 2>&1 | grep -q "not a dynamic executable" ||
	skip "$BUSYBOX is not statically linked (apt-get install busybox-static)"
netns_setup qemu
NS=vqm-$$
VNIC_PID=0
track_ns "$NS"

# first PATH...: the first of what a glob gave, if it exists.
first() {
	[ -e "$1" ] && echo "$1"
}

# find_kernel: sets KERNEL and MODDIR (empty when nothing is loadable), or skips.
find_kernel() {
	local cache deb ver
	if [ -n "${VNIC_VM_KERNEL:-}" ]; then
		KERNEL=$VNIC_VM_KERNEL
		MODDIR=${VNIC_VM_MODULES:-}
		return
	fi
	ver=$(uname -r)
	if [ -r "/boot/vmlinuz-$ver" ] && [ -r "/lib/modules/$ver/modules.dep" ]; then
		KERNEL=/boot/vmlinuz-$ver
		MODDIR=/lib/modules/$ver
		return
	fi
	cache=${VNIC_VM_CACHE:-/var/cache/vnic-vm}
	mkdir -p "$cache" || skip "cannot make $cache"
	deb=$(first "$cache"/linux-image-*-amd64_*.deb)
	if [ -z "$deb" ]; then
		# linux-image-amd64 is a metapackage: the kernel is its dependency.
		local pkg
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
		[ -n "$pkg" ] || skip "no kernel: not /boot/vmlinuz-$ver, and apt knows no linux-image-amd64"
		echo "fetching Debian's $pkg into $cache (once)"
		(cd "$cache" && apt-get download "$pkg" >>"$LOG" 2>&1) ||
			skip "no kernel: apt-get download $pkg failed (see $LOG)"
		deb=$(first "$cache"/linux-image-*-amd64_*.deb)
	fi
	if [ ! -d "$cache/root" ]; then
		if ! dpkg-deb -x "$deb" "$cache/root.tmp" || ! mv "$cache/root.tmp" "$cache/root"; then
			skip "cannot unpack $deb"
		fi
	fi
	KERNEL=$(first "$cache"/root/boot/vmlinuz-*)
	MODDIR=$(first "$cache"/root/lib/modules/*)
}

# mod_order NAME...: the module files NAME needs, dependencies first, as
# paths under $MODDIR; nothing for a driver built into the kernel. The
# dependencies come from each module's own .modinfo ("depends="), since a
# kernel package unpacked rather than installed has no modules.dep.
mod_order() {
	[ -n "$MODDIR" ] && [ -d "$MODDIR" ] || return 0
	"$PY" - "$MODDIR" "$@" <<'EOF'
import gzip, lzma, os, re, sys
root = sys.argv[1]
paths = {}
for d, _, files in os.walk(os.path.join(root, "kernel")):
    for f in files:
        m = re.match(r"(.+)\.ko(\.xz|\.gz)?$", f)
        if m:
            paths[m.group(1).replace("-", "_")] = os.path.relpath(os.path.join(d, f), root)
def depends(path):
    opener = {".xz": lzma.open, ".gz": gzip.open}.get(os.path.splitext(path)[1], open)
    with opener(os.path.join(root, path), "rb") as f:
        m = re.search(rb"(?:^|\0)depends=([^\0]*)", f.read())
    return [n.decode().replace("-", "_") for n in m.group(1).split(b",") if n] if m else []
done, out = set(), []
def visit(name):
    if name in done or name not in paths:
        return
    done.add(name)
    for d in depends(paths[name]):
        visit(d)
    out.append(paths[name])
for name in sys.argv[2:]:
    visit(name)
print("\n".join(out))
EOF
}

# make_initramfs: $WORK/initrd.cpio.gz with busybox, the NIC's modules and
# an init that runs the VM's half of the test and powers off.
make_initramfs() {
	local root=$WORK/initrd m
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib/modules}
	cp "$BUSYBOX" "$root/bin/busybox"
	: >"$root/modules.order"
	for m in $(mod_order virtio_pci virtio_net); do
		# a module compressed by the distribution is loaded uncompressed
		case $m in
		*.ko.xz) xz -dc "$MODDIR/$m" >"$root/lib/modules/$(basename "$m" .xz)" ;;
		*.ko.gz) gzip -dc "$MODDIR/$m" >"$root/lib/modules/$(basename "$m" .gz)" ;;
		*) cp "$MODDIR/$m" "$root/lib/modules/" ;;
		esac
		basename "$m" | sed 's/\.xz$//; s/\.gz$//' >>"$root/modules.order"
	done
	cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod /lib/modules/$m || echo "vm: insmod $m failed"; done
ip link set lo up
ip link set eth0 up
ip addr add 10.63.0.2/24 dev eth0
echo "vm: up $(cat /sys/class/net/eth0/address)"
# The first reply can be slow right after link-up under TCG: wait for it
# (60 s at most), then the three pings the test asks for.
n=0
until ping -c 1 -W 2 10.63.0.1 >/dev/null; do
	n=$((n + 1))
	[ $n -lt 30 ] || break
done
echo "vm: first reply after $n pings without one"
ping -c 3 -W 5 10.63.0.1 >/dev/null && echo "vm: ping ok"
if wget -q -O /tmp/down http://10.63.0.1:8080/blob; then
	echo "vm: downloaded $(sha256sum /tmp/down | cut -d' ' -f1) $(wc -c </tmp/down)"
fi
# busybox wget posts its file as a C string: text, not raw bytes
head -c 6291456 /dev/urandom | base64 >/tmp/up
echo "vm: uploading $(sha256sum /tmp/up | cut -d' ' -f1) $(wc -c </tmp/up)"
wget -q -O /tmp/answer --post-file=/tmp/up http://10.63.0.1:8080/up && echo "vm: upload answered $(cat /tmp/answer)"
echo "vm: done"
poweroff -f
EOF
	chmod +x "$root/init"
	(cd "$root" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1) >"$WORK/initrd.cpio.gz"
}

# The namespace's web server: GET /blob is the blob, POST /up answers with the
# sha256 and length of what it received (and writes them to $WORK/up.out).
web_server() {
	server "$NS" "$PY" -c '
import hashlib, http.server, sys
blob, out = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        data = open(blob, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_POST(self):
        n = int(self.headers["Content-Length"])
        h, left = hashlib.sha256(), n
        while left:
            b = self.rfile.read(min(left, 1 << 20))
            if not b:
                break
            h.update(b)
            left -= len(b)
        ans = ("%s %d" % (h.hexdigest(), n - left)).encode()
        open(out, "w").write(ans.decode() + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(len(ans)))
        self.end_headers()
        self.wfile.write(ans)
http.server.HTTPServer(("10.63.0.1", 8080), H).serve_forever()' "$WORK/blob" "$WORK/up.out"
	wait_port "$NS" 8080
}

# start_vnic SPEC: the vNIC with its TAP in namespace $NS; waits until it is up.
start_vnic() {
	link_start "$WORK/vnic.out" - --wire "$1" --new-ns-a "$NS" --addr-a 10.63.0.1/24 \
		--name "vqm-$$" --quiet
	local rc=$?
	VNIC_PID=$LINK_PID
	return $rc
}

stop_vnic() {
	link_stop "$VNIC_PID" INT "$WORK/vnic.out"
	local rc=$?
	VNIC_PID=0
	return $rc
}

# pick_accel: KVM where it runs a guest, else QEMU's TCG emulation. A
# /dev/kvm that opens does not prove it: a VM without nested virtualization
# may have one whose guests never run a single instruction. The probe boots
# the kernel with no root, which panics at once; KVM works if the kernel
# printed its banner.
pick_accel() {
	ACCEL=(-accel tcg)
	# a hang guard for each of the two boots (the test's own is 900 s):
	# a TCG guest on a loaded host can take minutes
	VM_TIMEOUT=420
	if [ -w /dev/kvm ]; then
		timeout 20 "$QEMU" -accel kvm -m 128 -nodefaults -no-user-config -display none \
			-serial "file:$WORK/console-probe" -no-reboot -kernel "$KERNEL" \
			-append "console=ttyS0 panic=-1" >>"$LOG" 2>&1
		if grep -aq "Linux version" "$WORK/console-probe"; then
			ACCEL=(-accel kvm -cpu host)
			VM_TIMEOUT=120
			echo "accelerator: KVM"
			return
		fi
		echo "accelerator: TCG (/dev/kvm is there, but a guest on it does not run)"
		return
	fi
	echo "accelerator: TCG (no /dev/kvm)"
}

# boot_vm NAME NETDEV: boots the VM with -netdev NETDEV, its console into
# $WORK/console-NAME; returns when it powers off. no_timer_check: on a
# loaded host a TCG guest's timer interrupt can be late for the kernel's
# boot-time check of it, which then panics ("IO-APIC + timer doesn't
# work"); the timer works, it was only slow to show it.
boot_vm() {
	timeout "$VM_TIMEOUT" "$QEMU" "${ACCEL[@]}" -m 256 -smp 1 -nodefaults -no-user-config \
		-display none -serial "file:$WORK/console-$1" -no-reboot \
		-kernel "$KERNEL" -initrd "$WORK/initrd.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check" \
		-netdev "$2" -device virtio-net-pci,netdev=n0,mac=52:54:00:63:00:02
}

console_has() { # NAME PATTERN
	grep -a -- "$2" "$WORK/console-$1"
}

same_sum() { # SENT GOT: "sha256 length" each
	echo "sent $1, received $2"
	[ -n "$1" ] && [ "$1" = "$2" ]
}

# The VM's half: ping, the download's sum, the upload's sum as the namespace
# computed it against the one the VM computed.
vm_results() { # NAME
	local c=$WORK/console-$1 sent got
	check "$1: the VM's virtio-net came up" console_has "$1" "vm: up 52:54:00:63:00:02"
	check "$1: the VM pings the namespace" console_has "$1" "vm: ping ok"
	check "$1: the VM downloads 16 MiB, sha256 matches" \
		console_has "$1" "vm: downloaded $BLOB_SUM $BLOB_BYTES"
	sent=$(grep -a "vm: uploading" "$c" | tr -d '\r' | awk '{ print $3, $4 }')
	got=$(cat "$WORK/up.out" 2>/dev/null)
	check "$1: the VM uploads 8 MiB (6 MiB of random bytes in base64), sha256 matches" \
		same_sum "$sent" "$got"
	rm -f "$WORK/up.out"
}

find_kernel
echo "kernel: $KERNEL${MODDIR:+, modules from $MODDIR}"
pick_accel
make_initramfs
make_blob 16

# stream: vnic listens on a unix socket, QEMU connects (-netdev stream).
SOCK=$WORK/wire.sock
check "stream: vnic link --wire stream:unix up" start_vnic "stream:unix:$SOCK,server"
if [ "$VNIC_PID" -gt 0 ]; then
	check "stream: the namespace's web server" web_server
	check "stream: the VM boots and powers off" \
		boot_vm stream "stream,id=n0,server=off,addr.type=unix,addr.path=$SOCK"
	vm_results stream
	stop_servers
	check "stream: vnic link stops cleanly at SIGINT" stop_vnic
	check "stream: no frame dropped for its size or a broken stream" \
		bash -c "! grep -E 'wire\.(rx_drop_too_long|rx_drop_runt|rx_drop_zero_len|rx_drop_bad_len|rx_drop_eof_mid_frame)' '$WORK/vnic.out'"
fi
ip netns del "$NS" 2>/dev/null

# dgram: one frame per UDP datagram both ways (-netdev dgram).
P1=$(free_port udp)
P2=$(free_port udp)
check "dgram: vnic link --wire dgram:udp up" start_vnic "dgram:udp:127.0.0.1:$P1,127.0.0.1:$P2"
if [ "$VNIC_PID" -gt 0 ]; then
	check "dgram: the namespace's web server" web_server
	check "dgram: the VM boots and powers off" \
		boot_vm dgram "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$P2,remote.type=inet,remote.host=127.0.0.1,remote.port=$P1"
	vm_results dgram
	stop_servers
	check "dgram: vnic link stops cleanly at SIGINT" stop_vnic
fi
check "the namespace is removed" ns_gone "$NS"

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
