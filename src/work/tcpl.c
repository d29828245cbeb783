// SPDX-License-Identifier: MIT
/*
 * The TCP-like layer: one connection's sequence space, headers, ACKs and
 * loss recovery. Enough TCP that loss, reordering and duplication never hang
 * a workload nor deliver a byte twice, and that a lossy run measures the NIC
 * rather than retransmission timeouts: no handshake, no congestion control,
 * but recovery as Linux TCP does it.
 *
 *  - The receiver keeps what arrives beyond a hole and delivers it in order
 *    once the hole fills (reasm.c), and tells the sender with SACK blocks
 *    (RFC 2018) on its ACKs, a D-SACK block (RFC 2883) for a duplicate.
 *  - The sender keeps a scoreboard (sack.c) and resends only holes: a hole
 *    is lost once DupThresh (3) segments above it are SACKed, or after 3
 *    duplicate ACKs (RFC 6675, RFC 5681), or, with 3 segments out and
 *    nothing new to send, 2 (Early Retransmit, RFC 5827). A resend that is
 *    lost in turn is seen the same way, from what was sent after it.
 *  - Reordering: the cable and the loopback reorder by swapping neighbours,
 *    so a segment is passed by at most one or two others, always fewer than
 *    DupThresh: reordering alone resends nothing (a time-based RACK reorder
 *    window would add a timer per hole for no gain here).
 *  - Timers: the RTO of RFC 6298 from RTT samples of segments sent once
 *    (Karn; one timed segment at a time, sampled when the cumulative ACK or
 *    a SACK block first covers it), backed off per expiry, with a floor for
 *    an in-process link (rtt.c); and a tail loss probe (RFC 8985 section 7)
 *    after 2 SRTT, which resends the last segment when the tail of a flight
 *    (an rr request or response) is lost and no ACK can show it. An RTO
 *    marks everything unSACKed lost; SACK information is kept across it,
 *    since this receiver never drops what it SACKed.
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
	uint16_t port = (uint16_t)(TCPL_CLIENT_PORT + h->base + c->idx);
	uint16_t sport = client ? port : TCPL_SERVER_PORT;
	uint16_t dport = client ? TCPL_SERVER_PORT : port;

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
		put32(l3, 0x60000000u | (((h->base + c->idx) * 0x9e37u + 1) & 0xfffff));
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
	/* The host runs on its queue's cpu; queues elsewhere are not ours to use. */
	if (h->mux || q >= HOST_MAX_QUEUES || vnic_netdev_tx_cpu(h->dev, q) != h->cpu)
		q = h->queue;
	c->txq = (uint16_t)q;
}

