/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/driver: the driver's state, shared by drv.c, ctl.c, res.c,
 * tx.c and rx.c.
 *
 * Ownership: everything below is written by the driver's cpu thread only
 * (control poller, tx completion pollers, rx NAPIs, and xmit, which runs on
 * that cpu by contract). With queues on cpus of their own (queue_cpu), a
 * queue's state is its cpu's, and the control poller takes it only while
 * that cpu is parked (core/park.c); the datapath then writes nothing of the
 * driver's own but counters (one-writer per queue, or atomic read-modify-
 * writes where any queue may count) and asks the control poller for the
 * rest (suspect_req). Other threads touch only:
 *   - the request word and the answer (open/close), atomics;
 *   - the interrupt handlers, called from the device's thread inside an hv
 *     send: they only schedule a NAPI, whose irq ops arm or disarm rings
 *     that live from create to destroy (never freed in between, so a
 *     handler racing a reset never sees a freed ring);
 *   - counters, read with relaxed atomic loads: every field a counters
 *     function reads (stats, state, negotiated sizes, ring occupancy, pool
 *     free counts) is stored with vnic_ctr_* (core.h, Counters), even on
 *     the driver's cpu;
 *   - the policies (live.c): vnic_drv_set_policies hands them over under a
 *     lock and the control poller writes them into cfg with vnic_ctr_store,
 *     so vnic_drv_policies may read them from any thread; the datapath reads
 *     them plainly on the driver's cpu, their only writer. A queue's
 *     tx-reclaim mode (drv_txq.reclaim) is read by the interrupt handlers on
 *     the device's thread too, with vnic_ctr_load.
 */
#ifndef VNIC_DRIVER_DRV_INT_H
#define VNIC_DRIVER_DRV_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "driver/driver.h"

/* ---------------------------------------------------------------------------
 * Long-term buffers (docs/PROTOCOL.md section 7): a pool of equal slots
 * carved from regions of at most VNIC_ONE_LTB_SIZE, each DMA-mapped and
 * registered with the device by REQUEST_MAP under its own map id. The free
 * map is a stack of slot indices (last freed, first reused: warm in cache).
 * ------------------------------------------------------------------------- */

struct drv_ltb {
	uint8_t *mem;
	uint64_t len; /* bytes mapped: slots * buf_size */
	uint64_t ioba;
	uint8_t map_id; /* 0 until REQUEST_MAP is sent */
	bool dma_mapped;
};

struct drv_pool {
	struct drv_ltb *ltb;
	unsigned int nltb;
	uint32_t count;
	uint32_t buf_size;
	uint32_t per_ltb; /* slots per LTB */
	uint32_t *free_map;
	uint32_t nfree;
};

/*
 * The host's packet pool of a tx queue (vnic_netdev_tx_pool), mapped as
 * LTBs of its own: per_ltb buffers of stride bytes each, the packet with
 * index i in ltb[i / per_ltb]. Mapped from registration to destroy; its
 * map ids are requested with the driver's own LTBs.
 */
struct drv_hostmem {
	const struct vnic_pkt_pool *pool; /* NULL: none registered */
	size_t stride;
	uint32_t count;
	uint32_t per_ltb;
	unsigned int nltb;
	struct drv_ltb *ltb;
};

static inline struct drv_ltb *pool_ltb(const struct drv_pool *p, uint32_t idx)
{
	return &p->ltb[idx / p->per_ltb];
}

static inline uint32_t pool_off(const struct drv_pool *p, uint32_t idx)
{
	return (idx % p->per_ltb) * p->buf_size;
}

static inline uint8_t *pool_addr(const struct drv_pool *p, uint32_t idx)
{
	return pool_ltb(p, idx)->mem + pool_off(p, idx);
}

static inline uint64_t pool_ioba(const struct drv_pool *p, uint32_t idx)
{
	return pool_ltb(p, idx)->ioba + pool_off(p, idx);
}

/* ---------------------------------------------------------------------------
 * TX
 * ------------------------------------------------------------------------- */

/* What a TX or TSO slot remembers between xmit and its completion. */
struct tx_slot {
	struct vnic_pkt *pkt; /* tx-buf=map: sent from its own buffer, freed at completion */
	uint32_t cookie; /* pkt->priv at xmit */
	uint32_t bytes;	 /* pkt->len at xmit: BQL and tx_done */
	uint8_t nent;	 /* sub-CRQ entries it took (descriptor + headers) */
	bool in_use;
	bool orphaned; /* tx_done already called at xmit */
};

