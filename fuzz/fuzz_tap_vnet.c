// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the TAP's vnet header (vnic_vnet_parse,
 * src/port/tap_vnet.c): what the kernel hands vnic with every frame read
 * from a TAP, turned into packet metadata. Input layout:
 *
 *	bytes 0-11  the vnet header as read (little-endian fields)
 *	byte 12	    bit 0 hash with an RSS key, bit 1 a template frame
 *	then either the frame, or (bit 1) a template: kind (byte), payload
 *	length (BE16), pattern (byte), partial L4 checksum (byte, bit 0), and the
 *	rest as (offset BE16, value) patches of the frame's bytes.
 *
 * The frame sits in a heap block of exactly its length. Checked: the answer
 * is a named reason (counted as inN_drop_<name>); an accepted packet is one
 * the rest of vnic can act on: a PARTIAL checksum names the frame's own TCP
 * or UDP field and software can complete it, a superpacket counts as many
 * segments as it says and segments into valid frames, no offload without
 * NEEDS_CSUM, the frame unchanged but for a checksum finished here. The
 * header vnic_vnet_build writes back for it reads back to the same
 * metadata.
 *
 * Links src/net and src/port. Corpus: fuzz/corpus/tap_vnet/.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum {
	HDR_BYTES = VNIC_VNET_HDR_LEN + 1,
	OUT_HEADROOM = 32,
	OUT_BUF = OUT_HEADROOM + 9216,
};

static const uint8_t rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static struct vnic_pkt_pool out_pool;
static struct vnic_pkt *outs[VNIC_GSO_MAX_SEGS];

static void setup_once(void)
{
	static bool ready;

	if (ready)
		return;
	FZ_CHECK(vnic_pkt_pool_init(&out_pool, VNIC_GSO_MAX_SEGS, OUT_BUF, OUT_HEADROOM) == 0);
	FZ_CHECK(vnic_pkt_alloc_bulk(&out_pool, outs, VNIC_GSO_MAX_SEGS) == VNIC_GSO_MAX_SEGS);
	ready = true;
}

/* A packet over an exact-size copy of the frame, metadata reset: what read_one hands over. */
static void wrap(struct vnic_pkt *pkt, uint8_t *frame, uint32_t len)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->head = frame;
	pkt->data = frame;
	pkt->len = len;
	pkt->buf_size = len;
}

static uint8_t *frame_of(struct fz_in *in, bool tmpl, uint32_t *len)
{
	static uint8_t buf[VNIC_PKT_MAX_LEN];
	uint8_t *copy;

	if (tmpl) {
		uint8_t kind = fz_u8(in);
		uint16_t payload = fz_u16(in);
		uint8_t pattern = fz_u8(in);
		bool partial = fz_u8(in) & 1;

		*len = fz_frame(buf, sizeof(buf), (enum fz_frame_kind)(kind % FZ_KINDS), payload,
				pattern, partial, NULL, NULL);
		while (in->left >= 3 && *len) {
			uint16_t off = fz_u16(in);
			uint8_t v = fz_u8(in);

			buf[off % *len] = v;
		}
	} else {
		*len = (uint32_t)in->left;
		fz_bytes(in, buf, *len);
	}
	copy = malloc(*len ? *len : 1);
	FZ_CHECK(copy);
	memcpy(copy, buf, *len);
	return copy;
}

/* The device will segment it: it must, into frames that parse and verify. */
static void check_segments(const struct vnic_pkt *pkt)
{
	uint32_t hdr = (uint32_t)pkt->l2_len + pkt->l3_len + pkt->l4_len;
	int n;

	/* wider segments than our outputs hold say nothing about the packet */
	if (hdr + pkt->gso_size > OUT_BUF - OUT_HEADROOM)
		return;
	for (int i = 0; i < pkt->gso_segs; i++)
		vnic_pkt_reset(outs[i]);
	n = vnic_gso_segment(pkt, outs, pkt->gso_segs, VNIC_GSO_F_CSUM_COMPLETE);
	FZ_CHECK(n == pkt->gso_segs);
	for (int i = 0; i < n; i++) {
		struct vnic_hdrs h;

		FZ_CHECK(vnic_parse_frame(outs[i]->data, outs[i]->len, &h) == VNIC_PARSE_OK);
		FZ_CHECK(vnic_csum_l4_ok(outs[i]->data, &h));
	}
}

