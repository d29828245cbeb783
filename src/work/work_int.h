/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/work: the host (host.c, host_rx.c), its connections and
 * the TCP-like layer (tcpl.c, with reasm.c, sack.c and rtt.c), as the
 * workloads (rr.c, stream.c) use them.
 *
 * Threads: everything in a host and its connections belongs to the host's
 * poller cpu (its netdev's tx queue 0 cpu, or its queue's when the workload
 * is spread over queue pairs: struct work_queue), except
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
	/* SACK (RFC 2018): without timestamps, 4 blocks fit the 40 bytes of
	 * options; two NOPs align them. */
	TCPL_SACK_BLOCKS = 4,
	TCPL_OPT_SACK = 5,
	TCPL_OPT_NOP = 1,
	TCPL_SACK_OPT_MAX = 4 + 8 * TCPL_SACK_BLOCKS,
	TCPL_DUPTHRESH = 3,	/* RFC 5681 / RFC 6675 DupThresh */
	/* Ranges kept per connection: the receiver's out-of-order ones, and the
	 * sender's SACKed and resent ones (about two per hole). At 1% loss and
	 * 1% reordering a 1 MiB window had at most 18 and 34 in use. */
	TCPL_OFO_MAX = 32,
	TCPL_SB_MAX = 64,
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
	uint8_t nsack;		/* SACK blocks below (0 without the option) */
	uint32_t sack[TCPL_SACK_BLOCKS][2];	/* wire left and right edges */
};

static_assert(sizeof(struct rx_ev) <= 64, "an event stays one cache line");

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

/*
 * The RTT estimator and retransmission timeout of RFC 6298 (rtt.c), in ns:
 * SRTT and RTTVAR from the samples of segments never resent (Karn),
 * RTO = SRTT + max(G, 4 RTTVAR) within [min, max], doubled per expiry.
 */
struct tcpl_rto_limits {
	uint64_t min;		/* floor: RFC 6298 (2.4) allows below 1 s */
	uint64_t max;		/* ceiling of the backed-off RTO */
	uint64_t init;		/* before the first sample (RFC 6298 (2.1)) */
	uint64_t pto_slack;	/* added to the loss probe's 2 SRTT: scheduling slack */
};

struct tcpl_rtt {
	uint64_t srtt;		/* 0: no sample yet */
	uint64_t rttvar;
	uint32_t backoff;	/* expiries since the last sample */
};

void vnic_tcpl_rtt_init(struct tcpl_rtt *r);
/* A measurement m (ns, >= 1) of a segment sent once: RFC 6298 (2.2), (2.3). */
void vnic_tcpl_rtt_sample(struct tcpl_rtt *r, uint64_t m);
/* The timer expired: RFC 6298 (5.5), until the next sample. */
void vnic_tcpl_rtt_backoff(struct tcpl_rtt *r);
/* The RTO now, backoff included, within [lim->min, lim->max]. */
uint64_t vnic_tcpl_rtt_rto(const struct tcpl_rtt *r, const struct tcpl_rto_limits *lim);
/* The tail loss probe timeout (RFC 8985 7.2): 2 SRTT + lim->pto_slack; 0
 * without a sample (no probe then). */
uint64_t vnic_tcpl_rtt_pto(const struct tcpl_rtt *r, const struct tcpl_rto_limits *lim);

/* A range of stream offsets [start, end). */
struct tcpl_range {
	uint64_t start, end;
};

/*
 * The receiver's out-of-order ranges (reasm.c): bytes above rcv_nxt that
 * arrived, were verified against the pattern by the rx callback, and wait
 * for the hole below them. Only their offsets are kept: the payload is a
 * function of the offset, checked on arrival, so a range is as good as the
 * bytes. Sorted, disjoint and not touching; all above rcv_nxt.
 */
struct tcpl_ofo {
	uint64_t start, end;
	uint32_t stamp;		/* when last grown: SACK reports the freshest first */
};

struct tcpl_reasm {
	uint32_t n;
	uint32_t clock;
	struct tcpl_range dsack;	/* a duplicate to report (RFC 2883); empty: none */
	struct tcpl_ofo r[TCPL_OFO_MAX];
};

