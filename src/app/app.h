/* SPDX-License-Identifier: MIT */
/*
 * src/app: the `vnic` command. Public header of the layer (used by main.c and
 * by the integration tests, which build the same topology as `vnic bench`).
 */
#ifndef VNIC_APP_H
#define VNIC_APP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "core/core.h"
#include "device/device.h"
#include "driver/driver.h"
#include "hv/hv.h"
#include "net/net.h"
#include "port/port.h"
#include "work/work.h"
#include "version.h"

/* ---------------------------------------------------------------------------
 * The embedded topology (topo.c): two vNICs on an in-process cable.
 *
 *   side A (cpu 0)                               side B (cpu 1)
 *   host A -> driver A -> hv A -> device A ==cable== device B -> hv B -> driver B -> host B
 *
 * Each side is one cpu thread running its driver, its device and its host,
 * so the only cross-thread hand-off on the datapath is the cable (and the
 * interrupt that announces a frame on it). With --queues N (N > 1, where
 * vnic_topo_queue_layout allows it) queue pair q of both vNICs runs on cpu
 * q instead, over cable ring q, with a host of the workload per queue pair:
 * the layout of `vnic link --queues N` (docs/ARCHITECTURE.md section 4.3).
 * ------------------------------------------------------------------------- */

enum { VNIC_TOPO_SIDES = 2 };

struct vnic_topo_config {
	struct vnic_drv_config drv;	/* both drivers; cpu and name are set per side */
	struct vnic_dev_config dev;	/* both devices */
	struct vnic_cable_cfg cable;
	struct vnic_hv_cost cost;	/* both hypervisors */
	uint32_t hv_max_ind_descs;	/* the hypervisor's indirect limit (default 128) */
	uint64_t busy_poll_ns;		/* cpu spin before sleeping, at most */
	enum vnic_cpu_spin spin;	/* adaptive (default) or fixed */
	enum vnic_hv_doorbell doorbell;	/* split: eventfd (default) or spin */
	uint32_t threads;		/* cpu threads: 2 (a side each, default) or 1 (both) */
	uint32_t spinners;		/* of those, at most this many spin at once */
	/*
	 * The cpus --queues N may spread queue pairs over; 0 (the default):
	 * the machine's online cpus. Set by the tests that run --queues 3 on
	 * a machine with fewer cpus, no option sets it.
	 */
	uint32_t online_cpus;
	/*
	 * --pin: the core of each cpu thread. ADAPTIVE (default): bench's two
	 * threads apart on cores of their own while the machine is otherwise
	 * idle, the scheduler's choice while it is not (struct vnic_place; as
	 * NONE with one thread, in split mode and in vnic link); NONE: the
	 * scheduler's choice; AUTO: thread i on the i-th core the process may
	 * use, when there is one per thread; LIST: core[i], n of them.
	 */
	struct vnic_topo_pin {
		enum { VNIC_PIN_NONE, VNIC_PIN_AUTO, VNIC_PIN_LIST, VNIC_PIN_ADAPTIVE } mode;
		uint32_t n;
		int core[VNIC_TOPO_SIDES];
	} pin;
	uint32_t host_pkts;		/* per side, packets in the host's pool */
	uint32_t host_buf_size;		/* bytes per host packet buffer */
	/*
	 * NULL, or called with each side's cable end before that side's
	 * device is created: the device gets the wire it returns (NULL:
	 * -ENOMEM), a mirror of the end for `vnic bench --pcap`.
	 */
	struct vnic_wire *(*wrap_wire)(void *ctx, unsigned int side, struct vnic_wire *end);
	void *wrap_ctx;
	/*
	 * --fault (docs/FAULTS.md): both sides' hypervisors and devices, each
	 * side drawing from its own stream of fault.seed. On from the moment
	 * both drivers are open (vnic_topo_start) to the stop (vnic_topo_stop).
	 */
	struct vnic_fault_cfg fault;
	/*
	 * --split: the devices and the cable in a server process of their own
	 * (server.c), the drivers and hosts here; the hvs between them are
	 * split (src/hv/shm.c, docs/ARCHITECTURE.md section 11).
	 */
	bool split;
	/* --server PATH: split, against a standing `vnic server` (listen.c); NULL: forked */
	const char *server_path;
	/*
	 * --reconnect-timeout: how long a --server client goes on trying to
	 * reach a server that went away before it gives up (server.c)
	 */
	uint64_t reconnect_timeout_ns;
};

struct vnic_split_reconnect;

/* The client's end of a split run's server process (server.c). */
struct vnic_split {
	int sock;			/* -1: none; with --server, its number never changes */
	pid_t pid;			/* 0: a standing server's child, not ours to reap */
	pthread_mutex_t lock;		/* one request at a time on sock */
	uint64_t conn;			/* under lock: servers sock was put on to after the first */
	struct vnic_split_reconnect *rc; /* --server: the way back to a server (NULL: none) */
	/* a standing server on a switch: the MACs it gave each side's device */
	bool has_mac;
	uint8_t mac[2][6];
};

