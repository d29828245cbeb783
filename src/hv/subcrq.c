/* SPDX-License-Identifier: MIT */
/*
 * Sub-CRQs (docs/PROTOCOL.md sections 4, 5 and 8): rings of 32-byte entries the
 * hv allocates for one side (the owner, which consumes) and the other side
 * fills with H_SEND_SUB_CRQ (one entry by value) or H_SEND_SUB_CRQ_INDIRECT
 * (up to max_ind_descs entries read through the DMA window). Ownership of a
 * slot passes through the valid bit of byte 0 (barrier helpers in hv_priv.h).
 *
 * Everything a sender passes is checked on every call: the handle (slot and
 * generation), the side, the valid bits, the count, the ioba of the array.
 * A refused call writes nothing.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hv/hv_priv.h"

#define SLOT_MASK (VNIC_HV_MAX_SUBCRQS - 1)

static long send_fail(struct vnic_hv *hv, long rc)
{
	ctr_add_shared(rc == VNIC_H_CLOSED ? &hv->glob.rc_closed : &hv->glob.rc_parameter, 1);
	return rc;
}

static bool transport_open(struct vnic_hv *hv)
{
	return atomic_load_explicit(hv->open, memory_order_acquire);
}

/*
 * Pin the ring behind handle for the length of one hcall, or NULL if the
 * handle names no live ring. Pairs with the free path: the increment and the
 * load of q, and free's clearing of q and its load of senders, are all
 * seq_cst, so either free sees us and waits, or we see q gone.
 */
static struct vnic_subcrq *slot_get(struct vnic_hv *hv, uint32_t handle, struct subcrq_slot **out)
{
	struct subcrq_slot *slot = &hv->slots[handle & SLOT_MASK];
	struct vnic_subcrq *q;

	atomic_fetch_add_explicit(&slot->senders, 1, memory_order_seq_cst);
	/* split: a ring of the partner process, as its shared record says now */
	if (vnic_unlikely(!slot_local(hv, handle & SLOT_MASK)))
		q = vnic_hv_shm_remote(hv, handle & SLOT_MASK, handle);
	else
		q = atomic_load_explicit(&slot->q, memory_order_seq_cst);
	if (vnic_unlikely(!q || q->handle != handle)) {
		atomic_fetch_sub_explicit(&slot->senders, 1, memory_order_release);
		return NULL;
	}
	*out = slot;
	return q;
}

/* Release: our accesses to the ring complete before free can see zero. */
static void slot_put(struct subcrq_slot *slot)
{
	atomic_fetch_sub_explicit(&slot->senders, 1, memory_order_release);
}

static bool slot_busy(const struct vnic_subcrq *q, uint32_t idx)
{
	return ring_first_acquire(&q->ring[idx & (q->size - 1)].first) & VNIC_SUBCRQ_VALID;
}

/* Body first, valid byte last (release). first always carries the valid bit. */
static void entry_publish(union vnic_subcrq_entry *dst, const union vnic_subcrq_entry *src,
			  uint8_t first)
{
	memcpy(dst->raw + 1, src->raw + 1, sizeof(*dst) - 1);
	ring_first_publish(&dst->first, first | VNIC_SUBCRQ_VALID);
}

/*
 * hcall-busy, hcall-dropped, hcall-closed (docs/FAULTS.md): one draw per
 * send of the driver, from the ring's generator (its producer's). The rc to
 * answer instead of sending, or VNIC_H_SUCCESS to go on. Nothing is written
 * either way.
 */
static long hcall_fault(struct vnic_hv *hv, struct subcrq_slot *slot, uint32_t handle,
			enum vnic_hv_side from)
{
	struct hv_fault_live *f = &hv->fl;
	double busy = atomic_load_explicit(&f->hcall_busy, memory_order_relaxed);
	double dropped = atomic_load_explicit(&f->hcall_dropped, memory_order_relaxed);
	double closed = atomic_load_explicit(&f->hcall_closed, memory_order_relaxed);
	uint32_t gen = atomic_load_explicit(&f->gen, memory_order_relaxed);
	double u;