enum tx_drop {
	TXD_TOO_LONG,
	TXD_BAD_GSO,
	TXD_BAD_HEADERS,
	TXD_NO_BUFFER,
	TXD_DOWN,
	TXD_FLUSH, /* unwound after a failed send */
	TXD_RESET, /* sent, and in flight when a reset (or an unanswered close) took it back */
	TXD_MAX,
};

struct drv_txq_stats {
	uint64_t direct_packets;
	uint64_t batched_packets;
	uint64_t bytes;
	uint64_t dropped_packets;
	uint64_t csum_sw;
	uint64_t csum_offload;
	uint64_t lso_packets;
	uint64_t hdr_descs;
	uint64_t indirect_flushes;
	uint64_t direct_sends;
	uint64_t stops;
	uint64_t wakes;
	uint64_t busy;
	uint64_t completions;
	uint64_t completion_rounds;
	uint64_t bql_completed_calls;
	uint64_t comp_errors;
	uint64_t bad_correlator;
	uint64_t bad_num_comps;
	uint64_t flush_errors;
	uint64_t flush_rc_busy;
	uint64_t flush_rc_parameter;
	uint64_t flush_rc_closed;
	uint64_t flush_rc_dropped;
	uint64_t flush_rc_other;
	uint64_t comp_stale; /* completions found after a reset took the slots back */
	uint64_t timeouts;   /* the tx watchdog fired on this queue */
	uint64_t xmit_reclaims;
	uint64_t timer_reclaims;
	uint64_t orphaned;
	uint64_t mapped_packets; /* tx-buf=map: sent from the host's buffer, not copied */
	/* tx-submit=adaptive: lone packets sent each way, probes, switches, smoothed costs */
	uint64_t submit_direct_bursts;
	uint64_t submit_indirect_bursts;
	uint64_t submit_probes;
	uint64_t submit_switches;
	uint64_t submit_direct_ns;   /* a lone packet's direct send, smoothed (a gauge) */
	uint64_t submit_indirect_ns; /* its indirect send */
	uint64_t drops[TXD_MAX];
};

struct vnic_drv;

struct drv_txq {
	/* hot: xmit and reclaim */
	struct vnic_drv *drv;
	unsigned int idx;
	bool running;	     /* link up: xmit takes packets */
	bool live;	     /* slots may be in flight: completions are for them */
	bool time_flush;     /* tx-submit=adaptive: the next flush is a lone packet's: time it */
	uint32_t entries;    /* negotiated REQ_TX_ENTRIES */
	uint32_t used;	     /* sub-CRQ entries in flight (sent or batched) */
	uint32_t ind_n;	     /* entries in the indirect array, not yet sent */
	uint32_t batch_pkts; /* packets in it */
	uint32_t batch_bytes;
	uint32_t subm_handle; /* the device's tx submission ring */
	/*
	 * tx-reclaim in force for this queue (enum vnic_drv_tx_reclaim), and
	 * a change waiting for the poll that owns the completion interrupt
	 * (live.c): reclaim_move, to reclaim_next.
	 */
	uint32_t reclaim;
	bool reclaim_move;
	uint32_t reclaim_next;
	union vnic_subcrq_entry *ind; /* VNIC_MAX_IND_DESCS entries, DMA-mapped */
	uint64_t ind_ioba;
	struct drv_pool pool; /* entries slots of ALIGN(mtu + 14 + 4, 128) */
	struct drv_pool tso;  /* VNIC_TSO_BUFS slots of a superpacket */
	struct tx_slot *slots;
	struct tx_slot *tso_slots;
	struct drv_hostmem host; /* the host's pool, for tx-buf=map */
	struct vnic_subcrq *comp; /* our tx completion ring (create to destroy) */
	struct vnic_txq txq;
	/* tx-reclaim=napi: the rx queue whose NAPI reclaims us */
	_Atomic uint32_t napi_rxq;
	/* lazy: the reclaim timer is armed */
	bool timer_armed;
	/* tx watchdog (reset.c): progress seen at the last tick, and since when */
	uint64_t wd_progress;
	uint64_t wd_since;
	/*
	 * tx-submit=adaptive: which send a lone packet costs less (way A
	 * direct, B indirect). Away from the fields above: the default policy
	 * never touches it.
	 */
	struct vnic_cheaper submit;
	struct vnic_napi napi vnic_cacheline_aligned; /* completion poller */
	struct drv_txq_stats st;
} vnic_cacheline_aligned;

