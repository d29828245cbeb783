// SPDX-License-Identifier: MIT
/*
 * A host's rx callback, on the rx queue's cpu: what a socket layer's receive
 * path would check before data reaches the application. Each packet (a
 * single segment or a GRO aggregate) is parsed, its checksums verified unless
 * the NIC vouched for them, matched to a connection, and every payload byte
 * compared with the sender's pattern at its stream offset. What passes
 * becomes one event for the host's poller; the buffer is freed here, on the
 * cpu that received it. Nothing in a received frame is trusted.
 */
#include <string.h>

#include "work_int.h"

/* Event queue indices, producer side: events below head are written. */
static uint32_t evq_load_tail(struct evq *q)
{
	return atomic_load_explicit(&q->tail, memory_order_acquire);
}

static void evq_publish_head(struct evq *q, uint32_t head)
{
	atomic_store_explicit(&q->head, head, memory_order_release);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool csum_ok(const struct vnic_pkt *pkt, const struct vnic_hdrs *hd)
{
	const uint8_t *l3 = pkt->data + hd->l3_off;

	/* The IPv4 header checksum is the host's job on every path. */
	if (hd->l3_proto == VNIC_ETH_P_IP && !vnic_csum_ip4_ok(l3, hd->l3_len))
		return false;
	/* UNNECESSARY: the device verified it; PARTIAL: a GRO aggregate of
	 * verified segments (or a local sender's), as Linux treats it. */
	if (pkt->ip_summed == VNIC_CSUM_UNNECESSARY || pkt->ip_summed == VNIC_CSUM_PARTIAL)
		return true;
	return vnic_csum_l4_ok(pkt->data, hd);
}

/* The connection this frame belongs to, or NULL. */
static const struct conn_key *demux(struct vnic_tcpl_host *h, const struct vnic_pkt *pkt,
				    const struct vnic_hdrs *hd, uint32_t *idx)
{
	const uint8_t *l3 = pkt->data + hd->l3_off, *th = pkt->data + hd->l4_off;
	uint16_t sport = get16(th), dport = get16(th + 2);
	bool v6 = hd->l3_proto == VNIC_ETH_P_IPV6;
	const struct conn_key *k;
	uint32_t i;

	if (v6 != h->ipv6)
		return NULL;
	/* Clients own one port each; the server's connections differ by the
	 * client's port. */
	i = (uint32_t)(h->client ? dport : sport) - TCPL_CLIENT_PORT - h->base;
	if (i >= h->nconns)
		return NULL;
	k = &h->keys[i];
	if (k->sport != sport || k->dport != dport)
		return NULL;
	if (memcmp(k->saddr, l3 + (v6 ? 8 : 12), v6 ? 16 : 4) ||
	    memcmp(k->daddr, l3 + (v6 ? 24 : 16), v6 ? 16 : 4))
		return NULL;
	*idx = i;
	return k;
}

/* True if an event was written at slot head. */
static bool rx_one(struct vnic_tcpl_host *h, struct rx_ev *ev, struct vnic_pkt *pkt, uint64_t ts)
{
	struct host_rx_stats *st = &h->rx;
	const struct conn_key *k;
	const uint8_t *th;
	struct vnic_hdrs hd;
	uint32_t idx;

	vnic_ctr_add(&st->pkts, 1);
	if (vnic_parse_frame(pkt->data, pkt->len, &hd) != VNIC_PARSE_OK)
		goto drop_hdr;
	if (hd.l4_proto != VNIC_IPPROTO_TCP || !(hd.flags & VNIC_HDRS_F_L4) ||
	    (hd.flags & VNIC_HDRS_F_FRAG) ||
	    (hd.l3_proto != VNIC_ETH_P_IP && hd.l3_proto != VNIC_ETH_P_IPV6))
		goto drop_hdr;
	if (!csum_ok(pkt, &hd))
		goto drop_csum;
	k = demux(h, pkt, &hd, &idx);
	if (!k)
		goto drop_conn;
	th = pkt->data + hd.l4_off;
	ev->seq = get32(th + 4);
	if (hd.payload_len &&
	    vnic_work_pattern_check(pkt->data + hd.payload_off, hd.payload_len, k->seed,
				    ev->seq - k->irs) >= 0)
		goto drop_payload;
	ev->conn = idx;
	ev->ack = get32(th + 8);
	ev->flags = th[13];
	ev->nsack = 0;
	if (hd.l4_len > TCPL_TCP_HLEN)
		ev->nsack = (uint8_t)vnic_tcpl_sack_get(th + TCPL_TCP_HLEN,
							hd.l4_len - TCPL_TCP_HLEN, ev->sack);
	ev->len = hd.payload_len;
	ev->ts = ts;
	ev->segs = pkt->gso_size && pkt->gso_segs ? pkt->gso_segs : 1;
	vnic_ctr_add(&st->segs, ev->segs);
	return true;

drop_hdr:
	vnic_ctr_add(&st->bad_hdr, 1);
	return false;
drop_csum:
	vnic_ctr_add(&st->bad_csum, 1);
	return false;
drop_conn:
	vnic_ctr_add(&st->no_conn, 1);
	return false;
drop_payload:
	vnic_ctr_add(&st->payload, 1);
	return false;
}

void vnic_tcpl_host_rx(void *ctx, unsigned int queue, struct vnic_pkt **pkts, unsigned int n)
{
	struct vnic_tcpl_host *h = ctx;
	uint32_t head, tail;
	struct evq *q;
	uint64_t ts;
	unsigned int i;

	/* A queue index we were not told about would make a second producer
	 * on queue 0's ring: refuse it. */
	if (vnic_unlikely(queue >= vnic_tcpl_host_nevq(h))) {
		vnic_ctr_add(&h->rx.overflow, n);
		for (i = 0; i < n; i++)
			vnic_pkt_free(pkts[i]);
		return;
	}
	q = h->evq[queue];
	head = q->head_priv;
	tail = evq_load_tail(q);
	ts = vnic_now_ns();
	for (i = 0; i < n; i++) {
		if (head - tail >= HOST_EVQ) {
			tail = evq_load_tail(q);
			if (head - tail >= HOST_EVQ) {
				vnic_ctr_add(&h->rx.overflow, 1);
				vnic_pkt_free(pkts[i]);
				continue;
			}
		}
		if (rx_one(h, &q->ev[head & (HOST_EVQ - 1)], pkts[i], ts))
			head++;
		vnic_pkt_free(pkts[i]);
	}
	if (head == q->head_priv)
		return;
	q->head_priv = head;
	evq_publish_head(q, head);
	vnic_poller_schedule(&h->poller);
}
