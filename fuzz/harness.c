// SPDX-License-Identifier: MIT
/* The fuzz targets' shared harness (see harness.h). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#ifdef FZ_ASAN
#include <sanitizer/asan_interface.h>
#define fz_poison(p, n)	  ASAN_POISON_MEMORY_REGION(p, n)
#define fz_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define fz_poison(p, n)	  ((void)(p), (void)(n))
#define fz_unpoison(p, n) ((void)(p), (void)(n))
#endif

/* --- the input ------------------------------------------------------------------------ */

uint8_t fz_u8(struct fz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

uint16_t fz_u16(struct fz_in *in)
{
	uint16_t hi = fz_u8(in);

	return (uint16_t)(hi << 8 | fz_u8(in));
}

uint32_t fz_u24(struct fz_in *in)
{
	uint32_t hi = fz_u8(in);

	return hi << 16 | fz_u16(in);
}

uint32_t fz_u32(struct fz_in *in)
{
	uint32_t hi = fz_u16(in);

	return hi << 16 | fz_u16(in);
}

size_t fz_bytes(struct fz_in *in, void *dst, size_t n)
{
	size_t real = n < in->left ? n : in->left;

	if (real)
		memcpy(dst, in->p, real);
	memset((uint8_t *)dst + real, 0, n - real);
	in->p += real;
	in->left -= real;
	return real;
}

/* --- cpus ----------------------------------------------------------------------------- */

static bool name_has_prefix(const struct vnic_poller *p, const char *prefix)
{
	return p->name && !strncmp(p->name, prefix, strlen(prefix));
}

/* Armed timers of pollers named prefix* become due now; true if there was one. */
static bool hurry(struct vnic_cpu **cpus, unsigned int n, const char *prefix)
{
	bool any = false;

	for (unsigned int c = 0; c < n; c++) {
		for (unsigned int i = 0; i < cpus[c]->npollers; i++) {
			struct vnic_poller *p = cpus[c]->pollers[i];

			if (p->deadline_ns && name_has_prefix(p, prefix)) {
				vnic_poller_set_timer(p, 1);
				any = true;
			}
		}
	}
	return any;
}

bool fz_run(struct vnic_cpu **cpus, unsigned int n, bool (*idle)(void *ctx), void *ctx,
	    unsigned int max_rounds)
{
	for (unsigned int round = 0; round < max_rounds; round++) {
		unsigned int ran = 0;

		for (unsigned int c = 0; c < n; c++)
			ran += vnic_cpu_run_once(cpus[c]);
		if (ran)
			continue;
		if (idle && idle(ctx))
			continue;
		/* Only the device's engines: their retries do not look at the clock. */
		if (hurry(cpus, n, "dev-"))
			continue;
		return true;
	}
	return false;
}

/* --- frames --------------------------------------------------------------------------- */

/*
 * Payload byte i of pattern p is p + 7i (mod 256). 7 is odd, so that is
 * 7 * (183 * p + i) (183 = 7^-1 mod 256): a window of one table, one memcpy
 * instead of a loop the fuzzer's instrumentation would trace per byte.
 */
static const uint8_t *payload_bytes(uint8_t p)
{
	static uint8_t tab[256 + VNIC_PKT_MAX_LEN];
	static bool ready;

	if (!ready) {
		for (size_t i = 0; i < sizeof(tab); i++)
			tab[i] = (uint8_t)(7 * i);
		ready = true;
	}
	return tab + (uint8_t)(183 * p);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

uint32_t fz_frame(uint8_t *buf, uint32_t cap, enum fz_frame_kind k, uint32_t payload,
		  uint8_t pattern, bool partial, uint16_t *l4_off, uint16_t *csum_off)
{
	static const uint8_t mac[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
	bool v6 = k == FZ_TCP6 || k == FZ_UDP6;
	bool udp = k == FZ_UDP4 || k == FZ_UDP6;
	bool icmp = k == FZ_ICMP4;
	uint32_t l2 = k == FZ_TCP4_VLAN ? 18 : 14, l3 = v6 ? 40 : 20;
	uint32_t l4 = udp || icmp ? 8 : 20, len = l2 + l3 + l4 + payload;
	uint8_t proto = udp ? VNIC_IPPROTO_UDP : icmp ? VNIC_IPPROTO_ICMP : VNIC_IPPROTO_TCP;
	uint8_t *ip = buf + l2, *th = ip + l3;
	uint16_t coff = udp ? 6 : icmp ? 2 : 16;
	struct vnic_hdrs h;

	if (k >= FZ_KINDS || len > cap || l3 + l4 + payload > 0xffff)
		return 0;
	memset(buf, 0, l2 + l3 + l4);
	memcpy(buf, mac, sizeof(mac));
	if (l2 == 18) {
		put16(buf + 12, VNIC_ETH_P_8021Q);
		put16(buf + 14, (uint16_t)(100 + pattern));
	}
	put16(buf + l2 - 2, v6 ? VNIC_ETH_P_IPV6 : VNIC_ETH_P_IP);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)(l4 + payload));
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0xfd;
		ip[23] = 1;
		ip[24] = 0xfd;
		ip[39] = 2;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(l3 + l4 + payload));
		put16(ip + 4, pattern);
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = proto;
		ip[12] = 10;
		ip[15] = 1;
		ip[16] = 10;
		ip[19] = 2;
		vnic_csum_ip4_set(ip, l3);
	}
	if (icmp) {
		th[0] = 8; /* echo request */
		put16(th + 4, pattern);
	} else {
		put16(th, (uint16_t)(1000 + pattern));
		put16(th + 2, 2000);
	}
	if (udp) {
		put16(th + 4, (uint16_t)(l4 + payload));
	} else if (!icmp) {
		th[4] = pattern;
		th[11] = 1;    /* ack */
		th[12] = 0x50; /* data offset 5 */
		th[13] = VNIC_TCP_ACK | VNIC_TCP_PSH;
		put16(th + 14, 0xffff);
	}
	memcpy(th + l4, payload_bytes(pattern), payload);
	if (l4_off)
		*l4_off = (uint16_t)(l2 + l3);
	if (csum_off)
		*csum_off = coff;
	if (icmp) {
		put16(th + 2, vnic_csum(th, l4 + payload));
		return len;
	}
	if (vnic_parse_frame(buf, len, &h) != VNIC_PARSE_OK)
		return 0;
	if (partial) {
		vnic_wsum_t ps = v6 ? vnic_csum_pseudo6(ip + 8, ip + 24, proto, l4 + payload)
				    : vnic_csum_pseudo4(ip + 12, ip + 16, proto, l4 + payload);
		uint16_t check = (uint16_t)~vnic_csum_fold(ps);

		memcpy(th + coff, &check, sizeof(check));
	} else if (vnic_csum_l4_set(buf, &h)) {
		return 0;
	}
	return len;
}

