// SPDX-License-Identifier: MIT
/*
 * The driver with real threads: driver A on one cpu thread, driver B on
 * another, both devices on a third, so every interrupt (CRQ, tx and rx
 * completions, wire) crosses threads. Open and close wait instead of
 * stepping. A sender poller on A's cpu pushes frames in xmit_more bursts,
 * honouring BUSY and tx_wake; B's host checks every payload byte. Run under
 * TSan in CI (label "threaded"). Nothing here depends on timing except the
 * generous waits for the traffic to finish.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drv_env.h"
#include "support.h"

enum { PAYLOAD = 300, BURST = 8 };

struct sender {
	struct vnic_poller poller;
	struct vnic_netdev *nd;
	struct vnic_pkt_pool pool; /* used on A's cpu only, once started */
	struct vnic_pktgen_flow flow;
	unsigned int total;
	unsigned int sent;
	struct vnic_pkt *pending; /* refused with BUSY: sent again after tx_wake */
	_Atomic bool go;	  /* both links up (A's open wakes us before B's is) */
	_Atomic uint64_t tx_done_ok;
	_Atomic uint64_t tx_done_dropped;
	_Atomic uint64_t busy;
};

struct receiver {
	_Atomic uint64_t ok;
	_Atomic uint64_t bad;
	uint32_t seed;
};

static struct vnic_pkt *build(struct sender *s, unsigned int i)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&s->pool);

	assert_non_null(p);
	/* the index rides in the IPv4 ID: the receiver finds the payload's offset */
	s->flow.ip_id = (uint16_t)i;
	s->flow.sport = (uint16_t)(20000 + i % 64);
	if (i & 1) {
		/* every other frame leaves its checksum to the NIC */
		assert_int_equal(vnic_pktgen_build_gso(p, &s->flow, i * PAYLOAD, PAYLOAD, PAYLOAD),
				 0);
		p->gso_type = VNIC_GSO_NONE;
		p->gso_size = 0;
		p->gso_segs = 0;
	} else {
		assert_int_equal(vnic_pktgen_build(p, &s->flow, i * PAYLOAD, PAYLOAD), 0);
	}
	p->priv = i;
	return p;
}

static int sender_poll(struct vnic_poller *poller, int budget)
{
	struct sender *s = vnic_container_of(poller, struct sender, poller);
	int n;

	if (!atomic_load(&s->go))
		return 0;
	for (n = 0; n < budget && s->sent < s->total; n++) {
		struct vnic_pkt *p = s->pending ? s->pending : build(s, s->sent);
		bool more = (s->sent + 1) % BURST && s->sent + 1 < s->total && n + 1 < budget;

		if (vnic_netdev_xmit(s->nd, 0, p, more) == VNIC_TX_BUSY) {
			/* tx_wake schedules us again */
			s->pending = p;
			atomic_fetch_add(&s->busy, 1);
			return 0;
		}
		s->pending = NULL;
		s->sent++;
	}
	return s->sent < s->total ? budget : 0;
}

static void a_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	(void)ctx;
	(void)queue;
	for (unsigned int i = 0; i < n; i++)
		vnic_pkt_free(pkts[i]);
}

static void a_tx_done(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes, int status)
{
	struct sender *s = ctx;

	(void)queue;
	(void)cookie;
	(void)bytes;
	if (status == VNIC_TX_DONE_OK)
		atomic_fetch_add(&s->tx_done_ok, 1);
	else
		atomic_fetch_add(&s->tx_done_dropped, 1);
}

static void a_tx_wake(void *ctx, unsigned int queue)
{
	(void)queue;
	vnic_poller_schedule(&((struct sender *)ctx)->poller);
}

static const struct vnic_host_ops a_ops = {.rx = a_rx, .tx_done = a_tx_done, .tx_wake = a_tx_wake};

