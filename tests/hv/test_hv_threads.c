// SPDX-License-Identifier: MIT
/*
 * The hypervisor across threads (label "threaded", also run under TSan):
 * - a producer mixing direct and indirect sends and a consumer that sleeps on
 *   the ring's interrupt: every entry arrives exactly once, in order, and no
 *   interrupt is lost between publishing and re-arming;
 * - a ring freed while its partner keeps sending;
 * - DMA translations while another thread maps and unmaps.
 * cmocka's asserts are not thread-safe: the threads record, main asserts.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "hv/hv.h"
#include "support.h"

static union vnic_subcrq_entry entry_seq(uint64_t seq)
{
	union vnic_subcrq_entry e;

	memset(&e, 0, sizeof(e));
	e.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&e.rx_add.correlator, seq);
	/* a second copy, so that a torn entry (body from two sends) shows */
	vnic_be32_put(&e.rx_add.ioba, (uint32_t)~seq);
	return e;
}

/* --- producer / consumer ---------------------------------------------------- */

struct spsc {
	struct vnic_hv *hv;
	struct vnic_subcrq *q;
	uint64_t n;
	union vnic_subcrq_entry *arr;	/* the producer's indirect array, mapped */
	uint64_t arr_ioba;
	uint32_t max_batch;
	/* interrupt -> consumer wake-up */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool kicked;
	/* results */
	uint64_t received;
	uint64_t out_of_order;
	uint64_t torn;
	uint64_t lost_wakeups;
	uint64_t sleeps;
	uint64_t direct, indirect, busy;
	long bad_rc;
};

/* As vnic_napi_schedule: mask the interrupt, wake the poller. */
static void spsc_irq(void *ctx)
{
	struct spsc *s = ctx;

	vnic_hv_subcrq_irq_disable(s->q);
	pthread_mutex_lock(&s->lock);
	s->kicked = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void *spsc_producer(void *arg)
{
	struct spsc *s = arg;
	uint64_t rng = 0x5eed, seq = 0;

	while (seq < s->n) {
		uint64_t r = vnic_test_rand_next(&rng);
		long rc;

		if (r % 3 == 0) {
			union vnic_subcrq_entry e = entry_seq(seq);

			rc = vnic_hv_send_subcrq(s->hv, VNIC_HV_CLIENT, s->q->handle, &e);
			if (rc == VNIC_H_SUCCESS) {
				seq++;
				s->direct++;
			}
		} else {
			uint32_t cnt = 1 + (uint32_t)(r >> 8) % s->max_batch;

			if (cnt > s->n - seq)
				cnt = (uint32_t)(s->n - seq);
			for (uint32_t i = 0; i < cnt; i++)
				s->arr[i] = entry_seq(seq + i);
			rc = vnic_hv_send_subcrq_indirect(s->hv, VNIC_HV_CLIENT, s->q->handle,
							  s->arr_ioba, cnt);
			if (rc == VNIC_H_SUCCESS) {
				seq += cnt;
				s->indirect++;
			}
		}
		if (rc == VNIC_H_BUSY) {
			s->busy++;
			sched_yield();
		} else if (rc != VNIC_H_SUCCESS) {
			s->bad_rc = rc;
			break;
		}
	}
	return NULL;
}

static void deadline_in(struct timespec *ts, int seconds)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += seconds;
}

static void *spsc_consumer(void *arg)
{
	struct spsc *s = arg;

	while (s->received < s->n) {
		const union vnic_subcrq_entry *e = vnic_subcrq_peek(s->q);
		struct timespec ts;

		if (e) {
			uint64_t seq = vnic_be64_get(&e->rx_add.correlator);

			if (seq != s->received)
				s->out_of_order++;
			if (vnic_be32_get(&e->rx_add.ioba) != (uint32_t)~seq)
				s->torn++;
			vnic_subcrq_consume(s->q);
			s->received++;
			continue;
		}
		/*
		 * empty: arm, look once more (the napi_complete_done race), sleep.
		 * The fence is NAPI's (napi.c) and the protocol's: without it the
		 * arm can sit in this CPU's store buffer while the look reads the
		 * ring empty, and the producer, publishing in between, finds the
		 * interrupt still off: an entry waits with nobody to wake for it.
		 */
		vnic_hv_subcrq_irq_enable(s->q);
		vnic_fence_on(s->q->armed, memory_order_seq_cst);
		if (vnic_subcrq_pending(s->q)) {
			vnic_hv_subcrq_irq_disable(s->q);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		s->sleeps++;
		deadline_in(&ts, 30);
		while (!s->kicked) {
			/*
			 * A watchdog, not a timing assertion: after 30 s with an
			 * entry waiting and no interrupt, the wake-up was lost.
			 */
			if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT) {
				if (vnic_subcrq_pending(s->q)) {
					s->lost_wakeups++;
					break;
				}
				deadline_in(&ts, 30);
			}
		}
		s->kicked = false;
		pthread_mutex_unlock(&s->lock);
		vnic_hv_subcrq_irq_disable(s->q);
	}
	return NULL;
}

