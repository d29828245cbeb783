// SPDX-License-Identifier: MIT
/*
 * The whole vNIC on real threads, as `vnic bench` runs it:
 *
 *   cpu a: host A -> driver A -> hv A -> device A ==cable== device B -> hv B -> driver B -> host B :cpu b
 *
 * and with --queues 2 (test_two_queues*) queue pair q of both on cpu q.
 *
 * Each test runs rr or stream for a fraction of a second under one policy
 * value and checks what must hold whatever the speed: no payload error,
 * counters that add up across the layers, the path counters the policy
 * implies, and every pool full again after quiesce.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"
#include "support.h"

enum { MAXQ = 4 };

static const double RUN_S = 0.4;

struct run {
	struct vnic_bench_opts o;
	struct vnic_bench_run r;
};

static struct run *run_new(enum vnic_workload wl)
{
	struct run *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	vnic_bench_opts_default(&x->o, wl);
	x->o.duration_s = RUN_S;
	x->o.quiet = true;
	x->o.rr.sessions = 16;
	/* Small host pools keep ASan/TSan runs light. */
	x->o.topo.host_pkts = 512;
	return x;
}

/*
 * A run of RUN_S is RUN_S of traffic that delivered something, however
 * loaded the machine: a watcher reads the run's control socket as
 * `vnic stats` does and stops it (vnic_bench_run's stop) once the traffic
 * has run RUN_S since its first packet and the workload has delivered
 * payload (and, for rr, a transaction). On a loaded machine under TSan a
 * bring-up or a first retransmission could take the whole of a plain
 * RUN_S, and a run delivered nothing. The duration only bounds a stall.
 */
struct watch {
	struct run *x;
	char name[48];
	_Atomic bool done;	/* the run returned */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The value of "NAME VALUE" in a stats answer; 0 when absent (a zero may be left out). */
static uint64_t stats_value(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	const uint64_t run_ns = (uint64_t)(RUN_S * 1e9);
	bool rr = w->x->o.wl == VNIC_WL_RR;
	uint64_t first = 0;
	char path[256], *ans;

	if (vnic_ctl_path(w->name, path, sizeof(path)))
		return NULL;
	while (!atomic_load(&w->done)) {
		ans = NULL;
		if (!vnic_ctl_request(path, "stats", 2000, &ans, NULL)) {
			if (!first && stats_value(ans, "work.tx_pkts"))
				first = now_ns();
			if (first && now_ns() - first >= run_ns && stats_value(ans, "work.bytes") &&
			    (!rr || stats_value(ans, "work.transactions"))) {
				atomic_store(&w->x->r.stop, true);
				free(ans);
				break;
			}
		}
		free(ans);
		vnic_test_nap_us(20000);
	}
	return NULL;
}

static void run_go(struct run *x)
{
	static unsigned int runs;
	struct watch w = {.x = x};
	pthread_t t;

	x->r.o = &x->o;
	/* a sized stream ends on its own */
	if (x->o.st.bytes) {
		assert_int_equal(vnic_bench_run(&x->r), 0);
		return;
	}
	snprintf(w.name, sizeof(w.name), "test-vnic-%ld-%u", (long)getpid(), runs++);
	x->o.ctl = true;
	x->o.ctl_name = w.name;
	x->o.duration_s = 120;
	assert_int_equal(pthread_create(&t, NULL, watch_thread, &w), 0);
	assert_int_equal(vnic_bench_run(&x->r), 0);
	atomic_store(&w.done, true);
	pthread_join(t, NULL);
	assert_true(atomic_load(&x->r.stop));
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
	return vnic_topo_counter(&x->r.topo, name);
}

/* A per-queue counter summed over the queues of one side ("drv_a.", "tx", "direct_packets"). */
static uint64_t qsum(const struct run *x, const char *obj, const char *dir, const char *name)
{
	uint64_t sum = 0;

	for (unsigned int q = 0; q < MAXQ; q++)
		sum += ctr(x, "%s.%s%u_%s", obj, dir, q, name);
	return sum;
}

/* Sum of every counter of obj whose name contains "drop" (or "_lost"). */
static uint64_t drops(const struct run *x, const char *obj)
{
	static struct vnic_counter all[8192];
	unsigned int n = vnic_topo_counters(&x->r.topo, all, 8192);
	size_t olen = strlen(obj);
	uint64_t sum = 0;

	for (unsigned int i = 0; i < n && i < 8192; i++)
		if (!strncmp(all[i].name, obj, olen) && all[i].name[olen] == '.' &&
		    (strstr(all[i].name, "drop") || strstr(all[i].name, "_lost")))
			sum += all[i].value;
	return sum;
}

/* What must hold after any clean run. */
static void check_clean(const struct run *x)
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

