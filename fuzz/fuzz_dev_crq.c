// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the device's control path (src/device/ctl.c):
 * negotiation, long-term buffer maps, login and link state, driven by a
 * hostile driver through a real hv (fuzz/harness.c, fz_dev). Each input
 * ends with a transport event (the device forgets everything, so the next
 * starts clean). Layout:
 *
 *	byte 0	the device: bit 0 the default configuration, or a small one
 *		(two tx and three rx queues, 32..128 entries, MTU 1500, exact
 *		header mask, no IPv6 offloads, dropping offloads without headers)
 *	then records, up to MAX_RECORDS, by the low 3 bits of a tag byte:
 *	0, 6, 7	MSG: a CRQ message, 16 bytes (class byte forced valid). Tag bit
 *		3: its ioba made relative (LOGIN, QUERY/CONTROL_IP_OFFLOAD: the
 *		control page + ioba % 4096; REQUEST_MAP: the LTB region +
 *		ioba % its size), so a short input can name the driver's memory
 *	1	LOGIN: a correct login buffer for ntx, nrx (bytes) of the fake
 *		driver's rings at the control page, then a count byte and that
 *		many (offset, xor) pairs over it; tag bit 3: also the LOGIN
 *		message naming it, its length plus a signed byte
 *	2	BUF: an offset (BE16) and a count byte, that many bytes written
 *		into the control page (offload buffer, login response, ...)
 *	3	BRINGUP: a correct bring-up (INIT to link up): ntx, nrx, entries
 *		(BE16), MTU (BE16), offloads left off (byte), all clamped into
 *		what the device allows
 *	4	RUN: the device runs
 *	5	SUBCRQ: 32 bytes to the device's tx submission ring q (byte; tag
 *		bit 3: the rx buffer add ring) of the last bring-up
 *
 * Checked: the device answers every command exactly once, in order, with
 * the command's response code and an rc of enum vnic_rc, and every INIT
 * with INIT_COMPLETE; nothing else but link-state indications comes back;
 * no response is lost (ctl_rsp_lost); the state and negotiated values stay
 * in range. Any read outside the driver's memory blocks is AddressSanitizer's
 * to report (each block is exactly its size).
 *
 * Corpus: fuzz/corpus/dev_crq/ (a bring-up spelt out message by message,
 * hostile logins, maps, a link-down with descriptors queued, ...).
 */
#include <string.h>

#include "harness.h"

enum {
	MAX_RECORDS = 128,
	EXPECT_MAX = 512,
	EXPECT_INIT = 0x100, /* an INIT_COMPLETE, not a command's response */
};

struct run {
	uint16_t expect[EXPECT_MAX];
	unsigned int head, tail;
	bool checking;
};

static struct fz_dev envs[2];
static bool ready[2];
static struct run run;

static const char *const state_ctr = "state";

static void on_crq(void *ctx, const struct vnic_crq *m)
{
	struct run *r = ctx;
	uint16_t want;

	if (m->first == VNIC_CRQ_CMD_RSP && m->cmd == VNIC_CMD_LINK_STATE_INDICATION)
		return;
	if (!r->checking)
		return;
	FZ_CHECK(r->head != r->tail);
	want = r->expect[r->head++ % EXPECT_MAX];
	if (want == EXPECT_INIT) {
		FZ_CHECK(m->first == VNIC_CRQ_INIT_CMD && m->init.type == VNIC_CRQ_INIT_COMPLETE);
		return;
	}
	FZ_CHECK(m->first == VNIC_CRQ_CMD_RSP);
	FZ_CHECK(m->cmd == (want | VNIC_CMD_RSP));
	FZ_CHECK(m->rc <= VNIC_RC_UNSUPPORTEDOPTION);
}

