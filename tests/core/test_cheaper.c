// SPDX-License-Identifier: MIT
/*
 * The cheaper of two ways (src/core/cheaper.c, docs/MECHANISMS.md section
 * 10) with a fake cost per use instead of a clock. First the rules one at a
 * time, each worked out by hand in its comment: the first uses, the moving
 * average and its cap, the margin and the hold, the probe period backing
 * off and falling back. Then scenarios, each a list
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

/* Rounded to ns, as vnic_cheaper_cost rounds the estimate. */
static uint64_t ns_of(uint64_t v)
{
	return (v + (1u << (VNIC_CHEAPER_FRAC - 1))) >> VNIC_CHEAPER_FRAC;
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
	/* no sample again: A is timed until it has a cost, and nothing is probed meanwhile */
	assert_int_equal(vnic_cheaper_pick(&c, &flags), A);
	assert_int_equal(flags, VNIC_CHEAPER_TIMED);
	assert_int_equal(c.period, 0);
	assert_false(vnic_cheaper_sample(&c, A, 1000));
	assert_int_equal(vnic_cheaper_cost(&c, A), 1000);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MIN);
	/* A has a cost: one use in VNIC_CHEAPER_TIME_EVERY is timed, the 64th probes B */
	for (unsigned int i = 1; i < VNIC_CHEAPER_PROBE_MIN; i++) {
		assert_int_equal(vnic_cheaper_pick(&c, &flags), A);
		assert_int_equal(flags, i % VNIC_CHEAPER_TIME_EVERY ? 0 : VNIC_CHEAPER_TIMED);
	}
	assert_int_equal(vnic_cheaper_pick(&c, &flags), B);
	assert_int_equal(flags, VNIC_CHEAPER_TIMED | VNIC_CHEAPER_PROBE);
	assert_int_equal(c.way, A);
}

/* Uses of the way in use until the next probe, which is left unsampled. */
static unsigned int uses_to_probe(struct vnic_cheaper *c)
{
	unsigned int flags, n = 0;

	while (vnic_cheaper_pick(c, &flags) == c->way) {
		assert_int_equal(flags & VNIC_CHEAPER_PROBE, 0);
		n++;
	}
	assert_int_equal(flags, VNIC_CHEAPER_TIMED | VNIC_CHEAPER_PROBE);
	return n;
}

/*
 * The probe period: it doubles at each probe that finds the other way
 * dearer by the margin plus both deviations, up to VNIC_CHEAPER_PROBE_MAX,
 * and is back at VNIC_CHEAPER_PROBE_MIN at a probe whose sample is outside
 * what the other way's estimate expects (so that the probes that follow
 * the change come soon) and at a switch.
 */
static void test_cheaper_backoff(void **state)
{
	struct vnic_cheaper c;
	unsigned int period = VNIC_CHEAPER_PROBE_MIN, n;

	(void)state;
	memset(&c, 0, sizeof(c));
	vnic_cheaper_sample(&c, B, 2000);
	vnic_cheaper_sample(&c, A, 1000);
	/* B dearer at every probe: 64, 128, ... 4096, and there it stays */
	for (unsigned int i = 0; i < 10; i++) {
		assert_int_equal(uses_to_probe(&c), period - 1);
		assert_false(vnic_cheaper_sample(&c, B, 2000));
		if (period < VNIC_CHEAPER_PROBE_MAX)
			period *= 2;
		assert_int_equal(c.period, period);
	}
	assert_int_equal(period, VNIC_CHEAPER_PROBE_MAX);
	/* a probe inside what B's estimate expects (2000 +- 250) agrees */
	assert_int_equal(uses_to_probe(&c), VNIC_CHEAPER_PROBE_MAX - 1);
	assert_false(vnic_cheaper_sample(&c, B, 2200));
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	/*
	 * B gets cheap: the first probe that sees it is far outside that and
	 * puts the period back at 64; the next ones are 64 uses apart while
	 * B's estimate comes down and its deviation decays, until three in a
	 * row find it cheaper and switch
	 */
	assert_int_equal(uses_to_probe(&c), VNIC_CHEAPER_PROBE_MAX - 1);
	assert_false(vnic_cheaper_sample(&c, B, 100));
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MIN);
	assert_int_equal(c.ahead, 0);
	for (n = 0; n < 20 && c.way == A; n++) {
		assert_int_equal(uses_to_probe(&c), VNIC_CHEAPER_PROBE_MIN - 1);
		vnic_cheaper_sample(&c, B, 100);
	}
	assert_int_equal(c.way, B);
	assert_true(n >= VNIC_CHEAPER_HOLD);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MIN);
	/* and after the switch A is probed from 64 again */
	assert_int_equal(uses_to_probe(&c), VNIC_CHEAPER_PROBE_MIN - 1);
}

