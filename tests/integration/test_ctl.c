// SPDX-License-Identifier: MIT
/*
 * The control socket (src/app/ctl.c): a bench run on its own thread serves
 * its counters while traffic runs; the server answers "ping", "stats" and
 * "stats json", turns every malformed request away with "error:" (or drops
 * a silent client after its timeout) and keeps answering; the socket file
 * goes when the run ends. Plus the server on its own: names, a live name
 * refused, a stale file replaced, silent clients that delay nobody.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"
#include "support.h"

static char tmpdir[64];

/* The sockets go to a private directory, not to the real /run/vnic. */
static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vnic-test-ctl-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return setenv("XDG_RUNTIME_DIR", tmpdir, 1);
}

static int teardown_dir(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/vnic", tmpdir);
	rmdir(path);
	rmdir(tmpdir);
	return 0;
}

static void sock_path(const char *name, char *buf, size_t len)
{
	assert_int_equal(vnic_ctl_path(name, buf, len), 0);
}

/*
 * Sends exactly these bytes (maybe none), then reads until the server
 * closes. The answer (malloc'd), or NULL if it did not close within 10 s:
 * the server must never hang a client.
 */
static char *raw(const char *path, const void *req, size_t len, bool shut)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t cap = 1 << 16, got = 0;
	char *buf = malloc(cap);
	int fd;

	assert_non_null(buf);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (len)
		assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	if (shut)
		shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 10000) <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		n = recv(fd, buf + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		assert_true(got < cap - 1);
	}
	if (buf)
		buf[got] = '\0';
	close(fd);
	return buf;
}

static void expect_error(const char *path, const void *req, size_t len, bool shut)
{
	char *a = raw(path, req, len, shut);

	assert_non_null(a);
	if (strncmp(a, "error:", 6))
		fail_msg("answer to a bad request: '%.60s'", a);
	free(a);
}

static void expect_pong(const char *path)
{
	char *a = NULL;

	assert_int_equal(vnic_ctl_request(path, "ping", 5000, &a, NULL), 0);
	assert_string_equal(a, "pong\n");
	free(a);
}

/* The value of counter name in a "name value" answer; -1 when absent. */
static int64_t text_value(const char *text, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return strtoll(p + len + 1, NULL, 10);
	return -1;
}

static int64_t stat_of(const char *path, const char *name)
{
	char *a = NULL;
	int64_t v;

	assert_int_equal(vnic_ctl_request(path, "stats", 5000, &a, NULL), 0);
	v = text_value(a, name);
	free(a);
	return v;
}

/* ---------------------------------------------------------------------------
 * The server alone
 * ------------------------------------------------------------------------- */

static unsigned int three(void *ctx, struct vnic_counter *out, unsigned int max)
{
	static const char *const names[] = {"x.one", "x.two", "x.three"};

	(void)ctx;
	for (unsigned int i = 0; i < 3 && i < max; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "%s", names[i]);
		out[i].value = i + 1;
	}
	return 3;
}

static void test_names(void **state)
{
	char buf[256];

	(void)state;
	assert_true(vnic_ctl_name_valid("bench-123"));
	assert_true(vnic_ctl_name_valid("a.b_c-D9"));
	assert_false(vnic_ctl_name_valid(""));
	assert_false(vnic_ctl_name_valid(".hidden"));
	assert_false(vnic_ctl_name_valid("a/b"));
	assert_false(vnic_ctl_name_valid("../x"));
	assert_false(vnic_ctl_name_valid("sp ace"));
	memset(buf, 'a', 64);
	buf[64] = '\0';
	assert_false(vnic_ctl_name_valid(buf));
	buf[63] = '\0';
	assert_true(vnic_ctl_name_valid(buf));
	assert_int_equal(vnic_ctl_path("a/b", buf, sizeof(buf)), -EINVAL);
	sock_path("x", buf, sizeof(buf));
	assert_true(strstr(buf, tmpdir) == buf);
	assert_non_null(strstr(buf, "/vnic/x.sock"));
	vnic_ctl_default_name(buf, sizeof(buf), "bench");
	assert_int_equal(strncmp(buf, "bench-", 6), 0);
	assert_true(vnic_ctl_name_valid(buf));
}

