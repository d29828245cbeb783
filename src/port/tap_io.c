// SPDX-License-Identifier: MIT
/*
 * The TAP port's datapath (contract in port.h): reading is xmit, writing is
 * delivery.
 *
 * Per frame read: one readv (vnet header + frame straight into a pool
 * packet), the header check and conversion, one parse, one RSS hash (with
 * more than one tx queue), one xmit. Per frame written: one writev and a
 * free. No allocation or lock; the syscall per frame is the floor of the
 * TAP interface (docs/BENCHMARKS.md, "Reference figures": batching reads
 * until EAGAIN gained nothing measurable, with TSO about two frames come per
 * burst, so a burst is "until EAGAIN or batch"). Lone frames
 * (request/response) skip the EAGAIN read: expect_lone().
 *
 * xmit_more: each tx queue's last packet is held until the next packet for
 * that queue is read (then the held one goes with xmit_more) or the burst
 * ends (then it goes without: the doorbell). The cost is that a packet
 * waits for one more readv before it is handed over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tap_int.h"

/* The mirror sees whole frames: a fraglist aggregate is made whole for it first. */
static void mirror_frags(struct vnic_tap *tap, vnic_tap_mirror_fn fn, const struct vnic_pkt *pkt,
			 int dir)
{
	uint32_t off = vnic_pkt_linear_len(pkt);
	const struct vnic_cpu *self = vnic_cpu_self();
	const struct vnic_pkt *f;
	uint8_t *buf = NULL;
	unsigned int i;

	/* this cpu's buffer: a short search, only while mirroring (--pcap) */
	for (i = 0; i < tap->nmirror && !buf; i++)
		if (tap->mirror[i].cpu == self || tap->nmirror == 1)
			buf = tap->mirror[i].buf;
	if (pkt->len > VNIC_PKT_MAX_LEN || !buf)
		return;
	memcpy(buf, pkt->data, off);
	for (f = pkt->frags; f && off + f->len <= pkt->len; f = f->next) {
		memcpy(buf + off, f->data, f->len);
		off += f->len;
	}
	fn(atomic_load_explicit(&tap->mirror_ctx, memory_order_relaxed), buf, off, dir);
}

static void mirror(struct vnic_tap *tap, const struct vnic_pkt *pkt, int dir)
{
	vnic_tap_mirror_fn fn = atomic_load_explicit(&tap->mirror_fn, memory_order_acquire);

	if (vnic_likely(fn == NULL))
		return;
	if (pkt->frags)
		mirror_frags(tap, fn, pkt, dir);
	else
		fn(atomic_load_explicit(&tap->mirror_ctx, memory_order_relaxed), pkt->data,
		   pkt->len, dir);
}

static void watch(struct tap_queue *tq, uint32_t events)
{
	if (tq->watching == events)
		return;
	/* Cannot fail for a registered fd but with ENOMEM; then keep the old state. */
	if (vnic_cpu_mod_fd(tq->cpu, tq->fd, events) == 0)
		tq->watching = events;
}

static bool queue_stopped(const struct vnic_tap *tap, unsigned int t)
{
	const struct vnic_netdev *dev = tap->dev;

	return dev->ops->tx_stopped && dev->ops->tx_stopped((struct vnic_netdev *)dev, t);
}

/* ---- transmit --------------------------------------------------------------- */

/* One packet to the NIC; false if refused (it is then kept as stalled[t]). */
static bool send_one(struct tap_queue *tq, unsigned int t, struct vnic_pkt *pkt, bool more)
{
	struct vnic_tap *tap = tq->tap;

	if (vnic_likely(vnic_netdev_xmit(tap->dev, t, pkt, more) == VNIC_TX_OK)) {
		if (more)
			vnic_ctr_inc(&tq->st.xmit_more);
		return true;
	}
	vnic_ctr_inc(&tap->tx[t].busy);
	tq->stalled[t] = pkt;
	tq->nstalled++;
	return false;
}

/* The packet before pkt for queue t goes now, with xmit_more; pkt waits. */
static void enqueue(struct tap_queue *tq, unsigned int t, struct vnic_pkt *pkt)
{
	struct vnic_pkt *prev = tq->held[t];

	tq->held[t] = pkt;
	tq->held_mask |= 1u << t;
	if (prev)
		send_one(tq, t, prev, true);
}

/* End of burst: each queue's last packet rings its doorbell. */
static void flush_held(struct tap_queue *tq)
{
	uint32_t m = tq->held_mask, keep = 0;

	for (; m; m &= m - 1) {
		unsigned int t = (unsigned int)__builtin_ctz(m);
		struct vnic_pkt *pkt = tq->held[t];

		if (tq->stalled[t]) {
			keep |= 1u << t; /* waits behind the refused one */
			continue;
		}
		tq->held[t] = NULL;
		send_one(tq, t, pkt, false);
	}
	tq->held_mask = keep;
}

