/* SPDX-License-Identifier: MIT */
/*
 * `vnic experiment`: what the experiments (src/app/experiments/, one file
 * each) share with the command (experiment.c) and the report helpers
 * (experiments/report.c). Internal to src/app.
 *
 * An experiment is a set of cases: a workload and a policy variant (the
 * patch's "before", its "after", and a third variant where it has one).
 * The cases run on the bench runner (run.c) in turn, round after round,
 * each round the same length, so that a machine getting busier or quieter
 * moves every case alike. Rates and counters are sums over the rounds,
 * untraced; function times come from one extra traced round per case,
 * because tracing costs a little on every packet and would tilt the rates
 * it sits beside.
 *
 * Counters: tx counters are side A's (the rr client, the stream sender), rx
 * counters side B's (the rr server, the stream receiver): the direction the
 * requests or the data go. Trace figures cover both sides (the trace is per
 * process), as the threads' ftrace figures covered one partition that both
 * sent and received.
 */
#ifndef VNIC_APP_EXPERIMENT_H
#define VNIC_APP_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "app.h"
#include "plot.h"

enum {
	XP_MAX_CASES = 12,
	XP_MAX_TRACE_ROWS = 256,
	XP_MAX_POINTS = 24,	/* distinct trace point names per case */
	XP_MAX_DIRECTIONS = 16,
	XP_SERIES_MS = 10,
	XP_MAX_ROUNDS = 16,	/* rounds whose figures a case keeps one by one */
	XP_MAX_BARS = 8,	/* panels of a plot */
	/*
	 * --short: the least a round (the traced one too) carries; one that
	 * carried less runs again, twice as long (vnic_bench_floor).
	 */
	XP_SHORT_MIN_TRANSACTIONS = 200,
	XP_SHORT_MIN_BYTES = 512 << 10,
	XP_DIR_MAX = 256,	    /* --out, --md and --link-base, bytes with the NUL */
	XP_PATH = XP_DIR_MAX + 128, /* a file in the output directory */
};

struct xp_opts {
	bool short_run;
	bool quiet;
	bool plots;
	bool json;		/* one JSON object on stdout; markdown only to --md */
	bool force;		/* write into a folder that has files, over an --md file */
	double round_s;		/* 0: the default */
	const char *out_dir;
	const char *md_path;
	const char *link_base;	/* prefix of the links in the markdown */
	struct vnic_topo_config base;	/* defaults and the table's options (opts.c) */
	unsigned int groups_set;	/* which groups of the table were given */
	char given[512];	/* the table's options as given, for the report */
	char out_default[XP_DIR_MAX];
};

/* Totals of one trace point over every call path it was seen on. */
struct xp_tp {
	const char *name;	/* the point's name (static, from the trace rows) */
	uint64_t hits;
	uint64_t ns;
};

struct xp;

struct xp_case {
	struct xp *x;
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
	double spin_cpu_s[VNIC_TOPO_SIDES];   /* of which idle spin */
	double work_cpu_s[VNIC_TOPO_SIDES];   /* vnic_bench_side_work_cpu_s, summed */
	/* each measuring round's own figures, for the verdicts (vnic_cmp_judge) */
	struct xp_round {
		double tps, gbps, tx_pps;
		double b_cpu_s_per_gb;	/* side B's thread */
	} round[XP_MAX_ROUNDS];
	struct vnic_counter *ctr;
	unsigned int nctr;
	struct vnic_hist *lat; /* rr: every transaction of every round */
	/* the first measuring round, when the experiment samples */
	struct vnic_series series;
	/* the traced round */
	double trace_s;
	struct xp_tp tp[XP_MAX_POINTS];
	unsigned int ntp;
	struct vnic_trace_row *rows;
	unsigned int nrows;
	char *trace_text;
};

struct xp_exp {
	const char *name;
	const char *seed;	/* the patch it reproduces, as docs/SEEDS.md names it */
	const char *title;
	void (*setup)(struct xp *x);
	void (*report)(struct xp *x);
	bool trace;	/* one traced round per case */
	bool sample;	/* sample every measuring round alike; keep the first one's series */
	/*
	 * Runs with --split: what it shows comes from the driver's counters
	 * and the rates, which a split run has as well; its traced and
	 * sampled figures (which look into the devices) are left out there.
	 */
	bool split;
	double fixed_s; /* one round of this long instead (short: fixed_short_s) */
	double fixed_short_s;
};

/* A change the report points out: which way a figure went, beside the patch's. */
struct xp_direction {
	char what[96];
	double before, after;
	bool seed_up;		/* the thread's figure went up */
	const char *verdict;	/* "same direction", "opposite", "no measurable difference" */
	bool rounds;		/* judged on the rounds' spread; else on XP_NOISE_PCT */
	double lo, hi;		/* rounds: the ratio's 95 % interval */
};

/*
 * A figure taken once (a traced round's average, a counter ratio) has no
 * spread to judge a change against: a change smaller than this is no
 * measurable difference.
 */
