/* SPDX-License-Identifier: MIT */
/*
 * vnic_cpu: a thread that runs the pollers it owns and sleeps on a futex when
 * none has anything to do (docs/ARCHITECTURE.md section 4).
 *
 * Scheduling is one atomic OR into cpu->pending. The owner takes the whole
 * word with one exchange per loop, so a busy cpu is fed without any syscall;
 * the futex is touched only on the transition to sleep and by the one waker
 * that finds the cpu asleep.
 *
 * A cpu that owns fds (vnic_cpu_add_fd) sleeps in epoll_wait instead, and
 * its wakers write an eventfd instead of the futex; the protocol that
 * decides who must wake whom is the same (idle_sleep()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

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

/* ---- fd sources: the state behind cpu->fds ------------------------------- */

/* epoll data of the eventfd; the registered fds carry their table index. */
#define EFD_TAG UINT64_MAX

enum { FD_EVENTS_PER_WAIT = 16 };

struct fd_entry {
	int fd;
	uint32_t events;	/* watched now; 0 = not in the epoll set */
	bool by_run;		/* vnic_cpu_fd_look_by_run */
	bool by_src;		/* vnic_cpu_fd_look_by_src */
	struct vnic_poller *p;
};

/* Owner's thread only, except efd, which wakers write. */
struct vnic_cpu_fds {
	int epfd;
	int efd;
	unsigned int n;
	uint64_t ready;		/* pollers an epoll_wait found ready, not yet run */
	uint64_t next_poll_ns;	/* busy loop: next non-blocking look */
	bool look_owed;		/* a quiet busy turn's look, deferred (fds_take) */
	unsigned int probe_last; /* the entry a spin's look ran last (spin_look) */
	struct fd_entry ent[VNIC_CPU_MAX_FDS];
};

static void efd_wake(struct vnic_cpu_fds *fds)
{
	uint64_t one = 1;

	/* Only EAGAIN (counter at its maximum: already readable) can fail here. */
	if (write(fds->efd, &one, sizeof(one)) < 0)
		return;
}

/*
 * One look at the fds: waits at most until deadline_ns (0: do not wait;
 * UINT64_MAX: no deadline) and returns the pollers of the ready fds.
 * epoll_pwait2 takes the timeout in ns, so a timer is not rounded up to the
 * next millisecond.
 */
static uint64_t fds_wait(struct vnic_cpu *cpu, uint64_t deadline_ns)
{
	struct vnic_cpu_fds *fds = cpu->fds;
	struct epoll_event ev[FD_EVENTS_PER_WAIT];
	struct timespec ts, *tsp = &ts;
	uint64_t mask = 0;
	int n, i;

	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	if (deadline_ns == UINT64_MAX) {
		tsp = NULL;
	} else if (deadline_ns) {
		uint64_t now = vnic_now_ns();
		uint64_t rel = (int64_t)(deadline_ns - now) > 0 ? deadline_ns - now : 0;

		ts.tv_sec = (time_t)(rel / 1000000000ull);
		ts.tv_nsec = (long)(rel % 1000000000ull);
	}
	n = epoll_pwait2(fds->epfd, ev, FD_EVENTS_PER_WAIT, tsp, NULL);
	vnic_ctr_inc(&cpu->stats.fd_waits);
	if (!deadline_ns)
		vnic_ctr_inc(&cpu->stats.fd_looks);
	/* any look, the sleep's too, restarts the busy loop's interval and pays what is owed */
	fds->next_poll_ns = vnic_now_ns() + VNIC_CPU_FD_POLL_NS;
	fds->look_owed = false;
	/* the eventfd's event only ends the wait: edge-triggered, nothing to drain */
	for (i = 0; i < n; i++) {
		uint64_t idx = ev[i].data.u64;

		if (idx < fds->n)
			mask |= fds->ent[idx].p->bit;
	}
	return mask;
}

/*
 * The busy loop's look at the fds: what the last sleep or spin found, plus a
 * non-blocking epoll_wait while pollers keep the cpu busy. A busy turn owes
 * a look when it brings nothing new from other threads (pending empty: the
 * pollers run only their own leftovers or timers), so that an fd does not
 * wait behind them, and otherwise when VNIC_CPU_FD_POLL_NS have passed
 * since the last look of any kind, so a cpu that others keep scheduling
 * pays no syscall per packet and a turn woken from the sleep does not look
 * again.
 *
 * The owed look is taken at the start of the next busy turn, not before
 * the owing turn's own pollers run. So when the owing turn leaves the cpu
 * idle, the look is the epoll_wait it sleeps in, or its spin's first look:
 * one epoll_wait, not a look and then a sleep. That is the common case on
 * a request/response: a timer's turn after a sleep the timer ended, or
 * the last turn of a frame whose handling outlasted the interval (a
 * backing socket's send runs the receiving kernel's path inside it). A run
 * of busy turns still looks as often, each paying the one before.
 *
 * The look dropped at an idle loses no wake-up: the sleep sees, at once,
 * all it would have seen. A level-triggered fd still ready is reported; an
 * edge-triggered fd's edge (a backing's socket) stays queued in the epoll
 * instance until a wait reports it, and only a wait takes it; a schedule
 * from another thread during the turn leaves a bit in pending, which the
 * next turn takes or idle_sleep()'s C1/C2 check sees before the wait, or
 * its waker, having claimed the sleep, writes the eventfd, an edge that
 * ends the wait.
 */
