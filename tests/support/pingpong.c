// SPDX-License-Identifier: MIT
/* Hang-guarded waits and the two-cpu ping-pong of the vnic_cpu tests (see pingpong.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pingpong.h"

static uint64_t guard_end(void)
{
	return vnic_now_ns() + (uint64_t)VNIC_TEST_HANG_GUARD_S * 1000000000ull;
}

bool vnic_test_wait_flag(_Atomic int *flag)
{
	uint64_t end = guard_end();

	while (!atomic_load(flag)) {
		if (vnic_now_ns() > end)
			return false;
		vnic_test_nap_us(200);
	}
	return true;
}

bool vnic_test_wait_count(_Atomic uint64_t *v, uint64_t want)
{
	uint64_t end = guard_end();

	while (atomic_load(v) < want) {
		if (vnic_now_ns() > end)
			return false;
		vnic_test_nap_us(100);
	}
	return true;
}

bool vnic_test_wait_asleep(struct vnic_cpu *cpu)
{
	uint64_t end = guard_end();

	while (!atomic_load(&cpu->sleeping)) {
		if (vnic_now_ns() > end)
			return false;
		vnic_test_nap_us(100);
	}
	return true;
}

int vnic_pingpong_poll(struct vnic_poller *p, int budget)
{
	struct vnic_pingpong_side *s = vnic_container_of(p, struct vnic_pingpong_side, p);
	struct vnic_pingpong *pp = s->pp;

	(void)budget;
	if (++pp->counter >= pp->target) {
		atomic_store(&pp->done, 1);
		return 0;
	}
	s->issued++;
	vnic_poller_schedule(&pp->side[!s->me].p);
	return 0;
}

void vnic_pingpong_init(struct vnic_pingpong *pp, const char *const names[2], uint64_t busy_poll_ns,
			uint64_t target)
{
	memset(pp, 0, sizeof(*pp));
	pp->target = target;
	for (unsigned int i = 0; i < 2; i++) {
		pp->side[i].pp = pp;
		pp->side[i].me = i;
		assert_int_equal(vnic_cpu_init(&pp->cpu[i], names[i], busy_poll_ns), 0);
		assert_int_equal(
			vnic_cpu_add(&pp->cpu[i], &pp->side[i].p, "pp", vnic_pingpong_poll), 0);
	}
}

void vnic_pingpong_kick(struct vnic_pingpong *pp)
{
	vnic_poller_schedule(&pp->side[0].p);
}

bool vnic_pingpong_done(void *ctx)
{
	return atomic_load(&((struct vnic_pingpong *)ctx)->done);
}

void vnic_pingpong_print(const struct vnic_pingpong *pp)
{
	for (int i = 0; i < 2; i++) {
		const struct vnic_cpu_stats *st = &pp->cpu[i].stats;

		print_message("cpu %d: loops %llu sleeps %llu wakeups %llu busy_polls %llu\n", i,
			      (unsigned long long)st->loops, (unsigned long long)st->sleeps,
			      (unsigned long long)st->wakeups, (unsigned long long)st->busy_polls);
	}
}
