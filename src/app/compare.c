// SPDX-License-Identifier: MIT
/*
 * `vnic bench ... --repeat N` and `--compare NAME=A,B[,C...]`: cases side by
 * side on the bench runner's rounds (vnic_bench_rounds), each round of each
 * case kept, and a verdict a driver engineer can act on.
 *
 * Every case is the command line's configuration with NAME (any option of
 * the shared table: a policy, the device, the cost model, the cable) set
 * to one value. The cases alternate round by round in one process.
 *
 * Per case: the median of the rate and of the work CPU per transaction (or
 * per GB), with min, max and the interquartile range. Per case after the
 * first: the ratio to the first, as the median of the per-round ratios
 * (round i of a case against round i of the first, run seconds apart),
 * with a 95 % confidence interval by a percentile bootstrap of that median
 * (VNIC_CMP_RESAMPLES resamples of the rounds, a fixed seed so that the
 * same rounds give the same interval). An interval that includes 1 is "no
 * measurable difference". And from the counters: when the compared option
 * is a policy whose path shows in counters (direct sends, software
 * checksums, GRO merges...), cases whose counters show the same path are
 * called the same path, whatever the rates did: the rates can only differ
 * by noise then.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

enum {
	VNIC_CMP_RESAMPLES = 2000,
	CMP_MAX_PATH = 4,
};

/* Which counters show the path a policy took: the driver's tx or rx, or device A's tx. */
struct cmp_path {
	const char *option;
	const char *counters[CMP_MAX_PATH];	/* "tx:direct_packets", "dev:csum_missing_hdrs" */
	const char *labels[CMP_MAX_PATH];
};

static const struct cmp_path paths[] = {
	{ "tx-submit", { "tx:direct_packets", "tx:submit_indirect_bursts" },
	  { "direct sends", "lone packets adaptive sent indirect" } },
	{ "tx-csum", { "tx:direct_packets", "tx:csum_sw", "dev:csum_missing_hdrs" },
	  { "direct sends", "software checksums", "offloads without the headers asked for" } },
	{ "hdr-mask", { "tx:direct_packets", "tx:csum_sw" }, { "direct sends", "software checksums" } },
	{ "rx-deliver", { "rx:gro_merged", "rx:list_batches" }, { "GRO merges", "list batches" } },
	{ "tx-reclaim", { "tx:orphaned", "tx:timer_reclaims", "tx:xmit_reclaims" },
	  { "orphaned at xmit", "timer reclaims", "reclaims in xmit" } },
	{ "drop-missing-hdrs", { "dev:drop_missing_hdrs" }, { "drops for missing headers" } },
	{ "no-tso", { "tx:lso_packets" }, { "LSO sends" } },
	{ "tx-buf", { "tx:mapped_packets" }, { "superpackets sent from the host's buffer" } },
	{ "rx-agg", { "rx:gro_chained" }, { "segments chained, not copied" } },
	{ "rx-usecs", { "devrx:irqs", "devrx:irqs_coalesced" },
	  { "rx completion interrupts", "rx completions coalesced" } },
	{ "rx-frames", { "devrx:irqs", "devrx:irqs_coalesced" },
	  { "rx completion interrupts", "rx completions coalesced" } },
	{ "adaptive-rx", { "devrx:irqs", "devrx:irqs_coalesced", "devrx:dim_moves" },
	  { "rx completion interrupts", "rx completions coalesced", "profile moves" } },
	{ "tx-usecs", { "dev:irqs", "dev:irqs_coalesced" },
	  { "tx completion interrupts", "tx completions coalesced" } },
	{ "tx-frames", { "dev:irqs", "dev:irqs_coalesced" },
	  { "tx completion interrupts", "tx completions coalesced" } },
	{ "adaptive-tx", { "dev:irqs", "dev:irqs_coalesced", "dev:dim_moves" },
	  { "tx completion interrupts", "tx completions coalesced", "profile moves" } },
};

