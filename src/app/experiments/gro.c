// SPDX-License-Identifier: MIT
/*
 * gro (dpaa2-eth rx list): list-batched delivery bypasses GRO; GRO alone
 * delivers each result at once; the default does GRO first, then batches
 * what GRO passes on, as the reviewers of the patch asked.
 */
#include <stdio.h>

#include "../experiment.h"

XP_TP_AVG_CELL(gro, "gro_receive")
XP_TP_AVG_CELL(deliver, "deliver")
XP_RXB_CELL(gro_merged, "gro_merged")
XP_RXB_CELL(list_batches, "list_batches")
XP_RXB_CELL(delivered, "delivered")

static void cell_segs_per_delivery(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.2f",
		 xp_ratio((double)xp_rxb(c, "packets"), (double)xp_rxb(c, "delivered")));
}

static void cell_cpu_b(char *buf, size_t len, const struct xp_case *c)
{
	snprintf(buf, len, "%.0f %% (%.3f s/GB)", xp_ratio(c->thread_cpu_s[1] * 100, xp_secs(c)),
		 xp_ratio(c->thread_cpu_s[1], (double)c->res.bytes / 1e9));
}

static void setup(struct xp *x)
{
	static const enum vnic_deliver_mode modes[] = {VNIC_DELIVER_LIST, VNIC_DELIVER_GRO,
						       VNIC_DELIVER_GRO_LIST};

	for (unsigned int m = 0; m < 3; m++) {
		struct xp_case *c =
			vnic_xp_add_stream(x, "stream4", vnic_deliver_mode_name(modes[m]), 4);

		if (c)
			c->o.topo.drv.rx_deliver = modes[m];
	}
}

static void report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"Gbit/s", "gbps"},
		{"receive-side CPU (% of a core)", "cpu_b_pct"},
		{"segments per delivery", "rx_pkts_per_delivery"},
	};
	static const char *const upstream_cols[] = {"list for all", "GRO for TCP", "gro-list"};
	const struct xp_case *cs[3] = {vnic_xp_case(x, "stream4", "list"),
				       vnic_xp_case(x, "stream4", "gro"),
				       vnic_xp_case(x, "stream4", "gro-list")};
	const char *sd[][3] = {
		{"41.6 Gbit/s", "45.8 Gbit/s", "(proposed)"},
		{"97 %", "64 %", ""},
	};

	if (!cs[0] || !cs[1] || !cs[2])
		return;
	vnic_xp_md_title(x);
	vnic_xp_md_method(
		x, "stream, 4 flows; rx-deliver `list` (the patch's before: every packet batched, "
		   "no GRO), `gro` (the patch: GRO, each result delivered at once) and `gro-list` "
		   "(the default: GRO first, then batch what it passes on, as the reviewers "
		   "proposed in the thread). Receive-side CPU is the CPU time of side B's cpu "
		   "thread (its driver's NAPI, its device, its host), read with "
		   "pthread_getcpuclockid() at both ends of the traffic; that thread spins up to "
		   "50 us before sleeping, and the spin counts");
	vnic_xp_md_head(x, upstream_cols, 3, cs, 3);
	vnic_xp_md_row(x, "throughput", sd[0], 3, cs, 3, vnic_xp_cell_gbps);
	vnic_xp_md_row(x, "receive-side CPU", sd[1], 3, cs, 3, cell_cpu_b);
	vnic_xp_md_row(x, "GRO merges, side B (counter)", NULL, 3, cs, 3, cell_gro_merged);
	vnic_xp_md_row(x, "list batches, side B (counter)", NULL, 3, cs, 3, cell_list_batches);
	vnic_xp_md_row(x, "deliveries, side B (counter)", NULL, 3, cs, 3, cell_delivered);
	vnic_xp_md_row(x, "segments per delivery", NULL, 3, cs, 3, cell_segs_per_delivery);
	vnic_xp_md_row(x, "GRO receive average (traced)", NULL, 3, cs, 3, cell_gro_avg);
	vnic_xp_md_row(x, "deliver average (traced)", NULL, 3, cs, 3, cell_deliver_avg);
	vnic_xp_md_row(x, "NAPI poll average (traced)", NULL, 3, cs, 3, vnic_xp_cell_napi_avg);
	vnic_xp_md_row(x, "work CPU per GB (threads, spin excluded)", NULL, 3, cs, 3,
		       vnic_xp_cell_work_gb);
	vnic_xp_md_row(x, "CPU per GB (process)", NULL, 3, cs, 3, vnic_xp_cell_cpu_gb);
	vnic_xp_md_row(x, "integrity errors", NULL, 3, cs, 3, vnic_xp_cell_errors);
	fputc('\n', x->md);
	vnic_xp_md_direction_rounds(x, "throughput, list -> gro", cs[0], cs[1], vnic_xp_round_gbps,
				    true);
	vnic_xp_md_direction_rounds(x, "receive-side CPU seconds per GB, list -> gro", cs[0],
				    cs[1], vnic_xp_round_b_cpu_per_gb, false);
	fputc('\n', x->md);
	vnic_xp_plot_bars(x, "gro (dpaa2-eth rx list): stream 4 flows, rx-deliver list / gro / "
			     "gro-list",
			  bars, 3);
	vnic_xp_md_files(x, true, NULL);
}

const struct xp_exp vnic_xp_gro = {
	.name = "gro",
	.seed = "dpaa2-eth rx list",
	.title = "GRO, list batching, or both",
	.setup = setup,
	.report = report,
	.trace = true,
};
