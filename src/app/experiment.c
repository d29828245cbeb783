// SPDX-License-Identifier: MIT
/*
 * `vnic experiment NAME`: the measurements of each seed, one command each.
 *
 * An experiment is a set of cases (a workload and a policy variant: the
 * seed's "before", its "after", and a third variant where it has one). The
 * cases run in one process, in turn, round after round, each round the same
 * length, so that a machine getting busier or quieter moves every case
 * alike. Rates and counters come from these rounds, untraced; the function
 * times come from one extra traced round per case, because tracing costs a
 * little on every packet and would tilt the rates it sits beside.
 *
 * Each case runs on the embedded topology of `vnic bench` (topo.c) with the
 * workloads of src/work, composed here rather than through
 * vnic_bench_run(): the receive-side CPU of the gro experiment is the CPU
 * time of side B's cpu thread, read with pthread_getcpuclockid() at both
 * ends of the traffic, and only a runner that holds the topology while its
 * threads live can read it. Everything else is the same as in bench.c: the
 * sampler (sampler.c) for time series, the trace API of core.h for the
 * function times.
 *
 * Counters: tx counters are side A's (the rr client, the stream sender), rx
 * counters side B's (the rr server, the stream receiver): the direction the
 * requests or the data go. Trace figures cover both sides (the trace is
 * per process), as the seeds' ftrace figures covered one LPAR that both
 * sent and received.
 *
 * Output: markdown tables (the seed's figures beside ours) on stdout or
 * --md FILE, and in --out DIR (docs/experiments by default): NAME.csv (one
 * row per case), NAME_trace.csv and NAME_trace.txt (the nested reports),
 * time series CSVs, and NAME.png plots drawn by gnuplot (plot.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "plot.h"

enum {
	XP_MAX_CASES = 12,
	XP_MAX_TRACE_ROWS = 256,
	XP_QUIESCE_MS = 2000,
	XP_SERIES_MS = 10,
	XP_DIR_MAX = 256,	    /* --out, --md and --link-base, bytes with the NUL */
	XP_PATH = XP_DIR_MAX + 128, /* a file in the output directory */
};

/* Seconds per round and rounds; --short shrinks both. */
#define XP_ROUND_S	 1.5
#define XP_ROUNDS	 3
#define XP_TRACE_S	 1.0
#define XP_SHORT_ROUND_S 0.2
#define XP_SHORT_TRACE_S 0.15

struct xp_opts {
	bool short_run;
	bool quiet;
	bool plots;
	double round_s; /* 0: the default */
	const char *out_dir;
	const char *md_path;
	const char *link_base; /* prefix of the links in the markdown */
	struct vnic_hv_cost cost;
	bool cost_set;
};

/*
 * The driver's and device's trace points an experiment sums, found in the
 * trace rows by name (each layer owns its points).
 */
enum {
	VNIC_TP_XMIT,
	VNIC_TP_TX_FLUSH,
	VNIC_TP_SEND_DIRECT,
	VNIC_TP_SEND_INDIRECT,
	VNIC_TP_CSUM_HELP,
	VNIC_TP_HDR_BUILD,
	VNIC_TP_TX_COMPLETE,
	VNIC_TP_NAPI_POLL,
	VNIC_TP_REPLENISH,
	VNIC_TP_GRO_RECEIVE,
	VNIC_TP_DELIVER,
	VNIC_TP_DEV_TX,
	VNIC_TP_DEV_RX,
	VNIC_TP_MAX,
};

static const char *const tp_names[VNIC_TP_MAX] = {
	"xmit",	     "tx_flush",    "send_direct", "send_indirect", "csum_help",
	"hdr_build", "tx_complete", "napi_poll",   "replenish",	    "gro_receive",
	"deliver",   "dev_tx",	    "dev_rx",
};

/* Totals of one trace point over every call path it was seen on. */
struct xp_tp {
	uint64_t hits;
	uint64_t ns;
};

struct xp_case {
	char workload[24]; /* "rr150" */
	char variant[24];  /* "always" */
	char label[56];	   /* "rr150 always" */
	struct vnic_bench_opts o;
	/* summed over the measuring rounds */
	unsigned int rounds;
	uint64_t elapsed_ns;
	struct vnic_work_results res;
	double cpu_s;			      /* the whole process (getrusage) */
	double thread_cpu_s[VNIC_TOPO_SIDES]; /* each side's cpu thread */
	struct vnic_counter *ctr;
	unsigned int nctr;
	struct vnic_hist *lat; /* rr: every transaction of every round */
	/* the first measuring round, when the experiment samples */
	struct vnic_series series;
	/* the traced round */
	double trace_s;
	struct xp_tp tp[VNIC_TP_MAX];
	struct vnic_trace_row *rows;
	unsigned int nrows;
	char *trace_text;
};

struct xp;

struct xp_exp {
	const char *name;
	const char *seed;
	const char *title;
	void (*setup)(struct xp *x);
	void (*report)(struct xp *x);
	bool trace;	/* one traced round per case */
	bool sample;	/* sample every measuring round alike; keep the first one's series */
	double fixed_s; /* one round of this long instead (short: fixed_short_s) */
	double fixed_short_s;
};

struct xp {
	const struct xp_opts *opt;
	const struct xp_exp *e;
	FILE *md;
	char base[64];	    /* file name base: NAME, or NAME-cost with a cost model */
	char link[XP_PATH]; /* out_dir as the markdown should link to it */
	double round_s;
	unsigned int nrounds;
	struct xp_case cases[XP_MAX_CASES];
	unsigned int ncases;
	int err;
};

/* ---------------------------------------------------------------------------
 * Running a case
 * ------------------------------------------------------------------------- */

struct xp_run {
	struct vnic_topo topo;
	struct vnic_rr *rr;
	struct vnic_stream *st;
	struct vnic_series series;
	struct vnic_sampler *sm;
	clockid_t clk[VNIC_TOPO_SIDES];
	bool have_clk[VNIC_TOPO_SIDES];
};

static double process_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(uint64_t t_ns)
{
	uint64_t now = vnic_now_ns();
	struct timespec ts;

	if (t_ns <= now)
		return;
	ts.tv_sec = (time_t)((t_ns - now) / 1000000000u);
	ts.tv_nsec = (long)((t_ns - now) % 1000000000u);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void results(const struct xp_run *r, struct vnic_work_results *res)
{
	if (r->rr)
		vnic_rr_results(r->rr, res);
	else
		vnic_stream_results(r->st, res);
}

static bool quiesced(const struct xp_run *r)
{
	return r->rr ? vnic_rr_quiesced(r->rr) : vnic_stream_quiesced(r->st);
}

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
	d->err.dup += s->err.dup;
	d->err.retransmits += s->err.retransmits;
	d->err.timeouts += s->err.timeouts;
	d->err.bad_hdr += s->err.bad_hdr;
	d->err.no_conn += s->err.no_conn;
	d->err.rx_overflow += s->err.rx_overflow;
	d->err.tx_dropped += s->err.tx_dropped;
	d->err.tx_busy += s->err.tx_busy;
	d->err.tx_nobuf += s->err.tx_nobuf;
}

