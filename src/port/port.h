/* SPDX-License-Identifier: MIT */
/*
 * src/port: what the two ends of vnic attach to. Public header of the layer.
 *
 *   cable.c   the in-process cable: two struct vnic_wire ends joined by a
 *             single-producer single-consumer ring of frame slots per
 *             direction, with an optional rate limit, one-way delay and
 *             seeded loss, reordering and corruption.
 *   tap.c     the TAP host port (setup, ioctls, counters); tap_io.c its
 *             datapath; tap_vnet.c the vnet header <-> packet metadata.
 *   afpacket.c  a wire on a real interface (AF_PACKET, TPACKET_V2 or V3).
 *   afxdp.c   a wire on a real interface through AF_XDP (libxdp).
 *   fd_irq.c  the receive "interrupt" of the two wires on a real interface
 *             (internal: fd_irq.h).
 *   sockwire.c  a wire on a socket, framed as QEMU's stream and dgram
 *             network backends frame it.
 *   switch.c  a learning switch whose ports are in different processes
 *             (the children of `vnic server --switch`), in shared memory.
 *
 * Threads: per direction, one producer (the device tx engine of the sending
 * end) and one consumer (the device rx engine of the receiving end), each on
 * its own thread or both on one. Slots never change hands except through the
 * ring's indices, so no buffer is freed on a thread other than its owner's.
 */
#ifndef VNIC_PORT_H
#define VNIC_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

enum vnic_cable_limits {
	VNIC_CABLE_DEFAULT_MTU = 1500,
	VNIC_CABLE_MIN_MTU = 68,	/* RFC 791 minimum */
	VNIC_CABLE_MAX_MTU = 65535 - VNIC_ETH_HLEN - VNIC_VLAN_HLEN,
	VNIC_CABLE_DEFAULT_SLOTS = 1024,
	/* with tso: a slot holds a superframe, so fewer slots hold as much */
	VNIC_CABLE_TSO_DEFAULT_SLOTS = 256,
	VNIC_CABLE_GSO_MAX = VNIC_PKT_MAX_LEN,
	VNIC_CABLE_MAX_SLOTS = 1 << 20,
	/*
	 * Bytes a frame occupies on the line besides the frame itself: 7 B
	 * preamble + 1 B start delimiter + 4 B FCS + 12 B inter-frame gap.
	 * Frames shorter than the 60 B Ethernet minimum are padded first, so
	 * every frame costs at least 84 B of line time, as on real Ethernet.
	 */
	VNIC_CABLE_LINE_OVERHEAD = 24,
	VNIC_CABLE_MIN_FRAME = 60,
	VNIC_CABLE_MAX_QUEUES = 16, /* as a vNIC's queue pairs (proto.h VNIC_MAX_QUEUES) */
};

/*
 * Zero fields take the defaults (mtu 1500, 1024 slots, 256 with tso); all else is
 * off when zero. Probabilities are in [0, 1] and are drawn per frame from a
 * generator seeded by seed (each direction its own stream), so the same
 * frames committed in the same batches meet the same fate.
 */
struct vnic_cable_cfg {
	uint32_t mtu;		/* L3 MTU; a slot holds mtu + 14 + one 4 B tag */
	uint32_t slots;		/* per direction, a power of two */
	uint64_t rate_bps;	/* line rate in bit/s, 0 = unlimited */
	uint64_t delay_ns;	/* one-way propagation delay */
	uint64_t seed;
	double loss;		/* frame dropped */
	double reorder;		/* frame held back and sent right after the next
				 * one committed (it waits for that commit) */
	double corrupt;		/* one bit flipped after the L2 header */
	/*
	 * Carry a device's TSO superpacket whole, one superframe of up to
	 * VNIC_CABLE_GSO_MAX bytes in one slot with its GSO metadata, to a
	 * receiving device that takes them (its driver negotiated large
	 * receive); MTU frames otherwise. Slots are that large. Fixed at create.
	 */
	bool tso;
	/*
	 * Ring pairs, one per queue pair (0 = 1, at most VNIC_CABLE_MAX_QUEUES),
	 * each with the settings above, its slots, its own line (rate_bps is per
	 * ring) and its own generator; fixed at create. vnic_cable_queue_end
	 * gives each ring's ends: a device with a wire per queue pair sends tx
	 * queue q on ring q, and the receiving device takes ring q's frames on
	 * rx queue q (vnic_dev_config.queue_wire).
	 */
	uint32_t queues;
};

/*
 * Per direction, from end `dir` to end 1 - dir. Each counter has a single
 * writer (the producer, except rx_frames: the consumer) and is kept with
 * relaxed atomics, so it may be read from any thread at any time.
 */
struct vnic_cable_stats {
	uint64_t tx_frames;	/* committed and put on the line */
	uint64_t tx_bytes;
	uint64_t rx_frames;	/* released by the receiver */
	uint64_t drop_mtu;	/* longer than the MTU (or shorter than an Ethernet header) */
	uint64_t drop_loss;	/* lost on purpose */
	uint64_t reordered;	/* frames held back behind the next one */
	uint64_t corrupted;
	uint64_t tx_full;	/* reserve calls that got fewer slots than asked */
	uint64_t notifies;	/* receiver notified (its irq was armed) */
	uint64_t tx_super;	/* of tx_frames, TSO superframes (cable tso) */
	uint64_t drop_super;	/* superframes the receiver no longer takes */
};

struct vnic_cable;

/*
 * Allocates the cable, its two slot pools and rings. cfg NULL = defaults.
 * 0, -EINVAL (bad mtu, slots not a power of two, probability out of [0, 1])
 * or -ENOMEM.
 */
int vnic_cable_create(struct vnic_cable **c, const struct vnic_cable_cfg *cfg);
/* Frees everything. Both ends must be idle: no thread inside their ops. */
void vnic_cable_destroy(struct vnic_cable *c);
/*
 * End 0 or 1 (NULL for anything else). A device transmits on its end with
 * tx_reserve/tx_commit and receives what the other end sent with
 * rx_peek/rx_release. The receiving device sets w->notify and notify_ctx
 * before traffic starts (usually vnic_napi_schedule of its rx engine) and
 * uses w->ops->rx_irq as that napi's irq source with irq_ctx = w.
 *
 * Notification: the irq starts disarmed. While armed, the first commit by
 * the other end disarms it and calls notify once, even if the frame is not
 * ready yet (delay, rate): the receiver then reads rx_next_ns and sets a
 * poller timer. rx_irq->pending(w) is true when a frame is ready now, or when
 * a frame arrived that the receiver has not yet seen through rx_next_ns or
 * rx_peek (so a re-arm cannot miss a frame that needs a timer).
 */
struct vnic_wire *vnic_cable_end(struct vnic_cable *c, unsigned int end);
/*
 * End 0 or 1 of queue pair q's ring pair (NULL when end > 1 or q >= queues),
 * as vnic_cable_end, which is queue pair 0's. The receiver of any one ring's
 * rx_gso_take speaks for every ring toward its side.
 */
struct vnic_wire *vnic_cable_queue_end(struct vnic_cable *c, unsigned int end, unsigned int q);
/* Counters of the direction from end dir to the other, summed over the queue pairs. */
void vnic_cable_stats(const struct vnic_cable *c, unsigned int dir, struct vnic_cable_stats *st);
/* The same, of queue pair q's ring alone (zeros for q >= queues). */
void vnic_cable_queue_stats(const struct vnic_cable *c, unsigned int dir, unsigned int q,
			    struct vnic_cable_stats *st);
