// SPDX-License-Identifier: MIT
/*
 * Queue pairs on cpus of their own (vnic_drv_config.queue_cpu), with real
 * threads: queue pair q of both drivers on cpu q, both control pollers on
 * cpu 0, both devices on cpu 2 (the layout of `vnic link --queues 2`, the
 * devices aside). A sender on each queue's cpu pushes frames on that queue
 * while the control poller resets the driver from every direction: change-
 * param, error indications, the device resetting itself. The control poller
 * parks cpu 1 for each of its polls (src/core/park.c). Every frame is
 * completed to its sender exactly once, B sees only good ones, on both of
 * its rx queues, and the pools come back full. Run under TSan (label
 * "threaded"): the park hand-shake is what orders the control poller's
 * writes against the queues' own. Then with the devices' queue pairs on the
 * same cpus as the drivers' (vnic_dev_config.queue_cpu, a cable ring pair
 * per queue pair, the layout of `vnic link --queues 2` whole): the devices'
 * control and fault pollers, on cpu 2, park cpus 0 and 1 as well.
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

/*
 * TSan runs each packet some ten times slower, on a machine shared with other
 * builds: a fifth of the packets still spans dozens of resets and thousands
 * of parks, which are what it is there to check.
 */
#ifdef __SANITIZE_THREAD__
enum { PER_QUEUE = 3000 };
#else
enum { PER_QUEUE = 15000 };
#endif
enum { PAYLOAD = 300, BURST = 8, NQ = 2 };

struct sender {
	struct vnic_poller poller;
	struct vnic_netdev *nd;
	unsigned int queue;
	struct vnic_pkt_pool pool; /* used on the queue's cpu only, once started */
	struct vnic_pktgen_flow flow;
	unsigned int sent;
	struct vnic_pkt *pending; /* refused with BUSY: sent again after tx_wake */
	_Atomic bool go;
	_Atomic uint64_t done_ok;
	_Atomic uint64_t done_dropped;
	_Atomic uint64_t wrong_cpu; /* a callback for this queue on another cpu */
	struct vnic_cpu *cpu;
};

struct receiver {
	_Atomic uint64_t ok;
	_Atomic uint64_t bad;
	_Atomic uint64_t per_queue[NQ];
	_Atomic uint64_t wrong_cpu;
	struct vnic_cpu *cpu[NQ];
	uint32_t seed;
};

static struct sender snd[NQ];
static struct receiver rcv;

static struct vnic_pkt *build(struct sender *s, unsigned int i)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&s->pool);

	assert_non_null(p);
	/* the index rides in the IPv4 ID: the receiver finds the payload's offset */
	s->flow.ip_id = (uint16_t)i;
	s->flow.sport = (uint16_t)(20000 + s->queue * 1000 + i % 32);
	assert_int_equal(vnic_pktgen_build(p, &s->flow, i * PAYLOAD, PAYLOAD), 0);
	p->priv = i;
	return p;
}

static int sender_poll(struct vnic_poller *poller, int budget)
{
	struct sender *s = vnic_container_of(poller, struct sender, poller);
	int n;

	if (!atomic_load(&s->go))
		return 0;
	for (n = 0; n < budget && s->sent < PER_QUEUE; n++) {
		struct vnic_pkt *p = s->pending ? s->pending : build(s, s->sent);
		bool more = (s->sent + 1) % BURST && s->sent + 1 < PER_QUEUE && n + 1 < budget;

		if (vnic_netdev_xmit(s->nd, s->queue, p, more) == VNIC_TX_BUSY) {
			s->pending = p;
			return 0; /* tx_wake schedules us again */
		}
		s->pending = NULL;
		s->sent++;
	}
	return s->sent < PER_QUEUE ? budget : 0;
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
	struct sender *s = &((struct sender *)ctx)[queue < NQ ? queue : 0];

	(void)cookie;
	(void)bytes;
	/* the control poller takes a queue back in a reset: on its cpu, the queue's parked */
	if (vnic_cpu_self() != s->cpu && vnic_cpu_self() != s->nd->tx_cpu[0])
		atomic_fetch_add(&s->wrong_cpu, 1);
	if (status == VNIC_TX_DONE_OK)
		atomic_fetch_add(&s->done_ok, 1);
	else
		atomic_fetch_add(&s->done_dropped, 1);
}

static void a_tx_wake(void *ctx, unsigned int queue)
{
	vnic_poller_schedule(&((struct sender *)ctx)[queue < NQ ? queue : 0].poller);
}