	if (from != VNIC_HV_CLIENT || !(busy > 0 || dropped > 0 || closed > 0))
		return VNIC_H_SUCCESS;
	/* a set since our last draw: this ring's stream starts over from the new seed */
	if (vnic_unlikely(slot->rng_gen != gen)) {
		uint64_t stream = atomic_load_explicit(&f->stream, memory_order_relaxed);

		vnic_fault_rng_init(&slot->rng,
				    atomic_load_explicit(&f->seed, memory_order_relaxed),
				    stream << 32 ^ handle);
		slot->rng_gen = gen;
	}
	u = (double)(vnic_fault_rng_next(&slot->rng) >> 11) * 0x1p-53;
	if (u < busy) {
		ctr_add_shared(&hv->glob.fault_busy, 1);
		ctr_add_shared(&hv->glob.rc_busy, 1);
		return VNIC_H_BUSY;
	}
	u -= busy;
	if (u < dropped) {
		ctr_add_shared(&hv->glob.fault_dropped, 1);
		ctr_add_shared(&hv->glob.rc_dropped, 1);
		return VNIC_H_DROPPED;
	}
	u -= dropped;
	if (u < closed) {
		ctr_add_shared(&hv->glob.fault_closed, 1);
		ctr_add_shared(&hv->glob.rc_closed, 1);
		return VNIC_H_CLOSED;
	}
	return VNIC_H_SUCCESS;
}

/*
 * The owner's interrupt, once per hcall whatever the number of entries; in
 * the partner process, a doorbell (shm.c).
 */
static void raise_irq(struct vnic_hv *hv, struct vnic_subcrq *q)
{
	if (irq_armed(q->armed)) {
		vnic_ctr_add(&q->irqs, 1);
		if (q->remote)
			vnic_hv_shm_bell(hv, 0, 1ull << (q->handle & SLOT_MASK));
		else
			irq_call(hv, &q->irq_fn, &q->irq_ctx);
	} else {
		vnic_ctr_add(&q->irqs_masked, 1);
	}
}

/* --- registration (control path) ---------------------------------------------- */

int vnic_hv_reg_subcrq(struct vnic_hv *hv, enum vnic_hv_side owner, uint32_t entries,
		       struct vnic_subcrq **out)
{
	struct subcrq_slot *slot = NULL;
	struct vnic_subcrq *q;
	size_t bytes;
	unsigned int i;
	int err;

	if (!out || !side_ok(owner) || !entries || entries > VNIC_HV_MAX_SUBCRQ_ENTRIES ||
	    (entries & (entries - 1)) || (hv->split && owner != hv->split->side))
		return -EINVAL;

	q = aligned_alloc(VNIC_CACHELINE, sizeof(*q));
	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	bytes = (size_t)entries * sizeof(*q->ring);
	bytes = (bytes + VNIC_HV_DMA_PAGE - 1) & ~(size_t)(VNIC_HV_DMA_PAGE - 1);
	/* split: the ring is the slot's, in shared memory, set below */
	if (!hv->split) {
		q->ring = aligned_alloc(VNIC_HV_DMA_PAGE, bytes);
		if (!q->ring) {
			err = -ENOMEM;
			goto err_free_q;
		}
		memset(q->ring, 0, bytes);
	}
	q->size = entries;
	q->owner = owner;
	atomic_init(&q->irq_enabled, 0);
	q->armed = &q->irq_enabled;

