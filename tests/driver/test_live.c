// SPDX-License-Identifier: MIT
/*
 * Settings changed while traffic runs, from the test thread, as the control
 * socket's thread changes them: the driver's policies, the cable, a cpu's
 * busy polling, the device's header mask and drop-missing-headers, faults.
 * Driver A on one cpu thread, driver B on another, both devices on a third,
 * so every interrupt crosses threads while a change is applied. A sender
 * poller on A's cpu streams TCP segments (every other one with its checksum
 * left to the NIC) until told to stop; B's host checks every payload byte
 * against the stream's pattern, aggregates included. Each effect is read
 * from counters; at the end every packet was completed to the sender
 * exactly once and B saw no bad byte. Run under TSan in CI (label
 * "threaded").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drv_env.h"
#include "support.h"

enum { PAYLOAD = 600, WAIT_MS = 20000 };

struct sender {
	struct vnic_poller poller;
	struct vnic_netdev *nd;
	struct vnic_pkt_pool pool; /* used on A's cpu only, once started */
	struct vnic_pktgen_flow flow;
	uint32_t isn;
	struct vnic_pkt *pending;   /* refused with BUSY: sent again after tx_wake */
	_Atomic bool has_pending;   /* pending, for the test thread */
	_Atomic unsigned int burst; /* frames per xmit_more burst */
	_Atomic bool go;
	_Atomic bool stop;
	_Atomic uint64_t sent;
	_Atomic uint64_t tx_done_ok;
	_Atomic uint64_t tx_done_dropped;
};

struct receiver {
	uint32_t seed, isn;
	_Atomic uint64_t ok;
	_Atomic uint64_t bad;
	_Atomic uint64_t segs;
};

static struct sender s;
static struct receiver r;

static struct vnic_pkt *build(struct sender *sd, uint64_t i)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&sd->pool);
	uint32_t off = (uint32_t)(i * PAYLOAD);

	assert_non_null(p);
	sd->flow.seq = sd->isn + off;
	sd->flow.ip_id = (uint16_t)i;
	if (i & 1) {
		/* its checksum left to the NIC: PARTIAL, one segment */
		assert_int_equal(vnic_pktgen_build_gso(p, &sd->flow, off, PAYLOAD, PAYLOAD), 0);
		p->gso_type = VNIC_GSO_NONE;
		p->gso_size = 0;
		p->gso_segs = 0;
	} else {
		assert_int_equal(vnic_pktgen_build(p, &sd->flow, off, PAYLOAD), 0);
	}
	p->priv = (uint32_t)i;
	return p;
}

static int sender_poll(struct vnic_poller *poller, int budget)
{
	struct sender *sd = vnic_container_of(poller, struct sender, poller);
	unsigned int burst = atomic_load(&sd->burst);
	int n;

	if (!atomic_load(&sd->go))
		return 0;
	for (n = 0; n < budget; n++) {
		uint64_t i = atomic_load_explicit(&sd->sent, memory_order_relaxed);
		struct vnic_pkt *p;
		bool more;

		/* stops only between bursts: no batch is left without its doorbell */
		if (!sd->pending && n % burst == 0 && atomic_load(&sd->stop))
			return 0;
		p = sd->pending ? sd->pending : build(sd, i);
		more = (n + 1) % burst && n + 1 < budget;
		if (vnic_netdev_xmit(sd->nd, 0, p, more) == VNIC_TX_BUSY) {
			sd->pending = p; /* tx_wake schedules us again */
			atomic_store(&sd->has_pending, true);
			return 0;
		}
		sd->pending = NULL;
		atomic_store_explicit(&sd->has_pending, false, memory_order_relaxed);
		atomic_store_explicit(&sd->sent, i + 1, memory_order_relaxed);
	}
	return budget;
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
	struct sender *sd = ctx;

	(void)queue;
	(void)cookie;
	(void)bytes;
	if (status == VNIC_TX_DONE_OK)
		atomic_fetch_add(&sd->tx_done_ok, 1);
	else
		atomic_fetch_add(&sd->tx_done_dropped, 1);
}

static void a_tx_wake(void *ctx, unsigned int queue)
{
	(void)queue;
	vnic_poller_schedule(&((struct sender *)ctx)->poller);
}

