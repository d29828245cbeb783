/* SPDX-License-Identifier: MIT */
/*
 * Resets, as ibmvnic has them (docs/ARCHITECTURE.md section 10,
 * docs/PROTOCOL.md section 11): why a reset happens, how it takes the
 * datapath down and brings it back, and how requests that come while one
 * runs are queued and merged.
 *
 * One reset at a time, run by the control poller through the same bring-up
 * as an open. Requests come from the CRQ (transport events, a partner's
 * INIT, error indications), from the tx watchdog and the probe below, and
 * from vnic_drv_change_param on any thread; they wait in a queue with at
 * most one entry per reason (ibmvnic's rwi list drops duplicates too). A
 * hard request (the partner forgot us) drops the soft ones queued, whose
 * work it does, and interrupts a reset that is negotiating with a partner
 * that is no longer there; a change-param is never dropped, it carries
 * values. A reset that fails is retried as a hard one VNIC_DRV_RESET_RETRY_NS
 * later, for as long as the link is wanted up.
 *
 * What each reason does (enum drv_reset_kind):
 *   LOCAL    xport, passive_init, failover, mobility, hard: everything in
 *            flight is taken back locally (the partner has forgotten it),
 *            then INIT and the whole bring-up. A failover first waits for
 *            the partner's INIT (at most VNIC_DRV_FAILOVER_WAIT_NS).
 *   RELEASE  fatal, timeout, change_param: LOGICAL_LINK_STATE(down), so the
 *            device completes every descriptor and forgets every rx buffer,
 *            then REQUEST_UNMAP of every map, then INIT (with the new values
 *            of a change-param) and the whole bring-up.
 *   SOFT     non_fatal: link down and up; the login and the maps stay.
 * Every packet in flight ends as tx_done DROPPED (txN_drop_reset), every
 * posted rx buffer comes back to its pool, nothing is completed twice: a
 * completion that arrives after its slot was taken back finds it free
 * (txN_comp_stale, rxN_reset_drained).
 */
#include <errno.h>
#include <string.h>

#include "driver/drv_int.h"

static const char *const reason_names[RST_MAX] = {
	[RST_XPORT] = "xport",
	[RST_PASSIVE_INIT] = "passive_init",
	[RST_FAILOVER] = "failover",
	[RST_MOBILITY] = "mobility",
	[RST_HARD] = "hard",
	[RST_FATAL] = "fatal",
	[RST_TIMEOUT] = "timeout",
	[RST_NON_FATAL] = "non_fatal",
	[RST_CHANGE_PARAM] = "change_param",
};

const char *vnic_drv_reset_name(enum drv_reset_reason r)
{
	return (unsigned int)r < RST_MAX ? reason_names[r] : "unknown";
}

bool vnic_drv_reset_is_hard(enum drv_reset_reason r)
{
	return r <= RST_HARD;
}

static enum drv_reset_kind kind_of(enum drv_reset_reason r)
{
	switch (r) {
	case RST_NON_FATAL:
		return RK_SOFT;
	case RST_FATAL:
	case RST_TIMEOUT:
	case RST_CHANGE_PARAM:
		return RK_RELEASE;
	default:
		return RK_LOCAL;
	}
}

/* --- the queue ---------------------------------------------------------------- */

static int queue_find(const struct drv_reset *rs, enum drv_reset_reason r)
{
	for (unsigned int i = 0; i < rs->nq; i++)
		if (rs->queue[i] == r)
			return (int)i;
	return -1;
}

static void queue_remove(struct drv_reset *rs, unsigned int i)
{
	memmove(&rs->queue[i], &rs->queue[i + 1], rs->nq - i - 1);
	vnic_ctr_store(&rs->nq, rs->nq - 1);
}

static void queue_push(struct drv_reset *rs, enum drv_reset_reason r, bool front)
{
	if (front) {
		memmove(&rs->queue[1], &rs->queue[0], rs->nq);
		rs->queue[0] = (uint8_t)r;
	} else {
		rs->queue[rs->nq] = (uint8_t)r;
	}
	vnic_ctr_store(&rs->nq, rs->nq + 1);
}

