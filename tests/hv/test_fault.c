// SPDX-License-Identifier: MIT
/*
 * Faults on demand (docs/FAULTS.md), the hv's part: the spec grammar, good
 * and bad, row by row; the printer against the parser; the generator's
 * reproducibility; and each injection at the hypervisor: hcall returns on
 * the driver's sends only, the indirect limit below the announced one, CRQ
 * loss and duplication, every one counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hv/hv.h"

/* --- the grammar ------------------------------------------------------------ */

static const struct good_case {
	const char *spec;
	const char *canon; /* what vnic_fault_format prints */
} good[] = {
	/* 1 */ {"", "none"},
	/* 2 */ {"none", "none"},
	/* 3 */ {"reset-every=1000ms", "reset-every=1s"},
	/* 4 */ {"reset-every=1s,down-for=2ms", "reset-every=1s,down-for=2ms"},
	/* 5 */
	{"hcall-busy=0.01,hcall-dropped=0.001,hcall-closed=0",
	 "hcall-busy=0.01,hcall-dropped=0.001"},
	/* 6 */ {"ind-param-above=16", "ind-param-above=16"},
	/* 7 */ {"crq-loss=0.01,crq-dup=0.01,seed=7", "seed=7,crq-loss=0.01,crq-dup=0.01"},
	/* 8 */ {"err-ind-every=5s,err-ind-fatal=1", "err-ind-every=5s,err-ind-fatal=1"},
	/* 9 */
	{"link-flap-every=2s,link-down-for=250us", "link-flap-every=2s,link-down-for=250us"},
	/* 10 */ {"failover-every=1.5s", "failover-every=1500ms"},
	/* 11 */ {"reset-every=300ms,reset-every=400ms", "reset-every=400ms"},
	/* 12 */
	{"seed=0x10,reset-every=10ns,down-for=1ns", "seed=16,reset-every=10ns,down-for=1ns"},
	/* 13 */ {"hcall-busy=1", "hcall-busy=1"},
	/* 14 */ {"ind-param-above=127", "ind-param-above=127"},
};

static const struct bad_case {
	const char *spec;
	const char *why; /* a piece of the one-line message */
} bad[] = {
	/* 1 */ {"reset-every=1000", "needs a unit"},
	/* 2 */ {"reset-every=10min", "not a unit"},
	/* 3 */ {"reset-every", "not NAME=VALUE"},
	/* 4 */ {"reset-every=", "no value"},
	/* 5 */ {"reset-evry=1s", "'reset-evry' is not a fault"},
	/* 6 */ {"hcall-busy=1.5", "not between 0 and 1"},
	/* 7 */ {"hcall-busy=-0.1", "not between 0 and 1"},
	/* 8 */ {"hcall-busy=lots", "not a probability"},
	/* 9 */ {"hcall-busy=0.6,hcall-closed=0.6", "add up to more than 1"},
	/* 10 */ {"crq-loss=0.5,crq-dup=0.6", "add up to more than 1"},
	/* 11 */ {"ind-param-above=0", "not in 1..127"},
	/* 12 */ {"ind-param-above=128", "not in 1..127"},
	/* 13 */ {"ind-param-above=-3", "not a number"},
	/* 14 */ {"seed=12x", "not a number"},
	/* 15 */ {"reset-every=2h", "not a unit"},
	/* 16 */ {"reset-every=7200s", "longer than an hour"},
	/* 17 */ {"reset-every=1ms,down-for=1ms", "down-for must be shorter"},
	/* 18 */ {"link-flap-every=5ms", "link-down-for must be shorter"},
	/* 19 */ {"reset-every=-1s", "not a duration"},
	/* 20 */ {"crq-loss=nan", "not a probability"},
};

