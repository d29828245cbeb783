// SPDX-License-Identifier: MIT
/*
 * The control socket: a running `vnic bench` or `vnic link` answers on a UNIX
 * stream socket, one request line and one answer per connection
 * (docs/STATS.md). The server is one thread sleeping in poll(); it only
 * reads counters, which their owners allow from any thread, so it never
 * touches the datapath.
 *
 * Whatever a client sends (nothing, too much, binary, a request it never
 * finishes), the server answers "error: ..." or drops it after
 * VNIC_CTL_TIMEOUT_MS, counts it, and goes back to listening.
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

struct vnic_ctl {
	pthread_t thread;
	int lfd;
	int stop_fd;
	char name[VNIC_CTL_NAME_MAX];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev; /* the socket file we bound, to remove only ours */
	ino_t ino;
	vnic_ctl_collect_fn collect;
	void *ctx;
	struct vnic_counter *buf; /* server thread only */
	unsigned int cap;
	uint64_t start_ns;
	/* written by the server thread, read anywhere */
	_Atomic uint64_t requests;
	_Atomic uint64_t bad_requests;
	_Atomic uint64_t timeouts;
};

/* The answer to anything the server cannot take; the reasons are stable (tests match them). */
#define ERR_EMPTY    "error: empty request"
#define ERR_LONG     "error: request longer than 256 bytes"
#define ERR_BYTES    "error: request has control or non-ASCII bytes"
#define ERR_UNKNOWN  "error: unknown command (ping, stats, stats json)"
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
 * Serving one client
 * ------------------------------------------------------------------------- */

/*
 * Waits for events on fd until the deadline or stop. 1 ready, 0 timed out,
 * -ECANCELED stopping, -errno.
 */
static int wait_fd(const struct vnic_ctl *c, int fd, short events, uint64_t deadline_ms)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = events},
				      {.fd = c->stop_fd, .events = POLLIN}};
		uint64_t now = mono_ms();
		int n;

		if (now >= deadline_ms)
			return 0;
		n = poll(p, 2, (int)(deadline_ms - now));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents)
			return -ECANCELED;
		if (p[0].revents)
			return 1;
	}
}

/*
 * Reads what the client sends into buf until a newline arrives, the client
 * stops sending (EOF: "printf stats | nc -U" style clients need no newline)
 * or buf is full. The bytes read (vnic_ctl_parse_request makes a request
 * of them), or -ETIMEDOUT, -ECANCELED, -errno.
 */
static int read_line(const struct vnic_ctl *c, int fd, char *buf, size_t size)
{
	uint64_t deadline = mono_ms() + VNIC_CTL_TIMEOUT_MS;
	size_t got = 0;

	while (got < size) {
		ssize_t n;
		int w;

		n = recv(fd, buf + got, size - got, MSG_DONTWAIT);
		if (n > 0) {
			bool nl = memchr(buf + got, '\n', (size_t)n);

			got += (size_t)n;
			if (nl)
				break;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		w = wait_fd(c, fd, POLLIN, deadline);
		if (w < 0)
			return w;
		if (!w)
			return -ETIMEDOUT;
	}
	return (int)got;
}

/* Sends it all within the deadline, never raising SIGPIPE. 0 or -errno. */
static int write_all(const struct vnic_ctl *c, int fd, const char *p, size_t len)
{
	uint64_t deadline = mono_ms() + VNIC_CTL_TIMEOUT_MS;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int w;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		w = wait_fd(c, fd, POLLOUT, deadline);
		if (w <= 0)
			return w ? w : -ETIMEDOUT;
	}
	return 0;
}

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

enum vnic_ctl_req vnic_ctl_parse_request(const char *buf, size_t len, const char **why)
{
	const char *nl = memchr(buf, '\n', len);
	size_t n = nl ? (size_t)(nl - buf) : len;

	*why = NULL;
	if (n && buf[n - 1] == '\r')
		n--;
	if (n > VNIC_CTL_LINE_MAX) {
		*why = ERR_LONG;
		return VNIC_CTL_REQ_BAD;
	}
	if (!n) {
		*why = ERR_EMPTY;
		return VNIC_CTL_REQ_BAD;
	}
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f) {
			*why = ERR_BYTES;
			return VNIC_CTL_REQ_BAD;
		}
	}
	if (n == 4 && !memcmp(buf, "ping", 4))
		return VNIC_CTL_REQ_PING;
	if (n == 5 && !memcmp(buf, "stats", 5))
		return VNIC_CTL_REQ_STATS;
	if (n == 10 && !memcmp(buf, "stats json", 10))
		return VNIC_CTL_REQ_STATS_JSON;
	*why = ERR_UNKNOWN;
	return VNIC_CTL_REQ_BAD;
}

static void bad(struct vnic_ctl *c, int fd, const char *why)
{
	atomic_store_explicit(&c->bad_requests,
			      atomic_load_explicit(&c->bad_requests, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	write_all(c, fd, why, strlen(why));
	write_all(c, fd, "\n", 1);
}

static void serve_client(struct vnic_ctl *c, int fd)
{
	/* room for the longest line, a CR and the newline */
	char line[VNIC_CTL_LINE_MAX + 2];
	enum vnic_ctl_req req;
	const char *why;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	atomic_store_explicit(&c->requests,
			      atomic_load_explicit(&c->requests, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	n = read_line(c, fd, line, sizeof(line));
	if (n == -ECANCELED)
		return;
	if (n == -ETIMEDOUT) {
		atomic_store_explicit(&c->timeouts,
				      atomic_load_explicit(&c->timeouts, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		bad(c, fd, ERR_TIMEOUT);
		return;
	}
	if (n < 0) {
		bad(c, fd, "error: reading the request");
		return;
	}
	req = vnic_ctl_parse_request(line, (size_t)n, &why);
	if (req == VNIC_CTL_REQ_BAD) {
		bad(c, fd, why);
		return;
	}
	if (req == VNIC_CTL_REQ_PING) {
		write_all(c, fd, "pong\n", 5);
		return;
	}
	/* The answer is built whole first, so a slow client never holds a half-read snapshot. */
	f = open_memstream(&out, &len);
	if (!f) {
		bad(c, fd, ERR_INTERNAL);
		return;
	}
	if (req == VNIC_CTL_REQ_STATS_JSON)
		stats_json(c, f);
	else
		stats_text(c, f);
	if (fclose(f) || !out) {
		free(out);
		bad(c, fd, ERR_INTERNAL);
		return;
	}
	write_all(c, fd, out, len);
	free(out);
}

/*
 * Closing a UNIX socket with unread input resets the peer, which could then
 * lose the error it was just sent: take what is already there first.
 */
static void drain(int fd)
{
	char junk[1024];

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 64; i++)
		if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
}

static void *serve(void *arg)
{
	struct vnic_ctl *c = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = c->lfd, .events = POLLIN},
				      {.fd = c->stop_fd, .events = POLLIN}};
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* Out of fds: wait a little rather than spin on a readable listener. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				poll(&p[1], 1, 10);
			continue;
		}
		serve_client(c, fd);
		drain(fd);
		close(fd);
	}
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------- */

int vnic_ctl_serve_start(struct vnic_ctl **ctlp, const char *name, vnic_ctl_collect_fn collect_fn,
			 void *ctx)
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
	c->collect = collect_fn;
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
