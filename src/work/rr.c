// SPDX-License-Identifier: MIT
/*
 * Request/response, like netperf TCP_RR: each session keeps exactly one
 * transaction outstanding. The client writes req_size bytes; the server,
 * once it has read a whole request, writes resp_size bytes; the client,
 * once it has read the whole response, records the latency and writes the
 * next request, which carries the ACK of the response (the server's response
 * carried the ACK of the request). Messages longer than the MSS go out as
 * MSS segments, or as one superpacket when the netdev has TSO, as Linux
 * would send them.
 *
 * Latency runs from the client's write (the poller run that issues it) to
 * the NAPI delivery of the response's last byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "work_int.h"

struct rr_sess {
	uint64_t t_start;
	uint64_t got;		/* client: bytes of the current response;
				 * server: bytes of the current request */
};

/* What the client host of one queue pair records, on its cpu. */
struct rr_part {
	uint64_t transactions;
	struct vnic_hist hist;
};

struct vnic_rr {
	struct work_pairs pairs;
	struct vnic_rr_opts o;
	struct rr_sess *cli;
	struct rr_sess *srv;
	struct rr_part *part;		/* [pairs.n] */
	struct vnic_hist hist;		/* with several queue pairs: the parts', gathered */
};

/* A session's state, by its number in the workload. */
static struct rr_sess *sess(struct rr_sess *all, const struct tcpl_conn *c)
{
	return &all[c->host->base + c->idx];
}

static void issue(struct vnic_rr *rr, struct tcpl_conn *c)
{
	sess(rr->cli, c)->t_start = c->host->now;
	vnic_tcpl_send(c, rr->o.req_size);
}

static void client_start(struct vnic_tcpl_host *h)
{
	unsigned int i;

	for (i = 0; i < h->nconns; i++)
		issue(h->app_ctx, &h->conns[i]);
}

static void client_deliver(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint64_t bytes,
			   uint64_t ts)
{
	struct vnic_rr *rr = h->app_ctx;
	struct rr_sess *s = sess(rr->cli, c);
	struct rr_part *pt = &rr->part[h->queue];

	s->got += bytes;
	if (s->got < rr->o.resp_size)
		return;
	/* One transaction outstanding: the server never sends more. */
	s->got -= rr->o.resp_size;
	vnic_hist_record(&pt->hist, ts > s->t_start ? ts - s->t_start : 0);
	vnic_ctr_add(&pt->transactions, 1);
	if (!h->stop_seen)
		issue(rr, c);
}

static void server_deliver(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint64_t bytes,
			   uint64_t ts)
{
	struct vnic_rr *rr = h->app_ctx;
	struct rr_sess *s = sess(rr->srv, c);

	(void)ts;
	s->got += bytes;
	while (s->got >= rr->o.req_size) {
		s->got -= rr->o.req_size;
		vnic_tcpl_send(c, rr->o.resp_size);
	}
}

static void nothing(struct vnic_tcpl_host *h)
{
	(void)h;
}

static const struct tcpl_app rr_client = {
	.start = client_start,
	.stop = nothing,
	.deliver = client_deliver,
};

static const struct tcpl_app rr_server = {
	.start = nothing,
	.stop = nothing,
	.deliver = server_deliver,
};

int vnic_rr_create(struct vnic_rr **rrp, struct vnic_netdev *client,
		   struct vnic_pkt_pool *client_pool, struct vnic_netdev *server,
		   struct vnic_pkt_pool *server_pool, const struct vnic_rr_opts *opts)
{
	return vnic_rr_create_queues(rrp, 1, client, &client_pool, server, &server_pool, opts);
}

int vnic_rr_create_queues(struct vnic_rr **rrp, unsigned int pairs, struct vnic_netdev *client,
			  struct vnic_pkt_pool *const *client_pools, struct vnic_netdev *server,
			  struct vnic_pkt_pool *const *server_pools, const struct vnic_rr_opts *opts)
{
	struct vnic_rr *rr;
	int err;

	*rrp = NULL;
	rr = aligned_alloc(VNIC_CACHELINE, (sizeof(*rr) + VNIC_CACHELINE - 1) &
					   ~(size_t)(VNIC_CACHELINE - 1));
	if (!rr)
		return -ENOMEM;
	memset(rr, 0, sizeof(*rr));
	if (opts)
		rr->o = *opts;
	if (!rr->o.sessions)
		rr->o.sessions = 1;
	if (!rr->o.req_size)
		rr->o.req_size = 1;
	if (!rr->o.resp_size)
		rr->o.resp_size = 1;
	if (!pairs || pairs > rr->o.sessions) {
		free(rr);
		return -EINVAL;
	}
	vnic_hist_reset(&rr->hist);
	err = -ENOMEM;
	rr->cli = calloc(rr->o.sessions, sizeof(*rr->cli));
	rr->srv = calloc(rr->o.sessions, sizeof(*rr->srv));
	rr->part = calloc(pairs, sizeof(*rr->part));
	if (!rr->cli || !rr->srv || !rr->part)
		goto err_free;
	for (unsigned int q = 0; q < pairs; q++)
		vnic_hist_reset(&rr->part[q].hist);
	err = vnic_work_pairs_init(&rr->pairs, pairs, client, client_pools, server, server_pools,
				   rr->o.sessions, &rr->o.tcp, &rr_client, &rr_server, rr,
				   "rr-client", "rr-server");
	if (err)
		goto err_free;
	*rrp = rr;
	return 0;

err_free:
	free(rr->part);
	free(rr->cli);
	free(rr->srv);
	free(rr);
	return err;
}

void vnic_rr_start(struct vnic_rr *rr)
{
	vnic_work_pairs_start(&rr->pairs);
}

void vnic_rr_stop(struct vnic_rr *rr)
{
	vnic_work_pairs_stop(&rr->pairs);
}

bool vnic_rr_quiesced(const struct vnic_rr *rr)
{
	return vnic_work_pairs_quiesced(&rr->pairs);
}

void vnic_rr_results(const struct vnic_rr *rr, struct vnic_work_results *r)
{
	vnic_work_pairs_results(&rr->pairs, r);
	for (unsigned int q = 0; q < rr->pairs.n; q++)
		r->transactions += vnic_ctr_read(&rr->part[q].transactions);
	/* one pair: its own histogram; several: what vnic_rr_gather made of theirs */
	r->latency = rr->pairs.n == 1 ? &rr->part[0].hist : &rr->hist;
}

void vnic_rr_gather(struct vnic_rr *rr)
{
	if (rr->pairs.n == 1)
		return;
	vnic_hist_reset(&rr->hist);
	for (unsigned int q = 0; q < rr->pairs.n; q++)
		vnic_hist_merge(&rr->hist, &rr->part[q].hist);
}

struct work_pair *vnic_rr_pair(struct vnic_rr *rr)
{
	return &rr->pairs.pair[0];
}

void vnic_rr_destroy(struct vnic_rr *rr)
{
	if (!rr)
		return;
	vnic_work_pairs_fini(&rr->pairs);
	free(rr->part);
	free(rr->cli);
	free(rr->srv);
	free(rr);
}
