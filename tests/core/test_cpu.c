// SPDX-License-Identifier: MIT
/*
 * vnic_cpu with real threads (label "threaded", also run under TSan):
 * a ping-pong between two cpus that loses no wake-up, sleep and wake-up
 * counters that agree with each other, timers that fire no earlier than
 * their deadline, and clean stops. Plus manual mode (vnic_cpus_run_until).
 *
 * No timing is asserted: waits on the test side are hang guards only.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/core.h"
#include "pingpong.h"

/* ---------------------------------------------------------------------------
 * Ping-pong (tests/support/pingpong.h): each run must have been caused by
 * exactly one schedule, and no wake-up may be lost.
 * ------------------------------------------------------------------------- */

static struct vnic_pingpong pp;

static void run_pingpong(uint64_t busy_poll_ns)
{
	static const char *const names[2] = {"ping", "pong"};
	uint64_t schedules, wakeups = 0;
	int i;

	vnic_pingpong_init(&pp, names, busy_poll_ns, 100000);
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_cpu_start(&pp.cpu[i]), 0);
	assert_int_equal(vnic_cpu_start(&pp.cpu[0]), -EBUSY);
	assert_int_equal(vnic_cpu_add(&pp.cpu[0], &pp.side[1].p, "late", vnic_pingpong_poll),
			 -EBUSY);

	/* Both idle and asleep: the first schedule has to wake cpu 0. */
	assert_true(vnic_test_wait_asleep(&pp.cpu[0]));
	assert_true(vnic_test_wait_asleep(&pp.cpu[1]));
	vnic_pingpong_kick(&pp);
	assert_true(vnic_test_wait_flag(&pp.done));
	for (i = 0; i < 2; i++) {
		vnic_cpu_stop(&pp.cpu[i]);
		assert_null(pp.cpu[i].thread);
	}

	assert_int_equal(pp.counter, pp.target);
	assert_int_equal(pp.side[0].p.runs + pp.side[1].p.runs, pp.target);
	/* Strict alternation: each run was caused by exactly one schedule. */
	assert_int_equal(pp.side[0].p.runs, pp.side[0].p.schedules);
	assert_int_equal(pp.side[1].p.runs, pp.side[1].p.schedules);
	schedules = 1 + pp.side[0].issued + pp.side[1].issued;
	assert_int_equal(schedules, pp.target);
	vnic_pingpong_print(&pp);
	for (i = 0; i < 2; i++) {
		struct vnic_cpu_stats *st = &pp.cpu[i].stats;

		assert_int_equal(st->wakeups, atomic_load(&pp.cpu[i].wakeups_in));
		assert_true(st->wakeups <= st->sleeps);
		wakeups += st->wakeups;
		if (busy_poll_ns)
			assert_true(st->busy_polls > 0);
		else
			assert_int_equal(st->busy_polls, 0);
		vnic_cpu_fini(&pp.cpu[i]);
	}
	assert_true(pp.cpu[0].stats.wakeups >= 1); /* the kick */
	assert_true(wakeups <= schedules);
}

static void test_pingpong_sleeping(void **state)
{
	(void)state;
	run_pingpong(0);
}

static void test_pingpong_busy_poll(void **state)
{
	(void)state;
	run_pingpong(50000);
}

/* ---------------------------------------------------------------------------
 * Where the time goes: work, idle, spin; and the adaptive spin
 * ------------------------------------------------------------------------- */

static struct vnic_cpu icpu;
static struct vnic_poller ipoll;
static _Atomic uint64_t iruns;

static int count_poll(struct vnic_poller *p, int budget)
{
	(void)p;
	(void)budget;
	atomic_fetch_add(&iruns, 1);
	return 0;
}

