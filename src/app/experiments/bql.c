// SPDX-License-Identifier: MIT
/*
 * bql (ibmvnic rr 6/7): report completed bytes to BQL once per completion
 * round, not once per completion entry, so that DQL sees whole rounds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../experiment.h"

XP_TXA_CELL(bql_calls, "bql_completed_calls")
XP_TXA_CELL(stops, "stops")

static void setup(struct xp *x)
{
	struct xp_case *c = vnic_xp_add_rr(x, "rr150", "per-entry", 150, 1);

	if (c)
		c->o.topo.drv.bql_complete = VNIC_DRV_BQL_PER_ENTRY;
	vnic_xp_add_rr(x, "rr150", "per-round", 150, 1);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles of the BQL limit (or inflight) of queue 0 over the series. */
static void series_pcts(const struct xp_case *c, bool inflight, uint32_t *p10, uint32_t *p50,
			uint32_t *p90)
{
	size_t n = c->series.count, i;
	uint32_t *v = n ? malloc(n * sizeof(*v)) : NULL;

	*p10 = *p50 = *p90 = 0;
	if (!v)
		return;
	for (i = 0; i < n; i++) {
		const struct vnic_sample *s = &c->series.samples[i];

		v[i] = inflight ? s->bql_inflight[0] : s->bql_limit[0];
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	*p10 = v[n / 10];
	*p50 = v[n / 2];
	*p90 = v[n * 9 / 10];
	free(v);
}

static void pcts_cell(char *buf, size_t len, const struct xp_case *c, bool inflight)
{
	uint32_t a, b, d;

	series_pcts(c, inflight, &a, &b, &d);
	snprintf(buf, len, "%" PRIu32 " / %" PRIu32 " / %" PRIu32 " B", a, b, d);
}

static void cell_bql_limit(char *buf, size_t len, const struct xp_case *c)
{
	pcts_cell(buf, len, c, false);
}

static void cell_bql_inflight(char *buf, size_t len, const struct xp_case *c)
{
	pcts_cell(buf, len, c, true);
}

static void cell_bql_per_round(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.2f",
		 xp_ratio((double)xp_txa(c, "bql_completed_calls"),
			  (double)xp_txa(c, "completion_rounds")));
}

struct bql_plot {
	struct vnic_plot_line lines[2][2];
	struct vnic_plot_panel panels[2];
	char csv[2][XP_PATH], png[XP_PATH], title[2][64], extra[2 * XP_PATH + 64];
};

/* The series of each case, and their plot: limit and inflight over time. */
static void plot_series(struct xp *x, const struct xp_case *const *cs, struct bql_plot *b)
{
	unsigned int i;

	b->extra[0] = '\0';
	for (i = 0; i < 2; i++) {
		int err;

		if (!cs[i]->series.count)
			continue;
		err = vnic_xp_write_series(x, cs[i], b->csv[i], sizeof(b->csv[i]));
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
		vnic_xp_out_path(x, b->png, sizeof(b->png), ".png");
		vnic_xp_plot_done(x, b->png,
				  vnic_plot_line_chart(b->png,
						       "bql (ibmvnic rr 6/7): BQL limit and inflight "
						       "of side A tx queue 0, rr 150 sessions",
						       b->panels, 2));
	}
}

static void report(struct xp *x)
{
	const struct xp_case *cs[2] = {vnic_xp_case(x, "rr150", "per-entry"),
				       vnic_xp_case(x, "rr150", "per-round")};
	const char *sd[][2] = {
		{"about 750k pps", "about 1M pps (+33 %)"},
		{"hovering around 130", "rises and falls, 130-900"},
		{"hovering around 130", ""},
	};
	struct bql_plot *b;

	if (!cs[0] || !cs[1])
		return;
	b = calloc(1, sizeof(*b));
	if (!b) {
		x->err = -ENOMEM;
		return;
	}
	vnic_xp_md_title(x);
	vnic_xp_md_method(x, x->sampled ? "rr, 150 sessions of 1-byte requests and responses; "
					  "bql-complete `per-entry` (before: the DQL completion once "
					  "per tx completion entry) and `per-round` (after, the "
					  "default: once per completion round). The BQL limit and "
					  "inflight of side A's tx queue 0 are sampled every 10 ms in "
					  "the first round"
					: "rr, 150 sessions of 1-byte requests and responses; "
					  "bql-complete `per-entry` (before: the DQL completion once "
					  "per tx completion entry) and `per-round` (after, the "
					  "default: once per completion round)");
	vnic_xp_md_head(x, vnic_xp_before_after, 2, cs, 2);
	vnic_xp_md_row(x, "transactions/s", sd[0], 2, cs, 2, vnic_xp_cell_tps);
	vnic_xp_md_row(x, "BQL limit p10 / p50 / p90 (sampled)", sd[1], 2, cs, 2, cell_bql_limit);
	vnic_xp_md_row(x, "BQL inflight p10 / p50 / p90 (sampled)", sd[2], 2, cs, 2,
		       cell_bql_inflight);
	vnic_xp_md_row(x, "DQL completions per completion round", NULL, 2, cs, 2,
		       cell_bql_per_round);
	vnic_xp_md_row(x, "DQL completions, side A (counter)", NULL, 2, cs, 2, cell_bql_calls);
	vnic_xp_md_row(x, "tx completion rounds, side A (counter)", NULL, 2, cs, 2,
		       vnic_xp_cell_comp_rounds);
	vnic_xp_md_row(x, "queue stops, side A (counter)", NULL, 2, cs, 2, cell_stops);
	vnic_xp_md_row(x, "latency p50 / p99", NULL, 2, cs, 2, vnic_xp_cell_lat);
	vnic_xp_md_row(x, "work CPU per transaction (threads, spin excluded)", NULL, 2, cs, 2,
		       vnic_xp_cell_work_txn);
	vnic_xp_md_row(x, "integrity errors", NULL, 2, cs, 2, vnic_xp_cell_errors);
	fputc('\n', x->md);
	vnic_xp_md_direction_rounds(x, "transactions/s", cs[0], cs[1], vnic_xp_round_tps, true);
	fputc('\n', x->md);
	plot_series(x, cs, b);
	/* the plot is the series': none without them */
	vnic_xp_md_files(x, x->sampled, b->extra);
	free(b);
}

const struct xp_exp vnic_xp_bql = {
	.name = "bql",
	.seed = "ibmvnic rr 6/7",
	.title = "BQL completed once per completion round",
	.setup = setup,
	.report = report,
	.sample = true,
	.split = true,
};
