/* SPDX-License-Identifier: MIT */
/*
 * src/work: the built-in workloads. Public header of the layer.
 *
 *   rr.c       request/response: N sessions, one transaction outstanding each
 *              (like netperf TCP_RR), latency per transaction.
 *   stream.c   bulk transfer: M flows, GSO superpackets when the netdev has
 *              TSO, limited by a TSQ-like byte budget and the window.
 *   tcpl.c     a minimal TCP-like layer under both: sequence numbers,
 *              cumulative ACKs with SACK, fixed window, fast retransmit,
 *              tail loss probes, an RFC 6298 retransmission timer.
 *   reasm.c    its receiver's out-of-order ranges and the SACK blocks.
 *   sack.c     its sender's scoreboard: what was SACKed, lost, resent.
 *   rtt.c      its RTT estimator and retransmission timeout (RFC 6298).
 *   host.c     a host on a netdev: its poller, tx bursts with xmit_more,
 *              stop/wake, TSQ accounting, the rx callback.
 *   pattern.c  the payload pattern every receiver checks byte by byte.
 *   hist.c     log-linear latency histogram.
 *   results.c  results to rates.
 *
 * Each workload has two hosts: a client (or sender) attached to one netdev
 * and a server (or receiver) attached to another. A host runs as a poller on
 * its netdev's tx queue 0 cpu, sends from a packet pool only it uses (on that
 * cpu), and takes what NAPI delivers in its rx callback on the rx queue's cpu.
 * Spread over queue pairs (vnic_rr_create_queues), a workload has two hosts
 * per queue pair, each on its queue's cpu.
 * The rx callback parses, verifies the checksum (in software unless the NIC
 * vouched for it) and every payload byte, then hands a small event to the
 * host's poller through a single-producer single-consumer queue per rx queue,
 * so all connection state lives on the poller's cpu and every received buffer
 * is freed on the cpu that received it.
 *
 * Frames are real: Ethernet + IPv4 (no options, DF, incrementing ID) or IPv6 +
 * TCP (flags ACK and PSH at the end of a message; a SACK option on ACKs while
 * the receiver holds data beyond a hole), checksum left PARTIAL when the
 * netdev has VNIC_NETIF_F_CSUM, else complete. Connections start established
 * (no handshake, both ends SACK-capable); there is no congestion control.
 *
 * Lifecycle:
 *	create (before the cpus start: it registers pollers with vnic_cpu_add
 *	  and attaches to the netdevs)
 *	open the netdevs (a driver negotiates its offloads, MTU and queues)
 *	start (reads the netdevs) -> traffic -> stop -> wait for quiesced
 *	  -> stop the cpus
 *	results -> destroy
 */
#ifndef VNIC_WORK_H
#define VNIC_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "net/net.h"

/* ---------------------------------------------------------------------------
 * Log-linear histogram (hist.c): exact below 128, then 128 linear buckets per
 * power of two, so any value is within 1/128 (0.8 %) of its bucket. Covers
 * all of uint64_t. Single-threaded.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_HIST_SUB_BITS = 7,
	VNIC_HIST_SUB = 1 << VNIC_HIST_SUB_BITS,
	VNIC_HIST_BUCKETS = (64 - VNIC_HIST_SUB_BITS + 1) * VNIC_HIST_SUB,
};

struct vnic_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t buckets[VNIC_HIST_BUCKETS];
};

void vnic_hist_reset(struct vnic_hist *h);
void vnic_hist_record(struct vnic_hist *h, uint64_t v);
void vnic_hist_merge(struct vnic_hist *dst, const struct vnic_hist *src);
/*
 * The value below which pct percent of the recorded values fall (pct in
 * [0, 100]): the middle of the bucket holding that rank, clamped to
 * [min, max]. 0 for an empty histogram.
 */
uint64_t vnic_hist_percentile(const struct vnic_hist *h, double pct);
double vnic_hist_mean(const struct vnic_hist *h);

