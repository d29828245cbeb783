// SPDX-License-Identifier: MIT
/*
 * The AF_XDP backing wire over a veth pair in a private network namespace
 * (needs root, iproute2 and a kernel that takes AF_XDP on a veth; skips
 * with 77 otherwise):
 *
 *   test's raw socket on vb  <== veth ==>  va: the wire under test
 *
 *   - refusals: no interface, an MTU that does not fit a UMEM frame with
 *     XDP's headroom, lo, a TUN, missing arguments; a wire destroyed leaves
 *     no XDP program on its interface;
 *   - the mode: native on a veth, with nothing to say; generic on a device
 *     without native XDP (a macvlan), with a note that says why;
 *   - rx: frames sent on vb arrive in order, byte for byte; the notification
 *     fires only while armed; a frame longer than the wire's is dropped and
 *     counted; a partial release leaves the rest for the next peek;
 *   - a spinning cpu's look at the RX ring sees a frame only while armed;
 *     the edge of a frame it found, once the frame is taken, is not
 *     reported: no notification on an empty ring;
 *   - tx: committed frames arrive on vb in order, byte for byte; an over-MTU
 *     frame is dropped and counted; more frames than the UMEM's transmit
 *     half go out (completions recycle them);
 *   - a whole vNIC on it (threaded): two devices and drivers, one on each
 *     end of the veth pair, carry a verified TCP-like stream;
 *   - an interface in another namespace, set up and torn down there.
 *
 * Waits are hang guards, never timing assertions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static struct vnic_afxdp_config *cfg_of(struct vnic_afxdp_config *c, uint32_t mtu)
{
	memset(c, 0, sizeof(*c));
	c->mtu = mtu;
	return c;
}

static int sh(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -1;
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

/* A UDP frame whose payload is the pattern of seed id; the same bytes for the same arguments. */
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
	return port >= 1000 && port < 1000 + 4096 ? port - 1000 : -1;
}

/* f is frame(id, payload), byte for byte. */
static void assert_frame(const struct vnic_pkt *f, uint32_t id, uint32_t payload)
{
	struct vnic_pkt *want = frame(id, payload);

	assert_int_equal(f->len, want->len);
	assert_memory_equal(f->data, want->data, want->len);
	vnic_pkt_free(want);
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

/* Peeks until want frames of ids first.. came (hang guard), each as frame(id, payload). */
static void take_frames(struct vnic_wire *w, uint32_t first, unsigned int want, uint32_t payload)
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
			assert_frame(f[i], (uint32_t)id, payload);
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
	struct vnic_counter c[48];
	unsigned int n = vnic_afxdp_counters(w, c, 48);
	const struct vnic_counter *e = vnic_counter_find(c, n < 48 ? n : 48, name);

	if (!e)
		fail_msg("no counter %s", name);
	return e ? e->value : 0;
}

/* Whether ip shows an XDP program on ifname (in namespace ns, or ours when NULL). */
static bool has_xdp(const char *ns, const char *ifname)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip %s%s link show dev %s | grep -q ' xdp'", ns ? "-n " : "",
		 ns ? ns : "", ifname);
	return sh(cmd) == 0;
}

/* The refusals, one row per rule; nothing is registered on the cpu by any of them. */
static const struct bad_case {
	const char *name;
	const char *ifname;
	uint32_t mtu;
	bool no_cfg, no_cpu;
	int rc;
} bad_cases[] = {
	{"1 no such interface", "no-such-if", MTU, false, false, -ENODEV},
	{"2 mtu below 68", "va", 67, false, false, -EINVAL},
	{"3 mtu 3822 + 18 + 256 > 4096", "va", 3823, false, false, -EINVAL},
	{"4 no config", "va", MTU, true, false, -EINVAL},
	{"5 no cpu", "va", MTU, false, true, -EINVAL},
	{"6 loopback", "lo", MTU, false, false, -EINVAL},
	{"7 a name too long", "a-name-longer-than-ifnamsiz", MTU, false, false, -EINVAL},
};

