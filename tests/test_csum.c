// SPDX-License-Identifier: MIT
/*
 * Internet checksum: vnic_csum_partial and every implementation against the
 * naive reference (random lengths and alignments), golden frames (verify,
 * corrupt, restore, recompute), pseudo headers, RFC 1624 incremental updates
 * and vnic_csum_help on partial packets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csum_ref.h"
#include "net/net.h"
#include "support.h"

enum {
	MAX_LEN = 65535,
	BUF_LEN = MAX_LEN + 64,
	RANDOM_CASES = 2000,
};

static uint8_t bigbuf[BUF_LEN] __attribute__((aligned(64)));

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The raw-memory (vnic_csum) form of a big-endian value, for comparisons. */
static uint16_t raw16(uint16_t be_value)
{
	uint8_t b[2];
	uint16_t raw;

	put_be16(b, be_value);
	memcpy(&raw, b, sizeof(raw));
	return raw;
}

static uint16_t swap16(uint16_t x)
{
	return (uint16_t)(x << 8 | x >> 8);
}

/* Every vnic_wsum_t is folded to 16 bits (csum.c); that is part of the contract tested. */
static void check_one(const uint8_t *p, size_t len)
{
	vnic_wsum_t s = vnic_csum_partial(p, len, 0);

	assert_true(s <= 0xffff);
	assert_int_equal(vnic_csum(p, len), vnic_test_csum_naive(p, len));
	assert_int_equal(vnic_csum_fold(s), vnic_test_csum_naive(p, len));
}

/* (a) Every length 0..511 at every start alignment 0..7: 4096 cases. */
static void test_partial_small_all_alignments(void **state)
{
	uint64_t rng = 0xa11a11;

	(void)state;
	for (size_t len = 0; len < 512; len++) {
		for (size_t align = 0; align < 8; align++) {
			vnic_test_fill_random(&rng, bigbuf, len + 8);
			check_one(bigbuf + align, len);
		}
	}
}

/* (a) 2000 random lengths in 0..65535 at random alignments, random data. */
static void test_partial_random_lengths(void **state)
{
	uint64_t rng = 0x5eed0001;

	(void)state;
	vnic_test_fill_random(&rng, bigbuf, sizeof(bigbuf));
	for (int i = 0; i < RANDOM_CASES; i++) {
		size_t len = vnic_test_rand_next(&rng) % (MAX_LEN + 1);
		size_t align = vnic_test_rand_next(&rng) % 8;

		/* Re-randomise a window so cases do not share all their data. */
		vnic_test_fill_random(&rng, bigbuf + (i * 64) % (BUF_LEN - 64), 64);
		check_one(bigbuf + align, len);
	}
}

/*
 * (a) Carry stress: all-0xff words make every add carry; all-zero is the one
 * input whose sum is +0 (checksum 0xffff). 16 long lengths x 8 alignments each.
 */
static void test_partial_extreme_data(void **state)
{
	static const size_t lens[] = { 1, 2, 3, 63, 64, 65, 255, 256, 257, 1499, 1500,
				       4095, 4096, 65533, 65534, 65535 };

	(void)state;
	for (int fill = 0; fill < 2; fill++) {
		memset(bigbuf, fill ? 0xff : 0x00, sizeof(bigbuf));
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			for (size_t align = 0; align < 8; align++)
				check_one(bigbuf + align, lens[i]);
		}
	}
	memset(bigbuf, 0, 64);
	assert_int_equal(vnic_csum(bigbuf, 40), 0xffff);
	assert_int_equal(vnic_csum_partial(bigbuf, 40, 0), 0);
}

/*
 * An initial sum is added, not mixed in; sums of two pieces combine with
 * vnic_csum_add, byte-swapping the second one when it starts at an odd offset
 * (RFC 1071 section 2(B)). 500 random splits.
 */
static void test_partial_initial_sum_and_split(void **state)
{
	uint64_t rng = 0x5917;

	(void)state;
	vnic_test_fill_random(&rng, bigbuf, 8192);
	for (int i = 0; i < 500; i++) {
		size_t len = vnic_test_rand_next(&rng) % 8000;
		size_t k = len ? vnic_test_rand_next(&rng) % (len + 1) : 0;
		size_t align = vnic_test_rand_next(&rng) % 8;
		vnic_wsum_t initial = (vnic_wsum_t)vnic_test_rand_next(&rng);
		const uint8_t *p = bigbuf + align;
		vnic_wsum_t whole = vnic_csum_partial(p, len, 0);
		vnic_wsum_t a = vnic_csum_partial(p, k, 0);
		vnic_wsum_t b = vnic_csum_partial(p + k, len - k, 0);

		if (k & 1)
			b = swap16((uint16_t)b);
		assert_int_equal(vnic_csum_fold(vnic_csum_add(a, b)), vnic_csum_fold(whole));
		assert_int_equal(vnic_csum_fold(vnic_csum_partial(p, len, initial)),
				 vnic_csum_fold(vnic_csum_add(whole, initial)));
	}
}

/* (b) Each implementation, forced, against the reference. */
static void test_each_impl_vs_naive(void **state)
{
	static const char *const impls[] = { "scalar64", "avx2" };
	const char *dflt = vnic_csum_impl_name();
	int tested = 0;

	(void)state;
	for (size_t n = 0; n < sizeof(impls) / sizeof(impls[0]); n++) {
		uint64_t rng = 0xb0b0 + n;
		int err = vnic_csum_impl_select(impls[n]);

		if (err == -ENOTSUP) {
			printf("# %s: not supported on this CPU, skipped\n", impls[n]);
			continue;
		}
		assert_int_equal(err, 0);
		assert_string_equal(vnic_csum_impl_name(), impls[n]);
		tested++;
		/* Around the 256-byte switch-over, then every block/tail split. */
		for (size_t len = 192; len < 640; len++) {
			for (size_t align = 0; align < 8; align++) {
				vnic_test_fill_random(&rng, bigbuf, len + 8);
				check_one(bigbuf + align, len);
			}
		}
		vnic_test_fill_random(&rng, bigbuf, sizeof(bigbuf));
		for (int i = 0; i < 500; i++) {
			size_t len = vnic_test_rand_next(&rng) % (MAX_LEN + 1);

			check_one(bigbuf + i % 8, len);
		}
		memset(bigbuf, 0xff, sizeof(bigbuf));
		for (size_t align = 0; align < 8; align++)
			check_one(bigbuf + align, MAX_LEN);
	}
	assert_true(tested >= 1);
	assert_int_equal(vnic_csum_impl_select(dflt), 0);
	assert_string_equal(vnic_csum_impl_name(), dflt);
}

