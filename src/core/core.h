/* SPDX-License-Identifier: MIT */
/*
 * src/core: the kernel-like netdev primitives the driver, the device and the
 * ports are built from. Public header of the layer.
 *
 *   cpu.c     vnic_cpu: one thread (or a manually stepped loop in tests) that
 *             runs pollers; sleeps only when nothing is scheduled; woken only
 *             by a schedule from another thread (the "interrupt").
 *   napi.c    vnic_napi: a poller with an interrupt source, budgeted poll,
 *             irq off while polling, complete-and-re-arm with the race closed.
 *   dql.c     vnic_dql: dynamic queue limits (docs/MECHANISMS.md section 1).
 *   dim.c     vnic_dim: dynamic interrupt moderation, net_dim's idea
 *             (docs/MECHANISMS.md section 9).
 *   cheaper.c vnic_cheaper: the cheaper of two ways of doing one thing,
 *             learned from their timed costs (docs/MECHANISMS.md section 10).
 *   txq.c     vnic_txq: BQL wrappers and queue stop/wake.
 *   place.c   vnic_place: two cpu threads apart on cores of their own while
 *             the machine is otherwise idle, the scheduler's otherwise.
 *   clock.c   monotonic ns clock and the cost model's busy wait.
 *   (inline)  the netdev boundary (host <-> NIC) and the wire boundary
 *             (device <-> cable or backing device).
 *
 * Execution model (docs/ARCHITECTURE.md section 4): everything that polls is a
 * struct vnic_poller owned by exactly one vnic_cpu. A poller runs only on its
 * cpu's thread, so its state needs no lock. Anything may *schedule* a poller
 * from any thread: that is an atomic bit set, plus a futex wake only when the
 * owning cpu is asleep. A busy cpu therefore costs no wake-ups.
 */
#ifndef VNIC_CORE_H
#define VNIC_CORE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "net/net.h"

#define VNIC_CACHELINE 64
#define vnic_cacheline_aligned __attribute__((aligned(VNIC_CACHELINE)))

#define vnic_likely(x) __builtin_expect(!!(x), 1)
#define vnic_unlikely(x) __builtin_expect(!!(x), 0)

/* A ThreadSanitizer build (-DVNIC_SANITIZE=thread): vnic_fence_on says why it matters. */
#if defined(__SANITIZE_THREAD__)
#define VNIC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VNIC_TSAN 1
#endif
#endif
#ifndef VNIC_TSAN
#define VNIC_TSAN 0
#endif

/*
 * The fence of a barrier helper: atomic_thread_fence(mo), where word is the
 * atomic the fence orders accesses around (the seqlock's count, the arm
 * word the other side reads). Every barrier goes through here, named for
 * what it pairs with (CONTRIBUTING.md, "The hot path").
 *
 * TSan models atomic operations but not fences, and GCC says so of a fence
 * under -fsanitize=thread (-Wtsan, an error here; with -O2, where the fence
 * is inlined into its caller). So in a TSan build the fence is a
 * read-modify-write of word with the same order that writes back what it
 * read: a locked instruction on x86, which orders every earlier load and
 * store before every later one as mfence does (the store->load fences still
 * close their races), and an acquire or release of word that TSan sees, as
 * the code's own accesses to word already make. Every other build fences,
 * unchanged.
 */
#if VNIC_TSAN
#define vnic_fence_on(word, mo) ((void)atomic_fetch_or_explicit((word), 0, (mo)))
#else
#define vnic_fence_on(word, mo) ((void)(word), atomic_thread_fence(mo))
#endif

/* The struct that embeds *ptr as its member. */
#define vnic_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* ---------------------------------------------------------------------------
 * Clock (clock.c)
 * ------------------------------------------------------------------------- */

/*
 * In a spin loop: on x86 "pause" lets the sibling hyperthread run and avoids
 * the memory-order mis-speculation penalty when the loop exits; "yield" is
 * the arm64 equivalent.
 */
static inline void vnic_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no syscall). */
uint64_t vnic_now_ns(void);
/* Spins for ns nanoseconds: the cost model's only way to spend time. */
void vnic_spin_ns(uint64_t ns);

/* ---------------------------------------------------------------------------
 * Pollers and cpus (cpu.c)
 * ------------------------------------------------------------------------- */

enum { VNIC_CPU_MAX_POLLERS = 64, VNIC_NAPI_BUDGET = 64 };

struct vnic_cpu;
struct vnic_poller;

/*
 * Runs on the owning cpu's thread. Returns the work done. A poller that
 * returns >= budget stays scheduled; one that returns less is descheduled and
 * must arrange its own next run (a schedule from an interrupt, a timer).
 */
typedef int (*vnic_poll_fn)(struct vnic_poller *p, int budget);

struct vnic_poller {
	vnic_poll_fn poll;
	struct vnic_cpu *cpu;
	uint64_t bit;		/* 1 << index on its cpu */
	uint64_t deadline_ns;	/* timer; 0 = none. Owner's thread only. */
	const char *name;
	uint64_t runs;		/* times polled */
	/*
	 * Schedules taken by the owner: several vnic_poller_schedule calls
	 * before one run count once. Counted on the owner's thread, so the
	 * scheduling side stays a single atomic OR.
	 */
	uint64_t schedules;
};

/*
 * How a cpu busy-polls when it runs out of work, before it sleeps.
 * ADAPTIVE (the default) spins as long as recent idles suggest work comes
 * back soon, between 0 and busy_poll_ns, the way KVM's halt polling sizes
 * its poll (Documentation/virt/kvm/halt-polling.rst): a sleep that ended
 * within busy_poll_ns would have been caught by spinning longer, so the
 * spin grows (doubles, from VNIC_CPU_SPIN_GROW_START_NS); a sleep that
 * outlasted it shows spinning did not pay, so the spin halves, to 0 below
 * the start. A spin that loses the CPU (another thread wants it) stops
 * spinning for a while: from VNIC_CPU_SPIN_BACKOFF_MIN_NS, doubled by each
 * spin that loses it again, up to VNIC_CPU_SPIN_BACKOFF_MAX_NS, and halved
 * after VNIC_CPU_SPIN_CLEAN_SPINS spins in a row that kept it
 * (vnic_cpu_backoff_next). FIXED always spins busy_poll_ns.
 */
enum vnic_cpu_spin {
	VNIC_CPU_SPIN_ADAPTIVE = 0,
	VNIC_CPU_SPIN_FIXED,
};

/* "adaptive", "fixed"; "unknown" for any other value. */
const char *vnic_cpu_spin_name(enum vnic_cpu_spin mode);

struct vnic_cpu_stats {
	uint64_t loops;
	/*
	 * Sleeps announced (sleeping set) and not called off by the cpu itself
	 * before a waker claimed them. Each sleep is claimed by at most one
	 * waker, so wakeups <= sleeps.
	 */
	uint64_t sleeps;
	uint64_t wakeups;	/* futex wakes issued by others (copy of wakeups_in) */
	uint64_t busy_polls;	/* idle loops spent spinning before a sleep */
	uint64_t spin_hits;	/* of those, spins that found work before the end */
	/*
	 * Where the thread's time went, one clock read per loop turn: work_ns
	 * in turns that ran pollers, idle_ns in turns that found none (spin,
	 * yields and sleep, the syscalls of going to sleep and waking up
	 * included), both wall clock. spin_ns is the CPU the spins burned:
	 * their clock steps, a step longer than VNIC_CPU_SPIN_GAP_NS counted
	 * as time off the CPU (preempted), not as spin, and their yields that
	 * ran nobody else (VNIC_CPU_SPIN_YIELD_ALONE_NS). Each bounds the
	 * thread's work CPU from above: work_ns unless the thread lost its
	 * CPU inside a work turn, its CPU time minus spin_ns unless its idle
	 * turns burned CPU outside the spin (sleep and wake-up). A report
	 * takes the smaller (vnic_cpu_work_cpu_ns).
	 */
	uint64_t work_ns;
	uint64_t idle_ns;
	uint64_t spin_ns;
	uint64_t spin_limit_ns;	/* the adaptive spin now (busy_poll_ns when fixed) */
	uint64_t spin_preempted; /* spins that lost the CPU: contention */
	uint64_t spin_ceded;	/* idles that slept at once: their spin group was full */
	uint64_t spin_yields;	/* sched_yields of the spins, handoffs included */
	uint64_t spin_handoffs;	/* of those, to a cpu this one fed that had not run yet */
	uint64_t fd_waits;	/* epoll_waits of a cpu with fds: sleeps and looks */
	uint64_t fd_looks;	/* of those, the looks: busy turns', spins', manual steps' */
	uint64_t fd_probes;	/* a spin's looks at an fd by running its poller */
	uint64_t fd_probe_hits;	/* of those, runs that did work (read a frame) */
};

