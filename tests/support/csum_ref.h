/* SPDX-License-Identifier: MIT */
/* Naive internet checksum: the oracle for tests and the baseline for bench_csum. */
#ifndef VNIC_TEST_CSUM_REF_H
#define VNIC_TEST_CSUM_REF_H

#include <stddef.h>
#include <stdint.h>

/*
 * RFC 1071 done the obvious way: big-endian 16-bit words, one at a time, an
 * odd last byte padded with zero, carries folded at the end, complemented.
 * Returned in vnic_csum()'s convention (raw memory, ready to store), so the
 * two compare equal with ==.
 */
uint16_t vnic_test_csum_naive(const void *buf, size_t len);

#endif
