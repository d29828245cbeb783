/* SPDX-License-Identifier: MIT */
/*
 * Faults on a schedule (docs/FAULTS.md): what a real vNIC server does to its
 * client now and then, on demand.
 *
 *   reset-every     the server resets: a transport event (PARTNER_CLOSED),
 *                   the transport closed and everything forgotten, then
 *                   after down-for the transport opens and an INIT says the
 *                   partner is back.
 *   failover-every  the same with the FAILOVER event: ibmvnic's failover,
 *                   the backing device switched under the client.
 *   err-ind-every   an ERROR_INDICATION; fatal with probability
 *                   err-ind-fatal, and then the device halts (no traffic)
 *                   until the driver's INIT resets it.
 *   link-flap-every the physical link goes down for link-down-for: tx
 *                   aborted, rx dropped, LINK_STATE_INDICATION both ways.
 *
 * One poller on the device's cpu runs them all from its timer, so a fault
 * happens between two polls of the engines and of the control path, the way
 * a real device's own events would. A fault due while the device is gone
 * waits for the next period.
 */
#include <errno.h>
#include <string.h>

#include "device/dev_int.h"

static uint64_t next_after(uint64_t due, uint64_t period, uint64_t now)
{
	due += period;
	/* a late run (a busy cpu, a stopped one) skips what it missed */
	return (int64_t)(due - now) > 0 ? due : now + period;
}

static void arm(struct dev_fault *f, const struct vnic_fault_cfg *c, uint64_t now)
{
	f->next_reset = c->reset_every_ns ? now + c->reset_every_ns : 0;
	f->next_failover = c->failover_every_ns ? now + c->failover_every_ns : 0;
	f->next_err = c->err_ind_every_ns ? now + c->err_ind_every_ns : 0;
	f->next_flap = c->link_flap_every_ns ? now + c->link_flap_every_ns : 0;
}

static uint64_t fault_now(const struct dev_fault *f)
{
	return f->now ? f->now() : vnic_now_ns();
}

/*
 * The poller's timer runs on vnic_now_ns(). On a clock of a test's own it
 * is left off: that clock moves only when the test moves it, and the test
 * then has the schedule looked at (vnic_dev_fault_clock).
 */
static uint64_t timer_at(const struct dev_fault *f, uint64_t due)
{
	return f->now ? 0 : due;
}

static void go_away(struct vnic_dev *dev, uint8_t reason, uint64_t now)
{
	vnic_dev_vanish(dev, reason);
	dev->fault.back_at = now + dev->cfg.fault.down_ns;
}

static void come_back(struct vnic_dev *dev)
{
	dev->fault.back_at = 0;
	vnic_dev_return(dev);
}

static void error_indication(struct vnic_dev *dev)
{
	struct dev_fault *f = &dev->fault;
	bool fatal = vnic_fault_roll(&f->rng, dev->cfg.fault.err_ind_fatal);
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_ERROR_INDICATION;
	m.error.flags = fatal ? VNIC_ERR_FATAL : 0;
	vnic_be32_put(&m.error.error_id, ++f->error_id);
	vnic_be16_put(&m.error.cause, fatal ? VNIC_ERR_CAUSE_ADAPTER : VNIC_ERR_CAUSE_FW);
	vnic_dev_ctl_send(dev, &m);
	vnic_ctr_inc(&f->st.err_inds);
	if (fatal) {
		/* until the driver resets us: its INIT (or a transport event) clears it */
		vnic_ctr_store(&dev->halted, true);
		vnic_ctr_inc(&f->st.err_inds_fatal);
	}
}

static void link_set(struct vnic_dev *dev, bool up)
{
	vnic_ctr_store(&dev->phys_up, up);
	vnic_dev_link_indicate(dev);
}

/* Stopped: what is in progress ends as its schedule would have ended it. */
static void finish(struct vnic_dev *dev)
{
	struct dev_fault *f = &dev->fault;

	f->running = false;
	if (f->back_at)
		come_back(dev);
	if (f->link_back_at) {
		f->link_back_at = 0;
		link_set(dev, true);
	}
	vnic_poller_set_timer(&f->poller, 0);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : (int64_t)(a - b) < 0 ? a : b;
}

/*
 * vnic_dev_set_faults' schedule: in force from now. Running, the periods
 * start over one period from now, as at enable; a fault in progress ends
 * when it was due to. A new seed starts the generator over.
 */
