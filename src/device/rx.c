/* SPDX-License-Identifier: MIT */
/*
 * The rx engines: a NAPI fed by each wire (docs/PROTOCOL.md sections 8.5 and 8.6).
 *
 * Posted rx buffers are taken off each queue's rx buffer add ring into a fifo
 * as frames need them (checked then: map id, ioba and length inside the
 * long-term buffer, length at least what the login response asked for; a bad
 * one is counted and ignored, with nothing sent back). Each wire frame goes
 * to the queue RSS picks (Toeplitz hash of the default key over the 4-tuple,
 * or the 2-tuple; a single queue does not hash), into that queue's oldest
 * buffer, translated at use. The IPv4 header checksum and the TCP/UDP
 * checksum are verified (the latter summed while the frame is copied into
 * the buffer) and reported in the rx completion flags; frames that
 * do not parse are delivered with the flags clear. No buffer: the frame is
 * dropped and counted, never held (the wire would back up behind it).
 *
 * The wire has no interrupt for frames that are in flight but not yet due
 * (delay, rate): the poll reads when the next one is due and sets its timer.
 *
 * With a wire per queue pair (cfg.queue_wire), engine w takes no RSS
 * decision: the sender put the frame on its wire w, and it goes to rx queue
 * w, whose state is that engine's alone (and its cpu's, with queue_cpu). A
 * wire past the rx queues the driver logged in with has no queue of its
 * own: its frames are dropped and counted (rx_drop_bad_queue) rather than
 * folded onto a queue another engine, perhaps on another cpu, feeds.
 */
#include <string.h>

#include "device/dev_int.h"

void vnic_dev_rx_notify(void *ctx)
{
	vnic_napi_schedule(&((struct dev_rxe *)ctx)->napi);
}

/*
 * The wire's notification, wrapped so that a poll blocked on a full rx
 * completion ring is run by its retry timer instead of being rescheduled at
 * once by frames that keep waiting. enable/disable run on the peer's thread
 * too; they touch only the wire.
 */
static void rx_irq_enable(void *ctx)
{
	struct vnic_wire *w = ((struct dev_rxe *)ctx)->wire;

	if (w->ops->rx_irq)
		w->ops->rx_irq->enable(w);
}

static void rx_irq_disable(void *ctx)
{
	struct vnic_wire *w = ((struct dev_rxe *)ctx)->wire;

	if (w->ops->rx_irq)
		w->ops->rx_irq->disable(w);
}

static bool rx_irq_pending(void *ctx)
{
	struct dev_rxe *rxe = ctx;
	struct vnic_wire *w = rxe->wire;

	return !rxe->blocked && w->ops->rx_irq && w->ops->rx_irq->pending(w);
}

const struct vnic_irq_ops vnic_dev_rx_irq_ops = {
	.enable = rx_irq_enable,
	.disable = rx_irq_disable,
	.pending = rx_irq_pending,
};

/* --- posted buffers ----------------------------------------------------------- */

void vnic_dev_rx_refill(struct vnic_dev *dev, struct dev_rxq *rxq)
{
	const union vnic_subcrq_entry *e;
	struct vnic_subcrq *q = rxq->add;

	if (!q)
		return;
	while (rxq->tail - rxq->head <= rxq->fifo_mask && (e = vnic_subcrq_peek(q))) {
		struct vnic_rx_add a;
		const struct dev_ltb *ltb;
		struct rx_buf *b;
		uint32_t ioba, len;

		memcpy(&a, e, sizeof(a));
		vnic_subcrq_consume(q);
		ltb = &dev->ltb[a.map_id];
		if (!a.map_id || !ltb->len) {
			vnic_ctr_inc(&rxq->st.bad_rx_add_map_id);
			continue;
		}
		ioba = vnic_be32_get(&a.ioba);
		len = vnic_be24_get(&a.len);
		if (len < dev->rx_buf_size) {
			vnic_ctr_inc(&rxq->st.bad_rx_add_len);
			continue;
		}
		if (ioba < ltb->ioba || ioba - ltb->ioba >= ltb->len ||
		    len > ltb->len - (ioba - ltb->ioba)) {
			vnic_ctr_inc(&rxq->st.bad_rx_add_ioba);
			continue;
		}
		b = &rxq->fifo[rxq->tail & rxq->fifo_mask];
		b->correlator = vnic_be64_get(&a.correlator);
		b->ioba = ioba;
		b->len = len;
		/* head and tail give the counters' bufs_avail: relaxed stores */
		vnic_ctr_add32(&rxq->tail, 1);
		vnic_ctr_inc(&rxq->st.bufs_posted);
	}
}

