/* SPDX-License-Identifier: MIT */
/*
 * The control poller: the server side of the CRQ (docs/PROTOCOL.md sections 2
 * and 6). A NAPI whose interrupt is the SERVER CRQ
 * interrupt; each poll answers up to a budget of messages, in order.
 *
 * Every command is answered (UNKNOWNCOMMAND, INVALIDSTATE or its own rc),
 * except responses and server-to-client notifications sent to us, which are
 * counted and ignored so that two confused partners cannot ping-pong. Every
 * field and every buffer the driver names is checked before use; a buffer is
 * read once, through the hv, into our own memory.
 *
 * Responses go through a small outbox: when the driver's CRQ is full (BUSY)
 * the poller stops reading commands and looks again after DEV_RETRY_NS, so
 * no response is lost and their order is kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device/dev_int.h"

/* --- interrupt ------------------------------------------------------------ */

void vnic_dev_ctl_irq(void *ctx)
{
	vnic_napi_schedule(&((struct vnic_dev *)ctx)->ctl_napi);
}

static void ctl_irq_enable(void *ctx)
{
	vnic_hv_crq_irq_enable(((struct vnic_dev *)ctx)->hv, VNIC_HV_SERVER, true);
}

static void ctl_irq_disable(void *ctx)
{
	vnic_hv_crq_irq_enable(((struct vnic_dev *)ctx)->hv, VNIC_HV_SERVER, false);
}

/* Owner's thread (napi complete). Blocked: the retry timer runs us, not the ring. */
static bool ctl_irq_pending(void *ctx)
{
	struct vnic_dev *dev = ctx;

	return (!dev->ctl_blocked && vnic_hv_crq_pending(dev->hv, VNIC_HV_SERVER)) ||
	       atomic_load_explicit(&dev->live.mask_pending, memory_order_acquire);
}

const struct vnic_irq_ops vnic_dev_ctl_irq_ops = {
	.enable = ctl_irq_enable,
	.disable = ctl_irq_disable,
	.pending = ctl_irq_pending,
};

/* --- outbox --------------------------------------------------------------- */

static void ctl_queue(struct vnic_dev *dev, const struct vnic_crq *msg)
{
	/* A command makes at most two messages and is read only with the outbox empty. */
	if (dev->ob_tail - dev->ob_head >= CTL_OUTBOX) {
		vnic_ctr_inc(&dev->ctl_st.rsp_lost);
		return;
	}
	dev->outbox[dev->ob_tail++ % CTL_OUTBOX] = *msg;
}

/* true when everything queued has left (or was refused for good). */
static bool ctl_flush(struct vnic_dev *dev)
{
	while (dev->ob_head != dev->ob_tail) {
		long rc = vnic_hv_send_crq(dev->hv, VNIC_HV_SERVER,
					   &dev->outbox[dev->ob_head % CTL_OUTBOX]);

		if (rc == VNIC_H_BUSY) {
			vnic_ctr_inc(&dev->ctl_st.rsp_busy);
			return false;
		}
		/* CLOSED: the driver is gone; its next INIT starts over. */
		if (rc != VNIC_H_SUCCESS)
			vnic_ctr_inc(&dev->ctl_st.rsp_lost);
		dev->ob_head++;
	}
	return true;
}

static void respond(struct vnic_dev *dev, struct vnic_crq *rsp, uint8_t rc)
{
	rsp->first = VNIC_CRQ_CMD_RSP;
	rsp->cmd |= VNIC_CMD_RSP;
	rsp->rc = rc;
	memset(rsp->rc_detail, 0, sizeof(rsp->rc_detail));
	vnic_ctr_inc(&dev->ctl_st.rc[rc]);
	ctl_queue(dev, rsp);
}

/* --- negotiated values ------------------------------------------------------ */

