// SPDX-License-Identifier: MIT
/*
 * Deliberately naive reference checksum. It shares nothing with src/net/csum.c
 * (no native-order trick, no wide words, no alignment handling) so that the
 * two are unlikely to be wrong the same way.
 */
#include <string.h>

#include "csum_ref.h"

/*
 * Aligned so the benchmark baseline does not depend on where the linker puts
 * it: with the 2-byte loop straddling a 64-byte line it ran 1.7x slower
 * (AMD EPYC, gcc 12 -O2), which would flatter every ratio against it.
 */
__attribute__((aligned(64))) uint16_t vnic_test_csum_naive(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t sum = 0;	/* cannot overflow below 2^48 bytes */
	uint16_t check, raw;
	uint8_t be[2];
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	check = (uint16_t)~sum;

	/* The big-endian value as the two bytes a frame would hold. */
	be[0] = (uint8_t)(check >> 8);
	be[1] = (uint8_t)check;
	memcpy(&raw, be, sizeof(raw));
	return raw;
}
