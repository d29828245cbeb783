/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer targets above src/net share: a reader over the input,
 * a run loop for cpus in manual mode, a frame builder, and the two hostile
 * partners a layer is fuzzed against:
 *
 *   fz_dev   the device with a fake driver: its hv, its cpu, a cable whose
 *            far end the harness reads, the driver's memory (a control page,
 *            long-term buffers between poisoned gaps, an indirect array) and
 *            the driver's completion rings, all driven by raw protocol bytes;
 *   fz_fdev  a fake device for the driver: a poller on the driver's cpu that
 *            answers the CRQ (correctly, or as a script says), registers its
 *            own sub-CRQs at login, and lets the harness read the tx
 *            descriptors and rx buffer adds the driver sends and answer them
 *            with completions of its choosing.
 *
 * Nothing here is the product: it is built from the layers' public headers
 * only, so what the fuzzers find is what a real partner could do. Setup
 * failures trap (they are harness bugs, never findings). Used by the
 * targets, the replay driver (replay.c) and mkcorpus.c; no cmocka, so the
 * same code runs under libFuzzer.
 */
#ifndef VNIC_FUZZ_HARNESS_H
#define VNIC_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "device/device.h"
#include "driver/driver.h"
#include "hv/hv.h"
#include "net/net.h"
#include "port/port.h"
#include "proto/proto.h"

#include "check.h"

/* --- the input ---------------------------------------------------------------------- */

/* Reads past the end give zeros: every input is a complete program. */
struct fz_in {
	const uint8_t *p;
	size_t left;
};

uint8_t fz_u8(struct fz_in *in);
uint16_t fz_u16(struct fz_in *in); /* big-endian, as the protocol */
uint32_t fz_u24(struct fz_in *in);
uint32_t fz_u32(struct fz_in *in);
/* Copies up to n bytes (zeros past the end); returns how many were real. */
size_t fz_bytes(struct fz_in *in, void *dst, size_t n);

/* --- cpus in manual mode ----------------------------------------------------------- */

/*
 * Steps the cpus until nothing is scheduled. A device engine that waits for
 * its timer (blocked on a full ring; pollers named "dev-*") is made due at
 * once rather than waited for: the retry runs now, as it would after the
 * delay. Other timers are left alone (the driver's control poller compares
 * the clock itself). Between rounds idle(ctx), if given, drains what the
 * harness plays the far end of; it returns true when it moved something.
 * Returns false if the cpus were still busy after max_rounds (a livelock).
 */
bool fz_run(struct vnic_cpu **cpus, unsigned int n, bool (*idle)(void *ctx), void *ctx,
	    unsigned int max_rounds);

/* --- frames ------------------------------------------------------------------------ */

enum fz_frame_kind {
	FZ_TCP4,
	FZ_TCP6,
	FZ_UDP4,
	FZ_UDP6,
	FZ_TCP4_VLAN,
	FZ_ICMP4,
	FZ_KINDS,
};

/*
 * A well-formed frame of kind k whose payload starts with byte pattern and
 * counts up by 7 (pattern also varies ports, IDs and sequence numbers), into
 * buf (cap bytes): IP and L4 checksums complete, or with partial set the L4
 * field holds the pseudo-header sum (CHECKSUM_PARTIAL). Returns its length,
 * 0 if it does not fit. l4_off gets where L4 starts, csum_off the offset of
 * the L4 checksum field from there.
 */
uint32_t fz_frame(uint8_t *buf, uint32_t cap, enum fz_frame_kind k, uint32_t payload,
		  uint8_t pattern, bool partial, uint16_t *l4_off, uint16_t *csum_off);

/* --- the device and a fake driver (fz_dev) ------------------------------------------ */

enum {
	FZ_CTL_SIZE = 4096, /* login @0, its response @512, offload @1024 */
	FZ_LOGIN_OFF = 0,
	FZ_LOGIN_RSP_OFF = 512,
	FZ_LOGIN_RSP_LEN = 512,
	FZ_OFFLOAD_OFF = 1024,
	/*
	 * One DMA mapping holds both long-term buffers with a gap between and
	 * a tail after them, both poisoned for AddressSanitizer where it runs:
	 * a device read outside a registered LTB that the hv would still
	 * translate is reported, not just one outside the mapping.
	 */
	FZ_LTB1_OFF = 0,
	FZ_LTB1_LEN = 96 << 10,
	FZ_LTB_GAP = 8 << 10,
	FZ_LTB2_OFF = FZ_LTB1_OFF + FZ_LTB1_LEN + FZ_LTB_GAP,
	FZ_LTB2_LEN = 72 << 10,
	FZ_LTB_TAIL = 8 << 10,
	FZ_LTB_REGION = FZ_LTB2_OFF + FZ_LTB2_LEN + FZ_LTB_TAIL,
	FZ_LTB1_MAP = 1,
	FZ_LTB2_MAP = 2,
	FZ_IND_SIZE = VNIC_MAX_IND_DESCS * VNIC_SUBCRQ_ENTRY_SIZE,
	FZ_DEV_RINGS = 4, /* completion rings of each kind the fake driver registers */
	FZ_DEV_COMP_ENTRIES = 256,
};

