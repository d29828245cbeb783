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
 * The option table (opts.c): every option that describes the vNIC pair (its
 * shape, the driver's policies, the device, the cost model, the cable), one
 * name and one meaning for `vnic bench`, `vnic link` and `vnic experiment`.
 * A command merges the groups it takes into its getopt_long array and hands
 * each getopt value of the table to vnic_topo_opt_parse.
 * ------------------------------------------------------------------------- */

enum vnic_topo_opt_group {
	VNIC_OPTG_VNIC,		/* queues, mtu, rings, offloads, BQL, busy-poll */
	VNIC_OPTG_POLICY,	/* the driver's policies */
	VNIC_OPTG_DEVICE,
	VNIC_OPTG_COST,		/* the hypervisor's cost model */
	VNIC_OPTG_CABLE,
	VNIC_OPTG_COUNT,
};

enum {
	VNIC_OPTG_ALL = (1u << VNIC_OPTG_COUNT) - 1,
	VNIC_TOPO_OPT_BASE = 0x1000,	/* getopt values of the table: BASE + index */
	VNIC_TOPO_OPTS_MAX = 64,
};

struct option;

/* The table's entries of the groups (a mask of 1 << group) into out; how many. */
unsigned int vnic_topo_opts_longopts(struct option *out, unsigned int max, unsigned int groups);

/*
 * A command's own options around the table, and what to do with each.
 * Every command also takes --help, --quiet and --json with one meaning:
 * usage on stdout; no progress lines on stderr; the report as JSON on stdout.
 */
struct vnic_opts_cmd {
	const char *name;		/* "vnic bench", for messages */
	const struct option *own;	/* ended by an all-zero entry */
	unsigned int groups;		/* the table's groups it takes */
	void (*usage)(FILE *f);
	size_t quiet_off, json_off;	/* the two bools in the options struct */
	/* one option, its own or the table's (those go to vnic_topo_opt_parse); 0 or -EINVAL */
	int (*opt)(void *opts, int c, const char *arg);
};

/*
 * Parses argv[1..] (argv[0] names the command) through cmd into opts. 0, 1
 * (--help: usage printed) or -EINVAL (a line saying why printed).
 */
int vnic_opts_parse(const struct vnic_opts_cmd *cmd, int argc, char **argv, void *opts);
/* The long name of the table's getopt value c, NULL if c is not the table's. */
const char *vnic_opts_long_name(int c);
/* --name without a control socket is a contradiction: 0 or -EINVAL (message printed). */
int vnic_opts_check_ctl(const char *cmd, const char *ctl_name, bool ctl);
/* Whether getopt value c is one of the table's. */
bool vnic_topo_opt_is(int c);
/*
 * Parses the argument of the table's option c into cfg and adds its group
 * to *groups_set (may be NULL). 0 or -EINVAL (message printed).
 */
int vnic_topo_opt_parse(int c, const char *arg, struct vnic_topo_config *cfg,
			unsigned int *groups_set);
/*
 * By name ("tx-submit", "indirect"), for comparisons and live changes. A
 * flag takes "on" or "off". 0, -ENOENT (no such option) or -EINVAL
 * (message printed either way).
 */
int vnic_topo_opt_set(const char *name, const char *value, struct vnic_topo_config *cfg);
/* The value in force, as the option would take it. 0 or -ENOENT. */
int vnic_topo_opt_show(const char *name, const struct vnic_topo_config *cfg, char *buf,
		       size_t len);
/* The names of the groups' options into out; how many there are in all. */
unsigned int vnic_topo_opt_names(unsigned int groups, const char **out, unsigned int max);
/* Help for the groups, one line per option, each with its value in def. */
void vnic_topo_opts_usage(FILE *f, unsigned int groups, const struct vnic_topo_config *def);

struct vnic_kv {
	const char *key;
	const char *value;
};

/* Every choice option (the policies, hdr-mask) and its value in cfg; how many in all. */
unsigned int vnic_topo_policies(const struct vnic_topo_config *cfg, struct vnic_kv *out,
				unsigned int max);

/* ---------------------------------------------------------------------------
 * Command-line helpers (args.c)
 * ------------------------------------------------------------------------- */

/* Parse helpers: 0, or -EINVAL after printing "vnic: <what>: <why>" to stderr. */
int vnic_arg_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A count with an optional k/M/G suffix (powers of 1000), e.g. "100M" for a rate. */
int vnic_arg_si(const char *opt, const char *s, uint64_t *out);
int vnic_arg_double(const char *opt, const char *s, double min, double max, double *out);
int vnic_arg_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* 0, or -EINVAL after saying why S is no instance name (vnic_ctl_name_valid). */
int vnic_arg_ctl_name(const char *opt, const char *s);
/* Prints "vnic: OPT: 'S' is not one of CHOICES"; returns -EINVAL. */
int vnic_arg_bad_choice(const char *opt, const char *s, const char *choices);

/* ---------------------------------------------------------------------------
 * JSON output (json.c): a tiny streaming writer, enough for reports.
 * ------------------------------------------------------------------------- */

struct vnic_json {
	FILE *f;
	int depth;
	bool need_comma;
	bool compact;		/* the whole object on one line (JSON Lines) */
};

void vnic_json_begin(struct vnic_json *j, FILE *f);
/* An object on one line, for a stream of them (one per interval). */
void vnic_json_begin_line(struct vnic_json *j, FILE *f);
void vnic_json_end(struct vnic_json *j);	/* closes the top object, newline */
void vnic_json_object(struct vnic_json *j, const char *key);	/* key NULL inside arrays/top */
void vnic_json_close(struct vnic_json *j);
void vnic_json_array(struct vnic_json *j, const char *key);
void vnic_json_array_close(struct vnic_json *j);
void vnic_json_str(struct vnic_json *j, const char *key, const char *v);
void vnic_json_u64(struct vnic_json *j, const char *key, uint64_t v);
void vnic_json_double(struct vnic_json *j, const char *key, double v);
void vnic_json_bool(struct vnic_json *j, const char *key, bool v);

/* ---------------------------------------------------------------------------
 * Control socket (ctl.c): a running `vnic bench` or `vnic link` answers on
 * $XDG_RUNTIME_DIR/vnic/NAME.sock (/run/vnic/NAME.sock without
 * XDG_RUNTIME_DIR). One request line per connection, one answer, then the
 * server closes: "ping" -> "pong"; "stats" -> "name value" lines; "stats
 * json" -> one JSON object; anything else -> "error: <why>". docs/STATS.md.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_CTL_NAME_MAX = 64,		/* bytes of a name, NUL included */
	VNIC_CTL_LINE_MAX = 256,	/* longest request line, newline excluded */
	VNIC_CTL_TIMEOUT_MS = 1000,	/* to send the request line; again to take the answer */
};

