// SPDX-License-Identifier: MIT
/*
 * The cable's datapath: one SPSC ring of frame slots per direction (layout in
 * cable_int.h). Per frame there is no allocation, lock or syscall; per commit
 * one acquire load (has vnic_cable_set changed the settings?), one clock read
 * (only when a rate or delay is configured), one release store and one full
 * fence for the notification; per peek one acquire load (and one clock read
 * when a frame carries a stamp).
 *
 * Timing: a frame is ready at
 *	ready = max(line free, commit time) + line time(len) + delay
 * where line time is (max(len, 60) + 24) * 8 / rate seconds, the 24 bytes
 * being preamble, start delimiter, FCS and inter-frame gap that our frames do
 * not carry. Frames queue behind each other on the line, so ready times never
 * decrease along the ring and the consumer stops at the first frame not yet
 * ready. Without rate and delay every frame is ready at once (stamp 0). A
 * new delay or rate applies to frames committed from then on: one stamped
 * earlier keeps its time, and a frame never overtakes an earlier one.
 */

#include "cable_int.h"

static struct cable_end *to_end(struct vnic_wire *w)
{
	return vnic_container_of(w, struct cable_end, wire);
}

/* ---- the indices: every cross-thread ordering of the cable is here ------ */

/* Producer: make slots below head (their packets and pointers) visible
 * before the consumer can see head move. */
static void publish_head(struct cable_dir *d, uint32_t head)
{
	atomic_store_explicit(&d->head, head, memory_order_release);
}

/* Consumer: frames below the returned head are fully written. */
static uint32_t load_head(struct cable_dir *d)
{
	return atomic_load_explicit(&d->head, memory_order_acquire);
}

/* Consumer: our reads of the released slots happen before the producer
 * reuses them. */
static void publish_tail(struct cable_dir *d, uint32_t tail)
{
	atomic_store_explicit(&d->tail, tail, memory_order_release);
}

/* Producer: slots below the returned tail may be overwritten. */
static uint32_t load_tail(struct cable_dir *d)
{
	return atomic_load_explicit(&d->tail, memory_order_acquire);
}

/*
 * The notification is a store-buffering pair: the producer stores head then
 * loads armed; the consumer stores armed then loads head (its pending()
 * check). A store->load fence on each side guarantees at least one of them
 * sees the other's store, so a frame committed while the receiver re-arms
 * either gets a notification or is found by the receiver's pending() check.
 * The consumer's fence is NAPI's (vnic_napi_complete_done puts one between
 * irq->enable and irq->pending, the contract of struct vnic_irq_ops); the
 * producer's is here.
 *
 * Beyond that, the arm is a release and the take an acquire, as the hv's
 * interrupts are: what the receiver did before arming (its NAPI poll, the
 * release of SCHED) happens before what the notification makes the sender
 * do (vnic_napi_schedule of that NAPI), so the poll it causes never starts
 * from a stale view on a weakly ordered CPU.
 */
static void arm_irq(struct cable_dir *d)
{
	atomic_store_explicit(&d->armed, 1, memory_order_release);
}

static bool should_notify(struct cable_dir *d)
{
	vnic_fence_on(&d->armed, memory_order_seq_cst);
	if (!atomic_load_explicit(&d->armed, memory_order_acquire))
		return false;
	/* The exchange makes exactly one commit take the notification. */
	return atomic_exchange_explicit(&d->armed, 0, memory_order_acq_rel);
}

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Draws only for enabled effects: a cable without them costs no draws, and
 * one seed with one configuration always gives the same fates. */
static bool roll(struct cable_dir *d, uint64_t thr)
{
	if (!thr)
		return false;
	if (thr == UINT64_MAX)
		return true;
	return rng_next(&d->p.rng) < thr;
}

static struct vnic_pkt **slot(struct cable_dir *d, uint32_t i)
{
	return &d->slots[i & d->mask];
}

static void swap_slots(struct cable_dir *d, uint32_t a, uint32_t b)
{
	struct vnic_pkt *t = *slot(d, a);

	*slot(d, a) = *slot(d, b);
	*slot(d, b) = t;
}

/* L2 header length of a frame: Ethernet plus at most the one tag a slot
 * has room for. */
