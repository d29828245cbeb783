// SPDX-License-Identifier: MIT
/*
 * The loss recovery pieces of the workloads' transport, alone: the RFC 6298
 * estimator against hand-computed sequences, the receiver's reassembly
 * against a byte map, the SACK blocks it reports, the sender's scoreboard,
 * the SACK option's bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "work/work_int.h"

/* ---- RFC 6298 ------------------------------------------------------------ */

static const struct tcpl_rto_limits lim = {
	.min = 1000, .max = 64000, .init = 4000, .pto_slack = 125,
};

/*
 * Each row: a sample (0: an expiry instead) and SRTT, RTTVAR, RTO after it,
 * worked by hand from RFC 6298 (2.2), (2.3) with alpha 1/8, beta 1/4, K 4,
 * G 0, integer division; (2.4) the floor, (5.5) the doubling, capped.
 */
static void test_rto_rfc6298_sequence(void **state)
{
	static const struct {
		uint64_t m, srtt, rttvar, rto;
	} rows[] = {
		/* 1: before any sample, expiries double the initial RTO */
		{ 0, 0, 0, 8000 },
		{ 0, 0, 0, 16000 },
		/* 3: first sample: SRTT = R, RTTVAR = R/2; backoff cleared */
		{ 800, 800, 400, 2400 },
		/* 4: RTTVAR = (3*400 + |800-1600|)/4 = 500, SRTT = (7*800+1600)/8 = 900 */
		{ 1600, 900, 500, 2900 },
		/* 5: RTTVAR = (3*500 + 0)/4 = 375, SRTT = 900 */
		{ 900, 900, 375, 2400 },
		/* 6: RTTVAR = (1125 + 800)/4 = 481, SRTT = (6300+100)/8 = 800 */
		{ 100, 800, 481, 2724 },
		/* 7: expiry: 2724 doubled; SRTT, RTTVAR kept */
		{ 0, 800, 481, 5448 },
		/* 8: and again */
		{ 0, 800, 481, 10896 },
		/* 9: a sample ends the backoff: RTTVAR = (1443 + 0)/4 = 360, SRTT 800 */
		{ 800, 800, 360, 2240 },
		/* 10: RTTVAR = (1080 + 700)/4 = 445, SRTT = (5600 + 100)/8 = 712 */
		{ 100, 712, 445, 2492 },
	};
	struct tcpl_rtt r;
	unsigned int i;

	(void)state;
	vnic_tcpl_rtt_init(&r);
	assert_int_equal(vnic_tcpl_rtt_rto(&r, &lim), 4000);
	assert_int_equal(vnic_tcpl_rtt_pto(&r, &lim), 0);	/* no probe without an RTT */
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].m)
			vnic_tcpl_rtt_sample(&r, rows[i].m);
		else
			vnic_tcpl_rtt_backoff(&r);
		if (r.srtt != rows[i].srtt || r.rttvar != rows[i].rttvar ||
		    vnic_tcpl_rtt_rto(&r, &lim) != rows[i].rto)
			fail_msg("row %u: srtt %llu rttvar %llu rto %llu", i + 1,
				 (unsigned long long)r.srtt, (unsigned long long)r.rttvar,
				 (unsigned long long)vnic_tcpl_rtt_rto(&r, &lim));
	}
}

