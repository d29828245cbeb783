// SPDX-License-Identifier: MIT
/*
 * The device's interrupt coalescing (src/device/coal.c) against the hostile
 * test driver (harness.c), on one manually stepped cpu: step() runs what is
 * scheduled and due without waiting for any timer, h_run() waits for the
 * timers too. What is checked is when the completion interrupt is raised
 * (the device's rxN_irqs and txN_irqs, and the hv's own count of the
 * driver ring's interrupts), against when the entries appear in the ring
 * (at once, always):
 *   - 0/0 raises one per completion entry, as without coalescing;
 *   - rx-frames N raises at the Nth completion, not before;
 *   - rx-usecs U raises once U has passed since the first completion, not
 *     before, and tx-usecs the same for tx completions;
 *   - rx-frames alone never strands a completion: the backstop raises it;
 *   - a live change raises what waits under the old settings at once;
 *   - adaptive-rx leaves profile 0 once traffic flows.
 * "Not yet" is only checked against deadlines far off (60 ms, 100 ms), and
 * "not before U" as a lower bound on the time until the raise, so that a
 * slow machine (a sanitizer, other load) cannot fail a test that is right.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "pktgen.h"

enum { MAXC = 256, NBUF = 240, POST = 16 }; /* POST: buffers per rx add hcall */

static struct h_env env;
static struct vnic_rx_comp comps[MAXC];
static uint8_t frame[256];
static uint32_t frame_len;

static int setup_coal(void **state, const struct vnic_dev_coalesce *c)
{
	struct vnic_dev_config cfg;
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p;

	vnic_dev_config_default(&cfg);
	cfg.coal = *c;
	h_create(&env, &cfg, NULL);
	h_bringup(&env, 1, 1);
	for (unsigned int i = 0; i < NBUF; i += POST)
		assert_int_equal(h_rx_post(&env, 0, i, POST), VNIC_H_SUCCESS);
	p = h_pkt(&env);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	assert_int_equal(vnic_pktgen_build(p, &f, 0, 100), 0);
	frame_len = p->len;
	memcpy(frame, p->data, p->len);
	vnic_pkt_free(p);
	*state = &env;
	return 0;
}

static int setup_off(void **state)
{
	const struct vnic_dev_coalesce c = {0};

	return setup_coal(state, &c);
}

/* a timer far off (60 ms): the frames decide, however slow the machine */
static int setup_rx_frames(void **state)
{
	const struct vnic_dev_coalesce c = {.rx_frames = 4, .rx_usecs = 60000};

	return setup_coal(state, &c);
}

static int setup_rx_frames_only(void **state)
{
	const struct vnic_dev_coalesce c = {.rx_frames = 4};

	return setup_coal(state, &c);
}

static int setup_rx_usecs(void **state)
{
	const struct vnic_dev_coalesce c = {.rx_usecs = 2000, .rx_frames = 64};

	return setup_coal(state, &c);
}

static int setup_tx_usecs(void **state)
{
	const struct vnic_dev_coalesce c = {.tx_usecs = 60000};

	return setup_coal(state, &c);
}

static int setup_adaptive(void **state)
{
	const struct vnic_dev_coalesce c = {.adaptive_rx = true};

	return setup_coal(state, &c);
}

static int teardown(void **state)
{
	h_destroy(*state);
	return 0;
}

/* Everything scheduled or due, without waiting for a timer. */
static void step(struct h_env *e)
{
	while (vnic_cpu_run_once(&e->v.cpu[0]))
		;
}

/* Interrupts the hv raised on the driver's rx completion ring (none is armed: all masked). */
static uint64_t ring_irqs(const struct vnic_subcrq *q)
{
	return __atomic_load_n(&q->irqs, __ATOMIC_RELAXED) +
	       __atomic_load_n(&q->irqs_masked, __ATOMIC_RELAXED);
}

struct irq_wait {
	struct h_env *e;
	const char *name;
	uint64_t want;
};

static bool irqs_reached(void *ctx)
{
	const struct irq_wait *w = ctx;

	return h_ctr(w->e, w->name) >= w->want;
}

