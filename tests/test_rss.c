// SPDX-License-Identifier: MIT
/*
 * RSS: the Toeplitz hash against Microsoft's published verification vectors
 * ("Verifying the RSS Hash Calculation", Windows driver docs), IPv4 and IPv6,
 * with and without ports; then the same vectors through whole frames, with
 * headers described by hand and by the parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"

/* The verification key, spelled out here rather than trusting rss.c's copy. */
static const uint8_t ms_key[VNIC_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vec4 {
	uint8_t src[4], dst[4];
	uint16_t sport, dport;
	uint32_t hash_ip, hash_ports;
};

struct vec6 {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t hash_ip, hash_ports;
};

/* The table's five IPv4 rows: destination, source, "IPv4 only", "IPv4 with TCP". */
static const struct vec4 v4[] = {
	{ { 66, 9, 149, 187 }, { 161, 142, 100, 80 }, 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ { 199, 92, 111, 2 }, { 65, 69, 140, 83 }, 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ { 24, 19, 198, 95 }, { 12, 22, 207, 184 }, 12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ { 38, 27, 205, 30 }, { 209, 142, 163, 6 }, 48228, 2217, 0x82989176, 0xafc7327f },
	{ { 153, 39, 163, 191 }, { 202, 188, 127, 2 }, 44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

/* The three IPv6 rows. */
static const struct vec6 v6[] = {
	{ /* 3ffe:2501:200:1fff::7 -> 3ffe:2501:200:3::1 */
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x07 },
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x01 },
	  2794, 1766, 0x2cc18cd5, 0x40207d3d },
	{ /* 3ffe:501:8::260:97ff:fe40:efab -> ff02::1 */
	  { 0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef,
	    0xab },
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 },
	  14230, 4739, 0x0f0c461c, 0xdde51bbf },
	{ /* 3ffe:1900:4545:3:200:f8ff:fe21:67cf -> fe80::200:f8ff:fe21:67cf */
	  { 0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21,
	    0x67, 0xcf },
	  { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf },
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The spec's input: source address, destination address, source port, destination port. */
static size_t input4(const struct vec4 *v, bool ports, uint8_t *in)
{
	memcpy(in, v->src, 4);
	memcpy(in + 4, v->dst, 4);
	if (!ports)
		return 8;
	put_be16(in + 8, v->sport);
	put_be16(in + 10, v->dport);
	return 12;
}

static size_t input6(const struct vec6 *v, bool ports, uint8_t *in)
{
	memcpy(in, v->src, 16);
	memcpy(in + 16, v->dst, 16);
	if (!ports)
		return 32;
	put_be16(in + 32, v->sport);
	put_be16(in + 34, v->dport);
	return 36;
}

static void test_default_key_is_microsofts(void **state)
{
	(void)state;
	assert_memory_equal(vnic_rss_default_key, ms_key, VNIC_RSS_KEY_LEN);
}

/* 5 IPv4 rows x {2-tuple, 4-tuple}. */
static void test_toeplitz_ipv4_vectors(void **state)
{
	uint8_t in[12];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v4); i++) {
		size_t n = input4(&v4[i], false, in);

		assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), in, n), v4[i].hash_ip);
		n = input4(&v4[i], true, in);
		assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), in, n),
				 v4[i].hash_ports);
	}
}

/* 3 IPv6 rows x {2-tuple, 4-tuple}. */
static void test_toeplitz_ipv6_vectors(void **state)
{
	uint8_t in[36];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v6); i++) {
		size_t n = input6(&v6[i], false, in);

		assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), in, n), v6[i].hash_ip);
		n = input6(&v6[i], true, in);
		assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), in, n),
				 v6[i].hash_ports);
	}
}

/*
 * Structural properties: no input bits, no hash; the hash is linear over XOR
 * (Toeplitz is a matrix product over GF(2)); a key too short for the input
 * (key_len < n + 4) yields 0 instead of a read past the key.
 */
static void test_toeplitz_properties(void **state)
{
	uint8_t a[36] = { 0 }, b[36], c[36];
	size_t n;

	(void)state;
	assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), a, 36), 0);
	assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), a, 0), 0);
	/* A single top bit selects the first 32 key bits. */
	a[0] = 0x80;
	assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), a, 1), 0x6d5a56da);
	/* The last bit of byte 0 selects key bits 7..38. */
	a[0] = 0x01;
	assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), a, 1),
			 (uint32_t)(0x6d5a56da255bull >> 9));

	input6(&v6[0], true, b);
	n = input6(&v6[1], true, c);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] ^ c[i];
	assert_int_equal(vnic_rss_toeplitz(ms_key, sizeof(ms_key), a, n),
			 v6[0].hash_ports ^ v6[1].hash_ports);

	assert_int_equal(vnic_rss_toeplitz(ms_key, 39, b, 36), 0);
	assert_int_equal(vnic_rss_toeplitz(ms_key, 3, b, 0), 0);
	assert_int_equal(vnic_rss_toeplitz(ms_key, 40, b, 36), v6[0].hash_ports);
}

