// SPDX-License-Identifier: MIT
/*
 * A learning Ethernet switch whose ports live in different processes: the
 * children of `vnic server --listen PATH --switch` (contract in port.h,
 * picture in docs/ARCHITECTURE.md section 11).
 *
 * Why one SPSC ring per (source, destination) pair and not one MPSC ring
 * per destination: a producer of an MPSC ring claims a slot before it
 * writes it, so a child killed between the claim and the publish leaves a
 * hole the consumer cannot pass, and it cannot tell a dead writer from a
 * slow one. With a ring per pair every word keeps one writer (head the
 * source's child, tail the destination's), a dead source only stops
 * filling its own rings, and the parent may take over the tail of a dead
 * destination's rings once it has reaped it. The price is memory (ports^2
 * rings, in a memfd whose pages exist only once touched) and a consumer
 * that looks at every source's ring when it peeks.
 *
 * Per frame: two MAC table lookups (is its source still behind this port?
 * where is its destination? a few loads each, no lock), a copy into each
 * destination's ring, no syscall. Per commit: one clock read, one release
 * store per destination ring touched, one fence, and an eventfd write per
 * destination that was armed (asleep). Learning writes the table only when
 * a source is new, moved, or a refresh is due (an eighth of the ageing
 * time), not per frame.
 */
#define _GNU_SOURCE /* memfd_create */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "switch_int.h"

struct switch_port {
	struct vnic_wire wire;
	struct vnic_switch *sw;
	unsigned int port;
	struct vnic_poller poller;
	char name[24];
	/* producer: our rings to each destination */
	uint32_t head[VNIC_SWITCH_MAX_PORTS];
	uint32_t tail_cache[VNIC_SWITCH_MAX_PORTS];
	uint64_t touched;		/* destinations written by this commit */
	struct vnic_pkt_pool pool;
	struct vnic_pkt *tx[VNIC_SWITCH_TX_SLOTS];
	unsigned int reserved;
	uint8_t last_src[6];
	uint64_t last_learn_ns;
	/* consumer: each source's ring to us */
	uint32_t tail[VNIC_SWITCH_MAX_PORTS];
	unsigned int next_src;
	unsigned int peeked;
	uint8_t rx_src[RX_PEEK];
	struct vnic_pkt rx[RX_PEEK];
	struct vnic_switch_port_stats st;
};

static struct switch_port *to_port(const struct vnic_wire *w)
{
	return vnic_container_of(w, struct switch_port, wire);
}

static bool claimed(const struct vnic_switch *sw, unsigned int port)
{
	return atomic_load_explicit(&sw->ports[port].claimed, memory_order_acquire);
}

/* --- setup (the parent) -------------------------------------------------------- */

int vnic_switch_create(struct vnic_switch **swp, const struct vnic_switch_cfg *cfg)
{
	struct vnic_switch *sw;
	size_t ports_at, macs_at, rings_at;
	unsigned int i;
	int fd, err;

	*swp = NULL;
	if (!cfg || cfg->ports < 2 || cfg->ports > VNIC_SWITCH_MAX_PORTS)
		return -EINVAL;
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	for (i = 0; i < VNIC_SWITCH_MAX_PORTS; i++)
		sw->efd[i] = -1;
	sw->nports = cfg->ports;
	sw->aging_ns = cfg->aging_ns ? cfg->aging_ns : VNIC_SWITCH_DEFAULT_AGING_NS;
	ports_at = 0;
	macs_at = ports_at + sw->nports * sizeof(struct sw_port);
	rings_at = (macs_at + VNIC_SWITCH_MACS * sizeof(struct sw_mac) + 4095) & ~(size_t)4095;
	sw->size = rings_at + (size_t)sw->nports * sw->nports * RING_BYTES;
	/* a memfd's pages exist once touched: the rings of pairs that never talk cost nothing */
	fd = memfd_create("vnic-switch", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto err_free;
	}
	if (ftruncate(fd, (off_t)sw->size)) {
		err = -errno;
		goto err_close_memfd;
	}
	sw->base = mmap(NULL, sw->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sw->base == MAP_FAILED) {
		err = -errno;
		goto err_close_memfd;
	}
	close(fd);	/* the mapping holds it; a child inherits the mapping */
	sw->ports = (struct sw_port *)(sw->base + ports_at);
	sw->macs = (struct sw_mac *)(sw->base + macs_at);
	sw->rings = sw->base + rings_at;
	for (i = 0; i < sw->nports; i++) {
		sw->efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (sw->efd[i] < 0) {
			err = -errno;
			goto err_destroy;
		}
	}
	*swp = sw;
	return 0;

err_close_memfd:
	close(fd);
err_free:
	free(sw);
	return err;
err_destroy:
	vnic_switch_destroy(sw);
	return err;
}

