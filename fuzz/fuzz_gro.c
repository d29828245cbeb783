// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for GRO. Input layout:
 *
 *	byte 0	   config: bits 0-1 receive buffer size (2 KiB, 9 KiB, 64 KiB,
 *		   or 2 KiB), bit 2 no agg_pool, bit 3 a small agg_pool (8
 *		   buffers, so it runs dry), bit 4 fraglist (segments chained)
 *	then up to MAX_FRAMES records:
 *	  byte 0   flags: bits 0-1 ip_summed, bit 2 derive the frame from the
 *		   previous one (next TCP segment: seq advanced, IPv4 ID + 1;
 *		   the record's bytes are ignored), bit 3 a stripped VLAN tag,
 *		   bit 4 claim GSO input, bit 5 end the poll (flush) after it,
 *		   bits 6-7 hash bits 8-9
 *	  byte 1   hash bits 0-7 (bits 0-2 pick the bucket)
 *	  bytes 2-3 frame length, big endian (cut to what is left)
 *	  frame bytes
 *
 * Checked: every packet comes out exactly once (never while free in its pool,
 * all pools full again after the final flush, outputs == received - merged);
 * outputs lie inside their buffers; an output is either a packet that went in,
 * byte for byte, or a valid superpacket (IPv4 header checksum good, lengths
 * rewritten, vnic_gso_count agrees with gso_segs, checksum offsets inside);
 * a fraglist aggregate's fragments are received packets, not free, inside
 * their buffers, at most VNIC_GRO_MAX_FRAGS, adding up to frag_len, and the
 * aggregate made whole passes the same checks.
 *
 * Links src/net only (no tests/support). Corpus: fuzz/corpus/gro/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

#include "check.h"

enum {
	MAX_FRAMES = 64, /* also the receive pool size: a multiple of 8 */
	HEADROOM = 64,
	AGG_BUF = VNIC_PKT_MAX_LEN + HEADROOM,
	AGG_BIG = 64,
	AGG_SMALL = 8,
	REC_HDR = 4,
};

static const uint32_t rx_bufs[3] = {2048, 9216, AGG_BUF};
static struct vnic_pkt_pool rx_pools[3], agg_big, agg_small, flat_pool;
static bool ready;

/*
 * Per receive-pool index: given to GRO and not yet out, with its frame's
 * digest. A held packet moved into agg_pool is freed inside GRO and keeps a
 * stale flag; that is harmless, as a freed packet must never come out.
 */
static struct {
	bool in_gro;
	uint32_t len;
	uint64_t digest;
} track[3][MAX_FRAMES];

static uint8_t prev[VNIC_PKT_MAX_LEN];
static uint32_t prev_len;

struct run {
	struct vnic_gro gro;
	uint64_t outputs;
};

static void setup_once(void)
{
	if (ready)
		return;
	for (int i = 0; i < 3; i++)
		if (vnic_pkt_pool_init(&rx_pools[i], MAX_FRAMES, rx_bufs[i], HEADROOM))
			abort();
	if (vnic_pkt_pool_init(&agg_big, AGG_BIG, AGG_BUF, HEADROOM) ||
	    vnic_pkt_pool_init(&agg_small, AGG_SMALL, AGG_BUF, HEADROOM) ||
	    vnic_pkt_pool_init(&flat_pool, 1, AGG_BUF, HEADROOM))
		abort();
	ready = true;
}

static uint64_t digest(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static int rx_class(const struct vnic_pkt *pkt)
{
	for (int i = 0; i < 3; i++)
		if (pkt->pool == &rx_pools[i])
			return i;
	return -1;
}

static bool is_free(const struct vnic_pkt *pkt)
{
	const struct vnic_pkt_pool *pool = pkt->pool;

	for (uint32_t i = 0; i < pool->nfree; i++)
		if (pool->free_stack[i] == pkt->index)
			return true;
	return false;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void check_aggregate(struct vnic_pkt *pkt)
{
	const uint8_t *l3 = pkt->data + pkt->l2_len;

	FZ_CHECK(pkt->gso_type == VNIC_GSO_TCPV4 || pkt->gso_type == VNIC_GSO_TCPV6 ||
		 pkt->gso_type == (VNIC_GSO_TCPV4 | VNIC_GSO_TCP_ECN) ||
		 pkt->gso_type == (VNIC_GSO_TCPV6 | VNIC_GSO_TCP_ECN));
	FZ_CHECK(pkt->gso_segs <= VNIC_GSO_MAX_SEGS && pkt->gso_size > 0);
	FZ_CHECK(pkt->ip_summed == VNIC_CSUM_PARTIAL && pkt->csum_offset == 16);
	FZ_CHECK((uint32_t)pkt->csum_start + pkt->csum_offset + 2 <= pkt->len);
	FZ_CHECK(pkt->flags & VNIC_PKT_F_PARSED);
	FZ_CHECK((uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len < pkt->len);
	if (pkt->gso_type & VNIC_GSO_TCPV4) {
		FZ_CHECK(vnic_csum_ip4_ok(l3, 20));
		FZ_CHECK(rd16(l3 + 2) == pkt->len - pkt->l2_len);
	} else {
		FZ_CHECK(rd16(l3 + 4) == pkt->len - pkt->l2_len - 40);
	}
	/* Whatever GRO builds, segmentation must accept and cut back into as many. */
	FZ_CHECK(vnic_gso_count(pkt) == pkt->gso_segs);
	FZ_CHECK(vnic_csum_help(pkt) == 0);
}

/* A fraglist aggregate's fragments checked, and the whole of it copied into flat. */
static struct vnic_pkt *flatten(const struct vnic_pkt *pkt)
{
	struct vnic_pkt *flat = vnic_pkt_alloc(&flat_pool);
	uint32_t off = vnic_pkt_linear_len(pkt), n = 0;
	uint8_t *data, *head;

	FZ_CHECK(flat && pkt->len <= AGG_BUF - HEADROOM);
	data = flat->data;
	head = flat->head;
	memcpy(data, pkt->data, off);
	for (const struct vnic_pkt *f = pkt->frags; f; f = f->next) {
		FZ_CHECK(rx_class(f) >= 0 && !is_free(f) && f->len > 0);
		FZ_CHECK(f->data >= f->head && (size_t)(f->data - f->head) + f->len <= f->buf_size);
		FZ_CHECK(off + f->len <= pkt->len && ++n <= VNIC_GRO_MAX_FRAGS);
		memcpy(data + off, f->data, f->len);
		off += f->len;
	}
	FZ_CHECK(off == pkt->len && off - vnic_pkt_linear_len(pkt) == pkt->frag_len);
	/* the metadata too, in flat's own buffer */
	{
		struct vnic_pkt_pool *pool = flat->pool;
		uint32_t index = flat->index, buf_size = flat->buf_size;

		*flat = *pkt;
		flat->data = data;
		flat->head = head;
		flat->pool = pool;
		flat->index = index;
		flat->buf_size = buf_size;
		flat->next = flat->frags = flat->frags_tail = NULL;
		flat->frag_len = 0;
	}
	return flat;
}

static void out(void *ctx, struct vnic_pkt *pkt)
{
	struct run *r = ctx;
	int c = rx_class(pkt);

	FZ_CHECK(c >= 0 || pkt->pool == &agg_big || pkt->pool == &agg_small);
	FZ_CHECK(!is_free(pkt));
	FZ_CHECK(pkt->data >= pkt->head && vnic_pkt_linear_len(pkt) <= pkt->buf_size &&
		 (size_t)(pkt->data - pkt->head) + vnic_pkt_linear_len(pkt) <= pkt->buf_size);
	if (pkt->frags) {
		struct vnic_pkt *flat = flatten(pkt);

		FZ_CHECK(pkt->gso_segs > 1 && r->gro.fraglist);
		check_aggregate(flat);
		vnic_pkt_free(flat);
		if (c >= 0)
			track[c][pkt->index].in_gro = false;
		r->outputs++;
		vnic_pkt_free(pkt);
		return;
	}
	/* Either the packet that went in, unchanged, or an aggregate. */
	if (c < 0 || !track[c][pkt->index].in_gro || pkt->len != track[c][pkt->index].len ||
	    digest(pkt->data, pkt->len) != track[c][pkt->index].digest) {
		FZ_CHECK(pkt->gso_segs > 1);
		check_aggregate(pkt);
	}
	if (c >= 0)
		track[c][pkt->index].in_gro = false;
	r->outputs++;
	vnic_pkt_free(pkt);
}

/*
 * The next segment of the previous frame, if it was TCP: the sequence number
 * moves past its payload and the IPv4 ID counts up. Checksums are left as
 * they were, so the packet is marked verified.
 */
static bool derive(uint8_t *frame, uint32_t *len)
{
	struct vnic_hdrs h;
	uint8_t *th;
	uint32_t seq;

	if (!prev_len || vnic_parse_frame(prev, prev_len, &h) != VNIC_PARSE_OK ||
	    h.l4_proto != VNIC_IPPROTO_TCP || !(h.flags & VNIC_HDRS_F_L4))
		return false;
	memcpy(frame, prev, prev_len);
	*len = prev_len;
	th = frame + h.l4_off;
	seq = ((uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7]) +
	      h.payload_len;
	th[4] = (uint8_t)(seq >> 24);
	th[5] = (uint8_t)(seq >> 16);
	th[6] = (uint8_t)(seq >> 8);
	th[7] = (uint8_t)seq;
	if (h.l3_proto == VNIC_ETH_P_IP) {
		uint8_t *ip = frame + h.l3_off;
		uint16_t id = (uint16_t)(rd16(ip + 4) + 1);

		ip[4] = (uint8_t)(id >> 8);
		ip[5] = (uint8_t)id;
		vnic_csum_ip4_set(ip, h.l3_len);
	}
	return true;
}

static void feed(struct run *r, struct vnic_pkt_pool *pool, int c, const uint8_t *rec,
		 const uint8_t *frame, uint32_t len)
{
	static uint8_t derived[VNIC_PKT_MAX_LEN];
	uint8_t flags = rec[0];
	struct vnic_pkt *pkt;
	enum vnic_gro_result res;
	uint64_t merged;

	if ((flags & 4) && derive(derived, &len)) {
		frame = derived;
		flags = (uint8_t)((flags & ~3) | VNIC_CSUM_UNNECESSARY);
	}
	if (len > pool->buf_size - pool->headroom)
		len = pool->buf_size - pool->headroom;
	pkt = vnic_pkt_alloc(pool);
	FZ_CHECK(pkt);
	FZ_CHECK(vnic_pkt_copy_in(pkt, frame, len) == 0);
	memcpy(prev, frame, len);
	prev_len = len;

	pkt->hash = rec[1] | (uint32_t)(flags >> 6) << 8;
	pkt->ip_summed = flags & 3;
	if (flags & 8) {
		pkt->flags |= VNIC_PKT_F_VLAN;
		pkt->vlan_tci = rec[1];
	}
	if (flags & 16) {
		pkt->gso_type = VNIC_GSO_TCPV4;
		pkt->gso_size = 100;
		pkt->gso_segs = 2;
	}
	track[c][pkt->index].in_gro = true;
	track[c][pkt->index].len = len;
	track[c][pkt->index].digest = digest(pkt->data, len);

	merged = r->gro.stats.merged;
	res = vnic_gro_receive(&r->gro, pkt);
	FZ_CHECK(res == VNIC_GRO_MERGED || res == VNIC_GRO_HELD || res == VNIC_GRO_NORMAL);
	FZ_CHECK((res == VNIC_GRO_MERGED) == (r->gro.stats.merged == merged + 1));
	if (res == VNIC_GRO_MERGED)
		track[c][pkt->index].in_gro = false;
	FZ_CHECK(r->gro.nheld <= VNIC_GRO_BUCKETS * VNIC_GRO_MAX_HELD);
	if (flags & 32)
		vnic_gro_flush(&r->gro);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnic_pkt_pool *pool, *agg;
	struct run r;
	int c;

	setup_once();
	if (size < 1)
		return 0;
	c = (data[0] & 3) == 3 ? 0 : data[0] & 3;
	pool = &rx_pools[c];
	agg = (data[0] & 4) ? NULL : (data[0] & 8) ? &agg_small : &agg_big;
	memset(&r, 0, sizeof(r));
	vnic_gro_init(&r.gro, agg, out, &r);
	vnic_gro_set_fraglist(&r.gro, data[0] & 16);
	prev_len = 0;
	data++;
	size--;

	for (int n = 0; n < MAX_FRAMES && size >= REC_HDR; n++) {
		uint32_t len = rd16(data + 2);

		if (len > size - REC_HDR)
			len = (uint32_t)(size - REC_HDR);
		feed(&r, pool, c, data, data + REC_HDR, len);
		data += REC_HDR + len;
		size -= REC_HDR + len;
	}
	vnic_gro_flush(&r.gro);

	FZ_CHECK(r.gro.nheld == 0);
	for (int b = 0; b < VNIC_GRO_BUCKETS; b++)
		FZ_CHECK(r.gro.buckets[b].count == 0);
	FZ_CHECK(r.outputs == r.gro.stats.received - r.gro.stats.merged);
	FZ_CHECK(r.outputs == r.gro.stats.normal + r.gro.stats.flushed);
	FZ_CHECK(pool->nfree == pool->count);
	FZ_CHECK(agg_big.nfree == agg_big.count && agg_small.nfree == agg_small.count);
	return 0;
}
