/* SPDX-License-Identifier: MIT */
/*
 * The driver object: configuration and policies, create and destroy, the
 * open and close waits, the netdev and the counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/drv_int.h"

struct drv_trace_points vnic_drv_tp = {
	.xmit = VNIC_TRACE_POINT("xmit"),
	.tx_flush = VNIC_TRACE_POINT("tx_flush"),
	.send_direct = VNIC_TRACE_POINT("send_direct"),
	.send_indirect = VNIC_TRACE_POINT("send_indirect"),
	.csum_help = VNIC_TRACE_POINT("csum_help"),
	.hdr_build = VNIC_TRACE_POINT("hdr_build"),
	.tx_complete = VNIC_TRACE_POINT("tx_complete"),
	.napi_poll = VNIC_TRACE_POINT("napi_poll"),
	.replenish = VNIC_TRACE_POINT("replenish"),
	.gro_receive = VNIC_TRACE_POINT("gro_receive"),
	.deliver = VNIC_TRACE_POINT("deliver"),
};

/* --- policies ---------------------------------------------------------------- */

#define NAMES_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, unsigned int n, unsigned int v)
{
	return v < n && names[v] ? names[v] : "unknown";
}

static int parse_of(const char *const *names, unsigned int n, const char *s, unsigned int *v)
{
	unsigned int i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (names[i] && !strcmp(s, names[i])) {
			*v = i;
			return 0;
		}
	}
	return -EINVAL;
}

#define POLICY(fn, type, ...)                                                                      \
	static const char *const fn##_names[] = {__VA_ARGS__};                                     \
	const char *vnic_drv_##fn##_name(enum type v)                                              \
	{                                                                                          \
		return name_of(fn##_names, NAMES_LEN(fn##_names), (unsigned int)v);                \
	}                                                                                          \
	int vnic_drv_##fn##_parse(const char *s, enum type *v)                                     \
	{                                                                                          \
		unsigned int i;                                                                    \
		int err = parse_of(fn##_names, NAMES_LEN(fn##_names), s, &i);                      \
                                                                                                   \
		if (!err)                                                                          \
			*v = (enum type)i;                                                         \
		return err;                                                                        \
	}

POLICY(rx_replenish, vnic_drv_rx_replenish, [VNIC_DRV_REPLENISH_LOW] = "low",
       [VNIC_DRV_REPLENISH_ALWAYS] = "always")
POLICY(tx_hdr_build,
       vnic_drv_tx_hdr_build, [VNIC_DRV_HDR_DIRECT] = "direct", [VNIC_DRV_HDR_COPY] = "copy")
POLICY(tx_submit, vnic_drv_tx_submit, [VNIC_DRV_SUBMIT_AUTO] = "auto",
       [VNIC_DRV_SUBMIT_INDIRECT] = "indirect", [VNIC_DRV_SUBMIT_ADAPTIVE] = "adaptive")
POLICY(bql_complete, vnic_drv_bql_complete, [VNIC_DRV_BQL_PER_ROUND] = "per-round",
       [VNIC_DRV_BQL_PER_ENTRY] = "per-entry")
POLICY(tx_csum, vnic_drv_tx_csum, [VNIC_DRV_CSUM_SW_DIRECT] = "sw-direct",
       [VNIC_DRV_CSUM_HW_HEADERS] = "hw-headers", [VNIC_DRV_CSUM_HW_NOHEADERS] = "hw-noheaders")
POLICY(tx_reclaim,
       vnic_drv_tx_reclaim, [VNIC_DRV_RECLAIM_IRQ] = "irq", [VNIC_DRV_RECLAIM_LAZY] = "lazy",
       [VNIC_DRV_RECLAIM_NAPI] = "napi", [VNIC_DRV_RECLAIM_ORPHAN] = "orphan")
POLICY(tx_buf, vnic_drv_tx_buf, [VNIC_DRV_TXBUF_COPY] = "copy", [VNIC_DRV_TXBUF_MAP] = "map")
POLICY(rx_agg, vnic_drv_rx_agg, [VNIC_DRV_AGG_COPY] = "copy", [VNIC_DRV_AGG_FRAGS] = "frags")

/* --- configuration -------------------------------------------------------------- */

void vnic_drv_config_default(struct vnic_drv_config *cfg)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x01};

	memset(cfg, 0, sizeof(*cfg));
	cfg->name = "vnic0";
	memcpy(cfg->mac, mac, sizeof(mac));
	cfg->tx_queues = 1;
	cfg->rx_queues = 1;
	cfg->tx_entries = VNIC_DRV_DEFAULT_ENTRIES;
	cfg->rx_entries = VNIC_DRV_DEFAULT_ENTRIES;
	cfg->mtu = VNIC_DRV_DEFAULT_MTU;
	cfg->max_ind_descs = VNIC_SAFE_IND_DESCS;
	cfg->csum = true;
	cfg->tso = true;
	cfg->bql = true;
	cfg->reclaim_ns = VNIC_DRV_DEFAULT_RECLAIM_NS;
	cfg->rx_replenish = VNIC_DRV_REPLENISH_LOW;
	cfg->tx_hdr_build = VNIC_DRV_HDR_DIRECT;
	cfg->tx_submit = VNIC_DRV_SUBMIT_AUTO;
	cfg->bql_complete = VNIC_DRV_BQL_PER_ROUND;
	cfg->tx_csum = VNIC_DRV_CSUM_SW_DIRECT;
	cfg->rx_deliver = VNIC_DELIVER_GRO_LIST;
	cfg->tx_reclaim = VNIC_DRV_RECLAIM_IRQ;
	cfg->tx_buf = VNIC_DRV_TXBUF_COPY;
	cfg->rx_agg = VNIC_DRV_AGG_COPY;
	cfg->tx_timeout_ns = VNIC_DRV_DEFAULT_TX_TIMEOUT_NS;
}