/*
 * Past 4 MiB, where the AVX2 kernel reduces its lanes and starts over, and
 * with all-0xff data, where every lane gains the most per block.
 */
static void test_each_impl_long_buffer(void **state)
{
	static const char *const impls[] = { "scalar64", "avx2" };
	const size_t len = (9u << 20) + 77;
	const char *dflt = vnic_csum_impl_name();
	uint8_t *buf = malloc(len + 8);
	uint64_t rng = 0x10f6;

	(void)state;
	assert_non_null(buf);
	for (int fill = 0; fill < 2; fill++) {
		uint16_t want;

		if (fill)
			memset(buf, 0xff, len + 8);
		else
			vnic_test_fill_random(&rng, buf, len + 8);
		want = vnic_test_csum_naive(buf + 3, len);
		for (size_t n = 0; n < sizeof(impls) / sizeof(impls[0]); n++) {
			if (vnic_csum_impl_select(impls[n]))
				continue;
			assert_int_equal(vnic_csum(buf + 3, len), want);
			assert_int_equal(vnic_csum(buf, len + 8),
					 vnic_test_csum_naive(buf, len + 8));
		}
	}
	free(buf);
	assert_int_equal(vnic_csum_impl_select(dflt), 0);
}

static void test_impl_select_errors(void **state)
{
	const char *dflt = vnic_csum_impl_name();

	(void)state;
	assert_true(!strcmp(dflt, "scalar64") || !strcmp(dflt, "avx2"));
	assert_int_equal(vnic_csum_impl_select(NULL), -EINVAL);
	assert_int_equal(vnic_csum_impl_select("sse9"), -ENOTSUP);
	assert_int_equal(vnic_csum_impl_select(""), -ENOTSUP);
	/* A refused selection leaves the choice alone. */
	assert_string_equal(vnic_csum_impl_name(), dflt);
	assert_int_equal(vnic_csum_impl_select("scalar64"), 0);
	assert_string_equal(vnic_csum_impl_name(), "scalar64");
	assert_int_equal(vnic_csum_impl_select(dflt), 0);
}

/* ------------------------------------------------------------------------ */
/* (c) Golden frames. */

/*
 * The classic IPv4 header example (Wikipedia, "Internet checksum"): UDP,
 * 192.168.0.1 -> 192.168.0.199, total length 0x73, checksum 0xb861.
 */
static const uint8_t ip4_wiki[20] = {
	0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
};

/*
 * The frames below were written field by field from their structure. Their
 * checksums were computed once with a separate 16-bit big-endian Python
 * script (sum, fold, complement) and are cross-checked here against the naive
 * reference over a hand-built pseudo header.
 */

/*
 * Ethernet / IPv4 10.0.0.1 -> 10.0.0.2 (id 0x1c46, DF, ttl 64) / TCP
 * 40000 -> 80, seq 0x01020304, ack 0x0a0b0c0d, PSH|ACK, win 501,
 * NOP NOP TS(0x00112233, 0x44556677) / "hello, world\n" (13 bytes: odd).
 * IP checksum 0x0a6f, TCP checksum 0x92a5.
 */
static const uint8_t g_tcp4[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x41, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06,
	0x0a, 0x6f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x9c, 0x40,
	0x00, 0x50, 0x01, 0x02, 0x03, 0x04, 0x0a, 0x0b, 0x0c, 0x0d, 0x80, 0x18,
	0x01, 0xf5, 0x92, 0xa5, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a, 0x00, 0x11,
	0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x2c,
	0x20, 0x77, 0x6f, 0x72, 0x6c, 0x64, 0x0a,
};

/*
 * Ethernet / IPv4 192.168.1.10 -> 93.184.216.34 (id 0, DF) / TCP SYN
 * 51000 -> 443, seq 0xdeadbeef, win 64240, no options; padded to the 60-byte
 * Ethernet minimum with 6 bytes of 0xa5, which no checksum covers.
 * IP checksum 0x4343, TCP checksum 0x56d3.
 */
static const uint8_t g_syn4[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x28, 0x00, 0x00, 0x40, 0x00, 0x40, 0x06,
	0x43, 0x43, 0xc0, 0xa8, 0x01, 0x0a, 0x5d, 0xb8, 0xd8, 0x22, 0xc7, 0x38,
	0x01, 0xbb, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x00, 0x50, 0x02,
	0xfa, 0xf0, 0x56, 0xd3, 0x00, 0x00, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5,
};

/*
 * Ethernet / IPv6 2001:db8::1 -> 2001:db8::2 (hop limit 64) / UDP
 * 54321 -> 53, length 37 / a DNS query for example.com A (29 bytes: odd).
 * UDP checksum 0x548d.
 */
static const uint8_t g_udp6[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x25, 0x11, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xd4, 0x31, 0x00, 0x35, 0x00, 0x25,
	0x54, 0x8d, 0xab, 0xcd, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x07, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x03, 0x63,
	0x6f, 0x6d, 0x00, 0x00, 0x01, 0x00, 0x01,
};

