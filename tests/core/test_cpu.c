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
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/core.h"

enum { HANG_GUARD_S = 120 };

static void nap_us(long us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};

	nanosleep(&ts, NULL);
}

/* Waits for *flag to become non-zero; false only if the guard expires (a hang). */
static bool wait_flag(_Atomic int *flag)
{
	uint64_t end = vnic_now_ns() + (uint64_t)HANG_GUARD_S * 1000000000ull;

	while (!atomic_load(flag)) {
		if (vnic_now_ns() > end)
			return false;
		nap_us(200);
	}
	return true;
}

static bool wait_asleep(struct vnic_cpu *cpu)
{
	uint64_t end = vnic_now_ns() + (uint64_t)HANG_GUARD_S * 1000000000ull;

	while (!atomic_load(&cpu->sleeping)) {
		if (vnic_now_ns() > end)
			return false;
		nap_us(100);
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Ping-pong: A runs, bumps the counter, schedules B; B does the same back.
 * The counter is a plain variable: only the schedule/take handoff orders
 * the two threads' accesses, which is what TSan checks here.
 * ------------------------------------------------------------------------- */

struct pingpong {
	struct vnic_cpu cpu[2];
	struct vnic_poller p[2];
	uint64_t counter;
	uint64_t target;
	uint64_t issued[2]; /* schedules issued by each side, owner-only */
	_Atomic int done;
};

static struct pingpong pp;

static int pingpong_poll(struct vnic_poller *p, int budget)
{
	int me = p == &pp.p[1];

	(void)budget;
	if (++pp.counter >= pp.target) {
		atomic_store(&pp.done, 1);
		return 0;
	}
	pp.issued[me]++;
	vnic_poller_schedule(&pp.p[!me]);
	return 0;
}

static void run_pingpong(uint64_t busy_poll_ns)
{
	uint64_t schedules, wakeups = 0;
	int i;

	memset(&pp, 0, sizeof(pp));
	pp.target = 100000;
	for (i = 0; i < 2; i++) {
		assert_int_equal(vnic_cpu_init(&pp.cpu[i], i ? "pong" : "ping", busy_poll_ns), 0);
		assert_int_equal(vnic_cpu_add(&pp.cpu[i], &pp.p[i], "pp", pingpong_poll), 0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_cpu_start(&pp.cpu[i]), 0);
	assert_int_equal(vnic_cpu_start(&pp.cpu[0]), -EBUSY);
	assert_int_equal(vnic_cpu_add(&pp.cpu[0], &pp.p[1], "late", pingpong_poll), -EBUSY);

	/* Both idle and asleep: the first schedule has to wake cpu 0. */
	assert_true(wait_asleep(&pp.cpu[0]));
	assert_true(wait_asleep(&pp.cpu[1]));
	vnic_poller_schedule(&pp.p[0]);
	assert_true(wait_flag(&pp.done));
	for (i = 0; i < 2; i++) {
		vnic_cpu_stop(&pp.cpu[i]);
		assert_null(pp.cpu[i].thread);
	}

	assert_int_equal(pp.counter, pp.target);
	assert_int_equal(pp.p[0].runs + pp.p[1].runs, pp.target);
	/* Strict alternation: each run was caused by exactly one schedule. */
	assert_int_equal(pp.p[0].runs, pp.p[0].schedules);
	assert_int_equal(pp.p[1].runs, pp.p[1].schedules);
	schedules = 1 + pp.issued[0] + pp.issued[1];
	assert_int_equal(schedules, pp.target);
	for (i = 0; i < 2; i++) {
		struct vnic_cpu_stats *st = &pp.cpu[i].stats;

		print_message("cpu %d: loops %llu sleeps %llu wakeups %llu busy_polls %llu\n", i,
			      (unsigned long long)st->loops, (unsigned long long)st->sleeps,
			      (unsigned long long)st->wakeups, (unsigned long long)st->busy_polls);
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
	assert_true(wait_flag(&tm.done));
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
	assert_true(wait_flag(&busy_seen));
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
	assert_true(wait_asleep(&scpu));
	vnic_poller_schedule(&kick_p);
	assert_true(wait_flag(&kick_seen));
	assert_true(wait_asleep(&scpu));
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

static bool pp_done(void *ctx)
{
	(void)ctx;
	return atomic_load(&pp.done);
}

static void test_manual_pingpong(void **state)
{
	struct vnic_cpu *cpus[2] = {&pp.cpu[0], &pp.cpu[1]};
	int i;

	(void)state;
	memset(&pp, 0, sizeof(pp));
	pp.target = 1000;
	for (i = 0; i < 2; i++) {
		assert_int_equal(vnic_cpu_init(&pp.cpu[i], "manual", 0), 0);
		assert_int_equal(vnic_cpu_add(&pp.cpu[i], &pp.p[i], "pp", pingpong_poll), 0);
	}
	vnic_poller_schedule(&pp.p[0]);
	assert_int_equal(vnic_cpus_run_until(cpus, 2, pp_done, NULL, 60ull * 1000000000), 0);
	assert_int_equal(pp.counter, 1000);
	assert_int_equal(pp.p[0].runs, 500);
	assert_int_equal(pp.p[1].runs, 500);
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
		cmocka_unit_test(test_timers_fire_after_deadline),
		cmocka_unit_test(test_stop_joins),
		cmocka_unit_test(test_manual_pingpong),
		cmocka_unit_test(test_manual_timers_and_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
