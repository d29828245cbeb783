// SPDX-License-Identifier: MIT
/*
 * The AF_PACKET backing wire over a veth pair in a private network
 * namespace (needs root and iproute2; skips with 77 otherwise):
 *
 *   test's raw socket on vb  <== veth ==>  va: the wire under test
 *
 *   - only an Ethernet device that is not loopback: lo and a TUN refused;
 *   - rx: frames sent on vb arrive in order through the TPACKET_V3 ring; the
 *     notification fires only while armed; a frame larger than the wire's
 *     frame size is dropped and counted, never truncated; a partial
 *     release leaves the rest for the next peek;
 *   - a spinning cpu's look at the ring (V2 and V3) sees a frame only while
 *     armed; the edge of a frame it found, once the frame is taken, is not
 *     reported: no notification on an empty ring;
 *   - tx: committed frames arrive on vb in order; an over-MTU frame is
 *     dropped and counted; our own transmissions are not received back;
 *   - with vnet headers: a superpacket leaves whole; a superframe arrives
 *     as MTU frames with complete checksums; one the wire cannot cut into
 *     MTU frames (too many segments, segments over the MTU) is dropped
 *     whole and counted, and the frame behind it still arrives; once the
 *     device takes superframes (rx_gso_take), one that fits arrives whole
 *     with the pseudo-header sum in its checksum field, one that does not
 *     is cut as before;
 *   - a superframe whose slot holds only its headers and chains its payload
 *     by reference (tx_frags: the device leaves it in its driver's buffer)
 *     leaves whole with its payload intact, and the payload's memory is
 *     never written; a chain other than the one the device builds (two
 *     pieces, lengths that disagree, headers past the slot's part, no
 *     superframe) is dropped and counted, never sent;
 *   - a whole vNIC on it (threaded): two devices and drivers, one on each
 *     end of the veth pair, carry a verified TCP-like stream (superpackets
 *     segmented by the device onto the wire; with vnet headers, handed to
 *     the kernel whole, their payloads straight from the driver's buffer,
 *     and received whole as large receives).
 *
 * Waits are hang guards, never timing assertions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "device/device.h"
#include "driver/driver.h"
#include "hv/hv.h"
#include "pktgen.h"
#include "port/port.h"
#include "spin_peek.h"
#include "support.h"
#include "work/work.h"

enum { GUARD_NS = 30000000000ull, MTU = 1500 };

static struct vnic_pkt_pool pool;

/* The wire a test runs with: its prestate, or the defaults (V2, no vnet header). */
struct variant {
	enum vnic_afpacket_ring ring;
	bool vnet;
};

static const struct variant ring_v2 = {VNIC_AFPACKET_RING_V2, false};
static const struct variant ring_v3 = {VNIC_AFPACKET_RING_V3, false};
static const struct variant ring_v2_vnet = {VNIC_AFPACKET_RING_V2, true};

static enum vnic_afpacket_ring ring_of(void **state)
{
	return state && *state ? ((const struct variant *)*state)->ring : VNIC_AFPACKET_RING_V2;
}

static bool vnet_of(void **state)
{
	return state && *state && ((const struct variant *)*state)->vnet;
}

static struct vnic_afpacket_config *cfg_of(struct vnic_afpacket_config *c, uint32_t mtu,
					   enum vnic_afpacket_ring ring)
{
	memset(c, 0, sizeof(*c));
	c->mtu = mtu;
	c->ring = ring;
	return c;
}

/* A raw socket on ifname, as the far end of the wire. */
static int raw_on(const char *ifname)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)if_nametoindex(ifname),
	};
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return s;
}

/* A UDP frame whose payload is the pattern of seed id; len = frame bytes. */
static struct vnic_pkt *frame(uint32_t id, uint32_t payload)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = vnic_pkt_alloc(&pool);

	assert_non_null(p);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	f.seed = id;
	f.sport = (uint16_t)(1000 + id);
	assert_int_equal(vnic_pktgen_build(p, &f, 0, payload), 0);
	return p;
}

static void send_raw(int s, uint32_t id, uint32_t payload)
{
	struct vnic_pkt *p = frame(id, payload);

	assert_int_equal(send(s, p->data, p->len, 0), (ssize_t)p->len);
	vnic_pkt_free(p);
}

/* The id of a frame built by frame() (from its source port), or -1 for any other. */
static int frame_id(const uint8_t *d, uint32_t len)
{
	int port;

	if (len < 14 + 20 + 8 || d[12] != 0x08 || d[13] != 0x00 || d[23] != VNIC_IPPROTO_UDP)
		return -1;
	port = d[34] << 8 | d[35];
	return port >= 1000 && port < 1100 ? port - 1000 : -1;
}

static int sh(const char *cmd)
{
	int rc = system(cmd);

	return rc == 0 ? 0 : -1;
}

struct note {
	unsigned int n;
};

static void on_notify(void *ctx)
{
	((struct note *)ctx)->n++;
}

static bool notified(void *ctx)
{
	return ((struct note *)ctx)->n > 0;
}

/* Peeks until want frames came (hang guard), checking ids from first on. */
static void take_frames(struct vnic_wire *w, uint32_t first, unsigned int want)
{
	uint64_t end = vnic_now_ns() + GUARD_NS;
	unsigned int got = 0;

	while (got < want) {
		struct vnic_pkt *f[32];
		unsigned int n = w->ops->rx_peek(w, f, 32), i;

		for (i = 0; i < n && got < want; i++) {
			int id = frame_id(f[i]->data, f[i]->len);

			if (id < 0)
				continue; /* the kernel's own chatter, if any */
			assert_int_equal(id, first + got);
			assert_true(vnic_pktgen_verify(f[i]->data + 42, f[i]->len - 42,
						       (uint32_t)id, 0));
			got++;
		}
		w->ops->rx_release(w, i);
		if (!n) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
	}
}

static uint64_t stat_of(struct vnic_wire *w, const char *name)
{
	struct vnic_counter c[32];
	unsigned int n = vnic_afpacket_counters(w, c, 32);
	const struct vnic_counter *e = vnic_counter_find(c, n < 32 ? n : 32, name);

	if (!e)
		fail_msg("no counter %s", name);
	return e ? e->value : 0;
}

static void peek_send(int s, uint32_t id)
{
	send_raw(s, id, 100);
}

static void peek_take(struct vnic_wire *w, uint32_t id)
{
	take_frames(w, id, 1);
}

