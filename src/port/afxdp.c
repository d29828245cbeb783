// SPDX-License-Identifier: MIT
/*
 * A struct vnic_wire on a real interface through one AF_XDP socket (contract
 * in port.h), built on libxdp's xsk API: libxdp loads its default program,
 * which redirects what arrives on the bound queue to the socket.
 *
 * Memory: one UMEM of AFX_FRAMES frames of AFX_FRAME bytes (aligned mode:
 * the kernel names a frame by its offset in the UMEM). The first half is
 * the receive pool, cycling between us and the kernel through the FILL ring
 * (empty frames we give) and the RX ring (filled frames it gives back); the
 * second half is the transmit pool, cycling through the TX ring (frames to
 * send) and the COMPLETION ring (frames sent, ours again). The halves never
 * mix, so the receive side (the receiving device's cpu) and the transmit
 * side (the sending device's cpu) each own two rings and their frames: one
 * producer and one consumer per ring, no lock.
 *
 * The four rings are shared with the kernel: a producer index, a consumer
 * index and the entries. libxdp's inline helpers are the only accessors:
 * a consumer loads the producer index with acquire before it reads the
 * entries (xsk_ring_cons__peek), and stores its consumer index with release
 * after it read them (xsk_ring_cons__release); a producer writes the entries
 * and then stores its producer index with release (xsk_ring_prod__submit),
 * and loads the consumer index with acquire before it reuses an entry
 * (xsk_prod_nb_free). The kernel pairs them the same way (net/xdp/
 * xsk_queue.h, Documentation/networking/af_xdp.rst, "Rings"). Each use
 * below says which of these it relies on.
 *
 * rx: rx_peek walks the RX ring and hands out packets wrapping the frames
 * (no copy: the device copies each into a posted buffer anyway); rx_release
 * gives their frames back to the FILL ring. Every descriptor is checked
 * before use (desc_check): the frame it names must be a receive frame, the
 * bytes inside that one frame. Nothing crossing is trusted.
 *
 * tx: tx_reserve hands out free transmit frames as packets; tx_commit puts
 * the good ones on the TX ring and, when the kernel asks for it
 * (XDP_USE_NEED_WAKEUP: always in copy mode), kicks it with sendto. The
 * COMPLETION ring is reaped in both to recycle frames. A full TX ring drops
 * and counts, never blocks.
 *
 * Notification: fd_irq.h, shared with afpacket.c. The xsk fd is on the
 * receiving device's cpu, edge-triggered (the kernel wakes the socket for
 * every batch it puts on the RX ring); an edge while the rx irq is armed
 * disarms it and calls wire->notify, and pending() looks at the RX ring
 * for what landed while it was masked. A cpu that busy-polls loads the RX
 * ring's producer index on every turn of its spin instead of asking epoll
 * (the kernel publishes it before it wakes the socket): no syscall a look,
 * as for AF_PACKET's status words (vnic_fd_irq_spin_init).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "afxdp_int.h"
#include "fd_irq.h"
#include "port.h"

/* Linux 6.17's; older uapi headers have not got it */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif

enum {
	/* where the kernel puts a received frame in its UMEM frame (aligned mode) */
	AFX_RX_HEADROOM = XDP_PACKET_HEADROOM,
	AFX_MAX_FRAME = AFX_FRAME - AFX_RX_HEADROOM,
	AFX_MIN_MTU = 68,
	AFX_MAX_MTU = AFX_MAX_FRAME - VNIC_ETH_HLEN - VNIC_VLAN_HLEN,
	AFX_RX_SHELLS = 64,		  /* frames one peek may return */
	AFX_TX_SLOTS = VNIC_GSO_MAX_SEGS, /* a device reserves up to a superpacket's segments */
	/*
	 * Kicks per commit at most. In copy mode one sendto sends at most the
	 * socket's budget (AFX_KERNEL_TX_BATCH unless XDP_MAX_TX_SKB_BUDGET
	 * took: then the whole ring) and says EAGAIN when more are left, so
	 * on an older kernel a commit of a superpacket's segments takes
	 * several; a kick that sends nothing ends the loop whatever this says.
	 */
	AFX_KICKS_MAX = AFX_TX_RING / AFX_KERNEL_TX_BATCH + 2,
	AFX_BUSY_WAITS = 100, /* setup: 2 s for a queue to be let go */
	AFX_BUSY_WAIT_NS = 20000000,
};

_Static_assert(AFX_MAX_MTU >= 1500, "a UMEM frame must hold an Ethernet MTU frame");
_Static_assert((int)AFX_MAX_MTU == (int)VNIC_AFXDP_MAX_MTU &&
		       (int)AFX_FRAME == (int)VNIC_AFXDP_FRAME,
	       "port.h says what a UMEM frame holds");
_Static_assert((AFX_FRAME & (AFX_FRAME - 1)) == 0, "aligned mode: a power-of-two frame");

/* Why a received descriptor is not handed to the device. */
enum afx_take {
	TAKE_OK,
	TAKE_BAD_DESC, /* not inside one receive frame, or a multi-buffer part */
	TAKE_RUNT,     /* shorter than an Ethernet header */
	TAKE_TOO_BIG,  /* longer than the wire's frame */
};

