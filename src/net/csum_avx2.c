// SPDX-License-Identifier: MIT
/*
 * AVX2 block kernel for the internet checksum. This file alone is built with
 * -mavx2; csum.c calls it only after __builtin_cpu_supports("avx2").
 *
 * Each 256-bit load is split into its eight 32-bit words, zero-extended into
 * 64-bit lanes (low halves by masking, high halves by shifting), and added to
 * 64-bit accumulators. A lane gains less than 2^32 per block and is reduced
 * into a scalar ones'-complement sum every 2^16 blocks, so no carry is lost.
 * Summing 32-bit words instead of 16-bit ones is exact modulo 0xffff because
 * 2^16 == 1 (mod 0xffff): a 32-bit word is congruent to the sum of its two
 * 16-bit halves, in either byte order. The copy kernel is the same loop
 * with each load also stored: the bytes summed are the bytes written.
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "csum_int.h"

static inline uint64_t add64(uint64_t a, uint64_t b)
{
	uint64_t s = a + b;

	return s + (s < b);
}

enum {
	/* Blocks (4 MiB) between reductions: each lane then stays below 2^48. */
	AVX2_CHUNK_BLOCKS = 1 << 16,
};

/* nblocks * 64 bytes at p; csum.c passes p 32-byte aligned, loadu copes anyway. */
uint64_t vnic_csum_avx2_blocks(const uint8_t *p, size_t nblocks)
{
	const __m256i lo32 = _mm256_set1_epi64x(0xffffffff);
	uint64_t sum = 0;
	__m128i h;

	while (nblocks) {
		size_t n = nblocks < AVX2_CHUNK_BLOCKS ? nblocks : AVX2_CHUNK_BLOCKS;
		__m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
		__m256i a2 = _mm256_setzero_si256(), a3 = _mm256_setzero_si256();

		for (nblocks -= n; n; n--, p += 64) {
			__m256i v0 = _mm256_loadu_si256((const __m256i *)p);
			__m256i v1 = _mm256_loadu_si256((const __m256i *)(p + 32));

			a0 = _mm256_add_epi64(a0, _mm256_and_si256(v0, lo32));
			a1 = _mm256_add_epi64(a1, _mm256_srli_epi64(v0, 32));
			a2 = _mm256_add_epi64(a2, _mm256_and_si256(v1, lo32));
			a3 = _mm256_add_epi64(a3, _mm256_srli_epi64(v1, 32));
		}
		/* 16 lanes below 2^48 each: the horizontal sum stays below 2^52. */
		a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
		h = _mm_add_epi64(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
		h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
		sum = add64(sum, (uint64_t)_mm_cvtsi128_si64(h));
	}
	return sum;
}

/* vnic_csum_avx2_blocks with a store behind each load: one read of src for both. */
uint64_t vnic_csum_avx2_copy_blocks(uint8_t *dst, const uint8_t *src, size_t nblocks)
{
	const __m256i lo32 = _mm256_set1_epi64x(0xffffffff);
	uint64_t sum = 0;
	__m128i h;

	while (nblocks) {
		size_t n = nblocks < AVX2_CHUNK_BLOCKS ? nblocks : AVX2_CHUNK_BLOCKS;
		__m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
		__m256i a2 = _mm256_setzero_si256(), a3 = _mm256_setzero_si256();

		for (nblocks -= n; n; n--, src += 64, dst += 64) {
			__m256i v0 = _mm256_loadu_si256((const __m256i *)src);
			__m256i v1 = _mm256_loadu_si256((const __m256i *)(src + 32));

			_mm256_storeu_si256((__m256i *)dst, v0);
			_mm256_storeu_si256((__m256i *)(dst + 32), v1);
			a0 = _mm256_add_epi64(a0, _mm256_and_si256(v0, lo32));
			a1 = _mm256_add_epi64(a1, _mm256_srli_epi64(v0, 32));
			a2 = _mm256_add_epi64(a2, _mm256_and_si256(v1, lo32));
			a3 = _mm256_add_epi64(a3, _mm256_srli_epi64(v1, 32));
		}
		a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
		h = _mm_add_epi64(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
		h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
		sum = add64(sum, (uint64_t)_mm_cvtsi128_si64(h));
	}
	return sum;
}
