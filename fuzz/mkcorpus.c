// SPDX-License-Identifier: MIT
/*
 * Writes the crafted corpus inputs of the targets that speak the protocol
 * (fuzz/corpus/{tap_vnet,dev_subcrq,dev_crq,drv_comp,drv_crq,ctl_request}/),
 * each made to reach deep into its layer: a full bring-up spelt out message
 * by message, a checksum-offload descriptor with its header descriptors, a
 * superpacket, a login with hostile offsets, and so on. Each input's layout
 * is the one its target's comment describes.
 *
 *	build/fuzz/fuzz_mkcorpus fuzz/corpus
 *
 * rewrites them (and nothing else: inputs the fuzzers found and someone kept
 * stay). Not run by the tests; fuzz_replay_<name> replays what it wrote.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

struct input {
	uint8_t b[16384];
	size_t n;
};

static void u8(struct input *s, uint8_t v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = v;
}

static void be16(struct input *s, uint16_t v)
{
	u8(s, (uint8_t)(v >> 8));
	u8(s, (uint8_t)v);
}

static void be24(struct input *s, uint32_t v)
{
	u8(s, (uint8_t)(v >> 16));
	be16(s, (uint16_t)v);
}

static void be32(struct input *s, uint32_t v)
{
	be16(s, (uint16_t)(v >> 16));
	be16(s, (uint16_t)v);
}

static void be64(struct input *s, uint64_t v)
{
	be32(s, (uint32_t)(v >> 32));
	be32(s, (uint32_t)v);
}

static void le16(struct input *s, uint16_t v)
{
	u8(s, (uint8_t)v);
	u8(s, (uint8_t)(v >> 8));
}

static void bytes(struct input *s, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		u8(s, ((const uint8_t *)p)[i]);
}

static void zeros(struct input *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		u8(s, 0);
}

static const char *root;

static void save(const char *target, const char *name, const struct input *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* --- tap_vnet ------------------------------------------------------------------------- */

/* The vnet header (little-endian), the option byte, a template frame. */
static void vnet(struct input *s, uint8_t flags, uint8_t gso, uint16_t hdr_len, uint16_t gso_size,
		 uint16_t start, uint16_t off, uint8_t opt)
{
	s->n = 0;
	u8(s, flags);
	u8(s, gso);
	le16(s, hdr_len);
	le16(s, gso_size);
	le16(s, start);
	le16(s, off);
	le16(s, 0);
	u8(s, opt);
}

static void tmpl(struct input *s, enum fz_frame_kind k, uint16_t payload, uint8_t pattern,
		 bool partial)
{
	u8(s, (uint8_t)k);
	be16(s, payload);
	u8(s, pattern);
	u8(s, partial);
}

static void corpus_tap_vnet(void)
{
	struct input s;
	uint8_t frame[2048];
	uint32_t len;

	/* a plain frame as the kernel hands it without offloads */
	vnet(&s, 0, 0, 0, 0, 0, 0, 1);
	len = fz_frame(frame, sizeof(frame), FZ_TCP4, 100, 1, false, NULL, NULL);
	bytes(&s, frame, len);
	save("tap_vnet", "tcp4_plain_raw", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, 0, 0, 0, 34, 16, 3);
	tmpl(&s, FZ_TCP4, 500, 2, true);
	save("tap_vnet", "tcp4_partial", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV4, 54, 1448, 34, 16, 3);
	tmpl(&s, FZ_TCP4, 20000, 3, true);
	save("tap_vnet", "tcp4_tso", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV6 | VNIC_VNET_GSO_ECN, 74, 1428, 54, 16,
	     2);
	tmpl(&s, FZ_TCP6, 9000, 4, true);
	save("tap_vnet", "tcp6_tso_ecn", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_UDP_L4, 42, 1400, 34, 6, 2);
	tmpl(&s, FZ_UDP4, 6000, 5, true);
	save("tap_vnet", "udp4_uso", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV4, 58, 1000, 38, 16, 2);
	tmpl(&s, FZ_TCP4_VLAN, 5000, 6, true);
	save("tap_vnet", "tcp4_vlan_tso", &s);

	/* a region other than TCP/UDP: summed in software, leaves as NONE */
	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, 0, 0, 0, 34, 2, 2);
	tmpl(&s, FZ_ICMP4, 56, 7, false);
	save("tap_vnet", "icmp4_csum_sw", &s);

	/* one segment's worth: a plain partial packet */
	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV4, 54, 1448, 34, 16, 2);
	tmpl(&s, FZ_TCP4, 100, 8, true);
	save("tap_vnet", "tcp4_tso_one_segment", &s);

	vnet(&s, VNIC_VNET_F_DATA_VALID, 0, 0, 0, 0, 0, 2);
	tmpl(&s, FZ_UDP6, 300, 9, false);
	save("tap_vnet", "udp6_data_valid", &s);

	/*
	 * what an AF_PACKET backing may be handed too (src/port/afpacket.c):
	 * a superframe cut finer than the wire holds segments for, and one
	 * whose segments are longer than a frame of the MTU
	 */
	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV4, 54, 100, 34, 16, 2);
	tmpl(&s, FZ_TCP4, 30000, 14, true);
	save("tap_vnet", "tcp4_tso_300_segments", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV4, 54, 3000, 34, 16, 2);
	tmpl(&s, FZ_TCP4, 20000, 15, true);
	save("tap_vnet", "tcp4_tso_mss_over_mtu", &s);

	/* refused: UFO, checksum past the end, GSO without NEEDS_CSUM, a runt */
	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_UDP, 42, 1400, 34, 6, 2);
	tmpl(&s, FZ_UDP4, 3000, 10, true);
	save("tap_vnet", "bad_ufo", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, 0, 0, 0, 2000, 16, 2);
	tmpl(&s, FZ_TCP4, 100, 11, true);
	save("tap_vnet", "bad_csum_start", &s);

	vnet(&s, 0, VNIC_VNET_GSO_TCPV4, 54, 1448, 0, 0, 2);
	tmpl(&s, FZ_TCP4, 4000, 12, false);
	save("tap_vnet", "bad_gso_no_csum", &s);

	vnet(&s, VNIC_VNET_F_NEEDS_CSUM, VNIC_VNET_GSO_TCPV4, 54, 1448, 34, 16, 2);
	tmpl(&s, FZ_UDP4, 4000, 13, true);
	save("tap_vnet", "bad_gso_mismatch", &s);

	vnet(&s, 0, 0, 0, 0, 0, 0, 0);
	zeros(&s, 10);
	save("tap_vnet", "bad_runt", &s);
}

