/* SPDX-License-Identifier: MIT */
/*
 * Driver resources.
 *
 * At create (control path, before any message): the control page (login,
 * login response and offload buffers), one tx completion and one rx
 * completion sub-CRQ per queue asked for, and one indirect array per queue.
 * They live until destroy: the device's thread may raise a ring's interrupt
 * at any time, and a ring that is never freed before destroy can never be
 * freed under a running handler. Their sizes come from what was asked for,
 * which bounds whatever the device grants.
 *
 * At bring-up, once the sizes are negotiated: the long-term buffer pools
 * (docs/PROTOCOL.md section 7, "Pool sizes") and the packet pools rx hands
 * up. Kept across close/open, and reused by a later bring-up when they are
 * big enough; the packet pools also outlive a reset, since the host may
 * still hold packets from them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "driver/drv_int.h"

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* --- rings and indirect arrays (create) ----------------------------------- */

static int ind_alloc(struct vnic_drv *drv, union vnic_subcrq_entry **ind, uint64_t *ioba)
{
	size_t len = VNIC_MAX_IND_DESCS * sizeof(**ind);
	int err;

	*ind = vnic_hv_dma_alloc(drv->hv, len);
	if (!*ind)
		return -ENOMEM;
	err = vnic_hv_dma_map(drv->hv, *ind, len, ioba);
	if (err) {
		vnic_hv_dma_free(drv->hv, *ind);
		*ind = NULL;
	}
	return err;
}

static void ind_free(struct vnic_drv *drv, union vnic_subcrq_entry **ind, uint64_t ioba)
{
	if (!*ind)
		return;
	vnic_hv_dma_unmap(drv->hv, ioba);
	vnic_hv_dma_free(drv->hv, *ind);
	*ind = NULL;
}

int vnic_drv_res_create(struct vnic_drv *drv)
{
	/*
	 * A completion ring holds every packet (rx: buffer) that may be in
	 * flight, with the most entries a change-param may ask for.
	 */
	uint32_t max = drv->cfg.max_entries;
	uint32_t txc = pow2_at_least(max > drv->cfg.tx_entries ? max : drv->cfg.tx_entries);
	uint32_t rxc = pow2_at_least(max > drv->cfg.rx_entries ? max : drv->cfg.rx_entries);
	unsigned int i;
	int err;

	drv->txc_size = txc;
	drv->rxc_size = rxc;
	drv->ctl = vnic_hv_dma_alloc(drv->hv, CTL_PAGE);
	if (!drv->ctl)
		return -ENOMEM;
	err = vnic_hv_dma_map(drv->hv, drv->ctl, CTL_PAGE, &drv->ctl_ioba);
	if (err) {
		vnic_hv_dma_free(drv->hv, drv->ctl);
		drv->ctl = NULL;
		return err;
	}
	for (i = 0; i < drv->qtx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		err = vnic_hv_reg_subcrq(drv->hv, VNIC_HV_CLIENT, txc, &txq->comp);
		if (err)
			goto err_destroy;
		vnic_hv_subcrq_set_irq(txq->comp, vnic_drv_txc_irq, txq);
		err = ind_alloc(drv, &txq->ind, &txq->ind_ioba);
		if (err)
			goto err_destroy;
	}
	for (i = 0; i < drv->qrx; i++) {
		struct drv_rxq *rxq = &drv->rxq[i];

		err = vnic_hv_reg_subcrq(drv->hv, VNIC_HV_CLIENT, rxc, &rxq->comp);
		if (err)
			goto err_destroy;
		vnic_hv_subcrq_set_irq(rxq->comp, vnic_drv_rxc_irq, rxq);
		err = ind_alloc(drv, &rxq->ind, &rxq->ind_ioba);
		if (err)
			goto err_destroy;
	}
	return 0;

err_destroy:
	vnic_drv_res_destroy(drv);
	return err;
}