/*
 * The counters to serve, in the shape of vnic_topo_counters: fills up to max,
 * returns how many there are in all. Called on the server thread, one call
 * at a time, while the instance runs: read counters only.
 */
typedef unsigned int (*vnic_ctl_collect_fn)(void *ctx, struct vnic_counter *out, unsigned int max);

struct vnic_ctl;

/* The socket directory into buf; created (0700) if create. 0 or -errno. */
int vnic_ctl_dir(char *buf, size_t len, bool create);
/* 1..63 bytes of [A-Za-z0-9._-], not starting with '.'. */
bool vnic_ctl_name_valid(const char *name);
/* The socket path of an instance name. 0, -EINVAL (bad name) or -ENAMETOOLONG. */
int vnic_ctl_path(const char *name, char *buf, size_t len);
/* "PROG-PID", the default instance name ("bench-1234", "link-1234"). */
void vnic_ctl_default_name(char *buf, size_t len, const char *prog);
/*
 * Serves NAME on a thread of its own until stop. A stale socket file (no
 * server) is replaced. 0, -EINVAL (bad name, no collect), -EADDRINUSE (an
 * instance answers under that name), -ENAMETOOLONG, -ENOMEM, or the errno
 * of mkdir/socket/bind/listen.
 */
int vnic_ctl_serve_start(struct vnic_ctl **ctl, const char *name, vnic_ctl_collect_fn collect,
			 void *ctx);
/* What a request line asks for. */
enum vnic_ctl_req {
	VNIC_CTL_REQ_BAD = 0,	/* answered with the "error: ..." line in *why */
	VNIC_CTL_REQ_PING,
	VNIC_CTL_REQ_STATS,
	VNIC_CTL_REQ_STATS_JSON,
};
/*
 * The request in buf[0..len), the bytes a client sent: the line ends at the
 * first newline (a CR before it is dropped) or at len, and must be 1 to
 * VNIC_CTL_LINE_MAX printable ASCII bytes naming a command. What the server
 * thread runs on every request; no I/O, no allocation, buf need not be
 * NUL-terminated. *why is NULL unless the answer is VNIC_CTL_REQ_BAD.
 */
enum vnic_ctl_req vnic_ctl_parse_request(const char *buf, size_t len, const char **why);
/* Stops the thread and removes the socket file (if it is still ours). NULL is fine. */
void vnic_ctl_serve_stop(struct vnic_ctl *ctl);
const char *vnic_ctl_serve_path(const struct vnic_ctl *ctl);
/*
 * Client: sends req and a newline to the socket at path and reads the answer
 * until the server closes, all within timeout_ms. *out is malloc'd and
 * NUL-terminated (the caller frees it), *len its length (len may be NULL).
 * 0, -ENOENT or -ECONNREFUSED (nobody there), -ETIMEDOUT, -EMSGSIZE (answer
 * over 64 MiB), -errno.
 */
