/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/port/switch.c (and its white-box test): the layout of the
 * switch's shared memory and each process's private view of it.
 *
 *	sw_port[nports]		the port table: claimed (the parent's), armed
 *	sw_mac[VNIC_SWITCH_MACS]	the MAC table, open addressing, CAS per entry
 *	sw_ring[nports][nports]	ring[src][dst]: head (src's child), tail
 *				(dst's child), VNIC_SWITCH_RING_SLOTS slots
 */
#ifndef VNIC_PORT_SWITCH_INT_H
#define VNIC_PORT_SWITCH_INT_H

#include <assert.h>
#include <stdatomic.h>

#include "port.h"

enum {
	/* a slot: its length word on a line of its own, then the frame */
	SLOT_FRAME = (VNIC_SWITCH_MTU + VNIC_ETH_HLEN + VNIC_VLAN_HLEN + VNIC_CACHELINE - 1) &
		     ~(VNIC_CACHELINE - 1),
	SLOT_BYTES = VNIC_CACHELINE + SLOT_FRAME,
	RING_HDR = 2 * VNIC_CACHELINE,
	RING_BYTES = RING_HDR + VNIC_SWITCH_RING_SLOTS * SLOT_BYTES,
	RX_PEEK = 64,
	MAC_BITS = 10,
};

static_assert(VNIC_SWITCH_MACS == 1 << MAC_BITS, "the MAC table is indexed by a hash of MAC_BITS");
static_assert(VNIC_SWITCH_MAX_PORTS <= 64, "a commit keeps its destinations in a 64-bit mask");

/* A MAC table entry's key: valid, the port it is behind, the 48-bit address. */
#define KEY_VALID (1ull << 63)
#define KEY_MAC_MASK 0xffffffffffffull
#define KEY_PORT(k) ((unsigned int)((k) >> 48) & 0x7fff)

/* --- shared memory: what every process maps --------------------------------- */

struct sw_port {
	_Atomic uint32_t claimed;	/* the parent's: 1 while a child owns the port */
	/* the owner arms it when it sleeps; a producer takes it and rings */
	_Atomic uint32_t armed vnic_cacheline_aligned;
} vnic_cacheline_aligned;

struct sw_mac {
	_Atomic uint64_t key;		/* 0: free */
	_Atomic uint64_t seen_ns;	/* written before the key, when an entry is made */
};

struct sw_ring {
	_Atomic uint32_t head vnic_cacheline_aligned;	/* the source port's child */
	_Atomic uint32_t tail vnic_cacheline_aligned;	/* the destination's (or the parent) */
};

struct sw_slot {
	uint32_t len;			/* the producer's, published by head */
	uint8_t pad[VNIC_CACHELINE - sizeof(uint32_t)];
	uint8_t data[SLOT_FRAME];
};

static_assert(sizeof(struct sw_ring) == RING_HDR, "ring header");
static_assert(sizeof(struct sw_slot) == SLOT_BYTES, "slot layout");

/* --- private: each process's copy (the parent's, inherited by fork) ----------- */

struct vnic_switch {
	uint8_t *base;
	size_t size;
	uint32_t nports;
	uint64_t aging_ns;
	struct sw_port *ports;
	struct sw_mac *macs;
	uint8_t *rings;
	int efd[VNIC_SWITCH_MAX_PORTS];
	struct vnic_switch_stats st;	/* the parent's */
};

static inline struct sw_ring *ring(const struct vnic_switch *sw, unsigned int src, unsigned int dst)
{
	return (struct sw_ring *)(sw->rings + ((size_t)src * sw->nports + dst) * RING_BYTES);
}

static inline struct sw_slot *slot(struct sw_ring *r, uint32_t i)
{
	return (struct sw_slot *)((uint8_t *)r + RING_HDR +
				  (size_t)(i & (VNIC_SWITCH_RING_SLOTS - 1)) * SLOT_BYTES);
}

#endif /* VNIC_PORT_SWITCH_INT_H */
