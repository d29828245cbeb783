/* SPDX-License-Identifier: MIT */
/*
 * Monotonic time. CLOCK_MONOTONIC goes through the vDSO, so reading it costs
 * tens of nanoseconds and no syscall: cheap enough for the datapath to read
 * once per poll, too dear to read once per packet.
 */
#include <time.h>

#include "core/core.h"

uint64_t vnic_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Burns the calling thread's cpu for ns: the cost model charges time this way
 * so that a charged operation occupies its thread exactly as real work would
 * (a sleep would hand the core to someone else and hide the cost).
 */
void vnic_spin_ns(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = vnic_now_ns() + ns;
	while ((int64_t)(vnic_now_ns() - end) < 0)
		vnic_cpu_relax();
}