/* --- dev_crq -------------------------------------------------------------------------- */

static void msg(struct input *s, uint8_t tag, uint8_t first, uint8_t cmd, const uint8_t *rest,
		size_t n)
{
	u8(s, tag);
	u8(s, first);
	u8(s, cmd);
	bytes(s, rest, n);
	zeros(s, 14 - n);
}

static void cap_msg(struct input *s, uint8_t cmd, uint16_t cap, uint64_t num)
{
	uint8_t r[10] = {(uint8_t)(cap >> 8), (uint8_t)cap};

	for (int i = 0; i < 8; i++)
		r[2 + i] = (uint8_t)(num >> (56 - 8 * i));
	msg(s, 0, VNIC_CRQ_CMD_RSP, cmd, r, sizeof(r));
}

/* A message with a 16-bit length @2 and a 64-bit ioba @4, relocated into the control page. */
static void ioba_msg(struct input *s, uint8_t cmd, uint16_t len, uint64_t off)
{
	uint8_t r[10] = {(uint8_t)(len >> 8), (uint8_t)len};

	for (int i = 0; i < 8; i++)
		r[2 + i] = (uint8_t)(off >> (56 - 8 * i));
	msg(s, 8, VNIC_CRQ_CMD_RSP, cmd, r, sizeof(r));
}

static void map_msg(struct input *s, uint8_t cmd, uint8_t id, uint32_t len, uint32_t off)
{
	uint8_t r[10] = {id,
			 0,
			 (uint8_t)(len >> 24),
			 (uint8_t)(len >> 16),
			 (uint8_t)(len >> 8),
			 (uint8_t)len,
			 (uint8_t)(off >> 24),
			 (uint8_t)(off >> 16),
			 (uint8_t)(off >> 8),
			 (uint8_t)off};

	msg(s, 8, VNIC_CRQ_CMD_RSP, cmd, r, sizeof(r));
}

static void bringup_msgs(struct input *s, unsigned int ntx, unsigned int nrx, bool login, bool link)
{
	uint8_t v1[2] = {0, 1}, up = VNIC_LINK_UP;

	msg(s, 0, VNIC_CRQ_INIT_CMD, VNIC_CRQ_INIT, NULL, 0);
	msg(s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_VERSION_EXCHANGE, v1, 2);
	cap_msg(s, VNIC_CMD_QUERY_CAPABILITY, VNIC_CAP_MAX_TX_QUEUES, 0);
	cap_msg(s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_TX_QUEUES, ntx);
	cap_msg(s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_RX_QUEUES, nrx);
	cap_msg(s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_TX_ENTRIES, 64);
	cap_msg(s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_RX_ADD_ENTRIES, 64);
	cap_msg(s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_MTU, 1514);
	cap_msg(s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_IND_DESCS, 16);
	/* the offer lands at the offload offset, and is sent straight back */
	ioba_msg(s, VNIC_CMD_QUERY_IP_OFFLOAD, 64, FZ_OFFLOAD_OFF);
	u8(s, 4); /* RUN */
	ioba_msg(s, VNIC_CMD_CONTROL_IP_OFFLOAD, 64, FZ_OFFLOAD_OFF);
	map_msg(s, VNIC_CMD_REQUEST_MAP, FZ_LTB1_MAP, FZ_LTB1_LEN, FZ_LTB1_OFF);
	map_msg(s, VNIC_CMD_REQUEST_MAP, FZ_LTB2_MAP, FZ_LTB2_LEN, FZ_LTB2_OFF);
	if (!login)
		return;
	/* LOGIN record with its message, length as built */
	u8(s, 1 | 8);
	u8(s, (uint8_t)ntx);
	u8(s, (uint8_t)nrx);
	u8(s, 0);
	u8(s, 0);
	if (link)
		msg(s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_LOGICAL_LINK_STATE, &up, 1);
	u8(s, 4);
}

static void bringup_rec(struct input *s, uint8_t ntx, uint8_t nrx, uint16_t entries, uint16_t mtu)
{
	u8(s, 3);
	u8(s, ntx);
	u8(s, nrx);
	be16(s, entries);
	be16(s, mtu);
	u8(s, 0);
}

