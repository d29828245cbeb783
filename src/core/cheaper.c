/* SPDX-License-Identifier: MIT */
/*
 * The cheaper of two ways of doing one thing, learned while doing it
 * (docs/MECHANISMS.md section 10). The driver's tx-submit=adaptive uses it
 * to choose between a direct and an indirect send of a lone packet, whose
 * relative cost depends on the boundary below (an in-process hypervisor, a
 * cost model, another process behind shared memory) and may change while
 * the driver runs.
 *
 *   - each way's estimate is an exponentially weighted moving average of
 *     its timed uses, weight 1/4: a probe sample comes once every 64 uses,
 *     so a smaller weight would take hundreds of probes to follow a change;
 *   - a sample counts for at most 4 times the estimate: a use preempted
 *     for a millisecond is one sample among thousands, not a verdict;
 *   - beside each estimate, the mean deviation of the samples from it
 *     (the same smoothing, as TCP keeps rttvar beside srtt): the other way
 *     must be cheaper by the margin plus both deviations. Without it a
 *     boundary whose cost per use is bimodal (a split layout's hcall rings
 *     an eventfd doorbell only when the other process sleeps: 0.3 or 2 us)
 *     flips the way in use back and forth on the luck of three probes;
 *   - the decision is taken only when a sample of the way not in use
 *     arrives (a probe), and a switch needs VNIC_CHEAPER_HOLD probes in a
 *     row that find it cheaper by more than the margin: the estimate of
 *     the way not in use moves only at probes, so one lucky probe could
 *     otherwise switch for a whole probe period;
 *   - the way in use becoming dearer is noticed the same way: its own
 *     samples raise its estimate, and the next probes find the other
 *     cheaper.
 */
#include "core/core.h"

static uint64_t toward(uint64_t avg, uint64_t v)
{
	if (v >= avg)
		return avg + ((v - avg) >> VNIC_CHEAPER_WEIGHT_SHIFT);
	return avg - ((avg - v) >> VNIC_CHEAPER_WEIGHT_SHIFT);
}

/* A sample v of a way: its estimate and deviation move a quarter of the way. */
static void learn(struct vnic_cheaper *c, unsigned int way, uint64_t v)
{
	uint64_t est = c->est[way];

	if (!est) {
		c->est[way] = v ? v : 1;
		c->dev[way] = 0;
		return;
	}
	if (v > est * VNIC_CHEAPER_CAP)
		v = est * VNIC_CHEAPER_CAP;
	c->dev[way] = toward(c->dev[way], v > est ? v - est : est - v);
	est = toward(est, v);
	c->est[way] = est ? est : 1;
}

enum vnic_cheaper_way vnic_cheaper_pick(struct vnic_cheaper *c, unsigned int *flags)
{
	enum vnic_cheaper_way in_use = (enum vnic_cheaper_way)c->way;
	enum vnic_cheaper_way other = (enum vnic_cheaper_way) !c->way;

	/* Until the other way has a cost, every use tries it: two samples decide nothing. */
	if (!c->est[other] || ++c->uses >= VNIC_CHEAPER_PROBE_EVERY) {
		c->uses = 0;
		*flags = VNIC_CHEAPER_TIMED | VNIC_CHEAPER_PROBE;
		return other;
	}
	*flags = !c->est[in_use] || c->uses % VNIC_CHEAPER_TIME_EVERY == 0 ? VNIC_CHEAPER_TIMED : 0;
	return in_use;
}

bool vnic_cheaper_sample(struct vnic_cheaper *c, enum vnic_cheaper_way way, uint64_t ns)
{
	uint64_t other, in_use;

	if ((unsigned int)way > VNIC_CHEAPER_B)
		return false;
	learn(c, way, ns << VNIC_CHEAPER_FRAC);
	if (way == c->way || !c->est[c->way])
		return false;
	other = c->est[way];
	in_use = c->est[c->way];
	if (other + (other >> VNIC_CHEAPER_MARGIN_SHIFT) + c->dev[way] + c->dev[c->way] < in_use)
		c->ahead++;
	else
		c->ahead = 0;
	if (c->ahead < VNIC_CHEAPER_HOLD)
		return false;
	c->way = way;
	c->ahead = 0;
	c->uses = 0;
	return true;
}
