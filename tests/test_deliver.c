// SPDX-License-Identifier: MIT
/*
 * Delivery batching: for each mode, when the callback runs, with what, in
 * which order, and what the counters say. A packet's identity is its priv
 * field, set to its arrival number, so order and completeness are checked
 * against the arrival sequence rather than against constants.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"
#include "pktgen.h"

enum {
	HEADROOM = 128,
	RX_BUF = 2048,
	RX_COUNT = 512,
	AGG_BUF = VNIC_PKT_MAX_LEN + HEADROOM,
	AGG_COUNT = 16,
	MAX_CALLS = 512,
	MAX_PKTS = 1024,
	MSS = 1000,
};

struct call {
	unsigned int n;	    /* packets in this callback */
	unsigned int first; /* index of its first packet in env.pkts */
	unsigned int segs;
};

struct env {
	struct vnic_pkt_pool rx, agg;
	struct vnic_deliver d;
	struct call calls[MAX_CALLS];
	unsigned int ncalls;
	struct vnic_pkt *pkts[MAX_PKTS]; /* everything delivered, in order */
	unsigned int npkts;
	uint32_t next_id;
};

static unsigned int segs_of(const struct vnic_pkt *p)
{
	return p->gso_type ? p->gso_segs : 1;
}

static void deliver(void *ctx, struct vnic_pkt **pkts, unsigned int n)
{
	struct env *e = ctx;
	struct call *c;

	assert_true(n > 0 && n <= VNIC_DELIVER_MAX_BATCH);
	assert_true(e->ncalls < MAX_CALLS && e->npkts + n <= MAX_PKTS);
	c = &e->calls[e->ncalls++];
	c->n = n;
	c->first = e->npkts;
	c->segs = 0;
	for (unsigned int i = 0; i < n; i++) {
		c->segs += segs_of(pkts[i]);
		e->pkts[e->npkts++] = pkts[i];
	}
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	assert_int_equal(vnic_pkt_pool_init(&e->rx, RX_COUNT, RX_BUF, HEADROOM), 0);
	assert_int_equal(vnic_pkt_pool_init(&e->agg, AGG_COUNT, AGG_BUF, HEADROOM), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	vnic_deliver_flush(&e->d);
	for (unsigned int i = 0; i < e->npkts; i++)
		vnic_pkt_free(e->pkts[i]);
	assert_int_equal(e->rx.nfree, e->rx.count);
	assert_int_equal(e->agg.nfree, e->agg.count);
	vnic_pkt_pool_fini(&e->rx);
	vnic_pkt_pool_fini(&e->agg);
	free(e);
	return 0;
}

static void init(struct env *e, enum vnic_deliver_mode mode, unsigned int batch)
{
	assert_int_equal(vnic_deliver_init(&e->d, mode, batch, &e->agg, deliver, e), 0);
}

/* A UDP packet: never merged by GRO, one segment. */
static struct vnic_pkt *udp_pkt(struct env *e)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = vnic_pkt_alloc(&e->rx);

	assert_non_null(p);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	assert_int_equal(vnic_pktgen_build(p, &f, 0, 100), 0);
	p->priv = e->next_id++;
	return p;
}

/* A superpacket of segs segments, as a TSO peer might send it through. */
static struct vnic_pkt *gso_pkt(struct env *e, uint16_t segs)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = vnic_pkt_alloc(&e->agg);

	assert_non_null(p);
	vnic_pktgen_flow_init(&f, true, VNIC_IPPROTO_TCP);
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, segs * 100u, 100), 0);
	assert_int_equal(p->gso_segs, segs);
	p->priv = e->next_id++;
	return p;
}

struct stream {
	struct vnic_pktgen_flow f;
	uint32_t off;
};

static void stream_init(struct stream *s, uint16_t sport, uint32_t hash)
{
	vnic_pktgen_flow_init(&s->f, false, VNIC_IPPROTO_TCP);
	s->f.sport = sport;
	s->off = 0;
	s->f.seed = hash; /* reuse: the hash names the flow */
}

static struct vnic_pkt *tcp_seg(struct env *e, struct stream *s, uint32_t len, uint8_t flags)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&e->rx);
	uint8_t saved = s->f.tcp_flags;

	assert_non_null(p);
	s->f.tcp_flags |= flags;
	assert_int_equal(vnic_pktgen_build(p, &s->f, s->off, len), 0);
	s->f.tcp_flags = saved;
	p->hash = s->f.seed;
	p->priv = e->next_id++;
	s->off += len;
	s->f.seq += len;
	s->f.ip_id++;
	return p;
}

