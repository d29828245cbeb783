/* SPDX-License-Identifier: MIT */
/*
 * The control poller: the client side of the CRQ (docs/PROTOCOL.md sections 2
 * and 6). A NAPI on the driver's cpu whose interrupt is
 * the CLIENT CRQ interrupt; open and close hand it requests through an atomic
 * word and get their answer back the same way.
 *
 * Bring-up is an asynchronous state machine: each state sends its commands
 * and moves on when every answer is in. Nothing the device sends is trusted:
 * a response in the wrong state, for a capability or map id we did not ask
 * about, is counted and ignored; a buffer the device DMA-wrote (offload
 * query, login response) is copied once and checked before use.
 */
#include <errno.h>
#include <string.h>

#include "driver/drv_int.h"

/* --- interrupt ------------------------------------------------------------ */

void vnic_drv_ctl_irq(void *ctx)
{
	vnic_napi_schedule(&((struct vnic_drv *)ctx)->ctl_napi);
}

static void ctl_irq_enable(void *ctx)
{
	vnic_hv_crq_irq_enable(((struct vnic_drv *)ctx)->hv, VNIC_HV_CLIENT, true);
}

static void ctl_irq_disable(void *ctx)
{
	vnic_hv_crq_irq_enable(((struct vnic_drv *)ctx)->hv, VNIC_HV_CLIENT, false);
}

static bool ctl_irq_pending(void *ctx)
{
	struct vnic_drv *drv = ctx;

	return vnic_hv_crq_pending(drv->hv, VNIC_HV_CLIENT) ||
	       atomic_load_explicit(&drv->req, memory_order_acquire) != REQ_NONE;
}

const struct vnic_irq_ops vnic_drv_ctl_irq_ops = {
	.enable = ctl_irq_enable,
	.disable = ctl_irq_disable,
	.pending = ctl_irq_pending,
};

/* --- helpers ---------------------------------------------------------------- */

static void timer_set(struct vnic_drv *drv, uint64_t in_ns)
{
	drv->timer_ns = vnic_now_ns() + in_ns;
	vnic_poller_set_timer(&drv->ctl_napi.poller, drv->timer_ns);
}

static void timer_clear(struct vnic_drv *drv)
{
	drv->timer_ns = 0;
	vnic_poller_set_timer(&drv->ctl_napi.poller, 0);
}

/* Answers the waiting open or close, if any. */
static void finish(struct vnic_drv *drv, int rc)
{
	if (!drv->cur_seq)
		return;
	atomic_store_explicit(&drv->done_rc, rc, memory_order_relaxed);
	/* Release: everything the poller did (netdev, state) is visible to the waiter. */
	atomic_store_explicit(&drv->done_seq, drv->cur_seq, memory_order_release);
	drv->cur_seq = 0;
}

static int send_msg(struct vnic_drv *drv, struct vnic_crq *m)
{
	long rc = vnic_hv_send_crq(drv->hv, VNIC_HV_CLIENT, m);

	if (rc == VNIC_H_SUCCESS)
		return 0;
	vnic_ctr_inc(&drv->st.crq_send_errors);
	return -EIO;
}

static int send_cmd(struct vnic_drv *drv, struct vnic_crq *m, uint8_t cmd)
{
	m->first = VNIC_CRQ_CMD_RSP;
	m->cmd = cmd;
	return send_msg(drv, m);
}

static int send_cap(struct vnic_drv *drv, uint8_t cmd, uint16_t cap, uint64_t number)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.cap.capability, cap);
	vnic_be64_put(&m.cap.number, number);
	return send_cmd(drv, &m, cmd);
}

static int send_version(struct vnic_drv *drv)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.version.version, VNIC_PROTO_VERSION);
	vnic_ctr_store(&drv->state, DRV_VERSION);
	return send_cmd(drv, &m, VNIC_CMD_VERSION_EXCHANGE);
}

static int send_link_state(struct vnic_drv *drv, uint8_t state)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.link_state.state = state;
	return send_cmd(drv, &m, VNIC_CMD_LOGICAL_LINK_STATE);
}

static void send_xport(struct vnic_drv *drv, uint8_t reason)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_XPORT_EVENT;
	m.xport.reason = reason;
	send_msg(drv, &m);
}

static void set_open(struct vnic_drv *drv, bool open)
{
	atomic_store_explicit(&drv->open_flag, open, memory_order_release);
}

/* --- datapath start and stop ------------------------------------------------ */

static void irqs_enable(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->nrx; i++)
		vnic_hv_subcrq_irq_enable(drv->rxq[i].comp);
	if (drv->cfg.tx_reclaim == VNIC_DRV_RECLAIM_LAZY)
		return; /* bcmgenet orphan's "before": the completion interrupt stays off */
	for (i = 0; i < drv->ntx; i++)
		vnic_hv_subcrq_irq_enable(drv->txq[i].comp);
}

