// SPDX-License-Identifier: MIT
/*
 * The server process of a split run (`vnic bench --split`, `vnic link
 * --split`, docs/ARCHITECTURE.md section 11): the devices and the cable
 * between them on cpus of their own, while the drivers and the workloads
 * (or the TAPs) run in the client process. The runner forks it on a
 * socketpair, or `--server PATH` connects to a standing `vnic server`
 * (listen.c), whose child for that client first greets it and takes its
 * settings; then the client attaches each side's hv (remote.c), asks for
 * counters and finally for the stop on the same socket (docs/PROTOCOL.md
 * section 13).
 */
#define _GNU_SOURCE /* close_range */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app.h"

enum {
	SPLIT_MAGIC = 0x76737276,	/* "vsrv" */
	SPLIT_REQ_COUNTERS = 1,
	SPLIT_REQ_STOP = 2,
	SPLIT_REQ_CONFIG = 3,
	SPLIT_MAX_COUNTERS = 8192,
};

/* A request, and the head of every answer: rc, and for COUNTERS how many follow. */
struct split_msg {
	uint32_t magic;
	uint32_t type;			/* request: SPLIT_REQ_*; answer: 0 */
	int32_t rc;			/* answer: 0 or -errno */
	uint32_t n;			/* answer to COUNTERS: struct vnic_counter that follow */
};

static_assert(sizeof(struct split_msg) == 16, "split message layout");

static const char *const side_name[VNIC_TOPO_SIDES] = { "a", "b" };

/* All of len, or -errno (-ECONNRESET at EOF). */
static int io_full(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int answer(int sock, int rc, uint32_t n)
{
	struct split_msg m = { .magic = SPLIT_MAGIC, .rc = rc, .n = n };

	return io_full(sock, &m, sizeof(m), true);
}

/* A send or receive timeout on sock, ms (0: none). 0 or -errno. */
static int set_timeo(int sock, int opt, unsigned int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	return setsockopt(sock, SOL_SOCKET, opt, &tv, sizeof(tv)) ? -errno : 0;
}

static int set_rcvtimeo(int sock, unsigned int ms)
{
	return set_timeo(sock, SO_RCVTIMEO, ms);
}

/* --- the server --------------------------------------------------------------------- */

struct split_server {
	struct vnic_cpu cpu[VNIC_TOPO_SIDES];
	struct vnic_hv *hv[VNIC_TOPO_SIDES];
	struct vnic_cable *cable;
	const struct vnic_split_switch *sws;	/* NULL: the cable */
	struct vnic_wire *port[VNIC_TOPO_SIDES];	/* on the switch */
	struct vnic_dev *dev[VNIC_TOPO_SIDES];
	struct vnic_counter *ctrs;
	unsigned int ncpus;
	bool started;
};

static struct vnic_cpu *server_cpu(struct split_server *sv, unsigned int s)
{
	return &sv->cpu[sv->ncpus == 1 ? 0 : s];
}

static int server_wire_cable(struct split_server *sv, const struct vnic_topo_config *cfg)
{
	struct vnic_cable_cfg cc = cfg->cable;
	int err;

	if (!cc.mtu || cc.mtu < cfg->drv.mtu)
		cc.mtu = cfg->drv.mtu;
	err = vnic_cable_create(&sv->cable, &cc);
	if (err)
		return err;
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++)
		sv->port[s] = vnic_cable_end(sv->cable, s);
	return 0;
}

/* Each device's doorbell poller on its own cpu, as the cable's notification is. */
static int server_wire_switch(struct split_server *sv)
{
	int err;

	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = vnic_switch_port_open(sv->sws->sw, sv->sws->port[s], server_cpu(sv, s),
					    &sv->port[s]);
		if (err) {
			fprintf(stderr, "vnic server: side %s: switch port %u: %s\n", side_name[s],
				sv->sws->port[s], strerror(-err));
			return err;
		}
	}
	return 0;
}

