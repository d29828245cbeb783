// SPDX-License-Identifier: MIT
/*
 * The socket wire: QEMU's stream and dgram framings over unix sockets, TCP
 * and UDP on 127.0.0.1. No root needed.
 *
 *   wire A  <== unix / tcp / udp socket ==>  wire B, or a raw socket peer
 *
 *   - the spec string: good and bad, each bad one with its reason;
 *   - two wires joined (unix stream, TCP, UDP) carry frames of every size
 *     from 14 bytes to frame_size, byte-exact and in order;
 *   - a stream frame cut across reads, in pieces of every size;
 *   - malformed input from a raw peer (too long, runt, zero length, a
 *     length past any frame, EOF inside a frame or a length field): each
 *     counted by its reason; a broken stream is closed and a good frame
 *     after the reconnect still arrives, both when the wire listens and
 *     when it connects; frames received whole before the break arrive;
 *   - datagrams: runs of equal frames sent as one (GSO) and received
 *     merged (GRO) still come out frame by frame; too long and runt
 *     counted, a stranger's not received;
 *   - a peer that goes away and comes back: frames committed meanwhile are
 *     dropped and counted, traffic resumes; a server that goes away and
 *     comes back on the same path;
 *   - a full socket buffer: whole frames dropped, a short write finished,
 *     and the stream still framed: every frame that left arrives intact;
 *   - the notification fires while armed, once;
 *   - a whole vNIC pair over TCP on real threads carries a verified stream.
 *
 * Waits are hang guards, never timing assertions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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

#include "device/device.h"
#include "driver/driver.h"
#include "hv/hv.h"
#include "port/port.h"
#include "support.h"
#include "work/work.h"

enum { MTU = 1500, FS = MTU + 18, BATCH = 16 };
#define GUARD_NS 30000000000ull

static char tmpdir[64];
static char path[96];

/* ---- spec strings ---------------------------------------------------------- */

struct spec_case {
	const char *s;
	enum vnic_sockwire_spec_err err;
	enum vnic_sockwire_kind kind;
	bool server;
	const char *host; /* path for unix */
	unsigned int port;
	const char *rhost;
	unsigned int rport;
};

