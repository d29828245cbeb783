/* SPDX-License-Identifier: MIT */
/*
 * Dynamic queue limits, the algorithm of docs/MECHANISMS.md section 1 written
 * from its description. The limit approximates how many bytes the device
 * consumes per completion interval: it grows when the queue starves (went
 * idle while we were holding packets back) and shrinks, slowly and with
 * hysteresis, by the smallest slack seen while the queue stayed busy.
 *
 * The byte counters are free-running u32s that wrap; every comparison goes
 * through a signed difference so that wrapping is harmless as long as less
 * than 2 GiB is in flight (max_limit keeps it so).
 */
#include <string.h>

#include "core/core.h"

/* a - b if positive, else 0, on wrapping counters. */
static inline uint32_t posdiff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0 ? a - b : 0;
}

/* a is at or after b on a wrapping counter. */
static inline bool after_eq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

static inline bool time_after(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}

void vnic_dql_reset(struct vnic_dql *dql, uint64_t now_ns)
{
	/* limit, num_queued and num_completed are read by counters: relaxed stores */
	vnic_ctr_set32(&dql->limit, dql->min_limit);
	vnic_ctr_set32(&dql->num_queued, 0);
	vnic_ctr_set32(&dql->num_completed, 0);
	/*
	 * Linux leaves adj_limit alone here; after a reset mid-run that lets
	 * the stale value admit bytes until the first completion. Recompute it
	 * so that avail is right from the first enqueue.
	 */
	dql->adj_limit = dql->limit;
	dql->last_obj_cnt = 0;
	dql->prev_num_queued = 0;
	dql->prev_last_obj_cnt = 0;
	dql->prev_ovlimit = 0;
	dql->lowest_slack = UINT32_MAX;
	dql->slack_start_time_ns = now_ns;
}

void vnic_dql_init(struct vnic_dql *dql, uint64_t hold_time_ns)
{
	memset(dql, 0, sizeof(*dql));
	dql->max_limit = VNIC_DQL_MAX_LIMIT;
	dql->min_limit = 0;
	dql->slack_hold_time_ns = hold_time_ns;
	vnic_dql_reset(dql, vnic_now_ns());
}

void vnic_dql_queued(struct vnic_dql *dql, uint32_t count)
{
	dql->last_obj_cnt = count;
	vnic_ctr_add32(&dql->num_queued, count);
}

void vnic_dql_completed(struct vnic_dql *dql, uint32_t count, uint64_t now_ns)
{
	uint32_t num_queued = dql->num_queued;
	uint32_t inflight = num_queued - dql->num_completed;
	uint32_t limit = dql->limit;
	uint32_t completed, ovlimit, inprogress, prev_inprogress;
	bool all_prev_completed;

	/*
	 * Completing more than was queued would push num_completed past
	 * num_queued and wreck every later difference (Linux BUG()s here).
	 * The datapath does not crash: the count is cut to what is in flight.
	 */
	if (vnic_unlikely(count > inflight))
		count = inflight;

	completed = dql->num_completed + count;
	ovlimit = posdiff(inflight, limit);
	inprogress = num_queued - completed;
	prev_inprogress = dql->prev_num_queued - dql->num_completed;
	all_prev_completed = after_eq(completed, dql->prev_num_queued);

	if ((ovlimit && !inprogress) || (dql->prev_ovlimit && all_prev_completed)) {
		/*
		 * Starved: the queue was held over its limit and then ran dry
		 * (or ran dry some time since the last call). Grow by what was
		 * both queued and completed since then, plus the last overshoot.
		 */
		limit += posdiff(completed, dql->prev_num_queued) + dql->prev_ovlimit;
		dql->slack_start_time_ns = now_ns;
		dql->lowest_slack = UINT32_MAX;
	} else if (inprogress && prev_inprogress && !all_prev_completed) {
		/*
		 * Busy for the whole interval. Twice what completed in it bounds
		 * what is needed; the rest of the limit is slack. The part of
		 * the last enqueue that was not overshoot is slack too.
		 */
		uint32_t slack = posdiff(limit + dql->prev_ovlimit, 2 * count);
		uint32_t slack_last_objs =
			dql->prev_ovlimit ? posdiff(dql->prev_last_obj_cnt, dql->prev_ovlimit) : 0;

		if (slack_last_objs > slack)
			slack = slack_last_objs;
		if (slack < dql->lowest_slack)
			dql->lowest_slack = slack;
		/* Shrink by the least slack over a whole hold window, never on one sample. */
		if (time_after(now_ns, dql->slack_start_time_ns + dql->slack_hold_time_ns)) {
			limit = posdiff(limit, dql->lowest_slack);
			dql->slack_start_time_ns = now_ns;
			dql->lowest_slack = UINT32_MAX;
		}
	}

	if (limit > dql->max_limit)
		limit = dql->max_limit;
	if (limit < dql->min_limit)
		limit = dql->min_limit;
	if (limit != dql->limit) {
		vnic_ctr_set32(&dql->limit, limit);
		ovlimit = 0;
	}

	dql->adj_limit = limit + completed;
	dql->prev_ovlimit = ovlimit;
	dql->prev_last_obj_cnt = dql->last_obj_cnt;
	vnic_ctr_set32(&dql->num_completed, completed);
	dql->prev_num_queued = num_queued;
}
