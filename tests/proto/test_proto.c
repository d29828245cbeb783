// SPDX-License-Identifier: MIT
/*
 * The wire contract byte by byte: every message and entry type is encoded
 * through the structs and helpers and compared with golden bytes written out
 * by hand from the offsets documented in proto.h (docs/PROTOCOL.md sections
 * 6-8), then decoded back from those bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/proto.h"

static void test_be_helpers_exact_bytes(void **state)
{
	uint8_t buf[16];
	struct vnic_be16 *b16;
	struct vnic_be24 *b24;
	struct vnic_be32 *b32;
	struct vnic_be64 *b64;
	static const uint8_t be64_bytes[8] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };

	(void)state;
	/* odd offsets: the helpers must not assume alignment */
	memset(buf, 0xEE, sizeof(buf));
	b16 = (struct vnic_be16 *)(buf + 1);
	vnic_be16_put(b16, 0x1234);
	assert_int_equal(buf[1], 0x12);
	assert_int_equal(buf[2], 0x34);
	assert_int_equal(buf[0], 0xEE);
	assert_int_equal(buf[3], 0xEE);
	assert_int_equal(vnic_be16_get(b16), 0x1234);

	b32 = (struct vnic_be32 *)(buf + 3);
	vnic_be32_put(b32, 0xA1B2C3D4u);
	assert_memory_equal(buf + 3, ((uint8_t[]){ 0xA1, 0xB2, 0xC3, 0xD4 }), 4);
	assert_int_equal(vnic_be32_get(b32), 0xA1B2C3D4u);

	b64 = (struct vnic_be64 *)(buf + 7);
	vnic_be64_put(b64, 0x0102030405060708ull);
	assert_memory_equal(buf + 7, be64_bytes, 8);
	assert_true(vnic_be64_get(b64) == 0x0102030405060708ull);
	assert_int_equal(buf[15], 0xEE);

	/* 24-bit: three bytes exactly, neighbours untouched; high byte dropped */
	memset(buf, 0x55, sizeof(buf));
	b24 = (struct vnic_be24 *)(buf + 5);
	vnic_be24_put(b24, 0xABCDEF);
	assert_memory_equal(buf + 4, ((uint8_t[]){ 0x55, 0xAB, 0xCD, 0xEF, 0x55 }), 5);
	assert_int_equal(vnic_be24_get(b24), 0xABCDEF);
	vnic_be24_put(b24, 0x7FABCDEF);
	assert_int_equal(vnic_be24_get(b24), 0xABCDEF);
	assert_int_equal(buf[4], 0x55);
	assert_int_equal(buf[8], 0x55);
}

static void test_sizes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct vnic_crq), 16);
	assert_int_equal(sizeof(union vnic_subcrq_entry), 32);
	assert_int_equal(sizeof(struct vnic_login_buf), 40);
	assert_int_equal(sizeof(struct vnic_login_rsp_buf), 32);
	assert_int_equal(sizeof(struct vnic_ip_offload), 64);
	assert_int_equal(VNIC_MAX_HDR_BYTES, 256);
	assert_int_equal(VNIC_LOGIN_BUF_MAX, 40 + 2 * 16 * 4);
	/* arrays of messages and entries pack with no padding */
	assert_int_equal(sizeof(struct vnic_crq[4]), 64);
	assert_int_equal(sizeof(union vnic_subcrq_entry[4]), 128);
}

static void test_crq_init_and_transport(void **state)
{
	struct vnic_crq m;
	static const uint8_t init[16] = { 0xC0, 0x01 };
	static const uint8_t init_done[16] = { 0xC0, 0x02 };
	static const uint8_t failover[16] = { 0xFF, 0x08 };

	(void)state;
	memset(&m, 0, sizeof(m));
	m.init.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	assert_memory_equal(m.raw, init, 16);
	m.init.type = VNIC_CRQ_INIT_COMPLETE;
	assert_memory_equal(m.raw, init_done, 16);

	memcpy(m.raw, failover, 16);
	assert_int_equal(m.first, VNIC_CRQ_XPORT_EVENT);
	assert_int_equal(m.xport.reason, VNIC_XPORT_FAILOVER);
	assert_int_equal(m.cmd, VNIC_XPORT_FAILOVER); /* the generic view reads byte 1 too */
}

