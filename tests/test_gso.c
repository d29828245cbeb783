// SPDX-License-Identifier: MIT
/*
 * Software segmentation (TSO/USO): table-driven cases built with pktgen, each
 * segmented in COMPLETE and PARTIAL checksum mode and checked field by field
 * against the superpacket, with checksums verified both by the library
 * (vnic_csum_l4_ok, vnic_csum_ip4_ok) and by a deliberately naive byte-wise
 * reference in this file. Then metadata the segmenter must refuse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"
#include "pktgen.h"

enum {
	IN_BUF = VNIC_PKT_MAX_LEN + 256,
	OUT_BUF = 9216 + 512,		/* a jumbo MSS plus headers */
	OUT_COUNT = VNIC_GSO_MAX_SEGS,
	HEADROOM = 128,
};

static struct vnic_pkt_pool in_pool;
static struct vnic_pkt_pool out_pool;
static struct vnic_pkt *outs[OUT_COUNT];
static struct vnic_pkt *outs2[OUT_COUNT];
static uint8_t snapshot[VNIC_PKT_MAX_LEN];

static int group_setup(void **state)
{
	(void)state;
	if (vnic_pkt_pool_init(&in_pool, 8, IN_BUF, HEADROOM))
		return -1;
	/* Two full sets of outputs: COMPLETE and PARTIAL results side by side. */
	if (vnic_pkt_pool_init(&out_pool, 2 * OUT_COUNT, OUT_BUF, HEADROOM))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	vnic_pkt_pool_fini(&in_pool);
	vnic_pkt_pool_fini(&out_pool);
	return 0;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- naive reference checksum: big-endian 16-bit words, one byte at a time ---- */

static uint32_t ref_sum(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	return s;
}

static uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Pseudo-header sum (not folded) for an L4 span of l4_total bytes. */
static uint32_t ref_pseudo(const uint8_t *l3, bool v6, uint8_t proto, uint32_t l4_total)
{
	if (v6)
		return ref_sum(l3 + 8, 32, 0) + (l4_total >> 16) + (l4_total & 0xffff) + proto;
	return ref_sum(l3 + 12, 8, 0) + proto + l4_total;
}

/* ---- the cases ---- */

struct gso_case {
	bool ipv6;
	uint8_t l4;
	uint8_t opts_len;
	bool vlan;
	uint8_t tcp_flags;
	uint16_t mss;
	uint32_t payload;
	uint32_t expect_segs;
	uint16_t ip_id;
	uint32_t seq;
};

#define TCP VNIC_IPPROTO_TCP
#define UDP VNIC_IPPROTO_UDP
#define ACK VNIC_TCP_ACK

static const struct gso_case cases[] = {
	/* v6    l4  opts vlan flags                mss    payload      segs  id      seq */
	{ false, TCP, 0, false, ACK, 1448, 3 * 1448, 3, 0x1234, 1000 },		/* 0: k*MSS */
	{ false, TCP, 0, false, ACK, 1448, 3 * 1448 + 100, 4, 0x1234, 1000 },	/* 1: k*MSS+r */
	{ false, TCP, 12, false, ACK, 1448, 45 * 1448, 45, 7, 1 },		/* 2: ~64K */
	{ false, TCP, 40, true, ACK | VNIC_TCP_PSH, 1000, 5 * 1000 + 1, 6, 0xfffe, 0xffffff00 },
	{ true, TCP, 0, false, ACK, 1428, 4 * 1428, 4, 0, 5 },			/* 4 */
	{ true, TCP, 20, false, ACK | VNIC_TCP_FIN, 1428, 4 * 1428 + 999, 5, 0, 0xfffffff0 },
	{ true, TCP, 40, true, ACK, 1001, 7 * 1001 + 3, 8, 0, 77 },		/* 6: odd MSS */
	{ false, UDP, 0, false, 0, 1472, 2 * 1472, 2, 0x4000, 0 },		/* 7 */
	{ false, UDP, 0, true, 0, 1200, 10 * 1200 + 33, 11, 0xffff, 0 },
	{ true, UDP, 0, false, 0, 1452, 3 * 1452, 3, 0, 0 },			/* 9 */
	{ true, UDP, 0, true, 0, 999, 5 * 999 + 500, 6, 0, 0 },
	{ false, TCP, 0, false, ACK, 1, 1, 1, 0x1234, 1000 },			/* 11: MSS 1 */
	{ true, UDP, 0, false, 0, 1, 1, 1, 0, 0 },
	{ false, TCP, 4, false, ACK | VNIC_TCP_PSH, 1, 7, 7, 0x1234, 1000 },	/* 13 */
	{ true, UDP, 0, true, 0, 1, 5, 5, 0, 0 },
	{ false, TCP, 0, false, ACK, 1448, 1000, 1, 0x1234, 1000 },		/* 15: < MSS */
	{ false, UDP, 0, false, 0, 1448, 1448, 1, 0x1234, 0 },			/* 16: == MSS */
	{ false, TCP, 0, false, ACK | VNIC_TCP_FIN, 1448, 0, 1, 0x1234, 1000 },	/* 17: empty */
	{ false, TCP, 8, true, ACK, 9000, 7 * 9000 + 1, 8, 0x1234, 1000 },	/* 18: jumbo MSS */
	{ true, UDP, 0, false, 0, 9000, 7 * 9000, 7, 0, 0 },
	{ false, TCP, 0, false, ACK | VNIC_TCP_CWR | VNIC_TCP_ECE | VNIC_TCP_PSH | VNIC_TCP_FIN,
	  1448, 2 * 1448 + 1, 3, 1, 1000 },					/* 20: all flags */
	{ true, TCP, 12, false, ACK | VNIC_TCP_CWR | VNIC_TCP_URG, 1440, 3 * 1440, 3, 0, 1000 },
};

static void flow_for(const struct gso_case *tc, struct vnic_pktgen_flow *f, uint32_t seed)
{
	uint8_t at = 0;

	vnic_pktgen_flow_init(f, tc->ipv6, tc->l4);
	f->vlan = tc->vlan;
	f->vlan_tci = 0x2064;
	f->tcp_opts_len = tc->opts_len;
	/*
	 * Well-formed options with distinct bytes, which the segmenter must
	 * repeat verbatim: NOP, NOP, timestamps when there is room, then one
	 * experimental option (kind 254, RFC 4727) filling the rest.
	 */
	for (uint8_t i = 0; i < tc->opts_len; i++)
		f->tcp_opts[i] = (uint8_t)(0xa0 + i);
	if (tc->opts_len >= 12) {
		f->tcp_opts[0] = 1;
		f->tcp_opts[1] = 1;
		f->tcp_opts[2] = 8;
		f->tcp_opts[3] = 10;
		at = 12;
	}
	if (tc->opts_len > at) {
		f->tcp_opts[at] = 254;
		f->tcp_opts[at + 1] = (uint8_t)(tc->opts_len - at);
	}
	f->tcp_flags = tc->tcp_flags;
	f->ip_id = tc->ip_id;
	f->seq = tc->seq;
	f->tos = 0x28;
	f->ttl = 33;
	f->flow_label = 0xbeef5;
	f->df = tc->ip_id & 1;	/* both DF settings across the table */
	f->seed = seed;
}

static uint8_t expected_flags(uint8_t flags, uint32_t i, uint32_t segs)
{
	if (i > 0)
		flags &= (uint8_t)~VNIC_TCP_CWR;
	if (i + 1 < segs)
		flags &= (uint8_t)~(VNIC_TCP_FIN | VNIC_TCP_PSH);
	return flags;
}

/* Everything one segment must satisfy, in either checksum mode (PARTIAL already resolved). */
static void check_segment(const struct gso_case *tc, const struct vnic_pkt *in,
			  const struct vnic_pkt *seg, uint32_t i, uint32_t segs,
			  uint32_t stream_off, uint32_t seed)
{
	uint32_t l4_off = (uint32_t)in->l2_len + in->l3_len;
	uint32_t hdr = l4_off + in->l4_len;
	uint32_t len = i + 1 < segs ? tc->mss : tc->payload - (segs - 1) * tc->mss;
	const uint8_t *l3 = seg->data + in->l2_len, *l4 = seg->data + l4_off;
	const uint8_t *in_l4 = in->data + l4_off;
	struct vnic_hdrs h;

	assert_int_equal(seg->len, hdr + len);
	assert_true(len <= tc->mss);
	assert_int_equal(seg->gso_type, VNIC_GSO_NONE);
	assert_int_equal(seg->gso_size, 0);
	assert_int_equal(seg->gso_segs, 0);
	assert_true(seg->flags & VNIC_PKT_F_PARSED);
	assert_int_equal(seg->l2_len, in->l2_len);
	assert_int_equal(seg->l3_len, in->l3_len);
	assert_int_equal(seg->l4_len, in->l4_len);
	assert_int_equal(seg->l3_proto, in->l3_proto);
	assert_int_equal(seg->l4_proto, in->l4_proto);
	assert_int_equal(seg->hash, in->hash);
	assert_null(seg->next);

	/* The frame parses on its own and agrees with the metadata. */
	assert_int_equal(vnic_parse_frame(seg->data, seg->len, &h), VNIC_PARSE_OK);
	assert_int_equal(h.l4_off, l4_off);
	assert_int_equal(h.payload_len, len);
	assert_int_equal(h.trailer_len, 0);

	/* L2 (MACs, tag) and the addresses are copied unchanged. */
	assert_memory_equal(seg->data, in->data, in->l2_len);
	if (tc->ipv6) {
		assert_int_equal(rd16(l3 + 4), in->l4_len + len);
		assert_memory_equal(l3, in->data + in->l2_len, 4);	/* version, TC, label */
		assert_memory_equal(l3 + 6, in->data + in->l2_len + 6, 34);
	} else {
		assert_true(vnic_csum_ip4_ok(l3, in->l3_len));
		assert_int_equal(ref_fold(ref_sum(l3, in->l3_len, 0)), 0xffff);
		assert_int_equal(rd16(l3 + 2), in->l3_len + in->l4_len + len);
		assert_int_equal(rd16(l3 + 4), (uint16_t)(tc->ip_id + i));
		assert_memory_equal(l3 + 6, in->data + in->l2_len + 6, 4);	/* DF, TTL, proto */
		assert_memory_equal(l3 + 12, in->data + in->l2_len + 12, 8);
		assert_int_equal(l3[0], in->data[in->l2_len]);
		assert_int_equal(l3[1], in->data[in->l2_len + 1]);
	}

	assert_memory_equal(l4, in_l4, 4);	/* ports */
	if (tc->l4 == TCP) {
		assert_int_equal(rd32(l4 + 4), tc->seq + i * tc->mss);
		assert_memory_equal(l4 + 8, in_l4 + 8, 5);	/* ack, data offset */
		assert_int_equal(l4[13], expected_flags(tc->tcp_flags, i, segs));
		assert_memory_equal(l4 + 14, in_l4 + 14, 2);	/* window */
		assert_memory_equal(l4 + 18, in_l4 + 18, in->l4_len - 18); /* urg, options */
	} else {
		assert_int_equal(rd16(l4 + 4), 8 + len);
		assert_int_not_equal(rd16(l4 + 6), 0);
	}

	/* Checksums: the library's verifier and the naive one. */
	assert_true(vnic_csum_l4_ok(seg->data, &h));
	assert_int_equal(ref_fold(ref_sum(l4, in->l4_len + len,
					  ref_pseudo(l3, tc->ipv6, tc->l4, in->l4_len + len))),
			 0xffff);

	/* Payload: the right slice of the stream, and the same bytes as the input's. */
	assert_true(vnic_pktgen_verify(seg->data + hdr, len, seed, stream_off + i * tc->mss));
	assert_memory_equal(seg->data + hdr, in->data + hdr + (size_t)i * tc->mss, len);
}

static void check_partial_fields(const struct gso_case *tc, const struct vnic_pkt *in,
				 const struct vnic_pkt *seg)
{
	uint32_t l4_off = (uint32_t)in->l2_len + in->l3_len;
	uint32_t l4_total = seg->len - l4_off;
	uint16_t field = rd16(seg->data + l4_off + (tc->l4 == TCP ? 16 : 6));

	assert_int_equal(seg->ip_summed, VNIC_CSUM_PARTIAL);
	assert_int_equal(seg->csum_start, l4_off);
	assert_int_equal(seg->csum_offset, tc->l4 == TCP ? 16 : 6);
	/* The folded pseudo-header sum over this segment's own L4 length. */
	assert_int_equal(field, ref_fold(ref_pseudo(seg->data + in->l2_len, tc->ipv6, tc->l4,
						    l4_total)));
}

static void run_case(const struct gso_case *tc, uint32_t n)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *in = vnic_pkt_alloc(&in_pool);
	struct vnic_pkt in_meta;
	uint32_t seed = 0x5eed0000u + n, off = 1000u * n;
	uint32_t segs, i;

	print_message("case %u\n", n);
	assert_non_null(in);
	flow_for(tc, &f, seed);
	assert_int_equal(vnic_pktgen_build_gso(in, &f, off, tc->payload, tc->mss), 0);
	in->hash = 0xabcd0000u + n;
	assert_int_equal(in->gso_segs, tc->expect_segs);
	assert_int_equal(vnic_gso_count(in), (int)tc->expect_segs);
	segs = tc->expect_segs;

	in_meta = *in;
	memcpy(snapshot, in->data, in->len);
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, segs), segs);
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs2, segs), segs);

	assert_int_equal(vnic_gso_segment(in, outs, segs, VNIC_GSO_F_CSUM_COMPLETE), (int)segs);
	assert_int_equal(vnic_gso_segment(in, outs2, segs, VNIC_GSO_F_CSUM_PARTIAL), (int)segs);
	/* Never modifies the input. */
	assert_memory_equal(&in_meta, in, sizeof(*in));
	assert_memory_equal(snapshot, in->data, in->len);

	for (i = 0; i < segs; i++) {
		uint32_t field = (uint32_t)in->l2_len + in->l3_len + (tc->l4 == TCP ? 16 : 6);

		assert_int_equal(outs[i]->ip_summed, VNIC_CSUM_NONE);
		check_segment(tc, in, outs[i], i, segs, off, seed);

		check_partial_fields(tc, in, outs2[i]);
		assert_int_equal(vnic_csum_help(outs2[i]), 0);
		assert_int_equal(outs2[i]->ip_summed, VNIC_CSUM_NONE);
		check_segment(tc, in, outs2[i], i, segs, off, seed);
		/* Both modes give the same frame but for the checksum field (TCP: 0 or 0xffff). */
		assert_int_equal(outs2[i]->len, outs[i]->len);
		assert_memory_equal(outs2[i]->data, outs[i]->data, field);
		assert_memory_equal(outs2[i]->data + field + 2, outs[i]->data + field + 2,
				    outs[i]->len - field - 2);
	}

	for (i = 0; i < segs; i++) {
		vnic_pkt_free(outs[i]);
		vnic_pkt_free(outs2[i]);
	}
	vnic_pkt_free(in);
}

