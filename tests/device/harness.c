// SPDX-License-Identifier: MIT
/* The hostile test driver of tests/device (see harness.h). */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static uint8_t *map_region(struct h_env *e, size_t size, uint64_t *ioba)
{
	uint8_t *p = aligned_alloc(4096, size);

	assert_non_null(p);
	memset(p, 0, size);
	assert_int_equal(vnic_hv_dma_map(e->hv, p, size, ioba), 0);
	return p;
}

void h_create(struct h_env *e, const struct vnic_dev_config *cfg, const struct vnic_cable_cfg *ccfg)
{
	static const char *const names[1] = {"dev-test"};
	const struct vnic_env_cfg vc = {
		.ncpus = 1,
		.cpu_names = names,
		.nends = 1,
		.dev = {cfg},
		.cable = ccfg,
		.pool_pkts = 4,
		.pool_size = H_MAX_FRAME,
	};

	memset(e, 0, sizeof(*e));
	vnic_env_create(&e->v, &vc);
	e->hv = e->v.hv[0];
	e->dev = e->v.dev[0];
	e->peer = vnic_cable_end(e->v.cable, 1);
	e->ctl = map_region(e, H_CTL_SIZE, &e->ctl_ioba);
	e->tx_ltb = map_region(e, H_TX_LTB_SIZE, &e->tx_ltb_ioba);
	e->rx_ltb = map_region(e, H_RX_LTB_SIZE, &e->rx_ltb_ioba);
	e->ind = map_region(e, H_IND_SIZE, &e->ind_ioba);
	e->other = map_region(e, H_OTHER_SIZE, &e->other_ioba);
	e->txcomp_entries = H_COMP_ENTRIES;
	e->rxcomp_entries = H_COMP_ENTRIES;
	/* the device's first polls: it arms its interrupts */
	assert_true(h_run(e));
}

void h_start(struct h_env *e)
{
	vnic_env_start(&e->v);
}

void h_destroy(struct h_env *e)
{
	/* the device's thread first: nothing may run while it is freed */
	vnic_env_stop(&e->v);
	/* the hv frees the driver rings too */
	vnic_env_destroy(&e->v);
	free(e->ctl);
	free(e->tx_ltb);
	free(e->rx_ltb);
	free(e->ind);
	free(e->other);
}

bool h_run(struct h_env *e)
{
	return vnic_env_run(&e->v);
}

void h_run_for(struct h_env *e, uint64_t ns)
{
	vnic_env_run_for(&e->v, ns);
}

/* --- CRQ ---------------------------------------------------------------------------- */

void h_crq_cmd(struct vnic_crq *m, uint8_t cmd)
{
	memset(m, 0, sizeof(*m));
	m->first = VNIC_CRQ_CMD_RSP;
	m->cmd = cmd;
}

static bool next_msg(struct h_env *e, struct vnic_crq *out)
{
	while (vnic_hv_crq_recv(e->hv, VNIC_HV_CLIENT, out)) {
		if (out->first == VNIC_CRQ_CMD_RSP && out->cmd == VNIC_CMD_LINK_STATE_INDICATION) {
			e->link_inds++;
			e->last_link_ind = *out;
			continue;
		}
		return true;
	}
	return false;
}

bool h_exchange(struct h_env *e, const struct vnic_crq *msg, struct vnic_crq *rsp)
{
	uint64_t end;

	assert_int_equal(vnic_hv_send_crq(e->hv, VNIC_HV_CLIENT, msg), VNIC_H_SUCCESS);
	if (!e->v.threads) {
		assert_true(h_run(e));
		return next_msg(e, rsp);
	}
	/* a generous deadline: only a lost answer ever reaches it */
	end = vnic_now_ns() + 10000000000ull;
	while (!next_msg(e, rsp)) {
		if ((int64_t)(vnic_now_ns() - end) > 0)
			return false;
		sched_yield();
	}
	return true;
}

uint8_t h_cmd(struct h_env *e, struct vnic_crq *msg, struct vnic_crq *rsp)
{
	struct vnic_crq r;

	if (!rsp)
		rsp = &r;
	assert_true(h_exchange(e, msg, rsp));
	assert_int_equal(rsp->first, VNIC_CRQ_CMD_RSP);
	assert_int_equal(rsp->cmd, msg->cmd | VNIC_CMD_RSP);
	/* one command, one response */
	assert_false(next_msg(e, &r));
	return rsp->rc;
}

bool h_silent(struct h_env *e, const struct vnic_crq *msg)
{
	struct vnic_crq r;

	return !h_exchange(e, msg, &r);
}