static void test_rto_floor_ceiling_pto(void **state)
{
	struct tcpl_rtt r;
	unsigned int i;

	(void)state;
	vnic_tcpl_rtt_init(&r);
	/* A steady 100: RTTVAR decays to 0, the RTO sits on the floor. */
	for (i = 0; i < 64; i++)
		vnic_tcpl_rtt_sample(&r, 100);
	assert_int_equal(r.srtt, 100);
	assert_int_equal(r.rttvar, 0);
	assert_int_equal(vnic_tcpl_rtt_rto(&r, &lim), 1000);
	/* The probe: 2 SRTT and the slack. */
	assert_int_equal(vnic_tcpl_rtt_pto(&r, &lim), 200 + 125);
	vnic_tcpl_rtt_sample(&r, 10);	/* RTTVAR (0 + 90)/4 = 22, SRTT (700+10)/8 = 88 */
	assert_int_equal(r.srtt, 88);
	assert_int_equal(vnic_tcpl_rtt_pto(&r, &lim), 176 + 125);
	assert_int_equal(vnic_tcpl_rtt_rto(&r, &lim), 1000);	/* 88 + 88 below the floor */
	/* Doubling from the floor: 2000, 4000, ... up to the ceiling, no further. */
	for (i = 1; i <= 8; i++) {
		uint64_t want = 1000ull << i;

		vnic_tcpl_rtt_backoff(&r);
		assert_int_equal(vnic_tcpl_rtt_rto(&r, &lim), want < 64000 ? want : 64000);
	}
	for (i = 0; i < 100; i++)
		vnic_tcpl_rtt_backoff(&r);
	assert_int_equal(vnic_tcpl_rtt_rto(&r, &lim), 64000);
	/* A huge sample is capped too. */
	vnic_tcpl_rtt_sample(&r, 1000000);
	assert_int_equal(vnic_tcpl_rtt_rto(&r, &lim), 64000);
	/* A zero measurement counts as 1 ns: SRTT stays a valid "known". */
	vnic_tcpl_rtt_init(&r);
	vnic_tcpl_rtt_sample(&r, 0);
	assert_int_equal(r.srtt, 1);
}

/* ---- reassembly ---------------------------------------------------------- */

struct seg {
	uint64_t start, end;
};

/* One arrival and what must come of it. */
struct arrival {
	uint64_t start, end;
	enum reasm_res res;
	uint64_t delivered;	/* and rcv_nxt moves by it */
	bool dup;
};

static void arrivals(const struct arrival *a, unsigned int n, uint64_t base)
{
	struct tcpl_reasm q;
	uint64_t rcv = base, got;
	unsigned int i;
	bool dup;

	vnic_tcpl_reasm_init(&q);
	for (i = 0; i < n; i++) {
		uint64_t before = rcv;
		enum reasm_res res = vnic_tcpl_reasm_add(&q, &rcv, base + a[i].start,
							 base + a[i].end, &got, &dup);

		if (res != a[i].res || got != a[i].delivered || dup != a[i].dup ||
		    rcv != before + got)
			fail_msg("arrival %u [%llu,%llu): res %d delivered %llu dup %d", i + 1,
				 (unsigned long long)a[i].start, (unsigned long long)a[i].end, res,
				 (unsigned long long)got, dup);
	}
}

static void test_reasm_holes_and_duplicates(void **state)
{
	const struct arrival a[] = {
		/* 1: in order */
		{ 0, 100, REASM_IN_ORDER, 100, false },
		/* 2-4: three holes: [100,200) [300,400) [500,600) */
		{ 200, 300, REASM_OOO, 0, false },
		{ 400, 500, REASM_OOO, 0, false },
		{ 600, 700, REASM_OOO, 0, false },
		/* 5: a duplicate of a kept range */
		{ 400, 500, REASM_DUP, 0, true },
		/* 6: fills [300,400): joins [200,300) and [400,500), partly a dup */
		{ 250, 400, REASM_OOO, 0, true },
		/* 7: the first hole: everything up to 500 goes up */
		{ 100, 200, REASM_IN_ORDER, 400, false },
		/* 8: old bytes only */
		{ 0, 500, REASM_DUP, 0, true },
		/* 9: starts with old bytes, then fills [500,600) and takes [600,700) */
		{ 450, 600, REASM_IN_ORDER, 200, true },
		/* 10: touching the end: in order */
		{ 700, 701, REASM_IN_ORDER, 1, false },
		/* 11, 12: ranges that touch merge into one */
		{ 800, 900, REASM_OOO, 0, false },
		{ 701, 800, REASM_IN_ORDER, 199, false },
	};

	(void)state;
	arrivals(a, sizeof(a) / sizeof(a[0]), 0);
	/* The same, placed far from 0 (offsets are 64-bit). */
	arrivals(a, sizeof(a) / sizeof(a[0]), (1ull << 32) - 300);
}

