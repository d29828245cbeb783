/* SPDX-License-Identifier: MIT */
/*
 * TX: xmit and tx completion (docs/PROTOCOL.md sections 9.1 and 9.2).
 *
 * xmit copies the packet into a slot of a long-term buffer (the TSO pool for
 * a superpacket), frees the host's packet at once (its cookie and length are
 * kept in the slot: nothing touches the packet after the send, the lesson of
 * CVE-2025-21855), writes a TX descriptor and, when the device's
 * TX_RX_DESC_REQ byte for the packet's class asks for it, header
 * descriptors. A lone plain packet goes by send_subcrq (direct); the rest
 * is batched in the queue's indirect array and flushed when the next packet
 * would not fit or when BQL says ring the doorbell. With tx-submit=adaptive
 * a lone packet goes whichever way the queue has measured to be cheaper
 * (submit_pick, submit_learn).
 *
 * Flow control: `used` counts sub-CRQ entries in flight. The queue stops
 * while the next packet might not fit (used + VNIC_MAX_TX_ELEMS > entries,
 * or no TSO slot left) and wakes at half. The stop comes before the BQL
 * call, so a stop in the middle of an xmit_more burst still rings the
 * doorbell (vnic_txq_sent returns "stopped").
 *
 * Completion drains the tx completion ring, checks every count and
 * correlator before touching a slot, returns the slots, tells the host
 * (tx_done) and reports to BQL once per round (or per entry: the "before"
 * of ibmvnic rr 6/7, docs/SEEDS.md).
 */
#include <errno.h>
#include <string.h>

#include "driver/drv_int.h"

/* --- interrupts ------------------------------------------------------------ */

void vnic_drv_txc_irq(void *ctx)
{
	struct drv_txq *txq = ctx;
	struct vnic_drv *drv = txq->drv;

	/* on the device's thread: the mode may be changing (live.c), hence the load */
	if (vnic_ctr_load(&txq->reclaim) == VNIC_DRV_RECLAIM_NAPI) {
		uint32_t r = atomic_load_explicit(&txq->napi_rxq, memory_order_relaxed);

		vnic_napi_schedule(&drv->rxq[r].napi);
		return;
	}
	vnic_napi_schedule(&txq->napi);
}

/*
 * The completion poller arms and masks the ring only in the modes where it
 * owns the interrupt (irq, orphan): with lazy nobody does, with napi the rx
 * NAPI does (rx.c). So a poll of ours in another mode (a lazy timer, a
 * schedule left from before a change of mode) leaves the ring alone.
 */
static bool txc_owns(void *ctx)
{
	return drv_irq_owner(vnic_ctr_load(&((struct drv_txq *)ctx)->reclaim)) == OWN_TXC;
}

static void txc_enable(void *ctx)
{
	if (txc_owns(ctx))
		vnic_hv_subcrq_irq_enable(((struct drv_txq *)ctx)->comp);
}

static void txc_disable(void *ctx)
{
	if (txc_owns(ctx))
		vnic_hv_subcrq_irq_disable(((struct drv_txq *)ctx)->comp);
}

static bool txc_pending(void *ctx)
{
	return txc_owns(ctx) && vnic_subcrq_pending(((struct drv_txq *)ctx)->comp);
}

const struct vnic_irq_ops vnic_drv_txc_irq_ops = {
	.enable = txc_enable,
	.disable = txc_disable,
	.pending = txc_pending,
};

static uint32_t napi_mask_of(struct drv_rxq *rxq)
{
	return atomic_load_explicit(&rxq->txmask, memory_order_relaxed);
}

/* --- slots ------------------------------------------------------------------ */

static void host_tx_done(struct drv_txq *txq, uint32_t cookie, uint32_t bytes, int status)
{
	struct vnic_netdev *nd = &txq->drv->netdev;

	if (vnic_likely(nd->host && nd->host->tx_done))
		nd->host->tx_done(nd->host_ctx, txq->idx, cookie, bytes, status);
}

void vnic_drv_txq_wake_cb(void *ctx, struct vnic_txq *q)
{
	struct drv_txq *txq = ctx;
	struct vnic_netdev *nd = &txq->drv->netdev;

	(void)q;
	if (nd->host && nd->host->tx_wake)
		nd->host->tx_wake(nd->host_ctx, txq->idx);
}

/* The slot a correlator names if it is ours and in flight; NULL otherwise. */
static struct tx_slot *slot_lookup(struct drv_txq *txq, uint32_t corr, struct drv_pool **pool)
{
	struct tx_slot *s;
	uint32_t idx = corr & ~VNIC_TX_CORR_TSO;

	if (corr & VNIC_TX_CORR_TSO) {
		if (vnic_unlikely(idx >= txq->tso.count))
			return NULL;
		s = &txq->tso_slots[idx];
		*pool = &txq->tso;
	} else {
		if (vnic_unlikely(idx >= txq->pool.count))
			return NULL;
		s = &txq->slots[idx];
		*pool = &txq->pool;
	}
	return vnic_likely(s->in_use) ? s : NULL;
}

/* Gives a slot back; tells the host unless it was told at xmit (orphan). */
static void slot_release(struct drv_txq *txq, struct drv_pool *pool, struct tx_slot *s,
			 uint32_t corr, int status)
{
	s->in_use = false;
	/* tx-buf=map: the device is done reading the host's buffer */
	if (s->pkt) {
		vnic_pkt_free(s->pkt);
		s->pkt = NULL;
	}
	pool->free_map[pool->nfree] = corr & ~VNIC_TX_CORR_TSO;
	/* nfree and used are read by the counters: relaxed stores (core.h) */
	vnic_ctr_add32(&pool->nfree, 1);
	vnic_ctr_set32(&txq->used, txq->used > s->nent ? txq->used - s->nent : 0);
	if (status != VNIC_TX_DONE_OK)
		vnic_ctr_inc(&txq->st.dropped_packets);
	if (!s->orphaned)
		host_tx_done(txq, s->cookie, s->bytes, status);
}

/*
 * The ring has room again. No barrier before the state is read, and the
 * stop in tx_reserve has no barrier and re-check of room: xmit and this
 * reclaim run on the same cpu (struct vnic_txq's contract, asserted in
 * core/txq.c), so neither can run between the other's check and act.
 */