static uint32_t rx_buf_size_of(const struct vnic_dev *dev)
{
	uint32_t need = dev->req_mtu + VNIC_VLAN_HLEN;

	need = (need + VNIC_DEV_RX_BUF_ALIGN - 1) & ~(uint32_t)(VNIC_DEV_RX_BUF_ALIGN - 1);
	return dev->cfg.rx_buf_size > need ? dev->cfg.rx_buf_size : need;
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void requests_default(struct vnic_dev *dev)
{
	const struct vnic_dev_config *cfg = &dev->cfg;

	/*
	 * ibmvnic asks for the maxima by default; so does a driver that asks
	 * nothing. Counters report these: relaxed stores (core.h, Counters).
	 */
	vnic_ctr_set32(&dev->req_tx_queues, cfg->max_tx_queues);
	vnic_ctr_set32(&dev->req_rx_queues, cfg->max_rx_queues);
	vnic_ctr_set32(&dev->req_tx_entries, cfg->max_tx_entries);
	vnic_ctr_set32(&dev->req_rx_add_entries, cfg->max_rx_add_entries);
	vnic_ctr_set32(&dev->req_mtu,
		       clamp_u32(VNIC_DEV_DEFAULT_MTU, cfg->min_mtu, cfg->max_mtu) + VNIC_ETH_HLEN);
	vnic_ctr_set32(&dev->req_ind_descs, cfg->max_ind_descs);
	vnic_ctr_set32(&dev->rx_buf_size, rx_buf_size_of(dev));
}

static bool cap_query(const struct vnic_dev *dev, uint16_t cap, uint64_t *v)
{
	const struct vnic_dev_config *cfg = &dev->cfg;

	switch (cap) {
	case VNIC_CAP_MIN_TX_QUEUES:
	case VNIC_CAP_MIN_RX_QUEUES:
		*v = 1;
		return true;
	case VNIC_CAP_MAX_TX_QUEUES:
		*v = cfg->max_tx_queues;
		return true;
	case VNIC_CAP_MAX_RX_QUEUES:
		*v = cfg->max_rx_queues;
		return true;
	case VNIC_CAP_REQ_TX_QUEUES:
		*v = dev->req_tx_queues;
		return true;
	case VNIC_CAP_REQ_RX_QUEUES:
		*v = dev->req_rx_queues;
		return true;
	case VNIC_CAP_MIN_TX_ENTRIES:
		*v = cfg->min_tx_entries;
		return true;
	case VNIC_CAP_MIN_RX_ADD_ENTRIES:
		*v = cfg->min_rx_add_entries;
		return true;
	case VNIC_CAP_MAX_TX_ENTRIES:
		*v = cfg->max_tx_entries;
		return true;
	case VNIC_CAP_MAX_RX_ADD_ENTRIES:
		*v = cfg->max_rx_add_entries;
		return true;
	case VNIC_CAP_REQ_TX_ENTRIES:
		*v = dev->req_tx_entries;
		return true;
	case VNIC_CAP_REQ_RX_ADD_ENTRIES:
		*v = dev->req_rx_add_entries;
		return true;
	case VNIC_CAP_TCP_IP_OFFLOAD:
		*v = cfg->csum_ipv4 || cfg->csum_ipv6 || cfg->lso_ipv4 || cfg->lso_ipv6;
		return true;
	case VNIC_CAP_MIN_MTU:
		*v = cfg->min_mtu + VNIC_ETH_HLEN;
		return true;
	case VNIC_CAP_MAX_MTU:
		*v = cfg->max_mtu + VNIC_ETH_HLEN;
		return true;
	case VNIC_CAP_REQ_MTU:
		*v = dev->req_mtu;
		return true;
	case VNIC_CAP_TX_RX_DESC_REQ:
		*v = dev->desc_req;
		return true;
	case VNIC_CAP_MAX_IND_DESCS:
		*v = cfg->max_ind_descs;
		return true;
	case VNIC_CAP_REQ_IND_DESCS:
		*v = dev->req_ind_descs;
		return true;
	case VNIC_CAP_RX_BUF_SIZE:
		*v = rx_buf_size_of(dev);
		return true;
	default:
		return false;
	}
}

/* The range a requestable capability accepts and where the granted value goes. */
static uint32_t *cap_request_bounds(struct vnic_dev *dev, uint16_t cap, uint32_t *min,
				    uint32_t *max)
{
	const struct vnic_dev_config *cfg = &dev->cfg;

	switch (cap) {
	case VNIC_CAP_REQ_TX_QUEUES:
		*min = 1;
		*max = cfg->max_tx_queues;
		return &dev->req_tx_queues;
	case VNIC_CAP_REQ_RX_QUEUES:
		*min = 1;
		*max = cfg->max_rx_queues;
		return &dev->req_rx_queues;
	case VNIC_CAP_REQ_TX_ENTRIES:
		*min = cfg->min_tx_entries;
		*max = cfg->max_tx_entries;
		return &dev->req_tx_entries;
	case VNIC_CAP_REQ_RX_ADD_ENTRIES:
		*min = cfg->min_rx_add_entries;
		*max = cfg->max_rx_add_entries;
		return &dev->req_rx_add_entries;
	case VNIC_CAP_REQ_MTU:
		*min = cfg->min_mtu + VNIC_ETH_HLEN;
		*max = cfg->max_mtu + VNIC_ETH_HLEN;
		return &dev->req_mtu;
	case VNIC_CAP_REQ_IND_DESCS:
		*min = 1;
		*max = cfg->max_ind_descs;
		return &dev->req_ind_descs;
	default:
		return NULL;
	}
}

/* --- commands ------------------------------------------------------------------ */

static bool negotiated(const struct vnic_dev *dev)
{
	return dev->state == DEV_NEGOTIATING || dev->state == DEV_LOGGED_IN;
}

static uint8_t cmd_version(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	uint16_t v = vnic_be16_get(&rsp->version.version);

	if (dev->state != DEV_INITED && dev->state != DEV_NEGOTIATING)
		return VNIC_RC_INVALIDSTATE;
	/* The response carries our version; the driver decides if it can speak it. */
	vnic_be16_put(&rsp->version.version, VNIC_PROTO_VERSION);
	if (!v)
		return VNIC_RC_PARAMETER;
	vnic_ctr_store(&dev->state, DEV_NEGOTIATING);
	return VNIC_RC_SUCCESS;
}

static uint8_t cmd_query_cap(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	uint64_t v = 0;
	uint8_t rc = VNIC_RC_SUCCESS;

	if (!negotiated(dev))
		return VNIC_RC_INVALIDSTATE;
	if (!cap_query(dev, vnic_be16_get(&rsp->cap.capability), &v))
		rc = VNIC_RC_PARAMETER;
	vnic_be64_put(&rsp->cap.number, v);
	return rc;
}

static uint8_t cmd_request_cap(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	uint64_t v = vnic_be64_get(&rsp->cap.number);
	uint32_t min, max, *field;

	/* Queue counts and sizes are fixed once the queues exist. */
	if (dev->state != DEV_NEGOTIATING)
		return VNIC_RC_INVALIDSTATE;
	field = cap_request_bounds(dev, vnic_be16_get(&rsp->cap.capability), &min, &max);
	if (!field)
		return VNIC_RC_PARAMETER;
	if (v < min)
		return VNIC_RC_PARAMETER;
	if (v > max) {
		/* The driver adopts the number, asks again (docs/PROTOCOL.md section 2). */
		vnic_be64_put(&rsp->cap.number, max);
		return VNIC_RC_PARTIALSUCCESS;
	}
	vnic_ctr_set32(field, (uint32_t)v);
	if (field == &dev->req_mtu)
		vnic_ctr_set32(&dev->rx_buf_size, rx_buf_size_of(dev));
	return VNIC_RC_SUCCESS;
}

enum {
	MAX_IP4_HDR = 60,
	MAX_TCP_HDR = 60,
	UDP_HDR = 8,
	/* what is left of VNIC_MAX_HDRS (src/net's limit) after L2 with a tag and TCP */
	MAX_IP6_HDR = VNIC_MAX_HDRS - VNIC_ETH_HLEN - VNIC_VLAN_HLEN - MAX_TCP_HDR,
};

/*
 * Large receive (docs/PROTOCOL.md section 8.5): offered only on a wire that
 * can hand us a superframe (the cable with cable-tso, whose other end then
 * sends them; the AF_PACKET backing with vnet headers, whose kernel does),
 * as large as RX_MAX_CHUNKS posted buffers hold. 0: not offered.
 */
static uint32_t large_rx_offer(const struct vnic_dev *dev)
{
	const struct vnic_wire *w = dev->wire;
	uint32_t n = dev->req_rx_add_entries / 2;
	uint64_t bufs;

	/* half the ring at most: the driver refills a ring half empty (ibmvnic rr 1/7) */
	bufs = (uint64_t)(n < RX_MAX_CHUNKS ? n : RX_MAX_CHUNKS) * dev->rx_buf_size;
	if (!w->rx_gso_max_size || !w->ops->rx_gso_take || bufs <= dev->req_mtu + VNIC_VLAN_HLEN)
		return 0;
	return bufs < w->rx_gso_max_size ? (uint32_t)bufs : w->rx_gso_max_size;
}

static void large_rx_take(struct vnic_dev *dev, uint32_t max)
{
	dev->large_rx_max = max;
	if (dev->wire->ops->rx_gso_take)
		dev->wire->ops->rx_gso_take(dev->wire, max);
}

static void offload_offer(const struct vnic_dev *dev, struct vnic_ip_offload *b)
{
	const struct vnic_dev_config *cfg = &dev->cfg;
	uint32_t mss = cfg->min_lso_mss;

	memset(b, 0, sizeof(*b));
	vnic_be32_put(&b->len, sizeof(*b));
	vnic_be32_put(&b->version, VNIC_IP_OFFLOAD_VERSION);
	/* The IPv4 header checksum stays the driver's (every stack computes it). */
	b->tcp_ipv4_chksum = cfg->csum_ipv4;
	b->udp_ipv4_chksum = cfg->csum_ipv4;
	b->tcp_ipv6_chksum = cfg->csum_ipv6;
	b->udp_ipv6_chksum = cfg->csum_ipv6;
	b->large_tx_ipv4 = cfg->lso_ipv4;
	b->large_tx_ipv6 = cfg->lso_ipv6;
	b->large_rx_ipv4 = large_rx_offer(dev) != 0;
	b->large_rx_ipv6 = b->large_rx_ipv4;
	vnic_be32_put(&b->max_large_rx_size, large_rx_offer(dev));
	/* Frames with bad checksums are always delivered, flags clear. */
	b->bad_packet_rx = 1;
	vnic_be16_put(&b->max_ipv4_hdr_size, MAX_IP4_HDR);
	vnic_be16_put(&b->max_ipv6_hdr_size, MAX_IP6_HDR);
	vnic_be16_put(&b->max_tcp_hdr_size, MAX_TCP_HDR);
	vnic_be16_put(&b->max_udp_hdr_size, UDP_HDR);
	vnic_be32_put(&b->max_large_tx_size, VNIC_TSO_BUF_SIZE);
	vnic_be16_put(&b->min_large_tx_mss, (uint16_t)mss);
	vnic_be16_put(&b->max_large_tx_segs, (uint16_t)((VNIC_GSO_MAX_PAYLOAD + mss - 1) / mss));
	/* Hop-by-hop, routing and destination options: what src/net segments. */
	b->ipv6_ext_hdr = VNIC_IPV6_EXT_LIMITED;
	/* Checksums are computed from scratch: whatever the field holds is ignored. */
	b->tcp_pseudosum_req = 0;
}

/* Where the ip offload buffer is: 0 or an rc. */
static uint8_t offload_buf(const struct vnic_crq *msg, uint64_t *ioba)
{
	if (vnic_be16_get(&msg->ip_offload.len) < sizeof(struct vnic_ip_offload))
		return VNIC_RC_INVALIDLENGTH;
	*ioba = vnic_be64_get(&msg->ip_offload.ioba);
	if (*ioba >= VNIC_IOBA_LIMIT)
		return VNIC_RC_INVALIDIOBA;
	return VNIC_RC_SUCCESS;
}

static uint8_t cmd_query_offload(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	struct vnic_ip_offload b;
	uint64_t ioba;
	uint8_t rc;

	if (!negotiated(dev))
		return VNIC_RC_INVALIDSTATE;
	rc = offload_buf(rsp, &ioba);
	if (rc)
		return rc;
	offload_offer(dev, &b);
	if (vnic_hv_dma_write(dev->hv, ioba, &b, sizeof(b)))
		return VNIC_RC_INVALIDIOBA;
	return VNIC_RC_SUCCESS;
}

/* Field by field: the counters report the offloads in force from any thread. */
static void offloads_set(struct dev_offloads *ol, const struct dev_offloads *v)
{
	vnic_ctr_store(&ol->tcp4, v->tcp4);
	vnic_ctr_store(&ol->udp4, v->udp4);
	vnic_ctr_store(&ol->tcp6, v->tcp6);
	vnic_ctr_store(&ol->udp6, v->udp6);
	vnic_ctr_store(&ol->lso4, v->lso4);
	vnic_ctr_store(&ol->lso6, v->lso6);
	vnic_ctr_store(&ol->bad_packet_rx, v->bad_packet_rx);
	vnic_ctr_store(&ol->large_rx4, v->large_rx4);
	vnic_ctr_store(&ol->large_rx6, v->large_rx6);
}

/* A control byte: 0 or 1, and 1 only if offered. */
static bool ctl_bit_ok(uint8_t want, uint8_t offered)
{
	return want == 0 || (want == 1 && offered == 1);
}

static uint8_t cmd_control_offload(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	struct vnic_ip_offload want, offer;
	struct dev_offloads on;
	uint64_t ioba;
	uint8_t rc;

	/* Offloads change only while no packet can be in flight. */
	if (!negotiated(dev) || dev->link_up)
		return VNIC_RC_INVALIDSTATE;
	rc = offload_buf(rsp, &ioba);
	if (rc)
		return rc;
	if (vnic_hv_dma_read(dev->hv, ioba, &want, sizeof(want)))
		return VNIC_RC_INVALIDIOBA;
	if (vnic_be32_get(&want.len) != sizeof(want) ||
	    vnic_be32_get(&want.version) != VNIC_IP_OFFLOAD_VERSION)
		return VNIC_RC_PARAMETER;
	offload_offer(dev, &offer);
	/* The driver may not turn on what was not offered (the limits are ignored). */
	if (!ctl_bit_ok(want.ipv4_chksum, offer.ipv4_chksum) ||
	    !ctl_bit_ok(want.ipv6_chksum, offer.ipv6_chksum) ||
	    !ctl_bit_ok(want.tcp_ipv4_chksum, offer.tcp_ipv4_chksum) ||
	    !ctl_bit_ok(want.tcp_ipv6_chksum, offer.tcp_ipv6_chksum) ||
	    !ctl_bit_ok(want.udp_ipv4_chksum, offer.udp_ipv4_chksum) ||
	    !ctl_bit_ok(want.udp_ipv6_chksum, offer.udp_ipv6_chksum) ||
	    !ctl_bit_ok(want.large_tx_ipv4, offer.large_tx_ipv4) ||
	    !ctl_bit_ok(want.large_tx_ipv6, offer.large_tx_ipv6) ||
	    !ctl_bit_ok(want.large_rx_ipv4, offer.large_rx_ipv4) ||
	    !ctl_bit_ok(want.large_rx_ipv6, offer.large_rx_ipv6) ||
	    !ctl_bit_ok(want.bad_packet_rx, offer.bad_packet_rx))
		return VNIC_RC_PARAMETER;
	on = (struct dev_offloads){
		.tcp4 = want.tcp_ipv4_chksum,
		.udp4 = want.udp_ipv4_chksum,
		.tcp6 = want.tcp_ipv6_chksum,
		.udp6 = want.udp_ipv6_chksum,
		.lso4 = want.large_tx_ipv4,
		.lso6 = want.large_tx_ipv6,
		.bad_packet_rx = want.bad_packet_rx,
		.large_rx4 = want.large_rx_ipv4,
		.large_rx6 = want.large_rx_ipv6,
	};
	offloads_set(&dev->ol, &on);
	/* from now on the cable's other end may send us superframes */
	large_rx_take(dev, on.large_rx4 || on.large_rx6 ? large_rx_offer(dev) : 0);
	return VNIC_RC_SUCCESS;
}

static uint8_t cmd_request_map(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	uint8_t id = rsp->map.map_id;
	uint32_t len = vnic_be32_get(&rsp->map.len);
	uint32_t ioba = vnic_be32_get(&rsp->map.ioba);

	if (!negotiated(dev))
		return VNIC_RC_INVALIDSTATE;
	if (!id)
		return VNIC_RC_PARAMETER;
	if (dev->ltb[id].len) {
		/* The same map again (a retry, a duplicate): done already. */
		if (dev->ltb[id].ioba != ioba || dev->ltb[id].len != len)
			return VNIC_RC_PARAMETER;
		vnic_ctr_inc(&dev->ctl_st.dup_maps);
		return VNIC_RC_SUCCESS;
	}
	if (!len || len > VNIC_ONE_LTB_SIZE)
		return VNIC_RC_INVALIDLENGTH;
	/* The whole range must be the driver's memory now; each use translates again. */
	if (!vnic_hv_dma_translate(dev->hv, ioba, len))
		return VNIC_RC_INVALIDIOBA;
	dev->ltb[id].ioba = ioba;
	dev->ltb[id].len = len;
	return VNIC_RC_SUCCESS;
}

static uint8_t cmd_request_unmap(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	uint8_t id = rsp->map.map_id;

	if (!negotiated(dev))
		return VNIC_RC_INVALIDSTATE;
	if (!id || !dev->ltb[id].len)
		return VNIC_RC_PARAMETER;
	/*
	 * Descriptors already taken are done. Rx buffers already posted were
	 * checked when taken; at use only the hv's translation is checked, and
	 * one that fails is completed with an error (rx.c).
	 */
	dev->ltb[id].len = 0;
	dev->ltb[id].ioba = 0;
	return VNIC_RC_SUCCESS;
}

/* --- login ------------------------------------------------------------------- */

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * A ring holds at least the negotiated entries and one whole indirect batch
 * (else a driver batching req_ind_descs entries into a smaller ring would see
 * BUSY forever), never fewer than VNIC_SAFE_IND_DESCS (a packet with all its
 * header descriptors fits), rounded up to the power of two the hv wants.
 */
static uint32_t ring_size(const struct vnic_dev *dev, uint32_t entries)
{
	uint32_t n = entries;

	if (n < dev->req_ind_descs)
		n = dev->req_ind_descs;
	if (n < VNIC_SAFE_IND_DESCS)
		n = VNIC_SAFE_IND_DESCS;
	return pow2_at_least(n);
}

/* Tx descriptors still in a ring the device is about to free: counted, never sent. */
static uint64_t unread_descs(const struct vnic_subcrq *q)
{
	const union vnic_subcrq_entry *e;
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < q->size && (e = dev_ring_ahead(q, i)); i++)
		if (e->generic.type == VNIC_TX_DESC)
			n++;
	return n;
}