struct afx_rx_stats {
	uint64_t frames, bytes, drop_bad_desc, drop_runt, drop_too_big, fill_kicks, fill_short,
		notifies;
};

struct afx_tx_stats {
	uint64_t frames, bytes, drop_mtu, drop_ring_full, full, kicks, kick_errors, stalls,
		completions, bad_completions;
};

struct afx_wire {
	struct vnic_wire wire;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	uint8_t *area;
	int fd;
	int netns_fd; /* a dup of the config's, or -1: detach runs there too */
	bool native;  /* XDP_FLAGS_DRV_MODE, else generic (SKB) */
	bool zerocopy;
	uint32_t tx_budget; /* frames one sendto sends (copy mode) */
	char note[192];	    /* why not native, when not */
	char ifname[IFNAMSIZ];
	char name[IFNAMSIZ + 8];

	/* rx: the receiving device's cpu only */
	struct vnic_fd_irq irq vnic_cacheline_aligned; /* the rx "interrupt" (fd_irq.h) */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fill;
	unsigned int peeked; /* RX entries handed out, not yet released */
	unsigned int fill_n; /* frames waiting for a FILL slot */
	struct afx_rx_stats rxs;
	uint64_t fill_stash[AFX_RX_FRAMES];
	struct vnic_pkt shells[AFX_RX_SHELLS];

	/* tx: the transmitting device's cpu only */
	struct xsk_ring_prod tx vnic_cacheline_aligned;
	struct xsk_ring_cons comp;
	unsigned int reserved;
	unsigned int tx_nfree;
	struct afx_tx_stats txs;
	uint64_t tx_free[AFX_TX_FRAMES]; /* frame offsets, a stack */
	uint64_t tx_addr[AFX_TX_SLOTS];	 /* the frame under each reserved slot */
	struct vnic_pkt slots[AFX_TX_SLOTS];
};

static struct afx_wire *to_afx(struct vnic_wire *w)
{
	return vnic_container_of(w, struct afx_wire, wire);
}

/* A packet over UMEM bytes: no pool, so never reset or freed by anyone. */
static void shell_wrap(struct vnic_pkt *p, uint8_t *frame, uint8_t *data, uint32_t len)
{
	memset(p, 0, sizeof(*p));
	p->head = frame;
	p->data = data;
	p->len = len;
	p->buf_size = AFX_FRAME;
}

/* ---- rx ------------------------------------------------------------------------ */

/*
 * The kernel's descriptor, checked against what we gave it: a frame of the
 * receive half, every byte inside that one frame, no continuation flag (we
 * never bind with XDP_USE_SG). The bytes are then ours to read whatever
 * else the kernel got wrong.
 */
static enum afx_take desc_check(const struct afx_wire *x, const struct xdp_desc *d)
{
	uint64_t off = d->addr & (AFX_FRAME - 1);

	if (vnic_unlikely(d->addr >= AFX_RX_BASE + (uint64_t)AFX_RX_FRAMES * AFX_FRAME ||
			  off + d->len > AFX_FRAME || d->options))
		return TAKE_BAD_DESC;
	if (vnic_unlikely(d->len < VNIC_ETH_HLEN))
		return TAKE_RUNT;
	if (vnic_unlikely(d->len > x->wire.frame_size))
		return TAKE_TOO_BIG;
	return TAKE_OK;
}

/* A frame to give back to the kernel, at the next fill_flush. */
static void fill_stash(struct afx_wire *x, uint64_t addr)
{
	/* more frames than we own would be a duplicate: the stash stays in bounds */
	if (vnic_likely(x->fill_n < AFX_RX_FRAMES))
		x->fill_stash[x->fill_n++] = addr & ~(uint64_t)(AFX_FRAME - 1);
}

/*
 * Stashed frames onto the FILL ring, as many as it has room for (all of
 * them, see AFX_FILL_RING). Ordering: xsk_prod_nb_free loads the kernel's
 * consumer index with acquire, so the slots it reports free were read by the
 * kernel before we overwrite them; xsk_ring_prod__submit stores our producer
 * index with release, after the addresses, and after every read the device
 * made of those frames (its copies happen before rx_release), so the kernel
 * sees the addresses and refills the frames only once we are done.
 */