void vnic_drv_res_destroy(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->qtx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		if (txq->comp) {
			vnic_hv_subcrq_irq_disable(txq->comp);
			vnic_hv_free_subcrq(drv->hv, txq->comp);
			txq->comp = NULL;
		}
		ind_free(drv, &txq->ind, txq->ind_ioba);
	}
	for (i = 0; i < drv->qrx; i++) {
		struct drv_rxq *rxq = &drv->rxq[i];

		if (rxq->comp) {
			vnic_hv_subcrq_irq_disable(rxq->comp);
			vnic_hv_free_subcrq(drv->hv, rxq->comp);
			rxq->comp = NULL;
		}
		ind_free(drv, &rxq->ind, rxq->ind_ioba);
	}
	if (drv->ctl) {
		vnic_hv_dma_unmap(drv->hv, drv->ctl_ioba);
		vnic_hv_dma_free(drv->hv, drv->ctl);
		drv->ctl = NULL;
	}
}

/* --- long-term buffer pools (bring-up) ---------------------------------------- */

/*
 * Field by field, not memset: count and nfree are read by the counters
 * (vnic_drv_counters, vnic_drv_pools_full) from any thread, also while a
 * bring-up replaces the pools.
 */
static void pool_clear(struct drv_pool *p)
{
	p->ltb = NULL;
	p->nltb = 0;
	vnic_ctr_set32(&p->count, 0);
	p->buf_size = 0;
	p->per_ltb = 0;
	p->free_map = NULL;
	vnic_ctr_set32(&p->nfree, 0);
}
static_assert(sizeof(struct drv_pool) == 40, "pool_clear clears every field of struct drv_pool");

static void pool_free(struct vnic_drv *drv, struct drv_pool *p)
{
	unsigned int i;

	for (i = 0; i < p->nltb; i++) {
		struct drv_ltb *l = &p->ltb[i];

		if (l->dma_mapped)
			vnic_hv_dma_unmap(drv->hv, l->ioba);
		vnic_hv_dma_free(drv->hv, l->mem);
	}
	free(p->ltb);
	free(p->free_map);
	pool_clear(p);
}

/* Every slot free again (its LTBs stay mapped). */
static void pool_refill(struct drv_pool *p)
{
	uint32_t i;

	/* Stack order: slot 0 is taken first. */
	for (i = 0; i < p->count; i++)
		p->free_map[i] = p->count - 1 - i;
	vnic_ctr_set32(&p->nfree, p->count);
}

/*
 * l->mem and l->len into the DMA window: dma_mapped set, or nothing mapped.
 * REQUEST_MAP carries the ioba in 32 bits (proto.h VNIC_IOBA_LIMIT).
 */
static int ltb_map(struct vnic_drv *drv, struct drv_ltb *l)
{
	int err = vnic_hv_dma_map(drv->hv, l->mem, l->len, &l->ioba);

	if (err)
		return err;
	if (l->ioba >= VNIC_IOBA_LIMIT || l->len > VNIC_IOBA_LIMIT - l->ioba) {
		vnic_hv_dma_unmap(drv->hv, l->ioba);
		return -ERANGE;
	}
	l->dma_mapped = true;
	return 0;
}

static int pool_init(struct vnic_drv *drv, struct drv_pool *p, uint32_t count, uint32_t buf_size)
{
	uint32_t left;
	unsigned int i;
	int err = -ENOMEM;

	pool_clear(p);
	if (!count || !buf_size || buf_size > VNIC_ONE_LTB_SIZE)
		return -EINVAL;
	vnic_ctr_set32(&p->count, count);
	p->buf_size = buf_size;
	p->per_ltb = VNIC_ONE_LTB_SIZE / buf_size;
	p->nltb = (count + p->per_ltb - 1) / p->per_ltb;
	p->ltb = calloc(p->nltb, sizeof(*p->ltb));
	p->free_map = calloc(count, sizeof(*p->free_map));
	if (!p->ltb || !p->free_map)
		goto err_free;
	left = count;
	for (i = 0; i < p->nltb; i++) {
		struct drv_ltb *l = &p->ltb[i];
		uint32_t n = left < p->per_ltb ? left : p->per_ltb;

		l->len = (uint64_t)n * buf_size;
		l->mem = vnic_hv_dma_alloc(drv->hv, l->len);
		if (!l->mem)
			goto err_free;
		err = ltb_map(drv, l);
		if (err)
			goto err_free;
		left -= n;
	}
	pool_refill(p);
	return 0;

err_free:
	pool_free(drv, p);
	return err;
}

