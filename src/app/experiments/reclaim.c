// SPDX-License-Identifier: MIT
/*
 * reclaim (bcmgenet orphan): tx completions looked at late starve TCP small
 * queues; the completion interrupt, reclaim in NAPI, or skb_orphan at xmit
 * each cure it.
 *
 * The upstream situation: TCP's TSO autosizing (commit 605ad7f) let a flow
 * at 100 Mbit/s keep about a millisecond of data queued below it (pacing
 * rate / 1024, some 12 KB), while bcmgenet looked at its tx completions
 * only when the ring was nearly full, which that little data never fills.
 * Our lazy policy also reclaims on a timer, 1 ms by default, and 1 ms frees
 * the budget as fast as the wire drains it: no starvation. So the
 * experiment sets the budget and the timer as upstream had them: a TSQ
 * budget of 16 KiB (1.3 ms at 100 Mbit/s) and a completion delay of 100
 * ms, far longer than the budget lasts. One superpacket may always be
 * outstanding (work.h), so lazy still moves about 64 KiB per timer tick.
 * The last case keeps the default 1 ms timer to show it hides the problem.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../experiment.h"

enum {
	RECLAIM_TSQ_BYTES = 16384,
	RECLAIM_LAZY_NS = 100000000,
	RECLAIM_RATE_BPS = 100000000,
};

XP_TXA_CELL(orphaned, "orphaned")
XP_TXA_CELL(timer_reclaims, "timer_reclaims")

static void cell_mbps(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.1f Mbit/s", xp_gbps(c) * 1000);
}

static void cell_tsq_throttled(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_grp(buf, len, (double)c->res.tsq_throttled);
}

static void setup(struct xp *x)
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
		struct xp_case *c = vnic_xp_add_stream(x, "stream1", v[i].name, 1);

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

/* Upstream's iperf -i 1 lines, before (lazy) and with skb_orphan, Mbit/s. */
static const double upstream_lazy_mbps[] = {4.19, 3.15, 0, 0, 1.05, 0, 48.2, 93.3, 94.4, 93.3};
static const double upstream_orphan_mbps[] = {94.4, 94.4, 93.3, 94.4, 93.3,
					      94.4, 93.3, 94.4, 94.4, 93.3};

struct reclaim_bufs {
	struct vnic_plot_line lines[XP_MAX_CASES];
	char ycol[XP_MAX_CASES][48];
	char path[XP_PATH], png[XP_PATH], extra[2 * XP_PATH];
};

/* Per interval, like iperf -i 1: a table, and NAME_intervals.csv for the plot. */
static void intervals(struct xp *x, const struct xp_case *const *cs, unsigned int n,
		      struct reclaim_bufs *bf)
{
	double step = x->opt->short_run ? 0.1 : 1.0;
	unsigned int nint = (unsigned int)(x->round_s / step + 1e-9), i, k;
	FILE *f = fopen(vnic_xp_out_path(x, bf->path, sizeof(bf->path), "_intervals.csv"), "w");

	if (f) {
		fputs("t_start_s,t_end_s,t_mid_s", f);
		for (k = 0; k < n; k++)
			fprintf(f, ",%s_mbps", cs[k]->variant);
		fputc('\n', f);
	} else if (!x->err) {
		x->err = -errno;
	}
	fputs("| interval | upstream: before (lazy) | upstream: orphan |", x->md);
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
			fprintf(x->md, " %.2f Mbit/s | %.2f Mbit/s |", upstream_lazy_mbps[i],
				upstream_orphan_mbps[i]);
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
		fprintf(x->md, " **%.1f Mbit/s** (%.1f MBytes) |", xp_gbps(cs[k]) * 1000,
			(double)cs[k]->res.bytes / 1048576.0);
	fputs("\n\n", x->md);
	if (f && fclose(f) && !x->err)
		x->err = -errno;
}

static void plot(struct xp *x, const struct xp_case *const *cs, unsigned int n,
		 struct reclaim_bufs *bf)
{
	struct vnic_plot_panel panel;