static void test_parse_good(void **state)
{
	struct vnic_fault_cfg c, back;
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const struct good_case *g = &good[i];

		if (vnic_fault_parse(g->spec, &c))
			fail_msg("case %zu '%s': %s", i + 1, g->spec, vnic_fault_strerror());
		assert_int_equal(vnic_fault_format(&c, buf, sizeof(buf)), 0);
		if (strcmp(buf, g->canon))
			fail_msg("case %zu '%s' prints '%s', not '%s'", i + 1, g->spec, buf,
				 g->canon);
		/* what it prints parses back to the same configuration */
		assert_int_equal(vnic_fault_parse(buf, &back), 0);
		assert_memory_equal(&c, &back, sizeof(c));
	}
	assert_int_equal(vnic_fault_parse("reset-every=1000ms", &c), 0);
	assert_int_equal(c.reset_every_ns, 1000000000ull);
	assert_int_equal(c.down_ns, VNIC_FAULT_DEFAULT_DOWN_NS);
	assert_int_equal(c.seed, 1);
	assert_true(vnic_fault_dev_any(&c));
	assert_false(vnic_fault_hv_any(&c));
	assert_int_equal(vnic_fault_parse("crq-dup=0.25", &c), 0);
	assert_true(c.crq_dup == 0.25);
	assert_true(vnic_fault_hv_any(&c));
	assert_false(vnic_fault_dev_any(&c));
	/* too small a buffer */
	assert_int_equal(vnic_fault_format(&c, buf, 4), -ENOSPC);
}

static void test_parse_bad(void **state)
{
	struct vnic_fault_cfg c, before;

	(void)state;
	vnic_fault_cfg_default(&c);
	c.reset_every_ns = 42;
	before = c;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad_case *b = &bad[i];
		const char *why;

		if (vnic_fault_parse(b->spec, &c) != -EINVAL)
			fail_msg("case %zu '%s' was accepted", i + 1, b->spec);
		why = vnic_fault_strerror();
		if (!strstr(why, b->why))
			fail_msg("case %zu '%s': '%s' does not say '%s'", i + 1, b->spec, why,
				 b->why);
		/* one line */
		assert_null(strchr(why, '\n'));
		/* and nothing written */
		assert_memory_equal(&c, &before, sizeof(c));
	}
	assert_int_equal(vnic_fault_parse(NULL, &c), -EINVAL);
}

static void test_rng(void **state)
{
	struct vnic_fault_rng a, b, other;
	unsigned int hits = 0;

	(void)state;
	vnic_fault_rng_init(&a, 5, 1);
	vnic_fault_rng_init(&b, 5, 1);
	vnic_fault_rng_init(&other, 5, 2);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = vnic_fault_rng_next(&a);

		assert_true(x == vnic_fault_rng_next(&b));
		if (x == vnic_fault_rng_next(&other))
			fail_msg("two streams of one seed agree at draw %d", i);
	}
	for (int i = 0; i < 100000; i++)
		hits += vnic_fault_roll(&a, 0.1);
	/* 10000 expected; 5 standard deviations (95) either side */
	assert_true(hits > 9500 && hits < 10500);
	assert_false(vnic_fault_roll(&a, 0));
	assert_false(vnic_fault_roll(&a, -1));
	assert_true(vnic_fault_roll(&a, 1));
}

/* --- injection in the hv ------------------------------------------------------ */

static const struct vnic_hv_stats *hv_stat(const struct vnic_hv *hv)
{
	static struct vnic_hv_stats copy;

	vnic_hv_stats(hv, &copy);
	return &copy;
}

static union vnic_subcrq_entry entry(uint64_t seq)
{
	union vnic_subcrq_entry e;

	memset(&e, 0, sizeof(e));
	e.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&e.rx_add.correlator, seq);
	return e;
}

static void drain(struct vnic_subcrq *q)
{
	while (vnic_subcrq_peek(q))
		vnic_subcrq_consume(q);
}

/* The rc of each of n direct sends of the driver (CLIENT) with faults as spec says. */
static void hcall_rcs(const char *spec, long *rcs, unsigned int n, struct vnic_hv_stats *st)
{
	union vnic_subcrq_entry e = entry(1);
	struct vnic_fault_cfg c;
	struct vnic_subcrq *q;
	struct vnic_hv *hv;

	assert_int_equal(vnic_hv_create(&hv, 128, NULL), 0);
	assert_int_equal(vnic_fault_parse(spec, &c), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 64, &q), 0);
	assert_int_equal(vnic_hv_set_faults(hv, &c, 3), 0);
	vnic_hv_faults_enable(hv, true);
	for (unsigned int i = 0; i < n; i++) {
		rcs[i] = vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e);
		drain(q);
	}
	*st = *hv_stat(hv);
	vnic_hv_destroy(hv);
}

