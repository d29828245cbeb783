// SPDX-License-Identifier: MIT
/*
 * `vnic experiment NAME|all|list`: the measurements of each patch vnic
 * reproduces (docs/SEEDS.md), one command each. This file is the part the
 * experiments share: their cases on the bench runner, the figures of a
 * case, the files (CSV, traces, series, plots), the JSON, and the command.
 * Each experiment's cases and report are in experiments/NAME.c, the
 * markdown helpers in experiments/report.c (experiment.h says how they fit).
 *
 * Output: markdown tables (the thread's figures beside ours) on stdout or
 * --md FILE, or one JSON object on stdout (--json); and in --out DIR (by
 * default a new folder experiment-NAME-TIME in the current directory):
 * NAME.csv (one row per case), NAME_trace.csv and NAME_trace.txt (the
 * nested reports), time series CSVs, and NAME.png plots drawn by gnuplot
 * (plot.c). Existing results are never written over unless --force.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "experiment.h"

/* Seconds per round and rounds; --short shrinks both. */
#define XP_ROUND_S	 1.5
#define XP_ROUNDS	 3
#define XP_TRACE_S	 1.0
#define XP_SHORT_ROUND_S 0.2
#define XP_SHORT_TRACE_S 0.15

static const struct xp_exp *const experiments[] = {
	&vnic_xp_replenish, &vnic_xp_hdr_build, &vnic_xp_direct, &vnic_xp_bql,
	&vnic_xp_csum,	    &vnic_xp_gro,	&vnic_xp_reclaim,
};

enum { NEXPERIMENTS = sizeof(experiments) / sizeof(experiments[0]) };

/* The trace points the summary CSV has columns for (NAME_avg_us, NAME_hits). */
static const char *const tp_cols[] = {
	"xmit",	       "tx_flush",    "send_direct", "send_indirect", "csum_help",
	"hdr_build",   "tx_complete", "napi_poll",   "replenish",     "gro_receive",
	"deliver",     "dev_tx",      "dev_rx",
};

/* ---------------------------------------------------------------------------
 * Running a case: one round on the bench runner, its figures added up
 * ------------------------------------------------------------------------- */

static void add_results(struct vnic_work_results *d, const struct vnic_work_results *s)
{
	d->transactions += s->transactions;
	d->bytes += s->bytes;
	d->tx_pkts += s->tx_pkts;
	d->tx_segs += s->tx_segs;
	d->tx_bytes += s->tx_bytes;
	d->rx_pkts += s->rx_pkts;
	d->rx_segs += s->rx_segs;
	d->tsq_throttled += s->tsq_throttled;
	if (s->tsq_max > d->tsq_max)
		d->tsq_max = s->tsq_max;
	d->err.payload += s->err.payload;
	d->err.bad_csum += s->err.bad_csum;
	d->err.lost += s->err.lost;
	d->err.ooo += s->err.ooo;
	d->err.ooo_dropped += s->err.ooo_dropped;
	d->err.dup += s->err.dup;
	d->err.retransmits += s->err.retransmits;
	d->err.fast_retransmits += s->err.fast_retransmits;
	d->err.sack_recovered += s->err.sack_recovered;
	d->err.probes += s->err.probes;
	d->err.spurious += s->err.spurious;
	d->err.timeouts += s->err.timeouts;
	d->err.bad_hdr += s->err.bad_hdr;
	d->err.no_conn += s->err.no_conn;
	d->err.rx_overflow += s->err.rx_overflow;
	d->err.tx_dropped += s->err.tx_dropped;
	d->err.tx_busy += s->err.tx_busy;
	d->err.tx_nobuf += s->err.tx_nobuf;
}

/*
 * The topology's counters. A split run's server counters are asked of the
 * server into what room is left, so the count without a buffer leaves them
 * out: the buffer grows until they fit with room to spare.
 */
static struct vnic_counter *topo_counters(const struct vnic_topo *t, unsigned int *n)
{
	unsigned int cap = vnic_topo_counters(t, NULL, 0) + 256;

	for (;;) {
		struct vnic_counter *buf = calloc(cap, sizeof(*buf));

		if (!buf)
			return NULL;
		*n = vnic_topo_counters(t, buf, cap);
		if (*n < cap)
			return buf;
		free(buf);
		cap *= 2;
	}
}

/* Adds the topology's counters to the case's, matched by name. 0 or -ENOMEM. */
static int add_counters(struct xp_case *c, const struct vnic_topo *t)
{
	unsigned int n, i, j;
	struct vnic_counter *buf = topo_counters(t, &n);

	if (!buf)
		return -ENOMEM;
	if (!c->ctr) {
		c->ctr = buf;
		c->nctr = n;
		return 0;
	}
	/* Same configuration, same list: by index, by name only if it moved. */
	for (i = 0; i < n; i++) {
		if (i < c->nctr && !strcmp(c->ctr[i].name, buf[i].name)) {
			c->ctr[i].value += buf[i].value;
			continue;
		}
		for (j = 0; j < c->nctr; j++) {
			if (!strcmp(c->ctr[j].name, buf[i].name)) {
				c->ctr[j].value += buf[i].value;
				break;
			}
		}
	}
	free(buf);
	return 0;
}

/* The traced round's rows, their totals per point name, and the nested report. */
static void take_trace(struct xp_case *c)
{
	size_t len = 0;
	FILE *f;

	free(c->rows);
	c->nrows = 0;
	c->rows = calloc(XP_MAX_TRACE_ROWS, sizeof(*c->rows));
	if (c->rows) {
		unsigned int n = vnic_trace_rows(c->rows, XP_MAX_TRACE_ROWS);

		c->nrows = n < XP_MAX_TRACE_ROWS ? n : XP_MAX_TRACE_ROWS;
	}
	memset(c->tp, 0, sizeof(c->tp));
	c->ntp = 0;
	for (unsigned int i = 0; i < c->nrows; i++) {
		unsigned int k;

		for (k = 0; k < c->ntp && strcmp(c->tp[k].name, c->rows[i].name); k++)
			;
		if (k == c->ntp) {
			if (c->ntp == XP_MAX_POINTS)
				continue;
			c->tp[c->ntp++].name = c->rows[i].name;
		}
		c->tp[k].hits += c->rows[i].hits;
		c->tp[k].ns += c->rows[i].total_ns;
	}
	free(c->trace_text);
	c->trace_text = NULL;
	f = open_memstream(&c->trace_text, &len);
	if (f) {
		vnic_trace_report(f);
		fclose(f);
	}
}

