// SPDX-License-Identifier: MIT
/*
 * The receiver's reassembly: what arrived beyond a hole is kept until the
 * hole fills, then delivered in order with it, each byte once; and the
 * SACK blocks (RFC 2018) and D-SACK block (RFC 2883) that tell the sender.
 *
 * The rx callback has checked every byte of a segment against the pattern
 * at its offset before the segment gets here, and the payload is a function
 * of the offset, so the kept data is a set of offset ranges: a fixed array
 * in the connection, no buffer held and none allocated. A segment that
 * would need one range more than the array holds is refused (not kept, not
 * SACKed): the sender resends it, as it would any segment Linux prunes from
 * a full out-of-order queue. Ranges are never dropped once kept (no
 * reneging), so the sender can trust what it was told.
 */
#include <string.h>

#include "work_int.h"

void vnic_tcpl_reasm_init(struct tcpl_reasm *q)
{
	memset(q, 0, sizeof(*q));
}

/* The first duplicate since the last ACK is the one reported. */
static void dsack_note(struct tcpl_reasm *q, uint64_t start, uint64_t end)
{
	if (q->dsack.end > q->dsack.start) {
		/* One block per ACK: grow it only if the two touch. */
		if (start <= q->dsack.end && end >= q->dsack.start) {
			if (start < q->dsack.start)
				q->dsack.start = start;
			if (end > q->dsack.end)
				q->dsack.end = end;
		}
		return;
	}
	q->dsack.start = start;
	q->dsack.end = end;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void remove_ranges(struct tcpl_reasm *q, unsigned int at, unsigned int count)
{
	memmove(&q->r[at], &q->r[at + count], (q->n - at - count) * sizeof(q->r[0]));
	q->n -= count;
}

/* Notes the bytes of [start, end) that ranges at..to-1 already hold. */
static bool overlaps(struct tcpl_reasm *q, unsigned int at, unsigned int to, uint64_t start,
		     uint64_t end)
{
	bool dup = false;
	unsigned int k;

	for (k = at; k < to; k++) {
		uint64_t s = max64(start, q->r[k].start), e = min64(end, q->r[k].end);

		if (s < e) {
			dsack_note(q, s, e);
			dup = true;
		}
	}
	return dup;
}

static enum reasm_res in_order(struct tcpl_reasm *q, uint64_t *rcv_nxt, uint64_t end,
			       uint64_t *delivered, bool *dup)
{
	uint64_t top = end;
	unsigned int i = 0;

	/* Ranges it reaches (or touches) go with it. */
	while (i < q->n && q->r[i].start <= top) {
		top = max64(top, q->r[i].end);
		i++;
	}
	if (overlaps(q, 0, i, *rcv_nxt, end))
		*dup = true;
	remove_ranges(q, 0, i);
	*delivered = top - *rcv_nxt;
	*rcv_nxt = top;
	return REASM_IN_ORDER;
}

static enum reasm_res out_of_order(struct tcpl_reasm *q, uint64_t start, uint64_t end, bool *dup)
{
	unsigned int i = 0, j;

	/* [i, j): the ranges that overlap or touch [start, end). */
	while (i < q->n && q->r[i].end < start)
		i++;
	for (j = i; j < q->n && q->r[j].start <= end; j++)
		;
	if (i == j) {
		if (q->n == TCPL_OFO_MAX)
			return REASM_FULL;
		memmove(&q->r[i + 1], &q->r[i], (q->n - i) * sizeof(q->r[0]));
		q->n++;
		q->r[i].start = start;
		q->r[i].end = end;
		q->r[i].stamp = ++q->clock;
		return REASM_OOO;
	}
	if (j - i == 1 && q->r[i].start <= start && end <= q->r[i].end) {
		dsack_note(q, start, end);
		*dup = true;
		return REASM_DUP;
	}
	if (overlaps(q, i, j, start, end))
		*dup = true;
	q->r[i].start = min64(start, q->r[i].start);
	q->r[i].end = max64(end, q->r[j - 1].end);
	q->r[i].stamp = ++q->clock;
	remove_ranges(q, i + 1, j - i - 1);
	return REASM_OOO;
}

enum reasm_res vnic_tcpl_reasm_add(struct tcpl_reasm *q, uint64_t *rcv_nxt, uint64_t start,
				   uint64_t end, uint64_t *delivered, bool *dup)
{
	*delivered = 0;
	*dup = false;
	if (end <= *rcv_nxt) {
		dsack_note(q, start, end);
		*dup = true;
		return REASM_DUP;
	}
	if (start < *rcv_nxt) {
		/* Starts with bytes delivered already. */
		dsack_note(q, start, *rcv_nxt);
		*dup = true;
		start = *rcv_nxt;
	}
	if (start == *rcv_nxt)
		return in_order(q, rcv_nxt, end, delivered, dup);
	return out_of_order(q, start, end, dup);
}

/* The kept range grown most recently before stamp bound (any if first),
 * other than skip. */
static int freshest(const struct tcpl_reasm *q, bool first, uint32_t bound, int skip)
{
	int best = -1;
	unsigned int k;

	for (k = 0; k < q->n; k++) {
		int32_t age = (int32_t)(bound - q->r[k].stamp);

		if ((int)k == skip || (!first && age <= 0))
			continue;
		if (best < 0 || (int32_t)(q->r[k].stamp - q->r[best].stamp) > 0)
			best = (int)k;
	}
	return best;
}

/* The kept range holding all of r, or -1. */
static int holder(const struct tcpl_reasm *q, const struct tcpl_range *r)
{
	unsigned int k;

	for (k = 0; k < q->n; k++)
		if (q->r[k].start <= r->start && r->end <= q->r[k].end)
			return (int)k;
	return -1;
}

unsigned int vnic_tcpl_reasm_sack(struct tcpl_reasm *q, struct tcpl_range *out, unsigned int max)
{
	unsigned int n = 0;
	uint32_t bound = 0;
	bool first = true;
	int skip = -1;

	if (max && q->dsack.end > q->dsack.start) {
		out[n++] = q->dsack;
		/* A duplicate inside a kept range: that range comes second, so
		 * the sender tells the D-SACK from a SACK (RFC 2883 section 4). */
		skip = holder(q, &q->dsack);
		if (skip >= 0 && n < max) {
			out[n].start = q->r[skip].start;
			out[n++].end = q->r[skip].end;
		}
		q->dsack.start = q->dsack.end = 0;
	}
	while (n < max) {
		int k = freshest(q, first, bound, skip);

		if (k < 0)
			break;
		out[n].start = q->r[k].start;
		out[n++].end = q->r[k].end;
		bound = q->r[k].stamp;
		first = false;
	}
	return n;
}