struct fz_dev {
	struct vnic_hv *hv;
	struct vnic_cpu cpu;
	struct vnic_cable *cable;
	struct vnic_wire *peer; /* cable end 1: what the device transmits arrives here */
	struct vnic_dev *dev;
	struct vnic_dev_config cfg;
	/* the driver's memory, each its own DMA mapping */
	uint8_t *ctl, *ltb, *ind;
	uint64_t ctl_ioba, ltb_ioba, ind_ioba;
	bool poison; /* the LTB gap and tail are poisoned */
	/* the driver's completion rings; the device's handles from login */
	struct vnic_subcrq *txcomp[FZ_DEV_RINGS], *rxcomp[FZ_DEV_RINGS];
	uint32_t txsubm[FZ_DEV_RINGS], rxadd[FZ_DEV_RINGS];
	unsigned int ntx, nrx;
	uint32_t rx_buf_size; /* what the login response asks rx buffers to hold */
	/* CRQ messages from the device, by kind, since the last fz_dev_take_crq */
	unsigned int rsp, link_inds, init_completes, others;
	struct vnic_crq last_rsp;
	/*
	 * What the device sends, as fz_dev_run and fz_dev_take_crq take it:
	 * frames on the wire, tx completions, CRQ messages (any may be NULL).
	 */
	void (*on_frame)(void *ctx, const uint8_t *frame, uint32_t len);
	void (*on_txcomp)(void *ctx, const struct vnic_tx_comp *c);
	void (*on_rxcomp)(void *ctx, const struct vnic_rx_comp *c);
	void (*on_crq)(void *ctx, const struct vnic_crq *m);
	void *cb_ctx;
	uint64_t frames;
	/* the device's counters as of the last fz_dev_snap */
	struct vnic_counter *ctrs;
	unsigned int nctrs;
};

/*
 * A device on a fresh hv, cpu and cable (mtu: the cable's), the driver's
 * memory mapped, its completion rings registered. poison: mark the LTB gap
 * and tail unreadable (only where nothing may legitimately read them).
 */
void fz_dev_create(struct fz_dev *e, const struct vnic_dev_config *cfg, uint32_t mtu, bool poison);
void fz_dev_destroy(struct fz_dev *e);
/* Runs the device, draining the wire and the completion rings, until idle. */
bool fz_dev_run(struct fz_dev *e);
/* Puts a frame on the wire towards the device; false if the cable had no slot. */
bool fz_dev_inject(struct fz_dev *e, const uint8_t *frame, uint32_t len);
/* Sends a CRQ message as the driver (the hv rc). */
long fz_dev_send_crq(struct fz_dev *e, const struct vnic_crq *m);
/* Takes every CRQ message the device sent, counting them by kind. */
void fz_dev_take_crq(struct fz_dev *e);
/* One command, run, its response's rc (0xff: no response). */
uint8_t fz_dev_cmd(struct fz_dev *e, struct vnic_crq *m);
/* Writes a login buffer for ntx + nrx rings at ctl + FZ_LOGIN_OFF; its length. */
uint32_t fz_dev_login_build(struct fz_dev *e, unsigned int ntx, unsigned int nrx);
/*
 * INIT .. LOGICAL_LINK_STATE(up): ntx/nrx queues of entries descriptors,
 * mtu, the offloads the device offers except those in ol_off (struct
 * vnic_ip_offload byte offsets 8..15 as bits 0..7), both LTBs registered.
 * Traps on any refusal.
 */
void fz_dev_bringup(struct fz_dev *e, unsigned int ntx, unsigned int nrx, uint32_t entries,
		    uint32_t mtu, uint8_t ol_off);
/* Reads every counter of the device at once (one call per input stays cheap). */
void fz_dev_snap(struct fz_dev *e);
/* One counter as of the last snap; traps if there is none of that name. */
uint64_t fz_dev_ctr(const struct fz_dev *e, const char *name);

