/* SPDX-License-Identifier: MIT */
/*
 * src/device: the vNIC server. Public header of the layer.
 *
 *   dev.c   configuration, creation, teardown, counters
 *   ctl.c   the control poller: CRQ negotiation (docs/PROTOCOL.md section 2),
 *           long-term buffer maps, login, logical link state
 *   tx.c    one tx engine per tx queue: descriptor validation, checksum
 *           insertion, LSO, tx completions
 *   rx.c    the rx engine: posted rx buffers, RSS, checksum verification,
 *           rx completions
 *   fault.c faults on a schedule (docs/FAULTS.md): self resets, failovers,
 *           error indications, physical link flaps
 *   coal.c  interrupt coalescing of the completion interrupts, fixed or
 *           adaptive (docs/MECHANISMS.md section 9)
 *
 * The device runs entirely as pollers on one vnic_cpu: a control NAPI woken
 * by the server side's CRQ interrupt, one tx NAPI per tx queue woken by the
 * interrupt of that queue's tx submission sub-CRQ, and one rx NAPI woken by
 * the wire. Its state is therefore touched by that cpu's thread only (with
 * queue_cpu and a wire per queue pair, queue pair q's engines run on cpu q,
 * which the control pollers park while they work: still no lock); the
 * driver reaches it through the hypervisor alone, and nothing the driver
 * writes (CRQ messages, login and offload buffers, descriptors, rx buffer
 * adds, long-term buffer contents) is trusted.
 */
#ifndef VNIC_DEVICE_H
#define VNIC_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "hv/hv.h"
#include "proto/proto.h"

/*
 * Which headers the device asks for in header descriptors (TX_RX_DESC_REQ,
 * docs/PROTOCOL.md section 8.3). Both request L3 headers (0xA0, the byte of
 * a real server's trace) for LSO; they differ in checksum offload:
 *   CAUTIOUS  00 00 A0 00 A0 00 00 00: headers for every checksum offload
 *             packet too, as the server of ibmvnic rr 7/7 did. A driver that
 *             honours it must send such packets indirect.
 *   EXACT     00 00 00 00 A0 00 00 00: headers only where the device needs
 *             them (LSO), so checksum offload can go direct.
 */
enum vnic_dev_hdr_mask {
	VNIC_DEV_HDRS_CAUTIOUS = 0,
	VNIC_DEV_HDRS_EXACT = 1,
};

/* "cautious", "exact"; "unknown" for any other value. */
const char *vnic_dev_hdr_mask_name(enum vnic_dev_hdr_mask m);

enum vnic_dev_limits {
	VNIC_DEV_DEFAULT_QUEUES = 4,
	VNIC_DEV_DEFAULT_MIN_ENTRIES = 64,
	VNIC_DEV_DEFAULT_MAX_ENTRIES = 1024,
	VNIC_DEV_MIN_MTU = 68,		 /* L3, RFC 791 */
	VNIC_DEV_DEFAULT_MAX_MTU = 9000, /* L3; capped by the wire's MTU */
	VNIC_DEV_DEFAULT_MTU = 1500,	 /* REQ_MTU before any request: 1500 + 14 */
	/*
	 * Smallest LSO MSS: some backing adapters reject GSO below 224
	 * (docs/PROTOCOL.md section 10), and a floor also bounds the segments of
	 * one superpacket (64 KiB / 224 = 293), all of which must fit the wire
	 * at once. Configurable down to VNIC_DEV_MIN_LSO_MSS.
	 */
	VNIC_DEV_DEFAULT_LSO_MSS = 224,
	VNIC_DEV_MIN_LSO_MSS = 64,
	VNIC_DEV_RX_BUF_ALIGN = 128, /* as ibmvnic's rx pool buffers */
};

/*
 * Interrupt coalescing of the device's completion interrupts to the driver,
 * in ethtool -C's terms (docs/MECHANISMS.md section 9). Per completion ring:
 * the interrupt is raised once frames completions have been published since
 * the last one, or usecs after the first of them, whichever comes first; 0
 * turns a criterion off; both 0 (the default) is an interrupt per
 * completion entry, as without coalescing. frames alone still never strands
 * a completion: a timer of VNIC_DEV_COAL_BACKSTOP_US raises it. The entries
 * themselves are published at once: a driver polling its ring sees them,
 * only the interrupt waits. adaptive_rx / adaptive_tx: usecs and frames of
 * that direction are ignored, each ring walks the profile table of coal.c
 * by its own rates (core's vnic_dim).
 */
struct vnic_dev_coalesce {
	uint32_t rx_usecs;
	uint32_t rx_frames;
	uint32_t tx_usecs;
	uint32_t tx_frames;
	bool adaptive_rx;
	bool adaptive_tx;
};