static void fill_flush(struct afx_wire *x)
{
	uint32_t idx, room = xsk_prod_nb_free(&x->fill, x->fill_n), n = x->fill_n;

	if (!n)
		return;
	if (room < n) {
		vnic_ctr_add(&x->rxs.fill_short, 1);
		n = room;
	}
	if (!n || xsk_ring_prod__reserve(&x->fill, n, &idx) != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fill, idx + i) = x->fill_stash[--x->fill_n];
	xsk_ring_prod__submit(&x->fill, n);
	/* a zero-copy driver that found the FILL ring empty sleeps until told */
	if (xsk_ring_prod__needs_wakeup(&x->fill)) {
		vnic_ctr_add(&x->rxs.fill_kicks, 1);
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
}

/* A descriptor the device never sees: counted once, its frame back to the kernel. */
static void rx_drop(struct afx_wire *x, const struct xdp_desc *d, enum afx_take why)
{
	if (why == TAKE_BAD_DESC) {
		vnic_ctr_add(&x->rxs.drop_bad_desc, 1);
		/* a frame outside the receive half is not ours to give back */
		if (d->addr >= (uint64_t)AFX_RX_FRAMES * AFX_FRAME)
			return;
	} else if (why == TAKE_RUNT) {
		vnic_ctr_add(&x->rxs.drop_runt, 1);
	} else {
		vnic_ctr_add(&x->rxs.drop_too_big, 1);
	}
	fill_stash(x, d->addr);
}

/*
 * Peeked entries not released are seen again by the next peek: the
 * consumer index was never stored, only libxdp's cached copy moved.
 */
static void rx_unpeek(struct afx_wire *x)
{
	xsk_ring_cons__cancel(&x->rx, x->peeked);
	x->peeked = 0;
}

/*
 * Descriptors the device would not take are released while they lead; then
 * good frames up to the first bad one, which leads the next peek (the
 * device releases a prefix of what it peeked). xsk_ring_cons__peek loads
 * the kernel's producer index with acquire: the descriptors and the frames
 * they name were written before the kernel's release store of it.
 */
static unsigned int afx_rx_peek(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n)
{
	struct afx_wire *x = to_afx(w);
	unsigned int avail, lead = 0, got = 0;
	uint32_t idx;

	if (n > AFX_RX_SHELLS)
		n = AFX_RX_SHELLS;
	rx_unpeek(x);
	avail = n ? xsk_ring_cons__peek(&x->rx, n, &idx) : 0;
	for (; lead < avail; lead++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + lead);
		enum afx_take why = desc_check(x, d);

		if (why == TAKE_OK)
			break;
		rx_drop(x, d, why);
	}
	if (lead) {
		/* release: our reads of those descriptors are done */
		xsk_ring_cons__release(&x->rx, lead);
		fill_flush(x);
	}
	for (; lead + got < avail; got++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + lead + got);

		if (desc_check(x, d) != TAKE_OK)
			break;
		shell_wrap(&x->shells[got], x->area + (d->addr & ~(uint64_t)(AFX_FRAME - 1)),
			   x->area + d->addr, d->len);
		frames[got] = &x->shells[got];
	}
	xsk_ring_cons__cancel(&x->rx, avail - lead - got);
	x->peeked = got;
	return got;
}

/*
 * The device copied the first n peeked frames out: their frames go back to
 * the FILL ring (fill_flush orders the copies before the kernel may refill)
 * and the consumer index moves past their entries with release, after our
 * reads of the descriptors.
 */
static void afx_rx_release(struct vnic_wire *w, unsigned int n)
{
	struct afx_wire *x = to_afx(w);
	uint64_t bytes = 0;

	if (n > x->peeked)
		n = x->peeked;
	for (unsigned int i = 0; i < n; i++) {
		bytes += x->shells[i].len;
		fill_stash(x, (uint64_t)(x->shells[i].head - x->area));
	}
	fill_flush(x);
	if (n)
		xsk_ring_cons__release(&x->rx, n);
	xsk_ring_cons__cancel(&x->rx, x->peeked - n);
	x->peeked = 0;
	vnic_ctr_add(&x->rxs.frames, n);
	vnic_ctr_add(&x->rxs.bytes, bytes);
}

/* An RX entry past what was handed out (the acquire load of xsk_cons_nb_avail). */
static bool rx_ready(struct afx_wire *x)
{
	return x->peeked || xsk_cons_nb_avail(&x->rx, 1) > 0;
}

/* Nothing is ever in flight but not ready: ready now (1) or nothing (0). */
static uint64_t afx_rx_next_ns(struct vnic_wire *w)
{
	return rx_ready(to_afx(w)) ? 1 : 0;
}

/* ---- notification -------------------------------------------------------------- */

/* irq ops: called by the device's NAPI on its cpu, which is ours (rx_cpu). */
static void afx_irq_enable(void *ctx)
{
	vnic_fd_irq_arm(&to_afx(ctx)->irq, true);
}

static bool afx_irq_ready(struct vnic_fd_irq *irq)
{
	return rx_ready(vnic_container_of(irq, struct afx_wire, irq));
}

static void afx_irq_disable(void *ctx)
{
	vnic_fd_irq_arm(&to_afx(ctx)->irq, false);
}

static bool afx_irq_pending(void *ctx)
{
	return rx_ready(to_afx(ctx));
}

static const struct vnic_irq_ops afx_irq_ops = {
	.enable = afx_irq_enable,
	.disable = afx_irq_disable,
	.pending = afx_irq_pending,
};

/* ---- tx ---------------------------------------------------------------------- */

/* A completed address names a transmit frame, and the stack has room: else a duplicate or a lie. */
static bool comp_ok(const struct afx_wire *x, uint64_t addr)
{
	return addr >= AFX_TX_BASE && addr < AFX_UMEM_BYTES && x->tx_nfree < AFX_TX_FRAMES;
}

