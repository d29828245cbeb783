// SPDX-License-Identifier: MIT
/*
 * Software segmentation, dispatcher: validates a superpacket's metadata
 * against its headers once, precomputes what every segment shares (IPv4
 * header sums, pseudo-header sums), then hands over to the per-type
 * segmenter (gso_tcp.c, gso_udp.c) chosen from a small table.
 *
 * Segments are plain copies: headers, then one MSS of payload. The copy is
 * what lets the caller free the superpacket right away; COMPLETE mode sums
 * the payload in the same pass (vnic_csum_copy), so the superpacket's bytes
 * are read once and only the header is summed apart.
 */
#include <errno.h>
#include <string.h>

#include "gso_int.h"

struct gso_ops {
	uint16_t gso_type;	/* base type, without VNIC_GSO_TCP_ECN */
	uint16_t l3_proto;	/* ethertype, or 0 for IPv4 and IPv6 */
	uint8_t l4_proto;
	uint8_t csum_off;	/* checksum field in the L4 header */
	bool ecn_ok;		/* may carry VNIC_GSO_TCP_ECN */
	int (*segment)(const struct vnic_gso_ctx *c);
};

static const struct gso_ops gso_table[] = {
	{ VNIC_GSO_TCPV4, VNIC_ETH_P_IP, VNIC_IPPROTO_TCP, 16, true, vnic_gso_tcp_segment },
	{ VNIC_GSO_TCPV6, VNIC_ETH_P_IPV6, VNIC_IPPROTO_TCP, 16, true, vnic_gso_tcp_segment },
	{ VNIC_GSO_UDP_L4, 0, VNIC_IPPROTO_UDP, 6, false, vnic_gso_udp_segment },
};