static uint32_t l2_len(const struct vnic_pkt *pkt)
{
	uint16_t type = (uint16_t)(pkt->data[12] << 8 | pkt->data[13]);

	if (type == VNIC_ETH_P_8021Q || type == VNIC_ETH_P_8021AD)
		return VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
	return VNIC_ETH_HLEN;
}

/*
 * The device wrote this frame; check it still lies inside its slot. A
 * superframe (gso_size set, cable tso) may fill the slot; what it holds is
 * the receiving device's to check.
 */
static bool frame_ok(const struct cable_dir *d, const struct vnic_pkt *pkt)
{
	uint64_t off = (uint64_t)(pkt->data - pkt->head);

	if (pkt->data < pkt->head || off + pkt->len > pkt->buf_size)
		return false;
	if (pkt->len < VNIC_ETH_HLEN)
		return false;
	if (pkt->gso_size && d->tso)
		return pkt->len <= VNIC_CABLE_GSO_MAX;
	return pkt->len <= d->mtu + l2_len(pkt);
}

/* A superframe the receiver does not take (any more: its driver reset). */
static bool super_refused(struct cable_dir *d, const struct vnic_pkt *pkt)
{
	return pkt->gso_size && pkt->len > atomic_load_explicit(&d->rx_gso, memory_order_relaxed);
}

static void corrupt(struct cable_dir *d, struct vnic_pkt *pkt)
{
	uint32_t l2 = l2_len(pkt);
	uint64_t bit;

	if (pkt->len <= l2)
		return;
	bit = l2 * 8ull + rng_next(&d->p.rng) % ((uint64_t)(pkt->len - l2) * 8);
	pkt->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	vnic_ctr_add(&d->p.corrupted, 1);
}

/* Puts a frame on the line: stamps when its last bit arrives. */
static void stamp(struct cable_dir *d, struct vnic_pkt *pkt, uint64_t now)
{
	uint64_t t = now;

	if (d->p.rate_bps) {
		uint64_t bytes =
			(pkt->len < VNIC_CABLE_MIN_FRAME ? VNIC_CABLE_MIN_FRAME : pkt->len) +
			VNIC_CABLE_LINE_OVERHEAD;
		uint64_t num;

		/* a superframe takes the line time of the frames it stands for */
		if (pkt->gso_segs > 1)
			bytes += (pkt->gso_segs - 1u) * ((uint64_t)pkt->l2_len + pkt->l3_len +
							 pkt->l4_len + VNIC_CABLE_LINE_OVERHEAD);
		num = bytes * 8 * 1000000000ull + d->p.line_rem;

		if (d->p.link_free_ns > t)
			t = d->p.link_free_ns;
		t += num / d->p.rate_bps;
		d->p.line_rem = num % d->p.rate_bps;
		d->p.link_free_ns = t;
	}
	pkt->tstamp_ns = d->p.timed ? t + d->p.delay_ns : 0;
}

/* ---- producer ----------------------------------------------------------- */

/*
 * The settings vnic_cable_set published since our last commit, if any: one
 * acquire load per commit when nothing changed. A read that overlaps a
 * write (odd, or changed meanwhile) is tried again; the setter holds the
 * count odd only for a few stores.
 */
static void take_live(struct cable_dir *d)
{
	struct cable_live *l = d->live;
	uint32_t s0 = atomic_load_explicit(&l->seq, memory_order_acquire), s1;
	uint64_t seed;

	if (vnic_likely(s0 == d->p.live_seq))
		return;
	for (;;) {
		if (!(s0 & 1)) {
			d->p.rate_bps = atomic_load_explicit(&l->rate_bps, memory_order_relaxed);
			d->p.delay_ns = atomic_load_explicit(&l->delay_ns, memory_order_relaxed);
			seed = atomic_load_explicit(&l->seed, memory_order_relaxed);
			d->p.loss_thr = atomic_load_explicit(&l->loss_thr, memory_order_relaxed);
			d->p.reorder_thr =
				atomic_load_explicit(&l->reorder_thr, memory_order_relaxed);
			d->p.corrupt_thr =
				atomic_load_explicit(&l->corrupt_thr, memory_order_relaxed);
			vnic_fence_on(&l->seq, memory_order_acquire);
			s1 = atomic_load_explicit(&l->seq, memory_order_relaxed);
			if (s1 == s0)
				break;
			s0 = s1;
		} else {
			vnic_cpu_relax();
			s0 = atomic_load_explicit(&l->seq, memory_order_acquire);
		}
	}
	d->p.live_seq = s0;
	d->p.timed = d->p.rate_bps || d->p.delay_ns;
	/* the remainder was of the old rate */
	d->p.line_rem = 0;
	/* A new seed starts the stream over: the same seed, the same fates from here. */
	if (seed != d->p.seed)
		cable_dir_seed(d, seed);
}