static void maybe_wake(struct drv_txq *txq)
{
	if (!(atomic_load_explicit(&txq->txq.state, memory_order_relaxed) & VNIC_TXQ_DRV_XOFF))
		return;
	if (!txq->running || txq->used > txq->entries / 2 || txq->tso.nfree < txq->tso.count / 2)
		return;
	vnic_ctr_inc(&txq->st.wakes);
	vnic_txq_wake(&txq->txq);
}

static void bql_completed(struct drv_txq *txq, uint32_t pkts, uint32_t bytes)
{
	if (!bytes)
		return;
	vnic_ctr_inc(&txq->st.bql_completed_calls);
	vnic_txq_completed(&txq->txq, pkts, bytes, vnic_now_ns());
}

/* --- submit -------------------------------------------------------------------- */

/*
 * tx-submit=adaptive (docs/MECHANISMS.md section 10). What is timed is the
 * hcall alone, the part of a send that differs between the two ways: the
 * copy and the descriptor are the same either way. Like is compared with
 * like: only a lone packet's indirect send is timed, never a batch, whose
 * cost per packet a lone packet would not get. Two clock reads per timed
 * send, one lone packet in VNIC_CHEAPER_TIME_EVERY (16) timed and each
 * probe (one in 64 to 4096): about an eighth of a clock read per lone
 * packet, none for packets in bursts. The rest of the bookkeeping is
 * vnic_cheaper_pick's inline fast path, an add and two compares.
 */
static void submit_learn(struct drv_txq *txq, enum vnic_cheaper_way way, uint64_t ns)
{
	if (vnic_cheaper_sample(&txq->submit, way, ns))
		vnic_ctr_inc(&txq->st.submit_switches);
	vnic_ctr_store(way == VNIC_CHEAPER_A ? &txq->st.submit_direct_ns
					     : &txq->st.submit_indirect_ns,
		       vnic_cheaper_cost(&txq->submit, way));
}

/*
 * A send failed; n is how many entries it carried. What each rc means here
 * is in docs/PROTOCOL.md section 5; the batch itself is always lost.
 */
static void flush_error(struct drv_txq *txq, long rc, uint32_t n)
{
	struct vnic_drv *drv = txq->drv;

	vnic_ctr_inc(&txq->st.flush_errors);
	switch (rc) {
	case VNIC_H_BUSY:
		vnic_ctr_inc(&txq->st.flush_rc_busy);
		break;
	case VNIC_H_DROPPED:
		/* the hypervisor dropped it: as ibmvnic, counted, the batch lost */
		vnic_ctr_inc(&txq->st.flush_rc_dropped);
		break;
	case VNIC_H_PARAMETER:
		vnic_ctr_inc(&txq->st.flush_rc_parameter);
		/*
		 * The hypervisor may allow fewer entries per indirect send than
		 * negotiated (POWER8: 16). Upstream falls back to the safe
		 * number for good; the batch itself is lost (3c14917953a5).
		 * Ours only for a batch the smaller limit explains: one within
		 * it was refused for its handle, a partner that forgot us.
		 */
		if (n > VNIC_SAFE_IND_DESCS) {
			/* any queue's cpu may fall back: the first one counts it */
			if (__atomic_exchange_n(&drv->cur_ind, VNIC_SAFE_IND_DESCS,
						__ATOMIC_RELAXED) > VNIC_SAFE_IND_DESCS)
				__atomic_fetch_add(&drv->st.ind_fallbacks, 1, __ATOMIC_RELAXED);
			vnic_ctr_store(&drv->rst.ind_safe, true);
		} else {
			vnic_drv_partner_suspect(drv);
		}
		break;
	case VNIC_H_CLOSED:
		/*
		 * The partner is gone. As ibmvnic: every queue stops and the
		 * carrier drops until the transport event that follows resets
		 * us; reset.c asks the partner if none comes.
		 */
		vnic_ctr_inc(&txq->st.flush_rc_closed);
		vnic_drv_partner_suspect(drv);
		break;
	default:
		vnic_ctr_inc(&txq->st.flush_rc_other);
		break;
	}
}

void vnic_drv_tx_unwind_batch(struct drv_txq *txq)
{
	uint32_t i = 0, pkts = 0, bytes = 0;

	/* Our own memory, written by xmit: the descriptors are trusted here. */
	while (i < txq->ind_n) {
		const union vnic_subcrq_entry *e = &txq->ind[i];
		uint32_t corr, n = 1;
		struct drv_pool *pool;
		struct tx_slot *s;

		if (e->generic.type == VNIC_TX_DESC) {
			corr = vnic_be32_get(&e->tx.correlator);
			n = e->tx.n_crq_elem ? e->tx.n_crq_elem : 1;
			s = slot_lookup(txq, corr, &pool);
			if (s) {
				pkts++;
				bytes += s->bytes;
				vnic_ctr_inc(&txq->st.drops[TXD_FLUSH]);
				VNIC_PROBE3(drop, "drv_tx", "flush", TXD_FLUSH);
				slot_release(txq, pool, s, corr, VNIC_TX_DONE_DROPPED);
			}
		}
		i += n;
	}
	vnic_ctr_set32(&txq->ind_n, 0);
	txq->batch_pkts = 0;
	txq->batch_bytes = 0;
	/* BQL counted these bytes at xmit: they will never complete otherwise. */
	bql_completed(txq, pkts, bytes);
	maybe_wake(txq);
}

static long tx_flush(struct drv_txq *txq)
{
	uint64_t t0, t1, ts = 0;
	bool timed;
	long rc;

	if (!txq->ind_n)
		return VNIC_H_SUCCESS;
	t0 = vnic_trace_begin(&vnic_drv_tp.tx_flush);
	/* adaptive: a lone packet's indirect send, timed as the direct one is */
	timed = txq->time_flush && txq->batch_pkts == 1;
	txq->time_flush = false;
	drv_dma_wmb();
	VNIC_PROBE3(submit, txq->idx, 1, txq->ind_n);
	t1 = vnic_trace_begin(&vnic_drv_tp.send_indirect);
	if (timed)
		ts = vnic_now_ns();
	rc = vnic_hv_send_subcrq_indirect(txq->drv->hv, VNIC_HV_CLIENT, txq->subm_handle,
					  txq->ind_ioba, txq->ind_n);
	if (timed && rc == VNIC_H_SUCCESS)
		submit_learn(txq, VNIC_CHEAPER_B, vnic_now_ns() - ts);
	vnic_trace_end(&vnic_drv_tp.send_indirect, t1);
	if (vnic_unlikely(rc != VNIC_H_SUCCESS)) {
		flush_error(txq, rc, txq->ind_n);
		vnic_drv_tx_unwind_batch(txq);
		vnic_trace_end(&vnic_drv_tp.tx_flush, t0);
		return rc;
	}
	vnic_ctr_inc(&txq->st.indirect_flushes);
	vnic_ctr_add(&txq->st.batched_packets, txq->batch_pkts);
	vnic_ctr_add(&txq->st.bytes, txq->batch_bytes);
	vnic_ctr_set32(&txq->ind_n, 0);
	txq->batch_pkts = 0;
	txq->batch_bytes = 0;
	vnic_trace_end(&vnic_drv_tp.tx_flush, t0);
	return rc;
}

