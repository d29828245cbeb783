/* SPDX-License-Identifier: MIT */
/* Helpers shared by tests and benchmarks; not part of the product. */
#ifndef VNIC_TEST_SUPPORT_H
#define VNIC_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64 step: deterministic pseudo-random numbers from a seed. */
uint64_t vnic_test_rand_next(uint64_t *state);
void vnic_test_fill_random(uint64_t *state, void *buf, size_t len);

/*
 * Sleeps us microseconds (below a second): the step of a test's wait for
 * an event, never a timing the test asserts.
 */
void vnic_test_nap_us(long us);

#endif
