/* SPDX-License-Identifier: MIT */
/*
 * The control poller: the client side of the CRQ (docs/PROTOCOL.md sections 2
 * and 6). A NAPI on the driver's cpu whose interrupt is the CLIENT CRQ
 * interrupt; open and close hand it requests through an atomic word and get
 * their answer back the same way. Resets (reset.c) run here too, one at a
 * time, through the same bring-up.
 *
 * Bring-up is an asynchronous state machine: each state sends its commands
 * and moves on when every answer is in. Nothing the device sends is trusted:
 * a response in the wrong state, for a capability or map id we did not ask
 * about, or one we have already had (a duplicate), is counted and ignored; a
 * buffer the device DMA-wrote (offload query, login response) is copied once
 * and checked before use, and an offload query or control sent again names a
 * buffer of its own, so an answer to an earlier sending is ignored. A state whose answers do not all come within
 * VNIC_DRV_CMD_TIMEOUT_NS sends what is unanswered again (a lost message),
 * at most VNIC_DRV_CMD_RETRIES times; the device answers a repeated command
 * as it answered the first.
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
	       atomic_load_explicit(&drv->req, memory_order_acquire) != REQ_NONE ||
	       atomic_load_explicit(&drv->rst.pending, memory_order_acquire) ||
	       vnic_drv_live_pending(drv);
}

const struct vnic_irq_ops vnic_drv_ctl_irq_ops = {
	.enable = ctl_irq_enable,
	.disable = ctl_irq_disable,
	.pending = ctl_irq_pending,
};

/* --- helpers ---------------------------------------------------------------- */

/* States that wait for answers, and resend what is unanswered after a timeout. */
static bool waits_answer(enum drv_state s)
{
	return (s > DRV_INIT && s <= DRV_LINK_UP) || s == DRV_LINK_DOWN || s == DRV_RESET_DOWN ||
	       s == DRV_RESET_UNMAP;
}

void vnic_drv_set_state(struct vnic_drv *drv, enum drv_state s)
{
	vnic_ctr_store(&drv->state, s);
	drv->tries = 0;
	drv->timer_ns = waits_answer(s) ? vnic_now_ns() + VNIC_DRV_CMD_TIMEOUT_NS : 0;
}

void vnic_drv_finish(struct vnic_drv *drv, int rc)
{
	if (!drv->cur_seq)
		return;
	atomic_store_explicit(&drv->done_rc, rc, memory_order_relaxed);
	/* Release: everything the poller did (netdev, state) is visible to the waiter. */
	atomic_store_explicit(&drv->done_seq, drv->cur_seq, memory_order_release);
	drv->cur_seq = 0;
}

/*
 * A message that cannot be sent (the transport closed, the partner's CRQ
 * full) is counted and treated as lost: the state's timeout sends it again,
 * and a partner that went away says so with a transport event.
 */
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

static void send_cap(struct vnic_drv *drv, uint8_t cmd, uint16_t cap, uint64_t number)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.cap.capability, cap);
	vnic_be64_put(&m.cap.number, number);
	send_cmd(drv, &m, cmd);
}

static void send_version(struct vnic_drv *drv)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.version.version, VNIC_PROTO_VERSION);
	send_cmd(drv, &m, VNIC_CMD_VERSION_EXCHANGE);
}

int vnic_drv_send_link_state(struct vnic_drv *drv, uint8_t state)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.link_state.state = state;
	return send_cmd(drv, &m, VNIC_CMD_LOGICAL_LINK_STATE);
}

void vnic_drv_send_xport(struct vnic_drv *drv, uint8_t reason)
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

static bool in_bringup(const struct vnic_drv *drv)
{
	return drv->state > DRV_CLOSED && drv->state <= DRV_LINK_UP;
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

/*
 * tx-reclaim=napi: tx queue t is reclaimed by rx queue t % nrx; in the
 * other modes no rx queue reclaims any. Link up only, with every ring
 * masked (vnic_drv_datapath_stop) and no mode change moving.
 */
static void napi_map(struct vnic_drv *drv)
{
	uint32_t mask[VNIC_MAX_QUEUES] = {0};
	unsigned int t, r;

	for (t = 0; t < drv->ntx && drv->cfg.tx_reclaim == VNIC_DRV_RECLAIM_NAPI; t++) {
		r = t % drv->nrx;
		mask[r] |= 1u << t;
		atomic_store_explicit(&drv->txq[t].napi_rxq, r, memory_order_relaxed);
	}
	for (r = 0; r < drv->qrx; r++)
		atomic_store_explicit(&drv->rxq[r].txmask, r < drv->nrx ? mask[r] : 0,
				      memory_order_relaxed);
}

/*
 * What a host reads of the netdev. Written only when it changes: a reset
 * that brings back the same values leaves the fields alone, so a host that
 * reads them from another thread meanwhile races with nothing.
 */
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
	if (nd->features != f)
		nd->features = f;
	if (nd->num_tx_queues != drv->ntx)
		nd->num_tx_queues = drv->ntx;
	if (nd->num_rx_queues != drv->nrx)
		nd->num_rx_queues = drv->nrx;
	if (nd->mtu != drv->mtu)
		nd->mtu = drv->mtu;
	if (nd->gso_max_size != drv->gso_max)
		nd->gso_max_size = drv->gso_max;
}

