// SPDX-License-Identifier: MIT
/*
 * `vnic bench --split`: the same workloads with the devices and the cable in
 * a server process of their own (src/app/server.c), the hvs split across
 * the two (src/hv/shm.c):
 *
 *   client process:  host A -> driver A -> hv A'   |   hv B' <- driver B <- host B
 *                                  shared memory, eventfds
 *   server process:      hv A'' -> device A ==cable== device B <- hv B''
 *
 * What must hold whatever the speed: every byte verified, every count that
 * crosses the processes adding up (the driver's sends are the device's
 * packets, the cable's frames are the peer's rx frames and drops, the peer
 * device's completions are the peer driver's packets), doorbells rung and
 * none refused, every pool full after quiesce. And what split mode cannot
 * do yet is refused, not ignored.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"

enum { MAXQ = 4, NCTR = 8192 };

struct run {
	struct vnic_bench_opts o;
	struct vnic_bench_run r;
	struct vnic_counter all[NCTR];
	unsigned int n;
};

static struct run *run_new(enum vnic_workload wl)
{
	struct run *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	vnic_bench_opts_default(&x->o, wl);
	x->o.duration_s = 0.5;
	x->o.quiet = true;
	x->o.rr.sessions = 16;
	x->o.topo.host_pkts = 512;
	x->o.topo.split = true;
	return x;
}

/* Runs, then takes every counter once: the server's come over its socket. */
static void run_go(struct run *x)
{
	x->r.o = &x->o;
	assert_int_equal(vnic_bench_run(&x->r), 0);
	x->n = vnic_topo_counters(&x->r.topo, x->all, NCTR);
	assert_true(x->n < NCTR);
}

static void run_free(struct run *x)
{
	vnic_bench_cleanup(&x->r);
	free(x);
}