static void test_refusals(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w = (void *)&c;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *b = &bad_cases[i];

		print_message("%s\n", b->name);
		assert_int_equal(vnic_afxdp_create(&w, b->ifname,
						   b->no_cfg ? NULL : cfg_of(&c, b->mtu),
						   b->no_cpu ? NULL : &cpu),
				 b->rc);
		assert_null(w);
		assert_null(cpu.fds);
	}
	if (sh("ip tuntap add vt0 mode tun 2>/dev/null && ip link set vt0 up") == 0) {
		assert_int_equal(vnic_afxdp_create(&w, "vt0", cfg_of(&c, MTU), &cpu),
				 -EPROTONOSUPPORT);
		assert_null(w);
		assert_int_equal(sh("ip link del vt0"), 0);
	} else {
		print_message("no TUN device here (/dev/net/tun): the L3 case is not run\n");
	}
	assert_null(cpu.fds);
	assert_false(has_xdp(NULL, "va"));
	/* the largest MTU that fits is taken; destroy takes the program away */
	assert_int_equal(vnic_afxdp_create(&w, "va", cfg_of(&c, 3822), &cpu), 0);
	assert_non_null(cpu.fds);
	assert_int_equal(w->frame_size, 3822 + 18);
	assert_int_equal(w->gso_max_size, 0);
	assert_true(has_xdp(NULL, "va"));
	vnic_afxdp_destroy(w);
	assert_false(has_xdp(NULL, "va"));
	vnic_cpu_fini(&cpu);
}

/* The mode is reported the same way by both queries; the veth has native XDP, no zero-copy. */
static void test_mode(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w;
	const char *mode;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	assert_int_equal(vnic_afxdp_create(&w, "va", cfg_of(&c, MTU), &cpu), 0);
	mode = vnic_afxdp_mode_name(w);
	print_message("mode: %s\n", mode);
	if (stat_of(w, "native"))
		assert_string_equal(mode,
				    stat_of(w, "zerocopy") ? "native zero-copy" : "native copy");
	else
		assert_string_equal(mode, "generic copy");
	assert_int_equal(stat_of(w, "zerocopy"), 0); /* a veth has no zero-copy */
	/* a veth has native XDP: taken, and nothing to say about it */
	assert_int_equal(stat_of(w, "native"), 1);
	assert_string_equal(vnic_afxdp_mode_note(w), "");
	/* copy mode: one kick a burst where the kernel lets the budget be the ring */
	assert_true(stat_of(w, "tx_budget") == 32 || stat_of(w, "tx_budget") == 2048);
	vnic_afxdp_destroy(w);
	vnic_cpu_fini(&cpu);
}

/*
 * A device without native XDP (a macvlan on va, else a bridge): generic XDP
 * is taken, and the note says why native was not, with the kernel's reason.
 */
static void test_native_fallback(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w;
	const char *note;

	(void)state;
	if (sh("ip link add link va name vd0 type macvlan 2>/dev/null && ip link set vd0 up") &&
	    sh("ip link add vd0 type bridge 2>/dev/null && ip link set vd0 up")) {
		print_message("no macvlan or bridge devices here: not run\n");
		return;
	}
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	assert_int_equal(vnic_afxdp_create(&w, "vd0", cfg_of(&c, MTU), &cpu), 0);
	note = vnic_afxdp_mode_note(w);
	print_message("mode: %s; note: %s\n", vnic_afxdp_mode_name(w), note);
	assert_string_equal(vnic_afxdp_mode_name(w), "generic copy");
	assert_int_equal(stat_of(w, "native"), 0);
	assert_non_null(strstr(note, "native XDP refused ("));
	assert_non_null(strstr(note, "generic XDP instead"));
	assert_true(has_xdp(NULL, "vd0"));
	vnic_afxdp_destroy(w);
	assert_false(has_xdp(NULL, "vd0"));
	vnic_cpu_fini(&cpu);
	assert_int_equal(sh("ip link del vd0"), 0);
}

