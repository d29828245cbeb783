// SPDX-License-Identifier: MIT
/*
 * The device's scheduled faults (docs/FAULTS.md) against the hostile test
 * driver (harness.c): a self reset and a failover (the event, the transport
 * gone, then INIT), an error indication (fatal: the device halts until the
 * driver's INIT), a physical link flap, and stopping the faults in the
 * middle of one. Each one is what the driver sees on its CRQ, and a counter.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static void create(struct h_env *e, const char *spec)
{
	struct vnic_dev_config c;

	vnic_dev_config_default(&c);
	assert_int_equal(vnic_fault_parse(spec, &c.fault), 0);
	h_create(e, &c, NULL);
	h_bringup(e, 1, 1);
}

/* The messages on the driver's CRQ now, link indications included, into out. */
static unsigned int take(struct h_env *e, struct vnic_crq *out, unsigned int max)
{
	unsigned int n = 0;
	struct vnic_crq m;

	while (vnic_hv_crq_recv(e->hv, VNIC_HV_CLIENT, &m))
		if (n < max)
			out[n++] = m;
	return n;
}

/*
 * Steps the device until a message is on the driver's CRQ (at most 2 s);
 * takes it. Waiting for the event itself, not for a period, keeps the test
 * independent of how fast the machine is.
 */
static void wait_msg(struct h_env *e, struct vnic_crq *out)
{
	uint64_t end = vnic_now_ns() + 2000000000ull;

	while (!vnic_hv_crq_recv(e->hv, VNIC_HV_CLIENT, out)) {
		assert_true((int64_t)(vnic_now_ns() - end) < 0);
		h_run_for(e, 1000000);
	}
}

/*
 * A clock the test moves by hand (vnic_dev_fault_clock): a fault happens
 * when the test says, so no second one comes however late this thread runs.
 */
static uint64_t test_clock;

static uint64_t test_now(void)
{
	return test_clock;
}

/* create() on the test's clock, its faults enabled: none due yet. */
static void create_clocked(struct h_env *e, const char *spec)
{
	test_clock = 1000000000ull;
	create(e, spec);
	vnic_dev_fault_clock(e->dev, test_now);
	vnic_dev_faults_enable(e->dev, true);
	assert_true(h_run(e));
}

/* Moves the test's clock by ns and lets the device see it and settle. */
static void advance(struct h_env *e, uint64_t ns)
{
	test_clock += ns;
	vnic_dev_faults_enable(e->dev, true);
	assert_true(h_run(e));
}

/* Stops the faults and lets the device settle (its fault timer is off then). */
static void stop(struct h_env *e)
{
	vnic_dev_faults_enable(e->dev, false);
	assert_true(h_run(e));
}

static void self_reset(const char *spec, uint8_t reason, const char *ctr)
{
	union vnic_subcrq_entry d;
	struct vnic_crq m[8];
	struct h_env e;

	create(&e, spec);
	vnic_dev_faults_enable(e.dev, true);
	/* the event, and the transport closed behind it */
	wait_msg(&e, &m[0]);
	assert_int_equal(m[0].first, VNIC_CRQ_XPORT_EVENT);
	assert_int_equal(m[0].xport.reason, reason);
	assert_int_equal(h_ctr(&e, ctr), 1);
	assert_int_equal(h_ctr(&e, "state"), 0);
	h_tx_desc(&e, &d, 1, 0, 60, 0, 0);
	assert_int_equal(vnic_hv_send_subcrq(e.hv, VNIC_HV_CLIENT, e.txsubm[0], &d), VNIC_H_CLOSED);
	/* down-for later: back, and says so */
	wait_msg(&e, &m[0]);
	assert_int_equal(m[0].first, VNIC_CRQ_INIT_CMD);
	assert_int_equal(m[0].init.type, VNIC_CRQ_INIT);
	assert_int_equal(take(&e, m, 8), 0);
	/* the old rings are gone; a new bring-up works */
	assert_int_equal(vnic_hv_send_subcrq(e.hv, VNIC_HV_CLIENT, e.txsubm[0], &d),
			 VNIC_H_PARAMETER);
	stop(&e);
	h_bringup(&e, 1, 1);
	assert_int_equal(h_ctr(&e, ctr), 1);
	h_destroy(&e);
}

