/* SPDX-License-Identifier: MIT */
/*
 * src/driver: the vNIC client driver. Public header of the layer.
 *
 *   drv.c    configuration, policies, create/destroy, open/close waits,
 *            the netdev, counters
 *   ctl.c    the control poller: the CRQ bring-up state machine of
 *            docs/PROTOCOL.md section 2 (init, version, capabilities,
 *            offloads, maps, login, link), close, command retries
 *   reset.c  resets (docs/ARCHITECTURE.md section 10): the reset queue, the
 *            reasons and how each takes the datapath down and back, the tx
 *            watchdog, the probe of a partner in doubt, change-param
 *   live.c   policies changed while the driver runs (vnic_drv_set_policies)
 *   res.c    long-term buffer pools, sub-CRQs, indirect arrays
 *   tx.c     xmit (LTB copy, descriptors, direct or indirect submit, BQL,
 *            stop/wake) and tx completion (reclaim)
 *   rx.c     the rx NAPI poll (completions, copy out, checksum, GRO or list
 *            delivery) and rx buffer replenish
 *
 * Host contract (on top of core.h's vnic_host_ops): the packets rx hands up
 * come from the driver's per-queue pools, which are single-threaded: the
 * host frees them on the rx queue's cpu (vnic_netdev rx_cpu), before
 * vnic_drv_destroy. xmit frees the host's packet to its own pool on the tx
 * cpu, right after copying it. tx_done and tx_wake may be called from
 * inside xmit (a drop, tx-reclaim=orphan, a lazy reclaim): the host must
 * not call xmit from them.
 *
 * Threads. Everything the driver does runs on one vnic_cpu, the driver's
 * cpu (config.cpu): the control poller (woken by the CLIENT CRQ interrupt),
 * one tx completion poller per tx queue, one NAPI per rx queue. xmit must
 * be called on that cpu too (vnic_netdev_tx_cpu), as the core's txq
 * contract wants: so the driver's state needs no lock. With queue_cpu,
 * queue pair q runs on a cpu of its own instead (vnic_netdev_tx_cpu and
 * rx_cpu say which), and the control poller parks those cpus, between two
 * of their polls, while it works (core/park.c): still no lock on the datapath. Only open, close,
 * change-param, set-policies, the policies and the counters are called
 * from other threads; open, close and set-policies hand their request to
 * the control poller and wait for its answer, change-param queues a reset
 * and returns.
 *
 * Lifecycle:
 *	vnic_drv_create (before the cpu starts: it registers its pollers)
 *	vnic_drv_open   (manual mode: steps the cpus it is given; threads: waits)
 *	attach a host (vnic_netdev_attach), traffic
 *
 * The netdev's features, mtu, gso_max_size and queue counts are the
 * negotiated ones only once open has returned 0 (before: no features, the
 * asked-for counts). A host that reads them when it is created must be
 * created after open: open in manual mode, create the hosts (their pollers
 * too), then start the cpus.
 *	vnic_drv_close  (link down; every buffer comes back; pools full again)
 *	vnic_drv_destroy (cpus stopped or not being run)
 *
 * Nothing the device writes (CRQ responses, the login response, the offload
 * buffer, tx and rx completions) is trusted: every count, length, offset and
 * correlator is checked, and a bad one is counted and ignored.
 */
#ifndef VNIC_DRIVER_H
#define VNIC_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "hv/hv.h"
#include "net/net.h"
#include "proto/proto.h"

