// SPDX-License-Identifier: MIT
/*
 * Checksum micro-benchmark: vnic_csum_partial (every implementation this CPU
 * can run) against the naive reference, hot cache, at 64, 256, 1500 and
 * 65536 bytes in one run. Prints ns per call, GB/s and the speed-up over the
 * naive loop, then checks the goal (>= 4x naive at 1500 B). Then copy and
 * checksum: memcpy followed by vnic_csum_partial against vnic_csum_copy (one
 * pass), per implementation, source and destination hot, at 64, 256, 1448
 * (one TCP segment's payload), 1500 and 65536 bytes.
 *
 * Run a Release build, pinned, on an idle machine:
 *	taskset -c 1 ./build/bench/bench_csum
 *
 * Below 256 B vnic_csum_partial always takes the scalar path, so the "avx2"
 * row at 64 B measures scalar64 plus the dispatch.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csum_ref.h"
#include "net/net.h"
#include "support.h"

enum {
	BENCH_BUF = 65536 + 64,
	BENCH_BYTES_PER_RUN = 4 << 20,	/* bytes summed per timed run */
	BENCH_REPS = 31,		/* runs per row; the best one is kept */
};

/* Sizes go through volatile so the compiler cannot specialise on them. */
static volatile size_t bench_sizes[] = { 64, 256, 1500, 65536 };
static volatile uint32_t sink;

