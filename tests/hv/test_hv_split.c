// SPDX-License-Identifier: MIT
/*
 * The split transport (src/hv/shm.c, remote.c): a client hv and the server
 * hv made from what the client passed over a socketpair, so the two halves
 * map the shared memory at different addresses, as two processes do. The
 * attach and its refusals, the CRQ and sub-CRQs across the halves with
 * their doorbells, the DMA window's translation in the server's own
 * mapping and its bounds, and a hostile partner writing the shared region
 * behind the hv's back: each refusal is counted.
 *
 * This test includes hv_priv.h, the one exception to the layering rule in
 * tests/: it plays the partner process, and what a hostile partner attacks
 * is the shared layout itself.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "hv/hv_priv.h"

enum { POOL = 64 * VNIC_HV_DMA_PAGE, MAX_IND = 16 };

struct pair {
	struct vnic_hv *cli;
	struct vnic_hv *srv;
	struct vnic_cpu cli_cpu;	/* manual mode: each half's doorbell poller */
	struct vnic_cpu srv_cpu;
};

static struct vnic_hv_stats stat_of(const struct vnic_hv *hv)
{
	struct vnic_hv_stats s;

	vnic_hv_stats(hv, &s);
	return s;
}

/* srv_bell: how the server half waits for the client's doorbells */
static void pair_make_bell(struct pair *p, enum vnic_hv_doorbell srv_bell, uint64_t srv_busy_ns)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(vnic_hv_create_split_client(&p->cli, MAX_IND, NULL, POOL), 0);
	assert_int_equal(vnic_hv_split_send(sv[0], p->cli), 0);
	assert_int_equal(vnic_hv_split_recv(sv[1], &p->srv, MAX_IND, NULL), 0);
	close(sv[0]);
	close(sv[1]);
	/* a mapping of its own: the server's view is not the client's address */
	assert_ptr_not_equal(p->srv->split->shm, p->cli->split->shm);
	assert_ptr_not_equal(p->srv->split->pool, p->cli->split->pool);
	assert_int_equal(vnic_cpu_init(&p->cli_cpu, "c", 0), 0);
	assert_int_equal(vnic_cpu_init(&p->srv_cpu, "s", srv_busy_ns), 0);
	vnic_hv_split_set_doorbell(p->srv, srv_bell);
	assert_int_equal(vnic_hv_split_attach_cpu(p->cli, &p->cli_cpu), 0);
	assert_int_equal(vnic_hv_split_attach_cpu(p->srv, &p->srv_cpu), 0);
}

static void pair_make(struct pair *p)
{
	pair_make_bell(p, VNIC_HV_DOORBELL_EVENTFD, 0);
}

static void pair_free(struct pair *p)
{
	vnic_cpu_fini(&p->cli_cpu);
	vnic_cpu_fini(&p->srv_cpu);
	vnic_hv_destroy(p->srv);
	vnic_hv_destroy(p->cli);
}

static union vnic_subcrq_entry entry_seq(uint64_t seq)
{
	union vnic_subcrq_entry e;

	memset(&e, 0, sizeof(e));
	e.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&e.rx_add.correlator, seq);
	return e;
}

static uint64_t seq_of(const union vnic_subcrq_entry *e)
{
	return vnic_be64_get(&e->rx_add.correlator);
}

static void count_irq(void *ctx)
{
	(*(unsigned int *)ctx)++;
}

/* --- attach ----------------------------------------------------------------------- */

static void test_attach_maps_apart_and_splits_roles(void **state)
{
	static uint8_t heap_page[VNIC_HV_DMA_PAGE] __attribute__((aligned(VNIC_HV_DMA_PAGE)));
	struct vnic_subcrq *q;
	struct pair p;
	uint64_t ioba;
	void *mem;

	(void)state;
	pair_make(&p);
	/* only the client maps, and only memory the server can see */
	assert_int_equal(vnic_hv_dma_map(p.cli, heap_page, sizeof(heap_page), &ioba), -EINVAL);
	mem = vnic_hv_dma_alloc(p.srv, VNIC_HV_DMA_PAGE);
	assert_null(mem);
	mem = vnic_hv_dma_alloc(p.cli, VNIC_HV_DMA_PAGE);
	assert_non_null(mem);
	assert_int_equal(vnic_hv_dma_map(p.srv, mem, VNIC_HV_DMA_PAGE, &ioba), -EINVAL);
	/* each half registers rings for its own side only, and sends as its own side only */
	assert_int_equal(vnic_hv_reg_subcrq(p.cli, VNIC_HV_SERVER, 8, &q), -EINVAL);
	assert_int_equal(vnic_hv_reg_subcrq(p.srv, VNIC_HV_CLIENT, 8, &q), -EINVAL);
	assert_int_equal(vnic_hv_reg_subcrq(p.srv, VNIC_HV_SERVER, 8, &q), 0);
	{
		union vnic_subcrq_entry e = entry_seq(1);

		assert_int_equal(vnic_hv_send_subcrq(p.srv, VNIC_HV_CLIENT, q->handle, &e),
				 VNIC_H_PARAMETER);
	}
	vnic_hv_free_subcrq(p.srv, q);
	vnic_hv_dma_free(p.cli, mem);
	pair_free(&p);
}