/* ---------------------------------------------------------------------------
 * RX
 * ------------------------------------------------------------------------- */

struct drv_rxq_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t polls;
	uint64_t replenish_calls;
	uint64_t replenish_buffers;
	uint64_t replenish_errors;
	uint64_t csum_unnecessary;
	uint64_t parse_errors;
	uint64_t bad_correlator;
	uint64_t drop_rc;
	uint64_t drop_bad_len;
	uint64_t drop_no_pkt;
	uint64_t reset_drained;	    /* completions of buffers a reset took back */
	uint64_t replenish_retries; /* a failed replenish tried again from the timer */
	uint64_t lro_packets;	    /* large receives handed up as one GSO packet */
	uint64_t lro_bufs;	    /* the buffers they spanned */
	uint64_t drop_lro_too_big;  /* more bytes than max_large_rx_size or a packet holds */
	uint64_t drop_lro_bad_meta; /* lro_mss or lro_type disagree with the headers */
};

struct drv_rxq {
	struct vnic_drv *drv;
	unsigned int idx;
	bool running;
	uint32_t add_handle; /* the device's rx buffer add ring */
	uint32_t post_len;   /* bytes per posted buffer (login response) */
	uint32_t nposted;    /* buffers in the device's hands */
	bool refill;	     /* a replenish fell short (a send failed): the timer retries */
	uint8_t *posted;     /* per slot: 1 while posted */
	struct drv_pool pool;
	union vnic_subcrq_entry *ind;
	uint64_t ind_ioba;
	struct vnic_subcrq *comp; /* our rx completion ring (create to destroy) */
	/* tx-reclaim=napi: bit t set = tx queue t is reclaimed in this NAPI */
	_Atomic uint32_t txmask;
	/* bit t: tx queue t leaves this NAPI at its next poll (live.c) */
	uint32_t moves;
	struct vnic_pkt_pool pkts; /* host packets rx hands up */
	struct vnic_pkt_pool agg;  /* GRO aggregates, and large receives */
	bool pkt_pools;
	/* a large receive being gathered, its buffers so far (section 8.5) */
	struct vnic_pkt *lro;
	uint32_t lro_nbufs;
	bool lro_skip; /* one was given up: its buffers up to END_FRAME are dropped */
	struct vnic_deliver deliver;
	struct vnic_napi napi vnic_cacheline_aligned;
	struct drv_rxq_stats st;
} vnic_cacheline_aligned;

/* ---------------------------------------------------------------------------
 * Control
 * ------------------------------------------------------------------------- */

/*
 * Every state but CLOSED, OPEN, DOWN and RESET_WAIT waits for answers, and
 * resends what is unanswered after VNIC_DRV_CMD_TIMEOUT_NS (INIT: its own
 * schedule). docs/ARCHITECTURE.md section 10 draws them.
 */
enum drv_state {
	DRV_CLOSED = 0, /* not logged in */
	DRV_INIT,	/* INIT sent, waiting for INIT_COMPLETE (retried) */
	DRV_VERSION,
	DRV_QUERY,   /* QUERY_CAPABILITY answers outstanding */
	DRV_REQUEST, /* REQUEST_CAPABILITY answers outstanding */
	DRV_RXBUF,   /* QUERY_CAPABILITY(RX_BUF_SIZE) for the granted MTU */
	DRV_QUERY_OFFLOAD,
	DRV_CONTROL_OFFLOAD,
	DRV_MAP, /* REQUEST_MAP answers outstanding */
	DRV_LOGIN,
	DRV_LINK_UP, /* LOGICAL_LINK_STATE(up) sent */
	DRV_OPEN,
	DRV_LINK_DOWN,	 /* close: LOGICAL_LINK_STATE(down) sent */
	DRV_DOWN,	 /* logged in, link down */
	DRV_RESET_DOWN,	 /* reset: LOGICAL_LINK_STATE(down) sent */
	DRV_RESET_UNMAP, /* reset: REQUEST_UNMAP answers outstanding */
	DRV_RESET_WAIT,	 /* reset: waiting for the partner (failover) or to retry */
};

