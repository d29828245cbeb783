/* SPDX-License-Identifier: MIT */
/*
 * The device object: configuration, creation, teardown and counters. The
 * control path is in ctl.c, the engines in tx.c and rx.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/dev_int.h"

struct dev_trace_points vnic_dev_tp = {
	.tx = VNIC_TRACE_POINT("dev_tx"),
	.rx = VNIC_TRACE_POINT("dev_rx"),
};

void vnic_dev_config_default(struct vnic_dev_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_tx_queues = VNIC_DEV_DEFAULT_QUEUES;
	cfg->max_rx_queues = VNIC_DEV_DEFAULT_QUEUES;
	cfg->min_tx_entries = VNIC_DEV_DEFAULT_MIN_ENTRIES;
	cfg->max_tx_entries = VNIC_DEV_DEFAULT_MAX_ENTRIES;
	cfg->min_rx_add_entries = VNIC_DEV_DEFAULT_MIN_ENTRIES;
	cfg->max_rx_add_entries = VNIC_DEV_DEFAULT_MAX_ENTRIES;
	cfg->min_mtu = VNIC_DEV_MIN_MTU;
	cfg->max_mtu = VNIC_DEV_DEFAULT_MAX_MTU;
	cfg->max_ind_descs = 0;
	cfg->csum_ipv4 = true;
	cfg->csum_ipv6 = true;
	cfg->lso_ipv4 = true;
	cfg->lso_ipv6 = true;
	cfg->min_lso_mss = VNIC_DEV_DEFAULT_LSO_MSS;
	cfg->hdr_mask = VNIC_DEV_HDRS_CAUTIOUS;
	cfg->drop_missing_hdrs = false;
	cfg->rx_buf_size = 0;
	vnic_fault_cfg_default(&cfg->fault);
}

const char *vnic_dev_hdr_mask_name(enum vnic_dev_hdr_mask m)
{
	switch (m) {
	case VNIC_DEV_HDRS_CAUTIOUS:
		return "cautious";
	case VNIC_DEV_HDRS_EXACT:
		return "exact";
	}
	return "unknown";
}

/* Checks cfg against the protocol and the wire, and fills what depends on them. */
static int config_check(struct vnic_dev_config *cfg, const struct vnic_hv *hv,
			const struct vnic_wire *wire)
{
	uint32_t hv_ind = vnic_hv_max_ind_descs(hv);
	uint32_t wire_mtu = wire->mtu;

	if (cfg->max_tx_queues < 1 || cfg->max_tx_queues > VNIC_MAX_QUEUES ||
	    cfg->max_rx_queues < 1 || cfg->max_rx_queues > VNIC_MAX_QUEUES)
		return -EINVAL;
	if (cfg->min_tx_entries < 1 || cfg->min_tx_entries > cfg->max_tx_entries ||
	    cfg->max_tx_entries > VNIC_MAX_SUBCRQ_ENTRIES)
		return -EINVAL;
	if (cfg->min_rx_add_entries < 1 || cfg->min_rx_add_entries > cfg->max_rx_add_entries ||
	    cfg->max_rx_add_entries > VNIC_MAX_SUBCRQ_ENTRIES)
		return -EINVAL;
	/* A wire slot holds mtu + Ethernet + one tag; never negotiate past it. */
	if (wire->frame_size < VNIC_ETH_HLEN + VNIC_VLAN_HLEN)
		return -EINVAL;
	if (wire_mtu > wire->frame_size - VNIC_ETH_HLEN - VNIC_VLAN_HLEN)
		wire_mtu = wire->frame_size - VNIC_ETH_HLEN - VNIC_VLAN_HLEN;
	if (cfg->max_mtu > wire_mtu)
		cfg->max_mtu = wire_mtu;
	if (cfg->min_mtu < VNIC_DEV_MIN_MTU || cfg->min_mtu > cfg->max_mtu ||
	    cfg->max_mtu > VNIC_PKT_MAX_LEN)
		return -EINVAL;
	if (!cfg->max_ind_descs || cfg->max_ind_descs > hv_ind)
		cfg->max_ind_descs = hv_ind;
	if (cfg->min_lso_mss < VNIC_DEV_MIN_LSO_MSS || cfg->min_lso_mss > 0xffff)
		return -EINVAL;
	if (cfg->hdr_mask != VNIC_DEV_HDRS_CAUTIOUS && cfg->hdr_mask != VNIC_DEV_HDRS_EXACT)
		return -EINVAL;
	if (cfg->rx_buf_size > VNIC_RX_ADD_MAX_LEN)
		return -EINVAL;
	if (cfg->fault.err_ind_fatal < 0 || cfg->fault.err_ind_fatal > 1)
		return -EINVAL;
	if (cfg->coal.rx_usecs > VNIC_DEV_COAL_MAX_USECS ||
	    cfg->coal.tx_usecs > VNIC_DEV_COAL_MAX_USECS ||
	    cfg->coal.rx_frames > VNIC_DEV_COAL_MAX_FRAMES ||
	    cfg->coal.tx_frames > VNIC_DEV_COAL_MAX_FRAMES)
		return -EINVAL;
	return 0;
}