struct cmp_round {
	double rate;		/* tps, or Gbit/s for a stream */
	double work_ns;		/* work CPU per transaction, or per GB */
	double p50_us, p999_us;
	uint64_t path[CMP_MAX_PATH];
	unsigned int seq;	/* its place among every kept run, in the order they ran */
};

struct cmp_case {
	char label[96];
	const char *value;
	struct cmp_round *rounds;
	unsigned int nrounds;
};

struct cmp {
	const struct vnic_bench_opts *base;
	const char *name;		/* the option compared; NULL for --repeat alone */
	const struct cmp_path *path;	/* its path counters, if any */
	struct cmp_case cases[VNIC_CMP_MAX_CASES];
	struct vnic_bench_opts opts[VNIC_CMP_MAX_CASES];	/* what each case runs */
	unsigned int ncases;
	unsigned int rounds;
	struct vnic_machine_snap m0;
	struct vnic_machine machine;
	int interrupted;
	unsigned int again;	/* runs that carried nothing and ran again (vnic_bench_floor) */
	unsigned int kept;	/* runs kept so far */
};

/* --- statistics -------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q quantile of v[0..n) (sorted in place), linear between the ranks. */
static double quantile(double *v, unsigned int n, double q)
{
	double pos, frac;
	unsigned int lo;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	pos = q * (double)(n - 1);
	lo = (unsigned int)pos;
	frac = pos - lo;
	return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

struct spread {
	double median, min, max, q1, q3;
};

static void spread_of(const double *in, unsigned int n, struct spread *s)
{
	double v[VNIC_CMP_MAX_ROUNDS];

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	memcpy(v, in, n * sizeof(*v));
	s->median = quantile(v, n, 0.5);
	s->q1 = quantile(v, n, 0.25);
	s->q3 = quantile(v, n, 0.75);
	s->min = v[0];
	s->max = v[n - 1];
}

/* xorshift64*: a fixed sequence, so that the same rounds give the same interval. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Median of the paired ratios and its percentile-bootstrap 95 % interval. */
static void ratio_ci(const double *num, const double *den, unsigned int n, double *med,
		     double *lo, double *hi)
{
	double r[VNIC_CMP_MAX_ROUNDS], s[VNIC_CMP_MAX_ROUNDS], *meds;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		if (den[i] > 0)
			r[k++] = num[i] / den[i];
	*med = *lo = *hi = 0;
	if (!k)
		return;
	memcpy(s, r, k * sizeof(*s));
	*med = quantile(s, k, 0.5);
	meds = malloc(VNIC_CMP_RESAMPLES * sizeof(*meds));
	if (!meds) {
		*lo = *hi = *med;
		return;
	}
	for (unsigned int b = 0; b < VNIC_CMP_RESAMPLES; b++) {
		for (unsigned int i = 0; i < k; i++)
			s[i] = r[rng_next(&seed) % k];
		meds[b] = quantile(s, k, 0.5);
	}
	*lo = quantile(meds, VNIC_CMP_RESAMPLES, 0.025);
	*hi = quantile(meds, VNIC_CMP_RESAMPLES, 0.975);
	free(meds);
}

/* --- the cases --------------------------------------------------------------------- */

static const struct cmp_path *path_of(const char *option)
{
	for (unsigned int i = 0; option && i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!strcmp(paths[i].option, option))
			return &paths[i];
	return NULL;
}

/*
 * A path counter ("tx:direct_packets") summed over queues and both sides
 * (device A's tx queues for dev:, its rx queues for devrx:).
 */
static uint64_t path_counter(const struct vnic_topo *t, const char *spec)
{
	char full[VNIC_COUNTER_NAME_MAX + 16];
	const char *name = strchr(spec, ':') + 1;
	bool devrx = !strncmp(spec, "devrx:", 6);
	bool dev = devrx || !strncmp(spec, "dev:", 4), rx = devrx || !strncmp(spec, "rx:", 3);
	uint64_t sum = 0;

	for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
		for (const char *side = dev ? "a" : "ab"; *side; side++) {
			snprintf(full, sizeof(full), "%s_%c.%s%u_%s", dev ? "dev" : "drv", *side,
				 rx ? "rx" : "tx", q, name);
			sum += vnic_topo_counter(t, full);
		}
	}
	return sum;
}