static void irqs_disable(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->qrx; i++)
		vnic_hv_subcrq_irq_disable(drv->rxq[i].comp);
	for (i = 0; i < drv->qtx; i++)
		vnic_hv_subcrq_irq_disable(drv->txq[i].comp);
}

/* tx-reclaim=napi: tx queue t is reclaimed by rx queue t % nrx. */
static void napi_map(struct vnic_drv *drv)
{
	uint32_t mask[VNIC_MAX_QUEUES] = {0};
	unsigned int t, r;

	for (t = 0; t < drv->ntx; t++) {
		r = t % drv->nrx;
		mask[r] |= 1u << t;
		atomic_store_explicit(&drv->txq[t].napi_rxq, r, memory_order_relaxed);
	}
	for (r = 0; r < drv->qrx; r++)
		atomic_store_explicit(&drv->rxq[r].txmask, r < drv->nrx ? mask[r] : 0,
				      memory_order_relaxed);
}

static void netdev_update(struct vnic_drv *drv)
{
	struct vnic_netdev *nd = &drv->netdev;
	uint32_t f = 0;

	if (drv->ol.tcp4 || drv->ol.udp4 || drv->ol.tcp6 || drv->ol.udp6)
		f |= VNIC_NETIF_F_CSUM | VNIC_NETIF_F_RXCSUM;
	if (drv->ol.lso4)
		f |= VNIC_NETIF_F_TSO4;
	if (drv->ol.lso6)
		f |= VNIC_NETIF_F_TSO6;
	if (drv->ol.lso4 && drv->ol.lso6)
		f |= VNIC_NETIF_F_USO;
	nd->features = f;
	nd->num_tx_queues = drv->ntx;
	nd->num_rx_queues = drv->nrx;
	nd->mtu = drv->mtu;
	nd->gso_max_size = drv->gso_max;
}

/*
 * Everything in flight comes back to the driver: the batch not yet sent is
 * dropped, completions waiting in the rings are reclaimed, and whatever the
 * device still holds is reclaimed as dropped (it will not complete it: it
 * reset, or it answered the link-down, which it does only after completing
 * everything). Leaves every tx queue stopped.
 */
static void datapath_stop(struct vnic_drv *drv)
{
	unsigned int i;

	irqs_disable(drv);
	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		txq->running = false;
		vnic_txq_stop(&txq->txq);
		if (!txq->slots)
			continue;
		vnic_drv_tx_unwind_batch(txq);
		vnic_drv_tx_reclaim(txq);
		vnic_drv_tx_forget(txq);
		/* The ring is empty: BQL forgets what it had in flight. */
		vnic_txq_reset(&txq->txq, vnic_now_ns());
		vnic_txq_stop(&txq->txq);
		txq->timer_armed = false;
		vnic_poller_set_timer(&txq->napi.poller, 0);
	}
	for (i = 0; i < drv->nrx; i++) {
		drv->rxq[i].running = false;
		if (drv->rxq[i].posted)
			vnic_drv_rx_forget(&drv->rxq[i]);
	}
	set_open(drv, false);
	vnic_ctr_set(&drv->carrier, 0);
}

/*
 * docs/PROTOCOL.md section 2, step 8: post rx buffers, enable interrupts,
 * LOGICAL_LINK_STATE(up).
 */
static int link_up_start(struct vnic_drv *drv)
{
	unsigned int i;

	if (drv->cfg.tx_reclaim == VNIC_DRV_RECLAIM_NAPI)
		napi_map(drv);
	for (i = 0; i < drv->nrx; i++) {
		struct drv_rxq *rxq = &drv->rxq[i];

		rxq->running = true;
		vnic_drv_rx_replenish(rxq);
		if (!rxq->nposted)
			return -EIO;
	}
	irqs_enable(drv);
	vnic_ctr_store(&drv->state, DRV_LINK_UP);
	return send_link_state(drv, VNIC_LINK_UP);
}

static void link_up_done(struct vnic_drv *drv)
{
	unsigned int i;

	netdev_update(drv);
	vnic_ctr_store(&drv->state, DRV_OPEN);
	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		txq->running = true;
		/* Clears DRV_XOFF (and BQL): the host's tx_wake runs if it was waiting. */
		vnic_txq_reset(&txq->txq, vnic_now_ns());
	}
	set_open(drv, true);
	vnic_ctr_inc(&drv->st.opens);
	finish(drv, 0);
}

/*
 * A failed bring-up: nothing stays in flight. After login the device holds
 * our rings and buffers: a transport event makes it forget them all, as its
 * next INIT would.
 */
static void bringup_fail(struct vnic_drv *drv, int err)
{
	timer_clear(drv);
	if (drv->state >= DRV_LOGIN)
		send_xport(drv, VNIC_XPORT_RESET);
	datapath_stop(drv);
	vnic_ctr_store(&drv->state, DRV_CLOSED);
	drv->admin_up = false;
	finish(drv, err);
}

