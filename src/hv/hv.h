/* SPDX-License-Identifier: MIT */
/*
 * src/hv: the hypervisor between one driver (the client partition) and one
 * device (the vNIC server). Public header of the layer.
 *
 * It owns what PAPR's hypervisor owns: the DMA window (ioba -> memory, every
 * translation bounds-checked), the CRQ pair, the sub-CRQ rings with their
 * valid-bit ownership and interrupts, and the hcalls that move entries. It
 * never interprets a message: that is the driver's and the device's job.
 *
 * Threads: a ring has one producer and one consumer, possibly on different
 * cpus; ownership passes through the valid bit with release/acquire barriers
 * in named helpers (hv.c). An interrupt is delivered only while armed, by
 * calling the handler registered for it, from the producer's thread: handlers
 * must be thread-safe (vnic_napi_schedule is).
 */
#ifndef VNIC_HV_H
#define VNIC_HV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "proto/proto.h"

enum vnic_hv_limits {
	VNIC_HV_MAX_DMA_WINDOWS = 512,
	VNIC_HV_MAX_SUBCRQS = 64,
	VNIC_HV_CRQ_ENTRIES = 256,	/* one 4 KiB page of 16-byte messages */
	VNIC_HV_MAX_SUBCRQ_ENTRIES = 8192,
};

/* Which end of the hypervisor a call comes from. */
enum vnic_hv_side {
	VNIC_HV_CLIENT = 0,	/* the driver */
	VNIC_HV_SERVER = 1,	/* the device */
};

/* Optional cost model: busy time charged per operation. All zero by default. */
struct vnic_hv_cost {
	uint64_t hcall_direct_ns;
	uint64_t hcall_indirect_ns;
	uint64_t hcall_crq_ns;
	uint64_t dma_ns_per_kib;	/* charged by vnic_hv_dma_charge */
	uint64_t irq_ns;		/* per interrupt delivered */
};

typedef void (*vnic_hv_irq_fn)(void *ctx);

/* A ring of 32-byte entries; the consumer reads it in place. */
struct vnic_subcrq {
	union vnic_subcrq_entry *ring;
	uint32_t size;			/* entries, power of two */
	uint32_t handle;		/* what the partner passes to send_subcrq */
	enum vnic_hv_side owner;	/* the side that consumes */
	bool shared;			/* split: in memory the partner process maps */
	/* consumer's cursor: owner's thread only */
	uint32_t cur vnic_cacheline_aligned;
	union vnic_subcrq_entry shadow;	/* split: the entry peek returned, copied */
	/* producer's cursor: the hv, in the producer's thread */
	uint32_t prod vnic_cacheline_aligned;
	/* interrupt */
	_Atomic uint32_t irq_enabled vnic_cacheline_aligned;
	_Atomic uint32_t *armed;	/* &irq_enabled, or its shared word (split) */
	bool remote;			/* split: the partner process consumes; a doorbell */
	vnic_hv_irq_fn irq_fn;
	void *irq_ctx;
	uint64_t irqs;			/* delivered (raised while armed) */
	uint64_t irqs_masked;		/* raised while disarmed: no delivery */
	uint64_t full;			/* sends refused: ring full (BUSY) */
};