void vnic_switch_destroy(struct vnic_switch *sw)
{
	if (!sw)
		return;
	for (unsigned int i = 0; i < VNIC_SWITCH_MAX_PORTS; i++)
		if (sw->efd[i] >= 0)
			close(sw->efd[i]);
	munmap(sw->base, sw->size);
	free(sw);
}

unsigned int vnic_switch_fds(const struct vnic_switch *sw, int *fds, unsigned int max)
{
	unsigned int i;

	for (i = 0; i < sw->nports && i < max; i++)
		fds[i] = sw->efd[i];
	return sw->nports;
}

unsigned int vnic_switch_ports(const struct vnic_switch *sw)
{
	return sw->nports;
}

void vnic_switch_port_mac(unsigned int port, uint8_t mac[6])
{
	/* locally administered (bit 1), unicast (bit 0 clear): "vns" and the port */
	mac[0] = 0x02;
	mac[1] = 0x76;
	mac[2] = 0x6e;
	mac[3] = 0x73;
	mac[4] = (uint8_t)(port >> 8);
	mac[5] = (uint8_t)port;
}

int vnic_switch_port_claim(struct vnic_switch *sw, unsigned int port)
{
	if (port >= sw->nports)
		return -EINVAL;
	if (claimed(sw, port))
		return -EBUSY;
	atomic_store_explicit(&sw->ports[port].armed, 0, memory_order_relaxed);
	atomic_store_explicit(&sw->ports[port].claimed, 1, memory_order_release);
	vnic_ctr_inc(&sw->st.ports_claimed);
	return 0;
}

static void forget(struct vnic_switch *sw, unsigned int port)
{
	for (unsigned int i = 0; i < VNIC_SWITCH_MACS; i++) {
		struct sw_mac *e = &sw->macs[i];
		uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);

		/* a child may move the entry meanwhile: then it is not ours to clear */
		if (k && KEY_PORT(k) == port &&
		    atomic_compare_exchange_strong_explicit(&e->key, &k, 0, memory_order_acq_rel,
							    memory_order_relaxed))
			vnic_ctr_inc(&sw->st.macs_forgotten);
	}
}

void vnic_switch_port_release(struct vnic_switch *sw, unsigned int port)
{
	if (port >= sw->nports || !claimed(sw, port))
		return;
	/* producers look before they copy: from here on few frames come in */
	atomic_store_explicit(&sw->ports[port].claimed, 0, memory_order_release);
	vnic_fence_on(&sw->ports[port].claimed, memory_order_seq_cst);
	forget(sw, port);
	/* the consumer is reaped: its tails are ours to write until the next open */
	for (unsigned int s = 0; s < sw->nports; s++) {
		struct sw_ring *r = ring(sw, s, port);
		uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
		uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

		if (s == port)
			continue;
		if (h - t <= VNIC_SWITCH_RING_SLOTS)
			vnic_ctr_add(&sw->st.dead_frames, h - t);
		atomic_store_explicit(&r->tail, h, memory_order_release);
	}
	vnic_ctr_inc(&sw->st.ports_released);
}

void vnic_switch_stats(const struct vnic_switch *sw, struct vnic_switch_stats *st)
{
	st->ports_claimed = vnic_ctr_read(&sw->st.ports_claimed);
	st->ports_released = vnic_ctr_read(&sw->st.ports_released);
	st->macs_forgotten = vnic_ctr_read(&sw->st.macs_forgotten);
	st->dead_frames = vnic_ctr_read(&sw->st.dead_frames);
}

/* --- the MAC table ------------------------------------------------------------- */

