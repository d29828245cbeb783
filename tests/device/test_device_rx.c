// SPDX-License-Identifier: MIT
/*
 * The device's rx engine against a hostile test driver (harness.c): frames
 * from the far end of a real cable copied into posted buffers with the right
 * checksum flags, RSS over several queues, drops without buffers, bad rx
 * buffer adds ignored and counted, link down forgetting buffers, a delayed
 * wire driving the poll's timer, and a full rx completion ring. With a
 * cable ring pair per queue pair: ring q's frames on rx queue q whatever
 * RSS says, tx queue q on ring q, a ring past the rx queues logged in
 * dropped and counted, and the layouts create refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "pktgen.h"

enum { MAXC = 256 };

static struct h_env env;
static struct vnic_rx_comp comps[MAXC];

static int setup_with(void **state, const struct vnic_cable_cfg *cc, unsigned int nrx,
		      uint32_t rxcomp_entries)
{
	h_create(&env, NULL, cc);
	if (rxcomp_entries)
		env.rxcomp_entries = rxcomp_entries;
	h_bringup(&env, 1, nrx);
	*state = &env;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, NULL, 1, 0);
}

static int teardown(void **state)
{
	h_destroy(*state);
	return 0;
}

/* A pktgen frame (sport varies the flow) into out; returns its length. */
static uint32_t mk(struct h_env *e, bool v6, uint8_t proto, uint32_t payload, uint16_t sport,
		   uint8_t *out)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = h_pkt(e);
	uint32_t len;

	vnic_pktgen_flow_init(&f, v6, proto);
	f.sport = sport;
	f.seed = sport;
	assert_int_equal(vnic_pktgen_build(p, &f, 0, payload), 0);
	len = p->len;
	memcpy(out, p->data, len);
	vnic_pkt_free(p);
	return len;
}

static void check_comp(struct h_env *e, const struct vnic_rx_comp *c, unsigned int idx,
		       const uint8_t *frame, uint32_t len, uint8_t flags)
{
	assert_int_equal(c->first, VNIC_SUBCRQ_VALID);
	assert_int_equal(vnic_be16_get(&c->rc), VNIC_RC_SUCCESS);
	assert_int_equal(vnic_be64_get(&c->correlator), 0x1000 + idx);
	assert_int_equal(vnic_be16_get(&c->off_frame_data), 0);
	assert_int_equal(vnic_be32_get(&c->len), len);
	assert_int_equal(c->flags, flags | VNIC_RXC_END_FRAME);
	assert_memory_equal(h_rx_buf(e, idx), frame, len);
}

static void test_rx_flags(void **state)
{
	struct h_env *e = *state;
	static uint8_t f[6][2048];
	uint32_t len[6];
	const uint8_t both = VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD;
	unsigned int i;

	assert_int_equal(h_rx_post(e, 0, 0, 8), VNIC_H_SUCCESS);
	len[0] = mk(e, false, VNIC_IPPROTO_TCP, 1000, 1, f[0]);
	len[1] = mk(e, true, VNIC_IPPROTO_UDP, 1400, 2, f[1]);
	/* a payload bit flipped in flight: the L4 checksum no longer matches */
	len[2] = mk(e, false, VNIC_IPPROTO_TCP, 300, 3, f[2]);
	f[2][len[2] - 1] ^= 0x10;
	/* the IPv4 header checksum broken, the TCP one intact */
	len[3] = mk(e, false, VNIC_IPPROTO_TCP, 300, 4, f[3]);
	f[3][VNIC_ETH_HLEN + 10] ^= 0xff;
	/* not IP */
	len[4] = mk(e, false, VNIC_IPPROTO_UDP, 100, 5, f[4]);
	f[4][12] = 0x88;
	f[4][13] = 0xb5;
	/* does not parse (IHL 3): still delivered, flags clear */
	len[5] = mk(e, false, VNIC_IPPROTO_UDP, 100, 6, f[5]);
	f[5][VNIC_ETH_HLEN] = 0x43;
	for (i = 0; i < 6; i++)
		h_wire_inject(e, f[i], len[i]);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 6);
	check_comp(e, &comps[0], 0, f[0], len[0], both);
	check_comp(e, &comps[1], 1, f[1], len[1], both);
	check_comp(e, &comps[2], 2, f[2], len[2], VNIC_RXC_IP_CHKSUM_GOOD);
	check_comp(e, &comps[3], 3, f[3], len[3], VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	check_comp(e, &comps[4], 4, f[4], len[4], 0);
	check_comp(e, &comps[5], 5, f[5], len[5], 0);
	assert_int_equal(h_ctr(e, "rx0_frames"), 6);
	assert_int_equal(h_ctr(e, "rx0_csum_good"), 3);
	assert_int_equal(h_ctr(e, "rx0_csum_bad"), 1);
	assert_int_equal(h_ctr(e, "rx0_ip_csum_bad"), 1);
	assert_int_equal(h_ctr(e, "rx_parse_errors"), 1);
	assert_int_equal(h_ctr(e, "rx0_bufs_posted"), 8);
	assert_int_equal(h_ctr(e, "rx0_bufs_avail"), 2);
	assert_int_equal(h_ctr(e, "rx0_completions"), 6);
}

