// SPDX-License-Identifier: MIT
/*
 * stream over the loopback netdev, both cpus stepped by hand: every byte of
 * every flow delivered in order and checked, with and without TSO and GRO,
 * through loss and reordering, and never more than the TSQ budget between
 * xmit and tx_done; across the 2^32 wraps of sequence numbers and of stream
 * offsets; with what the netdev offers read at start, not at create.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "loopnet.h"
#include "work/work_int.h"	/* vnic_work_pair_set_origin */

struct st_run {
	struct vnic_stream *st;
	unsigned int flows;
	uint64_t target;	/* per flow */
};

static bool all_delivered(void *ctx)
{
	struct st_run *r = ctx;
	unsigned int i;

	for (i = 0; i < r->flows; i++)
		if (vnic_stream_flow_bytes(r->st, i) < r->target)
			return false;
	return true;
}

static bool quiesced(void *ctx)
{
	return vnic_stream_quiesced(((struct st_run *)ctx)->st);
}

static void setup(struct testbed *tb, struct st_run *r, const struct loopnet_cfg *a,
		  const struct loopnet_cfg *b, const struct vnic_stream_opts *o, bool big)
{
	struct vnic_stream_opts oo = *o;

	/* A clean path must not depend on how fast this machine is: there, a
	 * timer long enough never to fire; loss tests set a short one. */
	if (!oo.tcp.rto_min_ns)
		oo.tcp.rto_min_ns = LOOPNET_NO_TIMER_RTO_MIN_NS;
	memset(r, 0, sizeof(*r));
	r->flows = o->flows ? o->flows : 1;
	r->target = o->bytes;
	testbed_init(tb, a, b, big ? 512 : 4096, big ? 0 : 2048);
	assert_int_equal(vnic_stream_create(&r->st, &tb->ln[0]->dev, &tb->pool[0], &tb->ln[1]->dev,
					    &tb->pool[1], &oo),
			 0);
}

/* Stops, waits for quiescence and checks what holds on any path. */
static void finish(struct testbed *tb, struct st_run *r, struct vnic_work_results *res)
{
	unsigned int i;

	vnic_stream_stop(r->st);
	testbed_run(tb, quiesced, r, 120);
	testbed_idle(tb);
	vnic_stream_results(r->st, res);
	for (i = 0; i < r->flows; i++)
		if (r->target)
			assert_int_equal(vnic_stream_flow_bytes(r->st, i), r->target);
	assert_int_equal(res->err.bad_hdr, 0);
	assert_int_equal(res->err.no_conn, 0);
	assert_int_equal(res->err.rx_overflow, 0);
	assert_int_equal(res->transactions, 0);
	assert_int_equal(tb->pool[0].nfree, tb->pool[0].count);
	assert_int_equal(tb->pool[1].nfree, tb->pool[1].count);
	vnic_stream_destroy(r->st);
	testbed_fini(tb);
}

static void run_stream(const struct loopnet_cfg *a, const struct loopnet_cfg *b,
		       const struct vnic_stream_opts *o, bool big, struct vnic_work_results *res)
{
	struct testbed tb;
	struct st_run r;

	setup(&tb, &r, a, b, o, big);
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	finish(&tb, &r, res);
	assert_int_equal(res->bytes, r.flows * r.target);
}

static void assert_clean(const struct vnic_work_results *res)
{
	assert_int_equal(res->err.payload, 0);
	assert_int_equal(res->err.bad_csum, 0);
	assert_int_equal(res->err.dup, 0);
	assert_int_equal(res->err.ooo, 0);
	assert_int_equal(res->err.retransmits, 0);
	assert_int_equal(res->err.timeouts, 0);
}

static void test_stream_one_flow(void **state)
{
	struct vnic_stream_opts o = { .flows = 1, .bytes = 4 << 20 };
	struct vnic_work_results res;

	(void)state;
	run_stream(NULL, NULL, &o, false, &res);
	assert_clean(&res);
	assert_int_equal(res.tx_segs, res.tx_pkts);
	/* Data in MSS frames, and ACKs far fewer than data frames. */
	assert_true(res.tx_pkts >= (4u << 20) / 1460);
	assert_true(res.tx_pkts < (4u << 20) / 1460 * 2);
}

