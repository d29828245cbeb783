/* SPDX-License-Identifier: MIT */
/*
 * The tx engine: one NAPI per tx queue, woken by the interrupt of the queue's
 * tx submission sub-CRQ (docs/PROTOCOL.md sections 8.1-8.4).
 *
 * Per descriptor: check everything (type, element count and the header
 * descriptors it counts, flags, offloads turned on, map id, ioba and length
 * inside the long-term buffer, the frame's own headers), then
 *   plain     copy from the long-term buffer into a wire slot;
 *   checksum  copy and compute the L4 checksum from scratch in one pass;
 *   LSO       segment straight from the long-term buffer into wire slots,
 *             each segment with complete checksums, each payload summed
 *             as it is copied.
 * A refused descriptor is completed with an rc and counted by reason; the
 * engine keeps going. Correlators are echoed as they came, up to five per
 * tx completion entry, sent at the end of each poll after the frames are
 * committed to the wire: once the driver sees a completion, we are done
 * reading its buffer.
 *
 * Backpressure: a descriptor whose frames the wire has no slots for stays in
 * the ring; a completion the driver's ring has no room for stays in the
 * outbox. Either way the poll stops and looks again after DEV_RETRY_NS
 * (neither the wire nor the driver's ring interrupts us when it drains). So
 * does a descriptor whose header descriptors are not all visible yet, once.
 */
#include <string.h>

#include "device/dev_int.h"

/* The completion rc of each drop reason. */
static const uint8_t drop_rc[TX_DROP_MAX] = {
	[TX_DROP_BAD_TYPE] = VNIC_RC_PARAMETER,
	[TX_DROP_BAD_N_SGE] = VNIC_RC_PARAMETER,
	[TX_DROP_BAD_N_ELEM] = VNIC_RC_PARAMETER,
	[TX_DROP_HDRS_INCOMPLETE] = VNIC_RC_PARAMETER,
	[TX_DROP_BAD_HDR_DESC] = VNIC_RC_PARAMETER,
	[TX_DROP_BAD_FLAGS] = VNIC_RC_PARAMETER,
	[TX_DROP_UNSUPPORTED] = VNIC_RC_UNSUPPORTEDOPTION,
	[TX_DROP_BAD_MSS] = VNIC_RC_PARAMETER,
	[TX_DROP_BAD_MAP_ID] = VNIC_RC_INVALIDIOBA,
	[TX_DROP_BAD_IOBA] = VNIC_RC_INVALIDIOBA,
	[TX_DROP_BAD_LEN] = VNIC_RC_INVALIDLENGTH,
	[TX_DROP_LEN_PAST_LTB] = VNIC_RC_INVALIDLENGTH,
	[TX_DROP_BAD_HEADERS] = VNIC_RC_PARAMETER,
	[TX_DROP_HDR_LEN_MISMATCH] = VNIC_RC_PARAMETER,
	[TX_DROP_MISSING_HDRS] = VNIC_RC_PARAMETER,
	[TX_DROP_GSO_FAILED] = VNIC_RC_PARAMETER,
	/* docs/PROTOCOL.md section 2, "Close": the completion rc for a flush is ABORTED. */
	[TX_DROP_LINK_DOWN] = VNIC_RC_ABORTED,
	[TX_DROP_NO_CARRIER] = VNIC_RC_ABORTED,
};

/* --- interrupt ------------------------------------------------------------ */

void vnic_dev_tx_irq(void *ctx)
{
	vnic_napi_schedule(&((struct dev_txq *)ctx)->napi);
}

/* enable/disable may run on the driver's thread (inside its send): ring read atomically. */
static void tx_irq_enable(void *ctx)
{
	struct vnic_subcrq *q = dev_ring_get(&((struct dev_txq *)ctx)->subm);

	if (q)
		vnic_hv_subcrq_irq_enable(q);
}

static void tx_irq_disable(void *ctx)
{
	struct vnic_subcrq *q = dev_ring_get(&((struct dev_txq *)ctx)->subm);

	if (q)
		vnic_hv_subcrq_irq_disable(q);
}

/*
 * Owner's thread (napi complete). Blocked: the retry timer runs us, not the
 * ring. Halted: nothing runs us until a reset (the ring waits).
 */
static bool tx_irq_pending(void *ctx)
{
	struct dev_txq *txq = ctx;

	return txq->subm && !txq->blocked && !txq->dev->halted && vnic_subcrq_pending(txq->subm);
}

const struct vnic_irq_ops vnic_dev_tx_irq_ops = {
	.enable = tx_irq_enable,
	.disable = tx_irq_disable,
	.pending = tx_irq_pending,
};

