// SPDX-License-Identifier: MIT
/*
 * The TAP port against the real kernel (needs root and /dev/net/tun; skips
 * with 77 otherwise). The whole test runs in a fresh network namespace.
 *
 *   fake NIC cases (manual mode, one thread): a netdev written here records
 *   what xmit gets. The kernel transmits on the TAP (UDP sockets, a static
 *   neighbour, IPv6 off so nothing else talks):
 *     - create errors, name taken (-EBUSY), the interface goes at destroy;
 *     - TUNSETOFFLOAD from the features: partial checksums and a USO
 *       superpacket arrive as metadata; without the vnet header, complete
 *       frames; xmit_more never leaves a batch without its doorbell;
 *     - backpressure: a refusing queue stops the reading (the fd stays
 *       readable, nothing runs) until tx_wake, then all arrive in order;
 *     - delivery: packets handed to the host rx callback reach a UDP socket
 *       (complete, partial, DATA_VALID, a USO aggregate the kernel splits);
 *       bad GSO metadata is dropped and counted; the mirror sees both ways;
 *     - two queues: each packet goes to the tx queue its RSS hash picks and
 *       carries that hash; one queue: no hash is taken;
 *     - lone frames: a frame after an idle ends its burst without the EAGAIN
 *       read, a burst behind it is found by the cpu's next look.
 *   end to end (real threads, label "threaded"):
 *
 *     netns of the test                     netns of a child process
 *     10.9.0.1  vnA (TAP)                   vnB (TAP)  10.9.0.2
 *                 |                           ^
 *              driver A -> hv -> device A ==cable== device B -> hv -> driver B
 *
 *   a UDP echo and a 4 MiB TCP stream (TSO superpackets in, GRO aggregates
 *   out) go through two vNICs of the embedded topology.
 *
 * Waits are hang guards, never timing assertions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"
#include "pktgen.h"
#include "port/port.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

enum { REC_MAX = 256, REC_FRAME = 2048, GUARD_NS = 30000000000ull, UDP_PORT = 9000 };

/* ---- interface configuration by ioctl (no iproute2 needed) ------------------- */

/*
 * These return 0 or -errno instead of asserting: the child process of the
 * end-to-end test uses them too, and must never longjmp into its copy of
 * the test runner.
 */
static int ifc_ioctl(unsigned long req, void *arg)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (s < 0)
		return -errno;
	if (ioctl(s, req, arg) < 0)
		err = -errno;
	close(s);
	return err;
}

static int ifc_up(const char *name)
{
	struct ifreq ifr;
	int err;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	err = ifc_ioctl(SIOCGIFFLAGS, &ifr);
	if (err)
		return err;
	ifr.ifr_flags |= IFF_UP;
	return ifc_ioctl(SIOCSIFFLAGS, &ifr);
}

static void set_sin(struct sockaddr *sa, const char *ip)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)(void *)sa;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

/* Address with a /24, then up. */
static int ifc_config(const char *name, const char *ip)
{
	struct ifreq ifr;
	int err;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	set_sin(&ifr.ifr_addr, ip);
	err = ifc_ioctl(SIOCSIFADDR, &ifr);
	if (err)
		return err;
	set_sin(&ifr.ifr_netmask, "255.255.255.0");
	err = ifc_ioctl(SIOCSIFNETMASK, &ifr);
	return err ? err : ifc_up(name);
}

static int add_neigh(const char *name, const char *ip, const uint8_t mac[6])
{
	struct arpreq r;

	memset(&r, 0, sizeof(r));
	set_sin(&r.arp_pa, ip);
	r.arp_ha.sa_family = ARPHRD_ETHER;
	memcpy(r.arp_ha.sa_data, mac, 6);
	r.arp_flags = ATF_COM | ATF_PERM;
	snprintf(r.arp_dev, sizeof(r.arp_dev), "%s", name);
	return ifc_ioctl(SIOCSARP, &r);
}

/* New interfaces come without IPv6, so the kernel sends nothing on its own. */
static void ipv6_off(void)
{
	int fd = open("/proc/sys/net/ipv6/conf/default/disable_ipv6", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return; /* no IPv6 at all: nothing to silence */
	if (write(fd, "1", 1) != 1)
		print_message("could not turn IPv6 off\n");
	close(fd);
}

/* ---- a fake NIC that records what it is given ---------------------------------- */

struct rec {
	unsigned int q;
	bool more;
	uint32_t len;
	uint32_t hash;
	uint16_t gso_type, gso_size, gso_segs, csum_start, csum_offset;
	uint8_t ip_summed;
	uint8_t frame[REC_FRAME];
};

struct fake {
	struct vnic_netdev dev;
	struct vnic_cpu cpu;
	struct vnic_cpu *cpus[1];
	bool stopped;
	bool open_batch; /* the last xmit had xmit_more: a doorbell is owed */
	unsigned int nrec, others, busy;
	unsigned int wrong_cpu; /* xmit on queue q away from tx_cpu[q] */
	struct rec rec[REC_MAX];
};

static struct fake fk;
static struct vnic_pkt_pool pool;
static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x99};

/* UDP to our test port over IPv4: the frames the tests send. */
static bool is_test_frame(const struct vnic_pkt *pkt)
{
	struct vnic_hdrs h;

	return vnic_parse_frame(pkt->data, pkt->len, &h) == VNIC_PARSE_OK &&
	       h.l3_proto == VNIC_ETH_P_IP && h.l4_proto == VNIC_IPPROTO_UDP &&
	       (h.flags & VNIC_HDRS_F_L4) &&
	       (pkt->data[h.l4_off + 2] << 8 | pkt->data[h.l4_off + 3]) == UDP_PORT;
}