static void test_gso_table(void **state)
{
	(void)state;
	for (uint32_t n = 0; n < sizeof(cases) / sizeof(cases[0]); n++)
		run_case(&cases[n], n);
}

/* Builds case c into a fresh input packet. */
static struct vnic_pkt *build_case(const struct gso_case *tc)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *in = vnic_pkt_alloc(&in_pool);

	assert_non_null(in);
	flow_for(tc, &f, 99);
	assert_int_equal(vnic_pktgen_build_gso(in, &f, 0, tc->payload, tc->mss), 0);
	return in;
}

static void free_outs(struct vnic_pkt **pkts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		vnic_pkt_free(pkts[i]);
}

static void test_flags_placement_explicit(void **state)
{
	/* Case 20: ACK|CWR|ECE|PSH|FIN over 3 segments. */
	static const uint8_t want[3] = {
		VNIC_TCP_ACK | VNIC_TCP_CWR | VNIC_TCP_ECE,
		VNIC_TCP_ACK | VNIC_TCP_ECE,
		VNIC_TCP_ACK | VNIC_TCP_ECE | VNIC_TCP_PSH | VNIC_TCP_FIN,
	};
	struct vnic_pkt *in = build_case(&cases[20]);
	uint32_t l4_off = (uint32_t)in->l2_len + in->l3_len;

	(void)state;
	assert_int_equal(in->gso_type, VNIC_GSO_TCPV4 | VNIC_GSO_TCP_ECN);
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 3), 3);
	assert_int_equal(vnic_gso_segment(in, outs, 3, 0), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(outs[i]->data[l4_off + 13], want[i]);
	free_outs(outs, 3);

	/* One segment keeps every flag: it is both first and last. */
	in->gso_size = (uint16_t)(in->len - l4_off);
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 1), 1);
	assert_int_equal(vnic_gso_segment(in, outs, 1, 0), 1);
	assert_int_equal(outs[0]->data[l4_off + 13], VNIC_TCP_ACK | VNIC_TCP_CWR | VNIC_TCP_ECE |
							       VNIC_TCP_PSH | VNIC_TCP_FIN);
	free_outs(outs, 1);
	vnic_pkt_free(in);
}

