// SPDX-License-Identifier: MIT
/*
 * Samplers: the time series behind the plots of `vnic experiment` (BQL limit
 * and inflight, throughput per second, queue depth). The bench's own thread
 * takes a sample every period; the datapath threads are never asked for
 * anything, the counters are read as any other reader reads them.
 *
 * Every buffer is allocated before the run: a sample is a counters call
 * into a scratch array and a copy of the few values wanted, found by index
 * (looked up once; looked up again only if the list ever changes shape).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

enum { COL_BQL_LIMIT, COL_BQL_INFLIGHT, COL_TX_USED, COL_RX_AVAIL, NCOLS };

struct src {
	struct vnic_counter *buf;
	unsigned int cap;
	unsigned int n;
};

struct vnic_sampler {
	struct vnic_series *s;
	const struct vnic_topo *t;
	struct src drv;			 /* drv_a */
	struct src dev;			 /* dev_b */
	int idx[NCOLS][VNIC_MAX_QUEUES]; /* into drv or dev; -1: absent */
};

/* Column c of queue q is the counter "<dir>q_<name>". */
static const char *const col_dir[NCOLS] = {"tx", "tx", "tx", "rx"};
static const char *const col_name[NCOLS] = {"bql_limit", "bql_inflight", "used", "bufs_avail"};

static void col_counter(char *buf, size_t len, unsigned int c, unsigned int q)
{
	snprintf(buf, len, "%s%u_%s", col_dir[c], q, col_name[c]);
}

int vnic_series_init(struct vnic_series *s, uint64_t period_ns, double duration_s)
{
	double want;

	memset(s, 0, sizeof(*s));
	if (!period_ns || !(duration_s > 0))
		return -EINVAL;
	/* one at the start, one per period, and slack for a late clock */
	want = duration_s * 1e9 / (double)period_ns * 1.25 + 16;
	s->cap = want > VNIC_SERIES_MAX_SAMPLES ? VNIC_SERIES_MAX_SAMPLES : (size_t)want;
	s->samples = calloc(s->cap, sizeof(*s->samples));
	if (!s->samples) {
		s->cap = 0;
		return -ENOMEM;
	}
	s->period_ns = period_ns;
	return 0;
}

void vnic_series_fini(struct vnic_series *s)
{
	free(s->samples);
	memset(s, 0, sizeof(*s));
}

static unsigned int drv_fill(const void *obj, struct vnic_counter *out, unsigned int max)
{
	return vnic_drv_counters(obj, out, max);
}

static unsigned int dev_fill(const void *obj, struct vnic_counter *out, unsigned int max)
{
	return vnic_dev_counters(obj, out, max);
}

static int src_init(struct src *src, const void *obj,
		    unsigned int (*fill)(const void *, struct vnic_counter *, unsigned int))
{
	/* The list is fixed once the queues are negotiated; some spare in case. */
	src->cap = fill(obj, NULL, 0) + 64;
	src->buf = calloc(src->cap, sizeof(*src->buf));
	if (!src->buf)
		return -ENOMEM;
	src->n = fill(obj, src->buf, src->cap);
	if (src->n > src->cap)
		src->n = src->cap;
	return 0;
}

static int find(const struct src *src, const char *name)
{
	const struct vnic_counter *e = vnic_counter_find(src->buf, src->n, name);

	return e ? (int)(e - src->buf) : -1;
}

static uint64_t value_of(const struct src *src, const char *name)
{
	int i = find(src, name);

	return i < 0 ? 0 : src->buf[i].value;
}

static void lookup(struct vnic_sampler *sm)
{
	char name[VNIC_COUNTER_NAME_MAX];

	for (unsigned int c = 0; c < NCOLS; c++) {
		const struct src *src = c == COL_RX_AVAIL ? &sm->dev : &sm->drv;

		for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
			col_counter(name, sizeof(name), c, q);
			sm->idx[c][q] = find(src, name);
		}
	}
}

int vnic_sampler_create(struct vnic_sampler **smp, struct vnic_series *s, const struct vnic_topo *t)
{
	struct vnic_sampler *sm;
	uint64_t ntx, nrx;
	int err;

	*smp = NULL;
	if (!s->samples || !t->drv[0] || !t->dev[1])
		return -EINVAL;
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return -ENOMEM;
	sm->s = s;
	sm->t = t;
	err = src_init(&sm->drv, t->drv[0], drv_fill);
	if (!err)
		err = src_init(&sm->dev, t->dev[1], dev_fill);
	if (err) {
		vnic_sampler_destroy(sm);
		return err;
	}
	ntx = value_of(&sm->drv, "neg_tx_queues");
	nrx = value_of(&sm->dev, "neg_rx_queues");
	s->tx_queues = (unsigned int)(ntx < VNIC_MAX_QUEUES ? ntx : VNIC_MAX_QUEUES);
	s->rx_queues = (unsigned int)(nrx < VNIC_MAX_QUEUES ? nrx : VNIC_MAX_QUEUES);
	lookup(sm);
	*smp = sm;
	return 0;
}

void vnic_sampler_destroy(struct vnic_sampler *sm)
{
	if (!sm)
		return;
	free(sm->drv.buf);
	free(sm->dev.buf);
	free(sm);
}