/* Reuses p if it is at least count slots of buf_size bytes, else replaces it. */
static int pool_fit(struct vnic_drv *drv, struct drv_pool *p, uint32_t count, uint32_t buf_size)
{
	if (p->count >= count && p->buf_size >= buf_size && p->count) {
		pool_refill(p);
		return 0;
	}
	pool_free(drv, p);
	return pool_init(drv, p, count, buf_size);
}

static int txq_pools(struct vnic_drv *drv, struct drv_txq *txq)
{
	/* ALIGN(req_mtu + 4, 128) as ibmvnic: one VLAN tag more than the frame. */
	uint32_t buf = align_up(drv->mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN, 128);
	uint32_t tso_buf = align_up(VNIC_TSO_BUF_SIZE + VNIC_MAX_HDRS, 128);
	uint32_t old = txq->pool.count, old_tso = txq->tso.count;
	int err;

	err = pool_fit(drv, &txq->pool, drv->tx_entries, buf);
	if (err)
		return err;
	err = pool_fit(drv, &txq->tso, VNIC_TSO_BUFS, tso_buf);
	if (err)
		return err;
	if (!txq->slots || old != txq->pool.count) {
		free(txq->slots);
		txq->slots = calloc(txq->pool.count, sizeof(*txq->slots));
	} else {
		memset(txq->slots, 0, txq->pool.count * sizeof(*txq->slots));
	}
	if (!txq->tso_slots || old_tso != txq->tso.count) {
		free(txq->tso_slots);
		txq->tso_slots = calloc(txq->tso.count, sizeof(*txq->tso_slots));
	} else {
		memset(txq->tso_slots, 0, txq->tso.count * sizeof(*txq->tso_slots));
	}
	if (!txq->slots || !txq->tso_slots)
		return -ENOMEM;
	txq->entries = drv->tx_entries;
	vnic_ctr_set32(&txq->used, 0);
	vnic_ctr_set32(&txq->ind_n, 0);
	txq->batch_pkts = 0;
	txq->batch_bytes = 0;
	return 0;
}

static bool pkt_pool_full(const struct vnic_pkt_pool *p)
{
	return p->nfree == p->count;
}

static void rx_deliver_cb(void *ctx, struct vnic_pkt **pkts, unsigned int n)
{
	struct drv_rxq *rxq = ctx;
	struct vnic_netdev *nd = &rxq->drv->netdev;

	if (vnic_likely(nd->host && nd->host->rx)) {
		uint64_t t0 = vnic_trace_begin(&vnic_drv_tp.deliver);

		nd->host->rx(nd->host_ctx, rxq->idx, pkts, n);
		vnic_trace_end(&vnic_drv_tp.deliver, t0);
		return;
	}
	/* No host attached: the frames have nowhere to go. */
	for (unsigned int i = 0; i < n; i++)
		vnic_pkt_free(pkts[i]);
}