static void run_spsc(uint32_t ring, uint32_t max_ind, uint64_t n)
{
	struct spsc s = { .n = n, .max_batch = max_ind };
	pthread_t prod, cons;

	assert_int_equal(vnic_hv_create(&s.hv, max_ind, NULL), 0);
	assert_int_equal(vnic_hv_reg_subcrq(s.hv, VNIC_HV_SERVER, ring, &s.q), 0);
	s.arr = calloc(max_ind, sizeof(*s.arr));
	assert_non_null(s.arr);
	assert_int_equal(vnic_hv_dma_map(s.hv, s.arr, max_ind * sizeof(*s.arr), &s.arr_ioba), 0);
	assert_int_equal(pthread_mutex_init(&s.lock, NULL), 0);
	assert_int_equal(pthread_cond_init(&s.cond, NULL), 0);
	vnic_hv_subcrq_set_irq(s.q, spsc_irq, &s);

	assert_int_equal(pthread_create(&cons, NULL, spsc_consumer, &s), 0);
	assert_int_equal(pthread_create(&prod, NULL, spsc_producer, &s), 0);
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);

	print_message("  %" PRIu64 " entries: %" PRIu64 " direct, %" PRIu64 " indirect, %" PRIu64
		      " busy, %" PRIu64 " consumer sleeps\n",
		      s.received, s.direct, s.indirect, s.busy, s.sleeps);
	assert_int_equal(s.bad_rc, 0);
	assert_true(s.received == n);
	assert_true(s.out_of_order == 0);
	assert_true(s.torn == 0);
	assert_true(s.lost_wakeups == 0);
	assert_null(vnic_subcrq_peek(s.q));
	/* both paths were exercised */
	assert_true(s.direct > 0 && s.indirect > 0);
	{
		struct vnic_hv_stats copy;
		const struct vnic_hv_stats *st = &copy;

		vnic_hv_stats(s.hv, &copy);

		assert_true(st->send_subcrq == s.direct);
		assert_true(st->send_subcrq_indirect == s.indirect);
		assert_true(st->send_subcrq + st->indirect_entries == n);
		assert_true(st->rc_busy == s.busy);
	}
	/* every raise while armed reached the handler; the rest were masked */
	assert_true(s.q->irqs + s.q->irqs_masked == s.direct + s.indirect);

	pthread_cond_destroy(&s.cond);
	pthread_mutex_destroy(&s.lock);
	vnic_hv_destroy(s.hv);
	free(s.arr);
}

static void test_spsc_small_ring_exactly_once_in_order(void **state)
{
	(void)state;
	/* a ring smaller than the largest batch: BUSY and wrap-around all the time */
	run_spsc(16, 16, 100000);
}

static void test_spsc_large_batches_exactly_once_in_order(void **state)
{
	(void)state;
	run_spsc(256, 128, 200000);
}

/* --- free while the partner sends ----------------------------------------------- */

struct free_race {
	struct vnic_hv *hv;
	uint32_t handle;
	_Atomic uint64_t successes;
	long bad_rc;
	bool saw_parameter;
};

static void *free_race_sender(void *arg)
{
	struct free_race *f = arg;
	union vnic_subcrq_entry e = entry_seq(1);

	for (;;) {
		long rc = vnic_hv_send_subcrq(f->hv, VNIC_HV_SERVER, f->handle, &e);

		if (rc == VNIC_H_SUCCESS)
			atomic_fetch_add(&f->successes, 1);
		else if (rc == VNIC_H_PARAMETER) {
			f->saw_parameter = true;	/* the ring is gone: stop */
			return NULL;
		} else if (rc != VNIC_H_BUSY) {
			f->bad_rc = rc;
			return NULL;
		}
	}
}

