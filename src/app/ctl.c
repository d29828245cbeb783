// SPDX-License-Identifier: MIT
/*
 * The control socket: a running `vnic bench` or `vnic link` answers on a UNIX
 * stream socket, one request line and one answer per connection
 * (docs/STATS.md). The server is one thread sleeping in poll() on the
 * listener and up to CTL_MAX_CLIENTS connections at once, each with its own
 * deadline, so a client that connects and says nothing delays nobody else;
 * no thread per client. It only reads counters, which their owners allow
 * from any thread, so it never touches the datapath.
 *
 * Whatever a client sends (nothing, too much, binary, a request it never
 * finishes), the server answers "error: ..." or drops it at its deadline
 * (VNIC_CTL_TIMEOUT_MS after it connected), counts it, and goes on. The
 * request line itself is read by vnic_ctl_parse_request, a pure function.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "app.h"

enum {
	CTL_MAX_CLIENTS = 64,	/* served at once; more wait in the listen backlog */
	CTL_LINE_BUF = VNIC_CTL_LINE_MAX + 2,	/* the longest line, a CR and the newline */
};

/* A connection: reading its request line until its deadline, then answering until the next. */
struct ctl_client {
	int fd;			/* -1: a free slot */
	uint64_t deadline_ms;
	size_t got;
	char line[CTL_LINE_BUF];
	char *out;		/* the answer; NULL while reading the line */
	size_t out_len, out_off;
};

struct vnic_ctl {
	pthread_t thread;
	int lfd;
	int stop_fd;
	char name[VNIC_CTL_NAME_MAX];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev; /* the socket file we bound, to remove only ours */
	ino_t ino;
	vnic_ctl_collect_fn collect;
	struct vnic_ctl_ops ops;	/* show and set; may be NULL each */
	void *ctx;
	struct vnic_counter *buf; /* server thread only */
	unsigned int cap;
	uint64_t start_ns;
	struct ctl_client clients[CTL_MAX_CLIENTS];	/* server thread only */
	uint64_t accept_pause_ms;	/* out of fds: the listener rests until then */
	/* written by the server thread, read anywhere */
	_Atomic uint64_t requests;
	_Atomic uint64_t bad_requests;
	_Atomic uint64_t timeouts;
};

/* The answer to anything the server cannot take; the reasons are stable (tests match them). */
#define ERR_EMPTY    "error: empty request"
#define ERR_LONG     "error: request longer than 256 bytes"
#define ERR_BYTES    "error: request has control or non-ASCII bytes"
#define ERR_UNKNOWN  "error: unknown command (ping, stats, stats json, show, show json, set KEY VALUE...)"
#define ERR_NO_SHOW  "error: this instance has no settings to show"
#define ERR_NO_SET   "error: this instance cannot change settings while it runs"
#define ERR_TIMEOUT  "error: no request line within 1 s"
#define ERR_INTERNAL "error: out of memory"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int vnic_ctl_dir(char *buf, size_t len, bool create)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, len, "%s/vnic", xdg);
	else
		n = snprintf(buf, len, "/run/vnic");
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (!create)
		return 0;
	/* Only the user who runs vnic may connect: the directory, not the socket, says so. */
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	if (stat(buf, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

bool vnic_ctl_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || name[0] == '.')
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (i + 1 >= VNIC_CTL_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

int vnic_ctl_path(const char *name, char *buf, size_t len)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int err, n;

	if (!vnic_ctl_name_valid(name))
		return -EINVAL;
	err = vnic_ctl_dir(dir, sizeof(dir), false);
	if (err)
		return err;
	n = snprintf(buf, len, "%s/%s.sock", dir, name);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

void vnic_ctl_default_name(char *buf, size_t len, const char *prog)
{
	snprintf(buf, len, "%s-%ld", prog, (long)getpid());
}

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path));
	return 0;
}

