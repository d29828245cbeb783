// SPDX-License-Identifier: MIT
/*
 * The in-process cable: setup, teardown and counters. The datapath is in
 * cable_ring.c.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cable_int.h"

static_assert(offsetof(struct cable_dir, tail) - offsetof(struct cable_dir, head) >= VNIC_CACHELINE,
	      "producer and consumer indices must not share a cache line");

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0; /* false for NaN too */
}

/* p scaled to 2^64; 0 means never and UINT64_MAX always (see roll()). */
static uint64_t prob_threshold(double p)
{
	if (p <= 0.0)
		return 0;
	if (p >= 1.0)
		return UINT64_MAX;
	return (uint64_t)(p * 18446744073709551616.0);
}

static int check_cfg(struct vnic_cable_cfg *cfg)
{
	if (!cfg->mtu)
		cfg->mtu = VNIC_CABLE_DEFAULT_MTU;
	if (!cfg->slots)
		cfg->slots = cfg->tso ? VNIC_CABLE_TSO_DEFAULT_SLOTS : VNIC_CABLE_DEFAULT_SLOTS;
	if (cfg->mtu < VNIC_CABLE_MIN_MTU || cfg->mtu > VNIC_CABLE_MAX_MTU)
		return -EINVAL;
	if (cfg->slots & (cfg->slots - 1) || cfg->slots > VNIC_CABLE_MAX_SLOTS)
		return -EINVAL;
	if (!prob_ok(cfg->loss) || !prob_ok(cfg->reorder) || !prob_ok(cfg->corrupt))
		return -EINVAL;
	if (!cfg->queues)
		cfg->queues = 1;
	if (cfg->queues > VNIC_CABLE_MAX_QUEUES)
		return -EINVAL;
	return 0;
}

/*
 * c->cfg into the live copy, under c->lock (or before the cable exists for
 * anyone else): odd while the fields change, even again after; the release
 * of the last store pairs with the producers' acquire load in take_live.
 */
static void live_publish(struct vnic_cable *c)
{
	struct cable_live *l = &c->live;
	uint32_t s = atomic_load_explicit(&l->seq, memory_order_relaxed);

	atomic_store_explicit(&l->seq, s + 1, memory_order_relaxed);
	vnic_fence_on(&l->seq, memory_order_release);
	atomic_store_explicit(&l->rate_bps, c->cfg.rate_bps, memory_order_relaxed);
	atomic_store_explicit(&l->delay_ns, c->cfg.delay_ns, memory_order_relaxed);
	atomic_store_explicit(&l->seed, c->cfg.seed, memory_order_relaxed);
	atomic_store_explicit(&l->loss_thr, prob_threshold(c->cfg.loss), memory_order_relaxed);
	atomic_store_explicit(&l->reorder_thr, prob_threshold(c->cfg.reorder),
			      memory_order_relaxed);
	atomic_store_explicit(&l->corrupt_thr, prob_threshold(c->cfg.corrupt),
			      memory_order_relaxed);
	atomic_store_explicit(&l->seq, s + 2, memory_order_release);
}

/*
 * The ring hands its slots out in turn, so a stream writes every one within
 * its first thousand frames, and each first write of a page is a page fault:
 * about 770 per cable at MTU 1500, 4,500 at 9000, 8,200 with --cable-tso,
 * all in a benchmark's first second. A store to each page here takes them at
 * set-up instead, where they time nothing. The price is memory: a direction
 * that carries only small frames (a stream's acks) now holds every page of
 * its slots, not only their first.
 */
static void slots_prefault(struct cable_dir *d, uint32_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t size = d->pool.buf_size;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *b = d->slots[i]->head;

		for (size_t off = 0; off < size; off += page)
			b[off] = 0;
		b[size - 1] = 0;
	}
}

