// SPDX-License-Identifier: MIT
/*
 * direct (ibmvnic rr 5/7): the direct hcall (send_subcrq) for a lone
 * packet, the indirect one (send_subcrq_indirect) for batches.
 */
#include <stdio.h>

#include "../experiment.h"

XP_TP_AVG_CELL(flush, "tx_flush")
XP_TP_AVG_CELL(direct, "send_direct")

static void setup(struct xp *x)
{
	static const struct {
		const char *name;
		unsigned int sessions;
	} wl[] = {{"rr1", 1}, {"rr150", 150}};

	for (unsigned int i = 0; i < 2; i++) {
		struct xp_case *c = vnic_xp_add_rr(x, wl[i].name, "indirect", wl[i].sessions, 1);

		if (c)
			c->o.topo.drv.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
		vnic_xp_add_rr(x, wl[i].name, "auto", wl[i].sessions, 1);
	}
}

static void table(struct xp *x, const char *wl, bool upstream)
{
	const struct xp_case *cs[2] = {vnic_xp_case(x, wl, "indirect"), vnic_xp_case(x, wl, "auto")};
	const char *sd[][2] = {
		{"", "\"small latency gains\""}, {"3.34 us", "2.63 us"},
		{"8,860,058", "8,438,942"},	 {"3.35 us", "2.54 us"},
		{"6,553,972", "6,244,076"},
	};
	unsigned int ns = upstream ? 2 : 0;

	if (!cs[0] || !cs[1])
		return;
	fprintf(x->md, "**%s** (%s)\n\n", wl,
		upstream ? "upstream's TCP_RR_150" : "one session: no packet ever waits for another");
	vnic_xp_md_head(x, vnic_xp_before_after, ns, cs, 2);
	vnic_xp_md_row(x, "transactions/s", sd[0], ns, cs, 2, vnic_xp_cell_tps);
	vnic_xp_md_row(x, "latency p50 / p99", NULL, ns, cs, 2, vnic_xp_cell_lat);
	vnic_xp_md_row(x, "work CPU per transaction (threads, spin excluded)", NULL, ns, cs, 2,
		       vnic_xp_cell_work_txn);
	vnic_xp_md_row(x, "xmit average (traced)", sd[1], ns, cs, 2, vnic_xp_cell_xmit_avg);
	vnic_xp_md_row(x, "xmit hits (traced round)", sd[2], ns, cs, 2, vnic_xp_cell_xmit_hits);
	vnic_xp_md_row(x, "submit average: flush + direct (traced)", sd[3], ns, cs, 2,
		       vnic_xp_cell_submit_avg);
	vnic_xp_md_row(x, "submit hits (traced round)", sd[4], ns, cs, 2, vnic_xp_cell_submit_hits);
	vnic_xp_md_row(x, "indirect flush average (traced)", NULL, ns, cs, 2, cell_flush_avg);
	vnic_xp_md_row(x, "send direct average (traced)", NULL, ns, cs, 2, cell_direct_avg);
	vnic_xp_md_row(x, "direct packets, side A (counter)", NULL, ns, cs, 2, vnic_xp_cell_direct);
	vnic_xp_md_row(x, "batched packets, side A (counter)", NULL, ns, cs, 2,
		       vnic_xp_cell_batched);
	vnic_xp_md_row(x, "share sent direct", NULL, ns, cs, 2, vnic_xp_cell_direct_pct);
	vnic_xp_md_row(x, "integrity errors", NULL, ns, cs, 2, vnic_xp_cell_errors);
	fputc('\n', x->md);
	if (x->traced)
		vnic_xp_md_direction(x, "xmit average", vnic_xp_tp_avg_us(cs[0], "xmit"),
				     vnic_xp_tp_avg_us(cs[1], "xmit"), false);
	vnic_xp_md_direction_rounds(x, "transactions/s", cs[0], cs[1], vnic_xp_round_tps, true);
	fputc('\n', x->md);
}

static void report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"transactions/s", "tps"},
		{"xmit average (us)", "xmit_avg_us"},
		{"indirect flush average (us)", "tx_flush_avg_us"},
		{"share sent direct (%)", "tx_direct_pct"},
	};

	vnic_xp_md_title(x);
	vnic_xp_md_method(x, "rr with 1 and with 150 sessions of 1-byte requests and responses; "
			     "tx-submit `indirect` (before: always the indirect hcall) and `auto` "
			     "(after, the default: the direct hcall for a lone non-GSO packet)");
	table(x, "rr1", false);
	table(x, "rr150", true);
	fputs("Upstream's ibmvnic_tx_scrq_flush made either hcall; ours times the indirect flush "
	      "and the direct send as two points, so its figure compares with their sum "
	      "(\"submit\").\n\n",
	      x->md);
	vnic_xp_plot_bars(x, "direct (ibmvnic rr 5/7): rr, tx-submit indirect vs auto", bars, 4);
	vnic_xp_md_files(x, true, NULL);
}

const struct xp_exp vnic_xp_direct = {
	.name = "direct",
	.seed = "ibmvnic rr 5/7",
	.title = "the direct hcall for a lone packet",
	.setup = setup,
	.report = report,
	.trace = true,
	.split = true,
};