/* ---------------------------------------------------------------------------
 * Payload pattern (pattern.c). Byte o of a stream seeded with seed is byte
 * (o % 4) (little-endian) of the 32-bit word (((o / 4) mod 2^30) *
 * 0x9e3779b1) ^ seed: it repeats every 2^32 bytes, as TCP sequence numbers
 * wrap, so a receiver that knows only a segment's sequence number can check
 * it. off is the 64-bit stream offset (or the same mod 2^32: the result is
 * identical); a range may cross a multiple of 2^32, and pieces of a range
 * filled or checked at their own offsets agree with the whole, wherever it
 * was cut. Any shift of the data, by any number of bytes, changes it.
 * ------------------------------------------------------------------------- */

void vnic_work_pattern_fill(uint8_t *dst, uint32_t len, uint32_t seed, uint64_t off);
/* Index of the first byte of buf[0..len) differing from the pattern, or -1. */
int64_t vnic_work_pattern_check(const uint8_t *buf, uint32_t len, uint32_t seed, uint64_t off);

/* ---------------------------------------------------------------------------
 * Options, results
 * ------------------------------------------------------------------------- */

enum vnic_work_limits {
	VNIC_WORK_MAX_CONNS = 16384,		/* sessions or flows per workload */
	VNIC_WORK_DEFAULT_WINDOW = 1 << 20,
	VNIC_WORK_MAX_WINDOW = 1 << 30,
	VNIC_WORK_DEFAULT_TSQ = 256 << 10,
	VNIC_WORK_DEFAULT_RTO_MIN_NS = 20000000, /* 20 ms: see rto_min_ns */
	VNIC_WORK_RTO_INIT_MULT = 4,		/* RTO before the first RTT sample: 4 x min */
	VNIC_WORK_RTO_BACKOFF_MAX = 64,		/* the RTO backs off up to 64 x min */
	VNIC_WORK_PTO_SLACK_DIV = 32,		/* a loss probe waits 2 SRTT + min / 32 */
};

/* The TCP-like layer. Zero fields take the defaults. */
struct vnic_tcpl_opts {
	uint32_t window;	/* bytes unacknowledged per connection (default 1 MiB,
				 * at most 1 GiB) */
	uint32_t tsq_bytes;	/* frame bytes per connection from the packet's build
				 * (so packets held on a stopped queue count, as qdisc
				 * bytes do in Linux) to its tx_done; default 256 KiB.
				 * One packet may always be outstanding; a throttled
				 * flow resumes when half the budget is free */
	uint64_t rto_min_ns;	/* the retransmission timeout's floor (default 20 ms).
				 * The RTO is SRTT + 4 RTTVAR (RFC 6298) but never
				 * less; before the first RTT sample it is 4 x the
				 * floor; it doubles on each expiry, up to 64 x the
				 * floor. A tail loss probe fires after 2 SRTT +
				 * floor / 32: a long floor (tests) means no timer
				 * fires on a clean path */
	bool ipv6;
	bool no_tso;		/* never send superpackets, even if the netdev has TSO */
	bool no_csum_offload;	/* complete checksums in software even with CSUM */
};

struct vnic_rr_opts {
	unsigned int sessions;	/* default 1 */
	uint32_t req_size;	/* default 1 */
	uint32_t resp_size;	/* default 1 */
	struct vnic_tcpl_opts tcp;
};

struct vnic_stream_opts {
	unsigned int flows;	/* default 1 */
	uint64_t bytes;		/* per flow; 0 = until stopped */
	struct vnic_tcpl_opts tcp;
};