/* Adds the topology's counters to the case's, matched by name. 0 or -ENOMEM. */
static int add_counters(struct xp_case *c, const struct vnic_topo *t)
{
	unsigned int n = vnic_topo_counters(t, NULL, 0), i, j;
	struct vnic_counter *buf = calloc(n ? n : 1, sizeof(*buf));

	if (!buf)
		return -ENOMEM;
	n = vnic_topo_counters(t, buf, n);
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

static void take_trace(struct xp_case *c)
{
	size_t len = 0;
	FILE *f;

	free(c->rows);
	c->rows = calloc(XP_MAX_TRACE_ROWS, sizeof(*c->rows));
	if (c->rows) {
		unsigned int n = vnic_trace_rows(c->rows, XP_MAX_TRACE_ROWS);

		c->nrows = n < XP_MAX_TRACE_ROWS ? n : XP_MAX_TRACE_ROWS;
	}
	memset(c->tp, 0, sizeof(c->tp));
	for (unsigned int i = 0; i < c->nrows; i++) {
		unsigned int k = 0;

		while (k < VNIC_TP_MAX && strcmp(c->rows[i].name, tp_names[k]))
			k++;
		if (k == VNIC_TP_MAX)
			continue;
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

/* Runs the workload for seconds, sampling every XP_SERIES_MS if r->sm. Returns the elapsed ns. */
static uint64_t traffic(struct xp_run *r, double seconds, struct vnic_work_results *res)
{
	uint64_t start = vnic_now_ns(), end = start + (uint64_t)(seconds * 1e9);
	uint64_t period = (uint64_t)XP_SERIES_MS * 1000000u, next = start, now;
	bool sampled_end = false;

	if (r->rr)
		vnic_rr_start(r->rr);
	else
		vnic_stream_start(r->st);
	for (;;) {
		now = vnic_now_ns();
		sampled_end = false;
		if (r->sm && now >= next) {
			results(r, res);
			vnic_sampler_take(r->sm, now - start, res);
			sampled_end = true;
			next += period;
			/* a late wake-up skips the samples it missed rather than bunch them */
			if (next <= now)
				next = now + period - (now - start) % period;
		}
		if (now >= end)
			break;
		sleep_until(r->sm && next < end ? next : end);
	}
	results(r, res);
	/* the series ends where the run does */
	if (r->sm && !sampled_end)
		vnic_sampler_take(r->sm, now - start, res);
	return now - start;
}

/*
 * One round of one case. measure: add its rates and counters to the case;
 * traced: record the function times instead; keep_series: hand the samples
 * to the case. 0 or -errno (message printed).
 */
static int run_round(struct xp *x, struct xp_case *c, double seconds, bool measure, bool traced,
		     bool keep_series)
{
	struct xp_run *r = calloc(1, sizeof(*r));
	struct vnic_topo *t;
	struct vnic_work_results res = {0};
	double cpu0, tcpu0[VNIC_TOPO_SIDES] = {0};
	uint64_t elapsed;
	unsigned int s;
	int err;

	if (!r)
		return -ENOMEM;
	t = &r->topo;
	err = vnic_topo_create(t, &c->o.topo);
	if (err) {
		fprintf(stderr, "vnic experiment: %s: building the topology: %s\n", c->label,
			strerror(-err));
		goto out_free;
	}
	if (c->o.wl == VNIC_WL_RR)
		err = vnic_rr_create(&r->rr, vnic_topo_netdev(t, 0), &t->host_pool[0],
				     vnic_topo_netdev(t, 1), &t->host_pool[1], &c->o.rr);
	else
		err = vnic_stream_create(&r->st, vnic_topo_netdev(t, 0), &t->host_pool[0],
					 vnic_topo_netdev(t, 1), &t->host_pool[1], &c->o.st);
	if (err) {
		fprintf(stderr, "vnic experiment: %s: creating the workload: %s\n", c->label,
			strerror(-err));
		goto out_destroy;
	}
	if (x->e->sample && !traced) {
		err = vnic_series_init(&r->series, (uint64_t)XP_SERIES_MS * 1000000u, seconds);
		if (err)
			goto out_destroy;
	}
	err = vnic_topo_start(t);
	if (err) {
		fprintf(stderr, "vnic experiment: %s: starting: %s\n", c->label, strerror(-err));
		goto out_destroy;
	}
	if (r->series.samples) {
		err = vnic_sampler_create(&r->sm, &r->series, t);
		if (err)
			goto out_stop;
	}
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		const pthread_t *th = t->cpu[s].thread;

		r->have_clk[s] = th && !pthread_getcpuclockid(*th, &r->clk[s]);
	}
	if (traced) {
		vnic_trace_reset();
		vnic_trace_enable(true);
	}
	cpu0 = process_cpu_s();
	for (s = 0; s < VNIC_TOPO_SIDES; s++)
		tcpu0[s] = r->have_clk[s] ? clock_s(r->clk[s]) : 0;
	elapsed = traffic(r, seconds, &res);
	if (measure) {
		for (s = 0; s < VNIC_TOPO_SIDES; s++)
			if (r->have_clk[s])
				c->thread_cpu_s[s] += clock_s(r->clk[s]) - tcpu0[s];
		c->cpu_s += process_cpu_s() - cpu0;
	}
	if (traced)
		vnic_trace_enable(false);
	if (r->rr)
		vnic_rr_stop(r->rr);
	else
		vnic_stream_stop(r->st);
	/* What is in flight lands, so every round ends clean for the next. */
	for (int i = 0; i < XP_QUIESCE_MS && !quiesced(r); i++)
		sleep_until(vnic_now_ns() + 1000000u);
out_stop:
	vnic_topo_stop(t);
	if (err)
		goto out_destroy;
	if (measure) {
		c->rounds++;
		c->elapsed_ns += elapsed;
		add_results(&c->res, &res);
		err = add_counters(c, t);
		if (r->rr && c->lat) {
			struct vnic_work_results end;

			/* the histogram is readable once the cpus have stopped */
			vnic_rr_results(r->rr, &end);
			if (end.latency)
				vnic_hist_merge(c->lat, end.latency);
		}
	}
	if (traced) {
		c->trace_s = (double)elapsed / 1e9;
		take_trace(c);
	}
	if (keep_series && r->series.samples) {
		vnic_series_fini(&c->series);
		c->series = r->series;
		memset(&r->series, 0, sizeof(r->series));
	}
out_destroy:
	vnic_sampler_destroy(r->sm);
	vnic_series_fini(&r->series);
	vnic_topo_stop(t);
	if (r->rr)
		vnic_rr_destroy(r->rr);
	if (r->st)
		vnic_stream_destroy(r->st);
	vnic_topo_destroy(t);
out_free:
	free(r);
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

/* Runs every case: the rounds in turn, then the traced round of each. 0 or the first error. */
static int run_cases(struct xp *x)
{
	double trace_s = x->opt->short_run ? XP_SHORT_TRACE_S : XP_TRACE_S;
	unsigned int round, i;
	int err;

	for (round = 0; round < x->nrounds; round++) {
		for (i = 0; i < x->ncases; i++) {
			struct xp_case *c = &x->cases[i];

			if (!x->opt->quiet)
				fprintf(stderr, "vnic experiment %s: %-22s round %u/%u, %.2g s\n",
					x->e->name, c->label, round + 1, x->nrounds, x->round_s);
			err = run_round(x, c, x->round_s, true, false, round == 0);
			if (err)
				return err;
		}
	}
	if (!x->e->trace)
		return 0;
	for (i = 0; i < x->ncases; i++) {
		struct xp_case *c = &x->cases[i];

		if (!x->opt->quiet)
			fprintf(stderr, "vnic experiment %s: %-22s traced, %.2g s\n", x->e->name,
				c->label, trace_s);
		err = run_round(x, c, trace_s, false, true, false);
		if (err)
			return err;
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Cases
 * ------------------------------------------------------------------------- */

/* A new case with the defaults of `vnic bench` for wl, the cost model of the command line. */
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
	snprintf(c->workload, sizeof(c->workload), "%s", workload);
	snprintf(c->variant, sizeof(c->variant), "%s", variant);
	snprintf(c->label, sizeof(c->label), "%s %s", workload, variant);
	vnic_bench_opts_default(&c->o, wl);
	c->o.quiet = true;
	if (x->opt->cost_set)
		c->o.topo.cost = x->opt->cost;
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

static struct xp_case *add_rr(struct xp *x, const char *workload, const char *variant,
			      unsigned int sessions, uint32_t size)
{
	struct xp_case *c = add_case(x, VNIC_WL_RR, workload, variant);

	if (c) {
		c->o.rr.sessions = sessions;
		c->o.rr.req_size = c->o.rr.resp_size = size;
	}
	return c;
}

static struct xp_case *add_stream(struct xp *x, const char *workload, const char *variant,
				  unsigned int flows)
{
	struct xp_case *c = add_case(x, VNIC_WL_STREAM, workload, variant);

	if (c)
		c->o.st.flows = flows;
	return c;
}

static struct xp_case *find_case(struct xp *x, const char *workload, const char *variant)
{
	for (unsigned int i = 0; i < x->ncases; i++)
		if (!strcmp(x->cases[i].workload, workload) &&
		    !strcmp(x->cases[i].variant, variant))
			return &x->cases[i];
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Figures of a case
 * ------------------------------------------------------------------------- */

static uint64_t ctr(const struct xp_case *c, const char *name)
{
	for (unsigned int i = 0; i < c->nctr; i++)
		if (!strcmp(c->ctr[i].name, name))
			return c->ctr[i].value;
	return 0;
}

/* Sum over the queues of one side's driver: side 'a' or 'b', dir "tx"/"rx", name after "txN_". */
static uint64_t drvq(const struct xp_case *c, char side, const char *dir, const char *name)
{
	char full[VNIC_COUNTER_NAME_MAX + 32];
	uint64_t sum = 0;

	for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
		snprintf(full, sizeof(full), "drv_%c.%s%u_%s", side, dir, q, name);
		sum += ctr(c, full);
	}
	return sum;
}

/* Sum over the queues of device A's tx engine: name after "txN_". */
static uint64_t dev_txa(const struct xp_case *c, const char *name)
{
	char full[VNIC_COUNTER_NAME_MAX + 32];
	uint64_t sum = 0;

	for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
		snprintf(full, sizeof(full), "dev_a.tx%u_%s", q, name);
		sum += ctr(c, full);
	}
	return sum;
}

/* tx counters of side A (requests, data), rx counters of side B. */
static uint64_t txa(const struct xp_case *c, const char *name)
{
	return drvq(c, 'a', "tx", name);
}

static uint64_t rxb(const struct xp_case *c, const char *name)
{
	return drvq(c, 'b', "rx", name);
}

static double secs(const struct xp_case *c)
{
	return (double)c->elapsed_ns / 1e9;
}

static double per_s(const struct xp_case *c, double v)
{
	return c->elapsed_ns ? v / secs(c) : 0;
}

static double ratio(double a, double b)
{
	return b ? a / b : 0;
}

static double tps(const struct xp_case *c)
{
	return per_s(c, (double)c->res.transactions);
}

static double gbps(const struct xp_case *c)
{
	return per_s(c, (double)c->res.bytes * 8 / 1e9);
}

/* Packets side A's driver sent (direct and batched). */
static uint64_t a_pkts(const struct xp_case *c)
{
	return txa(c, "direct_packets") + txa(c, "batched_packets");
}

static double tp_avg_us(const struct xp_case *c, unsigned int tp)
{
	return c->tp[tp].hits ? (double)c->tp[tp].ns / (double)c->tp[tp].hits / 1e3 : 0;
}

static double lat_us(const struct xp_case *c, double pct)
{
	return c->lat && c->lat->count ? (double)vnic_hist_percentile(c->lat, pct) / 1e3 : 0;
}

static double b_cpu_pct(const struct xp_case *c)
{
	return ratio(c->thread_cpu_s[1] * 100, secs(c));
}

/* ---------------------------------------------------------------------------
 * Output: files
 * ------------------------------------------------------------------------- */

/* out_dir/base + suffix into buf. */
static const char *out_path(const struct xp *x, char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, "%s/%s%s", x->opt->out_dir, x->base, suffix);
	return buf;
}

/* One column of NAME.csv: its name and its value for a case. */
struct xp_col {
	const char *name;
	double (*get)(const struct xp_case *c);
	int decimals;
};

#define COL_CTR(n, expr)                                                                           \
	static double col_##n(const struct xp_case *c)                                             \
	{                                                                                          \
		return (double)(expr);                                                             \
	}
COL_CTR(seconds, secs(c))
COL_CTR(transactions, c->res.transactions)
COL_CTR(tps, tps(c))
COL_CTR(bytes, c->res.bytes)
COL_CTR(gbps, gbps(c))
COL_CTR(mbps, gbps(c) * 1000)
COL_CTR(tx_pps, per_s(c, (double)c->res.tx_pkts))
COL_CTR(lat_p50_us, lat_us(c, 50))
COL_CTR(lat_p99_us, lat_us(c, 99))
COL_CTR(cpu_s, c->cpu_s)
COL_CTR(cpu_a_s, c->thread_cpu_s[0])
COL_CTR(cpu_b_s, c->thread_cpu_s[1])
COL_CTR(cpu_b_pct, b_cpu_pct(c))
COL_CTR(cpu_us_per_txn, ratio(c->cpu_s * 1e6, (double)c->res.transactions))
COL_CTR(cpu_s_per_gb, ratio(c->cpu_s, (double)c->res.bytes / 1e9))
COL_CTR(cpu_b_s_per_gb, ratio(c->thread_cpu_s[1], (double)c->res.bytes / 1e9))
COL_CTR(tx_direct_packets, txa(c, "direct_packets"))
COL_CTR(tx_batched_packets, txa(c, "batched_packets"))
COL_CTR(tx_direct_pct, ratio(100.0 * (double)txa(c, "direct_packets"), (double)a_pkts(c)))
COL_CTR(tx_indirect_flushes, txa(c, "indirect_flushes"))
COL_CTR(tx_hdr_descs, txa(c, "hdr_descs"))
COL_CTR(tx_hdr_descs_per_pkt, ratio((double)txa(c, "hdr_descs"), (double)a_pkts(c)))
COL_CTR(tx_csum_sw, txa(c, "csum_sw"))
COL_CTR(tx_csum_offload, txa(c, "csum_offload"))
COL_CTR(dev_csum_missing_hdrs, dev_txa(c, "csum_missing_hdrs"))
COL_CTR(tx_lso_packets, txa(c, "lso_packets"))
COL_CTR(tx_completion_rounds, txa(c, "completion_rounds"))
COL_CTR(tx_bql_completed_calls, txa(c, "bql_completed_calls"))
COL_CTR(tx_stops, txa(c, "stops"))
COL_CTR(tx_orphaned, txa(c, "orphaned"))
COL_CTR(tx_timer_reclaims, txa(c, "timer_reclaims"))
COL_CTR(tx_xmit_reclaims, txa(c, "xmit_reclaims"))
COL_CTR(tx_interrupts, txa(c, "interrupts"))
COL_CTR(tsq_throttled, c->res.tsq_throttled)
COL_CTR(rx_packets, rxb(c, "packets"))
COL_CTR(rx_polls, rxb(c, "polls"))
COL_CTR(rx_replenish_calls, rxb(c, "replenish_calls"))
COL_CTR(rx_replenish_per_1k_polls,
	ratio(1000.0 * (double)rxb(c, "replenish_calls"), (double)rxb(c, "polls")))
COL_CTR(rx_gro_merged, rxb(c, "gro_merged"))
COL_CTR(rx_list_batches, rxb(c, "list_batches"))
COL_CTR(rx_delivered, rxb(c, "delivered"))
COL_CTR(rx_pkts_per_delivery, ratio((double)rxb(c, "packets"), (double)rxb(c, "delivered")))
COL_CTR(errors, c->res.err.payload + c->res.err.bad_csum)
#undef COL_CTR

#define COL(n, f)                                                                                  \
	{                                                                                          \
#n, col_##n, f                                                                     \
	}
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

/* NAME.csv: one row per case, every column above, then hits and average per trace point. */
static int write_summary_csv(struct xp *x)
{
	char path[XP_PATH];
	FILE *f = fopen(out_path(x, path, sizeof(path), ".csv"), "w");
	unsigned int i, k;

	if (!f)
		return -errno;
	fputs("case,workload,variant,variant_no", f);
	for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
		fprintf(f, ",%s", cols[k].name);
	if (x->e->trace)
		for (k = 0; k < VNIC_TP_MAX; k++)
			fprintf(f, ",%s_hits,%s_avg_us", tp_names[k], tp_names[k]);
	fputc('\n', f);
	for (i = 0; i < x->ncases; i++) {
		const struct xp_case *c = &x->cases[i];
		unsigned int no = 0;

		/* the variant's place in its workload: 0 the seed's before, 1 its after, ... */
		for (unsigned int j = 0; j < i; j++)
			no += !strcmp(x->cases[j].workload, c->workload);
		fprintf(f, "%s,%s,%s,%u", c->label, c->workload, c->variant, no);
		for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
			fprintf(f, ",%.*f", cols[k].decimals, cols[k].get(c));
		if (x->e->trace)
			for (k = 0; k < VNIC_TP_MAX; k++)
				fprintf(f, ",%" PRIu64 ",%.4f", c->tp[k].hits, tp_avg_us(c, k));
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
	FILE *f = fopen(out_path(x, path, sizeof(path), "_trace.csv"), "w");
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
	f = fopen(out_path(x, path, sizeof(path), "_trace.txt"), "w");
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

/* The time series of a case: NAME_WORKLOAD_VARIANT.csv (the sampler's format). */
static int write_series(struct xp *x, const struct xp_case *c, char *path, size_t len)
{
	char suffix[80];

	snprintf(suffix, sizeof(suffix), "_%s_%s.csv", c->workload, c->variant);
	return vnic_series_write_csv(&c->series, out_path(x, path, len, suffix));
}

static void plot_done(struct xp *x, const char *png, int err)
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

/* NAME.png: bars of the summary CSV, one panel per column. */
static void plot_bars(struct xp *x, const char *title, const struct vnic_plot_bars *p,
		      unsigned int n)
{
	char png[XP_PATH], csv[XP_PATH];

	if (!x->opt->plots)
		return;
	out_path(x, png, sizeof(png), ".png");
	out_path(x, csv, sizeof(csv), ".csv");
	plot_done(x, png, vnic_plot_bar_chart(png, title, csv, "case", "variant_no", p, n));
}

/* ---------------------------------------------------------------------------
 * Output: markdown
 * ------------------------------------------------------------------------- */

/* 12345678 -> "12,345,678" */
static const char *grp(char *buf, size_t len, double v)
{
	char tmp[48];
	int n, at = 0, i, lead;

	if (v < 0 || v > 1e18) {
		snprintf(buf, len, "%.3g", v);
		return buf;
	}
	n = snprintf(tmp, sizeof(tmp), "%.0f", v);
	lead = n % 3 ? n % 3 : 3;
	for (i = 0; i < n && (size_t)at + 2 < len; i++) {
		if (i && (i - lead) % 3 == 0)
			buf[at++] = ',';
		buf[at++] = tmp[i];
	}
	buf[at] = '\0';
	return buf;
}

/* A cell per case in x->cases order, appended to a row. */
typedef void (*xp_cell_fn)(char *buf, size_t len, const struct xp_case *c);

static void md_head(struct xp *x, const char *const *seed_cols, unsigned int nseed,
		    const struct xp_case *const *cs, unsigned int n)
{
	unsigned int i;

	fputs("| |", x->md);
	for (i = 0; i < nseed; i++)
		fprintf(x->md, " seed: %s |", seed_cols[i]);
	for (i = 0; i < n; i++)
		fprintf(x->md, " vnic: %s |", cs[i]->variant);
	fputs("\n|---|", x->md);
	for (i = 0; i < nseed + n; i++)
		fputs("---:|", x->md);
	fputc('\n', x->md);
}

static void md_row(struct xp *x, const char *label, const char *const *seed, unsigned int nseed,
		   const struct xp_case *const *cs, unsigned int n, xp_cell_fn cell)
{
	char buf[96];
	unsigned int i;

	fprintf(x->md, "| %s |", label);
	for (i = 0; i < nseed; i++)
		fprintf(x->md, " %s |", seed && seed[i] ? seed[i] : "");
	for (i = 0; i < n; i++) {
		buf[0] = '\0';
		if (cell)
			cell(buf, sizeof(buf), cs[i]);
		fprintf(x->md, " %s |", buf);
	}
	fputc('\n', x->md);
}

static void md_title(struct xp *x)
{
	const struct xp_exp *e = x->e;

	fprintf(x->md, "## `%s`: %s (seed %s)\n\n", e->name, e->title, e->seed);
}

/* How the figures were taken: command, rounds, cost model. */
static void md_method(struct xp *x, const char *workload)
{
	const struct vnic_hv_cost *k = &x->opt->cost;

	fprintf(x->md, "`vnic experiment %s%s`: %s. ", x->e->name,
		x->opt->short_run ? " --short" : "", workload);
	if (x->e->fixed_s)
		fprintf(x->md, "Each case runs once for %.3g s, in turn. ", x->round_s);
	else
		fprintf(x->md,
			"The cases alternate, %u round%s of %.3g s each; rates and counters "
			"are their sums. ",
			x->nrounds, x->nrounds > 1 ? "s" : "", x->round_s);
	if (x->e->trace)
		fprintf(x->md,
			"Function times (inclusive of callees, both sides) come from one "
			"more traced round of %.3g s per case. ",
			x->cases[0].trace_s);
	if (x->opt->cost_set)
		fprintf(x->md,
			"Cost model: direct hcall %" PRIu64 " ns, indirect hcall %" PRIu64
			" ns, CRQ %" PRIu64 " ns, DMA %" PRIu64 " ns/KiB, interrupt %" PRIu64
			" ns. ",
			k->hcall_direct_ns, k->hcall_indirect_ns, k->hcall_crq_ns,
			k->dma_ns_per_kib, k->irq_ns);
	else
		fputs("No cost model (every hcall costs what the code costs). ", x->md);
	fputs("\n\n", x->md);
}

static void md_files(struct xp *x, bool png, const char *extra)
{
	const char *l = x->link, *b = x->base;

	if (png && x->opt->plots)
		fprintf(x->md, "![%s](%s/%s.png)\n\n", b, l, b);
	fprintf(x->md, "Data: [%s.csv](%s/%s.csv)", b, l, b);
	if (x->e->trace)
		fprintf(x->md,
			", [%s_trace.csv](%s/%s_trace.csv), nested reports "
			"[%s_trace.txt](%s/%s_trace.txt)",
			b, l, b, b, l, b);
	if (extra)
		fprintf(x->md, ", %s", extra);
	fputs(".\n\n", x->md);
}

/* Cells */
#define CELL(n, fmt, ...)                                                                          \
	static void cell_##n(char *buf, size_t len, const struct xp_case *c)                       \
	{                                                                                          \
		snprintf(buf, len, fmt, __VA_ARGS__);                                              \
	}
#define CELL_GRP(n, expr)                                                                          \
	static void cell_##n(char *buf, size_t len, const struct xp_case *c)                       \
	{                                                                                          \
		grp(buf, len, (double)(expr));                                                     \
	}
#define CELL_TP_AVG(n, point)                                                                      \
	static void cell_##n##_avg(char *buf, size_t len, const struct xp_case *c)                 \
	{                                                                                          \
		snprintf(buf, len, "%.3f us", tp_avg_us(c, point));                                \
	}
#define CELL_TP_HITS(n, point)                                                                     \
	static void cell_##n##_hits(char *buf, size_t len, const struct xp_case *c)                \
	{                                                                                          \
		grp(buf, len, (double)c->tp[point].hits);                                          \
	}

CELL_GRP(tps, tps(c))
CELL(gbps, "%.3f Gbit/s", gbps(c))
CELL_GRP(tx_pps, per_s(c, (double)c->res.tx_pkts))
CELL(lat, "%.1f / %.1f us", lat_us(c, 50), lat_us(c, 99))
CELL(cpu_txn, "%.3f us", ratio(c->cpu_s * 1e6, (double)c->res.transactions))
CELL(cpu_gb, "%.3f s", ratio(c->cpu_s, (double)c->res.bytes / 1e9))
CELL(cpu_b, "%.0f %% (%.3f s/GB)", b_cpu_pct(c),
     ratio(c->thread_cpu_s[1], (double)c->res.bytes / 1e9))
CELL_GRP(direct, txa(c, "direct_packets"))
CELL_GRP(batched, txa(c, "batched_packets"))
CELL(direct_pct, "%.1f %%", ratio(100.0 * (double)txa(c, "direct_packets"), (double)a_pkts(c)))
CELL_GRP(csum_sw, txa(c, "csum_sw"))
CELL_GRP(csum_missing, dev_txa(c, "csum_missing_hdrs"))
CELL_GRP(hdr_descs, txa(c, "hdr_descs"))
CELL(hdr_per_pkt, "%.2f", ratio((double)txa(c, "hdr_descs"), (double)a_pkts(c)))
CELL_GRP(polls, rxb(c, "polls"))
CELL_GRP(replenish, rxb(c, "replenish_calls"))
CELL(replenish_k, "%.1f",
     ratio(1000.0 * (double)rxb(c, "replenish_calls"), (double)rxb(c, "polls")))
CELL_GRP(bql_calls, txa(c, "bql_completed_calls"))
CELL_GRP(comp_rounds, txa(c, "completion_rounds"))
CELL_GRP(stops, txa(c, "stops"))
CELL_GRP(gro_merged, rxb(c, "gro_merged"))
CELL_GRP(list_batches, rxb(c, "list_batches"))
CELL_GRP(delivered, rxb(c, "delivered"))
CELL(segs_per_delivery, "%.2f", ratio((double)rxb(c, "packets"), (double)rxb(c, "delivered")))
CELL(mbps, "%.1f Mbit/s", gbps(c) * 1000)
CELL_GRP(orphaned, txa(c, "orphaned"))
CELL_GRP(timer_reclaims, txa(c, "timer_reclaims"))
CELL_GRP(tsq_throttled, c->res.tsq_throttled)
CELL_GRP(errors, c->res.err.payload + c->res.err.bad_csum)
CELL_TP_AVG(napi, VNIC_TP_NAPI_POLL)
CELL_TP_HITS(napi, VNIC_TP_NAPI_POLL)
CELL_TP_AVG(replenish, VNIC_TP_REPLENISH)
CELL_TP_HITS(replenish, VNIC_TP_REPLENISH)
CELL_TP_AVG(xmit, VNIC_TP_XMIT)
CELL_TP_HITS(xmit, VNIC_TP_XMIT)
CELL_TP_AVG(flush, VNIC_TP_TX_FLUSH)
CELL_TP_AVG(direct, VNIC_TP_SEND_DIRECT)
CELL_TP_AVG(indirect, VNIC_TP_SEND_INDIRECT)
CELL_TP_HITS(indirect, VNIC_TP_SEND_INDIRECT)
CELL_TP_AVG(csum, VNIC_TP_CSUM_HELP)
CELL_TP_HITS(csum, VNIC_TP_CSUM_HELP)
CELL_TP_AVG(hdr, VNIC_TP_HDR_BUILD)
CELL_TP_HITS(hdr, VNIC_TP_HDR_BUILD)
CELL_TP_AVG(gro, VNIC_TP_GRO_RECEIVE)
CELL_TP_AVG(deliver, VNIC_TP_DELIVER)

/* Replenish time spread over every poll: what replenishing adds to the poll average. */
static void cell_replenish_per_poll(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.3f us",
		 ratio((double)c->tp[VNIC_TP_REPLENISH].ns, (double)c->tp[VNIC_TP_NAPI_POLL].hits) /
			 1e3);
}

static void cell_pkts_per_poll(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.1f", ratio((double)rxb(c, "packets"), (double)rxb(c, "polls")));
}

/* The seeds' submit (ibmvnic_tx_scrq_flush) covers both hcalls; ours are two points. */
static void cell_submit_avg(char *buf, size_t len, const struct xp_case *c)
{
	uint64_t h = c->tp[VNIC_TP_TX_FLUSH].hits + c->tp[VNIC_TP_SEND_DIRECT].hits;
	uint64_t ns = c->tp[VNIC_TP_TX_FLUSH].ns + c->tp[VNIC_TP_SEND_DIRECT].ns;

	snprintf(buf, len, "%.3f us", h ? (double)ns / (double)h / 1e3 : 0);
}

static void cell_submit_hits(char *buf, size_t len, const struct xp_case *c)
{
	grp(buf, len, (double)(c->tp[VNIC_TP_TX_FLUSH].hits + c->tp[VNIC_TP_SEND_DIRECT].hits));
}
#undef CELL
#undef CELL_GRP
#undef CELL_TP_AVG
#undef CELL_TP_HITS

/* The cases of one workload, in the order added. */
static unsigned int cases_of(struct xp *x, const char *workload, const struct xp_case **out,
			     unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < x->ncases && n < max; i++)
		if (!workload || !strcmp(x->cases[i].workload, workload))
			out[n++] = &x->cases[i];
	return n;
}

/* A sentence for the rows where vnic's direction matches the seed's, or not. */
static void md_direction(struct xp *x, const char *what, double before, double after, bool seed_up)
{
	bool up = after > before;

	fprintf(x->md, "- %s: %s %s (%.3g -> %.3g, %+.1f %%); the seed's went %s: %s.\n", what,
		after == before ? "unchanged"
		: up		? "up"
				: "down",
		"from before to after", before, after, before ? (after - before) * 100 / before : 0,
		seed_up ? "up" : "down",
		after == before ? "no direction"
		: up == seed_up ? "**same direction**"
				: "**opposite**");
}

/* ---------------------------------------------------------------------------
 * replenish: seed 000 patch 1
 * ------------------------------------------------------------------------- */

static void replenish_setup(struct xp *x)
{
	struct xp_case *c = add_rr(x, "rr150", "always", 150, 1);

	if (c)
		c->o.topo.drv.rx_replenish = VNIC_DRV_REPLENISH_ALWAYS;
	add_rr(x, "rr150", "low", 150, 1);
}

static const char *const seed_before_after[] = {"before", "after"};

static void replenish_report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"transactions/s", "tps"},
		{"NAPI poll average (us, traced)", "napi_poll_avg_us"},
		{"replenish calls per 1000 polls", "rx_replenish_per_1k_polls"},
	};
	const struct xp_case *cs[2] = {find_case(x, "rr150", "always"),
				       find_case(x, "rr150", "low")};
	const char *sd[][2] = {
		{"", "about +100 pps"},	  {"15.58 us", "12.04 us"}, {"4,167,628", "4,791,737"},
		{"3.74 us", "912.88 us"}, {"4,710,437", "4,314"},   {"1,130", "0.90"},
		{"4.22 us", "0.82 us"},
	};

	md_title(x);
	md_method(x, "rr, 150 sessions of 1-byte requests and responses; rx-replenish `always` "
		     "(before: also after every poll under budget) and `low` (after, the default: "
		     "only when fewer than half the buffers are posted)");
	md_head(x, seed_before_after, 2, cs, 2);
	md_row(x, "transactions/s", sd[0], 2, cs, 2, cell_tps);
	md_row(x, "NAPI poll average (traced)", sd[1], 2, cs, 2, cell_napi_avg);
	md_row(x, "NAPI poll hits (traced round)", sd[2], 2, cs, 2, cell_napi_hits);
	md_row(x, "replenish average (traced)", sd[3], 2, cs, 2, cell_replenish_avg);
	md_row(x, "replenish hits (traced round)", sd[4], 2, cs, 2, cell_replenish_hits);
	md_row(x, "replenish calls per 1000 polls", sd[5], 2, cs, 2, cell_replenish_k);
	md_row(x, "replenish time per poll (traced)", sd[6], 2, cs, 2, cell_replenish_per_poll);
	md_row(x, "packets per poll, side B (counter)", NULL, 2, cs, 2, cell_pkts_per_poll);
	md_row(x, "NAPI polls, side B (counter)", NULL, 2, cs, 2, cell_polls);
	md_row(x, "replenish calls, side B (counter)", NULL, 2, cs, 2, cell_replenish);
	md_row(x, "CPU per transaction (process)", NULL, 2, cs, 2, cell_cpu_txn);
	md_row(x, "latency p50 / p99", NULL, 2, cs, 2, cell_lat);
	md_row(x, "integrity errors", NULL, 2, cs, 2, cell_errors);
	fputs("\nThe seed's replenish calls per 1000 polls are its replenish hits over its poll "
	      "hits, and its replenish time per poll the replenish total over the poll hits: the "
	      "share of the poll average the patch removes.\n\n",
	      x->md);
	md_direction(x, "NAPI poll average", tp_avg_us(cs[0], VNIC_TP_NAPI_POLL),
		     tp_avg_us(cs[1], VNIC_TP_NAPI_POLL), false);
	md_direction(x, "replenish calls per poll",
		     ratio((double)rxb(cs[0], "replenish_calls"), (double)rxb(cs[0], "polls")),
		     ratio((double)rxb(cs[1], "replenish_calls"), (double)rxb(cs[1], "polls")),
		     false);
	md_direction(x, "transactions/s", tps(cs[0]), tps(cs[1]), true);
	fputc('\n', x->md);
	plot_bars(x, "replenish (seed 000 patch 1): rr 150 sessions, rx-replenish always vs low",
		  bars, 3);
	md_files(x, true, NULL);
}