/*
 * The number of wires: 1, or one per queue pair (queue_wire, each with the
 * sizes of the create's wire, none twice); 0 for anything else.
 */
static unsigned int wires_check(const struct vnic_dev_config *cfg, const struct vnic_wire *wire)
{
	unsigned int q, i, n = 1;

	if (cfg->queue_wire[0] && cfg->queue_wire[0] != wire)
		return 0;
	while (n < VNIC_MAX_QUEUES && cfg->queue_wire[n])
		n++;
	for (q = n; q < VNIC_MAX_QUEUES; q++)
		if (cfg->queue_wire[q])
			return 0;
	if (n > 1 && (n != cfg->max_tx_queues || n != cfg->max_rx_queues))
		return 0;
	for (q = 1; q < n; q++) {
		const struct vnic_wire *w = cfg->queue_wire[q];

		if (!w->ops || w == wire || w->mtu != wire->mtu ||
		    w->frame_size != wire->frame_size || w->gso_max_size != wire->gso_max_size ||
		    w->rx_gso_max_size != wire->rx_gso_max_size || w->tx_frags != wire->tx_frags)
			return 0;
		for (i = 1; i < q; i++)
			if (cfg->queue_wire[i] == w)
				return 0;
	}
	return n;
}

/* Queue pair q's cpu into dev->qcpu; -EINVAL (spread over one wire), -EBUSY (started). */
static int queue_cpus(struct vnic_dev *dev)
{
	bool spread = false;
	unsigned int q;

	for (q = 0; q < VNIC_MAX_QUEUES; q++) {
		struct vnic_cpu *c = dev->cfg.queue_cpu[q];

		dev->qcpu[q] = c ? c : dev->cpu;
		if (c && c->thread)
			return -EBUSY; /* its pollers are registered at create */
		spread |= dev->qcpu[q] != dev->cpu;
	}
	/* one wire's engine feeds every rx queue by RSS: they must share its cpu */
	if (spread && dev->nwires == 1)
		return -EINVAL;
	return 0;
}

/*
 * The control and fault pollers touch every queue: with the queues' cpus
 * parked (core/park.c). One that is late: the poll is tried on the next turn.
 */
static int ctl_poll(struct vnic_napi *napi, int budget)
{
	struct vnic_dev *dev = vnic_container_of(napi, struct vnic_dev, ctl_napi);
	int work;

	if (vnic_park(&dev->park))
		return budget;
	work = vnic_dev_ctl_poll(napi, budget);
	vnic_unpark(&dev->park);
	return work;
}