/* --- completions ------------------------------------------------------------ */

static bool outbox_has_room(const struct dev_txq *txq)
{
	/* room for the entry being filled, once it closes */
	return txq->ob_tail - txq->ob_head < TX_OUTBOX;
}

static void comp_close(struct dev_txq *txq)
{
	if (!txq->comp.tx_comp.num_comps)
		return;
	txq->comp.first = VNIC_SUBCRQ_VALID;
	txq->outbox[txq->ob_tail++ % TX_OUTBOX] = txq->comp;
	memset(&txq->comp, 0, sizeof(txq->comp));
}

static void complete(struct dev_txq *txq, uint32_t correlator, uint8_t rc)
{
	struct vnic_tx_comp *c = &txq->comp.tx_comp;
	unsigned int n = c->num_comps;

	vnic_be16_put(&c->rcs[n], rc);
	vnic_be32_put(&c->correlators[n], correlator);
	c->num_comps = (uint8_t)(n + 1);
	if (c->num_comps == VNIC_TX_COMP_MAX)
		comp_close(txq);
}

/* Sends the outbox in order; false if the driver's ring is full (BUSY). */
static bool comp_flush(struct dev_txq *txq)
{
	while (txq->ob_head != txq->ob_tail) {
		const union vnic_subcrq_entry *e = &txq->outbox[txq->ob_head % TX_OUTBOX];
		long rc = vnic_dev_coal_send(txq->dev, &txq->dev->coal.tx, &txq->coal,
					     txq->comp_handle, e, e->tx_comp.num_comps);

		if (rc == VNIC_H_BUSY) {
			vnic_ctr_inc(&txq->st.comp_busy);
			return false;
		}
		if (rc == VNIC_H_SUCCESS) {
			vnic_ctr_inc(&txq->st.comp_entries);
			vnic_ctr_add(&txq->st.completions, e->tx_comp.num_comps);
		} else {
			/* CLOSED (driver gone) or PARAMETER (it gave us a bad handle) */
			vnic_ctr_add(&txq->st.comp_lost, e->tx_comp.num_comps);
		}
		txq->ob_head++;
	}
	return true;
}

void vnic_dev_tx_forget(struct dev_txq *txq)
{
	uint64_t lost = txq->comp.tx_comp.num_comps;
	uint32_t i;

	/* Completions the driver will never see: it reclaims those slots itself. */
	for (i = txq->ob_head; i != txq->ob_tail; i++)
		lost += txq->outbox[i % TX_OUTBOX].tx_comp.num_comps;
	vnic_ctr_add(&txq->st.comp_reset, lost);
	memset(&txq->comp, 0, sizeof(txq->comp));
	txq->ob_head = txq->ob_tail = 0;
	vnic_dev_coal_forget(&txq->coal);
	txq->reserved = txq->used = txq->refs_used = 0;
	txq->blocked = false;
	txq->hdrs_wait = 0;
}

/* --- wire slots ------------------------------------------------------------------ */

static void wire_commit(struct dev_txq *txq)
{
	struct vnic_wire *w = txq->wire;

	if (!txq->reserved)
		return;
	w->ops->tx_commit(w, txq->slots, txq->used, txq->reserved);
	txq->reserved = txq->used = 0;
	/* the wire has read every payload chained by reference */
	txq->refs_used = 0;
}

/* Descriptors waiting in the ring, up to max: how many slots to ask for at once. */
static unsigned int ring_backlog(const struct vnic_subcrq *q, unsigned int max)
{
	unsigned int n = 0;

	while (n < max && n < q->size && dev_ring_ahead(q, n))
		n++;
	return n;
}

/*
 * need consecutive slots of the current reservation, reserving anew (after
 * committing what is used) when it runs short. NULL when the wire has not
 * that many: the descriptor waits.
 */
static struct vnic_pkt **get_slots(struct dev_txq *txq, unsigned int need, unsigned int hint)
{
	struct vnic_wire *w = txq->wire;
	unsigned int want, got;

	if (txq->reserved - txq->used >= need)
		return &txq->slots[txq->used];
	wire_commit(txq);
	want = need > hint ? need : hint;
	if (want > TX_SLOTS)
		want = TX_SLOTS;
	got = w->ops->tx_reserve(w, txq->slots, want);
	if (got < need) {
		w->ops->tx_commit(w, txq->slots, 0, got);
		vnic_ctr_inc(&txq->st.wire_full);
		return NULL;
	}
	txq->reserved = got;
	return txq->slots;
}

/* --- one descriptor ----------------------------------------------------------------- */

