// SPDX-License-Identifier: MIT
/*
 * Tracing: scripted call patterns, nested and from several threads, checked
 * against the rows and the text report exactly (paths, nesting, hit counts);
 * nothing recorded while off; reset; depth and mismatch handling; the
 * fixed table of point slots running out.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"

enum { MAX_ROWS = 64 };

/*
 * Points as the layers above declare theirs (core knows none in advance),
 * with the driver's and device's names so that the patterns read like
 * real traces.
 */
static struct vnic_trace_point xmit = VNIC_TRACE_POINT("xmit");
static struct vnic_trace_point tx_flush = VNIC_TRACE_POINT("tx_flush");
static struct vnic_trace_point send_direct = VNIC_TRACE_POINT("send_direct");
static struct vnic_trace_point send_indirect = VNIC_TRACE_POINT("send_indirect");
static struct vnic_trace_point csum_help = VNIC_TRACE_POINT("csum_help");
static struct vnic_trace_point napi_poll = VNIC_TRACE_POINT("napi_poll");
static struct vnic_trace_point replenish = VNIC_TRACE_POINT("replenish");
static struct vnic_trace_point gro_receive = VNIC_TRACE_POINT("gro_receive");
static struct vnic_trace_point deliver = VNIC_TRACE_POINT("deliver");
static struct vnic_trace_point dev_tx = VNIC_TRACE_POINT("dev_tx");
static struct vnic_trace_point dev_rx = VNIC_TRACE_POINT("dev_rx");

static struct vnic_trace_point *const all_points[] = {
	&xmit,	    &tx_flush,	  &send_direct, &send_indirect, &csum_help, &napi_poll,
	&replenish, &gro_receive, &deliver,	&dev_tx,	&dev_rx,
};

static struct vnic_trace_row rows[MAX_ROWS];

static unsigned int get_rows(void)
{
	unsigned int n = vnic_trace_rows(rows, MAX_ROWS);

	assert_true(n <= MAX_ROWS);
	return n;
}

/* The row of the path given as point names from the top, or -1. */
static int find(unsigned int n, const char *path)
{
	char buf[256], *save = NULL, *tok;
	int parent = -1, found = -1;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ">", &save); tok; tok = strtok_r(NULL, ">", &save)) {
		found = -1;
		for (unsigned int i = 0; i < n; i++) {
			if (rows[i].parent_row == parent && !strcmp(rows[i].name, tok)) {
				found = (int)i;
				break;
			}
		}
		if (found < 0)
			return -1;
		parent = found;
	}
	return found;
}

static uint64_t hits(unsigned int n, const char *path)
{
	int r = find(n, path);

	assert_true(r >= 0);
	return rows[r].hits;
}