static uint64_t ctr(const struct run *x, const char *fmt, ...)
{
	char name[VNIC_COUNTER_NAME_MAX + 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	for (unsigned int i = 0; i < x->n; i++)
		if (!strcmp(x->all[i].name, name))
			return x->all[i].value;
	return 0;
}

static bool has(const struct run *x, const char *name)
{
	for (unsigned int i = 0; i < x->n; i++)
		if (!strcmp(x->all[i].name, name))
			return true;
	return false;
}

static uint64_t qsum(const struct run *x, const char *obj, const char *dir, const char *name)
{
	uint64_t sum = 0;

	for (unsigned int q = 0; q < MAXQ; q++)
		sum += ctr(x, "%s.%s%u_%s", obj, dir, q, name);
	return sum;
}

static void check_split(const struct run *x)
{
	const struct vnic_work_results *res = &x->r.res;
	const char *side[2] = { "a", "b" };

	if (x->o.wl == VNIC_WL_RR)
		assert_true(res->transactions > 0);
	assert_true(res->bytes > 0);
	assert_int_equal(res->err.payload, 0);
	assert_int_equal(res->err.bad_csum, 0);
	assert_int_equal(res->err.tx_dropped, 0);
	assert_true(x->r.quiesced);
	assert_true(x->r.pools_full);
	/* the server's counters are there, under the names in-process runs use */
	assert_true(has(x, "dev_a.state") && has(x, "cable.ab_tx_frames"));
	assert_true(has(x, "srv_hv_a.send_subcrq") && has(x, "srv_cpu_b.loops"));
	/* the server's threads report their CPU time, which the work CPU adds */
	assert_true(ctr(x, "srv_cpu_a.thread_cpu_ns") > 0);

	for (int s = 0; s < 2; s++) {
		const char *me = side[s], *peer = side[1 - s];
		char drv[8], dev[8];
		uint64_t sent, wire_in;

		snprintf(drv, sizeof(drv), "drv_%s", me);
		snprintf(dev, sizeof(dev), "dev_%s", me);
		/* the client's hcalls reached the server's device, and came back completed */
		sent = qsum(x, drv, "tx", "direct_packets") + qsum(x, drv, "tx", "batched_packets");
		assert_true(sent > 0);
		assert_int_equal(qsum(x, dev, "tx", "packets"), sent);
		assert_int_equal(qsum(x, drv, "tx", "completions"), sent);
		/* the cable's frames are the peer device's frames, or its counted drops */
		wire_in = ctr(x, "cable.%s_rx_frames", s ? "ba" : "ab");
		assert_int_equal(ctr(x, "cable.%s_tx_frames", s ? "ba" : "ab"), wire_in);
		snprintf(dev, sizeof(dev), "dev_%s", peer);
		snprintf(drv, sizeof(drv), "drv_%s", peer);
		assert_int_equal(qsum(x, dev, "rx", "frames") + qsum(x, dev, "rx", "drop_no_buffer"),
				 wire_in);
		/* what the peer device completed, the peer driver took */
		assert_int_equal(qsum(x, dev, "rx", "completions"), qsum(x, drv, "rx", "packets"));
		/*
		 * doorbells both ways (left out only while the partner polled:
		 * never in eventfd mode), and nothing the partner wrote was refused
		 */
		assert_true(ctr(x, "hv_%s.split_doorbells", me) +
				    ctr(x, "hv_%s.split_doorbells_skipped", me) > 0);
		assert_true(ctr(x, "srv_hv_%s.split_doorbells", me) +
				    ctr(x, "srv_hv_%s.split_doorbells_skipped", me) > 0);
		if (x->o.topo.doorbell == VNIC_HV_DOORBELL_EVENTFD) {
			assert_int_equal(ctr(x, "hv_%s.split_doorbells_skipped", me), 0);
			assert_int_equal(ctr(x, "srv_hv_%s.split_doorbells_skipped", me), 0);
		}
		assert_int_equal(ctr(x, "hv_%s.split_bad_ring", me), 0);
		assert_int_equal(ctr(x, "hv_%s.split_irq_spurious", me), 0);
		assert_int_equal(ctr(x, "srv_hv_%s.split_irq_spurious", me), 0);
		assert_int_equal(ctr(x, "srv_hv_%s.dma_bad_translation", me), 0);
		assert_int_equal(qsum(x, drv, "rx", "bad_correlator") + qsum(x, drv, "tx", "bad_correlator"), 0);
	}
}

static void test_rr_split(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	run_go(x);
	check_split(x);
	/* the devices negotiated with the drivers across the processes */
	assert_int_equal(ctr(x, "dev_a.neg_tx_queues"), ctr(x, "drv_a.neg_tx_queues"));
	run_free(x);
}

static void test_rr_split_one_thread(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	x->o.topo.threads = 1;
	x->o.topo.drv.tx_queues = x->o.topo.drv.rx_queues = 2;
	run_go(x);
	check_split(x);
	run_free(x);
}

static void test_stream_split(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM);

	(void)state;
	run_go(x);
	check_split(x);
	/* TSO superpackets cut into wire frames by the server's device */
	assert_true(ctr(x, "dev_a.tx0_lso_packets") > 0);
	run_free(x);
}

/*
 * Spin mode: both processes' cpus say when they busy-poll their doorbell
 * bits, and the other side leaves its eventfd writes out meanwhile; every
 * byte still arrives (a lost wake-up would stall the run: no quiesce).
 */
static void test_stream_split_spin_doorbells(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM);
	uint64_t skipped = 0;

	(void)state;
	x->o.topo.doorbell = VNIC_HV_DOORBELL_SPIN;
	x->o.topo.spin = VNIC_CPU_SPIN_FIXED;
	run_go(x);
	check_split(x);
	for (int s = 0; s < 2; s++) {
		skipped += ctr(x, "hv_%s.split_doorbells_skipped", s ? "b" : "a");
		skipped += ctr(x, "srv_hv_%s.split_doorbells_skipped", s ? "b" : "a");
	}
	assert_true(skipped > 0);
	run_free(x);
}

/* Options that reach into the devices from the client are refused, not ignored. */
static void test_split_refuses_what_it_cannot_do(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	assert_int_equal(vnic_fault_parse("hcall-busy=0.01", &x->o.topo.fault), 0);
	x->r.o = &x->o;
	assert_int_equal(vnic_bench_run(&x->r), -EINVAL);
	run_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rr_split),
		cmocka_unit_test(test_rr_split_one_thread),
		cmocka_unit_test(test_stream_split),
		cmocka_unit_test(test_stream_split_spin_doorbells),
		cmocka_unit_test(test_split_refuses_what_it_cannot_do),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