void vnic_dev_rx_forget(struct vnic_dev *dev, struct dev_rxq *rxq)
{
	(void)dev;
	vnic_ctr_set32(&rxq->head, rxq->tail);
	rxq->unsent_pos = rxq->unsent_n = 0;
	vnic_dev_coal_forget(&rxq->coal);
	if (!rxq->add)
		return;
	while (vnic_subcrq_peek(rxq->add))
		vnic_subcrq_consume(rxq->add);
}

/* --- completions --------------------------------------------------------------- */

/*
 * One completion. The frame's last (END_FRAME) goes through coalescing and
 * counts as one; the buffers before it in a large receive go without an
 * interrupt: the driver cannot use them before the last arrives anyway.
 */
static long comp_send_one(struct vnic_dev *dev, struct dev_rxq *rxq,
			  const union vnic_subcrq_entry *e)
{
	if (e->rx_comp.flags & VNIC_RXC_END_FRAME)
		return vnic_dev_coal_send(dev, &dev->coal.rx, &rxq->coal, rxq->comp_handle, e, 1);
	return vnic_hv_send_subcrq_noirq(dev->hv, VNIC_HV_SERVER, rxq->comp_handle, e);
}

/*
 * Sends e[0..n) (n <= RX_MAX_CHUNKS) in order. false: the driver's ring is
 * full, and what was not sent waits in rxq->unsent (e may point into it
 * already: then only the position moves).
 */
static bool comp_send(struct vnic_dev *dev, struct dev_rxq *rxq, const union vnic_subcrq_entry *e,
		      unsigned int n)
{
	bool stashed = e >= rxq->unsent && e < rxq->unsent + RX_MAX_CHUNKS;
	unsigned int i;

	for (i = 0; i < n; i++) {
		long rc = comp_send_one(dev, rxq, &e[i]);

		if (rc == VNIC_H_BUSY) {
			vnic_ctr_inc(&rxq->st.comp_busy);
			if (stashed) {
				rxq->unsent_pos = (uint32_t)(&e[i] - rxq->unsent);
			} else {
				memcpy(rxq->unsent, &e[i], (n - i) * sizeof(*e));
				rxq->unsent_pos = 0;
				rxq->unsent_n = n - i;
			}
			return false;
		}
		if (rc == VNIC_H_SUCCESS)
			vnic_ctr_inc(&rxq->st.completions);
		else /* CLOSED: the driver is gone. PARAMETER: it gave us a bad handle. */
			vnic_ctr_inc(&rxq->st.comp_lost);
	}
	rxq->unsent_pos = rxq->unsent_n = 0;
	return true;
}

/* The rx queues engine rxe feeds: [*lo, *hi). */
static void rxe_queues(const struct dev_rxe *rxe, unsigned int *lo, unsigned int *hi)
{
	const struct vnic_dev *dev = rxe->dev;

	if (dev->nwires == 1) {
		*lo = 0;
		*hi = dev->nrxq;
	} else {
		*lo = rxe->idx;
		*hi = rxe->idx < dev->nrxq ? rxe->idx + 1 : rxe->idx;
	}
}

static bool retry_unsent(struct dev_rxe *rxe)
{
	struct vnic_dev *dev = rxe->dev;
	unsigned int i, lo, hi;

	rxe_queues(rxe, &lo, &hi);
	for (i = lo; i < hi; i++) {
		struct dev_rxq *rxq = &dev->rxq[i];
		uint32_t pos = rxq->unsent_pos, n = rxq->unsent_n;

		if (pos >= n)
			continue;
		if (!comp_send(dev, rxq, &rxq->unsent[pos], n - pos))
			return false;
	}
	return true;
}

/* --- copy and filter -------------------------------------------------------------- */

/*
 * Copies the frame into the posted buffer and verifies what can be
 * verified, the L4 sum taken during the copy; returns the rx completion
 * flags.
 */
