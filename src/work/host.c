// SPDX-License-Identifier: MIT
/*
 * A host on a netdev: the poller that runs its connections, and the tx side
 * of the netdev boundary (xmit bursts, stop/wake, tx_done). The rx callback
 * is in host_rx.c.
 *
 * One poller run: take the rx events, fire due timers (loss probes, RTOs), then
 * build up to HOST_BURST packets round-robin over the connections that want
 * to send and hand them to the netdev as one xmit_more batch per tx queue.
 * A packet refused with VNIC_TX_BUSY is kept, in order, until tx_wake; the
 * connections of that queue wait on it meanwhile, as a qdisc would hold them.
 *
 * What the netdev offers (MTU, checksum and TSO offloads, gso_max_size, its
 * queues, MAC) is read again at start: a driver learns its negotiated
 * offloads when it opens, and it opens after the workload is created (the
 * pollers must be registered before the cpus start). Create checks the
 * options and the pool against what the netdev says then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "work_int.h"

enum { NOBUF_RETRY_NS = 50000 };

/* ---- connection lists --------------------------------------------------- */

static void push_active(struct vnic_tcpl_host *h, struct tcpl_conn *c)
{
	c->next = NULL;
	c->list = CONN_ACTIVE;
	if (h->active_tail)
		h->active_tail->next = c;
	else
		h->active_head = c;
	h->active_tail = c;
}

static void push_active_front(struct vnic_tcpl_host *h, struct tcpl_conn *c)
{
	c->list = CONN_ACTIVE;
	c->next = h->active_head;
	h->active_head = c;
	if (!h->active_tail)
		h->active_tail = c;
}

static struct tcpl_conn *pop_active(struct vnic_tcpl_host *h)
{
	struct tcpl_conn *c = h->active_head;

	if (!c)
		return NULL;
	h->active_head = c->next;
	if (!h->active_head)
		h->active_tail = NULL;
	c->next = NULL;
	c->list = CONN_OFF;
	return c;
}

static void push_wait(struct host_txq *tq, struct tcpl_conn *c)
{
	c->next = NULL;
	c->list = CONN_WAITQ;
	if (tq->wait_tail)
		tq->wait_tail->next = c;
	else
		tq->wait_head = c;
	tq->wait_tail = c;
}

/* The queue takes packets again: its waiting connections go back to work. */
static void release_waiters(struct vnic_tcpl_host *h, struct host_txq *tq)
{
	struct tcpl_conn *c = tq->wait_head;

	tq->wait_head = tq->wait_tail = NULL;
	while (c) {
		struct tcpl_conn *next = c->next;

		push_active(h, c);
		c = next;
	}
}

void vnic_tcpl_kick(struct tcpl_conn *c)
{
	if (c->list != CONN_OFF || c->throttled || !vnic_tcpl_wants_tx(c))
		return;
	push_active(c->host, c);
}

/* ---- transmit ----------------------------------------------------------- */

static bool queue_stopped(struct vnic_tcpl_host *h, unsigned int q)
{
	return h->dev->ops->tx_stopped && h->dev->ops->tx_stopped(h->dev, q);
}

static unsigned int queue_of(const struct vnic_tcpl_host *h, const struct vnic_pkt *pkt)
{
	return h->conns[pkt->priv >> TCPL_COOKIE_LEN_BITS].txq;
}

/* Hands one packet over; false if it was refused (and is still ours). */
static bool xmit_one(struct vnic_tcpl_host *h, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	uint32_t len = pkt->len;
	uint16_t segs = pkt->gso_size ? pkt->gso_segs : 1;

	if (vnic_netdev_xmit(h->dev, q, pkt, more) != VNIC_TX_OK) {
		vnic_ctr_add(&h->st.tx_busy, 1);
		h->txq[q].stopped = true;
		return false;
	}
	/* pkt belongs to the NIC now (and may be freed already). */
	vnic_ctr_add(&h->st.tx_pkts, 1);
	vnic_ctr_add(&h->st.tx_segs, segs);
	vnic_ctr_add(&h->st.tx_bytes, len);
	return true;
}

/* Resends what a stopped queue refused, in order. */
static unsigned int flush_stalled(struct vnic_tcpl_host *h, unsigned int q)
{
	struct host_txq *tq = &h->txq[q];
	unsigned int i, n = tq->nstalled;

	for (i = 0; i < n; i++)
		if (!xmit_one(h, q, tq->stalled[i], i + 1 < n))
			break;
	memmove(tq->stalled, tq->stalled + i, (n - i) * sizeof(tq->stalled[0]));
	tq->nstalled = n - i;
	return i;
}

