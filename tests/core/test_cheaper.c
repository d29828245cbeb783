// SPDX-License-Identifier: MIT
/*
 * The cheaper of two ways (src/core/cheaper.c, docs/MECHANISMS.md section
 * 10) with a fake cost per use instead of a clock. First the rules one at a
 * time, each worked out by hand in its comment: the first uses, the moving
 * average and its cap, the margin and the hold. Then scenarios, each a list
 * of phases with a cost per way, noise and spikes, and what must hold at
 * the end of every phase: the way in use, the switches so far, and that
 * the way in use took all uses of the phase's second half but the probes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"

#define A VNIC_CHEAPER_A
#define B VNIC_CHEAPER_B

static uint64_t est_ns(const struct vnic_cheaper *c, unsigned int way)
{
	return c->est[way] >> VNIC_CHEAPER_FRAC;
}

/* The first use probes B (it has no cost), the next ones are A's, timed until A has one. */
static void test_cheaper_first_uses(void **state)
{
	struct vnic_cheaper c;
	unsigned int flags;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(vnic_cheaper_pick(&c, &flags), B);
	assert_int_equal(flags, VNIC_CHEAPER_TIMED | VNIC_CHEAPER_PROBE);
	/* no sample came back (a failed send): B is tried again */
	assert_int_equal(vnic_cheaper_pick(&c, &flags), B);
	assert_false(vnic_cheaper_sample(&c, B, 800));
	assert_int_equal(est_ns(&c, B), 800);
	assert_int_equal(vnic_cheaper_pick(&c, &flags), A);
	assert_int_equal(flags, VNIC_CHEAPER_TIMED);
	assert_false(vnic_cheaper_sample(&c, A, 1000));
	assert_int_equal(vnic_cheaper_cost(&c, A), 1000);
	/* A has a cost: one use in VNIC_CHEAPER_TIME_EVERY is timed, the 64th probes B */
	for (unsigned int i = 2; i < VNIC_CHEAPER_PROBE_EVERY; i++) {
		assert_int_equal(vnic_cheaper_pick(&c, &flags), A);
		assert_int_equal(flags, i % VNIC_CHEAPER_TIME_EVERY ? 0 : VNIC_CHEAPER_TIMED);
	}
	assert_int_equal(vnic_cheaper_pick(&c, &flags), B);
	assert_int_equal(flags, VNIC_CHEAPER_TIMED | VNIC_CHEAPER_PROBE);
	assert_int_equal(c.way, A);
}

/* The moving average, weight 1/4, a sample capped at 4 times the estimate. */
static void test_cheaper_average(void **state)
{
	static const struct {
		uint64_t sample, est_after;
	} rows[] = {
		{1000, 1000},	/* 1: the first sample is the estimate */
		{2000, 1250},	/* 2: a quarter of the way up */
		{250, 1000},	/* 3: a quarter of the way down */
		{100000, 1750}, /* 4: counted as 4000: 1000 + 3000 / 4 */
		{1750, 1750},	/* 5: where it is */
		{0, 1313},	/* 6: 1750 - 1750 / 4, rounded */
	};
	struct vnic_cheaper c;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (unsigned int i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		vnic_cheaper_sample(&c, A, rows[i].sample);
		assert_int_equal(vnic_cheaper_cost(&c, A), rows[i].est_after);
	}
}

/* The margin (cheaper by more than 1/8) and the hold (3 probe samples in a row). */
static void test_cheaper_margin_hold(void **state)
{
	struct vnic_cheaper c;

	(void)state;
	memset(&c, 0, sizeof(c));
	vnic_cheaper_sample(&c, A, 1000);
	/* 900 + 900 / 8 = 1012: not cheaper by more than 1/8, never counts */
	for (unsigned int i = 0; i < 10; i++)
		assert_false(vnic_cheaper_sample(&c, B, 900));
	assert_int_equal(c.ahead, 0);
	/* 820 moves B's estimate to 880: 880 + 110 < 1000 */
	assert_false(vnic_cheaper_sample(&c, B, 820));
	assert_int_equal(c.ahead, 1);
	/* a sample of A itself decides nothing */
	assert_false(vnic_cheaper_sample(&c, A, 1000));
	assert_int_equal(c.ahead, 1);
	assert_false(vnic_cheaper_sample(&c, B, 820));
	assert_int_equal(c.ahead, 2);
	/* one probe that disagrees (B now 999) starts the count again */
	assert_false(vnic_cheaper_sample(&c, B, 1400));
	assert_int_equal(c.ahead, 0);
	/* 600s take B to 899 (not yet), 824, 768, 726: the third in a row switches */
	assert_false(vnic_cheaper_sample(&c, B, 600));
	assert_int_equal(c.ahead, 0);
	assert_false(vnic_cheaper_sample(&c, B, 600));
	assert_false(vnic_cheaper_sample(&c, B, 600));
	assert_int_equal(c.ahead, 2);
	assert_true(vnic_cheaper_sample(&c, B, 600));
	assert_int_equal(c.way, B);
	assert_int_equal(c.ahead, 0);
	/* now A is the other way: its samples are the ones that decide */
	assert_false(vnic_cheaper_sample(&c, B, 700));
	assert_false(vnic_cheaper_sample(&c, A, 1000));
	assert_int_equal(c.ahead, 0);
}

