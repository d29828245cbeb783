/* SPDX-License-Identifier: MIT */
/*
 * Counter stores for src/net. Private to src/net.
 *
 * A pool, a GRO table and a delivery batch belong to one thread, but their
 * statistics and a pool's free count are read by counters functions on other
 * threads (src/core's "Counters" contract: one writer, readers anywhere,
 * possibly stale). The one writer stores them with relaxed atomics so that
 * such a read is defined; with a single writer no read-modify-write is
 * needed, and on x86 these are the plain loads and stores of `x++`.
 *
 * These are the same as vnic_ctr_* in core/core.h: src/net sits below core
 * and cannot include it. They keep the vnic_ prefix, with net_ to tell them
 * apart, so that a reader grepping for vnic_ctr finds them too. Readers in
 * upper layers use core's vnic_ctr_read and vnic_ctr_read32. Always inlined,
 * as core's are.
 */
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