static void corpus_dev_crq(void)
{
	uint8_t down = VNIC_LINK_DOWN, query = VNIC_LINK_QUERY, v0[2] = {0, 0};
	uint8_t mcast[6] = {1, 0, 0x5e, 0, 0, 1}, mac[6] = {2, 0, 0, 0, 0, 9};
	struct input s;

	s.n = 0;
	u8(&s, 0);
	bringup_msgs(&s, 1, 1, true, true);
	save("dev_crq", "bringup_spelt_out", &s);

	s.n = 0;
	u8(&s, 1);
	bringup_msgs(&s, 2, 3, true, true);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_LOGICAL_LINK_STATE, &query, 1);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_LOGICAL_LINK_STATE, &down, 1);
	save("dev_crq", "bringup_small_device", &s);

	/* logged in, link up, descriptors queued: the link-down waits for them */
	s.n = 0;
	u8(&s, 0);
	bringup_rec(&s, 2, 2, 128, 1500);
	for (int i = 0; i < 3; i++) {
		u8(&s, 5);
		u8(&s, 0);
		u8(&s, VNIC_SUBCRQ_VALID);
		u8(&s, VNIC_TX_DESC);
		u8(&s, 1);
		u8(&s, 1);
		u8(&s, VNIC_TX_COMP_NEEDED);
		zeros(&s, 27);
	}
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_LOGICAL_LINK_STATE, &down, 1);
	u8(&s, 4);
	u8(&s, 5 | 8); /* an rx buffer add after the link went down */
	u8(&s, 1);
	u8(&s, VNIC_SUBCRQ_VALID);
	zeros(&s, 31);
	save("dev_crq", "link_down_with_descriptors", &s);

	/* hostile logins: counts past the buffer, offsets inside the header */
	s.n = 0;
	u8(&s, 0);
	bringup_msgs(&s, 1, 1, false, false);
	u8(&s, 1 | 8);
	u8(&s, 4);
	u8(&s, 4);
	u8(&s, 3);
	u8(&s, 11); /* num_txcomp low byte */
	u8(&s, 0x0c);
	u8(&s, 15); /* off_txcomp low byte */
	u8(&s, 0x10);
	u8(&s, 35); /* login_rsp_len low byte */
	u8(&s, 0xff);
	u8(&s, 0);
	save("dev_crq", "login_hostile_counts", &s);

	s.n = 0;
	u8(&s, 0);
	bringup_msgs(&s, 1, 1, false, false);
	u8(&s, 1 | 8);
	u8(&s, 1);
	u8(&s, 1);
	u8(&s, 2);
	u8(&s, 27); /* login_rsp_ioba: another page */
	u8(&s, 0x10);
	u8(&s, 43); /* a handle made zero-ish */
	u8(&s, 0xff);
	u8(&s, (uint8_t)-8); /* and a length short of the buffer */
	save("dev_crq", "login_bad_rsp_and_len", &s);

	/* capabilities at and past their limits, in and out of state */
	s.n = 0;
	u8(&s, 1);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_TX_QUEUES, 1);
	msg(&s, 0, VNIC_CRQ_INIT_CMD, VNIC_CRQ_INIT, NULL, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_VERSION_EXCHANGE, v0, 2);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_VERSION_EXCHANGE, v0 + 0, 0);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_TX_QUEUES, 0);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_TX_QUEUES, 3);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_TX_ENTRIES, 4096);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_MTU, 0xffffffffffffull);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, VNIC_CAP_REQ_IND_DESCS, 200);
	cap_msg(&s, VNIC_CMD_REQUEST_CAPABILITY, 99, 1);
	cap_msg(&s, VNIC_CMD_QUERY_CAPABILITY, VNIC_CAP_RX_BUF_SIZE, 0);
	cap_msg(&s, VNIC_CMD_QUERY_CAPABILITY, VNIC_CAP_TX_RX_DESC_REQ, 0);
	cap_msg(&s, VNIC_CMD_QUERY_CAPABILITY, 0x7fff, 0);
	save("dev_crq", "capabilities_limits", &s);

	/* maps: id 0, twice, too long, unmapped memory, unmap, unknown commands */
	s.n = 0;
	u8(&s, 0);
	msg(&s, 0, VNIC_CRQ_INIT_CMD, VNIC_CRQ_INIT, NULL, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_VERSION_EXCHANGE, v0 + 1, 1);
	map_msg(&s, VNIC_CMD_REQUEST_MAP, 0, 4096, 0);
	map_msg(&s, VNIC_CMD_REQUEST_MAP, 7, 4096, 0);
	map_msg(&s, VNIC_CMD_REQUEST_MAP, 7, 4096, 8192);
	map_msg(&s, VNIC_CMD_REQUEST_MAP, 8, VNIC_ONE_LTB_SIZE + 1, 0);
	map_msg(&s, VNIC_CMD_REQUEST_MAP, 9, FZ_LTB_REGION, 4096);
	map_msg(&s, VNIC_CMD_REQUEST_UNMAP, 7, 0, 0);
	map_msg(&s, VNIC_CMD_REQUEST_UNMAP, 7, 0, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, 0x42, NULL, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_ERROR_INDICATION, NULL, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_LOGIN_RSP, NULL, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_CHANGE_MAC_ADDR, mcast, 6);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_CHANGE_MAC_ADDR, mac, 6);
	msg(&s, 0, 0xc3, 0, NULL, 0);
	save("dev_crq", "maps_and_strays", &s);

	/* the offload control with bits the small device never offered */
	s.n = 0;
	u8(&s, 1);
	msg(&s, 0, VNIC_CRQ_INIT_CMD, VNIC_CRQ_INIT, NULL, 0);
	msg(&s, 0, VNIC_CRQ_CMD_RSP, VNIC_CMD_VERSION_EXCHANGE, v0 + 1, 1);
	ioba_msg(&s, VNIC_CMD_QUERY_IP_OFFLOAD, 64, FZ_OFFLOAD_OFF);
	u8(&s, 4);
	u8(&s, 2);
	be16(&s, FZ_OFFLOAD_OFF + 8);
	u8(&s, 8);
	bytes(&s, "\1\1\1\1\1\1\1\1", 8);
	ioba_msg(&s, VNIC_CMD_CONTROL_IP_OFFLOAD, 64, FZ_OFFLOAD_OFF);
	ioba_msg(&s, VNIC_CMD_CONTROL_IP_OFFLOAD, 63, FZ_OFFLOAD_OFF);
	ioba_msg(&s, VNIC_CMD_QUERY_IP_OFFLOAD, 64, FZ_CTL_SIZE - 32);
	save("dev_crq", "offload_not_offered", &s);
}