static int fault_poll(struct vnic_poller *p, int budget)
{
	struct vnic_dev *dev = vnic_container_of(p, struct vnic_dev, fault.poller);
	int work;

	if (vnic_park(&dev->park)) {
		vnic_poller_schedule(p);
		return 0;
	}
	work = vnic_dev_fault_poll(p, budget);
	vnic_unpark(&dev->park);
	return work;
}

static int add_napis(struct vnic_dev *dev, struct vnic_wire *wire)
{
	unsigned int i;
	int err;

	err = vnic_napi_init(&dev->ctl_napi, dev->cpu, "dev-ctl", ctl_poll, &vnic_dev_ctl_irq_ops,
			     dev, 0);
	if (err)
		return err;
	for (i = 0; i < dev->nwires; i++) {
		struct dev_rxe *rxe = &dev->rxe[i];

		rxe->dev = dev;
		rxe->idx = i;
		rxe->wire = i ? dev->cfg.queue_wire[i] : wire;
		err = vnic_napi_init(&rxe->napi, dev->qcpu[i], "dev-rx", vnic_dev_rx_poll,
				     &vnic_dev_rx_irq_ops, rxe, 0);
		if (err)
			return err;
	}
	for (i = 0; i < dev->cfg.max_tx_queues; i++) {
		struct dev_txq *txq = &dev->txq[i];

		err = vnic_napi_init(&txq->napi, dev->qcpu[i], "dev-tx", vnic_dev_tx_poll,
				     &vnic_dev_tx_irq_ops, txq, 0);
		if (err)
			return err;
		txq->dev = dev;
		txq->idx = i;
		txq->wire = dev->rxe[i % dev->nwires].wire;
	}
	/*
	 * Always: faults may be set while the device runs (vnic_dev_set_faults),
	 * and a cpu takes no poller once started. Never scheduled while off.
	 */
	err = vnic_cpu_add(dev->cpu, &dev->fault.poller, "dev-fault", fault_poll);
	if (err)
		return err;
	dev->fault.registered = true;
	return vnic_park_init(&dev->park, dev->cpu, dev->qcpu, dev->cfg.max_tx_queues, "dev-park");
}

int vnic_dev_create(struct vnic_dev **out, struct vnic_hv *hv, struct vnic_wire *wire,
		    struct vnic_cpu *cpu, const struct vnic_dev_config *cfg)
{
	struct vnic_dev *dev;
	unsigned int i;
	size_t sz;
	int err;

	if (!out || !hv || !wire || !wire->ops || !cpu)
		return -EINVAL;
	*out = NULL;
	if (cpu->thread)
		return -EBUSY;
	/* ctl + rx + one per tx queue + faults + coalescing: fail before touching the cpu */
	if (cpu->npollers + 4 + (cfg ? cfg->max_tx_queues : VNIC_DEV_DEFAULT_QUEUES) >
	    VNIC_CPU_MAX_POLLERS)
		return -ENOSPC;
	/* (one rx engine per wire, with queue_wire: on the queues' cpus, or counted at add) */

