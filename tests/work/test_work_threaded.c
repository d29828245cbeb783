// SPDX-License-Identifier: MIT
/*
 * The workloads on real threads, across the in-process cable: every byte
 * checked while three cpu threads run at once. Run under TSan by CI (label
 * "threaded").
 *
 *	cpu0: host A (poller, xmit)          cpu1: host B (poller, xmit)
 *	         \                                   /
 *	          cable end 0  <==============>  cable end 1
 *	         /                                   \
 *	cpu2: A's rx NAPI -> host A rx callback; B's rx NAPI -> host B rx callback
 *
 * The rx callbacks run on cpu2 and hand their events to the pollers on cpu0
 * and cpu1 through the hosts' event queues; the NAPIs sleep on the cable's
 * notification. A minimal netdev ("cnet") joins a host to a cable end: xmit
 * copies (or segments) into cable slots and completes at once; the NAPI
 * copies frames into its own rx buffers. A full cable stops the queue, and a
 * poller on the tx cpu wakes it when slots are free again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "port/port.h"
#include "support.h"
#include "work/work.h"

enum { WAKE_ROOM = 64, RX_BATCH = 64 };

struct cnet {
	struct vnic_netdev dev;
	struct vnic_wire *w;
	struct vnic_cpu *txcpu;
	struct vnic_napi napi;		/* on the rx cpu */
	struct vnic_pkt_pool rxpool;	/* used on the rx cpu only */
	struct vnic_poller waker;	/* on the tx cpu */
	bool stopped;			/* tx cpu only */
	uint64_t rx_nobuf;
};

static int cnet_xmit(struct vnic_netdev *dev, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	struct cnet *n = dev->priv;
	struct vnic_wire *w = n->w;
	struct vnic_pkt *slots[VNIC_GSO_MAX_SEGS];
	uint32_t cookie = pkt->priv, bytes = pkt->len;
	unsigned int need = pkt->gso_size ? (unsigned int)vnic_gso_count(pkt) : 1, got;

	(void)q;
	(void)more;	/* committed per packet: the cable notifies per commit */
	got = w->ops->tx_reserve(w, slots, need);
	if (got < need) {
		w->ops->tx_commit(w, slots, 0, got);
		n->stopped = true;
		vnic_poller_schedule(&n->waker);
		return VNIC_TX_BUSY;
	}
	if (pkt->gso_size) {
		assert_int_equal(vnic_gso_segment(pkt, slots, need, VNIC_GSO_F_CSUM_COMPLETE),
				 (int)need);
	} else {
		if (pkt->ip_summed == VNIC_CSUM_PARTIAL)
			assert_int_equal(vnic_csum_help(pkt), 0);
		assert_int_equal(vnic_pkt_copy_in(slots[0], pkt->data, pkt->len), 0);
	}
	w->ops->tx_commit(w, slots, need, got);
	vnic_pkt_free(pkt);
	dev->host->tx_done(dev->host_ctx, 0, cookie, bytes, VNIC_TX_DONE_OK);
	return VNIC_TX_OK;
}

static bool cnet_tx_stopped(struct vnic_netdev *dev, unsigned int q)
{
	(void)q;
	return ((struct cnet *)dev->priv)->stopped;
}

static const struct vnic_netdev_ops cnet_ops = {
	.xmit = cnet_xmit,
	.tx_stopped = cnet_tx_stopped,
};

/* On the tx cpu: restart the queue once the cable has room for a superpacket. */
static int cnet_wake(struct vnic_poller *p, int budget)
{
	struct cnet *n = vnic_container_of(p, struct cnet, waker);
	struct vnic_pkt *slots[WAKE_ROOM];
	unsigned int got;

	(void)budget;
	if (!n->stopped)
		return 0;
	got = n->w->ops->tx_reserve(n->w, slots, WAKE_ROOM);
	n->w->ops->tx_commit(n->w, slots, 0, got);
	if (got < WAKE_ROOM) {
		vnic_poller_set_timer(p, vnic_now_ns() + 20000);
		return 0;
	}
	n->stopped = false;
	n->dev.host->tx_wake(n->dev.host_ctx, 0);
	return 0;
}