/*
 * Backpressure ends: what was kept goes first, in order. Returns true when
 * nothing is kept any more.
 */
static bool resend_stalled(struct tap_queue *tq)
{
	struct vnic_tap *tap = tq->tap;
	unsigned int t;

	for (t = 0; t < VNIC_TAP_MAX_QUEUES && tq->nstalled; t++) {
		struct vnic_pkt *pkt = tq->stalled[t], *next;

		if (!pkt || queue_stopped(tap, t))
			continue;
		tq->stalled[t] = NULL;
		tq->nstalled--;
		next = tq->held[t];
		if (!send_one(tq, t, pkt, next != NULL) || !next)
			continue;
		tq->held[t] = NULL;
		tq->held_mask &= ~(1u << t);
		send_one(tq, t, next, false);
	}
	return tq->nstalled == 0;
}

/* The tx queue for a packet: the flow's (RSS), if it runs on our cpu. */
static unsigned int pick_queue(struct tap_queue *tq, const struct vnic_pkt *pkt)
{
	struct vnic_netdev *dev = tq->tap->dev;
	unsigned int t = vnic_netdev_pick_tx(dev, pkt->hash);

	if (vnic_likely(t < VNIC_TAP_MAX_QUEUES && vnic_netdev_tx_cpu(dev, t) == tq->cpu))
		return t;
	vnic_ctr_inc(&tq->st.queue_fallback);
	return tq->idx;
}

void vnic_tap_queue_drain(struct tap_queue *tq)
{
	unsigned int t;

	for (t = 0; t < VNIC_TAP_MAX_QUEUES; t++) {
		if (tq->stalled[t]) {
			vnic_pkt_free(tq->stalled[t]);
			tq->stalled[t] = NULL;
			vnic_ctr_inc(&tq->st.drop_stopped);
		}
		if (tq->held[t]) {
			vnic_pkt_free(tq->held[t]);
			tq->held[t] = NULL;
			vnic_ctr_inc(&tq->st.drop_stopped);
		}
	}
	tq->nstalled = 0;
	tq->held_mask = 0;
}

/* ---- read ------------------------------------------------------------------- */

enum read_result { READ_OK, READ_DRAINED, READ_NOBUF };

/* One frame from the TAP into a new packet: *out, or NULL if it was dropped. */
static enum read_result read_one(struct tap_queue *tq, struct vnic_pkt **out)
{
	struct vnic_tap *tap = tq->tap;
	struct vnic_vnet_hdr vh;
	enum vnic_tap_drop why;
	struct iovec iov[2];
	struct vnic_pkt *pkt;
	ssize_t n;

	*out = NULL;
	pkt = vnic_pkt_alloc(tq->pool);
	if (vnic_unlikely(!pkt))
		return READ_NOBUF;
	memset(&vh, 0, sizeof(vh));
	iov[0].iov_base = &vh;
	iov[0].iov_len = tap->hdr_len;
	iov[1].iov_base = pkt->data;
	iov[1].iov_len = vnic_pkt_tailroom(pkt);
	do {
		n = tap->hdr_len ? readv(tq->fd, iov, 2) : read(tq->fd, pkt->data, iov[1].iov_len);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		vnic_pkt_free(pkt);
		/* EBADFD/EIO: the queue was detached or the device is going away */
		if (errno != EAGAIN)
			vnic_ctr_inc(&tq->st.read_errors);
		return READ_DRAINED;
	}
	if (vnic_unlikely((size_t)n < tap->hdr_len + VNIC_ETH_HLEN)) {
		vnic_ctr_inc(&tq->st.drops[VNIC_TAP_DROP_RUNT]);
		goto drop;
	}
	pkt->len = (uint32_t)((size_t)n - tap->hdr_len);
	mirror(tap, pkt, VNIC_TAP_DIR_IN);
	/*
	 * Without a vnet header the frame is plain: an all-zero header says so.
	 * The hash only picks a tx queue: with one there is nothing to pick.
	 */
	why = vnic_vnet_parse(&vh, pkt, tap->dev->num_tx_queues > 1 ? tap->rss_key : NULL);
	if (vnic_unlikely(why != VNIC_TAP_DROP_NONE)) {
		vnic_ctr_inc(&tq->st.drops[why < VNIC_TAP_DROP_MAX ? why : 0]);
		goto drop;
	}
	vnic_ctr_inc(&tq->st.packets);
	vnic_ctr_add(&tq->st.bytes, pkt->len);
	if (pkt->gso_type)
		vnic_ctr_inc(&tq->st.gso_packets);
	if (pkt->ip_summed == VNIC_CSUM_PARTIAL)
		vnic_ctr_inc(&tq->st.csum_partial);
	else if (vh.flags & VNIC_VNET_F_NEEDS_CSUM)
		vnic_ctr_inc(&tq->st.csum_sw);
	*out = pkt;
	return READ_OK;

drop:
	vnic_pkt_free(pkt);
	return READ_OK;
}