static void queues_free(struct vnic_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->cfg.max_tx_queues; i++) {
		struct dev_txq *txq = &dev->txq[i];
		struct vnic_subcrq *q = txq->subm;

		if (!q)
			continue;
		vnic_hv_subcrq_irq_disable(q);
		dev_ring_set(&txq->subm, NULL);
		vnic_ctr_add(&txq->st.reset_unread, unread_descs(q));
		vnic_hv_free_subcrq(dev->hv, q);
		vnic_dev_tx_forget(txq);
	}
	for (i = 0; i < dev->cfg.max_rx_queues; i++) {
		struct dev_rxq *rxq = &dev->rxq[i];

		if (rxq->add) {
			vnic_hv_subcrq_irq_disable(rxq->add);
			vnic_hv_free_subcrq(dev->hv, rxq->add);
			rxq->add = NULL;
		}
		free(rxq->fifo);
		rxq->fifo = NULL;
		vnic_ctr_set32(&rxq->head, 0);
		vnic_ctr_set32(&rxq->tail, 0);
		rxq->fifo_mask = 0;
		rxq->unsent_pos = rxq->unsent_n = 0;
	}
	vnic_ctr_store(&dev->ntxq, 0);
	vnic_ctr_store(&dev->nrxq, 0);
}

/*
 * Registers our rings: a tx submission ring per tx completion ring the
 * driver named, an rx buffer add ring per rx completion ring.
 */
