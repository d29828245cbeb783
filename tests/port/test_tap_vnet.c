// SPDX-License-Identifier: MIT
/*
 * The TAP's vnet header <-> packet metadata (tap_vnet.c), no root needed:
 * crafted headers in front of frames built by pktgen, one case per
 * validation reason (each must drop with exactly its reason), the accepted
 * shapes (TSO v4/v6 with ECN, USO, plain partial, generic partial summed in
 * software, DATA_VALID, one-segment "GSO"), the write direction (aggregates,
 * making a complete aggregate partial, DATA_VALID), a round trip, and the
 * TUNSETOFFLOAD mapping.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pktgen.h"
#include "port/port.h"

static struct vnic_pkt_pool pool;

static int setup(void **state)
{
	(void)state;
	return vnic_pkt_pool_init(&pool, 8, VNIC_PKT_MAX_LEN + 256, 128);
}

static int teardown(void **state)
{
	(void)state;
	vnic_pkt_pool_fini(&pool);
	return 0;
}

/* A superpacket as the kernel hands it to a TAP reader, metadata cleared. */
static struct vnic_pkt *superpacket(bool v6, uint8_t proto, uint32_t payload, uint16_t mss,
				    struct vnic_vnet_hdr *h)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = vnic_pkt_alloc(&pool);

	assert_non_null(p);
	vnic_pktgen_flow_init(&f, v6, proto);
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, payload, mss), 0);
	memset(h, 0, sizeof(*h));
	h->flags = VNIC_VNET_F_NEEDS_CSUM;
	h->gso_type = proto == VNIC_IPPROTO_UDP ? VNIC_VNET_GSO_UDP_L4
		      : v6			? VNIC_VNET_GSO_TCPV6
						: VNIC_VNET_GSO_TCPV4;
	h->gso_size = htole16(mss);
	h->csum_start = htole16(p->csum_start);
	h->csum_offset = htole16(p->csum_offset);
	h->hdr_len = htole16((uint16_t)(p->l2_len + p->l3_len + p->l4_len));
	/* what a read hands us: bytes only */
	vnic_pkt_reset(p);
	p->len = (uint32_t)(vnic_pktgen_hdr_len(&f) + payload);
	return p;
}

/* A plain frame with a complete checksum; h says nothing. */
static struct vnic_pkt *plain(bool v6, uint8_t proto, uint32_t payload, struct vnic_vnet_hdr *h)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = vnic_pkt_alloc(&pool);
	uint32_t len;

	assert_non_null(p);
	vnic_pktgen_flow_init(&f, v6, proto);
	assert_int_equal(vnic_pktgen_build(p, &f, 0, payload), 0);
	len = p->len;
	vnic_pkt_reset(p);
	p->len = len;
	memset(h, 0, sizeof(*h));
	return p;
}

static bool l4_ok(const struct vnic_pkt *p)
{
	struct vnic_hdrs h;

	return vnic_parse_frame(p->data, p->len, &h) == VNIC_PARSE_OK &&
	       vnic_csum_l4_ok(p->data, &h);
}

/* ---- accepted ------------------------------------------------------------- */

static void test_tso4_superpacket(void **state)
{
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = superpacket(false, VNIC_IPPROTO_TCP, 60000, 1448, &h);

	(void)state;
	assert_int_equal(vnic_vnet_parse(&h, p, vnic_rss_default_key), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->gso_type, VNIC_GSO_TCPV4);
	assert_int_equal(p->gso_size, 1448);
	assert_int_equal(p->gso_segs, (60000 + 1447) / 1448);
	assert_int_equal(p->ip_summed, VNIC_CSUM_PARTIAL);
	assert_int_equal(p->csum_start, 14 + 20);
	assert_int_equal(p->csum_offset, 16);
	assert_true(p->flags & VNIC_PKT_F_PARSED);
	assert_int_equal(p->l2_len, 14);
	assert_int_equal(p->l3_len, 20);
	assert_int_equal(p->l4_len, 20);
	assert_int_equal(p->l4_proto, VNIC_IPPROTO_TCP);
	assert_int_not_equal(p->hash, 0);
	/* no key: no hash */
	vnic_pkt_reset(p);
	p->len = 14 + 20 + 20 + 60000;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->hash, 0);
	vnic_pkt_free(p);
}

