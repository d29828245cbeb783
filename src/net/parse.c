// SPDX-License-Identifier: MIT
/*
 * Header parsing: Ethernet, up to two VLAN tags, ARP, IPv4 with options, IPv6
 * with extension headers, TCP with options, UDP, ICMP and ICMPv6.
 *
 * Every read is preceded by a check against the bytes that remain, written as
 * "end - off < need" so that nothing can overflow, and every multi-byte field
 * is read byte by byte: frames may sit at any alignment.
 *
 * What struct vnic_hdrs holds after VNIC_PARSE_OK, beyond net.h:
 * - l4_off and payload_off are set even when no L4 header was parsed: l4_off is
 *   where the L4 header would start (l3_off + l3_len), payload_off = l4_off and
 *   payload_len is the whole L3 payload. That covers non-first fragments,
 *   IPv6 No Next Header and protocols we do not parse.
 * - payload_off + payload_len + trailer_len == len for every accepted frame.
 *   For an unknown ethertype everything after L2 is payload; for ARP the
 *   payload is empty and the bytes after the 28-byte body are trailer.
 * - l4_proto is the final protocol number even when its header was not parsed
 *   (the protocol of a non-first fragment, 59 for No Next Header);
 *   VNIC_HDRS_F_L4 says whether l4_len/payload_off describe a parsed header.
 * - A UDP length shorter than the L3 payload is accepted: the bytes after the
 *   datagram are counted in trailer_len, since a receiver trims them like
 *   Ethernet padding (RFC 768 makes the UDP length authoritative).
 * - In a first fragment the UDP length describes the whole datagram, which
 *   does not fit in the fragment: it must be at least the bytes present, and
 *   payload_len is what this fragment carries.
 * - ICMP and ICMPv6 both need 8 bytes: type, code, checksum and the 32-bit
 *   word every defined message has after it (echo id/seq, the unused/MTU/
 *   pointer word of RFC 4443 errors, the reserved word of RFC 4861 ND).
 * - An IPv6 atomic fragment (offset 0, M clear, RFC 6946) is a whole packet:
 *   no VNIC_HDRS_F_FRAG, the L4 header is parsed.
 * - On an error, h is partly filled up to the layer that failed.
 */
#include <string.h>

#include "net.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

enum {
	ARP_HDR_LEN = 28,	/* Ethernet/IPv4 ARP: 8 fixed + 2 * (6 + 4) */
	IP4_MIN_HLEN = 20,
	IP6_HLEN = 40,
	IP6_EXT_MIN = 8,	/* extension lengths count in 8-octet units */
	IP6_FRAG_HLEN = 8,
	IP6_MAXPLEN = 65535,
	TCP_MIN_HLEN = 20,
	UDP_HLEN = 8,
	ICMP_HLEN = 8,
	OPT_EOL = 0,		/* same values for IPv4 and TCP options */
	OPT_NOP = 1,
};

/* Network order to host order, without assuming alignment. */
static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static enum vnic_parse_err parse_eth(const uint8_t *f, uint32_t len, struct vnic_hdrs *h)
{
	uint32_t off = VNIC_ETH_HLEN;
	uint16_t type;

	if (unlikely(len < VNIC_ETH_HLEN))
		return VNIC_PARSE_ETH_TRUNC;
	type = rd16(f + 12);
	while (type == VNIC_ETH_P_8021Q || type == VNIC_ETH_P_8021AD) {
		if (unlikely(h->nvlan == VNIC_MAX_VLANS))
			return VNIC_PARSE_VLAN_TOO_MANY;
		if (unlikely(len - off < VNIC_VLAN_HLEN))
			return VNIC_PARSE_VLAN_TRUNC;
		h->vlan_proto[h->nvlan] = type;
		h->vlan_tci[h->nvlan] = rd16(f + off);
		h->nvlan++;
		type = rd16(f + off + 2);
		off += VNIC_VLAN_HLEN;
	}
	h->l2_len = (uint16_t)off;
	h->l3_off = (uint16_t)off;
	h->l3_proto = type;
	return VNIC_PARSE_OK;
}

/*
 * The option format shared by IPv4 (RFC 791 section 3.1) and TCP (RFC 9293
 * section 3.1): EOL ends the list (what follows is padding), NOP is one byte,
 * every other kind has a length byte that counts kind and length too.
 */
