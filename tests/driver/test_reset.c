// SPDX-License-Identifier: MIT
/*
 * The driver's resets against the real device, hv and cable, in manual mode
 * (the test thread steps every cpu): one test per reason (tx watchdog,
 * fatal and non-fatal error indications, partner closed and back, a
 * partner's INIT, failover and mobility, change-param of the MTU and of the
 * queue counts), a reset requested during a reset, the hcall returns a
 * driver must survive (H_DROPPED, H_BUSY, H_CLOSED), the fallback to 16
 * indirect entries, and CRQ loss and duplication. Each checks what a reset
 * promises: every packet in flight completed to the host once (dropped),
 * pools full once closed, the link back with the values negotiated, and the
 * counters that say why.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drv_env.h"

/* enum drv_state values the tests look for (the counter "state") */
enum { ST_INIT = 1, ST_OPEN = 11, ST_DOWN = 13, ST_RESET_DOWN = 14, ST_RESET_WAIT = 16 };

static void open_all(struct env *e)
{
	for (unsigned int i = 0; i < e->nsides; i++)
		assert_int_equal(env_open(e, i), 0);
}

static void close_all(struct env *e)
{
	for (unsigned int i = 0; i < e->nsides; i++) {
		assert_int_equal(env_close(e, i), 0);
		assert_true(vnic_drv_pools_full(e->s[i].drv));
	}
}

static void drv_cfgs(struct vnic_drv_config c[2])
{
	env_drv_config(&c[0]);
	env_drv_config(&c[1]);
}

/* One lone frame A -> B, and everything settled. */
static void lone(struct env *e, struct vnic_pkt *p)
{
	assert_int_equal(env_xmit(e, 0, 0, p, false), VNIC_TX_OK);
	assert_true(env_run(e));
}

/* Steps every cpu, 1 ms at a time, until side's counter name reaches at least v (3 s). */
static void run_until_ctr(struct env *e, unsigned int side, const char *name, uint64_t v)
{
	uint64_t end = vnic_now_ns() + 3000000000ull;

	while (env_drv_ctr(e, side, name) < v) {
		if ((int64_t)(vnic_now_ns() - end) > 0)
			fail_msg("%s stayed at %llu, below %llu", name,
				 (unsigned long long)env_drv_ctr(e, side, name),
				 (unsigned long long)v);
		env_run_for(e, 1000000);
	}
}

/* The driver's own message to itself from the device's side of the hv. */
static void from_device(struct env *e, unsigned int side, const struct vnic_crq *m)
{
	assert_int_equal(vnic_hv_send_crq(e->v.hv[side], VNIC_HV_SERVER, m), VNIC_H_SUCCESS);
}

static void error_indication(struct env *e, unsigned int side, bool fatal)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_ERROR_INDICATION;
	m.error.flags = fatal ? VNIC_ERR_FATAL : 0;
	from_device(e, side, &m);
}

static void xport(struct env *e, unsigned int side, uint8_t reason)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_XPORT_EVENT;
	m.xport.reason = reason;
	from_device(e, side, &m);
}

static void partner_init(struct env *e, unsigned int side)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	from_device(e, side, &m);
}

/*
 * n frames A -> B on queue 0: the first n - held flushed (more = false on
 * the last of them), the last held batched (more = true). Returns how many
 * xmit took.
 */
static unsigned int inflight(struct env *e, const struct vnic_pktgen_flow *f, unsigned int n,
			     unsigned int held)
{
	unsigned int i, took = 0;

	for (i = 0; i < n; i++) {
		bool more = i + 1 < n - held || i >= n - held;

		if (env_xmit(e, 0, 0, env_frame(e, f, i, 50), more) == VNIC_TX_OK)
			took++;
	}
	return took;
}

/* Every packet xmit took was completed to the host exactly once. */
static void all_done(struct env *e, unsigned int side, uint64_t sent)
{
	struct env_host *h = &e->s[side].host;

	assert_int_equal(h->tx_done_ok + h->tx_done_dropped, sent);
}

/* --- the tx watchdog ------------------------------------------------------------ */

/*
 * One side, and nothing at the far end of the cable: once its slots are
 * full the device cannot send, no completion comes, the ring fills, the
 * queue stops, and the watchdog resets the driver (TIMEOUT: link down, the
 * device aborts what it holds, maps released, INIT, bring-up).
 */