/* timed: adaptive asked for this send's cost (the same span as the send_indirect one's) */
static long send_direct(struct drv_txq *txq, const union vnic_subcrq_entry *e, bool timed)
{
	uint64_t t0, ts = 0;
	long rc;

	drv_dma_wmb();
	VNIC_PROBE3(submit, txq->idx, 0, 1);
	t0 = vnic_trace_begin(&vnic_drv_tp.send_direct);
	if (timed)
		ts = vnic_now_ns();
	rc = vnic_hv_send_subcrq(txq->drv->hv, VNIC_HV_CLIENT, txq->subm_handle, e);
	if (timed && rc == VNIC_H_SUCCESS)
		submit_learn(txq, VNIC_CHEAPER_A, vnic_now_ns() - ts);
	vnic_trace_end(&vnic_drv_tp.send_direct, t0);
	return rc;
}

/* --- descriptors ------------------------------------------------------------------ */

/*
 * The headers the device asked for (docs/PROTOCOL.md section 8.2): the
 * requested ones of L2, L3, L4, concatenated, at most three ranges of the
 * packet (adjacent ones merged).
 */
struct hdr_plan {
	uint8_t field; /* VNIC_DESC_REQ_L2/L3/L4 asked for */
	uint8_t nr;
	uint16_t len[3]; /* l2, l3, l4 lengths as reported (0 if not asked) */
	uint32_t total;
	uint32_t off[3], n[3];
	unsigned int ndesc;
};

static int hdr_plan(struct hdr_plan *hp, const struct vnic_pkt *pkt, uint8_t req)
{
	static const uint8_t bit[3] = {VNIC_DESC_REQ_L2, VNIC_DESC_REQ_L3, VNIC_DESC_REQ_L4};
	uint32_t off = 0, lens[3] = {pkt->l2_len, pkt->l3_len, pkt->l4_len};
	unsigned int i;

	memset(hp, 0, sizeof(*hp));
	if (!(req & VNIC_DESC_REQ_HDRS))
		return 0;
	hp->field = req & (VNIC_DESC_REQ_L2 | VNIC_DESC_REQ_L3 | VNIC_DESC_REQ_L4);
	for (i = 0; i < 3; i++) {
		if ((hp->field & bit[i]) && lens[i]) {
			hp->len[i] = (uint16_t)lens[i];
			if (hp->nr && hp->off[hp->nr - 1] + hp->n[hp->nr - 1] == off) {
				hp->n[hp->nr - 1] += lens[i];
			} else {
				hp->off[hp->nr] = off;
				hp->n[hp->nr++] = lens[i];
			}
			hp->total += lens[i];
		}
		off += lens[i];
	}
	if (hp->total > VNIC_MAX_HDR_BYTES || off > pkt->len)
		return -EINVAL;
	hp->ndesc = vnic_hdr_descs_needed(hp->total);
	return 0;
}

static void hdr_desc_head(union vnic_subcrq_entry *e, const struct hdr_plan *hp)
{
	e->hdr.first = VNIC_SUBCRQ_VALID;
	e->hdr.type = VNIC_HDR_DESC;
	e->hdr.len = (uint8_t)hp->total;
	e->hdr.l2_len = (uint8_t)hp->len[0];
	vnic_be16_put(&e->hdr.l3_len, hp->len[1]);
	e->hdr.l4_len = (uint8_t)hp->len[2];
	/* flag = requirement bits << 1 (L2 0x40 -> 0x80 ...) */
	e->hdr.flag = (uint8_t)(hp->field << 1);
}

static void hdr_ext_head(union vnic_subcrq_entry *e, uint32_t n)
{
	e->hdr_ext.first = VNIC_SUBCRQ_VALID;
	e->hdr_ext.type = VNIC_HDR_EXT_DESC;
	e->hdr_ext.len = (uint8_t)n;
}

/*
 * tx-hdr-build=direct (ibmvnic rr 2/7 and 3/7, "after"): each descriptor is
 * written in place in the indirect array, its header bytes copied once,
 * straight from the packet.
 */
static void hdrs_direct(union vnic_subcrq_entry *e, const struct vnic_pkt *pkt,
			const struct hdr_plan *hp)
{
	unsigned int r = 0, d;
	uint32_t roff = 0;

	for (d = 0; d < hp->ndesc; d++) {
		uint8_t *dst;
		uint32_t room, fill = 0;

		if (!d) {
			hdr_desc_head(&e[d], hp);
			dst = e[d].hdr.data;
			room = VNIC_HDR_DESC_BYTES;
		} else {
			dst = e[d].hdr_ext.data;
			room = VNIC_HDR_EXT_BYTES;
		}
		while (fill < room && r < hp->nr) {
			uint32_t n = hp->n[r] - roff;

			if (n > room - fill)
				n = room - fill;
			memcpy(dst + fill, pkt->data + hp->off[r] + roff, n);
			fill += n;
			roff += n;
			if (roff == hp->n[r]) {
				r++;
				roff = 0;
			}
		}
		if (d)
			hdr_ext_head(&e[d], fill);
		/* no stale bytes of an older packet after the headers */
		memset(dst + fill, 0, room - fill);
	}
}

/*
 * tx-hdr-build=copy (the "before"): the headers are gathered into a
 * temporary buffer, each descriptor is built in a local variable and then
 * copied into the array, as ibmvnic did before d95f749a0b5e.
 */