/*
 * Any thread, any time: new rate_bps, delay_ns, loss, reorder, corrupt and
 * seed for both directions. mtu, slots, tso and queues size the rings: they must be
 * the cable's (0 = the default, as at create). Each direction's producer takes
 * the new values at its next commit, from a copy published by a sequence
 * count (one load per commit when nothing changed; no lock on the
 * datapath). Frames already on the line keep the time they were stamped
 * with (a new delay or rate applies to frames committed from then on; a
 * frame never overtakes an earlier one); a frame held back to be reordered
 * goes behind the next one committed; a seed that changes starts each
 * direction's generator over. 0, or -EINVAL (mtu, slots, tso or queues differ,
 * a probability out of [0, 1]: nothing changed).
 */
int vnic_cable_set(struct vnic_cable *c, const struct vnic_cable_cfg *cfg);
/* Any thread: the configuration in force (the last set, or create's with its defaults). */
void vnic_cable_config_get(const struct vnic_cable *c, struct vnic_cable_cfg *out);

/* ---------------------------------------------------------------------------
 * The vnet header (tap_vnet.c): what precedes every frame on a TAP opened
 * with IFF_VNET_HDR (docs/MECHANISMS.md section 5). Pure functions, no I/O.
 * ------------------------------------------------------------------------- */

/*
 * struct virtio_net_hdr_v1 without the hash extension: 12 bytes (TUNSETVNETHDRSZ
 * 12), fields little-endian as they sit in the header (the TAP is put in
 * little-endian mode on a big-endian host). num_buffers is 0 on write and
 * ignored on read.
 */
struct vnic_vnet_hdr {
	uint8_t flags;		/* VNIC_VNET_F_* */
	uint8_t gso_type;	/* VNIC_VNET_GSO_* */
	uint16_t hdr_len;	/* L2 + L3 + L4 header bytes (a hint) */
	uint16_t gso_size;	/* L4 payload per segment */
	uint16_t csum_start;	/* from the start of the frame */
	uint16_t csum_offset;	/* of the checksum field, from csum_start */
	uint16_t num_buffers;
};

enum {
	VNIC_VNET_HDR_LEN = 12,
	VNIC_VNET_F_NEEDS_CSUM = 1,	/* checksum partial: sum from csum_start */
	VNIC_VNET_F_DATA_VALID = 2,	/* checksum already verified */
	VNIC_VNET_GSO_NONE = 0,
	VNIC_VNET_GSO_TCPV4 = 1,
	VNIC_VNET_GSO_UDP = 3,		/* UFO: removed from Linux, refused */
	VNIC_VNET_GSO_TCPV6 = 4,
	VNIC_VNET_GSO_UDP_L4 = 5,	/* USO */
	VNIC_VNET_GSO_ECN = 0x80,	/* flag: CWR set on the superpacket */
};

/*
 * Why a frame read from a TAP was dropped before xmit. The kernel validated
 * its own header, but nothing crossing into vnic is trusted. Counted per TAP
 * queue as "inN_drop_<name>".
 */
enum vnic_tap_drop {
	VNIC_TAP_DROP_NONE = 0,
	VNIC_TAP_DROP_RUNT,		/* shorter than an Ethernet header */
	VNIC_TAP_DROP_BAD_FLAGS,	/* a flag other than NEEDS_CSUM, DATA_VALID */
	VNIC_TAP_DROP_GSO_TYPE,		/* unknown GSO type (UFO, tunnels), ECN without TCP */
	VNIC_TAP_DROP_GSO_NO_CSUM,	/* a GSO type without NEEDS_CSUM */
	VNIC_TAP_DROP_GSO_SIZE,		/* gso_size 0 with a GSO type */
	VNIC_TAP_DROP_CSUM_START,	/* csum_start at or past the end of the frame */
	VNIC_TAP_DROP_CSUM_OFFSET,	/* the checksum field ends past the frame */
	VNIC_TAP_DROP_HDR_LEN,		/* hdr_len past the frame */
	VNIC_TAP_DROP_BAD_HEADERS,	/* offload asked for, frame does not parse */
	VNIC_TAP_DROP_GSO_MISMATCH,	/* GSO type or checksum region not the frame's
					 * L4, or more segments than vnic can send */
	VNIC_TAP_DROP_MAX,
};

/* "runt", "bad_flags", ...; "unknown" out of range. */
const char *vnic_tap_drop_name(unsigned int reason);

/*
 * The header of a frame read from a TAP (pkt->data, pkt->len hold the frame,
 * metadata reset) becomes pkt's metadata:
 *   - NEEDS_CSUM: VNIC_CSUM_PARTIAL with csum_start/offset when they are the
 *     frame's TCP or UDP checksum (what the device offloads); any other
 *     region (the kernel's checksum offload is NETIF_F_HW_CSUM, generic) is
 *     summed here in software (vnic_csum_help) and the packet leaves as NONE.
 *   - DATA_VALID, or no flag: NONE (the checksum in the frame is complete).
 *   - gso_type/size: VNIC_GSO_TCPV4/TCPV6/UDP_L4 (+TCP_ECN), gso_size,
 *     gso_segs computed (vnic_gso_count); a superpacket of one segment
 *     becomes a plain PARTIAL packet, as the kernel treats it.
 *   - the frame is parsed (pkt's l2/l3/l4 fields, VNIC_PKT_F_PARSED); a frame
 *     that does not parse passes as it is unless it asked for an offload.
 *   - rss_key not NULL: pkt->hash = vnic_rss_hash_frame (0 if unparsed).
 * Returns VNIC_TAP_DROP_NONE, or the reason to drop it (metadata then
 * undefined). May write the frame only to resolve a checksum in software.
 */
enum vnic_tap_drop vnic_vnet_parse(const struct vnic_vnet_hdr *h, struct vnic_pkt *pkt,
				   const uint8_t *rss_key);
/*
 * The header for writing pkt (a delivered packet) to a TAP:
 *   - GSO (a GRO aggregate): the GSO type, gso_size, hdr_len = the parsed
 *     header lengths, NEEDS_CSUM with the L4 checksum region. An aggregate
 *     that is not PARTIAL is made so: its L4 checksum field is overwritten
 *     with the pseudo-header sum (the kernel requires NEEDS_CSUM with GSO).
 *   - PARTIAL: NEEDS_CSUM, csum_start/offset as they are.
 *   - UNNECESSARY: DATA_VALID.  NONE: no flag (the kernel verifies).
 * Returns 0, or -EINVAL for GSO metadata the header cannot carry (unknown
 * type, gso_size 0, headers that do not parse or do not match the type).
 */
int vnic_vnet_build(struct vnic_pkt *pkt, struct vnic_vnet_hdr *h);