static void test_tso6_ecn_and_uso(void **state)
{
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = superpacket(true, VNIC_IPPROTO_TCP, 30000, 1428, &h);

	(void)state;
	h.gso_type |= VNIC_VNET_GSO_ECN;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->gso_type, VNIC_GSO_TCPV6 | VNIC_GSO_TCP_ECN);
	assert_int_equal(p->gso_segs, (30000 + 1427) / 1428);
	assert_int_equal(p->csum_start, 14 + 40);
	vnic_pkt_free(p);

	p = superpacket(false, VNIC_IPPROTO_UDP, 8000, 1400, &h);
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->gso_type, VNIC_GSO_UDP_L4);
	assert_int_equal(p->gso_segs, 6);
	assert_int_equal(p->csum_offset, 6);
	vnic_pkt_free(p);
}

/* A superpacket not larger than one segment is a plain partial packet. */
static void test_one_segment_is_plain(void **state)
{
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = superpacket(false, VNIC_IPPROTO_TCP, 1000, 1448, &h);

	(void)state;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->gso_type, VNIC_GSO_NONE);
	assert_int_equal(p->gso_size, 0);
	assert_int_equal(p->ip_summed, VNIC_CSUM_PARTIAL);
	/* and the partial checksum completes to a valid one */
	assert_int_equal(vnic_csum_help(p), 0);
	assert_true(l4_ok(p));
	vnic_pkt_free(p);
}

static void test_flags_plain_and_data_valid(void **state)
{
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = plain(false, VNIC_IPPROTO_UDP, 100, &h);

	(void)state;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->ip_summed, VNIC_CSUM_NONE);
	assert_int_equal(p->gso_type, VNIC_GSO_NONE);
	h.flags = VNIC_VNET_F_DATA_VALID;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->ip_summed, VNIC_CSUM_NONE);
	assert_true(l4_ok(p));
	vnic_pkt_free(p);

	/* a frame that does not parse passes as it is when it asks for nothing */
	p = vnic_pkt_alloc(&pool);
	memset(p->data, 0, 64);
	p->data[12] = 0x88;
	p->data[13] = 0xb5; /* local experimental ethertype */
	p->len = 64;
	memset(&h, 0, sizeof(h));
	assert_int_equal(vnic_vnet_parse(&h, p, vnic_rss_default_key), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->hash, 0);
	vnic_pkt_free(p);
}

/* NEEDS_CSUM on the TCP field: offloaded. On another region: summed here. */
static void test_partial_offloaded_or_summed(void **state)
{
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = plain(false, VNIC_IPPROTO_TCP, 300, &h);
	uint8_t *check = p->data + 14 + 20 + 16;
	uint8_t orig[300];
	uint16_t good;

	(void)state;
	memcpy(&good, check, 2);
	/* the kernel leaves the pseudo-header sum; anything wrong shows below */
	check[0] ^= 0x5a;
	h.flags = VNIC_VNET_F_NEEDS_CSUM;
	h.csum_start = htole16(14 + 20);
	h.csum_offset = htole16(16);
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->ip_summed, VNIC_CSUM_PARTIAL);
	assert_int_equal(p->csum_start, 34);

	/* a region the device cannot offload (here: the L4 header's urgent
	 * pointer as "checksum", which is what a generic HW_CSUM allows) */
	memcpy(check, &good, 2);
	memcpy(orig, p->data + 54, sizeof(orig));
	vnic_pkt_reset(p);
	p->len = 14 + 20 + 20 + 300;
	h.csum_start = htole16(14 + 20 + 20);
	h.csum_offset = htole16(0);
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->ip_summed, VNIC_CSUM_NONE);
	/*
	 * skb_checksum_help semantics: the sum of the region as it was (the
	 * field's old bytes are the initial sum) stored at the field.
	 */
	{
		uint16_t stored, want = vnic_csum(orig, sizeof(orig));

		memcpy(&stored, p->data + 54, 2);
		assert_int_equal(stored, want ? want : 0xffff);
	}
	vnic_pkt_free(p);
}