static void hdrs_copy(union vnic_subcrq_entry *e, const struct vnic_pkt *pkt,
		      const struct hdr_plan *hp)
{
	uint8_t hdr_data[VNIC_MAX_HDR_BYTES];
	uint32_t len = 0, done = 0;
	unsigned int r, d;

	memset(hdr_data, 0, sizeof(hdr_data));
	for (r = 0; r < hp->nr; r++) {
		memcpy(hdr_data + len, pkt->data + hp->off[r], hp->n[r]);
		len += hp->n[r];
	}
	for (d = 0; d < hp->ndesc; d++) {
		union vnic_subcrq_entry tmp;
		uint32_t n;

		memset(&tmp, 0, sizeof(tmp));
		if (!d) {
			n = len < VNIC_HDR_DESC_BYTES ? len : VNIC_HDR_DESC_BYTES;
			hdr_desc_head(&tmp, hp);
			memcpy(tmp.hdr.data, hdr_data, n);
		} else {
			n = len - done < VNIC_HDR_EXT_BYTES ? len - done : VNIC_HDR_EXT_BYTES;
			hdr_ext_head(&tmp, n);
			memcpy(tmp.hdr_ext.data, hdr_data + done, n);
		}
		done += n;
		e[d] = tmp;
	}
}

/* What the descriptor says about the packet's protocols (docs/PROTOCOL.md section 8.1, flags1). */
static uint8_t prot_flags(const struct vnic_pkt *pkt)
{
	uint8_t f = 0;

	if (pkt->l3_proto == VNIC_ETH_P_IP)
		f |= VNIC_TX_PROT_IPV4;
	else if (pkt->l3_proto == VNIC_ETH_P_IPV6)
		f |= VNIC_TX_PROT_IPV6;
	if (pkt->l4_proto == VNIC_IPPROTO_TCP)
		f |= VNIC_TX_PROT_TCP;
	else if (pkt->l4_proto == VNIC_IPPROTO_UDP)
		f |= VNIC_TX_PROT_UDP;
	return f;
}

static void tx_desc_fill(union vnic_subcrq_entry *e, uint8_t map_id, uint64_t ioba, uint32_t corr,
			 uint32_t len, uint8_t nent, uint8_t flags1, uint16_t mss)
{
	memset(e, 0, sizeof(*e));
	e->tx.first = VNIC_SUBCRQ_VALID;
	e->tx.type = VNIC_TX_DESC;
	e->tx.n_crq_elem = nent;
	e->tx.n_sge = 1;
	e->tx.flags1 = flags1;
	vnic_be16_put(&e->tx.mss, mss);
	vnic_be32_put(&e->tx.correlator, corr);
	vnic_be16_put(&e->tx.dma_reg, map_id);
	vnic_be32_put(&e->tx.sge_len, len);
	vnic_be64_put(&e->tx.ioba, ioba);
}

/* --- xmit ----------------------------------------------------------------------- */

/* Offloads negotiated for this packet's class. */
static bool csum_ok(const struct vnic_drv *drv, const struct vnic_pkt *pkt)
{
	bool v4 = pkt->l3_proto == VNIC_ETH_P_IP, v6 = pkt->l3_proto == VNIC_ETH_P_IPV6;
	uint32_t l4_off = (uint32_t)pkt->l2_len + pkt->l3_len;

	/* The device sums from the L4 header it finds: the packet must agree. */
	if (pkt->csum_start != l4_off)
		return false;
	if (pkt->l4_proto == VNIC_IPPROTO_TCP)
		return (v4 && drv->ol.tcp4) || (v6 && drv->ol.tcp6);
	if (pkt->l4_proto == VNIC_IPPROTO_UDP)
		return (v4 && drv->ol.udp4) || (v6 && drv->ol.udp6);
	return false;
}

static bool lso_ok(const struct vnic_drv *drv, const struct vnic_pkt *pkt)
{
	bool v4 = pkt->l3_proto == VNIC_ETH_P_IP, v6 = pkt->l3_proto == VNIC_ETH_P_IPV6;

	if (!((v4 && drv->ol.lso4) || (v6 && drv->ol.lso6)))
		return false;
	if (pkt->gso_type & (VNIC_GSO_TCPV4 | VNIC_GSO_TCPV6))
		return pkt->l4_proto == VNIC_IPPROTO_TCP;
	if (pkt->gso_type & VNIC_GSO_UDP_L4)
		return pkt->l4_proto == VNIC_IPPROTO_UDP;
	return false;
}

/* The L3 MTU behind an Ethernet header and, for a tagged frame, its tag. */
static uint32_t max_frame(const struct vnic_drv *drv, const struct vnic_pkt *pkt)
{
	return drv->mtu + VNIC_ETH_HLEN + (pkt->l2_len > VNIC_ETH_HLEN ? VNIC_VLAN_HLEN : 0);
}

/* A packet not taken: the host hears at once, nothing is kept. */
static int xmit_drop(struct drv_txq *txq, struct vnic_pkt *pkt, enum tx_drop why)
{
	uint32_t cookie = pkt->priv, bytes = pkt->len;

	vnic_ctr_inc(&txq->st.drops[why]);
	vnic_ctr_inc(&txq->st.dropped_packets);
	VNIC_PROBE3(drop, "drv_tx", "xmit", why);
	vnic_pkt_free(pkt);
	host_tx_done(txq, cookie, bytes, VNIC_TX_DONE_DROPPED);
	return VNIC_TX_OK;
}

static void lazy_timer_arm(struct drv_txq *txq)
{
	if (txq->timer_armed || !txq->used)
		return;
	txq->timer_armed = true;
	vnic_poller_set_timer(&txq->napi.poller, vnic_now_ns() + txq->drv->cfg.reclaim_ns);
}

/* vnic_csum_help, traced here: src/net sits below the core's tracing. */
static int csum_help(struct vnic_pkt *pkt)
{
	uint64_t t0 = vnic_trace_begin(&vnic_drv_tp.csum_help);
	int err = vnic_csum_help(pkt);

	vnic_trace_end(&vnic_drv_tp.csum_help, t0);
	return err;
}

/*
 * What xmit learns and decides about one packet. Each step below fills in
 * its part and reads what the steps before it wrote; once the steps are
 * inlined it lives in registers and on xmit's stack, as the locals did.
 */