struct vnic_topo {
	struct vnic_cpu cpu[VNIC_TOPO_SIDES];
	/*
	 * --queues N spread (N, else 0): queue pair q of both vNICs on qcpu[q]:
	 * cpu[0] and cpu[1] for 0 and 1, extra_cpu[q - 2] ("q2", ...) beyond;
	 * the hosts of queue pair q >= 1 send from qpool[side][q].
	 */
	unsigned int spread;
	struct vnic_cpu *qcpu[VNIC_MAX_QUEUES];
	struct vnic_cpu extra_cpu[VNIC_MAX_QUEUES - VNIC_TOPO_SIDES];
	unsigned int nextra;		/* extra_cpu[0..nextra) initialised */
	struct vnic_pkt_pool qpool[VNIC_TOPO_SIDES][VNIC_MAX_QUEUES];
	struct vnic_cpu_spin_group spin_group;	/* --spinners below --threads */
	struct vnic_hv *hv[VNIC_TOPO_SIDES];
	struct vnic_cable *cable;
	struct vnic_dev *dev[VNIC_TOPO_SIDES];
	struct vnic_drv *drv[VNIC_TOPO_SIDES];
	struct vnic_pkt_pool host_pool[VNIC_TOPO_SIDES];
	struct vnic_topo_config cfg;
	struct vnic_split split;	/* cfg.split only */
	struct vnic_place place;	/* --pin adaptive: on while it places the threads */
	bool started;
	bool said;			/* create failed and said why on stderr already */
};

void vnic_topo_config_default(struct vnic_topo_config *cfg);
/*
 * The core each of the config's cpu threads runs on (-1: any), from --pin.
 * 0, or -EINVAL said on stderr (a list that does not name one core per
 * thread).
 */
int vnic_topo_pin_cores(const struct vnic_topo_config *cfg, int core[VNIC_TOPO_SIDES]);
/* Builds everything, threads not started. 0 or -errno; on error nothing is left. */
int vnic_topo_create(struct vnic_topo *t, const struct vnic_topo_config *cfg);
/*
 * Starts both cpu threads (placed by --pin: with adaptive, apart at once
 * when the machine is quiet), opens both drivers, then turns the faults
 * on. 0 or -errno.
 */
int vnic_topo_start(struct vnic_topo *t);
/*
 * --pin adaptive, from the thread that runs the topology, about every
 * VNIC_PLACE_PERIOD_NS while it runs: one look of the placement (struct
 * vnic_place). Nothing otherwise.
 */
void vnic_topo_place(struct vnic_topo *t, uint64_t now_ns);
/*
 * Turns the faults off, closes both drivers (a reset in progress is
 * abandoned: everything comes back) and stops the threads. 0, or the first
 * close error.
 */
int vnic_topo_stop(struct vnic_topo *t);
/* Frees everything; the threads must be stopped. */
void vnic_topo_destroy(struct vnic_topo *t);
struct vnic_netdev *vnic_topo_netdev(struct vnic_topo *t, unsigned int side);
/* --server: the server went away and did not come back within --reconnect-timeout (said). */
bool vnic_topo_gave_up(const struct vnic_topo *t);
/* pool offered to each of nd's tx queues (--tx-buf map); before open. 0 or -errno. */
int vnic_topo_tx_pools(struct vnic_netdev *nd, const struct vnic_pkt_pool *pool);
/*
 * --queues N: whether queue pair q of both vNICs may run on a cpu of its own
 * (q's), over a cable ring of its own: N, or 0 with why (a static string)
 * when not: one wire (split, --pcap, a backing, --wire: one_wire names
 * it, NULL for none), one thread, rx and tx queues that differ, a device
 * granting fewer, --tx-reclaim napi, more queue pairs than cpus
 * (cfg->online_cpus). Shared with vnic link.
 */
unsigned int vnic_topo_queue_layout(const struct vnic_topo_config *cfg, const char *one_wire,
				    const char **why);
/* The name of queue pair q's cpu beyond the sides' two ("q2", ...). */
const char *vnic_topo_queue_cpu_name(unsigned int q);
/*
 * The pools side s's hosts send from, one per queue pair of the workload
 * (host_pool, then qpool[s][q]); returns how many: t->spread, or 1.
 */
unsigned int vnic_topo_host_pools(struct vnic_topo *t, unsigned int s,
				  struct vnic_pkt_pool *pools[VNIC_MAX_QUEUES]);

/*
 * Every counter of the topology, prefixed by where it lives: "drv_a.",
 * "dev_b.", "hv_a.", "cable.ab_" (and "cable.ring1.ab_" with a ring pair per
 * queue pair), "cpu_a." (and "cpu_q2." for queue pair 2's), and the
 * placement's "place.".
 * Returns how many there are in
 * all; fills up to max.
 */
