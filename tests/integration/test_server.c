// SPDX-License-Identifier: MIT
/*
 * `vnic server` and `vnic bench --server` without the processes
 * (tests/integration/test_server.sh runs those): the command line of
 * `vnic server`, who it lets in, the settings a client hands a standing
 * server (src/app/server.c) and each refusal a client can meet, with the
 * server's end played by a thread on a socket in a scratch folder.
 *
 *   test thread: vnic_split_connect(PATH) --- PATH ---> helper thread: accept,
 *                or raw messages                        greet / refuse / be silent,
 *                                                       or vnic_split_serve_client
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"

/* --- `vnic server` options ------------------------------------------------------------ */

struct parse_case {
	const char *name;
	const char *argv[8];
	int rc;			/* vnic_server_parse */
	uint32_t max_clients;	/* when rc is 0 */
	unsigned int nallow;	/* when rc is 0; 1 with own: the server's own uid */
	bool own;
	bool ctl;
};

static const struct parse_case parse_cases[] = {
	{ "1 listen alone", { "server", "--listen", "/tmp/x.sock" }, 0, 16, 1, true, true },
	{ "2 no listen", { "server" }, -EINVAL, 0, 0, false, false },
	{ "3 empty listen", { "server", "--listen", "" }, -EINVAL, 0, 0, false, false },
	{ "4 listen without value", { "server", "--listen" }, -EINVAL, 0, 0, false, false },
	{ "5 two uids",
	  { "server", "--listen", "p", "--allow-uid", "1000", "--allow-uid", "0" },
	  0, 16, 2, false, true },
	{ "6 uid not a number", { "server", "--listen", "p", "--allow-uid", "bob" }, -EINVAL, 0, 0,
	  false, false },
	{ "7 uid -1 (no user)", { "server", "--listen", "p", "--allow-uid", "4294967295" },
	  -EINVAL, 0, 0, false, false },
	{ "8 uid negative", { "server", "--listen", "p", "--allow-uid", "-1" }, -EINVAL, 0, 0,
	  false, false },
	{ "9 max clients 1", { "server", "--listen", "p", "--max-clients", "1" }, 0, 1, 1, true,
	  true },
	{ "10 max clients 1024", { "server", "--listen", "p", "--max-clients", "1024" }, 0, 1024,
	  1, true, true },
	{ "11 max clients 0", { "server", "--listen", "p", "--max-clients", "0" }, -EINVAL, 0, 0,
	  false, false },
	{ "12 max clients 1025", { "server", "--listen", "p", "--max-clients", "1025" }, -EINVAL,
	  0, 0, false, false },
	{ "13 no-ctl", { "server", "--listen", "p", "--no-ctl" }, 0, 16, 1, true, false },
	{ "14 name without ctl", { "server", "--listen", "p", "--no-ctl", "--name", "x" },
	  -EINVAL, 0, 0, false, false },
	{ "15 bad name", { "server", "--listen", "p", "--name", ".x" }, -EINVAL, 0, 0, false,
	  false },
	{ "16 a stray word", { "server", "--listen", "p", "extra" }, -EINVAL, 0, 0, false, false },
	{ "17 a vNIC option is the client's", { "server", "--listen", "p", "--mtu", "9000" },
	  -EINVAL, 0, 0, false, false },
	{ "18 help", { "server", "--help" }, 1, 0, 0, false, false },
	{ "19 switch", { "server", "--listen", "p", "--switch" }, 0, 16, 1, true, true },
	{ "20 switch, 32 clients (64 ports)",
	  { "server", "--listen", "p", "--switch", "--max-clients", "32" }, 0, 32, 1, true, true },
	{ "21 switch, 33 clients", { "server", "--listen", "p", "--max-clients", "33", "--switch" },
	  -EINVAL, 0, 0, false, false },
};

/* Whether a row's command line has --switch. */
static bool names_switch(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--switch"))
			return true;
	return false;
}

static void test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *pc = &parse_cases[i];
		struct vnic_server_opts o;
		char *argv[8] = { 0 };
		int argc = 0, rc;

		while (argc < 8 && pc->argv[argc]) {
			argv[argc] = (char *)pc->argv[argc];
			argc++;
		}
		rc = vnic_server_parse(argc, argv, &o);
		if (rc != pc->rc)
			fail_msg("case %s: rc %d, want %d", pc->name, rc, pc->rc);
		if (rc)
			continue;
		assert_int_equal(o.max_clients, pc->max_clients);
		assert_int_equal(o.nallow, pc->nallow);
		assert_int_equal(o.ctl, pc->ctl);
		assert_int_equal(o.switched, names_switch(argc, argv));
		if (pc->own)
			assert_int_equal(o.allow[0], getuid());
	}
}