static void b_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct receiver *r = ctx;

	(void)queue;
	for (unsigned int i = 0; i < n; i++) {
		struct vnic_pkt *p = pkts[i];
		const uint8_t *ip = p->data + p->l2_len;
		uint32_t idx = (uint32_t)ip[4] << 8 | ip[5];

		if (p->l4_proto == VNIC_IPPROTO_UDP && p->ip_summed == VNIC_CSUM_UNNECESSARY &&
		    vnic_pktgen_verify_pkt(p, r->seed, idx * PAYLOAD))
			atomic_fetch_add(&r->ok, 1);
		else
			atomic_fetch_add(&r->bad, 1);
		vnic_pkt_free(p);
	}
}

/* b needs no word of its sends: tx_done and tx_wake stay NULL. */
static const struct vnic_host_ops b_ops = {.rx = b_rx};

/* Waits for cond(ctx) in 1 ms naps, at most ms milliseconds. */
static bool wait_for(bool (*cond)(void *), void *ctx, unsigned int ms)
{
	while (!cond(ctx)) {
		if (!ms--)
			return false;
		vnic_test_nap_us(1000);
	}
	return true;
}

struct both {
	struct sender *s;
	struct receiver *r;
};

static bool all_completed(void *ctx)
{
	struct both *b = ctx;

	return atomic_load(&b->s->tx_done_ok) + atomic_load(&b->s->tx_done_dropped) == b->s->total;
}

/* B's count has not moved for 100 ms: what was in flight has landed (or was dropped). */
static void wait_settled(struct receiver *r)
{
	uint64_t last = atomic_load(&r->ok) + atomic_load(&r->bad), now;
	unsigned int still = 0, i;

	for (i = 0; i < 5000 && still < 100; i++) {
		vnic_test_nap_us(1000);
		now = atomic_load(&r->ok) + atomic_load(&r->bad);
		still = now == last ? still + 1 : 0;
		last = now;
	}
}

/* B's account: frames delivered (good or bad) and frames B's device dropped, by reason. */
struct landing {
	struct receiver *r;
	struct vnic_dev *dev_b;
	uint64_t want;
};

static uint64_t b_dropped(const struct vnic_dev *dev_b)
{
	uint64_t v = 0, w = 0;

	assert_int_equal(vnic_dev_counter(dev_b, "rx0_drop_no_buffer", &v), 0);
	assert_int_equal(vnic_dev_counter(dev_b, "rx_drop_link_down", &w), 0);
	return v + w;
}

static bool all_landed(void *ctx)
{
	struct landing *l = ctx;

	return atomic_load(&l->r->ok) + atomic_load(&l->r->bad) + b_dropped(l->dev_b) >= l->want;
}

/*
 * open_first: open in manual mode before the threads start (a host created
 * after open sees the negotiated features), else open with threads running.
 */
