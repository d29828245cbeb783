// SPDX-License-Identifier: MIT
/*
 * Software segmentation benchmark: one ~64 KiB superpacket (TCPv4 at MSS 1448,
 * TCPv6 at 1428, UDPv4 at 1472), segmented again and again into the same
 * preallocated outputs, hot cache. COMPLETE rows run under every checksum
 * implementation this CPU has; PARTIAL rows do not checksum the payload.
 * Prints ns per output segment, ns per superpacket and payload Gbit/s.
 *
 * Run a Release build, pinned, on an idle machine:
 *	taskset -c 1 ./build/bench/bench_gso
 *
 * The hot loop allocates nothing: the pools are set up before it, and the
 * heap in use is compared before and after every row (mallinfo2).
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "net/net.h"
#include "pktgen.h"

enum {
	BENCH_SUPERPACKETS = 2000,	/* per timed run */
	BENCH_REPS = 15,		/* runs per row; the best one is kept */
	OUT_BUF = 2048,
	HEADROOM = 128,
};

struct bench_case {
	const char *name;
	bool ipv6;
	uint8_t l4;
	uint16_t mss;
	uint32_t segs;
};

static const struct bench_case cases[] = {
	{ "tcp4", false, VNIC_IPPROTO_TCP, 1448, 45 },	/* 65160 B of payload */
	{ "tcp6", true, VNIC_IPPROTO_TCP, 1428, 45 },	/* 64260 B */
	{ "udp4", false, VNIC_IPPROTO_UDP, 1472, 44 },	/* 64768 B */
};

static const char *const impls[] = { "scalar64", "avx2" };

/* Superpacket counts go through volatile so the loop cannot be specialised. */
static volatile unsigned int bench_iters = BENCH_SUPERPACKETS;
static volatile uint32_t sink;

static struct vnic_pkt *outs[VNIC_GSO_MAX_SEGS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per superpacket of one run; the clock is read only outside the loop. */
static double time_run(const struct vnic_pkt *in, uint32_t segs, unsigned int flags)
{
	unsigned int iters = bench_iters;
	uint32_t acc = 0;
	uint64_t t0 = now_ns();

	for (unsigned int i = 0; i < iters; i++) {
		int n = vnic_gso_segment(in, outs, segs, flags);

		/* Touch the last segment so its writes count as used. */
		acc += (uint32_t)n + outs[segs - 1]->data[outs[segs - 1]->len - 1];
	}
	sink += acc;
	return (double)(now_ns() - t0) / (double)iters;
}

static int bench_row(const char *name, const char *impl, const struct vnic_pkt *in,
		     uint32_t segs, unsigned int flags)
{
	size_t heap0, heap1;
	double best = 1e30;

	if (vnic_gso_segment(in, outs, segs, flags) != (int)segs) {
		fprintf(stderr, "%s: segmentation failed\n", name);
		return -1;
	}
	time_run(in, segs, flags);	/* warm up */
	heap0 = mallinfo2().uordblks;
	for (int r = 0; r < BENCH_REPS; r++) {
		double ns = time_run(in, segs, flags);

		if (ns < best)
			best = ns;
	}
	heap1 = mallinfo2().uordblks;
	printf("%-6s %-8s %-8s %5u %10.1f %12.0f %9.2f %+8zd\n", name,
	       flags & VNIC_GSO_F_CSUM_PARTIAL ? "partial" : "complete", impl, segs,
	       best / segs, best,
	       (double)(in->len - (uint32_t)(in->l2_len + in->l3_len + in->l4_len)) * 8.0 / best,
	       (ssize_t)(heap1 - heap0));
	return 0;
}

int main(void)
{
	struct vnic_pkt_pool in_pool, out_pool;
	struct vnic_pktgen_flow f;
	struct vnic_pkt *in;
	int err = 0;

	if (vnic_pkt_pool_init(&in_pool, 8, VNIC_PKT_MAX_LEN + HEADROOM, HEADROOM) ||
	    vnic_pkt_pool_init(&out_pool, VNIC_GSO_MAX_SEGS, OUT_BUF, HEADROOM)) {
		fprintf(stderr, "pool setup failed\n");
		return 1;
	}
	in = vnic_pkt_alloc(&in_pool);
	if (vnic_pkt_alloc_bulk(&out_pool, outs, VNIC_GSO_MAX_SEGS) != VNIC_GSO_MAX_SEGS)
		return 1;

	printf("%d superpackets per run, best of %d runs; default checksum: %s\n",
	       BENCH_SUPERPACKETS, BENCH_REPS, vnic_csum_impl_name());
	printf("%-6s %-8s %-8s %5s %10s %12s %9s %8s\n", "case", "mode", "csum", "segs",
	       "ns/seg", "ns/superpkt", "Gbit/s", "heap+B");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]) && !err; c++) {
		const struct bench_case *bc = &cases[c];
		const char *def = vnic_csum_impl_name();

		vnic_pktgen_flow_init(&f, bc->ipv6, bc->l4);
		f.tcp_opts_len = 12;	/* NOP NOP timestamps, as Linux sends */
		memcpy(f.tcp_opts, "\x01\x01\x08\x0a\x00\x01\x02\x03\x00\x04\x05\x06", 12);
		if (vnic_pktgen_build_gso(in, &f, 0, bc->segs * bc->mss, bc->mss)) {
			fprintf(stderr, "%s: build failed\n", bc->name);
			return 1;
		}
		for (size_t k = 0; k < sizeof(impls) / sizeof(impls[0]) && !err; k++) {
			if (vnic_csum_impl_select(impls[k]))
				continue;
			err = bench_row(bc->name, impls[k], in, bc->segs, VNIC_GSO_F_CSUM_COMPLETE);
		}
		vnic_csum_impl_select(def);
		if (!err)
			err = bench_row(bc->name, "-", in, bc->segs, VNIC_GSO_F_CSUM_PARTIAL);
	}

	vnic_pkt_pool_fini(&in_pool);
	vnic_pkt_pool_fini(&out_pool);
	return err ? 1 : 0;
}