static void test_crq_version_exchange(void **state)
{
	struct vnic_crq m;
	static const uint8_t cmd[16] = { 0x80, 0x01, 0x00, 0x01 };
	static const uint8_t rsp[16] = { 0x80, 0x81, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x09 };

	(void)state;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_VERSION_EXCHANGE;
	vnic_be16_put(&m.version.version, VNIC_PROTO_VERSION);
	assert_memory_equal(m.raw, cmd, 16);

	memcpy(m.raw, rsp, 16);
	assert_int_equal(m.cmd, VNIC_CMD_VERSION_EXCHANGE | VNIC_CMD_RSP);
	assert_int_equal(m.cmd, VNIC_CMD_VERSION_EXCHANGE_RSP);
	assert_int_equal(vnic_be16_get(&m.version.version), 1);
	assert_int_equal(m.rc, VNIC_RC_INVALIDLENGTH);
	assert_int_equal(m.version.rc, VNIC_RC_INVALIDLENGTH);
}

static void test_crq_capability(void **state)
{
	struct vnic_crq m;
	/* REQUEST_CAPABILITY(REQ_MTU = 1514), as in docs/PROTOCOL.md section 7 */
	static const uint8_t req[16] = { 0x80, 0x03, 0x00, 0x15, 0, 0, 0, 0, 0, 0, 0x05, 0xEA };
	/* the answer: PARTIALSUCCESS, granting 1500 */
	static const uint8_t rsp[16] = { 0x80, 0x83, 0x00, 0x15, 0, 0, 0, 0,
					 0,    0,    0x05, 0xDC, 0x01 };
	/* TX_RX_DESC_REQ number in the trace: 00 00 A0 00 A0 00 00 00 */
	static const uint8_t desc_req[16] = { 0x80, 0x82, 0x00, 0x21, 0x00, 0x00, 0xA0, 0x00,
					      0xA0, 0x00, 0x00, 0x00 };
	uint64_t number;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_REQUEST_CAPABILITY;
	vnic_be16_put(&m.cap.capability, VNIC_CAP_REQ_MTU);
	vnic_be64_put(&m.cap.number, 1514);
	assert_memory_equal(m.raw, req, 16);

	memcpy(m.raw, rsp, 16);
	assert_int_equal(m.cmd, VNIC_CMD_REQUEST_CAPABILITY_RSP);
	assert_int_equal(vnic_be16_get(&m.cap.capability), VNIC_CAP_REQ_MTU);
	assert_true(vnic_be64_get(&m.cap.number) == 1500);
	assert_int_equal(m.cap.rc, VNIC_RC_PARTIALSUCCESS);

	memcpy(m.raw, desc_req, 16);
	assert_int_equal(vnic_be16_get(&m.cap.capability), VNIC_CAP_TX_RX_DESC_REQ);
	number = vnic_be64_get(&m.cap.number);
	assert_int_equal(vnic_desc_req_get(number, VNIC_DESC_REQ_BYTE_PLAIN), 0);
	assert_int_equal(vnic_desc_req_get(number, VNIC_DESC_REQ_BYTE_CSUM),
			 VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3);
	assert_int_equal(vnic_desc_req_get(number, VNIC_DESC_REQ_BYTE_LSO), 0xA0);
	assert_int_equal(vnic_desc_req_get(number, 8), 0);
	assert_true(vnic_desc_req_make(0, 0xA0, 0xA0) == number);
	/* the exact mask: headers only for LSO, with all three layers */
	number = vnic_desc_req_make(0, 0, 0xF0);
	vnic_be64_put(&m.cap.number, number);
	assert_memory_equal(m.raw + 4, ((uint8_t[]){ 0, 0, 0, 0, 0xF0, 0, 0, 0 }), 8);
}