/* --- dev_subcrq ----------------------------------------------------------------------- */

static void d_frame(struct input *s, bool ltb2, uint32_t off, enum fz_frame_kind k,
		    uint16_t payload, bool partial)
{
	u8(s, (uint8_t)(1 | (ltb2 ? 16 : 0) | (partial ? 32 : 0)));
	be24(s, off);
	u8(s, (uint8_t)k);
	be16(s, payload);
	u8(s, (uint8_t)(off + payload));
}

static void d_desc(struct input *s, uint8_t flags1, uint16_t mss, uint8_t nelem)
{
	u8(s, 2);
	u8(s, flags1);
	be16(s, mss);
	u8(s, nelem);
	u8(s, 0);
}

static void d_hdrs(struct input *s, uint8_t flag, uint8_t change, uint8_t val)
{
	u8(s, 3);
	u8(s, flag);
	u8(s, change);
	u8(s, val);
}

enum {
	F_V4 = VNIC_TX_COMP_NEEDED | VNIC_TX_PROT_IPV4,
	F_V6 = VNIC_TX_COMP_NEEDED | VNIC_TX_PROT_IPV6,
	F_CSO = VNIC_TX_CHKSUM_OFFLOAD,
	F_LSO = VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_LSO,
	F_TCP = VNIC_TX_PROT_TCP,
	F_UDP = VNIC_TX_PROT_UDP,
	L3 = VNIC_HDR_DESC_L3,
	L234 = VNIC_HDR_DESC_L2 | VNIC_HDR_DESC_L3 | VNIC_HDR_DESC_L4,
	FLUSH_DIRECT = 5,
	FLUSH_INDIRECT = 5 | 16,
	RUN = 6,
	LINK_DOWN_UNTIL_END = 7 | 16,
	RXADD = 8,
	RXADD_RAW_LEN = 8 | 32,
	INJECT = 9,
	INJECT_FLIP = 9 | 32,
};

static void d_rxadd(struct input *s, uint8_t map, uint32_t off, int8_t delta)
{
	u8(s, RXADD);
	u8(s, map);
	be24(s, off);
	u8(s, (uint8_t)delta);
}

static void d_inject(struct input *s, enum fz_frame_kind k, uint16_t payload)
{
	u8(s, INJECT);
	u8(s, (uint8_t)k);
	be16(s, payload);
	u8(s, (uint8_t)payload);
}

