// SPDX-License-Identifier: MIT
/*
 * The hypervisor, single-threaded: DMA window bounds, CRQ both ways, sub-CRQ
 * direct and indirect sends, every refusal (and that a refusal writes
 * nothing), valid-bit ownership and interrupt arming.
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

#define GIB (1ull << 30)

/* A fresh copy of the counters, as any caller gets it. */
static const struct vnic_hv_stats *hv_stat(const struct vnic_hv *hv)
{
	static struct vnic_hv_stats copy;

	vnic_hv_stats(hv, &copy);
	return &copy;
}

static struct vnic_hv *hv_new(uint32_t max_ind)
{
	struct vnic_hv *hv = NULL;

	assert_int_equal(vnic_hv_create(&hv, max_ind, NULL), 0);
	assert_non_null(hv);
	return hv;
}

static uint64_t bad_translations(struct vnic_hv *hv)
{
	return hv_stat(hv)->dma_bad_translation;
}

/* An rx buffer add whose correlator carries seq: easy to recognise in a ring. */
static union vnic_subcrq_entry entry_seq(uint64_t seq)
{
	union vnic_subcrq_entry e;

	memset(&e, 0, sizeof(e));
	e.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&e.rx_add.correlator, seq);
	vnic_be32_put(&e.rx_add.ioba, 0x1000);
	e.rx_add.map_id = 1;
	vnic_be24_put(&e.rx_add.len, 2048);
	return e;
}

static uint64_t entry_seq_of(const union vnic_subcrq_entry *e)
{
	return vnic_be64_get(&e->rx_add.correlator);
}

static struct vnic_crq crq_msg(uint8_t cmd, uint64_t number)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = cmd;
	vnic_be16_put(&m.cap.capability, VNIC_CAP_MAX_MTU);
	vnic_be64_put(&m.cap.number, number);
	return m;
}

static bool ring_all_zero(const struct vnic_subcrq *q)
{
	static const union vnic_subcrq_entry zero;

	for (uint32_t i = 0; i < q->size; i++)
		if (memcmp(&q->ring[i], &zero, sizeof(zero)))
			return false;
	return true;
}

struct irq_counter {
	unsigned int calls;
	struct vnic_subcrq *disarm;	/* like vnic_napi_schedule: mask on delivery */
};

static void count_irq(void *ctx)
{
	struct irq_counter *c = ctx;

	c->calls++;
	if (c->disarm)
		vnic_hv_subcrq_irq_disable(c->disarm);
}

/* --- creation -------------------------------------------------------------- */

static void test_create_rejects_bad_args(void **state)
{
	struct vnic_hv *hv = NULL;
	struct vnic_hv_cost cost = { .hcall_direct_ns = 1, .irq_ns = 2, .dma_ns_per_kib = 3 };

	(void)state;
	assert_int_equal(vnic_hv_create(NULL, 16, NULL), -EINVAL);
	assert_int_equal(vnic_hv_create(&hv, 0, NULL), -EINVAL);
	assert_int_equal(vnic_hv_create(&hv, 15, NULL), -EINVAL);
	assert_int_equal(vnic_hv_create(&hv, 129, NULL), -EINVAL);
	assert_null(hv);

	assert_int_equal(vnic_hv_create(&hv, 16, NULL), 0);
	assert_int_equal(vnic_hv_max_ind_descs(hv), 16);
	assert_true(vnic_hv_cost(hv)->hcall_direct_ns == 0 && vnic_hv_cost(hv)->irq_ns == 0);
	vnic_hv_destroy(hv);

	assert_int_equal(vnic_hv_create(&hv, 128, &cost), 0);
	assert_int_equal(vnic_hv_max_ind_descs(hv), 128);
	assert_true(vnic_hv_cost(hv)->hcall_direct_ns == 1);
	assert_true(vnic_hv_cost(hv)->irq_ns == 2);
	assert_true(vnic_hv_cost(hv)->dma_ns_per_kib == 3);
	vnic_hv_dma_charge(hv, 4096); /* spins a few ns: only must not fail */
	vnic_hv_destroy(hv);
	vnic_hv_destroy(NULL);
}

/* --- DMA window ------------------------------------------------------------------ */

