// SPDX-License-Identifier: MIT
/*
 * The vnet header of a TAP (struct virtio_net_hdr_v1, docs/MECHANISMS.md
 * section 5) to packet metadata and back. Pure functions: no I/O.
 *
 * Reading (kernel -> vnic): the kernel fills the header from the skb
 * (virtio_net_hdr_from_skb): CHECKSUM_PARTIAL gives NEEDS_CSUM, a GSO skb its
 * type and size. Nothing from outside is trusted, the kernel included: every
 * offset is checked against the frame, and every combination the device
 * could not act on is refused by name before it reaches xmit.
 *
 * Writing (vnic -> kernel): the kernel's write path (virtio_net_hdr_to_skb)
 * turns NEEDS_CSUM into CHECKSUM_PARTIAL and requires it with GSO.
 */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "port.h"

static_assert(sizeof(struct vnic_vnet_hdr) == VNIC_VNET_HDR_LEN, "virtio_net_hdr_v1 is 12 bytes");
static_assert(offsetof(struct vnic_vnet_hdr, csum_offset) == 8, "virtio_net_hdr layout");

enum { TCP_CSUM_OFF = 16, UDP_CSUM_OFF = 6 };

static const char *const drop_names[VNIC_TAP_DROP_MAX] = {
	[VNIC_TAP_DROP_NONE] = "none",
	[VNIC_TAP_DROP_RUNT] = "runt",
	[VNIC_TAP_DROP_BAD_FLAGS] = "bad_flags",
	[VNIC_TAP_DROP_GSO_TYPE] = "gso_type",
	[VNIC_TAP_DROP_GSO_NO_CSUM] = "gso_no_csum",
	[VNIC_TAP_DROP_GSO_SIZE] = "gso_size",
	[VNIC_TAP_DROP_CSUM_START] = "csum_start",
	[VNIC_TAP_DROP_CSUM_OFFSET] = "csum_offset",
	[VNIC_TAP_DROP_HDR_LEN] = "hdr_len",
	[VNIC_TAP_DROP_BAD_HEADERS] = "bad_headers",
	[VNIC_TAP_DROP_GSO_MISMATCH] = "gso_mismatch",
};

const char *vnic_tap_drop_name(unsigned int reason)
{
	return reason < VNIC_TAP_DROP_MAX ? drop_names[reason] : "unknown";
}

/* The vnet GSO type (without ECN) as vnic's, 0 if vnic has no such type. */
static uint16_t gso_from_vnet(uint8_t t)
{
	switch (t) {
	case VNIC_VNET_GSO_TCPV4:
		return VNIC_GSO_TCPV4;
	case VNIC_VNET_GSO_TCPV6:
		return VNIC_GSO_TCPV6;
	case VNIC_VNET_GSO_UDP_L4:
		return VNIC_GSO_UDP_L4;
	default:
		/* UFO (3) was removed from Linux; the tunnel bits need a 24-byte header */
		return 0;
	}
}

static void fill_parsed(struct vnic_pkt *pkt, const struct vnic_hdrs *h)
{
	pkt->l2_len = h->l2_len;
	pkt->l3_proto = h->l3_proto;
	pkt->l3_len = h->l3_len;
	/* as vnic_parse_pkt: l4_proto promises a header at l2_len + l3_len */
	pkt->l4_proto = (h->flags & VNIC_HDRS_F_L4) ? h->l4_proto : 0;
	pkt->l4_len = h->l4_len;
	pkt->flags |= VNIC_PKT_F_PARSED;
}

/* The checksum field the device offloads for this L4, 0 if none. */
static uint16_t l4_csum_off(const struct vnic_pkt *pkt)
{
	if (!(pkt->flags & VNIC_PKT_F_PARSED))
		return 0;
	if (pkt->l4_proto == VNIC_IPPROTO_TCP)
		return TCP_CSUM_OFF;
	if (pkt->l4_proto == VNIC_IPPROTO_UDP)
		return UDP_CSUM_OFF;
	return 0;
}

/* csum_start/offset name the frame's own TCP or UDP checksum field. */
static bool csum_is_l4(const struct vnic_pkt *pkt, uint16_t start, uint16_t off)
{
	uint16_t want = l4_csum_off(pkt);

	return want && start == pkt->l2_len + pkt->l3_len && off == want;
}

/*
 * Everything checked before the frame is looked at: only the header's own
 * consistency and its offsets against the frame length.
 */