/* On the rx cpu: frames into our own buffers, checksum left to the host. */
static int cnet_poll(struct vnic_napi *napi, int budget)
{
	struct cnet *n = vnic_container_of(napi, struct cnet, napi);
	struct vnic_pkt *frames[RX_BATCH], *pkts[RX_BATCH];
	unsigned int got, i, k = 0;

	if (budget > RX_BATCH)
		budget = RX_BATCH;
	got = n->w->ops->rx_peek(n->w, frames, (unsigned int)budget);
	for (i = 0; i < got; i++) {
		struct vnic_pkt *pkt = vnic_pkt_alloc(&n->rxpool);

		if (!pkt) {
			n->rx_nobuf++;
			continue;
		}
		assert_int_equal(vnic_pkt_copy_in(pkt, frames[i]->data, frames[i]->len), 0);
		pkts[k++] = pkt;
	}
	n->w->ops->rx_release(n->w, got);
	if (k)
		n->dev.host->rx(n->dev.host_ctx, 0, pkts, k);
	return (int)got;
}

static void cnet_notify(void *ctx)
{
	vnic_napi_schedule(ctx);
}

static void cnet_init(struct cnet *n, struct vnic_wire *w, struct vnic_cpu *txcpu,
		      struct vnic_cpu *rxcpu, unsigned int i, uint32_t features)
{
	memset(n, 0, sizeof(*n));
	n->w = w;
	n->txcpu = txcpu;
	n->dev.ops = &cnet_ops;
	n->dev.priv = n;
	n->dev.name = i ? "cnet1" : "cnet0";
	n->dev.num_tx_queues = 1;
	n->dev.num_rx_queues = 1;
	n->dev.mtu = w->mtu;
	n->dev.features = features;
	n->dev.gso_max_size = 65536;
	n->dev.mac[0] = 0x02;
	n->dev.mac[5] = (uint8_t)(0x10 + i);
	n->dev.tx_cpu[0] = txcpu;
	n->dev.rx_cpu[0] = rxcpu;
	assert_int_equal(vnic_pkt_pool_init(&n->rxpool, 2048, 2048, 64), 0);
	assert_int_equal(vnic_napi_init(&n->napi, rxcpu, n->dev.name, cnet_poll, w->ops->rx_irq, w,
					0),
			 0);
	assert_int_equal(vnic_cpu_add(txcpu, &n->waker, "waker", cnet_wake), 0);
	w->notify = cnet_notify;
	w->notify_ctx = &n->napi;
}

struct bed {
	struct vnic_cable *cable;
	struct vnic_cpu cpu[3];
	struct cnet net[2];
	struct vnic_pkt_pool pool[2];
};

static void bed_init(struct bed *b, uint32_t features, uint32_t pool_buf)
{
	struct vnic_cable_cfg cfg = { .slots = 512 };
	unsigned int i;

	memset(b, 0, sizeof(*b));
	assert_int_equal(vnic_cable_create(&b->cable, &cfg), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(vnic_cpu_init(&b->cpu[i], "cpu", 0), 0);
	for (i = 0; i < 2; i++) {
		cnet_init(&b->net[i], vnic_cable_end(b->cable, i), &b->cpu[i], &b->cpu[2], i,
			  features);
		assert_int_equal(vnic_pkt_pool_init(&b->pool[i], pool_buf > 4096 ? 256 : 4096,
						    pool_buf, 128),
				 0);
	}
}

static void bed_start(struct bed *b)
{
	unsigned int i;

	/* The first poll finds nothing and arms the cable's notification. */
	for (i = 0; i < 2; i++)
		vnic_napi_schedule(&b->net[i].napi);
	for (i = 0; i < 3; i++)
		assert_int_equal(vnic_cpu_start(&b->cpu[i]), 0);
}

static void bed_stop_cpus(struct bed *b)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		vnic_cpu_stop(&b->cpu[i]);
}

static void bed_fini(struct bed *b)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		assert_int_equal(b->net[i].rxpool.nfree, b->net[i].rxpool.count);
		assert_int_equal(b->pool[i].nfree, b->pool[i].count);
		vnic_pkt_pool_fini(&b->net[i].rxpool);
		vnic_pkt_pool_fini(&b->pool[i]);
	}
	for (i = 0; i < 3; i++)
		vnic_cpu_fini(&b->cpu[i]);
	vnic_cable_destroy(b->cable);
}

/* Waits (sleeping, bounded) until cond(ctx); fails the test on timeout. */
static void wait_for(bool (*cond)(void *ctx), void *ctx, unsigned int timeout_s)
{
	uint64_t end = vnic_now_ns() + timeout_s * 1000000000ull;

	while (!cond(ctx)) {
		if (vnic_now_ns() > end)
			fail_msg("timed out");
		vnic_test_nap_us(1000);
	}
}