static void test_dma_map_hands_out_aligned_disjoint_iobas(void **state)
{
	static uint8_t bufs[3][10000];
	uint64_t ioba[3];
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(vnic_hv_dma_map(hv, bufs[i], sizeof(bufs[i]), &ioba[i]), 0);
		assert_true(ioba[i] >= VNIC_HV_IOBA_BASE);
		assert_true(ioba[i] + sizeof(bufs[i]) <= VNIC_IOBA_LIMIT);
		assert_int_equal(ioba[i] % VNIC_HV_DMA_PAGE, 0);
		if (i)	/* disjoint, with at least the guard page between */
			assert_true(ioba[i] >= ioba[i - 1] + sizeof(bufs[i]) + VNIC_HV_DMA_PAGE);
	}
	/* the same memory may be mapped twice: it gets another ioba */
	{
		uint64_t again;

		assert_int_equal(vnic_hv_dma_map(hv, bufs[0], 16, &again), 0);
		assert_true(again != ioba[0]);
		assert_ptr_equal(vnic_hv_dma_translate(hv, again, 16), bufs[0]);
	}
	for (int i = 0; i < 3; i++) {
		assert_ptr_equal(vnic_hv_dma_translate(hv, ioba[i], sizeof(bufs[i])), bufs[i]);
		assert_ptr_equal(vnic_hv_dma_translate(hv, ioba[i] + 4097, 100), bufs[i] + 4097);
	}
	assert_int_equal(bad_translations(hv), 0);
	vnic_hv_destroy(hv);
}

static void test_dma_map_rejects_bad_args(void **state)
{
	uint8_t buf[64];
	uint64_t ioba = 0;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_dma_map(hv, buf, 0, &ioba), -EINVAL);
	assert_int_equal(vnic_hv_dma_map(hv, NULL, 64, &ioba), -EINVAL);
	assert_int_equal(vnic_hv_dma_map(hv, buf, 64, NULL), -EINVAL);
	assert_int_equal(vnic_hv_dma_map(hv, buf, VNIC_IOBA_LIMIT, &ioba), -EINVAL);
	assert_int_equal(vnic_hv_dma_map(hv, buf, UINT64_MAX, &ioba), -EINVAL);
	assert_true(ioba == 0);
	vnic_hv_destroy(hv);
}

static void test_dma_translate_rejects_every_out_of_range(void **state)
{
	static uint8_t a[8192], b[8192];
	uint64_t ia, ib, bad = 0;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_dma_map(hv, a, 5000, &ia), 0);
	assert_int_equal(vnic_hv_dma_map(hv, b, 8192, &ib), 0);

	/* inside: first byte, last byte, the whole */
	assert_ptr_equal(vnic_hv_dma_translate(hv, ia, 1), a);
	assert_ptr_equal(vnic_hv_dma_translate(hv, ia + 4999, 1), a + 4999);
	assert_ptr_equal(vnic_hv_dma_translate(hv, ia, 5000), a);
	assert_ptr_equal(vnic_hv_dma_translate(hv, ib, 8192), b);

#define REFUSED(io, len)                                        \
	do {                                                     \
		assert_null(vnic_hv_dma_translate(hv, io, len)); \
		bad++;                                           \
	} while (0)
	/* before the first mapping, and ioba 0 */
	REFUSED(ia - 1, 1);
	REFUSED(ia - 1, 2);
	REFUSED(0, 1);
	/* past the end: one byte over, the page padding, the guard page */
	REFUSED(ia, 5001);
	REFUSED(ia + 5000, 1);
	REFUSED(ia + 4999, 2);
	REFUSED(ia + 8191, 1);
	REFUSED(ib + 8192, 1);
	REFUSED(VNIC_IOBA_LIMIT, 1);
	REFUSED(UINT64_MAX, 1);
	/* straddling both mappings: each end is mapped, the span is not one mapping */
	REFUSED(ia + 4000, ib + 100 - (ia + 4000));
	/* zero length */
	REFUSED(ia, 0);
	/* lengths that wrap ioba + len around 2^64 */
	REFUSED(ia + 8, UINT64_MAX);
	REFUSED(ia + 8, UINT64_MAX - ia - 7);
	REFUSED(ib, UINT64_MAX - ib + 1);
#undef REFUSED
	assert_true(bad_translations(hv) == bad);

	/* read and write go through the same check */
	{
		uint8_t tmp[16] = { 1, 2, 3 };

		assert_int_equal(vnic_hv_dma_write(hv, ia + 100, tmp, sizeof(tmp)), 0);
		assert_memory_equal(a + 100, tmp, sizeof(tmp));
		memset(tmp, 0, sizeof(tmp));
		assert_int_equal(vnic_hv_dma_read(hv, ia + 100, tmp, sizeof(tmp)), 0);
		assert_int_equal(tmp[2], 3);
		assert_int_equal(vnic_hv_dma_write(hv, ia + 4990, tmp, sizeof(tmp)), -EFAULT);
		assert_int_equal(vnic_hv_dma_read(hv, ia + 4990, tmp, sizeof(tmp)), -EFAULT);
		assert_int_equal(a[4999], 0); /* nothing written on refusal */
		assert_true(bad_translations(hv) == bad + 2);
	}
	vnic_hv_destroy(hv);
}

