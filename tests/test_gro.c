// SPDX-License-Identifier: MIT
/*
 * GRO: one test per merge rule and per no-merge rule (docs/MECHANISMS.md section
 * 3), the flow table (eviction, flush order, aggregation buffers), and the
 * property GRO(GSO(x)) == x on random superpackets.
 *
 * Expected aggregates are not computed here: they are superpackets built by
 * the independent test builder (vnic_pktgen_build_gso), so a test compares
 * GRO's output byte for byte with what a TSO sender would have handed over.
 * Every test ends by checking that each pool got all its packets back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"
#include "pktgen.h"
#include "support.h"

enum {
	HEADROOM = 128,
	RX_BUF = 2048,	 /* small receive buffers: merging needs agg_pool */
	RX_COUNT = 1104, /* pool counts are multiples of 8: see the report on pkt.c */
	BIG_BUF = 16384, /* for segments that do not fit RX_BUF */
	BIG_COUNT = 16,
	AGG_BUF = VNIC_PKT_MAX_LEN + HEADROOM,
	AGG_COUNT = 24,
	MAX_OUT = 2100,
	BASE_HASH = 0x5a5a0002, /* bucket 2 */
	MSS = 1000,
};

struct env {
	struct vnic_pkt_pool rx, big, agg;
	struct vnic_gro gro;
	struct vnic_pkt *out[MAX_OUT];
	unsigned int nout;
	const void *arg; /* the case of a table-driven test */
};

static void sink(void *ctx, struct vnic_pkt *pkt)
{
	struct env *e = ctx;

	assert_true(e->nout < MAX_OUT);
	assert_true(pkt->data >= pkt->head &&
		    pkt->data + vnic_pkt_linear_len(pkt) <= pkt->head + pkt->buf_size);
	e->out[e->nout++] = pkt;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->arg = *state;
	assert_int_equal(vnic_pkt_pool_init(&e->rx, RX_COUNT, RX_BUF, HEADROOM), 0);
	assert_int_equal(vnic_pkt_pool_init(&e->big, BIG_COUNT, BIG_BUF, HEADROOM), 0);
	assert_int_equal(vnic_pkt_pool_init(&e->agg, AGG_COUNT, AGG_BUF, HEADROOM), 0);
	vnic_gro_init(&e->gro, &e->agg, sink, e);
	*state = e;
	return 0;
}

/* Every packet given to GRO must come out exactly once, or be freed by it. */
static int teardown(void **state)
{
	struct env *e = *state;

	vnic_gro_flush(&e->gro);
	assert_int_equal(e->gro.nheld, 0);
	for (unsigned int i = 0; i < e->nout; i++)
		vnic_pkt_free(e->out[i]);
	assert_int_equal(e->rx.nfree, e->rx.count);
	assert_int_equal(e->big.nfree, e->big.count);
	assert_int_equal(e->agg.nfree, e->agg.count);
	vnic_pkt_pool_fini(&e->rx);
	vnic_pkt_pool_fini(&e->big);
	vnic_pkt_pool_fini(&e->agg);
	free(e);
	return 0;
}

/* ---------------------------------------------------------------------------
 * Streams: consecutive segments of one TCP flow
 * ------------------------------------------------------------------------- */

struct stream {
	struct vnic_pktgen_flow f; /* f.seq and f.ip_id are the next segment's */
	uint32_t off;		   /* stream offset of the next payload byte */
	uint32_t hash;
};

static void stream_init(struct stream *s, bool v6)
{
	vnic_pktgen_flow_init(&s->f, v6, VNIC_IPPROTO_TCP);
	s->off = 0;
	s->hash = BASE_HASH;
}

static void set_timestamp(struct vnic_pktgen_flow *f, uint32_t tsval)
{
	static const uint8_t ts[12] = {1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0x33, 0x44};

	memcpy(f->tcp_opts, ts, sizeof(ts));
	f->tcp_opts[4] = (uint8_t)(tsval >> 24);
	f->tcp_opts[5] = (uint8_t)(tsval >> 16);
	f->tcp_opts[6] = (uint8_t)(tsval >> 8);
	f->tcp_opts[7] = (uint8_t)tsval;
	f->tcp_opts_len = sizeof(ts);
}

static struct vnic_pkt *alloc_for(struct env *e, uint32_t frame_len)
{
	struct vnic_pkt *p = vnic_pkt_alloc(frame_len + 64 <= RX_BUF - HEADROOM ? &e->rx : &e->big);

	assert_non_null(p);
	return p;
}

/* The next len payload bytes of s as one segment, with s advanced past it. */
static struct vnic_pkt *stream_seg(struct env *e, struct stream *s, uint32_t len)
{
	struct vnic_pkt *p = alloc_for(e, vnic_pktgen_hdr_len(&s->f) + len);

	assert_int_equal(vnic_pktgen_build(p, &s->f, s->off, len), 0);
	p->hash = s->hash;
	s->off += len;
	s->f.seq += len;
	s->f.ip_id++;
	return p;
}

/* What a TSO sender would hand over for len bytes of s from its current point. */
static struct vnic_pkt *stream_super(struct env *e, const struct stream *s, uint32_t len,
				     uint16_t mss)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&e->agg);

	assert_non_null(p);
	assert_int_equal(vnic_pktgen_build_gso(p, &s->f, s->off, len, mss), 0);
	p->hash = s->hash;
	return p;
}

static uint8_t *ip_hdr(struct vnic_pkt *p)
{
	return p->data + p->l2_len;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---------------------------------------------------------------------------
 * Comparisons
 * ------------------------------------------------------------------------- */

/* A packet's bytes and metadata as they were before GRO saw it. */
struct snap {
	struct vnic_pkt meta;
	uint8_t *bytes;
};

static struct snap snap_take(const struct vnic_pkt *p)
{
	struct snap s = {.meta = *p, .bytes = malloc(p->len ? p->len : 1)};

	assert_non_null(s.bytes);
	memcpy(s.bytes, p->data, p->len);
	return s;
}

/* Passed out unchanged: same buffer, same bytes, same metadata (so not GSO). */
static void assert_unchanged(const struct vnic_pkt *p, struct snap *s)
{
	assert_ptr_equal(p->head, s->meta.head);
	assert_int_equal(p->len, s->meta.len);
	assert_memory_equal(p->data, s->bytes, p->len);
	assert_int_equal(p->gso_type, s->meta.gso_type);
	assert_int_equal(p->gso_size, s->meta.gso_size);
	assert_int_equal(p->gso_segs, s->meta.gso_segs);
	assert_int_equal(p->ip_summed, s->meta.ip_summed);
	assert_int_equal(p->csum_start, s->meta.csum_start);
	assert_int_equal(p->csum_offset, s->meta.csum_offset);
	assert_int_equal(p->hash, s->meta.hash);
	assert_int_equal(p->flags, s->meta.flags);
	free(s->bytes);
	s->bytes = NULL;
}

/* p's bytes, its fragments' included, compared with ref's flat bytes. */
static void assert_same_bytes(const struct vnic_pkt *p, const uint8_t *ref, uint32_t len)
{
	uint32_t off = vnic_pkt_linear_len(p);
	const struct vnic_pkt *f;

	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, ref, off);
	for (f = p->frags; f; f = f->next) {
		assert_true(off + f->len <= len);
		assert_memory_equal(f->data, ref + off, f->len);
		off += f->len;
	}
	assert_int_equal(off, len);
}

