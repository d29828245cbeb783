// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the switch of `vnic server --switch` (src/port/
 * switch.c; docs/ARCHITECTURE.md section 11): four ports in one process,
 * and the input a list of operations on them, among which a hostile child
 * writing any byte of the shared memory:
 *
 *   send     a frame from a port: destination and source among the ports'
 *            MACs, broadcast, multicast and a stranger; any length, bad ones
 *            included; a payload that says which frame it is
 *   receive  a peek of up to n frames on a port, then a release of some
 *   scribble a byte anywhere in the mapping: port table, MAC table, ring
 *            heads and tails, slot lengths and frames
 *   recycle  a port's owner goes away and a new one opens it
 *   arm      a port's consumer arms its doorbell
 *   learn    the MAC table by hand, at a time of the input's choosing
 *
 * What must hold: every frame peeked lies inside one slot of the mapping
 * and has a length a device may take (an Ethernet header up to MTU 1500
 * plus a tag); a peek returns at most what was asked; a lookup names a
 * port of the switch or none; and as long as nothing was scribbled, every
 * frame received is one that was sent, byte for byte.
 *
 * Like tests/port/test_switch.c it includes switch_int.h: the attacker
 * writes the shared layout. Corpus: fuzz/corpus/switch/.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "port/switch_int.h"

#include "check.h"

enum { NPORTS = 4, MAX_OPS = 256, FRAME_MAX = VNIC_SWITCH_MTU + VNIC_ETH_HLEN + VNIC_VLAN_HLEN };

struct env {
	struct vnic_switch *sw;
	struct vnic_wire *w[NPORTS];
	uint8_t mac[8][6];	/* the ports', broadcast, multicast, a stranger, a group */
	bool scribbled;
	uint64_t now;
};

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct in *in)
{
	uint8_t b;

	if (!in->n)
		return 0;
	b = *in->p++;
	in->n--;
	return b;
}

static uint32_t take32(struct in *in)
{
	return (uint32_t)take(in) | (uint32_t)take(in) << 8 | (uint32_t)take(in) << 16 |
	       (uint32_t)take(in) << 24;
}

/* The payload of frame id: each byte says which frame and where it is. */
static uint8_t pattern(uint8_t id, uint32_t i)
{
	return (uint8_t)(id * 31 + i);
}

static void op_send(struct env *e, struct in *in)
{
	unsigned int from = take(in) % NPORTS;
	const uint8_t *dst = e->mac[take(in) % 8], *src = e->mac[take(in) % 8];
	uint32_t len = (take(in) | (uint32_t)take(in) << 8) % (FRAME_MAX + 64);
	uint8_t id = take(in);
	struct vnic_wire *w = e->w[from];
	struct vnic_pkt *slot;

	FZ_CHECK(w->ops->tx_reserve(w, &slot, 1) == 1);
	/* a runt is still written whole into the slot: its length is the test */
	memcpy(slot->data, dst, 6);
	memcpy(slot->data + 6, src, 6);
	slot->data[12] = 0x08;
	slot->data[13] = id;
	for (uint32_t i = VNIC_ETH_HLEN; i < len && i < slot->buf_size; i++)
		slot->data[i] = pattern(id, i);
	slot->len = len;
	w->ops->tx_commit(w, &slot, 1, 1);
}

static void op_receive(struct env *e, struct in *in)
{
	unsigned int p = take(in) % NPORTS, want = take(in) % 80, k;
	struct vnic_wire *w = e->w[p];
	const uint8_t *lo = e->sw->base, *hi = e->sw->base + e->sw->size;
	struct vnic_pkt *f[80];
	unsigned int n = w->ops->rx_peek(w, f, want);

	FZ_CHECK(n <= want);
	for (unsigned int i = 0; i < n; i++) {
		FZ_CHECK(f[i]->len >= VNIC_ETH_HLEN && f[i]->len <= FRAME_MAX);
		FZ_CHECK(f[i]->data >= lo && f[i]->data + f[i]->len <= hi);
		FZ_CHECK(f[i]->len <= f[i]->buf_size);
		if (e->scribbled)
			continue;
		for (uint32_t j = VNIC_ETH_HLEN; j < f[i]->len; j++)
			FZ_CHECK(f[i]->data[j] == pattern(f[i]->data[13], j));
	}
	k = n ? take(in) % (n + 1) : 0;
	w->ops->rx_release(w, k);
}

static void op_scribble(struct env *e, struct in *in)
{
	uint32_t off = take32(in);
	uint8_t v = take(in);

	/* most of the mapping is slots: aim at the headers and tables too */
	off %= (take(in) & 1) ? (uint32_t)e->sw->size : (uint32_t)(e->sw->rings - e->sw->base) +
								  4 * RING_HDR;
	e->sw->base[off] = v;
	e->scribbled = true;
}

static void op_recycle(struct env *e, struct in *in)
{
	unsigned int p = take(in) % NPORTS;

	vnic_switch_port_close(e->w[p]);
	e->w[p] = NULL;
	vnic_switch_port_release(e->sw, p);
	FZ_CHECK(!vnic_switch_port_claim(e->sw, p));
	FZ_CHECK(!vnic_switch_port_open(e->sw, p, NULL, &e->w[p]));
}

static void op_learn(struct env *e, struct in *in)
{
	const uint8_t *m = e->mac[take(in) % 8];
	unsigned int p = take(in) % (NPORTS + 1);
	bool moved;
	int to;

	e->now += (uint64_t)take(in) << (take(in) % 40);
	vnic_switch_learn(e->sw, m, p, e->now, &moved);
	to = vnic_switch_lookup(e->sw, m, e->now);
	FZ_CHECK(to >= -1 && to < NPORTS);
}

static bool env_make(struct env *e)
{
	struct vnic_switch_cfg cfg = { .ports = NPORTS };
	static const uint8_t others[4][6] = {
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01},
		{0x02, 0x00, 0x00, 0x00, 0x00, 0x99},
		{0x33, 0x33, 0x00, 0x00, 0x00, 0x02},
	};

	memset(e, 0, sizeof(*e));
	if (vnic_switch_create(&e->sw, &cfg))
		return false;
	for (unsigned int p = 0; p < NPORTS; p++) {
		vnic_switch_port_mac(p, e->mac[p]);
		memcpy(e->mac[NPORTS + p], others[p], 6);
		FZ_CHECK(!vnic_switch_port_claim(e->sw, p));
		FZ_CHECK(!vnic_switch_port_open(e->sw, p, NULL, &e->w[p]));
	}
	e->now = 1000000000ull;
	return true;
}

static void env_free(struct env *e)
{
	for (unsigned int p = 0; p < NPORTS; p++)
		vnic_switch_port_close(e->w[p]);
	vnic_switch_destroy(e->sw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct env e;

	if (!env_make(&e))
		return 0;
	for (unsigned int i = 0; i < MAX_OPS && in.n; i++) {
		switch (take(&in) % 6) {
		case 0:
			op_send(&e, &in);
			break;
		case 1:
			op_receive(&e, &in);
			break;
		case 2:
			op_scribble(&e, &in);
			break;
		case 3:
			op_recycle(&e, &in);
			break;
		case 4: {
			struct vnic_wire *w = e.w[take(&in) % NPORTS];

			w->ops->rx_irq->enable(w);
			break;
		}
		default:
			op_learn(&e, &in);
		}
	}
	env_free(&e);
	return 0;
}