static void test_ip4_id_wraps(void **state)
{
	static const uint16_t want[6] = { 0xfffe, 0xffff, 0x0000, 0x0001, 0x0002, 0x0003 };
	struct vnic_pkt *in = build_case(&cases[3]);	/* 6 segments from ID 0xfffe */

	(void)state;
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 6), 6);
	assert_int_equal(vnic_gso_segment(in, outs, 6, 0), 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(rd16(outs[i]->data + outs[i]->l2_len + 4), want[i]);
		assert_true(vnic_csum_ip4_ok(outs[i]->data + outs[i]->l2_len, 20));
	}
	free_outs(outs, 6);
	vnic_pkt_free(in);
}

/* Unparsed input (metadata cleared) is parsed privately: same result, input untouched. */
static void test_unparsed_input(void **state)
{
	const struct gso_case *tc = &cases[6];
	struct vnic_pkt *in = build_case(tc), meta;
	uint32_t segs = tc->expect_segs;

	(void)state;
	in->flags = 0;
	in->l2_len = in->l3_len = in->l4_len = 0;
	in->l3_proto = 0;
	in->l4_proto = 0;
	meta = *in;
	assert_int_equal(vnic_gso_count(in), (int)segs);
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, segs), segs);
	assert_int_equal(vnic_gso_segment(in, outs, segs, 0), (int)segs);
	assert_memory_equal(&meta, in, sizeof(meta));
	for (uint32_t i = 0; i < segs; i++) {
		struct vnic_hdrs h;

		assert_true(outs[i]->flags & VNIC_PKT_F_PARSED);
		assert_int_equal(outs[i]->l2_len, 18);
		assert_int_equal(outs[i]->l3_len, 40);
		assert_int_equal(outs[i]->l4_len, 60);
		assert_int_equal(outs[i]->l3_proto, VNIC_ETH_P_IPV6);
		assert_int_equal(outs[i]->l4_proto, VNIC_IPPROTO_TCP);
		assert_int_equal(vnic_parse_frame(outs[i]->data, outs[i]->len, &h), VNIC_PARSE_OK);
		assert_true(vnic_csum_l4_ok(outs[i]->data, &h));
	}
	free_outs(outs, segs);
	vnic_pkt_free(in);
}