	for (int s = 0; s < 2; s++) {
		char drv[8], dev[8], peer[8];
		uint64_t sent, dev_pkts, wire_out, wire_in;

		snprintf(drv, sizeof(drv), "drv_%s", side[s]);
		snprintf(dev, sizeof(dev), "dev_%s", side[s]);
		snprintf(peer, sizeof(peer), "dev_%s", side[1 - s]);
		/* Nothing is dropped anywhere on a clean path. */
		assert_int_equal(drops(x, drv), 0);
		assert_int_equal(drops(x, dev), 0);
		/* Every packet the driver submitted, the device took and completed. */
		sent = qsum(x, drv, "tx", "direct_packets") + qsum(x, drv, "tx", "batched_packets");
		dev_pkts = qsum(x, dev, "tx", "packets");
		assert_true(sent > 0);
		assert_int_equal(sent, dev_pkts);
		assert_int_equal(qsum(x, drv, "tx", "completions"), sent);
		/* What left on the wire arrived at the peer's rx engine ... */
		wire_out = ctr(x, "cable.%s_tx_frames", s ? "ba" : "ab");
		wire_in = ctr(x, "cable.%s_rx_frames", s ? "ba" : "ab");
		assert_int_equal(wire_out, wire_in);
		assert_int_equal(qsum(x, peer, "rx", "frames"), wire_in);
		/* ... and every frame the peer device completed, the peer driver took. */
		assert_int_equal(qsum(x, peer, "rx", "completions"), wire_in);
	}
	assert_int_equal(qsum(x, "drv_b", "rx", "packets"), ctr(x, "cable.ab_rx_frames"));
	assert_int_equal(qsum(x, "drv_a", "rx", "packets"), ctr(x, "cable.ba_rx_frames"));
}

static void test_rr_defaults(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	/* One session: each request is a lone packet with nothing batched behind it. */
	x->o.rr.sessions = 1;
	run_go(x);
	check_clean(x);
	/* tx-submit=auto: a lone plain packet goes direct. */
	assert_true(qsum(x, "drv_a", "tx", "direct_packets") > 0);
	/* BQL is reported once per completion round. */
	assert_int_equal(qsum(x, "drv_a", "tx", "bql_completed_calls"),
			 qsum(x, "drv_a", "tx", "completion_rounds"));
	run_free(x);
}

static void test_stream_defaults(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM);

	(void)state;
	run_go(x);
	check_clean(x);
	/* TSO superpackets reach the device and are cut into wire frames ... */
	assert_true(qsum(x, "dev_a", "tx", "lso_packets") > 0);
	assert_true(ctr(x, "cable.ab_tx_frames") > qsum(x, "dev_a", "tx", "packets"));
	/* ... which GRO puts back together on the other side. */
	assert_true(qsum(x, "drv_b", "rx", "gro_merged") > 0);
	assert_true(x->r.res.rx_segs > x->r.res.rx_pkts);
	run_free(x);
}

static void test_tx_submit_indirect(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	x->o.topo.drv.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
	run_go(x);
	check_clean(x);
	assert_int_equal(qsum(x, "drv_a", "tx", "direct_packets"), 0);
	assert_int_equal(qsum(x, "drv_b", "tx", "direct_packets"), 0);
	assert_true(qsum(x, "drv_a", "tx", "batched_packets") > 0);
	run_free(x);
}