static void take_faults(struct vnic_dev *dev, uint64_t now)
{
	struct dev_fault *f = &dev->fault;
	struct vnic_fault_cfg n;

	if (!atomic_exchange_explicit(&dev->live.fault_pending, false, memory_order_acquire))
		return;
	pthread_mutex_lock(&dev->live.lock);
	n = dev->live.fault;
	pthread_mutex_unlock(&dev->live.lock);
	if (n.seed != dev->cfg.fault.seed)
		vnic_fault_rng_init(&f->rng, n.seed, 0xdec0de);
	dev->cfg.fault = n;
	if (f->running)
		arm(f, &dev->cfg.fault, now);
}

int vnic_dev_fault_poll(struct vnic_poller *p, int budget)
{
	struct vnic_dev *dev = vnic_container_of(p, struct vnic_dev, fault.poller);
	const struct vnic_fault_cfg *c = &dev->cfg.fault;
	struct dev_fault *f = &dev->fault;
	uint64_t now = fault_now(f), t;

	(void)budget;
	take_faults(dev, now);
	if (!atomic_load_explicit(&f->on, memory_order_acquire)) {
		finish(dev);
		return 0;
	}
	if (!f->running) {
		f->running = true;
		arm(f, c, now);
	}
	if (f->back_at && (int64_t)(now - f->back_at) >= 0)
		come_back(dev);
	if (f->link_back_at && (int64_t)(now - f->link_back_at) >= 0) {
		f->link_back_at = 0;
		link_set(dev, true);
	}
	if (f->next_reset && (int64_t)(now - f->next_reset) >= 0) {
		f->next_reset = next_after(f->next_reset, c->reset_every_ns, now);
		if (!f->back_at) {
			vnic_ctr_inc(&f->st.resets);
			go_away(dev, VNIC_XPORT_PARTNER_CLOSED, now);
		}
	}
	if (f->next_failover && (int64_t)(now - f->next_failover) >= 0) {
		f->next_failover = next_after(f->next_failover, c->failover_every_ns, now);
		if (!f->back_at) {
			vnic_ctr_inc(&f->st.failovers);
			go_away(dev, VNIC_XPORT_FAILOVER, now);
		}
	}
	if (f->next_err && (int64_t)(now - f->next_err) >= 0) {
		f->next_err = next_after(f->next_err, c->err_ind_every_ns, now);
		if (!f->back_at)
			error_indication(dev);
	}
	if (f->next_flap && (int64_t)(now - f->next_flap) >= 0) {
		f->next_flap = next_after(f->next_flap, c->link_flap_every_ns, now);
		if (!f->back_at && !f->link_back_at) {
			vnic_ctr_inc(&f->st.link_flaps);
			f->link_back_at = now + c->link_down_ns;
			link_set(dev, false);
		}
	}
	t = earliest(earliest(f->next_reset, f->next_failover),
		     earliest(f->next_err, f->next_flap));
	t = earliest(t, earliest(f->back_at, f->link_back_at));
	vnic_poller_set_timer(p, timer_at(f, t));
	return 0;
}

int vnic_dev_set_faults(struct vnic_dev *dev, const struct vnic_fault_cfg *cfg)
{
	struct vnic_fault_cfg n;

	if (!dev)
		return -EINVAL;
	if (cfg)
		n = *cfg;
	else
		vnic_fault_cfg_default(&n);
	/* the rules vnic_fault_parse enforces, for a cfg built by hand */
	if (n.err_ind_fatal < 0 || n.err_ind_fatal > 1 ||
	    (n.reset_every_ns && n.down_ns >= n.reset_every_ns) ||
	    (n.failover_every_ns && n.down_ns >= n.failover_every_ns) ||
	    (n.link_flap_every_ns && n.link_down_ns >= n.link_flap_every_ns))
		return -EINVAL;
	pthread_mutex_lock(&dev->live.lock);
	dev->live.fault = n;
	/* Release: the schedule is there before the fault poller sees the flag. */
	atomic_store_explicit(&dev->live.fault_pending, true, memory_order_release);
	pthread_mutex_unlock(&dev->live.lock);
	vnic_poller_schedule(&dev->fault.poller);
	return 0;
}

void vnic_dev_faults_enable(struct vnic_dev *dev, bool on)
{
	if (!dev || !dev->fault.registered)
		return;
	atomic_store_explicit(&dev->fault.on, on, memory_order_release);
	vnic_poller_schedule(&dev->fault.poller);
}

void vnic_dev_fault_clock(struct vnic_dev *dev, uint64_t (*now)(void))
{
	if (dev)
		dev->fault.now = now;
}
