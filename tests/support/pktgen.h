/* SPDX-License-Identifier: MIT */
/*
 * Packet builders for tests, benchmarks and fuzz corpora (not for fuzz
 * targets themselves: fuzz/run.sh links src/net only). Not part of the product.
 *
 * A flow describes one direction of a TCP or UDP conversation; a builder turns
 * it into an Ethernet [+ one 802.1Q tag] + IPv4/IPv6 + TCP/UDP frame whose
 * payload comes from a deterministic pattern, so a receiver can check any byte
 * without keeping a copy:
 *
 *	payload byte i of a frame built at stream offset off
 *		== vnic_pktgen_byte(flow->seed, off + i)
 *
 * The stream offset is the caller's business (usually seq - initial seq for
 * TCP, a running byte count for UDP); the builders never advance the flow.
 * Sending a TCP stream in pieces looks like:
 *
 *	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_TCP);
 *	for (off = 0; off < total; off += mss) {
 *		vnic_pktgen_build(pkt, &f, off, mss);
 *		f.seq += mss;
 *		f.ip_id++;
 *	}
 *
 * What the builders produce:
 *  - IPv4 without options (IHL 5), IPv6 without extension headers;
 *  - the VLAN tag, when asked for, stays in the frame (l2_len 18, no
 *    VNIC_PKT_F_VLAN); pkt->l3_proto is the inner ethertype;
 *  - metadata: l2_len, l3_len, l4_len, l3_proto, l4_proto, flags
 *    VNIC_PKT_F_PARSED; hash, priv and tstamp_ns are left zero (the packet is
 *    reset first, so data sits at the pool's headroom).
 *
 * All functions are single-threaded helpers with no allocation.
 */
#ifndef VNIC_TEST_PKTGEN_H
#define VNIC_TEST_PKTGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"

enum {
	VNIC_PKTGEN_TCP_OPTS_MAX = 40,
	VNIC_PKTGEN_IP4_HLEN = 20,
	VNIC_PKTGEN_IP6_HLEN = 40,
	VNIC_PKTGEN_TCP_HLEN = 20,	/* without options */
	VNIC_PKTGEN_UDP_HLEN = 8,
};

/*
 * One direction of a flow. Multi-byte numbers are host order; addresses and
 * MACs are bytes as they appear on the wire. Fields that do not apply to the
 * chosen protocols are ignored (e.g. ip_id for IPv6, seq for UDP).
 */
struct vnic_pktgen_flow {
	bool ipv6;			/* IPv6 instead of IPv4 */
	uint8_t l4_proto;		/* VNIC_IPPROTO_TCP or VNIC_IPPROTO_UDP */
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	bool vlan;			/* insert one 802.1Q tag after the MACs */
	uint16_t vlan_tci;		/* PCP/DEI/VID of that tag */
	uint8_t saddr[16];		/* IPv4 uses saddr[0..4) */
	uint8_t daddr[16];
	uint8_t ttl;			/* IPv4 TTL or IPv6 hop limit */
	uint8_t tos;			/* IPv4 TOS or IPv6 traffic class */
	uint32_t flow_label;		/* IPv6, low 20 bits */
	uint16_t ip_id;			/* IPv4 ID (of the first segment for GSO) */
	bool df;			/* IPv4 don't-fragment */
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;			/* TCP */
	uint32_t ack;			/* TCP */
	uint8_t tcp_flags;		/* VNIC_TCP_* bits */
	uint16_t window;		/* TCP, raw (unscaled) */
	uint8_t tcp_opts_len;		/* 0..40, a multiple of 4 */
	uint8_t tcp_opts[VNIC_PKTGEN_TCP_OPTS_MAX]; /* copied verbatim */
	uint32_t seed;			/* payload pattern */
};

/*
 * Sensible defaults: MACs 02:00:00:00:00:02 <- 02:00:00:00:00:01,
 * 10.0.0.1 -> 10.0.0.2 or fd00::1 -> fd00::2, ports 40000 -> 5201,
 * seq 1000, ack 1, flags ACK, window 65535, TTL 64, TOS 0, ID 0x1234, DF,
 * no options, no VLAN, seed 1.
 */
void vnic_pktgen_flow_init(struct vnic_pktgen_flow *f, bool ipv6, uint8_t l4_proto);

/* Ethernet (+ tag) + IP + L4 header bytes the flow produces. */
uint32_t vnic_pktgen_hdr_len(const struct vnic_pktgen_flow *f);

/* The pattern: byte at stream offset off of a flow seeded with seed. */
uint8_t vnic_pktgen_byte(uint32_t seed, uint32_t off);
/* Writes vnic_pktgen_byte(seed, off + i) to dst[i] for i in [0, len). */
void vnic_pktgen_fill(uint8_t *dst, uint32_t len, uint32_t seed, uint32_t off);
/*
 * Checks buf[0..len) against the pattern starting at stream offset off.
 * Returns the index of the first wrong byte, or -1 if all match.
 */
int64_t vnic_pktgen_mismatch(const uint8_t *buf, uint32_t len, uint32_t seed, uint32_t off);
/* True if buf[0..len) matches the pattern at stream offset off. */
bool vnic_pktgen_verify(const uint8_t *buf, uint32_t len, uint32_t seed, uint32_t off);
/*
 * True if the L4 payload of a parsed packet (bytes from l2_len + l3_len +
 * l4_len up to len) matches the pattern at stream offset off. False if the
 * header lengths do not fit in the packet.
 */
bool vnic_pktgen_verify_pkt(const struct vnic_pkt *pkt, uint32_t seed, uint32_t off);

/*
 * Builds a plain frame into pkt (reset first) with payload_len bytes of the
 * pattern from stream offset off: IPv4 header checksum and L4 checksum
 * complete (a UDP checksum of 0 is sent as 0xffff), ip_summed NONE, not GSO.
 * Returns 0, -EINVAL for a bad flow (protocol, option length), or -EMSGSIZE if
 * the frame does not fit the buffer or the IP length fields.
 */
int vnic_pktgen_build(struct vnic_pkt *pkt, const struct vnic_pktgen_flow *f, uint32_t off,
		      uint32_t payload_len);

/*
 * Builds a superpacket as a TSO/USO sender hands it to a device (like Linux):
 *  - gso_type TCPV4 or TCPV6 (+ TCP_ECN if the flow has CWR) or UDP_L4,
 *    gso_size, gso_segs = ceil(payload_len / gso_size), at least 1;
 *  - IPv4 total length covering the whole superpacket, ID = flow ip_id, header
 *    checksum complete; IPv6 payload length likewise; UDP length likewise;
 *  - ip_summed PARTIAL, csum_start = L4 offset, csum_offset 16 (TCP) or
 *    6 (UDP), and the L4 checksum field holding the folded, non-inverted
 *    pseudo-header sum over the total L4 length.
 * Returns 0, -EINVAL (bad flow or gso_size 0) or -EMSGSIZE.
 */
int vnic_pktgen_build_gso(struct vnic_pkt *pkt, const struct vnic_pktgen_flow *f, uint32_t off,
			  uint32_t payload_len, uint16_t gso_size);

#endif