struct vnic_cpu {
	/* written by any thread */
	_Atomic uint64_t pending vnic_cacheline_aligned;
	_Atomic uint32_t sleeping;	/* futex word: 1 while asleep or about to */
	_Atomic uint32_t stop;
	/* owner's thread only */
	struct vnic_poller *pollers[VNIC_CPU_MAX_POLLERS] vnic_cacheline_aligned;
	unsigned int npollers;
	uint64_t busy_poll_ns;	/* spin at most this long with nothing to do before sleeping */
	enum vnic_cpu_spin spin_mode;
	uint64_t spin_cur_ns;	/* the spin of the next idle */
	uint64_t spin_backoff_until; /* adaptive: no spin before this (contention) */
	uint64_t spin_backoff_ns;    /* adaptive: the rest after the next lost spin, 0 none */
	unsigned int spin_clean;     /* spins that kept the CPU since the last that lost it */
	uint64_t idles;		     /* turns that found nothing to run: vnic_cpu_idles */
	int budget;
	const char *name;
	struct vnic_cpu_stats stats;
	_Atomic uint64_t wakeups_in;	/* counted by the wakers */
	/*
	 * vnic_cpu_set_busy_poll, any thread: the values wanted, and a flag the
	 * owner looks at when it runs out of work (never in a busy loop).
	 */
	_Atomic uint64_t busy_poll_want;
	_Atomic uint32_t spin_mode_want;
	_Atomic uint32_t spin_change;
	void *thread;			/* pthread_t *, opaque here */
	_Atomic int tid;		/* the thread's kernel id once it runs, else 0 */
	int pin_core;			/* vnic_cpu_pin: the one core it runs on, or -1 */
	/*
	 * fd sources (see "fd sources" at the end of this header). NULL for a
	 * cpu without fds: it sleeps on the futex as before. Written before
	 * start only.
	 */
	struct vnic_cpu_fds *fds;
	/*
	 * Spin sources (vnic_cpu_add_spin_src): written before start, then
	 * owner's thread only. src_polling: the sources were told we poll.
	 */
	struct vnic_cpu_spin_src *spin_srcs;
	bool src_polling;
	struct vnic_cpu_spin_group *spin_group;	/* set before start; NULL: spins alone */
	/*
	 * Owner's thread only: the other cpu its pollers last scheduled, until
	 * its next spin has looked whether that cpu took the work (idle_spin).
	 */
	struct vnic_cpu *handoff;
};

/*
 * Cpus that spin on the cores their own traffic's programs need (vnic
 * link's two sides and the programs in the two namespaces, on a few
 * cores): at most max of them spin at once, the others sleep as soon as
 * they are idle (counter spin_ceded). Spinning saves a wake-up only to the
 * cpu that spins; a second spinner saves the other side's, but takes a
 * core the endpoints wait for (docs/BENCHMARKS.md, "Small messages").
 * One atomic per idle, none per packet.
 */
struct vnic_cpu_spin_group {
	_Atomic uint32_t spinning;
	uint32_t max;
};

/*
 * A spin source: work another process (or the kernel) signals by a word in
 * shared memory, which a busy-polling cpu looks at on every turn instead of
 * waiting for that process's eventfd write (the split transport's
 * doorbells, hv/shm.c) or for the kernel to wake a socket (an AF_PACKET
 * ring's status words or an AF_XDP ring's producer index, port/fd_irq.c:
 * vnic_fd_irq_spin_init).
 * The cpu calls polling(true) before the first turn of a spin and
 * polling(false) just before it sleeps, each followed by a seq_cst look
 * (peek) on the cpu's side: the source stores its flag seq_cst, its
 * producer sets its word and then loads the flag, both seq_cst, so either
 * the producer sees the flag down and writes the eventfd, or the look after
 * polling(false) sees the word (idle_sleep in cpu.c). While the flag is up
 * the cpu peeks on every loop turn, busy or spinning: one shared load, no
 * syscall. A peek that finds work schedules poller. polling may be NULL
 * for a producer that wakes the cpu's fd whatever the cpu does (the kernel
 * filling an AF_PACKET ring): there is no flag to raise, only the peeks.
 */
struct vnic_cpu_spin_src {
	void (*polling)(struct vnic_cpu_spin_src *src, bool on);
	bool (*peek)(struct vnic_cpu_spin_src *src);
	struct vnic_poller *poller;
	struct vnic_cpu_spin_src *next;		/* the cpu's list */
};

enum {
	VNIC_CPU_SPIN_GROW_START_NS = 2000,	/* the first adaptive spin after none */
	VNIC_CPU_SPIN_GAP_NS = 20000,		/* a spin step this long was off the CPU */
	VNIC_CPU_SPIN_YIELD_NS = 5000,		/* a spinning cpu yields this often */
	VNIC_CPU_SPIN_YIELD_ALONE_NS = 3000,	/* a yield this short ran nobody else */
	VNIC_CPU_SPIN_HANDOFF_NS = 1000,	/* into a spin: has the cpu it fed run? */
	VNIC_CPU_SPIN_CLEAN_SPINS = 8,		/* spins kept in a row that halve the rest */
};
/*
 * After a spin lost the CPU, adaptive spinning rests: 1 ms after a lone
 * loss (a VM's vCPU is descheduled now and then on an idle machine too),
 * up to 50 ms when a CPU-bound neighbour takes it spin after spin.
 */
#define VNIC_CPU_SPIN_BACKOFF_MIN_NS 1000000ull
#define VNIC_CPU_SPIN_BACKOFF_MAX_NS 50000000ull

/* 0 or -errno. busy_poll_ns 0 = sleep as soon as idle. Adaptive spin. */
int vnic_cpu_init(struct vnic_cpu *cpu, const char *name, uint64_t busy_poll_ns);
/* Before start: how to spin (enum vnic_cpu_spin). */
void vnic_cpu_set_spin(struct vnic_cpu *cpu, enum vnic_cpu_spin mode);
/*
 * Before start: the thread runs on that core only (-1: wherever the
 * scheduler puts it, the default). 0, or -EINVAL when the process may not
 * run there (sched_getaffinity) or the cpu has started.
 */
int vnic_cpu_pin(struct vnic_cpu *cpu, int core);
/*
 * Before start: src is looked at while the cpu busy-polls (struct
 * vnic_cpu_spin_src); its poller must be one of the cpu's, its peek set,
 * its polling set or NULL. 0 or -EINVAL/-EBUSY.
 */
int vnic_cpu_add_spin_src(struct vnic_cpu *cpu, struct vnic_cpu_spin_src *src);
/* Setup: a group in which at most max cpus spin at once (max 0: none spins). */
void vnic_cpu_spin_group_init(struct vnic_cpu_spin_group *g, unsigned int max);
/*
 * Before start: cpu spins only while its group has room. The group
 * outlives the cpus in it. 0, or -EINVAL (NULL) / -EBUSY (cpu started).
 */
int vnic_cpu_set_spin_group(struct vnic_cpu *cpu, struct vnic_cpu_spin_group *g);
/*
 * Any thread (a cpu's idle_spin, before and after its spin): takes one of
 * g's max places and returns true, or returns false when all are taken;
 * leave gives a taken place back.
 */
bool vnic_cpu_spin_group_enter(struct vnic_cpu_spin_group *g);
void vnic_cpu_spin_group_leave(struct vnic_cpu_spin_group *g);
/*
 * Any thread, any time: a new busy-poll limit and spin mode. The owner
 * takes them the next time it runs out of work, before it spins (a cpu in a
 * busy loop pays nothing); a manual step takes them at its start. A mode
 * change starts the spin over as vnic_cpu_set_spin does; an adaptive spin
 * that keeps its mode is cut to the new limit and adapts from there. The
 * counter spin_limit_ns shows the result. mode outside the enum: adaptive.
 */
void vnic_cpu_set_busy_poll(struct vnic_cpu *cpu, uint64_t busy_poll_ns, enum vnic_cpu_spin mode);
/* Any thread: the busy-poll limit and spin mode last asked for (init, set_spin or set_busy_poll). */
void vnic_cpu_busy_poll(const struct vnic_cpu *cpu, uint64_t *busy_poll_ns,
			enum vnic_cpu_spin *mode);
/*
 * The adaptive rule, pure: the spin after one that was cur, when the sleep
 * that followed it lasted slept_ns and the spin may be at most max.
 */
uint64_t vnic_cpu_spin_next(uint64_t cur, uint64_t max, uint64_t slept_ns);
/*
 * The contention rule, pure: the rest after a lost spin, when it was cur
 * and the spin now ended lost (doubles, from the minimum, to the maximum)
 * or was the VNIC_CPU_SPIN_CLEAN_SPINS-th kept in a row (halves, to 0
 * below the minimum). Any other spin leaves it as it is.
 */
uint64_t vnic_cpu_backoff_next(uint64_t cur, bool lost);
/*
 * Work CPU of a cpu thread over an interval, pure: the smaller of its two
 * upper bounds (struct vnic_cpu_stats), the wall clock of its work turns
 * (work_ns) and its CPU time less its spin (thread_cpu_ns - spin_ns, 0 if
 * the spin's clock steps came to more).
 */