/* Link down answered: everything is back. Answers the close unless an open took over. */
static void close_done(struct vnic_drv *drv, int rc)
{
	timer_clear(drv);
	datapath_stop(drv);
	vnic_ctr_store(&drv->state, DRV_DOWN);
	vnic_ctr_inc(&drv->st.closes);
	if (!drv->admin_up)
		finish(drv, rc);
}

/*
 * The device did not answer the link-down: what it holds cannot be trusted
 * to come back, so it is told to forget everything (transport event) and we
 * reclaim it all ourselves.
 */
static void close_abort(struct vnic_drv *drv, int rc)
{
	timer_clear(drv);
	send_xport(drv, VNIC_XPORT_RESET);
	datapath_stop(drv);
	vnic_ctr_store(&drv->state, DRV_CLOSED);
	drv->admin_up = false;
	vnic_ctr_inc(&drv->st.closes);
	finish(drv, rc);
}

static int start_close(struct vnic_drv *drv)
{
	unsigned int i;

	/* xmit answers BUSY from here; what is batched will not be sent. */
	for (i = 0; i < drv->ntx; i++) {
		drv->txq[i].running = false;
		vnic_txq_stop(&drv->txq[i].txq);
		vnic_drv_tx_unwind_batch(&drv->txq[i]);
	}
	set_open(drv, false);
	vnic_ctr_store(&drv->state, DRV_LINK_DOWN);
	return send_link_state(drv, VNIC_LINK_DOWN);
}

/* --- bring-up, step by step --------------------------------------------------- */

static void send_init(struct vnic_drv *drv)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	/* A device not ready (or a closed transport) answers nothing: the timer retries. */
	send_msg(drv, &m);
	timer_set(drv, VNIC_DRV_INIT_RETRY_NS);
}

static void start_init(struct vnic_drv *drv)
{
	vnic_ctr_store(&drv->state, DRV_INIT);
	drv->init_tries = 0;
	send_init(drv);
}

static const uint16_t qcap_ids[QC_MAX] = {
	[QC_MIN_TX_QUEUES] = VNIC_CAP_MIN_TX_QUEUES,
	[QC_MIN_RX_QUEUES] = VNIC_CAP_MIN_RX_QUEUES,
	[QC_MAX_TX_QUEUES] = VNIC_CAP_MAX_TX_QUEUES,
	[QC_MAX_RX_QUEUES] = VNIC_CAP_MAX_RX_QUEUES,
	[QC_MIN_TX_ENTRIES] = VNIC_CAP_MIN_TX_ENTRIES,
	[QC_MIN_RX_ENTRIES] = VNIC_CAP_MIN_RX_ADD_ENTRIES,
	[QC_MAX_TX_ENTRIES] = VNIC_CAP_MAX_TX_ENTRIES,
	[QC_MAX_RX_ENTRIES] = VNIC_CAP_MAX_RX_ADD_ENTRIES,
	[QC_MIN_MTU] = VNIC_CAP_MIN_MTU,
	[QC_MAX_MTU] = VNIC_CAP_MAX_MTU,
	[QC_TCP_IP_OFFLOAD] = VNIC_CAP_TCP_IP_OFFLOAD,
	[QC_MAX_IND_DESCS] = VNIC_CAP_MAX_IND_DESCS,
	[QC_DESC_REQ] = VNIC_CAP_TX_RX_DESC_REQ,
};

static const uint16_t rcap_ids[RC_MAX] = {
	[RC_TX_QUEUES] = VNIC_CAP_REQ_TX_QUEUES,
	[RC_RX_QUEUES] = VNIC_CAP_REQ_RX_QUEUES,
	[RC_TX_ENTRIES] = VNIC_CAP_REQ_TX_ENTRIES,
	[RC_RX_ENTRIES] = VNIC_CAP_REQ_RX_ADD_ENTRIES,
	[RC_MTU] = VNIC_CAP_REQ_MTU,
	[RC_IND_DESCS] = VNIC_CAP_REQ_IND_DESCS,
};

static int send_queries(struct vnic_drv *drv)
{
	unsigned int i;

	vnic_ctr_store(&drv->state, DRV_QUERY);
	drv->pending = QC_MAX;
	for (i = 0; i < QC_MAX; i++)
		if (send_cap(drv, VNIC_CMD_QUERY_CAPABILITY, qcap_ids[i], 0))
			return -EIO;
	return 0;
}

static int send_requests(struct vnic_drv *drv)
{
	unsigned int i;

	vnic_ctr_store(&drv->state, DRV_REQUEST);
	drv->pending = RC_MAX;
	drv->cap_partial = false;
	for (i = 0; i < RC_MAX; i++)
		if (send_cap(drv, VNIC_CMD_REQUEST_CAPABILITY, rcap_ids[i], drv->rcap[i]))
			return -EIO;
	return 0;
}