/* What a measuring round adds to its case. 0 or -errno. */
static int add_round(struct xp_case *c, struct vnic_bench_run *r)
{
	if (c->rounds < XP_MAX_ROUNDS) {
		struct xp_round *rd = &c->round[c->rounds];
		double secs = (double)r->elapsed_ns / 1e9;

		rd->tps = secs > 0 ? (double)r->res.transactions / secs : 0;
		rd->gbps = secs > 0 ? (double)r->res.bytes * 8 / secs / 1e9 : 0;
		rd->tx_pps = secs > 0 ? (double)r->res.tx_pkts / secs : 0;
		rd->b_cpu_s_per_gb = r->res.bytes ? r->thread_cpu_s[1] / ((double)r->res.bytes / 1e9)
						  : 0;
	}
	c->rounds++;
	c->elapsed_ns += r->elapsed_ns;
	c->cpu_s += r->cpu_s;
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		c->thread_cpu_s[s] += r->thread_cpu_s[s];
		c->spin_cpu_s[s] += r->spin_cpu_s[s];
		c->work_cpu_s[s] += vnic_bench_side_work_cpu_s(r, s);
	}
	add_results(&c->res, &r->res);
	if (r->rr && c->lat) {
		struct vnic_work_results end;

		/* the histogram is readable once the cpus have stopped */
		vnic_rr_results(r->rr, &end);
		if (end.latency)
			vnic_hist_merge(c->lat, end.latency);
	}
	return add_counters(c, &r->topo);
}

/* What a run of a case gives: rates and counters, or the trace, and the series. */
struct xp_rounds {
	struct xp *x;
	bool traced;
};

static int round_done(void *ctx, unsigned int i, unsigned int round, struct vnic_bench_run *r)
{
	struct xp_rounds *xr = ctx;
	struct xp_case *c = &xr->x->cases[i];
	int err = 0;

	if (xr->traced) {
		c->trace_s = (double)r->elapsed_ns / 1e9;
		take_trace(c);
		return 0;
	}
	err = add_round(c, r);
	/* the first round's series is the case's */
	if (!err && round == 0 && r->series.samples) {
		vnic_series_fini(&c->series);
		c->series = r->series;
		memset(&r->series, 0, sizeof(r->series));
	}
	return err;
}

/*
 * Every case in rounds of seconds each on the bench runner, traced or
 * measuring; a run below the floor runs again, longer (vnic_bench_floor).
 */
static int run_rounds(struct xp *x, unsigned int rounds, double seconds, bool traced)
{
	struct vnic_bench_opts *o = calloc(x->ncases, sizeof(*o));
	const char *labels[XP_MAX_CASES];
	struct xp_rounds xr = { .x = x, .traced = traced };
	char prefix[64];
	/*
	 * --short: enough traffic that every counter the experiment reads has
	 * moved, however slow the machine (a sanitizer, a loaded machine);
	 * otherwise the first transaction or byte (a run that carried nothing
	 * measured nothing).
	 */
	struct vnic_bench_floor floor = {
		.transactions = x->opt->short_run ? XP_SHORT_MIN_TRANSACTIONS : 1,
		.bytes = x->opt->short_run ? XP_SHORT_MIN_BYTES : 1,
	};
	struct vnic_bench_rounds rr = {
		.cases = o,
		.ncases = x->ncases,
		.rounds = rounds,
		.labels = labels,
		.progress = x->opt->quiet ? NULL : prefix,
		.done = round_done,
		.ctx = &xr,
		.floor = &floor,
	};
	int err;

	if (!o)
		return -ENOMEM;
	snprintf(prefix, sizeof(prefix), "vnic experiment %s%s", x->e->name,
		 traced ? " (traced)" : "");
	for (unsigned int i = 0; i < x->ncases; i++) {
		o[i] = x->cases[i].o;
		o[i].duration_s = seconds;
		o[i].quiet = true;
		o[i].ctl = false;
		o[i].trace = traced;
		o[i].sample_ms = x->sampled && !traced ? XP_SERIES_MS : 0;
		labels[i] = x->cases[i].label;
	}
	err = vnic_bench_rounds(&rr);
	x->again += floor.again;
	if (err)
		fprintf(stderr, "vnic experiment %s: %s\n", x->e->name, strerror(-err));
	free(o);
	return err;
}

static void case_free(struct xp_case *c)
{
	free(c->ctr);
	free(c->lat);
	free(c->rows);
	free(c->trace_text);
	vnic_series_fini(&c->series);
	memset(c, 0, sizeof(*c));
}

/* Every case: the rounds in turn, then the traced round of each. 0 or the first error. */
static int run_cases(struct xp *x)
{
	int err = run_rounds(x, x->nrounds, x->round_s, false);

	if (err || !x->traced)
		return err;
	return run_rounds(x, 1, x->opt->short_run ? XP_SHORT_TRACE_S : XP_TRACE_S, true);
}

/* ---------------------------------------------------------------------------
 * Cases
 * ------------------------------------------------------------------------- */

