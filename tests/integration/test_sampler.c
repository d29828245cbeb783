// SPDX-License-Identifier: MIT
/*
 * The samplers of `vnic bench` (src/app/sampler.c): samples arrive about
 * every period (counted within a wide margin, never timed), their columns
 * hold plausible values, the one-second rates are right on a scripted
 * series, and the CSV has a header and one row per sample. Plus the bench
 * options that drive them.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"

static int parse(struct vnic_bench_opts *o, const char *line)
{
	static char buf[512];
	char *argv[32], *save;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 31; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return vnic_bench_parse(argc, argv, o);
}

static void test_options(void **state)
{
	struct vnic_bench_opts o;
	FILE *saved = stderr;

	(void)state;
	vnic_bench_opts_default(&o, VNIC_WL_RR);
	/* the library default: no socket, no sampler, no tracing */
	assert_false(o.ctl);
	assert_int_equal(o.sample_ms, 0);
	assert_false(o.trace);

	assert_int_equal(parse(&o, "bench rr"), 0);
	assert_true(o.ctl);
	assert_null(o.ctl_name);
	assert_int_equal(o.sample_ms, 0);
	assert_int_equal(parse(&o, "bench rr --samples x.csv"), 0);
	assert_int_equal(o.sample_ms, 10);
	assert_string_equal(o.samples_path, "x.csv");
	assert_int_equal(parse(&o, "bench rr --sample-ms 5 --name exp-1 --trace"), 0);
	assert_int_equal(o.sample_ms, 5);
	assert_string_equal(o.ctl_name, "exp-1");
	assert_true(o.trace);
	assert_int_equal(parse(&o, "bench stream --no-ctl"), 0);
	assert_false(o.ctl);

	stderr = fopen("/dev/null", "w");
	assert_int_equal(parse(&o, "bench rr --samples x.csv --sample-ms 0"), -EINVAL);
	assert_int_equal(parse(&o, "bench rr --name a/b"), -EINVAL);
	assert_int_equal(parse(&o, "bench rr --name .x"), -EINVAL);
	assert_int_equal(parse(&o, "bench rr --name x --no-ctl"), -EINVAL);
	assert_int_equal(parse(&o, "bench rr --sample-ms -1"), -EINVAL);
	fclose(stderr);
	stderr = saved;
}