static void setup(unsigned int v)
{
	struct vnic_dev_config cfg;

	vnic_dev_config_default(&cfg);
	if (v) {
		cfg.max_tx_queues = 2;
		cfg.max_rx_queues = 3;
		cfg.min_tx_entries = 32;
		cfg.max_tx_entries = 128;
		cfg.min_rx_add_entries = 32;
		cfg.max_rx_add_entries = 128;
		cfg.max_mtu = 1500;
		cfg.hdr_mask = VNIC_DEV_HDRS_EXACT;
		cfg.csum_ipv6 = false;
		cfg.lso_ipv6 = false;
		cfg.drop_missing_hdrs = true;
		cfg.min_lso_mss = VNIC_DEV_MIN_LSO_MSS;
		cfg.rx_buf_size = 4096;
	}
	/* nothing the driver names is off limits to the hv's reads: no poison */
	fz_dev_create(&envs[v], &cfg, v ? 1500 : 9000, false);
	envs[v].on_crq = on_crq;
	envs[v].cb_ctx = &run;
	ready[v] = true;
}

static void expect(struct run *r, uint16_t what)
{
	FZ_CHECK(r->tail - r->head < EXPECT_MAX);
	r->expect[r->tail++ % EXPECT_MAX] = what;
}

/* Sends m as the driver; what it must be answered with goes on the list. */
static void send(struct fz_dev *e, struct vnic_crq *m)
{
	m->first |= VNIC_CRQ_CMD_RSP;
	if (fz_dev_send_crq(e, m) != VNIC_H_SUCCESS)
		return;
	if (m->first == VNIC_CRQ_INIT_CMD && m->init.type == VNIC_CRQ_INIT)
		expect(&run, EXPECT_INIT);
	else if (m->first == VNIC_CRQ_CMD_RSP && !(m->cmd & VNIC_CMD_RSP) &&
		 m->cmd != VNIC_CMD_ERROR_INDICATION && m->cmd != VNIC_CMD_LINK_STATE_INDICATION)
		expect(&run, m->cmd);
}

static void relocate(struct fz_dev *e, struct vnic_crq *m)
{
	switch (m->cmd) {
	case VNIC_CMD_LOGIN:
	case VNIC_CMD_QUERY_IP_OFFLOAD:
	case VNIC_CMD_CONTROL_IP_OFFLOAD:
		vnic_be64_put(&m->login.ioba,
			      e->ctl_ioba + vnic_be64_get(&m->login.ioba) % FZ_CTL_SIZE);
		break;
	case VNIC_CMD_REQUEST_MAP:
	case VNIC_CMD_REQUEST_UNMAP:
		vnic_be32_put(&m->map.ioba, (uint32_t)(e->ltb_ioba + vnic_be32_get(&m->map.ioba) %
									     FZ_LTB_REGION));
		break;
	default:
		break;
	}
}

static void rec_login(struct fz_dev *e, struct fz_in *in, bool with_msg)
{
	unsigned int ntx = fz_u8(in) % (FZ_DEV_RINGS + 1), nrx = fz_u8(in) % (FZ_DEV_RINGS + 1);
	uint32_t len = fz_dev_login_build(e, ntx, nrx);
	unsigned int pairs = fz_u8(in);
	struct vnic_crq m;

	for (unsigned int i = 0; i < pairs && in->left; i++) {
		uint8_t off = fz_u8(in);

		e->ctl[FZ_LOGIN_OFF + off % VNIC_LOGIN_BUF_MAX] ^= fz_u8(in);
	}
	if (!with_msg)
		return;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LOGIN;
	vnic_be16_put(&m.login.len, (uint16_t)(len + (int8_t)fz_u8(in)));
	vnic_be64_put(&m.login.ioba, e->ctl_ioba + FZ_LOGIN_OFF);
	send(e, &m);
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void rec_bringup(struct fz_dev *e, struct fz_in *in)
{
	const struct vnic_dev_config *c = &e->cfg;
	unsigned int ntx = clamp(fz_u8(in), 1, c->max_tx_queues);
	unsigned int nrx = clamp(fz_u8(in), 1, c->max_rx_queues);
	uint32_t lo = c->min_tx_entries > c->min_rx_add_entries ? c->min_tx_entries
								: c->min_rx_add_entries;
	uint32_t hi = c->max_tx_entries < c->max_rx_add_entries ? c->max_tx_entries
								: c->max_rx_add_entries;
	uint32_t entries = clamp(fz_u16(in), lo, hi);
	uint32_t mtu = clamp(fz_u16(in), c->min_mtu, e->cfg.max_mtu);
	uint8_t ol_off = fz_u8(in);

	/* every earlier command answered first; the bring-up checks its own */
	FZ_CHECK(fz_dev_run(e));
	FZ_CHECK(run.head == run.tail);
	run.checking = false;
	fz_dev_bringup(e, clamp(ntx, 1, FZ_DEV_RINGS), clamp(nrx, 1, FZ_DEV_RINGS), entries, mtu,
		       ol_off);
	run.checking = true;
}

static void rec_subcrq(struct fz_dev *e, struct fz_in *in, bool rx)
{
	union vnic_subcrq_entry x;
	unsigned int q = fz_u8(in) % FZ_DEV_RINGS;

	fz_bytes(in, x.raw, sizeof(x.raw));
	x.first |= VNIC_SUBCRQ_VALID;
	vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, rx ? e->rxadd[q] : e->txsubm[q], &x);
}