/* ---------------------------------------------------------------------------
 * TAP host port (tap.c, tap_io.c)
 *
 * A TAP interface is the host side of a vNIC: what the kernel transmits on
 * the TAP is read here and handed to the netdev's xmit, what the netdev
 * delivers is written to the TAP for the kernel to receive. Seen from the
 * kernel the TAP *is* the NIC: it gets the netdev's MAC (at create) and MTU,
 * and TUNSETOFFLOAD announces the netdev's tx offloads (vnic_tap_offloads),
 * so the kernel hands over 64 KiB TSO superpackets with partial checksums.
 *
 * Lifecycle (the order of vnic_drv's contract, driver.h):
 *	vnic_tap_create   after vnic_drv_create, before the cpus start: opens
 *	                  the queues, registers one poller and fd per queue on
 *	                  the queue's tx cpu (not watched yet), attaches as the
 *	                  netdev's host
 *	(cpus start, vnic_drv_open)
 *	vnic_tap_start    after open: offloads, MTU, reading starts
 *	vnic_tap_stop     reading stops, deliveries are dropped (counted)
 *	(vnic_drv_close, cpus stop)
 *	vnic_tap_destroy  cpus stopped; frees, closes, detaches
 * The TAP interface is created down; bringing it up, addresses and moving
 * it to another network namespace are the caller's (ip link, rtnetlink).
 * It disappears at destroy (not persistent).
 *
 * Reading is xmit, on TAP queue q's tx cpu (vnic_netdev_tx_cpu(dev, q)): a
 * burst reads until EAGAIN or cfg.batch packets (one readv per packet: the
 * vnet header and the frame, into a packet of the pool), each validated and
 * converted by vnic_vnet_parse, and hashed; it goes to the tx queue
 * vnic_netdev_pick_tx(hash) picks when that queue runs on the same cpu (so a
 * flow keeps its tx queue whichever TAP queue the kernel used), else to tx
 * queue q. Every packet of a burst but each tx queue's last is sent with
 * xmit_more. A pool is single-threaded and xmit frees into it: TAP queues
 * on different tx cpus (a driver's queue_cpu) each need a pool of their own
 * (cfg.pools), and queues that share a pool must share a cpu.
 *
 * Backpressure: a packet refused with VNIC_TX_BUSY is kept (with the one
 * read behind it for the same queue, at most), the burst ends, and the TAP
 * queue stops being read (vnic_cpu_mod_fd without EPOLLIN) until the host
 * tx_wake callback of that tx queue; then the kept packets go first. The
 * kernel's tun does not stop its sender meanwhile: it drops at its ring
 * (txqueuelen frames, counted in the TAP interface's tx_dropped), as Linux
 * <= 6.18 does for a reader that stops (docs/BENCHMARKS.md, "Reference figures").
 *
 * The vnet header is what lets the kernel skip segmentation: without it
 * (cfg.no_vnet_hdr) no TUNSETOFFLOAD is done and every frame crosses whole
 * and checksummed (docs/BENCHMARKS.md, "Reference figures": 1.6 against 7.8 Gbit/s). io_uring is
 * not used: with TSO about two frames come per burst, and the readv entry
 * path (do_readv, tun_chr_read_iter) was about 1% of the reader thread's
 * perf samples with iperf3 through two TAPs; io_uring would save that
 * entry, not the copies and wake-ups that make up the rest.
 *
 * Writing is delivery, on the rx queue's cpu: each packet the netdev hands
 * up (GRO aggregates with GSO metadata, CHECKSUM_UNNECESSARY frames) is
 * written with its vnet header (vnic_vnet_build) by one writev, to TAP queue
 * (rx queue % active queues), and freed. A write that fails (EAGAIN; EIO
 * while the interface is down) drops the packet and counts it: the kernel's
 * own receive path would drop it too.
 *
 * Counters (vnic_tap_counters, names as in core.h "Counters"):
 *   tap-wide: queues, active_queues, offloads (TUN_F_* in force), mtu,
 *   vnet_hdr;
 *   per TAP queue N, "in" (read from the TAP, the kernel's transmit):
 *   inN_packets, inN_bytes, inN_gso_packets, inN_csum_partial, inN_csum_sw
 *   (checksum region summed here), inN_bursts, inN_xmit_more, inN_stops
 *   (reading paused by backpressure), inN_resumes, inN_read_errors,
 *   inN_no_buffer (pool empty: retried after a pause), inN_queue_fallback
 *   (pick_tx's queue on another cpu), inN_drop_stopped (kept packets freed
 *   at stop), inN_drop_<reason> for each enum vnic_tap_drop ("in" drops are
 *   named from vnic's side: frames coming in from the kernel);
 *   per netdev tx queue N: txN_busy (VNIC_TX_BUSY answers), txN_wakes,
 *   txN_done, txN_done_dropped (tx_done calls, by status);
 *   per netdev rx queue N, "out" (written to the TAP, the kernel's receive):
 *   outN_packets, outN_bytes, outN_gso_packets, outN_csum_partial,
 *   outN_data_valid, outN_drop_again (EAGAIN), outN_drop_down (EIO),
 *   outN_drop_error (any other write error), outN_drop_bad_meta
 *   (vnic_vnet_build refused it), outN_drop_stopped (after vnic_tap_stop),
 *   outN_short_writes.
 *
 * Threads: each reader on its queue's tx cpu, the writers on the rx cpus,
 *start/stop/counters/set_mirror from any thread.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_TAP_MAX_QUEUES = 16,	/* as struct vnic_netdev's tx_cpu[] */
	VNIC_TAP_DEFAULT_BATCH = 64,
};

struct vnic_tap_config {
	const char *ifname;	/* NULL or "" = the kernel picks "tapN" */
	unsigned int queues;	/* fds with IFF_MULTI_QUEUE; 0 = the netdev's tx queue count */
	bool no_vnet_hdr;	/* for tests: plain frames, no offloads; default uses it */
	uint32_t batch;		/* max packets per read burst; 0 = 64 */
	/*
	 * TAP queue q reads into pools[q] (NULL: the pool vnic_tap_create is
	 * given). Queues sharing a pool must share a tx cpu.
	 */
	struct vnic_pkt_pool *pools[VNIC_TAP_MAX_QUEUES];
};

/* The direction a mirrored frame travelled. */
enum vnic_tap_dir {
	VNIC_TAP_DIR_IN = 0,	/* read from the TAP: the kernel sent it */
	VNIC_TAP_DIR_OUT = 1,	/* written to the TAP: the kernel receives it */
};

/* frame[0..len) without the vnet header; dir is enum vnic_tap_dir. */
typedef void (*vnic_tap_mirror_fn)(void *ctx, const uint8_t *frame, uint32_t len, int dir);

struct vnic_tap;

/*
 * Before the cpus start (see the lifecycle above). Opens /dev/net/tun
 * (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, IFF_MULTI_QUEUE when queues > 1)
 * cfg->queues times, sets a 12-byte vnet header and the netdev's MAC and MTU,
 * registers a poller and the fd of each queue on vnic_netdev_tx_cpu(dev, q)
 * and attaches as dev's host (vnic_netdev_attach). Reads go into pool's
 * packets, which must hold an MTU frame (and 64 KiB superpackets for the TSO
 * offloads to be offered; see vnic_tap_offloads). cfg NULL = defaults.
 * 0 or -errno:
 *   -ENOENT  no /dev/net/tun (no tun module, or a container without it)
 *   -EPERM   not allowed to create a TAP: needs root or CAP_NET_ADMIN
 *   -EBUSY   an interface of that name exists already
 *   -EINVAL  bad config (queues over VNIC_TAP_MAX_QUEUES or the netdev's,
 *            a pool shared by queues on different tx cpus, a pool too
 *            small, dev has a host)
 *   -ENOSPC  no poller or fd slot left on a cpu; -ENOMEM; or what the
 *            tun ioctls return.
 */
