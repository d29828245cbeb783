/* SPDX-License-Identifier: MIT */
/*
 * RX: the NAPI poll and rx buffer replenish (docs/PROTOCOL.md sections 9.3
 * and 9.4).
 *
 * One NAPI per rx queue, its interrupt the rx completion ring's. A poll
 * takes up to budget completions, checks each correlator (in range, posted)
 * and the frame's offset and length against the posted buffer, copies the
 * frame out of the long-term buffer into a host packet (the buffer is free
 * again at once), sets the checksum state from the device's flags and, with
 * more than one rx queue, the RSS hash from the frame, and hands it to
 * vnic_deliver (GRO, list batching or both: dpaa2-eth rx list,
 * docs/SEEDS.md). Then it replenishes, when the
 * pool is low (ibmvnic rr 1/7) or, with the "before" policy, after every
 * poll under budget too.
 *
 * tx-reclaim=napi (bcmgenet orphan; as virtio-net): the same poll first reclaims
 * the tx queues mapped to it; their completion interrupts schedule it and
 * are masked and re-armed with it. A queue that leaves the mode at run time
 * is given up at the start of the poll (live.c).
 */
#include <string.h>

#include "driver/drv_int.h"

/* --- interrupts -------------------------------------------------------------- */

void vnic_drv_rxc_irq(void *ctx)
{
	vnic_napi_schedule(&((struct drv_rxq *)ctx)->napi);
}

/*
 * The rx ring, and with tx-reclaim=napi the tx completion rings this NAPI
 * reclaims (txmask), as one source: masked and re-armed together. In the
 * other modes txmask is 0 and this is the rx ring alone. txmask changes
 * only inside this NAPI's own poll or before the NAPI is scheduled to take
 * a queue on (live.c), so a disable in flight on another thread never
 * disarms a ring that another poller owns by then.
 */
static uint32_t napi_txmask(const struct drv_rxq *rxq)
{
	return atomic_load_explicit(&((struct drv_rxq *)rxq)->txmask, memory_order_relaxed);
}

static void rxc_enable(void *ctx)
{
	struct drv_rxq *rxq = ctx;
	uint32_t m;

	for (m = napi_txmask(rxq); m; m &= m - 1)
		vnic_hv_subcrq_irq_enable(rxq->drv->txq[__builtin_ctz(m)].comp);
	vnic_hv_subcrq_irq_enable(rxq->comp);
}

static void rxc_disable(void *ctx)
{
	struct drv_rxq *rxq = ctx;
	uint32_t m;

	vnic_hv_subcrq_irq_disable(rxq->comp);
	for (m = napi_txmask(rxq); m; m &= m - 1)
		vnic_hv_subcrq_irq_disable(rxq->drv->txq[__builtin_ctz(m)].comp);
}

static bool rxc_pending(void *ctx)
{
	struct drv_rxq *rxq = ctx;
	uint32_t m;

	if (vnic_subcrq_pending(rxq->comp))
		return true;
	for (m = napi_txmask(rxq); m; m &= m - 1)
		if (vnic_subcrq_pending(rxq->drv->txq[__builtin_ctz(m)].comp))
			return true;
	return false;
}

const struct vnic_irq_ops vnic_drv_rxc_irq_ops = {
	.enable = rxc_enable,
	.disable = rxc_disable,
	.pending = rxc_pending,
};

/* --- replenish ------------------------------------------------------------------ */

static void buf_free(struct drv_rxq *rxq, uint32_t idx)
{
	uint32_t nfree = rxq->pool.nfree;

	rxq->pool.free_map[nfree] = idx;
	vnic_ctr_set32(&rxq->pool.nfree, nfree + 1);
}

/*
 * Sends n rx buffer adds from the indirect array; a failure gives them all
 * back (docs/PROTOCOL.md section 5 says what each rc means here). Returns
 * VNIC_H_SUCCESS or the rc.
 */