static void test_hcall_faults(void **state)
{
	enum { N = 20000 };
	static long a[N], b[N];
	struct vnic_hv_stats sa, sb;
	unsigned int busy = 0, dropped = 0, closed = 0, ok = 0;

	(void)state;
	hcall_rcs("seed=9,hcall-busy=0.05,hcall-dropped=0.03,hcall-closed=0.02", a, N, &sa);
	for (unsigned int i = 0; i < N; i++) {
		switch (a[i]) {
		case VNIC_H_BUSY:
			busy++;
			break;
		case VNIC_H_DROPPED:
			dropped++;
			break;
		case VNIC_H_CLOSED:
			closed++;
			break;
		case VNIC_H_SUCCESS:
			ok++;
			break;
		default:
			fail_msg("send %u: rc %ld", i, a[i]);
		}
	}
	/* each within 5 standard deviations of its expectation */
	assert_true(busy > 850 && busy < 1150);
	assert_true(dropped > 480 && dropped < 720);
	assert_true(closed > 300 && closed < 500);
	/* every one counted, twice: as the fault and as the rc */
	assert_int_equal(sa.fault_busy, busy);
	assert_int_equal(sa.fault_dropped, dropped);
	assert_int_equal(sa.fault_closed, closed);
	assert_int_equal(sa.rc_busy, busy);
	assert_int_equal(sa.rc_dropped, dropped);
	assert_int_equal(sa.rc_closed, closed);
	assert_int_equal(sa.send_subcrq, ok);
	/* the same seed, the same faults, send by send */
	hcall_rcs("seed=9,hcall-busy=0.05,hcall-dropped=0.03,hcall-closed=0.02", b, N, &sb);
	assert_memory_equal(a, b, sizeof(a));
	/* another seed, other faults */
	hcall_rcs("seed=10,hcall-busy=0.05,hcall-dropped=0.03,hcall-closed=0.02", b, N, &sb);
	assert_memory_not_equal(a, b, sizeof(a));
}

/* The device's sends, and the driver's with injection off, are never touched. */
static void test_hcall_faults_scope(void **state)
{
	union vnic_subcrq_entry e = entry(1);
	struct vnic_fault_cfg c;
	struct vnic_subcrq *drv_ring, *dev_ring;
	struct vnic_hv *hv;

	(void)state;
	assert_int_equal(vnic_hv_create(&hv, 128, NULL), 0);
	assert_int_equal(vnic_fault_parse("hcall-busy=1", &c), 0);
	assert_int_equal(vnic_hv_set_faults(hv, &c, 0), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &dev_ring), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_CLIENT, 8, &drv_ring), 0);
	/* configured, not enabled */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, dev_ring->handle, &e),
			 VNIC_H_SUCCESS);
	vnic_hv_faults_enable(hv, true);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, dev_ring->handle, &e),
			 VNIC_H_BUSY);
	/* a completion from the device goes through */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, drv_ring->handle, &e),
			 VNIC_H_SUCCESS);
	/* a real error still wins: a bad handle is PARAMETER, not an injected BUSY */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, 12345, &e), VNIC_H_PARAMETER);
	vnic_hv_faults_enable(hv, false);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, dev_ring->handle, &e),
			 VNIC_H_SUCCESS);
	assert_int_equal(hv_stat(hv)->fault_busy, 1);
	/* a configuration without hv faults cannot be enabled into one */
	vnic_fault_cfg_default(&c);
	c.reset_every_ns = 1000000;
	assert_int_equal(vnic_hv_set_faults(hv, &c, 0), 0);
	vnic_hv_faults_enable(hv, true);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, dev_ring->handle, &e),
			 VNIC_H_SUCCESS);
	vnic_hv_destroy(hv);
}

