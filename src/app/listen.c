// SPDX-License-Identifier: MIT
/*
 * `vnic server --listen PATH`: a standing server that many `vnic bench
 * --server PATH` clients attach to (docs/ARCHITECTURE.md section 11). The
 * parent only listens, admits and counts; each admitted client gets a child
 * process of its own that runs what the forked server of --split runs
 * (server.c), so a client that dies or misbehaves takes down its child
 * alone: its mappings go with that process, its frames with its cable, and
 * the other clients share nothing with it. With --switch they share one
 * switch (src/port/switch.c) made here before any fork: the parent gives
 * each child two ports and frees them once it has reaped the child.
 */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"

enum {
	OPT_LISTEN = 256, OPT_ALLOW_UID, OPT_MAX_CLIENTS, OPT_NAME, OPT_NO_CTL, OPT_SWITCH,
	/* a child's exit status: the client went away without a stop */
	CHILD_EXIT_GONE = 3,
	LISTEN_BACKLOG = 64,
};

static const struct option own_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "allow-uid", required_argument, NULL, OPT_ALLOW_UID },
	{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "no-ctl", no_argument, NULL, OPT_NO_CTL },
	{ "switch", no_argument, NULL, OPT_SWITCH },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnic server --listen PATH [options]\n"
		"a standing server: the devices and the cable of each 'vnic bench --server PATH'\n"
		"or 'vnic link --server PATH' client, in a child process per client\n"
		"(docs/ARCHITECTURE.md section 11)\n"
		"  --listen PATH       the unix socket to listen on, created mode 0600; a stale\n"
		"                      one nobody answers on is replaced, and it is removed at exit\n"
		"  --allow-uid UID     a user whose clients are served (again for more; default:\n"
		"                      the server's own user only)\n"
		"  --max-clients N     clients served at once, 1..%u (%u); more are refused\n"
		"  --switch            every client's two devices are ports of one learning\n"
		"                      switch, each with a MAC of its own (MTU %u; at most\n"
		"                      %u clients), instead of a cable per client\n"
		"  --json              the client counts at exit as one JSON object on stdout\n"
		"  --quiet             no line per client on stderr\n"
		"control socket (docs/STATS.md; 'vnic stats' reads the client counts):\n"
		"  --name NAME         instance name (server-PID)   --no-ctl  no control socket\n",
		VNIC_SERVER_MAX_CLIENTS, VNIC_SERVER_DEFAULT_CLIENTS, VNIC_SWITCH_MTU,
		VNIC_SWITCH_MAX_PORTS / 2);
}

static int parse_opt(void *ctx, int c, const char *a)
{
	struct vnic_server_opts *o = ctx;
	uint32_t v;
	int err = 0;

	switch (c) {
	case OPT_LISTEN:
		err = vnic_arg_path("--listen", a);
		o->listen = a;
		break;
	case OPT_ALLOW_UID:
		if (o->nallow == VNIC_SERVER_MAX_UIDS) {
			fprintf(stderr, "vnic server: --allow-uid: at most %d users\n",
				VNIC_SERVER_MAX_UIDS);
			return -EINVAL;
		}
		/* (uid_t)-1 means "no change" to the kernel: never a user */
		err = vnic_arg_u32("--allow-uid", a, 0, UINT32_MAX - 1, &v);
		o->allow[o->nallow++] = (uid_t)v;
		break;
	case OPT_MAX_CLIENTS:
		err = vnic_arg_u32("--max-clients", a, 1, VNIC_SERVER_MAX_CLIENTS, &o->max_clients);
		break;
	case OPT_NAME:
		err = vnic_arg_ctl_name("--name", a);
		o->ctl_name = a;
		break;
	case OPT_NO_CTL:
		o->ctl = false;
		break;
	case OPT_SWITCH:
		o->switched = true;
		break;
	default:
		err = -EINVAL;
	}
	return err;
}

static const struct vnic_opts_cmd server_cmd = {
	"vnic server", own_opts, 0, usage, offsetof(struct vnic_server_opts, quiet),
	offsetof(struct vnic_server_opts, json), parse_opt,
};

