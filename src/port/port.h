/* SPDX-License-Identifier: MIT */
/*
 * src/port: what the two ends of vnic attach to. Public header of the layer.
 *
 *   cable.c   the in-process cable: two struct vnic_wire ends joined by a
 *             single-producer single-consumer ring of frame slots per
 *             direction, with an optional rate limit, one-way delay and
 *             seeded loss, reordering and corruption.
 *
 * Threads: per direction, one producer (the device tx engine of the sending
 * end) and one consumer (the device rx engine of the receiving end), each on
 * its own thread or both on one. Slots never change hands except through the
 * ring's indices, so no buffer is freed on a thread other than its owner's.
 */
#ifndef VNIC_PORT_H
#define VNIC_PORT_H

#include <stdint.h>

#include "core/core.h"

enum vnic_cable_limits {
	VNIC_CABLE_DEFAULT_MTU = 1500,
	VNIC_CABLE_MIN_MTU = 68,	/* RFC 791 minimum */
	VNIC_CABLE_MAX_MTU = 65535 - VNIC_ETH_HLEN - VNIC_VLAN_HLEN,
	VNIC_CABLE_DEFAULT_SLOTS = 1024,
	VNIC_CABLE_MAX_SLOTS = 1 << 20,
	/*
	 * Bytes a frame occupies on the line besides the frame itself: 7 B
	 * preamble + 1 B start delimiter + 4 B FCS + 12 B inter-frame gap.
	 * Frames shorter than the 60 B Ethernet minimum are padded first, so
	 * every frame costs at least 84 B of line time, as on real Ethernet.
	 */
	VNIC_CABLE_LINE_OVERHEAD = 24,
	VNIC_CABLE_MIN_FRAME = 60,
};

/*
 * Zero fields take the defaults (mtu 1500, 1024 slots); everything else is
 * off when zero. Probabilities are in [0, 1] and are drawn per frame from a
 * generator seeded by seed (each direction its own stream), so the same
 * frames committed in the same batches meet the same fate.
 */
struct vnic_cable_cfg {
	uint32_t mtu;		/* L3 MTU; a slot holds mtu + 14 + one 4 B tag */
	uint32_t slots;		/* per direction, a power of two */
	uint64_t rate_bps;	/* line rate in bit/s, 0 = unlimited */
	uint64_t delay_ns;	/* one-way propagation delay */
	uint64_t seed;
	double loss;		/* frame dropped */
	double reorder;		/* frame held back and sent right after the next
				 * one committed (it waits for that commit) */
	double corrupt;		/* one bit flipped after the L2 header */
};

/*
 * Per direction, from end `dir` to end 1 - dir. Each counter has a single
 * writer (the producer, except rx_frames: the consumer) and is kept with
 * relaxed atomics, so it may be read from any thread at any time.
 */
struct vnic_cable_stats {
	uint64_t tx_frames;	/* committed and put on the line */
	uint64_t tx_bytes;
	uint64_t rx_frames;	/* released by the receiver */
	uint64_t drop_mtu;	/* longer than the MTU (or shorter than an Ethernet header) */
	uint64_t drop_loss;	/* lost on purpose */
	uint64_t reordered;	/* frames held back behind the next one */
	uint64_t corrupted;
	uint64_t tx_full;	/* reserve calls that got fewer slots than asked */
	uint64_t notifies;	/* receiver notified (its irq was armed) */
};

struct vnic_cable;

/*
 * Allocates the cable, its two slot pools and rings. cfg NULL = defaults.
 * 0, -EINVAL (bad mtu, slots not a power of two, probability out of [0, 1])
 * or -ENOMEM.
 */
int vnic_cable_create(struct vnic_cable **c, const struct vnic_cable_cfg *cfg);
/* Frees everything. Both ends must be idle: no thread inside their ops. */
void vnic_cable_destroy(struct vnic_cable *c);
/*
 * End 0 or 1 (NULL for anything else). A device transmits on its end with
 * tx_reserve/tx_commit and receives what the other end sent with
 * rx_peek/rx_release. The receiving device sets w->notify and notify_ctx
 * before traffic starts (usually vnic_napi_schedule of its rx engine) and
 * uses w->ops->rx_irq as that napi's irq source with irq_ctx = w.
 *
 * Notification: the irq starts disarmed. While armed, the first commit by
 * the other end disarms it and calls notify once, even if the frame is not
 * ready yet (delay, rate): the receiver then reads rx_next_ns and sets a
 * poller timer. rx_irq->pending(w) is true when a frame is ready now, or when
 * a frame arrived that the receiver has not yet seen through rx_next_ns or
 * rx_peek (so a re-arm cannot miss a frame that needs a timer).
 */
struct vnic_wire *vnic_cable_end(struct vnic_cable *c, unsigned int end);
/* Counters of the direction from end dir to the other. */
void vnic_cable_stats(const struct vnic_cable *c, unsigned int dir, struct vnic_cable_stats *st);
/* The configuration in force (defaults filled in). */
const struct vnic_cable_cfg *vnic_cable_config(const struct vnic_cable *c);

#endif /* VNIC_PORT_H */
