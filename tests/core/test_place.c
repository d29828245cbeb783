// SPDX-License-Identifier: MIT
/*
 * The placement's decisions (src/core/place.c), as tables: what one look
 * saw, and whether the two threads are pinned apart, given back to the
 * scheduler or left as they are, with the quiet windows counted so far.
 * No thread, no clock, no /proc: the inputs are what vnic_place_check
 * would have measured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"

#define STAY VNIC_PLACE_STAY
#define PIN VNIC_PLACE_PIN
#define UNPIN VNIC_PLACE_UNPIN

struct decide_case {
	const char *name;
	bool pinned;
	unsigned int cores, quiet, unpins;
	int others_milli, wait_permille;
	enum vnic_place_act act;
	unsigned int quiet_after;
};

static const struct decide_case decide_cases[] = {
	/* idle machine, not pinned: the second quiet window in a row pins */
	{ "1 first quiet window", false, 2, 0, 0, 0, 0, STAY, 1 },
	{ "2 second quiet window pins", false, 2, 1, 0, 50, 0, PIN, 2 },
	{ "3 quiet up to the threshold", false, 2, 1, 0, VNIC_PLACE_QUIET_MILLI, 0, PIN, 2 },
	{ "4 just above quiet: the count restarts", false, 2, 1, 0, VNIC_PLACE_QUIET_MILLI + 1, 0,
	  STAY, 0 },
	/* a busy neighbour */
	{ "5 busy, not pinned: stays with the scheduler", false, 2, 5, 0, 1000, 0, STAY, 0 },
	{ "6 busy, pinned: unpins", true, 2, 9, 0, 1000, 0, UNPIN, 0 },
	{ "7 at the busy threshold, pinned: unpins", true, 2, 0, 0, VNIC_PLACE_BUSY_MILLI, 0,
	  UNPIN, 0 },
	{ "8 between quiet and busy, pinned: stays", true, 2, 3, 0, 300, 0, STAY, 0 },
	/* a pinned thread that waited on its run queue: something of ours or a short burst */
	{ "9 pinned, a thread queued 20 %: unpins", true, 2, 4, 0, 0, VNIC_PLACE_WAIT_PERMILLE,
	  UNPIN, 0 },
	{ "10 pinned, a thread queued 19.9 %: stays", true, 2, 4, 0, 0,
	  VNIC_PLACE_WAIT_PERMILLE - 1, STAY, 5 },
	{ "11 not pinned, the threads queued (on each other): not a reason", false, 2, 1, 0, 0,
	  900, PIN, 2 },
	/* pinned and quiet: stays, counting */
	{ "12 pinned and quiet: stays", true, 2, 7, 0, 10, 0, STAY, 8 },
	/* fewer than two cores */
	{ "13 one core, not pinned: never pins", false, 1, 50, 0, 0, 0, STAY, 0 },
	{ "14 one core left, pinned: unpins", true, 1, 50, 0, 0, 0, UNPIN, 0 },
	/* no /proc/stat: never quiet, so never pinned by the look */
	{ "15 others unknown, not pinned: stays", false, 2, 1, 0, -1, 0, STAY, 0 },
	{ "16 others unknown, pinned: stays", true, 2, 1, 0, -1, 0, STAY, 0 },
	{ "17 others unknown, pinned, queued: unpins", true, 2, 1, 0, -1, 500, UNPIN, 0 },
	/* each unpin doubles the quiet windows the next pin waits for */
	{ "18 one unpin: 2 quiet windows are not enough", false, 2, 1, 1, 0, 0, STAY, 2 },
	{ "19 one unpin: the fourth pins", false, 2, 3, 1, 0, 0, PIN, 4 },
	{ "20 three unpins: the 15th is not enough", false, 2, 14, 3, 0, 0, STAY, 15 },
	{ "21 three unpins: the 16th pins", false, 2, 15, 3, 0, 0, PIN, 16 },
	{ "22 the hold stops growing: 32 windows after 4 unpins", false, 2, 31, 4, 0, 0, PIN, 32 },
	{ "23 ... and after 40", false, 2, 31, 40, 0, 0, PIN, 32 },
	{ "24 ... 31 are not enough after 40", false, 2, 30, 40, 0, 0, STAY, 31 },
	/* a machine with many cores behaves as one with two */
	{ "25 64 cores, second quiet window pins", false, 64, 1, 0, 0, 0, PIN, 2 },
};

