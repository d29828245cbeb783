// SPDX-License-Identifier: MIT
/*
 * A struct vnic_wire on a real interface: one AF_PACKET socket (contract in
 * port.h).
 *
 * rx: a ring the kernel writes frames into, in one of two layouts
 * (struct vnic_afpacket_config.ring):
 *   - TPACKET_V2: a status word per frame. The kernel marks each frame
 *     TP_STATUS_USER as it lands and wakes a waiter for each; we hand each
 *     back (TP_STATUS_KERNEL) when the device has released it. A lone frame
 *     is seen within microseconds: the default.
 *   - TPACKET_V3: blocks of frames. The kernel hands a block over (its
 *     block_status TP_STATUS_USER) when it is full or after the retire
 *     timeout, and wakes a waiter once per block; we hand it back when every
 *     frame in it is released. Fewer wake-ups under load, but a lone frame
 *     waits for the block timeout (1 ms, the smallest the kernel takes)
 *     before anyone sees it, which is a request/response's whole budget.
 * Either way the device peeks frames in place (packets wrapping the ring
 * memory, no copy: the device copies each into a posted rx buffer anyway).
 *
 * Notification: the socket's fd on the receiving device's cpu,
 * edge-triggered (the kernel wakes the socket for every frame), acted on
 * while the device's rx irq is armed (fd_irq.h, shared with AF_XDP);
 * pending() checks the ring, which is what finds a frame that landed while
 * the irq was masked. A cpu that busy-polls peeks the ring's next status
 * word instead of asking epoll (a spin source, vnic_fd_irq_spin_init):
 * no syscall per look, where an epoll_wait every 2 us of the spin was one.
 *
 * tx: the device reserves slots (packets of our pool), writes frames into
 * them and commits; commit sends them by sendmmsg in batches and the slots
 * are free again at once (the kernel copied them). With the vnet header a
 * superframe's slot may hold only its headers and chain its payload where
 * the device left it, in its driver's buffer (wire.tx_frags): the message
 * is then three pieces, the vnet header, the slot's headers and the
 * payload, and the kernel's copy is the only one. PACKET_QDISC_BYPASS: the
 * device below us has its own queues and BQL; a qdisc would only add a
 * second one.
 *
 * Where AF_XDP goes later: struct afp_wire below is what the ops work on;
 * an AF_XDP backend is another struct embedding a struct vnic_wire with the
 * same ops shape: tx_reserve hands out UMEM frames (wrapped as packets, as
 * rx_peek does here), tx_commit fills the TX ring and kicks with sendto,
 * rx_peek walks the RX ring, rx_release refills the FILL ring, and the
 * notification is the same fd-on-cpu scheme (the xsk fd is pollable).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd_irq.h"
#include "port.h"

enum {
	AFP_BLOCK_SIZE = 1 << 17, /* 128 KiB: even a 64 KiB frame fits whole */
	AFP_BLOCK_NR = 32,
	AFP_RING_BYTES = AFP_BLOCK_SIZE * AFP_BLOCK_NR, /* 4 MiB, either layout */
	AFP_RING_BYTES_VNET = 8 * AFP_RING_BYTES,	/* 32 MiB: 256 superframes (V2) */
	AFP_VNET_LEN = 10, /* struct virtio_net_hdr: what PACKET_VNET_HDR puts first */
	AFP_RX_SEGS = 256, /* segments of one superframe received, at most */
	AFP_TX_SLOTS_VNET = 64, /* superframe slots: one per descriptor */
	AFP_FRAME_SIZE = 2048, /* V3 ignores it but for the ring's sanity checks */
	AFP_RETIRE_TOV_MS = 1,
	AFP_RX_SHELLS = 64,		  /* frames one peek may return */
	AFP_TX_SLOTS = VNIC_GSO_MAX_SEGS, /* a device reserves up to a superpacket's segments */
	AFP_TX_BATCH = 64,		  /* frames per sendmmsg */
	AFP_MIN_MTU = 68,
};

struct afp_rx_stats {
	uint64_t frames, bytes, drop_too_big, drop_truncated, kernel_drops, blocks, notifies,
		csum_fixed, gso_frames, gso_segments, gso_whole, drop_gso;
};

struct afp_tx_stats {
	uint64_t frames, bytes, drop_mtu, drop_kernel, syscalls, full, gso_frames, drop_gso,
		gso_frags;
};

struct afp_wire {
	struct vnic_wire wire;
	int fd;
	int ifindex;

	/* rx: the receiving device's cpu only */
	struct vnic_fd_irq irq vnic_cacheline_aligned; /* the rx "interrupt" (fd_irq.h) */
	uint8_t *ring;
	size_t ring_len;
	int version;	   /* TPACKET_V2 or TPACKET_V3 */
	/* V3 */
	uint32_t blk;	   /* block the cursor is in */
	uint32_t blk_nr;
	uint32_t blk_left; /* frames of it not yet released; 0: not ours yet */
	uint8_t *cur;	   /* next frame to release */
	/* V2: frame slots of slot_size bytes, slot_nr of them */
	uint32_t slot;	   /* next frame to release */
	uint32_t slot_nr;
	uint32_t slot_size;
	bool vnet;	   /* PACKET_VNET_HDR: superframes both ways */
	uint32_t rx_max;   /* the longest frame taken: a superframe with vnet, else frame_size */
	/*
	 * The largest superframe the device takes whole (rx_gso_take: its
	 * driver negotiated large receive), 0: none, cut into MTU frames.
	 * Written by any thread, read here per superframe: relaxed.
	 */
	uint32_t rx_gso;
	/* the segments of a superframe received, handed out before the ring's next frame */
	struct vnic_pkt_pool segpool;
	struct vnic_pkt *segs[AFP_RX_SEGS];
	unsigned int seg_n, seg_i;
	unsigned int peeked;
	struct afp_rx_stats rx;
	struct vnic_pkt shells[AFP_RX_SHELLS];
	char name[IFNAMSIZ + 8];