static int fake_xmit(struct vnic_netdev *dev, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	struct fake *f = dev->priv;
	struct rec *r;

	if (vnic_cpu_self() != vnic_netdev_tx_cpu(dev, q))
		f->wrong_cpu++;
	if (f->stopped) {
		f->busy++;
		return VNIC_TX_BUSY;
	}
	f->open_batch = more;
	if (!is_test_frame(pkt) || f->nrec >= REC_MAX) {
		f->others++;
		vnic_pkt_free(pkt);
		return VNIC_TX_OK;
	}
	r = &f->rec[f->nrec++];
	r->q = q;
	r->more = more;
	r->len = pkt->len;
	r->hash = pkt->hash;
	r->gso_type = pkt->gso_type;
	r->gso_size = pkt->gso_size;
	r->gso_segs = pkt->gso_segs;
	r->csum_start = pkt->csum_start;
	r->csum_offset = pkt->csum_offset;
	r->ip_summed = pkt->ip_summed;
	memcpy(r->frame, pkt->data, pkt->len < REC_FRAME ? pkt->len : REC_FRAME);
	vnic_pkt_free(pkt);
	return VNIC_TX_OK;
}

static bool fake_tx_stopped(struct vnic_netdev *dev, unsigned int q)
{
	(void)q;
	return ((struct fake *)dev->priv)->stopped;
}

static const struct vnic_netdev_ops fake_ops = {
	.xmit = fake_xmit,
	.tx_stopped = fake_tx_stopped,
};

static void fake_init(struct fake *f, uint32_t features, unsigned int nq)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x77};

	memset(f, 0, sizeof(*f));
	assert_int_equal(vnic_cpu_init(&f->cpu, "fake", 0), 0);
	f->cpus[0] = &f->cpu;
	f->dev.ops = &fake_ops;
	f->dev.priv = f;
	f->dev.name = "fake";
	f->dev.num_tx_queues = nq;
	f->dev.num_rx_queues = nq;
	f->dev.mtu = 1500;
	f->dev.features = features;
	f->dev.gso_max_size = VNIC_PKT_MAX_LEN;
	memcpy(f->dev.mac, mac, 6);
	for (unsigned int i = 0; i < nq; i++)
		f->dev.tx_cpu[i] = f->dev.rx_cpu[i] = &f->cpu;
}

static uint64_t counter(const struct vnic_tap *tap, const char *name)
{
	static struct vnic_counter c[1024];
	unsigned int n = vnic_tap_counters(tap, c, 1024);

	assert_true(n <= 1024);
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return c[i].value;
	fail_msg("no counter %s", name);
	return 0;
}

static unsigned int want_rec;

static bool enough_recs(void *ctx)
{
	(void)ctx;
	return fk.nrec >= want_rec;
}

static void run_until_recs(unsigned int n)
{
	want_rec = n;
	assert_int_equal(vnic_cpus_run_until(fk.cpus, 1, enough_recs, NULL, GUARD_NS), 0);
}

static int udp_to_peer(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin;

	assert_true(s >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(UDP_PORT);
	inet_pton(AF_INET, "10.7.0.2", &sin.sin_addr);
	assert_int_equal(connect(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return s;
}

/* A TAP "vt0" over the fake NIC, up, 10.7.0.1/24, the peer 10.7.0.2 known. */
static struct vnic_tap *tap_over_fake(uint32_t features, const struct vnic_tap_config *cfg,
				      unsigned int nq)
{
	struct vnic_tap *tap;

	fake_init(&fk, features, nq);
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, cfg), 0);
	assert_non_null(fk.dev.host);
	assert_ptr_equal(fk.dev.host_ctx, tap);
	assert_int_equal(vnic_tap_start(tap), 0);
	assert_int_equal(ifc_config(vnic_tap_ifname(tap), "10.7.0.1"), 0);
	assert_int_equal(add_neigh(vnic_tap_ifname(tap), "10.7.0.2", peer_mac), 0);
	return tap;
}

static void tap_over_fake_done(struct vnic_tap *tap, uint64_t kept)
{
	vnic_tap_stop(tap);
	vnic_cpu_run_once(&fk.cpu); /* the readers give back what they kept */
	assert_int_equal(counter(tap, "in0_drop_stopped"), kept);
	assert_int_equal(pool.nfree, pool.count);
	vnic_tap_destroy(tap);
	assert_null(fk.dev.host);
	assert_int_equal(pool.nfree, pool.count);
	vnic_cpu_fini(&fk.cpu);
}

/* ---- creation --------------------------------------------------------------- */

static void test_create_errors(void **state)
{
	struct vnic_tap_config cfg = {.ifname = "vt-busy"};
	struct vnic_tap *tap, *tap2;
	struct vnic_pkt_pool small;
	struct vnic_cpu other;

	(void)state;
	fake_init(&fk, 0, 2);
	cfg.ifname = "a-name-longer-than-ifnamsiz";
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, &cfg), -EINVAL);
	cfg.ifname = "vt-busy";
	cfg.queues = 3;
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, &cfg), -EINVAL);
	cfg.queues = 0;
	assert_int_equal(vnic_pkt_pool_init(&small, 4, 1024, 0), 0);
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &small, &cfg), -EINVAL);
	vnic_pkt_pool_fini(&small);
	/* a pool, a thread: queues on two cpus share none */
	assert_int_equal(vnic_cpu_init(&other, "other", 0), 0);
	fk.dev.tx_cpu[1] = &other;
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, &cfg), -EINVAL);
	cfg.pools[1] = &pool;
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, &cfg), -EINVAL);
	cfg.pools[1] = NULL;
	fk.dev.tx_cpu[1] = &fk.cpu;

	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, &cfg), 0);
	assert_string_equal(vnic_tap_ifname(tap), "vt-busy");
	assert_true(if_nametoindex("vt-busy") > 0);
	assert_true(vnic_tap_fd(tap, 0) >= 0);
	assert_true(vnic_tap_fd(tap, 1) >= 0);
	assert_int_equal(vnic_tap_fd(tap, 2), -1);
	assert_int_equal(counter(tap, "queues"), 2);
	assert_int_equal(counter(tap, "mtu"), 1500);
	/* the netdev has its host now */
	assert_int_equal(vnic_tap_create(&tap2, &fk.dev, &pool, NULL), -EINVAL);

	/* the name is taken, even for another netdev */
	{
		static struct fake f2;

		memcpy(&f2, &fk, sizeof(f2));
		f2.dev.priv = &f2;
		f2.dev.host = NULL;
		f2.dev.host_ctx = NULL;
		assert_int_equal(vnic_tap_create(&tap2, &f2.dev, &pool, &cfg), -EBUSY);
		/* the kernel picks a name */
		assert_int_equal(vnic_tap_create(&tap2, &f2.dev, &pool, NULL), 0);
		assert_string_not_equal(vnic_tap_ifname(tap2), "vt-busy");
		assert_true(if_nametoindex(vnic_tap_ifname(tap2)) > 0);
		vnic_tap_destroy(tap2);
	}
	vnic_tap_destroy(tap);
	assert_int_equal(if_nametoindex("vt-busy"), 0);
	vnic_cpu_fini(&other);
	vnic_cpu_fini(&fk.cpu);
}