static void test_tx_watchdog(void **state)
{
	struct vnic_cable_cfg cc = {.slots = 16};
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	struct vnic_netdev *nd;
	unsigned int sent = 0;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].bql = false;
	dc[0].tx_timeout_ns = 40000000;
	env_create(&e, 1, dc, NULL, &cc);
	open_all(&e);
	nd = vnic_drv_netdev(e.s[0].drv);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	while (!nd->ops->tx_stopped(nd, 0)) {
		assert_int_equal(env_xmit(&e, 0, 0, env_frame(&e, &f, sent, 50), false),
				 VNIC_TX_OK);
		sent++;
		env_run_for(&e, 100000);
		assert_true(sent < 1000);
	}
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 0);
	run_until_ctr(&e, 0, "reset_done", 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_timeout"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_timeouts"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 1);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	assert_int_equal(env_drv_ctr(&e, 0, "state"), ST_OPEN);
	/* a release: link down, every map unmapped, a new INIT */
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 2);
	/* no sooner than the timeout (and, sampled every quarter, not much later) */
	assert_true(env_drv_ctr(&e, 0, "reset_last_ns") > 0);
	/* every packet came back once: what the wire took, and what the device aborted */
	all_done(&e, 0, sent);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_used"), 0);
	assert_true(e.s[0].host.tx_done_dropped > 0);
	assert_int_equal(
		env_drv_ctr(&e, 0, "tx0_completions") + env_drv_ctr(&e, 0, "tx0_drop_reset"), sent);
	close_all(&e);
	env_destroy(&e);
}

/* --- error indications ----------------------------------------------------------------- */

static void test_fatal_error(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	unsigned int sent;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].bql = false;
	env_create(&e, 2, dc, NULL, NULL);
	open_all(&e);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	/* 20 sent, 4 batched and not yet flushed when the error comes */
	sent = inflight(&e, &f, 24, 4);
	assert_int_equal(sent, 24);
	error_indication(&e, 0, true);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "error_indications"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_fatal"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 1);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	/* the batch never sent was dropped; all the rest completed, once */
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_drop_flush"), 4);
	all_done(&e, 0, sent);
	/* released through the protocol: a new INIT, a new login; the other side untouched */
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 2);
	assert_int_equal(env_drv_ctr(&e, 1, "resets"), 0);
	assert_true(env_drv_ctr(&e, 0, "reset_max_ns") >= env_drv_ctr(&e, 0, "reset_last_ns"));
	assert_int_equal(env_drv_ctr(&e, 0, "reset_total_ns"), env_drv_ctr(&e, 0, "reset_last_ns"));
	/* and traffic flows */
	lone(&e, env_frame(&e, &f, 100, 50));
	assert_int_equal(e.s[0].host.tx_done_ok + e.s[0].host.tx_done_dropped, sent + 1);
	close_all(&e);
	env_destroy(&e);
}