static void test_rx_no_buffer(void **state)
{
	struct h_env *e = *state;
	static uint8_t f[2048];
	uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 200, 9, f);
	unsigned int i;

	for (i = 0; i < 3; i++)
		h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 0);
	assert_int_equal(h_ctr(e, "rx0_drop_no_buffer"), 3);
	/* the wire was not held up: frames after a buffer arrives are delivered */
	assert_int_equal(h_rx_post(e, 0, 0, 1), VNIC_H_SUCCESS);
	h_wire_inject(e, f, len);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	check_comp(e, &comps[0], 0, f, len, VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	assert_int_equal(h_ctr(e, "rx0_drop_no_buffer"), 4);
}

/* One rx buffer add, by hand, sent direct. */
static void post_raw(struct h_env *e, uint64_t corr, uint64_t ioba, uint8_t map, uint32_t len)
{
	union vnic_subcrq_entry a;

	memset(&a, 0, sizeof(a));
	a.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&a.rx_add.correlator, corr);
	vnic_be32_put(&a.rx_add.ioba, (uint32_t)ioba);
	a.rx_add.map_id = map;
	vnic_be24_put(&a.rx_add.len, len);
	assert_int_equal(vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, e->rxadd[0], &a),
			 VNIC_H_SUCCESS);
}

