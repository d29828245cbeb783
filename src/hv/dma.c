/* SPDX-License-Identifier: MIT */
/*
 * The DMA window (PAPR's TCE table): ioba -> memory of the side that mapped
 * it. The device holds only iobas and translates one for every access, so a
 * descriptor naming memory outside what the client mapped is refused here.
 *
 * Mappings change on the control path (login, REQUEST_MAP, resets) while the
 * device's threads translate on the datapath. Translation must take no lock,
 * so the table is a seqlock: writers serialise on a mutex and make the
 * sequence odd while they edit; a reader retries if the sequence moved. All
 * table fields are accessed with relaxed atomics, which compile to plain loads
 * and stores and keep a torn read a retry instead of a data race.
 *
 * iobas: a bump allocator, VNIC_HV_DMA_PAGE aligned, below VNIC_IOBA_LIMIT,
 * with a guard page after every mapping. When the bump pointer reaches the
 * limit, the lowest gap between live mappings is used: an ioba comes back
 * only after its mapping is gone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hv/hv_priv.h"

#define DMA_GUARD VNIC_HV_DMA_PAGE

static uint64_t page_round_up(uint64_t len)
{
	return (len + VNIC_HV_DMA_PAGE - 1) & ~(uint64_t)(VNIC_HV_DMA_PAGE - 1);
}

static uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void wr(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static void map_copy(struct dma_map *dst, const struct dma_map *src)
{
	wr(&dst->ioba, rd(&src->ioba));
	wr(&dst->len, rd(&src->len));
	wr(&dst->addr, rd(&src->addr));
}

/* --- seqlock --------------------------------------------------------------- */

/*
 * Reader: wait out a writer in progress, at most spins times (split: the
 * writer is the partner process, which could leave seq odd for ever; then
 * the translation fails). Acquire orders the table reads after.
 */
static bool read_begin(const struct dma_table *t, uint32_t spins, uint32_t *s)
{
	while ((*s = atomic_load_explicit(&t->seq, memory_order_acquire)) & 1) {
		if (!spins--)
			return false;
		vnic_cpu_relax();
	}
	return true;
}

/* Reader: the acquire fence keeps the table reads before the re-check of seq. */
static bool read_retry(struct dma_table *t, uint32_t s)
{
	vnic_fence_on(&t->seq, memory_order_acquire);
	return atomic_load_explicit(&t->seq, memory_order_relaxed) != s;
}

/* Writer (under hv->dma_lock): seq odd, then the release fence keeps edits after it. */
static void write_begin(struct dma_table *t)
{
	uint32_t s = atomic_load_explicit(&t->seq, memory_order_relaxed);

	atomic_store_explicit(&t->seq, s + 1, memory_order_relaxed);
	vnic_fence_on(&t->seq, memory_order_release);
}

/* Writer: release publishes the edits with the even seq. */
static void write_end(struct dma_table *t)
{
	uint32_t s = atomic_load_explicit(&t->seq, memory_order_relaxed);

	atomic_store_explicit(&t->seq, s + 1, memory_order_release);
}

/* --- lookup ------------------------------------------------------------------ */

/*
 * The mapping that holds all of [ioba, ioba + len), or false. May see a table
 * being edited: every index stays inside the array and the caller retries.
 */
static bool lookup(const struct dma_table *t, uint64_t ioba, uint64_t len, uint64_t *addr)
{
	uint32_t n = __atomic_load_n(&t->n, __ATOMIC_RELAXED);
	uint32_t lo = 0, hi;
	uint64_t base, mlen;

	if (n > VNIC_HV_MAX_DMA_WINDOWS)
		n = VNIC_HV_MAX_DMA_WINDOWS;
	hi = n;
	/* the last mapping whose base is <= ioba */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rd(&t->maps[mid].ioba) <= ioba)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	base = rd(&t->maps[lo - 1].ioba);
	mlen = rd(&t->maps[lo - 1].len);
	/* written so that no sum can wrap: ioba >= base is known */
	if (!len || len > mlen || ioba - base > mlen - len)
		return false;
	*addr = rd(&t->maps[lo - 1].addr) + (ioba - base);
	return true;
}

/*
 * split: addr is an offset the client wrote; it must leave [addr, addr +
 * len) inside the DMA memory this process mapped. In-process dma_size is 0
 * and addr an address.
 */
static bool in_pool(const struct vnic_hv *hv, uint64_t addr, uint64_t len)
{
	return !hv->dma_size || (addr <= hv->dma_size && len <= hv->dma_size - addr);
}

void *vnic_hv_dma_translate(struct vnic_hv *hv, uint64_t ioba, uint64_t len)
{
	struct dma_table *t = hv->dma;
	uint32_t s, tries = hv->dma_spins;
	uint64_t addr = 0;
	bool ok;

	for (;;) {
		ok = read_begin(t, hv->dma_spins, &s);
		if (!ok)
			break;
		ok = lookup(t, ioba, len, &addr);
		if (!read_retry(t, s))
			break;
		if (!--tries) {
			ok = false;
			break;
		}
	}
	if (vnic_unlikely(!ok || !in_pool(hv, addr, len))) {
		ctr_add_shared(&hv->glob.dma_bad_translation, 1);
		return NULL;
	}
	return (void *)(uintptr_t)(hv->dma_base + addr);
}