static int queues_alloc(struct vnic_dev *dev, const uint32_t *txcomp, const uint32_t *rxcomp)
{
	uint32_t tx_size = ring_size(dev, dev->req_tx_entries);
	uint32_t rx_size = ring_size(dev, dev->req_rx_add_entries);
	unsigned int i;
	int err;

	for (i = 0; i < dev->req_tx_queues; i++) {
		struct dev_txq *txq = &dev->txq[i];
		struct vnic_subcrq *q;

		err = vnic_hv_reg_subcrq(dev->hv, VNIC_HV_SERVER, tx_size, &q);
		if (err)
			goto err_free;
		vnic_dev_tx_forget(txq);
		txq->comp_handle = txcomp[i];
		vnic_hv_subcrq_set_irq(q, vnic_dev_tx_irq, txq);
		dev_ring_set(&txq->subm, q);
	}
	for (i = 0; i < dev->req_rx_queues; i++) {
		struct dev_rxq *rxq = &dev->rxq[i];

		/* fifo as big as the ring: every entry the ring can hold fits */
		rxq->fifo = calloc(rx_size, sizeof(*rxq->fifo));
		if (!rxq->fifo) {
			err = -ENOMEM;
			goto err_free;
		}
		rxq->fifo_mask = rx_size - 1;
		vnic_ctr_set32(&rxq->head, 0);
		vnic_ctr_set32(&rxq->tail, 0);
		rxq->unsent_pos = rxq->unsent_n = 0;
		err = vnic_hv_reg_subcrq(dev->hv, VNIC_HV_SERVER, rx_size, &rxq->add);
		if (err)
			goto err_free;
		/* Buffers are taken when frames need them, in the rx poll: no irq. */
		rxq->comp_handle = rxcomp[i];
	}
	vnic_ctr_store(&dev->ntxq, dev->req_tx_queues);
	vnic_ctr_store(&dev->nrxq, dev->req_rx_queues);
	if (dev->ntxq > dev->txq_hw)
		vnic_ctr_store(&dev->txq_hw, dev->ntxq);
	if (dev->nrxq > dev->rxq_hw)
		vnic_ctr_store(&dev->rxq_hw, dev->nrxq);
	return 0;

err_free:
	queues_free(dev);
	return err;
}