static struct xp_case *add_case(struct xp *x, enum vnic_workload wl, const char *workload,
				const char *variant)
{
	struct xp_case *c;

	if (x->ncases >= XP_MAX_CASES) {
		x->err = -ENOSPC;
		return NULL;
	}
	c = &x->cases[x->ncases];
	memset(c, 0, sizeof(*c));
	c->x = x;
	snprintf(c->workload, sizeof(c->workload), "%s", workload);
	snprintf(c->variant, sizeof(c->variant), "%s", variant);
	snprintf(c->label, sizeof(c->label), "%s %s", workload, variant);
	vnic_bench_opts_default(&c->o, wl);
	c->o.topo = x->opt->base;
	if (wl == VNIC_WL_RR) {
		c->lat = calloc(1, sizeof(*c->lat));
		if (!c->lat) {
			x->err = -ENOMEM;
			return NULL;
		}
		vnic_hist_reset(c->lat);
	}
	x->ncases++;
	return c;
}

struct xp_case *vnic_xp_add_rr(struct xp *x, const char *workload, const char *variant,
			       unsigned int sessions, uint32_t size)
{
	struct xp_case *c = add_case(x, VNIC_WL_RR, workload, variant);

	if (c) {
		c->o.rr.sessions = sessions;
		c->o.rr.req_size = c->o.rr.resp_size = size;
	}
	return c;
}

struct xp_case *vnic_xp_add_stream(struct xp *x, const char *workload, const char *variant,
				   unsigned int flows)
{
	struct xp_case *c = add_case(x, VNIC_WL_STREAM, workload, variant);

	if (c)
		c->o.st.flows = flows;
	return c;
}

const struct xp_case *vnic_xp_case(struct xp *x, const char *workload, const char *variant)
{
	for (unsigned int i = 0; i < x->ncases; i++)
		if (!strcmp(x->cases[i].workload, workload) &&
		    !strcmp(x->cases[i].variant, variant))
			return &x->cases[i];
	fprintf(stderr, "vnic experiment %s: no case '%s %s'\n", x->e->name, workload, variant);
	if (!x->err)
		x->err = -ENOENT;
	return NULL;
}

unsigned int vnic_xp_cases_of(struct xp *x, const char *workload, const struct xp_case **out,
			      unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < x->ncases && n < max; i++)
		if (!workload || !strcmp(x->cases[i].workload, workload))
			out[n++] = &x->cases[i];
	return n;
}

/* ---------------------------------------------------------------------------
 * Figures of a case
 * ------------------------------------------------------------------------- */

static const struct vnic_counter *find_ctr(const struct xp_case *c, const char *name)
{
	return vnic_counter_find(c->ctr, c->nctr, name);
}

/* A figure asked for a counter nobody keeps: the report would show a false zero. */
static void no_counter(const struct xp_case *c, const char *name)
{
	struct xp *x = c->x;

	if (x->err)
		return;
	fprintf(stderr, "vnic experiment %s: %s: no counter '%s'\n", x->e->name, c->label, name);
	x->err = -ENOENT;
}

uint64_t vnic_xp_ctr(const struct xp_case *c, const char *name)
{
	const struct vnic_counter *k = find_ctr(c, name);

	if (!k)
		no_counter(c, name);
	return k ? k->value : 0;
}

/* Summed over the queues the name exists for; none at all is an unknown counter. */
static uint64_t sum_queues(const struct xp_case *c, const char *fmt_prefix, const char *dir,
			   const char *name)
{
	char full[VNIC_COUNTER_NAME_MAX + 32];
	const struct vnic_counter *k;
	uint64_t sum = 0;
	bool any = false;

	for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
		snprintf(full, sizeof(full), "%s%s%u_%s", fmt_prefix, dir, q, name);
		k = find_ctr(c, full);
		if (k) {
			sum += k->value;
			any = true;
		}
	}
	if (!any) {
		snprintf(full, sizeof(full), "%s%sN_%s", fmt_prefix, dir, name);
		no_counter(c, full);
	}
	return sum;
}

uint64_t vnic_xp_drvq(const struct xp_case *c, char side, const char *dir, const char *name)
{
	char prefix[8];

	snprintf(prefix, sizeof(prefix), "drv_%c.", side);
	return sum_queues(c, prefix, dir, name);
}

uint64_t vnic_xp_dev_txa(const struct xp_case *c, const char *name)
{
	return sum_queues(c, "dev_a.", "tx", name);
}

const struct xp_tp *vnic_xp_tp(const struct xp_case *c, const char *point)
{
	static const struct xp_tp none;

	for (unsigned int k = 0; k < c->ntp; k++)
		if (!strcmp(c->tp[k].name, point))
			return &c->tp[k];
	return &none;
}

double vnic_xp_tp_avg_us(const struct xp_case *c, const char *point)
{
	const struct xp_tp *tp = vnic_xp_tp(c, point);

	return tp->hits ? (double)tp->ns / (double)tp->hits / 1e3 : 0;
}

double vnic_xp_lat_us(const struct xp_case *c, double pct)
{
	return c->lat && c->lat->count ? (double)vnic_hist_percentile(c->lat, pct) / 1e3 : 0;
}

static double b_cpu_pct(const struct xp_case *c)
{
	return xp_ratio(c->thread_cpu_s[1] * 100, xp_secs(c));
}

/* ---------------------------------------------------------------------------
 * Output: files
 * ------------------------------------------------------------------------- */

const char *vnic_xp_out_path(const struct xp *x, char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, "%s/%s%s", x->opt->out_dir, x->base, suffix);
	return buf;
}

/* One column of NAME.csv (and of a case in the JSON): its name and its value for a case. */
struct xp_col {
	const char *name;
	double (*get)(const struct xp_case *c);
	int decimals;
};

#define COL_FN(n, expr)                                                                            \
	static double col_##n(const struct xp_case *c)                                             \
	{                                                                                          \
		return (double)(expr);                                                             \
	}