/*
 * The way in use moving by more than its deviation plus the margin since
 * the last probe puts the period back at 64, so the next probe comes at
 * once when the period was long; an outlier does not, nor does the noise
 * of a steady cost.
 */
static void test_cheaper_backoff_reset(void **state)
{
	struct vnic_cheaper c;

	(void)state;
	memset(&c, 0, sizeof(c));
	vnic_cheaper_sample(&c, B, 2000);
	vnic_cheaper_sample(&c, A, 1000);
	for (unsigned int i = 0; i < 7; i++) {
		uses_to_probe(&c);
		vnic_cheaper_sample(&c, B, 2000);
	}
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	assert_int_equal(ns_of(c.ref), 1000);
	/* a thousand uses into the period, untimed here */
	for (unsigned int i = 0; i < 1000; i++) {
		unsigned int flags;

		assert_int_equal(vnic_cheaper_pick(&c, &flags), A);
	}
	/* steady noise, 950 to 1050: nothing moves */
	for (unsigned int i = 0; i < 100; i++)
		vnic_cheaper_sample(&c, A, i % 2 ? 950 : 1050);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	/* one sample preempted (counted as 4000): the deviation rises with it */
	vnic_cheaper_sample(&c, A, 1000000);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	for (unsigned int i = 0; i < 40; i++)
		vnic_cheaper_sample(&c, A, 1000);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	/*
	 * A doubles to 2000. est 1250 1438 1578 1684, dev (from ~0) 250 375
	 * 422 422: moved 684 > 422 + 1684 / 8 = 632 at the fourth sample.
	 */
	for (unsigned int i = 0; i < 3; i++) {
		vnic_cheaper_sample(&c, A, 2000);
		assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	}
	vnic_cheaper_sample(&c, A, 2000);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MIN);
	/* uses is far past 64 now: the next pick probes */
	assert_int_equal(uses_to_probe(&c), 0);
	/* the same for a way in use that gets cheaper */
	vnic_cheaper_sample(&c, B, 4000);
	for (unsigned int i = 0; i < 12 && c.period < VNIC_CHEAPER_PROBE_MAX; i++) {
		uses_to_probe(&c);
		vnic_cheaper_sample(&c, B, 4000);
	}
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MAX);
	for (unsigned int i = 0; i < 8 && c.period == VNIC_CHEAPER_PROBE_MAX; i++)
		vnic_cheaper_sample(&c, A, 500);
	assert_int_equal(c.period, VNIC_CHEAPER_PROBE_MIN);
	assert_int_equal(c.way, A);
}

/*
 * The moving average and the mean deviation, weight 1/4, a sample capped at
 * 4 times the estimate; the deviation is the sample's distance from the
 * estimate before it moves.
 */
static void test_cheaper_average(void **state)
{
	static const struct {
		uint64_t sample, est_after, dev_after;
	} rows[] = {
		{1000, 1000, 0},      /* 1: the first sample is the estimate, no deviation yet */
		{2000, 1250, 250},    /* 2: a quarter of the way up; 1000 off: dev 0 + 1000 / 4 */
		{250, 1000, 438},     /* 3: down a quarter; 1000 off: 250 + 750 / 4 = 437.5 */
		{100000, 1750, 1078}, /* 4: counted as 4000: 1000 + 3000 / 4; 437.5 + 2562.5 / 4 */
		{1750, 1750, 809},    /* 5: where it is; the deviation decays: 1078.1 * 3 / 4 */
		{0, 1313, 1044},      /* 6: 1750 - 1750 / 4; 808.6 + (1750 - 808.6) / 4 */
	};
	struct vnic_cheaper c;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (unsigned int i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		vnic_cheaper_sample(&c, A, rows[i].sample);
		assert_int_equal(vnic_cheaper_cost(&c, A), rows[i].est_after);
		assert_int_equal(ns_of(c.dev[A]), rows[i].dev_after);
	}
}