/* ---- reading: offloads ------------------------------------------------------- */

static void test_read_offloads(void **state)
{
	const uint32_t feat =
		VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4 | VNIC_NETIF_F_TSO6 | VNIC_NETIF_F_USO;
	struct vnic_tap *tap = tap_over_fake(feat, NULL, 1);
	static char big[5000];
	uint64_t offl = counter(tap, "offloads");
	const struct rec *r;
	int s, seg = 1000;
	unsigned int i;

	(void)state;
	/* CSUM, TSO4, TSO6, TSO_ECN, and USO4|USO6 when this kernel knows them */
	assert_true(offl == 0x0f || offl == 0x6f);
	assert_int_equal(counter(tap, "vnet_hdr"), 1);

	s = udp_to_peer();
	assert_int_equal(send(s, "hello", 5, 0), 5);
	run_until_recs(1);
	r = &fk.rec[0];
	assert_int_equal(r->len, 14 + 20 + 8 + 5);
	assert_memory_equal(r->frame, peer_mac, 6);
	assert_memory_equal(r->frame + 6, fk.dev.mac, 6); /* the TAP took the netdev's MAC */
	assert_memory_equal(r->frame + 42, "hello", 5);
	/* TUN_F_CSUM: the kernel left the checksum to us */
	assert_int_equal(r->ip_summed, VNIC_CSUM_PARTIAL);
	assert_int_equal(r->csum_start, 34);
	assert_int_equal(r->csum_offset, 6);
	assert_int_equal(r->gso_type, VNIC_GSO_NONE);

	/* a UDP_SEGMENT send: one USO superpacket, or 5 datagrams without USO */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)i;
	assert_int_equal(setsockopt(s, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg)), 0);
	assert_int_equal(send(s, big, sizeof(big), 0), (ssize_t)sizeof(big));
	if (offl & 0x60) {
		run_until_recs(2);
		r = &fk.rec[1];
		assert_int_equal(r->gso_type, VNIC_GSO_UDP_L4);
		assert_int_equal(r->gso_size, 1000);
		assert_int_equal(r->gso_segs, 5);
		assert_int_equal(r->ip_summed, VNIC_CSUM_PARTIAL);
		assert_int_equal(counter(tap, "in0_gso_packets"), 1);
	} else {
		run_until_recs(6);
		for (i = 1; i < 6; i++)
			assert_int_equal(fk.rec[i].gso_type, VNIC_GSO_NONE);
	}
	/* every batch ended with its doorbell */
	assert_false(fk.open_batch);
	assert_true(counter(tap, "in0_packets") >= 2);
	assert_int_equal(counter(tap, "in0_drop_gso_mismatch"), 0);
	close(s);
	tap_over_fake_done(tap, 0);
}

/* Without the vnet header nothing is offloaded: the frame is complete. */
static void test_read_no_vnet_hdr(void **state)
{
	struct vnic_tap_config cfg = {.no_vnet_hdr = true};
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM | VNIC_NETIF_F_TSO4, &cfg, 1);
	struct vnic_hdrs h;
	int s = udp_to_peer();

	(void)state;
	assert_int_equal(counter(tap, "offloads"), 0);
	assert_int_equal(counter(tap, "vnet_hdr"), 0);
	assert_int_equal(send(s, "plain", 5, 0), 5);
	run_until_recs(1);
	assert_int_equal(fk.rec[0].ip_summed, VNIC_CSUM_NONE);
	assert_int_equal(vnic_parse_frame(fk.rec[0].frame, fk.rec[0].len, &h), VNIC_PARSE_OK);
	assert_true(vnic_csum_l4_ok(fk.rec[0].frame, &h));
	close(s);
	tap_over_fake_done(tap, 0);
}

