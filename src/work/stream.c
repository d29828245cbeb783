// SPDX-License-Identifier: MIT
/*
 * Bulk transfer: M flows from the sender host to the receiver host, each
 * sending as fast as its window and its TSQ budget allow, in superpackets of
 * up to 64 KiB when the netdev has TSO (else MSS frames). The receiver checks
 * every byte against the pattern at its stream offset (in the rx callback)
 * and acknowledges once per delivered batch: at the end of each poller run
 * that delivered data on the flow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "work_int.h"

struct vnic_stream {
	struct work_pairs pairs;
	struct vnic_stream_opts o;
};

static void sender_start(struct vnic_tcpl_host *h)
{
	struct vnic_stream *st = h->app_ctx;
	unsigned int i;

	for (i = 0; i < h->nconns; i++)
		vnic_tcpl_send(&h->conns[i], st->o.bytes ? st->o.bytes : UINT64_MAX);
}

static void sender_stop(struct vnic_tcpl_host *h)
{
	unsigned int i;

	for (i = 0; i < h->nconns; i++)
		vnic_tcpl_close_send(&h->conns[i]);
}

static void nothing(struct vnic_tcpl_host *h)
{
	(void)h;
}

static void ignore(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint64_t bytes, uint64_t ts)
{
	(void)h;
	(void)c;
	(void)bytes;
	(void)ts;
}

static const struct tcpl_app stream_sender = {
	.start = sender_start,
	.stop = sender_stop,
	.deliver = ignore,	/* the receiver sends no data */
};

static const struct tcpl_app stream_receiver = {
	.start = nothing,
	.stop = nothing,
	.deliver = ignore,	/* counted and checked below the application */
};

int vnic_stream_create(struct vnic_stream **stp, struct vnic_netdev *sender,
		       struct vnic_pkt_pool *sender_pool, struct vnic_netdev *receiver,
		       struct vnic_pkt_pool *receiver_pool, const struct vnic_stream_opts *opts)
{
	return vnic_stream_create_queues(stp, 1, sender, &sender_pool, receiver, &receiver_pool,
					 opts);
}

int vnic_stream_create_queues(struct vnic_stream **stp, unsigned int pairs,
			      struct vnic_netdev *sender, struct vnic_pkt_pool *const *sender_pools,
			      struct vnic_netdev *receiver,
			      struct vnic_pkt_pool *const *receiver_pools,
			      const struct vnic_stream_opts *opts)
{
	struct vnic_stream *st;
	int err;

	*stp = NULL;
	st = aligned_alloc(VNIC_CACHELINE, (sizeof(*st) + VNIC_CACHELINE - 1) &
					   ~(size_t)(VNIC_CACHELINE - 1));
	if (!st)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	if (opts)
		st->o = *opts;
	if (!st->o.flows)
		st->o.flows = 1;
	err = vnic_work_pairs_init(&st->pairs, pairs, sender, sender_pools, receiver,
				   receiver_pools, st->o.flows, &st->o.tcp, &stream_sender,
				   &stream_receiver, st, "stream-tx", "stream-rx");
	if (err) {
		free(st);
		return err;
	}
	*stp = st;
	return 0;
}

void vnic_stream_start(struct vnic_stream *st)
{
	vnic_work_pairs_start(&st->pairs);
}

void vnic_stream_stop(struct vnic_stream *st)
{
	vnic_work_pairs_stop(&st->pairs);
}

bool vnic_stream_quiesced(const struct vnic_stream *st)
{
	return vnic_work_pairs_quiesced(&st->pairs);
}

void vnic_stream_results(const struct vnic_stream *st, struct vnic_work_results *r)
{
	vnic_work_pairs_results(&st->pairs, r);
}

uint64_t vnic_stream_flow_bytes(const struct vnic_stream *st, unsigned int flow)
{
	const struct tcpl_conn *c = vnic_work_pairs_b_conn(&st->pairs, flow);

	return c ? vnic_ctr_read(&c->delivered) : 0;
}

struct work_pair *vnic_stream_pair(struct vnic_stream *st)
{
	return &st->pairs.pair[0];
}

void vnic_stream_destroy(struct vnic_stream *st)
{
	if (!st)
		return;
	vnic_work_pairs_fini(&st->pairs);
	free(st);
}