static void test_place_decide_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(decide_cases) / sizeof(decide_cases[0]); i++) {
		const struct decide_case *c = &decide_cases[i];
		struct vnic_place_in in = {
			.pinned = c->pinned, .cores = c->cores, .quiet = c->quiet,
			.unpins = c->unpins, .others_milli = c->others_milli,
			.wait_permille = c->wait_permille,
		};
		unsigned int quiet = 12345;
		enum vnic_place_act act = vnic_place_decide(&in, &quiet);

		if (act != c->act || quiet != c->quiet_after)
			fail_msg("case %s: act %d quiet %u, want act %d quiet %u", c->name, act,
				 quiet, c->act, c->quiet_after);
	}
}

struct first_case {
	const char *name;
	unsigned int cores;
	int others_runnable;
	bool pin;
};

static const struct first_case first_cases[] = {
	{ "1 two cores, nothing else runnable", 2, 0, true },
	{ "2 two cores, a CPU-bound neighbour", 2, 1, false },
	{ "3 two cores, several", 2, 7, false },
	{ "4 one core", 1, 0, false },
	{ "5 no core (affinity unreadable)", 0, 0, false },
	{ "6 procs_running unknown", 2, -1, false },
	{ "7 many cores, nothing else", 16, 0, true },
};

static void test_place_first_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(first_cases) / sizeof(first_cases[0]); i++) {
		const struct first_case *c = &first_cases[i];

		if (vnic_place_first(c->cores, c->others_runnable) != c->pin)
			fail_msg("case %s: want %s", c->name, c->pin ? "pinned" : "not pinned");
	}
}

/*
 * A run as the looks see it, one look after another, each fed the quiet
 * count the last returned and the state the actions left: a quiet start
 * pins, a neighbour unpins at its first look, and the pin after it waits
 * twice as long.
 */
static void test_place_sequence(void **state)
{
	static const struct {
		int others_milli;
		enum vnic_place_act act;
	} seq[] = {
		{ 100, STAY }, { 50, PIN },	/* quiet: pinned at the second look */
		{ 0, STAY }, { 900, UNPIN },	/* a neighbour comes */
		{ 900, STAY }, { 0, STAY },	/* goes: one, two, three quiet looks */
		{ 0, STAY }, { 0, STAY }, { 0, PIN }, /* the fourth pins (one unpin: 2 << 1) */
	};
	struct vnic_place_in in = { .cores = 2 };
	unsigned int quiet = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		enum vnic_place_act act;

		in.others_milli = seq[i].others_milli;
		in.quiet = quiet;
		act = vnic_place_decide(&in, &quiet);
		if (act != seq[i].act)
			fail_msg("look %zu: act %d, want %d", i + 1, act, seq[i].act);
		if (act == PIN)
			in.pinned = true;
		if (act == UNPIN) {
			in.pinned = false;
			in.unpins++;
		}
	}
}

/* The counters a placement that never started reports: all there, all 0. */
static void test_place_counters(void **state)
{
	static const char *const names[] = { "pinned", "pins", "unpins", "checks", "errors" };
	struct vnic_counter out[8];
	struct vnic_place p;
	unsigned int n;

	(void)state;
	memset(&p, 0, sizeof(p));
	n = vnic_place_counters(&p, out, 8);
	assert_int_equal(n, 5);
	for (unsigned int i = 0; i < n; i++) {
		assert_string_equal(out[i].name, names[i]);
		assert_int_equal(out[i].value, 0);
	}
	/* too small an array: filled up to max, the whole count returned */
	assert_int_equal(vnic_place_counters(&p, out, 2), 5);
	/* a check on a placement that is off does nothing */
	vnic_place_check(&p, 1000000000ull);
	assert_int_equal(vnic_ctr_read(&p.stats.checks), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_decide_table),
		cmocka_unit_test(test_place_first_table),
		cmocka_unit_test(test_place_sequence),
		cmocka_unit_test(test_place_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