struct vnic_hv_stats {
	uint64_t send_crq;
	uint64_t send_subcrq;		/* direct hcalls */
	uint64_t send_subcrq_indirect;	/* indirect hcalls */
	uint64_t indirect_entries;	/* entries moved by indirect hcalls */
	uint64_t indirect_max;		/* the most entries one indirect hcall moved */
	uint64_t rc_parameter;		/* hcalls refused with PARAMETER */
	uint64_t rc_busy;
	uint64_t rc_closed;
	uint64_t rc_dropped;		/* hcalls answered DROPPED (only ever injected) */
	uint64_t dma_bad_translation;	/* ioba/len outside every mapping */
	/* faults injected (fault.c, docs/FAULTS.md): each also counts in its rc_* above */
	uint64_t fault_busy;		/* hcall-busy */
	uint64_t fault_dropped;		/* hcall-dropped */
	uint64_t fault_closed;		/* hcall-closed */
	uint64_t fault_ind_param;	/* ind-param-above: indirect sends refused PARAMETER */
	uint64_t fault_crq_lost;	/* crq-loss: messages accepted and never delivered */
	uint64_t fault_crq_dup;		/* crq-dup: messages delivered twice */
	/* split transport (shm.c): what the partner process wrote and we refused */
	uint64_t split_bad_ring;	/* a ring record with an impossible size */
	uint64_t split_irq_spurious;	/* a doorbell bit for no ring of ours */
	uint64_t split_doorbells;	/* eventfd writes to the partner */
	uint64_t split_doorbells_skipped; /* none needed: the partner said it polls */
	uint64_t split_partner_lost;	/* client: the partner process went away */
};

/* ---------------------------------------------------------------------------
 * Faults on demand (fault.c, docs/FAULTS.md). One configuration describes
 * every fault of a vNIC: the hv injects the hcall and CRQ ones
 * (vnic_hv_set_faults), the device the scheduled ones (struct
 * vnic_dev_config, src/device). Probabilities are per hcall or message,
 * durations in ns; zero turns an item off.
 * ------------------------------------------------------------------------- */

enum {
	VNIC_FAULT_DEFAULT_DOWN_NS = 1000000,		/* down-for: 1 ms */
	VNIC_FAULT_DEFAULT_LINK_DOWN_NS = 10000000,	/* link-down-for: 10 ms */
};

struct vnic_fault_cfg {
	uint64_t seed;			/* every generator is seeded from it (default 1) */
	/* the driver's sub-CRQ send hcalls, direct and indirect */
	double hcall_busy;		/* answered H_BUSY, nothing written */
	double hcall_dropped;		/* answered H_DROPPED, nothing written */
	double hcall_closed;		/* answered H_CLOSED, nothing written */
	uint32_t ind_param_above;	/* indirect sends of more entries: H_PARAMETER */
	/* CRQ messages, both directions */
	double crq_loss;		/* accepted (H_SUCCESS) and never delivered */
	double crq_dup;			/* delivered twice in a row */
	/* the device, on a schedule */
	uint64_t reset_every_ns;	/* it resets: transport event, gone, then INIT */
	uint64_t failover_every_ns;	/* it fails over: FAILOVER event, gone, then INIT */
	uint64_t down_ns;		/* how long it stays gone (default 1 ms) */
	uint64_t err_ind_every_ns;	/* an ERROR_INDICATION */
	double err_ind_fatal;		/* the chance one is fatal (the device halts) */
	uint64_t link_flap_every_ns;	/* the physical link goes down ... */
	uint64_t link_down_ns;		/* ... for this long (default 10 ms) */
};

/* No fault at all, seed 1, the default durations. */
void vnic_fault_cfg_default(struct vnic_fault_cfg *c);
/*
 * "NAME=VALUE[,NAME=VALUE...]" into *out (docs/FAULTS.md has the names):
 * probabilities 0..1, durations with a unit (ns, us, ms, s), counts. ""
 * and "none" give the default. 0 or -EINVAL, *out untouched then, and
 * vnic_fault_strerror() says why in one line ("reset-every: '10' needs a
 * unit: ns, us, ms or s"). Any thread.
 */
int vnic_fault_parse(const char *spec, struct vnic_fault_cfg *out);
/* The reason of the calling thread's last failed parse. */
const char *vnic_fault_strerror(void);
/* The spec that parses back to c, "none" for no fault. 0 or -ENOSPC. */
int vnic_fault_format(const struct vnic_fault_cfg *c, char *buf, size_t len);
/* Any fault at all; any the hv injects; any the device schedules. */
bool vnic_fault_any(const struct vnic_fault_cfg *c);
bool vnic_fault_hv_any(const struct vnic_fault_cfg *c);
bool vnic_fault_dev_any(const struct vnic_fault_cfg *c);

