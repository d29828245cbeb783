/* SPDX-License-Identifier: MIT */
/*
 * src/hv internals, shared by hv.c, dma.c, crq.c and subcrq.c only.
 *
 * Who writes what (the single-writer rule keeps the datapath free of locks and
 * of shared read-modify-writes):
 *   ring slots      body: producer before publishing, consumer after; the
 *                   first byte hands the slot over (helpers below).
 *   prod, slot ctrs the ring's producer thread (the partner's send hcalls).
 *   cur             the ring's consumer (the owner).
 *   irq_enabled     the consumer (arm/disarm), read by the producer.
 *   dma table       writers under dma.lock, readers lock-free (seqlock).
 *   sub-CRQ table   writers under hv->lock; senders pin a slot (senders).
 *   hv->glob        shared counters of rare events: atomic adds.
 *   hv->fault       vnic_hv_set_faults, any time, under hv->lock; what the
 *                   hcalls read of it is hv->fl, relaxed atomics (a send
 *                   racing a set sees the old or the new value of each);
 *                   faults_on switched by anyone, read by hcalls.
 *   fault rngs      a sub-CRQ's: its producer, which starts it over when
 *                   fl.gen moves; a CRQ ring's: under its lock.
 *
 * Split (shm.c): the same words, some of them in struct hv_shm, which both
 * processes map. The single-writer rule holds across the processes: each
 * word above has one writer, in one of them. What the partner writes is
 * read once, then checked (remote rings: shm_ring_bind; the DMA table:
 * dma.c's bounds on the offset; doorbell bits: shm_bell_poll).
 */
#ifndef VNIC_HV_PRIV_H
#define VNIC_HV_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "hv/hv.h"

/* A sub-CRQ handle is (generation << VNIC_HV_SLOT_BITS) | slot index. */
#define VNIC_HV_SLOT_BITS 6
static_assert(VNIC_HV_MAX_SUBCRQS == 1 << VNIC_HV_SLOT_BITS, "handle encodes the slot index");

/* ---------------------------------------------------------------------------
 * Barriers of the valid-bit protocol (docs/PROTOCOL.md section 4: dma_wmb
 * before the hcall, valid bit then dma_rmb then the body on the consumer)
 * ------------------------------------------------------------------------- */

/*
 * Consumer: is the slot valid? Acquire: the body reads that follow cannot be
 * satisfied before this load, so they see what the producer wrote before it
 * published (the dma_rmb). Producer, checking for room: a slot seen empty
 * was cleared by the consumer's release, so the consumer's reads of the old
 * body are done before we overwrite it.
 */
static inline uint8_t ring_first_acquire(const uint8_t *first)
{
	return __atomic_load_n(first, __ATOMIC_ACQUIRE);
}

/*
 * Producer: publish a slot whose body is written. Release: the body stores
 * become visible no later than the valid bit (the dma_wmb). On x86 a plain
 * store plus a compiler barrier.
 */
static inline void ring_first_publish(uint8_t *first, uint8_t v)
{
	__atomic_store_n(first, v, __ATOMIC_RELEASE);
}

/* Consumer: hand the slot back. Release: our body reads complete first. */
static inline void ring_first_clear(uint8_t *first)
{
	__atomic_store_n(first, 0, __ATOMIC_RELEASE);
}

/*
 * Producer, between publishing and reading the consumer's arm state; and
 * consumer, between arming and its last look at the ring (the NAPI re-arm
 * check). Both are a store followed by a load of another location, the one
 * reordering x86 does perform (store buffer); without a full fence on both
 * sides each could miss the other's store, and the last entry of a burst
 * would sit in the ring with nobody woken (a lost interrupt). Costs an mfence
 * once per hcall, not per entry.
 */
static inline void irq_store_load_fence(_Atomic uint32_t *armed)
{
	vnic_fence_on(armed, memory_order_seq_cst);
}

/* ---------------------------------------------------------------------------
 * Counters
 * ------------------------------------------------------------------------- */

/*
 * Single-writer counters use core's vnic_ctr_* (core.h, Counters). This one
 * counts rare events written by any thread, so it needs the locked add.
 */
