// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the driver's control path (src/driver/ctl.c): its
 * bring-up, close and reopen against a hostile device that answers every
 * CRQ message as the input says (fz_fdev, fuzz/harness.c): correctly, with a
 * byte changed, with 16 bytes of its own, or not at all; with unsolicited
 * messages in between, answers sent twice, and the buffers it DMA-writes
 * (the offload query, the login response) changed. Once the script runs
 * out it answers correctly. Layout:
 *
 *	byte 0	bit 0 the driver: one tx and one rx queue of 64 entries, MTU
 *		1500; or four of 256, MTU 9000, 128 entries per indirect send,
 *		no TSO. Bits 1-2 the device's queue limit (1..4), bits 3-4 its
 *		entry limit (16, 64, 256, 1024), bits 5-6 its MTU limit (576,
 *		1500, 9000, 65535), bit 7 its header mask exact
 *	byte 1	bits 0-3 its smallest LSO MSS, bits 4-7 the extra rx buffer
 *		bytes it asks for (in 1 KiB)
 *	then the script: per message the driver sends, a byte of enum
 *	fz_fdev_act and the FZ_ACT_* bits, followed by that action's bytes.
 *
 * The driver opens; if that worked it closes and opens again (the link-up
 * only path); then it is reset (fz_drv_reset). Checked: open and close
 * return what driver.h promises and never time out (a driver left waiting
 * forever is a finding: the fake device always answers INIT, and gives up
 * with a transport event when the driver waits for what it will not get);
 * an open driver (one the device did not reset at once) has a netdev within
 * what it asked for; the buffers it maps stay within its own limits (rx
 * buffers no longer than the longest frame); after the reset every buffer
 * is back, the state closed.
 *
 * Corpus: fuzz/corpus/drv_crq/.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"

static struct fz_drv envs[2];
static bool ready[2];

static void setup(unsigned int v)
{
	struct vnic_drv_config cfg;

	vnic_drv_config_default(&cfg);
	cfg.tx_entries = 64;
	cfg.rx_entries = 64;
	if (v) {
		cfg.tx_queues = 4;
		cfg.rx_queues = 4;
		cfg.tx_entries = 256;
		cfg.rx_entries = 256;
		cfg.mtu = 9000;
		cfg.max_ind_descs = VNIC_MAX_IND_DESCS;
		cfg.tso = false;
	}
	fz_drv_create(&envs[v], &cfg);
	ready[v] = true;
}

static void offer(struct fz_fdev *f, uint8_t b0, uint8_t b1)
{
	static const uint64_t entries[4] = {16, 64, 256, 1024};
	static const uint64_t mtus[4] = {576, 1500, 9000, 65535};
	static const uint64_t mss[16] = {0,    1,    64,   68,	 200,  224,  536,   1000,
					 1400, 1460, 1500, 2000, 8000, 9000, 32768, 65535};

	f->max_tx_queues = 1 + ((b0 >> 1) & 3);
	f->max_rx_queues = f->max_tx_queues;
	f->max_entries = entries[(b0 >> 3) & 3];
	f->max_mtu = mtus[(b0 >> 5) & 3] + VNIC_ETH_HLEN;
	f->desc_req = vnic_desc_req_make(0, (b0 & 0x80) ? 0 : VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3,
					 VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3);
	f->min_mss = mss[b1 & 15];
	f->rx_buf_size = (uint32_t)(b1 >> 4) << 10;
}

static void check_open(struct fz_drv *d, int rc)
{
	const struct vnic_netdev *nd;

	/* driver.h: what open may answer; a timeout means it was left waiting */
	FZ_CHECK(rc == 0 || rc == -EPROTO || rc == -EINVAL || rc == -ENOMEM || rc == -ECONNRESET ||
		 rc == -EIO);
	if (rc)
		return;
	/*
	 * Open, unless the device reset the link after the bring-up answered
	 * (an error indication in the same poll): then a reset is under way.
	 */
	if (!vnic_drv_is_open(d->drv)) {
		fz_drv_snap(d);
		FZ_CHECK(fz_drv_ctr(d, "reset_active") || fz_drv_ctr(d, "reset_queued"));
		return;
	}
	nd = vnic_drv_netdev(d->drv);
	FZ_CHECK(nd->num_tx_queues >= 1 && nd->num_tx_queues <= d->cfg.tx_queues);
	FZ_CHECK(nd->num_rx_queues >= 1 && nd->num_rx_queues <= d->cfg.rx_queues);
	FZ_CHECK(nd->mtu >= VNIC_DRV_MIN_MTU && nd->mtu <= d->cfg.mtu);
	if (nd->features & (VNIC_NETIF_F_TSO4 | VNIC_NETIF_F_TSO6))
		FZ_CHECK(d->cfg.tso && (nd->features & VNIC_NETIF_F_CSUM));
}

static uint64_t align128(uint64_t v)
{
	return (v + 127) & ~(uint64_t)127;
}

/*
 * The long-term buffers are carved at the device's word (the rx buffer
 * size): never more than the driver's own limits need, a tx and a TSO pool
 * per tx queue and rx buffers no longer than the longest frame vnic handles
 * per rx queue, whatever the device asks for.
 */
static void check_maps(const struct fz_drv *d)
{
	const struct vnic_drv_config *c = &d->cfg;
	uint64_t tx = c->tx_entries * align128(c->mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN) +
		      VNIC_TSO_BUFS * align128(VNIC_TSO_BUF_SIZE + VNIC_MAX_HDRS);
	uint64_t rx = c->rx_entries * align128(VNIC_PKT_MAX_LEN);

	FZ_CHECK(d->fdev.map_bytes <= c->tx_queues * tx + c->rx_queues * rx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t b0 = size > 0 ? data[0] : 0, b1 = size > 1 ? data[1] : 0;
	unsigned int v = b0 & 1;
	struct fz_drv *d;
	int rc;

	if (!ready[v])
		setup(v);
	d = &envs[v];
	offer(&d->fdev, b0, b1);
	fz_fdev_script(&d->fdev, size > 2 ? data + 2 : NULL, size > 2 ? size - 2 : 0);

	rc = fz_drv_open(d);
	check_open(d, rc);
	check_maps(d);
	if (!rc) {
		rc = fz_drv_close(d);
		FZ_CHECK(rc == 0);
		FZ_CHECK(!vnic_drv_is_open(d->drv));
		check_open(d, fz_drv_open(d));
	}
	fz_drv_snap(d);
	/* the counters read whatever state it is in */
	FZ_CHECK(fz_drv_ctr(d, "state") <= 16); /* DRV_RESET_WAIT, the last */
	fz_drv_reset(d, true);
	return 0;
}