/* A tx descriptor and what its header descriptors said. */
struct tx_req {
	struct vnic_tx_desc d;
	unsigned int nelem; /* entries to consume when done */
	bool has_hdrs;
	uint8_t hdr_flag; /* VNIC_HDR_DESC_L* */
	uint8_t hdr_l2;
	uint16_t hdr_l3;
	uint8_t hdr_l4;
	const struct dev_ltb *ltb;
	uint8_t *frame; /* sge_len bytes in the long-term buffer */
	uint32_t len;
	unsigned int hint; /* slots worth reserving at once */
};

static bool is_hdr_type(uint8_t type)
{
	return type == VNIC_HDR_DESC || type == VNIC_HDR_EXT_DESC;
}

/* Header descriptors right behind the tx descriptor, up to max: what a refusal consumes. */
static unsigned int hdrs_behind(const struct vnic_subcrq *q, unsigned int max)
{
	const union vnic_subcrq_entry *e;
	unsigned int n = 0;

	if (max > q->size - 1)
		max = q->size - 1;
	while (n < max && (e = dev_ring_ahead(q, n + 1)) && is_hdr_type(e->generic.type))
		n++;
	return n;
}

/*
 * The header descriptors n_crq_elem counts: all in the ring now (they came in
 * the same indirect batch, published at once), a header descriptor then
 * extensions, lengths adding up. TX_DROP_MAX if all is well.
 */
static enum tx_drop read_hdrs(const struct vnic_subcrq *q, struct tx_req *r)
{
	unsigned int k = r->d.n_crq_elem, i;
	uint32_t total = 0, left = 0, sum = 0;

	/* what a descriptor without header descriptors leaves behind */
	r->hdr_flag = 0;
	r->hdr_l2 = 0;
	r->hdr_l3 = 0;
	r->hdr_l4 = 0;
	/* a batch longer than the ring cannot have arrived whole */
	if (k > q->size)
		return TX_DROP_HDRS_INCOMPLETE;
	for (i = 1; i < k; i++) {
		const union vnic_subcrq_entry *e = dev_ring_ahead(q, i);

		if (!e)
			return TX_DROP_HDRS_INCOMPLETE;
		if (i == 1) {
			struct vnic_hdr_desc h;

			memcpy(&h, e, sizeof(h));
			if (h.type != VNIC_HDR_DESC)
				return TX_DROP_BAD_HDR_DESC;
			total = h.len;
			r->hdr_flag = h.flag;
			r->hdr_l2 = h.l2_len;
			r->hdr_l3 = vnic_be16_get(&h.l3_len);
			r->hdr_l4 = h.l4_len;
			if (!h.flag ||
			    (h.flag & ~(VNIC_HDR_DESC_L2 | VNIC_HDR_DESC_L3 | VNIC_HDR_DESC_L4)))
				return TX_DROP_BAD_HDR_DESC;
			if (h.flag & VNIC_HDR_DESC_L2)
				sum += r->hdr_l2;
			if (h.flag & VNIC_HDR_DESC_L3)
				sum += r->hdr_l3;
			if (h.flag & VNIC_HDR_DESC_L4)
				sum += r->hdr_l4;
			/* len is the header bytes of all descriptors of the packet */
			if (!total || total > VNIC_MAX_HDR_BYTES || sum != total ||
			    vnic_hdr_descs_needed(total) != k - 1)
				return TX_DROP_BAD_HDR_DESC;
			left = total > VNIC_HDR_DESC_BYTES ? total - VNIC_HDR_DESC_BYTES : 0;
		} else {
			uint32_t want = left > VNIC_HDR_EXT_BYTES ? VNIC_HDR_EXT_BYTES : left;

			if (e->hdr_ext.type != VNIC_HDR_EXT_DESC || e->hdr_ext.len != want)
				return TX_DROP_BAD_HDR_DESC;
			left -= want;
		}
	}
	r->has_hdrs = k > 1;
	return TX_DROP_MAX;
}

/* The flags alone: combinations, then whether the driver turned the offload on. */
static enum tx_drop check_flags(const struct vnic_dev *dev, const struct tx_req *r)
{
	uint8_t f1 = r->d.flags1, f2 = r->d.flags2;
	bool v4 = f1 & VNIC_TX_PROT_IPV4, v6 = f1 & VNIC_TX_PROT_IPV6;
	bool tcp = f1 & VNIC_TX_PROT_TCP, udp = f1 & VNIC_TX_PROT_UDP;
	bool cso = f1 & VNIC_TX_CHKSUM_OFFLOAD, lso = f1 & VNIC_TX_LSO;
	bool on;