static void test_stream_four_flows_tso(void **state)
{
	/* Superpackets handed to the peer whole, as a veth with GRO would. */
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4,
				 .peer_gso = true };
	struct vnic_stream_opts o = { .flows = 4, .bytes = 8 << 20 };
	struct vnic_work_results res;

	(void)state;
	run_stream(&c, &c, &o, true, &res);
	assert_clean(&res);
	assert_true(res.tx_segs > 20 * res.tx_pkts / 2);	/* mostly 64 KiB */
	assert_true(res.rx_segs > res.rx_pkts);
}

static void test_stream_four_flows_segmented_gro(void **state)
{
	/* TSO segmented by the "NIC", checksums resolved, GRO at the receiver. */
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 |
					     VNIC_NETIF_F_TSO6,
				 .resolve_csum = true,
				 .gro = true };
	struct vnic_stream_opts o = { .flows = 4, .bytes = 4 << 20 };
	struct vnic_work_results res;
	struct loopnet_cfg plain = { .features = VNIC_NETIF_F_CSUM, .gro = true };

	(void)state;
	run_stream(&c, &plain, &o, true, &res);
	assert_clean(&res);
	assert_true(res.tx_segs > res.tx_pkts);
	assert_true(res.rx_segs > res.rx_pkts);
	o.tcp.ipv6 = true;
	run_stream(&c, &plain, &o, true, &res);
	assert_clean(&res);
	assert_true(res.rx_segs > res.rx_pkts);
}

