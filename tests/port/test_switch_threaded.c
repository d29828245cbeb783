// SPDX-License-Identifier: MIT
/*
 * The switch with real threads: three producers (ports 0, 1, 2) send to
 * port 3's station at once while its consumer takes the frames, through
 * rings small enough to run full. Per source, the frames arrive in order,
 * byte for byte, and each one sent is either received or counted as
 * dropped on a full ring. The consumer sleeps as a device rx engine does
 * (arm, look once more, then wait on the port's eventfd), so a hole in the
 * doorbell protocol hangs the test. Run under TSan by CI (label
 * "threaded"); the switch's cross-process words are the same atomics.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "port/port.h"
#include "port/switch_int.h"

enum { NPORTS = 4, SOURCES = 3, FRAMES = 100000, BURST = 32, DST = 3 };

struct run {
	struct vnic_switch *sw;
	struct vnic_wire *w[NPORTS];
	uint8_t mac[NPORTS][6];
	uint64_t received[SOURCES];
	uint64_t bad;
	uint64_t sleeps;
};

struct producer {
	struct run *r;
	unsigned int port;
};

static uint32_t frame_len(uint32_t id)
{
	return 64 + (id % 23) * 8;
}

static uint8_t byte_of(unsigned int port, uint32_t id, uint32_t i)
{
	return (uint8_t)(port * 97 + id * 13 + i);
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct vnic_wire *w = p->r->w[p->port];
	struct vnic_pkt *s[BURST];
	uint32_t id = 0;

	while (id < FRAMES) {
		unsigned int n = w->ops->tx_reserve(w, s, BURST), i;

		for (i = 0; i < n && id < FRAMES; i++, id++) {
			uint32_t len = frame_len(id);

			memcpy(s[i]->data, p->r->mac[DST], 6);
			memcpy(s[i]->data + 6, p->r->mac[p->port], 6);
			s[i]->data[12] = 0x08;
			s[i]->data[13] = 0x00;
			memcpy(s[i]->data + 14, &id, sizeof(id));
			for (uint32_t k = 18; k < len; k++)
				s[i]->data[k] = byte_of(p->port, id, k);
			s[i]->len = len;
		}
		w->ops->tx_commit(w, s, i, n);
		/* a full ring drops: leave the consumer some time now and then */
		if (!(id % 1024))
			sched_yield();
	}
	return NULL;
}

/* Which source a frame came from (by its source MAC), and whether it is whole and in order. */
static void check(struct run *r, const struct vnic_pkt *f, uint32_t *next)
{
	unsigned int src;
	uint32_t id;

	for (src = 0; src < SOURCES; src++)
		if (!memcmp(f->data + 6, r->mac[src], 6))
			break;
	if (src == SOURCES || f->len < 18) {
		r->bad++;
		return;
	}
	memcpy(&id, f->data + 14, sizeof(id));
	if (id < next[src] || f->len != frame_len(id)) {
		r->bad++;
		return;
	}
	for (uint32_t k = 18; k < f->len; k++)
		if (f->data[k] != byte_of(src, id, k)) {
			r->bad++;
			return;
		}
	next[src] = id + 1;
	r->received[src]++;
}

/* Every frame sent is received or was dropped on a full ring (the producers' count). */
static bool all_in(struct run *r)
{
	struct vnic_switch_port_stats st;
	uint64_t dropped = 0, received = 0;

	for (unsigned int s = 0; s < SOURCES; s++) {
		vnic_switch_port_stats(r->w[s], &st);
		dropped += st.drop_full;
		received += r->received[s];
	}
	return received + dropped == (uint64_t)SOURCES * FRAMES;
}

static void *consume(void *arg)
{
	struct run *r = arg;
	struct vnic_wire *w = r->w[DST];
	const struct vnic_irq_ops *irq = w->ops->rx_irq;
	struct pollfd pfd = { .fd = r->sw->efd[DST], .events = POLLIN };
	uint32_t next[SOURCES] = { 0 };
	struct vnic_pkt *f[BURST];
	uint64_t v;

	while (!all_in(r)) {
		unsigned int n = w->ops->rx_peek(w, f, BURST);

		if (!n) {
			/* as napi_complete_done: re-arm, then look once more */
			irq->enable(w);
			if (irq->pending(w)) {
				irq->disable(w);
				continue;
			}
			r->sleeps++;
			/* the producers may all be done with their last frames dropped */
			if (poll(&pfd, 1, 100) == 1 && read(pfd.fd, &v, sizeof(v)) < 0)
				r->bad++;
			continue;
		}
		for (unsigned int i = 0; i < n; i++)
			check(r, f[i], next);
		w->ops->rx_release(w, n);
	}
	return NULL;
}

static void test_three_to_one(void **state)
{
	struct vnic_switch_cfg cfg = { .ports = NPORTS };
	struct producer prod[SOURCES];
	struct vnic_switch_port_stats st;
	pthread_t pt[SOURCES], ct;
	struct run r;
	uint64_t dropped = 0, doorbells = 0;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(vnic_switch_create(&r.sw, &cfg), 0);
	for (unsigned int p = 0; p < NPORTS; p++) {
		vnic_switch_port_mac(p, r.mac[p]);
		assert_int_equal(vnic_switch_port_claim(r.sw, p), 0);
		assert_int_equal(vnic_switch_port_open(r.sw, p, NULL, &r.w[p]), 0);
	}
	/* the destination is a known station: nothing is flooded */
	{
		bool moved;

		assert_int_equal(vnic_switch_learn(r.sw, r.mac[DST], DST, vnic_now_ns(), &moved), 1);
	}
	assert_int_equal(pthread_create(&ct, NULL, consume, &r), 0);
	for (unsigned int s = 0; s < SOURCES; s++) {
		prod[s] = (struct producer){ .r = &r, .port = s };
		assert_int_equal(pthread_create(&pt[s], NULL, produce, &prod[s]), 0);
	}
	for (unsigned int s = 0; s < SOURCES; s++)
		pthread_join(pt[s], NULL);
	pthread_join(ct, NULL);

	assert_int_equal(r.bad, 0);
	for (unsigned int s = 0; s < SOURCES; s++) {
		vnic_switch_port_stats(r.w[s], &st);
		assert_int_equal(st.tx_frames, FRAMES);
		assert_int_equal(st.flooded, 0);
		assert_int_equal(st.forwarded + st.drop_full, FRAMES);
		assert_int_equal(r.received[s], st.forwarded);
		dropped += st.drop_full;
		doorbells += st.doorbells;
	}
	/*
	 * A ring holds its first frames whatever the scheduling, and a consumer
	 * that slept was woken by doorbells (or its timeout, once the last
	 * frames were dropped).
	 */
	for (unsigned int s = 0; s < SOURCES; s++)
		assert_true(r.received[s] >= VNIC_SWITCH_RING_SLOTS);
	assert_true(dropped < (uint64_t)SOURCES * FRAMES);
	assert_true(r.sleeps == 0 || doorbells > 0);
	for (unsigned int p = 0; p < NPORTS; p++)
		vnic_switch_port_close(r.w[p]);
	vnic_switch_destroy(r.sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_to_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