int vnic_ctl_request(const char *path, const char *req, int timeout_ms, char **out, size_t *len);

/* ---------------------------------------------------------------------------
 * Samplers (sampler.c): time series of a bench run, one sample every period
 * (10 ms by default when on), taken on the thread that runs the bench (never
 * a datapath thread) into a series allocated before the run.
 * ------------------------------------------------------------------------- */

enum { VNIC_SERIES_MAX_SAMPLES = 100000 };

struct vnic_sample {
	uint64_t t_ns;			/* since the traffic started */
	uint64_t transactions;		/* so far (vnic_work_results.transactions) */
	uint64_t bytes;			/* payload delivered so far (.bytes, likewise) */
	uint32_t bql_limit[VNIC_MAX_QUEUES];	/* side A: drv_a.txN_bql_limit */
	uint32_t bql_inflight[VNIC_MAX_QUEUES];	/* drv_a.txN_bql_inflight */
	uint32_t tx_used[VNIC_MAX_QUEUES];	/* drv_a.txN_used: tx descriptors in flight */
	uint32_t rx_bufs_avail[VNIC_MAX_QUEUES];	/* dev_b.rxN_bufs_avail: posted */
};

struct vnic_series {
	uint64_t period_ns;
	unsigned int tx_queues;		/* side A tx queues sampled (bql_*, tx_used) */
	unsigned int rx_queues;		/* device B rx queues sampled (rx_bufs_avail) */
	size_t count;			/* samples taken */
	size_t cap;			/* samples allocated */
	uint64_t missed;		/* samples not taken: the series was full */
	struct vnic_sample *samples;
};

/* Room for duration_s / period and some slack (at most VNIC_SERIES_MAX_SAMPLES). 0 or -errno. */
int vnic_series_init(struct vnic_series *s, uint64_t period_ns, double duration_s);
void vnic_series_fini(struct vnic_series *s);
/*
 * Throughput over the window_ns before sample i (from the first sample when
 * the run is younger): transactions per second and Gbit/s of payload.
 */
void vnic_series_rate(const struct vnic_series *s, size_t i, uint64_t window_ns, double *tps,
		      double *gbps);
/*
 * CSV with a header line: t_s, transactions, bytes, tps_1s, gbps_1s (the
 * one-second rates above), then per sampled queue txN_bql_limit,
 * txN_bql_inflight, txN_used, then rxN_bufs_avail; one row per sample.
 * 0 or -errno.
 */
int vnic_series_write_csv(const struct vnic_series *s, const char *path);
int vnic_series_write_csv_file(const struct vnic_series *s, FILE *f);

struct vnic_sampler;

/* After vnic_topo_start (the queue counts are the negotiated ones). 0 or -errno. */
int vnic_sampler_create(struct vnic_sampler **sm, struct vnic_series *s,
			const struct vnic_topo *t);
/* One sample at t_ns with the workload's results then. No allocation. */
void vnic_sampler_take(struct vnic_sampler *sm, uint64_t t_ns,
		       const struct vnic_work_results *res);
void vnic_sampler_destroy(struct vnic_sampler *sm);

/* ---------------------------------------------------------------------------
 * Commands
 * ------------------------------------------------------------------------- */

/* `vnic bench rr|stream [options]`. Returns the process exit status. */
int vnic_cmd_bench(int argc, char **argv);

/* ---------------------------------------------------------------------------
 * The bench runner (run.c): one run of a built-in workload across the
 * embedded topology, shared by `vnic bench` and `vnic experiment`.
 * ------------------------------------------------------------------------- */

enum vnic_workload { VNIC_WL_RR, VNIC_WL_STREAM };

struct vnic_bench_opts {
	enum vnic_workload wl;
	struct vnic_topo_config topo;
	struct vnic_rr_opts rr;
	struct vnic_stream_opts st;
	double duration_s;
	bool json;
	bool quiet;			/* no interval lines on stderr */
	bool trace;			/* --trace: trace the traffic, report it */
	bool ctl;			/* serve a control socket (default off; the command: on) */
	const char *ctl_name;		/* --name; NULL: "bench-PID" */
	uint32_t sample_ms;		/* --sample-ms: sampler period, 0 = off (default) */
	const char *samples_path;	/* --samples FILE.csv: write the series there */
};

