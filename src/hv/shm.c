/* SPDX-License-Identifier: MIT */
/*
 * The split transport (docs/ARCHITECTURE.md section 11): the driver's half
 * of an hv in one process, the device's in another, over memory both map.
 *
 * The client creates two sealed memfds, the region (struct hv_shm: the CRQ
 * pair, the sub-CRQ rings and their records, the DMA table, the doorbell
 * bits) and its DMA memory, and two eventfds, one per direction; remote.c
 * passes them to the server. The hcalls of hv.c, crq.c and subcrq.c run in
 * the caller's process as they do in-process, against the shared words.
 *
 * An interrupt for the partner is a doorbell: the bit of the ring in the
 * partner's pending word, and an eventfd write when that word was empty
 * (the partner has not yet taken the bits: the write before that one wakes
 * it). The partner's doorbell poller reads the eventfd first, then takes
 * the bits, so a bit set after the take comes with a write of its own.
 *
 * Spin mode (--doorbell spin): a consumer whose cpu busy-polls raises
 * pending.polling and looks at its bits on every turn of its cpu loop (a
 * struct vnic_cpu_spin_src); a producer that finds the word empty and the
 * flag up writes no eventfd. The flag comes down before the consumer
 * sleeps, followed by one more look, and the producer reads the flag after
 * its OR, all seq_cst: in their single order either the producer's load
 * comes after the consumer's store (it sees the flag down and writes the
 * eventfd) or the consumer's look comes after the producer's OR (it sees
 * the bit and does not sleep). A bit set onto a non-empty word relies on
 * whoever set the first one, as before: that one was either written to
 * the eventfd or left to a consumer that will see it before it sleeps.
 * The flag is the partner's word like any other: one that claims to poll
 * and never does strands nothing of ours, only its own rings' work (our
 * producers never wait on its bits: a full ring answers busy, as always).
 *
 * The partner is not trusted: a ring record is read once and checked
 * before the first send to it (shm_ring_bind), a doorbell bit for no ring
 * of ours is counted and ignored, the DMA table's offsets are bounded by
 * dma.c, and the mapped sizes are checked against fstat and sealed so that
 * the partner cannot shrink them under us.
 *
 * The memory is the client's and outlives a server: when the server
 * process goes away, the client's half is made ready for another one
 * (partner_gone_poll), which attaches the same fds and starts its own half
 * from a clean state (server_half_clear), whatever the last server left in
 * it (docs/PROTOCOL.md section 13, "A server that goes away").
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hv/hv_priv.h"

#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static uint64_t ctl_size(void)
{
	return (sizeof(struct hv_shm) + VNIC_HV_DMA_PAGE - 1) & ~(uint64_t)(VNIC_HV_DMA_PAGE - 1);
}

static void fds_close(int fd[VNIC_HV_SPLIT_FDS])
{
	for (unsigned int i = 0; i < VNIC_HV_SPLIT_FDS; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		fd[i] = -1;
	}
}

void vnic_hv_shm_release(struct hv_split *sp)
{
	if (!sp)
		return;
	if (sp->pool)
		munmap(sp->pool, sp->pool_size);
	if (sp->shm)
		munmap(sp->shm, ctl_size());
	fds_close(sp->fd);
	pthread_mutex_destroy(&sp->alloc.lock);
	free(sp);
}

static struct hv_split *split_new(enum vnic_hv_side side)
{
	struct hv_split *sp = aligned_alloc(VNIC_CACHELINE, sizeof(*sp));

	if (!sp)
		return NULL;
	memset(sp, 0, sizeof(*sp));
	for (unsigned int i = 0; i < VNIC_HV_SPLIT_FDS; i++)
		sp->fd[i] = -1;
	sp->side = side;
	if (pthread_mutex_init(&sp->alloc.lock, NULL)) {
		free(sp);
		return NULL;
	}
	return sp;
}

/* A sealed memfd of size bytes: its size can no longer change. fd or -errno. */
static int memfd_sealed(const char *name, uint64_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) || fcntl(fd, F_ADD_SEALS, SHM_SEALS)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* MAP_NORESERVE: the pool is sparse; pages exist once touched. */
static int map_shared(int fd, uint64_t size, void **out)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

