/* SPDX-License-Identifier: MIT */
/*
 * src/net: the packet library. Public header of the layer.
 *
 * Pure functions over packet buffers: parsing, internet checksum, software
 * segmentation (TSO/USO), GRO with list-batched delivery, RSS hash. No threads,
 * no I/O, no allocation after a pool is set up. Nothing here is thread-safe:
 * a pool, a GRO table and a delivery batch each belong to one thread.
 *
 * Byte order: header fields inside frames are network order. Checksum
 * accumulators (vnic_wsum_t) are in the host's native order, like Linux's
 * __wsum: a folded 16-bit result is stored into a frame as raw memory, without
 * htons (RFC 1071 section 2(B)).
 */
#ifndef VNIC_NET_H
#define VNIC_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------
 * Limits
 * ------------------------------------------------------------------------- */
enum vnic_net_limits {
	VNIC_ETH_HLEN = 14,
	VNIC_VLAN_HLEN = 4,
	VNIC_MAX_VLANS = 2,		/* 802.1ad outer + 802.1Q inner */
	VNIC_IP6_MAX_EXT = 8,		/* extension headers walked before giving up */
	VNIC_GSO_MAX_PAYLOAD = 65536,	/* L4 payload of a superpacket */
	VNIC_MAX_HDRS = 256,		/* L2+L3+L4 headers of one packet, at most */
	VNIC_PKT_MAX_LEN = VNIC_GSO_MAX_PAYLOAD + VNIC_MAX_HDRS,
	VNIC_GSO_MAX_SEGS = 1024,
	/* fragments of a fraglist GRO aggregate: one writev takes them all */
	VNIC_GRO_MAX_FRAGS = 64,
	VNIC_GRO_BUCKETS = 8,		/* as Linux GRO_HASH_BUCKETS */
	VNIC_GRO_MAX_HELD = 8,		/* per bucket, as Linux MAX_GRO_SKBS */
	VNIC_GRO_MAX_SIZE = 65536,	/* aggregate length cap, as GRO_LEGACY_MAX_SIZE */
	VNIC_DELIVER_MAX_BATCH = 64,
	VNIC_DELIVER_DEFAULT_BATCH = 8,	/* as net.core.gro_normal_batch */
};

enum {
	VNIC_ETH_P_IP = 0x0800,
	VNIC_ETH_P_ARP = 0x0806,
	VNIC_ETH_P_8021Q = 0x8100,
	VNIC_ETH_P_8021AD = 0x88a8,
	VNIC_ETH_P_IPV6 = 0x86dd,
};

enum {
	VNIC_IPPROTO_HOPOPTS = 0,
	VNIC_IPPROTO_ICMP = 1,
	VNIC_IPPROTO_TCP = 6,
	VNIC_IPPROTO_UDP = 17,
	VNIC_IPPROTO_ROUTING = 43,
	VNIC_IPPROTO_FRAGMENT = 44,
	VNIC_IPPROTO_ICMPV6 = 58,
	VNIC_IPPROTO_NONE = 59,
	VNIC_IPPROTO_DSTOPTS = 60,
};

/* TCP flag bits as in byte 13 of the TCP header. */
enum {
	VNIC_TCP_FIN = 0x01,
	VNIC_TCP_SYN = 0x02,
	VNIC_TCP_RST = 0x04,
	VNIC_TCP_PSH = 0x08,
	VNIC_TCP_ACK = 0x10,
	VNIC_TCP_URG = 0x20,
	VNIC_TCP_ECE = 0x40,
	VNIC_TCP_CWR = 0x80,
};

/* ---------------------------------------------------------------------------
 * Packet buffer and pool (pkt.c)
 * ------------------------------------------------------------------------- */

/* Checksum state, with the meanings of Linux's ip_summed. */
enum vnic_csum_state {
	VNIC_CSUM_NONE = 0,	   /* rx: not verified; tx: nothing to do */
	VNIC_CSUM_UNNECESSARY = 1, /* rx: L4 checksum verified by the device */
	VNIC_CSUM_COMPLETE = 2,	   /* rx: pkt->csum is the sum of data from l3_off */
	VNIC_CSUM_PARTIAL = 3,	   /* tx: sum from csum_start to the end, store at
				    * csum_start + csum_offset; the field holds the
				    * pseudo-header sum already */
};