static void test_dma_unmap(void **state)
{
	static uint8_t a[4096], b[4096];
	uint64_t ia, ib, ic;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_dma_map(hv, a, sizeof(a), &ia), 0);
	assert_int_equal(vnic_hv_dma_map(hv, b, sizeof(b), &ib), 0);
	assert_int_equal(vnic_hv_dma_unmap(hv, ia + 1), -EINVAL);	/* not a base */
	assert_int_equal(vnic_hv_dma_unmap(hv, 0), -EINVAL);
	assert_int_equal(vnic_hv_dma_unmap(hv, ia), 0);
	assert_int_equal(vnic_hv_dma_unmap(hv, ia), -EINVAL);		/* twice */
	assert_null(vnic_hv_dma_translate(hv, ia, 1));
	assert_ptr_equal(vnic_hv_dma_translate(hv, ib, 1), b);		/* neighbour intact */
	/* while the bump pointer has room, an unmapped ioba is not handed out again */
	assert_int_equal(vnic_hv_dma_map(hv, a, sizeof(a), &ic), 0);
	assert_true(ic != ia && ic != ib);
	assert_ptr_equal(vnic_hv_dma_translate(hv, ic, 1), a);
	vnic_hv_destroy(hv);
}

static void test_dma_table_full(void **state)
{
	static uint8_t buf[64];
	uint64_t *iobas = calloc(VNIC_HV_MAX_DMA_WINDOWS, sizeof(*iobas));
	uint64_t extra;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_non_null(iobas);
	for (unsigned int i = 0; i < VNIC_HV_MAX_DMA_WINDOWS; i++)
		assert_int_equal(vnic_hv_dma_map(hv, buf, sizeof(buf), &iobas[i]), 0);
	assert_int_equal(vnic_hv_dma_map(hv, buf, sizeof(buf), &extra), -ENOSPC);
	/* every mapping still resolves, including the middle of the sorted table */
	for (unsigned int i = 0; i < VNIC_HV_MAX_DMA_WINDOWS; i += 37)
		assert_ptr_equal(vnic_hv_dma_translate(hv, iobas[i] + 63, 1), buf + 63);
	assert_int_equal(vnic_hv_dma_unmap(hv, iobas[200]), 0);
	assert_null(vnic_hv_dma_translate(hv, iobas[200], 1));
	assert_ptr_equal(vnic_hv_dma_translate(hv, iobas[201], 1), buf);
	assert_int_equal(vnic_hv_dma_map(hv, buf, sizeof(buf), &extra), 0);
	assert_ptr_equal(vnic_hv_dma_translate(hv, extra, 64), buf);
	free(iobas);
	vnic_hv_destroy(hv);
}

/*
 * When the bump pointer reaches 2^32, iobas come from the gaps that unmaps
 * left, and only from those. Large lengths are only recorded, never touched.
 */
static void test_dma_ioba_space_reuses_only_freed_gaps(void **state)
{
	static uint8_t x[64], y[64];
	uint64_t i1, i2, i3, i4, small;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_dma_map(hv, x, GIB, &i1), 0);
	assert_int_equal(vnic_hv_dma_map(hv, x, GIB, &i2), 0);
	assert_int_equal(vnic_hv_dma_map(hv, x, GIB, &i3), 0);
	assert_true(i3 + GIB <= VNIC_IOBA_LIMIT);
	assert_int_equal(vnic_hv_dma_map(hv, y, GIB, &i4), -ENOSPC);
	assert_int_equal(vnic_hv_dma_unmap(hv, i2), 0);
	assert_int_equal(vnic_hv_dma_map(hv, y, GIB, &i4), 0);
	assert_true(i4 == i2);			/* the only gap that fits */
	assert_ptr_equal(vnic_hv_dma_translate(hv, i4 + 10, 1), y + 10);
	assert_ptr_equal(vnic_hv_dma_translate(hv, i1 + 10, 1), x + 10);
	assert_int_equal(vnic_hv_dma_map(hv, y, GIB, &small), -ENOSPC);
	/* a small one fits in the space left after i3 */
	assert_int_equal(vnic_hv_dma_map(hv, y, 64, &small), 0);
	assert_true(small > i3 && small + 64 <= VNIC_IOBA_LIMIT);
	assert_ptr_equal(vnic_hv_dma_translate(hv, small, 64), y);
	vnic_hv_destroy(hv);
}

/* --- CRQ ----------------------------------------------------------------------------- */