/* A fatal error from the device's schedule: it halts until the driver's reset clears it. */
static void test_fatal_error_halts_device(void **state)
{
	struct vnic_dev_config vc[2];
	struct vnic_pktgen_flow f;
	struct env e;

	(void)state;
	env_dev_config(&vc[0]);
	env_dev_config(&vc[1]);
	assert_int_equal(vnic_fault_parse("err-ind-every=30ms,err-ind-fatal=1", &vc[0].fault), 0);
	env_create(&e, 2, NULL, vc, NULL);
	open_all(&e);
	vnic_dev_faults_enable(e.v.dev[0], true);
	run_until_ctr(&e, 0, "reset_done", 1);
	vnic_dev_faults_enable(e.v.dev[0], false);
	assert_true(env_run(&e));
	assert_true(env_drv_ctr(&e, 0, "resets_fatal") >= 1);
	assert_int_equal(env_dev_ctr(&e, 0, "halted"), 0);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	lone(&e, env_frame(&e, &f, 0, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 1);
	close_all(&e);
	env_destroy(&e);
}

/* Non-fatal: link down and up; the login and the maps stay. */
static void test_non_fatal_error(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	unsigned int sent;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].bql = false;
	env_create(&e, 2, dc, NULL, NULL);
	open_all(&e);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	sent = inflight(&e, &f, 10, 3);
	error_indication(&e, 0, false);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_non_fatal"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	/* no new INIT, no new map: only the link went down and up */
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 1);
	assert_int_equal(env_dev_ctr(&e, 0, "link_up"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_drop_flush"), 3);
	all_done(&e, 0, sent);
	assert_int_equal(env_drv_ctr(&e, 0, "rx0_posted"), 64);
	lone(&e, env_frame(&e, &f, 100, 50));
	close_all(&e);
	env_destroy(&e);
}

/* --- the partner goes and comes back ------------------------------------------------------ */

static void test_partner_closed_and_back(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	unsigned int sent;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].bql = false;
	env_create(&e, 2, dc, NULL, NULL);
	open_all(&e);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	sent = inflight(&e, &f, 12, 2);
	/* gone: its event, then the transport closed */
	xport(&e, 0, VNIC_XPORT_PARTNER_CLOSED);
	vnic_hv_crq_set_open(e.v.hv[0], false);
	env_run_for(&e, 50000000);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_xport"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "state"), ST_INIT);
	assert_false(vnic_drv_is_open(e.s[0].drv));
	/* everything came back locally: nothing could be released with a partner that is gone */
	all_done(&e, 0, sent);
	assert_int_equal(env_drv_ctr(&e, 0, "rx0_posted"), 0);
	assert_true(env_drv_ctr(&e, 0, "init_retries") >= 2);
	assert_true(env_drv_ctr(&e, 0, "crq_send_errors") >= 2);
	/* back, and says so: the driver's INIT goes at once */
	vnic_hv_crq_set_open(e.v.hv[0], true);
	partner_init(&e, 0);
	assert_true(env_run(&e));
	assert_true(vnic_drv_is_open(e.s[0].drv));
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 1);
	lone(&e, env_frame(&e, &f, 100, 50));
	assert_int_equal(e.s[0].host.tx_done_ok + e.s[0].host.tx_done_dropped, sent + 1);
	close_all(&e);
	env_destroy(&e);
}

/* An INIT from a partner that had us logged in: it reset (its event lost, or none sent). */
static void test_passive_init(void **state)
{
	struct vnic_pktgen_flow f;
	struct env e;

	(void)state;
	env_create(&e, 2, NULL, NULL, NULL);
	open_all(&e);
	partner_init(&e, 0);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_passive_init"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	lone(&e, env_frame(&e, &f, 0, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 1);
	/* closed, a partner's INIT changes nothing */
	close_all(&e);
	partner_init(&e, 0);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 2);
	assert_int_equal(env_drv_ctr(&e, 0, "state"), 0);
	assert_true(vnic_drv_pools_full(e.s[0].drv));
	/* and the next open starts from INIT */
	open_all(&e);
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 3);
	lone(&e, env_frame(&e, &f, 1, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 2);
	close_all(&e);
	env_destroy(&e);
}

/* --- failover ------------------------------------------------------------------------------- */

static void test_failover(void **state)
{
	struct vnic_pktgen_flow f;
	struct env e;

	(void)state;
	env_create(&e, 2, NULL, NULL, NULL);
	open_all(&e);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	/* the backing device switched: the event, then (a moment later) the new one's INIT */
	xport(&e, 0, VNIC_XPORT_FAILOVER);
	env_run_for(&e, 20000000);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_failover"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "state"), ST_RESET_WAIT);
	assert_false(vnic_drv_is_open(e.s[0].drv));
	partner_init(&e, 0);
	assert_true(env_run(&e));
	assert_true(vnic_drv_is_open(e.s[0].drv));
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 2);
	lone(&e, env_frame(&e, &f, 0, 50));
	/* no INIT comes: after VNIC_DRV_FAILOVER_WAIT_NS the driver's own finds the partner */
	xport(&e, 0, VNIC_XPORT_FAILOVER);
	run_until_ctr(&e, 0, "reset_done", 2);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_failover"), 2);
	assert_true(env_drv_ctr(&e, 0, "reset_last_ns") >= VNIC_DRV_FAILOVER_WAIT_NS);
	lone(&e, env_frame(&e, &f, 1, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 2);
	/* partition migrated (nothing of ours sends it): ibmvnic's mobility reset, from INIT */
	xport(&e, 0, VNIC_XPORT_MIGRATED);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_mobility"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 3);
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 4);
	lone(&e, env_frame(&e, &f, 2, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 3);
	close_all(&e);
	env_destroy(&e);
}

