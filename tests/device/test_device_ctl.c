// SPDX-License-Identifier: MIT
/*
 * The device's control path against a hostile test driver (harness.c):
 * bring-up as docs/PROTOCOL.md section 2 describes it, capability
 * negotiation with PARTIALSUCCESS and PARAMETER, commands in the wrong
 * state, every kind of malformed login buffer, offload control, maps, link
 * state, and resets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static int setup(void **state)
{
	static struct h_env env;

	h_create(&env, NULL, NULL);
	*state = &env;
	return 0;
}

static int teardown(void **state)
{
	h_destroy(*state);
	return 0;
}

/* Every capability a driver queries, with the defaults (cable MTU 1500 caps the MTU). */
static void test_bringup_happy_path(void **state)
{
	struct h_env *e = *state;
	static const struct {
		uint16_t cap;
		uint64_t value;
	} caps[] = {
		{VNIC_CAP_MIN_TX_QUEUES, 1},
		{VNIC_CAP_MIN_RX_QUEUES, 1},
		{VNIC_CAP_MAX_TX_QUEUES, 4},
		{VNIC_CAP_MAX_RX_QUEUES, 4},
		{VNIC_CAP_MIN_TX_ENTRIES, 64},
		{VNIC_CAP_MIN_RX_ADD_ENTRIES, 64},
		{VNIC_CAP_MAX_TX_ENTRIES, 1024},
		{VNIC_CAP_MAX_RX_ADD_ENTRIES, 1024},
		{VNIC_CAP_TCP_IP_OFFLOAD, 1},
		{VNIC_CAP_MIN_MTU, 68 + 14},
		{VNIC_CAP_MAX_MTU, 1500 + 14},
		{VNIC_CAP_REQ_MTU, 1500 + 14},
		/* cautious: the bytes of a real server's trace, 00 00 A0 00 A0 00 00 00 */
		{VNIC_CAP_TX_RX_DESC_REQ, 0x0000A000A0000000ull},
		{VNIC_CAP_MAX_IND_DESCS, VNIC_MAX_IND_DESCS},
		{VNIC_CAP_RX_BUF_SIZE, 1536},
	};
	struct vnic_ip_offload ol;
	uint64_t v;
	size_t i;

	h_init(e);
	h_version(e);
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		assert_int_equal(h_query_cap(e, caps[i].cap, &v), VNIC_RC_SUCCESS);
		assert_int_equal(v, caps[i].value);
	}
	/* an id nobody defined */
	assert_int_equal(h_query_cap(e, 999, &v), VNIC_RC_PARAMETER);

	assert_int_equal(h_query_offload(e, &ol), VNIC_RC_SUCCESS);
	assert_int_equal(vnic_be32_get(&ol.len), sizeof(ol));
	assert_int_equal(vnic_be32_get(&ol.version), VNIC_IP_OFFLOAD_VERSION);
	assert_int_equal(ol.ipv4_chksum, 0);
	assert_int_equal(ol.tcp_ipv4_chksum, 1);
	assert_int_equal(ol.udp_ipv6_chksum, 1);
	assert_int_equal(ol.large_tx_ipv4, 1);
	assert_int_equal(ol.large_tx_ipv6, 1);
	assert_int_equal(ol.large_rx_ipv4, 0);
	assert_int_equal(ol.tcp_pseudosum_req, 0);
	assert_int_equal(vnic_be16_get(&ol.min_large_tx_mss), VNIC_DEV_DEFAULT_LSO_MSS);
	assert_int_equal(vnic_be32_get(&ol.max_large_tx_size), VNIC_TSO_BUF_SIZE);

	h_bringup(e, 2, 3);
	assert_int_equal(e->rx_buf_size, 1536);
	assert_int_not_equal(e->txsubm[0], e->txsubm[1]);
	assert_int_not_equal(e->rxadd[0], 0);
	assert_int_equal(e->last_link_ind.link_ind.phys_link_state, VNIC_LINK_UP);
	assert_int_equal(e->last_link_ind.link_ind.logical_link_state, VNIC_LINK_UP);
	assert_int_equal(h_ctr(e, "state"), 3);
	assert_int_equal(h_ctr(e, "link_up"), 1);
	assert_int_equal(h_ctr(e, "neg_tx_queues"), 2);
	assert_int_equal(h_ctr(e, "neg_rx_queues"), 3);
	assert_int_equal(h_ctr(e, "neg_tx_entries"), 256);
	assert_int_equal(h_ctr(e, "neg_mtu"), 1514);
	assert_int_equal(h_ctr(e, "neg_desc_req"), 0x0000A000A0000000ull);
	/* tcp/udp v4/v6 checksum and LSO v4/v6 on, bad_packet_rx on */
	assert_int_equal(h_ctr(e, "neg_offloads"), 0xfc | 1 << 10);
	assert_int_equal(h_link(e, VNIC_LINK_QUERY), VNIC_RC_SUCCESS);
	/* device rings answer the hv: a send to them is accepted */
	{
		union vnic_subcrq_entry d;

		h_tx_desc(e, &d, 7, 0, 60, 0, 0);
		assert_int_equal(h_tx_send(e, 1, &d, 1), VNIC_H_SUCCESS);
	}
}

