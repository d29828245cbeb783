// SPDX-License-Identifier: MIT
/* The two-ended test bench of tests/driver (see drv_env.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drv_env.h"

enum { POOL_PKTS = 256, POOL_HEADROOM = 64 };

/* --- host callbacks ---------------------------------------------------------- */

static uint32_t tcp_seq(const struct vnic_pkt *pkt)
{
	const uint8_t *t = pkt->data + pkt->l2_len + pkt->l3_len;

	return (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 | (uint32_t)t[6] << 8 | t[7];
}

static void check_expect(struct env_host *h, const struct vnic_pkt *pkt)
{
	unsigned int i;

	for (i = 0; i < h->nexpect; i++) {
		struct env_expect *x = &h->expect[i];

		if (!x->seen && x->len == pkt->len && !memcmp(x->data, pkt->data, pkt->len)) {
			x->seen = true;
			return;
		}
	}
	h->rx_mismatch++;
}

/* The device picked the queue with the same hash the driver reports (both default key). */
static void check_hash(struct env_host *h, unsigned int queue, const struct vnic_pkt *pkt)
{
	struct vnic_hdrs hd;

	h->rx_hashed++;
	if (vnic_parse_frame(pkt->data, pkt->len, &hd) != VNIC_PARSE_OK ||
	    vnic_rss_hash_frame(vnic_rss_default_key, pkt->data, &hd) != pkt->hash ||
	    (h->rss_queues && pkt->hash % h->rss_queues != queue))
		h->rx_hash_wrong++;
}

static void host_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct env_host *h = ctx;
	unsigned int i;

	h->rx_batches++;
	for (i = 0; i < n; i++) {
		struct vnic_pkt *pkt = pkts[i];
		bool agg = pkt->gso_type && pkt->gso_segs > 1;

		h->rx_pkts++;
		h->rx_segs += agg ? pkt->gso_segs : 1;
		h->rx_bytes += pkt->len;
		if (queue < VNIC_MAX_QUEUES)
			h->rx_per_queue[queue]++;
		if (agg)
			h->rx_aggregates++;
		if (pkt->ip_summed == VNIC_CSUM_UNNECESSARY)
			h->rx_unnecessary++;
		if (h->nexpect)
			check_expect(h, pkt);
		if (pkt->hash)
			check_hash(h, queue, pkt);
		if (h->stream && pkt->l4_proto == VNIC_IPPROTO_TCP) {
			uint32_t hl = (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len;

			if (vnic_pktgen_verify_pkt(pkt, h->stream_seed,
						   tcp_seq(pkt) - h->stream_isn))
				h->rx_stream_bytes += pkt->len - hl;
			else
				h->rx_stream_bad++;
		}
		vnic_pkt_free(pkt);
	}
}

static void host_tx_done(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes, int status)
{
	struct env_host *h = ctx;

	(void)queue;
	(void)cookie;
	if (status == VNIC_TX_DONE_OK)
		h->tx_done_ok++;
	else
		h->tx_done_dropped++;
	h->tx_done_bytes += bytes;
}

static void host_tx_wake(void *ctx, unsigned int queue)
{
	(void)queue;
	((struct env_host *)ctx)->tx_wakes++;
}

static const struct vnic_host_ops host_ops = {
	.rx = host_rx,
	.tx_done = host_tx_done,
	.tx_wake = host_tx_wake,
};

/* --- bench --------------------------------------------------------------------- */

void env_drv_config(struct vnic_drv_config *c)
{
	vnic_drv_config_default(c);
	c->tx_entries = 64;
	c->rx_entries = 64;
}

void env_dev_config(struct vnic_dev_config *c)
{
	vnic_dev_config_default(c);
}

static void create(struct env *e, unsigned int nsides, const struct vnic_drv_config *drv,
		   const struct vnic_dev_config *dev, const struct vnic_cable_cfg *cable,
		   bool split)
{
	static const char *const names[ENV_CPUS] = {"side-a", "side-b", "devices"};
	struct vnic_dev_config vc[2];
	struct vnic_env_cfg cfg = {
		.ncpus = ENV_CPUS,
		.cpu_names = names,
		.nends = nsides,
		.cable = cable,
		.pool_pkts = POOL_PKTS,
		.pool_size = POOL_HEADROOM + VNIC_PKT_MAX_LEN,
		.pool_headroom = POOL_HEADROOM,
	};
	unsigned int i;

	memset(e, 0, sizeof(*e));
	e->nsides = nsides;
	for (i = 0; i < nsides; i++) {
		if (dev)
			vc[i] = dev[i];
		else
			env_dev_config(&vc[i]);
		cfg.dev[i] = &vc[i];
		cfg.dev_cpu[i] = split ? 2 : i;
	}
	vnic_env_create(&e->v, &cfg);
	for (i = 0; i < nsides; i++) {
		struct env_side *s = &e->s[i];
		struct vnic_drv_config dc;

		if (drv)
			dc = drv[i];
		else
			env_drv_config(&dc);
		/* a test may name another of e's cpus (their addresses are fixed) */
		if (!dc.cpu)
			dc.cpu = &e->v.cpu[i];
		dc.name = i ? "vnicB" : "vnicA";
		dc.mac[5] = (uint8_t)(i + 1);
		assert_int_equal(vnic_drv_create(&s->drv, e->v.hv[i], &dc), 0);
		vnic_netdev_attach(vnic_drv_netdev(s->drv), &host_ops, &s->host);
	}
	/* the devices' first polls: they arm their interrupts */
	assert_true(env_run(e));
}

void env_create(struct env *e, unsigned int nsides, const struct vnic_drv_config *drv,
		const struct vnic_dev_config *dev, const struct vnic_cable_cfg *cable)
{
	create(e, nsides, drv, dev, cable, false);
}

void env_create_split(struct env *e, unsigned int nsides, const struct vnic_drv_config *drv,
		      const struct vnic_dev_config *dev, const struct vnic_cable_cfg *cable)
{
	create(e, nsides, drv, dev, cable, true);
}

void env_start(struct env *e)
{
	vnic_env_start(&e->v);
}

void env_destroy(struct env *e)
{
	unsigned int i;

	vnic_env_stop(&e->v);
	for (i = 0; i < e->nsides; i++)
		vnic_drv_destroy(e->s[i].drv);
	vnic_env_destroy(&e->v);
	for (i = 0; i < e->nsides; i++)
		free(e->s[i].host.expect);
}

int env_open(struct env *e, unsigned int i)
{
	struct vnic_cpu *cpus[ENV_CPUS];
	unsigned int n = vnic_env_cpus(&e->v, cpus);

	return vnic_drv_open(e->s[i].drv, e->v.threads ? NULL : cpus, n, 5000000000ull);
}

int env_close(struct env *e, unsigned int i)
{
	struct vnic_cpu *cpus[ENV_CPUS];
	unsigned int n = vnic_env_cpus(&e->v, cpus);

	return vnic_drv_close(e->s[i].drv, e->v.threads ? NULL : cpus, n, 5000000000ull);
}

bool env_run(struct env *e)
{
	return vnic_env_run(&e->v);
}

void env_run_for(struct env *e, uint64_t ns)
{
	vnic_env_run_for(&e->v, ns);
}

uint64_t env_drv_ctr(struct env *e, unsigned int side, const char *name)
{
	uint64_t v = 0;

	if (vnic_drv_counter(e->s[side].drv, name, &v))
		fail_msg("no driver counter %s", name);
	return v;
}

uint64_t env_dev_ctr(struct env *e, unsigned int side, const char *name)
{
	return vnic_env_dev_ctr(&e->v, side, name);
}

/* --- frames ------------------------------------------------------------------------ */

struct vnic_pkt *env_pkt(struct env *e)
{
	return vnic_env_pkt(&e->v);
}

struct vnic_pkt *env_frame(struct env *e, const struct vnic_pktgen_flow *f, uint32_t off,
			   uint32_t payload)
{
	struct vnic_pkt *p = env_pkt(e);

	assert_int_equal(vnic_pktgen_build(p, f, off, payload), 0);
	return p;
}

struct vnic_pkt *env_frame_partial(struct env *e, const struct vnic_pktgen_flow *f, uint32_t off,
				   uint32_t payload, struct env_expect *ref)
{
	struct vnic_pkt *p = env_pkt(e), *chk = env_pkt(e);

	assert_int_equal(vnic_pktgen_build(p, f, off, payload), 0);
	assert_true(p->len <= sizeof(ref->data));
	ref->len = p->len;
	memcpy(ref->data, p->data, p->len);
	ref->seen = false;
	/* A one-segment "superpacket" is exactly the partial form of that frame. */
	assert_int_equal(
		vnic_pktgen_build_gso(p, f, off, payload, (uint16_t)(payload ? payload : 1)), 0);
	p->gso_type = VNIC_GSO_NONE;
	p->gso_size = 0;
	p->gso_segs = 0;
	assert_int_equal(p->ip_summed, VNIC_CSUM_PARTIAL);
	/* the oracle: summed in software it is the reference */
	assert_int_equal(vnic_pkt_copy_in(chk, p->data, p->len), 0);
	chk->ip_summed = p->ip_summed;
	chk->csum_start = p->csum_start;
	chk->csum_offset = p->csum_offset;
	assert_int_equal(vnic_csum_help(chk), 0);
	assert_memory_equal(chk->data, ref->data, ref->len);
	vnic_pkt_free(chk);
	return p;
}

void env_expect(struct env *e, unsigned int side, const struct vnic_pkt *pkt)
{
	struct env_expect x;

	assert_true(pkt->len <= sizeof(x.data));
	x.len = pkt->len;
	memcpy(x.data, pkt->data, pkt->len);
	x.seen = false;
	env_expect_ref(e, side, &x);
}

void env_expect_ref(struct env *e, unsigned int side, const struct env_expect *ref)
{
	struct env_host *h = &e->s[side].host;

	if (!h->expect) {
		h->expect = calloc(ENV_MAX_EXPECT, sizeof(*h->expect));
		assert_non_null(h->expect);
	}
	assert_true(h->nexpect < ENV_MAX_EXPECT);
	h->expect[h->nexpect++] = *ref;
}

bool env_all_seen(struct env *e, unsigned int side)
{
	struct env_host *h = &e->s[side].host;
	unsigned int i;

	for (i = 0; i < h->nexpect; i++)
		if (!h->expect[i].seen)
			return false;
	return true;
}

int env_xmit(struct env *e, unsigned int side, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	return vnic_netdev_xmit(vnic_drv_netdev(e->s[side].drv), q, pkt, more);
}