	if (!(f1 & VNIC_TX_COMP_NEEDED) || (f2 & ~VNIC_TX_VLAN_INSERT))
		return TX_DROP_BAD_FLAGS;
	if ((v4 && v6) || (tcp && udp))
		return TX_DROP_BAD_FLAGS;
	if (lso && !cso)
		return TX_DROP_BAD_FLAGS;
	if (cso && (!(v4 || v6) || !(tcp || udp)))
		return TX_DROP_BAD_FLAGS;
	/* VLAN insertion was never offered. */
	if ((f1 & VNIC_TX_VLAN_PRESENT) || (f2 & VNIC_TX_VLAN_INSERT))
		return TX_DROP_UNSUPPORTED;
	if (lso)
		on = v4 ? dev->ol.lso4 : dev->ol.lso6;
	else if (cso)
		on = v4 ? (tcp ? dev->ol.tcp4 : dev->ol.udp4) : (tcp ? dev->ol.tcp6 : dev->ol.udp6);
	else
		on = true;
	if (!on)
		return TX_DROP_UNSUPPORTED;
	if (lso && vnic_be16_get(&r->d.mss) < dev->cfg.min_lso_mss)
		return TX_DROP_BAD_MSS;
	return TX_DROP_MAX;
}

/* Map id, length and ioba; on success r->frame points at the frame. */
static enum tx_drop check_buffer(struct vnic_dev *dev, struct tx_req *r)
{
	uint16_t id = vnic_be16_get(&r->d.dma_reg);
	bool lso = r->d.flags1 & VNIC_TX_LSO;
	uint64_t ioba = vnic_be64_get(&r->d.ioba), off;
	uint32_t max;

	if (!id || id > VNIC_MAX_MAP_ID || !dev->ltb[id].len)
		return TX_DROP_BAD_MAP_ID;
	r->ltb = &dev->ltb[id];
	r->len = vnic_be32_get(&r->d.sge_len);
	/* a superpacket: 64 KiB of payload behind at most VNIC_MAX_HDRS of headers */
	max = lso ? VNIC_PKT_MAX_LEN : dev->req_mtu + VNIC_VLAN_HLEN;
	if (r->len < VNIC_ETH_HLEN || r->len > max)
		return TX_DROP_BAD_LEN;
	if (ioba < r->ltb->ioba || ioba - r->ltb->ioba >= r->ltb->len)
		return TX_DROP_BAD_IOBA;
	off = ioba - r->ltb->ioba;
	if (r->len > r->ltb->len - off)
		return TX_DROP_LEN_PAST_LTB;
	/* The map was good at REQUEST_MAP; the driver may have unmapped since. */
	r->frame = vnic_hv_dma_translate(dev->hv, ioba, r->len);
	if (!r->frame)
		return TX_DROP_BAD_IOBA;
	/* The cost model's DMA: the device reads the frame out of the client's memory. */
	vnic_hv_dma_charge(dev->hv, r->len);
	if (!lso) {
		uint16_t type = (uint16_t)(r->frame[12] << 8 | r->frame[13]);
		bool tagged = type == VNIC_ETH_P_8021Q || type == VNIC_ETH_P_8021AD;

		/* The L3 MTU behind an Ethernet header and at most one tag. */
		if (r->len > dev_mtu(dev) + VNIC_ETH_HLEN + (tagged ? VNIC_VLAN_HLEN : 0))
			return TX_DROP_BAD_LEN;
	}
	return TX_DROP_MAX;
}

/* Header descriptor lengths, for the layers it claims, against the frame's. */
static bool hdr_lens_ok(const struct tx_req *r, uint32_t l2, uint32_t l3, uint32_t l4)
{
	if (!r->has_hdrs)
		return true;
	if ((r->hdr_flag & VNIC_HDR_DESC_L2) && r->hdr_l2 != l2)
		return false;
	if ((r->hdr_flag & VNIC_HDR_DESC_L3) && r->hdr_l3 != l3)
		return false;
	if ((r->hdr_flag & VNIC_HDR_DESC_L4) && r->hdr_l4 != l4)
		return false;
	return true;
}

/*
 * The mask (TX_RX_DESC_REQ) for this packet's class: were the headers it
 * asks for sent? Counted when not; refused only if configured so.
 */