/* A seeded generator, owned by the one thread that draws from it. */
struct vnic_fault_rng {
	uint64_t s;
};

/* stream tells apart generators of one seed (one per ring, per side, per device). */
void vnic_fault_rng_init(struct vnic_fault_rng *r, uint64_t seed, uint64_t stream);
uint64_t vnic_fault_rng_next(struct vnic_fault_rng *r);
/* True with probability p (never for p <= 0, always for p >= 1). */
bool vnic_fault_roll(struct vnic_fault_rng *r, double p);

struct vnic_hv;

/* 0 or -errno. max_ind_descs: the hypervisor's limit for indirect sends (16..128). */
int vnic_hv_create(struct vnic_hv **hv, uint32_t max_ind_descs, const struct vnic_hv_cost *cost);
void vnic_hv_destroy(struct vnic_hv *hv);
/*
 * The counters summed over every ring, into the caller's out: any thread,
 * any number at once (each caller has its own copy).
 */
void vnic_hv_stats(const struct vnic_hv *hv, struct vnic_hv_stats *out);
const struct vnic_hv_cost *vnic_hv_cost(const struct vnic_hv *hv);
uint32_t vnic_hv_max_ind_descs(const struct vnic_hv *hv);

/*
 * The hcall and CRQ faults of cfg (the device's are ignored here; NULL:
 * none), injected while vnic_hv_faults_enable says on (off at create).
 * Any thread, any time, traffic or not: a send that races the change sees
 * each item old or new; every generator starts over from cfg->seed (the
 * CRQs' at once, each sub-CRQ's at its producer's next draw). 0, or
 * -EINVAL (a probability below 0, or hcall-busy + hcall-dropped +
 * hcall-closed or crq-loss + crq-dup above 1: nothing changed). stream is
 * mixed into cfg->seed, so that the two hvs of a topology draw different
 * faults from one seed.
 */
int vnic_hv_set_faults(struct vnic_hv *hv, const struct vnic_fault_cfg *cfg, uint64_t stream);
/* Any thread, any time: injection on or off (what is configured stays). */
void vnic_hv_faults_enable(struct vnic_hv *hv, bool on);

/* --- DMA window (the TCE table) --------------------------------------------
 * The client makes its memory visible to the server. The server only ever
 * holds iobas and translates them for each access. */
/* 0 or -errno (-ENOSPC: table full, -EINVAL). */
int vnic_hv_dma_map(struct vnic_hv *hv, void *addr, uint64_t len, uint64_t *ioba);
int vnic_hv_dma_unmap(struct vnic_hv *hv, uint64_t ioba);
/* Pointer for [ioba, ioba + len) if it lies inside one mapping, else NULL (counted). */
void *vnic_hv_dma_translate(struct vnic_hv *hv, uint64_t ioba, uint64_t len);
/* Copies through the window; 0 or -EFAULT. */
int vnic_hv_dma_read(struct vnic_hv *hv, uint64_t ioba, void *dst, uint64_t len);
int vnic_hv_dma_write(struct vnic_hv *hv, uint64_t ioba, const void *src, uint64_t len);
/* Cost model: charge a DMA of len bytes (no-op when the cost is zero). */
void vnic_hv_dma_charge(struct vnic_hv *hv, uint64_t len);
/*
 * Memory the client may map: page aligned and zeroed, from the heap, or in
 * split mode from the memory the partner process maps (shm.c). NULL when
 * there is none left. Control path.
 */
void *vnic_hv_dma_alloc(struct vnic_hv *hv, size_t len);
void vnic_hv_dma_free(struct vnic_hv *hv, void *p);

/* --- CRQ ----------------------------------------------------------------------
 * One ring per direction. send_crq from one side lands on the other side's
 * ring and raises that side's CRQ interrupt if armed. */