/* The value at the looked-up index, looking up again if the list moved. */
static uint32_t col(struct vnic_sampler *sm, unsigned int c, unsigned int q, bool *moved)
{
	const struct src *src = c == COL_RX_AVAIL ? &sm->dev : &sm->drv;
	int i = sm->idx[c][q];
	uint64_t v;

	if (i < 0 || (unsigned int)i >= src->n) {
		*moved = true;
		return 0;
	}
	v = src->buf[i].value;
	/*
	 * A gauge computed from two fields another thread is writing (inflight
	 * is queued - completed) can be read torn and wrap; such a value is not
	 * a measurement, so it is recorded as 0 rather than as 4 GB in flight.
	 */
	if (v > UINT32_MAX / 2)
		v = 0;
	return (uint32_t)v;
}

static bool names_match(struct vnic_sampler *sm)
{
	char name[VNIC_COUNTER_NAME_MAX];

	/* One spot check per source: the first tx and rx queue's names. */
	if (sm->idx[COL_BQL_LIMIT][0] >= 0) {
		col_counter(name, sizeof(name), COL_BQL_LIMIT, 0);
		if ((unsigned int)sm->idx[COL_BQL_LIMIT][0] >= sm->drv.n ||
		    strcmp(sm->drv.buf[sm->idx[COL_BQL_LIMIT][0]].name, name))
			return false;
	}
	if (sm->idx[COL_RX_AVAIL][0] >= 0) {
		col_counter(name, sizeof(name), COL_RX_AVAIL, 0);
		if ((unsigned int)sm->idx[COL_RX_AVAIL][0] >= sm->dev.n ||
		    strcmp(sm->dev.buf[sm->idx[COL_RX_AVAIL][0]].name, name))
			return false;
	}
	return true;
}

void vnic_sampler_take(struct vnic_sampler *sm, uint64_t t_ns, const struct vnic_work_results *res)
{
	struct vnic_series *s = sm->s;
	struct vnic_sample *x;
	bool moved = false;
	unsigned int q;

	if (s->count >= s->cap) {
		s->missed++;
		return;
	}
	sm->drv.n = vnic_drv_counters(sm->t->drv[0], sm->drv.buf, sm->drv.cap);
	sm->dev.n = vnic_dev_counters(sm->t->dev[1], sm->dev.buf, sm->dev.cap);
	if (sm->drv.n > sm->drv.cap)
		sm->drv.n = sm->drv.cap;
	if (sm->dev.n > sm->dev.cap)
		sm->dev.n = sm->dev.cap;
	if (!names_match(sm))
		lookup(sm);

	x = &s->samples[s->count++];
	x->t_ns = t_ns;
	x->transactions = res->transactions;
	x->bytes = res->bytes;
	for (q = 0; q < s->tx_queues; q++) {
		x->bql_limit[q] = col(sm, COL_BQL_LIMIT, q, &moved);
		x->bql_inflight[q] = col(sm, COL_BQL_INFLIGHT, q, &moved);
		x->tx_used[q] = col(sm, COL_TX_USED, q, &moved);
	}
	for (q = 0; q < s->rx_queues; q++)
		x->rx_bufs_avail[q] = col(sm, COL_RX_AVAIL, q, &moved);
	if (moved)
		lookup(sm);
}

void vnic_series_rate(const struct vnic_series *s, size_t i, uint64_t window_ns, double *tps,
		      double *gbps)
{
	const struct vnic_sample *cur, *old;
	size_t lo = 0, hi = i;
	double dt;

	*tps = *gbps = 0;
	if (i >= s->count || !i)
		return;
	cur = &s->samples[i];
	/* The first sample no older than the window: samples are in time order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cur->t_ns - s->samples[mid].t_ns > window_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == i)
		lo = i - 1;
	old = &s->samples[lo];
	dt = (double)(cur->t_ns - old->t_ns) / 1e9;
	if (dt <= 0)
		return;
	*tps = (double)(cur->transactions - old->transactions) / dt;
	*gbps = (double)(cur->bytes - old->bytes) * 8 / dt / 1e9;
}

int vnic_series_write_csv_file(const struct vnic_series *s, FILE *f)
{
	unsigned int q;
	size_t i;

	fputs("t_s,transactions,bytes,tps_1s,gbps_1s", f);
	for (q = 0; q < s->tx_queues; q++)
		fprintf(f, ",tx%u_bql_limit,tx%u_bql_inflight,tx%u_used", q, q, q);
	for (q = 0; q < s->rx_queues; q++)
		fprintf(f, ",rx%u_bufs_avail", q);
	fputc('\n', f);
	for (i = 0; i < s->count; i++) {
		const struct vnic_sample *x = &s->samples[i];
		double tps, gbps;

		vnic_series_rate(s, i, 1000000000u, &tps, &gbps);
		fprintf(f, "%.6f,%" PRIu64 ",%" PRIu64 ",%.1f,%.6f", (double)x->t_ns / 1e9,
			x->transactions, x->bytes, tps, gbps);
		for (q = 0; q < s->tx_queues; q++)
			fprintf(f, ",%" PRIu32 ",%" PRIu32 ",%" PRIu32, x->bql_limit[q],
				x->bql_inflight[q], x->tx_used[q]);
		for (q = 0; q < s->rx_queues; q++)
			fprintf(f, ",%" PRIu32, x->rx_bufs_avail[q]);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

int vnic_series_write_csv(const struct vnic_series *s, const char *path)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = vnic_series_write_csv_file(s, f);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