static void check_accepted(const struct vnic_vnet_hdr *h, struct vnic_pkt *pkt, const uint8_t *orig)
{
	bool needs = h->flags & VNIC_VNET_F_NEEDS_CSUM;
	uint32_t l4 = (uint32_t)pkt->l2_len + pkt->l3_len;
	uint16_t start = le16toh(h->csum_start), off = le16toh(h->csum_offset);
	struct vnic_vnet_hdr back;
	struct vnic_pkt again;
	uint8_t *copy;

	if (!needs) {
		FZ_CHECK(pkt->ip_summed == VNIC_CSUM_NONE && pkt->gso_type == VNIC_GSO_NONE);
		FZ_CHECK(!memcmp(pkt->data, orig, pkt->len));
		return;
	}
	if (pkt->ip_summed == VNIC_CSUM_NONE) {
		/* summed here: only the field changed */
		FZ_CHECK(pkt->gso_type == VNIC_GSO_NONE);
		FZ_CHECK((uint32_t)start + off + 2 <= pkt->len);
		FZ_CHECK(!memcmp(pkt->data, orig, (size_t)start + off));
		FZ_CHECK(!memcmp(pkt->data + start + off + 2, orig + start + off + 2,
				 pkt->len - start - off - 2));
		return;
	}
	FZ_CHECK(pkt->ip_summed == VNIC_CSUM_PARTIAL);
	FZ_CHECK(!memcmp(pkt->data, orig, pkt->len));
	/* only the frame's own TCP or UDP checksum is left to the device */
	FZ_CHECK(pkt->flags & VNIC_PKT_F_PARSED);
	FZ_CHECK(pkt->csum_start == l4);
	FZ_CHECK((pkt->l4_proto == VNIC_IPPROTO_TCP && pkt->csum_offset == 16) ||
		 (pkt->l4_proto == VNIC_IPPROTO_UDP && pkt->csum_offset == 6));
	FZ_CHECK((uint32_t)pkt->csum_start + pkt->csum_offset + 2 <= pkt->len);
	if (pkt->gso_type != VNIC_GSO_NONE) {
		FZ_CHECK(pkt->gso_size > 0 && pkt->gso_segs >= 2);
		FZ_CHECK(vnic_gso_count(pkt) == pkt->gso_segs);
		FZ_CHECK((pkt->gso_type & VNIC_GSO_UDP_L4) ? pkt->l4_proto == VNIC_IPPROTO_UDP
							   : pkt->l4_proto == VNIC_IPPROTO_TCP);
		check_segments(pkt);
	}

	/* written back (the path a delivered packet takes) it reads the same */
	FZ_CHECK(vnic_vnet_build(pkt, &back) == 0);
	copy = malloc(pkt->len);
	FZ_CHECK(copy);
	memcpy(copy, pkt->data, pkt->len);
	wrap(&again, copy, pkt->len);
	FZ_CHECK(vnic_vnet_parse(&back, &again, NULL) == VNIC_TAP_DROP_NONE);
	FZ_CHECK(again.ip_summed == pkt->ip_summed && again.gso_type == pkt->gso_type);
	FZ_CHECK(again.gso_size == pkt->gso_size && again.gso_segs == pkt->gso_segs);
	FZ_CHECK(again.csum_start == pkt->csum_start && again.csum_offset == pkt->csum_offset);
	free(copy);
	if (pkt->gso_type == VNIC_GSO_NONE) {
		/* and software can finish the checksum the device would */
		FZ_CHECK(vnic_csum_help(pkt) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	struct vnic_vnet_hdr h;
	enum vnic_tap_drop why;
	struct vnic_pkt pkt;
	uint8_t opt, *frame, *orig;
	uint32_t len;

	setup_once();
	if (size < HDR_BYTES)
		return 0;
	fz_bytes(&in, &h, VNIC_VNET_HDR_LEN);
	opt = fz_u8(&in);
	frame = frame_of(&in, opt & 2, &len);
	if (len > VNIC_PKT_MAX_LEN) {
		free(frame);
		return 0;
	}
	orig = malloc(len ? len : 1);
	FZ_CHECK(orig);
	memcpy(orig, frame, len);
	wrap(&pkt, frame, len);

	why = vnic_vnet_parse(&h, &pkt, (opt & 1) ? rss_key : NULL);
	FZ_CHECK((unsigned int)why < VNIC_TAP_DROP_MAX);
	FZ_CHECK(strcmp(vnic_tap_drop_name(why), "unknown") != 0);
	if (why == VNIC_TAP_DROP_NONE)
		check_accepted(&h, &pkt, orig);
	free(orig);
	free(frame);
	return 0;
}