struct tx_plan {
	struct hdr_plan hp;    /* the header descriptors the device asked for */
	struct drv_pool *pool; /* the LTB the packet was copied into */
	struct tx_slot *slot;
	uint32_t idx, corr; /* its slot in pool, and the correlator naming it */
	uint64_t ioba;	    /* where the device reads the packet, in map map_id */
	uint8_t map_id;
	bool mapped; /* tx-buf=map: ioba is in the host's buffer, held until completion */
	uint32_t len;
	uint32_t cookie;   /* pkt->priv, kept for the host after the packet is freed */
	uint8_t nent;	   /* sub-CRQ entries: the tx descriptor and the header ones */
	bool gso;	   /* sent as LSO (a one-segment GSO packet is not) */
	bool partial;	   /* the device does the checksum */
	bool direct;	   /* send_subcrq, not the indirect batch */
	bool adaptive;	   /* a lone packet whose way tx-submit=adaptive chose */
	bool timed;	   /* adaptive: its send is timed */
	bool chose_direct; /* adaptive chose direct (the headers may still forbid it) */
};

/* A step's verdict: go on, or the reason the packet is dropped. */
#define TX_GO TXD_MAX

/* Lengths, GSO state, and a checksum the device cannot do done here. */
static enum tx_drop tx_classify(struct vnic_drv *drv, struct drv_txq *txq, struct vnic_pkt *pkt,
				struct tx_plan *p)
{
	p->len = pkt->len;
	p->gso = pkt->gso_type != VNIC_GSO_NONE;
	p->partial = pkt->ip_summed == VNIC_CSUM_PARTIAL;
	if (vnic_unlikely(p->len < VNIC_ETH_HLEN))
		return TXD_BAD_HEADERS;
	/* Headers are needed for the descriptor flags and any header descriptor. */
	if (!(pkt->flags & VNIC_PKT_F_PARSED) && vnic_parse_pkt(pkt) != VNIC_PARSE_OK &&
	    (p->gso || p->partial))
		return TXD_BAD_HEADERS;

	if (p->gso) {
		int segs = vnic_gso_count(pkt);

		if (vnic_unlikely(segs < 1 || !lso_ok(drv, pkt) || p->len > drv->gso_max ||
				  p->len > txq->tso.buf_size || pkt->gso_size < drv->min_mss))
			return TXD_BAD_GSO;
		/* One segment: a plain checksum-offload packet (some backings refuse LSO of 1). */
		if (segs == 1 && p->len <= max_frame(drv, pkt))
			p->gso = false;
	}
	if (!p->gso && vnic_unlikely(p->len > max_frame(drv, pkt)))
		return TXD_TOO_LONG;

	/* A checksum the device was not asked to do is done here. */
	if (p->partial && !p->gso && !csum_ok(drv, pkt)) {
		if (csum_help(pkt))
			return TXD_BAD_HEADERS;
		vnic_ctr_inc(&txq->st.csum_sw);
		p->partial = false;
	}
	return TX_GO;
}

/* tx-submit=adaptive: whether this lone packet goes direct, and whether its send is timed. */
static bool submit_pick(struct drv_txq *txq, struct tx_plan *p)
{
	unsigned int flags;
	enum vnic_cheaper_way way = vnic_cheaper_pick(&txq->submit, &flags);

	if (flags & VNIC_CHEAPER_PROBE)
		vnic_ctr_inc(&txq->st.submit_probes);
	p->adaptive = true;
	p->timed = flags & VNIC_CHEAPER_TIMED;
	p->chose_direct = way == VNIC_CHEAPER_A;
	return p->chose_direct;
}

/*
 * Direct or batched (tx-submit, xmit_more), a software checksum instead of
 * header descriptors (tx-csum), then the header descriptors the device asks
 * for this packet's class, which take it off the direct path.
 */
static enum tx_drop tx_choose_path(struct vnic_drv *drv, struct drv_txq *txq, struct vnic_pkt *pkt,
				   bool more, struct tx_plan *p)
{
	enum vnic_drv_tx_csum csum_policy = drv->cfg.tx_csum;
	uint8_t req;

	/* ibmvnic rr 5/7 (and the Oct 2024 fix): direct only if the device wants no headers. */
	p->direct = !p->gso && !txq->ind_n && !more && !(drv->req_plain & VNIC_DESC_REQ_HDRS);
	p->adaptive = false;
	p->timed = false;
	if (p->direct && drv->cfg.tx_submit != VNIC_DRV_SUBMIT_AUTO)
		p->direct = drv->cfg.tx_submit == VNIC_DRV_SUBMIT_ADAPTIVE && submit_pick(txq, p);
	if (p->direct && p->partial && (drv->req_csum & VNIC_DESC_REQ_HDRS)) {
		if (csum_policy == VNIC_DRV_CSUM_SW_DIRECT) {
			/* ibmvnic rr 7/7: summing a small packet beats an indirect hcall. */
			if (csum_help(pkt) == 0) {
				vnic_ctr_inc(&txq->st.csum_sw);
				p->partial = false;
			} else {
				p->direct = false;
			}
		} else if (csum_policy == VNIC_DRV_CSUM_HW_HEADERS) {
			p->direct = false;
		}
	}
	req = p->gso ? drv->req_lso : p->partial ? drv->req_csum : drv->req_plain;
	/* hw-noheaders: offload without the headers asked for (ibmvnic e633e32b60's "before"). */
	if (p->partial && !p->gso && csum_policy == VNIC_DRV_CSUM_HW_NOHEADERS)
		req = 0;
	if (vnic_unlikely(hdr_plan(&p->hp, pkt, req)))
		return TXD_BAD_HEADERS;
	if (p->hp.ndesc)
		p->direct = false;
	/* adaptive chose direct, the headers forbid it: this send says nothing about either way */
	if (p->adaptive && p->timed && !p->direct && p->chose_direct)
		p->timed = false;
	p->nent = (uint8_t)(1 + p->hp.ndesc);
	if (vnic_unlikely(p->nent > vnic_ctr_load(&drv->cur_ind)))
		return TXD_BAD_HEADERS;
	return TX_GO;
}

/*
 * Where the host's pool holds pkt, if the pool is mapped (tx-buf=map): the
 * buffer's LTB and the packet's ioba in it.
 */
