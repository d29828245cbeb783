/* SPDX-License-Identifier: MIT */
/*
 * vnic_cpu: a thread that runs the pollers it owns and sleeps on a futex when
 * none has anything to do (ARCHITECTURE.md section 5).
 *
 * Scheduling is one atomic OR into cpu->pending. The owner takes the whole
 * word with one exchange per loop, so a busy cpu is fed without any syscall;
 * the futex is touched only on the transition to sleep and by the one waker
 * that finds the cpu asleep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Sleeps while *word == 1, until woken or until the absolute CLOCK_MONOTONIC
 * deadline_ns (0: no deadline). FUTEX_WAIT_BITSET takes an absolute time on
 * the monotonic clock, which is what a timer deadline is.
 */
static void futex_wait_until(_Atomic uint32_t *word, uint64_t deadline_ns)
{
	struct timespec ts, *tsp = NULL;

	if (deadline_ns) {
		ts.tv_sec = (time_t)(deadline_ns / 1000000000ull);
		ts.tv_nsec = (long)(deadline_ns % 1000000000ull);
		tsp = &ts;
	}
	/* EINTR, EAGAIN (word already 0) and ETIMEDOUT all mean: look again. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 1, tsp, NULL,
		FUTEX_BITSET_MATCH_ANY);
}

static void futex_wake_one(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

/*
 * Claims the cpu's current sleep, if it has announced one, and wakes it.
 * The exchange makes the claim exclusive: however many threads race here,
 * one sleep costs at most one FUTEX_WAKE, so wakeups never exceed sleeps.
 * Clearing the word before the wake also closes the window in which the
 * sleeper has announced itself but not yet entered futex_wait: its wait then
 * finds the word 0 and returns at once instead of missing our wake.
 */
static void wake_cpu(struct vnic_cpu *cpu)
{
	if (!atomic_load_explicit(&cpu->sleeping, memory_order_seq_cst))
		return;
	if (!atomic_exchange_explicit(&cpu->sleeping, 0, memory_order_seq_cst))
		return;
	futex_wake_one(&cpu->sleeping);
	atomic_fetch_add_explicit(&cpu->wakeups_in, 1, memory_order_relaxed);
}

int vnic_cpu_init(struct vnic_cpu *cpu, const char *name, uint64_t busy_poll_ns)
{
	if (!cpu)
		return -EINVAL;
	memset(cpu, 0, sizeof(*cpu));
	atomic_init(&cpu->pending, 0);
	atomic_init(&cpu->sleeping, 0);
	atomic_init(&cpu->stop, 0);
	atomic_init(&cpu->wakeups_in, 0);
	cpu->name = name ? name : "vnic-cpu";
	cpu->busy_poll_ns = busy_poll_ns;
	cpu->budget = VNIC_NAPI_BUDGET;
	return 0;
}

void vnic_cpu_fini(struct vnic_cpu *cpu)
{
	if (cpu && cpu->thread)
		vnic_cpu_stop(cpu);
}

int vnic_cpu_add(struct vnic_cpu *cpu, struct vnic_poller *p, const char *name, vnic_poll_fn poll)
{
	if (!cpu || !p || !poll)
		return -EINVAL;
	if (cpu->thread)
		return -EBUSY;
	if (cpu->npollers >= VNIC_CPU_MAX_POLLERS)
		return -ENOSPC;
	memset(p, 0, sizeof(*p));
	p->poll = poll;
	p->cpu = cpu;
	p->bit = 1ull << cpu->npollers;
	p->name = name;
	cpu->pollers[cpu->npollers++] = p;
	return 0;
}

/*
 * Only the schedule that turns pending from 0 to non-zero looks for a
 * sleeper. Any later one found bits the owner has not taken yet: either the
 * owner is awake and will take ours with them, or the first scheduler is
 * (or was) responsible for waking it, by the same argument as in
 * idle_sleep(). Busy cpus are fed by a single locked OR.
 */
void vnic_poller_schedule(struct vnic_poller *p)
{
	struct vnic_cpu *cpu = p->cpu;

	if (atomic_fetch_or_explicit(&cpu->pending, p->bit, memory_order_seq_cst))
		return;
	wake_cpu(cpu);
}

void vnic_poller_set_timer(struct vnic_poller *p, uint64_t deadline_ns)
{
	p->deadline_ns = deadline_ns;
}

/* Takes every scheduled poller; the acquire pairs with the schedulers' OR. */
static uint64_t take_pending(struct vnic_cpu *cpu)
{
	uint64_t mask, m;

	if (!atomic_load_explicit(&cpu->pending, memory_order_relaxed))
		return 0;
	mask = atomic_exchange_explicit(&cpu->pending, 0, memory_order_acquire);
	for (m = mask; m; m &= m - 1)
		cpu->pollers[__builtin_ctzll(m)]->schedules++;
	return mask;
}

/*
 * Collects the pollers whose timer is due (disarming them: timers are one
 * shot) and returns, in *next, the nearest deadline still armed (0: none).
 * The clock is read only if some timer is armed.
 */
static uint64_t due_timers(struct vnic_cpu *cpu, uint64_t *next)
{
	uint64_t now = 0, mask = 0;
	unsigned int i;

	*next = 0;
	for (i = 0; i < cpu->npollers; i++) {
		struct vnic_poller *p = cpu->pollers[i];

		if (!p->deadline_ns)
			continue;
		if (!now)
			now = vnic_now_ns();
		if ((int64_t)(now - p->deadline_ns) >= 0) {
			p->deadline_ns = 0;
			mask |= p->bit;
		} else if (!*next || p->deadline_ns < *next) {
			*next = p->deadline_ns;
		}
	}
	return mask;
}

/* Runs each poller in mask once; returns those that used their whole budget. */
static uint64_t run_mask(struct vnic_cpu *cpu, uint64_t mask)
{
	uint64_t again = 0;
	int budget = cpu->budget > 0 ? cpu->budget : VNIC_NAPI_BUDGET;

	for (; mask; mask &= mask - 1) {
		struct vnic_poller *p = cpu->pollers[__builtin_ctzll(mask)];

		p->runs++;
		if (p->poll(p, budget) >= budget)
			again |= p->bit;
	}
	return again;
}

static bool stopping(struct vnic_cpu *cpu)
{
	return atomic_load_explicit(&cpu->stop, memory_order_seq_cst);
}

/*
 * Busy polling: a wake-up costs about 12 us on the target machines
 * (ARCHITECTURE.md section 5), so when work is likely to come back soon it
 * is cheaper to spin a little first. Returns true if work (or a stop, or a
 * due timer) showed up.
 */
static bool idle_spin(struct vnic_cpu *cpu, uint64_t next_timer)
{
	uint64_t now, end;

	if (!cpu->busy_poll_ns)
		return false;
	cpu->stats.busy_polls++;
	now = vnic_now_ns();
	end = now + cpu->busy_poll_ns;
	for (;;) {
		if (atomic_load_explicit(&cpu->pending, memory_order_relaxed) ||
		    atomic_load_explicit(&cpu->stop, memory_order_relaxed))
			return true;
		now = vnic_now_ns();
		if (next_timer && (int64_t)(now - next_timer) >= 0)
			return true;
		if ((int64_t)(now - end) >= 0)
			return false;
		cpu_relax();
	}
}

/*
 * The lost wake-up race. A scheduler does
 *     (S1) pending |= bit;      (S2) if (sleeping) wake;
 * and we do
 *     (C1) sleeping = 1;        (C2) if (pending) don't sleep;
 * All four are seq_cst, so they fall into one total order in which S1
 * precedes S2 and C1 precedes C2. Whichever of S1 and C1 comes first, either
 * C2 sees the bit (we stay up) or S2 sees sleeping (it wakes us): a plain
 * store/load pair could be reordered by the CPU (store buffering) and let
 * both miss. The same holds for stop. A wake that arrives between C2 and the
 * futex_wait finds sleeping already cleared by the waker (wake_cpu), so the
 * futex_wait returns at once.
 */
static void idle_sleep(struct vnic_cpu *cpu, uint64_t next_timer)
{
	atomic_store_explicit(&cpu->sleeping, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&cpu->pending, memory_order_seq_cst) || stopping(cpu)) {
		/* A waker that already claimed this sleep issued a wake for it. */
		if (!atomic_exchange_explicit(&cpu->sleeping, 0, memory_order_relaxed))
			cpu->stats.sleeps++;
		return;
	}
	cpu->stats.sleeps++;
	futex_wait_until(&cpu->sleeping, next_timer);
	atomic_store_explicit(&cpu->sleeping, 0, memory_order_relaxed);
	cpu->stats.wakeups = atomic_load_explicit(&cpu->wakeups_in, memory_order_relaxed);
}