/*
 * Runs the device, timers included, until counter name reaches want; the
 * time from t0 until then. A lower bound on when the interrupt was raised:
 * had it come earlier, the run would have stopped earlier.
 */
static uint64_t run_until_irqs(struct h_env *e, const char *name, uint64_t want, uint64_t t0)
{
	struct vnic_cpu *cpu = &e->v.cpu[0];
	struct irq_wait w = {.e = e, .name = name, .want = want};

	assert_int_equal(vnic_cpus_run_until(&cpu, 1, irqs_reached, &w, 2000000000ull), 0);
	return vnic_now_ns() - t0;
}

static void inject(struct h_env *e, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		h_wire_inject(e, frame, frame_len);
}

/* 1: 0/0, today's behaviour: an interrupt with every completion entry. */
static void test_coal_off(void **state)
{
	struct h_env *e = *state;

	inject(e, 3);
	step(e);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 3);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 3);
	assert_int_equal(h_ctr(e, "rx0_irqs_coalesced"), 0);
	assert_int_equal(ring_irqs(e->rxcomp[0]), 3);
	assert_int_equal(h_ctr(e, "rx0_dim_moves"), 0);
}

/* 2: rx-frames 4 (rx-usecs 60 ms): three completions published without one, the fourth raises it.
 */
static void test_coal_rx_frames(void **state)
{
	struct h_env *e = *state;

	for (unsigned int i = 1; i <= 3; i++) {
		inject(e, 1);
		step(e);
		/* the entry is there at once: only the interrupt waits */
		assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
		assert_int_equal(h_ctr(e, "rx0_irqs"), 0);
		assert_int_equal(ring_irqs(e->rxcomp[0]), 0);
	}
	inject(e, 1);
	step(e);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 1);
	assert_int_equal(h_ctr(e, "rx0_irqs_coalesced"), 3);
	assert_int_equal(ring_irqs(e->rxcomp[0]), 1);
	/* nine more in one poll: two interrupts at the 4th and 8th, one waiting */
	inject(e, 9);
	step(e);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 9);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 3);
	assert_int_equal(h_ctr(e, "rx0_irqs_coalesced"), 9);
	assert_int_equal(ring_irqs(e->rxcomp[0]), 3);
}

/* 3: rx-frames alone never strands the last completion: the backstop raises it. */
static void test_coal_rx_frames_backstop(void **state)
{
	struct h_env *e = *state;
	uint64_t t0 = vnic_now_ns();

	inject(e, 1);
	assert_true(run_until_irqs(e, "rx0_irqs", 1, t0) >= VNIC_DEV_COAL_BACKSTOP_US * 1000ull);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 1);
	assert_int_equal(ring_irqs(e->rxcomp[0]), 1);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
}

/* 4: rx-usecs 2000 (frames 64, never reached): not before 2 ms after the first completion. */
static void test_coal_rx_usecs(void **state)
{
	struct h_env *e = *state;
	uint64_t t0 = vnic_now_ns();

	inject(e, 2);
	assert_true(run_until_irqs(e, "rx0_irqs", 1, t0) >= 2000000ull);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 2);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 1);
	assert_int_equal(h_ctr(e, "rx0_irqs_coalesced"), 1);
	/* and again: the timer starts with the next first completion */
	t0 = vnic_now_ns();
	inject(e, 1);
	assert_true(run_until_irqs(e, "rx0_irqs", 2, t0) >= 2000000ull);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 2);
	assert_int_equal(ring_irqs(e->rxcomp[0]), 2);
}