/* --- the device and a fake driver ----------------------------------------------------- */

/* An exact-size heap block: AddressSanitizer reports a read one byte past it. */
static uint8_t *map_region(struct vnic_hv *hv, size_t size, uint64_t *ioba)
{
	uint8_t *p = malloc(size);

	FZ_CHECK(p);
	memset(p, 0, size);
	FZ_CHECK(vnic_hv_dma_map(hv, p, size, ioba) == 0);
	return p;
}

void fz_dev_take_crq(struct fz_dev *e)
{
	struct vnic_crq m;

	while (vnic_hv_crq_recv(e->hv, VNIC_HV_CLIENT, &m)) {
		if (e->on_crq)
			e->on_crq(e->cb_ctx, &m);
		if (m.first == VNIC_CRQ_INIT_CMD && m.init.type == VNIC_CRQ_INIT_COMPLETE) {
			e->init_completes++;
		} else if (m.first == VNIC_CRQ_CMD_RSP && m.cmd == VNIC_CMD_LINK_STATE_INDICATION) {
			e->link_inds++;
		} else if (m.first == VNIC_CRQ_CMD_RSP && (m.cmd & VNIC_CMD_RSP)) {
			e->rsp++;
			e->last_rsp = m;
		} else {
			e->others++;
		}
	}
}

/* What the device sent on the wire and to the driver's rings; true if anything. */
static bool dev_idle(void *ctx)
{
	struct fz_dev *e = ctx;
	const union vnic_subcrq_entry *x;
	struct vnic_pkt *f[64];
	unsigned int n, i, before = e->rsp + e->link_inds + e->init_completes + e->others;
	bool moved = false;

	while ((n = e->peer->ops->rx_peek(e->peer, f, 64))) {
		for (i = 0; i < n; i++) {
			if (e->on_frame)
				e->on_frame(e->cb_ctx, f[i]->data, f[i]->len);
			e->frames++;
		}
		e->peer->ops->rx_release(e->peer, n);
		moved = true;
	}
	for (i = 0; i < FZ_DEV_RINGS; i++) {
		while ((x = vnic_subcrq_peek(e->txcomp[i]))) {
			if (e->on_txcomp)
				e->on_txcomp(e->cb_ctx, &x->tx_comp);
			vnic_subcrq_consume(e->txcomp[i]);
			moved = true;
		}
		while ((x = vnic_subcrq_peek(e->rxcomp[i]))) {
			if (e->on_rxcomp)
				e->on_rxcomp(e->cb_ctx, &x->rx_comp);
			vnic_subcrq_consume(e->rxcomp[i]);
			moved = true;
		}
	}
	fz_dev_take_crq(e);
	return moved || before != e->rsp + e->link_inds + e->init_completes + e->others;
}

bool fz_dev_run(struct fz_dev *e)
{
	struct vnic_cpu *cpus[1] = {&e->cpu};

	return fz_run(cpus, 1, dev_idle, e, 100000);
}

void fz_dev_create(struct fz_dev *e, const struct vnic_dev_config *cfg, uint32_t mtu, bool poison)
{
	struct vnic_cable_cfg cc;
	unsigned int i;

	memset(e, 0, sizeof(*e));
	FZ_CHECK(vnic_hv_create(&e->hv, VNIC_MAX_IND_DESCS, NULL) == 0);
	FZ_CHECK(vnic_cpu_init(&e->cpu, "fz-dev", 0) == 0);
	memset(&cc, 0, sizeof(cc));
	cc.mtu = mtu;
	/* the most segments one superpacket may need, all reserved at once */
	cc.slots = VNIC_GSO_MAX_SEGS;
	FZ_CHECK(vnic_cable_create(&e->cable, &cc) == 0);
	e->peer = vnic_cable_end(e->cable, 1);
	if (cfg)
		e->cfg = *cfg;
	else
		vnic_dev_config_default(&e->cfg);
	FZ_CHECK(vnic_dev_create(&e->dev, e->hv, vnic_cable_end(e->cable, 0), &e->cpu, &e->cfg) ==
		 0);
	e->ctl = map_region(e->hv, FZ_CTL_SIZE, &e->ctl_ioba);
	e->ltb = map_region(e->hv, FZ_LTB_REGION, &e->ltb_ioba);
	e->ind = map_region(e->hv, FZ_IND_SIZE, &e->ind_ioba);
	e->poison = poison;
	if (poison) {
		fz_poison(e->ltb + FZ_LTB1_OFF + FZ_LTB1_LEN, FZ_LTB_GAP);
		fz_poison(e->ltb + FZ_LTB2_OFF + FZ_LTB2_LEN, FZ_LTB_TAIL);
	}
	for (i = 0; i < FZ_DEV_RINGS; i++) {
		FZ_CHECK(vnic_hv_reg_subcrq(e->hv, VNIC_HV_CLIENT, FZ_DEV_COMP_ENTRIES,
					    &e->txcomp[i]) == 0);
		FZ_CHECK(vnic_hv_reg_subcrq(e->hv, VNIC_HV_CLIENT, FZ_DEV_COMP_ENTRIES,
					    &e->rxcomp[i]) == 0);
	}
	/* the device's first polls: it arms its interrupts */
	FZ_CHECK(fz_dev_run(e));
}

void fz_dev_destroy(struct fz_dev *e)
{
	vnic_dev_destroy(e->dev);
	vnic_cpu_fini(&e->cpu);
	vnic_cable_destroy(e->cable);
	vnic_hv_destroy(e->hv); /* the driver's rings too */
	if (e->poison) {
		fz_unpoison(e->ltb + FZ_LTB1_OFF + FZ_LTB1_LEN, FZ_LTB_GAP);
		fz_unpoison(e->ltb + FZ_LTB2_OFF + FZ_LTB2_LEN, FZ_LTB_TAIL);
	}
	free(e->ctl);
	free(e->ltb);
	free(e->ind);
	free(e->ctrs);
}