enum vnic_drv_limits {
	VNIC_DRV_DEFAULT_ENTRIES = 512,
	VNIC_DRV_DEFAULT_MTU = 1500, /* L3 */
	VNIC_DRV_MIN_MTU = 68,
	VNIC_DRV_MAX_MTU = 9000,
	VNIC_DRV_DEFAULT_RECLAIM_NS = 1000000, /* tx-reclaim=lazy: coarse timer, 1 ms */
	VNIC_DRV_DEFAULT_OPEN_TIMEOUT_NS = 5000000000ull,
	VNIC_DRV_RX_HEADROOM = 64, /* in the host packets rx hands up */
	VNIC_DRV_AGG_BUFS = VNIC_GRO_BUCKETS * VNIC_GRO_MAX_HELD, /* per rx queue */
	VNIC_DRV_INIT_RETRY_NS = 10000000, /* PROTOCOL.md section 2 step 1: every 10 ms */
	VNIC_DRV_INIT_RETRIES = 100,	   /* ... 100 times (an open); a reset goes on: */
	VNIC_DRV_INIT_SLOW_NS = 100000000, /* every 100 ms, while the link is wanted up */
	VNIC_DRV_CAP_ROUNDS = 3,	   /* REQUEST_CAPABILITY rounds after PARTIALSUCCESS */
	/* a command unanswered this long is sent again (a lost CRQ message) ... */
	VNIC_DRV_CMD_TIMEOUT_NS = 50000000,
	VNIC_DRV_CMD_RETRIES = 10,	     /* ... this many times, then the bring-up fails */
	VNIC_DRV_RESET_RETRY_NS = 100000000, /* a failed reset: hard, this much later */
	VNIC_DRV_FAILOVER_WAIT_NS = 1000000000ull, /* FAILOVER event: its INIT by then */
	VNIC_DRV_PROBE_NS = 50000000,	/* a partner in doubt, or no carrier: asked this often */
	VNIC_DRV_RX_RETRY_NS = 1000000, /* a replenish that fell short: again this much later */
};

/* The tx watchdog's default: a queue stopped this long without progress resets. */
#define VNIC_DRV_DEFAULT_TX_TIMEOUT_NS 2000000000ull

/* ---------------------------------------------------------------------------
 * Policies: each technique of the netdev threads vnic reproduces
 * (docs/SEEDS.md) with both behaviours; where each one acts is in
 * docs/ARCHITECTURE.md section 6. The enum value 0 of each is the default
 * ("after").
 * ------------------------------------------------------------------------- */

/* ibmvnic rr 1/7 (docs/SEEDS.md). */
enum vnic_drv_rx_replenish {
	VNIC_DRV_REPLENISH_LOW = 0, /* only when fewer than half the buffers are posted */
	VNIC_DRV_REPLENISH_ALWAYS,  /* also after every poll under budget */
};

/* ibmvnic rr 2/7 and 3/7. */
enum vnic_drv_tx_hdr_build {
	VNIC_DRV_HDR_DIRECT = 0, /* header descriptors written straight from the packet */
	VNIC_DRV_HDR_COPY,	 /* through a temporary buffer and a local descriptor */
};

/* ibmvnic rr 5/7. */
enum vnic_drv_tx_submit {
	/* direct for a lone non-GSO packet, nothing batched, no xmit_more, plain byte 0 */
	VNIC_DRV_SUBMIT_AUTO = 0,
	VNIC_DRV_SUBMIT_INDIRECT, /* always indirect */
	/*
	 * A lone packet goes whichever way this queue has measured to cost it
	 * less (vnic_cheaper, docs/MECHANISMS.md section 10): the two sends'
	 * relative cost is the boundary's, not the driver's, to say.
	 */
	VNIC_DRV_SUBMIT_ADAPTIVE,
};

/* ibmvnic rr 6/7. */
enum vnic_drv_bql_complete {
	VNIC_DRV_BQL_PER_ROUND = 0, /* vnic_txq_completed once per completion round */
	VNIC_DRV_BQL_PER_ENTRY,	    /* once per tx completion entry */
};

