// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for software segmentation. Input layout:
 *
 *	byte 0	   selector: bits 0-1 type (TCPV4, TCPV6, UDP_L4, or byte 3 taken
 *		   raw as gso_type), bit 2 TCP_ECN, bit 3 PARTIAL checksums,
 *		   bit 4 leave the packet unparsed (the segmenter parses it),
 *		   bit 5 skew l4_len by byte 4, bit 6 offer one output too few
 *	bytes 1-2  gso_size, big endian
 *	byte 3	   raw gso_type (selector type 3)
 *	byte 4	   l4_len skew (signed)
 *	rest	   the Ethernet frame
 *
 * Checked: count and segment agree; on success the segments' payloads add up
 * to the input's, none exceeds headers + gso_size, each parses and its
 * checksums verify (after vnic_csum_help in PARTIAL mode); -ENOSPC only when
 * the outputs really are too few or too small; the input is never modified.
 *
 * Links src/net only (no tests/support). Corpus: fuzz/corpus/gso/.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

#include "check.h"

enum {
	HDR_BYTES = 5,
	IN_HEADROOM = 64,
	IN_BUF = IN_HEADROOM + VNIC_PKT_MAX_LEN,
	/* Small outputs keep the pool at a few MiB; bigger MSS exercises -ENOSPC. */
	OUT_HEADROOM = 32,
	OUT_BUF = OUT_HEADROOM + VNIC_MAX_HDRS + 4096,
	OUT_COUNT = VNIC_GSO_MAX_SEGS,
};

static struct vnic_pkt_pool in_pool, out_pool;
static struct vnic_pkt *in_pkt;
static struct vnic_pkt *outs[OUT_COUNT];

static void setup_once(void)
{
	if (in_pkt)
		return;
	if (vnic_pkt_pool_init(&in_pool, 8, IN_BUF, IN_HEADROOM) ||
	    vnic_pkt_pool_init(&out_pool, OUT_COUNT, OUT_BUF, OUT_HEADROOM))
		abort();
	in_pkt = vnic_pkt_alloc(&in_pool);
	if (vnic_pkt_alloc_bulk(&out_pool, outs, OUT_COUNT) != OUT_COUNT)
		abort();
}

static uint16_t pick_type(uint8_t sel, uint8_t raw)
{
	static const uint16_t types[3] = {VNIC_GSO_TCPV4, VNIC_GSO_TCPV6, VNIC_GSO_UDP_L4};
	uint16_t type = (sel & 3) == 3 ? raw : types[sel & 3];

	if (sel & 4)
		type |= VNIC_GSO_TCP_ECN;
	return type;
}

static void check_segments(const struct vnic_pkt *in, int segs, unsigned int flags)
{
	uint32_t hdr = (uint32_t)in->l2_len + in->l3_len + in->l4_len;
	uint64_t total = 0;

	for (int i = 0; i < segs; i++) {
		struct vnic_pkt *seg = outs[i];
		struct vnic_hdrs h;

		FZ_CHECK(seg->len >= hdr);
		FZ_CHECK(seg->len - hdr <= in->gso_size);
		/* Only the last segment may be short. */
		FZ_CHECK(i + 1 == segs || seg->len - hdr == in->gso_size);
		FZ_CHECK(seg->gso_type == VNIC_GSO_NONE && seg->gso_size == 0);
		FZ_CHECK(seg->flags & VNIC_PKT_F_PARSED);
		FZ_CHECK(seg->l2_len == in->l2_len && seg->l3_len == in->l3_len &&
			 seg->l4_len == in->l4_len);
		total += seg->len - hdr;

		if (flags & VNIC_GSO_F_CSUM_PARTIAL) {
			FZ_CHECK(seg->ip_summed == VNIC_CSUM_PARTIAL);
			FZ_CHECK(vnic_csum_help(seg) == 0);
		}
		FZ_CHECK(seg->ip_summed == VNIC_CSUM_NONE);
		FZ_CHECK(vnic_parse_frame(seg->data, seg->len, &h) == VNIC_PARSE_OK);
		FZ_CHECK(h.payload_off == hdr && h.payload_len == seg->len - hdr);
		FZ_CHECK(h.l4_proto == in->l4_proto);
		FZ_CHECK(vnic_csum_l4_ok(seg->data, &h));
		if (in->l3_proto == VNIC_ETH_P_IP)
			FZ_CHECK(vnic_csum_ip4_ok(seg->data + h.l3_off, h.l3_len));
	}
	FZ_CHECK(total == in->len - hdr);
}

/* Would -ENOSPC be the right answer for count segments into n outputs? */
static bool expect_nospace(const struct vnic_pkt *in, int count, unsigned int n)
{
	uint32_t hdr = (uint32_t)in->l2_len + in->l3_len + in->l4_len;
	uint32_t payload = in->len - hdr;
	uint32_t biggest = payload < in->gso_size ? payload : in->gso_size;

	return (unsigned int)count > n || hdr + biggest > OUT_BUF - OUT_HEADROOM;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t before[VNIC_PKT_MAX_LEN];
	struct vnic_pkt meta, *in;
	unsigned int flags, n;
	uint8_t sel;
	int count, ret;

	setup_once();
	if (size < HDR_BYTES || size - HDR_BYTES > VNIC_PKT_MAX_LEN)
		return 0;
	sel = data[0];
	in = in_pkt;
	vnic_pkt_reset(in);
	if (vnic_pkt_copy_in(in, data + HDR_BYTES, (uint32_t)(size - HDR_BYTES)))
		return 0;
	if (vnic_parse_pkt(in) != VNIC_PARSE_OK || !(in->flags & VNIC_PKT_F_PARSED))
		return 0;

	in->gso_type = pick_type(sel, data[3]);
	in->gso_size = (uint16_t)(data[1] << 8 | data[2]);
	in->ip_summed = VNIC_CSUM_PARTIAL;
	in->hash = 0x9e3779b9u;
	if (sel & 0x10)
		in->flags &= (uint8_t)~VNIC_PKT_F_PARSED;
	if (sel & 0x20)
		in->l4_len = (uint16_t)(in->l4_len + (int8_t)data[4]);
	flags = (sel & 8) ? VNIC_GSO_F_CSUM_PARTIAL : VNIC_GSO_F_CSUM_COMPLETE;

	count = vnic_gso_count(in);
	FZ_CHECK(count == -EINVAL || (count >= 1 && count <= VNIC_GSO_MAX_SEGS));
	n = OUT_COUNT;
	if ((sel & 0x40) && count > 0)
		n = (unsigned int)count - 1;

	meta = *in;
	memcpy(before, in->data, in->len);
	ret = vnic_gso_segment(in, outs, n, flags);
	FZ_CHECK(memcmp(&meta, in, sizeof(meta)) == 0);
	FZ_CHECK(memcmp(before, in->data, in->len) == 0);

	/* A non-GSO packet counts as one segment, but there is nothing to segment. */
	if (count < 0 || in->gso_type == VNIC_GSO_NONE) {
		FZ_CHECK(ret == -EINVAL);
		return 0;
	}
	if (!(in->flags & VNIC_PKT_F_PARSED)) {
		/* Give the checks below the metadata the segmenter derived. */
		FZ_CHECK(vnic_parse_pkt(in) == VNIC_PARSE_OK);
	}
	if (expect_nospace(in, count, n)) {
		FZ_CHECK(ret == -ENOSPC);
		return 0;
	}
	FZ_CHECK(ret == count);
	check_segments(in, ret, flags);
	return 0;
}
