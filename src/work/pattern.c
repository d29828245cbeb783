// SPDX-License-Identifier: MIT
/*
 * The payload pattern (definition in work.h). Words of 32 bits, so filling
 * and checking run a word or two at a time: the receiver checks every byte
 * of every segment, at the speed of a memcmp rather than of a byte loop.
 *
 * The pattern repeats every 2^32 bytes, so the receiver can check a segment
 * knowing only its 32-bit sequence number. Word indices therefore live mod
 * 2^30: a range crossing a multiple of 2^32 must continue with word 0, as a
 * range starting just after it does, however the sender cut its segments
 * and however GRO joined them.
 */
#include <string.h>

#include "work.h"

#define PATTERN_MUL 0x9e3779b1u
#define PATTERN_WORD_MASK 0x3fffffffu	/* 2^32 bytes: 2^30 words */

static uint32_t word_at(uint32_t seed, uint32_t w)
{
	return ((w & PATTERN_WORD_MASK) * PATTERN_MUL) ^ seed;
}

static uint8_t byte_at(uint32_t seed, uint32_t off)
{
	return (uint8_t)(word_at(seed, off >> 2) >> (8 * (off & 3)));
}

/* The pattern's bytes of word w, in memory order. */
static uint32_t word_mem(uint32_t seed, uint32_t w)
{
	uint32_t v = word_at(seed, w);

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

void vnic_work_pattern_fill(uint8_t *dst, uint32_t len, uint32_t seed, uint64_t off64)
{
	uint32_t off = (uint32_t)off64, i = 0, w;

	for (; i < len && ((off + i) & 3); i++)
		dst[i] = byte_at(seed, off + i);
	w = (off + i) >> 2;
	for (; i + 4 <= len; i += 4, w++) {
		uint32_t v = word_mem(seed, w);

		memcpy(dst + i, &v, 4);
	}
	for (; i < len; i++)
		dst[i] = byte_at(seed, off + i);
}

int64_t vnic_work_pattern_check(const uint8_t *buf, uint32_t len, uint32_t seed, uint64_t off64)
{
	uint32_t off = (uint32_t)off64, i = 0, w;

	for (; i < len && ((off + i) & 3); i++)
		if (buf[i] != byte_at(seed, off + i))
			return i;
	w = (off + i) >> 2;
	for (; i + 8 <= len; i += 8, w += 2) {
		uint32_t v[2] = { word_mem(seed, w), word_mem(seed, w + 1) };

		if (memcmp(buf + i, v, 8))
			break;	/* the byte loop below finds which */
	}
	for (; i < len; i++)
		if (buf[i] != byte_at(seed, off + i))
			return i;
	return -1;
}
