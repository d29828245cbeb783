/* SPDX-License-Identifier: MIT */
/*
 * Interrupt coalescing of the device's completion interrupts, ethtool -C's
 * rx-usecs, rx-frames, tx-usecs, tx-frames, adaptive-rx and adaptive-tx
 * (docs/MECHANISMS.md section 9).
 *
 * A real NIC writes its completions back at once and holds the interrupt;
 * so does this device: the entry goes on the driver's ring with
 * vnic_hv_send_subcrq_noirq and the interrupt follows with
 * vnic_hv_subcrq_raise, when the ring has frames completions pending or
 * usecs after the first of them. A driver whose NAPI polls the ring anyway
 * (its interrupt masked) sees every entry at once; one that completed and
 * re-armed waits for the interrupt, and its re-arm check still finds an
 * entry published before it armed (the hv's ordering is the same either
 * way). The timer is one poller for every ring on a cpu (one in all, unless
 * queue_cpu spreads the queues: each ring's on its engines' cpu, so a ring's
 * state has one thread), armed for the earliest deadline; frames without
 * usecs gets a backstop deadline, so nothing pending is ever left without
 * one. New settings are taken on the device's cpu with the others parked.
 *
 * Adaptive: each ring samples its queue's packets and bytes and its own
 * interrupts at every interrupt it raises, and core's vnic_dim walks the
 * profiles below by what each step did to those rates.
 */
#include <errno.h>

#include "device/dev_int.h"

/* The adaptive profiles, least moderation first: 0 is an interrupt per completion. */
static const struct dev_coal_dir profiles[] = {
	{.usecs = 0, .frames = 0},   {.usecs = 8, .frames = 16},    {.usecs = 32, .frames = 32},
	{.usecs = 64, .frames = 64}, {.usecs = 128, .frames = 128},
};

enum { NPROFILES = sizeof(profiles) / sizeof(profiles[0]) };
static_assert((int)NPROFILES <= (int)VNIC_DIM_MAX_PROFILES, "vnic_dim walks at most its maximum");

static const struct dev_coal_dir *in_force(const struct dev_coal_dir *d,
					   const struct dev_coal_ring *r)
{
	return d->adaptive ? &profiles[r->dim.prof] : d;
}

static void dim_sample(struct dev_coal_ring *r)
{
	struct vnic_dim_sample s = {
		.ns = vnic_now_ns(),
		.pkts = vnic_ctr_read(r->pkts),
		.bytes = vnic_ctr_read(r->bytes),
		.events = vnic_ctr_read(&r->irqs),
	};

	if (vnic_dim_update(&r->dim, &s)) {
		vnic_ctr_set(&r->profile, r->dim.prof);
		vnic_ctr_set(&r->moves, r->dim.moves);
	}
}

/* The interrupt went (delivered or masked): what was pending is signalled. */
static void signalled(const struct dev_coal_dir *d, struct dev_coal_ring *r)
{
	vnic_ctr_inc(&r->irqs);
	if (r->pending > 1)
		vnic_ctr_add(&r->coalesced, r->pending - 1);
	r->pending = 0;
	r->due_ns = 0;
	if (d->adaptive)
		dim_sample(r);
}

/*
 * A failed raise means the driver's ring is gone (a reset freed it, CLOSED
 * or PARAMETER): its completions are the reset's business, not ours.
 */
static void raise_now(struct vnic_dev *dev, const struct dev_coal_dir *d, struct dev_coal_ring *r,
		      uint32_t handle)
{
	vnic_hv_subcrq_raise(dev->hv, VNIC_HV_SERVER, handle);
	signalled(d, r);
}

static void arm(struct dev_coal_ring *r, uint64_t due)
{
	struct vnic_poller *p = r->timer;

	r->due_ns = due;
	if (!p->deadline_ns || (int64_t)(due - p->deadline_ns) < 0)
		vnic_poller_set_timer(p, due);
}

