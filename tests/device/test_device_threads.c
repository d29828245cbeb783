// SPDX-License-Identifier: MIT
/*
 * The device on its own thread (a started vnic_cpu), the test driver on
 * another: interrupts from the hv and the cable cross threads for real.
 * The driver keeps a window of packets in flight (plain direct, checksum
 * offload with header descriptors sent indirect, LSO), reuses a long-term
 * buffer slot only after its completion, and feeds the device rx frames
 * while it transmits. Every packet must be completed once with SUCCESS,
 * every frame must reach the wire with valid checksums, every rx frame must
 * land in a posted buffer. Run under TSan in CI (label "threaded").
 *
 * The second run does the same while the test thread changes the device's
 * interrupt coalescing every COAL_EVERY packets (vnic_dev_set_coalesce, the
 * hand-off to the device's coalescing poller), and checks that in the end
 * every completion was signalled by an interrupt: none stranded.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "pktgen.h"

enum {
	N = 3000,   /* packets sent */
	SLOTS = 32, /* 2 KiB slots for plain and CSO frames, at tx LTB offset 0 */
	SLOT_SIZE = 2048,
	LSO_SLOTS = 2, /* 64 KiB slots behind them */
	LSO_OFF = SLOTS * SLOT_SIZE,
	LSO_PAYLOAD = 8000,
	LSO_MSS = 1400,
	LSO_SEGS = (LSO_PAYLOAD + LSO_MSS - 1) / LSO_MSS,
	RX_BUFS = 64,
	RX_EVERY = 3, /* one rx frame per this many tx packets */
	COAL_EVERY = 97,
};

/* What the second run cycles through: off, fixed, frames alone, adaptive. */
static const struct vnic_dev_coalesce coal_cycle[] = {
	{0},
	{.rx_usecs = 50, .rx_frames = 8, .tx_usecs = 20, .tx_frames = 16},
	{.rx_frames = 4, .tx_frames = 4},
	{.adaptive_rx = true, .adaptive_tx = true},
};

struct tx_slot {
	bool busy;
	uint32_t len;
	uint8_t kind; /* 0 plain, 1 CSO, 2 LSO */
};

static struct h_env env;
static struct tx_slot slots[SLOTS + LSO_SLOTS];
static uint8_t wire_buf[64][SLOT_SIZE];
static uint8_t rx_frame[SLOT_SIZE];
static uint32_t rx_frame_len;

struct counts {
	unsigned int completed, frames, rx_done, rx_sent;
};

static void build_slot(struct h_env *e, unsigned int s)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = h_pkt(e);
	bool lso = s >= SLOTS;
	uint32_t off = lso ? LSO_OFF + (s - SLOTS) * (64 << 10) : s * SLOT_SIZE;

	vnic_pktgen_flow_init(&f, s % 2, VNIC_IPPROTO_TCP);
	f.sport = (uint16_t)(2000 + s);
	f.seed = s;
	if (lso) {
		assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, LSO_PAYLOAD, LSO_MSS), 0);
		slots[s].kind = 2;
	} else {
		assert_int_equal(vnic_pktgen_build(p, &f, 0, 100 + 37 * s), 0);
		slots[s].kind = s % 3 == 0;
	}
	memcpy(e->tx_ltb + off, p->data, p->len);
	slots[s].len = p->len;
	if (slots[s].kind == 1)
		/* the device must compute it: spoil what the driver left */
		e->tx_ltb[off + VNIC_ETH_HLEN + (s % 2 ? 40 : 20) + 16] ^= 0x77;
	vnic_pkt_free(p);
}

/* Sends the packet of slot s with correlator corr; false if the ring is full. */
static bool send_slot(struct h_env *e, unsigned int s, uint32_t corr)
{
	union vnic_subcrq_entry ents[1 + 1 + VNIC_MAX_HDR_EXT_DESCS];
	bool lso = s >= SLOTS, v6 = s % 2;
	uint32_t off = lso ? LSO_OFF + (s - SLOTS) * (64 << 10) : s * SLOT_SIZE;
	uint8_t prot = (v6 ? VNIC_TX_PROT_IPV6 : VNIC_TX_PROT_IPV4) | VNIC_TX_PROT_TCP;
	unsigned int n = 1;
	long rc;

	switch (slots[s].kind) {
	case 0:
		h_tx_desc(e, &ents[0], corr, off, slots[s].len, prot, 0);
		break;
	default:
		h_tx_desc(e, &ents[0], corr, off, slots[s].len,
			  prot | VNIC_TX_CHKSUM_OFFLOAD | (lso ? VNIC_TX_LSO : 0),
			  lso ? LSO_MSS : 0);
		n += h_hdr_descs(&ents[1], e->tx_ltb + off, VNIC_ETH_HLEN, v6 ? 40 : 20, 20,
				 VNIC_HDR_DESC_L3);
		ents[0].tx.n_crq_elem = (uint8_t)n;
		break;
	}
	rc = h_tx_send(e, 0, ents, n);
	if (rc == VNIC_H_BUSY)
		return false;
	assert_int_equal(rc, VNIC_H_SUCCESS);
	return true;
}