static void test_rx(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu, *cpus[1] = {&cpu};
	struct note note = {0};
	struct vnic_pkt *f[8];
	struct vnic_wire *w;
	uint64_t end;
	int s = raw_on("vb");
	unsigned int i, n;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	/* a wire narrower than the veth, so vb can send it a frame too long */
	assert_int_equal(vnic_afxdp_create(&w, "va", cfg_of(&c, 1000), &cpu), 0);
	assert_int_equal(w->mtu, 1000);
	assert_int_equal(w->frame_size, 1000 + 18);
	w->notify = on_notify;
	w->notify_ctx = &note;

	/* nothing arrived: nothing pending, no notification */
	assert_false(w->ops->rx_irq->pending(w));
	assert_int_equal(w->ops->rx_peek(w, f, 8), 0);
	w->ops->rx_irq->enable(w);
	assert_int_equal(vnic_cpu_run_once(&cpu), 0);

	/* ten frames and, in the middle, one too long for the wire */
	for (i = 0; i < 5; i++)
		send_raw(s, i, 100);
	send_raw(s, 99, 1400);
	for (i = 5; i < 10; i++)
		send_raw(s, i, 100);
	assert_int_equal(vnic_cpus_run_until(cpus, 1, notified, &note, GUARD_NS), 0);
	assert_int_equal(note.n, 1);
	/* the notification disarmed the irq: no second one */
	assert_int_equal(vnic_cpu_run_once(&cpu), 0);
	assert_int_equal(note.n, 1);
	assert_true(w->ops->rx_irq->pending(w));
	take_frames(w, 0, 10, 100);
	assert_int_equal(stat_of(w, "rx_frames"), 10);
	assert_int_equal(stat_of(w, "rx_drop_too_big"), 1);
	assert_int_equal(stat_of(w, "rx_drop_bad_desc"), 0);
	assert_false(w->ops->rx_irq->pending(w));
	assert_int_equal(w->ops->rx_next_ns(w), 0);

	/* a partial release: the rest comes again on the next peek, in order */
	for (i = 0; i < 3; i++)
		send_raw(s, 10 + i, 64);
	end = vnic_now_ns() + GUARD_NS;
	while ((n = w->ops->rx_peek(w, f, 8)) < 3) {
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(1000);
	}
	assert_int_equal(n, 3);
	assert_frame(f[0], 10, 64);
	/* peeking again without a release shows the same frames */
	assert_int_equal(w->ops->rx_peek(w, f, 8), 3);
	assert_frame(f[0], 10, 64);
	w->ops->rx_release(w, 1);
	assert_int_equal(w->ops->rx_peek(w, f, 8), 2);
	assert_frame(f[0], 11, 64);
	assert_frame(f[1], 12, 64);
	w->ops->rx_release(w, 2);
	assert_int_equal(w->ops->rx_peek(w, f, 8), 0);

	/*
	 * More frames than the UMEM's receive half, in bursts the device takes
	 * as they come: every frame goes back to the FILL ring.
	 */
	for (uint32_t b = 0; b < 40; b++) {
		for (i = 0; i < 64; i++)
			send_raw(s, 100 + i, 200);
		take_frames(w, 100, 64, 200);
	}
	assert_int_equal(stat_of(w, "rx_frames"), 13 + 40 * 64);
	assert_int_equal(stat_of(w, "rx_fill_empty"), 0);
	close(s);
	vnic_afxdp_destroy(w);
	vnic_cpu_fini(&cpu);
}

static void peek_send(int s, uint32_t id)
{
	send_raw(s, id, 100);
}

static void peek_take(struct vnic_wire *w, uint32_t id)
{
	take_frames(w, id, 1, 100);
}

static uint64_t peek_notifies(struct vnic_wire *w)
{
	return stat_of(w, "rx_notifies");
}

/* A spinning cpu's look at the RX ring (tests/port/spin_peek.h). */
static void test_spin_peek(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_test_peek t = {
		.guard_ns = GUARD_NS,
		.send = peek_send,
		.take = peek_take,
		.notifies = peek_notifies,
	};
	struct vnic_cpu cpu;

	(void)state;
	t.s = raw_on("vb");
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	assert_int_equal(vnic_afxdp_create(&t.w, "va", cfg_of(&c, MTU), &cpu), 0);
	t.cpu = &cpu;
	vnic_test_spin_peek(&t);
	close(t.s);
	vnic_afxdp_destroy(t.w);
	vnic_cpu_fini(&cpu);
}

/* Reads frames from s until one of id `want` (the socket sees its own sends too). */
static void recv_frame(int s, uint32_t want, uint32_t payload)
{
	uint8_t buf[2048];
	struct vnic_pkt view;
	ssize_t got;

	for (;;) {
		struct pollfd p = {.fd = s, .events = POLLIN};

		assert_int_equal(poll(&p, 1, 10000), 1);
		got = recv(s, buf, sizeof(buf), 0);
		assert_true(got > 0);
		if (frame_id(buf, (uint32_t)got) == (int)want)
			break;
	}
	memset(&view, 0, sizeof(view));
	view.data = buf;
	view.len = (uint32_t)got;
	assert_frame(&view, want, payload);
}