/* The device's own failover (failover-every), end to end. */
static void test_failover_scheduled(void **state)
{
	struct vnic_dev_config vc[2];
	struct vnic_pktgen_flow f;
	struct env e;

	(void)state;
	env_dev_config(&vc[0]);
	env_dev_config(&vc[1]);
	assert_int_equal(vnic_fault_parse("failover-every=40ms,down-for=5ms", &vc[0].fault), 0);
	env_create(&e, 2, NULL, vc, NULL);
	open_all(&e);
	vnic_dev_faults_enable(e.v.dev[0], true);
	run_until_ctr(&e, 0, "reset_done", 2);
	vnic_dev_faults_enable(e.v.dev[0], false);
	assert_true(env_run(&e));
	assert_true(vnic_drv_is_open(e.s[0].drv));
	assert_true(env_drv_ctr(&e, 0, "resets_failover") >= 2);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_failures"), 0);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	lone(&e, env_frame(&e, &f, 0, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 1);
	close_all(&e);
	env_destroy(&e);
}

/* --- change-param ---------------------------------------------------------------------------- */

static void test_change_param_mtu(void **state)
{
	struct vnic_drv_params p = {.mtu = 1000};
	struct vnic_pktgen_flow f;
	struct vnic_netdev *nd;
	struct vnic_pkt *big;
	struct env e;

	(void)state;
	env_create(&e, 2, NULL, NULL, NULL);
	open_all(&e);
	nd = vnic_drv_netdev(e.s[0].drv);
	assert_int_equal(nd->mtu, 1500);
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_change_param"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	/* negotiated again: the driver, the netdev and the device agree */
	assert_int_equal(env_drv_ctr(&e, 0, "neg_mtu"), 1000);
	assert_int_equal(nd->mtu, 1000);
	assert_int_equal(env_dev_ctr(&e, 0, "neg_mtu"), 1014);
	/* ALIGN(1014 + 4, 128) */
	assert_int_equal(env_drv_ctr(&e, 0, "rx_buf_size"), 1024);
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_inits"), 2);
	/* a frame of the new MTU goes, a larger one is refused by the driver */
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	lone(&e, env_frame(&e, &f, 0, 1000 - 28));
	assert_int_equal(e.s[1].host.rx_pkts, 1);
	big = env_frame(&e, &f, 0, 1400);
	assert_int_equal(env_xmit(&e, 0, 0, big, false), VNIC_TX_OK);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_drop_too_long"), 1);
	/* and back: the larger frame goes again */
	p.mtu = 1500;
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	assert_true(env_run(&e));
	assert_int_equal(nd->mtu, 1500);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_mtu"), 1500);
	lone(&e, env_frame(&e, &f, 0, 1400));
	assert_int_equal(e.s[1].host.rx_pkts, 2);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_failures"), 0);
	close_all(&e);
	env_destroy(&e);
}