/* Everything that came back: completions, wire frames, rx completions. */
static void reap(struct h_env *e, struct counts *c)
{
	uint32_t corr[64], lens[64];
	uint16_t rc[64];
	uint8_t *bufs[64];
	struct vnic_rx_comp rx[64];
	unsigned int n, i;

	n = h_tx_comps(e, 0, corr, rc, 64);
	for (i = 0; i < n; i++) {
		unsigned int s = corr[i] & 0xffff;

		assert_int_equal(rc[i], VNIC_RC_SUCCESS);
		assert_true(s < SLOTS + LSO_SLOTS && slots[s].busy);
		slots[s].busy = false;
	}
	c->completed += n;

	for (i = 0; i < 64; i++)
		bufs[i] = wire_buf[i];
	n = h_wire_take(e, bufs, lens, 64);
	for (i = 0; i < n; i++) {
		struct vnic_hdrs h;

		assert_int_equal(vnic_parse_frame(bufs[i], lens[i], &h), VNIC_PARSE_OK);
		assert_true(vnic_csum_l4_ok(bufs[i], &h));
	}
	c->frames += n;

	n = h_rx_comps(e, 0, rx, 64);
	for (i = 0; i < n; i++) {
		unsigned int idx = (unsigned int)(vnic_be64_get(&rx[i].correlator) - 0x1000);

		assert_int_equal(vnic_be16_get(&rx[i].rc), VNIC_RC_SUCCESS);
		assert_int_equal(vnic_be32_get(&rx[i].len), rx_frame_len);
		assert_true(idx < RX_BUFS);
		assert_memory_equal(h_rx_buf(e, idx), rx_frame, rx_frame_len);
		/* give it back, as a driver replenishes */
		while (h_rx_post(e, 0, idx, 1) == VNIC_H_BUSY)
			sched_yield();
	}
	c->rx_done += n;
}

/* Every completion sent was signalled by an interrupt of its own or by a later one. */
static bool all_signalled(struct h_env *e)
{
	return h_ctr(e, "tx0_irqs") + h_ctr(e, "tx0_irqs_coalesced") ==
		       h_ctr(e, "tx0_completions") &&
	       h_ctr(e, "rx0_irqs") + h_ctr(e, "rx0_irqs_coalesced") == h_ctr(e, "rx0_completions");
}

static void run(bool vary_coal)
{
	struct h_env *e = &env;
	struct counts c = {0};
	unsigned int i, s = 0, expected_frames = 0;
	uint64_t end;

	h_create(e, NULL, NULL);
	h_start(e);
	h_bringup(e, 1, 1);
	memset(slots, 0, sizeof(slots));
	for (i = 0; i < SLOTS + LSO_SLOTS; i++)
		build_slot(e, i);
	{
		struct vnic_pktgen_flow f;
		struct vnic_pkt *p = h_pkt(e);

		vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
		assert_int_equal(vnic_pktgen_build(p, &f, 0, 700), 0);
		rx_frame_len = p->len;
		memcpy(rx_frame, p->data, p->len);
		vnic_pkt_free(p);
	}
	assert_int_equal(h_rx_post(e, 0, 0, RX_BUFS), VNIC_H_SUCCESS);

	end = vnic_now_ns() + 60000000000ull;
	for (i = 0; i < N; i++) {
		if (vary_coal && i % COAL_EVERY == 0)
			assert_int_equal(
				vnic_dev_set_coalesce(e->dev, &coal_cycle[i / COAL_EVERY % 4]), 0);
		/* every tenth an LSO superpacket, else the next free small slot */
		unsigned int want = i % 10 == 9 ? SLOTS + i / 10 % LSO_SLOTS : s;

		while (slots[want].busy || !send_slot(e, want, i << 16 | want)) {
			assert_true((int64_t)(vnic_now_ns() - end) < 0);
			reap(e, &c);
			sched_yield();
		}
		slots[want].busy = true;
		expected_frames += slots[want].kind == 2 ? LSO_SEGS : 1;
		if (want < SLOTS)
			s = (s + 1) % SLOTS;
		if (i % RX_EVERY == 0 && c.rx_sent - c.rx_done < RX_BUFS / 2) {
			h_wire_inject(e, rx_frame, rx_frame_len);
			c.rx_sent++;
		}
		reap(e, &c);
	}
	while (c.completed < N || c.frames < expected_frames || c.rx_done < c.rx_sent) {
		assert_true((int64_t)(vnic_now_ns() - end) < 0);
		reap(e, &c);
		sched_yield();
	}
	assert_int_equal(c.completed, N);
	assert_int_equal(c.frames, expected_frames);
	/* the last interrupts come from a timer at most the backstop away */
	while (vary_coal && !all_signalled(e)) {
		assert_true((int64_t)(vnic_now_ns() - end) < 0);
		sched_yield();
	}
	if (vary_coal)
		print_message("completions signalled by a later interrupt: tx %llu, rx %llu\n",
			      (unsigned long long)h_ctr(e, "tx0_irqs_coalesced"),
			      (unsigned long long)h_ctr(e, "rx0_irqs_coalesced"));

	/* a clean close, answered once the device is done */
	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	vnic_cpu_stop(&e->v.cpu[0]);
	assert_int_equal(h_ctr(e, "tx0_packets"), N);
	assert_int_equal(h_ctr(e, "tx0_completions"), N);
	assert_int_equal(h_ctr(e, "tx0_lso_packets"), N / 10);
	assert_int_equal(h_ctr(e, "rx0_frames"), c.rx_sent);
	assert_int_equal(h_ctr(e, "rx0_drop_no_buffer"), 0);
	print_message("header descriptors seen late (hv publishes front to back): %llu\n",
		      (unsigned long long)h_ctr(e, "tx0_hdrs_waits"));
	h_destroy(e);
}

static void test_threads(void **state)
{
	(void)state;
	run(false);
}

static void test_threads_coalesce(void **state)
{
	(void)state;
	run(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_threads_coalesce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