/* The attach message's layout (docs/PROTOCOL.md section 13), as a client writes it. */
struct attach_wire {
	uint32_t magic;
	uint16_t version;
	uint16_t nfds;
	uint32_t max_ind_descs;
	uint32_t reserved;
	uint64_t pool_size;
};

static void send_raw(int sock, const struct attach_wire *m, const int *fds, unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	if (nfds) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	assert_int_equal(sendmsg(sock, &mh, 0), (ssize_t)sizeof(*m));
}

enum bad_fd { FDS_GOOD, FDS_PIPE_AS_CTL, FDS_UNSEALED_POOL, FDS_MEMFD_AS_BELL, FDS_SHORT_POOL };

/* One row per refusal: the mutation, the rc. */
static const struct {
	const char *name;
	uint32_t magic;
	uint16_t version;
	uint16_t nfds_said;
	unsigned int nfds_sent;
	uint32_t max_ind;
	uint64_t pool;
	enum bad_fd fds;
	int rc;
} attach_cases[] = {
	{ "1 good", 0x76686174, 1, 4, 4, MAX_IND, POOL, FDS_GOOD, 0 },
	{ "2 magic", 0x76686175, 1, 4, 4, MAX_IND, POOL, FDS_GOOD, -EPROTO },
	{ "3 version", 0x76686174, 2, 4, 4, MAX_IND, POOL, FDS_GOOD, -EPROTO },
	{ "4 three fds sent", 0x76686174, 1, 4, 3, MAX_IND, POOL, FDS_GOOD, -EPROTO },
	{ "5 five fds said", 0x76686174, 1, 5, 4, MAX_IND, POOL, FDS_GOOD, -EPROTO },
	{ "6 other indirect limit", 0x76686174, 1, 4, 4, 32, POOL, FDS_GOOD, -EPROTO },
	{ "7 pipe as region", 0x76686174, 1, 4, 4, MAX_IND, POOL, FDS_PIPE_AS_CTL, -EINVAL },
	{ "8 unsealed pool", 0x76686174, 1, 4, 4, MAX_IND, POOL, FDS_UNSEALED_POOL, -EINVAL },
	{ "9 memfd as doorbell", 0x76686174, 1, 4, 4, MAX_IND, POOL, FDS_MEMFD_AS_BELL, -EINVAL },
	{ "10 pool smaller than said", 0x76686174, 1, 4, 4, MAX_IND, POOL, FDS_SHORT_POOL,
	  -EINVAL },
	{ "11 pool not a page multiple", 0x76686174, 1, 4, 4, MAX_IND, POOL + 1, FDS_GOOD,
	  -EINVAL },
	{ "12 pool zero", 0x76686174, 1, 4, 4, MAX_IND, 0, FDS_GOOD, -EINVAL },
};

/* A client's fds, then one of them swapped for the row's bad one. */
static void make_fds(struct vnic_hv *cli, enum bad_fd bad, int fds[VNIC_HV_SPLIT_FDS], int *extra)
{
	uint64_t pool;
	int pipefd[2];

	assert_true(vnic_hv_split_fds(cli, fds, &pool));
	*extra = -1;
	switch (bad) {
	case FDS_GOOD:
		break;
	case FDS_PIPE_AS_CTL:
		assert_int_equal(pipe(pipefd), 0);
		close(pipefd[1]);
		fds[VNIC_HV_SPLIT_FD_CTL] = *extra = pipefd[0];
		break;
	case FDS_UNSEALED_POOL:
		*extra = memfd_create("t", MFD_CLOEXEC);
		assert_int_equal(ftruncate(*extra, POOL), 0);
		fds[VNIC_HV_SPLIT_FD_POOL] = *extra;
		break;
	case FDS_MEMFD_AS_BELL:
		fds[VNIC_HV_SPLIT_FD_TO_SERVER] = fds[VNIC_HV_SPLIT_FD_POOL];
		break;
	case FDS_SHORT_POOL:
		*extra = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		assert_int_equal(ftruncate(*extra, POOL / 2), 0);
		assert_int_equal(fcntl(*extra, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
		fds[VNIC_HV_SPLIT_FD_POOL] = *extra;
		break;
	}
}

static void test_attach_refusals(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < sizeof(attach_cases) / sizeof(attach_cases[0]); i++) {
		struct attach_wire m = {
			.magic = attach_cases[i].magic, .version = attach_cases[i].version,
			.nfds = attach_cases[i].nfds_said, .max_ind_descs = attach_cases[i].max_ind,
			.pool_size = attach_cases[i].pool,
		};
		struct vnic_hv *cli = NULL, *srv = NULL;
		int sv[2], fds[VNIC_HV_SPLIT_FDS], extra, rc;

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		assert_int_equal(vnic_hv_create_split_client(&cli, MAX_IND, NULL, POOL), 0);
		make_fds(cli, attach_cases[i].fds, fds, &extra);
		send_raw(sv[0], &m, fds, attach_cases[i].nfds_sent);
		rc = vnic_hv_split_recv(sv[1], &srv, MAX_IND, NULL);
		if (rc != attach_cases[i].rc)
			fail_msg("case %s: rc %d, want %d", attach_cases[i].name, rc,
				 attach_cases[i].rc);
		assert_true(rc ? srv == NULL : srv != NULL);
		vnic_hv_destroy(srv);
		vnic_hv_destroy(cli);
		if (extra >= 0)
			close(extra);
		close(sv[0]);
		close(sv[1]);
	}
}

static void test_attach_eof(void **state)
{
	struct vnic_hv *srv = NULL;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[0]);
	assert_int_equal(vnic_hv_split_recv(sv[1], &srv, MAX_IND, NULL), -ECONNRESET);
	assert_null(srv);
	close(sv[1]);
}

