// SPDX-License-Identifier: MIT
/*
 * The in-process cable, single-threaded: ordering, MTU, rate and delay
 * stamps, seeded loss/reorder/corruption, ring full and the notification
 * protocol. Timing is checked through the stamps the cable computes (white
 * box: cable_int.h), never by measuring how long something took.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "port/cable_int.h"
#include "port/port.h"

enum { MAXF = 64 };

struct cab {
	struct vnic_cable *c;
	struct vnic_wire *a, *b;
	unsigned int notified;
};

static void on_notify(void *ctx)
{
	((struct cab *)ctx)->notified++;
}

static void cab_open(struct cab *t, const struct vnic_cable_cfg *cfg)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(vnic_cable_create(&t->c, cfg), 0);
	t->a = vnic_cable_end(t->c, 0);
	t->b = vnic_cable_end(t->c, 1);
	assert_non_null(t->a);
	assert_non_null(t->b);
	assert_null(vnic_cable_end(t->c, 2));
	t->b->notify = on_notify;
	t->b->notify_ctx = t;
}

/* An untagged frame of len bytes whose payload starts with id. */
static void write_frame(struct vnic_pkt *p, uint32_t len, uint32_t id)
{
	uint32_t i;

	memset(p->data, 0xff, 6);
	memset(p->data + 6, 0x02, 6);
	p->data[12] = 0x08;
	p->data[13] = 0x00;
	for (i = VNIC_ETH_HLEN; i < len; i++)
		p->data[i] = (uint8_t)(id * 7 + i);
	/* Three copies of the id: a single flipped bit cannot hide which frame
	 * this is (bitwise majority). */
	if (len >= VNIC_ETH_HLEN + 12)
		for (i = 0; i < 3; i++)
			memcpy(p->data + VNIC_ETH_HLEN + 4 * i, &id, 4);
	p->len = len;
}

static uint32_t frame_id(const struct vnic_pkt *p)
{
	uint32_t a, b, c;

	memcpy(&a, p->data + VNIC_ETH_HLEN, 4);
	memcpy(&b, p->data + VNIC_ETH_HLEN + 4, 4);
	memcpy(&c, p->data + VNIC_ETH_HLEN + 8, 4);
	return (a & b) | (a & c) | (b & c);
}

/* Sends n frames of len bytes numbered from first, in one commit. */
static unsigned int send(struct vnic_wire *w, unsigned int n, uint32_t len, uint32_t first)
{
	struct vnic_pkt *s[MAXF];
	unsigned int got, i;

	got = w->ops->tx_reserve(w, s, n);
	for (i = 0; i < got; i++)
		write_frame(s[i], len, first + i);
	w->ops->tx_commit(w, s, got, got);
	return got;
}

static void test_in_order(void **state)
{
	struct vnic_cable_stats st;
	struct vnic_pkt *f[MAXF];
	struct cab t;
	unsigned int i, n;

	(void)state;
	cab_open(&t, NULL);
	assert_int_equal(t.a->mtu, 1500);
	assert_int_equal(t.a->frame_size, 1518);
	assert_int_equal(send(t.a, 10, 100, 0), 10);
	assert_int_equal(send(t.a, 5, 1514, 10), 5);
	n = t.b->ops->rx_peek(t.b, f, MAXF);
	assert_int_equal(n, 15);
	for (i = 0; i < n; i++) {
		assert_int_equal(frame_id(f[i]), i);
		assert_int_equal(f[i]->len, i < 10 ? 100 : 1514);
		assert_int_equal(f[i]->data[30], (uint8_t)(i * 7 + 30));
	}
	/* Release part: the rest stays, still in order. */
	t.b->ops->rx_release(t.b, 4);
	n = t.b->ops->rx_peek(t.b, f, MAXF);
	assert_int_equal(n, 11);
	assert_int_equal(frame_id(f[0]), 4);
	t.b->ops->rx_release(t.b, n);
	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 0);
	assert_int_equal(t.b->ops->rx_next_ns(t.b), 0);
	/* The other direction is independent. */
	assert_int_equal(t.a->ops->rx_peek(t.a, f, MAXF), 0);

	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.tx_frames, 15);
	assert_int_equal(st.tx_bytes, 10 * 100 + 5 * 1514);
	assert_int_equal(st.rx_frames, 15);
	vnic_cable_stats(t.c, 1, &st);
	assert_int_equal(st.tx_frames, 0);
	vnic_cable_destroy(t.c);
}

