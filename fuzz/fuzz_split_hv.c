// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the server's half of a split hv (src/hv/shm.c,
 * remote.c; docs/ARCHITECTURE.md section 11): the input is a hostile
 * client. Byte 0 picks the mode:
 *
 * - odd: the rest is an attach message on the socket (remote.c), with the
 *   real client's four descriptors when bit 1 is set. A message that is
 *   not exactly a good one must be refused, and a refusal leaves nothing.
 * - even: a fresh client/server pair, the server with a ring of its own and
 *   the client with one the server sends to, then the rest is a list of
 *   operations: the client writes bytes anywhere in the shared region (ring
 *   records, DMA table, doorbell bits, CRQ and ring slots), rings the
 *   server's doorbell, sends as a client would; the server translates iobas,
 *   sends to the client's ring, runs its doorbell poller, reads its ring
 *   and its CRQ. What must hold: a translation is NULL (and counted) or lies
 *   inside the server's own mapping of the client's memory; a send answers
 *   one of the hcall codes; a peeked entry is the consumer's copy; the CRQ
 *   drains in at most its size; nothing hangs.
 *
 * Like tests/hv/test_hv_split.c it includes hv_priv.h: the attacker writes
 * the shared layout, and the checks need the server's mapping.
 *
 * Corpus: fuzz/corpus/split_hv/.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hv/hv_priv.h"

#include "check.h"

enum { POOL = 16 * VNIC_HV_DMA_PAGE, MAX_IND = 16, MAX_OPS = 64, MAX_TRANSLATES = 8 };

struct env {
	struct vnic_hv *cli;
	struct vnic_hv *srv;
	struct vnic_cpu cpu;		/* the server's, in manual mode */
	struct vnic_subcrq *srv_ring;	/* the server consumes, the client sends */
	struct vnic_subcrq *cli_ring;	/* the client consumes, the server sends */
	uint8_t *cli_pool;		/* the client's DMA memory, all of it */
	uint64_t ioba;			/* its one mapping */
	unsigned int irqs;
};

static void count_irq(void *ctx)
{
	(*(unsigned int *)ctx)++;
}

static bool env_make(struct env *e)
{
	int sv[2];
	bool ok;

	memset(e, 0, sizeof(*e));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return false;
	ok = !vnic_hv_create_split_client(&e->cli, MAX_IND, NULL, POOL) &&
	     !vnic_hv_split_send(sv[0], e->cli) && !vnic_hv_split_recv(sv[1], &e->srv, MAX_IND, NULL);
	close(sv[0]);
	close(sv[1]);
	if (!ok)
		return false;
	FZ_CHECK(!vnic_cpu_init(&e->cpu, "s", 0));
	FZ_CHECK(!vnic_hv_split_attach_cpu(e->srv, &e->cpu));
	FZ_CHECK(!vnic_hv_reg_subcrq(e->srv, VNIC_HV_SERVER, 8, &e->srv_ring));
	FZ_CHECK(!vnic_hv_reg_subcrq(e->cli, VNIC_HV_CLIENT, 8, &e->cli_ring));
	vnic_hv_subcrq_set_irq(e->srv_ring, count_irq, &e->irqs);
	vnic_hv_subcrq_irq_enable(e->srv_ring);
	vnic_hv_crq_set_irq(e->srv, VNIC_HV_SERVER, count_irq, &e->irqs);
	vnic_hv_crq_irq_enable(e->srv, VNIC_HV_SERVER, true);
	e->cli_pool = vnic_hv_dma_alloc(e->cli, POOL);
	FZ_CHECK(e->cli_pool);
	FZ_CHECK(!vnic_hv_dma_map(e->cli, e->cli_pool, POOL, &e->ioba));
	return true;
}

static void env_free(struct env *e)
{
	if (!e->srv) {
		vnic_hv_destroy(e->cli);
		return;
	}
	vnic_cpu_fini(&e->cpu);
	vnic_hv_destroy(e->srv);
	vnic_hv_destroy(e->cli);
}