	/* tx: the transmitting device's cpu only */
	struct vnic_pkt_pool pool vnic_cacheline_aligned;
	struct vnic_pkt *slots[AFP_TX_SLOTS];
	unsigned int reserved;
	unsigned int tx_slots;
	struct mmsghdr msgs[AFP_TX_BATCH];
	struct iovec iovs[AFP_TX_BATCH][3]; /* vnet header, slot, payload by reference */
	uint8_t vhdrs[AFP_TX_BATCH][AFP_VNET_LEN];
	struct afp_tx_stats tx;
};

static struct afp_wire *to_afp(struct vnic_wire *w)
{
	return vnic_container_of(w, struct afp_wire, wire);
}

/* ---- the ring: every ordering with the kernel is here ------------------------- */

static struct tpacket_block_desc *block(struct afp_wire *a, uint32_t i)
{
	return (struct tpacket_block_desc *)(void *)(a->ring + (size_t)i * AFP_BLOCK_SIZE);
}

/*
 * The kernel wrote the frame or block (smp_wmb) before setting
 * TP_STATUS_USER: an acquire load orders our reads of it after that.
 */
static bool status_user(uint32_t *status)
{
	return __atomic_load_n(status, __ATOMIC_ACQUIRE) & TP_STATUS_USER;
}