static void test_stream_loss_reorder(void **state)
{
	struct loopnet_cfg c = { .drop = 0.05, .reorder = 0.05, .seed = 11 };
	struct vnic_stream_opts o = { .flows = 2, .bytes = 1 << 20 };
	struct vnic_work_results res;

	(void)state;
	o.tcp.rto_min_ns = 1000000;
	o.tcp.window = 64 << 10;
	run_stream(&c, &c, &o, false, &res);
	assert_int_equal(res.err.payload, 0);
	assert_int_equal(res.err.bad_csum, 0);
	assert_true(res.err.retransmits > 0);
	assert_true(res.err.lost > 0);
	assert_true(res.err.ooo > 0);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* What a scripted link saw of one flow's data frames (MSS frames). */
struct seen {
	uint32_t iss;		/* the sender's: sequence numbers to offsets */
	int64_t drop;		/* the frame at this MSS slot is lost, once */
	uint32_t sends[4096];	/* times each MSS slot went on the wire */
};

static bool lose_one(void *ctx, const struct vnic_pkt *f)
{
	struct seen *s = ctx;
	struct vnic_hdrs hd;
	uint64_t off;

	assert_int_equal(vnic_parse_frame(f->data, f->len, &hd), VNIC_PARSE_OK);
	if (!hd.payload_len)
		return false;
	off = (uint32_t)(rd32(f->data + hd.l4_off + 4) - s->iss);
	assert_int_equal(off % 1460, 0);
	assert_true(off / 1460 < 4096);
	if (s->sends[off / 1460]++ || (int64_t)(off / 1460) != s->drop)
		return false;
	return true;
}

/*
 * One data segment lost in the middle of a flow: the SACKs of the segments
 * after it show the hole, and exactly that segment is sent again, once,
 * with no timer; every other segment goes on the wire once.
 */
static void test_stream_one_loss_one_resend(void **state)
{
	static struct seen seen = { .drop = 100 };
	struct loopnet_cfg a = { .script = lose_one, .script_ctx = &seen };
	struct vnic_stream_opts o = { .flows = 1, .bytes = 2 << 20 };
	struct vnic_work_results res;
	struct testbed tb;
	struct st_run r;
	unsigned int i, slots = (2u << 20) / 1460 + 1;

	(void)state;
	setup(&tb, &r, &a, NULL, &o, false);
	seen.iss = vnic_stream_pair(r.st)->a.conns[0].iss;
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	finish(&tb, &r, &res);
	for (i = 0; i < slots; i++)
		if (seen.sends[i] != (i == 100 ? 2u : 1u))
			fail_msg("slot %u sent %u times", i, seen.sends[i]);
	assert_int_equal(res.err.retransmits, 1);
	assert_int_equal(res.err.fast_retransmits, 1);
	assert_int_equal(res.err.sack_recovered, 1);
	assert_int_equal(res.err.timeouts + res.err.probes + res.err.spurious, 0);
	assert_int_equal(res.err.lost, 1);
	assert_int_equal(res.err.dup + res.err.ooo_dropped, 0);
	assert_true(res.err.ooo >= 3);
}

/*
 * Reordering alone (neighbours swapped, both ways, 2% of frames; one flow,
 * so that a swap is always within it): every swap shows a gap, filled by
 * the late segment, and nothing is resent.
 */
static void test_stream_reordering_no_resend(void **state)
{
	struct loopnet_cfg c = { .reorder = 0.02, .seed = 3 };
	struct vnic_stream_opts o = { .flows = 1, .bytes = 8 << 20 };
	struct vnic_work_results res;
	uint64_t swapped;
	struct testbed tb;
	struct st_run r;

	(void)state;
	setup(&tb, &r, &c, &c, &o, false);
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	swapped = tb.ln[0]->st.reordered;
	finish(&tb, &r, &res);
	assert_true(swapped > 50);
	/* A gap per swap, but for a frame swapped twice in a row. */
	assert_true(res.err.lost <= swapped && res.err.lost > swapped * 9 / 10);
	assert_true(res.err.ooo >= swapped);
	assert_int_equal(res.err.retransmits, 0);
	assert_int_equal(res.err.timeouts + res.err.spurious + res.err.dup, 0);
}

static void test_stream_until_stopped(void **state)
{
	/* No byte count: runs until stopped, then everything sent arrives. */
	struct vnic_stream_opts o = { .flows = 3 };
	struct vnic_work_results res;
	struct testbed tb;
	struct st_run r;
	uint64_t sum = 0;
	unsigned int i;

	(void)state;
	setup(&tb, &r, NULL, NULL, &o, false);
	r.target = 1 << 20;
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	r.target = 0;
	vnic_stream_stop(r.st);
	testbed_run(&tb, quiesced, &r, 120);
	vnic_stream_results(r.st, &res);
	for (i = 0; i < r.flows; i++)
		sum += vnic_stream_flow_bytes(r.st, i);
	assert_int_equal(res.bytes, sum);
	assert_true(sum >= 3u << 20);
	assert_clean(&res);
	finish(&tb, &r, &res);
}

/* The flow must never have more than the budget between xmit and tx_done. */
static void tsq_case(bool tso, uint32_t budget)
{
	struct loopnet_cfg a = { .hold_tx_done = true };
	struct vnic_stream_opts o = { .flows = 1, .bytes = 2 << 20 };
	struct vnic_work_results res;
	unsigned int rounds = 0;
	struct testbed tb;
	struct st_run r;
	/* One packet may always be out, whatever the budget. */
	uint32_t limit = budget < 1514 ? 1514 : budget;

	if (tso) {
		a.features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4;
		a.peer_gso = true;
	}
	o.tcp.tsq_bytes = budget;
	setup(&tb, &r, &a, NULL, &o, tso);
	vnic_stream_start(r.st);
	while (vnic_stream_flow_bytes(r.st, 0) < o.bytes) {
		uint64_t unsent;

		testbed_idle(&tb);
		assert_true(tb.ln[0]->held_bytes <= limit);
		/* While there is more to send than the budget, the flow filled
		 * it and stopped: TSQ, not the window, held it back. */
		unsent = o.bytes - vnic_stream_flow_bytes(r.st, 0);
		if (unsent > budget)
			assert_true(tb.ln[0]->held_bytes > budget / 2);
		loopnet_release_tx_done(tb.ln[0], 0);
		assert_true(++rounds < 100000);
	}
	loopnet_release_tx_done(tb.ln[0], 0);
	vnic_stream_results(r.st, &res);
	assert_true(res.tsq_throttled > 0);
	assert_true(res.tsq_max <= limit);
	assert_true(rounds > o.bytes / budget / 2);
	finish(&tb, &r, &res);
	assert_clean(&res);
}

static void test_stream_tsq(void **state)
{
	(void)state;
	tsq_case(false, 32 << 10);
	tsq_case(true, 160 << 10);
	/* A budget below one packet still lets one packet go at a time. */
	tsq_case(false, 1000);
}

/* Done, or a byte arrived off the pattern (no need to wait for a hang). */
static bool delivered_or_bad(void *ctx)
{
	struct st_run *r = ctx;
	struct vnic_work_results res;

	vnic_stream_results(r->st, &res);
	return res.err.payload || all_delivered(ctx);
}

struct wrap_case {
	const char *what;
	uint64_t off;		/* stream offset the flows start at */
	uint32_t seq;		/* the sender's first sequence number (flow 0) */
	uint32_t ack_iss;	/* the receiver's initial sequence number */
	bool ipv6;
	struct loopnet_cfg tx, rx;
};

/*
 * Every byte arrives in order, checked, with no error or resend, while the
 * sequence numbers and the stream offsets (the pattern's 2^32 period) wrap,
 * at the same byte or at different ones, inside superpackets, MSS frames
 * and GRO aggregates.
 */
static void wrap_case(const struct wrap_case *w)
{
	struct vnic_stream_opts o = { .flows = 2, .bytes = 6 << 20 };
	struct vnic_work_results res;
	struct testbed tb;
	struct st_run r;
	unsigned int i;

	print_message("wrap: %s\n", w->what);
	o.tcp.ipv6 = w->ipv6;
	setup(&tb, &r, &w->tx, &w->rx, &o, true);
	vnic_work_pair_set_origin(vnic_stream_pair(r.st), (uint32_t)(w->seq - w->off), w->ack_iss,
				  w->off);
	vnic_stream_start(r.st);
	testbed_run(&tb, delivered_or_bad, &r, 120);
	vnic_stream_results(r.st, &res);
	assert_int_equal(res.err.payload, 0);
	for (i = 0; i < r.flows; i++)
		assert_int_equal(vnic_stream_flow_bytes(r.st, i), o.bytes);
	finish(&tb, &r, &res);
	assert_clean(&res);
	assert_int_equal(res.err.lost, 0);
	assert_int_equal(res.bytes, r.flows * o.bytes);
}

static void test_stream_wrap(void **state)
{
	const uint64_t g4 = 1ull << 32;
	const struct loopnet_cfg tso = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 |
						     VNIC_NETIF_F_TSO6,
					 .peer_gso = true };
	const struct loopnet_cfg tso_seg = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 |
							 VNIC_NETIF_F_TSO6,
					     .resolve_csum = true };
	const struct loopnet_cfg gro = { .features = VNIC_NETIF_F_CSUM, .gro = true };
	const struct wrap_case cases[] = {
		{ "sequence numbers only, MSS frames", 0, 0xffffff00u, 0xfffffff0u, false,
		  { 0 }, { 0 } },
		{ "offsets wrap 1 MiB in, sequence numbers 4 MiB in, superpackets",
		  g4 - (1 << 20) - 333, 0u - (4u << 20) + 7, 0xffffffffu, false, tso, tso },
		{ "both wrap at one byte, 2 MiB in, segmented + GRO, IPv6",
		  g4 - (2 << 20) - 1, (uint32_t)(g4 - (2 << 20) - 1), 0x7fffffffu, true, tso_seg,
		  gro },
		{ "offsets cross 8 GiB, MSS frames + GRO", 2 * g4 - 999999, 12345, 0, false,
		  { 0 }, gro },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		wrap_case(&cases[i]);
}