static int start_requests(struct vnic_drv *drv)
{
	const struct vnic_drv_config *cfg = &drv->cfg;

	/*
	 * Ask for what was configured, not clamped to the maxima just queried:
	 * the device answers PARTIALSUCCESS with what it can grant and we adopt
	 * it (step 4), so both ends agree on one number.
	 */
	drv->rcap[RC_TX_QUEUES] = cfg->tx_queues;
	drv->rcap[RC_RX_QUEUES] = cfg->rx_queues;
	drv->rcap[RC_TX_ENTRIES] = cfg->tx_entries;
	drv->rcap[RC_RX_ENTRIES] = cfg->rx_entries;
	drv->rcap[RC_MTU] = cfg->mtu + VNIC_ETH_HLEN;
	drv->rcap[RC_IND_DESCS] = cfg->max_ind_descs;
	drv->cap_round = 0;
	return send_requests(drv);
}

/* Every request granted: what we run with, checked against what we can hold. */
static int adopt_requests(struct vnic_drv *drv)
{
	const uint32_t *r = drv->rcap;
	uint64_t max_ind = drv->qcap[QC_MAX_IND_DESCS];

	if (!r[RC_TX_QUEUES] || r[RC_TX_QUEUES] > drv->qtx || !r[RC_RX_QUEUES] ||
	    r[RC_RX_QUEUES] > drv->qrx)
		return -EPROTO;
	/* Our completion rings and pools were sized for what we asked. */
	if (r[RC_TX_ENTRIES] < 2 * VNIC_MAX_TX_ELEMS || r[RC_TX_ENTRIES] > drv->cfg.tx_entries ||
	    !r[RC_RX_ENTRIES] || r[RC_RX_ENTRIES] > drv->cfg.rx_entries)
		return -EPROTO;
	if (r[RC_MTU] < VNIC_DRV_MIN_MTU + VNIC_ETH_HLEN ||
	    r[RC_MTU] > drv->cfg.mtu + VNIC_ETH_HLEN)
		return -EPROTO;
	if (!r[RC_IND_DESCS] || r[RC_IND_DESCS] > VNIC_MAX_IND_DESCS)
		return -EPROTO;

	vnic_ctr_store(&drv->ntx, r[RC_TX_QUEUES]);
	vnic_ctr_store(&drv->nrx, r[RC_RX_QUEUES]);
	if (drv->ntx > drv->ntx_hw)
		vnic_ctr_store(&drv->ntx_hw, drv->ntx);
	if (drv->nrx > drv->nrx_hw)
		vnic_ctr_store(&drv->nrx_hw, drv->nrx);
	vnic_ctr_store(&drv->tx_entries, r[RC_TX_ENTRIES]);
	vnic_ctr_store(&drv->rx_entries, r[RC_RX_ENTRIES]);
	vnic_ctr_store(&drv->mtu, r[RC_MTU] - VNIC_ETH_HLEN);
	vnic_ctr_store(&drv->ind_descs, r[RC_IND_DESCS]);
	if (max_ind && max_ind < drv->ind_descs)
		vnic_ctr_store(&drv->ind_descs, (uint32_t)max_ind);
	vnic_ctr_store(&drv->cur_ind, drv->ind_descs);
	vnic_ctr_store(&drv->desc_req, drv->qcap[QC_DESC_REQ]);
	drv->req_plain = vnic_desc_req_get(drv->desc_req, VNIC_DESC_REQ_BYTE_PLAIN);
	drv->req_csum = vnic_desc_req_get(drv->desc_req, VNIC_DESC_REQ_BYTE_CSUM);
	drv->req_lso = vnic_desc_req_get(drv->desc_req, VNIC_DESC_REQ_BYTE_LSO);
	return 0;
}

/*
 * The rx buffer size depends on the MTU just granted, so it is queried now
 * (ours: capability RX_BUF_SIZE), before the rx pool is carved and mapped
 * (step 6); the login response confirms it.
 */
static int query_rx_buf(struct vnic_drv *drv)
{
	vnic_ctr_store(&drv->state, DRV_RXBUF);
	return send_cap(drv, VNIC_CMD_QUERY_CAPABILITY, VNIC_CAP_RX_BUF_SIZE, 0);
}

static int send_offload(struct vnic_drv *drv, uint8_t cmd, uint32_t off)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.ip_offload.len, sizeof(struct vnic_ip_offload));
	vnic_be64_put(&m.ip_offload.ioba, drv->ctl_ioba + off);
	return send_cmd(drv, &m, cmd);
}

static int query_offload(struct vnic_drv *drv)
{
	memset(drv->ctl + CTL_OFFLOAD_QUERY_OFF, 0, sizeof(struct vnic_ip_offload));
	vnic_ctr_store(&drv->state, DRV_QUERY_OFFLOAD);
	return send_offload(drv, VNIC_CMD_QUERY_IP_OFFLOAD, CTL_OFFLOAD_QUERY_OFF);
}

static bool on(uint8_t offered, bool want)
{
	return offered == 1 && want;
}

