// SPDX-License-Identifier: MIT
/*
 * The TAP port: setup, the tun ioctls, counters (contract in port.h; the
 * datapath is in tap_io.c, the vnet header in tap_vnet.c).
 *
 * ioctls used (docs/MECHANISMS.md section 5): TUNSETIFF with IFF_TAP | IFF_NO_PI
 * | IFF_VNET_HDR (| IFF_MULTI_QUEUE), IFF_TUN_EXCL on the first queue so an
 * existing interface is never taken over; TUNSETVNETHDRSZ 12;
 * TUNSETVNETLE on big-endian hosts (the header is little-endian then);
 * SIOCSIFHWADDR on the tun fd; TUNSETOFFLOAD; TUNSETQUEUE to detach queues
 * the netdev did not grant. The MTU goes through an ordinary socket
 * (SIOCSIFMTU), in the caller's network namespace.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if_arp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tap_int.h"

#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

static_assert(IFF_TAP == 0x0002 && IFF_VNET_HDR == 0x4000, "uapi if_tun.h");

/* What an open or ioctl errno means for the caller (port.h). */
static int map_err(int err)
{
	switch (err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return -ENOENT; /* no tun driver, or no /dev/net/tun in this mount namespace */
	case EACCES:
	case EPERM:
		return -EPERM; /* needs root or CAP_NET_ADMIN */
	default:
		return -err;
	}
}

static int open_queue(struct vnic_tap *tap, unsigned int i, const char *name, bool vnet)
{
	struct ifreq ifr;
	int fd, sz = VNIC_VNET_HDR_LEN, err;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return map_err(errno);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (vnet)
		ifr.ifr_flags |= IFF_VNET_HDR;
	if (tap->nq > 1)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	/* the first queue creates the interface and must not attach to another's */
	if (i == 0)
		ifr.ifr_flags |= IFF_TUN_EXCL;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		err = map_err(errno);
		goto err_close;
	}
	if (i == 0)
		snprintf(tap->ifname, sizeof(tap->ifname), "%s", ifr.ifr_name);
	if (vnet && ioctl(fd, TUNSETVNETHDRSZ, &sz) < 0) {
		err = -errno;
		goto err_close;
	}
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	if (vnet) {
		int le = 1;

		if (ioctl(fd, TUNSETVNETLE, &le) < 0) {
			err = -errno;
			goto err_close;
		}
	}
#endif
	tap->q[i].fd = fd;
	return 0;

err_close:
	close(fd);
	return err;
}

/* The kernel's view of the NIC's MAC: the netdev's own, if it has one. */
static int set_mac(struct vnic_tap *tap)
{
	static const uint8_t zero[6];
	struct ifreq ifr;

	if (!memcmp(tap->dev->mac, zero, sizeof(zero)))
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap->ifname);
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, tap->dev->mac, 6);
	return ioctl(tap->q[0].fd, SIOCSIFHWADDR, &ifr) < 0 ? -errno : 0;
}

static int set_mtu(struct vnic_tap *tap, uint32_t mtu)
{
	struct ifreq ifr;
	int s, err = 0;

	if (!mtu || mtu == tap->mtu)
		return 0;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap->ifname);
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr) < 0)
		err = -errno;
	else
		__atomic_store_n(&tap->mtu, mtu, __ATOMIC_RELAXED); /* counters read it anywhere */
	close(s);
	return err;
}

/* An MTU frame with a VLAN tag fits a packet of p. */
static bool pool_fits(const struct vnic_netdev *dev, const struct vnic_pkt_pool *p)
{
	return p->count && p->headroom <= p->buf_size &&
	       p->buf_size - p->headroom >= dev->mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
}

static struct vnic_pkt_pool *queue_pool(struct vnic_pkt_pool *pool,
					const struct vnic_tap_config *cfg, unsigned int q)
{
	return cfg->pools[q] ? cfg->pools[q] : pool;
}