/* ibmvnic rr 7/7 and ibmvnic e633e32b60. */
enum vnic_drv_tx_csum {
	/*
	 * Software checksum (vnic_csum_help) for a packet that could otherwise
	 * go direct but whose checksum offload needs header descriptors (the
	 * cautious mask); offload with the headers asked for everywhere else.
	 * With the exact mask, offload needs no headers, and the packet goes
	 * direct with the offload (the cover letter's "investigate the
	 * bitstring" follow-up).
	 */
	VNIC_DRV_CSUM_SW_DIRECT = 0,
	VNIC_DRV_CSUM_HW_HEADERS,   /* offload with the headers asked for: never direct then */
	VNIC_DRV_CSUM_HW_NOHEADERS, /* offload without the csum headers (unsafe; counted) */
};

/* bcmgenet orphan. */
enum vnic_drv_tx_reclaim {
	VNIC_DRV_RECLAIM_IRQ = 0, /* tx completion irq armed, own poller per round */
	VNIC_DRV_RECLAIM_LAZY,	  /* irq off: reclaim in xmit at 3/4 ring, and a timer */
	VNIC_DRV_RECLAIM_NAPI,	  /* inside the rx queue's NAPI poll (virtio-net) */
	VNIC_DRV_RECLAIM_ORPHAN,  /* as irq, but tx_done (TSQ release) at xmit */
};

/*
 * Where a superpacket is sent from. ibmvnic copies every packet into a
 * long-term buffer mapped once at bring-up, because a hypervisor TCE
 * mapping per packet costs more than the copy; most drivers map the
 * packet's own buffer instead. With the host's packet pool registered as
 * long-term buffers of its own (vnic_netdev_tx_pool), map costs neither.
 */
enum vnic_drv_tx_buf {
	VNIC_DRV_TXBUF_COPY = 0, /* every packet copied into the LTB (ibmvnic) */
	/*
	 * A superpacket from a registered pool is sent from its own buffer,
	 * held until its completion; smaller packets are still copied (a
	 * copybreak: 1.5 KiB copied costs less than a 64 KiB buffer held).
	 */
	VNIC_DRV_TXBUF_MAP,
};

/*
 * How GRO builds an aggregate: copying each merged segment's payload into
 * one 64 KiB buffer, or chaining the segments as fragments (as Linux's GRO
 * appends page fragments) for a host that takes them (VNIC_HOST_F_FRAGLIST:
 * the TAP writes them with one writev); a host that does not gets copies.
 */
enum vnic_drv_rx_agg {
	VNIC_DRV_AGG_COPY = 0,
	VNIC_DRV_AGG_FRAGS,
};

const char *vnic_drv_rx_replenish_name(enum vnic_drv_rx_replenish v);
int vnic_drv_rx_replenish_parse(const char *s, enum vnic_drv_rx_replenish *v);
const char *vnic_drv_tx_hdr_build_name(enum vnic_drv_tx_hdr_build v);
int vnic_drv_tx_hdr_build_parse(const char *s, enum vnic_drv_tx_hdr_build *v);
const char *vnic_drv_tx_submit_name(enum vnic_drv_tx_submit v);
int vnic_drv_tx_submit_parse(const char *s, enum vnic_drv_tx_submit *v);
const char *vnic_drv_bql_complete_name(enum vnic_drv_bql_complete v);
int vnic_drv_bql_complete_parse(const char *s, enum vnic_drv_bql_complete *v);
const char *vnic_drv_tx_csum_name(enum vnic_drv_tx_csum v);
int vnic_drv_tx_csum_parse(const char *s, enum vnic_drv_tx_csum *v);
const char *vnic_drv_tx_reclaim_name(enum vnic_drv_tx_reclaim v);
int vnic_drv_tx_reclaim_parse(const char *s, enum vnic_drv_tx_reclaim *v);
const char *vnic_drv_tx_buf_name(enum vnic_drv_tx_buf v);
int vnic_drv_tx_buf_parse(const char *s, enum vnic_drv_tx_buf *v);
const char *vnic_drv_rx_agg_name(enum vnic_drv_rx_agg v);
int vnic_drv_rx_agg_parse(const char *s, enum vnic_drv_rx_agg *v);
/*
 * Names: "low"/"always", "direct"/"copy", "auto"/"indirect"/"adaptive",
 * "per-round"/"per-entry", "sw-direct"/"hw-headers"/"hw-noheaders",
 * "irq"/"lazy"/"napi"/"orphan", "copy"/"map", "copy"/"frags". rx-deliver uses vnic_deliver_mode_name/parse
 * of src/net ("list", "gro", "gro-list"). A value outside its enum is named
 * "unknown", so a caller may list every name by walking from 0 until then.
 * Parse: 0 or -EINVAL; *v untouched on error.
 */