/* Step 5: turn on what the device offers and the configuration wants. */
static int control_offload(struct vnic_drv *drv)
{
	struct vnic_ip_offload q, c;
	bool csum = drv->cfg.csum, lso = drv->cfg.csum && drv->cfg.tso;
	uint32_t max_tx;

	memcpy(&q, drv->ctl + CTL_OFFLOAD_QUERY_OFF, sizeof(q));
	if (vnic_be32_get(&q.len) < sizeof(q) ||
	    vnic_be32_get(&q.version) != VNIC_IP_OFFLOAD_VERSION)
		return -EPROTO;
	memset(&c, 0, sizeof(c));
	vnic_be32_put(&c.len, sizeof(c));
	vnic_be32_put(&c.version, VNIC_IP_OFFLOAD_VERSION);
	c.ipv4_chksum = on(q.ipv4_chksum, csum);
	c.ipv6_chksum = on(q.ipv6_chksum, csum);
	c.tcp_ipv4_chksum = on(q.tcp_ipv4_chksum, csum);
	c.tcp_ipv6_chksum = on(q.tcp_ipv6_chksum, csum);
	c.udp_ipv4_chksum = on(q.udp_ipv4_chksum, csum);
	c.udp_ipv6_chksum = on(q.udp_ipv6_chksum, csum);
	/* LSO packets are checksum-offload packets too (TX_RX_DESC_REQ byte 4). */
	c.large_tx_ipv4 = on(q.large_tx_ipv4, lso && c.tcp_ipv4_chksum);
	c.large_tx_ipv6 = on(q.large_tx_ipv6, lso && c.tcp_ipv6_chksum);
	/* large_rx stays 0 as in ibmvnic; bad_packet_rx 0: we verify nothing twice. */
	memcpy(drv->ctl + CTL_OFFLOAD_CONTROL_OFF, &c, sizeof(c));

	vnic_ctr_store(&drv->ol.tcp4, c.tcp_ipv4_chksum);
	vnic_ctr_store(&drv->ol.udp4, c.udp_ipv4_chksum);
	vnic_ctr_store(&drv->ol.tcp6, c.tcp_ipv6_chksum);
	vnic_ctr_store(&drv->ol.udp6, c.udp_ipv6_chksum);
	vnic_ctr_store(&drv->ol.lso4, c.large_tx_ipv4);
	vnic_ctr_store(&drv->ol.lso6, c.large_tx_ipv6);
	max_tx = vnic_be32_get(&q.max_large_tx_size);
	drv->gso_max = VNIC_TSO_BUF_SIZE + VNIC_MAX_HDRS;
	if (max_tx && max_tx < drv->gso_max)
		drv->gso_max = max_tx;
	drv->min_mss = vnic_be16_get(&q.min_large_tx_mss);
	vnic_ctr_store(&drv->state, DRV_CONTROL_OFFLOAD);
	return send_offload(drv, VNIC_CMD_CONTROL_IP_OFFLOAD, CTL_OFFLOAD_CONTROL_OFF);
}

struct map_ctx {
	struct vnic_drv *drv;
	int err;
};

static void send_map(void *ctx, struct drv_ltb *l)
{
	struct map_ctx *c = ctx;
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.map.map_id = l->map_id;
	vnic_be32_put(&m.map.len, (uint32_t)l->len);
	vnic_be32_put(&m.map.ioba, (uint32_t)l->ioba);
	if (!c->err && send_cmd(c->drv, &m, VNIC_CMD_REQUEST_MAP))
		c->err = -EIO;
}

/* Step 6: pools carved and mapped, one REQUEST_MAP per LTB. */
static int request_maps(struct vnic_drv *drv)
{
	struct map_ctx c = {.drv = drv};
	int err;

	err = vnic_drv_pools_alloc(drv);
	if (err)
		return err;
	vnic_ctr_store(&drv->state, DRV_MAP);
	drv->pending = vnic_drv_ltbs(drv, NULL, NULL);
	vnic_drv_ltbs(drv, send_map, &c);
	return c.err;
}

/* Step 7: our completion rings, tx first, then rx. */
static int login(struct vnic_drv *drv)
{
	struct vnic_login_buf *lb = (void *)(drv->ctl + CTL_LOGIN_OFF);
	uint8_t *arr = drv->ctl + CTL_LOGIN_OFF + sizeof(*lb);
	uint32_t len = sizeof(*lb) + 4 * (drv->ntx + drv->nrx), i;
	struct vnic_crq m;

	memset(lb, 0, VNIC_LOGIN_BUF_MAX);
	vnic_be32_put(&lb->len, len);
	vnic_be32_put(&lb->version, VNIC_LOGIN_VERSION);
	vnic_be32_put(&lb->num_txcomp_subcrqs, drv->ntx);
	vnic_be32_put(&lb->off_txcomp_subcrqs, sizeof(*lb));
	vnic_be32_put(&lb->num_rxcomp_subcrqs, drv->nrx);
	vnic_be32_put(&lb->off_rxcomp_subcrqs, sizeof(*lb) + 4 * drv->ntx);
	vnic_be64_put(&lb->login_rsp_ioba, drv->ctl_ioba + CTL_LOGIN_RSP_OFF);
	vnic_be32_put(&lb->login_rsp_len, VNIC_LOGIN_RSP_BUF_MAX);
	for (i = 0; i < drv->ntx; i++)
		vnic_be32_put((struct vnic_be32 *)(arr + 4 * i), drv->txq[i].comp->handle);
	for (i = 0; i < drv->nrx; i++)
		vnic_be32_put((struct vnic_be32 *)(arr + 4 * (drv->ntx + i)),
			      drv->rxq[i].comp->handle);
	/* A stale response must not pass for the new one. */
	memset(drv->ctl + CTL_LOGIN_RSP_OFF, 0, VNIC_LOGIN_RSP_BUF_MAX);

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.login.len, (uint16_t)len);
	vnic_be64_put(&m.login.ioba, drv->ctl_ioba + CTL_LOGIN_OFF);
	vnic_ctr_store(&drv->state, DRV_LOGIN);
	return send_cmd(drv, &m, VNIC_CMD_LOGIN);
}