static const struct vnic_host_ops a_ops = {.rx = a_rx, .tx_done = a_tx_done, .tx_wake = a_tx_wake};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void b_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct receiver *rc = ctx;

	(void)queue;
	for (unsigned int i = 0; i < n; i++) {
		struct vnic_pkt *p = pkts[i];
		uint32_t seq = be32(p->data + p->l2_len + p->l3_len + 4);

		/* the device vouched for each segment; an aggregate carries its GSO state */
		if (p->l4_proto == VNIC_IPPROTO_TCP &&
		    (p->ip_summed == VNIC_CSUM_UNNECESSARY || p->gso_segs > 1) &&
		    vnic_pktgen_verify_pkt(p, rc->seed, seq - rc->isn))
			atomic_fetch_add(&rc->ok, 1);
		else
			atomic_fetch_add(&rc->bad, 1);
		atomic_fetch_add(&rc->segs, p->gso_segs > 1 ? p->gso_segs : 1);
		vnic_pkt_free(p);
	}
}

/* b needs no word of its sends: tx_done and tx_wake stay NULL. */
static const struct vnic_host_ops b_ops = {.rx = b_rx};

static void sleep_ms(unsigned int ms)
{
	while (ms--)
		vnic_test_nap_us(1000);
}

/* Side i's driver counter reaches at least target within WAIT_MS. */
static void wait_drv(struct env *e, unsigned int side, const char *name, uint64_t target)
{
	for (unsigned int ms = 0; env_drv_ctr(e, side, name) < target; ms++) {
		if (ms == WAIT_MS)
			fail_msg("drv %u %s stayed below %llu", side, name,
				 (unsigned long long)target);
		vnic_test_nap_us(1000);
	}
}

static void wait_dev(struct env *e, unsigned int side, const char *name, uint64_t target)
{
	for (unsigned int ms = 0; env_dev_ctr(e, side, name) < target; ms++) {
		if (ms == WAIT_MS)
			fail_msg("dev %u %s stayed below %llu", side, name,
				 (unsigned long long)target);
		vnic_test_nap_us(1000);
	}
}

/* Traffic goes on: A's completions grow by n. */
static void more_traffic(struct env *e, uint64_t n)
{
	wait_drv(e, 0, "tx0_completions", env_drv_ctr(e, 0, "tx0_completions") + n);
}

static void start(struct env *e, struct vnic_drv_config *dc, struct vnic_dev_config *vc,
		  const struct vnic_cable_cfg *cable, unsigned int burst)
{
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	dc[1].rx_entries = 512;
	env_create_split(e, 2, dc, vc, cable);
	assert_int_equal(vnic_pkt_pool_init(&s.pool, 64, 2048, 64), 0);
	vnic_pktgen_flow_init(&s.flow, false, VNIC_IPPROTO_TCP);
	s.isn = s.flow.seq;
	r.seed = s.flow.seed;
	r.isn = s.isn;
	atomic_store(&s.burst, burst);
	s.nd = vnic_drv_netdev(e->s[0].drv);
	assert_int_equal(vnic_cpu_add(&e->v.cpu[0], &s.poller, "sender", sender_poll), 0);
	vnic_netdev_attach(s.nd, &a_ops, &s);
	vnic_netdev_attach(vnic_drv_netdev(e->s[1].drv), &b_ops, &r);
	/* open before the threads: the sender sees the negotiated features */
	assert_int_equal(env_open(e, 0), 0);
	assert_int_equal(env_open(e, 1), 0);
	env_start(e);
	atomic_store(&s.go, true);
	vnic_poller_schedule(&s.poller);
	more_traffic(e, 200);
}

static bool all_completed(void)
{
	return atomic_load(&s.tx_done_ok) + atomic_load(&s.tx_done_dropped) == atomic_load(&s.sent);
}

/*
 * Stops the sender, waits for every packet to be completed and for B to
 * settle, closes, and checks the books: each packet completed once, no bad
 * byte at B, every pool full.
 */
