/* SPDX-License-Identifier: MIT */
/*
 * Private to src/app: the pcap mirror (pcap.c), a wire that copies every
 * frame it carries into a ring, drained into a pcap file by a writer thread
 * of its own. `vnic link --pcap` wraps its wires with it, and the bench
 * runner (run.c) the cable's two ends for `vnic bench --pcap`.
 *
 * Setup and teardown return 0 or -errno and print nothing. The datapath
 * (the wrapped wire's tx_commit and rx_release) never makes a syscall or
 * takes a lock: a frame is copied into the ring, or, when the ring is full,
 * left out of the capture (counted), or with lossless waited for (counted,
 * and the whole side waits with it).
 */
#ifndef VNIC_APP_PCAP_INT_H
#define VNIC_APP_PCAP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "app.h"

struct vnic_pcap;

enum { VNIC_PCAP_MAX_WIRES = 4 };

/*
 * The bytes kept of each frame on a wire of frame_size bytes: o->snaplen
 * (0: whole frames) but no more than a frame.
 */
uint32_t vnic_pcap_snaplen(const struct vnic_pcap_opts *o, uint32_t frame_size);
/*
 * Starts a pcap (Ethernet, nanosecond timestamps) on f, an open file the
 * mirror takes over (closed by vnic_pcap_close, or here on failure):
 * snaplen bytes kept of each frame, each record with the frame's whole
 * length; o->count frames at most (0: no limit), then the capture stops;
 * o->lossless: a full ring makes its producer wait instead of leaving the
 * frame out. 0 or -errno; errbuf (at least 256 bytes) says what libpcap
 * said on failure. Then wrap the wires, then start the writer.
 */
int vnic_pcap_open(struct vnic_pcap **pc, FILE *f, uint32_t snaplen,
		   const struct vnic_pcap_opts *o, char *errbuf);
/* Starts the writer thread, after the last wrap and before traffic. 0 or -errno. */
int vnic_pcap_start(struct vnic_pcap *pc);
/*
 * Wraps wire: the returned wire forwards every operation to it, and copies
 * each frame committed for transmission (mirror_tx) and each frame released
 * after reception (mirror_rx) into a ring the writer thread drains. Give the
 * returned wire to the device instead of the original (the wrapper takes
 * the original's notification and passes it on to whoever sets its own).
 * Before traffic starts. Each wrapper has one producer thread (the device
 * cpu's): frames are copied into the ring, never held. NULL on ENOMEM or
 * when all wrappers are used (VNIC_PCAP_MAX_WIRES). Freed by close.
 */
struct vnic_wire *vnic_pcap_wrap(struct vnic_pcap *pc, struct vnic_wire *wire, bool mirror_tx,
				 bool mirror_rx);

struct vnic_pcap_stats {
	uint64_t written;	/* frames in the file */
	uint64_t left_out;	/* frames not captured because a ring was full */
	uint64_t waits;		/* lossless: times a producer found its ring full and waited */
	uint64_t wait_ns;	/* lossless: the time producers spent waiting */
};

/* Any thread, any time until close; values may be a moment old. */
void vnic_pcap_stats(const struct vnic_pcap *pc, struct vnic_pcap_stats *st);
/* The same as counters: "written", "left_out", "waits", "wait_us". How many in all. */
unsigned int vnic_pcap_counters(const struct vnic_pcap *pc, struct vnic_counter *out,
				unsigned int max);
/*
 * The devices stopped (their cpus stopped): the writer drains every ring,
 * flushes the file and ends. The counters stay readable. NULL is fine.
 */
void vnic_pcap_stop(struct vnic_pcap *pc);
/* Stops the writer if still running, closes the file, frees all. NULL is fine. */
void vnic_pcap_close(struct vnic_pcap *pc);

#endif /* VNIC_APP_PCAP_INT_H */