/* GSO type: the segmentation a superpacket needs (flags, as SKB_GSO_*). */
enum vnic_gso_type {
	VNIC_GSO_NONE = 0,
	VNIC_GSO_TCPV4 = 1 << 0,
	VNIC_GSO_TCPV6 = 1 << 1,
	VNIC_GSO_UDP_L4 = 1 << 2,
	VNIC_GSO_TCP_ECN = 1 << 3, /* CWR set on the superpacket */
};

struct vnic_pkt_pool;

/*
 * One packet. The data lives in a separate buffer of pool->buf_size bytes;
 * data points into it after some headroom. Offsets (csum_start, l2/l3/l4) are
 * relative to data. Fields used per packet on every path sit in the first
 * cache line; the rest after the marked boundary.
 */
struct vnic_pkt {
	/* cache line 0: hot */
	uint8_t *data;
	uint32_t len;
	uint32_t hash;		/* flow hash (RSS), 0 if none */
	struct vnic_pkt *next;	/* list linkage: delivery batches, GRO buckets */
	uint16_t csum_start;
	uint16_t csum_offset;
	uint8_t ip_summed;	/* enum vnic_csum_state */
	uint8_t csum_level;
	uint8_t l4_proto;	/* VNIC_IPPROTO_*, 0 if not parsed */
	uint8_t flags;		/* VNIC_PKT_F_* */
	uint16_t gso_type;	/* enum vnic_gso_type */
	uint16_t gso_size;	/* L4 payload per segment (MSS), 0 if not GSO */
	uint16_t gso_segs;	/* segments in this superpacket or aggregate */
	uint16_t l3_proto;	/* ethertype of the L3 header, host order */
	uint16_t l2_len;	/* Ethernet + VLAN tags */
	uint16_t l3_len;	/* IPv4 with options, IPv6 with extension headers */
	uint16_t l4_len;	/* TCP with options, UDP 8 */
	uint16_t vlan_tci;	/* stripped tag, valid if VNIC_PKT_F_VLAN */
	uint32_t csum;		/* VNIC_CSUM_COMPLETE: native-order sum */
	uint32_t priv;		/* owner's cookie (correlator, flow id) */
	uint8_t *head;		/* start of the buffer */
	/* cache line 1: cold */
	struct vnic_pkt_pool *pool;
	uint32_t buf_size;
	uint32_t index;		/* position in the pool */
	uint64_t tstamp_ns;	/* owner's timestamp */
	/*
	 * A fraglist GRO aggregate (vnic_gro_init's fraglist): len counts
	 * frag_len bytes that are not at data but in the payloads of the
	 * merged segments, each a packet of its own chained from frags
	 * through ->next (data at its payload, len its payload's length).
	 * Only a host that asked for them (VNIC_HOST_F_FRAGLIST) sees one.
	 */
	struct vnic_pkt *frags;
	struct vnic_pkt *frags_tail;
	uint32_t frag_len;
} __attribute__((aligned(64))); /* each packet starts its own cache line */

enum {
	VNIC_PKT_F_VLAN = 1 << 0,	/* vlan_tci holds a stripped tag */
	VNIC_PKT_F_PARSED = 1 << 1,	/* l2/l3/l4 fields are valid */
};

/*
 * A pool of packets with preallocated buffers: one allocation at init, then
 * a free stack of indices. Single-threaded.
 */
struct vnic_pkt_pool {
	struct vnic_pkt *pkts;
	uint8_t *mem;
	uint32_t *free_stack;
	uint32_t count;
	uint32_t nfree;
	uint32_t buf_size;
	uint32_t headroom;
	uint64_t alloc_fail;	/* allocations refused: pool empty */
};

/* 0 or -errno (-EINVAL for a bad size, -ENOMEM). buf_size includes headroom. */
int vnic_pkt_pool_init(struct vnic_pkt_pool *pool, uint32_t count, uint32_t buf_size,
		       uint32_t headroom);