/* ---------------------------------------------------------------------------
 * hdr-build: seed 000 patches 2-3
 * ------------------------------------------------------------------------- */

static void hdr_build_setup(struct xp *x)
{
	struct xp_case *c = add_stream(x, "stream1", "copy", 1);

	if (c)
		c->o.topo.drv.tx_hdr_build = VNIC_DRV_HDR_COPY;
	add_stream(x, "stream1", "direct", 1);
}

/*
 * Copies of the header bytes per packet, by construction of the two code
 * paths of src/driver/tx.c (no counter counts memcpy calls): copy gathers
 * them into a temporary buffer, then into a local descriptor, then into a
 * local array, then into the indirect array; direct writes them once, into
 * the indirect array.
 */
static void cell_hdr_copies(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%d", c->o.topo.drv.tx_hdr_build == VNIC_DRV_HDR_COPY ? 4 : 1);
}

static void hdr_build_report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"header descriptor build average (us)", "hdr_build_avg_us"},
		{"xmit average (us)", "xmit_avg_us"},
		{"Gbit/s", "gbps"},
	};
	const struct xp_case *cs[2] = {find_case(x, "stream1", "copy"),
				       find_case(x, "stream1", "direct")};
	const char *sd[][2] = {
		{"4", "1"},
		{"(not measured)", "(not measured)"},
	};

	md_title(x);
	md_method(x,
		  "stream, 1 flow, TSO on, the device announcing the cautious header mask (headers "
		  "for LSO and for checksum offload); tx-hdr-build `copy` (before) and `direct` "
		  "(after, the default)");
	md_head(x, seed_before_after, 2, cs, 2);
	md_row(x, "copies of the header bytes per packet", sd[0], 2, cs, 2, cell_hdr_copies);
	md_row(x, "header descriptors per packet, side A (counter)", NULL, 2, cs, 2,
	       cell_hdr_per_pkt);
	md_row(x, "header descriptors, side A (counter)", NULL, 2, cs, 2, cell_hdr_descs);
	md_row(x, "header descriptor build average (traced)", sd[1], 2, cs, 2, cell_hdr_avg);
	md_row(x, "header descriptor build hits (traced round)", NULL, 2, cs, 2, cell_hdr_hits);
	md_row(x, "xmit average (traced)", NULL, 2, cs, 2, cell_xmit_avg);
	md_row(x, "throughput", NULL, 2, cs, 2, cell_gbps);
	md_row(x, "CPU per GB (process)", NULL, 2, cs, 2, cell_cpu_gb);
	md_row(x, "integrity errors", NULL, 2, cs, 2, cell_errors);
	fputs("\nThe seed gives no figure for these two patches, only the count of copies (its "
	      "steps 1-4 become one). Ours is the same count, by construction of the two code "
	      "paths: no counter counts memcpy calls.\n\n",
	      x->md);
	md_direction(x, "header descriptor build average", tp_avg_us(cs[0], VNIC_TP_HDR_BUILD),
		     tp_avg_us(cs[1], VNIC_TP_HDR_BUILD), false);
	fputc('\n', x->md);
	plot_bars(x, "hdr-build (seed 000 patches 2-3): stream, tx-hdr-build copy vs direct", bars,
		  3);
	md_files(x, true, NULL);
}

