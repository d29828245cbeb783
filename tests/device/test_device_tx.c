// SPDX-License-Identifier: MIT
/*
 * The device's tx engine against a hostile test driver (harness.c): every
 * descriptor check answered with its rc and counter, the engine still
 * sending a good packet byte-exact after each; plain, checksum-offload and
 * LSO packets arriving on the far end of a real cable with correct
 * checksums; completion batching; the "headers needed" mask; backpressure
 * from the driver's completion ring and from the wire; link down.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "pktgen.h"

enum {
	WIRE_MAX = 128,
	WIRE_BUF = 2048,
	GOOD_OFF = 200 << 10, /* the "still works" packet lives here in the tx LTB */
	BASE_CORR = 0x40000000,
};

static uint8_t wire_mem[WIRE_MAX][WIRE_BUF];
static uint8_t *wire_bufs[WIRE_MAX];
static uint32_t wire_lens[WIRE_MAX];
static uint8_t expect[H_MAX_FRAME];

static struct h_env env;

static void wire_init(void)
{
	unsigned int i;

	for (i = 0; i < WIRE_MAX; i++)
		wire_bufs[i] = wire_mem[i];
}

static unsigned int wire_take(struct h_env *e)
{
	return h_wire_take(e, wire_bufs, wire_lens, WIRE_MAX);
}

static int setup_cfg(void **state, const struct vnic_dev_config *cfg,
		     const struct vnic_cable_cfg *ccfg, uint32_t txcomp_entries)
{
	wire_init();
	h_create(&env, cfg, ccfg);
	if (txcomp_entries)
		env.txcomp_entries = txcomp_entries;
	h_bringup(&env, 1, 1);
	*state = &env;
	return 0;
}

static int setup(void **state)
{
	return setup_cfg(state, NULL, NULL, 0);
}

static int teardown(void **state)
{
	h_destroy(*state);
	return 0;
}

/* A pktgen frame written at tx LTB offset off (and into exp); returns its length. */
static uint32_t put_frame(struct h_env *e, uint32_t off, bool v6, uint8_t proto, uint32_t payload,
			  uint32_t seed, uint8_t *exp)
{
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = h_pkt(e);
	uint32_t len;

	vnic_pktgen_flow_init(&f, v6, proto);
	f.seed = seed;
	assert_int_equal(vnic_pktgen_build(p, &f, 0, payload), 0);
	len = p->len;
	memcpy(e->tx_ltb + off, p->data, len);
	if (exp)
		memcpy(exp, p->data, len);
	vnic_pkt_free(p);
	return len;
}

/* The L4 checksum field of a pktgen frame without VLAN. */
static uint32_t csum_field(bool v6, uint8_t proto)
{
	return VNIC_ETH_HLEN + (v6 ? 40 : 20) + (proto == VNIC_IPPROTO_TCP ? 16 : 6);
}

/* Sends, runs, and expects exactly one completion (corr, rc). */
static void expect_one_comp(struct h_env *e, uint32_t corr, uint16_t rc)
{
	uint32_t c[8];
	uint16_t r[8];

	assert_true(h_run(e));
	assert_int_equal(h_tx_comps(e, 0, c, r, 8), 1);
	assert_int_equal(c[0], corr);
	assert_int_equal(r[0], rc);
}

/* The engine still works: a plain packet goes out byte-exact and is completed. */
static void good_packet(struct h_env *e, uint32_t seed)
{
	union vnic_subcrq_entry d;
	uint32_t len =
		put_frame(e, GOOD_OFF, false, VNIC_IPPROTO_UDP, 100 + seed % 50, seed, expect);

	h_tx_desc(e, &d, 0x600d0000 + seed, GOOD_OFF, len, VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_UDP, 0);
	assert_int_equal(h_tx_send(e, 0, &d, 1), VNIC_H_SUCCESS);
	expect_one_comp(e, 0x600d0000 + seed, VNIC_RC_SUCCESS);
	assert_int_equal(wire_take(e), 1);
	assert_int_equal(wire_lens[0], len);
	assert_memory_equal(wire_bufs[0], expect, len);
}

/* --- plain and checksum offload ------------------------------------------------------ */

static void test_plain_direct(void **state)
{
	struct h_env *e = *state;
	union vnic_subcrq_entry d;
	uint32_t len = put_frame(e, 4096, false, VNIC_IPPROTO_TCP, 1000, 7, expect);

	/* the correlator is echoed as it came, TSO bit and all */
	h_tx_desc(e, &d, VNIC_TX_CORR_TSO | 5, 4096, len, VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_TCP, 0);
	assert_int_equal(h_tx_send(e, 0, &d, 1), VNIC_H_SUCCESS);
	expect_one_comp(e, VNIC_TX_CORR_TSO | 5, VNIC_RC_SUCCESS);
	assert_int_equal(wire_take(e), 1);
	assert_int_equal(wire_lens[0], len);
	assert_memory_equal(wire_bufs[0], expect, len);
	assert_int_equal(h_ctr(e, "tx0_packets"), 1);
	assert_int_equal(h_ctr(e, "tx0_bytes"), len);
	assert_int_equal(h_ctr(e, "tx0_csum_inserted"), 0);
	/* a full-MTU frame and a VLAN-tagged one of MTU + 18 */
	good_packet(e, 1);
	{
		struct vnic_pktgen_flow f;
		struct vnic_pkt *p = h_pkt(e);

		vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_UDP);
		f.vlan = true;
		assert_int_equal(vnic_pktgen_build(p, &f, 0, 1500 - 28), 0);
		assert_int_equal(p->len, 1518);
		memcpy(e->tx_ltb, p->data, p->len);
		h_tx_desc(e, &d, 9, 0, p->len, 0, 0);
		assert_int_equal(h_tx_send(e, 0, &d, 1), VNIC_H_SUCCESS);
		expect_one_comp(e, 9, VNIC_RC_SUCCESS);
		assert_int_equal(wire_take(e), 1);
		assert_memory_equal(wire_bufs[0], p->data, p->len);
		vnic_pkt_free(p);
	}
}

