// SPDX-License-Identifier: MIT
/*
 * Packet builders for tests and benchmarks. Headers are written byte by byte
 * in network order so the code does not depend on host endianness or on the
 * alignment of pkt->data.
 */
#include <errno.h>
#include <string.h>

#include "pktgen.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void vnic_pktgen_flow_init(struct vnic_pktgen_flow *f, bool ipv6, uint8_t l4_proto)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

	memset(f, 0, sizeof(*f));
	f->ipv6 = ipv6;
	f->l4_proto = l4_proto;
	memcpy(f->dst_mac, dmac, sizeof(dmac));
	memcpy(f->src_mac, smac, sizeof(smac));
	if (ipv6) {
		f->saddr[0] = 0xfd;
		f->saddr[15] = 1;
		f->daddr[0] = 0xfd;
		f->daddr[15] = 2;
	} else {
		f->saddr[0] = 10;
		f->saddr[3] = 1;
		f->daddr[0] = 10;
		f->daddr[3] = 2;
	}
	f->ttl = 64;
	f->ip_id = 0x1234;
	f->df = true;
	f->sport = 40000;
	f->dport = 5201;
	f->seq = 1000;
	f->ack = 1;
	f->tcp_flags = VNIC_TCP_ACK;
	f->window = 65535;
	f->seed = 1;
}

static uint32_t l4_hlen(const struct vnic_pktgen_flow *f)
{
	if (f->l4_proto == VNIC_IPPROTO_TCP)
		return VNIC_PKTGEN_TCP_HLEN + f->tcp_opts_len;
	return VNIC_PKTGEN_UDP_HLEN;
}

static uint32_t l3_hlen(const struct vnic_pktgen_flow *f)
{
	return f->ipv6 ? VNIC_PKTGEN_IP6_HLEN : VNIC_PKTGEN_IP4_HLEN;
}

static uint32_t l2_hlen(const struct vnic_pktgen_flow *f)
{
	return VNIC_ETH_HLEN + (f->vlan ? VNIC_VLAN_HLEN : 0);
}

uint32_t vnic_pktgen_hdr_len(const struct vnic_pktgen_flow *f)
{
	return l2_hlen(f) + l3_hlen(f) + l4_hlen(f);
}

uint8_t vnic_pktgen_byte(uint32_t seed, uint32_t off)
{
	/*
	 * A 32-bit integer mix of (seed, off): neighbouring offsets and seeds
	 * give unrelated bytes, so a shifted, repeated or misplaced chunk shows
	 * up as a mismatch (a plain counter would repeat every 256 bytes).
	 */
	uint32_t x = off * 0x9e3779b1u ^ (seed * 0x85ebca6bu + 0x27d4eb2fu);

	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return (uint8_t)x;
}

void vnic_pktgen_fill(uint8_t *dst, uint32_t len, uint32_t seed, uint32_t off)
{
	for (uint32_t i = 0; i < len; i++)
		dst[i] = vnic_pktgen_byte(seed, off + i);
}

int64_t vnic_pktgen_mismatch(const uint8_t *buf, uint32_t len, uint32_t seed, uint32_t off)
{
	for (uint32_t i = 0; i < len; i++)
		if (buf[i] != vnic_pktgen_byte(seed, off + i))
			return i;
	return -1;
}

bool vnic_pktgen_verify(const uint8_t *buf, uint32_t len, uint32_t seed, uint32_t off)
{
	return vnic_pktgen_mismatch(buf, len, seed, off) < 0;
}