static void test_uid_allowed(void **state)
{
	struct vnic_server_opts o;
	char *own[] = { "server", "--listen", "p" };
	char *two[] = { "server", "--listen", "p", "--allow-uid", "1000", "--allow-uid", "7" };
	char *many[3 + 2 * (VNIC_SERVER_MAX_UIDS + 1)] = { "server", "--listen", "p" };
	int argc = 3;

	(void)state;
	assert_int_equal(vnic_server_parse(3, own, &o), 0);
	assert_true(vnic_server_uid_allowed(&o, getuid()));
	assert_false(vnic_server_uid_allowed(&o, getuid() + 1));
	if (getuid())
		assert_false(vnic_server_uid_allowed(&o, 0));	/* root only when named */
	assert_int_equal(vnic_server_parse(7, two, &o), 0);
	assert_true(vnic_server_uid_allowed(&o, 1000));
	assert_true(vnic_server_uid_allowed(&o, 7));
	assert_false(vnic_server_uid_allowed(&o, 8));
	if (getuid() != 1000 && getuid() != 7)
		assert_false(vnic_server_uid_allowed(&o, getuid()));	/* a list replaces the default */
	/* one --allow-uid more than the table holds is refused, not dropped */
	for (int i = 0; i <= VNIC_SERVER_MAX_UIDS; i++) {
		many[argc++] = "--allow-uid";
		many[argc++] = "5";
	}
	assert_int_equal(vnic_server_parse(argc, many, &o), -EINVAL);
	assert_int_equal(vnic_server_parse(argc - 2, many, &o), 0);
	assert_int_equal(o.nallow, VNIC_SERVER_MAX_UIDS);
}

/* --- the settings a client hands the server ------------------------------------------- */

/* Every setting the server runs with, changed from its default, comes across. */
static void test_config_roundtrip(void **state)
{
	struct vnic_topo_config c, got;
	char text[VNIC_SPLIT_CONFIG_MAX];
	int n;

	(void)state;
	vnic_topo_config_default(&c);
	assert_int_equal(vnic_topo_opt_set("mtu", "4000", &c), 0);
	assert_int_equal(vnic_topo_opt_set("threads", "1", &c), 0);
	assert_int_equal(vnic_topo_opt_set("busy-poll-us", "7", &c), 0);
	assert_int_equal(vnic_topo_opt_set("busy-poll", "fixed", &c), 0);
	assert_int_equal(vnic_topo_opt_set("dev-queues", "2", &c), 0);
	assert_int_equal(vnic_topo_opt_set("drop-missing-hdrs", "on", &c), 0);
	assert_int_equal(vnic_topo_opt_set("rx-usecs", "32", &c), 0);
	assert_int_equal(vnic_topo_opt_set("adaptive-tx", "on", &c), 0);
	assert_int_equal(vnic_topo_opt_set("cost-irq-ns", "123", &c), 0);
	assert_int_equal(vnic_topo_opt_set("rate", "5G", &c), 0);
	assert_int_equal(vnic_topo_opt_set("delay-us", "9", &c), 0);
	assert_int_equal(vnic_topo_opt_set("loss", "0.25", &c), 0);
	assert_int_equal(vnic_topo_opt_set("seed", "18446744073709551615", &c), 0);
	assert_int_equal(vnic_topo_opt_set("pin", "0,1", &c), 0);
	n = vnic_split_config_text(&c, text, sizeof(text));
	assert_true(n > 0);
	assert_null(strstr(text, "pin "));	/* the client's cores stay the client's */
	assert_null(strstr(text, "tx-submit"));	/* and so do the driver's policies */
	vnic_topo_config_default(&got);
	assert_int_equal(vnic_split_config_apply(text, (size_t)n, &got), 0);
	assert_int_equal(got.drv.mtu, 4000);
	assert_int_equal(got.cable.mtu, 4000);
	assert_int_equal(got.threads, 1);
	assert_int_equal(got.busy_poll_ns, 7000);
	assert_int_equal(got.spin, c.spin);
	assert_int_equal(got.dev.max_tx_queues, 2);
	assert_true(got.dev.drop_missing_hdrs);
	assert_int_equal(got.dev.coal.rx_usecs, 32);	/* coalescing is the device's */
	assert_true(got.dev.coal.adaptive_tx);
	assert_int_equal(got.cost.irq_ns, 123);
	assert_int_equal(got.cable.rate_bps, 5000000000ull);
	assert_int_equal(got.cable.delay_ns, 9000);
	assert_true(got.cable.loss == 0.25);
	assert_int_equal(got.cable.seed, UINT64_MAX);
	assert_int_equal(got.pin.mode, VNIC_PIN_ADAPTIVE);	/* the default, not the client's list */
	/* too small a buffer is said, not cut */
	assert_int_equal(vnic_split_config_text(&c, text, 16), -EMSGSIZE);
}