/*
 * Checksum offload with the header descriptors the cautious mask asks for:
 * the field the driver left (garbage here: tcp_pseudosum_req is 0) is
 * replaced by the right checksum, computed on the device's own copy.
 */
static void csum_send(struct h_env *e, bool v6, uint8_t proto, uint8_t hdr_flag, uint32_t corr,
		      uint16_t rc)
{
	union vnic_subcrq_entry ents[1 + 1 + VNIC_MAX_HDR_EXT_DESCS];
	uint32_t len = put_frame(e, 8192, v6, proto, 333, corr, expect);
	uint8_t l3 = v6 ? 40 : 20, l4 = proto == VNIC_IPPROTO_TCP ? 20 : 8;
	uint8_t flags = VNIC_TX_CHKSUM_OFFLOAD | (v6 ? VNIC_TX_PROT_IPV6 : VNIC_TX_PROT_IPV4) |
			(proto == VNIC_IPPROTO_TCP ? VNIC_TX_PROT_TCP : VNIC_TX_PROT_UDP);
	unsigned int nh;

	e->tx_ltb[8192 + csum_field(v6, proto)] ^= 0x5a;
	e->tx_ltb[8192 + csum_field(v6, proto) + 1] ^= 0xa5;
	h_tx_desc(e, &ents[0], corr, 8192, len, flags, 0);
	nh = h_hdr_descs(&ents[1], e->tx_ltb + 8192, VNIC_ETH_HLEN, l3, l4, hdr_flag);
	ents[0].tx.n_crq_elem = (uint8_t)(1 + nh);
	assert_int_equal(h_tx_send(e, 0, ents, 1 + nh), VNIC_H_SUCCESS);
	expect_one_comp(e, corr, rc);
	if (rc != VNIC_RC_SUCCESS) {
		assert_int_equal(wire_take(e), 0);
		return;
	}
	assert_int_equal(wire_take(e), 1);
	assert_int_equal(wire_lens[0], len);
	assert_memory_equal(wire_bufs[0], expect, len);
}

static void csum_case(struct h_env *e, bool v6, uint8_t proto, uint8_t hdr_flag, uint32_t corr)
{
	csum_send(e, v6, proto, hdr_flag, corr, VNIC_RC_SUCCESS);
}

static void test_csum_offload(void **state)
{
	struct h_env *e = *state;

	csum_case(e, false, VNIC_IPPROTO_TCP, VNIC_HDR_DESC_L3, 1);
	csum_case(e, true, VNIC_IPPROTO_UDP, VNIC_HDR_DESC_L3, 2);
	csum_case(e, true, VNIC_IPPROTO_TCP, VNIC_HDR_DESC_L3, 3);
	csum_case(e, false, VNIC_IPPROTO_UDP, VNIC_HDR_DESC_L3, 4);
	/* all three layers: 14 + 40 + 20 = 74 bytes, a header descriptor and two extensions */
	csum_case(e, true, VNIC_IPPROTO_TCP, VNIC_HDR_DESC_L2 | VNIC_HDR_DESC_L3 | VNIC_HDR_DESC_L4,
		  5);
	assert_int_equal(h_ctr(e, "tx0_csum_inserted"), 5);
	/* L3 of v4 fits one descriptor, of v6 (40 bytes) needs an extension; 74 bytes: three */
	assert_int_equal(h_ctr(e, "tx0_hdr_descs"), 1 + 2 + 2 + 1 + 3);
	assert_int_equal(h_ctr(e, "tx0_csum_missing_hdrs"), 0);
}

/* --- every hostile descriptor --------------------------------------------------------- */

struct bad_case {
	const char *name;
	void (*mutate)(struct h_env *e, union vnic_subcrq_entry *ents, unsigned int *n);
	int rc; /* -1: no completion */
	const char *counter;
};

static void m_bad_type(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.type = 0x55;
}

static void m_n_sge(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.n_sge = 0;
}

static void m_n_elem_0(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.n_crq_elem = 0;
}

static void m_n_elem_11(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.n_crq_elem = VNIC_MAX_TX_ELEMS + 1;
}

/* the header descriptor says its 20 bytes fit in it, the tx descriptor counts two */
static void m_n_elem_vs_len(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.n_crq_elem = 3;
}

/* 40 header bytes: a descriptor and an extension, consistently counted; the extension not sent */
static void m_n_elem_more(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.n_crq_elem = 3;
	t[1].hdr.flag = VNIC_HDR_DESC_L3 | VNIC_HDR_DESC_L4;
	t[1].hdr.l4_len = 20;
	t[1].hdr.len = 40;
}