/* A hard reset does what the soft ones would: they go (counted as merged). */
static void drop_soft(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;
	unsigned int i = 0;

	while (i < rs->nq) {
		enum drv_reset_reason r = rs->queue[i];

		if (!vnic_drv_reset_is_hard(r) && r != RST_CHANGE_PARAM) {
			queue_remove(rs, i);
			vnic_ctr_inc(&drv->st.reset_coalesced);
		} else {
			i++;
		}
	}
}

/* The control path is free for a reset: nothing else (open, close) in progress. */
static bool idle(const struct vnic_drv *drv)
{
	return !drv->rst.active && (drv->state == DRV_OPEN || drv->state == DRV_DOWN ||
				    drv->state == DRV_CLOSED || drv->state == DRV_RESET_WAIT);
}

/* --- parameters --------------------------------------------------------------- */

static void params_of(const struct vnic_drv_config *c, struct vnic_drv_params *p)
{
	p->mtu = c->mtu;
	p->tx_queues = c->tx_queues;
	p->rx_queues = c->rx_queues;
	p->tx_entries = c->tx_entries;
	p->rx_entries = c->rx_entries;
}

/* Values given replace; zero keeps what is there. */
static void params_merge(struct vnic_drv_params *dst, const struct vnic_drv_params *p)
{
	if (p->mtu)
		dst->mtu = p->mtu;
	if (p->tx_queues)
		dst->tx_queues = p->tx_queues;
	if (p->rx_queues)
		dst->rx_queues = p->rx_queues;
	if (p->tx_entries)
		dst->tx_entries = p->tx_entries;
	if (p->rx_entries)
		dst->rx_entries = p->rx_entries;
}

static void params_set(struct vnic_drv_config *c, const struct vnic_drv_params *p)
{
	c->mtu = p->mtu;
	c->tx_queues = p->tx_queues;
	c->rx_queues = p->rx_queues;
	c->tx_entries = p->tx_entries;
	c->rx_entries = p->rx_entries;
}

/* The change-param's values into cfg, the old ones kept to fall back to. */
static void params_apply(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;
	struct vnic_drv_params p;

	if (rs->cur != RST_CHANGE_PARAM || rs->cp_applied)
		return;
	params_of(&drv->cfg, &rs->fallback);
	p = rs->fallback;
	params_merge(&p, &rs->cp);
	params_set(&drv->cfg, &p);
	memset(&rs->cp, 0, sizeof(rs->cp));
	rs->cp_applied = true;
}

/* --- one reset ------------------------------------------------------------------ */

static void account(struct vnic_drv *drv, uint64_t now)
{
	struct drv_stats *st = &drv->st;
	uint64_t d = now - drv->rst.start_ns;

	vnic_ctr_inc(&st->reset_done);
	vnic_ctr_set(&st->reset_last_ns, d);
	if (d > st->reset_max_ns)
		vnic_ctr_set(&st->reset_max_ns, d);
	vnic_ctr_add(&st->reset_total_ns, d);
}

/*
 * The partner has forgotten us (or may have: a hard reset tells it to):
 * everything comes back locally, then INIT; a failover waits for the
 * partner's INIT first.
 */
static void go_local(struct vnic_drv *drv, bool tell)
{
	struct drv_reset *rs = &drv->rst;

	rs->kind = RK_LOCAL;
	vnic_drv_datapath_stop(drv);
	if (tell)
		vnic_drv_send_xport(drv, VNIC_XPORT_RESET);
	params_apply(drv);
	if (rs->cur == RST_FAILOVER) {
		vnic_drv_set_state(drv, DRV_RESET_WAIT);
		rs->failover_until = vnic_now_ns() + VNIC_DRV_FAILOVER_WAIT_NS;
		return;
	}
	vnic_drv_start_init(drv);
}