static int server_build(struct split_server *sv, int sock, const struct vnic_topo_config *cfg)
{
	unsigned int s;
	int err;

	sv->ncpus = cfg->threads == 1 ? 1 : VNIC_TOPO_SIDES;
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = vnic_hv_split_recv(sock, &sv->hv[s], cfg->hv_max_ind_descs, &cfg->cost);
		if (err) {
			fprintf(stderr, "vnic server: side %s: attach: %s\n", side_name[s],
				strerror(-err));
			return err;
		}
	}
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = vnic_cpu_init(&sv->cpu[s], side_name[s], cfg->busy_poll_ns);
		if (err)
			return err;
		vnic_cpu_set_spin(&sv->cpu[s], cfg->spin);
	}
	if (sv->sws)
		err = server_wire_switch(sv);
	else
		err = server_wire_cable(sv, cfg);
	if (err)
		return err;
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		struct vnic_dev_config dc = cfg->dev;

		/* a switch port carries other stations' frames too: the filter is on */
		if (sv->sws) {
			dc.rx_filter = true;
			vnic_switch_port_mac(sv->sws->port[s], dc.mac);
		}
		err = vnic_dev_create(&sv->dev[s], sv->hv[s], sv->port[s], server_cpu(sv, s), &dc);
		if (err)
			return err;
		vnic_hv_split_set_doorbell(sv->hv[s], cfg->doorbell);
		err = vnic_hv_split_attach_cpu(sv->hv[s], server_cpu(sv, s));
		if (err)
			return err;
		/*
		 * A closed transport: the client lost the server before us and
		 * its driver waits, resetting, for a partner to say INIT.
		 */
		if (!vnic_hv_crq_is_open(sv->hv[s]))
			vnic_dev_announce(sv->dev[s]);
	}
	for (s = 0; s < sv->ncpus; s++) {
		err = vnic_cpu_start(&sv->cpu[s]);
		if (err)
			return err;
		sv->started = true;
	}
	return 0;
}

static void server_destroy(struct split_server *sv)
{
	unsigned int s;

	if (sv->started)
		for (s = 0; s < sv->ncpus; s++)
			vnic_cpu_stop(&sv->cpu[s]);
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		if (sv->dev[s])
			vnic_dev_destroy(sv->dev[s]);
		if (sv->hv[s])
			vnic_hv_destroy(sv->hv[s]);
	}
	if (sv->cable)
		vnic_cable_destroy(sv->cable);
	else
		for (s = 0; s < VNIC_TOPO_SIDES; s++)
			vnic_switch_port_close(sv->port[s]);
	for (s = 0; s < VNIC_TOPO_SIDES; s++)
		if (sv->cpu[s].name)
			vnic_cpu_fini(&sv->cpu[s]);
	free(sv->ctrs);
}