static void m_direct_with_count(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)t;
	*n = 1; /* direct: it cannot carry the header descriptor it counts */
}

static void m_hdr_type(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[1].generic.type = VNIC_HDR_EXT_DESC;
}

static void m_hdr_len_sum(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[1].hdr.len = 21;
}

static void m_hdr_flag(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[1].hdr.flag |= 0x10;
}

static void m_hdr_len_zero(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[1].hdr.len = 0;
	vnic_be16_put(&t[1].hdr.l3_len, 0);
}

/* sum and descriptor count consistent, but the frame's IPv4 header is 20 bytes */
static void m_hdr_l3_wrong(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[1].hdr.len = 24;
	vnic_be16_put(&t[1].hdr.l3_len, 24);
}

static void set_map(union vnic_subcrq_entry *t, uint16_t id)
{
	vnic_be16_put(&t[0].tx.dma_reg, id);
}

static void m_map_7(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	set_map(t, 7);
}

static void m_map_0(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	set_map(t, 0);
}

static void m_map_300(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	set_map(t, 300);
}

static void m_ioba_below(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)n;
	vnic_be64_put(&t[0].tx.ioba, e->tx_ltb_ioba - 64);
}

static void m_ioba_end(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)n;
	vnic_be64_put(&t[0].tx.ioba, e->tx_ltb_ioba + H_TX_LTB_SIZE);
}

/* the driver's memory, mapped in the hv, but not this long-term buffer */
static void m_ioba_other(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)n;
	vnic_be64_put(&t[0].tx.ioba, e->other_ioba);
}

static void m_ioba_huge(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	vnic_be64_put(&t[0].tx.ioba, ~0ull - 8);
}

static void m_len_13(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	vnic_be32_put(&t[0].tx.sge_len, 13);
}

static void m_len_1515(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	vnic_be32_put(&t[0].tx.sge_len, 1515); /* untagged: 1514 at most */
}

static void m_len_1519(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	vnic_be32_put(&t[0].tx.sge_len, 1519);
}

static void m_len_huge(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	vnic_be32_put(&t[0].tx.sge_len, 0xffffffffu);
}

static void m_straddle(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)n;
	vnic_be64_put(&t[0].tx.ioba, e->tx_ltb_ioba + H_TX_LTB_SIZE - 30);
}

static void set_flags(union vnic_subcrq_entry *t, uint8_t f1)
{
	t[0].tx.flags1 = f1;
}

static void m_lso_no_cso(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	set_flags(t, VNIC_TX_COMP_NEEDED | VNIC_TX_LSO | VNIC_TX_PROT_TCP | VNIC_TX_PROT_IPV4);
	vnic_be16_put(&t[0].tx.mss, 1000);
}

static void m_v4_v6(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 |= VNIC_TX_PROT_IPV6;
}

static void m_tcp_udp(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 |= VNIC_TX_PROT_UDP;
}

static void m_cso_no_l4(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 &= (uint8_t)~VNIC_TX_PROT_TCP;
}

static void m_cso_no_l3(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 &= (uint8_t)~VNIC_TX_PROT_IPV4;
}

static void m_no_comp_needed(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 &= (uint8_t)~VNIC_TX_COMP_NEEDED;
}

static void m_flags2(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags2 = 0x01;
}

static void m_vlan_insert(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags2 = VNIC_TX_VLAN_INSERT;
	vnic_be16_put(&t[0].tx.vlan_id, 5);
}

static void m_vlan_present(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 |= VNIC_TX_VLAN_PRESENT;
}

static void m_mss_small(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 |= VNIC_TX_LSO;
	vnic_be16_put(&t[0].tx.mss, 10);
}

/* 20 + 20 + 1461 > 1500: segments would not fit the MTU */
static void m_mss_big(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 |= VNIC_TX_LSO;
	vnic_be16_put(&t[0].tx.mss, 1461);
}

static void m_says_v6(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 = (uint8_t)((t[0].tx.flags1 & ~VNIC_TX_PROT_IPV4) | VNIC_TX_PROT_IPV6);
}

static void m_says_udp(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e, (void)n;
	t[0].tx.flags1 = (uint8_t)((t[0].tx.flags1 & ~VNIC_TX_PROT_TCP) | VNIC_TX_PROT_UDP);
}

/* the frame is not IP at all */
static void m_not_ip(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)t, (void)n;
	e->tx_ltb[12] = 0x88;
	e->tx_ltb[13] = 0xb5;
}

static void m_orphan_hdr(struct h_env *e, union vnic_subcrq_entry *t, unsigned int *n)
{
	(void)e;
	t[0] = t[1];
	*n = 1;
}