/* ---------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------- */

struct vnic_drv_config {
	/* the cpu every poller of the driver runs on, and xmit (required) */
	struct vnic_cpu *cpu;
	/*
	 * Queue pair q's cpu: its tx completion poller, its rx NAPI and xmit on
	 * tx queue q (NULL: cpu). The control poller stays on cpu and parks the
	 * others while it works (docs/ARCHITECTURE.md section 4.2). Not yet
	 * started at create, as cpu. tx-reclaim=napi, which reclaims tx queue t
	 * in rx queue t % nrx, is refused when any queue is on another cpu.
	 */
	struct vnic_cpu *queue_cpu[VNIC_MAX_QUEUES];
	const char *name; /* netdev name; default "vnic0" */
	uint8_t mac[6];	  /* default 02:00:00:00:00:01 */
	/*
	 * What to ask the device for. It may grant less (PARTIALSUCCESS: the
	 * driver adopts the number); it never grants more than asked.
	 */
	unsigned int tx_queues;	    /* 1..VNIC_MAX_QUEUES; default 1 */
	unsigned int rx_queues;	    /* default 1 */
	uint32_t tx_entries;	    /* descriptors per tx queue; default 512 */
	uint32_t rx_entries;	    /* rx buffers per rx queue; default 512 */
	uint32_t mtu;		    /* L3, VNIC_DRV_MIN_MTU..VNIC_DRV_MAX_MTU; default 1500 */
	uint32_t max_ind_descs;	    /* entries per indirect send, 1..128; default 16 */
	bool csum;		    /* ask for checksum offload (default true) */
	bool tso;		    /* ask for LSO (default true; needs csum) */
	bool bql;		    /* byte queue limits on the tx queues (default true) */
	unsigned int deliver_batch; /* rx list batch in segments; 0 = 8 (gro_normal_batch) */
	uint64_t reclaim_ns;	    /* tx-reclaim=lazy timer; default 1 ms */
	/* policies */
	enum vnic_drv_rx_replenish rx_replenish;
	enum vnic_drv_tx_hdr_build tx_hdr_build;
	enum vnic_drv_tx_submit tx_submit;
	enum vnic_drv_bql_complete bql_complete;
	enum vnic_drv_tx_csum tx_csum;
	enum vnic_deliver_mode rx_deliver; /* default VNIC_DELIVER_GRO_LIST */
	enum vnic_drv_tx_reclaim tx_reclaim;
	enum vnic_drv_tx_buf tx_buf;
	enum vnic_drv_rx_agg rx_agg;
	/*
	 * Resets (docs/ARCHITECTURE.md section 10). The tx watchdog: a tx queue
	 * stopped (ring full, BQL, or the partner gone) with no completion and
	 * no send for tx_timeout_ns, while the link is up with carrier, resets
	 * the driver (reason TIMEOUT). Checked every quarter of it, so it fires
	 * between 1 and 1.25 times tx_timeout_ns. 0 = 2 s.
	 */
	uint64_t tx_timeout_ns;
	/*
	 * What a later vnic_drv_change_param may ask for: queue pairs up to
	 * max_queues (0 = tx_queues and rx_queues), entries per ring up to
	 * max_entries (0 = tx_entries and rx_entries). Create sizes the queues,
	 * their pollers and their completion rings for these.
	 */
	unsigned int max_queues;
	uint32_t max_entries;
};

/*
 * A change of parameters at run time (vnic_drv_change_param): 0 keeps the
 * value in force. The ranges of struct vnic_drv_config, bounded by what
 * create sized (max_queues, max_entries).
 */