bool fz_dev_inject(struct fz_dev *e, const uint8_t *frame, uint32_t len)
{
	struct vnic_pkt *slot;

	if (e->peer->ops->tx_reserve(e->peer, &slot, 1) != 1)
		return false;
	if (len > vnic_pkt_tailroom(slot)) {
		e->peer->ops->tx_commit(e->peer, &slot, 0, 1);
		return false;
	}
	memcpy(slot->data, frame, len);
	slot->len = len;
	e->peer->ops->tx_commit(e->peer, &slot, 1, 1);
	return true;
}

long fz_dev_send_crq(struct fz_dev *e, const struct vnic_crq *m)
{
	return vnic_hv_send_crq(e->hv, VNIC_HV_CLIENT, m);
}

uint8_t fz_dev_cmd(struct fz_dev *e, struct vnic_crq *m)
{
	unsigned int before = e->rsp;

	if (fz_dev_send_crq(e, m) != VNIC_H_SUCCESS)
		return 0xff;
	FZ_CHECK(fz_dev_run(e));
	fz_dev_take_crq(e);
	return e->rsp == before ? 0xff : e->last_rsp.rc;
}

static void crq_cmd(struct vnic_crq *m, uint8_t cmd)
{
	memset(m, 0, sizeof(*m));
	m->first = VNIC_CRQ_CMD_RSP;
	m->cmd = cmd;
}

static uint32_t get32(const uint8_t *p)
{
	return vnic_be32_get((const struct vnic_be32 *)p);
}

uint32_t fz_dev_login_build(struct fz_dev *e, unsigned int ntx, unsigned int nrx)
{
	uint8_t *b = e->ctl + FZ_LOGIN_OFF;
	struct vnic_login_buf *lb = (struct vnic_login_buf *)b;
	uint32_t len = (uint32_t)(sizeof(*lb) + 4 * (ntx + nrx)), i;

	FZ_CHECK(ntx <= FZ_DEV_RINGS && nrx <= FZ_DEV_RINGS);
	memset(b, 0, FZ_LOGIN_RSP_OFF);
	vnic_be32_put(&lb->len, len);
	vnic_be32_put(&lb->version, VNIC_LOGIN_VERSION);
	vnic_be32_put(&lb->num_txcomp_subcrqs, ntx);
	vnic_be32_put(&lb->off_txcomp_subcrqs, sizeof(*lb));
	vnic_be32_put(&lb->num_rxcomp_subcrqs, nrx);
	vnic_be32_put(&lb->off_rxcomp_subcrqs, (uint32_t)(sizeof(*lb) + 4 * ntx));
	vnic_be64_put(&lb->login_rsp_ioba, e->ctl_ioba + FZ_LOGIN_RSP_OFF);
	vnic_be32_put(&lb->login_rsp_len, FZ_LOGIN_RSP_LEN);
	for (i = 0; i < ntx; i++)
		vnic_be32_put((struct vnic_be32 *)(b + sizeof(*lb) + 4 * i), e->txcomp[i]->handle);
	for (i = 0; i < nrx; i++)
		vnic_be32_put((struct vnic_be32 *)(b + sizeof(*lb) + 4 * (ntx + i)),
			      e->rxcomp[i]->handle);
	return len;
}

static void request_cap(struct fz_dev *e, uint16_t cap, uint64_t num)
{
	struct vnic_crq m;

	crq_cmd(&m, VNIC_CMD_REQUEST_CAPABILITY);
	vnic_be16_put(&m.cap.capability, cap);
	vnic_be64_put(&m.cap.number, num);
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);
}

static void map_ltb(struct fz_dev *e, uint8_t id, uint32_t off, uint32_t len)
{
	struct vnic_crq m;

	crq_cmd(&m, VNIC_CMD_REQUEST_MAP);
	m.map.map_id = id;
	vnic_be32_put(&m.map.len, len);
	vnic_be32_put(&m.map.ioba, (uint32_t)(e->ltb_ioba + off));
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);
}

void fz_dev_bringup(struct fz_dev *e, unsigned int ntx, unsigned int nrx, uint32_t entries,
		    uint32_t mtu, uint8_t ol_off)
{
	struct vnic_ip_offload ol;
	const uint8_t *r = e->ctl + FZ_LOGIN_RSP_OFF;
	uint8_t *olb = (uint8_t *)&ol;
	struct vnic_crq m;
	uint32_t i, otx, orx;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_INIT_CMD;
	m.init.type = VNIC_CRQ_INIT;
	i = e->init_completes;
	FZ_CHECK(fz_dev_send_crq(e, &m) == VNIC_H_SUCCESS);
	FZ_CHECK(fz_dev_run(e));
	FZ_CHECK(e->init_completes == i + 1);

	crq_cmd(&m, VNIC_CMD_VERSION_EXCHANGE);
	vnic_be16_put(&m.version.version, VNIC_PROTO_VERSION);
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);
	request_cap(e, VNIC_CAP_REQ_TX_QUEUES, ntx);
	request_cap(e, VNIC_CAP_REQ_RX_QUEUES, nrx);
	request_cap(e, VNIC_CAP_REQ_TX_ENTRIES, entries);
	request_cap(e, VNIC_CAP_REQ_RX_ADD_ENTRIES, entries);
	request_cap(e, VNIC_CAP_REQ_MTU, mtu + VNIC_ETH_HLEN);
	request_cap(e, VNIC_CAP_REQ_IND_DESCS, VNIC_SAFE_IND_DESCS);

	crq_cmd(&m, VNIC_CMD_QUERY_IP_OFFLOAD);
	vnic_be16_put(&m.ip_offload.len, sizeof(ol));
	vnic_be64_put(&m.ip_offload.ioba, e->ctl_ioba + FZ_OFFLOAD_OFF);
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);
	memcpy(&ol, e->ctl + FZ_OFFLOAD_OFF, sizeof(ol));
	for (i = 0; i < 8; i++)
		if (ol_off & (1u << i))
			olb[8 + i] = 0;
	ol.large_rx_ipv4 = 0;
	ol.large_rx_ipv6 = 0;
	memcpy(e->ctl + FZ_OFFLOAD_OFF, &ol, sizeof(ol));
	m.cmd = VNIC_CMD_CONTROL_IP_OFFLOAD;
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);

	map_ltb(e, FZ_LTB1_MAP, FZ_LTB1_OFF, FZ_LTB1_LEN);
	map_ltb(e, FZ_LTB2_MAP, FZ_LTB2_OFF, FZ_LTB2_LEN);

	crq_cmd(&m, VNIC_CMD_LOGIN);
	vnic_be16_put(&m.login.len, (uint16_t)fz_dev_login_build(e, ntx, nrx));
	vnic_be64_put(&m.login.ioba, e->ctl_ioba + FZ_LOGIN_OFF);
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);
	otx = get32(r + offsetof(struct vnic_login_rsp_buf, off_txsubm_subcrqs));
	orx = get32(r + offsetof(struct vnic_login_rsp_buf, off_rxadd_subcrqs));
	FZ_CHECK(otx + 4 * ntx <= FZ_LOGIN_RSP_LEN && orx + 4 * nrx <= FZ_LOGIN_RSP_LEN);
	for (i = 0; i < ntx; i++)
		e->txsubm[i] = get32(r + otx + 4 * i);
	for (i = 0; i < nrx; i++)
		e->rxadd[i] = get32(r + orx + 4 * i);
	e->ntx = ntx;
	e->nrx = nrx;
	e->rx_buf_size = get32(r + offsetof(struct vnic_login_rsp_buf, rx_buf_size));

	crq_cmd(&m, VNIC_CMD_LOGICAL_LINK_STATE);
	m.link_state.state = VNIC_LINK_UP;
	FZ_CHECK(fz_dev_cmd(e, &m) == VNIC_RC_SUCCESS);
}