/*
 * Why a reset happens (ibmvnic's reset reasons), each with its counter
 * resets_<name> (reset.c). The first five are hard: the partner forgot us
 * (or we cannot trust what it has), so everything is taken back locally and
 * the bring-up starts from INIT; a hard request drops the soft ones queued
 * behind it. The others release what the partner holds through the
 * protocol first.
 */
enum drv_reset_reason {
	RST_XPORT,	  /* a transport event: the partner closed or reset */
	RST_PASSIVE_INIT, /* an INIT from a partner that had us logged in */
	RST_FAILOVER,	  /* the FAILOVER transport event (then the partner's INIT) */
	RST_MOBILITY,	  /* the partition-migrated transport event */
	RST_HARD,	  /* a failed reset, or a partner that no longer knows us */
	RST_FATAL,	  /* a fatal ERROR_INDICATION */
	RST_TIMEOUT,	  /* the tx watchdog */
	RST_NON_FATAL,	  /* a non-fatal ERROR_INDICATION: link down and up only */
	RST_CHANGE_PARAM, /* vnic_drv_change_param */
	RST_MAX,
};

/* How a reset takes the datapath down and brings it back. */
enum drv_reset_kind {
	RK_LOCAL,   /* forget locally (the partner has forgotten), INIT, full bring-up */
	RK_RELEASE, /* link down, REQUEST_UNMAP every map, INIT, full bring-up */
	RK_SOFT,    /* link down, link up: the login and the maps stay */
};

/* The request word: (sequence << 2) | kind. */
enum drv_req {
	REQ_NONE = 0,
	REQ_OPEN = 1,
	REQ_CLOSE = 2,
	REQ_ABORT = 3,
};

/* What QUERY_CAPABILITY told us, in the order the queries are sent. */
enum drv_qcap {
	QC_MIN_TX_QUEUES,
	QC_MIN_RX_QUEUES,
	QC_MAX_TX_QUEUES,
	QC_MAX_RX_QUEUES,
	QC_MIN_TX_ENTRIES,
	QC_MIN_RX_ENTRIES,
	QC_MAX_TX_ENTRIES,
	QC_MAX_RX_ENTRIES,
	QC_MIN_MTU,
	QC_MAX_MTU,
	QC_TCP_IP_OFFLOAD,
	QC_MAX_IND_DESCS,
	QC_DESC_REQ,
	QC_MAX,
};

/* REQUEST_CAPABILITY, in the order sent. */
enum drv_rcap {
	RC_TX_QUEUES,
	RC_RX_QUEUES,
	RC_TX_ENTRIES,
	RC_RX_ENTRIES,
	RC_MTU,
	RC_IND_DESCS,
	RC_MAX,
};

/* The control page: one DMA-mapped page holding the buffers CRQ commands name. */
enum {
	CTL_PAGE = 4096,
	CTL_LOGIN_OFF = 0,
	CTL_LOGIN_RSP_OFF = 512,
	/*
	 * Each QUERY_IP_OFFLOAD or CONTROL_IP_OFFLOAD sent names a buffer of
	 * its own (ctl.c: send_offload), so a device still answering an
	 * earlier one never writes the buffer being read.
	 */
	CTL_OFFLOAD_SLOTS = 16,
	CTL_OFFLOAD_QUERY_OFF = 1024,
	CTL_OFFLOAD_CONTROL_OFF = CTL_OFFLOAD_QUERY_OFF + CTL_OFFLOAD_SLOTS * 64,
	CTL_OFFLOAD_END = CTL_OFFLOAD_CONTROL_OFF + CTL_OFFLOAD_SLOTS * 64,
};
static_assert(sizeof(struct vnic_ip_offload) == 64, "an offload slot holds one buffer");
static_assert(CTL_OFFLOAD_END <= CTL_PAGE, "offload slots fit the control page");
static_assert(CTL_OFFLOAD_SLOTS <= 16, "a slot is a bit of a uint16_t");