static void test_reasm_full(void **state)
{
	struct tcpl_reasm q;
	uint64_t rcv = 0, got;
	unsigned int i;
	bool dup;

	(void)state;
	vnic_tcpl_reasm_init(&q);
	/* Every other 10 bytes: TCPL_OFO_MAX ranges, then no room. */
	for (i = 0; i < TCPL_OFO_MAX; i++) {
		uint64_t s = 20 * i + 10;

		assert_int_equal(vnic_tcpl_reasm_add(&q, &rcv, s, s + 10, &got, &dup), REASM_OOO);
	}
	assert_int_equal(q.n, TCPL_OFO_MAX);
	assert_int_equal(vnic_tcpl_reasm_add(&q, &rcv, 20 * i + 10, 20 * i + 20, &got, &dup),
			 REASM_FULL);
	/* Growing a kept range, or joining two, needs no new one. */
	assert_int_equal(vnic_tcpl_reasm_add(&q, &rcv, 20, 25, &got, &dup), REASM_OOO);
	assert_int_equal(vnic_tcpl_reasm_add(&q, &rcv, 35, 50, &got, &dup), REASM_OOO);
	assert_int_equal(q.n, TCPL_OFO_MAX - 1);
	/* Filling holes always works and delivers what was kept behind them. */
	assert_int_equal(vnic_tcpl_reasm_add(&q, &rcv, 0, 10, &got, &dup), REASM_IN_ORDER);
	assert_int_equal(got, 25);
	assert_false(dup);
	assert_int_equal(vnic_tcpl_reasm_add(&q, &rcv, 25, 30, &got, &dup), REASM_IN_ORDER);
	assert_int_equal(got, 35);
	assert_int_equal(rcv, 60);
	assert_int_equal(q.n, TCPL_OFO_MAX - 3);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Random segments of a 16 KiB stream in random order, with duplicates and
 * overlaps, against a byte map: what is kept is exactly what arrived (unless
 * refused), rcv_nxt is the first byte missing, every byte is delivered once
 * and in order, and the kept ranges are the map's runs above rcv_nxt.
 */
static void test_reasm_random_against_map(void **state)
{
	enum { LEN = 16384 };
	static uint8_t have[LEN];
	unsigned int round;
	uint64_t seed = 5;

	(void)state;
	for (round = 0; round < 40; round++) {
		struct tcpl_reasm q;
		uint64_t rcv = 0, total = 0, got;
		unsigned int steps = 0;

		memset(have, 0, sizeof(have));
		vnic_tcpl_reasm_init(&q);
		while (rcv < LEN) {
			/* Mostly near the front, as a window would send them. */
			uint64_t span = 1 + rng_next(&seed) % (round % 4 ? 8000 : LEN);
			uint64_t s = rcv + rng_next(&seed) % span, len = 1 + rng_next(&seed) % 1500;
			uint64_t e, x, first;
			enum reasm_res res;
			bool dup, anyold = false, anynew = false;
			unsigned int k;

			if (rng_next(&seed) % 8 == 0 && rcv)
				s = rng_next(&seed) % rcv;	/* an old one */
			if (s >= LEN)
				continue;
			e = s + len > LEN ? LEN : s + len;
			for (x = s; x < e; x++) {
				if (have[x])
					anyold = true;
				else
					anynew = true;
			}
			res = vnic_tcpl_reasm_add(&q, &rcv, s, e, &got, &dup);
			assert_true(dup == anyold || res == REASM_FULL);
			if (res == REASM_FULL) {
				assert_true(s > rcv);
				assert_int_equal(q.n, TCPL_OFO_MAX);
			} else {
				for (x = s; x < e; x++)
					have[x] = 1;
			}
			if (!anynew)
				assert_int_equal(res, REASM_DUP);
			total += got;
			for (first = rcv - got; first < LEN && have[first]; first++)
				;
			assert_int_equal(rcv, first);
			assert_int_equal(total, rcv);
			/* The kept ranges are the runs of the map above rcv_nxt. */
			x = rcv;
			for (k = 0; k < q.n; k++) {
				while (x < LEN && !have[x])
					x++;
				assert_int_equal(q.r[k].start, x);
				while (x < LEN && have[x])
					x++;
				assert_int_equal(q.r[k].end, x);
			}
			while (x < LEN && !have[x])
				x++;
			assert_int_equal(x, LEN);
			assert_true(++steps < 100000);
		}
		assert_int_equal(q.n, 0);
	}
}

static void test_reasm_sack_blocks(void **state)
{
	struct tcpl_range out[TCPL_SACK_BLOCKS + 2];
	struct tcpl_reasm q;
	uint64_t rcv = 1000, got;
	unsigned int n;
	bool dup;

	(void)state;
	vnic_tcpl_reasm_init(&q);
	assert_false(vnic_tcpl_reasm_sack_pending(&q));
	assert_int_equal(vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS), 0);
	/* Five holes below five ranges, received in this order. */
	vnic_tcpl_reasm_add(&q, &rcv, 3000, 3100, &got, &dup);
	vnic_tcpl_reasm_add(&q, &rcv, 1100, 1200, &got, &dup);
	vnic_tcpl_reasm_add(&q, &rcv, 5000, 5100, &got, &dup);
	vnic_tcpl_reasm_add(&q, &rcv, 2000, 2100, &got, &dup);
	vnic_tcpl_reasm_add(&q, &rcv, 4000, 4100, &got, &dup);
	assert_true(vnic_tcpl_reasm_sack_pending(&q));
	/* RFC 2018: the freshest first; four fit. */
	n = vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS);
	assert_int_equal(n, 4);
	assert_int_equal(out[0].start, 4000);
	assert_int_equal(out[0].end, 4100);
	assert_int_equal(out[1].start, 2000);
	assert_int_equal(out[2].start, 5000);
	assert_int_equal(out[3].start, 1100);
	/* Growing one makes it the freshest; the others keep their order. */
	vnic_tcpl_reasm_add(&q, &rcv, 3100, 3300, &got, &dup);
	n = vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS);
	assert_int_equal(out[0].start, 3000);
	assert_int_equal(out[0].end, 3300);
	assert_int_equal(out[1].start, 4000);
	assert_int_equal(out[2].start, 2000);
	assert_int_equal(out[3].start, 5000);
	/* A duplicate below rcv_nxt: the D-SACK block first, once. */
	vnic_tcpl_reasm_add(&q, &rcv, 900, 1000, &got, &dup);
	assert_true(dup);
	n = vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS);
	assert_int_equal(n, 4);
	assert_int_equal(out[0].start, 900);
	assert_int_equal(out[0].end, 1000);
	assert_int_equal(out[1].start, 3000);
	n = vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS);
	assert_int_equal(out[0].start, 3000);
	/* A duplicate inside a kept range: D-SACK, then that range (RFC 2883
	 * section 4, so the sender can tell), then the freshest others. */
	vnic_tcpl_reasm_add(&q, &rcv, 5020, 5040, &got, &dup);
	n = vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS);
	assert_int_equal(n, 4);
	assert_int_equal(out[0].start, 5020);
	assert_int_equal(out[0].end, 5040);
	assert_int_equal(out[1].start, 5000);
	assert_int_equal(out[1].end, 5100);
	assert_int_equal(out[2].start, 3000);
	assert_int_equal(out[3].start, 4000);
	/* All holes filled: nothing left to report. */
	vnic_tcpl_reasm_add(&q, &rcv, 1000, 5100, &got, &dup);
	assert_int_equal(rcv, 5100);
	assert_int_equal(q.n, 0);
	n = vnic_tcpl_reasm_sack(&q, out, TCPL_SACK_BLOCKS);
	assert_int_equal(n, 1);	/* the D-SACK of what it repeated */
	assert_false(vnic_tcpl_reasm_sack_pending(&q));
}