static void test_bad_config(void **state)
{
	struct vnic_cable_cfg cfg = { .slots = 1000 };
	struct vnic_cable *c;

	(void)state;
	assert_int_equal(vnic_cable_create(&c, &cfg), -EINVAL);
	assert_null(c);
	cfg = (struct vnic_cable_cfg){ .mtu = 60 };
	assert_int_equal(vnic_cable_create(&c, &cfg), -EINVAL);
	cfg = (struct vnic_cable_cfg){ .loss = 1.5 };
	assert_int_equal(vnic_cable_create(&c, &cfg), -EINVAL);
	cfg = (struct vnic_cable_cfg){ .corrupt = -0.1 };
	assert_int_equal(vnic_cable_create(&c, &cfg), -EINVAL);
}

static void test_mtu_drop(void **state)
{
	struct vnic_cable_cfg cfg = { .mtu = 1000 };
	struct vnic_cable_stats st;
	struct vnic_pkt *s[4], *f[MAXF];
	struct cab t;

	(void)state;
	cab_open(&t, &cfg);
	assert_int_equal(t.a->frame_size, 1018);
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 4), 4);
	write_frame(s[0], 1014, 1);	/* exactly the MTU */
	write_frame(s[1], 1015, 2);	/* one byte over, untagged */
	write_frame(s[2], 1018, 3);	/* tagged: MTU + 18 is fine */
	s[2]->data[12] = 0x81;
	s[2]->data[13] = 0x00;
	write_frame(s[3], 10, 4);	/* runt */
	t.a->ops->tx_commit(t.a, s, 4, 4);

	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 2);
	assert_int_equal(frame_id(f[0]), 1);
	assert_int_equal(f[1]->len, 1018);
	t.b->ops->rx_release(t.b, 2);
	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.drop_mtu, 2);
	assert_int_equal(st.tx_frames, 2);
	/* Dropped frames gave their slots back: the whole ring is usable. */
	assert_int_equal(send(t.a, 8, 64, 0), 8);
	vnic_cable_destroy(t.c);
}

/* Line time in ns of one frame, as documented in port.h. */
static uint64_t line_ns(uint64_t len, uint64_t rate)
{
	if (len < VNIC_CABLE_MIN_FRAME)
		len = VNIC_CABLE_MIN_FRAME;
	return (len + VNIC_CABLE_LINE_OVERHEAD) * 8 * 1000000000ull / rate;
}

static uint64_t stamp_of(struct cab *t, unsigned int i)
{
	struct cable_dir *d = &t->c->dir[0];
	uint32_t tail = atomic_load(&d->tail);

	return d->slots[(tail + i) & d->mask]->tstamp_ns;
}

static void test_rate(void **state)
{
	/* 1 kbit/s: a 1000 B frame takes 8.192 s, so nothing here gets ready. */
	struct vnic_cable_cfg cfg = { .rate_bps = 1000 };
	struct vnic_pkt *f[MAXF];
	uint64_t t0, t1, first, step = line_ns(1000, 1000);
	struct cab t;
	unsigned int i;

	(void)state;
	cab_open(&t, &cfg);
	t0 = vnic_now_ns();
	assert_int_equal(send(t.a, 3, 1000, 0), 3);
	t1 = vnic_now_ns();
	first = t.b->ops->rx_next_ns(t.b);
	assert_true(first >= t0 + step && first <= t1 + step);
	/* Frames queue behind each other on the line. */
	for (i = 0; i < 3; i++)
		assert_int_equal(stamp_of(&t, i), first + i * step);
	/* A later commit queues behind the busy line, not behind "now". */
	assert_int_equal(send(t.a, 1, 20, 3), 1);
	assert_int_equal(stamp_of(&t, 3), first + 2 * step + line_ns(20, 1000));
	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 0);
	vnic_cable_destroy(t.c);

	/* 10 Gbit/s, 64 B frames: 70.4 ns each; the remainder is carried, so
	 * ten frames take exactly 704 ns of line. */
	cfg = (struct vnic_cable_cfg){ .rate_bps = 10000000000ull, .delay_ns = 3000000000ull };
	cab_open(&t, &cfg);
	assert_int_equal(send(t.a, 10, 64, 0), 10);
	assert_int_equal(stamp_of(&t, 9) - stamp_of(&t, 0), 704 - 70);
	for (i = 1; i < 10; i++)
		assert_true(stamp_of(&t, i) - stamp_of(&t, i - 1) == 70 ||
			    stamp_of(&t, i) - stamp_of(&t, i - 1) == 71);
	vnic_cable_destroy(t.c);
}