int vnic_tap_create(struct vnic_tap **tap, struct vnic_netdev *dev, struct vnic_pkt_pool *pool,
		    const struct vnic_tap_config *cfg);
/*
 * After the driver is open (the netdev's features, MTU and queue counts are
 * the negotiated ones only then). Any thread. Sets TUNSETOFFLOAD from
 * dev->features (vnic_tap_offloads; USO is asked for only if this kernel
 * knows it, and dropped if it refuses), the MTU again if it changed (best
 * effort: the TAP may have moved to another namespace), detaches TAP queues
 * beyond the netdev's tx queue count (TUNSETQUEUE), and starts reading.
 * Also restarts a stopped TAP. 0 or -errno (what TUNSETOFFLOAD returns).
 */
int vnic_tap_start(struct vnic_tap *tap);
/*
 * Any thread: reading stops (each queue stops watching its fd at its next
 * run, and gives back what it kept), packets delivered from now on are
 * dropped (outN_drop_stopped). Packets already handed to xmit are the
 * NIC's. Call it before vnic_drv_close, so nothing is refused meanwhile.
 */
void vnic_tap_stop(struct vnic_tap *tap);
/*
 * Cpus stopped (or never started). Frees kept packets to the pool, closes the
 * fds (the interface goes away), detaches from the netdev. Its pollers stay
 * registered on the cpus (core has no removal): they must not run again.
 */
void vnic_tap_destroy(struct vnic_tap *tap);
/* The interface's name ("tap0"). */
const char *vnic_tap_ifname(const struct vnic_tap *tap);
/* The fd of TAP queue q, -1 if none. For tests and diagnostics only. */
int vnic_tap_fd(const struct vnic_tap *tap, unsigned int q);
/* See "Counters" above. Any thread; values may be stale. */
unsigned int vnic_tap_counters(const struct vnic_tap *tap, struct vnic_counter *out,
			       unsigned int max);
/*
 * A copy of every frame read (before validation, so drops show too) and
 * written (after the header is built), for pcap. Called on the tx cpu (in)
 * and on the rx cpus (out), possibly at the same time: fn serialises itself.
 * NULL = off. Any thread; a call already under way may still finish after
 * the switch, so keep ctx valid until the cpus are stopped.
 */
void vnic_tap_set_mirror(struct vnic_tap *tap, vnic_tap_mirror_fn fn, void *ctx);
/*
 * TUNSETOFFLOAD bits (TUN_F_*) for netdev features: TUN_F_CSUM with
 * VNIC_NETIF_F_CSUM; with it, TUN_F_TSO4/TSO6 (+TSO_ECN) with TSO4/TSO6 and
 * TUN_F_USO4|USO6 with USO, the GSO ones only if big_bufs: superpackets
 * fit. vnic_tap_start passes big_bufs when a pool packet holds
 * VNIC_PKT_MAX_LEN bytes and the netdev's gso_max_size is at least 64 KiB,
 * the TAP's own limit (a smaller one would need IFLA_GSO_MAX_SIZE set on
 * the TAP by rtnetlink, which is left out: such a netdev gets checksum
 * offload only).
 */
unsigned int vnic_tap_offloads(uint32_t features, bool big_bufs);

/* ---------------------------------------------------------------------------
 * AF_PACKET backing wire (afpacket.c)
 *
 * A struct vnic_wire on a real interface, so a device transmits onto and
 * receives from a real (or veth) link instead of a cable end. One packet
 * socket bound to the interface, promiscuous, PACKET_QDISC_BYPASS.
 *   rx: a 4 MiB ring, TPACKET_V2 (a status word per frame: each frame is
 *       seen as it lands; the default) or TPACKET_V3 (blocks of frames,
 *       handed over when full or retired after 1 ms: a lone frame waits up
 *       to that long). The socket's fd is registered with rx_cpu
 *       (vnic_cpu_add_fd) to a poller that, while the receiver's irq is
 *       armed, disarms it and calls wire->notify (the device's NAPI
 *       schedule). rx_peek hands out ready frames as packets wrapping the
 *       ring memory (no copy); rx_release gives them (V3: their blocks) back
 *       to the kernel.
 *   tx: slots are packets of a pool of frame_size bytes; tx_commit sends the
 *       committed frames with sendmmsg batches. The socket is non-blocking:
 *       frames the kernel refuses (ENOBUFS, EAGAIN) are dropped and counted,
 *       like a full NIC ring.
 * Frames on a wire are plain MTU frames, so no PACKET_VNET_HDR: a vnet
 * header would only help to receive GRO'd frames, which a wire cannot carry.
 * The backing interface should have its receive offloads off (ethtool -K IF
 * gro off lro off): an aggregated frame larger than frame_size is dropped
 * and counted (rx_drop_too_big), never truncated. What the kernel changes
 * on receive is undone: a VLAN tag it took out is put back inline, and a
 * checksum left partial by a local sender (TP_STATUS_CSUMNOTREADY, e.g. on
 * a veth) is completed (rx_csum_fixed). Frames the interface transmits
 * (PACKET_OUTGOING) are not received. Frames carry no Ethernet FCS.
 * The device's rx poll and the notification run on rx_cpu; tx runs on the
 * device's tx cpu. Both ends of the protocol (one producer, one consumer)
 * as for the cable.
 * ------------------------------------------------------------------------- */

struct vnic_afpacket_stats {
	uint64_t rx_frames;		/* handed to the device */
	uint64_t rx_bytes;
	uint64_t rx_drop_too_big;	/* longer than frame_size (GRO on the interface) */
	uint64_t rx_drop_truncated;	/* the ring cut it (snaplen) */
	uint64_t rx_kernel_drops;	/* tp_drops: the ring was full */
	uint64_t rx_blocks;		/* ring blocks consumed (V3) */
	uint64_t rx_notifies;
	uint64_t rx_csum_fixed;		/* partial checksums completed here */
	uint64_t rx_gso_frames;		/* superframes received (vnet_hdr), segmented here */
	uint64_t rx_gso_segments;	/* the frames they became */
	uint64_t rx_gso_whole;		/* superframes handed whole (the device takes them) */
	uint64_t rx_drop_gso;		/* superframes that could not be (bad header, too many) */
	uint64_t tx_frames;		/* accepted by the kernel */
	uint64_t tx_bytes;
	uint64_t tx_drop_mtu;		/* longer than the MTU, or a runt */
	uint64_t tx_drop_kernel;	/* sendmmsg refused it (ENOBUFS, EAGAIN, ...) */
	uint64_t tx_syscalls;		/* sendmmsg calls */
	uint64_t tx_full;		/* reserve calls that got fewer slots than asked */
	uint64_t tx_gso_frames;		/* superframes handed to the kernel (vnet_hdr) */
	uint64_t tx_drop_gso;		/* a superframe whose header could not be built */
	uint64_t tx_gso_frags;		/* superframes sent with their payload by reference */
};

enum vnic_afpacket_ring {
	VNIC_AFPACKET_RING_V2 = 0,	/* per-frame status: latency (the default) */
	VNIC_AFPACKET_RING_V3 = 1,	/* blocks: fewer wake-ups, up to 1 ms late */
};