/* A scripted series: 1000 transactions and 1 MB every 10 ms. */
static void test_rate_and_csv_on_a_script(void **state)
{
	struct vnic_series s;
	char path[] = "/tmp/vnic-test-series-XXXXXX";
	char line[4096];
	double tps, gbps;
	unsigned int rows = 0;
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(vnic_series_init(&s, 10000000u, 2.0), 0);
	assert_true(s.cap >= 201);
	s.tx_queues = 2;
	s.rx_queues = 1;
	for (size_t i = 0; i < 201; i++) {
		struct vnic_sample *x = &s.samples[s.count++];

		x->t_ns = i * 10000000u;
		x->transactions = i * 1000;
		x->bytes = i * 1000000;
		x->bql_limit[1] = 7;
	}
	vnic_series_rate(&s, 0, 1000000000u, &tps, &gbps);
	assert_true(tps == 0 && gbps == 0);
	/* 0.5 s in: from the first sample */
	vnic_series_rate(&s, 50, 1000000000u, &tps, &gbps);
	assert_true(tps > 99999 && tps < 100001);
	assert_true(gbps > 0.7999 && gbps < 0.8001);
	/* 2 s in: the last second only */
	vnic_series_rate(&s, 200, 1000000000u, &tps, &gbps);
	assert_true(tps > 99999 && tps < 100001);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(vnic_series_write_csv(&s, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "t_s,transactions,bytes,tps_1s,gbps_1s,"
				  "tx0_bql_limit,tx0_bql_inflight,tx0_used,"
				  "tx1_bql_limit,tx1_bql_inflight,tx1_used,rx0_bufs_avail\n");
	while (fgets(line, sizeof(line), f)) {
		unsigned int commas = 0;

		for (char *p = line; *p; p++)
			commas += *p == ',';
		assert_int_equal(commas, 11);
		if (rows == 100)
			assert_int_equal(strncmp(line, "1.000000,100000,100000000,", 26), 0);
		rows++;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(rows, 201);
	assert_int_equal(vnic_series_write_csv(&s, "/nonexistent-dir/x.csv"), -ENOENT);

	/* Full: further samples are counted, not written past the end. */
	vnic_series_fini(&s);
	assert_null(s.samples);
	assert_int_equal(vnic_series_init(&s, 0, 1.0), -EINVAL);
}

struct run {
	struct vnic_bench_opts o;
	struct vnic_bench_run r;
};

static void test_bench_samples(void **state)
{
	struct run *x = calloc(1, sizeof(*x));
	const struct vnic_series *s;
	char path[] = "/tmp/vnic-test-samples-XXXXXX";
	uint64_t entries, rx_entries, expected, limit_seen = 0;
	char line[1024];
	size_t rows = 0, off = 0;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(x);
	vnic_bench_opts_default(&x->o, VNIC_WL_RR);
	x->o.duration_s = 1.0;
	x->o.quiet = true;
	x->o.rr.sessions = 16;
	x->o.topo.host_pkts = 512;
	x->o.sample_ms = 10;
	x->r.o = &x->o;
	assert_int_equal(vnic_bench_run(&x->r), 0);
	s = &x->r.series;

	/*
	 * About one sample a period. Never more than one per period (the grid
	 * guarantees it); fewer when the bench thread wakes late, which on a
	 * loaded 2-cpu machine (builds, TSan, the two cpu threads) can be half
	 * of them or worse: a fifth is the floor that still says "sampling ran
	 * all along", not how fast the machine is.
	 */
	expected = x->r.elapsed_ns / s->period_ns;
	if (s->count < expected / 5 || s->count > expected + 1 || s->count > s->cap)
		fail_msg("%zu samples in %" PRIu64 " ns at %" PRIu64 " ns (room for %zu)", s->count,
			 x->r.elapsed_ns, s->period_ns, s->cap);
	assert_int_equal(s->missed, 0);
	assert_int_equal(s->tx_queues, 1);
	assert_int_equal(s->rx_queues, 1);
	assert_true(x->r.res.transactions > 0);

	entries = vnic_topo_counter(&x->r.topo, "drv_a.neg_tx_entries");
	rx_entries = vnic_topo_counter(&x->r.topo, "drv_b.neg_rx_entries");
	assert_true(entries > 0 && rx_entries > 0);
	for (size_t i = 0; i < s->count; i++) {
		const struct vnic_sample *c = &s->samples[i];

		if (i) {
			const struct vnic_sample *p = &s->samples[i - 1];

			/* in time order, half a period apart or more, counters never going back */
			if (c->t_ns < p->t_ns + s->period_ns / 2 ||
			    c->transactions < p->transactions || c->bytes < p->bytes)
				fail_msg("sample %zu: t %" PRIu64 " after %" PRIu64
					 ", transactions "
					 "%" PRIu64 " after %" PRIu64 ", bytes %" PRIu64
					 " after %" PRIu64,
					 i, c->t_ns, p->t_ns, c->transactions, p->transactions,
					 c->bytes, p->bytes);
		}
		assert_true(c->transactions <= x->r.res.transactions);
		/* one field each, so a hard bound: descriptors in flight within the ring */
		if (c->tx_used[0] > entries)
			fail_msg("sample %zu: %u tx descriptors used of %" PRIu64, i, c->tx_used[0],
				 entries);
		/*
		 * Two fields each, read a moment apart while their owner writes them:
		 * a reading may be off by what moved in between, so these bounds
		 * hold for most samples, not for every one.
		 */
		if (c->rx_bufs_avail[0] > rx_entries ||
		    c->bql_inflight[0] > entries * (65536 + 256))
			off++;
		if (c->bql_limit[0] > limit_seen)
			limit_seen = c->bql_limit[0];
	}
	if (off > s->count / 10)
		fail_msg("%zu of %zu samples with more rx buffers than the ring or more bytes in "
			 "flight than its descriptors hold",
			 off, s->count);
	/* BQL is on and traffic ran: the limit moved off 0 at some point. */
	assert_true(limit_seen > 0);
	assert_true(s->samples[s->count - 1].transactions > 0);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(vnic_series_write_csv(&x->r.series, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "t_s,transactions,bytes,tps_1s,gbps_1s,"
				  "tx0_bql_limit,tx0_bql_inflight,tx0_used,rx0_bufs_avail\n");
	while (fgets(line, sizeof(line), f))
		rows++;
	fclose(f);
	unlink(path);
	assert_int_equal(rows, s->count);

	vnic_bench_cleanup(&x->r);
	assert_null(x->r.series.samples);
	free(x);
}

static void test_bench_without_sampler(void **state)
{
	struct run *x = calloc(1, sizeof(*x));

	(void)state;
	assert_non_null(x);
	vnic_bench_opts_default(&x->o, VNIC_WL_STREAM);
	x->o.duration_s = 0.2;
	x->o.quiet = true;
	x->o.topo.host_pkts = 512;
	x->r.o = &x->o;
	assert_int_equal(vnic_bench_run(&x->r), 0);
	assert_null(x->r.sampler);
	assert_int_equal(x->r.series.count, 0);
	assert_null(x->r.ctl);
	vnic_bench_cleanup(&x->r);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_rate_and_csv_on_a_script),
		cmocka_unit_test(test_bench_samples),
		cmocka_unit_test(test_bench_without_sampler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
