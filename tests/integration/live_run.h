/* SPDX-License-Identifier: MIT */
/*
 * A bench running on a thread of its own, and talking to it through its
 * control socket as `vnic show`, `vnic set` and `vnic stats` do
 * (tests/integration/test_show_set.c, test_queue_threads.c). Each ask fails
 * the running cmocka test when the socket does not answer.
 */
#ifndef VNIC_TEST_LIVE_RUN_H
#define VNIC_TEST_LIVE_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "app/app.h"

struct vnic_test_live {
	struct vnic_bench_opts o;	/* the test sets them before the start */
	struct vnic_bench_run r;
	pthread_t thread;
	bool joined;
	int err;			/* vnic_bench_run's, once stopped */
};

/* Runs the bench of x->o on a thread of its own. 0, or -1 (no thread). */
int vnic_test_live_start(struct vnic_test_live *x);

/* Has the run stop and waits for its thread; once stopped, nothing. */
void vnic_test_live_stop(struct vnic_test_live *x);

/* Stops the run, cleans it up and frees x (calloc'd). */
void vnic_test_live_free(struct vnic_test_live *x);

/* The answer of the socket at path to req, to free(). */
char *vnic_test_ask(const char *path, const char *req, int timeout_ms);

/* Counter name of the run, through "stats"; UINT64_MAX when it has none. */
uint64_t vnic_test_ctr(const char *path, const char *name, int timeout_ms);

/* Waits until the run answers "show" without an error, tries times 10 ms apart. */
void vnic_test_wait_running(const char *path, int tries);

#endif
