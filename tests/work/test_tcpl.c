// SPDX-License-Identifier: MIT
/*
 * One connection of the transport, driven by hand: the test is the link.
 * It takes each frame the sender builds, decides whether the receiver gets
 * it (through the real rx callback: checksums, pattern, SACK option) or it
 * is lost, carries the receiver's ACKs back the same way, and sets the
 * hosts' clocks itself, so that every timer and RTT sample is exact. No cpu
 * runs: the hosts of a stream (not started) are used as they are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "loopnet.h"
#include "work/work_int.h"

#define MSS 1460u
#define T0 1000000000ull	/* the hosts' clock at the start */

struct bed {
	struct testbed tb;
	struct vnic_stream *st;
	struct vnic_tcpl_host *a, *b;	/* sender, receiver */
	struct tcpl_conn *snd, *rcv;
};

static void bed_init(struct bed *x, uint32_t window, uint64_t rto_min)
{
	struct vnic_stream_opts o = { .flows = 1 };
	struct work_pair *p;

	o.tcp.window = window;
	o.tcp.rto_min_ns = rto_min;
	testbed_init(&x->tb, NULL, NULL, 256, 2048);
	assert_int_equal(vnic_stream_create(&x->st, &x->tb.ln[0]->dev, &x->tb.pool[0],
					    &x->tb.ln[1]->dev, &x->tb.pool[1], &o),
			 0);
	p = vnic_stream_pair(x->st);
	x->a = &p->a;
	x->b = &p->b;
	x->snd = &x->a->conns[0];
	x->rcv = &x->b->conns[0];
	assert_int_equal(x->a->mss, MSS);
	x->a->now = x->b->now = T0;
}

static void bed_fini(struct bed *x)
{
	assert_int_equal(x->tb.pool[0].nfree, x->tb.pool[0].count);
	assert_int_equal(x->tb.pool[1].nfree, x->tb.pool[1].count);
	vnic_stream_destroy(x->st);
	testbed_fini(&x->tb);
}

static void at(struct bed *x, uint64_t t)
{
	x->a->now = x->b->now = T0 + t;
}

/* Everything c sends now, completed at once (TSQ); returns how many. */
static unsigned int pull(struct tcpl_conn *c, struct vnic_pkt **out, unsigned int max)
{
	struct vnic_netdev *dev = c->host->dev;
	unsigned int n = 0;

	while (n < max && vnic_tcpl_build(c, &out[n]) == TCPL_TX_SENT) {
		dev->host->tx_done(dev->host_ctx, 0, out[n]->priv, out[n]->len, VNIC_TX_DONE_OK);
		n++;
	}
	return n;
}