static void test_rx_add_hostile(void **state)
{
	struct h_env *e = *state;
	static uint8_t f[2048];
	uint32_t len = mk(e, false, VNIC_IPPROTO_TCP, 500, 11, f);
	uint32_t sz = e->rx_buf_size;

	post_raw(e, 1, e->rx_ltb_ioba, 7, sz);				    /* map not in use */
	post_raw(e, 2, e->rx_ltb_ioba, 0, sz);				    /* map 0 */
	post_raw(e, 3, e->other_ioba, H_RX_MAP, sz);			    /* not in the LTB */
	post_raw(e, 4, e->rx_ltb_ioba + H_RX_LTB_SIZE - 100, H_RX_MAP, sz); /* straddles */
	post_raw(e, 5, e->rx_ltb_ioba, H_RX_MAP, sz - 1);		    /* smaller than asked */
	post_raw(e, 6, e->rx_ltb_ioba, H_RX_MAP, 0);
	post_raw(e, 0x1000 + 3, e->rx_ltb_ioba + 3 * sz, H_RX_MAP, sz); /* good */
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	/* nothing is sent back for the bad ones; the frame lands in the good one */
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	check_comp(e, &comps[0], 3, f, len, VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	assert_int_equal(h_ctr(e, "rx0_bad_rx_add_map_id"), 2);
	assert_int_equal(h_ctr(e, "rx0_bad_rx_add_ioba"), 2);
	assert_int_equal(h_ctr(e, "rx0_bad_rx_add_len"), 2);
	assert_int_equal(h_ctr(e, "rx0_bufs_posted"), 1);
}

static int setup_rss(void **state)
{
	return setup_with(state, NULL, 4, 0);
}

static void test_rx_rss(void **state)
{
	struct h_env *e = *state;
	enum { N = 48, PER_Q = 32 };
	static uint8_t f[N][2048];
	uint32_t len[N];
	unsigned int want_q[N], got[4] = {0}, next[4] = {0}, i, q, used = 0;

	for (q = 0; q < 4; q++)
		assert_int_equal(h_rx_post(e, q, q * PER_Q, PER_Q), VNIC_H_SUCCESS);
	for (i = 0; i < N; i++) {
		struct vnic_hdrs h;

		len[i] = mk(e, i % 3 == 0, i % 2 ? VNIC_IPPROTO_UDP : VNIC_IPPROTO_TCP, 64 + i,
			    (uint16_t)(1000 + 7 * i), f[i]);
		assert_int_equal(vnic_parse_frame(f[i], len[i], &h), VNIC_PARSE_OK);
		want_q[i] = vnic_rss_hash_frame(vnic_rss_default_key, f[i], &h) % 4;
		h_wire_inject(e, f[i], len[i]);
	}
	assert_true(h_run(e));
	for (q = 0; q < 4; q++) {
		got[q] = h_rx_comps(e, q, comps, MAXC);
		/* in order, each queue's buffers oldest first */
		for (i = 0; i < N; i++) {
			if (want_q[i] != q)
				continue;
			assert_true(next[q] < got[q]);
			check_comp(e, &comps[next[q]], q * PER_Q + next[q], f[i], len[i],
				   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
			next[q]++;
		}
		assert_int_equal(next[q], got[q]);
		used += got[q] > 0;
	}
	/* the flows really were spread */
	assert_true(used >= 3);
}

/* --- a wire per queue pair ------------------------------------------------------ */

/* Two queue pairs, a cable ring pair each; the driver logs in with ntx, nrx. */
static void setup_wires(unsigned int ntx, unsigned int nrx)
{
	struct vnic_dev_config dc;
	const struct vnic_cable_cfg cc = {.queues = 2};

	vnic_dev_config_default(&dc);
	dc.max_tx_queues = 2;
	dc.max_rx_queues = 2;
	h_create(&env, &dc, &cc);
	h_bringup(&env, ntx, nrx);
}

static int setup_wires_2(void **state)
{
	setup_wires(2, 2);
	*state = &env;
	return 0;
}

static int setup_wires_1(void **state)
{
	setup_wires(1, 1);
	*state = &env;
	return 0;
}

/* A frame RSS would put on rx queue q of two; returns its length. */
static uint32_t mk_rss(struct h_env *e, unsigned int q, uint8_t *out)
{
	uint16_t sport;

	for (sport = 1000;; sport++) {
		uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 100, sport, out);
		struct vnic_hdrs h;

		assert_int_equal(vnic_parse_frame(out, len, &h), VNIC_PARSE_OK);
		if (vnic_rss_hash_frame(vnic_rss_default_key, out, &h) % 2 == q)
			return len;
	}
}

static void inject_on(struct vnic_wire *w, const uint8_t *frame, uint32_t len)
{
	struct vnic_pkt *slot;

	assert_int_equal(w->ops->tx_reserve(w, &slot, 1), 1);
	memcpy(slot->data, frame, len);
	slot->len = len;
	w->ops->tx_commit(w, &slot, 1, 1);
}

static void test_rx_wire_queue(void **state)
{
	struct h_env *e = *state;
	struct vnic_wire *ring1 = vnic_cable_queue_end(e->v.cable, 1, 1);
	static uint8_t f0[2048], f1[2048];
	uint32_t len0 = mk_rss(e, 1, f0), len1 = mk_rss(e, 0, f1);

	assert_int_equal(h_rx_post(e, 0, 0, 4), VNIC_H_SUCCESS);
	assert_int_equal(h_rx_post(e, 1, 4, 4), VNIC_H_SUCCESS);
	/* each on the ring RSS would not pick: the ring decides */
	h_wire_inject(e, f0, len0);
	inject_on(ring1, f1, len1);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	check_comp(e, &comps[0], 0, f0, len0,
		   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	assert_int_equal(h_rx_comps(e, 1, comps, MAXC), 1);
	check_comp(e, &comps[0], 4, f1, len1,
		   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	assert_int_equal(h_ctr(e, "rx0_frames"), 1);
	assert_int_equal(h_ctr(e, "rx1_frames"), 1);
	assert_int_equal(h_ctr(e, "rx_drop_bad_queue"), 0);
}

/* Tx queue 1 sends on ring 1, tx queue 0 on ring 0. */
static void test_tx_wire_queue(void **state)
{
	struct h_env *e = *state;
	struct vnic_wire *ring1 = vnic_cable_queue_end(e->v.cable, 1, 1);
	struct vnic_cable_stats st0, st1;
	union vnic_subcrq_entry d;
	struct vnic_pkt *got[2];
	uint32_t c[2];
	uint16_t r[2];
	uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 300, 77, e->tx_ltb);

	h_tx_desc(e, &d, 0x51, 0, len, 0, 0);
	assert_int_equal(h_tx_send(e, 1, &d, 1), VNIC_H_SUCCESS);
	assert_true(h_run(e));
	assert_int_equal(h_tx_comps(e, 1, c, r, 2), 1);
	assert_int_equal(r[0], VNIC_RC_SUCCESS);
	vnic_cable_queue_stats(e->v.cable, 0, 0, &st0);
	vnic_cable_queue_stats(e->v.cable, 0, 1, &st1);
	assert_int_equal(st0.tx_frames, 0);
	assert_int_equal(st1.tx_frames, 1);
	assert_int_equal(ring1->ops->rx_peek(ring1, got, 2), 1);
	assert_int_equal(got[0]->len, len);
	assert_memory_equal(got[0]->data, e->tx_ltb, len);
	ring1->ops->rx_release(ring1, 1);
	/* the cable's total is the sum of its rings */
	vnic_cable_stats(e->v.cable, 0, &st0);
	assert_int_equal(st0.tx_frames, 1);
}

/* The driver logged in with one rx queue: ring 1 has no queue, and is never folded onto 0. */
static void test_rx_wire_past_queues(void **state)
{
	struct h_env *e = *state;
	struct vnic_wire *ring1 = vnic_cable_queue_end(e->v.cable, 1, 1);
	static uint8_t f[2048];
	uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 100, 5, f);

	assert_int_equal(h_rx_post(e, 0, 0, 4), VNIC_H_SUCCESS);
	inject_on(ring1, f, len);
	inject_on(ring1, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_ctr(e, "rx_drop_bad_queue"), 2);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 0);
	assert_int_equal(h_ctr(e, "rx0_frames"), 0);
	/* ring 0 still delivers */
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	check_comp(e, &comps[0], 0, f, len, VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
}

/* Layouts create refuses: queue cpus over one wire, wires that are not one per queue pair. */
static void test_wires_refused(void **state)
{
	const struct vnic_cable_cfg cc = {.queues = 3};
	struct vnic_cpu cpu[2];
	struct vnic_cable *cable;
	struct vnic_dev_config dc;
	struct vnic_dev *dev = NULL;
	struct vnic_hv *hv;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu[0], "dev", 0), 0);
	assert_int_equal(vnic_cpu_init(&cpu[1], "dev-q1", 0), 0);
	assert_int_equal(vnic_cable_create(&cable, &cc), 0);
	assert_int_equal(vnic_hv_create(&hv, VNIC_MAX_IND_DESCS, NULL), 0);
	vnic_dev_config_default(&dc);
	dc.max_tx_queues = 2;
	dc.max_rx_queues = 2;
	/* queue 1 on its own cpu, one wire: its rx queue is fed by wire 0's engine */
	dc.queue_cpu[1] = &cpu[1];
	assert_int_equal(vnic_dev_create(&dev, hv, vnic_cable_end(cable, 0), &cpu[0], &dc),
			 -EINVAL);
	/* three wires for two queue pairs */
	dc.queue_wire[1] = vnic_cable_queue_end(cable, 0, 1);
	dc.queue_wire[2] = vnic_cable_queue_end(cable, 0, 2);
	assert_int_equal(vnic_dev_create(&dev, hv, vnic_cable_end(cable, 0), &cpu[0], &dc),
			 -EINVAL);
	/* wire 0 twice */
	dc.queue_wire[2] = NULL;
	dc.queue_wire[1] = vnic_cable_end(cable, 0);
	assert_int_equal(vnic_dev_create(&dev, hv, vnic_cable_end(cable, 0), &cpu[0], &dc),
			 -EINVAL);
	assert_null(dev);
	/* no cpu took a poller from the refusals */
	assert_int_equal(cpu[0].npollers, 0);
	assert_int_equal(cpu[1].npollers, 0);
	vnic_hv_destroy(hv);
	vnic_cable_destroy(cable);
	vnic_cpu_fini(&cpu[1]);
	vnic_cpu_fini(&cpu[0]);
}