/* --- CRQ and doorbells ----------------------------------------------------------------- */

static void test_crq_crosses_with_one_doorbell_while_armed(void **state)
{
	unsigned int srv_irqs = 0, cli_irqs = 0;
	struct vnic_crq m, got;
	struct pair p;

	(void)state;
	pair_make(&p);
	vnic_hv_crq_set_irq(p.srv, VNIC_HV_SERVER, count_irq, &srv_irqs);
	vnic_hv_crq_set_irq(p.cli, VNIC_HV_CLIENT, count_irq, &cli_irqs);
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = 0x42;

	/* disarmed: the message lands, no doorbell */
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	vnic_cpu_run_once(&p.srv_cpu);
	assert_int_equal(srv_irqs, 0);
	assert_true(vnic_hv_crq_pending(p.srv, VNIC_HV_SERVER));
	assert_true(vnic_hv_crq_recv(p.srv, VNIC_HV_SERVER, &got));
	assert_int_equal(got.cmd, 0x42);
	assert_false(vnic_hv_crq_recv(p.srv, VNIC_HV_SERVER, &got));

	/* armed: two sends before the server looks ring the eventfd once, the handler once */
	vnic_hv_crq_irq_enable(p.srv, VNIC_HV_SERVER, true);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(stat_of(p.cli).split_doorbells, 1);
	vnic_cpu_run_once(&p.srv_cpu);
	assert_int_equal(srv_irqs, 1);
	vnic_cpu_run_once(&p.srv_cpu);
	assert_int_equal(srv_irqs, 1);
	assert_true(vnic_hv_crq_recv(p.srv, VNIC_HV_SERVER, &got));
	assert_true(vnic_hv_crq_recv(p.srv, VNIC_HV_SERVER, &got));

	/* the other way, and a side sending as the other is refused */
	vnic_hv_crq_irq_enable(p.cli, VNIC_HV_CLIENT, true);
	m.cmd = 0x43;
	assert_int_equal(vnic_hv_send_crq(p.srv, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);
	vnic_cpu_run_once(&p.cli_cpu);
	assert_int_equal(cli_irqs, 1);
	assert_true(vnic_hv_crq_recv(p.cli, VNIC_HV_CLIENT, &got));
	assert_int_equal(got.cmd, 0x43);
	assert_int_equal(vnic_hv_send_crq(p.srv, VNIC_HV_CLIENT, &m), VNIC_H_PARAMETER);
	assert_false(vnic_hv_crq_recv(p.cli, VNIC_HV_SERVER, &got));

	/* the transport flag is shared: the server closes it, the client's sends fail */
	vnic_hv_crq_set_open(p.srv, false);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_CLOSED);
	vnic_hv_crq_set_open(p.srv, true);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	pair_free(&p);
}

/* --- spin mode (--doorbell spin) ------------------------------------------------------ */

/* Whether an eventfd write is waiting on fd; takes it. */
static bool efd_take(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v);
}

static int srv_efd(const struct pair *p)
{
	return p->srv->split->fd[VNIC_HV_SPLIT_FD_TO_SERVER];
}

static _Atomic uint32_t *srv_polling(const struct pair *p)
{
	return &p->cli->split->shm->pending[VNIC_HV_SERVER].polling;
}