static void corpus_dev_subcrq(void)
{
	struct input s;

	s.n = 0;
	u8(&s, 0);
	d_frame(&s, false, 0, FZ_TCP4, 1000, false);
	d_desc(&s, F_V4 | F_TCP, 0, 1);
	u8(&s, FLUSH_DIRECT);
	u8(&s, RUN);
	save("dev_subcrq", "plain_tcp4_direct", &s);

	s.n = 0;
	u8(&s, 0);
	d_frame(&s, false, 128, FZ_TCP4, 1400, true);
	d_desc(&s, F_V4 | F_TCP | F_CSO, 0, 0);
	d_hdrs(&s, L3, 0, 0);
	u8(&s, FLUSH_INDIRECT);
	save("dev_subcrq", "csum_tcp4_l3_headers", &s);

	s.n = 0;
	u8(&s, 0);
	d_frame(&s, true, 4000, FZ_UDP6, 1200, true);
	d_desc(&s, F_V6 | F_UDP | F_CSO, 0, 0);
	d_hdrs(&s, L234, 0, 0);
	u8(&s, FLUSH_INDIRECT);
	save("dev_subcrq", "csum_udp6_all_headers", &s);

	s.n = 0;
	u8(&s, 0);
	d_frame(&s, false, 0, FZ_TCP4, 30000, true);
	d_desc(&s, F_V4 | F_TCP | F_LSO, 1448, 0);
	d_hdrs(&s, L234, 0, 0);
	u8(&s, FLUSH_INDIRECT);
	u8(&s, RUN);
	d_frame(&s, true, 0, FZ_TCP6, 20000, true);
	d_desc(&s, F_V6 | F_TCP | F_LSO, 1000, 0);
	d_hdrs(&s, L3, 0, 0);
	u8(&s, FLUSH_INDIRECT);
	save("dev_subcrq", "lso_tcp4_tcp6", &s);

	/* MTU 9000, LSO MSS 64: many segments; IPv6 LSO off; a missing header drops */
	s.n = 0;
	u8(&s, 1);
	d_frame(&s, false, 0, FZ_TCP4, 8000, true);
	d_desc(&s, F_V4 | F_TCP | F_LSO, 64, 0);
	d_hdrs(&s, L3, 0, 0);
	u8(&s, FLUSH_INDIRECT);
	u8(&s, RUN);
	d_frame(&s, false, 9000, FZ_UDP4, 20000, true);
	d_desc(&s, F_V4 | F_UDP | F_LSO, 8000, 0);
	d_hdrs(&s, L3, 0, 0);
	d_frame(&s, true, 0, FZ_TCP6, 5000, true);
	d_desc(&s, F_V6 | F_TCP | F_LSO, 1000, 0);
	d_hdrs(&s, L3, 0, 0);
	d_desc(&s, F_V6 | F_TCP | F_LSO, 1000, 1);
	u8(&s, FLUSH_INDIRECT);
	save("dev_subcrq", "jumbo_lso_mss64_and_refusals", &s);

	s.n = 0;
	u8(&s, 0);
	d_frame(&s, false, 64, FZ_TCP4_VLAN, 1400, true);
	d_desc(&s, F_V4 | F_TCP | F_CSO, 0, 0);
	d_hdrs(&s, L234, 0, 0);
	u8(&s, FLUSH_INDIRECT);
	u8(&s, RUN);
	d_frame(&s, false, 2000, FZ_TCP4, 700, true);
	d_desc(&s, F_V4 | F_TCP | F_CSO, 0, 0);
	d_hdrs(&s, L3, 3, 1); /* L3 length one more than the frame's */
	d_desc(&s, F_V4 | F_TCP | F_CSO, 0, 0);
	d_hdrs(&s, L234, 6, 0); /* one extension fewer */
	d_desc(&s, F_V4 | F_TCP | F_CSO, 0, 0);
	d_hdrs(&s, L3, 9, 0x11); /* the flag byte outside the layers */
	u8(&s, FLUSH_INDIRECT);
	d_hdrs(&s, L3, 0, 0); /* orphans */
	u8(&s, FLUSH_INDIRECT);
	save("dev_subcrq", "vlan_and_bad_header_descs", &s);

	/* the descriptor fields one by one out of range */
	s.n = 0;
	u8(&s, 0);
	d_frame(&s, false, 1000, FZ_UDP4, 500, false);
	u8(&s, 2); /* n_sge 2 */
	u8(&s, F_V4 | F_UDP);
	be16(&s, 0);
	u8(&s, 1);
	u8(&s, 2);
	u8(&s, 2);
	u8(&s, 2); /* dma_reg 3 */
	u8(&s, F_V4 | F_UDP);
	be16(&s, 0);
	u8(&s, 1);
	u8(&s, 4);
	be16(&s, 3);
	u8(&s, 2); /* ioba into the gap after LTB 1 */
	u8(&s, F_V4 | F_UDP);
	be16(&s, 0);
	u8(&s, 1);
	u8(&s, 8);
	be64(&s, FZ_LTB1_LEN + 16);
	u8(&s, 2); /* length past the LTB */
	u8(&s, F_V4 | F_UDP);
	be16(&s, 0);
	u8(&s, 1);
	u8(&s, 8 | 64);
	be64(&s, FZ_LTB1_LEN - 100);
	be32(&s, 1500);
	d_desc(&s, F_V4 | F_UDP, 0, 11);	      /* n_crq_elem past the limit */
	d_desc(&s, F_V4 | F_V6 | F_UDP, 0, 1);	      /* v4 and v6 */
	d_desc(&s, F_V4 | F_UDP | VNIC_TX_LSO, 0, 1); /* LSO without checksum offload */
	d_desc(&s, F_V4 | F_UDP | F_LSO, 10, 1);      /* MSS below the floor */
	d_desc(&s, F_V4 | F_UDP | VNIC_TX_VLAN_PRESENT, 0, 1);
	d_desc(&s, VNIC_TX_PROT_IPV4 | F_UDP, 0, 1); /* no COMP_NEEDED */
	u8(&s, 4);				     /* a raw entry of another type */
	u8(&s, 0);
	u8(&s, 0x33);
	zeros(&s, 30);
	u8(&s, FLUSH_INDIRECT);
	d_desc(&s, F_V4 | F_UDP, 0, 3); /* direct, header descriptors never come */
	u8(&s, FLUSH_DIRECT);
	save("dev_subcrq", "descriptor_fields_out_of_range", &s);

	/* twenty frames in LTB 2 in one batch, then the link drops under them */
	s.n = 0;
	u8(&s, 0);
	for (int i = 0; i < 20; i++) {
		d_frame(&s, true, (uint32_t)i * 1600, (enum fz_frame_kind)(i % 4), 600, false);
		d_desc(&s, (i % 4 == 1 || i % 4 == 3 ? F_V6 : F_V4) | (i % 4 < 2 ? F_TCP : F_UDP),
		       0, 1);
	}
	u8(&s, FLUSH_INDIRECT);
	u8(&s, RUN);
	u8(&s, LINK_DOWN_UNTIL_END);
	for (int i = 0; i < 3; i++)
		d_desc(&s, F_V4 | F_TCP, 0, 1);
	u8(&s, FLUSH_INDIRECT);
	save("dev_subcrq", "batch_then_link_down", &s);

	/* rx: buffers in both LTBs, frames of every kind into them */
	s.n = 0;
	u8(&s, 0);
	for (int i = 0; i < 4; i++)
		d_rxadd(&s, FZ_LTB1_MAP, FZ_LTB1_OFF + (uint32_t)i * 2048, 0);
	d_rxadd(&s, FZ_LTB2_MAP, FZ_LTB2_OFF + 100, 20);
	for (int k = 0; k < FZ_KINDS; k++)
		d_inject(&s, (enum fz_frame_kind)k, (uint16_t)(200 * k + 100));
	u8(&s, RUN);
	save("dev_subcrq", "rx_frames_of_every_kind", &s);

	/* rx buffers the device must refuse, between good ones */
	s.n = 0;
	u8(&s, 1);
	d_rxadd(&s, 0, FZ_LTB1_OFF, 0);			/* map id 0 */
	d_rxadd(&s, 3, FZ_LTB1_OFF, 0);			/* never registered */
	d_rxadd(&s, FZ_LTB1_MAP, FZ_LTB1_LEN + 64, 0);	/* in the gap after LTB 1 */
	d_rxadd(&s, FZ_LTB1_MAP, FZ_LTB1_LEN - 100, 0); /* running past LTB 1 */
	d_rxadd(&s, FZ_LTB2_MAP, FZ_LTB2_OFF, -1);	/* shorter than asked */
	u8(&s, RXADD_RAW_LEN);
	u8(&s, FZ_LTB2_MAP);
	be24(&s, FZ_LTB2_OFF);
	be24(&s, 0xffffff); /* the longest the field holds */
	d_rxadd(&s, FZ_LTB2_MAP, FZ_LTB2_OFF + 4096, 0);
	d_inject(&s, FZ_TCP4, 8000);
	d_inject(&s, FZ_UDP4, 100);
	u8(&s, INJECT_FLIP); /* a bad checksum: delivered, flag clear */
	u8(&s, FZ_TCP6);
	be16(&s, 700);
	u8(&s, 1);
	be16(&s, 60);
	u8(&s, 0x40);
	u8(&s, RUN);
	save("dev_subcrq", "rx_buffers_refused", &s);

	/* no buffer, then two on the same memory, then the link down under frames */
	s.n = 0;
	u8(&s, 0);
	d_inject(&s, FZ_TCP4, 64);
	u8(&s, RUN);
	d_rxadd(&s, FZ_LTB1_MAP, 4096, 0);
	d_rxadd(&s, FZ_LTB1_MAP, 4096, 0);
	d_inject(&s, FZ_TCP4, 1000);
	d_inject(&s, FZ_UDP4, 10);
	d_inject(&s, FZ_ICMP4, 30);
	u8(&s, RUN);
	d_rxadd(&s, FZ_LTB1_MAP, 8192, 0);
	u8(&s, LINK_DOWN_UNTIL_END);
	d_inject(&s, FZ_TCP4, 100);
	save("dev_subcrq", "rx_no_buffer_overlap_link_down", &s);
}