static uint64_t peek_notifies(struct vnic_wire *w)
{
	return stat_of(w, "rx_notifies");
}

/* A spinning cpu's look at the ring, V2 and V3 (tests/port/spin_peek.h). */
static void test_spin_peek(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_test_peek t = {
		.guard_ns = GUARD_NS,
		.send = peek_send,
		.take = peek_take,
		.notifies = peek_notifies,
	};
	struct vnic_cpu cpu;

	t.s = raw_on("vb");
	print_message("ring %s\n", vnic_afpacket_ring_name(ring_of(state)));
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	assert_int_equal(vnic_afpacket_create(&t.w, "va", cfg_of(&c, MTU, ring_of(state)), &cpu),
			 0);
	t.cpu = &cpu;
	vnic_test_spin_peek(&t);
	close(t.s);
	vnic_afpacket_destroy(t.w);
	vnic_cpu_fini(&cpu);
}

static void test_errors(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w;

	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	assert_int_equal(vnic_afpacket_create(&w, "no-such-if", cfg_of(&c, MTU, ring_of(state)), &cpu), -ENODEV);
	assert_int_equal(vnic_afpacket_create(&w, "va", cfg_of(&c, 10, ring_of(state)), &cpu), -EINVAL);
	assert_int_equal(vnic_afpacket_create(&w, "va", cfg_of(&c, MTU, ring_of(state)), NULL), -EINVAL);
	assert_int_equal(vnic_afpacket_create(&w, "va", cfg_of(&c, MTU, 7), &cpu), -EINVAL);
	assert_int_equal(vnic_afpacket_create(&w, "va", NULL, &cpu), -EINVAL);
	assert_null(cpu.fds);
	vnic_cpu_fini(&cpu);
}

/*
 * Only an Ethernet device that is not loopback backs a wire: lo would hand
 * the host's own traffic to the wire's receiver, and a TUN has no Ethernet
 * frames at all. Refused before the socket is bound, so nothing registers
 * on the cpu either.
 */
static void test_refuses_lo_and_l3(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w = NULL;

	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	assert_int_equal(vnic_afpacket_create(&w, "lo", cfg_of(&c, MTU, ring_of(state)), &cpu), -EINVAL);
	assert_null(w);
	if (sh("ip tuntap add vt0 mode tun 2>/dev/null && ip link set vt0 up") == 0) {
		assert_int_equal(vnic_afpacket_create(&w, "vt0", cfg_of(&c, MTU, ring_of(state)), &cpu), -EPROTONOSUPPORT);
		assert_null(w);
		assert_int_equal(sh("ip link del vt0"), 0);
	} else {
		print_message("no TUN device here (/dev/net/tun): the L3 case is not run\n");
	}
	assert_null(cpu.fds);
	/* an Ethernet device is still taken */
	assert_int_equal(vnic_afpacket_create(&w, "va", cfg_of(&c, MTU, ring_of(state)), &cpu), 0);
	assert_non_null(cpu.fds);
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
}