COL_FN(seconds, xp_secs(c))
COL_FN(transactions, c->res.transactions)
COL_FN(tps, xp_tps(c))
COL_FN(bytes, c->res.bytes)
COL_FN(gbps, xp_gbps(c))
COL_FN(mbps, xp_gbps(c) * 1000)
COL_FN(tx_pps, xp_per_s(c, (double)c->res.tx_pkts))
COL_FN(lat_p50_us, vnic_xp_lat_us(c, 50))
COL_FN(lat_p99_us, vnic_xp_lat_us(c, 99))
COL_FN(cpu_s, c->cpu_s)
COL_FN(cpu_a_s, c->thread_cpu_s[0])
COL_FN(cpu_b_s, c->thread_cpu_s[1])
COL_FN(cpu_b_pct, b_cpu_pct(c))
COL_FN(cpu_us_per_txn, xp_ratio(c->cpu_s * 1e6, (double)c->res.transactions))
COL_FN(cpu_s_per_gb, xp_ratio(c->cpu_s, (double)c->res.bytes / 1e9))
COL_FN(cpu_b_s_per_gb, xp_ratio(c->thread_cpu_s[1], (double)c->res.bytes / 1e9))
COL_FN(work_cpu_ns_per_txn, xp_ratio(xp_work_cpu_s(c) * 1e9, (double)c->res.transactions))
COL_FN(work_cpu_ns_per_gb, xp_ratio(xp_work_cpu_s(c) * 1e9, (double)c->res.bytes / 1e9))
COL_FN(tx_direct_packets, xp_txa(c, "direct_packets"))
COL_FN(tx_batched_packets, xp_txa(c, "batched_packets"))
COL_FN(tx_direct_pct, xp_ratio(100.0 * (double)xp_txa(c, "direct_packets"), (double)xp_a_pkts(c)))
COL_FN(tx_indirect_flushes, xp_txa(c, "indirect_flushes"))
COL_FN(tx_hdr_descs, xp_txa(c, "hdr_descs"))
COL_FN(tx_hdr_descs_per_pkt, xp_ratio((double)xp_txa(c, "hdr_descs"), (double)xp_a_pkts(c)))
COL_FN(tx_csum_sw, xp_txa(c, "csum_sw"))
COL_FN(tx_csum_offload, xp_txa(c, "csum_offload"))
COL_FN(dev_csum_missing_hdrs, vnic_xp_dev_txa(c, "csum_missing_hdrs"))
COL_FN(tx_lso_packets, xp_txa(c, "lso_packets"))
COL_FN(tx_completion_rounds, xp_txa(c, "completion_rounds"))
COL_FN(tx_bql_completed_calls, xp_txa(c, "bql_completed_calls"))
COL_FN(tx_stops, xp_txa(c, "stops"))
COL_FN(tx_orphaned, xp_txa(c, "orphaned"))
COL_FN(tx_timer_reclaims, xp_txa(c, "timer_reclaims"))
COL_FN(tx_xmit_reclaims, xp_txa(c, "xmit_reclaims"))
COL_FN(tx_interrupts, xp_txa(c, "interrupts"))
COL_FN(tsq_throttled, c->res.tsq_throttled)
COL_FN(rx_packets, xp_rxb(c, "packets"))
COL_FN(rx_polls, xp_rxb(c, "polls"))
COL_FN(rx_replenish_calls, xp_rxb(c, "replenish_calls"))
COL_FN(rx_replenish_per_1k_polls,
       xp_ratio(1000.0 * (double)xp_rxb(c, "replenish_calls"), (double)xp_rxb(c, "polls")))
COL_FN(rx_gro_merged, xp_rxb(c, "gro_merged"))
COL_FN(rx_list_batches, xp_rxb(c, "list_batches"))
COL_FN(rx_delivered, xp_rxb(c, "delivered"))
COL_FN(rx_pkts_per_delivery, xp_ratio((double)xp_rxb(c, "packets"), (double)xp_rxb(c, "delivered")))
COL_FN(errors, c->res.err.payload + c->res.err.bad_csum)
#undef COL_FN

#define COL(n, f) { #n, col_##n, f }
static const struct xp_col cols[] = {
	COL(seconds, 3),
	COL(transactions, 0),
	COL(tps, 0),
	COL(bytes, 0),
	COL(gbps, 4),
	COL(mbps, 2),
	COL(tx_pps, 0),
	COL(lat_p50_us, 2),
	COL(lat_p99_us, 2),
	COL(cpu_s, 3),
	COL(cpu_a_s, 3),
	COL(cpu_b_s, 3),
	COL(cpu_b_pct, 1),
	COL(cpu_us_per_txn, 3),
	COL(cpu_s_per_gb, 4),
	COL(cpu_b_s_per_gb, 4),
	COL(work_cpu_ns_per_txn, 0),
	COL(work_cpu_ns_per_gb, 0),
	COL(tx_direct_packets, 0),
	COL(tx_batched_packets, 0),
	COL(tx_direct_pct, 2),
	COL(tx_indirect_flushes, 0),
	COL(tx_hdr_descs, 0),
	COL(tx_hdr_descs_per_pkt, 3),
	COL(tx_csum_sw, 0),
	COL(tx_csum_offload, 0),
	COL(dev_csum_missing_hdrs, 0),
	COL(tx_lso_packets, 0),
	COL(tx_completion_rounds, 0),
	COL(tx_bql_completed_calls, 0),
	COL(tx_stops, 0),
	COL(tx_orphaned, 0),
	COL(tx_timer_reclaims, 0),
	COL(tx_xmit_reclaims, 0),
	COL(tx_interrupts, 0),
	COL(tsq_throttled, 0),
	COL(rx_packets, 0),
	COL(rx_polls, 0),
	COL(rx_replenish_calls, 0),
	COL(rx_replenish_per_1k_polls, 2),
	COL(rx_gro_merged, 0),
	COL(rx_list_batches, 0),
	COL(rx_delivered, 0),
	COL(rx_pkts_per_delivery, 3),
	COL(errors, 0),
};
#undef COL