/* Some queue pair runs on a cpu other than the driver's. */
static bool spread(const struct vnic_drv_config *c)
{
	unsigned int q;

	for (q = 0; q < VNIC_MAX_QUEUES; q++)
		if (c->queue_cpu[q] && c->queue_cpu[q] != c->cpu)
			return true;
	return false;
}

static int config_check(const struct vnic_drv_config *c)
{
	unsigned int q;

	if (!c->cpu)
		return -EINVAL;
	for (q = 0; q < VNIC_MAX_QUEUES; q++)
		if (c->queue_cpu[q] && c->queue_cpu[q]->thread)
			return -EBUSY; /* its pollers are registered at create */
	/* tx queue t reclaimed in rx queue t % nrx: perhaps on another cpu */
	if (spread(c) && c->tx_reclaim == VNIC_DRV_RECLAIM_NAPI)
		return -EINVAL;
	if (c->tx_queues < 1 || c->tx_queues > VNIC_MAX_QUEUES || c->rx_queues < 1 ||
	    c->rx_queues > VNIC_MAX_QUEUES)
		return -EINVAL;
	/* A packet with all its header descriptors must fit twice (stop at one left). */
	if (c->tx_entries < 2 * VNIC_MAX_TX_ELEMS || c->tx_entries > VNIC_MAX_SUBCRQ_ENTRIES ||
	    c->rx_entries < 1 || c->rx_entries > VNIC_MAX_SUBCRQ_ENTRIES)
		return -EINVAL;
	if (c->mtu < VNIC_DRV_MIN_MTU || c->mtu > VNIC_DRV_MAX_MTU)
		return -EINVAL;
	if (c->max_ind_descs < 1 || c->max_ind_descs > VNIC_MAX_IND_DESCS)
		return -EINVAL;
	if (c->deliver_batch > VNIC_DELIVER_MAX_BATCH)
		return -EINVAL;
	if (c->max_queues > VNIC_MAX_QUEUES || c->max_entries > VNIC_MAX_SUBCRQ_ENTRIES)
		return -EINVAL;
	if ((unsigned int)c->rx_replenish > VNIC_DRV_REPLENISH_ALWAYS ||
	    (unsigned int)c->tx_hdr_build > VNIC_DRV_HDR_COPY ||
	    (unsigned int)c->tx_submit > VNIC_DRV_SUBMIT_ADAPTIVE ||
	    (unsigned int)c->bql_complete > VNIC_DRV_BQL_PER_ENTRY ||
	    (unsigned int)c->tx_csum > VNIC_DRV_CSUM_HW_NOHEADERS ||
	    (unsigned int)c->tx_reclaim > VNIC_DRV_RECLAIM_ORPHAN ||
	    (unsigned int)c->tx_buf > VNIC_DRV_TXBUF_MAP ||
	    (unsigned int)c->rx_agg > VNIC_DRV_AGG_FRAGS ||
	    (unsigned int)c->rx_deliver > VNIC_DELIVER_GRO_LIST)
		return -EINVAL;
	return 0;
}