struct vnic_afpacket_config {
	uint32_t mtu;
	enum vnic_afpacket_ring ring;
	/*
	 * The network namespace ifname is in: an fd of /run/netns/NAME or
	 * /proc/PID/ns/net, entered by a helper thread only to create the
	 * socket (the caller's threads stay where they are). 0 or below: the
	 * caller's namespace.
	 */
	int netns_fd;
	/*
	 * PACKET_VNET_HDR: superframes both ways, as a TAP's vnet header
	 * carries them. The wire takes a device's superpacket whole (gso_max_size
	 * set: one slot, GSO metadata, the kernel segments it after whatever
	 * tunnel the interface is), and a superframe received (a TSO sender on
	 * the segment, GRO on the interface) is segmented here into MTU frames
	 * with complete checksums: the device still receives only MTU frames.
	 */
	bool vnet_hdr;
};

/* "v2", "v3"; "unknown" for anything else. */
const char *vnic_afpacket_ring_name(enum vnic_afpacket_ring ring);

/*
 * Opens the wire on ifname (which must exist and be up) for frames of
 * cfg->mtu + 14 + 4 bytes at most, with cfg->ring's receive ring. ifname
 * must be an Ethernet device (ARPHRD_ETHER) and not loopback: checked on the ifindex the socket binds
 * to, since a loopback carries the host's own traffic and any other link
 * type has no Ethernet frames. rx_cpu is the receiving device's cpu: call
 * before it starts (the fd is registered on it), then vnic_dev_create on
 * the returned wire with that cpu. 0 or -errno: -ENODEV (no such interface),
 * -EINVAL (mtu, ring, or a loopback device), -EPROTONOSUPPORT (not Ethernet),
 * -EPERM (needs root or CAP_NET_RAW), -ENOMEM, -ENOSPC (cpu's poller or fd
 * slots), or what setns/socket/setsockopt/bind return.
 */
int vnic_afpacket_create(struct vnic_wire **w, const char *ifname,
			 const struct vnic_afpacket_config *cfg, struct vnic_cpu *rx_cpu);
/* rx_cpu stopped (or never run) and nothing transmitting: closes and frees. */
void vnic_afpacket_destroy(struct vnic_wire *w);
/* Any thread; values may be stale. */
void vnic_afpacket_stats(const struct vnic_wire *w, struct vnic_afpacket_stats *st);
/* The same as counters ("rx_frames", ...). */
unsigned int vnic_afpacket_counters(const struct vnic_wire *w, struct vnic_counter *out,
				    unsigned int max);

/* ---------------------------------------------------------------------------
 * AF_XDP backing wire (afxdp.c; afxdp_none.c without libxdp)
 *
 * The same wire as AF_PACKET's above, through an AF_XDP socket bound to one
 * queue of the interface, with libxdp's default program redirecting what
 * arrives on that queue to it (the rest of the interface's traffic, other
 * queues included, goes to the kernel as before).
 *   memory: a UMEM of 4096 frames of 4096 bytes, one frame per packet (no
 *       multi-buffer): half for rx, kept on the FILL ring, half for tx.
 *   rx: rx_peek walks the RX ring and hands out packets wrapping the UMEM
 *       frames (no copy); rx_release gives them back to the FILL ring. Every
 *       descriptor is checked before use (a receive frame, every byte inside
 *       it): one that is not is dropped and counted (rx_drop_bad_desc).
 *   tx: tx_reserve reaps the COMPLETION ring and hands out free tx frames
 *       as packets; tx_commit puts them on the TX ring and kicks the kernel
 *       with one sendto when it asks for it (XDP_USE_NEED_WAKEUP; always in
 *       copy mode), the socket's budget raised to the whole ring where the
 *       kernel has XDP_MAX_TX_SKB_BUDGET (tx_budget). A full ring drops and
 *       counts (tx_drop_ring_full), never blocks.
 *   notification: the xsk fd on rx_cpu, watched while the receiver's irq is
 *       armed, as for AF_PACKET.
 * Attach: native XDP (the driver's hook, XDP_FLAGS_DRV_MODE) with zero-copy
 * if the driver has it, else native with copies, else generic XDP
 * (XDP_FLAGS_SKB_MODE, copies). The mode taken is in the counters (native,
 * zerocopy) and vnic_afxdp_mode_name; why native was refused in
 * vnic_afxdp_mode_note. Frames are plain MTU frames both ways
 * (gso_max_size 0): the interface should not aggregate (GRO, LRO) or send
 * superframes; native XDP on a veth turns its peer's segmentation offloads
 * off by itself, generic XDP drops what does not fit a frame. Frames carry
 * whatever checksum they had: a veth peer's kernel leaves its own
 * checksums to offload (partial) unless its tx checksumming is off
 * (ethtool -K PEER tx off; docs/LINK.md). libxdp and libbpf print nothing:
 * their last warning is kept for vnic_afxdp_last_error.
 * Threads as for AF_PACKET: rx (and the notification) on rx_cpu, tx on the
 * device's tx cpu, one producer and one consumer per ring.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_AFXDP_FRAME = 4096,	/* a UMEM frame: one page */
	VNIC_AFXDP_MAX_MTU = 3822,	/* a frame + 14 + 4 and XDP's 256 B of headroom in one */
};

struct vnic_afxdp_stats {
	uint64_t native;		/* 1: the driver's XDP hook; 0: generic */
	uint64_t zerocopy;		/* 1: the driver DMAs into the UMEM */
	uint64_t rx_frames;		/* handed to the device */
	uint64_t rx_bytes;
	uint64_t rx_drop_bad_desc;	/* a descriptor outside its receive frame */
	uint64_t rx_drop_runt;		/* shorter than an Ethernet header */
	uint64_t rx_drop_too_big;	/* longer than frame_size */
	uint64_t rx_kernel_drops;	/* the kernel's rx_dropped: frames it could not put in the UMEM */
	uint64_t rx_ring_full;		/* the kernel's: the RX ring was full */
	uint64_t rx_fill_empty;		/* the kernel's: no frame on the FILL ring */
	uint64_t rx_invalid_descs;	/* the kernel's: FILL addresses it refused */
	uint64_t rx_fill_kicks;		/* wake-ups after a FILL refill (zero-copy) */
	uint64_t rx_fill_short;		/* refills that found the FILL ring short of room */
	uint64_t rx_notifies;
	uint64_t tx_frames;		/* put on the TX ring */
	uint64_t tx_bytes;
	uint64_t tx_drop_mtu;		/* longer than the MTU, a runt, or a superframe */
	uint64_t tx_drop_ring_full;	/* no room on the TX ring */
	uint64_t tx_full;		/* reserve calls that got fewer frames than asked */
	uint64_t tx_kicks;		/* sendto wake-ups */
	uint64_t tx_budget;		/* frames one sendto sends (copy mode) */
	uint64_t tx_kick_errors;	/* sendto failed otherwise than "busy, again" */
	uint64_t tx_stalls;		/* commits that left frames on the TX ring */
	uint64_t tx_completions;	/* frames the kernel gave back */
	uint64_t tx_bad_completions;	/* a completed address not a tx frame of ours */
	uint64_t tx_invalid_descs;	/* the kernel's: TX descriptors it refused */
};