static int check_config(struct vnic_netdev *dev, struct vnic_pkt_pool *pool,
			const struct vnic_tap_config *cfg, unsigned int *nq)
{
	if (!dev || !dev->ops || !dev->ops->xmit || !pool || !pool->count)
		return -EINVAL;
	if (dev->host)
		return -EINVAL;
	*nq = cfg->queues ? cfg->queues : dev->num_tx_queues;
	if (!*nq || *nq > VNIC_TAP_MAX_QUEUES || *nq > dev->num_tx_queues)
		return -EINVAL;
	if (cfg->ifname && strlen(cfg->ifname) >= IFNAMSIZ)
		return -EINVAL;
	if (!pool_fits(dev, pool))
		return -EINVAL;
	for (unsigned int q = 0; q < *nq; q++) {
		struct vnic_pkt_pool *p = queue_pool(pool, cfg, q);

		if (!vnic_netdev_tx_cpu(dev, q) || !pool_fits(dev, p))
			return -EINVAL;
		/* a pool is read into and freed into by xmit: one thread */
		for (unsigned int o = 0; o < q; o++)
			if (queue_pool(pool, cfg, o) == p &&
			    vnic_netdev_tx_cpu(dev, o) != vnic_netdev_tx_cpu(dev, q))
				return -EINVAL;
	}
	return 0;
}

/* A buffer per cpu that delivers (rx), for the mirror of a fraglist aggregate. */
static int mirror_bufs(struct vnic_tap *tap)
{
	for (unsigned int r = 0; r < VNIC_TAP_MAX_QUEUES; r++) {
		const struct vnic_cpu *c = tap->dev->rx_cpu[r];
		unsigned int i;

		if (!c)
			continue;
		for (i = 0; i < tap->nmirror && tap->mirror[i].cpu != c; i++)
			;
		if (i < tap->nmirror)
			continue;
		tap->mirror[i].buf = malloc(VNIC_PKT_MAX_LEN);
		if (!tap->mirror[i].buf)
			return -ENOMEM;
		tap->mirror[i].cpu = c;
		tap->nmirror++;
	}
	return 0;
}

static void mirror_bufs_free(struct vnic_tap *tap)
{
	for (unsigned int i = 0; i < tap->nmirror; i++)
		free(tap->mirror[i].buf);
	tap->nmirror = 0;
}

static int add_pollers(struct vnic_tap *tap)
{
	unsigned int i;
	int err;

	for (i = 0; i < tap->nq; i++) {
		struct tap_queue *tq = &tap->q[i];

		snprintf(tq->name, sizeof(tq->name), "%s-q%u", tap->ifname,
			 i % VNIC_TAP_MAX_QUEUES);
		err = vnic_cpu_add(tq->cpu, &tq->poller, tq->name, vnic_tap_read_poll);
		if (err)
			return err;
		/* registered, not watched: reading starts with vnic_tap_start */
		err = vnic_cpu_add_fd(tq->cpu, tq->fd, 0, &tq->poller);
		if (err)
			return err;
		/* a run with nothing to read is one readv to EAGAIN, and returns 0 */
		err = vnic_cpu_fd_look_by_run(tq->cpu, tq->fd);
		if (err)
			return err;
	}
	return 0;
}

static void close_queues(struct vnic_tap *tap)
{
	unsigned int i;

	for (i = 0; i < VNIC_TAP_MAX_QUEUES; i++) {
		if (tap->q[i].fd >= 0)
			close(tap->q[i].fd);
		tap->q[i].fd = -1;
	}
}

