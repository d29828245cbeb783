// SPDX-License-Identifier: MIT
/*
 * A standing server that goes away, seen from its client (`vnic bench
 * --server PATH`, `vnic link --server PATH`; docs/ARCHITECTURE.md section
 * 11, "A server restart"): what
 * a PowerVM LPAR sees when its VIOS restarts. The server's end of the socket
 * closes with its process; a poller on side a's cpu sees the hang-up
 * (EPOLLRDHUP, level-triggered: an idle socket costs nothing per packet) and
 * tells each hv its partner is gone, which raises a transport event on the
 * client's CRQ, so the drivers reset as ibmvnic does (src/hv/shm.c,
 * src/driver/reset.c). A thread of its own then connects to the same path
 * again, 10 ms after the loss and doubling up to 500 ms between attempts,
 * hands over the settings and the same memory (vnic_split_redial); the new
 * server's devices say INIT, the drivers log in again, the workloads'
 * transports retransmit what the reset dropped. A server that does not come
 * back within --reconnect-timeout ends the run with one line.
 *
 * The socket's fd number never changes: the new connection is dup3'd onto
 * it, so the watch (registered with the cpu before it started) and the
 * requests of vnic_split_counters and vnic_split_stop keep using c->sock.
 */
#define _GNU_SOURCE /* dup3, POLLRDHUP */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "app.h"

struct vnic_split_reconnect {
	struct vnic_split *c;
	const char *path;
	const struct vnic_topo_config *cfg;
	struct vnic_hv *hv[VNIC_TOPO_SIDES];
	struct vnic_cpu *cpu;
	struct vnic_poller watch;
	bool watching;			/* the watch poller's (cpu's thread) */
	_Atomic bool rearm;		/* a new socket is at c->sock: watch it */
	_Atomic bool failed;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* CLOCK_MONOTONIC */
	bool lost;			/* under mu */
	bool stopping;			/* under mu */
	/* counters: written by the thread only */
	uint64_t nlost;
	uint64_t reconnects;
	uint64_t attempts;
	uint64_t down_ns;
	uint64_t down_max_ns;
};

uint32_t vnic_split_backoff_ms(unsigned int n)
{
	uint32_t ms = VNIC_SPLIT_BACKOFF_MIN_MS;

	for (unsigned int i = 0; i < n && ms < VNIC_SPLIT_BACKOFF_MAX_MS; i++)
		ms *= 2;
	return ms < VNIC_SPLIT_BACKOFF_MAX_MS ? ms : VNIC_SPLIT_BACKOFF_MAX_MS;
}

/* --- the watch, on side a's cpu ------------------------------------------------------ */

/* The server's end is closed (its process is gone, or it hung up). */
static bool hung_up(int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLRDHUP };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static int watch_poll(struct vnic_poller *p, int budget)
{
	struct vnic_split_reconnect *r = vnic_container_of(p, struct vnic_split_reconnect, watch);
	int sock = r->c->sock;

	(void)budget;
	if (atomic_exchange_explicit(&r->rearm, false, memory_order_acquire)) {
		r->watching = !vnic_cpu_mod_fd(r->cpu, sock, EPOLLRDHUP);
		return 0;
	}
	/* run again after it stopped watching (readiness seen before): nothing new */
	if (!r->watching || !hung_up(sock))
		return 0;
	/* level-triggered: out of the set until a new socket is there */
	vnic_cpu_mod_fd(r->cpu, sock, 0);
	r->watching = false;
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++)
		vnic_hv_split_partner_lost(r->hv[s]);
	pthread_mutex_lock(&r->mu);
	r->lost = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* --- the way back, on a thread of its own ---------------------------------------------- */

/* Under mu: sleeps until deadline_ns or a stop. false once stopping. */
static bool wait_until(struct vnic_split_reconnect *r, uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000ull),
			       .tv_nsec = (long)(deadline_ns % 1000000000ull) };

	while (!r->stopping && vnic_now_ns() < deadline_ns)
		if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT)
			break;
	return !r->stopping;
}

static bool hvs_ready(const struct vnic_split_reconnect *r)
{
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++)
		if (!vnic_hv_split_partner_ready(r->hv[s]))
			return false;
	return true;
}

/* A new connection is the run's socket from here: same fd number, under the request lock. */
static int socket_replace(struct vnic_split_reconnect *r, int fd)
{
	int err = 0;

	pthread_mutex_lock(&r->c->lock);
	if (dup3(fd, r->c->sock, O_CLOEXEC) < 0)
		err = -errno;
	else
		r->c->conn++;
	pthread_mutex_unlock(&r->c->lock);
	close(fd);
	return err;
}

static void say_gave_up(const struct vnic_split_reconnect *r, const char *step, int err)
{
	fprintf(stderr,
		"vnic: --server %s: the server went away and was not back within %.3g s "
		"(%s: %s)\n",
		r->path, (double)r->cfg->reconnect_timeout_ns / 1e9, step,
		strerror(err == -EAGAIN ? ETIMEDOUT : -err));
}

/*
 * Under mu: from the loss to a server attached again, or a give-up (said)
 * at the deadline. 0, -ECANCELED (stopping) or -ETIMEDOUT.
 */