static uint8_t copy_verify(struct dev_rxq *rxq, uint8_t *dst, const uint8_t *frame, uint32_t len,
			   const struct vnic_hdrs *h)
{
	bool l4 = (h->l4_proto == VNIC_IPPROTO_TCP || h->l4_proto == VNIC_IPPROTO_UDP) &&
		  (h->flags & VNIC_HDRS_F_L4) && !(h->flags & VNIC_HDRS_F_FRAG);
	uint8_t flags = 0;

	if (h->l3_proto == VNIC_ETH_P_IP) {
		if (vnic_csum_ip4_ok(frame + h->l3_off, h->l3_len)) {
			flags |= VNIC_RXC_IP_CHKSUM_GOOD;
			vnic_ctr_inc(&rxq->st.ip_csum_good);
		} else {
			vnic_ctr_inc(&rxq->st.ip_csum_bad);
		}
	} else if (h->l3_proto == VNIC_ETH_P_IPV6) {
		/* no header checksum to get wrong; drivers want both bits for UNNECESSARY */
		flags |= VNIC_RXC_IP_CHKSUM_GOOD;
		vnic_ctr_inc(&rxq->st.ip_csum_good);
	}
	if (!l4) {
		memcpy(dst, frame, len);
	} else if (vnic_csum_l4_copy_ok(dst, frame, len, h)) {
		flags |= VNIC_RXC_TCP_UDP_CHKSUM_GOOD;
		vnic_ctr_inc(&rxq->st.csum_good);
	} else {
		vnic_ctr_inc(&rxq->st.csum_bad);
	}
	return flags;
}

/*
 * The filter of a NIC that is not promiscuous: its own unicast address,
 * and every group address (broadcast, multicast: the driver has no way to
 * ask for a multicast list, so all are taken, as IFF_ALLMULTI would).
 */
static bool for_us(const struct vnic_dev *dev, const uint8_t *dst)
{
	return !dev->cfg.rx_filter || (dst[0] & 1) || !memcmp(dst, dev->cfg.mac, 6);
}

/* What became of a frame the wire handed us. */
enum rx_outcome {
	RX_DONE,      /* delivered or dropped: release it */
	RX_COMP_WAIT, /* delivered, its completion waits for room: release it, then stop */
	RX_BUF_WAIT,  /* left on the wire, to be looked at again: stop */
};

/* --- large receive --------------------------------------------------------------- */

/*
 * A superframe's GSO metadata, written by the device at the cable's other
 * end, against the frame's own headers; the large receive type on success.
 * Every segment it stands for must fit the MTU our driver negotiated.
 */
static bool super_ok(const struct vnic_dev *dev, const struct vnic_pkt *f,
		     const struct vnic_hdrs *h, enum vnic_parse_err err, uint8_t *type)
{
	bool tcp = h->l4_proto == VNIC_IPPROTO_TCP, v4 = h->l3_proto == VNIC_ETH_P_IP;
	uint32_t hdrs = (uint32_t)h->l2_len + h->l3_len + h->l4_len;

	if (err != VNIC_PARSE_OK || !(h->flags & VNIC_HDRS_F_L4) || (h->flags & VNIC_HDRS_F_FRAG) ||
	    h->trailer_len)
		return false;
	if (f->l2_len != h->l2_len || f->l3_len != h->l3_len || f->l4_len != h->l4_len)
		return false;
	switch (f->gso_type) {
	case VNIC_GSO_TCPV4:
	case VNIC_GSO_TCPV4 | VNIC_GSO_TCP_ECN:
		if (!tcp || !v4)
			return false;
		*type = VNIC_RX_LRO_TCPV4;
		break;
	case VNIC_GSO_TCPV6:
	case VNIC_GSO_TCPV6 | VNIC_GSO_TCP_ECN:
		if (!tcp || h->l3_proto != VNIC_ETH_P_IPV6)
			return false;
		*type = VNIC_RX_LRO_TCPV6;
		break;
	case VNIC_GSO_UDP_L4:
		if (h->l4_proto != VNIC_IPPROTO_UDP)
			return false;
		*type = VNIC_RX_LRO_UDP_L4;
		break;
	default:
		return false;
	}
	if (f->gso_type & VNIC_GSO_TCP_ECN)
		*type |= VNIC_RX_LRO_TCP_ECN;
	if (!f->gso_size || f->len <= hdrs ||
	    (uint32_t)h->l3_len + h->l4_len + f->gso_size > dev_mtu(dev))
		return false;
	return (f->len - hdrs + f->gso_size - 1u) / f->gso_size <= VNIC_GSO_MAX_SEGS;
}