static void test_rx_link_down_forgets(void **state)
{
	struct h_env *e = *state;
	static uint8_t f[2048];
	uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 200, 21, f);

	assert_int_equal(h_rx_post(e, 0, 0, 4), VNIC_H_SUCCESS);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	assert_int_equal(h_ctr(e, "rx0_bufs_avail"), 3);
	/* two more, still in the ring when the link goes down */
	assert_int_equal(h_rx_post(e, 0, 4, 2), VNIC_H_SUCCESS);
	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "rx0_bufs_avail"), 0);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_ctr(e, "rx_drop_link_down"), 1);
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_SUCCESS);
	/* what was posted before is gone */
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 0);
	assert_int_equal(h_ctr(e, "rx0_drop_no_buffer"), 1);
	assert_int_equal(h_rx_post(e, 0, 10, 1), VNIC_H_SUCCESS);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	check_comp(e, &comps[0], 10, f, len,
		   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
}

/* The driver unmapped the memory of a buffer it posted: the buffer comes back with an error. */
static void test_rx_buffer_unmapped(void **state)
{
	struct h_env *e = *state;
	static uint8_t f[2048];
	uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 200, 22, f);

	assert_int_equal(h_rx_post(e, 0, 0, 2), VNIC_H_SUCCESS);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	assert_int_equal(vnic_hv_dma_unmap(e->hv, e->rx_ltb_ioba), 0);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	assert_int_equal(vnic_be64_get(&comps[0].correlator), 0x1001);
	assert_int_equal(vnic_be16_get(&comps[0].rc), VNIC_RC_INVALIDIOBA);
	assert_int_equal(h_ctr(e, "rx0_drop_buf_fault"), 1);
}