static void test_version(void **state)
{
	struct h_env *e = *state;
	struct vnic_crq m, r;

	h_init(e);
	h_crq_cmd(&m, VNIC_CMD_VERSION_EXCHANGE);
	vnic_be16_put(&m.version.version, 0);
	assert_int_equal(h_cmd(e, &m, &r), VNIC_RC_PARAMETER);
	/* a newer driver hears our version and decides */
	vnic_be16_put(&m.version.version, 7);
	assert_int_equal(h_cmd(e, &m, &r), VNIC_RC_SUCCESS);
	assert_int_equal(vnic_be16_get(&r.version.version), VNIC_PROTO_VERSION);
}

static void test_partial_success(void **state)
{
	struct h_env *e = *state;
	uint64_t g;

	h_init(e);
	h_version(e);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, 8, &g), VNIC_RC_PARTIALSUCCESS);
	assert_int_equal(g, 4);
	/* not adopted until asked again */
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, g, &g), VNIC_RC_SUCCESS);
	assert_int_equal(g, 4);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_RX_ADD_ENTRIES, 5000, &g),
			 VNIC_RC_PARTIALSUCCESS);
	assert_int_equal(g, 1024);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_MTU, 9014, &g), VNIC_RC_PARTIALSUCCESS);
	assert_int_equal(g, 1514);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_MTU, 1514, &g), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_IND_DESCS, 1ull << 40, &g),
			 VNIC_RC_PARTIALSUCCESS);
	assert_int_equal(g, VNIC_MAX_IND_DESCS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_ENTRIES, 100, &g), VNIC_RC_SUCCESS);
	assert_int_equal(h_query_cap(e, VNIC_CAP_REQ_TX_ENTRIES, &g), VNIC_RC_SUCCESS);
	assert_int_equal(g, 100);
	assert_int_equal(h_ctr(e, "ctl_rc_partialsuccess"), 4);
}

static void test_below_min(void **state)
{
	struct h_env *e = *state;
	uint64_t g;

	h_init(e);
	h_version(e);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, 0, &g), VNIC_RC_PARAMETER);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_ENTRIES, 63, &g), VNIC_RC_PARAMETER);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_MTU, 50, &g), VNIC_RC_PARAMETER);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_IND_DESCS, 0, &g), VNIC_RC_PARAMETER);
	/* a limit is not something a driver requests */
	assert_int_equal(h_request_cap(e, VNIC_CAP_MAX_TX_QUEUES, 2, &g), VNIC_RC_PARAMETER);
	/* nothing changed */
	assert_int_equal(h_query_cap(e, VNIC_CAP_REQ_TX_ENTRIES, &g), VNIC_RC_SUCCESS);
	assert_int_equal(g, 1024);
	assert_int_equal(h_ctr(e, "ctl_rc_parameter"), 5);
}

/*
 * LOGIN as a driver resends it: the response buffer left as it is (h_login
 * clears it first and parses the answer).
 */
