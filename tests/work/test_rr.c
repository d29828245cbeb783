// SPDX-License-Identifier: MIT
/*
 * rr over the loopback netdev, both cpus stepped by hand: transactions
 * complete with every byte checked, one latency sample per transaction, and
 * the TCP-like layer recovers from loss, reordering and corruption; across
 * the 2^32 wraps, and with what the netdev offers read at start.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "loopnet.h"
#include "work/work_int.h"	/* vnic_work_pair_set_origin */

struct rr_run {
	struct vnic_rr *rr;
	uint64_t target;
};

static bool enough(void *ctx)
{
	struct rr_run *r = ctx;
	struct vnic_work_results res;

	vnic_rr_results(r->rr, &res);
	return res.transactions >= r->target;
}

static bool quiesced(void *ctx)
{
	return vnic_rr_quiesced(((struct rr_run *)ctx)->rr);
}

/* Between create and start (NULL: nothing). */
typedef void rr_prep_fn(struct testbed *tb, struct vnic_rr *rr);

/*
 * Runs k transactions, stops, waits until quiesced; checks what must hold on
 * any path and returns the results.
 */
static void run_rr_prep(const struct loopnet_cfg *a, const struct loopnet_cfg *b,
			const struct vnic_rr_opts *o, uint64_t k, uint32_t pool_buf,
			struct vnic_work_results *res, struct loopnet_stats *lst,
			rr_prep_fn *prep)
{
	struct testbed tb;
	struct rr_run r = { .target = k };
	struct vnic_rr_opts oo = *o;

	/* A clean path must not depend on how fast this machine is: there, a
	 * timer long enough never to fire; loss tests set a short one. */
	if (!oo.tcp.rto_min_ns)
		oo.tcp.rto_min_ns = LOOPNET_NO_TIMER_RTO_MIN_NS;

	/* Superpacket-sized buffers are 64 KiB each: fewer of them. */
	testbed_init(&tb, a, b, pool_buf ? 4096 : 512, pool_buf);
	assert_int_equal(vnic_rr_create(&r.rr, &tb.ln[0]->dev, &tb.pool[0], &tb.ln[1]->dev,
					&tb.pool[1], &oo),
			 0);
	if (prep)
		prep(&tb, r.rr);
	vnic_rr_start(r.rr);
	testbed_run(&tb, enough, &r, 120);
	vnic_rr_stop(r.rr);
	testbed_run(&tb, quiesced, &r, 120);
	/* Let duplicates still in flight land (they change nothing). */
	testbed_idle(&tb);
	vnic_rr_results(r.rr, res);

	assert_true(res->transactions >= k);
	assert_int_equal(res->latency->count, res->transactions);
	assert_int_equal(res->bytes, res->transactions * (o->req_size + o->resp_size));
	assert_int_equal(res->err.bad_hdr, 0);
	assert_int_equal(res->err.no_conn, 0);
	assert_int_equal(res->err.rx_overflow, 0);
	assert_true(res->latency->min > 0);
	/* Every buffer came back: nothing leaked or stayed in flight. */
	assert_int_equal(tb.pool[0].nfree, tb.pool[0].count);
	assert_int_equal(tb.pool[1].nfree, tb.pool[1].count);
	if (lst)
		*lst = tb.ln[0]->st;
	vnic_rr_destroy(r.rr);
	res->latency = NULL;	/* it went with the workload */
	testbed_fini(&tb);
}

static void run_rr(const struct loopnet_cfg *a, const struct loopnet_cfg *b,
		   const struct vnic_rr_opts *o, uint64_t k, uint32_t pool_buf,
		   struct vnic_work_results *res, struct loopnet_stats *lst)
{
	run_rr_prep(a, b, o, k, pool_buf, res, lst, NULL);
}

static void assert_clean(const struct vnic_work_results *res)
{
	assert_int_equal(res->err.payload, 0);
	assert_int_equal(res->err.bad_csum, 0);
	assert_int_equal(res->err.dup, 0);
	assert_int_equal(res->err.ooo, 0);
	assert_int_equal(res->err.lost, 0);
	assert_int_equal(res->err.retransmits, 0);
	assert_int_equal(res->err.timeouts, 0);
}