/*
 * The link is administratively down: a reset only makes sure nothing of the
 * login stays (the next open starts from INIT, with a change-param's values).
 */
static void admin_down(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;

	params_apply(drv);
	if (drv->state == DRV_DOWN) {
		if (!vnic_drv_reset_is_hard(rs->cur))
			vnic_drv_send_xport(drv, VNIC_XPORT_RESET);
		vnic_drv_datapath_stop(drv);
	}
	vnic_drv_set_state(drv, DRV_CLOSED);
	vnic_ctr_store(&rs->active, false);
	account(drv, vnic_now_ns());
}

static void begin(struct vnic_drv *drv, enum drv_reset_reason r)
{
	struct drv_reset *rs = &drv->rst;
	bool waiting = drv->state == DRV_RESET_WAIT;

	vnic_ctr_store(&rs->active, true);
	rs->cur = r;
	rs->kind = kind_of(r);
	rs->start_ns = vnic_now_ns();
	rs->retry_at = 0;
	rs->failover_until = 0;
	rs->cp_applied = false;
	rs->suspect = false;
	rs->probe_at = 0;
	vnic_ctr_inc(&drv->st.resets);
	vnic_ctr_inc(&drv->st.resets_by[r]);
	if (!drv->admin_up || drv->state == DRV_CLOSED || drv->state == DRV_DOWN) {
		admin_down(drv);
		return;
	}
	/* after a failure nobody knows what the partner holds: it is told to forget */
	if (waiting || rs->kind == RK_LOCAL) {
		go_local(drv, waiting || r == RST_HARD);
		return;
	}
	vnic_drv_datapath_quiesce(drv);
	vnic_drv_set_state(drv, DRV_RESET_DOWN);
	/* the transport is gone: so is the partner's state */
	if (vnic_drv_send_link_state(drv, VNIC_LINK_DOWN))
		go_local(drv, false);
}

static void start_next(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;
	enum drv_reset_reason r;

	if (!rs->nq || !idle(drv))
		return;
	r = rs->queue[0];
	queue_remove(rs, 0);
	begin(drv, r);
}

void vnic_drv_reset_request(struct vnic_drv *drv, enum drv_reset_reason r)
{
	struct drv_reset *rs = &drv->rst;
	int i;

	if (vnic_drv_reset_is_hard(r)) {
		drop_soft(drv);
		if (rs->active) {
			/*
			 * Forgetting and starting from INIT is what the reset in
			 * progress does already, if it is a local one that has not
			 * gone past INIT: one is enough.
			 */
			if (rs->kind == RK_LOCAL &&
			    (drv->state == DRV_INIT || drv->state == DRV_RESET_WAIT)) {
				vnic_ctr_inc(&drv->st.reset_coalesced);
				return;
			}
			/* Negotiating with a partner that is gone: start again, now. */
			vnic_ctr_inc(&drv->st.reset_aborted);
			vnic_ctr_store(&rs->active, false);
			i = queue_find(rs, r);
			if (i >= 0)
				queue_remove(rs, (unsigned int)i);
			begin(drv, r);
			return;
		}
		for (unsigned int k = 0; k < rs->nq; k++) {
			if (vnic_drv_reset_is_hard(rs->queue[k])) {
				vnic_ctr_inc(&drv->st.reset_coalesced);
				return;
			}
		}
		queue_push(rs, r, true);
		return;
	}
	/* A soft one: nothing new if the same or a hard one waits already. */
	if (queue_find(rs, r) >= 0) {
		vnic_ctr_inc(&drv->st.reset_coalesced);
		return;
	}
	for (unsigned int k = 0; k < rs->nq && r != RST_CHANGE_PARAM; k++) {
		if (vnic_drv_reset_is_hard(rs->queue[k])) {
			vnic_ctr_inc(&drv->st.reset_coalesced);
			return;
		}
	}
	queue_push(rs, r, false);
}

