// SPDX-License-Identifier: MIT
/*
 * NAPI in manual mode (one thread, deterministic): the interrupt is masked
 * while the napi is scheduled and re-armed on completion, the re-arm race is
 * closed and counted, a full budget keeps the napi scheduled, and a schedule
 * while scheduled does nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"

/*
 * A fake interrupt source with a work queue. Hooks on enable() play the
 * races: work that arrived while masked (no interrupt raised for it), or an
 * interrupt delivered the moment the source is armed.
 */
struct fake_irq {
	bool enabled;
	unsigned int enables, disables;
	int work;	      /* items waiting */
	int arrive_on_enable; /* items that land just before the next enable */
	bool irq_on_enable;   /* deliver an interrupt right after the next enable */
	struct vnic_napi *napi;
	/* poll behaviour */
	bool complete_in_poll;
	int polled;
};

static void fake_enable(void *ctx)
{
	struct fake_irq *f = ctx;

	f->work += f->arrive_on_enable;
	f->arrive_on_enable = 0;
	f->enabled = true;
	f->enables++;
	if (f->irq_on_enable && f->work) {
		f->irq_on_enable = false;
		vnic_napi_schedule(f->napi);
	}
}

static void fake_disable(void *ctx)
{
	struct fake_irq *f = ctx;

	f->enabled = false;
	f->disables++;
}

static bool fake_pending(void *ctx)
{
	return ((struct fake_irq *)ctx)->work > 0;
}

static const struct vnic_irq_ops fake_ops = {
	.enable = fake_enable,
	.disable = fake_disable,
	.pending = fake_pending,
};

/* The interrupt: raised for new work only while armed, as the hv does. */
static void fake_raise(struct fake_irq *f, int items)
{
	f->work += items;
	if (f->enabled)
		vnic_napi_schedule(f->napi);
}

static int fake_poll(struct vnic_napi *napi, int budget)
{
	struct fake_irq *f = napi->irq_ctx;
	int n = f->work < budget ? f->work : budget;

	/* The interrupt must be masked for as long as we poll. */
	assert_false(f->enabled);
	assert_true(atomic_load(&napi->state) & VNIC_NAPI_SCHED);
	f->work -= n;
	f->polled += n;
	if (n < budget && f->complete_in_poll)
		vnic_napi_complete_done(napi, n);
	return n;
}

struct fixture {
	struct vnic_cpu cpu;
	struct vnic_napi napi;
	struct fake_irq irq;
};

/* Static: the cpu and the dql are cache-line aligned, which calloc does not promise. */
static struct fixture the_fixture;

static int setup(void **state)
{
	struct fixture *fx = &the_fixture;

	memset(fx, 0, sizeof(*fx));
	assert_int_equal(vnic_cpu_init(&fx->cpu, "napi-test", 0), 0);
	assert_int_equal(
		vnic_napi_init(&fx->napi, &fx->cpu, "rx0", fake_poll, &fake_ops, &fx->irq, 0), 0);
	fx->irq.napi = &fx->napi;
	fx->irq.enabled = true; /* armed by its owner at open */
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	vnic_cpu_fini(&fx->cpu);
	return 0;
}

static bool sched(struct vnic_napi *napi)
{
	return atomic_load(&napi->state) & VNIC_NAPI_SCHED;
}

static void test_irq_masked_while_scheduled(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(fx->napi.weight, VNIC_NAPI_BUDGET);
	fake_raise(&fx->irq, 10);
	assert_true(sched(&fx->napi));
	assert_false(fx->irq.enabled);
	assert_int_equal(fx->napi.stats.irqs, 1);
	assert_int_equal(fx->irq.disables, 1);

	/* Another schedule while scheduled: no-op, nothing masked twice. */
	assert_false(vnic_napi_schedule(&fx->napi));
	assert_int_equal(fx->napi.stats.irqs, 1);
	assert_int_equal(fx->irq.disables, 1);

	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 10);
	assert_false(sched(&fx->napi));
	assert_true(fx->irq.enabled);
	assert_int_equal(fx->napi.stats.polls, 1);
	assert_int_equal(fx->napi.stats.completes, 1);
	assert_int_equal(fx->napi.stats.work, 10);
	assert_int_equal(fx->napi.stats.rearm_races, 0);
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 0);

	/* Armed again: the next item schedules it again. */
	fake_raise(&fx->irq, 1);
	assert_int_equal(fx->napi.stats.irqs, 2);
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 11);
}

/* 200 items, weight 64: three full polls with the irq masked, then completion. */
static void test_budget_keeps_scheduled(void **state)
{
	struct fixture *fx = *state;
	int i;

	fake_raise(&fx->irq, 200);
	for (i = 0; i < 3; i++) {
		assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
		assert_true(sched(&fx->napi));
		assert_false(fx->irq.enabled);
		assert_int_equal(fx->irq.polled, 64 * (i + 1));
	}
	/* No new interrupt was needed for the re-polls. */
	assert_int_equal(fx->napi.stats.irqs, 1);
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 200);
	assert_false(sched(&fx->napi));
	assert_true(fx->irq.enabled);
	assert_int_equal(fx->napi.stats.polls, 4);
	assert_int_equal(fx->napi.stats.full_polls, 3);
	assert_int_equal(fx->napi.stats.completes, 1);
	assert_int_equal(fx->irq.enables, 1);
	assert_int_equal(fx->irq.disables, 1);
}