/* One xmit_more batch per queue: more on all but each queue's last. */
static unsigned int xmit_burst(struct vnic_tcpl_host *h)
{
	int last[HOST_MAX_QUEUES];
	unsigned int i, sent = 0;

	for (i = 0; i < HOST_MAX_QUEUES; i++)
		last[i] = -1;
	for (i = 0; i < h->nburst; i++)
		last[queue_of(h, h->burst[i])] = (int)i;
	for (i = 0; i < h->nburst; i++) {
		struct vnic_pkt *pkt = h->burst[i];
		unsigned int q = queue_of(h, pkt);
		struct host_txq *tq = &h->txq[q];

		if (!tq->nstalled && !tq->stopped && xmit_one(h, q, pkt, (int)i != last[q])) {
			sent++;
			continue;
		}
		/* Behind a refused packet everything of this queue waits. */
		tq->stalled[tq->nstalled++] = pkt;
	}
	h->nburst = 0;
	return sent;
}

/* Queues that were stopped: resend their stalled packets once they run. */
static unsigned int restart_queues(struct vnic_tcpl_host *h)
{
	unsigned int q, sent = 0;

	for (q = 0; q < HOST_MAX_QUEUES; q++) {
		struct host_txq *tq = &h->txq[q];

		if (!tq->stopped && !tq->nstalled && !tq->wait_head)
			continue;
		/* tx_wake clears stopped; looking again also heals a lost wake. */
		if (tq->stopped && !queue_stopped(h, q))
			tq->stopped = false;
		if (tq->stopped)
			continue;
		if (tq->nstalled)
			sent += flush_stalled(h, q);
		if (!tq->nstalled)
			release_waiters(h, tq);
	}
	return sent;
}

/* Builds a burst round-robin, one packet per connection per turn. */
static void build_burst(struct vnic_tcpl_host *h)
{
	struct tcpl_conn *c;

	while (h->nburst < HOST_BURST && (c = pop_active(h))) {
		struct host_txq *tq = &h->txq[c->txq];
		struct vnic_pkt *pkt;

		/* After restart_queues, stalled packets mean a stopped queue. */
		if (tq->stopped || tq->nstalled || queue_stopped(h, c->txq)) {
			tq->stopped = true;
			push_wait(tq, c);
			continue;
		}
		switch (vnic_tcpl_build(c, &pkt)) {
		case TCPL_TX_SENT:
			h->burst[h->nburst++] = pkt;
			if (vnic_tcpl_wants_tx(c))
				push_active(h, c);
			break;
		case TCPL_TX_TSQ:
			c->throttled = true;
			vnic_ctr_add(&h->st.tsq_throttled, 1);
			break;
		case TCPL_TX_NOBUF:
			/* Completions free buffers; look again a little later. */
			vnic_ctr_add(&h->st.tx_nobuf, 1);
			push_active_front(h, c);
			h->retry_at = h->now + NOBUF_RETRY_NS;
			return;
		case TCPL_TX_NONE:
			break;
		}
	}
}

static unsigned int tx_run(struct vnic_tcpl_host *h, bool *more)
{
	unsigned int sent = restart_queues(h);

	if (h->retry_at) {
		if (h->now < h->retry_at)
			return sent;
		h->retry_at = 0;
	}
	build_burst(h);
	if (h->active_head && h->nburst == HOST_BURST)
		*more = true;
	return sent + xmit_burst(h);
}

/* ---- the host callbacks on the tx cpu ----------------------------------- */

static void host_tx_done(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes,
			 int status)
{
	struct vnic_tcpl_host *h = ctx;
	uint32_t idx = cookie >> TCPL_COOKIE_LEN_BITS;
	uint32_t len = cookie & ((1u << TCPL_COOKIE_LEN_BITS) - 1);
	struct tcpl_conn *c;

	(void)queue;
	(void)bytes;	/* the cookie says what we charged */
	if (vnic_unlikely(idx >= h->nconns))
		return;
	c = &h->conns[idx];
	if (vnic_unlikely(len > c->tsq_bytes))
		len = c->tsq_bytes;
	c->tsq_bytes -= len;
	h->tsq_total -= len;
	if (status != VNIC_TX_DONE_OK)
		vnic_ctr_add(&h->st.tx_dropped, 1);
	/* Like TSQ's tasklet: resume once half the budget is free again. */
	if (c->throttled && c->tsq_bytes <= h->tsq_budget / 2) {
		c->throttled = false;
		vnic_tcpl_kick(c);
		vnic_poller_schedule(&h->poller);
	} else if (h->stop_seen && !h->tsq_total) {
		vnic_poller_schedule(&h->poller);	/* to notice it is quiet */
	}
}