struct rr_wait {
	struct vnic_rr *rr;
	uint64_t target;
};

static bool rr_enough(void *ctx)
{
	struct rr_wait *w = ctx;
	struct vnic_work_results r;

	vnic_rr_results(w->rr, &r);
	return r.transactions >= w->target;
}

static bool rr_quiet(void *ctx)
{
	return vnic_rr_quiesced(((struct rr_wait *)ctx)->rr);
}

/* 64 s: a loss probe 2 s after the last send, the RTO never within a test's time */
#define THREADED_RTO_MIN_NS 64000000000ull

static void test_rr_threaded(void **state)
{
	struct vnic_rr_opts o = { .sessions = 20, .req_size = 100, .resp_size = 3000 };
	struct vnic_work_results res;
	struct rr_wait w = { .target = 20000 };
	struct bed b;

	(void)state;
	bed_init(&b, VNIC_NETIF_F_CSUM, 2048);
	/*
	 * No timer may fire: the cable loses nothing. A loss probe waits
	 * 2 SRTT + floor / 32, so the floor is one no stall of a loaded
	 * machine under TSan reaches (a 5 s floor's 156 ms was reached).
	 */
	o.tcp.rto_min_ns = THREADED_RTO_MIN_NS;
	assert_int_equal(vnic_rr_create(&w.rr, &b.net[0].dev, &b.pool[0], &b.net[1].dev,
					&b.pool[1], &o),
			 0);
	bed_start(&b);
	vnic_rr_start(w.rr);
	wait_for(rr_enough, &w, 240);
	vnic_rr_stop(w.rr);
	wait_for(rr_quiet, &w, 240);
	bed_stop_cpus(&b);

	vnic_rr_results(w.rr, &res);
	assert_true(res.transactions >= w.target);
	assert_int_equal(res.latency->count, res.transactions);
	assert_int_equal(res.bytes, res.transactions * (o.req_size + o.resp_size));
	assert_int_equal(res.err.payload, 0);
	assert_int_equal(res.err.bad_csum, 0);
	assert_int_equal(res.err.dup + res.err.ooo + res.err.retransmits, 0);
	assert_int_equal(res.err.rx_overflow, 0);
	vnic_rr_destroy(w.rr);
	bed_fini(&b);
}

struct st_wait {
	struct vnic_stream *st;
	uint64_t target;
};

static bool st_done(void *ctx)
{
	struct st_wait *w = ctx;

	return vnic_stream_flow_bytes(w->st, 0) >= w->target &&
	       vnic_stream_flow_bytes(w->st, 1) >= w->target;
}

static bool st_quiet(void *ctx)
{
	return vnic_stream_quiesced(((struct st_wait *)ctx)->st);
}

static void test_stream_threaded(void **state)
{
	struct vnic_stream_opts o = { .flows = 2, .bytes = 8 << 20 };
	struct vnic_work_results res;
	struct st_wait w = { .target = 8 << 20 };
	struct bed b;

	(void)state;
	/* TSO: superpackets segmented straight into cable slots. As with a
	 * driver, the offloads appear only after create, once the cpus run
	 * (the driver's open), and start must take them from there. */
	bed_init(&b, 0, VNIC_PKT_MAX_LEN + 128);
	o.tcp.rto_min_ns = THREADED_RTO_MIN_NS;
	assert_int_equal(vnic_stream_create(&w.st, &b.net[0].dev, &b.pool[0], &b.net[1].dev,
					    &b.pool[1], &o),
			 0);
	bed_start(&b);
	b.net[0].dev.features = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4;
	vnic_stream_start(w.st);
	wait_for(st_done, &w, 240);
	vnic_stream_stop(w.st);
	wait_for(st_quiet, &w, 240);
	bed_stop_cpus(&b);

	vnic_stream_results(w.st, &res);
	assert_int_equal(res.bytes, 2 * w.target);
	assert_true(res.tx_segs > res.tx_pkts);
	assert_int_equal(res.err.payload, 0);
	assert_int_equal(res.err.bad_csum, 0);
	assert_int_equal(res.err.dup + res.err.ooo + res.err.retransmits, 0);
	/* Frames were dropped only if the rx side ran out of buffers. */
	assert_int_equal(b.net[1].rx_nobuf, 0);
	vnic_stream_destroy(w.st);
	bed_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rr_threaded),
		cmocka_unit_test(test_stream_threaded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