static uint8_t login_again(struct h_env *e, uint32_t len)
{
	struct vnic_crq m;

	h_crq_cmd(&m, VNIC_CMD_LOGIN);
	vnic_be16_put(&m.login.len, (uint16_t)len);
	vnic_be64_put(&m.login.ioba, e->ctl_ioba + H_LOGIN_OFF);
	return h_cmd(e, &m, NULL);
}

static bool rsp_buf_is(const struct h_env *e, uint8_t byte)
{
	unsigned int i;

	for (i = 0; i < H_LOGIN_RSP_LEN; i++)
		if (e->ctl[H_LOGIN_RSP_OFF + i] != byte)
			return false;
	return true;
}

/*
 * A LOGIN while logged in never writes the response buffer: the driver owns
 * it from the first answer on and may be reading it while its resend is
 * answered (docs/PROTOCOL.md section 2, "Lost and repeated messages").
 */
static void test_login_again_keeps_rsp(void **state)
{
	struct h_env *e = *state;
	uint32_t len, sub;

	h_bringup(e, 2, 2);
	sub = e->txsubm[1];
	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	len = h_login_build(e);
	memset(e->ctl + H_LOGIN_RSP_OFF, 0xA5, H_LOGIN_RSP_LEN);
	/* the same login, twice: answered, counted, nothing written */
	assert_int_equal(login_again(e, len), VNIC_RC_SUCCESS);
	assert_int_equal(login_again(e, len), VNIC_RC_SUCCESS);
	assert_true(rsp_buf_is(e, 0xA5));
	assert_int_equal(h_ctr(e, "ctl_dup_logins"), 2);
	/* other rings: refused, counted, nothing written */
	e->ctl[H_LOGIN_OFF + sizeof(struct vnic_login_buf) + 2] ^= 0x01;
	assert_int_equal(login_again(e, len), VNIC_RC_INVALIDSTATE);
	assert_true(rsp_buf_is(e, 0xA5));
	assert_int_equal(h_ctr(e, "ctl_login_conflicts"), 1);
	/* link up: refused, nothing written */
	len = h_login_build(e);
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_SUCCESS);
	assert_int_equal(login_again(e, len), VNIC_RC_INVALIDSTATE);
	assert_true(rsp_buf_is(e, 0xA5));
	assert_int_equal(h_ctr(e, "ctl_dup_logins"), 2);
	/* the queues of the first login are still the ones in force */
	assert_int_equal(h_ctr(e, "state"), 3);
	assert_int_equal(e->txsubm[1], sub);
	/* a new session (INIT) makes the buffer the device's to write again */
	h_bringup(e, 2, 2);
	assert_false(rsp_buf_is(e, 0xA5));
}

/*
 * The same rings but another response buffer: not a repeat. Answered
 * SUCCESS, its driver would wait for a response written nowhere; refused,
 * and neither buffer is written (docs/PROTOCOL.md section 2, "Lost and
 * repeated messages").
 */
static void test_login_again_other_rsp(void **state)
{
	enum { OTHER_OFF = 2048 }; /* in ctl, past the offload buffer */
	static const struct {
		const char *name;
		uint32_t off, len; /* the repeat's response buffer, in ctl */
	} cases[] = {
		/* 1 */ {"another ioba", OTHER_OFF, H_LOGIN_RSP_LEN},
		/* 2 */ {"another length", H_LOGIN_RSP_OFF, H_LOGIN_RSP_LEN - 64},
		/* 3 */ {"both", OTHER_OFF, H_LOGIN_RSP_LEN - 64},
		/* 4 */ {"one byte further", H_LOGIN_RSP_OFF + 1, H_LOGIN_RSP_LEN - 1},
	};
	struct h_env *e = *state;
	struct vnic_login_buf *lb = (struct vnic_login_buf *)(e->ctl + H_LOGIN_OFF);
	uint32_t len;
	unsigned int i, j;

	h_bringup(e, 2, 2);
	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = h_login_build(e);
		vnic_be64_put(&lb->login_rsp_ioba, e->ctl_ioba + cases[i].off);
		vnic_be32_put(&lb->login_rsp_len, cases[i].len);
		memset(e->ctl + H_LOGIN_RSP_OFF, 0xA5, H_LOGIN_RSP_LEN);
		memset(e->ctl + OTHER_OFF, 0x5A, H_LOGIN_RSP_LEN);
		if (login_again(e, len) != VNIC_RC_INVALIDSTATE)
			fail_msg("case %u (%s): not refused", i + 1, cases[i].name);
		if (!rsp_buf_is(e, 0xA5))
			fail_msg("case %u (%s): the first response buffer written", i + 1,
				 cases[i].name);
		for (j = 0; j < H_LOGIN_RSP_LEN; j++)
			if (e->ctl[OTHER_OFF + j] != 0x5A)
				fail_msg("case %u (%s): the other buffer written", i + 1,
					 cases[i].name);
		assert_int_equal(h_ctr(e, "ctl_login_conflicts"), i + 1);
	}
	assert_int_equal(h_ctr(e, "ctl_dup_logins"), 0);
	/* the first login is still the one in force, and its repeat still a repeat */
	assert_int_equal(h_ctr(e, "state"), 3);
	assert_int_equal(login_again(e, h_login_build(e)), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "ctl_dup_logins"), 1);
	assert_int_equal(h_ctr(e, "ctl_login_conflicts"), 4);
}

