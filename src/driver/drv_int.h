/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/driver: the driver's state, shared by drv.c, ctl.c, res.c,
 * tx.c and rx.c.
 *
 * Ownership: everything below is written by the driver's cpu thread only
 * (control poller, tx completion pollers, rx NAPIs, and xmit, which runs on
 * that cpu by contract). Other threads touch only:
 *   - the request word and the answer (open/close), atomics;
 *   - the interrupt handlers, called from the device's thread inside an hv
 *     send: they only schedule a NAPI, whose irq ops arm or disarm rings
 *     that live from create to destroy (never freed in between, so a
 *     handler racing a reset never sees a freed ring);
 *   - counters, read with relaxed atomic loads: every field a counters
 *     function reads (stats, state, negotiated sizes, ring occupancy, pool
 *     free counts) is stored with vnic_ctr_* (core.h, Counters), even on
 *     the driver's cpu.
 */
#ifndef VNIC_DRIVER_DRV_INT_H
#define VNIC_DRIVER_DRV_INT_H

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
	uint64_t flush_rc_other;
	uint64_t xmit_reclaims;
	uint64_t timer_reclaims;
	uint64_t orphaned;
	uint64_t drops[TXD_MAX];
};

struct vnic_drv;

struct drv_txq {
	/* hot: xmit and reclaim */
	struct vnic_drv *drv;
	unsigned int idx;
	bool running;	     /* link up: xmit takes packets */
	uint32_t entries;    /* negotiated REQ_TX_ENTRIES */
	uint32_t used;	     /* sub-CRQ entries in flight (sent or batched) */
	uint32_t ind_n;	     /* entries in the indirect array, not yet sent */
	uint32_t batch_pkts; /* packets in it */
	uint32_t batch_bytes;
	uint32_t subm_handle;	      /* the device's tx submission ring */
	union vnic_subcrq_entry *ind; /* VNIC_MAX_IND_DESCS entries, DMA-mapped */
	uint64_t ind_ioba;
	struct drv_pool pool; /* entries slots of ALIGN(mtu + 14 + 4, 128) */
	struct drv_pool tso;  /* VNIC_TSO_BUFS slots of a superpacket */
	struct tx_slot *slots;
	struct tx_slot *tso_slots;
	struct vnic_subcrq *comp; /* our tx completion ring (create to destroy) */
	struct vnic_txq txq;
	/* tx-reclaim=napi: the rx queue whose NAPI reclaims us */
	_Atomic uint32_t napi_rxq;
	/* lazy: the reclaim timer is armed */
	bool timer_armed;
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
};

struct drv_rxq {
	struct vnic_drv *drv;
	unsigned int idx;
	bool running;
	uint32_t add_handle; /* the device's rx buffer add ring */
	uint32_t post_len;   /* bytes per posted buffer (login response) */
	uint32_t nposted;    /* buffers in the device's hands */
	uint8_t *posted;     /* per slot: 1 while posted */
	struct drv_pool pool;
	union vnic_subcrq_entry *ind;
	uint64_t ind_ioba;
	struct vnic_subcrq *comp; /* our rx completion ring (create to destroy) */
	/* tx-reclaim=napi: bit t set = tx queue t is reclaimed in this NAPI */
	_Atomic uint32_t txmask;
	struct vnic_pkt_pool pkts; /* host packets rx hands up */
	struct vnic_pkt_pool agg;  /* GRO aggregates */
	bool pkt_pools;
	struct vnic_deliver deliver;
	struct vnic_napi napi vnic_cacheline_aligned;
	struct drv_rxq_stats st;
} vnic_cacheline_aligned;

/* ---------------------------------------------------------------------------
 * Control
 * ------------------------------------------------------------------------- */

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
	DRV_LINK_DOWN, /* LOGICAL_LINK_STATE(down) sent */
	DRV_DOWN,      /* logged in, link down */
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
	CTL_OFFLOAD_QUERY_OFF = 1024,
	CTL_OFFLOAD_CONTROL_OFF = 1536,
};
static_assert(VNIC_LOGIN_BUF_MAX <= CTL_LOGIN_RSP_OFF - CTL_LOGIN_OFF, "login buffer fits");
static_assert(VNIC_LOGIN_RSP_BUF_MAX <= CTL_OFFLOAD_QUERY_OFF - CTL_LOGIN_RSP_OFF, "rsp fits");

struct drv_stats {
	uint64_t opens;
	uint64_t closes;
	uint64_t resets;
	uint64_t init_retries;
	uint64_t xport_events;
	uint64_t error_indications;
	uint64_t crq_ignored;
	uint64_t crq_send_errors;
	uint64_t ind_fallbacks;
	uint64_t drop_bad_queue;
	uint64_t bad_tx_comp_ring;
};

/* Offloads turned on by CONTROL_IP_OFFLOAD. */
struct drv_offloads {
	bool tcp4, udp4, tcp6, udp6;
	bool lso4, lso6;
};

struct vnic_drv {
	struct vnic_drv_config cfg;
	struct vnic_hv *hv;
	struct vnic_cpu *cpu;
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
	uint64_t timer_ns; /* our deadline on the ctl poller; 0 none */
	unsigned int init_tries;
	unsigned int pending; /* answers outstanding in this state */
	unsigned int cap_round;
	bool cap_partial;
	uint64_t qcap[QC_MAX];
	uint32_t rcap[RC_MAX]; /* asked, then granted */
	uint64_t carrier;

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
	uint16_t min_mss;
	bool pools_ready; /* LTB pools allocated for the sizes above */

	/* queues: as many as asked for; the first ntx/nrx are in use */
	unsigned int qtx, qrx;
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

/* --- rx.c ---------------------------------------------------------------- */
int vnic_drv_rx_poll(struct vnic_napi *napi, int budget);
extern const struct vnic_irq_ops vnic_drv_rxc_irq_ops;
/* tx-reclaim=napi: the rx ring and the tx completion rings it reclaims, as one source */
extern const struct vnic_irq_ops vnic_drv_rxc_napi_irq_ops;
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
static inline void drv_dma_wmb(void)
{
	atomic_thread_fence(memory_order_release);
}

static inline bool drv_reclaim_napi(const struct vnic_drv *drv)
{
	return drv->cfg.tx_reclaim == VNIC_DRV_RECLAIM_NAPI;
}

#endif /* VNIC_DRIVER_DRV_INT_H */