/*
 * Sent frames are ours again. xsk_ring_cons__peek loads the kernel's
 * producer index with acquire (the addresses were written before it), and
 * xsk_ring_cons__release stores ours with release once they are read.
 */
static void tx_reap(struct afx_wire *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->comp, AFX_COMP_RING, &idx);

	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = *xsk_ring_cons__comp_addr(&x->comp, idx + i);

		if (vnic_unlikely(!comp_ok(x, addr))) {
			vnic_ctr_add(&x->txs.bad_completions, 1);
			continue;
		}
		x->tx_free[x->tx_nfree++] = addr & ~(uint64_t)(AFX_FRAME - 1);
	}
	xsk_ring_cons__release(&x->comp, n);
	vnic_ctr_add(&x->txs.completions, n);
}

/* TX entries the kernel has not taken yet (the acquire load of xsk_prod_nb_free). */
static uint32_t tx_pending(struct afx_wire *x)
{
	return AFX_TX_RING - xsk_prod_nb_free(&x->tx, AFX_TX_RING);
}

/*
 * The kernel reads the TX ring only when asked: always in copy mode, and
 * in zero-copy mode when the driver sleeps (XDP_RING_NEED_WAKEUP). A kick
 * sends up to the socket's budget and answers EAGAIN when entries are left
 * (or the socket's send buffer is full), so kick while the ring drains; a
 * kick that took nothing ends it, and what is left goes with the next
 * commit. With the budget the whole ring (tx_budget_set), one kick a
 * commit is the rule: one syscall per burst, however many frames.
 */
static void tx_kick(struct afx_wire *x)
{
	uint32_t left = tx_pending(x);

	for (unsigned int k = 0; left && k < AFX_KICKS_MAX; k++) {
		uint32_t before = left;

		if (!xsk_ring_prod__needs_wakeup(&x->tx))
			return;
		vnic_ctr_add(&x->txs.kicks, 1);
		if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS && errno != EINTR) {
			vnic_ctr_add(&x->txs.kick_errors, 1);
			return;
		}
		left = tx_pending(x);
		if (left == before)
			break;
	}
	if (left)
		vnic_ctr_add(&x->txs.stalls, 1);
}

static unsigned int afx_tx_reserve(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n)
{
	struct afx_wire *x = to_afx(w);
	unsigned int i;

	tx_reap(x);
	if (n > AFX_TX_SLOTS)
		n = AFX_TX_SLOTS;
	if (n > x->tx_nfree) {
		vnic_ctr_add(&x->txs.full, 1);
		n = x->tx_nfree;
	}
	for (i = 0; i < n; i++) {
		uint64_t addr = x->tx_free[--x->tx_nfree];

		x->tx_addr[i] = addr;
		shell_wrap(&x->slots[i], x->area + addr, x->area + addr, 0);
		out[i] = &x->slots[i];
	}
	x->reserved = n;
	return n;
}

/* The device's frame: inside its slot, an Ethernet header at least, the MTU at most. */
static bool tx_frame_ok(const struct afx_wire *x, const struct vnic_pkt *pkt)
{
	uint64_t off = (uint64_t)(pkt->data - pkt->head);
	uint32_t l2 = VNIC_ETH_HLEN;
	uint16_t type;

	if (pkt->data < pkt->head || off + pkt->len > AFX_FRAME || pkt->len < VNIC_ETH_HLEN ||
	    pkt->gso_type != VNIC_GSO_NONE)
		return false;
	type = (uint16_t)(pkt->data[12] << 8 | pkt->data[13]);
	if (type == VNIC_ETH_P_8021Q || type == VNIC_ETH_P_8021AD)
		l2 += VNIC_VLAN_HLEN;
	return pkt->len <= x->wire.mtu + l2;
}

/*
 * Good frames onto the TX ring, in order; the rest (too long, no room on
 * the ring, reserved but not sent) back on the free stack. Ordering: a
 * slot from xsk_ring_prod__reserve was freed by the kernel's consumer
 * index, loaded with acquire; the device's writes to the frames and ours to
 * the descriptors come before xsk_ring_prod__submit's release store, which
 * is what the kernel acquires before it reads either.
 */