/* 0 when a server listens at path, -ECONNREFUSED for a stale file, -ENOENT for none. */
static int probe(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		/* EAGAIN: a full backlog, so somebody does listen */
		err = errno == EAGAIN ? 0 : -errno;
	else
		/* A proper request, so the live server does not count a bad one. */
		send(fd, "ping\n", 5, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	return err;
}

/* ---------------------------------------------------------------------------
 * The request line
 * ------------------------------------------------------------------------- */

enum vnic_ctl_req vnic_ctl_parse_request(const char *buf, size_t len, bool eof, const char **why)
{
	const char *nl = memchr(buf, '\n', len);
	size_t end;

	*why = NULL;
	if (nl) {
		end = (size_t)(nl - buf);
	} else if (len >= CTL_LINE_BUF) {
		*why = ERR_LONG;
		return VNIC_CTL_REQ_BAD;
	} else if (!eof) {
		return VNIC_CTL_REQ_MORE;
	} else {
		end = len;
	}
	if (end && buf[end - 1] == '\r')
		end--;
	if (end > VNIC_CTL_LINE_MAX)
		*why = ERR_LONG;
	else if (!end)
		*why = ERR_EMPTY;
	for (size_t i = 0; i < end && !*why; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
			*why = ERR_BYTES;
	if (*why)
		return VNIC_CTL_REQ_BAD;
	if (end == 4 && !memcmp(buf, "ping", 4))
		return VNIC_CTL_REQ_PING;
	if (end == 5 && !memcmp(buf, "stats", 5))
		return VNIC_CTL_REQ_STATS;
	if (end == 10 && !memcmp(buf, "stats json", 10))
		return VNIC_CTL_REQ_STATS_JSON;
	if (end == 4 && !memcmp(buf, "show", 4))
		return VNIC_CTL_REQ_SHOW;
	if (end == 9 && !memcmp(buf, "show json", 9))
		return VNIC_CTL_REQ_SHOW_JSON;
	/* "set" and at least one word: the instance checks the words */
	if (end > 4 && !memcmp(buf, "set ", 4))
		return VNIC_CTL_REQ_SET;
	*why = ERR_UNKNOWN;
	return VNIC_CTL_REQ_BAD;
}

/* The words of a "set" line, NUL-terminated in a copy: what follows "set ". */
static char *set_args(const char *line, size_t got)
{
	const char *nl = memchr(line, '\n', got);
	size_t end = nl ? (size_t)(nl - line) : got;

	if (end && line[end - 1] == '\r')
		end--;
	return strndup(line + 4, end - 4);
}

/* ---------------------------------------------------------------------------
 * The answers
 * ------------------------------------------------------------------------- */

/* Collects into the server's buffer, growing it when the source has more. */
static unsigned int collect(struct vnic_ctl *c)
{
	unsigned int n = 0;

	for (int tries = 0; tries < 3; tries++) {
		n = c->collect(c->ctx, c->buf, c->cap);
		if (n <= c->cap)
			return n;
		struct vnic_counter *nb = realloc(c->buf, (n + 64u) * sizeof(*nb));

		if (!nb)
			break;
		c->buf = nb;
		c->cap = n + 64u;
	}
	return n < c->cap ? n : c->cap;
}

static void own_counters(const struct vnic_ctl *c, struct vnic_counter *out)
{
	snprintf(out[0].name, sizeof(out[0].name), "ctl.requests");
	out[0].value = atomic_load_explicit(&c->requests, memory_order_relaxed);
	snprintf(out[1].name, sizeof(out[1].name), "ctl.bad_requests");
	out[1].value = atomic_load_explicit(&c->bad_requests, memory_order_relaxed);
	snprintf(out[2].name, sizeof(out[2].name), "ctl.timeouts");
	out[2].value = atomic_load_explicit(&c->timeouts, memory_order_relaxed);
}

enum { OWN_COUNTERS = 3 };

static void stats_text(struct vnic_ctl *c, FILE *f)
{
	struct vnic_counter own[OWN_COUNTERS];
	unsigned int n = collect(c), i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 "\n", c->buf[i].name, c->buf[i].value);
	own_counters(c, own);
	for (i = 0; i < OWN_COUNTERS; i++)
		fprintf(f, "%s %" PRIu64 "\n", own[i].name, own[i].value);
}

static void stats_json(struct vnic_ctl *c, FILE *f)
{
	struct vnic_counter own[OWN_COUNTERS];
	unsigned int n = collect(c), i;
	struct vnic_json j;

	vnic_json_begin(&j, f);
	vnic_json_str(&j, "name", c->name);
	vnic_json_u64(&j, "pid", (uint64_t)getpid());
	vnic_json_double(&j, "uptime_s", (double)(vnic_now_ns() - c->start_ns) / 1e9);
	vnic_json_object(&j, "counters");
	for (i = 0; i < n; i++)
		vnic_json_u64(&j, c->buf[i].name, c->buf[i].value);
	own_counters(c, own);
	for (i = 0; i < OWN_COUNTERS; i++)
		vnic_json_u64(&j, own[i].name, own[i].value);
	vnic_json_close(&j);
	vnic_json_end(&j);
}

/* A counter of the server's own: one writer (the server thread), read anywhere. */
static void count(_Atomic uint64_t *ctr)
{
	atomic_store_explicit(ctr, atomic_load_explicit(ctr, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The whole answer to req, built before any of it is sent: a slow client never holds a half-read snapshot. */
static char *build_answer(struct vnic_ctl *c, const struct ctl_client *cl, enum vnic_ctl_req req,
			  const char *why, size_t *len)
{
	char *out = NULL, *args;
	FILE *f;

	*len = 0;
	if ((req == VNIC_CTL_REQ_SHOW || req == VNIC_CTL_REQ_SHOW_JSON) && !c->ops.show) {
		req = VNIC_CTL_REQ_BAD;
		why = ERR_NO_SHOW;
	} else if (req == VNIC_CTL_REQ_SET && !c->ops.set) {
		req = VNIC_CTL_REQ_BAD;
		why = ERR_NO_SET;
	}
	if (req == VNIC_CTL_REQ_BAD || req == VNIC_CTL_REQ_PING) {
		if (req == VNIC_CTL_REQ_BAD)
			count(&c->bad_requests);
		if (asprintf(&out, "%s\n", req == VNIC_CTL_REQ_BAD ? why : "pong") < 0)
			return NULL;
		*len = strlen(out);
		return out;
	}
	f = open_memstream(&out, len);
	if (!f)
		return NULL;
	switch (req) {
	case VNIC_CTL_REQ_STATS_JSON:
		stats_json(c, f);
		break;
	case VNIC_CTL_REQ_SHOW:
	case VNIC_CTL_REQ_SHOW_JSON:
		c->ops.show(c->ctx, f, req == VNIC_CTL_REQ_SHOW_JSON);
		break;
	case VNIC_CTL_REQ_SET:
		args = cl ? set_args(cl->line, cl->got) : NULL;
		/* Refused settings are bad requests too: counted like any other. */
		if (!args || c->ops.set(c->ctx, args, f))
			count(&c->bad_requests);
		free(args);
		break;
	default:
		stats_text(c, f);
		break;
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---------------------------------------------------------------------------
 * Serving clients: one thread, up to CTL_MAX_CLIENTS at once, each with its
 * own deadline, so a client that says nothing delays nobody else.
 * ------------------------------------------------------------------------- */

/*
 * Closing a UNIX socket with unread input resets the peer, which could then
 * lose the answer it was just sent: take what is already there first.
 */
static void client_close(struct ctl_client *cl)
{
	char junk[1024];

	shutdown(cl->fd, SHUT_WR);
	for (int i = 0; i < 64; i++)
		if (recv(cl->fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
	close(cl->fd);
	free(cl->out);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
}

/* Sends what the socket takes now; closes the client when all is sent or on an error. */
static void client_write(struct ctl_client *cl)
{
	while (cl->out_off < cl->out_len) {
		ssize_t n = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			cl->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;		/* POLLOUT until the deadline */
		break;			/* the client went away: nothing more to do */
	}
	client_close(cl);
}

/* The line is complete (or refused): the answer, and a new deadline to take it. */
static void client_answer(struct vnic_ctl *c, struct ctl_client *cl, enum vnic_ctl_req req,
			  const char *why)
{
	cl->out = build_answer(c, cl, req, why, &cl->out_len);
	if (!cl->out) {
		cl->out = build_answer(c, cl, VNIC_CTL_REQ_BAD, ERR_INTERNAL, &cl->out_len);
		if (!cl->out) {
			client_close(cl);
			return;
		}
	}
	cl->deadline_ms = mono_ms() + VNIC_CTL_TIMEOUT_MS;
	client_write(cl);
}

/* Reads what the client has sent, and answers once the line is there. */
static void client_read(struct vnic_ctl *c, struct ctl_client *cl)
{
	const char *why;
	enum vnic_ctl_req req;
	bool eof = false;

	while (cl->got < sizeof(cl->line)) {
		ssize_t n = recv(cl->fd, cl->line + cl->got, sizeof(cl->line) - cl->got,
				 MSG_DONTWAIT);

		if (n > 0) {
			cl->got += (size_t)n;
			continue;
		}
		if (n == 0) {
			eof = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			break;
		client_answer(c, cl, VNIC_CTL_REQ_BAD, "error: reading the request");
		return;
	}
	req = vnic_ctl_parse_request(cl->line, cl->got, eof, &why);
	if (req != VNIC_CTL_REQ_MORE)
		client_answer(c, cl, req, why);
}

/* Its deadline passed: a silent client gets the error (if it can take it now), and goes. */
static void client_expire(struct vnic_ctl *c, struct ctl_client *cl)
{
	static const char msg[] = ERR_TIMEOUT "\n";

	if (!cl->out) {
		count(&c->timeouts);
		count(&c->bad_requests);
		send(cl->fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	client_close(cl);
}

static void accept_clients(struct vnic_ctl *c, unsigned int *nclients)
{
	for (unsigned int i = 0; i < CTL_MAX_CLIENTS && *nclients < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &c->clients[i];
		int fd;

		if (cl->fd >= 0)
			continue;
		fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* Out of fds: wait a little rather than spin on a readable listener. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				c->accept_pause_ms = mono_ms() + 10;
			return;
		}
		count(&c->requests);
		cl->fd = fd;
		cl->deadline_ms = mono_ms() + VNIC_CTL_TIMEOUT_MS;
		(*nclients)++;
		/* The line is often there already: no need to wait a poll round for it. */
		client_read(c, cl);
		if (cl->fd < 0)
			(*nclients)--;
	}
}

/*
 * The poll set: the stop eventfd, every client (reading or answering),
 * and the listener while a slot is free. Clients past their deadline are
 * expired here. Returns how many entries; *timeout_ms until the nearest
 * deadline (-1: none).
 */
static nfds_t poll_set(struct vnic_ctl *c, struct pollfd *p, unsigned int *slot,
		       unsigned int *nclients, int *timeout_ms)
{
	uint64_t now = mono_ms(), next = UINT64_MAX;
	nfds_t n = 0;

	p[n++] = (struct pollfd){ .fd = c->stop_fd, .events = POLLIN };
	*nclients = 0;
	for (unsigned int i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &c->clients[i];

		if (cl->fd < 0)
			continue;
		if (now >= cl->deadline_ms) {
			client_expire(c, cl);
			continue;
		}
		if (cl->deadline_ms < next)
			next = cl->deadline_ms;
		slot[n] = i;
		p[n++] = (struct pollfd){ .fd = cl->fd, .events = cl->out ? POLLOUT : POLLIN };
		(*nclients)++;
	}
	if (*nclients < CTL_MAX_CLIENTS) {
		if (now < c->accept_pause_ms) {
			if (c->accept_pause_ms < next)
				next = c->accept_pause_ms;
		} else {
			p[n++] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
		}
	}
	*timeout_ms = next == UINT64_MAX ? -1 : (int)(next - now);
	return n;
}

static void *serve(void *arg)
{
	struct vnic_ctl *c = arg;
	struct pollfd p[CTL_MAX_CLIENTS + 2];
	unsigned int slot[CTL_MAX_CLIENTS + 2];

	for (;;) {
		unsigned int nclients;
		int timeout_ms;
		nfds_t n = poll_set(c, p, slot, &nclients, &timeout_ms);

		if (poll(p, n, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		for (nfds_t k = 1; k < n; k++) {
			struct ctl_client *cl;

			if (!p[k].revents || p[k].fd == c->lfd)
				continue;
			cl = &c->clients[slot[k]];
			if (cl->out)
				client_write(cl);
			else
				client_read(c, cl);
		}
		if (p[n - 1].fd == c->lfd && p[n - 1].revents)
			accept_clients(c, &nclients);
	}
	for (unsigned int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->clients[i].fd >= 0)
			client_close(&c->clients[i]);
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------- */

int vnic_ctl_serve_start(struct vnic_ctl **ctlp, const char *name, vnic_ctl_collect_fn collect_fn,
			 const struct vnic_ctl_ops *ops, void *ctx)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	sigset_t all, old;
	struct sockaddr_un sa;
	struct vnic_ctl *c;
	struct stat st;
	int err;

	*ctlp = NULL;
	if (!collect_fn || !vnic_ctl_name_valid(name))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->lfd = c->stop_fd = -1;
	for (unsigned int i = 0; i < CTL_MAX_CLIENTS; i++)
		c->clients[i].fd = -1;
	c->collect = collect_fn;
	if (ops)
		c->ops = *ops;
	c->ctx = ctx;
	c->start_ns = vnic_now_ns();
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->cap = 256;
	c->buf = calloc(c->cap, sizeof(*c->buf));
	if (!c->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	err = vnic_ctl_dir(dir, sizeof(dir), true);
	if (!err)
		err = vnic_ctl_path(name, c->path, sizeof(c->path));
	if (!err)
		err = unix_addr(c->path, &sa);
	if (err)
		goto err_free;

	err = probe(&sa);
	if (!err) {
		err = -EADDRINUSE;
		goto err_free;
	}
	/* Nobody answers: the file, if any, is left from an instance that died. */
	if (err == -ECONNREFUSED && unlink(c->path) && errno != ENOENT) {
		err = -errno;
		goto err_free;
	}
	if (err != -ECONNREFUSED && err != -ENOENT)
		goto err_free;

	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->lfd < 0) {
		err = -errno;
		goto err_free;
	}
	if (bind(c->lfd, (const struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto err_close;
	}
	if (stat(c->path, &st) || listen(c->lfd, 16)) {
		err = -errno;
		goto err_unlink;
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->stop_fd < 0) {
		err = -errno;
		goto err_unlink;
	}
	/* Signals (Ctrl-C) are the main thread's business, never the server's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&c->thread, NULL, serve, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto err_unlink;
	*ctlp = c;
	return 0;

err_unlink:
	unlink(c->path);
err_close:
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	close(c->lfd);
err_free:
	free(c->buf);
	free(c);
	return err;
}

void vnic_ctl_serve_stop(struct vnic_ctl *c)
{
	uint64_t one = 1;
	struct stat st;

	if (!c)
		return;
	while (write(c->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(c->thread, NULL);
	/* Someone may have removed ours and started another under the name: leave theirs. */
	if (!stat(c->path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	close(c->lfd);
	close(c->stop_fd);
	free(c->buf);
	free(c);
}

const char *vnic_ctl_serve_path(const struct vnic_ctl *c)
{
	return c->path;
}

/* ---------------------------------------------------------------------------
 * Client
 * ------------------------------------------------------------------------- */

enum { ANSWER_MAX = 64 << 20 };

static int client_connect(const char *path, uint64_t deadline)
{
	struct sockaddr_un sa;
	int fd, err;

	err = unix_addr(path, &sa);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A UNIX connect never goes in progress: EAGAIN is a full backlog, so try again. */
	while (connect(fd, (const struct sockaddr *)&sa, sizeof(sa))) {
		struct timespec ts = {0, 5000000};

		err = -errno;
		if (err != -EAGAIN && err != -EINTR)
			goto err;
		if (mono_ms() >= deadline) {
			err = -ETIMEDOUT;
			goto err;
		}
		nanosleep(&ts, NULL);
	}
	return fd;
err:
	close(fd);
	return err;
}

static int client_wait(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		uint64_t now = mono_ms();
		int n;

		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(deadline - now));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int client_send(int fd, const char *p, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		int err;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		err = client_wait(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

static int client_recv(int fd, char **out, size_t *outlen, uint64_t deadline)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int err;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			char *nb;

			if (cap >= ANSWER_MAX) {
				err = -EMSGSIZE;
				goto err;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				goto err;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			err = -errno;
			goto err;
		}
		err = client_wait(fd, POLLIN, deadline);
		if (err)
			goto err;
	}
	buf[len] = '\0';
	*out = buf;
	if (outlen)
		*outlen = len;
	return 0;
err:
	free(buf);
	return err;
}

int vnic_ctl_request(const char *path, const char *req, int timeout_ms, char **out, size_t *len)
{
	uint64_t deadline = mono_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1);
	int fd, err;

	*out = NULL;
	fd = client_connect(path, deadline);
	if (fd < 0)
		return fd;
	err = client_send(fd, req, strlen(req), deadline);
	if (!err)
		err = client_send(fd, "\n", 1, deadline);
	if (!err)
		err = client_recv(fd, out, len, deadline);
	close(fd);
	return err;
}