/* --- the driver and a fake device (fz_fdev) ----------------------------------------- */

enum {
	FZ_FDEV_QUEUES = 4,
	FZ_FDEV_TRACK = 1024, /* descriptors and rx buffers remembered per queue */
};

/* How the fake device answers one message from the driver (script byte, bits 0-1). */
enum fz_fdev_act {
	FZ_ACT_GOOD = 0,   /* what a correct device answers */
	FZ_ACT_XOR = 1,	   /* that, with one byte changed (two script bytes: where, xor) */
	FZ_ACT_RAW = 2,	   /* 16 script bytes instead */
	FZ_ACT_SILENT = 3, /* nothing */
};

/* Script byte, other bits. */
enum {
	FZ_ACT_INJECT = 1 << 2,	  /* first an unsolicited message: 16 script bytes */
	FZ_ACT_BUF = 1 << 3,	  /* change the buffer it DMA-writes (login rsp, offload) */
	FZ_ACT_TWICE = 1 << 4,	  /* send the answer twice */
	FZ_ACT_BUF_MANY = 3 << 5, /* FZ_ACT_BUF: 1 + this many (offset, value) pairs */
};

/* A tx descriptor the fake device has taken off a tx submission ring. */
struct fz_txd {
	uint32_t corr;
	uint8_t flags1;
	uint16_t mss;
	uint32_t len;
};

/* An rx buffer the driver posted. */
struct fz_rxb {
	uint64_t corr;
	uint32_t ioba;
	uint32_t len;
	uint8_t map_id;
};

struct fz_fdev {
	struct vnic_hv *hv;
	struct vnic_cpu *cpu;
	struct vnic_poller poller;
	const struct vnic_drv *drv; /* only to ask vnic_drv_is_open */
	/* script: consumed one record per driver message; then correct answers */
	struct fz_in script;
	bool scripted;
	bool watch;	   /* a message went unanswered: see that the driver is not left waiting */
	unsigned int idle; /* runs in a row with nothing to do while watching */
	bool finishing;	   /* answers everything with an error until the driver gives up */
	/* what a correct device offers */
	uint64_t max_tx_queues, max_rx_queues, max_entries, max_mtu, min_mss, desc_req;
	uint32_t rx_buf_size;
	bool large_rx; /* offers large receive (docs/PROTOCOL.md section 8.5) */
	/* negotiated and registered */
	uint64_t req[64]; /* REQUEST_CAPABILITY numbers granted, by capability id */
	bool mapped[VNIC_MAX_MAP_ID + 1];
	uint32_t map_len[VNIC_MAX_MAP_ID + 1];
	/*
	 * Bytes of the long-term buffers registered now: a REQUEST_MAP sent
	 * again (its answer lost, or late: the driver's retry timer is real
	 * time) registers its id once, and an unmap takes it away.
	 */
	uint64_t map_bytes;
	bool logged_in, link_up;
	unsigned int ntx, nrx;
	struct vnic_subcrq *txsubm[FZ_FDEV_QUEUES], *rxadd[FZ_FDEV_QUEUES];
	uint32_t txcomp[FZ_FDEV_QUEUES], rxcomp[FZ_FDEV_QUEUES];
	/* what the driver sent on the datapath, oldest first (a ring per queue) */
	struct fz_txd txd[FZ_FDEV_QUEUES][FZ_FDEV_TRACK];
	uint32_t txd_head[FZ_FDEV_QUEUES], txd_n[FZ_FDEV_QUEUES];
	struct fz_rxb rxb[FZ_FDEV_QUEUES][FZ_FDEV_TRACK];
	uint32_t rxb_head[FZ_FDEV_QUEUES], rxb_n[FZ_FDEV_QUEUES];
	uint64_t hdr_descs, bad_entries;
	/* CRQ messages answered, and how */
	uint64_t msgs, finishes;
};

/*
 * Takes the SERVER side of hv: a poller on cpu (before it starts), woken by
 * the SERVER CRQ interrupt and the interrupts of its own rings.
 */