static void afx_tx_commit(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n,
			  unsigned int reserved)
{
	struct afx_wire *x = to_afx(w);
	uint64_t bytes = 0;
	unsigned int i, sent = 0;

	(void)out;
	(void)reserved;
	/* our own record of the slots is used; out[] only says how many */
	if (n > x->reserved)
		n = x->reserved;
	/* no reap: the next reserve reaps what this burst's kick completed */
	for (i = 0; i < n; i++) {
		struct vnic_pkt *pkt = &x->slots[i];
		struct xdp_desc *d;
		uint32_t idx;

		if (vnic_unlikely(!tx_frame_ok(x, pkt))) {
			vnic_ctr_add(&x->txs.drop_mtu, 1);
			x->tx_free[x->tx_nfree++] = x->tx_addr[i];
			continue;
		}
		if (vnic_unlikely(xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1)) {
			vnic_ctr_add(&x->txs.drop_ring_full, 1);
			x->tx_free[x->tx_nfree++] = x->tx_addr[i];
			continue;
		}
		d = xsk_ring_prod__tx_desc(&x->tx, idx);
		d->addr = x->tx_addr[i] + (uint64_t)(pkt->data - pkt->head);
		d->len = pkt->len;
		d->options = 0;
		bytes += pkt->len;
		sent++;
	}
	for (; i < x->reserved; i++)
		x->tx_free[x->tx_nfree++] = x->tx_addr[i];
	x->reserved = 0;
	if (sent) {
		xsk_ring_prod__submit(&x->tx, sent);
		vnic_ctr_add(&x->txs.frames, sent);
		vnic_ctr_add(&x->txs.bytes, bytes);
	}
	if (sent || tx_pending(x))
		tx_kick(x);
}

static const struct vnic_wire_ops afx_wire_ops = {
	.tx_reserve = afx_tx_reserve,
	.tx_commit = afx_tx_commit,
	.rx_peek = afx_rx_peek,
	.rx_release = afx_rx_release,
	.rx_next_ns = afx_rx_next_ns,
	.rx_irq = &afx_irq_ops,
};

/* ---- libxdp and libbpf's messages ------------------------------------------ */

/*
 * Both libraries print to stderr by default, and a create that falls back
 * from native to generic mode makes them complain about the first try. Their
 * warnings (the level errors come at) are kept, the last one, for
 * vnic_afxdp_last_error; the rest is dropped.
 */
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char msg_last[256];

__attribute__((format(printf, 1, 0))) static void msg_keep(const char *fmt, va_list ap)
{
	size_t len;

	pthread_mutex_lock(&msg_lock);
	vsnprintf(msg_last, sizeof(msg_last), fmt, ap);
	len = strlen(msg_last);
	while (len && (msg_last[len - 1] == '\n' || msg_last[len - 1] == ' '))
		msg_last[--len] = '\0';
	pthread_mutex_unlock(&msg_lock);
}

__attribute__((format(printf, 2, 0))) static int xdp_print(enum libxdp_print_level level,
							   const char *fmt, va_list ap)
{
	if (level == LIBXDP_WARN)
		msg_keep(fmt, ap);
	return 0;
}

__attribute__((format(printf, 2, 0))) static int bpf_print(enum libbpf_print_level level,
							   const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		msg_keep(fmt, ap);
	return 0;
}

/* A try's warnings are its own: a refusal's reason is never an older one. */
static void msg_clear(void)
{
	pthread_mutex_lock(&msg_lock);
	msg_last[0] = '\0';
	pthread_mutex_unlock(&msg_lock);
}

static void msg_route(void)
{
	libxdp_set_print(xdp_print);
	libbpf_set_print(bpf_print);
}

void vnic_afxdp_last_error(char *buf, size_t len)
{
	if (!len)
		return;
	pthread_mutex_lock(&msg_lock);
	snprintf(buf, len, "%s", msg_last);
	pthread_mutex_unlock(&msg_lock);
}

/* ---- setup ------------------------------------------------------------------- */

/*
 * ifname, by name, in the namespace we are in: an Ethernet device that is
 * not loopback, as the AF_PACKET wire requires (a loopback device carries
 * the host's own traffic, any other link type no Ethernet frames).
 */
static int check_device(const char *ifname)
{
	struct ifreq ifr;
	int fd, err = 0;

	if (!if_nametoindex(ifname))
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		err = -errno;
	else if (ifr.ifr_flags & IFF_LOOPBACK)
		err = -EINVAL;
	else if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else if (ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK)
		err = -EINVAL;
	else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		err = -EPROTONOSUPPORT;
	close(fd);
	return err;
}

/*
 * The ways to attach, best first: the driver's own XDP hook, zero-copy when
 * it has it (the frames are DMAed into the UMEM), else copy; then the
 * generic hook any device has, after the kernel built an skb (copy only).
 */
static const struct afx_try {
	uint32_t xdp_flags;
	uint16_t bind_flags;
	bool native, zerocopy;
} tries[] = {
	{XDP_FLAGS_DRV_MODE, XDP_ZEROCOPY, true, true},
	{XDP_FLAGS_DRV_MODE, XDP_COPY, true, false},
	{XDP_FLAGS_SKB_MODE, XDP_COPY, false, false},
};

static int umem_open(struct afx_wire *x)
{
	const struct xsk_umem_config uc = {
		.fill_size = AFX_FILL_RING,
		.comp_size = AFX_COMP_RING,
		.frame_size = AFX_FRAME,
		.frame_headroom = 0,
		.flags = 0,
	};

	return xsk_umem__create(&x->umem, x->area, AFX_UMEM_BYTES, &x->fill, &x->comp, &uc);
}

static void xsk_close(struct afx_wire *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	x->xsk = NULL;
	if (x->umem)
		xsk_umem__delete(x->umem);
	x->umem = NULL;
}

