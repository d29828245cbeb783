// SPDX-License-Identifier: MIT
/*
 * fd sources of vnic_cpu (label "threaded", also run under TSan): a pipe
 * written from another thread wakes the cpu out of epoll_wait and runs the
 * poller registered for it; vnic_cpu_mod_fd stops and restarts delivery; a
 * schedule from another thread still wakes an fd cpu (the eventfd path) and
 * loses no wake-up in a ping-pong with a futex cpu; timers still fire while
 * the cpu sleeps in epoll_wait; an idle costs one epoll_wait, whether the fd
 * or a schedule woke it. Plus the same in manual mode and the setup errors.
 *
 * No timing is asserted: waits on the test side are hang guards only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "pingpong.h"

/* ---------------------------------------------------------------------------
 * A pipe reader: drains the pipe until EAGAIN. A byte 'S' makes it stop
 * watching the pipe (and stop reading): the rest stays in the pipe until a
 * control poller, run on the owner's thread, watches it again.
 * ------------------------------------------------------------------------- */

struct reader {
	struct vnic_cpu cpu;
	struct vnic_poller p;
	struct vnic_poller ctl; /* re-enables EPOLLIN from the owner's thread */
	struct vnic_poller nop; /* only wakes the cpu up */
	int fds[2];
	uint64_t sum; /* of the bytes read: plain, owner only */
	_Atomic uint64_t bytes;
	_Atomic uint64_t stops;
	_Atomic uint64_t ctl_runs;
	_Atomic uint64_t nop_runs;
};

static struct reader rd;

static int reader_poll(struct vnic_poller *p, int budget)
{
	struct reader *r = vnic_container_of(p, struct reader, p);
	uint8_t buf[64];
	int work = 0;

	(void)budget;
	for (;;) {
		ssize_t n = read(r->fds[0], buf, 1);

		if (n <= 0)
			break;
		work++;
		r->sum += buf[0];
		atomic_fetch_add(&r->bytes, 1);
		if (buf[0] == 'S') {
			assert_int_equal(vnic_cpu_mod_fd(&r->cpu, r->fds[0], 0), 0);
			atomic_fetch_add(&r->stops, 1);
			break;
		}
	}
	return work < budget ? work : budget - 1;
}

static int ctl_poll(struct vnic_poller *p, int budget)
{
	struct reader *r = vnic_container_of(p, struct reader, ctl);

	(void)budget;
	assert_int_equal(vnic_cpu_mod_fd(&r->cpu, r->fds[0], EPOLLIN), 0);
	atomic_fetch_add(&r->ctl_runs, 1);
	return 0;
}

static int nop_poll(struct vnic_poller *p, int budget)
{
	struct reader *r = vnic_container_of(p, struct reader, nop);

	(void)budget;
	atomic_fetch_add(&r->nop_runs, 1);
	return 0;
}

static void reader_setup(struct reader *r, uint64_t busy_poll_ns)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(pipe2(r->fds, O_NONBLOCK | O_CLOEXEC), 0);
	assert_int_equal(vnic_cpu_init(&r->cpu, "fd", busy_poll_ns), 0);
	assert_int_equal(vnic_cpu_add(&r->cpu, &r->p, "pipe", reader_poll), 0);
	assert_int_equal(vnic_cpu_add(&r->cpu, &r->ctl, "ctl", ctl_poll), 0);
	assert_int_equal(vnic_cpu_add(&r->cpu, &r->nop, "nop", nop_poll), 0);
	assert_int_equal(vnic_cpu_add_fd(&r->cpu, r->fds[0], EPOLLIN, &r->p), 0);
	assert_non_null(r->cpu.fds);
}

static void reader_teardown(struct reader *r)
{
	vnic_cpu_fini(&r->cpu);
	assert_null(r->cpu.fds);
	close(r->fds[0]);
	close(r->fds[1]);
}

static void put(struct reader *r, const char *s)
{
	assert_int_equal(write(r->fds[1], s, strlen(s)), (ssize_t)strlen(s));
}