/* How many posted buffers, oldest first, hold len bytes; 0 if not that many. */
static uint32_t super_bufs(struct vnic_dev *dev, struct dev_rxq *rxq, uint32_t len)
{
	uint64_t room = 0;
	uint32_t k = 0;

	while (room < len) {
		if (k == RX_MAX_CHUNKS)
			return 0;
		if (rxq->head + k == rxq->tail)
			vnic_dev_rx_refill(dev, rxq);
		if (rxq->head + k == rxq->tail)
			return 0;
		room += rxq->fifo[(rxq->head + k) & rxq->fifo_mask].len;
		k++;
	}
	return k;
}

/*
 * A superframe into k posted buffers in order, as one large receive
 * (docs/PROTOCOL.md section 8.5): a completion per buffer, END_FRAME and
 * the GSO metadata in the last. Its payload checksum is the sender's to
 * finish (the driver marks it partial), so only the IPv4 header's is
 * verified. The completions are built in rxq->unsent, empty whenever a
 * frame is taken (rx_poll stops while it is not).
 */
static enum rx_outcome rx_super(struct dev_rxe *rxe, struct dev_rxq *rxq, const struct vnic_pkt *f,
				const struct vnic_hdrs *h, enum vnic_parse_err err)
{
	struct vnic_dev *dev = rxe->dev;
	union vnic_subcrq_entry *e = rxq->unsent;
	uint8_t *dst[RX_MAX_CHUNKS];
	uint8_t type = 0, flags = VNIC_RXC_IP_CHKSUM_GOOD;
	uint32_t k, i, off = 0;
	bool fault = false;

	if (!(dev->ol.large_rx4 || dev->ol.large_rx6) || f->len > dev->large_rx_max) {
		vnic_ctr_inc(&rxe->st.drop_super_off);
		VNIC_PROBE3(drop, "dev_rx", "super_off", 0);
		return RX_DONE;
	}
	if (!super_ok(dev, f, h, err, &type)) {
		vnic_ctr_inc(&rxe->st.drop_bad_super);
		VNIC_PROBE3(drop, "dev_rx", "bad_super", 0);
		return RX_DONE;
	}
	k = super_bufs(dev, rxq, f->len);
	if (!k && rxe->buf_waits < RX_BUF_WAITS) {
		/*
		 * Tens of buffers at once: the driver, whose NAPI is still to
		 * run behind our poll, replenishes them soon. Left on the wire
		 * for a few retries, then dropped, as an MTU frame is at once.
		 */
		rxe->buf_waits++;
		vnic_ctr_inc(&rxq->st.lro_buf_waits);
		return RX_BUF_WAIT;
	}
	rxe->buf_waits = 0;
	if (!k) {
		vnic_ctr_inc(&rxq->st.drop_no_buffer);
		VNIC_PROBE3(drop, "dev_rx", "no_buffer", 0);
		return RX_DONE;
	}
	memset(e, 0, k * sizeof(*e));
	for (i = 0; i < k; i++) {
		const struct rx_buf *b = &rxq->fifo[(rxq->head + i) & rxq->fifo_mask];
		uint32_t clen = f->len - off < b->len ? f->len - off : b->len;

		e[i].rx_comp.first = VNIC_SUBCRQ_VALID;
		vnic_be64_put(&e[i].rx_comp.correlator, b->correlator);
		vnic_be32_put(&e[i].rx_comp.len, clen);
		dst[i] = vnic_hv_dma_translate(dev->hv, b->ioba, clen);
		fault |= !dst[i];
		off += clen;
	}
	vnic_ctr_add32(&rxq->head, k);
	/* in place: what the driver's ring has no room for stays where it is */
	rxq->unsent_pos = 0;
	rxq->unsent_n = k;
	if (vnic_unlikely(fault)) {
		/* unmapped since posted: each buffer back with an error, a frame of its own */
		vnic_ctr_inc(&rxq->st.drop_buf_fault);
		VNIC_PROBE3(drop, "dev_rx", "buf_fault", 0);
		for (i = 0; i < k; i++) {
			e[i].rx_comp.flags = VNIC_RXC_END_FRAME;
			vnic_be16_put(&e[i].rx_comp.rc, VNIC_RC_INVALIDIOBA);
		}
		return comp_send(dev, rxq, e, k) ? RX_DONE : RX_COMP_WAIT;
	}
	for (i = 0, off = 0; i < k; i++) {
		uint32_t clen = vnic_be32_get(&e[i].rx_comp.len);

		memcpy(dst[i], f->data + off, clen);
		off += clen;
	}
	vnic_hv_dma_charge(dev->hv, f->len);
	if (h->l3_proto == VNIC_ETH_P_IP && !vnic_csum_ip4_ok(f->data + h->l3_off, h->l3_len))
		flags = 0;
	vnic_ctr_inc(flags ? &rxq->st.ip_csum_good : &rxq->st.ip_csum_bad);
	e[k - 1].rx_comp.flags = flags | VNIC_RXC_END_FRAME;
	vnic_be16_put(&e[k - 1].rx_comp.lro_mss, f->gso_size);
	e[k - 1].rx_comp.lro_type = type;
	vnic_ctr_inc(&rxq->st.frames);
	vnic_ctr_add(&rxq->st.bytes, f->len);
	vnic_ctr_inc(&rxq->st.lro_frames);
	vnic_ctr_add(&rxq->st.lro_bufs, k);
	return comp_send(dev, rxq, e, k) ? RX_DONE : RX_COMP_WAIT;
}