#define XP_NOISE_PCT 3.0

struct xp {
	const struct xp_opts *opt;
	const struct xp_exp *e;
	FILE *md;		/* the markdown (a null stream with --json and no --md) */
	char base[64];	    /* file name base: NAME, or NAME-cost with a cost model */
	char link[XP_PATH]; /* out_dir as the markdown should link to it */
	double round_s;
	unsigned int nrounds;
	/*
	 * A traced round and sampled series: the experiment's, unless split
	 * (tracing and the sampler read the devices, in the server then).
	 */
	bool traced, sampled;
	unsigned int again;	/* runs that fell below the floor and ran again */
	struct xp_case cases[XP_MAX_CASES];
	unsigned int ncases;
	struct xp_direction dirs[XP_MAX_DIRECTIONS];
	unsigned int ndirs;
	int err;
};

/* argv[1] is the experiment's name. 0, 1 (help printed) or -EINVAL (message printed). */
int vnic_experiment_parse(int argc, char **argv, struct xp_opts *o);

/* The experiments, each in its own file under experiments/. */
extern const struct xp_exp vnic_xp_replenish, vnic_xp_hdr_build, vnic_xp_direct, vnic_xp_bql,
	vnic_xp_csum, vnic_xp_gro, vnic_xp_reclaim;

/* --- cases (experiment.c) ------------------------------------------------------ */

/* A new case: the defaults of `vnic bench` for its workload and the command line's options. */
struct xp_case *vnic_xp_add_rr(struct xp *x, const char *workload, const char *variant,
			       unsigned int sessions, uint32_t size);
struct xp_case *vnic_xp_add_stream(struct xp *x, const char *workload, const char *variant,
				   unsigned int flows);
/* The case of a workload and variant; NULL (and x->err set) if the experiment has none. */
const struct xp_case *vnic_xp_case(struct xp *x, const char *workload, const char *variant);
/* The cases of one workload (NULL: all), in the order added. */
unsigned int vnic_xp_cases_of(struct xp *x, const char *workload, const struct xp_case **out,
			      unsigned int max);

/* --- figures of a case (experiment.c) ------------------------------------------ */

/* A counter by its full name. An unknown name is an error (x->err, said once), not a zero. */
uint64_t vnic_xp_ctr(const struct xp_case *c, const char *name);
/* Summed over the queues of side 'a' or 'b' of the driver: dir "tx"/"rx", name after "txN_". */
uint64_t vnic_xp_drvq(const struct xp_case *c, char side, const char *dir, const char *name);
/* Summed over the tx queues of device A: name after "txN_". */
uint64_t vnic_xp_dev_txa(const struct xp_case *c, const char *name);
/* Trace point totals of the traced round; zero if the point was never hit. */
const struct xp_tp *vnic_xp_tp(const struct xp_case *c, const char *point);
double vnic_xp_tp_avg_us(const struct xp_case *c, const char *point);
double vnic_xp_lat_us(const struct xp_case *c, double pct);

static inline uint64_t xp_txa(const struct xp_case *c, const char *name)
{
	return vnic_xp_drvq(c, 'a', "tx", name);
}

static inline uint64_t xp_rxb(const struct xp_case *c, const char *name)
{
	return vnic_xp_drvq(c, 'b', "rx", name);
}

static inline double xp_secs(const struct xp_case *c)
{
	return (double)c->elapsed_ns / 1e9;
}

static inline double xp_per_s(const struct xp_case *c, double v)
{
	return c->elapsed_ns ? v / xp_secs(c) : 0;
}

static inline double xp_ratio(double a, double b)
{
	return b ? a / b : 0;
}

static inline double xp_tps(const struct xp_case *c)
{
	return xp_per_s(c, (double)c->res.transactions);
}

static inline double xp_gbps(const struct xp_case *c)
{
	return xp_per_s(c, (double)c->res.bytes * 8 / 1e9);
}

/* Both threads' work CPU (vnic_bench_work_cpu_s): what the policies change. */
static inline double xp_work_cpu_s(const struct xp_case *c)
{
	double w = 0;

	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++)
		w += c->work_cpu_s[s];
	return w;
}

/* Packets side A's driver sent (direct and batched). */
static inline uint64_t xp_a_pkts(const struct xp_case *c)
{
	return xp_txa(c, "direct_packets") + xp_txa(c, "batched_packets");
}

/* --- files (experiment.c) ------------------------------------------------------ */

/* out_dir/base + suffix into buf. */
const char *vnic_xp_out_path(const struct xp *x, char *buf, size_t len, const char *suffix);
/* The time series of a case: NAME_WORKLOAD_VARIANT.csv (the sampler's format). */
int vnic_xp_write_series(struct xp *x, const struct xp_case *c, char *path, size_t len);
/* A plot's result: an error other than "no gnuplot" becomes x->err. */
void vnic_xp_plot_done(struct xp *x, const char *png, int err);
/* NAME.png: bars of the summary CSV, one panel per column. */
void vnic_xp_plot_bars(struct xp *x, const char *title, const struct vnic_plot_bars *p,
		       unsigned int n);