static void run_pipe_wakes(uint64_t busy_poll_ns)
{
	uint64_t want = 0, i;

	reader_setup(&rd, busy_poll_ns);
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	assert_int_equal(vnic_cpu_add_fd(&rd.cpu, rd.fds[1], EPOLLOUT, &rd.p), -EBUSY);

	/* Each write finds the cpu asleep in epoll_wait: the pipe wakes it. */
	for (i = 0; i < 200; i++) {
		assert_true(vnic_test_wait_asleep(&rd.cpu));
		put(&rd, "ab");
		want += 2;
		assert_true(vnic_test_wait_count(&rd.bytes, want));
	}
	/* Writes racing with the reader: none is lost. */
	for (i = 0; i < 20000; i++)
		put(&rd, "x");
	want += 20000;
	assert_true(vnic_test_wait_count(&rd.bytes, want));

	/* 'S' stops watching; what follows stays in the pipe ... */
	put(&rd, "Syz");
	want += 1;
	assert_true(vnic_test_wait_count(&rd.bytes, want));
	assert_true(vnic_test_wait_count(&rd.stops, 1));
	/* ... until the owner's thread watches it again (test_mod_fd_*). */
	vnic_poller_schedule(&rd.ctl);
	assert_true(vnic_test_wait_count(&rd.ctl_runs, 1));
	want += 2;
	assert_true(vnic_test_wait_count(&rd.bytes, want));

	vnic_cpu_stop(&rd.cpu);
	assert_int_equal(atomic_load(&rd.bytes), want);
	assert_int_equal(rd.sum, 200 * ('a' + 'b') + 20000 * 'x' + 'S' + 'y' + 'z');
	print_message("fd cpu: loops %llu sleeps %llu wakeups %llu busy_polls %llu runs %llu\n",
		      (unsigned long long)rd.cpu.stats.loops,
		      (unsigned long long)rd.cpu.stats.sleeps,
		      (unsigned long long)rd.cpu.stats.wakeups,
		      (unsigned long long)rd.cpu.stats.busy_polls, (unsigned long long)rd.p.runs);
	assert_true(rd.cpu.stats.sleeps >= 200);
	assert_true(rd.cpu.stats.wakeups <= rd.cpu.stats.sleeps);
	reader_teardown(&rd);
}

static void test_pipe_wakes_sleeping(void **state)
{
	(void)state;
	run_pipe_wakes(0);
}

static void test_pipe_wakes_busy_poll(void **state)
{
	(void)state;
	run_pipe_wakes(50000);
}

/* ---------------------------------------------------------------------------
 * One epoll_wait per idle: a cpu woken by its fd or by a schedule from
 * another thread (the eventfd, never read) runs what woke it and sleeps
 * again, and the sleep is its only look at the fds.
 * ------------------------------------------------------------------------- */

static void test_one_wait_per_idle(void **state)
{
	enum { ROUNDS = 300 };
	uint64_t want = 0, waits, sleeps, i;

	(void)state;
	reader_setup(&rd, 0);
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	for (i = 0; i < ROUNDS; i++) {
		assert_true(vnic_test_wait_asleep(&rd.cpu));
		if (i % 2) {
			vnic_poller_schedule(&rd.nop);
			assert_true(vnic_test_wait_count(&rd.nop_runs, i / 2 + 1));
		} else {
			put(&rd, "a");
			assert_true(vnic_test_wait_count(&rd.bytes, ++want));
		}
	}
	assert_true(vnic_test_wait_asleep(&rd.cpu));
	vnic_cpu_stop(&rd.cpu);
	waits = vnic_ctr_read(&rd.cpu.stats.fd_waits);
	sleeps = vnic_ctr_read(&rd.cpu.stats.sleeps);
	print_message("fd cpu: %llu sleeps, %llu epoll_waits\n", (unsigned long long)sleeps,
		      (unsigned long long)waits);
	/* every round slept once, woken once; the stop's wake ends the last sleep */
	assert_true(sleeps >= ROUNDS);
	/* a busy look may fall in a round that ran past VNIC_CPU_FD_POLL_NS: a preempted test */
	assert_true(waits >= sleeps);
	assert_true(waits <= sleeps + sleeps / 10);
	assert_int_equal(atomic_load(&rd.nop_runs), ROUNDS / 2);
	reader_teardown(&rd);
}

/* ---------------------------------------------------------------------------
 * mod_fd: stopped delivery stays stopped across sleeps, restarts on demand.
 * ------------------------------------------------------------------------- */