static void host_tx_wake(void *ctx, unsigned int queue)
{
	struct vnic_tcpl_host *h = ctx;

	if (queue < HOST_MAX_QUEUES)
		h->txq[queue].stopped = false;
	vnic_poller_schedule(&h->poller);
}

static const struct vnic_host_ops host_ops = {
	.rx = vnic_tcpl_host_rx,
	.tx_done = host_tx_done,
	.tx_wake = host_tx_wake,
};

/* ---- a netdev with a host per queue pair (struct work_mux) --------------- */

static struct vnic_tcpl_host *mux_host(const struct work_mux *m, unsigned int queue)
{
	return queue < HOST_MAX_QUEUES ? m->host[queue] : NULL;
}

/* On rx queue `queue`'s cpu, which is its host's. */
static void mux_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct work_mux *m = ctx;
	struct vnic_tcpl_host *h = mux_host(m, queue);

	if (vnic_likely(h)) {
		vnic_tcpl_host_rx(h, queue, pkts, n);
		return;
	}
	/* the netdev has at most HOST_MAX_QUEUES rx queues: none is left uncounted */
	if (queue < HOST_MAX_QUEUES)
		vnic_ctr_add(&m->stray[queue], n);
	for (unsigned int i = 0; i < n; i++)
		vnic_pkt_free(pkts[i]);
}

/* A host sends on its own queue alone: a completion of another is not ours. */
static void mux_tx_done(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes,
			int status)
{
	struct vnic_tcpl_host *h = mux_host(ctx, queue);

	if (vnic_likely(h))
		host_tx_done(h, queue, cookie, bytes, status);
}

static void mux_tx_wake(void *ctx, unsigned int queue)
{
	struct vnic_tcpl_host *h = mux_host(ctx, queue);

	if (h)
		host_tx_wake(h, queue);
}

static const struct vnic_host_ops mux_ops = {
	.rx = mux_rx,
	.tx_done = mux_tx_done,
	.tx_wake = mux_tx_wake,
};

/* ---- the poller --------------------------------------------------------- */

unsigned int vnic_tcpl_host_nevq(const struct vnic_tcpl_host *h)
{
	/* Pairs with the release in publish_nevq: evq[0..n) are visible. */
	return atomic_load_explicit(&((struct vnic_tcpl_host *)h)->nevq, memory_order_acquire);
}

/* Event queue indices: the rx callback publishes head, we publish tail. */
static uint32_t evq_load_head(struct evq *q)
{
	return atomic_load_explicit(&q->head, memory_order_acquire);
}

static void evq_publish_tail(struct evq *q, uint32_t tail)
{
	atomic_store_explicit(&q->tail, tail, memory_order_release);
}

static unsigned int drain_events(struct vnic_tcpl_host *h, bool *more)
{
	unsigned int i, done = 0, n = vnic_tcpl_host_nevq(h);

	for (i = 0; i < n; i++) {
		struct evq *q = h->evq[i];
		uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
		uint32_t head = evq_load_head(q);

		while (tail != head && done < HOST_EV_DRAIN) {
			const struct rx_ev *ev = &q->ev[tail & (HOST_EVQ - 1)];

			if (ev->conn < h->nconns)
				vnic_tcpl_rx(&h->conns[ev->conn], ev);
			tail++;
			done++;
		}
		evq_publish_tail(q, tail);
		if (tail != head)
			*more = true;
	}
	return done;
}

static void run_timers(struct vnic_tcpl_host *h)
{
	uint64_t next = 0;
	unsigned int i;

	for (i = 0; i < h->nconns; i++) {
		uint64_t d = vnic_tcpl_timer(&h->conns[i]);

		if (d && (!next || d < next))
			next = d;
	}
	h->next_rto = next;
}

static bool evqs_empty(const struct vnic_tcpl_host *h)
{
	unsigned int i, n = vnic_tcpl_host_nevq(h);

	for (i = 0; i < n; i++)
		if (atomic_load_explicit(&h->evq[i]->head, memory_order_acquire) !=
		    atomic_load_explicit(&h->evq[i]->tail, memory_order_relaxed))
			return false;
	return true;
}