void vnic_pkt_pool_fini(struct vnic_pkt_pool *pool);
/* A reset packet (len 0, no metadata, data at headroom), or NULL when empty. */
struct vnic_pkt *vnic_pkt_alloc(struct vnic_pkt_pool *pool);
/* Allocates up to n; returns how many were put in pkts[]. */
unsigned int vnic_pkt_alloc_bulk(struct vnic_pkt_pool *pool, struct vnic_pkt **pkts, unsigned int n);
/* Returns a packet, and the fragments it holds, to their own pools. NULL is ignored. */
void vnic_pkt_free(struct vnic_pkt *pkt);
/* Frees a whole list linked through ->next. */
void vnic_pkt_free_list(struct vnic_pkt *head);
/* Clears metadata and puts data back at the pool's headroom. */
void vnic_pkt_reset(struct vnic_pkt *pkt);
/*
 * Bytes from one packet's buffer to the next in pool->mem (buf_size rounded
 * up to the buffers' alignment): packet i's buffer is mem + i * stride.
 */
size_t vnic_pkt_pool_stride(const struct vnic_pkt_pool *pool);

static inline uint32_t vnic_pkt_headroom(const struct vnic_pkt *pkt)
{
	return (uint32_t)(pkt->data - pkt->head);
}

/* Bytes at data: len less what is in fragments. */
static inline uint32_t vnic_pkt_linear_len(const struct vnic_pkt *pkt)
{
	return pkt->len - pkt->frag_len;
}

static inline uint32_t vnic_pkt_tailroom(const struct vnic_pkt *pkt)
{
	return pkt->buf_size - vnic_pkt_headroom(pkt) - pkt->len;
}

/* Extends the tail by n; returns the old tail or NULL if there is no room. */
static inline uint8_t *vnic_pkt_put(struct vnic_pkt *pkt, uint32_t n)
{
	uint8_t *tail = pkt->data + pkt->len;

	if (n > vnic_pkt_tailroom(pkt))
		return NULL;
	pkt->len += n;
	return tail;
}

/* Prepends n bytes into the headroom; returns the new data or NULL. */
static inline uint8_t *vnic_pkt_push(struct vnic_pkt *pkt, uint32_t n)
{
	if (n > vnic_pkt_headroom(pkt))
		return NULL;
	pkt->data -= n;
	pkt->len += n;
	return pkt->data;
}

/* Removes n bytes from the front; returns the new data or NULL. */
static inline uint8_t *vnic_pkt_pull(struct vnic_pkt *pkt, uint32_t n)
{
	if (n > pkt->len)
		return NULL;
	pkt->data += n;
	pkt->len -= n;
	return pkt->data;
}

/* Copies len bytes into an empty packet; 0 or -EMSGSIZE. */
int vnic_pkt_copy_in(struct vnic_pkt *pkt, const void *src, uint32_t len);

/* ---------------------------------------------------------------------------
 * Parsing (parse.c)
 * ------------------------------------------------------------------------- */

/* Why a frame was rejected. 0 is success; every other value has a name. */
enum vnic_parse_err {
	VNIC_PARSE_OK = 0,
	VNIC_PARSE_ETH_TRUNC,		/* shorter than an Ethernet header */
	VNIC_PARSE_VLAN_TRUNC,		/* tag cut short */
	VNIC_PARSE_VLAN_TOO_MANY,	/* more than two stacked tags */
	VNIC_PARSE_ARP_TRUNC,
	VNIC_PARSE_ARP_BAD,		/* unknown hardware/protocol type or sizes */
	VNIC_PARSE_IP4_TRUNC,		/* fewer than 20 bytes */
	VNIC_PARSE_IP4_BAD_VERSION,
	VNIC_PARSE_IP4_BAD_IHL,		/* IHL < 5 or past the frame */
	VNIC_PARSE_IP4_BAD_TOTLEN,	/* total length < IHL*4 or past the frame */
	VNIC_PARSE_IP4_BAD_OPTION,	/* option list malformed */
	VNIC_PARSE_IP6_TRUNC,		/* fewer than 40 bytes */
	VNIC_PARSE_IP6_BAD_VERSION,
	VNIC_PARSE_IP6_BAD_PAYLEN,	/* payload length past the frame */
	VNIC_PARSE_IP6_EXT_TRUNC,	/* extension header cut short */
	VNIC_PARSE_IP6_EXT_CHAIN,	/* chain too long or misplaced hop-by-hop */
	VNIC_PARSE_IP6_BAD_FRAG,	/* fragment header malformed */
	VNIC_PARSE_TCP_TRUNC,		/* fewer than 20 bytes */
	VNIC_PARSE_TCP_BAD_DOFF,	/* data offset < 5 or past the L3 payload */
	VNIC_PARSE_TCP_BAD_OPTION,	/* option length 0/1 or past the header */
	VNIC_PARSE_UDP_TRUNC,
	VNIC_PARSE_UDP_BAD_LEN,		/* length < 8 or past the L3 payload */
	VNIC_PARSE_ICMP_TRUNC,
	VNIC_PARSE_ICMP6_TRUNC,
	VNIC_PARSE_L3_UNKNOWN,		/* not an error for a NIC: flags only */
	VNIC_PARSE_ERR_MAX,
};

