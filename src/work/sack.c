// SPDX-License-Identifier: MIT
/*
 * The sender's SACK scoreboard (RFC 6675) and the SACK option's wire format
 * (RFC 2018 section 3).
 *
 * The sender keeps no data: a resend is built again from the pattern. What
 * it keeps is which ranges of [snd_una, snd_nxt) the receiver SACKed and
 * which it resent, so that it resends only holes, each once, and knows when
 * a resend was itself lost: a resent range carries snd_nxt at the time it
 * was resent (its mark); once DupThresh segments sent after the mark are
 * SACKed while the range is still missing, the resend is lost like any other
 * segment and is sent again, without waiting for the RTO. That is Linux's
 * old lost-retransmit detection, with the sequence space as the clock, which
 * is enough because new data is always sent in sequence order.
 */
#include <string.h>

#include "work_int.h"

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t segs(uint64_t bytes, uint32_t mss)
{
	return (bytes + mss - 1) / mss;
}

static bool resent(const struct tcpl_sb_ent *e)
{
	return e->kind != SB_SACKED;
}

/* Adjacent ranges of one kind become one; resends keep the later mark. */
static uint32_t coalesce(struct tcpl_sb_ent *e, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && e[k - 1].end == e[i].start && e[k - 1].kind == e[i].kind) {
			e[k - 1].end = e[i].end;
			e[k - 1].mark = max64(e[k - 1].mark, e[i].mark);
			continue;
		}
		e[k++] = e[i];
	}
	return k;
}

uint64_t vnic_tcpl_sb_mark(struct tcpl_sb *sb, uint64_t start, uint64_t end, enum sb_kind kind,
			   uint64_t mark, uint32_t mss, uint64_t *recovered)
{
	struct tcpl_sb_ent add[3];
	uint64_t newly = end - start;
	uint32_t i = 0, j, k = 0;
	bool right = false;

	*recovered = 0;
	if (start >= end)
		return 0;
	/* [i, j): the ranges [start, end) overlaps, replaced by add[0, k). */
	while (i < sb->n && sb->e[i].end <= start)
		i++;
	/* The first may keep a part on the left... */
	if (i < sb->n && sb->e[i].start < start) {
		add[k] = sb->e[i];
		add[k++].end = start;
	}
	add[k].start = start;
	add[k].end = end;
	add[k].mark = mark;
	add[k++].kind = kind;
	for (j = i; j < sb->n && sb->e[j].start < end; j++) {
		const struct tcpl_sb_ent *e = &sb->e[j];
		uint64_t over = min64(end, e->end) - max64(start, e->start);

		if (e->kind == SB_SACKED)
			newly -= over;
		else if (e->kind == SB_RXT_FAST && kind == SB_SACKED)
			*recovered += segs(over, mss);
		/* ...and the last a part on the right. */
		if (e->end > end) {
			add[k] = *e;
			add[k].start = end;
			right = true;
		}
	}
	if (right)
		k++;
	memmove(&sb->e[i + k], &sb->e[j], (sb->n - j) * sizeof(sb->e[0]));
	memcpy(&sb->e[i], add, k * sizeof(add[0]));
	sb->n = coalesce(sb->e, sb->n - (j - i) + k);
	/* Full: the highest ranges go (a SACK forgotten costs at most a
	 * needless resend; a resend forgotten, at most a second one). */
	if (sb->n > TCPL_SB_MAX)
		sb->n = TCPL_SB_MAX;
	return kind == SB_SACKED ? newly : 0;
}

uint64_t vnic_tcpl_sb_ack(struct tcpl_sb *sb, uint64_t una, uint32_t mss)
{
	uint64_t recovered = 0;
	uint32_t i = 0;

	while (i < sb->n && sb->e[i].start < una) {
		struct tcpl_sb_ent *e = &sb->e[i];
		uint64_t top = min64(e->end, una);

		if (e->kind == SB_RXT_FAST)
			recovered += segs(top - e->start, mss);
		if (e->end > una) {
			e->start = una;
			break;
		}
		i++;
	}
	memmove(sb->e, sb->e + i, (sb->n - i) * sizeof(sb->e[0]));
	sb->n -= i;
	return recovered;
}

uint64_t vnic_tcpl_sb_lost_below(const struct tcpl_sb *sb, uint64_t una, uint32_t mss,
				 unsigned int thresh)
{
	uint64_t above = 0;
	uint32_t k;

	for (k = sb->n; k-- > 0;) {
		if (sb->e[k].kind != SB_SACKED)
			continue;
		above += segs(sb->e[k].end - sb->e[k].start, mss);
		if (above >= thresh)
			return sb->e[k].start;
	}
	return una;
}

/* Segments SACKed at or above point, counting no further than cap. */
static uint64_t sacked_from(const struct tcpl_sb *sb, uint64_t point, uint32_t mss, uint64_t cap)
{
	uint64_t acc = 0;
	uint32_t k;

	for (k = sb->n; k-- > 0 && sb->e[k].end > point && acc < cap;)
		if (sb->e[k].kind == SB_SACKED)
			acc += segs(sb->e[k].end - max64(sb->e[k].start, point), mss);
	return acc;
}