/* ---------------------------------------------------------------------------
 * direct: seed 000 patch 5
 * ------------------------------------------------------------------------- */

static void direct_setup(struct xp *x)
{
	static const struct {
		const char *name;
		unsigned int sessions;
	} wl[] = {{"rr1", 1}, {"rr150", 150}};

	for (unsigned int i = 0; i < 2; i++) {
		struct xp_case *c = add_rr(x, wl[i].name, "indirect", wl[i].sessions, 1);

		if (c)
			c->o.topo.drv.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
		add_rr(x, wl[i].name, "auto", wl[i].sessions, 1);
	}
}

static void direct_table(struct xp *x, const char *wl, bool seed)
{
	const struct xp_case *cs[2] = {find_case(x, wl, "indirect"), find_case(x, wl, "auto")};
	const char *sd[][2] = {
		{"", "\"small latency gains\""}, {"3.34 us", "2.63 us"},
		{"8,860,058", "8,438,942"},	 {"3.35 us", "2.54 us"},
		{"6,553,972", "6,244,076"},
	};
	unsigned int ns = seed ? 2 : 0;

	fprintf(x->md, "**%s** (%s)\n\n", wl,
		seed ? "the seed's TCP_RR_150" : "one session: no packet ever waits for another");
	md_head(x, seed_before_after, ns, cs, 2);
	md_row(x, "transactions/s", sd[0], ns, cs, 2, cell_tps);
	md_row(x, "latency p50 / p99", NULL, ns, cs, 2, cell_lat);
	md_row(x, "xmit average (traced)", sd[1], ns, cs, 2, cell_xmit_avg);
	md_row(x, "xmit hits (traced round)", sd[2], ns, cs, 2, cell_xmit_hits);
	md_row(x, "submit average: flush + direct (traced)", sd[3], ns, cs, 2, cell_submit_avg);
	md_row(x, "submit hits (traced round)", sd[4], ns, cs, 2, cell_submit_hits);
	md_row(x, "indirect flush average (traced)", NULL, ns, cs, 2, cell_flush_avg);
	md_row(x, "send direct average (traced)", NULL, ns, cs, 2, cell_direct_avg);
	md_row(x, "direct packets, side A (counter)", NULL, ns, cs, 2, cell_direct);
	md_row(x, "batched packets, side A (counter)", NULL, ns, cs, 2, cell_batched);
	md_row(x, "share sent direct", NULL, ns, cs, 2, cell_direct_pct);
	md_row(x, "integrity errors", NULL, ns, cs, 2, cell_errors);
	fputc('\n', x->md);
	md_direction(x, "xmit average", tp_avg_us(cs[0], VNIC_TP_XMIT),
		     tp_avg_us(cs[1], VNIC_TP_XMIT), false);
	md_direction(x, "transactions/s", tps(cs[0]), tps(cs[1]), true);
	fputc('\n', x->md);
}