static int rxq_pkt_pools(struct vnic_drv *drv, struct drv_rxq *rxq)
{
	uint32_t count = drv->rx_entries + VNIC_DRV_AGG_BUFS + VNIC_DELIVER_MAX_BATCH;
	uint32_t buf = VNIC_DRV_RX_HEADROOM + rxq->pool.buf_size;
	int err;

	if (rxq->pkt_pools) {
		if (rxq->pkts.count >= count && rxq->pkts.buf_size >= buf)
			goto deliver;
		/* The host still holds packets of the old pools: they must not vanish. */
		if (!pkt_pool_full(&rxq->pkts) || !pkt_pool_full(&rxq->agg))
			return -EBUSY;
		vnic_pkt_pool_fini(&rxq->pkts);
		vnic_pkt_pool_fini(&rxq->agg);
		vnic_ctr_store(&rxq->pkt_pools, false);
	}
	err = vnic_pkt_pool_init(&rxq->pkts, count, buf, VNIC_DRV_RX_HEADROOM);
	if (err)
		return err;
	err = vnic_pkt_pool_init(&rxq->agg, VNIC_DRV_AGG_BUFS,
				 VNIC_DRV_RX_HEADROOM + VNIC_PKT_MAX_LEN, VNIC_DRV_RX_HEADROOM);
	if (err) {
		vnic_pkt_pool_fini(&rxq->pkts);
		return err;
	}
	vnic_ctr_store(&rxq->pkt_pools, true);
deliver:
	err = vnic_deliver_init(&rxq->deliver, drv->cfg.rx_deliver, drv->cfg.deliver_batch,
				&rxq->agg, rx_deliver_cb, rxq);
	if (!err)
		vnic_deliver_set_fraglist(&rxq->deliver, vnic_drv_rx_fraglist(drv));
	return err;
}

bool vnic_drv_rx_fraglist(const struct vnic_drv *drv)
{
	const struct vnic_host_ops *host = drv->netdev.host;

	return drv->cfg.rx_agg == VNIC_DRV_AGG_FRAGS && host &&
	       (host->features & VNIC_HOST_F_FRAGLIST);
}

static int rxq_pools(struct vnic_drv *drv, struct drv_rxq *rxq)
{
	uint32_t old = rxq->pool.count;
	int err;

	err = pool_fit(drv, &rxq->pool, drv->rx_entries, align_up(drv->rx_buf_size, 128));
	if (err)
		return err;
	if (!rxq->posted || old != rxq->pool.count) {
		free(rxq->posted);
		rxq->posted = calloc(rxq->pool.count, 1);
		if (!rxq->posted)
			return -ENOMEM;
	} else {
		memset(rxq->posted, 0, rxq->pool.count);
	}
	vnic_ctr_set32(&rxq->nposted, 0);
	return rxq_pkt_pools(drv, rxq);
}

int vnic_drv_pools_alloc(struct vnic_drv *drv)
{
	unsigned int i;
	int err;

	for (i = 0; i < drv->ntx; i++) {
		err = txq_pools(drv, &drv->txq[i]);
		if (err)
			return err;
	}
	for (i = 0; i < drv->nrx; i++) {
		err = rxq_pools(drv, &drv->rxq[i]);
		if (err)
			return err;
	}
	/* map ids are 8 bits, 0 reserved; the host's pools are a bonus, ours are not */
	if (vnic_drv_ltbs(drv, NULL, NULL) > VNIC_MAX_MAP_ID) {
		for (i = 0; i < drv->qtx; i++) {
			if (drv->txq[i].host.pool)
				vnic_ctr_inc(&drv->st.tx_pools_dropped);
			vnic_drv_hostmem_unmap(drv, &drv->txq[i].host);
		}
	}
	if (vnic_drv_ltbs(drv, NULL, NULL) > VNIC_MAX_MAP_ID)
		return -ENOSPC;
	drv->pools_ready = true;
	return 0;
}

void vnic_drv_pools_free(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->qtx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		pool_free(drv, &txq->pool);
		pool_free(drv, &txq->tso);
		free(txq->slots);
		free(txq->tso_slots);
		txq->slots = NULL;
		txq->tso_slots = NULL;
	}
	for (i = 0; i < drv->qrx; i++) {
		struct drv_rxq *rxq = &drv->rxq[i];

		pool_free(drv, &rxq->pool);
		free(rxq->posted);
		rxq->posted = NULL;
		if (rxq->pkt_pools) {
			vnic_pkt_pool_fini(&rxq->pkts);
			vnic_pkt_pool_fini(&rxq->agg);
			vnic_ctr_store(&rxq->pkt_pools, false);
		}
	}
	drv->pools_ready = false;
}