static int dir_init(struct vnic_cable *c, unsigned int i)
{
	struct cable_dir *d = &c->dir[i];
	uint32_t n = c->cfg.slots;
	int err;

	d->slots = calloc(n, sizeof(*d->slots));
	if (!d->slots)
		return -ENOMEM;
	/* No headroom: a slot holds exactly one frame of frame_size bytes. */
	err = vnic_pkt_pool_init(&d->pool, n, c->end[0].wire.frame_size, 0);
	if (err)
		goto err_free_slots;
	/* Every packet of the pool belongs to a slot for the cable's life. */
	if (vnic_pkt_alloc_bulk(&d->pool, d->slots, n) != n) {
		err = -ENOMEM;
		goto err_fini_pool;
	}
	slots_prefault(d, n);
	d->mask = n - 1;
	d->idx = i;
	d->mtu = c->cfg.mtu;
	d->tso = c->cfg.tso;
	d->live = &c->live;
	d->p.live_seq = atomic_load_explicit(&c->live.seq, memory_order_relaxed);
	d->p.rate_bps = c->cfg.rate_bps;
	d->p.delay_ns = c->cfg.delay_ns;
	d->p.timed = c->cfg.rate_bps || c->cfg.delay_ns;
	d->p.loss_thr = prob_threshold(c->cfg.loss);
	d->p.reorder_thr = prob_threshold(c->cfg.reorder);
	d->p.corrupt_thr = prob_threshold(c->cfg.corrupt);
	cable_dir_seed(d, c->cfg.seed);
	d->rx_wire = &c->end[(i & ~1u) + (1 - (i & 1))].wire;
	return 0;

err_fini_pool:
	vnic_pkt_pool_fini(&d->pool);
err_free_slots:
	free(d->slots);
	d->slots = NULL;
	return err;
}

static void dir_fini(struct cable_dir *d)
{
	vnic_pkt_pool_fini(&d->pool);
	free(d->slots);
}

static void dirs_fini(struct vnic_cable *c, unsigned int n)
{
	while (n--)
		dir_fini(&c->dir[n]);
}

static void end_init(struct vnic_cable *c, unsigned int i)
{
	struct cable_end *e = &c->end[i];
	unsigned int side = i & 1, q = i / 2;

	e->wire.ops = &vnic_cable_wire_ops;
	e->wire.priv = c;
	e->wire.mtu = c->cfg.mtu;
	e->wire.frame_size = c->cfg.mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
	/* a slot big enough for either; the MTU is still wire.mtu */
	if (c->cfg.tso && e->wire.frame_size < VNIC_CABLE_GSO_MAX) {
		e->wire.frame_size = VNIC_CABLE_GSO_MAX;
		e->wire.rx_gso_max_size = VNIC_CABLE_GSO_MAX;
	}
	e->tx = &c->dir[2 * q + side];
	e->rx = &c->dir[2 * q + 1 - side];
	e->cable = c;
	e->side = side;
}