static void test_wrong_state(void **state)
{
	struct h_env *e = *state;
	struct vnic_ip_offload ol;
	struct vnic_crq m;
	uint64_t g;

	/* before INIT */
	h_crq_cmd(&m, VNIC_CMD_VERSION_EXCHANGE);
	vnic_be16_put(&m.version.version, 1);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDSTATE);
	assert_int_equal(h_query_cap(e, VNIC_CAP_MAX_MTU, &g), VNIC_RC_INVALIDSTATE);
	/* after INIT, before VERSION_EXCHANGE */
	h_init(e);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, 1, &g), VNIC_RC_INVALIDSTATE);
	assert_int_equal(h_query_offload(e, &ol), VNIC_RC_INVALIDSTATE);
	assert_int_equal(h_map(e, 1, e->tx_ltb_ioba, 4096), VNIC_RC_INVALIDSTATE);
	h_reg_rings(e, 1, 1);
	assert_int_equal(h_login(e, h_login_build(e)), VNIC_RC_INVALIDSTATE);
	/* negotiating: no link state before login */
	h_version(e);
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_INVALIDSTATE);
	/* logged in: queues are fixed, login is done */
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, 1, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_RX_QUEUES, 1, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_login(e, h_login_build(e)), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, 1, &g), VNIC_RC_INVALIDSTATE);
	/* the same login again (a retry, a duplicate) is answered again ... */
	assert_int_equal(login_again(e, h_login_build(e)), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "ctl_dup_logins"), 1);
	/* ... a login naming other rings is not */
	{
		uint32_t len = h_login_build(e);
		uint8_t *h = e->ctl + H_LOGIN_OFF + sizeof(struct vnic_login_buf);

		h[2] ^= 0x01; /* another generation: a ring that is not the one logged in */
		assert_int_equal(h_login(e, len), VNIC_RC_INVALIDSTATE);
	}
	h_crq_cmd(&m, VNIC_CMD_VERSION_EXCHANGE);
	vnic_be16_put(&m.version.version, 1);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDSTATE);
	/* offloads change only with the link down */
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_SUCCESS);
	assert_int_equal(h_query_offload(e, &ol), VNIC_RC_SUCCESS);
	assert_int_equal(h_control_offload(e, &ol), VNIC_RC_INVALIDSTATE);
	/* not even the same login once the link is up */
	assert_int_equal(h_login(e, h_login_build(e)), VNIC_RC_INVALIDSTATE);
	assert_int_equal(h_link(e, VNIC_LINK_DOWN), VNIC_RC_SUCCESS);
	assert_int_equal(h_control_offload(e, &ol), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "ctl_rc_invalidstate"), 12);
	assert_int_equal(h_ctr(e, "ctl_dup_logins"), 1);
}