/*
 * Work lands after the poll's last look but before the re-arm: no interrupt
 * is raised for it (the source was masked). complete_done must see it
 * through pending(), take SCHED back, mask, and reschedule.
 */
static void test_rearm_race_reschedules(void **state)
{
	struct fixture *fx = *state;

	fake_raise(&fx->irq, 5);
	fx->irq.arrive_on_enable = 3;
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 5);
	assert_int_equal(fx->napi.stats.rearm_races, 1);
	assert_true(sched(&fx->napi));
	assert_false(fx->irq.enabled);
	assert_int_equal(fx->napi.stats.irqs, 1);

	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 8);
	assert_false(sched(&fx->napi));
	assert_true(fx->irq.enabled);
	assert_int_equal(fx->napi.stats.rearm_races, 1);
	assert_int_equal(fx->napi.stats.completes, 2);
}

/*
 * An interrupt delivered the moment the source is re-armed competes with
 * the re-arm check for the same work: exactly one of them takes SCHED, so
 * the work is polled once and not scheduled twice.
 */
static void test_rearm_vs_irq_one_winner(void **state)
{
	struct fixture *fx = *state;

	fake_raise(&fx->irq, 5);
	fx->irq.arrive_on_enable = 2;
	fx->irq.irq_on_enable = true;
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_true(sched(&fx->napi));
	assert_int_equal(fx->napi.stats.irqs, 2);
	assert_int_equal(fx->napi.stats.rearm_races, 0);
	assert_int_equal(fx->irq.disables, 2);

	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 7);
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 0);
	assert_true(fx->irq.enabled);
}

/* A poll function that completes itself (Linux style) is not completed twice. */
static void test_complete_in_poll(void **state)
{
	struct fixture *fx = *state;

	fx->irq.complete_in_poll = true;
	fake_raise(&fx->irq, 70);
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->napi.stats.completes, 0);
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->napi.stats.completes, 1);
	assert_int_equal(fx->irq.enables, 1);
	assert_false(sched(&fx->napi));

	/* With the re-arm race inside the poll's own completion. */
	fake_raise(&fx->irq, 4);
	fx->irq.arrive_on_enable = 1;
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->napi.stats.completes, 2);
	assert_int_equal(fx->napi.stats.rearm_races, 1);
	assert_true(sched(&fx->napi));
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 75);
	assert_false(sched(&fx->napi));
	assert_true(fx->irq.enabled);
}

/* A timer run takes SCHED and masks the interrupt like an interrupt would. */
static void test_timer_poll_takes_sched(void **state)
{
	struct fixture *fx = *state;

	fx->irq.work = 3;			    /* arrived without an interrupt */
	vnic_poller_set_timer(&fx->napi.poller, 1); /* long past */
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 1);
	assert_int_equal(fx->irq.polled, 3);
	assert_int_equal(fx->irq.disables, 1);
	assert_true(fx->irq.enabled);
	assert_false(sched(&fx->napi));
	assert_int_equal(fx->napi.poller.deadline_ns, 0); /* one shot */
	assert_int_equal(vnic_cpu_run_once(&fx->cpu), 0);
}

static int count_poll(struct vnic_napi *napi, int budget)
{
	(void)budget;
	(*(int *)napi->irq_ctx)++;
	return 0;
}

/* Without an interrupt source (irq NULL) schedule and complete still work. */
static void test_no_irq(void **state)
{
	struct vnic_cpu cpu;
	struct vnic_napi napi;
	int polls = 0;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "noirq", 0), 0);
	assert_int_equal(vnic_napi_init(&napi, &cpu, "q", count_poll, NULL, &polls, 8), 0);
	assert_int_equal(napi.weight, 8);
	assert_true(vnic_napi_schedule(&napi));
	assert_false(vnic_napi_schedule(&napi));
	assert_int_equal(vnic_cpu_run_once(&cpu), 1);
	assert_int_equal(polls, 1);
	assert_false(sched(&napi));
	vnic_cpu_fini(&cpu);
}

static void test_init_errors(void **state)
{
	struct vnic_cpu cpu;
	struct vnic_napi napi[VNIC_CPU_MAX_POLLERS + 1];
	const struct vnic_irq_ops partial = {.enable = fake_enable};
	int i;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "full", 0), 0);
	assert_int_equal(vnic_napi_init(&napi[0], &cpu, "x", NULL, NULL, NULL, 0), -EINVAL);
	assert_int_equal(vnic_napi_init(&napi[0], &cpu, "x", count_poll, &partial, NULL, 0),
			 -EINVAL);
	for (i = 0; i < VNIC_CPU_MAX_POLLERS; i++)
		assert_int_equal(vnic_napi_init(&napi[i], &cpu, "q", count_poll, NULL, NULL, 0), 0);
	assert_int_equal(vnic_napi_init(&napi[i], &cpu, "q", count_poll, NULL, NULL, 0), -ENOSPC);
	assert_int_equal(napi[63].poller.bit, 1ull << 63);
	vnic_cpu_fini(&cpu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_irq_masked_while_scheduled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_keeps_scheduled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rearm_race_reschedules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rearm_vs_irq_one_winner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_complete_in_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_poll_takes_sched, setup, teardown),
		cmocka_unit_test(test_no_irq),
		cmocka_unit_test(test_init_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