unsigned int vnic_topo_counters(const struct vnic_topo *t, struct vnic_counter *out,
				unsigned int max);
/* One counter by its prefixed name; 0 if absent. */
uint64_t vnic_topo_counter(const struct vnic_topo *t, const char *name);
/*
 * split: the CPU time of the server's cpu thread of each side so far, the
 * part of it spent spinning, and the wall clock of its work turns
 * (cpu_X.work_ns). 0 or -errno (the server did not answer).
 */
int vnic_topo_split_cpu(const struct vnic_topo *t, double cpu_s[VNIC_TOPO_SIDES],
			double spin_s[VNIC_TOPO_SIDES], double work_s[VNIC_TOPO_SIDES]);
/* One direction's cable counters, wherever the cable is (split: asked of the server). 0. */
int vnic_topo_cable_stats(const struct vnic_topo *t, unsigned int dir,
			  struct vnic_cable_stats *cs);
/*
 * One object's counters appended to out[at..max) under prefix (the cable's:
 * "cable.ab_" or "cable.ba_"); returns the new total, which may pass max
 * (what does not fit is left out). Any thread.
 */
unsigned int vnic_counters_drv(const struct vnic_drv *drv, const char *prefix,
			       struct vnic_counter *out, unsigned int max, unsigned int at);
unsigned int vnic_counters_dev(const struct vnic_dev *dev, const char *prefix,
			       struct vnic_counter *out, unsigned int max, unsigned int at);
unsigned int vnic_counters_hv(const struct vnic_hv *hv, const char *prefix,
			      struct vnic_counter *out, unsigned int max, unsigned int at);
unsigned int vnic_counters_cable(const struct vnic_cable *cable, unsigned int dir,
				 struct vnic_counter *out, unsigned int max, unsigned int at);
/*
 * With more than one ring pair: each ring's counters of both directions,
 * "cable.ringQ.ab_tx_frames" and so on (the sums are vnic_counters_cable's);
 * nothing with one.
 */
unsigned int vnic_counters_cable_rings(const struct vnic_cable *cable, struct vnic_counter *out,
				       unsigned int max, unsigned int at);
unsigned int vnic_counters_cpu(const struct vnic_cpu *cpu, const char *prefix,
			       struct vnic_counter *out, unsigned int max, unsigned int at);

/* ---------------------------------------------------------------------------
 * The server process of a split run (server.c, docs/PROTOCOL.md section 13)
 * ------------------------------------------------------------------------- */

/*
 * Forks the server process on a socketpair, before the client creates
 * anything else; the child serves cfg's devices and cable and exits. With
 * cable.tso it first raises cfg->drv.rx_entries to VNIC_SPLIT_TSO_RX_ENTRIES
 * (the drivers are created from cfg after this). 0 or -errno.
 */
int vnic_split_fork(struct vnic_split *c, struct vnic_topo_config *cfg);
/*
 * The server's side: attach, build, serve until STOP or EOF. 0 after a STOP,
 * -ECONNRESET when the client's end closed without one, or -errno.
 */
int vnic_split_serve(int sock, const struct vnic_topo_config *cfg);
/* Attaches both sides' client hvs; 0 once the server runs its devices, or -errno. */
int vnic_split_attach(struct vnic_split *c, struct vnic_hv *const hv[VNIC_TOPO_SIDES]);
/*
 * A new connection to the standing server at path, its settings taken from
 * cfg and both hvs attached again (reconnect.c): the fd, or -errno with
 * *step naming where it failed (-EADDRNOTAVAIL: a switched server gave
 * other MACs than c's first connect). Says nothing on stderr.
 */
int vnic_split_redial(const struct vnic_split *c, const char *path,
		      const struct vnic_topo_config *cfg, struct vnic_hv *const hv[VNIC_TOPO_SIDES],
		      const char **step);
/* The server's counters into out (at most max); how many, or -errno. Any thread. */
int vnic_split_counters(struct vnic_split *c, struct vnic_counter *out, unsigned int max);
/*
 * The same, and *conn the connection that answered (c->conn: 0 for the
 * first server, +1 for each it reconnected to), for a caller that adds up a
 * server's counters across its restarts.
 */
int vnic_split_counters_conn(struct vnic_split *c, struct vnic_counter *out, unsigned int max,
			     uint64_t *conn);
/* Asks the server to stop and reaps it. 0, or -errno (-EIO: it exited in error). */
int vnic_split_stop(struct vnic_split *c);

/*
 * A standing server that goes away (killed, restarted): the client resets and
 * attaches again (docs/ARCHITECTURE.md section 11, "A server restart").
 *
 * vnic_split_watch, after vnic_split_attach and before cpu starts: a poller
 * on cpu (side a's, the control cpu) watches the socket for its hang-up
 * (EPOLLRDHUP: nothing per packet); when it comes, each hv is told its
 * partner is gone (vnic_hv_split_partner_lost: a transport event, the
 * driver's reset), and a thread of its own connects to path again, every
 * vnic_split_backoff_ms, sends cfg's settings and the same hvs' attach, for
 * at most cfg->reconnect_timeout_ns; then it says so in one line and
 * vnic_split_gave_up turns true. 0 or -errno.
 */