	pthread_mutex_lock(&hv->lock);
	for (i = 0; i < VNIC_HV_MAX_SUBCRQS; i++) {
		if (slot_local(hv, i) &&
		    !atomic_load_explicit(&hv->slots[i].q, memory_order_relaxed)) {
			slot = &hv->slots[i];
			break;
		}
	}
	if (!slot) {
		err = -ENOSPC;
		goto err_unlock;
	}
	/* a new generation: a handle kept from before a free never matches */
	q->handle = hv->next_gen << VNIC_HV_SLOT_BITS | i;
	if (++hv->next_gen > UINT32_MAX >> VNIC_HV_SLOT_BITS)
		hv->next_gen = 1;
	__atomic_store_n(&slot->sends, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->sends_indirect, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->indirect_entries, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->indirect_max, 0, __ATOMIC_RELAXED);
	vnic_fault_rng_init(&slot->rng, hv->fault.seed, fault_stream_ring(hv, q->handle));
	slot->rng_gen = atomic_load_explicit(&hv->fl.gen, memory_order_relaxed);
	if (hv->split) {
		struct shm_ring *r = &hv->split->shm->ring[i];

		q->ring = hv->split->shm->rings[i];
		q->shared = true;
		memset(q->ring, 0, bytes);
		q->armed = &r->armed;
		atomic_store_explicit(q->armed, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&slot->q, q, memory_order_seq_cst);
	if (hv->split) {
		/* announced last: the partner binds a ring whose slots are all free */
		atomic_store_explicit(&hv->split->shm->ring[i].entries, entries,
				      memory_order_relaxed);
		atomic_store_explicit(&hv->split->shm->ring[i].handle, q->handle,
				      memory_order_release);
	}
	pthread_mutex_unlock(&hv->lock);
	*out = q;
	return 0;

err_unlock:
	pthread_mutex_unlock(&hv->lock);
	if (!hv->split)
		free(q->ring);
err_free_q:
	free(q);
	return err;
}

int vnic_hv_free_subcrq(struct vnic_hv *hv, struct vnic_subcrq *q)
{
	struct subcrq_slot *slot;

	if (!q || q->remote)
		return -EINVAL;
	slot = &hv->slots[q->handle & SLOT_MASK];
	pthread_mutex_lock(&hv->lock);
	if (atomic_load_explicit(&slot->q, memory_order_relaxed) != q) {
		pthread_mutex_unlock(&hv->lock);
		return -EINVAL;
	}
	/*
	 * split: withdrawn from the partner first. A send of the partner that
	 * read the record just before may still land in the ring; the next
	 * ring in this slot starts zeroed, and an entry landing after that is
	 * one more the consumer checks like any other (accepted race,
	 * docs/ARCHITECTURE.md section 11).
	 */
	if (hv->split)
		atomic_store_explicit(&hv->split->shm->ring[q->handle & SLOT_MASK].handle, 0,
				      memory_order_release);
	atomic_store_explicit(&slot->q, NULL, memory_order_seq_cst);
	/* a send in flight finishes in a bounded number of steps */
	while (atomic_load_explicit(&slot->senders, memory_order_seq_cst))
		sched_yield();
	hv->retired.send_subcrq += vnic_ctr_read(&slot->sends);
	hv->retired.send_subcrq_indirect += vnic_ctr_read(&slot->sends_indirect);
	hv->retired.indirect_entries += vnic_ctr_read(&slot->indirect_entries);
	if (vnic_ctr_read(&slot->indirect_max) > hv->retired.indirect_max)
		hv->retired.indirect_max = vnic_ctr_read(&slot->indirect_max);
	hv->retired.rc_busy += vnic_ctr_read(&q->full);
	pthread_mutex_unlock(&hv->lock);
	if (!hv->split)
		free(q->ring);
	free(q);
	return 0;
}

/* --- interrupts ---------------------------------------------------------------- */

void vnic_hv_subcrq_set_irq(struct vnic_subcrq *q, vnic_hv_irq_fn fn, void *ctx)
{
	__atomic_store_n(&q->irq_fn, fn, __ATOMIC_RELAXED);
	__atomic_store_n(&q->irq_ctx, ctx, __ATOMIC_RELAXED);
}

void vnic_hv_subcrq_irq_enable(struct vnic_subcrq *q)
{
	irq_arm(q->armed);
}

void vnic_hv_subcrq_irq_disable(struct vnic_subcrq *q)
{
	irq_disarm(q->armed);
}

/* --- hcalls (datapath, the producer's thread) ------------------------------------ */

/* H_SEND_SUB_CRQ; irq false: the entry is published, the interrupt left to the sender. */
static long send_one(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
		     const union vnic_subcrq_entry *entry, bool irq)
{
	struct subcrq_slot *slot;
	struct vnic_subcrq *q;
	uint8_t first;

	charge(hv->cost.hcall_direct_ns);
	if (vnic_unlikely(!entry || !side_ok(from) || (hv->split && from != hv->split->side)))
		return send_fail(hv, VNIC_H_PARAMETER);
	if (vnic_unlikely(!transport_open(hv)))
		return send_fail(hv, VNIC_H_CLOSED);
	first = entry->first;
	if (vnic_unlikely(!(first & VNIC_SUBCRQ_VALID)))
		return send_fail(hv, VNIC_H_PARAMETER);
	q = slot_get(hv, handle, &slot);
	if (vnic_unlikely(!q))
		return send_fail(hv, VNIC_H_PARAMETER);
	if (vnic_unlikely(q->owner == from)) {
		slot_put(slot);
		return send_fail(hv, VNIC_H_PARAMETER);
	}
	if (fault_injecting(hv)) {
		long rc = hcall_fault(hv, slot, handle, from);

		if (rc != VNIC_H_SUCCESS) {
			slot_put(slot);
			return rc;
		}
	}
	if (slot_busy(q, q->prod)) {
		vnic_ctr_add(&q->full, 1);
		slot_put(slot);
		return VNIC_H_BUSY;
	}
	entry_publish(&q->ring[q->prod], entry, first);
	q->prod = (q->prod + 1) & (q->size - 1);
	vnic_ctr_add(&slot->sends, 1);
	if (irq)
		raise_irq(hv, q);
	slot_put(slot);
	return VNIC_H_SUCCESS;
}

long vnic_hv_send_subcrq(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
			 const union vnic_subcrq_entry *entry)
{
	return send_one(hv, from, handle, entry, true);
}

long vnic_hv_send_subcrq_noirq(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
			       const union vnic_subcrq_entry *entry)
{
	return send_one(hv, from, handle, entry, false);
}

long vnic_hv_subcrq_raise(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle)
{
	struct subcrq_slot *slot;
	struct vnic_subcrq *q;

	charge(hv->cost.hcall_direct_ns);
	if (vnic_unlikely(!side_ok(from) || (hv->split && from != hv->split->side)))
		return send_fail(hv, VNIC_H_PARAMETER);
	if (vnic_unlikely(!transport_open(hv)))
		return send_fail(hv, VNIC_H_CLOSED);
	q = slot_get(hv, handle, &slot);
	if (vnic_unlikely(!q))
		return send_fail(hv, VNIC_H_PARAMETER);
	if (vnic_unlikely(q->owner == from)) {
		slot_put(slot);
		return send_fail(hv, VNIC_H_PARAMETER);
	}
	/* split: a ring of the other process is rung with its doorbell, as a send is */
	raise_irq(hv, q);
	slot_put(slot);
	return VNIC_H_SUCCESS;
}

/*
 * The array is the sender's memory, which it may still be writing (it is not
 * trusted): the valid bits are checked in a first pass and forced again on
 * publish, so a slot is never published without its valid bit whatever the
 * sender does meanwhile.
 */
long vnic_hv_send_subcrq_indirect(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
				  uint64_t ioba, uint32_t count)
{
	const union vnic_subcrq_entry *src;
	struct subcrq_slot *slot;
	struct vnic_subcrq *q;
	uint32_t i, mask;

	charge(hv->cost.hcall_indirect_ns);
	if (vnic_unlikely(!side_ok(from) || (hv->split && from != hv->split->side)))
		return send_fail(hv, VNIC_H_PARAMETER);
	if (vnic_unlikely(!transport_open(hv)))
		return send_fail(hv, VNIC_H_CLOSED);
	if (vnic_unlikely(!count || count > hv->max_ind_descs))
		return send_fail(hv, VNIC_H_PARAMETER);
	q = slot_get(hv, handle, &slot);
	if (vnic_unlikely(!q))
		return send_fail(hv, VNIC_H_PARAMETER);
	/* a batch larger than the whole ring could never fit: not worth a retry */
	if (vnic_unlikely(q->owner == from || count > q->size))
		goto err_parameter;
	src = vnic_hv_dma_translate(hv, ioba, (uint64_t)count * sizeof(*src));
	if (vnic_unlikely(!src))
		goto err_parameter;
	for (i = 0; i < count; i++)
		if (vnic_unlikely(!(src[i].first & VNIC_SUBCRQ_VALID)))
			goto err_parameter;
	if (fault_injecting(hv)) {
		long rc;

		/* ind-param-above: a hypervisor whose real limit is below the one announced */
		uint32_t above =
			atomic_load_explicit(&hv->fl.ind_param_above, memory_order_relaxed);

		if (above && count > above) {
			ctr_add_shared(&hv->glob.fault_ind_param, 1);
			goto err_parameter;
		}
		rc = hcall_fault(hv, slot, handle, from);
		if (rc != VNIC_H_SUCCESS) {
			slot_put(slot);
			return rc;
		}
	}
	/* all or nothing: every slot must be free before the first is written */
	for (i = 0; i < count; i++) {
		if (slot_busy(q, q->prod + i)) {
			vnic_ctr_add(&q->full, 1);
			slot_put(slot);
			return VNIC_H_BUSY;
		}
	}
	/*
	 * Publish last to first: the first entry's valid bit goes out last, so a
	 * consumer that acquires it also sees every entry after it in the batch
	 * (a tx descriptor and its header descriptors are one unit).
	 */
	mask = q->size - 1;
	for (i = count; i-- > 0;)
		entry_publish(&q->ring[(q->prod + i) & mask], &src[i], src[i].first);
	q->prod = (q->prod + count) & mask;
	vnic_ctr_add(&slot->sends_indirect, 1);
	vnic_ctr_add(&slot->indirect_entries, count);
	if (count > slot->indirect_max)
		vnic_ctr_set(&slot->indirect_max, count);
	raise_irq(hv, q);
	slot_put(slot);
	return VNIC_H_SUCCESS;

err_parameter:
	slot_put(slot);
	return send_fail(hv, VNIC_H_PARAMETER);
}

/* --- consumer helpers (the owner's thread) ------------------------------------------ */

/*
 * split: the ring is shared with the partner process, which could rewrite
 * an entry while the owner reads it; the owner gets its own copy, taken
 * once, so what it checks is what it uses.
 */
const union vnic_subcrq_entry *vnic_subcrq_peek(struct vnic_subcrq *q)
{
	union vnic_subcrq_entry *e = &q->ring[q->cur];
	uint8_t first = ring_first_acquire(&e->first);

	if (!(first & VNIC_SUBCRQ_VALID))
		return NULL;
	if (!q->shared)
		return e;
	memcpy(q->shadow.raw + 1, e->raw + 1, sizeof(*e) - 1);
	q->shadow.first = first;
	return &q->shadow;
}

void vnic_subcrq_consume(struct vnic_subcrq *q)
{
	ring_first_clear(&q->ring[q->cur].first);
	q->cur = (q->cur + 1) & (q->size - 1);
}

bool vnic_subcrq_pending(struct vnic_subcrq *q)
{
	return ring_first_acquire(&q->ring[q->cur].first) & VNIC_SUBCRQ_VALID;
}