/*
 * One try from scratch: a failed bind or attach leaves libxdp's objects in
 * no state worth reusing, so each try makes its own UMEM registration too.
 */
static int xsk_try(struct afx_wire *x, uint32_t queue, const struct afx_try *t)
{
	struct xsk_socket_config sc = {
		.rx_size = AFX_RX_RING,
		.tx_size = AFX_TX_RING,
		.xdp_flags = t->xdp_flags,
		.bind_flags = (uint16_t)(t->bind_flags | XDP_USE_NEED_WAKEUP),
	};
	int err;

	msg_clear();
	err = umem_open(x);
	if (err)
		return err;
	err = xsk_socket__create(&x->xsk, x->ifname, queue, x->umem, &x->rx, &x->tx, &sc);
	if (err) {
		x->xsk = NULL;
		xsk_close(x);
		return err;
	}
	x->native = t->native;
	x->zerocopy = t->zerocopy;
	return 0;
}

struct afx_open {
	struct afx_wire *x;
	uint32_t queue;
	int err;
};

/*
 * Native XDP was refused and generic taken: why, in one line, for whoever
 * starts the wire to print (vnic_afxdp_mode_note).
 */
static void note_native_refused(struct afx_wire *x, int err, const char *why)
{
	snprintf(x->note, sizeof(x->note), "native XDP refused (%s%s%s): generic XDP instead",
		 strerror(-err), *why ? "; libxdp: " : "", why);
}

static void open_here(struct afx_open *o)
{
	int err = check_device(o->x->ifname), native_err = 0;
	char native_why[sizeof(msg_last)] = "";
	size_t i = 0;

	if (err) {
		o->err = err;
		return;
	}
	/*
	 * A socket closed on this queue a moment ago still holds it (the
	 * kernel releases its buffer pool from a work item): EBUSY for a
	 * while, so a wire destroyed and made again waits for it. The wait
	 * tries the same way again, not the first: a native try whose bind
	 * took the queue before the driver refused the program is such a
	 * socket, and starting over would make it again, every time.
	 */
	for (unsigned int wait = 0; wait < AFX_BUSY_WAITS; wait++) {
		for (; i < sizeof(tries) / sizeof(tries[0]); i++) {
			err = xsk_try(o->x, o->queue, &tries[i]);
			if (!err || err == -EBUSY)
				break;
			/* the copy try's answer says more than zero-copy's */
			if (tries[i].native) {
				native_err = err;
				vnic_afxdp_last_error(native_why, sizeof(native_why));
			}
		}
		if (err != -EBUSY)
			break;
		nanosleep(&(struct timespec){.tv_nsec = AFX_BUSY_WAIT_NS}, NULL);
	}
	if (!err && !o->x->native && native_err)
		note_native_refused(o->x, native_err, native_why);
	o->err = err;
}

static void close_here(struct afx_open *o)
{
	xsk_close(o->x);
}

struct afx_ns_call {
	int netns_fd;
	void (*fn)(struct afx_open *o);
	struct afx_open *o;
	int err;
};

static void *ns_thread(void *arg)
{
	struct afx_ns_call *c = arg;

	if (setns(c->netns_fd, CLONE_NEWNET)) {
		c->err = -errno;
		return NULL;
	}
	c->fn(c->o);
	return NULL;
}

/*
 * fn in the namespace the interface is in: libxdp finds the interface by
 * name, attaches and detaches its program by index over netlink, and the
 * socket binds in its own namespace, so creation and teardown both run
 * there, on a helper thread (the caller's threads never change namespace).
 */
static int in_netns(int netns_fd, void (*fn)(struct afx_open *o), struct afx_open *o)
{
	struct afx_ns_call c = {.netns_fd = netns_fd, .fn = fn, .o = o};
	pthread_t th;
	int err;

	if (netns_fd < 0) {
		fn(o);
		return 0;
	}
	err = -pthread_create(&th, NULL, ns_thread, &c);
	if (err)
		return err;
	pthread_join(th, NULL);
	return c.err;
}

/*
 * In copy mode a sendto sends AFX_KERNEL_TX_BATCH frames and leaves the
 * rest for another (EAGAIN): a commit of 44 segments took two syscalls, a
 * busy ring more. Linux 6.17 lets the socket raise that to its TX ring's
 * size, so that one kick sends the whole burst; an older kernel says
 * ENOPROTOOPT and the kick loop does what it did.
 */
static void tx_budget_set(struct afx_wire *x)
{
	unsigned int budget = AFX_TX_RING;

	x->tx_budget = AFX_KERNEL_TX_BATCH;
	if (!x->zerocopy &&
	    setsockopt(x->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget)) == 0)
		x->tx_budget = budget;
}

/* The XDP_OPTIONS the kernel reports: zero-copy or not, whatever we asked. */
static void read_options(struct afx_wire *x)
{
	struct xdp_options opt;
	socklen_t len = sizeof(opt);

	if (getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &opt, &len) == 0)
		x->zerocopy = opt.flags & XDP_OPTIONS_ZEROCOPY;
}