/* ---- every drop reason ---------------------------------------------------- */

struct bad_case {
	const char *what;
	enum vnic_tap_drop why;
};

static void expect_drop(struct vnic_vnet_hdr *h, struct vnic_pkt *p, enum vnic_tap_drop why)
{
	uint32_t len = p->len;

	vnic_pkt_reset(p);
	p->len = len;
	assert_string_not_equal(vnic_tap_drop_name(why), "unknown");
	assert_int_equal(vnic_vnet_parse(h, p, NULL), why);
}

static void test_every_drop_reason(void **state)
{
	struct vnic_vnet_hdr h0, h;
	struct vnic_pkt *p = superpacket(false, VNIC_IPPROTO_TCP, 20000, 1448, &h0);
	uint32_t len = p->len;
	unsigned int seen = 0;

	(void)state;
#define DROP(why)                                                                                  \
	do {                                                                                       \
		expect_drop(&h, p, why);                                                           \
		seen |= 1u << (why);                                                               \
		h = h0;                                                                            \
		p->len = len;                                                                      \
	} while (0)
	h = h0;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);

	p->len = 13;
	DROP(VNIC_TAP_DROP_RUNT);
	h.flags |= 4; /* RSC_INFO */
	DROP(VNIC_TAP_DROP_BAD_FLAGS);
	h.flags |= 8; /* UDP_TUNNEL_CSUM */
	DROP(VNIC_TAP_DROP_BAD_FLAGS);
	h.gso_type = VNIC_VNET_GSO_UDP; /* UFO */
	DROP(VNIC_TAP_DROP_GSO_TYPE);
	h.gso_type = 2;
	DROP(VNIC_TAP_DROP_GSO_TYPE);
	h.gso_type = VNIC_VNET_GSO_TCPV4 | 0x20; /* UDP tunnel, needs a 24-byte header */
	DROP(VNIC_TAP_DROP_GSO_TYPE);
	h.gso_type = VNIC_VNET_GSO_UDP_L4 | VNIC_VNET_GSO_ECN;
	DROP(VNIC_TAP_DROP_GSO_TYPE);
	h.gso_type = VNIC_VNET_GSO_ECN; /* ECN without GSO */
	DROP(VNIC_TAP_DROP_GSO_TYPE);
	h.flags = 0;
	DROP(VNIC_TAP_DROP_GSO_NO_CSUM);
	h.flags = VNIC_VNET_F_DATA_VALID;
	DROP(VNIC_TAP_DROP_GSO_NO_CSUM);
	h.gso_size = 0;
	DROP(VNIC_TAP_DROP_GSO_SIZE);
	h.csum_start = htole16((uint16_t)len);
	DROP(VNIC_TAP_DROP_CSUM_START);
	h.csum_start = htole16(0xffff);
	DROP(VNIC_TAP_DROP_CSUM_START);
	h.csum_offset = htole16((uint16_t)(len - 34 - 1)); /* field's second byte past the end */
	DROP(VNIC_TAP_DROP_CSUM_OFFSET);
	h.csum_offset = htole16(0xffff);
	DROP(VNIC_TAP_DROP_CSUM_OFFSET);
	h.hdr_len = htole16((uint16_t)(len + 1));
	DROP(VNIC_TAP_DROP_HDR_LEN);
	/* GSO on the wrong L3, or a checksum region that is not the TCP field */
	h.gso_type = VNIC_VNET_GSO_TCPV6;
	DROP(VNIC_TAP_DROP_GSO_MISMATCH);
	h.gso_type = VNIC_VNET_GSO_UDP_L4;
	DROP(VNIC_TAP_DROP_GSO_MISMATCH);
	h.csum_start = htole16(14);
	h.csum_offset = htole16(10); /* the IPv4 header checksum */
	DROP(VNIC_TAP_DROP_GSO_MISMATCH);
	/* more segments than vnic ever sends at once */
	h.gso_size = htole16(16);
	DROP(VNIC_TAP_DROP_GSO_MISMATCH);
	/* offload asked for on a frame whose headers do not parse */
	p->data[14] = 0x43; /* IHL 3 */
	DROP(VNIC_TAP_DROP_BAD_HEADERS);
	h.gso_type = 0; /* checksum offload alone too */
	h.gso_size = 0;
	DROP(VNIC_TAP_DROP_BAD_HEADERS);
	/* but a plain frame that does not parse is passed on */
	h.flags = 0;
	h.gso_type = 0;
	assert_int_equal(vnic_vnet_parse(&h, p, NULL), VNIC_TAP_DROP_NONE);
