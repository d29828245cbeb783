// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"
#include "live_run.h"
#include "support.h"

static void *live_thread(void *arg)
{
	struct vnic_test_live *x = arg;

	x->err = vnic_bench_run(&x->r);
	return NULL;
}

int vnic_test_live_start(struct vnic_test_live *x)
{
	x->r.o = &x->o;
	return pthread_create(&x->thread, NULL, live_thread, x) ? -1 : 0;
}

void vnic_test_live_stop(struct vnic_test_live *x)
{
	if (x->joined)
		return;
	atomic_store(&x->r.stop, true);
	pthread_join(x->thread, NULL);
	x->joined = true;
}

void vnic_test_live_free(struct vnic_test_live *x)
{
	vnic_test_live_stop(x);
	vnic_bench_cleanup(&x->r);
	free(x);
}

char *vnic_test_ask(const char *path, const char *req, int timeout_ms)
{
	char *out = NULL;

	assert_int_equal(vnic_ctl_request(path, req, timeout_ms, &out, NULL), 0);
	assert_non_null(out);
	return out;
}

uint64_t vnic_test_ctr(const char *path, const char *name, int timeout_ms)
{
	char *text = vnic_test_ask(path, "stats", timeout_ms), *p;
	size_t n = strlen(name);
	uint64_t v = UINT64_MAX;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ' ')
			v = strtoull(p + n + 1, NULL, 10);
	free(text);
	return v;
}

void vnic_test_wait_running(const char *path, int tries)
{
	for (int i = 0; i < tries; i++) {
		char *out = NULL;

		if (!vnic_ctl_request(path, "show", 1000, &out, NULL) && strncmp(out, "error:", 6)) {
			free(out);
			return;
		}
		free(out);
		vnic_test_nap_us(10000);
	}
	fail_msg("the bench never ran");
}