static void test_crq_both_directions(void **state)
{
	struct vnic_crq m = crq_msg(VNIC_CMD_QUERY_CAPABILITY, 9000), got;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_false(vnic_hv_crq_pending(hv, VNIC_HV_SERVER));
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_false(vnic_hv_crq_recv(hv, VNIC_HV_CLIENT, &got)); /* not to the sender */
	assert_true(vnic_hv_crq_pending(hv, VNIC_HV_SERVER));
	memset(&got, 0xAA, sizeof(got));
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_memory_equal(&got, &m, sizeof(m));
	assert_false(vnic_hv_crq_pending(hv, VNIC_HV_SERVER));
	assert_false(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));

	m = crq_msg(VNIC_CMD_QUERY_CAPABILITY_RSP, 1500);
	m.rc = VNIC_RC_PARTIALSUCCESS;
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);
	assert_false(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_CLIENT, &got));
	assert_memory_equal(&got, &m, sizeof(m));

	/* init and transport-event classes travel too */
	memset(&m, 0, sizeof(m));
	m.init.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_int_equal(got.first, VNIC_CRQ_INIT_CMD);
	assert_int_equal(got.init.type, VNIC_CRQ_INIT);
	assert_true(hv_stat(hv)->send_crq == 3);
	vnic_hv_destroy(hv);
}

static void test_crq_full_busy_then_order(void **state)
{
	struct vnic_crq m, got;
	struct vnic_hv *hv = hv_new(16);
	uint64_t expect = 0;

	(void)state;
	for (uint64_t i = 0; i < VNIC_HV_CRQ_ENTRIES; i++) {
		m = crq_msg(VNIC_CMD_REQUEST_CAPABILITY, i);
		assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	}
	m = crq_msg(VNIC_CMD_REQUEST_CAPABILITY, 999);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_BUSY);
	assert_true(hv_stat(hv)->rc_busy == 1);
	/* the other direction is a separate ring */
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);

	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_true(vnic_be64_get(&got.cap.number) == expect++);
	m = crq_msg(VNIC_CMD_REQUEST_CAPABILITY, VNIC_HV_CRQ_ENTRIES);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	while (vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got))
		assert_true(vnic_be64_get(&got.cap.number) == expect++);
	assert_true(expect == VNIC_HV_CRQ_ENTRIES + 1);
	vnic_hv_destroy(hv);
}

static void test_crq_rejects_invalid(void **state)
{
	struct vnic_crq m = crq_msg(VNIC_CMD_LOGIN, 0), got;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	m.first = 0;
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_PARAMETER);
	m.first = 0x40;
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_PARAMETER);
	m.first = VNIC_CRQ_CMD_RSP;
	assert_int_equal(vnic_hv_send_crq(hv, (enum vnic_hv_side)2, &m), VNIC_H_PARAMETER);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, NULL), VNIC_H_PARAMETER);
	assert_false(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_false(vnic_hv_crq_recv(hv, VNIC_HV_CLIENT, &got));
	assert_false(vnic_hv_crq_recv(hv, (enum vnic_hv_side)2, &got));
	assert_true(hv_stat(hv)->rc_parameter == 4);
	assert_true(hv_stat(hv)->send_crq == 0);
	vnic_hv_destroy(hv);
}

static void test_closed_transport(void **state)
{
	struct vnic_crq m = crq_msg(VNIC_CMD_VERSION_EXCHANGE, 1), got;
	union vnic_subcrq_entry e = entry_seq(1), arr[2] = { entry_seq(2), entry_seq(3) };
	struct vnic_subcrq *q;
	uint64_t ioba;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &q), 0);
	assert_int_equal(vnic_hv_dma_map(hv, arr, sizeof(arr), &ioba), 0);
	vnic_hv_crq_set_open(hv, false);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_CLOSED);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_SERVER, &m), VNIC_H_CLOSED);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_CLOSED);
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 2),
			 VNIC_H_CLOSED);
	/* closed wins over a stale handle: a driver mid-reset learns the transport is gone */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, 12345, &e), VNIC_H_CLOSED);
	assert_true(hv_stat(hv)->rc_closed == 5);
	assert_false(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_null(vnic_subcrq_peek(q));

	vnic_hv_crq_set_open(hv, true);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	assert_non_null(vnic_subcrq_peek(q));
	vnic_hv_destroy(hv);
}

struct crq_irq_ctx {
	struct vnic_hv *hv;
	unsigned int calls;
	bool answer;
};

/* The device's CRQ handler answering from inside the interrupt. */
static void crq_irq(void *ctx)
{
	struct crq_irq_ctx *c = ctx;

	c->calls++;
	if (c->answer) {
		struct vnic_crq rsp = crq_msg(VNIC_CMD_VERSION_EXCHANGE_RSP, 1);

		assert_int_equal(vnic_hv_send_crq(c->hv, VNIC_HV_SERVER, &rsp), VNIC_H_SUCCESS);
	}
}

