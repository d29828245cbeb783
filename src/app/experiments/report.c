// SPDX-License-Identifier: MIT
/*
 * The markdown of `vnic experiment`: titles, how the figures were taken,
 * tables with the thread's figures beside ours, which way each figure went,
 * and the cells several experiments share.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../experiment.h"

const char *const vnic_xp_before_after[2] = {"before", "after"};

const char *vnic_xp_grp(char *buf, size_t len, double v)
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

void vnic_xp_md_head(struct xp *x, const char *const *seed_cols, unsigned int nseed,
		     const struct xp_case *const *cs, unsigned int n)
{
	unsigned int i;

	fputs("| |", x->md);
	for (i = 0; i < nseed; i++)
		fprintf(x->md, " upstream: %s |", seed_cols[i]);
	for (i = 0; i < n; i++)
		fprintf(x->md, " vnic: %s |", cs[i] ? cs[i]->variant : "?");
	fputs("\n|---|", x->md);
	for (i = 0; i < nseed + n; i++)
		fputs("---:|", x->md);
	fputc('\n', x->md);
}

void vnic_xp_md_row(struct xp *x, const char *label, const char *const *seed, unsigned int nseed,
		    const struct xp_case *const *cs, unsigned int n, xp_cell_fn cell)
{
	char buf[96];
	unsigned int i;

	/* a split run has no traced round and no series: their rows would be zeros */
	if ((!x->traced && strstr(label, "(traced")) || (!x->sampled && strstr(label, "(sampled")))
		return;
	fprintf(x->md, "| %s |", label);
	for (i = 0; i < nseed; i++)
		fprintf(x->md, " %s |", seed && seed[i] ? seed[i] : "");
	for (i = 0; i < n; i++) {
		buf[0] = '\0';
		if (cell && cs[i])
			cell(buf, sizeof(buf), cs[i]);
		fprintf(x->md, " %s |", buf);
	}
	fputc('\n', x->md);
}

void vnic_xp_md_title(struct xp *x)
{
	const struct xp_exp *e = x->e;

	fprintf(x->md, "## `%s`: %s (%s)\n\n", e->name, e->title, e->seed);
}

