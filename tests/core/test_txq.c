// SPDX-License-Identifier: MIT
/*
 * TX queue state: BQL accounting with xmit_more (no stop mid-batch), the
 * doorbell return value, stop/wake with two independent reasons, a wake
 * exactly when the last reason clears, and reset.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/core.h"

struct waker {
	unsigned int calls;
	struct vnic_txq *last;
};

static void on_wake(void *ctx, struct vnic_txq *txq)
{
	struct waker *w = ctx;

	w->calls++;
	w->last = txq;
}

/* A BQL queue on a simulated clock, limit 0 as after any reset. */
static void setup(struct vnic_txq *txq, struct waker *w, bool bql)
{
	*w = (struct waker){0};
	vnic_txq_init(txq, bql, on_wake, w);
	vnic_txq_reset(txq, 0);
	w->calls = 0;
}

static uint32_t state_of(struct vnic_txq *txq)
{
	return atomic_load(&txq->state);
}

/*
 * Limit 0: every packet is over the limit. Mid-batch (xmit_more) that must
 * neither stop the queue nor ring the doorbell; the batch's last packet
 * stops it (STACK_XOFF) and rings.
 */
static void test_xmit_more_never_stops_mid_batch(void **state)
{
	struct vnic_txq txq;
	struct waker w;
	int i;

	(void)state;
	setup(&txq, &w, true);
	for (i = 0; i < 10; i++) {
		assert_false(vnic_txq_sent(&txq, 1500, true));
		assert_false(vnic_txq_stopped(&txq));
	}
	assert_int_equal(vnic_dql_inflight(&txq.dql), 15000);
	assert_true(vnic_dql_avail(&txq.dql) < 0);
	assert_int_equal(txq.bql_stops, 0);

	assert_true(vnic_txq_sent(&txq, 1500, false));
	assert_true(vnic_txq_stopped(&txq));
	assert_int_equal(state_of(&txq), VNIC_TXQ_STACK_XOFF);
	assert_int_equal(txq.bql_stops, 1);
	assert_int_equal(w.calls, 0);
}

/* The driver stopped the ring mid-batch: nobody else will ring, so this packet must. */
static void test_xmit_more_rings_when_driver_stopped(void **state)
{
	struct vnic_txq txq;
	struct waker w;

	(void)state;
	setup(&txq, &w, true);
	assert_false(vnic_txq_sent(&txq, 100, true));
	vnic_txq_stop(&txq);
	assert_true(vnic_txq_sent(&txq, 100, true));
	assert_int_equal(state_of(&txq), VNIC_TXQ_DRV_XOFF);
	assert_int_equal(txq.stops, 1);
	vnic_txq_stop(&txq);
	assert_int_equal(txq.stops, 1); /* a transition, not a call */
}

/* Under the limit the queue keeps running and each non-batched send rings. */
static void test_under_limit_runs(void **state)
{
	struct vnic_txq txq;
	struct waker w;

	(void)state;
	setup(&txq, &w, true);
	/* Starve it once: 1000 queued and completed with limit 0 -> limit 1000. */
	assert_true(vnic_txq_sent(&txq, 1000, false));
	vnic_txq_completed(&txq, 1, 1000, 1);
	assert_int_equal(txq.dql.limit, 1000);
	assert_true(vnic_txq_sent(&txq, 600, false));
	assert_true(vnic_txq_sent(&txq, 400, false)); /* avail 0: not over */
	assert_false(vnic_txq_stopped(&txq));
	assert_true(vnic_txq_sent(&txq, 1, false));
	assert_true(vnic_txq_stopped(&txq));
}

/*
 * Completion that brings avail back to >= 0 wakes once; later completions
 * do not wake again; a completion that leaves the queue over the limit
 * does not wake at all.
 */
static void test_completion_wakes_exactly_once(void **state)
{
	struct vnic_txq txq;
	struct waker w;

	(void)state;
	setup(&txq, &w, true);
	vnic_txq_sent(&txq, 1000, false);
	vnic_txq_sent(&txq, 1000, false);
	assert_true(vnic_txq_stopped(&txq));

	/*
	 * Complete 500: ovlimit 2000, 1500 in progress, no previous round:
	 * the limit stays 0 and avail = 0 + 500 - 2000 < 0: still stopped.
	 */
	vnic_txq_completed(&txq, 1, 500, 1);
	assert_int_equal(txq.dql.limit, 0);
	assert_true(vnic_txq_stopped(&txq));
	assert_int_equal(w.calls, 0);

	/* The rest: drained while over the limit, limit grows, avail >= 0. */
	vnic_txq_completed(&txq, 1, 1500, 2);
	assert_true(vnic_dql_avail(&txq.dql) >= 0);
	assert_false(vnic_txq_stopped(&txq));
	assert_int_equal(w.calls, 1);
	assert_ptr_equal(w.last, &txq);
	assert_int_equal(txq.wakes, 1);

	/* Limit 2000 now: 1000 runs, and completing it in parts wakes nothing. */
	vnic_txq_sent(&txq, 1000, false);
	assert_false(vnic_txq_stopped(&txq));
	vnic_txq_completed(&txq, 1, 500, 3);
	vnic_txq_completed(&txq, 1, 500, 4);
	assert_int_equal(w.calls, 1);
	assert_int_equal(txq.wakes, 1);
	assert_int_equal(txq.bql_stops, 1);
}