enum { CTRS_MAX = 1024 };

void fz_dev_snap(struct fz_dev *e)
{
	if (!e->ctrs) {
		e->ctrs = calloc(CTRS_MAX, sizeof(*e->ctrs));
		FZ_CHECK(e->ctrs);
	}
	e->nctrs = vnic_dev_counters(e->dev, e->ctrs, CTRS_MAX);
	FZ_CHECK(e->nctrs <= CTRS_MAX);
}

uint64_t fz_dev_ctr(const struct fz_dev *e, const char *name)
{
	for (unsigned int i = 0; i < e->nctrs; i++)
		if (!strcmp(e->ctrs[i].name, name))
			return e->ctrs[i].value;
	fz_fail("fz_dev_ctr: no counter of that name\n");
}

/* --- the driver and a fake device ----------------------------------------------------- */

static void fdev_irq(void *ctx)
{
	vnic_poller_schedule(&((struct fz_fdev *)ctx)->poller);
}

static void send_to_drv(struct fz_fdev *f, struct vnic_crq *m)
{
	/* the hv takes only messages with a class byte: everything else would vanish */
	m->first |= VNIC_CRQ_CMD_RSP;
	vnic_hv_send_crq(f->hv, VNIC_HV_SERVER, m);
}

void fz_fdev_xport(struct fz_fdev *f)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_XPORT_EVENT;
	m.xport.reason = VNIC_XPORT_RESET;
	send_to_drv(f, &m);
}

/* Our rings and what came on them. */
static void rings_free(struct fz_fdev *f)
{
	unsigned int q;

	for (q = 0; q < FZ_FDEV_QUEUES; q++) {
		if (f->txsubm[q])
			vnic_hv_free_subcrq(f->hv, f->txsubm[q]);
		if (f->rxadd[q])
			vnic_hv_free_subcrq(f->hv, f->rxadd[q]);
		f->txsubm[q] = f->rxadd[q] = NULL;
		f->txcomp[q] = f->rxcomp[q] = 0;
		f->txd_head[q] = f->txd_n[q] = 0;
		f->rxb_head[q] = f->rxb_n[q] = 0;
	}
	f->ntx = f->nrx = 0;
	f->logged_in = f->link_up = false;
}

void fz_fdev_reset(struct fz_fdev *f)
{
	rings_free(f);
	memset(f->req, 0, sizeof(f->req));
	memset(f->mapped, 0, sizeof(f->mapped));
	memset(f->map_len, 0, sizeof(f->map_len));
	f->map_bytes = 0;
}

void fz_fdev_txd_drop(struct fz_fdev *f, unsigned int q, uint32_t i)
{
	uint32_t n = f->txd_n[q];

	if (i >= n)
		return;
	/* the oldest takes its place: order among the rest does not matter */
	*fz_fdev_txd(f, q, i) = *fz_fdev_txd(f, q, 0);
	f->txd_head[q] = (f->txd_head[q] + 1) % FZ_FDEV_TRACK;
	f->txd_n[q] = n - 1;
}

void fz_fdev_rxb_drop(struct fz_fdev *f, unsigned int q, uint32_t i)
{
	uint32_t n = f->rxb_n[q];

	if (i >= n)
		return;
	*fz_fdev_rxb(f, q, i) = *fz_fdev_rxb(f, q, 0);
	f->rxb_head[q] = (f->rxb_head[q] + 1) % FZ_FDEV_TRACK;
	f->rxb_n[q] = n - 1;
}

void fz_fdev_drain(struct fz_fdev *f)
{
	const union vnic_subcrq_entry *e;
	unsigned int q;

	for (q = 0; q < f->ntx; q++) {
		while ((e = vnic_subcrq_peek(f->txsubm[q]))) {
			if (e->generic.type == VNIC_TX_DESC) {
				struct fz_txd *d;

				if (f->txd_n[q] == FZ_FDEV_TRACK)
					fz_fdev_txd_drop(f, q, 0);
				d = fz_fdev_txd(f, q, f->txd_n[q]++);
				d->corr = vnic_be32_get(&e->tx.correlator);
				d->flags1 = e->tx.flags1;
				d->mss = vnic_be16_get(&e->tx.mss);
				d->len = vnic_be32_get(&e->tx.sge_len);
			} else if (e->generic.type == VNIC_HDR_DESC ||
				   e->generic.type == VNIC_HDR_EXT_DESC) {
				f->hdr_descs++;
			} else {
				f->bad_entries++;
			}
			vnic_subcrq_consume(f->txsubm[q]);
		}
	}
	for (q = 0; q < f->nrx; q++) {
		while ((e = vnic_subcrq_peek(f->rxadd[q]))) {
			struct fz_rxb *b;

			if (f->rxb_n[q] == FZ_FDEV_TRACK)
				fz_fdev_rxb_drop(f, q, 0);
			b = fz_fdev_rxb(f, q, f->rxb_n[q]++);
			b->corr = vnic_be64_get(&e->rx_add.correlator);
			b->ioba = vnic_be32_get(&e->rx_add.ioba);
			b->len = vnic_be24_get(&e->rx_add.len);
			b->map_id = e->rx_add.map_id;
			vnic_subcrq_consume(f->rxadd[q]);
		}
	}
}

