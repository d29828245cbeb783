// SPDX-License-Identifier: MIT
/*
 * GRO flow table, after Linux's dev_gro_receive (docs/MECHANISMS.md section 3):
 * 8 buckets chosen by the low bits of the flow hash, at most 8 held packets
 * per bucket, the oldest completed when a bucket is full. This file finds the
 * L3 header and the held packet of the same flow; the per-protocol rules live
 * in a small table (gro_tcp.c), one entry per ethertype.
 *
 * A held packet stores its GRO state in its own GSO fields: gso_size is the
 * MSS (its first payload) and gso_segs the number of segments merged so far.
 * Everything else is read back from its headers, which merging leaves at the
 * same offsets as in any segment that matches the flow.
 */
#include <assert.h>
#include <string.h>

#include "ctr_int.h"
#include "gro_int.h"

static_assert((VNIC_GRO_BUCKETS & (VNIC_GRO_BUCKETS - 1)) == 0, "bucket index is a mask");
static_assert(VNIC_GRO_MAX_HELD <= UINT8_MAX, "bucket count is a u8");

static const struct vnic_gro_proto *const gro_protos[] = {
	&vnic_gro_tcp4_proto,
	&vnic_gro_tcp6_proto,
};

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Offset of the L3 header behind Ethernet and up to two VLAN tags, with its
 * ethertype in *type; 0 when the frame ends first or stacks more tags.
 */
static uint32_t l2_parse(const struct vnic_pkt *pkt, uint16_t *type)
{
	uint32_t off = VNIC_ETH_HLEN - 2;
	unsigned int tags = 0;

	for (;;) {
		if (pkt->len < off + 2)
			return 0;
		*type = rd16(pkt->data + off);
		if (*type != VNIC_ETH_P_8021Q && *type != VNIC_ETH_P_8021AD)
			return off + 2;
		if (++tags > VNIC_MAX_VLANS)
			return 0;
		off += VNIC_VLAN_HLEN;
	}
}

static const struct vnic_gro_proto *proto_find(uint16_t type)
{
	for (size_t i = 0; i < sizeof(gro_protos) / sizeof(gro_protos[0]); i++) {
		if (gro_protos[i]->ethertype == type)
			return gro_protos[i];
	}
	return NULL;
}

static_assert(offsetof(struct vnic_gro, stats) + sizeof(struct vnic_gro_stats) ==
		      sizeof(struct vnic_gro),
	      "vnic_gro_init clears all but the stats, the last member");

void vnic_gro_init(struct vnic_gro *gro, struct vnic_pkt_pool *agg_pool, vnic_gro_out_fn out,
		   void *out_ctx)
{
	/* All but the stats, the last member, which counters may be reading (ctr_int.h). */
	memset(gro, 0, offsetof(struct vnic_gro, stats));
	vnic_net_ctr_zero(&gro->stats);
	gro->agg_pool = agg_pool;
	gro->out = out;
	gro->out_ctx = out_ctx;
}

static enum vnic_gro_result pass(struct vnic_gro *gro, struct vnic_pkt *pkt)
{
	vnic_net_ctr_inc(&gro->stats.normal);
	gro->out(gro->out_ctx, pkt);
	return VNIC_GRO_NORMAL;
}

/* A single segment leaves as it came: not GSO. */
static void finish(struct vnic_gro *gro, struct vnic_pkt *pkt)
{
	const struct vnic_gro_proto *proto = NULL;
	uint32_t l3_off = 0;
	uint16_t type;

	if (pkt->gso_segs > 1) {
		/* Merging never touches L2, so this finds what receive found. */
		l3_off = l2_parse(pkt, &type);
		if (l3_off)
			proto = proto_find(type);
	}
	if (proto) {
		proto->complete(pkt, (uint16_t)l3_off);
	} else {
		pkt->gso_size = 0;
		pkt->gso_segs = 0;
	}
	vnic_net_ctr_inc(&gro->stats.flushed);
	gro->out(gro->out_ctx, pkt);
}