/* What was found. Offsets are from the start of the frame. */
struct vnic_hdrs {
	uint16_t l2_len;	/* Ethernet + tags */
	uint16_t l3_proto;	/* innermost ethertype, host order */
	uint8_t nvlan;
	uint16_t vlan_proto[VNIC_MAX_VLANS];
	uint16_t vlan_tci[VNIC_MAX_VLANS];
	uint16_t l3_off;
	uint16_t l3_len;	/* header + options / extension headers */
	uint32_t l3_payload_len;/* bytes after l3_len, per the IP length field */
	uint8_t l4_proto;	/* final next-header / protocol; 0 if none */
	uint16_t l4_off;
	uint16_t l4_len;	/* TCP header with options, UDP 8, ICMP 8, 0 if none */
	uint32_t payload_off;
	uint32_t payload_len;	/* L4 payload, per the IP length field */
	uint32_t trailer_len;	/* bytes after the IP packet (Ethernet padding) */
	uint32_t flags;		/* VNIC_HDRS_F_* */
	uint16_t frag_off;	/* IPv4/IPv6 fragment offset in 8-byte units */
};

enum {
	VNIC_HDRS_F_IP4_OPTS = 1 << 0,
	VNIC_HDRS_F_FRAG = 1 << 1,	/* a fragment (v4 MF/offset, v6 frag header) */
	VNIC_HDRS_F_FRAG_FIRST = 1 << 2,/* the first fragment: L4 header present */
	VNIC_HDRS_F_IP4_DF = 1 << 3,
	VNIC_HDRS_F_IP6_EXT = 1 << 4,
	VNIC_HDRS_F_TCP_OPTS = 1 << 5,
	VNIC_HDRS_F_L4 = 1 << 6,	/* an L4 header was parsed */
};

/*
 * Parses an Ethernet frame. Returns VNIC_PARSE_OK or the reason it was
 * rejected; never reads outside frame[0..len). An unknown ethertype or L4
 * protocol is not an error: h describes as much as was understood
 * (VNIC_PARSE_L3_UNKNOWN is reserved for callers that require IP).
 */
enum vnic_parse_err vnic_parse_frame(const uint8_t *frame, uint32_t len, struct vnic_hdrs *h);
/* Parses pkt->data and fills the packet's l2/l3/l4 fields. */
enum vnic_parse_err vnic_parse_pkt(struct vnic_pkt *pkt);
/* A short, stable name for a reason ("ip4_bad_ihl"); "unknown" if out of range. */
const char *vnic_parse_strerror(int err);

/* ---------------------------------------------------------------------------
 * Internet checksum (csum.c, csum_avx2.c)
 * ------------------------------------------------------------------------- */

typedef uint32_t vnic_wsum_t; /* unfolded ones'-complement sum, native order */

/*
 * Adds buf[0..len) to sum. Any alignment and length. The fastest variant
 * measured on this CPU is chosen at first use (see vnic_csum_impl_name()).
 */
vnic_wsum_t vnic_csum_partial(const void *buf, size_t len, vnic_wsum_t sum);
/*
 * Copies src[0..len) to dst (no overlap) and adds those bytes to sum, in one
 * pass: the same value as memcpy then vnic_csum_partial(dst, len, sum), with
 * each byte read once. Any alignment and length; same variant as partial.
 */
