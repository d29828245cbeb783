// SPDX-License-Identifier: MIT
/*
 * USO in software (VNIC_GSO_UDP_L4), UDP over IPv4 and IPv6. Unlike the old
 * UFO, which made IP fragments, every segment is a whole datagram: its own
 * UDP header, its own length and checksum, so a receiver sees gso_size-byte
 * datagrams (the last one shorter). gso.c has already copied headers and
 * payload and fixed the IP header of each segment.
 */
#include "gso_int.h"

enum { UDP_OFF_LEN = 4 };

int vnic_gso_udp_segment(const struct vnic_gso_ctx *c)
{
	uint32_t i;

	for (i = 0; i < c->segs; i++) {
		uint8_t *uh = c->out[i]->data + c->l4_off;
		vnic_wsum_t psum;
		uint32_t ulen = c->pkt->l4_len + vnic_gso_seg_build(c, i, &psum);

		uh[UDP_OFF_LEN] = (uint8_t)(ulen >> 8);
		uh[UDP_OFF_LEN + 1] = (uint8_t)ulen;
		vnic_gso_seg_csum(c, i, psum);
	}
	return (int)c->segs;
}