static int come_back(struct vnic_split_reconnect *r)
{
	uint64_t start = vnic_now_ns(), deadline = start + r->cfg->reconnect_timeout_ns;
	const char *step = "the client's own reset";
	int fd = -ETIMEDOUT, err;

	vnic_ctr_inc(&r->nlost);
	/* a new server must find the client's half of the memory rewound (shm.c) */
	while (!hvs_ready(r)) {
		if (vnic_now_ns() >= deadline) {
			say_gave_up(r, step, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
		if (!wait_until(r, vnic_now_ns() + 1000000))
			return -ECANCELED;
	}
	for (unsigned int n = 0;; n++) {
		uint64_t next = vnic_now_ns() + (uint64_t)vnic_split_backoff_ms(n) * 1000000;

		if (next > deadline)
			next = deadline;
		if (!wait_until(r, next))
			return -ECANCELED;
		/* the attempt blocks (connect, answers): not under the lock a stop takes */
		pthread_mutex_unlock(&r->mu);
		fd = vnic_split_redial(r->c, r->path, r->cfg, r->hv, &step);
		pthread_mutex_lock(&r->mu);
		vnic_ctr_inc(&r->attempts);
		if (fd >= 0 || vnic_now_ns() >= deadline || r->stopping)
			break;
	}
	if (fd >= 0 && r->stopping) {
		close(fd);
		return -ECANCELED;
	}
	err = fd < 0 ? fd : socket_replace(r, fd);
	if (err) {
		say_gave_up(r, fd < 0 ? step : "dup3", err);
		return -ETIMEDOUT;
	}
	vnic_ctr_add(&r->down_ns, vnic_now_ns() - start);
	if (vnic_now_ns() - start > r->down_max_ns)
		vnic_ctr_set(&r->down_max_ns, vnic_now_ns() - start);
	vnic_ctr_inc(&r->reconnects);
	atomic_store_explicit(&r->rearm, true, memory_order_release);
	vnic_poller_schedule(&r->watch);
	return 0;
}

static void *reconnect_main(void *arg)
{
	struct vnic_split_reconnect *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->lost && !r->stopping)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stopping)
			break;
		r->lost = false;
		if (come_back(r) == -ETIMEDOUT) {
			atomic_store_explicit(&r->failed, true, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* --- setup ----------------------------------------------------------------------------- */

static int cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t a;
	int err;

	err = pthread_condattr_init(&a);
	if (err)
		return -err;
	err = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
	return -err;
}

int vnic_split_watch(struct vnic_split *c, struct vnic_cpu *cpu,
		     struct vnic_hv *const hv[VNIC_TOPO_SIDES], const char *path,
		     const struct vnic_topo_config *cfg)
{
	struct vnic_split_reconnect *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->c = c;
	r->path = path;
	r->cfg = cfg;
	r->cpu = cpu;
	memcpy(r->hv, hv, sizeof(r->hv));
	err = -pthread_mutex_init(&r->mu, NULL);
	if (err)
		goto err_free;
	err = cond_init_monotonic(&r->cv);
	if (err)
		goto err_destroy_mu;
	err = vnic_cpu_add(cpu, &r->watch, "split_watch", watch_poll);
	if (err)
		goto err_destroy_cv;
	/*
	 * Registered with the cpu from here (core has no removal): freed with
	 * the split, after the cpu (vnic_split_watch_free), however this ends.
	 */
	c->rc = r;
	err = vnic_cpu_add_fd(cpu, c->sock, EPOLLRDHUP, &r->watch);
	if (err)
		return err;
	r->watching = true;
	err = -pthread_create(&r->thread, NULL, reconnect_main, r);
	if (err)
		return err;
	r->thread_started = true;
	return 0;

err_destroy_cv:
	pthread_cond_destroy(&r->cv);
err_destroy_mu:
	pthread_mutex_destroy(&r->mu);
err_free:
	free(r);
	return err;
}

void vnic_split_watch_stop(struct vnic_split *c)
{
	struct vnic_split_reconnect *r = c->rc;

	if (!r || !r->thread_started)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	r->thread_started = false;
}

void vnic_split_watch_free(struct vnic_split *c)
{
	struct vnic_split_reconnect *r = c->rc;

	if (!r)
		return;
	vnic_split_watch_stop(c);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
	c->rc = NULL;
}

bool vnic_split_gave_up(const struct vnic_split *c)
{
	return c->rc && atomic_load_explicit(&c->rc->failed, memory_order_acquire);
}

unsigned int vnic_split_client_counters(const struct vnic_split *c, struct vnic_counter *out,
					unsigned int max, unsigned int at)
{
	const struct vnic_split_reconnect *r = c->rc;
	const struct {
		const char *name;
		const uint64_t *v;
	} ctrs[] = {
		{ "split.lost", r ? &r->nlost : NULL },
		{ "split.reconnects", r ? &r->reconnects : NULL },
		{ "split.reconnect_attempts", r ? &r->attempts : NULL },
		{ "split.down_ns", r ? &r->down_ns : NULL },
		{ "split.down_max_ns", r ? &r->down_max_ns : NULL },
	};

	if (!r)
		return at;
	for (unsigned int i = 0; i < sizeof(ctrs) / sizeof(ctrs[0]); i++)
		vnic_counter_put(out, max, &at, ctrs[i].name, vnic_ctr_read(ctrs[i].v));
	return at;
}