enum { NCOLS = sizeof(cols) / sizeof(cols[0]), NTPCOLS = sizeof(tp_cols) / sizeof(tp_cols[0]) };

/* NAME.csv: one row per case, every column above, then hits and average per trace point. */
static int write_summary_csv(struct xp *x)
{
	char path[XP_PATH];
	FILE *f = fopen(vnic_xp_out_path(x, path, sizeof(path), ".csv"), "w");
	unsigned int i, k;

	if (!f)
		return -errno;
	fputs("case,workload,variant,variant_no", f);
	for (k = 0; k < NCOLS; k++)
		fprintf(f, ",%s", cols[k].name);
	if (x->traced)
		for (k = 0; k < NTPCOLS; k++)
			fprintf(f, ",%s_hits,%s_avg_us", tp_cols[k], tp_cols[k]);
	fputc('\n', f);
	for (i = 0; i < x->ncases; i++) {
		const struct xp_case *c = &x->cases[i];
		unsigned int no = 0;

		/* the variant's place in its workload: 0 the patch's before, 1 its after, ... */
		for (unsigned int j = 0; j < i; j++)
			no += !strcmp(x->cases[j].workload, c->workload);
		fprintf(f, "%s,%s,%s,%u", c->label, c->workload, c->variant, no);
		for (k = 0; k < NCOLS; k++)
			fprintf(f, ",%.*f", cols[k].decimals, cols[k].get(c));
		if (x->traced)
			for (k = 0; k < NTPCOLS; k++)
				fprintf(f, ",%" PRIu64 ",%.4f", vnic_xp_tp(c, tp_cols[k])->hits,
					vnic_xp_tp_avg_us(c, tp_cols[k]));
		fputc('\n', f);
	}
	return fclose(f) ? -errno : 0;
}

/* The call path of row i, "napi_poll > replenish". */
static void row_path(const struct xp_case *c, unsigned int i, char *buf, size_t len)
{
	const char *names[VNIC_TRACE_DEPTH + 1];
	unsigned int n = 0;
	int r = (int)i;
	size_t at = 0;

	while (r >= 0 && (unsigned int)r < c->nrows && n <= VNIC_TRACE_DEPTH) {
		names[n++] = c->rows[r].name;
		r = c->rows[r].parent_row;
	}
	buf[0] = '\0';
	while (n--) {
		int w = snprintf(buf + at, len - at, "%s%s", names[n], n ? " > " : "");

		if (w < 0 || (size_t)w >= len - at)
			break;
		at += (size_t)w;
	}
}

/* NAME_trace.csv (every call path of every case) and NAME_trace.txt (the nested reports). */
static int write_trace(struct xp *x)
{
	char path[XP_PATH], p[256];
	FILE *f = fopen(vnic_xp_out_path(x, path, sizeof(path), "_trace.csv"), "w");
	unsigned int i, k;

	if (!f)
		return -errno;
	fputs("case,path,depth,hits,total_ns,avg_ns\n", f);
	for (i = 0; i < x->ncases; i++) {
		const struct xp_case *c = &x->cases[i];

		for (k = 0; k < c->nrows; k++) {
			row_path(c, k, p, sizeof(p));
			fprintf(f, "%s,%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", c->label, p,
				c->rows[k].depth, c->rows[k].hits, c->rows[k].total_ns,
				c->rows[k].avg_ns);
		}
	}
	if (fclose(f))
		return -errno;
	f = fopen(vnic_xp_out_path(x, path, sizeof(path), "_trace.txt"), "w");
	if (!f)
		return -errno;
	for (i = 0; i < x->ncases; i++) {
		const struct xp_case *c = &x->cases[i];

		fprintf(f, "== %s: %s, traced round of %.2f s (both sides)\n", x->e->name, c->label,
			c->trace_s);
		fputs(c->trace_text ? c->trace_text : "(nothing recorded)\n", f);
		fputc('\n', f);
	}
	return fclose(f) ? -errno : 0;
}

int vnic_xp_write_series(struct xp *x, const struct xp_case *c, char *path, size_t len)
{
	char suffix[80];

	snprintf(suffix, sizeof(suffix), "_%s_%s.csv", c->workload, c->variant);
	return vnic_series_write_csv(&c->series, vnic_xp_out_path(x, path, len, suffix));
}

void vnic_xp_plot_done(struct xp *x, const char *png, int err)
{
	if (!err)
		return;
	if (err == -ENOENT)
		fprintf(stderr,
			"vnic experiment: no gnuplot: %s not drawn (its .gp script is written)\n",
			png);
	else
		fprintf(stderr, "vnic experiment: drawing %s: %s\n", png, strerror(-err));
	if (err != -ENOENT && !x->err)
		x->err = err;
}

void vnic_xp_plot_bars(struct xp *x, const char *title, const struct vnic_plot_bars *p,
		       unsigned int n)
{
	char png[XP_PATH], csv[XP_PATH];
	struct vnic_plot_bars kept[XP_MAX_BARS];
	unsigned int k = 0;

	if (!x->opt->plots)
		return;
	/* no traced round (split): the function averages' panels would be empty */
	for (unsigned int i = 0; i < n && k < XP_MAX_BARS; i++)
		if (x->traced || !strstr(p[i].column, "_avg_us"))
			kept[k++] = p[i];
	vnic_xp_out_path(x, png, sizeof(png), ".png");
	vnic_xp_out_path(x, csv, sizeof(csv), ".csv");
	vnic_xp_plot_done(x, png, vnic_plot_bar_chart(png, title, csv, "case", "variant_no", kept, k));
}

/* ---------------------------------------------------------------------------
 * Output: JSON, one object for the whole command
 * ------------------------------------------------------------------------- */