/*
 * Ethernet (to 33:33:00:00:00:01) / IPv6 fe80::1 -> ff02::1 (hop limit 255) /
 * ICMPv6 echo request id 0x1234 seq 1 / "vnic ping" (9 bytes: odd).
 * ICMPv6 checksum 0x9f48.
 */
static const uint8_t g_icmp6[] = {
	0x33, 0x33, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x11, 0x3a, 0xff, 0xfe, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x9f, 0x48, 0x12, 0x34,
	0x00, 0x01, 0x76, 0x6e, 0x69, 0x63, 0x20, 0x70, 0x69, 0x6e, 0x67,
};

/*
 * Ethernet / 802.1Q VLAN 100 / IPv4 172.16.0.1 -> 172.16.0.254 (id 0x0101,
 * DF) / ICMP echo request id 0x4242 seq 7 / bytes 0x20..0x34 (21: odd).
 * IP checksum 0xe0ab, ICMP checksum 0xe610 (no pseudo header).
 */
static const uint8_t g_icmp4_vlan[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x81, 0x00, 0x00, 0x64, 0x08, 0x00, 0x45, 0x00, 0x00, 0x31, 0x01, 0x01,
	0x40, 0x00, 0x40, 0x01, 0xe0, 0xab, 0xac, 0x10, 0x00, 0x01, 0xac, 0x10,
	0x00, 0xfe, 0x08, 0x00, 0xe6, 0x10, 0x42, 0x42, 0x00, 0x07, 0x20, 0x21,
	0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d,
	0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34,
};

/*
 * Ethernet / IPv4 10.1.1.1 -> 10.1.1.2 (id 0x2222, DF) / UDP 5000 -> 6000,
 * length 19 / "abcdefghijk" (11 bytes: odd).
 * IP checksum 0x02a0, UDP checksum 0x58cb.
 */
static const uint8_t g_udp4[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x27, 0x22, 0x22, 0x40, 0x00, 0x40, 0x11,
	0x02, 0xa0, 0x0a, 0x01, 0x01, 0x01, 0x0a, 0x01, 0x01, 0x02, 0x13, 0x88,
	0x17, 0x70, 0x00, 0x13, 0x58, 0xcb, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
	0x67, 0x68, 0x69, 0x6a, 0x6b,
};

struct golden {
	const char *name;
	const uint8_t *frame;
	uint32_t len;
	uint16_t l3_proto;
	uint16_t l3_off;
	uint16_t l3_len;
	uint32_t l3_payload_len;
	uint8_t l4_proto;
	uint16_t l4_len;
	uint16_t check_off;	/* of the L4 checksum, from the L4 header */
	uint16_t check;		/* big-endian value, as the script printed it */
};

#define G(f) .frame = f, .len = sizeof(f)
static const struct golden goldens[] = {
	{ "tcp4", G(g_tcp4), VNIC_ETH_P_IP, 14, 20, 45, VNIC_IPPROTO_TCP, 32, 16, 0x92a5 },
	{ "syn4", G(g_syn4), VNIC_ETH_P_IP, 14, 20, 20, VNIC_IPPROTO_TCP, 20, 16, 0x56d3 },
	{ "udp6", G(g_udp6), VNIC_ETH_P_IPV6, 14, 40, 37, VNIC_IPPROTO_UDP, 8, 6, 0x548d },
	{ "icmp6", G(g_icmp6), VNIC_ETH_P_IPV6, 14, 40, 17, VNIC_IPPROTO_ICMPV6, 8, 2, 0x9f48 },
	{ "icmp4_vlan", G(g_icmp4_vlan), VNIC_ETH_P_IP, 18, 20, 29, VNIC_IPPROTO_ICMP, 8, 2,
	  0xe610 },
	{ "udp4", G(g_udp4), VNIC_ETH_P_IP, 14, 20, 19, VNIC_IPPROTO_UDP, 8, 6, 0x58cb },
};
#undef G

enum { NGOLDEN = sizeof(goldens) / sizeof(goldens[0]) };

/* What vnic_parse_frame() would report, written by hand from the layouts. */
static void golden_hdrs(const struct golden *g, struct vnic_hdrs *h)
{
	memset(h, 0, sizeof(*h));
	h->l2_len = g->l3_off;
	h->nvlan = g->l3_off > VNIC_ETH_HLEN;
	h->l3_proto = g->l3_proto;
	h->l3_off = g->l3_off;
	h->l3_len = g->l3_len;
	h->l3_payload_len = g->l3_payload_len;
	h->l4_proto = g->l4_proto;
	h->l4_off = (uint16_t)(g->l3_off + g->l3_len);
	h->l4_len = g->l4_len;
	h->payload_off = h->l4_off + g->l4_len;
	h->payload_len = g->l3_payload_len - g->l4_len;
	h->trailer_len = g->len - (h->l4_off + g->l3_payload_len);
	h->flags = VNIC_HDRS_F_L4;
	if (g->l3_proto == VNIC_ETH_P_IP)
		h->flags |= VNIC_HDRS_F_IP4_DF;
}

/*
 * Pseudo header + L4 segment in one buffer, assembled by hand (RFC 793 /
 * RFC 8200 section 8.1 layouts), for the naive reference. Returns its length.
 */
static size_t golden_ref_buf(const struct golden *g, const uint8_t *frame, uint8_t *out)
{
	const uint8_t *l3 = frame + g->l3_off;
	const uint8_t *l4 = l3 + g->l3_len;
	uint32_t n = g->l3_payload_len;
	size_t off = 0;

	if (g->l4_proto == VNIC_IPPROTO_ICMP) {
		/* RFC 792: the ICMP message alone. */
	} else if (g->l3_proto == VNIC_ETH_P_IP) {
		memcpy(out, l3 + 12, 8);
		out[8] = 0;
		out[9] = g->l4_proto;
		put_be16(out + 10, (uint16_t)n);
		off = 12;
	} else {
		memcpy(out, l3 + 8, 32);
		put_be16(out + 32, (uint16_t)(n >> 16));
		put_be16(out + 34, (uint16_t)n);
		out[36] = out[37] = out[38] = 0;
		out[39] = g->l4_proto;
		off = 40;
	}
	memcpy(out + off, l4, n);
	return off + n;
}