static bool options_ok(const uint8_t *p, uint32_t len)
{
	uint32_t off = 0;

	while (off < len) {
		uint8_t kind = p[off];

		if (kind == OPT_EOL)
			return true;
		if (kind == OPT_NOP) {
			off++;
			continue;
		}
		if (unlikely(len - off < 2))
			return false;
		if (unlikely(p[off + 1] < 2 || p[off + 1] > len - off))
			return false;
		off += p[off + 1];
	}
	return true;
}

static enum vnic_parse_err parse_arp(const uint8_t *f, uint32_t len, struct vnic_hdrs *h)
{
	const uint8_t *p = f + h->l3_off;
	uint32_t avail = len - h->l3_off;

	if (unlikely(avail < 8))
		return VNIC_PARSE_ARP_TRUNC;
	/* Only Ethernet (htype 1) / IPv4 ARP, with the sizes that implies. */
	if (unlikely(rd16(p) != 1 || rd16(p + 2) != VNIC_ETH_P_IP || p[4] != 6 || p[5] != 4))
		return VNIC_PARSE_ARP_BAD;
	if (unlikely(avail < ARP_HDR_LEN))
		return VNIC_PARSE_ARP_TRUNC;
	h->l3_len = ARP_HDR_LEN;
	h->l4_off = (uint16_t)(h->l3_off + ARP_HDR_LEN);
	h->payload_off = h->l4_off;
	h->trailer_len = avail - ARP_HDR_LEN;
	return VNIC_PARSE_OK;
}

static enum vnic_parse_err parse_tcp(const uint8_t *f, struct vnic_hdrs *h)
{
	const uint8_t *p = f + h->l4_off;
	uint32_t avail = h->l3_payload_len;
	uint32_t doff;

	if (unlikely(avail < TCP_MIN_HLEN))
		return VNIC_PARSE_TCP_TRUNC;
	doff = (uint32_t)(p[12] >> 4) * 4;
	if (unlikely(doff < TCP_MIN_HLEN || doff > avail))
		return VNIC_PARSE_TCP_BAD_DOFF;
	if (doff > TCP_MIN_HLEN) {
		if (unlikely(!options_ok(p + TCP_MIN_HLEN, doff - TCP_MIN_HLEN)))
			return VNIC_PARSE_TCP_BAD_OPTION;
		h->flags |= VNIC_HDRS_F_TCP_OPTS;
	}
	h->l4_len = (uint16_t)doff;
	h->payload_len = avail - doff;
	return VNIC_PARSE_OK;
}

static enum vnic_parse_err parse_udp(const uint8_t *f, struct vnic_hdrs *h)
{
	const uint8_t *p = f + h->l4_off;
	uint32_t avail = h->l3_payload_len;
	uint32_t ulen;

	if (unlikely(avail < UDP_HLEN))
		return VNIC_PARSE_UDP_TRUNC;
	ulen = rd16(p + 4);
	h->l4_len = UDP_HLEN;
	if (h->flags & VNIC_HDRS_F_FRAG) {
		/* The length covers the whole datagram, this fragment is its head. */
		if (unlikely(ulen < avail))
			return VNIC_PARSE_UDP_BAD_LEN;
		h->payload_len = avail - UDP_HLEN;
		return VNIC_PARSE_OK;
	}
	if (unlikely(ulen < UDP_HLEN || ulen > avail))
		return VNIC_PARSE_UDP_BAD_LEN;
	h->payload_len = ulen - UDP_HLEN;
	h->trailer_len += avail - ulen;
	return VNIC_PARSE_OK;
}

static enum vnic_parse_err parse_icmp(struct vnic_hdrs *h, enum vnic_parse_err trunc)
{
	if (unlikely(h->l3_payload_len < ICMP_HLEN))
		return trunc;
	h->l4_len = ICMP_HLEN;
	h->payload_len = h->l3_payload_len - ICMP_HLEN;
	return VNIC_PARSE_OK;
}

/*
 * Sets the L4 offsets for what follows the L3 header and, if with_l4, parses
 * the L4 header. An L4 protocol we do not know is not an error.
 */
static enum vnic_parse_err parse_l4(const uint8_t *f, struct vnic_hdrs *h, bool with_l4)
{
	bool v6 = h->l3_proto == VNIC_ETH_P_IPV6;
	enum vnic_parse_err err;