void vnic_tcpl_conn_init(struct vnic_tcpl_host *h, struct tcpl_conn *c, uint32_t idx,
			 const uint8_t *smac, const uint8_t *dmac, bool client)
{
	uint32_t n = h->base + idx;	/* the workload's number for it, across queue pairs */

	memset(c, 0, sizeof(*c));
	c->host = h;
	c->idx = idx;
	c->iss = (client ? 0xffff0000u : 0xfff00000u) - n * 0x10000u;
	c->seed = n * 0x85ebca6bu ^ (client ? 0xc1c1c1c1u : 0x5e5e5e5eu);
	c->ip_id = (uint16_t)(n * 251);
	c->rec = &h->rec[idx];
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
	c->snd_una = c->snd_nxt = c->snd_end = c->lost_end = off;
	c->rcv_nxt = c->rcv_high = off;
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

static bool can_send_new(const struct tcpl_conn *c)
{
	return c->snd_nxt < c->snd_end && c->snd_nxt - c->snd_una < c->host->window;
}

static bool probe_pending(const struct tcpl_conn *c)
{
	return c->probe_end > c->probe_start;
}

bool vnic_tcpl_wants_tx(const struct tcpl_conn *c)
{
	return c->ack_pending || c->has_lost || probe_pending(c) || can_send_new(c);
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
	if (c->snd_end > c->snd_nxt)
		c->snd_end = c->snd_nxt;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- timers ------------------------------------------------------------- */

static void host_timer(struct vnic_tcpl_host *h, uint64_t at)
{
	if (!h->next_rto || at < h->next_rto)
		h->next_rto = at;
}

/* (Re)starts the retransmission timer: RFC 6298 (5.1), (5.3). */
static void arm_rto(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;

	c->rto_at = h->now + vnic_tcpl_rtt_rto(&c->rtt, &h->rto);
	host_timer(h, c->rto_at);
}

/*
 * The probe timer runs from the last progress: new data sent, an ACK that
 * moves snd_una (RFC 8985 7.2), one that SACKs something new, the last known
 * loss resent. Only with an RTT known, no probe out since snd_una last
 * moved, the RTO not backed off and nothing known lost and waiting to be
 * resent; never beyond the RTO.
 */
static void arm_pto(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;
	uint64_t pto = vnic_tcpl_rtt_pto(&c->rtt, &h->rto), at = h->now + pto;

	c->pto_at = 0;
	if (!pto || c->tlp_out || c->rtt.backoff || c->has_lost || (c->rto_at && at >= c->rto_at))
		return;
	c->pto_at = at;
	host_timer(h, at);
}

static void timers_off(struct tcpl_conn *c)
{
	c->rto_at = c->pto_at = 0;
	c->probe_start = c->probe_end = 0;
}

static uint64_t next_deadline(const struct tcpl_conn *c)
{
	if (!c->pto_at)
		return c->rto_at;
	if (!c->rto_at)
		return c->pto_at;
	return min64(c->pto_at, c->rto_at);
}

/* ---- transmit ----------------------------------------------------------- */

static uint16_t segs_of(const struct vnic_tcpl_host *h, uint64_t len)
{
	return len ? (uint16_t)((len + h->mss - 1) / h->mss) : 1;
}

/* Headers from the template, options, payload from the pattern, checksums. */
static void build_frame(struct tcpl_conn *c, struct vnic_pkt *pkt, uint64_t off, uint32_t len,
			uint8_t flags, const uint8_t *opt, uint32_t optlen)
{
	struct vnic_tcpl_host *h = c->host;
	uint32_t l3len = l3_hlen(h), l4_off = VNIC_ETH_HLEN + l3len, thlen = TCPL_TCP_HLEN + optlen;
	uint8_t *p = pkt->data, *l3 = p + VNIC_ETH_HLEN, *th = p + l4_off;
	uint16_t segs = segs_of(h, len);
	vnic_wsum_t pseudo;

	memcpy(p, c->hdr, c->hdr_len);
	if (optlen) {
		memcpy(p + c->hdr_len, opt, optlen);
		th[12] = (uint8_t)((thlen / 4) << 4);
	}
	vnic_work_pattern_fill(p + c->hdr_len + optlen, len, c->seed, off);
	pkt->len = c->hdr_len + optlen + len;

	if (h->ipv6) {
		put16(l3 + 4, (uint16_t)(thlen + len));
		pseudo = vnic_csum_pseudo6(l3 + 8, l3 + 24, VNIC_IPPROTO_TCP, thlen + len);
	} else {
		put16(l3 + 2, (uint16_t)(l3len + thlen + len));
		put16(l3 + 4, c->ip_id);
		vnic_csum_ip4_set(l3, l3len);
		pseudo = vnic_csum_pseudo4(l3 + 12, l3 + 16, VNIC_IPPROTO_TCP, thlen + len);
	}
	/* A superpacket's segments take consecutive IDs (the GSO contract). */
	c->ip_id = (uint16_t)(c->ip_id + segs);
	put32(th + 4, c->iss + (uint32_t)off);
	put32(th + 8, h->keys[c->idx].irs + (uint32_t)c->rcv_nxt);
	th[13] = flags;

	pkt->l2_len = VNIC_ETH_HLEN;
	pkt->l3_len = (uint16_t)l3len;
	pkt->l4_len = (uint16_t)thlen;
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
		uint16_t check = vnic_csum_fold(vnic_csum_partial(th, thlen + len, pseudo));

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

/* Bytes known lost and not resent yet, from snd_una up: *r, at most max. */
static bool next_lost(const struct tcpl_conn *c, uint32_t max, struct tcpl_range *r)
{
	return vnic_tcpl_sb_next_hole(&c->rec->sb, c->snd_una, min64(c->lost_end, c->snd_nxt), max,
				      r);
}

static bool any_lost(const struct tcpl_conn *c)
{
	struct tcpl_range r;

	return next_lost(c, 1, &r);
}

/* The pure ACK, with the SACK blocks while there is something to report. */
static uint32_t sack_option(struct tcpl_conn *c, uint8_t *opt)
{
	struct tcpl_range r[TCPL_SACK_BLOCKS];
	uint32_t blocks[TCPL_SACK_BLOCKS][2], irs = c->host->keys[c->idx].irs;
	unsigned int n = vnic_tcpl_reasm_sack(&c->rec->reasm, r, TCPL_SACK_BLOCKS), i;

	for (i = 0; i < n; i++) {
		blocks[i][0] = irs + (uint32_t)r[i].start;
		blocks[i][1] = irs + (uint32_t)r[i].end;
	}
	return vnic_tcpl_sack_put(opt, blocks, n);
}

enum seg_kind { SEG_NEW, SEG_FAST, SEG_TIMER, SEG_PROBE };

/* What to send next: holes known lost, then a probe, then new data. */
static bool pick_segment(struct tcpl_conn *c, struct tcpl_range *r, enum seg_kind *kind)
{
	struct vnic_tcpl_host *h = c->host;

	if (c->has_lost) {
		if (next_lost(c, h->max_seg, r)) {
			*kind = r->start < c->timer_point ? SEG_TIMER : SEG_FAST;
			return true;
		}
		c->has_lost = false;
	}
	if (probe_pending(c)) {
		r->start = max64(c->probe_start, c->snd_una);
		r->end = c->probe_end;
		*kind = SEG_PROBE;
		if (r->end > r->start)
			return true;
		c->probe_start = c->probe_end = 0;
	}
	if (!can_send_new(c))
		return false;
	r->start = c->snd_nxt;
	r->end = min64(min64(c->snd_end, c->snd_una + h->window), c->snd_nxt + h->max_seg);
	*kind = SEG_NEW;
	return true;
}

/* The bookkeeping of a segment just built. */
static void sent(struct tcpl_conn *c, const struct tcpl_range *r, enum seg_kind kind)
{
	struct vnic_tcpl_host *h = c->host;
	uint64_t segs = segs_of(h, r->end - r->start), rec;

	if (kind == SEG_NEW) {
		/* Karn: one segment timed at a time, from its first send. */
		if (!c->rtt_end) {
			c->rtt_end = r->end;
			c->rtt_ts = h->now;
		}
		c->snd_nxt = r->end;
		if (!c->rto_at)
			arm_rto(c);
		arm_pto(c);
		return;
	}
	vnic_tcpl_sb_mark(&c->rec->sb, r->start, r->end, kind == SEG_FAST ? SB_RXT_FAST : SB_RXT,
			  c->snd_nxt, h->mss, &rec);
	vnic_ctr_add(&h->st.retransmits, segs);
	c->rxt_ts = h->now;
	if (kind == SEG_PROBE) {
		vnic_ctr_add(&h->st.probes, 1);
		c->probe_start = c->probe_end = 0;
	} else {
		c->has_lost = any_lost(c);
	}
	if (kind == SEG_FAST)
		vnic_ctr_add(&h->st.fast_retransmits, segs);
	/* Karn: an ACK of the timed segment's last byte is ambiguous now. */
	if (c->rtt_end && r->start < c->rtt_end && r->end >= c->rtt_end)
		c->rtt_end = 0;
	if (!c->rto_at)
		arm_rto(c);
	/* The last known loss is resent: if it is lost too, the probe finds
	 * it (fire_probe). */
	if (!c->has_lost && !c->pto_at)
		arm_pto(c);
}

enum tcpl_tx vnic_tcpl_build(struct tcpl_conn *c, struct vnic_pkt **out)
{
	struct vnic_tcpl_host *h = c->host;
	uint8_t opt[TCPL_SACK_OPT_MAX];
	enum seg_kind kind = SEG_NEW;
	bool tsq_blocked = false;
	struct tcpl_range r;
	struct vnic_pkt *pkt;
	uint32_t len, optlen;
	uint8_t flags = VNIC_TCP_ACK;

	/* SACK rides on pure ACKs: with a hole to report, one goes first. */
	if (c->ack_pending && vnic_tcpl_reasm_sack_pending(&c->rec->reasm))
		goto ack_only;
	if (!pick_segment(c, &r, &kind))
		goto ack_only;
	len = (uint32_t)(r.end - r.start);
	/* TSQ: one packet may always be out, so any budget makes progress. */
	if (c->tsq_bytes && c->tsq_bytes + c->hdr_len + len > h->tsq_budget) {
		tsq_blocked = true;
		goto ack_only;
	}
	pkt = vnic_pkt_alloc(h->pool);
	if (vnic_unlikely(!pkt))
		return TCPL_TX_NOBUF;
	if (r.end == c->snd_end)
		flags |= VNIC_TCP_PSH;	/* the end of what was written */
	build_frame(c, pkt, r.start, len, flags, NULL, 0);
	sent(c, &r, kind);
	*out = pkt;
	return TCPL_TX_SENT;

ack_only:
	if (!c->ack_pending)
		return tsq_blocked ? TCPL_TX_TSQ : TCPL_TX_NONE;
	pkt = vnic_pkt_alloc(h->pool);
	if (vnic_unlikely(!pkt))
		return TCPL_TX_NOBUF;
	optlen = vnic_tcpl_reasm_sack_pending(&c->rec->reasm) ? sack_option(c, opt) : 0;
	build_frame(c, pkt, c->snd_nxt, 0, VNIC_TCP_ACK, opt, optlen);
	*out = pkt;
	return TCPL_TX_SENT;
}

/* ---- receive: acknowledgments ------------------------------------------- */

/* A received 32-bit sequence number as an offset, relative to base. */
static bool seq_off(uint32_t wire, uint32_t base_wire, uint64_t base, uint64_t *off)
{
	int32_t d = (int32_t)(wire - base_wire);

	if (d < 0 && (uint64_t)-(int64_t)d > base)
		return false;
	*off = base + (uint64_t)(int64_t)d;
	return true;
}

static void rtt_sample(struct tcpl_conn *c, uint64_t ts)
{
	vnic_tcpl_rtt_sample(&c->rtt, ts > c->rtt_ts ? ts - c->rtt_ts : 1);
	c->rtt_end = 0;
}

/*
 * The SACK blocks of an ACK whose cumulative part is una. A first block
 * below una, or inside the second, is a D-SACK (RFC 2883 section 4): the
 * receiver got those bytes twice. Returns the bytes newly SACKed.
 */
static uint64_t rx_sack(struct tcpl_conn *c, const struct rx_ev *ev, uint64_t una,
			uint64_t *recovered)
{
	struct vnic_tcpl_host *h = c->host;
	uint32_t base = c->iss + (uint32_t)c->snd_una;
	struct tcpl_range b[TCPL_SACK_BLOCKS];
	uint64_t newly = 0, rec;
	unsigned int i, n = 0;

	for (i = 0; i < ev->nsack && i < TCPL_SACK_BLOCKS; i++) {
		struct tcpl_range *x = &b[n];

		if (!seq_off(ev->sack[i][0], base, c->snd_una, &x->start) ||
		    !seq_off(ev->sack[i][1], base, c->snd_una, &x->end))
			x->start = x->end = 0;
		/* Nothing from the wire is trusted: empty, inverted, or beyond
		 * what was sent, a block is ignored. */
		if (x->end <= x->start || x->end > c->snd_nxt || x->end - x->start > h->window)
			x->start = x->end = 0;
		n++;
	}
	if (n && b[0].end > b[0].start &&
	    (b[0].end <= una ||
	     (n > 1 && b[1].start <= b[0].start && b[0].end <= b[1].end))) {
		vnic_ctr_add(&h->st.spurious, segs_of(h, b[0].end - b[0].start));
		b[0].start = b[0].end = 0;
	}
	for (i = 0; i < n; i++) {
		uint64_t s = max64(b[i].start, una);

		if (b[i].end <= s)
			continue;
		newly += vnic_tcpl_sb_mark(&c->rec->sb, s, b[i].end, SB_SACKED, 0, h->mss, &rec);
		*recovered += rec;
		/* The timed segment's first ACK, SACK or cumulative, samples it. */
		if (c->rtt_end && c->rtt_end > s && c->rtt_end <= b[i].end)
			rtt_sample(c, ev->ts);
	}
	return newly;
}

/*
 * Loss detection after an ACK: RFC 6675 IsLost() with DupThresh segments
 * SACKed above, or the first segment after DupThresh duplicate ACKs (RFC
 * 5681, RFC 6675 (4.1)); with 3 segments out and nothing new to send, 2
 * segments SACKed above are enough (Early Retransmit, RFC 5827, kept at 2 so
 * that a neighbour swap never triggers it: a 2-segment tail is left to the
 * probe). Resends with DupThresh segments SACKed that were sent after them
 * are lost too.
 */
static void detect_loss(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;
	uint64_t out = c->snd_nxt - c->snd_una, point;
	unsigned int thresh = TCPL_DUPTHRESH, osegs;
	struct tcpl_range r;

	if (!out) {
		c->has_lost = false;
		return;
	}
	osegs = (unsigned int)min64((out + h->mss - 1) / h->mss, TCPL_DUPTHRESH + 1);
	if (osegs == TCPL_DUPTHRESH && !can_send_new(c))
		thresh = TCPL_DUPTHRESH - 1;
	point = vnic_tcpl_sb_lost_below(&c->rec->sb, c->snd_una, h->mss, thresh);
	vnic_tcpl_sb_lost_resends(&c->rec->sb, h->mss, thresh);
	/* RFC 6675 (4.1): after DupThresh duplicates, the first segment. */
	if (c->dupacks >= TCPL_DUPTHRESH &&
	    vnic_tcpl_sb_next_hole(&c->rec->sb, c->snd_una, c->snd_nxt, h->mss, &r) &&
	    r.start == c->snd_una)
		point = max64(point, r.end);
	c->lost_end = max64(c->lost_end, point);
	c->has_lost = any_lost(c);
}

static void rx_ack(struct tcpl_conn *c, const struct rx_ev *ev)
{
	struct vnic_tcpl_host *h = c->host;
	uint64_t una, newly, recovered = 0;
	bool sacks = ev->nsack > 0;

	if (!seq_off(ev->ack, c->iss + (uint32_t)c->snd_una, c->snd_una, &una) ||
	    una < c->snd_una || una > c->snd_nxt)
		return;	/* old (its SACK blocks too), or acknowledging what we never sent */
	newly = sacks ? rx_sack(c, ev, una, &recovered) : 0;
	if (una > c->snd_una) {
		recovered += vnic_tcpl_sb_ack(&c->rec->sb, una, h->mss);
		if (c->rtt_end && una >= c->rtt_end)
			rtt_sample(c, ev->ts);
		c->snd_una = una;
		c->lost_end = max64(c->lost_end, una);
		c->dupacks = 0;
		c->tlp_out = false;
		if (c->probe_end <= una)
			c->probe_start = c->probe_end = 0;
		detect_loss(c);
		if (una == c->snd_nxt) {
			timers_off(c);
		} else {
			arm_rto(c);
			arm_pto(c);
		}
	} else {
		/* A duplicate ACK (RFC 6675: one that SACKs something new). */
		if (c->snd_una < c->snd_nxt && !ev->len && (!sacks || newly) &&
		    c->dupacks < UINT8_MAX)
			c->dupacks++;
		if (newly || c->dupacks >= TCPL_DUPTHRESH)
			detect_loss(c);
		/* SACKs still coming in are progress too: the probe waits for
		 * them to stop, then resends the highest hole left, which is
		 * how a lost resend at snd_una is found when the window is
		 * full and nothing new can follow it. */
		if (newly)
			arm_pto(c);
	}
	if (recovered)
		vnic_ctr_add(&h->st.sack_recovered, recovered);
}

/* ---- receive: data ------------------------------------------------------ */

static void deliver(struct tcpl_conn *c, uint64_t bytes, uint64_t ts)
{
	struct vnic_tcpl_host *h = c->host;

	vnic_ctr_set(&c->delivered, c->rcv_nxt - c->origin);
	vnic_ctr_add(&h->st.delivered, bytes);
	h->app->deliver(h, c, bytes, ts);
}

static void rx_data(struct tcpl_conn *c, const struct rx_ev *ev)
{
	struct vnic_tcpl_host *h = c->host;
	uint32_t irs = h->keys[c->idx].irs;
	uint64_t start, end, fresh;
	enum reasm_res res;
	bool dup;

	c->ack_pending = true;	/* every data segment is answered, dups too */
	if (!seq_off(ev->seq, irs + (uint32_t)c->rcv_nxt, c->rcv_nxt, &start)) {
		/* From before the stream began: old, whatever it says. */
		vnic_ctr_add(&h->st.dup, ev->segs);
		return;
	}
	end = start + ev->len;
	if (start > c->rcv_nxt && end - c->rcv_nxt > h->window) {
		/* Beyond the window: the sender never does that. */
		vnic_ctr_add(&h->st.ooo, ev->segs);
		vnic_ctr_add(&h->st.ooo_dropped, ev->segs);
		return;
	}
	res = vnic_tcpl_reasm_add(&c->rec->reasm, &c->rcv_nxt, start, end, &fresh, &dup);
	if (res != REASM_DUP) {
		if (start > c->rcv_high)
			vnic_ctr_add(&h->st.lost, 1);	/* a new gap below it */
		c->rcv_high = max64(c->rcv_high, end);
	}
	switch (res) {
	case REASM_IN_ORDER:
		if (dup)
			vnic_ctr_add(&h->st.dup, 1);	/* starts with bytes we have */
		deliver(c, fresh, ev->ts);
		break;
	case REASM_OOO:
		vnic_ctr_add(&h->st.ooo, ev->segs);
		if (dup)
			vnic_ctr_add(&h->st.dup, 1);
		break;
	case REASM_FULL:
		vnic_ctr_add(&h->st.ooo, ev->segs);
		vnic_ctr_add(&h->st.ooo_dropped, ev->segs);
		break;
	case REASM_DUP:
		vnic_ctr_add(&h->st.dup, ev->segs);
		break;
	}
}

void vnic_tcpl_rx(struct tcpl_conn *c, const struct rx_ev *ev)
{
	if (ev->flags & VNIC_TCP_ACK)
		rx_ack(c, ev);
	if (ev->len)
		rx_data(c, ev);
	vnic_tcpl_kick(c);
}

/* ---- timer expiries ----------------------------------------------------- */

/*
 * The probe timer fired: a probe timeout without progress (no ACK moved
 * snd_una, no SACK told anything new). Resends still unacknowledged are
 * lost then, if all are at least that old: this is how a lost resend of the
 * segment at snd_una is found when the window is full, so that no new data
 * can follow it and be SACKed (sack.c). Otherwise, RFC 8985 7.3: send new
 * data if there is any, else resend the last segment, so that its ACK shows
 * what the tail lost.
 */
static void fire_probe(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;
	uint64_t pto = vnic_tcpl_rtt_pto(&c->rtt, &h->rto);
	struct tcpl_range r;

	c->pto_at = 0;
	if (c->snd_una >= c->snd_nxt)
		return;
	if (vnic_tcpl_sb_resent(&c->rec->sb)) {
		if (h->now < c->rxt_ts + pto) {
			/* The last resend is younger than a probe timeout. */
			c->pto_at = c->rxt_ts + pto;
			host_timer(h, c->pto_at);
			return;
		}
		vnic_tcpl_sb_forget_resends(&c->rec->sb);
		c->timer_point = c->snd_nxt;
		c->has_lost = any_lost(c);
		vnic_ctr_add(&h->st.probes, 1);
	} else if (!can_send_new(c) &&
		   vnic_tcpl_sb_last_unsacked(&c->rec->sb, c->snd_una, c->snd_nxt, h->mss, &r)) {
		c->probe_start = r.start;
		c->probe_end = r.end;
	}
	c->tlp_out = true;
	arm_rto(c);
	vnic_tcpl_kick(c);
}

/* RFC 6298 (5.4)-(5.6), RFC 6675 section 5.1: everything unSACKed is lost. */
static void fire_rto(struct tcpl_conn *c)
{
	struct vnic_tcpl_host *h = c->host;

	if (c->snd_una >= c->snd_nxt) {
		timers_off(c);
		return;
	}
	vnic_ctr_add(&h->st.timeouts, 1);
	vnic_tcpl_rtt_backoff(&c->rtt);
	vnic_tcpl_sb_forget_resends(&c->rec->sb);
	c->lost_end = c->timer_point = c->snd_nxt;
	c->has_lost = any_lost(c);
	c->dupacks = 0;
	c->rtt_end = 0;
	c->tlp_out = false;
	c->pto_at = 0;
	c->probe_start = c->probe_end = 0;
	arm_rto(c);
	vnic_tcpl_kick(c);
}

uint64_t vnic_tcpl_timer(struct tcpl_conn *c)
{
	uint64_t now = c->host->now;

	if (c->pto_at && now >= c->pto_at)
		fire_probe(c);
	if (c->rto_at && now >= c->rto_at)
		fire_rto(c);
	return next_deadline(c);
}