static void test_crq_login(void **state)
{
	struct vnic_crq m;
	static const uint8_t cmd[16] = { 0x80, 0x04, 0x00, 0xA8, 0,    0,
					 0,    0,    0x12, 0x34, 0x50, 0x00 };
	static const uint8_t rsp[16] = { 0x80, 0x84, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x06 };

	(void)state;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LOGIN;
	vnic_be16_put(&m.login.len, VNIC_LOGIN_BUF_MAX);
	vnic_be64_put(&m.login.ioba, 0x12345000);
	assert_memory_equal(m.raw, cmd, 16);
	assert_true(vnic_be64_get(&m.login.ioba) == 0x12345000);

	memcpy(m.raw, rsp, 16);
	assert_int_equal(m.cmd, VNIC_CMD_LOGIN_RSP);
	assert_int_equal(m.login.rc, VNIC_RC_ABORTED);
}

static void test_crq_link_state(void **state)
{
	struct vnic_crq m;
	static const uint8_t query[16] = { 0x80, 0x0C, 0xFF };
	static const uint8_t rsp[16] = { 0x80, 0x8C, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00 };
	static const uint8_t ind[16] = { 0x80, 0x12, 0, 0, 0x01, 0x00 };

	(void)state;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LOGICAL_LINK_STATE;
	m.link_state.state = VNIC_LINK_QUERY;
	assert_memory_equal(m.raw, query, 16);

	memcpy(m.raw, rsp, 16);
	assert_int_equal(m.cmd, VNIC_CMD_LOGICAL_LINK_STATE_RSP);
	assert_int_equal(m.link_state.state, VNIC_LINK_UP);
	assert_int_equal(m.link_state.rc, VNIC_RC_SUCCESS);

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LINK_STATE_INDICATION;
	m.link_ind.phys_link_state = VNIC_LINK_UP;
	m.link_ind.logical_link_state = VNIC_LINK_DOWN;
	assert_memory_equal(m.raw, ind, 16);
}

static void test_crq_ip_offload_and_map(void **state)
{
	struct vnic_crq m;
	static const uint8_t query[16] = { 0x80, 0x18, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0x20, 0x00 };
	static const uint8_t control[16] = { 0x80, 0x19, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0x30, 0x00 };
	static const uint8_t map[16] = { 0x80, 0x1E, 0x07, 0x00, 0x00, 0x80, 0x00, 0x00,
					 0xFF, 0xFF, 0xF0, 0x00 };
	static const uint8_t map_rsp[16] = { 0x80, 0x9E, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08 };
	static const uint8_t unmap[16] = { 0x80, 0x1F, 0x07 };

	(void)state;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_QUERY_IP_OFFLOAD;
	vnic_be16_put(&m.ip_offload.len, sizeof(struct vnic_ip_offload));
	vnic_be64_put(&m.ip_offload.ioba, 0x2000);
	assert_memory_equal(m.raw, query, 16);
	/* CONTROL uses the same layout (ibmvnic's swaps len and ioba) */
	m.cmd = VNIC_CMD_CONTROL_IP_OFFLOAD;
	vnic_be64_put(&m.ip_offload.ioba, 0x3000);
	assert_memory_equal(m.raw, control, 16);

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_REQUEST_MAP;
	m.map.map_id = 7;
	vnic_be32_put(&m.map.len, VNIC_ONE_LTB_SIZE);
	vnic_be32_put(&m.map.ioba, 0xFFFFF000u); /* the highest page below VNIC_IOBA_LIMIT */
	assert_memory_equal(m.raw, map, 16);

	memcpy(m.raw, map_rsp, 16);
	assert_int_equal(m.cmd, VNIC_CMD_REQUEST_MAP_RSP);
	assert_int_equal(m.map.map_id, 7);
	assert_int_equal(m.map.rc, VNIC_RC_INVALIDIOBA);

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_REQUEST_UNMAP;
	m.map.map_id = 7;
	assert_memory_equal(m.raw, unmap, 16);
}