enum reasm_res {
	REASM_IN_ORDER,		/* at rcv_nxt: *delivered bytes move up */
	REASM_OOO,		/* beyond a hole: kept */
	REASM_DUP,		/* every byte received before */
	REASM_FULL,		/* beyond a hole, but no range left: not kept */
};

void vnic_tcpl_reasm_init(struct tcpl_reasm *q);
/*
 * Bytes [start, end) arrived (end > start). *rcv_nxt moves over them and
 * over any kept range they join; *delivered says by how much (0 unless
 * REASM_IN_ORDER). *dup is set when some of the bytes were received before
 * (they are then also the pending D-SACK).
 */
enum reasm_res vnic_tcpl_reasm_add(struct tcpl_reasm *q, uint64_t *rcv_nxt, uint64_t start,
				   uint64_t end, uint64_t *delivered, bool *dup);
/* Anything to SACK (a range kept or a duplicate to report)? */
static inline bool vnic_tcpl_reasm_sack_pending(const struct tcpl_reasm *q)
{
	return q->n || q->dsack.end > q->dsack.start;
}

/*
 * The SACK blocks of the next ACK, at most max: the pending D-SACK first
 * (then forgotten), then the ranges kept, the most recently grown first
 * (RFC 2018 section 4). Returns how many.
 */
unsigned int vnic_tcpl_reasm_sack(struct tcpl_reasm *q, struct tcpl_range *out, unsigned int max);

/*
 * The sender's scoreboard (sack.c): what lies between snd_una and snd_nxt,
 * as ranges SACKed by the receiver and ranges resent and not yet known to
 * have arrived; everything else was sent once and is either in flight or
 * lost. Sorted and disjoint. When it is full the highest range is forgotten:
 * SACK is advice, so that costs at most a needless resend.
 */
enum sb_kind {
	SB_SACKED,
	SB_RXT,			/* resent on a timer (probe, RTO) */
	SB_RXT_FAST,		/* resent on SACK or duplicate-ACK evidence */
};

struct tcpl_sb_ent {
	uint64_t start, end;
	uint64_t mark;		/* resent: snd_nxt when it was, so anything SACKed
				 * from there on was sent after it */
	uint32_t kind;		/* enum sb_kind */
};

struct tcpl_sb {
	uint32_t n;		/* at most TCPL_SB_MAX between calls */
	struct tcpl_sb_ent e[TCPL_SB_MAX + 2];	/* + the pieces of one split */
};

/*
 * A connection's loss recovery state. Kept apart from the connections, in
 * an array of its own that nothing writes until a segment is lost or
 * reordered: its pages cost memory only then (it is a few KiB a connection).
 */
struct tcpl_rec {
	struct tcpl_reasm reasm;
	struct tcpl_sb sb;
};

/*
 * Marks [start, end) as kind (mark for resent ranges). Returns the bytes
 * that were not SACKed before and now are (for SB_SACKED: new SACK
 * information); *recovered gets the segments of mss bytes of fast-resent
 * ranges it now says arrived.
 */
uint64_t vnic_tcpl_sb_mark(struct tcpl_sb *sb, uint64_t start, uint64_t end, enum sb_kind kind,
			   uint64_t mark, uint32_t mss, uint64_t *recovered);
/* snd_una moved up to una: forgets what is below. Returns the segments of
 * fast-resent ranges thereby acknowledged. */
uint64_t vnic_tcpl_sb_ack(struct tcpl_sb *sb, uint64_t una, uint32_t mss);
/*
 * RFC 6675 IsLost(): the offset below which every byte not SACKed has at
 * least thresh segments (ceil(bytes / mss) per SACKed range) SACKed above
 * it; una if none.
 */
uint64_t vnic_tcpl_sb_lost_below(const struct tcpl_sb *sb, uint64_t una, uint32_t mss,
				 unsigned int thresh);
/* Resent ranges with thresh segments (as above) SACKed at or above their
 * mark, all sent after them, are lost again: forgets them so they are
 * resent. Returns how many ranges. */
unsigned int vnic_tcpl_sb_lost_resends(struct tcpl_sb *sb, uint32_t mss, unsigned int thresh);
/* Forgets every resend (a timer expired: they count as lost). */
void vnic_tcpl_sb_forget_resends(struct tcpl_sb *sb);
/* The first bytes in [from, limit) neither SACKed nor resent, at most max
 * of them: false if none. */