static void test_rr_one_session(void **state)
{
	struct vnic_rr_opts o = { .sessions = 1, .req_size = 1, .resp_size = 1 };
	struct vnic_work_results res;

	(void)state;
	run_rr(NULL, NULL, &o, 3000, 2048, &res, NULL);
	assert_clean(&res);
	/* One data segment each way per transaction, nothing else: the
	 * response acknowledges the request, the next request the response;
	 * the last response gets a pure ACK. */
	assert_int_equal(res.tx_pkts, 2 * res.transactions + 1);
	assert_int_equal(res.rx_pkts, res.tx_pkts);
}

static void test_rr_fifty_sessions(void **state)
{
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM, .resolve_csum = true };
	struct vnic_rr_opts o = { .sessions = 50, .req_size = 1, .resp_size = 1 };
	struct vnic_work_results res;
	struct loopnet_stats st;

	(void)state;
	run_rr(&c, &c, &o, 20000, 2048, &res, &st);
	assert_clean(&res);
	/* xmit_more batches: far fewer doorbells than packets. */
	assert_true(st.doorbells * 2 < st.xmits);
}

static void test_rr_ipv6_partial_csum(void **state)
{
	/* CSUM offered and left PARTIAL all the way: the receiver trusts it. */
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM };
	struct vnic_rr_opts o = { .sessions = 8, .req_size = 100, .resp_size = 200 };
	struct vnic_work_results res;

	(void)state;
	o.tcp.ipv6 = true;
	run_rr(&c, &c, &o, 2000, 2048, &res, NULL);
	assert_clean(&res);
}

static void test_rr_large_messages_mss(void **state)
{
	/* Without TSO, messages go out as MSS segments. */
	struct vnic_rr_opts o = { .sessions = 4, .req_size = 5000, .resp_size = 100000 };
	struct vnic_work_results res;

	(void)state;
	run_rr(NULL, NULL, &o, 200, 2048, &res, NULL);
	assert_clean(&res);
	assert_int_equal(res.tx_segs, res.tx_pkts);	/* no superpackets */
	/* 4 + 69 data segments per transaction at MSS 1460, plus ACKs. */
	assert_true(res.tx_pkts >= res.transactions * 73);
}

static void test_rr_large_messages_tso_gro(void **state)
{
	/* TSO on the sender, segmented by the "NIC", GRO at the receiver. */
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 |
					     VNIC_NETIF_F_TSO6,
				 .resolve_csum = true,
				 .gro = true };
	struct vnic_rr_opts o = { .sessions = 4, .req_size = 5000, .resp_size = 100000 };
	struct vnic_work_results res;
	struct loopnet_stats st;

	(void)state;
	run_rr(&c, &c, &o, 200, 0, &res, &st);
	assert_clean(&res);
	assert_true(res.tx_segs > res.tx_pkts);		/* superpackets went out */
	assert_true(res.rx_segs > res.rx_pkts);		/* aggregates came in */
	assert_true(st.segmented > 0);
	o.tcp.ipv6 = true;
	run_rr(&c, &c, &o, 100, 0, &res, NULL);
	assert_clean(&res);
	assert_true(res.tx_segs > res.tx_pkts);
}

static void test_rr_loss_reorder(void **state)
{
	struct loopnet_cfg c = { .drop = 0.05, .reorder = 0.05, .seed = 7 };
	struct vnic_rr_opts o = { .sessions = 10, .req_size = 3000, .resp_size = 3000 };
	struct vnic_work_results res;

	(void)state;
	o.tcp.rto_min_ns = 1000000;
	run_rr(&c, &c, &o, 1000, 2048, &res, NULL);
	assert_int_equal(res.err.payload, 0);
	assert_int_equal(res.err.bad_csum, 0);
	assert_true(res.err.retransmits > 0);
	assert_true(res.err.timeouts > 0);
	assert_true(res.err.lost > 0);
}

/* Loses the nth data frame a host sends (counting from 1), once. */
struct lose_nth {
	unsigned int n, seen;
};