	for (unsigned int k = 0; k < n; k++) {
		snprintf(bf->ycol[k], sizeof(bf->ycol[k]), "%s_mbps", cs[k]->variant);
		bf->lines[k] = (struct vnic_plot_line){bf->path, "t_mid_s", bf->ycol[k],
						       cs[k]->variant, true};
	}
	panel = (struct vnic_plot_panel){"payload throughput per interval", "seconds", "Mbit/s",
					 bf->lines, n};
	if (!x->opt->plots)
		return;
	vnic_xp_out_path(x, bf->png, sizeof(bf->png), ".png");
	vnic_xp_plot_done(x, bf->png,
			  vnic_plot_line_chart(bf->png,
					       "reclaim (bcmgenet orphan): stream 1 flow on a 100 "
					       "Mbit/s cable, tx-reclaim policies",
					       &panel, 1));
}

static void report(struct xp *x)
{
	struct reclaim_bufs *bf = calloc(1, sizeof(*bf));
	const struct xp_case *cs[XP_MAX_CASES];
	unsigned int n = vnic_xp_cases_of(x, NULL, cs, XP_MAX_CASES), k;

	if (!bf) {
		x->err = -ENOMEM;
		return;
	}
	vnic_xp_md_title(x);
	vnic_xp_md_method(
		x, "stream, 1 flow on a 100 Mbit/s cable; tx-reclaim `lazy` (the patch's before: "
		   "completions looked at only when the ring is 3/4 full, or on the lazy timer), "
		   "`irq` (the default: the completion interrupt on every round, the fix the "
		   "reviewers asked for), `napi` (reclaim inside the NAPI poll, as bcmsysport "
		   "does: the patch's second version), `orphan` (the patch's first version: "
		   "skb_orphan at xmit), and `lazy-1ms`. All cases use a TSQ budget of 16 KiB per "
		   "flow; lazy uses a 100 ms timer, lazy-1ms our default 1 ms (see below why)");
	intervals(x, cs, n, bf);
	vnic_xp_md_head(x, NULL, 0, cs, n);
	vnic_xp_md_row(x, "average throughput", NULL, 0, cs, n, cell_mbps);
	vnic_xp_md_row(x, "TSQ throttles", NULL, 0, cs, n, cell_tsq_throttled);
	vnic_xp_md_row(x, "timer reclaims, side A (counter)", NULL, 0, cs, n, cell_timer_reclaims);
	vnic_xp_md_row(x, "orphaned at xmit, side A (counter)", NULL, 0, cs, n, cell_orphaned);
	vnic_xp_md_row(x, "tx completion rounds, side A (counter)", NULL, 0, cs, n,
		       vnic_xp_cell_comp_rounds);
	vnic_xp_md_row(x, "integrity errors", NULL, 0, cs, n, vnic_xp_cell_errors);
	fputc('\n', x->md);
	if (n >= 4)
		vnic_xp_md_direction(x, "throughput in Mbit/s, lazy -> orphan",
				     xp_gbps(cs[0]) * 1000, xp_gbps(cs[3]) * 1000, true);
	fputc('\n', x->md);
	plot(x, cs, n, bf);
	snprintf(bf->extra, sizeof(bf->extra), "[%s_intervals.csv](%s/%s_intervals.csv)", x->base,
		 x->link, x->base);
	for (k = 0; k < n; k++) {
		int err = vnic_xp_write_series(x, cs[k], bf->path, sizeof(bf->path));

		if (err && !x->err)
			x->err = err;
	}
	vnic_xp_md_files(x, true, bf->extra);
	free(bf);
}

const struct xp_exp vnic_xp_reclaim = {
	.name = "reclaim",
	.seed = "bcmgenet orphan",
	.title = "tx completion reclaim and TSQ starvation",
	.setup = setup,
	.report = report,
	.sample = true,
	.fixed_s = 10.0,
	.fixed_short_s = 0.5,
};
