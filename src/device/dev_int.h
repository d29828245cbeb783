/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/device: the device's state, shared by dev.c, ctl.c, tx.c
 * and rx.c. Everything here is owned by the device's cpu thread (with
 * queue_cpu: queue pair q's engines and rings by cpu q's, which the control,
 * fault and coalescing pollers park while they work, core/park.c); the only
 * things other threads do are the interrupt handlers (vnic_napi_schedule)
 * and the irq ops they call (arming and disarming the hv's interrupts), and
 * vnic_dev_counters. Every field that reads (the stats structs, state,
 * link_up, the negotiated sizes, ol, ntxq/nrxq, txq_hw/rxq_hw, an rx
 * queue's head and tail) is stored with vnic_ctr_* (core.h, Counters), even
 * on the owner's thread, and read there with relaxed loads.
 */
#ifndef VNIC_DEVICE_DEV_INT_H
#define VNIC_DEVICE_DEV_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "device/device.h"

enum dev_state {
	DEV_CLOSED = 0,	     /* waiting for the driver's INIT */
	DEV_INITED = 1,	     /* INIT_COMPLETE sent: VERSION_EXCHANGE next */
	DEV_NEGOTIATING = 2, /* capabilities, offloads, maps, login */
	DEV_LOGGED_IN = 3,   /* queues exist; LOGICAL_LINK_STATE decides traffic */
};

/* Why a tx descriptor was refused; each has a counter and a completion rc. */
enum tx_drop {
	TX_DROP_BAD_TYPE,	 /* not a tx descriptor (and not a header descriptor) */
	TX_DROP_BAD_N_SGE,	 /* n_sge != 1 */
	TX_DROP_BAD_N_ELEM,	 /* n_crq_elem outside 1..VNIC_MAX_TX_ELEMS */
	TX_DROP_HDRS_INCOMPLETE, /* header descriptors it counts are not in the ring */
	TX_DROP_BAD_HDR_DESC,	 /* wrong type, lengths or flag in header descriptors */
	TX_DROP_BAD_FLAGS,	 /* impossible flag combination */
	TX_DROP_UNSUPPORTED,	 /* offload not turned on, VLAN insertion */
	TX_DROP_BAD_MSS,
	TX_DROP_BAD_MAP_ID,	  /* dma_reg is not a mapped long-term buffer */
	TX_DROP_BAD_IOBA,	  /* ioba outside the long-term buffer, or untranslatable */
	TX_DROP_BAD_LEN,	  /* sge_len too small or too big */
	TX_DROP_LEN_PAST_LTB,	  /* ioba + sge_len runs past the long-term buffer */
	TX_DROP_BAD_HEADERS,	  /* frame does not parse as the flags claim */
	TX_DROP_HDR_LEN_MISMATCH, /* header descriptor lengths differ from the frame */
	TX_DROP_MISSING_HDRS,	  /* headers the mask asked for missing (drop_missing_hdrs) */
	TX_DROP_GSO_FAILED,	  /* segmentation refused the superpacket */
	TX_DROP_LINK_DOWN,	  /* logical link down: aborted */
	TX_DROP_NO_CARRIER,	  /* physical link down (link-flap fault): aborted */
	TX_DROP_MAX,
};

struct dev_txq_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t lso_packets;
	uint64_t lso_segments;
	uint64_t lso_super;	/* LSO handed to the wire whole (gso_max_size) */
	uint64_t lso_super_ref;	/* of those, the payload sent from the driver's buffer */
	uint64_t csum_inserted;
	uint64_t hdr_descs;
	uint64_t csum_missing_hdrs;
	uint64_t lso_missing_hdrs;
	uint64_t orphan_hdr_descs; /* header descriptors with no tx descriptor: skipped */
	uint64_t completions;	   /* correlators sent back */
	uint64_t comp_entries;	   /* tx completion entries sent */
	uint64_t comp_busy;	   /* sends refused BUSY: retried later */
	uint64_t comp_lost;	   /* correlators in entries refused CLOSED/PARAMETER */
	uint64_t wire_full;	   /* polls stopped because the wire had no slots */
	uint64_t hdrs_waits;	   /* header descriptors not visible yet: looked again */
	uint64_t reset_unread;	   /* tx descriptors a reset found in the ring */
	uint64_t comp_reset;	   /* correlators a reset dropped before sending them */
	uint64_t drops[TX_DROP_MAX];
};

enum {
	TX_OUTBOX = 32,		      /* completion entries; a poll makes at most 13 */
	TX_SLOTS = VNIC_GSO_MAX_SEGS, /* the most segments one superpacket may need */
	TX_REFS = 64,		      /* superframes of one reservation sent by reference */
	DEV_RETRY_NS = 20000,	      /* backpressure: look again after 20 us */
	/* two per command (read only with the outbox empty) and what faults add */
	CTL_OUTBOX = 16,
	RX_BATCH = 32,
	/*
	 * Buffers one large receive may span: at least 64 KiB in buffers of a
	 * 1500-byte MTU (offered only when they hold VNIC_CABLE_GSO_MAX), and
	 * what rxq->unsent holds when the driver's ring fills in the middle.
	 */
	RX_MAX_CHUNKS = 48,
	/*
	 * Retries (DEV_RETRY_NS apart, 1 ms in all) a superframe waits for
	 * buffers before it is dropped: a driver in another process (split)
	 * takes longer to replenish than one on our cpu.
	 */
	RX_BUF_WAITS = 50,
};

/* One direction's coalescing as the engines apply it (coal.c). */
struct dev_coal_dir {
	uint32_t usecs;
	uint32_t frames;
	bool adaptive;
};

/*
 * The coalescing of one completion ring (coal.c), the device's cpu only.
 * profile and moves mirror dim for the counters (relaxed stores).
 */
struct dev_coal_ring {
	uint32_t pending; /* completions published since the last interrupt */
	uint64_t due_ns;  /* when the timer raises it; 0: nothing pending */
	struct vnic_dim dim;
	const uint64_t *pkts, *bytes; /* the queue's counters, the adaptive samples */
	struct vnic_poller *timer;    /* the coalescing poller of the ring's cpu */
	uint64_t irqs;		      /* interrupts raised */
	uint64_t coalesced;	      /* completions that raised none of their own */
	uint64_t profile, moves;
};

struct vnic_dev;

struct dev_txq {
	struct vnic_napi napi;
	struct vnic_dev *dev;
	unsigned int idx;
	/* set and cleared by the control poller; read by irq ops on the driver's thread */
	struct vnic_subcrq *subm;
	uint32_t comp_handle; /* the driver's tx completion sub-CRQ */
	struct vnic_wire *wire; /* wire q, or the one wire */
	bool blocked;	      /* waiting on the wire or the completion ring: timer */
	uint32_t hdrs_wait;   /* cursor + 1 of a descriptor whose headers we wait for */
	/* completions: the entry being filled, then entries waiting to be sent */
	union vnic_subcrq_entry comp;
	union vnic_subcrq_entry outbox[TX_OUTBOX];
	uint32_t ob_head, ob_tail;
	/* wire slots of the current reservation */
	unsigned int reserved, used;
	struct vnic_pkt *slots[TX_SLOTS];
	/*
	 * A wire with tx_frags: the payloads of this reservation's superframes,
	 * each a packet pointing into the long-term buffer (no pool), chained
	 * from its slot; refs_used of them hold one until the commit.
	 */
	unsigned int refs_used;
	struct vnic_pkt refs[TX_REFS];
	struct dev_coal_ring coal;
	struct dev_txq_stats st;
} vnic_cacheline_aligned;

/* A posted rx buffer, validated when it was taken off the rx add ring. */
struct rx_buf {
	uint64_t correlator;
	uint32_t ioba;
	uint32_t len;
};

struct dev_rxq_stats {
	uint64_t frames;
	uint64_t bytes;
	uint64_t ip_csum_good;
	uint64_t ip_csum_bad;
	uint64_t csum_good;	    /* TCP/UDP checksum verified */
	uint64_t csum_bad;	    /* TCP/UDP checksum verifiably wrong */
	uint64_t bufs_posted;	    /* rx buffer adds accepted */
	uint64_t bad_rx_add_map_id; /* rx buffer adds ignored, by reason */
	uint64_t bad_rx_add_ioba;
	uint64_t bad_rx_add_len;
	uint64_t completions;
	uint64_t comp_busy;
	uint64_t comp_lost;
	uint64_t drop_no_buffer;
	uint64_t drop_too_big;	 /* frame longer than the oldest posted buffer */
	uint64_t drop_buf_fault; /* buffer no longer translates: completed with an error */
	uint64_t lro_frames;	 /* large receives (superframes) delivered */
	uint64_t lro_bufs;	 /* the buffers they took */
	uint64_t lro_buf_waits;	 /* a superframe left on the wire for buffers, a retry */
};

struct dev_rxq {
	struct vnic_subcrq *add; /* the rx buffer add ring we consume */
	uint32_t comp_handle;	 /* the driver's rx completion sub-CRQ */
	/* posted buffers, oldest first */
	struct rx_buf *fifo;
	uint32_t fifo_mask;
	uint32_t head, tail;
	/* completions the driver's ring had no room for: unsent[unsent_pos..unsent_n) */
	union vnic_subcrq_entry unsent[RX_MAX_CHUNKS];
	uint32_t unsent_pos, unsent_n;
	struct dev_coal_ring coal;
	struct dev_rxq_stats st;
} vnic_cacheline_aligned;

struct dev_ltb {
	uint64_t ioba;
	uint32_t len; /* 0: map id not in use */
};

/* Offloads the driver turned on (CONTROL_IP_OFFLOAD). */
struct dev_offloads {
	bool tcp4, udp4, tcp6, udp6;
	bool lso4, lso6;
	bool bad_packet_rx;
	bool large_rx4, large_rx6; /* superframes from the wire, as large receives */
};

struct dev_ctl_stats {
	uint64_t commands;
	uint64_t rc[VNIC_RC_UNSUPPORTEDOPTION + 1];
	uint64_t inits;
	uint64_t xport_events;
	uint64_t ignored; /* malformed or unexpected messages, no answer */
	uint64_t rsp_busy;
	uint64_t rsp_lost;	   /* refused CLOSED/PARAMETER */
	uint64_t resets;	   /* queues and maps torn down */
	uint64_t dup_maps;	   /* REQUEST_MAP of a map already in place, answered again */
	uint64_t dup_logins;	   /* LOGIN repeated while logged in, answered again */
	uint64_t login_conflicts;  /* LOGIN while logged in naming other rings or response buffer */
	uint64_t hdr_mask_changes; /* vnic_dev_set: a new mask, the driver made to renegotiate */
};

struct dev_rx_stats {
	uint64_t filtered;     /* cfg.rx_filter: to another station's MAC */
	uint64_t drop_runt;
	uint64_t drop_link_down;
	uint64_t drop_halted;  /* after a fatal error, until the next INIT */
	uint64_t parse_errors; /* delivered with the checksum flags clear */
	uint64_t drop_super_off; /* a superframe, large receive not negotiated */
	uint64_t drop_bad_super; /* its GSO metadata disagrees with its headers */
	uint64_t drop_bad_queue; /* on wire w >= the rx queues logged in (a wire per queue) */
};

/*
 * An rx engine (rx.c): a NAPI fed by one wire. With one wire (the default)
 * the device has one, which feeds every rx queue by RSS. With a wire per
 * queue pair (cfg.queue_wire), engine w feeds rx queue w alone, on that
 * queue's cpu.
 */
struct dev_rxe {
	struct vnic_napi napi;
	struct vnic_dev *dev;
	struct vnic_wire *wire;
	unsigned int idx;
	bool blocked;
	/* looks a superframe has waited for its buffers (RX_BUF_WAITS at most) */
	uint8_t buf_waits;
	struct dev_rx_stats st;
} vnic_cacheline_aligned;

struct dev_fault_stats {
	uint64_t resets;
	uint64_t failovers;
	uint64_t err_inds;
	uint64_t err_inds_fatal;
	uint64_t link_flaps;
};

/*
 * The scheduled faults (fault.c): a poller of its own on the device's cpu,
 * so every fault happens between two polls of the engines, as a real
 * device's internal events would. Deadlines are 0 when off.
 */
struct dev_fault {
	struct vnic_poller poller;
	bool registered;
	_Atomic bool on; /* vnic_dev_faults_enable, any thread */
	bool running;	 /* the poller has seen on and set its deadlines */
	struct vnic_fault_rng rng;
	uint64_t next_reset, next_failover, next_err, next_flap;
	uint64_t back_at;      /* gone (transport closed) until then */
	uint64_t link_back_at; /* physical link down until then */
	uint32_t error_id;
	struct dev_fault_stats st;
	uint64_t (*now)(void); /* vnic_dev_fault_clock; NULL: vnic_now_ns */
};

/*
 * What other threads hand the device at run time: a header mask, taken by
 * the control poller (ctl.c), and a fault schedule, taken by the fault
 * poller (fault.c). drop_missing_hdrs needs no hand-off: the tx engine
 * loads cfg.drop_missing_hdrs relaxed, and vnic_dev_set stores it.
 */
struct dev_live {
	_Atomic uint32_t hdr_mask; /* enum vnic_dev_hdr_mask wanted */
	_Atomic bool mask_pending;
	pthread_mutex_t lock;
	struct vnic_fault_cfg fault; /* under lock */
	_Atomic bool fault_pending;
	struct vnic_dev_coalesce coal; /* under lock */
	_Atomic bool coal_pending;
};

/*
 * A coalescing poller (coal.c) of one cpu: its timer raises the interrupts
 * due on the rings of that cpu's queues.
 */
struct dev_coal_cpu {
	struct vnic_poller poller;
	struct vnic_dev *dev;
	struct vnic_cpu *cpu;
};

/*
 * Coalescing (coal.c): a poller on each cpu of the device's queues; the
 * first, on the device's cpu, also takes new settings (under the park).
 */
struct dev_coal {
	struct dev_coal_cpu cpu[VNIC_MAX_QUEUES + 1];
	unsigned int ncpu;
	struct dev_coal_dir tx, rx;
};

struct vnic_dev {
	/*
	 * Limits in force (max_mtu capped, ind descs set). hdr_mask and
	 * drop_missing_hdrs change at run time: stored with vnic_ctr_store,
	 * loaded relaxed by readers on other threads (and the tx engine for
	 * drop_missing_hdrs, which other threads write).
	 */
	struct vnic_dev_config cfg;
	struct vnic_hv *hv;
	struct vnic_wire *wire; /* wire 0: what the control poller negotiates for */
	struct vnic_cpu *cpu;
	/* queue pair q's cpu (cpu when not given); the other cpus among them, parked */
	struct vnic_cpu *qcpu[VNIC_MAX_QUEUES];
	struct vnic_park park;
	unsigned int nwires; /* rx engines: rxe[0..nwires) */

	/* control */
	struct vnic_napi ctl_napi;
	enum dev_state state;
	bool link_up;
	bool phys_up;	   /* the backing link: down only while a link-flap fault lasts */
	bool halted;	   /* a fatal error was indicated: no traffic until INIT */
	bool down_pending; /* LOGICAL_LINK_STATE(down) waits for tx completions */
	bool ctl_blocked;  /* responses waiting for room: timer */
	struct vnic_crq down_rsp;
	struct vnic_crq outbox[CTL_OUTBOX];
	uint32_t ob_head, ob_tail;
	uint64_t desc_req; /* TX_RX_DESC_REQ number announced (vnic_ctr_store: counters) */
	/*
	 * The login in force: a repeated LOGIN naming the same rings and the
	 * same response buffer is answered again; the response is in that buffer.
	 */
	uint32_t login_txcomp[VNIC_MAX_QUEUES], login_rxcomp[VNIC_MAX_QUEUES];
	uint64_t login_rsp_ioba;
	uint32_t login_rsp_len;

	/* negotiated (requested and granted) */
	uint32_t req_tx_queues, req_rx_queues;
	uint32_t req_tx_entries, req_rx_add_entries;
	uint32_t req_mtu; /* L3 MTU + 14, as on the CRQ */
	uint32_t req_ind_descs;
	uint32_t rx_buf_size; /* told at login */
	struct dev_offloads ol;
	uint32_t large_rx_max; /* the largest superframe taken, with large_rx4 or 6 */
	struct dev_ltb ltb[VNIC_MAX_MAP_ID + 1];

	/* queues in use (from login) and the most ever used, for counters */
	unsigned int ntxq, nrxq;
	unsigned int txq_hw, rxq_hw;
	struct dev_txq *txq; /* cfg.max_tx_queues */
	struct dev_rxq *rxq; /* cfg.max_rx_queues */

	struct dev_rxe rxe[VNIC_MAX_QUEUES];

	struct dev_ctl_stats ctl_st;
	struct dev_coal coal;
	/* a line of its own: other threads write fault.on (and sizeof stays a multiple of it) */
	struct dev_fault fault vnic_cacheline_aligned;
	/* written by other threads too (vnic_dev_set, vnic_dev_set_faults) */
	struct dev_live live vnic_cacheline_aligned;
};

/* --- trace points (dev.c) ------------------------------------------------ */
/* The device's functions core's tracing times; the names are what reports print. */
struct dev_trace_points {
	struct vnic_trace_point tx; /* "dev_tx": tx engine poll */
	struct vnic_trace_point rx; /* "dev_rx": rx engine poll */
};

extern struct dev_trace_points vnic_dev_tp;

/* --- ctl.c --------------------------------------------------------------- */
int vnic_dev_ctl_poll(struct vnic_napi *napi, int budget);
extern const struct vnic_irq_ops vnic_dev_ctl_irq_ops;
void vnic_dev_ctl_irq(void *ctx);
/* Frees the queues and forgets maps, offloads and requests (INIT, transport event, destroy). */
void vnic_dev_reset(struct vnic_dev *dev);
/*
 * Queues a message of our own (an indication, INIT) behind the responses and
 * schedules the control poller to send it.
 */
void vnic_dev_ctl_send(struct vnic_dev *dev, const struct vnic_crq *msg);
/* LINK_STATE_INDICATION with the physical and logical state now. */
void vnic_dev_link_indicate(struct vnic_dev *dev);
/*
 * The device goes away (a reset or a failover of the backing device): a
 * transport event with reason, the transport closed, everything forgotten.
 * vnic_dev_return brings the transport back and says so with an INIT.
 */
void vnic_dev_vanish(struct vnic_dev *dev, uint8_t reason);
void vnic_dev_return(struct vnic_dev *dev);

/* --- fault.c --------------------------------------------------------------- */
int vnic_dev_fault_poll(struct vnic_poller *p, int budget);

/* --- coal.c --------------------------------------------------------------- */
/*
 * From the configuration (checked by create), before the cpu starts: the
 * poller, the settings, each ring's counters. 0 or -ENOSPC (no poller slot).
 */
int vnic_dev_coal_init(struct vnic_dev *dev);
int vnic_dev_coal_poll(struct vnic_poller *p, int budget);
/*
 * Sends a completion entry carrying n completions to the driver's ring
 * handle, its interrupt moderated by d for ring r: raised now, or by the
 * coalescing poller's timer. The hv rc, as vnic_hv_send_subcrq's.
 */
long vnic_dev_coal_send(struct vnic_dev *dev, const struct dev_coal_dir *d, struct dev_coal_ring *r,
			uint32_t handle, const union vnic_subcrq_entry *e, unsigned int n);
/* Reset: the ring's completions were forgotten, and so is their interrupt. */
void vnic_dev_coal_forget(struct dev_coal_ring *r);

/* --- tx.c ---------------------------------------------------------------- */
int vnic_dev_tx_poll(struct vnic_napi *napi, int budget);
extern const struct vnic_irq_ops vnic_dev_tx_irq_ops;
void vnic_dev_tx_irq(void *ctx);
/*
 * Link down: consumes every descriptor in the ring, completing each with
 * ABORTED, and sends the completions. true when nothing is left (ring
 * empty, every completion sent).
 */
bool vnic_dev_tx_drain(struct dev_txq *txq);
/* Forgets unsent completions and the wire reservation (reset). */
void vnic_dev_tx_forget(struct dev_txq *txq);

/* --- rx.c ---------------------------------------------------------------- */
int vnic_dev_rx_poll(struct vnic_napi *napi, int budget);
/* The wire's rx_irq, with the poll's backpressure state in pending() (ctx: the engine). */
extern const struct vnic_irq_ops vnic_dev_rx_irq_ops;
void vnic_dev_rx_notify(void *ctx);
/* Consumes the rx add ring into the fifo (as far as it has room). */
void vnic_dev_rx_refill(struct vnic_dev *dev, struct dev_rxq *rxq);
/* Link down or reset: drops every posted buffer, in the fifo and in the ring. */
void vnic_dev_rx_forget(struct vnic_dev *dev, struct dev_rxq *rxq);

/* --- helpers -------------------------------------------------------------- */

/*
 * The ring entry i places after the consumer's cursor, if its valid bit is
 * set; else NULL. Acquire, as vnic_subcrq_peek: the entry's body is read
 * after the valid bit and sees what the hv wrote before publishing it.
 * i < q->size.
 */
static inline const union vnic_subcrq_entry *dev_ring_ahead(const struct vnic_subcrq *q, uint32_t i)
{
	const union vnic_subcrq_entry *e = &q->ring[(q->cur + i) & (q->size - 1)];

	if (!(__atomic_load_n(&e->first, __ATOMIC_ACQUIRE) & VNIC_SUBCRQ_VALID))
		return NULL;
	return e;
}

/*
 * A ring pointer shared with the irq ops, which run on the driver's thread:
 * written by the control poller, read with relaxed atomics. The hv orders
 * the rest (an irq is delivered only inside a send on a live ring).
 */
static inline struct vnic_subcrq *dev_ring_get(struct vnic_subcrq *const *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void dev_ring_set(struct vnic_subcrq **p, struct vnic_subcrq *q)
{
	__atomic_store_n(p, q, __ATOMIC_RELAXED);
}

/* The TX_RX_DESC_REQ number the device announces for a header mask (docs/PROTOCOL.md 8.3). */
static inline uint64_t dev_desc_req_of(enum vnic_dev_hdr_mask mask)
{
	uint8_t hdrs = VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3;

	if (mask == VNIC_DEV_HDRS_EXACT)
		return vnic_desc_req_make(0, 0, hdrs);
	return vnic_desc_req_make(0, hdrs, hdrs);
}

/* The L3 MTU negotiated. */
static inline uint32_t dev_mtu(const struct vnic_dev *dev)
{
	return dev->req_mtu - VNIC_ETH_HLEN;
}

#endif /* VNIC_DEVICE_DEV_INT_H */