/* ---- backpressure ------------------------------------------------------------ */

static bool tried_once(void *ctx)
{
	(void)ctx;
	return fk.busy >= 1;
}

/* Waits (a hang guard) until fd is readable. */
static bool fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 10000) == 1 && (p.revents & POLLIN);
}

static void test_backpressure(void **state)
{
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM, NULL, 1);
	int s = udp_to_peer(), i;
	char msg[8];

	(void)state;
	fk.stopped = true;
	for (i = 0; i < 5; i++) {
		snprintf(msg, sizeof(msg), "m%d", i);
		assert_int_equal(send(s, msg, 2, 0), 2);
	}
	assert_int_equal(vnic_cpus_run_until(fk.cpus, 1, tried_once, NULL, GUARD_NS), 0);
	/* refused once; the queue is no longer read although frames wait */
	for (i = 0; i < 50; i++)
		assert_int_equal(vnic_cpu_run_once(&fk.cpu), 0);
	assert_int_equal(fk.busy, 1);
	assert_true(fd_readable(vnic_tap_fd(tap, 0)));
	for (i = 0; i < 50; i++)
		assert_int_equal(vnic_cpu_run_once(&fk.cpu), 0);
	assert_int_equal(counter(tap, "in0_stops"), 1);
	assert_int_equal(counter(tap, "tx0_busy"), 1);
	assert_int_equal(fk.nrec, 0);

	/* the queue takes packets again: everything, in order */
	fk.stopped = false;
	fk.dev.host->tx_wake(fk.dev.host_ctx, 0);
	run_until_recs(5);
	for (i = 0; i < 5; i++) {
		snprintf(msg, sizeof(msg), "m%d", i);
		assert_memory_equal(fk.rec[i].frame + 42, msg, 2);
	}
	assert_false(fk.open_batch);
	assert_int_equal(counter(tap, "in0_resumes"), 1);
	assert_int_equal(counter(tap, "tx0_wakes"), 1);

	/* a tx_done is only counted */
	fk.dev.host->tx_done(fk.dev.host_ctx, 0, 0, 100, VNIC_TX_DONE_OK);
	fk.dev.host->tx_done(fk.dev.host_ctx, 0, 0, 100, VNIC_TX_DONE_DROPPED);
	assert_int_equal(counter(tap, "tx0_done"), 1);
	assert_int_equal(counter(tap, "tx0_done_dropped"), 1);

	/* stopped while refusing: the kept packet is given back at stop */
	fk.stopped = true;
	assert_int_equal(send(s, "zz", 2, 0), 2);
	fk.busy = 0;
	assert_int_equal(vnic_cpus_run_until(fk.cpus, 1, tried_once, NULL, GUARD_NS), 0);
	assert_int_equal(pool.nfree, pool.count - 1);
	close(s);
	tap_over_fake_done(tap, 1);
}

/* ---- delivery ------------------------------------------------------------------ */

struct mirror_count {
	unsigned int in, out;
};

static void count_mirror(void *ctx, const uint8_t *frame, uint32_t len, int dir)
{
	struct mirror_count *m = ctx;

	assert_true(len >= 14);
	assert_non_null(frame);
	if (dir == VNIC_TAP_DIR_IN)
		m->in++;
	else
		m->out++;
}

static struct vnic_pkt *to_tap(struct vnic_pkt_pool *p, uint32_t payload, uint16_t gso, int id)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *pkt = vnic_pkt_alloc(p);

	assert_non_null(pkt);
	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
	memcpy(f.dst_mac, fk.dev.mac, 6);
	memcpy(f.src_mac, peer_mac, 6);
	inet_pton(AF_INET, "10.7.0.2", f.saddr);
	inet_pton(AF_INET, "10.7.0.1", f.daddr);
	f.dport = UDP_PORT + 1;
	f.seed = (uint32_t)id;
	if (gso)
		assert_int_equal(vnic_pktgen_build_gso(pkt, &f, 0, payload, gso), 0);
	else
		assert_int_equal(vnic_pktgen_build(pkt, &f, 0, payload), 0);
	return pkt;
}