static const struct vnic_host_ops a_ops = {.rx = a_rx, .tx_done = a_tx_done, .tx_wake = a_tx_wake};

static void b_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct receiver *r = ctx;

	if (queue >= NQ || vnic_cpu_self() != r->cpu[queue])
		atomic_fetch_add(&r->wrong_cpu, 1);
	for (unsigned int i = 0; i < n; i++) {
		struct vnic_pkt *p = pkts[i];
		const uint8_t *ip = p->data + p->l2_len;
		uint32_t idx = (uint32_t)ip[4] << 8 | ip[5];

		if (p->l4_proto == VNIC_IPPROTO_UDP &&
		    vnic_pktgen_verify_pkt(p, r->seed, idx * PAYLOAD))
			atomic_fetch_add(&r->ok, 1);
		else
			atomic_fetch_add(&r->bad, 1);
		vnic_pkt_free(p);
	}
	if (queue < NQ)
		atomic_fetch_add(&r->per_queue[queue], n);
}

/* b needs no word of its sends: tx_done and tx_wake stay NULL. */
static const struct vnic_host_ops b_ops = {.rx = b_rx};

static bool all_completed(void)
{
	for (unsigned int q = 0; q < NQ; q++)
		if (atomic_load(&snd[q].done_ok) + atomic_load(&snd[q].done_dropped) < PER_QUEUE)
			return false;
	return true;
}

/* B's count has not moved for 100 ms: what was in flight has landed (or was dropped). */
static void wait_settled(void)
{
	uint64_t last = atomic_load(&rcv.ok) + atomic_load(&rcv.bad), now;
	unsigned int still = 0, i;

	for (i = 0; i < 5000 && still < 100; i++) {
		vnic_test_nap_us(1000);
		now = atomic_load(&rcv.ok) + atomic_load(&rcv.bad);
		still = now == last ? still + 1 : 0;
		last = now;
	}
}

static void error_indication(struct env *e, bool fatal)
{
	struct vnic_crq m;
	long rc;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_ERROR_INDICATION;
	m.error.flags = fatal ? VNIC_ERR_FATAL : 0;
	rc = vnic_hv_send_crq(e->v.hv[0], VNIC_HV_SERVER, &m);
	assert_true(rc == VNIC_H_SUCCESS || rc == VNIC_H_CLOSED);
}

static void configure(struct env *e, struct vnic_drv_config *dc)
{
	env_drv_config(dc);
	dc->cpu = &e->v.cpu[0];
	dc->tx_queues = dc->rx_queues = NQ;
	for (unsigned int q = 0; q < NQ; q++)
		dc->queue_cpu[q] = &e->v.cpu[q];
}

/*
 * crossed: B's control poller and its queue 0 on cpu 1, its queue 1 on cpu 0,
 * so that A's control poller parks cpu 1 while B's parks cpu 0; both are
 * reset by change-param. One control poll at a time parks (park.c): the
 * other gives up at once and lets its cpu park, so neither spins waiting
 * for a cpu whose thread spins waiting in turn.
 *
 * dev_queues: each device's queue pair q on cpu q too, over cable ring q.
 */
