/* SPDX-License-Identifier: MIT */
/*
 * Policies changed while the driver runs (vnic_drv_set_policies): what
 * `ethtool -K/-C` would do to a NIC under traffic, applied where the
 * datapath lives.
 *
 * The caller hands the policies over under a lock, raises a flag and
 * schedules the control poller, which applies them on the driver's cpu,
 * between two polls, and answers; the caller waits for that answer. The
 * datapath reads its policies plainly on that cpu, their only writer, so a
 * packet never pays for a change it may never see. What each change waits
 * for, so that nothing in flight is caught between two modes:
 *
 *   tx-submit, tx-csum, tx-hdr-build,  the next xmit (a packet sent from
 *   tx-buf                             its own buffer is held until its
 *                                      completion whatever comes after);
 *   bql-complete, reclaim-ns           the next completion round, the next
 *                                      lazy timer;
 *   rx-replenish                       the end of the next rx poll;
 *   rx-deliver, rx-agg                 at once: GRO and the list batch are
 *                                      empty between polls, and are flushed
 *                                      once more before the switch;
 *   bql                                at once (vnic_txq_set_bql);
 *   tx-reclaim                         each queue at the next poll of the
 *                                      owner of its completion interrupt
 *                                      (tx.c, vnic_drv_reclaim_move): lazy
 *                                      turns the interrupt off and arms its
 *                                      timer, napi hands the ring to the rx
 *                                      NAPI, irq and orphan to the completion
 *                                      poller; orphan marks the packets sent
 *                                      from then on, and a packet marked
 *                                      already keeps its mark.
 *
 * The driver need not be open: what is stored now is what the next bring-up
 * uses (link up sets every queue's tx-reclaim mode from cfg).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>

#include "driver/drv_int.h"

static int policies_check(const struct vnic_drv_config *c)
{
	if ((unsigned int)c->rx_replenish > VNIC_DRV_REPLENISH_ALWAYS ||
	    (unsigned int)c->tx_hdr_build > VNIC_DRV_HDR_COPY ||
	    (unsigned int)c->tx_submit > VNIC_DRV_SUBMIT_ADAPTIVE ||
	    (unsigned int)c->bql_complete > VNIC_DRV_BQL_PER_ENTRY ||
	    (unsigned int)c->tx_csum > VNIC_DRV_CSUM_HW_NOHEADERS ||
	    (unsigned int)c->tx_reclaim > VNIC_DRV_RECLAIM_ORPHAN ||
	    (unsigned int)c->tx_buf > VNIC_DRV_TXBUF_MAP ||
	    (unsigned int)c->rx_agg > VNIC_DRV_AGG_FRAGS ||
	    (unsigned int)c->rx_deliver > VNIC_DELIVER_GRO_LIST)
		return -EINVAL;
	return 0;
}

/* The policy fields of src into dst; the rest of dst is left alone. */
static void policies_copy(struct vnic_drv_config *dst, const struct vnic_drv_config *src)
{
	dst->rx_replenish = src->rx_replenish;
	dst->tx_hdr_build = src->tx_hdr_build;
	dst->tx_submit = src->tx_submit;
	dst->bql_complete = src->bql_complete;
	dst->tx_csum = src->tx_csum;
	dst->rx_deliver = src->rx_deliver;
	dst->tx_reclaim = src->tx_reclaim;
	dst->tx_buf = src->tx_buf;
	dst->rx_agg = src->rx_agg;
	dst->reclaim_ns = src->reclaim_ns ? src->reclaim_ns : VNIC_DRV_DEFAULT_RECLAIM_NS;
	dst->bql = src->bql;
}

void vnic_drv_reclaim_reset(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->qtx; i++) {
		drv->txq[i].reclaim_move = false;
		vnic_ctr_store(&drv->txq[i].reclaim, (uint32_t)drv->cfg.tx_reclaim);
	}
	for (i = 0; i < drv->qrx; i++)
		drv->rxq[i].moves = 0;
}

/* Driver's cpu: p in force. Each store is one the other threads may load (drv_int.h). */
static void apply(struct vnic_drv *drv, const struct vnic_drv_config *p)
{
	struct vnic_drv_config *c = &drv->cfg;
	bool changed = false;
	unsigned int i;

#define SET(f)                                                                                     \
	do {                                                                                       \
		if (c->f != p->f) {                                                                \
			vnic_ctr_store(&c->f, p->f);                                               \
			changed = true;                                                            \
		}                                                                                  \
	} while (0)
	SET(rx_replenish);
	SET(tx_hdr_build);
	SET(tx_submit);
	SET(bql_complete);
	SET(tx_csum);
	SET(tx_buf);
	SET(reclaim_ns);
	if (c->bql != p->bql) {
		uint64_t now = vnic_now_ns();

		vnic_ctr_store(&c->bql, p->bql);
		for (i = 0; i < drv->qtx; i++)
			vnic_txq_set_bql(&drv->txq[i].txq, p->bql, now);
		changed = true;
	}
	if (c->rx_deliver != p->rx_deliver) {
		vnic_ctr_store(&c->rx_deliver, p->rx_deliver);
		/* a queue whose delivery is not set up yet gets the mode at bring-up */
		for (i = 0; i < drv->qrx; i++)
			if (drv->rxq[i].deliver.fn)
				vnic_deliver_set_mode(&drv->rxq[i].deliver, p->rx_deliver);
		changed = true;
	}
	if (c->rx_agg != p->rx_agg) {
		vnic_ctr_store(&c->rx_agg, p->rx_agg);
		for (i = 0; i < drv->qrx; i++)
			if (drv->rxq[i].deliver.fn)
				vnic_deliver_set_fraglist(&drv->rxq[i].deliver, vnic_drv_rx_fraglist(drv));
		changed = true;
	}
	if (c->tx_reclaim != p->tx_reclaim) {
		vnic_ctr_store(&c->tx_reclaim, p->tx_reclaim);
		for (i = 0; i < drv->qtx; i++) {
			if (i < drv->ntx)
				vnic_drv_reclaim_switch(&drv->txq[i], p->tx_reclaim);
			else
				vnic_ctr_store(&drv->txq[i].reclaim, (uint32_t)p->tx_reclaim);
		}
		changed = true;
	}
#undef SET
	if (changed)
		vnic_ctr_inc(&drv->st.policy_changes);
}

