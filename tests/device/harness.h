/* SPDX-License-Identifier: MIT */
/*
 * A minimal, hostile test driver for src/device: it speaks the raw protocol
 * (proto.h) through a real hv, on one manually stepped cpu that runs the
 * device's pollers, and sits on the far end of a real cable (src/port) to
 * see what the device transmits and to feed it frames. Nothing here is the
 * product's driver: every helper builds bytes by hand so that tests can
 * break any one of them.
 */
#ifndef VNIC_TEST_DEVICE_HARNESS_H
#define VNIC_TEST_DEVICE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "device/device.h"
#include "hv/hv.h"
#include "port/port.h"
#include "proto/proto.h"
#include "vnic_env.h"

enum {
	H_CTL_SIZE = 4096, /* login buffer @0, response @512, offload @1024 */
	H_LOGIN_OFF = 0,
	H_LOGIN_RSP_OFF = 512,
	H_LOGIN_RSP_LEN = 512,
	H_OFFLOAD_OFF = 1024,
	H_TX_LTB_SIZE = 256 << 10, /* map id 1 */
	H_RX_LTB_SIZE = 1 << 20,   /* map id 2 */
	H_IND_SIZE = VNIC_MAX_IND_DESCS * VNIC_SUBCRQ_ENTRY_SIZE,
	H_OTHER_SIZE = 64 << 10, /* mapped in the hv, but never an LTB */
	H_TX_MAP = 1,
	H_RX_MAP = 2,
	H_COMP_ENTRIES = 256, /* driver rings, unless changed before bring-up */
	H_MAX_FRAME = 70000,
};

struct h_env {
	/*
	 * One cpu, the cable and the device on its end 0, with its hv; its
	 * pool holds the frames built by pktgen. v.threads: the device's cpu
	 * runs its own thread (h_start after h_create), and helpers then wait
	 * for answers instead of running it.
	 */
	struct vnic_env v;
	struct vnic_hv *hv;	/* v.hv[0] */
	struct vnic_dev *dev;	/* v.dev[0] */
	struct vnic_wire *peer; /* cable end 1: the test's side */

	/* driver memory, each its own DMA mapping */
	uint8_t *ctl, *tx_ltb, *rx_ltb, *ind, *other;
	uint64_t ctl_ioba, tx_ltb_ioba, rx_ltb_ioba, ind_ioba, other_ioba;

	/* driver rings (CLIENT-owned) and the device's handles from login */
	uint32_t txcomp_entries, rxcomp_entries;
	struct vnic_subcrq *txcomp[VNIC_MAX_QUEUES], *rxcomp[VNIC_MAX_QUEUES];
	uint32_t txsubm[VNIC_MAX_QUEUES], rxadd[VNIC_MAX_QUEUES];
	unsigned int ntx, nrx;
	uint32_t rx_buf_size;

	/* h_bringup turns on large receive when offered (else off, as ibmvnic) */
	bool large_rx;

	/* LINK_STATE_INDICATIONs seen while waiting for responses */
	unsigned int link_inds;
	struct vnic_crq last_link_ind;
};

/* cfg / ccfg NULL = defaults. Asserts on failure. */
void h_create(struct h_env *e, const struct vnic_dev_config *cfg,
	      const struct vnic_cable_cfg *ccfg);
void h_destroy(struct h_env *e);

/*
 * Runs the device until nothing is scheduled and no timer is armed; false on
 * timeout. Threaded: does nothing (the device runs by itself).
 */
bool h_run(struct h_env *e);
/* Threaded: starts the device's cpu thread. */
void h_start(struct h_env *e);
/* Runs for about ns nanoseconds (a device that stays blocked never goes idle). */
void h_run_for(struct h_env *e, uint64_t ns);

/* --- CRQ ---------------------------------------------------------------------- */
void h_crq_cmd(struct vnic_crq *m, uint8_t cmd);
/* Sends, runs, returns true with the next message that is not a link indication. */
bool h_exchange(struct h_env *e, const struct vnic_crq *msg, struct vnic_crq *rsp);
/* Sends a command and returns the rc of its response (asserts it is the right response). */
uint8_t h_cmd(struct h_env *e, struct vnic_crq *msg, struct vnic_crq *rsp);
/* true if the device sent nothing back (after running). */
bool h_silent(struct h_env *e, const struct vnic_crq *msg);