/* The CPU time of a cpu's thread, 0 without one: the client adds it to its work CPU. */
static uint64_t thread_cpu_ns(const struct vnic_cpu *cpu)
{
	const pthread_t *th = cpu->thread;
	struct timespec ts;
	clockid_t clk;

	if (!th || pthread_getcpuclockid(*th, &clk) || clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A side's switch port counters, as switch_a.tx_frames, ... */
static unsigned int switch_counters(struct split_server *sv, unsigned int s, unsigned int at)
{
	struct vnic_counter *out = sv->ctrs + at;
	char name[VNIC_COUNTER_NAME_MAX];
	unsigned int n, i;

	if (at >= SPLIT_MAX_COUNTERS)
		return at;
	n = vnic_switch_port_counters(sv->port[s], out, SPLIT_MAX_COUNTERS - at);
	if (n > SPLIT_MAX_COUNTERS - at)
		n = SPLIT_MAX_COUNTERS - at;
	for (i = 0; i < n; i++) {
		memcpy(name, out[i].name, sizeof(name));
		/* the port's names are short: the bound only keeps the compiler sure */
		snprintf(out[i].name, sizeof(out[i].name), "switch_%s.%.48s", side_name[s], name);
	}
	return at + n;
}

/*
 * Every counter of this process, named as the client's report shows them,
 * and each cpu thread's CPU time (srv_cpu_a.thread_cpu_ns).
 */
static unsigned int server_counters(struct split_server *sv)
{
	unsigned int at = 0, s;
	char prefix[32];

	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		snprintf(prefix, sizeof(prefix), "dev_%s.", side_name[s]);
		at = vnic_counters_dev(sv->dev[s], prefix, sv->ctrs, SPLIT_MAX_COUNTERS, at);
		snprintf(prefix, sizeof(prefix), "srv_hv_%s.", side_name[s]);
		at = vnic_counters_hv(sv->hv[s], prefix, sv->ctrs, SPLIT_MAX_COUNTERS, at);
		if (sv->cable)
			at = vnic_counters_cable(sv->cable, s, sv->ctrs, SPLIT_MAX_COUNTERS, at);
		else
			at = switch_counters(sv, s, at);
		snprintf(prefix, sizeof(prefix), "srv_cpu_%s.", side_name[s]);
		at = vnic_counters_cpu(&sv->cpu[s], prefix, sv->ctrs, SPLIT_MAX_COUNTERS, at);
		if (at < SPLIT_MAX_COUNTERS) {
			snprintf(sv->ctrs[at].name, sizeof(sv->ctrs[at].name),
				 "srv_cpu_%s.thread_cpu_ns", side_name[s]);
			sv->ctrs[at++].value = thread_cpu_ns(&sv->cpu[s]);
		}
	}
	return at < SPLIT_MAX_COUNTERS ? at : SPLIT_MAX_COUNTERS;
}

/*
 * Requests until STOP (0) or the client's end closes: it is gone without a
 * stop (killed, crashed), we stop too and say so (-ECONNRESET).
 */
static int serve(struct split_server *sv, int sock)
{
	struct split_msg m;
	unsigned int n;
	int err;

	for (;;) {
		err = io_full(sock, &m, sizeof(m), false);
		if (err)
			return err;
		if (m.magic != SPLIT_MAGIC) {
			answer(sock, -EPROTO, 0);
			return -EPROTO;
		}
		switch (m.type) {
		case SPLIT_REQ_COUNTERS:
			n = server_counters(sv);
			err = answer(sock, 0, n);
			if (!err)
				err = io_full(sock, sv->ctrs, n * sizeof(*sv->ctrs), true);
			if (err)
				return err;
			break;
		case SPLIT_REQ_STOP:
			return answer(sock, 0, 0);
		default:
			err = answer(sock, -EOPNOTSUPP, 0);
			if (err)
				return err;
		}
	}
}

static int serve_on(int sock, const struct vnic_topo_config *cfg,
		    const struct vnic_split_switch *sws)
{
	/* on the heap: its cpus are large, and the devices' configs are built beside it */
	size_t size = (sizeof(struct split_server) + VNIC_CACHELINE - 1) &
		      ~(size_t)(VNIC_CACHELINE - 1);
	struct split_server *sv = aligned_alloc(VNIC_CACHELINE, size);
	int err;

	if (!sv) {
		answer(sock, -ENOMEM, 0);
		return -ENOMEM;
	}
	memset(sv, 0, size);
	sv->sws = sws;
	sv->ctrs = calloc(SPLIT_MAX_COUNTERS, sizeof(*sv->ctrs));
	err = sv->ctrs ? server_build(sv, sock, cfg) : -ENOMEM;
	if (answer(sock, err, 0) || err)
		goto out;
	err = set_rcvtimeo(sock, 0);
	if (!err)
		err = serve(sv, sock);
out:
	server_destroy(sv);
	free(sv);
	return err;
}

int vnic_split_serve(int sock, const struct vnic_topo_config *cfg)
{
	return serve_on(sock, cfg, NULL);
}

/* --- a standing server's child (listen.c) ------------------------------------------- */

/*
 * The option groups whose settings live in the server process: the MTU,
 * the threads and their spin, the device, the cost model and the cable.
 * The driver's policies and the faults stay with the client (faults are
 * refused in split mode), and so does --pin: cores are the client's
 * business, the server's threads run where the scheduler puts them, as a
 * forked server's do.
 */
enum {
	CONFIG_GROUPS = 1u << VNIC_OPTG_VNIC | 1u << VNIC_OPTG_DEVICE | 1u << VNIC_OPTG_COST |
			1u << VNIC_OPTG_CABLE,
};

static bool config_name_sent(const char *name)
{
	return strcmp(name, "pin") != 0;
}

/* Printable ASCII only: what a client sent may end up in the server's messages. */
static bool config_line_printable(const char *at, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (at[i] < 0x20 || at[i] > 0x7e)
			return false;
	return true;
}

static bool config_name_ok(const char *name)
{
	const char *names[VNIC_TOPO_OPTS_MAX];
	unsigned int n = vnic_topo_opt_names(CONFIG_GROUPS, names, VNIC_TOPO_OPTS_MAX);

	if (!config_name_sent(name))
		return false;
	for (unsigned int i = 0; i < n && i < VNIC_TOPO_OPTS_MAX; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int vnic_split_config_apply(const char *text, size_t len, struct vnic_topo_config *cfg)
{
	char line[VNIC_SPLIT_CONFIG_LINE_MAX], *value;
	const char *at = text, *end = text + len;

	if (len > VNIC_SPLIT_CONFIG_MAX)
		return -EMSGSIZE;
	while (at < end) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = nl ? (size_t)(nl - at) : 0;
		int err;

		if (!nl || n >= sizeof(line) || !config_line_printable(at, n)) {
			fprintf(vnic_arg_err(), "vnic: server settings: a line is not \"NAME VALUE\"\n");
			return -EINVAL;
		}
		memcpy(line, at, n);
		line[n] = '\0';
		at = nl + 1;
		value = strchr(line, ' ');
		if (!value) {
			fprintf(vnic_arg_err(), "vnic: server settings: '%s' has no value\n", line);
			return -EINVAL;
		}
		*value++ = '\0';
		/* only what the server runs: a client does not set what it does not send */
		if (!config_name_ok(line)) {
			fprintf(vnic_arg_err(), "vnic: server settings: '%s' is not the server's\n",
				line);
			return -EINVAL;
		}
		err = vnic_topo_opt_set(line, value, cfg);
		if (err)
			return err == -ENOENT ? -EINVAL : err;
	}
	return 0;
}

int vnic_split_config_text(const struct vnic_topo_config *cfg, char *buf, size_t len)
{
	const char *names[VNIC_TOPO_OPTS_MAX];
	unsigned int n = vnic_topo_opt_names(CONFIG_GROUPS, names, VNIC_TOPO_OPTS_MAX);
	size_t at = 0;
	char value[96];

	for (unsigned int i = 0; i < n && i < VNIC_TOPO_OPTS_MAX; i++) {
		int w;

		if (!config_name_sent(names[i]) ||
		    vnic_topo_opt_show(names[i], cfg, value, sizeof(value)))
			continue;
		w = snprintf(buf + at, len - at, "%s %s\n", names[i], value);
		if (w < 0 || (size_t)w >= len - at)
			return -EMSGSIZE;
		at += (size_t)w;
	}
	return (int)at;
}

int vnic_split_greet(int sock, int rc)
{
	return answer(sock, rc, 0);
}

/*
 * The answer to the settings: on a switch, its n says 12 bytes follow,
 * the MACs of side a's and side b's ports, for the client's drivers.
 */
static int answer_config(int sock, const struct vnic_split_switch *sws)
{
	uint8_t mac[VNIC_TOPO_SIDES][6];
	int err;

	if (!sws)
		return answer(sock, 0, 0);
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++)
		vnic_switch_port_mac(sws->port[s], mac[s]);
	err = answer(sock, 0, sizeof(mac));
	return err ? err : io_full(sock, mac, sizeof(mac), true);
}

/* The client's settings: a CONFIG request and its text, applied to the defaults. */
static int take_config(int sock, struct vnic_topo_config *cfg, const struct vnic_split_switch *sws)
{
	struct split_msg m;
	char *text;
	int err;

	err = io_full(sock, &m, sizeof(m), false);
	if (err)
		return err;
	if (m.magic != SPLIT_MAGIC || m.type != SPLIT_REQ_CONFIG || m.rc) {
		answer(sock, -EPROTO, 0);
		return -EPROTO;
	}
	if (m.n > VNIC_SPLIT_CONFIG_MAX) {
		answer(sock, -EMSGSIZE, 0);
		return -EMSGSIZE;
	}
	/* exactly the size announced, so a read past the text is caught (ASan) */
	text = malloc(m.n ? m.n : 1);
	if (!text)
		return -ENOMEM;
	err = io_full(sock, text, m.n, false);
	if (!err) {
		vnic_topo_config_default(cfg);
		err = vnic_split_config_apply(text, m.n, cfg);
		/* the switch's slots are sized for its MTU */
		if (!err && sws && cfg->drv.mtu > VNIC_SWITCH_MTU) {
			fprintf(stderr, "vnic server: a client's --mtu %u: the switch carries %u\n",
				cfg->drv.mtu, VNIC_SWITCH_MTU);
			err = -EMSGSIZE;
		}
		if (err)
			answer(sock, err, 0);
		else
			err = answer_config(sock, sws);
	}
	free(text);
	return err;
}

int vnic_split_serve_client(int sock, const struct vnic_split_switch *sws)
{
	struct vnic_topo_config cfg;
	int err;

	/*
	 * A client that connects and then says nothing must not hold its child
	 * for ever: the settings and the attach come within the timeout; the
	 * requests after them may be far apart (a long run).
	 */
	err = set_rcvtimeo(sock, VNIC_SPLIT_TIMEOUT_MS);
	if (!err)
		err = vnic_split_greet(sock, 0);
	if (!err)
		err = take_config(sock, &cfg, sws);
	if (err)
		return err;
	return serve_on(sock, &cfg, sws);
}

/* --- the client's end ------------------------------------------------------------------ */

/*
 * --cable-tso with the devices in another process: a superframe takes tens
 * of rx buffers at once, and the driver that replenishes them runs in the
 * client, later than a driver on the device's cpu would: with the default
 * 512 entries per queue superframes waited for buffers three to five times
 * as often (rxN_lro_buf_waits) as with 2048 asked (1024 granted), and one
 * that waits out the device's retries (RX_BUF_WAITS, src/device/dev_int.h)
 * is dropped. The request is raised before the drivers are created; a
 * larger one is kept (docs/LINK.md, "--cable-tso").
 */
static void tso_rx_ring(struct vnic_topo_config *cfg)
{
	if (cfg->cable.tso && cfg->drv.rx_entries < VNIC_SPLIT_TSO_RX_ENTRIES)
		cfg->drv.rx_entries = VNIC_SPLIT_TSO_RX_ENTRIES;
}

int vnic_split_fork(struct vnic_split *c, struct vnic_topo_config *cfg)
{
	int sv[2];
	pid_t pid;
	int err;

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	tso_rx_ring(cfg);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	err = -pthread_mutex_init(&c->lock, NULL);
	if (err)
		goto err_close;
	/* what stdio holds would be written twice */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto err_destroy_lock;
	}
	if (!pid) {
		/*
		 * Nothing of the runner's but the socket (vnic link forks after
		 * its namespaces and route sockets exist): not one of them is
		 * held open for as long as the server runs.
		 */
		if (sv[1] > 3)
			close_range(3, (unsigned int)sv[1] - 1, 0);
		close_range((unsigned int)sv[1] + 1, ~0u, 0);
		_exit(vnic_split_serve(sv[1], cfg) ? 1 : 0);
	}
	close(sv[1]);
	c->sock = sv[0];
	c->pid = pid;
	return 0;

err_destroy_lock:
	pthread_mutex_destroy(&c->lock);
err_close:
	close(sv[0]);
	close(sv[1]);
	return err;
}