static void test_rx_replenish_low_vs_always(void **state)
{
	struct run *low = run_new(VNIC_WL_RR), *always = run_new(VNIC_WL_RR);
	double per_pkt_low, per_pkt_always;

	(void)state;
	always->o.topo.drv.rx_replenish = VNIC_DRV_REPLENISH_ALWAYS;
	run_go(low);
	check_clean(low);
	run_go(always);
	check_clean(always);
	per_pkt_low = (double)qsum(low, "drv_b", "rx", "replenish_calls") /
		      qsum(low, "drv_b", "rx", "packets");
	per_pkt_always = (double)qsum(always, "drv_b", "rx", "replenish_calls") /
			 qsum(always, "drv_b", "rx", "packets");
	/* "always" replenishes after every poll under budget; "low" only below half. */
	assert_true(per_pkt_always > 4 * per_pkt_low);
	run_free(low);
	run_free(always);
}

static void test_bql_per_entry(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	x->o.rr.sessions = 64;
	x->o.topo.drv.bql_complete = VNIC_DRV_BQL_PER_ENTRY;
	run_go(x);
	check_clean(x);
	/* One report per completion entry: at least as many as rounds. */
	assert_true(qsum(x, "drv_a", "tx", "bql_completed_calls") >=
		    qsum(x, "drv_a", "tx", "completion_rounds"));
	assert_int_equal(qsum(x, "drv_a", "tx", "bql_completed_calls"),
			 qsum(x, "dev_a", "tx", "comp_entries"));
	run_free(x);
}

static void test_tx_csum_modes(void **state)
{
	static const enum vnic_drv_tx_csum modes[] = {
		VNIC_DRV_CSUM_SW_DIRECT, VNIC_DRV_CSUM_HW_HEADERS, VNIC_DRV_CSUM_HW_NOHEADERS,
	};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct run *x = run_new(VNIC_WL_RR);

		/* ibmvnic e633e32b60's worst case: near-MTU messages, TSO off, cautious device. */
		x->o.rr.sessions = 1;
		x->o.rr.req_size = x->o.rr.resp_size = 1400;
		x->o.topo.drv.tx_csum = modes[i];
		run_go(x);
		check_clean(x);
		switch (modes[i]) {
		case VNIC_DRV_CSUM_SW_DIRECT:
			assert_true(qsum(x, "drv_a", "tx", "csum_sw") > 0);
			assert_true(qsum(x, "drv_a", "tx", "direct_packets") > 0);
			break;
		case VNIC_DRV_CSUM_HW_HEADERS:
			assert_int_equal(qsum(x, "drv_a", "tx", "csum_sw"), 0);
			assert_int_equal(qsum(x, "drv_a", "tx", "direct_packets"), 0);
			assert_true(qsum(x, "drv_a", "tx", "hdr_descs") > 0);
			assert_int_equal(qsum(x, "dev_a", "tx", "csum_missing_hdrs"), 0);
			break;
		default:
			/* The unsafe variant: the device sees it and counts it. */
			assert_true(qsum(x, "dev_a", "tx", "csum_missing_hdrs") > 0);
			break;
		}
		run_free(x);
	}
}

static void test_tx_hdr_build_copy(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM);

	(void)state;
	x->o.topo.drv.tx_hdr_build = VNIC_DRV_HDR_COPY;
	run_go(x);
	check_clean(x);
	/* LSO with the cautious mask needs header descriptors either way. */
	assert_true(qsum(x, "drv_a", "tx", "hdr_descs") > 0);
	assert_int_equal(qsum(x, "dev_a", "tx", "lso_missing_hdrs"), 0);
	run_free(x);
}