/*
 * A driver knows its offloads only once open, after the workload is
 * created: what the netdev says at start must be what the flows use.
 */
static void test_stream_netdev_at_start(void **state)
{
	struct vnic_stream_opts o = { .flows = 2, .bytes = 4 << 20 };
	struct loopnet_cfg c = { .features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 };
	struct vnic_work_results res;
	struct loopnet_stats st;
	struct testbed tb;
	struct st_run r;

	(void)state;
	/* Nothing at create; TSO, a 9000 MTU and four rx queues (data
	 * arriving on the last) at start. */
	setup(&tb, &r, NULL, NULL, &o, true);
	tb.ln[0]->dev.features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4;
	tb.ln[0]->dev.mtu = 9000;
	tb.ln[0]->cfg.peer_gso = true;
	tb.ln[1]->dev.num_rx_queues = 4;
	tb.ln[1]->rx_queue = 3;
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	st = tb.ln[0]->st;
	finish(&tb, &r, &res);
	assert_clean(&res);
	assert_int_equal(res.bytes, 2 * o.bytes);
	assert_true(res.tx_segs > 5 * res.tx_pkts / 2);
	assert_true(st.gso_pkts > 0);
	assert_int_equal(st.max_gso_size, 9000 - 40);
	assert_int_equal(st.partial, st.xmits);

	/* The other way: TSO and checksum offload at create, gone at start,
	 * and a smaller MTU. */
	setup(&tb, &r, &c, NULL, &o, true);
	tb.ln[0]->dev.features = 0;
	tb.ln[0]->dev.mtu = 1000;
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	st = tb.ln[0]->st;
	finish(&tb, &r, &res);
	assert_clean(&res);
	assert_int_equal(res.tx_segs, res.tx_pkts);
	assert_int_equal(st.gso_pkts, 0);
	assert_int_equal(st.partial, 0);
	assert_int_equal(st.max_len, 1000 + VNIC_ETH_HLEN);
}