enum {
	IP4_HLEN_MIN = 20,
	IP4_HLEN_MAX = 60,
	IP6_HLEN = 40,
	TCP_HLEN_MIN = 20,
	TCP_HLEN_MAX = 60,
	UDP_HLEN = 8,
	IP4_FRAG_MASK = 0x3fff,	/* MF + fragment offset */
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static const struct gso_ops *find_ops(uint16_t gso_type)
{
	uint16_t base = gso_type & (uint16_t)~VNIC_GSO_TCP_ECN;

	for (size_t i = 0; i < sizeof(gso_table) / sizeof(gso_table[0]); i++) {
		const struct gso_ops *ops = &gso_table[i];

		if (ops->gso_type != base)
			continue;
		if ((gso_type & VNIC_GSO_TCP_ECN) && !ops->ecn_ok)
			return NULL;
		return ops;
	}
	return NULL;
}

/*
 * Extension headers are repeated verbatim in every segment, which is right for
 * hop-by-hop, routing and destination options but not for a fragment header
 * (nor AH/ESP, which cover the payload). The chain must end in the L4 header
 * the metadata names, exactly at l3_len.
 */
static bool ip6_chain_ok(const uint8_t *l3, uint32_t l3_len, uint8_t l4_proto)
{
	uint8_t nexthdr = l3[6];
	uint32_t off = IP6_HLEN;

	while (off < l3_len) {
		if (nexthdr != VNIC_IPPROTO_HOPOPTS && nexthdr != VNIC_IPPROTO_ROUTING &&
		    nexthdr != VNIC_IPPROTO_DSTOPTS)
			return false;
		if (l3_len - off < 8)
			return false;
		nexthdr = l3[off];
		off += (l3[off + 1] + 1u) * 8;
	}
	return off == l3_len && nexthdr == l4_proto;
}

/* The headers must be what the metadata claims, or the rewrite lands on the wrong bytes. */
static bool headers_match(const struct vnic_pkt *pkt, const struct gso_ops *ops)
{
	const uint8_t *l3 = pkt->data + pkt->l2_len;
	const uint8_t *l4 = l3 + pkt->l3_len;

	if (pkt->l2_len < VNIC_ETH_HLEN || pkt->l4_proto != ops->l4_proto)
		return false;
	if ((uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len > pkt->len ||
	    (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len > VNIC_MAX_HDRS)
		return false;

	switch (pkt->l3_proto) {
	case VNIC_ETH_P_IP:
		if (pkt->l3_len < IP4_HLEN_MIN || pkt->l3_len > IP4_HLEN_MAX ||
		    l3[0] != (0x40 | pkt->l3_len / 4) || pkt->l3_len % 4)
			return false;
		/* A fragment has no L4 header to repeat. */
		if (get16(l3 + 6) & IP4_FRAG_MASK || l3[9] != ops->l4_proto)
			return false;
		break;
	case VNIC_ETH_P_IPV6:
		if (pkt->l3_len < IP6_HLEN || l3[0] >> 4 != 6 ||
		    !ip6_chain_ok(l3, pkt->l3_len, ops->l4_proto))
			return false;
		break;
	default:
		return false;
	}
	if (ops->l3_proto && pkt->l3_proto != ops->l3_proto)
		return false;

	if (ops->l4_proto == VNIC_IPPROTO_TCP)
		return pkt->l4_len >= TCP_HLEN_MIN && pkt->l4_len <= TCP_HLEN_MAX &&
		       (l4[12] >> 4) * 4 == pkt->l4_len;
	return pkt->l4_len == UDP_HLEN;
}

static vnic_wsum_t pseudo_sum(const struct vnic_gso_ctx *c, uint32_t seg_len)
{
	const uint8_t *l3 = c->pkt->data + c->pkt->l2_len;
	uint32_t l4_total = c->pkt->l4_len + seg_len;
	uint8_t proto = c->pkt->l4_proto;

	if (c->ip4)
		return vnic_csum_pseudo4(l3 + 12, l3 + 16, proto, l4_total);
	return vnic_csum_pseudo6(l3 + 8, l3 + 24, proto, l4_total);
}

/* Sum of the IPv4 header as a segment of seg_len bytes has it, with ID and check zero. */
static vnic_wsum_t ip4_base_sum(const struct vnic_gso_ctx *c, uint32_t seg_len)
{
	uint8_t hdr[IP4_HLEN_MAX];
	uint32_t l3_len = c->pkt->l3_len;

	memcpy(hdr, c->pkt->data + c->pkt->l2_len, l3_len);
	put16(hdr + 2, (uint16_t)(l3_len + c->pkt->l4_len + seg_len));
	put16(hdr + 4, 0);
	put16(hdr + 10, 0);
	return vnic_csum_partial(hdr, l3_len, 0);
}

/*
 * Validates pkt and fills c (but for out, flags and the sums). scratch holds a parsed copy
 * of the metadata when pkt was not parsed, so pkt itself is never written.
 * Returns the ops for its type, or NULL for -EINVAL.
 */
static const struct gso_ops *prepare(const struct vnic_pkt *pkt, struct vnic_pkt *scratch,
				     struct vnic_gso_ctx *c)
{
	const struct gso_ops *ops;
	uint32_t max_seg, max_l4;

	if (pkt->gso_size == 0)
		return NULL;
	ops = find_ops(pkt->gso_type);
	if (!ops)
		return NULL;
	if (!(pkt->flags & VNIC_PKT_F_PARSED)) {
		*scratch = *pkt;
		scratch->next = NULL;
		if (vnic_parse_pkt(scratch) != VNIC_PARSE_OK ||
		    !(scratch->flags & VNIC_PKT_F_PARSED))
			return NULL;
		pkt = scratch;
	}
	if (!headers_match(pkt, ops))
		return NULL;

	memset(c, 0, sizeof(*c));
	c->pkt = pkt;
	c->l4_off = (uint32_t)pkt->l2_len + pkt->l3_len;
	c->hdr_len = c->l4_off + pkt->l4_len;
	/*
	 * The payload runs to pkt->len, as Linux segments up to skb->len: the
	 * IP and UDP length fields of a superpacket are rewritten, not trusted.
	 */
	c->payload_len = pkt->len - c->hdr_len;
	if (c->payload_len > VNIC_GSO_MAX_PAYLOAD)
		return NULL;
	c->mss = pkt->gso_size;
	/* A superpacket with no payload still becomes one (header-only) segment. */
	c->segs = c->payload_len ? (c->payload_len + c->mss - 1) / c->mss : 1;
	if (c->segs > VNIC_GSO_MAX_SEGS)
		return NULL;
	c->last_len = c->payload_len - (c->segs - 1) * c->mss;
	c->csum_off = ops->csum_off;
	c->ip4 = pkt->l3_proto == VNIC_ETH_P_IP;
	c->udp = ops->l4_proto == VNIC_IPPROTO_UDP;

	/* Every segment's 16-bit length fields must hold its size. */
	max_seg = c->segs > 1 ? c->mss : c->last_len;
	max_l4 = pkt->l4_len + max_seg;
	if (max_l4 + (c->ip4 ? pkt->l3_len : pkt->l3_len - IP6_HLEN) > 0xffff)
		return NULL;
	return ops;
}

/* What segments of full and last size share, summed once per superpacket. */
static void precompute(struct vnic_gso_ctx *c)
{
	c->pseudo_full = pseudo_sum(c, c->mss);
	c->pseudo_last = pseudo_sum(c, c->last_len);
	if (c->ip4) {
		c->ip4_id = get16(c->pkt->data + c->pkt->l2_len + 4);
		c->ip4_full = ip4_base_sum(c, c->mss);
		c->ip4_last = ip4_base_sum(c, c->last_len);
	}
}

int vnic_gso_count(const struct vnic_pkt *pkt)
{
	struct vnic_pkt scratch;
	struct vnic_gso_ctx c;

	if (pkt->gso_type == VNIC_GSO_NONE)
		return 1;
	if (!prepare(pkt, &scratch, &c))
		return -EINVAL;
	return (int)c.segs;
}

static uint32_t seg_payload_len(const struct vnic_gso_ctx *c, uint32_t i)
{
	return i + 1 < c->segs ? c->mss : c->last_len;
}

int vnic_gso_segment(const struct vnic_pkt *pkt, struct vnic_pkt **out, unsigned int n,
		     unsigned int flags)
{
	const struct gso_ops *ops;
	struct vnic_pkt scratch;
	struct vnic_gso_ctx c;
	uint32_t i;

	/* Nothing to segment: the caller sends a non-GSO packet as it is. */
	if (pkt->gso_type == VNIC_GSO_NONE || flags & ~(unsigned int)VNIC_GSO_F_CSUM_PARTIAL)
		return -EINVAL;
	ops = prepare(pkt, &scratch, &c);
	if (!ops)
		return -EINVAL;
	if (c.segs > n)
		return -ENOSPC;
	/* Check every output before writing any, so a failure leaves them untouched. */
	for (i = 0; i < c.segs; i++) {
		const struct vnic_pkt *seg = out[i];

		if (!seg || seg == pkt)
			return -EINVAL;
		if (c.hdr_len + seg_payload_len(&c, i) > seg->buf_size - vnic_pkt_headroom(seg))
			return -ENOSPC;
	}
	precompute(&c);
	c.out = out;
	c.flags = flags;
	return ops->segment(&c);
}

uint32_t vnic_gso_seg_build(const struct vnic_gso_ctx *c, uint32_t i, vnic_wsum_t *payload_sum)
{
	const struct vnic_pkt *pkt = c->pkt;
	struct vnic_pkt *seg = c->out[i];
	uint32_t len = seg_payload_len(c, i);
	uint8_t *l3 = seg->data + pkt->l2_len;
	const uint8_t *payload = pkt->data + c->hdr_len + (size_t)i * c->mss;

	memcpy(seg->data, pkt->data, c->hdr_len);
	/* COMPLETE sums the payload as it copies it: one read of the superpacket */
	if (c->flags & VNIC_GSO_F_CSUM_PARTIAL) {
		memcpy(seg->data + c->hdr_len, payload, len);
		*payload_sum = 0;
	} else {
		*payload_sum = vnic_csum_copy(seg->data + c->hdr_len, payload, len, 0);
	}

	if (c->ip4) {
		vnic_wsum_t sum = len == c->mss ? c->ip4_full : c->ip4_last;
		uint16_t id_raw, check;

		put16(l3 + 2, (uint16_t)(pkt->l3_len + pkt->l4_len + len));
		put16(l3 + 4, (uint16_t)(c->ip4_id + i));
		/* The rest of the header is unchanged, so only the ID word is new to the sum. */
		memcpy(&id_raw, l3 + 4, sizeof(id_raw));
		check = vnic_csum_fold(vnic_csum_add(sum, id_raw));
		memcpy(l3 + 10, &check, sizeof(check));
	} else {
		put16(l3 + 4, (uint16_t)(pkt->l3_len - IP6_HLEN + pkt->l4_len + len));
	}

	seg->len = c->hdr_len + len;
	seg->next = NULL;
	seg->hash = pkt->hash;
	seg->flags = VNIC_PKT_F_PARSED | (pkt->flags & VNIC_PKT_F_VLAN);
	seg->vlan_tci = pkt->vlan_tci;
	seg->l2_len = pkt->l2_len;
	seg->l3_len = pkt->l3_len;
	seg->l4_len = pkt->l4_len;
	seg->l3_proto = pkt->l3_proto;
	seg->l4_proto = pkt->l4_proto;
	seg->gso_type = VNIC_GSO_NONE;
	seg->gso_size = 0;
	seg->gso_segs = 0;
	seg->csum = 0;
	seg->csum_level = 0;
	return len;
}

void vnic_gso_seg_csum(const struct vnic_gso_ctx *c, uint32_t i, vnic_wsum_t payload_sum)
{
	struct vnic_pkt *seg = c->out[i];
	uint8_t *l4 = seg->data + c->l4_off;
	vnic_wsum_t pseudo = i + 1 < c->segs ? c->pseudo_full : c->pseudo_last;
	uint16_t check;

	if (c->flags & VNIC_GSO_F_CSUM_PARTIAL) {
		/* Leave the device (or vnic_csum_help) the pseudo-header sum. */
		check = (uint16_t)~vnic_csum_fold(pseudo);
		seg->ip_summed = VNIC_CSUM_PARTIAL;
		seg->csum_start = (uint16_t)c->l4_off;
		seg->csum_offset = c->csum_off;
	} else {
		/*
		 * The header, then the payload's sum from the copy: the L4
		 * header length is even (TCP: 4-byte words, UDP: 8), so the
		 * payload starts on the header's 16-bit word grid.
		 */
		put16(l4 + c->csum_off, 0);
		pseudo = vnic_csum_partial(l4, c->hdr_len - c->l4_off, pseudo);
		check = vnic_csum_fold(vnic_csum_add(pseudo, payload_sum));
		/* RFC 768: a computed 0 goes out as all ones (0 means "none"). */
		if (c->udp && check == 0)
			check = 0xffff;
		seg->ip_summed = VNIC_CSUM_NONE;
		seg->csum_start = 0;
		seg->csum_offset = 0;
	}
	memcpy(l4 + c->csum_off, &check, sizeof(check));
}