bool vnic_tcpl_sb_next_hole(const struct tcpl_sb *sb, uint64_t from, uint64_t limit, uint32_t max,
			    struct tcpl_range *out);
/* The last up to max bytes below end not SACKed (the tail a loss probe
 * resends), at or above from: false if none. */
bool vnic_tcpl_sb_last_unsacked(const struct tcpl_sb *sb, uint64_t from, uint64_t end,
				uint32_t max, struct tcpl_range *out);
/* Bytes SACKed in all, and bytes resent and not known to have arrived. */
uint64_t vnic_tcpl_sb_sacked(const struct tcpl_sb *sb);
uint64_t vnic_tcpl_sb_resent(const struct tcpl_sb *sb);

/* The SACK option, as tcpl.c writes it and host_rx.c reads it. */
unsigned int vnic_tcpl_sack_put(uint8_t *opt, const uint32_t (*blocks)[2], unsigned int n);
/* Reads the SACK blocks of a TCP header's options (malformed: none). */
unsigned int vnic_tcpl_sack_get(const uint8_t *opt, uint32_t len, uint32_t (*blocks)[2]);

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
	bool has_lost;			/* some bytes are known lost and not resent */
	bool tlp_out;			/* a loss probe is out, nothing acked since */
	uint8_t dupacks;		/* RFC 5681 duplicate ACKs in a row */
	/* send side, as 64-bit stream offsets */
	uint64_t snd_una;		/* oldest unacknowledged */
	uint64_t snd_nxt;		/* next new byte: all below were sent once */
	uint64_t snd_end;		/* what the application has queued */
	uint64_t lost_end;		/* bytes below it not SACKed are lost */
	uint64_t timer_point;		/* snd_nxt when a timer last declared bytes
					 * lost: resends below it are the timer's */
	uint64_t rxt_ts;		/* when the last resend was built */
	uint64_t probe_start, probe_end; /* a loss probe to send (equal: none) */
	uint64_t rto_at;		/* retransmission timer, 0: not armed */
	uint64_t pto_at;		/* loss probe timer, 0: not armed */
	uint64_t rtt_end;		/* the timed segment's end, 0: none (Karn) */
	uint64_t rtt_ts;		/* when it was sent */
	struct tcpl_rtt rtt;
	uint32_t tsq_bytes;		/* frame bytes between xmit and tx_done */
	/* receive side */
	uint64_t rcv_nxt;
	uint64_t rcv_high;		/* end of the highest byte received */
	uint64_t delivered;	/* rcv_nxt - origin, for readers elsewhere */
	uint64_t origin;		/* stream offset both ends start at (0 but in tests) */
	/* wire constants */
	uint32_t iss;			/* our sequence number of stream offset 0 */
	uint32_t seed;			/* our payload pattern */
	uint32_t hash;
	uint16_t ip_id;
	uint8_t hdr_len;
	uint8_t hdr[TCPL_HDR_MAX];	/* Ethernet + IP + TCP template */
	struct tcpl_rec *rec;		/* this connection's in the host's array */
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
	uint64_t ooo_dropped, fast_retransmits, sack_recovered, probes, spurious;
	uint64_t tx_busy, tx_nobuf, tx_dropped;
	uint64_t tsq_throttled;
	uint64_t tsq_max;	/* most tsq_bytes any connection had */
};

/* Counters of the rx callback's cpu. */
struct host_rx_stats {
	uint64_t pkts, segs;
	uint64_t bad_hdr, bad_csum, payload, no_conn, overflow;
};

struct work_mux;