static bool array_ok(uint32_t off, uint32_t n, uint32_t len)
{
	return off >= sizeof(struct vnic_login_buf) && (uint64_t)off + (uint64_t)n * 4 <= len;
}

/* Reads the handle arrays; all must be non-zero and distinct. */
static bool handles_read(const uint8_t *buf, uint32_t off, uint32_t n, uint32_t *out,
			 const uint32_t *seen, unsigned int nseen)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		uint32_t h = vnic_be32_get((const struct vnic_be32 *)(buf + off + 4 * i));

		if (!h)
			return false;
		for (j = 0; j < nseen; j++)
			if (seen[j] == h)
				return false;
		for (j = 0; j < i; j++)
			if (out[j] == h)
				return false;
		out[i] = h;
	}
	return true;
}

/*
 * The login response for the queues in force, DMA-written at rsp_ioba
 * (translated when the login was read, but the driver may have unmapped it
 * since). 0 or -EFAULT.
 */
static int login_rsp_write(struct vnic_dev *dev, uint64_t rsp_ioba, uint32_t need)
{
	uint8_t out[VNIC_LOGIN_RSP_BUF_MAX];
	struct vnic_login_rsp_buf *rb = (void *)out;
	uint32_t ntx = dev->ntxq, nrx = dev->nrxq, i;

	memset(out, 0, sizeof(out));
	vnic_be32_put(&rb->len, need);
	vnic_be32_put(&rb->version, VNIC_LOGIN_VERSION);
	vnic_be32_put(&rb->num_txsubm_subcrqs, ntx);
	vnic_be32_put(&rb->off_txsubm_subcrqs, sizeof(*rb));
	vnic_be32_put(&rb->num_rxadd_subcrqs, nrx);
	vnic_be32_put(&rb->off_rxadd_subcrqs, sizeof(*rb) + 4 * ntx);
	vnic_be32_put(&rb->rx_buf_size, dev->rx_buf_size);
	for (i = 0; i < ntx; i++)
		vnic_be32_put((struct vnic_be32 *)(out + sizeof(*rb) + 4 * i),
			      dev->txq[i].subm->handle);
	for (i = 0; i < nrx; i++)
		vnic_be32_put((struct vnic_be32 *)(out + sizeof(*rb) + 4 * (ntx + i)),
			      dev->rxq[i].add->handle);
	return vnic_hv_dma_write(dev->hv, rsp_ioba, out, need);
}