static enum tx_drop check_missing(struct dev_txq *txq, const struct tx_req *r)
{
	struct vnic_dev *dev = txq->dev;
	bool lso = r->d.flags1 & VNIC_TX_LSO, cso = r->d.flags1 & VNIC_TX_CHKSUM_OFFLOAD;
	unsigned int byte = lso	  ? VNIC_DESC_REQ_BYTE_LSO
			    : cso ? VNIC_DESC_REQ_BYTE_CSUM
				  : VNIC_DESC_REQ_BYTE_PLAIN;
	uint8_t need = vnic_desc_req_get(dev->desc_req, byte);
	uint8_t layers = need & (VNIC_DESC_REQ_L2 | VNIC_DESC_REQ_L3 | VNIC_DESC_REQ_L4);
	uint8_t have = r->has_hdrs ? (uint8_t)(r->hdr_flag >> 1) : 0;

	if (!(need & VNIC_DESC_REQ_HDRS) || (r->has_hdrs && (have & layers) == layers))
		return TX_DROP_MAX;
	if (lso)
		vnic_ctr_inc(&txq->st.lso_missing_hdrs);
	else if (cso)
		vnic_ctr_inc(&txq->st.csum_missing_hdrs);
	/* set from any thread (vnic_dev_set): one relaxed load, on this rare path only */
	return vnic_ctr_load(&dev->cfg.drop_missing_hdrs) ? TX_DROP_MISSING_HDRS : TX_DROP_MAX;
}

/* Does the frame's L3/L4 match the descriptor's protocol flags? */
static bool prot_match(uint8_t flags1, uint16_t l3_proto, uint8_t l4_proto)
{
	bool v4 = flags1 & VNIC_TX_PROT_IPV4, tcp = flags1 & VNIC_TX_PROT_TCP;

	if (l3_proto != (v4 ? VNIC_ETH_P_IP : VNIC_ETH_P_IPV6))
		return false;
	return l4_proto == (tcp ? VNIC_IPPROTO_TCP : VNIC_IPPROTO_UDP);
}

/*
 * One wire slot with room for the frame. 1 done, 0 no slot yet (the caller
 * retries later), -1 with *why set.
 */
static int slot_for(struct dev_txq *txq, const struct tx_req *r, struct vnic_pkt **out,
		    enum tx_drop *why)
{
	struct vnic_pkt **slot = get_slots(txq, 1, r->hint);

	if (!slot)
		return 0;
	if (vnic_unlikely(r->len > slot[0]->buf_size - vnic_pkt_headroom(slot[0]))) {
		*why = TX_DROP_BAD_LEN;
		return -1;
	}
	*out = slot[0];
	return 1;
}

/* Copies the frame into one wire slot; returns as slot_for. */
static int copy_to_slot(struct dev_txq *txq, const struct tx_req *r, struct vnic_pkt **out,
			enum tx_drop *why)
{
	int ret = slot_for(txq, r, out, why);

	if (ret != 1)
		return ret;
	memcpy((*out)->data, r->frame, r->len);
	(*out)->len = r->len;
	return 1;
}

/*
 * A frame with neither offload: a copy. Header descriptors sent anyway must
 * still describe it.
 */
static int send_plain(struct dev_txq *txq, struct tx_req *r, enum tx_drop *why)
{
	struct vnic_pkt *slot;
	int ret;

	if (r->has_hdrs) {
		struct vnic_hdrs h;

		if (vnic_parse_frame(r->frame, r->len, &h) != VNIC_PARSE_OK) {
			*why = TX_DROP_BAD_HEADERS;
			return -1;
		}
		if (!hdr_lens_ok(r, h.l2_len, h.l3_len, h.l4_len)) {
			*why = TX_DROP_HDR_LEN_MISMATCH;
			return -1;
		}
	}
	ret = copy_to_slot(txq, r, &slot, why);
	if (ret == 1)
		txq->used++;
	return ret;
}

/*
 * Checksum offload: parse the driver's frame to learn where L4 is (its
 * header descriptors only have to agree), then copy and compute the
 * checksum from scratch in one pass (vnic_csum_l4_copy_set): the field's
 * content is never trusted, the sum is of the bytes as they land in the
 * slot, so the driver cannot change them between the sum and the wire. h
 * was taken from the long-term buffer, but only its offsets and lengths are
 * used, and those are inside len whatever the bytes are now.
 */