enum vnic_dev_coal_limits {
	VNIC_DEV_COAL_MAX_USECS = 100000,
	VNIC_DEV_COAL_MAX_FRAMES = 4096,
	VNIC_DEV_COAL_BACKSTOP_US = 1000,
};

/*
 * Device configuration. Fill it with vnic_dev_config_default() and change
 * what you need. The driver negotiates within these bounds.
 */
struct vnic_dev_config {
	uint32_t max_tx_queues; /* 1..VNIC_MAX_QUEUES; default 4 */
	uint32_t max_rx_queues;
	uint32_t min_tx_entries; /* per tx submission sub-CRQ; default 64 */
	uint32_t max_tx_entries; /* default 1024, at most VNIC_MAX_SUBCRQ_ENTRIES */
	uint32_t min_rx_add_entries;
	uint32_t max_rx_add_entries;
	uint32_t min_mtu;	/* L3 MTU range; the CRQ carries mtu + 14 */
	uint32_t max_mtu;	/* capped by wire->mtu at create */
	uint32_t max_ind_descs; /* announced MAX_IND_DESCS; 0 = the hv's limit */
	bool csum_ipv4;		/* TCP and UDP checksum offload over IPv4 */
	bool csum_ipv6;
	bool lso_ipv4; /* large send (TSO, and USO) over IPv4 */
	bool lso_ipv6;
	uint32_t min_lso_mss; /* announced min_large_tx_mss; default 224 */
	enum vnic_dev_hdr_mask hdr_mask;
	/*
	 * A checksum-offload or LSO packet that arrives without the header
	 * descriptors the mask asked for (the unsafe "offload without headers"
	 * variant of ibmvnic e633e32b60) is always counted (txN_csum_missing_hdrs,
	 * txN_lso_missing_hdrs). false (default): the device uses its own parse
	 * of the frame and sends it, so the risk is visible, not fatal. true:
	 * it is dropped with a PARAMETER completion (txN_drop_missing_hdrs).
	 */
	bool drop_missing_hdrs;
	/*
	 * Bytes per posted rx buffer the device asks for (login response).
	 * 0 = derived from REQ_MTU: ALIGN(req_mtu + 4 (one VLAN tag), 128),
	 * e.g. 1536 for MTU 1500, 9088 for 9000. A larger value is used as is;
	 * a smaller one is raised to that.
	 */
	uint32_t rx_buf_size;
	/*
	 * Faults on a schedule (docs/FAULTS.md): reset_every_ns,
	 * failover_every_ns, down_ns, err_ind_every_ns, err_ind_fatal,
	 * link_flap_every_ns, link_down_ns and seed are the device's; the
	 * rest is the hv's (vnic_hv_set_faults). Nothing happens until
	 * vnic_dev_faults_enable. Default: none.
	 */
	struct vnic_fault_cfg fault;
	/* Completion interrupt coalescing; default all 0: an interrupt per completion. */
	struct vnic_dev_coalesce coal;
	/*
	 * The receive filter of a device on a shared wire (a switch port,
	 * where frames for other stations arrive too): on, only frames to mac,
	 * broadcast and multicast are delivered; the rest are dropped and
	 * counted (rx_filtered). Off (the default): every frame is delivered,
	 * as on a cable, where every frame is for the peer.
	 */
	bool rx_filter;
	uint8_t mac[6];
	/*
	 * A wire per queue pair (a cable with a ring pair per queue,
	 * vnic_cable_cfg.queues): queue_wire[q] for q >= 1, the create's wire
	 * being wire 0 (queue_wire[0] NULL or that wire). All NULL (default):
	 * one wire, from which the rx engine feeds every rx queue by RSS. Given,
	 * they must be max_tx_queues == max_rx_queues wires with the create's
	 * wire's sizes: tx queue q sends on wire q, and what arrives on wire q
	 * goes to rx queue q, unless the driver logged in with fewer rx queues
	 * than that: then it is dropped and counted (rx_drop_bad_queue), never
	 * put on another queue, which may run on another cpu.
	 */
	struct vnic_wire *queue_wire[VNIC_MAX_QUEUES];
	/*
	 * Queue pair q's cpu (NULL: the create's cpu): the tx engine of tx
	 * queue q, the rx engine of wire q and the coalescing timer of both
	 * queues' completion rings. The control, fault and coalescing-settings
	 * pollers stay on the create's cpu and park the others while they work
	 * (core's vnic_park; counters parks, park_retries). Needs a wire per
	 * queue pair (queue_wire): one wire's rx engine feeds every rx queue.
	 * Not yet started at create, as cpu.
	 */
	struct vnic_cpu *queue_cpu[VNIC_MAX_QUEUES];
};

struct vnic_dev;