/* --- drv_crq -------------------------------------------------------------------------- */

/*
 * Messages the driver sends on the way to a login with one queue each way
 * and a 64-entry ring (driver configuration 0): INIT, VERSION, 13 queries,
 * 6 requests, the rx buffer size, the offload query and control, 3 maps
 * (tx, TSO, rx pools), LOGIN (the 28th), the link up (the 29th).
 */
enum {
	M_VERSION = 2,
	M_FIRST_QUERY = 3,
	M_FIRST_REQUEST = 16,
	M_RXBUF = 22,
	M_QUERY_OFFLOAD = 23,
	M_LOGIN = 28,
	M_LINK_UP = 29,
	M_LINK_DOWN = 30,
};

static void script_to(struct input *s, unsigned int msg_no)
{
	/* one "answer correctly" byte per message before it */
	while (s->n - 2 < msg_no - 1)
		u8(s, FZ_ACT_GOOD);
}

static void drv_head(struct input *s, uint8_t b0, uint8_t b1)
{
	s->n = 0;
	u8(s, b0);
	u8(s, b1);
}

/* Device: 4 queues, 1024 entries, MTU 9000, cautious; MSS 224, no extra rx bytes. */
#define DEV_BIG ((3 << 1) | (3 << 3) | (2 << 5))
#define MSS_224 5

static void corpus_drv_crq(void)
{
	struct input s;

	drv_head(&s, DEV_BIG, MSS_224);
	save("drv_crq", "all_good", &s);

	/* the big driver against a small device: PARTIALSUCCESS rounds */
	drv_head(&s, 1 | (1 << 1) | (1 << 3) | (1 << 5) | 0x80, 2);
	save("drv_crq", "partial_success_rounds", &s);

	drv_head(&s, DEV_BIG, MSS_224);
	u8(&s, FZ_ACT_SILENT);
	save("drv_crq", "init_unanswered", &s);

	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_VERSION);
	u8(&s, FZ_ACT_XOR);
	u8(&s, 3);
	u8(&s, 2);
	save("drv_crq", "version_2", &s);

	/* a capability answer replaced: maximum queues zero, then a huge MTU */
	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_FIRST_QUERY + 2);
	u8(&s, FZ_ACT_RAW);
	u8(&s, VNIC_CRQ_CMD_RSP);
	u8(&s, VNIC_CMD_QUERY_CAPABILITY_RSP);
	be16(&s, VNIC_CAP_MAX_TX_QUEUES);
	be64(&s, 0);
	zeros(&s, 4);
	save("drv_crq", "query_cap_raw", &s);

	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_FIRST_REQUEST + 4);
	u8(&s, FZ_ACT_RAW);
	u8(&s, VNIC_CRQ_CMD_RSP);
	u8(&s, VNIC_CMD_REQUEST_CAPABILITY_RSP);
	be16(&s, VNIC_CAP_REQ_MTU);
	be64(&s, 60);
	u8(&s, VNIC_RC_PARTIALSUCCESS);
	zeros(&s, 3);
	save("drv_crq", "request_mtu_partial_tiny", &s);

	/* the rx buffer size answered with what the protocol's 24 bits allow */
	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_RXBUF);
	u8(&s, FZ_ACT_RAW);
	u8(&s, VNIC_CRQ_CMD_RSP);
	u8(&s, VNIC_CMD_QUERY_CAPABILITY_RSP);
	be16(&s, VNIC_CAP_RX_BUF_SIZE);
	be64(&s, VNIC_RX_ADD_MAX_LEN);
	zeros(&s, 4);
	save("drv_crq", "rx_buf_size_24_bits", &s);

	/*
	 * 1 MiB buffers: no frame vnic handles needs them, yet the driver
	 * carved its rx pool and its host packets out of them (a device could
	 * make it allocate gigabytes). Kept as the regression input.
	 */
	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_RXBUF);
	u8(&s, FZ_ACT_RAW);
	u8(&s, VNIC_CRQ_CMD_RSP);
	u8(&s, VNIC_CMD_QUERY_CAPABILITY_RSP);
	be16(&s, VNIC_CAP_RX_BUF_SIZE);
	be64(&s, 1 << 20);
	zeros(&s, 4);
	save("drv_crq", "rx_buf_size_1mib", &s);

	/* the offload query's buffer: a bad length, LSO offered with a zero MSS */
	drv_head(&s, DEV_BIG, 0);
	script_to(&s, M_QUERY_OFFLOAD);
	u8(&s, FZ_ACT_BUF | (1 << 5));
	u8(&s, 36);
	u8(&s, 0);
	u8(&s, 37);
	u8(&s, 0);
	save("drv_crq", "offload_mss_zero", &s);

	/* the login response: counts, offsets and handles changed */
	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_LOGIN);
	u8(&s, FZ_ACT_BUF | (3 << 5));
	u8(&s, 11);
	u8(&s, 2);
	u8(&s, 15);
	u8(&s, 0xff);
	u8(&s, 27);
	u8(&s, 0x10);
	u8(&s, 35);
	u8(&s, 0);
	save("drv_crq", "login_rsp_hostile", &s);

	/* unsolicited messages: a transport event mid-bring-up, then an INIT once open */
	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_FIRST_QUERY + 5);
	u8(&s, FZ_ACT_INJECT);
	u8(&s, VNIC_CRQ_XPORT_EVENT);
	u8(&s, VNIC_XPORT_FAILOVER);
	zeros(&s, 14);
	save("drv_crq", "xport_mid_bringup", &s);

	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_LINK_UP);
	u8(&s, FZ_ACT_INJECT | FZ_ACT_TWICE);
	u8(&s, VNIC_CRQ_INIT_CMD);
	u8(&s, VNIC_CRQ_INIT);
	zeros(&s, 14);
	save("drv_crq", "init_when_open", &s);

	/* answers twice, and the close left unanswered */
	drv_head(&s, DEV_BIG, MSS_224);
	for (int i = 0; i < M_LINK_UP; i++)
		u8(&s, i % 5 == 3 ? FZ_ACT_TWICE : FZ_ACT_GOOD);
	u8(&s, FZ_ACT_SILENT);
	save("drv_crq", "twice_and_silent_close", &s);

	/* a MAP answered with an error, then the error indication */
	drv_head(&s, DEV_BIG, MSS_224);
	script_to(&s, M_LOGIN - 2);
	u8(&s, FZ_ACT_XOR | FZ_ACT_INJECT);
	u8(&s, VNIC_CRQ_CMD_RSP);
	u8(&s, VNIC_CMD_ERROR_INDICATION);
	zeros(&s, 14);
	u8(&s, 12);
	u8(&s, VNIC_RC_NOMEMORY);
	save("drv_crq", "map_nomem", &s);
}

