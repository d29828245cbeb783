// SPDX-License-Identifier: MIT
/*
 * Log-linear histogram, as HdrHistogram lays it out: values below 128 have a
 * bucket each; above, each power of two [2^e, 2^(e+1)) is cut into 128 equal
 * buckets, so a bucket is never wider than 1/128 of the values in it.
 * Recording is a count-leading-zeros and an add: cheap enough per
 * transaction.
 */
#include <string.h>

#include "work.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < VNIC_HIST_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);	/* >= SUB_BITS */
	return (e - VNIC_HIST_SUB_BITS + 1) * VNIC_HIST_SUB +
	       (unsigned int)((v >> (e - VNIC_HIST_SUB_BITS)) & (VNIC_HIST_SUB - 1));
}

/* [lo, lo + width) of bucket b. */
static void bucket_range(unsigned int b, uint64_t *lo, uint64_t *width)
{
	unsigned int tier = b / VNIC_HIST_SUB, sub = b % VNIC_HIST_SUB, shift;

	if (tier == 0) {
		*lo = sub;
		*width = 1;
		return;
	}
	shift = tier - 1;	/* e - SUB_BITS */
	*lo = ((uint64_t)VNIC_HIST_SUB + sub) << shift;
	*width = 1ull << shift;
}

void vnic_hist_reset(struct vnic_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void vnic_hist_record(struct vnic_hist *h, uint64_t v)
{
	h->buckets[bucket_of(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void vnic_hist_merge(struct vnic_hist *dst, const struct vnic_hist *src)
{
	unsigned int i;

	for (i = 0; i < VNIC_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t vnic_hist_percentile(const struct vnic_hist *h, double pct)
{
	uint64_t rank, seen = 0, lo, width, v;
	unsigned int b;

	if (!h->count)
		return 0;
	if (pct <= 0.0)
		return h->min;
	if (pct >= 100.0)
		return h->max;
	/* The smallest rank r (1-based) with r >= pct% of count. */
	rank = (uint64_t)(pct / 100.0 * (double)h->count);
	if ((double)rank < pct / 100.0 * (double)h->count)
		rank++;
	if (!rank)
		rank = 1;
	for (b = 0; b < VNIC_HIST_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank)
			break;
	}
	bucket_range(b, &lo, &width);
	v = lo + width / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

double vnic_hist_mean(const struct vnic_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