static void run_traffic(enum vnic_drv_tx_reclaim reclaim, unsigned int total, bool open_first)
{
	static struct sender s;
	static struct receiver r;
	struct vnic_drv_config dc[2];
	struct both b = {&s, &r};
	uint64_t drops = 0, refused = 0, v;
	struct landing land;
	struct env e;

	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	dc[0].tx_reclaim = reclaim;
	dc[1].rx_entries = 512;
	env_create_split(&e, 2, dc, NULL, NULL);
	land = (struct landing){.r = &r, .dev_b = e.v.dev[1]};
	assert_int_equal(vnic_pkt_pool_init(&s.pool, 64, 2048, 64), 0);
	vnic_pktgen_flow_init(&s.flow, false, VNIC_IPPROTO_UDP);
	r.seed = s.flow.seed;
	s.total = total;
	s.nd = vnic_drv_netdev(e.s[0].drv);
	assert_int_equal(vnic_cpu_add(&e.v.cpu[0], &s.poller, "sender", sender_poll), 0);
	vnic_netdev_attach(s.nd, &a_ops, &s);
	vnic_netdev_attach(vnic_drv_netdev(e.s[1].drv), &b_ops, &r);

	if (open_first) {
		assert_int_equal(env_open(&e, 0), 0);
		assert_int_equal(env_open(&e, 1), 0);
		assert_true(s.nd->features & VNIC_NETIF_F_CSUM);
		env_start(&e);
	} else {
		env_start(&e);
		assert_int_equal(env_open(&e, 0), 0);
		assert_int_equal(env_open(&e, 1), 0);
	}
	assert_true(vnic_drv_is_open(e.s[0].drv));
	atomic_store(&s.go, true);
	vnic_poller_schedule(&s.poller);

	assert_true(wait_for(all_completed, &b, 60000));
	/*
	 * Frames may still be on the cable or in B's ring: wait until B has
	 * accounted for every frame A's device sent (completed to A and not
	 * refused), not for a quiet spell, which a descheduled thread on a
	 * loaded machine fakes. The checks below say what went missing if
	 * this times out.
	 */
	assert_int_equal(vnic_dev_counter(e.v.dev[0], "tx0_drop_hdrs_incomplete", &refused), 0);
	land.want = total - refused;
	(void)wait_for(all_landed, &land, 60000);
	assert_int_equal(env_close(&e, 0), 0);
	assert_int_equal(env_close(&e, 1), 0);
	assert_false(vnic_drv_is_open(e.s[1].drv));
	for (unsigned int i = 0; i < ENV_CPUS; i++)
		vnic_cpu_stop(&e.v.cpu[i]);

	/*
	 * Every frame is accounted for: delivered and checked, or dropped by
	 * B's device with a reason (B's thread fell behind and had no buffer
	 * posted; or, if the traffic had not settled, B's link was already down).
	 */
	drops = b_dropped(e.v.dev[1]);
	/*
	 * A's device may refuse a packet whose header descriptors it does not
	 * see yet: the hv publishes an indirect batch entry by entry, and a
	 * device thread that looks twice within its retry delay while our
	 * thread is still publishing gives up (tx0_drop_hdrs_incomplete; rare,
	 * seen under TSan). The driver hears it as an error completion and
	 * tells the host: every such packet is accounted for, nothing else may
	 * be missing.
	 */
	assert_int_equal(vnic_dev_counter(e.v.dev[0], "tx0_drop_hdrs_incomplete", &refused), 0);
	assert_int_equal(atomic_load(&s.tx_done_ok) + atomic_load(&s.tx_done_dropped), total);
	assert_int_equal(atomic_load(&s.tx_done_dropped), refused);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "tx0_comp_errors", &v), 0);
	assert_int_equal(v, refused);
	assert_int_equal(atomic_load(&r.bad), 0);
	assert_int_equal(atomic_load(&r.ok) + drops, total - refused);
	assert_true(atomic_load(&r.ok) > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "tx0_completions", &v), 0);
	assert_int_equal(v, total);
	assert_true(vnic_drv_pools_full(e.s[0].drv));
	assert_true(vnic_drv_pools_full(e.s[1].drv));
	assert_int_equal(s.pool.nfree, s.pool.count);
	env_destroy(&e);
	vnic_pkt_pool_fini(&s.pool);
}

static void error_indication(struct env *e, bool fatal)
{
	struct vnic_crq m;
	long rc;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_ERROR_INDICATION;
	m.error.flags = fatal ? VNIC_ERR_FATAL : 0;
	/* from this thread: the CRQ takes senders of any thread; CLOSED while the device is gone */
	rc = vnic_hv_send_crq(e->v.hv[0], VNIC_HV_SERVER, &m);
	assert_true(rc == VNIC_H_SUCCESS || rc == VNIC_H_CLOSED);
}

/*
 * Resets from every direction while A sends: change-param from this
 * thread (MTU and queue counts), error indications, and A's device
 * resetting itself on its own thread. Every frame is still completed to
 * the sender exactly once, B sees only good ones, and the pools come back
 * full. Under TSan: the change-param hand-off, the counters read here, and
 * the device's faults against the driver's resets.
 */