void vnic_drv_datapath_quiesce(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		txq->running = false;
		if (!vnic_txq_stopped(&txq->txq))
			vnic_ctr_inc(&txq->st.stops);
		vnic_txq_stop(&txq->txq);
		vnic_drv_tx_unwind_batch(txq);
	}
	set_open(drv, false);
	vnic_ctr_set(&drv->carrier, 0);
}

/*
 * Everything in flight comes back to the driver: the batch not yet sent is
 * dropped, completions waiting in the rings are reclaimed, and whatever the
 * device still holds is reclaimed as dropped (it will not complete it: it
 * reset, or it answered the link-down, which it does only after completing
 * everything). A completion that comes later names a slot no longer in
 * flight: tx reclaim and the rx poll drop it (comp_stale, reset_drained).
 * Leaves every tx queue stopped.
 */
void vnic_drv_datapath_stop(struct vnic_drv *drv)
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
 * LOGICAL_LINK_STATE(up). What the rings still hold was sent before the
 * device last forgot us (a reset): it names nothing in flight now.
 */
int vnic_drv_link_up_start(struct vnic_drv *drv)
{
	unsigned int i;

	vnic_drv_reclaim_reset(drv);
	napi_map(drv);
	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		vnic_drv_tx_reclaim(txq); /* not live: drops what is there */
		txq->live = true;
	}
	for (i = 0; i < drv->nrx; i++) {
		struct drv_rxq *rxq = &drv->rxq[i];

		vnic_drv_rx_forget(rxq);
		rxq->running = true;
		/* A short post (BUSY, a lost batch) is topped up from the rx NAPI's timer. */
		vnic_drv_rx_replenish(rxq);
	}
	irqs_enable(drv);
	vnic_drv_set_state(drv, DRV_LINK_UP);
	vnic_drv_send_link_state(drv, VNIC_LINK_UP);
	return 0;
}

static void link_up_done(struct vnic_drv *drv)
{
	unsigned int i;

	netdev_update(drv);
	vnic_drv_set_state(drv, DRV_OPEN);
	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		txq->running = true;
		/* Clears DRV_XOFF (and BQL): the host's tx_wake runs if it was waiting. */
		vnic_txq_reset(&txq->txq, vnic_now_ns());
	}
	set_open(drv, true);
	vnic_ctr_inc(&drv->st.opens);
	if (drv->rst.active)
		vnic_drv_reset_done(drv);
	else
		vnic_drv_finish(drv, 0);
}

/*
 * A failed bring-up of an open: nothing stays in flight. After login the
 * device holds our rings and buffers: a transport event makes it forget
 * them all, as its next INIT would.
 */
static void bringup_fail(struct vnic_drv *drv, int err)
{
	if (drv->state == DRV_LOGIN || drv->state == DRV_LINK_UP)
		vnic_drv_send_xport(drv, VNIC_XPORT_RESET);
	vnic_drv_datapath_stop(drv);
	vnic_drv_set_state(drv, DRV_CLOSED);
	drv->admin_up = false;
	vnic_drv_finish(drv, err);
}

/* The bring-up failed: an open gives up, a reset tries again from scratch. */
static void fail_bringup(struct vnic_drv *drv, int err)
{
	if (drv->rst.active)
		vnic_drv_reset_fail(drv, err);
	else
		bringup_fail(drv, err);
}

/* Link down answered: everything is back. Answers the close unless an open took over. */
static void close_done(struct vnic_drv *drv, int rc)
{
	vnic_drv_datapath_stop(drv);
	vnic_drv_set_state(drv, DRV_DOWN);
	vnic_ctr_inc(&drv->st.closes);
	if (!drv->admin_up)
		vnic_drv_finish(drv, rc);
}

/*
 * The device did not answer the link-down: what it holds cannot be trusted
 * to come back, so it is told to forget everything (transport event) and we
 * reclaim it all ourselves.
 */
static void close_abort(struct vnic_drv *drv, int rc)
{
	vnic_drv_send_xport(drv, VNIC_XPORT_RESET);
	vnic_drv_datapath_stop(drv);
	vnic_drv_set_state(drv, DRV_CLOSED);
	drv->admin_up = false;
	vnic_ctr_inc(&drv->st.closes);
	vnic_drv_finish(drv, rc);
}

static int start_close(struct vnic_drv *drv)
{
	/* xmit answers BUSY from here; what is batched will not be sent. */
	vnic_drv_datapath_quiesce(drv);
	vnic_drv_set_state(drv, DRV_LINK_DOWN);
	return vnic_drv_send_link_state(drv, VNIC_LINK_DOWN);
}