void h_init(struct h_env *e)
{
	struct vnic_crq m, r;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	assert_true(h_exchange(e, &m, &r));
	assert_int_equal(r.first, VNIC_CRQ_INIT_CMD);
	assert_int_equal(r.init.type, VNIC_CRQ_INIT_COMPLETE);
}

void h_version(struct h_env *e)
{
	struct vnic_crq m, r;

	h_crq_cmd(&m, VNIC_CMD_VERSION_EXCHANGE);
	vnic_be16_put(&m.version.version, VNIC_PROTO_VERSION);
	assert_int_equal(h_cmd(e, &m, &r), VNIC_RC_SUCCESS);
	assert_int_equal(vnic_be16_get(&r.version.version), VNIC_PROTO_VERSION);
}

uint8_t h_query_cap(struct h_env *e, uint16_t cap, uint64_t *num)
{
	struct vnic_crq m, r;
	uint8_t rc;

	h_crq_cmd(&m, VNIC_CMD_QUERY_CAPABILITY);
	vnic_be16_put(&m.cap.capability, cap);
	rc = h_cmd(e, &m, &r);
	assert_int_equal(vnic_be16_get(&r.cap.capability), cap);
	if (num)
		*num = vnic_be64_get(&r.cap.number);
	return rc;
}

uint8_t h_request_cap(struct h_env *e, uint16_t cap, uint64_t num, uint64_t *granted)
{
	struct vnic_crq m, r;
	uint8_t rc;

	h_crq_cmd(&m, VNIC_CMD_REQUEST_CAPABILITY);
	vnic_be16_put(&m.cap.capability, cap);
	vnic_be64_put(&m.cap.number, num);
	rc = h_cmd(e, &m, &r);
	assert_int_equal(vnic_be16_get(&r.cap.capability), cap);
	if (granted)
		*granted = vnic_be64_get(&r.cap.number);
	return rc;
}

uint8_t h_query_offload(struct h_env *e, struct vnic_ip_offload *out)
{
	struct vnic_crq m;
	uint8_t rc;

	memset(e->ctl + H_OFFLOAD_OFF, 0xEE, sizeof(*out));
	h_crq_cmd(&m, VNIC_CMD_QUERY_IP_OFFLOAD);
	vnic_be16_put(&m.ip_offload.len, sizeof(*out));
	vnic_be64_put(&m.ip_offload.ioba, e->ctl_ioba + H_OFFLOAD_OFF);
	rc = h_cmd(e, &m, NULL);
	if (out)
		memcpy(out, e->ctl + H_OFFLOAD_OFF, sizeof(*out));
	return rc;
}

uint8_t h_control_offload(struct h_env *e, const struct vnic_ip_offload *want)
{
	struct vnic_crq m;

	memcpy(e->ctl + H_OFFLOAD_OFF, want, sizeof(*want));
	h_crq_cmd(&m, VNIC_CMD_CONTROL_IP_OFFLOAD);
	vnic_be16_put(&m.ip_offload.len, sizeof(*want));
	vnic_be64_put(&m.ip_offload.ioba, e->ctl_ioba + H_OFFLOAD_OFF);
	return h_cmd(e, &m, NULL);
}

uint8_t h_map(struct h_env *e, uint8_t id, uint64_t ioba, uint32_t len)
{
	struct vnic_crq m, r;
	uint8_t rc;

	h_crq_cmd(&m, VNIC_CMD_REQUEST_MAP);
	m.map.map_id = id;
	vnic_be32_put(&m.map.len, len);
	vnic_be32_put(&m.map.ioba, (uint32_t)ioba);
	rc = h_cmd(e, &m, &r);
	assert_int_equal(r.map.map_id, id);
	return rc;
}

uint8_t h_unmap(struct h_env *e, uint8_t id)
{
	struct vnic_crq m;

	h_crq_cmd(&m, VNIC_CMD_REQUEST_UNMAP);
	m.map.map_id = id;
	return h_cmd(e, &m, NULL);
}

void h_reg_rings(struct h_env *e, unsigned int ntx, unsigned int nrx)
{
	unsigned int i;

	e->ntx = ntx;
	e->nrx = nrx;
	for (i = 0; i < ntx; i++)
		if (!e->txcomp[i])
			assert_int_equal(vnic_hv_reg_subcrq(e->hv, VNIC_HV_CLIENT,
							    e->txcomp_entries, &e->txcomp[i]),
					 0);
	for (i = 0; i < nrx; i++)
		if (!e->rxcomp[i])
			assert_int_equal(vnic_hv_reg_subcrq(e->hv, VNIC_HV_CLIENT,
							    e->rxcomp_entries, &e->rxcomp[i]),
					 0);
}