static void test_change_param_queues(void **state)
{
	struct vnic_drv_params p = {.tx_queues = 1, .rx_queues = 1};
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	struct vnic_netdev *nd;
	struct vnic_pkt *pk;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].tx_queues = dc[0].rx_queues = 2;
	dc[0].max_queues = 3;
	dc[0].max_entries = 128;
	env_create(&e, 2, dc, NULL, NULL);
	open_all(&e);
	nd = vnic_drv_netdev(e.s[0].drv);
	assert_int_equal(nd->num_tx_queues, 2);
	/* what create did not size is refused */
	{
		struct vnic_drv_params bad = {.tx_queues = 4};

		assert_int_equal(vnic_drv_change_param(e.s[0].drv, &bad), -EINVAL);
		bad = (struct vnic_drv_params){.mtu = 20};
		assert_int_equal(vnic_drv_change_param(e.s[0].drv, &bad), -EINVAL);
		bad = (struct vnic_drv_params){.tx_entries = 129};
		assert_int_equal(vnic_drv_change_param(e.s[0].drv, &bad), -EINVAL);
		bad = (struct vnic_drv_params){.tx_entries = 19};
		assert_int_equal(vnic_drv_change_param(e.s[0].drv, &bad), -EINVAL);
		bad = (struct vnic_drv_params){.rx_entries = 129};
		assert_int_equal(vnic_drv_change_param(e.s[0].drv, &bad), -EINVAL);
		assert_int_equal(vnic_drv_change_param(e.s[0].drv, NULL), -EINVAL);
	}
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_change_param"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_tx_queues"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_rx_queues"), 1);
	assert_int_equal(env_dev_ctr(&e, 0, "neg_tx_queues"), 1);
	assert_int_equal(nd->num_tx_queues, 1);
	assert_int_equal(nd->num_rx_queues, 1);
	/* the queue that went takes nothing; the one that stays works */
	assert_true(nd->ops->tx_stopped(nd, 1));
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	pk = env_frame(&e, &f, 0, 50);
	assert_int_equal(env_xmit(&e, 0, 1, pk, false), VNIC_TX_BUSY);
	vnic_pkt_free(pk);
	lone(&e, env_frame(&e, &f, 1, 50));
	/* three now: more than at create, up to max_queues */
	p.tx_queues = p.rx_queues = 3;
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	assert_true(env_run(&e));
	assert_int_equal(nd->num_tx_queues, 3);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_tx_queues"), 3);
	for (unsigned int q = 0; q < 3; q++) {
		assert_int_equal(env_xmit(&e, 0, q, env_frame(&e, &f, 10 + q, 50), false),
				 VNIC_TX_OK);
		assert_true(env_run(&e));
	}
	assert_int_equal(e.s[1].host.rx_pkts, 4);
	assert_int_equal(env_drv_ctr(&e, 0, "tx2_completions"), 1);
	/* the ring sizes too, up to max_entries */
	p = (struct vnic_drv_params){.tx_entries = 128, .rx_entries = 128};
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "neg_tx_entries"), 128);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_rx_entries"), 128);
	assert_int_equal(env_drv_ctr(&e, 0, "rx0_posted"), 128);
	assert_int_equal(env_drv_ctr(&e, 0, "rx2_posted"), 128);
	lone(&e, env_frame(&e, &f, 20, 50));
	close_all(&e);
	env_destroy(&e);
}

/* The device refuses the new values: the driver comes back with the old ones. */
static void test_change_param_refused(void **state)
{
	struct vnic_drv_params p = {.tx_entries = 32};
	struct vnic_dev_config vc[2];
	struct env e;

	(void)state;
	env_dev_config(&vc[0]);
	env_dev_config(&vc[1]);
	vc[0].min_tx_entries = 64;
	env_create(&e, 2, NULL, vc, NULL);
	open_all(&e);
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	run_until_ctr(&e, 0, "reset_done", 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_failures"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_hard"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_tx_entries"), 64);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	close_all(&e);
	env_destroy(&e);
}

/* --- a reset during a reset ------------------------------------------------------------------- */

/*
 * With the devices on a cpu of their own, the test runs the driver alone and
 * catches a reset in the middle: what comes meanwhile is queued (the same
 * reason twice merged) and runs after, in order; a hard one interrupts a
 * reset that waits for a partner that is gone, and drops the soft ones
 * queued, but a change-param stays.
 */
static void test_reset_during_reset(void **state)
{
	struct vnic_drv_params p = {.mtu = 1400};
	struct vnic_pktgen_flow f;
	struct env e;

	(void)state;
	env_create_split(&e, 2, NULL, NULL, NULL);
	open_all(&e);
	error_indication(&e, 0, true);
	vnic_cpu_run_once(&e.v.cpu[0]);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_active"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "state"), ST_RESET_DOWN);
	/* meanwhile: a non-fatal error twice, a change of MTU */
	error_indication(&e, 0, false);
	error_indication(&e, 0, false);
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	vnic_cpu_run_once(&e.v.cpu[0]);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_queued"), 2);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_coalesced"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 1);
	/* the first finishes, then the others, one after the other */
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_fatal"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_non_fatal"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_change_param"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 3);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_aborted"), 0);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_queued"), 0);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_mtu"), 1400);
	assert_true(vnic_drv_is_open(e.s[0].drv));

	/* a hard one in the middle: the reset in progress is abandoned, the soft one dropped */
	error_indication(&e, 0, true);
	vnic_cpu_run_once(&e.v.cpu[0]);
	assert_int_equal(env_drv_ctr(&e, 0, "state"), ST_RESET_DOWN);
	error_indication(&e, 0, false);
	p.mtu = 1500;
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &p), 0);
	vnic_cpu_run_once(&e.v.cpu[0]);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_queued"), 2);
	xport(&e, 0, VNIC_XPORT_PARTNER_CLOSED);
	vnic_cpu_run_once(&e.v.cpu[0]);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_aborted"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_xport"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_queued"), 1); /* the change-param */
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "resets_non_fatal"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_change_param"), 2);
	assert_int_equal(env_drv_ctr(&e, 0, "neg_mtu"), 1500);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 5);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	lone(&e, env_frame(&e, &f, 0, 1400));
	assert_int_equal(e.s[1].host.rx_pkts, 1);
	/* a close in the middle of one: nothing stays, the next open starts from INIT */
	error_indication(&e, 0, true);
	vnic_cpu_run_once(&e.v.cpu[0]);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_active"), 1);
	close_all(&e);
	assert_int_equal(env_drv_ctr(&e, 0, "state"), 0);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_aborted"), 2);
	open_all(&e);
	lone(&e, env_frame(&e, &f, 1, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 2);
	close_all(&e);
	env_destroy(&e);
}