static void test_live_name_refused_stale_replaced(void **state)
{
	struct vnic_ctl *a, *b;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[256], *ans = NULL;
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(vnic_ctl_serve_start(&a, "solo", three, NULL, NULL), 0);
	assert_int_equal(vnic_ctl_serve_start(&b, "solo", three, NULL, NULL), -EADDRINUSE);
	assert_null(b);
	assert_int_equal(vnic_ctl_serve_start(&b, "no/slash", three, NULL, NULL), -EINVAL);
	sock_path("solo", path, sizeof(path));
	assert_string_equal(vnic_ctl_serve_path(a), path);
	assert_int_equal(vnic_ctl_request(path, "stats", 5000, &ans, NULL), 0);
	assert_int_equal(text_value(ans, "x.two"), 2);
	/* the stats request and the liveness probe of the refused start */
	assert_int_equal(text_value(ans, "ctl.requests"), 2);
	assert_int_equal(text_value(ans, "ctl.bad_requests"), 0);
	free(ans);
	vnic_ctl_serve_stop(a);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(vnic_ctl_request(path, "ping", 1000, &ans, NULL), -ENOENT);

	/* A socket file nobody listens on, as a crashed instance leaves it. */
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(vnic_ctl_request(path, "ping", 1000, &ans, NULL), -ECONNREFUSED);
	assert_int_equal(vnic_ctl_serve_start(&a, "solo", three, NULL, NULL), 0);
	expect_pong(path);
	vnic_ctl_serve_stop(a);
	assert_int_equal(stat(path, &st), -1);
}