static long rx_flush(struct drv_rxq *rxq, uint32_t n)
{
	struct vnic_drv *drv = rxq->drv;
	uint64_t t0;
	long rc;
	uint32_t i;

	drv_dma_wmb();
	t0 = vnic_trace_begin(&vnic_drv_tp.send_indirect);
	rc = vnic_hv_send_subcrq_indirect(drv->hv, VNIC_HV_CLIENT, rxq->add_handle, rxq->ind_ioba,
					  n);
	vnic_trace_end(&vnic_drv_tp.send_indirect, t0);
	if (vnic_likely(rc == VNIC_H_SUCCESS)) {
		vnic_ctr_add32(&rxq->nposted, n);
		vnic_ctr_add(&rxq->st.replenish_buffers, n);
		return rc;
	}
	for (i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)vnic_be64_get(&rxq->ind[i].rx_add.correlator);

		rxq->posted[idx] = 0;
		buf_free(rxq, idx);
	}
	vnic_ctr_add(&rxq->st.replenish_errors, n);
	if (rc == VNIC_H_PARAMETER && n > VNIC_SAFE_IND_DESCS) {
		/* as a tx flush (tx.c flush_error): the safe 16, for good */
		/* any queue's cpu may fall back: the first one counts it */
		if (__atomic_exchange_n(&drv->cur_ind, VNIC_SAFE_IND_DESCS, __ATOMIC_RELAXED) >
		    VNIC_SAFE_IND_DESCS)
			__atomic_fetch_add(&drv->st.ind_fallbacks, 1, __ATOMIC_RELAXED);
		vnic_ctr_store(&drv->rst.ind_safe, true);
	} else if (rc == VNIC_H_CLOSED || rc == VNIC_H_PARAMETER) {
		vnic_drv_partner_suspect(drv);
	}
	return rc;
}

/*
 * Posts free buffers in batches of at most limit until the ring's share is
 * full or the pool is empty. VNIC_H_SUCCESS, or the rc of the batch that
 * failed (its buffers are back in the pool, the rest were not tried).
 */
static long post(struct drv_rxq *rxq, uint32_t limit)
{
	struct vnic_drv *drv = rxq->drv;
	struct drv_pool *p = &rxq->pool;
	uint32_t n = 0;
	long rc;

	while (rxq->nposted + n < drv->rx_entries && p->nfree) {
		uint32_t idx = p->free_map[p->nfree - 1];
		struct vnic_rx_add *a = &rxq->ind[n++].rx_add;

		vnic_ctr_sub32(&p->nfree, 1);
		memset(a, 0, sizeof(*a));
		a->first = VNIC_SUBCRQ_VALID;
		vnic_be64_put(&a->correlator, idx);
		vnic_be32_put(&a->ioba, (uint32_t)pool_ioba(p, idx));
		a->map_id = pool_ltb(p, idx)->map_id;
		vnic_be24_put(&a->len, rxq->post_len);
		rxq->posted[idx] = 1;
		if (n == limit) {
			rc = rx_flush(rxq, n);
			if (rc != VNIC_H_SUCCESS)
				return rc;
			n = 0;
		}
	}
	return n ? rx_flush(rxq, n) : VNIC_H_SUCCESS;
}

/*
 * Rx adds always go indirect, in batches of the indirect limit
 * (docs/PROTOCOL.md section 9.4). A batch refused for its size is sent
 * again at once in batches of the safe size; any other failure leaves the
 * buffers in the pool and a retry to the NAPI's timer (the device may have
 * none posted: no completion would come to run us).
 */
static unsigned int replenish(struct drv_rxq *rxq)
{
	struct vnic_drv *drv = rxq->drv;
	uint32_t before = rxq->nposted, limit;
	long rc;

	vnic_ctr_inc(&rxq->st.replenish_calls);
	rxq->refill = false;
	do {
		limit = vnic_ctr_load(&drv->cur_ind);
		rc = post(rxq, limit);
	} while (rc != VNIC_H_SUCCESS && vnic_ctr_load(&drv->cur_ind) < limit);
	if (rc != VNIC_H_SUCCESS && rxq->running) {
		rxq->refill = true;
		vnic_poller_set_timer(&rxq->napi.poller, vnic_now_ns() + VNIC_DRV_RX_RETRY_NS);
	}
	return rxq->nposted - before;
}