/* --- hcall returns ------------------------------------------------------------------------------
 */

static void set_faults(struct env *e, unsigned int side, const char *spec)
{
	struct vnic_fault_cfg c;

	assert_int_equal(vnic_fault_parse(spec, &c), 0);
	assert_int_equal(vnic_hv_set_faults(e->v.hv[side], &c, side), 0);
	vnic_hv_faults_enable(e->v.hv[side], true);
}

static void no_faults(struct env *e, unsigned int side)
{
	vnic_hv_faults_enable(e->v.hv[side], false);
}

/* H_DROPPED and H_BUSY: the batch is lost and counted, the queue keeps running, no reset. */
static void test_hcall_dropped_busy(void **state)
{
	static const struct {
		const char *spec, *ctr;
	} cases[] = {
		{"hcall-dropped=1", "tx0_flush_rc_dropped"},
		{"hcall-busy=1", "tx0_flush_rc_busy"},
	};
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	struct vnic_netdev *nd;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].bql = false;
	env_create(&e, 2, dc, NULL, NULL);
	open_all(&e);
	nd = vnic_drv_netdev(e.s[0].drv);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	for (unsigned int c = 0; c < 2; c++) {
		uint64_t dropped = e.s[0].host.tx_done_dropped;

		set_faults(&e, 0, cases[c].spec);
		/* a batch of 5, and a lone (direct) one */
		assert_int_equal(inflight(&e, &f, 5, 0), 5);
		assert_int_equal(env_xmit(&e, 0, 0, env_frame(&e, &f, 9, 50), false), VNIC_TX_OK);
		assert_int_equal(env_drv_ctr(&e, 0, cases[c].ctr), 2);
		assert_int_equal(e.s[0].host.tx_done_dropped, dropped + 6);
		assert_false(nd->ops->tx_stopped(nd, 0));
		no_faults(&e, 0);
		assert_true(env_run(&e));
		lone(&e, env_frame(&e, &f, 10, 50));
	}
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 0);
	assert_int_equal(e.s[1].host.rx_pkts, 2);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_drop_flush"), 12);
	close_all(&e);
	env_destroy(&e);
}

/*
 * H_CLOSED with no transport event behind it: the queues stop and the
 * carrier drops, as for a partner that is gone; the probe finds the partner
 * still has us, and traffic resumes without a reset.
 */