/* The table is consistent again before the packet goes out. */
static void complete_at(struct vnic_gro *gro, struct vnic_gro_bucket *b, unsigned int i)
{
	struct vnic_pkt *pkt = b->held[i];

	memmove(&b->held[i], &b->held[i + 1], (b->count - i - 1) * sizeof(b->held[0]));
	b->count--;
	gro->nheld--;
	finish(gro, pkt);
}

static void hold(struct vnic_gro *gro, struct vnic_gro_bucket *b, struct vnic_pkt *pkt,
		 const struct vnic_gro_cb *cb)
{
	if (b->count == VNIC_GRO_MAX_HELD) {
		vnic_net_ctr_inc(&gro->stats.evicted);
		complete_at(gro, b, 0);
	}
	pkt->gso_size = (uint16_t)cb->payload_len;
	pkt->gso_segs = 1;
	b->held[b->count++] = pkt;
	gro->nheld++;
	vnic_net_ctr_inc(&gro->stats.held);
}

/*
 * The held packet of pkt's flow, as Linux's gro_list_prepare plus the L3/L4
 * address compare: same hash, same stripped VLAN tag, byte-equal L2 header
 * (MACs, tags, ethertype), then addresses and ports. -1 if none.
 */
static int find_flow(const struct vnic_gro_bucket *b, const struct vnic_pkt *pkt,
		     const struct vnic_gro_cb *cb, const struct vnic_gro_proto *proto)
{
	for (unsigned int i = 0; i < b->count; i++) {
		const struct vnic_pkt *h = b->held[i];

		if (h->hash != pkt->hash || h->len < cb->l3_off)
			continue;
		if ((h->flags ^ pkt->flags) & VNIC_PKT_F_VLAN)
			continue;
		if ((pkt->flags & VNIC_PKT_F_VLAN) && h->vlan_tci != pkt->vlan_tci)
			continue;
		if (memcmp(h->data, pkt->data, cb->l3_off))
			continue;
		if (proto->same_flow(h, pkt, cb))
			return (int)i;
	}
	return -1;
}

/* Moves a held packet into agg, which the caller checked is big enough. */
static void move_to(struct vnic_pkt *agg, const struct vnic_pkt *held)
{
	uint8_t *data = agg->data, *head = agg->head;
	struct vnic_pkt_pool *pool = agg->pool;
	uint32_t buf_size = agg->buf_size, index = agg->index;

	*agg = *held;
	agg->data = data;
	agg->head = head;
	agg->pool = pool;
	agg->buf_size = buf_size;
	agg->index = index;
	agg->next = NULL;
	memcpy(agg->data, held->data, held->len);
}

/*
 * Returns the held packet in *slot with at least need bytes of tailroom, or
 * NULL. On the first merge, a packet whose buffer cannot grow to the largest
 * aggregate is moved into an agg_pool buffer once, rather than copying again
 * later; without one the flow is not aggregated.
 */
static struct vnic_pkt *make_room(struct vnic_gro *gro, struct vnic_pkt **slot, uint32_t need,
				  uint32_t max_frame)
{
	struct vnic_pkt *held = *slot, *agg;
	uint32_t want = max_frame > held->len ? max_frame - held->len : 0;

	if (held->gso_segs == 1 && vnic_pkt_tailroom(held) < want) {
		agg = gro->agg_pool ? vnic_pkt_alloc(gro->agg_pool) : NULL;
		if (!agg)
			return NULL;
		if (agg->buf_size - vnic_pkt_headroom(agg) < held->len + need) {
			vnic_pkt_free(agg);
			return NULL;
		}
		move_to(agg, held);
		vnic_pkt_free(held);
		*slot = held = agg;
	}
	return vnic_pkt_tailroom(held) >= need ? held : NULL;
}

void vnic_gro_set_fraglist(struct vnic_gro *gro, bool on)
{
	vnic_gro_flush(gro);
	gro->fraglist = on;
}

/*
 * The segment's payload chained to held, which keeps its own buffer:
 * nothing is copied, and max_frame bounds the aggregate as tailroom does
 * for a copy.
 */