static int round_done(void *ctx, unsigned int i, unsigned int round, struct vnic_bench_run *r)
{
	struct cmp *c = ctx;
	struct cmp_round *rd = &c->cases[i].rounds[round];
	struct vnic_work_summary s;

	vnic_work_summarize(&r->res, r->elapsed_ns, &s);
	rd->rate = c->base->wl == VNIC_WL_RR ? s.tps : s.gbps;
	rd->work_ns = c->base->wl == VNIC_WL_RR ? vnic_bench_work_ns_per_txn(r)
						: vnic_bench_work_ns_per_gb(r);
	rd->p50_us = (double)s.lat_p50_ns / 1e3;
	rd->p999_us = (double)s.lat_p999_ns / 1e3;
	for (unsigned int k = 0; c->path && k < CMP_MAX_PATH && c->path->counters[k]; k++)
		rd->path[k] = path_counter(&r->topo, c->path->counters[k]);
	rd->seq = c->kept++;
	c->cases[i].nrounds = round + 1;
	return 0;
}

/* --- the report -------------------------------------------------------------------- */

static const char *unit(const struct cmp *c)
{
	return c->base->wl == VNIC_WL_RR ? "tps" : "Gbit/s";
}

static const char *work_unit(const struct cmp *c)
{
	return c->base->wl == VNIC_WL_RR ? "ns/txn" : "ns/GB";
}

static void values(const struct cmp_case *k, bool work, double *out)
{
	for (unsigned int i = 0; i < k->nrounds; i++)
		out[i] = work ? k->rounds[i].work_ns : k->rounds[i].rate;
}

void vnic_cmp_judge(const double *first, const double *other, unsigned int n,
		    const uint64_t *path_first, const uint64_t *path_other, unsigned int npath,
		    struct vnic_cmp_verdict *v)
{
	memset(v, 0, sizeof(*v));
	ratio_ci(other, first, n, &v->ratio, &v->lo, &v->hi);
	v->path_known = npath > 0;
	v->same_path = v->path_known;
	/* The same path: every path counter zero in both cases, or non-zero in both. */
	for (unsigned int k = 0; k < npath; k++)
		v->same_path &= !path_first[k] == !path_other[k];
	if (v->same_path)
		v->text = "same path: no measurable difference";
	else if (n < 3)
		v->text = "too few rounds to tell (--repeat 3 or more)";
	else if (v->lo <= 1 && v->hi >= 1)
		v->text = "no measurable difference";
	else
		v->text = v->ratio > 1 ? "higher" : "lower";
}

struct verdict {
	struct vnic_cmp_verdict rate, work;
	uint64_t sa[CMP_MAX_PATH], sb[CMP_MAX_PATH];
	unsigned int npath;
};

/* Case i against the first: rates, work CPU, and the path counters summed over the rounds. */
static void judge(const struct cmp *c, unsigned int i, struct verdict *v)
{
	const struct cmp_case *a = &c->cases[0], *b = &c->cases[i];
	double na[VNIC_CMP_MAX_ROUNDS], nb[VNIC_CMP_MAX_ROUNDS];
	unsigned int n = a->nrounds < b->nrounds ? a->nrounds : b->nrounds;

	memset(v, 0, sizeof(*v));
	for (unsigned int k = 0; c->path && k < CMP_MAX_PATH && c->path->counters[k]; k++) {
		for (unsigned int r = 0; r < a->nrounds; r++)
			v->sa[k] += a->rounds[r].path[k];
		for (unsigned int r = 0; r < b->nrounds; r++)
			v->sb[k] += b->rounds[r].path[k];
		v->npath++;
	}
	values(a, false, na);
	values(b, false, nb);
	vnic_cmp_judge(na, nb, n, v->sa, v->sb, v->npath, &v->rate);
	values(a, true, na);
	values(b, true, nb);
	vnic_cmp_judge(na, nb, n, v->sa, v->sb, v->npath, &v->work);
}