static void *cpu_thread(void *arg)
{
	struct vnic_cpu *cpu = arg;
	uint64_t again = 0;

	while (!stopping(cpu)) {
		uint64_t next_timer, mask;

		cpu->stats.loops++;
		mask = again | take_pending(cpu) | due_timers(cpu, &next_timer);
		if (mask) {
			again = run_mask(cpu, mask);
			continue;
		}
		if (idle_spin(cpu, next_timer))
			continue;
		idle_sleep(cpu, next_timer);
	}
	/* Pollers that still wanted to run stay scheduled for a later start. */
	if (again)
		atomic_fetch_or_explicit(&cpu->pending, again, memory_order_relaxed);
	return NULL;
}

int vnic_cpu_start(struct vnic_cpu *cpu)
{
	pthread_t *th;
	char name[16];
	int err;

	if (!cpu)
		return -EINVAL;
	if (cpu->thread)
		return -EBUSY;
	th = malloc(sizeof(*th));
	if (!th)
		return -ENOMEM;
	atomic_store_explicit(&cpu->stop, 0, memory_order_relaxed);
	err = pthread_create(th, NULL, cpu_thread, cpu);
	if (err)
		goto err_free_thread;
	/* Truncated to the kernel's 15 characters; only for top and perf. */
	snprintf(name, sizeof(name), "%s", cpu->name);
	pthread_setname_np(*th, name);
	cpu->thread = th;
	return 0;

err_free_thread:
	free(th);
	return -err;
}