#define TP(tp, body)                                                                               \
	do {                                                                                       \
		uint64_t t0_##tp = vnic_trace_begin(&tp);                                          \
		body;                                                                              \
		vnic_trace_end(&tp, t0_##tp);                                                      \
	} while (0)

/*
 * The pattern: k xmits that batch (xmit > tx_flush > send_indirect), one
 * that goes direct, and a NAPI poll that receives two packets into GRO (the
 * second hands a batch up from inside GRO), delivers once more at the end
 * and replenishes.
 */
static void pattern(unsigned int k)
{
	for (unsigned int i = 0; i < k; i++)
		TP(xmit, TP(tx_flush, TP(send_indirect, (void)0)));
	TP(xmit, TP(csum_help, (void)0); TP(send_direct, (void)0));
	TP(napi_poll, {
		TP(gro_receive, (void)0);
		TP(gro_receive, TP(deliver, (void)0));
		TP(deliver, (void)0);
		TP(replenish, TP(send_indirect, (void)0));
	});
}

/*
 * What pattern(k) run m times (in all threads) must show, row by row, in
 * order: siblings by name, whatever order they were called (and so given
 * slots) in.
 */
static void check_pattern(unsigned int k, unsigned int m)
{
	static const struct {
		const struct vnic_trace_point *point;
		const char *name, *parent;
		unsigned int depth;
		int parent_row;
	} want[] = {
		{&napi_poll, "napi_poll", "", 0, -1},
		{&deliver, "deliver", "napi_poll", 1, 0},
		{&gro_receive, "gro_receive", "napi_poll", 1, 0},
		{&deliver, "deliver", "gro_receive", 2, 2},
		{&replenish, "replenish", "napi_poll", 1, 0},
		{&send_indirect, "send_indirect", "replenish", 2, 4},
		{&xmit, "xmit", "", 0, -1},
		{&csum_help, "csum_help", "xmit", 1, 6},
		{&send_direct, "send_direct", "xmit", 1, 6},
		{&tx_flush, "tx_flush", "xmit", 1, 6},
		{&send_indirect, "send_indirect", "tx_flush", 2, 9},
	};
	const uint64_t want_hits[] = {m, m, 2 * m, m, m, m, (k + 1) * m, m, m, k * m, k * m};
	unsigned int n = get_rows();

	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (unsigned int i = 0; i < n; i++) {
		assert_string_equal(rows[i].name, want[i].name);
		assert_string_equal(rows[i].parent, want[i].parent);
		assert_int_equal(rows[i].depth, want[i].depth);
		assert_int_equal(rows[i].parent_row, want[i].parent_row);
		assert_int_equal(rows[i].hits, want_hits[i]);
		assert_ptr_equal(rows[i].point, want[i].point);
		assert_string_equal(rows[i].point->name, rows[i].name);
		assert_int_equal(rows[i].avg_ns, rows[i].total_ns / rows[i].hits);
		/* inclusive: a caller's total holds each callee's */
		if (rows[i].parent_row >= 0)
			assert_true(rows[rows[i].parent_row].total_ns >= rows[i].total_ns);
	}
}

static void test_off_records_nothing(void **state)
{
	(void)state;
	vnic_trace_enable(false);
	vnic_trace_reset();
	assert_int_equal(vnic_trace_begin(&xmit), 0);
	pattern(3);
	assert_int_equal(vnic_trace_rows(rows, MAX_ROWS), 0);
	assert_int_equal(vnic_trace_rows(NULL, 0), 0);
	/* off, a point is not even given a slot */
	for (unsigned int i = 0; i < sizeof(all_points) / sizeof(all_points[0]); i++)
		assert_int_equal(all_points[i]->slot, 0);
}

static void test_nested_one_thread(void **state)
{
	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	pattern(3);
	pattern(3);
	vnic_trace_enable(false);
	check_pattern(3, 2);
	/* Off again: more calls change nothing. */
	pattern(3);
	check_pattern(3, 2);
}

/* Slots are given at first use, one per point, and kept across resets. */
static void test_point_slots(void **state)
{
	uint8_t slot[sizeof(all_points) / sizeof(all_points[0])];

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	pattern(1);
	TP(dev_tx, TP(dev_rx, (void)0));
	vnic_trace_enable(false);
	for (unsigned int i = 0; i < sizeof(all_points) / sizeof(all_points[0]); i++) {
		slot[i] = all_points[i]->slot;
		assert_true(slot[i] >= 1 && slot[i] <= VNIC_TRACE_SLOTS);
		for (unsigned int j = 0; j < i; j++)
			assert_int_not_equal(slot[i], slot[j]);
	}
	vnic_trace_reset();
	vnic_trace_enable(true);
	pattern(1);
	vnic_trace_enable(false);
	for (unsigned int i = 0; i < sizeof(all_points) / sizeof(all_points[0]); i++)
		assert_int_equal(all_points[i]->slot, slot[i]);
}

struct worker {
	pthread_t th;
	unsigned int k, m;
	_Atomic bool *stop; /* loop until set (NULL: m rounds) */
	_Atomic unsigned int rounds;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (w->stop) {
		while (!atomic_load(w->stop)) {
			pattern(w->k);
			w->rounds++;
		}
		return NULL;
	}
	for (unsigned int i = 0; i < w->m; i++)
		pattern(w->k);
	return NULL;
}

/* Two threads (and so two tables) that have exited when the report is taken. */
static void test_two_threads_summed(void **state)
{
	struct worker w[2] = {{.k = 2, .m = 100}, {.k = 2, .m = 250}};

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(w[i].th, NULL), 0);
	/* and one still alive: this one */
	pattern(2);
	vnic_trace_enable(false);
	check_pattern(2, 351);
}

/* Reports taken while another thread traces: a snapshot, exact once it stops. */
static void test_report_while_running(void **state)
{
	_Atomic bool stop = false;
	struct worker w = {.k = 1, .stop = &stop};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	assert_int_equal(pthread_create(&w.th, NULL, worker_main, &w), 0);
	for (int i = 0; i < 50 || !atomic_load(&w.rounds); i++) {
		unsigned int n = get_rows();
		int x = find(n, "xmit"), s = find(n, "xmit>tx_flush");

		/* a snapshot never shows a callee's path without its caller's */
		if (s >= 0)
			assert_true(x >= 0);
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		vnic_trace_report(f);
		fclose(f);
		free(buf);
		buf = NULL;
	}
	atomic_store(&stop, true);
	assert_int_equal(pthread_join(w.th, NULL), 0);
	vnic_trace_enable(false);
	assert_true(w.rounds > 0);
	check_pattern(1, w.rounds);
}