unsigned int vnic_drv_rx_replenish(struct drv_rxq *rxq)
{
	uint64_t t0 = vnic_trace_begin(&vnic_drv_tp.replenish);
	unsigned int n = replenish(rxq);

	vnic_trace_end(&vnic_drv_tp.replenish, t0);
	VNIC_PROBE2(replenish, rxq->idx, n);
	return n;
}

/* A large receive given up: the buffers still to come of it go with it, up to its END_FRAME. */
static void lro_abandon(struct drv_rxq *rxq, uint8_t flags)
{
	if (rxq->lro) {
		vnic_pkt_free(rxq->lro);
		rxq->lro = NULL;
	}
	rxq->lro_nbufs = 0;
	rxq->lro_skip = !(flags & VNIC_RXC_END_FRAME);
}

/* Completions of buffers the driver took back: the frames go with them. */
static int drop_stale(struct drv_rxq *rxq)
{
	int n = 0;

	while (vnic_subcrq_peek(rxq->comp)) {
		vnic_subcrq_consume(rxq->comp);
		n++;
	}
	vnic_ctr_add(&rxq->st.reset_drained, (uint64_t)n);
	return n;
}

void vnic_drv_rx_forget(struct drv_rxq *rxq)
{
	uint32_t i;

	/* Completions still in the ring are dropped with the buffers they name. */
	drop_stale(rxq);
	lro_abandon(rxq, VNIC_RXC_END_FRAME);
	rxq->refill = false;
	for (i = 0; i < rxq->pool.count; i++) {
		if (rxq->posted[i]) {
			rxq->posted[i] = 0;
			buf_free(rxq, i);
		}
	}
	vnic_ctr_set32(&rxq->nposted, 0);
}

/* --- poll ------------------------------------------------------------------------ */

/*
 * Headers, checksum state and flow hash of a received frame. hash: more
 * than one rx queue, so RSS is on; with one queue a NIC reports no hash
 * and GRO keys every flow to bucket 0, as Linux's does for a packet without
 * one (docs/MECHANISMS.md section 3).
 */
static void rx_meta(struct drv_rxq *rxq, struct vnic_pkt *pkt, uint8_t flags, uint16_t tci,
		    bool hash)
{
	struct vnic_hdrs h;

	if (vnic_likely(vnic_parse_frame(pkt->data, pkt->len, &h) == VNIC_PARSE_OK)) {
		pkt->l2_len = h.l2_len;
		pkt->l3_proto = h.l3_proto;
		pkt->l3_len = h.l3_len;
		pkt->l4_proto = (h.flags & VNIC_HDRS_F_L4) ? h.l4_proto : 0;
		pkt->l4_len = h.l4_len;
		pkt->flags |= VNIC_PKT_F_PARSED;
		/* The RSS hash spreads GRO buckets as a NIC's does. */
		if (hash)
			pkt->hash = vnic_rss_hash_frame(rxq->drv->netdev.rss_key, pkt->data, &h);
	} else {
		vnic_ctr_inc(&rxq->st.parse_errors);
	}
	/* CHECKSUM_UNNECESSARY only if both are good (docs/PROTOCOL.md section 8.5). */
	if ((flags & VNIC_RXC_IP_CHKSUM_GOOD) && (flags & VNIC_RXC_TCP_UDP_CHKSUM_GOOD)) {
		pkt->ip_summed = VNIC_CSUM_UNNECESSARY;
		vnic_ctr_inc(&rxq->st.csum_unnecessary);
	}
	if (flags & VNIC_RXC_VLAN_STRIPPED) {
		pkt->vlan_tci = tci;
		pkt->flags |= VNIC_PKT_F_VLAN;
	}
}

/* --- large receive (docs/PROTOCOL.md section 8.5) -------------------------------- */

/*
 * One buffer of a large receive, appended to the packet being gathered (an
 * aggregate of the agg pool: a superframe is as large as GRO's). The whole
 * packet at END_FRAME, NULL until then or when it is dropped. The buffer
 * is the caller's to free either way.
 */