static void test_unknown_and_stray(void **state)
{
	struct h_env *e = *state;
	struct vnic_crq m;

	h_init(e);
	h_crq_cmd(&m, 0x55);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_UNKNOWNCOMMAND);
	/* responses and server notifications sent to the server are not answered */
	h_crq_cmd(&m, VNIC_CMD_VERSION_EXCHANGE_RSP);
	assert_true(h_silent(e, &m));
	h_crq_cmd(&m, VNIC_CMD_LINK_STATE_INDICATION);
	assert_true(h_silent(e, &m));
	memset(&m, 0, sizeof(m));
	m.first = 0x81; /* not a class */
	assert_true(h_silent(e, &m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT_COMPLETE; /* the driver has nothing to complete */
	assert_true(h_silent(e, &m));
	assert_int_equal(h_ctr(e, "ctl_ignored"), 4);
	assert_int_equal(h_ctr(e, "ctl_rc_unknowncommand"), 1);
	/* still alive */
	h_version(e);
}

/* --- login ------------------------------------------------------------------------- */

static uint8_t *login(struct h_env *e)
{
	return e->ctl + H_LOGIN_OFF;
}

static void set32(uint8_t *p, size_t off, uint32_t v)
{
	vnic_be32_put((struct vnic_be32 *)(p + off), v);
}

#define LB(field) offsetof(struct vnic_login_buf, field)

static void test_login_malformed(void **state)
{
	struct h_env *e = *state;
	uint32_t len, handle1;
	struct vnic_hv_stats hs;

	h_init(e);
	h_version(e);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, 2, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_RX_QUEUES, 2, NULL), VNIC_RC_SUCCESS);
	h_reg_rings(e, 2, 2);

	/* CRQ length: shorter than the header, longer than any login buffer */
	len = h_login_build(e);
	assert_int_equal(h_login(e, 39), VNIC_RC_INVALIDLENGTH);
	assert_int_equal(h_login(e, VNIC_LOGIN_BUF_MAX + 1), VNIC_RC_INVALIDLENGTH);
	/* buffer length field: too short, beyond what the CRQ said */
	set32(login(e), LB(len), 39);
	assert_int_equal(h_login(e, len), VNIC_RC_INVALIDLENGTH);
	set32(login(e), LB(len), len + 1);
	assert_int_equal(h_login(e, len), VNIC_RC_INVALIDLENGTH);
	/* version */
	h_login_build(e);
	set32(login(e), LB(version), 2);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	/* counts must be what was requested */
	h_login_build(e);
	set32(login(e), LB(num_txcomp_subcrqs), 1);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	h_login_build(e);
	set32(login(e), LB(num_rxcomp_subcrqs), 3);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	/* offsets: inside the header, past the end, wrapping */
	h_login_build(e);
	set32(login(e), LB(off_txcomp_subcrqs), 36);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	h_login_build(e);
	set32(login(e), LB(off_rxcomp_subcrqs), len - 4);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	h_login_build(e);
	set32(login(e), LB(off_rxcomp_subcrqs), 0xfffffffcu);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	/* handles: zero, repeated, both arrays at the same place */
	h_login_build(e);
	set32(login(e), sizeof(struct vnic_login_buf) + 4, 0);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	h_login_build(e);
	handle1 = vnic_be32_get((struct vnic_be32 *)(login(e) + sizeof(struct vnic_login_buf)));
	set32(login(e), sizeof(struct vnic_login_buf) + 12, handle1);
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	h_login_build(e);
	set32(login(e), LB(off_rxcomp_subcrqs), sizeof(struct vnic_login_buf));
	assert_int_equal(h_login(e, len), VNIC_RC_PARAMETER);
	/* response buffer: too small, not mapped */
	h_login_build(e);
	set32(login(e), LB(login_rsp_len), 32 + 4 * 4 - 1);
	assert_int_equal(h_login(e, len), VNIC_RC_INVALIDLENGTH);
	h_login_build(e);
	vnic_be64_put((struct vnic_be64 *)(login(e) + LB(login_rsp_ioba)),
		      e->ctl_ioba + H_CTL_SIZE);
	assert_int_equal(h_login(e, len), VNIC_RC_INVALIDIOBA);
	vnic_be64_put((struct vnic_be64 *)(login(e) + LB(login_rsp_ioba)), 1ull << 40);
	assert_int_equal(h_login(e, len), VNIC_RC_INVALIDIOBA);
	/* the login buffer itself not mapped */
	{
		struct vnic_crq m;

		h_crq_cmd(&m, VNIC_CMD_LOGIN);
		vnic_be16_put(&m.login.len, (uint16_t)len);
		vnic_be64_put(&m.login.ioba, e->ctl_ioba + H_CTL_SIZE - 8);
		assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDIOBA);
	}
	/* nothing was registered by any of them; a good one still works */
	assert_int_equal(h_ctr(e, "state"), 2);
	assert_int_equal(h_login(e, h_login_build(e)), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "state"), 3);
	vnic_hv_stats(e->hv, &hs);
	assert_int_equal(hs.rc_parameter, 0);
}