/* --- create / destroy --------------------------------------------------------------- */

struct qname {
	char s[24];
};

/* Poller names must outlive the cpu's table: kept beside the queues. */
static struct qname *names_alloc(unsigned int n)
{
	return calloc(n, sizeof(struct qname));
}

static int pollers_add(struct vnic_drv *drv, struct qname *names)
{
	/*
	 * The same irq ops in every tx-reclaim mode, which they follow (tx.c
	 * txc_owns, rx.c txmask): the mode may change while the driver runs.
	 */
	const struct vnic_irq_ops *tx_irq = &vnic_drv_txc_irq_ops;
	const struct vnic_irq_ops *rx_irq = &vnic_drv_rxc_irq_ops;
	unsigned int i;
	int err;

	err = vnic_napi_init(&drv->ctl_napi, drv->cpu, "drv-ctl", vnic_drv_ctl_poll,
			     &vnic_drv_ctl_irq_ops, drv, 0);
	if (err)
		return err;
	for (i = 0; i < drv->qtx; i++) {
		snprintf(names[i].s, sizeof(names[i].s), "drv-txc%u", i);
		err = vnic_napi_init(&drv->txq[i].napi, drv->qcpu[i], names[i].s, vnic_drv_tx_poll,
				     tx_irq, &drv->txq[i], 0);
		if (err)
			return err;
	}
	for (i = 0; i < drv->qrx; i++) {
		snprintf(names[drv->qtx + i].s, sizeof(names[0].s), "drv-rx%u", i);
		err = vnic_napi_init(&drv->rxq[i].napi, drv->qcpu[i], names[drv->qtx + i].s,
				     vnic_drv_rx_poll, rx_irq, &drv->rxq[i], 0);
		if (err)
			return err;
	}
	return 0;
}

static void netdev_init(struct vnic_drv *drv)
{
	struct vnic_netdev *nd = &drv->netdev;
	unsigned int i;

	nd->ops = &vnic_drv_netdev_ops;
	nd->priv = drv;
	snprintf(drv->name, sizeof(drv->name), "%s", drv->cfg.name ? drv->cfg.name : "vnic0");
	nd->name = drv->name;
	nd->num_tx_queues = drv->cfg.tx_queues;
	nd->num_rx_queues = drv->cfg.rx_queues;
	nd->mtu = drv->cfg.mtu;
	memcpy(nd->mac, drv->cfg.mac, sizeof(nd->mac));
	for (i = 0; i < VNIC_MAX_QUEUES; i++) {
		nd->tx_cpu[i] = drv->qcpu[i];
		nd->rx_cpu[i] = drv->qcpu[i];
	}
	nd->rss_key = vnic_rss_default_key;
}

static void *zalloc_aligned(size_t n)
{
	size_t sz = (n + VNIC_CACHELINE - 1) & ~(size_t)(VNIC_CACHELINE - 1);
	void *p = aligned_alloc(VNIC_CACHELINE, sz);

	if (p)
		memset(p, 0, sz);
	return p;
}

struct drv_alloc {
	struct vnic_drv drv;
	struct qname *names;
};