/*
 * The same login again while logged in (a driver's resend after a timeout,
 * a duplicate): answered as the first was, but its response is not written
 * again. The first one's response is in the driver's buffer already (we are
 * logged in only once it was written), and the driver may be reading it now
 * for the first answer: a second write, even of the same bytes, would race
 * with that read. A new login step needs a new session: the driver's INIT
 * takes the device out of LOGGED_IN (handle_init), and only then is its
 * response buffer ours to write again. A login naming other rings is not
 * a repeat, and is refused; so is one naming another response buffer,
 * which would wait for a response that is never written there.
 */
static uint8_t login_again(struct vnic_dev *dev, const uint32_t *txcomp, uint32_t ntx,
			   const uint32_t *rxcomp, uint32_t nrx, uint64_t rsp_ioba,
			   uint32_t rsp_len)
{
	if (memcmp(txcomp, dev->login_txcomp, ntx * sizeof(*txcomp)) ||
	    memcmp(rxcomp, dev->login_rxcomp, nrx * sizeof(*rxcomp)) ||
	    rsp_ioba != dev->login_rsp_ioba || rsp_len != dev->login_rsp_len) {
		vnic_ctr_inc(&dev->ctl_st.login_conflicts);
		return VNIC_RC_INVALIDSTATE;
	}
	vnic_ctr_inc(&dev->ctl_st.dup_logins);
	return VNIC_RC_SUCCESS;
}

static uint8_t cmd_login(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	uint8_t buf[VNIC_LOGIN_BUF_MAX];
	uint32_t txcomp[VNIC_MAX_QUEUES], rxcomp[VNIC_MAX_QUEUES];
	const struct vnic_login_buf *lb = (const void *)buf;
	uint32_t len = vnic_be16_get(&rsp->login.len), blen, ntx, nrx, need, rsp_len, i;
	uint64_t ioba = vnic_be64_get(&rsp->login.ioba), rsp_ioba;
	bool again = dev->state == DEV_LOGGED_IN;

	/* Logged in already: only the same login again, link down (a retry, a duplicate). */
	if (dev->state != DEV_NEGOTIATING && !(again && !dev->link_up))
		return VNIC_RC_INVALIDSTATE;
	if (len < sizeof(*lb) || len > sizeof(buf))
		return VNIC_RC_INVALIDLENGTH;
	if (ioba >= VNIC_IOBA_LIMIT || vnic_hv_dma_read(dev->hv, ioba, buf, len))
		return VNIC_RC_INVALIDIOBA;

	blen = vnic_be32_get(&lb->len);
	if (blen < sizeof(*lb) || blen > len)
		return VNIC_RC_INVALIDLENGTH;
	if (vnic_be32_get(&lb->version) != VNIC_LOGIN_VERSION)
		return VNIC_RC_PARAMETER;
	ntx = vnic_be32_get(&lb->num_txcomp_subcrqs);
	nrx = vnic_be32_get(&lb->num_rxcomp_subcrqs);
	if (ntx != dev->req_tx_queues || nrx != dev->req_rx_queues)
		return again ? VNIC_RC_INVALIDSTATE : VNIC_RC_PARAMETER;
	if (!array_ok(vnic_be32_get(&lb->off_txcomp_subcrqs), ntx, blen) ||
	    !array_ok(vnic_be32_get(&lb->off_rxcomp_subcrqs), nrx, blen))
		return VNIC_RC_PARAMETER;
	if (!handles_read(buf, vnic_be32_get(&lb->off_txcomp_subcrqs), ntx, txcomp, NULL, 0) ||
	    !handles_read(buf, vnic_be32_get(&lb->off_rxcomp_subcrqs), nrx, rxcomp, txcomp, ntx))
		return VNIC_RC_PARAMETER;

	need = sizeof(struct vnic_login_rsp_buf) + 4 * (ntx + nrx);
	rsp_ioba = vnic_be64_get(&lb->login_rsp_ioba);
	rsp_len = vnic_be32_get(&lb->login_rsp_len);
	if (rsp_len < need)
		return VNIC_RC_INVALIDLENGTH;
	if (rsp_ioba >= VNIC_IOBA_LIMIT || !vnic_hv_dma_translate(dev->hv, rsp_ioba, need))
		return VNIC_RC_INVALIDIOBA;
	if (again)
		return login_again(dev, txcomp, ntx, rxcomp, nrx, rsp_ioba, rsp_len);

	vnic_ctr_set32(&dev->rx_buf_size, rx_buf_size_of(dev));
	if (queues_alloc(dev, txcomp, rxcomp))
		return VNIC_RC_NOMEMORY;
	memcpy(dev->login_txcomp, txcomp, ntx * sizeof(*txcomp));
	memcpy(dev->login_rxcomp, rxcomp, nrx * sizeof(*rxcomp));
	dev->login_rsp_ioba = rsp_ioba;
	dev->login_rsp_len = rsp_len;
	if (login_rsp_write(dev, rsp_ioba, need)) {
		queues_free(dev);
		return VNIC_RC_INVALIDIOBA;
	}
	vnic_ctr_store(&dev->state, DEV_LOGGED_IN);
	/* The driver sends only after LINK_STATE(up), but an early packet is aborted, not lost. */
	for (i = 0; i < ntx; i++)
		vnic_hv_subcrq_irq_enable(dev->txq[i].subm);
	return VNIC_RC_SUCCESS;
}