void vnic_drv_reset_down_done(struct vnic_drv *drv, uint8_t rc)
{
	struct drv_reset *rs = &drv->rst;

	if (rc != VNIC_RC_SUCCESS) {
		/* It does not know our login (it reset meanwhile): nothing to release. */
		go_local(drv, false);
		return;
	}
	/* The device completed every descriptor and forgot every buffer. */
	vnic_drv_datapath_stop(drv);
	if (rs->kind == RK_SOFT) {
		vnic_drv_link_up_start(drv);
		return;
	}
	vnic_drv_release_maps(drv);
}

void vnic_drv_reset_unmapped(struct vnic_drv *drv)
{
	params_apply(drv);
	vnic_drv_start_init(drv);
}

void vnic_drv_reset_done(struct vnic_drv *drv)
{
	vnic_ctr_store(&drv->rst.active, false);
	account(drv, vnic_now_ns());
	vnic_drv_finish(drv, 0);
}

void vnic_drv_reset_fail(struct vnic_drv *drv, int err)
{
	struct drv_reset *rs = &drv->rst;

	(void)err;
	vnic_ctr_inc(&drv->st.reset_failures);
	/* The device would not have the new values: the old ones come back. */
	if (rs->cur == RST_CHANGE_PARAM && rs->cp_applied) {
		params_set(&drv->cfg, &rs->fallback);
		rs->cp_applied = false;
	}
	vnic_ctr_store(&rs->active, false);
	vnic_drv_datapath_stop(drv);
	vnic_drv_set_state(drv, DRV_RESET_WAIT);
	rs->retry_at = vnic_now_ns() + VNIC_DRV_RESET_RETRY_NS;
}

void vnic_drv_reset_abort(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;

	/* A change the user asked for still holds for the next open. */
	if (queue_find(rs, RST_CHANGE_PARAM) >= 0 ||
	    (rs->active && rs->cur == RST_CHANGE_PARAM && !rs->cp_applied)) {
		rs->cur = RST_CHANGE_PARAM;
		rs->cp_applied = false;
		params_apply(drv);
	}
	if (rs->active)
		vnic_ctr_inc(&drv->st.reset_aborted);
	vnic_ctr_store(&rs->active, false);
	vnic_ctr_store(&rs->nq, 0);
	rs->retry_at = 0;
	rs->failover_until = 0;
	/* A half-done login of ours may be on the other side: it must go. */
	if (drv->state > DRV_INIT && drv->state != DRV_RESET_WAIT)
		vnic_drv_send_xport(drv, VNIC_XPORT_RESET);
	vnic_drv_datapath_stop(drv);
	vnic_drv_set_state(drv, DRV_CLOSED);
	vnic_ctr_inc(&drv->st.closes);
}

void vnic_drv_reset_partner_init(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;

	if (drv->state == DRV_RESET_WAIT) {
		if (rs->active) {
			/* the failover is done: the new partner is there */
			rs->failover_until = 0;
			vnic_drv_start_init(drv);
		} else {
			/* a failed reset's retry is due now: the partner is back */
			rs->retry_at = 0;
			vnic_drv_reset_request(drv, RST_HARD);
			start_next(drv);
		}
		return;
	}
	vnic_drv_reset_request(drv, RST_PASSIVE_INIT);
}

/* --- a partner in doubt ------------------------------------------------------------- */

/*
 * A send said the partner is gone (H_CLOSED) or does not know the ring (a
 * PARAMETER no limit explains): as ibmvnic, every queue stops and the
 * carrier drops, and the transport event that follows resets us. If none
 * comes (an event lost, a transient refusal), the probe asks the partner
 * whether it still has us: yes, traffic resumes; no, a hard reset.
 */
void vnic_drv_partner_suspect(struct vnic_drv *drv)
{
	/*
	 * With queues on other cpus, every queue stops under the control
	 * poller, which parks their cpus first (core/park.c).
	 */
	if (drv->park.n) {
		atomic_store_explicit(&drv->suspect_req, true, memory_order_release);
		/* the poller, not the NAPI: a poll under way runs once more */
		vnic_poller_schedule(&drv->ctl_napi.poller);
		return;
	}
	vnic_drv_partner_suspect_now(drv);
}