/*
 * ind-param-above: the hv announces 128 (vnic_hv_max_ind_descs) yet refuses
 * more than 16 entries with PARAMETER, as POWER8 does under a driver that
 * believes the larger number (docs/PROTOCOL.md section 5).
 */
static void test_ind_param_above(void **state)
{
	union vnic_subcrq_entry *arr;
	struct vnic_fault_cfg c;
	struct vnic_subcrq *q;
	struct vnic_hv *hv;
	uint64_t ioba;

	(void)state;
	arr = calloc(VNIC_MAX_IND_DESCS, sizeof(*arr));
	assert_non_null(arr);
	for (unsigned int i = 0; i < VNIC_MAX_IND_DESCS; i++)
		arr[i] = entry(i);
	assert_int_equal(vnic_hv_create(&hv, 128, NULL), 0);
	assert_int_equal(vnic_fault_parse("ind-param-above=16", &c), 0);
	assert_int_equal(vnic_hv_set_faults(hv, &c, 0), 0);
	vnic_hv_faults_enable(hv, true);
	assert_int_equal(vnic_hv_max_ind_descs(hv), 128);
	assert_int_equal(vnic_hv_dma_map(hv, arr, VNIC_MAX_IND_DESCS * sizeof(*arr), &ioba), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 256, &q), 0);
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 17),
			 VNIC_H_PARAMETER);
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 128),
			 VNIC_H_PARAMETER);
	assert_null(vnic_subcrq_peek(q)); /* nothing written */
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 16),
			 VNIC_H_SUCCESS);
	assert_int_equal(hv_stat(hv)->fault_ind_param, 2);
	assert_int_equal(hv_stat(hv)->rc_parameter, 2);
	assert_int_equal(hv_stat(hv)->indirect_entries, 16);
	assert_int_equal(hv_stat(hv)->indirect_max, 16);
	vnic_hv_destroy(hv);
	free(arr);
}

static struct vnic_crq msg(uint8_t n)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_QUERY_CAPABILITY;
	vnic_be64_put(&m.cap.number, n);
	return m;
}

/* Loss and duplication, both directions: what arrives is in order, each at most twice. */
static void test_crq_loss_dup(void **state)
{
	enum { N = 200 };
	unsigned int got[2][N] = {{0}}, lost_seen = 0, dup_seen = 0;
	struct vnic_fault_cfg c;
	struct vnic_hv *hv;

	(void)state;
	assert_int_equal(vnic_hv_create(&hv, 16, NULL), 0);
	assert_int_equal(vnic_fault_parse("seed=4,crq-loss=0.1,crq-dup=0.1", &c), 0);
	assert_int_equal(vnic_hv_set_faults(hv, &c, 0), 0);
	vnic_hv_faults_enable(hv, true);
	for (unsigned int side = 0; side < 2; side++) {
		unsigned int last = 0;

		for (unsigned int i = 0; i < N; i++) {
			struct vnic_crq m = msg((uint8_t)i), r;

			/* a lost message looks delivered to its sender */
			assert_int_equal(vnic_hv_send_crq(hv, (enum vnic_hv_side)side, &m),
					 VNIC_H_SUCCESS);
			while (vnic_hv_crq_recv(hv, (enum vnic_hv_side) !side, &r)) {
				unsigned int n = (unsigned int)vnic_be64_get(&r.cap.number);

				assert_true(n < N && n >= last);
				last = n;
				got[side][n]++;
			}
		}
		for (unsigned int i = 0; i < N; i++) {
			assert_true(got[side][i] <= 2);
			lost_seen += got[side][i] == 0;
			dup_seen += got[side][i] == 2;
		}
	}
	assert_true(lost_seen > 10 && dup_seen > 10);
	assert_int_equal(hv_stat(hv)->fault_crq_lost, lost_seen);
	assert_int_equal(hv_stat(hv)->fault_crq_dup, dup_seen);
	vnic_hv_destroy(hv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_rng),
		cmocka_unit_test(test_hcall_faults),
		cmocka_unit_test(test_hcall_faults_scope),
		cmocka_unit_test(test_ind_param_above),
		cmocka_unit_test(test_crq_loss_dup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