/* Our reads of the frame or block happen before the kernel may refill it: release. */
static void status_return(uint32_t *status)
{
	__atomic_store_n(status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
}

static bool block_ready(struct tpacket_block_desc *b)
{
	return status_user(&b->hdr.bh1.block_status);
}

static void block_return(struct tpacket_block_desc *b)
{
	status_return(&b->hdr.bh1.block_status);
}

static struct tpacket2_hdr *slot_hdr(struct afp_wire *a, uint32_t i)
{
	return (struct tpacket2_hdr *)(void *)(a->ring + (size_t)i * a->slot_size);
}

/* ---- rx cursor --------------------------------------------------------------- */

/* V3: makes the cursor point at a frame we own; false if none is ready. */
static bool cursor_load(struct afp_wire *a)
{
	while (!a->blk_left) {
		struct tpacket_block_desc *b = block(a, a->blk);
		uint32_t n, first;

		if (!block_ready(b))
			return false;
		n = b->hdr.bh1.num_pkts;
		first = b->hdr.bh1.offset_to_first_pkt;
		vnic_ctr_add(&a->rx.blocks, 1);
		if (!n || first >= AFP_BLOCK_SIZE) {
			block_return(b);
			a->blk = (a->blk + 1) % a->blk_nr;
			continue;
		}
		a->blk_left = n;
		a->cur = (uint8_t *)b + first;
	}
	return true;
}

/* V3: the frame after f in its block, or NULL at the block's end (or a bad offset). */
static uint8_t *frame_next(struct afp_wire *a, uint8_t *f, uint32_t left)
{
	const struct tpacket3_hdr *h = (const void *)f;
	uint8_t *base = (uint8_t *)block(a, a->blk);

	if (left <= 1 || !h->tp_next_offset)
		return NULL;
	if ((size_t)(f - base) + h->tp_next_offset + TPACKET3_HDRLEN > AFP_BLOCK_SIZE)
		return NULL;
	return f + h->tp_next_offset;
}

/* Releases the frame under the cursor, and (V3) its block after its last frame. */
static void cursor_advance(struct afp_wire *a)
{
	uint8_t *next;

	if (a->version == TPACKET_V2) {
		status_return(&slot_hdr(a, a->slot)->tp_status);
		a->slot = a->slot + 1 == a->slot_nr ? 0 : a->slot + 1;
		return;
	}
	next = frame_next(a, a->cur, a->blk_left);
	a->blk_left--;
	if (next && a->blk_left) {
		a->cur = next;
		return;
	}
	block_return(block(a, a->blk));
	a->blk_left = 0;
	a->blk = (a->blk + 1) % a->blk_nr;
}

/* The frame under the cursor, if one is ready. */
static uint8_t *cursor_frame(struct afp_wire *a)
{
	if (a->version == TPACKET_V2) {
		struct tpacket2_hdr *h = slot_hdr(a, a->slot);

		return status_user(&h->tp_status) ? (uint8_t *)h : NULL;
	}
	return cursor_load(a) ? a->cur : NULL;
}

/*
 * The ready frame after f (the i-th from the cursor, i >= 1 counting f as
 * i - 1), without releasing anything; NULL if none is ready. V3 stays in
 * the cursor's block: the next block is seen once this one is released.
 */
static uint8_t *peek_next(struct afp_wire *a, uint8_t *f, uint32_t i)
{
	if (a->version == TPACKET_V2) {
		struct tpacket2_hdr *h;

		if (i >= a->slot_nr)
			return NULL;
		h = slot_hdr(a, (a->slot + i) % a->slot_nr);
		return status_user(&h->tp_status) ? (uint8_t *)h : NULL;
	}
	return frame_next(a, f, a->blk_left - (i - 1));
}

/*
 * One frame's header fields, whichever the layout: frame_take() rewrites
 * them in place (a VLAN tag put back), so that a second peek of the same
 * frame finds it already done.
 */
struct afp_hdr {
	uint32_t *status;	/* in the ring */
	uint32_t *len;
	uint32_t *snaplen;
	uint16_t *mac;
	uint16_t vlan_tci;
	uint16_t vlan_tpid;
	size_t room; /* bytes from the frame's start to the end of its slot or block */
	size_t hdrlen;
};

static void hdr_view(struct afp_wire *a, uint8_t *f, struct afp_hdr *v)
{
	if (a->version == TPACKET_V2) {
		struct tpacket2_hdr *h = (void *)f;

		v->status = &h->tp_status;
		v->len = &h->tp_len;
		v->snaplen = &h->tp_snaplen;
		v->mac = &h->tp_mac;
		v->vlan_tci = h->tp_vlan_tci;
		v->vlan_tpid = h->tp_vlan_tpid;
		v->room = a->slot_size;
		v->hdrlen = TPACKET2_HDRLEN;
	} else {
		struct tpacket3_hdr *h = (void *)f;

		v->status = &h->tp_status;
		v->len = &h->tp_len;
		v->snaplen = &h->tp_snaplen;
		v->mac = &h->tp_mac;
		v->vlan_tci = (uint16_t)h->hv1.tp_vlan_tci;
		v->vlan_tpid = h->hv1.tp_vlan_tpid;
		v->room = AFP_BLOCK_SIZE - (size_t)(f - (uint8_t *)block(a, a->blk));
		v->hdrlen = TPACKET3_HDRLEN;
	}
}

enum take { TAKE_OK, TAKE_OUTGOING, TAKE_TRUNCATED, TAKE_TOO_BIG, TAKE_BAD_GSO };

/*
 * The virtio_net_hdr the kernel put right before the frame (PACKET_VNET_HDR,
 * fields in host byte order) as our struct, whose fields are little-endian
 * as a TAP's are: what vnic_vnet_parse reads.
 */
static void vnet_read(const uint8_t *p, struct vnic_vnet_hdr *v)
{
	uint16_t f[4];

	memset(v, 0, sizeof(*v));
	v->flags = p[0];
	v->gso_type = p[1];
	memcpy(f, p + 2, sizeof(f));
	v->hdr_len = htole16(f[0]);
	v->gso_size = htole16(f[1]);
	v->csum_start = htole16(f[2]);
	v->csum_offset = htole16(f[3]);
}

/* Ours (little-endian fields, as vnic_vnet_build makes them) as the kernel reads it. */
static void vnet_write(uint8_t *p, const struct vnic_vnet_hdr *v)
{
	uint16_t f[4] = {le16toh(v->hdr_len), le16toh(v->gso_size), le16toh(v->csum_start),
			 le16toh(v->csum_offset)};

	p[0] = v->flags;
	p[1] = v->gso_type;
	memcpy(p + 2, f, sizeof(f));
}

/*
 * Whether frame f goes to the device; fills shell if so. No counting here:
 * a peek may look at the same frame again. A frame the kernel hands up with
 * its checksum not yet computed (CSUMNOTREADY: a local sender with checksum
 * offload on a veth) gets it computed here, once.
 */
static enum take frame_take(struct afp_wire *a, uint8_t *f, struct vnic_pkt *shell)
{
	struct vnic_vnet_hdr vh = {0};
	struct afp_hdr h;
	const struct sockaddr_ll *sll;
	uint32_t tag, vlen = a->vnet ? AFP_VNET_LEN : 0, max = a->wire.frame_size;

	hdr_view(a, f, &h);
	sll = (const void *)(f + h.hdrlen - sizeof(*sll));
	/* our own and the host's transmissions are leaving the wire, not arriving */
	if (sll->sll_pkttype == PACKET_OUTGOING)
		return TAKE_OUTGOING;
	if (*h.mac < h.hdrlen + vlen)
		return TAKE_TRUNCATED;
	if (vlen) {
		vnet_read(f + *h.mac - vlen, &vh);
		if (vh.gso_type != VNIC_VNET_GSO_NONE)
			max = a->rx_max;
	}
	/* GRO or LRO on the interface without vnet, or a larger MTU: never truncate */
	tag = *h.status & TP_STATUS_VLAN_VALID ? VNIC_VLAN_HLEN : 0;
	if (*h.len + tag > max)
		return TAKE_TOO_BIG;
	if (*h.mac + (size_t)*h.snaplen > h.room || *h.snaplen < *h.len)
		return TAKE_TRUNCATED;
	/*
	 * The kernel took the VLAN tag out of the frame (it was accelerated or
	 * untagged on receive); a wire carries it inline. PACKET_RESERVE left
	 * room in front of the MAC header to put it back; a vnet header moves
	 * with the MAC header, and its offsets now count the tag.
	 */
	if (tag) {
		uint16_t tpid = *h.status & TP_STATUS_VLAN_TPID_VALID ? h.vlan_tpid
								      : VNIC_ETH_P_8021Q;
		uint8_t *mac = f + *h.mac;

		if (*h.mac < h.hdrlen + vlen + VNIC_VLAN_HLEN || *h.snaplen < 12)
			return TAKE_TRUNCATED;
		if (vlen) {
			if (vh.flags & VNIC_VNET_F_NEEDS_CSUM)
				vh.csum_start = htole16(le16toh(vh.csum_start) + VNIC_VLAN_HLEN);
			if (vh.hdr_len)
				vh.hdr_len = htole16(le16toh(vh.hdr_len) + VNIC_VLAN_HLEN);
			vnet_write(mac - vlen - VNIC_VLAN_HLEN, &vh);
		}
		memmove(mac - VNIC_VLAN_HLEN, mac, 12);
		mac[8] = (uint8_t)(tpid >> 8);
		mac[9] = (uint8_t)tpid;
		mac[10] = (uint8_t)(h.vlan_tci >> 8);
		mac[11] = (uint8_t)h.vlan_tci;
		*h.mac = (uint16_t)(*h.mac - VNIC_VLAN_HLEN);
		*h.snaplen += VNIC_VLAN_HLEN;
		*h.len += VNIC_VLAN_HLEN;
		*h.status &= ~(uint32_t)(TP_STATUS_VLAN_VALID | TP_STATUS_VLAN_TPID_VALID);
	}
	memset(shell, 0, sizeof(*shell));
	shell->head = f;
	shell->data = f + *h.mac;
	shell->len = *h.snaplen;
	shell->buf_size = (uint32_t)h.room;
	if (vh.gso_type != VNIC_VNET_GSO_NONE) {
		/* a superframe: its metadata for segmenting, which completes every sum */
		return vnic_vnet_parse(&vh, shell, NULL) == VNIC_TAP_DROP_NONE &&
				       shell->gso_type != VNIC_GSO_NONE
			       ? TAKE_OK
			       : TAKE_BAD_GSO;
	}
	if (*h.status & TP_STATUS_CSUMNOTREADY) {
		struct vnic_hdrs hdrs;

		if (vnic_parse_frame(shell->data, shell->len, &hdrs) == VNIC_PARSE_OK &&
		    vnic_csum_l4_set(shell->data, &hdrs) == 0)
			vnic_ctr_add(&a->rx.csum_fixed, 1);
		*h.status &= ~(uint32_t)TP_STATUS_CSUMNOTREADY;
	}
	return TAKE_OK;
}

/* A frame the device never sees, released as it leads: counted once, here. */
static void skip_frame(struct afp_wire *a, enum take why)
{
	if (why == TAKE_TRUNCATED)
		vnic_ctr_add(&a->rx.drop_truncated, 1);
	else if (why == TAKE_TOO_BIG)
		vnic_ctr_add(&a->rx.drop_too_big, 1);
	else if (why == TAKE_BAD_GSO)
		vnic_ctr_add(&a->rx.drop_gso, 1);
	cursor_advance(a);
}

/*
 * A superframe (the sender's TSO, or GRO on the interface) becomes the MTU
 * frames a wire carries, each with its complete checksum, into our own
 * segment buffers; its ring frame is released at once. False if it cannot
 * be (more segments than we hold, a segment longer than the MTU): dropped
 * and counted, never truncated.
 */
static bool segment_super(struct afp_wire *a, struct vnic_pkt *super)
{
	int segs = vnic_gso_count(super), n;

	if (segs < 1 || segs > AFP_RX_SEGS) {
		skip_frame(a, TAKE_BAD_GSO);
		return false;
	}
	for (int i = 0; i < segs; i++)
		vnic_pkt_reset(a->segs[i]);
	n = vnic_gso_segment(super, a->segs, (unsigned int)segs, VNIC_GSO_F_CSUM_COMPLETE);
	if (n != segs) {
		skip_frame(a, TAKE_BAD_GSO);
		return false;
	}
	cursor_advance(a);
	a->seg_n = (unsigned int)n;
	a->seg_i = 0;
	vnic_ctr_add(&a->rx.gso_frames, 1);
	vnic_ctr_add(&a->rx.gso_segments, (unsigned int)n);
	return true;
}

/*
 * Whether superframe super goes to the device whole: the device takes them
 * (its driver negotiated large receive), this one fits, and it passes the
 * checks a superframe to cut does (segment_super). Its checksum field then
 * holds the pseudo-header sum over its L4 length, as a superframe on the
 * cable does (docs/PROTOCOL.md section 8.5): the kernel's NEEDS_CSUM
 * (vnic_vnet_parse has checked that it names that field) left the payload
 * unsummed, and whoever cuts or consumes it finishes the sum. The kernel
 * put that sum there already (GRO, a local TSO sender); writing it reads
 * the headers only, never the payload, and holds whatever the kernel's
 * convention. Idempotent: a peek may take the same frame again.
 */
static bool super_whole(struct afp_wire *a, struct vnic_pkt *super)
{
	uint32_t max = __atomic_load_n(&a->rx_gso, __ATOMIC_RELAXED);

	/* one that could not be cut (segments over the MTU, too many) is refused as ever */
	if (super->len > max || super->gso_segs > AFP_RX_SEGS ||
	    (uint32_t)super->l3_len + super->l4_len + super->gso_size > a->wire.mtu)
		return false;
	return vnic_csum_make_partial(super, super->csum_start, super->csum_offset) == 0;
}

static unsigned int seg_peek(struct afp_wire *a, struct vnic_pkt **frames, unsigned int n)
{
	unsigned int got = 0;

	while (got < n && a->seg_i + got < a->seg_n) {
		frames[got] = a->segs[a->seg_i + got];
		got++;
	}
	a->peeked = got;
	return got;
}

static unsigned int afp_rx_peek(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n)
{
	struct afp_wire *a = to_afp(w);
	unsigned int got = 0;
	uint8_t *f;

	if (n > AFP_RX_SHELLS)
		n = AFP_RX_SHELLS;
	a->peeked = 0;
	if (a->seg_i < a->seg_n)
		return seg_peek(a, frames, n);
	/* frames the device never sees are released while they lead */
	for (;;) {
		enum take why;

		if (!n || (f = cursor_frame(a)) == NULL)
			return 0;
		why = frame_take(a, f, &a->shells[0]);
		if (why == TAKE_OK && a->shells[0].gso_type != VNIC_GSO_NONE &&
		    !super_whole(a, &a->shells[0])) {
			if (segment_super(a, &a->shells[0]))
				return seg_peek(a, frames, n);
			continue;
		}
		if (why == TAKE_OK)
			break;
		skip_frame(a, why);
	}
	/*
	 * then good frames up to the first one it would not see (V3: in this
	 * block), or a superframe to cut, which leads the next peek
	 */
	frames[got++] = &a->shells[0];
	while (got < n && (f = peek_next(a, f, got)) != NULL) {
		if (frame_take(a, f, &a->shells[got]) != TAKE_OK ||
		    (a->shells[got].gso_type != VNIC_GSO_NONE && !super_whole(a, &a->shells[got])))
			break;
		frames[got] = &a->shells[got];
		got++;
	}
	a->peeked = got;
	return got;
}

static void afp_rx_release(struct vnic_wire *w, unsigned int n)
{
	struct afp_wire *a = to_afp(w);
	uint64_t bytes = 0;
	unsigned int i;

	if (n > a->peeked)
		n = a->peeked;
	if (a->seg_i < a->seg_n) {
		for (i = 0; i < n; i++)
			bytes += a->segs[a->seg_i + i]->len;
		a->seg_i += n;
		if (a->seg_i == a->seg_n)
			a->seg_i = a->seg_n = 0;
	} else {
		uint64_t whole = 0;

		for (i = 0; i < n; i++) {
			bytes += a->shells[i].len;
			whole += a->shells[i].gso_type != VNIC_GSO_NONE;
			cursor_advance(a);
		}
		if (whole)
			vnic_ctr_add(&a->rx.gso_whole, whole);
	}
	a->peeked = 0;
	vnic_ctr_add(&a->rx.frames, n);
	vnic_ctr_add(&a->rx.bytes, bytes);
}

static bool rx_ready(struct afp_wire *a)
{
	if (a->seg_i < a->seg_n)
		return true;
	if (a->version == TPACKET_V2)
		return status_user(&slot_hdr(a, a->slot)->tp_status);
	return a->blk_left || block_ready(block(a, a->blk));
}

/* Nothing is ever in flight but not ready: ready now (1) or nothing (0). */
static uint64_t afp_rx_next_ns(struct vnic_wire *w)
{
	return rx_ready(to_afp(w)) ? 1 : 0;
}

/*
 * The receiving device's driver took large receive (max > 0) or gave it
 * back (0): superframes pass whole from the next peek, or are cut again.
 * Any thread. One peeked before a reset may still reach the device, which
 * drops it and counts it (rx_drop_super_off), as on the cable.
 */
static void afp_rx_gso_take(struct vnic_wire *w, uint32_t max)
{
	struct afp_wire *a = to_afp(w);

	if (!a->vnet)
		return;
	if (max > a->rx_max)
		max = a->rx_max;
	__atomic_store_n(&a->rx_gso, max, __ATOMIC_RELAXED);
}

/* ---- notification -------------------------------------------------------------- */

/* irq ops: called by the device's NAPI on its cpu, which is ours (rx_cpu). */
static void afp_irq_enable(void *ctx)
{
	vnic_fd_irq_arm(&to_afp(ctx)->irq, true);
}

static bool afp_irq_ready(struct vnic_fd_irq *irq)
{
	return rx_ready(vnic_container_of(irq, struct afp_wire, irq));
}

static void afp_irq_disable(void *ctx)
{
	vnic_fd_irq_arm(&to_afp(ctx)->irq, false);
}

static bool afp_irq_pending(void *ctx)
{
	return rx_ready(to_afp(ctx));
}

static const struct vnic_irq_ops afp_irq_ops = {
	.enable = afp_irq_enable,
	.disable = afp_irq_disable,
	.pending = afp_irq_pending,
};

/* ---- tx ---------------------------------------------------------------------- */

static unsigned int afp_tx_reserve(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n)
{
	struct afp_wire *a = to_afp(w);
	unsigned int i;

	/* every slot is free between calls: commit sends synchronously */
	if (n > a->tx_slots) {
		vnic_ctr_add(&a->tx.full, 1);
		n = a->tx_slots;
	}
	for (i = 0; i < n; i++) {
		vnic_pkt_reset(a->slots[i]);
		out[i] = a->slots[i];
	}
	a->reserved = n;
	return n;
}

/*
 * A payload chained by reference: only on a superframe, one piece that
 * makes up the rest of len, behind a slot that holds at least an Ethernet
 * header. What the device put there (src/device/tx.c ref_to_slot) is all
 * it may be; anything else is a bug, dropped rather than sent.
 */
static bool tx_frags_ok(const struct vnic_pkt *pkt)
{
	const struct vnic_pkt *f = pkt->frags;
	uint32_t linear;

	if (!f || f->next || pkt->frags_tail != f || !f->data || f->len != pkt->frag_len ||
	    pkt->frag_len >= pkt->len)
		return false;
	linear = pkt->len - pkt->frag_len;
	/* the headers whole in the slot: the vnet header's sum is written there */
	return pkt->gso_type != VNIC_GSO_NONE && (pkt->flags & VNIC_PKT_F_PARSED) &&
	       (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len <= linear &&
	       linear >= VNIC_ETH_HLEN;
}

static bool tx_frame_ok(const struct afp_wire *a, const struct vnic_pkt *pkt)
{
	uint64_t off = (uint64_t)(pkt->data - pkt->head);
	uint32_t l2 = VNIC_ETH_HLEN, linear = pkt->len;
	uint16_t type;

	if (pkt->frags) {
		if (!tx_frags_ok(pkt))
			return false;
		linear = pkt->len - pkt->frag_len;
	}
	if (pkt->data < pkt->head || off + linear > pkt->buf_size || pkt->len < VNIC_ETH_HLEN)
		return false;
	if (pkt->gso_type != VNIC_GSO_NONE)
		return a->vnet && pkt->len <= a->wire.gso_max_size;
	type = (uint16_t)(pkt->data[12] << 8 | pkt->data[13]);
	if (type == VNIC_ETH_P_8021Q || type == VNIC_ETH_P_8021AD)
		l2 += VNIC_VLAN_HLEN;
	return pkt->len <= a->wire.mtu + l2;
}

/* Sends msgs[0..n); a frame the kernel refuses is dropped and the rest go on. */
static void send_batch(struct afp_wire *a, unsigned int n)
{
	unsigned int done = 0;
	uint64_t bytes = 0, sent = 0;

	while (done < n) {
		int r = sendmmsg(a->fd, a->msgs + done, n - done, MSG_DONTWAIT);

		vnic_ctr_add(&a->tx.syscalls, 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* ENOBUFS, EAGAIN, ENETDOWN: a full or dead link drops, as a NIC would */
			vnic_ctr_add(&a->tx.drop_kernel, 1);
			done++;
			continue;
		}
		for (int i = 0; i < r; i++)
			bytes += a->msgs[done + (unsigned int)i].msg_len - (a->vnet ? AFP_VNET_LEN : 0);
		sent += (unsigned int)r;
		done += (unsigned int)r;
	}
	vnic_ctr_add(&a->tx.frames, sent);
	vnic_ctr_add(&a->tx.bytes, bytes);
}

/* Message m's frame: the slot, and the payload it chains if any (tx_frame_ok checked it). */
static void tx_iov(struct afp_wire *a, unsigned int m, const struct vnic_pkt *pkt)
{
	struct iovec *iov = &a->iovs[m][1];
	size_t n = 1;

	iov[0].iov_base = pkt->data;
	iov[0].iov_len = pkt->len;
	if (pkt->frags) {
		iov[0].iov_len = pkt->len - pkt->frag_len;
		iov[1].iov_base = pkt->frags->data;
		iov[1].iov_len = pkt->frag_len;
		n = 2;
		vnic_ctr_add(&a->tx.gso_frags, 1);
	}
	a->msgs[m].msg_hdr.msg_iovlen = (a->vnet ? 1 : 0) + n;
}

static void afp_tx_commit(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n,
			  unsigned int reserved)
{
	struct afp_wire *a = to_afp(w);
	unsigned int i, m = 0;

	(void)out;
	(void)reserved;
	/* our own record of the slots is used; out[] only says how many */
	if (n > a->reserved)
		n = a->reserved;
	a->reserved = 0;
	for (i = 0; i < n; i++) {
		struct vnic_pkt *pkt = a->slots[i];

		if (vnic_unlikely(!tx_frame_ok(a, pkt))) {
			vnic_ctr_add(&a->tx.drop_mtu, 1);
			continue;
		}
		if (a->vnet) {
			struct vnic_vnet_hdr vh;

			if (vnic_unlikely(vnic_vnet_build(pkt, &vh))) {
				vnic_ctr_add(&a->tx.drop_gso, 1);
				continue;
			}
			vnet_write(a->vhdrs[m], &vh);
			if (vh.gso_type != VNIC_VNET_GSO_NONE)
				vnic_ctr_add(&a->tx.gso_frames, 1);
		}
		tx_iov(a, m, pkt);
		if (++m == AFP_TX_BATCH) {
			send_batch(a, m);
			m = 0;
		}
	}
	if (m)
		send_batch(a, m);
}

static const struct vnic_wire_ops afp_wire_ops = {
	.tx_reserve = afp_tx_reserve,
	.tx_commit = afp_tx_commit,
	.rx_peek = afp_rx_peek,
	.rx_release = afp_rx_release,
	.rx_next_ns = afp_rx_next_ns,
	.rx_gso_take = afp_rx_gso_take,
	.rx_irq = &afp_irq_ops,
};

/* ---- setup ------------------------------------------------------------------- */

static int sockopt_int(int fd, int opt, int v)
{
	return setsockopt(fd, SOL_PACKET, opt, &v, sizeof(v)) < 0 ? -errno : 0;
}

/*
 * The device behind ifindex, by index, so it is the one bind will use: an
 * Ethernet device that is not loopback. A wire carries Ethernet frames, and
 * a loopback device carries the host's own traffic (127.0.0.1 included),
 * which a backing would hand to whoever holds the other end. The command
 * checks first and says why (src/app/link.c); this is the last line.
 */
static int check_device(int fd, int ifindex)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_ifindex = ifindex;
	if (ioctl(fd, SIOCGIFNAME, &ifr) < 0)
		return errno == ENODEV ? -ENODEV : -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	if (ifr.ifr_flags & IFF_LOOPBACK)
		return -EINVAL;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		return -errno;
	if (ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK)
		return -EINVAL;
	return ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER ? 0 : -EPROTONOSUPPORT;
}

/*
 * V2 slots hold one frame each, whole: header, reserve and the largest frame,
 * rounded up to a power of two so that slots tile the blocks.
 */
static uint32_t v2_slot_size(uint32_t frame_size)
{
	uint32_t need = TPACKET_ALIGN(TPACKET2_HDRLEN) + VNIC_VLAN_HLEN + frame_size +
			TPACKET_ALIGNMENT, size = AFP_FRAME_SIZE;

	while (size < need)
		size <<= 1;
	return size;
}

static int setup_ring(struct afp_wire *a)
{
	union {
		struct tpacket_req v2;
		struct tpacket_req3 v3;
	} req;
	size_t len;
	int err;

	memset(&req, 0, sizeof(req));
	err = sockopt_int(a->fd, PACKET_VERSION, a->version);
	if (err)
		return err;
	/* before the ring: the kernel sizes each frame's room with it */
	if (a->vnet) {
		err = sockopt_int(a->fd, PACKET_VNET_HDR, 1);
		if (err)
			return err;
	}
	/* room in front of each frame for a VLAN tag the kernel took out */
	err = sockopt_int(a->fd, PACKET_RESERVE, VNIC_VLAN_HLEN);
	if (err)
		return err;
	len = a->vnet ? AFP_RING_BYTES_VNET : AFP_RING_BYTES;
	if (a->version == TPACKET_V2) {
		uint32_t block_size = AFP_BLOCK_SIZE;

		a->slot_size = v2_slot_size(a->rx_max + AFP_VNET_LEN);
		if (block_size < a->slot_size)
			block_size = a->slot_size;
		req.v2.tp_block_size = block_size;
		req.v2.tp_block_nr = (uint32_t)(len / block_size);
		req.v2.tp_frame_size = a->slot_size;
		a->slot_nr = req.v2.tp_frame_nr = (uint32_t)(len / a->slot_size);
	} else {
		a->blk_nr = (uint32_t)(len / AFP_BLOCK_SIZE);
		req.v3.tp_block_size = AFP_BLOCK_SIZE;
		req.v3.tp_block_nr = a->blk_nr;
		req.v3.tp_frame_size = AFP_FRAME_SIZE;
		req.v3.tp_frame_nr = AFP_BLOCK_SIZE / AFP_FRAME_SIZE * a->blk_nr;
		req.v3.tp_retire_blk_tov = AFP_RETIRE_TOV_MS;
	}
	if (setsockopt(a->fd, SOL_PACKET, PACKET_RX_RING, &req,
		       a->version == TPACKET_V2 ? sizeof(req.v2) : sizeof(req.v3)) < 0)
		return -errno;
	a->ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (a->ring == MAP_FAILED) {
		a->ring = NULL;
		return -errno;
	}
	a->ring_len = len;
	return 0;
}

/*
 * The socket and the interface's index, in the namespace the interface is
 * in: a packet socket belongs to the namespace it was created in for its
 * whole life, and the name is looked up there too.
 */
struct afp_make {
	const char *ifname;
	int netns_fd;
	int fd;
	int ifindex;
	int err;
};

static void make_here(struct afp_make *m)
{
	/* protocol 0: nothing arrives before bind, so the ring starts clean */
	m->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->fd < 0) {
		m->err = errno == EACCES ? -EPERM : -errno;
		return;
	}
	m->ifindex = (int)if_nametoindex(m->ifname);
	if (!m->ifindex) {
		m->err = -ENODEV;
		close(m->fd);
		m->fd = -1;
	}
}

