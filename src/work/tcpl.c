// SPDX-License-Identifier: MIT
/*
 * The TCP-like layer: one connection's sequence space, headers, ACKs and
 * retransmission. Enough TCP that loss, reordering and duplication never
 * hang a workload nor deliver a byte twice; no more (no handshake, no
 * options, no congestion control, go-back-N instead of SACK).
 *
 * Sequence numbers are kept as 64-bit stream offsets and turned into 32-bit
 * wire numbers (offset + initial sequence number, mod 2^32) only in headers;
 * received numbers are placed relative to the nearest offset we expect, as
 * TCP's 2^31 rule allows (serial number arithmetic: the signed 32-bit
 * difference). Initial sequence numbers sit just below 2^32 so the wrap is
 * crossed early in every run. The payload pattern takes the 64-bit offset
 * (and repeats every 2^32 bytes, so receivers check it from the 32-bit
 * sequence number).
 *
 * Runs on the host's cpu; the received segments it sees were already
 * checked (checksum, every payload byte) by the rx callback.
 */
#include <string.h>

#include "work_int.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t l3_hlen(const struct vnic_tcpl_host *h)
{
	return h->ipv6 ? 40 : 20;
}

static void addrs(bool ipv6, bool client, uint8_t *saddr, uint8_t *daddr)
{
	memset(saddr, 0, 16);
	memset(daddr, 0, 16);
	if (ipv6) {
		saddr[0] = daddr[0] = 0xfd;
		saddr[15] = client ? 1 : 2;
		daddr[15] = client ? 2 : 1;
	} else {
		saddr[0] = daddr[0] = 10;
		saddr[3] = client ? 1 : 2;
		daddr[3] = client ? 2 : 1;
	}
}

static void build_template(struct vnic_tcpl_host *h, struct tcpl_conn *c, const uint8_t *smac,
			   const uint8_t *dmac, bool client)
{
	uint8_t saddr[16], daddr[16], *p = c->hdr, *l3, *th;
	uint16_t sport = client ? TCPL_CLIENT_PORT + c->idx : TCPL_SERVER_PORT;
	uint16_t dport = client ? TCPL_SERVER_PORT : TCPL_CLIENT_PORT + c->idx;

	memset(c->hdr, 0, sizeof(c->hdr));
	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	put16(p + 12, h->ipv6 ? VNIC_ETH_P_IPV6 : VNIC_ETH_P_IP);
	l3 = p + VNIC_ETH_HLEN;
	addrs(h->ipv6, client, saddr, daddr);
	/* The lengths of a header-only packet (each frame sets its own), so
	 * that the template parses and pick_queue can hash it. */
	if (h->ipv6) {
		/* Flow label per connection, as Linux's auto flow labels. */
		put32(l3, 0x60000000u | ((c->idx * 0x9e37u + 1) & 0xfffff));
		put16(l3 + 4, TCPL_TCP_HLEN);
		l3[6] = VNIC_IPPROTO_TCP;
		l3[7] = 64;
		memcpy(l3 + 8, saddr, 16);
		memcpy(l3 + 24, daddr, 16);
	} else {
		l3[0] = 0x45;
		put16(l3 + 2, (uint16_t)(l3_hlen(h) + TCPL_TCP_HLEN));
		put16(l3 + 6, 0x4000);	/* DF */
		l3[8] = 64;
		l3[9] = VNIC_IPPROTO_TCP;
		memcpy(l3 + 12, saddr, 4);
		memcpy(l3 + 16, daddr, 4);
	}
	th = l3 + l3_hlen(h);
	put16(th, sport);
	put16(th + 2, dport);
	th[12] = (TCPL_TCP_HLEN / 4) << 4;
	put16(th + 14, 0xffff);	/* fixed window; the real limit is ours */
	c->hdr_len = (uint8_t)(VNIC_ETH_HLEN + l3_hlen(h) + TCPL_TCP_HLEN);
}

