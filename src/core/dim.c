/* SPDX-License-Identifier: MIT */
/*
 * Dynamic interrupt moderation: which of a table of moderation profiles a
 * queue should use, decided from what the last step did to its rates
 * (docs/MECHANISMS.md section 9). The idea is Linux's net_dim
 * (https://docs.kernel.org/networking/net_dim.html); this is our own
 * rendering of it, smaller:
 *
 *   - a measurement spans VNIC_DIM_SAMPLE_EVENTS interrupts and yields three
 *     rates: bytes, packets and interrupts per millisecond;
 *   - it is compared with the one before: better is more bytes, or (bytes
 *     within VNIC_DIM_SIGNIFICANT_PCT) more packets, or (both within it)
 *     fewer interrupts for the same work;
 *   - walking, a better measurement takes another step the same way; one
 *     that is not better takes the step back (the profile before was at
 *     least as good) and parks there, with that profile's measurement as
 *     the reference;
 *   - at either end of the table the walk parks too;
 *   - a park after a step that did not pay sits out a number of
 *     measurements first, 1, then 2, 4 ... up to VNIC_DIM_REST_MAX for each
 *     such excursion in a row, and 1 again after a step that paid: on a
 *     noisy machine the rates of one measurement differ from the next by
 *     more than the threshold, and each excursion they trigger costs a
 *     measurement at a profile already found worse (Linux's walk rests
 *     when tired for the same reason);
 *   - parked, it keeps the measurement it parked on as its reference and
 *     starts again only when the rates move away from it, towards less
 *     moderation first unless already at none: latency is what moderation
 *     costs, so the walk never stays up without cause.
 * Linux's walk also turns without parking; ours parks at the first step
 * that does not pay, so it cannot step more than the table's length
 * between two parks.
 */
#include <string.h>

#include "core/core.h"

enum cmp { WORSE, SAME, BETTER };

/* a and b differ by more than VNIC_DIM_SIGNIFICANT_PCT of b. */
static bool significant(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return d * 100 > b * VNIC_DIM_SIGNIFICANT_PCT;
}

static enum cmp compare(const struct vnic_dim_rates *cur, const struct vnic_dim_rates *prev)
{
	if (!prev->bpms)
		return cur->bpms ? BETTER : SAME;
	if (significant(cur->bpms, prev->bpms))
		return cur->bpms > prev->bpms ? BETTER : WORSE;
	if (!prev->ppms)
		return cur->ppms ? BETTER : SAME;
	if (significant(cur->ppms, prev->ppms))
		return cur->ppms > prev->ppms ? BETTER : WORSE;
	if (prev->epms && significant(cur->epms, prev->epms))
		return cur->epms < prev->epms ? BETTER : WORSE;
	return SAME;
}

static void park(struct vnic_dim *d)
{
	d->tune = VNIC_DIM_PARKED;
	d->steps_up = d->steps_down = 0;
}

/* One step the way the walk goes; at the end of the table, park. */
static void step(struct vnic_dim *d)
{
	if (d->tune == VNIC_DIM_UP && d->prof + 1 < d->nprof) {
		d->prof++;
		d->steps_up++;
	} else if (d->tune == VNIC_DIM_DOWN && d->prof > 0) {
		d->prof--;
		d->steps_down++;
	} else {
		park(d);
	}
}

/* Out of a park: less moderation first, unless there is none to take off. */
static void unpark(struct vnic_dim *d)
{
	d->tune = d->prof ? VNIC_DIM_DOWN : VNIC_DIM_UP;
	d->steps_up = d->steps_down = 0;
	step(d);
}

/*
 * The last step did not pay: take it back and stay there, deaf to changes
 * for a rest that doubles with every excursion in a row that failed.
 */
static void step_back(struct vnic_dim *d)
{
	if (d->tune == VNIC_DIM_UP && d->steps_up && d->prof > 0)
		d->prof--;
	else if (d->tune == VNIC_DIM_DOWN && d->steps_down && d->prof + 1 < d->nprof)
		d->prof++;
	park(d);
	d->rest = d->rest_next;
	if (d->rest_next < VNIC_DIM_REST_MAX)
		d->rest_next *= 2;
}

void vnic_dim_init(struct vnic_dim *dim, unsigned int nprof)
{
	memset(dim, 0, sizeof(*dim));
	if (nprof < 2)
		nprof = 2;
	if (nprof > VNIC_DIM_MAX_PROFILES)
		nprof = VNIC_DIM_MAX_PROFILES;
	dim->nprof = nprof;
	dim->tune = VNIC_DIM_UP;
	dim->rest_next = 1;
}

bool vnic_dim_decide(struct vnic_dim *dim, const struct vnic_dim_rates *cur)
{
	unsigned int was = dim->prof;

	switch (dim->tune) {
	case VNIC_DIM_PARKED:
		if (dim->rest) {
			dim->rest--;
			return false;
		}
		/* the reference stays the measurement parked on: a slow drift still shows */
		if (compare(cur, &dim->prev) == SAME)
			return false;
		unpark(dim);
		break;
	case VNIC_DIM_UP:
	case VNIC_DIM_DOWN:
		if (compare(cur, &dim->prev) != BETTER) {
			/*
			 * The reference stays the measurement of the profile we go
			 * back to: compared with the worse one, the next look there
			 * would see a change and walk straight into it again.
			 */
			step_back(dim);
			goto moved;
		}
		/* a step that paid: the rates move for real, the next rest is short */
		dim->rest_next = 1;
		step(dim);
		break;
	}
	dim->prev = *cur;
moved:
	if (dim->prof != was)
		dim->moves++;
	return dim->prof != was;
}

/* per millisecond over dt_ns, without overflow for any count a queue can reach */
static uint64_t per_ms(uint64_t count, uint64_t dt_ns)
{
	return count / dt_ns * 1000000 + count % dt_ns * 1000000 / dt_ns;
}

bool vnic_dim_update(struct vnic_dim *dim, const struct vnic_dim_sample *now)
{
	struct vnic_dim_rates r;
	uint64_t dt;
	bool moved;

	if (!dim->measuring) {
		dim->start = *now;
		dim->measuring = true;
		return false;
	}
	if (now->events - dim->start.events < VNIC_DIM_SAMPLE_EVENTS)
		return false;
	dt = now->ns - dim->start.ns;
	if (!dt)
		dt = 1;
	r.ppms = per_ms(now->pkts - dim->start.pkts, dt);
	r.bpms = per_ms(now->bytes - dim->start.bytes, dt);
	r.epms = per_ms(now->events - dim->start.events, dt);
	dim->samples++;
	moved = vnic_dim_decide(dim, &r);
	/* the next measurement is of the profile now in force */
	dim->start = *now;
	return moved;
}