int vnic_split_watch(struct vnic_split *c, struct vnic_cpu *cpu,
		     struct vnic_hv *const hv[VNIC_TOPO_SIDES], const char *path,
		     const struct vnic_topo_config *cfg);
/* Ends the reconnecting thread (an attempt under way first ends). Any thread but cpu's; idempotent. */
void vnic_split_watch_stop(struct vnic_split *c);
/* Once cpu has stopped (vnic_split_stop does it): the thread ended, the watch freed. */
void vnic_split_watch_free(struct vnic_split *c);
/* Any thread: the server went away and did not come back in time. */
bool vnic_split_gave_up(const struct vnic_split *c);
/*
 * The client's reconnect counters ("split.lost", "split.reconnects",
 * "split.reconnect_attempts", "split.down_ns", "split.down_max_ns")
 * appended to out[at..max); returns the new total. Any thread.
 */
unsigned int vnic_split_client_counters(const struct vnic_split *c, struct vnic_counter *out,
					unsigned int max, unsigned int at);
/* The wait before reconnect attempt n (from 0): 10 ms, doubling, at most 500 ms. */
uint32_t vnic_split_backoff_ms(unsigned int n);

enum {
	VNIC_SPLIT_CONFIG_MAX = 4096,		/* bytes of a CONFIG request's settings */
	VNIC_SPLIT_CONFIG_LINE_MAX = 128,	/* bytes of one "NAME VALUE" line, newline included */
	VNIC_SPLIT_TIMEOUT_MS = 5000,		/* connect, greeting, settings, attach, each answer */
	VNIC_SPLIT_BACKOFF_MIN_MS = 10,		/* reconnect: the first wait, doubled each time */
	VNIC_SPLIT_BACKOFF_MAX_MS = 500,
	VNIC_SPLIT_RECONNECT_DEFAULT_S = 30,	/* --reconnect-timeout */
	/*
	 * The rx buffers per queue a split run with --cable-tso asks for at
	 * least (the device grants up to its max_rx_add_entries): a superframe
	 * needs tens at once, and a driver in another process than its device
	 * replenishes them late (docs/LINK.md).
	 */
	VNIC_SPLIT_TSO_RX_ENTRIES = 2048,
};

/*
 * Connects to a standing `vnic server` at path instead of forking, takes its
 * greeting and hands it cfg's settings (the server's share of them); then
 * vnic_split_attach as after a fork. cfg's rx ring is raised with cable.tso
 * as by vnic_split_fork. 0, or -errno after one line on stderr saying why
 * (no server, refused, timed out, settings refused).
 */
int vnic_split_connect(struct vnic_split *c, const char *path, struct vnic_topo_config *cfg);
/*
 * The settings a client sends: "NAME VALUE\n" for each option the server
 * process runs with (vNIC, device, cost and cable groups, --pin excepted),
 * as vnic_topo_opt_show prints them. Bytes written, or -EMSGSIZE.
 */
int vnic_split_config_text(const struct vnic_topo_config *cfg, char *buf, size_t len);
/*
 * The server's parse of them into cfg (which holds the defaults): every
 * line must end in a newline, name one of those options and carry a value
 * the option takes. 0, -EMSGSIZE, or -EINVAL (a line on vnic_arg_err()).
 */
int vnic_split_config_apply(const char *text, size_t len, struct vnic_topo_config *cfg);
/* The first message of a standing server on an accepted socket: rc 0, -EACCES or -EUSERS. */
int vnic_split_greet(int sock, int rc);
/* A standing server's child on a switch (`vnic server --switch`): its two ports. */
struct vnic_split_switch {
	struct vnic_switch *sw;
	unsigned int port[2];		/* side a's device, side b's */
};
/*
 * A standing server's child on its accepted socket: greets, takes the
 * settings, then vnic_split_serve, with a cable between the two devices
 * (sws NULL) or each device on its port of the switch, filtering by the MAC
 * of its port, which the settings' answer gives the client. 0 after a STOP,
 * -ECONNRESET when the client went away without one, or -errno.
 */
int vnic_split_serve_client(int sock, const struct vnic_split_switch *sws);

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
	VNIC_OPTG_FAULT,	/* faults on demand */
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

/*
 * --pcap FILE and the options that shape it, the same for `vnic bench` and
 * `vnic link` (docs/LINK.md, "--pcap FILE"): each command lists them among
 * its own options.
 */
struct vnic_pcap_opts {
	const char *path;	/* --pcap FILE; NULL: no capture */
	uint32_t snaplen;	/* --snaplen N: bytes kept of each frame; 0: whole frames */
	uint64_t count;		/* --pcap-count N: frames, then the capture stops; 0: no limit */
	bool lossless;		/* --pcap-lossless: slow the wire rather than leave frames out */
};

