// SPDX-License-Identifier: MIT
/*
 * Queues on other cpus (docs/ARCHITECTURE.md section 4.2): the control
 * poller parks them while it works.
 *
 * With vnic_drv_config.queue_cpu, queue pair q's completion poller, rx NAPI
 * and xmit run on cpu q, and the control poller stays on the driver's cpu.
 * Bring-up, close, resets, the watchdog and policy changes touch every
 * queue, as they did when all of them were on one thread. Rather than a
 * lock on the datapath (xmit is per packet), the control poller does what
 * napi_disable and netif_tx_disable do in Linux, coarser: before each of
 * its polls it asks every other cpu that holds one of our queues to run a
 * park poller, which says so and then waits, between two polls of that
 * cpu, until the control poll is over. While they wait, the queues are the
 * control poller's as if they shared its thread; the acquire and release of
 * the hand-shake order what each side wrote before. It costs the parked
 * cpus a few microseconds per control poll, and nothing per packet; the
 * control poller runs on CRQ messages, requests and timers (the watchdog
 * every quarter of tx_timeout_ns), never per packet.
 *
 * Two drivers whose control pollers run on different cpus and each park
 * the other's cpu would wait for each other, each spinning in its control
 * poll where the other's park poller cannot run. So one control poll at a
 * time in the process parks cpus: it holds park_owner from vnic_drv_park
 * to vnic_drv_unpark, and a control poll that finds it held gives up at
 * once and is tried again on the next turn of its cpu; that turn runs the
 * holder's park poller if it asked for it. The holder therefore only ever
 * waits for cpus that are between polls or inside ordinary ones, never for
 * one waiting in turn. Control polls are rare (CRQ messages, requests,
 * timers), so the one token costs nothing on the datapath and little
 * elsewhere. A park not answered within PARK_WAIT_NS (a cpu not started
 * yet, one stopping, or a thread the host took off its core) is still
 * called off and tried again the same way.
 *
 * Manual mode (one thread steps every cpu): nothing runs beside the
 * control poll, so there is nothing to park. Each park poller notes the
 * thread it last ran on (create schedules it once, so it notes it on its
 * cpu's first turn); a cpu last run by the thread the control poll runs on
 * is not parked. A stale note errs on the safe side: it names a thread
 * other than ours, and the cpu is asked.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>

#include "drv_int.h"

enum {
	PARK_IDLE = 0,
	PARK_ASKED = 1,	 /* the control poller waits for the park poller */
	PARK_PARKED = 2, /* the park poller waits for the control poller */
};

/* How long a control poll waits for a cpu to park before trying again later. */
#define PARK_WAIT_NS 5000000ull

/* The driver whose control poll has cpus parked or being asked (NULL: none). */
static _Atomic(struct vnic_drv *) park_owner;

/* An address unique to each live thread, without a syscall. */
static _Thread_local char thread_mark;

static uintptr_t thread_id(void)
{
	return (uintptr_t)&thread_mark;
}

static int park_poll(struct vnic_poller *poller, int budget)
{
	struct drv_park *pk = vnic_container_of(poller, struct drv_park, poller);
	uint32_t want = PARK_ASKED;
	unsigned int spins = 0;

	(void)budget;
	atomic_store_explicit(&pk->runner, thread_id(), memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&pk->state, &want, PARK_PARKED,
						     memory_order_acq_rel, memory_order_acquire))
		return 0; /* called off, or nothing asked: the note above was the point */
	while (atomic_load_explicit(&pk->state, memory_order_acquire) == PARK_PARKED) {
		/* the control poll is short; on a shared core, let it run */
		if (++spins % 64 == 0)
			sched_yield();
		else
			vnic_cpu_relax();
	}
	return 0;
}

int vnic_drv_park_init(struct vnic_drv *drv)
{
	unsigned int q, i;
	int err;

	for (q = 0; q < drv->qtx || q < drv->qrx; q++) {
		struct vnic_cpu *c = drv->qcpu[q];
		struct drv_park *pk;

		if (c == drv->cpu)
			continue;
		for (i = 0; i < drv->npark && drv->park[i].cpu != c; i++)
			;
		if (i < drv->npark)
			continue;
		pk = &drv->park[drv->npark];
		pk->cpu = c;
		atomic_init(&pk->state, PARK_IDLE);
		atomic_init(&pk->runner, 0);
		err = vnic_cpu_add(c, &pk->poller, "drv-park", park_poll);
		if (err)
			return err;
		drv->npark++;
		/* its first run notes the thread that runs its cpu */
		vnic_poller_schedule(&pk->poller);
	}
	return 0;
}

static void release(struct vnic_drv *drv, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct drv_park *pk = &drv->park[i];
		uint32_t want = PARK_ASKED;

		/* asked and never answered (a manual-mode cpu): called off */
		if (!atomic_compare_exchange_strong_explicit(&pk->state, &want, PARK_IDLE,
							     memory_order_acq_rel,
							     memory_order_acquire))
			atomic_store_explicit(&pk->state, PARK_IDLE, memory_order_release);
	}
}

static bool wait_parked(struct drv_park *pk, uint64_t end)
{
	unsigned int spins = 0;

	while (atomic_load_explicit(&pk->state, memory_order_acquire) != PARK_PARKED) {
		if (++spins % 64 == 0) {
			if ((int64_t)(vnic_now_ns() - end) >= 0)
				return false;
			sched_yield();
		} else {
			vnic_cpu_relax();
		}
	}
	return true;
}

int vnic_drv_park(struct vnic_drv *drv)
{
	uintptr_t self = thread_id();
	unsigned int i;
	uint64_t end;

	struct vnic_drv *none = NULL;

	if (!drv->npark)
		return 0;
	/* another control poll parks: ours would wait for its own cpu to park */
	if (!atomic_compare_exchange_strong_explicit(&park_owner, &none, drv,
						     memory_order_acquire, memory_order_relaxed)) {
		vnic_ctr_inc(&drv->st.park_retries);
		return -EAGAIN;
	}
	/* ask them all first: they park side by side, not one after another */
	for (i = 0; i < drv->npark; i++) {
		struct drv_park *pk = &drv->park[i];

		if (atomic_load_explicit(&pk->runner, memory_order_relaxed) == self)
			continue;
		atomic_store_explicit(&pk->state, PARK_ASKED, memory_order_release);
		vnic_poller_schedule(&pk->poller);
	}
	end = vnic_now_ns() + PARK_WAIT_NS;
	for (i = 0; i < drv->npark; i++) {
		struct drv_park *pk = &drv->park[i];

		if (atomic_load_explicit(&pk->state, memory_order_relaxed) == PARK_IDLE)
			continue; /* ours: not asked */
		if (!wait_parked(pk, end)) {
			vnic_ctr_inc(&drv->st.park_retries);
			vnic_drv_unpark(drv);
			return -EAGAIN;
		}
	}
	vnic_ctr_inc(&drv->st.parks);
	return 0;
}

void vnic_drv_unpark(struct vnic_drv *drv)
{
	struct vnic_drv *self = drv;

	if (!drv->npark)
		return;
	release(drv, drv->npark);
	atomic_compare_exchange_strong_explicit(&park_owner, &self, NULL, memory_order_release,
						memory_order_relaxed);
}