static void test_crq_irq_only_when_armed(void **state)
{
	struct vnic_crq m = crq_msg(VNIC_CMD_VERSION_EXCHANGE, 1), got;
	struct vnic_hv *hv = hv_new(16);
	struct crq_irq_ctx c = { .hv = hv };

	(void)state;
	vnic_hv_crq_set_irq(hv, VNIC_HV_SERVER, crq_irq, &c);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(c.calls, 0);
	vnic_hv_crq_irq_enable(hv, VNIC_HV_SERVER, true);
	assert_int_equal(c.calls, 0);		/* arming alone raises nothing */
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(c.calls, 1);
	/* the server's own sends raise the client's interrupt, not the server's */
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);
	assert_int_equal(c.calls, 1);
	vnic_hv_crq_irq_enable(hv, VNIC_HV_SERVER, false);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(c.calls, 1);

	/* a handler may send from inside the interrupt (no lock held) */
	c.answer = true;
	vnic_hv_crq_irq_enable(hv, VNIC_HV_SERVER, true);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(c.calls, 2);
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_CLIENT, &got)); /* the earlier server send */
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_CLIENT, &got));
	assert_int_equal(got.cmd, VNIC_CMD_VERSION_EXCHANGE_RSP);
	vnic_hv_destroy(hv);
}

/* --- sub-CRQs ------------------------------------------------------------------------- */

static void test_subcrq_reg_validation(void **state)
{
	struct vnic_subcrq *qs[VNIC_HV_MAX_SUBCRQS], *q;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 0, &q), -EINVAL);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 3, &q), -EINVAL);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 2 * VNIC_HV_MAX_SUBCRQ_ENTRIES, &q),
			 -EINVAL);
	assert_int_equal(vnic_hv_reg_subcrq(hv, (enum vnic_hv_side)7, 8, &q), -EINVAL);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, NULL), -EINVAL);
	assert_int_equal(vnic_hv_free_subcrq(hv, NULL), -EINVAL);

	for (unsigned int i = 0; i < VNIC_HV_MAX_SUBCRQS; i++) {
		uint32_t n = i == 0 ? 1 : i == 1 ? VNIC_HV_MAX_SUBCRQ_ENTRIES : 64;

		assert_int_equal(vnic_hv_reg_subcrq(hv, i & 1 ? VNIC_HV_CLIENT : VNIC_HV_SERVER, n,
						    &qs[i]), 0);
		assert_int_equal(qs[i]->size, n);
		assert_int_equal(qs[i]->owner, i & 1 ? VNIC_HV_CLIENT : VNIC_HV_SERVER);
		assert_true(qs[i]->handle != 0);
		assert_int_equal((uintptr_t)qs[i]->ring % 64, 0);
		assert_true(ring_all_zero(qs[i]));
		for (unsigned int j = 0; j < i; j++)
			assert_true(qs[i]->handle != qs[j]->handle);
	}
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &q), -ENOSPC);
	/* a freed slot is reused under a new handle */
	{
		uint32_t old = qs[5]->handle;

		assert_int_equal(vnic_hv_free_subcrq(hv, qs[5]), 0);
		assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &qs[5]), 0);
		assert_true(qs[5]->handle != old);
	}
	vnic_hv_destroy(hv); /* frees the rings still registered */
}

static void test_subcrq_direct_send(void **state)
{
	union vnic_subcrq_entry e = entry_seq(42);
	const union vnic_subcrq_entry *got;
	struct vnic_subcrq *q;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &q), 0);
	assert_null(vnic_subcrq_peek(q));
	assert_false(vnic_subcrq_pending(q));
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_true(vnic_subcrq_pending(q));
	got = vnic_subcrq_peek(q);
	assert_non_null(got);
	assert_ptr_equal(got, &q->ring[0]);		/* read in place */
	assert_memory_equal(got, &e, sizeof(e));
	assert_int_equal(got->first, VNIC_SUBCRQ_VALID);
	vnic_subcrq_consume(q);
	assert_int_equal(q->ring[0].first, 0);		/* handed back */
	assert_null(vnic_subcrq_peek(q));
	assert_true(hv_stat(hv)->send_subcrq == 1);
	assert_true(hv_stat(hv)->send_subcrq_indirect == 0);

	/* the server sends to rings the client owns */
	{
		struct vnic_subcrq *cq;

		assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_CLIENT, 4, &cq), 0);
		assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, cq->handle, &e),
				 VNIC_H_SUCCESS);
		assert_non_null(vnic_subcrq_peek(cq));
		assert_int_equal(vnic_hv_free_subcrq(hv, cq), 0);
	}
	assert_true(hv_stat(hv)->send_subcrq == 2); /* the freed ring's count stays */
	vnic_hv_destroy(hv);
}