	h->l4_off = (uint16_t)(h->l3_off + h->l3_len);
	h->payload_off = h->l4_off;
	h->payload_len = h->l3_payload_len;
	if (!with_l4)
		return VNIC_PARSE_OK;

	if (h->l4_proto == VNIC_IPPROTO_TCP)
		err = parse_tcp(f, h);
	else if (h->l4_proto == VNIC_IPPROTO_UDP)
		err = parse_udp(f, h);
	else if (h->l4_proto == VNIC_IPPROTO_ICMP && !v6)
		err = parse_icmp(h, VNIC_PARSE_ICMP_TRUNC);
	else if (h->l4_proto == VNIC_IPPROTO_ICMPV6 && v6)
		err = parse_icmp(h, VNIC_PARSE_ICMP6_TRUNC);
	else
		return VNIC_PARSE_OK;
	if (unlikely(err))
		return err;
	h->payload_off = h->l4_off + h->l4_len;
	h->flags |= VNIC_HDRS_F_L4;
	return VNIC_PARSE_OK;
}

/* RFC 791 section 3.1. */
static enum vnic_parse_err parse_ip4(const uint8_t *f, uint32_t len, struct vnic_hdrs *h)
{
	const uint8_t *p = f + h->l3_off;
	uint32_t avail = len - h->l3_off;
	uint32_t ihl, tot;
	uint16_t frag;

	if (unlikely(avail < IP4_MIN_HLEN))
		return VNIC_PARSE_IP4_TRUNC;
	if (unlikely(p[0] >> 4 != 4))
		return VNIC_PARSE_IP4_BAD_VERSION;
	ihl = (uint32_t)(p[0] & 0x0f) * 4;
	if (unlikely(ihl < IP4_MIN_HLEN || ihl > avail))
		return VNIC_PARSE_IP4_BAD_IHL;
	tot = rd16(p + 2);
	if (unlikely(tot < ihl || tot > avail))
		return VNIC_PARSE_IP4_BAD_TOTLEN;
	if (ihl > IP4_MIN_HLEN) {
		if (unlikely(!options_ok(p + IP4_MIN_HLEN, ihl - IP4_MIN_HLEN)))
			return VNIC_PARSE_IP4_BAD_OPTION;
		h->flags |= VNIC_HDRS_F_IP4_OPTS;
	}
	h->l3_len = (uint16_t)ihl;
	h->l3_payload_len = tot - ihl;
	h->trailer_len = avail - tot;
	h->l4_proto = p[9];

	/* Flags and offset: reserved, DF, MF, then 13 bits of 8-octet units. */
	frag = rd16(p + 6);
	if (frag & 0x4000)
		h->flags |= VNIC_HDRS_F_IP4_DF;
	h->frag_off = frag & 0x1fff;
	if (frag & 0x3fff) {
		h->flags |= VNIC_HDRS_F_FRAG;
		if (h->frag_off == 0)
			h->flags |= VNIC_HDRS_F_FRAG_FIRST;
	}
	return parse_l4(f, h, h->frag_off == 0);
}

/* State of the walk along an IPv6 header chain. */
struct ip6_walk {
	uint32_t off;		/* of the next header, from the frame start */
	uint32_t end;		/* end of the IPv6 packet, per its payload length */
	uint8_t nexthdr;
	bool frag_seen;
	bool l4;		/* false once the rest is not ours to parse */
};

/* Hop-by-hop, routing and destination options share the RFC 8200 4.3 layout. */
static enum vnic_parse_err ip6_opt_hdr(const uint8_t *f, struct ip6_walk *w)
{
	const uint8_t *p = f + w->off;
	uint32_t hlen;

	if (unlikely(w->end - w->off < IP6_EXT_MIN))
		return VNIC_PARSE_IP6_EXT_TRUNC;
	hlen = ((uint32_t)p[1] + 1) * 8;
	if (unlikely(w->end - w->off < hlen))
		return VNIC_PARSE_IP6_EXT_TRUNC;
	w->nexthdr = p[0];
	w->off += hlen;
	return VNIC_PARSE_OK;
}

/* RFC 8200 section 4.5; the reserved fields are ignored on receipt. */
static enum vnic_parse_err ip6_frag_hdr(const uint8_t *f, struct ip6_walk *w, struct vnic_hdrs *h)
{
	const uint8_t *p = f + w->off;
	uint32_t data_len;
	uint16_t field, offset;
	bool more;