/* The offload buffers of one command: which was sent last, which the device may still write. */
enum drv_ol_kind { OL_QUERY, OL_CONTROL, OL_KINDS };
struct drv_ol_slots {
	uint16_t busy; /* sent, no answer naming it yet: the device may write (or read) it */
	uint8_t cur;   /* the latest sent: the only one whose answer counts */
	uint8_t next;  /* where the search for a free one starts */
};
static_assert(VNIC_LOGIN_BUF_MAX <= CTL_LOGIN_RSP_OFF - CTL_LOGIN_OFF, "login buffer fits");
static_assert(VNIC_LOGIN_RSP_BUF_MAX <= CTL_OFFLOAD_QUERY_OFF - CTL_LOGIN_RSP_OFF, "rsp fits");

struct drv_stats {
	uint64_t opens;
	uint64_t closes;
	uint64_t resets; /* begun, every reason */
	uint64_t init_retries;
	uint64_t xport_events;
	uint64_t error_indications;
	uint64_t crq_ignored;
	uint64_t crq_send_errors;
	uint64_t cmd_retries; /* commands sent again: no answer within the timeout */
	uint64_t ind_fallbacks;
	uint64_t drop_bad_queue;
	uint64_t bad_tx_comp_ring;
	/* resets (reset.c) */
	uint64_t reset_done;	  /* brought back to where they started (or closed) */
	uint64_t reset_failures;  /* given up on, retried as hard ones */
	uint64_t reset_aborted;	  /* superseded in the middle by a hard one, or a close */
	uint64_t reset_coalesced; /* requests merged into one already queued */
	uint64_t reset_last_ns;
	uint64_t reset_max_ns;
	uint64_t reset_total_ns;
	uint64_t resets_by[RST_MAX];
	uint64_t probes;	 /* LOGICAL_LINK_STATE(QUERY) sent to a partner in doubt */
	uint64_t probe_resumes;	 /* answered: the partner still had us, traffic resumed */
	uint64_t policy_changes; /* vnic_drv_set_policies that changed something */
	uint64_t tx_pools_dropped; /* host pools unmapped: no map id left for them */
};

/*
 * vnic_drv_set_policies (live.c), from any thread: the policies wanted,
 * handed over under the lock, and the answer. Requests are numbered; a
 * newer one replaces what an older one posted, and the answer to the newer
 * answers both.
 */
struct drv_live {
	pthread_mutex_t lock;
	struct vnic_drv_config posted; /* the policy fields; under lock */
	uint64_t posted_seq;	       /* under lock */
	_Atomic bool pending;
	_Atomic uint64_t done_seq;
};

/*
 * Resets (reset.c): a queue of requests, one reset at a time, run by the
 * control poller (ibmvnic's rwi list and its reset work). Everything here
 * is the control poller's but the change-param hand-off; nq and active are
 * read by the counters, so stored with vnic_ctr_store.
 */
struct drv_reset {
	uint8_t queue[RST_MAX]; /* reasons, oldest first, each at most once */
	unsigned int nq;
	bool active;
	enum drv_reset_reason cur;
	enum drv_reset_kind kind;
	uint64_t start_ns;
	uint64_t retry_at;	   /* RESET_WAIT after a failure: a hard reset then */
	uint64_t failover_until;   /* RESET_WAIT for a failover: INIT now at the latest */
	bool cp_applied;	   /* the change-param's values are in cfg */
	struct vnic_drv_params cp; /* the change-param queued */
	struct vnic_drv_params fallback;
	bool ind_safe; /* fell back to 16 indirect entries: for good */
	bool suspect;  /* a send said the partner may be gone: probe it */
	uint64_t probe_at;
	uint64_t wd_at; /* next tx watchdog tick */
	/* vnic_drv_change_param, from any thread */
	pthread_mutex_t lock;
	struct vnic_drv_params posted;
	_Atomic bool pending;
};

/* Offloads turned on by CONTROL_IP_OFFLOAD. */
struct drv_offloads {
	bool tcp4, udp4, tcp6, udp6;
	bool lso4, lso6;
	bool large_rx4, large_rx6; /* large receive (docs/PROTOCOL.md section 8.5) */
};

struct vnic_drv {
	struct vnic_drv_config cfg;
	struct vnic_hv *hv;
	struct vnic_cpu *cpu;
	/* queue pair q's cpu (cpu when not given); the other cpus among them, parked */
	struct vnic_cpu *qcpu[VNIC_MAX_QUEUES];
	struct vnic_park park; /* core's park.c; counters parks and park_retries */
	/* the datapath saw the partner go, on a queue's own cpu: the control poller acts */
	_Atomic bool suspect_req;
	struct vnic_netdev netdev;
	char name[16];