static void test_crq_error_and_mac(void **state)
{
	struct vnic_crq m;
	static const uint8_t err[16] = { 0x80, 0x08, 0x80, 0, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x06 };
	static const uint8_t mac[16] = { 0x80, 0x93, 0x02, 0x00, 0x5E, 0x10, 0x20, 0x30,
					 0, 0, 0, 0, 0x02 };

	(void)state;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_ERROR_INDICATION;
	m.error.flags = VNIC_ERR_FATAL;
	vnic_be32_put(&m.error.error_id, 0xDEADBEEF);
	vnic_be16_put(&m.error.cause, VNIC_ERR_CAUSE_LOW_MEMORY);
	assert_memory_equal(m.raw, err, 16);

	memcpy(m.raw, mac, 16);
	assert_int_equal(m.cmd, VNIC_CMD_CHANGE_MAC_ADDR_RSP);
	assert_memory_equal(m.mac.mac, ((uint8_t[]){ 0x02, 0x00, 0x5E, 0x10, 0x20, 0x30 }), 6);
	assert_int_equal(m.mac.rc, VNIC_RC_PERMISSION);
}

static void test_rc_codes(void **state)
{
	(void)state;
	/* docs/PROTOCOL.md sections 5 and 6: the numbers are part of the wire contract */
	assert_int_equal(VNIC_RC_SUCCESS, 0);
	assert_int_equal(VNIC_RC_PARTIALSUCCESS, 1);
	assert_int_equal(VNIC_RC_PARAMETER, 4);
	assert_int_equal(VNIC_RC_ABORTED, 6);
	assert_int_equal(VNIC_RC_UNSUPPORTEDOPTION, 10);
	assert_int_equal(VNIC_H_SUCCESS, 0);
	assert_int_equal(VNIC_H_BUSY, 1);
	assert_int_equal(VNIC_H_CLOSED, 2);
	assert_int_equal(VNIC_H_PARAMETER, -4);
	assert_int_equal(VNIC_H_DROPPED, -12);
	assert_int_equal(VNIC_CAP_TX_RX_DESC_REQ, 33);
	assert_int_equal(VNIC_CAP_REQ_MTU, 21);
}

static void test_login_buffers(void **state)
{
	uint8_t buf[VNIC_LOGIN_BUF_MAX];
	struct vnic_login_buf *l = (struct vnic_login_buf *)buf;
	struct vnic_login_rsp_buf *r;
	struct vnic_be32 *handles;
	/* 1 tx and 1 rx completion ring: header, then two BE32 handles */
	static const uint8_t golden[48] = {
		0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x01, /* len 48, version 1 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x28, /* 1 txcomp @40 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2C, /* 1 rxcomp @44 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x00, /* login_rsp_ioba 0x5000 */
		0x00, 0x00, 0x00, 0xA0, 0x00, 0x00, 0x00, 0x00, /* login_rsp_len 160 */
		0x00, 0x00, 0x01, 0x41, 0x00, 0x00, 0x01, 0x82, /* handles 0x141, 0x182 */
	};
	static const uint8_t rsp_golden[40] = {
		0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x01, /* len 40, version 1 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x20, /* 1 txsubm @32 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x24, /* 1 rxadd @36 */
		0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, /* rx_buf_size 2048 */
		0x00, 0x00, 0x00, 0xC3, 0x00, 0x00, 0x01, 0x04, /* handles 0xC3, 0x104 */
	};

	(void)state;
	memset(buf, 0, sizeof(buf));
	vnic_be32_put(&l->len, 48);
	vnic_be32_put(&l->version, VNIC_LOGIN_VERSION);
	vnic_be32_put(&l->num_txcomp_subcrqs, 1);
	vnic_be32_put(&l->off_txcomp_subcrqs, sizeof(*l));
	vnic_be32_put(&l->num_rxcomp_subcrqs, 1);
	vnic_be32_put(&l->off_rxcomp_subcrqs, sizeof(*l) + 4);
	vnic_be64_put(&l->login_rsp_ioba, 0x5000);
	vnic_be32_put(&l->login_rsp_len, VNIC_LOGIN_RSP_BUF_MAX);
	handles = (struct vnic_be32 *)(buf + vnic_be32_get(&l->off_txcomp_subcrqs));
	vnic_be32_put(&handles[0], 0x141);
	handles = (struct vnic_be32 *)(buf + vnic_be32_get(&l->off_rxcomp_subcrqs));
	vnic_be32_put(&handles[0], 0x182);
	assert_memory_equal(buf, golden, sizeof(golden));

	memset(buf, 0, sizeof(buf));
	memcpy(buf, rsp_golden, sizeof(rsp_golden));
	r = (struct vnic_login_rsp_buf *)buf;
	assert_int_equal(vnic_be32_get(&r->len), 40);
	assert_int_equal(vnic_be32_get(&r->num_txsubm_subcrqs), 1);
	assert_int_equal(vnic_be32_get(&r->num_rxadd_subcrqs), 1);
	assert_int_equal(vnic_be32_get(&r->rx_buf_size), 2048);
	handles = (struct vnic_be32 *)(buf + vnic_be32_get(&r->off_txsubm_subcrqs));
	assert_int_equal(vnic_be32_get(handles), 0xC3);
	handles = (struct vnic_be32 *)(buf + vnic_be32_get(&r->off_rxadd_subcrqs));
	assert_int_equal(vnic_be32_get(handles), 0x104);
}

