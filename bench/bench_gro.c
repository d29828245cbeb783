// SPDX-License-Identifier: MIT
/*
 * GRO cost per received packet.
 *
 * A stream of 1448-byte TCPv4 segments (MSS of a 1500 MTU with timestamps
 * off), 44 per aggregate: the 44th segment of each burst carries PSH, as the
 * last segment of a sender's 64 KB TSO burst does, so every aggregate closes
 * on its own. Cases: one flow; eight flows interleaved segment by segment
 * (one per bucket, so eight aggregates grow at once); and two that never
 * merge (UDP, and TCP segments that each carry PSH). The TCP cases run with
 * the checksum verified by the device (UNNECESSARY) and, for one flow, left
 * to GRO (NONE: verified in software).
 *
 * Packets are built once as templates. Each iteration takes a buffer from the
 * pool, copies a template into it and hands it to GRO, which frees what it
 * merges; the output callback frees what comes out. The same loop without
 * GRO (take, copy, free) is timed separately and reported as "base"; "gro"
 * is the difference, the cost of GRO itself, including its copy of each
 * payload into the aggregate.
 *
 *	bench_gro [iterations-per-run]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/net.h"
#include "pktgen.h"

enum {
	MSS = 1448,
	SEGS_PER_AGG = 44,
	MAX_FLOWS = 8,
	HEADROOM = 128,
	RX_BUF = 2048,
	RX_COUNT = 64,
	AGG_BUF = VNIC_PKT_MAX_LEN + HEADROOM,
	AGG_COUNT = 16,
	RUNS = 7,
};

struct tmpl {
	uint8_t bytes[RX_BUF];
	uint32_t len;
	uint32_t hash;
};

struct bench_case {
	const char *name;
	int nflows;
	bool udp;
	bool psh_every; /* every segment PSH: nothing is ever held */
	uint8_t ip_summed;
};

static const struct bench_case cases[] = {
	{"tcp4 1 flow, csum unnecessary", 1, false, false, VNIC_CSUM_UNNECESSARY},
	{"tcp4 8 flows interleaved", 8, false, false, VNIC_CSUM_UNNECESSARY},
	{"tcp4 1 flow, csum none (sw verify)", 1, false, false, VNIC_CSUM_NONE},
	{"pass-through: udp4", 1, true, false, VNIC_CSUM_UNNECESSARY},
	{"pass-through: tcp4, PSH on each", 1, false, true, VNIC_CSUM_UNNECESSARY},
};

static struct tmpl tmpls[MAX_FLOWS * SEGS_PER_AGG];
static struct vnic_pkt_pool rx_pool, agg_pool;
static uint64_t outputs, out_bytes;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void out(void *ctx, struct vnic_pkt *pkt)
{
	(void)ctx;
	outputs++;
	out_bytes += pkt->len;
	vnic_pkt_free(pkt);
}

/*
 * Templates in arrival order: segment k of every flow, then k + 1. The
 * sequence numbers and IDs of a burst repeat each time the templates are
 * replayed, so each burst is a complete aggregate on its own.
 */
static unsigned int build_templates(const struct bench_case *c)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&rx_pool);
	unsigned int n = 0;

	for (int k = 0; k < SEGS_PER_AGG; k++) {
		for (int f = 0; f < c->nflows; f++) {
			struct vnic_pktgen_flow fl;

			vnic_pktgen_flow_init(&fl, false,
					      c->udp ? VNIC_IPPROTO_UDP : VNIC_IPPROTO_TCP);
			fl.sport = (uint16_t)(40000 + f);
			fl.seq = 1000 + (uint32_t)k * MSS;
			fl.ip_id = (uint16_t)(0x1234 + k);
			if (c->psh_every || k == SEGS_PER_AGG - 1)
				fl.tcp_flags |= VNIC_TCP_PSH;
			if (vnic_pktgen_build(p, &fl, (uint32_t)k * MSS, MSS)) {
				fprintf(stderr, "bench_gro: cannot build a template\n");
				exit(1);
			}
			memcpy(tmpls[n].bytes, p->data, p->len);
			tmpls[n].len = p->len;
			tmpls[n].hash = 0x9e370000u + (uint32_t)f; /* bucket f */
			n++;
		}
	}
	vnic_pkt_free(p);
	return n;
}