/*
 * Flows spread over the tx queues by their hash, as XPS would: those on the
 * host's cpu only. The netdev has its queues only from start on.
 */
static void test_stream_spreads_tx_queues(void **state)
{
	struct vnic_stream_opts o = { .flows = 16, .bytes = 256 << 10 };
	struct vnic_work_results res;
	struct loopnet_stats st;
	struct testbed tb;
	struct st_run r;
	unsigned int q;

	(void)state;
	setup(&tb, &r, NULL, NULL, &o, false);
	tb.ln[0]->dev.num_tx_queues = 4;
	for (q = 1; q < 3; q++)
		tb.ln[0]->dev.tx_cpu[q] = tb.ln[0]->dev.tx_cpu[0];
	tb.ln[0]->dev.tx_cpu[3] = &tb.cpu[1];	/* not the host's cpu: unused */
	vnic_stream_start(r.st);
	testbed_run(&tb, all_delivered, &r, 120);
	st = tb.ln[0]->st;
	finish(&tb, &r, &res);
	assert_clean(&res);
	/* 16 flows over 4 queues: each of the host's 3 queues carries some. */
	for (q = 0; q < 3; q++)
		assert_true(st.txq_xmits[q] > 0);
	assert_int_equal(st.txq_xmits[3], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_one_flow),
		cmocka_unit_test(test_stream_four_flows_tso),
		cmocka_unit_test(test_stream_four_flows_segmented_gro),
		cmocka_unit_test(test_stream_loss_reorder),
		cmocka_unit_test(test_stream_one_loss_one_resend),
		cmocka_unit_test(test_stream_reordering_no_resend),
		cmocka_unit_test(test_stream_until_stopped),
		cmocka_unit_test(test_stream_tsq),
		cmocka_unit_test(test_stream_wrap),
		cmocka_unit_test(test_stream_netdev_at_start),
		cmocka_unit_test(test_stream_spreads_tx_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