static void run(bool crossed, bool dev_queues)
{
	const struct vnic_cable_cfg cable = {.queues = NQ};
	static const struct vnic_drv_params steps[] = {{.mtu = 1400}, {.mtu = 1500}};
	struct vnic_dev_config vc[2];
	struct vnic_drv_config dc[2];
	struct vnic_netdev *nd;
	unsigned int turn = 0, q;
	uint64_t v, total_ok = 0, total_dropped = 0;
	struct env e;

	memset(snd, 0, sizeof(snd));
	memset(&rcv, 0, sizeof(rcv));
	configure(&e, &dc[0]);
	configure(&e, &dc[1]);
	dc[1].rx_entries = 512;
	if (crossed) {
		dc[1].cpu = dc[1].queue_cpu[0] = &e.v.cpu[1];
		dc[1].queue_cpu[1] = &e.v.cpu[0];
	}
	env_dev_config(&vc[0]);
	env_dev_config(&vc[1]);
	for (unsigned int i = 0; dev_queues && i < 2; i++) {
		vc[i].max_tx_queues = vc[i].max_rx_queues = NQ;
		for (q = 0; q < NQ; q++)
			vc[i].queue_cpu[q] = &e.v.cpu[q];
	}
	assert_int_equal(vnic_fault_parse("seed=7,reset-every=70ms", &vc[0].fault), 0);
	env_create_split(&e, 2, dc, vc, dev_queues ? &cable : NULL);

	nd = vnic_drv_netdev(e.s[0].drv);
	for (q = 0; q < NQ; q++) {
		struct sender *s = &snd[q];

		/* the netdev tells the host where each queue runs */
		assert_ptr_equal(nd->tx_cpu[q], &e.v.cpu[q]);
		assert_ptr_equal(vnic_drv_netdev(e.s[1].drv)->rx_cpu[q], dc[1].queue_cpu[q]);
		s->nd = nd;
		s->queue = q;
		s->cpu = &e.v.cpu[q];
		rcv.cpu[q] = dc[1].queue_cpu[q];
		assert_int_equal(vnic_pkt_pool_init(&s->pool, 64, 2048, 64), 0);
		vnic_pktgen_flow_init(&s->flow, false, VNIC_IPPROTO_UDP);
		assert_int_equal(vnic_cpu_add(&e.v.cpu[q], &s->poller, "sender", sender_poll), 0);
	}
	snd[1].flow.seed = snd[0].flow.seed;
	rcv.seed = snd[0].flow.seed;
	vnic_netdev_attach(nd, &a_ops, snd);
	vnic_netdev_attach(vnic_drv_netdev(e.s[1].drv), &b_ops, &rcv);
	env_start(&e);
	assert_int_equal(env_open(&e, 0), 0);
	assert_int_equal(env_open(&e, 1), 0);
	vnic_dev_faults_enable(e.v.dev[0], true);
	for (q = 0; q < NQ; q++) {
		atomic_store(&snd[q].go, true);
		vnic_poller_schedule(&snd[q].poller);
	}

	for (unsigned int ms = 0; !all_completed(); ms++) {
		assert_true(ms < 120000);
		vnic_test_nap_us(1000);
		if (ms % 10)
			continue;
		switch (turn++ % 4) {
		case 2:
			error_indication(&e, turn % 8 == 3);
			break;
		case 3:
			assert_int_equal(vnic_drv_counter(e.s[0].drv, "parks", &v), 0);
			break;
		default:
			assert_int_equal(vnic_drv_change_param(e.s[0].drv, &steps[turn % 2]), 0);
			if (crossed)
				assert_int_equal(
					vnic_drv_change_param(e.s[1].drv, &steps[turn % 2]), 0);
			break;
		}
	}
	vnic_dev_faults_enable(e.v.dev[0], false);
	wait_settled();
	assert_int_equal(env_close(&e, 0), 0);
	assert_int_equal(env_close(&e, 1), 0);
	for (unsigned int i = 0; i < ENV_CPUS; i++)
		vnic_cpu_stop(&e.v.cpu[i]);

	for (q = 0; q < NQ; q++) {
		assert_int_equal(atomic_load(&snd[q].done_ok) + atomic_load(&snd[q].done_dropped),
				 PER_QUEUE);
		assert_int_equal(atomic_load(&snd[q].wrong_cpu), 0);
		total_ok += atomic_load(&snd[q].done_ok);
		total_dropped += atomic_load(&snd[q].done_dropped);
		/* both of B's rx queues carried traffic, each on its own cpu */
		assert_true(atomic_load(&rcv.per_queue[q]) > 0);
		assert_int_equal(snd[q].pool.nfree, snd[q].pool.count);
	}
	assert_int_equal(total_ok + total_dropped, NQ * PER_QUEUE);
	assert_int_equal(atomic_load(&rcv.wrong_cpu), 0);
	assert_int_equal(atomic_load(&rcv.bad), 0);
	assert_true(atomic_load(&rcv.ok) > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "tx1_completions", &v), 0);
	assert_true(v > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "reset_done", &v), 0);
	assert_true(v > 0);
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "reset_active", &v), 0);
	assert_int_equal(v, 0);
	/* the control poller parked cpu 1 (and never ran with it unparked: TSan) */
	assert_int_equal(vnic_drv_counter(e.s[0].drv, "parks", &v), 0);
	assert_true(v > 0);
	assert_int_equal(vnic_drv_counter(e.s[1].drv, "parks", &v), 0);
	assert_true(v > 0);
	assert_true(vnic_drv_pools_full(e.s[0].drv));
	assert_true(vnic_drv_pools_full(e.s[1].drv));
	if (dev_queues) {
		/* device B took ring q's frames on rx queue q, none past its queues */
		assert_int_equal(vnic_dev_counter(e.v.dev[1], "rx0_frames", &v), 0);
		assert_true(v > 0);
		assert_int_equal(vnic_dev_counter(e.v.dev[1], "rx1_frames", &v), 0);
		assert_true(v > 0);
		assert_int_equal(vnic_dev_counter(e.v.dev[1], "rx_drop_bad_queue", &v), 0);
		assert_int_equal(v, 0);
		/* device A's resets and control polls parked its queue cpus */
		assert_int_equal(vnic_dev_counter(e.v.dev[0], "parks", &v), 0);
		assert_true(v > 0);
	}
	env_destroy(&e);
	for (q = 0; q < NQ; q++)
		vnic_pkt_pool_fini(&snd[q].pool);
}