static const struct spec_case spec_cases[] = {
	/* 1 */ {"stream:unix:/tmp/s", 0, VNIC_SOCKWIRE_STREAM_UNIX, false, "/tmp/s", 0, NULL, 0},
	/* 2 */
	{"stream:unix:/tmp/s,server", 0, VNIC_SOCKWIRE_STREAM_UNIX, true, "/tmp/s", 0, NULL, 0},
	/* 3: a comma inside a path is the path's */
	{"stream:unix:/tmp/a,b", 0, VNIC_SOCKWIRE_STREAM_UNIX, false, "/tmp/a,b", 0, NULL, 0},
	/* 4 */
	{"stream:tcp:127.0.0.1:5000", 0, VNIC_SOCKWIRE_STREAM_TCP, false, "127.0.0.1", 5000, NULL,
	 0},
	/* 5 */
	{"stream:tcp:[::1]:65535,server", 0, VNIC_SOCKWIRE_STREAM_TCP, true, "::1", 65535, NULL, 0},
	/* 6 */
	{"stream:tcp:host.example:1", 0, VNIC_SOCKWIRE_STREAM_TCP, false, "host.example", 1, NULL,
	 0},
	/* 7: a server may let the kernel pick */
	{"stream:tcp:0.0.0.0:0,server", 0, VNIC_SOCKWIRE_STREAM_TCP, true, "0.0.0.0", 0, NULL, 0},
	/* 8 */
	{"dgram:udp:127.0.0.1:5001,127.0.0.1:5002", 0, VNIC_SOCKWIRE_DGRAM_UDP, false, "127.0.0.1",
	 5001, "127.0.0.1", 5002},
	/* 9 */
	{"dgram:udp:[::]:0,[fe80::1%eth0]:9", 0, VNIC_SOCKWIRE_DGRAM_UDP, false, "::", 0,
	 "fe80::1%eth0", 9},
	/* 10 */ {.s = "", .err = VNIC_SOCKWIRE_SPEC_FRAMING},
	/* 11 */ {.s = "socket:unix:/tmp/s", .err = VNIC_SOCKWIRE_SPEC_FRAMING},
	/* 12 */ {.s = "stream:udp:1.2.3.4:5", .err = VNIC_SOCKWIRE_SPEC_TRANSPORT},
	/* 13 */ {.s = "dgram:tcp:1.2.3.4:5,1.2.3.4:6", .err = VNIC_SOCKWIRE_SPEC_TRANSPORT},
	/* 14 */ {.s = "stream:unix:", .err = VNIC_SOCKWIRE_SPEC_PATH},
	/* 15 */ {.s = "stream:unix:,server", .err = VNIC_SOCKWIRE_SPEC_PATH},
	/* 16: 108 bytes: one more than sun_path holds with its NUL */
	{.s = "stream:unix:/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 .err = VNIC_SOCKWIRE_SPEC_PATH},
	/* 17 */ {.s = "stream:tcp:127.0.0.1", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 18 */ {.s = "stream:tcp:127.0.0.1:", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 19 */ {.s = "stream:tcp:127.0.0.1:65536", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 20 */ {.s = "stream:tcp:127.0.0.1:-1", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 21 */ {.s = "stream:tcp:127.0.0.1:12a", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 22: a client cannot connect to port 0 */
	{.s = "stream:tcp:127.0.0.1:0", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 23 */ {.s = "stream:tcp::5000", .err = VNIC_SOCKWIRE_SPEC_HOST},
	/* 24: IPv6 without its brackets */
	{.s = "stream:tcp:::1:5000", .err = VNIC_SOCKWIRE_SPEC_HOST},
	/* 25 */ {.s = "stream:tcp:[::1:5000", .err = VNIC_SOCKWIRE_SPEC_HOST},
	/* 26 */ {.s = "stream:tcp:[]:5000", .err = VNIC_SOCKWIRE_SPEC_HOST},
	/* 27 */ {.s = "stream:tcp:[::1]5000", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 28 */ {.s = "stream:tcp:1.2.3.4:5,client", .err = VNIC_SOCKWIRE_SPEC_OPTION},
	/* 29 */ {.s = "stream:tcp:1.2.3.4:5,server,server", .err = VNIC_SOCKWIRE_SPEC_OPTION},
	/* 30 */ {.s = "dgram:udp:127.0.0.1:5001", .err = VNIC_SOCKWIRE_SPEC_REMOTE},
	/* 31 */ {.s = "dgram:udp:127.0.0.1:5001,", .err = VNIC_SOCKWIRE_SPEC_REMOTE},
	/* 32: the remote must be a real port */
	{.s = "dgram:udp:127.0.0.1:5001,127.0.0.1:0", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 33 */
	{.s = "dgram:udp:127.0.0.1:5001,127.0.0.1:5002,x", .err = VNIC_SOCKWIRE_SPEC_OPTION},
	/* 34: a dgram wire has no server */
	{.s = "dgram:udp:127.0.0.1:5001,server", .err = VNIC_SOCKWIRE_SPEC_PORT},
	/* 35 */ {.s = "stream:tcp:a b:1", .err = VNIC_SOCKWIRE_SPEC_HOST},
};

static void test_spec(void **state)
{
	struct vnic_sockwire_spec sp;

	(void)state;
	for (unsigned int i = 0; i < sizeof(spec_cases) / sizeof(spec_cases[0]); i++) {
		const struct spec_case *c = &spec_cases[i];
		/* an exact-size heap copy: a read past the end is AddressSanitizer's */
		size_t len = strlen(c->s);
		char *s = malloc(len + 1);
		enum vnic_sockwire_spec_err err;

		memcpy(s, c->s, len + 1);
		err = vnic_sockwire_parse(s, &sp);
		if (err != c->err)
			fail_msg("case %u '%s': %s, expected %s", i + 1, c->s,
				 vnic_sockwire_spec_err_str(err),
				 vnic_sockwire_spec_err_str(c->err));
		free(s);
		if (c->err)
			continue;
		assert_int_equal(sp.kind, c->kind);
		assert_int_equal(sp.server, c->server);
		if (c->kind == VNIC_SOCKWIRE_STREAM_UNIX) {
			assert_string_equal(sp.path, c->host);
			continue;
		}
		assert_string_equal(sp.local.host, c->host);
		assert_int_equal(sp.local.port, c->port);
		if (c->rhost) {
			assert_string_equal(sp.remote.host, c->rhost);
			assert_int_equal(sp.remote.port, c->rport);
		}
	}
	assert_int_equal(vnic_sockwire_parse(NULL, &sp), VNIC_SOCKWIRE_SPEC_FRAMING);
	for (int e = 1; e < VNIC_SOCKWIRE_SPEC_MAX; e++)
		assert_string_not_equal(vnic_sockwire_spec_err_str(e), "unknown");
	assert_string_equal(vnic_sockwire_spec_err_str(VNIC_SOCKWIRE_SPEC_MAX), "unknown");
}

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t stat_of(struct vnic_wire *w, const char *name)
{
	struct vnic_counter c[40];
	unsigned int n = vnic_sockwire_counters(w, c, 40);

	assert_true(n <= 40);
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return c[i].value;
	fail_msg("no counter %s", name);
	return 0;
}

static uint64_t drops_of(struct vnic_wire *w)
{
	struct vnic_counter c[40];
	unsigned int n = vnic_sockwire_counters(w, c, 40);
	uint64_t sum = 0;

	for (unsigned int i = 0; i < n; i++)
		if (strstr(c[i].name, "drop_"))
			sum += c[i].value;
	return sum;
}

static struct vnic_wire *wire_of(const char *spec, struct vnic_cpu *cpu)
{
	struct vnic_sockwire_spec sp;
	struct vnic_wire *w = NULL;
	int err;

	assert_int_equal(vnic_sockwire_parse(spec, &sp), VNIC_SOCKWIRE_SPEC_OK);
	err = vnic_sockwire_create(&w, &sp, MTU, cpu);
	if (err)
		fail_msg("%s: %s", spec, strerror(-err));
	assert_int_equal(w->mtu, MTU);
	assert_int_equal(w->frame_size, FS);
	return w;
}

/* A frame's bytes: a function of its sequence number and length only. */
static void fill(uint8_t *p, uint32_t len, uint32_t seq)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 131 + i * 7 + (i >> 8));
	p[0] = (uint8_t)(seq >> 24);
	p[1] = (uint8_t)(seq >> 16);
	p[2] = (uint8_t)(seq >> 8);
	p[3] = (uint8_t)seq;
	/* tagged: a frame may then be mtu + 18 bytes long */
	p[12] = 0x81;
	p[13] = 0x00;
}

static uint32_t seq_of(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool frame_is(const uint8_t *p, uint32_t len, uint32_t seq)
{
	uint8_t want[FS + 64];

	if (len > sizeof(want))
		return false;
	fill(want, len, seq);
	return !memcmp(p, want, len);
}

/* Commits frames seq.. of lengths len[0..n) on w. */
static void send_frames(struct vnic_wire *w, const uint32_t *len, unsigned int n, uint32_t seq)
{
	struct vnic_pkt *slots[BATCH];

	assert_true(n <= BATCH);
	assert_int_equal(w->ops->tx_reserve(w, slots, n), n);
	for (unsigned int i = 0; i < n; i++) {
		assert_true(vnic_pkt_tailroom(slots[i]) >= len[i]);
		fill(slots[i]->data, len[i], seq + i);
		slots[i]->len = len[i];
	}
	w->ops->tx_commit(w, slots, n, n);
}

/*
 * Takes frames until `want` came, each checked against (seq, len) in
 * order; steps the cpus meanwhile (connections, a short write's rest).
 */
static void take_frames(struct vnic_wire *w, struct vnic_cpu **cpus, unsigned int ncpus,
			const uint32_t *len, unsigned int want, uint32_t seq)
{
	uint64_t end = vnic_now_ns() + GUARD_NS;
	unsigned int got = 0;

	while (got < want) {
		struct vnic_pkt *f[BATCH];
		unsigned int n = w->ops->rx_peek(w, f, BATCH), i;

		for (i = 0; i < n && got < want; i++, got++) {
			if (f[i]->len != len[got] || !frame_is(f[i]->data, f[i]->len, seq + got))
				fail_msg("frame %u: %u bytes, seq %u; expected %u bytes, seq %u",
					 seq + got, f[i]->len,
					 f[i]->len >= 4 ? seq_of(f[i]->data) : 0, len[got],
					 seq + got);
		}
		w->ops->rx_release(w, i);
		if (!n) {
			for (unsigned int c = 0; c < ncpus; c++)
				vnic_cpu_run_once(cpus[c]);
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(50);
		}
	}
}

struct pair {
	struct vnic_cpu cpu[2];
	struct vnic_cpu *cpus[2];
	struct vnic_wire *w[2];
};

static bool both_up(void *ctx)
{
	struct pair *p = ctx;

	return stat_of(p->w[0], "connected") && stat_of(p->w[1], "connected");
}

static void pair_cpus(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(vnic_cpu_init(&p->cpu[i], i ? "b" : "a", 0), 0);
		p->cpus[i] = &p->cpu[i];
	}
}

static void pair_wait_up(struct pair *p)
{
	assert_int_equal(vnic_cpus_run_until(p->cpus, 2, both_up, p, GUARD_NS), 0);
}

/*
 * Wire i goes, and its cpu is made anew: a cpu keeps the pollers and fds of
 * what ran on it (core has no removal), and the next wire takes the same fd
 * numbers.
 */
static void pair_drop(struct pair *p, int i)
{
	vnic_sockwire_destroy(p->w[i]);
	p->w[i] = NULL;
	vnic_cpu_fini(&p->cpu[i]);
	assert_int_equal(vnic_cpu_init(&p->cpu[i], i ? "b" : "a", 0), 0);
}

static void pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		vnic_sockwire_destroy(p->w[i]);
		vnic_cpu_fini(&p->cpu[i]);
	}
}

/* Every size from 14 to frame_size, both ways, in batches. */
static void carry_all_sizes(struct pair *p)
{
	uint32_t len[BATCH];
	uint32_t seq = 0;

	for (int dir = 0; dir < 2; dir++) {
		struct vnic_wire *tx = p->w[dir], *rx = p->w[1 - dir];

		for (uint32_t l = VNIC_ETH_HLEN; l <= FS;) {
			unsigned int n = 0;

			while (n < BATCH && l <= FS)
				len[n++] = l++;
			send_frames(tx, len, n, seq);
			take_frames(rx, p->cpus, 2, len, n, seq);
			seq += n;
		}
		assert_int_equal(stat_of(tx, "tx_frames"), FS - VNIC_ETH_HLEN + 1);
		assert_int_equal(stat_of(rx, "rx_frames"), FS - VNIC_ETH_HLEN + 1);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(drops_of(p->w[i]), 0);
		assert_int_equal(stat_of(p->w[i], "rx_broken_streams"), 0);
	}
}

/* ---- two wires joined ---------------------------------------------------------- */

static void test_unix_pair(void **state)
{
	char spec[256];
	struct pair p;

	(void)state;
	pair_cpus(&p);
	snprintf(spec, sizeof(spec), "stream:unix:%s,server", path);
	p.w[0] = wire_of(spec, &p.cpu[0]);
	snprintf(spec, sizeof(spec), "stream:unix:%s", path);
	p.w[1] = wire_of(spec, &p.cpu[1]);
	assert_int_equal(vnic_sockwire_local_port(p.w[0]), 0);
	pair_wait_up(&p);
	assert_int_equal(stat_of(p.w[0], "connects"), 1);
	assert_int_equal(stat_of(p.w[1], "connects"), 1);
	carry_all_sizes(&p);
	pair_close(&p);
	/* the server removed its socket file */
	assert_int_equal(access(path, F_OK), -1);
}

static void test_tcp_pair(void **state)
{
	char spec[256];
	struct pair p;
	int port;

	(void)state;
	pair_cpus(&p);
	p.w[0] = wire_of("stream:tcp:127.0.0.1:0,server", &p.cpu[0]);
	port = vnic_sockwire_local_port(p.w[0]);
	assert_true(port > 0);
	snprintf(spec, sizeof(spec), "stream:tcp:127.0.0.1:%d", port);
	p.w[1] = wire_of(spec, &p.cpu[1]);
	pair_wait_up(&p);
	carry_all_sizes(&p);
	pair_close(&p);
}

/* A UDP port nobody holds right now. */
static int free_udp_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	close(s);
	return ntohs(a.sin_port);
}

static void udp_pair(struct pair *p, int *ports)
{
	char spec[256];

	pair_cpus(p);
	ports[0] = free_udp_port();
	do
		ports[1] = free_udp_port();
	while (ports[1] == ports[0]);
	snprintf(spec, sizeof(spec), "dgram:udp:127.0.0.1:%d,127.0.0.1:%d", ports[0], ports[1]);
	p->w[0] = wire_of(spec, &p->cpu[0]);
	snprintf(spec, sizeof(spec), "dgram:udp:127.0.0.1:%d,127.0.0.1:%d", ports[1], ports[0]);
	p->w[1] = wire_of(spec, &p->cpu[1]);
	assert_int_equal(vnic_sockwire_local_port(p->w[0]), ports[0]);
}

static void test_udp_pair(void **state)
{
	struct pair p;
	int ports[2];

	(void)state;
	udp_pair(&p, ports);
	assert_true(both_up(&p));
	carry_all_sizes(&p);
	pair_close(&p);
}

/*
 * Runs of equal frames (a bulk TCP flow's segments) leave as one GSO send
 * and may arrive merged (UDP_GRO): each must still come out as the frame it
 * was, a shorter one ending a run included, in order.
 */
static void test_udp_runs(void **state)
{
	static const uint32_t runs[][BATCH] = {
		{FS, FS, FS, FS, FS, FS, FS, FS, FS, FS, FS, FS, FS, FS, FS, 700},
		{60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60},
		{1514, 1514, 1514, 66, 1514, 1514, 14, 14, FS, 1000, 1000, 1001, 1000, 999, 999,
		 999},
	};
	struct pair p;
	int ports[2];
	uint32_t seq = 0;

	(void)state;
	udp_pair(&p, ports);
	for (int round = 0; round < 20; round++)
		for (unsigned int r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
			send_frames(p.w[0], runs[r], BATCH, seq);
			take_frames(p.w[1], p.cpus, 2, runs[r], BATCH, seq);
			seq += BATCH;
		}
	print_message("%u frames in %llu sends and %llu receives\n", seq,
		      (unsigned long long)stat_of(p.w[0], "tx_syscalls"),
		      (unsigned long long)stat_of(p.w[1], "rx_syscalls"));
	assert_int_equal(stat_of(p.w[0], "tx_frames"), seq);
	assert_int_equal(stat_of(p.w[1], "rx_frames"), seq);
	assert_int_equal(drops_of(p.w[0]) + drops_of(p.w[1]), 0);
	pair_close(&p);
}

/* Datagrams: too long and runt dropped by reason; a stranger's never received. */
static void test_udp_bad(void **state)
{
	struct sockaddr_in peer = {.sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t big[FS + 1];
	uint32_t len[1] = {100};
	struct pair p;
	int ports[2], raw, stranger;

	(void)state;
	udp_pair(&p, ports);
	/* wire 1 goes; a raw socket takes its address */
	pair_drop(&p, 1);
	raw = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	stranger = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	peer.sin_port = htons((uint16_t)ports[1]);
	assert_int_equal(bind(raw, (struct sockaddr *)&peer, sizeof(peer)), 0);
	peer.sin_port = htons((uint16_t)ports[0]);
	assert_int_equal(connect(raw, (struct sockaddr *)&peer, sizeof(peer)), 0);
	assert_int_equal(connect(stranger, (struct sockaddr *)&peer, sizeof(peer)), 0);

	fill(big, sizeof(big), 7);
	assert_int_equal(send(stranger, big, 100, 0), 100);
	assert_int_equal(send(raw, big, VNIC_ETH_HLEN - 1, 0), VNIC_ETH_HLEN - 1);
	assert_int_equal(send(raw, big, FS + 1, 0), FS + 1);
	assert_int_equal(send(raw, big, FS, 0), FS); /* the largest: taken */
	fill(big, 100, 8);
	assert_int_equal(send(raw, big, 100, 0), 100);
	{
		uint32_t l2[2] = {FS, 100};
		struct vnic_pkt *f[4];
		unsigned int n;
		uint64_t end = vnic_now_ns() + GUARD_NS;

		/* the two good ones, in order; nothing of the stranger's */
		while ((n = p.w[0]->ops->rx_peek(p.w[0], f, 4)) == 0) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(100);
		}
		assert_int_equal(f[0]->len, l2[0]);
		assert_true(frame_is(f[0]->data, f[0]->len, 7));
		p.w[0]->ops->rx_release(p.w[0], 1);
		take_frames(p.w[0], p.cpus, 1, len, 1, 8);
	}
	assert_int_equal(stat_of(p.w[0], "rx_frames"), 2);
	assert_int_equal(stat_of(p.w[0], "rx_drop_runt"), 1);
	assert_int_equal(stat_of(p.w[0], "rx_drop_too_long"), 1);
	close(raw);
	close(stranger);
	pair_close(&p);
}

/* ---- a raw stream peer ---------------------------------------------------------- */

static int raw_connect(const char *to)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", to);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	return s;
}

static void raw_send(int s, const void *buf, size_t len)
{
	assert_int_equal(send(s, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* A good frame with its length field, as QEMU writes it. */
static void raw_frame(int s, uint32_t len, uint32_t seq)
{
	uint8_t b[4 + FS];

	b[0] = (uint8_t)(len >> 24);
	b[1] = (uint8_t)(len >> 16);
	b[2] = (uint8_t)(len >> 8);
	b[3] = (uint8_t)len;
	fill(b + 4, len, seq);
	raw_send(s, b, 4 + len);
}

/* The wire closed the connection: the raw peer reads EOF (or a reset). */
static void raw_sees_close(int s, struct vnic_cpu *cpu)
{
	uint64_t end = vnic_now_ns() + GUARD_NS;
	char b[256];

	for (;;) {
		ssize_t r = recv(s, b, sizeof(b), MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return;
		assert_true(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
		vnic_cpu_run_once(cpu);
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(100);
	}
}

static bool w_up(void *ctx)
{
	return stat_of(ctx, "connected") == 1;
}

static void wait_up(struct vnic_cpu *cpu, struct vnic_wire *w)
{
	struct vnic_cpu *cpus[1] = {cpu};

	assert_int_equal(vnic_cpus_run_until(cpus, 1, w_up, w, GUARD_NS), 0);
}

/* A stream frame arrives in pieces: nothing before its last byte, then all of it. */
static void test_cut_across_reads(void **state)
{
	static const unsigned int cuts[] = {1, 2, 3, 4, 5, 17, 600, FS + 3};
	struct vnic_cpu cpu, *cpus[1] = {&cpu};
	uint8_t b[4 + FS];
	char spec[256];
	struct vnic_wire *w;
	int s;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "a", 0), 0);
	snprintf(spec, sizeof(spec), "stream:unix:%s,server", path);
	w = wire_of(spec, &cpu);
	s = raw_connect(path);
	wait_up(&cpu, w);
	for (unsigned int c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		uint32_t len = FS, seq = 100 + c;
		struct vnic_pkt *f[2];

		b[0] = 0;
		b[1] = 0;
		b[2] = (uint8_t)(len >> 8);
		b[3] = (uint8_t)len;
		fill(b + 4, len, seq);
		/* every piece but the last: the wire must wait */
		for (uint32_t at = 0; at < cuts[c] && at < 4 + len - 1; at++) {
			raw_send(s, b + at, 1);
			for (int k = 0; k < 3; k++)
				assert_int_equal(w->ops->rx_peek(w, f, 2), 0);
		}
		if (cuts[c] < 4 + len - 1)
			raw_send(s, b + cuts[c], 4 + len - 1 - cuts[c]);
		assert_int_equal(w->ops->rx_peek(w, f, 2), 0);
		raw_send(s, b + 4 + len - 1, 1);
		take_frames(w, cpus, 1, &len, 1, seq);
	}
	assert_int_equal(drops_of(w), 0);
	assert_int_equal(stat_of(w, "disconnects"), 0);
	close(s);
	vnic_sockwire_destroy(w);
	vnic_cpu_fini(&cpu);
}

/*
 * What a raw peer writes after a good frame: a length field (hdr_bytes of
 * it), body bytes, and maybe its EOF. The counter that must move by one,
 * and whether the wire closes the connection for it.
 */
struct bad_case {
	const char *name;
	uint32_t len_field;
	unsigned int hdr_bytes;
	uint32_t body;
	bool eof;
	const char *counter;
	bool resets; /* the connection ends (the wire's close, or the peer's EOF) */
	bool broken; /* ... because the stream broke */
	/* body bytes sent before the wire has looked at the frame (~0u: none); 0: all at once */
	uint32_t first;
};

static const struct bad_case bad_cases[] = {
	/* 1 */ {"one byte too long, skipped", FS + 1, 4, FS + 1, false, "rx_drop_too_long", false,
		 false, 0},
	/* 2 */
	{"the longest length, skipped", VNIC_SOCKWIRE_MAX_LEN, 4, VNIC_SOCKWIRE_MAX_LEN, false,
	 "rx_drop_too_long", false, false, 0},
	/* 3 */ {"runt of 13", 13, 4, 13, false, "rx_drop_runt", false, false, 0},
	/* 4 */ {"runt of 1", 1, 4, 1, false, "rx_drop_runt", false, false, 0},
	/* 5 */ {"zero length", 0, 4, 20, false, "rx_drop_zero_len", true, true, 0},
	/* 6 */
	{"one past the longest", VNIC_SOCKWIRE_MAX_LEN + 1, 4, 20, false, "rx_drop_bad_len", true,
	 true, 0},
	/* 7 */ {"0xffffffff", 0xffffffffu, 4, 20, false, "rx_drop_bad_len", true, true, 0},
	/* 8 */ {"EOF inside a frame", 100, 4, 50, true, "rx_drop_eof_mid_frame", true, true, 0},
	/* 9 */
	{"EOF inside a length field", 100, 2, 0, true, "rx_drop_eof_mid_frame", true, true, 0},
	/* 10 */
	{"EOF inside a frame being skipped", FS + 100, 4, 10, true, "rx_drop_eof_mid_frame", true,
	 true, 0},
	/* 11: an EOF right after a whole (if bad) frame is a clean end */
	{"runt of 13 then EOF", 13, 4, 13, true, "rx_drop_runt", true, false, 0},
	/* 12: its rest is skipped as it comes, in later reads */
	{"too long, the rest later", FS + 1000, 4, FS + 1000, false, "rx_drop_too_long", false,
	 false, 100},
	/* 13 */
	{"the longest length, the rest later", VNIC_SOCKWIRE_MAX_LEN, 4, VNIC_SOCKWIRE_MAX_LEN,
	 false, "rx_drop_too_long", false, false, 1},
	/* 14 */
	{"too long, its length field alone first", FS + 1, 4, FS + 1, false, "rx_drop_too_long",
	 false, false, ~0u},
};

/* Peeks until the counter of case c moved: the wire has looked at the bad frame. */
static void wait_counted(struct vnic_wire *w, const struct bad_case *c, uint64_t before)
{
	uint64_t end = vnic_now_ns() + GUARD_NS;
	struct vnic_pkt *f[2];

	while (stat_of(w, c->counter) == before) {
		assert_int_equal(w->ops->rx_peek(w, f, 2), 0);
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(100);
	}
}

/* Body bytes [from, to) of a case. */
static void bad_body(int s, uint32_t from, uint32_t to)
{
	uint8_t *b = malloc(to - from);

	assert_non_null(b);
	memset(b, 0x5a, to - from);
	raw_send(s, b, to - from);
	free(b);
}

static void bad_bytes(int s, const struct bad_case *c)
{
	uint8_t *b = calloc(1, 4 + (size_t)c->body);

	assert_non_null(b);
	b[0] = (uint8_t)(c->len_field >> 24);
	b[1] = (uint8_t)(c->len_field >> 16);
	b[2] = (uint8_t)(c->len_field >> 8);
	b[3] = (uint8_t)c->len_field;
	memset(b + 4, 0x5a, c->body);
	raw_send(s, b, c->hdr_bytes);
	if (c->body && !c->first)
		raw_send(s, b + 4, c->body);
	else if (c->first != ~0u)
		raw_send(s, b + 4, c->first);
	free(b);
}

/*
 * Each case on one wire, which listens (the raw peer connects) or connects
 * (to the raw peer's listener): a good frame before it arrives, the counter
 * moves, a broken stream is closed and the next connection carries a good
 * frame; a frame that is only dropped leaves the stream up.
 */
static void run_bad_cases(bool wire_listens)
{
	struct vnic_cpu cpu, *cpus[1] = {&cpu};
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vnic_wire *w;
	char spec[256];
	int lst = -1, s;
	uint32_t seq = 1000;

	assert_int_equal(vnic_cpu_init(&cpu, "a", 0), 0);
	if (wire_listens) {
		snprintf(spec, sizeof(spec), "stream:unix:%s,server", path);
	} else {
		lst = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		assert_int_equal(bind(lst, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(listen(lst, 4), 0);
		snprintf(spec, sizeof(spec), "stream:unix:%s", path);
	}
	w = wire_of(spec, &cpu);

	for (unsigned int i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		uint64_t before = stat_of(w, c->counter);
		uint64_t down = stat_of(w, "disconnects"), broken = stat_of(w, "rx_broken_streams");
		uint32_t len = 200;

		print_message("case %u: %s\n", i + 1, c->name);
		if (wire_listens) {
			s = raw_connect(path);
		} else {
			uint64_t end = vnic_now_ns() + GUARD_NS;

			/* the wire connects from its cpu, after its backoff */
			while ((s = accept4(lst, NULL, NULL, SOCK_CLOEXEC)) < 0) {
				vnic_cpu_run_once(&cpu);
				assert_true(vnic_now_ns() < end);
				vnic_test_nap_us(200);
			}
		}
		wait_up(&cpu, w);
		raw_frame(s, len, seq);
		bad_bytes(s, c);
		take_frames(w, cpus, 1, &len, 1, seq++);
		if (c->first) {
			/* counted from its length field; its rest arrives in later reads */
			wait_counted(w, c, before);
			bad_body(s, c->first == ~0u ? 0 : c->first, c->body);
		}
		if (c->eof)
			shutdown(s, SHUT_WR);
		if (!c->resets) {
			raw_frame(s, len, seq);
			take_frames(w, cpus, 1, &len, 1, seq++);
		} else {
			struct vnic_pkt *f[2];

			/* the wire reads on to the break, closes, and says why */
			while (stat_of(w, "disconnects") == down) {
				assert_int_equal(w->ops->rx_peek(w, f, 2), 0);
				vnic_cpu_run_once(&cpu);
				vnic_test_nap_us(100);
			}
			raw_sees_close(s, &cpu);
		}
		if (stat_of(w, c->counter) != before + 1)
			fail_msg("case %u (%s): %s %llu, expected %llu", i + 1, c->name, c->counter,
				 (unsigned long long)stat_of(w, c->counter),
				 (unsigned long long)before + 1);
		assert_int_equal(stat_of(w, "disconnects"), down + c->resets);
		assert_int_equal(stat_of(w, "rx_broken_streams"), broken + c->broken);
		close(s);
		if (!c->resets) {
			/* our own close: the wire sees an EOF, not a broken stream */
			struct vnic_pkt *f[2];
			uint64_t end = vnic_now_ns() + GUARD_NS;

			while (stat_of(w, "disconnects") == down) {
				assert_int_equal(w->ops->rx_peek(w, f, 2), 0);
				assert_true(vnic_now_ns() < end);
				vnic_test_nap_us(100);
			}
			assert_int_equal(stat_of(w, "rx_broken_streams"), broken);
		}
	}
	/* the last connection after all of them still carries frames */
	if (wire_listens) {
		s = raw_connect(path);
	} else {
		uint64_t end = vnic_now_ns() + GUARD_NS;

		while ((s = accept4(lst, NULL, NULL, SOCK_CLOEXEC)) < 0) {
			vnic_cpu_run_once(&cpu);
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(200);
		}
	}
	wait_up(&cpu, w);
	{
		uint32_t len = FS;

		raw_frame(s, len, seq);
		take_frames(w, cpus, 1, &len, 1, seq);
	}
	assert_int_equal(stat_of(w, "connects"), sizeof(bad_cases) / sizeof(bad_cases[0]) + 1);
	assert_int_equal(stat_of(w, "reconnects"), sizeof(bad_cases) / sizeof(bad_cases[0]));
	close(s);
	vnic_sockwire_destroy(w);
	if (lst >= 0) {
		close(lst);
		unlink(path);
	}
	vnic_cpu_fini(&cpu);
}

static void test_bad_stream_server(void **state)
{
	(void)state;
	run_bad_cases(true);
}

static void test_bad_stream_client(void **state)
{
	(void)state;
	run_bad_cases(false);
}

/* ---- peers that go away --------------------------------------------------------- */

static void test_peer_returns(void **state)
{
	uint32_t len[2] = {60, 1000};
	char server[256], client[256];
	struct pair p;
	uint64_t end;

	(void)state;
	pair_cpus(&p);
	snprintf(server, sizeof(server), "stream:unix:%s,server", path);
	snprintf(client, sizeof(client), "stream:unix:%s", path);
	p.w[0] = wire_of(server, &p.cpu[0]);
	p.w[1] = wire_of(client, &p.cpu[1]);
	pair_wait_up(&p);
	send_frames(p.w[1], len, 2, 1);
	take_frames(p.w[0], p.cpus, 2, len, 2, 1);

	/* the client goes: the server sees the EOF, and drops what it sends meanwhile */
	pair_drop(&p, 1);
	end = vnic_now_ns() + GUARD_NS;
	while (stat_of(p.w[0], "connected")) {
		struct vnic_pkt *f[2];

		assert_int_equal(p.w[0]->ops->rx_peek(p.w[0], f, 2), 0);
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(100);
	}
	assert_int_equal(stat_of(p.w[0], "disconnects"), 1);
	assert_int_equal(stat_of(p.w[0], "rx_broken_streams"), 0);
	send_frames(p.w[0], len, 2, 3);
	assert_int_equal(stat_of(p.w[0], "tx_drop_no_peer"), 2);

	/* it comes back: traffic resumes both ways */
	p.w[1] = wire_of(client, &p.cpu[1]);
	pair_wait_up(&p);
	assert_int_equal(stat_of(p.w[0], "reconnects"), 1);
	send_frames(p.w[0], len, 2, 5);
	take_frames(p.w[1], p.cpus, 2, len, 2, 5);
	send_frames(p.w[1], len, 2, 7);
	take_frames(p.w[0], p.cpus, 2, len, 2, 7);

	/* now the server goes (its socket file with it): the client retries */
	pair_drop(&p, 0);
	end = vnic_now_ns() + GUARD_NS;
	while (stat_of(p.w[1], "connect_errors") < 3) {
		struct vnic_pkt *f[2];

		p.w[1]->ops->rx_peek(p.w[1], f, 2);
		vnic_cpu_run_once(&p.cpu[1]);
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(500);
	}
	assert_int_equal(stat_of(p.w[1], "connected"), 0);
	send_frames(p.w[1], len, 2, 9);
	assert_int_equal(stat_of(p.w[1], "tx_drop_no_peer"), 2);
	/* a new server on the same path: the client finds it by itself */
	p.w[0] = wire_of(server, &p.cpu[0]);
	pair_wait_up(&p);
	assert_int_equal(stat_of(p.w[1], "reconnects"), 1);
	send_frames(p.w[1], len, 2, 11);
	take_frames(p.w[0], p.cpus, 2, len, 2, 11);
	pair_close(&p);
}

/* A server refuses a PATH another server listens on, and takes over a stale one. */
static void test_unix_path(void **state)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct vnic_sockwire_spec sp;
	struct vnic_cpu cpu;
	struct vnic_wire *w = NULL, *w2 = NULL;
	char spec[256];
	int s;

	(void)state;
	assert_int_equal(vnic_cpu_init(&cpu, "a", 0), 0);
	snprintf(spec, sizeof(spec), "stream:unix:%s,server", path);
	assert_int_equal(vnic_sockwire_parse(spec, &sp), 0);
	/* a stale socket file: bound, never listening, closed */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s);
	assert_int_equal(vnic_sockwire_create(&w, &sp, MTU, &cpu), 0);
	assert_int_equal(vnic_sockwire_create(&w2, &sp, MTU, &cpu), -EADDRINUSE);
	assert_null(w2);
	/* nor a file that is not a socket */
	vnic_sockwire_destroy(w);
	s = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(s >= 0);
	close(s);
	assert_int_equal(vnic_sockwire_create(&w2, &sp, MTU, &cpu), -EADDRINUSE);
	assert_int_equal(unlink(path), 0);
	/* the other errors a user meets */
	assert_int_equal(vnic_sockwire_create(&w2, &sp, 10, &cpu), -EINVAL);
	assert_int_equal(vnic_sockwire_create(&w2, NULL, MTU, &cpu), -EINVAL);
	assert_int_equal(vnic_sockwire_create(&w2, &sp, MTU, NULL), -EINVAL);
	assert_int_equal(vnic_sockwire_parse("stream:tcp:no-such-host.invalid:5", &sp), 0);
	assert_int_equal(vnic_sockwire_create(&w2, &sp, MTU, &cpu), -EADDRNOTAVAIL);
	vnic_cpu_fini(&cpu);
}

/* ---- a full socket buffer ----------------------------------------------------- */

/* Large frames mostly, so that a batch is more than one unix socket buffer's chunk. */
static uint32_t len_of(uint32_t seq)
{
	return seq % 5 ? FS - (seq * 389) % 300
		       : VNIC_ETH_HLEN + (seq * 389) % (FS - VNIC_ETH_HLEN);
}

/*
 * The receiver does not read: commits fill the socket, whole frames are
 * dropped, a write the kernel takes in part is finished later. Then every
 * frame that left must arrive intact and in order: the stream kept its
 * framing (no broken stream, no drop at the receiver).
 */
static void full_socket(bool tcp)
{
	char spec[256];
	struct pair p;
	uint32_t seq = 0, next = 0, got = 0;
	uint64_t end;

	pair_cpus(&p);
	if (tcp) {
		p.w[0] = wire_of("stream:tcp:127.0.0.1:0,server", &p.cpu[0]);
		snprintf(spec, sizeof(spec), "stream:tcp:127.0.0.1:%d",
			 vnic_sockwire_local_port(p.w[0]));
	} else {
		snprintf(spec, sizeof(spec), "stream:unix:%s,server", path);
		p.w[0] = wire_of(spec, &p.cpu[0]);
		snprintf(spec, sizeof(spec), "stream:unix:%s", path);
	}
	p.w[1] = wire_of(spec, &p.cpu[1]);
	pair_wait_up(&p);
	/* until the socket has refused whole frames and taken one in part */
	end = vnic_now_ns() + GUARD_NS;
	while (!stat_of(p.w[1], "tx_drop_full") || !stat_of(p.w[1], "tx_short_writes")) {
		struct vnic_pkt *slots[64];
		unsigned int n = p.w[1]->ops->tx_reserve(p.w[1], slots, 64);

		for (unsigned int i = 0; i < n; i++) {
			slots[i]->len = len_of(seq);
			fill(slots[i]->data, slots[i]->len, seq++);
		}
		p.w[1]->ops->tx_commit(p.w[1], slots, n, n);
		assert_true(vnic_now_ns() < end);
	}
	/* the receiver reads now; every frame that left arrives, in order */
	while (got < stat_of(p.w[1], "tx_frames")) {
		struct vnic_pkt *f[BATCH];
		unsigned int n = p.w[0]->ops->rx_peek(p.w[0], f, BATCH);

		for (unsigned int i = 0; i < n; i++) {
			uint32_t s = seq_of(f[i]->data);

			if (s < next || f[i]->len != len_of(s) ||
			    !frame_is(f[i]->data, f[i]->len, s))
				fail_msg("frame %u after %u: %u bytes, not intact", s, next,
					 f[i]->len);
			next = s + 1;
		}
		p.w[0]->ops->rx_release(p.w[0], n);
		got += n;
		if (!n) {
			vnic_cpu_run_once(&p.cpu[1]); /* the short write's rest goes on EPOLLOUT */
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(50);
		}
	}
	print_message("%llu frames left, %llu dropped whole, %llu short writes\n",
		      (unsigned long long)stat_of(p.w[1], "tx_frames"),
		      (unsigned long long)stat_of(p.w[1], "tx_drop_full"),
		      (unsigned long long)stat_of(p.w[1], "tx_short_writes"));
	assert_int_equal(got, stat_of(p.w[1], "tx_frames"));
	assert_int_equal(stat_of(p.w[1], "tx_frames") + stat_of(p.w[1], "tx_drop_full"), seq);
	assert_int_equal(drops_of(p.w[0]), 0);
	assert_int_equal(stat_of(p.w[0], "rx_broken_streams"), 0);
	assert_int_equal(stat_of(p.w[0], "disconnects"), 0);
	/* and the stream goes on */
	{
		uint32_t l = 77;

		send_frames(p.w[1], &l, 1, seq);
		take_frames(p.w[0], p.cpus, 2, &l, 1, seq);
	}
	pair_close(&p);
}

static void test_full_unix(void **state)
{
	(void)state;
	full_socket(false);
}

static void test_full_tcp(void **state)
{
	(void)state;
	full_socket(true);
}

/* ---- notification ------------------------------------------------------------- */

struct note {
	unsigned int n;
};

static void on_notify(void *ctx)
{
	((struct note *)ctx)->n++;
}

static bool notified(void *ctx)
{
	return ((struct note *)ctx)->n > 0;
}

static void test_notify(void **state)
{
	struct note note = {0};
	uint32_t len = 64;
	struct pair p;
	int ports[2];

	(void)state;
	for (int kind = 0; kind < 2; kind++) {
		char spec[256];
		struct vnic_wire *rx;

		if (kind) {
			udp_pair(&p, ports);
		} else {
			pair_cpus(&p);
			snprintf(spec, sizeof(spec), "stream:unix:%s,server", path);
			p.w[0] = wire_of(spec, &p.cpu[0]);
			snprintf(spec, sizeof(spec), "stream:unix:%s", path);
			p.w[1] = wire_of(spec, &p.cpu[1]);
			pair_wait_up(&p);
		}
		rx = p.w[0];
		note.n = 0;
		rx->notify = on_notify;
		rx->notify_ctx = &note;
		/* disarmed: a frame notifies nobody */
		send_frames(p.w[1], &len, 1, 1);
		for (int k = 0; k < 20; k++) {
			vnic_cpu_run_once(&p.cpu[0]);
			vnic_test_nap_us(100);
		}
		assert_int_equal(note.n, 0);
		take_frames(rx, p.cpus, 1, &len, 1, 1);
		assert_false(rx->ops->rx_irq->pending(rx));
		assert_int_equal(rx->ops->rx_next_ns(rx), 0);
		/* armed: one notification, which disarms */
		rx->ops->rx_irq->enable(rx);
		send_frames(p.w[1], &len, 1, 2);
		assert_int_equal(vnic_cpus_run_until(&p.cpus[0], 1, notified, &note, GUARD_NS), 0);
		for (int k = 0; k < 20; k++)
			vnic_cpu_run_once(&p.cpu[0]);
		assert_int_equal(note.n, 1);
		assert_int_equal(stat_of(rx, "rx_notifies"), 1);
		take_frames(rx, p.cpus, 1, &len, 1, 2);
		rx->notify = NULL;
		pair_close(&p);
	}
}

/* ---- a vNIC pair over the socket wire ------------------------------------------ */

struct side {
	struct vnic_cpu cpu;
	struct vnic_hv *hv;
	struct vnic_wire *wire;
	struct vnic_dev *dev;
	struct vnic_drv *drv;
	struct vnic_pkt_pool host;
};

static struct side sides[2];

static void side_create(struct side *sd, const char *spec, unsigned int i)
{
	struct vnic_drv_config dcfg;

	memset(sd, 0, sizeof(*sd));
	assert_int_equal(vnic_cpu_init(&sd->cpu, i ? "sw-b" : "sw-a", 20000), 0);
	assert_int_equal(vnic_hv_create(&sd->hv, 128, NULL), 0);
	sd->wire = wire_of(spec, &sd->cpu);
	assert_int_equal(vnic_dev_create(&sd->dev, sd->hv, sd->wire, &sd->cpu, NULL), 0);
	vnic_drv_config_default(&dcfg);
	dcfg.cpu = &sd->cpu;
	dcfg.mac[0] = 0x02;
	dcfg.mac[5] = (uint8_t)(0x30 + i);
	assert_int_equal(vnic_drv_create(&sd->drv, sd->hv, &dcfg), 0);
	assert_int_equal(vnic_pkt_pool_init(&sd->host, 1024, VNIC_PKT_MAX_LEN + 256, 128), 0);
}

static void side_destroy(struct side *sd)
{
	vnic_drv_destroy(sd->drv);
	vnic_dev_destroy(sd->dev);
	vnic_hv_destroy(sd->hv);
	vnic_sockwire_destroy(sd->wire);
	vnic_pkt_pool_fini(&sd->host);
	vnic_cpu_fini(&sd->cpu);
}

static void test_vnic_over_tcp(void **state)
{
	struct vnic_stream_opts so = {.flows = 1, .bytes = 8 << 20};
	struct vnic_sockwire_stats st;
	struct vnic_work_results res;
	struct vnic_stream *stream;
	char spec[256];
	uint64_t end;
	int i;

	(void)state;
	side_create(&sides[0], "stream:tcp:127.0.0.1:0,server", 0);
	snprintf(spec, sizeof(spec), "stream:tcp:127.0.0.1:%d",
		 vnic_sockwire_local_port(sides[0].wire));
	side_create(&sides[1], spec, 1);
	assert_int_equal(vnic_stream_create(&stream, vnic_drv_netdev(sides[0].drv), &sides[0].host,
					    vnic_drv_netdev(sides[1].drv), &sides[1].host, &so),
			 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_cpu_start(&sides[i].cpu), 0);
	end = vnic_now_ns() + GUARD_NS;
	for (i = 0; i < 2; i++)
		while (!stat_of(sides[i].wire, "connected")) {
			assert_true(vnic_now_ns() < end);
			vnic_test_nap_us(1000);
		}
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_drv_open(sides[i].drv, NULL, 0, 0), 0);
	vnic_stream_start(stream);
	end = vnic_now_ns() + 4 * GUARD_NS;
	while (vnic_stream_flow_bytes(stream, 0) < so.bytes) {
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(5000);
	}
	vnic_stream_stop(stream);
	while (!vnic_stream_quiesced(stream)) {
		assert_true(vnic_now_ns() < end);
		vnic_test_nap_us(5000);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(vnic_drv_close(sides[i].drv, NULL, 0, 0), 0);
	for (i = 0; i < 2; i++)
		vnic_cpu_stop(&sides[i].cpu);

	vnic_stream_results(stream, &res);
	assert_int_equal(vnic_stream_flow_bytes(stream, 0), so.bytes);
	assert_int_equal(res.err.payload, 0);
	assert_int_equal(res.err.bad_csum, 0);
	for (i = 0; i < 2; i++) {
		vnic_sockwire_stats(sides[i].wire, &st);
		print_message(
			"wire %d: rx %llu frames in %llu recv, %llu notifies; tx %llu in %llu "
			"sendmsg; drops full %llu\n",
			i, (unsigned long long)st.rx_frames, (unsigned long long)st.rx_syscalls,
			(unsigned long long)st.rx_notifies, (unsigned long long)st.tx_frames,
			(unsigned long long)st.tx_syscalls, (unsigned long long)st.tx_drop_full);
		assert_true(st.rx_frames > 0 && st.tx_frames > 0);
		assert_int_equal(st.rx_broken_streams + st.rx_drop_too_long + st.rx_drop_runt +
					 st.tx_drop_mtu,
				 0);
	}
	/* superpackets were segmented onto the wire and written in batches */
	vnic_sockwire_stats(sides[0].wire, &st);
	assert_true(st.tx_frames > st.tx_syscalls);
	vnic_stream_destroy(stream);
	side_destroy(&sides[0]);
	side_destroy(&sides[1]);
}

static int setup(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test_setup(test_unix_pair, setup),
		cmocka_unit_test_setup(test_tcp_pair, setup),
		cmocka_unit_test_setup(test_udp_pair, setup),
		cmocka_unit_test_setup(test_udp_runs, setup),
		cmocka_unit_test_setup(test_udp_bad, setup),
		cmocka_unit_test_setup(test_cut_across_reads, setup),
		cmocka_unit_test_setup(test_bad_stream_server, setup),
		cmocka_unit_test_setup(test_bad_stream_client, setup),
		cmocka_unit_test_setup(test_peer_returns, setup),
		cmocka_unit_test_setup(test_unix_path, setup),
		cmocka_unit_test_setup(test_full_unix, setup),
		cmocka_unit_test_setup(test_full_tcp, setup),
		cmocka_unit_test_setup(test_notify, setup),
		cmocka_unit_test_setup(test_vnic_over_tcp, setup),
	};
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vnic-sockwire-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(path, sizeof(path), "%s/s", tmpdir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	rmdir(tmpdir);
	return rc;
}