static void test_delivery(void **state)
{
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM, NULL, 1);
	struct mirror_count mc = {0};
	struct vnic_pkt_pool rxp;
	struct vnic_pkt *pkts[5];
	struct sockaddr_in sin;
	uint8_t buf[4096];
	int s, i, got;

	(void)state;
	assert_int_equal(vnic_pkt_pool_init(&rxp, 8, VNIC_PKT_MAX_LEN + 256, 64), 0);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(UDP_PORT + 1);
	inet_pton(AF_INET, "10.7.0.1", &sin.sin_addr);
	assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	vnic_tap_set_mirror(tap, count_mirror, &mc);

	pkts[0] = to_tap(&rxp, 100, 0, 1); /* complete checksum */
	pkts[1] = to_tap(&rxp, 200, 0, 2);
	pkts[1]->ip_summed = VNIC_CSUM_UNNECESSARY; /* DATA_VALID */
	pkts[2] = to_tap(&rxp, 300, 400, 3);	    /* partial, one segment */
	pkts[2]->gso_type = VNIC_GSO_NONE;
	pkts[2]->gso_size = 0;
	pkts[3] = to_tap(&rxp, 1200, 400, 4); /* a USO aggregate of 3 */
	pkts[4] = to_tap(&rxp, 100, 0, 5);
	pkts[4]->gso_type = VNIC_GSO_TCPV4; /* on a UDP frame: refused */
	pkts[4]->gso_size = 50;
	fk.dev.host->rx(fk.dev.host_ctx, 0, pkts, 5);
	assert_int_equal(rxp.nfree, rxp.count); /* all freed */

	/* 1 + 1 + 1 + 3 datagrams, in order */
	{
		static const uint32_t want_len[] = {100, 200, 300, 400, 400, 400};
		static const uint32_t want_off[] = {0, 0, 0, 0, 400, 800};
		static const uint32_t want_seed[] = {1, 2, 3, 4, 4, 4};

		for (i = 0; i < 6; i++) {
			struct pollfd p = {.fd = s, .events = POLLIN};

			assert_int_equal(poll(&p, 1, 10000), 1);
			got = (int)recv(s, buf, sizeof(buf), 0);
			assert_int_equal(got, (int)want_len[i]);
			assert_true(
				vnic_pktgen_verify(buf, (uint32_t)got, want_seed[i], want_off[i]));
		}
	}
	assert_int_equal(counter(tap, "out0_packets"), 4);
	assert_int_equal(counter(tap, "out0_gso_packets"), 1);
	assert_int_equal(counter(tap, "out0_data_valid"), 1);
	assert_int_equal(counter(tap, "out0_csum_partial"), 2);
	assert_int_equal(counter(tap, "out0_drop_bad_meta"), 1);
	assert_int_equal(mc.out, 4);

	/* after stop: dropped and counted */
	vnic_tap_stop(tap);
	pkts[0] = to_tap(&rxp, 10, 0, 9);
	fk.dev.host->rx(fk.dev.host_ctx, 0, pkts, 1);
	assert_int_equal(counter(tap, "out0_drop_stopped"), 1);
	assert_int_equal(rxp.nfree, rxp.count);
	vnic_tap_set_mirror(tap, NULL, NULL);
	close(s);
	tap_over_fake_done(tap, 0);
	vnic_pkt_pool_fini(&rxp);
}

/* pkt's bytes from off on moved into fragments of n bytes each, from pool. */
static void to_frags(struct vnic_pkt_pool *fp, struct vnic_pkt *pkt, uint32_t off, uint32_t n)
{
	uint32_t at;

	for (at = off; at < pkt->len; at += n) {
		struct vnic_pkt *f = vnic_pkt_alloc(fp);

		assert_non_null(f);
		memcpy(f->data, pkt->data + at, n);
		f->len = n;
		if (pkt->frags_tail)
			pkt->frags_tail->next = f;
		else
			pkt->frags = f;
		pkt->frags_tail = f;
		pkt->frag_len += n;
	}
}

/*
 * A fraglist aggregate (rx-agg=frags) leaves in one writev, head and
 * fragments in order; one whose fragments do not add up is dropped.
 */
static void test_delivery_frags(void **state)
{
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM, NULL, 1);
	struct mirror_count mc = {0};
	struct vnic_pkt_pool rxp;
	struct vnic_pkt *pkts[2];
	struct sockaddr_in sin;
	uint8_t buf[4096];
	uint32_t hdrs;
	int s, i, got;

	(void)state;
	assert_true(fk.dev.host->features & VNIC_HOST_F_FRAGLIST);
	assert_int_equal(vnic_pkt_pool_init(&rxp, 16, VNIC_PKT_MAX_LEN + 256, 64), 0);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(UDP_PORT + 1);
	inet_pton(AF_INET, "10.7.0.1", &sin.sin_addr);
	assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	vnic_tap_set_mirror(tap, count_mirror, &mc);

	/* a USO aggregate of 3: headers and the first 400 bytes, then 2 fragments */
	pkts[0] = to_tap(&rxp, 1200, 400, 7);
	hdrs = pkts[0]->len - 1200;
	to_frags(&rxp, pkts[0], hdrs + 400, 400);
	/* the same, but the fragments hold less than len says */
	pkts[1] = to_tap(&rxp, 1200, 400, 8);
	to_frags(&rxp, pkts[1], hdrs + 400, 400);
	pkts[1]->frag_len += 1;
	pkts[1]->len += 1;
	fk.dev.host->rx(fk.dev.host_ctx, 0, pkts, 2);
	assert_int_equal(rxp.nfree, rxp.count); /* heads and fragments freed */

	for (i = 0; i < 3; i++) {
		struct pollfd p = {.fd = s, .events = POLLIN};

		assert_int_equal(poll(&p, 1, 10000), 1);
		got = (int)recv(s, buf, sizeof(buf), 0);
		assert_int_equal(got, 400);
		assert_true(vnic_pktgen_verify(buf, (uint32_t)got, 7, (uint32_t)i * 400));
	}
	assert_int_equal(counter(tap, "out0_packets"), 1);
	assert_int_equal(counter(tap, "out0_gso_packets"), 1);
	assert_int_equal(counter(tap, "out0_drop_bad_meta"), 1);
	assert_int_equal(mc.out, 1);
	vnic_tap_set_mirror(tap, NULL, NULL);
	close(s);
	tap_over_fake_done(tap, 0);
	vnic_pkt_pool_fini(&rxp);
}

/* ---- two queues ------------------------------------------------------------------ */

