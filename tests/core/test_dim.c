// SPDX-License-Identifier: MIT
/*
 * The dynamic interrupt moderation walk (src/core/dim.c) against scripts
 * worked out by hand from docs/MECHANISMS.md section 9: each row is one
 * measurement's rates and the profile and state the walk must be in after
 * it. Then the sampling: no decision before VNIC_DIM_SAMPLE_EVENTS
 * interrupts, rates per millisecond from the counters' deltas.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"

enum { NPROF = 4, MAX_ROWS = 12 };

struct row {
	uint64_t bpms, ppms, epms;
	unsigned int prof;
	enum vnic_dim_tune tune;
};

struct script {
	const char *name;
	unsigned int n;
	struct row rows[MAX_ROWS];
	unsigned int moves; /* profile changes at the end */
};

#define R(b, p, e, prof, t)                                                                        \
	{                                                                                          \
		b, p, e, prof, VNIC_DIM_##t                                                        \
	}

static const struct script scripts[] = {
	/* 1: every step adds bytes: up to the top of the table, parked there */
	{"climbs while bytes grow",
	 4,
	 {R(100, 1, 1, 1, UP), R(200, 1, 1, 2, UP), R(300, 1, 1, 3, UP), R(400, 1, 1, 3, PARKED)},
	 3},
	/* 2: the first step costs bytes: back to none, parked */
	{"a step that costs bytes is taken back",
	 2,
	 {R(100, 1, 1, 1, UP), R(50, 1, 1, 0, PARKED)},
	 2},
	/*
	 * 3: parked on profile 0, whose measurement (100) stays the reference,
	 * not the worse one of profile 1 (50): 95 and 109 are within 10% of it,
	 * 89 is not, and the walk starts up again
	 */
	{"parked until the rates move",
	 5,
	 {R(100, 1, 1, 1, UP), R(50, 1, 1, 0, PARKED), R(95, 1, 1, 0, PARKED),
	  R(109, 1, 1, 0, PARKED), R(89, 1, 1, 1, UP)},
	 3},
	/* 4: bytes even: more packets is better, fewer worse */
	{"bytes even, packets decide",
	 3,
	 {R(1000, 10, 1, 1, UP), R(1000, 20, 1, 2, UP), R(1000, 10, 1, 1, PARKED)},
	 3},
	/* 5: bytes and packets even: fewer interrupts is better, the same is not */
	{"fewer interrupts for the same work",
	 3,
	 {R(1000, 10, 100, 1, UP), R(1000, 10, 50, 2, UP), R(1000, 10, 50, 1, PARKED)},
	 3},
	/* 6: parked at the top, a change walks down first; a worse step is taken back */
	{"down first from a park",
	 7,
	 {R(100, 1, 1, 1, UP), R(200, 1, 1, 2, UP), R(300, 1, 1, 3, UP), R(400, 1, 1, 3, PARKED),
	  R(800, 1, 1, 2, DOWN), R(900, 1, 1, 1, DOWN), R(500, 1, 1, 2, PARKED)},
	 6},
	/*
	 * 7: each excursion taken back rests longer: 1 measurement, then 2,
	 * deaf to changes meanwhile
	 */
	{"failed excursions rest longer",
	 8,
	 {R(100, 1, 1, 1, UP), R(50, 1, 1, 0, PARKED), R(200, 1, 1, 0, PARKED),
	  R(200, 1, 1, 1, UP), R(100, 1, 1, 0, PARKED), R(300, 1, 1, 0, PARKED),
	  R(300, 1, 1, 0, PARKED), R(300, 1, 1, 1, UP)},
	 5},
	/* 8: nothing flows: the first measurement is no better than none, parked at 0 */
	{"idle stays put",
	 3,
	 {R(0, 0, 0, 0, PARKED), R(0, 0, 0, 0, PARKED), R(0, 0, 0, 0, PARKED)},
	 0},
};

static void test_dim_scripts(void **state)
{
	(void)state;
	for (unsigned int s = 0; s < sizeof(scripts) / sizeof(scripts[0]); s++) {
		const struct script *sc = &scripts[s];
		struct vnic_dim d;
		unsigned int was = 0;

		vnic_dim_init(&d, NPROF);
		for (unsigned int i = 0; i < sc->n; i++) {
			const struct row *r = &sc->rows[i];
			struct vnic_dim_rates rates = {
				.ppms = r->ppms, .bpms = r->bpms, .epms = r->epms};
			bool moved = vnic_dim_decide(&d, &rates);

			if (d.prof != r->prof || d.tune != r->tune || moved != (d.prof != was))
				fail_msg("script %u (%s), row %u: profile %u state %d, want %u %d",
					 s + 1, sc->name, i, d.prof, d.tune, r->prof, r->tune);
			was = d.prof;
		}
		if (d.moves != sc->moves)
			fail_msg("script %u (%s): %llu moves, want %u", s + 1, sc->name,
				 (unsigned long long)d.moves, sc->moves);
	}
}

/* The table's ends hold whatever the caller asks for. */
static void test_dim_table_bounds(void **state)
{
	struct vnic_dim d;

	(void)state;
	vnic_dim_init(&d, 1);
	assert_int_equal(d.nprof, 2);
	vnic_dim_init(&d, VNIC_DIM_MAX_PROFILES + 5);
	assert_int_equal(d.nprof, VNIC_DIM_MAX_PROFILES);
	assert_int_equal(d.prof, 0);
	assert_int_equal(d.tune, VNIC_DIM_UP);
}

/* Samples: the first starts a measurement; one decision per VNIC_DIM_SAMPLE_EVENTS. */
static void test_dim_sampling(void **state)
{
	struct vnic_dim d;
	struct vnic_dim_sample s = {.ns = 1000000000, .pkts = 5, .bytes = 5000, .events = 7};

	(void)state;
	vnic_dim_init(&d, NPROF);
	assert_false(vnic_dim_update(&d, &s));
	assert_true(d.measuring);
	/* 63 interrupts later: not yet a measurement */
	s.ns += 2000000;
	s.events += VNIC_DIM_SAMPLE_EVENTS - 1;
	s.pkts += 200;
	s.bytes += 300000;
	assert_false(vnic_dim_update(&d, &s));
	assert_int_equal(d.samples, 0);
	/* the 64th: 2 ms after the start, 200 packets, 300000 bytes, 64 events */
	s.events += 1;
	assert_true(vnic_dim_update(&d, &s));
	assert_int_equal(d.samples, 1);
	assert_int_equal(d.prev.ppms, 100);
	assert_int_equal(d.prev.bpms, 150000);
	assert_int_equal(d.prev.epms, 32);
	assert_int_equal(d.prof, 1);
	/* the next measurement starts here: the same counters decide nothing */
	assert_false(vnic_dim_update(&d, &s));
	assert_int_equal(d.samples, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dim_scripts),
		cmocka_unit_test(test_dim_table_bounds),
		cmocka_unit_test(test_dim_sampling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
