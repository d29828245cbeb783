// SPDX-License-Identifier: MIT
/*
 * Copy and checksum in one pass: vnic_csum_copy against memcpy and the naive
 * reference (every implementation, every length around the kernels' edges,
 * every source and destination alignment, random lengths in exact-size heap
 * blocks), and vnic_csum_l4_copy_set / vnic_csum_l4_copy_ok against memcpy
 * followed by the in-place vnic_csum_l4_set / vnic_csum_l4_ok on random TCP
 * and UDP frames, IPv4 and IPv6, tagged or not, with Ethernet padding.
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
#include "pktgen.h"
#include "support.h"

enum {
	MAX_LEN = 65535,
	GUARD = 64,		/* sentinel bytes each side of a destination */
	SENTINEL = 0xa5,
	RANDOM_CASES = 400,
	FRAME_CASES = 600,
	MAX_PAD = 40,		/* Ethernet padding appended to a frame */
};

static const char *const impls[] = { "scalar64", "avx2" };

static uint8_t srcbuf[MAX_LEN + 2 * GUARD + 8] __attribute__((aligned(64)));
static uint8_t dstbuf[MAX_LEN + 2 * GUARD + 8] __attribute__((aligned(64)));

/*
 * One copy: dst must equal src, the bytes around dst must be untouched, and
 * the sum must be bit-identical to vnic_csum_partial over the source (whose
 * folded form the naive reference checks independently).
 */
static void check_copy(const uint8_t *src, size_t dst_align, size_t len, vnic_wsum_t initial)
{
	uint8_t *dst = dstbuf + GUARD + dst_align;
	vnic_wsum_t s;

	memset(dstbuf, SENTINEL, len + 2 * GUARD + 8);
	s = vnic_csum_copy(dst, src, len, initial);
	assert_true(s <= 0xffff);
	assert_int_equal(s, vnic_csum_partial(src, len, initial));
	if (!initial)
		assert_int_equal(vnic_csum_fold(s), vnic_test_csum_naive(src, len));
	assert_memory_equal(dst, src, len);
	for (size_t i = 0; i < GUARD + dst_align; i++)
		assert_int_equal(dstbuf[i], SENTINEL);
	for (size_t i = 0; i < GUARD; i++)
		assert_int_equal(dst[len + i], SENTINEL);
}

/* Lengths 0..700 (both sides of the 64-byte blocks and the 256-byte switch), 8 x 8 alignments. */
static void copy_small(uint64_t *rng)
{
	for (size_t len = 0; len <= 700; len++) {
		for (size_t sa = 0; sa < 8; sa++) {
			vnic_test_fill_random(rng, srcbuf, len + 8);
			for (size_t da = 0; da < 8; da++)
				check_copy(srcbuf + sa, da, len, 0);
		}
	}
}

/*
 * Random lengths up to 64 KiB, random alignments; source and destination in
 * heap blocks that end exactly at the last byte, so AddressSanitizer sees a
 * read or write one past the end.
 */
static void copy_random_heap(uint64_t *rng)
{
	for (int i = 0; i < RANDOM_CASES; i++) {
		size_t len = vnic_test_rand_next(rng) % (MAX_LEN + 1);
		size_t sa = vnic_test_rand_next(rng) % 8, da = vnic_test_rand_next(rng) % 8;
		vnic_wsum_t initial = i % 3 ? 0 : (vnic_wsum_t)(vnic_test_rand_next(rng) & 0xffff);
		uint8_t *src = malloc(sa + len + !(sa + len)), *dst = malloc(da + len + !(da + len));
		vnic_wsum_t s;

		assert_non_null(src);
		assert_non_null(dst);
		vnic_test_fill_random(rng, src + sa, len);
		s = vnic_csum_copy(dst + da, src + sa, len, initial);
		assert_int_equal(s, vnic_csum_partial(src + sa, len, initial));
		if (!initial)
			assert_int_equal(vnic_csum_fold(s), vnic_test_csum_naive(src + sa, len));
		assert_memory_equal(dst + da, src + sa, len);
		free(src);
		free(dst);
	}
}

/* All-0xff (every add carries) and all-zero (the one sum that is +0). */
static void copy_extreme(void)
{
	static const size_t lens[] = { 1, 2, 63, 64, 65, 255, 256, 257, 1448, 1500, 4096, MAX_LEN };

	for (int fill = 0; fill < 2; fill++) {
		memset(srcbuf, fill ? 0xff : 0x00, sizeof(srcbuf));
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			for (size_t a = 0; a < 8; a++)
				check_copy(srcbuf + a, 7 - a, lens[i], 0);
		}
	}
	memset(srcbuf, 0, 64);
	assert_int_equal(vnic_csum_copy(dstbuf, srcbuf, 40, 0), 0);
}