void vnic_hv_crq_set_irq(struct vnic_hv *hv, enum vnic_hv_side side, vnic_hv_irq_fn fn, void *ctx);
void vnic_hv_crq_irq_enable(struct vnic_hv *hv, enum vnic_hv_side side, bool on);
/* VNIC_H_SUCCESS, VNIC_H_BUSY (ring full), VNIC_H_CLOSED (partner closed). */
long vnic_hv_send_crq(struct vnic_hv *hv, enum vnic_hv_side from, const struct vnic_crq *msg);
/* Consumer: copies the next message into *msg and frees its slot. false if none. */
bool vnic_hv_crq_recv(struct vnic_hv *hv, enum vnic_hv_side side, struct vnic_crq *msg);
/* Closes the transport (reset, teardown): sends fail with CLOSED until reopened. */
void vnic_hv_crq_set_open(struct vnic_hv *hv, bool open);

/* --- Sub-CRQs ------------------------------------------------------------------ */
/* Registers a ring of entries (power of two) consumed by owner. 0 or -errno. */
int vnic_hv_reg_subcrq(struct vnic_hv *hv, enum vnic_hv_side owner, uint32_t entries,
		       struct vnic_subcrq **out);
int vnic_hv_free_subcrq(struct vnic_hv *hv, struct vnic_subcrq *q);
/* The interrupt of a ring; delivered in the producer's thread while armed. */
void vnic_hv_subcrq_set_irq(struct vnic_subcrq *q, vnic_hv_irq_fn fn, void *ctx);
void vnic_hv_subcrq_irq_enable(struct vnic_subcrq *q);
void vnic_hv_subcrq_irq_disable(struct vnic_subcrq *q);
/*
 * H_SEND_SUB_CRQ: one entry, by value, to the ring with this handle, sent by
 * the side that does not own it. VNIC_H_SUCCESS, VNIC_H_PARAMETER (bad handle,
 * wrong side, entry without the valid bit), VNIC_H_BUSY (ring full),
 * VNIC_H_CLOSED; with faults on, also VNIC_H_DROPPED (nothing written: the
 * hypervisor dropped the send), and BUSY or CLOSED that the ring's state
 * does not explain (docs/FAULTS.md).
 */
long vnic_hv_send_subcrq(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
			 const union vnic_subcrq_entry *entry);
/*
 * Interrupt moderation (the device's coalescing, docs/MECHANISMS.md section
 * 9): vnic_hv_send_subcrq_noirq publishes the entry as vnic_hv_send_subcrq
 * does, same checks and return codes, but raises no interrupt;
 * vnic_hv_subcrq_raise raises the ring's interrupt later (delivered if
 * armed, counted in irqs or irqs_masked as any other), on the producer's
 * thread. A consumer polling the ring sees the entries either way: only
 * the interrupt waits. VNIC_H_SUCCESS, VNIC_H_PARAMETER (bad handle, wrong
 * side), VNIC_H_CLOSED.
 */
long vnic_hv_send_subcrq_noirq(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
			       const union vnic_subcrq_entry *entry);
long vnic_hv_subcrq_raise(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle);
/*
 * H_SEND_SUB_CRQ_INDIRECT: count entries read from the sender's DMA window at
 * ioba. All or nothing: VNIC_H_PARAMETER when count is 0 or above the limit,
 * or the array is not mapped; VNIC_H_BUSY when the ring lacks room for all.
 */
long vnic_hv_send_subcrq_indirect(struct vnic_hv *hv, enum vnic_hv_side from, uint32_t handle,
				  uint64_t ioba, uint32_t count);

/* Consumer helpers, owner's thread only. */
/* The entry at the cursor if its valid bit is set (acquire), else NULL. */
const union vnic_subcrq_entry *vnic_subcrq_peek(struct vnic_subcrq *q);
/* Hands the entry at the cursor back to the producer (release) and advances. */
void vnic_subcrq_consume(struct vnic_subcrq *q);
/* True if the entry at the cursor is valid: for the re-arm race check. */
bool vnic_subcrq_pending(struct vnic_subcrq *q);