static void finish(struct env *e)
{
	uint64_t last, now;
	unsigned int still = 0, ms;

	atomic_store(&s.stop, true);
	vnic_poller_schedule(&s.poller);
	for (ms = 0; !all_completed() || atomic_load(&s.has_pending); ms++) {
		assert_true(ms < WAIT_MS);
		vnic_test_nap_us(1000);
	}
	last = atomic_load(&r.ok) + atomic_load(&r.bad);
	for (ms = 0; ms < 5000 && still < 100; ms++) {
		vnic_test_nap_us(1000);
		now = atomic_load(&r.ok) + atomic_load(&r.bad);
		still = now == last ? still + 1 : 0;
		last = now;
	}
	assert_int_equal(env_close(e, 0), 0);
	assert_int_equal(env_close(e, 1), 0);
	for (unsigned int i = 0; i < ENV_CPUS; i++)
		vnic_cpu_stop(&e->v.cpu[i]);
	assert_int_equal(atomic_load(&r.bad), 0);
	assert_true(atomic_load(&r.ok) > 0);
	assert_true(atomic_load(&r.segs) <= atomic_load(&s.tx_done_ok));
	assert_true(vnic_drv_pools_full(e->s[0].drv));
	assert_true(vnic_drv_pools_full(e->s[1].drv));
	assert_int_equal(s.pool.nfree, s.pool.count);
	env_destroy(e);
	vnic_pkt_pool_fini(&s.pool);
}

static void set_policies(struct env *e, unsigned int side, const struct vnic_drv_config *want)
{
	struct vnic_drv_config now;

	assert_int_equal(vnic_drv_set_policies(e->s[side].drv, want, 0), 0);
	vnic_drv_policies(e->s[side].drv, &now);
	assert_int_equal(now.tx_submit, want->tx_submit);
	assert_int_equal(now.tx_csum, want->tx_csum);
	assert_int_equal(now.rx_deliver, want->rx_deliver);
	assert_int_equal(now.tx_reclaim, want->tx_reclaim);
	assert_int_equal(now.tx_buf, want->tx_buf);
	assert_int_equal(now.rx_agg, want->rx_agg);
	assert_int_equal(now.bql, want->bql);
}

/*
 * tx-submit auto -> indirect: from the answer on, no packet goes direct;
 * back to auto, they do again; adaptive counts each lone packet for the
 * way it chose from then on, and auto stops that count. Lone packets (no
 * xmit_more), one flow. A value outside its enum is refused and changes
 * nothing.
 */
static void test_live_tx_submit(void **state)
{
	struct vnic_drv_config dc[2], p;
	uint64_t d1, changes;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 1);
	wait_drv(&e, 0, "tx0_direct_sends", 100);

	vnic_drv_policies(e.s[0].drv, &p);
	p.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
	set_policies(&e, 0, &p);
	d1 = env_drv_ctr(&e, 0, "tx0_direct_sends");
	more_traffic(&e, 2000);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_direct_sends"), d1);
	assert_int_equal(env_drv_ctr(&e, 0, "policy_changes"), 1);

	p.tx_submit = VNIC_DRV_SUBMIT_AUTO;
	set_policies(&e, 0, &p);
	wait_drv(&e, 0, "tx0_direct_sends", d1 + 100);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_submit_direct_bursts") +
				 env_drv_ctr(&e, 0, "tx0_submit_indirect_bursts"),
			 0);

	p.tx_submit = VNIC_DRV_SUBMIT_ADAPTIVE;
	set_policies(&e, 0, &p);
	wait_drv(&e, 0, "tx0_submit_probes", 2);
	p.tx_submit = VNIC_DRV_SUBMIT_AUTO;
	set_policies(&e, 0, &p);
	{
		uint64_t lone = env_drv_ctr(&e, 0, "tx0_submit_direct_bursts") +
				env_drv_ctr(&e, 0, "tx0_submit_indirect_bursts");

		assert_true(lone >= 2);
		more_traffic(&e, 2000);
		assert_int_equal(env_drv_ctr(&e, 0, "tx0_submit_direct_bursts") +
					 env_drv_ctr(&e, 0, "tx0_submit_indirect_bursts"),
				 lone);
	}

	/* refused, nothing changed: not even the fields that were valid */
	changes = env_drv_ctr(&e, 0, "policy_changes");
	p.tx_submit = VNIC_DRV_SUBMIT_INDIRECT;
	p.tx_reclaim = (enum vnic_drv_tx_reclaim)7;
	assert_int_equal(vnic_drv_set_policies(e.s[0].drv, &p, 0), -EINVAL);
	p.tx_reclaim = VNIC_DRV_RECLAIM_IRQ;
	p.rx_deliver = (enum vnic_deliver_mode)3;
	assert_int_equal(vnic_drv_set_policies(e.s[0].drv, &p, 0), -EINVAL);
	vnic_drv_policies(e.s[0].drv, &p);
	assert_int_equal(p.tx_submit, VNIC_DRV_SUBMIT_AUTO);
	assert_int_equal(p.tx_reclaim, VNIC_DRV_RECLAIM_IRQ);
	assert_int_equal(p.rx_deliver, VNIC_DELIVER_GRO_LIST);
	assert_int_equal(env_drv_ctr(&e, 0, "policy_changes"), changes);
	/* the same policies again: accepted, no change counted */
	set_policies(&e, 0, &p);
	assert_int_equal(env_drv_ctr(&e, 0, "policy_changes"), changes);
	finish(&e);
}