static int maps_make(struct hv_split *sp)
{
	int err;

	err = map_shared(sp->fd[VNIC_HV_SPLIT_FD_CTL], ctl_size(), (void **)&sp->shm);
	if (err)
		return err;
	return map_shared(sp->fd[VNIC_HV_SPLIT_FD_POOL], sp->pool_size, (void **)&sp->pool);
}

static bool pool_size_ok(uint64_t size)
{
	return size && size <= VNIC_HV_SPLIT_POOL_MAX && !(size & (VNIC_HV_DMA_PAGE - 1));
}

int vnic_hv_create_split_client(struct vnic_hv **out, uint32_t max_ind_descs,
				const struct vnic_hv_cost *cost, uint64_t pool_size)
{
	struct hv_split *sp;
	int err;

	if (!out || !pool_size_ok(pool_size))
		return -EINVAL;
	sp = split_new(VNIC_HV_CLIENT);
	if (!sp)
		return -ENOMEM;
	sp->pool_size = pool_size;
	err = sp->fd[VNIC_HV_SPLIT_FD_CTL] = memfd_sealed("vnic-hv", ctl_size());
	if (err < 0)
		goto err_release;
	err = sp->fd[VNIC_HV_SPLIT_FD_POOL] = memfd_sealed("vnic-dma", pool_size);
	if (err < 0)
		goto err_release;
	for (unsigned int i = VNIC_HV_SPLIT_FD_TO_SERVER; i <= VNIC_HV_SPLIT_FD_TO_CLIENT; i++) {
		sp->fd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (sp->fd[i] < 0) {
			err = -errno;
			goto err_release;
		}
	}
	err = maps_make(sp);
	if (err)
		goto err_release;
	/* a memfd starts zeroed: every ring empty, every record "no ring", no side polling */
	sp->shm->magic = SHM_MAGIC;
	sp->shm->version = SHM_VERSION;
	atomic_store_explicit(&sp->shm->open.v, 1, memory_order_relaxed);
	sp->shm->dma.next_ioba = VNIC_HV_IOBA_BASE;
	err = vnic_hv_create_on(out, max_ind_descs, cost, sp);
	if (err)
		goto err_release;
	return 0;

err_release:
	vnic_hv_shm_release(sp);
	return err;
}

/* A memfd of exactly size bytes that can no longer shrink or grow. */
static bool memfd_ok(int fd, uint64_t size)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
		return false;
	return !fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size;
}

