// SPDX-License-Identifier: MIT
/*
 * The built-in workloads through faults on demand (docs/FAULTS.md), on real
 * threads, as `vnic bench --fault SPEC` runs them:
 *
 *   cpu a: host A -> driver A -> hv A -> device A ==cable== device B -> hv B -> driver B -> host B
 * :cpu b faults on both hvs and both devices
 *
 * What must hold whatever the faults: no payload error, every byte sent
 * delivered in order (the run quiesces: everything acknowledged), every pool
 * full after the close, and counters that add up across the layers: each
 * packet a driver sent was completed by its device or taken back by a reset,
 * each descriptor the device got it sent, refused, or found unread when it
 * reset, each rx completion the device sent its driver took.
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
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"
#include "support.h"

enum { MAXQ = 4 };

struct run {
	struct vnic_bench_opts o;
	struct vnic_bench_run r;
};

static struct run *run_new(enum vnic_workload wl, const char *spec, double seconds)
{
	struct run *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	vnic_bench_opts_default(&x->o, wl);
	x->o.duration_s = seconds;
	x->o.quiet = true;
	x->o.topo.host_pkts = 512;
	/* resets lose what is in flight: the transport resends it soon */
	x->o.st.tcp.rto_min_ns = 2000000;
	x->o.rr.tcp.rto_min_ns = 2000000;
	if (vnic_fault_parse(spec, &x->o.topo.fault))
		fail_msg("%s: %s", spec, vnic_fault_strerror());
	return x;
}

