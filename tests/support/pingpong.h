/* SPDX-License-Identifier: MIT */
/*
 * Scaffolding of the vnic_cpu tests (tests/core/test_cpu.c, test_cpu_fd.c):
 * waits with a hang guard, and a ping-pong between two cpus. No timing is
 * asserted with these: a wait that gives up means a hang (a lost wake-up).
 */
#ifndef VNIC_TEST_PINGPONG_H
#define VNIC_TEST_PINGPONG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "support.h"

enum { VNIC_TEST_HANG_GUARD_S = 120 };

/* Waits for *flag to become non-zero; false only if the guard expires (a hang). */
bool vnic_test_wait_flag(_Atomic int *flag);
/* Waits for *v to reach want; false only if the guard expires. */
bool vnic_test_wait_count(_Atomic uint64_t *v, uint64_t want);
/* Waits for a started cpu to go to sleep; false only if the guard expires. */
bool vnic_test_wait_asleep(struct vnic_cpu *cpu);

/*
 * Ping-pong: side 0's poller runs on cpu[0], bumps the counter and
 * schedules side 1's on cpu[1], which does the same back, until the counter
 * reaches target. The counter is a plain variable: only the schedule/take
 * handoff orders the two threads' accesses, which is what TSan checks.
 */
struct vnic_pingpong;

struct vnic_pingpong_side {
	struct vnic_poller p;
	struct vnic_pingpong *pp;
	unsigned int me;
	uint64_t issued; /* schedules this side issued, owner-only */
};

struct vnic_pingpong {
	struct vnic_cpu cpu[2];
	struct vnic_pingpong_side side[2];
	uint64_t counter;
	uint64_t target;
	_Atomic int done;
};

/* Side i's poll function (vnic_pingpong_init adds it). */
int vnic_pingpong_poll(struct vnic_poller *p, int budget);
/* Zeroes pp, inits cpu i (names[i], busy_poll_ns) and adds side i's poller to it. */
void vnic_pingpong_init(struct vnic_pingpong *pp, const char *const names[2], uint64_t busy_poll_ns,
			uint64_t target);
/* The first schedule: side 0 runs first. */
void vnic_pingpong_kick(struct vnic_pingpong *pp);
/* For vnic_cpus_run_until (ctx: the ping-pong): the target was reached. */
bool vnic_pingpong_done(void *ctx);
/* Prints each cpu's loop, sleep, wake-up and busy-poll counts. */
void vnic_pingpong_print(const struct vnic_pingpong *pp);

#endif /* VNIC_TEST_PINGPONG_H */
