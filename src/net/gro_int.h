/* SPDX-License-Identifier: MIT */
/* GRO protocol table shared by gro.c and gro_tcp.c. Private to src/net. */
#ifndef VNIC_NET_GRO_INT_H
#define VNIC_NET_GRO_INT_H

#include "net.h"

/* ---------------------------------------------------------------------------
 * GRO protocol table . Internal to gro.c and
 * gro_tcp.c, not API: gro.c finds the L3 header and the held packets of a
 * bucket, then dispatches on the ethertype to one of these entries, which read
 * the L3/L4 headers and apply that protocol's merge rules.
 * ------------------------------------------------------------------------- */

enum vnic_gro_kind {
	VNIC_GRO_KIND_OTHER,	 /* not TCP: passed through, no flow to keep in order */
	VNIC_GRO_KIND_FLOW,	 /* TCP that cannot be held (pure ACK, IP options, ...) */
	VNIC_GRO_KIND_CANDIDATE, /* may be held or merged */
};

/* What a protocol's parse found in a received packet. Offsets from pkt->data. */
struct vnic_gro_cb {
	uint16_t l3_off;	/* set by gro.c before parse */
	uint16_t l4_off;	/* 0 if the TCP ports are unknown (later fragment) */
	uint16_t hdr_len;	/* CANDIDATE: through the TCP header and options */
	uint8_t kind;		/* enum vnic_gro_kind */
	uint8_t tcp_flags;	/* CANDIDATE: byte 13 of the TCP header */
	bool final;		/* CANDIDATE: ends its aggregate, never held alone */
	uint32_t payload_len;	/* CANDIDATE: TCP payload, > 0 */
};

/*
 * held was a CANDIDATE of the same protocol and its L2 header is byte-equal
 * to pkt's, so its L3 header is at cb->l3_off, with no IPv4 options or IPv6
 * extension headers; when pkt is a CANDIDATE, every offset in cb applies to
 * both. While held, gso_size is the MSS (its first payload) and gso_segs the
 * number of segments merged.
 */
struct vnic_gro_proto {
	uint16_t ethertype;
	uint32_t max_frame_l3;	/* largest L3 packet an aggregate may grow to */
	void (*parse)(const struct vnic_pkt *pkt, struct vnic_gro_cb *cb);
	/* Addresses and ports (any ports if cb->l4_off is 0). */
	bool (*same_flow)(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			  const struct vnic_gro_cb *cb);
	/* Every merge rule except buffer room. */
	bool (*can_merge)(const struct vnic_pkt *held, const struct vnic_pkt *pkt,
			  const struct vnic_gro_cb *cb);
	/* The payload was appended: carry FIN/PSH into the held header. */
	void (*merged)(struct vnic_pkt *held, const struct vnic_gro_cb *cb);
	/* Turns an aggregate of gso_segs > 1 into a superpacket. */
	void (*complete)(struct vnic_pkt *held, uint16_t l3_off);
};

extern const struct vnic_gro_proto vnic_gro_tcp4_proto;
extern const struct vnic_gro_proto vnic_gro_tcp6_proto;

#endif /* VNIC_NET_GRO_INT_H */