static void test_queues_through_resets(void **state)
{
	(void)state;
	run(false, false);
}

static void test_queues_crossed_control(void **state)
{
	(void)state;
	run(true, false);
}

static void test_queues_devices_too(void **state)
{
	(void)state;
	run(false, true);
}

/* Each queue pair's pollers are on its cpu; napi reclaim, which would cross, is refused. */
static void test_queue_cpus_create(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_drv_config want;
	struct vnic_drv *drv = NULL;
	struct env e;

	(void)state;
	configure(&e, &dc[0]);
	configure(&e, &dc[1]);
	env_create(&e, 2, dc, NULL, NULL);
	vnic_drv_policies(e.s[0].drv, &want);
	want.tx_reclaim = VNIC_DRV_RECLAIM_NAPI;
	assert_int_equal(vnic_drv_set_policies(e.s[0].drv, &want, 0), -EINVAL);
	/* manual mode: one thread steps every cpu, nothing to park, opens as before */
	assert_int_equal(env_open(&e, 0), 0);
	assert_int_equal(env_open(&e, 1), 0);
	assert_int_equal(env_close(&e, 0), 0);
	assert_int_equal(env_close(&e, 1), 0);
	env_destroy(&e);

	/* refused before it touches the hv */
	env_create(&e, 1, NULL, NULL, NULL);
	configure(&e, &dc[0]);
	dc[0].tx_reclaim = VNIC_DRV_RECLAIM_NAPI;
	assert_int_equal(vnic_drv_create(&drv, e.v.hv[0], &dc[0]), -EINVAL);
	assert_null(drv);
	env_destroy(&e);
}

/*
 * Every queue on the driver's cpu (the layout of `vnic link` and `vnic
 * bench`), with real threads: bring-up, a change-param reset and close
 * never park anything.
 */
static void test_one_cpu_never_parks(void **state)
{
	static const struct vnic_drv_params mtu = {.mtu = 1400};
	struct vnic_drv_config dc[2];
	struct env e;
	uint64_t v;

	(void)state;
	for (unsigned int i = 0; i < 2; i++) {
		env_drv_config(&dc[i]);
		dc[i].cpu = &e.v.cpu[0];
		dc[i].tx_queues = dc[i].rx_queues = NQ;
	}
	env_create_split(&e, 2, dc, NULL, NULL);
	env_start(&e);
	assert_int_equal(env_open(&e, 0), 0);
	assert_int_equal(env_open(&e, 1), 0);
	assert_int_equal(vnic_drv_change_param(e.s[0].drv, &mtu), 0);
	for (unsigned int ms = 0;; ms++) {
		assert_true(ms < 120000);
		assert_int_equal(vnic_drv_counter(e.s[0].drv, "reset_done", &v), 0);
		if (v == 1)
			break;
		vnic_test_nap_us(1000);
	}
	assert_int_equal(env_close(&e, 0), 0);
	assert_int_equal(env_close(&e, 1), 0);
	for (unsigned int i = 0; i < 2; i++) {
		assert_int_equal(vnic_drv_counter(e.s[i].drv, "parks", &v), 0);
		assert_int_equal(v, 0);
		assert_int_equal(vnic_drv_counter(e.s[i].drv, "park_retries", &v), 0);
		assert_int_equal(v, 0);
	}
	env_destroy(&e);
}

/* An argument runs the tests whose names match it (a cmocka pattern), to loop one. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_cpus_create),
		cmocka_unit_test(test_one_cpu_never_parks),
		cmocka_unit_test(test_queues_through_resets),
		cmocka_unit_test(test_queues_crossed_control),
		cmocka_unit_test(test_queues_devices_too),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