static bool host_locate(const struct drv_hostmem *h, const struct vnic_pkt *pkt, struct tx_plan *p)
{
	const struct drv_ltb *l;
	uint32_t idx = pkt->index;

	if (pkt->pool != h->pool || idx >= h->count ||
	    pkt->data < pkt->head || pkt->data + pkt->len > pkt->head + pkt->buf_size)
		return false;
	l = &h->ltb[idx / h->per_ltb];
	if (vnic_unlikely(!l->map_id))
		return false;
	p->map_id = l->map_id;
	p->ioba = l->ioba + (uint64_t)(idx % h->per_ltb) * h->stride + (uint64_t)(pkt->data - pkt->head);
	return true;
}

/*
 * A slot of the LTB (the TSO pool's for LSO), with the packet copied in,
 * or with tx-buf=map a superpacket left where the host's pool holds it.
 * False when the ring has no room: the queue is stopped, what is batched
 * is sent, and the packet is still the caller's.
 */
static bool tx_reserve(struct drv_txq *txq, const struct vnic_pkt *pkt, struct tx_plan *p)
{
	struct drv_pool *pool;

	/* bcmgenet orphan "before": completions are looked at only when the ring fills up. */
	if (txq->reclaim == VNIC_DRV_RECLAIM_LAZY && txq->used >= txq->entries / 4 * 3) {
		vnic_ctr_inc(&txq->st.xmit_reclaims);
		vnic_drv_tx_reclaim(txq);
	}
	pool = p->gso ? &txq->tso : &txq->pool;
	if (vnic_unlikely(txq->used + p->nent > txq->entries || !pool->nfree)) {
		/* Cannot happen with the early stop; never strand a batch if it does. */
		if (!vnic_txq_stopped(&txq->txq))
			vnic_ctr_inc(&txq->st.stops);
		vnic_txq_stop(&txq->txq);
		tx_flush(txq);
		vnic_ctr_inc(&txq->st.busy);
		return false;
	}

	p->pool = pool;
	p->idx = pool->free_map[pool->nfree - 1];
	vnic_ctr_sub32(&pool->nfree, 1);
	p->slot = p->gso ? &txq->tso_slots[p->idx] : &txq->slots[p->idx];
	p->corr = p->idx | (p->gso ? VNIC_TX_CORR_TSO : 0);
	p->mapped = p->gso && txq->drv->cfg.tx_buf == VNIC_DRV_TXBUF_MAP &&
		    host_locate(&txq->host, pkt, p);
	if (p->mapped)
		return true;
	p->map_id = pool_ltb(pool, p->idx)->map_id;
	p->ioba = pool_ioba(pool, p->idx);
	memcpy(pool_addr(pool, p->idx), pkt->data, p->len);
	return true;
}

/*
 * The tx descriptor and the header descriptors (tx-hdr-build): written in
 * place at the end of the indirect array, or in local (a direct send, or
 * copy) and then copied there if batched. Returns where they are.
 */
static const union vnic_subcrq_entry *tx_build(struct vnic_drv *drv, struct drv_txq *txq,
					       const struct vnic_pkt *pkt, const struct tx_plan *p,
					       union vnic_subcrq_entry *local)
{
	uint8_t flags1 = VNIC_TX_COMP_NEEDED | prot_flags(pkt);
	union vnic_subcrq_entry *e;
	uint16_t mss = 0;

	if (p->partial || p->gso) {
		flags1 |= VNIC_TX_CHKSUM_OFFLOAD;
		vnic_ctr_inc(&txq->st.csum_offload);
	}
	if (p->gso) {
		flags1 |= VNIC_TX_LSO;
		mss = pkt->gso_size;
		vnic_ctr_inc(&txq->st.lso_packets);
	}

	if (!p->direct && txq->ind_n + p->nent > vnic_ctr_load(&drv->cur_ind))
		tx_flush(txq); /* a failure unwinds the earlier packets, not this one */
	if (p->direct || drv->cfg.tx_hdr_build == VNIC_DRV_HDR_COPY)
		e = local;
	else
		e = &txq->ind[txq->ind_n];
	tx_desc_fill(&e[0], p->map_id, p->ioba, p->corr, p->len, p->nent, flags1, mss);
	if (p->hp.ndesc) {
		uint64_t t0 = vnic_trace_begin(&vnic_drv_tp.hdr_build);

		if (drv->cfg.tx_hdr_build == VNIC_DRV_HDR_COPY)
			hdrs_copy(&e[1], pkt, &p->hp);
		else
			hdrs_direct(&e[1], pkt, &p->hp);
		vnic_trace_end(&vnic_drv_tp.hdr_build, t0);
		vnic_ctr_add(&txq->st.hdr_descs, p->hp.ndesc);
	}
	if (!p->direct && e == local)
		memcpy(&txq->ind[txq->ind_n], local, p->nent * sizeof(*local));
	return e;
}

/*
 * The packet is in the LTB and described: free it, account the ring, stop
 * the queue while the next packet might not fit (before BQL: see the top of
 * this file), then send it direct or add it to the batch, which goes when
 * BQL says ring the doorbell.
 */
static void tx_commit(struct vnic_drv *drv, struct drv_txq *txq, struct vnic_pkt *pkt,
		      struct tx_plan *p, const union vnic_subcrq_entry *e, bool more)
{
	struct tx_slot *slot = p->slot;

	p->cookie = pkt->priv;
	slot->cookie = p->cookie;
	slot->bytes = p->len;
	slot->nent = p->nent;
	slot->in_use = true;
	/* kept per slot: a change of mode meanwhile does not undo what the host was told */
	slot->orphaned = txq->reclaim == VNIC_DRV_RECLAIM_ORPHAN;
	if (p->mapped) {
		/* the device reads the host's buffer: freed when the send completes */
		slot->pkt = pkt;
		vnic_ctr_inc(&txq->st.mapped_packets);
	} else {
		/* The data is in the LTB: the packet goes back to the host's pool now. */
		vnic_pkt_free(pkt);
	}

	vnic_ctr_add32(&txq->used, p->nent);
	if (txq->used + VNIC_MAX_TX_ELEMS > txq->entries || !txq->tso.nfree) {
		vnic_ctr_inc(&txq->st.stops);
		vnic_txq_stop(&txq->txq);
	}