/* Defaults: 4 + 4 queues, 64..1024 entries, MTU 68..9000, all offloads on, cautious mask. */
void vnic_dev_config_default(struct vnic_dev_config *cfg);

/*
 * Creates a device serving hv's SERVER side, transmitting on wire and
 * receiving from it, with all its pollers on cpu. cfg NULL = defaults.
 * Call before cpu starts (pollers are registered then); it takes the hv's
 * SERVER CRQ interrupt and the wire's rx notification (wire->notify), and
 * waits for the driver's INIT. 0 or -errno: -EINVAL (bad config, the wire's
 * MTU below min_mtu, queue_wire not one per queue pair or of another size,
 * queue_cpu without queue_wire), -ENOSPC (not enough poller slots on a
 * cpu), -EBUSY (cpu or a queue_cpu already started), -ENOMEM.
 */
int vnic_dev_create(struct vnic_dev **dev, struct vnic_hv *hv, struct vnic_wire *wire,
		    struct vnic_cpu *cpu, const struct vnic_dev_config *cfg);
/*
 * Before cpu starts: a device that takes over from one that went away (a
 * new server process on the memory of a client that lost its previous one,
 * whose transport is closed) opens the transport and sends INIT, as a
 * partner that comes back does (docs/PROTOCOL.md section 13).
 */
void vnic_dev_announce(struct vnic_dev *dev);
/*
 * Frees the device and its sub-CRQs. Only once cpu is stopped (or, in manual
 * mode, not being run) and the peer no longer transmits on the wire. The
 * cpu keeps the device's pollers registered (core has no removal): it must
 * not run again; vnic_cpu_fini it.
 */
void vnic_dev_destroy(struct vnic_dev *dev);

/*
 * Counters, ethtool -S style (core.h "Counters"): fills up to max entries,
 * returns how many there are in all. Per tx queue N (every queue ever
 * negotiated): txN_packets, txN_bytes, txN_lso_packets, txN_lso_segments,
 * txN_lso_super (superpackets the wire took whole), txN_lso_super_ref (of
 * those, the payload sent from the driver's buffer), txN_csum_inserted,
 * txN_hdr_descs, txN_csum_missing_hdrs,
 * txN_lso_missing_hdrs, txN_orphan_hdr_descs, txN_completions,
 * txN_comp_entries, txN_comp_busy, txN_comp_lost, txN_wire_full,
 * txN_hdrs_waits, and
 * txN_drop_<reason> for each reason (bad_type, bad_n_sge, bad_n_elem,
 * hdrs_incomplete, bad_hdr_desc, bad_flags, unsupported, bad_mss, bad_map_id,
 * bad_ioba, bad_len, len_past_ltb, bad_headers, hdr_len_mismatch,
 * missing_hdrs, gso_failed, link_down, no_carrier), txN_reset_unread
 * (descriptors a reset found in the ring, never read), txN_comp_reset
 * (correlators a reset dropped before they were sent back). Per rx queue N: rxN_frames,
 * rxN_bytes, rxN_ip_csum_good, rxN_ip_csum_bad, rxN_csum_good, rxN_csum_bad,
 * rxN_bufs_posted, rxN_bufs_avail, rxN_bad_rx_add_{map_id,ioba,len},
 * rxN_completions, rxN_comp_busy, rxN_comp_lost, rxN_drop_{no_buffer,
 * too_big,buf_fault}, rxN_lro_frames, rxN_lro_bufs, rxN_lro_buf_waits (large
 * receives, docs/PROTOCOL.md section 8.5). Engine-wide (summed over the rx
 * engines): rx_filtered, rx_drop_runt, rx_drop_link_down, rx_drop_halted,
 * rx_parse_errors, rx_drop_super_off, rx_drop_bad_super, rx_drop_bad_queue
 * (queue_wire: a frame on a wire past the rx queues logged in); parks and
 * park_retries (queue_cpu: control polls that parked the queue cpus, and
 * those tried again). Control: ctl_commands, ctl_rc_<rc> per return code
 * (success, partialsuccess, permission, nomemory, parameter,
 * unknowncommand, aborted, invalidstate, invalidioba, invalidlength,
 * unsupportedoption), ctl_inits, ctl_xport_events, ctl_ignored,
 * ctl_rsp_busy, ctl_rsp_lost, ctl_resets, ctl_dup_maps, ctl_dup_logins
 * (a command the device had done already, answered again: a retry or a
 * duplicate), ctl_login_conflicts (a LOGIN while logged in naming other
 * rings or another response buffer: INVALIDSTATE).
 * Faults: fault_resets, fault_failovers, fault_err_inds,
 * fault_err_inds_fatal, fault_link_flaps, halted (1 after a fatal error
 * until the next INIT), phys_link_up. Negotiated: state (0 closed,
 * 1 init done, 2 negotiating, 3 logged in), link_up, neg_tx_queues,
 * neg_rx_queues, neg_tx_entries, neg_rx_add_entries, neg_mtu (REQ_MTU, L2
 * included), neg_ind_descs, neg_rx_buf_size, neg_desc_req (the
 * TX_RX_DESC_REQ number), neg_offloads (bitmask of the vnic_ip_offload
 * bytes 8..18 turned on by CONTROL_IP_OFFLOAD, bit i = byte 8 + i).
 * Settings (vnic_dev_set): hdr_mask (0 cautious, 1 exact), drop_missing_hdrs,
 * ctl_hdr_mask_changes. Coalescing, per tx queue and per rx queue N
 * (docs/STATS.md): txN_irqs and rxN_irqs (completion interrupts raised,
 * delivered or masked), txN_irqs_coalesced and rxN_irqs_coalesced
 * (completions that raised no interrupt of their own), txN_dim_profile and
 * rxN_dim_profile (the adaptive profile in force), txN_dim_moves and
 * rxN_dim_moves (its changes).
 * Counters are written by the device's cpu only; read them from another
 * thread and a value may be stale.
 */