static void json_case(struct vnic_json *j, const struct xp *x, const struct xp_case *c)
{
	vnic_json_object(j, NULL);
	vnic_json_str(j, "case", c->label);
	vnic_json_str(j, "workload", c->workload);
	vnic_json_str(j, "variant", c->variant);
	vnic_json_u64(j, "rounds", c->rounds);
	for (unsigned int k = 0; k < NCOLS; k++)
		vnic_json_double(j, cols[k].name, cols[k].get(c));
	if (x->traced) {
		vnic_json_object(j, "trace");
		for (unsigned int k = 0; k < c->ntp; k++) {
			vnic_json_object(j, c->tp[k].name);
			vnic_json_u64(j, "hits", c->tp[k].hits);
			vnic_json_double(j, "avg_us", vnic_xp_tp_avg_us(c, c->tp[k].name));
			vnic_json_close(j);
		}
		vnic_json_close(j);
	}
	vnic_json_close(j);
}

static void json_experiment(struct vnic_json *j, const struct xp *x, int err)
{
	vnic_json_object(j, NULL);
	vnic_json_str(j, "name", x->e->name);
	vnic_json_str(j, "reproduces", x->e->seed);
	vnic_json_str(j, "title", x->e->title);
	vnic_json_str(j, "result", err ? strerror(-err) : "ok");
	vnic_json_u64(j, "rounds", x->nrounds);
	vnic_json_double(j, "round_s", x->round_s);
	vnic_json_u64(j, "runs_again", x->again);
	vnic_json_array(j, "cases");
	for (unsigned int i = 0; i < x->ncases; i++)
		json_case(j, x, &x->cases[i]);
	vnic_json_array_close(j);
	vnic_json_array(j, "directions");
	for (unsigned int i = 0; i < x->ndirs; i++) {
		const struct xp_direction *d = &x->dirs[i];
		bool up = d->after > d->before;

		vnic_json_object(j, NULL);
		vnic_json_str(j, "what", d->what);
		vnic_json_double(j, "before", d->before);
		vnic_json_double(j, "after", d->after);
		vnic_json_str(j, "vnic", d->after == d->before ? "unchanged" : up ? "up" : "down");
		vnic_json_str(j, "upstream", d->seed_up ? "up" : "down");
		vnic_json_str(j, "verdict", d->verdict);
		vnic_json_str(j, "judged_by", d->rounds ? "rounds" : "noise threshold");
		if (d->rounds) {
			vnic_json_double(j, "ci_low", d->lo);
			vnic_json_double(j, "ci_high", d->hi);
		}
		vnic_json_close(j);
	}
	vnic_json_array_close(j);
	vnic_json_close(j);
}

/* ---------------------------------------------------------------------------
 * The command
 * ------------------------------------------------------------------------- */

enum {
	OPT_SHORT = 256,
	OPT_OUT,
	OPT_MD,
	OPT_DURATION,
	OPT_NO_PLOTS,
	OPT_LINK_BASE,
	OPT_FORCE,
	OPT_SPLIT,
	OPT_SERVER,
};

static const struct option own_opts[] = {
	{"short", no_argument, NULL, OPT_SHORT},
	{"out", required_argument, NULL, OPT_OUT},
	{"md", required_argument, NULL, OPT_MD},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"no-plots", no_argument, NULL, OPT_NO_PLOTS},
	{"link-base", required_argument, NULL, OPT_LINK_BASE},
	{"force", no_argument, NULL, OPT_FORCE},
	{"split", no_argument, NULL, OPT_SPLIT},
	{"server", required_argument, NULL, OPT_SERVER},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	struct vnic_topo_config def;

	vnic_topo_config_default(&def);
	fputs("usage: vnic experiment NAME|all|list [options]\n"
	      "Runs the before and after policies of a patch vnic reproduces side by side and\n"
	      "prints the thread's figures next to ours as markdown (docs/EXPERIMENTS.md; the\n"
	      "threads: docs/SEEDS.md).\n"
	      "experiments:\n",
	      f);
	for (unsigned int i = 0; i < NEXPERIMENTS; i++)
		fprintf(f, "  %-10s %-22s %s\n", experiments[i]->name, experiments[i]->seed,
			experiments[i]->title);
	fputs("options:\n"
	      "  --short             tiny durations (tests): one round of 0.2 s, run again\n"
	      "                      longer until it carries 200 transactions or 512 KiB\n"
	      "  --duration S        seconds per round (1.5; reclaim: 10)\n"
	      "  --out DIR           CSV, plots and traces go there (a new folder\n"
	      "                      experiment-NAME-YYYYmmdd-HHMMSS in the current directory)\n"
	      "  --md FILE           the markdown there instead of stdout\n"
	      "  --force             write into a DIR that has files, and over FILE\n"
	      "  --json              one JSON object on stdout (the markdown only with --md)\n"
	      "  --link-base PATH    how the markdown links to DIR (default: DIR relative to\n"
	      "                      the markdown file, or DIR as given for stdout)\n"
	      "  --no-plots          no gnuplot\n"
	      "  --split             every case with the devices and the cable in a server\n"
	      "                      process of their own, as 'vnic bench --split' (direct,\n"
	      "                      replenish, bql; no traced round, no sampling)\n"
	      "  --server PATH       as --split, against a standing 'vnic server --listen PATH'\n"
	      "  --quiet             no progress lines on stderr\n"
	      "Every vNIC option below sets the configuration all cases start from; each case\n"
	      "then sets the policy it compares. With a cost model the file names get '-cost'.\n",
	      f);
	vnic_topo_opts_usage(f, VNIC_OPTG_ALL, &def);
}

/* The table's options as given, for the report: " --mtu 9000 --loss 0.01". */
static void note_given(struct xp_opts *o, int c, const char *arg)
{
	size_t at = strlen(o->given);
	const char *name = vnic_opts_long_name(c);

	if (name)
		snprintf(o->given + at, sizeof(o->given) - at, " --%s%s%s", name, arg ? " " : "",
			 arg ? arg : "");
}

