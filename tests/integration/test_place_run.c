// SPDX-License-Identifier: MIT
/*
 * The placement of the bench's two threads (--pin adaptive, src/core/place.c)
 * around real runs: which layouts it looks in, and that its counters add up.
 * Whether it pins depends on what else the machine runs, so that is not
 * asserted; what is asserted holds either way: the looks happen (one per
 * 200 ms of traffic) only where the placement applies, and the threads are
 * pinned at the end exactly when they were pinned once more than unpinned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"

static uint64_t counter(const struct vnic_bench_run *r, const char *name)
{
	static struct vnic_counter all[8192];
	unsigned int n = vnic_bench_counters((void *)r, all, 8192);
	const struct vnic_counter *c = vnic_counter_find(all, n < 8192 ? n : 8192, name);

	if (!c)
		fail_msg("no counter %s", name);
	return c ? c->value : 0;
}

struct place_seen {
	uint64_t checks, pins, unpins, pinned, errors;
};

/* One rr run of 0.5 s with the extra options, its place.* counters. */
static void run(const char *extra, struct place_seen *s)
{
	struct vnic_bench_run *r = calloc(1, sizeof(*r));
	static struct vnic_bench_opts o;
	static char buf[256];
	char *argv[16], *save;
	int argc = 0;

	assert_non_null(r);
	snprintf(buf, sizeof(buf), "bench rr --duration 0.5 --quiet --no-ctl %s", extra);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 15; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	assert_int_equal(vnic_bench_parse(argc, argv, &o), 0);
	r->o = &o;
	assert_int_equal(vnic_bench_run(r), 0);
	s->checks = counter(r, "place.checks");
	s->pins = counter(r, "place.pins");
	s->unpins = counter(r, "place.unpins");
	s->pinned = counter(r, "place.pinned");
	s->errors = counter(r, "place.errors");
	print_message("%-14s checks %llu pins %llu unpins %llu pinned %llu\n", extra,
		      (unsigned long long)s->checks, (unsigned long long)s->pins,
		      (unsigned long long)s->unpins, (unsigned long long)s->pinned);
	vnic_bench_cleanup(r);
	free(r);
}

/* The default looks, and its counters add up. */
static void test_place_default_looks(void **state)
{
	struct place_seen s;

	(void)state;
	run("", &s);
	assert_true(s.checks >= 1);
	assert_int_equal(s.errors, 0);
	assert_true(s.pinned <= 1);
	/* pins and unpins alternate, the first a pin */
	assert_int_equal(s.pins, s.unpins + s.pinned);
	/* the explicit name is the default */
	run("--pin adaptive", &s);
	assert_true(s.checks >= 1);
	assert_int_equal(s.pins, s.unpins + s.pinned);
}

/* Where there is nothing to place, or the user chose: no look, no pin. */
static void test_place_not_where_it_does_not_apply(void **state)
{
	static const char *const layouts[] = { "--threads 1", "--pin none", "--pin auto" };
	struct place_seen s;

	(void)state;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		run(layouts[i], &s);
		assert_int_equal(s.checks, 0);
		assert_int_equal(s.pins, 0);
		assert_int_equal(s.unpins, 0);
		assert_int_equal(s.pinned, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_default_looks),
		cmocka_unit_test(test_place_not_where_it_does_not_apply),
	};

	/* the control sockets are off (--no-ctl): nothing goes to /run/vnic */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