static uint64_t fds_take(struct vnic_cpu *cpu, uint64_t busy, uint64_t pending)
{
	struct vnic_cpu_fds *fds = cpu->fds;
	uint64_t mask = fds->ready;

	fds->ready = 0;
	if (!busy)
		return mask;
	if (fds->look_owed)
		mask |= fds_wait(cpu, 0);
	if (!pending || (int64_t)(vnic_now_ns() - fds->next_poll_ns) >= 0)
		fds->look_owed = true;
	return mask;
}

/* Manual mode has no sleep to look in: every step looks. */
static uint64_t fds_take_now(struct vnic_cpu *cpu)
{
	uint64_t mask = cpu->fds->ready;

	cpu->fds->ready = 0;
	return mask | fds_wait(cpu, 0);
}

/* The cpu whose pollers this thread runs now: its own thread, or a manual step. */
static __thread struct vnic_cpu *running;

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
	/*
	 * cpu->fds was written before the cpu started, which happens before
	 * its thread announced the sleep we just claimed (seq_cst store and
	 * exchange synchronise), so this plain read is ordered.
	 */
	if (cpu->fds)
		efd_wake(cpu->fds);
	else
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
	atomic_init(&cpu->busy_poll_want, busy_poll_ns);
	atomic_init(&cpu->spin_mode_want, VNIC_CPU_SPIN_ADAPTIVE);
	atomic_init(&cpu->spin_change, 0);
	atomic_init(&cpu->tid, 0);
	cpu->name = name ? name : "vnic-cpu";
	cpu->busy_poll_ns = busy_poll_ns;
	vnic_cpu_set_spin(cpu, VNIC_CPU_SPIN_ADAPTIVE);
	cpu->budget = VNIC_NAPI_BUDGET;
	cpu->pin_core = -1;
	return 0;
}

int vnic_cpu_pin(struct vnic_cpu *cpu, int core)
{
	cpu_set_t allowed;

	if (!cpu || cpu->thread || core < -1 || core >= CPU_SETSIZE)
		return -EINVAL;
	if (core >= 0 && (sched_getaffinity(0, sizeof(allowed), &allowed) ||
			  !CPU_ISSET((unsigned int)core, &allowed)))
		return -EINVAL;
	cpu->pin_core = core;
	return 0;
}

unsigned int vnic_cpu_counters(const struct vnic_cpu *cpu, struct vnic_counter *out,
			       unsigned int max)
{
	const struct vnic_cpu_stats *st = &cpu->stats;
	const struct {
		const char *name;
		uint64_t value;
	} c[] = {
		{ "loops", vnic_ctr_read(&st->loops) },
		{ "sleeps", vnic_ctr_read(&st->sleeps) },
		{ "wakeups", atomic_load_explicit(&((struct vnic_cpu *)cpu)->wakeups_in,
						   memory_order_relaxed) },
		{ "busy_polls", vnic_ctr_read(&st->busy_polls) },
		{ "spin_hits", vnic_ctr_read(&st->spin_hits) },
		{ "work_ns", vnic_ctr_read(&st->work_ns) },
		{ "idle_ns", vnic_ctr_read(&st->idle_ns) },
		{ "spin_ns", vnic_ctr_read(&st->spin_ns) },
		{ "spin_limit_ns", vnic_ctr_read(&st->spin_limit_ns) },
		{ "spin_preempted", vnic_ctr_read(&st->spin_preempted) },
		{ "spin_ceded", vnic_ctr_read(&st->spin_ceded) },
		{ "spin_yields", vnic_ctr_read(&st->spin_yields) },
		{ "spin_handoffs", vnic_ctr_read(&st->spin_handoffs) },
		{ "fd_waits", vnic_ctr_read(&st->fd_waits) },
		{ "fd_looks", vnic_ctr_read(&st->fd_looks) },
		{ "fd_probes", vnic_ctr_read(&st->fd_probes) },
		{ "fd_probe_hits", vnic_ctr_read(&st->fd_probe_hits) },
	};
	unsigned int n = 0;

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		vnic_counter_put(out, max, &n, c[i].name, c[i].value);
	return n;
}

const char *vnic_cpu_spin_name(enum vnic_cpu_spin mode)
{
	switch (mode) {
	case VNIC_CPU_SPIN_ADAPTIVE:
		return "adaptive";
	case VNIC_CPU_SPIN_FIXED:
		return "fixed";
	}
	return "unknown";
}

/* The owner's side of a spin mode: what the next idle spins. */
static void spin_apply(struct vnic_cpu *cpu, enum vnic_cpu_spin mode)
{
	cpu->spin_mode = mode;
	/* Adaptive starts at the bottom: it has seen no idle yet. */
	cpu->spin_cur_ns = mode == VNIC_CPU_SPIN_FIXED ? cpu->busy_poll_ns : 0;
	cpu->spin_backoff_ns = 0;
	cpu->spin_clean = 0;
	vnic_ctr_set(&cpu->stats.spin_limit_ns, cpu->spin_cur_ns);
}