/* A superpacket whose checksum is complete (ip_summed NONE) segments the same way. */
static void test_input_csum_none(void **state)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *in = vnic_pkt_alloc(&in_pool);

	(void)state;
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	assert_int_equal(vnic_pktgen_build(in, &f, 0, 3000), 0);
	assert_int_equal(in->ip_summed, VNIC_CSUM_NONE);
	in->gso_type = VNIC_GSO_UDP_L4;
	in->gso_size = 1400;
	in->flags |= VNIC_PKT_F_VLAN;	/* a stripped tag travels with every segment */
	in->vlan_tci = 0x0123;
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 3), 3);
	assert_int_equal(vnic_gso_segment(in, outs, 3, 0), 3);
	for (int i = 0; i < 3; i++) {
		struct vnic_hdrs h;

		assert_int_equal(vnic_parse_frame(outs[i]->data, outs[i]->len, &h), VNIC_PARSE_OK);
		assert_true(vnic_csum_l4_ok(outs[i]->data, &h));
		assert_int_equal(h.payload_len, i < 2 ? 1400 : 200);
		assert_true(vnic_pktgen_verify_pkt(outs[i], f.seed, (uint32_t)i * 1400));
		assert_true(outs[i]->flags & VNIC_PKT_F_VLAN);
		assert_int_equal(outs[i]->vlan_tci, 0x0123);
	}
	free_outs(outs, 3);
	vnic_pkt_free(in);
}

