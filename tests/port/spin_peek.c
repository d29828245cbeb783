// SPDX-License-Identifier: MIT
/* The spin-peek sequence shared by the backing wires' tests (spin_peek.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "spin_peek.h"
#include "support.h"

static void on_notify(void *ctx)
{
	(*(unsigned int *)ctx)++;
}

static bool notified(void *ctx)
{
	return *(unsigned int *)ctx > 0;
}

void vnic_test_spin_peek(const struct vnic_test_peek *t)
{
	struct vnic_cpu *cpus[1] = {t->cpu};
	struct vnic_wire *w = t->w;
	struct vnic_cpu_spin_src *src;
	unsigned int notes = 0;
	uint64_t end;

	w->notify = on_notify;
	w->notify_ctx = &notes;
	src = t->cpu->spin_srcs;
	assert_non_null(src);
	assert_null(src->next);

	assert_false(src->peek(src));
	t->send(t->s, 0);
	end = vnic_now_ns() + t->guard_ns;
	while (!w->ops->rx_irq->pending(w)) {
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(1000);
	}
	/* masked: the device's NAPI is on its way, nothing to report */
	assert_false(src->peek(src));
	w->ops->rx_irq->enable(w);
	assert_true(src->peek(src));
	/* the cpu runs the hit's poller, as it would for the edge */
	src->poller->poll(src->poller, 64);
	assert_int_equal(notes, 1);
	assert_false(src->peek(src));
	t->take(w, 0);
	w->ops->rx_irq->enable(w);
	assert_false(src->peek(src));

	assert_int_equal(vnic_cpu_run_once(t->cpu), 0);
	assert_int_equal(vnic_cpu_run_once(t->cpu), 0);
	assert_int_equal(t->notifies(w), 1);
	assert_int_equal(notes, 1);
	/* still armed: the next frame notifies */
	t->send(t->s, 1);
	notes = 0;
	assert_int_equal(vnic_cpus_run_until(cpus, 1, notified, &notes, t->guard_ns), 0);
	assert_int_equal(t->notifies(w), 2);
	t->take(w, 1);
}
