// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the driver's datapath against a hostile device
 * (src/driver/tx.c, rx.c): the host transmits, and the fuzzer, playing the
 * device side of the sub-CRQs (fz_fdev, fuzz/harness.c), sees every tx
 * descriptor and rx buffer add and answers with completions of its choice:
 * counts out of range, correlators out of range, not in use or completed
 * twice, rx offsets and lengths past the buffer, error rcs, frames of any
 * shape. The driver logs in once per configuration; each input opens its
 * link and closes it at the end. Layout:
 *
 *	byte 0	the configuration (bits 0-1): the defaults with two queues
 *		each way; NAPI reclaim, always indirect, offload with headers,
 *		BQL per entry, list delivery, copied headers, replenish after
 *		every poll and a device that wants headers on every packet, MTU
 *		9000; lazy reclaim, offload without headers, GRO only, one tx
 *		and two rx queues; orphan reclaim and the exact header mask
 *	then records, up to MAX_RECORDS, by the low 3 bits of a tag byte:
 *	0 XMIT	   queue, kind (bits 0-2 enum fz_frame_kind, 3 partial checksum,
 *		   4 GSO, 5 xmit_more, 6 patches follow), payload (BE16), pattern,
 *		   GSO size (BE16, with bit 4), then (bit 6) a count and that many
 *		   (offset BE16, value) patches of the frame
 *	1 RUN	   the driver's cpu runs
 *	2 TXCOMP   queue, num_comps, then five (selector, rc): a selector below
 *		   0x80 names the descriptor (selector & 0x3f) among those taken
 *		   (bit 6: and forgets it, as a device that completed it would),
 *		   0x80 and up reads a raw correlator (BE32); an rc of 0xe0 and
 *		   up is rc & 0x1f, anything else success
 *	3 RXCOMP   queue, selector (as for TXCOMP, a raw correlator is BE64),
 *		   flags, offset (byte; tag bit 3: BE16), a frame (kind, payload
 *		   BE16, pattern) written at that offset of the buffer, as far as
 *		   it holds it, the length field that frame's (tag bit 4: plus a
 *		   signed BE16), rc (as for TXCOMP), VLAN TCI (BE16). In the
 *		   configuration whose device offers large receive (3), a
 *		   completion without END_FRAME goes on in the next, the flags'
 *		   low 3 bits (unused by the protocol) pick lro_type and the TCI
 *		   is lro_mss too (docs/PROTOCOL.md section 8.5)
 *	4 TIMER	   the tx completion pollers' timers fire now (tx-reclaim=lazy)
 *	5 DONE	   every descriptor taken completed correctly (tag bit 3: with
 *		   ABORTED)
 *	6 REOPEN   close and open; with tag bits 3 and 4 both set, XPORT
 *		   instead: the device resets (a transport event, then a run:
 *		   the driver brings itself up again). Both cost a bring-up's
 *		   worth of time, so they stay the rarer records.
 *	7 XMIT	   as 0
 *
 * Checked: the host hears tx_done exactly once for every packet xmit took,
 * with its length; what rx hands up lies inside its buffer; after the close
 * every slot, buffer and packet is back (vnic_drv_pools_full) and BQL holds
 * nothing in flight.
 *
 * Corpus: fuzz/corpus/drv_comp/.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

enum {
	MAX_RECORDS = 256,
	VARIANTS = 4,
};

static struct fz_drv envs[VARIANTS];
static bool ready[VARIANTS];