long fz_fdev_txcomp(struct fz_fdev *f, unsigned int q, const union vnic_subcrq_entry *e)
{
	if (q >= f->ntx)
		return VNIC_H_PARAMETER;
	return vnic_hv_send_subcrq(f->hv, VNIC_HV_SERVER, f->txcomp[q], e);
}

long fz_fdev_rxcomp(struct fz_fdev *f, unsigned int q, const union vnic_subcrq_entry *e)
{
	if (q >= f->nrx)
		return VNIC_H_PARAMETER;
	return vnic_hv_send_subcrq(f->hv, VNIC_HV_SERVER, f->rxcomp[q], e);
}

/* --- what a correct device answers ---------------------------------------------------- */

/* A buffer a command made the device DMA-write (the script may change it). */
struct fdev_buf {
	uint64_t ioba;
	uint32_t len;
};

static uint64_t req_mtu(const struct fz_fdev *f)
{
	return f->req[VNIC_CAP_REQ_MTU] ? f->req[VNIC_CAP_REQ_MTU] : 1500 + VNIC_ETH_HLEN;
}

static uint32_t rx_buf_size(const struct fz_fdev *f)
{
	uint64_t need = (req_mtu(f) + VNIC_VLAN_HLEN + 127) & ~(uint64_t)127;

	return f->rx_buf_size > need ? f->rx_buf_size : (uint32_t)need;
}

static bool cap_value(const struct fz_fdev *f, uint16_t cap, uint64_t *v)
{
	switch (cap) {
	case VNIC_CAP_MIN_TX_QUEUES:
	case VNIC_CAP_MIN_RX_QUEUES:
		*v = 1;
		return true;
	case VNIC_CAP_MAX_TX_QUEUES:
		*v = f->max_tx_queues;
		return true;
	case VNIC_CAP_MAX_RX_QUEUES:
		*v = f->max_rx_queues;
		return true;
	case VNIC_CAP_MIN_TX_ENTRIES:
	case VNIC_CAP_MIN_RX_ADD_ENTRIES:
		*v = 16;
		return true;
	case VNIC_CAP_MAX_TX_ENTRIES:
	case VNIC_CAP_MAX_RX_ADD_ENTRIES:
		*v = f->max_entries;
		return true;
	case VNIC_CAP_TCP_IP_OFFLOAD:
		*v = 1;
		return true;
	case VNIC_CAP_MIN_MTU:
		*v = 68 + VNIC_ETH_HLEN;
		return true;
	case VNIC_CAP_MAX_MTU:
		*v = f->max_mtu;
		return true;
	case VNIC_CAP_TX_RX_DESC_REQ:
		*v = f->desc_req;
		return true;
	case VNIC_CAP_MAX_IND_DESCS:
		*v = VNIC_MAX_IND_DESCS;
		return true;
	case VNIC_CAP_RX_BUF_SIZE:
		*v = rx_buf_size(f);
		return true;
	default:
		if (cap < 64 && f->req[cap]) {
			*v = f->req[cap];
			return true;
		}
		return false;
	}
}

static uint8_t cap_request(struct fz_fdev *f, struct vnic_crq *r)
{
	uint16_t cap = vnic_be16_get(&r->cap.capability);
	uint64_t v = vnic_be64_get(&r->cap.number), min = 1, max;

	switch (cap) {
	case VNIC_CAP_REQ_TX_QUEUES:
		max = f->max_tx_queues;
		break;
	case VNIC_CAP_REQ_RX_QUEUES:
		max = f->max_rx_queues;
		break;
	case VNIC_CAP_REQ_TX_ENTRIES:
	case VNIC_CAP_REQ_RX_ADD_ENTRIES:
		min = 16;
		max = f->max_entries;
		break;
	case VNIC_CAP_REQ_MTU:
		min = 68 + VNIC_ETH_HLEN;
		max = f->max_mtu;
		break;
	case VNIC_CAP_REQ_IND_DESCS:
		max = VNIC_MAX_IND_DESCS;
		break;
	default:
		return VNIC_RC_PARAMETER;
	}
	if (v < min)
		return VNIC_RC_PARAMETER;
	if (v > max) {
		vnic_be64_put(&r->cap.number, max);
		return VNIC_RC_PARTIALSUCCESS;
	}
	f->req[cap] = v;
	return VNIC_RC_SUCCESS;
}

static uint8_t offload_query(struct fz_fdev *f, struct vnic_crq *r, struct fdev_buf *buf)
{
	struct vnic_ip_offload b;

	if (vnic_be16_get(&r->ip_offload.len) < sizeof(b))
		return VNIC_RC_INVALIDLENGTH;
	memset(&b, 0, sizeof(b));
	vnic_be32_put(&b.len, sizeof(b));
	vnic_be32_put(&b.version, VNIC_IP_OFFLOAD_VERSION);
	/* every offload on: bytes 8..15, ipv4_chksum to large_tx_ipv6 */
	memset((uint8_t *)&b + offsetof(struct vnic_ip_offload, ipv4_chksum), 1, 8);
	b.bad_packet_rx = 1;
	vnic_be16_put(&b.max_ipv4_hdr_size, 60);
	vnic_be16_put(&b.max_ipv6_hdr_size, 120);
	vnic_be16_put(&b.max_tcp_hdr_size, 60);
	vnic_be16_put(&b.max_udp_hdr_size, 8);
	vnic_be32_put(&b.max_large_tx_size, VNIC_TSO_BUF_SIZE);
	vnic_be16_put(&b.min_large_tx_mss, (uint16_t)f->min_mss);
	vnic_be16_put(&b.max_large_tx_segs, 0xffff);
	b.ipv6_ext_hdr = VNIC_IPV6_EXT_LIMITED;
	if (f->large_rx) {
		b.large_rx_ipv4 = 1;
		b.large_rx_ipv6 = 1;
		vnic_be32_put(&b.max_large_rx_size, VNIC_PKT_MAX_LEN);
	}
	buf->ioba = vnic_be64_get(&r->ip_offload.ioba);
	buf->len = sizeof(b);
	if (vnic_hv_dma_write(f->hv, buf->ioba, &b, sizeof(b))) {
		buf->len = 0;
		return VNIC_RC_INVALIDIOBA;
	}
	return VNIC_RC_SUCCESS;
}

static uint32_t pow2_at_least(uint64_t v)
{
	uint32_t p = 16;

	while (p < v && p < VNIC_HV_MAX_SUBCRQ_ENTRIES)
		p <<= 1;
	return p;
}