/* GRO's aggregate equals the superpacket ref, bytes and metadata. */
static void assert_same_super(const struct vnic_pkt *p, const struct vnic_pkt *ref)
{
	assert_same_bytes(p, ref->data, ref->len);
	assert_int_equal(p->gso_type, ref->gso_type);
	assert_int_equal(p->gso_size, ref->gso_size);
	assert_int_equal(p->gso_segs, ref->gso_segs);
	assert_int_equal(p->ip_summed, ref->ip_summed);
	assert_int_equal(p->csum_start, ref->csum_start);
	assert_int_equal(p->csum_offset, ref->csum_offset);
	assert_int_equal(p->hash, ref->hash);
	assert_int_equal(p->l2_len, ref->l2_len);
	assert_int_equal(p->l3_len, ref->l3_len);
	assert_int_equal(p->l4_len, ref->l4_len);
	assert_int_equal(p->l3_proto, ref->l3_proto);
	assert_int_equal(p->l4_proto, ref->l4_proto);
	assert_true(p->flags & VNIC_PKT_F_PARSED);
}

/* Checks out[i] against the superpacket of len bytes of s at its point, mss. */
static void expect_super(struct env *e, unsigned int i, const struct stream *s, uint32_t len,
			 uint16_t mss)
{
	struct vnic_pkt *ref = stream_super(e, s, len, mss);

	assert_true(i < e->nout);
	assert_true(ref->gso_segs > 1);
	assert_same_super(e->out[i], ref);
	vnic_pkt_free(ref);
}

static enum vnic_gro_result rx(struct env *e, struct vnic_pkt *p)
{
	return vnic_gro_receive(&e->gro, p);
}

/* ---------------------------------------------------------------------------
 * Merging
 * ------------------------------------------------------------------------- */

static void merge_n(void **state, bool v6, bool vlan, bool ts)
{
	struct env *e = *state;
	struct stream s, start;

	stream_init(&s, v6);
	s.f.vlan = vlan;
	s.f.vlan_tci = 0x2064;
	if (ts)
		set_timestamp(&s.f, 77);
	start = s;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	for (int i = 1; i < 5; i++)
		assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(e->nout, 0);
	assert_int_equal(e->gro.nheld, 1);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	expect_super(e, 0, &start, 5 * MSS, MSS);
	assert_int_equal(e->gro.stats.received, 5);
	assert_int_equal(e->gro.stats.held, 1);
	assert_int_equal(e->gro.stats.merged, 4);
	assert_int_equal(e->gro.stats.flushed, 1);
	assert_int_equal(e->gro.stats.normal, 0);
}

static void test_merge_v4(void **state)
{
	merge_n(state, false, false, false);
}

/*
 * Fraglist: the same aggregate, byte for byte, but its segments chained
 * rather than copied: no agg_pool buffer, every segment's packet held
 * until the aggregate is freed.
 */
static void merge_frags(void **state, bool v6)
{
	struct env *e = *state;
	struct stream s, start;
	uint32_t rx_free;
	unsigned int nfrags = 0;

	vnic_gro_set_fraglist(&e->gro, true);
	stream_init(&s, v6);
	start = s;
	rx_free = e->rx.nfree;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	for (int i = 1; i < 5; i++)
		assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(e->agg.nfree, e->agg.count);
	assert_int_equal(e->rx.nfree, rx_free - 5);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	expect_super(e, 0, &start, 5 * MSS, MSS);
	for (const struct vnic_pkt *f = e->out[0]->frags; f; f = f->next)
		nfrags++;
	assert_int_equal(nfrags, 4);
	assert_int_equal(e->out[0]->frag_len, 4 * MSS);
	assert_int_equal(e->gro.stats.merged, 4);
	assert_int_equal(e->gro.stats.chained, 4);
	/* one free gives every segment back */
	vnic_pkt_free(e->out[0]);
	e->nout = 0;
	assert_int_equal(e->rx.nfree, rx_free);
}

static void test_merge_frags_v4(void **state)
{
	merge_frags(state, false);
}

static void test_merge_frags_v6(void **state)
{
	merge_frags(state, true);
}

/* An aggregate takes at most VNIC_GRO_MAX_FRAGS fragments: one writev's worth. */
static void test_frags_capped(void **state)
{
	struct env *e = *state;
	struct stream s, start;
	const uint32_t small = 100;

	vnic_gro_set_fraglist(&e->gro, true);
	stream_init(&s, false);
	start = s;
	for (unsigned int i = 0; i < VNIC_GRO_MAX_FRAGS + 3; i++)
		rx(e, stream_seg(e, &s, small));
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 2);
	assert_int_equal(e->out[0]->gso_segs, VNIC_GRO_MAX_FRAGS + 1);
	expect_super(e, 0, &start, (VNIC_GRO_MAX_FRAGS + 1) * small, small);
	assert_int_equal(e->out[1]->gso_segs, 2);
}

static void test_merge_v6(void **state)
{
	merge_n(state, true, false, false);
}

static void test_merge_vlan_v4(void **state)
{
	merge_n(state, false, true, false);
}

static void test_merge_vlan_v6(void **state)
{
	merge_n(state, true, true, false);
}

static void test_merge_equal_timestamps(void **state)
{
	merge_n(state, false, false, true);
}

/* The IPv4 ID is a 16-bit counter: 0xffff is followed by 0. */
static void test_merge_ip_id_wraps(void **state)
{
	struct env *e = *state;
	struct stream s, start;

	stream_init(&s, false);
	s.f.ip_id = 0xfffe;
	start = s;
	for (int i = 0; i < 4; i++)
		assert_int_equal(rx(e, stream_seg(e, &s, MSS)),
				 i ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	expect_super(e, 0, &start, 4 * MSS, MSS);
}

/* TSO puts CWR on the first segment only; the aggregate keeps it and says ECN. */
static void test_merge_cwr_on_first(void **state)
{
	struct env *e = *state;
	struct stream s, start;

	stream_init(&s, false);
	s.f.tcp_flags = VNIC_TCP_ACK | VNIC_TCP_CWR;
	start = s;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	s.f.tcp_flags = VNIC_TCP_ACK;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	assert_true(e->out[0]->gso_type & VNIC_GSO_TCP_ECN);
	expect_super(e, 0, &start, 3 * MSS, MSS);
}

/* The device already verified the checksum: GRO must not check it again. */
static void test_merge_trusts_unnecessary_and_complete(void **state)
{
	struct env *e = *state;
	struct stream s;
	struct vnic_pkt *p;

	stream_init(&s, false);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	p = stream_seg(e, &s, MSS);
	p->data[p->len - 1] ^= 0xff;
	p->ip_summed = VNIC_CSUM_UNNECESSARY;
	assert_int_equal(rx(e, p), VNIC_GRO_MERGED);
	p = stream_seg(e, &s, MSS);
	p->data[p->len - 1] ^= 0xff;
	p->ip_summed = VNIC_CSUM_COMPLETE;
	assert_int_equal(rx(e, p), VNIC_GRO_MERGED);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	assert_int_equal(e->out[0]->gso_segs, 3);
}

/* A PSH (or FIN) segment that merges closes the aggregate at once, flag ORed in. */
static void close_with_flag(void **state, bool v6, uint8_t flag)
{
	struct env *e = *state;
	struct stream s, start, ref;
	struct snap next;
	struct vnic_pkt *p;

	stream_init(&s, v6);
	start = s;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	s.f.tcp_flags |= flag;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(e->nout, 1);
	assert_int_equal(e->gro.nheld, 0);
	ref = start;
	ref.f.tcp_flags |= flag;
	expect_super(e, 0, &ref, 3 * MSS, MSS);

	/* The next segment starts a new aggregate. */
	s.f.tcp_flags &= (uint8_t)~flag;
	p = stream_seg(e, &s, MSS);
	next = snap_take(p);
	assert_int_equal(rx(e, p), VNIC_GRO_HELD);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 2);
	assert_unchanged(e->out[1], &next);
}