/* --- bring-up, step by step --------------------------------------------------- */

/*
 * INIT: a device not ready (or a closed transport) answers nothing; the
 * timer retries, every 10 ms, and a reset after VNIC_DRV_INIT_RETRIES every
 * 100 ms for as long as the link is wanted: a partner that went away comes
 * back when it comes back.
 */
static void send_init(struct vnic_drv *drv)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	send_msg(drv, &m);
	drv->timer_ns =
		vnic_now_ns() + (drv->init_tries < VNIC_DRV_INIT_RETRIES ? VNIC_DRV_INIT_RETRY_NS
									 : VNIC_DRV_INIT_SLOW_NS);
}

void vnic_drv_start_init(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_INIT);
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

#define QC_ALL ((1u << QC_MAX) - 1)
#define RC_ALL ((1u << RC_MAX) - 1)

/* The queries not answered yet (all of them the first time). */
static void send_queries(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < QC_MAX; i++)
		if (!(drv->qc_done & 1u << i))
			send_cap(drv, VNIC_CMD_QUERY_CAPABILITY, qcap_ids[i], 0);
}

static void send_requests(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < RC_MAX; i++)
		if (!(drv->rc_done & 1u << i))
			send_cap(drv, VNIC_CMD_REQUEST_CAPABILITY, rcap_ids[i], drv->rcap[i]);
}

static void start_version(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_VERSION);
	send_version(drv);
}

static void start_queries(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_QUERY);
	drv->qc_done = 0;
	send_queries(drv);
}

/* A round of REQUEST_CAPABILITY with the numbers in rcap. */
static void request_round(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_REQUEST);
	drv->rc_done = 0;
	drv->cap_partial = false;
	send_requests(drv);
}

static void start_requests(struct vnic_drv *drv)
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
	request_round(drv);
}

/* Every request granted: what we run with, checked against what we can hold. */
static int adopt_requests(struct vnic_drv *drv)
{
	const uint32_t *r = drv->rcap;
	uint64_t max_ind = drv->qcap[QC_MAX_IND_DESCS];
	uint32_t cur;

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
	/* A fallback to 16 (tx.c flush_error) is for good, as upstream's: resets keep it. */
	cur = drv->ind_descs;
	if (drv->rst.ind_safe && cur > VNIC_SAFE_IND_DESCS)
		cur = VNIC_SAFE_IND_DESCS;
	vnic_ctr_store(&drv->cur_ind, cur);
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
static void query_rx_buf(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_RXBUF);
	send_cap(drv, VNIC_CMD_QUERY_CAPABILITY, VNIC_CAP_RX_BUF_SIZE, 0);
}

/*
 * The offload buffers. A command sent again (a timeout, a reset) may still
 * be answered for its first sending: the device writes the query buffer
 * that sending named, or reads its control buffer. So every sending names
 * a buffer of its own, free until an answer naming it comes back, and only
 * the answer naming the latest counts.
 */
static uint32_t ol_off(enum drv_ol_kind k, unsigned int slot)
{
	uint32_t base = k == OL_QUERY ? CTL_OFFLOAD_QUERY_OFF : CTL_OFFLOAD_CONTROL_OFF;

	return base + slot * (uint32_t)sizeof(struct vnic_ip_offload);
}

/* The buffer of the latest command of kind k. */
static uint8_t *ol_cur(struct vnic_drv *drv, enum drv_ol_kind k)
{
	return drv->ctl + ol_off(k, drv->ol_slots[k].cur);
}

/* A buffer no command the device may still answer names; -EBUSY if none. */
static int ol_claim(struct vnic_drv *drv, enum drv_ol_kind k)
{
	struct drv_ol_slots *s = &drv->ol_slots[k];
	unsigned int i, slot;

	for (i = 0; i < CTL_OFFLOAD_SLOTS; i++) {
		slot = (s->next + i) % CTL_OFFLOAD_SLOTS;
		if (!(s->busy & 1u << slot)) {
			s->busy |= (uint16_t)(1u << slot);
			s->cur = (uint8_t)slot;
			s->next = (uint8_t)((slot + 1) % CTL_OFFLOAD_SLOTS);
			return 0;
		}
	}
	return -EBUSY;
}

/*
 * Whether an answer is the one to the latest command of kind k. Any answer
 * naming a busy buffer frees it: the device is done with it once it has
 * answered. One naming an earlier buffer (the answer to a sending before a
 * resend), none of ours, or one freed already (a duplicate) does not count.
 */
static bool ol_answer(struct vnic_drv *drv, enum drv_ol_kind k, const struct vnic_crq *m)
{
	struct drv_ol_slots *s = &drv->ol_slots[k];
	uint64_t off = vnic_be64_get(&m->ip_offload.ioba) - drv->ctl_ioba - ol_off(k, 0);
	uint64_t slot = off / sizeof(struct vnic_ip_offload);

	if (off % sizeof(struct vnic_ip_offload) || slot >= CTL_OFFLOAD_SLOTS ||
	    !(s->busy & 1u << slot))
		return false;
	s->busy &= (uint16_t)~(1u << slot);
	return slot == s->cur;
}