static void test_rx_tx(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu, *cpus[1] = {&cpu};
	struct note note = {0};
	struct vnic_pkt *f[8], *slots[4];
	struct vnic_wire *w;
	uint8_t buf[4096];
	int s = raw_on("vb");
	unsigned int i, n;

	print_message("ring %s\n", vnic_afpacket_ring_name(ring_of(state)));
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	assert_int_equal(vnic_afpacket_create(&w, "va", cfg_of(&c, MTU, ring_of(state)), &cpu), 0);
	assert_int_equal(w->mtu, MTU);
	assert_int_equal(w->frame_size, MTU + 18);
	w->notify = on_notify;
	w->notify_ctx = &note;

	/* nothing arrived: nothing pending, no notification */
	assert_false(w->ops->rx_irq->pending(w));
	assert_int_equal(w->ops->rx_peek(w, f, 8), 0);
	w->ops->rx_irq->enable(w);
	assert_int_equal(vnic_cpu_run_once(&cpu), 0);

	/* ten frames and, in the middle, one too big for the wire */
	for (i = 0; i < 5; i++)
		send_raw(s, i, 100 + i);
	send_raw(s, 99, 3000);
	for (i = 5; i < 10; i++)
		send_raw(s, i, 1400);
	assert_int_equal(vnic_cpus_run_until(cpus, 1, notified, &note, GUARD_NS), 0);
	assert_int_equal(note.n, 1);
	/* the notification disarmed the irq: no second one */
	assert_int_equal(vnic_cpu_run_once(&cpu), 0);
	assert_int_equal(note.n, 1);
	assert_true(w->ops->rx_irq->pending(w));
	take_frames(w, 0, 10);
	assert_int_equal(stat_of(w, "rx_frames"), 10);
	assert_int_equal(stat_of(w, "rx_drop_too_big"), 1);
	assert_false(w->ops->rx_irq->pending(w));
	assert_int_equal(w->ops->rx_next_ns(w), 0);

	/*
	 * A partial release: the rest comes again on the next peek. Frames
	 * land as the kernel's softirq runs, which on a loaded machine may be
	 * a while after send() returned, so the peek is repeated (it takes
	 * nothing) until all three are there or half a second has passed. On
	 * V3 a peek also stops at the end of a block, and the kernel retires a
	 * block 1 ms after its first frame: a sender preempted between two
	 * frames splits them. So three go out at a time until two or more are
	 * seen together.
	 */
	{
		uint64_t end = vnic_now_ns() + GUARD_NS, settle;
		uint32_t id = 10;
		unsigned int m;

		for (;;) {
			for (i = 0; i < 3; i++)
				send_raw(s, id + i, 64);
			while ((n = w->ops->rx_peek(w, f, 8)) == 0) {
				assert_true(vnic_now_ns() < end);
				vnic_test_nap_us(1000);
			}
			settle = vnic_now_ns() + 500000000ull;
			while (n < 3 && vnic_now_ns() < settle) {
				vnic_test_nap_us(1000);
				n = w->ops->rx_peek(w, f, 8);
			}
			assert_int_equal(frame_id(f[0]->data, f[0]->len), id);
			if (n >= 2)
				break;
			take_frames(w, id, 3); /* split: take them all, and again */
			id += 3;
			assert_true(id + 2 < 20); /* ids from 20 on are the tx part's */
		}
		w->ops->rx_release(w, 1);
		/* the rest, and on V2 perhaps the third if it landed since */
		m = w->ops->rx_peek(w, f, 8);
		assert_true(m >= n - 1 && m <= 2);
		assert_int_equal(frame_id(f[0]->data, f[0]->len), id + 1);
		w->ops->rx_release(w, m);
		if (m == 1)
			take_frames(w, id + 2, 1);
	}

	/* a tagged frame: the kernel takes the tag out, the wire puts it back */
	{
		struct vnic_pktgen_flow fl;
		struct vnic_pkt *t = vnic_pkt_alloc(&pool);
		uint64_t end = vnic_now_ns() + GUARD_NS;

		vnic_pktgen_flow_init(&fl, false, VNIC_IPPROTO_UDP);
		fl.vlan = true;
		fl.vlan_tci = 0x2123;
		assert_int_equal(vnic_pktgen_build(t, &fl, 0, MTU - 28), 0);
		assert_int_equal(t->len, MTU + 18); /* the largest frame a wire slot holds */
		assert_int_equal(send(s, t->data, t->len, 0), (ssize_t)t->len);
		while ((n = w->ops->rx_peek(w, f, 8)) == 0) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
		assert_int_equal(f[0]->len, t->len);
		assert_memory_equal(f[0]->data, t->data, t->len);
		w->ops->rx_release(w, 1);
		vnic_pkt_free(t);
	}

	/*
	 * A datagram from the kernel's own stack on vb: veth passes it with its
	 * checksum still partial (TP_STATUS_CSUMNOTREADY); the wire completes it.
	 */
	{
		struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
		uint64_t end = vnic_now_ns() + GUARD_NS;
		struct vnic_hdrs h;
		int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		assert_int_equal(sh("ip addr replace 10.6.0.2/24 dev vb && "
				    "ip neigh replace 10.6.0.1 lladdr 02:00:00:00:00:61 dev vb"),
				 0);
		inet_pton(AF_INET, "10.6.0.1", &to.sin_addr);
		assert_int_equal(sendto(u, "partial?", 8, 0, (struct sockaddr *)&to, sizeof(to)),
				 8);
		close(u);
		while ((n = w->ops->rx_peek(w, f, 8)) == 0) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
		assert_int_equal(vnic_parse_frame(f[0]->data, f[0]->len, &h), VNIC_PARSE_OK);
		assert_int_equal(h.l4_proto, VNIC_IPPROTO_UDP);
		assert_true(vnic_csum_l4_ok(f[0]->data, &h));
		w->ops->rx_release(w, 1);
		/* veth has tx checksum offload on by default: it was partial */
		assert_int_equal(stat_of(w, "rx_csum_fixed"), 1);
	}

	/* tx: three slots, the second over the MTU */
	assert_int_equal(w->ops->tx_reserve(w, slots, 3), 3);
	for (i = 0; i < 3; i++) {
		struct vnic_pkt *p = frame(20 + i, i == 1 ? 1600 : 500);

		assert_int_equal(vnic_pkt_copy_in(slots[i], p->data, p->len),
				 i == 1 ? -EMSGSIZE : 0);
		if (i == 1) {
			/* inside the slot, one byte over the MTU: the wire must refuse it */
			memcpy(slots[i]->data, p->data, MTU + 15);
			slots[i]->len = MTU + 15;
		}
		vnic_pkt_free(p);
	}
	w->ops->tx_commit(w, slots, 3, 3);
	assert_int_equal(stat_of(w, "tx_frames"), 2);
	assert_int_equal(stat_of(w, "tx_drop_mtu"), 1);
	for (i = 0; i < 2; i++) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		ssize_t got;

		do {
			assert_int_equal(poll(&p, 1, 10000), 1);
			got = recv(s, buf, sizeof(buf), 0);
			assert_true(got > 0);
			/* the socket also sees what it sent itself: skip those */
		} while (frame_id(buf, (uint32_t)got) < 20);
		assert_int_equal(frame_id(buf, (uint32_t)got), i ? 22 : 20);
		assert_int_equal(got, 14 + 20 + 8 + 500);
	}
	/* our own frames never come back to our ring: the next is the marker */
	send_raw(s, 30, 10);
	take_frames(w, 30, 1);

	close(s);
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
}

/* A raw socket on ifname that reads and writes a virtio_net_hdr before each frame. */
static int raw_vnet_on(const char *ifname)
{
	int s = raw_on(ifname), one = 1;

	assert_int_equal(setsockopt(s, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)), 0);
	return s;
}

struct vnet10 {
	uint8_t flags, gso_type;
	uint16_t hdr_len, gso_size, csum_start, csum_offset;
} __attribute__((packed));

/*
 * The next frame the socket sees arrive (its own sends, PACKET_OUTGOING,
 * skipped), every frame read longer than min: its length.
 */
static ssize_t recv_incoming(int s, uint8_t *buf, size_t cap, size_t min)
{
	for (;;) {
		struct sockaddr_ll from;
		socklen_t from_len = sizeof(from);
		struct pollfd p = {.fd = s, .events = POLLIN};
		ssize_t n;

		assert_int_equal(poll(&p, 1, 10000), 1);
		n = recvfrom(s, buf, cap, 0, (struct sockaddr *)&from, &from_len);
		assert_true(n > (ssize_t)min);
		if (from.sll_pkttype != PACKET_OUTGOING)
			return n;
	}
}

/*
 * --backing-offload: a superpacket the device hands over leaves whole, with
 * its vnet header (the kernel segments it later); a superframe that arrives
 * (a TSO sender on the segment) comes out as MTU frames with complete
 * checksums, in order, between the plain frames around it.
 */
