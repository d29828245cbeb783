/* SPDX-License-Identifier: MIT */
/* Checksum kernels chosen at run time by csum.c. Private to src/net. */
#ifndef VNIC_NET_CSUM_INT_H
#define VNIC_NET_CSUM_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Sums nblocks 64-byte blocks at p into a 64-bit accumulator (ones'-complement,
 * unfolded). csum_avx2.c is built with -mavx2 and called only on CPUs with it.
 */
uint64_t vnic_csum_avx2_blocks(const uint8_t *p, size_t nblocks);
/* The same sum, each block also stored at dst (no overlap with src). */
uint64_t vnic_csum_avx2_copy_blocks(uint8_t *dst, const uint8_t *src, size_t nblocks);

#endif /* VNIC_NET_CSUM_INT_H */