static void test_psh_closes_after_merge_v4(void **state)
{
	close_with_flag(state, false, VNIC_TCP_PSH);
}

static void test_psh_closes_after_merge_v6(void **state)
{
	close_with_flag(state, true, VNIC_TCP_PSH);
}

static void test_fin_closes_after_merge_v4(void **state)
{
	close_with_flag(state, false, VNIC_TCP_FIN);
}

static void test_fin_closes_after_merge_v6(void **state)
{
	close_with_flag(state, true, VNIC_TCP_FIN);
}

static void short_closes(void **state, bool v6)
{
	struct env *e = *state;
	struct stream s, start;

	stream_init(&s, v6);
	start = s;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS - 1)), VNIC_GRO_MERGED);
	assert_int_equal(e->nout, 1);
	assert_int_equal(e->gro.nheld, 0);
	expect_super(e, 0, &start, 3 * MSS - 1, MSS);
}

static void test_short_segment_closes_v4(void **state)
{
	short_closes(state, false);
}

static void test_short_segment_closes_v6(void **state)
{
	short_closes(state, true);
}

/* A segment that would close an aggregate at once is never held alone. */
static void test_psh_first_segment_not_held(void **state)
{
	struct env *e = *state;
	struct stream s;
	struct vnic_pkt *p;
	struct snap sn;

	stream_init(&s, false);
	s.f.tcp_flags |= VNIC_TCP_PSH;
	p = stream_seg(e, &s, MSS);
	sn = snap_take(p);
	assert_int_equal(rx(e, p), VNIC_GRO_NORMAL);
	assert_int_equal(e->nout, 1);
	assert_unchanged(e->out[0], &sn);
	assert_int_equal(e->gro.nheld, 0);
	assert_int_equal(e->gro.stats.normal, 1);
}

/* ---------------------------------------------------------------------------
 * No-merge rules, table driven: segment A is held, then B (the next segment
 * with one thing changed) arrives. Each case says what must happen to A and B.
 * ------------------------------------------------------------------------- */

enum expect {
	MERGES,	    /* control: nothing changed */
	OTHER_FLOW, /* B is held too; A stays held */
	SAME_HOLD,  /* A is completed first, B starts a new aggregate */
	SAME_PASS,  /* A is completed first, B passes through */
};

struct rule {
	const char *name;
	unsigned int fam; /* FAM_* */
	enum expect expect;
	void (*setup)(struct stream *s);   /* both segments */
	void (*flow)(struct stream *s);	   /* B, before it is built */
	uint32_t len;			   /* B's payload, if not MSS */
	bool zero_len;			   /* B has no payload */
	void (*frame)(struct vnic_pkt *p); /* B, after it is built */
};

enum { FAM_V4 = 1, FAM_V6 = 2, FAM_BOTH = 3 };

/* Flow changes: pktgen rebuilds every checksum. */
static void m_sport(struct stream *s)
{
	s->f.sport++;
}
static void m_dport(struct stream *s)
{
	s->f.dport++;
}
static void m_saddr(struct stream *s)
{
	s->f.saddr[s->f.ipv6 ? 15 : 3]++;
}
static void m_daddr(struct stream *s)
{
	s->f.daddr[s->f.ipv6 ? 15 : 3]++;
}
static void m_smac(struct stream *s)
{
	s->f.src_mac[5]++;
}
static void m_dmac(struct stream *s)
{
	s->f.dst_mac[5]++;
}
static void m_vlan_on(struct stream *s)
{
	s->f.vlan = true;
	s->f.vlan_tci = 7;
}
static void setup_vlan(struct stream *s)
{
	s->f.vlan = true;
	s->f.vlan_tci = 7;
}
static void m_vlan_tci(struct stream *s)
{
	s->f.vlan_tci = 8;
}
static void m_hash_same_bucket(struct stream *s)
{
	s->hash += VNIC_GRO_BUCKETS;
}
static void m_hash_other_bucket(struct stream *s)
{
	s->hash += 1;
}
static void m_seq_gap(struct stream *s)
{
	s->f.seq += 1;
}
static void m_seq_retransmit(struct stream *s)
{
	s->f.seq -= MSS;
}
static void m_ack(struct stream *s)
{
	s->f.ack += 1448;
}
static void m_window(struct stream *s)
{
	s->f.window -= 1;
}
static void setup_ts(struct stream *s)
{
	set_timestamp(&s->f, 1000);
}
static void m_tsval(struct stream *s)
{
	set_timestamp(&s->f, 1001);
}
static void m_opts_added(struct stream *s)
{
	set_timestamp(&s->f, 1000);
}
static void m_ttl(struct stream *s)
{
	s->f.ttl--;
}
static void m_tos(struct stream *s)
{
	s->f.tos = 0x10;
}
static void m_tos_ecn(struct stream *s)
{
	s->f.tos = 0x03;
}
static void m_df(struct stream *s)
{
	s->f.df = false;
}
static void m_id_fixed(struct stream *s)
{
	s->f.ip_id--;
}
static void m_id_skip(struct stream *s)
{
	s->f.ip_id++;
}
static void m_flow_label(struct stream *s)
{
	s->f.flow_label = 0x12345;
}
static void m_tclass(struct stream *s)
{
	s->f.tos = 0x20;
}
static void m_cwr(struct stream *s)
{
	s->f.tcp_flags |= VNIC_TCP_CWR;
}
static void m_ece(struct stream *s)
{
	s->f.tcp_flags |= VNIC_TCP_ECE;
}
static void m_syn(struct stream *s)
{
	s->f.tcp_flags |= VNIC_TCP_SYN;
}
static void m_rst(struct stream *s)
{
	s->f.tcp_flags |= VNIC_TCP_RST;
}
static void m_urg(struct stream *s)
{
	s->f.tcp_flags |= VNIC_TCP_URG;
}
static void m_psh_gap(struct stream *s)
{
	s->f.tcp_flags |= VNIC_TCP_PSH;
	s->f.seq += 1;
}

/* Frame changes, with the checksums a sender would have produced. */
static void f_ip4_options(struct vnic_pkt *p)
{
	uint8_t *ip = ip_hdr(p);
	uint32_t tail = p->len - p->l2_len - 20;

	assert_non_null(vnic_pkt_put(p, 4));
	memmove(ip + 24, ip + 20, tail);
	memset(ip + 20, 1, 4); /* four NOPs */
	ip[0] = 0x46;
	put16(ip + 2, (uint16_t)(get16(ip + 2) + 4));
	vnic_csum_ip4_set(ip, 24);
	p->l3_len = 24;
}

static void f_ip4_mf(struct vnic_pkt *p)
{
	put16(ip_hdr(p) + 6, 0x2000);
	vnic_csum_ip4_set(ip_hdr(p), 20);
}

static void f_ip4_frag_offset(struct vnic_pkt *p)
{
	put16(ip_hdr(p) + 6, 0x4000 | 185);
	vnic_csum_ip4_set(ip_hdr(p), 20);
}

static void f_ip4_bad_hdr_csum(struct vnic_pkt *p)
{
	ip_hdr(p)[10] ^= 0x55;
}

static void f_padding(struct vnic_pkt *p)
{
	memset(vnic_pkt_put(p, 6), 0, 6);
}

static void f_bad_l4_csum(struct vnic_pkt *p)
{
	p->data[p->len - 1] ^= 0x01;
}