/* The naive reference agrees with the value the Python script gave. */
static void test_golden_reference_cross_check(void **state)
{
	uint8_t ref[128], frame[128];

	(void)state;
	assert_int_equal(vnic_test_csum_naive(ip4_wiki, sizeof(ip4_wiki)), 0);
	memcpy(frame, ip4_wiki, sizeof(ip4_wiki));
	frame[10] = frame[11] = 0;
	assert_int_equal(vnic_test_csum_naive(frame, sizeof(ip4_wiki)), raw16(0xb861));

	for (int i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &goldens[i];
		size_t n, coff;

		memcpy(frame, g->frame, g->len);
		n = golden_ref_buf(g, frame, ref);
		/* A correct checksum makes the whole sum -0, i.e. a checksum of 0. */
		assert_int_equal(vnic_test_csum_naive(ref, n), 0);
		coff = n - g->l3_payload_len + g->check_off;
		assert_int_equal(be16(ref + coff), g->check);
		ref[coff] = ref[coff + 1] = 0;
		assert_int_equal(vnic_test_csum_naive(ref, n), raw16(g->check));
		if (g->l3_proto == VNIC_ETH_P_IP)
			assert_int_equal(vnic_test_csum_naive(frame + g->l3_off, 20), 0);
	}
}

static void test_ip4_header_golden(void **state)
{
	uint8_t hdr[20];

	(void)state;
	memcpy(hdr, ip4_wiki, sizeof(hdr));
	assert_true(vnic_csum_ip4_ok(hdr, sizeof(hdr)));
	for (size_t i = 0; i < sizeof(hdr); i++) {
		hdr[i] ^= 0x01;
		assert_false(vnic_csum_ip4_ok(hdr, sizeof(hdr)));
		hdr[i] ^= 0x01;
		assert_true(vnic_csum_ip4_ok(hdr, sizeof(hdr)));
	}
	hdr[10] = hdr[11] = 0;
	assert_false(vnic_csum_ip4_ok(hdr, sizeof(hdr)));
	vnic_csum_ip4_set(hdr, sizeof(hdr));
	assert_memory_equal(hdr, ip4_wiki, sizeof(hdr));
	assert_int_equal(be16(hdr + 10), 0xb861);
	/* An IHL below 5 words is not a header. */
	assert_false(vnic_csum_ip4_ok(hdr, 16));
	memset(hdr, 0, sizeof(hdr));
	assert_false(vnic_csum_ip4_ok(hdr, sizeof(hdr)));
}

/* Verify -> corrupt each covered byte -> fail -> restore -> verify -> recompute. */
static void golden_round_trip(const struct golden *g, const struct vnic_hdrs *h)
{
	uint8_t frame[128];
	uint32_t l4 = h->l4_off, end = l4 + g->l3_payload_len;
	uint32_t field = l4 + g->check_off;

	memcpy(frame, g->frame, g->len);
	assert_true(vnic_csum_l4_ok(frame, h));
	if (g->l3_proto == VNIC_ETH_P_IP)
		assert_true(vnic_csum_ip4_ok(frame + g->l3_off, g->l3_len));

	for (uint32_t i = l4; i < end; i++) {
		frame[i] ^= 0x80;
		assert_false(vnic_csum_l4_ok(frame, h));
		frame[i] ^= 0x80;
		assert_true(vnic_csum_l4_ok(frame, h));
	}
	/* The addresses are covered through the pseudo header (not for ICMP). */
	if (g->l4_proto != VNIC_IPPROTO_ICMP) {
		uint32_t a = g->l3_off + (g->l3_proto == VNIC_ETH_P_IP ? 12 : 8);
		uint32_t alen = g->l3_proto == VNIC_ETH_P_IP ? 8 : 32;

		for (uint32_t i = a; i < a + alen; i++) {
			frame[i] ^= 0x04;
			assert_false(vnic_csum_l4_ok(frame, h));
			frame[i] ^= 0x04;
		}
	}
	/* Ethernet padding is outside every checksum. */
	for (uint32_t i = end; i < g->len; i++) {
		frame[i] ^= 0xff;
		assert_true(vnic_csum_l4_ok(frame, h));
		frame[i] ^= 0xff;
	}

	frame[field] = frame[field + 1] = 0;
	/* Zero is UDP/IPv4's "no checksum"; for everything else a wrong value. */
	if (g->l4_proto == VNIC_IPPROTO_UDP && g->l3_proto == VNIC_ETH_P_IP)
		assert_true(vnic_csum_l4_ok(frame, h));
	else
		assert_false(vnic_csum_l4_ok(frame, h));
	assert_int_equal(vnic_csum_l4_set(frame, h), 0);
	assert_int_equal(be16(frame + field), g->check);
	assert_memory_equal(frame, g->frame, g->len);

	/* A wrong value in the field is overwritten, not added to. */
	frame[field] = 0x12;
	frame[field + 1] = 0x34;
	assert_int_equal(vnic_csum_l4_set(frame, h), 0);
	assert_memory_equal(frame, g->frame, g->len);
}

static void test_l4_golden_hand_hdrs(void **state)
{
	struct vnic_hdrs h;

	(void)state;
	for (int i = 0; i < NGOLDEN; i++) {
		golden_hdrs(&goldens[i], &h);
		golden_round_trip(&goldens[i], &h);
	}
}