int vnic_tap_create(struct vnic_tap **out, struct vnic_netdev *dev, struct vnic_pkt_pool *pool,
		    const struct vnic_tap_config *cfgp)
{
	struct vnic_tap_config cfg = {0};
	struct vnic_tap *tap;
	unsigned int i, nq;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (cfgp)
		cfg = *cfgp;
	err = check_config(dev, pool, &cfg, &nq);
	if (err)
		return err;
	tap = aligned_alloc(VNIC_CACHELINE, sizeof(*tap));
	if (!tap)
		return -ENOMEM;
	memset(tap, 0, sizeof(*tap));
	tap->dev = dev;
	if (mirror_bufs(tap)) {
		mirror_bufs_free(tap);
		free(tap);
		return -ENOMEM;
	}
	tap->pool = pool;
	tap->rss_key = dev->rss_key ? dev->rss_key : vnic_rss_default_key;
	tap->batch = cfg.batch ? cfg.batch : VNIC_TAP_DEFAULT_BATCH;
	tap->hdr_len = cfg.no_vnet_hdr ? 0 : VNIC_VNET_HDR_LEN;
	tap->big_bufs = true;
	for (i = 0; i < nq; i++) {
		const struct vnic_pkt_pool *p = queue_pool(pool, &cfg, i);

		/* the offloads are the TAP's, not a queue's: every pool takes a superpacket */
		tap->big_bufs &= p->buf_size - p->headroom >= VNIC_PKT_MAX_LEN;
	}
	tap->nq = nq;
	tap->mtu = 1500; /* what a new TAP starts with */
	atomic_init(&tap->state, TAP_CREATED);
	atomic_init(&tap->nactive, nq);
	atomic_init(&tap->offloads, 0);
	atomic_init(&tap->mirror_fn, NULL);
	atomic_init(&tap->mirror_ctx, NULL);
	for (i = 0; i < VNIC_TAP_MAX_QUEUES; i++) {
		tap->q[i].fd = -1;
		tap->q[i].tap = tap;
		tap->q[i].idx = i;
		/* beyond nq: never read, but tap_tx_wake compares them */
		tap->q[i].cpu = vnic_netdev_tx_cpu(dev, i < nq ? i : 0);
		tap->q[i].pool = queue_pool(pool, &cfg, i < nq ? i : 0);
	}

	for (i = 0; i < nq; i++) {
		err = open_queue(tap, i, i ? tap->ifname : (cfg.ifname ? cfg.ifname : ""),
				 !cfg.no_vnet_hdr);
		if (err)
			goto err_close;
	}
	err = set_mac(tap);
	if (err)
		goto err_close;
	err = set_mtu(tap, dev->mtu);
	if (err)
		goto err_close;
	err = add_pollers(tap);
	if (err)
		goto err_close;
	vnic_netdev_attach(dev, &vnic_tap_host_ops, tap);
	*out = tap;
	return 0;

err_close:
	/* pollers added stay registered (core has no removal) but are never scheduled */
	close_queues(tap);
	mirror_bufs_free(tap);
	free(tap);
	return err;
}

/* TUNSETOFFLOAD; a kernel that does not know USO refuses the whole set (EINVAL). */
static int set_offloads(struct vnic_tap *tap)
{
	/*
	 * The kernel hands over GSO frames shorter than the TAP's gso_max_size
	 * (64 KiB, and frame length includes Ethernet: gso_features_check), so
	 * a netdev taking 64 KiB frames takes all of them. A smaller netdev
	 * limit would need IFLA_GSO_MAX_SIZE by rtnetlink: not done, no GSO.
	 */
	bool big = tap->big_bufs &&
		   (!tap->dev->gso_max_size || tap->dev->gso_max_size >= TAP_KERNEL_GSO_MAX);
	unsigned int f = tap->hdr_len ? vnic_tap_offloads(tap->dev->features, big) : 0;

	if (!tap->hdr_len)
		return 0; /* no header to carry them: the kernel segments and sums */
	if (ioctl(tap->q[0].fd, TUNSETOFFLOAD, (unsigned long)f) < 0) {
		if (errno != EINVAL || !(f & (TUN_F_USO4 | TUN_F_USO6)))
			return -errno;
		f &= ~(unsigned int)(TUN_F_USO4 | TUN_F_USO6);
		if (ioctl(tap->q[0].fd, TUNSETOFFLOAD, (unsigned long)f) < 0)
			return -errno;
	}
	atomic_store_explicit(&tap->offloads, f, memory_order_relaxed);
	return 0;
}