static void *make_thread(void *arg)
{
	struct afp_make *m = arg;

	if (setns(m->netns_fd, CLONE_NEWNET)) {
		m->err = -errno;
		return NULL;
	}
	make_here(m);
	return NULL;
}

/* A helper thread enters the namespace, so the caller's threads never change it. */
static int make_socket(struct afp_wire *a, const char *ifname, int netns_fd)
{
	struct afp_make m = {.ifname = ifname, .netns_fd = netns_fd, .fd = -1};
	pthread_t th;
	int err;

	if (netns_fd > 0) {
		err = -pthread_create(&th, NULL, make_thread, &m);
		if (err)
			return err;
		pthread_join(th, NULL);
	} else {
		make_here(&m);
	}
	a->fd = m.fd;
	a->ifindex = m.ifindex;
	return m.err;
}

static int open_socket(struct afp_wire *a)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = a->ifindex,
	};
	struct packet_mreq mr = {.mr_ifindex = a->ifindex, .mr_type = PACKET_MR_PROMISC};
	int err;

	err = check_device(a->fd, a->ifindex);
	if (err)
		return err;
	err = setup_ring(a);
	if (err)
		return err;
	/* older kernels lack it; frame_take() filters outgoing frames anyway */
	sockopt_int(a->fd, PACKET_IGNORE_OUTGOING, 1);
	err = sockopt_int(a->fd, PACKET_QDISC_BYPASS, 1);
	if (err)
		return err;
	if (bind(a->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return -errno;
	if (setsockopt(a->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		return -errno;
	return 0;
}

/* With vnet, each message is the header then the frame; else the frame alone. */
static void tx_init_msgs(struct afp_wire *a)
{
	for (unsigned int i = 0; i < AFP_TX_BATCH; i++) {
		memset(&a->msgs[i], 0, sizeof(a->msgs[i]));
		a->iovs[i][0].iov_base = a->vhdrs[i];
		a->iovs[i][0].iov_len = AFP_VNET_LEN;
		a->msgs[i].msg_hdr.msg_iov = a->vnet ? &a->iovs[i][0] : &a->iovs[i][1];
		a->msgs[i].msg_hdr.msg_iovlen = a->vnet ? 2 : 1;
	}
}

static void afp_free(struct afp_wire *a)
{
	if (a->ring)
		munmap(a->ring, a->ring_len);
	if (a->fd >= 0)
		close(a->fd);
	if (a->pool.count)
		vnic_pkt_pool_fini(&a->pool);
	if (a->segpool.count)
		vnic_pkt_pool_fini(&a->segpool);
	free(a);
}

const char *vnic_afpacket_ring_name(enum vnic_afpacket_ring ring)
{
	switch (ring) {
	case VNIC_AFPACKET_RING_V2:
		return "v2";
	case VNIC_AFPACKET_RING_V3:
		return "v3";
	}
	return "unknown";
}

int vnic_afpacket_create(struct vnic_wire **w, const char *ifname,
			 const struct vnic_afpacket_config *cfg, struct vnic_cpu *rx_cpu)
{
	struct afp_wire *a;
	uint32_t mtu;
	int err;

	if (!w)
		return -EINVAL;
	*w = NULL;
	if (!ifname || !cfg || !rx_cpu)
		return -EINVAL;
	mtu = cfg->mtu;
	if (mtu < AFP_MIN_MTU || mtu > VNIC_CABLE_MAX_MTU)
		return -EINVAL;
	if (cfg->ring != VNIC_AFPACKET_RING_V2 && cfg->ring != VNIC_AFPACKET_RING_V3)
		return -EINVAL;
	a = aligned_alloc(VNIC_CACHELINE, sizeof(*a));
	if (!a)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->version = cfg->ring == VNIC_AFPACKET_RING_V2 ? TPACKET_V2 : TPACKET_V3;
	a->vnet = cfg->vnet_hdr;
	a->tx_slots = a->vnet ? AFP_TX_SLOTS_VNET : AFP_TX_SLOTS;
	a->wire.ops = &afp_wire_ops;
	a->wire.priv = a;
	a->wire.mtu = mtu;
	a->wire.frame_size = mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
	a->wire.gso_max_size = a->vnet ? VNIC_PKT_MAX_LEN : 0;
	/* commit sends before it returns: a superframe's payload may stay where it is */
	a->wire.tx_frags = a->vnet;
	a->rx_max = a->vnet ? VNIC_PKT_MAX_LEN : a->wire.frame_size;
	/* what the kernel's GRO or a local TSO sender hands us, whole if the device takes it */
	a->wire.rx_gso_max_size = a->vnet ? VNIC_PKT_MAX_LEN : 0;
	err = make_socket(a, ifname, cfg->netns_fd);
	if (err)
		goto err_free;
	err = open_socket(a);
	if (err)
		goto err_free;
	err = vnic_pkt_pool_init(&a->pool, a->tx_slots,
				 a->vnet ? VNIC_PKT_MAX_LEN : a->wire.frame_size, 0);
	if (err)
		goto err_free;
	if (vnic_pkt_alloc_bulk(&a->pool, a->slots, a->tx_slots) != a->tx_slots) {
		err = -ENOMEM;
		goto err_free;
	}
	if (a->vnet) {
		err = vnic_pkt_pool_init(&a->segpool, AFP_RX_SEGS, a->wire.frame_size, 0);
		if (err)
			goto err_free;
		if (vnic_pkt_alloc_bulk(&a->segpool, a->segs, AFP_RX_SEGS) != AFP_RX_SEGS) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	tx_init_msgs(a);
	snprintf(a->name, sizeof(a->name), "afp-%s", ifname);
	err = vnic_fd_irq_init(&a->irq, rx_cpu, &a->wire, a->fd, a->name,
			       &a->rx.notifies, afp_irq_ready);
	if (err)
		goto err_free;
	err = vnic_fd_irq_spin_init(&a->irq, rx_cpu);
	if (err)
		goto err_free;
	*w = &a->wire;
	return 0;

err_free:
	afp_free(a);
	return err;
}

void vnic_afpacket_destroy(struct vnic_wire *w)
{
	if (w)
		afp_free(to_afp(w));
}

void vnic_afpacket_stats(const struct vnic_wire *w, struct vnic_afpacket_stats *st)
{
	struct afp_wire *a = vnic_container_of((struct vnic_wire *)w, struct afp_wire, wire);
	struct tpacket_stats_v3 ks;
	socklen_t len = sizeof(ks);

	/* the kernel's ring-full drops; reading them resets them: accumulate */
	memset(&ks, 0, sizeof(ks));
	if (getsockopt(a->fd, SOL_PACKET, PACKET_STATISTICS, &ks, &len) == 0 && ks.tp_drops)
		__atomic_fetch_add(&a->rx.kernel_drops, ks.tp_drops, __ATOMIC_RELAXED);
	memset(st, 0, sizeof(*st));
	st->rx_frames = vnic_ctr_read(&a->rx.frames);
	st->rx_bytes = vnic_ctr_read(&a->rx.bytes);
	st->rx_drop_too_big = vnic_ctr_read(&a->rx.drop_too_big);
	st->rx_drop_truncated = vnic_ctr_read(&a->rx.drop_truncated);
	st->rx_kernel_drops = vnic_ctr_read(&a->rx.kernel_drops);
	st->rx_blocks = vnic_ctr_read(&a->rx.blocks);
	st->rx_notifies = vnic_ctr_read(&a->rx.notifies);
	st->rx_csum_fixed = vnic_ctr_read(&a->rx.csum_fixed);
	st->rx_gso_frames = vnic_ctr_read(&a->rx.gso_frames);
	st->rx_gso_segments = vnic_ctr_read(&a->rx.gso_segments);
	st->rx_gso_whole = vnic_ctr_read(&a->rx.gso_whole);
	st->rx_drop_gso = vnic_ctr_read(&a->rx.drop_gso);
	st->tx_frames = vnic_ctr_read(&a->tx.frames);
	st->tx_bytes = vnic_ctr_read(&a->tx.bytes);
	st->tx_drop_mtu = vnic_ctr_read(&a->tx.drop_mtu);
	st->tx_drop_kernel = vnic_ctr_read(&a->tx.drop_kernel);
	st->tx_syscalls = vnic_ctr_read(&a->tx.syscalls);
	st->tx_full = vnic_ctr_read(&a->tx.full);
	st->tx_gso_frames = vnic_ctr_read(&a->tx.gso_frames);
	st->tx_drop_gso = vnic_ctr_read(&a->tx.drop_gso);
	st->tx_gso_frags = vnic_ctr_read(&a->tx.gso_frags);
}

unsigned int vnic_afpacket_counters(const struct vnic_wire *w, struct vnic_counter *out,
				    unsigned int max)
{
	struct vnic_afpacket_stats st;
	unsigned int n = 0;

	vnic_afpacket_stats(w, &st);
#define C(f) vnic_counter_put(out, max, &n, #f, st.f)
	C(rx_frames);
	C(rx_bytes);
	C(rx_drop_too_big);
	C(rx_drop_truncated);
	C(rx_kernel_drops);
	C(rx_blocks);
	C(rx_notifies);
	C(rx_csum_fixed);
	C(rx_gso_frames);
	C(rx_gso_segments);
	C(rx_gso_whole);
	C(rx_drop_gso);
	C(tx_frames);
	C(tx_bytes);
	C(tx_drop_mtu);
	C(tx_drop_kernel);
	C(tx_syscalls);
	C(tx_full);
	C(tx_gso_frames);
	C(tx_drop_gso);
	C(tx_gso_frags);
#undef C
	return n;
}
