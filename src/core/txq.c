/* SPDX-License-Identifier: MIT */
/*
 * TX queue state: the BQL wrappers of include/linux/netdevice.h and the
 * driver's stop/wake, as described in docs/MECHANISMS.md sections 1 and 6.
 *
 * Two reasons to be stopped, one bit each: DRV_XOFF (the driver's ring is
 * full) and STACK_XOFF (BQL: too many bytes in flight). The queue runs again
 * only when both are clear; whoever clears the last one calls wake.
 */
#include <assert.h>

#include "core/core.h"

/*
 * The same-cpu contract of struct vnic_txq, checked where asserts are on:
 * a call from a cpu's thread comes from the queue's owner. Calls from no
 * cpu (set-up, close on the main thread while the owner is stopped) pass.
 */
static inline void owner_check(const struct vnic_txq *txq)
{
	const struct vnic_cpu *self = vnic_cpu_self();

	assert(!txq->owner || !self || self == txq->owner);
	(void)txq;
	(void)self;
}

void vnic_txq_init(struct vnic_txq *txq, bool bql, vnic_txq_wake_fn wake, void *wake_ctx)
{
	vnic_dql_init(&txq->dql, 1000000000ull); /* Linux: HZ, one second */
	atomic_init(&txq->state, 0);
	txq->owner = NULL;
	txq->bql_enabled = bql;
	txq->wake = wake;
	txq->wake_ctx = wake_ctx;
	vnic_ctr_set(&txq->stops, 0);
	vnic_ctr_set(&txq->bql_stops, 0);
	vnic_ctr_set(&txq->wakes, 0);
}

static void do_wake(struct vnic_txq *txq)
{
	vnic_ctr_inc(&txq->wakes);
	if (txq->wake)
		txq->wake(txq->wake_ctx, txq);
}

bool vnic_txq_sent(struct vnic_txq *txq, uint32_t bytes, bool xmit_more)
{
	uint32_t old;

	owner_check(txq);
	if (!txq->bql_enabled)
		return !xmit_more || vnic_txq_stopped(txq);

	vnic_dql_queued(&txq->dql, bytes);
	/*
	 * Mid-batch the limit is not looked at: the rest of the batch is
	 * already committed, and a stop here would strand it with no doorbell.
	 * The doorbell is still due if the driver stopped the queue, since no
	 * later packet will come to ring it.
	 */
	if (xmit_more)
		return vnic_txq_stopped(txq);

	if (vnic_dql_avail(&txq->dql) >= 0)
		return true;

	/*
	 * No barrier and re-check of the limit after setting the bit: the
	 * completion that could make room runs on this same thread (the
	 * contract of struct vnic_txq), so it cannot have run in between.
	 */
	old = atomic_fetch_or_explicit(&txq->state, VNIC_TXQ_STACK_XOFF, memory_order_relaxed);
	if (!(old & VNIC_TXQ_STACK_XOFF))
		vnic_ctr_inc(&txq->bql_stops);
	return true;
}

void vnic_txq_completed(struct vnic_txq *txq, uint32_t pkts, uint32_t bytes, uint64_t now_ns)
{
	uint32_t old;

	owner_check(txq);
	(void)pkts;
	if (!txq->bql_enabled || !bytes)
		return;

	vnic_dql_completed(&txq->dql, bytes, now_ns);
	if (vnic_dql_avail(&txq->dql) < 0)
		return;

	if (!(atomic_load_explicit(&txq->state, memory_order_relaxed) & VNIC_TXQ_STACK_XOFF))
		return;
	old = atomic_fetch_and_explicit(&txq->state, ~(uint32_t)VNIC_TXQ_STACK_XOFF,
					memory_order_acq_rel);
	if ((old & VNIC_TXQ_STACK_XOFF) && !(old & ~(uint32_t)VNIC_TXQ_STACK_XOFF))
		do_wake(txq);
}

void vnic_txq_stop(struct vnic_txq *txq)
{
	uint32_t old;

	owner_check(txq);
	old = atomic_fetch_or_explicit(&txq->state, VNIC_TXQ_DRV_XOFF, memory_order_acq_rel);

	if (!(old & VNIC_TXQ_DRV_XOFF))
		vnic_ctr_inc(&txq->stops);
}

void vnic_txq_wake(struct vnic_txq *txq)
{
	uint32_t old;

	owner_check(txq);
	old = atomic_fetch_and_explicit(&txq->state, ~(uint32_t)VNIC_TXQ_DRV_XOFF,
					memory_order_acq_rel);

	if ((old & VNIC_TXQ_DRV_XOFF) && !(old & ~(uint32_t)VNIC_TXQ_DRV_XOFF))
		do_wake(txq);
}

/*
 * The ring is empty and the DQL forgets what it thought was in flight. If
 * the queue was stopped, wake is called: clearing the bits silently would
 * leave a sender waiting for a wake that no later call can produce (wake
 * and completed only wake on a bit they clear themselves).
 */
void vnic_txq_reset(struct vnic_txq *txq, uint64_t now_ns)
{
	uint32_t old = atomic_exchange_explicit(&txq->state, 0, memory_order_acq_rel);

	vnic_dql_reset(&txq->dql, now_ns);
	if (old)
		do_wake(txq);
}

void vnic_txq_set_bql(struct vnic_txq *txq, bool on, uint64_t now_ns)
{
	uint32_t old;

	owner_check(txq);
	if (txq->bql_enabled == on)
		return;
	if (on) {
		vnic_dql_reset(&txq->dql, now_ns);
		txq->bql_enabled = true;
		return;
	}
	txq->bql_enabled = false;
	old = atomic_fetch_and_explicit(&txq->state, ~(uint32_t)VNIC_TXQ_STACK_XOFF,
					memory_order_acq_rel);
	if ((old & VNIC_TXQ_STACK_XOFF) && !(old & ~(uint32_t)VNIC_TXQ_STACK_XOFF))
		do_wake(txq);
}