/*
 * A UDP segment whose checksum computes to 0 must carry 0xffff: 0 would mean
 * "no checksum" (RFC 768) and is invalid over IPv6. The last payload word of
 * segment 0 is chosen to make its sum come out as 0xffff.
 */
static void test_udp_zero_checksum(void **state)
{
	(void)state;
	for (int v6 = 0; v6 < 2; v6++) {
		struct vnic_pktgen_flow f;
		struct vnic_pkt *in = vnic_pkt_alloc(&in_pool);
		uint32_t l4_off, seg0_l4, sum;
		uint8_t *l4, *word, hdr[8];
		uint16_t fix;

		vnic_pktgen_flow_init(&f, v6, VNIC_IPPROTO_UDP);
		assert_int_equal(vnic_pktgen_build_gso(in, &f, 0, 2500, 1000), 0);
		l4_off = (uint32_t)in->l2_len + in->l3_len;
		l4 = in->data + l4_off;
		seg0_l4 = 8 + 1000;
		word = l4 + seg0_l4 - 2;	/* even offset within the L4 header */
		word[0] = word[1] = 0;
		/* Segment 0 as the segmenter will write it: its own length, check 0. */
		memcpy(hdr, l4, 8);
		hdr[4] = (uint8_t)(seg0_l4 >> 8);
		hdr[5] = (uint8_t)seg0_l4;
		hdr[6] = hdr[7] = 0;
		sum = ref_sum(hdr, 8, ref_pseudo(in->data + in->l2_len, v6, VNIC_IPPROTO_UDP,
						 seg0_l4));
		sum = ref_sum(l4 + 8, 1000, sum);
		fix = (uint16_t)(0xffff - ref_fold(sum));
		word[0] = (uint8_t)(fix >> 8);
		word[1] = (uint8_t)fix;

		assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 3), 3);
		assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs2, 3), 3);
		assert_int_equal(vnic_gso_segment(in, outs, 3, 0), 3);
		assert_int_equal(vnic_gso_segment(in, outs2, 3, VNIC_GSO_F_CSUM_PARTIAL), 3);
		assert_int_equal(vnic_csum_help(outs2[0]), 0);
		for (int m = 0; m < 2; m++) {
			struct vnic_pkt *seg = m ? outs2[0] : outs[0];
			struct vnic_hdrs h;

			assert_int_equal(rd16(seg->data + l4_off + 6), 0xffff);
			assert_int_equal(vnic_parse_frame(seg->data, seg->len, &h), VNIC_PARSE_OK);
			assert_true(vnic_csum_l4_ok(seg->data, &h));
		}
		free_outs(outs, 3);
		free_outs(outs2, 3);
		vnic_pkt_free(in);
	}
}

/* Inserts an 8-byte IPv6 extension header of type ext after the fixed header. */
static void insert_ip6_ext(struct vnic_pkt *pkt, uint8_t ext)
{
	uint8_t *l3 = pkt->data + pkt->l2_len;
	uint8_t *p = l3 + 40;
	uint32_t tail = pkt->len - pkt->l2_len - 40;

	assert_non_null(vnic_pkt_put(pkt, 8));
	memmove(p + 8, p, tail);
	memset(p, 0, 8);
	p[0] = l3[6];
	if (ext != VNIC_IPPROTO_FRAGMENT) {
		p[2] = 1;	/* PadN covering the 6 option bytes */
		p[3] = 4;
	} else {
		p[7] = 0x2a;	/* identification; offset 0, M 0: an atomic fragment */
	}
	l3[6] = ext;
	l3[4] = (uint8_t)((rd16(l3 + 4) + 8) >> 8);
	l3[5] = (uint8_t)(rd16(l3 + 4) + 8);
	pkt->l3_len += 8;
	pkt->csum_start += 8;
}