/* Whether vnic was built with libpcap: without it --pcap is refused (pcap.c). */
bool vnic_pcap_supported(void);
/*
 * The pcap options' getopt values, for a command's own table: OPT + 0
 * --pcap, + 1 --snaplen, + 2 --pcap-count, + 3 --pcap-lossless.
 */
enum { VNIC_PCAP_OPTS = 4 };
/* A file name given to opt: 0, or -EINVAL for an empty one (message printed). */
int vnic_arg_path(const char *opt, const char *s);
/* Parses pcap option i (0..3 as above) into p. 0 or -EINVAL (message printed). */
int vnic_arg_pcap(unsigned int i, const char *arg, struct vnic_pcap_opts *p);
/*
 * After parsing: the shaping options need --pcap, and a capture, which
 * mirrors MTU frames, refuses the cable's superframes (cable_tso).
 * 0 or -EINVAL (message printed).
 */
int vnic_pcap_opts_check(const char *cmd, const struct vnic_pcap_opts *p, bool cable_tso);
/*
 * Opens (creates or truncates) an output file before anything else is done,
 * so that a bad path fails at once rather than after the run: a directory,
 * a missing folder, no permission each get one line on stderr, "CMD: OPT
 * PATH: why", and NULL. The FILE is the caller's.
 */
FILE *vnic_out_open(const char *cmd, const char *opt, const char *path);
/* The same; owner_only: mode 0600 whatever the umask or the file's old mode (captures). */
FILE *vnic_out_open_mode(const char *cmd, const char *opt, const char *path, bool owner_only);

/* Where the parse helpers (and vnic_topo_opt_set) print why: stderr unless this thread set a stream. */
FILE *vnic_arg_err(void);
void vnic_arg_err_to(FILE *f);	/* NULL: back to stderr */
/* Parse helpers: 0, or -EINVAL after printing "vnic: <what>: <why>" to vnic_arg_err(). */
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
 * `vnic show` and `vnic set` on a running instance (live.c), served by its
 * control socket: the negotiated values and the settings in force, and
 * changes by the names of the option table, applied live or through a
 * change-param reset of the drivers (docs/STATS.md).
 * ------------------------------------------------------------------------- */

struct vnic_live {
	struct vnic_topo_config *cfg;	/* the settings in force; set updates it */
	unsigned int nsides, ncpus;
	struct vnic_drv *drv[VNIC_TOPO_SIDES];
	struct vnic_dev *dev[VNIC_TOPO_SIDES];
	struct vnic_hv *hv[VNIC_TOPO_SIDES];
	/* every cpu thread of the run, by its name: a, b, then q2... of --queues N */
	struct vnic_cpu *cpu[VNIC_MAX_QUEUES];
	struct vnic_cable *cable;	/* NULL: a backing wire, no cable options */
	bool mtu_live, queues_live;	/* may change while running */
	const char *why_fixed;		/* why they may not, for the error */
	/* The hosts follow a new MTU (link: the TAPs); NULL: nothing to do. 0 or -errno. */
	int (*host_mtu)(void *ctx, uint32_t mtu);
	void *host_ctx;
};

/*
 * The control socket's show: what the sides negotiated, each cpu thread's
 * busy-poll, then every setting.
 */
void vnic_live_show(const struct vnic_live *l, FILE *f, bool json);
/*
 * The control socket's set: "KEY VALUE..." (args, modified), every pair
 * checked before anything changes. Writes a line per change, or one
 * "error: ..." line. 0 or -errno.
 */
int vnic_live_set(struct vnic_live *l, char *args, FILE *f);

/* ---------------------------------------------------------------------------
 * The machine a figure was taken on (machine.c): version, CPUs, load and
 * steal at the start and the end, and the CPU other processes took.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_MACHINE_BUSY_STEAL_PCT = 2,	/* more steal than this: busy */
};
/* Other processes using more than this many cpus on average: busy. */
#define VNIC_MACHINE_BUSY_CPUS 0.25

struct vnic_machine_snap {
	time_t wall;
	uint64_t t_ns;
	double load1;			/* -1 if unknown */
	bool have_stat;
	uint64_t busy, steal, total;	/* /proc/stat cpu line, ticks */
	double proc_cpu_s;		/* this process, user + system */
};

struct vnic_machine {
	int cpus;
	char start[32];			/* ISO 8601, local time */
	double load_start, load_end;
	bool have_stat;
	double steal_pct;		/* of all CPU time during the run */
	double others_cpus;		/* CPU other processes used, in cpus */
	bool busy;			/* figures taken beside other work */
};

void vnic_machine_snap(struct vnic_machine_snap *s);
void vnic_machine_report(const struct vnic_machine_snap *start, const struct vnic_machine_snap *end,
			 struct vnic_machine *m);