static void update_quiet(struct vnic_tcpl_host *h)
{
	bool quiet = !h->tsq_total && evqs_empty(h);
	unsigned int i;

	for (i = 0; quiet && i < HOST_MAX_QUEUES; i++)
		quiet = !h->txq[i].nstalled;
	for (i = 0; quiet && i < h->nconns; i++)
		quiet = !vnic_tcpl_busy(&h->conns[i]);
	atomic_store_explicit(&h->quiet, quiet, memory_order_release);
}

static void arm_timer(struct vnic_tcpl_host *h)
{
	uint64_t t = h->next_rto;

	if (h->retry_at && (!t || h->retry_at < t))
		t = h->retry_at;
	vnic_poller_set_timer(&h->poller, t);
}

static int host_poll(struct vnic_poller *p, int budget)
{
	struct vnic_tcpl_host *h = vnic_container_of(p, struct vnic_tcpl_host, poller);
	unsigned int work;
	bool more = false;

	h->now = vnic_now_ns();
	if (!h->started_seen) {
		if (!atomic_load_explicit(&h->ctl->started, memory_order_acquire))
			return 0;
		h->started_seen = true;
		h->app->start(h);
	}
	if (!h->stop_seen && atomic_load_explicit(&h->ctl->stop, memory_order_acquire)) {
		h->stop_seen = true;
		h->app->stop(h);
	}
	work = drain_events(h, &more);
	if (h->next_rto && h->now >= h->next_rto)
		run_timers(h);
	work += tx_run(h, &more);
	if (h->stop_seen)
		update_quiet(h);
	arm_timer(h);
	if (more)
		return budget;
	return (int)work < budget ? (int)work : budget - 1;
}

/* ---- setup -------------------------------------------------------------- */

static uint32_t l3_hlen(const struct vnic_tcpl_host *h)
{
	return h->ipv6 ? 40 : 20;
}

static bool mtu_usable(const struct vnic_tcpl_host *h, uint32_t mtu)
{
	return mtu >= l3_hlen(h) + TCPL_TCP_HLEN + 8 && mtu <= 65535;
}

/* MSS, checksum offload and superpacket size from what the netdev says now. */
static void use_netdev(struct vnic_tcpl_host *h)
{
	const struct vnic_netdev *dev = h->dev;
	uint32_t l3 = l3_hlen(h), hdr = VNIC_ETH_HLEN + l3 + TCPL_TCP_HLEN;
	uint32_t room = h->pool->buf_size - h->pool->headroom, tso;

	/* A netdev that does not say (0), or says nonsense, keeps the MTU
	 * create checked. */
	if (mtu_usable(h, dev->mtu))
		h->mtu = dev->mtu;
	h->mss = h->mtu - l3 - TCPL_TCP_HLEN;
	/* Create checked the pool against the MTU of then; a larger one now
	 * gets frames below the MTU, which is always allowed. */
	if (room < hdr + h->mss)
		h->mss = room - hdr;
	h->csum_offload = (dev->features & VNIC_NETIF_F_CSUM) && !h->no_csum_offload;
	tso = h->ipv6 ? VNIC_NETIF_F_TSO6 : VNIC_NETIF_F_TSO4;
	h->max_seg = h->mss;
	/* TSO needs checksum offload, as in Linux. */
	if (h->csum_offload && (dev->features & tso) && !h->no_tso) {
		uint32_t limit = 65535 - TCPL_TCP_HLEN - (h->ipv6 ? 0 : l3);

		if (limit > VNIC_GSO_MAX_PAYLOAD)
			limit = VNIC_GSO_MAX_PAYLOAD;
		if (dev->gso_max_size && dev->gso_max_size > hdr && dev->gso_max_size - hdr < limit)
			limit = dev->gso_max_size - hdr;
		if (room - hdr < limit)
			limit = room - hdr;
		if (limit / h->mss >= 2)
			h->max_seg = limit / h->mss * h->mss;
	}
}