/* --- markdown (experiments/report.c) ------------------------------------------- */

/* A cell of a table for one case. */
typedef void (*xp_cell_fn)(char *buf, size_t len, const struct xp_case *c);

void vnic_xp_md_title(struct xp *x);
/* How the figures were taken: command, rounds, options, cost model. */
void vnic_xp_md_method(struct xp *x, const char *workload);
void vnic_xp_md_head(struct xp *x, const char *const *seed_cols, unsigned int nseed,
		     const struct xp_case *const *cs, unsigned int n);
void vnic_xp_md_row(struct xp *x, const char *label, const char *const *seed, unsigned int nseed,
		    const struct xp_case *const *cs, unsigned int n, xp_cell_fn cell);
void vnic_xp_md_files(struct xp *x, bool png, const char *extra);
/*
 * Which way a figure went from before to after, beside the way it went
 * upstream. A figure taken once: a change within XP_NOISE_PCT is no
 * measurable difference.
 */
void vnic_xp_md_direction(struct xp *x, const char *what, double before, double after,
			  bool seed_up);
/* A per-round figure of a case (tps, gbps, ...). */
typedef double (*xp_round_fn)(const struct xp_round *r);
double vnic_xp_round_tps(const struct xp_round *r);
double vnic_xp_round_gbps(const struct xp_round *r);
double vnic_xp_round_tx_pps(const struct xp_round *r);
double vnic_xp_round_b_cpu_per_gb(const struct xp_round *r);
/*
 * The same for a figure every round measured: judged as `vnic bench
 * --compare` judges (vnic_cmp_judge: the median round-by-round ratio and
 * its bootstrap interval), so noise is never called a direction.
 */
void vnic_xp_md_direction_rounds(struct xp *x, const char *what, const struct xp_case *before,
				 const struct xp_case *after, xp_round_fn fig, bool seed_up);
/* 12345678 -> "12,345,678" */
const char *vnic_xp_grp(char *buf, size_t len, double v);

extern const char *const vnic_xp_before_after[2];

/* Cells shared by several experiments. */
void vnic_xp_cell_tps(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_gbps(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_tx_pps(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_lat(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_cpu_txn(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_cpu_gb(char *buf, size_t len, const struct xp_case *c);
/* Work CPU (the threads' CPU less idle spin) per transaction, per GB. */
void vnic_xp_cell_work_txn(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_work_gb(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_errors(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_direct(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_batched(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_direct_pct(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_comp_rounds(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_xmit_avg(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_xmit_hits(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_napi_avg(char *buf, size_t len, const struct xp_case *c);
/* The threads' submit (ibmvnic_tx_scrq_flush) made either hcall; ours are two points. */
void vnic_xp_cell_submit_avg(char *buf, size_t len, const struct xp_case *c);
void vnic_xp_cell_submit_hits(char *buf, size_t len, const struct xp_case *c);
/* A trace point's average or hits, for the point named in the cell's own wrapper. */
void vnic_xp_tp_avg_cell(char *buf, size_t len, const struct xp_case *c, const char *point);
void vnic_xp_tp_hits_cell(char *buf, size_t len, const struct xp_case *c, const char *point);
/* A counter cell: the value of a side A tx or side B rx counter, grouped by thousands. */
void vnic_xp_txa_cell(char *buf, size_t len, const struct xp_case *c, const char *name);
void vnic_xp_rxb_cell(char *buf, size_t len, const struct xp_case *c, const char *name);

/* An experiment's own cells, one line each. */
#define XP_TXA_CELL(n, name)                                                                       \
	static void cell_##n(char *buf, size_t len, const struct xp_case *c)                       \
	{                                                                                          \
		vnic_xp_txa_cell(buf, len, c, name);                                               \
	}
#define XP_RXB_CELL(n, name)                                                                       \
	static void cell_##n(char *buf, size_t len, const struct xp_case *c)                       \
	{                                                                                          \
		vnic_xp_rxb_cell(buf, len, c, name);                                               \
	}
#define XP_TP_AVG_CELL(n, point)                                                                   \
	static void cell_##n##_avg(char *buf, size_t len, const struct xp_case *c)                 \
	{                                                                                          \
		vnic_xp_tp_avg_cell(buf, len, c, point);                                           \
	}
#define XP_TP_HITS_CELL(n, point)                                                                  \
	static void cell_##n##_hits(char *buf, size_t len, const struct xp_case *c)                \
	{                                                                                          \
		vnic_xp_tp_hits_cell(buf, len, c, point);                                          \
	}
#define XP_TP_CELLS(n, point) XP_TP_AVG_CELL(n, point) XP_TP_HITS_CELL(n, point)

#endif /* VNIC_APP_EXPERIMENT_H */