/* Queues beyond the netdev's granted tx queues get no traffic from the kernel. */
static void set_active_queues(struct vnic_tap *tap)
{
	unsigned int nact = tap->nq, i;

	if (tap->dev->num_tx_queues && tap->dev->num_tx_queues < nact)
		nact = tap->dev->num_tx_queues;
	for (i = 1; i < tap->nq; i++) {
		struct tap_queue *tq = &tap->q[i];
		bool detach = i >= nact;
		struct ifreq ifr;

		if (detach == tq->detached)
			continue;
		memset(&ifr, 0, sizeof(ifr));
		ifr.ifr_flags = detach ? IFF_DETACH_QUEUE : IFF_ATTACH_QUEUE;
		if (ioctl(tq->fd, TUNSETQUEUE, &ifr) == 0)
			tq->detached = detach;
	}
	atomic_store_explicit(&tap->nactive, nact, memory_order_relaxed);
}

int vnic_tap_start(struct vnic_tap *tap)
{
	unsigned int i;
	int err;

	if (!tap)
		return -EINVAL;
	err = set_offloads(tap);
	if (err)
		return err;
	/* best effort: the interface may live in another namespace by now */
	set_mtu(tap, tap->dev->mtu);
	set_active_queues(tap);
	/* the pollers watch their fds themselves, on their own thread */
	atomic_store_explicit(&tap->state, TAP_RUNNING, memory_order_release);
	for (i = 0; i < tap->nq; i++)
		vnic_poller_schedule(&tap->q[i].poller);
	return 0;
}

void vnic_tap_stop(struct vnic_tap *tap)
{
	unsigned int i;

	if (!tap)
		return;
	atomic_store_explicit(&tap->state, TAP_STOPPED, memory_order_release);
	for (i = 0; i < tap->nq; i++)
		vnic_poller_schedule(&tap->q[i].poller);
}

void vnic_tap_destroy(struct vnic_tap *tap)
{
	unsigned int i;

	if (!tap)
		return;
	atomic_store_explicit(&tap->state, TAP_STOPPED, memory_order_release);
	/* the cpus are stopped: their state is ours to touch */
	for (i = 0; i < tap->nq; i++)
		vnic_tap_queue_drain(&tap->q[i]);
	if (tap->dev->host == &vnic_tap_host_ops && tap->dev->host_ctx == tap)
		vnic_netdev_attach(tap->dev, NULL, NULL);
	close_queues(tap);
	mirror_bufs_free(tap);
	free(tap);
}

const char *vnic_tap_ifname(const struct vnic_tap *tap)
{
	return tap->ifname;
}

int vnic_tap_fd(const struct vnic_tap *tap, unsigned int q)
{
	return q < tap->nq ? tap->q[q].fd : -1;
}

void vnic_tap_set_mirror(struct vnic_tap *tap, vnic_tap_mirror_fn fn, void *ctx)
{
	/* off first, so a reader never pairs the new ctx with the old fn */
	atomic_store_explicit(&tap->mirror_fn, NULL, memory_order_release);
	if (!fn)
		return;
	atomic_store_explicit(&tap->mirror_ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&tap->mirror_fn, fn, memory_order_release);
}

/* ---- counters ------------------------------------------------------------------ */

struct ctr_sink {
	struct vnic_counter *out;
	unsigned int max, n;
};

__attribute__((format(printf, 3, 4))) static void put(struct ctr_sink *s, uint64_t v,
						      const char *fmt, ...)
{
	va_list ap;

	if (s->n < s->max) {
		va_start(ap, fmt);
		vsnprintf(s->out[s->n].name, sizeof(s->out[s->n].name), fmt, ap);
		va_end(ap);
		s->out[s->n].value = v;
	}
	s->n++;
}