static void test_tx(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu;
	struct vnic_pkt *slots[64];
	struct vnic_wire *w;
	int s = raw_on("vb");
	unsigned int i;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	assert_int_equal(vnic_afxdp_create(&w, "va", cfg_of(&c, MTU), &cpu), 0);

	/* three slots, the second one byte over the MTU, and a fourth reserved, not sent */
	assert_int_equal(w->ops->tx_reserve(w, slots, 4), 4);
	for (i = 0; i < 3; i++) {
		struct vnic_pkt *p = frame(20 + i, i == 1 ? 1600 : 500);

		assert_true(slots[i]->buf_size >= MTU + 18);
		memcpy(slots[i]->data, p->data, i == 1 ? MTU + 15 : p->len);
		slots[i]->len = i == 1 ? MTU + 15 : p->len;
		vnic_pkt_free(p);
	}
	w->ops->tx_commit(w, slots, 3, 4);
	assert_int_equal(stat_of(w, "tx_frames"), 2);
	assert_int_equal(stat_of(w, "tx_drop_mtu"), 1);
	recv_frame(s, 20, 500);
	recv_frame(s, 22, 500);

	/*
	 * More frames than the transmit half holds, 64 at a time (two kicks'
	 * worth in copy mode): the completions give the frames back.
	 */
	for (uint32_t b = 0; b < 40; b++) {
		assert_int_equal(w->ops->tx_reserve(w, slots, 64), 64);
		for (i = 0; i < 64; i++) {
			struct vnic_pkt *p = frame(200 + i, 300);

			assert_int_equal(vnic_pkt_copy_in(slots[i], p->data, p->len), 0);
			vnic_pkt_free(p);
		}
		w->ops->tx_commit(w, slots, 64, 64);
		for (i = 0; i < 64; i++)
			recv_frame(s, 200 + i, 300);
	}
	assert_int_equal(stat_of(w, "tx_frames"), 2 + 40 * 64);
	assert_int_equal(stat_of(w, "tx_drop_ring_full"), 0);
	assert_int_equal(stat_of(w, "tx_bad_completions"), 0);
	assert_true(stat_of(w, "tx_completions") >= 40 * 64 + 2 - 2048);
	close(s);
	vnic_afxdp_destroy(w);
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

static void side_create(struct side *sd, const char *ifname, unsigned int i)
{
	struct vnic_afxdp_config c;
	struct vnic_drv_config dcfg;

	memset(sd, 0, sizeof(*sd));
	assert_int_equal(vnic_cpu_init(&sd->cpu, i ? "xdp-b" : "xdp-a", 20000), 0);
	assert_int_equal(vnic_hv_create(&sd->hv, 128, NULL), 0);
	assert_int_equal(vnic_afxdp_create(&sd->wire, ifname, cfg_of(&c, MTU), &sd->cpu), 0);
	assert_int_equal(vnic_dev_create(&sd->dev, sd->hv, sd->wire, &sd->cpu, NULL), 0);
	vnic_drv_config_default(&dcfg);
	dcfg.cpu = &sd->cpu;
	dcfg.mac[0] = 0x02;
	dcfg.mac[5] = (uint8_t)(0x30 + i);
	assert_int_equal(vnic_drv_create(&sd->drv, sd->hv, &dcfg), 0);
	assert_int_equal(vnic_pkt_pool_init(&sd->host, 1024, VNIC_PKT_MAX_LEN + 256, 128), 0);
}

static void side_destroy(struct side *sd)
{
	vnic_drv_destroy(sd->drv);
	vnic_dev_destroy(sd->dev);
	vnic_hv_destroy(sd->hv);
	vnic_afxdp_destroy(sd->wire);
	vnic_pkt_pool_fini(&sd->host);
	vnic_cpu_fini(&sd->cpu);
}

static void test_vnic_over_veth(void **state)
{
	struct vnic_stream_opts so = {.flows = 1, .bytes = 8 << 20};
	struct vnic_work_results res;
	struct vnic_afxdp_stats st;
	struct vnic_stream *stream;
	uint64_t end;
	int i;

	(void)state;
	side_create(&sides[0], "va", 0);
	side_create(&sides[1], "vb", 1);
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
		vnic_afxdp_stats(sides[i].wire, &st);
		print_message(
			"wire %d (%s): rx %llu frames, %llu notifies, tx %llu frames in %llu "
			"kicks, %llu stalls, drops: bad_desc %llu too_big %llu mtu %llu "
			"ring_full %llu kernel %llu\n",
			i, vnic_afxdp_mode_name(sides[i].wire), (unsigned long long)st.rx_frames,
			(unsigned long long)st.rx_notifies, (unsigned long long)st.tx_frames,
			(unsigned long long)st.tx_kicks, (unsigned long long)st.tx_stalls,
			(unsigned long long)st.rx_drop_bad_desc,
			(unsigned long long)st.rx_drop_too_big, (unsigned long long)st.tx_drop_mtu,
			(unsigned long long)st.tx_drop_ring_full,
			(unsigned long long)st.rx_kernel_drops);
		assert_true(st.rx_frames > 0 && st.tx_frames > 0);
		assert_int_equal(st.rx_drop_bad_desc + st.rx_drop_too_big + st.tx_drop_mtu, 0);
		assert_int_equal(st.tx_bad_completions, 0);
	}
	vnic_stream_destroy(stream);
	side_destroy(&sides[0]);
	side_destroy(&sides[1]);
}