static inline struct vnic_pkt *take(const struct tmpl *t, uint8_t ip_summed)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&rx_pool);

	memcpy(p->data, t->bytes, t->len);
	p->len = t->len;
	p->hash = t->hash;
	p->ip_summed = ip_summed;
	return p;
}

/* ns per packet for iters packets: with GRO, or only take + copy + free. */
static double run(const struct bench_case *c, unsigned int ntmpl, uint64_t iters, bool gro_on,
		  struct vnic_gro *gro)
{
	uint64_t t0, t1;
	unsigned int k = 0;

	t0 = now_ns();
	for (uint64_t i = 0; i < iters; i++) {
		struct vnic_pkt *p = take(&tmpls[k], c->ip_summed);

		if (gro_on)
			vnic_gro_receive(gro, p);
		else
			vnic_pkt_free(p);
		if (++k == ntmpl)
			k = 0;
	}
	if (gro_on)
		vnic_gro_flush(gro);
	t1 = now_ns();
	return (double)(t1 - t0) / (double)iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;

	if (vnic_pkt_pool_init(&rx_pool, RX_COUNT, RX_BUF, HEADROOM) ||
	    vnic_pkt_pool_init(&agg_pool, AGG_COUNT, AGG_BUF, HEADROOM)) {
		fprintf(stderr, "bench_gro: pool allocation failed\n");
		return 1;
	}
	/* Whole bursts, so every run ends with the table empty. */
	iters -= iters % (MAX_FLOWS * SEGS_PER_AGG);
	if (iters == 0)
		iters = MAX_FLOWS * SEGS_PER_AGG;

	printf("GRO, %d-byte TCPv4 segments, %d per aggregate; %llu packets per run, "
	       "best of %d runs; csum impl %s\n\n",
	       MSS, SEGS_PER_AGG, (unsigned long long)iters, RUNS, vnic_csum_impl_name());
	printf("%-38s %9s %9s %9s %8s %9s\n", "case", "total ns", "base ns", "gro ns", "Mpps",
	       "segs/out");
	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const struct bench_case *c = &cases[ci];
		unsigned int ntmpl = build_templates(c);
		double tot[RUNS], base[RUNS];
		struct vnic_gro gro;

		vnic_gro_init(&gro, &agg_pool, out, NULL);
		run(c, ntmpl, iters / 4, true, &gro); /* warm caches and pools */
		outputs = 0;
		for (int r = 0; r < RUNS; r++) {
			vnic_gro_init(&gro, &agg_pool, out, NULL);
			tot[r] = run(c, ntmpl, iters, true, &gro);
			base[r] = run(c, ntmpl, iters, false, NULL);
		}
		if (gro.nheld || rx_pool.nfree != rx_pool.count ||
		    agg_pool.nfree != agg_pool.count) {
			fprintf(stderr, "bench_gro: packets left behind\n");
			return 1;
		}
		/* The fastest run is the one least disturbed by the rest of the machine. */
		qsort(tot, RUNS, sizeof(tot[0]), cmp_double);
		qsort(base, RUNS, sizeof(base[0]), cmp_double);
		printf("%-38s %9.1f %9.1f %9.1f %8.2f %9.1f\n", c->name, tot[0], base[0],
		       tot[0] - base[0], 1e3 / tot[0], (double)iters * RUNS / (double)outputs);
	}
	printf("\ntotal: take + copy template + GRO + free; base: take + copy + free;\n"
	       "gro = total - base. segs/out: packets received per packet delivered.\n");
	vnic_pkt_pool_fini(&rx_pool);
	vnic_pkt_pool_fini(&agg_pool);
	return 0;
}