static enum vnic_tap_drop check_hdr(const struct vnic_vnet_hdr *h, uint32_t len, uint16_t *gso)
{
	uint8_t type = h->gso_type & (uint8_t)~VNIC_VNET_GSO_ECN;
	bool ecn = h->gso_type & VNIC_VNET_GSO_ECN;
	bool needs_csum = h->flags & VNIC_VNET_F_NEEDS_CSUM;
	uint32_t start = le16toh(h->csum_start), off = le16toh(h->csum_offset);

	*gso = 0;
	if (len < VNIC_ETH_HLEN)
		return VNIC_TAP_DROP_RUNT;
	/* RSC_INFO is meaningful only from a device; tunnel csum needs a 24-byte header */
	if (h->flags & ~(VNIC_VNET_F_NEEDS_CSUM | VNIC_VNET_F_DATA_VALID))
		return VNIC_TAP_DROP_BAD_FLAGS;
	if (type != VNIC_VNET_GSO_NONE) {
		*gso = gso_from_vnet(type);
		if (!*gso)
			return VNIC_TAP_DROP_GSO_TYPE;
		/* ECN is a TCP flag (SKB_GSO_TCP_ECN) */
		if (ecn && *gso == VNIC_GSO_UDP_L4)
			return VNIC_TAP_DROP_GSO_TYPE;
		if (ecn)
			*gso |= VNIC_GSO_TCP_ECN;
		/* segmenting means rewriting every segment's checksum */
		if (!needs_csum)
			return VNIC_TAP_DROP_GSO_NO_CSUM;
		if (!le16toh(h->gso_size))
			return VNIC_TAP_DROP_GSO_SIZE;
	} else if (ecn) {
		return VNIC_TAP_DROP_GSO_TYPE;
	}
	if (needs_csum) {
		if (start >= len)
			return VNIC_TAP_DROP_CSUM_START;
		if (start + off + 2 > len)
			return VNIC_TAP_DROP_CSUM_OFFSET;
	}
	if (le16toh(h->hdr_len) > len)
		return VNIC_TAP_DROP_HDR_LEN;
	return VNIC_TAP_DROP_NONE;
}

enum vnic_tap_drop vnic_vnet_parse(const struct vnic_vnet_hdr *h, struct vnic_pkt *pkt,
				   const uint8_t *rss_key)
{
	bool needs_csum = h->flags & VNIC_VNET_F_NEEDS_CSUM;
	uint16_t start = le16toh(h->csum_start), off = le16toh(h->csum_offset);
	enum vnic_tap_drop why;
	struct vnic_hdrs hdrs;
	uint16_t gso;
	int segs;

	why = check_hdr(h, pkt->len, &gso);
	if (vnic_unlikely(why))
		return why;

	pkt->ip_summed = VNIC_CSUM_NONE;
	pkt->gso_type = VNIC_GSO_NONE;
	pkt->gso_size = 0;
	pkt->gso_segs = 0;
	pkt->hash = 0;
	if (vnic_parse_frame(pkt->data, pkt->len, &hdrs) == VNIC_PARSE_OK) {
		fill_parsed(pkt, &hdrs);
		if (rss_key)
			pkt->hash = vnic_rss_hash_frame(rss_key, pkt->data, &hdrs);
	} else if (needs_csum || gso) {
		/* the offload would act on headers nobody can find */
		return VNIC_TAP_DROP_BAD_HEADERS;
	}
	if (!needs_csum)
		return VNIC_TAP_DROP_NONE; /* DATA_VALID or nothing: the frame is complete */

	pkt->ip_summed = VNIC_CSUM_PARTIAL;
	pkt->csum_start = start;
	pkt->csum_offset = off;
	if (gso) {
		/* the device segments the frame's L4 and sums it itself */
		if (!csum_is_l4(pkt, start, off))
			return VNIC_TAP_DROP_GSO_MISMATCH;
		pkt->gso_type = gso;
		pkt->gso_size = le16toh(h->gso_size);
		segs = vnic_gso_count(pkt);
		if (segs < 1)
			return VNIC_TAP_DROP_GSO_MISMATCH;
		if (segs > 1) {
			pkt->gso_segs = (uint16_t)segs;
			return VNIC_TAP_DROP_NONE;
		}
		/* not larger than one segment: a plain packet, as the kernel treats it */
		pkt->gso_type = VNIC_GSO_NONE;
		pkt->gso_size = 0;
	}
	/*
	 * The kernel's checksum offload here is generic (NETIF_F_HW_CSUM): a
	 * region other than the TCP/UDP checksum (ICMP, a tunnel) is summed
	 * now, since the device offloads only those two.
	 */
	if (!csum_is_l4(pkt, start, off) && vnic_csum_help(pkt))
		return VNIC_TAP_DROP_CSUM_OFFSET;
	return VNIC_TAP_DROP_NONE;
}