/* --- scenarios ------------------------------------------------------------------- */

struct phase {
	uint64_t cost[2];	  /* ns per use of A and B */
	unsigned int noise_pct;	  /* each sample off by up to this much either way */
	unsigned int spike_every; /* every Nth timed use of the way in use costs 1000x (0: none) */
	unsigned int uses;
	unsigned int way;      /* in use at the end */
	unsigned int switches; /* since the start */
};

struct scenario {
	const char *name;
	unsigned int nphases;
	struct phase ph[3];
};

static const struct scenario scenarios[] = {
	/* 1 */
	{"converges to the cheaper", 1, {{{1000, 500}, 10, 0, 4000, B, 1}}},
	/* 2 */
	{"stays on the cheaper", 1, {{{500, 1000}, 10, 0, 4000, A, 0}}},
	/* 3: B 8% cheaper, noise 3%: inside the margin, never switches */
	{"holds under noise inside the margin", 1, {{{1000, 920}, 3, 0, 20000, A, 0}}},
	/* 4 */
	{"holds under noise the other way round", 1, {{{920, 1000}, 3, 0, 20000, A, 0}}},
	/* 5: a use of A preempted now and then does not teach that A is dear */
	{"a preempted use is not a verdict", 1, {{{500, 1000}, 5, 40, 20000, A, 0}}},
	/* 6: the boundary changes under it, three times */
	{"follows a change",
	 3,
	 {{{1000, 500}, 10, 0, 4000, B, 1},
	  {{1000, 3000}, 10, 0, 8000, A, 2},
	  {{4000, 1000}, 10, 0, 8000, B, 3}}},
	/* 7: the way not in use gets cheaper: only its probes can tell */
	{"notices the other way getting cheaper",
	 2,
	 {{{1000, 5000}, 10, 0, 4000, A, 0}, {{1000, 200}, 10, 0, 8000, B, 1}}},
};

/* A deterministic noise source: the same run every time. */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static uint64_t cost_of(const struct phase *ph, unsigned int way, uint32_t *seed)
{
	int64_t c = (int64_t)ph->cost[way];
	int64_t span = c * ph->noise_pct / 100;

	if (span)
		c += (int64_t)(lcg(seed) % (uint32_t)(2 * span + 1)) - span;
	return (uint64_t)c;
}

static void run_scenario(const struct scenario *s)
{
	struct vnic_cheaper c;
	unsigned int switches = 0, timed_in_use = 0;
	uint32_t seed = 12345;

	memset(&c, 0, sizeof(c));
	for (unsigned int p = 0; p < s->nphases; p++) {
		const struct phase *ph = &s->ph[p];
		unsigned int half_uses = 0, half_way = 0, half_probes = 0;

		for (unsigned int u = 0; u < ph->uses; u++) {
			unsigned int flags;
			unsigned int way = vnic_cheaper_pick(&c, &flags);
			bool second_half = u >= ph->uses / 2;

			if (second_half) {
				half_uses++;
				half_way += way == ph->way;
				half_probes += !!(flags & VNIC_CHEAPER_PROBE);
			}
			if (!(flags & VNIC_CHEAPER_TIMED))
				continue;
			uint64_t ns = cost_of(ph, way, &seed);

			if (way == c.way && ph->spike_every &&
			    ++timed_in_use % ph->spike_every == 0)
				ns *= 1000;
			switches += vnic_cheaper_sample(&c, (enum vnic_cheaper_way)way, ns);
		}
		print_message("%s, phase %u: way %u, switches %u, est %lu / %lu ns\n", s->name,
			      p + 1, c.way, switches, (unsigned long)vnic_cheaper_cost(&c, A),
			      (unsigned long)vnic_cheaper_cost(&c, B));
		assert_int_equal(c.way, ph->way);
		assert_int_equal(switches, ph->switches);
		/* settled by the second half: every use the expected way's but the probes */
		assert_int_equal(half_way, half_uses - half_probes);
		assert_true(half_probes <= half_uses / VNIC_CHEAPER_PROBE_EVERY + 1);
	}
}

static void test_cheaper_scenarios(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario(&scenarios[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cheaper_first_uses),
		cmocka_unit_test(test_cheaper_average),
		cmocka_unit_test(test_cheaper_margin_hold),
		cmocka_unit_test(test_cheaper_scenarios),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