static void test_free_while_partner_sends(void **state)
{
	struct vnic_hv *hv;

	(void)state;
	assert_int_equal(vnic_hv_create(&hv, 16, NULL), 0);
	for (int round = 0; round < 50; round++) {
		struct free_race f = { .hv = hv };
		struct vnic_subcrq *q;
		pthread_t t;

		assert_int_equal(vnic_hv_reg_subcrq(hv, VNIC_HV_CLIENT, 8, &q), 0);
		f.handle = q->handle;
		assert_int_equal(pthread_create(&t, NULL, free_race_sender, &f), 0);
		/* consume for a while, so the sender is writing slots when the ring goes */
		while (atomic_load(&f.successes) < 200) {
			if (vnic_subcrq_peek(q))
				vnic_subcrq_consume(q);
			else
				sched_yield();
		}
		assert_int_equal(vnic_hv_free_subcrq(hv, q), 0);
		pthread_join(t, NULL);
		assert_int_equal(f.bad_rc, 0);
		assert_true(f.saw_parameter);
	}
	vnic_hv_destroy(hv);
}

/* --- DMA translations during map/unmap ------------------------------------------ */

struct dma_race {
	struct vnic_hv *hv;
	uint8_t *m_host, *a_host;
	uint64_t m_ioba, a_ioba;
	_Atomic bool stop;
	_Atomic uint64_t lookups;
	uint64_t wrong;
};

static void *dma_reader(void *arg)
{
	struct dma_race *d = arg;

	while (!atomic_load(&d->stop)) {
		uint8_t *p = vnic_hv_dma_translate(d->hv, d->m_ioba + 100, 200);
		uint8_t *a = vnic_hv_dma_translate(d->hv, d->a_ioba + 4096, 64);

		/* the stable mapping always resolves, to the same place */
		if (p != d->m_host + 100)
			d->wrong++;
		/* the remapped one is either absent or exactly right */
		if (a && a != d->a_host + 4096)
			d->wrong++;
		/* nothing ever resolves in the guard page between them */
		if (vnic_hv_dma_translate(d->hv, d->m_ioba + VNIC_HV_DMA_PAGE, 1))
			d->wrong++;
		atomic_fetch_add_explicit(&d->lookups, 1, memory_order_relaxed);
	}
	return NULL;
}

/*
 * A (a large window) is unmapped and mapped again below M in the sorted table,
 * so M's index moves under the reader on every step.
 */
static void test_dma_translate_during_remap(void **state)
{
	static uint8_t m_buf[4096], a_buf[8192];
	struct dma_race d = { .m_host = m_buf, .a_host = a_buf };
	uint64_t big, again;
	pthread_t t;

	(void)state;
	assert_int_equal(vnic_hv_create(&d.hv, 16, NULL), 0);
	assert_int_equal(vnic_hv_dma_map(d.hv, a_buf, 1ull << 30, &d.a_ioba), 0);
	assert_int_equal(vnic_hv_dma_map(d.hv, m_buf, sizeof(m_buf), &d.m_ioba), 0);
	assert_true(d.a_ioba < d.m_ioba);
	/* use up the bump space, so that A comes back at the same (lowest) ioba */
	assert_int_equal(vnic_hv_dma_map(d.hv, a_buf, VNIC_IOBA_LIMIT - d.m_ioba - 3 * 4096, &big),
			 0);

	assert_int_equal(pthread_create(&t, NULL, dma_reader, &d), 0);
	/* overlap by construction, however the threads are scheduled: start
	 * remapping once the reader runs, stop once it has done many lookups */
	while (!atomic_load(&d.lookups))
		sched_yield();
	for (int i = 0; i < 20000 || atomic_load(&d.lookups) < 20000; i++) {
		assert_int_equal(vnic_hv_dma_unmap(d.hv, d.a_ioba), 0);
		assert_int_equal(vnic_hv_dma_map(d.hv, a_buf, 1ull << 30, &again), 0);
		assert_true(again == d.a_ioba);
	}
	atomic_store(&d.stop, true);
	pthread_join(t, NULL);
	assert_true(d.wrong == 0);
	vnic_hv_destroy(d.hv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spsc_small_ring_exactly_once_in_order),
		cmocka_unit_test(test_spsc_large_batches_exactly_once_in_order),
		cmocka_unit_test(test_free_while_partner_sends),
		cmocka_unit_test(test_dma_translate_during_remap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