static void test_spin_skips_the_eventfd_while_the_partner_polls(void **state)
{
	struct vnic_cpu_spin_src *src;
	unsigned int irqs = 0;
	struct vnic_crq m;
	struct pair p;

	(void)state;
	pair_make_bell(&p, VNIC_HV_DOORBELL_SPIN, 0);
	src = &p.srv->split->spin;
	assert_ptr_equal(p.srv_cpu.spin_srcs, src);
	assert_null(p.cli_cpu.spin_srcs);
	vnic_hv_crq_set_irq(p.srv, VNIC_HV_SERVER, count_irq, &irqs);
	vnic_hv_crq_irq_enable(p.srv, VNIC_HV_SERVER, true);
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;

	/* the server's cpu spins: the flag is up in the client's view, no eventfd */
	src->polling(src, true);
	assert_int_equal(atomic_load(srv_polling(&p)), 1);
	assert_false(src->peek(src));
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(stat_of(p.cli).split_doorbells, 0);
	assert_int_equal(stat_of(p.cli).split_doorbells_skipped, 1);
	assert_false(efd_take(srv_efd(&p)));
	/* the spin's look finds the bit: the handler runs once, without the eventfd */
	assert_true(src->peek(src));
	vnic_poller_schedule(&p.srv->split->bell);
	assert_int_equal(vnic_cpu_run_once(&p.srv_cpu), 1);
	assert_int_equal(irqs, 1);
	assert_false(src->peek(src));

	/* the flag down: the next first bit rings the eventfd again */
	src->polling(src, false);
	assert_int_equal(atomic_load(srv_polling(&p)), 0);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(stat_of(p.cli).split_doorbells, 1);
	assert_int_equal(stat_of(p.cli).split_doorbells_skipped, 1);
	assert_int_equal(vnic_cpu_run_once(&p.srv_cpu), 1);
	assert_int_equal(irqs, 2);
	assert_false(efd_take(srv_efd(&p)));
	pair_free(&p);
}

/*
 * The two orders of a consumer going to sleep while a producer rings.
 * Producer first: it sees the flag up and skips the eventfd; the sleeper's
 * look after its flag comes down must find the bit. Sleeper first: the
 * producer sees the flag down and writes the eventfd the sleep waits on.
 */
static void test_spin_no_lost_wakeup_at_the_sleep(void **state)
{
	struct vnic_cpu_spin_src *src;
	unsigned int irqs = 0;
	struct vnic_crq m;
	struct pair p;

	(void)state;
	pair_make_bell(&p, VNIC_HV_DOORBELL_SPIN, 0);
	src = &p.srv->split->spin;
	vnic_hv_crq_set_irq(p.srv, VNIC_HV_SERVER, count_irq, &irqs);
	vnic_hv_crq_irq_enable(p.srv, VNIC_HV_SERVER, true);
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;

	src->polling(src, true);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(stat_of(p.cli).split_doorbells_skipped, 1);
	src->polling(src, false);
	assert_true(src->peek(src));
	assert_false(efd_take(srv_efd(&p)));
	vnic_poller_schedule(&p.srv->split->bell);
	vnic_cpu_run_once(&p.srv_cpu);
	assert_int_equal(irqs, 1);

	src->polling(src, true);
	src->polling(src, false);
	assert_false(src->peek(src));
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(stat_of(p.cli).split_doorbells, 1);
	assert_int_equal(stat_of(p.cli).split_doorbells_skipped, 1);
	assert_int_equal(vnic_cpu_run_once(&p.srv_cpu), 1);
	assert_int_equal(irqs, 2);

	/* a flag the partner set and never acts on costs us nothing: sends go on */
	vnic_hv_crq_irq_enable(p.cli, VNIC_HV_CLIENT, true);
	atomic_store(&p.srv->split->shm->pending[VNIC_HV_CLIENT].polling, 0xdeadbeef);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(vnic_hv_send_crq(p.srv, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);
	assert_int_equal(stat_of(p.srv).split_doorbells_skipped, 1);
	pair_free(&p);
}

/* The server's CRQ handler on its own cpu thread: takes every message. */
struct spin_race {
	struct vnic_hv *srv;
	_Atomic uint64_t got;
};

static void spin_race_irq(void *ctx)
{
	struct spin_race *r = ctx;
	struct vnic_crq m;

	while (vnic_hv_crq_recv(r->srv, VNIC_HV_SERVER, &m))
		atomic_fetch_add(&r->got, 1);
}

/*
 * The whole rule on a real cpu thread that spins 20 us, then sleeps: sends
 * spaced 0 to 60 us apart land in every phase of its spin and of its way
 * to sleep. A lost wake-up leaves a message unread with nobody to wake the
 * thread: the wait below then times out.
 */
static void test_spin_threaded_every_message_wakes(void **state)
{
	enum { SENDS = 20000 };
	struct spin_race r = { 0 };
	uint64_t seed = 1, deadline;
	struct vnic_crq m;
	struct pair p;

	(void)state;
	pair_make_bell(&p, VNIC_HV_DOORBELL_SPIN, 20000);
	vnic_cpu_set_spin(&p.srv_cpu, VNIC_CPU_SPIN_FIXED);
	r.srv = p.srv;
	vnic_hv_crq_set_irq(p.srv, VNIC_HV_SERVER, spin_race_irq, &r);
	vnic_hv_crq_irq_enable(p.srv, VNIC_HV_SERVER, true);
	assert_int_equal(vnic_cpu_start(&p.srv_cpu), 0);
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	deadline = vnic_now_ns() + 20000000000ull;
	for (unsigned int i = 0; i < SENDS; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		while (vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m) != VNIC_H_SUCCESS)
			assert_true(vnic_now_ns() < deadline); /* full, and nobody took any */
		vnic_spin_ns((seed >> 33) % 60000);
	}
	while (atomic_load(&r.got) < SENDS && vnic_now_ns() < deadline)
		usleep(100);
	vnic_cpu_stop(&p.srv_cpu);
	assert_int_equal(atomic_load(&r.got), SENDS);
	/* both ways were taken: doorbells skipped while it spun, written while it slept */
	assert_true(stat_of(p.cli).split_doorbells_skipped > 0);
	assert_true(stat_of(p.cli).split_doorbells > 0);
	/* it stopped: a producer must not count on it any longer */
	assert_int_equal(atomic_load(srv_polling(&p)), 0);
	pair_free(&p);
}