static void f_gso_input(struct vnic_pkt *p)
{
	p->gso_type = p->l3_proto == VNIC_ETH_P_IP ? VNIC_GSO_TCPV4 : VNIC_GSO_TCPV6;
	p->gso_size = MSS;
	p->gso_segs = 1;
}

static void f_stripped_vlan(struct vnic_pkt *p)
{
	p->flags |= VNIC_PKT_F_VLAN;
	p->vlan_tci = 9;
}

/* Inserts an 8-byte extension header right after the IPv6 header. */
static void ip6_insert_ext(struct vnic_pkt *p, uint8_t type, const uint8_t body[6])
{
	uint8_t *ip = ip_hdr(p);
	uint32_t tail = p->len - p->l2_len - 40;

	assert_non_null(vnic_pkt_put(p, 8));
	memmove(ip + 48, ip + 40, tail);
	ip[40] = ip[6];
	ip[41] = 0;
	memcpy(ip + 42, body, 6);
	ip[6] = type;
	put16(ip + 4, (uint16_t)(get16(ip + 4) + 8));
	p->l3_len = 48;
}

static void f_ip6_hopopts(struct vnic_pkt *p)
{
	static const uint8_t padn[6] = {1, 4, 0, 0, 0, 0};

	ip6_insert_ext(p, VNIC_IPPROTO_HOPOPTS, padn);
}

static void f_ip6_frag_first(struct vnic_pkt *p)
{
	static const uint8_t frag[6] = {0, 1, 0, 0, 0, 42}; /* offset 0, M set */

	ip6_insert_ext(p, VNIC_IPPROTO_FRAGMENT, frag);
}

static const struct rule rules[] = {
	{"control_merges", FAM_BOTH, MERGES, .len = MSS},
	/* not the same flow */
	{"sport_differs", FAM_BOTH, OTHER_FLOW, .flow = m_sport},
	{"dport_differs", FAM_BOTH, OTHER_FLOW, .flow = m_dport},
	{"saddr_differs", FAM_BOTH, OTHER_FLOW, .flow = m_saddr},
	{"daddr_differs", FAM_BOTH, OTHER_FLOW, .flow = m_daddr},
	{"src_mac_differs", FAM_BOTH, OTHER_FLOW, .flow = m_smac},
	{"dst_mac_differs", FAM_BOTH, OTHER_FLOW, .flow = m_dmac},
	{"vlan_tag_added", FAM_BOTH, OTHER_FLOW, .flow = m_vlan_on},
	{"vlan_tci_differs", FAM_BOTH, OTHER_FLOW, .setup = setup_vlan, .flow = m_vlan_tci},
	{"stripped_vlan_differs", FAM_BOTH, OTHER_FLOW, .frame = f_stripped_vlan},
	{"hash_differs_same_bucket", FAM_BOTH, OTHER_FLOW, .flow = m_hash_same_bucket},
	{"hash_differs_other_bucket", FAM_BOTH, OTHER_FLOW, .flow = m_hash_other_bucket},
	/* same flow, not mergeable: B may start a new aggregate */
	{"seq_gap", FAM_BOTH, SAME_HOLD, .flow = m_seq_gap},
	{"seq_retransmit", FAM_BOTH, SAME_HOLD, .flow = m_seq_retransmit},
	{"ack_differs", FAM_BOTH, SAME_HOLD, .flow = m_ack},
	{"window_differs", FAM_BOTH, SAME_HOLD, .flow = m_window},
	{"timestamp_differs", FAM_BOTH, SAME_HOLD, .setup = setup_ts, .flow = m_tsval},
	{"option_length_differs", FAM_BOTH, SAME_HOLD, .flow = m_opts_added},
	{"longer_than_mss", FAM_BOTH, SAME_HOLD, .len = MSS + 1},
	{"cwr", FAM_BOTH, SAME_HOLD, .flow = m_cwr},
	{"ece_differs", FAM_BOTH, SAME_HOLD, .flow = m_ece},
	{"ttl_differs", FAM_V4, SAME_HOLD, .flow = m_ttl},
	{"tos_differs", FAM_V4, SAME_HOLD, .flow = m_tos},
	{"tos_ecn_differs", FAM_V4, SAME_HOLD, .flow = m_tos_ecn},
	{"df_differs", FAM_V4, SAME_HOLD, .flow = m_df},
	{"ip_id_fixed", FAM_V4, SAME_HOLD, .flow = m_id_fixed},
	{"ip_id_skips", FAM_V4, SAME_HOLD, .flow = m_id_skip},
	{"hop_limit_differs", FAM_V6, SAME_HOLD, .flow = m_ttl},
	{"traffic_class_differs", FAM_V6, SAME_HOLD, .flow = m_tclass},
	{"flow_label_differs", FAM_V6, SAME_HOLD, .flow = m_flow_label},
	/* same flow, B can never be held: it passes after A */
	{"syn", FAM_BOTH, SAME_PASS, .flow = m_syn},
	{"rst", FAM_BOTH, SAME_PASS, .flow = m_rst},
	{"urg", FAM_BOTH, SAME_PASS, .flow = m_urg},
	{"psh_with_seq_gap", FAM_BOTH, SAME_PASS, .flow = m_psh_gap},
	{"pure_ack", FAM_BOTH, SAME_PASS, .zero_len = true},
	{"bad_l4_csum_none", FAM_BOTH, SAME_PASS, .frame = f_bad_l4_csum},
	{"trailing_padding", FAM_BOTH, SAME_PASS, .frame = f_padding},
	{"gso_input", FAM_BOTH, SAME_PASS, .frame = f_gso_input},
	{"ip4_options", FAM_V4, SAME_PASS, .frame = f_ip4_options},
	{"ip4_more_fragments", FAM_V4, SAME_PASS, .frame = f_ip4_mf},
	{"ip4_later_fragment", FAM_V4, SAME_PASS, .frame = f_ip4_frag_offset},
	{"ip4_bad_header_csum", FAM_V4, SAME_PASS, .frame = f_ip4_bad_hdr_csum},
	{"ip6_hop_by_hop", FAM_V6, SAME_PASS, .frame = f_ip6_hopopts},
	{"ip6_fragment_header", FAM_V6, SAME_PASS, .frame = f_ip6_frag_first},
};

enum { NRULES = sizeof(rules) / sizeof(rules[0]) };

struct rule_case {
	const struct rule *rule;
	bool v6;
	char name[64];
};

static struct rule_case rule_cases[2 * NRULES];

