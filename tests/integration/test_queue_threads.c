// SPDX-License-Identifier: MIT
/*
 * A bench with --queues 3 on threads of their own: cpu threads a and b for
 * queue pairs 0 and 1, q2 for queue pair 2 (docs/ARCHITECTURE.md section
 * 4.3). Every thread, q2 included, is reached by `vnic set busy-poll...`
 * (the thread takes the new spin up: cpu_q2.spin_limit_ns), listed by
 * `vnic show`, and named in the report, text and JSON, as its counters name
 * it. The run says the machine has 4 cpus (online_cpus), so that the three
 * threads are spread on a machine with two as on one with more. No rate is
 * asserted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"
#include "live_run.h"
#include "support.h"

enum {
	QUEUES = 3,
	ASK_TIMEOUT_MS = 20000,
	TAKE_UP_TRIES = 2000,	/* 10 ms apart: a bound on a hang, not a timing check */
};

static struct vnic_test_live *b;
static char name[48], path[256];

/* The answer to req; the test fails if the socket does not answer. */
static char *ask(const char *req)
{
	return vnic_test_ask(path, req, ASK_TIMEOUT_MS);
}

static void assert_has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("wanted '%s' in:\n%s", want, text);
}

static int setup(void **state)
{
	(void)state;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -1;
	vnic_bench_opts_default(&b->o, VNIC_WL_RR);
	b->o.duration_s = 60;	/* ended by stop once the live tests are done */
	b->o.quiet = true;
	b->o.ctl = true;
	snprintf(name, sizeof(name), "qthreads-%d", (int)getpid());
	b->o.ctl_name = name;
	b->o.rr.sessions = 2 * QUEUES;
	b->o.topo.host_pkts = 512;
	b->o.topo.drv.tx_queues = b->o.topo.drv.rx_queues = QUEUES;
	b->o.topo.online_cpus = 4;
	/*
	 * A queue pair's round trip never leaves its thread, so without a
	 * wait on the cable a thread is never idle, and it is when idle that
	 * a thread takes a busy-poll change up.
	 */
	b->o.topo.cable.delay_ns = 100000;
	if (vnic_ctl_path(name, path, sizeof(path)))
		return -1;
	return vnic_test_live_start(b);
}

static int teardown(void **state)
{
	(void)state;
	vnic_test_live_free(b);
	return 0;
}

/* Until cpu_NAME.spin_limit_ns is want: the thread itself took the fixed spin up. */
static void wait_spin_limit(const char *thread, uint64_t want)
{
	char cname[48];
	uint64_t v = 0;

	snprintf(cname, sizeof(cname), "cpu_%s.spin_limit_ns", thread);
	for (int i = 0; i < TAKE_UP_TRIES; i++) {
		v = vnic_test_ctr(path, cname, ASK_TIMEOUT_MS);
		if (v == want)
			return;
		vnic_test_nap_us(10000);
	}
	fail_msg("%s is %llu, never %llu", cname, (unsigned long long)v,
		 (unsigned long long)want);
}

static void test_busy_poll_reaches_every_thread(void **state)
{
	static const char *const threads[] = { "a", "b", "q2" };
	char *out, want[96];

	(void)state;
	vnic_test_wait_running(path, 1000);
	out = ask("show");
	/* three threads: the queue pairs are spread, q2 on its own (the default busy-poll) */
	assert_has(out, "thread q2: busy-poll-us 50 busy-poll adaptive");
	assert_null(strstr(out, "thread q3:"));
	free(out);

	out = ask("set busy-poll fixed busy-poll-us 20");
	assert_has(out, "ok: busy-poll changed, live");
	free(out);
	out = ask("show");
	for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		snprintf(want, sizeof(want), "thread %s: busy-poll-us 20 busy-poll fixed",
			 threads[i]);
		assert_has(out, want);
	}
	free(out);
	/* a fixed spin is the limit itself once the thread looks: each one did */
	for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++)
		wait_spin_limit(threads[i], 20000);
	out = ask("show json");
	assert_has(out, "\"thread\": \"q2\"");
	assert_has(out, "\"busy_poll_us\": 20");
	assert_has(out, "\"spin_limit_ns\": 20000");
	free(out);
}

/* Entries of the JSON array key (numbers or strings, none nested). */
static unsigned int array_len(const char *text, const char *key)
{
	const char *p = strstr(text, key), *end;
	unsigned int n = 1;

	assert_non_null(p);
	p = strchr(p, '[');
	assert_non_null(p);
	end = strchr(p, ']');
	assert_non_null(end);
	for (; p < end; p++)
		n += *p == ',';
	return n;
}

static char *report(bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	b->o.json = json;
	vnic_bench_report(&b->r, f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(text);
	return text;
}

static void test_report_names_every_thread(void **state)
{
	char *text;

	(void)state;
	vnic_test_live_stop(b);
	assert_int_equal(b->err, 0);
	assert_int_equal(b->r.topo.spread, QUEUES);
	assert_int_equal(b->r.nthreads, QUEUES);
	/* q2 ran: its CPU and its work turns are in the run's figures */
	assert_true(b->r.thread_cpu_s[2] > 0);

	text = report(false);
	assert_has(text, "3 queue(s), a thread each");
	assert_has(text, "(threads a ");
	assert_has(text, ", q2 ");
	assert_has(text, "wake-ups cpu a / b / q2");
	free(text);

	text = report(true);
	assert_has(text, "\"thread_names\": [");
	assert_has(text, "\"q2\"");
	assert_int_equal(array_len(text, "\"thread_names\""), QUEUES);
	assert_int_equal(array_len(text, "\"thread_cpu_s\""), QUEUES);
	assert_int_equal(array_len(text, "\"spin_cpu_s\""), QUEUES);
	assert_int_equal(array_len(text, "\"work_turn_s\""), QUEUES);
	assert_has(text, "\"cpu_q2.loops\"");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_poll_reaches_every_thread),
		cmocka_unit_test(test_report_names_every_thread),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