uint64_t vnic_cpu_work_cpu_ns(uint64_t work_ns, uint64_t thread_cpu_ns, uint64_t spin_ns);
struct vnic_counter;
/*
 * The cpu's counters (loops, sleeps, wakeups, busy_polls, spin_hits,
 * work_ns, idle_ns, spin_ns, spin_limit_ns, spin_preempted, spin_ceded,
 * spin_yields, spin_handoffs, fd_waits, fd_looks, fd_probes, fd_probe_hits) in the shape of the
 * layers' counter functions: fills up to max, returns how many there are. Any thread.
 */
unsigned int vnic_cpu_counters(const struct vnic_cpu *cpu, struct vnic_counter *out,
			       unsigned int max);
void vnic_cpu_fini(struct vnic_cpu *cpu);
/* Before start only. 0 or -ENOSPC. */
int vnic_cpu_add(struct vnic_cpu *cpu, struct vnic_poller *p, const char *name, vnic_poll_fn poll);
/*
 * Any thread: make p run soon; wakes its cpu if asleep. Release: what the
 * caller wrote before is visible to the poll it causes.
 */
void vnic_poller_schedule(struct vnic_poller *p);
/*
 * Owner's thread (or before start): run p once at (or after) deadline_ns, on
 * the vnic_now_ns() clock. One shot: disarmed when it fires. 0 cancels.
 */
void vnic_poller_set_timer(struct vnic_poller *p, uint64_t deadline_ns);
/* Starts the thread. 0 or -errno. */
int vnic_cpu_start(struct vnic_cpu *cpu);
/*
 * The cpu whose pollers the calling thread is running (its thread, or a
 * manual step of vnic_cpu_run_once); NULL on any other thread. For
 * same-cpu contracts (struct vnic_txq) to be checked, not for datapath
 * decisions.
 */
struct vnic_cpu *vnic_cpu_self(void);
/*
 * Any thread: the kernel's id of the cpu's thread (its /proc/self/task
 * entry, for the placement's look at its run queue wait), or 0 before the
 * thread has run.
 */
int vnic_cpu_tid(const struct vnic_cpu *cpu);
/*
 * A poller of cpu, on its thread: how many turns of the loop have found
 * nothing to run (each then spun, slept or, in manual mode, returned 0). Two
 * readings tell whether the cpu went idle in between: the TAP reader learns
 * from it whether a frame came while the cpu was still busy.
 */
static inline uint64_t vnic_cpu_idles(const struct vnic_cpu *cpu)
{
	return cpu->idles;
}
/* Asks the thread to stop and joins it. Pollers still scheduled stay so. */
void vnic_cpu_stop(struct vnic_cpu *cpu);
/*
 * Manual mode (tests, setup before threads start): runs every scheduled and
 * due poller once on the calling thread. Returns the pollers run. Never call
 * on a started cpu.
 */
unsigned int vnic_cpu_run_once(struct vnic_cpu *cpu);
/*
 * Manual mode: steps all cpus until done(ctx) returns true or timeout_ns
 * passes. 0, or -ETIMEDOUT. When nothing is runnable it waits for the
 * nearest timer (in slices of at most 100 us, so that schedules from other
 * threads are seen), never past the timeout.
 */
int vnic_cpus_run_until(struct vnic_cpu **cpus, unsigned int n, bool (*done)(void *ctx), void *ctx,
			uint64_t timeout_ns);

/* ---------------------------------------------------------------------------
 * Parking (park.c): a control poller that shares state with pollers on other
 * cpus (queue pairs on cpus of their own, docs/ARCHITECTURE.md section 4.2)
 * has those cpus wait between two of their polls while it works, instead of
 * a lock on their datapath. The driver's and the device's control pollers
 * both do; one park at a time in the process (a token), so two control
 * pollers that each park the other's cpu never wait for each other.
 * ------------------------------------------------------------------------- */

enum { VNIC_PARK_MAX_CPUS = 16 }; /* as many as queue pairs (proto.h VNIC_MAX_QUEUES) */

struct vnic_park_cpu {
	struct vnic_poller poller;
	struct vnic_cpu *cpu;
	_Atomic uint32_t state;
	_Atomic uintptr_t runner; /* the thread that last ran the poller */
};

/*
 * The cpus other than home among those given at init, each with a park
 * poller. parks and retries are written by home's thread (vnic_ctr_*).
 */
struct vnic_park {
	struct vnic_cpu *home;
	struct vnic_park_cpu cpu[VNIC_PARK_MAX_CPUS];
	unsigned int n;
	uint64_t parks;	  /* control polls that parked the other cpus */
	uint64_t retries; /* tried again: a cpu late, or another park in progress */
};

/*
 * Setup, before the cpus start: a park poller (named name) on every distinct
 * cpu of cpus[0..n) other than home (NULL entries are home). 0, or -ENOSPC
 * (no poller slot; the pollers already added stay registered, as with any
 * create that fails after vnic_cpu_add), -EINVAL (more than
 * VNIC_PARK_MAX_CPUS other cpus).
 */
int vnic_park_init(struct vnic_park *pk, struct vnic_cpu *home, struct vnic_cpu *const *cpus,
		   unsigned int n, const char *name);
/*
 * Home's thread: every other cpu waits between two of its polls until
 * vnic_unpark. 0 (also with no other cpu), or -EAGAIN: one did not park in
 * time (5 ms), or another park in the process is in progress; none waits,
 * try again on the next turn. A cpu last run by the calling thread (manual
 * mode) is not asked: nothing runs beside us there.
 */
int vnic_park(struct vnic_park *pk);
/* Ends a vnic_park that returned 0. */
void vnic_unpark(struct vnic_park *pk);

/* ---------------------------------------------------------------------------
 * NAPI (napi.c)
 * ------------------------------------------------------------------------- */

struct vnic_napi;

/*
 * The interrupt source a NAPI instance masks while it polls: the hv sub-CRQ
 * interrupt for a driver queue, the wire's notification for a device engine.
 *
 * Ordering contract: enable publishes the arm with (at least) a release
 * store; NAPI puts a full store->load fence between enable and pending, so
 * that a producer that publishes work, fences, and finds the source
 * disarmed is always caught by the pending check. The producer side fences
 * itself (the hv's irq_armed, the cable's should_notify).
 */
struct vnic_irq_ops {
	void (*enable)(void *ctx);
	void (*disable)(void *ctx);
	bool (*pending)(void *ctx);	/* work visible right now? */
};

/*
 * Runs on the owning cpu with SCHED held and the interrupt masked. budget is
 * the napi's weight. Returns the work done, at most budget:
 *   - budget: more work remains; the napi stays scheduled and is polled
 *     again without the interrupt being re-armed.
 *   - less: done. The core then calls vnic_napi_complete_done() right after
 *     the poll returns; the poll function does not have to. It may call it
 *     itself (Linux style, e.g. to re-arm before a last look), and then the
 *     core does not repeat it. After completing, the poll function must not
 *     touch the napi: it may already be scheduled again.
 * A napi whose poller is run by its timer takes SCHED (masking the
 * interrupt) before the poll, as an interrupt would.
 */
typedef int (*vnic_napi_poll_fn)(struct vnic_napi *napi, int budget);

struct vnic_napi_stats {
	uint64_t polls;
	uint64_t work;		/* sum of returned work */
	uint64_t full_polls;	/* polls that used the whole budget */
	uint64_t completes;	/* complete-and-re-arm calls */
	uint64_t rearm_races;	/* work found right after re-arming: rescheduled */
	uint64_t irqs;		/* vnic_napi_schedule calls that took the schedule */
};

struct vnic_napi {
	struct vnic_poller poller;
	vnic_napi_poll_fn poll;
	const struct vnic_irq_ops *irq;
	void *irq_ctx;
	_Atomic uint32_t state;		/* VNIC_NAPI_SCHED */
	int weight;
	struct vnic_napi_stats stats;
};

enum { VNIC_NAPI_SCHED = 1 };

/*
 * Registers the napi's poller on cpu (before the cpu starts). weight 0 =
 * VNIC_NAPI_BUDGET. irq may be NULL (a napi run only by schedules and
 * timers). It does not touch the interrupt: arming it is the caller's job.
 * 0 or -EINVAL, -ENOSPC, -EBUSY (cpu started).
 */
int vnic_napi_init(struct vnic_napi *napi, struct vnic_cpu *cpu, const char *name,
		   vnic_napi_poll_fn poll, const struct vnic_irq_ops *irq, void *irq_ctx, int weight);
/*
 * The interrupt handler's call (any thread): if not already scheduled, masks
 * the interrupt and schedules the poll. Returns true if it took the schedule.
 */
bool vnic_napi_schedule(struct vnic_napi *napi);
/*
 * Owner's thread, once per poll that did less than its budget (called by the
 * core after the poll returns, or by the poll function itself): clears SCHED,
 * re-enables the interrupt, then checks pending() once more and reschedules
 * if work slipped in between the last look and the re-arm (the
 * napi_complete_done race; counted in rearm_races). A full barrier separates
 * enable() from pending(); the interrupt source needs the mirror image on
 * its producer side (publish, barrier, read "armed").
 */
