/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/port/afxdp.c and its tests: the UMEM and ring sizes, and
 * a wire over rings in plain memory that a test drives as the kernel would
 * (vnic_afxdp_fake_create). The fake runs the wire's own code on every
 * ring: the same checks of what the "kernel" writes, the same counters, the
 * same kicks, which go to a file descriptor the test reads (a datagram per
 * sendto). No root, no interface, no XDP program.
 */
#ifndef VNIC_PORT_AFXDP_INT_H
#define VNIC_PORT_AFXDP_INT_H

#include <linux/if_xdp.h>
#include <stdint.h>

#include "port.h"

enum {
	AFX_FRAME = VNIC_AFXDP_FRAME, /* one page: AF_XDP without multi-buffer */
	AFX_FRAMES = 4096,	      /* 16 MiB of UMEM */
	AFX_RX_FRAMES = AFX_FRAMES / 2,
	AFX_TX_FRAMES = AFX_FRAMES / 2,
	AFX_RX_BASE = 0,
	AFX_TX_BASE = AFX_RX_FRAMES * AFX_FRAME,
	AFX_UMEM_BYTES = AFX_FRAMES * AFX_FRAME,
	/*
	 * Twice the receive frames: the kernel publishes what it took from
	 * the FILL ring only at its flush, just after the RX entries that
	 * carry those frames (xsk_flush), so a frame can come back to us
	 * before its FILL slot shows free. With room for every frame twice
	 * over, a release always finds its slots.
	 */
	AFX_FILL_RING = 2 * AFX_RX_FRAMES,
	AFX_RX_RING = AFX_RX_FRAMES,
	AFX_TX_RING = AFX_TX_FRAMES,
	AFX_COMP_RING = AFX_TX_FRAMES, /* every transmit frame may be in flight */
	/*
	 * What one sendto sends in copy mode unless the socket says more
	 * (XDP_MAX_TX_SKB_BUDGET, Linux 6.17): the kernel's TX_BATCH_SIZE.
	 */
	AFX_KERNEL_TX_BATCH = 32,
};

/* The kernel's side of the four rings: indexes, flags and entries. */
struct vnic_afxdp_fake {
	uint32_t fill_prod, fill_cons, fill_flags;
	uint32_t rx_prod, rx_cons, rx_flags;
	uint32_t tx_prod, tx_cons, tx_flags;
	uint32_t comp_prod, comp_cons, comp_flags;
	uint64_t fill[AFX_FILL_RING];
	struct xdp_desc rx[AFX_RX_RING];
	struct xdp_desc tx[AFX_TX_RING];
	uint64_t comp[AFX_COMP_RING];
};

/*
 * A wire of cfg->mtu over k's rings (zeroed by the caller; the FILL ring
 * then holds every receive frame, as after a real create), kicking with
 * sendto on kick_fd (the caller's: a datagram socket whose peer counts the
 * kicks). tx_budget is what XDP_MAX_TX_SKB_BUDGET would have set (0: the
 * kernel's 32). *umem is the UMEM the descriptors' addresses index. The
 * wire has no rx irq: the test peeks. 0 or -errno; vnic_afxdp_destroy
 * frees it (kick_fd stays the caller's).
 */
int vnic_afxdp_fake_create(struct vnic_wire **w, struct vnic_afxdp_fake *k, int kick_fd,
			   uint32_t mtu, uint32_t tx_budget, uint8_t **umem);

#endif /* VNIC_PORT_AFXDP_INT_H */