unsigned int vnic_tcpl_sb_lost_resends(struct tcpl_sb *sb, uint32_t mss, unsigned int thresh)
{
	unsigned int gone = 0;
	uint32_t i, k = 0;

	for (i = 0; i < sb->n; i++) {
		if (resent(&sb->e[i]) && sacked_from(sb, sb->e[i].mark, mss, thresh) >= thresh) {
			gone++;
			continue;
		}
		sb->e[k++] = sb->e[i];
	}
	sb->n = k;
	return gone;
}

void vnic_tcpl_sb_forget_resends(struct tcpl_sb *sb)
{
	uint32_t i, k = 0;

	for (i = 0; i < sb->n; i++)
		if (!resent(&sb->e[i]))
			sb->e[k++] = sb->e[i];
	sb->n = k;
}

bool vnic_tcpl_sb_next_hole(const struct tcpl_sb *sb, uint64_t from, uint64_t limit, uint32_t max,
			    struct tcpl_range *out)
{
	uint64_t x = from;
	uint32_t k;

	for (k = 0; k < sb->n && x < limit; k++) {
		const struct tcpl_sb_ent *e = &sb->e[k];

		if (e->end <= x)
			continue;
		if (e->start > x) {
			out->start = x;
			out->end = min64(min64(e->start, limit), x + max);
			return true;
		}
		x = e->end;
	}
	if (x >= limit)
		return false;
	out->start = x;
	out->end = min64(limit, x + max);
	return true;
}

bool vnic_tcpl_sb_last_unsacked(const struct tcpl_sb *sb, uint64_t from, uint64_t end,
				uint32_t max, struct tcpl_range *out)
{
	uint64_t y = end, low = from;
	uint32_t k = sb->n;

	/* Down over the SACKed ranges that reach the top. */
	while (k > 0 && sb->e[k - 1].kind == SB_SACKED && sb->e[k - 1].end >= y) {
		y = min64(y, sb->e[k - 1].start);
		k--;
	}
	/* The highest SACKed byte below y bounds the tail from below. */
	while (k > 0) {
		const struct tcpl_sb_ent *e = &sb->e[--k];

		if (e->kind == SB_SACKED && e->end <= y) {
			low = max64(low, e->end);
			break;
		}
	}
	if (y <= low)
		return false;
	out->end = y;
	out->start = y - low > max ? y - max : low;
	return true;
}

uint64_t vnic_tcpl_sb_sacked(const struct tcpl_sb *sb)
{
	uint64_t sum = 0;
	uint32_t k;

	for (k = 0; k < sb->n; k++)
		if (sb->e[k].kind == SB_SACKED)
			sum += sb->e[k].end - sb->e[k].start;
	return sum;
}

uint64_t vnic_tcpl_sb_resent(const struct tcpl_sb *sb)
{
	uint64_t sum = 0;
	uint32_t k;

	for (k = 0; k < sb->n; k++)
		if (resent(&sb->e[k]))
			sum += sb->e[k].end - sb->e[k].start;
	return sum;
}

/* ---- the option ------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

unsigned int vnic_tcpl_sack_put(uint8_t *opt, const uint32_t (*blocks)[2], unsigned int n)
{
	unsigned int i;

	if (!n)
		return 0;
	if (n > TCPL_SACK_BLOCKS)
		n = TCPL_SACK_BLOCKS;
	/* Two NOPs put the blocks on 4-byte boundaries (RFC 2018 section 3). */
	opt[0] = TCPL_OPT_NOP;
	opt[1] = TCPL_OPT_NOP;
	opt[2] = TCPL_OPT_SACK;
	opt[3] = (uint8_t)(2 + 8 * n);
	for (i = 0; i < n; i++) {
		put32(opt + 4 + 8 * i, blocks[i][0]);
		put32(opt + 8 + 8 * i, blocks[i][1]);
	}
	return 4 + 8 * n;
}

unsigned int vnic_tcpl_sack_get(const uint8_t *opt, uint32_t len, uint32_t (*blocks)[2])
{
	uint32_t off = 0;

	while (off < len) {
		uint32_t olen, n, i;

		if (opt[off] == 0)	/* end of options */
			return 0;
		if (opt[off] == TCPL_OPT_NOP) {
			off++;
			continue;
		}
		if (len - off < 2)
			return 0;
		olen = opt[off + 1];
		if (olen < 2 || olen > len - off)
			return 0;
		if (opt[off] == TCPL_OPT_SACK) {
			n = (olen - 2) / 8;
			if ((olen - 2) % 8 || !n || n > TCPL_SACK_BLOCKS)
				return 0;
			for (i = 0; i < n; i++) {
				blocks[i][0] = get32(opt + off + 2 + 8 * i);
				blocks[i][1] = get32(opt + off + 6 + 8 * i);
			}
			return n;
		}
		off += olen;
	}
	return 0;
}