vnic_wsum_t vnic_csum_copy(void *dst, const void *src, size_t len, vnic_wsum_t sum);
/* Folds to 16 bits and complements: the value to store in a header. */
uint16_t vnic_csum_fold(vnic_wsum_t sum);
/* ~fold(partial(buf, len, 0)): the checksum of a buffer, ready to store. */
uint16_t vnic_csum(const void *buf, size_t len);
/* Adds two unfolded sums (ones'-complement). */
vnic_wsum_t vnic_csum_add(vnic_wsum_t a, vnic_wsum_t b);
/* Pseudo-header sums; addresses in network order as they sit in the header. */
vnic_wsum_t vnic_csum_pseudo4(const void *saddr4, const void *daddr4, uint8_t proto, uint32_t l4_len);
vnic_wsum_t vnic_csum_pseudo6(const void *saddr16, const void *daddr16, uint8_t proto, uint32_t l4_len);
/*
 * RFC 1624 incremental update of a stored checksum field when a 16-bit word
 * (or 32-bit, two words) of the covered data changes from old to new. All
 * values are raw memory (network order).
 */
void vnic_csum_replace2(uint16_t *check, uint16_t old_word, uint16_t new_word);
void vnic_csum_replace4(uint16_t *check, uint32_t old_word, uint32_t new_word);
/* True if the IPv4 header checksum over hdr[0..ihl_bytes) is valid. */
bool vnic_csum_ip4_ok(const void *hdr, uint32_t ihl_bytes);
/* Recomputes and stores the IPv4 header checksum. */
void vnic_csum_ip4_set(void *hdr, uint32_t ihl_bytes);
/*
 * Verifies the L4 checksum (TCP, UDP, ICMP, ICMPv6) of a parsed frame,
 * including the pseudo header. UDP over IPv4 with checksum 0 is valid.
 * False for anything else unverifiable (fragments, no L4).
 */
bool vnic_csum_l4_ok(const uint8_t *frame, const struct vnic_hdrs *h);
/*
 * Resolves VNIC_CSUM_PARTIAL in place (like skb_checksum_help): sums from
 * csum_start to the end, stores at csum_start + csum_offset and sets
 * ip_summed to NONE. 0, or -EINVAL if csum_start/offset are out of range.
 */
int vnic_csum_help(struct vnic_pkt *pkt);
/*
 * Makes a parsed IPv4 or IPv6 packet (l2_len, l3_proto set) CHECKSUM_PARTIAL
 * for the L4 checksum field at l4_off + csum_off: the field gets the folded,
 * non-inverted pseudo-header sum over the L4 length (pkt->len - l4_off), as
 * Linux's GRO and virtio's NEEDS_CSUM leave it, and csum_start/offset name
 * it. Reads the headers only. 0, or -EINVAL for another L3 or a field
 * outside the packet.
 */
int vnic_csum_make_partial(struct vnic_pkt *pkt, uint32_t l4_off, uint16_t csum_off);
/* Fills in the L4 checksum of a parsed frame completely (TCP/UDP/ICMP). */
int vnic_csum_l4_set(uint8_t *frame, const struct vnic_hdrs *h);
/*
 * Copy and checksum in one pass (the device's checksum offload and rx
 * verify). Both copy all len bytes of the frame src to dst, whatever they
 * return; h describes src as vnic_parse_frame() left it, and the L4 span is
 * taken from dst's copy of the headers, so src may change meanwhile.
 * copy_set: as memcpy then vnic_csum_l4_set(dst, h), bit for bit.
 * copy_ok: as memcpy then vnic_csum_l4_ok(dst, h).
 */
int vnic_csum_l4_copy_set(uint8_t *dst, const uint8_t *src, uint32_t len,
			  const struct vnic_hdrs *h);
bool vnic_csum_l4_copy_ok(uint8_t *dst, const uint8_t *src, uint32_t len,
			  const struct vnic_hdrs *h);
/* "scalar64" or "avx2": which vnic_csum_partial is in use. */
const char *vnic_csum_impl_name(void);
/* For benchmarks and tests: force an implementation; -ENOTSUP if unavailable. */
int vnic_csum_impl_select(const char *name);