/* The same frames through the real parser: the two layers agree on offsets. */
static void test_l4_golden_parsed(void **state)
{
	struct vnic_hdrs h, mine;

	(void)state;
	for (int i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &goldens[i];

		assert_int_equal(vnic_parse_frame(g->frame, g->len, &h), VNIC_PARSE_OK);
		golden_hdrs(g, &mine);
		assert_int_equal(h.l3_off, mine.l3_off);
		assert_int_equal(h.l4_off, mine.l4_off);
		assert_int_equal(h.l3_payload_len, mine.l3_payload_len);
		assert_int_equal(h.l4_proto, mine.l4_proto);
		assert_int_equal(h.trailer_len, mine.trailer_len);
		golden_round_trip(g, &h);
	}
}

static const struct golden *golden_by_name(const char *name)
{
	for (int i = 0; i < NGOLDEN; i++) {
		if (!strcmp(goldens[i].name, name))
			return &goldens[i];
	}
	fail_msg("no golden %s", name);
	return NULL;
}

/* UDP's zero: "no checksum" over IPv4, forbidden over IPv6. */
static void test_l4_udp_zero_checksum(void **state)
{
	const struct golden *g4 = golden_by_name("udp4"), *g6 = golden_by_name("udp6");
	struct vnic_hdrs h;
	uint8_t frame[128];

	(void)state;
	golden_hdrs(g4, &h);
	memcpy(frame, g4->frame, g4->len);
	frame[h.l4_off + 6] = frame[h.l4_off + 7] = 0;
	assert_true(vnic_csum_l4_ok(frame, &h));
	frame[h.l4_off + 9] ^= 1;	/* unverifiable, so still accepted */
	assert_true(vnic_csum_l4_ok(frame, &h));

	golden_hdrs(g6, &h);
	memcpy(frame, g6->frame, g6->len);
	frame[h.l4_off + 6] = frame[h.l4_off + 7] = 0;
	assert_false(vnic_csum_l4_ok(frame, &h));
}

/*
 * Adds v (big-endian value) into the big-endian word at p with an end-around
 * carry: how a test steers a ones'-complement sum to a chosen value.
 */
static void add_be16(uint8_t *p, uint16_t v)
{
	uint32_t w = (uint32_t)be16(p) + v;

	put_be16(p, (uint16_t)((w & 0xffff) + (w >> 16)));
}

/*
 * A datagram whose checksum computes to 0 goes out as 0xffff for UDP (RFC 768)
 * and as 0x0000 for TCP; both verify. The payload is nudged so that the sum
 * of everything else is exactly 0xffff.
 */
static void test_l4_computed_zero(void **state)
{
	static const char *const names[] = { "udp4", "udp6", "tcp4" };
	uint8_t frame[128], ref[192];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct golden *g = golden_by_name(names[i]);
		uint32_t field;
		struct vnic_hdrs h;
		uint16_t raw;
		size_t n;

		golden_hdrs(g, &h);
		field = h.l4_off + g->check_off;
		memcpy(frame, g->frame, g->len);
		frame[field] = frame[field + 1] = 0;
		n = golden_ref_buf(g, frame, ref);
		/*
		 * naive = ~S; adding ~S to a word makes the sum 0xffff. The
		 * payload starts at an even offset in the segment, so its
		 * first two bytes are one word of the sum.
		 */
		raw = vnic_test_csum_naive(ref, n);
		add_be16(frame + h.payload_off, be16((const uint8_t *)&raw));
		n = golden_ref_buf(g, frame, ref);
		assert_int_equal(vnic_test_csum_naive(ref, n), raw16(0));

		assert_int_equal(vnic_csum_l4_set(frame, &h), 0);
		if (g->l4_proto == VNIC_IPPROTO_UDP)
			assert_int_equal(be16(frame + field), 0xffff);
		else
			assert_int_equal(be16(frame + field), 0x0000);
		assert_true(vnic_csum_l4_ok(frame, &h));
	}
}

static void test_l4_rejects_unverifiable(void **state)
{
	const struct golden *g4 = golden_by_name("tcp4"), *g6 = golden_by_name("icmp6");
	const struct golden *gu = golden_by_name("udp4");
	struct vnic_hdrs h;
	uint8_t frame[128];

	(void)state;
	memcpy(frame, g4->frame, g4->len);

	golden_hdrs(g4, &h);
	h.flags |= VNIC_HDRS_F_FRAG | VNIC_HDRS_F_FRAG_FIRST;
	assert_false(vnic_csum_l4_ok(frame, &h));
	assert_int_equal(vnic_csum_l4_set(frame, &h), -EINVAL);

	golden_hdrs(g4, &h);
	h.flags &= ~(uint32_t)VNIC_HDRS_F_L4;
	assert_false(vnic_csum_l4_ok(frame, &h));
	assert_int_equal(vnic_csum_l4_set(frame, &h), -EINVAL);

	golden_hdrs(g4, &h);
	h.l4_off += 4;			/* disagrees with l3_off + l3_len */
	assert_false(vnic_csum_l4_ok(frame, &h));

	golden_hdrs(g4, &h);
	h.l3_payload_len = 19;		/* shorter than a TCP header */
	assert_false(vnic_csum_l4_ok(frame, &h));

	golden_hdrs(g4, &h);
	h.l3_proto = VNIC_ETH_P_ARP;
	assert_false(vnic_csum_l4_ok(frame, &h));

	golden_hdrs(g4, &h);
	h.l4_proto = 132;		/* SCTP: CRC32c, not ours */
	assert_false(vnic_csum_l4_ok(frame, &h));
	assert_int_equal(vnic_csum_l4_set(frame, &h), -EPROTONOSUPPORT);
	assert_memory_equal(frame, g4->frame, g4->len);

	/* ICMP belongs to IPv4 and ICMPv6 to IPv6. */
	memcpy(frame, g6->frame, g6->len);
	golden_hdrs(g6, &h);
	h.l4_proto = VNIC_IPPROTO_ICMP;
	assert_false(vnic_csum_l4_ok(frame, &h));

	/* A UDP length past the IP payload, or below the header. */
	memcpy(frame, gu->frame, gu->len);
	golden_hdrs(gu, &h);
	put_be16(frame + h.l4_off + 4, 20);
	assert_false(vnic_csum_l4_ok(frame, &h));
	assert_int_equal(vnic_csum_l4_set(frame, &h), -EINVAL);
	put_be16(frame + h.l4_off + 4, 7);
	assert_false(vnic_csum_l4_ok(frame, &h));
}

