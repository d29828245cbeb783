// SPDX-License-Identifier: MIT
/*
 * `vnic show` and `vnic set` on a running bench, through its control
 * socket: what show reports, changes that take effect while the traffic
 * runs (seen in the counters), and changes refused with nothing changed.
 * No rate is asserted: only which counters move.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"
#include "live_run.h"
#include "support.h"

enum { SET_TIMEOUT_MS = 20000 };

static struct vnic_test_live *b;
static char path[256];

/* The answer to req; the test fails if the socket does not answer. */
static char *ask(const char *req)
{
	return vnic_test_ask(path, req, SET_TIMEOUT_MS);
}

/* A counter of the running bench, through "stats". */
static uint64_t ctr(const char *name)
{
	uint64_t v = vnic_test_ctr(path, name, SET_TIMEOUT_MS);

	if (v == UINT64_MAX)
		fail_msg("no counter %s", name);
	return v;
}

static int setup(void **state)
{
	(void)state;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -1;
	vnic_bench_opts_default(&b->o, VNIC_WL_RR);
	b->o.duration_s = 60; /* ended by stop, once the tests are done */
	b->o.quiet = true;
	b->o.ctl = true;
	b->o.ctl_name = "live-test";
	if (vnic_ctl_path("live-test", path, sizeof(path)))
		return -1;
	return vnic_test_live_start(b);
}

static int teardown(void **state)
{
	(void)state;
	vnic_test_live_free(b);
	return 0;
}

static void test_show(void **state)
{
	char *text;

	(void)state;
	vnic_test_wait_running(path, 500);
	text = ask("show");
	assert_non_null(strstr(text, "side a: carrier on"));
	assert_non_null(strstr(text, "channels     tx 1 rx 1"));
	assert_non_null(strstr(text, "mtu          1500"));
	assert_non_null(strstr(text, "bql          tx0 limit"));
	assert_non_null(strstr(text, "tx-submit"));
	assert_non_null(strstr(text, "(live)"));
	assert_non_null(strstr(text, "(fixed while running)"));
	free(text);
	text = ask("show json");
	assert_int_equal(text[0], '{');
	assert_non_null(strstr(text, "\"tx_queues\": 1"));
	assert_non_null(strstr(text, "\"tx-submit\": \"auto\""));
	free(text);
}

/* One session: every request alone, so auto sends direct; indirect stops that. */
static void test_policy_live(void **state)
{
	uint64_t d0, d1, d2;
	char *out;

	(void)state;
	vnic_test_wait_running(path, 500);
	d0 = ctr("drv_a.tx0_direct_packets");
	vnic_test_nap_us(200000);
	assert_true(ctr("drv_a.tx0_direct_packets") > d0);

	out = ask("set tx-submit indirect");
	assert_non_null(strstr(out, "ok: policies changed, live"));
	free(out);
	vnic_test_nap_us(100000);
	d1 = ctr("drv_a.tx0_direct_packets");
	vnic_test_nap_us(300000);
	d2 = ctr("drv_a.tx0_direct_packets");
	assert_true(d2 == d1);
	assert_true(ctr("drv_a.tx0_batched_packets") > 0);
	out = ask("show json");
	assert_non_null(strstr(out, "\"tx-submit\": \"indirect\""));
	free(out);

	out = ask("set tx-submit auto");
	assert_non_null(strstr(out, "ok:"));
	free(out);
	vnic_test_nap_us(300000);
	assert_true(ctr("drv_a.tx0_direct_packets") > d2);
}

/* A cable that starts losing frames, and stops. */
static void test_cable_live(void **state)
{
	uint64_t l0, l1;
	char *out;

	(void)state;
	vnic_test_wait_running(path, 500);
	out = ask("set loss 0.05");
	assert_non_null(strstr(out, "ok: cable changed, live"));
	free(out);
	vnic_test_nap_us(300000);
	l0 = ctr("cable.ab_drop_loss");
	assert_true(l0 > 0);
	out = ask("set loss 0");
	assert_non_null(strstr(out, "ok:"));
	free(out);
	vnic_test_nap_us(100000);
	l0 = ctr("cable.ab_drop_loss");
	vnic_test_nap_us(300000);
	l1 = ctr("cable.ab_drop_loss");
	assert_true(l1 == l0);
}

/* One bad pair, and nothing changes, the good pairs before it included. */
static void test_refused(void **state)
{
	static const struct {
		const char *req, *want;
	} bad[] = {
		{ "set tx-submit sometimes", "error: --tx-submit: 'sometimes' is not one of" },
		{ "set no-such 1", "error: 'no-such' is not a vNIC" },
		{ "set threads 1", "error: threads cannot change while running" },
		{ "set mtu 9000", "error: mtu cannot change while running here" },
		{ "set queues 2", "error: queues cannot change while running here" },
		{ "set tx-submit indirect rx-deliver batch", "error: --rx-deliver: 'batch'" },
		{ "set tx-submit", "error: tx-submit: no value" },
	};
	uint64_t errs0 = ctr("ctl.bad_requests");
	char *out;

	(void)state;
	vnic_test_wait_running(path, 500);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		out = ask(bad[i].req);
		if (!strstr(out, bad[i].want))
			fail_msg("'%s' answered '%s', wanted '%s'", bad[i].req, out, bad[i].want);
		free(out);
	}
	assert_true(ctr("ctl.bad_requests") >= errs0 + sizeof(bad) / sizeof(bad[0]));
	/* the first pair of the refused line did not take effect */
	out = ask("show json");
	assert_non_null(strstr(out, "\"tx-submit\": \"auto\""));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_policy_live),
		cmocka_unit_test(test_cable_live),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