/*
 * Whether this burst should stop after its first frame instead of reading on
 * to the EAGAIN that proves the queue empty: yes when the last burst was a
 * lone frame and the cpu has gone idle since (request/response traffic: the
 * next frame came after a pause). The cpu's fd look stands in for that
 * read, at no cost: the fds are level-triggered (vnic_cpu_add_fd), so a
 * frame left in the queue makes the next look (the epoll_wait the cpu
 * sleeps in, or a quiet busy turn's) schedule us again. A frame that came
 * before the cpu went idle says a stream: read to EAGAIN, as before.
 */
static bool expect_lone(const struct tap_queue *tq)
{
	return tq->lone && vnic_cpu_idles(tq->cpu) != tq->lone_idles;
}

/* Reads until EAGAIN, limit frames, or backpressure. Returns the frames read. */
static int read_burst(struct tap_queue *tq, int limit, bool *drained)
{
	bool lone = expect_lone(tq);
	int n = 0;

	*drained = false;
	while (n < limit) {
		struct vnic_pkt *pkt;
		enum read_result r = read_one(tq, &pkt);

		if (r == READ_DRAINED) {
			*drained = true;
			break;
		}
		if (r == READ_NOBUF) {
			/* the kernel keeps the frame; look again after a pause */
			vnic_ctr_inc(&tq->st.no_buffer);
			watch(tq, 0);
			vnic_poller_set_timer(&tq->poller, vnic_now_ns() + TAP_NOBUF_RETRY_NS);
			*drained = true;
			break;
		}
		n++;
		if (!pkt)
			continue;
		enqueue(tq, pick_queue(tq, pkt), pkt);
		if (tq->nstalled)
			break;
		if (lone) {
			vnic_ctr_inc(&tq->st.lone_bursts);
			*drained = true;
			break;
		}
	}
	flush_held(tq);
	vnic_ctr_inc(&tq->st.bursts);
	/*
	 * A burst that read nothing (a busy-polling cpu's look, or a stale
	 * readiness) says nothing of the traffic: the last frame's burst still
	 * tells whether the next is lone, and its reply needs no EAGAIN read.
	 */
	if (!n)
		return 0;
	tq->lone = n == 1 && *drained;
	if (tq->lone)
		tq->lone_idles = vnic_cpu_idles(tq->cpu);
	return n;
}

/* Backpressure starts: stop reading, unless the queue already took packets again. */
static void pause_reading(struct tap_queue *tq)
{
	unsigned int t;

	vnic_ctr_inc(&tq->st.stops);
	watch(tq, 0);
	/* a tx_wake that came inside xmit found nothing stalled yet */
	for (t = 0; t < VNIC_TAP_MAX_QUEUES; t++)
		if (tq->stalled[t] && !queue_stopped(tq->tap, t))
			vnic_poller_schedule(&tq->poller);
}

int vnic_tap_read_poll(struct vnic_poller *p, int budget)
{
	struct tap_queue *tq = vnic_container_of(p, struct tap_queue, poller);
	struct vnic_tap *tap = tq->tap;
	int state = atomic_load_explicit(&tap->state, memory_order_acquire);
	int limit = (int)tap->batch < budget ? (int)tap->batch : budget, n;
	bool drained;

	if (vnic_unlikely(state != TAP_RUNNING ||
			  tq->idx >= atomic_load_explicit(&tap->nactive, memory_order_relaxed))) {
		watch(tq, 0);
		vnic_tap_queue_drain(tq);
		return 0;
	}
	if (vnic_unlikely(tq->nstalled)) {
		if (!resend_stalled(tq))
			return 0; /* still stopped: tx_wake schedules us */
		vnic_ctr_inc(&tq->st.resumes);
	}
	if (vnic_unlikely(!tq->watching))
		watch(tq, EPOLLIN);
	n = read_burst(tq, limit, &drained);
	if (vnic_unlikely(tq->nstalled)) {
		pause_reading(tq);
		return n < budget ? n : budget - 1;
	}
	/* more may be waiting: stay scheduled rather than ask epoll */
	if (!drained)
		return budget;
	return n < budget ? n : budget - 1;
}

/* ---- host callbacks ------------------------------------------------------------ */