static void print_text(const struct cmp *c)
{
	const struct vnic_bench_opts *o = c->base;
	struct verdict v;

	if (o->wl == VNIC_WL_RR)
		printf("vnic bench rr: %u sessions, %u/%u bytes", o->rr.sessions, o->rr.req_size,
		       o->rr.resp_size);
	else
		printf("vnic bench stream: %u flow(s)", o->st.flows);
	printf(", %u round%s of %.3g s per case, the cases alternating\n", c->rounds,
	       c->rounds > 1 ? "s" : "", o->duration_s);
	vnic_machine_print(stdout, &c->machine, o->cmdline);
	if (c->interrupted)
		printf("  INTERRUPTED: the figures cover the rounds that ran\n");
	if (c->again)
		printf("  %u run%s carried nothing and ran again, twice as long\n", c->again,
		       c->again > 1 ? "s" : "");
	printf("  %-28s %14s %22s %9s %14s %9s\n", "case", unit(c), "min .. max", "IQR/med",
	       work_unit(c), "IQR/med");
	for (unsigned int i = 0; i < c->ncases; i++) {
		const struct cmp_case *k = &c->cases[i];
		double r[VNIC_CMP_MAX_ROUNDS];
		struct spread sr, sw;
		char mm[48];

		values(k, false, r);
		spread_of(r, k->nrounds, &sr);
		values(k, true, r);
		spread_of(r, k->nrounds, &sw);
		if (c->base->wl == VNIC_WL_RR)
			snprintf(mm, sizeof(mm), "%.0f .. %.0f", sr.min, sr.max);
		else
			snprintf(mm, sizeof(mm), "%.3f .. %.3f", sr.min, sr.max);
		printf("  %-28s %14.*f %22s %8.1f%% %14.0f %8.1f%%\n", k->label,
		       c->base->wl == VNIC_WL_RR ? 0 : 3, sr.median, mm,
		       sr.median ? 100 * (sr.q3 - sr.q1) / sr.median : 0, sw.median,
		       sw.median ? 100 * (sw.q3 - sw.q1) / sw.median : 0);
	}
	for (unsigned int i = 1; i < c->ncases; i++) {
		judge(c, i, &v);
		printf("  %s vs %s: %s x%.3f (95%% CI %.3f .. %.3f), work CPU x%.3f (%.3f .. "
		       "%.3f): %s",
		       c->cases[i].label, c->cases[0].label, unit(c), v.rate.ratio, v.rate.lo,
		       v.rate.hi, v.work.ratio, v.work.lo, v.work.hi, v.rate.text);
		if (!v.rate.same_path && v.rate.lo > 1)
			printf(" by %.1f %%", (v.rate.ratio - 1) * 100);
		else if (!v.rate.same_path && v.rate.hi < 1)
			printf(" by %.1f %%", (1 - v.rate.ratio) * 100);
		putchar('\n');
		for (unsigned int k = 0; k < v.npath; k++)
			printf("    %-40s %14" PRIu64 " vs %" PRIu64 "\n", c->path->labels[k], v.sb[k],
			       v.sa[k]);
	}
	printf("  (ratio: median of the round-by-round ratios; interval: percentile bootstrap, "
	       "%d resamples)\n", VNIC_CMP_RESAMPLES);
}

static void json_spread(struct vnic_json *j, const char *key, const struct cmp_case *k, bool work)
{
	double r[VNIC_CMP_MAX_ROUNDS];
	struct spread s;

	values(k, work, r);
	spread_of(r, k->nrounds, &s);
	vnic_json_object(j, key);
	vnic_json_double(j, "median", s.median);
	vnic_json_double(j, "min", s.min);
	vnic_json_double(j, "max", s.max);
	vnic_json_double(j, "q1", s.q1);
	vnic_json_double(j, "q3", s.q3);
	vnic_json_close(j);
}