static void direct_report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"transactions/s", "tps"},
		{"xmit average (us)", "xmit_avg_us"},
		{"indirect flush average (us)", "tx_flush_avg_us"},
		{"share sent direct (%)", "tx_direct_pct"},
	};

	md_title(x);
	md_method(x,
		  "rr with 1 and with 150 sessions of 1-byte requests and responses; tx-submit "
		  "`indirect` (before: always the indirect hcall) and `auto` (after, the default: "
		  "the direct hcall for a lone non-GSO packet)");
	direct_table(x, "rr1", false);
	direct_table(x, "rr150", true);
	fputs("The seed's ibmvnic_tx_scrq_flush made either hcall; ours times the indirect flush "
	      "and the direct send as two points, so its figure compares with their sum "
	      "(\"submit\").\n\n",
	      x->md);
	plot_bars(x, "direct (seed 000 patch 5): rr, tx-submit indirect vs auto", bars, 4);
	md_files(x, true, NULL);
}

/* ---------------------------------------------------------------------------
 * bql: seed 000 patch 6
 * ------------------------------------------------------------------------- */

static void bql_setup(struct xp *x)
{
	struct xp_case *c = add_rr(x, "rr150", "per-entry", 150, 1);

	if (c)
		c->o.topo.drv.bql_complete = VNIC_DRV_BQL_PER_ENTRY;
	add_rr(x, "rr150", "per-round", 150, 1);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles of the BQL limit (or inflight) of queue 0 over the series. */
static void series_pcts(const struct xp_case *c, bool inflight, uint32_t *p10, uint32_t *p50,
			uint32_t *p90, double *mean)
{
	size_t n = c->series.count, i;
	uint32_t *v = n ? malloc(n * sizeof(*v)) : NULL;
	double sum = 0;

	*p10 = *p50 = *p90 = 0;
	*mean = 0;
	if (!v)
		return;
	for (i = 0; i < n; i++) {
		const struct vnic_sample *s = &c->series.samples[i];

		v[i] = inflight ? s->bql_inflight[0] : s->bql_limit[0];
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	*p10 = v[n / 10];
	*p50 = v[n / 2];
	*p90 = v[n * 9 / 10];
	*mean = sum / (double)n;
	free(v);
}

static void cell_bql_limit(char *buf, size_t len, const struct xp_case *c)
{
	uint32_t a, b, d;
	double m;

	series_pcts(c, false, &a, &b, &d, &m);
	snprintf(buf, len, "%" PRIu32 " / %" PRIu32 " / %" PRIu32 " B", a, b, d);
}

static void cell_bql_inflight(char *buf, size_t len, const struct xp_case *c)
{
	uint32_t a, b, d;
	double m;

	series_pcts(c, true, &a, &b, &d, &m);
	snprintf(buf, len, "%" PRIu32 " / %" PRIu32 " / %" PRIu32 " B", a, b, d);
}

static void cell_bql_per_round(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.2f",
		 ratio((double)txa(c, "bql_completed_calls"), (double)txa(c, "completion_rounds")));
}

static void bql_report(struct xp *x)
{
	const struct xp_case *cs[2] = {find_case(x, "rr150", "per-entry"),
				       find_case(x, "rr150", "per-round")};
	const char *sd[][2] = {
		{"about 750k pps", "about 1M pps (+33 %)"},
		{"hovering around 130", "rises and falls, 130-900"},
		{"hovering around 130", ""},
	};
	struct bql_bufs {
		struct vnic_plot_line lines[2][2];
		struct vnic_plot_panel panels[2];
		char csv[2][XP_PATH], png[XP_PATH], title[2][64], extra[2 * XP_PATH + 64];
	} *b = calloc(1, sizeof(*b));
	unsigned int i;

	if (!b) {
		x->err = -ENOMEM;
		return;
	}

	md_title(x);
	md_method(x, "rr, 150 sessions of 1-byte requests and responses; bql-complete `per-entry` "
		     "(before: the DQL completion once per tx completion entry) and `per-round` "
		     "(after, the default: once per completion round). The BQL limit and inflight "
		     "of side A's tx queue 0 are sampled every 10 ms in the first round");
	md_head(x, seed_before_after, 2, cs, 2);
	md_row(x, "transactions/s", sd[0], 2, cs, 2, cell_tps);
	md_row(x, "BQL limit p10 / p50 / p90 (sampled)", sd[1], 2, cs, 2, cell_bql_limit);
	md_row(x, "BQL inflight p10 / p50 / p90 (sampled)", sd[2], 2, cs, 2, cell_bql_inflight);
	md_row(x, "DQL completions per completion round", NULL, 2, cs, 2, cell_bql_per_round);
	md_row(x, "DQL completions, side A (counter)", NULL, 2, cs, 2, cell_bql_calls);
	md_row(x, "tx completion rounds, side A (counter)", NULL, 2, cs, 2, cell_comp_rounds);
	md_row(x, "queue stops, side A (counter)", NULL, 2, cs, 2, cell_stops);
	md_row(x, "latency p50 / p99", NULL, 2, cs, 2, cell_lat);
	md_row(x, "integrity errors", NULL, 2, cs, 2, cell_errors);
	fputc('\n', x->md);
	md_direction(x, "transactions/s", tps(cs[0]), tps(cs[1]), true);
	fputc('\n', x->md);

	b->extra[0] = '\0';
	for (i = 0; i < 2; i++) {
		int err;

		if (!cs[i]->series.count)
			continue;
		err = write_series(x, cs[i], b->csv[i], sizeof(b->csv[i]));
		if (err && !x->err)
			x->err = err;
		snprintf(b->title[i], sizeof(b->title[i]), "bql-complete=%s", cs[i]->variant);
		b->lines[i][0] =
			(struct vnic_plot_line){b->csv[i], "t_s", "tx0_bql_limit", "limit", false};
		b->lines[i][1] = (struct vnic_plot_line){b->csv[i], "t_s", "tx0_bql_inflight",
							 "inflight", false};
		b->panels[i] =
			(struct vnic_plot_panel){b->title[i], "seconds", "bytes", b->lines[i], 2};
		snprintf(b->extra + strlen(b->extra), sizeof(b->extra) - strlen(b->extra),
			 "%s[%s](%s/%s)", i ? ", " : "", strrchr(b->csv[i], '/') + 1, x->link,
			 strrchr(b->csv[i], '/') + 1);
	}
	if (x->opt->plots && cs[0]->series.count && cs[1]->series.count) {
		out_path(x, b->png, sizeof(b->png), ".png");
		plot_done(x, b->png,
			  vnic_plot_line_chart(b->png,
					       "bql (seed 000 patch 6): BQL limit and inflight "
					       "of side A tx queue 0, rr 150 sessions",
					       b->panels, 2));
	}
	md_files(x, true, b->extra);
	free(b);
}

/* ---------------------------------------------------------------------------
 * csum: seed 000 patch 7 and seed 001
 * ------------------------------------------------------------------------- */

static void csum_setup(struct xp *x)
{
	static const enum vnic_drv_tx_csum modes[] = {
		VNIC_DRV_CSUM_HW_HEADERS, VNIC_DRV_CSUM_HW_NOHEADERS, VNIC_DRV_CSUM_SW_DIRECT};

	for (unsigned int w = 0; w < 2; w++) {
		for (unsigned int m = 0; m < 3; m++) {
			struct xp_case *c =
				add_rr(x, w ? "rr1B" : "rr8900", vnic_drv_tx_csum_name(modes[m]), 1,
				       w ? 1 : 8900);

			if (!c)
				return;
			c->o.topo.drv.tx_csum = modes[m];
			c->o.topo.dev.hdr_mask = VNIC_DEV_HDRS_CAUTIOUS;
			if (!w) {
				c->o.topo.drv.mtu = c->o.topo.cable.mtu = 9000;
				c->o.topo.drv.tso = false;
				c->o.rr.tcp.no_tso = true;
			}
		}
	}
}

static const char *const seed_csum[] = {"hw w/ headers", "hw w/o headers", "driver csum"};

static void csum_table(struct xp *x, const char *wl, bool seed)
{
	const struct xp_case *cs[3] = {find_case(x, wl, "hw-headers"),
				       find_case(x, wl, "hw-noheaders"),
				       find_case(x, wl, "sw-direct")};
	const char *sd[][3] = {
		{"631k", "831k", "829k"},
		{"7.11 us", "5.98 us", "7.03 us"},
		{"5.86 us", "3.92 us", "3.88 us"},
		{"6.21 us", "11.54 us", "11.31 us"},
		{"6,030,859", "728,781", "763,693"},
		{"2.04 us", "2.03 us", "1.14 us"},
		{"2", "1", "7,526,072"},
	};
	const char *sd1[][3] = {{"-30 % (indirect)", "(direct)", ""}};

	fprintf(x->md, "**%s** (%s)\n\n", wl,
		seed ? "8900-byte messages at MTU 9000, TSO off: the seed's worst case"
		     : "1-byte messages: seed 001's small-packet RR");
	md_head(x, seed_csum, 3, cs, 3);
	md_row(x, "packets sent/s (both hosts)", seed ? sd[0] : NULL, 3, cs, 3, cell_tx_pps);
	md_row(x, "transactions/s", seed ? NULL : sd1[0], 3, cs, 3, cell_tps);
	md_row(x, "xmit average (traced)", seed ? sd[1] : NULL, 3, cs, 3, cell_xmit_avg);
	md_row(x, "submit average: flush + direct (traced)", seed ? sd[2] : NULL, 3, cs, 3,
	       cell_submit_avg);
	md_row(x, "send indirect average (traced)", seed ? sd[3] : NULL, 3, cs, 3,
	       cell_indirect_avg);
	md_row(x, "send indirect hits (traced round)", seed ? sd[4] : NULL, 3, cs, 3,
	       cell_indirect_hits);
	md_row(x, "software checksum average (traced)", seed ? sd[5] : NULL, 3, cs, 3,
	       cell_csum_avg);
	md_row(x, "software checksum hits (traced round)", seed ? sd[6] : NULL, 3, cs, 3,
	       cell_csum_hits);
	md_row(x, "software checksums, side A (counter)", NULL, 3, cs, 3, cell_csum_sw);
	md_row(x, "offloads missing the headers asked for, device A (counter)", NULL, 3, cs, 3,
	       cell_csum_missing);
	md_row(x, "direct packets, side A (counter)", NULL, 3, cs, 3, cell_direct);
	md_row(x, "batched packets, side A (counter)", NULL, 3, cs, 3, cell_batched);
	md_row(x, "latency p50 / p99", NULL, 3, cs, 3, cell_lat);
	md_row(x, "integrity errors", NULL, 3, cs, 3, cell_errors);
	fputc('\n', x->md);
	md_direction(x, "packet rate, hw-headers -> sw-direct",
		     per_s(cs[0], (double)cs[0]->res.tx_pkts),
		     per_s(cs[2], (double)cs[2]->res.tx_pkts), true);
	md_direction(x, "packet rate, hw-noheaders -> sw-direct",
		     per_s(cs[1], (double)cs[1]->res.tx_pkts),
		     per_s(cs[2], (double)cs[2]->res.tx_pkts), false);
	fputc('\n', x->md);
}

static void csum_report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"packets sent/s", "tx_pps"},
		{"xmit average (us)", "xmit_avg_us"},
		{"share sent direct (%)", "tx_direct_pct"},
		{"software checksum average (us)", "csum_help_avg_us"},
	};

	md_title(x);
	md_method(x, "rr, 1 session, with 8900-byte messages at MTU 9000 and TSO off, and with "
		     "1-byte messages; the device announces the cautious header mask; tx-csum "
		     "`hw-headers` (offload with the headers asked for: never direct), "
		     "`hw-noheaders` (offload without them: the unsafe variant) and `sw-direct` "
		     "(after, the default: software checksum where the packet can go direct)");
	csum_table(x, "rr8900", true);
	csum_table(x, "rr1B", false);
	plot_bars(x, "csum (seed 000 patch 7, 001): rr 1 session, tx-csum modes, cautious device",
		  bars, 4);
	md_files(x, true, NULL);
}