/* --- one frame ------------------------------------------------------------------ */

/*
 * The rx queue of a frame: RSS over the rx queues from the one wire, the
 * wire's own queue from a wire per queue pair. NULL: that queue is not
 * logged in.
 */
static struct dev_rxq *rx_queue(struct dev_rxe *rxe, const struct vnic_pkt *f,
				const struct vnic_hdrs *h, enum vnic_parse_err err)
{
	struct vnic_dev *dev = rxe->dev;
	unsigned int q = 0;

	if (dev->nwires > 1)
		return rxe->idx < dev->nrxq ? &dev->rxq[rxe->idx] : NULL;
	if (dev->nrxq > 1 && err == VNIC_PARSE_OK)
		q = vnic_rss_hash_frame(vnic_rss_default_key, f->data, h) % dev->nrxq;
	return &dev->rxq[q];
}

/* Delivers one frame, drops it, or leaves it on the wire for a while. */
static enum rx_outcome rx_one(struct dev_rxe *rxe, const struct vnic_pkt *f)
{
	struct vnic_dev *dev = rxe->dev;
	union vnic_subcrq_entry e;
	enum vnic_parse_err err;
	struct dev_rxq *rxq;
	struct vnic_hdrs h;
	struct rx_buf *b;
	uint8_t flags = 0;
	void *dst;

	if (vnic_unlikely(f->len < VNIC_ETH_HLEN)) {
		vnic_ctr_inc(&rxe->st.drop_runt);
		VNIC_PROBE3(drop, "dev_rx", "runt", 0);
		return RX_DONE;
	}
	if (!for_us(dev, f->data)) {
		vnic_ctr_inc(&rxe->st.filtered);
		VNIC_PROBE3(drop, "dev_rx", "filtered", 0);
		return RX_DONE;
	}
	if (vnic_unlikely(!dev->link_up || !dev->nrxq || !dev->phys_up)) {
		vnic_ctr_inc(&rxe->st.drop_link_down);
		VNIC_PROBE3(drop, "dev_rx", "link_down", 0);
		return RX_DONE;
	}
	if (vnic_unlikely(dev->halted)) {
		vnic_ctr_inc(&rxe->st.drop_halted);
		VNIC_PROBE3(drop, "dev_rx", "halted", 0);
		return RX_DONE;
	}
	err = vnic_parse_frame(f->data, f->len, &h);
	rxq = rx_queue(rxe, f, &h, err);
	if (vnic_unlikely(!rxq)) {
		vnic_ctr_inc(&rxe->st.drop_bad_queue);
		VNIC_PROBE3(drop, "dev_rx", "bad_queue", 0);
		return RX_DONE;
	}
	if (vnic_unlikely(f->gso_size))
		return rx_super(rxe, rxq, f, &h, err);