/* rx-deliver list -> gro on B: GRO starts merging the stream's segments. */
static void test_live_rx_deliver(void **state)
{
	struct vnic_drv_config dc[2], p;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	dc[1].rx_deliver = VNIC_DELIVER_LIST;
	start(&e, dc, NULL, NULL, 16);
	wait_drv(&e, 1, "rx0_packets", 2000);
	assert_int_equal(env_drv_ctr(&e, 1, "rx0_gro_merged"), 0);

	vnic_drv_policies(e.s[1].drv, &p);
	p.rx_deliver = VNIC_DELIVER_GRO;
	set_policies(&e, 1, &p);
	wait_drv(&e, 1, "rx0_gro_merged", 1);
	finish(&e);
}

/*
 * tx-reclaim irq -> lazy -> irq -> napi -> irq -> orphan -> irq while A
 * sends: lazy reclaims from its timer with the completion interrupt off,
 * napi from the rx NAPI, orphan tells the host at xmit; each stops when the
 * mode is left. Every packet is still completed once.
 */
static void test_live_tx_reclaim(void **state)
{
	struct vnic_drv_config dc[2], p;
	uint64_t t1, i1, o1;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 4);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_timer_reclaims"), 0);
	vnic_drv_policies(e.s[0].drv, &p);

	p.tx_reclaim = VNIC_DRV_RECLAIM_LAZY;
	set_policies(&e, 0, &p);
	wait_drv(&e, 0, "tx0_timer_reclaims", 3);
	/* the interrupt is off: no completion schedules the poller any more */
	i1 = env_drv_ctr(&e, 0, "tx0_interrupts");
	more_traffic(&e, 2000);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_interrupts"), i1);

	p.tx_reclaim = VNIC_DRV_RECLAIM_IRQ;
	set_policies(&e, 0, &p);
	wait_drv(&e, 0, "tx0_interrupts", i1 + 10);
	t1 = env_drv_ctr(&e, 0, "tx0_timer_reclaims");
	more_traffic(&e, 2000);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_timer_reclaims"), t1);

	/* napi: the completions schedule the rx NAPI, not the completion poller */
	p.tx_reclaim = VNIC_DRV_RECLAIM_NAPI;
	set_policies(&e, 0, &p);
	more_traffic(&e, 200);
	i1 = env_drv_ctr(&e, 0, "tx0_interrupts");
	t1 = env_drv_ctr(&e, 0, "rx0_interrupts");
	more_traffic(&e, 2000);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_interrupts"), i1);
	assert_true(env_drv_ctr(&e, 0, "rx0_interrupts") > t1);

	p.tx_reclaim = VNIC_DRV_RECLAIM_IRQ;
	set_policies(&e, 0, &p);
	wait_drv(&e, 0, "tx0_interrupts", i1 + 10);

	p.tx_reclaim = VNIC_DRV_RECLAIM_ORPHAN;
	set_policies(&e, 0, &p);
	wait_drv(&e, 0, "tx0_orphaned", 100);
	p.tx_reclaim = VNIC_DRV_RECLAIM_IRQ;
	set_policies(&e, 0, &p);
	o1 = env_drv_ctr(&e, 0, "tx0_orphaned");
	more_traffic(&e, 2000);
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_orphaned"), o1);
	assert_int_equal(env_drv_ctr(&e, 0, "policy_changes"), 6);
	finish(&e);
}