static void test_vnet_superframes(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_pktgen_flow fl;
	struct vnic_pkt *slots[2], *f[64], *sp;
	struct vnic_wire *w;
	struct vnet10 vh;
	uint8_t *buf = malloc(VNIC_PKT_MAX_LEN + 64);
	int s;
	uint64_t end;
	unsigned int got = 0, segs = 0;
	bool first_seen = false, last_seen = false;

	assert_non_null(buf);
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	cfg_of(&c, MTU, ring_of(state));
	c.vnet_hdr = true;
	assert_int_equal(vnic_afpacket_create(&w, "va", &c, &cpu), 0);
	assert_int_equal(w->gso_max_size, VNIC_PKT_MAX_LEN);
	s = raw_vnet_on("vb");

	/* tx: one slot, a 20000-byte TCP superpacket of MSS 1400 */
	assert_int_equal(w->ops->tx_reserve(w, slots, 1), 1);
	vnic_pktgen_flow_init(&fl, false, VNIC_IPPROTO_TCP);
	fl.sport = 1077; /* not a frame() id: the rx part ignores it */
	assert_int_equal(vnic_pktgen_build_gso(slots[0], &fl, 0, 20000, 1400), 0);
	slots[0]->ip_summed = VNIC_CSUM_NONE; /* as the device leaves it: the wire makes it partial */
	w->ops->tx_commit(w, slots, 1, 1);
	assert_int_equal(stat_of(w, "tx_gso_frames"), 1);
	{
		ssize_t n = recv_incoming(s, buf, VNIC_PKT_MAX_LEN + 64, sizeof(vh));

		memcpy(&vh, buf, sizeof(vh));
		assert_int_equal(n - (ssize_t)sizeof(vh), 14 + 20 + 20 + 20000);
		assert_int_equal(vh.gso_type, VNIC_VNET_GSO_TCPV4);
		assert_int_equal(vh.gso_size, 1400);
		assert_true(vh.flags & VNIC_VNET_F_NEEDS_CSUM);
		assert_int_equal(vh.csum_start, 34);
		assert_int_equal(vh.csum_offset, 16);
		assert_true(vnic_pktgen_verify(buf + sizeof(vh) + 54, 20000, fl.seed, 0));
	}

	/* rx: a plain frame, a superframe of 20 segments, a plain frame */
	memset(&vh, 0, sizeof(vh));
	sp = frame(40, 100);
	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), sp->data, sp->len);
	assert_int_equal(send(s, buf, sizeof(vh) + sp->len, 0), (ssize_t)(sizeof(vh) + sp->len));
	vnic_pkt_free(sp);
	sp = vnic_pkt_alloc(&pool);
	assert_non_null(sp);
	fl.sport = 1041; /* frame id 41 */
	assert_int_equal(vnic_pktgen_build_gso(sp, &fl, 0, 20000, 1000), 0);
	vh = (struct vnet10){.flags = VNIC_VNET_F_NEEDS_CSUM, .gso_type = VNIC_VNET_GSO_TCPV4,
			     .hdr_len = 54, .gso_size = 1000, .csum_start = 34, .csum_offset = 16};
	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), sp->data, sp->len);
	assert_int_equal(send(s, buf, sizeof(vh) + sp->len, 0), (ssize_t)(sizeof(vh) + sp->len));
	vnic_pkt_free(sp);
	memset(&vh, 0, sizeof(vh));
	sp = frame(42, 100);
	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), sp->data, sp->len);
	assert_int_equal(send(s, buf, sizeof(vh) + sp->len, 0), (ssize_t)(sizeof(vh) + sp->len));
	vnic_pkt_free(sp);

	end = vnic_now_ns() + GUARD_NS;
	while (!last_seen) {
		unsigned int n = w->ops->rx_peek(w, f, 8), i;

		for (i = 0; i < n; i++) {
			struct vnic_hdrs h;
			int id;

			assert_true(f[i]->len <= MTU + 14);
			assert_int_equal(vnic_parse_frame(f[i]->data, f[i]->len, &h), VNIC_PARSE_OK);
			if (h.l4_proto == VNIC_IPPROTO_UDP) {
				id = frame_id(f[i]->data, f[i]->len);
				if (id == 40) {
					assert_false(first_seen);
					first_seen = true;
				} else if (id == 42) {
					assert_int_equal(segs, 20);
					last_seen = true;
				}
				continue;
			}
			/* a segment: complete checksum, its 1000 bytes of the pattern, in order */
			assert_true(first_seen);
			assert_true(vnic_csum_l4_ok(f[i]->data, &h));
			assert_int_equal(f[i]->len, 54 + 1000);
			assert_true(vnic_pktgen_verify(f[i]->data + 54, 1000, fl.seed, segs * 1000));
			segs++;
		}
		got += n;
		w->ops->rx_release(w, n);
		if (!n) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
	}
	assert_int_equal(stat_of(w, "rx_gso_frames"), 1);
	assert_int_equal(stat_of(w, "rx_gso_segments"), 20);
	assert_int_equal(stat_of(w, "rx_drop_gso"), 0);
	close(s);
	free(buf);
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
}

/* frame() with a zeroed vnet header before it, on a raw vnet socket */
static void send_raw_vnet(int s, uint8_t *buf, uint32_t id, uint32_t payload)
{
	struct vnet10 vh = {0};
	struct vnic_pkt *p = frame(id, payload);

	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), p->data, p->len);
	assert_int_equal(send(s, buf, sizeof(vh) + p->len, 0), (ssize_t)(sizeof(vh) + p->len));
	vnic_pkt_free(p);
}

/*
 * Superframes the kernel takes from a sender on the segment and hands up
 * with a consistent vnet header, but that the wire cannot turn into frames
 * the device takes: each is dropped whole and counted (rx_drop_gso), none
 * of its bytes reaches the device, and the plain frame behind it does.
 */
static const struct hostile_super {
	const char *name;
	uint32_t payload, mss;
} hostile_supers[] = {
	/* 1: 300 segments, more than the wire holds for one superframe (256) */
	{"too many segments", 30000, 100},
	/* 2: each segment 54 + 3000 bytes, longer than the wire's MTU frame */
	{"segments longer than the MTU", 20000, 3000},
	/* 3: 256 + 1 segments, one past the wire's limit */
	{"one segment too many", 257 * 200, 200},
};