/* Count leading spaces. */
static unsigned int indent_of(const char *line)
{
	unsigned int n = 0;

	while (line[n] == ' ')
		n++;
	return n;
}

static void test_report_text(void **state)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	unsigned int top_ind = 0, lines = 0;
	bool seen_flush = false, seen_deliver_under_gro = false;
	FILE *f;

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	for (int i = 0; i < 5; i++)
		pattern(4);
	/* a callee that surely takes time: its total is at least what it spun */
	TP(dev_tx, TP(dev_rx, vnic_spin_ns(200000)));
	vnic_trace_enable(false);

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	vnic_trace_report(f);
	fclose(f);
	assert_non_null(strstr(buf, "inclusive"));
	assert_non_null(strstr(buf, "never add averages"));

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name = line + indent_of(line);

		if (!strncmp(line, "trace:", 6) || line[0] != ' ')
			continue;
		/* the first line is a top-level path: dev_tx, first by name */
		if (!lines++) {
			assert_int_equal(strncmp(name, "dev_tx ", 7), 0);
			top_ind = indent_of(line);
		}
		/* "<name> = <total> us / <hits> hits = avg <avg> us" */
		assert_non_null(strstr(line, " us / "));
		assert_non_null(strstr(line, " hits = avg "));
		if (!strncmp(name, "xmit ", 5)) {
			assert_int_equal(indent_of(line), top_ind);
			assert_non_null(strstr(line, "/         25 hits"));
		} else if (!strncmp(name, "tx_flush ", 9)) {
			assert_int_equal(indent_of(line), top_ind + 2);
			assert_non_null(strstr(line, "/         20 hits"));
			assert_non_null(strstr(line, "% of xmit)"));
			seen_flush = true;
		} else if (!strncmp(name, "deliver ", 8) && strstr(line, "of gro_receive")) {
			assert_int_equal(indent_of(line), top_ind + 4);
			seen_deliver_under_gro = true;
		} else if (!strncmp(name, "dev_rx ", 7)) {
			assert_int_equal(indent_of(line), top_ind + 2);
		}
	}
	assert_true(seen_flush);
	assert_true(seen_deliver_under_gro);
	assert_int_equal(lines, 13); /* 11 pattern paths, dev_tx, dev_tx > dev_rx */
	free(buf);

	{
		unsigned int n = get_rows();
		int r = find(n, "dev_tx>dev_rx");

		assert_true(r >= 0);
		assert_true(rows[r].total_ns >= 100000);
		assert_true(rows[find(n, "dev_tx")].total_ns >= rows[r].total_ns);
	}
}

static void test_reset_and_toggle(void **state)
{
	uint64_t t0;

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	pattern(1);
	vnic_trace_reset();
	assert_int_equal(vnic_trace_rows(rows, MAX_ROWS), 0);

	/* begun on, ended off: recorded */
	t0 = vnic_trace_begin(&replenish);
	assert_true(t0 != 0);
	vnic_trace_enable(false);
	vnic_trace_end(&replenish, t0);
	/* begun off, ended on: nothing */
	t0 = vnic_trace_begin(&dev_rx);
	assert_int_equal(t0, 0);
	vnic_trace_enable(true);
	vnic_trace_end(&dev_rx, t0);
	/* a begin that traces nothing */
	assert_int_equal(vnic_trace_begin(NULL), 0);
	vnic_trace_enable(false);

	assert_int_equal(get_rows(), 1);
	assert_string_equal(rows[0].name, "replenish");
	assert_int_equal(rows[0].hits, 1);
}