int vnic_drv_create(struct vnic_drv **out, struct vnic_hv *hv, const struct vnic_drv_config *cfg)
{
	struct drv_alloc *a;
	struct vnic_drv *drv;
	unsigned int i;
	int err;

	if (!out || !hv || !cfg)
		return -EINVAL;
	err = config_check(cfg);
	if (err)
		return err;
	if (cfg->cpu->thread)
		return -EBUSY;

	a = zalloc_aligned(sizeof(*a));
	if (!a)
		return -ENOMEM;
	drv = &a->drv;
	drv->cfg = *cfg;
	if (!drv->cfg.reclaim_ns)
		drv->cfg.reclaim_ns = VNIC_DRV_DEFAULT_RECLAIM_NS;
	if (!drv->cfg.tx_timeout_ns)
		drv->cfg.tx_timeout_ns = VNIC_DRV_DEFAULT_TX_TIMEOUT_NS;
	drv->hv = hv;
	drv->cpu = cfg->cpu;
	for (i = 0; i < VNIC_MAX_QUEUES; i++)
		drv->qcpu[i] = cfg->queue_cpu[i] ? cfg->queue_cpu[i] : cfg->cpu;
	atomic_init(&drv->suspect_req, false);
	/* a change-param may ask for up to max_queues: their queues exist from now */
	drv->qtx = cfg->max_queues > cfg->tx_queues ? cfg->max_queues : cfg->tx_queues;
	drv->qrx = cfg->max_queues > cfg->rx_queues ? cfg->max_queues : cfg->rx_queues;
	atomic_init(&drv->req, REQ_NONE);
	atomic_init(&drv->done_seq, 0);
	atomic_init(&drv->done_rc, 0);
	atomic_init(&drv->open_flag, 0);
	drv->txq = zalloc_aligned(drv->qtx * sizeof(*drv->txq));
	drv->rxq = zalloc_aligned(drv->qrx * sizeof(*drv->rxq));
	a->names = names_alloc(drv->qtx + drv->qrx);
	err = -ENOMEM;
	if (!drv->txq || !drv->rxq || !a->names)
		goto err_free;
	for (i = 0; i < drv->qtx; i++) {
		struct drv_txq *txq = &drv->txq[i];

		txq->drv = drv;
		txq->idx = i;
		txq->reclaim = cfg->tx_reclaim;
		atomic_init(&txq->napi_rxq, 0);
		vnic_txq_init(&txq->txq, cfg->bql, vnic_drv_txq_wake_cb, txq);
		/*
		 * xmit and reclaim both run there. A queue on another cpu than the
		 * control poller's is taken by it too, while its cpu is parked
		 * (core/park.c): a serialisation the owner check cannot see, so none.
		 */
		txq->txq.owner = drv->qcpu[i] == drv->cpu ? drv->cpu : NULL;
		/* Nothing is sent before the link is up: a host gets BUSY, then tx_wake. */
		vnic_txq_stop(&txq->txq);
	}
	for (i = 0; i < drv->qrx; i++) {
		drv->rxq[i].drv = drv;
		drv->rxq[i].idx = i;
		atomic_init(&drv->rxq[i].txmask, 0);
	}
	netdev_init(drv);

	err = vnic_drv_reset_init(drv);
	if (err)
		goto err_free;
	err = vnic_drv_live_init(drv);
	if (err)
		goto err_reset;
	err = vnic_drv_res_create(drv);
	if (err)
		goto err_live;
	/*
	 * Registered last: a poller cannot be taken back from a cpu, so on
	 * failure here the cpu keeps pointers to freed memory and must not be
	 * run (as with any create that fails after vnic_cpu_add).
	 */
	err = pollers_add(drv, a->names);
	if (!err)
		err = vnic_park_init(&drv->park, drv->cpu, drv->qcpu,
				     drv->qtx > drv->qrx ? drv->qtx : drv->qrx, "drv-park");
	if (err)
		goto err_res;
	vnic_hv_crq_set_irq(hv, VNIC_HV_CLIENT, vnic_drv_ctl_irq, drv);
	vnic_hv_crq_irq_enable(hv, VNIC_HV_CLIENT, true);
	*out = drv;
	return 0;

err_res:
	vnic_drv_res_destroy(drv);
err_live:
	vnic_drv_live_fini(drv);
err_reset:
	vnic_drv_reset_fini(drv);
err_free:
	free(a->names);
	free(drv->txq);
	free(drv->rxq);
	free(a);
	return err;
}

void vnic_drv_destroy(struct vnic_drv *drv)
{
	struct drv_alloc *a;
	unsigned int i;

	if (!drv)
		return;
	a = vnic_container_of(drv, struct drv_alloc, drv);
	vnic_hv_crq_irq_enable(drv->hv, VNIC_HV_CLIENT, false);
	vnic_hv_crq_set_irq(drv->hv, VNIC_HV_CLIENT, NULL, NULL);
	if (drv->state != DRV_CLOSED) {
		struct vnic_crq m;

		/* The device holds our rings and maps: it must forget them. */
		memset(&m, 0, sizeof(m));
		m.first = VNIC_CRQ_XPORT_EVENT;
		m.xport.reason = VNIC_XPORT_PARTNER_CLOSED;
		vnic_hv_send_crq(drv->hv, VNIC_HV_CLIENT, &m);
	}
	/* No host callback from here on: it may be gone already. */
	drv->netdev.host = NULL;
	for (i = 0; i < drv->qtx; i++)
		if (drv->txq[i].slots)
			vnic_drv_tx_forget(&drv->txq[i]);
	vnic_drv_res_destroy(drv);
	vnic_drv_pools_free(drv);
	for (i = 0; i < drv->qtx; i++)
		vnic_drv_hostmem_unmap(drv, &drv->txq[i].host);
	vnic_drv_live_fini(drv);
	vnic_drv_reset_fini(drv);
	free(a->names);
	free(drv->txq);
	free(drv->rxq);
	free(a);
}

