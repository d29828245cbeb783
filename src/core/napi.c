/* SPDX-License-Identifier: MIT */
/*
 * NAPI: an interrupt source plus a budgeted poll (docs/MECHANISMS.md section 2).
 *
 * The SCHED bit is ownership. Whoever sets it (the interrupt handler, or the
 * re-arm check in vnic_napi_complete_done) masks the interrupt and schedules
 * the poller; the poller owns the instance until it clears the bit. While
 * SCHED is held the interrupt stays masked, so a busy queue is polled again
 * and again without a single interrupt or wake-up.
 */
#include <errno.h>
#include <string.h>

#include "core/core.h"

static void irq_enable(struct vnic_napi *napi)
{
	if (napi->irq)
		napi->irq->enable(napi->irq_ctx);
}

static void irq_disable(struct vnic_napi *napi)
{
	if (napi->irq)
		napi->irq->disable(napi->irq_ctx);
}

static bool irq_pending(struct vnic_napi *napi)
{
	return napi->irq && napi->irq->pending(napi->irq_ctx);
}

/* Test-and-set of SCHED: true if we took it. */
static bool take_sched(struct vnic_napi *napi)
{
	return !(atomic_fetch_or_explicit(&napi->state, VNIC_NAPI_SCHED, memory_order_acq_rel) &
		 VNIC_NAPI_SCHED);
}

/*
 * Full barrier between re-enabling the interrupt and looking for work once
 * more. The producer does the mirror image (publish the entry, then read
 * whether the interrupt is armed). With a store->load barrier on both sides
 * at least one of the two sees the other: either we find the entry or the
 * producer finds the interrupt armed and raises it. Without it the enable
 * store could sit in our store buffer while we read an empty ring, and the
 * producer read "disarmed": the entry would wait for the next interrupt.
 * This is the only fence of the re-arm: the sources' enable is a release
 * store (struct vnic_irq_ops in core.h), so each re-arm costs one fence.
 */
static inline void rearm_barrier(struct vnic_napi *napi)
{
	vnic_fence_on(&napi->state, memory_order_seq_cst);
}

/*
 * The cpu's view of a napi. The poll runs under SCHED: if the poller was run
 * by something other than a schedule (its timer), SCHED is taken here as an
 * interrupt would take it, so the instance is never polled while its
 * interrupt can also schedule it.
 */
static int napi_poller(struct vnic_poller *p, int budget)
{
	struct vnic_napi *napi = vnic_container_of(p, struct vnic_napi, poller);
	uint64_t completes = napi->stats.completes;
	int work;

	if (!(atomic_load_explicit(&napi->state, memory_order_acquire) & VNIC_NAPI_SCHED)) {
		/*
		 * Lost the race to an interrupt between the load and here: the
		 * winner owns the instance and has scheduled this poller, which
		 * runs again under its SCHED. Polling now would be a second
		 * writer of the poll's state and counters, and the completion
		 * would clear a SCHED that is not ours.
		 */
		if (!take_sched(napi))
			return 0;
		irq_disable(napi);
	}

	work = napi->poll(napi, napi->weight);
	if (work < 0)
		work = 0;
	/* stats: one writer at a time (the SCHED holder), read by counters anywhere */
	vnic_ctr_inc(&napi->stats.polls);
	vnic_ctr_add(&napi->stats.work, (uint64_t)work);
	if (work >= napi->weight)
		vnic_ctr_inc(&napi->stats.full_polls);

	if (napi->stats.completes != completes)
		return 0; /* the poll completed it itself: no longer ours */
	if (work >= napi->weight)
		return budget; /* keep SCHED: the cpu polls again, irq stays masked */
	vnic_napi_complete_done(napi, work);
	return 0;
}

int vnic_napi_init(struct vnic_napi *napi, struct vnic_cpu *cpu, const char *name,
		   vnic_napi_poll_fn poll, const struct vnic_irq_ops *irq, void *irq_ctx,
		   int weight)
{
	if (!napi || !cpu || !poll || weight < 0)
		return -EINVAL;
	if (irq && (!irq->enable || !irq->disable || !irq->pending))
		return -EINVAL;
	memset(napi, 0, sizeof(*napi));
	atomic_init(&napi->state, 0);
	napi->poll = poll;
	napi->irq = irq;
	napi->irq_ctx = irq_ctx;
	napi->weight = weight ? weight : VNIC_NAPI_BUDGET;
	return vnic_cpu_add(cpu, &napi->poller, name, napi_poller);
}

bool vnic_napi_schedule(struct vnic_napi *napi)
{
	/* Plain load first: a storm of interrupts on a busy napi stays read-only. */
	if (atomic_load_explicit(&napi->state, memory_order_relaxed) & VNIC_NAPI_SCHED)
		return false;
	if (!take_sched(napi))
		return false;
	irq_disable(napi);
	vnic_ctr_inc(&napi->stats.irqs);
	vnic_poller_schedule(&napi->poller);
	return true;
}

void vnic_napi_complete_done(struct vnic_napi *napi, int work)
{
	(void)work;
	vnic_ctr_inc(&napi->stats.completes);
	/* Release: what the poll did is visible to the next owner of SCHED. */
	atomic_fetch_and_explicit(&napi->state, ~(uint32_t)VNIC_NAPI_SCHED, memory_order_release);
	irq_enable(napi);
	rearm_barrier(napi);
	/*
	 * Work that arrived after the poll's last look but before the enable
	 * raised no interrupt (the source was masked). Exactly one of us and a
	 * concurrent interrupt wins SCHED; the winner masks and schedules.
	 */
	if (irq_pending(napi) && take_sched(napi)) {
		irq_disable(napi);
		vnic_ctr_inc(&napi->stats.rearm_races);
		vnic_poller_schedule(&napi->poller);
	}
}