static uint64_t mac48(const uint8_t m[6])
{
	return (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 | (uint64_t)m[2] << 24 |
	       (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
}

static struct sw_mac *mac_entry(struct vnic_switch *sw, uint64_t mac, unsigned int i)
{
	uint64_t h = (mac * 0x9e3779b97f4a7c15ull) >> (64 - MAC_BITS);

	return &sw->macs[(h + i) & (VNIC_SWITCH_MACS - 1)];
}

static bool aged(const struct vnic_switch *sw, struct sw_mac *e, uint64_t now)
{
	uint64_t seen = atomic_load_explicit(&e->seen_ns, memory_order_relaxed);

	return (int64_t)(now - seen) > (int64_t)sw->aging_ns;
}

/*
 * Entries are made and moved by compare-and-swap, so children learning at
 * once never tear one. Two children learning one MAC into two free entries
 * at once make a duplicate: the first is found, the other ages out.
 */
int vnic_switch_learn(struct vnic_switch *sw, const uint8_t src[6], unsigned int port,
		      uint64_t now, bool *moved)
{
	uint64_t mac = mac48(src), want = KEY_VALID | (uint64_t)port << 48 | mac, free_key = 0;
	struct sw_mac *free = NULL;

	*moved = false;
	if (port >= sw->nports)
		return -EINVAL;
	for (unsigned int i = 0; i < VNIC_SWITCH_PROBES; i++) {
		struct sw_mac *e = mac_entry(sw, mac, i);
		uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);

		if (k && (k & KEY_MAC_MASK) == mac) {
			atomic_store_explicit(&e->seen_ns, now, memory_order_relaxed);
			if (k == want)
				return 0;
			/* a station that moved: the newest port wins */
			if (!atomic_compare_exchange_strong_explicit(&e->key, &k, want,
								     memory_order_acq_rel,
								     memory_order_relaxed))
				return -EAGAIN;
			*moved = KEY_PORT(k) != port;
			return 1;
		}
		if (!free && (!k || aged(sw, e, now))) {
			free = e;
			free_key = k;
		}
	}
	if (!free)
		return -ENOSPC;
	atomic_store_explicit(&free->seen_ns, now, memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&free->key, &free_key, want,
						     memory_order_acq_rel, memory_order_relaxed))
		return -EAGAIN;
	return 1;
}

int vnic_switch_lookup(struct vnic_switch *sw, const uint8_t dst[6], uint64_t now)
{
	uint64_t mac = mac48(dst);

	for (unsigned int i = 0; i < VNIC_SWITCH_PROBES; i++) {
		struct sw_mac *e = mac_entry(sw, mac, i);
		uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);

		if (!k || (k & KEY_MAC_MASK) != mac)
			continue;
		/* the port number is another process's word: checked */
		if (aged(sw, e, now) || KEY_PORT(k) >= sw->nports)
			return -1;
		return (int)KEY_PORT(k);
	}
	return -1;
}

/* --- producer ------------------------------------------------------------------ */

static void learn_src(struct switch_port *sp, const uint8_t *src, uint64_t now)
{
	bool moved;
	int r;

	/* refreshed lately, and still ours (it may have moved and come back): no write */
	if (!memcmp(src, sp->last_src, 6) &&
	    (int64_t)(now - sp->last_learn_ns) < (int64_t)(sp->sw->aging_ns / 8) &&
	    vnic_switch_lookup(sp->sw, src, now) == (int)sp->port)
		return;
	r = vnic_switch_learn(sp->sw, src, sp->port, now, &moved);
	if (r == -ENOSPC) {
		vnic_ctr_inc(&sp->st.learn_full);
		return;
	}
	if (r < 0)
		return;	/* lost a race: learnt at the next frame */
	if (r > 0)
		vnic_ctr_inc(&sp->st.learned);
	if (moved)
		vnic_ctr_inc(&sp->st.moves);
	memcpy(sp->last_src, src, 6);
	sp->last_learn_ns = now;
}

static void push(struct switch_port *sp, unsigned int dst, const struct vnic_pkt *pkt)
{
	struct sw_ring *r = ring(sp->sw, sp->port, dst);
	uint32_t h = sp->head[dst], t;
	struct sw_slot *s;

	if (h - sp->tail_cache[dst] >= VNIC_SWITCH_RING_SLOTS) {
		t = atomic_load_explicit(&r->tail, memory_order_acquire);
		/* a tail ahead of our head, or too far behind, is not the consumer's: full */
		if (h - t >= VNIC_SWITCH_RING_SLOTS) {
			vnic_ctr_inc(&sp->st.drop_full);
			return;
		}
		sp->tail_cache[dst] = t;
	}
	s = slot(r, h);
	s->len = pkt->len;
	memcpy(s->data, pkt->data, pkt->len);
	sp->head[dst] = h + 1;
	sp->touched |= 1ull << dst;
	vnic_ctr_inc(&sp->st.forwarded);
}