/* Integrity and recovery counters, both hosts added up. */
struct vnic_work_errors {
	uint64_t payload;	/* received segments with a byte off the pattern (dropped) */
	uint64_t bad_csum;	/* IPv4 header or L4 checksum wrong (dropped) */
	uint64_t lost;		/* gaps the receiver saw open in a sequence (a segment
				 * beyond everything received so far) */
	uint64_t ooo;		/* segments received beyond a gap (kept for reassembly
				 * unless counted in ooo_dropped) */
	uint64_t ooo_dropped;	/* of those, not kept: reassembly ranges all in use,
				 * or beyond the window */
	uint64_t dup;		/* segments (or their start) received before (dropped) */
	uint64_t retransmits;	/* segments sent again, for any reason */
	uint64_t fast_retransmits; /* of those, on SACK or duplicate-ACK evidence */
	uint64_t sack_recovered; /* segments fast-retransmitted and then acknowledged
				 * (cumulatively or by SACK) before any timeout */
	uint64_t probes;	/* tail loss probes sent (each also a retransmit) */
	uint64_t spurious;	/* segments the receiver reported receiving twice
				 * (D-SACK, RFC 2883): retransmissions not needed */
	uint64_t timeouts;	/* retransmission timer (RTO) expiries */
	uint64_t bad_hdr;	/* not an IPv4/IPv6 TCP frame we could parse */
	uint64_t no_conn;	/* no connection for its addresses and ports */
	uint64_t rx_overflow;	/* rx dropped: the host's event queue was full (or the
				 * NIC named an rx queue it does not have) */
	uint64_t tx_dropped;	/* tx_done reported the packet dropped */
	uint64_t tx_busy;	/* VNIC_TX_BUSY returns (the packet was kept) */
	uint64_t tx_nobuf;	/* packet pool empty when sending */
};

struct vnic_work_results {
	uint64_t transactions;	/* rr: request/response pairs completed */
	uint64_t bytes;		/* payload delivered in order to the applications
				 * (rr: requests and responses) */
	uint64_t tx_pkts;	/* packets (superpackets count once) handed to the netdevs */
	uint64_t tx_segs;	/* the same, counting a superpacket of N segments as N */
	uint64_t tx_bytes;	/* frame bytes handed to the netdevs */
	uint64_t rx_pkts;	/* packets (aggregates count once) received */
	uint64_t rx_segs;
	uint64_t tsq_throttled;	/* times a flow stopped on its TSQ budget */
	uint64_t tsq_max;	/* most bytes a flow ever had between xmit and tx_done */
	struct vnic_work_errors err;
	const struct vnic_hist *latency;	/* rr: one entry per transaction, ns */
};

struct vnic_work_summary {
	double seconds;
	double tps;		/* transactions per second */
	double gbps;		/* delivered payload, Gbit/s */
	double tx_pps;		/* packets per second handed to the netdevs */
	uint64_t lat_min_ns;
	uint64_t lat_p50_ns;
	uint64_t lat_p99_ns;
	uint64_t lat_p999_ns;
	uint64_t lat_max_ns;
	double lat_mean_ns;
	uint64_t integrity_errors;	/* payload + bad_csum: must be 0 on a clean path */
};

/* elapsed_ns is the caller's measured run time (0 leaves the rates 0). */
void vnic_work_summarize(const struct vnic_work_results *r, uint64_t elapsed_ns,
			 struct vnic_work_summary *s);

/* ---------------------------------------------------------------------------
 * Workloads. For both:
 *  - create: -EINVAL (options, a netdev without a tx cpu, a pool whose
 *    buffers cannot hold one MTU frame, too many connections), -EBUSY (a
 *    cpu is already started), -ENOSPC (a cpu has no poller slot left),
 *    -ENOMEM. The two
 *    netdevs must be different; their tx cpus may be the same. Only tx
 *    queues on the same cpu as queue 0 are used.
 *  - create checks the options and the pools against what the netdevs say
 *    then (MTU 0 means 1500); their tx cpus must not change afterwards.
 *  - start: any thread, once (again does nothing), the netdevs ready. It
 *    takes what they say now: MTU (frames are cut to what the pool buffers
 *    hold if it grew since create), features (checksum offload, TSO),
 *    gso_max_size, the tx queues (and their cpus) flows are spread over, the
 *    rx queues (event queues added if there are more than at create) and
 *    MAC addresses. A driver knows these only once open, after create.
 *  - stop: any thread. Stop makes them cease sending new data; what
 *    is outstanding is still delivered and acknowledged.
 *  - quiesced: any thread. True once stopped and everything sent has been
 *    acknowledged and completed (tx_done) on both hosts.
 *  - results: the counters may be read at any time from any thread; the
 *    latency histogram only once the cpus are stopped (or in manual mode),
 *    and spread over queue pairs, after vnic_rr_gather.
 *  - destroy: with the cpus stopped; frees packets still held and detaches
 *    the hosts from the netdevs.
 * ------------------------------------------------------------------------- */