/* The flow hash the NIC's RSS would compute, and the tx queue it picks. */
static void pick_queue(struct vnic_tcpl_host *h, struct tcpl_conn *c)
{
	const uint8_t *key = h->dev->rss_key ? h->dev->rss_key : vnic_rss_default_key;
	struct vnic_hdrs hd;
	unsigned int q;

	c->hash = 0;
	if (vnic_parse_frame(c->hdr, c->hdr_len, &hd) == VNIC_PARSE_OK)
		c->hash = vnic_rss_hash_frame(key, c->hdr, &hd);
	q = vnic_netdev_pick_tx(h->dev, c->hash);
	/* The host runs on queue 0's cpu; queues elsewhere are not ours to use. */
	if (q >= HOST_MAX_QUEUES || vnic_netdev_tx_cpu(h->dev, q) != h->cpu)
		q = 0;
	c->txq = (uint16_t)q;
}

void vnic_tcpl_conn_init(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint32_t idx,
			 const uint8_t *smac, const uint8_t *dmac, bool client)
{
	memset(c, 0, sizeof(*c));
	c->host = h;
	c->idx = idx;
	c->iss = (client ? 0xffff0000u : 0xfff00000u) - idx * 0x10000u;
	c->seed = idx * 0x85ebca6bu ^ (client ? 0xc1c1c1c1u : 0x5e5e5e5eu);
	c->ip_id = (uint16_t)(idx * 251);
	c->rto_cur = h->rto_ns;
	build_template(h, c, smac, dmac, client);
	pick_queue(h, c);
}

void vnic_tcpl_conn_sync(struct tcpl_conn *c, const uint8_t *smac, const uint8_t *dmac)
{
	memcpy(c->hdr, dmac, 6);
	memcpy(c->hdr + 6, smac, 6);
	pick_queue(c->host, c);
}

void vnic_tcpl_conn_set_origin(struct tcpl_conn *c, uint32_t iss, uint64_t off)
{
	c->iss = iss;
	c->origin = off;
	c->snd_una = c->snd_nxt = c->snd_max = c->snd_end = off;
	c->rcv_nxt = off;
	vnic_ctr_set(&c->delivered, 0);
}

void vnic_tcpl_conn_key(const struct tcpl_conn *c, struct conn_key *key)
{
	const uint8_t *l3 = c->hdr + VNIC_ETH_HLEN, *th;
	bool ipv6 = c->host->ipv6;

	memset(key, 0, sizeof(*key));
	memcpy(key->saddr, l3 + (ipv6 ? 8 : 12), ipv6 ? 16 : 4);
	memcpy(key->daddr, l3 + (ipv6 ? 24 : 16), ipv6 ? 16 : 4);
	th = l3 + (ipv6 ? 40 : 20);
	key->sport = (uint16_t)(th[0] << 8 | th[1]);
	key->dport = (uint16_t)(th[2] << 8 | th[3]);
	key->irs = c->iss;
	key->seed = c->seed;
}

bool vnic_tcpl_wants_tx(const struct tcpl_conn *c)
{
	if (c->ack_pending)
		return true;
	return c->snd_nxt < c->snd_end && c->snd_nxt - c->snd_una < c->host->window;
}

bool vnic_tcpl_busy(const struct tcpl_conn *c)
{
	return c->snd_una < c->snd_end || c->ack_pending || c->tsq_bytes;
}

void vnic_tcpl_send(struct tcpl_conn *c, uint64_t bytes)
{
	c->snd_end = bytes > UINT64_MAX - c->snd_end ? UINT64_MAX : c->snd_end + bytes;
	vnic_tcpl_kick(c);
}

void vnic_tcpl_close_send(struct tcpl_conn *c)
{
	if (c->snd_end > c->snd_max)
		c->snd_end = c->snd_max;
}

static void arm_rto(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;

	c->rto_deadline = h->now + c->rto_cur;
	if (!h->next_rto || c->rto_deadline < h->next_rto)
		h->next_rto = c->rto_deadline;
}

/* ---- transmit ----------------------------------------------------------- */

static uint16_t segs_of(const struct vnic_tcpl_host *h, uint32_t len)
{
	return len ? (uint16_t)((len + h->mss - 1) / h->mss) : 1;
}

