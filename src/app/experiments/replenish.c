// SPDX-License-Identifier: MIT
/*
 * replenish (ibmvnic rr 1/7): refill the rx pool only when it runs low,
 * not after every NAPI poll that ends under budget.
 */
#include <stdio.h>

#include "../experiment.h"

XP_TP_CELLS(napi, "napi_poll")
XP_TP_CELLS(replenish, "replenish")
XP_RXB_CELL(polls, "polls")
XP_RXB_CELL(replenish, "replenish_calls")

static void cell_replenish_k(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.1f",
		 xp_ratio(1000.0 * (double)xp_rxb(c, "replenish_calls"), (double)xp_rxb(c, "polls")));
}

/* Replenish time spread over every poll: what replenishing adds to the poll average. */
static void cell_replenish_per_poll(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.3f us",
		 xp_ratio((double)vnic_xp_tp(c, "replenish")->ns,
			  (double)vnic_xp_tp(c, "napi_poll")->hits) / 1e3);
}

static void cell_pkts_per_poll(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.1f", xp_ratio((double)xp_rxb(c, "packets"), (double)xp_rxb(c, "polls")));
}

static void setup(struct xp *x)
{
	struct xp_case *c = vnic_xp_add_rr(x, "rr150", "always", 150, 1);

	if (c)
		c->o.topo.drv.rx_replenish = VNIC_DRV_REPLENISH_ALWAYS;
	vnic_xp_add_rr(x, "rr150", "low", 150, 1);
}

static void report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"transactions/s", "tps"},
		{"NAPI poll average (us, traced)", "napi_poll_avg_us"},
		{"replenish calls per 1000 polls", "rx_replenish_per_1k_polls"},
	};
	const struct xp_case *cs[2] = {vnic_xp_case(x, "rr150", "always"),
				       vnic_xp_case(x, "rr150", "low")};
	const char *sd[][2] = {
		{"", "about +100 pps"},	  {"15.58 us", "12.04 us"}, {"4,167,628", "4,791,737"},
		{"3.74 us", "912.88 us"}, {"4,710,437", "4,314"},   {"1,130", "0.90"},
		{"4.22 us", "0.82 us"},
	};

	if (!cs[0] || !cs[1])
		return;
	vnic_xp_md_title(x);
	vnic_xp_md_method(x, "rr, 150 sessions of 1-byte requests and responses; rx-replenish "
			     "`always` (before: also after every poll under budget) and `low` "
			     "(after, the default: only when fewer than half the buffers are "
			     "posted)");
	vnic_xp_md_head(x, vnic_xp_before_after, 2, cs, 2);
	vnic_xp_md_row(x, "transactions/s", sd[0], 2, cs, 2, vnic_xp_cell_tps);
	vnic_xp_md_row(x, "NAPI poll average (traced)", sd[1], 2, cs, 2, cell_napi_avg);
	vnic_xp_md_row(x, "NAPI poll hits (traced round)", sd[2], 2, cs, 2, cell_napi_hits);
	vnic_xp_md_row(x, "replenish average (traced)", sd[3], 2, cs, 2, cell_replenish_avg);
	vnic_xp_md_row(x, "replenish hits (traced round)", sd[4], 2, cs, 2, cell_replenish_hits);
	vnic_xp_md_row(x, "replenish calls per 1000 polls", sd[5], 2, cs, 2, cell_replenish_k);
	vnic_xp_md_row(x, "replenish time per poll (traced)", sd[6], 2, cs, 2,
		       cell_replenish_per_poll);
	vnic_xp_md_row(x, "packets per poll, side B (counter)", NULL, 2, cs, 2, cell_pkts_per_poll);
	vnic_xp_md_row(x, "NAPI polls, side B (counter)", NULL, 2, cs, 2, cell_polls);
	vnic_xp_md_row(x, "replenish calls, side B (counter)", NULL, 2, cs, 2, cell_replenish);
	vnic_xp_md_row(x, "work CPU per transaction (threads, spin excluded)", NULL, 2, cs, 2,
		       vnic_xp_cell_work_txn);
	vnic_xp_md_row(x, "CPU per transaction (process)", NULL, 2, cs, 2, vnic_xp_cell_cpu_txn);
	vnic_xp_md_row(x, "latency p50 / p99", NULL, 2, cs, 2, vnic_xp_cell_lat);
	vnic_xp_md_row(x, "integrity errors", NULL, 2, cs, 2, vnic_xp_cell_errors);
	fputs("\nUpstream, replenish calls per 1000 polls are the replenish hits over the poll "
	      "hits, and the replenish time per poll the replenish total over the poll hits: the "
	      "share of the poll average the patch removes.\n\n",
	      x->md);
	if (x->traced)
		vnic_xp_md_direction(x, "NAPI poll average", vnic_xp_tp_avg_us(cs[0], "napi_poll"),
				     vnic_xp_tp_avg_us(cs[1], "napi_poll"), false);
	vnic_xp_md_direction(
		x, "replenish calls per poll",
		xp_ratio((double)xp_rxb(cs[0], "replenish_calls"), (double)xp_rxb(cs[0], "polls")),
		xp_ratio((double)xp_rxb(cs[1], "replenish_calls"), (double)xp_rxb(cs[1], "polls")),
		false);
	vnic_xp_md_direction_rounds(x, "transactions/s", cs[0], cs[1], vnic_xp_round_tps, true);
	fputc('\n', x->md);
	vnic_xp_plot_bars(x, "replenish (ibmvnic rr 1/7): rr 150 sessions, rx-replenish always vs low",
			  bars, 3);
	vnic_xp_md_files(x, true, NULL);
}

const struct xp_exp vnic_xp_replenish = {
	.name = "replenish",
	.seed = "ibmvnic rr 1/7",
	.title = "rx buffer replenish only when the pool runs low",
	.setup = setup,
	.report = report,
	.trace = true,
	.split = true,
};
