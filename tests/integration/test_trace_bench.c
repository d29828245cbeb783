// SPDX-License-Identifier: MIT
/*
 * Tracing on the real thing: `vnic bench rr --duration 1` (and a stream run)
 * with tracing enabled around it. The hit counts must equal the driver's
 * own counters, and the paths must be the calls the code really makes
 * (deliver under napi_poll, send_direct only under xmit, ...).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"

enum { MAXQ = 16, MAX_ROWS = 256 };

static struct vnic_trace_row rows[MAX_ROWS];

static uint64_t ctr(struct vnic_bench_run *r, const char *fmt, ...)
{
	char name[VNIC_COUNTER_NAME_MAX + 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return vnic_topo_counter(&r->topo, name);
}

/* A per-queue driver counter summed over both sides and every queue. */
static uint64_t drv_sum(struct vnic_bench_run *r, const char *dir, const char *name)
{
	uint64_t sum = 0;

	for (int s = 0; s < 2; s++)
		for (unsigned int q = 0; q < MAXQ; q++)
			sum += ctr(r, "drv_%c.%s%u_%s", "ab"[s], dir, q, name);
	return sum;
}

/*
 * Hits of a point (by name: the driver and the device own their points)
 * over every path it was seen on. Every row of that name must be the same
 * point, or a lookup by name would mix two.
 */
static uint64_t point_hits(unsigned int n, const char *tp)
{
	const struct vnic_trace_point *point = NULL;
	uint64_t h = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (strcmp(rows[i].name, tp))
			continue;
		assert_non_null(rows[i].point);
		assert_string_equal(rows[i].point->name, tp);
		if (!point)
			point = rows[i].point;
		assert_ptr_equal(rows[i].point, point);
		h += rows[i].hits;
	}
	return h;
}

/* Every path of tp has one of the callers given ("" = top level). */
static void check_callers(unsigned int n, const char *tp, const char *const *callers,
			  unsigned int ncallers)
{
	for (unsigned int i = 0; i < n; i++) {
		bool ok = false;

		if (strcmp(rows[i].name, tp))
			continue;
		for (unsigned int c = 0; c < ncallers; c++)
			ok |= !strcmp(rows[i].parent, callers[c]);
		if (!ok)
			fail_msg("%s called from %s", rows[i].name, rows[i].parent);
	}
}

static int find(unsigned int n, const char *name, const char *parent)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name) && !strcmp(rows[i].parent, parent))
			return (int)i;
	return -1;
}

static void run_traced(enum vnic_workload wl, double duration_s)
{
	struct vnic_bench_opts o;
	struct vnic_bench_run r;
	unsigned int n;
	int d;

	vnic_bench_opts_default(&o, wl);
	o.duration_s = duration_s;
	o.quiet = true;
	o.topo.host_pkts = 512;
	memset(&r, 0, sizeof(r));
	r.o = &o;

	vnic_trace_reset();
	vnic_trace_enable(true);
	assert_int_equal(vnic_bench_run(&r), 0);
	vnic_trace_enable(false);

	vnic_trace_report(stdout);
	n = vnic_trace_rows(rows, MAX_ROWS);
	assert_true(n > 0 && n <= MAX_ROWS);
	assert_true(r.res.bytes > 0);

	/*
	 * A clean run: nothing dropped, no failed send. Then every xmit call
	 * is a packet sent direct, a packet sent in a batch, or a busy
	 * refusal (the host retries it).
	 */
	assert_int_equal(drv_sum(&r, "tx", "dropped_packets"), 0);
	assert_int_equal(drv_sum(&r, "tx", "flush_errors"), 0);
	assert_int_equal(ctr(&r, "drv_a.drop_bad_queue") + ctr(&r, "drv_b.drop_bad_queue"), 0);
	assert_int_equal(point_hits(n, "xmit"), drv_sum(&r, "tx", "direct_packets") +
							drv_sum(&r, "tx", "batched_packets") +
							drv_sum(&r, "tx", "busy"));
	assert_int_equal(point_hits(n, "napi_poll"), drv_sum(&r, "rx", "polls"));
	assert_int_equal(point_hits(n, "send_direct"), drv_sum(&r, "tx", "direct_sends"));
	assert_int_equal(point_hits(n, "tx_flush"), drv_sum(&r, "tx", "indirect_flushes"));
	assert_int_equal(point_hits(n, "replenish"), drv_sum(&r, "rx", "replenish_calls"));
	/* default rx-deliver gro-list: every received packet goes into GRO */
	assert_int_equal(point_hits(n, "gro_receive"), drv_sum(&r, "rx", "packets"));
	assert_int_equal(point_hits(n, "deliver"), drv_sum(&r, "rx", "list_batches"));
	assert_true(point_hits(n, "dev_tx") > 0);
	assert_true(point_hits(n, "dev_rx") > 0);

	/* deliver under napi_poll (the end-of-poll flush), with hits */
	d = find(n, "deliver", "napi_poll");
	assert_true(d >= 0);
	assert_true(rows[d].hits > 0);
	assert_int_equal(rows[d].depth, 1);
	assert_string_equal(rows[rows[d].parent_row].name, "napi_poll");

	/* the tree is the code's call graph */
	{
		static const char *const top[] = {""};
		static const char *const in_xmit[] = {"xmit"};
		static const char *const in_poll[] = {"napi_poll"};
		static const char *const ind[] = {"tx_flush", "replenish"};
		static const char *const repl[] = {"napi_poll", ""}; /* "": at bring-up */
		static const char *const dlv[] = {"napi_poll", "gro_receive"};

		check_callers(n, "napi_poll", top, 1);
		check_callers(n, "dev_tx", top, 1);
		check_callers(n, "dev_rx", top, 1);
		check_callers(n, "send_direct", in_xmit, 1);
		check_callers(n, "tx_flush", in_xmit, 1);
		check_callers(n, "csum_help", in_xmit, 1);
		check_callers(n, "hdr_build", in_xmit, 1);
		check_callers(n, "gro_receive", in_poll, 1);
		check_callers(n, "send_indirect", ind, 2);
		check_callers(n, "replenish", repl, 2);
		check_callers(n, "deliver", dlv, 2);
	}
	for (unsigned int i = 0; i < n; i++) {
		assert_true(rows[i].hits > 0);
		if (rows[i].parent_row >= 0)
			assert_true(rows[rows[i].parent_row].total_ns >= rows[i].total_ns);
	}
	vnic_bench_cleanup(&r);
}

static void test_trace_rr(void **state)
{
	(void)state;
	run_traced(VNIC_WL_RR, 1.0);
}

/* Bulk traffic: batches, tx flushes, TSO header descriptors. */
static void test_trace_stream(void **state)
{
	(void)state;
	run_traced(VNIC_WL_STREAM, 0.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_rr),
		cmocka_unit_test(test_trace_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