static void afx_free(struct afx_wire *x)
{
	struct afx_open o = {.x = x};

	/*
	 * libxdp detaches its program by interface index: from the wrong
	 * namespace that could be another interface, so if the namespace
	 * cannot be entered the socket is left open rather than closed here.
	 */
	if (x->xsk || x->umem)
		in_netns(x->netns_fd, close_here, &o);
	if (x->area)
		munmap(x->area, AFX_UMEM_BYTES);
	if (x->netns_fd >= 0)
		close(x->netns_fd);
	free(x);
}

static int afx_alloc(struct afx_wire **out, const char *ifname, const struct vnic_afxdp_config *cfg)
{
	struct afx_wire *x = aligned_alloc(VNIC_CACHELINE, sizeof(*x));

	if (!x)
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	x->fd = -1;
	x->netns_fd = -1;
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
	x->wire.ops = &afx_wire_ops;
	x->wire.priv = x;
	x->wire.mtu = cfg->mtu;
	x->wire.frame_size = cfg->mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
	x->wire.gso_max_size = 0; /* one frame per UMEM frame: no superframes */
	*out = x;
	if (cfg->netns_fd > 0) {
		x->netns_fd = fcntl(cfg->netns_fd, F_DUPFD_CLOEXEC, 0);
		if (x->netns_fd < 0)
			return -errno;
	}
	x->area = mmap(NULL, AFX_UMEM_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Every receive frame on the FILL ring, every transmit frame on the free stack. */
static void frames_init(struct afx_wire *x)
{
	for (uint32_t i = 0; i < AFX_RX_FRAMES; i++)
		fill_stash(x, AFX_RX_BASE + (uint64_t)i * AFX_FRAME);
	fill_flush(x);
	for (uint32_t i = 0; i < AFX_TX_FRAMES; i++)
		x->tx_free[x->tx_nfree++] =
			AFX_TX_BASE + (uint64_t)(AFX_TX_FRAMES - 1 - i) * AFX_FRAME;
}

int vnic_afxdp_create(struct vnic_wire **w, const char *ifname, const struct vnic_afxdp_config *cfg,
		      struct vnic_cpu *rx_cpu)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct afx_open o = {0};
	struct afx_wire *x = NULL;
	int err;

	if (!w)
		return -EINVAL;
	*w = NULL;
	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ || !cfg || !rx_cpu)
		return -EINVAL;
	if (cfg->mtu < AFX_MIN_MTU || cfg->mtu > AFX_MAX_MTU)
		return -EINVAL;
	pthread_once(&once, msg_route);
	err = afx_alloc(&x, ifname, cfg);
	if (err)
		goto err_free;
	o.x = x;
	o.queue = cfg->queue;
	err = in_netns(x->netns_fd, open_here, &o);
	if (!err)
		err = o.err;
	if (err)
		goto err_free;
	x->fd = xsk_socket__fd(x->xsk);
	read_options(x);
	tx_budget_set(x);
	frames_init(x);
	snprintf(x->name, sizeof(x->name), "xdp-%s", ifname);
	err = vnic_fd_irq_init(&x->irq, rx_cpu, &x->wire, x->fd, x->name,
			       &x->rxs.notifies, afx_irq_ready);
	if (err)
		goto err_free;
	err = vnic_fd_irq_spin_init(&x->irq, rx_cpu);
	if (err)
		goto err_free;
	*w = &x->wire;
	return 0;

err_free:
	if (x)
		afx_free(x);
	return err;
}

void vnic_afxdp_destroy(struct vnic_wire *w)
{
	if (w)
		afx_free(to_afx(w));
}

/*
 * A libxdp ring over the fake's memory, as xsk_socket__create and
 * xsk_umem__create set theirs up: a producer's cached consumer index runs
 * a ring's size ahead (libxdp's convention, xsk_prod_nb_free).
 */
static void fake_ring(void *ring, uint32_t size, uint32_t *prod, uint32_t *cons, uint32_t *flags,
		      void *entries, bool producer)
{
	struct xsk_ring_prod *r = ring; /* the same layout as xsk_ring_cons */

	r->mask = size - 1;
	r->size = size;
	r->producer = prod;
	r->consumer = cons;
	r->flags = flags;
	r->ring = entries;
	r->cached_prod = *prod;
	r->cached_cons = *cons + (producer ? size : 0);
}

_Static_assert(sizeof(struct xsk_ring_prod) == sizeof(struct xsk_ring_cons),
	       "fake_ring sets both kinds of ring up the same way");

