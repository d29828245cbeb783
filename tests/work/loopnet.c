// SPDX-License-Identifier: MIT
/* The loopback netdev of the workload tests (see loopnet.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loopnet.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool roll(struct loopnet *l, double p)
{
	return p > 0 && (double)(rng_next(&l->rng) >> 11) < p * 9007199254740992.0;
}

static void tx_done(struct loopnet *l, uint32_t cookie, uint32_t bytes)
{
	if (l->cfg.hold_tx_done && l->nheld < LOOPNET_MAX_HELD) {
		l->held[l->nheld].cookie = cookie;
		l->held[l->nheld++].bytes = bytes;
		l->held_bytes += bytes;
		return;
	}
	if (l->dev.host)
		l->dev.host->tx_done(l->dev.host_ctx, 0, cookie, bytes, VNIC_TX_DONE_OK);
}

unsigned int loopnet_release_tx_done(struct loopnet *l, unsigned int n)
{
	unsigned int i;

	if (!n || n > l->nheld)
		n = l->nheld;
	for (i = 0; i < n; i++) {
		l->held_bytes -= l->held[i].bytes;
		if (l->dev.host)
			l->dev.host->tx_done(l->dev.host_ctx, 0, l->held[i].cookie,
					     l->held[i].bytes, VNIC_TX_DONE_OK);
	}
	memmove(l->held, l->held + n, (l->nheld - n) * sizeof(l->held[0]));
	l->nheld -= n;
	return n;
}

/* Makes what was written visible to the peer and wakes its rx poller. */
static void doorbell(struct loopnet *l)
{
	struct loopnet *p = l->peer;

	if (p->head == p->pend)
		return;
	p->head = p->pend;
	l->st.doorbells++;
	vnic_poller_schedule(&p->rx_poller);
}