/* clang-format off */
static const struct bad_case bad_cases[] = {
	{ "bad type", m_bad_type, VNIC_RC_PARAMETER, "tx0_drop_bad_type" },
	{ "n_sge 0", m_n_sge, VNIC_RC_PARAMETER, "tx0_drop_bad_n_sge" },
	{ "n_crq_elem 0", m_n_elem_0, VNIC_RC_PARAMETER, "tx0_drop_bad_n_elem" },
	{ "n_crq_elem 11", m_n_elem_11, VNIC_RC_PARAMETER, "tx0_drop_bad_n_elem" },
	{ "counts 2 header descs, header says 1", m_n_elem_vs_len, VNIC_RC_PARAMETER,
	  "tx0_drop_bad_hdr_desc" },
	{ "counts 2 header descs, sends 1", m_n_elem_more, VNIC_RC_PARAMETER,
	  "tx0_drop_hdrs_incomplete" },
	{ "direct send counting a header desc", m_direct_with_count, VNIC_RC_PARAMETER,
	  "tx0_drop_hdrs_incomplete" },
	{ "extension first", m_hdr_type, VNIC_RC_PARAMETER, "tx0_drop_bad_hdr_desc" },
	{ "header len != layer sum", m_hdr_len_sum, VNIC_RC_PARAMETER, "tx0_drop_bad_hdr_desc" },
	{ "header flag bit 0x10", m_hdr_flag, VNIC_RC_PARAMETER, "tx0_drop_bad_hdr_desc" },
	{ "header len 0", m_hdr_len_zero, VNIC_RC_PARAMETER, "tx0_drop_bad_hdr_desc" },
	{ "header l3 len not the frame's", m_hdr_l3_wrong, VNIC_RC_PARAMETER,
	  "tx0_drop_hdr_len_mismatch" },
	{ "map id 7 not mapped", m_map_7, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_map_id" },
	{ "map id 0", m_map_0, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_map_id" },
	{ "map id 300", m_map_300, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_map_id" },
	{ "ioba below the LTB", m_ioba_below, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_ioba" },
	{ "ioba at the LTB's end", m_ioba_end, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_ioba" },
	{ "ioba in another mapping", m_ioba_other, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_ioba" },
	{ "ioba 2^64 - 9", m_ioba_huge, VNIC_RC_INVALIDIOBA, "tx0_drop_bad_ioba" },
	{ "len 13", m_len_13, VNIC_RC_INVALIDLENGTH, "tx0_drop_bad_len" },
	{ "len 1515 untagged", m_len_1515, VNIC_RC_INVALIDLENGTH, "tx0_drop_bad_len" },
	{ "len 1519", m_len_1519, VNIC_RC_INVALIDLENGTH, "tx0_drop_bad_len" },
	{ "len 2^32 - 1", m_len_huge, VNIC_RC_INVALIDLENGTH, "tx0_drop_bad_len" },
	{ "ioba + len past the LTB", m_straddle, VNIC_RC_INVALIDLENGTH, "tx0_drop_len_past_ltb" },
	{ "LSO without CSO", m_lso_no_cso, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "IPV4 and IPV6", m_v4_v6, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "TCP and UDP", m_tcp_udp, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "CSO without L4", m_cso_no_l4, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "CSO without L3", m_cso_no_l3, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "no COMP_NEEDED", m_no_comp_needed, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "flags2 reserved bit", m_flags2, VNIC_RC_PARAMETER, "tx0_drop_bad_flags" },
	{ "VLAN insertion", m_vlan_insert, VNIC_RC_UNSUPPORTEDOPTION, "tx0_drop_unsupported" },
	{ "VLAN_PRESENT", m_vlan_present, VNIC_RC_UNSUPPORTEDOPTION, "tx0_drop_unsupported" },
	{ "mss 10", m_mss_small, VNIC_RC_PARAMETER, "tx0_drop_bad_mss" },
	{ "mss past the MTU", m_mss_big, VNIC_RC_PARAMETER, "tx0_drop_bad_mss" },
	{ "flags IPv6, frame IPv4", m_says_v6, VNIC_RC_PARAMETER, "tx0_drop_bad_headers" },
	{ "flags UDP, frame TCP", m_says_udp, VNIC_RC_PARAMETER, "tx0_drop_bad_headers" },
	{ "CSO on a non-IP frame", m_not_ip, VNIC_RC_PARAMETER, "tx0_drop_bad_headers" },
	{ "header descriptor alone", m_orphan_hdr, -1, "tx0_orphan_hdr_descs" },
};
/* clang-format on */

static void test_hostile_descriptors(void **state)
{
	struct h_env *e = *state;
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		union vnic_subcrq_entry ents[4];
		uint32_t corr = BASE_CORR + (uint32_t)i, len, got_c[8];
		uint16_t got_rc[8];
		uint64_t before = h_ctr(e, c->counter), sent = h_ctr(e, "tx0_packets");
		unsigned int n = 2;

		print_message("case %zu: %s\n", i, c->name);
		/* the base: a good CSO TCPv4 packet with the L3 header the mask asks for */
		len = put_frame(e, 0, false, VNIC_IPPROTO_TCP, 200, 3, NULL);
		h_tx_desc(e, &ents[0], corr, 0, len,
			  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_TCP, 0);
		assert_int_equal(
			h_hdr_descs(&ents[1], e->tx_ltb, VNIC_ETH_HLEN, 20, 20, VNIC_HDR_DESC_L3),
			1);
		ents[0].tx.n_crq_elem = 2;
		c->mutate(e, ents, &n);
		assert_int_equal(h_tx_send(e, 0, ents, n), VNIC_H_SUCCESS);
		assert_true(h_run(e));
		if (c->rc < 0) {
			assert_int_equal(h_tx_comps(e, 0, got_c, got_rc, 8), 0);
		} else {
			assert_int_equal(h_tx_comps(e, 0, got_c, got_rc, 8), 1);
			assert_int_equal(got_c[0], corr);
			assert_int_equal(got_rc[0], c->rc);
		}
		assert_int_equal(h_ctr(e, c->counter), before + 1);
		assert_int_equal(h_ctr(e, "tx0_packets"), sent);
		/* nothing of it reached the wire */
		assert_int_equal(wire_take(e), 0);
		good_packet(e, (uint32_t)i);
	}
	/* a refusal takes the header descriptors it counted, or they are orphans later */
	assert_int_equal(h_ctr(e, "tx0_orphan_hdr_descs"), 3);
	assert_int_equal(h_ctr(e, "tx0_hdrs_waits"), 2);
}

/* Offloads the driver did not turn on are refused, though the device offers them. */
static void test_offload_not_enabled(void **state)
{
	struct h_env *e = *state;
	struct vnic_ip_offload ol;
	union vnic_subcrq_entry ents[2];
	uint32_t len;

	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	memset(&ol, 0, sizeof(ol));
	vnic_be32_put(&ol.len, sizeof(ol));
	vnic_be32_put(&ol.version, VNIC_IP_OFFLOAD_VERSION);
	ol.tcp_ipv4_chksum = 1;
	assert_int_equal(h_control_offload(e, &ol), VNIC_RC_SUCCESS);
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_SUCCESS);

	len = put_frame(e, 0, false, VNIC_IPPROTO_UDP, 100, 1, NULL);
	h_tx_desc(e, &ents[0], 1, 0, len,
		  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_UDP, 0);
	h_hdr_descs(&ents[1], e->tx_ltb, VNIC_ETH_HLEN, 20, 8, VNIC_HDR_DESC_L3);
	ents[0].tx.n_crq_elem = 2;
	assert_int_equal(h_tx_send(e, 0, ents, 2), VNIC_H_SUCCESS);
	expect_one_comp(e, 1, VNIC_RC_UNSUPPORTEDOPTION);

	len = put_frame(e, 0, false, VNIC_IPPROTO_TCP, 3000, 1, NULL);
	h_tx_desc(e, &ents[0], 2, 0, len,
		  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_LSO | VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_TCP,
		  1000);
	h_hdr_descs(&ents[1], e->tx_ltb, VNIC_ETH_HLEN, 20, 20, VNIC_HDR_DESC_L3);
	ents[0].tx.n_crq_elem = 2;
	assert_int_equal(h_tx_send(e, 0, ents, 2), VNIC_H_SUCCESS);
	expect_one_comp(e, 2, VNIC_RC_UNSUPPORTEDOPTION);
	assert_int_equal(h_ctr(e, "tx0_drop_unsupported"), 2);
	csum_case(e, false, VNIC_IPPROTO_TCP, VNIC_HDR_DESC_L3, 3);
}

/* --- LSO ------------------------------------------------------------------------------ */

/*
 * A superpacket of payload bytes at LTB offset 0, sent with its header
 * descriptor; checks every segment that comes out of the wire.
 */
static void lso_case(struct h_env *e, bool v6, uint8_t proto, uint32_t payload, uint16_t mss,
		     bool with_hdrs)
{
	union vnic_subcrq_entry ents[1 + 1 + VNIC_MAX_HDR_EXT_DESCS];
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = h_pkt(e);
	uint32_t l3 = v6 ? 40 : 20, l4 = proto == VNIC_IPPROTO_TCP ? 20 : 8, len;
	unsigned int segs = (payload + mss - 1) / mss, i, n;
	uint64_t lso0 = h_ctr(e, "tx0_lso_packets"), seg0 = h_ctr(e, "tx0_lso_segments");

	vnic_pktgen_flow_init(&f, v6, proto);
	f.seed = 77;
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, payload, mss), 0);
	len = p->len;
	memcpy(e->tx_ltb, p->data, len);
	h_tx_desc(e, &ents[0], 0x80000001u, 0, len,
		  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_LSO |
			  (v6 ? VNIC_TX_PROT_IPV6 : VNIC_TX_PROT_IPV4) |
			  (proto == VNIC_IPPROTO_TCP ? VNIC_TX_PROT_TCP : VNIC_TX_PROT_UDP),
		  mss);
	n = 1;
	if (with_hdrs) {
		n = 1 + h_hdr_descs(&ents[1], e->tx_ltb, VNIC_ETH_HLEN, (uint16_t)l3, (uint8_t)l4,
				    VNIC_HDR_DESC_L3);
		ents[0].tx.n_crq_elem = (uint8_t)n;
	}
	assert_int_equal(h_tx_send(e, 0, ents, n), VNIC_H_SUCCESS);
	expect_one_comp(e, 0x80000001u, VNIC_RC_SUCCESS);
	assert_int_equal(wire_take(e), segs);
	for (i = 0; i < segs; i++) {
		uint32_t seg_payload = i + 1 < segs ? mss : payload - (segs - 1) * mss;
		struct vnic_hdrs h;
		struct vnic_pkt seg;

		assert_int_equal(wire_lens[i], VNIC_ETH_HLEN + l3 + l4 + seg_payload);
		assert_true(wire_lens[i] <= 1514);
		assert_int_equal(vnic_parse_frame(wire_bufs[i], wire_lens[i], &h), VNIC_PARSE_OK);
		assert_int_equal(h.payload_len, seg_payload);
		if (!v6)
			assert_true(vnic_csum_ip4_ok(wire_bufs[i] + h.l3_off, h.l3_len));
		assert_true(vnic_csum_l4_ok(wire_bufs[i], &h));
		if (proto == VNIC_IPPROTO_TCP) {
			const uint8_t *t = wire_bufs[i] + h.l4_off;
			uint32_t seq = (uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 | t[7];

			assert_int_equal(seq, f.seq + i * mss);
		}
		memset(&seg, 0, sizeof(seg));
		seg.data = wire_bufs[i];
		seg.len = wire_lens[i];
		seg.l2_len = h.l2_len;
		seg.l3_len = h.l3_len;
		seg.l4_len = h.l4_len;
		assert_true(vnic_pktgen_verify_pkt(&seg, f.seed, i * mss));
	}
	assert_int_equal(h_ctr(e, "tx0_lso_packets"), lso0 + 1);
	assert_int_equal(h_ctr(e, "tx0_lso_segments"), seg0 + segs);
	vnic_pkt_free(p);
}

static void test_lso(void **state)
{
	struct h_env *e = *state;

	/* the largest IPv4 superpacket: 65535 - 40 bytes of payload, 46 frames */
	lso_case(e, false, VNIC_IPPROTO_TCP, 65535 - 40, 1448, true);
	lso_case(e, true, VNIC_IPPROTO_TCP, 64000, 1428, true);
	lso_case(e, true, VNIC_IPPROTO_UDP, 20000, 1400, true);
	/* exactly one segment, and the smallest mss the device announced */
	lso_case(e, false, VNIC_IPPROTO_TCP, 1000, 1448, true);
	lso_case(e, false, VNIC_IPPROTO_TCP, 10 * 224, 224, true);
	assert_int_equal(h_ctr(e, "tx0_lso_missing_hdrs"), 0);
	/* without the header descriptors LSO needs: counted, still sent from our parse */
	lso_case(e, false, VNIC_IPPROTO_TCP, 5000, 1448, false);
	assert_int_equal(h_ctr(e, "tx0_lso_missing_hdrs"), 1);
	good_packet(e, 99);
}

/* A superpacket src/net refuses to segment (an IPv4 fragment) is refused. */
static void test_lso_gso_refused(void **state)
{
	struct h_env *e = *state;
	union vnic_subcrq_entry ents[2];
	struct vnic_pktgen_flow f;
	struct vnic_pkt *p = h_pkt(e);
	uint8_t *ip;

	vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_TCP);
	f.df = false;
	assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, 8000, 1448), 0);
	memcpy(e->tx_ltb, p->data, p->len);
	ip = e->tx_ltb + VNIC_ETH_HLEN;
	ip[6] |= 0x20; /* more fragments */
	vnic_csum_ip4_set(ip, 20);
	h_tx_desc(e, &ents[0], 5, 0, p->len,
		  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_LSO | VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_TCP,
		  1448);
	h_hdr_descs(&ents[1], e->tx_ltb, VNIC_ETH_HLEN, 20, 20, VNIC_HDR_DESC_L3);
	ents[0].tx.n_crq_elem = 2;
	assert_int_equal(h_tx_send(e, 0, ents, 2), VNIC_H_SUCCESS);
	expect_one_comp(e, 5, VNIC_RC_PARAMETER);
	assert_int_equal(h_ctr(e, "tx0_drop_gso_failed"), 1);
	assert_int_equal(wire_take(e), 0);
	vnic_pkt_free(p);
	good_packet(e, 1);
}