/* 5: tx-usecs 60000: the tx completion entry at once, its interrupt not before 60 ms. */
static void test_coal_tx_usecs(void **state)
{
	struct h_env *e = *state;
	union vnic_subcrq_entry d;
	uint32_t corr[8];
	uint16_t rc[8];
	uint64_t t0 = vnic_now_ns();

	memcpy(e->tx_ltb, frame, frame_len);
	h_tx_desc(e, &d, 7, 0, frame_len, 0, 0);
	assert_int_equal(h_tx_send(e, 0, &d, 1), VNIC_H_SUCCESS);
	step(e);
	assert_int_equal(h_tx_comps(e, 0, corr, rc, 8), 1);
	assert_int_equal(corr[0], 7);
	assert_int_equal(h_ctr(e, "tx0_irqs"), 0);
	assert_int_equal(ring_irqs(e->txcomp[0]), 0);
	assert_true(run_until_irqs(e, "tx0_irqs", 1, t0) >= 60000000ull);
	assert_int_equal(h_ctr(e, "tx0_irqs"), 1);
	assert_int_equal(ring_irqs(e->txcomp[0]), 1);
	/* rx, untouched by tx's settings: one per completion */
	inject(e, 2);
	step(e);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 2);
}

/* 6: a live change: what waits under rx-usecs 100 ms is raised when it is taken, not later. */
static void test_coal_live(void **state)
{
	struct h_env *e = *state;
	struct vnic_dev_coalesce c = {.rx_usecs = VNIC_DEV_COAL_MAX_USECS}, got;
	struct vnic_dev_coalesce bad = {.rx_frames = VNIC_DEV_COAL_MAX_FRAMES + 1};

	assert_int_equal(vnic_dev_set_coalesce(e->dev, &bad), -EINVAL);
	assert_int_equal(vnic_dev_set_coalesce(e->dev, &c), 0);
	step(e);
	vnic_dev_coalesce_get(e->dev, &got);
	assert_int_equal(got.rx_usecs, VNIC_DEV_COAL_MAX_USECS);
	inject(e, 2);
	step(e);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 0);
	c.rx_usecs = 0;
	assert_int_equal(vnic_dev_set_coalesce(e->dev, &c), 0);
	/* no timer waited for: the settings change raised it */
	step(e);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 1);
	assert_int_equal(h_ctr(e, "rx0_irqs_coalesced"), 1);
	inject(e, 1);
	step(e);
	assert_int_equal(h_ctr(e, "rx0_irqs"), 2);
	assert_int_equal(ring_irqs(e->rxcomp[0]), 2);
}

/*
 * 7: adaptive-rx: at profile 0 every completion interrupts; the first
 * measurement (VNIC_DIM_SAMPLE_EVENTS interrupts) has bytes where there were
 * none, so the walk steps up to profile 1.
 */
static void test_coal_adaptive(void **state)
{
	struct h_env *e = *state;
	unsigned int sent = 0;

	assert_int_equal(h_ctr(e, "rx0_dim_profile"), 0);
	/* one to start the measurement, then a measurement's worth */
	while (sent < VNIC_DIM_SAMPLE_EVENTS + 1) {
		inject(e, 1);
		step(e);
		assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 1);
		sent++;
	}
	assert_int_equal(h_ctr(e, "rx0_irqs"), VNIC_DIM_SAMPLE_EVENTS + 1);
	assert_int_equal(h_ctr(e, "rx0_dim_moves"), 1);
	assert_int_equal(h_ctr(e, "rx0_dim_profile"), 1);
	/*
	 * profile 1 (8 us, 16 frames): sixteen in one poll (no timer runs
	 * inside it) raise one interrupt, at the sixteenth
	 */
	inject(e, 16);
	step(e);
	assert_int_equal(h_rx_comps(e, 0, comps, MAXC), 16);
	assert_int_equal(h_ctr(e, "rx0_irqs"), VNIC_DIM_SAMPLE_EVENTS + 2);
	assert_int_equal(h_ctr(e, "rx0_irqs_coalesced"), 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_coal_off, setup_off, teardown),
		cmocka_unit_test_setup_teardown(test_coal_rx_frames, setup_rx_frames, teardown),
		cmocka_unit_test_setup_teardown(test_coal_rx_frames_backstop, setup_rx_frames_only,
						teardown),
		cmocka_unit_test_setup_teardown(test_coal_rx_usecs, setup_rx_usecs, teardown),
		cmocka_unit_test_setup_teardown(test_coal_tx_usecs, setup_tx_usecs, teardown),
		cmocka_unit_test_setup_teardown(test_coal_live, setup_off, teardown),
		cmocka_unit_test_setup_teardown(test_coal_adaptive, setup_adaptive, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