struct vnic_drv_params {
	uint32_t mtu; /* L3 */
	unsigned int tx_queues;
	unsigned int rx_queues;
	uint32_t tx_entries;
	uint32_t rx_entries;
};

/* Defaults as documented above; cpu stays NULL. */
void vnic_drv_config_default(struct vnic_drv_config *cfg);

struct vnic_drv;

/*
 * Creates a driver for hv's CLIENT side, with its pollers on cfg->cpu
 * (before that cpu starts: one control poller, then per queue asked for a
 * tx completion poller and an rx NAPI). Takes the CLIENT CRQ interrupt.
 * Nothing is sent to the device yet. The netdev exists from here on (with
 * the asked-for queue counts, tx_cpu/rx_cpu set, every queue stopped), so a
 * host may be created against it before open.
 * 0 or -errno: -EINVAL (config), -ENOSPC (poller slots), -EBUSY (cpu
 * started), -ENOMEM.
 */
int vnic_drv_create(struct vnic_drv **drv, struct vnic_hv *hv, const struct vnic_drv_config *cfg);
/*
 * Frees everything. The cpu must be stopped (or, in manual mode, not being
 * run), and the host must have freed every packet rx gave it (they belong
 * to the driver's pools). If the driver was logged in, the device is told
 * with a transport event (PARTNER_CLOSED). Its pollers stay registered on
 * the cpu (the core has no removal): the cpu must not run again.
 */
void vnic_drv_destroy(struct vnic_drv *drv);

/*
 * Brings the link up: the whole bring-up of docs/PROTOCOL.md section 2 the first
 * time (or after a failure or a reset), only link up after a close.
 * Waits for the answer, at most timeout_ns (0 = 5 s):
 *  - manual mode (the driver's cpu has no thread): steps cpus[0..ncpus)
 *    with vnic_cpus_run_until; they must include the driver's cpu, its
 *    queues' (queue_cpu) and the device's. cpus NULL: the driver's cpu alone.
 *  - threads started: sleeps a little between checks (setup path).
 * 0 (also if already open), or -errno: -ETIMEDOUT (no answer; also when
 * the device never answers INIT), -EPROTO (version, capability or login
 * response the driver cannot use), -EINVAL (the device refused a request as
 * below its minimum), -ENOMEM, -ECONNRESET (the device reset meanwhile),
 * -EIO (an hcall failed). On failure the driver is closed; a device that
 * had logged us in is told to forget us (transport event). Rings and
 * buffers stay allocated for the next attempt (freed at destroy).
 * Not concurrently with another open or close of the same driver.
 */
int vnic_drv_open(struct vnic_drv *drv, struct vnic_cpu **cpus, unsigned int ncpus,
		  uint64_t timeout_ns);
/*
 * LOGICAL_LINK_STATE(down): every tx queue stopped (xmit answers
 * VNIC_TX_BUSY), the batch not yet flushed dropped, every outstanding tx
 * completed (the device answers once it has completed them all, with an
 * error rc: the host gets tx_done DROPPED), every rx buffer forgotten. The
 * login stays: a later open only brings the link up again. Afterwards
 * vnic_drv_pools_full() is true once the host has freed what rx gave it.
 * Same modes and timeout as open. 0, or -ETIMEDOUT (then the driver
 * reclaims everything itself).
 */
int vnic_drv_close(struct vnic_drv *drv, struct vnic_cpu **cpus, unsigned int ncpus,
		   uint64_t timeout_ns);

/*
 * Any thread: queues a CHANGE_PARAM reset that negotiates again with p
 * (ibmvnic's do_change_param_reset): the datapath quiesces, everything in
 * flight is completed to the host as dropped, the maps are released, and
 * the bring-up runs from INIT with the new values; the netdev reports them
 * when the link is back (a host must read the MTU and queue counts again:
 * queues beyond the new count take nothing). A second change before the
 * first ran replaces it. If the device refuses the new values, the old ones
 * are restored and the driver comes back with them (reset_failures counts
 * it). 0 (queued; it runs on the driver's cpu, watch resets_change_param),
 * or -EINVAL (a value out of range).
 */