/* ---------------------------------------------------------------------------
 * gro: seed 003
 * ------------------------------------------------------------------------- */

static void gro_setup(struct xp *x)
{
	static const enum vnic_deliver_mode modes[] = {VNIC_DELIVER_LIST, VNIC_DELIVER_GRO,
						       VNIC_DELIVER_GRO_LIST};

	for (unsigned int m = 0; m < 3; m++) {
		struct xp_case *c = add_stream(x, "stream4", vnic_deliver_mode_name(modes[m]), 4);

		if (c)
			c->o.topo.drv.rx_deliver = modes[m];
	}
}

static void gro_report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"Gbit/s", "gbps"},
		{"receive-side CPU (% of a core)", "cpu_b_pct"},
		{"segments per delivery", "rx_pkts_per_delivery"},
	};
	static const char *const seed_cols[] = {"list for all", "GRO for TCP", "gro-list"};
	const struct xp_case *cs[3] = {find_case(x, "stream4", "list"),
				       find_case(x, "stream4", "gro"),
				       find_case(x, "stream4", "gro-list")};
	const char *sd[][3] = {
		{"41.6 Gbit/s", "45.8 Gbit/s", "(proposed)"},
		{"97 %", "64 %", ""},
	};

	md_title(x);
	md_method(x,
		  "stream, 4 flows; rx-deliver `list` (the seed's before: every packet batched, "
		  "no GRO), `gro` (the seed's patch: GRO, each result delivered at once) and "
		  "`gro-list` (the default: GRO first, then batch what it passes on, as Saeed "
		  "Mahameed proposed in the thread). Receive-side CPU is the CPU time of side B's "
		  "cpu thread (its driver's NAPI, its device, its host), read with "
		  "pthread_getcpuclockid() at both ends of the traffic; that thread spins up to "
		  "50 us before sleeping, and the spin counts");
	md_head(x, seed_cols, 3, cs, 3);
	md_row(x, "throughput", sd[0], 3, cs, 3, cell_gbps);
	md_row(x, "receive-side CPU", sd[1], 3, cs, 3, cell_cpu_b);
	md_row(x, "GRO merges, side B (counter)", NULL, 3, cs, 3, cell_gro_merged);
	md_row(x, "list batches, side B (counter)", NULL, 3, cs, 3, cell_list_batches);
	md_row(x, "deliveries, side B (counter)", NULL, 3, cs, 3, cell_delivered);
	md_row(x, "segments per delivery", NULL, 3, cs, 3, cell_segs_per_delivery);
	md_row(x, "GRO receive average (traced)", NULL, 3, cs, 3, cell_gro_avg);
	md_row(x, "deliver average (traced)", NULL, 3, cs, 3, cell_deliver_avg);
	md_row(x, "NAPI poll average (traced)", NULL, 3, cs, 3, cell_napi_avg);
	md_row(x, "CPU per GB (process)", NULL, 3, cs, 3, cell_cpu_gb);
	md_row(x, "integrity errors", NULL, 3, cs, 3, cell_errors);
	fputc('\n', x->md);
	md_direction(x, "throughput, list -> gro", gbps(cs[0]), gbps(cs[1]), true);
	md_direction(x, "receive-side CPU seconds per GB, list -> gro",
		     ratio(cs[0]->thread_cpu_s[1], (double)cs[0]->res.bytes / 1e9),
		     ratio(cs[1]->thread_cpu_s[1], (double)cs[1]->res.bytes / 1e9), false);
	fputc('\n', x->md);
	plot_bars(x, "gro (seed 003): stream 4 flows, rx-deliver list / gro / gro-list", bars, 3);
	md_files(x, true, NULL);
}