static void test_delay(void **state)
{
	struct vnic_cable_cfg cfg = { .delay_ns = 10000000000ull };	/* 10 s */
	const struct vnic_irq_ops *irq;
	struct vnic_pkt *f[MAXF];
	uint64_t t0, t1, next;
	struct cab t;

	(void)state;
	cab_open(&t, &cfg);
	irq = t.b->ops->rx_irq;
	t0 = vnic_now_ns();
	send(t.a, 2, 100, 0);
	t1 = vnic_now_ns();
	/* Not ready, but unseen: pending says look (a timer is needed). */
	assert_true(irq->pending(t.b));
	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 0);
	next = t.b->ops->rx_next_ns(t.b);
	assert_true(next >= t0 + cfg.delay_ns && next <= t1 + cfg.delay_ns);
	/* Seen and not ready: nothing to do until the timer. */
	assert_false(irq->pending(t.b));
	send(t.a, 1, 100, 2);
	assert_true(irq->pending(t.b));
	t.b->ops->rx_next_ns(t.b);
	assert_false(irq->pending(t.b));
	vnic_cable_destroy(t.c);

	/* A short delay: wait until the stamp passes, then the frame is there. */
	cfg.delay_ns = 20000;
	cab_open(&t, &cfg);
	send(t.a, 1, 100, 7);
	next = t.b->ops->rx_next_ns(t.b);
	while (vnic_now_ns() < next)
		;
	assert_true(irq->pending(t.b));
	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 1);
	assert_int_equal(frame_id(f[0]), 7);
	vnic_cable_destroy(t.c);
}

struct fate {
	uint32_t ids[4096];
	unsigned int n;
	uint8_t flipped[4096];	/* per delivered frame: bits that differ */
	struct vnic_cable_stats st;
};

/* 4000 frames in batches of 1..16 (fixed pattern) through a lossy cable. */
static void run_lossy(struct vnic_cable_cfg *cfg, struct fate *out)
{
	struct vnic_pkt *f[MAXF];
	uint32_t sent = 0;
	unsigned int batch = 0, n, i, j;
	struct cab t;

	memset(out, 0, sizeof(*out));
	cab_open(&t, cfg);
	while (sent < 4000) {
		unsigned int want = 1 + (batch++ * 5) % 16;

		if (want > 4000 - sent)
			want = 4000 - sent;
		sent += send(t.a, want, 200, sent);
		while ((n = t.b->ops->rx_peek(t.b, f, MAXF)) > 0) {
			for (i = 0; i < n; i++) {
				struct vnic_pkt ref = { 0 };
				uint8_t buf[256];
				uint32_t id = frame_id(f[i]);
				unsigned int bits = 0;

				assert_true(id < 4000);
				ref.data = buf;
				write_frame(&ref, 200, id);
				for (j = 0; j < 200; j++)
					bits += (unsigned int)__builtin_popcount(buf[j] ^
										 f[i]->data[j]);
				assert_int_equal(memcmp(buf, f[i]->data, VNIC_ETH_HLEN), 0);
				out->ids[out->n] = id;
				out->flipped[out->n++] = (uint8_t)bits;
			}
			t.b->ops->rx_release(t.b, n);
		}
	}
	vnic_cable_stats(t.c, 0, &out->st);
	vnic_cable_destroy(t.c);
}

static void test_loss_reorder_corrupt(void **state)
{
	static struct fate x, y, z;
	struct vnic_cable_cfg cfg = { .seed = 42, .loss = 0.1, .reorder = 0.05, .corrupt = 0.02 };
	unsigned int i, inversions = 0, corrupted = 0;
	uint8_t seen[4000] = { 0 };

	(void)state;
	run_lossy(&cfg, &x);
	/* Every frame is delivered at most once, and lost + delivered + one
	 * possibly still held account for all of them. */
	for (i = 0; i < x.n; i++) {
		assert_true(x.ids[i] < 4000);
		assert_int_equal(seen[x.ids[i]]++, 0);
		if (i && x.ids[i] < x.ids[i - 1])
			inversions++;
		assert_true(x.flipped[i] <= 1);
		corrupted += x.flipped[i];
	}
	assert_true(x.st.drop_loss > 300 && x.st.drop_loss < 500);
	assert_true(x.st.reordered > 100 && x.st.reordered < 300);
	assert_true(x.st.corrupted > 40 && x.st.corrupted < 130);
	assert_int_equal(x.n, x.st.tx_frames);
	assert_true(4000 - x.st.drop_loss - x.n <= 1);
	/* A held frame goes right behind the next kept one: one inversion each
	 * (the last one may still be held). */
	assert_true(inversions == x.st.reordered || inversions + 1 == x.st.reordered);
	assert_int_equal(corrupted, x.st.corrupted);

	/* The same seed gives the same fates; another seed does not. */
	run_lossy(&cfg, &y);
	assert_int_equal(x.n, y.n);
	assert_memory_equal(x.ids, y.ids, sizeof(x.ids));
	assert_memory_equal(x.flipped, y.flipped, sizeof(x.flipped));
	cfg.seed = 43;
	run_lossy(&cfg, &z);
	assert_true(x.n != z.n || memcmp(x.ids, z.ids, sizeof(x.ids)) != 0);
}

