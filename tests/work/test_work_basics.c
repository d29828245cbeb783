// SPDX-License-Identifier: MIT
/* The workload layer's building blocks: histogram, payload pattern, summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "work/work.h"

static void assert_within(uint64_t got, uint64_t want, double rel)
{
	double d = (double)got - (double)want;

	if (d < 0)
		d = -d;
	if (d > rel * (double)want)
		fail_msg("%llu not within %.2f%% of %llu", (unsigned long long)got, rel * 100,
			 (unsigned long long)want);
}

static void test_hist_small_exact(void **state)
{
	static struct vnic_hist h;
	uint64_t v;

	(void)state;
	vnic_hist_reset(&h);
	assert_int_equal(vnic_hist_percentile(&h, 50), 0);
	for (v = 1; v <= 100; v++)
		vnic_hist_record(&h, v);
	assert_int_equal(h.count, 100);
	assert_int_equal(h.min, 1);
	assert_int_equal(h.max, 100);
	assert_int_equal(vnic_hist_percentile(&h, 50), 50);
	assert_int_equal(vnic_hist_percentile(&h, 99), 99);
	assert_int_equal(vnic_hist_percentile(&h, 99.9), 100);
	assert_int_equal(vnic_hist_percentile(&h, 0), 1);
	assert_int_equal(vnic_hist_percentile(&h, 100), 100);
	assert_true(vnic_hist_mean(&h) > 50.49 && vnic_hist_mean(&h) < 50.51);
}

static void test_hist_log_linear(void **state)
{
	static struct vnic_hist h, a, b;
	uint64_t v;

	(void)state;
	vnic_hist_reset(&h);
	vnic_hist_reset(&a);
	vnic_hist_reset(&b);
	for (v = 1; v <= 1000000; v++) {
		vnic_hist_record(&h, v * 1000);
		vnic_hist_record(v & 1 ? &a : &b, v * 1000);
	}
	assert_within(vnic_hist_percentile(&h, 50), 500000000, 0.01);
	assert_within(vnic_hist_percentile(&h, 99), 990000000, 0.01);
	assert_within(vnic_hist_percentile(&h, 99.9), 999000000, 0.01);
	assert_within(vnic_hist_percentile(&h, 1), 10000000, 0.01);
	/* Merging halves gives the whole. */
	vnic_hist_merge(&a, &b);
	assert_int_equal(a.count, h.count);
	assert_int_equal(a.sum, h.sum);
	assert_int_equal(a.min, h.min);
	assert_int_equal(a.max, h.max);
	assert_memory_equal(a.buckets, h.buckets, sizeof(h.buckets));
	/* The whole range is covered. */
	vnic_hist_record(&h, UINT64_MAX);
	vnic_hist_record(&h, 0);
	assert_int_equal(h.max, UINT64_MAX);
	assert_int_equal(vnic_hist_percentile(&h, 100), UINT64_MAX);
	assert_int_equal(h.buckets[VNIC_HIST_BUCKETS - 1], 1);
}

static void test_hist_resolution(void **state)
{
	static struct vnic_hist h;
	uint64_t v;

	(void)state;
	/* A single value anywhere comes back within a bucket: < 1 %. */
	for (v = 130; v < (1ull << 62); v = v * 3 + 7) {
		vnic_hist_reset(&h);
		vnic_hist_record(&h, v);
		vnic_hist_record(&h, v + v / 200);	/* same or next bucket */
		assert_within(vnic_hist_percentile(&h, 50), v, 0.008);
	}
}

static void test_pattern(void **state)
{
	uint8_t a[300], b[300];
	uint32_t offs[] = { 0, 1, 2, 3, 4, 5, 1000, 0xfffffffdu, 0xffffff00u };
	unsigned int i, len;

	(void)state;
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (len = 0; len < 40; len++) {
			vnic_work_pattern_fill(a, len, 7, offs[i]);
			assert_int_equal(vnic_work_pattern_check(a, len, 7, offs[i]), -1);
		}
		/* Pieces at their offsets concatenate to the whole. */
		vnic_work_pattern_fill(a, 300, 7, offs[i]);
		vnic_work_pattern_fill(b, 7, 7, offs[i]);
		vnic_work_pattern_fill(b + 7, 100, 7, offs[i] + 7);
		vnic_work_pattern_fill(b + 107, 193, 7, offs[i] + 107);
		assert_memory_equal(a, b, 300);
		/* Any shift is seen, and a wrong byte is found where it is. */
		for (len = 1; len <= 9; len++)
			assert_int_not_equal(vnic_work_pattern_check(a, 200, 7, offs[i] + len), -1);
		assert_int_not_equal(vnic_work_pattern_check(a, 200, 8, offs[i]), -1);
		a[157] ^= 0x10;
		assert_int_equal(vnic_work_pattern_check(a, 300, 7, offs[i]), 157);
	}
	/* Byte o is byte o % 4 of word (o / 4) * 0x9e3779b1 ^ seed. */
	vnic_work_pattern_fill(a, 8, 0x11223344u, 4);
	assert_int_equal(a[0], (uint8_t)((1u * 0x9e3779b1u) ^ 0x11223344u));
	assert_int_equal(a[5], (uint8_t)(((2u * 0x9e3779b1u) ^ 0x11223344u) >> 8));
}