void vnic_napi_complete_done(struct vnic_napi *napi, int work);

/* ---------------------------------------------------------------------------
 * DQL / BQL (dql.c), following docs/MECHANISMS.md section 1
 * ------------------------------------------------------------------------- */

struct vnic_dql {
	/* enqueue side: written by xmit */
	uint32_t num_queued vnic_cacheline_aligned;
	uint32_t adj_limit;	/* limit + num_completed */
	uint32_t last_obj_cnt;
	/* completion side: written by tx completion */
	uint32_t limit vnic_cacheline_aligned;
	uint32_t num_completed;
	uint32_t prev_ovlimit;
	uint32_t prev_num_queued;
	uint32_t prev_last_obj_cnt;
	uint32_t lowest_slack;
	uint64_t slack_start_time_ns;
	/* configuration */
	uint32_t max_limit;
	uint32_t min_limit;
	uint64_t slack_hold_time_ns;
};

enum {
	VNIC_DQL_MAX_OBJECT = UINT32_MAX / 16,
	VNIC_DQL_MAX_LIMIT = (UINT32_MAX / 2) - (UINT32_MAX / 16),
};

/*
 * hold_time_ns: the hysteresis window (Linux: HZ, 1 s). Starts the window at
 * vnic_now_ns(); code on a simulated clock calls vnic_dql_reset with its own
 * time afterwards. Limit starts at 0: the first enqueue is over the limit.
 */
void vnic_dql_init(struct vnic_dql *dql, uint64_t hold_time_ns);
/* limit = min_limit, counters 0 (adj_limit too), hold window starts at now_ns. */
void vnic_dql_reset(struct vnic_dql *dql, uint64_t now_ns);
/* count <= VNIC_DQL_MAX_OBJECT. */
void vnic_dql_queued(struct vnic_dql *dql, uint32_t count);
/* Bytes that may still be queued; negative when over the limit. */
static inline int32_t vnic_dql_avail(const struct vnic_dql *dql)
{
	return (int32_t)(dql->adj_limit - dql->num_queued);
}
/*
 * One completion interval: count bytes finished since the last call. Call
 * once per completion round, not per entry (docs/MECHANISMS.md section 1). A
 * count above what is in flight is cut to it.
 */
void vnic_dql_completed(struct vnic_dql *dql, uint32_t count, uint64_t now_ns);
/*
 * Any thread (the counters read it; the writer stores these fields with
 * relaxed atomics). num_completed is read first: it never passes
 * num_queued, so a num_queued read after it is usually at least as new. A
 * reader can still see a negative difference (a reset zeroing both between
 * the two loads; relaxed loads reordered on a weakly ordered cpu): that is
 * clamped to 0 rather than reported as 4 GiB in flight.
 */
static inline uint32_t vnic_dql_inflight(const struct vnic_dql *dql)
{
	uint32_t completed = __atomic_load_n(&dql->num_completed, __ATOMIC_RELAXED);
	uint32_t queued = __atomic_load_n(&dql->num_queued, __ATOMIC_RELAXED);

	return (int32_t)(queued - completed) < 0 ? 0 : queued - completed;
}

/* ---------------------------------------------------------------------------
 * Dynamic interrupt moderation (dim.c), docs/MECHANISMS.md section 9
 * ------------------------------------------------------------------------- */

/*
 * Walks a table of moderation profiles, cheapest in latency first (index
 * 0), by what each step did to the rates of one queue: a step that raised
 * the byte rate (or, bytes even, the packet rate; or, both even, lowered
 * the interrupt rate) is followed by another the same way; one that did
 * not is taken back, and the walk parks there (or at either end of the
 * table) until the rates move away from where it parked, after a rest that
 * grows with each step in a row taken back. The same idea as Linux's net_dim
 * (https://docs.kernel.org/networking/net_dim.html), written from that
 * description. Pure: no clock, no threads; the caller owns it.
 */
enum vnic_dim_tune {
	VNIC_DIM_PARKED = 0, /* on the profile a step back confirmed: moves when rates change */
	VNIC_DIM_UP = 1,     /* towards more moderation (higher index) */
	VNIC_DIM_DOWN = 2,   /* towards less */
};

enum vnic_dim_limits {
	VNIC_DIM_SAMPLE_EVENTS = 64,   /* interrupts per measurement */
	VNIC_DIM_SIGNIFICANT_PCT = 10, /* a rate change smaller than this is "the same" */
	VNIC_DIM_MAX_PROFILES = 8,
	VNIC_DIM_REST_MAX = 64, /* measurements a park sits out at most */
};

/* Cumulative counts at one instant: the caller's counters, as they are. */
struct vnic_dim_sample {
	uint64_t ns;
	uint64_t pkts;
	uint64_t bytes;
	uint64_t events; /* interrupts raised */
};

/* Rates over one measurement, per millisecond. */
struct vnic_dim_rates {
	uint64_t ppms, bpms, epms;
};

struct vnic_dim {
	struct vnic_dim_sample start; /* where the measurement began */
	struct vnic_dim_rates prev;   /* what the next is compared with */
	unsigned int nprof;	      /* profiles in the table, 2..VNIC_DIM_MAX_PROFILES */
	unsigned int prof;	      /* the profile in force */
	enum vnic_dim_tune tune;
	unsigned int steps_up, steps_down; /* since the walk started */
	unsigned int rest, rest_next;	   /* measurements to sit out parked; the next rest */
	bool measuring;
	uint64_t moves; /* profile changes */
	uint64_t samples;
};

/* Starts at profile 0, walking up, with no measurement: the first sample starts one. */
void vnic_dim_init(struct vnic_dim *dim, unsigned int nprof);
/*
 * One look at the counters (after each interrupt the queue raised). Once
 * VNIC_DIM_SAMPLE_EVENTS interrupts have passed since the measurement began,
 * decides and starts the next. true when dim->prof changed.
 */
bool vnic_dim_update(struct vnic_dim *dim, const struct vnic_dim_sample *now);
/* The decision alone, on rates already measured (tests drive it directly). */
bool vnic_dim_decide(struct vnic_dim *dim, const struct vnic_dim_rates *cur);

/* ---------------------------------------------------------------------------
 * The cheaper of two ways (cheaper.c), docs/MECHANISMS.md section 10
 * ------------------------------------------------------------------------- */

/*
 * Two ways of doing the same thing (A and B: a direct and an indirect
 * send), each with a smoothed cost per use and a smoothed deviation of
 * its samples from it, learned from the uses the caller times. The way in
 * use changes only when the other has been cheaper by more than
 * 1/2^VNIC_CHEAPER_MARGIN_SHIFT plus both deviations at VNIC_CHEAPER_HOLD
 * of its samples in a row (hysteresis: noise inside the margin never
 * flips it, and a boundary whose costs scatter widely needs a difference
 * wider than the scatter). The other way is tried once per probe period,
 * which starts at VNIC_CHEAPER_PROBE_MIN uses and doubles at each probe
 * that agrees with the way in use, up to VNIC_CHEAPER_PROBE_MAX: a
 * settled verdict costs a probe in thousands of uses. It falls back to
 * VNIC_CHEAPER_PROBE_MIN at a probe that disagrees, at a switch, and when
 * the estimate of the way in use moves from where it stood at the last
 * probe by more than its deviation plus the margin: a boundary that
 * changes is watched closely again. Only one use in VNIC_CHEAPER_TIME_EVERY
 * of the way in use is timed, and every probe: the caller reads its clock
 * for those alone. Pure: no clock, no threads; the caller owns it. A
 * zeroed struct is ready: way A in use, nothing learned.
 */
enum vnic_cheaper_way {
	VNIC_CHEAPER_A = 0,
	VNIC_CHEAPER_B = 1,
};

enum vnic_cheaper_limits {
	VNIC_CHEAPER_FRAC = 4,		/* estimates are ns << FRAC */
	VNIC_CHEAPER_WEIGHT_SHIFT = 2,	/* each sample moves the estimate 1/4 of the way */
	VNIC_CHEAPER_CAP = 4,		/* a sample counts for at most 4x the estimate */
	VNIC_CHEAPER_MARGIN_SHIFT = 3,	/* "cheaper": by more than 1/8 */
	VNIC_CHEAPER_HOLD = 3,		/* probe samples in a row that must agree */
	VNIC_CHEAPER_PROBE_MIN = 64,	/* uses of the way in use per probe, watching */
	VNIC_CHEAPER_PROBE_MAX = 4096,	/* ... and settled: six agreeing probes double it there */
	VNIC_CHEAPER_TIME_EVERY = 16,	/* uses of the way in use per timed one (a power of 2) */
};

/* What vnic_cheaper_pick says about the use it chose. */
enum {
	VNIC_CHEAPER_TIMED = 1 << 0, /* time it and hand the time to vnic_cheaper_sample */
	VNIC_CHEAPER_PROBE = 1 << 1, /* it tries the way not in use */
};