	if (p->adaptive)
		vnic_ctr_inc(p->direct ? &txq->st.submit_direct_bursts
				       : &txq->st.submit_indirect_bursts);
	if (p->direct) {
		long rc;

		vnic_txq_sent(&txq->txq, p->len, false);
		rc = send_direct(txq, &e[0], p->timed);
		if (vnic_unlikely(rc != VNIC_H_SUCCESS)) {
			flush_error(txq, rc, 1);
			vnic_ctr_inc(&txq->st.drops[TXD_FLUSH]);
			slot_release(txq, p->pool, slot, p->corr, VNIC_TX_DONE_DROPPED);
			bql_completed(txq, 1, p->len);
			maybe_wake(txq);
		} else {
			vnic_ctr_inc(&txq->st.direct_sends);
			vnic_ctr_inc(&txq->st.direct_packets);
			vnic_ctr_add(&txq->st.bytes, p->len);
		}
	} else {
		vnic_ctr_add32(&txq->ind_n, p->nent);
		txq->batch_pkts++;
		txq->batch_bytes += p->len;
		if (p->timed)
			txq->time_flush = true; /* cleared by the next flush, this one's */
		if (vnic_txq_sent(&txq->txq, p->len,
				  more && txq->ind_n < vnic_ctr_load(&drv->cur_ind)))
			tx_flush(txq);
	}
}

/* tx-reclaim after a send: lazy arms its coarse timer, orphan tells the host now. */
static void tx_reclaim_policy(struct drv_txq *txq, const struct tx_plan *p)
{
	if (txq->reclaim == VNIC_DRV_RECLAIM_LAZY)
		lazy_timer_arm(txq);
	else if (txq->reclaim == VNIC_DRV_RECLAIM_ORPHAN) {
		/* skb_orphan at xmit: the sender's bytes stop counting now (bcmgenet orphan). */
		vnic_ctr_inc(&txq->st.orphaned);
		host_tx_done(txq, p->cookie, p->len, VNIC_TX_DONE_OK);
	}
}

/* The steps above in order; a drop or a full ring ends it early. */
static int xmit(struct vnic_netdev *nd, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	struct vnic_drv *drv = nd->priv;
	union vnic_subcrq_entry local[VNIC_MAX_TX_ELEMS];
	const union vnic_subcrq_entry *e;
	struct drv_txq *txq;
	struct tx_plan p;
	enum tx_drop why;

	if (vnic_unlikely(q >= drv->qtx)) {
		__atomic_fetch_add(&drv->st.drop_bad_queue, 1, __ATOMIC_RELAXED); /* any cpu */
		vnic_pkt_free(pkt);
		return VNIC_TX_OK;
	}
	txq = &drv->txq[q];
	if (vnic_unlikely(vnic_txq_stopped(&txq->txq))) {
		vnic_ctr_inc(&txq->st.busy);
		return VNIC_TX_BUSY;
	}
	if (vnic_unlikely(!txq->running))
		return xmit_drop(txq, pkt, TXD_DOWN);

	why = tx_classify(drv, txq, pkt, &p);
	if (vnic_unlikely(why != TX_GO))
		return xmit_drop(txq, pkt, why);
	why = tx_choose_path(drv, txq, pkt, more, &p);
	if (vnic_unlikely(why != TX_GO))
		return xmit_drop(txq, pkt, why);
	if (!tx_reserve(txq, pkt, &p))
		return VNIC_TX_BUSY;
	e = tx_build(drv, txq, pkt, &p, local);
	tx_commit(drv, txq, pkt, &p, e, more);
	tx_reclaim_policy(txq, &p);
	return VNIC_TX_OK;
}

static int drv_xmit(struct vnic_netdev *nd, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	uint64_t t0 = vnic_trace_begin(&vnic_drv_tp.xmit);
	int rc;

	VNIC_PROBE3(xmit, q, pkt->len, more);
	rc = xmit(nd, q, pkt, more);
	vnic_trace_end(&vnic_drv_tp.xmit, t0);
	return rc;
}

static bool drv_tx_stopped(struct vnic_netdev *nd, unsigned int q)
{
	struct vnic_drv *drv = nd->priv;

	return q >= drv->qtx || vnic_txq_stopped(&drv->txq[q].txq);
}

const struct vnic_netdev_ops vnic_drv_netdev_ops = {
	.xmit = drv_xmit,
	.tx_stopped = drv_tx_stopped,
	.tx_pool = vnic_drv_tx_pool,
};

/* --- completion --------------------------------------------------------------------- */

/*
 * A reset took every slot back (vnic_drv_tx_forget): what the ring holds
 * now was sent for packets already completed to the host as dropped.
 * Looking at the correlators could only match slots a later packet reuses.
 */
static unsigned int drop_stale(struct drv_txq *txq)
{
	while (vnic_subcrq_peek(txq->comp)) {
		vnic_subcrq_consume(txq->comp);
		vnic_ctr_inc(&txq->st.comp_stale);
	}
	return 0;
}

unsigned int vnic_drv_tx_reclaim(struct drv_txq *txq)
{
	bool per_entry = txq->drv->cfg.bql_complete == VNIC_DRV_BQL_PER_ENTRY;
	uint32_t pkts = 0, bytes = 0;
	const union vnic_subcrq_entry *e;
	uint64_t t0;

	if (vnic_unlikely(!txq->slots))
		return 0;
	if (vnic_unlikely(!txq->live))
		return drop_stale(txq);
	t0 = vnic_trace_begin(&vnic_drv_tp.tx_complete);
	/* peek's acquire is the dma_rmb: the entry's body is read after its valid bit. */
	while ((e = vnic_subcrq_peek(txq->comp))) {
		unsigned int n = e->tx_comp.num_comps, i;
		uint32_t epkts = 0, ebytes = 0;

		if (vnic_unlikely(n < 1 || n > VNIC_TX_COMP_MAX)) {
			vnic_ctr_inc(&txq->st.bad_num_comps);
			vnic_subcrq_consume(txq->comp);
			continue;
		}
		for (i = 0; i < n; i++) {
			uint32_t corr = vnic_be32_get(&e->tx_comp.correlators[i]);
			uint16_t rc = vnic_be16_get(&e->tx_comp.rcs[i]);
			struct drv_pool *pool;
			struct tx_slot *s = slot_lookup(txq, corr, &pool);

			if (vnic_unlikely(!s)) {
				vnic_ctr_inc(&txq->st.bad_correlator);
				continue;
			}
			epkts++;
			ebytes += s->bytes;
			if (vnic_unlikely(rc))
				vnic_ctr_inc(&txq->st.comp_errors);
			slot_release(txq, pool, s, corr,
				     rc ? VNIC_TX_DONE_DROPPED : VNIC_TX_DONE_OK);
		}
		vnic_subcrq_consume(txq->comp);
		if (per_entry)
			bql_completed(txq, epkts, ebytes);
		pkts += epkts;
		bytes += ebytes;
	}
	if (pkts) {
		vnic_ctr_add(&txq->st.completions, pkts);
		vnic_ctr_inc(&txq->st.completion_rounds);
		/* ibmvnic rr 6/7: DQL's limit is bytes per completion interval. */
		if (!per_entry)
			bql_completed(txq, pkts, bytes);
		VNIC_PROBE3(completion, txq->idx, pkts, bytes);
	}
	maybe_wake(txq);
	vnic_trace_end(&vnic_drv_tp.tx_complete, t0);
	return pkts;
}