static uint64_t thread_cpu_ns(const struct vnic_cpu *cpu)
{
	struct timespec ts;
	clockid_t clk;

	assert_int_equal(pthread_getcpuclockid(*(pthread_t *)cpu->thread, &clk), 0);
	assert_int_equal(clock_gettime(clk, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * An idle cpu did no work: every turn that ran no poller went to idle,
 * whatever it spun, and the work CPU a report gives (vnic_cpu_work_cpu_ns)
 * is zero although the thread burned CPU spinning, yielding and going to
 * sleep. Only counts are asserted, none of which another process can
 * inflate: a work turn's wall clock grows with every preemption on a
 * loaded machine, so the cpu first spins with no work at all (woken by
 * vnic_cpu_set_busy_poll, which runs no poller), where its work time must
 * be exactly 0, and then runs a poller five times, where its work turns
 * must be exactly those five.
 */
static void test_idle_cpu_reports_no_work(void **state)
{
	uint64_t cpu_ns, work_ns, spin_ns, idle_ns;

	(void)state;
	assert_int_equal(vnic_cpu_init(&icpu, "idle", 1000000), 0);
	vnic_cpu_set_spin(&icpu, VNIC_CPU_SPIN_FIXED);
	assert_int_equal(vnic_cpu_add(&icpu, &ipoll, "never", count_poll), 0);
	assert_int_equal(vnic_cpu_start(&icpu), 0);
	/* woken now and then with nothing to run: each wake spins 1 ms and sleeps again */
	for (int i = 0; i < 5; i++) {
		assert_true(vnic_test_wait_asleep(&icpu));
		vnic_cpu_set_busy_poll(&icpu, 1000000, VNIC_CPU_SPIN_FIXED);
	}
	assert_true(vnic_test_wait_asleep(&icpu));
	cpu_ns = thread_cpu_ns(&icpu);
	work_ns = vnic_ctr_read(&icpu.stats.work_ns);
	spin_ns = vnic_ctr_read(&icpu.stats.spin_ns);
	idle_ns = vnic_ctr_read(&icpu.stats.idle_ns);
	assert_int_equal(atomic_load(&iruns), 0);
	assert_int_equal(work_ns, 0);
	assert_true(spin_ns > 0);
	/* the asleep turn's idle_ns is added when it wakes: idle_ns >= spin_ns only after the stop */
	assert_true(idle_ns > 0);
	assert_true(cpu_ns > 0);
	assert_int_equal(vnic_cpu_work_cpu_ns(work_ns, cpu_ns, spin_ns), 0);

	/* scheduled now and then: each run is one work turn, the spin after it idle */
	for (uint64_t i = 1; i <= 5; i++) {
		vnic_poller_schedule(&ipoll);
		assert_true(vnic_test_wait_count(&iruns, i));
		assert_true(vnic_test_wait_asleep(&icpu));
	}
	vnic_cpu_stop(&icpu);
	/* every turn is a work turn or an idle one: five ran the poller, none ran more */
	assert_int_equal(icpu.stats.loops - icpu.idles, 5);
	assert_int_equal(ipoll.runs, 5);
	assert_true(icpu.stats.work_ns > 0);
	/* the first spin, one per wake-up with nothing to run, one after each run */
	assert_true(icpu.stats.busy_polls >= 1 + 5 + 5);
	assert_true(icpu.stats.sleeps >= 10);
	/* a 1 ms spin yields every VNIC_CPU_SPIN_YIELD_NS; it fed nobody */
	assert_true(icpu.stats.spin_yields > 0);
	assert_int_equal(icpu.stats.spin_handoffs, 0);
	assert_true(icpu.stats.idle_ns >= icpu.stats.spin_ns);
	assert_true(icpu.stats.spin_limit_ns == 1000000); /* fixed: never adapts */
	vnic_cpu_fini(&icpu);

	/* no poller ever runs: no turn at all is work */
	atomic_store(&iruns, 0);
	assert_int_equal(vnic_cpu_init(&icpu, "idle", 50000), 0);
	assert_int_equal(vnic_cpu_add(&icpu, &ipoll, "never", count_poll), 0);
	assert_int_equal(vnic_cpu_start(&icpu), 0);
	vnic_test_nap_us(50000);
	vnic_cpu_stop(&icpu);
	assert_int_equal(icpu.stats.work_ns, 0);
	assert_int_equal(atomic_load(&iruns), 0);
	vnic_cpu_fini(&icpu);
}

/* A rule of three values, table-driven: each row's inputs and the answer wanted. */
struct rule_row {
	uint64_t in[3], want;
};

static void check_rule(const char *what, uint64_t (*rule)(uint64_t, uint64_t, uint64_t),
		       const struct rule_row *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t got = rule(t[i].in[0], t[i].in[1], t[i].in[2]);

		if (got != t[i].want)
			fail_msg("%s, row %u: %llu, %llu, %llu -> %llu, want %llu", what, i,
				 (unsigned long long)t[i].in[0], (unsigned long long)t[i].in[1],
				 (unsigned long long)t[i].in[2], (unsigned long long)got,
				 (unsigned long long)t[i].want);
	}
}

/* The work CPU of a thread: the smaller of its two upper bounds, never negative. */
static void test_work_cpu_rule(void **state)
{
	/* work turns, thread cpu, spin -> work cpu */
	static const struct rule_row t[] = {
		{ { 300, 1000, 600 }, 300 },	/* sleeps' syscalls left in cpu - spin */
		{ { 500, 1000, 600 }, 400 },	/* a work turn preempted: cpu - spin */
		{ { 400, 1000, 600 }, 400 },	/* both bounds agree */
		{ { 0, 1000, 600 }, 0 },		/* no work turn: no work, whatever it burned */
		{ { 300, 500, 600 }, 0 },		/* spin steps over the kernel's clock */
		{ { 300, 600, 600 }, 0 },
		{ { 0, 0, 0 }, 0 },
	};

	(void)state;
	check_rule("work cpu (turns, cpu, spin)", vnic_cpu_work_cpu_ns, t,
		   sizeof(t) / sizeof(t[0]));
}

/*
 * Work turns hold the pollers' time: each run busy-waits FEED_RUN_NS, so
 * work_ns is at least runs x that. The cpu it feeds is never started, so
 * the work stays pending there, and each spin after a run hands over once
 * (spin_handoffs counts the feedings exactly): a fed cpu that has not run
 * may be queued on this core. A schedule from a thread that runs no cpu
 * (the test) feeds nobody.
 */
enum { FEED_RUNS = 4, FEED_RUN_NS = 50000 };

static struct vnic_cpu fcpu[2];
static struct vnic_poller fpoll[2];
static _Atomic uint64_t fruns;

static int feed_poll(struct vnic_poller *p, int budget)
{
	(void)p;
	(void)budget;
	vnic_spin_ns(FEED_RUN_NS);
	vnic_poller_schedule(&fpoll[1]);
	atomic_fetch_add(&fruns, 1);
	return 0;
}

static void test_spin_hands_over_to_the_fed(void **state)
{
	(void)state;
	assert_int_equal(vnic_cpu_init(&fcpu[0], "feeder", 200000), 0);
	assert_int_equal(vnic_cpu_init(&fcpu[1], "fed", 200000), 0);
	vnic_cpu_set_spin(&fcpu[0], VNIC_CPU_SPIN_FIXED);
	assert_int_equal(vnic_cpu_add(&fcpu[0], &fpoll[0], "feed", feed_poll), 0);
	assert_int_equal(vnic_cpu_add(&fcpu[1], &fpoll[1], "fed", count_poll), 0);
	assert_int_equal(vnic_cpu_start(&fcpu[0]), 0);
	for (uint64_t i = 1; i <= FEED_RUNS; i++) {
		vnic_poller_schedule(&fpoll[0]);
		assert_true(vnic_test_wait_count(&fruns, i));
		/* far longer than the spin: each spin runs its course */
		vnic_test_nap_us(10000);
	}
	vnic_cpu_stop(&fcpu[0]);
	assert_int_equal(fcpu[0].stats.spin_handoffs, FEED_RUNS);
	assert_true(fcpu[0].stats.spin_yields >= FEED_RUNS);
	assert_true(fcpu[0].stats.work_ns >= (uint64_t)FEED_RUNS * FEED_RUN_NS);
	assert_true(fcpu[0].stats.idle_ns >= fcpu[0].stats.spin_ns);
	assert_true(atomic_load(&fcpu[1].pending) != 0);
	/* the test thread's schedules fed nobody */
	assert_null(fcpu[1].handoff);
	vnic_cpu_fini(&fcpu[0]);
	vnic_cpu_fini(&fcpu[1]);
}

/* The adaptive rule, table-driven: grow by doubling within max, halve past it, 0 below the start. */
static void test_spin_rule(void **state)
{
	/* current spin, max, slept -> next spin */
	static const struct rule_row t[] = {
		{ { 0, 50000, 10000 }, 2000 },	/* short sleep from nothing: the start */
		{ { 2000, 50000, 10000 }, 4000 },	/* doubles */
		{ { 32000, 50000, 49999 }, 50000 },	/* capped at max */
		{ { 50000, 50000, 50000 }, 50000 },	/* a sleep of exactly max still grows */
		{ { 50000, 50000, 50001 }, 25000 },	/* a longer one halves */
		{ { 3000, 50000, 1000000 }, 0 },	/* below the start: off */
		{ { 0, 50000, 1000000 }, 0 },	/* off stays off on long sleeps */
		{ { 0, 0, 0 }, 0 },			/* max 0: never spins */
		{ { 1000, 1500, 100 }, 1500 },	/* a max below the start caps the start */
	};

	(void)state;
	check_rule("spin (cur, max, slept)", vnic_cpu_spin_next, t, sizeof(t) / sizeof(t[0]));
}

/*
 * The contention rule: a lone lost spin rests the minimum, losses in a row
 * double it up to the maximum, kept spins halve it back to none.
 */
static void test_backoff_rule(void **state)
{
	static const uint64_t min = VNIC_CPU_SPIN_BACKOFF_MIN_NS, max = VNIC_CPU_SPIN_BACKOFF_MAX_NS;
	static const struct {
		uint64_t cur;
		bool lost;
		uint64_t next;
	} t[] = {
		{ 0, true, min },		/* the first loss: the shortest rest */
		{ min, true, 2 * min },		/* again: doubles */
		{ max / 2 + 1, true, max },	/* capped */
		{ max, true, max },
		{ max, false, max / 2 },	/* kept spins halve it */
		{ 2 * min - 1, false, 0 },	/* below the minimum: none */
		{ min, false, 0 },
		{ 0, false, 0 },		/* none stays none */
	};
	uint64_t cur = 0;
	unsigned int i, n = 0;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (vnic_cpu_backoff_next(t[i].cur, t[i].lost) != t[i].next)
			fail_msg("row %u: %llu, lost %d -> %llu, want %llu", i,
				 (unsigned long long)t[i].cur, t[i].lost,
				 (unsigned long long)vnic_cpu_backoff_next(t[i].cur, t[i].lost),
				 (unsigned long long)t[i].next);
	/* from none to the maximum in a handful of losses, and back */
	while (cur < max && n < 64) {
		cur = vnic_cpu_backoff_next(cur, true);
		n++;
	}
	assert_int_equal(cur, max);
	assert_true(n <= 7);
	while (cur)
		cur = vnic_cpu_backoff_next(cur, false);
}

/*
 * On a running cpu: schedules that come back sooner than the most it may
 * spin make it spin, and catch some; its counters agree with each other.
 * A spin that loses the CPU to another thread stops spinning (contention):
 * on a busy machine that may happen here, and is then what the counters show.
 */
static void test_spin_adapts(void **state)
{
	uint64_t hits, polls, preempted, end;

	(void)state;
	atomic_store(&iruns, 0);
	assert_int_equal(vnic_cpu_init(&icpu, "adapt", 400000), 0);
	assert_int_equal(icpu.stats.spin_limit_ns, 0); /* no idle seen yet */
	assert_int_equal(vnic_cpu_add(&icpu, &ipoll, "pinged", count_poll), 0);
	assert_int_equal(vnic_cpu_start(&icpu), 0);
	/*
	 * At least 400 pings, and on until it caught one in a spin or backed
	 * off (at most 10 s): on a loaded machine this thread's 50 us naps can
	 * last longer than the most it may spin, and then not spinning is right.
	 */
	end = vnic_now_ns() + 10000000000ull;
	for (uint64_t i = 1; i <= 400 || (vnic_ctr_read(&icpu.stats.spin_hits) == 0 &&
					   vnic_ctr_read(&icpu.stats.spin_preempted) == 0 &&
					   (int64_t)(vnic_now_ns() - end) < 0);
	     i++) {
		vnic_poller_schedule(&ipoll);
		assert_true(vnic_test_wait_count(&iruns, i));
		vnic_test_nap_us(50); /* well inside the 400 us it may spin */
	}
	vnic_cpu_stop(&icpu);
	hits = icpu.stats.spin_hits;
	polls = icpu.stats.busy_polls;
	preempted = icpu.stats.spin_preempted;
	assert_true(hits <= polls);
	assert_true(icpu.stats.spin_ns <= icpu.stats.idle_ns);
	assert_true(icpu.stats.spin_limit_ns <= 400000);
	/* it spun, and caught schedules, unless it lost the CPU and backed off */
	assert_true((polls > 0 && hits > 0) || preempted > 0);
	vnic_cpu_fini(&icpu);
}

/* ---------------------------------------------------------------------------
 * Spin groups: at most max cpus of a group spin at once
 * ------------------------------------------------------------------------- */

/* Each row a group of max places: all taken in turn, one more refused, one given back, retaken. */
static void test_spin_group_places(void **state)
{
	static const unsigned int max[] = { 0, 1, 2, 3 };
	struct vnic_cpu_spin_group g;

	(void)state;
	for (unsigned int r = 0; r < sizeof(max) / sizeof(max[0]); r++) {
		vnic_cpu_spin_group_init(&g, max[r]);
		for (unsigned int i = 0; i < max[r]; i++)
			assert_true(vnic_cpu_spin_group_enter(&g));
		assert_false(vnic_cpu_spin_group_enter(&g));
		assert_false(vnic_cpu_spin_group_enter(&g)); /* a refusal takes nothing */
		if (max[r]) {
			vnic_cpu_spin_group_leave(&g);
			assert_true(vnic_cpu_spin_group_enter(&g));
			assert_false(vnic_cpu_spin_group_enter(&g));
		}
		for (unsigned int i = 0; i < max[r]; i++)
			vnic_cpu_spin_group_leave(&g);
		assert_int_equal(atomic_load(&g.spinning), 0);
	}
}

enum { GROUP_THREADS = 4, GROUP_ROUNDS = 20000, GROUP_MAX = 2 };

static struct vnic_cpu_spin_group race_g;
static _Atomic uint32_t race_inside, race_most;
static _Atomic uint64_t race_entered;

static void *group_racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < GROUP_ROUNDS; i++) {
		uint32_t in, most;

		if (!vnic_cpu_spin_group_enter(&race_g))
			continue;
		atomic_fetch_add(&race_entered, 1);
		in = atomic_fetch_add(&race_inside, 1) + 1;
		most = atomic_load(&race_most);
		while (in > most && !atomic_compare_exchange_weak(&race_most, &most, in))
			;
		atomic_fetch_sub(&race_inside, 1);
		vnic_cpu_spin_group_leave(&race_g);
	}
	return NULL;
}

