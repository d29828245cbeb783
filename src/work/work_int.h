/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/work: the host (host.c, host_rx.c), its connections and
 * the TCP-like layer (tcpl.c), as the workloads (rr.c, stream.c) use them.
 *
 * Threads: everything in a host and its connections belongs to the host's
 * poller cpu (its netdev's tx queue 0 cpu), except
 *  - what the rx callback reads on the rx queue's cpu: the keys[] (constant
 *    after create) and the event queues (below);
 *  - the event queues, single producer (rx callback) single consumer
 *    (poller); their number only grows, at start;
 *  - counters kept with relaxed atomics so results can be read anywhere;
 *  - what start writes (from the netdev: MSS, offloads, tx queues, MACs)
 *    on the caller's thread before it publishes the started flag, which the
 *    poller reads before anything else.
 */
#ifndef VNIC_WORK_INT_H
#define VNIC_WORK_INT_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>

#include "work.h"

enum {
	HOST_BURST = 64,	/* packets built per poller run, one xmit_more batch */
	HOST_EVQ = 4096,	/* rx events per rx queue, a power of two */
	HOST_EV_DRAIN = 256,	/* events handled per poller run */
	HOST_MAX_QUEUES = 16,
	TCPL_HDR_MAX = VNIC_ETH_HLEN + 40 + 20,
	TCPL_TCP_HLEN = 20,
	/* tx cookie: connection index above, frame length below */
	TCPL_COOKIE_LEN_BITS = 17,
	TCPL_CLIENT_PORT = 40000,
	TCPL_SERVER_PORT = 5201,
};

static_assert(VNIC_PKT_MAX_LEN < (1 << TCPL_COOKIE_LEN_BITS), "frame length fits the cookie");
static_assert(VNIC_WORK_MAX_CONNS <= (1 << (32 - TCPL_COOKIE_LEN_BITS)), "index fits the cookie");

/* What the rx callback tells the poller about one received segment. */
struct rx_ev {
	uint32_t conn;
	uint32_t seq;
	uint32_t ack;
	uint32_t len;		/* payload bytes */
	uint64_t ts;		/* when NAPI delivered it */
	uint16_t segs;
	uint8_t flags;		/* TCP flags */
};

/* One rx queue's events. head: rx callback; tail: poller. */
struct evq {
	_Atomic uint32_t head vnic_cacheline_aligned;
	_Atomic uint32_t tail vnic_cacheline_aligned;
	uint32_t head_priv vnic_cacheline_aligned;	/* rx side's copy */
	struct rx_ev ev[HOST_EVQ] vnic_cacheline_aligned;
};

/* What a received frame must match to belong to connection i (the peer's
 * view: its addresses and ports as they arrive). Constant after create. */
struct conn_key {
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint32_t irs;		/* the peer's sequence number of stream offset 0 */
	uint32_t seed;		/* the peer's payload pattern */
};

enum conn_list { CONN_OFF, CONN_ACTIVE, CONN_WAITQ };

struct vnic_tcpl_host;

struct tcpl_conn {
	struct tcpl_conn *next;		/* on the active list or a queue's wait list */
	struct vnic_tcpl_host *host;
	uint32_t idx;
	uint16_t txq;
	uint8_t list;			/* enum conn_list */
	bool throttled;			/* waiting for tx_done (TSQ) */
	bool ack_pending;		/* received data not yet acknowledged */
	bool in_gap;			/* receiving beyond a hole */
	/* send side, as 64-bit stream offsets */
	uint64_t snd_una;		/* oldest unacknowledged */
	uint64_t snd_nxt;		/* next to send (rewound on timeout) */
	uint64_t snd_max;		/* highest ever sent */
	uint64_t snd_end;		/* what the application has queued */
	uint64_t rto_deadline;		/* 0: not armed */
	uint64_t rto_cur;
	uint32_t tsq_bytes;		/* frame bytes between xmit and tx_done */
	/* receive side */
	uint64_t rcv_nxt;
	uint64_t delivered;	/* rcv_nxt - origin, for readers elsewhere */
	uint64_t origin;		/* stream offset both ends start at (0 but in tests) */
	/* wire constants */
	uint32_t iss;			/* our sequence number of stream offset 0 */
	uint32_t seed;			/* our payload pattern */
	uint32_t hash;
	uint16_t ip_id;
	uint8_t hdr_len;
	uint8_t hdr[TCPL_HDR_MAX];	/* Ethernet + IP + TCP template */
};