/* --- open / close -------------------------------------------------------------------- */

struct wait_ctx {
	struct vnic_drv *drv;
	uint64_t seq;
};

static bool answered(void *ctx)
{
	struct wait_ctx *w = ctx;

	return atomic_load_explicit(&w->drv->done_seq, memory_order_acquire) == w->seq;
}

static void post(struct vnic_drv *drv, uint64_t seq, enum drv_req kind)
{
	/* Release: pairs with the poller's acquire exchange of the word. */
	atomic_store_explicit(&drv->req, seq << 2 | (uint64_t)kind, memory_order_release);
	vnic_poller_schedule(&drv->ctl_napi.poller);
}

static int wait_answer(struct vnic_drv *drv, struct wait_ctx *w, struct vnic_cpu **cpus,
		       unsigned int ncpus, uint64_t timeout_ns)
{
	struct vnic_cpu *self[1] = {drv->cpu};
	uint64_t end;

	if (!drv->cpu->thread) {
		if (!cpus || !ncpus) {
			cpus = self;
			ncpus = 1;
		}
		return vnic_cpus_run_until(cpus, ncpus, answered, w, timeout_ns);
	}
	/* Threads run the pollers: the setup path may sleep between looks. */
	end = vnic_now_ns() + timeout_ns;
	while (!answered(w)) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000};

		if ((int64_t)(vnic_now_ns() - end) >= 0)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
	return 0;
}

enum { ABORT_WAIT_NS = 1000000000 };

static int request(struct vnic_drv *drv, enum drv_req kind, struct vnic_cpu **cpus,
		   unsigned int ncpus, uint64_t timeout_ns)
{
	struct wait_ctx w = {.drv = drv};

	if (!timeout_ns)
		timeout_ns = VNIC_DRV_DEFAULT_OPEN_TIMEOUT_NS;
	w.seq = ++drv->req_seq;
	post(drv, w.seq, kind);
	if (wait_answer(drv, &w, cpus, ncpus, timeout_ns)) {
		/* Whatever is in progress is abandoned, and the driver says when it has. */
		post(drv, w.seq, REQ_ABORT);
		if (wait_answer(drv, &w, cpus, ncpus, ABORT_WAIT_NS))
			return -ETIMEDOUT;
	}
	return atomic_load_explicit(&drv->done_rc, memory_order_relaxed);
}

int vnic_drv_open(struct vnic_drv *drv, struct vnic_cpu **cpus, unsigned int ncpus,
		  uint64_t timeout_ns)
{
	if (!drv)
		return -EINVAL;
	return request(drv, REQ_OPEN, cpus, ncpus, timeout_ns);
}

int vnic_drv_close(struct vnic_drv *drv, struct vnic_cpu **cpus, unsigned int ncpus,
		   uint64_t timeout_ns)
{
	if (!drv)
		return -EINVAL;
	return request(drv, REQ_CLOSE, cpus, ncpus, timeout_ns);
}

struct vnic_netdev *vnic_drv_netdev(struct vnic_drv *drv)
{
	return &drv->netdev;
}

bool vnic_drv_is_open(const struct vnic_drv *drv)
{
	return atomic_load_explicit(&((struct vnic_drv *)drv)->open_flag, memory_order_acquire);
}

int vnic_drv_ring_handles(const struct vnic_drv *drv, unsigned int q, uint32_t *txcomp,
			  uint32_t *rxcomp)
{
	if (q >= drv->qtx && q >= drv->qrx)
		return -ENOENT;
	if (txcomp)
		*txcomp = q < drv->qtx && drv->txq[q].comp ? drv->txq[q].comp->handle : 0;
	if (rxcomp)
		*rxcomp = q < drv->qrx && drv->rxq[q].comp ? drv->rxq[q].comp->handle : 0;
	return 0;
}