static bool array_ok(uint32_t off, uint32_t n, uint32_t len)
{
	return off >= sizeof(struct vnic_login_rsp_buf) && (uint64_t)off + (uint64_t)n * 4 <= len;
}

/* Step 7, the answer: every count and offset checked before a handle is used. */
static int login_rsp(struct vnic_drv *drv)
{
	uint8_t b[VNIC_LOGIN_RSP_BUF_MAX];
	const struct vnic_login_rsp_buf *h = (const void *)b;
	uint32_t len, ntx, nrx, offt, offr, rxbuf, i;

	memcpy(b, drv->ctl + CTL_LOGIN_RSP_OFF, sizeof(b));
	len = vnic_be32_get(&h->len);
	ntx = vnic_be32_get(&h->num_txsubm_subcrqs);
	nrx = vnic_be32_get(&h->num_rxadd_subcrqs);
	offt = vnic_be32_get(&h->off_txsubm_subcrqs);
	offr = vnic_be32_get(&h->off_rxadd_subcrqs);
	rxbuf = vnic_be32_get(&h->rx_buf_size);
	if (len < sizeof(*h) || len > sizeof(b) || vnic_be32_get(&h->version) != VNIC_LOGIN_VERSION)
		return -EPROTO;
	if (ntx != drv->ntx || nrx != drv->nrx || !array_ok(offt, ntx, len) ||
	    !array_ok(offr, nrx, len))
		return -EPROTO;
	/* A frame of the granted MTU must fit, and the buffer in our slots. */
	if (rxbuf < drv->mtu + VNIC_ETH_HLEN || rxbuf > drv->rxq[0].pool.buf_size ||
	    rxbuf > VNIC_RX_ADD_MAX_LEN)
		return -EPROTO;
	for (i = 0; i < ntx; i++) {
		uint32_t hd = vnic_be32_get((const struct vnic_be32 *)(b + offt + 4 * i));

		if (!hd)
			return -EPROTO;
		drv->txq[i].subm_handle = hd;
	}
	for (i = 0; i < nrx; i++) {
		uint32_t hd = vnic_be32_get((const struct vnic_be32 *)(b + offr + 4 * i));

		if (!hd)
			return -EPROTO;
		drv->rxq[i].add_handle = hd;
		drv->rxq[i].post_len = rxbuf;
	}
	vnic_ctr_store(&drv->rx_buf_size, rxbuf);
	return 0;
}

/* --- responses ------------------------------------------------------------------ */

/* A refused map or login: the device's memory, or anything else it did not like. */
static int rc_errno(uint8_t rc)
{
	return rc == VNIC_RC_NOMEMORY ? -ENOMEM : -EPROTO;
}

static int on_version(struct vnic_drv *drv, const struct vnic_crq *m)
{
	if (m->rc || vnic_be16_get(&m->version.version) != VNIC_PROTO_VERSION)
		return -EPROTO;
	return send_queries(drv);
}

static int on_query_cap(struct vnic_drv *drv, const struct vnic_crq *m)
{
	uint16_t cap = vnic_be16_get(&m->cap.capability);
	uint64_t v = vnic_be64_get(&m->cap.number);
	unsigned int i;

	if (drv->state == DRV_RXBUF) {
		if (cap != VNIC_CAP_RX_BUF_SIZE)
			goto ignore;
		/*
		 * Unknown to the device: the size ibmvnic's server would want.
		 * So is a size no frame vnic handles could fill: the rx pool and
		 * as many host packets again are carved out of it, and a device
		 * asking for megabytes would have the driver allocate gigabytes.
		 * One that insists says so in the login response: refused there.
		 */
		if (m->rc || v < drv->mtu + VNIC_ETH_HLEN || v > VNIC_PKT_MAX_LEN)
			v = drv->mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
		vnic_ctr_store(&drv->rx_buf_size, (uint32_t)v);
		return query_offload(drv);
	}
	for (i = 0; i < QC_MAX; i++)
		if (qcap_ids[i] == cap)
			break;
	if (i == QC_MAX || !drv->pending)
		goto ignore;
	if (m->rc)
		return -EPROTO;
	drv->qcap[i] = v;
	if (--drv->pending)
		return 0;
	return start_requests(drv);

ignore:
	vnic_ctr_inc(&drv->st.crq_ignored);
	return 0;
}