void fz_fdev_init(struct fz_fdev *f, struct vnic_hv *hv, struct vnic_cpu *cpu);
/* Frees its rings; the poller stays registered (the cpu must not run again). */
void fz_fdev_fini(struct fz_fdev *f);
/* The next messages are answered as script says, then correctly. */
void fz_fdev_script(struct fz_fdev *f, const uint8_t *p, size_t n);
/* Forgets everything negotiated (the partner reset); frees its rings. */
void fz_fdev_reset(struct fz_fdev *f);
/* A transport event to the driver (reason VNIC_XPORT_RESET). */
void fz_fdev_xport(struct fz_fdev *f);
/* Takes what the driver sent on the sub-CRQs into txd / rxb. */
void fz_fdev_drain(struct fz_fdev *f);
/* Completion sends to the driver's rings of queue q (the hv rc). */
long fz_fdev_txcomp(struct fz_fdev *f, unsigned int q, const union vnic_subcrq_entry *e);
long fz_fdev_rxcomp(struct fz_fdev *f, unsigned int q, const union vnic_subcrq_entry *e);
/* Forgets descriptor i / buffer i (0 = oldest) of queue q. */
void fz_fdev_txd_drop(struct fz_fdev *f, unsigned int q, uint32_t i);
void fz_fdev_rxb_drop(struct fz_fdev *f, unsigned int q, uint32_t i);
static inline struct fz_txd *fz_fdev_txd(struct fz_fdev *f, unsigned int q, uint32_t i)
{
	return &f->txd[q][(f->txd_head[q] + i) % FZ_FDEV_TRACK];
}
static inline struct fz_rxb *fz_fdev_rxb(struct fz_fdev *f, unsigned int q, uint32_t i)
{
	return &f->rxb[q][(f->rxb_head[q] + i) % FZ_FDEV_TRACK];
}

/* --- a driver on its hv with the fake device and a host (fz_drv) ---------------------- */

enum {
	FZ_COOKIES = 1 << 16, /* packets a host may send in one input */
	FZ_HOST_PKTS = 256,
};

/*
 * How long an open or a close of fz_drv may wait: a hang guard, not a time
 * the driver must keep. The fake device answers on the fuzzer's own thread,
 * so an open takes tens of milliseconds of CPU, but the driver's retry
 * timers run on the wall clock, and a loaded machine (a CI pass beside
 * other tests) stretches an open to 2 s and more. A driver truly left
 * waiting still fails the check; in a campaign libFuzzer's -timeout=10
 * (fuzz/run.sh) reports it first, with its stack. Not an enum constant:
 * it does not fit an int.
 */
#define FZ_OPEN_TIMEOUT_NS 30000000000ull

/* The host: counts what rx hands up, and every packet's tx_done, exactly once. */
struct fz_host {
	uint64_t rx_pkts, rx_aggregates;
	uint64_t tx_wakes;
	uint32_t ncookies;  /* packets xmit took this input */
	uint32_t in_flight; /* of those, not yet told tx_done */
	uint32_t len[FZ_COOKIES];
	uint8_t state[FZ_COOKIES]; /* FZ_PKT_* */
};

enum {
	FZ_PKT_FREE = 0,
	FZ_PKT_SENT,
	FZ_PKT_DONE,
};

struct fz_drv {
	struct vnic_hv *hv;
	struct vnic_cpu cpu;
	struct vnic_drv *drv;
	struct vnic_drv_config cfg;
	struct fz_fdev fdev; /* on the driver's cpu, after its pollers */
	struct vnic_pkt_pool pool;
	struct fz_host host;
	struct vnic_counter *ctrs;
	unsigned int nctrs;
};

/* A driver with cfg (its cpu set here), the fake device and a host attached. Not opened. */
void fz_drv_create(struct fz_drv *d, const struct vnic_drv_config *cfg);
void fz_drv_destroy(struct fz_drv *d);
/* Open and close in manual mode: the driver's cpu (and so the fake device) is stepped. */
int fz_drv_open(struct fz_drv *d);
int fz_drv_close(struct fz_drv *d);
/* Runs the cpu until nothing is scheduled (false: a livelock). */
bool fz_drv_run(struct fz_drv *d);
/*
 * The end of an input, whatever happened in it: the fake device answers
 * correctly again and the link is closed; with logout a transport event
 * also makes the driver forget its login (the next open starts from INIT).
 * Checks that every buffer came back and every packet the host sent was
 * answered with tx_done exactly once.
 */
void fz_drv_reset(struct fz_drv *d, bool logout);
/*
 * xmit of pkt (a packet of d->pool) on queue q as the host: the packet gets
 * the next cookie; VNIC_TX_BUSY leaves it ours, and we free it.
 */
int fz_drv_xmit(struct fz_drv *d, unsigned int q, struct vnic_pkt *pkt, bool more);
void fz_drv_snap(struct fz_drv *d);
uint64_t fz_drv_ctr(const struct fz_drv *d, const char *name);

#endif /* VNIC_FUZZ_HARNESS_H */