static int setup_jumbo_wire(void **state)
{
	struct vnic_cable_cfg cc;

	memset(&cc, 0, sizeof(cc));
	cc.mtu = 9000;
	return setup_with(state, &cc, 1, 0);
}

/* A frame larger than the buffers (the peer negotiated a larger MTU): dropped, buffer kept. */
static void test_rx_too_big(void **state)
{
	struct h_env *e = *state;
	static uint8_t big[9100], small[2048];
	uint32_t lb = mk(e, false, VNIC_IPPROTO_UDP, 4000, 31, big);
	uint32_t ls = mk(e, false, VNIC_IPPROTO_UDP, 40, 32, small);

	assert_int_equal(e->rx_buf_size, 1536);
	assert_int_equal(h_rx_post(e, 0, 0, 1), VNIC_H_SUCCESS);
	h_wire_inject(e, big, lb);
	h_wire_inject(e, small, ls);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	check_comp(e, &comps[0], 0, small, ls,
		   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	assert_int_equal(h_ctr(e, "rx0_drop_too_big"), 1);
}

static int setup_delay(void **state)
{
	struct vnic_cable_cfg cc;

	memset(&cc, 0, sizeof(cc));
	cc.delay_ns = 2000000;
	cc.rate_bps = 1000000000ull;
	return setup_with(state, &cc, 1, 0);
}

/* Frames not due yet: the poll sets its timer from rx_next_ns instead of being woken. */
static void test_rx_delayed_wire(void **state)
{
	struct h_env *e = *state;
	static uint8_t f[2048];
	uint32_t len = mk(e, true, VNIC_IPPROTO_TCP, 1200, 41, f);
	unsigned int i;

	assert_int_equal(h_rx_post(e, 0, 0, 16), VNIC_H_SUCCESS);
	for (i = 0; i < 10; i++)
		h_wire_inject(e, f, len);
	/* idle means: no schedule and no timer left, so every frame has arrived */
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 10);
	for (i = 0; i < 10; i++)
		check_comp(e, &comps[i], i, f, len,
			   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
}

static const uint8_t our_mac[6] = {0x02, 0x76, 0x6e, 0x73, 0, 5};

static int setup_filter(void **state)
{
	struct vnic_dev_config cfg;

	vnic_dev_config_default(&cfg);
	cfg.rx_filter = true;
	memcpy(cfg.mac, our_mac, 6);
	h_create(&env, &cfg, NULL);
	h_bringup(&env, 1, 1);
	*state = &env;
	return 0;
}

/*
 * A device on a shared wire takes its own unicast, broadcast and
 * multicast, and counts what it leaves to other stations.
 */
static void test_rx_filter(void **state)
{
	static const uint8_t other[6] = {0x02, 0x76, 0x6e, 0x73, 0, 6};
	static const uint8_t group[2][6] = {
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x33, 0x33, 0, 0, 0, 1},
	};
	struct h_env *e = *state;
	static uint8_t f[4][2048];
	uint32_t len[4];
	const uint8_t both = VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD;

	assert_int_equal(h_rx_post(e, 0, 0, 8), VNIC_H_SUCCESS);
	for (unsigned int i = 0; i < 4; i++)
		len[i] = mk(e, false, VNIC_IPPROTO_UDP, 200, (uint16_t)(50 + i), f[i]);
	memcpy(f[0], our_mac, 6);
	memcpy(f[1], other, 6);
	memcpy(f[2], group[0], 6);
	memcpy(f[3], group[1], 6);
	for (unsigned int i = 0; i < 4; i++)
		h_wire_inject(e, f[i], len[i]);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 3);
	check_comp(e, &comps[0], 0, f[0], len[0], both);
	check_comp(e, &comps[1], 1, f[2], len[2], both);
	check_comp(e, &comps[2], 2, f[3], len[3], both);
	assert_int_equal(h_ctr(e, "rx_filtered"), 1);
	assert_int_equal(h_ctr(e, "rx0_frames"), 3);
}

