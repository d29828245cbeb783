/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/port/cable*.c: the layout of a cable. One direction is a
 * ring of slots[] (pointers to preallocated packets of the direction's own
 * pool) indexed by free-running counters:
 *
 *	tail <= i < head			frames on the line (consumer's)
 *	head <= i < head + held			a frame held back to be reordered
 *	head + held <= i < tail + nslots	empty slots (producer's)
 *
 * The producer may swap slot pointers inside its own region (to close the
 * gaps left by dropped frames and to put a held frame behind the next one);
 * the consumer only reads the published region. head is published with
 * release by the producer and read with acquire by the consumer, tail the
 * other way round, so a slot's packet is written by exactly one side at a
 * time.
 */
#ifndef VNIC_PORT_CABLE_INT_H
#define VNIC_PORT_CABLE_INT_H

#include "port.h"

struct cable_end;

struct cable_dir {
	/* written by the producer, read by the consumer */
	_Atomic uint32_t head vnic_cacheline_aligned;
	/* written by the consumer, read by the producer */
	_Atomic uint32_t tail vnic_cacheline_aligned;
	/* the receiver's irq: armed by the consumer, disarmed by either side */
	_Atomic uint32_t armed vnic_cacheline_aligned;

	/* producer only */
	struct {
		uint32_t head;		/* private copy of head */
		uint32_t tail_cache;
		uint32_t held;		/* 0 or 1 */
		uint32_t reserved;	/* slots given out by the last reserve */
		uint64_t rng;
		uint64_t link_free_ns;	/* when the line finishes the last frame */
		uint64_t line_rem;	/* remainder of ns division, keeps the rate exact */
		uint64_t tx_frames;
		uint64_t tx_bytes;
		uint64_t drop_mtu;
		uint64_t drop_loss;
		uint64_t reordered;
		uint64_t corrupted;
		uint64_t tx_full;
		uint64_t notifies;
	} p vnic_cacheline_aligned;

	/* consumer only */
	struct {
		uint32_t seen;		/* head as the consumer last looked at it */
		uint32_t peeked;
		uint64_t rx_frames;
	} c vnic_cacheline_aligned;

	/* read-mostly */
	struct vnic_pkt **slots vnic_cacheline_aligned;
	uint32_t mask;
	bool timed;			/* rate or delay configured */
	uint64_t loss_thr;		/* probabilities scaled to 2^64 */
	uint64_t reorder_thr;
	uint64_t corrupt_thr;
	struct vnic_wire *rx_wire;	/* the end that receives this direction */
	const struct vnic_cable_cfg *cfg;
	struct vnic_pkt_pool pool;
};

struct cable_end {
	struct vnic_wire wire;
	struct cable_dir *tx;		/* the direction this end produces into */
	struct cable_dir *rx;		/* the direction this end consumes */
};

struct vnic_cable {
	struct cable_dir dir[2];	/* dir[i]: from end i to end 1 - i */
	struct cable_end end[2];
	struct vnic_cable_cfg cfg;
};

extern const struct vnic_wire_ops vnic_cable_wire_ops;

#endif /* VNIC_PORT_CABLE_INT_H */