	/* requests from open/close (any thread) and their answer */
	_Atomic uint64_t req;
	_Atomic uint64_t done_seq;
	_Atomic int done_rc;
	uint64_t req_seq;	    /* requester's counter (one requester at a time) */
	uint64_t cur_seq;	    /* the request being worked on; 0 = nobody waits */
	_Atomic uint32_t open_flag; /* vnic_drv_is_open */

	/* control poller (driver's cpu) */
	struct vnic_napi ctl_napi;
	enum drv_state state;
	bool admin_up;	   /* open asked for, not closed since */
	uint64_t timer_ns; /* the state's deadline (resend, INIT retry); 0 none */
	unsigned int init_tries;
	unsigned int tries;   /* resends in this state */
	uint32_t qc_done;     /* QUERY_CAPABILITY answers in (bit per enum drv_qcap) */
	uint32_t rc_done;     /* REQUEST_CAPABILITY answers in, this round */
	uint64_t map_done[4]; /* REQUEST_MAP (or UNMAP) answers in, bit per map id */
	unsigned int nmaps;   /* LTBs mapped with the device in this login */
	unsigned int cap_round;
	bool cap_partial;
	uint64_t qcap[QC_MAX];
	uint32_t rcap[RC_MAX]; /* asked, then granted */
	uint64_t carrier;
	struct drv_ol_slots ol_slots[OL_KINDS];
	struct drv_reset rst;
	struct drv_live live;

	/* DMA-mapped control page */
	uint8_t *ctl;
	uint64_t ctl_ioba;

	/* negotiated */
	unsigned int ntx, nrx;
	unsigned int ntx_hw, nrx_hw; /* most ever negotiated: counters */
	uint32_t tx_entries, rx_entries;
	uint32_t mtu;			      /* L3 */
	uint32_t ind_descs;		      /* granted */
	uint32_t cur_ind;		      /* in use: falls back to 16 after a PARAMETER */
	uint32_t rx_buf_size;		      /* from RX_BUF_SIZE, then the login response */
	uint64_t desc_req;		      /* TX_RX_DESC_REQ number */
	uint8_t req_plain, req_csum, req_lso; /* its bytes */
	struct drv_offloads ol;
	uint32_t gso_max; /* largest superpacket the TSO slots and device take */
	uint32_t lro_max; /* largest large receive taken (max_large_rx_size) */
	uint16_t min_mss;
	bool pools_ready; /* LTB pools allocated for the sizes above */

	/* queues: as many as may be asked for; the first ntx/nrx are in use */
	unsigned int qtx, qrx;
	uint32_t txc_size, rxc_size; /* completion ring entries: the most a change may ask */
	struct drv_txq *txq;
	struct drv_rxq *rxq;

	struct drv_stats st;
};

/* --- trace points (drv.c) ------------------------------------------------ */
/* The driver's functions core's tracing times; the names are what reports print. */
struct drv_trace_points {
	struct vnic_trace_point xmit;	       /* ndo_start_xmit */
	struct vnic_trace_point tx_flush;      /* send the batched indirect array */
	struct vnic_trace_point send_direct;   /* the send_subcrq hcall */
	struct vnic_trace_point send_indirect; /* send_subcrq_indirect (tx flushes, rx adds) */
	struct vnic_trace_point csum_help;     /* software checksum of a PARTIAL packet */
	struct vnic_trace_point hdr_build;     /* header descriptors */
	struct vnic_trace_point tx_complete;   /* tx completion (reclaim) round */
	struct vnic_trace_point napi_poll;     /* rx NAPI poll */
	struct vnic_trace_point replenish;     /* rx buffer replenish */
	struct vnic_trace_point gro_receive;   /* one packet into GRO (gro, gro-list) */
	struct vnic_trace_point deliver;       /* a batch handed up to the host */
};

extern struct drv_trace_points vnic_drv_tp;