static void test_two_queues_rss(void **state)
{
	struct vnic_tap_config cfg = {.queues = 2};
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM, &cfg, 2);
	unsigned int per_q[2] = {0, 0}, i;

	(void)state;
	assert_int_equal(counter(tap, "active_queues"), 2);
	for (i = 0; i < 16; i++) {
		int s = udp_to_peer();

		assert_int_equal(send(s, "q", 1, 0), 1);
		close(s); /* a new socket, a new source port, a new flow */
	}
	run_until_recs(16);
	for (i = 0; i < 16; i++) {
		const struct rec *r = &fk.rec[i];
		struct vnic_hdrs h;
		uint32_t hash;

		assert_int_equal(vnic_parse_frame(r->frame, r->len, &h), VNIC_PARSE_OK);
		hash = vnic_rss_hash_frame(vnic_rss_default_key, r->frame, &h);
		/* whichever TAP queue the kernel used, the flow's hash picks the tx queue */
		assert_int_equal(r->q, hash % 2);
		assert_int_equal(r->hash, hash);
		per_q[r->q]++;
	}
	print_message("tx queue 0: %u, 1: %u; read from TAP queue 0: %llu, 1: %llu\n", per_q[0],
		      per_q[1], (unsigned long long)counter(tap, "in0_packets"),
		      (unsigned long long)counter(tap, "in1_packets"));
	assert_int_equal(counter(tap, "in0_packets") + counter(tap, "in1_packets"), 16);
	tap_over_fake_done(tap, 0);
}

/*
 * Two TAP queues on two cpus (a driver's queue_cpu), a pool each: each reader
 * runs on its queue's cpu and sends only to tx queues there. A flow whose
 * hash picks the other cpu's tx queue stays on the reader's own
 * (inN_queue_fallback); nothing crosses cpus, and both pools come back full.
 */
static void test_two_queues_two_cpus(void **state)
{
	struct vnic_tap_config cfg = {.queues = 2};
	struct vnic_pkt_pool pool1;
	struct vnic_cpu other;
	struct vnic_cpu *cpus[2];
	struct vnic_tap *tap;
	unsigned int i, fallback = 0;

	(void)state;
	fake_init(&fk, VNIC_NETIF_F_CSUM, 2);
	assert_int_equal(vnic_cpu_init(&other, "other", 0), 0);
	assert_int_equal(vnic_pkt_pool_init(&pool1, 64, VNIC_PKT_MAX_LEN + 256, 128), 0);
	fk.dev.tx_cpu[1] = fk.dev.rx_cpu[1] = &other;
	cfg.pools[1] = &pool1;
	assert_int_equal(vnic_tap_create(&tap, &fk.dev, &pool, &cfg), 0);
	assert_int_equal(vnic_tap_start(tap), 0);
	assert_int_equal(ifc_config(vnic_tap_ifname(tap), "10.7.0.1"), 0);
	assert_int_equal(add_neigh(vnic_tap_ifname(tap), "10.7.0.2", peer_mac), 0);
	for (i = 0; i < 32; i++) {
		int s = udp_to_peer();

		assert_int_equal(send(s, "q", 1, 0), 1);
		close(s); /* a new socket, a new source port, a new flow */
	}
	cpus[0] = &fk.cpu;
	cpus[1] = &other;
	want_rec = 32;
	assert_int_equal(vnic_cpus_run_until(cpus, 2, enough_recs, NULL, GUARD_NS), 0);
	assert_int_equal(fk.wrong_cpu, 0);
	for (i = 0; i < 32; i++) {
		const struct rec *r = &fk.rec[i];

		/* the flow's queue, or the reader's own when the flow's is on the other cpu */
		if (r->q != r->hash % 2)
			fallback++;
	}
	assert_int_equal(counter(tap, "in0_packets") + counter(tap, "in1_packets"), 32);
	assert_int_equal(counter(tap, "in0_queue_fallback") + counter(tap, "in1_queue_fallback"),
			 fallback);
	vnic_tap_stop(tap);
	vnic_cpu_run_once(&fk.cpu);
	vnic_cpu_run_once(&other);
	assert_int_equal(pool.nfree, pool.count);
	assert_int_equal(pool1.nfree, pool1.count);
	vnic_tap_destroy(tap);
	vnic_pkt_pool_fini(&pool1);
	vnic_cpu_fini(&other);
	vnic_cpu_fini(&fk.cpu);
}

/* One tx queue: nothing to pick, so the reader does not hash (pkt->hash stays 0). */
static void test_one_queue_no_hash(void **state)
{
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM, NULL, 1);
	unsigned int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		int s = udp_to_peer();

		assert_int_equal(send(s, "q", 1, 0), 1);
		close(s);
	}
	run_until_recs(8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(fk.rec[i].q, 0);
		assert_int_equal(fk.rec[i].hash, 0);
	}
	assert_int_equal(counter(tap, "in0_packets"), 8);
	tap_over_fake_done(tap, 0);
}

/* ---- lone frames ------------------------------------------------------------------ */

/* Steps the cpu until a turn finds nothing to run: it has gone idle. */
static void run_until_idle(void)
{
	int i;

	for (i = 0; i < 100 && vnic_cpu_run_once(&fk.cpu); i++)
		;
	assert_true(i < 100);
}

/* The first poller of the fake cpu named after the TAP's queue 0. */
static struct vnic_poller *reader_poller(void)
{
	unsigned int i;

	for (i = 0; i < fk.cpu.npollers; i++)
		if (strstr(fk.cpu.pollers[i]->name, "-q0"))
			return fk.cpu.pollers[i];
	fail_msg("no TAP reader on the cpu");
	return NULL;
}