static void test_hcall_closed(void **state)
{
	struct vnic_pktgen_flow f;
	struct vnic_netdev *nd;
	struct env e;

	(void)state;
	env_create(&e, 2, NULL, NULL, NULL);
	open_all(&e);
	nd = vnic_drv_netdev(e.s[0].drv);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	set_faults(&e, 0, "hcall-closed=1");
	assert_int_equal(env_xmit(&e, 0, 0, env_frame(&e, &f, 0, 50), false), VNIC_TX_OK);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_flush_rc_closed"), 1);
	assert_true(nd->ops->tx_stopped(nd, 0));
	assert_int_equal(env_drv_ctr(&e, 0, "carrier"), 0);
	assert_int_equal(e.s[0].host.tx_done_dropped, 1);
	no_faults(&e, 0);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "probes"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "probe_resumes"), 1);
	assert_false(nd->ops->tx_stopped(nd, 0));
	assert_int_equal(env_drv_ctr(&e, 0, "carrier"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), 0);
	lone(&e, env_frame(&e, &f, 1, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 1);

	/*
	 * The partner forgot us and nothing said so (a reset whose event was
	 * lost): a send finds its ring gone (PARAMETER for a lone packet, no
	 * limit explains it), the probe finds the partner does not know us, a
	 * hard reset brings the link back.
	 */
	{
		struct vnic_crq m;

		memset(&m, 0, sizeof(m));
		m.first = VNIC_CRQ_XPORT_EVENT;
		m.xport.reason = VNIC_XPORT_RESET;
		assert_int_equal(vnic_hv_send_crq(e.v.hv[0], VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	}
	assert_true(env_run(&e));
	assert_int_equal(env_dev_ctr(&e, 0, "state"), 0);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	assert_int_equal(env_xmit(&e, 0, 0, env_frame(&e, &f, 2, 50), false), VNIC_TX_OK);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_flush_rc_parameter"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "ind_fallbacks"), 0);
	assert_true(nd->ops->tx_stopped(nd, 0));
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "probes"), 2);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_hard"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "reset_done"), 1);
	assert_true(vnic_drv_is_open(e.s[0].drv));
	lone(&e, env_frame(&e, &f, 3, 50));
	assert_int_equal(e.s[1].host.rx_pkts, 2);
	close_all(&e);
	env_destroy(&e);
}

/* Rx replenish refused: buffers back in the pool, topped up again from the timer. */
static void test_replenish_busy(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_pktgen_flow f;
	struct env e;
	unsigned int i;

	(void)state;
	drv_cfgs(dc);
	dc[1].bql = false;
	env_create(&e, 2, dc, NULL, NULL);
	open_all(&e);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	set_faults(&e, 0, "hcall-busy=1");
	/* B -> A: A's posted buffers fall below half, its replenish is refused */
	for (i = 0; i < 40; i++)
		assert_int_equal(env_xmit(&e, 1, 0, env_frame(&e, &f, i, 50), i % 8 != 7),
				 VNIC_TX_OK);
	env_run_for(&e, 20000000);
	assert_true(env_drv_ctr(&e, 0, "rx0_replenish_errors") > 0);
	assert_true(env_drv_ctr(&e, 0, "rx0_posted") < 32);
	no_faults(&e, 0);
	assert_true(env_run(&e));
	assert_true(env_drv_ctr(&e, 0, "rx0_replenish_retries") > 0);
	assert_int_equal(env_drv_ctr(&e, 0, "rx0_posted"), 64);
	assert_int_equal(e.s[0].host.rx_pkts, 40);
	close_all(&e);
	env_destroy(&e);
}

/* --- the indirect limit --------------------------------------------------------------------- */

/*
 * The hypervisor announces 128 entries per indirect send but takes 16: the
 * first send above 16 fails with PARAMETER, the driver falls back to 16 for
 * good (a reset keeps it) and keeps working.
 */