/* --- Additions by the hv implementation (hv.c, dma.c, crq.c, subcrq.c) ------- */

/*
 * DMA window granularity. iobas are VNIC_HV_DMA_PAGE aligned, start at
 * VNIC_HV_IOBA_BASE (0 is never a valid ioba, so a zeroed descriptor cannot
 * name memory) and stay below VNIC_IOBA_LIMIT (proto.h), so 32-bit ioba
 * fields never truncate. One unmapped guard page separates mappings. An ioba
 * is not handed out again while its mapping lives. A translation of length 0
 * fails like any other bad one.
 */
enum vnic_hv_dma_limits {
	VNIC_HV_DMA_PAGE = 4096,
	VNIC_HV_IOBA_BASE = VNIC_HV_DMA_PAGE,
};

/*
 * CRQ consumer: true if a message waits on side's ring (the re-arm race check,
 * as vnic_subcrq_pending). Owner's thread only.
 */
bool vnic_hv_crq_pending(struct vnic_hv *hv, enum vnic_hv_side side);

/* --- Split transport (shm.c, remote.c; docs/ARCHITECTURE.md section 11) ------
 * The driver's half of the hv in one process, the device's in another. What
 * both map (a memfd): the CRQ pair, the sub-CRQ rings with their armed
 * words, the DMA window's table and the doorbell bits; the client's DMA
 * memory is a second memfd. An interrupt for the partner is a doorbell bit
 * and an eventfd write. Every hcall above works unchanged on either side;
 * each side calls only with from = its own side. Anything the partner wrote
 * in shared memory is read once and checked.
 */
enum vnic_hv_split_limits {
	VNIC_HV_SPLIT_POOL_DEFAULT = 1u << 30,	/* bytes of DMA memory (sparse) */
	VNIC_HV_SPLIT_POOL_MAX = 1u << 31,
};

/* The descriptors of one split hv, in the order they cross the socket. */
enum { VNIC_HV_SPLIT_FD_CTL, VNIC_HV_SPLIT_FD_POOL, VNIC_HV_SPLIT_FD_TO_SERVER,
       VNIC_HV_SPLIT_FD_TO_CLIENT, VNIC_HV_SPLIT_FDS };

/*
 * Client: creates the shared regions (sealed memfds) and the two doorbell
 * eventfds, maps them, and is the CLIENT half. pool_size: DMA memory, a
 * page multiple up to VNIC_HV_SPLIT_POOL_MAX. 0 or -errno.
 */
int vnic_hv_create_split_client(struct vnic_hv **hv, uint32_t max_ind_descs,
				const struct vnic_hv_cost *cost, uint64_t pool_size);
/*
 * Server: the SERVER half over what a client passed. Checks each fd (a
 * memfd of the expected size sealed against shrinking, an eventfd) and the
 * region's header. Takes the fds on success (and closes them on failure).
 * 0, -EINVAL (not what was promised) or -errno.
 */
int vnic_hv_create_split_server(struct vnic_hv **hv, uint32_t max_ind_descs,
				const struct vnic_hv_cost *cost, const int fds[VNIC_HV_SPLIT_FDS],
				uint64_t pool_size);
/* The fds to pass to the server (the hv keeps them); false for an in-process hv. */
bool vnic_hv_split_fds(const struct vnic_hv *hv, int fds[VNIC_HV_SPLIT_FDS], uint64_t *pool_size);
/*
 * How a side waits for the partner's doorbells. EVENTFD: its cpu sleeps in
 * epoll and every first bit comes with an eventfd write. SPIN: while its
 * cpu busy-polls (--busy-poll-us) it says so in the shared words and looks
 * at its bits on every turn; the partner skips the eventfd write then
 * (docs/PROTOCOL.md section 13). Either side's producer honours the flag.
 */