static void test_ip_offload_buffer(void **state)
{
	struct vnic_ip_offload o;
	const uint8_t *b = (const uint8_t *)&o;

	(void)state;
	memset(&o, 0, sizeof(o));
	vnic_be32_put(&o.len, sizeof(o));
	vnic_be32_put(&o.version, VNIC_IP_OFFLOAD_VERSION);
	o.ipv4_chksum = 1;
	o.tcp_ipv6_chksum = 1;
	o.large_tx_ipv4 = 1;
	o.large_rx_ipv6 = 1;
	vnic_be16_put(&o.max_tcp_hdr_size, 60);
	vnic_be32_put(&o.max_large_tx_size, VNIC_TSO_BUF_SIZE);
	vnic_be16_put(&o.min_large_tx_mss, 224);
	o.ipv6_ext_hdr = VNIC_IPV6_EXT_FULL;
	assert_memory_equal(b, ((uint8_t[]){ 0, 0, 0, 64, 0, 0, 0, 1 }), 8);
	assert_int_equal(b[8], 1);	/* ipv4_chksum */
	assert_int_equal(b[9], 0);
	assert_int_equal(b[11], 1);	/* tcp_ipv6_chksum */
	assert_int_equal(b[14], 1);	/* large_tx_ipv4 */
	assert_int_equal(b[17], 1);	/* large_rx_ipv6 */
	assert_memory_equal(b + 24, ((uint8_t[]){ 0x00, 0x3C }), 2);
	assert_memory_equal(b + 28, ((uint8_t[]){ 0x00, 0x01, 0x00, 0x00 }), 4);
	assert_memory_equal(b + 36, ((uint8_t[]){ 0x00, 0xE0 }), 2);
	assert_int_equal(b[40], 0xFF);
}

static void test_tx_desc(void **state)
{
	union vnic_subcrq_entry e;
	static const uint8_t golden[32] = {
		0x80, 0x10, 0x02, 0x01, 0xF4, 0x00, 0x05, 0xA8, /* COMP|CSO|LSO|TCP|IPV4 */
		0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x2A, /* correlator TSO|42 */
		0x00, 0x64, 0x00, 0x03, 0x00, 0x00, 0xFF, 0xFF, /* vlan 100, map 3, len 65535 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x30, 0x40, /* ioba */
	};

	(void)state;
	memset(&e, 0, sizeof(e));
	e.tx.first = VNIC_SUBCRQ_VALID;
	e.tx.type = VNIC_TX_DESC;
	e.tx.n_crq_elem = 2;
	e.tx.n_sge = 1;
	e.tx.flags1 = VNIC_TX_COMP_NEEDED | VNIC_TX_CHKSUM_OFFLOAD | VNIC_TX_LSO |
		      VNIC_TX_PROT_TCP | VNIC_TX_PROT_IPV4;
	vnic_be16_put(&e.tx.mss, 1448);
	vnic_be32_put(&e.tx.correlator, VNIC_TX_CORR_TSO | 42);
	vnic_be16_put(&e.tx.vlan_id, 100);
	vnic_be16_put(&e.tx.dma_reg, 3);
	vnic_be32_put(&e.tx.sge_len, 65535);
	vnic_be64_put(&e.tx.ioba, 0x123040);
	assert_memory_equal(e.raw, golden, 32);
	assert_int_equal(e.first, VNIC_SUBCRQ_VALID);
	assert_int_equal(e.generic.type, VNIC_TX_DESC);
}