static int on_request_cap(struct vnic_drv *drv, const struct vnic_crq *m)
{
	uint16_t cap = vnic_be16_get(&m->cap.capability);
	uint64_t v = vnic_be64_get(&m->cap.number);
	unsigned int i;

	for (i = 0; i < RC_MAX; i++)
		if (rcap_ids[i] == cap)
			break;
	if (i == RC_MAX || !drv->pending) {
		vnic_ctr_inc(&drv->st.crq_ignored);
		return 0;
	}
	switch (m->rc) {
	case VNIC_RC_SUCCESS:
		break;
	case VNIC_RC_PARTIALSUCCESS:
		/* Adopt what is granted: never more than asked, never zero. */
		if (!v || v > drv->rcap[i])
			return -EPROTO;
		if (v != drv->rcap[i]) {
			drv->rcap[i] = (uint32_t)v;
			drv->cap_partial = true;
		}
		break;
	case VNIC_RC_PARAMETER:
		return -EINVAL; /* below the device's minimum */
	default:
		return -EPROTO;
	}
	if (--drv->pending)
		return 0;
	if (drv->cap_partial) {
		if (++drv->cap_round > VNIC_DRV_CAP_ROUNDS)
			return -EPROTO;
		return send_requests(drv);
	}
	if (adopt_requests(drv))
		return -EPROTO;
	return query_rx_buf(drv);
}

static int on_map(struct vnic_drv *drv, const struct vnic_crq *m)
{
	if (!m->map.map_id || !drv->pending) {
		vnic_ctr_inc(&drv->st.crq_ignored);
		return 0;
	}
	if (m->rc)
		return rc_errno(m->rc);
	if (--drv->pending)
		return 0;
	return login(drv);
}

static int on_login(struct vnic_drv *drv, const struct vnic_crq *m)
{
	int err;

	if (m->rc)
		return rc_errno(m->rc);
	err = login_rsp(drv);
	if (err)
		return err;
	return link_up_start(drv);
}

static void on_link_state(struct vnic_drv *drv, const struct vnic_crq *m)
{
	switch (drv->state) {
	case DRV_LINK_UP:
		if (m->link_state.state != VNIC_LINK_UP || m->rc) {
			bringup_fail(drv, -EPROTO);
			return;
		}
		timer_clear(drv);
		link_up_done(drv);
		return;
	case DRV_LINK_DOWN:
		/*
		 * The device completed everything before answering
		 * (docs/PROTOCOL.md section 2, "Close").
		 */
		close_done(drv, 0);
		/* an open arrived while we were closing: its answer comes from the link-up */
		if (drv->admin_up && link_up_start(drv))
			bringup_fail(drv, -EIO);
		return;
	default:
		vnic_ctr_inc(&drv->st.crq_ignored);
	}
}

/*
 * The partner reset (transport event, or an INIT while we are logged in):
 * everything it held is gone. A link that was up comes back by itself with a
 * new bring-up; nobody waits for that one unless an open is in progress.
 */
static void partner_reset(struct vnic_drv *drv)
{
	enum drv_state s = drv->state;

	vnic_ctr_inc(&drv->st.resets);
	if (s == DRV_CLOSED)
		return;
	if (s < DRV_LINK_UP) {
		bringup_fail(drv, -ECONNRESET);
		return;
	}
	timer_clear(drv);
	datapath_stop(drv);
	vnic_ctr_store(&drv->state, DRV_CLOSED);
	if (s == DRV_LINK_DOWN) {
		/* closing anyway: everything is reclaimed, so the close is done */
		vnic_ctr_inc(&drv->st.closes);
		finish(drv, 0);
		return;
	}
	if (drv->admin_up)
		start_init(drv);
}