static int send_csum(struct dev_txq *txq, struct tx_req *r, enum tx_drop *why)
{
	struct vnic_pkt *slot;
	struct vnic_hdrs h;
	int ret;

	if (vnic_parse_frame(r->frame, r->len, &h) != VNIC_PARSE_OK ||
	    !(h.flags & VNIC_HDRS_F_L4) || (h.flags & VNIC_HDRS_F_FRAG) ||
	    !prot_match(r->d.flags1, h.l3_proto, h.l4_proto)) {
		*why = TX_DROP_BAD_HEADERS;
		return -1;
	}
	if (!hdr_lens_ok(r, h.l2_len, h.l3_len, h.l4_len)) {
		*why = TX_DROP_HDR_LEN_MISMATCH;
		return -1;
	}
	ret = slot_for(txq, r, &slot, why);
	if (ret != 1)
		return ret;
	if (vnic_unlikely(vnic_csum_l4_copy_set(slot->data, r->frame, r->len, &h))) {
		*why = TX_DROP_BAD_HEADERS;
		return -1;
	}
	slot->len = r->len;
	txq->used++;
	vnic_ctr_inc(&txq->st.csum_inserted);
	return 1;
}

/*
 * The largest superframe the wire takes now: a kernel's (AF_PACKET with a
 * vnet header) always, a cable with cable-tso while the device at its other
 * end takes them (docs/PROTOCOL.md section 8.5, "Large receive"); 0 for MTU
 * frames only. Once per superpacket.
 */
static uint32_t wire_gso_max(struct vnic_wire *w)
{
	if (w->gso_max_size)
		return w->gso_max_size;
	return w->ops->tx_gso_max ? w->ops->tx_gso_max(w) : 0;
}

/*
 * A superframe's headers (hlen bytes, which send_lso parsed and checked lie
 * inside the frame) copied into one wire slot, and its payload chained by
 * reference where it is, in the long-term buffer (the wire's tx_frags): the
 * wire hands both to its kernel, whose copy is then the only one. The slot's
 * headers are the device's own, so the wire writes the pseudo-header sum
 * there and never into the driver's buffer. The payload is read once, by
 * the kernel, which computes every checksum over it as it segments: a driver
 * rewriting it meanwhile sends garbage with right sums, as it would have
 * between a copy's read and the wire. Returns as slot_for.
 */
static int ref_to_slot(struct dev_txq *txq, const struct tx_req *r, uint32_t hlen,
		       struct vnic_pkt **out, enum tx_drop *why)
{
	struct vnic_pkt *slot, *ref;
	int ret = slot_for(txq, r, out, why);

	if (ret != 1)
		return ret;
	slot = *out;
	ref = &txq->refs[txq->refs_used++];
	ref->head = r->frame + hlen;
	ref->data = ref->head;
	ref->len = r->len - hlen;
	ref->buf_size = ref->len;
	ref->next = NULL;
	memcpy(slot->data, r->frame, hlen);
	slot->len = r->len;
	slot->frags = ref;
	slot->frags_tail = ref;
	slot->frag_len = ref->len;
	vnic_ctr_inc(&txq->st.lso_super_ref);
	return 1;
}

/*
 * LSO onto a wire that takes superframes (the kernel behind it segments, as
 * a NIC's TSO would, or the device at the cable's other end hands it to its
 * driver as a large receive): one slot, with the GSO metadata and the
 * headers as parsed and validated above; the wire builds what its kernel
 * needs (a partial checksum, the pseudo-header sum in its field). The
 * payload is copied into the slot, or left where it is for a wire that
 * takes it by reference (tx_frags), up to TX_REFS per reservation.
 */
static int send_super(struct dev_txq *txq, struct tx_req *r, const struct vnic_pkt *in, int segs,
		      enum tx_drop *why)
{
	uint32_t hlen = (uint32_t)in->l2_len + in->l3_len + in->l4_len;
	struct vnic_pkt *slot;
	int ret;

	if (txq->wire->tx_frags && hlen < r->len && txq->refs_used < TX_REFS)
		ret = ref_to_slot(txq, r, hlen, &slot, why);
	else
		ret = copy_to_slot(txq, r, &slot, why);
	if (ret != 1)
		return ret;
	slot->gso_type = in->gso_type;
	slot->gso_size = in->gso_size;
	slot->gso_segs = (uint16_t)segs;
	slot->l2_len = in->l2_len;
	slot->l3_len = in->l3_len;
	slot->l4_len = in->l4_len;
	slot->l3_proto = in->l3_proto;
	slot->l4_proto = in->l4_proto;
	slot->flags = (uint8_t)((slot->flags & ~VNIC_PKT_F_VLAN) | VNIC_PKT_F_PARSED);
	txq->used++;
	vnic_ctr_inc(&txq->st.lso_packets);
	vnic_ctr_inc(&txq->st.lso_super);
	vnic_ctr_add(&txq->st.lso_segments, (unsigned int)segs);
	return 1;
}