void vnic_drv_partner_suspect_now(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;
	unsigned int i;

	if (drv->state != DRV_OPEN || rs->active || rs->suspect)
		return;
	rs->suspect = true;
	rs->probe_at = vnic_now_ns();
	vnic_ctr_set(&drv->carrier, 0);
	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *t = &drv->txq[i];

		t->running = false;
		if (!vnic_txq_stopped(&t->txq))
			vnic_ctr_inc(&t->st.stops);
		vnic_txq_stop(&t->txq);
		vnic_drv_tx_unwind_batch(t);
	}
	vnic_napi_schedule(&drv->ctl_napi);
}

/* The partner still has us: the queues run again, those with room wake their host. */
static void resume(struct vnic_drv *drv)
{
	unsigned int i;

	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *t = &drv->txq[i];

		t->running = true;
		if (t->used + VNIC_MAX_TX_ELEMS > t->entries || !t->tso.nfree)
			continue; /* its completions wake it */
		vnic_ctr_inc(&t->st.wakes);
		vnic_txq_wake(&t->txq);
	}
}

void vnic_drv_reset_probe_answer(struct vnic_drv *drv, uint8_t rc)
{
	struct drv_reset *rs = &drv->rst;

	if (drv->state != DRV_OPEN || rs->active) {
		vnic_ctr_inc(&drv->st.crq_ignored);
		return;
	}
	if (rc == VNIC_RC_SUCCESS) {
		if (rs->suspect) {
			rs->suspect = false;
			vnic_ctr_inc(&drv->st.probe_resumes);
			resume(drv);
		}
		return;
	}
	/* It does not know us: it reset, and the event that said so was lost. */
	rs->suspect = false;
	vnic_drv_reset_request(drv, RST_HARD);
}

static void probe(struct vnic_drv *drv, uint64_t now)
{
	struct drv_reset *rs = &drv->rst;

	if (!rs->suspect && vnic_ctr_read(&drv->carrier)) {
		rs->probe_at = 0;
		return;
	}
	/* no carrier: the indication that brings it back may have been lost */
	if (!rs->probe_at)
		rs->probe_at = now + VNIC_DRV_PROBE_NS;
	if ((int64_t)(now - rs->probe_at) < 0)
		return;
	vnic_ctr_inc(&drv->st.probes);
	vnic_drv_send_link_state(drv, VNIC_LINK_QUERY);
	rs->probe_at = now + VNIC_DRV_PROBE_NS;
}

/* --- the tx watchdog ------------------------------------------------------------------ */

/* Anything that moved on the queue: a send, a completion, a drop. */
static uint64_t progress(const struct drv_txq *t)
{
	return t->st.completions + t->st.direct_sends + t->st.indirect_flushes +
	       t->st.dropped_packets + t->st.comp_stale;
}

/*
 * dev_watchdog: a queue stopped with no progress for tx_timeout_ns, while
 * the carrier is on (a link that is down is not a hung queue), resets.
 * Sampled every quarter timeout from the counters: nothing on the datapath.
 */
static void watchdog(struct vnic_drv *drv, uint64_t now)
{
	struct drv_reset *rs = &drv->rst;
	uint64_t timeout = drv->cfg.tx_timeout_ns;
	uint64_t tick = timeout / 4 > 1000000 ? timeout / 4 : 1000000;
	bool armed = rs->wd_at != 0;
	unsigned int i;

	if (armed && (int64_t)(now - rs->wd_at) < 0)
		return;
	rs->wd_at = now + tick;
	for (i = 0; i < drv->ntx; i++) {
		struct drv_txq *t = &drv->txq[i];
		uint64_t p = progress(t);

		if (!armed || !vnic_txq_stopped(&t->txq) || p != t->wd_progress || rs->suspect ||
		    !vnic_ctr_read(&drv->carrier)) {
			t->wd_progress = p;
			t->wd_since = now;
			continue;
		}
		if (now - t->wd_since >= timeout) {
			vnic_ctr_inc(&t->st.timeouts);
			t->wd_since = now;
			vnic_drv_reset_request(drv, RST_TIMEOUT);
			return;
		}
	}
}