/* --- ctl.c --------------------------------------------------------------- */
int vnic_drv_ctl_poll(struct vnic_napi *napi, int budget);
extern const struct vnic_irq_ops vnic_drv_ctl_irq_ops;
void vnic_drv_ctl_irq(void *ctx);
/* A state and its deadline: answers awaited from now, resent after a timeout. */
void vnic_drv_set_state(struct vnic_drv *drv, enum drv_state s);
/* Answers the waiting open or close, if any. */
void vnic_drv_finish(struct vnic_drv *drv, int rc);
/* The bring-up from INIT (docs/PROTOCOL.md section 2). */
void vnic_drv_start_init(struct vnic_drv *drv);
/* Step 8: rx buffers, interrupts, LOGICAL_LINK_STATE(up). 0 or -EIO. */
int vnic_drv_link_up_start(struct vnic_drv *drv);
/* xmit answers BUSY, the batch is dropped, the link is down for the host. */
void vnic_drv_datapath_quiesce(struct vnic_drv *drv);
/* Everything in flight back to the driver (dropped), every tx queue stopped. */
void vnic_drv_datapath_stop(struct vnic_drv *drv);
int vnic_drv_send_link_state(struct vnic_drv *drv, uint8_t state);
void vnic_drv_send_xport(struct vnic_drv *drv, uint8_t reason);
/* A reset's REQUEST_UNMAP of every map (state RESET_UNMAP), answered in vnic_drv_reset_unmapped. */
void vnic_drv_release_maps(struct vnic_drv *drv);

/* --- live.c -------------------------------------------------------------- */
int vnic_drv_live_init(struct vnic_drv *drv);
void vnic_drv_live_fini(struct vnic_drv *drv);
/* From the control poll: the policies posted by vnic_drv_set_policies, applied and answered. */
void vnic_drv_live_poll(struct vnic_drv *drv);
bool vnic_drv_live_pending(const struct vnic_drv *drv);
/* Every queue's tx-reclaim mode from cfg, nothing moving (link up: rings not armed yet). */
void vnic_drv_reclaim_reset(struct vnic_drv *drv);

/* --- reset.c ------------------------------------------------------------- */
/* Queues a reset for reason (coalesced, superseded: see struct drv_reset). */
void vnic_drv_reset_request(struct vnic_drv *drv, enum drv_reset_reason reason);
/*
 * From the control poll, after the messages: the change-param posted, the
 * watchdog, the probe, a retry due, and the next queued reset if nothing
 * else is in progress. Returns the earliest deadline of its own (0 none).
 */
uint64_t vnic_drv_reset_poll(struct vnic_drv *drv, uint64_t now);
/* The reset's LOGICAL_LINK_STATE(down) was answered (rc). */
void vnic_drv_reset_down_done(struct vnic_drv *drv, uint8_t rc);
/* Every REQUEST_UNMAP of the reset was answered. */
void vnic_drv_reset_unmapped(struct vnic_drv *drv);
/* The reset's bring-up reached OPEN (or DOWN for a link closed meanwhile). */
void vnic_drv_reset_done(struct vnic_drv *drv);
/* The reset's bring-up failed: a hard one, a little later. */
void vnic_drv_reset_fail(struct vnic_drv *drv, int err);
/* A close (or an abandoned open) during a reset: nothing stays, state CLOSED. */
void vnic_drv_reset_abort(struct vnic_drv *drv);
/* The partner answered the probe: rc SUCCESS, it still has us. */
void vnic_drv_reset_probe_answer(struct vnic_drv *drv, uint8_t rc);
/* The datapath saw the partner go (CLOSED, a stale handle): stop, probe. */
void vnic_drv_partner_suspect(struct vnic_drv *drv);
/* The same, from the control poller (the queues' cpus parked). */
void vnic_drv_partner_suspect_now(struct vnic_drv *drv);
/* The state a partner's INIT leads to, given the reset in progress (if any). */
void vnic_drv_reset_partner_init(struct vnic_drv *drv);
bool vnic_drv_reset_is_hard(enum drv_reset_reason r);
const char *vnic_drv_reset_name(enum drv_reset_reason r);
int vnic_drv_reset_init(struct vnic_drv *drv);
void vnic_drv_reset_fini(struct vnic_drv *drv);

/* --- res.c --------------------------------------------------------------- */
/* Rings, indirect arrays and the control page: at create. */
int vnic_drv_res_create(struct vnic_drv *drv);
void vnic_drv_res_destroy(struct vnic_drv *drv);
/* LTB pools and packet pools for the negotiated sizes (reused if they fit). 0 or -errno. */
int vnic_drv_pools_alloc(struct vnic_drv *drv);
void vnic_drv_pools_free(struct vnic_drv *drv);
/*
 * Numbers every LTB of the pools in use (map ids 1.. in a fixed order) and
 * calls fn (may be NULL) for each. Returns how many there are.
 */