static unsigned int cable_tx_reserve(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n)
{
	struct cable_dir *d = to_end(w)->tx;
	uint32_t size = d->mask + 1, base = d->p.head + d->p.held;
	uint32_t avail = size - (base - d->p.tail_cache);
	unsigned int i;

	if (avail < n) {
		d->p.tail_cache = load_tail(d);
		avail = size - (base - d->p.tail_cache);
	}
	if (avail < n) {
		vnic_ctr_add(&d->p.tx_full, 1);
		n = avail;
	}
	for (i = 0; i < n; i++) {
		out[i] = *slot(d, base + i);
		vnic_pkt_reset(out[i]);
	}
	d->p.reserved = n;
	return n;
}

/*
 * Commits the first n reserved slots in order. The ring's own record of
 * which packet is in which slot is used; out[] only says how many.
 */
static void cable_tx_commit(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n,
			    unsigned int reserved)
{
	struct cable_dir *d = to_end(w)->tx;
	uint32_t pos = d->p.head, base = d->p.head + d->p.held, i;
	uint64_t now, bytes = 0;
	uint32_t held = d->p.held;

	(void)out;
	(void)reserved;
	take_live(d);
	now = d->p.timed ? vnic_now_ns() : 0;
	if (n > d->p.reserved)
		n = d->p.reserved;
	d->p.reserved = 0;

	/* Invariant: slot pos holds the held frame (if any), then only dropped
	 * frames up to base + i. */
	for (i = 0; i < n; i++) {
		uint32_t idx = base + i;
		struct vnic_pkt *pkt = *slot(d, idx);

		if (vnic_unlikely(!frame_ok(d, pkt))) {
			vnic_ctr_add(&d->p.drop_mtu, 1);
			continue;
		}
		if (vnic_unlikely(super_refused(d, pkt))) {
			vnic_ctr_add(&d->p.drop_super, 1);
			continue;
		}
		if (roll(d, d->p.loss_thr)) {
			vnic_ctr_add(&d->p.drop_loss, 1);
			continue;
		}
		/*
		 * A superframe is not corrupted: its checksum is computed only
		 * when it is cut, so nothing could find the flipped bit. With
		 * corrupt on, cable_tx_gso_max sends MTU frames instead.
		 */
		if (roll(d, d->p.corrupt_thr) && !pkt->gso_size)
			corrupt(d, pkt);
		if (pkt->gso_size)
			vnic_ctr_add(&d->p.tx_super, 1);
		bytes += pkt->len;
		if (held) {
			/* This frame goes first, the held one right behind it. */
			swap_slots(d, pos, idx);
			swap_slots(d, pos + 1, idx);
			stamp(d, *slot(d, pos), now);
			stamp(d, *slot(d, pos + 1), now);
			pos += 2;
			held = 0;
			continue;
		}
		swap_slots(d, pos, idx);
		if (roll(d, d->p.reorder_thr)) {
			vnic_ctr_add(&d->p.reordered, 1);
			held = 1;
			continue;
		}
		stamp(d, pkt, now);
		pos++;
	}

	d->p.held = held;
	if (pos == d->p.head)
		return;
	/* A frame held back is counted when it finally goes. */
	vnic_ctr_add(&d->p.tx_frames, pos - d->p.head);
	vnic_ctr_add(&d->p.tx_bytes, bytes);
	d->p.head = pos;
	publish_head(d, pos);
	if (should_notify(d)) {
		vnic_ctr_add(&d->p.notifies, 1);
		if (d->rx_wire->notify)
			d->rx_wire->notify(d->rx_wire->notify_ctx);
	}
}

/* ---- consumer ----------------------------------------------------------- */