static void test_rule(void **state)
{
	struct env *e = *state;
	const struct rule_case *rc = e->arg;
	const struct rule *r = rc->rule;
	struct stream s, b;
	struct vnic_pkt *pa, *pb;
	struct snap sa, sb;
	enum vnic_gro_result res;

	stream_init(&s, rc->v6);
	if (r->setup)
		r->setup(&s);
	pa = stream_seg(e, &s, MSS);
	sa = snap_take(pa);
	assert_int_equal(rx(e, pa), VNIC_GRO_HELD);

	b = s;
	if (r->flow)
		r->flow(&b);
	pb = stream_seg(e, &b, r->zero_len ? 0 : r->len ? r->len : MSS);
	if (r->frame)
		r->frame(pb);
	sb = snap_take(pb);
	res = rx(e, pb);

	switch (r->expect) {
	case MERGES:
		assert_int_equal(res, VNIC_GRO_MERGED);
		assert_int_equal(e->nout, 0);
		vnic_gro_flush(&e->gro);
		assert_int_equal(e->nout, 1);
		assert_int_equal(e->out[0]->gso_segs, 2);
		free(sa.bytes);
		free(sb.bytes);
		return;
	case OTHER_FLOW:
		assert_int_equal(res, VNIC_GRO_HELD);
		assert_int_equal(e->nout, 0);
		assert_int_equal(e->gro.nheld, 2);
		break;
	case SAME_HOLD:
		assert_int_equal(res, VNIC_GRO_HELD);
		assert_int_equal(e->nout, 1);
		assert_int_equal(e->gro.nheld, 1);
		break;
	case SAME_PASS:
		assert_int_equal(res, VNIC_GRO_NORMAL);
		assert_int_equal(e->nout, 2);
		assert_int_equal(e->gro.nheld, 0);
		break;
	}
	vnic_gro_flush(&e->gro);
	/* Either way both come out once, unchanged, A first. */
	assert_int_equal(e->nout, 2);
	assert_unchanged(e->out[0], &sa);
	assert_unchanged(e->out[1], &sb);
	assert_int_equal(e->gro.stats.merged, 0);
	assert_int_equal(e->gro.stats.flushed, r->expect == SAME_PASS ? 1 : 2);
	assert_int_equal(e->gro.stats.normal, r->expect == SAME_PASS ? 1 : 0);
}

/* ---------------------------------------------------------------------------
 * Size caps
 * ------------------------------------------------------------------------- */

/*
 * mss * 5 is exactly the largest aggregate: 5 segments merge, and a sixth
 * (even of one byte) completes it and starts anew.
 */
static void cap(void **state, bool v6, uint16_t mss)
{
	struct env *e = *state;
	struct stream s, start;
	struct snap last;
	struct vnic_pkt *p;

	stream_init(&s, v6);
	start = s;
	for (int i = 0; i < 5; i++)
		assert_int_equal(rx(e, stream_seg(e, &s, mss)),
				 i ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
	assert_int_equal(e->nout, 0);
	p = stream_seg(e, &s, 1);
	last = snap_take(p);
	/* Held, not passed: the one-byte segment is short, but it was not merged. */
	assert_int_equal(rx(e, p), VNIC_GRO_HELD);
	assert_int_equal(e->nout, 1);
	expect_super(e, 0, &start, 5u * mss, mss);
	if (v6)
		assert_int_equal(get16(ip_hdr(e->out[0]) + 4), 0xffff);
	else
		assert_int_equal(get16(ip_hdr(e->out[0]) + 2), 0xffff);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 2);
	assert_unchanged(e->out[1], &last);
}

static void test_cap_64k_v4(void **state)
{
	cap(state, false, (65535 - 20 - 20) / 5);
}

static void test_cap_64k_v6(void **state)
{
	cap(state, true, (65535 - 20) / 5);
}

/* One more segment than vnic_gso_segment accepts: the aggregate stops there. */
static void test_cap_segment_count(void **state)
{
	struct env *e = *state;
	struct stream s, start;
	const uint16_t mss = 8;

	stream_init(&s, false);
	start = s;
	for (int i = 0; i < VNIC_GSO_MAX_SEGS; i++)
		assert_int_equal(rx(e, stream_seg(e, &s, mss)),
				 i ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &s, mss)), VNIC_GRO_HELD);
	assert_int_equal(e->nout, 1);
	expect_super(e, 0, &start, VNIC_GSO_MAX_SEGS * mss, mss);
	assert_int_equal(e->out[0]->gso_segs, VNIC_GSO_MAX_SEGS);
}

/* ---------------------------------------------------------------------------
 * Aggregation buffers
 * ------------------------------------------------------------------------- */

/* A small receive buffer moves into agg_pool once; its own buffer is freed. */
static void test_agg_pool_move(void **state)
{
	struct env *e = *state;
	struct stream s, start;
	struct vnic_pkt *first;

	stream_init(&s, false);
	start = s;
	first = stream_seg(e, &s, MSS);
	assert_int_equal(rx(e, first), VNIC_GRO_HELD);
	assert_int_equal(e->agg.nfree, AGG_COUNT);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(e->agg.nfree, AGG_COUNT - 1);
	assert_int_equal(e->rx.nfree, RX_COUNT);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(e->agg.nfree, AGG_COUNT - 1);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	assert_ptr_equal(e->out[0]->pool, &e->agg);
	expect_super(e, 0, &start, 3 * MSS, MSS);
}

static void no_room(struct env *e)
{
	struct stream s;
	struct vnic_pkt *a, *b;
	struct snap sa, sb;

	stream_init(&s, false);
	a = stream_seg(e, &s, MSS);
	sa = snap_take(a);
	assert_int_equal(rx(e, a), VNIC_GRO_HELD);
	b = stream_seg(e, &s, MSS);
	sb = snap_take(b);
	assert_int_equal(rx(e, b), VNIC_GRO_HELD);
	assert_int_equal(e->nout, 1);
	assert_unchanged(e->out[0], &sa);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 2);
	assert_unchanged(e->out[1], &sb);
	assert_int_equal(e->gro.stats.merged, 0);
}

static void test_no_agg_pool(void **state)
{
	struct env *e = *state;

	vnic_gro_init(&e->gro, NULL, sink, e);
	no_room(e);
}

static void test_agg_pool_empty(void **state)
{
	struct env *e = *state;
	struct vnic_pkt *taken[AGG_COUNT];

	assert_int_equal(vnic_pkt_alloc_bulk(&e->agg, taken, AGG_COUNT), AGG_COUNT);
	no_room(e);
	for (int i = 0; i < AGG_COUNT; i++)
		vnic_pkt_free(taken[i]);
}

/* A buffer that can hold 64 KiB is merged into in place, no agg_pool needed. */
static void test_big_buffer_merges_in_place(void **state)
{
	struct env *e = *state;
	struct vnic_pkt_pool jumbo;
	struct stream s, start;
	struct vnic_pkt *p, *first = NULL;

	assert_int_equal(vnic_pkt_pool_init(&jumbo, 8, AGG_BUF, HEADROOM), 0);
	vnic_gro_init(&e->gro, NULL, sink, e);
	stream_init(&s, true);
	start = s;
	for (int i = 0; i < 4; i++) {
		p = vnic_pkt_alloc(&jumbo);
		assert_int_equal(vnic_pktgen_build(p, &s.f, s.off, MSS), 0);
		p->hash = s.hash;
		s.off += MSS;
		s.f.seq += MSS;
		s.f.ip_id++;
		if (!first)
			first = p;
		assert_int_equal(rx(e, p), i ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
	}
	assert_int_equal(jumbo.nfree, 8 - 1);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 1);
	assert_ptr_equal(e->out[0], first);
	expect_super(e, 0, &start, 4 * MSS, MSS);
	vnic_pkt_free(e->out[0]);
	e->nout = 0;
	assert_int_equal(jumbo.nfree, 8);
	vnic_pkt_pool_fini(&jumbo);
}

