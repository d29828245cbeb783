// SPDX-License-Identifier: MIT
/*
 * csum (ibmvnic rr 7/7, ibmvnic e633e32b60): with a device that asks for
 * header descriptors with every checksum offload, checksum a lone packet in
 * software so that it can still take the direct hcall.
 */
#include <stdio.h>

#include "../experiment.h"

XP_TP_CELLS(indirect, "send_indirect")
XP_TP_CELLS(csum, "csum_help")
XP_TXA_CELL(csum_sw, "csum_sw")

static void cell_csum_missing(char *buf, size_t len, const struct xp_case *c)
{
	vnic_xp_grp(buf, len, (double)vnic_xp_dev_txa(c, "csum_missing_hdrs"));
}

static void setup(struct xp *x)
{
	static const enum vnic_drv_tx_csum modes[] = {
		VNIC_DRV_CSUM_HW_HEADERS, VNIC_DRV_CSUM_HW_NOHEADERS, VNIC_DRV_CSUM_SW_DIRECT};

	for (unsigned int w = 0; w < 2; w++) {
		for (unsigned int m = 0; m < 3; m++) {
			struct xp_case *c =
				vnic_xp_add_rr(x, w ? "rr1B" : "rr8900",
					       vnic_drv_tx_csum_name(modes[m]), 1, w ? 1 : 8900);

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

static const char *const upstream_cols[] = {"hw w/ headers", "hw w/o headers", "driver csum"};

static void table(struct xp *x, const char *wl, bool upstream)
{
	const struct xp_case *cs[3] = {vnic_xp_case(x, wl, "hw-headers"),
				       vnic_xp_case(x, wl, "hw-noheaders"),
				       vnic_xp_case(x, wl, "sw-direct")};
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

	if (!cs[0] || !cs[1] || !cs[2])
		return;
	fprintf(x->md, "**%s** (%s)\n\n", wl,
		upstream ? "8900-byte messages at MTU 9000, TSO off: the worst case of ibmvnic "
			   "e633e32b60"
			 : "1-byte messages: the small-packet RR of the same commit");
	vnic_xp_md_head(x, upstream_cols, 3, cs, 3);
	vnic_xp_md_row(x, "packets sent/s (both hosts)", upstream ? sd[0] : NULL, 3, cs, 3,
		       vnic_xp_cell_tx_pps);
	vnic_xp_md_row(x, "transactions/s", upstream ? NULL : sd1[0], 3, cs, 3, vnic_xp_cell_tps);
	vnic_xp_md_row(x, "xmit average (traced)", upstream ? sd[1] : NULL, 3, cs, 3,
		       vnic_xp_cell_xmit_avg);
	vnic_xp_md_row(x, "submit average: flush + direct (traced)", upstream ? sd[2] : NULL, 3,
		       cs, 3, vnic_xp_cell_submit_avg);
	vnic_xp_md_row(x, "send indirect average (traced)", upstream ? sd[3] : NULL, 3, cs, 3,
		       cell_indirect_avg);
	vnic_xp_md_row(x, "send indirect hits (traced round)", upstream ? sd[4] : NULL, 3, cs, 3,
		       cell_indirect_hits);
	vnic_xp_md_row(x, "software checksum average (traced)", upstream ? sd[5] : NULL, 3, cs, 3,
		       cell_csum_avg);
	vnic_xp_md_row(x, "software checksum hits (traced round)", upstream ? sd[6] : NULL, 3, cs,
		       3, cell_csum_hits);
	vnic_xp_md_row(x, "software checksums, side A (counter)", NULL, 3, cs, 3, cell_csum_sw);
	vnic_xp_md_row(x, "offloads missing the headers asked for, device A (counter)", NULL, 3,
		       cs, 3, cell_csum_missing);
	vnic_xp_md_row(x, "direct packets, side A (counter)", NULL, 3, cs, 3, vnic_xp_cell_direct);
	vnic_xp_md_row(x, "batched packets, side A (counter)", NULL, 3, cs, 3,
		       vnic_xp_cell_batched);
	vnic_xp_md_row(x, "latency p50 / p99", NULL, 3, cs, 3, vnic_xp_cell_lat);
	vnic_xp_md_row(x, "work CPU per transaction (threads, spin excluded)", NULL, 3, cs, 3,
		       vnic_xp_cell_work_txn);
	vnic_xp_md_row(x, "integrity errors", NULL, 3, cs, 3, vnic_xp_cell_errors);
	fputc('\n', x->md);
	vnic_xp_md_direction_rounds(x, "packet rate, hw-headers -> sw-direct", cs[0], cs[2],
				    vnic_xp_round_tx_pps, true);
	vnic_xp_md_direction_rounds(x, "packet rate, hw-noheaders -> sw-direct", cs[1], cs[2],
				    vnic_xp_round_tx_pps, false);
	fputc('\n', x->md);
}

static void report(struct xp *x)
{
	static const struct vnic_plot_bars bars[] = {
		{"packets sent/s", "tx_pps"},
		{"xmit average (us)", "xmit_avg_us"},
		{"share sent direct (%)", "tx_direct_pct"},
		{"software checksum average (us)", "csum_help_avg_us"},
	};

	vnic_xp_md_title(x);
	vnic_xp_md_method(x, "rr, 1 session, with 8900-byte messages at MTU 9000 and TSO off, and "
			     "with 1-byte messages; the device announces the cautious header mask; "
			     "tx-csum `hw-headers` (offload with the headers asked for: never "
			     "direct), `hw-noheaders` (offload without them: the unsafe variant) and "
			     "`sw-direct` (after, the default: software checksum where the packet "
			     "can go direct)");
	table(x, "rr8900", true);
	table(x, "rr1B", false);
	vnic_xp_plot_bars(x, "csum (ibmvnic rr 7/7, e633e32b60): rr 1 session, tx-csum modes, "
			     "cautious device",
			  bars, 4);
	vnic_xp_md_files(x, true, NULL);
}

const struct xp_exp vnic_xp_csum = {
	.name = "csum",
	.seed = "ibmvnic rr 7/7, e633e32b60",
	.title = "software checksum to go direct with a cautious device",
	.setup = setup,
	.report = report,
	.trace = true,
};