/* The other policies flipped back and forth under traffic, BQL off and on included. */
static void test_live_policies_mixed(void **state)
{
	struct vnic_drv_config dc[2], p;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 8);
	vnic_drv_policies(e.s[0].drv, &p);
	for (unsigned int i = 0; i < 8; i++) {
		p.bql = i & 1;
		p.tx_hdr_build = i & 2 ? VNIC_DRV_HDR_COPY : VNIC_DRV_HDR_DIRECT;
		p.tx_csum = (enum vnic_drv_tx_csum)(i % 2 ? VNIC_DRV_CSUM_HW_HEADERS
							  : VNIC_DRV_CSUM_SW_DIRECT);
		p.bql_complete = i & 4 ? VNIC_DRV_BQL_PER_ENTRY : VNIC_DRV_BQL_PER_ROUND;
		p.rx_replenish = i & 1 ? VNIC_DRV_REPLENISH_ALWAYS : VNIC_DRV_REPLENISH_LOW;
		p.tx_reclaim = (enum vnic_drv_tx_reclaim)(i % 4);
		set_policies(&e, 0, &p);
		more_traffic(&e, 300);
	}
	/* BQL was on at the end: the limit is being worked out again */
	p.bql = true;
	set_policies(&e, 0, &p);
	more_traffic(&e, 500);
	assert_true(env_drv_ctr(&e, 0, "tx0_bql_completed_calls") > 0);
	finish(&e);
}

/* The cable's loss 0 -> 0.05 -> 0: frames are lost on the line, then no more. */
static void test_live_cable(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_cable_cfg c, got;
	struct vnic_cable_stats st;
	uint64_t lost;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 4);
	vnic_cable_config_get(e.v.cable, &c);
	vnic_cable_stats(e.v.cable, 0, &st);
	assert_int_equal(st.drop_loss, 0);

	c.loss = 0.05;
	c.seed = 9;
	assert_int_equal(vnic_cable_set(e.v.cable, &c), 0);
	for (unsigned int ms = 0; st.drop_loss < 20; ms++) {
		assert_true(ms < WAIT_MS);
		vnic_test_nap_us(1000);
		vnic_cable_stats(e.v.cable, 0, &st);
	}
	vnic_cable_config_get(e.v.cable, &got);
	assert_true(got.loss == 0.05);
	assert_int_equal(got.seed, 9);

	/* mtu and slots size the rings; a probability past 1 is no probability */
	got = c;
	got.mtu = c.mtu + 1;
	assert_int_equal(vnic_cable_set(e.v.cable, &got), -EINVAL);
	got = c;
	got.slots = c.slots * 2;
	assert_int_equal(vnic_cable_set(e.v.cable, &got), -EINVAL);
	got = c;
	got.loss = 0;
	got.corrupt = 1.5;
	assert_int_equal(vnic_cable_set(e.v.cable, &got), -EINVAL);
	vnic_cable_config_get(e.v.cable, &got);
	assert_true(got.loss == 0.05 && got.corrupt == 0);

	c.loss = 0;
	assert_int_equal(vnic_cable_set(e.v.cable, &c), 0);
	/* a commit under way when we set may still roll with the old loss */
	more_traffic(&e, 200);
	vnic_cable_stats(e.v.cable, 0, &st);
	lost = st.drop_loss;
	more_traffic(&e, 2000);
	vnic_cable_stats(e.v.cable, 0, &st);
	assert_int_equal(st.drop_loss, lost);
	finish(&e);
}

/*
 * The cpu's spin_limit_ns. The array is sized from vnic_cpu_counters, which
 * says how many counters there are: a counter added to the cpu does not
 * overrun a fixed one here.
 */
static uint64_t spin_limit(const struct vnic_cpu *cpu)
{
	unsigned int n = vnic_cpu_counters(cpu, NULL, 0);
	struct vnic_counter *c = calloc(n, sizeof(*c));
	const struct vnic_counter *f;
	uint64_t v;

	assert_non_null(c);
	assert_int_equal(vnic_cpu_counters(cpu, c, n), n);
	f = vnic_counter_find(c, n, "spin_limit_ns");
	assert_non_null(f);
	v = f->value;
	free(c);
	return v;
}