	dev = aligned_alloc(VNIC_CACHELINE, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	memset(dev, 0, sizeof(*dev));
	if (cfg)
		dev->cfg = *cfg;
	else
		vnic_dev_config_default(&dev->cfg);
	err = config_check(&dev->cfg, hv, wire);
	if (err)
		goto err_free_dev;
	dev->hv = hv;
	dev->wire = wire;
	dev->cpu = cpu;
	dev->nwires = wires_check(&dev->cfg, wire);
	err = dev->nwires ? queue_cpus(dev) : -EINVAL;
	if (err)
		goto err_free_dev;
	dev->desc_req = dev_desc_req_of(dev->cfg.hdr_mask);
	atomic_init(&dev->live.hdr_mask, dev->cfg.hdr_mask);
	atomic_init(&dev->live.mask_pending, false);
	atomic_init(&dev->live.fault_pending, false);
	err = -pthread_mutex_init(&dev->live.lock, NULL);
	if (err)
		goto err_free_dev;
	dev->phys_up = true;
	atomic_init(&dev->fault.on, false);
	vnic_fault_rng_init(&dev->fault.rng, dev->cfg.fault.seed, 0xdec0de);

	sz = dev->cfg.max_tx_queues * sizeof(*dev->txq);
	dev->txq = aligned_alloc(VNIC_CACHELINE, sz);
	if (!dev->txq) {
		err = -ENOMEM;
		goto err_free_dev;
	}
	memset(dev->txq, 0, sz);
	sz = dev->cfg.max_rx_queues * sizeof(*dev->rxq);
	dev->rxq = aligned_alloc(VNIC_CACHELINE, sz);
	if (!dev->rxq) {
		err = -ENOMEM;
		goto err_free_txq;
	}
	memset(dev->rxq, 0, sz);

	/* Requests start at the defaults a driver gets if it asks for nothing. */
	vnic_dev_reset(dev);
	dev->ctl_st.resets = 0;

	err = add_napis(dev, wire);
	if (err)
		goto err_free_rxq;
	err = vnic_dev_coal_init(dev);
	if (err)
		goto err_free_rxq;

	for (i = 0; i < dev->nwires; i++) {
		dev->rxe[i].wire->notify_ctx = &dev->rxe[i];
		dev->rxe[i].wire->notify = vnic_dev_rx_notify;
	}
	vnic_hv_crq_set_irq(hv, VNIC_HV_SERVER, vnic_dev_ctl_irq, dev);
	/*
	 * One first poll each: the control poller reads messages that came
	 * before us, and all arm their interrupts when they complete.
	 */
	vnic_napi_schedule(&dev->ctl_napi);
	for (i = 0; i < dev->nwires; i++)
		vnic_napi_schedule(&dev->rxe[i].napi);
	*out = dev;
	return 0;

err_free_rxq:
	free(dev->rxq);
err_free_txq:
	free(dev->txq);
err_free_dev:
	free(dev);
	return err;
}

void vnic_dev_destroy(struct vnic_dev *dev)
{
	unsigned int i;

	if (!dev)
		return;
	vnic_hv_crq_irq_enable(dev->hv, VNIC_HV_SERVER, false);
	vnic_hv_crq_set_irq(dev->hv, VNIC_HV_SERVER, NULL, NULL);
	for (i = 0; i < dev->nwires; i++) {
		struct vnic_wire *w = dev->rxe[i].wire;

		if (w->ops->rx_irq)
			w->ops->rx_irq->disable(w);
		w->notify = NULL;
		w->notify_ctx = NULL;
	}
	vnic_dev_reset(dev);
	pthread_mutex_destroy(&dev->live.lock);
	free(dev->rxq);
	free(dev->txq);
	free(dev);
}

int vnic_dev_set(struct vnic_dev *dev, enum vnic_dev_hdr_mask mask, bool drop_missing_hdrs)
{
	if (!dev || (mask != VNIC_DEV_HDRS_CAUTIOUS && mask != VNIC_DEV_HDRS_EXACT))
		return -EINVAL;
	vnic_ctr_store(&dev->cfg.drop_missing_hdrs, drop_missing_hdrs);
	atomic_store_explicit(&dev->live.hdr_mask, mask, memory_order_relaxed);
	/* Release: the mask is there before the control poller sees the flag. */
	atomic_store_explicit(&dev->live.mask_pending, true, memory_order_release);
	vnic_poller_schedule(&dev->ctl_napi.poller);
	return 0;
}

void vnic_dev_settings(const struct vnic_dev *dev, enum vnic_dev_hdr_mask *mask,
		       bool *drop_missing_hdrs)
{
	if (mask)
		*mask = atomic_load_explicit(&((struct vnic_dev *)dev)->live.hdr_mask,
					     memory_order_relaxed);
	if (drop_missing_hdrs)
		*drop_missing_hdrs = vnic_ctr_load(&dev->cfg.drop_missing_hdrs);
}

/* --- counters ---------------------------------------------------------------- */

/* clang-format off */
static const char *const tx_drop_names[TX_DROP_MAX] = {
	[TX_DROP_BAD_TYPE] = "bad_type",
	[TX_DROP_BAD_N_SGE] = "bad_n_sge",
	[TX_DROP_BAD_N_ELEM] = "bad_n_elem",
	[TX_DROP_HDRS_INCOMPLETE] = "hdrs_incomplete",
	[TX_DROP_BAD_HDR_DESC] = "bad_hdr_desc",
	[TX_DROP_BAD_FLAGS] = "bad_flags",
	[TX_DROP_UNSUPPORTED] = "unsupported",
	[TX_DROP_BAD_MSS] = "bad_mss",
	[TX_DROP_BAD_MAP_ID] = "bad_map_id",
	[TX_DROP_BAD_IOBA] = "bad_ioba",
	[TX_DROP_BAD_LEN] = "bad_len",
	[TX_DROP_LEN_PAST_LTB] = "len_past_ltb",
	[TX_DROP_BAD_HEADERS] = "bad_headers",
	[TX_DROP_HDR_LEN_MISMATCH] = "hdr_len_mismatch",
	[TX_DROP_MISSING_HDRS] = "missing_hdrs",
	[TX_DROP_GSO_FAILED] = "gso_failed",
	[TX_DROP_LINK_DOWN] = "link_down",
	[TX_DROP_NO_CARRIER] = "no_carrier",
};
/* clang-format on */

static const char *const rc_names[VNIC_RC_UNSUPPORTEDOPTION + 1] = {
	[VNIC_RC_SUCCESS] = "success",
	[VNIC_RC_PARTIALSUCCESS] = "partialsuccess",
	[VNIC_RC_PERMISSION] = "permission",
	[VNIC_RC_NOMEMORY] = "nomemory",
	[VNIC_RC_PARAMETER] = "parameter",
	[VNIC_RC_UNKNOWNCOMMAND] = "unknowncommand",
	[VNIC_RC_ABORTED] = "aborted",
	[VNIC_RC_INVALIDSTATE] = "invalidstate",
	[VNIC_RC_INVALIDIOBA] = "invalidioba",
	[VNIC_RC_INVALIDLENGTH] = "invalidlength",
	[VNIC_RC_UNSUPPORTEDOPTION] = "unsupportedoption",
};

/* Appends counters to out[0..max) while counting all of them. */
struct ctr_sink {
	struct vnic_counter *out;
	unsigned int max;
	unsigned int n;
};

static void put(struct ctr_sink *s, uint64_t value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(struct ctr_sink *s, uint64_t value, const char *fmt, ...)
{
	va_list ap;

	if (s->n < s->max) {
		va_start(ap, fmt);
		vsnprintf(s->out[s->n].name, sizeof(s->out[s->n].name), fmt, ap);
		va_end(ap);
		s->out[s->n].value = value;
	}
	s->n++;
}

static void coal_counters(struct ctr_sink *s, const struct dev_coal_ring *r, const char *dir,
			  unsigned int q)
{
	put(s, vnic_ctr_read(&r->irqs), "%s%u_irqs", dir, q);
	put(s, vnic_ctr_read(&r->coalesced), "%s%u_irqs_coalesced", dir, q);
	put(s, vnic_ctr_read(&r->profile), "%s%u_dim_profile", dir, q);
	put(s, vnic_ctr_read(&r->moves), "%s%u_dim_moves", dir, q);
}

static void txq_counters(struct ctr_sink *s, const struct dev_txq *txq)
{
	const struct dev_txq_stats *st = &txq->st;
	unsigned int q = txq->idx, i;

	put(s, vnic_ctr_read(&st->packets), "tx%u_packets", q);
	put(s, vnic_ctr_read(&st->bytes), "tx%u_bytes", q);
	put(s, vnic_ctr_read(&st->lso_packets), "tx%u_lso_packets", q);
	put(s, vnic_ctr_read(&st->lso_segments), "tx%u_lso_segments", q);
	put(s, vnic_ctr_read(&st->lso_super), "tx%u_lso_super", q);
	put(s, vnic_ctr_read(&st->lso_super_ref), "tx%u_lso_super_ref", q);
	put(s, vnic_ctr_read(&st->csum_inserted), "tx%u_csum_inserted", q);
	put(s, vnic_ctr_read(&st->hdr_descs), "tx%u_hdr_descs", q);
	put(s, vnic_ctr_read(&st->csum_missing_hdrs), "tx%u_csum_missing_hdrs", q);
	put(s, vnic_ctr_read(&st->lso_missing_hdrs), "tx%u_lso_missing_hdrs", q);
	put(s, vnic_ctr_read(&st->orphan_hdr_descs), "tx%u_orphan_hdr_descs", q);
	put(s, vnic_ctr_read(&st->completions), "tx%u_completions", q);
	put(s, vnic_ctr_read(&st->comp_entries), "tx%u_comp_entries", q);
	put(s, vnic_ctr_read(&st->comp_busy), "tx%u_comp_busy", q);
	put(s, vnic_ctr_read(&st->comp_lost), "tx%u_comp_lost", q);
	put(s, vnic_ctr_read(&st->wire_full), "tx%u_wire_full", q);
	put(s, vnic_ctr_read(&st->hdrs_waits), "tx%u_hdrs_waits", q);
	put(s, vnic_ctr_read(&st->reset_unread), "tx%u_reset_unread", q);
	put(s, vnic_ctr_read(&st->comp_reset), "tx%u_comp_reset", q);
	coal_counters(s, &txq->coal, "tx", q);
	for (i = 0; i < TX_DROP_MAX; i++)
		put(s, vnic_ctr_read(&st->drops[i]), "tx%u_drop_%s", q, tx_drop_names[i]);
}

/*
 * tail - head, read head first: both only move forward (the device's cpu
 * moves them) and head never passes tail, so a tail read after head is
 * usually at least as new. A reset zeroing both between the two loads, or
 * relaxed loads reordered on a weakly ordered cpu, can still make the
 * difference negative: clamped to 0.
 */
static uint64_t bufs_avail(const struct dev_rxq *rxq)
{
	uint32_t head = vnic_ctr_read32(&rxq->head);
	uint32_t tail = vnic_ctr_read32(&rxq->tail);

	return (int32_t)(tail - head) < 0 ? 0 : tail - head;
}

static void rxq_counters(struct ctr_sink *s, const struct dev_rxq *rxq, unsigned int q)
{
	const struct dev_rxq_stats *st = &rxq->st;

	put(s, vnic_ctr_read(&st->frames), "rx%u_frames", q);
	put(s, vnic_ctr_read(&st->bytes), "rx%u_bytes", q);
	put(s, vnic_ctr_read(&st->ip_csum_good), "rx%u_ip_csum_good", q);
	put(s, vnic_ctr_read(&st->ip_csum_bad), "rx%u_ip_csum_bad", q);
	put(s, vnic_ctr_read(&st->csum_good), "rx%u_csum_good", q);
	put(s, vnic_ctr_read(&st->csum_bad), "rx%u_csum_bad", q);
	put(s, vnic_ctr_read(&st->bufs_posted), "rx%u_bufs_posted", q);
	put(s, bufs_avail(rxq), "rx%u_bufs_avail", q);
	put(s, vnic_ctr_read(&st->bad_rx_add_map_id), "rx%u_bad_rx_add_map_id", q);
	put(s, vnic_ctr_read(&st->bad_rx_add_ioba), "rx%u_bad_rx_add_ioba", q);
	put(s, vnic_ctr_read(&st->bad_rx_add_len), "rx%u_bad_rx_add_len", q);
	put(s, vnic_ctr_read(&st->completions), "rx%u_completions", q);
	put(s, vnic_ctr_read(&st->comp_busy), "rx%u_comp_busy", q);
	put(s, vnic_ctr_read(&st->comp_lost), "rx%u_comp_lost", q);
	put(s, vnic_ctr_read(&st->drop_no_buffer), "rx%u_drop_no_buffer", q);
	put(s, vnic_ctr_read(&st->drop_too_big), "rx%u_drop_too_big", q);
	put(s, vnic_ctr_read(&st->drop_buf_fault), "rx%u_drop_buf_fault", q);
	put(s, vnic_ctr_read(&st->lro_frames), "rx%u_lro_frames", q);
	put(s, vnic_ctr_read(&st->lro_bufs), "rx%u_lro_bufs", q);
	put(s, vnic_ctr_read(&st->lro_buf_waits), "rx%u_lro_buf_waits", q);
	coal_counters(s, &rxq->coal, "rx", q);
}

/* Engine-wide rx counters, summed over the engines (one writer each). */
static void rx_counters(struct ctr_sink *s, const struct vnic_dev *dev)
{
	static const struct {
		const char *name;
		size_t off;
	} ctrs[] = {
		{"rx_filtered", offsetof(struct dev_rx_stats, filtered)},
		{"rx_drop_runt", offsetof(struct dev_rx_stats, drop_runt)},
		{"rx_drop_link_down", offsetof(struct dev_rx_stats, drop_link_down)},
		{"rx_drop_halted", offsetof(struct dev_rx_stats, drop_halted)},
		{"rx_parse_errors", offsetof(struct dev_rx_stats, parse_errors)},
		{"rx_drop_super_off", offsetof(struct dev_rx_stats, drop_super_off)},
		{"rx_drop_bad_super", offsetof(struct dev_rx_stats, drop_bad_super)},
		{"rx_drop_bad_queue", offsetof(struct dev_rx_stats, drop_bad_queue)},
	};
	unsigned int i, w;

	for (i = 0; i < sizeof(ctrs) / sizeof(ctrs[0]); i++) {
		uint64_t v = 0;

		for (w = 0; w < dev->nwires; w++)
			v += vnic_ctr_read(
				(const uint64_t *)((const char *)&dev->rxe[w].st + ctrs[i].off));
		put(s, v, "%s", ctrs[i].name);
	}
}

static uint64_t offload_bits(const struct dev_offloads *ol)
{
	/* bit i = byte 8 + i of struct vnic_ip_offload */
	return (uint64_t)vnic_ctr_load(&ol->tcp4) << 2 | (uint64_t)vnic_ctr_load(&ol->tcp6) << 3 |
	       (uint64_t)vnic_ctr_load(&ol->udp4) << 4 | (uint64_t)vnic_ctr_load(&ol->udp6) << 5 |
	       (uint64_t)vnic_ctr_load(&ol->lso4) << 6 | (uint64_t)vnic_ctr_load(&ol->lso6) << 7 |
	       (uint64_t)vnic_ctr_load(&ol->large_rx4) << 8 |
	       (uint64_t)vnic_ctr_load(&ol->large_rx6) << 9 |
	       (uint64_t)vnic_ctr_load(&ol->bad_packet_rx) << 10;
}

unsigned int vnic_dev_counters(const struct vnic_dev *dev, struct vnic_counter *out,
			       unsigned int max)
{
	struct ctr_sink s = {.out = out, .max = out ? max : 0};
	const struct dev_ctl_stats *c = &dev->ctl_st;
	unsigned int i;

	/* Any thread: every field below is stored with vnic_ctr_* by the device's cpu. */
	put(&s, vnic_ctr_load(&dev->state), "state");
	put(&s, vnic_ctr_load(&dev->link_up), "link_up");
	put(&s, vnic_ctr_load(&dev->ntxq) ? vnic_ctr_read32(&dev->req_tx_queues) : 0,
	    "neg_tx_queues");
	put(&s, vnic_ctr_load(&dev->nrxq) ? vnic_ctr_read32(&dev->req_rx_queues) : 0,
	    "neg_rx_queues");
	put(&s, vnic_ctr_read32(&dev->req_tx_entries), "neg_tx_entries");
	put(&s, vnic_ctr_read32(&dev->req_rx_add_entries), "neg_rx_add_entries");
	put(&s, vnic_ctr_read32(&dev->req_mtu), "neg_mtu");
	put(&s, vnic_ctr_read32(&dev->req_ind_descs), "neg_ind_descs");
	put(&s, vnic_ctr_read32(&dev->rx_buf_size), "neg_rx_buf_size");
	put(&s, vnic_ctr_load(&dev->desc_req), "neg_desc_req");
	put(&s, (uint64_t)vnic_ctr_load(&dev->cfg.hdr_mask), "hdr_mask");
	put(&s, vnic_ctr_load(&dev->cfg.drop_missing_hdrs), "drop_missing_hdrs");
	put(&s, offload_bits(&dev->ol), "neg_offloads");

	put(&s, vnic_ctr_read(&c->commands), "ctl_commands");
	for (i = 0; i <= VNIC_RC_UNSUPPORTEDOPTION; i++)
		put(&s, vnic_ctr_read(&c->rc[i]), "ctl_rc_%s", rc_names[i]);
	put(&s, vnic_ctr_read(&c->inits), "ctl_inits");
	put(&s, vnic_ctr_read(&c->xport_events), "ctl_xport_events");
	put(&s, vnic_ctr_read(&c->ignored), "ctl_ignored");
	put(&s, vnic_ctr_read(&c->rsp_busy), "ctl_rsp_busy");
	put(&s, vnic_ctr_read(&c->rsp_lost), "ctl_rsp_lost");
	put(&s, vnic_ctr_read(&c->resets), "ctl_resets");
	put(&s, vnic_ctr_read(&c->dup_maps), "ctl_dup_maps");
	put(&s, vnic_ctr_read(&c->dup_logins), "ctl_dup_logins");
	put(&s, vnic_ctr_read(&c->login_conflicts), "ctl_login_conflicts");
	put(&s, vnic_ctr_read(&c->hdr_mask_changes), "ctl_hdr_mask_changes");
	put(&s, vnic_ctr_read(&dev->fault.st.resets), "fault_resets");
	put(&s, vnic_ctr_read(&dev->fault.st.failovers), "fault_failovers");
	put(&s, vnic_ctr_read(&dev->fault.st.err_inds), "fault_err_inds");
	put(&s, vnic_ctr_read(&dev->fault.st.err_inds_fatal), "fault_err_inds_fatal");
	put(&s, vnic_ctr_read(&dev->fault.st.link_flaps), "fault_link_flaps");
	put(&s, vnic_ctr_load(&dev->halted), "halted");
	put(&s, vnic_ctr_load(&dev->phys_up), "phys_link_up");

	for (i = 0; i < vnic_ctr_load(&dev->txq_hw); i++)
		txq_counters(&s, &dev->txq[i]);
	put(&s, vnic_ctr_read(&dev->park.parks), "parks");
	put(&s, vnic_ctr_read(&dev->park.retries), "park_retries");
	rx_counters(&s, dev);
	for (i = 0; i < vnic_ctr_load(&dev->rxq_hw); i++)
		rxq_counters(&s, &dev->rxq[i], i);
	return s.n;
}

int vnic_dev_counter(const struct vnic_dev *dev, const char *name, uint64_t *value)
{
	struct vnic_counter *all;
	unsigned int n, i;
	int err = -ENOENT;

	n = vnic_dev_counters(dev, NULL, 0);
	all = calloc(n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	n = vnic_dev_counters(dev, all, n);
	for (i = 0; i < n; i++) {
		if (!strcmp(all[i].name, name)) {
			*value = all[i].value;
			err = 0;
			break;
		}
	}
	free(all);
	return err;
}