/* ---------------------------------------------------------------------------
 * Segmentation (gso.c dispatcher, gso_tcp.c, gso_udp.c)
 * ------------------------------------------------------------------------- */

enum vnic_gso_flags {
	VNIC_GSO_F_CSUM_COMPLETE = 0,	/* every segment gets its full L4 checksum */
	VNIC_GSO_F_CSUM_PARTIAL = 1 << 0,/* leave each segment partial (pseudo-header
					  * sum in the field, csum_start/offset set) */
};

/*
 * The number of segments pkt becomes (1 when it is not GSO), or -EINVAL for a
 * superpacket whose metadata is inconsistent (gso_size 0, unknown type, type
 * not matching the headers).
 */
int vnic_gso_count(const struct vnic_pkt *pkt);
/*
 * Segments a superpacket (gso_type, gso_size set; parsed; ip_summed PARTIAL or
 * NONE) into out[0..n), packets the caller allocated with room for
 * headers + gso_size each. Each segment gets copied headers with lengths, IPv4
 * ID (+1 per segment) and header checksum, TCP sequence rewritten; CWR only on
 * the first, FIN and PSH only on the last. Returns the number of segments
 * written, or -EINVAL (bad metadata), -ENOSPC (n too small or a segment does
 * not fit). Never modifies pkt. Output segments are not GSO (gso_* zero).
 */
int vnic_gso_segment(const struct vnic_pkt *pkt, struct vnic_pkt **out, unsigned int n,
		     unsigned int flags);

/* ---------------------------------------------------------------------------
 * GRO (gro.c, gro_tcp.c)
 * ------------------------------------------------------------------------- */

enum vnic_gro_result {
	VNIC_GRO_MERGED,	/* payload appended to a held packet; pkt was freed */
	VNIC_GRO_HELD,		/* pkt is held, may grow */
	VNIC_GRO_NORMAL,	/* not eligible, or flushed: pkt passed to output */
};

/* Receives completed packets (aggregates and pass-through), in order. */
typedef void (*vnic_gro_out_fn)(void *ctx, struct vnic_pkt *pkt);

struct vnic_gro_stats {
	uint64_t received;	/* packets given to vnic_gro_receive */
	uint64_t merged;	/* of those, appended to a held packet */
	uint64_t chained;	/* of the merged, chained as a fragment (fraglist) */
	uint64_t held;		/* started a new aggregate */
	uint64_t normal;	/* passed through without being held */
	uint64_t flushed;	/* aggregates (or single held) completed */
	uint64_t evicted;	/* completed early: bucket full */
};

struct vnic_gro_bucket {
	struct vnic_pkt *held[VNIC_GRO_MAX_HELD]; /* oldest first */
	uint8_t count;
};

/*
 * A bounded flow table for one poll: 8 buckets by the low 3 bits of the flow
 * hash, at most 8 held packets each. Aggregates need tailroom for 64 KiB: a
 * held packet whose buffer is smaller is copied into a buffer from agg_pool on
 * its first merge (no merge if agg_pool is NULL or empty).
 */
struct vnic_gro {
	struct vnic_gro_bucket buckets[VNIC_GRO_BUCKETS];
	uint32_t nheld;
	bool fraglist; /* merge by chaining segments (vnic_pkt frags), not copying */
	struct vnic_pkt_pool *agg_pool;
	vnic_gro_out_fn out;
	void *out_ctx;
	struct vnic_gro_stats stats;
};

void vnic_gro_init(struct vnic_gro *gro, struct vnic_pkt_pool *agg_pool, vnic_gro_out_fn out,
		   void *out_ctx);
/*
 * Offers one received packet (TCPv4/TCPv6 eligible; everything else passes
 * through). pkt->hash selects the bucket (0 is a valid hash). The packet need
 * not be parsed. Checksum: UNNECESSARY, COMPLETE or PARTIAL count as
 * verified; NONE is verified in software and a bad one is passed through.
 */
enum vnic_gro_result vnic_gro_receive(struct vnic_gro *gro, struct vnic_pkt *pkt);
/*
 * Fraglist on: a merged segment is not copied but chained to the held
 * packet as a fragment (struct vnic_pkt frags), as Linux's GRO appends page
 * fragments, so an aggregate costs no copy and no agg_pool buffer; whoever
 * gets it must read the fragments (one writev). Off (the default after
 * init): aggregates are one flat buffer. Between polls only (nothing held).
 */