unsigned int vnic_dev_counters(const struct vnic_dev *dev, struct vnic_counter *out,
			       unsigned int max);
/* One counter by name (control path: allocates). 0, -ENOENT or -ENOMEM. */
int vnic_dev_counter(const struct vnic_dev *dev, const char *name, uint64_t *value);

/*
 * Any thread: the scheduled faults of cfg.fault (or of the last
 * vnic_dev_set_faults) start (the first of each one period from now) or
 * stop. Stopping ends a fault in progress the way its schedule would have:
 * a device that is gone comes back (INIT), a physical link that is down
 * comes up. Enabled with no scheduled fault, nothing happens.
 */
void vnic_dev_faults_enable(struct vnic_dev *dev, bool on);
/*
 * Any thread, any time: cfg's device items (reset_every_ns ... link_down_ns
 * and seed; the hv's are ignored, NULL: none) replace the schedule. The
 * device's fault poller takes them at once; with faults enabled the
 * periods start over one period from now, and a fault in progress (the
 * device gone, the link down) ends when it was due to. On or off stays as
 * vnic_dev_faults_enable said. 0, or -EINVAL (err_ind_fatal outside [0, 1],
 * down_ns or link_down_ns not shorter than its period: nothing changed).
 */
int vnic_dev_set_faults(struct vnic_dev *dev, const struct vnic_fault_cfg *cfg);
/*
 * Tests: the clock the fault schedule reads instead of vnic_now_ns (NULL puts
 * that back), so that a test moves the time by hand and a fault happens when
 * the test says, however late its thread runs. Before vnic_dev_faults_enable;
 * a test moving its clock calls vnic_dev_faults_enable(dev, true) again to
 * have the schedule looked at.
 */
void vnic_dev_fault_clock(struct vnic_dev *dev, uint64_t (*now)(void));

/*
 * Any thread, any time: drop_missing_hdrs in force at once (the tx engine's
 * next packet without the headers the mask asks for). A header mask other
 * than the one announced is a change of what the device said at capability
 * negotiation: the device's control poller announces it from then on, and
 * if a driver has negotiated (or is negotiating) with the old one it goes
 * away and comes back at once (a transport event, PARTNER_CLOSED, then its
 * INIT), so that the driver resets (resets_xport) and negotiates again;
 * what is in flight meanwhile is completed to the host as dropped. The
 * counters hdr_mask, drop_missing_hdrs and ctl_hdr_mask_changes show it.
 * 0, or -EINVAL (mask unknown: nothing changed).
 */
int vnic_dev_set(struct vnic_dev *dev, enum vnic_dev_hdr_mask mask, bool drop_missing_hdrs);
/* Any thread: the header mask last set (or created with) and drop_missing_hdrs in force. */
void vnic_dev_settings(const struct vnic_dev *dev, enum vnic_dev_hdr_mask *mask,
		       bool *drop_missing_hdrs);

/*
 * Any thread, any time: coalescing as c says, from the device's next look
 * (its coalescing poller, scheduled now). Completions waiting for an
 * interrupt under the old settings get it then; turning adaptive on starts
 * its walk at profile 0. 0, or -EINVAL (usecs above VNIC_DEV_COAL_MAX_USECS,
 * frames above VNIC_DEV_COAL_MAX_FRAMES: nothing changed).
 */
int vnic_dev_set_coalesce(struct vnic_dev *dev, const struct vnic_dev_coalesce *c);
/* Any thread: the coalescing last set (or created with). */
void vnic_dev_coalesce_get(const struct vnic_dev *dev, struct vnic_dev_coalesce *out);

#endif /* VNIC_DEVICE_H */