/* --split and --server, for the report, as the table's options are. */
static void note_split(struct xp_opts *o, const char *path)
{
	size_t at = strlen(o->given);

	if (path)
		snprintf(o->given + at, sizeof(o->given) - at, " --server %s", path);
	else
		snprintf(o->given + at, sizeof(o->given) - at, " --split");
}

static void default_out(struct xp_opts *o, const char *what)
{
	char stamp[32] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm))
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(o->out_default, sizeof(o->out_default), "experiment-%s-%s", what, stamp);
	o->out_dir = o->out_default;
}

static int parse_opt(void *ctx, int c, const char *arg)
{
	struct xp_opts *o = ctx;
	int err = 0;

	switch (c) {
	case OPT_SHORT:
		o->short_run = true;
		break;
	case OPT_NO_PLOTS:
		o->plots = false;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_OUT:
		o->out_dir = arg;
		break;
	case OPT_MD:
		o->md_path = arg;
		break;
	case OPT_DURATION:
		err = vnic_arg_double("--duration", arg, 0.05, 3600, &o->round_s);
		break;
	case OPT_LINK_BASE:
		o->link_base = arg;
		break;
	case OPT_SPLIT:
		o->base.split = true;
		note_split(o, NULL);
		break;
	case OPT_SERVER:
		err = vnic_arg_path("--server", arg);
		o->base.split = true;
		o->base.server_path = arg;
		note_split(o, arg);
		break;
	default:
		err = vnic_topo_opt_parse(c, arg, &o->base, &o->groups_set);
		note_given(o, c, arg);
		break;
	}
	return err;
}

static const struct vnic_opts_cmd experiment_cmd = {
	"vnic experiment", own_opts, VNIC_OPTG_ALL, usage, offsetof(struct xp_opts, quiet),
	offsetof(struct xp_opts, json), parse_opt,
};