static void enqueue(struct loopnet *l, struct vnic_pkt *pkt)
{
	struct loopnet *p = l->peer;
	uint32_t hdr = (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len;

	if ((l->cfg.script && l->cfg.script(l->cfg.script_ctx, pkt)) || roll(l, l->cfg.drop)) {
		l->st.dropped++;
		vnic_pkt_free(pkt);
		return;
	}
	if (roll(l, l->cfg.corrupt) && pkt->len > hdr) {
		uint64_t bit = hdr * 8ull + rng_next(&l->rng) % ((pkt->len - hdr) * 8ull);

		pkt->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		l->st.corrupted++;
	}
	p->ring[p->pend % p->cap] = pkt;
	if (p->pend != p->tail && roll(l, l->cfg.reorder)) {
		struct vnic_pkt **a = &p->ring[(p->pend - 1) % p->cap],
				**b = &p->ring[p->pend % p->cap];
		struct vnic_pkt *t = *a;

		*a = *b;
		*b = t;
		l->st.reordered++;
	}
	p->pend++;
}

static unsigned int segment(struct loopnet *l, struct vnic_pkt *pkt)
{
	static struct vnic_pkt *segs[VNIC_GSO_MAX_SEGS];
	int n = vnic_gso_count(pkt), i;
	unsigned int flags =
		l->cfg.resolve_csum ? VNIC_GSO_F_CSUM_COMPLETE : VNIC_GSO_F_CSUM_PARTIAL;

	assert_true(n > 0);
	assert_int_equal(vnic_pkt_alloc_bulk(&l->seg_pool, segs, (unsigned int)n), n);
	assert_int_equal(vnic_gso_segment(pkt, segs, (unsigned int)n, flags), n);
	vnic_pkt_free(pkt);
	for (i = 0; i < n; i++)
		enqueue(l, segs[i]);
	l->st.segmented++;
	return (unsigned int)n;
}

static int ln_xmit(struct vnic_netdev *dev, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	struct loopnet *l = dev->priv, *p = l->peer;
	uint32_t cookie = pkt->priv, bytes = pkt->len;
	bool seg = pkt->gso_size && !l->cfg.peer_gso;
	unsigned int need = seg ? (unsigned int)vnic_gso_count(pkt) : 1;

	assert_true(q < dev->num_tx_queues && q < LOOPNET_MAX_TXQ);
	if (l->stopped || p->pend - p->tail + need > p->cap) {
		/* As a driver does when it stops: ring the doorbell, nothing
		 * more will come to do it. */
		l->stopped = true;
		l->st.busy++;
		doorbell(l);
		return VNIC_TX_BUSY;
	}
	l->st.xmits++;
	l->st.txq_xmits[q]++;
	if (pkt->gso_size) {
		l->st.gso_pkts++;
		if (pkt->gso_size > l->st.max_gso_size)
			l->st.max_gso_size = pkt->gso_size;
	}
	if (pkt->ip_summed == VNIC_CSUM_PARTIAL)
		l->st.partial++;
	if (pkt->len > l->st.max_len)
		l->st.max_len = pkt->len;
	if (seg) {
		segment(l, pkt);
	} else {
		if (l->cfg.resolve_csum && pkt->ip_summed == VNIC_CSUM_PARTIAL)
			assert_int_equal(vnic_csum_help(pkt), 0);
		enqueue(l, pkt);
	}
	tx_done(l, cookie, bytes);
	if (!more)
		doorbell(l);
	return VNIC_TX_OK;
}

static bool ln_tx_stopped(struct vnic_netdev *dev, unsigned int q)
{
	(void)q;
	return ((struct loopnet *)dev->priv)->stopped;
}

static const struct vnic_netdev_ops ln_ops = {
	.xmit = ln_xmit,
	.tx_stopped = ln_tx_stopped,
};

static void ln_deliver(void *ctx, struct vnic_pkt **pkts, unsigned int n)
{
	struct loopnet *l = ctx;

	l->dev.host->rx(l->dev.host_ctx, l->rx_queue, pkts, n);
}

static int ln_rx_poll(struct vnic_poller *pl, int budget)
{
	struct loopnet *l = vnic_container_of(pl, struct loopnet, rx_poller);
	struct loopnet *s = l->peer;
	struct vnic_pkt *batch[256];
	unsigned int n = 0, i;

	if (budget > 256)
		budget = 256;
	while (l->tail != l->head && n < (unsigned int)budget)
		batch[n++] = l->ring[l->tail++ % l->cap];
	if (n && l->cfg.gro) {
		for (i = 0; i < n; i++)
			vnic_deliver_rx(&l->deliver, batch[i]);
		vnic_deliver_flush(&l->deliver);
	} else if (n) {
		l->dev.host->rx(l->dev.host_ctx, l->rx_queue, batch, n);
	}
	l->st.delivered += n;
	/* The sender's queue restarts once half the ring is free. */
	if (s->stopped && l->pend - l->tail <= l->cap / 2) {
		s->stopped = false;
		if (s->dev.host)
			s->dev.host->tx_wake(s->dev.host_ctx, 0);
	}
	if (l->tail != l->head)
		return budget;
	return (int)n < budget ? (int)n : budget - 1;
}

static void loopnet_init(struct loopnet *l, const struct loopnet_cfg *cfg, struct vnic_cpu *cpu,
			 unsigned int i)
{
	static const char *names[2] = { "loop0", "loop1" };

	memset(l, 0, sizeof(*l));
	if (cfg)
		l->cfg = *cfg;
	l->cpu = cpu;
	l->cap = l->cfg.ring ? l->cfg.ring : 1024;
	assert_true(l->cap <= LOOPNET_MAX_RING);
	l->rng = l->cfg.seed + i;
	l->dev.ops = &ln_ops;
	l->dev.priv = l;
	l->dev.name = names[i];
	l->dev.num_tx_queues = 1;
	l->dev.num_rx_queues = 1;
	l->dev.mtu = l->cfg.mtu ? l->cfg.mtu : 1500;
	l->dev.features = l->cfg.features;
	l->dev.gso_max_size = 65536;
	l->dev.mac[0] = 0x02;
	l->dev.mac[5] = (uint8_t)(i + 1);
	l->dev.tx_cpu[0] = cpu;
	l->dev.rx_cpu[0] = cpu;
	assert_int_equal(vnic_pkt_pool_init(&l->seg_pool, 4096, l->dev.mtu + 64 + 128, 64), 0);
	assert_int_equal(vnic_pkt_pool_init(&l->agg_pool, 64, VNIC_GRO_MAX_SIZE + 1024, 64), 0);
	assert_int_equal(vnic_deliver_init(&l->deliver, VNIC_DELIVER_GRO_LIST, 0, &l->agg_pool,
					   ln_deliver, l), 0);
	assert_int_equal(vnic_cpu_add(cpu, &l->rx_poller, names[i], ln_rx_poll), 0);
}

static void loopnet_drop_inflight(struct loopnet *l)
{
	while (l->tail != l->pend)
		vnic_pkt_free(l->ring[l->tail++ % l->cap]);
	l->head = l->pend;
}

void testbed_init(struct testbed *tb, const struct loopnet_cfg *a, const struct loopnet_cfg *b,
		  uint32_t pool_count, uint32_t pool_buf)
{
	unsigned int i;

	memset(tb, 0, sizeof(*tb));
	if (!pool_buf)
		pool_buf = VNIC_PKT_MAX_LEN + 128;
	for (i = 0; i < 2; i++) {
		assert_int_equal(vnic_cpu_init(&tb->cpu[i], i ? "cpu1" : "cpu0", 0), 0);
		tb->cpus[i] = &tb->cpu[i];
		tb->ln[i] = calloc(1, sizeof(*tb->ln[i]));
		assert_non_null(tb->ln[i]);
		loopnet_init(tb->ln[i], i ? b : a, &tb->cpu[i], i);
		assert_int_equal(vnic_pkt_pool_init(&tb->pool[i], pool_count, pool_buf, 128), 0);
	}
	tb->ln[0]->peer = tb->ln[1];
	tb->ln[1]->peer = tb->ln[0];
}

void testbed_fini(struct testbed *tb)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		loopnet_drop_inflight(tb->ln[i]);
	for (i = 0; i < 2; i++) {
		vnic_pkt_pool_fini(&tb->ln[i]->seg_pool);
		vnic_pkt_pool_fini(&tb->ln[i]->agg_pool);
		vnic_pkt_pool_fini(&tb->pool[i]);
		free(tb->ln[i]);
		vnic_cpu_fini(&tb->cpu[i]);
	}
}

void testbed_run(struct testbed *tb, bool (*done)(void *ctx), void *ctx, unsigned int timeout_s)
{
	assert_int_equal(vnic_cpus_run_until(tb->cpus, 2, done, ctx, timeout_s * 1000000000ull), 0);
}

void testbed_idle(struct testbed *tb)
{
	unsigned long rounds;

	for (rounds = 0; rounds < 100000000ul; rounds++)
		if (!vnic_cpu_run_once(&tb->cpu[0]) + !vnic_cpu_run_once(&tb->cpu[1]) == 2)
			return;
	fail_msg("never idle");
}