/*
 * Every slot in flight back to the pool, its host told DROPPED (BQL is
 * reset by the caller: the ring is empty). From here on the ring's
 * completions are stale (live false) until the link comes up again.
 */
void vnic_drv_tx_forget(struct drv_txq *txq)
{
	struct drv_pool *pool;
	uint32_t i;

	for (i = 0; i < txq->pool.count + txq->tso.count; i++) {
		uint32_t corr = i < txq->pool.count ? i : (i - txq->pool.count) | VNIC_TX_CORR_TSO;
		struct tx_slot *s = slot_lookup(txq, corr, &pool);

		if (!s)
			continue;
		vnic_ctr_inc(&txq->st.drops[TXD_RESET]);
		slot_release(txq, pool, s, corr, VNIC_TX_DONE_DROPPED);
	}
	vnic_ctr_set32(&txq->used, 0);
	txq->live = false;
}

int vnic_drv_tx_poll(struct vnic_napi *napi, int budget)
{
	struct drv_txq *txq = vnic_container_of(napi, struct drv_txq, napi);

	(void)budget;
	/* leaving irq or orphan: given up here, under SCHED (live.c) */
	if (vnic_unlikely(txq->reclaim_move) && drv_irq_owner(txq->reclaim) == OWN_TXC) {
		vnic_drv_reclaim_move(txq);
		vnic_drv_tx_reclaim(txq);
		return 0;
	}
	if (txq->reclaim == VNIC_DRV_RECLAIM_LAZY) {
		/* the coarse timer fired: reclaim, and come back while anything is out */
		txq->timer_armed = false;
		vnic_ctr_inc(&txq->st.timer_reclaims);
		vnic_drv_tx_reclaim(txq);
		if (txq->running)
			lazy_timer_arm(txq);
		return 0;
	}
	/* Completion is never budgeted (napi.rst): one round, all of it. */
	vnic_drv_tx_reclaim(txq);
	return 0;
}

/* --- tx-reclaim at run time ------------------------------------------------------------ */

/*
 * A ring's interrupt is armed and masked only by the holder of its owner's
 * NAPI SCHED bit (docs/MECHANISMS.md section 2), and the interrupt handler
 * runs on the device's thread. So a ring changes owner only inside the poll
 * of the owner it leaves: that poll holds SCHED, and whoever took SCHED had
 * masked the ring before the poll could run, so no mask or re-arm of the old
 * owner is in flight anywhere. The new owner is then scheduled, and its
 * completion arms the ring (with the pending check of every re-arm); until
 * then the ring stays masked and its completions wait in it. A handler that
 * read the old mode schedules the old owner once more: its poll reclaims,
 * and its irq ops, which follow the mode (txc_owns, txmask), leave the ring
 * alone. Lazy owns nothing: a move from it is made at once.
 */
void vnic_drv_reclaim_move(struct drv_txq *txq)
{
	struct vnic_drv *drv = txq->drv;
	uint32_t bit = 1u << txq->idx, to = txq->reclaim_next, r;

	txq->reclaim_move = false;
	if (txq->reclaim == VNIC_DRV_RECLAIM_LAZY) {
		txq->timer_armed = false;
		vnic_poller_set_timer(&txq->napi.poller, 0);
	} else if (txq->reclaim == VNIC_DRV_RECLAIM_NAPI) {
		struct drv_rxq *rxq =
			&drv->rxq[atomic_load_explicit(&txq->napi_rxq, memory_order_relaxed)];

		rxq->moves &= ~bit;
		atomic_store_explicit(&rxq->txmask, napi_mask_of(rxq) & ~bit, memory_order_relaxed);
	}
	vnic_ctr_store(&txq->reclaim, to);
	switch (drv_irq_owner(to)) {
	case OWN_RXQ:
		/* ctl.c napi_map's rule: tx queue t is reclaimed by rx queue t % nrx */
		r = txq->idx % drv->nrx;
		atomic_store_explicit(&txq->napi_rxq, r, memory_order_relaxed);
		atomic_store_explicit(&drv->rxq[r].txmask, napi_mask_of(&drv->rxq[r]) | bit,
				      memory_order_relaxed);
		vnic_poller_schedule(&drv->rxq[r].napi.poller);
		break;
	case OWN_TXC:
		vnic_poller_schedule(&txq->napi.poller);
		break;
	case OWN_NONE:
		lazy_timer_arm(txq);
		break;
	}
}

void vnic_drv_reclaim_switch(struct drv_txq *txq, enum vnic_drv_tx_reclaim to)
{
	struct vnic_drv *drv = txq->drv;
	enum drv_irq_owner from = drv_irq_owner(txq->reclaim);
	uint32_t r = atomic_load_explicit(&txq->napi_rxq, memory_order_relaxed);

	txq->reclaim_next = to;
	if (from == drv_irq_owner(to)) {
		/* irq <-> orphan, or back before a move was made: nothing moves */
		txq->reclaim_move = false;
		if (from == OWN_RXQ)
			drv->rxq[r].moves &= ~(1u << txq->idx);
		vnic_ctr_store(&txq->reclaim, to);
		return;
	}
	txq->reclaim_move = true;
	switch (from) {
	case OWN_NONE:
		vnic_drv_reclaim_move(txq);
		break;
	case OWN_TXC:
		vnic_poller_schedule(&txq->napi.poller);
		break;
	case OWN_RXQ:
		drv->rxq[r].moves |= 1u << txq->idx;
		vnic_poller_schedule(&drv->rxq[r].napi.poller);
		break;
	}
}