static int configure(struct vnic_tcpl_host *h, const struct vnic_tcpl_opts *o)
{
	uint32_t room = h->pool->buf_size - h->pool->headroom;

	h->ipv6 = o->ipv6;
	h->no_tso = o->no_tso;
	h->no_csum_offload = o->no_csum_offload;
	h->mtu = h->dev->mtu ? h->dev->mtu : 1500;
	if (!mtu_usable(h, h->mtu))
		return -EINVAL;
	if (room < VNIC_ETH_HLEN + h->mtu)
		return -EINVAL;
	use_netdev(h);
	h->window = o->window ? o->window : VNIC_WORK_DEFAULT_WINDOW;
	/* Sequence numbers are placed by the signed 32-bit difference: the
	 * window must stay well inside 2^31. */
	if (h->window > VNIC_WORK_MAX_WINDOW)
		return -EINVAL;
	h->tsq_budget = o->tsq_bytes ? o->tsq_bytes : VNIC_WORK_DEFAULT_TSQ;
	h->rto.min = o->rto_min_ns ? o->rto_min_ns : VNIC_WORK_DEFAULT_RTO_MIN_NS;
	h->rto.init = h->rto.min * VNIC_WORK_RTO_INIT_MULT;
	h->rto.max = h->rto.min * VNIC_WORK_RTO_BACKOFF_MAX;
	h->rto.pto_slack = h->rto.min / VNIC_WORK_PTO_SLACK_DIV;
	return 0;
}

static unsigned int rx_queues_of(const struct vnic_netdev *dev)
{
	unsigned int n = dev->num_rx_queues ? dev->num_rx_queues : 1;

	return n < HOST_MAX_QUEUES ? n : HOST_MAX_QUEUES;
}

/* Makes evq[n - 1] usable by the rx callback. */
static void publish_nevq(struct vnic_tcpl_host *h, unsigned int n)
{
	/* Release: the rx callback, on another cpu, must see the queue's
	 * pointer and zeroed indices before it sees its index allowed. */
	atomic_store_explicit(&h->nevq, n, memory_order_release);
}

/* An event queue per rx queue of the netdev; their number only grows. */
static int grow_evqs(struct vnic_tcpl_host *h)
{
	unsigned int n = atomic_load_explicit(&h->nevq, memory_order_relaxed);
	unsigned int want = rx_queues_of(h->dev);

	for (; n < want; n++) {
		struct evq *q = aligned_alloc(VNIC_CACHELINE, sizeof(*q));

		if (!q)
			return -ENOMEM;
		memset(q, 0, sizeof(*q));
		h->evq[n] = q;
		publish_nevq(h, n + 1);
	}
	return 0;
}

void vnic_tcpl_host_sync(struct vnic_tcpl_host *h, const struct vnic_tcpl_host *peer)
{
	unsigned int i;

	use_netdev(h);
	/* On failure, frames on the queues left out are counted as
	 * rx_overflow and resent after a timeout: slow, but never wrong. */
	(void)grow_evqs(h);
	for (i = 0; i < h->nconns; i++)
		vnic_tcpl_conn_sync(&h->conns[i], h->dev->mac, peer->dev->mac);
}

int vnic_tcpl_host_init(struct vnic_tcpl_host *h, struct vnic_netdev *dev,
			struct vnic_pkt_pool *pool, unsigned int nconns, bool client,
			const struct vnic_tcpl_opts *opts, const struct tcpl_app *app,
			void *app_ctx, struct work_ctl *ctl, const struct work_queue *wq)
{
	int err;

	memset(h, 0, sizeof(*h));
	h->dev = dev;
	h->pool = pool;
	if (wq) {
		if (wq->q >= HOST_MAX_QUEUES || !wq->mux[!client])
			return -EINVAL;
		h->queue = wq->q;
		h->base = wq->base;
		h->mux = wq->mux[!client];
	}
	h->cpu = vnic_netdev_tx_cpu(dev, h->queue);
	h->app = app;
	h->app_ctx = app_ctx;
	h->ctl = ctl;
	h->client = client;
	if (!h->cpu || !dev->ops || !dev->ops->xmit || !nconns || nconns > VNIC_WORK_MAX_CONNS)
		return -EINVAL;
	err = configure(h, opts);
	if (err)
		return err;

	h->conns = calloc(nconns, sizeof(*h->conns));
	h->keys = calloc(nconns, sizeof(*h->keys));
	/* Zero pages until a connection first loses or reorders something. */
	h->rec = calloc(nconns, sizeof(*h->rec));
	if (!h->conns || !h->keys || !h->rec)
		goto err_nomem;
	h->nconns = nconns;
	if (grow_evqs(h))
		goto err_nomem;
	return 0;

err_nomem:
	vnic_tcpl_host_fini(h);
	return -ENOMEM;
}