static void test_ring_full(void **state)
{
	struct vnic_cable_cfg cfg = { .slots = 8 };
	struct vnic_cable_stats st;
	struct vnic_pkt *s[16], *f[16];
	struct cab t;

	(void)state;
	cab_open(&t, &cfg);
	assert_int_equal(send(t.a, 10, 64, 0), 8);
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 1), 0);
	assert_int_equal(t.b->ops->rx_peek(t.b, f, 16), 8);
	t.b->ops->rx_release(t.b, 3);
	assert_int_equal(send(t.a, 16, 64, 8), 3);
	assert_int_equal(t.b->ops->rx_peek(t.b, f, 16), 8);
	assert_int_equal(frame_id(f[7]), 10);
	t.b->ops->rx_release(t.b, 8);
	/* Reserved slots a commit leaves unused are free again after it. */
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 8), 8);
	write_frame(s[0], 64, 100);
	t.a->ops->tx_commit(t.a, s, 1, 8);
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 8), 7);
	t.a->ops->tx_commit(t.a, s, 0, 7);
	assert_int_equal(t.b->ops->rx_peek(t.b, f, 16), 1);
	assert_int_equal(frame_id(f[0]), 100);
	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.tx_full, 4);
	vnic_cable_destroy(t.c);
}

static void test_notify_armed(void **state)
{
	const struct vnic_irq_ops *irq;
	struct vnic_cable_stats st;
	struct cab t;

	(void)state;
	cab_open(&t, NULL);
	irq = t.b->ops->rx_irq;
	assert_false(irq->pending(t.b));
	send(t.a, 1, 64, 0);
	assert_int_equal(t.notified, 0);	/* starts disarmed */
	assert_true(irq->pending(t.b));
	irq->enable(t.b);
	send(t.a, 1, 64, 1);
	assert_int_equal(t.notified, 1);
	send(t.a, 3, 64, 2);
	assert_int_equal(t.notified, 1);	/* the notification disarmed it */
	irq->enable(t.b);
	irq->disable(t.b);
	send(t.a, 1, 64, 5);
	assert_int_equal(t.notified, 1);
	irq->enable(t.b);
	send(t.a, 1, 64, 6);
	assert_int_equal(t.notified, 2);
	/* A commit that drops everything does not notify. */
	irq->enable(t.b);
	{
		struct vnic_pkt *s[1];

		t.a->ops->tx_reserve(t.a, s, 1);
		write_frame(s[0], 10, 9);	/* runt: dropped */
		t.a->ops->tx_commit(t.a, s, 1, 1);
	}
	assert_int_equal(t.notified, 2);
	/* Notifications go only to the receiving end. */
	send(t.b, 1, 64, 0);
	assert_int_equal(t.notified, 2);
	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.notifies, 2);
	vnic_cable_destroy(t.c);
}

/* A superframe of len bytes as a device's send_super leaves it: GSO metadata set. */
static void write_super(struct vnic_pkt *p, uint32_t len, uint32_t id)
{
	write_frame(p, len, id);
	p->gso_type = VNIC_GSO_TCPV4;
	p->gso_size = 1448;
	p->gso_segs = (uint16_t)((len - 66 + 1447) / 1448);
	p->l2_len = VNIC_ETH_HLEN;
	p->l3_len = 20;
	p->l4_len = 32;
}

/*
 * cable tso: slots hold a superframe; one crosses whole with its metadata
 * once the receiver takes them, never before, never larger than it takes,
 * and never while corruption is on.
 */