/* ------------------------------------------------------------------------ */
/* Whole frames. */

enum { ETH = 14, IP4 = 20, IP6 = 40, TCP = 20, UDP = 8 };

/* Ethernet / IPv4 (optionally a fragment) / TCP or UDP or ICMP, 8 payload bytes. */
static uint32_t frame4(uint8_t *f, const struct vec4 *v, uint8_t proto, uint16_t frag_field)
{
	uint32_t l4 = proto == VNIC_IPPROTO_TCP ? TCP : UDP; /* ICMP's 8 like UDP's */
	uint32_t len = ETH + IP4 + l4 + 8;

	memset(f, 0, len);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", ETH);
	f[ETH] = 0x45;
	put_be16(f + ETH + 2, (uint16_t)(IP4 + l4 + 8));
	put_be16(f + ETH + 6, frag_field);
	f[ETH + 8] = 64;
	f[ETH + 9] = proto;
	memcpy(f + ETH + 12, v->src, 4);
	memcpy(f + ETH + 16, v->dst, 4);
	vnic_csum_ip4_set(f + ETH, IP4);
	if (proto == VNIC_IPPROTO_ICMP) {
		f[ETH + IP4] = 8;	/* echo request */
	} else {
		put_be16(f + ETH + IP4, v->sport);
		put_be16(f + ETH + IP4 + 2, v->dport);
		if (proto == VNIC_IPPROTO_TCP)
			f[ETH + IP4 + 12] = 5 << 4;
		else
			put_be16(f + ETH + IP4 + 4, UDP + 8);
	}
	return len;
}

static uint32_t frame6(uint8_t *f, const struct vec6 *v, uint8_t proto)
{
	uint32_t l4 = proto == VNIC_IPPROTO_TCP ? TCP : UDP;
	uint32_t len = ETH + IP6 + l4 + 8;

	memset(f, 0, len);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x86\xdd", ETH);
	f[ETH] = 0x60;
	put_be16(f + ETH + 4, (uint16_t)(l4 + 8));
	f[ETH + 6] = proto;
	f[ETH + 7] = 64;
	memcpy(f + ETH + 8, v->src, 16);
	memcpy(f + ETH + 24, v->dst, 16);
	put_be16(f + ETH + IP6, v->sport);
	put_be16(f + ETH + IP6 + 2, v->dport);
	if (proto == VNIC_IPPROTO_TCP)
		f[ETH + IP6 + 12] = 5 << 4;
	else
		put_be16(f + ETH + IP6 + 4, UDP + 8);
	return len;
}

/* What the parser reports for frame4/frame6, written out by hand. */
static void hand_hdrs(struct vnic_hdrs *h, uint16_t l3_proto, uint8_t proto, uint32_t flags)
{
	uint16_t l3 = l3_proto == VNIC_ETH_P_IP ? IP4 : IP6;
	uint16_t l4 = proto == VNIC_IPPROTO_TCP ? TCP : UDP;

	memset(h, 0, sizeof(*h));
	h->l2_len = ETH;
	h->l3_proto = l3_proto;
	h->l3_off = ETH;
	h->l3_len = l3;
	h->l3_payload_len = l4 + 8;
	h->l4_proto = proto;
	h->l4_off = ETH + l3;
	h->flags = flags;
	if (flags & VNIC_HDRS_F_L4)
		h->l4_len = l4;
	h->payload_off = h->l4_off + h->l4_len;
	h->payload_len = h->l3_payload_len - h->l4_len;
}