static void test_mod_fd_stops_and_restarts(void **state)
{
	int i;

	(void)state;
	reader_setup(&rd, 0);
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	put(&rd, "aS");
	assert_true(vnic_test_wait_count(&rd.stops, 1));
	assert_int_equal(atomic_load(&rd.bytes), 2);
	put(&rd, "bcd");
	/*
	 * The cpu goes back to sleep with "bcd" readable, again and again:
	 * each schedule of the no-op poller wakes it, and each time it looks
	 * at its fds (a non-blocking look, then epoll_wait). Were the pipe
	 * still watched, the reader would run and read it.
	 */
	for (i = 0; i < 3; i++) {
		vnic_poller_schedule(&rd.nop);
		assert_true(vnic_test_wait_count(&rd.nop_runs, (uint64_t)i + 1));
		assert_true(vnic_test_wait_asleep(&rd.cpu));
		vnic_test_nap_us(1000);
	}
	assert_int_equal(atomic_load(&rd.bytes), 2);
	assert_int_equal(atomic_load(&rd.stops), 1);
	/* Watch again from the owner's thread: the data waiting is delivered. */
	vnic_poller_schedule(&rd.ctl);
	assert_true(vnic_test_wait_count(&rd.bytes, 5));
	vnic_cpu_stop(&rd.cpu);
	assert_int_equal(rd.sum, 'a' + 'S' + 'b' + 'c' + 'd');
	reader_teardown(&rd);
}

/* ---------------------------------------------------------------------------
 * Schedules across threads: an fd cpu (eventfd wake) against a futex cpu.
 * ------------------------------------------------------------------------- */

/* The ping-pong of tests/support/pingpong.h, and cpu 0 owns an fd that never fires. */
static struct vnic_pingpong pp;
static struct vnic_poller idle_fd_p;
static int idle_fds[2];

static int never_poll(struct vnic_poller *p, int budget)
{
	(void)p;
	(void)budget;
	fail_msg("the pipe was never written");
	return 0;
}

static void run_pingpong(uint64_t busy_poll_ns)
{
	static const char *const names[2] = {"epoll", "futex"};
	int i;

	vnic_pingpong_init(&pp, names, busy_poll_ns, 50000);
	memset(&idle_fd_p, 0, sizeof(idle_fd_p));
	assert_int_equal(pipe2(idle_fds, O_NONBLOCK | O_CLOEXEC), 0);
	/* cpu 0 owns an fd that never fires: it sleeps in epoll_wait. */
	assert_int_equal(vnic_cpu_add(&pp.cpu[0], &idle_fd_p, "idle", never_poll), 0);
	assert_int_equal(vnic_cpu_add_fd(&pp.cpu[0], idle_fds[0], EPOLLIN, &idle_fd_p), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_cpu_start(&pp.cpu[i]), 0);
	assert_true(vnic_test_wait_asleep(&pp.cpu[0]));
	vnic_pingpong_kick(&pp);
	assert_true(vnic_test_wait_flag(&pp.done));
	for (i = 0; i < 2; i++)
		vnic_cpu_stop(&pp.cpu[i]);
	assert_int_equal(pp.counter, pp.target);
	vnic_pingpong_print(&pp);
	for (i = 0; i < 2; i++) {
		struct vnic_cpu_stats *st = &pp.cpu[i].stats;

		assert_true(st->wakeups <= st->sleeps);
		assert_int_equal(pp.side[i].p.runs, pp.side[i].p.schedules);
		vnic_cpu_fini(&pp.cpu[i]);
	}
	assert_true(pp.cpu[0].stats.wakeups >= 1);
	assert_int_equal(idle_fd_p.runs, 0);
	close(idle_fds[0]);
	close(idle_fds[1]);
}

static void test_pingpong_eventfd_sleeping(void **state)
{
	(void)state;
	run_pingpong(0);
}

static void test_pingpong_eventfd_busy_poll(void **state)
{
	(void)state;
	run_pingpong(20000);
}

/* ---------------------------------------------------------------------------
 * Timers on an fd cpu: epoll_wait's timeout is the nearest deadline.
 * ------------------------------------------------------------------------- */

struct timed {
	struct vnic_poller p;
	uint64_t deadline[3];
	uint64_t ran_at[3];
	unsigned int fires;
	_Atomic uint64_t done;
};

static struct timed tm;