static void flood(struct switch_port *sp, const struct vnic_pkt *pkt)
{
	vnic_ctr_inc(&sp->st.flooded);
	for (unsigned int d = 0; d < sp->sw->nports; d++)
		if (d != sp->port && claimed(sp->sw, d))
			push(sp, d, pkt);
}

/* An Ethernet frame inside its slot, at most the MTU plus one tag. */
static bool frame_ok(const struct vnic_pkt *pkt)
{
	if (pkt->data < pkt->head || (uint64_t)(pkt->data - pkt->head) + pkt->len > pkt->buf_size)
		return false;
	return pkt->len >= VNIC_ETH_HLEN &&
	       pkt->len <= VNIC_SWITCH_MTU + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
}

static void forward(struct switch_port *sp, const struct vnic_pkt *pkt, uint64_t now)
{
	const uint8_t *dst = pkt->data, *src = pkt->data + 6;
	int to;

	if (vnic_unlikely(!frame_ok(pkt))) {
		vnic_ctr_inc(&sp->st.drop_mtu);
		return;
	}
	if (vnic_unlikely(src[0] & 1)) {
		vnic_ctr_inc(&sp->st.drop_bad_src);
		return;
	}
	vnic_ctr_inc(&sp->st.tx_frames);
	vnic_ctr_add(&sp->st.tx_bytes, pkt->len);
	learn_src(sp, src, now);
	to = dst[0] & 1 ? -1 : vnic_switch_lookup(sp->sw, dst, now);
	if (to < 0) {
		flood(sp, pkt);
	} else if ((unsigned int)to == sp->port) {
		vnic_ctr_inc(&sp->st.drop_local);
	} else if (!claimed(sp->sw, (unsigned int)to)) {
		vnic_ctr_inc(&sp->st.drop_no_port);
	} else {
		push(sp, (unsigned int)to, pkt);
	}
}

/*
 * The cable's notification protocol (cable_ring.c), across processes: our
 * release of head, a full fence, then the destination's arm; its consumer
 * stores the arm, then (NAPI's fence) looks at the heads. The exchange
 * makes one producer take the arm and ring.
 */
static void ring_bell(struct switch_port *sp, unsigned int dst)
{
	struct sw_port *p = &sp->sw->ports[dst];
	uint64_t one = 1;

	if (!atomic_load_explicit(&p->armed, memory_order_acquire) ||
	    !atomic_exchange_explicit(&p->armed, 0, memory_order_acq_rel))
		return;
	vnic_ctr_inc(&sp->st.doorbells);
	/* a full counter (never: it is read at every wake) only loses a wake already due */
	if (write(sp->sw->efd[dst], &one, sizeof(one)) < 0)
		return;
}

static unsigned int sw_tx_reserve(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n)
{
	struct switch_port *sp = to_port(w);

	if (n > VNIC_SWITCH_TX_SLOTS)
		n = VNIC_SWITCH_TX_SLOTS;
	for (unsigned int i = 0; i < n; i++) {
		vnic_pkt_reset(sp->tx[i]);
		out[i] = sp->tx[i];
	}
	sp->reserved = n;
	return n;
}

static void sw_tx_commit(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n,
			 unsigned int reserved)
{
	struct switch_port *sp = to_port(w);
	uint64_t now = vnic_now_ns(), mask;
	unsigned int d;

	(void)out;
	(void)reserved;
	if (n > sp->reserved)
		n = sp->reserved;
	sp->reserved = 0;
	sp->touched = 0;
	for (unsigned int i = 0; i < n; i++)
		forward(sp, sp->tx[i], now);
	for (mask = sp->touched; mask; mask &= mask - 1) {
		d = (unsigned int)__builtin_ctzll(mask);
		atomic_store_explicit(&ring(sp->sw, sp->port, d)->head, sp->head[d],
				      memory_order_release);
	}
	if (!sp->touched)
		return;
	/* the heads before the arms: one fence for every ring touched */
	d = (unsigned int)__builtin_ctzll(sp->touched);
	vnic_fence_on(&ring(sp->sw, sp->port, d)->head, memory_order_seq_cst);
	for (mask = sp->touched; mask; mask &= mask - 1)
		ring_bell(sp, (unsigned int)__builtin_ctzll(mask));
}

/* --- consumer ------------------------------------------------------------------ */