int vnic_tcpl_host_register(struct vnic_tcpl_host *h, const char *name)
{
	int err = vnic_cpu_add(h->cpu, &h->poller, name, host_poll);

	if (err)
		return err;
	if (h->mux) {
		h->mux->host[h->queue] = h;
		vnic_netdev_attach(h->dev, &mux_ops, h->mux);
		return 0;
	}
	vnic_netdev_attach(h->dev, &host_ops, h);
	return 0;
}

void vnic_tcpl_host_fini(struct vnic_tcpl_host *h)
{
	unsigned int i, j;

	if (h->dev && h->dev->host == &host_ops && h->dev->host_ctx == h)
		vnic_netdev_attach(h->dev, NULL, NULL);
	/* the first of a mux's hosts to go takes the netdev's callbacks away from all */
	if (h->dev && h->mux && h->dev->host == &mux_ops && h->dev->host_ctx == h->mux)
		vnic_netdev_attach(h->dev, NULL, NULL);
	if (h->mux && h->mux->host[h->queue] == h)
		h->mux->host[h->queue] = NULL;
	for (i = 0; i < HOST_MAX_QUEUES; i++)
		for (j = 0; j < h->txq[i].nstalled; j++)
			vnic_pkt_free(h->txq[i].stalled[j]);
	for (i = 0; i < HOST_MAX_QUEUES; i++)
		free(h->evq[i]);
	free(h->conns);
	free(h->keys);
	free(h->rec);
	memset(h, 0, sizeof(*h));
}

void vnic_tcpl_host_pair(struct vnic_tcpl_host *client, struct vnic_tcpl_host *server)
{
	unsigned int i;

	for (i = 0; i < client->nconns; i++) {
		vnic_tcpl_conn_init(client, &client->conns[i], i, client->dev->mac,
				    server->dev->mac, true);
		vnic_tcpl_conn_init(server, &server->conns[i], i, server->dev->mac,
				    client->dev->mac, false);
	}
	for (i = 0; i < client->nconns; i++) {
		vnic_tcpl_conn_key(&client->conns[i], &server->keys[i]);
		vnic_tcpl_conn_key(&server->conns[i], &client->keys[i]);
	}
}

bool vnic_tcpl_host_quiet(const struct vnic_tcpl_host *h)
{
	return atomic_load_explicit(&((struct vnic_tcpl_host *)h)->quiet, memory_order_acquire);
}

void vnic_tcpl_host_results(const struct vnic_tcpl_host *h, struct vnic_work_results *r)
{
	const struct host_stats *s = &h->st;
	const struct host_rx_stats *x = &h->rx;

	r->bytes += vnic_ctr_read(&s->delivered);
	r->tx_pkts += vnic_ctr_read(&s->tx_pkts);
	r->tx_segs += vnic_ctr_read(&s->tx_segs);
	r->tx_bytes += vnic_ctr_read(&s->tx_bytes);
	r->rx_pkts += vnic_ctr_read(&x->pkts);
	r->rx_segs += vnic_ctr_read(&x->segs);
	r->tsq_throttled += vnic_ctr_read(&s->tsq_throttled);
	r->err.payload += vnic_ctr_read(&x->payload);
	r->err.bad_csum += vnic_ctr_read(&x->bad_csum);
	r->err.bad_hdr += vnic_ctr_read(&x->bad_hdr);
	r->err.no_conn += vnic_ctr_read(&x->no_conn);
	r->err.rx_overflow += vnic_ctr_read(&x->overflow);
	r->err.lost += vnic_ctr_read(&s->lost);
	r->err.ooo += vnic_ctr_read(&s->ooo);
	r->err.ooo_dropped += vnic_ctr_read(&s->ooo_dropped);
	r->err.dup += vnic_ctr_read(&s->dup);
	r->err.retransmits += vnic_ctr_read(&s->retransmits);
	r->err.fast_retransmits += vnic_ctr_read(&s->fast_retransmits);
	r->err.sack_recovered += vnic_ctr_read(&s->sack_recovered);
	r->err.probes += vnic_ctr_read(&s->probes);
	r->err.spurious += vnic_ctr_read(&s->spurious);
	r->err.timeouts += vnic_ctr_read(&s->timeouts);
	r->err.tx_dropped += vnic_ctr_read(&s->tx_dropped);
	r->err.tx_busy += vnic_ctr_read(&s->tx_busy);
	r->err.tx_nobuf += vnic_ctr_read(&s->tx_nobuf);
	if (vnic_ctr_read(&s->tsq_max) > r->tsq_max)
		r->tsq_max = vnic_ctr_read(&s->tsq_max);
}