static void test_copy_each_impl(void **state)
{
	const char *dflt = vnic_csum_impl_name();
	int tested = 0;

	(void)state;
	for (size_t n = 0; n < sizeof(impls) / sizeof(impls[0]); n++) {
		uint64_t rng = 0xc0b1 + n;
		int err = vnic_csum_impl_select(impls[n]);

		if (err == -ENOTSUP) {
			printf("# %s: not supported on this CPU, skipped\n", impls[n]);
			continue;
		}
		assert_int_equal(err, 0);
		tested++;
		copy_small(&rng);
		copy_random_heap(&rng);
		copy_extreme();
	}
	assert_true(tested >= 1);
	assert_int_equal(vnic_csum_impl_select(dflt), 0);
}

/* An initial sum is added as vnic_csum_partial adds it, at any alignment. */
static void test_copy_initial_sum(void **state)
{
	uint64_t rng = 0x1417;

	(void)state;
	for (int i = 0; i < 300; i++) {
		size_t len = vnic_test_rand_next(&rng) % 3000;
		vnic_wsum_t initial = (vnic_wsum_t)vnic_test_rand_next(&rng);

		vnic_test_fill_random(&rng, srcbuf, len + 8);
		check_copy(srcbuf + i % 8, (size_t)(i / 8) % 8, len, initial);
	}
}

/* ---- frames -------------------------------------------------------------- */

struct frame_case {
	bool v6;
	uint8_t proto;
	bool vlan;
	uint32_t payload;
	uint32_t pad;
};

/* A random well-formed frame with a scrambled L4 checksum field and padding; its length. */
static uint32_t frame_build(struct vnic_pkt_pool *pool, uint64_t *rng, const struct frame_case *fc,
			    uint8_t *out, struct vnic_hdrs *h)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *pkt = vnic_pkt_alloc(pool);
	uint32_t len, check_off;

	assert_non_null(pkt);
	vnic_pktgen_flow_init(&f, fc->v6, fc->proto);
	f.vlan = fc->vlan;
	f.seed = (uint32_t)vnic_test_rand_next(rng);
	f.sport = (uint16_t)vnic_test_rand_next(rng);
	assert_int_equal(vnic_pktgen_build(pkt, &f, (uint32_t)vnic_test_rand_next(rng) % 4096,
					   fc->payload),
			 0);
	len = pkt->len;
	memcpy(out, pkt->data, len);
	vnic_pkt_free(pkt);
	vnic_test_fill_random(rng, out + len, fc->pad);
	len += fc->pad;
	assert_int_equal(vnic_parse_frame(out, len, h), VNIC_PARSE_OK);
	check_off = h->l4_off + (fc->proto == VNIC_IPPROTO_TCP ? 16 : 6);
	out[check_off] = (uint8_t)vnic_test_rand_next(rng);
	out[check_off + 1] = (uint8_t)vnic_test_rand_next(rng);
	return len;
}

static void random_case(uint64_t *rng, struct frame_case *fc)
{
	fc->v6 = vnic_test_rand_next(rng) & 1;
	fc->proto = vnic_test_rand_next(rng) & 1 ? VNIC_IPPROTO_TCP : VNIC_IPPROTO_UDP;
	fc->vlan = (vnic_test_rand_next(rng) % 4) == 0;
	fc->payload = (uint32_t)(vnic_test_rand_next(rng) % 1449);
	fc->pad = vnic_test_rand_next(rng) % 3 ? 0 : (uint32_t)(vnic_test_rand_next(rng) % MAX_PAD);
}

/*
 * copy_set against memcpy + l4_set, byte for byte, into an exact-size heap
 * destination; then copy_ok against l4_ok on the result, on a copy with one
 * covered byte flipped, and on a copy with one padding byte flipped.
 */
static void check_frame(uint64_t *rng, const uint8_t *src, uint32_t len, const struct vnic_hdrs *h)
{
	uint8_t *want = malloc(len), *dst = malloc(len), *back = malloc(len);
	uint32_t span_end = h->l4_off + h->l3_payload_len, i;

	assert_non_null(want);
	assert_non_null(dst);
	assert_non_null(back);
	memcpy(want, src, len);
	assert_int_equal(vnic_csum_l4_set(want, h), 0);
	memset(dst, SENTINEL, len);
	assert_int_equal(vnic_csum_l4_copy_set(dst, src, len, h), 0);
	assert_memory_equal(dst, want, len);

	assert_true(vnic_csum_l4_ok(want, h));
	assert_true(vnic_csum_l4_copy_ok(back, dst, len, h));
	assert_memory_equal(back, dst, len);

	i = h->l4_off + (uint32_t)(vnic_test_rand_next(rng) % h->l3_payload_len);
	dst[i] ^= (uint8_t)(1u << (vnic_test_rand_next(rng) % 8));
	assert_false(vnic_csum_l4_ok(dst, h));
	assert_false(vnic_csum_l4_copy_ok(back, dst, len, h));
	assert_memory_equal(back, dst, len);
	memcpy(dst, want, len);
	if (span_end < len) {
		dst[span_end + vnic_test_rand_next(rng) % (len - span_end)] ^= 0xff;
		assert_true(vnic_csum_l4_copy_ok(back, dst, len, h));
		assert_memory_equal(back, dst, len);
	}
	free(want);
	free(dst);
	free(back);
}