/* Frames of one source's ring into rx[], up to n in all: how many rx[] holds now. */
static unsigned int peek_ring(struct switch_port *sp, unsigned int s, unsigned int got,
			      unsigned int n)
{
	struct sw_ring *r = ring(sp->sw, s, sp->port);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t t = sp->tail[s];
	bool first = true;

	if (h - t > VNIC_SWITCH_RING_SLOTS) {
		/* not a head its producer could have written: nothing there is trusted */
		vnic_ctr_inc(&sp->st.rx_bad_index);
		sp->tail[s] = h;
		atomic_store_explicit(&r->tail, h, memory_order_release);
		return got;
	}
	for (; t != h && got < n; t++) {
		struct sw_slot *sl = slot(r, t);
		uint32_t len = *(volatile uint32_t *)&sl->len;
		struct vnic_pkt *pkt;

		if (len < VNIC_ETH_HLEN || len > VNIC_SWITCH_MTU + VNIC_ETH_HLEN + VNIC_VLAN_HLEN) {
			vnic_ctr_inc(&sp->st.rx_bad_len);
			if (!first)
				break;	/* skipped when it is the first, at the next peek */
			sp->tail[s] = t + 1;
			atomic_store_explicit(&r->tail, t + 1, memory_order_release);
			continue;
		}
		first = false;
		pkt = &sp->rx[got];
		pkt->head = sl->data;
		pkt->data = sl->data;
		pkt->buf_size = SLOT_FRAME;
		pkt->len = len;
		sp->rx_src[got++] = (uint8_t)s;
	}
	return got;
}

static unsigned int sw_rx_peek(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n)
{
	struct switch_port *sp = to_port(w);
	unsigned int nports = sp->sw->nports, got = 0, i;

	if (n > RX_PEEK)
		n = RX_PEEK;
	/* a different first source each time: one busy source does not starve the rest */
	for (i = 0; i < nports && got < n; i++) {
		unsigned int s = (sp->next_src + i) % nports;

		if (s != sp->port)
			got = peek_ring(sp, s, got, n);
	}
	sp->next_src = (sp->next_src + 1) % nports;
	for (i = 0; i < got; i++)
		frames[i] = &sp->rx[i];
	sp->peeked = got;
	return got;
}

static void sw_rx_release(struct vnic_wire *w, unsigned int n)
{
	struct switch_port *sp = to_port(w);
	uint64_t done = 0, mask;

	if (n > sp->peeked)
		n = sp->peeked;
	sp->peeked = 0;
	for (unsigned int i = 0; i < n; i++) {
		sp->tail[sp->rx_src[i]]++;
		done |= 1ull << sp->rx_src[i];
	}
	for (mask = done; mask; mask &= mask - 1) {
		unsigned int s = (unsigned int)__builtin_ctzll(mask);

		atomic_store_explicit(&ring(sp->sw, s, sp->port)->tail, sp->tail[s],
				      memory_order_release);
	}
	vnic_ctr_add(&sp->st.rx_frames, n);
}

static void sw_irq_enable(void *ctx)
{
	struct switch_port *sp = to_port(ctx);

	atomic_store_explicit(&sp->sw->ports[sp->port].armed, 1, memory_order_release);
}

static void sw_irq_disable(void *ctx)
{
	struct switch_port *sp = to_port(ctx);

	atomic_store_explicit(&sp->sw->ports[sp->port].armed, 0, memory_order_relaxed);
}

static bool sw_irq_pending(void *ctx)
{
	struct switch_port *sp = to_port(ctx);

	for (unsigned int s = 0; s < sp->sw->nports; s++)
		if (s != sp->port &&
		    atomic_load_explicit(&ring(sp->sw, s, sp->port)->head, memory_order_acquire) !=
			    sp->tail[s])
			return true;
	return false;
}

static const struct vnic_irq_ops sw_irq_ops = {
	.enable = sw_irq_enable,
	.disable = sw_irq_disable,
	.pending = sw_irq_pending,
};

static const struct vnic_wire_ops sw_wire_ops = {
	.tx_reserve = sw_tx_reserve,
	.tx_commit = sw_tx_commit,
	.rx_peek = sw_rx_peek,
	.rx_release = sw_rx_release,
	.rx_irq = &sw_irq_ops,
};