int vnic_experiment_parse(int argc, char **argv, struct xp_opts *o)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->plots = true;
	vnic_topo_config_default(&o->base);
	/* The experiment's name stands where getopt expects the program's name. */
	err = vnic_opts_parse(&experiment_cmd, argc - 1, argv + 1, o);
	if (err)
		return err;
	if (o->base.drv.tso && !o->base.drv.csum)
		o->base.drv.tso = false;
	if (!o->out_dir)
		default_out(o, argv[1]);
	if (strlen(o->out_dir) >= XP_DIR_MAX || (o->md_path && strlen(o->md_path) >= XP_DIR_MAX) ||
	    (o->link_base && strlen(o->link_base) >= XP_DIR_MAX)) {
		fprintf(stderr,
			"vnic experiment: --out, --md and --link-base take at most %d bytes\n",
			XP_DIR_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

/* mkdir -p. 0 or -errno. */
static int make_dirs(const char *path)
{
	char buf[XP_DIR_MAX];
	size_t n = strlen(path);

	if (!n || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Whether a folder has anything in it (results a run would write over). */
static bool dir_has_files(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while (!any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return any;
}

/* Where the results go, checked before any traffic runs. 0 or 1 (message printed). */
static int prepare_outputs(const struct xp_opts *o)
{
	struct stat st;
	int err;

	if (!o->force && dir_has_files(o->out_dir)) {
		fprintf(stderr,
			"vnic experiment: %s has files already: choose another --out, or "
			"--force to write over them\n",
			o->out_dir);
		return 1;
	}
	if (o->md_path && !o->force && !stat(o->md_path, &st)) {
		fprintf(stderr, "vnic experiment: %s exists: --force to write over it\n",
			o->md_path);
		return 1;
	}
	err = make_dirs(o->out_dir);
	if (err) {
		fprintf(stderr, "vnic experiment: %s: %s\n", o->out_dir, strerror(-err));
		return 1;
	}
	if (access(o->out_dir, W_OK)) {
		fprintf(stderr, "vnic experiment: %s: %s\n", o->out_dir, strerror(errno));
		return 1;
	}
	return 0;
}

/* The path of directory to relative to directory from; both absolute, canonical. */
static void rel_path(const char *from, const char *to, char *buf, size_t len)
{
	size_t common = 0, i;
	size_t at = 0;

	/* the longest common prefix that ends on a component boundary */
	for (i = 0; from[i] && from[i] == to[i]; i++)
		if (from[i] == '/')
			common = i;
	if (!from[i] && (to[i] == '/' || !to[i]))
		common = i;
	else if (!to[i] && from[i] == '/')
		common = i;
	buf[0] = '\0';
	for (i = common; from[i]; i++) {
		if (from[i] == '/' && at + 4 < len) {
			memcpy(buf + at, "../", 4);
			at += 3;
		}
	}
	if (to[common] == '/')
		snprintf(buf + at, len - at, "%s", to + common + 1);
	if (!buf[0])
		snprintf(buf, len, ".");
	else if (buf[strlen(buf) - 1] == '/')
		buf[strlen(buf) - 1] = '\0';
}

/* How the markdown links to the output directory: relative to the markdown file's folder. */
static void link_base(const struct xp_opts *o, char *buf, size_t len)
{
	char dir[XP_DIR_MAX];
	char *from = NULL, *to;
	const char *slash;

	if (o->link_base) {
		snprintf(buf, len, "%s", o->link_base);
		return;
	}
	snprintf(buf, len, "%s", o->out_dir);
	if (!o->md_path)
		return;
	slash = strrchr(o->md_path, '/');
	if (slash == o->md_path)
		snprintf(dir, sizeof(dir), "/");
	else if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->md_path), o->md_path);
	else
		snprintf(dir, sizeof(dir), ".");
	to = realpath(o->out_dir, NULL);
	if (to)
		from = realpath(dir, NULL);
	if (from)
		rel_path(from, to, buf, len);
	free(from);
	free(to);
}

static void md_preamble(FILE *md, const struct xp_opts *o, const char *what)
{
	struct utsname u;
	double load[3] = {0};
	char date[32] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm);
	fprintf(md, "<!-- written by `vnic experiment %s%s%s` -->\n", what,
		o->short_run ? " --short" : "", o->given);
	fprintf(md, "_Measured %s on %s %s, %ld cpus, load average %.2f at the start%s._\n\n", date,
		u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN), load[0],
		o->short_run ? "; --short: too short to mean anything but the direction of counters"
			     : "");
}

static int run_experiment(const struct xp_opts *o, const struct xp_exp *e, FILE *md,
			  const char *link, struct vnic_json *j)
{
	struct xp *x = calloc(1, sizeof(*x));
	int err;

	if (!x)
		return -ENOMEM;
	x->opt = o;
	x->e = e;
	x->md = md;
	/* the layout and the cost model name the files: runs of each sit side by side */
	snprintf(x->base, sizeof(x->base), "%s%s%s", e->name,
		 o->groups_set & (1u << VNIC_OPTG_COST) ? "-cost" : "", o->base.split ? "-split" : "");
	x->traced = e->trace && !o->base.split;
	x->sampled = e->sample && !o->base.split;
	snprintf(x->link, sizeof(x->link), "%s", link);
	if (e->fixed_s) {
		x->nrounds = 1;
		x->round_s = o->short_run ? e->fixed_short_s : o->round_s ? o->round_s : e->fixed_s;
	} else {
		x->nrounds = o->short_run ? 1 : XP_ROUNDS;
		x->round_s = o->round_s ? o->round_s : o->short_run ? XP_SHORT_ROUND_S : XP_ROUND_S;
	}
	e->setup(x);
	err = x->err;
	if (!err)
		err = run_cases(x);
	if (!err)
		err = write_summary_csv(x);
	if (!err && x->traced)
		err = write_trace(x);
	if (!err) {
		e->report(x);
		err = x->err;
		fflush(md);
	}
	if (err)
		fprintf(stderr, "vnic experiment %s: %s\n", e->name, strerror(-err));
	if (j)
		json_experiment(j, x, err);
	for (unsigned int i = 0; i < x->ncases; i++)
		case_free(&x->cases[i]);
	free(x);
	return err;
}

/* Which experiment argv[1] names: 0 (only set, or NULL for all), 1 (done: list, help), 2 (bad). */
static int choose(int argc, char **argv, const struct xp_exp **only)
{
	unsigned int i;

	*only = NULL;
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return 1;
		}
		fputs("vnic experiment: which experiment? (NAME, all or list)\n", stderr);
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "list")) {
		for (i = 0; i < NEXPERIMENTS; i++)
			printf("%s\n", experiments[i]->name);
		return 1;
	}
	if (!strcmp(argv[1], "all"))
		return 0;
	for (i = 0; i < NEXPERIMENTS; i++)
		if (!strcmp(argv[1], experiments[i]->name))
			*only = experiments[i];
	if (!*only) {
		fprintf(stderr, "vnic experiment: no experiment '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The markdown's stream: stdout, --md FILE, or nowhere (--json without --md). */
static FILE *open_md(const struct xp_opts *o)
{
	if (o->md_path)
		return fopen(o->md_path, "w");
	if (o->json)
		return fopen("/dev/null", "w");
	return stdout;
}

int vnic_cmd_experiment(int argc, char **argv)
{
	const struct xp_exp *only;
	struct vnic_json j;
	char link[XP_PATH];
	struct xp_opts *o;
	FILE *md;
	int err, failed = 0;

	err = choose(argc, argv, &only);
	if (err)
		return err == 1 ? 0 : 2;
	o = calloc(1, sizeof(*o));
	if (!o) {
		fputs("vnic experiment: out of memory\n", stderr);
		return 1;
	}
	err = vnic_experiment_parse(argc, argv, o);
	if (err) {
		free(o);
		return err > 0 ? 0 : 2;
	}
	if (only && o->base.split && !only->split) {
		fprintf(stderr,
			"vnic experiment %s: --split: its figures are traced or sampled in the "
			"devices, which a split run puts in another process\n",
			only->name);
		free(o);
		return 2;
	}
	if (prepare_outputs(o)) {
		free(o);
		return 1;
	}
	md = open_md(o);
	if (!md) {
		fprintf(stderr, "vnic experiment: %s: %s\n", o->md_path ? o->md_path : "/dev/null",
			strerror(errno));
		free(o);
		return 1;
	}
	link_base(o, link, sizeof(link));
	if (o->plots && !vnic_plot_terminal())
		fputs("vnic experiment: gnuplot not found (Debian: apt install gnuplot-nox): no "
		      "PNG plots, only their CSV and .gp scripts\n",
		      stderr);
	if (!o->quiet)
		fprintf(stderr, "vnic experiment: results go to %s\n", o->out_dir);
	md_preamble(md, o, only ? only->name : "all");
	if (o->json) {
		vnic_json_begin(&j, stdout);
		vnic_json_str(&j, "out", o->out_dir);
		vnic_json_array(&j, "experiments");
	}
	for (unsigned int i = 0; i < NEXPERIMENTS; i++) {
		if (only && only != experiments[i])
			continue;
		if (o->base.split && !experiments[i]->split) {
			if (!o->quiet)
				fprintf(stderr, "vnic experiment: %s does not run split: left out\n",
					experiments[i]->name);
			continue;
		}
		if (run_experiment(o, experiments[i], md, link, o->json ? &j : NULL))
			failed++;
	}
	if (o->json) {
		vnic_json_array_close(&j);
		vnic_json_end(&j);
	}
	if (md != stdout && fclose(md)) {
		fprintf(stderr, "vnic experiment: %s: %s\n", o->md_path, strerror(errno));
		failed++;
	}
	free(o);
	return failed ? 1 : 0;
}