#undef DROP
	/* every reason but NONE was produced by some case */
	assert_int_equal(seen, ((1u << VNIC_TAP_DROP_MAX) - 1) & ~1u);
	assert_string_equal(vnic_tap_drop_name(VNIC_TAP_DROP_MAX), "unknown");
	assert_string_equal(vnic_tap_drop_name(VNIC_TAP_DROP_GSO_MISMATCH), "gso_mismatch");
	vnic_pkt_free(p);
}

/* ---- write direction ------------------------------------------------------ */

static void test_build_aggregate_and_roundtrip(void **state)
{
	struct vnic_pktgen_flow f;
	struct vnic_vnet_hdr h, back;
	struct vnic_pkt *p = vnic_pkt_alloc(&pool);
	uint16_t type, size, segs, start, off;

	(void)state;
	vnic_pktgen_flow_init(&f, true, VNIC_IPPROTO_TCP);
	f.tcp_flags |= VNIC_TCP_CWR;
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, 40000, 1440), 0);
	type = p->gso_type;
	size = p->gso_size;
	segs = p->gso_segs;
	start = p->csum_start;
	off = p->csum_offset;
	assert_int_equal(vnic_vnet_build(p, &h), 0);
	assert_int_equal(h.flags, VNIC_VNET_F_NEEDS_CSUM);
	assert_int_equal(h.gso_type, VNIC_VNET_GSO_TCPV6 | VNIC_VNET_GSO_ECN);
	assert_int_equal(le16toh(h.gso_size), 1440);
	assert_int_equal(le16toh(h.hdr_len), 14 + 40 + 20);
	assert_int_equal(le16toh(h.csum_start), start);
	assert_int_equal(le16toh(h.csum_offset), off);
	assert_int_equal(h.num_buffers, 0);

	/* read back as the kernel would hand it over: same metadata */
	back = h;
	{
		uint32_t len = p->len;

		vnic_pkt_reset(p);
		p->len = len;
	}
	assert_int_equal(vnic_vnet_parse(&back, p, NULL), VNIC_TAP_DROP_NONE);
	assert_int_equal(p->gso_type, type);
	assert_int_equal(p->gso_size, size);
	assert_int_equal(p->gso_segs, segs);
	assert_int_equal(p->csum_start, start);
	vnic_pkt_free(p);
}

/* An aggregate whose checksum is complete is made partial for the kernel. */
static void test_build_complete_aggregate(void **state)
{
	struct vnic_pktgen_flow f;
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = vnic_pkt_alloc(&pool);

	(void)state;
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_TCP);
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, 9000, 1448), 0);
	/* complete the checksum: the aggregate now looks like a full packet */
	assert_int_equal(vnic_csum_help(p), 0);
	assert_true(l4_ok(p));
	p->gso_type = VNIC_GSO_TCPV4;
	p->gso_size = 1448;
	p->gso_segs = 7;
	assert_int_equal(vnic_vnet_build(p, &h), 0);
	assert_int_equal(h.flags, VNIC_VNET_F_NEEDS_CSUM);
	assert_int_equal(p->ip_summed, VNIC_CSUM_PARTIAL);
	assert_int_equal(le16toh(h.csum_start), 34);
	assert_int_equal(le16toh(h.csum_offset), 16);
	/* the pseudo-header sum is right: finishing the sum gives a valid checksum again */
	assert_false(l4_ok(p));
	assert_int_equal(vnic_csum_help(p), 0);
	assert_true(l4_ok(p));
	vnic_pkt_free(p);
}