static void test_ind_fallback(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_hv_stats hs;
	struct vnic_pktgen_flow f;
	struct env e;

	(void)state;
	drv_cfgs(dc);
	dc[0].max_ind_descs = 128;
	dc[0].bql = false;
	dc[0].tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
	env_create(&e, 2, dc, NULL, NULL);
	set_faults(&e, 0, "ind-param-above=16");
	assert_int_equal(vnic_hv_max_ind_descs(e.v.hv[0]), VNIC_MAX_IND_DESCS);
	open_all(&e);
	/* the first replenish (64 buffers in one send) fell back and posted them 16 by 16 */
	assert_int_equal(env_drv_ctr(&e, 0, "neg_ind_descs"), 128);
	assert_int_equal(env_drv_ctr(&e, 0, "cur_ind_descs"), 16);
	assert_int_equal(env_drv_ctr(&e, 0, "ind_fallbacks"), 1);
	assert_int_equal(env_drv_ctr(&e, 0, "rx0_posted"), 64);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	assert_int_equal(inflight(&e, &f, 40, 0), 40);
	assert_true(env_run(&e));
	assert_int_equal(e.s[1].host.rx_pkts, 40);
	vnic_hv_stats(e.v.hv[0], &hs);
	assert_int_equal(hs.fault_ind_param, 1);
	assert_true(hs.indirect_max <= 16);
	assert_true(env_drv_ctr(&e, 0, "tx0_indirect_flushes") >= 3);
	/* a reset negotiates 128 again, and keeps to 16 */
	error_indication(&e, 0, true);
	assert_true(env_run(&e));
	assert_int_equal(env_drv_ctr(&e, 0, "cur_ind_descs"), 16);
	assert_int_equal(inflight(&e, &f, 40, 0), 40);
	assert_true(env_run(&e));
	vnic_hv_stats(e.v.hv[0], &hs);
	assert_int_equal(hs.fault_ind_param, 1);
	assert_int_equal(env_drv_ctr(&e, 0, "ind_fallbacks"), 1);
	assert_int_equal(e.s[1].host.rx_pkts, 80);
	no_faults(&e, 0);
	close_all(&e);
	env_destroy(&e);
}

/* --- CRQ loss and duplication ----------------------------------------------------------------- */

/*
 * Every CRQ message may be lost or come twice, both ways: open, a fatal
 * and a non-fatal reset and close still get through, by resending what is
 * unanswered and ignoring what was answered already.
 */
static void test_crq_loss_dup(void **state)
{
	uint64_t retries = 0, ignored = 0, lost = 0, dup = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct vnic_drv_config dc[2];
		struct vnic_pktgen_flow f;
		struct vnic_hv_stats hs;
		char spec[96];
		struct env e;

		drv_cfgs(dc);
		dc[0].tx_queues = dc[0].rx_queues = 2;
		env_create(&e, 2, dc, NULL, NULL);
		snprintf(spec, sizeof(spec), "seed=%llu,crq-loss=0.15,crq-dup=0.15",
			 (unsigned long long)seed);
		set_faults(&e, 0, spec);
		open_all(&e);
		assert_int_equal(env_drv_ctr(&e, 0, "neg_tx_queues"), 2);
		vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
		lone(&e, env_frame(&e, &f, 0, 50));
		error_indication(&e, 0, true);
		run_until_ctr(&e, 0, "reset_done", 1);
		assert_true(env_run(&e));
		error_indication(&e, 0, false);
		assert_true(env_run(&e));
		assert_true(vnic_drv_is_open(e.s[0].drv));
		lone(&e, env_frame(&e, &f, 1, 50));
		assert_int_equal(e.s[1].host.rx_pkts, 2);
		close_all(&e);
		vnic_hv_stats(e.v.hv[0], &hs);
		retries += env_drv_ctr(&e, 0, "cmd_retries") + env_drv_ctr(&e, 0, "init_retries");
		ignored += env_drv_ctr(&e, 0, "crq_ignored");
		lost += hs.fault_crq_lost;
		dup += hs.fault_crq_dup;
		no_faults(&e, 0);
		env_destroy(&e);
	}
	/* both happened, and both were dealt with */
	assert_true(lost > 0 && dup > 0);
	assert_true(retries > 0);
	assert_true(ignored > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tx_watchdog),
		cmocka_unit_test(test_fatal_error),
		cmocka_unit_test(test_fatal_error_halts_device),
		cmocka_unit_test(test_non_fatal_error),
		cmocka_unit_test(test_partner_closed_and_back),
		cmocka_unit_test(test_passive_init),
		cmocka_unit_test(test_failover),
		cmocka_unit_test(test_failover_scheduled),
		cmocka_unit_test(test_change_param_mtu),
		cmocka_unit_test(test_change_param_queues),
		cmocka_unit_test(test_change_param_refused),
		cmocka_unit_test(test_reset_during_reset),
		cmocka_unit_test(test_hcall_dropped_busy),
		cmocka_unit_test(test_hcall_closed),
		cmocka_unit_test(test_replenish_busy),
		cmocka_unit_test(test_ind_fallback),
		cmocka_unit_test(test_crq_loss_dup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