static void test_threaded_resets(void **state)
{
	static struct sender s;
	static struct receiver r;
	static const struct vnic_drv_params steps[] = {
		{.mtu = 1400},
		{.tx_queues = 1, .rx_queues = 1},
		{.mtu = 1500},
		{.tx_queues = 2, .rx_queues = 2},
	};
	struct vnic_dev_config vc[2];
	struct vnic_drv_config dc[2];
	struct both b = {&s, &r};
	unsigned int turn = 0;
	uint64_t v;
	struct env e;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	dc[0].tx_queues = dc[0].rx_queues = 2;
	dc[1].rx_entries = 512;
	env_dev_config(&vc[0]);
	env_dev_config(&vc[1]);
	assert_int_equal(vnic_fault_parse("seed=5,reset-every=70ms", &vc[0].fault), 0);
	env_create_split(&e, 2, dc, vc, NULL);
	assert_int_equal(vnic_pkt_pool_init(&s.pool, 64, 2048, 64), 0);
	vnic_pktgen_flow_init(&s.flow, false, VNIC_IPPROTO_UDP);
	r.seed = s.flow.seed;
	s.total = 40000;
	s.nd = vnic_drv_netdev(e.s[0].drv);
	assert_int_equal(vnic_cpu_add(&e.v.cpu[0], &s.poller, "sender", sender_poll), 0);
	vnic_netdev_attach(s.nd, &a_ops, &s);
	vnic_netdev_attach(vnic_drv_netdev(e.s[1].drv), &b_ops, &r);
	env_start(&e);
	assert_int_equal(env_open(&e, 0), 0);
	assert_int_equal(env_open(&e, 1), 0);
	vnic_dev_faults_enable(e.v.dev[0], true);
	atomic_store(&s.go, true);
	vnic_poller_schedule(&s.poller);

	for (unsigned int ms = 0; !all_completed(&b); ms++) {
		assert_true(ms < 60000);
		vnic_test_nap_us(1000);
		if (ms % 10)
			continue;
		switch (turn++ % 6) {
		case 4:
			error_indication(&e, turn % 12 == 5);
			break;
		case 5:
			/* counters from this thread while everything runs */
			assert_int_equal(vnic_drv_counter(e.s[0].drv, "resets", &v), 0);
			break;
		default:
			assert_int_equal(vnic_drv_change_param(e.s[0].drv, &steps[turn % 4]), 0);
			break;
		}
	}
	vnic_dev_faults_enable(e.v.dev[0], false);
	wait_settled(&r);
	assert_int_equal(env_close(&e, 0), 0);
	assert_int_equal(env_close(&e, 1), 0);
	for (unsigned int i = 0; i < ENV_CPUS; i++)
		vnic_cpu_stop(&e.v.cpu[i]);

	assert_int_equal(atomic_load(&s.tx_done_ok) + atomic_load(&s.tx_done_dropped), s.total);
	assert_int_equal(atomic_load(&r.bad), 0);
	assert_true(atomic_load(&r.ok) > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "resets_change_param", &v), 0);
	assert_true(v > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "reset_done", &v), 0);
	assert_true(v > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "reset_active", &v), 0);
	assert_int_equal(v, 0);
	assert_true(vnic_drv_pools_full(e.s[0].drv));
	assert_true(vnic_drv_pools_full(e.s[1].drv));
	assert_int_equal(s.pool.nfree, s.pool.count);
	env_destroy(&e);
	vnic_pkt_pool_fini(&s.pool);
}

static void test_threaded_irq(void **state)
{
	(void)state;
	run_traffic(VNIC_DRV_RECLAIM_IRQ, 20000, false);
}

static void test_threaded_napi(void **state)
{
	(void)state;
	run_traffic(VNIC_DRV_RECLAIM_NAPI, 5000, true);
}

static void test_threaded_lazy(void **state)
{
	(void)state;
	run_traffic(VNIC_DRV_RECLAIM_LAZY, 5000, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threaded_irq),
		cmocka_unit_test(test_threaded_napi),
		cmocka_unit_test(test_threaded_lazy),
		cmocka_unit_test(test_threaded_resets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