struct config_case {
	const char *name;
	const char *text;
	int rc;
	size_t len;		/* bytes of text; 0: strlen */
};

static const struct config_case config_cases[] = {
	{ "1 nothing: the defaults", "", 0, 0 },
	{ "2 one setting", "mtu 9000\n", 0, 0 },
	{ "3 no newline at the end", "mtu 9000", -EINVAL, 0 },
	{ "4 no value", "mtu\n", -EINVAL, 0 },
	{ "5 empty line", "\n", -EINVAL, 0 },
	{ "6 unknown name", "colour blue\n", -EINVAL, 0 },
	{ "7 a driver policy", "tx-submit direct\n", -EINVAL, 0 },
	{ "8 the client's cores", "pin 0,1\n", -EINVAL, 0 },
	{ "9 a fault", "fault tx_drop=1\n", -EINVAL, 0 },
	{ "10 out of range", "mtu 70000\n", -EINVAL, 0 },
	{ "11 not a number", "threads two\n", -EINVAL, 0 },
	{ "12 a flag takes on or off", "drop-missing-hdrs yes\n", -EINVAL, 0 },
	{ "13 a NUL inside", "mtu 90\0000\n", -EINVAL, 9 },
	{ "14 a line too long",
	  "cost-irq-ns 1000000000000000000000000000000000000000000000000000000000000000000000"
	  "0000000000000000000000000000000000000000000000000000000000000000\n",
	  -EINVAL, 0 },
	{ "15 good then bad", "mtu 9000\nloss 0.9\n", -EINVAL, 0 },
	{ "16 a terminal escape", "mtu \033[2J\n", -EINVAL, 0 },
	{ "17 a byte above ASCII", "mtu 9000\377\n", -EINVAL, 0 },
};

static void test_config_refused(void **state)
{
	FILE *sink = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(sink);
	vnic_arg_err_to(sink);
	for (size_t i = 0; i < sizeof(config_cases) / sizeof(config_cases[0]); i++) {
		const struct config_case *cc = &config_cases[i];
		size_t len = cc->len ? cc->len : strlen(cc->text);
		/* an exact-size copy, so a read past the end is caught (ASan) */
		char *text = malloc(len ? len : 1);
		struct vnic_topo_config c;
		int rc;

		assert_non_null(text);
		memcpy(text, cc->text, len);
		vnic_topo_config_default(&c);
		rc = vnic_split_config_apply(text, len, &c);
		free(text);
		if (rc != cc->rc)
			fail_msg("case %s: rc %d, want %d", cc->name, rc, cc->rc);
	}
	assert_int_equal(vnic_split_config_apply("x", VNIC_SPLIT_CONFIG_MAX + 1,
						 &(struct vnic_topo_config){ 0 }),
			 -EMSGSIZE);
	vnic_arg_err_to(NULL);
	fclose(sink);
}

/* --- refusals over a socket ----------------------------------------------------------- */

enum helper_mode { GREET, SILENT, SERVE };

struct helper {
	char dir[64], path[96];
	int lfd;
	enum helper_mode mode;
	int greet_rc;
	int served_rc;			/* SERVE: vnic_split_serve_client's return */
	pthread_t th;
};

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	int sock;

	if (h->mode == SILENT)
		return NULL;	/* the backlog takes the connection; nobody answers */
	sock = accept(h->lfd, NULL, NULL);
	if (sock < 0)
		return NULL;
	if (h->mode == GREET)
		vnic_split_greet(sock, h->greet_rc);
	else
		h->served_rc = vnic_split_serve_client(sock, NULL);
	close(sock);
	return NULL;
}