/* A connected socket that sends nothing. */
static int silent_client(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t len = strlen(path);

	assert_true(fd >= 0);
	assert_true(len < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, len + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/*
 * Clients are served at once, each with its own deadline: ten that connect
 * and say nothing do not hold up a stats request behind them (served one
 * at a time they would take a second each, and the request would time out),
 * and each is closed at its own deadline, counted as a bad request and a
 * timeout.
 */
static void test_silent_clients_delay_nobody(void **state)
{
	enum { SILENT = 10 };
	struct vnic_ctl *c;
	char path[256], *a = NULL;
	int fds[SILENT];
	uint64_t t0, t_connect, ms;

	(void)state;
	assert_int_equal(vnic_ctl_serve_start(&c, "busy", three, NULL, NULL), 0);
	sock_path("busy", path, sizeof(path));
	t_connect = vnic_now_ns();
	for (int i = 0; i < SILENT; i++)
		fds[i] = silent_client(path);
	vnic_test_nap_us(20000);

	t0 = vnic_now_ns();
	assert_int_equal(vnic_ctl_request(path, "stats", 5000, &a, NULL), 0);
	ms = (vnic_now_ns() - t0) / 1000000;
	print_message("stats with %d silent clients connected: %" PRIu64 " ms\n", SILENT, ms);
	assert_true(ms < 100);
	assert_int_equal(text_value(a, "x.three"), 3);
	assert_int_equal(text_value(a, "ctl.bad_requests"), 0);
	free(a);

	/* Each silent one is still open, then closed at its deadline with the timeout error. */
	for (int i = 0; i < SILENT; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};

		assert_int_equal(poll(&p, 1, 0), 0);
	}
	for (int i = 0; i < SILENT; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		char buf[128];
		ssize_t n;

		assert_int_equal(poll(&p, 1, 5000), 1);
		n = recv(fds[i], buf, sizeof(buf) - 1, 0);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_string_equal(buf, "error: no request line within 1 s\n");
		assert_int_equal(recv(fds[i], buf, sizeof(buf), 0), 0);
		close(fds[i]);
	}
	ms = (vnic_now_ns() - t_connect) / 1000000;
	print_message("the silent clients were closed after %" PRIu64 " ms\n", ms);
	assert_true(ms >= VNIC_CTL_TIMEOUT_MS - 100);
	assert_int_equal(vnic_ctl_request(path, "stats", 5000, &a, NULL), 0);
	assert_int_equal(text_value(a, "ctl.bad_requests"), SILENT);
	assert_int_equal(text_value(a, "ctl.timeouts"), SILENT);
	/* the ten, the first stats, and this one */
	assert_int_equal(text_value(a, "ctl.requests"), SILENT + 2);
	free(a);
	vnic_ctl_serve_stop(c);
}

/* ---------------------------------------------------------------------------
 * A bench run serving its counters
 * ------------------------------------------------------------------------- */

struct bench_thread {
	struct vnic_bench_opts o;
	struct vnic_bench_run r;
	int err;
};

static void *bench_main(void *arg)
{
	struct bench_thread *b = arg;

	b->r.o = &b->o;
	b->err = vnic_bench_run(&b->r);
	return NULL;
}

/* Waits until the socket answers and traffic has started (or the run ended). */
static bool wait_traffic(const char *path, pthread_t th)
{
	for (int i = 0; i < 3000; i++) {
		char *a = NULL;

		if (pthread_tryjoin_np(th, NULL) == 0)
			fail_msg("the bench run ended before its socket answered");
		if (!vnic_ctl_request(path, "stats", 5000, &a, NULL)) {
			int64_t v = text_value(a, "work.transactions");

			free(a);
			if (v > 0)
				return true;
		}
		vnic_test_nap_us(10000);
	}
	return false;
}

static void test_bench_serves_while_traffic_runs(void **state)
{
	struct bench_thread *b = calloc(1, sizeof(*b));
	char path[256], big[1024], *a = NULL;
	bool grew = false;
	struct stat st;
	int64_t bad_before, bad_after;
	pthread_t th;

	(void)state;
	assert_non_null(b);
	vnic_bench_opts_default(&b->o, VNIC_WL_RR);
	/* Long enough to never end by itself; the test stops it when done. */
	b->o.duration_s = 600;
	b->o.quiet = true;
	b->o.rr.sessions = 4;
	b->o.topo.host_pkts = 512;
	b->o.ctl = true;
	b->o.ctl_name = "ctl-test";
	sock_path("ctl-test", path, sizeof(path));
	assert_int_equal(pthread_create(&th, NULL, bench_main, b), 0);
	assert_true(wait_traffic(path, th));

	/* "stats": counters grow between two requests while traffic runs. */
	for (int i = 0; i < 50 && !grew; i++) {
		int64_t t0 = stat_of(path, "work.transactions");
		int64_t p0 = stat_of(path, "drv_a.tx0_bytes");

		vnic_test_nap_us(50000);
		grew = stat_of(path, "work.transactions") > t0 &&
		       stat_of(path, "drv_a.tx0_bytes") > p0;
	}
	assert_true(grew);

	/* "stats json": one object with the same counters. */
	assert_int_equal(vnic_ctl_request(path, "stats json", 5000, &a, NULL), 0);
	assert_true(a[0] == '{');
	assert_non_null(strstr(a, "\"drv_a.tx0_direct_packets\": "));
	assert_non_null(strstr(a, "\"ctl.bad_requests\": "));
	assert_non_null(strstr(a, "\"name\": \"ctl-test\""));
	assert_true(strlen(a) > 2 && !strcmp(a + strlen(a) - 2, "}\n"));
	free(a);

	/* Malformed requests: an error each, and the server goes on. */
	bad_before = stat_of(path, "ctl.bad_requests");
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	expect_error(path, big, sizeof(big), true);	   /* oversized */
	expect_error(path, big, 257, true);		   /* 257, no newline */
	expect_error(path, "stats\0json\n", 11, true);	   /* NUL */
	expect_error(path, "\x01\x02\xff\xfe\n", 5, true); /* binary */
	expect_error(path, "sta\tts\n", 7, true);	   /* control byte */
	expect_error(path, "hello\n", 6, true);		   /* unknown */
	expect_error(path, "stats  json\n", 12, true);	   /* unknown */
	expect_error(path, "\n", 1, true);		   /* empty */
	expect_error(path, "", 0, true);		   /* nothing, then EOF */
	expect_pong(path);
	/* A line of exactly the limit is read whole (and is unknown). */
	expect_error(path, big, 256, true);
	/* No newline but EOF ends the line. */
	a = raw(path, "ping", 4, true);
	assert_non_null(a);
	assert_string_equal(a, "pong\n");
	free(a);
	/* CRLF is fine too. */
	a = raw(path, "ping\r\n", 6, true);
	assert_non_null(a);
	assert_string_equal(a, "pong\n");
	free(a);
	/* A client that connects and says nothing is let go after the timeout. */
	a = raw(path, "", 0, false);
	assert_non_null(a);
	assert_true(a[0] == '\0' || !strncmp(a, "error:", 6));
	free(a);
	/* Half a line, then silence: the same. */
	a = raw(path, "sta", 3, false);
	assert_non_null(a);
	assert_true(a[0] == '\0' || !strncmp(a, "error:", 6));
	free(a);
	expect_pong(path);
	bad_after = stat_of(path, "ctl.bad_requests");
	assert_true(bad_after - bad_before >= 12);
	assert_true(stat_of(path, "ctl.timeouts") >= 2);

	/* Another instance may not take the name while this one runs. */
	{
		struct vnic_ctl *c = NULL;

		assert_int_equal(vnic_ctl_serve_start(&c, "ctl-test", three, NULL, NULL), -EADDRINUSE);
	}

	atomic_store(&b->r.stop, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(b->err, 0);
	assert_true(b->r.res.transactions > 0);
	/* The socket went with the run. */
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(b->r.ctl);
	vnic_bench_cleanup(&b->r);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_live_name_refused_stale_replaced),
		cmocka_unit_test(test_silent_clients_delay_nobody),
		cmocka_unit_test(test_bench_serves_while_traffic_runs),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