/* An agg buffer smaller than 64 KiB is used while it has room, then the flow restarts. */
static void test_small_agg_buffer_fills(void **state)
{
	struct env *e = *state;
	struct vnic_pkt_pool small;
	struct stream s, start, second;

	assert_int_equal(vnic_pkt_pool_init(&small, 8, 4096, HEADROOM), 0);
	vnic_gro_init(&e->gro, &small, sink, e);
	stream_init(&s, false);
	start = s;
	/* 54 bytes of headers + 3 * 1000 fit in 4096 - 128; a fourth does not. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(rx(e, stream_seg(e, &s, MSS)),
				 i ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
	second = s;
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
	assert_int_equal(e->nout, 1);
	assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 2);
	expect_super(e, 0, &start, 3 * MSS, MSS);
	expect_super(e, 1, &second, 2 * MSS, MSS);
	for (unsigned int i = 0; i < e->nout; i++)
		vnic_pkt_free(e->out[i]);
	e->nout = 0;
	assert_int_equal(small.nfree, 8);
	vnic_pkt_pool_fini(&small);
}

/* ---------------------------------------------------------------------------
 * The flow table
 * ------------------------------------------------------------------------- */

/* Nine flows with the same low hash bits: the ninth completes the oldest. */
static void test_bucket_full_evicts_oldest(void **state)
{
	struct env *e = *state;
	struct stream s[VNIC_GRO_MAX_HELD + 1], start0;
	struct snap held[VNIC_GRO_MAX_HELD + 1];

	for (int i = 0; i <= VNIC_GRO_MAX_HELD; i++) {
		stream_init(&s[i], i & 1);
		s[i].f.sport = (uint16_t)(1000 + i);
		s[i].hash = 3 + 8u * (uint32_t)i;
	}
	start0 = s[0];
	assert_int_equal(rx(e, stream_seg(e, &s[0], MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &s[0], MSS)), VNIC_GRO_MERGED);
	for (int i = 1; i <= VNIC_GRO_MAX_HELD; i++) {
		struct vnic_pkt *p = stream_seg(e, &s[i], MSS);

		held[i] = snap_take(p);
		assert_int_equal(rx(e, p), VNIC_GRO_HELD);
		assert_int_equal(e->nout, i == VNIC_GRO_MAX_HELD ? 1 : 0);
	}
	assert_int_equal(e->gro.stats.evicted, 1);
	assert_int_equal(e->gro.nheld, VNIC_GRO_MAX_HELD);
	assert_int_equal(e->gro.buckets[3].count, VNIC_GRO_MAX_HELD);
	expect_super(e, 0, &start0, 2 * MSS, MSS);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, VNIC_GRO_MAX_HELD + 1);
	for (int i = 1; i <= VNIC_GRO_MAX_HELD; i++)
		assert_unchanged(e->out[i], &held[i]);
	assert_int_equal(e->gro.stats.flushed, VNIC_GRO_MAX_HELD + 1);
}

/*
 * Within a bucket, flush goes by the time a packet was first held: merging
 * into the oldest keeps it oldest; a flow restarted after PSH is youngest.
 */
static void test_flush_order_oldest_first(void **state)
{
	struct env *e = *state;
	struct stream x, y, z;
	struct vnic_pkt *p;

	stream_init(&x, false);
	stream_init(&y, false);
	stream_init(&z, true);
	y.f.sport = 1;
	x.hash = 5;
	y.hash = 13;
	z.hash = 21;
	assert_int_equal(rx(e, stream_seg(e, &x, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &y, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &z, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &x, MSS)), VNIC_GRO_MERGED);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 3);
	assert_int_equal(e->out[0]->hash, 5);
	assert_int_equal(e->out[0]->gso_segs, 2);
	assert_int_equal(e->out[1]->hash, 13);
	assert_int_equal(e->out[2]->hash, 21);

	assert_int_equal(rx(e, stream_seg(e, &x, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &y, MSS)), VNIC_GRO_HELD);
	assert_int_equal(rx(e, stream_seg(e, &z, MSS)), VNIC_GRO_HELD);
	x.f.tcp_flags |= VNIC_TCP_PSH;
	assert_int_equal(rx(e, stream_seg(e, &x, MSS)), VNIC_GRO_MERGED);
	assert_int_equal(e->nout, 4);
	x.f.tcp_flags &= (uint8_t)~VNIC_TCP_PSH;
	p = stream_seg(e, &x, MSS);
	assert_int_equal(rx(e, p), VNIC_GRO_HELD);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 7);
	assert_int_equal(e->out[4]->hash, 13);
	assert_int_equal(e->out[5]->hash, 21);
	assert_ptr_equal(e->out[6], p);
}

/* Flows in different buckets are independent: each merges with its own. */
static void test_interleaved_flows_all_buckets(void **state)
{
	struct env *e = *state;
	struct stream s[2 * VNIC_GRO_BUCKETS], start[2 * VNIC_GRO_BUCKETS];

	for (int i = 0; i < 2 * VNIC_GRO_BUCKETS; i++) {
		stream_init(&s[i], i & 1);
		s[i].f.dport = (uint16_t)(2000 + i);
		s[i].hash = 0x100u * (uint32_t)i + (uint32_t)i;
		start[i] = s[i];
	}
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 2 * VNIC_GRO_BUCKETS; i++)
			assert_int_equal(rx(e, stream_seg(e, &s[i], MSS)),
					 k ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
	assert_int_equal(e->gro.nheld, 2 * VNIC_GRO_BUCKETS);
	vnic_gro_flush(&e->gro);
	assert_int_equal(e->nout, 2 * VNIC_GRO_BUCKETS);
	for (unsigned int i = 0; i < e->nout; i++) {
		int f = (int)(e->out[i]->hash & 0xff);

		expect_super(e, i, &start[f], 3 * MSS, MSS);
	}
}

/* ---------------------------------------------------------------------------
 * Pass-through
 * ------------------------------------------------------------------------- */

static void expect_pass(struct env *e, struct vnic_pkt *p)
{
	struct snap sn = snap_take(p);
	unsigned int n = e->nout;

	assert_int_equal(rx(e, p), VNIC_GRO_NORMAL);
	assert_int_equal(e->nout, n + 1);
	assert_unchanged(e->out[n], &sn);
}

/* Not TCP: passes, and a held TCP flow between the same hosts stays held. */
static void test_non_tcp_passes(void **state)
{
	struct env *e = *state;
	struct vnic_pktgen_flow u;
	struct stream s;
	struct vnic_pkt *p;

	for (int v6 = 0; v6 < 2; v6++) {
		stream_init(&s, v6);
		assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_HELD);
		vnic_pktgen_flow_init(&u, v6, VNIC_IPPROTO_UDP);
		p = vnic_pkt_alloc(&e->rx);
		assert_int_equal(vnic_pktgen_build(p, &u, 0, MSS), 0);
		p->hash = s.hash;
		expect_pass(e, p);
		assert_int_equal(e->gro.nheld, 1);
		assert_int_equal(rx(e, stream_seg(e, &s, MSS)), VNIC_GRO_MERGED);
		vnic_gro_flush(&e->gro);
	}
	assert_int_equal(e->gro.stats.normal, 2);
	assert_int_equal(e->gro.stats.merged, 2);
}

