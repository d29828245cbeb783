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
 * The partner is not trusted: a ring record is read once and checked
 * before the first send to it (shm_ring_bind), a doorbell bit for no ring
 * of ours is counted and ignored, the DMA table's offsets are bounded by
 * dma.c, and the mapped sizes are checked against fstat and sealed so that
 * the partner cannot shrink them under us.
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
	/* a memfd starts zeroed: every ring empty, every record "no ring" */
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

void vnic_hv_shm_bell(struct vnic_hv *hv, unsigned int word, uint64_t bit)
{
	struct hv_split *sp = hv->split;
	_Atomic uint64_t *w = &sp->shm->pending[!sp->side].w[word];
	int fd = sp->fd[sp->side == VNIC_HV_CLIENT ? VNIC_HV_SPLIT_FD_TO_SERVER
						    : VNIC_HV_SPLIT_FD_TO_CLIENT];
	uint64_t one = 1;

	/*
	 * acq_rel: the entries published before are visible to the partner
	 * that takes the bit (its exchange acquires).
	 */
	if (atomic_fetch_or_explicit(w, bit, memory_order_acq_rel))
		return;
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
	/* the eventfd first, then the bits: see the top of this file */
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	rings = atomic_exchange_explicit(&pend->w[0], 0, memory_order_acq_rel);
	other = atomic_exchange_explicit(&pend->w[1], 0, memory_order_acq_rel);
	if (rings | other)
		bells_dispatch(hv, rings, other);
	return 0;
}

int vnic_hv_split_attach_cpu(struct vnic_hv *hv, struct vnic_cpu *cpu)
{
	struct hv_split *sp = hv->split;
	int err;

	if (!sp)
		return 0;
	sp->bell_hv = hv;
	err = vnic_cpu_add(cpu, &sp->bell, "hv_doorbell", shm_bell_poll);
	if (err)
		return err;
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
