/* SPDX-License-Identifier: MIT */
/*
 * Test bench of tests/driver: two ends, each a driver, a hypervisor and a
 * real device (src/device), the two devices joined by the in-process cable
 * (src/port). Side 0 is "A", side 1 "B". Manual mode by default: the test
 * thread steps both cpus (cpu[i] runs side i's driver and device).
 *
 * Each side has a test host attached to its netdev: it counts what it is
 * given, checks received frames against what the test expects (exact bytes,
 * or a TCP stream's pattern) and frees them at once, as a real host does.
 */
#ifndef VNIC_TEST_DRV_ENV_H
#define VNIC_TEST_DRV_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "device/device.h"
#include "driver/driver.h"
#include "pktgen.h"
#include "port/port.h"
#include "vnic_env.h"

enum {
	ENV_MAX_EXPECT = 256,
	ENV_FRAME_MAX = 2048,
};

/* A frame the receiving host must see, byte for byte. */
struct env_expect {
	uint32_t len;
	uint8_t data[ENV_FRAME_MAX];
	bool seen;
};

struct env_host {
	/* rx */
	uint64_t rx_pkts; /* packets handed up (aggregates count once) */
	uint64_t rx_segs;
	uint64_t rx_bytes;
	uint64_t rx_batches;
	uint64_t rx_per_queue[VNIC_MAX_QUEUES];
	uint64_t rx_aggregates;	  /* gso_segs > 1 */
	uint64_t rx_unnecessary;  /* ip_summed UNNECESSARY */
	uint64_t rx_mismatch;	  /* an expected frame differed, or an unexpected one came */
	uint64_t rx_stream_bytes; /* TCP payload verified against the stream pattern */
	uint64_t rx_stream_bad;
	uint64_t rx_hashed;	  /* pkt->hash set: the Toeplitz hash of the frame, default key */
	uint64_t rx_hash_wrong;	  /* pkt->hash set but not that hash, or on another queue */
	unsigned int rss_queues;  /* set: a hashed packet must come on queue hash % rss_queues */
	/* exact frames expected, in any order */
	struct env_expect *expect;
	unsigned int nexpect;
	/* TCP stream check: flow seed and initial sequence number */
	bool stream;
	uint32_t stream_seed;
	uint32_t stream_isn;
	/* tx */
	uint64_t tx_done_ok;
	uint64_t tx_done_dropped;
	uint64_t tx_done_bytes;
	uint64_t tx_wakes;
};

/* Side i: v.hv[i] and v.dev[i] below, and these. */
struct env_side {
	struct vnic_drv *drv;
	struct env_host host;
};

enum { ENV_CPUS = 3 };

struct env {
	/*
	 * v.cpu[i]: side i's driver (and device, unless split: then both
	 * devices on cpu[2]). v.pool: the packets the test sends.
	 */
	struct vnic_env v;
	struct env_side s[2];
	unsigned int nsides;
};

/* Defaults for the tests: small rings (64 entries), everything else as shipped. */
void env_drv_config(struct vnic_drv_config *c);
void env_dev_config(struct vnic_dev_config *c);

/*
 * Builds nsides (1 or 2) sides; NULL configs take the defaults above.
 * drv[i] / dev[i] configure side i (cpu, when NULL, is filled in: cpu[i]).
 * Does not open.
 */
void env_create(struct env *e, unsigned int nsides, const struct vnic_drv_config *drv,
		const struct vnic_dev_config *dev, const struct vnic_cable_cfg *cable);
/* The same with both devices on cpu[2], away from the drivers. */
void env_create_split(struct env *e, unsigned int nsides, const struct vnic_drv_config *drv,
		      const struct vnic_dev_config *dev, const struct vnic_cable_cfg *cable);
/* Starts every cpu's thread: open and close then wait instead of stepping. */
void env_start(struct env *e);
void env_destroy(struct env *e);
/* Opens side i's driver (manual mode: steps every cpu). Returns its rc. */
int env_open(struct env *e, unsigned int i);
int env_close(struct env *e, unsigned int i);
/* Steps every cpu until none has anything scheduled or a timer armed (2 s max). */
bool env_run(struct env *e);
/* Steps every cpu for ns nanoseconds. */
void env_run_for(struct env *e, uint64_t ns);

uint64_t env_drv_ctr(struct env *e, unsigned int side, const char *name);
uint64_t env_dev_ctr(struct env *e, unsigned int side, const char *name);

/* A fresh packet from the test pool. */
struct vnic_pkt *env_pkt(struct env *e);
/* Frame i of a simple set: TCP or UDP over IPv4 or IPv6, payload len bytes. */
struct vnic_pkt *env_frame(struct env *e, const struct vnic_pktgen_flow *f, uint32_t off,
			   uint32_t payload);
/*
 * The same frame with its L4 checksum left to the NIC (ip_summed PARTIAL,
 * field holding the pseudo-header sum), and in ref the bytes it must
 * arrive as.
 */
struct vnic_pkt *env_frame_partial(struct env *e, const struct vnic_pktgen_flow *f, uint32_t off,
				   uint32_t payload, struct env_expect *ref);
/* Adds a copy of pkt's bytes to side i's expected frames. */
void env_expect(struct env *e, unsigned int side, const struct vnic_pkt *pkt);
void env_expect_ref(struct env *e, unsigned int side, const struct env_expect *ref);
/* All expected frames of side i seen. */
bool env_all_seen(struct env *e, unsigned int side);
/* xmit on side i's queue q; asserts nothing; returns the status. */
int env_xmit(struct env *e, unsigned int side, unsigned int q, struct vnic_pkt *pkt, bool more);

#endif /* VNIC_TEST_DRV_ENV_H */