/* The driver went away: the device forgets everything (and frees its rings). */
static void reset(struct fz_dev *e)
{
	struct vnic_crq m;

	run.checking = false;
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_XPORT_EVENT;
	m.xport.reason = VNIC_XPORT_PARTNER_CLOSED;
	FZ_CHECK(fz_dev_send_crq(e, &m) == VNIC_H_SUCCESS);
	FZ_CHECK(fz_dev_run(e));
	memset(e->txsubm, 0, sizeof(e->txsubm));
	memset(e->rxadd, 0, sizeof(e->rxadd));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	unsigned int v = fz_u8(&in) & 1, n;
	struct fz_dev *e;
	struct vnic_crq m;

	if (!ready[v]) {
		setup(v);
		reset(&envs[v]);
	}
	e = &envs[v];
	run.head = run.tail = 0;
	run.checking = true;

	for (n = 0; n < MAX_RECORDS && in.left; n++) {
		uint8_t tag = fz_u8(&in);

		switch (tag & 7) {
		case 1:
			rec_login(e, &in, tag & 8);
			break;
		case 2: {
			uint16_t off = fz_u16(&in) % FZ_CTL_SIZE;
			uint8_t cnt = fz_u8(&in);

			fz_bytes(&in, e->ctl + off,
				 cnt < FZ_CTL_SIZE - off ? cnt : (size_t)(FZ_CTL_SIZE - off));
			break;
		}
		case 3:
			rec_bringup(e, &in);
			break;
		case 4:
			FZ_CHECK(fz_dev_run(e));
			break;
		case 5:
			rec_subcrq(e, &in, tag & 8);
			break;
		default:
			fz_bytes(&in, m.raw, sizeof(m.raw));
			if (tag & 8)
				relocate(e, &m);
			send(e, &m);
			break;
		}
	}
	FZ_CHECK(fz_dev_run(e));
	/* everything answered, nothing dropped */
	FZ_CHECK(run.head == run.tail);
	fz_dev_snap(e);
	FZ_CHECK(fz_dev_ctr(e, "ctl_rsp_lost") == 0);
	FZ_CHECK(fz_dev_ctr(e, state_ctr) <= 3);
	if (fz_dev_ctr(e, state_ctr) == 3) {
		uint64_t ntx = fz_dev_ctr(e, "neg_tx_queues"), nrx = fz_dev_ctr(e, "neg_rx_queues");

		FZ_CHECK(ntx >= 1 && ntx <= e->cfg.max_tx_queues);
		FZ_CHECK(nrx >= 1 && nrx <= e->cfg.max_rx_queues);
		FZ_CHECK(fz_dev_ctr(e, "neg_mtu") <= e->cfg.max_mtu + VNIC_ETH_HLEN);
	}
	/* the next input starts clean, and what this one allocated is freed within it */
	reset(e);
	return 0;
}
