/* SPDX-License-Identifier: MIT */
/*
 * The hypervisor object: creation, teardown, statistics.
 * The DMA window is in dma.c, the CRQ in crq.c, the sub-CRQs in subcrq.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hv/hv_priv.h"

static_assert(VNIC_HV_CRQ_ENTRIES * sizeof(struct vnic_crq) == VNIC_HV_DMA_PAGE,
	      "a CRQ is one page (docs/PROTOCOL.md section 4)");
static_assert((VNIC_HV_CRQ_ENTRIES & (VNIC_HV_CRQ_ENTRIES - 1)) == 0, "CRQ size: power of two");

static int crq_ring_init(struct crq_ring *r, struct vnic_crq *shared, _Atomic uint32_t *armed)
{
	int err;

	r->own_msgs = !shared;
	r->msgs = shared;
	if (!r->msgs) {
		r->msgs = aligned_alloc(VNIC_HV_DMA_PAGE, VNIC_HV_CRQ_ENTRIES * sizeof(*r->msgs));
		if (!r->msgs)
			return -ENOMEM;
		memset(r->msgs, 0, VNIC_HV_CRQ_ENTRIES * sizeof(*r->msgs));
	}
	r->armed = armed ? armed : &r->irq_enabled;
	err = pthread_mutex_init(&r->lock, NULL);
	if (err) {
		if (r->own_msgs)
			free(r->msgs);
		return -err;
	}
	return 0;
}

static void crq_ring_fini(struct crq_ring *r)
{
	pthread_mutex_destroy(&r->lock);
	if (r->own_msgs)
		free(r->msgs);
}

/* The CRQ ring messages to side land on: shared in split mode. */
static int crq_init(struct vnic_hv *hv, enum vnic_hv_side side)
{
	struct hv_shm *shm = hv->split ? hv->split->shm : NULL;

	return crq_ring_init(&hv->crq[side], shm ? shm->crq[side] : NULL,
			     shm ? &shm->crq_armed[side].v : NULL);
}

/* Where the transport flag and the DMA table live, and how far a reader trusts them. */
static void tables_init(struct vnic_hv *hv)
{
	struct hv_split *sp = hv->split;

	if (!sp) {
		hv->open = &hv->open_local;
		atomic_init(&hv->open_local, 1);
		hv->dma = &hv->dma_local;
		hv->dma->next_ioba = VNIC_HV_IOBA_BASE;
		hv->dma_spins = UINT32_MAX;
		return;
	}
	hv->open = &sp->shm->open.v;
	hv->dma = &sp->shm->dma;
	hv->dma_base = (uint64_t)(uintptr_t)sp->pool;
	hv->dma_size = sp->pool_size;
	hv->dma_spins = SHM_DMA_SPINS;
}

int vnic_hv_create_on(struct vnic_hv **out, uint32_t max_ind_descs, const struct vnic_hv_cost *cost,
		 struct hv_split *split)
{
	struct vnic_hv *hv;
	int err;

	if (!out || max_ind_descs < VNIC_SAFE_IND_DESCS || max_ind_descs > VNIC_MAX_IND_DESCS)
		return -EINVAL;
	hv = aligned_alloc(VNIC_CACHELINE, sizeof(*hv));
	if (!hv)
		return -ENOMEM;
	memset(hv, 0, sizeof(*hv));
	hv->max_ind_descs = max_ind_descs;
	if (cost)
		hv->cost = *cost;
	hv->split = split;
	tables_init(hv);
	atomic_init(&hv->faults_on, false);
	vnic_fault_cfg_default(&hv->fault);
	atomic_init(&hv->fl.seed, hv->fault.seed);
	hv->next_gen = 1;