static void helper_start(struct helper *h, enum helper_mode mode, int greet_rc)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(h, 0, sizeof(*h));
	snprintf(h->dir, sizeof(h->dir), "/tmp/vnic-test-server-XXXXXX");
	assert_non_null(mkdtemp(h->dir));
	snprintf(h->path, sizeof(h->path), "%s/s.sock", h->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", h->path);
	h->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(h->lfd >= 0);
	assert_int_equal(bind(h->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(h->lfd, 4), 0);
	h->mode = mode;
	h->greet_rc = greet_rc;
	assert_int_equal(pthread_create(&h->th, NULL, helper_main, h), 0);
}

static void helper_stop(struct helper *h)
{
	pthread_join(h->th, NULL);
	close(h->lfd);
	unlink(h->path);
	rmdir(h->dir);
}

static int connect_to(struct helper *h)
{
	struct vnic_topo_config cfg;
	struct vnic_split c;
	int err;

	vnic_topo_config_default(&cfg);
	err = vnic_split_connect(&c, h->path, &cfg);
	if (!err) {
		close(c.sock);
		pthread_mutex_destroy(&c.lock);
	}
	return err;
}

static void test_refused_uid(void **state)
{
	struct helper h;

	(void)state;
	helper_start(&h, GREET, -EACCES);
	assert_int_equal(connect_to(&h), -EACCES);
	helper_stop(&h);
}

static void test_refused_max_clients(void **state)
{
	struct helper h;

	(void)state;
	helper_start(&h, GREET, -EUSERS);
	assert_int_equal(connect_to(&h), -EUSERS);
	helper_stop(&h);
}

static void test_no_server(void **state)
{
	struct vnic_topo_config cfg;
	struct vnic_split c;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];

	(void)state;
	vnic_topo_config_default(&cfg);
	assert_int_equal(vnic_split_connect(&c, "/nonexistent/vnic.sock", &cfg), -ENOENT);
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(vnic_split_connect(&c, path, &cfg), -ENAMETOOLONG);
}

/* A server that takes the connection and never answers: the client gives up, it does not hang. */
static void test_silent_server(void **state)
{
	struct helper h;
	uint64_t t0;
	int err;

	(void)state;
	helper_start(&h, SILENT, 0);
	t0 = vnic_now_ns();
	err = connect_to(&h);
	assert_int_equal(err, -EAGAIN);
	assert_true(vnic_now_ns() - t0 < 3ull * VNIC_SPLIT_TIMEOUT_MS * 1000000);
	helper_stop(&h);
}

/* The child's end: a greeting, then the settings; anything else stops it, answered. */
struct raw_case {
	const char *name;
	uint32_t magic, type, n;
	const char *text;	/* n bytes sent after the head */
	int answer_rc;		/* 1: no answer expected */
	int served_rc;
};

static const struct raw_case raw_cases[] = {
	{ "1 bad settings", 0x76737276, 3, 9, "colour x\n", -EINVAL, -EINVAL },
	{ "2 not a CONFIG first", 0x76737276, 1, 0, "", -EPROTO, -EPROTO },
	{ "3 another magic", 0x12345678, 3, 0, "", -EPROTO, -EPROTO },
	{ "4 too long", 0x76737276, 3, VNIC_SPLIT_CONFIG_MAX + 1, "", -EMSGSIZE, -EMSGSIZE },
	{ "5 gone after the settings", 0x76737276, 3, 9, "mtu 1500\n", 0, -ECONNRESET },
};