static const uint8_t *tcp_hdr(const struct vnic_pkt *pkt, struct vnic_hdrs *hd)
{
	assert_int_equal(vnic_parse_frame(pkt->data, pkt->len, hd), VNIC_PARSE_OK);
	return pkt->data + hd->l4_off;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A frame's stream offset, in the sender's space (offsets start at 0). */
static uint64_t off_of(const struct tcpl_conn *c, const struct vnic_pkt *pkt)
{
	struct vnic_hdrs hd;

	return (uint32_t)(rd32(tcp_hdr(pkt, &hd) + 4) - c->iss);
}

static uint32_t len_of(const struct vnic_pkt *pkt)
{
	struct vnic_hdrs hd;

	tcp_hdr(pkt, &hd);
	return hd.payload_len;
}

static void expect_seg(const struct tcpl_conn *c, const struct vnic_pkt *pkt, uint64_t off,
		       uint32_t len)
{
	if (off_of(c, pkt) != off || len_of(pkt) != len)
		fail_msg("segment at %llu of %u, want %llu of %u",
			 (unsigned long long)off_of(c, pkt), len_of(pkt), (unsigned long long)off,
			 len);
}

/* The link delivers pkt to host h: its rx callback, then its events. */
static void carry(struct vnic_tcpl_host *h, struct vnic_pkt *pkt)
{
	struct evq *q = h->evq[0];
	uint32_t tail, head;

	vnic_tcpl_host_rx(h, 0, &pkt, 1);
	tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	head = atomic_load_explicit(&q->head, memory_order_acquire);
	assert_int_equal(head - tail, 1);	/* it passed every check */
	for (; tail != head; tail++) {
		const struct rx_ev *ev = &q->ev[tail & (HOST_EVQ - 1)];

		vnic_tcpl_rx(&h->conns[ev->conn], ev);
	}
	atomic_store_explicit(&q->tail, tail, memory_order_release);
}

static void drop(struct vnic_pkt *pkt)
{
	vnic_pkt_free(pkt);
}

/* The receiver answers what it got; its ACK reaches the sender. */
static void ack_back(struct bed *x)
{
	struct vnic_pkt *p[4];
	unsigned int n = pull(x->rcv, p, 4), i;

	assert_int_equal(n, 1);
	for (i = 0; i < n; i++) {
		assert_int_equal(len_of(p[i]), 0);
		carry(x->a, p[i]);
	}
}

/* An ACK made up by the test, with the RTT clock it says it arrived at. */
static void fake_ack(struct bed *x, uint64_t una, uint64_t ts)
{
	struct rx_ev ev = { .conn = 0, .flags = VNIC_TCP_ACK, .segs = 1 };

	ev.ack = x->snd->iss + (uint32_t)una;
	ev.ts = T0 + ts;
	vnic_tcpl_rx(x->snd, &ev);
}

static void results(struct bed *x, struct vnic_work_results *r)
{
	vnic_stream_results(x->st, r);
}

/*
 * Eight segments, the third lost. SACKed segments above it arrive one ACK
 * at a time: at the third duplicate ACK (three segments SACKed above it)
 * exactly the hole is resent, nothing else, before and after.
 */
static void test_fast_retransmit_exactly_the_hole(void **state)
{
	struct vnic_pkt *seg[8], *p[4];
	struct vnic_work_results r;
	struct bed x;
	unsigned int i;

	(void)state;
	bed_init(&x, 64 << 10, LOOPNET_NO_TIMER_RTO_MIN_NS);
	vnic_tcpl_send(x.snd, 8 * MSS);
	assert_int_equal(pull(x.snd, seg, 8), 8);
	for (i = 0; i < 8; i++)
		expect_seg(x.snd, seg[i], i * MSS, MSS);
	carry(x.b, seg[0]);
	carry(x.b, seg[1]);
	ack_back(&x);
	assert_int_equal(x.snd->snd_una, 2 * MSS);
	drop(seg[2]);
	for (i = 3; i < 6; i++) {
		carry(x.b, seg[i]);
		ack_back(&x);
		assert_int_equal(x.snd->dupacks, i - 2);
		if (i < 5) {
			assert_int_equal(pull(x.snd, p, 4), 0);
			continue;
		}
		assert_int_equal(pull(x.snd, p, 4), 1);
		expect_seg(x.snd, p[0], 2 * MSS, MSS);
	}
	results(&x, &r);
	assert_int_equal(r.err.fast_retransmits, 1);
	assert_int_equal(r.err.retransmits, 1);
	assert_int_equal(r.err.timeouts + r.err.probes, 0);
	/* The resend fills the hole: all kept behind it goes up at once. */
	carry(x.b, p[0]);
	assert_int_equal(x.rcv->rcv_nxt, 6 * MSS);
	carry(x.b, seg[6]);
	carry(x.b, seg[7]);
	ack_back(&x);
	assert_int_equal(x.snd->snd_una, 8 * MSS);
	assert_int_equal(pull(x.snd, p, 4), 0);
	assert_int_equal(x.snd->rto_at + x.snd->pto_at, 0);
	results(&x, &r);
	assert_int_equal(r.bytes, 8 * MSS);
	assert_int_equal(r.err.sack_recovered, 1);
	assert_int_equal(r.err.lost, 1);
	assert_int_equal(r.err.ooo, 3);
	assert_int_equal(r.err.dup + r.err.spurious, 0);
	bed_fini(&x);
}

/* A peer without SACK: three plain duplicate ACKs (RFC 5681) resend the
 * first segment, and only it. */
static void test_fast_retransmit_plain_dupacks(void **state)
{
	struct vnic_pkt *seg[8], *p[4];
	struct vnic_work_results r;
	struct bed x;
	unsigned int i;

	(void)state;
	bed_init(&x, 64 << 10, LOOPNET_NO_TIMER_RTO_MIN_NS);
	vnic_tcpl_send(x.snd, 8 * MSS);
	assert_int_equal(pull(x.snd, seg, 8), 8);
	for (i = 0; i < 8; i++)
		drop(seg[i]);
	fake_ack(&x, 3 * MSS, 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(pull(x.snd, p, 4), 0);
		fake_ack(&x, 3 * MSS, 0);
	}
	assert_int_equal(pull(x.snd, p, 4), 1);
	expect_seg(x.snd, p[0], 3 * MSS, MSS);
	drop(p[0]);
	results(&x, &r);
	assert_int_equal(r.err.fast_retransmits, 1);
	bed_fini(&x);
}

/* Reordering by one and by two segments: SACKs, but nothing resent. */
static void test_reordering_resends_nothing(void **state)
{
	static const unsigned int order[] = { 0, 1, 3, 2, 4, 6, 7, 5, 8, 11, 9, 10 };
	struct vnic_pkt *seg[12], *p[4];
	struct vnic_work_results r;
	struct bed x;
	unsigned int i;

	(void)state;
	bed_init(&x, 64 << 10, LOOPNET_NO_TIMER_RTO_MIN_NS);
	vnic_tcpl_send(x.snd, 12 * MSS);
	assert_int_equal(pull(x.snd, seg, 12), 12);
	for (i = 0; i < 12; i++) {
		carry(x.b, seg[order[i]]);
		ack_back(&x);
		assert_int_equal(pull(x.snd, p, 4), 0);
	}
	assert_int_equal(x.snd->snd_una, 12 * MSS);
	results(&x, &r);
	assert_int_equal(r.err.retransmits, 0);
	assert_int_equal(r.err.lost, 3);	/* three gaps seen, all filled */
	assert_true(r.err.ooo > 0);
	assert_int_equal(r.bytes, 12 * MSS);
	bed_fini(&x);
}

/*
 * The RTO of RFC 6298 on a connection, to the nanosecond, with Karn's
 * algorithm: a floor of 100 us (initial RTO 400 us, probe slack 3125 ns).
 */
static void test_rto_karn_on_the_wire(void **state)
{
	struct vnic_pkt *p[4];
	struct vnic_work_results r;
	struct tcpl_conn *c;
	struct bed x;

	(void)state;
	bed_init(&x, 64 << 10, 100000);
	c = x.snd;
	/* No RTT yet: the initial RTO, no probe. */
	vnic_tcpl_send(c, MSS);
	assert_int_equal(pull(c, p, 4), 1);
	drop(p[0]);
	assert_int_equal(c->rto_at, T0 + 400000);
	assert_int_equal(c->pto_at, 0);
	/* Acknowledged after 800 us: SRTT 800, RTTVAR 400, RTO 2400 us. */
	at(&x, 800000);
	fake_ack(&x, MSS, 800000);
	assert_int_equal(c->rtt.srtt, 800000);
	assert_int_equal(c->rtt.rttvar, 400000);
	assert_int_equal(c->rto_at + c->pto_at, 0);	/* nothing out: no timer */
	/* The next segment at 1 ms: RTO at 3.4 ms, probe at 1 ms + 2 SRTT +
	 * 3125 ns. */
	at(&x, 1000000);
	vnic_tcpl_send(c, MSS);
	assert_int_equal(pull(c, p, 4), 1);
	drop(p[0]);
	assert_int_equal(c->rto_at, T0 + 3400000);
	assert_int_equal(c->pto_at, T0 + 2603125);
	at(&x, 2603124);
	assert_int_equal(vnic_tcpl_timer(c), T0 + 2603125);
	assert_int_equal(pull(c, p, 4), 0);
	/* The probe: the last segment again, and the RTO restarted. */
	at(&x, 2603125);
	assert_int_equal(vnic_tcpl_timer(c), T0 + 5003125);
	assert_int_equal(pull(c, p, 4), 1);
	expect_seg(c, p[0], MSS, MSS);
	drop(p[0]);
	/* The RTO: resent again, the RTO doubled to 4.8 ms. */
	at(&x, 5003125);
	assert_int_equal(vnic_tcpl_timer(c), T0 + 9803125);
	assert_int_equal(pull(c, p, 4), 1);
	expect_seg(c, p[0], MSS, MSS);
	drop(p[0]);
	results(&x, &r);
	assert_int_equal(r.err.timeouts, 1);
	assert_int_equal(r.err.probes, 1);
	assert_int_equal(r.err.retransmits, 2);
	assert_int_equal(r.err.fast_retransmits, 0);
	/* Its ACK is ambiguous (Karn): no sample, the backoff stays. */
	at(&x, 6000000);
	fake_ack(&x, 2 * MSS, 6000000);
	assert_int_equal(c->rtt.srtt, 800000);
	assert_int_equal(vnic_tcpl_rtt_rto(&c->rtt, &x.a->rto), 4800000);
	/* A new segment is timed under the backed-off RTO, without a probe... */
	at(&x, 7000000);
	vnic_tcpl_send(c, MSS);
	assert_int_equal(pull(c, p, 4), 1);
	drop(p[0]);
	assert_int_equal(c->rto_at, T0 + 11800000);
	assert_int_equal(c->pto_at, 0);
	/* ...and its sample (500 us) ends the backoff:
	 * RTTVAR = (3 * 400 + 300) / 4 = 375, SRTT = (7 * 800 + 500) / 8 = 762.5. */
	at(&x, 7500000);
	fake_ack(&x, 3 * MSS, 7500000);
	assert_int_equal(c->rtt.rttvar, 375000);
	assert_int_equal(c->rtt.srtt, 762500);
	assert_int_equal(vnic_tcpl_rtt_rto(&c->rtt, &x.a->rto), 762500 + 4 * 375000);
	bed_fini(&x);
}

/* One round trip of 100 us so that probes have an SRTT. */
static void warm_up(struct bed *x)
{
	struct vnic_pkt *p[4];

	vnic_tcpl_send(x->snd, MSS);
	assert_int_equal(pull(x->snd, p, 4), 1);
	carry(x->b, p[0]);
	at(x, 100000);
	fake_ack(x, MSS, 100000);
	assert_int_equal(pull(x->rcv, p, 4), 1);
	drop(p[0]);	/* the fake one arrived instead */
	assert_int_equal(x->snd->rtt.srtt, 100000);
}

/* A resend that is lost too is seen as soon as three segments sent after
 * it are SACKed, and sent again: no timer. */
static void test_lost_resend_seen_by_sack(void **state)
{
	struct vnic_pkt *seg[16], *p[4];
	struct vnic_work_results r;
	struct bed x;
	unsigned int i;

	(void)state;
	bed_init(&x, 64 << 10, LOOPNET_NO_TIMER_RTO_MIN_NS);
	warm_up(&x);
	vnic_tcpl_send(x.snd, 10 * MSS);
	assert_int_equal(pull(x.snd, seg, 16), 10);
	drop(seg[0]);
	for (i = 1; i < 4; i++) {
		carry(x.b, seg[i]);
		ack_back(&x);
	}
	assert_int_equal(pull(x.snd, p, 4), 1);
	expect_seg(x.snd, p[0], MSS, MSS);
	drop(p[0]);	/* lost again */
	for (i = 4; i < 10; i++) {
		carry(x.b, seg[i]);
		ack_back(&x);
	}
	/* Everything above was sent before the resend: no news about it. */
	assert_int_equal(pull(x.snd, p, 4), 0);
	vnic_tcpl_send(x.snd, 3 * MSS);
	assert_int_equal(pull(x.snd, seg, 16), 3);
	carry(x.b, seg[0]);
	ack_back(&x);
	carry(x.b, seg[1]);
	ack_back(&x);
	assert_int_equal(pull(x.snd, p, 4), 0);
	carry(x.b, seg[2]);
	ack_back(&x);
	assert_int_equal(pull(x.snd, p, 4), 1);
	expect_seg(x.snd, p[0], MSS, MSS);
	carry(x.b, p[0]);
	ack_back(&x);
	assert_int_equal(x.snd->snd_una, 14 * MSS);
	results(&x, &r);
	assert_int_equal(r.err.fast_retransmits, 2);
	assert_int_equal(r.err.sack_recovered, 1);
	assert_int_equal(r.err.timeouts + r.err.probes, 0);
	assert_int_equal(r.bytes, 14 * MSS);
	bed_fini(&x);
}

/*
 * The window is full and the resend of its first segment is lost: nothing
 * new can be sent to be SACKed after it. Once SACKs stop coming for a
 * probe timeout, the probe resends it; the RTO is not needed.
 */
static void test_lost_resend_full_window_probe(void **state)
{
	struct vnic_pkt *seg[16], *p[4];
	struct vnic_work_results r;
	struct bed x;
	unsigned int i;

	(void)state;
	bed_init(&x, 8 * MSS, 1000000);	/* RTO floor 1 ms, probe slack 31.25 us */
	warm_up(&x);
	vnic_tcpl_send(x.snd, 100 * MSS);
	assert_int_equal(pull(x.snd, seg, 16), 8);	/* the window */
	drop(seg[0]);
	for (i = 1; i < 8; i++) {
		carry(x.b, seg[i]);
		ack_back(&x);
		if (i == 3) {
			assert_int_equal(pull(x.snd, p, 4), 1);
			expect_seg(x.snd, p[0], MSS, MSS);
			drop(p[0]);
		}
	}
	at(&x, 150000);
	assert_int_equal(pull(x.snd, p, 4), 0);
	/* The probe timer runs from the resend and the last SACK (at 100 us):
	 * 2 SRTT + 31.25 us. */
	assert_int_equal(x.snd->pto_at, T0 + 100000 + 200000 + 31250);
	assert_int_equal(x.snd->rto_at, T0 + 100000 + 1000000);
	at(&x, 331250);
	vnic_tcpl_timer(x.snd);
	assert_int_equal(pull(x.snd, p, 4), 1);
	expect_seg(x.snd, p[0], MSS, MSS);
	carry(x.b, p[0]);
	ack_back(&x);
	assert_int_equal(x.snd->snd_una, 9 * MSS);
	results(&x, &r);
	assert_int_equal(r.err.probes, 1);
	assert_int_equal(r.err.fast_retransmits, 1);
	assert_int_equal(r.err.retransmits, 2);
	assert_int_equal(r.err.timeouts, 0);
	/* The window opened: new data flows again. */
	assert_int_equal(pull(x.snd, seg, 16), 8);
	for (i = 0; i < 8; i++)
		drop(seg[i]);
	bed_fini(&x);
}

/* A resend that was not needed comes back as a D-SACK: spurious. */
static void test_dsack_counts_spurious(void **state)
{
	struct vnic_pkt *p[4];
	struct vnic_work_results r;
	struct bed x;

	(void)state;
	bed_init(&x, 64 << 10, 1000000);
	warm_up(&x);
	vnic_tcpl_send(x.snd, MSS);
	assert_int_equal(pull(x.snd, p, 4), 1);
	carry(x.b, p[0]);
	assert_int_equal(pull(x.rcv, p, 4), 1);
	drop(p[0]);	/* the ACK is lost */
	at(&x, 331250);
	vnic_tcpl_timer(x.snd);
	assert_int_equal(pull(x.snd, p, 4), 1);
	expect_seg(x.snd, p[0], MSS, MSS);
	carry(x.b, p[0]);
	ack_back(&x);
	assert_int_equal(x.snd->snd_una, 2 * MSS);
	results(&x, &r);
	assert_int_equal(r.err.probes, 1);
	assert_int_equal(r.err.dup, 1);
	assert_int_equal(r.err.spurious, 1);
	bed_fini(&x);
}

/* The receiver's ACK for given holes: cumulative ACK below the first, SACK
 * blocks of what it holds, the freshest first, as sequence numbers. */
static void test_sack_blocks_on_the_wire(void **state)
{
	static const unsigned int got[] = { 0, 2, 4, 7, 6 };
	struct vnic_pkt *seg[8], *p[4];
	uint32_t blocks[TCPL_SACK_BLOCKS][2], iss;
	const uint8_t *th;
	struct vnic_hdrs hd;
	struct bed x;
	unsigned int i;

	(void)state;
	bed_init(&x, 64 << 10, LOOPNET_NO_TIMER_RTO_MIN_NS);
	iss = x.snd->iss;
	vnic_tcpl_send(x.snd, 8 * MSS);
	assert_int_equal(pull(x.snd, seg, 8), 8);
	for (i = 0; i < 5; i++) {
		carry(x.b, seg[got[i]]);
		seg[got[i]] = NULL;
	}
	for (i = 0; i < 8; i++)
		if (seg[i])
			drop(seg[i]);
	assert_int_equal(pull(x.rcv, p, 4), 1);
	th = tcp_hdr(p[0], &hd);
	assert_int_equal(hd.payload_len, 0);
	assert_int_equal(rd32(th + 8), iss + MSS);
	assert_int_equal(hd.l4_len, TCPL_TCP_HLEN + 4 + 3 * 8);
	assert_int_equal(vnic_tcpl_sack_get(th + TCPL_TCP_HLEN, hd.l4_len - TCPL_TCP_HLEN, blocks),
			 3);
	assert_int_equal(blocks[0][0], iss + 6 * MSS);
	assert_int_equal(blocks[0][1], iss + 8 * MSS);
	assert_int_equal(blocks[1][0], iss + 4 * MSS);
	assert_int_equal(blocks[1][1], iss + 5 * MSS);
	assert_int_equal(blocks[2][0], iss + 2 * MSS);
	assert_int_equal(blocks[2][1], iss + 3 * MSS);
	drop(p[0]);
	bed_fini(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_retransmit_exactly_the_hole),
		cmocka_unit_test(test_fast_retransmit_plain_dupacks),
		cmocka_unit_test(test_reordering_resends_nothing),
		cmocka_unit_test(test_rto_karn_on_the_wire),
		cmocka_unit_test(test_lost_resend_seen_by_sack),
		cmocka_unit_test(test_lost_resend_full_window_probe),
		cmocka_unit_test(test_dsack_counts_spurious),
		cmocka_unit_test(test_sack_blocks_on_the_wire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