/* --- offloads --------------------------------------------------------------------- */

static void test_control_offload(void **state)
{
	struct h_env *e = *state;
	struct vnic_ip_offload offer, want;
	struct vnic_crq m;

	/* a device without IPv6 LSO */
	h_destroy(e);
	{
		struct vnic_dev_config cfg;

		vnic_dev_config_default(&cfg);
		cfg.lso_ipv6 = false;
		h_create(e, &cfg, NULL);
	}
	h_init(e);
	h_version(e);
	assert_int_equal(h_query_offload(e, &offer), VNIC_RC_SUCCESS);
	assert_int_equal(offer.large_tx_ipv6, 0);

	want = offer;
	want.large_tx_ipv6 = 1;
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_PARAMETER);
	want = offer;
	want.ipv4_chksum = 1; /* the IP header checksum is never offered */
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_PARAMETER);
	want = offer;
	want.large_rx_ipv4 = 1;
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_PARAMETER);
	want = offer;
	want.tcp_ipv4_chksum = 2;
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_PARAMETER);
	want = offer;
	vnic_be32_put(&want.version, 9);
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_PARAMETER);
	want = offer;
	vnic_be32_put(&want.len, 32);
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_PARAMETER);
	/* the buffer: too short a length, not mapped */
	h_crq_cmd(&m, VNIC_CMD_CONTROL_IP_OFFLOAD);
	vnic_be16_put(&m.ip_offload.len, sizeof(want) - 1);
	vnic_be64_put(&m.ip_offload.ioba, e->ctl_ioba + H_OFFLOAD_OFF);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDLENGTH);
	vnic_be16_put(&m.ip_offload.len, sizeof(want));
	vnic_be64_put(&m.ip_offload.ioba, e->ctl_ioba + H_CTL_SIZE - 32);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDIOBA);
	h_crq_cmd(&m, VNIC_CMD_QUERY_IP_OFFLOAD);
	vnic_be16_put(&m.ip_offload.len, sizeof(want));
	vnic_be64_put(&m.ip_offload.ioba, e->other_ioba + H_OTHER_SIZE - 63);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDIOBA);
	assert_int_equal(h_ctr(e, "neg_offloads"), 0);

	/* a subset is fine */
	memset(&want, 0, sizeof(want));
	vnic_be32_put(&want.len, sizeof(want));
	vnic_be32_put(&want.version, VNIC_IP_OFFLOAD_VERSION);
	want.tcp_ipv4_chksum = 1;
	want.large_tx_ipv4 = 1;
	assert_int_equal(h_control_offload(e, &want), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "neg_offloads"), 1 << 2 | 1 << 6);
}

static void test_exact_mask(void **state)
{
	struct h_env *e = *state;
	struct vnic_dev_config cfg;
	uint64_t v;

	h_destroy(e);
	vnic_dev_config_default(&cfg);
	cfg.hdr_mask = VNIC_DEV_HDRS_EXACT;
	h_create(e, &cfg, NULL);
	h_init(e);
	h_version(e);
	assert_int_equal(h_query_cap(e, VNIC_CAP_TX_RX_DESC_REQ, &v), VNIC_RC_SUCCESS);
	/* headers (L3) for LSO only */
	assert_int_equal(v, 0x00000000A0000000ull);
	assert_int_equal(vnic_desc_req_get(v, VNIC_DESC_REQ_BYTE_CSUM), 0);
	assert_int_equal(vnic_desc_req_get(v, VNIC_DESC_REQ_BYTE_LSO),
			 VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3);
}