struct vnic_cheaper {
	uint32_t uses;	 /* of the way in use since the last probe */
	uint32_t period; /* uses per probe; 0 until both ways have a cost */
	uint32_t way;	 /* the way in use */
	uint32_t ahead;	 /* probe samples in a row that found the other way cheaper */
	uint64_t est[2]; /* ns per use << VNIC_CHEAPER_FRAC; 0 before the first sample */
	uint64_t dev[2]; /* mean deviation of the samples from est, same unit */
	uint64_t ref;	 /* est of the way in use at the last probe */
};

/* vnic_cheaper_pick for a probe, a learning use or a timed one. */
enum vnic_cheaper_way vnic_cheaper_pick_slow(struct vnic_cheaper *c, unsigned int *flags);
/*
 * The way for the next use, and in *flags whether to time it and whether
 * it is a probe. Inline: on a settled boundary all but one use in
 * VNIC_CHEAPER_TIME_EVERY take only the first branch, an add and two
 * compares on the caller's hot path.
 */
static inline enum vnic_cheaper_way vnic_cheaper_pick(struct vnic_cheaper *c, unsigned int *flags)
{
	uint32_t uses = ++c->uses;

	if (vnic_likely(uses < c->period && uses % VNIC_CHEAPER_TIME_EVERY)) {
		*flags = 0;
		return (enum vnic_cheaper_way)c->way;
	}
	return vnic_cheaper_pick_slow(c, flags);
}
/*
 * A timed use of way took ns (the caller's clock, any unit as long as it
 * is always the same). true when this sample made the other way the one
 * in use.
 */
bool vnic_cheaper_sample(struct vnic_cheaper *c, enum vnic_cheaper_way way, uint64_t ns);
/* The smoothed cost of way, rounded to the unit of the samples; 0 before its first. */
static inline uint64_t vnic_cheaper_cost(const struct vnic_cheaper *c, enum vnic_cheaper_way way)
{
	return (c->est[way] + (1u << (VNIC_CHEAPER_FRAC - 1))) >> VNIC_CHEAPER_FRAC;
}

/* ---------------------------------------------------------------------------
 * TX queue state: BQL wrappers and stop/wake (txq.c)
 * ------------------------------------------------------------------------- */

enum {
	VNIC_TXQ_DRV_XOFF = 1 << 0,	/* driver: ring full */
	VNIC_TXQ_STACK_XOFF = 1 << 1,	/* BQL: over the byte limit */
};

struct vnic_txq;
/* Called when a stopped queue becomes usable again (the qdisc's re-run). */
typedef void (*vnic_txq_wake_fn)(void *ctx, struct vnic_txq *txq);

/*
 * Contract: xmit and the tx completion of one queue run on the same cpu (the
 * queue's owner), as ndo_start_xmit and NAPI tx reclaim serialise in Linux;
 * so the DQL needs no atomics, and the stop/wake sequence needs no barrier
 * and re-check of room (the netif_tx_stop_queue race needs two threads).
 * Debug builds assert it: every call but vnic_txq_stopped, made from a
 * cpu's thread, must come from owner (set it after init; NULL: unchecked).
 * A driver that completes on another cpu must first make the DQL fields
 * atomic and add the stop, full barrier, re-check, wake sequence.
 * state is atomic because a port may read it from another thread to stop
 * reading its source.
 */
struct vnic_txq {
	struct vnic_dql dql;
	_Atomic uint32_t state;
	const struct vnic_cpu *owner;
	bool bql_enabled;
	vnic_txq_wake_fn wake;
	void *wake_ctx;
	uint64_t stops;		/* DRV_XOFF transitions */
	uint64_t bql_stops;	/* STACK_XOFF transitions */
	uint64_t wakes;
};

/* DQL hold time 1 s, as Linux. wake may be NULL. */
void vnic_txq_init(struct vnic_txq *txq, bool bql, vnic_txq_wake_fn wake, void *wake_ctx);
static inline bool vnic_txq_stopped(const struct vnic_txq *txq)
{
	return atomic_load_explicit(&((struct vnic_txq *)txq)->state, memory_order_acquire) != 0;
}
/*
 * __netdev_tx_sent_queue: account bytes to BQL. With xmit_more the limit is
 * not checked (never stop mid-batch) and the return is "queue is stopped";
 * without, BQL may stop the queue and the return is true. The return value
 * means "ring the doorbell now".
 */
bool vnic_txq_sent(struct vnic_txq *txq, uint32_t bytes, bool xmit_more);
/*
 * Once per completion round: report to BQL, wake if BQL allows it now (clears
 * STACK_XOFF; wake is called only if DRV_XOFF is clear too). 0 bytes: no-op.
 * No-op without BQL.
 */
void vnic_txq_completed(struct vnic_txq *txq, uint32_t pkts, uint32_t bytes, uint64_t now_ns);
/* Ring full: stop (DRV_XOFF). */
void vnic_txq_stop(struct vnic_txq *txq);
/* Ring has room again: clear DRV_XOFF and call wake if nothing else holds it. */
void vnic_txq_wake(struct vnic_txq *txq);
/*
 * Ring flushed without completions (close, reset): clear all, reset DQL. If
 * the queue was stopped, wake is called (counted in wakes), since no later
 * call could produce that wake; a driver not ready to send yet stops the
 * queue again or refuses in xmit.
 */
void vnic_txq_reset(struct vnic_txq *txq, uint64_t now_ns);
/*
 * Owner's cpu, between two xmits: BQL on or off at run time. Off clears
 * STACK_XOFF (waking the queue if nothing else holds it); on starts the DQL
 * from its minimum limit, and completions of bytes sent before are cut to
 * what it saw queued (vnic_dql_completed), so the limit settles within a
 * few rounds.
 */
void vnic_txq_set_bql(struct vnic_txq *txq, bool on, uint64_t now_ns);

/* ---------------------------------------------------------------------------
 * Counters: how every layer exposes its statistics to reports and `vnic stats`.
 *
 * Counters are per-queue fields written by one thread, with relaxed atomic
 * stores (vnic_ctr_*: a plain load and store, no read-modify-write, no lock
 * prefix); a reader on another thread uses relaxed loads and may see a
 * slightly stale value. Each object exports them through a function
 *   unsigned int vnic_<x>_counters(const struct vnic_<x> *, struct vnic_counter *out,
 *                                  unsigned int max);
 * that fills up to max entries and returns how many it has in all. Names are
 * ethtool -S style: per-queue ones carry the queue ("tx0_direct_packets",
 * "rx1_replenish_calls"), drops carry their reason ("tx0_drop_bad_ioba").
 * ------------------------------------------------------------------------- */

enum { VNIC_COUNTER_NAME_MAX = 64 };

struct vnic_counter {
	char name[VNIC_COUNTER_NAME_MAX];
	uint64_t value;
};

/*
 * One entry of a counters function: written at out[*n] while it fits in
 * max, counted either way, so that the caller learns how many there are.
 */
static inline void vnic_counter_put(struct vnic_counter *out, unsigned int max, unsigned int *n,
				    const char *name, uint64_t value)
{
	if (*n < max) {
		snprintf(out[*n].name, sizeof(out[*n].name), "%s", name);
		out[*n].value = value;
	}
	(*n)++;
}

/* The entry named name among c[0..n), or NULL: a lookup for reports, not a hot path. */
static inline const struct vnic_counter *vnic_counter_find(const struct vnic_counter *c, unsigned int n,
							  const char *name)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return &c[i];
	return NULL;
}

/*
 * How "plain" is written: a counter (and every other field a counters
 * function reads, such as a ring cursor, a negotiated size or a state) is
 * stored by its one writer with a relaxed atomic store and read by anyone
 * with a relaxed atomic load. With a single writer no read-modify-write is
 * needed: vnic_ctr_add is a relaxed load, an add and a relaxed store, which
 * on x86 compile to the plain mov/add/mov of `x += n` (no lock prefix).
 * What it buys is a defined reader: no torn value, no data race for the
 * compiler to exploit, and a ThreadSanitizer that stays silent without
 * suppressions. A reader still sees a value that may be a little stale,
 * and two counters read one after the other are not a snapshot. Always
 * inlined: GCC otherwise makes an out-of-line call of vnic_ctr_add in a
 * large function (the device's tx_one), a call per counter per packet.
 */
static inline __attribute__((always_inline)) void vnic_ctr_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void vnic_ctr_inc(uint64_t *c)
{
	vnic_ctr_add(c, 1);
}