static void ring_add(struct fz_fdev *f, uint32_t entries, struct vnic_subcrq **q)
{
	FZ_CHECK(vnic_hv_reg_subcrq(f->hv, VNIC_HV_SERVER, entries, q) == 0);
	vnic_hv_subcrq_set_irq(*q, fdev_irq, f);
	vnic_hv_subcrq_irq_enable(*q);
}

static uint8_t login(struct fz_fdev *f, struct vnic_crq *r, struct fdev_buf *buf)
{
	uint8_t in[VNIC_LOGIN_BUF_MAX], out[VNIC_LOGIN_RSP_BUF_MAX];
	const struct vnic_login_buf *lb = (const void *)in;
	struct vnic_login_rsp_buf *rb = (void *)out;
	uint32_t len = vnic_be16_get(&r->login.len), ntx, nrx, otx, orx, need, i;
	uint64_t ind = f->req[VNIC_CAP_REQ_IND_DESCS];

	if (len < sizeof(*lb) || len > sizeof(in) ||
	    vnic_hv_dma_read(f->hv, vnic_be64_get(&r->login.ioba), in, len))
		return VNIC_RC_INVALIDLENGTH;
	ntx = vnic_be32_get(&lb->num_txcomp_subcrqs);
	nrx = vnic_be32_get(&lb->num_rxcomp_subcrqs);
	otx = vnic_be32_get(&lb->off_txcomp_subcrqs);
	orx = vnic_be32_get(&lb->off_rxcomp_subcrqs);
	if (!ntx || !nrx || ntx > FZ_FDEV_QUEUES || nrx > FZ_FDEV_QUEUES ||
	    (uint64_t)otx + 4 * ntx > len || (uint64_t)orx + 4 * nrx > len)
		return VNIC_RC_PARAMETER;
	rings_free(f);
	for (i = 0; i < ntx; i++) {
		f->txcomp[i] = get32(in + otx + 4 * i);
		ring_add(f, pow2_at_least(f->max_entries > ind ? f->max_entries : ind),
			 &f->txsubm[i]);
	}
	for (i = 0; i < nrx; i++) {
		f->rxcomp[i] = get32(in + orx + 4 * i);
		ring_add(f, pow2_at_least(f->max_entries > ind ? f->max_entries : ind),
			 &f->rxadd[i]);
	}
	f->ntx = ntx;
	f->nrx = nrx;
	need = (uint32_t)(sizeof(*rb) + 4 * (ntx + nrx));
	memset(out, 0, sizeof(out));
	vnic_be32_put(&rb->len, need);
	vnic_be32_put(&rb->version, VNIC_LOGIN_VERSION);
	vnic_be32_put(&rb->num_txsubm_subcrqs, ntx);
	vnic_be32_put(&rb->off_txsubm_subcrqs, sizeof(*rb));
	vnic_be32_put(&rb->num_rxadd_subcrqs, nrx);
	vnic_be32_put(&rb->off_rxadd_subcrqs, (uint32_t)(sizeof(*rb) + 4 * ntx));
	vnic_be32_put(&rb->rx_buf_size, rx_buf_size(f));
	for (i = 0; i < ntx; i++)
		vnic_be32_put((struct vnic_be32 *)(out + sizeof(*rb) + 4 * i),
			      f->txsubm[i]->handle);
	for (i = 0; i < nrx; i++)
		vnic_be32_put((struct vnic_be32 *)(out + sizeof(*rb) + 4 * (ntx + i)),
			      f->rxadd[i]->handle);
	buf->ioba = vnic_be64_get(&lb->login_rsp_ioba);
	buf->len = need;
	if (vnic_be32_get(&lb->login_rsp_len) < need ||
	    vnic_hv_dma_write(f->hv, buf->ioba, out, need)) {
		buf->len = 0;
		return VNIC_RC_INVALIDIOBA;
	}
	f->logged_in = true;
	return VNIC_RC_SUCCESS;
}

/* The datapath's state at link down: whatever the driver sent is forgotten. */
static void link_down(struct fz_fdev *f)
{
	fz_fdev_drain(f);
	for (unsigned int q = 0; q < FZ_FDEV_QUEUES; q++)
		f->txd_n[q] = f->rxb_n[q] = 0;
	f->link_up = false;
}

/*
 * The rc a correct device answers command r with, r turned into the rest
 * of its answer. Side effects (rings, DMA writes) happen here; *buf names a
 * buffer written. The link-state indication after a link up is sent apart.
 */
static uint8_t good_answer(struct fz_fdev *f, struct vnic_crq *r, struct fdev_buf *buf)
{
	uint64_t v;

	switch (r->cmd) {
	case VNIC_CMD_VERSION_EXCHANGE:
		vnic_be16_put(&r->version.version, VNIC_PROTO_VERSION);
		return VNIC_RC_SUCCESS;
	case VNIC_CMD_QUERY_CAPABILITY:
		if (!cap_value(f, vnic_be16_get(&r->cap.capability), &v))
			return VNIC_RC_PARAMETER;
		vnic_be64_put(&r->cap.number, v);
		return VNIC_RC_SUCCESS;
	case VNIC_CMD_REQUEST_CAPABILITY:
		return cap_request(f, r);
	case VNIC_CMD_QUERY_IP_OFFLOAD:
		return offload_query(f, r, buf);
	case VNIC_CMD_CONTROL_IP_OFFLOAD:
		return VNIC_RC_SUCCESS;
	case VNIC_CMD_REQUEST_MAP:
		if (!r->map.map_id)
			return VNIC_RC_PARAMETER;
		f->map_bytes -= f->map_len[r->map.map_id];
		f->mapped[r->map.map_id] = true;
		f->map_len[r->map.map_id] = vnic_be32_get(&r->map.len);
		f->map_bytes += f->map_len[r->map.map_id];
		return VNIC_RC_SUCCESS;
	case VNIC_CMD_REQUEST_UNMAP:
		f->map_bytes -= f->map_len[r->map.map_id];
		f->map_len[r->map.map_id] = 0;
		f->mapped[r->map.map_id] = false;
		return VNIC_RC_SUCCESS;
	case VNIC_CMD_LOGIN:
		return login(f, r, buf);
	case VNIC_CMD_LOGICAL_LINK_STATE:
		if (!f->logged_in)
			return VNIC_RC_INVALIDSTATE;
		if (r->link_state.state == VNIC_LINK_UP)
			f->link_up = true;
		else if (r->link_state.state == VNIC_LINK_DOWN)
			link_down(f);
		else if (r->link_state.state == VNIC_LINK_QUERY)
			r->link_state.state = f->link_up ? VNIC_LINK_UP : VNIC_LINK_DOWN;
		return VNIC_RC_SUCCESS;
	case VNIC_CMD_CHANGE_MAC_ADDR:
		return VNIC_RC_SUCCESS;
	default:
		return VNIC_RC_UNKNOWNCOMMAND;
	}
}