/* --- sub-CRQs ------------------------------------------------------------------------- */

static void test_subcrq_direct_and_indirect_across(void **state)
{
	union vnic_subcrq_entry e, *ind;
	const union vnic_subcrq_entry *got;
	struct vnic_subcrq *q;
	unsigned int irqs = 0;
	struct pair p;
	uint64_t ioba;
	uint32_t handle;

	(void)state;
	pair_make(&p);
	assert_int_equal(vnic_hv_reg_subcrq(p.srv, VNIC_HV_SERVER, 8, &q), 0);
	assert_true((q->handle & (VNIC_HV_MAX_SUBCRQS - 1)) >= SHM_SLOTS_PER_SIDE);
	vnic_hv_subcrq_set_irq(q, count_irq, &irqs);
	vnic_hv_subcrq_irq_enable(q);

	e = entry_seq(7);
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	vnic_cpu_run_once(&p.srv_cpu);
	assert_int_equal(irqs, 1);
	got = vnic_subcrq_peek(q);
	assert_non_null(got);
	/* the consumer's own copy, not the shared slot */
	assert_ptr_equal(got, &q->shadow);
	assert_int_equal(seq_of(got), 7);
	vnic_subcrq_consume(q);
	assert_null(vnic_subcrq_peek(q));

	/* indirect: read from the client's DMA memory, all three land in order */
	ind = vnic_hv_dma_alloc(p.cli, VNIC_HV_DMA_PAGE);
	assert_non_null(ind);
	assert_int_equal(vnic_hv_dma_map(p.cli, ind, VNIC_HV_DMA_PAGE, &ioba), 0);
	for (int i = 0; i < 3; i++)
		ind[i] = entry_seq(100 + (uint64_t)i);
	assert_int_equal(vnic_hv_send_subcrq_indirect(p.cli, VNIC_HV_CLIENT, q->handle, ioba, 3),
			 VNIC_H_SUCCESS);
	for (int i = 0; i < 3; i++) {
		got = vnic_subcrq_peek(q);
		assert_non_null(got);
		assert_int_equal(seq_of(got), 100 + i);
		vnic_subcrq_consume(q);
	}
	/* eight slots: the ninth send is BUSY, nothing written */
	vnic_hv_subcrq_irq_disable(q);
	for (int i = 0; i < 8; i++)
		assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, q->handle, &e),
				 VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_BUSY);

	/* freed by its owner: the client's next send is refused */
	handle = q->handle;
	vnic_hv_free_subcrq(p.srv, q);
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, handle, &e), VNIC_H_PARAMETER);
	vnic_hv_dma_unmap(p.cli, ioba);
	vnic_hv_dma_free(p.cli, ind);
	pair_free(&p);
}

/* --- the DMA window ---------------------------------------------------------------------- */