/* What a refusal in the greeting means, for the client's one line. */
static const char *refusal(int rc)
{
	switch (rc) {
	case -EACCES:
		return "refused: this user is not one the server allows (--allow-uid)";
	case -EUSERS:
		return "refused: the server serves as many clients as it takes (--max-clients)";
	default:
		return strerror(-rc);
	}
}

/*
 * A switched server's MACs after the settings' answer (n bytes: 0 or both
 * sides'), into mac and *has_mac.
 */
static int take_macs(int sock, uint32_t n, uint8_t mac[VNIC_TOPO_SIDES][6], bool *has_mac)
{
	int err;

	*has_mac = false;
	if (!n)
		return 0;
	if (n != VNIC_TOPO_SIDES * 6)
		return -EPROTO;
	err = io_full(sock, mac, VNIC_TOPO_SIDES * 6, false);
	if (err)
		return err;
	/* a station address, as CHANGE_MAC_ADDR asks of one: unicast, not zero */
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++)
		if ((mac[s][0] & 1) || !memcmp(mac[s], "\0\0\0\0\0\0", 6))
			return -EPROTO;
	*has_mac = true;
	return 0;
}

/*
 * Greeting, then the settings and their answer (with a switched server's
 * MACs), on sock. 0 or -errno; said on stderr when say (a first connect; a
 * reconnect says only its last).
 */
