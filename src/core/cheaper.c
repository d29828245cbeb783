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
 *     its timed uses, weight 1/4: the way not in use is sampled only at
 *     probes, so a smaller weight would take dozens of probes to follow a
 *     change;
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
 *   - a probe sends a use the dearer way, so probes back off while they
 *     agree: the period doubles from VNIC_CHEAPER_PROBE_MIN to
 *     VNIC_CHEAPER_PROBE_MAX uses (a settled boundary pays a probe in 4096
 *     uses, not one in 64). It is back at the minimum as soon as there is
 *     something to watch: a probe that finds the other way cheaper (the
 *     next ones, which must confirm it, come soon), a switch, or the way
 *     in use moving (below);
 *   - the way in use becoming dearer (or cheaper) is noticed by its own
 *     samples: when its estimate has moved from where it stood at the last
 *     probe by more than its deviation plus the margin, the boundary has
 *     changed, and the next probe comes at once. A single outlier does not
 *     do it: the same sample raises the deviation by nearly as much as the
 *     estimate; a change of level does, in about four samples;
 *   - the way not in use has a sample only per probe, too few to wait for
 *     its estimate to move: a probe whose sample falls outside its
 *     estimate by more than the deviation plus the margin keeps the period
 *     at the minimum, so the probes that follow its estimate down (or up)
 *     come 64 uses apart, not 4096. An outlier probe costs a few probes
 *     more before the period is long again.
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

enum vnic_cheaper_way vnic_cheaper_pick_slow(struct vnic_cheaper *c, unsigned int *flags)
{
	enum vnic_cheaper_way other = (enum vnic_cheaper_way) !c->way;

	/* Until the other way has a cost, every use tries it: two samples decide nothing. */
	if (!c->est[other] || (c->period && c->uses >= c->period)) {
		c->uses = 0;
		*flags = VNIC_CHEAPER_TIMED | VNIC_CHEAPER_PROBE;
		return other;
	}
	/* a timed use of the way in use; every one until it has a cost (period 0) */
	*flags = VNIC_CHEAPER_TIMED;
	return (enum vnic_cheaper_way)c->way;
}

/* A sample of the way in use: has it moved since the last probe? */
static void watch(struct vnic_cheaper *c)
{
	uint64_t est = c->est[c->way];
	uint64_t moved = est > c->ref ? est - c->ref : c->ref - est;

	if (moved > c->dev[c->way] + (est >> VNIC_CHEAPER_MARGIN_SHIFT)) {
		c->period = VNIC_CHEAPER_PROBE_MIN;
		c->ref = est;
	}
}

/*
 * A probe's sample: does the other way look cheaper, and for how long now?
 * moved: the sample fell outside what the other way's estimate expected.
 * The period doubles only at a probe that finds the other way dearer by
 * the switch's own rule mirrored (the margin plus both deviations): two
 * ways within that of each other keep it where it is, and a probe there
 * costs little, the gap between them.
 */
static bool verdict(struct vnic_cheaper *c, enum vnic_cheaper_way way, bool moved)
{
	uint64_t other = c->est[way], in_use = c->est[c->way];
	uint64_t slack = c->dev[way] + c->dev[c->way];

	c->ref = in_use;
	if (other + (other >> VNIC_CHEAPER_MARGIN_SHIFT) + slack < in_use) {
		c->ahead++;
		c->period = VNIC_CHEAPER_PROBE_MIN;
	} else {
		c->ahead = 0;
		if (moved)
			c->period = VNIC_CHEAPER_PROBE_MIN;
		else if (in_use + (in_use >> VNIC_CHEAPER_MARGIN_SHIFT) + slack < other &&
			 c->period < VNIC_CHEAPER_PROBE_MAX)
			c->period *= 2;
	}
	if (c->ahead < VNIC_CHEAPER_HOLD)
		return false;
	c->way = way;
	c->ahead = 0;
	c->uses = 0;
	c->period = VNIC_CHEAPER_PROBE_MIN;
	c->ref = other;
	return true;
}

bool vnic_cheaper_sample(struct vnic_cheaper *c, enum vnic_cheaper_way way, uint64_t ns)
{
	uint64_t v = ns << VNIC_CHEAPER_FRAC, was, spread;

	if ((unsigned int)way > VNIC_CHEAPER_B)
		return false;
	was = c->est[way];
	spread = c->dev[way] + (was >> VNIC_CHEAPER_MARGIN_SHIFT);
	learn(c, way, v);
	if (!c->period) {
		/* both ways have a cost now: probes from here on, the first decides nothing */
		if (c->est[VNIC_CHEAPER_A] && c->est[VNIC_CHEAPER_B]) {
			c->period = VNIC_CHEAPER_PROBE_MIN;
			c->uses = 0;
			c->ref = c->est[c->way];
		}
		return false;
	}
	if (way == c->way) {
		watch(c);
		return false;
	}
	return verdict(c, way, v + spread < was || v > was + spread);
}