static void test_dma_translates_into_the_servers_mapping(void **state)
{
	uint8_t *mem, *seen;
	struct pair p;
	uint64_t ioba, bad;

	(void)state;
	pair_make(&p);
	mem = vnic_hv_dma_alloc(p.cli, 2 * VNIC_HV_DMA_PAGE);
	assert_non_null(mem);
	assert_int_equal(vnic_hv_dma_map(p.cli, mem, 5000, &ioba), 0);
	for (int i = 0; i < 5000; i++)
		mem[i] = (uint8_t)(i * 7);
	seen = vnic_hv_dma_translate(p.srv, ioba, 5000);
	assert_non_null(seen);
	assert_ptr_not_equal(seen, mem);
	assert_memory_equal(seen, mem, 5000);

	bad = stat_of(p.srv).dma_bad_translation;
	assert_null(vnic_hv_dma_translate(p.srv, ioba, 5001));
	assert_null(vnic_hv_dma_translate(p.srv, ioba + 4999, 2));
	assert_null(vnic_hv_dma_translate(p.srv, ioba - 1, 1));
	assert_int_equal(stat_of(p.srv).dma_bad_translation, bad + 3);
	assert_int_equal(vnic_hv_dma_unmap(p.cli, ioba), 0);
	assert_null(vnic_hv_dma_translate(p.srv, ioba, 1));

	/* the pool is used up, then given back */
	assert_null(vnic_hv_dma_alloc(p.cli, POOL));
	vnic_hv_dma_free(p.cli, mem);
	mem = vnic_hv_dma_alloc(p.cli, POOL);
	assert_non_null(mem);
	vnic_hv_dma_free(p.cli, mem);
	pair_free(&p);
}

/* --- a hostile partner ------------------------------------------------------------------- */

/* The server announces a ring; the client, hostile, rewrites its record's size. */
static void test_hostile_ring_record_refused(void **state)
{
	static const uint32_t sizes[] = { 0, 3, 6, VNIC_HV_MAX_SUBCRQ_ENTRIES * 2, UINT32_MAX };
	union vnic_subcrq_entry e = entry_seq(1);

	(void)state;
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct vnic_subcrq *q;
		struct pair p;
		unsigned int idx;

		pair_make(&p);
		assert_int_equal(vnic_hv_reg_subcrq(p.srv, VNIC_HV_SERVER, 8, &q), 0);
		idx = q->handle & (VNIC_HV_MAX_SUBCRQS - 1);
		atomic_store(&p.cli->split->shm->ring[idx].entries, sizes[i]);
		assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, q->handle, &e),
				 VNIC_H_PARAMETER);
		assert_int_equal(stat_of(p.cli).split_bad_ring, 1);
		assert_null(vnic_subcrq_peek(q));
		vnic_hv_free_subcrq(p.srv, q);
		pair_free(&p);
	}
}

/* The client writes the DMA table the server reads: an offset past its memory, a stuck seqlock. */
static void test_hostile_dma_table_refused(void **state)
{
	struct dma_table *t;
	struct pair p;
	uint64_t ioba, bad;
	void *mem;

	(void)state;
	pair_make(&p);
	t = &p.cli->split->shm->dma;
	mem = vnic_hv_dma_alloc(p.cli, VNIC_HV_DMA_PAGE);
	assert_int_equal(vnic_hv_dma_map(p.cli, mem, VNIC_HV_DMA_PAGE, &ioba), 0);
	assert_non_null(vnic_hv_dma_translate(p.srv, ioba, VNIC_HV_DMA_PAGE));
	bad = stat_of(p.srv).dma_bad_translation;

	/* the offset points past the pool, or wraps with the length */
	__atomic_store_n(&t->maps[0].addr, POOL, __ATOMIC_RELAXED);
	assert_null(vnic_hv_dma_translate(p.srv, ioba, 1));
	__atomic_store_n(&t->maps[0].addr, UINT64_MAX - 10, __ATOMIC_RELAXED);
	assert_null(vnic_hv_dma_translate(p.srv, ioba, 100));
	__atomic_store_n(&t->maps[0].addr, 0, __ATOMIC_RELAXED);
	assert_non_null(vnic_hv_dma_translate(p.srv, ioba, VNIC_HV_DMA_PAGE));

	/* a count above the table and a writer that never finishes: bounded, refused */
	__atomic_store_n(&t->n, UINT32_MAX, __ATOMIC_RELAXED);
	vnic_hv_dma_translate(p.srv, ioba + (1ull << 30), 1);
	__atomic_store_n(&t->n, 1, __ATOMIC_RELAXED);
	atomic_store(&t->seq, atomic_load(&t->seq) + 1);
	assert_null(vnic_hv_dma_translate(p.srv, ioba, 1));
	atomic_store(&t->seq, atomic_load(&t->seq) + 1);
	assert_int_equal(stat_of(p.srv).dma_bad_translation, bad + 4);
	assert_non_null(vnic_hv_dma_translate(p.srv, ioba, 1));

	vnic_hv_dma_unmap(p.cli, ioba);
	vnic_hv_dma_free(p.cli, mem);
	pair_free(&p);
}