static void put32(uint8_t *p, uint32_t v)
{
	vnic_be32_put((struct vnic_be32 *)p, v);
}

static uint32_t get32(const uint8_t *p)
{
	return vnic_be32_get((const struct vnic_be32 *)p);
}

uint32_t h_login_build(struct h_env *e)
{
	uint8_t *b = e->ctl + H_LOGIN_OFF;
	struct vnic_login_buf *lb = (struct vnic_login_buf *)b;
	uint32_t len = sizeof(*lb) + 4 * (e->ntx + e->nrx), i;

	memset(b, 0, H_LOGIN_RSP_OFF);
	put32(b + offsetof(struct vnic_login_buf, len), len);
	vnic_be32_put(&lb->version, VNIC_LOGIN_VERSION);
	vnic_be32_put(&lb->num_txcomp_subcrqs, e->ntx);
	vnic_be32_put(&lb->off_txcomp_subcrqs, sizeof(*lb));
	vnic_be32_put(&lb->num_rxcomp_subcrqs, e->nrx);
	vnic_be32_put(&lb->off_rxcomp_subcrqs, sizeof(*lb) + 4 * e->ntx);
	vnic_be64_put(&lb->login_rsp_ioba, e->ctl_ioba + H_LOGIN_RSP_OFF);
	vnic_be32_put(&lb->login_rsp_len, H_LOGIN_RSP_LEN);
	for (i = 0; i < e->ntx; i++)
		put32(b + sizeof(*lb) + 4 * i, e->txcomp[i]->handle);
	for (i = 0; i < e->nrx; i++)
		put32(b + sizeof(*lb) + 4 * (e->ntx + i), e->rxcomp[i]->handle);
	return len;
}

uint8_t h_login(struct h_env *e, uint32_t len)
{
	const uint8_t *r = e->ctl + H_LOGIN_RSP_OFF;
	struct vnic_crq m;
	uint32_t rlen, ntx, nrx, otx, orx, i;
	uint8_t rc;

	memset(e->ctl + H_LOGIN_RSP_OFF, 0, H_LOGIN_RSP_LEN);
	h_crq_cmd(&m, VNIC_CMD_LOGIN);
	vnic_be16_put(&m.login.len, (uint16_t)len);
	vnic_be64_put(&m.login.ioba, e->ctl_ioba + H_LOGIN_OFF);
	rc = h_cmd(e, &m, NULL);
	if (rc != VNIC_RC_SUCCESS)
		return rc;
	/* what a careful driver checks (docs/PROTOCOL.md section 2, step 7) */
	rlen = get32(r + offsetof(struct vnic_login_rsp_buf, len));
	ntx = get32(r + offsetof(struct vnic_login_rsp_buf, num_txsubm_subcrqs));
	nrx = get32(r + offsetof(struct vnic_login_rsp_buf, num_rxadd_subcrqs));
	otx = get32(r + offsetof(struct vnic_login_rsp_buf, off_txsubm_subcrqs));
	orx = get32(r + offsetof(struct vnic_login_rsp_buf, off_rxadd_subcrqs));
	assert_true(rlen <= H_LOGIN_RSP_LEN);
	assert_int_equal(get32(r + offsetof(struct vnic_login_rsp_buf, version)),
			 VNIC_LOGIN_VERSION);
	assert_int_equal(ntx, e->ntx);
	assert_int_equal(nrx, e->nrx);
	assert_true(otx >= sizeof(struct vnic_login_rsp_buf) && otx + 4 * ntx <= rlen);
	assert_true(orx >= sizeof(struct vnic_login_rsp_buf) && orx + 4 * nrx <= rlen);
	for (i = 0; i < ntx; i++)
		e->txsubm[i] = get32(r + otx + 4 * i);
	for (i = 0; i < nrx; i++)
		e->rxadd[i] = get32(r + orx + 4 * i);
	e->rx_buf_size = get32(r + offsetof(struct vnic_login_rsp_buf, rx_buf_size));
	return rc;
}

uint8_t h_link(struct h_env *e, uint8_t state)
{
	struct vnic_crq m, r;
	uint8_t rc;

	h_crq_cmd(&m, VNIC_CMD_LOGICAL_LINK_STATE);
	m.link_state.state = state;
	rc = h_cmd(e, &m, &r);
	if (state != VNIC_LINK_QUERY)
		assert_int_equal(r.link_state.state, state);
	return rc;
}