/* ---------------------------------------------------------------------------
 * reclaim: seed 004
 * ------------------------------------------------------------------------- */

/*
 * The seed's situation: TCP's TSO autosizing (commit 605ad7f) let a flow at
 * 100 Mbit/s keep about a millisecond of data queued below it (pacing rate
 * / 1024, some 12 KB), while bcmgenet looked at its tx completions only
 * when the ring was nearly full, which that little data never fills. Our
 * lazy policy also reclaims on a timer, 1 ms by default, and 1 ms frees
 * the budget as fast as the wire drains it: no starvation. So the
 * experiment sets the budget and the timer as the seed had them: a TSQ
 * budget of 16 KiB (1.3 ms at 100 Mbit/s) and a completion delay of 100
 * ms, far longer than the budget lasts. One superpacket may always be
 * outstanding (work.h), so lazy still moves about 64 KiB per timer tick.
 * The last case keeps the default 1 ms timer to show it hides the problem.
 */
enum {
	RECLAIM_TSQ_BYTES = 16384,
	RECLAIM_LAZY_NS = 100000000,
	RECLAIM_RATE_BPS = 100000000,
};

static void reclaim_setup(struct xp *x)
{
	static const struct {
		const char *name;
		enum vnic_drv_tx_reclaim mode;
		uint64_t timer_ns;
	} v[] = {
		{"lazy", VNIC_DRV_RECLAIM_LAZY, RECLAIM_LAZY_NS},
		{"irq", VNIC_DRV_RECLAIM_IRQ, 0},
		{"napi", VNIC_DRV_RECLAIM_NAPI, 0},
		{"orphan", VNIC_DRV_RECLAIM_ORPHAN, 0},
		{"lazy-1ms", VNIC_DRV_RECLAIM_LAZY, VNIC_DRV_DEFAULT_RECLAIM_NS},
	};

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct xp_case *c = add_stream(x, "stream1", v[i].name, 1);

		if (!c)
			return;
		c->o.topo.drv.tx_reclaim = v[i].mode;
		if (v[i].timer_ns)
			c->o.topo.drv.reclaim_ns = v[i].timer_ns;
		c->o.topo.cable.rate_bps = RECLAIM_RATE_BPS;
		c->o.st.tcp.tsq_bytes = RECLAIM_TSQ_BYTES;
	}
}

/* Payload bytes in [from, to) seconds of the series (the samples at or after each edge). */
static uint64_t bytes_between(const struct vnic_series *s, double from, double to, double *dt)
{
	const struct vnic_sample *a = NULL, *b = NULL;
	uint64_t f = (uint64_t)(from * 1e9), t = (uint64_t)(to * 1e9);

	for (size_t i = 0; i < s->count; i++) {
		if (!a && s->samples[i].t_ns >= f)
			a = &s->samples[i];
		if (s->samples[i].t_ns <= t + s->period_ns / 2)
			b = &s->samples[i];
	}
	*dt = 0;
	if (!a || !b || b->t_ns <= a->t_ns)
		return 0;
	*dt = (double)(b->t_ns - a->t_ns) / 1e9;
	return b->bytes - a->bytes;
}

static const double seed_lazy_mbps[] = {4.19, 3.15, 0, 0, 1.05, 0, 48.2, 93.3, 94.4, 93.3};
static const double seed_orphan_mbps[] = {94.4, 94.4, 93.3, 94.4, 93.3,
					  94.4, 93.3, 94.4, 94.4, 93.3};

static void reclaim_report(struct xp *x)
{
	double step = x->opt->short_run ? 0.1 : 1.0;
	unsigned int nint = (unsigned int)(x->round_s / step + 1e-9), i, k;
	struct reclaim_bufs {
		struct vnic_plot_line lines[XP_MAX_CASES];
		char ycol[XP_MAX_CASES][48];
		char path[XP_PATH], png[XP_PATH], extra[2 * XP_PATH];
	} *bf = calloc(1, sizeof(*bf));
	struct vnic_plot_panel panel;
	const struct xp_case *cs[XP_MAX_CASES];
	unsigned int n = cases_of(x, NULL, cs, XP_MAX_CASES);
	char *path;
	FILE *f;

	if (!bf) {
		x->err = -ENOMEM;
		return;
	}
	path = bf->path;
	md_title(x);
	md_method(x,
		  "stream, 1 flow on a 100 Mbit/s cable; tx-reclaim `lazy` (the seed's before: "
		  "completions looked at only when the ring is 3/4 full, or on the lazy timer), "
		  "`irq` (the default: the completion interrupt on every round; Eric Dumazet's "
		  "fix), `napi` (reclaim inside the NAPI poll: the seed's v2, like bcmsysport), "
		  "`orphan` (the seed's v1: skb_orphan at xmit), and `lazy-1ms`. All cases use a "
		  "TSQ budget of 16 KiB per flow; lazy uses a 100 ms timer, lazy-1ms our default "
		  "1 ms (see below why)");

	/* Per interval, like iperf -i 1. */
	f = fopen(out_path(x, path, sizeof(bf->path), "_intervals.csv"), "w");
	if (f) {
		fputs("t_start_s,t_end_s,t_mid_s", f);
		for (k = 0; k < n; k++)
			fprintf(f, ",%s_mbps", cs[k]->variant);
		fputc('\n', f);
	} else if (!x->err) {
		x->err = -errno;
	}
	fputs("| interval | seed: before (lazy) | seed: orphan |", x->md);
	for (k = 0; k < n; k++)
		fprintf(x->md, " vnic: %s |", cs[k]->variant);
	fputs("\n|---|---:|---:|", x->md);
	for (k = 0; k < n; k++)
		fputs("---:|", x->md);
	fputc('\n', x->md);
	for (i = 0; i < nint; i++) {
		double a = i * step, b = (i + 1) * step;

		fprintf(x->md, "| %4.1f-%4.1f sec |", a, b);
		if (i < 10 && !x->opt->short_run)
			fprintf(x->md, " %.2f Mbit/s | %.2f Mbit/s |", seed_lazy_mbps[i],
				seed_orphan_mbps[i]);
		else
			fputs(" | |", x->md);
		if (f)
			fprintf(f, "%.3f,%.3f,%.3f", a, b, (a + b) / 2);
		for (k = 0; k < n; k++) {
			double dt, mbps;
			uint64_t by = bytes_between(&cs[k]->series, a, b, &dt);

			mbps = dt > 0 ? (double)by * 8 / dt / 1e6 : 0;
			fprintf(x->md, " %.2f Mbit/s |", mbps);
			if (f)
				fprintf(f, ",%.3f", mbps);
		}
		fputc('\n', x->md);
		if (f)
			fputc('\n', f);
	}
	fprintf(x->md,
		"| **0.0-%.1f sec** | **33.9 Mbit/s** (40.5 MBytes) | **94.0 Mbit/s** (112 "
		"MBytes) |",
		x->round_s);
	for (k = 0; k < n; k++)
		fprintf(x->md, " **%.1f Mbit/s** (%.1f MBytes) |", gbps(cs[k]) * 1000,
			(double)cs[k]->res.bytes / 1048576.0);
	fputs("\n\n", x->md);
	if (f && fclose(f) && !x->err)
		x->err = -errno;

	md_head(x, NULL, 0, cs, n);
	md_row(x, "average throughput", NULL, 0, cs, n, cell_mbps);
	md_row(x, "TSQ throttles", NULL, 0, cs, n, cell_tsq_throttled);
	md_row(x, "timer reclaims, side A (counter)", NULL, 0, cs, n, cell_timer_reclaims);
	md_row(x, "orphaned at xmit, side A (counter)", NULL, 0, cs, n, cell_orphaned);
	md_row(x, "tx completion rounds, side A (counter)", NULL, 0, cs, n, cell_comp_rounds);
	md_row(x, "integrity errors", NULL, 0, cs, n, cell_errors);
	fputc('\n', x->md);
	if (n >= 4)
		md_direction(x, "throughput in Mbit/s, lazy -> orphan", gbps(cs[0]) * 1000,
			     gbps(cs[3]) * 1000, true);
	fputc('\n', x->md);

	for (k = 0; k < n; k++) {
		snprintf(bf->ycol[k], sizeof(bf->ycol[k]), "%s_mbps", cs[k]->variant);
		bf->lines[k] =
			(struct vnic_plot_line){path, "t_mid_s", bf->ycol[k], cs[k]->variant, true};
	}
	panel = (struct vnic_plot_panel){"payload throughput per interval", "seconds", "Mbit/s",
					 bf->lines, n};
	if (x->opt->plots) {
		out_path(x, bf->png, sizeof(bf->png), ".png");
		plot_done(x, bf->png,
			  vnic_plot_line_chart(bf->png,
					       "reclaim (seed 004): stream 1 flow on a 100 "
					       "Mbit/s cable, tx-reclaim policies",
					       &panel, 1));
	}
	snprintf(bf->extra, sizeof(bf->extra), "[%s_intervals.csv](%s/%s_intervals.csv)", x->base,
		 x->link, x->base);
	for (k = 0; k < n; k++) {
		int err = write_series(x, cs[k], path, sizeof(bf->path));

		if (err && !x->err)
			x->err = err;
	}
	md_files(x, true, bf->extra);
	free(bf);
}