int vnic_server_parse(int argc, char **argv, struct vnic_server_opts *o)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->max_clients = VNIC_SERVER_DEFAULT_CLIENTS;
	o->ctl = true;
	err = vnic_opts_parse(&server_cmd, argc, argv, o);
	if (err)
		return err;
	if (!o->listen) {
		fputs("vnic server: --listen PATH is needed\n", stderr);
		return -EINVAL;
	}
	if (!o->nallow)
		o->allow[o->nallow++] = getuid();
	/* two ports per client, and a switch has at most VNIC_SWITCH_MAX_PORTS */
	if (o->switched && o->max_clients > VNIC_SWITCH_MAX_PORTS / 2) {
		fprintf(stderr, "vnic server: --switch: at most %d clients (--max-clients %u)\n",
			VNIC_SWITCH_MAX_PORTS / 2, o->max_clients);
		return -EINVAL;
	}
	return vnic_opts_check_ctl("vnic server", o->ctl_name, o->ctl);
}

/*
 * Root is not let in unless named: it needs no socket of ours to reach the
 * server (it may attach a debugger), so admitting it buys nothing, and
 * naming it keeps the rule one list with no exception to remember.
 */
bool vnic_server_uid_allowed(const struct vnic_server_opts *o, uid_t uid)
{
	for (unsigned int i = 0; i < o->nallow; i++)
		if (o->allow[i] == uid)
			return true;
	return false;
}

/* --- the listening socket ------------------------------------------------------------- */

struct listener {
	struct vnic_server_opts *o;
	int lfd, sfd;
	dev_t dev;			/* the socket file we made, to remove only ours */
	ino_t ino;
	sigset_t old_mask;
	struct vnic_ctl *ctl;
	struct vnic_switch *sw;		/* --switch; NULL: a cable per client */
	struct child {
		pid_t pid;		/* 0: a free slot */
		uint64_t id;
		uid_t uid;
	} *kids;
	/* written by the main thread only, read by the control socket's */
	struct vnic_server_counts {
		uint64_t accepted;
		uint64_t refused_uid;
		uint64_t refused_max_clients;
		uint64_t ended;
		uint64_t ended_abnormal;
		uint64_t active;
	} n;
};

/* 0: nobody answers at sa (the file, if any, is not a live socket), or -errno. */
static int check_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, err = 0;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) || errno == EAGAIN)
		err = -EADDRINUSE;	/* EAGAIN: a full backlog, so somebody listens */
	else if (errno == ECONNREFUSED && unlink(sa->sun_path) && errno != ENOENT)
		err = -errno;
	else if (errno != ECONNREFUSED)
		err = -errno;
	close(fd);
	return err;
}