static void test_l4_copy_random_frames(void **state)
{
	struct vnic_pkt_pool *pool = *state;
	uint8_t *src = malloc(2048);
	uint64_t rng = 0xf4a3e;
	struct vnic_hdrs h;

	assert_non_null(src);
	for (int n = 0; n < FRAME_CASES; n++) {
		struct frame_case fc;
		uint32_t len;

		random_case(&rng, &fc);
		len = frame_build(pool, &rng, &fc, src, &h);
		check_frame(&rng, src, len, &h);
	}
	free(src);
}

/*
 * Every payload length 0..80 (the head copied before the span is read is
 * 20 bytes; spans shorter and longer than it), each protocol and family.
 */
static void test_l4_copy_short_spans(void **state)
{
	struct vnic_pkt_pool *pool = *state;
	uint8_t src[256];
	uint64_t rng = 0x5407;
	struct vnic_hdrs h;

	for (uint32_t p = 0; p <= 80; p++) {
		for (int k = 0; k < 4; k++) {
			struct frame_case fc = {
				.v6 = k & 1,
				.proto = k & 2 ? VNIC_IPPROTO_UDP : VNIC_IPPROTO_TCP,
				.payload = p,
				.pad = p % 7,
			};
			uint32_t len = frame_build(pool, &rng, &fc, src, &h);

			check_frame(&rng, src, len, &h);
		}
	}
}

/* A zero UDP checksum: "none" over IPv4, refused over IPv6, copied either way. */
static void test_l4_copy_udp_zero(void **state)
{
	struct vnic_pkt_pool *pool = *state;
	uint8_t src[256], dst[256];
	uint64_t rng = 0x2e60;
	struct vnic_hdrs h;

	for (int v6 = 0; v6 < 2; v6++) {
		struct frame_case fc = { .v6 = v6, .proto = VNIC_IPPROTO_UDP, .payload = 33 };
		uint32_t len = frame_build(pool, &rng, &fc, src, &h);

		src[h.l4_off + 6] = src[h.l4_off + 7] = 0;
		memset(dst, SENTINEL, sizeof(dst));
		assert_int_equal(vnic_csum_l4_copy_ok(dst, src, len, &h), !v6);
		assert_int_equal(vnic_csum_l4_ok(src, &h), !v6);
		assert_memory_equal(dst, src, len);
		assert_int_equal(dst[len], SENTINEL);
	}
}

/* Headers that do not describe a checksummable L4: an error, and a full copy all the same. */
static void test_l4_copy_unverifiable(void **state)
{
	struct vnic_pkt_pool *pool = *state;
	uint8_t src[256], dst[256];
	struct frame_case fc = { .proto = VNIC_IPPROTO_TCP, .payload = 100, .pad = 6 };
	uint64_t rng = 0x0bad;
	struct vnic_hdrs h, bad;
	uint32_t len = frame_build(pool, &rng, &fc, src, &h);

	bad = h;
	bad.flags &= (uint8_t)~VNIC_HDRS_F_L4;
	memset(dst, SENTINEL, sizeof(dst));
	assert_int_equal(vnic_csum_l4_copy_set(dst, src, len, &bad), -EINVAL);
	assert_memory_equal(dst, src, len);
	assert_false(vnic_csum_l4_copy_ok(dst, src, len, &bad));
	assert_memory_equal(dst, src, len);

	bad = h;
	bad.flags |= VNIC_HDRS_F_FRAG;
	memset(dst, SENTINEL, sizeof(dst));
	assert_int_equal(vnic_csum_l4_copy_set(dst, src, len, &bad), -EINVAL);
	assert_memory_equal(dst, src, len);
	assert_int_equal(dst[len], SENTINEL);

	/* L4 claimed past the end of the frame */
	bad = h;
	bad.l4_off = (uint16_t)(len + 2);
	memset(dst, SENTINEL, sizeof(dst));
	assert_int_equal(vnic_csum_l4_copy_set(dst, src, len, &bad), -EINVAL);
	assert_memory_equal(dst, src, len);
	assert_int_equal(dst[len], SENTINEL);
}

static int pool_setup(void **state)
{
	static struct vnic_pkt_pool pool;

	*state = &pool;
	return vnic_pkt_pool_init(&pool, 8, 2048, 128);
}

static int pool_teardown(void **state)
{
	vnic_pkt_pool_fini(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_each_impl),
		cmocka_unit_test(test_copy_initial_sum),
		cmocka_unit_test(test_l4_copy_random_frames),
		cmocka_unit_test(test_l4_copy_short_spans),
		cmocka_unit_test(test_l4_copy_udp_zero),
		cmocka_unit_test(test_l4_copy_unverifiable),
	};

	return cmocka_run_group_tests(tests, pool_setup, pool_teardown);
}