/* --- drv_comp ------------------------------------------------------------------------- */

static void c_xmit(struct input *s, uint8_t q, uint8_t kind, uint16_t payload, uint16_t gso)
{
	u8(s, 0);
	u8(s, q);
	u8(s, kind);
	be16(s, payload);
	u8(s, (uint8_t)payload);
	if (kind & 16)
		be16(s, gso);
}

/* A tx completion of n descriptors taken (selectors 0..), rc 0. */
static void c_txcomp(struct input *s, uint8_t q, uint8_t num, const uint8_t *sel)
{
	u8(s, 2);
	u8(s, q);
	u8(s, num);
	for (int i = 0; i < VNIC_TX_COMP_MAX; i++) {
		u8(s, sel[i]);
		if (sel[i] & 0x80)
			be32(s, 0x80000000u | sel[i]);
		u8(s, 0);
	}
}

static void c_rxcomp(struct input *s, uint8_t tag, uint8_t q, uint8_t sel, uint8_t flags,
		     uint16_t off, enum fz_frame_kind k, uint16_t payload, int16_t delta)
{
	u8(s, (uint8_t)(3 | tag));
	u8(s, q);
	u8(s, sel);
	if (sel & 0x80)
		be64(s, 0x1234);
	u8(s, flags);
	if (tag & 8)
		be16(s, off);
	else
		u8(s, (uint8_t)off);
	u8(s, (uint8_t)k);
	be16(s, payload);
	u8(s, 7);
	if (tag & 16)
		be16(s, (uint16_t)delta);
	u8(s, 0);
	be16(s, 0);
}

/* One buffer of a large receive (configuration 3): the TCI is lro_mss, flags' low bits the type. */
static void c_rxcomp_lro(struct input *s, uint8_t sel, uint8_t flags, enum fz_frame_kind k,
			 uint16_t payload, uint16_t mss, uint8_t rc)
{
	u8(s, 3);
	u8(s, 0);
	u8(s, sel);
	u8(s, flags);
	u8(s, 0);
	u8(s, (uint8_t)k);
	be16(s, payload);
	u8(s, 7);
	u8(s, rc);
	be16(s, mss);
}

enum { C_RUN = 1, C_DONE = 5, C_REOPEN = 6, C_XPORT = 6 | 0x18, PARTIAL = 8, GSO = 16, MORE = 32 };