/* --- maps ------------------------------------------------------------------------------ */

static void test_request_map(void **state)
{
	struct h_env *e = *state;

	h_init(e);
	h_version(e);
	assert_int_equal(h_map(e, 0, e->tx_ltb_ioba, 4096), VNIC_RC_PARAMETER);
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba, 0), VNIC_RC_INVALIDLENGTH);
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba, VNIC_ONE_LTB_SIZE + 1), VNIC_RC_INVALIDLENGTH);
	/* past the end of the driver's mapping, and nowhere at all */
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba, H_TX_LTB_SIZE + 1), VNIC_RC_INVALIDIOBA);
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba + H_TX_LTB_SIZE, 4096), VNIC_RC_INVALIDIOBA);
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba, H_TX_LTB_SIZE), VNIC_RC_SUCCESS);
	/* the same map again (a retry, a duplicate) is done already; another under its id is not */
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba, H_TX_LTB_SIZE), VNIC_RC_SUCCESS);
	assert_int_equal(h_ctr(e, "ctl_dup_maps"), 1);
	assert_int_equal(h_map(e, 3, e->tx_ltb_ioba, 4096), VNIC_RC_PARAMETER);
	assert_int_equal(h_map(e, 3, e->rx_ltb_ioba, H_TX_LTB_SIZE), VNIC_RC_PARAMETER);
	assert_int_equal(h_map(e, 255, e->rx_ltb_ioba, 4096), VNIC_RC_SUCCESS);
	assert_int_equal(h_unmap(e, 4), VNIC_RC_PARAMETER);
	assert_int_equal(h_unmap(e, 0), VNIC_RC_PARAMETER);
	assert_int_equal(h_unmap(e, 3), VNIC_RC_SUCCESS);
	assert_int_equal(h_unmap(e, 3), VNIC_RC_PARAMETER);
	assert_int_equal(h_map(e, 3, e->other_ioba, 4096), VNIC_RC_SUCCESS);
}

/* --- resets ---------------------------------------------------------------------------- */

static void test_reinit_and_transport_event(void **state)
{
	struct h_env *e = *state;
	union vnic_subcrq_entry d;
	uint32_t old;
	struct vnic_crq m;

	h_bringup(e, 1, 1);
	old = e->txsubm[0];
	/* a driver that starts over: everything it had is gone */
	h_init(e);
	assert_int_equal(h_ctr(e, "state"), 1);
	assert_int_equal(h_ctr(e, "link_up"), 0);
	h_tx_desc(e, &d, 1, 0, 60, 0, 0);
	assert_int_equal(vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, old, &d), VNIC_H_PARAMETER);
	h_version(e);
	assert_int_equal(h_unmap(e, H_TX_MAP), VNIC_RC_PARAMETER);
	/* and can come back */
	h_bringup(e, 1, 1);
	/* a transport event: torn down, silent, waiting for INIT */
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_XPORT_EVENT;
	m.xport.reason = VNIC_XPORT_PARTNER_CLOSED;
	assert_true(h_silent(e, &m));
	assert_int_equal(h_ctr(e, "state"), 0);
	assert_int_equal(h_ctr(e, "ctl_xport_events"), 1);
	h_crq_cmd(&m, VNIC_CMD_QUERY_CAPABILITY);
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_INVALIDSTATE);
	h_bringup(e, 1, 1);
}

static void test_link_state_param(void **state)
{
	struct h_env *e = *state;
	struct vnic_crq m;

	h_bringup(e, 1, 1);
	h_crq_cmd(&m, VNIC_CMD_LOGICAL_LINK_STATE);
	m.link_state.state = 7;
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_PARAMETER);
	h_crq_cmd(&m, VNIC_CMD_CHANGE_MAC_ADDR);
	m.mac.mac[0] = 0x01; /* multicast */
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_PARAMETER);
	m.mac.mac[0] = 0x02;
	assert_int_equal(h_cmd(e, &m, NULL), VNIC_RC_SUCCESS);
}

/*
 * A driver whose CRQ is full: responses wait in order, none is lost, and the
 * device reads no further command meanwhile.
 */