/*
 * The pattern repeats every 2^32 bytes. A range that crosses the wrap must
 * continue with the bytes of offset 0: a receiver checks a segment (or a
 * GRO aggregate) starting after the wrap at its 32-bit offset, while the
 * sender may have filled it as part of a superpacket that began before.
 */
static void test_pattern_wrap(void **state)
{
	const uint64_t wrap = 1ull << 32;
	uint32_t before[] = { 1, 2, 3, 4, 5, 8, 9, 299, 1000 };
	uint8_t a[1200], b[1200];
	unsigned int i, cut, after;

	(void)state;
	for (i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		uint64_t off = wrap - before[i];

		vnic_work_pattern_fill(a, sizeof(a), 99, off);
		/* Cut anywhere, the piece after the cut filled at its own offset,
		 * given as the 64-bit offset or reduced mod 2^32. */
		for (cut = 0; cut <= 40 + before[i] && cut < sizeof(a); cut++) {
			memset(b, 0, sizeof(b));
			vnic_work_pattern_fill(b, cut, 99, off);
			vnic_work_pattern_fill(b + cut, sizeof(b) - cut, 99, off + cut);
			assert_memory_equal(a, b, sizeof(a));
			vnic_work_pattern_fill(b + cut, sizeof(b) - cut, 99, (uint32_t)(off + cut));
			assert_memory_equal(a, b, sizeof(a));
			assert_int_equal(vnic_work_pattern_check(a + cut, sizeof(a) - cut, 99,
								 (uint32_t)(off + cut)),
					 -1);
		}
		/* From the wrap on it is the pattern of offset 0, also at 2^33. */
		after = sizeof(a) - before[i];
		vnic_work_pattern_fill(b, after, 99, 0);
		assert_memory_equal(a + before[i], b, after);
		assert_int_equal(vnic_work_pattern_check(a + before[i], after, 99, 2 * wrap), -1);
		assert_int_equal(vnic_work_pattern_check(a, sizeof(a), 99, off + wrap), -1);
		assert_int_equal(vnic_work_pattern_check(a, sizeof(a), 99, off), -1);
		/* A wrong byte past the wrap is still found where it is. */
		a[before[i] + 77] ^= 1;
		assert_int_equal(vnic_work_pattern_check(a, sizeof(a), 99, off), before[i] + 77);
	}
}

static void test_summarize(void **state)
{
	static struct vnic_hist h;
	struct vnic_work_results r;
	struct vnic_work_summary s;

	(void)state;
	memset(&r, 0, sizeof(r));
	vnic_hist_reset(&h);
	vnic_hist_record(&h, 10000);
	vnic_hist_record(&h, 30000);
	r.transactions = 2000000;
	r.bytes = 1250000000;
	r.tx_pkts = 4000000;
	r.err.payload = 1;
	r.err.bad_csum = 2;
	r.latency = &h;
	vnic_work_summarize(&r, 2000000000ull, &s);
	assert_true(s.seconds == 2.0);
	assert_true(s.tps == 1e6);
	assert_true(s.gbps == 5.0);
	assert_true(s.tx_pps == 2e6);
	assert_int_equal(s.integrity_errors, 3);
	assert_int_equal(s.lat_min_ns, 10000);
	assert_int_equal(s.lat_max_ns, 30000);
	assert_true(s.lat_mean_ns == 20000.0);
	vnic_work_summarize(&r, 0, &s);
	assert_true(s.tps == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_small_exact),
		cmocka_unit_test(test_hist_log_linear),
		cmocka_unit_test(test_hist_resolution),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_pattern_wrap),
		cmocka_unit_test(test_summarize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