/* --- link state ----------------------------------------------------------------- */

static void link_indicate(struct vnic_dev *dev)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LINK_STATE_INDICATION;
	/* The wire has no carrier of its own: physical is down only in a link-flap fault. */
	m.link_ind.phys_link_state = dev->phys_up ? VNIC_LINK_UP : VNIC_LINK_DOWN;
	m.link_ind.logical_link_state = dev->link_up ? VNIC_LINK_UP : VNIC_LINK_DOWN;
	ctl_queue(dev, &m);
}

/*
 * The response to LOGICAL_LINK_STATE(down) leaves only when every tx
 * descriptor the driver had submitted is completed (docs/PROTOCOL.md section 2, "Close"),
 * so the driver may reclaim its pools when it sees it. Until then the
 * control poller reads no further command.
 */
static bool finish_down(struct vnic_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->ntxq; i++)
		if (!vnic_dev_tx_drain(&dev->txq[i]))
			return false;
	dev->down_pending = false;
	respond(dev, &dev->down_rsp, VNIC_RC_SUCCESS);
	return true;
}

/* Returns an rc, or 0xff when the response is deferred (down). */
static uint8_t cmd_link_state(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	unsigned int i;

	if (dev->state != DEV_LOGGED_IN)
		return VNIC_RC_INVALIDSTATE;
	switch (rsp->link_state.state) {
	case VNIC_LINK_UP:
		vnic_ctr_store(&dev->link_up, true);
		return VNIC_RC_SUCCESS;
	case VNIC_LINK_DOWN:
		vnic_ctr_store(&dev->link_up, false);
		for (i = 0; i < dev->nrxq; i++)
			vnic_dev_rx_forget(dev, &dev->rxq[i]);
		dev->down_rsp = *rsp;
		dev->down_pending = true;
		return 0xff;
	case VNIC_LINK_QUERY:
		/* ours: 0xFF stays, the state goes @3 (and an indication follows) */
		rsp->link_state.query_state = dev->link_up ? VNIC_LINK_UP : VNIC_LINK_DOWN;
		return VNIC_RC_SUCCESS;
	default:
		return VNIC_RC_PARAMETER;
	}
}

static uint8_t cmd_change_mac(struct vnic_dev *dev, struct vnic_crq *rsp)
{
	static const uint8_t zero[6];

	if (!negotiated(dev))
		return VNIC_RC_INVALIDSTATE;
	/* A station address: not multicast, not zero. Granted as asked. */
	if ((rsp->mac.mac[0] & 1) || !memcmp(rsp->mac.mac, zero, sizeof(zero)))
		return VNIC_RC_PARAMETER;
	return VNIC_RC_SUCCESS;
}

/* --- reset -------------------------------------------------------------------- */

void vnic_dev_reset(struct vnic_dev *dev)
{
	queues_free(dev);
	vnic_ctr_store(&dev->state, DEV_CLOSED);
	vnic_ctr_store(&dev->link_up, false);
	vnic_ctr_store(&dev->halted, false);
	dev->down_pending = false;
	memset(dev->ltb, 0, sizeof(dev->ltb));
	offloads_set(&dev->ol, &(const struct dev_offloads){0});
	large_rx_take(dev, 0);
	requests_default(dev);
	vnic_ctr_inc(&dev->ctl_st.resets);
}

static void outbox_clear(struct vnic_dev *dev)
{
	dev->ob_head = dev->ob_tail = 0;
}

void vnic_dev_ctl_send(struct vnic_dev *dev, const struct vnic_crq *msg)
{
	ctl_queue(dev, msg);
	vnic_napi_schedule(&dev->ctl_napi);
}

void vnic_dev_link_indicate(struct vnic_dev *dev)
{
	link_indicate(dev);
	vnic_napi_schedule(&dev->ctl_napi);
}

/*
 * The event goes first, while the transport is open; then nothing the driver
 * sends can land (CLOSED) while the rings it names are freed. What we had
 * queued for the driver is for a partner that no longer exists.
 */
void vnic_dev_vanish(struct vnic_dev *dev, uint8_t reason)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_XPORT_EVENT;
	m.xport.reason = reason;
	if (vnic_hv_send_crq(dev->hv, VNIC_HV_SERVER, &m) != VNIC_H_SUCCESS)
		vnic_ctr_inc(&dev->ctl_st.rsp_lost);
	vnic_hv_crq_set_open(dev->hv, false);
	vnic_dev_reset(dev);
	outbox_clear(dev);
}

/* Back: the transport opens and an INIT says so (the driver starts over with its own). */
void vnic_dev_return(struct vnic_dev *dev)
{
	struct vnic_crq m;

	vnic_hv_crq_set_open(dev->hv, true);
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	vnic_dev_ctl_send(dev, &m);
}

void vnic_dev_announce(struct vnic_dev *dev)
{
	vnic_dev_return(dev);
}

/* --- dispatch -------------------------------------------------------------------- */