static int handshake(int sock, const char *path, const struct vnic_topo_config *cfg, bool say,
		     uint8_t mac[VNIC_TOPO_SIDES][6], bool *has_mac)
{
	struct split_msg m;
	char *text;
	int n, err;

	err = io_full(sock, &m, sizeof(m), false);
	if (!err && m.magic != SPLIT_MAGIC)
		err = -EPROTO;
	if (err) {
		if (say)
			fprintf(stderr, "vnic: --server %s: no greeting from the server: %s\n", path,
				strerror(err == -EAGAIN ? ETIMEDOUT : -err));
		return err;
	}
	if (m.rc) {
		if (say)
			fprintf(stderr, "vnic: --server %s: %s\n", path, refusal(m.rc));
		return m.rc;
	}
	text = malloc(VNIC_SPLIT_CONFIG_MAX);
	if (!text)
		return -ENOMEM;
	n = vnic_split_config_text(cfg, text, VNIC_SPLIT_CONFIG_MAX);
	err = n < 0 ? n : 0;
	m = (struct split_msg){ .magic = SPLIT_MAGIC, .type = SPLIT_REQ_CONFIG, .n = (uint32_t)n };
	if (!err)
		err = io_full(sock, &m, sizeof(m), true);
	if (!err)
		err = io_full(sock, text, (size_t)n, true);
	free(text);
	if (!err)
		err = io_full(sock, &m, sizeof(m), false);
	if (!err && m.magic != SPLIT_MAGIC)
		err = -EPROTO;
	if (!err && !m.rc)
		err = take_macs(sock, m.n, mac, has_mac);
	if (err) {
		if (say)
			fprintf(stderr, "vnic: --server %s: the settings: %s\n", path,
				strerror(err == -EAGAIN ? ETIMEDOUT : -err));
		return err;
	}
	if (m.rc && say)
		fprintf(stderr, "vnic: --server %s: the server refused the settings: %s\n", path,
			strerror(-m.rc));
	return m.rc;
}