static void corpus_drv_comp(void)
{
	static const uint8_t first5[5] = {0x40, 0x40, 0x40, 0x40, 0x40};
	static const uint8_t dup[5] = {0, 0, 0x40, 0x40, 0xc0};
	uint8_t good = VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD;
	struct input s;

	s.n = 0;
	u8(&s, 0);
	c_xmit(&s, 0, FZ_TCP4, 100, 0);
	c_xmit(&s, 1, FZ_UDP6 | PARTIAL, 300, 0);
	u8(&s, C_RUN);
	u8(&s, C_DONE);
	u8(&s, C_RUN);
	save("drv_comp", "xmit_and_complete", &s);

	/* completions that name the same slot twice, out of range, too many */
	s.n = 0;
	u8(&s, 0);
	c_xmit(&s, 0, FZ_TCP4 | MORE, 100, 0);
	c_xmit(&s, 0, FZ_TCP4 | MORE, 200, 0);
	c_xmit(&s, 0, FZ_TCP6, 300, 0);
	u8(&s, C_RUN);
	c_txcomp(&s, 0, 3, dup);
	c_txcomp(&s, 0, 0, first5);
	c_txcomp(&s, 0, 6, first5);
	u8(&s, C_RUN);
	save("drv_comp", "tx_double_and_bad_counts", &s);

	/* a batch still being built completed by a guessing device */
	s.n = 0;
	u8(&s, 0);
	c_xmit(&s, 0, FZ_TCP4 | PARTIAL | MORE, 1000, 0);
	{
		const uint8_t raw[5] = {0x80, 0x81, 0x82, 0x83, 0x84};

		u8(&s, 2);
		u8(&s, 0);
		u8(&s, 5);
		for (int i = 0; i < 5; i++) {
			u8(&s, raw[i]);
			be32(&s, (uint32_t)i);
			u8(&s, 0);
		}
	}
	u8(&s, C_RUN);
	c_xmit(&s, 0, FZ_TCP4, 100, 0);
	u8(&s, C_RUN);
	save("drv_comp", "guessed_correlators", &s);

	/* each completed before the next: BQL holds the queue after a superpacket */
	s.n = 0;
	u8(&s, 1);
	c_xmit(&s, 0, FZ_TCP4 | GSO, 20000, 1448);
	u8(&s, C_RUN);
	u8(&s, C_DONE);
	u8(&s, C_RUN);
	c_xmit(&s, 0, FZ_TCP6 | GSO, 8000, 8000);
	u8(&s, C_RUN);
	u8(&s, C_DONE);
	u8(&s, C_RUN);
	c_xmit(&s, 0, FZ_UDP4 | GSO, 4000, 1000);
	u8(&s, C_RUN);
	u8(&s, C_DONE | 8);
	u8(&s, C_RUN);
	c_xmit(&s, 0, FZ_TCP4 | GSO, 3000, 100);
	u8(&s, C_RUN);
	save("drv_comp", "gso_headers_everywhere", &s);

	/* rx: a good frame, the same buffer again, offsets and lengths past the buffer */
	s.n = 0;
	u8(&s, 0);
	c_rxcomp(&s, 0, 0, 0x40, good, 0, FZ_TCP4, 500, 0);
	c_rxcomp(&s, 0, 1, 0, good, 0, FZ_UDP6, 200, 0);
	u8(&s, C_RUN);
	c_rxcomp(&s, 8 | 16, 0, 0, 0, 1500, FZ_TCP4, 100, 200);
	c_rxcomp(&s, 16, 0, 1, 0, 0, FZ_TCP4, 100, -60);
	c_rxcomp(&s, 0, 0, 0x80, 0, 0, FZ_TCP4, 100, 0);
	u8(&s, C_RUN);
	save("drv_comp", "rx_good_twice_and_past", &s);

	s.n = 0;
	u8(&s, 2);
	for (int i = 0; i < 20; i++)
		c_xmit(&s, 0, (uint8_t)(FZ_TCP4 | (i % 3 ? MORE : 0)), (uint16_t)(100 * i), 0);
	u8(&s, 4);
	u8(&s, C_RUN);
	save("drv_comp", "lazy_timer", &s);

	s.n = 0;
	u8(&s, 3);
	c_xmit(&s, 0, FZ_UDP4 | PARTIAL, 100, 0);
	c_xmit(&s, 0, FZ_TCP4 | GSO, 9000, 1448);
	u8(&s, C_RUN);
	u8(&s, C_XPORT);
	c_rxcomp(&s, 0, 0, 0x40, good, 0, FZ_TCP4, 100, 0);
	u8(&s, C_REOPEN);
	c_xmit(&s, 0, FZ_TCP4, 100, 0);
	save("drv_comp", "orphan_xport_reopen", &s);

	/* large receives: one in two buffers, one cut short by an rc, one with a lying type */
	s.n = 0;
	u8(&s, 3);
	c_rxcomp_lro(&s, 0x40, 0, FZ_TCP4, 1400, 0, 0);
	c_rxcomp_lro(&s, 0x40, VNIC_RXC_END_FRAME | VNIC_RXC_IP_CHKSUM_GOOD | 1, FZ_TCP4, 600, 1400,
		     0);
	u8(&s, C_RUN);
	c_rxcomp_lro(&s, 0x40, 0, FZ_TCP6, 1400, 0, 0);
	c_rxcomp_lro(&s, 0x40, 0, FZ_TCP6, 100, 0, 0xe0 | VNIC_RC_PARAMETER);
	c_rxcomp_lro(&s, 0x40, VNIC_RXC_END_FRAME | 2, FZ_TCP6, 600, 1300, 0);
	c_rxcomp_lro(&s, 0x40, VNIC_RXC_END_FRAME | 3, FZ_TCP4, 1000, 500, 0);
	u8(&s, C_RUN);
	save("drv_comp", "large_receive", &s);
}

/* --- ctl_request ---------------------------------------------------------------------- */

static void text(const char *name, const char *t, size_t n)
{
	struct input s;

	s.n = 0;
	bytes(&s, t, n);
	save("ctl_request", name, &s);
}

static void corpus_ctl_request(void)
{
	char lng[258];

	text("ping", "ping\n", 5);
	text("stats", "stats\n", 6);
	text("stats_json_crlf", "stats json\r\n", 12);
	text("stats_eof", "stats", 5);
	text("empty", "\n", 1);
	text("nul", "st\0ts\n", 6);
	text("after_newline", "ping\nstats json\n", 16);
	text("show", "show\n", 5);
	text("show_json", "show json\n", 10);
	text("set_two", "set rx-gro on tx-mode direct\n", 29);
	text("set_alone", "set \n", 5);
	memset(lng, 'a', sizeof(lng));
	text("too_long", lng, sizeof(lng));
	lng[256] = '\r';
	lng[257] = '\n';
	text("longest", lng, sizeof(lng));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR (fuzz/corpus)\n", argv[0]);
		return 2;
	}
	root = argv[1];
	corpus_tap_vnet();
	corpus_dev_crq();
	corpus_dev_subcrq();
	corpus_drv_crq();
	corpus_drv_comp();
	corpus_ctl_request();
	return 0;
}