/* Two lines (three with the warning) for a text report. cmdline may be NULL. */
void vnic_machine_print(FILE *f, const struct vnic_machine *m, const char *cmdline);
struct vnic_json;
/* A "machine" object. */
void vnic_machine_json(struct vnic_json *j, const struct vnic_machine *m, const char *cmdline);
/* "vnic " and a command's argv (argv[0] the command) joined by spaces, malloc'd, or NULL. */
char *vnic_cmdline(int argc, char **argv);

/* ---------------------------------------------------------------------------
 * Control socket (ctl.c): a running `vnic bench` or `vnic link` answers on
 * $XDG_RUNTIME_DIR/vnic/NAME.sock (/run/vnic/NAME.sock without
 * XDG_RUNTIME_DIR). Clients are served at once, each with its own deadline.
 * One request line per connection, one answer, then the server closes:
 * "ping" -> "pong"; "stats" -> "name value" lines; "stats json" -> one JSON
 * object; "show" / "show json" -> the settings in force; "set KEY VALUE..."
 * -> a line per change or one "error: ..."; anything else -> "error: <why>".
 * docs/STATS.md.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_CTL_NAME_MAX = 64,		/* bytes of a name, NUL included */
	VNIC_CTL_LINE_MAX = 256,	/* longest request line, newline excluded */
	VNIC_CTL_TIMEOUT_MS = 1000,	/* per client: to send the request line; again to take the answer */
};

/*
 * The counters to serve, in the shape of vnic_topo_counters: fills up to max,
 * returns how many there are in all. Called on the server thread, one call
 * at a time, while the instance runs: read counters only.
 */
typedef unsigned int (*vnic_ctl_collect_fn)(void *ctx, struct vnic_counter *out, unsigned int max);

/*
 * What "show" and "set" do (either may be NULL: the request is then
 * refused). Called on the server thread, one at a time, while the instance
 * runs. show writes the settings in force ("key value" lines, or one JSON
 * object). set gets the words after "set " and writes one line per change,
 * or one "error: ..." line with nothing changed; 0, or -errno when refused.
 */
struct vnic_ctl_ops {
	void (*show)(void *ctx, FILE *f, bool json);
	int (*set)(void *ctx, char *args, FILE *f);
};

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
			 const struct vnic_ctl_ops *ops, void *ctx);
/* What a client's request line asks for. */
enum vnic_ctl_req {
	VNIC_CTL_REQ_MORE,	/* no newline yet and no EOF: read on */
	VNIC_CTL_REQ_PING,
	VNIC_CTL_REQ_STATS,
	VNIC_CTL_REQ_STATS_JSON,
	VNIC_CTL_REQ_SHOW,
	VNIC_CTL_REQ_SHOW_JSON,
	VNIC_CTL_REQ_SET,	/* "set " and words: the instance's set checks them */
	VNIC_CTL_REQ_BAD,	/* answered with the "error: ..." line in *why */
};
/*
 * The request in the bytes a client has sent so far, buf[0..len), eof when
 * it has shut down its side. The line ends at the first newline (a CR before
 * it is dropped) or at EOF, so "printf stats | nc -U" style clients work
 * without one, and must be 1 to VNIC_CTL_LINE_MAX printable ASCII bytes
 * naming a command. What the server thread runs on every read; pure (no I/O,
 * no state, no allocation), buf need not be NUL-terminated: any byte string
 * may be fed to it. *why is NULL unless the answer is VNIC_CTL_REQ_BAD.
 */
enum vnic_ctl_req vnic_ctl_parse_request(const char *buf, size_t len, bool eof, const char **why);
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
	const char *cmdline;		/* recorded in reports; NULL: none */
	unsigned int repeat;		/* --repeat N: rounds of every case (0: one run) */
	const char *compare;		/* --compare NAME=A,B[,C...] */
	struct vnic_pcap_opts pcap;	/* --pcap FILE: the cable's frames, both ways */
};

enum {
	VNIC_CMP_MAX_CASES = 8,
	VNIC_CMP_MAX_ROUNDS = 100,
	VNIC_CMP_DEFAULT_ROUNDS = 5,	/* --compare without --repeat */
};
/* Seconds per round of --repeat or --compare when --duration is not given. */
#define VNIC_CMP_DEFAULT_ROUND_S 1.0

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
	/*
	 * Each cpu thread, likewise: a and b (the sides'), then q2... (those
	 * of queue pairs 2 and up with --queues N spread), nthreads of them.
	 */
	double thread_cpu_s[VNIC_MAX_QUEUES];
	double spin_cpu_s[VNIC_MAX_QUEUES];	/* of which spent spinning without work */
	double work_turn_s[VNIC_MAX_QUEUES];	/* wall clock of the turns that ran pollers */
	unsigned int nthreads;		/* 2 (b's 0 with --threads 1), or N spread */
	struct vnic_machine machine;	/* the machine during the traffic */
	bool pools_full;		/* every driver pool full after quiesce and close */
	int close_err;			/* 0, or why the drivers did not close (-errno) */
	bool quiesced;			/* all data acknowledged before close */
	struct vnic_bench_interval *intervals;	/* one a second, and the last part */
	size_t nintervals;
	size_t intervals_cap;
	struct vnic_series series;	/* o->sample_ms: the samples of the run */
	struct vnic_sampler *sampler;
	struct vnic_ctl *ctl;		/* o->ctl: served until vnic_bench_run returns */
	/* what `vnic show/set` reach, while the traffic runs (live_ready under live_lock) */
	struct vnic_live live;
	struct vnic_topo_config live_cfg;
	pthread_mutex_t live_lock;
	bool live_ready;
	FILE *pcap_file;		/* o->pcap.path opened by the caller, or NULL: the runner opens it */
	struct vnic_pcap *pcap;		/* o->pcap.path: the capture, stopped when the run ends */
	_Atomic bool stop;		/* any thread: end the traffic now (within 0.1 s) */
};