static void test_vnet_refused(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_pktgen_flow fl;
	struct vnic_wire *w;
	uint8_t *buf = malloc(VNIC_PKT_MAX_LEN + 64);
	uint64_t drops = 0;
	int s;

	assert_non_null(buf);
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	cfg_of(&c, MTU, ring_of(state));
	c.vnet_hdr = true;
	assert_int_equal(vnic_afpacket_create(&w, "va", &c, &cpu), 0);
	s = raw_vnet_on("vb");
	vnic_pktgen_flow_init(&fl, false, VNIC_IPPROTO_TCP);
	fl.sport = 1088; /* not a frame() id: take_frames would pass over a segment, the counters not */

	for (unsigned int i = 0; i < sizeof(hostile_supers) / sizeof(hostile_supers[0]); i++) {
		const struct hostile_super *t = &hostile_supers[i];
		struct vnic_pkt *sp = vnic_pkt_alloc(&pool);
		struct vnet10 vh = {.flags = VNIC_VNET_F_NEEDS_CSUM,
				    .gso_type = VNIC_VNET_GSO_TCPV4,
				    .hdr_len = 54,
				    .gso_size = (uint16_t)t->mss,
				    .csum_start = 34,
				    .csum_offset = 16};

		print_message("case %u: %s\n", i + 1, t->name);
		assert_non_null(sp);
		assert_int_equal(vnic_pktgen_build_gso(sp, &fl, 0, t->payload, t->mss), 0);
		memcpy(buf, &vh, sizeof(vh));
		memcpy(buf + sizeof(vh), sp->data, sp->len);
		assert_int_equal(send(s, buf, sizeof(vh) + sp->len, 0),
				 (ssize_t)(sizeof(vh) + sp->len));
		vnic_pkt_free(sp);
		/* the marker behind it is the next frame the device sees */
		send_raw_vnet(s, buf, 50 + i, 100);
		take_frames(w, 50 + i, 1);
		assert_int_equal(stat_of(w, "rx_drop_gso"), ++drops);
		assert_int_equal(stat_of(w, "rx_gso_frames"), 0);
		assert_int_equal(stat_of(w, "rx_gso_segments"), 0);
	}
	/* the boundary: 256 segments are cut and handed over, every one */
	{
		struct vnic_pkt *sp = vnic_pkt_alloc(&pool), *f[64];
		struct vnet10 vh = {.flags = VNIC_VNET_F_NEEDS_CSUM, .gso_type = VNIC_VNET_GSO_TCPV4,
				    .hdr_len = 54, .gso_size = 200, .csum_start = 34,
				    .csum_offset = 16};
		uint64_t end = vnic_now_ns() + GUARD_NS;
		unsigned int segs = 0;

		assert_non_null(sp);
		assert_int_equal(vnic_pktgen_build_gso(sp, &fl, 0, 256 * 200, 200), 0);
		memcpy(buf, &vh, sizeof(vh));
		memcpy(buf + sizeof(vh), sp->data, sp->len);
		assert_int_equal(send(s, buf, sizeof(vh) + sp->len, 0),
				 (ssize_t)(sizeof(vh) + sp->len));
		vnic_pkt_free(sp);
		while (segs < 256) {
			unsigned int n = w->ops->rx_peek(w, f, 64);

			for (unsigned int i = 0; i < n; i++) {
				struct vnic_hdrs h;

				assert_int_equal(vnic_parse_frame(f[i]->data, f[i]->len, &h),
						 VNIC_PARSE_OK);
				if (h.l4_proto != VNIC_IPPROTO_TCP)
					continue; /* the kernel's own chatter, if any */
				assert_int_equal(f[i]->len, 54 + 200);
				assert_true(vnic_csum_l4_ok(f[i]->data, &h));
				assert_true(vnic_pktgen_verify(f[i]->data + 54, 200, fl.seed,
							       segs * 200));
				segs++;
			}
			w->ops->rx_release(w, n);
			if (!n) {
				assert_true(vnic_now_ns() < end);
				vnic_test_nap_us(1000);
			}
		}
		assert_int_equal(stat_of(w, "rx_gso_frames"), 1);
		assert_int_equal(stat_of(w, "rx_gso_segments"), 256);
		assert_int_equal(stat_of(w, "rx_drop_gso"), drops);
	}
	close(s);
	free(buf);
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
}

/* A TCP superframe of payload bytes in segments of mss, NEEDS_CSUM, a wrong sum in its field. */
static void send_super(int s, uint8_t *buf, struct vnic_pktgen_flow *fl, uint32_t payload,
		       uint32_t mss)
{
	struct vnic_pkt *sp = vnic_pkt_alloc(&pool);
	struct vnet10 vh = {.flags = VNIC_VNET_F_NEEDS_CSUM, .gso_type = VNIC_VNET_GSO_TCPV4,
			    .hdr_len = 54, .gso_size = (uint16_t)mss, .csum_start = 34,
			    .csum_offset = 16};

	assert_non_null(sp);
	assert_int_equal(vnic_pktgen_build_gso(sp, fl, 0, payload, mss), 0);
	/* not the pseudo-header sum: the wire must write it, not trust the kernel's */
	sp->data[34 + 16] ^= 0x5a;
	memcpy(buf, &vh, sizeof(vh));
	memcpy(buf + sizeof(vh), sp->data, sp->len);
	assert_int_equal(send(s, buf, sizeof(vh) + sp->len, 0), (ssize_t)(sizeof(vh) + sp->len));
	vnic_pkt_free(sp);
}

/* Peeks (hang-guarded) until a TCP frame leads; returns how many were peeked. */
static unsigned int peek_tcp(struct vnic_wire *w, struct vnic_pkt **f, unsigned int max)
{
	uint64_t end = vnic_now_ns() + GUARD_NS;

	for (;;) {
		unsigned int n = w->ops->rx_peek(w, f, max);
		struct vnic_hdrs h;

		if (n && vnic_parse_frame(f[0]->data, f[0]->len, &h) == VNIC_PARSE_OK &&
		    h.l4_proto == VNIC_IPPROTO_TCP)
			return n;
		w->ops->rx_release(w, n ? 1 : 0); /* the kernel's own chatter, if any */
		if (!n) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
	}
}

/*
 * A TCP superframe in slot, its payload (20000 bytes, MSS 1400) in src and
 * chained by ref: the slot's part is its 54 bytes of headers, the rest of
 * the slot zeroed so that a payload read from the slot would be caught.
 */
static void frags_build(struct vnic_pkt *slot, const struct vnic_pkt *src, struct vnic_pkt *ref,
			const struct vnic_pktgen_flow *fl)
{
	assert_int_equal(vnic_pktgen_build_gso(slot, fl, 0, 20000, 1400), 0);
	slot->ip_summed = VNIC_CSUM_NONE; /* as the device leaves it: the wire makes it partial */
	memset(slot->data + 54, 0, slot->len - 54);
	memset(ref, 0, sizeof(*ref));
	ref->data = src->data + 54;
	ref->head = ref->data;
	ref->len = src->len - 54;
	ref->buf_size = ref->len;
	slot->frags = ref;
	slot->frags_tail = ref;
	slot->frag_len = ref->len;
}