static void test_subcrq_direct_refusals_write_nothing(void **state)
{
	union vnic_subcrq_entry e = entry_seq(7);
	struct vnic_subcrq *q, *gone;
	uint32_t gone_handle;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &gone), 0);
	gone_handle = gone->handle;
	assert_int_equal(vnic_hv_free_subcrq(hv, gone), 0);
	/* q takes over the freed ring's place: the old handle must still miss */
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &q), 0);
	assert_true(q->handle != gone_handle);

	/* the owner sending to its own ring */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_PARAMETER);
	/* unknown handles: 0, a random one, the freed one */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, 0, &e), VNIC_H_PARAMETER);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, 0xDEADBEEF, &e), VNIC_H_PARAMETER);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, gone_handle, &e),
			 VNIC_H_PARAMETER);
	/* entry without the valid bit, or none, or a bad side */
	e.first = 0;
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_PARAMETER);
	e.first = 0x7F;
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_PARAMETER);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, NULL),
			 VNIC_H_PARAMETER);
	e.first = VNIC_SUBCRQ_VALID;
	assert_int_equal(vnic_hv_send_subcrq(hv, (enum vnic_hv_side)3, q->handle, &e),
			 VNIC_H_PARAMETER);

	assert_true(ring_all_zero(q));
	assert_int_equal(q->prod, 0);
	assert_true(q->irqs + q->irqs_masked == 0);
	assert_true(hv_stat(hv)->rc_parameter == 8);
	assert_true(hv_stat(hv)->send_subcrq == 0);
	vnic_hv_destroy(hv);
}

/* The producer may reuse a slot only after the consumer cleared its valid bit. */
static void test_subcrq_valid_bit_ownership(void **state)
{
	union vnic_subcrq_entry e;
	const union vnic_subcrq_entry *got;
	struct vnic_subcrq *q;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_CLIENT, 4, &q), 0);
	for (uint64_t i = 0; i < 4; i++) {
		e = entry_seq(i);
		assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e),
				 VNIC_H_SUCCESS);
	}
	e = entry_seq(100);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_BUSY);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_BUSY);
	assert_true(q->full == 2);
	assert_true(hv_stat(hv)->rc_busy == 2);
	for (uint32_t i = 0; i < 4; i++)	/* nothing overwritten */
		assert_true(entry_seq_of(&q->ring[i]) == i);

	/* peeking does not give the slot back: still full */
	got = vnic_subcrq_peek(q);
	assert_true(entry_seq_of(got) == 0);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_BUSY);
	vnic_subcrq_consume(q);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_SUCCESS);
	assert_true(entry_seq_of(&q->ring[0]) == 100);	/* the freed slot, reused */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_BUSY);

	for (uint64_t want = 1; want <= 4; want++) {
		got = vnic_subcrq_peek(q);
		assert_non_null(got);
		assert_true(entry_seq_of(got) == (want == 4 ? 100 : want));
		vnic_subcrq_consume(q);
	}
	assert_null(vnic_subcrq_peek(q));
	assert_false(vnic_subcrq_pending(q));
	vnic_hv_destroy(hv);
}

static void test_subcrq_indirect_send(void **state)
{
	union vnic_subcrq_entry arr[VNIC_SAFE_IND_DESCS];
	struct irq_counter irq = { 0 };
	struct vnic_subcrq *q;
	uint64_t ioba;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	for (unsigned int i = 0; i < VNIC_SAFE_IND_DESCS; i++)
		arr[i] = entry_seq(1000 + i);
	assert_int_equal(vnic_hv_dma_map(hv, arr, sizeof(arr), &ioba), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 32, &q), 0);
	vnic_hv_subcrq_set_irq(q, count_irq, &irq);
	vnic_hv_subcrq_irq_enable(q);

	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 5),
			 VNIC_H_SUCCESS);
	assert_int_equal(irq.calls, 1);			/* one interrupt per hcall */
	/* a batch may start anywhere in the mapped array */
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle,
						      ioba + 5 * sizeof(arr[0]), 11),
			 VNIC_H_SUCCESS);
	assert_int_equal(irq.calls, 2);
	for (unsigned int i = 0; i < 16; i++) {
		const union vnic_subcrq_entry *got = vnic_subcrq_peek(q);

		assert_non_null(got);
		assert_memory_equal(got, &arr[i], sizeof(arr[i]));
		vnic_subcrq_consume(q);
	}
	assert_null(vnic_subcrq_peek(q));
	assert_true(hv_stat(hv)->send_subcrq_indirect == 2);
	assert_true(hv_stat(hv)->indirect_entries == 16);
	assert_true(hv_stat(hv)->send_subcrq == 0);
	vnic_hv_destroy(hv);
}

static void test_subcrq_indirect_refusals_write_nothing(void **state)
{
	union vnic_subcrq_entry *arr;
	struct vnic_subcrq *q, *small;
	uint64_t ioba, expect = 0;
	const size_t n = 20;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	arr = calloc(n, sizeof(*arr));
	assert_non_null(arr);
	for (unsigned int i = 0; i < n; i++)
		arr[i] = entry_seq(i);
	assert_int_equal(vnic_hv_dma_map(hv, arr, n * sizeof(*arr), &ioba), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 64, &q), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &small), 0);