/* Threads racing for GROUP_MAX places: never more inside at once, none left taken. */
static void test_spin_group_race(void **state)
{
	pthread_t th[GROUP_THREADS];

	(void)state;
	vnic_cpu_spin_group_init(&race_g, GROUP_MAX);
	for (int i = 0; i < GROUP_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, group_racer, NULL), 0);
	for (int i = 0; i < GROUP_THREADS; i++)
		pthread_join(th[i], NULL);
	assert_true(atomic_load(&race_most) >= 1);
	assert_true(atomic_load(&race_most) <= GROUP_MAX);
	assert_true(atomic_load(&race_entered) >= 1);
	assert_int_equal(atomic_load(&race_inside), 0);
	assert_int_equal(atomic_load(&race_g.spinning), 0);
}

/*
 * Two cpus that would always spin (fixed) in one group: with no place,
 * neither spins and every idle is ceded, yet no wake-up is lost; with one
 * place, the first to idle spins. Each ping-pong must still complete.
 */
static void run_pingpong_group(unsigned int max)
{
	static const char *const names[2] = {"gping", "gpong"};
	struct vnic_cpu_spin_group g;
	uint64_t polls = 0, ceded = 0;
	int i;

	vnic_pingpong_init(&pp, names, 50000, 20000);
	vnic_cpu_spin_group_init(&g, max);
	for (i = 0; i < 2; i++) {
		vnic_cpu_set_spin(&pp.cpu[i], VNIC_CPU_SPIN_FIXED);
		assert_int_equal(vnic_cpu_set_spin_group(&pp.cpu[i], &g), 0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_cpu_start(&pp.cpu[i]), 0);
	assert_int_equal(vnic_cpu_set_spin_group(&pp.cpu[0], &g), -EBUSY);
	vnic_pingpong_kick(&pp);
	assert_true(vnic_test_wait_flag(&pp.done));
	for (i = 0; i < 2; i++)
		vnic_cpu_stop(&pp.cpu[i]);
	assert_int_equal(pp.counter, pp.target);
	assert_int_equal(pp.side[0].p.runs, pp.side[0].p.schedules);
	assert_int_equal(pp.side[1].p.runs, pp.side[1].p.schedules);
	for (i = 0; i < 2; i++) {
		struct vnic_cpu_stats *st = &pp.cpu[i].stats;

		assert_true(st->wakeups <= st->sleeps);
		polls += st->busy_polls;
		ceded += st->spin_ceded;
		vnic_cpu_fini(&pp.cpu[i]);
	}
	assert_int_equal(atomic_load(&g.spinning), 0);
	if (max == 0) {
		assert_int_equal(polls, 0);
		assert_true(ceded >= 1);
	} else {
		assert_true(polls >= 1);
	}
}

static void test_pingpong_group_none(void **state)
{
	(void)state;
	run_pingpong_group(0);
}

static void test_pingpong_group_one(void **state)
{
	(void)state;
	run_pingpong_group(1);
}

/* ---------------------------------------------------------------------------
 * Timers on a started cpu
 * ------------------------------------------------------------------------- */

struct timed {
	struct vnic_poller p;
	uint64_t deadline[4];
	uint64_t ran_at[4];
	unsigned int fires, want;
	_Atomic int done;
};

static struct vnic_cpu tcpu;
static struct timed tm;

/* Records when it ran and re-arms itself 1 ms later until it has fired want times. */
static int timed_poll(struct vnic_poller *p, int budget)
{
	struct timed *t = vnic_container_of(p, struct timed, p);
	uint64_t now = vnic_now_ns();

	(void)budget;
	t->ran_at[t->fires++] = now;
	if (t->fires < t->want) {
		t->deadline[t->fires] = now + 1000000;
		vnic_poller_set_timer(p, t->deadline[t->fires]);
	} else {
		atomic_store(&t->done, 1);
	}
	return 0;
}

static void test_timers_fire_after_deadline(void **state)
{
	unsigned int i;

	(void)state;
	memset(&tm, 0, sizeof(tm));
	tm.want = 3;
	assert_int_equal(vnic_cpu_init(&tcpu, "timer", 0), 0);
	assert_int_equal(vnic_cpu_add(&tcpu, &tm.p, "t", timed_poll), 0);
	tm.deadline[0] = vnic_now_ns() + 5000000;
	vnic_poller_set_timer(&tm.p, tm.deadline[0]);
	assert_int_equal(vnic_cpu_start(&tcpu), 0);
	assert_true(vnic_test_wait_flag(&tm.done));
	vnic_cpu_stop(&tcpu);

	assert_int_equal(tm.fires, 3);
	assert_int_equal(tm.p.runs, 3);
	assert_int_equal(tm.p.schedules, 0); /* timers, not schedules */
	for (i = 0; i < 3; i++)
		assert_true(tm.ran_at[i] >= tm.deadline[i]);
	assert_int_equal(tm.p.deadline_ns, 0); /* one shot: disarmed after the last */
	vnic_cpu_fini(&tcpu);
}

/* ---------------------------------------------------------------------------
 * Stop: from a busy cpu (a poller that always uses its budget), from a
 * sleeping one, and a restart after stop.
 * ------------------------------------------------------------------------- */

static struct vnic_cpu scpu;
static struct vnic_poller busy_p, kick_p;
static _Atomic int busy_seen, kick_seen;

static int busy_poll(struct vnic_poller *p, int budget)
{
	(void)p;
	atomic_store(&busy_seen, 1);
	return budget;
}

static int kick_poll(struct vnic_poller *p, int budget)
{
	(void)p;
	(void)budget;
	atomic_fetch_add(&kick_seen, 1);
	return 0;
}

static void test_stop_joins(void **state)
{
	uint64_t runs;

	(void)state;
	atomic_store(&busy_seen, 0);
	atomic_store(&kick_seen, 0);
	assert_int_equal(vnic_cpu_init(&scpu, "stop", 0), 0);
	assert_int_equal(vnic_cpu_add(&scpu, &busy_p, "busy", busy_poll), 0);
	assert_int_equal(vnic_cpu_add(&scpu, &kick_p, "kick", kick_poll), 0);

	/* Busy: never sleeps, still stops. */
	vnic_poller_schedule(&busy_p);
	assert_int_equal(vnic_cpu_start(&scpu), 0);
	assert_true(vnic_test_wait_flag(&busy_seen));
	vnic_cpu_stop(&scpu);
	assert_null(scpu.thread);
	runs = busy_p.runs;
	assert_true(runs >= 1);
	assert_int_equal(busy_p.schedules, 1); /* re-runs need no schedule */
	/* It still wanted to run: left scheduled, so manual mode picks it up. */
	assert_int_equal(vnic_cpu_run_once(&scpu), 1);
	assert_int_equal(busy_p.runs, runs + 1);
	vnic_cpu_stop(&scpu); /* not started: no-op */

	/* Swap in a poll that finishes under budget, so the pending re-run drains. */
	busy_p.poll = kick_poll;
	assert_int_equal(vnic_cpu_run_once(&scpu), 1);
	assert_int_equal(vnic_cpu_run_once(&scpu), 0);
	atomic_store(&kick_seen, 0);

	/* Restart, let it fall asleep, wake it with a schedule, stop it asleep. */
	assert_int_equal(vnic_cpu_start(&scpu), 0);
	assert_true(vnic_test_wait_asleep(&scpu));
	vnic_poller_schedule(&kick_p);
	assert_true(vnic_test_wait_flag(&kick_seen));
	assert_true(vnic_test_wait_asleep(&scpu));
	vnic_cpu_stop(&scpu);
	assert_null(scpu.thread);
	assert_int_equal(atomic_load(&kick_seen), 1);
	assert_true(scpu.stats.sleeps >= 2);
	assert_true(scpu.stats.wakeups >= 2); /* the schedule and the stop */
	assert_true(scpu.stats.wakeups <= scpu.stats.sleeps);
	vnic_cpu_fini(&scpu);
}

/* ---------------------------------------------------------------------------
 * Manual mode
 * ------------------------------------------------------------------------- */

static void test_manual_pingpong(void **state)
{
	static const char *const names[2] = {"manual", "manual"};
	struct vnic_cpu *cpus[2] = {&pp.cpu[0], &pp.cpu[1]};

	(void)state;
	vnic_pingpong_init(&pp, names, 0, 1000);
	vnic_pingpong_kick(&pp);
	assert_int_equal(vnic_cpus_run_until(cpus, 2, vnic_pingpong_done, &pp, 60ull * 1000000000),
			 0);
	assert_int_equal(pp.counter, 1000);
	assert_int_equal(pp.side[0].p.runs, 500);
	assert_int_equal(pp.side[1].p.runs, 500);
	/* Nothing slept or woke: manual mode has no futex. */
	assert_int_equal(pp.cpu[0].stats.sleeps + pp.cpu[1].stats.sleeps, 0);
	assert_int_equal(atomic_load(&pp.cpu[0].wakeups_in), 0);
}

static bool timed_done(void *ctx)
{
	return atomic_load(&((struct timed *)ctx)->done);
}

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

static void test_manual_timers_and_timeout(void **state)
{
	struct vnic_cpu *cpus[1] = {&tcpu};
	unsigned int i;

	(void)state;
	memset(&tm, 0, sizeof(tm));
	tm.want = 2;
	assert_int_equal(vnic_cpu_init(&tcpu, "manual-timer", 0), 0);
	assert_int_equal(vnic_cpu_add(&tcpu, &tm.p, "t", timed_poll), 0);
	tm.deadline[0] = vnic_now_ns() + 2000000;
	vnic_poller_set_timer(&tm.p, tm.deadline[0]);
	/* Nothing runnable: run_until advances time to the timers itself. */
	assert_int_equal(vnic_cpus_run_until(cpus, 1, timed_done, &tm, 60ull * 1000000000), 0);
	assert_int_equal(tm.fires, 2);
	for (i = 0; i < 2; i++)
		assert_true(tm.ran_at[i] >= tm.deadline[i]);

	/* Never done, nothing to run: times out instead of hanging. */
	assert_int_equal(vnic_cpus_run_until(cpus, 1, never, NULL, 1000000), -ETIMEDOUT);

	/* Never done and a poller that is always busy: still times out. */
	tm.p.poll = busy_poll;
	vnic_poller_schedule(&tm.p);
	assert_int_equal(vnic_cpus_run_until(cpus, 1, never, NULL, 1000000), -ETIMEDOUT);
	assert_true(tm.p.runs > 2);
	vnic_cpu_fini(&tcpu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pingpong_sleeping),
		cmocka_unit_test(test_pingpong_busy_poll),
		cmocka_unit_test(test_idle_cpu_reports_no_work),
		cmocka_unit_test(test_work_cpu_rule),
		cmocka_unit_test(test_spin_hands_over_to_the_fed),
		cmocka_unit_test(test_spin_rule),
		cmocka_unit_test(test_backoff_rule),
		cmocka_unit_test(test_spin_adapts),
		cmocka_unit_test(test_spin_group_places),
		cmocka_unit_test(test_spin_group_race),
		cmocka_unit_test(test_pingpong_group_none),
		cmocka_unit_test(test_pingpong_group_one),
		cmocka_unit_test(test_timers_fire_after_deadline),
		cmocka_unit_test(test_stop_joins),
		cmocka_unit_test(test_manual_pingpong),
		cmocka_unit_test(test_manual_timers_and_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