int vnic_hv_dma_read(struct vnic_hv *hv, uint64_t ioba, void *dst, uint64_t len)
{
	const void *src = vnic_hv_dma_translate(hv, ioba, len);

	if (!src)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int vnic_hv_dma_write(struct vnic_hv *hv, uint64_t ioba, const void *src, uint64_t len)
{
	void *dst = vnic_hv_dma_translate(hv, ioba, len);

	if (!dst)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

void vnic_hv_dma_charge(struct vnic_hv *hv, uint64_t len)
{
	uint64_t per_kib = hv->cost.dma_ns_per_kib;

	if (per_kib)
		vnic_spin_ns(len / 1024 * per_kib + len % 1024 * per_kib / 1024);
}

/* --- map / unmap (control path) ----------------------------------------------- */

/*
 * Where a mapping of size bytes (page multiple) goes: its ioba and its index
 * in the sorted table. The bump pointer lies above every live mapping, so a
 * bump allocation is appended; past the limit, first fit over the gaps.
 */
static bool place(const struct dma_table *t, uint64_t size, uint64_t *ioba, uint32_t *idx)
{
	uint64_t cand = VNIC_HV_IOBA_BASE;
	uint32_t i;

	if (t->next_ioba <= VNIC_IOBA_LIMIT && size <= VNIC_IOBA_LIMIT - t->next_ioba) {
		*ioba = t->next_ioba;
		*idx = t->n;
		return true;
	}
	for (i = 0; i < t->n; i++) {
		if (cand + size + DMA_GUARD <= t->maps[i].ioba)
			break;
		cand = page_round_up(t->maps[i].ioba + t->maps[i].len) + DMA_GUARD;
	}
	if (cand > VNIC_IOBA_LIMIT || size > VNIC_IOBA_LIMIT - cand)
		return false;
	*ioba = cand;
	*idx = i;
	return true;
}

int vnic_hv_dma_map(struct vnic_hv *hv, void *addr, uint64_t len, uint64_t *ioba)
{
	struct dma_table *t = hv->dma;
	uint64_t size, a = (uint64_t)(uintptr_t)addr;
	struct dma_map m;
	uint32_t idx, i;
	int err = 0;

	if (!addr || !ioba || !len || len > VNIC_IOBA_LIMIT - VNIC_HV_IOBA_BASE - DMA_GUARD)
		return -EINVAL;
	/* split: only the client maps, and only memory the server can see (vnic_hv_dma_alloc) */
	if (hv->split && (hv->split->side != VNIC_HV_CLIENT || a < hv->dma_base ||
			  !in_pool(hv, a - hv->dma_base, len)))
		return -EINVAL;
	size = page_round_up(len);

	pthread_mutex_lock(&hv->dma_lock);
	if (t->n == VNIC_HV_MAX_DMA_WINDOWS || !place(t, size, &m.ioba, &idx)) {
		err = -ENOSPC;
		goto out_unlock;
	}
	m.len = len;
	m.addr = a - hv->dma_base;

	write_begin(t);
	for (i = t->n; i > idx; i--)
		map_copy(&t->maps[i], &t->maps[i - 1]);
	map_copy(&t->maps[idx], &m);
	__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELAXED);
	write_end(t);

	if (m.ioba >= t->next_ioba)
		t->next_ioba = m.ioba + size + DMA_GUARD;
	*ioba = m.ioba;
out_unlock:
	pthread_mutex_unlock(&hv->dma_lock);
	return err;
}

int vnic_hv_dma_unmap(struct vnic_hv *hv, uint64_t ioba)
{
	struct dma_table *t = hv->dma;
	uint32_t i, j;
	int err = -EINVAL;

	if (hv->split && hv->split->side != VNIC_HV_CLIENT)
		return -EINVAL;
	pthread_mutex_lock(&hv->dma_lock);
	for (i = 0; i < t->n; i++) {
		if (t->maps[i].ioba != ioba)
			continue;
		write_begin(t);
		for (j = i; j + 1 < t->n; j++)
			map_copy(&t->maps[j], &t->maps[j + 1]);
		__atomic_store_n(&t->n, t->n - 1, __ATOMIC_RELAXED);
		write_end(t);
		err = 0;
		break;
	}
	pthread_mutex_unlock(&hv->dma_lock);
	return err;
}

/* In-process: the heap. Split: the client's shared DMA memory (shm.c). */
void *vnic_hv_dma_alloc(struct vnic_hv *hv, size_t len)
{
	size_t sz = (size_t)page_round_up(len);
	void *p;

	if (!len)
		return NULL;
	if (hv->split)
		return vnic_hv_shm_alloc(hv->split, sz);
	p = aligned_alloc(VNIC_HV_DMA_PAGE, sz);
	if (p)
		memset(p, 0, sz);
	return p;
}

void vnic_hv_dma_free(struct vnic_hv *hv, void *p)
{
	if (!p)
		return;
	if (hv->split)
		vnic_hv_shm_free(hv->split, p);
	else
		free(p);
}