/* Extension headers ride along in every segment; a fragment header is refused. */
static void test_ip6_ext_headers(void **state)
{
	static const uint8_t exts[] = { VNIC_IPPROTO_DSTOPTS, VNIC_IPPROTO_HOPOPTS };
	struct vnic_pktgen_flow f;

	(void)state;
	for (int l4 = 0; l4 < 2; l4++) {
		for (size_t e = 0; e < sizeof(exts); e++) {
			struct vnic_pkt *in = vnic_pkt_alloc(&in_pool);

			vnic_pktgen_flow_init(&f, true, l4 ? VNIC_IPPROTO_UDP : VNIC_IPPROTO_TCP);
			assert_int_equal(vnic_pktgen_build_gso(in, &f, 0, 3000, 1400), 0);
			insert_ip6_ext(in, exts[e]);
			assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 3), 3);
			assert_int_equal(vnic_gso_segment(in, outs, 3, 0), 3);
			for (uint32_t i = 0; i < 3; i++) {
				struct vnic_hdrs h;
				uint8_t *l3 = outs[i]->data + 14;

				assert_int_equal(vnic_parse_frame(outs[i]->data, outs[i]->len, &h),
						 VNIC_PARSE_OK);
				assert_int_equal(h.l3_len, 48);
				assert_int_equal(rd16(l3 + 4),
						 8 + in->l4_len + (i < 2 ? 1400 : 200));
				assert_int_equal(l3[6], exts[e]);
				assert_true(vnic_csum_l4_ok(outs[i]->data, &h));
				assert_true(vnic_pktgen_verify_pkt(outs[i], f.seed, i * 1400));
			}
			free_outs(outs, 3);

			/* The same chain with a fragment header in it. */
			vnic_pktgen_flow_init(&f, true, l4 ? VNIC_IPPROTO_UDP : VNIC_IPPROTO_TCP);
			assert_int_equal(vnic_pktgen_build_gso(in, &f, 0, 3000, 1400), 0);
			insert_ip6_ext(in, VNIC_IPPROTO_FRAGMENT);
			if (e)
				insert_ip6_ext(in, exts[e]);
			assert_int_equal(vnic_gso_count(in), -EINVAL);
			in->flags = 0;	/* and again through the segmenter's own parse */
			assert_int_equal(vnic_gso_count(in), -EINVAL);
			vnic_pkt_free(in);
		}
	}
}

/* Each way metadata can be wrong: both count and segment say -EINVAL. */
static void expect_einval(struct vnic_pkt *in, const char *what)
{
	print_message("einval: %s\n", what);
	assert_int_equal(vnic_gso_count(in), -EINVAL);
	assert_int_equal(vnic_gso_segment(in, outs, OUT_COUNT, 0), -EINVAL);
	assert_int_equal(vnic_gso_segment(in, outs, OUT_COUNT, VNIC_GSO_F_CSUM_PARTIAL), -EINVAL);
}