/* ---- scoreboard ---------------------------------------------------------- */

#define MSS 100

static void sb_expect(const struct tcpl_sb *sb, const struct tcpl_sb_ent *want, unsigned int n)
{
	unsigned int k;

	if (sb->n != n)
		fail_msg("%u ranges, want %u", sb->n, n);
	for (k = 0; k < n; k++)
		if (sb->e[k].start != want[k].start || sb->e[k].end != want[k].end ||
		    sb->e[k].kind != want[k].kind ||
		    (want[k].kind != SB_SACKED && sb->e[k].mark != want[k].mark))
			fail_msg("range %u: [%llu,%llu) kind %u mark %llu", k,
				 (unsigned long long)sb->e[k].start,
				 (unsigned long long)sb->e[k].end, sb->e[k].kind,
				 (unsigned long long)sb->e[k].mark);
}

static void test_sb_mark_and_ack(void **state)
{
	struct tcpl_sb sb = { 0 };
	uint64_t rec;

	(void)state;
	/* SACKs of 200-400 and 600-700, new information each time. */
	assert_int_equal(vnic_tcpl_sb_mark(&sb, 200, 400, SB_SACKED, 0, MSS, &rec), 200);
	assert_int_equal(vnic_tcpl_sb_mark(&sb, 600, 700, SB_SACKED, 0, MSS, &rec), 100);
	/* Told again, and partly: only what is new counts. */
	assert_int_equal(vnic_tcpl_sb_mark(&sb, 300, 450, SB_SACKED, 0, MSS, &rec), 50);
	{
		const struct tcpl_sb_ent w[] = { { 200, 450, 0, SB_SACKED },
						 { 600, 700, 0, SB_SACKED } };

		sb_expect(&sb, w, 2);
	}
	/* Resends of the holes below: [0,200) fast, [450,600) by a timer. */
	vnic_tcpl_sb_mark(&sb, 0, 100, SB_RXT_FAST, 1000, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 100, 200, SB_RXT_FAST, 1100, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 450, 600, SB_RXT, 1200, MSS, &rec);
	{
		/* The two fast ones touch: one range with the later mark. */
		const struct tcpl_sb_ent w[] = { { 0, 200, 1100, SB_RXT_FAST },
						 { 200, 450, 0, SB_SACKED },
						 { 450, 600, 1200, SB_RXT },
						 { 600, 700, 0, SB_SACKED } };

		sb_expect(&sb, w, 4);
	}
	assert_int_equal(vnic_tcpl_sb_sacked(&sb), 350);
	assert_int_equal(vnic_tcpl_sb_resent(&sb), 350);
	/* A SACK over half of the fast resend: recovered, one segment. */
	assert_int_equal(vnic_tcpl_sb_mark(&sb, 150, 200, SB_SACKED, 0, MSS, &rec), 50);
	assert_int_equal(rec, 1);
	{
		const struct tcpl_sb_ent w[] = { { 0, 150, 1100, SB_RXT_FAST },
						 { 150, 450, 0, SB_SACKED },
						 { 450, 600, 1200, SB_RXT },
						 { 600, 700, 0, SB_SACKED } };

		sb_expect(&sb, w, 4);
	}
	/* A timer's resend arriving is not a fast recovery. */
	vnic_tcpl_sb_mark(&sb, 450, 600, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(rec, 0);
	/* The cumulative ACK passes 120: two segments of the fast resend. */
	assert_int_equal(vnic_tcpl_sb_ack(&sb, 120, MSS), 2);
	{
		const struct tcpl_sb_ent w[] = { { 120, 150, 1100, SB_RXT_FAST },
						 { 150, 700, 0, SB_SACKED } };

		sb_expect(&sb, w, 2);
	}
	assert_int_equal(vnic_tcpl_sb_ack(&sb, 800, MSS), 1);
	assert_int_equal(sb.n, 0);
}

static void test_sb_split_and_full(void **state)
{
	struct tcpl_sb sb = { 0 };
	uint64_t rec;
	unsigned int i;

	(void)state;
	/* A SACK in the middle of a resend splits it in three. */
	vnic_tcpl_sb_mark(&sb, 0, 1000, SB_RXT, 5000, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 400, 500, SB_SACKED, 0, MSS, &rec);
	{
		const struct tcpl_sb_ent w[] = { { 0, 400, 5000, SB_RXT },
						 { 400, 500, 0, SB_SACKED },
						 { 500, 1000, 5000, SB_RXT } };

		sb_expect(&sb, w, 3);
	}
	/* More ranges than fit: the highest are forgotten, never the lowest. */
	memset(&sb, 0, sizeof(sb));
	for (i = 0; i < TCPL_SB_MAX + 10; i++)
		vnic_tcpl_sb_mark(&sb, 200 * i + 100, 200 * i + 200, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(sb.n, TCPL_SB_MAX);
	assert_int_equal(sb.e[0].start, 100);
	assert_int_equal(sb.e[TCPL_SB_MAX - 1].start, 200 * (TCPL_SB_MAX - 1) + 100);
	/* One more split while full still leaves it sorted and full. */
	vnic_tcpl_sb_mark(&sb, 0, 50, SB_RXT_FAST, 9, MSS, &rec);
	assert_int_equal(sb.n, TCPL_SB_MAX);
	assert_int_equal(sb.e[0].start, 0);
	for (i = 1; i < sb.n; i++)
		assert_true(sb.e[i - 1].end <= sb.e[i].start);
}

static void test_sb_loss_rules(void **state)
{
	struct tcpl_sb sb = { 0 };
	struct tcpl_range r;
	uint64_t rec;

	(void)state;
	/* Holes [0,100), [200,300), [500,600) under SACKed 100-200, 300-500, 600-700. */
	vnic_tcpl_sb_mark(&sb, 100, 200, SB_SACKED, 0, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 300, 500, SB_SACKED, 0, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 600, 700, SB_SACKED, 0, MSS, &rec);
	/* IsLost: 3 segments above [200,300) (2 + 1), only 1 above [500,600). */
	assert_int_equal(vnic_tcpl_sb_lost_below(&sb, 0, MSS, 3), 300);
	assert_int_equal(vnic_tcpl_sb_lost_below(&sb, 0, MSS, 1), 600);
	assert_int_equal(vnic_tcpl_sb_lost_below(&sb, 0, MSS, 4), 100);
	assert_int_equal(vnic_tcpl_sb_lost_below(&sb, 0, MSS, 5), 0);
	/* A SACKed range of 150 bytes is 2 segments. */
	vnic_tcpl_sb_mark(&sb, 800, 950, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(vnic_tcpl_sb_lost_below(&sb, 0, MSS, 3), 600);
	/* The holes, in order, cut to max and limit. */
	assert_true(vnic_tcpl_sb_next_hole(&sb, 0, 1000, 1000, &r));
	assert_int_equal(r.start, 0);
	assert_int_equal(r.end, 100);
	assert_true(vnic_tcpl_sb_next_hole(&sb, 100, 1000, 1000, &r));
	assert_int_equal(r.start, 200);
	assert_int_equal(r.end, 300);
	assert_true(vnic_tcpl_sb_next_hole(&sb, 250, 1000, 1000, &r));
	assert_int_equal(r.start, 250);
	assert_true(vnic_tcpl_sb_next_hole(&sb, 700, 1000, 60, &r));
	assert_int_equal(r.start, 700);
	assert_int_equal(r.end, 760);
	assert_false(vnic_tcpl_sb_next_hole(&sb, 300, 500, 1000, &r));
	assert_false(vnic_tcpl_sb_next_hole(&sb, 0, 0, 1000, &r));
	/* Resent holes are skipped... */
	vnic_tcpl_sb_mark(&sb, 0, 100, SB_RXT_FAST, 950, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 200, 300, SB_RXT_FAST, 1100, MSS, &rec);
	assert_true(vnic_tcpl_sb_next_hole(&sb, 0, 1000, 1000, &r));
	assert_int_equal(r.start, 500);
	/* ...until DupThresh segments sent after them are SACKed: the resend
	 * marked 950 is lost once 3 from 950 up are, the one marked 1100
	 * once 3 from 1100 up are. */
	vnic_tcpl_sb_mark(&sb, 1000, 1100, SB_SACKED, 0, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 1200, 1300, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(vnic_tcpl_sb_lost_resends(&sb, MSS, 3), 0);
	vnic_tcpl_sb_mark(&sb, 1400, 1500, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(vnic_tcpl_sb_lost_resends(&sb, MSS, 3), 1);
	assert_true(vnic_tcpl_sb_next_hole(&sb, 0, 1000, 1000, &r));
	assert_int_equal(r.start, 0);
	assert_int_equal(r.end, 100);
	assert_int_equal(vnic_tcpl_sb_resent(&sb), 100);
	vnic_tcpl_sb_mark(&sb, 1600, 1700, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(vnic_tcpl_sb_lost_resends(&sb, MSS, 3), 1);
	assert_int_equal(vnic_tcpl_sb_resent(&sb), 0);
	/* What was sent after a resend may continue a SACKed range that began
	 * before it: only the part from the mark up counts. */
	memset(&sb, 0, sizeof(sb));
	vnic_tcpl_sb_mark(&sb, 0, 100, SB_RXT_FAST, 150, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 100, 350, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(vnic_tcpl_sb_lost_resends(&sb, MSS, 3), 0);	/* 150-350: 2 */
	vnic_tcpl_sb_mark(&sb, 350, 400, SB_SACKED, 0, MSS, &rec);
	assert_int_equal(sb.n, 2);
	assert_int_equal(vnic_tcpl_sb_lost_resends(&sb, MSS, 3), 1);	/* 150-400: 3 */
	/* A timer forgets every resend, and keeps what was SACKed. */
	vnic_tcpl_sb_mark(&sb, 0, 100, SB_RXT, 400, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 500, 600, SB_RXT_FAST, 400, MSS, &rec);
	vnic_tcpl_sb_forget_resends(&sb);
	assert_int_equal(sb.n, 1);
	assert_int_equal(vnic_tcpl_sb_sacked(&sb), 300);
	assert_int_equal(vnic_tcpl_sb_resent(&sb), 0);
}

static void test_sb_last_unsacked(void **state)
{
	struct tcpl_sb sb = { 0 };
	struct tcpl_range r;
	uint64_t rec;

	(void)state;
	/* Nothing SACKed: the last segment. */
	assert_true(vnic_tcpl_sb_last_unsacked(&sb, 0, 1000, MSS, &r));
	assert_int_equal(r.start, 900);
	assert_int_equal(r.end, 1000);
	/* Less than a segment out. */
	assert_true(vnic_tcpl_sb_last_unsacked(&sb, 950, 1000, MSS, &r));
	assert_int_equal(r.start, 950);
	/* The tail SACKed: the highest hole, not beyond it. */
	vnic_tcpl_sb_mark(&sb, 850, 1000, SB_SACKED, 0, MSS, &rec);
	vnic_tcpl_sb_mark(&sb, 500, 820, SB_SACKED, 0, MSS, &rec);
	assert_true(vnic_tcpl_sb_last_unsacked(&sb, 0, 1000, MSS, &r));
	assert_int_equal(r.start, 820);
	assert_int_equal(r.end, 850);
	/* A resent tail is still not SACKed: it may be probed. */
	vnic_tcpl_sb_mark(&sb, 820, 850, SB_RXT, 1000, MSS, &rec);
	assert_true(vnic_tcpl_sb_last_unsacked(&sb, 0, 1000, MSS, &r));
	assert_int_equal(r.start, 820);
	assert_int_equal(r.end, 850);
	/* Everything above from SACKed: nothing to probe. */
	vnic_tcpl_sb_mark(&sb, 0, 1000, SB_SACKED, 0, MSS, &rec);
	assert_false(vnic_tcpl_sb_last_unsacked(&sb, 0, 1000, MSS, &r));
}

/* ---- the option ---------------------------------------------------------- */

static void test_sack_option_bytes(void **state)
{
	const uint32_t blocks[2][2] = { { 0x01020304, 0x05060708 }, { 0xfffffff0, 0x10 } };
	/* NOP, NOP, SACK (kind 5) of length 2 + 2 * 8, two big-endian blocks. */
	const uint8_t want[] = { 1, 1, 5, 18, 1, 2, 3, 4, 5, 6, 7, 8,
				 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0x10 };
	uint8_t opt[TCPL_SACK_OPT_MAX], bad[TCPL_SACK_OPT_MAX + 8];
	uint32_t got[TCPL_SACK_BLOCKS][2];

	(void)state;
	assert_int_equal(vnic_tcpl_sack_put(opt, blocks, 2), sizeof(want));
	assert_memory_equal(opt, want, sizeof(want));
	assert_int_equal(vnic_tcpl_sack_get(opt, sizeof(want), got), 2);
	assert_memory_equal(got, blocks, sizeof(blocks));
	assert_int_equal(vnic_tcpl_sack_put(opt, blocks, 0), 0);
	/* Behind another option (an MSS option, kind 2 length 4). */
	memcpy(bad, (const uint8_t[]){ 2, 4, 5, 0xb4 }, 4);
	memcpy(bad + 4, want, sizeof(want));
	assert_int_equal(vnic_tcpl_sack_get(bad, 4 + sizeof(want), got), 2);
	/* Malformed: no blocks read. Length not 2 + 8n; too long for what is
	 * there; five blocks; zero length; end of options first. */
	memcpy(bad, want, sizeof(want));
	bad[3] = 17;
	assert_int_equal(vnic_tcpl_sack_get(bad, sizeof(want), got), 0);
	bad[3] = 18;
	assert_int_equal(vnic_tcpl_sack_get(bad, sizeof(want) - 1, got), 0);
	bad[3] = 42;
	memset(bad + sizeof(want), 0, sizeof(bad) - sizeof(want));
	assert_int_equal(vnic_tcpl_sack_get(bad, sizeof(bad), got), 0);
	bad[3] = 0;
	assert_int_equal(vnic_tcpl_sack_get(bad, sizeof(want), got), 0);
	bad[0] = 0;
	bad[3] = 18;
	assert_int_equal(vnic_tcpl_sack_get(bad, sizeof(want), got), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rto_rfc6298_sequence),
		cmocka_unit_test(test_rto_floor_ceiling_pto),
		cmocka_unit_test(test_reasm_holes_and_duplicates),
		cmocka_unit_test(test_reasm_full),
		cmocka_unit_test(test_reasm_random_against_map),
		cmocka_unit_test(test_reasm_sack_blocks),
		cmocka_unit_test(test_sb_mark_and_ack),
		cmocka_unit_test(test_sb_split_and_full),
		cmocka_unit_test(test_sb_loss_rules),
		cmocka_unit_test(test_sb_last_unsacked),
		cmocka_unit_test(test_sack_option_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