struct vnic_rr;
struct vnic_stream;

int vnic_rr_create(struct vnic_rr **rr, struct vnic_netdev *client,
		   struct vnic_pkt_pool *client_pool, struct vnic_netdev *server,
		   struct vnic_pkt_pool *server_pool, const struct vnic_rr_opts *opts);
/*
 * Spread over queue pairs (create_queues, both workloads), for netdevs whose
 * queue pair q of both runs on one cpu, a cpu per queue pair, and whose
 * devices take queue q's frames to the peer's rx queue q (a wire per queue
 * pair: docs/ARCHITECTURE.md section 4.3). The connections are split into
 * `pairs` blocks, the first ones a connection larger; block q's hosts run on
 * tx queue q's cpu of each netdev, send on queue q alone, from pools[q] of
 * their side, and take what arrives on rx queue q. What arrives on a queue
 * past them is dropped and counted (err.rx_overflow). pairs 1 is create
 * (a host per netdev, on tx queue 0's cpu, flows hashed over that cpu's
 * queues); more than the connections is -EINVAL.
 */
int vnic_rr_create_queues(struct vnic_rr **rr, unsigned int pairs, struct vnic_netdev *client,
			  struct vnic_pkt_pool *const *client_pools, struct vnic_netdev *server,
			  struct vnic_pkt_pool *const *server_pools, const struct vnic_rr_opts *opts);
void vnic_rr_start(struct vnic_rr *rr);
void vnic_rr_stop(struct vnic_rr *rr);
bool vnic_rr_quiesced(const struct vnic_rr *rr);
void vnic_rr_results(const struct vnic_rr *rr, struct vnic_work_results *r);
/*
 * With the cpus stopped: gathers the latency histograms of the queue pairs
 * (each client host keeps its own, on its cpu) into the one results point
 * at. Nothing to do with one queue pair; again gathers again.
 */
void vnic_rr_gather(struct vnic_rr *rr);
void vnic_rr_destroy(struct vnic_rr *rr);

int vnic_stream_create(struct vnic_stream **st, struct vnic_netdev *sender,
		       struct vnic_pkt_pool *sender_pool, struct vnic_netdev *receiver,
		       struct vnic_pkt_pool *receiver_pool, const struct vnic_stream_opts *opts);
int vnic_stream_create_queues(struct vnic_stream **st, unsigned int pairs,
			      struct vnic_netdev *sender, struct vnic_pkt_pool *const *sender_pools,
			      struct vnic_netdev *receiver,
			      struct vnic_pkt_pool *const *receiver_pools,
			      const struct vnic_stream_opts *opts);
void vnic_stream_start(struct vnic_stream *st);
void vnic_stream_stop(struct vnic_stream *st);
bool vnic_stream_quiesced(const struct vnic_stream *st);
void vnic_stream_results(const struct vnic_stream *st, struct vnic_work_results *r);
/* Payload delivered in order on one flow (any thread). */
uint64_t vnic_stream_flow_bytes(const struct vnic_stream *st, unsigned int flow);
void vnic_stream_destroy(struct vnic_stream *st);

#endif /* VNIC_WORK_H */
