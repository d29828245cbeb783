// SPDX-License-Identifier: MIT
/*
 * GRO rules for TCP over IPv4 and IPv6, after Linux's inet_gro_receive,
 * ipv6_gro_receive and tcp_gro_receive (docs/MECHANISMS.md section 3). gro.c owns
 * the flow table; this file reads the headers, decides whether a segment may
 * be appended to a held one, and turns a finished aggregate into a
 * superpacket that vnic_gso_segment() would cut back into the same segments.
 *
 * Header fields are read byte by byte: frames carry no alignment promise.
 */
#include <string.h>

#include "gro_int.h"

enum {
	IP4_HLEN = 20,
	IP6_HLEN = 40,
	TCP_HLEN = 20,
	TCP_CSUM_OFF = 16,
	IP4_DF = 0x4000,
	IP4_OFFMASK = 0x1fff,
	IP6_FRAG_OFFMASK = 0xfff8,
	/* IPv4 total length and IPv6 payload length are 16-bit fields. */
	IP_LEN_MAX = 0xffff,
	/* A change of these between segments does not stop a merge: TSO puts CWR
	 * on the first segment only and FIN/PSH on the last only. */
	TCP_FLAGS_MERGEABLE = VNIC_TCP_CWR | VNIC_TCP_FIN | VNIC_TCP_PSH,
	/* A segment with any of these ends its aggregate (or is never held). */
	TCP_FLAGS_FINAL = VNIC_TCP_URG | VNIC_TCP_PSH | VNIC_TCP_RST | VNIC_TCP_SYN | VNIC_TCP_FIN,
};

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * Reads the TCP header at cb->l4_off, l4_len bytes of L4 data being present.
 * False when the segment cannot be held: short or bad data offset, or no
 * payload (pure ACKs and bare control segments go up on their own).
 */
static bool tcp_parse(const struct vnic_pkt *pkt, struct vnic_gro_cb *cb, uint32_t l4_len)
{
	const uint8_t *th = pkt->data + cb->l4_off;
	uint32_t doff;

	if (l4_len < TCP_HLEN)
		return false;
	doff = (th[12] >> 4) * 4u;
	if (doff < TCP_HLEN || doff >= l4_len)
		return false;
	cb->hdr_len = (uint16_t)(cb->l4_off + doff);
	cb->payload_len = l4_len - doff;
	cb->tcp_flags = th[13];
	cb->final = (th[13] & TCP_FLAGS_FINAL) != 0;
	return true;
}

/*
 * GSO input passes through rather than merging: Linux merges it only with an
 * equal gso_size, and nothing upstream of our receive path produces it.
 */
static inline bool gso_input_ok(const struct vnic_pkt *pkt)
{
	return !pkt->gso_type && !pkt->gso_size;
}

/*
 * A NONE checksum is verified here, once: a corrupt segment must not vanish
 * inside an aggregate whose checksum is then declared good. The sum over the
 * segment including its checksum field folds to zero when it is right.
 */
static bool tcp_csum_ok(const struct vnic_pkt *pkt, const struct vnic_gro_cb *cb,
			vnic_wsum_t pseudo)
{
	uint32_t l4_len = cb->hdr_len - cb->l4_off + cb->payload_len;

	if (pkt->ip_summed != VNIC_CSUM_NONE)
		return true;
	return vnic_csum_fold(vnic_csum_partial(pkt->data + cb->l4_off, l4_len, pseudo)) == 0;
}

/*
 * Linux compares the whole 32-bit word at offset 12 except CWR/FIN/PSH: data
 * offset, reserved bits, the other flags and the window. Then the ACK, then
 * every option byte (timestamps included, so a new TSval splits aggregates).
 */
static bool tcp_can_merge(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			  const struct vnic_gro_cb *cb)
{
	const uint8_t *a = held->data + cb->l4_off, *b = pkt->data + cb->l4_off;
	uint32_t thlen = cb->hdr_len - cb->l4_off;
	uint32_t mss = held->gso_size;

	if (held->len <= cb->hdr_len)
		return false;
	if (b[13] & VNIC_TCP_CWR)
		return false;
	if (a[12] != b[12] || ((a[13] ^ b[13]) & ~TCP_FLAGS_MERGEABLE) ||
	    rd16(a + 14) != rd16(b + 14))
		return false;
	if (rd32(a + 8) != rd32(b + 8))
		return false;
	if (memcmp(a + TCP_HLEN, b + TCP_HLEN, thlen - TCP_HLEN))
		return false;
	if (cb->payload_len > mss)
		return false;
	if (rd32(a + 4) + (held->len - cb->hdr_len) != rd32(b + 4))
		return false;
	/* Keep the aggregate re-segmentable: vnic_gso_segment() caps segments. */
	return held->gso_segs < VNIC_GSO_MAX_SEGS;
}

static void tcp_merged(struct vnic_pkt *held, const struct vnic_gro_cb *cb)
{
	held->data[cb->l4_off + 13] |= cb->tcp_flags & (VNIC_TCP_FIN | VNIC_TCP_PSH);
}