	if (rxq->head == rxq->tail)
		vnic_dev_rx_refill(dev, rxq);
	if (rxq->head == rxq->tail) {
		vnic_ctr_inc(&rxq->st.drop_no_buffer);
		VNIC_PROBE3(drop, "dev_rx", "no_buffer", 0);
		return RX_DONE;
	}
	b = &rxq->fifo[rxq->head & rxq->fifo_mask];
	if (vnic_unlikely(f->len > b->len)) {
		/* a peer with a larger MTU: the buffer stays for the next frame */
		vnic_ctr_inc(&rxq->st.drop_too_big);
		VNIC_PROBE3(drop, "dev_rx", "too_big", 0);
		return RX_DONE;
	}
	vnic_ctr_add32(&rxq->head, 1);

	memset(&e, 0, sizeof(e));
	e.rx_comp.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&e.rx_comp.correlator, b->correlator);
	dst = vnic_hv_dma_translate(dev->hv, b->ioba, f->len);
	if (vnic_unlikely(!dst)) {
		/* unmapped since it was posted: give it back with an error */
		vnic_ctr_inc(&rxq->st.drop_buf_fault);
		VNIC_PROBE3(drop, "dev_rx", "buf_fault", 0);
		vnic_be16_put(&e.rx_comp.rc, VNIC_RC_INVALIDIOBA);
		return comp_send(dev, rxq, &e, 1) ? RX_DONE : RX_COMP_WAIT;
	}
	if (err == VNIC_PARSE_OK) {
		flags = copy_verify(rxq, dst, f->data, f->len, &h);
	} else {
		memcpy(dst, f->data, f->len);
		vnic_ctr_inc(&rxe->st.parse_errors);
	}
	/* The cost model's DMA: the device writes the frame into the client's memory. */
	vnic_hv_dma_charge(dev->hv, f->len);

	e.rx_comp.flags = flags | VNIC_RXC_END_FRAME;
	vnic_be32_put(&e.rx_comp.len, f->len);
	vnic_ctr_inc(&rxq->st.frames);
	vnic_ctr_add(&rxq->st.bytes, f->len);
	return comp_send(dev, rxq, &e, 1) ? RX_DONE : RX_COMP_WAIT;
}

/* --- poll --------------------------------------------------------------------------- */

static int rx_poll(struct vnic_napi *napi, int budget)
{
	struct dev_rxe *rxe = vnic_container_of(napi, struct dev_rxe, napi);
	struct vnic_dev *dev = rxe->dev;
	struct vnic_wire *w = rxe->wire;
	struct vnic_pkt *frames[RX_BATCH];
	unsigned int i, lo, hi;
	int done = 0;

	rxe->blocked = false;
	if (!retry_unsent(rxe))
		goto blocked;
	rxe_queues(rxe, &lo, &hi);
	for (i = lo; i < hi; i++)
		vnic_dev_rx_refill(dev, &dev->rxq[i]);

	while (done < budget) {
		unsigned int want = (unsigned int)(budget - done), n, k;

		if (want > RX_BATCH)
			want = RX_BATCH;
		n = w->ops->rx_peek(w, frames, want);
		for (k = 0; k < n; k++) {
			enum rx_outcome o = rx_one(rxe, frames[k]);

			if (o == RX_DONE)
				continue;
			rxe->blocked = true;
			if (o == RX_COMP_WAIT)
				k++; /* copied: its completion is what waits */
			break;
		}
		w->ops->rx_release(w, k);
		done += (int)k;
		if (rxe->blocked)
			goto blocked;
		if (n < want)
			break;
	}
	if (done < budget && w->ops->rx_next_ns) {
		uint64_t next = w->ops->rx_next_ns(w);

		if (next) {
			/* due already (it arrived after the peek): poll again at once */
			if ((int64_t)(next - vnic_now_ns()) <= 0)
				return budget;
			vnic_poller_set_timer(&napi->poller, next);
		}
	}
	return done;

blocked:
	/* the driver's rx completion ring is full, or a superframe waits for buffers: the
	 * driver tells us of neither */
	rxe->blocked = true;
	vnic_poller_set_timer(&napi->poller, vnic_now_ns() + DEV_RETRY_NS);
	return 0;
}

int vnic_dev_rx_poll(struct vnic_napi *napi, int budget)
{
	uint64_t t0 = vnic_trace_begin(&vnic_dev_tp.rx);
	int work = rx_poll(napi, budget);

	vnic_trace_end(&vnic_dev_tp.rx, t0);
	return work;
}