/*
 * Request/response: a frame after the cpu went idle, after a burst that was
 * a lone frame, ends its burst without the EAGAIN read. A burst that follows
 * finds the rest by the cpu's next (level-triggered) look, and the frame
 * that comes before the cpu idles says a stream: read to EAGAIN. None is
 * lost, all in order. A run that reads nothing in between (a spinning
 * cpu's look at the TAP) changes none of that.
 */
static void test_lone_frames(void **state)
{
	enum { ROUNDS = 10, BURST = 5 };
	struct vnic_tap *tap = tap_over_fake(VNIC_NETIF_F_CSUM, NULL, 1);
	struct vnic_poller *rd = reader_poller();
	int s = udp_to_peer();
	uint8_t b;
	unsigned int i;

	(void)state;
	for (i = 0; i < ROUNDS; i++) {
		b = (uint8_t)i;
		assert_int_equal(send(s, &b, 1, 0), 1);
		run_until_recs(i + 1);
		run_until_idle();
		/* the spin's look: an empty burst */
		if (i % 2)
			assert_int_equal(rd->poll(rd, VNIC_NAPI_BUDGET), 0);
	}
	/* the first found no lone burst before it; every later one did */
	assert_int_equal(counter(tap, "in0_lone_bursts"), ROUNDS - 1);
	for (i = 0; i < BURST; i++) {
		b = (uint8_t)(ROUNDS + i);
		assert_int_equal(send(s, &b, 1, 0), 1);
	}
	run_until_recs(ROUNDS + BURST);
	run_until_idle();
	/* one lone stop, then the rest in one burst to EAGAIN */
	assert_int_equal(counter(tap, "in0_lone_bursts"), ROUNDS);
	for (i = 0; i < ROUNDS + BURST; i++) {
		const struct rec *r = &fk.rec[i];

		assert_int_equal(r->frame[r->len - 1], i);
	}
	assert_int_equal(counter(tap, "in0_packets"), ROUNDS + BURST);
	close(s);
	tap_over_fake_done(tap, 0);
}

/* ---- end to end: two TAPs over two vNICs, two namespaces ----------------------- */

enum { E2E_UDP_PORT = 7000, E2E_TCP_PORT = 7001, E2E_BYTES = 4 << 20 };

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int listen_on(int type, uint16_t port)
{
	struct sockaddr_in sin;
	int s = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	inet_pton(AF_INET, "10.9.0.2", &sin.sin_addr);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -1;
	if (type == SOCK_STREAM && listen(s, 1) < 0)
		return -1;
	return s;
}

/*
 * The child, in its own namespace: echoes UDP datagrams, and sinks one TCP
 * stream, checking every byte against the pattern and answering with the
 * count. Exit status 0 if the stream was whole.
 */
static void e2e_child(int rd, int wr)
{
	char ifname[IFNAMSIZ] = {0};
	static uint8_t buf[1 << 16];
	int u, l, c = -1;
	uint64_t total = 0;
	bool ok = true;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(120);
	if (unshare(CLONE_NEWNET) || write(wr, "R", 1) != 1)
		_exit(2);
	if (read_full(rd, ifname, sizeof(ifname)) || ifc_config(ifname, "10.9.0.2"))
		_exit(3);
	u = listen_on(SOCK_DGRAM, E2E_UDP_PORT);
	l = listen_on(SOCK_STREAM, E2E_TCP_PORT);
	if (u < 0 || l < 0 || write(wr, "S", 1) != 1)
		_exit(4);
	for (;;) {
		struct pollfd p[2] = {{.fd = u, .events = POLLIN},
				      {.fd = c >= 0 ? c : l, .events = POLLIN}};
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n;

		if (poll(p, 2, -1) < 0)
			_exit(5);
		if (p[0].revents & POLLIN) {
			n = recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
			if (n > 0)
				sendto(u, buf, (size_t)n, 0, (struct sockaddr *)&from, flen);
		}
		if (!(p[1].revents & (POLLIN | POLLHUP)))
			continue;
		if (c < 0) {
			c = accept(l, NULL, NULL);
			continue;
		}
		n = read(c, buf, sizeof(buf));
		if (n > 0) {
			ok = ok && vnic_pktgen_verify(buf, (uint32_t)n, 7, (uint32_t)total);
			total += (uint64_t)n;
			continue;
		}
		/* EOF: report and leave */
		{
			uint8_t verdict = ok;

			if (write(c, &total, sizeof(total)) != sizeof(total) ||
			    write(c, &verdict, 1) != 1)
				_exit(6);
		}
		close(c);
		_exit(ok && total == E2E_BYTES ? 0 : 7);
	}
}