/* The workload's side of a host, called on the host's cpu. */
struct tcpl_app {
	void (*start)(struct vnic_tcpl_host *h);	/* first run after start */
	void (*stop)(struct vnic_tcpl_host *h);		/* first run after stop */
	/* bytes more were delivered in order; ts: when NAPI delivered them */
	void (*deliver)(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint64_t bytes, uint64_t ts);
};

/* Start/stop flags shared by the two hosts of a workload. */
struct work_ctl {
	_Atomic uint32_t started;
	_Atomic uint32_t stop;
};

struct host_txq {
	struct vnic_pkt *stalled[HOST_BURST];	/* kept after VNIC_TX_BUSY, in order */
	unsigned int nstalled;
	bool stopped;				/* waiting for tx_wake */
	struct tcpl_conn *wait_head, *wait_tail; /* connections waiting for it */
};

/* Counters of the poller's cpu. */
struct host_stats {
	uint64_t tx_pkts, tx_segs, tx_bytes;
	uint64_t delivered;
	uint64_t retransmits, timeouts, lost, ooo, dup;
	uint64_t tx_busy, tx_nobuf, tx_dropped;
	uint64_t tsq_throttled;
	uint64_t tsq_max;	/* most tsq_bytes any connection had */
};

/* Counters of the rx callback's cpu. */
struct host_rx_stats {
	uint64_t pkts, segs;
	uint64_t bad_hdr, bad_csum, payload, no_conn, overflow;
};

struct vnic_tcpl_host {
	struct vnic_poller poller;
	struct vnic_netdev *dev;
	struct vnic_pkt_pool *pool;
	struct vnic_cpu *cpu;
	const struct tcpl_app *app;
	void *app_ctx;
	struct work_ctl *ctl;
	bool client;			/* demux by destination port (else source) */
	bool started_seen, stop_seen;
	/* configuration: from the options at create */
	bool ipv6;
	bool no_tso, no_csum_offload;
	/* from the netdev at start (a driver knows them once open) */
	bool csum_offload;
	uint32_t mtu;
	uint32_t mss;
	uint32_t max_seg;		/* payload of one packet: mss, or a superpacket's */
	uint32_t window;
	uint32_t tsq_budget;
	uint64_t rto_ns;
	uint64_t rto_max_ns;
	/* connections */
	struct tcpl_conn *conns;
	struct conn_key *keys;
	unsigned int nconns;
	struct tcpl_conn *active_head, *active_tail;
	/* tx */
	struct host_txq txq[HOST_MAX_QUEUES];
	struct vnic_pkt *burst[HOST_BURST];
	unsigned int nburst;
	uint64_t now;			/* clock read once per run */
	uint64_t next_rto;		/* earliest armed RTO deadline or later; 0 none */
	uint64_t retry_at;		/* pool was empty: try again then; 0 none */
	uint64_t tsq_total;
	struct host_stats st;
	_Atomic uint32_t quiet;		/* stopped and nothing outstanding */
	/* rx: one event queue per rx queue; evq[i] is set before nevq > i */
	struct evq *evq[HOST_MAX_QUEUES];
	_Atomic uint32_t nevq;
	struct host_rx_stats rx vnic_cacheline_aligned;
};

/* host.c. init checks and allocates; register (which cannot be undone: a
 * cpu has no way to drop a poller) adds the poller and attaches the host. */
int vnic_tcpl_host_init(struct vnic_tcpl_host *h, struct vnic_netdev *dev,
			struct vnic_pkt_pool *pool, unsigned int nconns, bool client,
			const struct vnic_tcpl_opts *opts, const struct tcpl_app *app,
			void *app_ctx, struct work_ctl *ctl);
/* 0 or -ENOSPC. */
int vnic_tcpl_host_register(struct vnic_tcpl_host *h, const char *name);
/*
 * Takes what the netdev says now (MTU, offloads, gso_max_size, queue
 * counts, MACs: a driver knows them only once open, after create) for h and
 * its connections; peer is the other host. At start, before the started
 * flag is published; the rx callback may run meanwhile.
 */