/* --- the poll ------------------------------------------------------------------------- */

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : (int64_t)(a - b) < 0 ? a : b;
}

/* vnic_drv_change_param's values, handed over under the lock. */
static void take_change(struct vnic_drv *drv)
{
	struct drv_reset *rs = &drv->rst;
	struct vnic_drv_params p;

	if (!atomic_exchange_explicit(&rs->pending, false, memory_order_acquire))
		return;
	pthread_mutex_lock(&rs->lock);
	p = rs->posted;
	memset(&rs->posted, 0, sizeof(rs->posted));
	pthread_mutex_unlock(&rs->lock);
	params_merge(&rs->cp, &p);
	vnic_drv_reset_request(drv, RST_CHANGE_PARAM);
}

uint64_t vnic_drv_reset_poll(struct vnic_drv *drv, uint64_t now)
{
	struct drv_reset *rs = &drv->rst;
	uint64_t t = 0;

	take_change(drv);
	if (drv->state == DRV_RESET_WAIT) {
		if (rs->failover_until && (int64_t)(now - rs->failover_until) >= 0) {
			/* no INIT from the new partner: ours will find it */
			rs->failover_until = 0;
			vnic_drv_start_init(drv);
		} else if (rs->retry_at && (int64_t)(now - rs->retry_at) >= 0) {
			rs->retry_at = 0;
			vnic_drv_reset_request(drv, RST_HARD);
		}
	}
	/* a reset queued goes first: no probe of a partner whose event is here already */
	start_next(drv);
	if (drv->state == DRV_OPEN && !rs->active && drv->admin_up) {
		watchdog(drv, now);
		probe(drv, now);
		/* the watchdog may have asked for a reset just now */
		start_next(drv);
	}
	if (drv->state == DRV_OPEN && !rs->active)
		t = earliest(rs->wd_at, rs->probe_at);
	else
		rs->wd_at = 0;
	if (drv->state == DRV_RESET_WAIT)
		t = earliest(t, earliest(rs->retry_at, rs->failover_until));
	return t;
}

/* --- change-param ------------------------------------------------------------------------ */

static bool in_range(uint64_t v, uint64_t lo, uint64_t hi)
{
	return !v || (v >= lo && v <= hi);
}

int vnic_drv_change_param(struct vnic_drv *drv, const struct vnic_drv_params *p)
{
	struct drv_reset *rs;

	if (!drv || !p)
		return -EINVAL;
	/* what create sized: the queues and their pollers, the completion rings */
	if (!in_range(p->mtu, VNIC_DRV_MIN_MTU, VNIC_DRV_MAX_MTU) ||
	    !in_range(p->tx_queues, 1, drv->qtx) || !in_range(p->rx_queues, 1, drv->qrx) ||
	    !in_range(p->tx_entries, 2 * VNIC_MAX_TX_ELEMS, drv->txc_size) ||
	    !in_range(p->rx_entries, 1, drv->rxc_size))
		return -EINVAL;
	rs = &drv->rst;
	pthread_mutex_lock(&rs->lock);
	params_merge(&rs->posted, p);
	/* Release: the values are there before the poller can see the flag. */
	atomic_store_explicit(&rs->pending, true, memory_order_release);
	pthread_mutex_unlock(&rs->lock);
	vnic_poller_schedule(&drv->ctl_napi.poller);
	return 0;
}

int vnic_drv_reset_init(struct vnic_drv *drv)
{
	atomic_init(&drv->rst.pending, false);
	return -pthread_mutex_init(&drv->rst.lock, NULL);
}

void vnic_drv_reset_fini(struct vnic_drv *drv)
{
	pthread_mutex_destroy(&drv->rst.lock);
}