static void test_crq_backpressure(void **state)
{
	struct h_env *e = *state;
	enum { N = 300 };
	struct vnic_crq m, r;
	unsigned int i, sent = 0, n = 0;

	h_init(e);
	h_version(e);
	/* more responses than the driver's CRQ holds, without reading it */
	while (sent < N) {
		for (i = 0; i < 150 && sent < N; i++, sent++) {
			h_crq_cmd(&m, VNIC_CMD_QUERY_CAPABILITY);
			/* alternate ids: the order of the responses shows */
			vnic_be16_put(&m.cap.capability,
				      sent % 2 ? VNIC_CAP_MAX_MTU : VNIC_CAP_MIN_MTU);
			assert_int_equal(vnic_hv_send_crq(e->hv, VNIC_HV_CLIENT, &m),
					 VNIC_H_SUCCESS);
		}
		h_run_for(e, 2000000);
	}
	assert_true(h_ctr(e, "ctl_rsp_busy") > 0);
	/* drain as the device refills */
	while (n < N) {
		if (!vnic_hv_crq_recv(e->hv, VNIC_HV_CLIENT, &r)) {
			h_run_for(e, 1000000);
			continue;
		}
		assert_int_equal(r.cmd, VNIC_CMD_QUERY_CAPABILITY_RSP);
		assert_int_equal(r.rc, VNIC_RC_SUCCESS);
		assert_int_equal(vnic_be16_get(&r.cap.capability),
				 n % 2 ? VNIC_CAP_MAX_MTU : VNIC_CAP_MIN_MTU);
		n++;
	}
	assert_true(h_run(e));
	assert_false(vnic_hv_crq_recv(e->hv, VNIC_HV_CLIENT, &r));
	assert_int_equal(h_ctr(e, "ctl_rsp_lost"), 0);
	assert_int_equal(h_ctr(e, "ctl_commands"), N + 1);
}

static void test_counters_api(void **state)
{
	struct h_env *e = *state;
	struct vnic_counter c[8];
	unsigned int n, all;
	uint64_t v;

	h_bringup(e, 2, 2);
	all = vnic_dev_counters(e->dev, NULL, 0);
	n = vnic_dev_counters(e->dev, c, 8);
	assert_int_equal(n, all);
	assert_true(all > 2 * 30);
	assert_string_equal(c[0].name, "state");
	assert_int_equal(c[0].value, 3);
	assert_int_equal(vnic_dev_counter(e->dev, "tx1_drop_bad_ioba", &v), 0);
	assert_int_equal(vnic_dev_counter(e->dev, "tx2_packets", &v), -ENOENT);
	assert_int_equal(vnic_dev_counter(e->dev, "rx1_drop_no_buffer", &v), 0);
}

static void test_create_rejects(void **state)
{
	struct h_env *e = *state;
	struct vnic_dev_config cfg;
	struct vnic_dev *d;

	vnic_dev_config_default(&cfg);
	cfg.max_tx_queues = 17;
	assert_int_equal(vnic_dev_create(&d, e->hv, e->peer, &e->v.cpu[0], &cfg), -EINVAL);
	vnic_dev_config_default(&cfg);
	cfg.min_tx_entries = 2048;
	assert_int_equal(vnic_dev_create(&d, e->hv, e->peer, &e->v.cpu[0], &cfg), -EINVAL);
	vnic_dev_config_default(&cfg);
	cfg.min_mtu = 2000; /* above the wire's 1500 */
	assert_int_equal(vnic_dev_create(&d, e->hv, e->peer, &e->v.cpu[0], &cfg), -EINVAL);
	vnic_dev_config_default(&cfg);
	cfg.min_lso_mss = 10;
	assert_int_equal(vnic_dev_create(&d, e->hv, e->peer, &e->v.cpu[0], &cfg), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bringup_happy_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_success, setup, teardown),
		cmocka_unit_test_setup_teardown(test_below_min, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_login_again_keeps_rsp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_login_again_other_rsp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_and_stray, setup, teardown),
		cmocka_unit_test_setup_teardown(test_login_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_offload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exact_mask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reinit_and_transport_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_state_param, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crq_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_api, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_rejects, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