static int listen_open(struct listener *l)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = l->o->listen;
	struct stat st;
	mode_t mask;
	int err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	err = check_stale(&sa);
	if (err)
		return err;
	l->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->lfd < 0)
		return -errno;
	/* mode 0600 from the start: there is no moment another user may connect */
	mask = umask(0177);
	err = bind(l->lfd, (const struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(mask);
	if (err)
		goto err_close;
	if (lstat(path, &st) || listen(l->lfd, LISTEN_BACKLOG)) {
		err = -errno;
		goto err_unlink;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	return 0;

err_unlink:
	unlink(path);
err_close:
	close(l->lfd);
	l->lfd = -1;
	return err;
}

/* Removes the socket file if it is still the one we made. */
static void listen_close(struct listener *l)
{
	struct stat st;

	if (l->lfd < 0)
		return;
	if (!lstat(l->o->listen, &st) && st.st_dev == l->dev && st.st_ino == l->ino)
		unlink(l->o->listen);
	close(l->lfd);
	l->lfd = -1;
}

/* --- clients ------------------------------------------------------------------------- */

static void say(const struct listener *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct listener *l, const char *fmt, ...)
{
	va_list ap;

	if (l->o->quiet)
		return;
	va_start(ap, fmt);
	fputs("vnic server: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Closes every descriptor from 3 up but keep[] (ascending, n of them). */
static void close_but(const int *keep, unsigned int n)
{
	unsigned int from = 3;

	for (unsigned int i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from)
			close_range(from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	close_range(from, ~0u, 0);
}

/* A switch's ports for slot k's child: two in a row. */
static struct vnic_split_switch child_ports(const struct listener *l, const struct child *k)
{
	unsigned int i = (unsigned int)(k - l->kids);

	return (struct vnic_split_switch){ .sw = l->sw, .port = { 2 * i, 2 * i + 1 } };
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The child: one client's devices and cable (or switch ports), then exit. Never returns. */
static void child_run(const struct listener *l, const struct child *k, int sock, pid_t parent)
{
	int keep[VNIC_SWITCH_MAX_PORTS + 1];
	struct vnic_split_switch sws;
	unsigned int n = 0;
	int err;

	/* the parent ends its children: when it dies, so do they */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	/*
	 * Nothing of the parent's but the client's socket: not the listening
	 * socket, and not a connection the control socket's thread was
	 * answering, whose client waits for its close (a copy here would hold
	 * it open for as long as this child runs). On a switch, its doorbells
	 * stay too: any child may ring any port's.
	 */
	if (l->sw)
		n = vnic_switch_fds(l->sw, keep, VNIC_SWITCH_MAX_PORTS);
	keep[n++] = sock;
	qsort(keep, n, sizeof(keep[0]), cmp_int);
	close_but(keep, n);
	/* Ctrl-C reaches the whole process group; the parent decides for its children */
	signal(SIGINT, SIG_IGN);
	sigprocmask(SIG_SETMASK, &l->old_mask, NULL);
	sws = child_ports(l, k);
	err = vnic_split_serve_client(sock, l->sw ? &sws : NULL);
	_exit(!err ? 0 : err == -ECONNRESET ? CHILD_EXIT_GONE : 1);
}

static struct child *free_slot(struct listener *l)
{
	for (uint32_t i = 0; i < l->o->max_clients; i++)
		if (!l->kids[i].pid)
			return &l->kids[i];
	return NULL;
}

static void ports_claim(struct listener *l, const struct child *k)
{
	struct vnic_split_switch sws = child_ports(l, k);

	if (!l->sw)
		return;
	/* a slot's ports are released when its child is reaped: free again here */
	for (unsigned int s = 0; s < 2; s++)
		vnic_switch_port_claim(l->sw, sws.port[s]);
}

/* The child is reaped: its MACs are forgotten, what was queued to it dropped. */
static void ports_release(struct listener *l, const struct child *k)
{
	struct vnic_split_switch sws = child_ports(l, k);

	if (!l->sw)
		return;
	for (unsigned int s = 0; s < 2; s++)
		vnic_switch_port_release(l->sw, sws.port[s]);
}

static void refuse(int sock, int rc)
{
	/* 16 bytes into a new socket's empty buffer: this does not block */
	vnic_split_greet(sock, rc);
	close(sock);
}

static void admit(struct listener *l)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct child *k;
	pid_t pid, self;
	int sock;

	sock = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0) {
		if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
			return;	/* the client gave up already: poll again */
		/*
		 * Out of descriptors or memory: the connection stays queued and
		 * poll would report it at once again; a pause keeps this loop
		 * from spinning until a child ends and frees some.
		 */
		say(l, "accept: %s", strerror(errno));
		usleep(100 * 1000);
		return;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		vnic_ctr_inc(&l->n.refused_uid);
		say(l, "refused a client: its credentials: %s", strerror(errno));
		refuse(sock, -EACCES);
		return;
	}
	if (!vnic_server_uid_allowed(l->o, cred.uid)) {
		vnic_ctr_inc(&l->n.refused_uid);
		say(l, "refused a client of uid %ld: not allowed", (long)cred.uid);
		refuse(sock, -EACCES);
		return;
	}
	k = free_slot(l);
	if (!k) {
		vnic_ctr_inc(&l->n.refused_max_clients);
		say(l, "refused a client of uid %ld: %u clients already", (long)cred.uid,
		    l->o->max_clients);
		refuse(sock, -EUSERS);
		return;
	}
	/*
	 * What stdio holds would be written twice. The control socket's thread
	 * does not exist in the child, which never touches it (glibc keeps
	 * malloc and stdio usable in a child forked from a threaded process).
	 */
	fflush(NULL);
	/* the child's ports are taken before it runs: it finds them its own */
	ports_claim(l, k);
	self = getpid();
	pid = fork();
	if (!pid)
		child_run(l, k, sock, self);
	close(sock);
	if (pid < 0) {
		say(l, "fork: %s", strerror(errno));
		ports_release(l, k);
		return;
	}
	vnic_ctr_inc(&l->n.accepted);
	vnic_ctr_inc(&l->n.active);
	*k = (struct child){ .pid = pid, .id = vnic_ctr_read(&l->n.accepted), .uid = cred.uid };
	say(l, "client %" PRIu64 " (uid %ld, pid %ld) in child %ld", k->id, (long)cred.uid,
	    (long)cred.pid, (long)pid);
}

static void ended(struct listener *l, pid_t pid, int status)
{
	struct child *k = NULL;

	for (uint32_t i = 0; i < l->o->max_clients && !k; i++)
		if (l->kids[i].pid == pid)
			k = &l->kids[i];
	if (!k)
		return;
	vnic_ctr_set(&l->n.active, vnic_ctr_read(&l->n.active) - 1);
	if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		vnic_ctr_inc(&l->n.ended);
		say(l, "client %" PRIu64 " ended", k->id);
	} else {
		vnic_ctr_inc(&l->n.ended_abnormal);
		if (WIFSIGNALED(status))
			say(l, "client %" PRIu64 " ended abnormally: its child was killed by signal %d",
			    k->id, WTERMSIG(status));
		else if (WEXITSTATUS(status) == CHILD_EXIT_GONE)
			say(l, "client %" PRIu64 " ended abnormally: it went away without a stop",
			    k->id);
		else
			say(l, "client %" PRIu64 " ended abnormally: its child exited with status %d",
			    k->id, WEXITSTATUS(status));
	}
	ports_release(l, k);
	k->pid = 0;
}

static void reap(struct listener *l, int flags)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, flags)) > 0)
		ended(l, pid, status);
}