/* --- pools and counters ---------------------------------------------------------------- */

/* Any thread: what the counters read is stored with vnic_ctr_* (drv_int.h). */
static bool pool_full(const struct drv_pool *p)
{
	return vnic_ctr_read32(&p->nfree) == vnic_ctr_read32(&p->count);
}

static bool pkt_pool_full(const struct vnic_pkt_pool *p)
{
	return vnic_ctr_read32(&p->nfree) == vnic_ctr_read32(&p->count);
}

bool vnic_drv_pools_full(const struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->qtx; i++) {
		const struct drv_txq *txq = &drv->txq[i];

		if (!pool_full(&txq->pool) || !pool_full(&txq->tso) ||
		    vnic_ctr_read32(&txq->used) || vnic_ctr_read32(&txq->ind_n))
			return false;
	}
	for (i = 0; i < drv->qrx; i++) {
		const struct drv_rxq *rxq = &drv->rxq[i];

		if (!pool_full(&rxq->pool) || vnic_ctr_read32(&rxq->nposted))
			return false;
		if (vnic_ctr_load(&rxq->pkt_pools) &&
		    (!pkt_pool_full(&rxq->pkts) || !pkt_pool_full(&rxq->agg)))
			return false;
	}
	return true;
}

struct ctr_desc {
	const char *name;
	size_t off;
};

#define TXC(f)                                                                                     \
	{                                                                                          \
#f, offsetof(struct drv_txq_stats, f)                                              \
	}
#define TXD(f, i)                                                                                  \
	{                                                                                          \
		"drop_" #f, offsetof(struct drv_txq_stats, drops) + (i) * sizeof(uint64_t)         \
	}
static const struct ctr_desc tx_ctrs[] = {
	TXC(direct_packets),
	TXC(batched_packets),
	TXC(bytes),
	TXC(dropped_packets),
	TXC(csum_sw),
	TXC(csum_offload),
	TXC(lso_packets),
	TXC(hdr_descs),
	TXC(indirect_flushes),
	TXC(direct_sends),
	TXC(stops),
	TXC(wakes),
	TXC(busy),
	TXC(completions),
	TXC(completion_rounds),
	TXC(bql_completed_calls),
	TXC(comp_errors),
	TXC(bad_correlator),
	TXC(bad_num_comps),
	TXC(flush_errors),
	TXC(flush_rc_busy),
	TXC(flush_rc_parameter),
	TXC(flush_rc_closed),
	TXC(flush_rc_dropped),
	TXC(flush_rc_other),
	TXC(comp_stale),
	TXC(timeouts),
	TXC(xmit_reclaims),
	TXC(timer_reclaims),
	TXC(orphaned),
	TXC(mapped_packets),
	TXC(submit_direct_bursts),
	TXC(submit_indirect_bursts),
	TXC(submit_probes),
	TXC(submit_switches),
	TXC(submit_direct_ns),
	TXC(submit_indirect_ns),
	TXD(too_long, TXD_TOO_LONG),
	TXD(bad_gso, TXD_BAD_GSO),
	TXD(bad_headers, TXD_BAD_HEADERS),
	TXD(no_buffer, TXD_NO_BUFFER),
	TXD(down, TXD_DOWN),
	TXD(flush, TXD_FLUSH),
	TXD(reset, TXD_RESET),
};

#define RXC(f)                                                                                     \
	{                                                                                          \
#f, offsetof(struct drv_rxq_stats, f)                                              \
	}
static const struct ctr_desc rx_ctrs[] = {
	RXC(packets),
	RXC(bytes),
	RXC(polls),
	RXC(replenish_calls),
	RXC(replenish_buffers),
	RXC(replenish_errors),
	RXC(csum_unnecessary),
	RXC(parse_errors),
	RXC(bad_correlator),
	RXC(drop_rc),
	RXC(drop_bad_len),
	RXC(drop_no_pkt),
	RXC(reset_drained),
	RXC(replenish_retries),
	RXC(lro_packets),
	RXC(lro_bufs),
	RXC(drop_lro_too_big),
	RXC(drop_lro_bad_meta),
};

#define DRC(f)                                                                                     \
	{                                                                                          \
#f, offsetof(struct drv_stats, f)                                                  \
	}