static bool lose_nth_data(void *ctx, const struct vnic_pkt *f)
{
	struct lose_nth *l = ctx;
	struct vnic_hdrs hd;

	assert_int_equal(vnic_parse_frame(f->data, f->len, &hd), VNIC_PARSE_OK);
	return hd.payload_len && ++l->seen == l->n;
}

/*
 * The last segment of a response is lost: nothing after it can show the
 * hole, so the server's tail loss probe resends it after 2 SRTT + RTO floor
 * / 32 (125 ms), well before the RTO (4 s) would. Exactly one resend, no
 * timeout; the slowest transaction is that one. (The timers are long so
 * that a loaded machine pausing the test never fires one needlessly.)
 */
static void test_rr_tail_loss_probe(void **state)
{
	/* 3000-byte responses are 3 MSS frames: the 30th is the 10th's last. */
	static struct lose_nth lose = { .n = 30 };
	struct loopnet_cfg b = { .script = lose_nth_data, .script_ctx = &lose };
	struct vnic_rr_opts o = { .sessions = 1, .req_size = 100, .resp_size = 3000 };
	struct vnic_work_results res;
	struct loopnet_stats st;
	static struct vnic_hist h;
	struct testbed tb;
	struct rr_run r = { .target = 40 };

	(void)state;
	o.tcp.rto_min_ns = 4000000000ull;
	testbed_init(&tb, NULL, &b, 4096, 2048);
	assert_int_equal(vnic_rr_create(&r.rr, &tb.ln[0]->dev, &tb.pool[0], &tb.ln[1]->dev,
					&tb.pool[1], &o),
			 0);
	vnic_rr_start(r.rr);
	testbed_run(&tb, enough, &r, 120);
	vnic_rr_stop(r.rr);
	testbed_run(&tb, quiesced, &r, 120);
	testbed_idle(&tb);
	vnic_rr_results(r.rr, &res);
	h = *res.latency;
	st = tb.ln[1]->st;
	vnic_rr_destroy(r.rr);
	testbed_fini(&tb);

	assert_int_equal(st.dropped, 1);
	assert_true(lose.seen > 30);
	assert_int_equal(res.bytes, res.transactions * 3100);
	assert_int_equal(res.err.retransmits, 1);
	assert_int_equal(res.err.probes, 1);
	assert_int_equal(res.err.timeouts + res.err.fast_retransmits, 0);
	assert_int_equal(res.err.payload + res.err.bad_csum, 0);
	/* One transaction waited for the probe, none for an RTO. */
	assert_true(h.max >= 125000000);
	assert_true(h.max < 4000000000ull);
	assert_true(vnic_hist_percentile(&h, 90) < 125000000);
}

static void test_rr_corruption(void **state)
{
	/* Checksums resolved before the damage: caught as bad checksums. */
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM, .resolve_csum = true,
				 .corrupt = 0.05, .seed = 3 };
	struct vnic_rr_opts o = { .sessions = 4, .req_size = 1000, .resp_size = 1000 };
	struct vnic_work_results res;

	(void)state;
	o.tcp.rto_min_ns = 1000000;
	run_rr(&c, &c, &o, 500, 2048, &res, NULL);
	assert_true(res.err.bad_csum > 0);
	assert_int_equal(res.err.payload, 0);
	assert_true(res.err.retransmits > 0);
	/* Left PARTIAL (trusted), the damage is caught by the pattern. */
	c.resolve_csum = false;
	run_rr(&c, &c, &o, 500, 2048, &res, NULL);
	assert_int_equal(res.err.bad_csum, 0);
	assert_true(res.err.payload > 0);
}

static void test_rr_queue_busy(void **state)
{
	/* A 4-frame ring: the queue stops all the time; nothing is lost. */
	struct loopnet_cfg c = { .ring = 4 };
	struct vnic_rr_opts o = { .sessions = 50, .req_size = 1, .resp_size = 1 };
	struct vnic_work_results res;

	(void)state;
	run_rr(&c, &c, &o, 5000, 2048, &res, NULL);
	assert_clean(&res);
	assert_true(res.err.tx_busy > 0);
}

/*
 * Stream offsets cross 2^32 about 2 transactions in (responses) and 50 in
 * (requests); sequence numbers wrap about 30 in (responses) and 87 in
 * (requests).
 */