struct vnic_afxdp_config {
	uint32_t mtu;		/* 68 .. VNIC_AFXDP_MAX_MTU */
	/* as vnic_afpacket_config's: the namespace ifname is in, 0 or below: ours */
	int netns_fd;
	uint32_t queue;		/* the interface's queue bound to; 0 */
};

/*
 * Opens the wire on ifname (an Ethernet device, not loopback: as for
 * AF_PACKET) for frames of cfg->mtu + 14 + 4 bytes at most, and attaches
 * libxdp's program (the best mode the interface takes, see above). Setup
 * and teardown run in cfg->netns_fd's namespace on a helper thread. rx_cpu
 * is the receiving device's cpu: before it starts. 0 or -errno: -ENODEV (no
 * such interface), -EINVAL (mtu, a loopback device), -EPROTONOSUPPORT (not
 * Ethernet), -EOPNOTSUPP (vnic built without libxdp, or no mode works),
 * -EPERM (needs root: CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW), -ENOMEM,
 * -ENOSPC (cpu's poller or fd slots), or what libxdp returns.
 */
int vnic_afxdp_create(struct vnic_wire **w, const char *ifname, const struct vnic_afxdp_config *cfg,
		      struct vnic_cpu *rx_cpu);
/* rx_cpu stopped (or never run) and nothing transmitting: detaches, closes and frees. */
void vnic_afxdp_destroy(struct vnic_wire *w);
/* Any thread; values may be stale. */
void vnic_afxdp_stats(const struct vnic_wire *w, struct vnic_afxdp_stats *st);
/* The same as counters ("native", "rx_frames", ...). */
unsigned int vnic_afxdp_counters(const struct vnic_wire *w, struct vnic_counter *out,
				 unsigned int max);
/* "native zero-copy", "native copy" or "generic copy". */
const char *vnic_afxdp_mode_name(const struct vnic_wire *w);
/*
 * Why the mode is not native, in one line to print ("native XDP refused
 * (...): generic XDP instead"), or "" when it is.
 */
const char *vnic_afxdp_mode_note(const struct vnic_wire *w);
/*
 * Any thread: the last warning libxdp or libbpf gave (during any create),
 * "" if none, copied into buf (at most len bytes with its NUL).
 */
void vnic_afxdp_last_error(char *buf, size_t len);
/* Whether this vnic was built with libxdp (false: create says -EOPNOTSUPP). */
bool vnic_afxdp_available(void);

/* ---------------------------------------------------------------------------
 * Socket wire (sockwire.c)
 *
 * A struct vnic_wire whose frames travel over a socket, framed exactly as
 * QEMU's network backends frame them, so that two vnic instances, or vnic
 * and a QEMU VM, join over a unix socket, TCP or UDP (docs/LINK.md, "--wire
 * SPEC"):
 *   stream  (QEMU -netdev stream, and the older -netdev socket): a byte
 *           stream, each frame preceded by its length as a 4-byte
 *           big-endian unsigned integer, no other header, no padding.
 *   dgram   (QEMU -netdev dgram): one frame per UDP datagram, no header.
 * Frames are plain Ethernet frames without FCS, at most frame_size
 * (mtu + 14 + 4) bytes.
 *
 * The spec (vnic_sockwire_parse):
 *   stream:unix:PATH[,server]
 *   stream:tcp:HOST:PORT[,server]
 *   dgram:udp:LHOST:LPORT,RHOST:RPORT
 * HOST is a name, an IPv4 literal or an IPv6 literal in brackets
 * ([::1]:5000), resolved once, at create. A stream wire connects to the
 * address (QEMU's server=off) unless ",server" is given: then it listens
 * there and accepts one peer at a time (server=on); a peer that arrives
 * while another is connected waits in the listen backlog until that one
 * goes. A server on PATH removes a stale socket file that nobody listens on,
 * and its own file at destroy. A server's TCP PORT and a dgram LPORT may be
 * 0: the kernel picks one (vnic_sockwire_local_port). A dgram wire sends
 * to RHOST:RPORT and, its socket being connected there, receives only what
 * comes from it. A unix PATH may not end in ",server" unless it listens.
 *
 * Connections (stream): the client connects in the background and, when
 * the attempt fails or the connection ends, tries again after a backoff
 * that starts at VNIC_SOCKWIRE_BACKOFF_MIN_NS and doubles up to
 * VNIC_SOCKWIRE_BACKOFF_MAX_NS (back to the minimum once connected); the
 * server accepts again. A connection ends at the peer's EOF or reset, at a
 * send or receive error, or when the stream breaks: a length field of 0 or
 * above VNIC_SOCKWIRE_MAX_LEN (the framing is lost: no Ethernet frame is
 * that long), or the peer's EOF inside a frame. Frames received complete
 * before the break are still delivered; the rest of that connection's
 * bytes are dropped. Frames committed while no peer is connected are
 * dropped and counted (tx_drop_no_peer), as on a cable with nobody at the
 * other end: the device never waits for a peer.
 *
 * Every received frame is checked: longer than frame_size
 * (rx_drop_too_long: a stream skips its bytes and stays up, a datagram is
 * cut by the kernel and dropped) or shorter than an Ethernet header
 * (rx_drop_runt) is dropped and counted, never truncated or padded.
 *
 *   rx: the socket's fd is registered with cpu (vnic_cpu_add_fd) to a
 *       poller that, while the receiver's irq is armed, disarms it and
 *       calls wire->notify (the device's NAPI schedule), as the AF_PACKET
 *       wire does. A stream reads with one recv into a 256 KiB buffer and
 *       rx_peek hands out the complete frames in it as packets wrapping
 *       that memory (a frame cut by the end of one read waits for the next);
 *       a dgram wire reads up to 32 datagrams with one recvmmsg, each
 *       maybe several frames the kernel merged (UDP_GRO: equal frames, the
 *       last maybe shorter), split back and each checked as a frame.
 *   tx: slots are packets of the wire's pool (frame_size bytes, with 4
 *       bytes of headroom where a stream writes the length); tx_commit
 *       sends the committed frames at once, a stream with one sendmsg per
 *       64 frames, a dgram wire with sendmmsg, a run of equal frames as one
 *       UDP_SEGMENT (GSO) message that the kernel sends as one datagram
 *       per frame (a path that refuses GSO turns it off for the wire's
 *       life; the frames of that send are dropped, counted as
 *       tx_drop_error). Non-blocking: a full socket
 *       buffer drops and counts whole frames (tx_drop_full). A stream write
 *       that the kernel takes only in part keeps the rest of that one frame
 *       in a pending buffer of the wire, sent before anything else (when
 *       the socket is writable again, or at the next commit), so the
 *       stream never loses its framing.
 *
 * Threads: everything (rx_peek/rx_release, tx_reserve/tx_commit, the irq
 * ops, connecting and accepting) runs on cpu's thread, which must be the
 * device's (vnic_dev_create's cpu): the connection then needs no lock.
 * Debug builds assert it. No allocation and no lock per frame: buffers and
 * pools are allocated at create.
 *
 * Lifecycle: vnic_sockwire_create before cpu starts (the fds are
 * registered on it; the first connect is made by cpu's thread once it
 * runs), vnic_dev_create on the wire with that cpu, vnic_sockwire_destroy
 * after cpu stopped. The counters may be read from any thread at any time.
 * ------------------------------------------------------------------------- */