/* ------------------------------------------------------------------------ */
/* (d) Pseudo headers against a hand-built pseudo header. 1000 cases each. */

static void test_pseudo4(void **state)
{
	uint64_t rng = 0x9504;
	uint8_t ph[12];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		uint8_t proto = (uint8_t)vnic_test_rand_next(&rng);
		uint16_t len = (uint16_t)vnic_test_rand_next(&rng);

		vnic_test_fill_random(&rng, ph, 8);
		ph[8] = 0;
		ph[9] = proto;
		put_be16(ph + 10, len);
		assert_int_equal(vnic_csum_fold(vnic_csum_pseudo4(ph, ph + 4, proto, len)),
				 vnic_test_csum_naive(ph, sizeof(ph)));
	}
	/* The TCP/IPv4 golden's own pseudo header: 10.0.0.1, 10.0.0.2, 6, 45. */
	memcpy(ph, (const uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 45 }, 12);
	assert_int_equal(vnic_csum_fold(vnic_csum_pseudo4(ph, ph + 4, 6, 45)),
			 raw16(0xffff - (0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 6 + 45)));
}

static void test_pseudo6(void **state)
{
	uint64_t rng = 0x9506;
	uint8_t ph[40];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		uint8_t proto = (uint8_t)vnic_test_rand_next(&rng);
		/* Every third case a jumbo length (RFC 2675): all 32 bits count. */
		uint32_t len = (uint32_t)vnic_test_rand_next(&rng);

		if (i % 3)
			len &= 0xffff;
		vnic_test_fill_random(&rng, ph, 32);
		put_be16(ph + 32, (uint16_t)(len >> 16));
		put_be16(ph + 34, (uint16_t)len);
		ph[36] = ph[37] = ph[38] = 0;
		ph[39] = proto;
		assert_int_equal(vnic_csum_fold(vnic_csum_pseudo6(ph, ph + 16, proto, len)),
				 vnic_test_csum_naive(ph, sizeof(ph)));
	}
}

/* ------------------------------------------------------------------------ */
/* (e) RFC 1624 incremental updates. */

/*
 * RFC 1624 section 3: the other header words sum to 0xcd7a, a field m = 0x5555
 * becomes 0x3285, HC = 0xdd2f. Recomputing gives ~(0xcd7a + 0x3285) = 0x0000;
 * the older eqn. 2 of RFC 1141 gives 0xffff instead.
 */
static void test_rfc1624_section3(void **state)
{
	uint8_t hdr[6] = { 0xdd, 0x2f, 0x55, 0x55, 0xcd, 0x7a };	/* HC, m, rest */
	uint16_t check;

	(void)state;
	assert_int_equal(vnic_csum(hdr, sizeof(hdr)), 0);	/* HC is right */
	memcpy(&check, hdr, 2);
	vnic_csum_replace2(&check, raw16(0x5555), raw16(0x3285));
	assert_int_equal(check, raw16(0x0000));

	/* The same through a full recompute. */
	put_be16(hdr + 2, 0x3285);
	hdr[0] = hdr[1] = 0;
	assert_int_equal(vnic_csum(hdr, sizeof(hdr)), raw16(0x0000));

	/*
	 * RFC 1624 erratum 4782: an unchanged word must leave HC alone, 0x0000
	 * included (eqn. 3 taken literally would turn it into 0xffff).
	 */
	check = raw16(0x0000);
	vnic_csum_replace2(&check, raw16(0x5555), raw16(0x5555));
	assert_int_equal(check, raw16(0x0000));
	check = raw16(0xffff);
	vnic_csum_replace4(&check, 0x12345678, 0x12345678);
	assert_int_equal(check, raw16(0xffff));
}

/*
 * 3000 random 16-bit and 32-bit edits of a random 60-byte "header" whose
 * checksum sits at offset 10: the updated field equals a full recompute, and
 * the header still verifies.
 */
static void test_replace_random_edits(void **state)
{
	uint64_t rng = 0x1624;
	uint8_t hdr[60];
	uint16_t check, ref;

	(void)state;
	vnic_test_fill_random(&rng, hdr, sizeof(hdr));
	hdr[10] = hdr[11] = 0;
	check = vnic_csum(hdr, sizeof(hdr));
	memcpy(hdr + 10, &check, 2);
	for (int i = 0; i < 3000; i++) {
		bool wide = i & 1;
		size_t off;

		do {
			off = (vnic_test_rand_next(&rng) % (sizeof(hdr) / (wide ? 4 : 2))) *
			      (wide ? 4 : 2);
		} while (off <= 10 && off + (wide ? 4 : 2) > 10);	/* not the field */

		memcpy(&check, hdr + 10, 2);
		if (wide) {
			uint32_t o, n = (uint32_t)vnic_test_rand_next(&rng);

			/* Now and then a word that becomes all zeros or all ones. */
			if (i % 7 == 1)
				n = i % 2 ? 0 : 0xffffffff;
			memcpy(&o, hdr + off, 4);
			memcpy(hdr + off, &n, 4);
			vnic_csum_replace4(&check, o, n);
		} else {
			uint16_t o, n = (uint16_t)vnic_test_rand_next(&rng);

			if (i % 7 == 0)
				n = i % 3 ? 0 : 0xffff;
			memcpy(&o, hdr + off, 2);
			memcpy(hdr + off, &n, 2);
			vnic_csum_replace2(&check, o, n);
		}
		memcpy(hdr + 10, &check, 2);
		assert_int_equal(vnic_test_csum_naive(hdr, sizeof(hdr)), 0);
		hdr[10] = hdr[11] = 0;
		ref = vnic_test_csum_naive(hdr, sizeof(hdr));
		assert_int_equal(check, ref);
		memcpy(hdr + 10, &check, 2);
	}
}