static void json_case(struct vnic_json *j, const struct cmp *c, unsigned int i)
{
	const struct cmp_case *k = &c->cases[i];

	vnic_json_object(j, NULL);
	vnic_json_str(j, "case", k->label);
	if (k->value)
		vnic_json_str(j, "value", k->value);
	json_spread(j, "rate", k, false);
	json_spread(j, "work_cpu_ns", k, true);
	vnic_json_array(j, "rounds");
	for (unsigned int r = 0; r < k->nrounds; r++) {
		const struct cmp_round *rd = &k->rounds[r];

		vnic_json_object(j, NULL);
		vnic_json_u64(j, "seq", rd->seq);
		vnic_json_double(j, "rate", rd->rate);
		vnic_json_double(j, "work_cpu_ns", rd->work_ns);
		if (c->base->wl == VNIC_WL_RR) {
			vnic_json_double(j, "p50_us", rd->p50_us);
			vnic_json_double(j, "p999_us", rd->p999_us);
		}
		for (unsigned int p = 0; c->path && p < CMP_MAX_PATH && c->path->counters[p]; p++)
			vnic_json_u64(j, strchr(c->path->counters[p], ':') + 1, rd->path[p]);
		vnic_json_close(j);
	}
	vnic_json_array_close(j);
	if (i) {
		struct verdict v;

		judge(c, i, &v);
		vnic_json_object(j, "against_first");
		vnic_json_double(j, "ratio", v.rate.ratio);
		vnic_json_double(j, "ci_low", v.rate.lo);
		vnic_json_double(j, "ci_high", v.rate.hi);
		vnic_json_str(j, "verdict", v.rate.text);
		vnic_json_double(j, "work_cpu_ratio", v.work.ratio);
		vnic_json_double(j, "work_cpu_ci_low", v.work.lo);
		vnic_json_double(j, "work_cpu_ci_high", v.work.hi);
		vnic_json_str(j, "work_cpu_verdict", v.work.text);
		if (v.rate.path_known) {
			vnic_json_bool(j, "same_path", v.rate.same_path);
			vnic_json_object(j, "path");
			for (unsigned int p = 0; p < v.npath; p++) {
				vnic_json_array(j, strchr(c->path->counters[p], ':') + 1);
				vnic_json_u64(j, NULL, v.sa[p]);
				vnic_json_u64(j, NULL, v.sb[p]);
				vnic_json_array_close(j);
			}
			vnic_json_close(j);
		}
		vnic_json_close(j);
	}
	vnic_json_close(j);
}

static void print_json(const struct cmp *c)
{
	const struct vnic_bench_opts *o = c->base;
	struct vnic_json j;

	vnic_json_begin(&j, stdout);
	vnic_json_str(&j, "workload", o->wl == VNIC_WL_RR ? "rr" : "stream");
	vnic_machine_json(&j, &c->machine, o->cmdline);
	if (c->name)
		vnic_json_str(&j, "compare", c->name);
	vnic_json_u64(&j, "rounds", c->rounds);
	vnic_json_double(&j, "round_s", o->duration_s);
	vnic_json_str(&j, "unit", unit(c));
	vnic_json_str(&j, "work_cpu_unit", work_unit(c));
	vnic_json_str(&j, "interval", "percentile bootstrap of the median round-by-round ratio, "
				      "95 %, 2000 resamples");
	vnic_json_bool(&j, "interrupted", c->interrupted);
	vnic_json_u64(&j, "runs_again", c->again);
	vnic_json_array(&j, "cases");
	for (unsigned int i = 0; i < c->ncases; i++)
		json_case(&j, c, i);
	vnic_json_array_close(&j);
	vnic_json_end(&j);
}

/* --- the command ------------------------------------------------------------------- */