static void test_hdr_descs(void **state)
{
	union vnic_subcrq_entry e;
	uint8_t hdrs[54];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(hdrs); i++)
		hdrs[i] = (uint8_t)i;
	memset(&e, 0, sizeof(e));
	e.hdr.first = VNIC_SUBCRQ_VALID;
	e.hdr.type = VNIC_HDR_DESC;
	e.hdr.len = sizeof(hdrs);
	e.hdr.l2_len = 14;
	vnic_be16_put(&e.hdr.l3_len, 20);
	e.hdr.l4_len = 20;
	e.hdr.flag = VNIC_HDR_DESC_L2 | VNIC_HDR_DESC_L3 | VNIC_HDR_DESC_L4;
	memcpy(e.hdr.data, hdrs, VNIC_HDR_DESC_BYTES);
	assert_memory_equal(e.raw, ((uint8_t[]){ 0x80, 0x11, 54, 14, 0x00, 20, 20, 0xE0 }), 8);
	assert_memory_equal(e.raw + 8, hdrs, 24);
	/* the flag is the requirement bits shifted left by one (docs/PROTOCOL.md section 8.2) */
	assert_int_equal(VNIC_HDR_DESC_L3, VNIC_DESC_REQ_L3 << 1);

	memset(&e, 0, sizeof(e));
	e.hdr_ext.first = VNIC_SUBCRQ_VALID;
	e.hdr_ext.type = VNIC_HDR_EXT_DESC;
	e.hdr_ext.len = 29;
	memcpy(e.hdr_ext.data, hdrs + 24, 29);
	assert_memory_equal(e.raw, ((uint8_t[]){ 0x80, 0x12, 29 }), 3);
	assert_memory_equal(e.raw + 3, hdrs + 24, 29);

	assert_int_equal(vnic_hdr_descs_needed(0), 0);
	assert_int_equal(vnic_hdr_descs_needed(1), 1);
	assert_int_equal(vnic_hdr_descs_needed(24), 1);
	assert_int_equal(vnic_hdr_descs_needed(25), 2);
	assert_int_equal(vnic_hdr_descs_needed(53), 2);
	assert_int_equal(vnic_hdr_descs_needed(54), 3);
	assert_int_equal(vnic_hdr_descs_needed(VNIC_MAX_HDR_BYTES), 1 + VNIC_MAX_HDR_EXT_DESCS);
}

static void test_tx_comp(void **state)
{
	union vnic_subcrq_entry e;
	static const uint8_t golden[32] = {
		0x80, 0x02, 0x00, 0x00, 0x00, 0x08, 0, 0, 0, 0, 0, 0, /* 2 comps, rc 0 and 8 */
		0x00, 0x00, 0x00, 0x07, 0x80, 0x00, 0x01, 0x00,       /* correlators 7, TSO|256 */
	};
	unsigned int i;

	(void)state;
	memcpy(e.raw, golden, 32);
	assert_int_equal(e.first, VNIC_SUBCRQ_VALID);
	assert_int_equal(e.tx_comp.num_comps, 2);
	assert_int_equal(vnic_be16_get(&e.tx_comp.rcs[0]), VNIC_RC_SUCCESS);
	assert_int_equal(vnic_be16_get(&e.tx_comp.rcs[1]), VNIC_RC_INVALIDIOBA);
	assert_int_equal(vnic_be32_get(&e.tx_comp.correlators[0]), 7);
	assert_int_equal(vnic_be32_get(&e.tx_comp.correlators[1]), VNIC_TX_CORR_TSO | 256);
	/* the last slots sit at the end of the entry */
	for (i = 0; i < VNIC_TX_COMP_MAX; i++)
		vnic_be32_put(&e.tx_comp.correlators[i], 0x01020300 + i);
	assert_memory_equal(e.raw + 28, ((uint8_t[]){ 0x01, 0x02, 0x03, 0x04 }), 4);
	vnic_be16_put(&e.tx_comp.rcs[4], 0x0A0B);
	assert_memory_equal(e.raw + 10, ((uint8_t[]){ 0x0A, 0x0B }), 2);
}