void h_bringup(struct h_env *e, unsigned int ntx, unsigned int nrx)
{
	struct vnic_ip_offload ol;

	h_init(e);
	h_version(e);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_QUEUES, ntx, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_RX_QUEUES, nrx, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_TX_ENTRIES, 256, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_RX_ADD_ENTRIES, 256, NULL), VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_MTU, 1500 + VNIC_ETH_HLEN, NULL),
			 VNIC_RC_SUCCESS);
	assert_int_equal(h_request_cap(e, VNIC_CAP_REQ_IND_DESCS, VNIC_SAFE_IND_DESCS, NULL),
			 VNIC_RC_SUCCESS);
	assert_int_equal(h_query_offload(e, &ol), VNIC_RC_SUCCESS);
	if (!e->large_rx) {
		ol.large_rx_ipv4 = 0;
		ol.large_rx_ipv6 = 0;
	}
	assert_int_equal(h_control_offload(e, &ol), VNIC_RC_SUCCESS);
	assert_int_equal(h_map(e, H_TX_MAP, e->tx_ltb_ioba, H_TX_LTB_SIZE), VNIC_RC_SUCCESS);
	assert_int_equal(h_map(e, H_RX_MAP, e->rx_ltb_ioba, H_RX_LTB_SIZE), VNIC_RC_SUCCESS);
	h_reg_rings(e, ntx, nrx);
	assert_int_equal(h_login(e, h_login_build(e)), VNIC_RC_SUCCESS);
	e->link_inds = 0;
	assert_int_equal(h_link(e, VNIC_LINK_UP), VNIC_RC_SUCCESS);
	if (e->v.threads) {
		struct vnic_crq r;
		uint64_t end = vnic_now_ns() + 10000000000ull;

		/* the indication follows the response, maybe not yet here */
		while (!e->link_inds && (int64_t)(vnic_now_ns() - end) < 0) {
			assert_false(next_msg(e, &r));
			sched_yield();
		}
	}
	assert_int_equal(e->link_inds, 1);
}

/* --- tx --------------------------------------------------------------------------------- */

void h_tx_desc(struct h_env *e, union vnic_subcrq_entry *d, uint32_t corr, uint32_t off,
	       uint32_t len, uint8_t flags1, uint16_t mss)
{
	memset(d, 0, sizeof(*d));
	d->tx.first = VNIC_SUBCRQ_VALID;
	d->tx.type = VNIC_TX_DESC;
	d->tx.n_crq_elem = 1;
	d->tx.n_sge = 1;
	d->tx.flags1 = VNIC_TX_COMP_NEEDED | flags1;
	vnic_be16_put(&d->tx.mss, mss);
	vnic_be32_put(&d->tx.correlator, corr);
	vnic_be16_put(&d->tx.dma_reg, H_TX_MAP);
	vnic_be32_put(&d->tx.sge_len, len);
	vnic_be64_put(&d->tx.ioba, e->tx_ltb_ioba + off);
}

unsigned int h_hdr_descs(union vnic_subcrq_entry *out, const uint8_t *frame, uint8_t l2,
			 uint16_t l3, uint8_t l4, uint8_t flag)
{
	uint8_t hdr[VNIC_MAX_HDR_BYTES];
	uint32_t len = 0, done = 0;
	unsigned int n = 0;

	if (flag & VNIC_HDR_DESC_L2) {
		memcpy(hdr + len, frame, l2);
		len += l2;
	}
	if (flag & VNIC_HDR_DESC_L3) {
		memcpy(hdr + len, frame + l2, l3);
		len += l3;
	}
	if (flag & VNIC_HDR_DESC_L4) {
		memcpy(hdr + len, frame + l2 + l3, l4);
		len += l4;
	}
	while (done < len) {
		union vnic_subcrq_entry *d = &out[n];
		uint32_t take;

		memset(d, 0, sizeof(*d));
		d->first = VNIC_SUBCRQ_VALID;
		if (!n) {
			take = len < VNIC_HDR_DESC_BYTES ? len : VNIC_HDR_DESC_BYTES;
			d->hdr.type = VNIC_HDR_DESC;
			d->hdr.len = (uint8_t)len;
			d->hdr.l2_len = l2;
			vnic_be16_put(&d->hdr.l3_len, l3);
			d->hdr.l4_len = l4;
			d->hdr.flag = flag;
			memcpy(d->hdr.data, hdr, take);
		} else {
			take = len - done < VNIC_HDR_EXT_BYTES ? len - done : VNIC_HDR_EXT_BYTES;
			d->hdr_ext.type = VNIC_HDR_EXT_DESC;
			d->hdr_ext.len = (uint8_t)take;
			memcpy(d->hdr_ext.data, hdr + done, take);
		}
		done += take;
		n++;
	}
	return n;
}