void vnic_cpu_stop(struct vnic_cpu *cpu)
{
	pthread_t *th;

	if (!cpu || !cpu->thread)
		return;
	th = cpu->thread;
	/* seq_cst store then wake_cpu(): the C1/C2 argument of idle_sleep(). */
	atomic_store_explicit(&cpu->stop, 1, memory_order_seq_cst);
	wake_cpu(cpu);
	pthread_join(*th, NULL);
	free(th);
	cpu->thread = NULL;
	atomic_store_explicit(&cpu->stop, 0, memory_order_relaxed);
	cpu->stats.wakeups = atomic_load_explicit(&cpu->wakeups_in, memory_order_relaxed);
}

unsigned int vnic_cpu_run_once(struct vnic_cpu *cpu)
{
	uint64_t next_timer, mask, again;

	cpu->stats.loops++;
	mask = take_pending(cpu) | due_timers(cpu, &next_timer);
	if (!mask)
		return 0;
	again = run_mask(cpu, mask);
	if (again)
		atomic_fetch_or_explicit(&cpu->pending, again, memory_order_relaxed);
	return (unsigned int)__builtin_popcountll(mask);
}

/* Nearest armed timer over all cpus, 0 if none. */
static uint64_t next_timer_of(struct vnic_cpu **cpus, unsigned int n)
{
	uint64_t next = 0;
	unsigned int c, i;

	for (c = 0; c < n; c++) {
		for (i = 0; i < cpus[c]->npollers; i++) {
			uint64_t d = cpus[c]->pollers[i]->deadline_ns;

			if (d && (!next || d < next))
				next = d;
		}
	}
	return next;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000ull),
		.tv_nsec = (long)(t % 1000000000ull),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * Idle in manual mode: wait for the nearest timer, in slices short enough
 * that a schedule from another thread (a started cpu, the test) is noticed
 * soon, since nothing wakes the calling thread.
 */
enum { MANUAL_IDLE_SLICE_NS = 100000, MANUAL_SPIN_NS = 20000 };

int vnic_cpus_run_until(struct vnic_cpu **cpus, unsigned int n, bool (*done)(void *ctx), void *ctx,
			uint64_t timeout_ns)
{
	uint64_t end = vnic_now_ns() + timeout_ns;

	for (;;) {
		unsigned int c, ran = 0;
		uint64_t now, target, next;

		if (done(ctx))
			return 0;
		for (c = 0; c < n; c++)
			ran += vnic_cpu_run_once(cpus[c]);
		now = vnic_now_ns();
		if ((int64_t)(now - end) >= 0)
			return done(ctx) ? 0 : -ETIMEDOUT;
		if (ran)
			continue;
		target = now + MANUAL_IDLE_SLICE_NS;
		next = next_timer_of(cpus, n);
		if (next && (int64_t)(next - target) < 0)
			target = next;
		if ((int64_t)(end - target) < 0)
			target = end;
		if ((int64_t)(target - now) <= 0)
			continue;
		if (target - now <= MANUAL_SPIN_NS)
			vnic_spin_ns(target - now);
		else
			sleep_until(target);
	}
}