/*
 * A socket connected to path, with the timeouts of the whole run: a server
 * that stops answering fails the run instead of hanging it (they bound
 * connect to a full backlog, every answer and every send; no answer takes
 * long). The fd, or -errno (said on stderr when say).
 */
static int connect_to(const char *path, bool say)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = set_timeo(fd, SO_SNDTIMEO, VNIC_SPLIT_TIMEOUT_MS);
	if (!err)
		err = set_rcvtimeo(fd, VNIC_SPLIT_TIMEOUT_MS);
	if (err)
		goto err_close;
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (say)
			fprintf(stderr, "vnic: --server %s: connect: %s\n", path,
				strerror(err == -EAGAIN ? ETIMEDOUT : -err));
		goto err_close;
	}
	return fd;

err_close:
	close(fd);
	return err;
}

int vnic_split_connect(struct vnic_split *c, const char *path, struct vnic_topo_config *cfg)
{
	struct sockaddr_un sa;
	int err;

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	tso_rx_ring(cfg);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "vnic: --server %s: the path is too long for a unix socket\n", path);
		return -ENAMETOOLONG;
	}
	err = -pthread_mutex_init(&c->lock, NULL);
	if (err)
		return err;
	c->sock = connect_to(path, true);
	if (c->sock < 0) {
		err = c->sock;
		goto err_destroy_lock;
	}
	err = handshake(c->sock, path, cfg, true, c->mac, &c->has_mac);
	if (err)
		goto err_close;
	return 0;

err_close:
	close(c->sock);
err_destroy_lock:
	c->sock = -1;
	pthread_mutex_destroy(&c->lock);
	return err;
}