/*
 * The corner the RFC is about, steered on purpose 200 times: the new sum of
 * the other words is exactly 0xffff, so the right checksum is 0x0000.
 */
static void test_replace_to_zero_checksum(void **state)
{
	uint64_t rng = 0x0ff0;
	uint8_t hdr[20];

	(void)state;
	for (int i = 0; i < 200; i++) {
		uint16_t check, o, n, target;

		vnic_test_fill_random(&rng, hdr, sizeof(hdr));
		hdr[10] = hdr[11] = 0;
		check = vnic_csum(hdr, sizeof(hdr));
		memcpy(hdr + 10, &check, 2);
		memcpy(&o, hdr + 4, 2);
		/* Word 4..5 takes the value that makes everything else sum to 0xffff. */
		hdr[10] = hdr[11] = 0;
		put_be16(hdr + 4, 0);
		target = vnic_test_csum_naive(hdr, sizeof(hdr));
		target = be16((const uint8_t *)&target);
		put_be16(hdr + 4, target);
		memcpy(&n, hdr + 4, 2);
		assert_int_equal(vnic_test_csum_naive(hdr, sizeof(hdr)), raw16(0));

		vnic_csum_replace2(&check, o, n);
		assert_int_equal(check, raw16(0x0000));
	}
}

/* NAT-style source rewrite: replace4 on both the IP and the TCP checksum. */
static void test_replace4_address_rewrite(void **state)
{
	const struct golden *g = golden_by_name("tcp4");
	uint64_t rng = 0x4a7;
	struct vnic_hdrs h;
	uint8_t frame[128], want[128];

	(void)state;
	golden_hdrs(g, &h);
	memcpy(frame, g->frame, g->len);
	for (int i = 0; i < 200; i++) {
		uint8_t *saddr = frame + h.l3_off + 12;
		uint16_t ipc, tcpc;
		uint32_t o, n = (uint32_t)vnic_test_rand_next(&rng);

		memcpy(&o, saddr, 4);
		memcpy(saddr, &n, 4);
		memcpy(&ipc, frame + h.l3_off + 10, 2);
		memcpy(&tcpc, frame + h.l4_off + 16, 2);
		vnic_csum_replace4(&ipc, o, n);
		vnic_csum_replace4(&tcpc, o, n);
		memcpy(frame + h.l3_off + 10, &ipc, 2);
		memcpy(frame + h.l4_off + 16, &tcpc, 2);
		assert_true(vnic_csum_ip4_ok(frame + h.l3_off, 20));
		assert_true(vnic_csum_l4_ok(frame, &h));

		memcpy(want, frame, g->len);
		vnic_csum_ip4_set(want + h.l3_off, 20);
		assert_int_equal(vnic_csum_l4_set(want, &h), 0);
		assert_memory_equal(frame, want, g->len);
	}
}

/* ------------------------------------------------------------------------ */
/* (f) vnic_csum_help. */

static struct vnic_pkt_pool pool;

static int pool_setup(void **state)
{
	(void)state;
	/*
	 * 8, not fewer: pkt.c passes aligned_alloc(64, count * sizeof(struct
	 * vnic_pkt)) and 88 * count must be a multiple of 64 (reported to the lead).
	 */
	return vnic_pkt_pool_init(&pool, 8, 2048, 128);
}

static int pool_teardown(void **state)
{
	(void)state;
	vnic_pkt_pool_fini(&pool);
	return 0;
}

/*
 * A golden frame as a stack would hand it over for offload: the L4 field
 * holds the folded, non-complemented pseudo-header sum. lead bytes of junk
 * are put in front and pulled again, to start the data at an odd address.
 */
static struct vnic_pkt *partial_pkt(const struct golden *g, uint32_t lead)
{
	struct vnic_pkt *pkt = vnic_pkt_alloc(&pool);
	uint8_t frame[160] = { 0 }, ref[192];
	struct vnic_hdrs h;
	uint16_t check;
	size_t n;

	assert_non_null(pkt);
	golden_hdrs(g, &h);
	memset(frame, 0xee, lead);
	memcpy(frame + lead, g->frame, g->len);
	/* The pseudo header alone (the front of ref), through the naive reference. */
	n = golden_ref_buf(g, g->frame, ref) - g->l3_payload_len;
	check = (uint16_t)~vnic_test_csum_naive(ref, n);
	memcpy(frame + lead + h.l4_off + g->check_off, &check, 2);
	assert_int_equal(vnic_pkt_copy_in(pkt, frame, lead + g->len), 0);
	assert_non_null(vnic_pkt_pull(pkt, lead));
	pkt->ip_summed = VNIC_CSUM_PARTIAL;
	pkt->csum_start = h.l4_off;
	pkt->csum_offset = g->check_off;
	return pkt;
}

static void test_help_resolves_partial(void **state)
{
	static const char *const names[] = { "tcp4", "syn4", "udp6", "icmp6", "udp4" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct golden *g = golden_by_name(names[i]);

		for (uint32_t lead = 0; lead < 2; lead++) {
			struct vnic_pkt *pkt = partial_pkt(g, lead);
			struct vnic_hdrs h;

			assert_int_equal((uintptr_t)pkt->data & 1, lead);
			golden_hdrs(g, &h);
			if (h.trailer_len) {
				/*
				 * Like skb_checksum_help, help sums to the end of the
				 * packet: a padded frame must be trimmed first.
				 */
				pkt->len -= h.trailer_len;
			}
			assert_false(vnic_csum_l4_ok(pkt->data, &h));
			assert_int_equal(vnic_csum_help(pkt), 0);
			assert_int_equal(pkt->ip_summed, VNIC_CSUM_NONE);
			assert_memory_equal(pkt->data, g->frame, pkt->len);
			assert_true(vnic_csum_l4_ok(pkt->data, &h));
			vnic_pkt_free(pkt);
		}
	}
}