int vnic_drv_change_param(struct vnic_drv *drv, const struct vnic_drv_params *p);

/*
 * Policies at run time, as ethtool -K/-C change a running NIC: want's
 * rx_replenish, tx_hdr_build, tx_submit, bql_complete, tx_csum, rx_deliver,
 * tx_reclaim, reclaim_ns (0 = 1 ms) and bql; every other field of want is
 * ignored. Applied by the control poller on the driver's cpu, between two
 * polls, each where it is safe mid-traffic (live.c, docs/ARCHITECTURE.md
 * section 4): tx-submit, tx-csum, tx-hdr-build and tx-buf at the next xmit,
 * bql-complete at the next completion round, rx-deliver after a flush of
 * what GRO and the list hold, bql at once (on: the DQL starts from its
 * minimum), tx-reclaim for each queue at the next poll of the owner of its
 * completion interrupt (lazy: interrupt off and the timer armed; napi: the
 * rx NAPI reclaims; irq, orphan: the completion poller), orphan for the
 * packets sent from then on (one marked already keeps its mark).
 * Whatever the state: a driver not open keeps them for its next bring-up.
 * Threads: waits for the control poller's answer, at most timeout_ns
 * (0 = 5 s). Manual mode (the cpu has no thread), or called on the
 * driver's cpu (a poller of it, not from inside xmit or a host callback):
 * applied at once. A newer call replaces an older one's values not yet
 * applied. 0 (the counter policy_changes counts the calls that changed
 * something), -EINVAL (a value outside its enum, or tx-reclaim=napi with
 * queues on other cpus: nothing changed), -EAGAIN (on the driver's cpu, a
 * queue's cpu did not park in time: nothing changed), or -ETIMEDOUT (no
 * answer: the values stay posted and are applied when the control poller
 * next runs).
 */
int vnic_drv_set_policies(struct vnic_drv *drv, const struct vnic_drv_config *want,
			  uint64_t timeout_ns);
/*
 * Any thread: the policy fields in force (those set_policies takes), read
 * relaxed for a report; every other field of out is zeroed. Right after
 * set_policies returned 0 they are the ones asked for.
 */
void vnic_drv_policies(const struct vnic_drv *drv, struct vnic_drv_config *out);

/* The netdev a host attaches to (vnic_netdev_attach). Valid until destroy. */
struct vnic_netdev *vnic_drv_netdev(struct vnic_drv *drv);
/* True while the link is up (open and not reset since). Any thread. */
bool vnic_drv_is_open(const struct vnic_drv *drv);

