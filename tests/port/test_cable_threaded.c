// SPDX-License-Identifier: MIT
/*
 * The cable with a real producer thread and a real consumer thread: one
 * million frames of varying length, every byte checked, in order, through a
 * small ring so that it runs full and empty many times. The consumer sleeps
 * the way a device rx engine does (arm the irq, check pending, wait for the
 * notification), so a hole in the notification protocol hangs the test.
 * Run under TSan by CI (label "threaded").
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "port/port.h"

enum { FRAMES = 1000000, BURST = 32 };

struct run {
	struct vnic_wire *tx, *rx;
	_Atomic uint32_t kicked;	/* set by the notification */
	uint64_t bad;
	uint64_t received;
	uint64_t sleeps;
};

static uint32_t frame_len(uint32_t id)
{
	return 64 + (id % 25) * 8;	/* 64..256 B */
}

static uint64_t word(uint32_t id, uint32_t k)
{
	return (uint64_t)id * 0x9e3779b97f4a7c15ull + k;
}

static void fill(struct vnic_pkt *p, uint32_t id)
{
	uint32_t len = frame_len(id), k;

	memset(p->data, 0x02, 12);
	p->data[12] = 0x08;
	p->data[13] = 0x00;
	for (k = 0; 16 + 8 * (k + 1) <= len; k++) {
		uint64_t w = word(id, k);

		memcpy(p->data + 16 + 8 * k, &w, 8);
	}
	memcpy(p->data + 14, &(uint16_t){ (uint16_t)id }, 2);
	p->len = len;
}

static bool check(const struct vnic_pkt *p, uint32_t id)
{
	uint32_t k;
	uint16_t lo;

	if (p->len != frame_len(id))
		return false;
	memcpy(&lo, p->data + 14, 2);
	if (lo != (uint16_t)id)
		return false;
	for (k = 0; 16 + 8 * (k + 1) <= p->len; k++) {
		uint64_t w;

		memcpy(&w, p->data + 16 + 8 * k, 8);
		if (w != word(id, k))
			return false;
	}
	return true;
}

static void on_notify(void *ctx)
{
	atomic_store_explicit(&((struct run *)ctx)->kicked, 1, memory_order_release);
}

static void *producer(void *arg)
{
	struct run *r = arg;
	struct vnic_pkt *s[BURST];
	uint32_t id = 0;

	while (id < FRAMES) {
		unsigned int want = FRAMES - id < BURST ? FRAMES - id : BURST;
		unsigned int n = r->tx->ops->tx_reserve(r->tx, s, want), i;

		if (!n) {
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++)
			fill(s[i], id++);
		r->tx->ops->tx_commit(r->tx, s, n, n);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct run *r = arg;
	const struct vnic_irq_ops *irq = r->rx->ops->rx_irq;
	struct vnic_pkt *f[BURST];
	uint32_t id = 0;

	while (id < FRAMES) {
		unsigned int n = r->rx->ops->rx_peek(r->rx, f, BURST), i;

		if (!n) {
			/* As napi_complete_done: re-arm, then look once more. */
			irq->enable(r->rx);
			if (irq->pending(r->rx)) {
				irq->disable(r->rx);
				continue;
			}
			r->sleeps++;
			while (!atomic_exchange_explicit(&r->kicked, 0, memory_order_acquire))
				sched_yield();
			continue;
		}
		for (i = 0; i < n; i++)
			if (!check(f[i], id++))
				r->bad++;
		r->rx->ops->rx_release(r->rx, n);
		r->received += n;
	}
	return NULL;
}

static void test_threaded_million(void **state)
{
	struct vnic_cable_cfg cfg = { .slots = 256 };
	struct vnic_cable_stats st;
	struct vnic_cable *c;
	pthread_t pt, ct;
	struct run r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(vnic_cable_create(&c, &cfg), 0);
	r.tx = vnic_cable_end(c, 0);
	r.rx = vnic_cable_end(c, 1);
	r.rx->notify = on_notify;
	r.rx->notify_ctx = &r;

	assert_int_equal(pthread_create(&ct, NULL, consumer, &r), 0);
	assert_int_equal(pthread_create(&pt, NULL, producer, &r), 0);
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);

	assert_int_equal(r.bad, 0);
	assert_int_equal(r.received, FRAMES);
	vnic_cable_stats(c, 0, &st);
	assert_int_equal(st.tx_frames, FRAMES);
	assert_int_equal(st.rx_frames, FRAMES);
	assert_int_equal(st.drop_mtu, 0);
	/* The consumer slept at times, and was woken only by notifications. */
	assert_true(r.sleeps == 0 || st.notifies > 0);
	vnic_cable_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threaded_million),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