/*
 * Sends cmd naming a fresh buffer holding body (zeroes if NULL). With every
 * buffer still named by an unanswered command (sixteen lost answers since
 * the device's last INIT), nothing is sent: the state times out and the
 * bring-up fails into a reset, whose INIT frees them.
 */
static void send_offload(struct vnic_drv *drv, uint8_t cmd, enum drv_ol_kind k,
			 const struct vnic_ip_offload *body)
{
	struct vnic_crq m;

	if (ol_claim(drv, k)) {
		vnic_ctr_inc(&drv->st.crq_send_errors);
		return;
	}
	if (body)
		memcpy(ol_cur(drv, k), body, sizeof(*body));
	else
		memset(ol_cur(drv, k), 0, sizeof(struct vnic_ip_offload));
	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.ip_offload.len, sizeof(struct vnic_ip_offload));
	vnic_be64_put(&m.ip_offload.ioba, drv->ctl_ioba + ol_off(k, drv->ol_slots[k].cur));
	send_cmd(drv, &m, cmd);
}

/* The device's INIT_COMPLETE follows every command sent before our INIT: none is pending. */
static void ol_release_all(struct vnic_drv *drv)
{
	drv->ol_slots[OL_QUERY].busy = 0;
	drv->ol_slots[OL_CONTROL].busy = 0;
}

static void query_offload(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_QUERY_OFFLOAD);
	send_offload(drv, VNIC_CMD_QUERY_IP_OFFLOAD, OL_QUERY, NULL);
}

/* A control command sent again carries what the latest one did. */
static void resend_control(struct vnic_drv *drv)
{
	struct vnic_ip_offload c;

	memcpy(&c, ol_cur(drv, OL_CONTROL), sizeof(c));
	send_offload(drv, VNIC_CMD_CONTROL_IP_OFFLOAD, OL_CONTROL, &c);
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
	uint32_t max_tx, max_rx;

	memcpy(&q, ol_cur(drv, OL_QUERY), sizeof(q));
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
	/*
	 * Large receive: ibmvnic leaves it off; ours takes it when offered (a
	 * device whose cable carries superframes, docs/PROTOCOL.md section
	 * 8.5) and each one fits an aggregate packet. bad_packet_rx 0: we
	 * verify nothing twice.
	 */
	max_rx = vnic_be32_get(&q.max_large_rx_size);
	c.large_rx_ipv4 = on(q.large_rx_ipv4, lso && max_rx && max_rx <= VNIC_PKT_MAX_LEN);
	c.large_rx_ipv6 = on(q.large_rx_ipv6, lso && max_rx && max_rx <= VNIC_PKT_MAX_LEN);

	vnic_ctr_store(&drv->ol.tcp4, c.tcp_ipv4_chksum);
	vnic_ctr_store(&drv->ol.udp4, c.udp_ipv4_chksum);
	vnic_ctr_store(&drv->ol.tcp6, c.tcp_ipv6_chksum);
	vnic_ctr_store(&drv->ol.udp6, c.udp_ipv6_chksum);
	vnic_ctr_store(&drv->ol.lso4, c.large_tx_ipv4);
	vnic_ctr_store(&drv->ol.lso6, c.large_tx_ipv6);
	vnic_ctr_store(&drv->ol.large_rx4, c.large_rx_ipv4);
	vnic_ctr_store(&drv->ol.large_rx6, c.large_rx_ipv6);
	drv->lro_max = c.large_rx_ipv4 || c.large_rx_ipv6 ? max_rx : 0;
	max_tx = vnic_be32_get(&q.max_large_tx_size);
	drv->gso_max = VNIC_TSO_BUF_SIZE + VNIC_MAX_HDRS;
	if (max_tx && max_tx < drv->gso_max)
		drv->gso_max = max_tx;
	drv->min_mss = vnic_be16_get(&q.min_large_tx_mss);
	vnic_drv_set_state(drv, DRV_CONTROL_OFFLOAD);
	send_offload(drv, VNIC_CMD_CONTROL_IP_OFFLOAD, OL_CONTROL, &c);
	return 0;
}

static bool map_answered(const struct vnic_drv *drv, uint8_t id)
{
	return drv->map_done[id / 64] & 1ull << (id % 64);
}

static void map_answer(struct vnic_drv *drv, uint8_t id)
{
	drv->map_done[id / 64] |= 1ull << (id % 64);
}

/* Every map id 1..nmaps answered. */
static bool maps_all_answered(const struct vnic_drv *drv)
{
	unsigned int id;

	for (id = 1; id <= drv->nmaps; id++)
		if (!map_answered(drv, (uint8_t)id))
			return false;
	return true;
}