static void in_counters(struct ctr_sink *s, const struct tap_queue *tq)
{
	const struct tap_in_stats *st = &tq->st;
	unsigned int q = tq->idx, r;

	put(s, vnic_ctr_read(&st->packets), "in%u_packets", q);
	put(s, vnic_ctr_read(&st->bytes), "in%u_bytes", q);
	put(s, vnic_ctr_read(&st->gso_packets), "in%u_gso_packets", q);
	put(s, vnic_ctr_read(&st->csum_partial), "in%u_csum_partial", q);
	put(s, vnic_ctr_read(&st->csum_sw), "in%u_csum_sw", q);
	put(s, vnic_ctr_read(&st->bursts), "in%u_bursts", q);
	put(s, vnic_ctr_read(&st->lone_bursts), "in%u_lone_bursts", q);
	put(s, vnic_ctr_read(&st->xmit_more), "in%u_xmit_more", q);
	put(s, vnic_ctr_read(&st->stops), "in%u_stops", q);
	put(s, vnic_ctr_read(&st->resumes), "in%u_resumes", q);
	put(s, vnic_ctr_read(&st->read_errors), "in%u_read_errors", q);
	put(s, vnic_ctr_read(&st->no_buffer), "in%u_no_buffer", q);
	put(s, vnic_ctr_read(&st->queue_fallback), "in%u_queue_fallback", q);
	put(s, vnic_ctr_read(&st->drop_stopped), "in%u_drop_stopped", q);
	for (r = 1; r < VNIC_TAP_DROP_MAX; r++)
		put(s, vnic_ctr_read(&st->drops[r]), "in%u_drop_%s", q, vnic_tap_drop_name(r));
}

unsigned int vnic_tap_counters(const struct vnic_tap *tap, struct vnic_counter *out,
			       unsigned int max)
{
	struct ctr_sink s = {.out = out, .max = max};
	unsigned int i, ntx = tap->dev->num_tx_queues, nrx = tap->dev->num_rx_queues;

	put(&s, tap->nq, "queues");
	put(&s, atomic_load_explicit(&tap->nactive, memory_order_relaxed), "active_queues");
	put(&s, atomic_load_explicit(&tap->offloads, memory_order_relaxed), "offloads");
	put(&s, __atomic_load_n(&tap->mtu, __ATOMIC_RELAXED), "mtu");
	put(&s, tap->hdr_len != 0, "vnet_hdr");
	for (i = 0; i < tap->nq; i++)
		in_counters(&s, &tap->q[i]);
	for (i = 0; i < ntx && i < VNIC_TAP_MAX_QUEUES; i++) {
		const struct tap_tx_stats *st = &tap->tx[i];

		put(&s, vnic_ctr_read(&st->busy), "tx%u_busy", i);
		put(&s, vnic_ctr_read(&st->wakes), "tx%u_wakes", i);
		put(&s, vnic_ctr_read(&st->done), "tx%u_done", i);
		put(&s, vnic_ctr_read(&st->done_dropped), "tx%u_done_dropped", i);
	}
	for (i = 0; i < nrx && i < VNIC_TAP_MAX_QUEUES; i++) {
		const struct tap_out_stats *st = &tap->out[i];

		put(&s, vnic_ctr_read(&st->packets), "out%u_packets", i);
		put(&s, vnic_ctr_read(&st->bytes), "out%u_bytes", i);
		put(&s, vnic_ctr_read(&st->gso_packets), "out%u_gso_packets", i);
		put(&s, vnic_ctr_read(&st->csum_partial), "out%u_csum_partial", i);
		put(&s, vnic_ctr_read(&st->data_valid), "out%u_data_valid", i);
		put(&s, vnic_ctr_read(&st->drop_again), "out%u_drop_again", i);
		put(&s, vnic_ctr_read(&st->drop_down), "out%u_drop_down", i);
		put(&s, vnic_ctr_read(&st->drop_error), "out%u_drop_error", i);
		put(&s, vnic_ctr_read(&st->drop_bad_meta), "out%u_drop_bad_meta", i);
		put(&s, vnic_ctr_read(&st->drop_stopped), "out%u_drop_stopped", i);
		put(&s, vnic_ctr_read(&st->short_writes), "out%u_short_writes", i);
	}
	return s.n;
}
