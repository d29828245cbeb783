// SPDX-License-Identifier: MIT
/*
 * fd sources of vnic_cpu (label "threaded", also run under TSan): a pipe
 * written from another thread wakes the cpu out of epoll_wait and runs the
 * poller registered for it; vnic_cpu_mod_fd stops and restarts delivery; a
 * schedule from another thread still wakes an fd cpu (the eventfd path) and
 * loses no wake-up in a ping-pong with a futex cpu; timers still fire while
 * the cpu sleeps in epoll_wait; an idle costs one epoll_wait, whether the fd
 * or a schedule woke it, and a quiet turn before an idle (a timer's) costs
 * no look of its own, while what lands during that turn still ends the
 * sleep; a spinning cpu looks at the fds marked for it by
 * running their pollers, and at an fd marked to be seen through its spin
 * source by peeking that source alone. Plus the same in manual mode and the setup errors.
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
 * A turn that owes a look and leaves the cpu idle costs no look of its
 * own: the epoll_wait the cpu sleeps in is that look (fd_looks counts the
 * non-blocking ones). Two such turns: a timer's, after the sleep it ended,
 * which brings nothing from other threads; and the turn after a long one
 * (a poller that works longer than VNIC_CPU_FD_POLL_NS, as a backing
 * socket's send does, and schedules another). Looking before the sleep
 * would cost a look per round. And what lands while such a turn
 * runs (a byte in the reader's pipe, a schedule from another thread, both)
 * still ends the sleep that follows it: the turn's look is that sleep.
 * ------------------------------------------------------------------------- */

enum { TICKS = 50, TICK_NS = 2000000, ACT_ROUNDS = 12, LONG_ROUNDS = 50 };

struct ticker {
	struct vnic_poller p;	/* runs when its timer is due */
	struct vnic_poller arm;	/* arms p's timer, on the owner's thread */
	struct vnic_poller slow; /* works twice VNIC_CPU_FD_POLL_NS, schedules next */
	struct vnic_poller next;
	_Atomic uint64_t nexts;
	unsigned int left;	/* timers p still re-arms by itself; owner only */
	_Atomic int wait_act;	/* p waits in each run for the test's action */
	_Atomic uint64_t fires;
	_Atomic uint64_t acted;	/* the run of this number saw the test act */
};

static struct ticker tk;

static int tick_poll(struct vnic_poller *p, int budget)
{
	struct ticker *t = vnic_container_of(p, struct ticker, p);
	uint64_t n = atomic_fetch_add(&t->fires, 1) + 1;
	uint64_t end = vnic_now_ns() + (uint64_t)VNIC_TEST_HANG_GUARD_S * 1000000000ull;

	(void)budget;
	/* the test acts inside this turn (the hang guard: the test's own wait fails) */
	while (atomic_load(&t->wait_act) && atomic_load(&t->acted) < n && vnic_now_ns() < end)
		vnic_test_nap_us(50);
	if (t->left) {
		t->left--;
		vnic_poller_set_timer(p, vnic_now_ns() + TICK_NS);
	}
	return 0;
}

static int arm_poll(struct vnic_poller *p, int budget)
{
	struct ticker *t = vnic_container_of(p, struct ticker, arm);

	(void)budget;
	vnic_poller_set_timer(&t->p, vnic_now_ns() + TICK_NS);
	return 0;
}

static int slow_poll(struct vnic_poller *p, int budget)
{
	struct ticker *t = vnic_container_of(p, struct ticker, slow);
	uint64_t end = vnic_now_ns() + 2 * VNIC_CPU_FD_POLL_NS;

	(void)budget;
	while (vnic_now_ns() < end)
		vnic_cpu_relax();
	vnic_poller_schedule(&t->next);
	return 1;
}

static int next_poll(struct vnic_poller *p, int budget)
{
	struct ticker *t = vnic_container_of(p, struct ticker, next);

	(void)budget;
	atomic_fetch_add(&t->nexts, 1);
	return 1;
}

