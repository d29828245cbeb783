// SPDX-License-Identifier: MIT
/*
 * RSS: the Toeplitz hash as specified by Microsoft's "RSS hashing functions"
 * page, with the input laid out as there: source address, destination
 * address, then source port and destination port, all in network order.
 */
#include <string.h>

#include "net.h"

/* The key the Microsoft verification suite uses; NICs commonly default to it. */
const uint8_t vnic_rss_default_key[VNIC_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

enum {
	RSS_IP4_ADDR_OFF = 12,	/* saddr, then daddr */
	RSS_IP4_ADDR_LEN = 8,
	RSS_IP6_ADDR_OFF = 8,
	RSS_IP6_ADDR_LEN = 32,
	RSS_PORTS_LEN = 4,	/* sport, dport: the first 4 bytes of TCP and UDP */
	RSS_MAX_INPUT = RSS_IP6_ADDR_LEN + RSS_PORTS_LEN,
};

/*
 * For input bit i (MSB first) the spec XORs in the 32 key bits starting at
 * key bit i. Bits i..i+7 of byte k all fall inside key bytes k..k+4, so one
 * 40-bit window per input byte yields all eight of them by shifting.
 */
uint32_t vnic_rss_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *input, size_t n)
{
	uint32_t hash = 0;

	if (key_len < 4 || n > key_len - 4)
		return 0;
	for (size_t k = 0; k < n; k++) {
		uint64_t win = (uint64_t)key[k] << 32 | (uint64_t)key[k + 1] << 24 |
			       (uint64_t)key[k + 2] << 16 | (uint64_t)key[k + 3] << 8 | key[k + 4];
		uint8_t b = input[k];

		for (int j = 0; b; j++, b <<= 1) {
			if (b & 0x80)
				hash ^= (uint32_t)(win >> (8 - j));
		}
	}
	return hash;
}

/*
 * key is VNIC_RSS_KEY_LEN bytes; NULL means vnic_rss_default_key. h must come
 * from vnic_parse_frame() over frame, which bounds the offsets read here.
 */
uint32_t vnic_rss_hash_frame(const uint8_t *key, const uint8_t *frame, const struct vnic_hdrs *h)
{
	uint8_t in[RSS_MAX_INPUT];
	size_t n;

	if (!key)
		key = vnic_rss_default_key;
	if (h->l3_proto == VNIC_ETH_P_IP && h->l3_len >= 20) {
		n = RSS_IP4_ADDR_LEN;
		memcpy(in, frame + h->l3_off + RSS_IP4_ADDR_OFF, n);
	} else if (h->l3_proto == VNIC_ETH_P_IPV6 && h->l3_len >= 40) {
		n = RSS_IP6_ADDR_LEN;
		memcpy(in, frame + h->l3_off + RSS_IP6_ADDR_OFF, n);
	} else {
		return 0;
	}
	/* Ports only where every packet of the flow has them: not on fragments. */
	if ((h->l4_proto == VNIC_IPPROTO_TCP || h->l4_proto == VNIC_IPPROTO_UDP) &&
	    (h->flags & VNIC_HDRS_F_L4) && !(h->flags & VNIC_HDRS_F_FRAG) &&
	    h->l4_len >= RSS_PORTS_LEN) {
		memcpy(in + n, frame + h->l4_off, RSS_PORTS_LEN);
		n += RSS_PORTS_LEN;
	}
	return vnic_rss_toeplitz(key, VNIC_RSS_KEY_LEN, in, n);
}