static void raw_msg(struct fz_fdev *f, struct vnic_crq *m)
{
	fz_bytes(&f->script, m->raw, sizeof(m->raw));
}

/* Changes the buffer a command made us write: pairs of (offset, value) from the script. */
static void buf_mutate(struct fz_fdev *f, const struct fdev_buf *buf, unsigned int pairs)
{
	for (unsigned int i = 0; i < pairs; i++) {
		uint8_t off = fz_u8(&f->script), v = fz_u8(&f->script);

		if (buf->len)
			vnic_hv_dma_write(f->hv, buf->ioba + off % buf->len, &v, 1);
	}
}

static void link_indication(struct fz_fdev *f)
{
	struct vnic_crq m;

	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LINK_STATE_INDICATION;
	m.link_ind.phys_link_state = VNIC_LINK_UP;
	m.link_ind.logical_link_state = f->link_up ? VNIC_LINK_UP : VNIC_LINK_DOWN;
	send_to_drv(f, &m);
}

/* One message from the driver, answered as the script says (or correctly). */
static void handle(struct fz_fdev *f, const struct vnic_crq *m)
{
	struct fdev_buf buf = {0};
	struct vnic_crq r = *m, x;
	uint8_t a = 0, rc;

	f->msgs++;
	if (m->first == VNIC_CRQ_XPORT_EVENT) {
		fz_fdev_reset(f);
		return;
	}
	if (f->finishing) {
		/* the driver must give up: INIT is answered, every command refused */
		if (m->first == VNIC_CRQ_INIT_CMD) {
			fz_fdev_reset(f);
			r.init.type = VNIC_CRQ_INIT_COMPLETE;
			send_to_drv(f, &r);
		} else if (m->first == VNIC_CRQ_CMD_RSP && !(m->cmd & VNIC_CMD_RSP)) {
			r.cmd |= VNIC_CMD_RSP;
			r.rc = VNIC_RC_PARAMETER;
			send_to_drv(f, &r);
		}
		return;
	}
	if (f->scripted && !f->script.left)
		f->scripted = false;
	if (f->scripted)
		a = fz_u8(&f->script);
	if (a & FZ_ACT_INJECT) {
		raw_msg(f, &x);
		send_to_drv(f, &x);
		f->watch = true;
	}
	if (m->first == VNIC_CRQ_INIT_CMD) {
		if (m->init.type != VNIC_CRQ_INIT)
			return;
		fz_fdev_reset(f);
		r.init.type = VNIC_CRQ_INIT_COMPLETE;
	} else if (m->first == VNIC_CRQ_CMD_RSP && !(m->cmd & VNIC_CMD_RSP)) {
		rc = good_answer(f, &r, &buf);
		r.cmd |= VNIC_CMD_RSP;
		r.rc = rc;
		memset(r.rc_detail, 0, sizeof(r.rc_detail));
	} else {
		return;
	}
	if (a & FZ_ACT_BUF)
		buf_mutate(f, &buf, 1 + ((a & FZ_ACT_BUF_MANY) >> 5));
	switch ((enum fz_fdev_act)(a & 3)) {
	case FZ_ACT_GOOD:
		break;
	case FZ_ACT_XOR: {
		uint8_t pos = fz_u8(&f->script);

		r.raw[pos % sizeof(r.raw)] ^= fz_u8(&f->script);
		f->watch = true;
		break;
	}
	case FZ_ACT_RAW:
		raw_msg(f, &r);
		f->watch = true;
		break;
	case FZ_ACT_SILENT:
		f->watch = true;
		return;
	}
	send_to_drv(f, &r);
	if (a & FZ_ACT_TWICE)
		send_to_drv(f, &r);
	if (m->first == VNIC_CRQ_CMD_RSP && m->cmd == VNIC_CMD_LOGICAL_LINK_STATE &&
	    m->link_state.state == VNIC_LINK_UP && f->link_up)
		link_indication(f);
}

/*
 * The driver waits for an answer we did not give, or one it could not use:
 * it is made to give up, as a partner reset makes it.
 */
static void finish(struct fz_fdev *f)
{
	f->finishes++;
	f->finishing = true;
	fz_fdev_reset(f);
	fz_fdev_xport(f);
}

static int fdev_poll(struct vnic_poller *p, int budget)
{
	struct fz_fdev *f = vnic_container_of(p, struct fz_fdev, poller);
	struct vnic_crq m;
	int n = 0;

	fz_fdev_drain(f);
	while (vnic_hv_crq_recv(f->hv, VNIC_HV_SERVER, &m)) {
		handle(f, &m);
		n++;
	}
	if (!f->watch)
		return 0;
	/* Watching: stay scheduled until the driver has had its say. */
	if (n || (atomic_load(&f->cpu->pending) & ~f->poller.bit)) {
		f->idle = 0;
		return budget;
	}
	if (++f->idle < 2)
		return budget;
	f->watch = false;
	f->idle = 0;
	if (!f->drv || !vnic_drv_is_open(f->drv))
		finish(f);
	return 0;
}

void fz_fdev_init(struct fz_fdev *f, struct vnic_hv *hv, struct vnic_cpu *cpu)
{
	memset(f, 0, sizeof(*f));
	f->hv = hv;
	f->cpu = cpu;
	f->max_tx_queues = FZ_FDEV_QUEUES;
	f->max_rx_queues = FZ_FDEV_QUEUES;
	f->max_entries = 1024;
	f->max_mtu = 9000 + VNIC_ETH_HLEN;
	f->min_mss = VNIC_DEV_DEFAULT_LSO_MSS;
	f->desc_req = vnic_desc_req_make(0, VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3,
					 VNIC_DESC_REQ_HDRS | VNIC_DESC_REQ_L3);
	FZ_CHECK(vnic_cpu_add(cpu, &f->poller, "fz-fdev", fdev_poll) == 0);
	vnic_hv_crq_set_irq(hv, VNIC_HV_SERVER, fdev_irq, f);
	vnic_hv_crq_irq_enable(hv, VNIC_HV_SERVER, true);
}

void fz_fdev_fini(struct fz_fdev *f)
{
	fz_fdev_reset(f);
	vnic_hv_crq_irq_enable(f->hv, VNIC_HV_SERVER, false);
}