/*
 * The margin (cheaper by more than 1/8 plus both deviations) and the hold
 * (3 probe samples in a row). Samples equal to their estimate keep it
 * where it is and shrink its deviation by a quarter, so each row's
 * figures follow from the one before.
 */
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
	/* B at 800: 800 + 100 < 1000, but A scatters by 120: 1020, no count */
	c.est[B] = 800 << VNIC_CHEAPER_FRAC;
	c.dev[A] = 120 << VNIC_CHEAPER_FRAC;
	assert_false(vnic_cheaper_sample(&c, B, 800));
	assert_int_equal(c.ahead, 0);
	/* a sample of A itself decides nothing; A's deviation is 90 now: 990 < 1000 */
	assert_false(vnic_cheaper_sample(&c, A, 1000));
	assert_int_equal(ns_of(c.dev[A]), 90);
	assert_int_equal(c.ahead, 0);
	assert_false(vnic_cheaper_sample(&c, B, 800));
	assert_int_equal(c.ahead, 1);
	assert_false(vnic_cheaper_sample(&c, B, 800));
	assert_int_equal(c.ahead, 2);
	/* one probe that disagrees starts the count again: B is 900 now, deviating by 100 */
	assert_false(vnic_cheaper_sample(&c, B, 1200));
	assert_int_equal(ns_of(c.est[B]), 900);
	assert_int_equal(ns_of(c.dev[B]), 100);
	assert_int_equal(c.ahead, 0);
	/* B steady at 600 and A's deviation gone: three in a row switch */
	c.est[B] = 600 << VNIC_CHEAPER_FRAC;
	c.dev[B] = 0;
	c.dev[A] = 0;
	assert_false(vnic_cheaper_sample(&c, B, 600));
	assert_false(vnic_cheaper_sample(&c, B, 600));
	assert_int_equal(c.ahead, 2);
	assert_true(vnic_cheaper_sample(&c, B, 600));
	assert_int_equal(c.way, B);
	assert_int_equal(c.ahead, 0);
	/* now A is the other way: its samples are the ones that decide */
	assert_false(vnic_cheaper_sample(&c, B, 600));
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
	unsigned int slow_pct; /* this share of samples costs SLOW_NS instead (a doorbell) */
	unsigned int period;   /* in the second half, at most a probe per this many uses (0: 64) */
};

enum { SLOW_NS = 2000 };

struct scenario {
	const char *name;
	unsigned int nphases;
	struct phase ph[3];
};

enum { SETTLED = VNIC_CHEAPER_PROBE_MAX };

static const struct scenario scenarios[] = {
	/* 1: and once settled, the probes back off to one in 4096 uses */
	{"converges to the cheaper", 1, {{{1000, 500}, 10, 0, 20000, B, 1, 0, SETTLED}}},
	/* 2 */
	{"stays on the cheaper", 1, {{{500, 1000}, 10, 0, 20000, A, 0, 0, SETTLED}}},
	/* 3: B 8% cheaper, noise 3%: inside the margin, never switches */
	{"holds under noise inside the margin", 1, {{{1000, 920}, 3, 0, 20000, A, 0, 0, 0}}},
	/* 4 */
	{"holds under noise the other way round", 1, {{{920, 1000}, 3, 0, 20000, A, 0, 0, 0}}},
	/* 5: a use of A preempted now and then does not teach that A is dear, nor reset the probes */
	{"a preempted use is not a verdict", 1, {{{500, 1000}, 5, 40, 20000, A, 0, 0, SETTLED}}},
	/*
	 * 6: the boundary changes under it, three times, each time on the way
	 * in use: its own samples see it and the probes come at once again,
	 * from a period backed off to 4096 (the phases are long enough for it)
	 */
	{"follows a change",
	 3,
	 {{{1000, 500}, 10, 0, 10000, B, 1, 0, 0},
	  {{1000, 3000}, 10, 0, 10000, A, 2, 0, 0},
	  {{4000, 1000}, 10, 0, 10000, B, 3, 0, 0}}},
	/*
	 * 7: the way not in use gets cheaper after the probes backed off: only
	 * its probes can tell, the next one at most VNIC_CHEAPER_PROBE_MAX uses
	 * away, so the phase is 3 of them long
	 */
	{"notices the other way getting cheaper",
	 2,
	 {{{1000, 5000}, 10, 0, 20000, A, 0, 0, SETTLED}, {{1000, 200}, 10, 0, 12000, B, 1, 0, 0}}},
	/*
	 * 8: a split layout's hcall: 330 and 300 ns (inside the margin), but
	 * a quarter of the sends of either way ring a doorbell and take 2 us
	 */
	{"a bimodal boundary does not flip it", 1, {{{330, 300}, 5, 0, 40000, A, 0, 25, 0}}},
	/* 9: the same scatter, with B cheaper by far: still found */
	{"a bimodal boundary still shows a real gap", 1, {{{3000, 300}, 5, 0, 8000, B, 1, 25, 0}}},
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
	if (ph->slow_pct && lcg(seed) % 100 < ph->slow_pct)
		c = SLOW_NS;
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
		print_message("%s, phase %u: way %u, switches %u, est %lu / %lu ns, "
			      "second half: %u probes in %u uses\n",
			      s->name, p + 1, c.way, switches, (unsigned long)vnic_cheaper_cost(&c, A),
			      (unsigned long)vnic_cheaper_cost(&c, B), half_probes, half_uses);
		assert_int_equal(c.way, ph->way);
		assert_int_equal(switches, ph->switches);
		/* settled by the second half: every use the expected way's but the probes */
		assert_int_equal(half_way, half_uses - half_probes);
		assert_true(half_probes <= half_uses / (ph->period ? ph->period : VNIC_CHEAPER_PROBE_MIN) + 1);
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
		cmocka_unit_test(test_cheaper_backoff),
		cmocka_unit_test(test_cheaper_backoff_reset),
		cmocka_unit_test(test_cheaper_scenarios),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
