/* SPDX-License-Identifier: MIT */
/*
 * A loopback netdev for the workload tests: two struct vnic_netdev joined
 * back to back. xmit puts the packet on the peer's inbound ring (made
 * visible at the doorbell: a call without xmit_more, or a refusal), calls
 * tx_done at once (or holds it until the test releases it), and the peer's
 * rx poller hands what arrived to its host's rx callback, through GRO if
 * asked. A superpacket the peer cannot take is segmented here with
 * vnic_gso_segment; a PARTIAL checksum can be resolved here so that the
 * receiver verifies it in software. Loss, reordering and corruption are
 * seeded, or a script decides which frames are lost. Single-threaded: both
 * cpus run in manual mode on the test thread.
 */
#ifndef VNIC_TEST_LOOPNET_H
#define VNIC_TEST_LOOPNET_H

#include "core/core.h"
#include "work/work.h"

enum { LOOPNET_MAX_RING = 4096, LOOPNET_MAX_HELD = 8192, LOOPNET_MAX_TXQ = 4 };

/*
 * The RTO floor of a path that must not depend on how fast this machine
 * is: the RTO is at least this, and a tail loss probe waits 2 SRTT and
 * floor / 32 (work.h, rto_min_ns), here 10 s. A 10 s floor left the probe
 * at 312 ms, which a test thread descheduled on a loaded machine (ASan,
 * CI) reaches: one spurious probe per session.
 */
#define LOOPNET_NO_TIMER_RTO_MIN_NS 320000000000ull

/* How a loopnet transmits (to its peer) and receives. */
struct loopnet_cfg {
	uint32_t features;	/* offered to the host (VNIC_NETIF_F_*) */
	uint32_t mtu;		/* 0: 1500 */
	bool peer_gso;		/* the peer's host gets superpackets as they are */
	bool resolve_csum;	/* PARTIAL resolved here: the receiver sees NONE */
	bool gro;		/* deliver through vnic_deliver (GRO, list) */
	bool hold_tx_done;	/* completions wait for loopnet_release_tx_done */
	unsigned int ring;	/* inbound ring of the peer: 0 = 1024 */
	double drop, reorder, corrupt;
	uint64_t seed;
	/* A scripted link: sees every frame (after segmentation) before the
	 * random rolls, and drops it by returning true. */
	bool (*script)(void *ctx, const struct vnic_pkt *frame);
	void *script_ctx;
};

struct loopnet_stats {
	uint64_t xmits, busy, doorbells, dropped, reordered, corrupted, segmented, delivered;
	/* what the host handed to xmit */
	uint64_t gso_pkts;	/* superpackets */
	uint64_t partial;	/* checksum left PARTIAL */
	uint32_t max_len;	/* longest packet */
	uint32_t max_gso_size;
	/* xmits per tx queue: the test may raise dev.num_tx_queues (up to
	 * LOOPNET_MAX_TXQ); all queues share one ring, stop and wake */
	uint64_t txq_xmits[LOOPNET_MAX_TXQ];
};

struct loopnet_held {
	uint32_t cookie, bytes;
};

struct loopnet {
	struct vnic_netdev dev;
	struct loopnet *peer;
	struct loopnet_cfg cfg;
	struct vnic_cpu *cpu;
	unsigned int rx_queue;		/* what the host's rx callback is told: 0 */
	uint64_t rng;
	bool stopped;			/* our tx queue */
	/* inbound: frames from the peer */
	struct vnic_pkt *ring[LOOPNET_MAX_RING];
	unsigned int cap;
	uint32_t head, pend, tail;	/* visible [tail, head), written [head, pend) */
	struct vnic_poller rx_poller;
	struct vnic_deliver deliver;
	struct vnic_pkt_pool seg_pool;	/* our segments */
	struct vnic_pkt_pool agg_pool;	/* GRO aggregates we deliver */
	struct loopnet_held held[LOOPNET_MAX_HELD];
	unsigned int nheld;
	uint64_t held_bytes;
	struct loopnet_stats st;
};

/* Everything a workload test needs: two cpus, two loopnets, two host pools. */
struct testbed {
	struct vnic_cpu cpu[2];
	struct vnic_cpu *cpus[2];
	struct loopnet *ln[2];
	struct vnic_pkt_pool pool[2];
};

/* pool_buf 0 = big enough for 64 KiB superpackets. */
void testbed_init(struct testbed *tb, const struct loopnet_cfg *a, const struct loopnet_cfg *b,
		  uint32_t pool_count, uint32_t pool_buf);
void testbed_fini(struct testbed *tb);
/* Steps both cpus until done(ctx); fails the test after timeout_s seconds. */
void testbed_run(struct testbed *tb, bool (*done)(void *ctx), void *ctx, unsigned int timeout_s);
/* Steps both cpus until nothing is scheduled (timers may still be pending). */
void testbed_idle(struct testbed *tb);
/* Completes up to n held packets (all if n is 0); returns how many. */
unsigned int loopnet_release_tx_done(struct loopnet *l, unsigned int n);

#endif