/* Chains the wire refuses (what tx_frags_ok in src/port/afpacket.c checks), one rule each. */
enum frags_bad {
	FRAGS_SHORT = 1, /* frag_len one short of the payload piece's length */
	FRAGS_TWO,	 /* a second piece behind the first */
	FRAGS_HDRS_OUT,	 /* headers longer than the slot's part */
	FRAGS_NOT_GSO,	 /* a plain frame with a chained payload */
	FRAGS_ALL,	 /* everything chained, nothing in the slot */
	FRAGS_NO_DATA,	 /* the piece points nowhere */
	FRAGS_UNPARSED,	 /* header lengths not known to be valid */
};

static const struct {
	const char *name;
	enum frags_bad how;
} frags_bad_cases[] = {
	{"frag_len short of the piece", FRAGS_SHORT},
	{"two pieces", FRAGS_TWO},
	{"headers past the slot's part", FRAGS_HDRS_OUT},
	{"not a superframe", FRAGS_NOT_GSO},
	{"nothing in the slot", FRAGS_ALL},
	{"piece without data", FRAGS_NO_DATA},
	{"headers not parsed", FRAGS_UNPARSED},
};

static void frags_break(struct vnic_pkt *slot, struct vnic_pkt *ref, struct vnic_pkt *ref2,
			enum frags_bad how)
{
	switch (how) {
	case FRAGS_SHORT:
		slot->frag_len--;
		break;
	case FRAGS_TWO:
		memset(ref2, 0, sizeof(*ref2));
		ref2->data = ref->data;
		ref2->len = 1;
		ref->next = ref2;
		break;
	case FRAGS_HDRS_OUT:
		slot->l4_len = (uint16_t)(slot->l4_len + 4);
		break;
	case FRAGS_NOT_GSO:
		slot->gso_type = VNIC_GSO_NONE;
		break;
	case FRAGS_ALL:
		ref->len = slot->len;
		slot->frag_len = slot->len;
		break;
	case FRAGS_NO_DATA:
		ref->data = NULL;
		break;
	case FRAGS_UNPARSED:
		slot->flags = (uint8_t)(slot->flags & ~VNIC_PKT_F_PARSED);
		break;
	}
}

static void test_vnet_frags(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_pktgen_flow fl;
	struct vnic_pkt *slots[1], *src, ref, ref2;
	struct vnic_wire *w;
	struct vnet10 vh;
	uint8_t *buf = malloc(VNIC_PKT_MAX_LEN + 64), *orig;
	uint64_t drops = 0;
	int s;

	assert_non_null(buf);
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	cfg_of(&c, MTU, ring_of(state));
	c.vnet_hdr = true;
	assert_int_equal(vnic_afpacket_create(&w, "va", &c, &cpu), 0);
	assert_true(w->tx_frags);
	s = raw_vnet_on("vb");
	vnic_pktgen_flow_init(&fl, false, VNIC_IPPROTO_TCP);
	fl.sport = 1078;
	src = vnic_pkt_alloc(&pool);
	assert_non_null(src);
	assert_int_equal(vnic_pktgen_build_gso(src, &fl, 0, 20000, 1400), 0);
	orig = malloc(src->len);
	assert_non_null(orig);
	memcpy(orig, src->data, src->len);

	for (size_t i = 0; i < sizeof(frags_bad_cases) / sizeof(frags_bad_cases[0]); i++) {
		print_message("%zu: %s\n", i + 1, frags_bad_cases[i].name);
		assert_int_equal(w->ops->tx_reserve(w, slots, 1), 1);
		frags_build(slots[0], src, &ref, &fl);
		frags_break(slots[0], &ref, &ref2, frags_bad_cases[i].how);
		w->ops->tx_commit(w, slots, 1, 1);
		assert_int_equal(stat_of(w, "tx_drop_mtu"), ++drops);
		assert_int_equal(stat_of(w, "tx_frames"), 0);
		assert_int_equal(stat_of(w, "tx_gso_frags"), 0);
	}

	assert_int_equal(w->ops->tx_reserve(w, slots, 1), 1);
	frags_build(slots[0], src, &ref, &fl);
	w->ops->tx_commit(w, slots, 1, 1);
	assert_int_equal(stat_of(w, "tx_frames"), 1);
	assert_int_equal(stat_of(w, "tx_gso_frames"), 1);
	assert_int_equal(stat_of(w, "tx_gso_frags"), 1);
	/* the pseudo-header sum went into the slot's headers, nothing into the payload's memory */
	assert_memory_equal(src->data, orig, src->len);
	{
		ssize_t n = recv_incoming(s, buf, VNIC_PKT_MAX_LEN + 64, sizeof(vh));

		memcpy(&vh, buf, sizeof(vh));
		assert_int_equal(n - (ssize_t)sizeof(vh), 54 + 20000);
		assert_int_equal(vh.gso_type, VNIC_VNET_GSO_TCPV4);
		assert_int_equal(vh.gso_size, 1400);
		assert_int_equal(vh.hdr_len, 54);
		assert_true(vh.flags & VNIC_VNET_F_NEEDS_CSUM);
		/* the headers as the slot held them, then the payload from src */
		assert_memory_equal(buf + sizeof(vh), slots[0]->data, 54);
		assert_true(vnic_pktgen_verify(buf + sizeof(vh) + 54, 20000, fl.seed, 0));
	}
	vnic_pkt_free(src);
	free(orig);
	close(s);
	free(buf);
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
}

/*
 * A device that takes superframes (rx_gso_take) gets one whole, as the
 * cable hands it one: its GSO metadata, the payload in place, the
 * pseudo-header sum in its checksum field (section 8.5); the plain frame
 * behind it still arrives. One larger than the device takes, or
 * any after the device gave large receive back (0), is cut as before.
 */