/* The doorbell: the eventfd is read first, so a ring after this read wakes us again. */
static int doorbell_poll(struct vnic_poller *p, int budget)
{
	struct switch_port *sp = vnic_container_of(p, struct switch_port, poller);
	uint64_t v;

	(void)budget;
	if (read(sp->sw->efd[sp->port], &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	if (sp->wire.notify)
		sp->wire.notify(sp->wire.notify_ctx);
	return 0;
}

/* --- a port (the child that owns it) ------------------------------------------ */

/* Our rings' heads and the tails of the rings to us, as the last owner left them. */
static void take_over(struct switch_port *sp)
{
	struct vnic_switch *sw = sp->sw;

	for (unsigned int d = 0; d < sw->nports; d++) {
		struct sw_ring *r = ring(sw, sp->port, d);

		sp->head[d] = atomic_load_explicit(&r->head, memory_order_relaxed);
		sp->tail_cache[d] = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (sp->head[d] - sp->tail_cache[d] > VNIC_SWITCH_RING_SLOTS)
			sp->tail_cache[d] = sp->head[d] - VNIC_SWITCH_RING_SLOTS;
	}
	for (unsigned int s = 0; s < sw->nports; s++) {
		struct sw_ring *r = ring(sw, s, sp->port);
		uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
		uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

		if (s == sp->port)
			continue;
		if (h - t <= VNIC_SWITCH_RING_SLOTS)
			vnic_ctr_add(&sp->st.rx_stale, h - t);
		sp->tail[s] = h;
		atomic_store_explicit(&r->tail, h, memory_order_release);
	}
}

int vnic_switch_port_open(struct vnic_switch *sw, unsigned int port, struct vnic_cpu *cpu,
			  struct vnic_wire **w)
{
	struct switch_port *sp;
	int err;

	*w = NULL;
	if (port >= sw->nports || !claimed(sw, port))
		return -EINVAL;
	sp = aligned_alloc(VNIC_CACHELINE, (sizeof(*sp) + VNIC_CACHELINE - 1) &
						   ~(size_t)(VNIC_CACHELINE - 1));
	if (!sp)
		return -ENOMEM;
	memset(sp, 0, sizeof(*sp));
	sp->sw = sw;
	sp->port = port;
	sp->wire.ops = &sw_wire_ops;
	sp->wire.priv = sw;
	sp->wire.mtu = VNIC_SWITCH_MTU;
	sp->wire.frame_size = VNIC_SWITCH_MTU + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
	err = vnic_pkt_pool_init(&sp->pool, VNIC_SWITCH_TX_SLOTS, sp->wire.frame_size, 0);
	if (err)
		goto err_free;
	if (vnic_pkt_alloc_bulk(&sp->pool, sp->tx, VNIC_SWITCH_TX_SLOTS) != VNIC_SWITCH_TX_SLOTS) {
		err = -ENOMEM;
		goto err_fini_pool;
	}
	take_over(sp);
	if (cpu) {
		snprintf(sp->name, sizeof(sp->name), "switch_port%u", port);
		err = vnic_cpu_add(cpu, &sp->poller, sp->name, doorbell_poll);
		if (!err)
			err = vnic_cpu_add_fd(cpu, sw->efd[port], EPOLLIN, &sp->poller);
		if (err)
			goto err_fini_pool;
	}
	*w = &sp->wire;
	return 0;

err_fini_pool:
	vnic_pkt_pool_fini(&sp->pool);
err_free:
	free(sp);
	return err;
}

void vnic_switch_port_close(struct vnic_wire *w)
{
	struct switch_port *sp;

	if (!w)
		return;
	sp = to_port(w);
	atomic_store_explicit(&sp->sw->ports[sp->port].armed, 0, memory_order_relaxed);
	vnic_pkt_pool_fini(&sp->pool);
	free(sp);
}

void vnic_switch_port_stats(const struct vnic_wire *w, struct vnic_switch_port_stats *st)
{
	const struct switch_port *sp = to_port(w);
	const uint64_t *from = (const uint64_t *)&sp->st;
	uint64_t *to = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		to[i] = vnic_ctr_read(&from[i]);
}

unsigned int vnic_switch_port_counters(const struct vnic_wire *w, struct vnic_counter *out,
				       unsigned int max)
{
	struct vnic_switch_port_stats st;
	unsigned int n = 0;

	vnic_switch_port_stats(w, &st);
#define C(f) vnic_counter_put(out, max, &n, #f, st.f)
	C(tx_frames);
	C(tx_bytes);
	C(forwarded);
	C(flooded);
	C(drop_mtu);
	C(drop_bad_src);
	C(drop_local);
	C(drop_full);
	C(drop_no_port);
	C(learned);
	C(moves);
	C(learn_full);
	C(doorbells);
	C(rx_frames);
	C(rx_bad_len);
	C(rx_bad_index);
	C(rx_stale);
#undef C
	return n;
}