/* --- the "headers needed" mask ------------------------------------------------------- */

/* Checksum offload sent direct, without the headers the cautious mask asks for. */
static void cso_direct(struct h_env *e, uint32_t corr, uint16_t rc, bool on_wire)
{
	union vnic_subcrq_entry d;
	uint32_t len = put_frame(e, 0, false, VNIC_IPPROTO_TCP, 500, corr, expect);

	e->tx_ltb[csum_field(false, VNIC_IPPROTO_TCP)] ^= 0xff;
	h_tx_desc(e, &d, corr, 0, len,
		  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_PROT_IPV4 | VNIC_TX_PROT_TCP, 0);
	assert_int_equal(h_tx_send(e, 0, &d, 1), VNIC_H_SUCCESS);
	expect_one_comp(e, corr, rc);
	if (on_wire) {
		assert_int_equal(wire_take(e), 1);
		assert_memory_equal(wire_bufs[0], expect, len);
	} else {
		assert_int_equal(wire_take(e), 0);
	}
}

static void test_missing_hdrs_counted(void **state)
{
	struct h_env *e = *state;

	/* the unsafe variant (ibmvnic e633e32b60's "before") works here, but it shows */
	cso_direct(e, 1, VNIC_RC_SUCCESS, true);
	cso_direct(e, 2, VNIC_RC_SUCCESS, true);
	assert_int_equal(h_ctr(e, "tx0_csum_missing_hdrs"), 2);
	assert_int_equal(h_ctr(e, "tx0_drop_missing_hdrs"), 0);
	assert_int_equal(h_ctr(e, "tx0_csum_inserted"), 2);
}

