// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the parser: any byte string is a frame. Reading out of
 * bounds is ASan's to catch (libFuzzer hands us an exactly sized copy); what
 * is checked here is that an accepted frame is described consistently, and
 * that vnic_parse_pkt agrees with vnic_parse_frame.
 *
 * Corpus: fuzz/corpus/parse/, the golden frames of tests/test_parse.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net/net.h"

#include "check.h"

/* A packet of the largest size the library handles, with odd headroom. */
enum { POOL_HEADROOM = 67, POOL_COUNT = 8 };

static void check_hdrs(const struct vnic_hdrs *h, uint64_t len)
{
	FZ_CHECK(h->nvlan <= VNIC_MAX_VLANS);
	FZ_CHECK(h->l2_len == VNIC_ETH_HLEN + VNIC_VLAN_HLEN * h->nvlan);
	FZ_CHECK(h->l3_off == h->l2_len);
	FZ_CHECK((uint64_t)h->l3_off + h->l3_len <= len);
	/* L4 (parsed or not) starts right after the L3 header. */
	FZ_CHECK(h->l4_off == h->l3_off + h->l3_len);
	FZ_CHECK((uint64_t)h->l4_off + h->l3_payload_len <= len);
	FZ_CHECK((uint64_t)h->l4_off + h->l4_len <= len);
	FZ_CHECK(h->payload_off == (uint32_t)h->l4_off + h->l4_len);
	/* Every byte is header, payload or trailer, for any accepted frame. */
	FZ_CHECK((uint64_t)h->payload_off + h->payload_len + h->trailer_len == len);
	if (h->flags & VNIC_HDRS_F_L4) {
		FZ_CHECK(h->l4_len >= 8);
		FZ_CHECK((uint64_t)h->l4_len + h->payload_len <= h->l3_payload_len);
	} else {
		FZ_CHECK(h->l4_len == 0);
	}
	if (h->flags & VNIC_HDRS_F_FRAG_FIRST)
		FZ_CHECK(h->flags & VNIC_HDRS_F_FRAG);
	if ((h->flags & VNIC_HDRS_F_FRAG) && !(h->flags & VNIC_HDRS_F_FRAG_FIRST))
		FZ_CHECK(!(h->flags & VNIC_HDRS_F_L4));
	/* The payload never reaches past the IP packet into the trailer. */
	if (h->l3_proto == VNIC_ETH_P_IP || h->l3_proto == VNIC_ETH_P_IPV6)
		FZ_CHECK((uint64_t)h->payload_off + h->payload_len <=
			 (uint64_t)h->l4_off + h->l3_payload_len);
}

static void check_pkt(const uint8_t *data, uint32_t len, enum vnic_parse_err want,
		      const struct vnic_hdrs *h)
{
	static struct vnic_pkt_pool pool;
	static int ready;
	struct vnic_pkt *pkt;
	enum vnic_parse_err err;

	if (!ready) {
		/* Kept for the whole run: never freed, so never reported as a leak. */
		FZ_CHECK(vnic_pkt_pool_init(&pool, POOL_COUNT, VNIC_PKT_MAX_LEN + POOL_HEADROOM,
					    POOL_HEADROOM) == 0);
		ready = 1;
	}
	pkt = vnic_pkt_alloc(&pool);
	FZ_CHECK(pkt);
	FZ_CHECK(vnic_pkt_copy_in(pkt, data, len) == 0);
	err = vnic_parse_pkt(pkt);
	FZ_CHECK(err == want);
	if (err == VNIC_PARSE_OK) {
		FZ_CHECK(pkt->flags & VNIC_PKT_F_PARSED);
		FZ_CHECK(pkt->l2_len == h->l2_len && pkt->l3_len == h->l3_len);
		FZ_CHECK(pkt->l4_len == h->l4_len && pkt->l3_proto == h->l3_proto);
		FZ_CHECK(pkt->l4_proto == ((h->flags & VNIC_HDRS_F_L4) ? h->l4_proto : 0));
	} else {
		FZ_CHECK(!(pkt->flags & VNIC_PKT_F_PARSED));
	}
	FZ_CHECK(memcmp(pkt->data, data, len) == 0);
	vnic_pkt_free(pkt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnic_hdrs h;
	enum vnic_parse_err err;
	const char *name;

	if (size > VNIC_PKT_MAX_LEN)
		return -1; /* not a frame the library can hold: keep it out of the corpus */
	err = vnic_parse_frame(data, (uint32_t)size, &h);
	FZ_CHECK(err >= VNIC_PARSE_OK && err < VNIC_PARSE_ERR_MAX);
	FZ_CHECK(err != VNIC_PARSE_L3_UNKNOWN);
	name = vnic_parse_strerror(err);
	FZ_CHECK(name && strcmp(name, "unknown") != 0);
	if (err == VNIC_PARSE_OK)
		check_hdrs(&h, size);
	check_pkt(data, (uint32_t)size, err, &h);
	return 0;
}