/*
 * The superpacket's TCP checksum field holds the pseudo-header sum over the
 * aggregate's L4 length, not inverted, for CHECKSUM_PARTIAL (as Linux's
 * tcp4_gro_complete): whoever finishes the checksum sums from csum_start on.
 */
static void tcp_complete(struct vnic_pkt *pkt, uint16_t l3_off, uint16_t l4_off, vnic_wsum_t pseudo,
			 uint16_t gso_type, uint16_t l3_proto)
{
	uint8_t *th = pkt->data + l4_off;
	uint16_t check = (uint16_t)~vnic_csum_fold(pseudo);

	memcpy(th + TCP_CSUM_OFF, &check, sizeof(check));
	pkt->gso_type = gso_type | ((th[13] & VNIC_TCP_CWR) ? VNIC_GSO_TCP_ECN : 0);
	pkt->ip_summed = VNIC_CSUM_PARTIAL;
	pkt->csum_start = l4_off;
	pkt->csum_offset = TCP_CSUM_OFF;
	pkt->csum_level = 0;
	pkt->csum = 0;
	/* Leave it parsed, so the superpacket can go straight to segmentation. */
	pkt->l2_len = l3_off;
	pkt->l3_len = (uint16_t)(l4_off - l3_off);
	pkt->l4_len = (uint16_t)((th[12] >> 4) * 4u);
	pkt->l3_proto = l3_proto;
	pkt->l4_proto = VNIC_IPPROTO_TCP;
	pkt->flags |= VNIC_PKT_F_PARSED;
}

/* ---------------------------------------------------------------------------
 * TCP over IPv4
 * ------------------------------------------------------------------------- */

static void tcp4_parse(const struct vnic_pkt *pkt, struct vnic_gro_cb *cb)
{
	const uint8_t *ip = pkt->data + cb->l3_off;
	uint32_t avail = pkt->len - cb->l3_off;
	uint32_t ihl, tot, frag;

	if (avail < IP4_HLEN || (ip[0] >> 4) != 4 || ip[9] != VNIC_IPPROTO_TCP)
		return;
	ihl = (ip[0] & 0xfu) * 4u;
	if (ihl < IP4_HLEN || ihl > avail)
		return;

	/* TCP from here on: if it cannot be held, its flow is still completed. */
	cb->kind = VNIC_GRO_KIND_FLOW;
	frag = rd16(ip + 6);
	if (!(frag & IP4_OFFMASK) && avail >= ihl + 4)
		cb->l4_off = (uint16_t)(cb->l3_off + ihl);

	tot = rd16(ip + 2);
	/* No options, no fragment (nor the reserved bit), no trailing padding,
	 * and a good header checksum, as inet_gro_receive demands. */
	if (ihl != IP4_HLEN || (frag & ~IP4_DF) || tot != avail || !vnic_csum_ip4_ok(ip, IP4_HLEN))
		return;
	if (!gso_input_ok(pkt))
		return;
	if (!tcp_parse(pkt, cb, tot - IP4_HLEN))
		return;
	if (!tcp_csum_ok(pkt, cb,
			 vnic_csum_pseudo4(ip + 12, ip + 16, VNIC_IPPROTO_TCP, tot - IP4_HLEN)))
		return;
	cb->kind = VNIC_GRO_KIND_CANDIDATE;
}

static bool tcp4_same_flow(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			   const struct vnic_gro_cb *cb)
{
	const uint8_t *a = held->data + cb->l3_off, *b = pkt->data + cb->l3_off;

	if (held->len < (uint32_t)cb->l3_off + IP4_HLEN + TCP_HLEN)
		return false;
	if (memcmp(a + 12, b + 12, 8))
		return false;
	/* A later fragment has no ports: same hosts is enough to keep order. */
	return !cb->l4_off || memcmp(a + IP4_HLEN, pkt->data + cb->l4_off, 4) == 0;
}

static bool tcp4_can_merge(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			   const struct vnic_gro_cb *cb)
{
	const uint8_t *a = held->data + cb->l3_off, *b = pkt->data + cb->l3_off;

	/* TOS, TTL and DF equal; the ID counts up by one per segment. */
	if (a[1] != b[1] || a[8] != b[8] || ((a[6] ^ b[6]) & (IP4_DF >> 8)))
		return false;
	if (rd16(b + 4) != (uint16_t)(rd16(a + 4) + held->gso_segs))
		return false;
	if (held->len - cb->l3_off + cb->payload_len > IP_LEN_MAX)
		return false;
	return tcp_can_merge(held, pkt, cb);
}

static void tcp4_complete(struct vnic_pkt *pkt, uint16_t l3_off)
{
	uint8_t *ip = pkt->data + l3_off;
	uint32_t tot = pkt->len - l3_off;

	wr16(ip + 2, (uint16_t)tot);
	vnic_csum_ip4_set(ip, IP4_HLEN);
	tcp_complete(pkt, l3_off, (uint16_t)(l3_off + IP4_HLEN),
		     vnic_csum_pseudo4(ip + 12, ip + 16, VNIC_IPPROTO_TCP, tot - IP4_HLEN),
		     VNIC_GSO_TCPV4, VNIC_ETH_P_IP);
}