static void test_depth_and_mismatch(void **state)
{
	uint64_t t[VNIC_TRACE_DEPTH + 1], a, b;
	char *buf = NULL;
	size_t len = 0;
	unsigned int n;
	FILE *f;

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	/* nine deep: the ninth is not recorded */
	for (int i = 0; i <= VNIC_TRACE_DEPTH; i++)
		t[i] = vnic_trace_begin(&dev_tx);
	assert_int_equal(t[VNIC_TRACE_DEPTH], 0);
	for (int i = VNIC_TRACE_DEPTH; i >= 0; i--)
		vnic_trace_end(&dev_tx, t[i]);
	n = get_rows();
	assert_int_equal(n, VNIC_TRACE_DEPTH);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(rows[i].depth, i);
		assert_int_equal(rows[i].hits, 1);
	}

	/* a lost end (napi_poll > deliver, deliver never ends): the caller still ends */
	vnic_trace_reset();
	a = vnic_trace_begin(&napi_poll);
	b = vnic_trace_begin(&deliver);
	assert_true(b != 0);
	vnic_trace_end(&napi_poll, a);
	/* an end with no begin */
	vnic_trace_end(&xmit, 12345);
	/* the stack is sound again: xmit is a top-level path */
	TP(xmit, (void)0);
	vnic_trace_enable(false);
	n = get_rows();
	assert_int_equal(n, 2);
	assert_int_equal(hits(n, "xmit"), 1);
	assert_int_equal(hits(n, "napi_poll"), 1);
	assert_int_equal(find(n, "napi_poll>deliver"), -1);

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	vnic_trace_report(f);
	fclose(f);
	assert_non_null(strstr(buf, "2 unmatched ends"));
	free(buf);
}

static void test_rows_truncated(void **state)
{
	struct vnic_trace_row few[5];

	(void)state;
	vnic_trace_reset();
	vnic_trace_enable(true);
	pattern(1);
	vnic_trace_enable(false);
	memset(few, 0, sizeof(few));
	assert_int_equal(vnic_trace_rows(few, 4), 11);
	assert_string_equal(few[0].name, "napi_poll");
	assert_string_equal(few[3].name, "deliver");
	assert_int_equal(few[3].parent_row, 2);
	/* nothing past max is written */
	assert_null(few[4].name);
	assert_int_equal(few[4].hits, 0);
}

/*
 * More points than slots: those that find none are not recorded (counted
 * as lost) and keep finding none, while the points that have a slot go on
 * recording. Last: the slots stay taken for the rest of the process.
 */
static void test_slots_run_out(void **state)
{
	static struct vnic_trace_point many[VNIC_TRACE_SLOTS];
	static char names[VNIC_TRACE_SLOTS][8];
	unsigned int taken = 0, free_slots, n;
	char *buf = NULL, want[64];
	size_t len = 0;
	FILE *f;

	(void)state;
	for (unsigned int i = 0; i < sizeof(all_points) / sizeof(all_points[0]); i++)
		taken += all_points[i]->slot != 0;
	assert_true(taken > 0 && taken < VNIC_TRACE_SLOTS);
	free_slots = VNIC_TRACE_SLOTS - taken;

	vnic_trace_reset();
	vnic_trace_enable(true);
	for (unsigned int i = 0; i < VNIC_TRACE_SLOTS; i++) {
		uint64_t t0;

		snprintf(names[i], sizeof(names[i]), "p%02u", i);
		many[i].name = names[i];
		t0 = vnic_trace_begin(&many[i]);
		assert_true(i < free_slots ? t0 != 0 : t0 == 0);
		vnic_trace_end(&many[i], t0);
	}
	/* again: still no slot, and no second registration */
	assert_int_equal(vnic_trace_begin(&many[VNIC_TRACE_SLOTS - 1]), 0);
	TP(xmit, (void)0);
	vnic_trace_enable(false);

	for (unsigned int i = 0; i < VNIC_TRACE_SLOTS; i++)
		assert_int_equal(many[i].slot, i < free_slots ? i + taken + 1 : VNIC_TRACE_NO_SLOT);
	n = get_rows();
	assert_int_equal(n, free_slots + 1);
	assert_int_equal(hits(n, "xmit"), 1);
	assert_int_equal(hits(n, "p00"), 1);
	assert_int_equal(find(n, names[free_slots]), -1);

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	vnic_trace_report(f);
	fclose(f);
	snprintf(want, sizeof(want), "not recorded: %u ", taken + 1);
	assert_non_null(strstr(buf, want));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_records_nothing),
		cmocka_unit_test(test_nested_one_thread),
		cmocka_unit_test(test_point_slots),
		cmocka_unit_test(test_two_threads_summed),
		cmocka_unit_test(test_report_while_running),
		cmocka_unit_test(test_report_text),
		cmocka_unit_test(test_reset_and_toggle),
		cmocka_unit_test(test_depth_and_mismatch),
		cmocka_unit_test(test_rows_truncated),
		cmocka_unit_test(test_slots_run_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
