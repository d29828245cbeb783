// SPDX-License-Identifier: MIT
/*
 * Parking (docs/ARCHITECTURE.md section 4.2): a control poller has the other
 * cpus of its queues wait while it works.
 *
 * A driver or a device whose queue pair q runs on cpu q keeps its control
 * poller (and the device its fault and coalescing pollers) on its home cpu.
 * Bring-up, close, resets, the watchdog and policy changes touch every
 * queue, as they did when all of them were on one thread. Rather than a
 * lock on the datapath (xmit and the engines are per packet), the control
 * poller does what napi_disable and netif_tx_disable do in Linux, coarser:
 * before each of its polls it asks every other cpu that holds one of its
 * queues to run a park poller, which says so and then waits, between two
 * polls of that cpu, until the control poll is over. While they wait, the
 * queues are the control poller's as if they shared its thread; the
 * acquire and release of the hand-shake order what each side wrote before.
 * It costs the parked cpus a few microseconds per control poll, and nothing
 * per packet; control pollers run on CRQ messages, requests and timers,
 * never per packet.
 *
 * Two control pollers on different cpus that each park the other's cpu
 * would wait for each other, each spinning in its control poll where the
 * other's park poller cannot run. So one control poll at a time in the
 * process parks cpus: it holds park_owner from vnic_park to vnic_unpark,
 * and a control poll that finds it held gives up at once and is tried
 * again on the next turn of its cpu; that turn runs the holder's park
 * poller if it asked for it. The holder therefore only ever waits for cpus
 * that are between polls or inside ordinary ones, never for one waiting in
 * turn. A park not answered within PARK_WAIT_NS (a cpu not started yet, one
 * stopping, or a thread the host took off its core) is still called off
 * and tried again the same way.
 *
 * Manual mode (one thread steps every cpu): nothing runs beside the
 * control poll, so there is nothing to park. Each park poller notes the
 * thread it last ran on (init schedules it once, so it notes it on its
 * cpu's first turn); a cpu last run by the thread the control poll runs on
 * is not parked. A stale note errs on the safe side: it names a thread
 * other than ours, and the cpu is asked.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>

#include "core/core.h"

enum {
	PARK_IDLE = 0,
	PARK_ASKED = 1,	 /* the control poller waits for the park poller */
	PARK_PARKED = 2, /* the park poller waits for the control poller */
};

/* How long a control poll waits for a cpu to park before trying again later. */
#define PARK_WAIT_NS 5000000ull

/* The park whose control poll has cpus parked or being asked (NULL: none). */
static _Atomic(struct vnic_park *) park_owner;

/* An address unique to each live thread, without a syscall. */
static _Thread_local char thread_mark;

static uintptr_t thread_id(void)
{
	return (uintptr_t)&thread_mark;
}

static int park_poll(struct vnic_poller *poller, int budget)
{
	struct vnic_park_cpu *pk = vnic_container_of(poller, struct vnic_park_cpu, poller);
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

int vnic_park_init(struct vnic_park *pk, struct vnic_cpu *home, struct vnic_cpu *const *cpus,
		   unsigned int n, const char *name)
{
	unsigned int q, i;
	int err;

	pk->home = home;
	for (q = 0; q < n; q++) {
		struct vnic_cpu *c = cpus[q];
		struct vnic_park_cpu *pc;

		if (!c || c == home)
			continue;
		for (i = 0; i < pk->n && pk->cpu[i].cpu != c; i++)
			;
		if (i < pk->n)
			continue;
		if (pk->n == VNIC_PARK_MAX_CPUS)
			return -EINVAL;
		pc = &pk->cpu[pk->n];
		pc->cpu = c;
		atomic_init(&pc->state, PARK_IDLE);
		atomic_init(&pc->runner, 0);
		err = vnic_cpu_add(c, &pc->poller, name, park_poll);
		if (err)
			return err;
		pk->n++;
		/* its first run notes the thread that runs its cpu */
		vnic_poller_schedule(&pc->poller);
	}
	return 0;
}

static void release(struct vnic_park *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vnic_park_cpu *pk = &p->cpu[i];
		uint32_t want = PARK_ASKED;

		/* asked and never answered (a manual-mode cpu): called off */
		if (!atomic_compare_exchange_strong_explicit(&pk->state, &want, PARK_IDLE,
							     memory_order_acq_rel,
							     memory_order_acquire))
			atomic_store_explicit(&pk->state, PARK_IDLE, memory_order_release);
	}
}

static bool wait_parked(struct vnic_park_cpu *pk, uint64_t end)
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

int vnic_park(struct vnic_park *p)
{
	uintptr_t self = thread_id();
	struct vnic_park *none = NULL;
	unsigned int i;
	uint64_t end;

	if (!p->n)
		return 0;
	/* another control poll parks: ours would wait for its own cpu to park */
	if (!atomic_compare_exchange_strong_explicit(&park_owner, &none, p, memory_order_acquire,
						     memory_order_relaxed)) {
		vnic_ctr_inc(&p->retries);
		return -EAGAIN;
	}
	/* ask them all first: they park side by side, not one after another */
	for (i = 0; i < p->n; i++) {
		struct vnic_park_cpu *pk = &p->cpu[i];

		if (atomic_load_explicit(&pk->runner, memory_order_relaxed) == self)
			continue;
		atomic_store_explicit(&pk->state, PARK_ASKED, memory_order_release);
		vnic_poller_schedule(&pk->poller);
	}
	end = vnic_now_ns() + PARK_WAIT_NS;
	for (i = 0; i < p->n; i++) {
		struct vnic_park_cpu *pk = &p->cpu[i];

		if (atomic_load_explicit(&pk->state, memory_order_relaxed) == PARK_IDLE)
			continue; /* ours: not asked */
		if (!wait_parked(pk, end)) {
			vnic_ctr_inc(&p->retries);
			vnic_unpark(p);
			return -EAGAIN;
		}
	}
	vnic_ctr_inc(&p->parks);
	return 0;
}

void vnic_unpark(struct vnic_park *p)
{
	struct vnic_park *self = p;

	if (!p->n)
		return;
	release(p, p->n);
	atomic_compare_exchange_strong_explicit(&park_owner, &self, NULL, memory_order_release,
						memory_order_relaxed);
}