/* Garbage, truncations and non-IP frames pass untouched. */
static void test_malformed_passes(void **state)
{
	struct env *e = *state;
	struct stream s;
	struct vnic_pkt *p;
	uint64_t rng = 42;

	for (uint32_t len = 0; len < 14 + 20 + 20; len++) {
		stream_init(&s, false);
		p = stream_seg(e, &s, 100);
		p->len = len; /* cut anywhere inside the headers */
		expect_pass(e, p);
	}
	for (uint32_t len = 0; len < 14 + 40 + 20; len += 3) {
		stream_init(&s, true);
		p = stream_seg(e, &s, 100);
		p->len = len;
		expect_pass(e, p);
	}
	/* ARP-sized non-IP frame. */
	p = vnic_pkt_alloc(&e->rx);
	vnic_test_fill_random(&rng, vnic_pkt_put(p, 60), 60);
	put16(p->data + 12, VNIC_ETH_P_ARP);
	expect_pass(e, p);
	/* Three stacked VLAN tags: more than we parse. */
	p = vnic_pkt_alloc(&e->rx);
	vnic_test_fill_random(&rng, vnic_pkt_put(p, 100), 100);
	for (int i = 0; i < 3; i++)
		put16(p->data + 12 + 4 * i, VNIC_ETH_P_8021Q);
	put16(p->data + 24, VNIC_ETH_P_IP);
	expect_pass(e, p);
	/* TCP header with a data offset past the packet. */
	stream_init(&s, false);
	p = stream_seg(e, &s, 4);
	p->data[p->l2_len + 20 + 12] = 0xf0;
	expect_pass(e, p);
	/* A stated IPv4 total length longer than the frame. */
	stream_init(&s, false);
	p = stream_seg(e, &s, 100);
	p->len -= 10;
	expect_pass(e, p);
	assert_int_equal(e->gro.nheld, 0);
	assert_int_equal(e->gro.stats.normal, e->gro.stats.received);
}

/* ---------------------------------------------------------------------------
 * Property: GRO(GSO(x)) == x
 * ------------------------------------------------------------------------- */

enum {
	PROP_SEG_BUF = 9000 + VNIC_MAX_HDRS + HEADROOM,
	PROP_SEG_COUNT = 1104,
	PROP_ITERS = 400,
	PROP_MAX_FLOWS = 6,
	PROP_SEGS_PER_FLOW = 160, /* with several flows, to fit the pool */
};

static uint32_t rnd(uint64_t *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(vnic_test_rand_next(rng) % ((uint64_t)hi - lo + 1));
}

/*
 * Well-formed options with random contents (the checksum check below parses
 * segments): NOPs, timestamps and experimental option 254 of any length.
 */
static void random_options(uint64_t *rng, uint8_t *o, uint32_t len)
{
	uint32_t i = 0;

	while (i < len) {
		uint32_t left = len - i, n;

		switch (rnd(rng, 0, 2)) {
		case 0:
			o[i++] = 1;
			continue;
		case 1:
			if (left >= 10) {
				o[i] = 8;
				o[i + 1] = 10;
				vnic_test_fill_random(rng, o + i + 2, 8);
				i += 10;
				continue;
			}
			/* fall through */
		default:
			if (left < 2) {
				o[i++] = 1;
				continue;
			}
			n = rnd(rng, 2, left);
			o[i] = 254;
			o[i + 1] = (uint8_t)n;
			vnic_test_fill_random(rng, o + i + 2, n - 2);
			i += n;
		}
	}
}

/* A random superpacket flow: family, tag, addresses, options, flags. */
static void random_flow(uint64_t *rng, struct vnic_pktgen_flow *f, uint16_t sport)
{
	vnic_pktgen_flow_init(f, rnd(rng, 0, 1), VNIC_IPPROTO_TCP);
	f->vlan = rnd(rng, 0, 3) == 0;
	f->vlan_tci = (uint16_t)rnd(rng, 0, 0xffff);
	vnic_test_fill_random(rng, f->saddr, sizeof(f->saddr));
	vnic_test_fill_random(rng, f->daddr, sizeof(f->daddr));
	f->ttl = (uint8_t)rnd(rng, 1, 255);
	f->tos = (uint8_t)rnd(rng, 0, 255);
	f->flow_label = rnd(rng, 0, 0xfffff);
	f->ip_id = (uint16_t)(rnd(rng, 0, 3) ? rnd(rng, 0, 0xffff) : rnd(rng, 0xff00, 0xffff));
	f->df = rnd(rng, 0, 1);
	f->sport = sport;
	f->dport = (uint16_t)rnd(rng, 1, 0xffff);
	f->seq = (uint32_t)vnic_test_rand_next(rng);
	f->ack = (uint32_t)vnic_test_rand_next(rng);
	f->window = (uint16_t)rnd(rng, 0, 0xffff);
	f->tcp_flags = VNIC_TCP_ACK;
	if (rnd(rng, 0, 3) == 0)
		f->tcp_flags |= VNIC_TCP_PSH;
	if (rnd(rng, 0, 5) == 0)
		f->tcp_flags |= VNIC_TCP_FIN;
	if (rnd(rng, 0, 5) == 0)
		f->tcp_flags |= VNIC_TCP_CWR;
	if (rnd(rng, 0, 5) == 0)
		f->tcp_flags |= VNIC_TCP_ECE;
	f->tcp_opts_len = rnd(rng, 0, 1) ? (uint8_t)(4 * rnd(rng, 1, 10)) : 0;
	random_options(rng, f->tcp_opts, f->tcp_opts_len);
	f->seed = (uint32_t)vnic_test_rand_next(rng);
}

/* Payload and MSS: small, typical and full-size superpackets, tiny and jumbo MSS. */
static void random_sizes(uint64_t *rng, const struct vnic_pktgen_flow *f, uint32_t max_segs,
			 uint32_t *payload, uint16_t *mss)
{
	uint32_t l4_hdr = vnic_pktgen_hdr_len(f) - (f->vlan ? 18 : 14) - (f->ipv6 ? 40 : 20);
	uint32_t max = f->ipv6 ? 0xffff - l4_hdr : 0xffff - 20 - l4_hdr;
	uint32_t lo;

	switch (rnd(rng, 0, 3)) {
	case 0:
		*payload = rnd(rng, 1, 3000);
		break;
	case 1:
		*payload = max - rnd(rng, 0, 2);
		break;
	default:
		*payload = rnd(rng, 1, max);
		break;
	}
	lo = (*payload + max_segs - 1) / max_segs;
	if (lo < 1)
		lo = 1;
	if (rnd(rng, 0, 3) == 0)
		*mss = (uint16_t)rnd(rng, lo, lo + 64 < 9000 ? lo + 64 : 9000);
	else
		*mss = (uint16_t)rnd(rng, lo > 536 ? lo : 536, 9000);
	/* Every segment a whole MSS sometimes, so the aggregate ends at flush. */
	if (rnd(rng, 0, 4) == 0 && *payload >= *mss)
		*payload -= *payload % *mss;
}

/* A segment's TCP checksum, checked by the parser and checksum code, not GRO. */
static void assert_seg_csum_ok(struct vnic_pkt_pool *scratch_pool, const struct vnic_pkt *seg)
{
	struct vnic_pkt *c = vnic_pkt_alloc(scratch_pool);
	struct vnic_hdrs h;

	assert_non_null(c);
	assert_int_equal(vnic_pkt_copy_in(c, seg->data, seg->len), 0);
	c->ip_summed = seg->ip_summed;
	c->csum_start = seg->csum_start;
	c->csum_offset = seg->csum_offset;
	if (c->ip_summed == VNIC_CSUM_PARTIAL)
		assert_int_equal(vnic_csum_help(c), 0);
	assert_int_equal(vnic_parse_frame(c->data, c->len, &h), VNIC_PARSE_OK);
	assert_true(vnic_csum_l4_ok(c->data, &h));
	if (h.l3_proto == VNIC_ETH_P_IP)
		assert_true(vnic_csum_ip4_ok(c->data + h.l3_off, 20));
	vnic_pkt_free(c);
}

struct prop_flow {
	struct vnic_pkt *x; /* the superpacket */
	struct vnic_pkt *segs[VNIC_GSO_MAX_SEGS];
	struct snap snaps[VNIC_GSO_MAX_SEGS];
	int n;
	int next; /* next segment to receive */
	bool urg;
};