void fz_fdev_script(struct fz_fdev *f, const uint8_t *p, size_t n)
{
	f->script.p = p;
	f->script.left = n;
	f->scripted = n > 0;
	f->watch = false;
	f->idle = 0;
	f->finishing = false;
}

/* --- a driver with the fake device and a host ----------------------------------------- */

static void host_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct fz_host *h = ctx;

	(void)queue;
	for (unsigned int i = 0; i < n; i++) {
		struct vnic_pkt *p = pkts[i];

		/* what a host may rely on: a frame inside its buffer */
		FZ_CHECK(p->len >= VNIC_ETH_HLEN);
		FZ_CHECK(p->data >= p->head && (size_t)(p->data - p->head) + p->len <= p->buf_size);
		if (p->gso_type && p->gso_segs > 1)
			h->rx_aggregates++;
		h->rx_pkts++;
		vnic_pkt_free(p);
	}
}

static void host_tx_done(void *ctx, unsigned int queue, uint32_t cookie, uint32_t bytes, int status)
{
	struct fz_host *h = ctx;

	(void)queue;
	(void)status;
	FZ_CHECK(cookie < h->ncookies);
	FZ_CHECK(h->state[cookie] == FZ_PKT_SENT);
	FZ_CHECK(bytes == h->len[cookie]);
	h->state[cookie] = FZ_PKT_DONE;
	h->in_flight--;
}

static void host_tx_wake(void *ctx, unsigned int queue)
{
	(void)queue;
	((struct fz_host *)ctx)->tx_wakes++;
}

static const struct vnic_host_ops fz_host_ops = {
	.rx = host_rx,
	.tx_done = host_tx_done,
	.tx_wake = host_tx_wake,
};

void fz_drv_create(struct fz_drv *d, const struct vnic_drv_config *cfg)
{
	memset(d, 0, sizeof(*d));
	FZ_CHECK(vnic_hv_create(&d->hv, VNIC_MAX_IND_DESCS, NULL) == 0);
	FZ_CHECK(vnic_cpu_init(&d->cpu, "fz-drv", 0) == 0);
	if (cfg)
		d->cfg = *cfg;
	else
		vnic_drv_config_default(&d->cfg);
	d->cfg.cpu = &d->cpu;
	FZ_CHECK(vnic_drv_create(&d->drv, d->hv, &d->cfg) == 0);
	fz_fdev_init(&d->fdev, d->hv, &d->cpu);
	d->fdev.drv = d->drv;
	vnic_netdev_attach(vnic_drv_netdev(d->drv), &fz_host_ops, &d->host);
	FZ_CHECK(vnic_pkt_pool_init(&d->pool, FZ_HOST_PKTS, 64 + VNIC_PKT_MAX_LEN, 64) == 0);
}

void fz_drv_destroy(struct fz_drv *d)
{
	vnic_drv_destroy(d->drv);
	fz_fdev_fini(&d->fdev);
	vnic_cpu_fini(&d->cpu);
	vnic_hv_destroy(d->hv);
	FZ_CHECK(d->pool.nfree == d->pool.count);
	vnic_pkt_pool_fini(&d->pool);
	free(d->ctrs);
}

int fz_drv_open(struct fz_drv *d)
{
	return vnic_drv_open(d->drv, NULL, 0, FZ_OPEN_TIMEOUT_NS);
}

int fz_drv_close(struct fz_drv *d)
{
	return vnic_drv_close(d->drv, NULL, 0, FZ_OPEN_TIMEOUT_NS);
}

bool fz_drv_run(struct fz_drv *d)
{
	struct vnic_cpu *cpus[1] = {&d->cpu};

	return fz_run(cpus, 1, NULL, NULL, 100000);
}

int fz_drv_xmit(struct fz_drv *d, unsigned int q, struct vnic_pkt *pkt, bool more)
{
	struct fz_host *h = &d->host;
	uint32_t cookie = h->ncookies, len = pkt->len;
	int rc;

	FZ_CHECK(cookie < FZ_COOKIES);
	pkt->priv = cookie;
	h->len[cookie] = len;
	h->state[cookie] = FZ_PKT_SENT;
	h->ncookies++;
	h->in_flight++;
	rc = vnic_netdev_xmit(vnic_drv_netdev(d->drv), q, pkt, more);
	if (rc == VNIC_TX_BUSY) {
		/* still ours: never seen by the driver, so no tx_done either */
		FZ_CHECK(h->state[cookie] == FZ_PKT_SENT);
		h->state[cookie] = FZ_PKT_FREE;
		h->in_flight--;
		vnic_pkt_free(pkt);
	}
	return rc;
}

void fz_drv_snap(struct fz_drv *d)
{
	if (!d->ctrs) {
		d->ctrs = calloc(CTRS_MAX, sizeof(*d->ctrs));
		FZ_CHECK(d->ctrs);
	}
	d->nctrs = vnic_drv_counters(d->drv, d->ctrs, CTRS_MAX);
	FZ_CHECK(d->nctrs <= CTRS_MAX);
}

uint64_t fz_drv_ctr(const struct fz_drv *d, const char *name)
{
	for (unsigned int i = 0; i < d->nctrs; i++)
		if (!strcmp(d->ctrs[i].name, name))
			return d->ctrs[i].value;
	fz_fail("fz_drv_ctr: no counter of that name\n");
}

void fz_drv_reset(struct fz_drv *d, bool logout)
{
	struct fz_host *h = &d->host;

	fz_fdev_script(&d->fdev, NULL, 0);
	/* link down (or a bring-up abandoned): nothing it sent stays out */
	FZ_CHECK(fz_drv_close(d) == 0);
	if (logout) {
		/* and the login forgotten: the next open starts from INIT */
		fz_fdev_xport(&d->fdev);
		FZ_CHECK(fz_drv_run(d));
		fz_fdev_reset(&d->fdev);
		fz_drv_snap(d);
		FZ_CHECK(fz_drv_ctr(d, "state") == 0);
	}
	FZ_CHECK(!vnic_drv_is_open(d->drv));
	FZ_CHECK(vnic_drv_pools_full(d->drv));
	FZ_CHECK(d->pool.nfree == d->pool.count);
	/* every packet xmit took was answered, once */
	FZ_CHECK(h->in_flight == 0);
	for (uint32_t i = 0; i < h->ncookies; i++)
		FZ_CHECK(h->state[i] != FZ_PKT_SENT);
	memset(h->state, 0, h->ncookies);
	h->ncookies = 0;
}