static void tap_tx_wake(void *ctx, unsigned int queue)
{
	struct vnic_tap *tap = ctx;
	unsigned int i;

	if (queue >= VNIC_TAP_MAX_QUEUES)
		return;
	vnic_ctr_inc(&tap->tx[queue].wakes);
	/* only readers on the queue's cpu send to it (pick_queue); another's state is not ours */
	for (i = 0; i < tap->nq; i++)
		if (tap->q[i].cpu == vnic_netdev_tx_cpu(tap->dev, queue) &&
		    tap->q[i].stalled[queue])
			vnic_poller_schedule(&tap->q[i].poller);
}

static void tap_tx_done(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes, int status)
{
	struct vnic_tap *tap = ctx;

	(void)cookie;
	(void)bytes;
	/* the kernel stopped charging the sender when we read the frame */
	if (queue >= VNIC_TAP_MAX_QUEUES)
		return;
	if (status == VNIC_TX_DONE_OK)
		vnic_ctr_inc(&tap->tx[queue].done);
	else
		vnic_ctr_inc(&tap->tx[queue].done_dropped);
}

/*
 * The frame's pieces after the vnet header: the packet, then a fraglist
 * aggregate's fragments. Returns the iovecs used, 0 if they do not add up
 * to len or do not fit.
 */
static int frame_iov(const struct vnic_pkt *pkt, struct iovec *iov, int max)
{
	const struct vnic_pkt *f;
	uint32_t sum = vnic_pkt_linear_len(pkt);
	int n = 1;

	iov[0].iov_base = pkt->data;
	iov[0].iov_len = sum;
	for (f = pkt->frags; f; f = f->next) {
		if (n == max)
			return 0;
		iov[n].iov_base = f->data;
		iov[n++].iov_len = f->len;
		sum += f->len;
	}
	return sum == pkt->len ? n : 0;
}

static void write_one(struct vnic_tap *tap, struct tap_out_stats *st, int fd, struct vnic_pkt *pkt)
{
	struct vnic_vnet_hdr vh;
	struct iovec iov[2 + VNIC_GRO_MAX_FRAGS];
	ssize_t n;
	int niov;

	memset(&vh, 0, sizeof(vh));
	if (tap->hdr_len && vnic_unlikely(vnic_vnet_build(pkt, &vh))) {
		vnic_ctr_inc(&st->drop_bad_meta);
		return;
	}
	niov = frame_iov(pkt, &iov[1], 1 + VNIC_GRO_MAX_FRAGS);
	if (vnic_unlikely(!niov)) {
		vnic_ctr_inc(&st->drop_bad_meta);
		return;
	}
	mirror(tap, pkt, VNIC_TAP_DIR_OUT);
	iov[0].iov_base = &vh;
	iov[0].iov_len = tap->hdr_len;
	do {
		n = writev(fd, iov, 1 + niov);
	} while (n < 0 && errno == EINTR);
	if (vnic_unlikely(n < 0)) {
		/* the kernel's own receive would have dropped it too */
		if (errno == EAGAIN)
			vnic_ctr_inc(&st->drop_again);
		else if (errno == EIO)
			vnic_ctr_inc(&st->drop_down);
		else
			vnic_ctr_inc(&st->drop_error);
		return;
	}
	if (vnic_unlikely((size_t)n != tap->hdr_len + pkt->len)) {
		vnic_ctr_inc(&st->short_writes);
		return;
	}
	vnic_ctr_inc(&st->packets);
	vnic_ctr_add(&st->bytes, pkt->len);
	if (vh.gso_type)
		vnic_ctr_inc(&st->gso_packets);
	if (vh.flags & VNIC_VNET_F_NEEDS_CSUM)
		vnic_ctr_inc(&st->csum_partial);
	else if (vh.flags & VNIC_VNET_F_DATA_VALID)
		vnic_ctr_inc(&st->data_valid);
}

static void tap_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct vnic_tap *tap = ctx;
	struct tap_out_stats *st = &tap->out[queue % VNIC_TAP_MAX_QUEUES];
	/*
	 * Acquire, and first: pairs with the release of RUNNING in
	 * vnic_tap_start, so the queue count and fds set before it are the
	 * ones read here, on the driver's cpu.
	 */
	bool stopped = atomic_load_explicit(&tap->state, memory_order_acquire) == TAP_STOPPED;
	unsigned int nact = atomic_load_explicit(&tap->nactive, memory_order_relaxed);
	int fd = tap->q[queue % (nact ? nact : 1)].fd;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (vnic_unlikely(stopped))
			vnic_ctr_inc(&st->drop_stopped);
		else
			write_one(tap, st, fd, pkts[i]);
		/* the driver's packet, freed on its rx cpu as its pools want */
		vnic_pkt_free(pkts[i]);
	}
}

const struct vnic_host_ops vnic_tap_host_ops = {
	.rx = tap_rx,
	.tx_done = tap_tx_done,
	.tx_wake = tap_tx_wake,
	/* write_one takes a fraglist aggregate with one writev */
	.features = VNIC_HOST_F_FRAGLIST,
};