bool vnic_drv_live_pending(const struct vnic_drv *drv)
{
	return atomic_load_explicit(&((struct vnic_drv *)drv)->live.pending, memory_order_acquire);
}

void vnic_drv_live_poll(struct vnic_drv *drv)
{
	struct drv_live *l = &drv->live;
	struct vnic_drv_config p;
	uint64_t seq;

	if (!atomic_exchange_explicit(&l->pending, false, memory_order_acquire))
		return;
	pthread_mutex_lock(&l->lock);
	p = l->posted;
	seq = l->posted_seq;
	pthread_mutex_unlock(&l->lock);
	apply(drv, &p);
	/* Release: the waiter that sees its number sees the policies in cfg. */
	atomic_store_explicit(&l->done_seq, seq, memory_order_release);
}

int vnic_drv_set_policies(struct vnic_drv *drv, const struct vnic_drv_config *want,
			  uint64_t timeout_ns)
{
	struct drv_live *l;
	struct vnic_drv_config p;
	uint64_t seq, end;

	if (!drv || !want || policies_check(want))
		return -EINVAL;
	/* tx queue t reclaimed in rx queue t % nrx: perhaps on another cpu (drv.c) */
	if (drv->park.n && want->tx_reclaim == VNIC_DRV_RECLAIM_NAPI)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	policies_copy(&p, want);
	/* Nobody else runs the driver (manual mode): now. */
	if (!drv->cpu->thread) {
		apply(drv, &p);
		return 0;
	}
	/* On its cpu: now, the queues on other cpus waiting as for a control poll. */
	if (vnic_cpu_self() == drv->cpu) {
		if (vnic_park(&drv->park))
			return -EAGAIN;
		apply(drv, &p);
		vnic_unpark(&drv->park);
		return 0;
	}
	l = &drv->live;
	pthread_mutex_lock(&l->lock);
	l->posted = p;
	seq = ++l->posted_seq;
	/* Release: the values are there before the poller can see the flag. */
	atomic_store_explicit(&l->pending, true, memory_order_release);
	pthread_mutex_unlock(&l->lock);
	vnic_poller_schedule(&drv->ctl_napi.poller);

	if (!timeout_ns)
		timeout_ns = VNIC_DRV_DEFAULT_OPEN_TIMEOUT_NS;
	end = vnic_now_ns() + timeout_ns;
	while ((int64_t)(atomic_load_explicit(&l->done_seq, memory_order_acquire) - seq) < 0) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000};

		if ((int64_t)(vnic_now_ns() - end) >= 0)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
	return 0;
}

void vnic_drv_policies(const struct vnic_drv *drv, struct vnic_drv_config *out)
{
	const struct vnic_drv_config *c = &drv->cfg;

	memset(out, 0, sizeof(*out));
	out->rx_replenish = vnic_ctr_load(&c->rx_replenish);
	out->tx_hdr_build = vnic_ctr_load(&c->tx_hdr_build);
	out->tx_submit = vnic_ctr_load(&c->tx_submit);
	out->bql_complete = vnic_ctr_load(&c->bql_complete);
	out->tx_csum = vnic_ctr_load(&c->tx_csum);
	out->rx_deliver = vnic_ctr_load(&c->rx_deliver);
	out->tx_reclaim = vnic_ctr_load(&c->tx_reclaim);
	out->tx_buf = vnic_ctr_load(&c->tx_buf);
	out->rx_agg = vnic_ctr_load(&c->rx_agg);
	out->reclaim_ns = vnic_ctr_load(&c->reclaim_ns);
	out->bql = vnic_ctr_load(&c->bql);
}

int vnic_drv_live_init(struct vnic_drv *drv)
{
	atomic_init(&drv->live.pending, false);
	atomic_init(&drv->live.done_seq, 0);
	drv->live.posted_seq = 0;
	return -pthread_mutex_init(&drv->live.lock, NULL);
}

void vnic_drv_live_fini(struct vnic_drv *drv)
{
	pthread_mutex_destroy(&drv->live.lock);
}