static void test_rx_deliver_modes(void **state)
{
	static const enum vnic_deliver_mode modes[] = {
		VNIC_DELIVER_LIST, VNIC_DELIVER_GRO, VNIC_DELIVER_GRO_LIST,
	};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct run *st = run_new(VNIC_WL_STREAM), *rr = run_new(VNIC_WL_RR);
		uint64_t batches, delivered;

		st->o.topo.drv.rx_deliver = rr->o.topo.drv.rx_deliver = modes[i];
		run_go(st);
		check_clean(st);
		/* A TCP stream: GRO merges unless delivery is list only. */
		if (modes[i] == VNIC_DELIVER_LIST)
			assert_int_equal(qsum(st, "drv_b", "rx", "gro_merged"), 0);
		else
			assert_true(qsum(st, "drv_b", "rx", "gro_merged") > 0);

		/*
		 * 16 rr sessions: small packets GRO cannot merge arrive several
		 * per poll. A list batches them; GRO alone hands each up on its own.
		 */
		run_go(rr);
		check_clean(rr);
		batches = qsum(rr, "drv_b", "rx", "list_batches");
		delivered = qsum(rr, "drv_b", "rx", "delivered");
		assert_true(delivered > 0);
		if (modes[i] == VNIC_DELIVER_GRO)
			assert_int_equal(batches, delivered);
		else
			assert_true(batches < delivered);
		run_free(st);
		run_free(rr);
	}
}

static void test_tx_reclaim_modes(void **state)
{
	static const enum vnic_drv_tx_reclaim modes[] = {
		VNIC_DRV_RECLAIM_IRQ, VNIC_DRV_RECLAIM_LAZY, VNIC_DRV_RECLAIM_NAPI,
		VNIC_DRV_RECLAIM_ORPHAN,
	};

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		struct run *x = run_new(VNIC_WL_STREAM);

		x->o.topo.drv.tx_reclaim = modes[i];
		run_go(x);
		check_clean(x);
		if (modes[i] == VNIC_DRV_RECLAIM_LAZY)
			assert_true(qsum(x, "drv_a", "tx", "xmit_reclaims") +
					    qsum(x, "drv_a", "tx", "timer_reclaims") > 0);
		if (modes[i] == VNIC_DRV_RECLAIM_ORPHAN)
			assert_true(qsum(x, "drv_a", "tx", "orphaned") > 0);
		else
			assert_int_equal(qsum(x, "drv_a", "tx", "orphaned"), 0);
		run_free(x);
	}
}

/* Whether the topology has a counter of that name at all (a zero one included). */
static bool has_ctr(const struct run *x, const char *name)
{
	static struct vnic_counter all[8192];
	unsigned int n = vnic_topo_counters(&x->r.topo, all, 8192);

	return vnic_counter_find(all, n < 8192 ? n : 8192, name) != NULL;
}

/* Both queue pairs carried packets both ways: A's and B's tx queues, A's and B's rx queues. */
static void check_both_queues(const struct run *x)
{
	assert_int_equal(ctr(x, "drv_a.neg_tx_queues"), 2);
	assert_int_equal(ctr(x, "drv_a.neg_rx_queues"), 2);
	for (unsigned int q = 0; q < 2; q++) {
		for (unsigned int s = 0; s < 2; s++) {
			const char *drv = s ? "drv_b" : "drv_a";

			assert_true(ctr(x, "%s.tx%u_direct_packets", drv, q) +
					    ctr(x, "%s.tx%u_batched_packets", drv, q) > 0);
			assert_true(ctr(x, "%s.rx%u_packets", drv, q) > 0);
		}
	}
}

/*
 * --queues 2 spread (two cpus at least): queue pair q of both vNICs on
 * thread q, over cable ring pair q, a host pair of the workload on each.
 */
static void check_spread(const struct run *x)
{
	assert_int_equal(x->r.topo.spread, 2);
	check_both_queues(x);
	for (unsigned int d = 0; d < 2; d++) {
		const char *dir = d ? "ba" : "ab";
		uint64_t sum = 0;

		for (unsigned int q = 0; q < 2; q++) {
			uint64_t tx = ctr(x, "cable.ring%u.%s_tx_frames", q, dir);

			/* each ring pair carried frames each way, and arrived whole */
			assert_true(tx > 0);
			assert_int_equal(ctr(x, "cable.ring%u.%s_rx_frames", q, dir), tx);
			sum += tx;
		}
		/* the sums stay, and are the rings' */
		assert_int_equal(ctr(x, "cable.%s_tx_frames", dir), sum);
	}
	/*
	 * Both threads ran queues: a control poll parks the queue cpu that is
	 * not its own, which a side whose queues all share its thread never does.
	 */
	assert_true(ctr(x, "drv_a.parks") > 0);
	assert_true(ctr(x, "drv_b.parks") > 0);
	assert_true(ctr(x, "dev_a.parks") > 0);
	assert_true(ctr(x, "dev_b.parks") > 0);
	assert_true(ctr(x, "cpu_a.work_ns") > 0);
	assert_true(ctr(x, "cpu_b.work_ns") > 0);
	/* every frame on a ring went to its own rx queue */
	assert_int_equal(ctr(x, "dev_a.rx_drop_bad_queue"), 0);
	assert_int_equal(ctr(x, "dev_b.rx_drop_bad_queue"), 0);
	assert_int_equal(x->r.res.err.rx_overflow, 0);
}