/* Off (a cable's device): a frame to any address is delivered. */
static void test_rx_no_filter(void **state)
{
	static const uint8_t other[6] = {0x02, 0x76, 0x6e, 0x73, 0, 6};
	struct h_env *e = *state;
	static uint8_t f[2048];
	uint32_t len = mk(e, false, VNIC_IPPROTO_UDP, 200, 60, f);

	assert_int_equal(h_rx_post(e, 0, 0, 8), VNIC_H_SUCCESS);
	memcpy(f, other, 6);
	h_wire_inject(e, f, len);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	assert_int_equal(h_ctr(e, "rx_filtered"), 0);
}

static int setup_small_comp(void **state)
{
	return setup_with(state, NULL, 1, 16);
}

/* The driver's rx completion ring is full: frames wait on the wire, none is lost. */
static void test_rx_completion_ring_full(void **state)
{
	struct h_env *e = *state;
	enum { N = 60 };
	static uint8_t f[N][256];
	uint32_t len[N];
	unsigned int got = 0, i;

	assert_int_equal(h_rx_post(e, 0, 0, N), VNIC_H_SUCCESS);
	for (i = 0; i < N; i++) {
		len[i] = mk(e, false, VNIC_IPPROTO_UDP, 20 + i, (uint16_t)(100 + i), f[i]);
		h_wire_inject(e, f[i], len[i]);
	}
	h_run_for(e, 1000000);
	assert_true(h_ctr(e, "rx0_comp_busy") > 0);
	while (got < N) {
		unsigned int n = h_rx_comps(e, 0, comps + got, MAXC - got);

		got += n;
		if (!n)
			h_run_for(e, 200000);
	}
	assert_true(h_run(e));
	for (i = 0; i < N; i++)
		check_comp(e, &comps[i], i, f[i], len[i],
			   VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD);
	assert_int_equal(h_ctr(e, "rx0_comp_lost"), 0);
	assert_int_equal(h_ctr(e, "rx0_drop_no_buffer"), 0);
}

/* --- large receive: a superframe from a cable with tso (docs/PROTOCOL.md section 8.5) --- */

static int setup_lro(void **state)
{
	struct vnic_cable_cfg cc = {.tso = true};

	h_create(&env, NULL, &cc);
	env.large_rx = true;
	h_bringup(&env, 1, 1);
	*state = &env;
	return 0;
}

static int setup_lro_small_comp(void **state)
{
	struct vnic_cable_cfg cc = {.tso = true};

	h_create(&env, NULL, &cc);
	env.rxcomp_entries = 8;
	env.large_rx = true;
	h_bringup(&env, 1, 1);
	*state = &env;
	return 0;
}

/* A TCP superpacket of payload bytes (mss 1400) as the sending device leaves it. */
static struct vnic_pkt *mk_super(struct h_env *e, bool v6, uint32_t payload)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = h_pkt(e);

	vnic_pktgen_flow_init(&f, v6, VNIC_IPPROTO_TCP);
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, payload, 1400), 0);
	assert_int_equal(vnic_parse_pkt(p), VNIC_PARSE_OK);
	return p;
}

/* Onto the wire as the sending device's send_super would, metadata and all. */
static void inject_super(struct h_env *e, const struct vnic_pkt *p)
{
	struct vnic_pkt *slot;

	assert_int_equal(e->peer->ops->tx_gso_max(e->peer) >= p->len, true);
	assert_int_equal(e->peer->ops->tx_reserve(e->peer, &slot, 1), 1);
	memcpy(slot->data, p->data, p->len);
	slot->len = p->len;
	slot->gso_type = p->gso_type;
	slot->gso_size = p->gso_size;
	slot->gso_segs = p->gso_segs;
	slot->l2_len = p->l2_len;
	slot->l3_len = p->l3_len;
	slot->l4_len = p->l4_len;
	e->peer->ops->tx_commit(e->peer, &slot, 1, 1);
}