static int setup_drop_missing(void **state)
{
	struct vnic_dev_config cfg;

	vnic_dev_config_default(&cfg);
	cfg.drop_missing_hdrs = true;
	return setup_cfg(state, &cfg, NULL, 0);
}

static void test_missing_hdrs_dropped(void **state)
{
	struct h_env *e = *state;

	cso_direct(e, 1, VNIC_RC_PARAMETER, false);
	assert_int_equal(h_ctr(e, "tx0_csum_missing_hdrs"), 1);
	assert_int_equal(h_ctr(e, "tx0_drop_missing_hdrs"), 1);
	/* with the headers it asked for, the same packet goes */
	csum_case(e, false, VNIC_IPPROTO_TCP, VNIC_HDR_DESC_L3, 2);
	/* a header descriptor without the L3 layer the mask names is as good as none */
	csum_send(e, false, VNIC_IPPROTO_TCP, VNIC_HDR_DESC_L2, 3, VNIC_RC_PARAMETER);
	assert_int_equal(h_ctr(e, "tx0_csum_missing_hdrs"), 2);
	assert_int_equal(h_ctr(e, "tx0_drop_missing_hdrs"), 2);
}

static int setup_exact(void **state)
{
	struct vnic_dev_config cfg;

	vnic_dev_config_default(&cfg);
	cfg.hdr_mask = VNIC_DEV_HDRS_EXACT;
	cfg.drop_missing_hdrs = true;
	return setup_cfg(state, &cfg, NULL, 0);
}