static bool two_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

static void test_two_queues(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	x->o.rr.sessions = 32;
	x->o.topo.drv.tx_queues = x->o.topo.drv.rx_queues = 2;
	run_go(x);
	check_clean(x);
	if (two_cpus())
		check_spread(x);
	else
		check_both_queues(x);
	/* the latency of both queue pairs' sessions, gathered (and of those the drain completed) */
	assert_non_null(x->r.res.latency);
	assert_true(x->r.res.latency->count >= x->r.res.transactions);
	run_free(x);
}

static void test_two_queues_stream(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM);

	(void)state;
	if (!two_cpus())
		skip();
	x->o.st.flows = 4;
	x->o.topo.drv.tx_queues = x->o.topo.drv.rx_queues = 2;
	run_go(x);
	check_clean(x);
	check_spread(x);
	run_free(x);
}

/*
 * --queues 2 --threads 1: the queues stay on the one thread, the cable has
 * one ring pair (no ring counters) and the flows are hashed over the queues.
 */
static void test_two_queues_one_thread(void **state)
{
	struct run *x = run_new(VNIC_WL_RR);

	(void)state;
	x->o.rr.sessions = 32;
	x->o.topo.threads = 1;
	x->o.topo.drv.tx_queues = x->o.topo.drv.rx_queues = 2;
	run_go(x);
	check_clean(x);
	assert_int_equal(x->r.topo.spread, 0);
	check_both_queues(x);
	assert_false(has_ctr(x, "cable.ring0.ab_tx_frames"));
	assert_true(has_ctr(x, "cable.ab_tx_frames"));
	assert_int_equal(ctr(x, "drv_a.parks"), 0);
	run_free(x);
}

static void test_stream_through_loss_and_reordering(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM);
	const uint64_t bytes = 4u << 20;

	(void)state;
	x->o.st.bytes = bytes;
	x->o.st.flows = 2;
	x->o.st.tcp.rto_min_ns = 2000000;
	x->o.topo.cable.loss = 0.01;
	x->o.topo.cable.reorder = 0.01;
	x->o.topo.cable.seed = 42;
	/* An upper bound only: the run ends when both flows have delivered it all. */
	x->o.duration_s = 60;
	run_go(x);
	/* Every byte of every flow arrived, in order, verified against the pattern. */
	for (unsigned int f = 0; f < 2; f++)
		assert_true(vnic_stream_flow_bytes(x->r.st, f) == bytes);
	assert_true(x->r.res.bytes == 2 * bytes);
	assert_int_equal(x->r.res.err.payload, 0);
	assert_true(ctr(x, "cable.ab_drop_loss") > 0);
	assert_true(x->r.res.err.retransmits > 0);
	assert_true(x->r.pools_full);
	run_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rr_defaults),
		cmocka_unit_test(test_stream_defaults),
		cmocka_unit_test(test_tx_submit_indirect),
		cmocka_unit_test(test_rx_replenish_low_vs_always),
		cmocka_unit_test(test_bql_per_entry),
		cmocka_unit_test(test_tx_csum_modes),
		cmocka_unit_test(test_tx_hdr_build_copy),
		cmocka_unit_test(test_rx_deliver_modes),
		cmocka_unit_test(test_tx_reclaim_modes),
		cmocka_unit_test(test_two_queues),
		cmocka_unit_test(test_two_queues_stream),
		cmocka_unit_test(test_two_queues_one_thread),
		cmocka_unit_test(test_stream_through_loss_and_reordering),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