	err = -pthread_mutex_init(&hv->lock, NULL);
	if (err)
		goto err_free_hv;
	err = -pthread_mutex_init(&hv->dma_lock, NULL);
	if (err)
		goto err_destroy_lock;
	err = crq_init(hv, VNIC_HV_CLIENT);
	if (err)
		goto err_destroy_dma_lock;
	err = crq_init(hv, VNIC_HV_SERVER);
	if (err)
		goto err_fini_client_crq;
	*out = hv;
	return 0;

err_fini_client_crq:
	crq_ring_fini(&hv->crq[VNIC_HV_CLIENT]);
err_destroy_dma_lock:
	pthread_mutex_destroy(&hv->dma_lock);
err_destroy_lock:
	pthread_mutex_destroy(&hv->lock);
err_free_hv:
	free(hv);
	return err;
}

int vnic_hv_create(struct vnic_hv **out, uint32_t max_ind_descs, const struct vnic_hv_cost *cost)
{
	return vnic_hv_create_on(out, max_ind_descs, cost, NULL);
}

void vnic_hv_destroy(struct vnic_hv *hv)
{
	unsigned int i;

	if (!hv)
		return;
	for (i = 0; i < VNIC_HV_MAX_SUBCRQS; i++) {
		struct vnic_subcrq *q = atomic_load(&hv->slots[i].q);

		if (q && !q->remote)
			vnic_hv_free_subcrq(hv, q);
	}
	crq_ring_fini(&hv->crq[VNIC_HV_SERVER]);
	crq_ring_fini(&hv->crq[VNIC_HV_CLIENT]);
	pthread_mutex_destroy(&hv->dma_lock);
	pthread_mutex_destroy(&hv->lock);
	if (hv->split)
		vnic_hv_shm_release(hv->split);
	free(hv);
}

static void stats_add(struct vnic_hv_stats *dst, const struct vnic_hv_stats *src)
{
	dst->send_crq += vnic_ctr_read(&src->send_crq);
	dst->send_subcrq += vnic_ctr_read(&src->send_subcrq);
	dst->send_subcrq_indirect += vnic_ctr_read(&src->send_subcrq_indirect);
	dst->indirect_entries += vnic_ctr_read(&src->indirect_entries);
	if (vnic_ctr_read(&src->indirect_max) > dst->indirect_max)
		dst->indirect_max = vnic_ctr_read(&src->indirect_max);
	dst->rc_parameter += vnic_ctr_read(&src->rc_parameter);
	dst->rc_busy += vnic_ctr_read(&src->rc_busy);
	dst->rc_closed += vnic_ctr_read(&src->rc_closed);
	dst->rc_dropped += vnic_ctr_read(&src->rc_dropped);
	dst->dma_bad_translation += vnic_ctr_read(&src->dma_bad_translation);
	dst->fault_busy += vnic_ctr_read(&src->fault_busy);
	dst->fault_dropped += vnic_ctr_read(&src->fault_dropped);
	dst->fault_closed += vnic_ctr_read(&src->fault_closed);
	dst->fault_ind_param += vnic_ctr_read(&src->fault_ind_param);
	dst->fault_crq_lost += vnic_ctr_read(&src->fault_crq_lost);
	dst->fault_crq_dup += vnic_ctr_read(&src->fault_crq_dup);
	dst->split_bad_ring += vnic_ctr_read(&src->split_bad_ring);
	dst->split_irq_spurious += vnic_ctr_read(&src->split_irq_spurious);
	dst->split_doorbells += vnic_ctr_read(&src->split_doorbells);
	dst->split_doorbells_skipped += vnic_ctr_read(&src->split_doorbells_skipped);
	dst->split_partner_lost += vnic_ctr_read(&src->split_partner_lost);
}

/*
 * The datapath counters live with the producer of each ring (no cache line
 * shared between the driver's and the device's threads per hcall); this sums
 * them. Control path: takes the table lock so no ring is freed meanwhile.
 */