static inline __attribute__((always_inline)) void vnic_ctr_set(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) uint64_t vnic_ctr_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* 32-bit fields (ring occupancy, free counts, DQL bytes): wrap as uint32_t does. */
static inline __attribute__((always_inline)) void vnic_ctr_add32(uint32_t *c, uint32_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void vnic_ctr_sub32(uint32_t *c, uint32_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) - n, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void vnic_ctr_set32(uint32_t *c, uint32_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) uint32_t vnic_ctr_read32(const uint32_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * Any other scalar a counters function reports (an enum state, a bool flag,
 * an unsigned int): the same relaxed store by its writer and relaxed load by
 * readers, for any type.
 */
#define vnic_ctr_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define vnic_ctr_load(p)     __atomic_load_n((p), __ATOMIC_RELAXED)

/* ---------------------------------------------------------------------------
 * The netdev boundary: what a host stack sees of a NIC.
 *
 * A host (built-in workload, TAP port) attaches to a netdev and calls xmit;
 * the NIC calls back into the host through vnic_host_ops. The driver
 * implements the netdev; the host never sees the driver's internals, so a
 * workload can run over any NIC (and tests can run it over a loopback netdev).
 * ------------------------------------------------------------------------- */

enum vnic_tx_status {
	VNIC_TX_OK = 0,		/* taken: the packet now belongs to the NIC */
	VNIC_TX_BUSY = 1,	/* queue stopped: the packet is still the caller's */
};

/* Features a NIC offers its host (derived from what the device negotiated). */
enum vnic_netdev_features {
	VNIC_NETIF_F_CSUM = 1 << 0,	/* tx checksum offload (PARTIAL accepted) */
	VNIC_NETIF_F_TSO4 = 1 << 1,
	VNIC_NETIF_F_TSO6 = 1 << 2,
	VNIC_NETIF_F_USO = 1 << 3,
	VNIC_NETIF_F_RXCSUM = 1 << 4,
};

/* Status passed to tx_done. */
enum vnic_tx_done_status {
	VNIC_TX_DONE_OK = 0,
	VNIC_TX_DONE_DROPPED = 1,	/* the device refused it, or a reset flushed it */
};

struct vnic_host_ops {
	/*
	 * NAPI delivery, on the rx queue's cpu: pkts[0..n) are the host's now
	 * (it frees them to their pool). Aggregates carry GSO metadata.
	 */
	void (*rx)(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n);
	/*
	 * The bytes of one transmitted packet stop counting against the sender:
	 * at tx completion, or at xmit when the driver orphans. cookie is
	 * pkt->priv as it was at xmit. On the tx queue's cpu.
	 */
	void (*tx_done)(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes, int status);
	/* A stopped tx queue takes packets again. On the tx queue's cpu. */
	void (*tx_wake)(void *ctx, unsigned int queue);
	/* tx_done and tx_wake may be NULL: a host that does not follow its sends. */
	uint32_t features; /* VNIC_HOST_F_*: what the host can take in rx */
};

enum {
	/* rx may hand up GRO aggregates whose payload is in fragments (vnic_pkt frags) */
	VNIC_HOST_F_FRAGLIST = 1u << 0,
};

struct vnic_netdev;

struct vnic_netdev_ops {
	/*
	 * ndo_start_xmit. Must run on vnic_netdev_tx_cpu(dev, queue). With
	 * xmit_more the NIC may hold the packet in a batch until a call without
	 * it (or a full batch). Returns enum vnic_tx_status; after VNIC_TX_OK
	 * the caller must not touch pkt again.
	 */
	int (*xmit)(struct vnic_netdev *dev, unsigned int queue, struct vnic_pkt *pkt,
		    bool xmit_more);
	bool (*tx_stopped)(struct vnic_netdev *dev, unsigned int queue);
	/*
	 * Optional. The pool the host's packets for tx queue `queue` come
	 * from, so that the NIC may send from a packet's own buffer instead
	 * of copying it (the DMA mapping of a Linux driver, done once for the
	 * whole pool, as a page_pool or an AF_XDP UMEM is). Setup only: before
	 * the NIC is opened, from the thread that sets it up. The pool must
	 * outlive the NIC, and the NIC may free packets into it on the tx
	 * queue's cpu (the pool's thread) when their transmission completes.
	 * 0, -EOPNOTSUPP, -EBUSY (open), or the NIC's mapping error.
	 */
	int (*tx_pool)(struct vnic_netdev *dev, unsigned int queue,
		       const struct vnic_pkt_pool *pool);
};

struct vnic_netdev {
	const struct vnic_netdev_ops *ops;
	void *priv;			/* the implementation's state */
	const char *name;
	unsigned int num_tx_queues;
	unsigned int num_rx_queues;
	uint32_t mtu;			/* L3 MTU */
	uint32_t features;		/* VNIC_NETIF_F_* */
	uint32_t gso_max_size;
	uint8_t mac[6];
	struct vnic_cpu *tx_cpu[16];	/* the cpu each tx queue runs on */
	struct vnic_cpu *rx_cpu[16];
	const uint8_t *rss_key;		/* the host hashes flows with it to pick a tx queue */
	/* set by the host with vnic_netdev_attach */
	const struct vnic_host_ops *host;
	void *host_ctx;
};

/* Before traffic starts. */
static inline void vnic_netdev_attach(struct vnic_netdev *dev, const struct vnic_host_ops *host,
				      void *ctx)
{
	dev->host = host;
	dev->host_ctx = ctx;
}
static inline struct vnic_cpu *vnic_netdev_tx_cpu(const struct vnic_netdev *dev, unsigned int q)
{
	return dev->tx_cpu[q];
}
static inline int vnic_netdev_xmit(struct vnic_netdev *dev, unsigned int q, struct vnic_pkt *pkt,
				   bool xmit_more)
{
	return dev->ops->xmit(dev, q, pkt, xmit_more);
}
/* struct vnic_netdev_ops.tx_pool, or -EOPNOTSUPP where the NIC has none. */
static inline int vnic_netdev_tx_pool(struct vnic_netdev *dev, unsigned int q,
				      const struct vnic_pkt_pool *pool)
{
	return dev->ops->tx_pool ? dev->ops->tx_pool(dev, q, pool) : -EOPNOTSUPP;
}
/* The tx queue for a flow hash, as XPS/RSS would pick it: stable per flow. */
static inline unsigned int vnic_netdev_pick_tx(const struct vnic_netdev *dev, uint32_t hash)
{
	return dev->num_tx_queues > 1 ? hash % dev->num_tx_queues : 0;
}

/* ---------------------------------------------------------------------------
 * The wire boundary: what a device transmits onto and receives from.
 *
 * Implemented by src/port (in-process cable, AF_PACKET backing). Frames live
 * in slots the wire owns, so no buffer ever changes threads: the device tx
 * engine reserves slots, writes frames into them (segmenting straight into
 * them) and commits; the device rx engine peeks ready frames, copies each
 * into a posted rx buffer and releases them. One producer (a device tx
 * engine) and one consumer (the peer's rx engine) per direction.
 * ------------------------------------------------------------------------- */

struct vnic_wire;

struct vnic_wire_ops {
	/* Up to n empty slots (reset packets with frame_size of room). */
	unsigned int (*tx_reserve)(struct vnic_wire *w, struct vnic_pkt **slots, unsigned int n);
	/* Sends slots[0..n) (the first n reserved, in order); unsent reserved
	 * slots are given back. Frames longer than the MTU are dropped and counted. */
	void (*tx_commit)(struct vnic_wire *w, struct vnic_pkt **slots, unsigned int n,
			  unsigned int reserved);
	/* Up to n frames ready for the receiver, oldest first. */
	unsigned int (*rx_peek)(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n);
	/* The first n peeked frames are done with. */
	void (*rx_release)(struct vnic_wire *w, unsigned int n);
	/*
	 * When the next frame in flight becomes ready (a delayed or
	 * rate-limited wire), in vnic_now_ns() time; 0 if none is in flight.
	 * The receiver sets a poller timer for it instead of being notified.
	 */
	uint64_t (*rx_next_ns)(struct vnic_wire *w);
	/*
	 * Optional, for a wire between two devices that can carry a TSO
	 * superframe whole (the cable with cable-tso; gso_max_size stays 0):
	 * the largest superframe the wire takes from this end now, 0 while the
	 * receiver at the other end takes MTU frames only. Called by the
	 * sending device's tx engine (the producer), per superpacket.
	 */
	uint32_t (*tx_gso_max)(struct vnic_wire *w);
	/*
	 * Optional, with rx_gso_max_size: the receiving device says it takes
	 * superframes up to max from now on (its driver negotiated large
	 * receive), or none (0: a reset). Any thread; the sender sees it at its
	 * next superpacket, so one already on the line may still arrive, and
	 * is the receiver's to drop.
	 */
	void (*rx_gso_take)(struct vnic_wire *w, uint32_t max);
	/* The receiver's notification: armed while it sleeps (an irq source). */
	const struct vnic_irq_ops *rx_irq;
};

struct vnic_wire {
	const struct vnic_wire_ops *ops;
	void *priv;
	uint32_t mtu;			/* largest L3 packet carried */
	uint32_t frame_size;		/* largest frame a slot holds (mtu + L2) */
	/*
	 * 0: the wire carries frames of the MTU only. Otherwise it also takes a
	 * superframe up to this many bytes in one slot (slots are that large),
	 * with GSO metadata (gso_type, gso_size, headers parsed): the wire, or
	 * the kernel behind it, segments. What such a wire receives is MTU
	 * frames.
	 */
	uint32_t gso_max_size;
	/*
	 * 0: what this wire hands a receiving device is MTU frames. Otherwise
	 * it may also hand it a superframe up to this many bytes, in one slot
	 * with its GSO metadata (gso_type, gso_size, gso_segs, the header
	 * lengths), once the device said it takes them (ops->rx_gso_take). The
	 * device checks all of it: the sender is another device.
	 */
	uint32_t rx_gso_max_size;
	/*
	 * false: every byte of a committed slot is in the slot. true (a wire
	 * with gso_max_size that sends within tx_commit, AF_PACKET): a
	 * superframe's slot may hold its headers alone and chain its payload
	 * by reference, as a fraglist aggregate does (net.h: frags, frag_len,
	 * one packet whose data is the payload). The wire reads that payload
	 * only inside tx_commit and never writes it, so the sending device may
	 * leave it in its driver's buffer, which stays the driver's until the
	 * tx completion the device sends after the commit.
	 */
	bool tx_frags;
	/* set by the receiving device: called when a frame arrives while armed */
	void (*notify)(void *ctx);
	void *notify_ctx;
};

/* ---------------------------------------------------------------------------
 * Tracing (trace.c): hit count and inclusive time per datapath function, per
 * call path, and the USDT probes. docs/TRACING.md has the how-to.
 *
 * Core provides the mechanism only: the layer that owns a function declares
 * its trace point, an object of static storage (never on the stack), named
 * as reports print it:
 *	struct vnic_trace_point tp_xmit = VNIC_TRACE_POINT("xmit");
 * and puts a begin/end pair around the function body or a call:
 *	uint64_t t0 = vnic_trace_begin(&tp_xmit);
 *	...
 *	vnic_trace_end(&tp_xmit, t0);
 * Off (the default), begin is a relaxed load of one global flag and a branch
 * predicted not taken, and returns 0; end only tests t0, which is in a
 * register (a second never-taken branch, no memory access). Because end
 * goes by t0 and not by the flag, enabling or disabling between a begin
 * and its end is safe (the pair is recorded whole or not at all).
 * begin(NULL) records nothing and returns 0: a call site that traces only
 * under some condition passes it otherwise.
 *
 * The first begin of a point with tracing on gives the point one of
 * VNIC_TRACE_SLOTS slots (under a mutex, once per point for the life of the
 * process: a reset forgets the records, not the slots). A point that finds
 * no slot left is not recorded (counted as lost). Reports and consumers go
 * by name, so two points must not share one.
 *
 * On, each thread records into its own table: a single writer, no lock, no
 * atomic read-modify-write. A per-thread stack of the active points (at
 * most VNIC_TRACE_DEPTH deep) makes the key the whole call path, so the
 * report nests every callee under the caller it was really called from
 * ("napi_poll > gro_receive > deliver") and times are inclusive of
 * callees. Reports sum the tables of all threads (those that exited too).
 *
 * Clock: rdtsc on x86-64, calibrated against CLOCK_MONOTONIC when tracing
 * is enabled; clock_gettime(CLOCK_MONOTONIC) elsewhere.
 * ------------------------------------------------------------------------- */

struct vnic_trace_point {
	const char *name;	/* as reports print it: "xmit" */
	/*
	 * Core's: 0 until the point is first traced, then its slot + 1, or
	 * VNIC_TRACE_NO_SLOT when none was left. Set under the registry's
	 * mutex, read with atomics.
	 */
	uint8_t slot;
};

#define VNIC_TRACE_POINT(point_name) { .name = (point_name), .slot = 0 }

enum {
	VNIC_TRACE_DEPTH = 8,	/* deeper points are not recorded (counted as lost) */
	VNIC_TRACE_PATHS = 128,	/* distinct call paths per thread, likewise */
	VNIC_TRACE_SLOTS = 32,	/* distinct points per process, likewise */
	VNIC_TRACE_NO_SLOT = 0xff,
};

/* The flag begin reads. Written only by vnic_trace_enable. */
extern _Atomic bool vnic_trace_active;

/* Out of line, tracing on: push tp on this thread's stack, return its start (never 0). */
uint64_t vnic_trace_begin_slow(struct vnic_trace_point *tp);
/* Out of line: pop tp, add one hit and the time since t0 to its path. */
void vnic_trace_end_slow(const struct vnic_trace_point *tp, uint64_t t0);

static inline uint64_t vnic_trace_begin(struct vnic_trace_point *tp)
{
	if (vnic_unlikely(atomic_load_explicit(&vnic_trace_active, memory_order_relaxed)))
		return vnic_trace_begin_slow(tp);
	return 0;
}

/* Any thread; t0 is what the matching begin on this thread returned. */
static inline void vnic_trace_end(const struct vnic_trace_point *tp, uint64_t t0)
{
	if (vnic_unlikely(t0))
		vnic_trace_end_slow(tp, t0);
}

/*
 * Any thread, setup path. Enabling calibrates the clock (about 2 ms of
 * spinning on x86-64). Disabling stops new begins; pairs already begun
 * still end and are recorded. Records are kept until vnic_trace_reset.
 */
void vnic_trace_enable(bool on);
/*
 * Any thread: forget everything recorded. Exact between runs; a thread
 * tracing at that moment drops its table on its next begin, and reports
 * skip it until then.
 */
void vnic_trace_reset(void);

/*
 * One call path: the point, the caller it was called from and the totals
 * over every thread. Rows come depth first (a caller before its callees,
 * siblings in name order, so that the order does not depend on which
 * thread traced first); paths without hits are left out.
 */
struct vnic_trace_row {
	const struct vnic_trace_point *point;
	const char *name;	/* point->name */
	const char *parent;	/* the caller's name; "" at the top */
	int parent_row;		/* the caller's row; -1 at the top */
	unsigned int depth;	/* 0 at the top */
	uint64_t hits;
	uint64_t total_ns;	/* inclusive of callees */
	uint64_t avg_ns;	/* total_ns / hits */
};

/*
 * Fills up to max rows and returns how many there are in all. Any thread;
 * while others trace, the totals are a moment's snapshot. 0 if nothing was
 * recorded (or memory for the snapshot could not be had).
 */
unsigned int vnic_trace_rows(struct vnic_trace_row *out, unsigned int max);
/*
 * The nested text report, in the form of the ftrace figures of the
 * ibmvnic rr thread ("total / hits = average", docs/SEEDS.md),
 * each callee indented under its caller, with its share of the caller's
 * time. Times are inclusive: never add averages across lines.
 */
void vnic_trace_report(FILE *f);

/*
 * USDT probes (provider "vnic"), for perf and bpftrace: a nop in the code
 * and a note in the ELF file (readelf -n). With no <sys/sdt.h>
 * (systemtap-sdt-dev) they compile to nothing but the evaluation of their
 * arguments, which must have no side effects. Arguments are integers or
 * strings (const char *), listed in docs/TRACING.md.
 */
#ifdef __has_include
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define VNIC_HAVE_SDT 1
#endif
#endif

#ifdef VNIC_HAVE_SDT
#define VNIC_PROBE1(name, a) STAP_PROBE1(vnic, name, a)
#define VNIC_PROBE2(name, a, b) STAP_PROBE2(vnic, name, a, b)
#define VNIC_PROBE3(name, a, b, c) STAP_PROBE3(vnic, name, a, b, c)
#else
#define VNIC_PROBE1(name, a) ((void)(a))
#define VNIC_PROBE2(name, a, b) ((void)(a), (void)(b))
#define VNIC_PROBE3(name, a, b, c) ((void)(a), (void)(b), (void)(c))
#endif

/* ---------------------------------------------------------------------------
 * fd sources for the cpu loop (cpu.c)
 *
 * A cpu may own file descriptors (a TAP queue, an AF_PACKET socket): when one
 * becomes ready, the poller registered for it is scheduled. A cpu that owns
 * at least one fd sleeps in epoll_wait instead of on the futex, with an
 * eventfd standing in for the futex wake: a waker that claims the sleep
 * (the same sleeping/pending protocol as the futex, whose lost-wakeup
 * argument is unchanged) writes the eventfd, edge-triggered in the epoll
 * set and never read: the edge stays queued until a wait reports it, so a
 * wake that lands before the owner enters epoll_wait makes that epoll_wait
 * return at once, as the cleared futex word does. Cpus without fds keep the
 * futex path and pay nothing.
 *
 * Level-triggered: a poller that stops reading before EAGAIN is scheduled
 * again at the next look. A busy fd cpu looks at its fds with a
 * non-blocking epoll_wait in every turn that brings nothing new from other
 * threads, and at most every VNIC_CPU_FD_POLL_NS while others keep
 * scheduling it; while busy-polling idle, every VNIC_CPU_FD_SPIN_POLL_NS
 * (by running the pollers of fds marked vnic_cpu_fd_look_by_run, if it can);
 * an idle one looks when it goes to sleep, in the one epoll_wait that is
 * its sleep (the timer as timeout; it returns at once for a ready fd).
 * EPOLLERR and EPOLLHUP schedule the poller too (epoll reports them
 * whatever was asked): a poller that cannot make progress on its fd stops
 * watching it (vnic_cpu_mod_fd with 0). A poller may be run once more after
 * it stopped watching (readiness seen just before): it must cope with a run
 * that finds nothing. The poller of an fd marked vnic_cpu_fd_look_by_run
 * is also run as a spinning cpu's look at the fd; an fd marked
 * vnic_cpu_fd_look_by_src is looked at through its spin source instead.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_CPU_MAX_FDS = 64,
	VNIC_CPU_FD_POLL_NS = 20000,
	VNIC_CPU_FD_SPIN_POLL_NS = 2000,
	VNIC_CPU_FD_PROBE_MAX = 2,
};


/*
 * Before cpu starts. Registers fd (the caller keeps owning it and closes it
 * after the cpu has stopped) to schedule p, a poller already added to this
 * cpu, when one of events (EPOLLIN, EPOLLOUT) is ready. events 0 registers
 * the fd without watching it yet. With EPOLLET, p is scheduled once per
 * edge instead: p must find what is ready by other means (a wire's ring).
 * The first call creates the cpu's epoll instance and eventfd. 0 or -errno:
 * -EINVAL (p not on this cpu, fd < 0, fd already registered), -EBUSY (cpu
 * started), -ENOSPC, or what epoll_create1/eventfd/epoll_ctl return.
 */
int vnic_cpu_add_fd(struct vnic_cpu *cpu, int fd, uint32_t events, struct vnic_poller *p);
/*
 * Before cpu starts: fd's poller reads fd itself and returns 0 when it found
 * nothing, so a busy-polling cpu may look at fd by running the poller (a
 * run that finds nothing does not count in its runs): one syscall a look,
 * and a look that hits has read the frame, where an epoll_wait look and
 * then the poller's read are two. The spin looks so while every fd it
 * watches is marked and watched for EPOLLIN alone, level-triggered, and
 * there are at most VNIC_CPU_FD_PROBE_MAX of them (counters fd_probes,
 * fd_probe_hits); else by epoll_wait. 0 or -ENOENT (fd not registered),
 * -EBUSY (cpu started).
 */
int vnic_cpu_fd_look_by_run(struct vnic_cpu *cpu, int fd);
/*
 * Before cpu starts, after vnic_cpu_add_spin_src: a spin source whose
 * poller is fd's sees, without a syscall, what fd would report (an
 * AF_PACKET socket's receive ring, whose status words the kernel sets
 * before it wakes the socket), so a busy-polling cpu leaves fd out of its
 * looks and peeks the source instead, on every turn: the other fds are
 * then looked at as if fd were not watched (by run, when they are all
 * marked so). Edges fd raised for what a peek found are still reported by
 * a later epoll_wait: its poller must cope with a run that finds nothing
 * new. 0 or -ENOENT (fd not registered), -EINVAL (no spin source of fd's
 * poller on this cpu), -EBUSY (cpu started).
 */
int vnic_cpu_fd_look_by_src(struct vnic_cpu *cpu, int fd);
/*
 * Owner's thread (or before start): watch events on fd from now on; 0 stops
 * watching (e.g. a TAP queue whose tx queue is stopped). 0 or -errno:
 * -ENOENT (fd not registered), or what epoll_ctl returns.
 */
int vnic_cpu_mod_fd(struct vnic_cpu *cpu, int fd, uint32_t events);

/* ---------------------------------------------------------------------------
 * Placement of two cpu threads that feed each other (place.c)
 *
 * Left to the scheduler, the two threads of a request/response exchange
 * often end up queued on one core while the other is idle: a woken thread
 * is queued on its waker's core, and the waker goes on spinning there
 * (docs/MECHANISMS.md section 11). Pinned to cores of their own they never
 * wait for each other; but pinned beside a CPU-bound process, the thread
 * that shares its core with it waits for whole time slices, where the
 * scheduler would have put both threads on the other core. So the
 * placement pins them apart only while nothing else on the machine wants
 * CPU, and gives them back to the scheduler as soon as something does.
 *
 * A caller (the bench's main thread) looks every VNIC_PLACE_PERIOD_NS,
 * never per packet: the CPU that other processes took over the window
 * (/proc/stat's busy time less this process's own CPU) and, while pinned,
 * how long each thread waited on its run queue (its schedstat). The
 * decision itself is a pure function of those (vnic_place_decide), so that
 * it can be checked as a table.
 * ------------------------------------------------------------------------- */

#define VNIC_PLACE_PERIOD_NS 200000000ull	/* one look per 200 ms */
enum {
	VNIC_PLACE_BUSY_MILLI = 400,	/* others took 0.4 cpu or more: unpin */
	VNIC_PLACE_QUIET_MILLI = 200,	/* others took 0.2 cpu at most: a quiet window */
	VNIC_PLACE_WAIT_PERMILLE = 200,	/* a pinned thread queued 20 % of a window: unpin */
	VNIC_PLACE_QUIET_WINDOWS = 2,	/* quiet windows in a row before pinning */
	VNIC_PLACE_HOLD_SHIFT_MAX = 4,	/* each unpin doubles that, up to 16 times */
};

enum vnic_place_act {
	VNIC_PLACE_STAY = 0,
	VNIC_PLACE_PIN,
	VNIC_PLACE_UNPIN,
};

/* What one look saw. */
struct vnic_place_in {
	bool pinned;		/* the threads are on cores of their own now */
	unsigned int cores;	/* cores the process may run on */
	unsigned int quiet;	/* quiet windows in a row before this one */
	unsigned int unpins;	/* unpins so far: each makes the next pin wait longer */
	int others_milli;	/* CPU others took in the window, in 1/1000 cpu; < 0 unknown */
	int wait_permille;	/* pinned: the longest run queue wait of a thread, 1/1000 of the window */
};

/*
 * The action for one look, and in *quiet the quiet windows in a row
 * counting this one. Pinned: unpin when others took VNIC_PLACE_BUSY_MILLI
 * or a thread waited VNIC_PLACE_WAIT_PERMILLE of the window (something
 * of ours beside them, or a burst too short for the average), or when
 * fewer than two cores are left. Not pinned: pin after
 * VNIC_PLACE_QUIET_WINDOWS << min(unpins, VNIC_PLACE_HOLD_SHIFT_MAX) quiet
 * windows in a row, so that a neighbour that comes and goes does not
 * make the threads flap. An unknown others (no /proc/stat) is never quiet.
 */
enum vnic_place_act vnic_place_decide(const struct vnic_place_in *in, unsigned int *quiet);
/*
 * At start, before the threads run: pin at once when the process may use
 * two cores or more and no other task is runnable (others_runnable:
 * /proc/stat's procs_running less the caller; < 0 unknown). A CPU-bound
 * neighbour is always runnable, so a run beside one starts unpinned.
 */
bool vnic_place_first(unsigned int cores, int others_runnable);

struct vnic_place_stats {
	uint64_t checks;	/* looks taken */
	uint64_t pins;		/* the threads put on cores of their own */
	uint64_t unpins;	/* given back to the scheduler */
	uint64_t errors;	/* affinity calls that failed: the placement stopped */
	uint64_t pinned;	/* 1 while pinned */
};

/* The state of one placement; the caller's thread only, counters excepted. */
struct vnic_place {
	struct vnic_cpu *cpu[2];
	bool on;		/* placing; off: never started, or an error stopped it */
	bool pinned;
	unsigned int cores;
	int core[2];		/* the two cores, the first the process may use */
	unsigned int quiet;
	uint64_t t_ns;		/* the last look: clock, busy ticks, our CPU, the waits */
	uint64_t busy_ticks;
	uint64_t self_ns;
	uint64_t wait_ns[2];
	bool have_stat;
	struct vnic_place_stats stats;
};

/*
 * Before the two cpus start: how many cores there are, and whether the
 * machine is quiet enough to start pinned (vnic_place_first). The
 * pthread affinity is set on the threads by vnic_place_start. The
 * counters are not reset: p must have been zeroed once before any reader
 * could look (they count on from there).
 */
void vnic_place_init(struct vnic_place *p, struct vnic_cpu *a, struct vnic_cpu *b);
/* After both cpus started: pins them now if vnic_place_init found the machine quiet. */
void vnic_place_start(struct vnic_place *p);
/* The caller's look, about every VNIC_PLACE_PERIOD_NS while the cpus run. */
void vnic_place_check(struct vnic_place *p, uint64_t now_ns);
/* Counters ("pinned", "pins", "unpins", "checks", "errors"); returns how many there are. */
unsigned int vnic_place_counters(const struct vnic_place *p, struct vnic_counter *out,
				 unsigned int max);

#endif /* VNIC_CORE_H */