static void test_help_out_of_range(void **state)
{
	const struct golden *g = golden_by_name("tcp4");
	struct {
		uint16_t start, offset;
		int ret;
	} cases[] = {
		{ (uint16_t)(g->len + 1), 0, -EINVAL },		/* start past the end */
		{ (uint16_t)g->len, 0, -EINVAL },		/* nothing left for the field */
		{ (uint16_t)(g->len - 1), 0, -EINVAL },		/* field straddles the end */
		{ 34, (uint16_t)(g->len - 35), -EINVAL },	/* the same through the offset */
		{ 34, (uint16_t)(g->len - 34), -EINVAL },	/* field just past the end */
		{ 0xffff, 0xffff, -EINVAL },			/* both at their maximum */
		{ 34, (uint16_t)(g->len - 36), 0 },		/* field ends at the end: fine */
		{ (uint16_t)(g->len - 2), 0, 0 },		/* 2 bytes summed: fine */
	};
	uint8_t before[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vnic_pkt *pkt = partial_pkt(g, 0);

		pkt->csum_start = cases[i].start;
		pkt->csum_offset = cases[i].offset;
		memcpy(before, pkt->data, pkt->len);
		assert_int_equal(vnic_csum_help(pkt), cases[i].ret);
		if (cases[i].ret) {
			/* A refused packet is left exactly as it was. */
			assert_int_equal(pkt->ip_summed, VNIC_CSUM_PARTIAL);
			assert_memory_equal(pkt->data, before, pkt->len);
		} else {
			uint32_t f = cases[i].start + cases[i].offset;
			/* The checksum of [start, len) as it was, initial sum included. */
			uint16_t want = vnic_test_csum_naive(before + cases[i].start,
							     pkt->len - cases[i].start);

			assert_int_equal(pkt->ip_summed, VNIC_CSUM_NONE);
			assert_memory_equal(pkt->data + f, &want, 2);
			assert_memory_equal(pkt->data, before, f);
			assert_memory_equal(pkt->data + f + 2, before + f + 2, pkt->len - f - 2);
		}
		vnic_pkt_free(pkt);
	}
}

/* Not PARTIAL: nothing to do, nothing touched (skb_checksum_help does the same). */
static void test_help_ignores_other_states(void **state)
{
	const struct golden *g = golden_by_name("udp6");
	static const uint8_t states[] = { VNIC_CSUM_NONE, VNIC_CSUM_UNNECESSARY,
					  VNIC_CSUM_COMPLETE };

	(void)state;
	for (size_t i = 0; i < sizeof(states); i++) {
		struct vnic_pkt *pkt = partial_pkt(g, 0);
		uint8_t before[128];

		pkt->ip_summed = states[i];
		memcpy(before, pkt->data, pkt->len);
		assert_int_equal(vnic_csum_help(pkt), 0);
		assert_int_equal(pkt->ip_summed, states[i]);
		assert_memory_equal(pkt->data, before, pkt->len);
		vnic_pkt_free(pkt);
	}
}

/* A sum of exactly -0 is stored as 0xffff, never as 0 (UDP's "no checksum"). */
static void test_help_zero_result(void **state)
{
	const struct golden *g = golden_by_name("udp4");
	struct vnic_pkt *pkt = partial_pkt(g, 0);
	uint8_t *data = pkt->data;
	uint16_t rest;
	struct vnic_hdrs h;

	(void)state;
	golden_hdrs(g, &h);
	/* Make the span, initial sum included, sum to 0xffff by adjusting one payload word. */
	rest = vnic_test_csum_naive(data + h.l4_off, pkt->len - h.l4_off);
	add_be16(data + h.payload_off, be16((const uint8_t *)&rest));
	assert_int_equal(vnic_test_csum_naive(data + h.l4_off, pkt->len - h.l4_off), raw16(0));

	assert_int_equal(vnic_csum_help(pkt), 0);
	assert_int_equal(be16(data + h.l4_off + 6), 0xffff);
	assert_true(vnic_csum_l4_ok(data, &h));
	vnic_pkt_free(pkt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_small_all_alignments),
		cmocka_unit_test(test_partial_random_lengths),
		cmocka_unit_test(test_partial_extreme_data),
		cmocka_unit_test(test_partial_initial_sum_and_split),
		cmocka_unit_test(test_each_impl_vs_naive),
		cmocka_unit_test(test_each_impl_long_buffer),
		cmocka_unit_test(test_impl_select_errors),
		cmocka_unit_test(test_golden_reference_cross_check),
		cmocka_unit_test(test_ip4_header_golden),
		cmocka_unit_test(test_l4_golden_hand_hdrs),
		cmocka_unit_test(test_l4_golden_parsed),
		cmocka_unit_test(test_l4_udp_zero_checksum),
		cmocka_unit_test(test_l4_computed_zero),
		cmocka_unit_test(test_l4_rejects_unverifiable),
		cmocka_unit_test(test_pseudo4),
		cmocka_unit_test(test_pseudo6),
		cmocka_unit_test(test_rfc1624_section3),
		cmocka_unit_test(test_replace_random_edits),
		cmocka_unit_test(test_replace_to_zero_checksum),
		cmocka_unit_test(test_replace4_address_rewrite),
		cmocka_unit_test_setup_teardown(test_help_resolves_partial, pool_setup,
						pool_teardown),
		cmocka_unit_test_setup_teardown(test_help_out_of_range, pool_setup, pool_teardown),
		cmocka_unit_test_setup_teardown(test_help_ignores_other_states, pool_setup,
						pool_teardown),
		cmocka_unit_test_setup_teardown(test_help_zero_result, pool_setup, pool_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