static void test_child_refusals(void **state)
{
	FILE *sink = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(sink);
	vnic_arg_err_to(sink);
	for (size_t i = 0; i < sizeof(raw_cases) / sizeof(raw_cases[0]); i++) {
		const struct raw_case *rc = &raw_cases[i];
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		uint32_t head[4] = { rc->magic, rc->type, 0, rc->n };
		int32_t got[4];
		struct helper h;
		int fd;

		helper_start(&h, SERVE, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", h.path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(fd >= 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(recv(fd, got, sizeof(got), MSG_WAITALL), sizeof(got));
		assert_int_equal(got[2], 0);	/* welcome */
		assert_int_equal(send(fd, head, sizeof(head), 0), sizeof(head));
		if (strlen(rc->text))
			assert_int_equal(send(fd, rc->text, strlen(rc->text), 0),
					 (ssize_t)strlen(rc->text));
		assert_int_equal(recv(fd, got, sizeof(got), MSG_WAITALL), sizeof(got));
		if (got[2] != rc->answer_rc)
			fail_msg("case %s: answer %d, want %d", rc->name, got[2], rc->answer_rc);
		close(fd);
		helper_stop(&h);
		if (h.served_rc != rc->served_rc)
			fail_msg("case %s: served %d, want %d", rc->name, h.served_rc,
				 rc->served_rc);
	}
	vnic_arg_err_to(NULL);
	fclose(sink);
}

/* --- the way back to a server that went away (src/app/reconnect.c) ------------------------ */

/* 10 ms, doubling, never above 500 ms, whatever the attempt's number. */
static void test_reconnect_backoff(void **state)
{
	static const struct {
		unsigned int n;
		uint32_t ms;
	} rows[] = {
		{ 0, 10 }, { 1, 20 }, { 2, 40 }, { 3, 80 }, { 4, 160 }, { 5, 320 },
		{ 6, 500 }, { 7, 500 }, { 40, 500 }, { 100000, 500 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("case %zu: attempt %u\n", i, rows[i].n);
		assert_int_equal(vnic_split_backoff_ms(rows[i].n), rows[i].ms);
	}
}

/* --reconnect-timeout: seconds, for a client of a standing server only. */
static void test_reconnect_timeout_option(void **state)
{
	static const struct {
		const char *argv[8];
		int ok;
		uint64_t ns;
	} rows[] = {
		{ { "bench", "rr", "--server", "/s", NULL }, 1, 30000000000ull },
		{ { "bench", "rr", "--server", "/s", "--reconnect-timeout", "2.5", NULL }, 1,
		  2500000000ull },
		{ { "bench", "rr", "--server", "/s", "--reconnect-timeout", "0.01", NULL }, 1,
		  10000000ull },
		{ { "bench", "rr", "--server", "/s", "--reconnect-timeout", "0", NULL }, 0, 0 },
		{ { "bench", "rr", "--server", "/s", "--reconnect-timeout", "x", NULL }, 0, 0 },
		{ { "bench", "rr", "--split", "--reconnect-timeout", "5", NULL }, 0, 0 },
		{ { "bench", "rr", "--reconnect-timeout", "5", NULL }, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct vnic_bench_opts o;
		char *argv[8];
		int argc = 0, rc;

		while (rows[i].argv[argc]) {
			argv[argc] = (char *)rows[i].argv[argc];
			argc++;
		}
		argv[argc] = NULL;
		print_message("case %zu\n", i);
		rc = vnic_bench_parse(argc, argv, &o);
		if (rows[i].ok) {
			assert_int_equal(rc, 0);
			assert_int_equal(o.topo.reconnect_timeout_ns, rows[i].ns);
		} else {
			assert_true(rc < 0);
		}
	}
}

/* vnic link's --reconnect-timeout: the same seconds, with --server only. */
static void test_link_reconnect_timeout_option(void **state)
{
	static const struct {
		const char *argv[8];
		int ok;
		uint64_t ns;
	} rows[] = {
		{ { "link", "--server", "/s", NULL }, 1, 30000000000ull },
		{ { "link", "--server", "/s", "--reconnect-timeout", "2.5", NULL }, 1,
		  2500000000ull },
		{ { "link", "--reconnect-timeout", "0.01", "--server", "/s", NULL }, 1,
		  10000000ull },
		{ { "link", "--server", "/s", "--reconnect-timeout", "0", NULL }, 0, 0 },
		{ { "link", "--server", "/s", "--reconnect-timeout", "x", NULL }, 0, 0 },
		{ { "link", "--split", "--reconnect-timeout", "5", NULL }, 0, 0 },
		{ { "link", "--reconnect-timeout", "5", NULL }, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct vnic_link_opts o;
		char *argv[8];
		int argc = 0, rc;

		while (rows[i].argv[argc]) {
			argv[argc] = (char *)rows[i].argv[argc];
			argc++;
		}
		argv[argc] = NULL;
		print_message("case %zu\n", i);
		rc = vnic_link_parse(argc, argv, &o);
		if (rows[i].ok) {
			assert_int_equal(rc, 0);
			assert_int_equal(o.topo.reconnect_timeout_ns, rows[i].ns);
		} else {
			assert_true(rc < 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_uid_allowed),
		cmocka_unit_test(test_config_roundtrip),
		cmocka_unit_test(test_config_refused),
		cmocka_unit_test(test_refused_uid),
		cmocka_unit_test(test_refused_max_clients),
		cmocka_unit_test(test_no_server),
		cmocka_unit_test(test_silent_server),
		cmocka_unit_test(test_child_refusals),
		cmocka_unit_test(test_reconnect_backoff),
		cmocka_unit_test(test_reconnect_timeout_option),
		cmocka_unit_test(test_link_reconnect_timeout_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