/* --- attach mode --------------------------------------------------------------------- */

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void attach(const uint8_t *d, size_t n, bool with_fds)
{
	union {
		char buf[CMSG_SPACE(VNIC_HV_SPLIT_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct vnic_hv *cli = NULL, *srv = NULL;
	struct iovec iov = { .iov_base = (void *)d, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int sv[2], fds[VNIC_HV_SPLIT_FDS], rc;
	uint64_t pool, said;

	if (n > 64 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return;
	FZ_CHECK(!vnic_hv_create_split_client(&cli, MAX_IND, NULL, POOL));
	if (with_fds) {
		struct cmsghdr *c;

		FZ_CHECK(vnic_hv_split_fds(cli, fds, &pool));
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(c), fds, sizeof(fds));
	}
	/* nothing sent (an empty message on a stream socket) is an EOF to the server */
	if (sendmsg(sv[0], &mh, 0) < 0)
		goto out;
	shutdown(sv[0], SHUT_WR);
	rc = vnic_hv_split_recv(sv[1], &srv, MAX_IND, NULL);
	FZ_CHECK(rc ? srv == NULL : srv != NULL);
	if (!rc) {
		/*
		 * only the one good message is taken; on a stream socket what
		 * follows it is the next message's, and stays unread
		 */
		FZ_CHECK(with_fds && n >= 24);
		memcpy(&said, d + 16, sizeof(said));
		FZ_CHECK(rd32(d) == 0x76686174 && d[4] == 1 && d[5] == 0 &&
			 d[6] == VNIC_HV_SPLIT_FDS && d[7] == 0 && rd32(d + 8) == MAX_IND &&
			 rd32(d + 12) == 0 && said == POOL);
	}
	vnic_hv_destroy(srv);
out:
	vnic_hv_destroy(cli);
	close(sv[0]);
	close(sv[1]);
}

/* --- region mode ------------------------------------------------------------------------ */

static uint64_t bad_translations(const struct vnic_hv *hv)
{
	struct vnic_hv_stats s;

	vnic_hv_stats(hv, &s);
	return s.dma_bad_translation;
}

static bool rc_known(long rc)
{
	return rc == VNIC_H_SUCCESS || rc == VNIC_H_PARAMETER || rc == VNIC_H_BUSY ||
	       rc == VNIC_H_CLOSED;
}

/* The client writes len bytes at a region offset of the input's choosing. */
static size_t op_write(struct env *e, const uint8_t *d, size_t n)
{
	uint8_t *region = (uint8_t *)e->cli->split->shm;
	size_t size = sizeof(struct hv_shm), off, len;

	if (n < 4)
		return n;
	/* low offsets (records, DMA table, doorbells, CRQ) three times in four */
	off = d[0] & 3 ? (size_t)(d[1] | d[2] << 8) : (size_t)(d[1] | d[2] << 8 | d[3] << 16) * 4;
	off %= size;
	len = d[3] % 64 + 1;
	if (len > n - 4)
		len = n - 4;
	if (len > size - off)
		len = size - off;
	memcpy(region + off, d + 4, len);
	return 4 + len;
}

static size_t op_translate(struct env *e, const uint8_t *d, size_t n, unsigned int *translates)
{
	const uint8_t *pool = e->srv->split->pool;
	uint64_t ioba, len, before;
	uint8_t *p;

	if (n < 7)
		return n;
	if (++*translates > MAX_TRANSLATES)
		return 7;
	/* near the real mapping half the time, anywhere the rest */
	ioba = d[0] & 1 ? e->ioba + (d[1] | d[2] << 8) : (uint64_t)rd32(d + 1);
	len = (uint64_t)(d[5] | d[6] << 8);
	before = bad_translations(e->srv);
	p = vnic_hv_dma_translate(e->srv, ioba, len);
	if (!p) {
		FZ_CHECK(bad_translations(e->srv) == before + 1);
		return 7;
	}
	FZ_CHECK(len && p >= pool && len <= POOL && (uint64_t)(p - pool) <= POOL - len);
	return 7;
}

static size_t op_send(struct env *e, const uint8_t *d, size_t n, bool from_server)
{
	union vnic_subcrq_entry ent;
	uint32_t handle;
	long rc;

	if (n < 1 + sizeof(ent))
		return n;
	memcpy(&ent, d + 1, sizeof(ent));
	if (from_server)
		handle = d[0] & 1 ? e->cli_ring->handle : rd32(d + 1);
	else
		handle = e->srv_ring->handle;
	rc = from_server ? vnic_hv_send_subcrq(e->srv, VNIC_HV_SERVER, handle, &ent)
			 : vnic_hv_send_subcrq(e->cli, VNIC_HV_CLIENT, handle, &ent);
	FZ_CHECK(rc_known(rc));
	return 1 + sizeof(ent);
}

static void op_doorbell(struct env *e)
{
	uint64_t one = 1;

	FZ_CHECK(write(e->cli->split->fd[VNIC_HV_SPLIT_FD_TO_SERVER], &one, sizeof(one)) ==
		 sizeof(one));
	vnic_cpu_run_once(&e->cpu);
}

static void op_read(struct env *e)
{
	const union vnic_subcrq_entry *got;
	struct vnic_crq m;
	unsigned int i;

	for (i = 0; i < 8 && (got = vnic_subcrq_peek(e->srv_ring)); i++) {
		FZ_CHECK(got == &e->srv_ring->shadow);
		FZ_CHECK(got->first & VNIC_SUBCRQ_VALID);
		vnic_subcrq_consume(e->srv_ring);
	}
	for (i = 0; i <= VNIC_HV_CRQ_ENTRIES && vnic_hv_crq_recv(e->srv, VNIC_HV_SERVER, &m); i++)
		FZ_CHECK(m.first & VNIC_CRQ_CMD_RSP);
	FZ_CHECK(i <= VNIC_HV_CRQ_ENTRIES);
}

static void region(const uint8_t *d, size_t n)
{
	unsigned int ops = 0, translates = 0;
	struct env e;

	if (!env_make(&e)) {
		env_free(&e);
		return;
	}
	while (n && ops++ < MAX_OPS) {
		uint8_t op = d[0];
		size_t used = 0;

		d++;
		n--;
		switch (op % 6) {
		case 0:
			used = op_write(&e, d, n);
			break;
		case 1:
			used = op_translate(&e, d, n, &translates);
			break;
		case 2:
			used = op_send(&e, d, n, true);
			break;
		case 3:
			op_doorbell(&e);
			break;
		case 4:
			op_read(&e);
			break;
		case 5:
			used = op_send(&e, d, n, false);
			break;
		}
		d += used;
		n -= used;
	}
	env_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		attach(data + 1, size - 1, data[0] & 2);
	else
		region(data + 1, size - 1);
	return 0;
}