static void e2e_udp_echo(void)
{
	struct sockaddr_in sin;
	char buf[64];
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint64_t end = vnic_now_ns() + GUARD_NS;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(E2E_UDP_PORT);
	inet_pton(AF_INET, "10.9.0.2", &sin.sin_addr);
	assert_int_equal(connect(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	/* the first datagrams may wait on ARP; resend until one comes back */
	for (;;) {
		struct pollfd p = {.fd = s, .events = POLLIN};

		assert_int_equal(send(s, "through vnic", 12, 0), 12);
		if (poll(&p, 1, 200) == 1) {
			assert_int_equal(recv(s, buf, sizeof(buf), 0), 12);
			assert_memory_equal(buf, "through vnic", 12);
			break;
		}
		assert_true(vnic_now_ns() < end);
	}
	close(s);
}

static void e2e_tcp_stream(void)
{
	static uint8_t chunk[1 << 16];
	struct sockaddr_in sin;
	uint64_t total = 0;
	uint8_t verdict = 0;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint32_t off;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(E2E_TCP_PORT);
	inet_pton(AF_INET, "10.9.0.2", &sin.sin_addr);
	assert_int_equal(connect(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	for (off = 0; off < E2E_BYTES; off += sizeof(chunk)) {
		vnic_pktgen_fill(chunk, sizeof(chunk), 7, off);
		assert_int_equal(write(s, chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
	}
	assert_int_equal(shutdown(s, SHUT_WR), 0);
	assert_int_equal(read_full(s, &total, sizeof(total)), 0);
	assert_int_equal(read_full(s, &verdict, 1), 0);
	assert_int_equal(total, E2E_BYTES);
	assert_int_equal(verdict, 1);
	close(s);
}

static void dump_counters(const char *who, const struct vnic_tap *tap)
{
	static struct vnic_counter c[1024];
	unsigned int n = vnic_tap_counters(tap, c, 1024);

	for (unsigned int i = 0; i < n && i < 1024; i++)
		if (c[i].value)
			print_message("%s.%s = %llu\n", who, c[i].name,
				      (unsigned long long)c[i].value);
}

static void test_end_to_end(void **state)
{
	struct vnic_topo_config tcfg;
	struct vnic_tap_config ca = {.ifname = "vnA"}, cb = {.ifname = "vnB"};
	char ifname[IFNAMSIZ] = {0}, c;
	struct vnic_tap *ta, *tb;
	static struct vnic_topo t;
	int p2c[2], c2p[2], nsfd, selffd, status;
	char path[64];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe2(p2c, O_CLOEXEC), 0);
	assert_int_equal(pipe2(c2p, O_CLOEXEC), 0);
	/* before any thread exists: the child is a plain single-threaded copy */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		e2e_child(p2c[0], c2p[1]);
	assert_int_equal(read(c2p[0], &c, 1), 1);
	assert_int_equal(c, 'R');

	vnic_topo_config_default(&tcfg);
	assert_int_equal(vnic_topo_create(&t, &tcfg), 0);
	assert_int_equal(vnic_tap_create(&ta, vnic_topo_netdev(&t, 0), &t.host_pool[0], &ca), 0);
	/* TAP B is created from inside the child's namespace, so it lives there */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	selffd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(nsfd >= 0 && selffd >= 0);
	assert_int_equal(setns(nsfd, CLONE_NEWNET), 0);
	assert_int_equal(vnic_tap_create(&tb, vnic_topo_netdev(&t, 1), &t.host_pool[1], &cb), 0);
	assert_int_equal(setns(selffd, CLONE_NEWNET), 0);
	close(nsfd);
	close(selffd);
	assert_int_equal(if_nametoindex("vnB"), 0); /* not here */

	assert_int_equal(vnic_topo_start(&t), 0);
	assert_int_equal(vnic_tap_start(ta), 0);
	assert_int_equal(vnic_tap_start(tb), 0);
	/* the driver offers checksum and TSO: the kernel is told so */
	assert_int_equal(counter(ta, "offloads") & 0x0f, 0x0f);

	snprintf(ifname, sizeof(ifname), "%s", vnic_tap_ifname(tb));
	assert_int_equal(write(p2c[1], ifname, sizeof(ifname)), (ssize_t)sizeof(ifname));
	assert_int_equal(ifc_config(vnic_tap_ifname(ta), "10.9.0.1"), 0);
	assert_int_equal(read(c2p[0], &c, 1), 1);
	assert_int_equal(c, 'S');

	e2e_udp_echo();
	e2e_tcp_stream();
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	vnic_tap_stop(ta);
	vnic_tap_stop(tb);
	assert_int_equal(vnic_topo_stop(&t), 0);
	dump_counters("tap_a", ta);
	dump_counters("tap_b", tb);
	/* TSO superpackets went in on A, GRO aggregates came out on B */
	assert_true(counter(ta, "in0_gso_packets") > 0);
	assert_true(counter(tb, "out0_gso_packets") > 0);
	assert_int_equal(counter(ta, "in0_read_errors") + counter(tb, "in0_read_errors"), 0);
	vnic_tap_destroy(ta);
	vnic_tap_destroy(tb);
	vnic_topo_destroy(&t);
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest unit[] = {
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_read_offloads),
		cmocka_unit_test(test_read_no_vnet_hdr),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_delivery),
		cmocka_unit_test(test_delivery_frags),
		cmocka_unit_test(test_two_queues_rss),
		cmocka_unit_test(test_two_queues_two_cpus),
		cmocka_unit_test(test_one_queue_no_hash),
		cmocka_unit_test(test_lone_frames),
	};
	const struct CMUnitTest e2e[] = {
		cmocka_unit_test(test_end_to_end),
	};
	bool only_e2e = argc > 1 && !strcmp(argv[1], "e2e");
	int rc;

	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) || unshare(CLONE_NEWNET)) {
		printf("SKIP: needs root and /dev/net/tun\n");
		return 77;
	}
	ipv6_off();
	if (ifc_up("lo"))
		return 1;
	if (vnic_pkt_pool_init(&pool, 64, VNIC_PKT_MAX_LEN + 256, 128))
		return 1;
	rc = only_e2e ? 0 : cmocka_run_group_tests_name("tap", unit, NULL, NULL);
	if (!rc && (only_e2e || argc == 1))
		rc = cmocka_run_group_tests_name("tap_e2e", e2e, NULL, NULL);
	vnic_pkt_pool_fini(&pool);
	return rc;
}
