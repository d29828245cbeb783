/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/port/tap*.c: the layout of a TAP port.
 *
 * Ownership by thread:
 *   struct tap_queue   TAP queue q's reader: netdev tx queue q's cpu, and
 *                      its pool (one per cpu at least)
 *   tap->tx[t]         netdev tx queue t: tx_done and tx_wake, on its tx cpu
 *   tap->out[r]        netdev rx queue r's delivery, on its rx cpu
 *   tap->mirror[i]     a buffer per rx cpu, for a fraglist aggregate mirrored
 *   state, nactive, offloads, mirror: atomics, any thread
 * Counters have a single writer and are stored with relaxed atomics, so the
 * counters call may read them from anywhere.
 */
#ifndef VNIC_PORT_TAP_INT_H
#define VNIC_PORT_TAP_INT_H

#include <net/if.h>

#include "port.h"

enum tap_state {
	TAP_CREATED = 0, /* not reading yet; deliveries are written */
	TAP_RUNNING = 1,
	TAP_STOPPED = 2, /* not reading; deliveries dropped */
};

enum {
	TAP_NOBUF_RETRY_NS = 50000, /* pool empty: look again after 50 us */
	TAP_KERNEL_GSO_MAX = 65536, /* a TAP's gso_max_size (GSO_LEGACY_MAX_SIZE) */
};

struct tap_in_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t gso_packets;
	uint64_t csum_partial;
	uint64_t csum_sw;
	uint64_t bursts;
	uint64_t lone_bursts;	/* ended after one frame, without the EAGAIN read */
	uint64_t xmit_more;
	uint64_t stops;
	uint64_t resumes;
	uint64_t read_errors;
	uint64_t no_buffer;
	uint64_t queue_fallback;
	uint64_t drop_stopped;
	uint64_t drops[VNIC_TAP_DROP_MAX];
};

struct tap_queue {
	struct vnic_tap *tap;
	struct vnic_poller poller;
	struct vnic_cpu *cpu;
	struct vnic_pkt_pool *pool; /* what this reader reads into (its cpu's) */
	int fd;
	unsigned int idx;
	uint32_t watching; /* events given to vnic_cpu_mod_fd last */
	bool detached;	   /* TUNSETQUEUE IFF_DETACH_QUEUE in force */
	/*
	 * Backpressure, per netdev tx queue: stalled[t] was refused with
	 * VNIC_TX_BUSY, held[t] is the packet read behind it for the same
	 * queue (it goes right after). Outside a burst, held[t] is set only
	 * together with stalled[t].
	 */
	struct vnic_pkt *stalled[VNIC_TAP_MAX_QUEUES];
	struct vnic_pkt *held[VNIC_TAP_MAX_QUEUES];
	uint32_t held_mask;
	unsigned int nstalled;
	bool lone;		/* the last burst was one frame, then empty */
	uint64_t lone_idles;	/* vnic_cpu_idles when it ended */
	char name[IFNAMSIZ + 16];
	struct tap_in_stats st;
} vnic_cacheline_aligned;

struct tap_tx_stats {
	uint64_t busy;
	uint64_t wakes;
	uint64_t done;
	uint64_t done_dropped;
} vnic_cacheline_aligned;

struct tap_out_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t gso_packets;
	uint64_t csum_partial;
	uint64_t data_valid;
	uint64_t drop_again;
	uint64_t drop_down;
	uint64_t drop_error;
	uint64_t drop_bad_meta;
	uint64_t drop_stopped;
	uint64_t short_writes;
} vnic_cacheline_aligned;

struct vnic_tap {
	struct vnic_netdev *dev;
	struct vnic_pkt_pool *pool;
	const uint8_t *rss_key;
	uint32_t batch;
	uint32_t hdr_len; /* VNIC_VNET_HDR_LEN, or 0 without vnet header */
	bool big_bufs;	  /* a pool packet holds a 64 KiB superpacket */
	unsigned int nq;
	uint32_t mtu; /* last set on the interface */
	char ifname[IFNAMSIZ];
	_Atomic int state;	       /* enum tap_state */
	_Atomic unsigned int nactive;  /* queues read and written: min(nq, tx queues) */
	_Atomic unsigned int offloads; /* TUN_F_* in force */
	_Atomic(vnic_tap_mirror_fn) mirror_fn;
	_Atomic(void *) mirror_ctx;
	/* a fraglist aggregate made whole for the mirror: a buffer per rx cpu */
	struct {
		const struct vnic_cpu *cpu;
		uint8_t *buf;
	} mirror[VNIC_TAP_MAX_QUEUES];
	unsigned int nmirror;
	struct tap_queue q[VNIC_TAP_MAX_QUEUES];
	struct tap_tx_stats tx[VNIC_TAP_MAX_QUEUES];
	struct tap_out_stats out[VNIC_TAP_MAX_QUEUES];
};

extern const struct vnic_host_ops vnic_tap_host_ops;
int vnic_tap_read_poll(struct vnic_poller *p, int budget);
/* Owner's thread: frees what the queue keeps (stop, destroy). */
void vnic_tap_queue_drain(struct tap_queue *tq);

#endif /* VNIC_PORT_TAP_INT_H */