int vnic_afxdp_fake_create(struct vnic_wire **w, struct vnic_afxdp_fake *k, int kick_fd,
			   uint32_t mtu, uint32_t tx_budget, uint8_t **umem)
{
	const struct vnic_afxdp_config cfg = {.mtu = mtu};
	struct afx_wire *x = NULL;
	int err;

	if (!w || !k || kick_fd < 0 || !umem || mtu < AFX_MIN_MTU || mtu > AFX_MAX_MTU)
		return -EINVAL;
	*w = NULL;
	err = afx_alloc(&x, "fake", &cfg);
	if (err) {
		if (x)
			afx_free(x);
		return err;
	}
	fake_ring(&x->fill, AFX_FILL_RING, &k->fill_prod, &k->fill_cons, &k->fill_flags, k->fill,
		  true);
	fake_ring(&x->rx, AFX_RX_RING, &k->rx_prod, &k->rx_cons, &k->rx_flags, k->rx, false);
	fake_ring(&x->tx, AFX_TX_RING, &k->tx_prod, &k->tx_cons, &k->tx_flags, k->tx, true);
	fake_ring(&x->comp, AFX_COMP_RING, &k->comp_prod, &k->comp_cons, &k->comp_flags, k->comp,
		  false);
	x->fd = kick_fd;
	x->tx_budget = tx_budget ? tx_budget : AFX_KERNEL_TX_BATCH;
	frames_init(x);
	snprintf(x->name, sizeof(x->name), "xdp-fake");
	*umem = x->area;
	*w = &x->wire;
	return 0;
}

const char *vnic_afxdp_mode_name(const struct vnic_wire *w)
{
	const struct afx_wire *x = vnic_container_of((struct vnic_wire *)w, struct afx_wire, wire);

	if (x->native)
		return x->zerocopy ? "native zero-copy" : "native copy";
	return "generic copy";
}

const char *vnic_afxdp_mode_note(const struct vnic_wire *w)
{
	return vnic_container_of((struct vnic_wire *)w, struct afx_wire, wire)->note;
}

void vnic_afxdp_stats(const struct vnic_wire *w, struct vnic_afxdp_stats *st)
{
	struct afx_wire *x = vnic_container_of((struct vnic_wire *)w, struct afx_wire, wire);
	struct xdp_statistics ks;
	socklen_t len = sizeof(ks);

	memset(st, 0, sizeof(*st));
	/* the kernel's own, per socket, never reset */
	memset(&ks, 0, sizeof(ks));
	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &ks, &len) == 0) {
		st->rx_kernel_drops = ks.rx_dropped;
		st->rx_ring_full = ks.rx_ring_full;
		st->rx_fill_empty = ks.rx_fill_ring_empty_descs;
		st->rx_invalid_descs = ks.rx_invalid_descs;
		st->tx_invalid_descs = ks.tx_invalid_descs;
	}
	st->native = x->native;
	st->zerocopy = x->zerocopy;
	st->tx_budget = x->tx_budget;
	st->rx_frames = vnic_ctr_read(&x->rxs.frames);
	st->rx_bytes = vnic_ctr_read(&x->rxs.bytes);
	st->rx_drop_bad_desc = vnic_ctr_read(&x->rxs.drop_bad_desc);
	st->rx_drop_runt = vnic_ctr_read(&x->rxs.drop_runt);
	st->rx_drop_too_big = vnic_ctr_read(&x->rxs.drop_too_big);
	st->rx_fill_kicks = vnic_ctr_read(&x->rxs.fill_kicks);
	st->rx_fill_short = vnic_ctr_read(&x->rxs.fill_short);
	st->rx_notifies = vnic_ctr_read(&x->rxs.notifies);
	st->tx_frames = vnic_ctr_read(&x->txs.frames);
	st->tx_bytes = vnic_ctr_read(&x->txs.bytes);
	st->tx_drop_mtu = vnic_ctr_read(&x->txs.drop_mtu);
	st->tx_drop_ring_full = vnic_ctr_read(&x->txs.drop_ring_full);
	st->tx_full = vnic_ctr_read(&x->txs.full);
	st->tx_kicks = vnic_ctr_read(&x->txs.kicks);
	st->tx_kick_errors = vnic_ctr_read(&x->txs.kick_errors);
	st->tx_stalls = vnic_ctr_read(&x->txs.stalls);
	st->tx_completions = vnic_ctr_read(&x->txs.completions);
	st->tx_bad_completions = vnic_ctr_read(&x->txs.bad_completions);
}

unsigned int vnic_afxdp_counters(const struct vnic_wire *w, struct vnic_counter *out,
				 unsigned int max)
{
	struct vnic_afxdp_stats st;
	unsigned int n = 0;

	vnic_afxdp_stats(w, &st);
#define C(f) vnic_counter_put(out, max, &n, #f, st.f)
	C(native);
	C(zerocopy);
	C(rx_frames);
	C(rx_bytes);
	C(rx_drop_bad_desc);
	C(rx_drop_runt);
	C(rx_drop_too_big);
	C(rx_kernel_drops);
	C(rx_ring_full);
	C(rx_fill_empty);
	C(rx_invalid_descs);
	C(rx_fill_kicks);
	C(rx_fill_short);
	C(rx_notifies);
	C(tx_frames);
	C(tx_bytes);
	C(tx_drop_mtu);
	C(tx_drop_ring_full);
	C(tx_full);
	C(tx_kicks);
	C(tx_budget);
	C(tx_kick_errors);
	C(tx_stalls);
	C(tx_completions);
	C(tx_bad_completions);
	C(tx_invalid_descs);
#undef C
	return n;
}

bool vnic_afxdp_available(void)
{
	return true;
}