static unsigned int ltbs_of(struct drv_ltb *ltb, unsigned int nltb, unsigned int n, drv_ltb_fn fn,
			    void *ctx)
{
	unsigned int i;

	for (i = 0; i < nltb; i++) {
		n++;
		/* ids 1..255 in the order REQUEST_MAP sends them; 0 = none left */
		ltb[i].map_id = n <= VNIC_MAX_MAP_ID ? (uint8_t)n : 0;
		if (fn)
			fn(ctx, &ltb[i]);
	}
	return n;
}

unsigned int vnic_drv_ltbs(struct vnic_drv *drv, drv_ltb_fn fn, void *ctx)
{
	unsigned int i, n = 0;

	for (i = 0; i < drv->ntx; i++) {
		n = ltbs_of(drv->txq[i].pool.ltb, drv->txq[i].pool.nltb, n, fn, ctx);
		n = ltbs_of(drv->txq[i].tso.ltb, drv->txq[i].tso.nltb, n, fn, ctx);
	}
	for (i = 0; i < drv->nrx; i++)
		n = ltbs_of(drv->rxq[i].pool.ltb, drv->rxq[i].pool.nltb, n, fn, ctx);
	/* last: a host pool that does not fit takes no id from the driver's own */
	for (i = 0; i < drv->ntx; i++)
		n = ltbs_of(drv->txq[i].host.ltb, drv->txq[i].host.nltb, n, fn, ctx);
	return n;
}

/* --- the host's packet pools (tx-buf=map) ---------------------------------------- */

void vnic_drv_hostmem_unmap(struct vnic_drv *drv, struct drv_hostmem *h)
{
	unsigned int i;

	for (i = 0; i < h->nltb; i++)
		if (h->ltb[i].dma_mapped)
			vnic_hv_dma_unmap(drv->hv, h->ltb[i].ioba);
	free(h->ltb);
	memset(h, 0, sizeof(*h));
}

/* The pool's buffers as LTBs of at most VNIC_ONE_LTB_SIZE, none split between two. */
static int hostmem_map(struct vnic_drv *drv, struct drv_hostmem *h, const struct vnic_pkt_pool *pool)
{
	size_t stride = vnic_pkt_pool_stride(pool);
	uint32_t left = pool->count;
	unsigned int i;
	int err = -ENOMEM;

	if (!pool->count || !pool->mem || stride > VNIC_ONE_LTB_SIZE)
		return -EINVAL;
	h->stride = stride;
	h->count = pool->count;
	h->per_ltb = (uint32_t)(VNIC_ONE_LTB_SIZE / stride);
	h->nltb = (pool->count + h->per_ltb - 1) / h->per_ltb;
	h->ltb = calloc(h->nltb, sizeof(*h->ltb));
	if (!h->ltb)
		goto err_unmap;
	for (i = 0; i < h->nltb; i++) {
		struct drv_ltb *l = &h->ltb[i];
		uint32_t n = left < h->per_ltb ? left : h->per_ltb;

		l->mem = pool->mem + (size_t)i * h->per_ltb * stride;
		l->len = (uint64_t)n * stride;
		err = ltb_map(drv, l);
		if (err)
			goto err_unmap;
		left -= n;
	}
	h->pool = pool;
	return 0;

err_unmap:
	vnic_drv_hostmem_unmap(drv, h);
	return err;
}

int vnic_drv_tx_pool(struct vnic_netdev *nd, unsigned int q, const struct vnic_pkt_pool *pool)
{
	struct vnic_drv *drv = nd->priv;

	if (q >= drv->qtx)
		return -EINVAL;
	/* the device learns of maps at bring-up only */
	if (vnic_ctr_load(&drv->st.opens))
		return -EBUSY;
	vnic_drv_hostmem_unmap(drv, &drv->txq[q].host);
	return pool ? hostmem_map(drv, &drv->txq[q].host, pool) : 0;
}