void vnic_xp_md_method(struct xp *x, const char *workload)
{
	const struct vnic_hv_cost *k = &x->opt->base.cost;

	fprintf(x->md, "`vnic experiment %s%s%s`: %s. ", x->e->name,
		x->opt->short_run ? " --short" : "", x->opt->given, workload);
	if (x->e->fixed_s)
		fprintf(x->md, "Each case runs once for %.3g s, in turn. ", x->round_s);
	else
		fprintf(x->md,
			"The cases alternate, %u round%s of %.3g s each; rates and counters "
			"are their sums. ",
			x->nrounds, x->nrounds > 1 ? "s" : "", x->round_s);
	if (x->traced)
		fprintf(x->md,
			"Function times (inclusive of callees, both sides) come from one "
			"more traced round of %.3g s per case. ",
			x->cases[0].trace_s);
	if (x->opt->base.split)
		fputs("Split: the devices and the cable run in a server process of their own, "
		      "the hcalls cross shared memory and eventfd doorbells; the traced and "
		      "sampled figures, which look into the devices, are not taken. ",
		      x->md);
	if (x->opt->groups_set & (1u << VNIC_OPTG_COST))
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

void vnic_xp_md_files(struct xp *x, bool png, const char *extra)
{
	const char *l = x->link, *b = x->base;

	if (png && x->opt->plots)
		fprintf(x->md, "![%s](%s/%s.png)\n\n", b, l, b);
	fprintf(x->md, "Data: [%s.csv](%s/%s.csv)", b, l, b);
	if (x->traced)
		fprintf(x->md,
			", [%s_trace.csv](%s/%s_trace.csv), nested reports "
			"[%s_trace.txt](%s/%s_trace.txt)",
			b, l, b, b, l, b);
	if (extra && *extra)
		fprintf(x->md, ", %s", extra);
	fputs(".\n\n", x->md);
}

static struct xp_direction *add_direction(struct xp *x, const char *what, double before,
					   double after, bool seed_up)
{
	static struct xp_direction spare;
	struct xp_direction *d = x->ndirs < XP_MAX_DIRECTIONS ? &x->dirs[x->ndirs++] : &spare;

	memset(d, 0, sizeof(*d));
	snprintf(d->what, sizeof(d->what), "%s", what);
	d->before = before;
	d->after = after;
	d->seed_up = seed_up;
	return d;
}

static void print_direction(struct xp *x, const struct xp_direction *d)
{
	bool up = d->after > d->before;

	fprintf(x->md, "- %s: %s (%.3g -> %.3g, %+.1f %%", d->what,
		d->after == d->before ? "unchanged" : up ? "up" : "down", d->before, d->after,
		d->before ? (d->after - d->before) * 100 / d->before : 0);
	if (d->rounds)
		fprintf(x->md, "; ratio 95 %% interval %.3f .. %.3f over the rounds", d->lo, d->hi);
	fprintf(x->md, "); upstream it went %s: **%s**.\n", d->seed_up ? "up" : "down",
		d->verdict);
}

static const char *direction_of(bool up, bool seed_up)
{
	return up == seed_up ? "same direction" : "opposite";
}

void vnic_xp_md_direction(struct xp *x, const char *what, double before, double after,
			  bool seed_up)
{
	struct xp_direction *d = add_direction(x, what, before, after, seed_up);
	double pct = before ? (after - before) * 100 / before : (after ? 100 : 0);

	if (pct < XP_NOISE_PCT && pct > -XP_NOISE_PCT)
		d->verdict = "no measurable difference";
	else
		d->verdict = direction_of(after > before, seed_up);
	print_direction(x, d);
}

double vnic_xp_round_tps(const struct xp_round *r)
{
	return r->tps;
}

double vnic_xp_round_gbps(const struct xp_round *r)
{
	return r->gbps;
}

double vnic_xp_round_tx_pps(const struct xp_round *r)
{
	return r->tx_pps;
}

double vnic_xp_round_b_cpu_per_gb(const struct xp_round *r)
{
	return r->b_cpu_s_per_gb;
}

void vnic_xp_md_direction_rounds(struct xp *x, const char *what, const struct xp_case *before,
				 const struct xp_case *after, xp_round_fn fig, bool seed_up)
{
	double a[XP_MAX_ROUNDS], b[XP_MAX_ROUNDS], sa = 0, sb = 0;
	unsigned int n = before->rounds < after->rounds ? before->rounds : after->rounds;
	struct vnic_cmp_verdict v;
	struct xp_direction *d;

	if (n > XP_MAX_ROUNDS)
		n = XP_MAX_ROUNDS;
	for (unsigned int i = 0; i < n; i++) {
		a[i] = fig(&before->round[i]);
		b[i] = fig(&after->round[i]);
		sa += a[i];
		sb += b[i];
	}
	d = add_direction(x, what, n ? sa / n : 0, n ? sb / n : 0, seed_up);
	vnic_cmp_judge(a, b, n, NULL, NULL, 0, &v);
	d->rounds = n >= 3;
	d->lo = v.lo;
	d->hi = v.hi;
	if (n < 3) /* --short: one round, no spread: the threshold then */
		d->verdict = fabs(v.ratio - 1) * 100 < XP_NOISE_PCT ? "no measurable difference"
								  : direction_of(v.ratio > 1, seed_up);
	else if (v.lo <= 1 && v.hi >= 1)
		d->verdict = "no measurable difference";
	else
		d->verdict = direction_of(v.ratio > 1, seed_up);
	print_direction(x, d);
}

/* --- shared cells -------------------------------------------------------------- */

void vnic_xp_tp_avg_cell(char *buf, size_t len, const struct xp_case *c, const char *point)
{
	snprintf(buf, len, "%.3f us", vnic_xp_tp_avg_us(c, point));
}

void vnic_xp_tp_hits_cell(char *buf, size_t len, const struct xp_case *c, const char *point)
{
	vnic_xp_grp(buf, len, (double)vnic_xp_tp(c, point)->hits);
}

void vnic_xp_txa_cell(char *buf, size_t len, const struct xp_case *c, const char *name)
{
	vnic_xp_grp(buf, len, (double)xp_txa(c, name));
}

void vnic_xp_rxb_cell(char *buf, size_t len, const struct xp_case *c, const char *name)
{
	vnic_xp_grp(buf, len, (double)xp_rxb(c, name));
}

void vnic_xp_cell_tps(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_grp(buf, len, xp_tps(c));
}

void vnic_xp_cell_gbps(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.3f Gbit/s", xp_gbps(c));
}

void vnic_xp_cell_tx_pps(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_grp(buf, len, xp_per_s(c, (double)c->res.tx_pkts));
}

void vnic_xp_cell_lat(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.1f / %.1f us", vnic_xp_lat_us(c, 50), vnic_xp_lat_us(c, 99));
}

void vnic_xp_cell_cpu_txn(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.3f us", xp_ratio(c->cpu_s * 1e6, (double)c->res.transactions));
}

void vnic_xp_cell_cpu_gb(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.3f s", xp_ratio(c->cpu_s, (double)c->res.bytes / 1e9));
}

void vnic_xp_cell_work_txn(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.0f ns", xp_ratio(xp_work_cpu_s(c) * 1e9, (double)c->res.transactions));
}

void vnic_xp_cell_work_gb(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.3f s", xp_ratio(xp_work_cpu_s(c), (double)c->res.bytes / 1e9));
}

void vnic_xp_cell_errors(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_grp(buf, len, (double)(c->res.err.payload + c->res.err.bad_csum));
}

void vnic_xp_cell_direct(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_txa_cell(buf, len, c, "direct_packets");
}

void vnic_xp_cell_batched(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_txa_cell(buf, len, c, "batched_packets");
}

void vnic_xp_cell_direct_pct(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.1f %%",
		 xp_ratio(100.0 * (double)xp_txa(c, "direct_packets"), (double)xp_a_pkts(c)));
}

void vnic_xp_cell_comp_rounds(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_txa_cell(buf, len, c, "completion_rounds");
}

void vnic_xp_cell_xmit_avg(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_tp_avg_cell(buf, len, c, "xmit");
}

void vnic_xp_cell_xmit_hits(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_tp_hits_cell(buf, len, c, "xmit");
}

void vnic_xp_cell_napi_avg(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_tp_avg_cell(buf, len, c, "napi_poll");
}

void vnic_xp_cell_submit_avg(char *buf, size_t len, const struct xp_case *c)
{
	const struct xp_tp *f = vnic_xp_tp(c, "tx_flush"), *d = vnic_xp_tp(c, "send_direct");
	uint64_t h = f->hits + d->hits, ns = f->ns + d->ns;

	snprintf(buf, len, "%.3f us", h ? (double)ns / (double)h / 1e3 : 0);
}

void vnic_xp_cell_submit_hits(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_grp(buf, len,
		    (double)(vnic_xp_tp(c, "tx_flush")->hits + vnic_xp_tp(c, "send_direct")->hits));
}