static inline void ctr_add_shared(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* The cost model's charge: nothing at all when the cost is zero (the default). */
static inline void charge(uint64_t ns)
{
	if (ns)
		vnic_spin_ns(ns);
}

static inline bool side_ok(enum vnic_hv_side side)
{
	return side == VNIC_HV_CLIENT || side == VNIC_HV_SERVER;
}

/* ---------------------------------------------------------------------------
 * State
 * ------------------------------------------------------------------------- */

/* One direction of the CRQ: messages *to* this side. */
struct crq_ring {
	struct vnic_crq *msgs;			/* VNIC_HV_CRQ_ENTRIES */
	bool own_msgs;				/* allocated here, not shared */
	pthread_mutex_t lock;			/* producers */
	uint32_t prod;				/* under lock */
	uint32_t cur vnic_cacheline_aligned;	/* consumer */
	_Atomic uint32_t irq_enabled vnic_cacheline_aligned;
	_Atomic uint32_t *armed;		/* &irq_enabled, or shared (split) */
	vnic_hv_irq_fn irq_fn;
	void *irq_ctx;
	uint64_t irqs;
	uint64_t irqs_masked;
	struct vnic_fault_rng rng;		/* under lock */
	/*
	 * A transport event the hypervisor itself raises for this side, not
	 * the partner (split: the partner process went away, shm.c): 0 or an
	 * enum vnic_crq_xport_reason, handed out by the consumer's next recv
	 * before the ring. Written and taken on the consumer's cpu.
	 */
	_Atomic uint8_t event;
};

/*
 * A registered sub-CRQ. senders pins q for the duration of a send so that
 * free can wait for it; the counters are the producer's, beside it.
 */
struct subcrq_slot {
	_Atomic(struct vnic_subcrq *) q;
	_Atomic uint32_t senders;
	uint64_t sends;
	uint64_t sends_indirect;
	uint64_t indirect_entries;
	uint64_t indirect_max;
	struct vnic_fault_rng rng;	/* the producer's fault draws */
	uint32_t rng_gen;		/* the hv->fl.gen rng was seeded at */
} vnic_cacheline_aligned;

/* What the hcalls read of the fault configuration (vnic_hv_set_faults). */
struct hv_fault_live {
	_Atomic double hcall_busy;
	_Atomic double hcall_dropped;
	_Atomic double hcall_closed;
	_Atomic double crq_loss;
	_Atomic double crq_dup;
	_Atomic uint32_t ind_param_above;
	_Atomic uint64_t seed;
	_Atomic uint64_t stream;
	_Atomic uint32_t gen; /* every set: the sub-CRQs' generators start over */
};

/* One DMA window mapping; fields read lock-free, so accessed with atomics. */
struct dma_map {
	uint64_t ioba;
	uint64_t len;
	uint64_t addr;
};

/*
 * addr is an address (in-process) or an offset into the client's DMA
 * memory (split: the two processes map it at different addresses); the
 * reader adds its dma_base. Shared in split mode, written by the client.
 */
struct dma_table {
	_Atomic uint32_t seq;			/* odd while a writer changes maps */
	uint32_t n;				/* maps in use, sorted by ioba */
	uint64_t next_ioba;			/* bump pointer; writers only */
	struct dma_map maps[VNIC_HV_MAX_DMA_WINDOWS];
};

/* ---------------------------------------------------------------------------
 * Split transport: the region both processes map (shm.c)
 * ------------------------------------------------------------------------- */

enum {
	SHM_MAGIC = 0x766e6963,		/* "vnic" */
	SHM_VERSION = 1,
	/* the client's rings take the low half of the slots, the server's the high */
	SHM_SLOTS_PER_SIDE = VNIC_HV_MAX_SUBCRQS / 2,
	SHM_BELL_CRQ = 0,		/* bit of pending[side].w[1] */
	/* a seqlock writer in the partner that stays odd this long is refused */
	SHM_DMA_SPINS = 1 << 16,
};

/* A sub-CRQ as its owner announces it: entries before handle (release). */
struct shm_ring {
	_Atomic uint32_t handle;		/* 0: no ring */
	_Atomic uint32_t entries;
	_Atomic uint32_t armed;			/* the owner's interrupt arm */
} vnic_cacheline_aligned;

/*
 * Doorbell bits of one consumer side: w[0] bit i is slot i, w[1] the CRQ.
 * polling, written by the consumer only: 1 while its cpu busy-polls these
 * words (--doorbell spin), and a producer then rings no eventfd. Beside
 * the bits: the producer's OR brings in the line it then reads the flag in.
 */
struct shm_pending {
	_Atomic uint64_t w[2];
	_Atomic uint32_t polling;
} vnic_cacheline_aligned;

struct shm_line {
	_Atomic uint32_t v;
} vnic_cacheline_aligned;

struct hv_shm {
	uint32_t magic;				/* written by the client before attach */
	uint32_t version;
	struct shm_line open;			/* the transport (vnic_hv_crq_set_open) */
	struct shm_line crq_armed[2];		/* by receiving side */
	struct shm_pending pending[2];		/* by consumer side */
	struct shm_ring ring[VNIC_HV_MAX_SUBCRQS];
	struct dma_table dma;
	struct vnic_crq crq[2][VNIC_HV_CRQ_ENTRIES] __attribute__((aligned(VNIC_HV_DMA_PAGE)));
	union vnic_subcrq_entry rings[VNIC_HV_MAX_SUBCRQS][VNIC_HV_MAX_SUBCRQ_ENTRIES]
		__attribute__((aligned(VNIC_HV_DMA_PAGE)));
};

/* The client's allocations in its DMA memory (vnic_hv_dma_alloc): sorted by offset. */
struct shm_pool {
	pthread_mutex_t lock;
	uint32_t n;
	struct {
		uint64_t off;
		uint64_t len;
	} ext[VNIC_HV_MAX_DMA_WINDOWS];
};

/* This process's half of a split hv. */
struct hv_split {
	struct hv_shm *shm;			/* mapped ctl region */
	uint8_t *pool;				/* mapped DMA memory */
	uint64_t pool_size;
	int fd[VNIC_HV_SPLIT_FDS];
	enum vnic_hv_side side;			/* the side this process is */
	struct vnic_poller bell;		/* the doorbell poller (its cpu's) */
	enum vnic_hv_doorbell doorbell;		/* how this side waits for the partner's */
	struct vnic_cpu_spin_src spin;		/* spin: the bell cpu's look at our bits */
	bool peeked;				/* bell cpu: spin found the bits, no eventfd to read */
	struct vnic_hv *bell_hv;		/* the hv it rings for */
	/*
	 * Client: the partner process went away (vnic_hv_split_partner_lost,
	 * any thread); the gone poller, on the doorbell cpu, takes the lost
	 * count and says it has done its work by storing it in done.
	 */
	struct vnic_poller gone;
	_Atomic uint32_t lost;
	_Atomic uint32_t lost_done;
	struct shm_pool alloc;			/* client only */
	struct vnic_subcrq remote[VNIC_HV_MAX_SUBCRQS]; /* the partner's rings, as we send to them */
};

struct vnic_hv {
	/* read by every hcall, written at create (open: by set_open) */
	uint32_t max_ind_descs;
	_Atomic uint32_t *open;			/* &open_local, or shared (split) */
	struct dma_table *dma;			/* &dma_local, or shared (split) */
	uint64_t dma_base;			/* added to a table's addr */
	uint64_t dma_size;			/* split: addr + len must stay below; 0 in-process */
	uint32_t dma_spins;			/* a reader waits out a writer this long */
	struct hv_split *split;			/* NULL in-process */
	_Atomic bool faults_on;			/* injection enabled and configured */
	bool faults_set;			/* hcall or CRQ faults configured; under lock */
	bool faults_want;			/* vnic_hv_faults_enable; under lock */
	struct vnic_hv_cost cost;
	struct vnic_fault_cfg fault;		/* under lock */
	uint64_t fault_stream;			/* under lock */
	struct hv_fault_live fl vnic_cacheline_aligned;
	/* rare events, any thread */
	struct vnic_hv_stats glob vnic_cacheline_aligned;
	/* control path */
	pthread_mutex_t lock vnic_cacheline_aligned;	/* sub-CRQ table */
	uint32_t next_gen;
	struct vnic_hv_stats retired;		/* counters of freed sub-CRQs */
	struct crq_ring crq[2];			/* indexed by the receiving side */
	struct subcrq_slot slots[VNIC_HV_MAX_SUBCRQS];
	pthread_mutex_t dma_lock;		/* table writers */
	struct dma_table dma_local;
	_Atomic uint32_t open_local;
};

/*
 * Injecting faults now? One load and a branch per hcall when not. Acquire:
 * pairs with vnic_hv_faults_enable, though the configuration it guards was
 * written before any traffic anyway.
 */
static inline bool fault_injecting(const struct vnic_hv *hv)
{
	return vnic_unlikely(atomic_load_explicit(&((struct vnic_hv *)hv)->faults_on,
						  memory_order_acquire));
}

/* The generator stream of a sub-CRQ (by handle) or of a CRQ ring (by side). */
static inline uint64_t fault_stream_ring(const struct vnic_hv *hv, uint32_t handle)
{
	return hv->fault_stream << 32 ^ handle;
}

static inline uint64_t fault_stream_crq(const struct vnic_hv *hv, unsigned int side)
{
	return hv->fault_stream << 32 ^ (0xc0000000u + side);
}

/*
 * Shared by crq.c and subcrq.c, after publishing: is the consumer's interrupt
 * armed now? If so the caller counts it and delivers it with irq_call, in
 * this (the producer's) thread.
 */
static inline bool irq_armed(_Atomic uint32_t *enabled)
{
	irq_store_load_fence(enabled);
	return atomic_load_explicit(enabled, memory_order_acquire);
}

/* Any thread: a ring or CRQ of the partner process has work (shm.c). */
void vnic_hv_shm_bell(struct vnic_hv *hv, unsigned int word, uint64_t bit);
/* The partner's ring behind slot idx now, bound if it changed; NULL if none (shm.c). */
struct vnic_subcrq *vnic_hv_shm_remote(struct vnic_hv *hv, unsigned int idx, uint32_t handle);
/* Whether slot idx belongs to this process (always, in-process). */
static inline bool slot_local(const struct vnic_hv *hv, unsigned int idx)
{
	return !hv->split || (idx >= SHM_SLOTS_PER_SIDE) == (hv->split->side == VNIC_HV_SERVER);
}
/*
 * hv.c: an hv over its tables: its own (split NULL) or the shared ones of
 * split, which it owns from then on (released by vnic_hv_destroy through
 * vnic_hv_shm_release). 0 or -errno; split is left to the caller on failure.
 */
int vnic_hv_create_on(struct vnic_hv **out, uint32_t max_ind_descs, const struct vnic_hv_cost *cost,
		 struct hv_split *split);
/* shm.c: len (page multiple) of the client's DMA memory, zeroed; NULL if none is left. */
void *vnic_hv_shm_alloc(struct hv_split *split, size_t len);
void vnic_hv_shm_free(struct hv_split *split, void *p);
/* shm.c: unmaps and closes what split holds, and frees it. */
void vnic_hv_shm_release(struct hv_split *split);

static inline void irq_call(struct vnic_hv *hv, vnic_hv_irq_fn *fn, void **ctx)
{
	vnic_hv_irq_fn f = __atomic_load_n(fn, __ATOMIC_RELAXED);

	charge(hv->cost.irq_ns);
	if (f)
		f(__atomic_load_n(ctx, __ATOMIC_RELAXED));
}

/*
 * Consumer: arm an interrupt. Release: what the consumer did before (its
 * poll) happens before the handler the producer then calls (irq_armed
 * acquires). The store->load fence that pairs with the producer's in
 * irq_armed is NAPI's, between irq->enable and irq->pending (struct
 * vnic_irq_ops in core.h). The other arms are set-up (open, login): the
 * ring is empty and its producer starts only after a CRQ exchange, whose
 * release/acquire of the valid byte orders this store before its first
 * publish.
 */
static inline void irq_arm(_Atomic uint32_t *enabled)
{
	atomic_store_explicit(enabled, 1, memory_order_release);
}

static inline void irq_disarm(_Atomic uint32_t *enabled)
{
	atomic_store_explicit(enabled, 0, memory_order_relaxed);
}

#endif /* VNIC_HV_PRIV_H */