static void test_exact_mask_direct_cso(void **state)
{
	struct h_env *e = *state;

	/* exact: checksum offload needs no headers, so direct is simply right */
	cso_direct(e, 1, VNIC_RC_SUCCESS, true);
	assert_int_equal(h_ctr(e, "tx0_csum_missing_hdrs"), 0);
	/* LSO still needs them */
	lso_case(e, false, VNIC_IPPROTO_TCP, 4000, 1448, true);
	{
		union vnic_subcrq_entry d;
		struct vnic_pktgen_flow f;
		struct vnic_pkt *p = h_pkt(e);

		vnic_pktgen_flow_init(&f, false, VNIC_IPPROTO_TCP);
		assert_int_equal(vnic_pktgen_build_gso(p, &f, 0, 4000, 1448), 0);
		memcpy(e->tx_ltb, p->data, p->len);
		h_tx_desc(e, &d, 9, 0, p->len,
			  VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_LSO | VNIC_TX_PROT_IPV4 |
				  VNIC_TX_PROT_TCP,
			  1448);
		assert_int_equal(h_tx_send(e, 0, &d, 1), VNIC_H_SUCCESS);
		expect_one_comp(e, 9, VNIC_RC_PARAMETER);
		assert_int_equal(h_ctr(e, "tx0_lso_missing_hdrs"), 1);
		vnic_pkt_free(p);
	}
}

/* --- completions, backpressure, link ------------------------------------------------- */

/* n plain packets in one indirect batch, correlators first..first+n-1. */
static void send_batch(struct h_env *e, uint32_t first, unsigned int n)
{
	union vnic_subcrq_entry ents[VNIC_MAX_IND_DESCS];
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t off = (first + i) % 64 * 2048;
		uint32_t len = put_frame(e, off, false, VNIC_IPPROTO_UDP, 64, first + i, NULL);

		h_tx_desc(e, &ents[i], first + i, off, len, 0, 0);
	}
	assert_int_equal(h_tx_send(e, 0, ents, n), VNIC_H_SUCCESS);
}

static void test_completion_batching(void **state)
{
	struct h_env *e = *state;
	uint32_t c[32];
	uint16_t r[32];
	unsigned int i;

	send_batch(e, 100, 12);
	assert_true(h_run(e));
	assert_int_equal(h_tx_comps(e, 0, c, r, 32), 12);
	for (i = 0; i < 12; i++) {
		assert_int_equal(c[i], 100 + i);
		assert_int_equal(r[i], VNIC_RC_SUCCESS);
	}
	/* five per entry: 5 + 5 + 2 */
	assert_int_equal(h_ctr(e, "tx0_comp_entries"), 3);
	assert_int_equal(h_ctr(e, "tx0_completions"), 12);
	assert_int_equal(wire_take(e), 12);
}

static int setup_small_comp_ring(void **state)
{
	return setup_cfg(state, NULL, NULL, 16);
}

/* The driver's completion ring is full: completions wait, in order, none lost. */
static void test_completion_ring_full(void **state)
{
	struct h_env *e = *state;
	enum { N = 300 };
	static uint32_t c[N + 8];
	static uint16_t r[N + 8];
	unsigned int got = 0, sent, i;

	/* the device stops taking descriptors once completions back up: send as it takes */
	for (sent = 0; sent < N; sent += 100) {
		send_batch(e, sent, 100);
		h_run_for(e, 1000000);
	}
	assert_true(h_ctr(e, "tx0_comp_busy") > 0);
	while (got < N) {
		unsigned int n = h_tx_comps(e, 0, c + got, r + got, N + 8 - got);

		got += n;
		if (!n)
			h_run_for(e, 200000);
		wire_take(e);
	}
	assert_true(h_run(e));
	assert_int_equal(got, N);
	for (i = 0; i < N; i++) {
		assert_int_equal(c[i], i);
		assert_int_equal(r[i], VNIC_RC_SUCCESS);
	}
	assert_int_equal(h_ctr(e, "tx0_comp_lost"), 0);
	assert_int_equal(h_ctr(e, "tx0_packets"), N);
}