/* Delivered packets carry priv 0, 1, 2, ... in order. */
static void assert_in_arrival_order(const struct env *e)
{
	for (unsigned int i = 0; i < e->npkts; i++)
		assert_int_equal(e->pkts[i]->priv, i);
}

static void assert_stats(const struct env *e)
{
	uint64_t segs = 0;

	for (unsigned int i = 0; i < e->npkts; i++)
		segs += segs_of(e->pkts[i]);
	assert_int_equal(e->d.stats.packets, e->npkts);
	assert_int_equal(e->d.stats.segments, segs);
	assert_int_equal(e->d.stats.batches, e->ncalls);
}

/* ---------------------------------------------------------------------------
 * Setup and names
 * ------------------------------------------------------------------------- */

static void test_init_rejects_bad_arguments(void **state)
{
	struct env *e = *state;

	assert_int_equal(vnic_deliver_init(&e->d, VNIC_DELIVER_LIST, VNIC_DELIVER_MAX_BATCH + 1,
					   NULL, deliver, e),
			 -EINVAL);
	assert_int_equal(vnic_deliver_init(&e->d, (enum vnic_deliver_mode)3, 8, NULL, deliver, e),
			 -EINVAL);
	assert_int_equal(vnic_deliver_init(&e->d, VNIC_DELIVER_GRO, 8, NULL, NULL, e), -EINVAL);
	assert_int_equal(vnic_deliver_init(&e->d, VNIC_DELIVER_LIST, 0, NULL, deliver, e), 0);
	assert_int_equal(e->d.batch, VNIC_DELIVER_DEFAULT_BATCH);
	assert_int_equal(vnic_deliver_init(&e->d, VNIC_DELIVER_LIST, VNIC_DELIVER_MAX_BATCH, NULL,
					   deliver, e),
			 0);
	assert_int_equal(e->d.batch, VNIC_DELIVER_MAX_BATCH);
}

static void test_mode_names_round_trip(void **state)
{
	static const enum vnic_deliver_mode modes[] = {
		VNIC_DELIVER_LIST,
		VNIC_DELIVER_GRO,
		VNIC_DELIVER_GRO_LIST,
	};
	enum vnic_deliver_mode m = VNIC_DELIVER_GRO;

	(void)state;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		enum vnic_deliver_mode back = (enum vnic_deliver_mode)99;

		assert_int_equal(vnic_deliver_mode_parse(vnic_deliver_mode_name(modes[i]), &back),
				 0);
		assert_int_equal(back, modes[i]);
	}
	assert_string_equal(vnic_deliver_mode_name(VNIC_DELIVER_GRO_LIST), "gro-list");
	assert_string_equal(vnic_deliver_mode_name((enum vnic_deliver_mode)7), "unknown");
	assert_int_equal(vnic_deliver_mode_parse("GRO", &m), -EINVAL);
	assert_int_equal(vnic_deliver_mode_parse("gro-", &m), -EINVAL);
	assert_int_equal(vnic_deliver_mode_parse("", &m), -EINVAL);
	assert_int_equal(vnic_deliver_mode_parse(NULL, &m), -EINVAL);
	assert_int_equal(m, VNIC_DELIVER_GRO);
}

/* ---------------------------------------------------------------------------
 * LIST
 * ------------------------------------------------------------------------- */

/* Full batches as they fill, the remainder at the end of the poll. */
static void list_batches(struct env *e, unsigned int batch, unsigned int npkts)
{
	unsigned int b = batch ? batch : VNIC_DELIVER_DEFAULT_BATCH;

	init(e, VNIC_DELIVER_LIST, batch);
	for (unsigned int i = 0; i < npkts; i++) {
		vnic_deliver_rx(&e->d, udp_pkt(e));
		assert_int_equal(e->ncalls, (i + 1) / b);
	}
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, (npkts + b - 1) / b);
	for (unsigned int c = 0; c < e->ncalls; c++)
		assert_int_equal(e->calls[c].n, c + 1 < e->ncalls ? b : npkts - c * b);
	assert_int_equal(e->npkts, npkts);
	assert_in_arrival_order(e);
	assert_stats(e);
	/* Nothing pending: a second flush calls nobody. */
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, (npkts + b - 1) / b);
}

static void test_list_default_batch(void **state)
{
	list_batches(*state, 0, 21);
}

static void test_list_batch_1(void **state)
{
	list_batches(*state, 1, 5);
}

static void test_list_batch_max(void **state)
{
	list_batches(*state, VNIC_DELIVER_MAX_BATCH, 150);
}

static void test_list_exact_multiple(void **state)
{
	list_batches(*state, 5, 20);
}