/* --- counts -------------------------------------------------------------------------- */

#define COUNT(f) { "server." #f, offsetof(struct vnic_server_counts, f) }
static const struct {
	const char *name;
	size_t off;
} counts[] = {
	COUNT(accepted), COUNT(refused_uid), COUNT(refused_max_clients),
	COUNT(ended),	 COUNT(ended_abnormal), COUNT(active),
};
#undef COUNT

enum { NCOUNTS = sizeof(counts) / sizeof(counts[0]) };

static uint64_t count_of(const struct listener *l, unsigned int i)
{
	return vnic_ctr_read((const uint64_t *)((const char *)&l->n + counts[i].off));
}

/* --switch: the parent's share of the switch's counts (the ports' are their children's). */
static const char *const switch_names[] = {
	"switch.ports_claimed", "switch.ports_released", "switch.macs_forgotten",
	"switch.dead_frames",
};

enum { NSWITCH = sizeof(switch_names) / sizeof(switch_names[0]) };

static void switch_values(const struct listener *l, uint64_t v[NSWITCH])
{
	struct vnic_switch_stats st;

	vnic_switch_stats(l->sw, &st);
	v[0] = st.ports_claimed;
	v[1] = st.ports_released;
	v[2] = st.macs_forgotten;
	v[3] = st.dead_frames;
}

/* The control socket's thread: relaxed reads of the main thread's counts. */
static unsigned int collect(void *ctx, struct vnic_counter *out, unsigned int max)
{
	const struct listener *l = ctx;
	uint64_t v[NSWITCH];
	unsigned int i, n = 0;

	for (i = 0; i < NCOUNTS; i++)
		vnic_counter_put(out, max, &n, counts[i].name, count_of(l, i));
	if (!l->sw)
		return n;
	switch_values(l, v);
	for (i = 0; i < NSWITCH; i++)
		vnic_counter_put(out, max, &n, switch_names[i], v[i]);
	return n;
}

static void report(const struct listener *l)
{
	uint64_t v[NSWITCH];
	struct vnic_json j;

	if (l->sw)
		switch_values(l, v);
	if (l->o->json) {
		vnic_json_begin(&j, stdout);
		for (unsigned int i = 0; i < NCOUNTS; i++)
			vnic_json_u64(&j, counts[i].name + strlen("server."), count_of(l, i));
		for (unsigned int i = 0; l->sw && i < NSWITCH; i++)
			vnic_json_u64(&j, switch_names[i] + strlen("switch."), v[i]);
		vnic_json_end(&j);
		return;
	}
	fprintf(stderr,
		"vnic server: clients: %" PRIu64 " accepted, %" PRIu64 " refused (uid), %" PRIu64
		" refused (max clients), %" PRIu64 " ended, %" PRIu64 " ended abnormally\n",
		count_of(l, 0), count_of(l, 1), count_of(l, 2), count_of(l, 3), count_of(l, 4));
	if (l->sw)
		fprintf(stderr,
			"vnic server: switch: %" PRIu64 " MACs forgotten, %" PRIu64
			" frames queued to ended clients dropped\n",
			v[2], v[3]);
}