/*
 * Work CPU: the CPU the cpu threads spent in turns that did work, the
 * figure a policy changes (how long a thread spun or slept only says how
 * long it waited). Per thread, the smaller of two upper bounds: the wall
 * clock of its work turns, and its CPU time less its spin
 * (vnic_cpu_work_cpu_ns); thread is an index of thread_cpu_s (0 and 1: the
 * sides', 0 beyond nthreads). The sum of every thread; per transaction and
 * per GB of payload, in ns; 0 when there were none.
 */
double vnic_bench_side_work_cpu_s(const struct vnic_bench_run *r, unsigned int thread);
double vnic_bench_work_cpu_s(const struct vnic_bench_run *r);
double vnic_bench_work_ns_per_txn(const struct vnic_bench_run *r);
double vnic_bench_work_ns_per_gb(const struct vnic_bench_run *r);

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
/* The name of cpu thread i of a run, as its counters say it: "a", "b", "q2"... */
const char *vnic_bench_thread_name(unsigned int i);
/* The report of a run that returned 0, text or (r->o->json) JSON, into f (bench.c). */
void vnic_bench_report(const struct vnic_bench_run *r, FILE *f);
/* Async-signal-safe: every run in progress ends within 0.1 s, as if its time were up. */
void vnic_bench_interrupt(void);

/*
 * A floor under each run of vnic_bench_rounds: a run that carried fewer
 * transactions (rr) or bytes (stream) than this measured next to nothing
 * (under a sanitizer or on a loaded machine a short round can carry nothing
 * at all), so it is not handed to done: the case runs again at once, twice
 * as long, at most VNIC_FLOOR_TRIES runs in all, the last kept whatever it
 * carried. A figure then always stands on the floor's worth of traffic, on
 * any machine, and a workload that carries nothing still ends.
 */
struct vnic_bench_floor {
	uint64_t transactions;
	uint64_t bytes;
	unsigned int again;		/* out: runs that fell short and ran again */
};

enum { VNIC_FLOOR_TRIES = 4 };

/*
 * Cases side by side: every case runs once per round, in turn, round after
 * round, each on a fresh topology, so that a machine getting busier or
 * quieter moves every case alike; each round starts one case further on.
 * `vnic bench --repeat/--compare` and `vnic experiment` both run this way.
 */
struct vnic_bench_rounds {
	struct vnic_bench_opts *cases;
	unsigned int ncases;
	unsigned int rounds;
	const char *const *labels;	/* for progress lines; may be NULL */
	const char *progress;		/* prefix of a line per round on stderr; NULL: none */
	/*
	 * After each run, its topology still up for counters (cleaned up
	 * right after): 0, or an error that ends the rounds.
	 */
	int (*done)(void *ctx, unsigned int i, unsigned int round, struct vnic_bench_run *r);
	void *ctx;
	struct vnic_bench_floor *floor;	/* NULL: every run is kept */
};

/* 0, the first error of a run or of done, or -EINTR (interrupted: what ran was reported). */
int vnic_bench_rounds(const struct vnic_bench_rounds *rr);

/*
 * --repeat and --compare (compare.c): spec "NAME=A,B[,C...]" (NULL: the one
 * case of base, repeated), every case for rounds rounds, alternating; the
 * report (text or base->json) on stdout. 0 or -errno (message printed).
 */
int vnic_bench_compare(const struct vnic_bench_opts *base, const char *spec, unsigned int rounds);

struct vnic_cmp_verdict {
	double ratio;		/* median of other[i] / first[i] */
	double lo, hi;		/* its 95 % percentile-bootstrap interval */
	bool path_known;	/* the option has path counters */
	bool same_path;		/* they show both cases took the same path */
	const char *text;	/* "same path: no measurable difference", "higher", ... */
};

/*
 * The verdict on a case against the first: n paired rounds of a figure
 * (the rate, the work CPU), and npath path counters of each case summed
 * over its rounds (npath 0: none known). Deterministic: a fixed seed.
 */