static void origin_near_4g(struct testbed *tb, struct vnic_rr *rr)
{
	const uint64_t off = (1ull << 32) - 150001;

	(void)tb;
	vnic_work_pair_set_origin(vnic_rr_pair(rr), (uint32_t)(0xfffc0000u - off),
				  (uint32_t)(0xffe00000u - off), off);
}

static void test_rr_wrap(void **state)
{
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4,
				 .resolve_csum = true,
				 .gro = true };
	struct vnic_rr_opts o = { .sessions = 3, .req_size = 3001, .resp_size = 70001 };
	struct vnic_work_results res;

	(void)state;
	/* 150 transactions, past all four wraps on every session. */
	run_rr_prep(&c, &c, &o, 150, 0, &res, NULL, origin_near_4g);
	assert_clean(&res);
	run_rr_prep(NULL, NULL, &o, 150, 2048, &res, NULL, origin_near_4g);
	assert_clean(&res);
}

/* What a driver learns when it opens, after create. */
static void offloads_at_start(struct testbed *tb, struct vnic_rr *rr)
{
	unsigned int i;

	(void)rr;
	for (i = 0; i < 2; i++) {
		tb->ln[i]->dev.features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4;
		tb->ln[i]->cfg.peer_gso = true;
	}
}

static void test_rr_netdev_at_start(void **state)
{
	struct vnic_rr_opts o = { .sessions = 4, .req_size = 5000, .resp_size = 100000 };
	struct vnic_work_results res;
	struct loopnet_stats st;

	(void)state;
	run_rr_prep(NULL, NULL, &o, 100, 0, &res, &st, offloads_at_start);
	assert_clean(&res);
	/* Requests of 4 segments, responses of 2 superpackets. */
	assert_true(res.tx_segs > 10 * res.tx_pkts / 4);
	assert_true(st.gso_pkts >= res.transactions);
	assert_int_equal(st.partial, st.xmits);
}

static void test_rr_bad_setup(void **state)
{
	struct vnic_rr_opts o = { .sessions = 1 };
	struct testbed tb;
	struct vnic_rr *rr;

	(void)state;
	testbed_init(&tb, NULL, NULL, 16, 512);
	/* Buffers too small for one MTU frame. */
	assert_int_equal(vnic_rr_create(&rr, &tb.ln[0]->dev, &tb.pool[0], &tb.ln[1]->dev,
					&tb.pool[1], &o),
			 -EINVAL);
	assert_null(rr);
	/* One netdev on both sides. */
	assert_int_equal(vnic_rr_create(&rr, &tb.ln[0]->dev, &tb.pool[0], &tb.ln[0]->dev,
					&tb.pool[1], &o),
			 -EINVAL);
	o.sessions = VNIC_WORK_MAX_CONNS + 1;
	assert_int_equal(vnic_rr_create(&rr, &tb.ln[0]->dev, &tb.pool[0], &tb.ln[1]->dev,
					&tb.pool[1], &o),
			 -EINVAL);
	o.sessions = 1;
	o.tcp.window = VNIC_WORK_MAX_WINDOW + 1;
	assert_int_equal(vnic_rr_create(&rr, &tb.ln[0]->dev, &tb.pool[0], &tb.ln[1]->dev,
					&tb.pool[1], &o),
			 -EINVAL);
	assert_null(tb.ln[0]->dev.host);
	testbed_fini(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rr_one_session),
		cmocka_unit_test(test_rr_fifty_sessions),
		cmocka_unit_test(test_rr_ipv6_partial_csum),
		cmocka_unit_test(test_rr_large_messages_mss),
		cmocka_unit_test(test_rr_large_messages_tso_gro),
		cmocka_unit_test(test_rr_loss_reorder),
		cmocka_unit_test(test_rr_tail_loss_probe),
		cmocka_unit_test(test_rr_corruption),
		cmocka_unit_test(test_rr_queue_busy),
		cmocka_unit_test(test_rr_wrap),
		cmocka_unit_test(test_rr_netdev_at_start),
		cmocka_unit_test(test_rr_bad_setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
