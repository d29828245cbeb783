/* SPDX-License-Identifier: MIT */
/*
 * Talking to a running bench through its control socket, as `vnic show`,
 * `vnic set` and `vnic stats` do (tests/integration/test_show_set.c,
 * test_queue_threads.c). Each call fails the running cmocka test when the
 * socket does not answer.
 */
#ifndef VNIC_TEST_LIVE_RUN_H
#define VNIC_TEST_LIVE_RUN_H

#include <stdint.h>

/* The answer of the socket at path to req, to free(). */
char *vnic_test_ask(const char *path, const char *req, int timeout_ms);

/* Counter name of the run, through "stats"; UINT64_MAX when it has none. */
uint64_t vnic_test_ctr(const char *path, const char *name, int timeout_ms);

/* Waits until the run answers "show" without an error, tries times 10 ms apart. */
void vnic_test_wait_running(const char *path, int tries);

#endif