/* B's cpu spins as it is told, from this thread: the spin limit follows. */
static void test_live_busy_poll(void **state)
{
	struct vnic_drv_config dc[2];
	enum vnic_cpu_spin mode;
	uint64_t ns, limit = 0;
	unsigned int ms;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 4);
	vnic_cpu_set_busy_poll(&e.v.cpu[1], 30000, VNIC_CPU_SPIN_FIXED);
	vnic_cpu_busy_poll(&e.v.cpu[1], &ns, &mode);
	assert_int_equal(ns, 30000);
	assert_int_equal(mode, VNIC_CPU_SPIN_FIXED);
	for (ms = 0; limit != 30000; ms++) {
		assert_true(ms < WAIT_MS);
		vnic_test_nap_us(1000);
		limit = spin_limit(&e.v.cpu[1]);
	}
	vnic_cpu_set_busy_poll(&e.v.cpu[1], 0, VNIC_CPU_SPIN_ADAPTIVE);
	for (ms = 0; limit != 0; ms++) {
		assert_true(ms < WAIT_MS);
		vnic_test_nap_us(1000);
		limit = spin_limit(&e.v.cpu[1]);
	}
	more_traffic(&e, 500);
	finish(&e);
}

/*
 * tx-csum hw-noheaders (set live) against a cautious device: checksum
 * packets go without the headers it asked for. It sends them anyway until
 * drop-missing-headers is turned on, then drops them (the driver hears an
 * error completion), and sends them again once it is off.
 */
static void test_live_drop_missing(void **state)
{
	struct vnic_drv_config dc[2], p;
	uint64_t d1;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 1);
	vnic_drv_policies(e.s[0].drv, &p);
	p.tx_csum = VNIC_DRV_CSUM_HW_NOHEADERS;
	set_policies(&e, 0, &p);
	wait_dev(&e, 0, "tx0_csum_missing_hdrs", 100);
	assert_int_equal(env_dev_ctr(&e, 0, "tx0_drop_missing_hdrs"), 0);

	assert_int_equal(vnic_dev_set(e.v.dev[0], VNIC_DEV_HDRS_CAUTIOUS, true), 0);
	wait_dev(&e, 0, "tx0_drop_missing_hdrs", 50);
	wait_drv(&e, 0, "tx0_comp_errors", 50);
	assert_int_equal(env_dev_ctr(&e, 0, "drop_missing_hdrs"), 1);
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_hdr_mask_changes"), 0);

	assert_int_equal(vnic_dev_set(e.v.dev[0], VNIC_DEV_HDRS_CAUTIOUS, false), 0);
	more_traffic(&e, 200);
	d1 = env_dev_ctr(&e, 0, "tx0_drop_missing_hdrs");
	more_traffic(&e, 2000);
	assert_int_equal(env_dev_ctr(&e, 0, "tx0_drop_missing_hdrs"), d1);
	/* an unknown mask: refused, nothing changed */
	assert_int_equal(vnic_dev_set(e.v.dev[0], (enum vnic_dev_hdr_mask)2, true), -EINVAL);
	assert_int_equal(env_dev_ctr(&e, 0, "drop_missing_hdrs"), 0);
	finish(&e);
}

/*
 * The device's header mask exact -> cautious: the driver is made to
 * negotiate again (one reset), hears the new mask, and from then on its
 * lone checksum packets need a software checksum to go direct (tx-csum
 * sw-direct); traffic goes on with no bad byte.
 */