/* "NAME=A,B,C" into the cases, each value checked against the table. 0 or -EINVAL. */
static int make_cases(struct cmp *c, const struct vnic_bench_opts *base,
		      struct vnic_bench_opts *cases, char *spec)
{
	char *eq = spec ? strchr(spec, '=') : NULL;
	char *val, *save = NULL;

	if (!spec) {
		cases[0] = *base;
		snprintf(c->cases[0].label, sizeof(c->cases[0].label), "as given");
		c->ncases = 1;
		return 0;
	}
	if (!eq) {
		fprintf(stderr, "vnic bench: --compare: '%s' is not NAME=A,B[,C...]\n", spec);
		return -EINVAL;
	}
	*eq = '\0';
	c->name = spec;
	c->path = path_of(spec);
	for (val = strtok_r(eq + 1, ",", &save); val; val = strtok_r(NULL, ",", &save)) {
		struct cmp_case *k = &c->cases[c->ncases];
		int err;

		if (c->ncases == VNIC_CMP_MAX_CASES) {
			fprintf(stderr, "vnic bench: --compare: at most %d values\n",
				VNIC_CMP_MAX_CASES);
			return -EINVAL;
		}
		cases[c->ncases] = *base;
		err = vnic_topo_opt_set(spec, val, &cases[c->ncases].topo);
		if (err)
			return -EINVAL;
		snprintf(k->label, sizeof(k->label), "%s=%s", spec, val);
		k->value = val;
		c->ncases++;
	}
	if (c->ncases < 2) {
		fprintf(stderr, "vnic bench: --compare %s: name two values or more\n", spec);
		return -EINVAL;
	}
	return 0;
}

int vnic_bench_compare(const struct vnic_bench_opts *base, const char *spec, unsigned int rounds)
{
	const char *labels[VNIC_CMP_MAX_CASES];
	struct vnic_machine_snap m1;
	char *spec_copy = spec ? strdup(spec) : NULL;
	struct cmp *c = calloc(1, sizeof(*c));
	struct vnic_bench_rounds rr;
	/* a round that carried nothing has no rate to compare: the first transaction, byte */
	struct vnic_bench_floor floor = { .transactions = 1, .bytes = 1 };
	int err = -ENOMEM;

	if (!c || (spec && !spec_copy))
		goto out;
	c->base = base;
	c->rounds = rounds;
	err = make_cases(c, base, c->opts, spec_copy);
	if (err)
		goto out;
	for (unsigned int i = 0; i < c->ncases; i++) {
		c->cases[i].rounds = calloc(rounds, sizeof(*c->cases[i].rounds));
		if (!c->cases[i].rounds) {
			err = -ENOMEM;
			goto out;
		}
		c->opts[i].quiet = true;
		c->opts[i].ctl = false;
		labels[i] = c->cases[i].label;
	}
	rr = (struct vnic_bench_rounds){
		.cases = c->opts,
		.ncases = c->ncases,
		.rounds = rounds,
		.labels = labels,
		.progress = base->quiet ? NULL : "vnic bench",
		.done = round_done,
		.ctx = c,
		.floor = &floor,
	};
	vnic_machine_snap(&c->m0);
	err = vnic_bench_rounds(&rr);
	c->again = floor.again;
	vnic_machine_snap(&m1);
	vnic_machine_report(&c->m0, &m1, &c->machine);
	if (err == -EINTR) {
		c->interrupted = 1;
		err = 0;
	}
	if (!err) {
		if (base->json)
			print_json(c);
		else
			print_text(c);
		if (c->machine.busy)
			fprintf(stderr, "vnic bench: WARNING: other processes used %.2f cpus on "
					"average during the rounds: these figures are not to be "
					"trusted\n",
				c->machine.others_cpus);
	}
out:
	if (c)
		for (unsigned int i = 0; i < VNIC_CMP_MAX_CASES; i++)
			free(c->cases[i].rounds);
	free(c);
	free(spec_copy);
	return err;
}