void h_init(struct h_env *e);
void h_version(struct h_env *e);
uint8_t h_query_cap(struct h_env *e, uint16_t cap, uint64_t *num);
uint8_t h_request_cap(struct h_env *e, uint16_t cap, uint64_t num, uint64_t *granted);
uint8_t h_query_offload(struct h_env *e, struct vnic_ip_offload *out);
uint8_t h_control_offload(struct h_env *e, const struct vnic_ip_offload *want);
uint8_t h_map(struct h_env *e, uint8_t id, uint64_t ioba, uint32_t len);
uint8_t h_unmap(struct h_env *e, uint8_t id);
/* Registers the driver's completion rings (ntx + nrx) if not yet done. */
void h_reg_rings(struct h_env *e, unsigned int ntx, unsigned int nrx);
/* Writes a well-formed login buffer for the rings; returns its length. */
uint32_t h_login_build(struct h_env *e);
/* LOGIN with the buffer at ctl + H_LOGIN_OFF, crq length len; on success parses the response. */
uint8_t h_login(struct h_env *e, uint32_t len);
uint8_t h_link(struct h_env *e, uint8_t state);
/*
 * INIT .. LINK_STATE(up) with ntx/nrx queues, tx/rx entries 256, MTU 1500,
 * every offered offload turned on (large receive only with e->large_rx),
 * LTBs mapped, no rx buffers posted.
 */
void h_bringup(struct h_env *e, unsigned int ntx, unsigned int nrx);

/* --- tx ------------------------------------------------------------------------------ */
/* A good tx descriptor for len bytes at tx LTB offset off. */
void h_tx_desc(struct h_env *e, union vnic_subcrq_entry *d, uint32_t corr, uint32_t off,
	       uint32_t len, uint8_t flags1, uint16_t mss);
/*
 * Header descriptors for the layers in flag (VNIC_HDR_DESC_L*) of a frame
 * with these lengths: the requested headers concatenated. Returns how many.
 */
unsigned int h_hdr_descs(union vnic_subcrq_entry *out, const uint8_t *frame, uint8_t l2,
			 uint16_t l3, uint8_t l4, uint8_t flag);
/* Direct for one entry, indirect through the mapped array otherwise. The hv rc. */
long h_tx_send(struct h_env *e, unsigned int q, const union vnic_subcrq_entry *ents,
	       unsigned int n);
/* Takes every tx completion of queue q: up to max (correlator, rc) pairs. */
unsigned int h_tx_comps(struct h_env *e, unsigned int q, uint32_t *corr, uint16_t *rc,
			unsigned int max);
/* Takes up to max frames off the wire into bufs[i] (H_MAX_FRAME each). */
unsigned int h_wire_take(struct h_env *e, uint8_t **bufs, uint32_t *lens, unsigned int max);

/* --- rx ------------------------------------------------------------------------------ */
/* Posts n rx buffers idx first..first+n-1 (correlator 0x1000 + idx) on queue q. The hv rc. */
long h_rx_post(struct h_env *e, unsigned int q, unsigned int first, unsigned int n);
/* The rx buffer idx in the rx LTB. */
uint8_t *h_rx_buf(struct h_env *e, unsigned int idx);
/* Puts one frame on the wire towards the device. */
void h_wire_inject(struct h_env *e, const uint8_t *frame, uint32_t len);
/* Takes every rx completion of queue q. */
unsigned int h_rx_comps(struct h_env *e, unsigned int q, struct vnic_rx_comp *out,
			unsigned int max);

/* --- misc --------------------------------------------------------------------------- */
uint64_t h_ctr(struct h_env *e, const char *name);
/* A fresh packet from the harness pool (freed with vnic_pkt_free). */
struct vnic_pkt *h_pkt(struct h_env *e);

#endif