/* A superpacket of N segments counts N toward the batch. */
static void test_list_counts_segments(void **state)
{
	struct env *e = *state;

	init(e, VNIC_DELIVER_LIST, 8);
	vnic_deliver_rx(&e->d, gso_pkt(e, 3));
	vnic_deliver_rx(&e->d, gso_pkt(e, 3));
	assert_int_equal(e->ncalls, 0);
	vnic_deliver_rx(&e->d, udp_pkt(e));
	assert_int_equal(e->ncalls, 0);
	vnic_deliver_rx(&e->d, udp_pkt(e)); /* 3 + 3 + 1 + 1 = 8 */
	assert_int_equal(e->ncalls, 1);
	assert_int_equal(e->calls[0].n, 4);
	assert_int_equal(e->calls[0].segs, 8);
	vnic_deliver_rx(&e->d, gso_pkt(e, 10)); /* alone over the batch */
	assert_int_equal(e->ncalls, 2);
	assert_int_equal(e->calls[1].n, 1);
	vnic_deliver_rx(&e->d, udp_pkt(e));
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, 3);
	assert_int_equal(e->calls[2].n, 1);
	assert_in_arrival_order(e);
	assert_stats(e);
	assert_int_equal(e->d.stats.segments, 3 + 3 + 1 + 1 + 10 + 1);
}

/* LIST never merges: TCP segments of one flow go up one by one. */
static void test_list_does_not_merge(void **state)
{
	struct env *e = *state;
	struct stream s;

	init(e, VNIC_DELIVER_LIST, 4);
	stream_init(&s, 1, 7);
	for (int i = 0; i < 6; i++)
		vnic_deliver_rx(&e->d, tcp_seg(e, &s, MSS, 0));
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->npkts, 6);
	assert_int_equal(e->ncalls, 2);
	assert_int_equal(e->d.gro.stats.received, 0);
	assert_in_arrival_order(e);
	assert_stats(e);
}

/* ---------------------------------------------------------------------------
 * GRO
 * ------------------------------------------------------------------------- */

/* Each GRO result goes up at once, alone; merged segments only at the end. */
static void test_gro_delivers_each_result_at_once(void **state)
{
	struct env *e = *state;
	struct stream s;

	init(e, VNIC_DELIVER_GRO, 8);
	stream_init(&s, 1, 7);
	for (int i = 0; i < 10; i++)
		vnic_deliver_rx(&e->d, tcp_seg(e, &s, MSS, 0));
	assert_int_equal(e->ncalls, 0);
	vnic_deliver_rx(&e->d, udp_pkt(e));
	assert_int_equal(e->ncalls, 1);
	assert_int_equal(e->calls[0].n, 1);
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, 2);
	assert_int_equal(e->calls[1].n, 1);
	assert_int_equal(e->calls[1].segs, 10);
	assert_int_equal(e->pkts[1]->gso_segs, 10);
	assert_int_equal(e->pkts[1]->priv, 0); /* the aggregate is its first segment */
	assert_stats(e);
	assert_int_equal(e->d.stats.segments, 11);
	assert_int_equal(e->d.gro.stats.merged, 9);
}

/* A PSH completes an aggregate inside the poll; it is delivered right then. */
static void test_gro_psh_delivers_inside_poll(void **state)
{
	struct env *e = *state;
	struct stream s;

	init(e, VNIC_DELIVER_GRO, 8);
	stream_init(&s, 1, 7);
	for (int i = 0; i < 3; i++)
		vnic_deliver_rx(&e->d, tcp_seg(e, &s, MSS, 0));
	vnic_deliver_rx(&e->d, tcp_seg(e, &s, MSS, VNIC_TCP_PSH));
	assert_int_equal(e->ncalls, 1);
	assert_int_equal(e->calls[0].segs, 4);
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, 1);
	assert_stats(e);
}

/* ---------------------------------------------------------------------------
 * GRO_LIST
 * ------------------------------------------------------------------------- */

/* Aggregates of 4 count 4: two of them fill a batch of 8. */
static void test_gro_list_batches_by_segments(void **state)
{
	struct env *e = *state;
	struct stream s[3];

	init(e, VNIC_DELIVER_GRO_LIST, 8);
	for (int f = 0; f < 3; f++)
		stream_init(&s[f], (uint16_t)(100 + f), (uint32_t)f);
	for (int f = 0; f < 3; f++) {
		for (int i = 0; i < 3; i++)
			vnic_deliver_rx(&e->d, tcp_seg(e, &s[f], MSS, 0));
		vnic_deliver_rx(&e->d, tcp_seg(e, &s[f], MSS, VNIC_TCP_PSH));
		assert_int_equal(e->ncalls, f >= 1 ? 1 : 0);
	}
	assert_int_equal(e->calls[0].n, 2);
	assert_int_equal(e->calls[0].segs, 8);
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, 2);
	assert_int_equal(e->calls[1].n, 1);
	assert_int_equal(e->calls[1].segs, 4);
	for (unsigned int i = 0; i < e->npkts; i++)
		assert_int_equal(e->pkts[i]->priv, 4 * i);
	assert_stats(e);
	assert_int_equal(e->d.stats.segments, 12);
}