void vnic_tcpl_host_sync(struct vnic_tcpl_host *h, const struct vnic_tcpl_host *peer);
/* The event queues the rx callback may use (acquire: evq[0..n) are set). */
unsigned int vnic_tcpl_host_nevq(const struct vnic_tcpl_host *h);
void vnic_tcpl_host_fini(struct vnic_tcpl_host *h);
/* Makes the two hosts' connections peers of each other (index i with i). */
void vnic_tcpl_host_pair(struct vnic_tcpl_host *client, struct vnic_tcpl_host *server);
/* A connection wants to send: put it on the active list. */
void vnic_tcpl_kick(struct tcpl_conn *c);
bool vnic_tcpl_host_quiet(const struct vnic_tcpl_host *h);
/* Adds this host's counters into r. */
void vnic_tcpl_host_results(const struct vnic_tcpl_host *h, struct vnic_work_results *r);

/* host_rx.c: the vnic_host_ops rx callback. */
void vnic_tcpl_host_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n);

/* pair.c: the two hosts of a workload and their start/stop flags. */
struct work_pair {
	struct work_ctl ctl;
	struct vnic_tcpl_host a;	/* client or sender */
	struct vnic_tcpl_host b;	/* server or receiver */
};

int vnic_work_pair_init(struct work_pair *p, struct vnic_netdev *adev, struct vnic_pkt_pool *apool,
			struct vnic_netdev *bdev, struct vnic_pkt_pool *bpool, unsigned int nconns,
			const struct vnic_tcpl_opts *opts, const struct tcpl_app *aapp,
			const struct tcpl_app *bapp, void *app_ctx, const char *aname,
			const char *bname);
void vnic_work_pair_fini(struct work_pair *p);
void vnic_work_pair_start(struct work_pair *p);
void vnic_work_pair_stop(struct work_pair *p);
bool vnic_work_pair_quiesced(const struct work_pair *p);
void vnic_work_pair_results(const struct work_pair *p, struct vnic_work_results *r);
/*
 * For tests: connection i of host a starts at stream offset off with initial
 * sequence number iss_a - i * 2^16 (and of host b, iss_b - i * 2^16), so the
 * sequence numbers and the pattern's 2^32 period (stream offsets) can be made
 * to wrap independently, early in a run. After create, before start, with
 * no traffic yet.
 */
void vnic_work_pair_set_origin(struct work_pair *p, uint32_t iss_a, uint32_t iss_b, uint64_t off);
struct work_pair *vnic_rr_pair(struct vnic_rr *rr);
struct work_pair *vnic_stream_pair(struct vnic_stream *st);

/* tcpl.c */
void vnic_tcpl_conn_init(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint32_t idx,
			 const uint8_t *smac, const uint8_t *dmac, bool client);
/* Start: MACs from the netdevs, the tx queue from its queue count now. */
void vnic_tcpl_conn_sync(struct tcpl_conn *c, const uint8_t *smac, const uint8_t *dmac);
/* See vnic_work_pair_set_origin; the peer's key must be made again. */
void vnic_tcpl_conn_set_origin(struct tcpl_conn *c, uint32_t iss, uint64_t off);
/* Fills key with what frames from c look like on arrival at its peer. */
void vnic_tcpl_conn_key(const struct tcpl_conn *c, struct conn_key *key);
/* The application queues bytes more to send. */
void vnic_tcpl_send(struct tcpl_conn *c, uint64_t bytes);
/* Stops sending new data: what was sent is still delivered. */
void vnic_tcpl_close_send(struct tcpl_conn *c);
bool vnic_tcpl_wants_tx(const struct tcpl_conn *c);
bool vnic_tcpl_busy(const struct tcpl_conn *c);
/* Handles one received segment. */
void vnic_tcpl_rx(struct tcpl_conn *c, const struct rx_ev *ev);
/* Checks c's retransmission timer; returns its deadline (0 none). */
uint64_t vnic_tcpl_timer(struct tcpl_conn *c);

enum tcpl_tx {
	TCPL_TX_NONE,		/* nothing to send */
	TCPL_TX_SENT,		/* one packet built */
	TCPL_TX_TSQ,		/* data waits for tx_done */
	TCPL_TX_NOBUF,		/* pool empty */
};
/* Builds at most one packet of c (data, else a pure ACK) into *out. */
enum tcpl_tx vnic_tcpl_build(struct tcpl_conn *c, struct vnic_pkt **out);

#endif /* VNIC_WORK_INT_H */