const struct vnic_gro_proto vnic_gro_tcp4_proto = {
	.ethertype = VNIC_ETH_P_IP,
	.max_frame_l3 = IP_LEN_MAX,
	.parse = tcp4_parse,
	.same_flow = tcp4_same_flow,
	.can_merge = tcp4_can_merge,
	.merged = tcp_merged,
	.complete = tcp4_complete,
};

/* ---------------------------------------------------------------------------
 * TCP over IPv6
 * ------------------------------------------------------------------------- */

/*
 * Finds TCP behind the extension headers, only so that a packet of a held
 * flow that carries them still completes that flow first. Returns the offset
 * of TCP from the IPv6 header, 0 if this is not TCP; *ports is false when a
 * later fragment hides them.
 */
static uint32_t ip6_find_tcp(const uint8_t *ip, uint32_t avail, bool *ports)
{
	uint32_t off = IP6_HLEN, n;
	uint8_t nh = ip[6];

	*ports = true;
	for (n = 0; nh != VNIC_IPPROTO_TCP; n++) {
		if (n == VNIC_IP6_MAX_EXT || avail < off + 8)
			return 0;
		switch (nh) {
		case VNIC_IPPROTO_HOPOPTS:
		case VNIC_IPPROTO_ROUTING:
		case VNIC_IPPROTO_DSTOPTS:
			nh = ip[off];
			off += (ip[off + 1] + 1u) * 8u;
			break;
		case VNIC_IPPROTO_FRAGMENT:
			if (rd16(ip + off + 2) & IP6_FRAG_OFFMASK)
				*ports = false;
			nh = ip[off];
			off += 8;
			break;
		default:
			return 0;
		}
	}
	return off;
}

static void tcp6_parse(const struct vnic_pkt *pkt, struct vnic_gro_cb *cb)
{
	const uint8_t *ip = pkt->data + cb->l3_off;
	uint32_t avail = pkt->len - cb->l3_off;
	uint32_t off;
	bool ports;

	if (avail < IP6_HLEN || (ip[0] >> 4) != 6)
		return;
	off = ip6_find_tcp(ip, avail, &ports);
	if (!off)
		return;

	cb->kind = VNIC_GRO_KIND_FLOW;
	if (ports && avail >= off + 4)
		cb->l4_off = (uint16_t)(cb->l3_off + off);

	/* TCP right after the fixed header, and no trailing padding. */
	if (off != IP6_HLEN || rd16(ip + 4) != avail - IP6_HLEN)
		return;
	if (!gso_input_ok(pkt))
		return;
	if (!tcp_parse(pkt, cb, avail - IP6_HLEN))
		return;
	if (!tcp_csum_ok(pkt, cb,
			 vnic_csum_pseudo6(ip + 8, ip + 24, VNIC_IPPROTO_TCP, avail - IP6_HLEN)))
		return;
	cb->kind = VNIC_GRO_KIND_CANDIDATE;
}

static bool tcp6_same_flow(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			   const struct vnic_gro_cb *cb)
{
	const uint8_t *a = held->data + cb->l3_off, *b = pkt->data + cb->l3_off;

	if (held->len < (uint32_t)cb->l3_off + IP6_HLEN + TCP_HLEN)
		return false;
	if (memcmp(a + 8, b + 8, 32))
		return false;
	return !cb->l4_off || memcmp(a + IP6_HLEN, pkt->data + cb->l4_off, 4) == 0;
}

static bool tcp6_can_merge(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			   const struct vnic_gro_cb *cb)
{
	const uint8_t *a = held->data + cb->l3_off, *b = pkt->data + cb->l3_off;

	/* Version, traffic class and flow label; hop limit. */
	if (memcmp(a, b, 4) || a[7] != b[7])
		return false;
	if (held->len - cb->l3_off - IP6_HLEN + cb->payload_len > IP_LEN_MAX)
		return false;
	return tcp_can_merge(held, pkt, cb);
}

static void tcp6_complete(struct vnic_pkt *pkt, uint16_t l3_off)
{
	uint8_t *ip = pkt->data + l3_off;
	uint32_t plen = pkt->len - l3_off - IP6_HLEN;

	wr16(ip + 4, (uint16_t)plen);
	tcp_complete(pkt, l3_off, (uint16_t)(l3_off + IP6_HLEN),
		     vnic_csum_pseudo6(ip + 8, ip + 24, VNIC_IPPROTO_TCP, plen), VNIC_GSO_TCPV6,
		     VNIC_ETH_P_IPV6);
}

const struct vnic_gro_proto vnic_gro_tcp6_proto = {
	.ethertype = VNIC_ETH_P_IPV6,
	.max_frame_l3 = IP6_HLEN + IP_LEN_MAX,
	.parse = tcp6_parse,
	.same_flow = tcp6_same_flow,
	.can_merge = tcp6_can_merge,
	.merged = tcp_merged,
	.complete = tcp6_complete,
};