/* Pass-through packets are batched too; nothing is delivered before it is due. */
static void test_gro_list_batches_pass_through(void **state)
{
	struct env *e = *state;

	init(e, VNIC_DELIVER_GRO_LIST, 3);
	for (int i = 0; i < 7; i++)
		vnic_deliver_rx(&e->d, udp_pkt(e));
	assert_int_equal(e->ncalls, 2);
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, 3);
	assert_int_equal(e->calls[2].n, 1);
	assert_int_equal(e->d.gro.stats.normal, 7);
	assert_in_arrival_order(e);
	assert_stats(e);
}

/*
 * A flow's pure ACK arriving while its data is held goes up after the data,
 * and the end of the poll flushes GRO before the list.
 */
static void test_gro_list_keeps_flow_order(void **state)
{
	struct env *e = *state;
	struct stream a, b;

	init(e, VNIC_DELIVER_GRO_LIST, VNIC_DELIVER_MAX_BATCH);
	stream_init(&a, 1, 5);
	stream_init(&b, 2, 13);
	vnic_deliver_rx(&e->d, tcp_seg(e, &a, MSS, 0)); /* 0: held */
	vnic_deliver_rx(&e->d, tcp_seg(e, &b, MSS, 0)); /* 1: held */
	vnic_deliver_rx(&e->d, tcp_seg(e, &a, MSS, 0)); /* 2: merged into 0 */
	vnic_deliver_rx(&e->d, tcp_seg(e, &a, 0, 0));	/* 3: pure ACK, completes 0 first */
	vnic_deliver_rx(&e->d, udp_pkt(e));		/* 4: passes */
	vnic_deliver_rx(&e->d, tcp_seg(e, &b, MSS, 0)); /* 5: merged into 1 */
	assert_int_equal(e->ncalls, 0);
	vnic_deliver_flush(&e->d);
	assert_int_equal(e->ncalls, 1);
	assert_int_equal(e->calls[0].n, 4);
	assert_int_equal(e->pkts[0]->priv, 0);
	assert_int_equal(e->pkts[0]->gso_segs, 2);
	assert_int_equal(e->pkts[1]->priv, 3);
	assert_int_equal(e->pkts[2]->priv, 4);
	assert_int_equal(e->pkts[3]->priv, 1);
	assert_int_equal(e->pkts[3]->gso_segs, 2);
	assert_stats(e);
	assert_int_equal(e->d.stats.segments, 6);
}

/* The same traffic in each mode delivers the same bytes, only grouped differently. */
static void test_modes_deliver_same_payload(void **state)
{
	struct env *e = *state;
	static const enum vnic_deliver_mode modes[] = {
		VNIC_DELIVER_LIST,
		VNIC_DELIVER_GRO,
		VNIC_DELIVER_GRO_LIST,
	};
	uint64_t payload[3];

	for (size_t m = 0; m < 3; m++) {
		struct stream s[4];

		init(e, modes[m], 0);
		for (int f = 0; f < 4; f++)
			stream_init(&s[f], (uint16_t)(300 + f), (uint32_t)(f * 8 + 1));
		for (int i = 0; i < 40; i++)
			vnic_deliver_rx(&e->d, tcp_seg(e, &s[i % 4], MSS - (i == 37 ? 10 : 0), 0));
		vnic_deliver_flush(&e->d);
		payload[m] = 0;
		for (unsigned int i = 0; i < e->npkts; i++) {
			const struct vnic_pkt *p = e->pkts[i];

			payload[m] += p->len - (p->l2_len + p->l3_len + p->l4_len);
			vnic_pkt_free(e->pkts[i]);
		}
		assert_int_equal(e->d.stats.segments, 40);
		e->npkts = 0;
		e->ncalls = 0;
		e->next_id = 0;
	}
	assert_int_equal(payload[0], 40 * MSS - 10);
	assert_int_equal(payload[1], payload[0]);
	assert_int_equal(payload[2], payload[0]);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init_rejects_bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode_names_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_default_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_batch_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_batch_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_exact_multiple, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_counts_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_does_not_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gro_delivers_each_result_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gro_psh_delivers_inside_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gro_list_batches_by_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gro_list_batches_pass_through, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gro_list_keeps_flow_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modes_deliver_same_payload, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