long h_tx_send(struct h_env *e, unsigned int q, const union vnic_subcrq_entry *ents, unsigned int n)
{
	assert_true(n >= 1 && n <= VNIC_MAX_IND_DESCS);
	if (n == 1)
		return vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, e->txsubm[q], &ents[0]);
	memcpy(e->ind, ents, n * sizeof(ents[0]));
	return vnic_hv_send_subcrq_indirect(e->hv, VNIC_HV_CLIENT, e->txsubm[q], e->ind_ioba, n);
}

unsigned int h_tx_comps(struct h_env *e, unsigned int q, uint32_t *corr, uint16_t *rc,
			unsigned int max)
{
	const union vnic_subcrq_entry *c;
	unsigned int n = 0, i;

	while ((c = vnic_subcrq_peek(e->txcomp[q]))) {
		assert_true(c->tx_comp.num_comps >= 1 && c->tx_comp.num_comps <= VNIC_TX_COMP_MAX);
		for (i = 0; i < c->tx_comp.num_comps; i++) {
			assert_true(n < max);
			corr[n] = vnic_be32_get(&c->tx_comp.correlators[i]);
			rc[n] = vnic_be16_get(&c->tx_comp.rcs[i]);
			n++;
		}
		vnic_subcrq_consume(e->txcomp[q]);
	}
	return n;
}

unsigned int h_wire_take(struct h_env *e, uint8_t **bufs, uint32_t *lens, unsigned int max)
{
	struct vnic_pkt *f[64];
	unsigned int total = 0;

	for (;;) {
		unsigned int want = max - total > 64 ? 64 : max - total, n, i;

		if (!want)
			break;
		n = e->peer->ops->rx_peek(e->peer, f, want);
		for (i = 0; i < n; i++) {
			memcpy(bufs[total + i], f[i]->data, f[i]->len);
			lens[total + i] = f[i]->len;
		}
		e->peer->ops->rx_release(e->peer, n);
		total += n;
		if (n < want)
			break;
	}
	return total;
}

/* --- rx --------------------------------------------------------------------------------- */

uint8_t *h_rx_buf(struct h_env *e, unsigned int idx)
{
	return e->rx_ltb + (size_t)idx * e->rx_buf_size;
}

long h_rx_post(struct h_env *e, unsigned int q, unsigned int first, unsigned int n)
{
	union vnic_subcrq_entry *a = (union vnic_subcrq_entry *)e->ind;
	unsigned int i;

	assert_true(n >= 1 && n <= VNIC_MAX_IND_DESCS);
	assert_true((uint64_t)(first + n) * e->rx_buf_size <= H_RX_LTB_SIZE);
	for (i = 0; i < n; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].rx_add.first = VNIC_SUBCRQ_VALID;
		vnic_be64_put(&a[i].rx_add.correlator, 0x1000 + first + i);
		vnic_be32_put(&a[i].rx_add.ioba,
			      (uint32_t)(e->rx_ltb_ioba + (uint64_t)(first + i) * e->rx_buf_size));
		a[i].rx_add.map_id = H_RX_MAP;
		vnic_be24_put(&a[i].rx_add.len, e->rx_buf_size);
	}
	if (n == 1)
		return vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, e->rxadd[q], &a[0]);
	return vnic_hv_send_subcrq_indirect(e->hv, VNIC_HV_CLIENT, e->rxadd[q], e->ind_ioba, n);
}

void h_wire_inject(struct h_env *e, const uint8_t *frame, uint32_t len)
{
	struct vnic_pkt *slot;

	assert_int_equal(e->peer->ops->tx_reserve(e->peer, &slot, 1), 1);
	memcpy(slot->data, frame, len);
	slot->len = len;
	e->peer->ops->tx_commit(e->peer, &slot, 1, 1);
}

unsigned int h_rx_comps(struct h_env *e, unsigned int q, struct vnic_rx_comp *out, unsigned int max)
{
	const union vnic_subcrq_entry *c;
	unsigned int n = 0;

	while ((c = vnic_subcrq_peek(e->rxcomp[q]))) {
		assert_true(n < max);
		memcpy(&out[n++], &c->rx_comp, sizeof(out[0]));
		vnic_subcrq_consume(e->rxcomp[q]);
	}
	return n;
}

/* --- misc ------------------------------------------------------------------------------- */

uint64_t h_ctr(struct h_env *e, const char *name)
{
	return vnic_env_dev_ctr(&e->v, 0, name);
}

struct vnic_pkt *h_pkt(struct h_env *e)
{
	return vnic_env_pkt(&e->v);
}