void vnic_cmp_judge(const double *first, const double *other, unsigned int n,
		    const uint64_t *path_first, const uint64_t *path_other, unsigned int npath,
		    struct vnic_cmp_verdict *v);
/*
 * Every counter of a run, live or finished: the workload's as "work.*"
 * (transactions, bytes, tx_pkts, tx_segs, tx_bytes, rx_pkts, rx_segs,
 * tsq_throttled, tsq_max), then vnic_topo_counters, then with --pcap the
 * capture's as "pcap.*" (written, left_out, waits, wait_us). The collect
 * function of bench's control socket. Not reentrant (vnic_topo_counters is
 * not).
 */
unsigned int vnic_bench_counters(void *run, struct vnic_counter *out, unsigned int max);
/* Bench's control socket: show and set on the running topology (live.c). */
extern const struct vnic_ctl_ops vnic_bench_ctl_ops;

/* `vnic stats [NAME] [--all] [--json] [--watch]` (stats.c). Returns the exit status. */
int vnic_cmd_stats(int argc, char **argv);
/* `vnic show [NAME] [-j]`, `vnic set NAME KEY VALUE...` (stats.c). Exit status. */
int vnic_cmd_show(int argc, char **argv);
int vnic_cmd_set(int argc, char **argv);

/* `vnic link [options]` (link.c): two namespaces joined by vnic, until a signal. Exit status. */
int vnic_cmd_link(int argc, char **argv);

/* ---------------------------------------------------------------------------
 * `vnic server --listen PATH` (listen.c): a standing server, a child process
 * per client, each running vnic_split_serve_client (docs/ARCHITECTURE.md
 * section 11).
 * ------------------------------------------------------------------------- */

enum {
	VNIC_SERVER_MAX_UIDS = 16,		/* --allow-uid, at most */
	VNIC_SERVER_MAX_CLIENTS = 1024,		/* --max-clients, at most */
	VNIC_SERVER_DEFAULT_CLIENTS = 16,
};

struct vnic_server_opts {
	const char *listen;		/* --listen PATH */
	uid_t allow[VNIC_SERVER_MAX_UIDS];	/* --allow-uid; parsed: at least the own uid */
	unsigned int nallow;
	uint32_t max_clients;		/* --max-clients */
	const char *ctl_name;		/* --name; NULL: "server-PID" */
	bool ctl;			/* serve the client counts to `vnic stats` (default on) */
	bool quiet, json;
	bool switched;			/* --switch: every device a port of one switch */
};

/*
 * Parses argv[1..] (argv[0] is "server"). Without --allow-uid the server's
 * own uid is the one allowed. 0, 1 (--help printed) or -EINVAL (a line saying
 * why printed).
 */
int vnic_server_parse(int argc, char **argv, struct vnic_server_opts *o);
/* Whether a client of uid is served (root only when named). */
bool vnic_server_uid_allowed(const struct vnic_server_opts *o, uid_t uid);
/* `vnic server`: until SIGINT or SIGTERM. The exit status: 0, 1 (failed), 2 (usage). */
int vnic_cmd_server(int argc, char **argv);

/* --backing-mode: the socket under the backing wire (docs/LINK.md). */
enum vnic_link_backing_mode {
	VNIC_LINK_BACKING_AFPACKET = 0,	/* the default */
	VNIC_LINK_BACKING_AFXDP,
	VNIC_LINK_BACKING_AUTO,		/* AF_XDP where the interface takes it, else AF_PACKET */
};

struct vnic_link_opts {
	struct vnic_topo_config topo;	/* drivers, devices, cable, cost model */
	const char *ns[VNIC_TOPO_SIDES];
	bool ns_given[VNIC_TOPO_SIDES];	/* attach to ns[s]; else create it */
	const char *addr[VNIC_TOPO_SIDES];	/* "none" = no address of that family */
	const char *addr6[VNIC_TOPO_SIDES];
	const char *ifname;		/* the TAP's name inside its namespace */
	struct vnic_pcap_opts pcap;
	const char *backing;
	const char *backing_ns;		/* the namespace the backing is in; NULL: ours */
	enum vnic_afpacket_ring backing_ring;
	bool backing_plain;		/* --backing-offload off: MTU frames only */
	enum vnic_link_backing_mode backing_mode;	/* --backing-mode */
	bool mtu_given;			/* --mtu: else a backing's MTU is taken */
	bool reconnect_given;		/* --reconnect-timeout: only with --server */
	const char *wire;		/* --wire SPEC: the device's wire is a socket (checked) */
	double duration_s;		/* 0 = until a signal */
	uint32_t tap_batch;
	bool no_vnet_hdr;
	bool quiet;			/* no interval lines on stderr */
	bool json;			/* the final report as JSON on stdout */
	bool interval_json;		/* one JSON object per interval on stdout */
	bool ctl;			/* serve the counters to `vnic stats` */
	const char *ctl_name;
	unsigned int groups_set;	/* the groups of the option table given */
	const char *profile;		/* --profile NAME: a documented set of options */
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