static void test_quiet_turn_before_idle(void **state)
{
	uint64_t looks, waits, sleeps, fires, want_bytes = 0, want_nops = 0;

	(void)state;
	reader_setup(&rd, 0);
	memset(&tk, 0, sizeof(tk));
	assert_int_equal(vnic_cpu_add(&rd.cpu, &tk.p, "tick", tick_poll), 0);
	assert_int_equal(vnic_cpu_add(&rd.cpu, &tk.arm, "arm", arm_poll), 0);
	assert_int_equal(vnic_cpu_add(&rd.cpu, &tk.slow, "slow", slow_poll), 0);
	assert_int_equal(vnic_cpu_add(&rd.cpu, &tk.next, "next", next_poll), 0);
	tk.left = TICKS - 1;
	vnic_poller_set_timer(&tk.p, vnic_now_ns() + TICK_NS);
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	assert_true(vnic_test_wait_count(&tk.fires, TICKS));
	assert_true(vnic_test_wait_asleep(&rd.cpu));
	looks = vnic_ctr_read(&rd.cpu.stats.fd_looks);
	waits = vnic_ctr_read(&rd.cpu.stats.fd_waits);
	sleeps = vnic_ctr_read(&rd.cpu.stats.sleeps);
	print_message("%d timers: %llu epoll_waits, %llu of them looks, %llu sleeps\n", TICKS,
		      (unsigned long long)waits, (unsigned long long)looks,
		      (unsigned long long)sleeps);
	/*
	 * each timer ended a sleep, or was found due by a turn that then paid
	 * a look, but perhaps the first (due already, on a slow start) ...
	 */
	assert_true(waits + 1 >= TICKS);
	/*
	 * ... and its turn looked only if the next timer was due before the
	 * cpu was idle again (a thread held off its core for TICK_NS): a
	 * look before each sleep would be TICKS of them
	 */
	assert_true(looks <= TICKS / 2);

	/*
	 * A long turn, then one of the work it scheduled, then idle: the second
	 * turn came VNIC_CPU_FD_POLL_NS after the sleep's look and owes one. It
	 * is paid only if the first turn owed one too (the thread held off its
	 * core between the wake-up and that turn): a look before each sleep
	 * would be LONG_ROUNDS of them.
	 */
	looks = vnic_ctr_read(&rd.cpu.stats.fd_looks);
	for (unsigned int r = 1; r <= LONG_ROUNDS; r++) {
		assert_true(vnic_test_wait_asleep(&rd.cpu));
		vnic_poller_schedule(&tk.slow);
		assert_true(vnic_test_wait_count(&tk.nexts, r));
	}
	assert_true(vnic_test_wait_asleep(&rd.cpu));
	looks = vnic_ctr_read(&rd.cpu.stats.fd_looks) - looks;
	print_message("%d long turns: %llu looks\n", LONG_ROUNDS, (unsigned long long)looks);
	assert_true(looks <= LONG_ROUNDS / 2);

	/* the test acts inside a timer's turn: the sleep after it must end */
	atomic_store(&tk.wait_act, 1);
	for (unsigned int r = 0; r < ACT_ROUNDS; r++) {
		assert_true(vnic_test_wait_asleep(&rd.cpu));
		fires = atomic_load(&tk.fires);
		vnic_poller_schedule(&tk.arm);
		assert_true(vnic_test_wait_count(&tk.fires, fires + 1));
		if (r % 3 != 1) {
			put(&rd, "w");
			want_bytes++;
		}
		if (r % 3 != 0) {
			vnic_poller_schedule(&rd.nop);
			want_nops++;
		}
		atomic_store(&tk.acted, fires + 1);
		assert_true(vnic_test_wait_count(&rd.bytes, want_bytes));
		assert_true(vnic_test_wait_count(&rd.nop_runs, want_nops));
	}
	vnic_cpu_stop(&rd.cpu);
	assert_int_equal(atomic_load(&rd.bytes), want_bytes);
	assert_int_equal(atomic_load(&rd.nop_runs), want_nops);
	assert_int_equal(rd.sum, want_bytes * 'w');
	assert_int_equal(atomic_load(&tk.fires), TICKS + ACT_ROUNDS);
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
	 * at its fds (in the epoll_wait it sleeps in). Were the pipe
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
 * How a spin looks at the fds (vnic_cpu_fd_look_by_run): a cpu that spins
 * with only marked fds watched for EPOLLIN, at most VNIC_CPU_FD_PROBE_MAX
 * of them, runs their pollers instead of asking epoll_wait, and the run
 * reads what came; any other fd watched (unmarked, edge-triggered, or one
 * fd too many) makes it look by epoll_wait. A fixed spin far longer than
 * the test: the cpu never sleeps, so every look counted is a spin's.
 * ------------------------------------------------------------------------- */

enum { SPIN_FOREVER_NS = 600000000000ull, PROBE_ROUNDS = 100 };

struct looks {
	unsigned int extra;	/* pipes beside the reader's, their poller nop */
	uint32_t events;	/* what they are watched for (0: registered only) */
	bool mark_reader;	/* the reader's pipe marked to be looked at by a run */
	bool by_run;		/* expected: the spin runs the pollers */
};

static void run_spin_looks(const struct looks *l)
{
	int more[VNIC_CPU_FD_PROBE_MAX + 1][2];
	uint64_t want = 0, i, probes, hits, waits, nops;

	assert_true(l->extra <= VNIC_CPU_FD_PROBE_MAX + 1);
	reader_setup(&rd, SPIN_FOREVER_NS);
	vnic_cpu_set_spin(&rd.cpu, VNIC_CPU_SPIN_FIXED);
	if (l->mark_reader)
		assert_int_equal(vnic_cpu_fd_look_by_run(&rd.cpu, rd.fds[0]), 0);
	for (i = 0; i < l->extra; i++) {
		assert_int_equal(pipe2(more[i], O_NONBLOCK | O_CLOEXEC), 0);
		assert_int_equal(vnic_cpu_add_fd(&rd.cpu, more[i][0], l->events, &rd.nop), 0);
		assert_int_equal(vnic_cpu_fd_look_by_run(&rd.cpu, more[i][0]), 0);
	}
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	assert_int_equal(vnic_cpu_fd_look_by_run(&rd.cpu, rd.fds[0]), -EBUSY);
	for (i = 0; i < PROBE_ROUNDS; i++) {
		put(&rd, "a");
		assert_true(vnic_test_wait_count(&rd.bytes, ++want));
	}
	probes = vnic_ctr_read(&rd.cpu.stats.fd_probes);
	hits = vnic_ctr_read(&rd.cpu.stats.fd_probe_hits);
	waits = vnic_ctr_read(&rd.cpu.stats.fd_waits);
	nops = atomic_load(&rd.nop_runs);
	/* a reader that stops watching its fd is not run by the spin again ... */
	put(&rd, "Syz");
	want++;
	assert_true(vnic_test_wait_count(&rd.stops, 1));
	vnic_test_nap_us(2000);
	assert_int_equal(atomic_load(&rd.bytes), want);
	/* ... until it watches it again */
	vnic_poller_schedule(&rd.ctl);
	want += 2;
	assert_true(vnic_test_wait_count(&rd.bytes, want));
	vnic_cpu_stop(&rd.cpu);
	print_message("spin looks: %llu probes (%llu hits), %llu epoll_waits, %llu sleeps\n",
		      (unsigned long long)rd.cpu.stats.fd_probes,
		      (unsigned long long)rd.cpu.stats.fd_probe_hits,
		      (unsigned long long)rd.cpu.stats.fd_waits,
		      (unsigned long long)rd.cpu.stats.sleeps);
	assert_int_equal(rd.cpu.stats.sleeps, 0);
	assert_int_equal(rd.sum, PROBE_ROUNDS * 'a' + 'S' + 'y' + 'z');
	/* the rounds before the stop: every byte was read by a look, one at a time */
	if (l->by_run) {
		/* the last run may not have returned yet */
		assert_true(hits + 1 >= PROBE_ROUNDS);
		assert_true(probes >= hits);
		assert_int_equal(waits, 0);
		assert_true(rd.cpu.stats.fd_probe_hits >= PROBE_ROUNDS);
	} else {
		assert_int_equal(probes, 0);
		assert_true(waits >= PROBE_ROUNDS);
	}
	/* a quiet fd's poller runs only as the spin's look at it */
	if (l->by_run && l->extra && l->events)
		assert_true(nops > 0);
	else
		assert_int_equal(nops, 0);
	reader_teardown(&rd);
	for (i = 0; i < l->extra; i++) {
		close(more[i][0]);
		close(more[i][1]);
	}
}

static void test_spin_runs_marked_fds(void **state)
{
	static const struct looks cases[] = {
		{0, 0, true, true},
		/* a second, quiet one: looked at in turn */
		{1, EPOLLIN, true, true},
		/* registered and not watched: not looked at */
		{VNIC_CPU_FD_PROBE_MAX + 1, 0, true, true},
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_spin_looks(&cases[i]);
	assert_int_equal(vnic_cpu_fd_look_by_run(&rd.cpu, rd.fds[0]), -ENOENT);
}

static void test_spin_epoll_for_others(void **state)
{
	static const struct looks cases[] = {
		{0, 0, false, false},
		{1, EPOLLIN | EPOLLET, true, false},
		{1, EPOLLIN | EPOLLOUT, true, false},
		/* one fd more than a run per look pays for */
		{VNIC_CPU_FD_PROBE_MAX, EPOLLIN, true, false},
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_spin_looks(&cases[i]);
}

/*
 * Turns across spins: two marked pipes whose pollers read one byte a run,
 * both readable before the start, the first with far more than the test
 * reads. Each hit ends a spin; the next spin's first look is at the other
 * pipe, so the second pipe's bytes are read while the first still has
 * nearly all of its own, instead of after it is drained.
 */
struct two {
	struct vnic_cpu cpu;
	struct vnic_poller p[2];
	int fds[2][2];
	uint64_t got[2];	/* owner only */
	uint64_t first_at_second; /* got[0] when pipe 1's last byte was read */
	_Atomic int done;
};

static struct two tw;

enum { TWO_BIG = 4000, TWO_SMALL = 2 };

static int one_byte_poll(struct vnic_poller *p, int budget)
{
	unsigned int i = p == &tw.p[0] ? 0 : 1;
	char c;

	(void)budget;
	if (read(tw.fds[i][0], &c, 1) != 1)
		return 0;
	if (++tw.got[i] == TWO_SMALL && i == 1) {
		tw.first_at_second = tw.got[0];
		atomic_store(&tw.done, 1);
	}
	return 1;
}

static void test_spin_looks_take_turns(void **state)
{
	static char big[TWO_BIG];
	unsigned int i;

	(void)state;
	memset(&tw, 0, sizeof(tw));
	memset(big, 'x', sizeof(big));
	assert_int_equal(vnic_cpu_init(&tw.cpu, "two", SPIN_FOREVER_NS), 0);
	vnic_cpu_set_spin(&tw.cpu, VNIC_CPU_SPIN_FIXED);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pipe2(tw.fds[i], O_NONBLOCK | O_CLOEXEC), 0);
		assert_int_equal(vnic_cpu_add(&tw.cpu, &tw.p[i], "one", one_byte_poll), 0);
		assert_int_equal(vnic_cpu_add_fd(&tw.cpu, tw.fds[i][0], EPOLLIN, &tw.p[i]), 0);
		assert_int_equal(vnic_cpu_fd_look_by_run(&tw.cpu, tw.fds[i][0]), 0);
	}
	assert_int_equal(write(tw.fds[0][1], big, TWO_BIG), TWO_BIG);
	assert_int_equal(write(tw.fds[1][1], big, TWO_SMALL), TWO_SMALL);
	assert_int_equal(vnic_cpu_start(&tw.cpu), 0);
	assert_true(vnic_test_wait_flag(&tw.done));
	vnic_cpu_stop(&tw.cpu);
	print_message("two pipes: the first had given %llu bytes when the second was read\n",
		      (unsigned long long)tw.first_at_second);
	/* one look at the first between the second's two, give or take the start */
	assert_true(tw.first_at_second <= TWO_SMALL);
	assert_true(tw.cpu.stats.fd_probe_hits >= TWO_SMALL + tw.first_at_second);
	vnic_cpu_fini(&tw.cpu);
	for (i = 0; i < 2; i++) {
		close(tw.fds[i][0]);
		close(tw.fds[i][1]);
	}
}

/* ---------------------------------------------------------------------------
 * An fd seen through its spin source (vnic_cpu_fd_look_by_src), as an
 * AF_PACKET socket is through its ring. Beside the reader's pipe, marked to
 * be looked at by a run, a "socket": an edge-triggered pipe whose poller
 * takes items from a "ring" (a counter the test thread raises), and a spin
 * source that peeks the ring, with no polling hook (the kernel wakes an
 * AF_PACKET socket whatever the cpu does: no flag to raise). Marked, the socket does not make the spin
 * look by epoll_wait: the reader's bytes are read by runs and no
 * epoll_wait is made. Unmarked, every look is an epoll_wait. Either way
 * the peek takes every item, those the pipe never reported too, and a run
 * for an edge of an item already taken finds nothing and copes.
 * ------------------------------------------------------------------------- */

struct ring {
	struct vnic_poller p;
	struct vnic_cpu_spin_src src;
	int fds[2];
	_Atomic uint64_t head;	/* items put, by the test thread */
	uint64_t tail;		/* owner only */
	_Atomic uint64_t taken;
	_Atomic uint64_t empty_runs;
};

static struct ring rg;

static int ring_poll(struct vnic_poller *p, int budget)
{
	struct ring *r = vnic_container_of(p, struct ring, p);
	uint64_t n = atomic_load(&r->head) - r->tail;

	(void)budget;
	r->tail += n;
	if (!n)
		atomic_fetch_add(&r->empty_runs, 1);
	atomic_fetch_add(&r->taken, n);
	return (int)n;
}

static bool ring_peek(struct vnic_cpu_spin_src *src)
{
	struct ring *r = vnic_container_of(src, struct ring, src);

	return atomic_load(&r->head) != r->tail;
}

/* An item, then (edge) the pipe's wake-up, as the kernel writes a frame and then wakes the socket. */
static void ring_put(bool edge)
{
	atomic_fetch_add(&rg.head, 1);
	if (edge)
		assert_int_equal(write(rg.fds[1], "r", 1), 1);
}

static void run_src_looks(bool mark)
{
	uint64_t i, waits0, probes0, hits0, want = 0;

	memset(&rg, 0, sizeof(rg));
	reader_setup(&rd, SPIN_FOREVER_NS);
	vnic_cpu_set_spin(&rd.cpu, VNIC_CPU_SPIN_FIXED);
	assert_int_equal(pipe2(rg.fds, O_NONBLOCK | O_CLOEXEC), 0);
	assert_int_equal(vnic_cpu_add(&rd.cpu, &rg.p, "ring", ring_poll), 0);
	assert_int_equal(vnic_cpu_fd_look_by_src(&rd.cpu, rg.fds[0]), -ENOENT);
	assert_int_equal(vnic_cpu_add_fd(&rd.cpu, rg.fds[0], EPOLLIN | EPOLLET, &rg.p), 0);
	/* no spin source of its poller yet, and none ever of the reader's */
	assert_int_equal(vnic_cpu_fd_look_by_src(&rd.cpu, rg.fds[0]), -EINVAL);
	/* a peek is needed; a polling hook is not: the pipe is written whatever the cpu does */
	rg.src.poller = &rg.p;
	assert_int_equal(vnic_cpu_add_spin_src(&rd.cpu, &rg.src), -EINVAL);
	rg.src.peek = ring_peek;
	assert_null(rg.src.polling);
	assert_int_equal(vnic_cpu_add_spin_src(&rd.cpu, &rg.src), 0);
	assert_int_equal(vnic_cpu_fd_look_by_src(&rd.cpu, rd.fds[0]), -EINVAL);
	assert_int_equal(vnic_cpu_fd_look_by_run(&rd.cpu, rd.fds[0]), 0);
	if (mark)
		assert_int_equal(vnic_cpu_fd_look_by_src(&rd.cpu, rg.fds[0]), 0);
	assert_int_equal(vnic_cpu_start(&rd.cpu), 0);
	assert_int_equal(vnic_cpu_fd_look_by_src(&rd.cpu, rg.fds[0]), -EBUSY);

	/* items the pipe never reports: only the peek finds them */
	for (i = 1; i <= PROBE_ROUNDS; i++) {
		ring_put(false);
		assert_true(vnic_test_wait_count(&rg.taken, i));
	}
	/* the reader's bytes alone: how the spin looks at the fds */
	waits0 = vnic_ctr_read(&rd.cpu.stats.fd_waits);
	probes0 = vnic_ctr_read(&rd.cpu.stats.fd_probes);
	hits0 = vnic_ctr_read(&rd.cpu.stats.fd_probe_hits);
	for (i = 0; i < PROBE_ROUNDS; i++) {
		put(&rd, "a");
		assert_true(vnic_test_wait_count(&rd.bytes, ++want));
	}
	waits0 = vnic_ctr_read(&rd.cpu.stats.fd_waits) - waits0;
	probes0 = vnic_ctr_read(&rd.cpu.stats.fd_probes) - probes0;
	/* the last run may not have returned yet */
	hits0 = vnic_ctr_read(&rd.cpu.stats.fd_probe_hits) + 1 - hits0;
	/* items with their edges: the edges of those the peek took find nothing */
	for (i = 1; i <= PROBE_ROUNDS; i++) {
		ring_put(true);
		assert_true(vnic_test_wait_count(&rg.taken, PROBE_ROUNDS + i));
	}
	vnic_cpu_stop(&rd.cpu);
	print_message("socket %s: %llu epoll_waits and %llu runs (%llu hits) for %d reads; "
		      "%llu ring runs that found nothing\n",
		      mark ? "marked" : "unmarked", (unsigned long long)waits0,
		      (unsigned long long)probes0, (unsigned long long)hits0, PROBE_ROUNDS,
		      (unsigned long long)atomic_load(&rg.empty_runs));
	assert_int_equal(rd.cpu.stats.sleeps, 0);
	assert_int_equal(atomic_load(&rg.taken), 2 * PROBE_ROUNDS);
	assert_int_equal(rd.sum, PROBE_ROUNDS * 'a');
	if (mark) {
		assert_int_equal(waits0, 0);
		assert_true(hits0 >= PROBE_ROUNDS);
	} else {
		assert_int_equal(probes0, 0);
		assert_true(waits0 >= PROBE_ROUNDS);
	}
	reader_teardown(&rd);
	close(rg.fds[0]);
	close(rg.fds[1]);
}

static void test_spin_src_stands_for_fd(void **state)
{
	(void)state;
	run_src_looks(true);
	run_src_looks(false);
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
		cmocka_unit_test(test_quiet_turn_before_idle),
		cmocka_unit_test(test_mod_fd_stops_and_restarts),
		cmocka_unit_test(test_spin_runs_marked_fds),
		cmocka_unit_test(test_spin_epoll_for_others),
		cmocka_unit_test(test_spin_looks_take_turns),
		cmocka_unit_test(test_spin_src_stands_for_fd),
		cmocka_unit_test(test_pingpong_eventfd_sleeping),
		cmocka_unit_test(test_pingpong_eventfd_busy_poll),
		cmocka_unit_test(test_timers_on_fd_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
