// SPDX-License-Identifier: MIT
/*
 * The AF_XDP wire's ring handling against a fake kernel (afxdp_int.h): the
 * test writes the RX and COMPLETION rings and reads the FILL and TX rings
 * as the kernel would, and counts the wire's sendto kicks as datagrams on
 * a socket pair. No root, no interface:
 *
 *   - every receive frame starts on the FILL ring, each once;
 *   - rx: good descriptors are handed out in place, byte for byte, and
 *     their frames go back to the FILL ring in one refill per release;
 *   - bad descriptors (outside the receive half, across a frame's end,
 *     with options, past the UMEM, runts, too long) are counted by reason
 *     and never handed out; a receive frame among them goes back to the
 *     FILL ring, a frame that is not one does not;
 *   - tx: one kick per commit however many frames, none when the kernel
 *     has not asked for one (XDP_USE_NEED_WAKEUP); a refill kicks the FILL
 *     ring only when asked;
 *   - completions: good ones recycle frames, bad ones (a receive frame, past
 *     the UMEM, more than were sent) are counted and dropped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "port/afxdp_int.h"
#include "port/port.h"

enum { MTU = 1500, HEADROOM = 256 };

struct fx {
	struct vnic_afxdp_fake *k;
	struct vnic_wire *w;
	uint8_t *umem;
	int sv[2]; /* [0] the wire's kick fd, [1] the "kernel's" */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->k = calloc(1, sizeof(*f->k));
	assert_non_null(f->k);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, f->sv), 0);
	assert_int_equal(vnic_afxdp_fake_create(&f->w, f->k, f->sv[0], MTU, AFX_TX_RING, &f->umem),
			 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	vnic_afxdp_destroy(f->w);
	close(f->sv[0]);
	close(f->sv[1]);
	free(f->k);
	free(f);
	return 0;
}

static uint64_t stat_of(struct vnic_wire *w, const char *name)
{
	struct vnic_counter c[48];
	unsigned int n = vnic_afxdp_counters(w, c, 48);
	const struct vnic_counter *e = vnic_counter_find(c, n < 48 ? n : 48, name);

	if (!e)
		fail_msg("no counter %s", name);
	return e ? e->value : 0;
}

/* The kicks the wire made since the last call: datagrams on the kernel's end. */
static unsigned int kicks(struct fx *f)
{
	char b;
	unsigned int n = 0;

	while (recv(f->sv[1], &b, 1, 0) >= 0)
		n++;
	assert_int_equal(errno, EAGAIN);
	return n;
}

/* Takes every address the wire put on the FILL ring, as the kernel does; returns how many. */
static unsigned int fill_take(struct fx *f, uint64_t *out, unsigned int max)
{
	unsigned int n = 0;

	while (f->k->fill_cons != __atomic_load_n(&f->k->fill_prod, __ATOMIC_ACQUIRE)) {
		uint64_t a = f->k->fill[f->k->fill_cons & (AFX_FILL_RING - 1)];

		if (n < max)
			out[n] = a;
		n++;
		__atomic_store_n(&f->k->fill_cons, f->k->fill_cons + 1, __ATOMIC_RELEASE);
	}
	return n;
}

/* A descriptor onto the RX ring, published at once. */
static void rx_put(struct fx *f, uint64_t addr, uint32_t len, uint32_t options)
{
	struct xdp_desc *d = &f->k->rx[f->k->rx_prod & (AFX_RX_RING - 1)];

	d->addr = addr;
	d->len = len;
	d->options = options;
	__atomic_store_n(&f->k->rx_prod, f->k->rx_prod + 1, __ATOMIC_RELEASE);
}

/* A received frame: receive frame i, len bytes of pattern seed at the headroom. */
static uint64_t rx_frame(struct fx *f, unsigned int i, uint32_t len, uint8_t seed)
{
	uint64_t addr = AFX_RX_BASE + (uint64_t)i * AFX_FRAME + HEADROOM;

	for (uint32_t b = 0; b < len; b++)
		f->umem[addr + b] = (uint8_t)(seed + b);
	rx_put(f, addr, len, 0);
	return addr;
}

static void assert_pattern(const struct vnic_pkt *p, uint32_t len, uint8_t seed)
{
	assert_int_equal(p->len, len);
	for (uint32_t b = 0; b < len; b++)
		assert_int_equal(p->data[b], (uint8_t)(seed + b));
}

