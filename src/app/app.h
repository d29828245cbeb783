/* SPDX-License-Identifier: MIT */
/*
 * src/app: the `vnic` command. Public header of the layer (used by main.c and
 * by the integration tests, which build the same topology as `vnic bench`).
 */
#ifndef VNIC_APP_H
#define VNIC_APP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "device/device.h"
#include "driver/driver.h"
#include "hv/hv.h"
#include "net/net.h"
#include "port/port.h"
#include "work/work.h"

/* ---------------------------------------------------------------------------
 * The embedded topology (topo.c): two vNICs on an in-process cable.
 *
 *   side A (cpu 0)                               side B (cpu 1)
 *   host A -> driver A -> hv A -> device A ==cable== device B -> hv B -> driver B -> host B
 *
 * Each side is one cpu thread running its driver, its device and its host,
 * so the only cross-thread hand-off on the datapath is the cable (and the
 * interrupt that announces a frame on it).
 * ------------------------------------------------------------------------- */

enum { VNIC_TOPO_SIDES = 2 };

struct vnic_topo_config {
	struct vnic_drv_config drv;	/* both drivers; cpu and name are set per side */
	struct vnic_dev_config dev;	/* both devices */
	struct vnic_cable_cfg cable;
	struct vnic_hv_cost cost;	/* both hypervisors */
	uint32_t hv_max_ind_descs;	/* the hypervisor's indirect limit (default 128) */
	uint64_t busy_poll_ns;		/* cpu spin before sleeping */
	uint32_t host_pkts;		/* per side, packets in the host's pool */
	uint32_t host_buf_size;		/* bytes per host packet buffer */
};

struct vnic_topo {
	struct vnic_cpu cpu[VNIC_TOPO_SIDES];
	struct vnic_hv *hv[VNIC_TOPO_SIDES];
	struct vnic_cable *cable;
	struct vnic_dev *dev[VNIC_TOPO_SIDES];
	struct vnic_drv *drv[VNIC_TOPO_SIDES];
	struct vnic_pkt_pool host_pool[VNIC_TOPO_SIDES];
	struct vnic_topo_config cfg;
	bool started;
};

void vnic_topo_config_default(struct vnic_topo_config *cfg);
/* Builds everything, threads not started. 0 or -errno; on error nothing is left. */
int vnic_topo_create(struct vnic_topo *t, const struct vnic_topo_config *cfg);
/* Starts both cpu threads and opens both drivers. 0 or -errno. */
int vnic_topo_start(struct vnic_topo *t);
/* Closes both drivers and stops the threads. 0, or the first close error. */
int vnic_topo_stop(struct vnic_topo *t);
/* Frees everything; the threads must be stopped. */
void vnic_topo_destroy(struct vnic_topo *t);
struct vnic_netdev *vnic_topo_netdev(struct vnic_topo *t, unsigned int side);

/*
 * Every counter of the topology, prefixed by where it lives: "drv_a.",
 * "dev_b.", "hv_a.", "cable.ab_", "cpu_a.". Returns how many there are in
 * all; fills up to max.
 */
unsigned int vnic_topo_counters(const struct vnic_topo *t, struct vnic_counter *out,
				unsigned int max);
/* One counter by its prefixed name; 0 if absent. */
uint64_t vnic_topo_counter(const struct vnic_topo *t, const char *name);

/* ---------------------------------------------------------------------------
 * Command-line helpers (args.c)
 * ------------------------------------------------------------------------- */

/* Parse helpers: 0, or -EINVAL after printing "vnic: <what>: <why>" to stderr. */
int vnic_arg_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A count with an optional k/M/G suffix (powers of 1000), e.g. "100M" for a rate. */
int vnic_arg_si(const char *opt, const char *s, uint64_t *out);
int vnic_arg_double(const char *opt, const char *s, double min, double max, double *out);

/* ---------------------------------------------------------------------------
 * JSON output (json.c): a tiny streaming writer, enough for reports.
 * ------------------------------------------------------------------------- */

struct vnic_json {
	FILE *f;
	int depth;
	bool need_comma;
};

void vnic_json_begin(struct vnic_json *j, FILE *f);
void vnic_json_end(struct vnic_json *j);	/* closes the top object, newline */
void vnic_json_object(struct vnic_json *j, const char *key);	/* key NULL inside arrays/top */
void vnic_json_close(struct vnic_json *j);
void vnic_json_str(struct vnic_json *j, const char *key, const char *v);
void vnic_json_u64(struct vnic_json *j, const char *key, uint64_t v);
void vnic_json_double(struct vnic_json *j, const char *key, double v);
void vnic_json_bool(struct vnic_json *j, const char *key, bool v);

/* ---------------------------------------------------------------------------
 * Commands
 * ------------------------------------------------------------------------- */

/* `vnic bench rr|stream [options]`. Returns the process exit status. */
int vnic_cmd_bench(int argc, char **argv);

/* The pieces of `vnic bench`, for the integration tests (bench.c). */
enum vnic_workload { VNIC_WL_RR, VNIC_WL_STREAM };

struct vnic_bench_opts {
	enum vnic_workload wl;
	struct vnic_topo_config topo;
	struct vnic_rr_opts rr;
	struct vnic_stream_opts st;
	double duration_s;
	bool json;
	bool quiet;
};

struct vnic_bench_run {
	struct vnic_bench_opts *o;	/* set by the caller */
	struct vnic_topo topo;
	struct vnic_rr *rr;
	struct vnic_stream *st;
	struct vnic_work_results res;	/* at the end of the duration */
	uint64_t elapsed_ns;
	double cpu_s;
	bool pools_full;		/* every driver pool full after quiesce and close */
	bool quiesced;			/* all data acknowledged before close */
};

void vnic_bench_opts_default(struct vnic_bench_opts *o, enum vnic_workload wl);
/* argv[0] is "bench"-relative: argv[1] the workload. 0, 1 (help printed), or -EINVAL (message printed). */
int vnic_bench_parse(int argc, char **argv, struct vnic_bench_opts *o);
/*
 * Builds the topology, runs the workload for the duration, stops it, waits
 * for quiesce, closes the drivers and stops the threads. The topology stays
 * for counters until vnic_bench_cleanup. 0 or -errno (message printed).
 */
int vnic_bench_run(struct vnic_bench_run *r);
void vnic_bench_cleanup(struct vnic_bench_run *r);

#endif /* VNIC_APP_H */