/* An eventfd: the only kind of fd whose 8-byte read and write mean a doorbell. */
static bool eventfd_ok(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

/*
 * The words a server writes, as a server that never ran would find them:
 * an attach may follow another server on the same memory (a restart), and
 * nothing that one left is ours to believe. Messages to the server are
 * dropped (we are their consumer, and start at slot 0 as the client's
 * producer does again), its doorbell bits and arms cleared, every ring
 * record of its half withdrawn (a ring's body is zeroed when registered).
 * The client sends nothing meanwhile: its transport is closed, or (the
 * first attach) its drivers are not open yet.
 */
static void server_half_clear(struct hv_shm *shm)
{
	memset(shm->crq[VNIC_HV_SERVER], 0, sizeof(shm->crq[VNIC_HV_SERVER]));
	atomic_store_explicit(&shm->crq_armed[VNIC_HV_SERVER].v, 0, memory_order_relaxed);
	for (unsigned int w = 0; w < 2; w++)
		atomic_store_explicit(&shm->pending[VNIC_HV_SERVER].w[w], 0, memory_order_relaxed);
	atomic_store_explicit(&shm->pending[VNIC_HV_SERVER].polling, 0, memory_order_relaxed);
	for (unsigned int i = SHM_SLOTS_PER_SIDE; i < VNIC_HV_MAX_SUBCRQS; i++) {
		atomic_store_explicit(&shm->ring[i].handle, 0, memory_order_relaxed);
		atomic_store_explicit(&shm->ring[i].entries, 0, memory_order_relaxed);
		atomic_store_explicit(&shm->ring[i].armed, 0, memory_order_relaxed);
	}
}

int vnic_hv_create_split_server(struct vnic_hv **out, uint32_t max_ind_descs,
				const struct vnic_hv_cost *cost, const int fds[VNIC_HV_SPLIT_FDS],
				uint64_t pool_size)
{
	struct hv_split *sp;
	int err = -EINVAL;

	sp = split_new(VNIC_HV_SERVER);
	if (!sp) {
		int tmp[VNIC_HV_SPLIT_FDS];

		memcpy(tmp, fds, sizeof(tmp));
		fds_close(tmp);
		return -ENOMEM;
	}
	memcpy(sp->fd, fds, sizeof(sp->fd));
	sp->pool_size = pool_size;
	if (!out || !pool_size_ok(pool_size) || !memfd_ok(sp->fd[VNIC_HV_SPLIT_FD_CTL], ctl_size()) ||
	    !memfd_ok(sp->fd[VNIC_HV_SPLIT_FD_POOL], pool_size) ||
	    !eventfd_ok(sp->fd[VNIC_HV_SPLIT_FD_TO_SERVER]) ||
	    !eventfd_ok(sp->fd[VNIC_HV_SPLIT_FD_TO_CLIENT]))
		goto err_release;
	err = maps_make(sp);
	if (err)
		goto err_release;
	if (sp->shm->magic != SHM_MAGIC || sp->shm->version != SHM_VERSION) {
		err = -EINVAL;
		goto err_release;
	}
	server_half_clear(sp->shm);
	err = vnic_hv_create_on(out, max_ind_descs, cost, sp);
	if (err)
		goto err_release;
	return 0;

err_release:
	vnic_hv_shm_release(sp);
	return err;
}

bool vnic_hv_split_fds(const struct vnic_hv *hv, int fds[VNIC_HV_SPLIT_FDS], uint64_t *pool_size)
{
	if (!hv->split)
		return false;
	memcpy(fds, hv->split->fd, sizeof(hv->split->fd));
	*pool_size = hv->split->pool_size;
	return true;
}

/* --- the partner's rings ----------------------------------------------------------- */

/*
 * The partner announced a ring in slot idx (or replaced it): bind our
 * producer's view of it, starting at slot 0 as its consumer does. The
 * record is read once; the ring's memory is the slot's own, so only the
 * size needs checking. Producer's thread.
 */
static struct vnic_subcrq *shm_ring_bind(struct vnic_hv *hv, unsigned int idx, uint32_t handle)
{
	struct hv_split *sp = hv->split;
	struct shm_ring *r = &sp->shm->ring[idx];
	struct vnic_subcrq *q = &sp->remote[idx];
	uint32_t entries = atomic_load_explicit(&r->entries, memory_order_relaxed);

	if (!entries || entries > VNIC_HV_MAX_SUBCRQ_ENTRIES || (entries & (entries - 1))) {
		ctr_add_shared(&hv->glob.split_bad_ring, 1);
		return NULL;
	}
	q->ring = sp->shm->rings[idx];
	q->size = entries;
	q->handle = handle;
	q->owner = !sp->side;
	q->prod = 0;
	q->armed = &r->armed;
	q->remote = true;
	q->shared = true;
	atomic_store_explicit(&hv->slots[idx].q, q, memory_order_seq_cst);
	return q;
}

struct vnic_subcrq *vnic_hv_shm_remote(struct vnic_hv *hv, unsigned int idx, uint32_t handle)
{
	struct shm_ring *r = &hv->split->shm->ring[idx];
	struct vnic_subcrq *q;

	/* acquire: pairs with the owner's release of handle after entries */
	if (!handle || atomic_load_explicit(&r->handle, memory_order_acquire) != handle)
		return NULL;
	q = atomic_load_explicit(&hv->slots[idx].q, memory_order_relaxed);
	if (vnic_likely(q && q->handle == handle))
		return q;
	return shm_ring_bind(hv, idx, handle);
}

/* --- doorbells ----------------------------------------------------------------------- */

const char *vnic_hv_doorbell_name(enum vnic_hv_doorbell mode)
{
	switch (mode) {
	case VNIC_HV_DOORBELL_EVENTFD:
		return "eventfd";
	case VNIC_HV_DOORBELL_SPIN:
		return "spin";
	case VNIC_HV_DOORBELL_MODES:
		break;
	}
	return "unknown";
}

void vnic_hv_split_set_doorbell(struct vnic_hv *hv, enum vnic_hv_doorbell mode)
{
	if (hv->split)
		hv->split->doorbell = mode == VNIC_HV_DOORBELL_SPIN ? mode : VNIC_HV_DOORBELL_EVENTFD;
}

void vnic_hv_shm_bell(struct vnic_hv *hv, unsigned int word, uint64_t bit)
{
	struct hv_split *sp = hv->split;
	struct shm_pending *pend = &sp->shm->pending[!sp->side];
	int fd = sp->fd[sp->side == VNIC_HV_CLIENT ? VNIC_HV_SPLIT_FD_TO_SERVER
						    : VNIC_HV_SPLIT_FD_TO_CLIENT];
	uint64_t one = 1;

	/*
	 * seq_cst: the entries published before are visible to the partner
	 * that takes the bit (its exchange acquires), and the OR comes before
	 * the flag's load in the order spin mode's argument needs (top of file).
	 */
	if (atomic_fetch_or_explicit(&pend->w[word], bit, memory_order_seq_cst))
		return;
	if (atomic_load_explicit(&pend->polling, memory_order_seq_cst)) {
		ctr_add_shared(&hv->glob.split_doorbells_skipped, 1);
		return;
	}
	ctr_add_shared(&hv->glob.split_doorbells, 1);
	/* EAGAIN: the counter is full, the partner will wake anyway */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

/* The handlers of the bits the partner rang, on the doorbell poller's cpu. */
static void bells_dispatch(struct vnic_hv *hv, uint64_t rings, uint64_t other)
{
	enum vnic_hv_side side = hv->split->side;

	while (rings) {
		unsigned int i = (unsigned int)__builtin_ctzll(rings);
		struct vnic_subcrq *q = atomic_load_explicit(&hv->slots[i].q, memory_order_acquire);

		rings &= rings - 1;
		if (!slot_local(hv, i) || !q) {
			ctr_add_shared(&hv->glob.split_irq_spurious, 1);
			continue;
		}
		irq_call(hv, &q->irq_fn, &q->irq_ctx);
	}
	if (other & 1ull << SHM_BELL_CRQ)
		irq_call(hv, &hv->crq[side].irq_fn, &hv->crq[side].irq_ctx);
	if (other & ~(1ull << SHM_BELL_CRQ))
		ctr_add_shared(&hv->glob.split_irq_spurious, 1);
}

static int shm_bell_poll(struct vnic_poller *p, int budget)
{
	struct hv_split *sp = vnic_container_of(p, struct hv_split, bell);
	struct vnic_hv *hv = sp->bell_hv;
	struct shm_pending *pend = &sp->shm->pending[sp->side];
	int fd = sp->fd[sp->side == VNIC_HV_CLIENT ? VNIC_HV_SPLIT_FD_TO_CLIENT
						    : VNIC_HV_SPLIT_FD_TO_SERVER];
	uint64_t v, rings, other;

	(void)budget;
	/*
	 * The eventfd first, then the bits: see the top of this file. Not
	 * when a spin's look found the bits: a skipped read leaves at most a
	 * count from before, one later run that finds nothing; a read after
	 * the take could eat the write of a bit set after it.
	 */
	if (sp->peeked)
		sp->peeked = false;
	else if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	rings = atomic_exchange_explicit(&pend->w[0], 0, memory_order_acq_rel);
	other = atomic_exchange_explicit(&pend->w[1], 0, memory_order_acq_rel);
	if (rings | other)
		bells_dispatch(hv, rings, other);
	return 0;
}

/* --- a partner that goes away (client) ---------------------------------------------- */

/*
 * Our rings, empty and back at slot 0: the next server's producers start
 * there. Their consumers run on this cpu (the driver's pollers), between
 * two polls of which we are.
 */
static void own_rings_rewind(struct vnic_hv *hv)
{
	for (unsigned int i = 0; i < VNIC_HV_MAX_SUBCRQS; i++) {
		struct vnic_subcrq *q = atomic_load_explicit(&hv->slots[i].q, memory_order_relaxed);

		if (!slot_local(hv, i) || !q)
			continue;
		memset(q->ring, 0, (size_t)q->size * sizeof(*q->ring));
		q->cur = 0;
	}
}

/*
 * The old partner's rings are forgotten: the next send to a ring of the
 * next server binds it afresh, from slot 0 (shm_ring_bind), even if its
 * handle is one the old server used. The sends counted on them are kept
 * in retired, as a free keeps a ring's. The senders are on this cpu.
 */
static void partner_rings_unbind(struct vnic_hv *hv)
{
	for (unsigned int i = 0; i < VNIC_HV_MAX_SUBCRQS; i++) {
		struct subcrq_slot *slot = &hv->slots[i];
		struct vnic_subcrq *q = atomic_load_explicit(&slot->q, memory_order_relaxed);

		if (slot_local(hv, i) || !q)
			continue;
		atomic_store_explicit(&slot->q, NULL, memory_order_seq_cst);
		hv->retired.send_subcrq += vnic_ctr_read(&slot->sends);
		hv->retired.send_subcrq_indirect += vnic_ctr_read(&slot->sends_indirect);
		hv->retired.indirect_entries += vnic_ctr_read(&slot->indirect_entries);
		if (vnic_ctr_read(&slot->indirect_max) > hv->retired.indirect_max)
			hv->retired.indirect_max = vnic_ctr_read(&slot->indirect_max);
		hv->retired.rc_busy += vnic_ctr_read(&q->full);
		__atomic_store_n(&slot->sends, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->sends_indirect, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->indirect_entries, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->indirect_max, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&q->full, 0, __ATOMIC_RELAXED);
	}
}

/*
 * The client's half of the layout as a new server expects it: the CRQ to
 * us empty and read from slot 0, ours to it written from slot 0 (the new
 * server clears what we left there), our rings rewound, the doorbell bits
 * the old server rang dropped.
 */
static void client_half_rewind(struct vnic_hv *hv)
{
	struct hv_split *sp = hv->split;
	struct crq_ring *in = &hv->crq[VNIC_HV_CLIENT], *out = &hv->crq[VNIC_HV_SERVER];

	memset(in->msgs, 0, VNIC_HV_CRQ_ENTRIES * sizeof(*in->msgs));
	in->cur = 0;
	pthread_mutex_lock(&out->lock);
	out->prod = 0;
	pthread_mutex_unlock(&out->lock);
	for (unsigned int w = 0; w < 2; w++)
		atomic_store_explicit(&sp->shm->pending[VNIC_HV_CLIENT].w[w], 0,
				      memory_order_relaxed);
	pthread_mutex_lock(&hv->lock);
	own_rings_rewind(hv);
	partner_rings_unbind(hv);
	pthread_mutex_unlock(&hv->lock);
}

/*
 * What the hypervisor does when the partner partition goes: the transport
 * closes (every send fails CLOSED from here, so nothing lands in memory
 * the next server reads), and the client gets a transport event, as
 * ibmvnic does from PowerVM, which its driver answers with a reset. Runs
 * on the doorbell cpu, the one of the driver's pollers, so the rewind
 * races with none of them. The old server wrote its last word before its
 * socket hung up: a process's fds close after its threads are gone.
 */
static int partner_gone_poll(struct vnic_poller *p, int budget)
{
	struct hv_split *sp = vnic_container_of(p, struct hv_split, gone);
	struct vnic_hv *hv = sp->bell_hv;
	struct crq_ring *in = &hv->crq[VNIC_HV_CLIENT];
	uint32_t lost = atomic_load_explicit(&sp->lost, memory_order_acquire);

	(void)budget;
	if (lost == atomic_load_explicit(&sp->lost_done, memory_order_relaxed))
		return 0;
	vnic_hv_crq_set_open(hv, false);
	client_half_rewind(hv);
	ctr_add_shared(&hv->glob.split_partner_lost, 1);
	atomic_store_explicit(&in->event, VNIC_XPORT_PARTNER_CLOSED, memory_order_release);
	/* a disarmed CRQ is being polled: its re-arm check finds the event */
	if (irq_armed(in->armed))
		irq_call(hv, &in->irq_fn, &in->irq_ctx);
	atomic_store_explicit(&sp->lost_done, lost, memory_order_release);
	return 0;
}

void vnic_hv_split_partner_lost(struct vnic_hv *hv)
{
	struct hv_split *sp = hv->split;

	if (!sp || sp->side != VNIC_HV_CLIENT || !sp->gone.cpu)
		return;
	atomic_fetch_add_explicit(&sp->lost, 1, memory_order_release);
	vnic_poller_schedule(&sp->gone);
}

bool vnic_hv_split_partner_ready(const struct vnic_hv *hv)
{
	struct hv_split *sp = hv->split;

	return !sp || atomic_load_explicit(&sp->lost_done, memory_order_acquire) ==
			      atomic_load_explicit(&sp->lost, memory_order_relaxed);
}

/* --- spin mode: the bell cpu's look at our bits (struct vnic_cpu_spin_src) ------- */

static void bell_spin_polling(struct vnic_cpu_spin_src *src, bool on)
{
	struct hv_split *sp = vnic_container_of(src, struct hv_split, spin);

	atomic_store_explicit(&sp->shm->pending[sp->side].polling, on, memory_order_seq_cst);
}

static bool bell_spin_peek(struct vnic_cpu_spin_src *src)
{
	struct hv_split *sp = vnic_container_of(src, struct hv_split, spin);
	struct shm_pending *pend = &sp->shm->pending[sp->side];

	if (!(atomic_load_explicit(&pend->w[0], memory_order_seq_cst) |
	      atomic_load_explicit(&pend->w[1], memory_order_seq_cst)))
		return false;
	sp->peeked = true;
	return true;
}

int vnic_hv_split_attach_cpu(struct vnic_hv *hv, struct vnic_cpu *cpu)
{
	struct hv_split *sp = hv->split;
	int err;

	if (!sp)
		return 0;
	sp->bell_hv = hv;
	if (sp->side == VNIC_HV_CLIENT) {
		err = vnic_cpu_add(cpu, &sp->gone, "hv_partner_gone", partner_gone_poll);
		if (err)
			return err;
	}
	err = vnic_cpu_add(cpu, &sp->bell, "hv_doorbell", shm_bell_poll);
	if (err)
		return err;
	if (sp->doorbell == VNIC_HV_DOORBELL_SPIN) {
		sp->spin.polling = bell_spin_polling;
		sp->spin.peek = bell_spin_peek;
		sp->spin.poller = &sp->bell;
		err = vnic_cpu_add_spin_src(cpu, &sp->spin);
		if (err)
			return err;
	}
	return vnic_cpu_add_fd(cpu,
			       sp->fd[sp->side == VNIC_HV_CLIENT ? VNIC_HV_SPLIT_FD_TO_CLIENT
								  : VNIC_HV_SPLIT_FD_TO_SERVER],
			       EPOLLIN, &sp->bell);
}

/* --- the client's DMA memory --------------------------------------------------------- */

/* First fit over the gaps between the allocations, which stay sorted. */
void *vnic_hv_shm_alloc(struct hv_split *sp, size_t len)
{
	struct shm_pool *a = &sp->alloc;
	uint64_t cand = 0;
	uint32_t i;
	void *p = NULL;

	if (sp->side != VNIC_HV_CLIENT)
		return NULL;
	pthread_mutex_lock(&a->lock);
	if (a->n == VNIC_HV_MAX_DMA_WINDOWS)
		goto out_unlock;
	for (i = 0; i < a->n; i++) {
		if (len <= a->ext[i].off - cand)
			break;
		cand = a->ext[i].off + a->ext[i].len;
	}
	if (cand > sp->pool_size || len > sp->pool_size - cand)
		goto out_unlock;
	memmove(&a->ext[i + 1], &a->ext[i], (a->n - i) * sizeof(a->ext[0]));
	a->ext[i].off = cand;
	a->ext[i].len = len;
	a->n++;
	p = sp->pool + cand;
	memset(p, 0, len);
out_unlock:
	pthread_mutex_unlock(&a->lock);
	return p;
}

void vnic_hv_shm_free(struct hv_split *sp, void *p)
{
	struct shm_pool *a = &sp->alloc;
	uint64_t off = (uint64_t)((uint8_t *)p - sp->pool);

	pthread_mutex_lock(&a->lock);
	for (uint32_t i = 0; i < a->n; i++) {
		if (a->ext[i].off != off)
			continue;
		memmove(&a->ext[i], &a->ext[i + 1], (a->n - i - 1) * sizeof(a->ext[0]));
		a->n--;
		break;
	}
	pthread_mutex_unlock(&a->lock);
}