struct map_ctx {
	struct vnic_drv *drv;
	uint8_t cmd;
	unsigned int sent;
};

/* REQUEST_MAP (or UNMAP) of one LTB, unless its answer is in already. */
static void send_map(void *ctx, struct drv_ltb *l)
{
	struct map_ctx *c = ctx;
	struct vnic_crq m;

	if (!l->map_id || map_answered(c->drv, l->map_id))
		return;
	memset(&m, 0, sizeof(m));
	m.map.map_id = l->map_id;
	vnic_be32_put(&m.map.len, (uint32_t)l->len);
	vnic_be32_put(&m.map.ioba, (uint32_t)l->ioba);
	send_cmd(c->drv, &m, c->cmd);
	c->sent++;
}

static unsigned int send_maps(struct vnic_drv *drv, uint8_t cmd)
{
	struct map_ctx c = {.drv = drv, .cmd = cmd};

	vnic_drv_ltbs(drv, send_map, &c);
	return c.sent;
}

void vnic_drv_release_maps(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_RESET_UNMAP);
	memset(drv->map_done, 0, sizeof(drv->map_done));
	if (!send_maps(drv, VNIC_CMD_REQUEST_UNMAP))
		vnic_drv_reset_unmapped(drv);
}

/*
 * Step 6: pools carved and mapped, one REQUEST_MAP per LTB. Pools replaced
 * here (a new MTU or ring size) are freed at once: the device answered our
 * INIT, which made it forget every buffer of ours (its engines run on the
 * thread that handled it), so nothing of it still reads or writes them.
 */
static int request_maps(struct vnic_drv *drv)
{
	int err;

	err = vnic_drv_pools_alloc(drv);
	if (err)
		return err;
	vnic_drv_set_state(drv, DRV_MAP);
	memset(drv->map_done, 0, sizeof(drv->map_done));
	drv->nmaps = vnic_drv_ltbs(drv, NULL, NULL);
	send_maps(drv, VNIC_CMD_REQUEST_MAP);
	return 0;
}

static uint32_t login_len(const struct vnic_drv *drv)
{
	return sizeof(struct vnic_login_buf) + 4 * (drv->ntx + drv->nrx);
}

/*
 * A LOGIN naming the buffer login_write filled. A timeout sends it again
 * unchanged, buffer included: the device may still be reading it for the
 * first sending (a slow server), so it is written once per login step.
 */
static void login_send(struct vnic_drv *drv)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	vnic_be16_put(&m.login.len, (uint16_t)login_len(drv));
	vnic_be64_put(&m.login.ioba, drv->ctl_ioba + CTL_LOGIN_OFF);
	send_cmd(drv, &m, VNIC_CMD_LOGIN);
}

/*
 * Step 7: our completion rings, tx first, then rx. Written when the step
 * starts: the device answered our INIT since it last read the buffer.
 */
static void login_write(struct vnic_drv *drv)
{
	struct vnic_login_buf *lb = (void *)(drv->ctl + CTL_LOGIN_OFF);
	uint8_t *arr = drv->ctl + CTL_LOGIN_OFF + sizeof(*lb);
	uint32_t len = login_len(drv), i;

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
	/* A stale response (an earlier login step's) must not pass for the new one. */
	memset(drv->ctl + CTL_LOGIN_RSP_OFF, 0, VNIC_LOGIN_RSP_BUF_MAX);
}