/* Headers from the template, payload from the pattern, checksums. */
static void build_frame(struct tcpl_conn *c, struct vnic_pkt *pkt, uint64_t off, uint32_t len,
			uint8_t flags)
{
	struct vnic_tcpl_host *h = c->host;
	uint32_t l3len = l3_hlen(h), l4_off = VNIC_ETH_HLEN + l3len;
	uint8_t *p = pkt->data, *l3 = p + VNIC_ETH_HLEN, *th = p + l4_off;
	uint16_t segs = segs_of(h, len);
	vnic_wsum_t pseudo;

	memcpy(p, c->hdr, c->hdr_len);
	vnic_work_pattern_fill(p + c->hdr_len, len, c->seed, off);
	pkt->len = c->hdr_len + len;

	if (h->ipv6) {
		put16(l3 + 4, (uint16_t)(TCPL_TCP_HLEN + len));
		pseudo = vnic_csum_pseudo6(l3 + 8, l3 + 24, VNIC_IPPROTO_TCP, TCPL_TCP_HLEN + len);
	} else {
		put16(l3 + 2, (uint16_t)(l3len + TCPL_TCP_HLEN + len));
		put16(l3 + 4, c->ip_id);
		vnic_csum_ip4_set(l3, l3len);
		pseudo = vnic_csum_pseudo4(l3 + 12, l3 + 16, VNIC_IPPROTO_TCP, TCPL_TCP_HLEN + len);
	}
	/* A superpacket's segments take consecutive IDs (the GSO contract). */
	c->ip_id = (uint16_t)(c->ip_id + segs);
	put32(th + 4, c->iss + (uint32_t)off);
	put32(th + 8, h->keys[c->idx].irs + (uint32_t)c->rcv_nxt);
	th[13] = flags;

	pkt->l2_len = VNIC_ETH_HLEN;
	pkt->l3_len = (uint16_t)l3len;
	pkt->l4_len = TCPL_TCP_HLEN;
	pkt->l3_proto = h->ipv6 ? VNIC_ETH_P_IPV6 : VNIC_ETH_P_IP;
	pkt->l4_proto = VNIC_IPPROTO_TCP;
	pkt->flags = VNIC_PKT_F_PARSED;
	pkt->hash = c->hash;
	pkt->priv = c->idx << TCPL_COOKIE_LEN_BITS | pkt->len;
	if (h->csum_offload) {
		uint16_t check = (uint16_t)~vnic_csum_fold(pseudo);

		/* The field holds the pseudo-header sum; the NIC adds the rest. */
		memcpy(th + 16, &check, 2);
		pkt->ip_summed = VNIC_CSUM_PARTIAL;
		pkt->csum_start = (uint16_t)l4_off;
		pkt->csum_offset = 16;
	} else {
		uint16_t check = vnic_csum_fold(vnic_csum_partial(th, TCPL_TCP_HLEN + len, pseudo));

		memcpy(th + 16, &check, 2);
		pkt->ip_summed = VNIC_CSUM_NONE;
	}
	if (len > h->mss) {
		pkt->gso_type = h->ipv6 ? VNIC_GSO_TCPV6 : VNIC_GSO_TCPV4;
		pkt->gso_size = (uint16_t)h->mss;
		pkt->gso_segs = segs;
	}
	c->ack_pending = false;
	c->tsq_bytes += pkt->len;
	h->tsq_total += pkt->len;
	if (c->tsq_bytes > vnic_ctr_read(&h->st.tsq_max))
		vnic_ctr_set(&h->st.tsq_max, c->tsq_bytes);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

enum tcpl_tx vnic_tcpl_build(struct tcpl_conn *c, struct vnic_pkt **out)
{
	struct vnic_tcpl_host *h = c->host;
	uint64_t wnd_end = c->snd_una + h->window;
	bool tsq_blocked = false;
	struct vnic_pkt *pkt;

	if (c->snd_nxt < c->snd_end && c->snd_nxt < wnd_end) {
		uint32_t len = (uint32_t)min64(min64(c->snd_end, wnd_end) - c->snd_nxt, h->max_seg);
		uint8_t flags = VNIC_TCP_ACK;

		/* TSQ: one packet may always be out, so any budget makes progress. */
		if (c->tsq_bytes && c->tsq_bytes + c->hdr_len + len > h->tsq_budget) {
			tsq_blocked = true;
			goto ack_only;
		}
		pkt = vnic_pkt_alloc(h->pool);
		if (vnic_unlikely(!pkt))
			return TCPL_TX_NOBUF;
		if (c->snd_nxt + len == c->snd_end)
			flags |= VNIC_TCP_PSH;	/* the end of what was written */
		build_frame(c, pkt, c->snd_nxt, len, flags);
		if (c->snd_nxt < c->snd_max)
			vnic_ctr_add(&h->st.retransmits,
				 segs_of(h, (uint32_t)min64(len, c->snd_max - c->snd_nxt)));
		if (!c->rto_deadline)
			arm_rto(c);
		c->snd_nxt += len;
		if (c->snd_nxt > c->snd_max)
			c->snd_max = c->snd_nxt;
		*out = pkt;
		return TCPL_TX_SENT;
	}
ack_only:
	if (!c->ack_pending)
		return tsq_blocked ? TCPL_TX_TSQ : TCPL_TX_NONE;
	pkt = vnic_pkt_alloc(h->pool);
	if (vnic_unlikely(!pkt))
		return TCPL_TX_NOBUF;
	build_frame(c, pkt, c->snd_nxt, 0, VNIC_TCP_ACK);
	*out = pkt;
	return TCPL_TX_SENT;
}

/* ---- receive and timers ------------------------------------------------- */

static void rx_ack(struct tcpl_conn *c, uint32_t ack)
{
	int32_t d = (int32_t)(ack - (c->iss + (uint32_t)c->snd_una));

	if (d <= 0 || c->snd_una + (uint64_t)d > c->snd_max)
		return;	/* old, duplicate, or acknowledging what we never sent */
	c->snd_una += (uint64_t)d;
	/* Acknowledged past a rewound snd_nxt: those bytes need no resend. */
	if (c->snd_nxt < c->snd_una)
		c->snd_nxt = c->snd_una;
	c->rto_cur = c->host->rto_ns;
	if (c->snd_una < c->snd_max)
		arm_rto(c);
	else
		c->rto_deadline = 0;
}

static void rx_data(struct tcpl_conn *c, const struct rx_ev *ev)
{
	struct vnic_tcpl_host *h = c->host;
	int32_t d = (int32_t)(ev->seq - (h->keys[c->idx].irs + (uint32_t)c->rcv_nxt));
	uint64_t fresh;

	c->ack_pending = true;	/* every data segment is answered, dups too */
	if (d > 0) {
		/* Beyond a hole: go-back-N drops it and waits for the resend. */
		if (!c->in_gap)
			vnic_ctr_add(&h->st.lost, 1);
		c->in_gap = true;
		vnic_ctr_add(&h->st.ooo, ev->segs);
		return;
	}
	if ((int64_t)ev->len + d <= 0) {
		vnic_ctr_add(&h->st.dup, ev->segs);
		return;
	}
	if (d < 0)
		vnic_ctr_add(&h->st.dup, 1);	/* starts with bytes we have */
	fresh = (uint64_t)((int64_t)ev->len + d);
	c->rcv_nxt += fresh;
	c->in_gap = false;
	vnic_ctr_set(&c->delivered, c->rcv_nxt - c->origin);
	vnic_ctr_add(&h->st.delivered, fresh);
	h->app->deliver(h, c, fresh, ev->ts);
}

void vnic_tcpl_rx(struct tcpl_conn *c, const struct rx_ev *ev)
{
	if (ev->flags & VNIC_TCP_ACK)
		rx_ack(c, ev->ack);
	if (ev->len)
		rx_data(c, ev);
	vnic_tcpl_kick(c);
}

uint64_t vnic_tcpl_timer(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;

	if (!c->rto_deadline || h->now < c->rto_deadline)
		return c->rto_deadline;
	if (c->snd_una >= c->snd_max) {
		c->rto_deadline = 0;
		return 0;
	}
	/* Go back N: resend everything from the oldest unacknowledged byte. */
	vnic_ctr_add(&h->st.timeouts, 1);
	c->snd_nxt = c->snd_una;
	c->rto_cur = min64(c->rto_cur * 2, h->rto_max_ns);
	c->rto_deadline = h->now + c->rto_cur;
	vnic_tcpl_kick(c);
	return c->rto_deadline;
}
