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

#include <pthread.h>
#include <stdatomic.h>

#include "port.h"

struct cable_end;

/*
 * The settings vnic_cable_set changes at run time, published to both
 * producers by a sequence count: odd while a setter writes, read by each
 * producer once per commit (one load when nothing changed), the fields
 * themselves relaxed atomics so that a read racing a write is torn at worst,
 * and then retried.
 */
struct cable_live {
	_Atomic uint32_t seq;
	_Atomic uint64_t rate_bps;
	_Atomic uint64_t delay_ns;
	_Atomic uint64_t seed;
	_Atomic uint64_t loss_thr;
	_Atomic uint64_t reorder_thr;
	_Atomic uint64_t corrupt_thr;
};

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
		uint64_t tx_super;
		uint64_t drop_super;
		/* the settings in force, from the live copy (cable_live) */
		uint32_t live_seq;	/* the copy's sequence they were taken at */
		bool timed;		/* rate or delay configured */
		uint64_t rate_bps;
		uint64_t delay_ns;
		uint64_t seed;
		uint64_t loss_thr;	/* probabilities scaled to 2^64 */
		uint64_t reorder_thr;
		uint64_t corrupt_thr;
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
	unsigned int idx;		/* dir[idx]: queue pair idx / 2 */
	struct vnic_wire *rx_wire;	/* the end that receives this direction */
	struct cable_live *live;
	uint32_t mtu;
	/*
	 * cable tso: the largest superframe the receiving device takes, 0 for
	 * none; written by that device (rx_gso_take, rare: its driver's
	 * negotiation), read by the producer per superpacket and per commit.
	 */
	_Atomic uint32_t rx_gso;
	bool tso;
	struct vnic_pkt_pool pool;
};

struct cable_end {
	struct vnic_wire wire;
	struct cable_dir *tx;		/* the direction this end produces into */
	struct cable_dir *rx;		/* the direction this end consumes */
	struct vnic_cable *cable;
	unsigned int side;		/* 0 or 1 */
};

/*
 * A ring pair per queue pair (cfg.queues): dir[2q + i] runs from end i to
 * end 1 - i of queue pair q, end[2q + i] is side i's wire of queue pair q.
 */
struct vnic_cable {
	struct cable_dir *dir;
	struct cable_end *end;
	/* mtu and slots fixed at create; the rest as last set (under lock) */
	struct vnic_cable_cfg cfg;
	pthread_mutex_t lock;		/* setters, and readers of cfg */
	struct cable_live live vnic_cacheline_aligned;
};

extern const struct vnic_wire_ops vnic_cable_wire_ops;

/*
 * The producer's generator, from seed: each direction draws its own stream,
 * so one side's traffic does not change the fate of the other's frames.
 */
static inline void cable_dir_seed(struct cable_dir *d, uint64_t seed)
{
	d->p.seed = seed;
	d->p.rng = seed + (d->idx + 1) * 0x9e3779b97f4a7c15ull;
}

#endif /* VNIC_PORT_CABLE_INT_H */