static int timed_poll(struct vnic_poller *p, int budget)
{
	struct timed *t = vnic_container_of(p, struct timed, p);
	uint64_t now = vnic_now_ns();

	(void)budget;
	t->ran_at[t->fires++] = now;
	if (t->fires < 3) {
		t->deadline[t->fires] = now + 300000;
		vnic_poller_set_timer(p, t->deadline[t->fires]);
	} else {
		atomic_store(&t->done, 1);
	}
	return 0;
}

static void test_timers_on_fd_cpu(void **state)
{
	unsigned int i;

	(void)state;
	reader_setup(&rd, 0);
	memset(&tm, 0, sizeof(tm));
	assert_int_equal(vnic_cpu_add(&rd.cpu, &tm.p, "t", timed_poll), 0);
	tm.deadline[0] = vnic_now_ns() + 2000000;
	vnic_poller_set_timer(&tm.p, tm.deadline[0]);
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	assert_true(vnic_test_wait_count(&tm.done, 1));
	vnic_cpu_stop(&rd.cpu);
	assert_int_equal(tm.fires, 3);
	for (i = 0; i < 3; i++)
		assert_true(tm.ran_at[i] >= tm.deadline[i]);
	assert_int_equal(rd.p.runs, 0);
	reader_teardown(&rd);
}

/* ---------------------------------------------------------------------------
 * Manual mode and setup errors
 * ------------------------------------------------------------------------- */

static void test_manual_and_errors(void **state)
{
	struct vnic_cpu other;
	struct vnic_poller stray;

	(void)state;
	reader_setup(&rd, 0);
	/* Setup errors. */
	assert_int_equal(vnic_cpu_add_fd(&rd.cpu, rd.fds[0], EPOLLIN, &rd.p), -EINVAL);
	assert_int_equal(vnic_cpu_add_fd(&rd.cpu, -1, EPOLLIN, &rd.p), -EINVAL);
	assert_int_equal(vnic_cpu_init(&other, "other", 0), 0);
	assert_int_equal(vnic_cpu_add(&other, &stray, "stray", reader_poll), 0);
	assert_int_equal(vnic_cpu_add_fd(&rd.cpu, rd.fds[1], EPOLLOUT, &stray), -EINVAL);
	assert_int_equal(vnic_cpu_mod_fd(&rd.cpu, rd.fds[1], EPOLLOUT), -ENOENT);
	assert_int_equal(vnic_cpu_mod_fd(&other, rd.fds[0], EPOLLIN), -ENOENT);
	assert_null(other.fds);
	vnic_cpu_fini(&other);

	/* Nothing readable: nothing runs. */
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 0);
	put(&rd, "ab");
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 1);
	assert_int_equal(atomic_load(&rd.bytes), 2);
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 0);

	/* Not watched: data waits. Watched again: delivered. */
	assert_int_equal(vnic_cpu_mod_fd(&rd.cpu, rd.fds[0], 0), 0);
	assert_int_equal(vnic_cpu_mod_fd(&rd.cpu, rd.fds[0], 0), 0); /* idempotent */
	put(&rd, "c");
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 0);
	assert_int_equal(vnic_cpu_mod_fd(&rd.cpu, rd.fds[0], EPOLLIN), 0);
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 1);
	assert_int_equal(atomic_load(&rd.bytes), 3);

	/* EPOLLOUT on the write end: a pipe with room is writable at once. */
	assert_int_equal(vnic_cpu_add_fd(&rd.cpu, rd.fds[1], EPOLLOUT, &rd.nop), 0);
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 1);
	assert_int_equal(rd.nop.runs, 1);
	/* Level-triggered: still writable, so it runs again. */
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 1);
	assert_int_equal(rd.nop.runs, 2);
	assert_int_equal(vnic_cpu_mod_fd(&rd.cpu, rd.fds[1], 0), 0);
	assert_int_equal(vnic_cpu_run_once(&rd.cpu), 0);
	reader_teardown(&rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manual_and_errors),
		cmocka_unit_test(test_pipe_wakes_sleeping),
		cmocka_unit_test(test_pipe_wakes_busy_poll),
		cmocka_unit_test(test_one_wait_per_idle),
		cmocka_unit_test(test_mod_fd_stops_and_restarts),
		cmocka_unit_test(test_pingpong_eventfd_sleeping),
		cmocka_unit_test(test_pingpong_eventfd_busy_poll),
		cmocka_unit_test(test_timers_on_fd_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