/* Completions c[0..k) carry the superframe p in buffers first.., the last its metadata. */
static void check_lro(struct h_env *e, const struct vnic_rx_comp *c, unsigned int k,
		      unsigned int first, const struct vnic_pkt *p, uint8_t type)
{
	uint32_t off = 0;
	unsigned int i;

	for (i = 0; i < k; i++) {
		uint32_t len = vnic_be32_get(&c[i].len);

		assert_int_equal(vnic_be16_get(&c[i].rc), VNIC_RC_SUCCESS);
		assert_int_equal(vnic_be64_get(&c[i].correlator), 0x1000 + first + i);
		assert_int_equal(len, i + 1 < k ? e->rx_buf_size : p->len - off);
		assert_memory_equal(h_rx_buf(e, first + i), p->data + off, len);
		off += len;
		if (i + 1 < k) {
			assert_int_equal(c[i].flags, 0);
			assert_int_equal(vnic_be16_get(&c[i].lro_mss), 0);
			assert_int_equal(c[i].lro_type, 0);
		}
	}
	assert_int_equal(off, p->len);
	assert_int_equal(c[k - 1].flags, VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_END_FRAME);
	assert_int_equal(vnic_be16_get(&c[k - 1].lro_mss), p->gso_size);
	assert_int_equal(c[k - 1].lro_type, type);
}

/* Offered on a cable with tso, taken: a superframe is one large receive. */
static void test_rx_lro(void **state)
{
	struct h_env *e = *state;
	struct vnic_ip_offload ol;
	struct vnic_pkt *p4 = mk_super(e, false, 20 * 1400), *p6 = mk_super(e, true, 3 * 1000);
	unsigned int k4 = (p4->len + e->rx_buf_size - 1) / e->rx_buf_size;

	assert_int_equal(h_query_offload(e, &ol), VNIC_RC_SUCCESS);
	assert_int_equal(ol.large_rx_ipv4, 1);
	assert_int_equal(ol.large_rx_ipv6, 1);
	assert_int_equal(vnic_be32_get(&ol.max_large_rx_size), VNIC_CABLE_GSO_MAX);
	assert_int_equal(h_rx_post(e, 0, 0, 32), VNIC_H_SUCCESS);
	assert_int_equal(h_rx_post(e, 0, 32, 8), VNIC_H_SUCCESS);
	inject_super(e, p4);
	inject_super(e, p6);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), k4 + 3);
	check_lro(e, comps, k4, 0, p4, VNIC_RX_LRO_TCPV4);
	check_lro(e, comps + k4, 3, k4, p6, VNIC_RX_LRO_TCPV6);
	assert_int_equal(h_ctr(e, "rx0_lro_frames"), 2);
	assert_int_equal(h_ctr(e, "rx0_lro_bufs"), k4 + 3);
	assert_int_equal(h_ctr(e, "rx0_frames"), 2);
	assert_int_equal(h_ctr(e, "neg_offloads") >> 8 & 3, 3);
	vnic_pkt_free(p4);
	vnic_pkt_free(p6);
}

/* Not taken (ibmvnic's driver never does): the cable keeps superframes from us. */
static void test_rx_lro_not_taken(void **state)
{
	struct h_env *e = *state;
	struct vnic_cable_stats st;

	assert_int_equal(e->peer->ops->tx_gso_max(e->peer), 0);
	assert_int_equal(h_ctr(e, "neg_offloads") >> 8 & 3, 0);
	vnic_cable_stats(e->v.cable, 1, &st);
	assert_int_equal(st.tx_super, 0);
}

static int setup_lro_off(void **state)
{
	struct vnic_cable_cfg cc = {.tso = true};

	h_create(&env, NULL, &cc);
	h_bringup(&env, 1, 1);
	*state = &env;
	return 0;
}

/* Hostile GSO metadata: each row breaks one rule; the frame is dropped and counted. */
static void test_rx_lro_hostile(void **state)
{
	static const struct {
		const char *name;
		uint16_t gso_type, gso_size;
		int dl3, dl4;
	} bad[] = {
		{"v6 type on v4", VNIC_GSO_TCPV6, 1400, 0, 0},
		{"udp type on tcp", VNIC_GSO_UDP_L4, 1400, 0, 0},
		{"unknown type", 0x40, 1400, 0, 0},
		{"ecn without a type", VNIC_GSO_TCP_ECN, 1400, 0, 0},
		/* IPv4 20 + TCP 20 + 1461 = 1501: one byte over the MTU */
		{"segments over the MTU", VNIC_GSO_TCPV4, 1461, 0, 0},
		{"l3 length", VNIC_GSO_TCPV4, 1400, 4, 0},
		{"l4 length", VNIC_GSO_TCPV4, 1400, 0, -8},
	};
	struct h_env *e = *state;
	struct vnic_pkt *good = mk_super(e, false, 10 * 1400);
	unsigned int i, k = (good->len + e->rx_buf_size - 1) / e->rx_buf_size;

	assert_int_equal(h_rx_post(e, 0, 0, 16), VNIC_H_SUCCESS);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vnic_pkt *p = mk_super(e, false, 10 * 1400);

		p->gso_type = bad[i].gso_type;
		p->gso_size = bad[i].gso_size;
		p->l3_len = (uint16_t)(p->l3_len + bad[i].dl3);
		p->l4_len = (uint16_t)(p->l4_len + bad[i].dl4);
		inject_super(e, p);
		assert_true(h_run(e));
		if (h_ctr(e, "rx_drop_bad_super") != i + 1)
			fail_msg("row %u (%s) not dropped", i, bad[i].name);
		vnic_pkt_free(p);
	}
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 0);
	/* the buffers were not touched: the good one takes the first of them */
	inject_super(e, good);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), k);
	check_lro(e, comps, k, 0, good, VNIC_RX_LRO_TCPV4);
	vnic_pkt_free(good);
}