	if (unlikely(w->end - w->off < IP6_FRAG_HLEN))
		return VNIC_PARSE_IP6_EXT_TRUNC;
	/* One packet is fragmented once: a second header is not a valid chain. */
	if (unlikely(w->frag_seen))
		return VNIC_PARSE_IP6_BAD_FRAG;
	w->frag_seen = true;
	w->nexthdr = p[0];
	w->off += IP6_FRAG_HLEN;
	field = rd16(p + 2);
	offset = field >> 3;
	more = field & 1;
	data_len = w->end - w->off;
	/* Only the last fragment may end off an 8-octet boundary. */
	if (unlikely(more && (data_len & 7)))
		return VNIC_PARSE_IP6_BAD_FRAG;
	/* The reassembled payload could not fit a 16-bit payload length. */
	if (unlikely((uint32_t)offset * 8 + data_len > IP6_MAXPLEN))
		return VNIC_PARSE_IP6_BAD_FRAG;
	if (offset == 0 && !more)
		return VNIC_PARSE_OK;	/* atomic fragment, RFC 6946 */
	h->flags |= VNIC_HDRS_F_FRAG;
	h->frag_off = offset;
	if (offset == 0)
		h->flags |= VNIC_HDRS_F_FRAG_FIRST;
	else
		w->l4 = false;		/* the rest is fragment data */
	return VNIC_PARSE_OK;
}

static bool ip6_is_ext(uint8_t nexthdr)
{
	return nexthdr == VNIC_IPPROTO_HOPOPTS || nexthdr == VNIC_IPPROTO_ROUTING ||
	       nexthdr == VNIC_IPPROTO_FRAGMENT || nexthdr == VNIC_IPPROTO_DSTOPTS;
}

static enum vnic_parse_err ip6_walk_ext(const uint8_t *f, struct ip6_walk *w, struct vnic_hdrs *h)
{
	enum vnic_parse_err err;
	unsigned int n;

	for (n = 0; w->l4 && ip6_is_ext(w->nexthdr); n++) {
		if (unlikely(n == VNIC_IP6_MAX_EXT))
			return VNIC_PARSE_IP6_EXT_CHAIN;
		/* RFC 8200 4.1: hop-by-hop may only follow the IPv6 header. */
		if (unlikely(w->nexthdr == VNIC_IPPROTO_HOPOPTS && n != 0))
			return VNIC_PARSE_IP6_EXT_CHAIN;
		if (w->nexthdr == VNIC_IPPROTO_FRAGMENT)
			err = ip6_frag_hdr(f, w, h);
		else
			err = ip6_opt_hdr(f, w);
		if (unlikely(err))
			return err;
		h->flags |= VNIC_HDRS_F_IP6_EXT;
	}
	return VNIC_PARSE_OK;
}

/* RFC 8200 section 3. */
static enum vnic_parse_err parse_ip6(const uint8_t *f, uint32_t len, struct vnic_hdrs *h)
{
	const uint8_t *p = f + h->l3_off;
	uint32_t avail = len - h->l3_off;
	struct ip6_walk w;
	enum vnic_parse_err err;
	uint32_t plen;

	if (unlikely(avail < IP6_HLEN))
		return VNIC_PARSE_IP6_TRUNC;
	if (unlikely(p[0] >> 4 != 6))
		return VNIC_PARSE_IP6_BAD_VERSION;
	plen = rd16(p + 4);
	/* 0 announces a jumbogram (RFC 2675), which no frame of ours can be. */
	if (unlikely(plen == 0 || plen > avail - IP6_HLEN))
		return VNIC_PARSE_IP6_BAD_PAYLEN;

	w.off = h->l3_off + IP6_HLEN;
	w.end = w.off + plen;
	w.nexthdr = p[6];
	w.frag_seen = false;
	w.l4 = true;
	err = ip6_walk_ext(f, &w, h);
	if (unlikely(err))
		return err;

	h->l3_len = (uint16_t)(w.off - h->l3_off);
	h->l3_payload_len = w.end - w.off;
	h->trailer_len = len - w.end;
	h->l4_proto = w.nexthdr;
	return parse_l4(f, h, w.l4 && w.nexthdr != VNIC_IPPROTO_NONE);
}