static void handle_init(struct vnic_dev *dev, const struct vnic_crq *msg)
{
	struct vnic_crq m;

	if (msg->init.type != VNIC_CRQ_INIT) {
		vnic_ctr_inc(&dev->ctl_st.ignored);
		return;
	}
	/* The driver (re)starts: whatever it had is gone, and so is our answer to it. */
	vnic_ctr_inc(&dev->ctl_st.inits);
	vnic_dev_reset(dev);
	outbox_clear(dev);
	vnic_ctr_store(&dev->state, DEV_INITED);
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT_COMPLETE;
	ctl_queue(dev, &m);
}

static void handle(struct vnic_dev *dev, const struct vnic_crq *msg)
{
	struct vnic_crq rsp = *msg;
	uint8_t rc;

	switch (msg->first) {
	case VNIC_CRQ_INIT_CMD:
		handle_init(dev, msg);
		return;
	case VNIC_CRQ_XPORT_EVENT:
		/* The partner closed or reset: tear down and wait for its INIT. */
		vnic_ctr_inc(&dev->ctl_st.xport_events);
		vnic_dev_reset(dev);
		outbox_clear(dev);
		return;
	case VNIC_CRQ_CMD_RSP:
		break;
	default:
		vnic_ctr_inc(&dev->ctl_st.ignored);
		return;
	}
	if (msg->cmd & VNIC_CMD_RSP) {
		vnic_ctr_inc(&dev->ctl_st.ignored);
		return;
	}
	vnic_ctr_inc(&dev->ctl_st.commands);

	switch (msg->cmd) {
	case VNIC_CMD_VERSION_EXCHANGE:
		rc = cmd_version(dev, &rsp);
		break;
	case VNIC_CMD_QUERY_CAPABILITY:
		rc = cmd_query_cap(dev, &rsp);
		break;
	case VNIC_CMD_REQUEST_CAPABILITY:
		rc = cmd_request_cap(dev, &rsp);
		break;
	case VNIC_CMD_QUERY_IP_OFFLOAD:
		rc = cmd_query_offload(dev, &rsp);
		break;
	case VNIC_CMD_CONTROL_IP_OFFLOAD:
		rc = cmd_control_offload(dev, &rsp);
		break;
	case VNIC_CMD_REQUEST_MAP:
		rc = cmd_request_map(dev, &rsp);
		break;
	case VNIC_CMD_REQUEST_UNMAP:
		rc = cmd_request_unmap(dev, &rsp);
		break;
	case VNIC_CMD_LOGIN:
		rc = cmd_login(dev, &rsp);
		break;
	case VNIC_CMD_LOGICAL_LINK_STATE:
		rc = cmd_link_state(dev, &rsp);
		if (rc == 0xff)
			return;
		break;
	case VNIC_CMD_CHANGE_MAC_ADDR:
		rc = cmd_change_mac(dev, &rsp);
		break;
	case VNIC_CMD_ERROR_INDICATION:
	case VNIC_CMD_LINK_STATE_INDICATION:
		/* Ours to send, not to answer. */
		vnic_ctr_inc(&dev->ctl_st.ignored);
		return;
	default:
		rc = VNIC_RC_UNKNOWNCOMMAND;
		break;
	}
	respond(dev, &rsp, rc);
	/* After a link up, and after a query: a driver that missed one learns the state. */
	if (msg->cmd == VNIC_CMD_LOGICAL_LINK_STATE && rc == VNIC_RC_SUCCESS &&
	    (msg->link_state.state == VNIC_LINK_UP || msg->link_state.state == VNIC_LINK_QUERY))
		link_indicate(dev);
}

/*
 * vnic_dev_set's header mask. It is what the device announced at
 * capability negotiation, so a driver that negotiated may rely on the old
 * one: the device goes away and comes back at once (a transport event,
 * then its INIT, as reset-every does), and the driver's reset negotiates
 * again and hears the new mask. A device not negotiating with anyone (no
 * INIT yet, or gone in a fault) only announces it from then on.
 */
static void take_mask(struct vnic_dev *dev)
{
	enum vnic_dev_hdr_mask m;

	if (!atomic_exchange_explicit(&dev->live.mask_pending, false, memory_order_acquire))
		return;
	m = atomic_load_explicit(&dev->live.hdr_mask, memory_order_relaxed);
	if (m == dev->cfg.hdr_mask)
		return;
	vnic_ctr_store(&dev->cfg.hdr_mask, m);
	vnic_ctr_store(&dev->desc_req, dev_desc_req_of(m));
	vnic_ctr_inc(&dev->ctl_st.hdr_mask_changes);
	if (dev->state == DEV_CLOSED || dev->fault.back_at)
		return;
	vnic_dev_vanish(dev, VNIC_XPORT_PARTNER_CLOSED);
	vnic_dev_return(dev);
}

int vnic_dev_ctl_poll(struct vnic_napi *napi, int budget)
{
	struct vnic_dev *dev = vnic_container_of(napi, struct vnic_dev, ctl_napi);
	struct vnic_crq msg;
	int done = 0;

	take_mask(dev);
	dev->ctl_blocked = false;
	for (;;) {
		if (!ctl_flush(dev))
			goto blocked;
		if (dev->down_pending) {
			if (!finish_down(dev))
				goto blocked;
			continue; /* flush the response before the next command */
		}
		if (done >= budget || !vnic_hv_crq_recv(dev->hv, VNIC_HV_SERVER, &msg))
			break;
		handle(dev, &msg);
		done++;
	}
	return done;

blocked:
	/*
	 * The driver's CRQ or a tx completion ring is full: nothing will
	 * interrupt us when it drains, so look again a little later.
	 */
	dev->ctl_blocked = true;
	vnic_poller_set_timer(&napi->poller, vnic_now_ns() + DEV_RETRY_NS);
	return 0;
}