static uint8_t gso_to_vnet(uint16_t gso)
{
	uint8_t t;

	switch (gso & (uint16_t)~VNIC_GSO_TCP_ECN) {
	case VNIC_GSO_TCPV4:
		t = VNIC_VNET_GSO_TCPV4;
		break;
	case VNIC_GSO_TCPV6:
		t = VNIC_VNET_GSO_TCPV6;
		break;
	case VNIC_GSO_UDP_L4:
		if (gso & VNIC_GSO_TCP_ECN)
			return 0;
		return VNIC_VNET_GSO_UDP_L4;
	default:
		return 0;
	}
	return gso & VNIC_GSO_TCP_ECN ? (uint8_t)(t | VNIC_VNET_GSO_ECN) : t;
}

/*
 * A GSO packet whose checksum is complete becomes PARTIAL: the field gets
 * the folded, non-inverted pseudo-header sum over the L4 length, which is
 * what CHECKSUM_PARTIAL means (net.h).
 */
static int make_partial(struct vnic_pkt *pkt)
{
	uint16_t coff = l4_csum_off(pkt);

	if (!coff)
		return -EINVAL;
	return vnic_csum_make_partial(pkt, (uint32_t)pkt->l2_len + pkt->l3_len, coff);
}

int vnic_vnet_build(struct vnic_pkt *pkt, struct vnic_vnet_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (pkt->gso_type != VNIC_GSO_NONE) {
		uint8_t t = gso_to_vnet(pkt->gso_type);
		uint32_t hdr_len;

		if (!t || !pkt->gso_size)
			return -EINVAL;
		if (!(pkt->flags & VNIC_PKT_F_PARSED) && vnic_parse_pkt(pkt) != VNIC_PARSE_OK)
			return -EINVAL;
		hdr_len = (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len;
		if (!pkt->l4_len || hdr_len > pkt->len)
			return -EINVAL;
		if ((pkt->l4_proto == VNIC_IPPROTO_TCP) != (t != VNIC_VNET_GSO_UDP_L4))
			return -EINVAL;
		if (pkt->ip_summed != VNIC_CSUM_PARTIAL && make_partial(pkt))
			return -EINVAL;
		h->gso_type = t;
		h->gso_size = htole16(pkt->gso_size);
		h->hdr_len = htole16((uint16_t)hdr_len);
	}
	if (pkt->ip_summed == VNIC_CSUM_PARTIAL) {
		h->flags = VNIC_VNET_F_NEEDS_CSUM;
		h->csum_start = htole16(pkt->csum_start);
		h->csum_offset = htole16(pkt->csum_offset);
	} else if (pkt->ip_summed == VNIC_CSUM_UNNECESSARY) {
		h->flags = VNIC_VNET_F_DATA_VALID;
	}
	return 0;
}

unsigned int vnic_tap_offloads(uint32_t features, bool big_bufs)
{
	/* values of uapi if_tun.h; USO4/6 are missing from Debian 12's copy */
	enum {
		F_CSUM = 0x01,
		F_TSO4 = 0x02,
		F_TSO6 = 0x04,
		F_TSO_ECN = 0x08,
		F_USO4 = 0x20,
		F_USO6 = 0x40
	};
	unsigned int f = 0;

	/* every GSO offload needs checksum offload (tun's set_offload) */
	if (!(features & VNIC_NETIF_F_CSUM))
		return 0;
	f |= F_CSUM;
	if (!big_bufs)
		return f;
	if (features & VNIC_NETIF_F_TSO4)
		f |= F_TSO4;
	if (features & VNIC_NETIF_F_TSO6)
		f |= F_TSO6;
	/* vnic's segmentation keeps CWR on the first segment only: ECN-safe */
	if (f & (F_TSO4 | F_TSO6))
		f |= F_TSO_ECN;
	if (features & VNIC_NETIF_F_USO)
		f |= F_USO4 | F_USO6;
	return f;
}