static void test_live_hdr_mask(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_dev_config vc[2];
	uint64_t resets, done, sw, req;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	env_dev_config(&vc[0]);
	env_dev_config(&vc[1]);
	vc[0].hdr_mask = VNIC_DEV_HDRS_EXACT;
	start(&e, dc, vc, NULL, 1);
	more_traffic(&e, 1000);
	/* exact: checksum offload needs no headers, lone packets go direct with it */
	assert_int_equal(env_drv_ctr(&e, 0, "tx0_csum_sw"), 0);
	assert_true(env_drv_ctr(&e, 0, "tx0_csum_offload") > 0);
	resets = env_drv_ctr(&e, 0, "resets");
	done = env_drv_ctr(&e, 0, "reset_done");
	req = env_drv_ctr(&e, 0, "desc_req");

	assert_int_equal(vnic_dev_set(e.v.dev[0], VNIC_DEV_HDRS_CAUTIOUS, false), 0);
	wait_drv(&e, 0, "reset_done", done + 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets"), resets + 1);
	assert_int_equal(env_drv_ctr(&e, 0, "resets_xport"), 1);
	assert_int_equal(env_dev_ctr(&e, 0, "ctl_hdr_mask_changes"), 1);
	assert_int_equal(env_dev_ctr(&e, 0, "hdr_mask"), VNIC_DEV_HDRS_CAUTIOUS);
	assert_true(env_drv_ctr(&e, 0, "desc_req") != req);
	assert_int_equal(env_drv_ctr(&e, 0, "desc_req"), env_dev_ctr(&e, 0, "neg_desc_req"));
	sw = env_drv_ctr(&e, 0, "tx0_csum_sw");
	wait_drv(&e, 0, "tx0_csum_sw", sw + 100);
	more_traffic(&e, 1000);
	finish(&e);
}

/*
 * Faults set while traffic runs, on a device and a hypervisor created
 * without any: the device resets on its new schedule, the hypervisor
 * refuses sends; set to none, both stop.
 */
static void test_live_faults(void **state)
{
	struct vnic_drv_config dc[2];
	struct vnic_fault_cfg f;
	struct vnic_hv_stats hs;
	uint64_t resets, busy;
	struct env e;

	(void)state;
	env_drv_config(&dc[0]);
	env_drv_config(&dc[1]);
	start(&e, dc, NULL, NULL, 4);
	assert_int_equal(vnic_fault_parse("seed=3,reset-every=40ms,hcall-busy=0.01", &f), 0);
	assert_int_equal(vnic_dev_set_faults(e.v.dev[0], &f), 0);
	assert_int_equal(vnic_hv_set_faults(e.v.hv[0], &f, 0), 0);
	vnic_dev_faults_enable(e.v.dev[0], true);
	vnic_hv_faults_enable(e.v.hv[0], true);
	wait_dev(&e, 0, "fault_resets", 2);
	wait_drv(&e, 0, "resets_xport", 2);
	for (unsigned int ms = 0;; ms++) {
		assert_true(ms < WAIT_MS);
		vnic_hv_stats(e.v.hv[0], &hs);
		if (hs.fault_busy >= 5)
			break;
		vnic_test_nap_us(1000);
	}

	/* refused as it is, nothing changed */
	f.err_ind_fatal = 2;
	assert_int_equal(vnic_dev_set_faults(e.v.dev[0], &f), -EINVAL);
	f.err_ind_fatal = 0;
	f.hcall_busy = 0.7;
	f.hcall_dropped = 0.7;
	assert_int_equal(vnic_hv_set_faults(e.v.hv[0], &f, 0), -EINVAL);

	assert_int_equal(vnic_dev_set_faults(e.v.dev[0], NULL), 0);
	assert_int_equal(vnic_hv_set_faults(e.v.hv[0], NULL, 0), 0);
	/* a reset under way comes to its end; then nothing more */
	sleep_ms(100);
	more_traffic(&e, 200);
	resets = env_dev_ctr(&e, 0, "fault_resets");
	vnic_hv_stats(e.v.hv[0], &hs);
	busy = hs.fault_busy;
	sleep_ms(200);
	more_traffic(&e, 1000);
	assert_int_equal(env_dev_ctr(&e, 0, "fault_resets"), resets);
	vnic_hv_stats(e.v.hv[0], &hs);
	assert_int_equal(hs.fault_busy, busy);
	vnic_dev_faults_enable(e.v.dev[0], false);
	vnic_hv_faults_enable(e.v.hv[0], false);
	finish(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_tx_submit),
		cmocka_unit_test(test_live_rx_deliver),
		cmocka_unit_test(test_live_tx_reclaim),
		cmocka_unit_test(test_live_policies_mixed),
		cmocka_unit_test(test_live_cable),
		cmocka_unit_test(test_live_busy_poll),
		cmocka_unit_test(test_live_drop_missing),
		cmocka_unit_test(test_live_hdr_mask),
		cmocka_unit_test(test_live_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