/* Doorbell bits for rings the server does not own, and an entry rewritten after the peek. */
static void test_hostile_doorbells_and_entries(void **state)
{
	union vnic_subcrq_entry e = entry_seq(5);
	const union vnic_subcrq_entry *got;
	struct vnic_subcrq *q;
	unsigned int irqs = 0, idx;
	struct pair p;
	uint64_t fire = 1;

	(void)state;
	pair_make(&p);
	assert_int_equal(vnic_hv_reg_subcrq(p.srv, VNIC_HV_SERVER, 8, &q), 0);
	vnic_hv_subcrq_set_irq(q, count_irq, &irqs);
	idx = q->handle & (VNIC_HV_MAX_SUBCRQS - 1);

	/* bit 0 is a client slot, bit 5 of the CRQ word means nothing: counted, no handler */
	atomic_fetch_or(&p.cli->split->shm->pending[VNIC_HV_SERVER].w[0], 1ull | 1ull << idx);
	atomic_fetch_or(&p.cli->split->shm->pending[VNIC_HV_SERVER].w[1], 1ull << 5);
	assert_int_equal(write(p.cli->split->fd[VNIC_HV_SPLIT_FD_TO_SERVER], &fire, 8), 8);
	vnic_cpu_run_once(&p.srv_cpu);
	assert_int_equal(irqs, 1); /* its own ring's bit: a spurious call, harmless */
	assert_int_equal(stat_of(p.srv).split_irq_spurious, 2);

	/* the copy peek returned keeps what was checked */
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, q->handle, &e), VNIC_H_SUCCESS);
	got = vnic_subcrq_peek(q);
	assert_non_null(got);
	memset(p.cli->split->shm->rings[idx][0].raw + 1, 0xff, sizeof(e) - 1);
	assert_int_equal(seq_of(got), 5);
	vnic_subcrq_consume(q);
	vnic_hv_free_subcrq(p.srv, q);
	pair_free(&p);
}

/* --- a server that goes away, and the next one on the same memory ------------------------ */

static struct vnic_crq crq_msg(uint8_t cmd)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = cmd;
	return m;
}

/*
 * The old server dies with cursors away from slot 0 and words of its era
 * left behind: an unread message each way, an unread completion in the
 * client's ring, its ring's record. The client's hv raises a transport
 * event and rewinds its half; a new server half on the same fds finds the
 * transport closed, starts its half clean, and both ends meet at slot 0.
 * The old half is never called again, as a killed process is not.
 */