static void run_go(struct run *x)
{
	x->r.o = &x->o;
	assert_int_equal(vnic_bench_run(&x->r), 0);
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

static uint64_t qsum(const struct run *x, const char *obj, const char *dir, const char *name)
{
	uint64_t sum = 0;

	for (unsigned int q = 0; q < MAXQ; q++)
		sum += ctr(x, "%s.%s%u_%s", obj, dir, q, name);
	return sum;
}

/* Every counter of obj whose name starts with prefix, summed ("dev_a", "tx0_drop_"). */
static uint64_t sum_prefix(const struct run *x, const char *obj, const char *prefix)
{
	static struct vnic_counter all[8192];
	unsigned int n = vnic_topo_counters(&x->r.topo, all, 8192);
	char want[VNIC_COUNTER_NAME_MAX];
	uint64_t sum = 0;

	snprintf(want, sizeof(want), "%s.%s", obj, prefix);
	for (unsigned int i = 0; i < n && i < 8192; i++)
		if (!strncmp(all[i].name, want, strlen(want)))
			sum += all[i].value;
	return sum;
}

/* What must hold after any run through faults. */
static void check_through(const struct run *x)
{
	const struct vnic_work_results *res = &x->r.res;
	const char *side[2] = {"a", "b"};

	assert_true(res->bytes > 0);
	assert_int_equal(res->err.payload, 0);
	assert_int_equal(res->err.bad_csum, 0);
	/* everything sent was delivered, in order, and acknowledged */
	assert_true(x->r.quiesced);
	assert_true(x->r.pools_full);

	for (int s = 0; s < 2; s++) {
		char drv[8], dev[8];
		uint64_t sent, dev_took;

		snprintf(drv, sizeof(drv), "drv_%s", side[s]);
		snprintf(dev, sizeof(dev), "dev_%s", side[s]);
		/* a packet the driver sent was completed, or taken back by a reset, once */
		sent = qsum(x, drv, "tx", "direct_packets") + qsum(x, drv, "tx", "batched_packets");
		assert_true(sent > 0);
		assert_int_equal(sent, qsum(x, drv, "tx", "completions") +
					       qsum(x, drv, "tx", "drop_reset"));
		/* its descriptor reached the device: sent, refused, or unread at a reset */
		dev_took = qsum(x, dev, "tx", "packets");
		for (unsigned int q = 0; q < MAXQ; q++) {
			char p[16];

			snprintf(p, sizeof(p), "tx%u_drop_", q);
			dev_took += sum_prefix(x, dev, p);
		}
		assert_int_equal(sent, dev_took + qsum(x, dev, "tx", "reset_unread"));
		/* what the device sent on the wire is at most what its driver was told went */
		assert_true(qsum(x, dev, "tx", "packets") >=
			    qsum(x, drv, "tx", "completions") - qsum(x, drv, "tx", "comp_errors"));
		/* every rx completion the device sent, its driver took (or a reset did) */
		assert_int_equal(qsum(x, dev, "rx", "completions"),
				 qsum(x, drv, "rx", "packets") + qsum(x, drv, "rx", "drop_rc") +
					 qsum(x, drv, "rx", "drop_bad_len") +
					 qsum(x, drv, "rx", "drop_no_pkt") +
					 qsum(x, drv, "rx", "bad_correlator") +
					 qsum(x, drv, "rx", "reset_drained"));
		/* and the cable lost nothing of its own */
		assert_int_equal(ctr(x, "cable.%s_tx_frames", s ? "ba" : "ab"),
				 ctr(x, "cable.%s_rx_frames", s ? "ba" : "ab"));
		/* no reset was left half done */
		assert_int_equal(ctr(x, "%s.reset_active", drv), 0);
	}
}

/*
 * Ends a run once both devices have reset `resets` times by their fault
 * schedule, read from the run's control socket as `vnic stats` reads them.
 */
struct reset_watch {
	struct run *x;
	char name[48];
	uint64_t resets;
	_Atomic bool done;	/* the run returned */
	pthread_t thread;
};

/* The value of "NAME VALUE" in a stats answer; 0 when absent (a zero may be left out). */
static uint64_t stats_value(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

static bool devices_reset(struct reset_watch *w)
{
	char path[256], *ans = NULL;
	bool enough;

	if (vnic_ctl_path(w->name, path, sizeof(path)) ||
	    vnic_ctl_request(path, "stats", 2000, &ans, NULL))
		return false;	/* not serving yet */
	enough = stats_value(ans, "dev_a.fault_resets") >= w->resets &&
		 stats_value(ans, "dev_b.fault_resets") >= w->resets;
	free(ans);
	return enough;
}

static void *reset_watch_thread(void *arg)
{
	struct reset_watch *w = arg;

	while (!atomic_load(&w->done)) {
		if (devices_reset(w)) {
			atomic_store(&w->x->r.stop, true);
			break;
		}
		vnic_test_nap_us(10000);
	}
	return NULL;
}

/*
 * A stream through device resets every 300 ms, both sides: each one a
 * transport event, the device gone for a millisecond, its INIT, the
 * driver's whole bring-up. The run lasts until each device has reset ten
 * times, not for a time: on a loaded machine (TSan, CI) the devices and the
 * bring-ups fall behind the schedule, and 3 s held fewer than the eight
 * asked for. Each driver must
 * have come back from at least eight of them (the last may still be going
 * when the run stops); the duration only bounds a stall.
 */
static void test_stream_through_resets(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM, "seed=3,reset-every=300ms", 120);
	struct reset_watch w = {.x = x, .resets = 10};
	uint64_t want = w.resets - 2;

	(void)state;
	x->o.st.flows = 2;
	snprintf(w.name, sizeof(w.name), "test-faults-%ld", (long)getpid());
	x->o.ctl = true;
	x->o.ctl_name = w.name;
	assert_int_equal(pthread_create(&w.thread, NULL, reset_watch_thread, &w), 0);
	run_go(x);
	atomic_store(&w.done, true);
	pthread_join(w.thread, NULL);
	assert_true(atomic_load(&x->r.stop));
	check_through(x);
	for (int s = 0; s < 2; s++) {
		const char *d = s ? "drv_b" : "drv_a";

		assert_true(ctr(x, "%s.resets", d) >= want);
		assert_true(ctr(x, "%s.resets_xport", d) >= want);
		assert_true(ctr(x, "dev_%s.fault_resets", s ? "b" : "a") >= want);
		/* the driver came back every time, and said how long it took */
		assert_int_equal(ctr(x, "%s.reset_failures", d), 0);
		assert_true(ctr(x, "%s.reset_done", d) >= want);
		assert_true(ctr(x, "%s.reset_max_ns", d) >= ctr(x, "%s.reset_last_ns", d));
		assert_true(ctr(x, "%s.reset_total_ns", d) >= ctr(x, "%s.reset_max_ns", d));
	}
	/* the transport resent what the resets dropped */
	assert_true(x->r.res.err.retransmits > 0);
	run_free(x);
}

/*
 * The hypervisor announces 128 entries per indirect send and takes 16: the
 * driver asks for 128, the first larger send fails with PARAMETER, and it
 * falls back to 16 for good and keeps sending.
 */
static void test_ind_fallback(void **state)
{
	struct run *x = run_new(VNIC_WL_STREAM, "ind-param-above=16", 1);

	(void)state;
	x->o.topo.drv.max_ind_descs = 128;
	x->o.topo.drv.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
	/*
	 * Few rx buffers: each side replenishes soon (below 32 posted, in one
	 * send of more than 16), however slow the machine, so each meets the
	 * limit even if its tx batches stay small (the receiver's ACKs).
	 */
	x->o.topo.drv.rx_entries = 64;
	/*
	 * A stream of a size, not of a time: however slow the machine (TSan,
	 * a loaded CI), the run carries enough for the checks below. 64 MiB
	 * is at least 1,024 packets of at most 64 KiB: more than 20 sends of
	 * at most 16, and more than 32 frames received on either side, each
	 * window of 1 MiB acknowledged at least once. The duration only
	 * bounds a run that stalls.
	 */
	x->o.st.bytes = 64u << 20;
	x->o.duration_s = 120;
	run_go(x);
	check_through(x);
	assert_int_equal(x->r.res.bytes, x->o.st.bytes);
	for (int s = 0; s < 2; s++) {
		const char *d = s ? "drv_b" : "drv_a", *h = s ? "hv_b" : "hv_a";

		assert_int_equal(ctr(x, "%s.neg_ind_descs", d), 128);
		assert_int_equal(ctr(x, "%s.cur_ind_descs", d), 16);
		assert_int_equal(ctr(x, "%s.ind_fallbacks", d), 1);
		/*
		 * Refusals stop with the fallback (a batch or two built before
		 * it), while indirect sends go on: each of those carried at
		 * most 16 entries, or it would have been refused too.
		 */
		assert_true(ctr(x, "%s.fault_ind_param", h) >= 1);
		assert_true(ctr(x, "%s.fault_ind_param", h) <= 4);
		assert_true(ctr(x, "%s.send_subcrq_indirect", h) > 20);
		/* the refused batch was a tx flush or an rx replenish, each counted */
		assert_true(qsum(x, d, "tx", "flush_rc_parameter") +
				    qsum(x, d, "rx", "replenish_errors") >
			    0);
	}
	/* the data went, at 16 a send */
	assert_true(qsum(x, "drv_a", "tx", "indirect_flushes") > 20);
	run_free(x);
}

/*
 * Everything at once, under request/response: device resets and failovers,
 * error indications (half of them fatal), link flaps, refused hcalls, and
 * CRQ messages lost and duplicated.
 */
static void test_rr_through_everything(void **state)
{
	struct run *x =
		run_new(VNIC_WL_RR,
			"seed=11,reset-every=400ms,failover-every=700ms,err-ind-every=300ms,"
			"err-ind-fatal=0.5,link-flap-every=500ms,link-down-for=5ms,"
			"hcall-busy=0.001,hcall-dropped=0.001,crq-loss=0.01,crq-dup=0.01",
			2);

	(void)state;
	x->o.rr.sessions = 8;
	run_go(x);
	check_through(x);
	assert_true(x->r.res.transactions > 0);
	for (int s = 0; s < 2; s++) {
		const char *d = s ? "drv_b" : "drv_a", *v = s ? "dev_b" : "dev_a";

		assert_true(ctr(x, "%s.fault_resets", v) >= 2);
		assert_true(ctr(x, "%s.fault_failovers", v) >= 1);
		assert_true(ctr(x, "%s.fault_err_inds", v) >= 3);
		assert_true(ctr(x, "%s.fault_link_flaps", v) >= 1);
		assert_true(ctr(x, "%s.resets", d) >= 5);
	}
	run_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_through_resets),
		cmocka_unit_test(test_ind_fallback),
		cmocka_unit_test(test_rr_through_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