/* 0 bytes reclaimed: no call into DQL at all (its prev_* snapshots stay). */
static void test_zero_byte_completion_is_noop(void **state)
{
	struct vnic_txq txq;
	struct waker w;
	struct vnic_dql before;

	(void)state;
	setup(&txq, &w, true);
	vnic_txq_sent(&txq, 300, false);
	before = txq.dql;
	vnic_txq_completed(&txq, 0, 0, 5);
	assert_memory_equal(&before, &txq.dql, sizeof(before));
	assert_true(vnic_txq_stopped(&txq));
	assert_int_equal(w.calls, 0);
}

/* BQL clears STACK_XOFF, but the ring is still full: no wake until the driver's. */
static void test_both_reasons_wake_on_last(void **state)
{
	struct vnic_txq txq;
	struct waker w;

	(void)state;
	setup(&txq, &w, true);
	vnic_txq_sent(&txq, 100, false);
	vnic_txq_stop(&txq);
	assert_int_equal(state_of(&txq), VNIC_TXQ_STACK_XOFF | VNIC_TXQ_DRV_XOFF);

	vnic_txq_completed(&txq, 1, 100, 1);
	assert_int_equal(state_of(&txq), VNIC_TXQ_DRV_XOFF);
	assert_int_equal(w.calls, 0);

	vnic_txq_wake(&txq);
	assert_int_equal(state_of(&txq), 0);
	assert_int_equal(w.calls, 1);

	/* wake on a running queue is not a transition. */
	vnic_txq_wake(&txq);
	assert_int_equal(w.calls, 1);

	/* And the other order: the ring drains first, BQL last. */
	vnic_txq_sent(&txq, 300, false); /* limit 100: over */
	vnic_txq_stop(&txq);
	vnic_txq_wake(&txq);
	assert_int_equal(state_of(&txq), VNIC_TXQ_STACK_XOFF);
	assert_int_equal(w.calls, 1);
	vnic_txq_completed(&txq, 1, 300, 2);
	assert_int_equal(state_of(&txq), 0);
	assert_int_equal(w.calls, 2);
}

static void test_reset(void **state)
{
	struct vnic_txq txq;
	struct waker w;

	(void)state;
	setup(&txq, &w, true);
	vnic_txq_sent(&txq, 1000, false);
	vnic_txq_completed(&txq, 1, 1000, 1);
	assert_int_equal(txq.dql.limit, 1000);
	assert_int_equal(w.calls, 1); /* that completion's wake */
	w.calls = 0;
	vnic_txq_sent(&txq, 1500, false);
	vnic_txq_stop(&txq);
	assert_true(vnic_txq_stopped(&txq));

	/* Flushed: nothing in flight, limit back to 0, stopped queue woken once. */
	vnic_txq_reset(&txq, 2);
	assert_int_equal(state_of(&txq), 0);
	assert_int_equal(vnic_dql_inflight(&txq.dql), 0);
	assert_int_equal(txq.dql.limit, 0);
	assert_int_equal(vnic_dql_avail(&txq.dql), 0);
	assert_int_equal(w.calls, 1);

	/* A running queue is not woken by a reset. */
	vnic_txq_reset(&txq, 3);
	assert_int_equal(w.calls, 1);

	/* Back to the start: limit 0 again, the first packet stops it. */
	vnic_txq_sent(&txq, 60, false);
	assert_true(vnic_txq_stopped(&txq));
	vnic_txq_completed(&txq, 1, 60, 4);
	assert_false(vnic_txq_stopped(&txq));
	assert_int_equal(txq.dql.limit, 60);
}

/* Without BQL: no accounting, no BQL stop, the doorbell follows xmit_more. */
static void test_bql_disabled(void **state)
{
	struct vnic_txq txq;
	struct waker w;

	(void)state;
	setup(&txq, &w, false);
	assert_false(vnic_txq_sent(&txq, 1500, true));
	assert_true(vnic_txq_sent(&txq, 1500, false));
	assert_false(vnic_txq_stopped(&txq));
	assert_int_equal(vnic_dql_inflight(&txq.dql), 0);
	vnic_txq_completed(&txq, 2, 3000, 1);
	assert_int_equal(txq.dql.num_completed, 0);
	vnic_txq_stop(&txq);
	assert_true(vnic_txq_sent(&txq, 1500, true));
	vnic_txq_wake(&txq);
	assert_int_equal(w.calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xmit_more_never_stops_mid_batch),
		cmocka_unit_test(test_xmit_more_rings_when_driver_stopped),
		cmocka_unit_test(test_under_limit_runs),
		cmocka_unit_test(test_completion_wakes_exactly_once),
		cmocka_unit_test(test_zero_byte_completion_is_noop),
		cmocka_unit_test(test_both_reasons_wake_on_last),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_bql_disabled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