/*
 * Too few buffers: the superframe waits on the wire (a few retries) for the
 * driver to post more, then is dropped; with enough it goes.
 */
static void test_rx_lro_no_buffer(void **state)
{
	struct h_env *e = *state;
	struct vnic_pkt *p = mk_super(e, false, 10 * 1400);
	unsigned int k = (p->len + e->rx_buf_size - 1) / e->rx_buf_size;

	assert_int_equal(h_rx_post(e, 0, 0, 4), VNIC_H_SUCCESS);
	inject_super(e, p);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 0);
	assert_int_equal(h_ctr(e, "rx0_drop_no_buffer"), 1);
	assert_true(h_ctr(e, "rx0_lro_buf_waits") >= 1);
	/* the 4 are still ours: the next one takes them first */
	assert_int_equal(h_rx_post(e, 0, 4, k), VNIC_H_SUCCESS);
	inject_super(e, p);
	assert_true(h_run(e));
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), k);
	check_lro(e, comps, k, 0, p, VNIC_RX_LRO_TCPV4);
	vnic_pkt_free(p);
}

/* The driver's ring fills in the middle of one: the rest follows in order, none lost. */
static void test_rx_lro_ring_full(void **state)
{
	struct h_env *e = *state;
	struct vnic_pkt *p = mk_super(e, false, 20 * 1400);
	unsigned int k = (p->len + e->rx_buf_size - 1) / e->rx_buf_size, got = 0;

	assert_true(k > 8);
	assert_int_equal(h_rx_post(e, 0, 0, 32), VNIC_H_SUCCESS);
	inject_super(e, p);
	h_run_for(e, 1000000);
	assert_true(h_ctr(e, "rx0_comp_busy") > 0);
	while (got < k) {
		unsigned int n = h_rx_comps(e, 0, comps + got, MAXC - got);

		got += n;
		if (!n)
			h_run_for(e, 200000);
	}
	assert_true(h_run(e));
	assert_int_equal(got, k);
	check_lro(e, comps, k, 0, p, VNIC_RX_LRO_TCPV4);
	assert_int_equal(h_ctr(e, "rx0_comp_lost"), 0);
	vnic_pkt_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rx_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_filter, setup_filter, teardown),
		cmocka_unit_test_setup_teardown(test_rx_no_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_no_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_add_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_rss, setup_rss, teardown),
		cmocka_unit_test_setup_teardown(test_rx_wire_queue, setup_wires_2, teardown),
		cmocka_unit_test_setup_teardown(test_tx_wire_queue, setup_wires_2, teardown),
		cmocka_unit_test_setup_teardown(test_rx_wire_past_queues, setup_wires_1, teardown),
		cmocka_unit_test(test_wires_refused),
		cmocka_unit_test_setup_teardown(test_rx_link_down_forgets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_buffer_unmapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_too_big, setup_jumbo_wire, teardown),
		cmocka_unit_test_setup_teardown(test_rx_delayed_wire, setup_delay, teardown),
		cmocka_unit_test_setup_teardown(test_rx_completion_ring_full, setup_small_comp,
						teardown),
		cmocka_unit_test_setup_teardown(test_rx_lro, setup_lro, teardown),
		cmocka_unit_test_setup_teardown(test_rx_lro_not_taken, setup_lro_off, teardown),
		cmocka_unit_test_setup_teardown(test_rx_lro_hostile, setup_lro, teardown),
		cmocka_unit_test_setup_teardown(test_rx_lro_no_buffer, setup_lro, teardown),
		cmocka_unit_test_setup_teardown(test_rx_lro_ring_full, setup_lro_small_comp,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