/*
 * LSO: the superpacket is read in place, a struct vnic_pkt on our stack
 * pointing into the long-term buffer, and segmented straight into wire slots
 * with complete checksums (src/net validates its headers again and never
 * writes the input). A driver rewriting its buffer meanwhile gets garbage on
 * the wire, never a read outside the buffer: every length is bounded by
 * sge_len.
 */
static int send_lso(struct dev_txq *txq, struct tx_req *r, enum tx_drop *why)
{
	struct vnic_dev *dev = txq->dev;
	uint16_t mss = vnic_be16_get(&r->d.mss);
	struct vnic_pkt **slots;
	struct vnic_pkt in;
	int segs, n;

	memset(&in, 0, sizeof(in));
	in.data = r->frame;
	in.head = r->frame;
	in.len = r->len;
	in.buf_size = r->len;
	if (vnic_parse_pkt(&in) != VNIC_PARSE_OK || !in.l4_proto ||
	    !prot_match(r->d.flags1, in.l3_proto, in.l4_proto)) {
		*why = TX_DROP_BAD_HEADERS;
		return -1;
	}
	if (!hdr_lens_ok(r, in.l2_len, in.l3_len, in.l4_len)) {
		*why = TX_DROP_HDR_LEN_MISMATCH;
		return -1;
	}
	/* every segment must fit the negotiated MTU */
	if ((uint32_t)in.l3_len + in.l4_len + mss > dev_mtu(dev)) {
		*why = TX_DROP_BAD_MSS;
		return -1;
	}
	if (in.l4_proto == VNIC_IPPROTO_UDP) {
		in.gso_type = VNIC_GSO_UDP_L4;
	} else {
		in.gso_type = in.l3_proto == VNIC_ETH_P_IP ? VNIC_GSO_TCPV4 : VNIC_GSO_TCPV6;
		/* CWR on the superpacket: only the first segment keeps it */
		if (r->frame[in.l2_len + in.l3_len + 13] & VNIC_TCP_CWR)
			in.gso_type |= VNIC_GSO_TCP_ECN;
	}
	in.gso_size = mss;
	segs = vnic_gso_count(&in);
	if (segs < 1 || segs > TX_SLOTS) {
		*why = TX_DROP_GSO_FAILED;
		return -1;
	}
	if (r->len <= wire_gso_max(txq->wire))
		return send_super(txq, r, &in, segs, why);
	slots = get_slots(txq, (unsigned int)segs, r->hint);
	if (!slots)
		return 0;
	n = vnic_gso_segment(&in, slots, (unsigned int)segs, VNIC_GSO_F_CSUM_COMPLETE);
	if (n != segs) {
		*why = TX_DROP_GSO_FAILED;
		return -1;
	}
	txq->used += (unsigned int)segs;
	vnic_ctr_inc(&txq->st.lso_packets);
	vnic_ctr_add(&txq->st.lso_segments, (unsigned int)segs);
	return 1;
}

static void refuse(struct dev_txq *txq, uint32_t correlator, enum tx_drop why)
{
	vnic_ctr_inc(&txq->st.drops[why]);
	VNIC_PROBE3(drop, "dev_tx", "refused", why);
	complete(txq, correlator, drop_rc[why]);
}

/*
 * Handles the descriptor at the cursor. Returns the ring entries it used
 * (consumed by the caller), or 0 when it must wait for wire slots.
 */