static void test_vnet_whole(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_pktgen_flow fl;
	struct vnic_pkt *f[8];
	struct vnic_wire *w;
	struct vnic_hdrs h;
	uint8_t *buf = malloc(VNIC_PKT_MAX_LEN + 64);
	uint16_t field, want;
	unsigned int n, cut;
	int s;

	assert_non_null(buf);
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	cfg_of(&c, MTU, ring_of(state));
	c.vnet_hdr = true;
	assert_int_equal(vnic_afpacket_create(&w, "va", &c, &cpu), 0);
	assert_int_equal(w->rx_gso_max_size, VNIC_PKT_MAX_LEN);
	assert_non_null(w->ops->rx_gso_take);
	s = raw_vnet_on("vb");
	vnic_pktgen_flow_init(&fl, false, VNIC_IPPROTO_TCP);
	fl.sport = 1099; /* not a frame() id */

	/* taken: whole, then the plain frame behind it */
	w->ops->rx_gso_take(w, VNIC_PKT_MAX_LEN);
	send_super(s, buf, &fl, 20000, 1000);
	send_raw_vnet(s, buf, 60, 100);
	peek_tcp(w, f, 1);
	assert_int_equal(f[0]->len, 54 + 20000);
	assert_int_equal(f[0]->gso_type, VNIC_GSO_TCPV4);
	assert_int_equal(f[0]->gso_size, 1000);
	assert_int_equal(f[0]->gso_segs, 20);
	assert_int_equal(f[0]->l2_len, 14);
	assert_int_equal(f[0]->l3_len, 20);
	assert_int_equal(f[0]->l4_len, 20);
	assert_true(vnic_pktgen_verify(f[0]->data + 54, 20000, fl.seed, 0));
	assert_int_equal(vnic_parse_frame(f[0]->data, f[0]->len, &h), VNIC_PARSE_OK);
	want = (uint16_t)~vnic_csum_fold(vnic_csum_pseudo4(f[0]->data + 26, f[0]->data + 30,
							   VNIC_IPPROTO_TCP, 20 + 20000));
	memcpy(&field, f[0]->data + 34 + 16, sizeof(field));
	assert_int_equal(field, want);
	/* finished as a driver's stack would, the sum is right */
	field = vnic_csum_fold(vnic_csum_partial(f[0]->data + 34, 20 + 20000, 0));
	memcpy(f[0]->data + 34 + 16, &field, sizeof(field));
	assert_true(vnic_csum_l4_ok(f[0]->data, &h));
	w->ops->rx_release(w, 1);
	take_frames(w, 60, 1);
	assert_int_equal(stat_of(w, "rx_gso_whole"), 1);
	assert_int_equal(stat_of(w, "rx_gso_frames"), 0);

	/* larger than the device takes, then not taken at all: cut, 20 segments each */
	for (int round = 0; round < 2; round++) {
		w->ops->rx_gso_take(w, round ? 0 : 10000);
		send_super(s, buf, &fl, 20000, 1000);
		for (cut = 0; cut < 20; cut += n) {
			n = peek_tcp(w, f, 8);
			for (unsigned int i = 0; i < n; i++) {
				assert_int_equal(f[i]->gso_type, VNIC_GSO_NONE);
				assert_int_equal(f[i]->len, 54 + 1000);
				assert_int_equal(vnic_parse_frame(f[i]->data, f[i]->len, &h),
						 VNIC_PARSE_OK);
				assert_true(vnic_csum_l4_ok(f[i]->data, &h));
				assert_true(vnic_pktgen_verify(f[i]->data + 54, 1000, fl.seed,
							       (cut + i) * 1000));
			}
			w->ops->rx_release(w, n);
		}
		assert_int_equal(cut, 20);
		assert_int_equal(stat_of(w, "rx_gso_frames"), round + 1);
		assert_int_equal(stat_of(w, "rx_gso_segments"), 20 * (round + 1));
	}
	assert_int_equal(stat_of(w, "rx_gso_whole"), 1);
	assert_int_equal(stat_of(w, "rx_drop_gso"), 0);
	close(s);
	free(buf);
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
}

/* ---- a vNIC pair over the veth pair ---------------------------------------- */

struct side {
	struct vnic_cpu cpu;
	struct vnic_hv *hv;
	struct vnic_wire *wire;
	struct vnic_dev *dev;
	struct vnic_drv *drv;
	struct vnic_pkt_pool host;
};

static struct side sides[2];

static void side_create(struct side *sd, const char *ifname, unsigned int i,
			enum vnic_afpacket_ring ring, bool vnet)
{
	struct vnic_afpacket_config c;
	struct vnic_drv_config dcfg;

	memset(sd, 0, sizeof(*sd));
	assert_int_equal(vnic_cpu_init(&sd->cpu, i ? "afp-b" : "afp-a", 20000), 0);
	assert_int_equal(vnic_hv_create(&sd->hv, 128, NULL), 0);
	cfg_of(&c, MTU, ring);
	c.vnet_hdr = vnet;
	assert_int_equal(vnic_afpacket_create(&sd->wire, ifname, &c, &sd->cpu), 0);
	assert_int_equal(vnic_dev_create(&sd->dev, sd->hv, sd->wire, &sd->cpu, NULL), 0);
	vnic_drv_config_default(&dcfg);
	dcfg.cpu = &sd->cpu;
	dcfg.mac[0] = 0x02;
	dcfg.mac[5] = (uint8_t)(0x20 + i);
	assert_int_equal(vnic_drv_create(&sd->drv, sd->hv, &dcfg), 0);
	assert_int_equal(vnic_pkt_pool_init(&sd->host, 1024, VNIC_PKT_MAX_LEN + 256, 128), 0);
}

static void side_destroy(struct side *sd)
{
	vnic_drv_destroy(sd->drv);
	vnic_dev_destroy(sd->dev);
	vnic_hv_destroy(sd->hv);
	vnic_afpacket_destroy(sd->wire);
	vnic_pkt_pool_fini(&sd->host);
	vnic_cpu_fini(&sd->cpu);
}