static void test_bad_metadata(void **state)
{
	struct vnic_pkt *tcp4 = build_case(&cases[1]);
	struct vnic_pkt *tcp6 = build_case(&cases[4]);
	struct vnic_pkt *udp4 = build_case(&cases[7]);
	struct vnic_pkt *udp6 = build_case(&cases[9]);
	struct vnic_pkt save;
	uint8_t *l3 = tcp4->data + tcp4->l2_len;

	(void)state;
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, OUT_COUNT), OUT_COUNT);
	/* Sanity: these inputs are good as built. */
	assert_int_equal(vnic_gso_segment(tcp4, outs, OUT_COUNT, 0), 4);
	assert_int_equal(vnic_gso_segment(udp6, outs, OUT_COUNT, 0), 3);

	save = *tcp4;
	tcp4->gso_size = 0;
	expect_einval(tcp4, "gso_size 0");
	*tcp4 = save;
	tcp4->gso_type = 1 << 5;
	expect_einval(tcp4, "unknown type bit");
	tcp4->gso_type = VNIC_GSO_TCP_ECN;
	expect_einval(tcp4, "ECN alone");
	tcp4->gso_type = VNIC_GSO_TCPV4 | VNIC_GSO_TCPV6;
	expect_einval(tcp4, "two types");
	tcp4->gso_type = VNIC_GSO_TCPV6;
	expect_einval(tcp4, "TCPV6 on IPv4");
	tcp4->gso_type = VNIC_GSO_UDP_L4;
	expect_einval(tcp4, "UDP_L4 on TCP");
	*tcp4 = save;

	save = *tcp6;
	tcp6->gso_type = VNIC_GSO_TCPV4;
	expect_einval(tcp6, "TCPV4 on IPv6");
	*tcp6 = save;

	save = *udp4;
	udp4->gso_type = VNIC_GSO_TCPV4;
	expect_einval(udp4, "TCPV4 on UDP");
	udp4->gso_type = VNIC_GSO_UDP_L4 | VNIC_GSO_TCP_ECN;
	expect_einval(udp4, "ECN on UDP");
	*udp4 = save;

	/* Headers past the end of the packet. */
	save = *tcp4;
	tcp4->len = tcp4->l2_len + tcp4->l3_len + tcp4->l4_len - 1;
	expect_einval(tcp4, "len shorter than headers");
	*tcp4 = save;
	tcp4->l2_len = 250;
	expect_einval(tcp4, "l2_len past headers limit");
	*tcp4 = save;
	save = *udp6;
	udp6->l3_len = 4000;
	expect_einval(udp6, "l3_len past len");
	*udp6 = save;

	/* Metadata disagreeing with the header bytes. */
	save = *tcp4;
	tcp4->l3_len = 24;
	expect_einval(tcp4, "l3_len != IHL");
	*tcp4 = save;
	tcp4->l4_len = 24;
	expect_einval(tcp4, "l4_len != doff");
	*tcp4 = save;
	tcp4->l3_proto = VNIC_ETH_P_IPV6;
	expect_einval(tcp4, "l3_proto IPv6 on an IPv4 header");
	*tcp4 = save;
	tcp4->l4_proto = VNIC_IPPROTO_UDP;
	expect_einval(tcp4, "l4_proto UDP with TCPV4");
	*tcp4 = save;
	tcp4->l2_len = 10;
	expect_einval(tcp4, "l2_len shorter than Ethernet");
	*tcp4 = save;
	save = *udp4;
	udp4->l4_len = 20;
	expect_einval(udp4, "UDP l4_len 20");
	*udp4 = save;

	/* The header says IHL 6 while the metadata says 20 bytes. */
	l3[0] = 0x46;
	vnic_csum_ip4_set(l3, 20);
	expect_einval(tcp4, "IHL byte != l3_len");
	l3[0] = 0x45;
	vnic_csum_ip4_set(l3, 20);

	/* An IPv4 fragment cannot be segmented (header checksum kept valid). */
	l3[6] |= 0x20;
	vnic_csum_ip4_set(l3, 20);
	expect_einval(tcp4, "IPv4 MF set");
	l3[6] &= (uint8_t)~0x20;
	vnic_csum_ip4_set(l3, 20);

	/* More segments than VNIC_GSO_MAX_SEGS. */
	save = *tcp4;
	tcp4->gso_size = 1;
	assert_true(tcp4->len - 54 > VNIC_GSO_MAX_SEGS);
	expect_einval(tcp4, "too many segments");
	*tcp4 = save;

	/*
	 * A segment too big for the 16-bit IPv4 total length: a 65495-byte
	 * payload (IPv4 total length 65535) plus 5 bytes past it, in one MSS.
	 */
	{
		struct vnic_pktgen_flow f;
		struct vnic_pkt *big = vnic_pkt_alloc(&in_pool);

		vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_TCP);
		assert_int_equal(vnic_pktgen_build_gso(big, &f, 0, 65495, 65535), 0);
		assert_int_equal(vnic_gso_count(big), 1);
		assert_non_null(vnic_pkt_put(big, 5));
		expect_einval(big, "segment over 65535 bytes of IPv4");
		big->gso_size = 32768;
		assert_int_equal(vnic_gso_count(big), 2);
		vnic_pkt_free(big);
	}

	/* Unparsed and unparsable. */
	save = *udp4;
	udp4->flags = 0;
	udp4->data[12] = 0x08;
	udp4->data[13] = 0x00;
	udp4->data[14] = 0x35;	/* IPv4 with IHL 5 but version 3 */
	expect_einval(udp4, "unparsable frame");
	udp4->data[14] = 0x45;
	*udp4 = save;

	/* Not a superpacket: count says 1, segment has nothing to do. */
	save = *tcp4;
	tcp4->gso_type = VNIC_GSO_NONE;
	tcp4->gso_size = 0;
	assert_int_equal(vnic_gso_count(tcp4), 1);
	assert_int_equal(vnic_gso_segment(tcp4, outs, OUT_COUNT, 0), -EINVAL);
	*tcp4 = save;

	/* Unknown segment flags, a NULL output, the input as an output. */
	assert_int_equal(vnic_gso_segment(tcp4, outs, OUT_COUNT, 1u << 3), -EINVAL);
	{
		struct vnic_pkt *keep = outs[2];

		outs[2] = NULL;
		assert_int_equal(vnic_gso_segment(tcp4, outs, OUT_COUNT, 0), -EINVAL);
		outs[2] = tcp4;
		assert_int_equal(vnic_gso_segment(tcp4, outs, OUT_COUNT, 0), -EINVAL);
		outs[2] = keep;
	}

	/* Everything restored: the good inputs still segment. */
	assert_int_equal(vnic_gso_segment(tcp4, outs, OUT_COUNT, 0), 4);
	assert_int_equal(vnic_gso_segment(tcp6, outs, OUT_COUNT, 0), 4);
	assert_int_equal(vnic_gso_segment(udp4, outs, OUT_COUNT, 0), 2);
	free_outs(outs, OUT_COUNT);
	vnic_pkt_free(tcp4);
	vnic_pkt_free(tcp6);
	vnic_pkt_free(udp4);
	vnic_pkt_free(udp6);
}