void vnic_cpu_set_spin(struct vnic_cpu *cpu, enum vnic_cpu_spin mode)
{
	atomic_store_explicit(&cpu->spin_mode_want, mode, memory_order_relaxed);
	spin_apply(cpu, mode);
}

void vnic_cpu_fini(struct vnic_cpu *cpu)
{
	if (!cpu)
		return;
	if (cpu->thread)
		vnic_cpu_stop(cpu);
	if (cpu->fds) {
		close(cpu->fds->epfd);
		close(cpu->fds->efd);
		free(cpu->fds);
		cpu->fds = NULL;
	}
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
 * The epoll instance and the eventfd, on the first fd of a cpu. The eventfd
 * is edge-triggered and never read: an eventfd wakes its waiters on every
 * write, so each write is a new edge even while the counter is non-zero,
 * and the owner saves the read a level-triggered one would need after every
 * wake-up. The counter would overflow (and a write fail) after 2^64 - 2
 * wake-ups: centuries at any rate a thread can wake.
 */
static int fds_create(struct vnic_cpu *cpu)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = EFD_TAG};
	struct vnic_cpu_fds *fds;
	int err;

	fds = calloc(1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	fds->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (fds->epfd < 0) {
		err = -errno;
		goto err_free;
	}
	fds->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fds->efd < 0) {
		err = -errno;
		goto err_close_epfd;
	}
	if (epoll_ctl(fds->epfd, EPOLL_CTL_ADD, fds->efd, &ev)) {
		err = -errno;
		goto err_close_efd;
	}
	cpu->fds = fds;
	return 0;

err_close_efd:
	close(fds->efd);
err_close_epfd:
	close(fds->epfd);
err_free:
	free(fds);
	return err;
}

static struct fd_entry *fd_find(struct vnic_cpu_fds *fds, int fd)
{
	unsigned int i;

	for (i = 0; fds && i < fds->n; i++)
		if (fds->ent[i].fd == fd)
			return &fds->ent[i];
	return NULL;
}

/* Registered fds are level-triggered on purpose: see "fd sources" in core.h. */
static int fd_apply(struct vnic_cpu_fds *fds, struct fd_entry *e, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)(e - fds->ent)};
	int op;

	if (events == e->events)
		return 0;
	/*
	 * Not watching means out of the set: epoll would report EPOLLHUP and
	 * EPOLLERR even with no events asked for.
	 */
	if (!events)
		op = EPOLL_CTL_DEL;
	else if (!e->events)
		op = EPOLL_CTL_ADD;
	else
		op = EPOLL_CTL_MOD;
	if (epoll_ctl(fds->epfd, op, e->fd, &ev))
		return -errno;
	e->events = events;
	return 0;
}

int vnic_cpu_add_fd(struct vnic_cpu *cpu, int fd, uint32_t events, struct vnic_poller *p)
{
	struct fd_entry *e;
	int err;

	if (!cpu || !p || p->cpu != cpu || fd < 0)
		return -EINVAL;
	if (cpu->thread)
		return -EBUSY;
	if (fd_find(cpu->fds, fd))
		return -EINVAL;
	if (cpu->fds && cpu->fds->n >= VNIC_CPU_MAX_FDS)
		return -ENOSPC;
	if (!cpu->fds) {
		err = fds_create(cpu);
		if (err)
			return err;
	}
	e = &cpu->fds->ent[cpu->fds->n];
	e->fd = fd;
	e->events = 0;
	e->by_run = false;
	e->by_src = false;
	e->p = p;
	err = fd_apply(cpu->fds, e, events);
	if (err)
		return err;
	cpu->fds->n++;
	return 0;
}

int vnic_cpu_fd_look_by_run(struct vnic_cpu *cpu, int fd)
{
	struct fd_entry *e = cpu ? fd_find(cpu->fds, fd) : NULL;

	if (!e)
		return -ENOENT;
	if (cpu->thread)
		return -EBUSY;
	e->by_run = true;
	return 0;
}

int vnic_cpu_fd_look_by_src(struct vnic_cpu *cpu, int fd)
{
	struct fd_entry *e = cpu ? fd_find(cpu->fds, fd) : NULL;
	const struct vnic_cpu_spin_src *src;

	if (!e)
		return -ENOENT;
	if (cpu->thread)
		return -EBUSY;
	for (src = cpu->spin_srcs; src; src = src->next)
		if (src->poller == e->p)
			break;
	if (!src)
		return -EINVAL;
	e->by_src = true;
	return 0;
}

int vnic_cpu_mod_fd(struct vnic_cpu *cpu, int fd, uint32_t events)
{
	struct fd_entry *e = cpu ? fd_find(cpu->fds, fd) : NULL;

	if (!e)
		return -ENOENT;
	return fd_apply(cpu->fds, e, events);
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

	/* the feeder's own field, a plain store: whom its next spin hands over to */
	if (running && running != cpu)
		running->handoff = cpu;
	if (atomic_fetch_or_explicit(&cpu->pending, p->bit, memory_order_seq_cst))
		return;
	wake_cpu(cpu);
}