/* Every receive frame is on the FILL ring after create, each once, at a frame's start. */
static void test_fill_at_start(void **state)
{
	struct fx *f = *state;
	static uint64_t got[AFX_RX_FRAMES];
	static uint8_t seen[AFX_RX_FRAMES];

	assert_int_equal(fill_take(f, got, AFX_RX_FRAMES), AFX_RX_FRAMES);
	for (unsigned int i = 0; i < AFX_RX_FRAMES; i++) {
		assert_true(got[i] < (uint64_t)AFX_RX_FRAMES * AFX_FRAME);
		assert_int_equal(got[i] % AFX_FRAME, 0);
		assert_int_equal(seen[got[i] / AFX_FRAME]++, 0);
	}
	assert_int_equal(stat_of(f->w, "rx_fill_kicks"), 0);
	assert_int_equal(stat_of(f->w, "tx_budget"), AFX_TX_RING);
}

/* Good frames in place, in order; their frames back on the FILL ring in one refill. */
static void test_rx_in_place(void **state)
{
	struct fx *f = *state;
	struct vnic_pkt *p[8];
	uint64_t addr[5], back[8];
	uint32_t prod;

	fill_take(f, back, 0);
	for (unsigned int i = 0; i < 5; i++)
		addr[i] = rx_frame(f, 10 + i, 60 + i, (uint8_t)i);
	assert_true(f->w->ops->rx_irq->pending(f->w));
	assert_int_equal(f->w->ops->rx_peek(f->w, p, 8), 5);
	for (unsigned int i = 0; i < 5; i++) {
		assert_ptr_equal(p[i]->data, f->umem + addr[i]); /* no copy */
		assert_pattern(p[i], 60 + i, (uint8_t)i);
	}
	/* a release of three: one refill of three, the rest seen again */
	prod = f->k->fill_prod;
	f->w->ops->rx_release(f->w, 3);
	assert_int_equal(f->k->fill_prod - prod, 3);
	assert_int_equal(fill_take(f, back, 8), 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(back[i] / AFX_FRAME, addr[2 - i] / AFX_FRAME);
	assert_int_equal(f->k->rx_cons, 3);
	assert_int_equal(f->w->ops->rx_peek(f->w, p, 8), 2);
	assert_pattern(p[0], 63, 3);
	f->w->ops->rx_release(f->w, 2);
	assert_int_equal(fill_take(f, back, 8), 2);
	assert_int_equal(f->w->ops->rx_peek(f->w, p, 8), 0);
	assert_false(f->w->ops->rx_irq->pending(f->w));
	assert_int_equal(stat_of(f->w, "rx_frames"), 5);
}

/* One bad descriptor per rule, each between two good frames. */
static const struct bad_desc {
	const char *name;
	uint64_t addr;
	uint32_t len, options;
	const char *counter;
	bool refilled; /* a receive frame of ours: back to the FILL ring */
} bad_descs[] = {
	{"1 a transmit frame", AFX_TX_BASE + HEADROOM, 100, 0, "rx_drop_bad_desc", false},
	{"2 past the UMEM", AFX_UMEM_BYTES + HEADROOM, 100, 0, "rx_drop_bad_desc", false},
	{"3 across a frame's end", 7 * AFX_FRAME + AFX_FRAME - 50, 100, 0, "rx_drop_bad_desc", true},
	{"4 a multi-buffer part (XDP_PKT_CONTD)", 7 * AFX_FRAME + HEADROOM, 100, 1,
	 "rx_drop_bad_desc", true},
	{"5 a runt", 7 * AFX_FRAME + HEADROOM, 13, 0, "rx_drop_runt", true},
	{"6 longer than the wire's frame", 7 * AFX_FRAME + HEADROOM, MTU + 18 + 1, 0,
	 "rx_drop_too_big", true},
	{"7 at the top of the address space", UINT64_MAX - 10, 64, 0, "rx_drop_bad_desc", false},
};

static void test_rx_bad_descs(void **state)
{
	struct fx *f = *state;
	struct vnic_pkt *p[8];
	uint64_t back[8];

	fill_take(f, back, 0);
	for (size_t i = 0; i < sizeof(bad_descs) / sizeof(bad_descs[0]); i++) {
		const struct bad_desc *b = &bad_descs[i];
		uint64_t before = stat_of(f->w, b->counter);
		unsigned int n;

		print_message("%s\n", b->name);
		rx_frame(f, 1, 64, 1);
		rx_put(f, b->addr, b->len, b->options);
		rx_frame(f, 2, 64, 2);
		/* the good one before it, alone: the bad one leads the next peek */
		assert_int_equal(f->w->ops->rx_peek(f->w, p, 8), 1);
		assert_pattern(p[0], 64, 1);
		f->w->ops->rx_release(f->w, 1);
		assert_int_equal(stat_of(f->w, b->counter), before);
		/* the bad one is dropped, counted once, and the next frame follows */
		assert_int_equal(f->w->ops->rx_peek(f->w, p, 8), 1);
		assert_pattern(p[0], 64, 2);
		assert_int_equal(stat_of(f->w, b->counter), before + 1);
		/* peeked again: not counted again */
		assert_int_equal(f->w->ops->rx_peek(f->w, p, 8), 1);
		assert_int_equal(stat_of(f->w, b->counter), before + 1);
		f->w->ops->rx_release(f->w, 1);
		n = fill_take(f, back, 8);
		assert_int_equal(n, b->refilled ? 3u : 2u);
		for (unsigned int j = 0; j < n && j < 8; j++)
			assert_true(back[j] < (uint64_t)AFX_RX_FRAMES * AFX_FRAME);
	}
	assert_int_equal(stat_of(f->w, "rx_frames"), 2 * (sizeof(bad_descs) / sizeof(bad_descs[0])));
}

/* Fills the reserved slots with frames of len bytes, pattern seed + slot. */
static void tx_fill(struct vnic_pkt **s, unsigned int n, uint32_t len)
{
	for (unsigned int i = 0; i < n; i++) {
		for (uint32_t b = 0; b < len; b++)
			s[i]->data[b] = (uint8_t)(i + b);
		s[i]->len = len;
	}
}

/* The kernel's take of the TX ring: checks each frame, completes it (or not). */
static unsigned int tx_take(struct fx *f, uint32_t len, bool complete)
{
	unsigned int n = 0;

	while (f->k->tx_cons != __atomic_load_n(&f->k->tx_prod, __ATOMIC_ACQUIRE)) {
		const struct xdp_desc *d = &f->k->tx[f->k->tx_cons & (AFX_TX_RING - 1)];

		assert_true(d->addr >= AFX_TX_BASE && d->addr + d->len <= AFX_UMEM_BYTES);
		assert_int_equal(d->len, len);
		for (uint32_t b = 0; b < len; b++)
			assert_int_equal(f->umem[d->addr + b], (uint8_t)(n + b));
		if (complete) {
			f->k->comp[f->k->comp_prod & (AFX_COMP_RING - 1)] = d->addr;
			__atomic_store_n(&f->k->comp_prod, f->k->comp_prod + 1, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&f->k->tx_cons, f->k->tx_cons + 1, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

/*
 * One kick per commit of many frames when the kernel asks (copy mode
 * always does), none when it does not; the refill's kick likewise.
 */
static void test_tx_kicks(void **state)
{
	struct fx *f = *state;
	struct vnic_pkt *s[64];
	uint64_t back[8];

	/* a zero-copy driver awake: frames go, no syscall */
	assert_int_equal(f->w->ops->tx_reserve(f->w, s, 64), 64);
	tx_fill(s, 64, 200);
	f->w->ops->tx_commit(f->w, s, 64, 64);
	assert_int_equal(kicks(f), 0);
	assert_int_equal(stat_of(f->w, "tx_kicks"), 0);
	assert_int_equal(tx_take(f, 200, true), 64);

	/* asked: one sendto for the whole burst */
	f->k->tx_flags = XDP_RING_NEED_WAKEUP;
	for (unsigned int round = 0; round < 40; round++) {
		assert_int_equal(f->w->ops->tx_reserve(f->w, s, 64), 64);
		tx_fill(s, 64, 300);
		f->w->ops->tx_commit(f->w, s, 64, 64);
		assert_int_equal(kicks(f), 1);
		assert_int_equal(tx_take(f, 300, true), 64);
	}
	assert_int_equal(stat_of(f->w, "tx_kicks"), 40);
	assert_int_equal(stat_of(f->w, "tx_frames"), 41 * 64);
	/* the fake kernel took nothing during the kicks: each commit left its frames */
	assert_int_equal(stat_of(f->w, "tx_stalls"), 40);

	/* a commit of nothing with nothing pending does not kick */
	assert_int_equal(f->w->ops->tx_reserve(f->w, s, 4), 4);
	f->w->ops->tx_commit(f->w, s, 0, 4);
	assert_int_equal(kicks(f), 0);

	/* the FILL ring: a wake-up only when the kernel asks for one */
	fill_take(f, back, 0);
	rx_frame(f, 3, 64, 3);
	assert_int_equal(f->w->ops->rx_peek(f->w, s, 8), 1);
	f->w->ops->rx_release(f->w, 1);
	assert_int_equal(stat_of(f->w, "rx_fill_kicks"), 0);
	f->k->fill_flags = XDP_RING_NEED_WAKEUP;
	rx_frame(f, 4, 64, 4);
	assert_int_equal(f->w->ops->rx_peek(f->w, s, 8), 1);
	f->w->ops->rx_release(f->w, 1);
	assert_int_equal(stat_of(f->w, "rx_fill_kicks"), 1);
}

/* Completions recycle frames; a bad one is counted, and never becomes a frame to send from. */
static void test_tx_completions(void **state)
{
	struct fx *f = *state;
	struct vnic_pkt *s[64];
	static const uint64_t bad[] = {
		AFX_RX_BASE + 5 * AFX_FRAME, /* a receive frame */
		AFX_UMEM_BYTES,		     /* past the UMEM */
		UINT64_MAX,
	};

	/* frames never completed run out: reserve gives what is left, then none */
	for (unsigned int sent = 0; sent < AFX_TX_FRAMES; sent += 64) {
		assert_int_equal(f->w->ops->tx_reserve(f->w, s, 64), 64);
		tx_fill(s, 64, 100);
		f->w->ops->tx_commit(f->w, s, 64, 64);
		assert_int_equal(tx_take(f, 100, false), 64);
	}
	assert_int_equal(f->w->ops->tx_reserve(f->w, s, 64), 0);
	f->w->ops->tx_commit(f->w, s, 0, 0);
	assert_true(stat_of(f->w, "tx_full") >= 1);
	/* bad completions: dropped and counted, no frame comes of them */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f->k->comp[f->k->comp_prod & (AFX_COMP_RING - 1)] = bad[i];
		__atomic_store_n(&f->k->comp_prod, f->k->comp_prod + 1, __ATOMIC_RELEASE);
	}
	assert_int_equal(f->w->ops->tx_reserve(f->w, s, 64), 0);
	f->w->ops->tx_commit(f->w, s, 0, 0);
	assert_int_equal(stat_of(f->w, "tx_bad_completions"), 3);
	/* one good completion, inside its frame: that frame, at its start */
	f->k->comp[f->k->comp_prod & (AFX_COMP_RING - 1)] = AFX_TX_BASE + 9 * AFX_FRAME + 40;
	__atomic_store_n(&f->k->comp_prod, f->k->comp_prod + 1, __ATOMIC_RELEASE);
	assert_int_equal(f->w->ops->tx_reserve(f->w, s, 64), 1);
	assert_ptr_equal(s[0]->head, f->umem + AFX_TX_BASE + 9 * AFX_FRAME);
	f->w->ops->tx_commit(f->w, s, 0, 1);
	assert_int_equal(stat_of(f->w, "tx_completions"), 4);
	assert_int_equal(stat_of(f->w, "tx_bad_completions"), 3);
	assert_int_equal(stat_of(f->w, "tx_drop_ring_full"), 0);
}

/* The fake's own refusals. */
static void test_fake_refusals(void **state)
{
	struct vnic_afxdp_fake *k = calloc(1, sizeof(*k));
	struct vnic_wire *w = (void *)k;
	uint8_t *umem;

	(void)state;
	assert_non_null(k);
	assert_int_equal(vnic_afxdp_fake_create(&w, k, -1, MTU, 0, &umem), -EINVAL);
	assert_int_equal(vnic_afxdp_fake_create(&w, k, 0, 67, 0, &umem), -EINVAL);
	assert_int_equal(vnic_afxdp_fake_create(&w, NULL, 0, MTU, 0, &umem), -EINVAL);
	assert_int_equal(vnic_afxdp_fake_create(&w, k, 0, MTU, 0, &umem), 0);
	/* no budget given: the kernel's own */
	assert_int_equal(stat_of(w, "tx_budget"), AFX_KERNEL_TX_BATCH);
	assert_string_equal(vnic_afxdp_mode_note(w), "");
	vnic_afxdp_destroy(w);
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fill_at_start, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rx_in_place, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rx_bad_descs, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tx_kicks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tx_completions, fx_setup, fx_teardown),
		cmocka_unit_test(test_fake_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
