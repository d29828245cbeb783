/* SPDX-License-Identifier: MIT */
/*
 * The CRQ pair (docs/PROTOCOL.md sections 4 and 6): one page of 16-byte messages per
 * direction. H_SEND_CRQ from one side lands on the other side's ring, byte 0
 * last; the consumer copies the message out and clears byte 0, which gives
 * the slot back. Control path only: producers take a lock, so any thread of
 * a side may send.
 */
#include <string.h>

#include "hv/hv_priv.h"

#define CRQ_MASK (VNIC_HV_CRQ_ENTRIES - 1)

static long crq_fail(struct vnic_hv *hv, long rc)
{
	if (rc == VNIC_H_BUSY)
		ctr_add_shared(&hv->glob.rc_busy, 1);
	else if (rc == VNIC_H_CLOSED)
		ctr_add_shared(&hv->glob.rc_closed, 1);
	else
		ctr_add_shared(&hv->glob.rc_parameter, 1);
	return rc;
}

/* Under r->lock: body first, byte 0 last (release), then the producer moves on. */
static void publish(struct crq_ring *r, const struct vnic_crq *msg, uint8_t first)
{
	struct vnic_crq *slot = &r->msgs[r->prod];

	memcpy(slot->raw + 1, msg->raw + 1, sizeof(*msg) - 1);
	ring_first_publish(&slot->first, first);
	r->prod = (r->prod + 1) & CRQ_MASK;
}

/* crq-loss and crq-dup (docs/FAULTS.md): one draw per message, under r->lock. */
enum crq_fault { CRQ_DELIVER, CRQ_LOSE, CRQ_DUP };

static enum crq_fault crq_fault(struct vnic_hv *hv, struct crq_ring *r)
{
	double loss = atomic_load_explicit(&hv->fl.crq_loss, memory_order_relaxed);
	double dup = atomic_load_explicit(&hv->fl.crq_dup, memory_order_relaxed);
	double u;

	if (!(loss > 0 || dup > 0))
		return CRQ_DELIVER;
	u = (double)(vnic_fault_rng_next(&r->rng) >> 11) * 0x1p-53;
	if (u < loss)
		return CRQ_LOSE;
	if (u < loss + dup)
		return CRQ_DUP;
	return CRQ_DELIVER;
}

void vnic_hv_crq_set_irq(struct vnic_hv *hv, enum vnic_hv_side side, vnic_hv_irq_fn fn, void *ctx)
{
	struct crq_ring *r;

	if (!side_ok(side))
		return;
	r = &hv->crq[side];
	__atomic_store_n(&r->irq_fn, fn, __ATOMIC_RELAXED);
	__atomic_store_n(&r->irq_ctx, ctx, __ATOMIC_RELAXED);
}

void vnic_hv_crq_irq_enable(struct vnic_hv *hv, enum vnic_hv_side side, bool on)
{
	if (!side_ok(side))
		return;
	if (on)
		irq_arm(hv->crq[side].armed);
	else
		irq_disarm(hv->crq[side].armed);
}

void vnic_hv_crq_set_open(struct vnic_hv *hv, bool open)
{
	atomic_store_explicit(hv->open, open, memory_order_release);
}

bool vnic_hv_crq_is_open(const struct vnic_hv *hv)
{
	return atomic_load_explicit(hv->open, memory_order_acquire);
}

/* The hypervisor's own transport event (struct crq_ring's event), if one waits. */
static bool crq_take_event(struct crq_ring *r, struct vnic_crq *msg)
{
	uint8_t reason;

	if (!atomic_load_explicit(&r->event, memory_order_relaxed))
		return false;
	reason = atomic_exchange_explicit(&r->event, 0, memory_order_acquire);
	if (!reason)
		return false;
	memset(msg, 0, sizeof(*msg));
	msg->first = VNIC_CRQ_XPORT_EVENT;
	msg->xport.reason = reason;
	return true;
}

long vnic_hv_send_crq(struct vnic_hv *hv, enum vnic_hv_side from, const struct vnic_crq *msg)
{
	enum crq_fault fault;
	struct vnic_crq *slot;
	struct crq_ring *r;
	uint8_t first;

	charge(hv->cost.hcall_crq_ns);
	/* split: each process sends as its own side only */
	if (!msg || !side_ok(from) || (hv->split && from != hv->split->side))
		return crq_fail(hv, VNIC_H_PARAMETER);
	if (!atomic_load_explicit(hv->open, memory_order_acquire))
		return crq_fail(hv, VNIC_H_CLOSED);
	/* read once: what is checked is what gets published */
	first = msg->first;
	if (!(first & VNIC_CRQ_CMD_RSP))
		return crq_fail(hv, VNIC_H_PARAMETER);

	r = &hv->crq[!from];
	pthread_mutex_lock(&r->lock);
	slot = &r->msgs[r->prod];
	if (ring_first_acquire(&slot->first) & VNIC_CRQ_CMD_RSP) {
		pthread_mutex_unlock(&r->lock);
		return crq_fail(hv, VNIC_H_BUSY);
	}
	fault = fault_injecting(hv) ? crq_fault(hv, r) : CRQ_DELIVER;
	if (fault == CRQ_LOSE) {
		/* accepted, as a message lost beyond the sender's view would be */
		pthread_mutex_unlock(&r->lock);
		ctr_add_shared(&hv->glob.send_crq, 1);
		ctr_add_shared(&hv->glob.fault_crq_lost, 1);
		return VNIC_H_SUCCESS;
	}
	publish(r, msg, first);
	if (fault == CRQ_DUP && !(ring_first_acquire(&r->msgs[r->prod].first) & VNIC_CRQ_CMD_RSP)) {
		publish(r, msg, first);
		ctr_add_shared(&hv->glob.fault_crq_dup, 1);
	}
	pthread_mutex_unlock(&r->lock);
	ctr_add_shared(&hv->glob.send_crq, 1);

	/* outside the lock: the handler may answer on this very ring */
	if (irq_armed(r->armed)) {
		ctr_add_shared(&r->irqs, 1);
		if (hv->split)
			vnic_hv_shm_bell(hv, 1, 1ull << SHM_BELL_CRQ);
		else
			irq_call(hv, &r->irq_fn, &r->irq_ctx);
	} else {
		ctr_add_shared(&r->irqs_masked, 1);
	}
	return VNIC_H_SUCCESS;
}

bool vnic_hv_crq_recv(struct vnic_hv *hv, enum vnic_hv_side side, struct vnic_crq *msg)
{
	struct vnic_crq *slot;
	struct crq_ring *r;
	uint8_t first;

	if (!msg || !side_ok(side) || (hv->split && side != hv->split->side))
		return false;
	r = &hv->crq[side];
	if (crq_take_event(r, msg))
		return true;
	slot = &r->msgs[r->cur];
	first = ring_first_acquire(&slot->first);
	if (!(first & VNIC_CRQ_CMD_RSP))
		return false;
	memcpy(msg->raw + 1, slot->raw + 1, sizeof(*msg) - 1);
	msg->first = first;
	ring_first_clear(&slot->first);
	r->cur = (r->cur + 1) & CRQ_MASK;
	return true;
}

bool vnic_hv_crq_pending(struct vnic_hv *hv, enum vnic_hv_side side)
{
	struct crq_ring *r;

	if (!side_ok(side))
		return false;
	r = &hv->crq[side];
	return atomic_load_explicit(&r->event, memory_order_relaxed) ||
	       (ring_first_acquire(&r->msgs[r->cur].first) & VNIC_CRQ_CMD_RSP);
}