static void test_enospc(void **state)
{
	struct vnic_pkt_pool small;
	struct vnic_pkt *in = build_case(&cases[1]);	/* 4 segments, the last 100 bytes */
	uint32_t hdr = (uint32_t)in->l2_len + in->l3_len + in->l4_len;

	(void)state;
	assert_int_equal(vnic_pkt_alloc_bulk(&out_pool, outs, 4), 4);
	assert_int_equal(vnic_gso_segment(in, outs, 3, 0), -ENOSPC);
	assert_int_equal(vnic_gso_segment(in, outs, 0, 0), -ENOSPC);
	assert_int_equal(vnic_gso_segment(in, outs, 4, 0), 4);
	free_outs(outs, 4);

	/* Buffers with room for the 100-byte last segment but not an MSS. */
	assert_int_equal(vnic_pkt_pool_init(&small, 8, 64 + hdr + 1447, 64), 0);
	assert_int_equal(vnic_pkt_alloc_bulk(&small, outs, 4), 4);
	assert_int_equal(vnic_gso_segment(in, outs, 4, 0), -ENOSPC);
	/* Checked before anything is written. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(outs[i]->len, 0);
	free_outs(outs, 4);
	vnic_pkt_pool_fini(&small);

	/* Exactly headers + MSS fits. */
	assert_int_equal(vnic_pkt_pool_init(&small, 8, 64 + hdr + 1448, 64), 0);
	assert_int_equal(vnic_pkt_alloc_bulk(&small, outs, 4), 4);
	assert_int_equal(vnic_gso_segment(in, outs, 4, VNIC_GSO_F_CSUM_PARTIAL), 4);
	assert_int_equal(outs[0]->len, hdr + 1448);
	free_outs(outs, 4);
	vnic_pkt_pool_fini(&small);
	vnic_pkt_free(in);
}

/* pktgen itself: what the other tests lean on. */
static void test_pktgen_frames(void **state)
{
	struct vnic_pkt *pkt = vnic_pkt_alloc(&in_pool);
	struct vnic_pktgen_flow f;
	struct vnic_hdrs h;

	(void)state;
	for (int v6 = 0; v6 < 2; v6++) {
		for (int tcp = 0; tcp < 2; tcp++) {
			vnic_pktgen_flow_init(&f, v6, tcp ? VNIC_IPPROTO_TCP : VNIC_IPPROTO_UDP);
			f.vlan = v6;
			f.tcp_opts_len = 8;
			assert_int_equal(vnic_pktgen_build(pkt, &f, 5, 777), 0);
			assert_int_equal(pkt->len, vnic_pktgen_hdr_len(&f) + 777);
			assert_int_equal(vnic_parse_frame(pkt->data, pkt->len, &h), VNIC_PARSE_OK);
			assert_int_equal(h.l2_len, pkt->l2_len);
			assert_int_equal(h.l3_len, pkt->l3_len);
			assert_int_equal(h.l4_len, pkt->l4_len);
			assert_int_equal(h.l4_proto, pkt->l4_proto);
			assert_int_equal(h.payload_len, 777);
			assert_true(vnic_csum_l4_ok(pkt->data, &h));
			assert_true(vnic_pktgen_verify_pkt(pkt, f.seed, 5));
			assert_false(vnic_pktgen_verify_pkt(pkt, f.seed, 6));
			assert_false(vnic_pktgen_verify_pkt(pkt, f.seed + 1, 5));
			/* Corrupt one payload byte: both the pattern and the checksum notice. */
			pkt->data[pkt->len - 300] ^= 0x40;
			assert_int_equal(vnic_pktgen_mismatch(pkt->data + h.payload_off, 777,
							      f.seed, 5), 777 - 300);
			assert_false(vnic_csum_l4_ok(pkt->data, &h));
		}
	}
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_TCP);
	f.tcp_opts_len = 6;
	assert_int_equal(vnic_pktgen_build(pkt, &f, 0, 10), -EINVAL);
	f.tcp_opts_len = 0;
	assert_int_equal(vnic_pktgen_build_gso(pkt, &f, 0, 10, 0), -EINVAL);
	assert_int_equal(vnic_pktgen_build(pkt, &f, 0, 65536), -EMSGSIZE);
	vnic_pkt_free(pkt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pktgen_frames),
		cmocka_unit_test(test_gso_table),
		cmocka_unit_test(test_flags_placement_explicit),
		cmocka_unit_test(test_ip4_id_wraps),
		cmocka_unit_test(test_unparsed_input),
		cmocka_unit_test(test_input_csum_none),
		cmocka_unit_test(test_udp_zero_checksum),
		cmocka_unit_test(test_ip6_ext_headers),
		cmocka_unit_test(test_bad_metadata),
		cmocka_unit_test(test_enospc),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