static struct vnic_pkt *lro_gather(struct drv_rxq *rxq, uint32_t idx, uint32_t off, uint32_t len,
				   uint8_t flags)
{
	struct vnic_pkt *pkt = rxq->lro;

	if (rxq->lro_skip) {
		rxq->lro_skip = !(flags & VNIC_RXC_END_FRAME);
		return NULL;
	}
	if (vnic_unlikely(off > rxq->post_len || len > rxq->post_len - off)) {
		vnic_ctr_inc(&rxq->st.drop_bad_len);
		VNIC_PROBE3(drop, "drv_rx", "bad_len", 0);
		goto abandon;
	}
	if (!pkt) {
		pkt = vnic_pkt_alloc(&rxq->agg);
		if (vnic_unlikely(!pkt)) {
			vnic_ctr_inc(&rxq->st.drop_no_pkt);
			VNIC_PROBE3(drop, "drv_rx", "no_pkt", 0);
			goto abandon;
		}
		rxq->lro = pkt;
		rxq->lro_nbufs = 0;
	}
	if (vnic_unlikely(pkt->len + len > rxq->drv->lro_max || len > vnic_pkt_tailroom(pkt))) {
		vnic_ctr_inc(&rxq->st.drop_lro_too_big);
		VNIC_PROBE3(drop, "drv_rx", "lro_too_big", 0);
		goto abandon;
	}
	memcpy(pkt->data + pkt->len, pool_addr(&rxq->pool, idx) + off, len);
	pkt->len += len;
	rxq->lro_nbufs++;
	if (!(flags & VNIC_RXC_END_FRAME))
		return NULL;
	vnic_ctr_add(&rxq->st.lro_bufs, rxq->lro_nbufs);
	rxq->lro = NULL;
	rxq->lro_nbufs = 0;
	return pkt;

abandon:
	lro_abandon(rxq, flags);
	return NULL;
}

/* The GSO type a large receive's type names, for these headers; 0 if none. */
static uint16_t lro_gso_type(uint8_t type, const struct vnic_hdrs *h)
{
	bool tcp = h->l4_proto == VNIC_IPPROTO_TCP;
	uint16_t ecn = (type & VNIC_RX_LRO_TCP_ECN) ? VNIC_GSO_TCP_ECN : 0;

	switch (type & (uint8_t)~VNIC_RX_LRO_TCP_ECN) {
	case VNIC_RX_LRO_TCPV4:
		return tcp && h->l3_proto == VNIC_ETH_P_IP ? VNIC_GSO_TCPV4 | ecn : 0;
	case VNIC_RX_LRO_TCPV6:
		return tcp && h->l3_proto == VNIC_ETH_P_IPV6 ? VNIC_GSO_TCPV6 | ecn : 0;
	case VNIC_RX_LRO_UDP_L4:
		return h->l4_proto == VNIC_IPPROTO_UDP && !ecn ? VNIC_GSO_UDP_L4 : 0;
	default:
		return 0;
	}
}

/*
 * What the device says the large receive is, against its headers (never
 * trust the device): a type that matches them, an MSS whose segments fit
 * our MTU, no more segments than a superpacket may have. Then the packet
 * is a GSO packet with a partial checksum, the pseudo-header sum in its
 * field, as a GRO aggregate leaves (gro_tcp.c) and virtio's NEEDS_CSUM
 * receive: whoever cuts or consumes it finishes the sum.
 */
static bool lro_meta(struct drv_rxq *rxq, struct vnic_pkt *pkt, uint16_t mss, uint8_t type,
		     bool hash)
{
	uint32_t hdrs, segs;
	struct vnic_hdrs h;
	uint16_t gso, coff;

	if (vnic_parse_frame(pkt->data, pkt->len, &h) != VNIC_PARSE_OK ||
	    !(h.flags & VNIC_HDRS_F_L4) || (h.flags & VNIC_HDRS_F_FRAG) || h.trailer_len)
		return false;
	gso = lro_gso_type(type, &h);
	hdrs = (uint32_t)h.l2_len + h.l3_len + h.l4_len;
	if (!gso || !mss || pkt->len <= hdrs || (uint32_t)h.l3_len + h.l4_len + mss > rxq->drv->mtu)
		return false;
	segs = (pkt->len - hdrs + mss - 1u) / mss;
	if (segs > VNIC_GSO_MAX_SEGS)
		return false;
	pkt->l2_len = h.l2_len;
	pkt->l3_proto = h.l3_proto;
	pkt->l3_len = h.l3_len;
	pkt->l4_proto = h.l4_proto;
	pkt->l4_len = h.l4_len;
	pkt->flags |= VNIC_PKT_F_PARSED;
	pkt->gso_type = gso;
	pkt->gso_size = mss;
	pkt->gso_segs = (uint16_t)segs;
	if (hash)
		pkt->hash = vnic_rss_hash_frame(rxq->drv->netdev.rss_key, pkt->data, &h);
	coff = h.l4_proto == VNIC_IPPROTO_TCP ? 16 : 6;
	return vnic_csum_make_partial(pkt, (uint32_t)h.l2_len + h.l3_len, coff) == 0;
}