enum vnic_parse_err vnic_parse_frame(const uint8_t *frame, uint32_t len, struct vnic_hdrs *h)
{
	enum vnic_parse_err err;

	memset(h, 0, sizeof(*h));
	err = parse_eth(frame, len, h);
	if (unlikely(err))
		return err;

	switch (h->l3_proto) {
	case VNIC_ETH_P_IP:
		return parse_ip4(frame, len, h);
	case VNIC_ETH_P_IPV6:
		return parse_ip6(frame, len, h);
	case VNIC_ETH_P_ARP:
		return parse_arp(frame, len, h);
	default:
		/* Not ours to understand: all of it is payload to a NIC. */
		h->l4_off = h->l3_off;
		h->payload_off = h->l3_off;
		h->payload_len = len - h->l3_off;
		return VNIC_PARSE_OK;
	}
}

enum vnic_parse_err vnic_parse_pkt(struct vnic_pkt *pkt)
{
	struct vnic_hdrs h;
	enum vnic_parse_err err;

	err = vnic_parse_frame(pkt->data, pkt->len, &h);
	if (unlikely(err)) {
		pkt->flags &= (uint8_t)~VNIC_PKT_F_PARSED;
		pkt->l2_len = 0;
		pkt->l3_len = 0;
		pkt->l4_len = 0;
		pkt->l3_proto = 0;
		pkt->l4_proto = 0;
		return err;
	}
	pkt->l2_len = h.l2_len;
	pkt->l3_proto = h.l3_proto;
	pkt->l3_len = h.l3_len;
	/* The packet's l4_proto promises a header at l2_len + l3_len. */
	pkt->l4_proto = (h.flags & VNIC_HDRS_F_L4) ? h.l4_proto : 0;
	pkt->l4_len = h.l4_len;
	pkt->flags |= VNIC_PKT_F_PARSED;
	return VNIC_PARSE_OK;
}

static const char *const parse_err_names[VNIC_PARSE_ERR_MAX] = {
	[VNIC_PARSE_OK] = "ok",
	[VNIC_PARSE_ETH_TRUNC] = "eth_trunc",
	[VNIC_PARSE_VLAN_TRUNC] = "vlan_trunc",
	[VNIC_PARSE_VLAN_TOO_MANY] = "vlan_too_many",
	[VNIC_PARSE_ARP_TRUNC] = "arp_trunc",
	[VNIC_PARSE_ARP_BAD] = "arp_bad",
	[VNIC_PARSE_IP4_TRUNC] = "ip4_trunc",
	[VNIC_PARSE_IP4_BAD_VERSION] = "ip4_bad_version",
	[VNIC_PARSE_IP4_BAD_IHL] = "ip4_bad_ihl",
	[VNIC_PARSE_IP4_BAD_TOTLEN] = "ip4_bad_totlen",
	[VNIC_PARSE_IP4_BAD_OPTION] = "ip4_bad_option",
	[VNIC_PARSE_IP6_TRUNC] = "ip6_trunc",
	[VNIC_PARSE_IP6_BAD_VERSION] = "ip6_bad_version",
	[VNIC_PARSE_IP6_BAD_PAYLEN] = "ip6_bad_paylen",
	[VNIC_PARSE_IP6_EXT_TRUNC] = "ip6_ext_trunc",
	[VNIC_PARSE_IP6_EXT_CHAIN] = "ip6_ext_chain",
	[VNIC_PARSE_IP6_BAD_FRAG] = "ip6_bad_frag",
	[VNIC_PARSE_TCP_TRUNC] = "tcp_trunc",
	[VNIC_PARSE_TCP_BAD_DOFF] = "tcp_bad_doff",
	[VNIC_PARSE_TCP_BAD_OPTION] = "tcp_bad_option",
	[VNIC_PARSE_UDP_TRUNC] = "udp_trunc",
	[VNIC_PARSE_UDP_BAD_LEN] = "udp_bad_len",
	[VNIC_PARSE_ICMP_TRUNC] = "icmp_trunc",
	[VNIC_PARSE_ICMP6_TRUNC] = "icmp6_trunc",
	[VNIC_PARSE_L3_UNKNOWN] = "l3_unknown",
};

const char *vnic_parse_strerror(int err)
{
	if (err < 0 || err >= VNIC_PARSE_ERR_MAX || !parse_err_names[err])
		return "unknown";
	return parse_err_names[err];
}