static const struct ctr_desc drv_ctrs[] = {
	DRC(opens),
	DRC(closes),
	DRC(resets),
	DRC(reset_done),
	DRC(reset_failures),
	DRC(reset_aborted),
	DRC(reset_coalesced),
	DRC(reset_last_ns),
	DRC(reset_max_ns),
	DRC(reset_total_ns),
	DRC(probes),
	DRC(probe_resumes),
	DRC(init_retries),
	DRC(cmd_retries),
	DRC(xport_events),
	DRC(error_indications),
	DRC(crq_ignored),
	DRC(crq_send_errors),
	DRC(ind_fallbacks),
	DRC(drop_bad_queue),
	DRC(bad_tx_comp_ring),
	DRC(policy_changes),
	DRC(tx_pools_dropped),
};

/* Visits every counter; the callback sees the name and the value. */
struct ctr_visit {
	void (*fn)(struct ctr_visit *v, const char *name, uint64_t value);
	unsigned int n;
};

static void put(struct ctr_visit *v, const char *name, uint64_t value)
{
	v->fn(v, name, value);
	v->n++;
}

static void putq(struct ctr_visit *v, const char *dir, unsigned int q, const char *name,
		 uint64_t value)
{
	char buf[VNIC_COUNTER_NAME_MAX];

	snprintf(buf, sizeof(buf), "%s%u_%s", dir, q, name);
	put(v, buf, value);
}

static uint64_t rd(const void *base, size_t off)
{
	return vnic_ctr_read((const uint64_t *)((const char *)base + off));
}

static void visit(const struct vnic_drv *drv, struct ctr_visit *v)
{
	unsigned int ntx = vnic_ctr_load(&drv->ntx_hw);
	unsigned int nrx = vnic_ctr_load(&drv->nrx_hw);
	unsigned int i, q;
	bool pkt_pools;
	uint64_t ol;

	/* Any thread: everything read here is stored with vnic_ctr_* (drv_int.h). */
	put(v, "state", (uint64_t)vnic_ctr_load(&drv->state));
	put(v, "open", vnic_drv_is_open(drv));
	put(v, "carrier", vnic_ctr_read(&drv->carrier));
	for (i = 0; i < NAMES_LEN(drv_ctrs); i++)
		put(v, drv_ctrs[i].name, rd(&drv->st, drv_ctrs[i].off));
	put(v, "parks", vnic_ctr_read(&drv->park.parks));
	put(v, "park_retries", vnic_ctr_read(&drv->park.retries));
	for (i = 0; i < RST_MAX; i++) {
		char name[VNIC_COUNTER_NAME_MAX];

		snprintf(name, sizeof(name), "resets_%s", vnic_drv_reset_name(i));
		put(v, name, vnic_ctr_read(&drv->st.resets_by[i]));
	}
	put(v, "reset_queued", vnic_ctr_load(&drv->rst.nq));
	put(v, "reset_active", vnic_ctr_load(&drv->rst.active));
	put(v, "neg_tx_queues", vnic_ctr_load(&drv->ntx));
	put(v, "neg_rx_queues", vnic_ctr_load(&drv->nrx));
	put(v, "neg_tx_entries", vnic_ctr_read32(&drv->tx_entries));
	put(v, "neg_rx_entries", vnic_ctr_read32(&drv->rx_entries));
	put(v, "neg_mtu", vnic_ctr_read32(&drv->mtu));
	put(v, "neg_ind_descs", vnic_ctr_read32(&drv->ind_descs));
	put(v, "cur_ind_descs", vnic_ctr_read32(&drv->cur_ind));
	put(v, "rx_buf_size", vnic_ctr_read32(&drv->rx_buf_size));
	put(v, "desc_req", vnic_ctr_load(&drv->desc_req));
	ol = (uint64_t)vnic_ctr_load(&drv->ol.tcp4) | (uint64_t)vnic_ctr_load(&drv->ol.udp4) << 1 |
	     (uint64_t)vnic_ctr_load(&drv->ol.tcp6) << 2 |
	     (uint64_t)vnic_ctr_load(&drv->ol.udp6) << 3 |
	     (uint64_t)vnic_ctr_load(&drv->ol.lso4) << 4 |
	     (uint64_t)vnic_ctr_load(&drv->ol.lso6) << 5 |
	     (uint64_t)vnic_ctr_load(&drv->ol.large_rx4) << 6 |
	     (uint64_t)vnic_ctr_load(&drv->ol.large_rx6) << 7;
	put(v, "offloads", ol);
	put(v, "pools_full", vnic_drv_pools_full(drv));

	/* queues ever negotiated; before the first open, those asked for */
	if (!ntx)
		ntx = drv->qtx;
	if (!nrx)
		nrx = drv->qrx;
	for (q = 0; q < ntx && q < drv->qtx; q++) {
		const struct drv_txq *txq = &drv->txq[q];

		for (i = 0; i < NAMES_LEN(tx_ctrs); i++)
			putq(v, "tx", q, tx_ctrs[i].name, rd(&txq->st, tx_ctrs[i].off));
		putq(v, "tx", q, "interrupts", vnic_ctr_read(&txq->napi.stats.irqs));
		putq(v, "tx", q, "bql_limit", vnic_ctr_read32(&txq->txq.dql.limit));
		putq(v, "tx", q, "bql_inflight", vnic_dql_inflight(&txq->txq.dql));
		putq(v, "tx", q, "used", vnic_ctr_read32(&txq->used));
		putq(v, "tx", q, "pool_free", vnic_ctr_read32(&txq->pool.nfree));
		putq(v, "tx", q, "tso_free", vnic_ctr_read32(&txq->tso.nfree));
	}
	for (q = 0; q < nrx && q < drv->qrx; q++) {
		const struct drv_rxq *rxq = &drv->rxq[q];

		for (i = 0; i < NAMES_LEN(rx_ctrs); i++)
			putq(v, "rx", q, rx_ctrs[i].name, rd(&rxq->st, rx_ctrs[i].off));
		putq(v, "rx", q, "interrupts", vnic_ctr_read(&rxq->napi.stats.irqs));
		putq(v, "rx", q, "gro_merged", vnic_ctr_read(&rxq->deliver.gro.stats.merged));
		putq(v, "rx", q, "gro_held", vnic_ctr_read(&rxq->deliver.gro.stats.held));
		putq(v, "rx", q, "gro_chained", vnic_ctr_read(&rxq->deliver.gro.stats.chained));
		putq(v, "rx", q, "list_batches", vnic_ctr_read(&rxq->deliver.stats.batches));
		putq(v, "rx", q, "delivered", vnic_ctr_read(&rxq->deliver.stats.packets));
		putq(v, "rx", q, "posted", vnic_ctr_read32(&rxq->nposted));
		putq(v, "rx", q, "pool_free", vnic_ctr_read32(&rxq->pool.nfree));
		pkt_pools = vnic_ctr_load(&rxq->pkt_pools);
		putq(v, "rx", q, "pkt_free", pkt_pools ? vnic_ctr_read32(&rxq->pkts.nfree) : 0);
		putq(v, "rx", q, "agg_free", pkt_pools ? vnic_ctr_read32(&rxq->agg.nfree) : 0);
	}
}