/*
 * An interface in another namespace: found, attached and bound there when
 * the wire is given that namespace, not found without it; the caller stays
 * where it is; destroy detaches the program there.
 */
static void test_other_namespace(void **state)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w = NULL;
	char ns[32], cmd[512], path[64];
	struct stat before, after;
	int nsfd;

	(void)state;
	snprintf(ns, sizeof(ns), "vnic-xdp-%d", (int)getpid());
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
	assert_int_equal(vnic_cpu_init(&cpu, "xdp", 0), 0);
	assert_int_equal(vnic_afxdp_create(&w, "vo", cfg_of(&c, MTU), &cpu), -ENODEV);
	c.netns_fd = nsfd;
	assert_int_equal(vnic_afxdp_create(&w, "vo", &c, &cpu), 0);
	assert_int_equal(stat("/proc/thread-self/ns/net", &after), 0);
	assert_true(before.st_ino == after.st_ino);
	assert_true(has_xdp(ns, "vo"));
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
	vnic_afxdp_destroy(w);
	assert_false(has_xdp(ns, "vo"));
	vnic_cpu_fini(&cpu);
	close(nsfd);
	snprintf(cmd, sizeof(cmd), "ip netns del %s", ns);
	assert_int_equal(sh(cmd), 0);
}

/* Whether this kernel takes an AF_XDP socket on a veth at all; says why not. */
static bool xdp_works(void)
{
	struct vnic_afxdp_config c;
	struct vnic_cpu cpu;
	struct vnic_wire *w;
	char why[256];
	int err;

	if (vnic_cpu_init(&cpu, "probe", 0))
		return false;
	err = vnic_afxdp_create(&w, "va", cfg_of(&c, MTU), &cpu);
	if (err) {
		vnic_afxdp_last_error(why, sizeof(why));
		printf("SKIP: the kernel refuses AF_XDP on a veth: %s%s%s\n", strerror(-err),
		       *why ? "; libxdp: " : "", why);
	} else {
		vnic_afxdp_destroy(w);
	}
	vnic_cpu_fini(&cpu);
	return !err;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_native_fallback),
		cmocka_unit_test(test_rx),
		cmocka_unit_test(test_spin_peek),
		cmocka_unit_test(test_tx),
		cmocka_unit_test(test_vnic_over_veth),
		cmocka_unit_test(test_other_namespace),
	};
	int rc;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) ||
	    /* no IPv6 on new interfaces: nothing but the test's frames on the link */
	    sh("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true") ||
	    /* 1500: native XDP on a veth wants the peer's MTU within a page */
	    sh("ip link add va mtu 1500 type veth peer name vb mtu 1500 2>/dev/null") ||
	    sh("ip link set va up && ip link set vb up && ip link set lo up")) {
		printf("SKIP: needs root, a network namespace and iproute2 (veth)\n");
		return 77;
	}
	if (!xdp_works())
		return 77;
	if (vnic_pkt_pool_init(&pool, 16, VNIC_PKT_MAX_LEN, 0))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	vnic_pkt_pool_fini(&pool);
	return rc;
}
