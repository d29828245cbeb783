/* SPDX-License-Identifier: MIT */
/* Segmentation internals shared by gso.c, gso_tcp.c and gso_udp.c. Private to src/net. */
#ifndef VNIC_NET_GSO_INT_H
#define VNIC_NET_GSO_INT_H

#include "net.h"

/* ---------------------------------------------------------------------------
 * GSO internals . Shared by gso.c (dispatcher and
 * common L3/checksum work), gso_tcp.c and gso_udp.c only; callers use
 * vnic_gso_count() and vnic_gso_segment().
 * ------------------------------------------------------------------------- */

/* A validated superpacket and what every segment needs, computed once. */
struct vnic_gso_ctx {
	const struct vnic_pkt *pkt;	/* parsed view of the input (read only) */
	struct vnic_pkt **out;		/* segs packets, each with room checked */
	unsigned int flags;		/* VNIC_GSO_F_* */
	uint32_t l4_off;		/* l2_len + l3_len */
	uint32_t hdr_len;		/* l4_off + l4_len */
	uint32_t payload_len;		/* L4 payload of the superpacket */
	uint32_t segs;
	uint32_t last_len;		/* payload of the last segment */
	uint16_t mss;			/* gso_size */
	uint16_t csum_off;		/* checksum field within the L4 header */
	uint16_t ip4_id;		/* first IPv4 ID, host order */
	bool ip4;
	bool udp;
	vnic_wsum_t pseudo_full;	/* pseudo header of a segment of mss bytes */
	vnic_wsum_t pseudo_last;	/* ... and of the last one */
	vnic_wsum_t ip4_full;		/* IPv4 header sum, ID and check zero */
	vnic_wsum_t ip4_last;
};

/*
 * Writes segment i into c->out[i]: headers and payload, IP lengths, IPv4 ID
 * and header checksum, metadata. Returns the segment's payload length; in
 * COMPLETE mode *payload_sum is the payload's sum, taken while copying it.
 */
uint32_t vnic_gso_seg_build(const struct vnic_gso_ctx *c, uint32_t i, vnic_wsum_t *payload_sum);
/*
 * Finishes segment i's L4 checksum, complete or partial per c->flags: sums
 * the L4 header as the segmenter left it and adds payload_sum.
 */
void vnic_gso_seg_csum(const struct vnic_gso_ctx *c, uint32_t i, vnic_wsum_t payload_sum);
/* Per-type segmenters: write all c->segs segments; return c->segs. */
int vnic_gso_tcp_segment(const struct vnic_gso_ctx *c);
int vnic_gso_udp_segment(const struct vnic_gso_ctx *c);

#endif /* VNIC_NET_GSO_INT_H */