struct bench_row {
	const char *name;	/* an implementation, or "naive" */
	bool avail;
	double best_ns;		/* per call */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t run_partial(const uint8_t *buf, size_t len, size_t iters)
{
	uint32_t acc = 0;

	for (size_t i = 0; i < iters; i++)
		acc += vnic_csum_partial(buf, len, 0);
	return acc;
}

static uint32_t run_naive(const uint8_t *buf, size_t len, size_t iters)
{
	uint32_t acc = 0;

	for (size_t i = 0; i < iters; i++)
		acc += vnic_test_csum_naive(buf, len);
	return acc;
}

/* ns per call of one run; the clock is read only outside the loop. */
static double time_row(const struct bench_row *row, const uint8_t *buf, size_t len, size_t iters)
{
	bool naive = !strcmp(row->name, "naive");
	uint64_t t0;

	if (!naive)
		vnic_csum_impl_select(row->name);
	t0 = now_ns();
	sink += naive ? run_naive(buf, len, iters) : run_partial(buf, len, iters);
	return (double)(now_ns() - t0) / (double)iters;
}

/*
 * The rows of one size are timed in turn, BENCH_REPS rounds, keeping each
 * row's best: on a shared or frequency-scaling machine the speed drifts over
 * seconds, and interleaving exposes every row to the same drift.
 */
static void bench_size(struct bench_row *rows, size_t nrows, const uint8_t *buf, size_t len)
{
	size_t iters = BENCH_BYTES_PER_RUN / len;

	for (size_t i = 0; i < nrows; i++) {
		rows[i].best_ns = 1e30;
		if (rows[i].avail)
			sink += (uint32_t)time_row(&rows[i], buf, len, iters / 4 + 1); /* warm up */
	}
	for (int r = 0; r < BENCH_REPS; r++) {
		for (size_t i = 0; i < nrows; i++) {
			double ns;

			if (!rows[i].avail)
				continue;
			ns = time_row(&rows[i], buf, len, iters);
			if (ns < rows[i].best_ns)
				rows[i].best_ns = ns;
		}
	}
}

/* ---- copy and checksum ----------------------------------------------------- */

static volatile size_t copy_sizes[] = { 64, 256, 1448, 1500, 65536 };

static uint32_t run_copy_then_sum(uint8_t *dst, const uint8_t *src, size_t len, size_t iters)
{
	uint32_t acc = 0;

	for (size_t i = 0; i < iters; i++) {
		memcpy(dst, src, len);
		acc += vnic_csum_partial(dst, len, 0);
	}
	return acc;
}

static uint32_t run_copy_sum(uint8_t *dst, const uint8_t *src, size_t len, size_t iters)
{
	uint32_t acc = 0;

	for (size_t i = 0; i < iters; i++)
		acc += vnic_csum_copy(dst, src, len, 0);
	return acc;
}

/* ns per call, best of BENCH_REPS interleaved runs of each way. */
static void bench_copy_size(uint8_t *dst, const uint8_t *src, size_t len, double *two_pass,
			    double *one_pass)
{
	size_t iters = BENCH_BYTES_PER_RUN / len;
	uint64_t t0;
	double ns;

	*two_pass = *one_pass = 1e30;
	sink += run_copy_then_sum(dst, src, len, iters / 4 + 1);
	sink += run_copy_sum(dst, src, len, iters / 4 + 1);
	for (int r = 0; r < BENCH_REPS; r++) {
		t0 = now_ns();
		sink += run_copy_then_sum(dst, src, len, iters);
		ns = (double)(now_ns() - t0) / (double)iters;
		if (ns < *two_pass)
			*two_pass = ns;
		t0 = now_ns();
		sink += run_copy_sum(dst, src, len, iters);
		ns = (double)(now_ns() - t0) / (double)iters;
		if (ns < *one_pass)
			*one_pass = ns;
	}
}

static void bench_copy(const struct bench_row *rows, size_t nrows, const uint8_t *src)
{
	uint8_t *dst = aligned_alloc(64, BENCH_BUF);

	if (!dst) {
		perror("aligned_alloc");
		return;
	}
	printf("\ncopy and checksum, ns per call (memcpy then partial | csum_copy)\n");
	printf("%8s  %-9s %12s %12s %9s\n", "size", "impl", "copy+csum", "csum_copy", "speed-up");
	for (size_t s = 0; s < sizeof(copy_sizes) / sizeof(copy_sizes[0]); s++) {
		size_t len = copy_sizes[s];

		for (size_t i = 1; i < nrows; i++) {
			double two, one;

			if (!rows[i].avail)
				continue;
			vnic_csum_impl_select(rows[i].name);
			bench_copy_size(dst, src, len, &two, &one);
			printf("%8zu  %-9s %12.1f %12.1f %8.2fx\n", len, rows[i].name, two, one,
			       two / one);
		}
	}
	free(dst);
}

int main(void)
{
	struct bench_row rows[] = {
		{ .name = "naive", .avail = true },
		{ .name = "scalar64" },
		{ .name = "avx2" },
	};
	const size_t nrows = sizeof(rows) / sizeof(rows[0]);
	uint64_t seed = 0x6373756d62656e63ull;
	uint8_t *buf = aligned_alloc(64, BENCH_BUF);
	double ratio_1500 = 0;
	const char *dflt;

	if (!buf) {
		perror("aligned_alloc");
		return 1;
	}
	vnic_test_fill_random(&seed, buf, BENCH_BUF);
	dflt = vnic_csum_impl_name();
	for (size_t i = 1; i < nrows; i++)
		rows[i].avail = vnic_csum_impl_select(rows[i].name) == 0;
	vnic_csum_impl_select(dflt);

	printf("default implementation: %s\n\n", dflt);
	printf("%8s  %-9s %10s %8s %9s\n", "size", "impl", "ns/call", "GB/s", "x naive");
	for (size_t s = 0; s < sizeof(bench_sizes) / sizeof(bench_sizes[0]); s++) {
		size_t len = bench_sizes[s];

		bench_size(rows, nrows, buf, len);
		for (size_t i = 0; i < nrows; i++) {
			const struct bench_row *row = &rows[i];

			if (!row->avail) {
				printf("%8zu  %-9s %10s\n", len, row->name, "n/a");
				continue;
			}
			printf("%8zu  %-9s %10.1f %8.2f %9.2f\n", len, row->name, row->best_ns,
			       len / row->best_ns, rows[0].best_ns / row->best_ns);
			if (len == 1500 && !strcmp(row->name, dflt))
				ratio_1500 = rows[0].best_ns / row->best_ns;
		}
	}
	vnic_csum_impl_select(dflt);
	printf("\n1500 B, default (%s) vs naive: %.2fx (goal >= 4x): %s\n", dflt, ratio_1500,
	       ratio_1500 >= 4.0 ? "ok" : "BELOW TARGET");
	bench_copy(rows, nrows, buf);
	vnic_csum_impl_select(dflt);
	free(buf);
	return 0;
}