static void prop_flow_make(struct env *e, struct vnic_pkt_pool *segp, uint64_t *rng,
			   struct prop_flow *pf, uint16_t sport, uint32_t max_segs, uint32_t hash)
{
	struct vnic_pktgen_flow f;
	uint32_t payload;
	uint16_t mss;
	unsigned int flags = rnd(rng, 0, 1) ? VNIC_GSO_F_CSUM_PARTIAL : VNIC_GSO_F_CSUM_COMPLETE;

	random_flow(rng, &f, sport);
	/* URG segments are never aggregated: the property then is "all pass as is". */
	pf->urg = rnd(rng, 0, 15) == 0;
	if (pf->urg)
		f.tcp_flags |= VNIC_TCP_URG;
	random_sizes(rng, &f, max_segs, &payload, &mss);
	pf->x = vnic_pkt_alloc(&e->agg);
	assert_non_null(pf->x);
	assert_int_equal(vnic_pktgen_build_gso(pf->x, &f, rnd(rng, 0, 1000), payload, mss), 0);
	pf->x->hash = hash;
	pf->n = (int)((payload + mss - 1) / mss);
	assert_int_equal(pf->x->gso_segs, pf->n);
	assert_int_equal(vnic_pkt_alloc_bulk(segp, pf->segs, (unsigned int)pf->n),
			 (unsigned int)pf->n);
	assert_int_equal(vnic_gso_segment(pf->x, pf->segs, (unsigned int)pf->n, flags), pf->n);
	for (int i = 0; i < pf->n; i++) {
		assert_int_equal(pf->segs[i]->hash, pf->x->hash);
		assert_seg_csum_ok(&e->agg, pf->segs[i]);
		pf->snaps[i] = snap_take(pf->segs[i]);
	}
	pf->next = 0;
}

/*
 * The outputs that belong to pf (matched by hash, unique per round) must be
 * exactly: x itself when it had more than one segment, or its only segment
 * unchanged, or, with URG, every segment unchanged and in order.
 */
static void prop_flow_check(struct env *e, struct prop_flow *pf)
{
	int seen = 0;

	for (unsigned int i = 0; i < e->nout; i++) {
		struct vnic_pkt *o = e->out[i];

		if (o->hash != pf->x->hash)
			continue;
		if (pf->n == 1 || pf->urg) {
			assert_true(seen < pf->n);
			assert_ptr_equal(o, pf->segs[seen]);
			assert_unchanged(o, &pf->snaps[seen]);
		} else {
			assert_int_equal(seen, 0);
			assert_same_super(o, pf->x);
		}
		seen++;
	}
	assert_int_equal(seen, pf->n == 1 || pf->urg ? pf->n : 1);
	for (int i = 0; i < pf->n; i++)
		free(pf->snaps[i].bytes);
}

static void property_round(struct env *e, struct vnic_pkt_pool *segp, uint64_t *rng,
			   struct prop_flow *pfs, int nflows)
{
	int left = 0;

	for (int k = 0; k < nflows; k++) {
		uint32_t hash;
		bool dup;

		/* Random buckets, sometimes shared; distinct hashes name the flows. */
		do {
			hash = (uint32_t)vnic_test_rand_next(rng);
			dup = false;
			for (int j = 0; j < k; j++)
				dup |= pfs[j].x->hash == hash;
		} while (dup);
		prop_flow_make(e, segp, rng, &pfs[k], (uint16_t)(10000 + k),
			       nflows > 1 ? PROP_SEGS_PER_FLOW : VNIC_GSO_MAX_SEGS, hash);
		left += pfs[k].n;
	}
	/* Interleave the flows' segments at random, each flow in order. */
	while (left) {
		struct prop_flow *pf = &pfs[rnd(rng, 0, (uint32_t)nflows - 1)];
		enum vnic_gro_result r;

		if (pf->next == pf->n)
			continue;
		r = rx(e, pf->segs[pf->next]);
		if (pf->urg || (pf->n == 1 && pf->x->data[pf->x->csum_start + 13] &
						      (VNIC_TCP_PSH | VNIC_TCP_FIN)))
			assert_int_equal(r, VNIC_GRO_NORMAL);
		else
			assert_int_equal(r, pf->next ? VNIC_GRO_MERGED : VNIC_GRO_HELD);
		pf->next++;
		left--;
	}
	vnic_gro_flush(&e->gro);
	for (int k = 0; k < nflows; k++) {
		prop_flow_check(e, &pfs[k]);
		vnic_pkt_free(pfs[k].x);
	}
	for (unsigned int i = 0; i < e->nout; i++)
		vnic_pkt_free(e->out[i]);
	e->nout = 0;
	assert_int_equal(segp->nfree, segp->count);
}

static void test_property_gro_inverts_gso(void **state)
{
	struct env *e = *state;
	struct vnic_pkt_pool segp;
	struct prop_flow *pfs = calloc(PROP_MAX_FLOWS, sizeof(*pfs));
	uint64_t rng = 0x67726f5f70726f70ULL;
	unsigned int multi = 0, single = 0, urg = 0;

	assert_non_null(pfs);
	assert_int_equal(vnic_pkt_pool_init(&segp, PROP_SEG_COUNT, PROP_SEG_BUF, HEADROOM), 0);
	for (int it = 0; it < PROP_ITERS; it++) {
		int nflows = it % 2 ? (int)rnd(&rng, 2, PROP_MAX_FLOWS) : 1;

		property_round(e, &segp, &rng, pfs, nflows);
		for (int k = 0; k < nflows; k++) {
			urg += pfs[k].urg;
			single += !pfs[k].urg && pfs[k].n == 1;
			multi += !pfs[k].urg && pfs[k].n > 1;
		}
	}
	/* Each shape of the property was exercised, not just the common one. */
	assert_true(multi > PROP_ITERS);
	assert_true(single > 10);
	assert_true(urg > 10);
	assert_int_equal(e->gro.nheld, 0);
	vnic_pkt_pool_fini(&segp);
	free(pfs);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test_setup_teardown(test_merge_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_frags_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_frags_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frags_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_vlan_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_vlan_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_equal_timestamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_ip_id_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_cwr_on_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_trusts_unnecessary_and_complete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_psh_closes_after_merge_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_psh_closes_after_merge_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fin_closes_after_merge_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fin_closes_after_merge_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_segment_closes_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_segment_closes_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_psh_first_segment_not_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_64k_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_64k_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_segment_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agg_pool_move, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_agg_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agg_pool_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_big_buffer_merges_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_agg_buffer_fills, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bucket_full_evicts_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_order_oldest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interleaved_flows_all_buckets, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_non_tcp_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_property_gro_inverts_gso, setup, teardown),
	};
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	static struct CMUnitTest all[NFIXED + 2 * NRULES];
	unsigned int n = 0;

	for (unsigned int i = 0; i < NFIXED; i++)
		all[n++] = fixed[i];
	for (unsigned int i = 0, c = 0; i < NRULES; i++) {
		for (unsigned int v6 = 0; v6 < 2; v6++) {
			struct rule_case *rc = &rule_cases[c];

			if (!(rules[i].fam & (v6 ? FAM_V6 : FAM_V4)))
				continue;
			rc->rule = &rules[i];
			rc->v6 = v6;
			snprintf(rc->name, sizeof(rc->name), "test_rule_%s_%s", v6 ? "v6" : "v4",
				 rules[i].name);
			all[n++] = (struct CMUnitTest){
				.name = rc->name,
				.test_func = test_rule,
				.setup_func = setup,
				.teardown_func = teardown,
				.initial_state = rc,
			};
			c++;
		}
	}
	return _cmocka_run_group_tests("gro", all, n, NULL, NULL);
}