long vnic_dev_coal_send(struct vnic_dev *dev, const struct dev_coal_dir *d, struct dev_coal_ring *r,
			uint32_t handle, const union vnic_subcrq_entry *e, unsigned int n)
{
	const struct dev_coal_dir *p = in_force(d, r);
	long rc;

	if (!p->usecs && !p->frames && !r->pending) {
		/* no coalescing: the hcall raises the interrupt, as it always did */
		rc = vnic_hv_send_subcrq(dev->hv, VNIC_HV_SERVER, handle, e);
		if (rc == VNIC_H_SUCCESS) {
			r->pending = n;
			signalled(d, r);
		}
		return rc;
	}
	rc = vnic_hv_send_subcrq_noirq(dev->hv, VNIC_HV_SERVER, handle, e);
	if (rc != VNIC_H_SUCCESS)
		return rc;
	r->pending += n;
	if ((!p->usecs && !p->frames) || (p->frames && r->pending >= p->frames)) {
		raise_now(dev, d, r, handle);
		return rc;
	}
	if (!r->due_ns)
		arm(r, vnic_now_ns() + 1000ull * (p->usecs ? p->usecs : VNIC_DEV_COAL_BACKSTOP_US));
	return rc;
}

void vnic_dev_coal_forget(struct dev_coal_ring *r)
{
	r->pending = 0;
	r->due_ns = 0;
}

/* --- the poller: due interrupts and new settings ------------------------------------ */

/* Raises r's interrupt if due (or if now is 0: at once); the ring's next deadline into *next. */
static void look(struct vnic_dev *dev, const struct dev_coal_dir *d, struct dev_coal_ring *r,
		 uint32_t handle, uint64_t now, uint64_t *next)
{
	if (!r->pending)
		return;
	if (!now || (int64_t)(now - r->due_ns) >= 0) {
		raise_now(dev, d, r, handle);
		return;
	}
	if (!*next || (int64_t)(r->due_ns - *next) < 0)
		*next = r->due_ns;
}

static void dir_of(struct dev_coal_dir *d, uint32_t usecs, uint32_t frames, bool adaptive)
{
	d->usecs = usecs;
	d->frames = frames;
	d->adaptive = adaptive;
}

static void ring_restart(struct dev_coal_ring *r, bool adaptive, bool was)
{
	if (adaptive && !was) {
		vnic_dim_init(&r->dim, NPROFILES);
		vnic_ctr_set(&r->profile, 0);
	}
}

/* Takes settings another thread handed over; what waits is raised under the old ones first. */
static void take_settings(struct vnic_dev *dev)
{
	struct vnic_dev_coalesce c;
	unsigned int i;
	uint64_t next = 0;

	pthread_mutex_lock(&dev->live.lock);
	c = dev->live.coal;
	atomic_store_explicit(&dev->live.coal_pending, false, memory_order_relaxed);
	pthread_mutex_unlock(&dev->live.lock);
	for (i = 0; i < dev->cfg.max_tx_queues; i++) {
		struct dev_txq *txq = &dev->txq[i];

		look(dev, &dev->coal.tx, &txq->coal, txq->comp_handle, 0, &next);
		ring_restart(&txq->coal, c.adaptive_tx, dev->coal.tx.adaptive);
	}
	for (i = 0; i < dev->cfg.max_rx_queues; i++) {
		struct dev_rxq *rxq = &dev->rxq[i];

		look(dev, &dev->coal.rx, &rxq->coal, rxq->comp_handle, 0, &next);
		ring_restart(&rxq->coal, c.adaptive_rx, dev->coal.rx.adaptive);
	}
	dir_of(&dev->coal.tx, c.tx_usecs, c.tx_frames, c.adaptive_tx);
	dir_of(&dev->coal.rx, c.rx_usecs, c.rx_frames, c.adaptive_rx);
}

/*
 * New settings touch every ring and the directions every engine reads: on
 * the device's cpu, with the queues' cpus parked. One late: the next turn.
 */
static void maybe_take_settings(struct vnic_dev *dev, struct vnic_poller *p)
{
	/* acquire: the settings under the lock are there (the lock orders them anyway) */
	if (!atomic_load_explicit(&dev->live.coal_pending, memory_order_acquire))
		return;
	if (vnic_park(&dev->park)) {
		vnic_poller_schedule(p);
		return;
	}
	take_settings(dev);
	vnic_unpark(&dev->park);
}