void vnic_poller_set_timer(struct vnic_poller *p, uint64_t deadline_ns)
{
	p->deadline_ns = deadline_ns;
}

int vnic_cpu_add_spin_src(struct vnic_cpu *cpu, struct vnic_cpu_spin_src *src)
{
	if (!cpu || !src || !src->peek || !src->poller || src->poller->cpu != cpu)
		return -EINVAL;
	if (cpu->thread)
		return -EBUSY;
	src->next = cpu->spin_srcs;
	cpu->spin_srcs = src;
	return 0;
}

void vnic_cpu_spin_group_init(struct vnic_cpu_spin_group *g, unsigned int max)
{
	atomic_init(&g->spinning, 0);
	g->max = max;
}

int vnic_cpu_set_spin_group(struct vnic_cpu *cpu, struct vnic_cpu_spin_group *g)
{
	if (!cpu || !g)
		return -EINVAL;
	if (cpu->thread)
		return -EBUSY;
	cpu->spin_group = g;
	return 0;
}

/*
 * A place among the group's spinners, or false when all are taken. Relaxed:
 * the count only rations the spins; no data is handed over through it, and
 * a cpu that finds the group full sleeps by the usual protocol (idle_sleep),
 * so a stale count costs at most one spin or one sleep, never a lost wake-up.
 */