enum vnic_sockwire_kind {
	VNIC_SOCKWIRE_STREAM_UNIX = 1,
	VNIC_SOCKWIRE_STREAM_TCP,
	VNIC_SOCKWIRE_DGRAM_UDP,
};

enum vnic_sockwire_limits {
	VNIC_SOCKWIRE_LEN_BYTES = 4,	/* a stream's length field */
	/* the longest length field that may be a frame: the largest IP packet + L2 */
	VNIC_SOCKWIRE_MAX_LEN = 65535 + VNIC_ETH_HLEN + VNIC_VLAN_HLEN,
	VNIC_SOCKWIRE_PATH_MAX = 108,	/* sun_path, with its NUL */
	VNIC_SOCKWIRE_HOST_MAX = 256,	/* a DNS name (253) or a literal, with its NUL */
	VNIC_SOCKWIRE_BACKOFF_MIN_MS = 10,
	VNIC_SOCKWIRE_BACKOFF_MAX_MS = 1000,
};
#define VNIC_SOCKWIRE_BACKOFF_MIN_NS (VNIC_SOCKWIRE_BACKOFF_MIN_MS * 1000000ull)
#define VNIC_SOCKWIRE_BACKOFF_MAX_NS (VNIC_SOCKWIRE_BACKOFF_MAX_MS * 1000000ull)

struct vnic_sockwire_host {
	char host[VNIC_SOCKWIRE_HOST_MAX];	/* without the brackets of an IPv6 literal */
	uint16_t port;
};

/* What vnic_sockwire_parse makes of a spec. */
struct vnic_sockwire_spec {
	enum vnic_sockwire_kind kind;
	bool server;				/* stream: listen and accept */
	char path[VNIC_SOCKWIRE_PATH_MAX];	/* stream:unix */
	struct vnic_sockwire_host local;	/* stream:tcp's address; dgram's own */
	struct vnic_sockwire_host remote;	/* dgram's peer */
};

/* Why a spec was refused. */
enum vnic_sockwire_spec_err {
	VNIC_SOCKWIRE_SPEC_OK = 0,
	VNIC_SOCKWIRE_SPEC_FRAMING,	/* neither "stream:" nor "dgram:" */
	VNIC_SOCKWIRE_SPEC_TRANSPORT,	/* stream takes unix or tcp, dgram takes udp */
	VNIC_SOCKWIRE_SPEC_PATH,	/* empty, or longer than a unix socket address holds */
	VNIC_SOCKWIRE_SPEC_HOST,	/* empty, too long, an unclosed [, or IPv6 without [] */
	VNIC_SOCKWIRE_SPEC_PORT,	/* not 1..65535 (0 only where it listens or binds) */
	VNIC_SOCKWIRE_SPEC_REMOTE,	/* dgram without ",RHOST:RPORT" */
	VNIC_SOCKWIRE_SPEC_OPTION,	/* after the address: anything but ",server" on a stream */
	VNIC_SOCKWIRE_SPEC_MAX,
};

/*
 * Pure: the spec string s (above) into *out. Returns VNIC_SOCKWIRE_SPEC_OK,
 * or the reason it is not one (*out then undefined). NULL s: FRAMING.
 */
enum vnic_sockwire_spec_err vnic_sockwire_parse(const char *s, struct vnic_sockwire_spec *out);
/* The reason in words, for a user ("unknown" out of range). */
const char *vnic_sockwire_spec_err_str(enum vnic_sockwire_spec_err err);

/*
 * Per wire; every counter written by cpu's thread only (single writer,
 * relaxed: read them anywhere).
 */
struct vnic_sockwire_stats {
	uint64_t rx_frames;		/* handed to the device */
	uint64_t rx_bytes;
	uint64_t rx_drop_too_long;	/* longer than frame_size */
	uint64_t rx_drop_runt;		/* shorter than an Ethernet header */
	uint64_t rx_drop_zero_len;	/* stream: a length field of 0 (broken) */
	uint64_t rx_drop_bad_len;	/* stream: a length field over VNIC_SOCKWIRE_MAX_LEN (broken) */
	uint64_t rx_drop_eof_mid_frame;	/* stream: the peer's EOF inside a frame (broken) */
	uint64_t rx_broken_streams;	/* connections closed for one of the three above */
	uint64_t rx_errors;		/* recv failed (ECONNRESET, ...): the connection closed */
	uint64_t rx_syscalls;		/* recv and recvmmsg calls */
	uint64_t rx_notifies;
	uint64_t tx_frames;		/* taken by the kernel (a short write's frame included) */
	uint64_t tx_bytes;		/* frame bytes, without the length fields */
	uint64_t tx_drop_mtu;		/* longer than the MTU, or a runt */
	uint64_t tx_drop_no_peer;	/* no connection (stream), ECONNREFUSED (dgram) */
	uint64_t tx_drop_full;		/* the socket buffer was full */
	uint64_t tx_drop_error;		/* any other send error (a stream then closes) */
	uint64_t tx_syscalls;		/* sendmsg and sendmmsg calls */
	uint64_t tx_short_writes;	/* frames whose rest went to the pending buffer */
	uint64_t tx_full;		/* reserve calls that got fewer slots than asked */
	uint64_t connects;		/* stream: connections made or accepted */
	uint64_t reconnects;		/* of those, every one after the first */
	uint64_t connect_errors;	/* stream client: attempts that failed */
	uint64_t disconnects;		/* stream: connections that ended, for any reason */
	uint64_t connected;		/* 1 while a peer is connected (dgram: always) */
};

/*
 * Opens the wire for frames of mtu + 14 + 4 bytes at most: resolves the
 * addresses, binds and listens (a server), binds and connects (dgram), and
 * registers a poller and the fds on cpu, the receiving device's (see
 * "Threads" above). A client does not connect here: cpu's thread does,
 * once it runs, and again whenever the connection is lost. 0 or -errno:
 *   -EINVAL         mtu outside 68..VNIC_CABLE_MAX_MTU, a NULL argument, a
 *                   spec vnic_sockwire_parse refuses, or a client's port 0
 *   -EADDRNOTAVAIL  a host that does not resolve (or not to one family
 *                   for both ends of a dgram wire)
 *   -EADDRINUSE     a server's or dgram's address is taken (for PATH:
 *                   another process listens on it)
 *   -EBUSY          cpu has started
 *   -ENOSPC         no poller or fd slot left on cpu
 *   -ENOMEM, or what socket, bind, listen and connect (dgram) return
 *                   (-EACCES for a privileged port or a PATH not writable).
 */
int vnic_sockwire_create(struct vnic_wire **w, const struct vnic_sockwire_spec *spec, uint32_t mtu,
			 struct vnic_cpu *cpu);
/*
 * cpu stopped (or never run) and nothing transmitting: closes the sockets
 * (a server on PATH removes its socket file) and frees. NULL is ignored.
 */
void vnic_sockwire_destroy(struct vnic_wire *w);
/*
 * Any thread: the local port a TCP server listens on or a dgram wire is
 * bound to (the kernel's pick for port 0); 0 for the other kinds.
 */