/*
 * A period well over down-for: a test thread preempted past the next period
 * would see the device come back and go again, its INIT flushed with the
 * closed transport, and no INIT at all.
 */
static void test_reset_every(void **state)
{
	(void)state;
	self_reset("reset-every=100ms,down-for=10ms", VNIC_XPORT_PARTNER_CLOSED, "fault_resets");
}

static void test_failover_every(void **state)
{
	(void)state;
	self_reset("failover-every=100ms,down-for=10ms", VNIC_XPORT_FAILOVER, "fault_failovers");
}

/* Stopped while gone: the device comes back at once rather than never. */
static void test_stop_while_gone(void **state)
{
	struct vnic_crq m[4];
	struct h_env e;

	(void)state;
	create(&e, "reset-every=20s,down-for=10s");
	vnic_dev_faults_enable(e.dev, true);
	h_run_for(&e, 1000000);
	stop(&e);
	/* stopped before the first one: nothing happened */
	assert_int_equal(take(&e, m, 4), 0);
	h_destroy(&e);

	create(&e, "reset-every=100ms,down-for=99ms");
	vnic_dev_faults_enable(e.dev, true);
	wait_msg(&e, &m[0]);
	assert_int_equal(m[0].first, VNIC_CRQ_XPORT_EVENT);
	stop(&e);
	assert_int_equal(take(&e, m, 4), 1);
	assert_int_equal(m[0].first, VNIC_CRQ_INIT_CMD);
	h_bringup(&e, 1, 1);
	h_destroy(&e);
}

static void test_err_ind_fatal(void **state)
{
	union vnic_subcrq_entry d;
	struct vnic_crq m[4];
	struct h_env e;
	uint32_t corr[4];
	uint16_t rc[4];

	(void)state;
	create_clocked(&e, "err-ind-every=100ms,err-ind-fatal=1");
	advance(&e, 99999999);
	assert_int_equal(take(&e, m, 4), 0);
	advance(&e, 1);
	assert_int_equal(take(&e, &m[0], 1), 1);
	stop(&e);
	assert_int_equal(take(&e, &m[1], 3), 0);
	assert_int_equal(m[0].first, VNIC_CRQ_CMD_RSP);
	assert_int_equal(m[0].cmd, VNIC_CMD_ERROR_INDICATION);
	assert_int_equal(m[0].error.flags, VNIC_ERR_FATAL);
	assert_int_equal(vnic_be32_get(&m[0].error.error_id), 1);
	assert_int_equal(h_ctr(&e, "fault_err_inds"), 1);
	assert_int_equal(h_ctr(&e, "fault_err_inds_fatal"), 1);
	assert_int_equal(h_ctr(&e, "halted"), 1);
	/* halted: a descriptor waits in the ring, a frame from the wire is dropped */
	h_tx_desc(&e, &d, 5, 0, 60, 0, 0);
	assert_int_equal(h_tx_send(&e, 0, &d, 1), VNIC_H_SUCCESS);
	assert_true(h_run(&e));
	assert_int_equal(h_tx_comps(&e, 0, corr, rc, 4), 0);
	assert_int_equal(h_ctr(&e, "tx0_packets"), 0);
	/* the driver's INIT resets it: the descriptor is counted as never read */
	h_init(&e);
	assert_int_equal(h_ctr(&e, "halted"), 0);
	assert_int_equal(h_ctr(&e, "tx0_reset_unread"), 1);
	h_destroy(&e);
}