static int setup_small_wire(void **state)
{
	struct vnic_cable_cfg cc;

	memset(&cc, 0, sizeof(cc));
	cc.slots = 16;
	return setup_cfg(state, NULL, &cc, 0);
}

/* The wire is full: descriptors wait in the ring, frames keep their order. */
static void test_wire_full(void **state)
{
	struct h_env *e = *state;
	enum { N = 60 };
	unsigned int frames = 0, comps = 0, i;
	uint32_t c[N];
	uint16_t r[N];

	send_batch(e, 0, N);
	h_run_for(e, 1000000);
	assert_true(h_ctr(e, "tx0_wire_full") > 0);
	/* nothing is completed before it is on the wire */
	assert_true(h_tx_comps(e, 0, c, r, N) <= 16);
	h_run_for(e, 0);
	while (frames < N) {
		unsigned int n = wire_take(e);

		for (i = 0; i < n; i++) {
			struct vnic_hdrs h;

			assert_int_equal(vnic_parse_frame(wire_bufs[i], wire_lens[i], &h),
					 VNIC_PARSE_OK);
			/* the pktgen seed is the correlator: order kept */
			assert_true(vnic_pktgen_verify(wire_bufs[i] + h.payload_off, 64, frames + i,
						       0));
		}
		frames += n;
		h_run_for(e, 200000);
	}
	assert_true(h_run(e));
	comps = h_tx_comps(e, 0, c, r, N);
	assert_int_equal(h_ctr(e, "tx0_completions"), N);
	(void)comps;
}

static void test_link_down_aborts(void **state)
{
	struct h_env *e = *state;
	uint32_t c[16];
	uint16_t r[16];
	unsigned int i;

	/* submitted, not yet polled when the link goes down */
	send_batch(e, 0, 10);
	/* the control poller runs first in a round (registered first): it drains */
	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	assert_int_equal(h_tx_comps(e, 0, c, r, 16), 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(c[i], i);
		assert_int_equal(r[i], VNIC_RC_ABORTED);
	}
	assert_int_equal(wire_take(e), 0);
	assert_int_equal(h_ctr(e, "tx0_drop_link_down"), 10);
	/* while down, aborted too */
	send_batch(e, 20, 1);
	expect_one_comp(e, 20, VNIC_RC_ABORTED);
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_SUCCESS);
	good_packet(e, 3);
}

/*
 * The driver starts over (INIT) in the middle of traffic: the device is
 * blocked on a full wire, descriptors wait in its ring, completions in its
 * outbox. Each descriptor is accounted for once: sent (its completion
 * delivered, or dropped by the reset and counted) or never read (counted);
 * and the device comes back for a new bring-up as if nothing had happened.
 */
static void test_reset_mid_traffic(void **state)
{
	struct h_env *e = *state;
	enum { N = 60 };
	uint64_t sent, unread, dropped;
	unsigned int got, i;
	uint32_t c[N];
	uint16_t r[N];

	send_batch(e, 0, N);
	h_run_for(e, 1000000);
	assert_true(h_ctr(e, "tx0_wire_full") > 0);
	got = h_tx_comps(e, 0, c, r, N);
	for (i = 0; i < got; i++)
		assert_int_equal(r[i], VNIC_RC_SUCCESS);
	h_init(e);
	assert_int_equal(h_ctr(e, "state"), 1);
	sent = h_ctr(e, "tx0_packets");
	unread = h_ctr(e, "tx0_reset_unread");
	dropped = h_ctr(e, "tx0_comp_reset");
	assert_true(unread > 0);
	assert_int_equal(sent + unread, N);
	assert_int_equal(got + dropped, sent);
	/* nothing arrives on the old rings now */
	assert_int_equal(h_tx_comps(e, 0, c, r, N), 0);
	/* what went on the wire did go, once */
	assert_int_equal(wire_take(e), sent);
	/* and a new bring-up works: every packet sent, completed, on the wire */
	h_bringup(e, 1, 1);
	send_batch(e, 100, 8);
	assert_true(h_run(e));
	assert_int_equal(h_tx_comps(e, 0, c, r, N), 8);
	assert_int_equal(wire_take(e), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plain_direct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csum_offload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offload_not_enabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lso, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lso_gso_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_hdrs_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_hdrs_dropped, setup_drop_missing,
						teardown),
		cmocka_unit_test_setup_teardown(test_exact_mask_direct_cso, setup_exact, teardown),
		cmocka_unit_test_setup_teardown(test_completion_batching, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion_ring_full, setup_small_comp_ring,
						teardown),
		cmocka_unit_test_setup_teardown(test_wire_full, setup_small_wire, teardown),
		cmocka_unit_test_setup_teardown(test_reset_mid_traffic, setup_small_wire, teardown),
		cmocka_unit_test_setup_teardown(test_link_down_aborts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