bool vnic_pktgen_verify_pkt(const struct vnic_pkt *pkt, uint32_t seed, uint32_t off)
{
	uint32_t hlen = (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len;

	if (hlen > pkt->len)
		return false;
	return vnic_pktgen_verify(pkt->data + hlen, pkt->len - hlen, seed, off);
}

static int check_flow(const struct vnic_pktgen_flow *f)
{
	if (f->l4_proto != VNIC_IPPROTO_TCP && f->l4_proto != VNIC_IPPROTO_UDP)
		return -EINVAL;
	if (f->l4_proto == VNIC_IPPROTO_TCP &&
	    (f->tcp_opts_len > VNIC_PKTGEN_TCP_OPTS_MAX || f->tcp_opts_len % 4))
		return -EINVAL;
	return 0;
}

/*
 * Writes the whole frame with every length field covering payload_len and
 * the L4 checksum field zero. Returns the frame length or -errno.
 */
static int write_frame(struct vnic_pkt *pkt, const struct vnic_pktgen_flow *f, uint32_t off,
		       uint32_t payload_len)
{
	uint32_t l2 = l2_hlen(f), l3 = l3_hlen(f), l4 = l4_hlen(f);
	uint32_t l4_total = l4 + payload_len;
	uint8_t *p;
	int err;

	err = check_flow(f);
	if (err)
		return err;
	/* IPv4 total length and IPv6 payload length are 16 bits; so is UDP's. */
	if (l3 + l4_total > 0xffff && !f->ipv6)
		return -EMSGSIZE;
	if (l4_total > 0xffff)
		return -EMSGSIZE;

	vnic_pkt_reset(pkt);
	p = vnic_pkt_put(pkt, l2 + l3 + l4_total);
	if (!p)
		return -EMSGSIZE;

	memcpy(p, f->dst_mac, 6);
	memcpy(p + 6, f->src_mac, 6);
	if (f->vlan) {
		put16(p + 12, VNIC_ETH_P_8021Q);
		put16(p + 14, f->vlan_tci);
	}
	put16(p + l2 - 2, f->ipv6 ? VNIC_ETH_P_IPV6 : VNIC_ETH_P_IP);
	p += l2;

	if (f->ipv6) {
		put32(p, 6u << 28 | (uint32_t)f->tos << 20 | (f->flow_label & 0xfffff));
		put16(p + 4, (uint16_t)l4_total);
		p[6] = f->l4_proto;
		p[7] = f->ttl;
		memcpy(p + 8, f->saddr, 16);
		memcpy(p + 24, f->daddr, 16);
	} else {
		p[0] = 0x45;
		p[1] = f->tos;
		put16(p + 2, (uint16_t)(l3 + l4_total));
		put16(p + 4, f->ip_id);
		put16(p + 6, f->df ? 0x4000 : 0);
		p[8] = f->ttl;
		p[9] = f->l4_proto;
		put16(p + 10, 0);
		memcpy(p + 12, f->saddr, 4);
		memcpy(p + 16, f->daddr, 4);
		vnic_csum_ip4_set(p, l3);
	}
	p += l3;

	put16(p, f->sport);
	put16(p + 2, f->dport);
	if (f->l4_proto == VNIC_IPPROTO_TCP) {
		put32(p + 4, f->seq);
		put32(p + 8, f->ack);
		p[12] = (uint8_t)((l4 / 4) << 4);
		p[13] = f->tcp_flags;
		put16(p + 14, f->window);
		put16(p + 16, 0);
		put16(p + 18, 0);
		memcpy(p + 20, f->tcp_opts, f->tcp_opts_len);
	} else {
		put16(p + 4, (uint16_t)l4_total);
		put16(p + 6, 0);
	}
	vnic_pktgen_fill(p + l4, payload_len, f->seed, off);

	pkt->l2_len = (uint16_t)l2;
	pkt->l3_len = (uint16_t)l3;
	pkt->l4_len = (uint16_t)l4;
	pkt->l3_proto = f->ipv6 ? VNIC_ETH_P_IPV6 : VNIC_ETH_P_IP;
	pkt->l4_proto = f->l4_proto;
	pkt->flags = VNIC_PKT_F_PARSED;
	return 0;
}

static vnic_wsum_t pseudo_sum(const struct vnic_pktgen_flow *f, uint32_t l4_total)
{
	if (f->ipv6)
		return vnic_csum_pseudo6(f->saddr, f->daddr, f->l4_proto, l4_total);
	return vnic_csum_pseudo4(f->saddr, f->daddr, f->l4_proto, l4_total);
}

static uint16_t csum_field_offset(uint8_t l4_proto)
{
	return l4_proto == VNIC_IPPROTO_TCP ? 16 : 6;
}

int vnic_pktgen_build(struct vnic_pkt *pkt, const struct vnic_pktgen_flow *f, uint32_t off,
		      uint32_t payload_len)
{
	uint32_t l4_off, l4_total;
	uint16_t check;
	int err;

	err = write_frame(pkt, f, off, payload_len);
	if (err)
		return err;
	l4_off = (uint32_t)pkt->l2_len + pkt->l3_len;
	l4_total = pkt->len - l4_off;
	check = vnic_csum_fold(vnic_csum_partial(pkt->data + l4_off, l4_total,
						 pseudo_sum(f, l4_total)));
	/* RFC 768: a computed 0 is sent as all ones; 0 means "no checksum". */
	if (f->l4_proto == VNIC_IPPROTO_UDP && check == 0)
		check = 0xffff;
	memcpy(pkt->data + l4_off + csum_field_offset(f->l4_proto), &check, sizeof(check));
	pkt->ip_summed = VNIC_CSUM_NONE;
	return 0;
}

int vnic_pktgen_build_gso(struct vnic_pkt *pkt, const struct vnic_pktgen_flow *f, uint32_t off,
			  uint32_t payload_len, uint16_t gso_size)
{
	uint32_t l4_off, l4_total, segs;
	uint16_t check;
	int err;

	if (gso_size == 0)
		return -EINVAL;
	err = write_frame(pkt, f, off, payload_len);
	if (err)
		return err;
	l4_off = (uint32_t)pkt->l2_len + pkt->l3_len;
	l4_total = pkt->len - l4_off;
	/* What the device completes: the pseudo header, folded, not inverted. */
	check = (uint16_t)~vnic_csum_fold(pseudo_sum(f, l4_total));
	memcpy(pkt->data + l4_off + csum_field_offset(f->l4_proto), &check, sizeof(check));

	pkt->ip_summed = VNIC_CSUM_PARTIAL;
	pkt->csum_start = (uint16_t)l4_off;
	pkt->csum_offset = csum_field_offset(f->l4_proto);
	if (f->l4_proto == VNIC_IPPROTO_UDP)
		pkt->gso_type = VNIC_GSO_UDP_L4;
	else
		pkt->gso_type = f->ipv6 ? VNIC_GSO_TCPV6 : VNIC_GSO_TCPV4;
	if (f->l4_proto == VNIC_IPPROTO_TCP && (f->tcp_flags & VNIC_TCP_CWR))
		pkt->gso_type |= VNIC_GSO_TCP_ECN;
	pkt->gso_size = gso_size;
	segs = payload_len ? (payload_len + gso_size - 1) / gso_size : 1;
	pkt->gso_segs = (uint16_t)segs;
	return 0;
}