static void test_hash_frame_ipv4_hand_hdrs(void **state)
{
	struct vnic_hdrs h;
	uint8_t f[128];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v4); i++) {
		frame4(f, &v4[i], VNIC_IPPROTO_TCP, 0x4000);
		hand_hdrs(&h, VNIC_ETH_P_IP, VNIC_IPPROTO_TCP, VNIC_HDRS_F_L4);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ports);
		/* NULL selects the default key, which is the same one. */
		assert_int_equal(vnic_rss_hash_frame(NULL, f, &h), v4[i].hash_ports);

		/* A fragment hashes on addresses only, first fragment included. */
		hand_hdrs(&h, VNIC_ETH_P_IP, VNIC_IPPROTO_TCP,
			  VNIC_HDRS_F_L4 | VNIC_HDRS_F_FRAG | VNIC_HDRS_F_FRAG_FIRST);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ip);
		hand_hdrs(&h, VNIC_ETH_P_IP, VNIC_IPPROTO_TCP, VNIC_HDRS_F_FRAG);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ip);

		frame4(f, &v4[i], VNIC_IPPROTO_UDP, 0);
		hand_hdrs(&h, VNIC_ETH_P_IP, VNIC_IPPROTO_UDP, VNIC_HDRS_F_L4);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ports);

		frame4(f, &v4[i], VNIC_IPPROTO_ICMP, 0);
		hand_hdrs(&h, VNIC_ETH_P_IP, VNIC_IPPROTO_ICMP, VNIC_HDRS_F_L4);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ip);
	}
}

static void test_hash_frame_ipv6_hand_hdrs(void **state)
{
	struct vnic_hdrs h;
	uint8_t f[128];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v6); i++) {
		frame6(f, &v6[i], VNIC_IPPROTO_TCP);
		hand_hdrs(&h, VNIC_ETH_P_IPV6, VNIC_IPPROTO_TCP, VNIC_HDRS_F_L4);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v6[i].hash_ports);
		hand_hdrs(&h, VNIC_ETH_P_IPV6, VNIC_IPPROTO_TCP, VNIC_HDRS_F_FRAG);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v6[i].hash_ip);

		frame6(f, &v6[i], VNIC_IPPROTO_UDP);
		hand_hdrs(&h, VNIC_ETH_P_IPV6, VNIC_IPPROTO_UDP, VNIC_HDRS_F_L4);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v6[i].hash_ports);
	}
}

/* The same frames through vnic_parse_frame(): parser and hash agree. */
static void test_hash_frame_parsed(void **state)
{
	struct vnic_hdrs h;
	uint8_t f[128];
	uint32_t len;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v4); i++) {
		len = frame4(f, &v4[i], VNIC_IPPROTO_TCP, 0x4000);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ports);

		len = frame4(f, &v4[i], VNIC_IPPROTO_UDP, 0);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ports);

		/* MF set, offset 0: a first fragment. */
		len = frame4(f, &v4[i], VNIC_IPPROTO_TCP, 0x2000);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_true(h.flags & VNIC_HDRS_F_FRAG);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ip);

		/* Offset 8 bytes: a later fragment, whose "ports" are payload. */
		len = frame4(f, &v4[i], VNIC_IPPROTO_UDP, 0x0001);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ip);

		len = frame4(f, &v4[i], VNIC_IPPROTO_ICMP, 0);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v4[i].hash_ip);
	}
	for (size_t i = 0; i < ARRAY_SIZE(v6); i++) {
		len = frame6(f, &v6[i], VNIC_IPPROTO_TCP);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v6[i].hash_ports);

		len = frame6(f, &v6[i], VNIC_IPPROTO_UDP);
		assert_int_equal(vnic_parse_frame(f, len, &h), VNIC_PARSE_OK);
		assert_int_equal(vnic_rss_hash_frame(ms_key, f, &h), v6[i].hash_ports);
	}
}

/* Not IP: no hash. */
static void test_hash_frame_non_ip(void **state)
{
	/* Ethernet / ARP request 10.0.0.1 asks for 10.0.0.2. */
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x01,
		10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
	};
	struct vnic_hdrs h;

	(void)state;
	assert_int_equal(vnic_parse_frame(arp, sizeof(arp), &h), VNIC_PARSE_OK);
	assert_int_equal(vnic_rss_hash_frame(ms_key, arp, &h), 0);
	memset(&h, 0, sizeof(h));
	h.l3_proto = 0x88cc;	/* LLDP */
	h.l3_off = ETH;
	assert_int_equal(vnic_rss_hash_frame(ms_key, arp, &h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_key_is_microsofts),
		cmocka_unit_test(test_toeplitz_ipv4_vectors),
		cmocka_unit_test(test_toeplitz_ipv6_vectors),
		cmocka_unit_test(test_toeplitz_properties),
		cmocka_unit_test(test_hash_frame_ipv4_hand_hdrs),
		cmocka_unit_test(test_hash_frame_ipv6_hand_hdrs),
		cmocka_unit_test(test_hash_frame_parsed),
		cmocka_unit_test(test_hash_frame_non_ip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