static void test_err_ind_non_fatal(void **state)
{
	struct vnic_crq m[8];
	struct h_env e;
	unsigned int n;

	(void)state;
	create(&e, "err-ind-every=10ms");
	vnic_dev_faults_enable(e.dev, true);
	/* Three of them, however late this thread runs: a late run skips, never repeats. */
	for (uint64_t end = vnic_now_ns() + 2000000000ull; h_ctr(&e, "fault_err_inds") < 3;) {
		assert_true((int64_t)(vnic_now_ns() - end) < 0);
		h_run_for(&e, 1000000);
	}
	stop(&e);
	n = take(&e, m, 8);
	assert_true(n >= 3 && n < 8);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(m[i].cmd, VNIC_CMD_ERROR_INDICATION);
		assert_int_equal(m[i].error.flags, 0);
		assert_int_equal(vnic_be32_get(&m[i].error.error_id), i + 1);
	}
	assert_int_equal(h_ctr(&e, "fault_err_inds"), n);
	assert_int_equal(h_ctr(&e, "fault_err_inds_fatal"), 0);
	assert_int_equal(h_ctr(&e, "halted"), 0);
	h_destroy(&e);
}

static void test_link_flap(void **state)
{
	union vnic_subcrq_entry d;
	struct vnic_crq m[4];
	struct h_env e;
	uint32_t corr[4];
	uint16_t rc[4];

	(void)state;
	create_clocked(&e, "link-flap-every=20ms,link-down-for=19ms");
	advance(&e, 20000000);
	assert_int_equal(take(&e, &m[0], 1), 1);
	assert_int_equal(m[0].cmd, VNIC_CMD_LINK_STATE_INDICATION);
	assert_int_equal(m[0].link_ind.phys_link_state, VNIC_LINK_DOWN);
	assert_int_equal(m[0].link_ind.logical_link_state, VNIC_LINK_UP);
	assert_int_equal(h_ctr(&e, "phys_link_up"), 0);
	/* no carrier: a packet is completed ABORTED, not sent */
	h_tx_desc(&e, &d, 9, 0, 60, 0, 0);
	assert_int_equal(h_tx_send(&e, 0, &d, 1), VNIC_H_SUCCESS);
	assert_true(h_run(&e));
	assert_int_equal(h_tx_comps(&e, 0, corr, rc, 4), 1);
	assert_int_equal(corr[0], 9);
	assert_int_equal(rc[0], VNIC_RC_ABORTED);
	assert_int_equal(h_ctr(&e, "tx0_drop_no_carrier"), 1);
	/* still down a nanosecond before link-down-for, then up again */
	advance(&e, 18999999);
	assert_int_equal(take(&e, m, 4), 0);
	assert_int_equal(h_ctr(&e, "phys_link_up"), 0);
	advance(&e, 1);
	assert_int_equal(take(&e, &m[0], 1), 1);
	stop(&e);
	assert_int_equal(take(&e, m, 4), 0);
	assert_int_equal(m[0].link_ind.phys_link_state, VNIC_LINK_UP);
	assert_int_equal(h_ctr(&e, "phys_link_up"), 1);
	assert_int_equal(h_ctr(&e, "fault_link_flaps"), 1);
	h_destroy(&e);
}

/* A query's answer keeps 0xFF and carries the state @3; an indication follows it. */
static void test_link_query(void **state)
{
	struct vnic_crq q, r;
	struct h_env e;

	(void)state;
	h_create(&e, NULL, NULL);
	h_crq_cmd(&q, VNIC_CMD_LOGICAL_LINK_STATE);
	q.link_state.state = VNIC_LINK_QUERY;
	/* not logged in: the driver learns the device does not know it */
	assert_int_equal(h_cmd(&e, &q, NULL), VNIC_RC_INVALIDSTATE);
	h_bringup(&e, 1, 1);
	e.link_inds = 0;
	assert_int_equal(h_cmd(&e, &q, &r), VNIC_RC_SUCCESS);
	assert_int_equal(r.link_state.state, VNIC_LINK_QUERY);
	assert_int_equal(r.link_state.query_state, VNIC_LINK_UP);
	assert_int_equal(e.link_inds, 1);
	assert_int_equal(e.last_link_ind.link_ind.phys_link_state, VNIC_LINK_UP);
	h_destroy(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_every),
		cmocka_unit_test(test_failover_every),
		cmocka_unit_test(test_stop_while_gone),
		cmocka_unit_test(test_err_ind_fatal),
		cmocka_unit_test(test_err_ind_non_fatal),
		cmocka_unit_test(test_link_flap),
		cmocka_unit_test(test_link_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
