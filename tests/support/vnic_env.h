/* SPDX-License-Identifier: MIT */
/*
 * What the device and driver test benches share (tests/device/harness.c,
 * tests/driver/drv_env.c): cpus the test thread steps by hand until it
 * starts their threads, the in-process cable, and on each end in use a
 * hypervisor and a real device (src/device), plus a pool of packets for the
 * test to send. Each bench puts its own driver on top: the device tests a
 * hostile one that speaks the raw protocol, the driver tests the real one.
 * Every helper asserts (cmocka) instead of returning an error.
 */
#ifndef VNIC_TEST_VNIC_ENV_H
#define VNIC_TEST_VNIC_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "device/device.h"
#include "hv/hv.h"
#include "port/port.h"

enum { VNIC_ENV_MAX_CPUS = 3, VNIC_ENV_MAX_ENDS = 2 };

/* A timer further away than this does not keep vnic_env_run going (100 ms). */
#define VNIC_ENV_IDLE_HORIZON_NS 100000000ull

struct vnic_env_cfg {
	unsigned int ncpus;
	const char *const *cpu_names;			      /* ncpus names */
	unsigned int nends;				      /* cable ends with a device: 1 or 2 */
	const struct vnic_dev_config *dev[VNIC_ENV_MAX_ENDS]; /* NULL: the defaults */
	unsigned int dev_cpu[VNIC_ENV_MAX_ENDS]; /* the cpu each end's device runs on */
	const struct vnic_cable_cfg *cable;	 /* NULL: the defaults */
	unsigned int pool_pkts, pool_size, pool_headroom;
};

struct vnic_env {
	struct vnic_cpu cpu[VNIC_ENV_MAX_CPUS];
	unsigned int ncpus;
	bool threads; /* started: helpers wait for the cpus instead of stepping them */
	struct vnic_cable *cable;
	/* end i of the cable: its hypervisor and its device */
	struct vnic_hv *hv[VNIC_ENV_MAX_ENDS];
	struct vnic_dev *dev[VNIC_ENV_MAX_ENDS];
	unsigned int nends;
	struct vnic_pkt_pool pool;
};

/* Builds everything in manual mode; runs nothing yet. */
void vnic_env_create(struct vnic_env *v, const struct vnic_env_cfg *cfg);
/* Starts every cpu's thread. */
void vnic_env_start(struct vnic_env *v);
/*
 * Teardown, first step: stops the cpu threads (if started), so that nothing
 * runs while the drivers on top and then the rest are freed.
 */
void vnic_env_stop(struct vnic_env *v);
/*
 * Teardown, last step (after vnic_env_stop and the bench's own drivers):
 * frees the devices, the cpus, the cable and the hypervisors, in that order
 * (a hypervisor frees the rings its client left), and checks that every
 * packet of the pool came back.
 */
void vnic_env_destroy(struct vnic_env *v);

/*
 * Steps every cpu until none has anything scheduled or a timer due within
 * VNIC_ENV_IDLE_HORIZON_NS; false if that takes more than 2 s. Started:
 * true at once (the cpus run by themselves).
 */
bool vnic_env_run(struct vnic_env *v);
/* Steps every cpu for ns nanoseconds (for a device that never goes idle). */
void vnic_env_run_for(struct vnic_env *v, uint64_t ns);
/* The cpus, as vnic_cpus_run_until and the driver's open and close take them. */
unsigned int vnic_env_cpus(struct vnic_env *v, struct vnic_cpu **cpus);

/* A counter of end i's device; fails the test if there is no such counter. */
uint64_t vnic_env_dev_ctr(struct vnic_env *v, unsigned int end, const char *name);
/* A fresh packet from the pool (freed with vnic_pkt_free). */
struct vnic_pkt *vnic_env_pkt(struct vnic_env *v);

#endif /* VNIC_TEST_VNIC_ENV_H */