#define IND(from, h, io, cnt) vnic_hv_send_subcrq_indirect(hv, from, h, io, cnt)
#define REFUSED(from, h, io, cnt)                                           \
	do {                                                                \
		assert_int_equal(IND(from, h, io, cnt), VNIC_H_PARAMETER);  \
		expect++;                                                   \
	} while (0)
	REFUSED(VNIC_HV_CLIENT, q->handle, ioba, 0);
	REFUSED(VNIC_HV_CLIENT, q->handle, ioba, 17);
	REFUSED(VNIC_HV_CLIENT, q->handle, ioba, UINT32_MAX);
	REFUSED(VNIC_HV_SERVER, q->handle, ioba, 4);			/* own ring */
	REFUSED(VNIC_HV_CLIENT, q->handle + VNIC_HV_MAX_SUBCRQS, ioba, 4); /* no such handle */
	REFUSED((enum vnic_hv_side)9, q->handle, ioba, 4);
	/* the array: unmapped, running off the end of its mapping, into the guard page */
	REFUSED(VNIC_HV_CLIENT, q->handle, 0, 4);
	REFUSED(VNIC_HV_CLIENT, q->handle, ioba + 8 * sizeof(*arr), 13);
	REFUSED(VNIC_HV_CLIENT, q->handle, ioba + n * sizeof(*arr) - 1, 1);
	/* a batch larger than the whole ring can never fit */
	REFUSED(VNIC_HV_CLIENT, small->handle, ioba, 9);
	/* one entry in the middle without its valid bit spoils the batch */
	arr[3].first = 0;
	REFUSED(VNIC_HV_CLIENT, q->handle, ioba, 6);
	arr[3].first = VNIC_SUBCRQ_VALID;

	assert_true(ring_all_zero(q));
	assert_true(ring_all_zero(small));
	assert_int_equal(q->prod, 0);
	assert_true(hv_stat(hv)->rc_parameter == expect);
	assert_true(hv_stat(hv)->send_subcrq_indirect == 0);
	/* the unmapped ioba, the run-off and the guard each count a bad translation */
	assert_true(hv_stat(hv)->dma_bad_translation == 3);

	/* and the same array goes through once the arguments are right */
	assert_int_equal(IND(VNIC_HV_CLIENT, q->handle, ioba, 16), VNIC_H_SUCCESS);
	assert_int_equal(IND(VNIC_HV_CLIENT, small->handle, ioba, 8), VNIC_H_SUCCESS);
#undef REFUSED
#undef IND
	free(arr);
	vnic_hv_destroy(hv);
}

/* All or nothing: a batch that does not fit leaves the ring exactly as it was. */
static void test_subcrq_indirect_busy_all_or_nothing(void **state)
{
	union vnic_subcrq_entry arr[3] = { entry_seq(60), entry_seq(61), entry_seq(62) };
	union vnic_subcrq_entry e, snap[8];
	struct irq_counter irq = { 0 };
	struct vnic_subcrq *q;
	uint64_t ioba;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	assert_int_equal(vnic_hv_dma_map(hv, arr, sizeof(arr), &ioba), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_CLIENT, 8, &q), 0);
	vnic_hv_subcrq_set_irq(q, count_irq, &irq);
	vnic_hv_subcrq_irq_enable(q);
	for (uint64_t i = 0; i < 6; i++) {
		e = entry_seq(i);
		assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e),
				 VNIC_H_SUCCESS);
	}
	assert_int_equal(irq.calls, 6);
	memcpy(snap, q->ring, sizeof(snap));
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_SERVER, q->handle, ioba, 3),
			 VNIC_H_BUSY);
	assert_memory_equal(q->ring, snap, sizeof(snap));	/* slots 6 and 7 untouched */
	assert_int_equal(q->prod, 6);
	assert_int_equal(irq.calls, 6);				/* and no interrupt */
	assert_true(q->full == 1);
	/* two fit: sending two works, and wraps nothing yet */
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_SERVER, q->handle, ioba, 2),
			 VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_SERVER, q->handle, ioba, 1),
			 VNIC_H_BUSY);
	/* consume three: the batch of three now wraps around slots 0..2 */
	for (uint64_t i = 0; i < 3; i++) {
		assert_true(entry_seq_of(vnic_subcrq_peek(q)) == i);
		vnic_subcrq_consume(q);
	}
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_SERVER, q->handle, ioba, 3),
			 VNIC_H_SUCCESS);
	{
		static const uint64_t order[] = { 3, 4, 5, 60, 61, 60, 61, 62 };

		for (unsigned int i = 0; i < 8; i++) {
			assert_true(entry_seq_of(vnic_subcrq_peek(q)) == order[i]);
			vnic_subcrq_consume(q);
		}
	}
	assert_null(vnic_subcrq_peek(q));
	assert_true(hv_stat(hv)->rc_busy == 2);
	vnic_hv_destroy(hv);
}