static unsigned int cable_rx_peek(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n)
{
	struct cable_dir *d = to_end(w)->rx;
	uint32_t tail = atomic_load_explicit(&d->tail, memory_order_relaxed);
	uint32_t head = load_head(d);
	uint64_t now = 0;
	unsigned int i;

	d->c.seen = head;
	if (n > head - tail)
		n = head - tail;
	/*
	 * The clock is read only for a stamped frame: the stamp says whether
	 * it was timed when committed, and the settings may have changed since
	 * (vnic_cable_set), so the consumer keeps no view of its own of them.
	 */
	for (i = 0; i < n; i++) {
		struct vnic_pkt *pkt = *slot(d, tail + i);

		if (pkt->tstamp_ns > now && (now || pkt->tstamp_ns > (now = vnic_now_ns())))
			break;
		frames[i] = pkt;
	}
	d->c.peeked = i;
	return i;
}

static void cable_rx_release(struct vnic_wire *w, unsigned int n)
{
	struct cable_dir *d = to_end(w)->rx;
	uint32_t tail = atomic_load_explicit(&d->tail, memory_order_relaxed);

	if (n > d->c.peeked)
		n = d->c.peeked;
	if (!n)
		return;
	d->c.peeked -= n;
	vnic_ctr_add(&d->c.rx_frames, n);
	publish_tail(d, tail + n);
}

/* A value <= vnic_now_ns() means a frame is ready now. */
static uint64_t cable_rx_next_ns(struct vnic_wire *w)
{
	struct cable_dir *d = to_end(w)->rx;
	uint32_t tail = atomic_load_explicit(&d->tail, memory_order_relaxed);
	uint32_t head = load_head(d);
	uint64_t t;

	d->c.seen = head;
	if (head == tail)
		return 0;
	t = (*slot(d, tail))->tstamp_ns;
	return t ? t : 1;
}

/*
 * Producer: superframes while the receiver takes them and no corruption is
 * configured (a bit flipped in a superframe could never be found: see the
 * commit). The settings are the ones the last commit took.
 */
static uint32_t cable_tx_gso_max(struct vnic_wire *w)
{
	struct cable_dir *d = to_end(w)->tx;

	if (!d->tso || d->p.corrupt_thr)
		return 0;
	return atomic_load_explicit(&d->rx_gso, memory_order_relaxed);
}

/* The receiving device, any thread: relaxed, the sender only has to see it eventually. */
/*
 * The receiving device negotiates once, on its first wire: what it takes
 * holds for every ring toward its side (a ring per queue pair).
 */
static void cable_rx_gso_take(struct vnic_wire *w, uint32_t max)
{
	struct cable_end *e = to_end(w);
	struct vnic_cable *c = e->cable;
	unsigned int q;

	if (!e->rx->tso)
		return;
	if (max > VNIC_CABLE_GSO_MAX)
		max = VNIC_CABLE_GSO_MAX;
	for (q = 0; q < c->cfg.queues; q++)
		atomic_store_explicit(&c->dir[2 * q + 1 - e->side].rx_gso, max,
				      memory_order_relaxed);
}

static void cable_irq_enable(void *ctx)
{
	arm_irq(to_end(ctx)->rx);
}

static void cable_irq_disable(void *ctx)
{
	atomic_store_explicit(&to_end(ctx)->rx->armed, 0, memory_order_relaxed);
}

static bool cable_irq_pending(void *ctx)
{
	struct cable_dir *d = to_end(ctx)->rx;
	uint64_t t;
	uint32_t tail = atomic_load_explicit(&d->tail, memory_order_relaxed);
	uint32_t head = load_head(d);

	if (head == tail)
		return false;
	/* Unseen frames need a look, ready or not: they may need a timer. */
	if (head != d->c.seen)
		return true;
	t = (*slot(d, tail))->tstamp_ns;
	return !t || t <= vnic_now_ns();
}

static const struct vnic_irq_ops cable_irq_ops = {
	.enable = cable_irq_enable,
	.disable = cable_irq_disable,
	.pending = cable_irq_pending,
};

const struct vnic_wire_ops vnic_cable_wire_ops = {
	.tx_reserve = cable_tx_reserve,
	.tx_commit = cable_tx_commit,
	.rx_peek = cable_rx_peek,
	.rx_release = cable_rx_release,
	.rx_next_ns = cable_rx_next_ns,
	.tx_gso_max = cable_tx_gso_max,
	.rx_gso_take = cable_rx_gso_take,
	.rx_irq = &cable_irq_ops,
};