/* One response or command, in drv->state. Returns -errno to fail the bring-up. */
static int dispatch(struct vnic_drv *drv, const struct vnic_crq *m)
{
	switch (m->first) {
	case VNIC_CRQ_INIT_CMD:
		if (m->init.type == VNIC_CRQ_INIT_COMPLETE && drv->state == DRV_INIT) {
			timer_clear(drv);
			return send_version(drv);
		}
		if (m->init.type == VNIC_CRQ_INIT && drv->state >= DRV_LINK_UP) {
			partner_reset(drv);
			return 0;
		}
		vnic_ctr_inc(&drv->st.crq_ignored);
		return 0;
	case VNIC_CRQ_XPORT_EVENT:
		vnic_ctr_inc(&drv->st.xport_events);
		partner_reset(drv);
		return 0;
	case VNIC_CRQ_CMD_RSP:
		break;
	default:
		vnic_ctr_inc(&drv->st.crq_ignored);
		return 0;
	}

	switch (m->cmd) {
	case VNIC_CMD_VERSION_EXCHANGE_RSP:
		if (drv->state == DRV_VERSION)
			return on_version(drv, m);
		break;
	case VNIC_CMD_QUERY_CAPABILITY_RSP:
		if (drv->state == DRV_QUERY || drv->state == DRV_RXBUF)
			return on_query_cap(drv, m);
		break;
	case VNIC_CMD_REQUEST_CAPABILITY_RSP:
		if (drv->state == DRV_REQUEST)
			return on_request_cap(drv, m);
		break;
	case VNIC_CMD_QUERY_IP_OFFLOAD_RSP:
		if (drv->state == DRV_QUERY_OFFLOAD)
			return m->rc ? -EPROTO : control_offload(drv);
		break;
	case VNIC_CMD_CONTROL_IP_OFFLOAD_RSP:
		if (drv->state == DRV_CONTROL_OFFLOAD)
			return m->rc ? -EPROTO : request_maps(drv);
		break;
	case VNIC_CMD_REQUEST_MAP_RSP:
		if (drv->state == DRV_MAP)
			return on_map(drv, m);
		break;
	case VNIC_CMD_LOGIN_RSP:
		if (drv->state == DRV_LOGIN)
			return on_login(drv, m);
		break;
	case VNIC_CMD_LOGICAL_LINK_STATE_RSP:
		on_link_state(drv, m);
		return 0;
	case VNIC_CMD_LINK_STATE_INDICATION:
		vnic_ctr_set(&drv->carrier, m->link_ind.phys_link_state == VNIC_LINK_UP &&
						    m->link_ind.logical_link_state == VNIC_LINK_UP);
		return 0;
	case VNIC_CMD_ERROR_INDICATION:
		vnic_ctr_inc(&drv->st.error_indications);
		return 0;
	default:
		break;
	}
	vnic_ctr_inc(&drv->st.crq_ignored);
	return 0;
}

static bool in_bringup(const struct vnic_drv *drv)
{
	return drv->state > DRV_CLOSED && drv->state <= DRV_LINK_UP;
}

/* --- requests from open and close ---------------------------------------------- */

static void on_request(struct vnic_drv *drv, uint64_t word)
{
	enum drv_req kind = (enum drv_req)(word & 3);
	uint64_t seq = word >> 2;

	switch (kind) {
	case REQ_OPEN:
		drv->cur_seq = seq;
		drv->admin_up = true;
		if (drv->state == DRV_CLOSED)
			start_init(drv);
		else if (drv->state == DRV_DOWN && link_up_start(drv))
			bringup_fail(drv, -EIO);
		else if (drv->state == DRV_OPEN)
			finish(drv, 0);
		/* bring-up or close in progress: its end answers */
		return;
	case REQ_CLOSE:
		drv->cur_seq = seq;
		drv->admin_up = false;
		if (drv->state == DRV_OPEN) {
			if (start_close(drv))
				close_abort(drv, 0); /* the device is gone: nothing to wait for */
		} else if (in_bringup(drv)) {
			bringup_fail(drv, 0);
		} else if (drv->state != DRV_LINK_DOWN) {
			finish(drv, 0);
		}
		return;
	case REQ_ABORT:
		/* The waiter gave up: whatever is in progress ends now. */
		drv->cur_seq = seq;
		if (in_bringup(drv))
			bringup_fail(drv, -ETIMEDOUT);
		else if (drv->state == DRV_LINK_DOWN)
			close_abort(drv, -ETIMEDOUT);
		else
			drv->cur_seq = 0; /* already answered */
		return;
	default:
		return;
	}
}

static void on_timer(struct vnic_drv *drv)
{
	drv->timer_ns = 0;
	if (drv->state != DRV_INIT)
		return;
	if (++drv->init_tries >= VNIC_DRV_INIT_RETRIES) {
		bringup_fail(drv, -ETIMEDOUT);
		return;
	}
	vnic_ctr_inc(&drv->st.init_retries);
	send_init(drv);
}

int vnic_drv_ctl_poll(struct vnic_napi *napi, int budget)
{
	struct vnic_drv *drv = vnic_container_of(napi, struct vnic_drv, ctl_napi);
	struct vnic_crq m;
	uint64_t word;
	int done = 0;

	word = atomic_exchange_explicit(&drv->req, REQ_NONE, memory_order_acquire);
	if (word)
		on_request(drv, word);
	while (vnic_hv_crq_recv(drv->hv, VNIC_HV_CLIENT, &m)) {
		bool was_bringup = in_bringup(drv);
		int err = dispatch(drv, &m);

		if (err && was_bringup && in_bringup(drv))
			bringup_fail(drv, err);
		done++;
	}
	if (drv->timer_ns && (int64_t)(vnic_now_ns() - drv->timer_ns) >= 0)
		on_timer(drv);
	/* The control path has no budget to respect: everything was handled. */
	return done < budget ? done : budget - 1;
}