static void start_login(struct vnic_drv *drv)
{
	vnic_drv_set_state(drv, DRV_LOGIN);
	login_write(drv);
	login_send(drv);
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

static void ignore(struct vnic_drv *drv)
{
	vnic_ctr_inc(&drv->st.crq_ignored);
}

/* A refused map or login: the device's memory, or anything else it did not like. */
static int rc_errno(uint8_t rc)
{
	return rc == VNIC_RC_NOMEMORY ? -ENOMEM : -EPROTO;
}

static int on_version(struct vnic_drv *drv, const struct vnic_crq *m)
{
	if (m->rc || vnic_be16_get(&m->version.version) != VNIC_PROTO_VERSION)
		return -EPROTO;
	start_queries(drv);
	return 0;
}

static int on_query_cap(struct vnic_drv *drv, const struct vnic_crq *m)
{
	uint16_t cap = vnic_be16_get(&m->cap.capability);
	uint64_t v = vnic_be64_get(&m->cap.number);
	unsigned int i;

	if (drv->state == DRV_RXBUF) {
		if (cap != VNIC_CAP_RX_BUF_SIZE) {
			ignore(drv);
			return 0;
		}
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
		query_offload(drv);
		return 0;
	}
	for (i = 0; i < QC_MAX; i++)
		if (qcap_ids[i] == cap)
			break;
	/* not ours, or answered already (a duplicate, or the answer to a resend) */
	if (i == QC_MAX || (drv->qc_done & 1u << i)) {
		ignore(drv);
		return 0;
	}
	if (m->rc)
		return -EPROTO;
	drv->qcap[i] = v;
	drv->qc_done |= 1u << i;
	if (drv->qc_done == QC_ALL)
		start_requests(drv);
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
	if (i == RC_MAX || (drv->rc_done & 1u << i)) {
		ignore(drv);
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
	drv->rc_done |= 1u << i;
	if (drv->rc_done != RC_ALL)
		return 0;
	if (drv->cap_partial) {
		if (++drv->cap_round > VNIC_DRV_CAP_ROUNDS)
			return -EPROTO;
		request_round(drv);
		return 0;
	}
	if (adopt_requests(drv))
		return -EPROTO;
	query_rx_buf(drv);
	return 0;
}

static int on_map(struct vnic_drv *drv, const struct vnic_crq *m)
{
	uint8_t id = m->map.map_id;

	if (!id || id > drv->nmaps || map_answered(drv, id)) {
		ignore(drv);
		return 0;
	}
	if (m->rc)
		return rc_errno(m->rc);
	map_answer(drv, id);
	if (maps_all_answered(drv))
		start_login(drv);
	return 0;
}

/*
 * A reset releasing its maps: any answer will do. SUCCESS unmapped it;
 * PARAMETER or INVALIDSTATE say the device has no such map (any more).
 */
static void on_unmap(struct vnic_drv *drv, const struct vnic_crq *m)
{
	uint8_t id = m->map.map_id;

	if (!id || id > drv->nmaps || map_answered(drv, id)) {
		ignore(drv);
		return;
	}
	map_answer(drv, id);
	if (maps_all_answered(drv))
		vnic_drv_reset_unmapped(drv);
}

static int on_login(struct vnic_drv *drv, const struct vnic_crq *m)
{
	int err;

	if (m->rc)
		return rc_errno(m->rc);
	err = login_rsp(drv);
	if (err)
		return err;
	return vnic_drv_link_up_start(drv);
}

static int on_link_state(struct vnic_drv *drv, const struct vnic_crq *m)
{
	uint8_t state = m->link_state.state;

	/* A query has its own answer, whatever we are doing (reset.c: the probe). */
	if (state == VNIC_LINK_QUERY) {
		vnic_drv_reset_probe_answer(drv, m->rc);
		return 0;
	}
	switch (drv->state) {
	case DRV_LINK_UP:
		/* a late down's answer (a duplicate of a reset's) is not ours */
		if (state != VNIC_LINK_UP)
			break;
		if (m->rc)
			return -EPROTO;
		link_up_done(drv);
		return 0;
	case DRV_LINK_DOWN:
		if (state != VNIC_LINK_DOWN)
			break;
		/*
		 * The device completed everything before answering
		 * (docs/PROTOCOL.md section 2, "Close").
		 */
		close_done(drv, 0);
		/* an open arrived while we were closing: its answer comes from the link-up */
		if (drv->admin_up && vnic_drv_link_up_start(drv))
			bringup_fail(drv, -EIO);
		return 0;
	case DRV_RESET_DOWN:
		if (state != VNIC_LINK_DOWN)
			break;
		vnic_drv_reset_down_done(drv, m->rc);
		return 0;
	default:
		break;
	}
	ignore(drv);
	return 0;
}

/*
 * The partner forgot us (a transport event, its INIT) outside any reset: an
 * open in progress fails, a close in progress is done (nothing is left to
 * give back), nothing at all happens while closed. true if handled here.
 */
static bool partner_lost(struct vnic_drv *drv)
{
	if (drv->rst.active)
		return false;
	if (in_bringup(drv)) {
		bringup_fail(drv, -ECONNRESET);
		return true;
	}
	if (drv->state == DRV_LINK_DOWN) {
		vnic_drv_datapath_stop(drv);
		vnic_drv_set_state(drv, DRV_CLOSED);
		vnic_ctr_inc(&drv->st.closes);
		/* an open arrived while we were closing: from INIT, then */
		if (drv->admin_up)
			vnic_drv_start_init(drv);
		else
			vnic_drv_finish(drv, 0);
		return true;
	}
	return drv->state == DRV_CLOSED;
}

/* The partner is (back) there: INIT from its side. */
static void on_partner_init(struct vnic_drv *drv)
{
	if (drv->state == DRV_INIT) {
		/* our INIT may have found it gone: it is back, say it again now */
		send_init(drv);
		return;
	}
	if (drv->state == DRV_CLOSED && !drv->rst.active) {
		ignore(drv);
		return;
	}
	if (!partner_lost(drv))
		vnic_drv_reset_partner_init(drv);
}

static int dispatch_init(struct vnic_drv *drv, const struct vnic_crq *m)
{
	if (m->init.type == VNIC_CRQ_INIT_COMPLETE && drv->state == DRV_INIT) {
		ol_release_all(drv);
		start_version(drv);
		return 0;
	}
	if (m->init.type == VNIC_CRQ_INIT) {
		on_partner_init(drv);
		return 0;
	}
	ignore(drv);
	return 0;
}

static void on_xport(struct vnic_drv *drv, const struct vnic_crq *m)
{
	vnic_ctr_inc(&drv->st.xport_events);
	if (partner_lost(drv))
		return;
	switch (m->xport.reason) {
	case VNIC_XPORT_FAILOVER:
		vnic_drv_reset_request(drv, RST_FAILOVER);
		return;
	case VNIC_XPORT_MIGRATED:
		vnic_drv_reset_request(drv, RST_MOBILITY);
		return;
	default:
		/* closed, reset requested, or a reason we do not know: all fatal */
		vnic_drv_reset_request(drv, RST_XPORT);
		return;
	}
}

/* ERROR_INDICATION: a reset, fatal or not (ibmvnic's handle_error_indication). */
static void on_error(struct vnic_drv *drv, const struct vnic_crq *m)
{
	vnic_ctr_inc(&drv->st.error_indications);
	/* not logged in: there is nothing to reset */
	if (drv->state == DRV_CLOSED && !drv->rst.active)
		return;
	vnic_drv_reset_request(drv, m->error.flags & VNIC_ERR_FATAL ? RST_FATAL : RST_NON_FATAL);
}

/* One response or command, in drv->state. Returns -errno to fail the bring-up. */
static int dispatch(struct vnic_drv *drv, const struct vnic_crq *m)
{
	switch (m->first) {
	case VNIC_CRQ_INIT_CMD:
		return dispatch_init(drv, m);
	case VNIC_CRQ_XPORT_EVENT:
		on_xport(drv, m);
		return 0;
	case VNIC_CRQ_CMD_RSP:
		break;
	default:
		ignore(drv);
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
		if (ol_answer(drv, OL_QUERY, m) && drv->state == DRV_QUERY_OFFLOAD)
			return m->rc ? -EPROTO : control_offload(drv);
		break;
	case VNIC_CMD_CONTROL_IP_OFFLOAD_RSP:
		if (ol_answer(drv, OL_CONTROL, m) && drv->state == DRV_CONTROL_OFFLOAD)
			return m->rc ? -EPROTO : request_maps(drv);
		break;
	case VNIC_CMD_REQUEST_MAP_RSP:
		if (drv->state == DRV_MAP)
			return on_map(drv, m);
		break;
	case VNIC_CMD_REQUEST_UNMAP_RSP:
		if (drv->state == DRV_RESET_UNMAP) {
			on_unmap(drv, m);
			return 0;
		}
		break;
	case VNIC_CMD_LOGIN_RSP:
		if (drv->state == DRV_LOGIN)
			return on_login(drv, m);
		break;
	case VNIC_CMD_LOGICAL_LINK_STATE_RSP:
		return on_link_state(drv, m);
	case VNIC_CMD_LINK_STATE_INDICATION:
		vnic_ctr_set(&drv->carrier, m->link_ind.phys_link_state == VNIC_LINK_UP &&
						    m->link_ind.logical_link_state == VNIC_LINK_UP);
		return 0;
	case VNIC_CMD_ERROR_INDICATION:
		on_error(drv, m);
		return 0;
	default:
		break;
	}
	ignore(drv);
	return 0;
}

/* --- requests from open and close ---------------------------------------------- */

/* A reset in progress, or waiting to retry: the control path is the reset's. */
static bool resetting(const struct vnic_drv *drv)
{
	return drv->rst.active || drv->state == DRV_RESET_WAIT;
}

static void on_request(struct vnic_drv *drv, uint64_t word)
{
	enum drv_req kind = (enum drv_req)(word & 3);
	uint64_t seq = word >> 2;

	switch (kind) {
	case REQ_OPEN:
		drv->cur_seq = seq;
		drv->admin_up = true;
		if (resetting(drv))
			return; /* the reset's end answers */
		if (drv->state == DRV_CLOSED)
			vnic_drv_start_init(drv);
		else if (drv->state == DRV_DOWN && vnic_drv_link_up_start(drv))
			bringup_fail(drv, -EIO);
		else if (drv->state == DRV_OPEN)
			vnic_drv_finish(drv, 0);
		/* bring-up or close in progress: its end answers */
		return;
	case REQ_CLOSE:
		drv->cur_seq = seq;
		drv->admin_up = false;
		if (resetting(drv)) {
			/* nothing of a half-done reset stays: the next open starts from INIT */
			vnic_drv_reset_abort(drv);
			vnic_drv_finish(drv, 0);
		} else if (drv->state == DRV_OPEN) {
			if (start_close(drv))
				close_abort(drv, 0); /* the device is gone: nothing to wait for */
		} else if (in_bringup(drv)) {
			bringup_fail(drv, 0);
		} else if (drv->state != DRV_LINK_DOWN) {
			vnic_drv_finish(drv, 0);
		}
		return;
	case REQ_ABORT:
		/* The waiter gave up: whatever is in progress ends now. */
		drv->cur_seq = seq;
		if (resetting(drv)) {
			drv->admin_up = false;
			vnic_drv_reset_abort(drv);
			vnic_drv_finish(drv, -ETIMEDOUT);
		} else if (in_bringup(drv)) {
			bringup_fail(drv, -ETIMEDOUT);
		} else if (drv->state == DRV_LINK_DOWN) {
			close_abort(drv, -ETIMEDOUT);
		} else {
			drv->cur_seq = 0; /* already answered */
		}
		return;
	default:
		return;
	}
}

/* --- timeouts ------------------------------------------------------------------------ */

/* Sends again what the state is still waiting for (a lost command or a lost answer). */
static void resend(struct vnic_drv *drv)
{
	switch (drv->state) {
	case DRV_VERSION:
		send_version(drv);
		break;
	case DRV_QUERY:
		send_queries(drv);
		break;
	case DRV_REQUEST:
		send_requests(drv);
		break;
	case DRV_RXBUF:
		send_cap(drv, VNIC_CMD_QUERY_CAPABILITY, VNIC_CAP_RX_BUF_SIZE, 0);
		break;
	case DRV_QUERY_OFFLOAD:
		send_offload(drv, VNIC_CMD_QUERY_IP_OFFLOAD, OL_QUERY, NULL);
		break;
	case DRV_CONTROL_OFFLOAD:
		resend_control(drv);
		break;
	case DRV_MAP:
		send_maps(drv, VNIC_CMD_REQUEST_MAP);
		break;
	case DRV_LOGIN:
		login_send(drv);
		break;
	case DRV_LINK_UP:
		vnic_drv_send_link_state(drv, VNIC_LINK_UP);
		break;
	case DRV_LINK_DOWN:
	case DRV_RESET_DOWN:
		vnic_drv_send_link_state(drv, VNIC_LINK_DOWN);
		break;
	case DRV_RESET_UNMAP:
		send_maps(drv, VNIC_CMD_REQUEST_UNMAP);
		break;
	default:
		break;
	}
}

static void on_timer(struct vnic_drv *drv, uint64_t now)
{
	drv->timer_ns = 0;
	if (drv->state == DRV_INIT) {
		/* an open gives up after VNIC_DRV_INIT_RETRIES; a reset does not */
		if (!drv->rst.active && drv->init_tries + 1 >= VNIC_DRV_INIT_RETRIES) {
			bringup_fail(drv, -ETIMEDOUT);
			return;
		}
		drv->init_tries++;
		vnic_ctr_inc(&drv->st.init_retries);
		send_init(drv);
		return;
	}
	if (!waits_answer(drv->state))
		return;
	/* a close waits for as long as its caller does (REQ_ABORT ends it) */
	if (++drv->tries > VNIC_DRV_CMD_RETRIES && drv->state != DRV_LINK_DOWN) {
		if (in_bringup(drv))
			fail_bringup(drv, -ETIMEDOUT);
		else
			vnic_drv_reset_fail(drv, -ETIMEDOUT);
		return;
	}
	vnic_ctr_inc(&drv->st.cmd_retries);
	resend(drv);
	drv->timer_ns = now + VNIC_DRV_CMD_TIMEOUT_NS;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : (int64_t)(a - b) < 0 ? a : b;
}

int vnic_drv_ctl_poll(struct vnic_napi *napi, int budget)
{
	struct vnic_drv *drv = vnic_container_of(napi, struct vnic_drv, ctl_napi);
	struct vnic_crq m;
	uint64_t word, now, t;
	int done = 0;

	/* queues on other cpus wait while we work (core/park.c); if one is late, next turn */
	if (vnic_park(&drv->park))
		return budget;
	if (atomic_exchange_explicit(&drv->suspect_req, false, memory_order_acquire))
		vnic_drv_partner_suspect_now(drv);
	word = atomic_exchange_explicit(&drv->req, REQ_NONE, memory_order_acquire);
	if (word)
		on_request(drv, word);
	vnic_drv_live_poll(drv);
	while (vnic_hv_crq_recv(drv->hv, VNIC_HV_CLIENT, &m)) {
		bool was_bringup = in_bringup(drv);
		int err = dispatch(drv, &m);

		if (err && was_bringup && in_bringup(drv))
			fail_bringup(drv, err);
		done++;
	}
	now = vnic_now_ns();
	if (drv->timer_ns && (int64_t)(now - drv->timer_ns) >= 0)
		on_timer(drv, now);
	/* resets last: they start only once everything above is settled */
	t = vnic_drv_reset_poll(drv, now);
	vnic_unpark(&drv->park);
	vnic_poller_set_timer(&napi->poller, earliest(drv->timer_ns, t));
	/* The control path has no budget to respect: everything was handled. */
	return done < budget ? done : budget - 1;
}