/* Both sides' attach on sock, and the server's answer: 0 once its devices run. */
static int attach_on(int sock, struct vnic_hv *const hv[VNIC_TOPO_SIDES])
{
	struct split_msg m;
	int err;

	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = vnic_hv_split_send(sock, hv[s]);
		if (err)
			return err;
	}
	err = io_full(sock, &m, sizeof(m), false);
	if (err)
		return err;
	if (m.magic != SPLIT_MAGIC)
		return -EPROTO;
	return m.rc;
}

int vnic_split_attach(struct vnic_split *c, struct vnic_hv *const hv[VNIC_TOPO_SIDES])
{
	return attach_on(c->sock, hv);
}

int vnic_split_redial(const struct vnic_split *c, const char *path,
		      const struct vnic_topo_config *cfg, struct vnic_hv *const hv[VNIC_TOPO_SIDES],
		      const char **step)
{
	uint8_t mac[VNIC_TOPO_SIDES][6];
	bool has_mac;
	int fd, err;

	*step = "connect";
	fd = connect_to(path, false);
	if (fd < 0)
		return fd;
	*step = "the greeting and the settings";
	err = handshake(fd, path, cfg, false, mac, &has_mac);
	/*
	 * The drivers keep their MACs across the reset, and the workloads
	 * address their peers by them: a switch that gives other ones (other
	 * ports in a new server) would filter every frame.
	 */
	if (!err && (has_mac != c->has_mac || (has_mac && memcmp(mac, c->mac, sizeof(mac))))) {
		*step = "the MACs (the switch gave this client other ports)";
		err = -EADDRNOTAVAIL;
	}
	if (!err) {
		*step = "the attach";
		err = attach_on(fd, hv);
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int vnic_split_counters(struct vnic_split *c, struct vnic_counter *out, unsigned int max)
{
	uint64_t conn;

	return vnic_split_counters_conn(c, out, max, &conn);
}

int vnic_split_counters_conn(struct vnic_split *c, struct vnic_counter *out, unsigned int max,
			     uint64_t *conn)
{
	struct split_msg m = { .magic = SPLIT_MAGIC, .type = SPLIT_REQ_COUNTERS };
	struct vnic_counter skip;
	int err;

	pthread_mutex_lock(&c->lock);
	*conn = c->conn;
	err = io_full(c->sock, &m, sizeof(m), true);
	if (!err)
		err = io_full(c->sock, &m, sizeof(m), false);
	if (!err && (m.magic != SPLIT_MAGIC || m.n > SPLIT_MAX_COUNTERS))
		err = -EPROTO;
	if (!err)
		err = m.rc;
	for (uint32_t i = 0; !err && i < m.n; i++) {
		struct vnic_counter *dst = i < max ? &out[i] : &skip;

		err = io_full(c->sock, dst, sizeof(*dst), false);
		dst->name[sizeof(dst->name) - 1] = '\0';
	}
	pthread_mutex_unlock(&c->lock);
	return err ? err : (int)(m.n < max ? m.n : max);
}

int vnic_split_stop(struct vnic_split *c)
{
	struct split_msg m = { .magic = SPLIT_MAGIC, .type = SPLIT_REQ_STOP };
	int status = 0, err = 0;

	vnic_split_watch_free(c);
	if (c->sock < 0)
		return 0;
	pthread_mutex_lock(&c->lock);
	err = io_full(c->sock, &m, sizeof(m), true);
	if (!err)
		err = io_full(c->sock, &m, sizeof(m), false);
	pthread_mutex_unlock(&c->lock);
	close(c->sock);
	c->sock = -1;
	if (!c->pid) {
		/* a standing server's child: its answer is all we learn */
		pthread_mutex_destroy(&c->lock);
		return err ? err : m.rc;
	}
	if (waitpid(c->pid, &status, 0) < 0)
		return err ? err : -errno;
	/* a server that died mid-run explains a run that stalled: say so */
	if (WIFSIGNALED(status))
		fprintf(stderr, "vnic: --split: the server process was killed by signal %d\n",
			WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "vnic: --split: the server process exited with status %d\n",
			WEXITSTATUS(status));
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -EIO;
	pthread_mutex_destroy(&c->lock);
	return err;
}