void vnic_gro_set_fraglist(struct vnic_gro *gro, bool on);
/*
 * Completes every held packet, oldest first. A completed aggregate of N > 1
 * segments carries gso_type (TCPV4/TCPV6, +ECN if CWR), gso_size = MSS,
 * gso_segs = N, ip_summed PARTIAL with the pseudo-header sum in the TCP
 * checksum field, IPv4 total length and header checksum rewritten.
 * A single held packet is passed out unchanged.
 */
void vnic_gro_flush(struct vnic_gro *gro);

/* ---------------------------------------------------------------------------
 * Delivery batching (deliver.c)
 * ------------------------------------------------------------------------- */

enum vnic_deliver_mode {
	VNIC_DELIVER_LIST,	/* no GRO: batch every packet */
	VNIC_DELIVER_GRO,	/* GRO, each result delivered at once */
	VNIC_DELIVER_GRO_LIST,	/* GRO first, then batch what it passes on */
};

/* Receives a batch of n packets, pkts[0..n); the callee owns them after. */
typedef void (*vnic_deliver_fn)(void *ctx, struct vnic_pkt **pkts, unsigned int n);

struct vnic_deliver_stats {
	uint64_t packets;	/* packets handed to the callback */
	uint64_t segments;	/* the same, counting an aggregate of N as N */
	uint64_t batches;	/* callback invocations */
};

struct vnic_deliver {
	enum vnic_deliver_mode mode;
	unsigned int batch;		/* flush the list at this many segments */
	unsigned int n;			/* packets queued */
	unsigned int nsegs;		/* segments queued */
	struct vnic_pkt *pkts[VNIC_DELIVER_MAX_BATCH];
	vnic_deliver_fn fn;
	void *ctx;
	struct vnic_gro gro;
	struct vnic_deliver_stats stats;
};

/* batch 0 means the default (8); more than VNIC_DELIVER_MAX_BATCH: -EINVAL. */
int vnic_deliver_init(struct vnic_deliver *d, enum vnic_deliver_mode mode, unsigned int batch,
		      struct vnic_pkt_pool *agg_pool, vnic_deliver_fn fn, void *ctx);
/* One received packet, inside a poll. */
void vnic_deliver_rx(struct vnic_deliver *d, struct vnic_pkt *pkt);
/* End of poll: GRO flush, then the pending list. */
void vnic_deliver_flush(struct vnic_deliver *d);
/*
 * Another mode, on the thread that owns d: what GRO holds and the pending
 * list are delivered first (vnic_deliver_flush), so no packet is held by a
 * mode no longer in force. 0 or -EINVAL (mode unknown; nothing changed).
 */
int vnic_deliver_set_mode(struct vnic_deliver *d, enum vnic_deliver_mode mode);
/* GRO's fraglist (vnic_gro_set_fraglist), after a flush. */
void vnic_deliver_set_fraglist(struct vnic_deliver *d, bool on);
/* "list", "gro", "gro-list" ("unknown" out of range); parse returns -EINVAL for anything else. */
const char *vnic_deliver_mode_name(enum vnic_deliver_mode mode);
int vnic_deliver_mode_parse(const char *s, enum vnic_deliver_mode *mode);

/* ---------------------------------------------------------------------------
 * RSS (rss.c)
 * ------------------------------------------------------------------------- */

enum { VNIC_RSS_KEY_LEN = 40 };

/* The key of the Microsoft RSS verification suite, the usual default. */
extern const uint8_t vnic_rss_default_key[VNIC_RSS_KEY_LEN];

/* Toeplitz hash of input[0..n) under key (key_len >= n + 4). */
uint32_t vnic_rss_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *input, size_t n);
/*
 * Hash of a parsed frame: 4-tuple for TCP and UDP (unfragmented), else the
 * 2-tuple of IPv4/IPv6 addresses, else 0.
 */
uint32_t vnic_rss_hash_frame(const uint8_t *key, const uint8_t *frame, const struct vnic_hdrs *h);

#endif /* VNIC_NET_H */
