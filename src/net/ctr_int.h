/* SPDX-License-Identifier: MIT */
/* core's vnic_ctr_* (core.h) for src/net, which sits below core and must not include it. */
#ifndef VNIC_NET_CTR_INT_H
#define VNIC_NET_CTR_INT_H

#include <stddef.h>
#include <stdint.h>

static inline __attribute__((always_inline)) void vnic_net_ctr_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void vnic_net_ctr_inc(uint64_t *c)
{
	vnic_net_ctr_add(c, 1);
}

static inline __attribute__((always_inline)) void vnic_net_ctr_set(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void vnic_net_ctr_set32(uint32_t *c, uint32_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

/*
 * Zeroes a stats struct made only of uint64_t counters, one relaxed store
 * each: an init that runs again while the owner is reconfigured (a driver
 * re-opening) must not memset what a reader may be loading.
 */
#define vnic_net_ctr_zero(stats)                                                                   \
	do {                                                                                       \
		_Static_assert(sizeof(*(stats)) % sizeof(uint64_t) == 0, "u64 counters only");     \
		for (size_t i_ = 0; i_ < sizeof(*(stats)) / sizeof(uint64_t); i_++)                \
			vnic_net_ctr_set((uint64_t *)(void *)(stats) + i_, 0);                     \
	} while (0)

#endif /* VNIC_NET_CTR_INT_H */