static void test_vnic_over_veth(void **state)
{
	struct vnic_stream_opts so = {.flows = 1, .bytes = 8 << 20};
	struct vnic_work_results res;
	struct vnic_afpacket_stats st;
	struct vnic_stream *stream;
	uint64_t end;
	int i;

	print_message("ring %s%s\n", vnic_afpacket_ring_name(ring_of(state)),
		      vnet_of(state) ? ", superframes" : "");
	side_create(&sides[0], "va", 0, ring_of(state), vnet_of(state));
	side_create(&sides[1], "vb", 1, ring_of(state), vnet_of(state));
	assert_int_equal(vnic_stream_create(&stream, vnic_drv_netdev(sides[0].drv), &sides[0].host,
					    vnic_drv_netdev(sides[1].drv), &sides[1].host, &so),
			 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_cpu_start(&sides[i].cpu), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_drv_open(sides[i].drv, NULL, 0, 0), 0);
	vnic_stream_start(stream);
	end = vnic_now_ns() + 4 * GUARD_NS;
	while (vnic_stream_flow_bytes(stream, 0) < so.bytes) {
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(5000);
	}
	vnic_stream_stop(stream);
	while (!vnic_stream_quiesced(stream)) {
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(5000);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_drv_close(sides[i].drv, NULL, 0, 0), 0);
	for (i = 0; i < 2; i++)
		vnic_cpu_stop(&sides[i].cpu);

	vnic_stream_results(stream, &res);
	print_message("delivered %llu bytes, tx segs %llu, rx pkts %llu\n",
		      (unsigned long long)res.bytes, (unsigned long long)res.tx_segs,
		      (unsigned long long)res.rx_pkts);
	assert_int_equal(vnic_stream_flow_bytes(stream, 0), so.bytes);
	assert_int_equal(res.err.payload, 0);
	assert_int_equal(res.err.bad_csum, 0);
	for (i = 0; i < 2; i++) {
		vnic_afpacket_stats(sides[i].wire, &st);
		print_message(
			"wire %d: rx %llu frames in %llu blocks, %llu notifies, tx %llu in "
			"%llu sendmmsg, drops: too_big %llu mtu %llu kernel %llu/%llu\n",
			i, (unsigned long long)st.rx_frames, (unsigned long long)st.rx_blocks,
			(unsigned long long)st.rx_notifies, (unsigned long long)st.tx_frames,
			(unsigned long long)st.tx_syscalls, (unsigned long long)st.rx_drop_too_big,
			(unsigned long long)st.tx_drop_mtu, (unsigned long long)st.rx_kernel_drops,
			(unsigned long long)st.tx_drop_kernel);
		assert_true(st.rx_frames > 0 && st.tx_frames > 0);
		assert_int_equal(st.rx_drop_too_big + st.tx_drop_mtu, 0);
	}
	vnic_afpacket_stats(sides[0].wire, &st);
	if (vnet_of(state)) {
		struct vnic_afpacket_stats rst;

		/*
		 * superpackets left whole and came in whole: the receiving
		 * driver took large receive, so the wire handed them on whole
		 */
		vnic_afpacket_stats(sides[1].wire, &rst);
		assert_true(st.tx_gso_frames > 0);
		/* the device left their payloads in its driver's buffer; every byte verified above */
		assert_true(st.tx_gso_frags > 0);
		assert_true(rst.rx_gso_whole > 0);
		assert_int_equal(st.tx_drop_gso + rst.rx_drop_gso, 0);
	} else {
		/* superpackets were segmented onto the wire: more frames than syscalls */
		assert_true(st.tx_frames > st.tx_syscalls);
		assert_int_equal(st.tx_gso_frames, 0);
	}
	vnic_stream_destroy(stream);
	side_destroy(&sides[0]);
	side_destroy(&sides[1]);
}

/*
 * An interface in another namespace: found and bound there when the wire is
 * given that namespace, not found without it; the caller stays where it is.
 */
static void test_other_namespace(void **state)
{
	struct vnic_afpacket_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w = NULL;
	char ns[32], cmd[512], path[64];
	struct stat before, after;
	int nsfd;

	(void)state;
	snprintf(ns, sizeof(ns), "vnic-afp-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "ip netns add %s && ip -n %s link add vo type veth peer name vp && "
		 "ip -n %s link set vo up && ip -n %s link set vp up && "
		 "ip -n %s addr add 10.7.0.1/24 dev vp",
		 ns, ns, ns, ns, ns);
	assert_int_equal(sh(cmd), 0);
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(nsfd > 0);
	assert_int_equal(stat("/proc/thread-self/ns/net", &before), 0);
	assert_int_equal(vnic_cpu_init(&cpu, "afp", 0), 0);
	assert_int_equal(vnic_afpacket_create(&w, "vo", cfg_of(&c, MTU, VNIC_AFPACKET_RING_V2), &cpu),
			 -ENODEV);
	c.netns_fd = nsfd;
	assert_int_equal(vnic_afpacket_create(&w, "vo", &c, &cpu), 0);
	assert_int_equal(stat("/proc/thread-self/ns/net", &after), 0);
	assert_true(before.st_ino == after.st_ino);
	/* it is that namespace's vo: a frame sent on vp there arrives */
	snprintf(cmd, sizeof(cmd), "ip netns exec %s ping -c 1 -W 1 10.7.0.9 >/dev/null 2>&1", ns);
	sh(cmd); /* fails (nobody answers); its ARP request on vp is the frame */
	{
		uint64_t end = vnic_now_ns() + GUARD_NS;
		struct vnic_pkt *f[8];
		unsigned int n;

		while ((n = w->ops->rx_peek(w, f, 8)) == 0) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
		assert_true(f[0]->len >= 14);
		w->ops->rx_release(w, n);
	}
	vnic_afpacket_destroy(w);
	vnic_cpu_fini(&cpu);
	close(nsfd);
	snprintf(cmd, sizeof(cmd), "ip netns del %s", ns);
	assert_int_equal(sh(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_refuses_lo_and_l3),
		cmocka_unit_test_prestate(test_rx_tx, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_rx_tx, (void *)&ring_v3),
		cmocka_unit_test_prestate(test_spin_peek, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_spin_peek, (void *)&ring_v3),
		cmocka_unit_test_prestate(test_vnic_over_veth, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_vnic_over_veth, (void *)&ring_v3),
		cmocka_unit_test_prestate(test_vnic_over_veth, (void *)&ring_v2_vnet),
		cmocka_unit_test_prestate(test_vnet_superframes, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_vnet_superframes, (void *)&ring_v3),
		cmocka_unit_test_prestate(test_vnet_refused, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_vnet_refused, (void *)&ring_v3),
		cmocka_unit_test_prestate(test_vnet_frags, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_vnet_whole, (void *)&ring_v2),
		cmocka_unit_test_prestate(test_vnet_whole, (void *)&ring_v3),
		cmocka_unit_test(test_other_namespace),
	};
	int rc;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) ||
	    /* no IPv6 on new interfaces: nothing but the test's frames on the link */
	    sh("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true") ||
	    sh("ip link add va mtu 9000 type veth peer name vb mtu 9000 2>/dev/null") ||
	    sh("ip link set va up && ip link set vb up && ip link set lo up")) {
		printf("SKIP: needs root, a network namespace and iproute2 (veth)\n");
		return 77;
	}
	if (vnic_pkt_pool_init(&pool, 16, VNIC_PKT_MAX_LEN, 0))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	vnic_pkt_pool_fini(&pool);
	return rc;
}