static void test_tso_superframe(void **state)
{
	struct vnic_cable_cfg cfg = { .tso = true };
	struct vnic_cable_stats st;
	struct vnic_pkt *s[3], *f[MAXF];
	struct cab t;
	uint32_t i;

	(void)state;
	cab_open(&t, &cfg);
	assert_int_equal(t.a->mtu, 1500);
	assert_int_equal(t.a->frame_size, VNIC_CABLE_GSO_MAX);
	assert_int_equal(t.b->rx_gso_max_size, VNIC_CABLE_GSO_MAX);
	assert_int_equal(t.c->cfg.slots, VNIC_CABLE_TSO_DEFAULT_SLOTS);
	/* nobody took superframes yet: the sender must segment */
	assert_int_equal(t.a->ops->tx_gso_max(t.a), 0);
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 1), 1);
	write_super(s[0], 30000, 1);
	t.a->ops->tx_commit(t.a, s, 1, 1);
	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 0);
	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.drop_super, 1);

	/* b takes up to 40000 bytes: a's sends are told, b's are not */
	t.b->ops->rx_gso_take(t.b, 40000);
	assert_int_equal(t.a->ops->tx_gso_max(t.a), 40000);
	assert_int_equal(t.b->ops->tx_gso_max(t.b), 0);
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 3), 3);
	write_super(s[0], 30000, 2);
	write_super(s[1], 40001, 3);	/* larger than b takes */
	write_frame(s[2], 1514, 4);	/* an MTU frame between them */
	t.a->ops->tx_commit(t.a, s, 3, 3);
	assert_int_equal(t.b->ops->rx_peek(t.b, f, MAXF), 2);
	assert_int_equal(frame_id(f[0]), 2);
	assert_int_equal(f[0]->len, 30000);
	for (i = VNIC_ETH_HLEN + 12; i < 30000; i++)
		if (f[0]->data[i] != (uint8_t)(2 * 7 + i))
			fail_msg("superframe byte %u changed", i);
	assert_int_equal(f[0]->gso_type, VNIC_GSO_TCPV4);
	assert_int_equal(f[0]->gso_size, 1448);
	assert_int_equal(f[0]->l3_len, 20);
	assert_int_equal(f[0]->l4_len, 32);
	assert_int_equal(frame_id(f[1]), 4);
	assert_int_equal(f[1]->gso_size, 0);
	t.b->ops->rx_release(t.b, 2);
	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.tx_super, 1);
	assert_int_equal(st.drop_super, 2);
	assert_int_equal(st.tx_frames, 2);

	/* corruption on: MTU frames only, since a flipped bit in a superframe hides */
	cfg.corrupt = 0.5;
	assert_int_equal(vnic_cable_set(t.c, &cfg), 0);
	send(t.a, 1, 64, 5); /* the producer takes the settings at its commit */
	assert_int_equal(t.a->ops->tx_gso_max(t.a), 0);
	/* a reset on b's side: it takes none any more */
	cfg.corrupt = 0;
	assert_int_equal(vnic_cable_set(t.c, &cfg), 0);
	send(t.a, 1, 64, 6);
	assert_int_equal(t.a->ops->tx_gso_max(t.a), 40000);
	t.b->ops->rx_gso_take(t.b, 0);
	assert_int_equal(t.a->ops->tx_gso_max(t.a), 0);
	/* tso sizes the slots: not a live setting */
	cfg.tso = false;
	assert_int_equal(vnic_cable_set(t.c, &cfg), -EINVAL);
	vnic_cable_destroy(t.c);
}

/* Without tso a cable never offers or takes superframes: MTU frames only. */
static void test_tso_off(void **state)
{
	struct vnic_cable_stats st;
	struct vnic_pkt *s[1];
	struct cab t;

	(void)state;
	cab_open(&t, NULL);
	assert_int_equal(t.b->rx_gso_max_size, 0);
	t.b->ops->rx_gso_take(t.b, 40000);
	assert_int_equal(t.a->ops->tx_gso_max(t.a), 0);
	assert_int_equal(t.a->ops->tx_reserve(t.a, s, 1), 1);
	write_super(s[0], 1514, 1);
	s[0]->len = 1600; /* a device that ignored the answer: too long for the MTU */
	t.a->ops->tx_commit(t.a, s, 1, 1);
	vnic_cable_stats(t.c, 0, &st);
	assert_int_equal(st.drop_mtu, 1);
	assert_int_equal(st.tx_super, 0);
	vnic_cable_destroy(t.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_mtu_drop),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_loss_reorder_corrupt),
		cmocka_unit_test(test_ring_full),
		cmocka_unit_test(test_notify_armed),
		cmocka_unit_test(test_tso_superframe),
		cmocka_unit_test(test_tso_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
