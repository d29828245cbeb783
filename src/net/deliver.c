// SPDX-License-Identifier: MIT
/*
 * Received-packet delivery for one poll, in the three shapes of the
 * dpaa2-eth rx list thread (docs/SEEDS.md):
 * list batching for everything (Linux's netif_receive_skb_list), GRO with
 * each result passed up at once (napi_gro_receive before v5.4), or GRO whose
 * output is batched (gro_normal_list, commit 323ebb61e32b). A batch is passed
 * up when its segments reach the batch size, counting an aggregate of N as N
 * as gro_normal_one does, and at the end of the poll.
 *
 * The callback must not call back into the same vnic_deliver.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ctr_int.h"
#include "net.h"

static unsigned int pkt_segs(const struct vnic_pkt *pkt)
{
	return pkt->gso_type && pkt->gso_segs > 1 ? pkt->gso_segs : 1;
}

static void list_flush(struct vnic_deliver *d)
{
	unsigned int n = d->n;

	if (!n)
		return;
	/* stats are read by counters on other threads: ctr_int.h */
	vnic_net_ctr_add(&d->stats.packets, n);
	vnic_net_ctr_add(&d->stats.segments, d->nsegs);
	vnic_net_ctr_inc(&d->stats.batches);
	d->n = 0;
	d->nsegs = 0;
	d->fn(d->ctx, d->pkts, n);
}

static void list_add(struct vnic_deliver *d, struct vnic_pkt *pkt)
{
	d->pkts[d->n++] = pkt;
	d->nsegs += pkt_segs(pkt);
	/* The array bound matters only for batch sizes of whole aggregates. */
	if (d->nsegs >= d->batch || d->n == VNIC_DELIVER_MAX_BATCH)
		list_flush(d);
}

static void gro_out(void *ctx, struct vnic_pkt *pkt)
{
	struct vnic_deliver *d = ctx;

	if (d->mode == VNIC_DELIVER_GRO_LIST) {
		list_add(d, pkt);
		return;
	}
	vnic_net_ctr_inc(&d->stats.packets);
	vnic_net_ctr_add(&d->stats.segments, pkt_segs(pkt));
	vnic_net_ctr_inc(&d->stats.batches);
	d->fn(d->ctx, &pkt, 1);
}

_Static_assert(offsetof(struct vnic_deliver, gro) + sizeof(struct vnic_gro) ==
			       offsetof(struct vnic_deliver, stats) &&
		       offsetof(struct vnic_deliver, stats) + sizeof(struct vnic_deliver_stats) ==
			       sizeof(struct vnic_deliver),
	       "vnic_deliver_init clears what comes before gro; gro_init the rest but stats");

int vnic_deliver_init(struct vnic_deliver *d, enum vnic_deliver_mode mode, unsigned int batch,
		      struct vnic_pkt_pool *agg_pool, vnic_deliver_fn fn, void *ctx)
{
	switch (mode) {
	case VNIC_DELIVER_LIST:
	case VNIC_DELIVER_GRO:
	case VNIC_DELIVER_GRO_LIST:
		break;
	default:
		return -EINVAL;
	}
	if (!fn || batch > VNIC_DELIVER_MAX_BATCH)
		return -EINVAL;

	/* All but the stats, which counters may be reading (ctr_int.h); gro_init does gro. */
	memset(d, 0, offsetof(struct vnic_deliver, gro));
	vnic_net_ctr_zero(&d->stats);
	d->mode = mode;
	d->batch = batch ? batch : VNIC_DELIVER_DEFAULT_BATCH;
	d->fn = fn;
	d->ctx = ctx;
	vnic_gro_init(&d->gro, agg_pool, gro_out, d);
	return 0;
}

void vnic_deliver_rx(struct vnic_deliver *d, struct vnic_pkt *pkt)
{
	if (d->mode == VNIC_DELIVER_LIST)
		list_add(d, pkt);
	else
		vnic_gro_receive(&d->gro, pkt);
}

void vnic_deliver_flush(struct vnic_deliver *d)
{
	if (d->mode != VNIC_DELIVER_LIST)
		vnic_gro_flush(&d->gro);
	list_flush(d);
}

int vnic_deliver_set_mode(struct vnic_deliver *d, enum vnic_deliver_mode mode)
{
	switch (mode) {
	case VNIC_DELIVER_LIST:
	case VNIC_DELIVER_GRO:
	case VNIC_DELIVER_GRO_LIST:
		break;
	default:
		return -EINVAL;
	}
	vnic_deliver_flush(d);
	d->mode = mode;
	return 0;
}

void vnic_deliver_set_fraglist(struct vnic_deliver *d, bool on)
{
	vnic_deliver_flush(d);
	vnic_gro_set_fraglist(&d->gro, on);
}

static const char *const mode_names[] = {
	[VNIC_DELIVER_LIST] = "list",
	[VNIC_DELIVER_GRO] = "gro",
	[VNIC_DELIVER_GRO_LIST] = "gro-list",
};

const char *vnic_deliver_mode_name(enum vnic_deliver_mode mode)
{
	if ((unsigned int)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "unknown";
	return mode_names[mode];
}

int vnic_deliver_mode_parse(const char *s, enum vnic_deliver_mode *mode)
{
	if (!s)
		return -EINVAL;
	for (unsigned int i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (strcmp(s, mode_names[i]) == 0) {
			*mode = (enum vnic_deliver_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}