void vnic_hv_stats(const struct vnic_hv *chv, struct vnic_hv_stats *out)
{
	struct vnic_hv *hv = (struct vnic_hv *)chv;
	struct vnic_hv_stats s = { 0 };
	unsigned int i;

	pthread_mutex_lock(&hv->lock);
	stats_add(&s, &hv->glob);
	stats_add(&s, &hv->retired);
	for (i = 0; i < VNIC_HV_MAX_SUBCRQS; i++) {
		struct subcrq_slot *slot = &hv->slots[i];
		struct vnic_subcrq *q = atomic_load(&slot->q);

		if (!q)
			continue;
		s.send_subcrq += vnic_ctr_read(&slot->sends);
		s.send_subcrq_indirect += vnic_ctr_read(&slot->sends_indirect);
		s.indirect_entries += vnic_ctr_read(&slot->indirect_entries);
		if (vnic_ctr_read(&slot->indirect_max) > s.indirect_max)
			s.indirect_max = vnic_ctr_read(&slot->indirect_max);
		s.rc_busy += vnic_ctr_read(&q->full);
	}
	pthread_mutex_unlock(&hv->lock);
	*out = s;
}

const struct vnic_hv_cost *vnic_hv_cost(const struct vnic_hv *hv)
{
	return &hv->cost;
}

uint32_t vnic_hv_max_ind_descs(const struct vnic_hv *hv)
{
	return hv->max_ind_descs;
}

/* Under hv->lock: injection is on when wanted and something is configured. */
static void faults_update(struct vnic_hv *hv)
{
	atomic_store_explicit(&hv->faults_on, hv->faults_want && hv->faults_set,
			      memory_order_release);
}

int vnic_hv_set_faults(struct vnic_hv *hv, const struct vnic_fault_cfg *cfg, uint64_t stream)
{
	struct hv_fault_live *fl;
	uint64_t seed, crq_stream[2];
	unsigned int i;

	if (!hv)
		return -EINVAL;
	if (cfg && (cfg->hcall_busy < 0 || cfg->hcall_dropped < 0 || cfg->hcall_closed < 0 ||
		    cfg->hcall_busy + cfg->hcall_dropped + cfg->hcall_closed > 1 ||
		    cfg->crq_loss < 0 || cfg->crq_dup < 0 || cfg->crq_loss + cfg->crq_dup > 1))
		return -EINVAL;
	fl = &hv->fl;
	pthread_mutex_lock(&hv->lock);
	if (cfg)
		hv->fault = *cfg;
	else
		vnic_fault_cfg_default(&hv->fault);
	hv->fault_stream = stream;
	hv->faults_set = vnic_fault_hv_any(&hv->fault);
	/* each store on its own: a send in between sees old and new items mixed, for once */
	atomic_store_explicit(&fl->hcall_busy, hv->fault.hcall_busy, memory_order_relaxed);
	atomic_store_explicit(&fl->hcall_dropped, hv->fault.hcall_dropped, memory_order_relaxed);
	atomic_store_explicit(&fl->hcall_closed, hv->fault.hcall_closed, memory_order_relaxed);
	atomic_store_explicit(&fl->crq_loss, hv->fault.crq_loss, memory_order_relaxed);
	atomic_store_explicit(&fl->crq_dup, hv->fault.crq_dup, memory_order_relaxed);
	atomic_store_explicit(&fl->ind_param_above, hv->fault.ind_param_above,
			      memory_order_relaxed);
	atomic_store_explicit(&fl->seed, hv->fault.seed, memory_order_relaxed);
	atomic_store_explicit(&fl->stream, stream, memory_order_relaxed);
	/* The sub-CRQs' producers start their streams over at their next draw. */
	atomic_store_explicit(&fl->gen, atomic_load_explicit(&fl->gen, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	faults_update(hv);
	seed = hv->fault.seed;
	for (i = 0; i < 2; i++)
		crq_stream[i] = fault_stream_crq(hv, i);
	pthread_mutex_unlock(&hv->lock);
	for (i = 0; i < 2; i++) {
		pthread_mutex_lock(&hv->crq[i].lock);
		vnic_fault_rng_init(&hv->crq[i].rng, seed, crq_stream[i]);
		pthread_mutex_unlock(&hv->crq[i].lock);
	}
	return 0;
}

void vnic_hv_faults_enable(struct vnic_hv *hv, bool on)
{
	pthread_mutex_lock(&hv->lock);
	hv->faults_want = on;
	faults_update(hv);
	pthread_mutex_unlock(&hv->lock);
}
