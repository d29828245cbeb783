// SPDX-License-Identifier: MIT
/*
 * TSO in software, TCP over IPv4 and IPv6 (vnic_gso_segment dispatches here
 * for VNIC_GSO_TCPV4/TCPV6). gso.c has already copied headers and payload
 * and fixed the IP header of each segment; this file applies the TCP rules:
 *  - the sequence number advances by the payload already sent;
 *  - CWR only on the first segment: the sender reduced its window once, and a
 *    receiver must not see that signal repeated (RFC 3168 section 6.1.2);
 *  - FIN and PSH only on the last: they belong to the end of the data.
 * Everything else (ACK, ECE, URG, options, window) is repeated as Linux does.
 */
#include <string.h>

#include "gso_int.h"

enum {
	TCP_OFF_SEQ = 4,
	TCP_OFF_FLAGS = 13,
};

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int vnic_gso_tcp_segment(const struct vnic_gso_ctx *c)
{
	const uint8_t *th = c->pkt->data + c->l4_off;
	uint32_t seq = get32(th + TCP_OFF_SEQ);
	uint8_t flags = th[TCP_OFF_FLAGS];
	uint32_t i;

	for (i = 0; i < c->segs; i++) {
		uint8_t *sth = c->out[i]->data + c->l4_off;
		uint8_t f = flags;
		vnic_wsum_t psum;
		uint32_t len;

		len = vnic_gso_seg_build(c, i, &psum);
		if (i > 0)
			f &= (uint8_t)~VNIC_TCP_CWR;
		if (i + 1 < c->segs)
			f &= (uint8_t)~(VNIC_TCP_FIN | VNIC_TCP_PSH);
		put32(sth + TCP_OFF_SEQ, seq);
		sth[TCP_OFF_FLAGS] = f;
		vnic_gso_seg_csum(c, i, psum);
		seq += len;
	}
	return (int)c->segs;
}
