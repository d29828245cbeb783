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

static uint64_t ewma(uint64_t est, uint64_t v)
{
	if (!est)
		return v ? v : 1;
	if (v > est * VNIC_CHEAPER_CAP)
		v = est * VNIC_CHEAPER_CAP;
	if (v >= est)
		est += (v - est) >> VNIC_CHEAPER_WEIGHT_SHIFT;
	else
		est -= (est - v) >> VNIC_CHEAPER_WEIGHT_SHIFT;
	return est ? est : 1;
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
	c->est[way] = ewma(c->est[way], ns << VNIC_CHEAPER_FRAC);
	if (way == c->way || !c->est[c->way])
		return false;
	other = c->est[way];
	in_use = c->est[c->way];
	if (other + (other >> VNIC_CHEAPER_MARGIN_SHIFT) < in_use)
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