/* One second of a run (the last one may be shorter). */
struct vnic_bench_interval {
	double t_s;			/* its end, since the traffic started */
	double dt_s;			/* its length */
	uint64_t transactions;		/* completed in it */
	uint64_t bytes;			/* payload delivered in it */
	uint64_t errors;		/* payload and checksum errors in it */
};

double vnic_bench_interval_tps(const struct vnic_bench_interval *iv);
double vnic_bench_interval_gbps(const struct vnic_bench_interval *iv);

struct vnic_bench_run {
	struct vnic_bench_opts *o;	/* set by the caller */
	struct vnic_topo topo;
	struct vnic_rr *rr;
	struct vnic_stream *st;
	struct vnic_work_results res;	/* at the end of the duration */
	uint64_t elapsed_ns;
	double cpu_s;			/* the whole process during the traffic */
	double thread_cpu_s[VNIC_TOPO_SIDES];	/* each side's cpu thread, likewise */
	bool pools_full;		/* every driver pool full after quiesce and close */
	bool quiesced;			/* all data acknowledged before close */
	struct vnic_bench_interval *intervals;	/* one a second, and the last part */
	size_t nintervals;
	size_t intervals_cap;
	struct vnic_series series;	/* o->sample_ms: the samples of the run */
	struct vnic_sampler *sampler;
	struct vnic_ctl *ctl;		/* o->ctl: served until vnic_bench_run returns */
	_Atomic bool stop;		/* any thread: end the traffic now (within 0.1 s) */
};

void vnic_bench_opts_default(struct vnic_bench_opts *o, enum vnic_workload wl);
/* argv[0] is "bench"-relative: argv[1] the workload. 0, 1 (help printed), or -EINVAL (message printed). */
int vnic_bench_parse(int argc, char **argv, struct vnic_bench_opts *o);
/*
 * Builds the topology, runs the workload for the duration, stops it, waits
 * for quiesce, closes the drivers and stops the threads. The topology stays
 * for counters until vnic_bench_cleanup, which the caller always calls,
 * whatever this returned. 0 or -errno (message printed).
 */
int vnic_bench_run(struct vnic_bench_run *r);
void vnic_bench_cleanup(struct vnic_bench_run *r);
/* Async-signal-safe: every run in progress ends within 0.1 s, as if its time were up. */
void vnic_bench_interrupt(void);
/*
 * Every counter of a run, live or finished: the workload's as "work.*"
 * (transactions, bytes, tx_pkts, tx_segs, tx_bytes, rx_pkts, rx_segs,
 * tsq_throttled, tsq_max) then vnic_topo_counters. The collect function of
 * bench's control socket. Not reentrant (vnic_topo_counters is not).
 */
unsigned int vnic_bench_counters(void *run, struct vnic_counter *out, unsigned int max);

/* `vnic stats [NAME] [--all] [--json] [--watch]` (stats.c). Returns the exit status. */
int vnic_cmd_stats(int argc, char **argv);

/* `vnic link [options]` (link.c): two namespaces joined by vnic, until a signal. Exit status. */
int vnic_cmd_link(int argc, char **argv);

struct vnic_link_opts {
	struct vnic_topo_config topo;	/* drivers, devices, cable, cost model */
	const char *ns[VNIC_TOPO_SIDES];
	bool ns_given[VNIC_TOPO_SIDES];	/* attach to ns[s]; else create it */
	const char *addr[VNIC_TOPO_SIDES];	/* "none" = no address of that family */
	const char *addr6[VNIC_TOPO_SIDES];
	const char *ifname;		/* the TAP's name inside its namespace */
	const char *pcap;
	const char *backing;
	double duration_s;		/* 0 = until a signal */
	uint32_t tap_batch;
	unsigned int threads;		/* cpu threads: 2 (a side each) or 1 (both sides) */
	bool no_vnet_hdr;
	bool quiet;			/* no interval lines on stderr */
	bool json;			/* the final report as JSON on stdout */
	bool interval_json;		/* one JSON object per interval on stdout */
	bool ctl;			/* serve the counters to `vnic stats` */
	const char *ctl_name;
	unsigned int groups_set;	/* the groups of the option table given */
};

void vnic_link_opts_default(struct vnic_link_opts *o);
/* argv[0] is "link". 0, 1 (help printed) or -EINVAL (message printed). */
int vnic_link_parse(int argc, char **argv, struct vnic_link_opts *o);

/*
 * `vnic experiment NAME|all|list [options]` (experiment.c): each seed's before
 * and after policies side by side, as markdown tables, CSV and gnuplot PNGs
 * (docs/EXPERIMENTS.md). Returns the exit status.
 */
int vnic_cmd_experiment(int argc, char **argv);

#endif /* VNIC_APP_H */