static bool chain(struct vnic_pkt *held, struct vnic_pkt *pkt, const struct vnic_gro_cb *cb,
		  uint32_t max_frame)
{
	if (held->len + cb->payload_len > max_frame || held->gso_segs > VNIC_GRO_MAX_FRAGS)
		return false;
	pkt->data += cb->hdr_len;
	pkt->len = cb->payload_len;
	pkt->next = NULL;
	if (held->frags_tail)
		held->frags_tail->next = pkt;
	else
		held->frags = pkt;
	held->frags_tail = pkt;
	held->frag_len += cb->payload_len;
	held->len += cb->payload_len;
	return true;
}

/* The segment's payload copied to the end of held's buffer (made big enough first). */
static struct vnic_pkt *append(struct vnic_gro *gro, struct vnic_pkt **slot, struct vnic_pkt *pkt,
			       const struct vnic_gro_cb *cb, uint32_t max_frame)
{
	struct vnic_pkt *held = make_room(gro, slot, cb->payload_len, max_frame);

	if (!held)
		return NULL;
	memcpy(held->data + held->len, pkt->data + cb->hdr_len, cb->payload_len);
	held->len += cb->payload_len;
	vnic_pkt_free(pkt);
	return held;
}

enum vnic_gro_result vnic_gro_receive(struct vnic_gro *gro, struct vnic_pkt *pkt)
{
	struct vnic_gro_cb cb = {.kind = VNIC_GRO_KIND_OTHER};
	const struct vnic_gro_proto *proto = NULL;
	struct vnic_gro_bucket *b;
	struct vnic_pkt *held;
	uint16_t type;
	int i;

	vnic_net_ctr_inc(&gro->stats.received);
	cb.l3_off = (uint16_t)l2_parse(pkt, &type);
	if (cb.l3_off)
		proto = proto_find(type);
	if (proto)
		proto->parse(pkt, &cb);
	if (cb.kind == VNIC_GRO_KIND_OTHER)
		return pass(gro, pkt);

	b = &gro->buckets[pkt->hash & (VNIC_GRO_BUCKETS - 1)];
	i = find_flow(b, pkt, &cb, proto);
	/* Never let a packet overtake the held data of its own flow. */
	if (cb.kind == VNIC_GRO_KIND_FLOW) {
		if (i >= 0)
			complete_at(gro, b, (unsigned int)i);
		return pass(gro, pkt);
	}

	if (i >= 0) {
		uint32_t max_frame = cb.l3_off + proto->max_frame_l3;

		held = NULL;
		if (proto->can_merge(b->held[i], pkt, &cb)) {
			if (gro->fraglist && chain(b->held[i], pkt, &cb, max_frame)) {
				held = b->held[i];
				vnic_net_ctr_inc(&gro->stats.chained);
			} else if (gro->fraglist)
				held = NULL;
			else
				held = append(gro, &b->held[i], pkt, &cb, max_frame);
		}
		if (held) {
			held->gso_segs++;
			proto->merged(held, &cb);
			vnic_net_ctr_inc(&gro->stats.merged);
			/* A short segment or PSH/FIN/... ends the aggregate. */
			if (cb.final || cb.payload_len < held->gso_size)
				complete_at(gro, b, (unsigned int)i);
			return VNIC_GRO_MERGED;
		}
		complete_at(gro, b, (unsigned int)i);
	}
	if (cb.final)
		return pass(gro, pkt);
	hold(gro, b, pkt, &cb);
	return VNIC_GRO_HELD;
}

/*
 * Oldest first within each bucket, buckets in index order, as Linux's
 * napi_gro_flush: a flow lives in one bucket, so its order is kept.
 */
void vnic_gro_flush(struct vnic_gro *gro)
{
	if (!gro->nheld)
		return;
	for (unsigned int n = 0; n < VNIC_GRO_BUCKETS; n++) {
		struct vnic_gro_bucket *b = &gro->buckets[n];

		while (b->count)
			complete_at(gro, b, 0);
	}
}