bool vnic_cpu_spin_group_enter(struct vnic_cpu_spin_group *g)
{
	uint32_t n = atomic_load_explicit(&g->spinning, memory_order_relaxed);

	while (n < g->max)
		if (atomic_compare_exchange_weak_explicit(&g->spinning, &n, n + 1,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	return false;
}

void vnic_cpu_spin_group_leave(struct vnic_cpu_spin_group *g)
{
	atomic_fetch_sub_explicit(&g->spinning, 1, memory_order_relaxed);
}

/* --- spin sources (struct vnic_cpu_spin_src) ------------------------------------------- */

static void srcs_polling(struct vnic_cpu *cpu, bool on)
{
	for (struct vnic_cpu_spin_src *src = cpu->spin_srcs; src; src = src->next)
		if (src->polling)
			src->polling(src, on);
	cpu->src_polling = on;
}

/* The pollers of the sources that have work: one shared load each. */
static uint64_t srcs_peek(struct vnic_cpu *cpu)
{
	uint64_t mask = 0;

	for (struct vnic_cpu_spin_src *src = cpu->spin_srcs; src; src = src->next)
		if (src->peek(src))
			mask |= src->poller->bit;
	return mask;
}

/*
 * Going to sleep: the sources' flags down, then one more look (the order
 * that makes a producer either see the flag down or have its word seen:
 * struct vnic_cpu_spin_src). True, and the work scheduled, if it found some.
 */
static bool srcs_stop(struct vnic_cpu *cpu)
{
	uint64_t mask;

	if (!cpu->src_polling)
		return false;
	srcs_polling(cpu, false);
	mask = srcs_peek(cpu);
	if (!mask)
		return false;
	atomic_fetch_or_explicit(&cpu->pending, mask, memory_order_relaxed);
	return true;
}

/* Takes every scheduled poller; the acquire pairs with the schedulers' OR. */
static uint64_t take_pending(struct vnic_cpu *cpu)
{
	uint64_t mask, m;

	if (!atomic_load_explicit(&cpu->pending, memory_order_relaxed))
		return 0;
	mask = atomic_exchange_explicit(&cpu->pending, 0, memory_order_acquire);
	for (m = mask; m; m &= m - 1)
		vnic_ctr_inc(&cpu->pollers[__builtin_ctzll(m)]->schedules);
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

		vnic_ctr_inc(&p->runs);
		if (p->poll(p, budget) >= budget)
			again |= p->bit;
	}
	return again;
}

static bool stopping(struct vnic_cpu *cpu)
{
	return atomic_load_explicit(&cpu->stop, memory_order_seq_cst);
}

uint64_t vnic_cpu_backoff_next(uint64_t cur, bool lost)
{
	if (lost) {
		cur = cur ? cur * 2 : VNIC_CPU_SPIN_BACKOFF_MIN_NS;
		return cur > VNIC_CPU_SPIN_BACKOFF_MAX_NS ? VNIC_CPU_SPIN_BACKOFF_MAX_NS : cur;
	}
	cur /= 2;
	return cur < VNIC_CPU_SPIN_BACKOFF_MIN_NS ? 0 : cur;
}

/*
 * The spin was preempted: something else wants this CPU, and every
 * microsecond spun is taken from it (often from the very thread whose
 * reply the spin waits for). Spinning also spends the scheduler's credit
 * that a sleeper gets back at its wake-up, the credit that lets a woken
 * thread run at once beside a CPU-bound one. So an adaptive spin rests,
 * and the cpu sleeps as soon as it is idle. One loss says little (a VM's
 * vCPU is descheduled now and then on an idle machine too, some ten times
 * a second here), so the rest is short and grows only as losses repeat.
 */
static void spin_contended(struct vnic_cpu *cpu, uint64_t now)
{
	vnic_ctr_inc(&cpu->stats.spin_preempted);
	if (cpu->spin_mode != VNIC_CPU_SPIN_ADAPTIVE)
		return;
	cpu->spin_backoff_ns = vnic_cpu_backoff_next(cpu->spin_backoff_ns, true);
	cpu->spin_clean = 0;
	cpu->spin_cur_ns = 0;
	cpu->spin_backoff_until = now + cpu->spin_backoff_ns;
	vnic_ctr_set(&cpu->stats.spin_limit_ns, 0);
}

/* A spin that kept the CPU: enough of them in a row and the rest shortens. */
static void spin_uncontended(struct vnic_cpu *cpu)
{
	if (!cpu->spin_backoff_ns || ++cpu->spin_clean < VNIC_CPU_SPIN_CLEAN_SPINS)
		return;
	cpu->spin_clean = 0;
	cpu->spin_backoff_ns = vnic_cpu_backoff_next(cpu->spin_backoff_ns, false);
}

/*
 * One yield of a spin, timed: the CPU it took counts as spin (idle) when it
 * came back at once, having run nobody else (a lone sched_yield is a
 * syscall of 0.3-2 us on a VM: uncounted, a spin that yields every 5 us
 * put a fifth of its CPU into the work figure). A yield that ran another
 * thread took at least two context switches and that thread's turn: our
 * thread was off the CPU, and none of it is ours. One that kept us off
 * longer than any spin step may, as a preempted step does, says the core
 * is contended. Returns the clock after.
 */
static uint64_t spin_yield(struct vnic_cpu *cpu, uint64_t now, uint64_t *burned,
			   bool *preempted)
{
	uint64_t after;

	sched_yield();
	after = vnic_now_ns();
	vnic_ctr_inc(&cpu->stats.spin_yields);
	if (after - now < VNIC_CPU_SPIN_YIELD_ALONE_NS)
		*burned += after - now;
	else if (after - now >= VNIC_CPU_SPIN_GAP_NS)
		*preempted = true;
	return after;
}

/*
 * The cpu this thread fed last (cpu->handoff) has not taken its work yet:
 * woken, it may be queued on this very core behind our spin. Looked at
 * once per feeding, VNIC_CPU_SPIN_HANDOFF_NS into the spin, when a peer
 * that spins on a core of its own has long taken it.
 */
static bool handoff_waits(struct vnic_cpu *cpu)
{
	struct vnic_cpu *h = cpu->handoff;

	cpu->handoff = NULL;
	return h && atomic_load_explicit(&h->pending, memory_order_relaxed);
}

/*
 * How a spin looks at the fds. The poller of an fd marked with
 * vnic_cpu_fd_look_by_run reads the fd itself (a TAP queue's readv) and
 * returns 0 when it found nothing, so running it is a look, and one that
 * holds the frame when it hits: one syscall where epoll_wait and then the
 * poller's read are two, and a syscall costs 1-1.5 us on the VMs vnic is
 * measured on (docs/BENCHMARKS.md, "Small messages"). A run looks at one
 * fd where epoll_wait looks at all, so the spin runs pollers only for up
 * to VNIC_CPU_FD_PROBE_MAX fds, and only when every watched fd is such an
 * fd, watched level-triggered for EPOLLIN alone: any other (a doorbell
 * whose poller does not say what it found) needs epoll_wait to be seen at
 * all. An fd marked with vnic_cpu_fd_look_by_src needs no look of its own:
 * its spin source is peeked on every turn of the spin, without a syscall
 * (a backing's edge-triggered socket, whose ring says what the socket
 * would), so it neither counts among the runs nor calls for epoll_wait.
 */
struct fd_probe {
	bool epoll;		/* looks by epoll_wait; else by running idx[] */
	unsigned int n, next;
	unsigned int idx[VNIC_CPU_FD_PROBE_MAX];
};

static bool probed(const struct fd_entry *e)
{
	return e->by_run && e->events == EPOLLIN;
}

/*
 * How a spin looks at the fds; none watched (or all seen by their spin
 * sources): no look at all. The turns go
 * on from the last spin's: a spin ends at the look that finds work, and
 * the next must not start with that fd again, or a busy one would keep
 * the others waiting.
 */
static void probe_set(const struct vnic_cpu_fds *fds, struct fd_probe *pr)
{
	unsigned int i;

	pr->n = 0;
	pr->next = 0;
	pr->epoll = false;
	for (i = 0; i < fds->n; i++) {
		if (!fds->ent[i].events || fds->ent[i].by_src)
			continue;
		if (!probed(&fds->ent[i]) || pr->n == VNIC_CPU_FD_PROBE_MAX) {
			pr->epoll = true;
			return;
		}
		if (i <= fds->probe_last)
			pr->next = pr->n + 1;
		pr->idx[pr->n++] = i;
	}
	if (pr->next >= pr->n)
		pr->next = 0;
}

/*
 * One look of a spin at the fds, at now: true when it found work, or ran a
 * poller that changed what the spin counts on (it stopped watching its fd,
 * or set a timer): the loop then takes it from there, and the next spin
 * starts from the new state. A run that did work is a work turn of its
 * own in the time accounts (*t_prev: the loop's last clock read).
 */
static bool spin_look(struct vnic_cpu *cpu, struct fd_probe *pr, uint64_t now, uint64_t *t_prev)
{
	struct vnic_cpu_fds *fds = cpu->fds;
	struct fd_entry *e;
	int budget, done;
	uint64_t after;

	if (pr->epoll) {
		fds->ready |= fds_wait(cpu, 0);
		return fds->ready != 0;
	}
	if (!pr->n)
		return false;
	fds->probe_last = pr->idx[pr->next];
	e = &fds->ent[fds->probe_last];
	pr->next = pr->next + 1 < pr->n ? pr->next + 1 : 0;
	budget = cpu->budget > 0 ? cpu->budget : VNIC_NAPI_BUDGET;
	vnic_ctr_inc(&cpu->stats.fd_probes);
	done = e->p->poll(e->p, budget);
	after = vnic_now_ns();
	/* a look like fds_wait's: the busy turns after a hit need none of their own */
	fds->next_poll_ns = after + VNIC_CPU_FD_POLL_NS;
	fds->look_owed = false;
	if (done > 0) {
		vnic_ctr_inc(&e->p->runs);
		vnic_ctr_inc(&cpu->stats.fd_probe_hits);
		vnic_ctr_add(&cpu->stats.idle_ns, now - *t_prev);
		vnic_ctr_add(&cpu->stats.work_ns, after - now);
		*t_prev = after;
	}
	/* more waiting: the loop runs it again, as for an epoll look */
	if (done >= budget)
		fds->ready |= e->p->bit;
	return done > 0 || e->p->deadline_ns || !probed(e);
}

/*
 * Busy polling: a wake-up costs 10-12 us on the 2-vCPU machines vnic is
 * measured on (docs/BENCHMARKS.md, "Reference figures"), so when work is
 * likely to come back soon it is cheaper to spin a little first. Returns
 * true if work (or a stop, or a due timer) showed up, or a look at the
 * fds did some (spin_look; *t_prev: as for account()).
 *
 * The spin hands its core over to a cpu it fed that has not run since
 * (handoff_waits): the scheduler often queues a woken thread on its
 * waker's core, and without a yield it would wait for our spin to end,
 * then reply to a cpu that had gone to sleep: two spins and two wake-ups
 * for one exchange, a state that sustains itself. Every
 * VNIC_CPU_SPIN_YIELD_NS it also yields to whoever else waits for this
 * core (another process's thread: a program in a namespace).
 */
static bool idle_spin(struct vnic_cpu *cpu, uint64_t next_timer, uint64_t *t_prev)
{
	uint64_t now, end, next_tick, next_yield, handoff_at, prev, tick, burned = 0;
	bool found = false, preempted = false;
	struct fd_probe probe = {0};

	if (!cpu->spin_cur_ns)
		return false;
	if (cpu->spin_group && !vnic_cpu_spin_group_enter(cpu->spin_group)) {
		vnic_ctr_inc(&cpu->stats.spin_ceded);
		return false;
	}
	vnic_ctr_inc(&cpu->stats.busy_polls);
	if (cpu->spin_srcs && !cpu->src_polling)
		srcs_polling(cpu, true);
	/* each fd looked at every VNIC_CPU_FD_SPIN_POLL_NS, by one run or all by one epoll_wait */
	if (cpu->fds)
		probe_set(cpu->fds, &probe);
	tick = VNIC_CPU_FD_SPIN_POLL_NS / (probe.n ? probe.n : 1);
	now = vnic_now_ns();
	end = now + cpu->spin_cur_ns;
	next_tick = now + tick;
	next_yield = now + VNIC_CPU_SPIN_YIELD_NS;
	handoff_at = now + VNIC_CPU_SPIN_HANDOFF_NS;
	for (;;) {
		if (atomic_load_explicit(&cpu->pending, memory_order_relaxed) ||
		    atomic_load_explicit(&cpu->stop, memory_order_relaxed)) {
			found = true;
			break;
		}
		if (cpu->src_polling) {
			uint64_t ready = srcs_peek(cpu);

			if (ready) {
				atomic_fetch_or_explicit(&cpu->pending, ready, memory_order_relaxed);
				found = true;
				break;
			}
		}
		prev = now;
		now = vnic_now_ns();
		/* A long step: we were off the CPU, not spinning. */
		if (now - prev < VNIC_CPU_SPIN_GAP_NS)
			burned += now - prev;
		else
			preempted = true;
		if (next_timer && (int64_t)(now - next_timer) >= 0) {
			found = true;
			break;
		}
		/* fds are looked at by syscall: not on every turn of the spin */
		if (cpu->fds && (int64_t)(now - next_tick) >= 0) {
			if (spin_look(cpu, &probe, now, t_prev)) {
				found = true;
				break;
			}
			next_tick = now + tick;
		}
		if (cpu->handoff && (int64_t)(now - handoff_at) >= 0 && handoff_waits(cpu)) {
			vnic_ctr_inc(&cpu->stats.spin_handoffs);
			now = spin_yield(cpu, now, &burned, &preempted);
			next_yield = now + VNIC_CPU_SPIN_YIELD_NS;
		}
		if ((int64_t)(now - next_yield) >= 0) {
			now = spin_yield(cpu, now, &burned, &preempted);
			next_yield = now + VNIC_CPU_SPIN_YIELD_NS;
		}
		if ((int64_t)(now - end) >= 0)
			break;
		vnic_cpu_relax();
	}
	if (cpu->spin_group)
		vnic_cpu_spin_group_leave(cpu->spin_group);
	vnic_ctr_add(&cpu->stats.spin_ns, burned);
	if (found)
		vnic_ctr_inc(&cpu->stats.spin_hits);
	if (preempted)
		spin_contended(cpu, now);
	else
		spin_uncontended(cpu);
	return found;
}

uint64_t vnic_cpu_work_cpu_ns(uint64_t work_ns, uint64_t thread_cpu_ns, uint64_t spin_ns)
{
	uint64_t busy = thread_cpu_ns > spin_ns ? thread_cpu_ns - spin_ns : 0;

	return work_ns < busy ? work_ns : busy;
}

uint64_t vnic_cpu_spin_next(uint64_t cur, uint64_t max, uint64_t slept_ns)
{
	if (slept_ns <= max) {
		cur = cur < VNIC_CPU_SPIN_GROW_START_NS ? VNIC_CPU_SPIN_GROW_START_NS : cur * 2;
		return cur > max ? max : cur;
	}
	cur /= 2;
	return cur < VNIC_CPU_SPIN_GROW_START_NS ? 0 : cur;
}

void vnic_cpu_set_busy_poll(struct vnic_cpu *cpu, uint64_t busy_poll_ns, enum vnic_cpu_spin mode)
{
	if (mode != VNIC_CPU_SPIN_FIXED)
		mode = VNIC_CPU_SPIN_ADAPTIVE;
	atomic_store_explicit(&cpu->busy_poll_want, busy_poll_ns, memory_order_relaxed);
	atomic_store_explicit(&cpu->spin_mode_want, mode, memory_order_relaxed);
	/*
	 * seq_cst, then a look for a sleeper: the C1/C2 argument of
	 * idle_sleep(), which looks at the flag before it sleeps. A sleeping
	 * cpu takes the values now, not at its next wake-up.
	 */
	atomic_store_explicit(&cpu->spin_change, 1, memory_order_seq_cst);
	wake_cpu(cpu);
}

void vnic_cpu_busy_poll(const struct vnic_cpu *cpu, uint64_t *busy_poll_ns,
			enum vnic_cpu_spin *mode)
{
	struct vnic_cpu *c = (struct vnic_cpu *)cpu;

	if (busy_poll_ns)
		*busy_poll_ns = atomic_load_explicit(&c->busy_poll_want, memory_order_relaxed);
	if (mode)
		*mode = atomic_load_explicit(&c->spin_mode_want, memory_order_relaxed);
}

/* The owner, out of work: a vnic_cpu_set_busy_poll posted since the last look. */
static void take_spin_change(struct vnic_cpu *cpu)
{
	enum vnic_cpu_spin mode;
	uint64_t max;

	if (vnic_likely(!atomic_load_explicit(&cpu->spin_change, memory_order_relaxed)))
		return;
	atomic_exchange_explicit(&cpu->spin_change, 0, memory_order_acquire);
	max = atomic_load_explicit(&cpu->busy_poll_want, memory_order_relaxed);
	mode = atomic_load_explicit(&cpu->spin_mode_want, memory_order_relaxed);
	cpu->busy_poll_ns = max;
	if (mode != cpu->spin_mode || mode == VNIC_CPU_SPIN_FIXED) {
		cpu->spin_backoff_until = 0;
		spin_apply(cpu, mode);
		return;
	}
	if (cpu->spin_cur_ns > max) {
		cpu->spin_cur_ns = max;
		vnic_ctr_set(&cpu->stats.spin_limit_ns, max);
	}
}

/* The adaptive spin after a sleep of slept_ns (vnic_cpu_spin_next), unless resting. */
static void spin_adapt(struct vnic_cpu *cpu, uint64_t slept_ns)
{
	uint64_t cur;

	if (cpu->spin_mode != VNIC_CPU_SPIN_ADAPTIVE)
		return;
	if (cpu->spin_backoff_until &&
	    (int64_t)(vnic_now_ns() - cpu->spin_backoff_until) < 0)
		return; /* contended not long ago: no spin yet */
	cpu->spin_backoff_until = 0;
	cur = vnic_cpu_spin_next(cpu->spin_cur_ns, cpu->busy_poll_ns, slept_ns);
	if (cur != cpu->spin_cur_ns) {
		cpu->spin_cur_ns = cur;
		vnic_ctr_set(&cpu->stats.spin_limit_ns, cur);
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
 *
 * A cpu with fds sleeps in epoll_wait, and the claimed wake is a write to
 * its eventfd instead of a FUTEX_WAKE. The argument above decides, as
 * before, that some waker claims the sleep whenever the sleeper could miss
 * its bit; what replaces "the futex word is already 0" for a wake landing
 * between C2 and epoll_wait is that the write queued an edge on the
 * eventfd that the epoll instance holds until a wait reports it, so that
 * epoll_wait returns at once. A wake claimed after we woke up for another
 * reason (an fd, the timer, a call-off) leaves that edge queued: the next
 * look returns it, one spurious return and no read.
 */
static void idle_sleep(struct vnic_cpu *cpu, uint64_t next_timer)
{
	uint64_t t0;

	if (srcs_stop(cpu))
		return;
	atomic_store_explicit(&cpu->sleeping, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&cpu->pending, memory_order_seq_cst) || stopping(cpu) ||
	    atomic_load_explicit(&cpu->spin_change, memory_order_seq_cst)) {
		/* A waker that already claimed this sleep issued a wake for it. */
		if (!atomic_exchange_explicit(&cpu->sleeping, 0, memory_order_relaxed))
			vnic_ctr_inc(&cpu->stats.sleeps);
		return;
	}
	vnic_ctr_inc(&cpu->stats.sleeps);
	t0 = vnic_now_ns();
	if (cpu->fds)
		cpu->fds->ready |= fds_wait(cpu, next_timer ? next_timer : UINT64_MAX);
	else
		futex_wait_until(&cpu->sleeping, next_timer);
	atomic_store_explicit(&cpu->sleeping, 0, memory_order_relaxed);
	vnic_ctr_set(&cpu->stats.wakeups,
		     atomic_load_explicit(&cpu->wakeups_in, memory_order_relaxed));
	/* A timer we set ourselves says nothing of how soon work comes back. */
	if (!next_timer || (int64_t)(vnic_now_ns() - next_timer) < 0)
		spin_adapt(cpu, vnic_now_ns() - t0);
}

struct vnic_cpu *vnic_cpu_self(void)
{
	return running;
}

int vnic_cpu_tid(const struct vnic_cpu *cpu)
{
	return atomic_load_explicit(&((struct vnic_cpu *)cpu)->tid, memory_order_relaxed);
}

/* One clock read per loop turn: the time since the last goes to work or idle. */
static void account(struct vnic_cpu *cpu, uint64_t *t_prev, bool worked)
{
	uint64_t now = vnic_now_ns();

	vnic_ctr_add(worked ? &cpu->stats.work_ns : &cpu->stats.idle_ns, now - *t_prev);
	*t_prev = now;
}

static void *cpu_thread(void *arg)
{
	struct vnic_cpu *cpu = arg;
	uint64_t again = 0, t = vnic_now_ns();

	running = cpu;
	atomic_store_explicit(&cpu->tid, (int)gettid(), memory_order_relaxed);
	/*
	 * A cpu's timers are deadlines of tens of microseconds (the device's
	 * interrupt coalescing, the cable's delay): the default 50 us slack of
	 * a timed sleep would stretch an 8 us one past 50 (docs/BENCHMARKS.md,
	 * "Interrupt coalescing").
	 */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	while (!stopping(cpu)) {
		uint64_t next_timer, mask, pending;

		vnic_ctr_inc(&cpu->stats.loops);
		pending = take_pending(cpu);
		mask = again | pending | due_timers(cpu, &next_timer);
		if (cpu->fds)
			mask |= fds_take(cpu, mask, pending);
		/* flag up since the last spin: producers count on this look */
		if (cpu->src_polling)
			mask |= srcs_peek(cpu);
		if (mask) {
			again = run_mask(cpu, mask);
			account(cpu, &t, true);
			continue;
		}
		cpu->idles++;
		take_spin_change(cpu);
		if (!idle_spin(cpu, next_timer, &t))
			idle_sleep(cpu, next_timer);
		account(cpu, &t, false);
	}
	/* producers must not count on a cpu that no longer looks */
	if (cpu->src_polling)
		srcs_polling(cpu, false);
	/* Pollers that still wanted to run stay scheduled for a later start. */
	if (again)
		atomic_fetch_or_explicit(&cpu->pending, again, memory_order_relaxed);
	return NULL;
}

int vnic_cpu_start(struct vnic_cpu *cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
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
	err = pthread_attr_init(&attr);
	if (err)
		goto err_free_thread;
	if (cpu->pin_core >= 0) {
		/* Set before the thread exists, so that it never runs elsewhere. */
		CPU_ZERO(&set);
		CPU_SET((unsigned int)cpu->pin_core, &set);
		err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (!err)
		err = pthread_create(th, &attr, cpu_thread, cpu);
	pthread_attr_destroy(&attr);
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
	vnic_ctr_set(&cpu->stats.wakeups,
		     atomic_load_explicit(&cpu->wakeups_in, memory_order_relaxed));
}

unsigned int vnic_cpu_run_once(struct vnic_cpu *cpu)
{
	uint64_t next_timer, mask, again;
	struct vnic_cpu *prev;

	vnic_ctr_inc(&cpu->stats.loops);
	take_spin_change(cpu);
	mask = take_pending(cpu) | due_timers(cpu, &next_timer);
	if (cpu->fds)
		mask |= fds_take_now(cpu);
	if (!mask) {
		cpu->idles++;
		return 0;
	}
	prev = running;
	running = cpu;
	again = run_mask(cpu, mask);
	running = prev;
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