static void test_partner_lost_then_a_new_server(void **state)
{
	const union vnic_subcrq_entry *got;
	struct vnic_subcrq *own, *old, *neu;
	union vnic_subcrq_entry e;
	unsigned int irqs = 0, idx;
	struct vnic_hv *srv2;
	struct vnic_crq m;
	struct pair p;
	int sv[2];

	(void)state;
	pair_make(&p);
	vnic_hv_crq_set_irq(p.cli, VNIC_HV_CLIENT, count_irq, &irqs);
	vnic_hv_crq_irq_enable(p.cli, VNIC_HV_CLIENT, true);
	assert_int_equal(vnic_hv_reg_subcrq(p.cli, VNIC_HV_CLIENT, 8, &own), 0);
	assert_int_equal(vnic_hv_reg_subcrq(p.srv, VNIC_HV_SERVER, 8, &old), 0);
	idx = old->handle & (VNIC_HV_MAX_SUBCRQS - 1);
	for (uint64_t i = 0; i < 3; i++) {
		e = entry_seq(i);
		assert_int_equal(vnic_hv_send_subcrq(p.srv, VNIC_HV_SERVER, own->handle, &e),
				 VNIC_H_SUCCESS);
		assert_non_null(vnic_subcrq_peek(own));
		vnic_subcrq_consume(own);
		assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, old->handle, &e),
				 VNIC_H_SUCCESS);
		assert_non_null(vnic_subcrq_peek(old));
		vnic_subcrq_consume(old);
	}
	e = entry_seq(99);
	assert_int_equal(vnic_hv_send_subcrq(p.srv, VNIC_HV_SERVER, own->handle, &e),
			 VNIC_H_SUCCESS);
	m = crq_msg(0x41);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_int_equal(vnic_hv_send_crq(p.srv, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);
	vnic_cpu_run_once(&p.cli_cpu);
	irqs = 0;

	/* gone: nothing happens until the hv's poller runs on the client's cpu */
	vnic_hv_split_partner_lost(p.cli);
	assert_false(vnic_hv_split_partner_ready(p.cli));
	vnic_cpu_run_once(&p.cli_cpu);
	assert_true(vnic_hv_split_partner_ready(p.cli));
	assert_int_equal(stat_of(p.cli).split_partner_lost, 1);
	assert_int_equal(irqs, 1);
	assert_true(vnic_hv_crq_pending(p.cli, VNIC_HV_CLIENT));
	assert_true(vnic_hv_crq_recv(p.cli, VNIC_HV_CLIENT, &m));
	assert_int_equal(m.first, VNIC_CRQ_XPORT_EVENT);
	assert_int_equal(m.xport.reason, VNIC_XPORT_PARTNER_CLOSED);
	/* the old server's unread message and completion went with it */
	assert_false(vnic_hv_crq_recv(p.cli, VNIC_HV_CLIENT, &m));
	assert_null(vnic_subcrq_peek(own));
	/* closed until a server opens it: nothing lands */
	m = crq_msg(0x42);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_CLOSED);
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, old->handle, &e),
			 VNIC_H_CLOSED);
	/* a second loss before any server came is one more event, no harm */
	vnic_hv_split_partner_lost(p.cli);
	vnic_cpu_run_once(&p.cli_cpu);
	assert_int_equal(stat_of(p.cli).split_partner_lost, 2);
	assert_true(vnic_hv_crq_recv(p.cli, VNIC_HV_CLIENT, &m));
	assert_false(vnic_hv_crq_recv(p.cli, VNIC_HV_CLIENT, &m));

	/* the new server: the same fds, its half clean */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(vnic_hv_split_send(sv[0], p.cli), 0);
	assert_int_equal(vnic_hv_split_recv(sv[1], &srv2, MAX_IND, NULL), 0);
	close(sv[0]);
	close(sv[1]);
	assert_false(vnic_hv_crq_is_open(srv2));
	assert_int_equal(atomic_load(&p.cli->split->shm->ring[idx].handle), 0);
	assert_false(vnic_hv_crq_recv(srv2, VNIC_HV_SERVER, &m));
	vnic_hv_crq_set_open(srv2, true);
	/* the old ring's handle names nothing now */
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, old->handle, &e),
			 VNIC_H_PARAMETER);

	/* both ends meet at slot 0: the CRQ each way, a ring each way */
	m = crq_msg(0x43);
	assert_int_equal(vnic_hv_send_crq(p.cli, VNIC_HV_CLIENT, &m), VNIC_H_SUCCESS);
	assert_true(vnic_hv_crq_recv(srv2, VNIC_HV_SERVER, &m));
	assert_int_equal(m.cmd, 0x43);
	m = crq_msg(0x44);
	assert_int_equal(vnic_hv_send_crq(srv2, VNIC_HV_SERVER, &m), VNIC_H_SUCCESS);
	assert_true(vnic_hv_crq_recv(p.cli, VNIC_HV_CLIENT, &m));
	assert_int_equal(m.cmd, 0x44);
	/* a fresh process numbers its rings as the old one did: the same handle, bound anew */
	assert_int_equal(vnic_hv_reg_subcrq(srv2, VNIC_HV_SERVER, 8, &neu), 0);
	assert_int_equal(neu->handle, old->handle);
	e = entry_seq(7);
	assert_int_equal(vnic_hv_send_subcrq(p.cli, VNIC_HV_CLIENT, neu->handle, &e),
			 VNIC_H_SUCCESS);
	got = vnic_subcrq_peek(neu);
	assert_non_null(got);
	assert_int_equal(seq_of(got), 7);
	e = entry_seq(8);
	assert_int_equal(vnic_hv_send_subcrq(srv2, VNIC_HV_SERVER, own->handle, &e),
			 VNIC_H_SUCCESS);
	got = vnic_subcrq_peek(own);
	assert_non_null(got);
	assert_int_equal(seq_of(got), 8);
	vnic_subcrq_consume(own);

	vnic_hv_free_subcrq(srv2, neu);
	vnic_hv_destroy(srv2);
	vnic_hv_free_subcrq(p.cli, own);
	pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_maps_apart_and_splits_roles),
		cmocka_unit_test(test_attach_refusals),
		cmocka_unit_test(test_attach_eof),
		cmocka_unit_test(test_crq_crosses_with_one_doorbell_while_armed),
		cmocka_unit_test(test_spin_skips_the_eventfd_while_the_partner_polls),
		cmocka_unit_test(test_spin_no_lost_wakeup_at_the_sleep),
		cmocka_unit_test(test_spin_threaded_every_message_wakes),
		cmocka_unit_test(test_subcrq_direct_and_indirect_across),
		cmocka_unit_test(test_dma_translates_into_the_servers_mapping),
		cmocka_unit_test(test_hostile_ring_record_refused),
		cmocka_unit_test(test_hostile_dma_table_refused),
		cmocka_unit_test(test_hostile_doorbells_and_entries),
		cmocka_unit_test(test_partner_lost_then_a_new_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