/* The rings of the queues on cc's cpu: a ring is raised on its engine's thread only. */
int vnic_dev_coal_poll(struct vnic_poller *p, int budget)
{
	struct dev_coal_cpu *cc = vnic_container_of(p, struct dev_coal_cpu, poller);
	struct vnic_dev *dev = cc->dev;
	uint64_t now, next = 0;
	unsigned int i;

	(void)budget;
	if (cc == &dev->coal.cpu[0])
		maybe_take_settings(dev, p);
	now = vnic_now_ns();
	for (i = 0; i < dev->cfg.max_tx_queues; i++)
		if (dev->qcpu[i] == cc->cpu)
			look(dev, &dev->coal.tx, &dev->txq[i].coal, dev->txq[i].comp_handle, now,
			     &next);
	for (i = 0; i < dev->cfg.max_rx_queues; i++)
		if (dev->qcpu[i] == cc->cpu)
			look(dev, &dev->coal.rx, &dev->rxq[i].coal, dev->rxq[i].comp_handle, now,
			     &next);
	vnic_poller_set_timer(p, next);
	return 0;
}

/* --- setup and settings --------------------------------------------------------------- */

static bool coalesce_ok(const struct vnic_dev_coalesce *c)
{
	return c->rx_usecs <= VNIC_DEV_COAL_MAX_USECS && c->tx_usecs <= VNIC_DEV_COAL_MAX_USECS &&
	       c->rx_frames <= VNIC_DEV_COAL_MAX_FRAMES && c->tx_frames <= VNIC_DEV_COAL_MAX_FRAMES;
}

/* The coalescing poller of cpu c, added if c has none yet. */
static struct vnic_poller *coal_cpu(struct vnic_dev *dev, struct vnic_cpu *c, int *err)
{
	struct dev_coal_cpu *cc;
	unsigned int i;

	for (i = 0; i < dev->coal.ncpu; i++)
		if (dev->coal.cpu[i].cpu == c)
			return &dev->coal.cpu[i].poller;
	cc = &dev->coal.cpu[dev->coal.ncpu];
	cc->dev = dev;
	cc->cpu = c;
	/* Always: coalescing may be turned on while the device runs, and a running cpu
	 * takes no poller. */
	*err = vnic_cpu_add(c, &cc->poller, "dev-coal", vnic_dev_coal_poll);
	if (*err)
		return NULL;
	dev->coal.ncpu++;
	return &cc->poller;
}

int vnic_dev_coal_init(struct vnic_dev *dev)
{
	const struct vnic_dev_coalesce *c = &dev->cfg.coal;
	unsigned int i;
	int err = 0;

	dev->live.coal = *c;
	atomic_init(&dev->live.coal_pending, false);
	dir_of(&dev->coal.tx, c->tx_usecs, c->tx_frames, c->adaptive_tx);
	dir_of(&dev->coal.rx, c->rx_usecs, c->rx_frames, c->adaptive_rx);
	for (i = 0; i < dev->cfg.max_tx_queues; i++) {
		struct dev_txq *txq = &dev->txq[i];

		txq->coal.pkts = &txq->st.packets;
		txq->coal.bytes = &txq->st.bytes;
		vnic_dim_init(&txq->coal.dim, NPROFILES);
	}
	/* the device's cpu first: its poller takes new settings */
	if (!coal_cpu(dev, dev->cpu, &err))
		return err;
	for (i = 0; i < dev->cfg.max_tx_queues; i++) {
		dev->txq[i].coal.timer = coal_cpu(dev, dev->qcpu[i], &err);
		if (err)
			return err;
	}
	for (i = 0; i < dev->cfg.max_rx_queues; i++) {
		struct dev_rxq *rxq = &dev->rxq[i];

		rxq->coal.pkts = &rxq->st.frames;
		rxq->coal.bytes = &rxq->st.bytes;
		vnic_dim_init(&rxq->coal.dim, NPROFILES);
		rxq->coal.timer = coal_cpu(dev, dev->qcpu[i], &err);
		if (err)
			return err;
	}
	return 0;
}

int vnic_dev_set_coalesce(struct vnic_dev *dev, const struct vnic_dev_coalesce *c)
{
	if (!dev || !c || !coalesce_ok(c))
		return -EINVAL;
	pthread_mutex_lock(&dev->live.lock);
	dev->live.coal = *c;
	/* release: pairs with the poller's acquire */
	atomic_store_explicit(&dev->live.coal_pending, true, memory_order_release);
	pthread_mutex_unlock(&dev->live.lock);
	vnic_poller_schedule(&dev->coal.cpu[0].poller);
	return 0;
}

void vnic_dev_coalesce_get(const struct vnic_dev *dev, struct vnic_dev_coalesce *out)
{
	struct vnic_dev *d = (struct vnic_dev *)dev;

	pthread_mutex_lock(&d->live.lock);
	*out = d->live.coal;
	pthread_mutex_unlock(&d->live.lock);
}