static void setup(unsigned int v)
{
	struct vnic_drv_config cfg;
	struct fz_drv *d = &envs[v];

	vnic_drv_config_default(&cfg);
	/* small rings: every input closes and opens, which costs per buffer */
	cfg.tx_entries = 32;
	cfg.rx_entries = 32;
	switch (v) {
	case 0:
		cfg.tx_queues = 2;
		cfg.rx_queues = 2;
		break;
	case 1:
		cfg.tx_reclaim = VNIC_DRV_RECLAIM_NAPI;
		cfg.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
		cfg.tx_csum = VNIC_DRV_CSUM_HW_HEADERS;
		cfg.bql_complete = VNIC_DRV_BQL_PER_ENTRY;
		cfg.rx_deliver = VNIC_DELIVER_LIST;
		cfg.tx_hdr_build = VNIC_DRV_HDR_COPY;
		cfg.rx_replenish = VNIC_DRV_REPLENISH_ALWAYS;
		cfg.mtu = 9000;
		break;
	case 2:
		cfg.tx_reclaim = VNIC_DRV_RECLAIM_LAZY;
		cfg.tx_csum = VNIC_DRV_CSUM_HW_NOHEADERS;
		cfg.rx_deliver = VNIC_DELIVER_GRO;
		cfg.rx_queues = 2;
		break;
	default:
		cfg.tx_reclaim = VNIC_DRV_RECLAIM_ORPHAN;
		break;
	}
	fz_drv_create(d, &cfg);
	/* large receive: the driver takes it, and checks every large receive's metadata */
	d->fdev.large_rx = v == 3;
	/* rings as small as the driver's: a bring-up allocates them */
	d->fdev.max_entries = 64;
	if (v == 1) {
		uint8_t all =
			VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L2 | VNIC_DESC_REQ_L3 | VNIC_DESC_REQ_L4;

		d->fdev.desc_req = vnic_desc_req_make(all, all, all);
	} else if (v == 3) {
		d->fdev.desc_req = vnic_desc_req_make(0, 0, VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3);
	}
	ready[v] = true;
}

static uint16_t rc_of(uint8_t v)
{
	return v >= 0xe0 ? v & 0x1f : VNIC_RC_SUCCESS;
}

static void rec_xmit(struct fz_drv *d, struct fz_in *in)
{
	const struct vnic_netdev *nd = vnic_drv_netdev(d->drv);
	unsigned int q = fz_u8(in) % (nd->num_tx_queues ? nd->num_tx_queues : 1);
	uint8_t kind = fz_u8(in), pattern, n = 0;
	enum fz_frame_kind k = (enum fz_frame_kind)((kind & 7) % FZ_KINDS);
	uint16_t payload = fz_u16(in), gso_size = 0, l4_off, csum_off;
	struct vnic_pkt *pkt;
	uint32_t len;

	pattern = fz_u8(in);
	if (kind & 16)
		gso_size = fz_u16(in);
	if (kind & 64)
		n = fz_u8(in);
	pkt = vnic_pkt_alloc(&d->pool);
	if (!pkt)
		return;
	len = fz_frame(pkt->data, vnic_pkt_tailroom(pkt), k, payload, pattern, kind & 8, &l4_off,
		       &csum_off);
	for (unsigned int i = 0; i < n && len; i++) {
		uint16_t off = fz_u16(in);

		pkt->data[off % len] = fz_u8(in);
	}
	if (!len) {
		vnic_pkt_free(pkt);
		return;
	}
	pkt->len = len;
	if (kind & 8) {
		pkt->ip_summed = VNIC_CSUM_PARTIAL;
		pkt->csum_start = l4_off;
		pkt->csum_offset = csum_off;
	}
	if ((kind & 16) &&
	    (k == FZ_TCP4 || k == FZ_TCP6 || k == FZ_TCP4_VLAN || k == FZ_UDP4 || k == FZ_UDP6)) {
		/* a host sends GSO only with the checksum left partial */
		pkt->ip_summed = VNIC_CSUM_PARTIAL;
		pkt->csum_start = l4_off;
		pkt->csum_offset = csum_off;
		pkt->gso_type = k == FZ_TCP6			 ? VNIC_GSO_TCPV6
				: (k == FZ_UDP4 || k == FZ_UDP6) ? VNIC_GSO_UDP_L4
								 : VNIC_GSO_TCPV4;
		pkt->gso_size = gso_size;
	}
	fz_drv_xmit(d, q, pkt, kind & 32);
}