struct fill_visit {
	struct ctr_visit v;
	struct vnic_counter *out;
	unsigned int max;
};

static void fill_fn(struct ctr_visit *v, const char *name, uint64_t value)
{
	struct fill_visit *f = vnic_container_of(v, struct fill_visit, v);

	if (v->n >= f->max)
		return;
	snprintf(f->out[v->n].name, sizeof(f->out[v->n].name), "%s", name);
	f->out[v->n].value = value;
}

unsigned int vnic_drv_counters(const struct vnic_drv *drv, struct vnic_counter *out,
			       unsigned int max)
{
	struct fill_visit f = {.v = {.fn = fill_fn}, .out = out, .max = out ? max : 0};

	visit(drv, &f.v);
	return f.v.n;
}

struct find_visit {
	struct ctr_visit v;
	const char *name;
	uint64_t value;
	bool found;
};

static void find_fn(struct ctr_visit *v, const char *name, uint64_t value)
{
	struct find_visit *f = vnic_container_of(v, struct find_visit, v);

	if (!f->found && !strcmp(name, f->name)) {
		f->found = true;
		f->value = value;
	}
}

int vnic_drv_counter(const struct vnic_drv *drv, const char *name, uint64_t *value)
{
	struct find_visit f = {.v = {.fn = find_fn}, .name = name};

	if (!name)
		return -ENOENT;
	visit(drv, &f.v);
	if (!f.found)
		return -ENOENT;
	if (value)
		*value = f.value;
	return 0;
}