static void test_build_flags_and_errors(void **state)
{
	struct vnic_vnet_hdr h;
	struct vnic_pkt *p = plain(false, VNIC_IPPROTO_UDP, 50, &h);

	(void)state;
	assert_int_equal(vnic_parse_pkt(p), VNIC_PARSE_OK);
	p->ip_summed = VNIC_CSUM_UNNECESSARY;
	assert_int_equal(vnic_vnet_build(p, &h), 0);
	assert_int_equal(h.flags, VNIC_VNET_F_DATA_VALID);
	assert_int_equal(h.gso_type, 0);
	p->ip_summed = VNIC_CSUM_NONE;
	assert_int_equal(vnic_vnet_build(p, &h), 0);
	assert_int_equal(h.flags, 0);
	p->ip_summed = VNIC_CSUM_COMPLETE;
	assert_int_equal(vnic_vnet_build(p, &h), 0);
	assert_int_equal(h.flags, 0);

	/* GSO metadata the header cannot say */
	p->gso_type = VNIC_GSO_TCPV4; /* on a UDP frame */
	p->gso_size = 10;
	assert_int_equal(vnic_vnet_build(p, &h), -EINVAL);
	p->gso_type = VNIC_GSO_UDP_L4;
	p->gso_size = 0;
	assert_int_equal(vnic_vnet_build(p, &h), -EINVAL);
	p->gso_type = VNIC_GSO_UDP_L4 | VNIC_GSO_TCP_ECN;
	p->gso_size = 10;
	assert_int_equal(vnic_vnet_build(p, &h), -EINVAL);
	p->gso_type = 1 << 7;
	assert_int_equal(vnic_vnet_build(p, &h), -EINVAL);
	p->gso_type = VNIC_GSO_UDP_L4;
	assert_int_equal(vnic_vnet_build(p, &h), 0);
	assert_int_equal(h.gso_type, VNIC_VNET_GSO_UDP_L4);
	assert_int_equal(le16toh(h.hdr_len), 14 + 20 + 8);
	vnic_pkt_free(p);
}

/* ---- TUNSETOFFLOAD mapping ---------------------------------------------- */

static void test_offload_mapping(void **state)
{
	const uint32_t all = VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 | VNIC_NETIF_F_TSO6 |
			     VNIC_NETIF_F_USO | VNIC_NETIF_F_RXCSUM;
	static const struct {
		uint32_t features;
		bool big;
		unsigned int want;
	} t[] = {
		{0, true, 0},
		{VNIC_NETIF_F_RXCSUM, true, 0},
		/* GSO without checksum offload: tun refuses, so nothing */
		{VNIC_NETIF_F_TSO4 | VNIC_NETIF_F_TSO6, true, 0},
		{VNIC_NETIF_F_CSUM, true, 0x01},
		{VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4, true, 0x01 | 0x02 | 0x08},
		{VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO6, true, 0x01 | 0x04 | 0x08},
		{VNIC_NETIF_F_CSUM | VNIC_NETIF_F_USO, true, 0x01 | 0x20 | 0x40},
		{all, true, 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40},
		/* buffers too small for a superpacket: checksum only */
		{all, false, 0x01},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(vnic_tap_offloads(t[i].features, t[i].big), t[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tso4_superpacket),
		cmocka_unit_test(test_tso6_ecn_and_uso),
		cmocka_unit_test(test_one_segment_is_plain),
		cmocka_unit_test(test_flags_plain_and_data_valid),
		cmocka_unit_test(test_partial_offloaded_or_summed),
		cmocka_unit_test(test_every_drop_reason),
		cmocka_unit_test(test_build_aggregate_and_roundtrip),
		cmocka_unit_test(test_build_complete_aggregate),
		cmocka_unit_test(test_build_flags_and_errors),
		cmocka_unit_test(test_offload_mapping),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