static unsigned int tx_one(struct dev_txq *txq, const struct vnic_subcrq *q,
			   const union vnic_subcrq_entry *e, unsigned int hint)
{
	struct vnic_dev *dev = txq->dev;
	enum tx_drop why;
	struct tx_req r;
	uint32_t corr;
	int sent;

	if (is_hdr_type(e->generic.type)) {
		/* no tx descriptor before it: nothing to complete */
		vnic_ctr_inc(&txq->st.orphan_hdr_descs);
		return 1;
	}
	memcpy(&r.d, e, sizeof(r.d));
	r.nelem = 1;
	r.has_hdrs = false;
	r.hint = hint;
	corr = vnic_be32_get(&r.d.correlator);

	if (r.d.type != VNIC_TX_DESC) {
		why = TX_DROP_BAD_TYPE;
		goto refuse;
	}
	/* A refusal takes the header descriptors right behind it too. */
	r.nelem = 1 + hdrs_behind(q, r.d.n_crq_elem > 1 ? r.d.n_crq_elem - 1u : 0);
	if (!dev->link_up) {
		why = TX_DROP_LINK_DOWN;
		goto refuse;
	}
	if (vnic_unlikely(!dev->phys_up)) {
		why = TX_DROP_NO_CARRIER;
		goto refuse;
	}
	if (r.d.n_sge != 1) {
		why = TX_DROP_BAD_N_SGE;
		goto refuse;
	}
	if (r.d.n_crq_elem < 1 || r.d.n_crq_elem > VNIC_MAX_TX_ELEMS) {
		why = TX_DROP_BAD_N_ELEM;
		goto refuse;
	}
	why = read_hdrs(q, &r);
	if (why == TX_DROP_HDRS_INCOMPLETE && txq->hdrs_wait != q->cur + 1) {
		/*
		 * The hv publishes an indirect batch last entry first (its
		 * valid byte released last: src/hv/subcrq.c), so the acquire
		 * that showed us this descriptor also shows every header
		 * descriptor sent with it; missing ones were never sent (a
		 * direct send cannot carry them). One more look a poll later
		 * costs nothing and tolerates a producer that publishes front
		 * to back (a future hv over shared memory may); then refused.
		 */
		txq->hdrs_wait = q->cur + 1;
		vnic_ctr_inc(&txq->st.hdrs_waits);
		return 0;
	}
	if (why != TX_DROP_MAX)
		goto refuse;
	why = check_flags(dev, &r);
	if (why != TX_DROP_MAX)
		goto refuse;
	why = check_buffer(dev, &r);
	if (why != TX_DROP_MAX)
		goto refuse;
	why = check_missing(txq, &r);
	if (why != TX_DROP_MAX)
		goto refuse;

	if (r.d.flags1 & VNIC_TX_LSO)
		sent = send_lso(txq, &r, &why);
	else if (r.d.flags1 & VNIC_TX_CHKSUM_OFFLOAD)
		sent = send_csum(txq, &r, &why);
	else
		sent = send_plain(txq, &r, &why);
	if (!sent)
		return 0;
	if (sent < 0)
		goto refuse;
	vnic_ctr_add(&txq->st.hdr_descs, r.nelem - 1);
	vnic_ctr_inc(&txq->st.packets);
	vnic_ctr_add(&txq->st.bytes, r.len);
	complete(txq, corr, VNIC_RC_SUCCESS);
	return r.nelem;

refuse:
	refuse(txq, corr, why);
	return r.nelem;
}

/* --- polls ---------------------------------------------------------------------------- */

static int tx_poll(struct vnic_napi *napi, int budget)
{
	struct dev_txq *txq = vnic_container_of(napi, struct dev_txq, napi);
	struct vnic_subcrq *q = txq->subm;
	int done = 0;

	txq->blocked = false;
	/* Halted after a fatal error: the ring waits for the driver's reset. */
	if (!q || vnic_unlikely(txq->dev->halted))
		return 0;
	if (!comp_flush(txq))
		goto blocked;
	while (done < budget && outbox_has_room(txq)) {
		const union vnic_subcrq_entry *e = vnic_subcrq_peek(q);
		unsigned int n, hint = 1;

		if (!e)
			break;
		if (!txq->reserved || txq->reserved == txq->used)
			hint = ring_backlog(q, (unsigned int)(budget - done));
		n = tx_one(txq, q, e, hint);
		if (!n) {
			txq->blocked = true;
			break;
		}
		txq->hdrs_wait = 0;
		while (n--)
			vnic_subcrq_consume(q);
		done++;
	}
	/* frames on the wire before the driver learns it may reuse its buffers */
	wire_commit(txq);
	comp_close(txq);
	if (!comp_flush(txq) || txq->blocked)
		goto blocked;
	return done;

blocked:
	txq->blocked = true;
	vnic_poller_set_timer(&napi->poller, vnic_now_ns() + DEV_RETRY_NS);
	return 0;
}

int vnic_dev_tx_poll(struct vnic_napi *napi, int budget)
{
	uint64_t t0 = vnic_trace_begin(&vnic_dev_tp.tx);
	int work = tx_poll(napi, budget);

	vnic_trace_end(&vnic_dev_tp.tx, t0);
	return work;
}

bool vnic_dev_tx_drain(struct dev_txq *txq)
{
	struct vnic_subcrq *q = txq->subm;
	const union vnic_subcrq_entry *e;

	if (!q)
		return true;
	if (!comp_flush(txq))
		return false;
	/* link_up is false: every descriptor is refused, none needs the wire */
	while ((e = vnic_subcrq_peek(q))) {
		unsigned int n;

		if (!outbox_has_room(txq) && !comp_flush(txq))
			return false;
		n = tx_one(txq, q, e, 1);
		if (!n)
			return false; /* cannot happen with the link down; never spin on it */
		while (n--)
			vnic_subcrq_consume(q);
	}
	comp_close(txq);
	return comp_flush(txq);
}