int vnic_cable_create(struct vnic_cable **cp, const struct vnic_cable_cfg *cfg)
{
	struct vnic_cable *c;
	unsigned int i, n;
	int err;

	*cp = NULL;
	c = aligned_alloc(VNIC_CACHELINE, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	if (cfg)
		c->cfg = *cfg;
	err = check_cfg(&c->cfg);
	if (err)
		goto err_free;
	n = 2 * c->cfg.queues;
	c->dir = aligned_alloc(VNIC_CACHELINE, n * sizeof(*c->dir));
	c->end = calloc(n, sizeof(*c->end));
	err = -ENOMEM;
	if (!c->dir || !c->end)
		goto err_free_arrays;
	memset(c->dir, 0, n * sizeof(*c->dir));
	err = -pthread_mutex_init(&c->lock, NULL);
	if (err)
		goto err_free_arrays;
	live_publish(c);

	for (i = 0; i < n; i++)
		end_init(c, i);
	for (i = 0; i < n; i++) {
		err = dir_init(c, i);
		if (err)
			goto err_fini_dirs;
	}
	*cp = c;
	return 0;

err_fini_dirs:
	dirs_fini(c, i);
	pthread_mutex_destroy(&c->lock);
err_free_arrays:
	free(c->end);
	free(c->dir);
err_free:
	free(c);
	return err;
}

void vnic_cable_destroy(struct vnic_cable *c)
{
	if (!c)
		return;
	dirs_fini(c, 2 * c->cfg.queues);
	pthread_mutex_destroy(&c->lock);
	free(c->end);
	free(c->dir);
	free(c);
}

int vnic_cable_set(struct vnic_cable *c, const struct vnic_cable_cfg *cfg)
{
	struct vnic_cable_cfg n;

	if (!c || !cfg)
		return -EINVAL;
	n = *cfg;
	pthread_mutex_lock(&c->lock);
	if (!n.mtu)
		n.mtu = VNIC_CABLE_DEFAULT_MTU;
	if (!n.slots)
		n.slots = n.tso ? VNIC_CABLE_TSO_DEFAULT_SLOTS : VNIC_CABLE_DEFAULT_SLOTS;
	if (!n.queues)
		n.queues = 1;
	/* the slots and the rings were sized for these */
	if (n.mtu != c->cfg.mtu || n.slots != c->cfg.slots || n.tso != c->cfg.tso ||
	    n.queues != c->cfg.queues || check_cfg(&n)) {
		pthread_mutex_unlock(&c->lock);
		return -EINVAL;
	}
	c->cfg.rate_bps = n.rate_bps;
	c->cfg.delay_ns = n.delay_ns;
	c->cfg.seed = n.seed;
	c->cfg.loss = n.loss;
	c->cfg.reorder = n.reorder;
	c->cfg.corrupt = n.corrupt;
	live_publish(c);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void vnic_cable_config_get(const struct vnic_cable *c, struct vnic_cable_cfg *out)
{
	struct vnic_cable *m = (struct vnic_cable *)c;

	pthread_mutex_lock(&m->lock);
	*out = c->cfg;
	pthread_mutex_unlock(&m->lock);
}

struct vnic_wire *vnic_cable_end(struct vnic_cable *c, unsigned int end)
{
	return vnic_cable_queue_end(c, end, 0);
}

struct vnic_wire *vnic_cable_queue_end(struct vnic_cable *c, unsigned int end, unsigned int q)
{
	return end < 2 && q < c->cfg.queues ? &c->end[2 * q + end].wire : NULL;
}

/* Adds ring d's counters to st. */
static void dir_stats(const struct cable_dir *d, struct vnic_cable_stats *st)
{
	st->tx_frames += vnic_ctr_read(&d->p.tx_frames);
	st->tx_bytes += vnic_ctr_read(&d->p.tx_bytes);
	st->rx_frames += vnic_ctr_read(&d->c.rx_frames);
	st->drop_mtu += vnic_ctr_read(&d->p.drop_mtu);
	st->drop_loss += vnic_ctr_read(&d->p.drop_loss);
	st->reordered += vnic_ctr_read(&d->p.reordered);
	st->corrupted += vnic_ctr_read(&d->p.corrupted);
	st->tx_full += vnic_ctr_read(&d->p.tx_full);
	st->notifies += vnic_ctr_read(&d->p.notifies);
	st->tx_super += vnic_ctr_read(&d->p.tx_super);
	st->drop_super += vnic_ctr_read(&d->p.drop_super);
}

void vnic_cable_stats(const struct vnic_cable *c, unsigned int dir, struct vnic_cable_stats *st)
{
	unsigned int q;

	memset(st, 0, sizeof(*st));
	if (dir > 1)
		return;
	for (q = 0; q < c->cfg.queues; q++)
		dir_stats(&c->dir[2 * q + dir], st);
}

void vnic_cable_queue_stats(const struct vnic_cable *c, unsigned int dir, unsigned int q,
			    struct vnic_cable_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (dir > 1 || q >= c->cfg.queues)
		return;
	dir_stats(&c->dir[2 * q + dir], st);
}