int vnic_sockwire_local_port(const struct vnic_wire *w);
/* Any thread; values may be stale. */
void vnic_sockwire_stats(const struct vnic_wire *w, struct vnic_sockwire_stats *st);
/* The same as counters ("rx_frames", ..., "connected"). */
unsigned int vnic_sockwire_counters(const struct vnic_wire *w, struct vnic_counter *out,
				    unsigned int max);

/* ---------------------------------------------------------------------------
 * switch.c: a learning Ethernet switch between processes
 * (docs/ARCHITECTURE.md section 11, `vnic server --listen PATH --switch`).
 *
 * One mapping of a memfd, made by the parent before it forks any child, so
 * every child inherits it: a port table, a MAC table and one SPSC ring of
 * frame slots per (source port, destination port) pair. A port is a
 * struct vnic_wire, MTU frames only (no GSO superframes). Who writes what:
 *   the parent   claims a port for a child before the fork, releases it
 *                once the child is reaped (the port's MACs forgotten,
 *                frames queued to it dropped and counted);
 *   a port's child  the head of each ring from its port, the tail of each
 *                ring to it, its arm; it learns its own source MACs;
 *   any child    disarms a destination's arm when it rings its doorbell.
 * A child trusts nothing it reads there: every head, tail, length and port
 * number is checked before use, so a child that dies mid-frame or scribbles
 * costs the frames it sent, never another child's memory.
 *
 * Doorbells: an eventfd per port, made before the fork and inherited,
 * written only when the destination's consumer is armed (the cable's
 * notification protocol, across processes).
 * ------------------------------------------------------------------------- */

enum vnic_switch_limits {
	VNIC_SWITCH_MAX_PORTS = 64,
	VNIC_SWITCH_MTU = 1500,		/* the frame slots' size: MTU 1500 + 14 + one tag */
	VNIC_SWITCH_RING_SLOTS = 256,	/* per (source, destination) pair */
	VNIC_SWITCH_MACS = 1024,	/* MAC table entries */
	VNIC_SWITCH_PROBES = 8,		/* entries tried per MAC: beyond, the table is full */
	VNIC_SWITCH_TX_SLOTS = 64,	/* a port's private tx slots, per commit at most */
};

/* 300 s, the default ageing time of IEEE 802.1D (ns: not an int) */
#define VNIC_SWITCH_DEFAULT_AGING_NS 300000000000ull

struct vnic_switch_cfg {
	uint32_t ports;		/* 2..VNIC_SWITCH_MAX_PORTS */
	uint64_t aging_ns;	/* a MAC not seen this long is forgotten; 0 = the default */
};

/*
 * A port's counters, each written by the child that owns the port (its
 * producer for tx_*, drop_*, flooded, learn_*; its consumer for rx_*).
 */
struct vnic_switch_port_stats {
	uint64_t tx_frames;	/* frames committed by the port's device */
	uint64_t tx_bytes;
	uint64_t forwarded;	/* copies put on another port's ring (a flood makes several) */
	uint64_t flooded;	/* frames sent to every other port: unknown, broadcast, multicast */
	uint64_t drop_mtu;	/* longer than the MTU or shorter than an Ethernet header */
	uint64_t drop_bad_src;	/* a multicast source address: not learned, not sent */
	uint64_t drop_local;	/* the destination is behind the port it came from */
	uint64_t drop_full;	/* a destination's ring from this port was full */
	uint64_t drop_no_port;	/* a known destination whose port is free (its client ended) */
	uint64_t learned;	/* MACs entered or moved to this port */
	uint64_t moves;		/* of those, a MAC that was behind another port */
	uint64_t learn_full;	/* a MAC the table had no room for: frames to it flood */
	uint64_t doorbells;	/* destination eventfds written */
	uint64_t rx_frames;	/* frames released by the port's device */
	uint64_t rx_bad_len;	/* slots with a length out of range: skipped */
	uint64_t rx_bad_index;	/* a ring whose head was out of range: emptied */
	uint64_t rx_stale;	/* frames found queued at open (a previous owner's): dropped */
};

/* The parent's counts (the listener's thread). */
struct vnic_switch_stats {
	uint64_t ports_claimed;
	uint64_t ports_released;
	uint64_t macs_forgotten;	/* entries of released ports */
	uint64_t dead_frames;		/* frames queued to a released port: dropped */
};

struct vnic_switch;

/*
 * The parent, before it forks: the memfd, its mapping and the ports'
 * eventfds. 0 or -errno: -EINVAL (ports out of range), -ENOMEM, or what
 * memfd_create, ftruncate, mmap and eventfd return.
 */
int vnic_switch_create(struct vnic_switch **sw, const struct vnic_switch_cfg *cfg);
/* Unmaps and closes. Each process that inherited the switch may call it for its copy. */
void vnic_switch_destroy(struct vnic_switch *sw);
/* The descriptors a child must keep open (its eventfds): fills up to max, returns how many. */
unsigned int vnic_switch_fds(const struct vnic_switch *sw, int *fds, unsigned int max);
/* The switch's number of ports. */
unsigned int vnic_switch_ports(const struct vnic_switch *sw);
/* The locally administered MAC the server gives the device on port (02:76:6e:73:hi:lo). */
void vnic_switch_port_mac(unsigned int port, uint8_t mac[6]);

/* Parent: the port is a child's from now on (before the fork). 0 or -EINVAL, -EBUSY. */
int vnic_switch_port_claim(struct vnic_switch *sw, unsigned int port);
/*
 * Parent, once the port's child is reaped: the port is free, its MACs are
 * forgotten and the frames queued to it dropped (counted in dead_frames).
 */
void vnic_switch_port_release(struct vnic_switch *sw, unsigned int port);
/* Parent: its counts. */
void vnic_switch_stats(const struct vnic_switch *sw, struct vnic_switch_stats *st);

/*
 * The child that owns port (claimed): its wire, whose doorbell poller goes
 * on cpu, the receiving device's (before cpu starts; cpu NULL: no poller,
 * for tests that drive the wire by hand). Frames queued to the port before
 * now are dropped (rx_stale). 0 or -errno: -EINVAL (no such port, not
 * claimed), -ENOMEM, -EBUSY/-ENOSPC from the cpu.
 */
int vnic_switch_port_open(struct vnic_switch *sw, unsigned int port, struct vnic_cpu *cpu,
			  struct vnic_wire **w);
/* cpu stopped and the device gone: frees the port's private state. NULL is ignored. */
void vnic_switch_port_close(struct vnic_wire *w);
/* Any thread; values may be stale. */
void vnic_switch_port_stats(const struct vnic_wire *w, struct vnic_switch_port_stats *st);
/* The same as counters ("tx_frames", ..., "rx_stale"). */
unsigned int vnic_switch_port_counters(const struct vnic_wire *w, struct vnic_counter *out,
				       unsigned int max);
/*
 * The MAC table, for tests and for the datapath: learn src behind port at
 * now (a move if it was behind another; 0, or -ENOSPC when no entry was
 * free: not learned), and the port a destination is behind at now, or -1
 * (unknown or aged out: flood). Any child.
 */
int vnic_switch_learn(struct vnic_switch *sw, const uint8_t src[6], unsigned int port,
		      uint64_t now, bool *moved);
int vnic_switch_lookup(struct vnic_switch *sw, const uint8_t dst[6], uint64_t now);

#endif /* VNIC_PORT_H */