typedef void (*drv_ltb_fn)(void *ctx, struct drv_ltb *ltb);
unsigned int vnic_drv_ltbs(struct vnic_drv *drv, drv_ltb_fn fn, void *ctx);
/* rx-agg=frags and a host that takes fragments: GRO chains (res.c). */
bool vnic_drv_rx_fraglist(const struct vnic_drv *drv);
/* netdev_ops.tx_pool: maps the host's pool for tx-buf=map (core.h). */
int vnic_drv_tx_pool(struct vnic_netdev *nd, unsigned int q, const struct vnic_pkt_pool *pool);
void vnic_drv_hostmem_unmap(struct vnic_drv *drv, struct drv_hostmem *h);

/* --- tx.c ---------------------------------------------------------------- */
extern const struct vnic_netdev_ops vnic_drv_netdev_ops;
int vnic_drv_tx_poll(struct vnic_napi *napi, int budget);
extern const struct vnic_irq_ops vnic_drv_txc_irq_ops;
void vnic_drv_txc_irq(void *ctx);
/* Drains the completion ring: one completion round. Returns packets reclaimed. */
unsigned int vnic_drv_tx_reclaim(struct drv_txq *txq);
/* Drops what is batched but not sent (close, reset). */
void vnic_drv_tx_unwind_batch(struct drv_txq *txq);
/* Reclaims every slot still in use as dropped (the device will not complete them). */
void vnic_drv_tx_forget(struct drv_txq *txq);
void vnic_drv_txq_wake_cb(void *ctx, struct vnic_txq *txq);
/*
 * Driver's cpu: the queue goes to tx-reclaim mode `to`. When the owner of
 * its completion interrupt changes, the move is made by the poll of the
 * owner it leaves (see live.c); otherwise at once.
 */
void vnic_drv_reclaim_switch(struct drv_txq *txq, enum vnic_drv_tx_reclaim to);
/* The move waiting for this owner's poll (reclaim_move set): made now. */
void vnic_drv_reclaim_move(struct drv_txq *txq);

/* --- rx.c ---------------------------------------------------------------- */
int vnic_drv_rx_poll(struct vnic_napi *napi, int budget);
extern const struct vnic_irq_ops vnic_drv_rxc_irq_ops;
void vnic_drv_rxc_irq(void *ctx);
/* Posts every free buffer; returns how many were posted. */
unsigned int vnic_drv_rx_replenish(struct drv_rxq *rxq);
/* Link down or reset: every posted buffer is the driver's again; the ring is drained. */
void vnic_drv_rx_forget(struct drv_rxq *rxq);

/* --- helpers -------------------------------------------------------------- */

/*
 * The one write barrier of the tx path (ibmvnic rr 4/7): the LTB copy and
 * the descriptors must be visible to the device before the hcall hands them
 * over. The hv publishes each entry with a release store, which orders our
 * earlier stores on every architecture; this fence states the requirement
 * where the driver relies on it (dma_wmb in ibmvnic's send helpers). On x86
 * it is a compiler barrier.
 */
#if VNIC_TSAN
/*
 * TSan (vnic_fence_on in core.h): no word here to carry the fence, and none
 * needed: the order is the hv's release store, which TSan sees. On x86 the
 * fence is this same compiler barrier.
 */
static inline void drv_dma_wmb(void)
{
	atomic_signal_fence(memory_order_release);
}
#else
static inline void drv_dma_wmb(void)
{
	atomic_thread_fence(memory_order_release);
}
#endif

/*
 * Who owns a tx completion ring's interrupt in a tx-reclaim mode: the tx
 * completion poller (irq, orphan), the rx NAPI that reclaims the queue
 * (napi), or nobody: lazy keeps it off.
 */
enum drv_irq_owner { OWN_NONE, OWN_TXC, OWN_RXQ };

static inline enum drv_irq_owner drv_irq_owner(uint32_t reclaim)
{
	switch (reclaim) {
	case VNIC_DRV_RECLAIM_LAZY:
		return OWN_NONE;
	case VNIC_DRV_RECLAIM_NAPI:
		return OWN_RXQ;
	default:
		return OWN_TXC;
	}
}

#endif /* VNIC_DRIVER_DRV_INT_H */