static void test_subcrq_irq_only_when_armed(void **state)
{
	union vnic_subcrq_entry e = entry_seq(1), arr[4];
	struct irq_counter irq = { 0 };
	struct vnic_subcrq *q;
	uint64_t ioba;
	struct vnic_hv *hv = hv_new(16);

	(void)state;
	for (unsigned int i = 0; i < 4; i++)
		arr[i] = entry_seq(i);
	assert_int_equal(vnic_hv_dma_map(hv, arr, sizeof(arr), &ioba), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 64, &q), 0);
	vnic_hv_subcrq_set_irq(q, count_irq, &irq);

	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_int_equal(irq.calls, 0);
	assert_true(q->irqs == 0 && q->irqs_masked == 1);

	vnic_hv_subcrq_irq_enable(q);
	assert_int_equal(irq.calls, 0);		/* arming with work pending raises nothing */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 4),
			 VNIC_H_SUCCESS);
	assert_int_equal(irq.calls, 2);
	assert_true(q->irqs == 2 && q->irqs_masked == 1);

	/* refused sends raise nothing */
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_SERVER, q->handle, &e), VNIC_H_PARAMETER);
	assert_int_equal(irq.calls, 2);

	/* a handler that masks itself, as NAPI does: one delivery, then masked */
	irq.disarm = q;
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_int_equal(irq.calls, 3);
	assert_true(q->irqs == 3 && q->irqs_masked == 2);

	vnic_hv_subcrq_irq_disable(q);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_int_equal(irq.calls, 3);
	/* no handler set but armed: counted, nothing called */
	vnic_hv_subcrq_set_irq(q, NULL, NULL);
	vnic_hv_subcrq_irq_enable(q);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_true(q->irqs == 4);
	vnic_hv_destroy(hv);
}

/* A non-zero cost model changes only time, never results. */
static void test_cost_model_keeps_results(void **state)
{
	struct vnic_hv_cost cost = { 50, 80, 20, 10, 30 };
	union vnic_subcrq_entry e = entry_seq(5);
	struct vnic_crq m = crq_msg(VNIC_CMD_LOGIN, 0), got;
	struct irq_counter irq = { 0 };
	struct vnic_subcrq *q;
	struct vnic_hv *hv = NULL;
	uint64_t ioba;

	(void)state;
	assert_int_equal(vnic_hv_create(&hv, 16, &cost), 0);
	assert_int_equal(vnic_hv_dma_map(hv, &e, sizeof(e), &ioba), 0);
	assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_SERVER, 8, &q), 0);
	vnic_hv_subcrq_set_irq(q, count_irq, &irq);
	vnic_hv_subcrq_irq_enable(q);
	assert_int_equal(vnic_hv_send_subcrq(hv, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_subcrq_indirect(hv, VNIC_HV_CLIENT, q->handle, ioba, 1),
			 VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_crq(hv, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_true(vnic_hv_crq_recv(hv, VNIC_HV_SERVER, &got));
	vnic_hv_dma_charge(hv, 1500);
	assert_int_equal(irq.calls, 2);
	assert_true(entry_seq_of(vnic_subcrq_peek(q)) == 5);
	vnic_hv_destroy(hv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_rejects_bad_args),
		cmocka_unit_test(test_dma_map_hands_out_aligned_disjoint_iobas),
		cmocka_unit_test(test_dma_map_rejects_bad_args),
		cmocka_unit_test(test_dma_translate_rejects_every_out_of_range),
		cmocka_unit_test(test_dma_unmap),
		cmocka_unit_test(test_dma_table_full),
		cmocka_unit_test(test_dma_ioba_space_reuses_only_freed_gaps),
		cmocka_unit_test(test_crq_both_directions),
		cmocka_unit_test(test_crq_full_busy_then_order),
		cmocka_unit_test(test_crq_rejects_invalid),
		cmocka_unit_test(test_closed_transport),
		cmocka_unit_test(test_crq_irq_only_when_armed),
		cmocka_unit_test(test_subcrq_reg_validation),
		cmocka_unit_test(test_subcrq_direct_send),
		cmocka_unit_test(test_subcrq_direct_refusals_write_nothing),
		cmocka_unit_test(test_subcrq_valid_bit_ownership),
		cmocka_unit_test(test_subcrq_indirect_send),
		cmocka_unit_test(test_subcrq_indirect_refusals_write_nothing),
		cmocka_unit_test(test_subcrq_indirect_busy_all_or_nothing),
		cmocka_unit_test(test_subcrq_irq_only_when_armed),
		cmocka_unit_test(test_cost_model_keeps_results),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