/* A descriptor the device took, or a raw correlator. */
static uint32_t tx_corr(struct fz_fdev *f, unsigned int q, struct fz_in *in)
{
	uint8_t sel = fz_u8(in);
	uint32_t n = f->txd_n[q], i, corr;

	if (sel & 0x80)
		return fz_u32(in);
	if (!n)
		return sel;
	i = (sel & 0x3f) % n;
	corr = fz_fdev_txd(f, q, i)->corr;
	if (sel & 0x40)
		fz_fdev_txd_drop(f, q, i);
	return corr;
}

static void rec_txcomp(struct fz_drv *d, struct fz_in *in)
{
	struct fz_fdev *f = &d->fdev;
	unsigned int q = f->ntx ? fz_u8(in) % f->ntx : 0, i;
	union vnic_subcrq_entry e;

	memset(&e, 0, sizeof(e));
	e.tx_comp.first = VNIC_SUBCRQ_VALID;
	e.tx_comp.num_comps = fz_u8(in);
	for (i = 0; i < VNIC_TX_COMP_MAX; i++) {
		vnic_be32_put(&e.tx_comp.correlators[i], tx_corr(f, q, in));
		vnic_be16_put(&e.tx_comp.rcs[i], rc_of(fz_u8(in)));
	}
	fz_fdev_txcomp(f, q, &e);
}

static void rec_rxcomp(struct fz_drv *d, struct fz_in *in, uint8_t tag)
{
	static uint8_t frame[VNIC_PKT_MAX_LEN];
	struct fz_fdev *f = &d->fdev;
	unsigned int q = f->nrx ? fz_u8(in) % f->nrx : 0;
	uint8_t sel = fz_u8(in), kind, pattern;
	struct fz_rxb buf, *b = NULL;
	union vnic_subcrq_entry e;
	uint32_t off, len, i;
	uint64_t corr;
	uint16_t payload;

	if (sel & 0x80) {
		uint64_t hi = fz_u32(in);

		corr = hi << 32 | fz_u32(in);
	} else if (f->rxb_n[q]) {
		i = (sel & 0x3f) % f->rxb_n[q];
		buf = *fz_fdev_rxb(f, q, i);
		b = &buf;
		corr = buf.corr;
		if (sel & 0x40)
			fz_fdev_rxb_drop(f, q, i);
	} else {
		corr = sel;
	}
	memset(&e, 0, sizeof(e));
	e.rx_comp.first = VNIC_SUBCRQ_VALID;
	e.rx_comp.flags = fz_u8(in);
	off = (tag & 8) ? fz_u16(in) : fz_u8(in);
	kind = fz_u8(in);
	payload = fz_u16(in);
	pattern = fz_u8(in);
	len = fz_frame(frame, sizeof(frame), (enum fz_frame_kind)(kind % FZ_KINDS), payload,
		       pattern, false, NULL, NULL);
	if (b && off < b->len) {
		/* the device writes only inside the buffer the driver posted */
		uint8_t *mem = vnic_hv_dma_translate(d->hv, b->ioba, b->len);

		if (mem)
			memcpy(mem + off, frame, len < b->len - off ? len : b->len - off);
	}
	if (tag & 16)
		len += (uint32_t)(int32_t)(int16_t)fz_u16(in);
	vnic_be16_put(&e.rx_comp.off_frame_data, (uint16_t)off);
	vnic_be32_put(&e.rx_comp.len, len);
	vnic_be64_put(&e.rx_comp.correlator, corr);
	vnic_be16_put(&e.rx_comp.rc, rc_of(fz_u8(in)));
	vnic_be16_put(&e.rx_comp.vlan_tci, fz_u16(in));
	if (f->large_rx) {
		static const uint8_t types[8] = {
			0,
			VNIC_RX_LRO_TCPV4,
			VNIC_RX_LRO_TCPV6,
			VNIC_RX_LRO_UDP_L4,
			VNIC_RX_LRO_TCPV4 | VNIC_RX_LRO_TCP_ECN,
			VNIC_RX_LRO_TCPV6 | VNIC_RX_LRO_TCP_ECN,
			VNIC_RX_LRO_UDP_L4 | VNIC_RX_LRO_TCP_ECN,
			0x40,
		};

		e.rx_comp.lro_type = types[e.rx_comp.flags & 7];
		e.rx_comp.lro_mss = e.rx_comp.vlan_tci;
	}
	fz_fdev_rxcomp(f, q, &e);
}