struct vnic_tcpl_host {
	struct vnic_poller poller;
	struct vnic_netdev *dev;
	struct vnic_pkt_pool *pool;
	struct vnic_cpu *cpu;
	/* spread (struct work_queue): the one queue pair it uses, else NULL and 0 */
	struct work_mux *mux;
	unsigned int queue;
	uint32_t base;			/* the workload's index of conns[0] */
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
	struct tcpl_rto_limits rto;
	/* connections */
	struct tcpl_conn *conns;
	struct conn_key *keys;
	struct tcpl_rec *rec;		/* one per connection, zeroed, written lazily */
	unsigned int nconns;
	struct tcpl_conn *active_head, *active_tail;
	/* tx */
	struct host_txq txq[HOST_MAX_QUEUES];
	struct vnic_pkt *burst[HOST_BURST];
	unsigned int nburst;
	uint64_t now;			/* clock read once per run */
	uint64_t next_rto;		/* earliest armed timer (RTO or probe) or
					 * earlier; 0 none */
	uint64_t retry_at;		/* pool was empty: try again then; 0 none */
	uint64_t tsq_total;
	struct host_stats st;
	_Atomic uint32_t quiet;		/* stopped and nothing outstanding */
	/* rx: one event queue per rx queue; evq[i] is set before nevq > i */
	struct evq *evq[HOST_MAX_QUEUES];
	_Atomic uint32_t nevq;
	struct host_rx_stats rx vnic_cacheline_aligned;
};

/*
 * A netdev whose queue pairs run on different cpus (vnic bench --queues N)
 * has a host per queue pair, each on its queue's cpu: the netdev is
 * attached to this, which hands each callback to the host of its queue, so
 * that a host's state stays on one cpu. Frames on a queue without a host
 * are dropped and counted (stray[queue], written on that queue's cpu).
 */
struct work_mux {
	struct vnic_tcpl_host *host[HOST_MAX_QUEUES];
	uint64_t stray[HOST_MAX_QUEUES];
};

/*
 * Where the hosts of one queue pair of a spread workload run: on tx queue
 * q's cpu of each netdev, sending on tx queue q only; the peer's replies
 * come back on rx queue q (a device with a wire per queue pair puts ring
 * q's frames there, docs/ARCHITECTURE.md section 4.3). base numbers the
 * connections apart across the queue pairs (ports, sequence numbers,
 * patterns). NULL where a workload takes one: a host per netdev, on tx
 * queue 0's cpu, flows hashed over the queues of that cpu.
 */
struct work_queue {
	unsigned int q;
	uint32_t base;
	struct work_mux *mux[2];	/* the client's (or sender's) netdev, the server's */
};

/* host.c. init checks and allocates; register (which cannot be undone: a
 * cpu has no way to drop a poller) adds the poller and attaches the host
 * (to its work_queue's mux when it has one). */
int vnic_tcpl_host_init(struct vnic_tcpl_host *h, struct vnic_netdev *dev,
			struct vnic_pkt_pool *pool, unsigned int nconns, bool client,
			const struct vnic_tcpl_opts *opts, const struct tcpl_app *app,
			void *app_ctx, struct work_ctl *ctl, const struct work_queue *wq);
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
			const char *bname, const struct work_queue *wq);
/*
 * The queue pairs of a spread workload: n pairs (at most nconns; 1 is the
 * plain pair above), connections split among them in blocks, pair q's hosts
 * on queue q and sending from apools[q] and bpools[q]. 0 or as
 * vnic_work_pair_init; on error nothing is left.
 */
struct work_pairs {
	unsigned int n;
	struct work_pair *pair;		/* [n] */
	struct work_mux mux[2];
};

int vnic_work_pairs_init(struct work_pairs *ps, unsigned int n, struct vnic_netdev *adev,
			 struct vnic_pkt_pool *const *apools, struct vnic_netdev *bdev,
			 struct vnic_pkt_pool *const *bpools, unsigned int nconns,
			 const struct vnic_tcpl_opts *opts, const struct tcpl_app *aapp,
			 const struct tcpl_app *bapp, void *app_ctx, const char *aname,
			 const char *bname);
void vnic_work_pairs_fini(struct work_pairs *ps);
void vnic_work_pairs_start(struct work_pairs *ps);
void vnic_work_pairs_stop(struct work_pairs *ps);
bool vnic_work_pairs_quiesced(const struct work_pairs *ps);
void vnic_work_pairs_results(const struct work_pairs *ps, struct vnic_work_results *r);
/* Connection i of the workload: its pair's host b's (the server's, the receiver's). */
const struct tcpl_conn *vnic_work_pairs_b_conn(const struct work_pairs *ps, unsigned int i);
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
/* Fires c's timers if due (probe, RTO); returns the next deadline (0 none). */
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