static void test_rx_comp(void **state)
{
	union vnic_subcrq_entry e;
	static const uint8_t golden[32] = {
		0x80, 0xE8, 0x00, 0x40, 0x00, 0x00, 0x05, 0xEA, /* flags, offset 64, len 1514 */
		0x00, 0x00, 0x7F, 0xFF, 0x12, 0x34, 0x56, 0x78, /* correlator */
		0x20, 0x64, 0x00, 0x00,                         /* vlan_tci, rc */
	};

	(void)state;
	memset(&e, 0, sizeof(e));
	e.rx_comp.first = VNIC_SUBCRQ_VALID;
	e.rx_comp.flags = VNIC_RXC_IP_CHKSUM_GOOD | VNIC_RXC_TCP_UDP_CHKSUM_GOOD |
			  VNIC_RXC_END_FRAME | VNIC_RXC_VLAN_STRIPPED;
	vnic_be16_put(&e.rx_comp.off_frame_data, 64);
	vnic_be32_put(&e.rx_comp.len, 1514);
	vnic_be64_put(&e.rx_comp.correlator, 0x00007FFF12345678ull);
	vnic_be16_put(&e.rx_comp.vlan_tci, 0x2064);
	vnic_be16_put(&e.rx_comp.rc, VNIC_RC_SUCCESS);
	assert_memory_equal(e.raw, golden, 32);
}

static void test_rx_add(void **state)
{
	union vnic_subcrq_entry e;
	static const uint8_t golden[32] = {
		0x80, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x01, /* correlator 0x1001 */
		0x00, 0x20, 0x18, 0x00, 0x05, 0x00, 0x08, 0x00, /* ioba, map 5, len 2048 */
	};

	(void)state;
	memset(&e, 0, sizeof(e));
	e.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&e.rx_add.correlator, 0x1001);
	vnic_be32_put(&e.rx_add.ioba, 0x201800);
	e.rx_add.map_id = 5;
	vnic_be24_put(&e.rx_add.len, 2048);
	assert_memory_equal(e.raw, golden, 32);
	/* decode the largest length */
	e.raw[21] = 0xFF;
	e.raw[22] = 0xFF;
	e.raw[23] = 0xFF;
	assert_int_equal(vnic_be24_get(&e.rx_add.len), VNIC_RX_ADD_MAX_LEN);
	assert_int_equal(e.rx_add.map_id, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_be_helpers_exact_bytes),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_crq_init_and_transport),
		cmocka_unit_test(test_crq_version_exchange),
		cmocka_unit_test(test_crq_capability),
		cmocka_unit_test(test_crq_login),
		cmocka_unit_test(test_crq_link_state),
		cmocka_unit_test(test_crq_ip_offload_and_map),
		cmocka_unit_test(test_crq_error_and_mac),
		cmocka_unit_test(test_rc_codes),
		cmocka_unit_test(test_login_buffers),
		cmocka_unit_test(test_ip_offload_buffer),
		cmocka_unit_test(test_tx_desc),
		cmocka_unit_test(test_hdr_descs),
		cmocka_unit_test(test_tx_comp),
		cmocka_unit_test(test_rx_comp),
		cmocka_unit_test(test_rx_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