/* ---------------------------------------------------------------------------
 * The table of experiments
 * ------------------------------------------------------------------------- */

static const struct xp_exp experiments[] = {
	{"replenish", "000 patch 1", "rx buffer replenish only when the pool runs low",
	 replenish_setup, replenish_report, true, false, 0, 0},
	{"hdr-build", "000 patches 2-3", "header descriptors written straight from the packet",
	 hdr_build_setup, hdr_build_report, true, false, 0, 0},
	{"direct", "000 patch 5", "the direct hcall for a lone packet", direct_setup, direct_report,
	 true, false, 0, 0},
	{"bql", "000 patch 6", "BQL completed once per completion round", bql_setup, bql_report,
	 false, true, 0, 0},
	{"csum", "000 patch 7 and 001", "software checksum to go direct with a cautious device",
	 csum_setup, csum_report, true, false, 0, 0},
	{"gro", "003", "GRO, list batching, or both", gro_setup, gro_report, true, false, 0, 0},
	{"reclaim", "004", "tx completion reclaim and TSQ starvation", reclaim_setup,
	 reclaim_report, false, true, 10.0, 0.5},
};

enum { NEXPERIMENTS = sizeof(experiments) / sizeof(experiments[0]) };

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
	OPT_QUIET,
	OPT_COST_DIRECT,
	OPT_COST_INDIRECT,
	OPT_COST_CRQ,
	OPT_COST_DMA,
	OPT_COST_IRQ,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{"short", no_argument, NULL, OPT_SHORT},
	{"out", required_argument, NULL, OPT_OUT},
	{"md", required_argument, NULL, OPT_MD},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"no-plots", no_argument, NULL, OPT_NO_PLOTS},
	{"link-base", required_argument, NULL, OPT_LINK_BASE},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"cost-direct-ns", required_argument, NULL, OPT_COST_DIRECT},
	{"cost-indirect-ns", required_argument, NULL, OPT_COST_INDIRECT},
	{"cost-crq-ns", required_argument, NULL, OPT_COST_CRQ},
	{"cost-dma-ns-per-kib", required_argument, NULL, OPT_COST_DMA},
	{"cost-irq-ns", required_argument, NULL, OPT_COST_IRQ},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fputs("usage: vnic experiment NAME|all|list [options]\n"
	      "Runs a seed's before and after policies side by side and prints the seed's\n"
	      "figures next to ours as markdown (docs/EXPERIMENTS.md).\n"
	      "experiments:\n",
	      f);
	for (unsigned int i = 0; i < NEXPERIMENTS; i++)
		fprintf(f, "  %-10s seed %-19s %s\n", experiments[i].name, experiments[i].seed,
			experiments[i].title);
	fputs("options:\n"
	      "  --short             tiny durations (tests): one round of 0.2 s\n"
	      "  --duration S        seconds per round (1.5; reclaim: 10)\n"
	      "  --out DIR           CSV, plots and traces go there (docs/experiments)\n"
	      "  --md FILE           the markdown there instead of stdout\n"
	      "  --link-base PATH    how the markdown links to DIR (default: DIR relative to\n"
	      "                      the markdown file, or to ./docs for stdout)\n"
	      "  --no-plots          no gnuplot\n"
	      "  --quiet             no progress lines on stderr\n"
	      "cost model for every case (ns, 0 by default; the file names get '-cost'):\n"
	      "  --cost-direct-ns --cost-indirect-ns --cost-crq-ns --cost-dma-ns-per-kib\n"
	      "  --cost-irq-ns\n",
	      f);
}

static int parse_cost(int c, const char *a, struct xp_opts *o)
{
	static const char *const names[] = {"--cost-direct-ns", "--cost-indirect-ns",
					    "--cost-crq-ns", "--cost-dma-ns-per-kib",
					    "--cost-irq-ns"};
	uint64_t *dst[] = {&o->cost.hcall_direct_ns, &o->cost.hcall_indirect_ns,
			   &o->cost.hcall_crq_ns, &o->cost.dma_ns_per_kib, &o->cost.irq_ns};
	unsigned int i = (unsigned int)(c - OPT_COST_DIRECT);

	o->cost_set = true;
	return vnic_arg_u64(names[i], a, 0, 1000000000, dst[i]);
}

/* 0, 1 (help printed), -EINVAL (message printed). argv[1] is the name. */
static int parse(int argc, char **argv, struct xp_opts *o)
{
	int c, err = 0;

	memset(o, 0, sizeof(*o));
	o->plots = true;
	o->out_dir = "docs/experiments";
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_SHORT:
			o->short_run = true;
			break;
		case OPT_OUT:
			o->out_dir = optarg;
			break;
		case OPT_MD:
			o->md_path = optarg;
			break;
		case OPT_DURATION:
			err = vnic_arg_double("--duration", optarg, 0.05, 3600, &o->round_s);
			break;
		case OPT_NO_PLOTS:
			o->plots = false;
			break;
		case OPT_LINK_BASE:
			o->link_base = optarg;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		case '?':
			if (optopt)
				fprintf(stderr, "vnic experiment: option '%s' needs a value\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "vnic experiment: unknown option '%s'\n",
					argv[optind - 1]);
			return -EINVAL;
		default:
			err = parse_cost(c, optarg, o);
			break;
		}
		if (err)
			return err;
	}
	if (optind < argc) {
		fprintf(stderr, "vnic experiment: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
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

/* How the markdown links to the output directory. */
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
	if (o->md_path) {
		slash = strrchr(o->md_path, '/');
		if (slash == o->md_path)
			snprintf(dir, sizeof(dir), "/");
		else if (slash)
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->md_path), o->md_path);
		else
			snprintf(dir, sizeof(dir), ".");
	} else {
		/* stdout is meant for docs/EXPERIMENTS.md */
		snprintf(dir, sizeof(dir), "docs");
	}
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
	fprintf(md, "<!-- written by `vnic experiment %s%s` -->\n", what,
		o->short_run ? " --short" : "");
	fprintf(md, "_Measured %s on %s %s, %ld cpus, load average %.2f at the start%s._\n\n", date,
		u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN), load[0],
		o->short_run ? "; --short: too short to mean anything but the direction of counters"
			     : "");
}

static int run_experiment(const struct xp_opts *o, const struct xp_exp *e, FILE *md,
			  const char *link)
{
	struct xp *x = calloc(1, sizeof(*x));
	int err;

	if (!x)
		return -ENOMEM;
	x->opt = o;
	x->e = e;
	x->md = md;
	snprintf(x->base, sizeof(x->base), "%s%s", e->name, o->cost_set ? "-cost" : "");
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
	if (!err && e->trace)
		err = write_trace(x);
	if (!err) {
		e->report(x);
		err = x->err;
		fflush(md);
	}
	if (err)
		fprintf(stderr, "vnic experiment %s: %s\n", e->name, strerror(-err));
	for (unsigned int i = 0; i < x->ncases; i++)
		case_free(&x->cases[i]);
	free(x);
	return err;
}

int vnic_cmd_experiment(int argc, char **argv)
{
	const struct xp_exp *only = NULL;
	char link[XP_PATH];
	struct xp_opts o;
	FILE *md = stdout;
	int err, failed = 0;
	unsigned int i;

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return 0;
		}
		fputs("vnic experiment: which experiment? (NAME, all or list)\n", stderr);
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "list")) {
		for (i = 0; i < NEXPERIMENTS; i++)
			printf("%s\n", experiments[i].name);
		return 0;
	}
	if (strcmp(argv[1], "all")) {
		for (i = 0; i < NEXPERIMENTS; i++)
			if (!strcmp(argv[1], experiments[i].name))
				only = &experiments[i];
		if (!only) {
			fprintf(stderr, "vnic experiment: no experiment '%s'\n", argv[1]);
			usage(stderr);
			return 2;
		}
	}
	err = parse(argc, argv, &o);
	if (err > 0)
		return 0;
	if (err)
		return 2;
	err = make_dirs(o.out_dir);
	if (err) {
		fprintf(stderr, "vnic experiment: %s: %s\n", o.out_dir, strerror(-err));
		return 1;
	}
	if (o.md_path) {
		md = fopen(o.md_path, "w");
		if (!md) {
			fprintf(stderr, "vnic experiment: %s: %s\n", o.md_path, strerror(errno));
			return 1;
		}
	}
	link_base(&o, link, sizeof(link));
	if (o.plots && !vnic_plot_terminal())
		fputs("vnic experiment: gnuplot not found (Debian: apt install gnuplot-nox): no "
		      "PNG "
		      "plots, only their CSV and .gp scripts\n",
		      stderr);
	md_preamble(md, &o, only ? only->name : "all");
	for (i = 0; i < NEXPERIMENTS; i++) {
		if (only && only != &experiments[i])
			continue;
		if (run_experiment(&o, &experiments[i], md, link))
			failed++;
	}
	if (md != stdout && fclose(md)) {
		fprintf(stderr, "vnic experiment: %s: %s\n", o.md_path, strerror(errno));
		failed++;
	}
	return failed ? 1 : 0;
}