enum vnic_hv_doorbell { VNIC_HV_DOORBELL_EVENTFD, VNIC_HV_DOORBELL_SPIN, VNIC_HV_DOORBELL_MODES };
const char *vnic_hv_doorbell_name(enum vnic_hv_doorbell mode);
/* Before vnic_hv_split_attach_cpu: this side's doorbell mode. Nothing in-process. */
void vnic_hv_split_set_doorbell(struct vnic_hv *hv, enum vnic_hv_doorbell mode);
/*
 * Before cpu starts: the doorbell poller on cpu, which runs the handlers of
 * this side's rings when the partner rings. The side's owner code (its
 * control poller, which frees rings) must run on the same cpu. 0 or -errno;
 * 0 and nothing for an in-process hv.
 */
int vnic_hv_split_attach_cpu(struct vnic_hv *hv, struct vnic_cpu *cpu);
/*
 * Client, any thread: the partner process is gone (its socket hung up), as
 * a VIOS that stops is to the LPAR's hypervisor. The hv's poller on the
 * doorbell cpu then closes the transport, makes the client half of the
 * shared layout ready for a new partner (the CRQ and every ring of ours
 * empty and back at slot 0, no binding to the old partner's rings kept,
 * its doorbell bits dropped) and raises a transport event (PARTNER_CLOSED)
 * on the client's CRQ, so that the driver resets. A new server may attach
 * the same fds once vnic_hv_split_partner_ready says that work is done;
 * until a server opens the transport again, every send fails CLOSED.
 * Nothing for an in-process hv or a server half.
 */
void vnic_hv_split_partner_lost(struct vnic_hv *hv);
/* Any thread: no loss is waiting for the hv's poller (true for an in-process hv). */
bool vnic_hv_split_partner_ready(const struct vnic_hv *hv);
/* Any thread: whether the transport is open (a server half closed on attach: a return). */
bool vnic_hv_crq_is_open(const struct vnic_hv *hv);
/*
 * remote.c: one hv's attach message on a unix stream socket, the fds in
 * SCM_RIGHTS (docs/PROTOCOL.md section 13). Blocking; setup only.
 * send: 0 or -errno. recv: the server half, made with
 * vnic_hv_create_split_server; 0, -EPROTO (a malformed message: wrong
 * magic, version, size or fd count), -ECONNRESET (EOF) or -errno.
 */
int vnic_hv_split_send(int sock, const struct vnic_hv *hv);
int vnic_hv_split_recv(int sock, struct vnic_hv **hv, uint32_t max_ind_descs,
		       const struct vnic_hv_cost *cost);

/*
 * Notes on the contract above, as implemented:
 * - vnic_hv_stats: send_crq, send_subcrq, send_subcrq_indirect and
 *   indirect_entries count hcalls that succeeded; failures are counted in
 *   rc_*. The returned snapshot is refreshed by each call (control path: it
 *   takes a lock) and stays valid until the next one.
 * - Every send first checks the transport: while closed, all fail with CLOSED,
 *   so a driver sending on handles freed by a reset sees CLOSED, not PARAMETER.
 * - vnic_hv_free_subcrq waits for hcalls in flight on that ring to finish, so
 *   the partner may send concurrently (it then gets PARAMETER). It must not be
 *   called from that ring's interrupt handler, nor while the owner still peeks.
 * - Interrupt handlers are set before the interrupt is first enabled and are
 *   not changed while it may be raised.
 * - An indirect send of more entries than the ring holds fails with
 *   PARAMETER (it could never succeed); one that merely lacks room now, BUSY.
 * - vnic_subcrq_consume only after vnic_subcrq_peek returned the entry.
 * - A ring has one producer thread at a time; the CRQ accepts several (it
 *   takes a lock per message: control path). Fault draws follow the same
 *   rule: a sub-CRQ's generator is its producer's, a CRQ's is under its
 *   lock. The per-ring counters (irqs,
 *   irqs_masked, full) are written by the producer with relaxed atomic
 *   stores; read them from another thread with __atomic_load_n.
 */

#endif /* VNIC_HV_H */