/*
 * Counters (core.h "Counters"). Any thread; values read from another
 * thread may be stale. Driver-wide: state, open, carrier, opens, closes,
 * resets (begun), resets_<reason> for xport, passive_init, failover,
 * mobility, hard, fatal, timeout, non_fatal, change_param; reset_done,
 * reset_failures, reset_aborted, reset_coalesced, reset_last_ns,
 * reset_max_ns, reset_total_ns (begun to link up again), reset_queued
 * (waiting now), reset_active, probes, probe_resumes, init_retries,
 * cmd_retries, xport_events, error_indications, crq_ignored,
 * crq_send_errors, ind_fallbacks, policy_changes, neg_tx_queues, neg_rx_queues,
 * neg_tx_entries, neg_rx_entries, neg_mtu (L3), neg_ind_descs,
 * cur_ind_descs, rx_buf_size, desc_req, offloads (bit 0 tcp4, 1 udp4,
 * 2 tcp6, 3 udp6, 4 lso4, 5 lso6, 6 large_rx4, 7 large_rx6), drop_bad_queue, bad_tx_comp_ring,
 * pools_full. Per tx queue N: txN_direct_packets, txN_batched_packets,
 * txN_bytes, txN_dropped_packets, txN_csum_sw, txN_csum_offload,
 * txN_lso_packets, txN_hdr_descs, txN_indirect_flushes, txN_direct_sends,
 * txN_bql_limit, txN_bql_inflight, txN_stops, txN_wakes, txN_busy,
 * txN_completions, txN_completion_rounds, txN_bql_completed_calls,
 * txN_comp_errors (device rc != 0), txN_bad_correlator, txN_bad_num_comps,
 * txN_flush_errors, txN_flush_rc_{busy,parameter,closed,dropped,other},
 * txN_comp_stale (completions found after a reset took the slots back),
 * txN_timeouts (the watchdog fired),
 * txN_xmit_reclaims (lazy: reclaims done in xmit), txN_timer_reclaims,
 * txN_orphaned, txN_interrupts (tx completion irqs taken), txN_used (entries in flight),
 * txN_pool_free, txN_tso_free, txN_drop_{too_long,bad_gso,bad_headers,no_buffer,down,flush,
 * reset} (reset: sent, and in flight when a reset took it back: the host got
 * tx_done DROPPED). Per
 * rx queue N: rxN_packets, rxN_bytes, rxN_interrupts, rxN_polls, rxN_replenish_calls,
 * rxN_replenish_buffers, rxN_replenish_errors, rxN_gro_merged, rxN_gro_held, rxN_list_batches,
 * rxN_delivered (packets handed to the host, an aggregate once),
 * rxN_csum_unnecessary, rxN_parse_errors, rxN_bad_correlator,
 * rxN_drop_rc, rxN_drop_bad_len, rxN_drop_no_pkt, rxN_reset_drained,
 * rxN_replenish_retries, rxN_posted, rxN_lro_packets and rxN_lro_bufs (large
 * receives handed up, the buffers they spanned), rxN_drop_lro_too_big,
 * rxN_drop_lro_bad_meta (docs/PROTOCOL.md section 8.5),
 * rxN_pool_free, rxN_pkt_free, rxN_agg_free.
 *
 * What a report of the link needs is here, readable from any thread: the
 * link (open: up and not resetting; carrier: the device's link indication;
 * state), the values the last negotiation settled (neg_mtu, neg_tx_queues,
 * neg_rx_queues, neg_tx_entries, neg_rx_entries, rx_buf_size), the offloads
 * granted (offloads: checksum over IPv4 is bit 0 or 1, over IPv6 bit 2 or 3,
 * LSO bits 4 and 5), the header mask the device announced (desc_req, the
 * TX_RX_DESC_REQ number: bytes 2, 3, 4 for plain, checksum and LSO packets,
 * docs/PROTOCOL.md section 8.3), the indirect entries granted (neg_ind_descs)
 * and in use after a fallback (cur_ind_descs). They hold the values of the
 * last bring-up until the next one overwrites them.
 */
unsigned int vnic_drv_counters(const struct vnic_drv *drv, struct vnic_counter *out,
			       unsigned int max);
/* One counter by name: 0 or -ENOENT. */
int vnic_drv_counter(const struct vnic_drv *drv, const char *name, uint64_t *value);

/*
 * True when every pool is full: tx and TSO slots all free, no rx buffer
 * posted, no descriptor in flight, and every host packet and GRO aggregate
 * buffer back in the driver's pools. For "quiesced" checks after close; read
 * it with the cpus stopped or from the driver's cpu.
 */
bool vnic_drv_pools_full(const struct vnic_drv *drv);

/*
 * Diagnostics and tests: the hv handles of the driver's own rings of queue
 * q (what the device sends tx and rx completions to). -ENOENT if not
 * logged in or no such queue; a handle is 0 for a missing direction.
 */
int vnic_drv_ring_handles(const struct vnic_drv *drv, unsigned int q, uint32_t *txcomp,
			  uint32_t *rxcomp);

#endif /* VNIC_DRIVER_H */