static void hurry_tx(struct fz_drv *d)
{
	for (unsigned int i = 0; i < d->cpu.npollers; i++) {
		struct vnic_poller *p = d->cpu.pollers[i];

		if (p->deadline_ns && p->name && !strncmp(p->name, "drv-txc", 7))
			vnic_poller_set_timer(p, 1);
	}
}

/* What a correct device does once it has sent the frames: completes them all. */
static void complete_all(struct fz_drv *d, uint16_t rc)
{
	struct fz_fdev *f = &d->fdev;

	for (unsigned int q = 0; q < f->ntx; q++) {
		while (f->txd_n[q]) {
			union vnic_subcrq_entry e;
			unsigned int n = 0;

			memset(&e, 0, sizeof(e));
			e.tx_comp.first = VNIC_SUBCRQ_VALID;
			while (n < VNIC_TX_COMP_MAX && f->txd_n[q]) {
				vnic_be32_put(&e.tx_comp.correlators[n],
					      fz_fdev_txd(f, q, 0)->corr);
				vnic_be16_put(&e.tx_comp.rcs[n], rc);
				fz_fdev_txd_drop(f, q, 0);
				n++;
			}
			e.tx_comp.num_comps = (uint8_t)n;
			if (fz_fdev_txcomp(f, q, &e) != VNIC_H_SUCCESS)
				break;
		}
	}
}

static void check_bql(struct fz_drv *d)
{
	const struct vnic_netdev *nd = vnic_drv_netdev(d->drv);
	char name[64];

	fz_drv_snap(d);
	for (unsigned int q = 0; q < nd->num_tx_queues; q++) {
		snprintf(name, sizeof(name), "tx%u_bql_inflight", q);
		FZ_CHECK(fz_drv_ctr(d, name) == 0);
		snprintf(name, sizeof(name), "tx%u_used", q);
		FZ_CHECK(fz_drv_ctr(d, name) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	unsigned int v = fz_u8(&in) % VARIANTS, n;
	bool logout = false;
	struct fz_drv *d;

	if (!ready[v])
		setup(v);
	d = &envs[v];
	fz_fdev_script(&d->fdev, NULL, 0);
	if (!vnic_drv_is_open(d->drv))
		FZ_CHECK(fz_drv_open(d) == 0);

	for (n = 0; n < MAX_RECORDS && in.left; n++) {
		uint8_t tag = fz_u8(&in);

		switch (tag & 7) {
		case 0:
		case 7:
			rec_xmit(d, &in);
			break;
		case 1:
			FZ_CHECK(fz_drv_run(d));
			break;
		case 2:
			rec_txcomp(d, &in);
			break;
		case 3:
			rec_rxcomp(d, &in, tag);
			break;
		case 4:
			hurry_tx(d);
			FZ_CHECK(fz_drv_run(d));
			break;
		case 5:
			complete_all(d, (tag & 8) ? VNIC_RC_ABORTED : VNIC_RC_SUCCESS);
			break;
		case 6:
			if ((tag & 0x18) == 0x18) {
				fz_fdev_xport(&d->fdev);
				FZ_CHECK(fz_drv_run(d));
				logout = true;
				break;
			}
			FZ_CHECK(fz_drv_close(d) == 0);
			FZ_CHECK(fz_drv_open(d) == 0);
			break;
		}
	}
	FZ_CHECK(fz_drv_run(d));
	fz_drv_reset(d, logout);
	check_bql(d);
	return 0;
}