/* --- the command --------------------------------------------------------------------- */

/* Until SIGINT or SIGTERM: admit clients, reap children. 0 or -errno. */
static int run(struct listener *l)
{
	struct signalfd_siginfo si;
	struct pollfd p[2] = {
		{ .fd = l->lfd, .events = POLLIN },
		{ .fd = l->sfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents & POLLIN) {
			if (read(l->sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM)
				return 0;
			reap(l, WNOHANG);	/* SIGCHLD: signals merge, so every child that ended */
		}
		if (p[0].revents & POLLIN)
			admit(l);
	}
}

/* The children that still serve a client are ended with it: their clients see the socket close. */
static void stop_children(struct listener *l)
{
	for (uint32_t i = 0; i < l->o->max_clients; i++)
		if (l->kids[i].pid)
			kill(l->kids[i].pid, SIGTERM);
	reap(l, 0);
}

static int setup(struct listener *l)
{
	char name[VNIC_CTL_NAME_MAX];
	sigset_t mask;
	int err;

	l->kids = calloc(l->o->max_clients, sizeof(*l->kids));
	if (!l->kids)
		return -ENOMEM;
	if (l->o->switched) {
		/* before any fork: every child inherits the mapping and the doorbells */
		struct vnic_switch_cfg sc = { .ports = 2 * l->o->max_clients };

		err = vnic_switch_create(&l->sw, &sc);
		if (err) {
			fprintf(stderr, "vnic server: --switch: %s\n", strerror(-err));
			goto err_free;
		}
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, &l->old_mask)) {
		err = -errno;
		goto err_free;
	}
	l->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (l->sfd < 0) {
		err = -errno;
		goto err_unblock;
	}
	err = listen_open(l);
	if (err) {
		fprintf(stderr, "vnic server: --listen %s: %s\n", l->o->listen,
			err == -EADDRINUSE ? "a server already answers there"
			: err == -EEXIST   ? "a file that is not a socket is there; not replaced"
					   : strerror(-err));
		goto err_close_sfd;
	}
	if (l->o->ctl) {
		if (l->o->ctl_name)
			snprintf(name, sizeof(name), "%s", l->o->ctl_name);
		else
			vnic_ctl_default_name(name, sizeof(name), "server");
		err = vnic_ctl_serve_start(&l->ctl, name, collect, NULL, l);
		if (err) {
			fprintf(stderr, "vnic server: control socket %s: %s\n", name,
				strerror(-err));
			goto err_close_listen;
		}
	}
	return 0;

err_close_listen:
	listen_close(l);
err_close_sfd:
	close(l->sfd);
err_unblock:
	sigprocmask(SIG_SETMASK, &l->old_mask, NULL);
err_free:
	vnic_switch_destroy(l->sw);
	free(l->kids);
	return err;
}

int vnic_cmd_server(int argc, char **argv)
{
	struct vnic_server_opts o;
	struct listener l = { .o = &o, .lfd = -1, .sfd = -1 };
	int err;

	err = vnic_server_parse(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	if (setup(&l))
		return 1;
	say(&l, "listening on %s, at most %u clients%s%s%s", o.listen, o.max_clients,
	    l.sw ? ", on one switch" : "", l.ctl ? "; control socket " : "",
	    l.ctl ? vnic_ctl_serve_path(l.ctl) : "");
	err = run(&l);
	/* no new client from here on, and the file goes first */
	listen_close(&l);
	stop_children(&l);
	vnic_ctl_serve_stop(l.ctl);
	report(&l);
	close(l.sfd);
	sigprocmask(SIG_SETMASK, &l.old_mask, NULL);
	vnic_switch_destroy(l.sw);
	free(l.kids);
	if (err)
		fprintf(stderr, "vnic server: poll: %s\n", strerror(-err));
	return err ? 1 : 0;
}
