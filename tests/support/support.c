// SPDX-License-Identifier: MIT
/* Helpers shared by tests and benchmarks: deterministic data, and a nap. */
#include "support.h"

#include <time.h>

uint64_t vnic_test_rand_next(uint64_t *state)
{
	/* splitmix64: tiny, seedable, good enough for test data. */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void vnic_test_fill_random(uint64_t *state, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t r = vnic_test_rand_next(state);
		size_t n = len < sizeof(r) ? len : sizeof(r);

		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t)(r >> (8 * i));
		p += n;
		len -= n;
	}
}

void vnic_test_nap_us(long us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};

	nanosleep(&ts, NULL);
}