/* A packet into GRO or the list batch; only GRO is a trace point (napi_gro_receive). */
static void deliver_rx(struct drv_rxq *rxq, struct vnic_pkt *pkt)
{
	uint64_t t0 = vnic_trace_begin(
		rxq->deliver.mode == VNIC_DELIVER_LIST ? NULL : &vnic_drv_tp.gro_receive);

	vnic_deliver_rx(&rxq->deliver, pkt);
	vnic_trace_end(&vnic_drv_tp.gro_receive, t0);
}

/* The moves this NAPI owes (vnic_drv_reclaim_switch): each queue still ours and still moving. */
static void moves_out(struct drv_rxq *rxq)
{
	struct vnic_drv *drv = rxq->drv;
	uint32_t m = rxq->moves;

	rxq->moves = 0;
	for (; m; m &= m - 1) {
		struct drv_txq *txq = &drv->txq[__builtin_ctz(m)];

		if (txq->reclaim_move && drv_irq_owner(txq->reclaim) == OWN_RXQ &&
		    atomic_load_explicit(&txq->napi_rxq, memory_order_relaxed) == rxq->idx)
			vnic_drv_reclaim_move(txq);
	}
}

static int rx_poll(struct vnic_napi *napi, int budget)
{
	struct drv_rxq *rxq = vnic_container_of(napi, struct drv_rxq, napi);
	struct vnic_drv *drv = rxq->drv;
	const union vnic_subcrq_entry *e;
	/* read once a poll: the queue count changes only across a reset */
	bool hash = vnic_ctr_load(&drv->nrx) > 1;
	int frames = 0;

	vnic_ctr_inc(&rxq->st.polls);
	/* tx queues leaving tx-reclaim=napi: given up here, under SCHED (live.c) */
	if (vnic_unlikely(rxq->moves))
		moves_out(rxq);
	/* tx-reclaim=napi: tx completions first, and unbudgeted (napi.rst) */
	for (uint32_t m = napi_txmask(rxq); m; m &= m - 1)
		vnic_drv_tx_reclaim(&drv->txq[__builtin_ctz(m)]);
	/* Link down or a reset: whatever comes in is for buffers taken back. */
	if (vnic_unlikely(!rxq->running)) {
		drop_stale(rxq);
		return 0;
	}

	/* peek's acquire is the dma_rmb: the frame in the LTB is read after the entry. */
	while (frames < budget && (e = vnic_subcrq_peek(rxq->comp))) {
		uint64_t corr = vnic_be64_get(&e->rx_comp.correlator);
		uint32_t len = vnic_be32_get(&e->rx_comp.len);
		uint32_t off = vnic_be16_get(&e->rx_comp.off_frame_data);
		uint16_t rc = vnic_be16_get(&e->rx_comp.rc);
		uint16_t tci = vnic_be16_get(&e->rx_comp.vlan_tci);
		uint8_t flags = e->rx_comp.flags;
		uint16_t lro_mss = vnic_be16_get(&e->rx_comp.lro_mss);
		uint8_t lro_type = e->rx_comp.lro_type;
		struct vnic_pkt *pkt;
		uint32_t idx;

		vnic_subcrq_consume(rxq->comp);
		/*
		 * The budget counts packets, as NAPI's does: the buffers of a
		 * large receive before its last are not a packet each (and are
		 * bounded by the buffers posted).
		 */
		if (vnic_likely((flags & VNIC_RXC_END_FRAME) || !drv->lro_max))
			frames++;
		if (vnic_unlikely(corr >= rxq->pool.count || !rxq->posted[corr])) {
			vnic_ctr_inc(&rxq->st.bad_correlator);
			VNIC_PROBE3(drop, "drv_rx", "bad_correlator", 0);
			continue;
		}
		idx = (uint32_t)corr;
		rxq->posted[idx] = 0;
		vnic_ctr_sub32(&rxq->nposted, 1);
		if (vnic_unlikely(rc)) {
			vnic_ctr_inc(&rxq->st.drop_rc);
			VNIC_PROBE3(drop, "drv_rx", "rc", rc);
			if (rxq->lro || rxq->lro_skip)
				lro_abandon(rxq, flags);
			goto recycle;
		}
		/*
		 * Without large receive a frame is one buffer, END_FRAME or not
		 * (ibmvnic reads no such flag); with it, a frame goes on until
		 * END_FRAME.
		 */
		if (vnic_unlikely(rxq->lro || rxq->lro_skip ||
				  (drv->lro_max && (lro_type || !(flags & VNIC_RXC_END_FRAME))))) {
			pkt = lro_gather(rxq, idx, off, len, flags);
			buf_free(rxq, idx);
			if (!pkt)
				continue;
			if (vnic_unlikely(!lro_meta(rxq, pkt, lro_mss, lro_type, hash))) {
				vnic_ctr_inc(&rxq->st.drop_lro_bad_meta);
				VNIC_PROBE3(drop, "drv_rx", "lro_bad_meta", 0);
				vnic_pkt_free(pkt);
				continue;
			}
			vnic_ctr_inc(&rxq->st.lro_packets);
			vnic_ctr_inc(&rxq->st.packets);
			vnic_ctr_add(&rxq->st.bytes, pkt->len);
			deliver_rx(rxq, pkt);
			continue;
		}
		if (vnic_unlikely(len < VNIC_ETH_HLEN || off > rxq->post_len ||
				  len > rxq->post_len - off)) {
			vnic_ctr_inc(&rxq->st.drop_bad_len);
			VNIC_PROBE3(drop, "drv_rx", "bad_len", 0);
			goto recycle;
		}
		pkt = vnic_pkt_alloc(&rxq->pkts);
		if (vnic_unlikely(!pkt)) {
			vnic_ctr_inc(&rxq->st.drop_no_pkt);
			VNIC_PROBE3(drop, "drv_rx", "no_pkt", 0);
			goto recycle;
		}
		memcpy(pkt->data, pool_addr(&rxq->pool, idx) + off, len);
		pkt->len = len;
		buf_free(rxq, idx);
		rx_meta(rxq, pkt, flags, tci, hash);
		vnic_ctr_inc(&rxq->st.packets);
		vnic_ctr_add(&rxq->st.bytes, len);
		deliver_rx(rxq, pkt);
		continue;
	recycle:
		buf_free(rxq, idx);
	}
	VNIC_PROBE3(gro_flush, rxq->idx, rxq->deliver.gro.nheld, rxq->deliver.gro.stats.merged);
	vnic_deliver_flush(&rxq->deliver);

	/*
	 * ibmvnic rr 1/7: a poll under budget is not a reason to refill; a
	 * pool below half is. The "before" refills after every such poll.
	 */
	if (rxq->refill)
		vnic_ctr_inc(&rxq->st.replenish_retries);
	if (rxq->nposted < drv->rx_entries / 2 || rxq->refill ||
	    (drv->cfg.rx_replenish == VNIC_DRV_REPLENISH_ALWAYS && frames < budget))
		vnic_drv_rx_replenish(rxq);
	return frames;
}

int vnic_drv_rx_poll(struct vnic_napi *napi, int budget)
{
	uint64_t t0 = vnic_trace_begin(&vnic_drv_tp.napi_poll);
	int work = rx_poll(napi, budget);

	vnic_trace_end(&vnic_drv_tp.napi_poll, t0);
	VNIC_PROBE3(poll, vnic_container_of(napi, struct drv_rxq, napi)->idx, budget, work);
	return work;
}
