// SPDX-License-Identifier: MIT
/*
 * Internet checksum (RFC 1071): buffer sums, pseudo headers, RFC 1624
 * incremental updates, L4 verification and completion, and the software
 * fallback for VNIC_CSUM_PARTIAL.
 *
 * Sums are taken in the host's native byte order. The ones'-complement sum is
 * byte-order independent (RFC 1071 section 2(B)): summing native loads gives
 * the byte-swapped image of the big-endian sum, so the folded result can be
 * stored back into a frame as raw memory with no htons.
 *
 * vnic_csum_copy and the vnic_csum_l4_copy_* helpers copy and sum in one
 * pass: each word is loaded once, stored to the destination and added, so a
 * frame that is copied anyway (a segment into a wire slot, a frame into a
 * posted rx buffer) is not read a second time to be summed.
 *
 * Every vnic_wsum_t this file returns is fully folded to 16 bits (never more
 * than 0xffff, and 0 only for all-zero input). A ones'-complement sum has
 * exactly one representative in [1, 0xffff] for non-zero data, so the value
 * does not depend on the order in which words were added: every
 * implementation returns bit-identical results, not just equal checksums.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "csum_int.h"
#include "net.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

enum {
	CSUM_BLOCK = 64,		/* bytes per step of the block kernels */
	CSUM_KERNEL_ALIGN = 32,		/* the head is summed until p is this aligned */
	CSUM_SIMD_MIN_LEN = 256,	/* below this, SIMD set-up costs more than it saves */
};

/*
 * Runtime choice, from bench_csum (Release, gcc 12 -O2, AMD EPYC 2.6 GHz VM,
 * hot cache, best of 31 interleaved runs), ns per call:
 *
 *	size	  naive		scalar64		avx2
 *	256 B	   64.4		  10.8 (23.6 GB/s)	   7.9 (32.6 GB/s)
 *	1500 B	  378.7		  39.0 (38.5 GB/s)	  22.5 (66.6 GB/s)
 *	65536 B	16366		1482   (44.2 GB/s)	 638   (102.6 GB/s)
 *
 * AVX2 measured faster from 256 B up, so it is the default where the CPU has
 * it. Should it ever lose on some machine, set this to false: scalar64 then
 * stays the default and AVX2 is only used when selected explicitly.
 */
#define CSUM_PREFER_AVX2 true

/*
 * A block kernel sums nblocks * 64 bytes at p and returns a 64-bit value
 * congruent, modulo 0xffff, to the sum of the native 16-bit words there.
 * Kernels never see the head, the tail or the odd-address case: the common
 * wrapper below handles those, so every kernel shares one edge-case path.
 */
typedef uint64_t (*csum_blocks_fn)(const uint8_t *p, size_t nblocks);
/* The same, storing each block at dst as it is summed (csum_int.h). */
typedef uint64_t (*csum_copy_blocks_fn)(uint8_t *dst, const uint8_t *src, size_t nblocks);

struct csum_impl {
	const char *name;
	csum_blocks_fn blocks;
	csum_copy_blocks_fn copy_blocks;
	bool (*supported)(void);
};

static inline uint16_t ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void st16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void st32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void st64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Ones'-complement 64-bit add: the carry out wraps around into bit 0. */
static inline uint64_t add64(uint64_t a, uint64_t b)
{
	uint64_t s = a + b;

	return s + (s < b);
}

/*
 * 64 -> 16 bits with end-around carries. 2^16 == 1 (mod 0xffff), so each
 * fold keeps the value modulo 0xffff; the result is in [0, 0xffff] and 0 only
 * when s is 0.
 */
static inline uint32_t fold64(uint64_t s)
{
	uint32_t lo = (uint32_t)s, hi = (uint32_t)(s >> 32);

	lo += hi;
	lo += lo < hi;
	lo = (lo & 0xffff) + (lo >> 16);
	return (lo & 0xffff) + (lo >> 16);
}

static inline uint32_t swap16(uint32_t x)
{
	return ((x << 8) | (x >> 8)) & 0xffff;
}

/* The native 16-bit value of a word whose first byte is b and second is 0. */
static inline uint16_t lane0(uint8_t b)
{
	const uint8_t w[2] = { b, 0 };

	return ld16(w);
}

/*
 * Four independent accumulators, each with its own carry counter: the adds
 * do not wait on each other, unlike one adc chain through the flags. A carry
 * out of bit 63 is worth 2^64 == 1 (mod 0xffff), so counting carries and
 * adding the count at the end is exact.
 */
static uint64_t csum_blocks_scalar(const uint8_t *p, size_t nblocks)
{
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
	uint64_t w;

	for (; nblocks; nblocks--, p += CSUM_BLOCK) {
		w = ld64(p);
		a0 += w;
		c0 += a0 < w;
		w = ld64(p + 8);
		a1 += w;
		c1 += a1 < w;
		w = ld64(p + 16);
		a2 += w;
		c2 += a2 < w;
		w = ld64(p + 24);
		a3 += w;
		c3 += a3 < w;
		w = ld64(p + 32);
		a0 += w;
		c0 += a0 < w;
		w = ld64(p + 40);
		a1 += w;
		c1 += a1 < w;
		w = ld64(p + 48);
		a2 += w;
		c2 += a2 < w;
		w = ld64(p + 56);
		a3 += w;
		c3 += a3 < w;
	}
	/* Carry counts are at most 2 per block: their sum cannot overflow. */
	return add64(add64(add64(a0, a1), add64(a2, a3)), c0 + c1 + c2 + c3);
}

/* csum_blocks_scalar with a store behind every load: the same sum, the same carry bookkeeping. */
static uint64_t csum_copy_blocks_scalar(uint8_t *dst, const uint8_t *src, size_t nblocks)
{
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
	uint64_t w;

	for (; nblocks; nblocks--, src += CSUM_BLOCK, dst += CSUM_BLOCK) {
		w = ld64(src);
		st64(dst, w);
		a0 += w;
		c0 += a0 < w;
		w = ld64(src + 8);
		st64(dst + 8, w);
		a1 += w;
		c1 += a1 < w;
		w = ld64(src + 16);
		st64(dst + 16, w);
		a2 += w;
		c2 += a2 < w;
		w = ld64(src + 24);
		st64(dst + 24, w);
		a3 += w;
		c3 += a3 < w;
		w = ld64(src + 32);
		st64(dst + 32, w);
		a0 += w;
		c0 += a0 < w;
		w = ld64(src + 40);
		st64(dst + 40, w);
		a1 += w;
		c1 += a1 < w;
		w = ld64(src + 48);
		st64(dst + 48, w);
		a2 += w;
		c2 += a2 < w;
		w = ld64(src + 56);
		st64(dst + 56, w);
		a3 += w;
		c3 += a3 < w;
	}
	return add64(add64(add64(a0, a1), add64(a2, a3)), c0 + c1 + c2 + c3);
}

static bool cpu_has_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* libgcc's check includes OS support for the YMM state (XGETBV). */
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

static bool always(void)
{
	return true;
}

static const struct csum_impl csum_scalar = { "scalar64", csum_blocks_scalar,
					       csum_copy_blocks_scalar, always };
static const struct csum_impl csum_avx2 = { "avx2", vnic_csum_avx2_blocks,
					     vnic_csum_avx2_copy_blocks, cpu_has_avx2 };
static const struct csum_impl *const csum_impls[] = { &csum_scalar, &csum_avx2 };

/* NULL until first use; see csum_impl_get(). */
static const struct csum_impl *csum_cur;

/*
 * Two threads may both see NULL and both pick: they pick the same thing from
 * the same CPU flags, so the race costs one extra CPUID look-up. Relaxed
 * atomics are enough because the structs pointed to are constant. A
 * vnic_csum_impl_select() racing with a first use may lose to the default:
 * select before starting threads (tests and benchmarks do).
 */
static const struct csum_impl *csum_impl_get(void)
{
	const struct csum_impl *impl = __atomic_load_n(&csum_cur, __ATOMIC_RELAXED);

	if (unlikely(!impl)) {
		impl = CSUM_PREFER_AVX2 && cpu_has_avx2() ? &csum_avx2 : &csum_scalar;
		__atomic_store_n(&csum_cur, impl, __ATOMIC_RELAXED);
	}
	return impl;
}

/*
 * The sum of buf[0..len) relative to buf itself: a byte at an even offset
 * from buf is the first byte of a 16-bit word. When buf is at an odd address
 * the first byte is taken alone and the rest is summed from the next (even)
 * address; that rest then sits one byte off the word grid, so its folded sum
 * is byte-swapped back (RFC 1071 section 2(B)) before the first byte joins.
 */
static inline __attribute__((always_inline)) uint32_t csum_buf(const uint8_t *p, size_t len,
							       csum_blocks_fn blocks)
{
	uint64_t acc = 0;
	uint32_t res, first = 0;
	bool odd = (uintptr_t)p & 1;

	if (odd && len) {
		first = lane0(p[0]);
		p++;
		len--;
	}
	if (len >= CSUM_BLOCK) {
		/* At most 3 words then 3 quads: len stays >= 34. */
		while ((uintptr_t)p & 7) {
			acc += ld16(p);
			p += 2;
			len -= 2;
		}
		while ((uintptr_t)p & (CSUM_KERNEL_ALIGN - 1)) {
			acc = add64(acc, ld64(p));
			p += 8;
			len -= 8;
		}
		if (len >= CSUM_BLOCK) {
			size_t n = len / CSUM_BLOCK;

			acc = add64(acc, blocks(p, n));
			p += n * CSUM_BLOCK;
			len -= n * CSUM_BLOCK;
		}
	}
	if (len >= 8) {
		/* Up to 7 quads: count carries aside instead of chaining adc. */
		uint64_t carries = 0, w;

		for (; len >= 8; len -= 8, p += 8) {
			w = ld64(p);
			acc += w;
			carries += acc < w;
		}
		acc = add64(acc, carries);
	}
	if (len >= 4) {
		acc = add64(acc, ld32(p));
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		acc = add64(acc, ld16(p));
		p += 2;
		len -= 2;
	}
	if (len)
		acc = add64(acc, lane0(p[0]));

	res = fold64(acc);
	if (odd)
		res = fold64((uint64_t)swap16(res) + first);
	return res;
}

vnic_wsum_t vnic_csum_partial(const void *buf, size_t len, vnic_wsum_t sum)
{
	uint32_t res;

	/* Two expansions of csum_buf: the short one inlines the scalar kernel. */
	if (len < CSUM_SIMD_MIN_LEN)
		res = csum_buf(buf, len, csum_blocks_scalar);
	else
		res = csum_buf(buf, len, csum_impl_get()->blocks);
	return fold64((uint64_t)res + sum);
}

/*
 * csum_buf with a store behind every load. Alignment follows src, the side
 * that is read; stores go wherever dst is (unaligned stores cost little on
 * the CPUs this runs on). The sum is of the bytes as they were loaded, which
 * are the bytes stored: a src rewritten meanwhile cannot make dst and the
 * sum disagree.
 */
static inline __attribute__((always_inline)) uint32_t csum_copy_buf(uint8_t *d, const uint8_t *p,
								    size_t len,
								    csum_copy_blocks_fn blocks)
{
	uint64_t acc = 0, w;
	uint32_t res, first = 0, w32;
	uint16_t w16;
	bool odd = (uintptr_t)p & 1;

	if (odd && len) {
		d[0] = p[0];
		first = lane0(d[0]);
		p++;
		d++;
		len--;
	}
	if (len >= CSUM_BLOCK) {
		while ((uintptr_t)p & 7) {
			w16 = ld16(p);
			st16(d, w16);
			acc += w16;
			p += 2;
			d += 2;
			len -= 2;
		}
		while ((uintptr_t)p & (CSUM_KERNEL_ALIGN - 1)) {
			w = ld64(p);
			st64(d, w);
			acc = add64(acc, w);
			p += 8;
			d += 8;
			len -= 8;
		}
		if (len >= CSUM_BLOCK) {
			size_t n = len / CSUM_BLOCK;

			acc = add64(acc, blocks(d, p, n));
			p += n * CSUM_BLOCK;
			d += n * CSUM_BLOCK;
			len -= n * CSUM_BLOCK;
		}
	}
	if (len >= 8) {
		uint64_t carries = 0;

		for (; len >= 8; len -= 8, p += 8, d += 8) {
			w = ld64(p);
			st64(d, w);
			acc += w;
			carries += acc < w;
		}
		acc = add64(acc, carries);
	}
	if (len >= 4) {
		w32 = ld32(p);
		st32(d, w32);
		acc = add64(acc, w32);
		p += 4;
		d += 4;
		len -= 4;
	}
	if (len >= 2) {
		w16 = ld16(p);
		st16(d, w16);
		acc = add64(acc, w16);
		p += 2;
		d += 2;
		len -= 2;
	}
	if (len) {
		d[0] = p[0];
		acc = add64(acc, lane0(d[0]));
	}

	res = fold64(acc);
	if (odd)
		res = fold64((uint64_t)swap16(res) + first);
	return res;
}

vnic_wsum_t vnic_csum_copy(void *dst, const void *src, size_t len, vnic_wsum_t sum)
{
	uint32_t res;

	if (len < CSUM_SIMD_MIN_LEN)
		res = csum_copy_buf(dst, src, len, csum_copy_blocks_scalar);
	else
		res = csum_copy_buf(dst, src, len, csum_impl_get()->copy_blocks);
	return fold64((uint64_t)res + sum);
}

uint16_t vnic_csum_fold(vnic_wsum_t sum)
{
	return (uint16_t)~fold64(sum);
}

uint16_t vnic_csum(const void *buf, size_t len)
{
	return vnic_csum_fold(vnic_csum_partial(buf, len, 0));
}

vnic_wsum_t vnic_csum_add(vnic_wsum_t a, vnic_wsum_t b)
{
	return fold64((uint64_t)a + b);
}

/*
 * The protocol and length words are big-endian in the pseudo header; as raw
 * memory they are htons/htonl of the value. A 32-bit length contributes its
 * two halves, which for IPv4's 16-bit field is the same as the low half alone.
 */
vnic_wsum_t vnic_csum_pseudo4(const void *saddr4, const void *daddr4, uint8_t proto,
			      uint32_t l4_len)
{
	uint64_t s = (uint64_t)ld32(saddr4) + ld32(daddr4);

	s += htonl(l4_len);
	s += htons(proto);
	return fold64(s);
}

vnic_wsum_t vnic_csum_pseudo6(const void *saddr16, const void *daddr16, uint8_t proto,
			      uint32_t l4_len)
{
	const uint8_t *s6 = saddr16, *d6 = daddr16;
	uint64_t s = 0;

	for (int i = 0; i < 16; i += 4)
		s += (uint64_t)ld32(s6 + i) + ld32(d6 + i);
	s += htonl(l4_len);
	s += htonl(proto);
	return fold64(s);
}

/*
 * RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). Unlike eqn. 2 it never turns a
 * result that should be 0x0000 into 0xffff. An unchanged field is skipped:
 * with HC == 0xffff (UDP's transmitted zero) eqn. 3 would rewrite it to 0.
 * check may be unaligned inside a frame, hence the byte copies.
 */
void vnic_csum_replace2(uint16_t *check, uint16_t old_word, uint16_t new_word)
{
	uint16_t hc;

	if (old_word == new_word)
		return;
	memcpy(&hc, check, sizeof(hc));
	hc = (uint16_t)~fold64((uint64_t)(uint16_t)~hc + (uint16_t)~old_word + new_word);
	memcpy(check, &hc, sizeof(hc));
}

/* ~old as 32 bits is its ones'-complement negation modulo 2^32 - 1, a multiple of 0xffff. */
void vnic_csum_replace4(uint16_t *check, uint32_t old_word, uint32_t new_word)
{
	uint16_t hc;

	if (old_word == new_word)
		return;
	memcpy(&hc, check, sizeof(hc));
	hc = (uint16_t)~fold64((uint64_t)(uint16_t)~hc + (uint32_t)~old_word + new_word);
	memcpy(check, &hc, sizeof(hc));
}

enum {
	IP4_MIN_HLEN = 20,
	IP4_MAX_HLEN = 60,
	IP4_CHECK_OFF = 10,
	IP4_SADDR_OFF = 12,
	IP4_DADDR_OFF = 16,
	IP6_HLEN = 40,
	IP6_SADDR_OFF = 8,
	IP6_DADDR_OFF = 24,
	TCP_MIN_HLEN = 20,
	TCP_CHECK_OFF = 16,
	UDP_HLEN = 8,
	UDP_LEN_OFF = 4,
	UDP_CHECK_OFF = 6,
	ICMP_MIN_LEN = 4,		/* type, code, checksum */
	ICMP_CHECK_OFF = 2,
};

bool vnic_csum_ip4_ok(const void *hdr, uint32_t ihl_bytes)
{
	/* A valid header sums to 0xffff; an all-zero one sums to 0 and fails. */
	if (unlikely(ihl_bytes < IP4_MIN_HLEN || ihl_bytes > IP4_MAX_HLEN))
		return false;
	return vnic_csum(hdr, ihl_bytes) == 0;
}

void vnic_csum_ip4_set(void *hdr, uint32_t ihl_bytes)
{
	uint8_t *p = hdr;

	if (unlikely(ihl_bytes < IP4_MIN_HLEN || ihl_bytes > IP4_MAX_HLEN))
		return;
	st16(p + IP4_CHECK_OFF, 0);
	st16(p + IP4_CHECK_OFF, vnic_csum(p, ihl_bytes));
}

/* Where the L4 checksum of a parsed frame lives and what it covers. */
struct l4_span {
	uint32_t off;		/* start of the L4 header in the frame */
	uint32_t len;		/* bytes covered (UDP: its own length field) */
	uint32_t check_off;	/* checksum field, from off */
	bool pseudo;		/* a pseudo header is part of the sum */
	bool v6;
};

/*
 * Trusts h to describe frame as vnic_parse_frame() left it: the parser has
 * checked that l3_off + l3_len + l3_payload_len lies inside the frame. What is
 * re-checked here is that the fields agree with each other, so a stale or
 * hand-made h cannot push a read past the IP packet it describes.
 */
static int l4_span_get(const uint8_t *frame, const struct vnic_hdrs *h, struct l4_span *sp)
{
	uint64_t l4_start = (uint64_t)h->l3_off + h->l3_len;
	uint64_t end = l4_start + h->l3_payload_len;
	uint32_t min_len;

	/* Fragments: the rest of the datagram is not here. */
	if (unlikely(!(h->flags & VNIC_HDRS_F_L4) || (h->flags & VNIC_HDRS_F_FRAG)))
		return -EINVAL;
	if (h->l3_proto == VNIC_ETH_P_IP)
		sp->v6 = false;
	else if (h->l3_proto == VNIC_ETH_P_IPV6)
		sp->v6 = true;
	else
		return -EINVAL;
	/* The pseudo header reads the addresses out of the base header. */
	if (unlikely(h->l3_len < (sp->v6 ? IP6_HLEN : IP4_MIN_HLEN)))
		return -EINVAL;
	/* L4 must start where L3 ends; the IP length field bounds it. */
	if (unlikely(h->l4_off != l4_start))
		return -EINVAL;

	sp->off = h->l4_off;
	sp->len = h->l3_payload_len;
	sp->pseudo = true;
	switch (h->l4_proto) {
	case VNIC_IPPROTO_TCP:
		min_len = TCP_MIN_HLEN;
		sp->check_off = TCP_CHECK_OFF;
		break;
	case VNIC_IPPROTO_UDP:
		min_len = UDP_HLEN;
		sp->check_off = UDP_CHECK_OFF;
		break;
	case VNIC_IPPROTO_ICMP:
		if (unlikely(sp->v6))
			return -EINVAL;
		min_len = ICMP_MIN_LEN;
		sp->check_off = ICMP_CHECK_OFF;
		sp->pseudo = false;	/* RFC 792: the ICMP message alone */
		break;
	case VNIC_IPPROTO_ICMPV6:
		if (unlikely(!sp->v6))
			return -EINVAL;
		min_len = ICMP_MIN_LEN;
		sp->check_off = ICMP_CHECK_OFF;
		break;
	default:
		return -EPROTONOSUPPORT;
	}
	if (unlikely(sp->len < min_len || end > UINT32_MAX))
		return -EINVAL;
	if (h->l4_proto == VNIC_IPPROTO_UDP) {
		/* RFC 768: the datagram is what the UDP length says, if it fits. */
		uint32_t ulen = ntohs(ld16(frame + sp->off + UDP_LEN_OFF));

		if (unlikely(ulen < UDP_HLEN || ulen > sp->len))
			return -EINVAL;
		sp->len = ulen;
	}
	return 0;
}

/* The non-complemented sum over the span, pseudo header included. */
static vnic_wsum_t l4_sum(const uint8_t *frame, const struct vnic_hdrs *h, const struct l4_span *sp)
{
	const uint8_t *l3 = frame + h->l3_off;
	vnic_wsum_t sum = 0;

	if (sp->pseudo) {
		if (sp->v6)
			sum = vnic_csum_pseudo6(l3 + IP6_SADDR_OFF, l3 + IP6_DADDR_OFF, h->l4_proto,
						sp->len);
		else
			sum = vnic_csum_pseudo4(l3 + IP4_SADDR_OFF, l3 + IP4_DADDR_OFF, h->l4_proto,
						sp->len);
	}
	return vnic_csum_partial(frame + sp->off, sp->len, sum);
}

bool vnic_csum_l4_ok(const uint8_t *frame, const struct vnic_hdrs *h)
{
	struct l4_span sp;

	if (unlikely(l4_span_get(frame, h, &sp) < 0))
		return false;
	/*
	 * A zero UDP checksum means "none": allowed over IPv4 (RFC 768), never
	 * over IPv6 (RFC 8200 section 8.1), where a computed zero goes out as
	 * 0xffff and a literal zero must be dropped.
	 */
	if (h->l4_proto == VNIC_IPPROTO_UDP && ld16(frame + sp.off + UDP_CHECK_OFF) == 0)
		return !sp.v6;
	return vnic_csum_fold(l4_sum(frame, h, &sp)) == 0;
}

int vnic_csum_l4_set(uint8_t *frame, const struct vnic_hdrs *h)
{
	struct l4_span sp;
	uint16_t check;
	int err;

	err = l4_span_get(frame, h, &sp);
	if (unlikely(err < 0))
		return err;
	st16(frame + sp.off + sp.check_off, 0);
	check = vnic_csum_fold(l4_sum(frame, h, &sp));
	/* UDP sends a computed zero as 0xffff: zero would mean "no checksum". */
	if (h->l4_proto == VNIC_IPPROTO_UDP && check == 0)
		check = 0xffff;
	st16(frame + sp.off + sp.check_off, check);
	return 0;
}

/*
 * The L4 header's first bytes, copied before anything is read from them:
 * the TCP checksum field ends at 18 and the UDP length and checksum at 8,
 * so every field l4_span_get() and the checksum code read is in the copy.
 * Even, so the span's remainder starts on the word grid of the span.
 */
enum { L4_COPY_HEAD = TCP_MIN_HLEN };

static_assert(L4_COPY_HEAD % 2 == 0, "the rest of the span is summed from an even offset");

/*
 * Copies frame src[0..len) to dst and sums the L4 span of h in the same
 * pass. The span is found in dst once the L3 header and the start of L4 are
 * copied, so a src that changes meanwhile (a driver's buffer) cannot move
 * the span off what dst holds. zero_check clears the checksum field in dst
 * before it is summed, as vnic_csum_l4_set() does in place. On -errno every
 * byte is copied all the same and *sum is not set.
 */
static int l4_copy_sum(uint8_t *dst, const uint8_t *src, uint32_t len, const struct vnic_hdrs *h,
		       bool zero_check, struct l4_span *sp, vnic_wsum_t *sum)
{
	uint32_t off = h->l4_off, head, rest;
	vnic_wsum_t s = 0;
	const uint8_t *l3;
	int err;

	if (unlikely(off > len)) {
		memcpy(dst, src, len);
		return -EINVAL;
	}
	head = len - off < L4_COPY_HEAD ? len - off : L4_COPY_HEAD;
	memcpy(dst, src, off + head);
	err = l4_span_get(dst, h, sp);
	if (unlikely(!err && sp->len > len - off))
		err = -EINVAL;
	if (unlikely(err)) {
		memcpy(dst + off + head, src + off + head, len - off - head);
		return err;
	}
	if (zero_check)
		st16(dst + off + sp->check_off, 0);
	l3 = dst + h->l3_off;
	if (sp->pseudo && sp->v6)
		s = vnic_csum_pseudo6(l3 + IP6_SADDR_OFF, l3 + IP6_DADDR_OFF, h->l4_proto, sp->len);
	else if (sp->pseudo)
		s = vnic_csum_pseudo4(l3 + IP4_SADDR_OFF, l3 + IP4_DADDR_OFF, h->l4_proto, sp->len);
	/* min_len (4, 8 or 20) <= sp->len, so the field is inside the head either way */
	if (sp->len <= head) {
		s = vnic_csum_partial(dst + off, sp->len, s);
		rest = head;
	} else {
		s = vnic_csum_partial(dst + off, head, s);
		s = vnic_csum_copy(dst + off + head, src + off + head, sp->len - head, s);
		rest = sp->len;
	}
	/* what follows the span (Ethernet padding, UDP past its own length) */
	memcpy(dst + off + rest, src + off + rest, len - off - rest);
	*sum = s;
	return 0;
}

int vnic_csum_l4_copy_set(uint8_t *dst, const uint8_t *src, uint32_t len,
			  const struct vnic_hdrs *h)
{
	struct l4_span sp;
	vnic_wsum_t sum;
	uint16_t check;
	int err;

	err = l4_copy_sum(dst, src, len, h, true, &sp, &sum);
	if (unlikely(err < 0))
		return err;
	check = vnic_csum_fold(sum);
	if (h->l4_proto == VNIC_IPPROTO_UDP && check == 0)
		check = 0xffff;
	st16(dst + sp.off + sp.check_off, check);
	return 0;
}

bool vnic_csum_l4_copy_ok(uint8_t *dst, const uint8_t *src, uint32_t len,
			  const struct vnic_hdrs *h)
{
	struct l4_span sp;
	vnic_wsum_t sum;

	if (unlikely(l4_copy_sum(dst, src, len, h, false, &sp, &sum) < 0))
		return false;
	/* as vnic_csum_l4_ok: a zero UDP checksum is "none" over IPv4 only */
	if (h->l4_proto == VNIC_IPPROTO_UDP && ld16(dst + sp.off + UDP_CHECK_OFF) == 0)
		return !sp.v6;
	return vnic_csum_fold(sum) == 0;
}

int vnic_csum_make_partial(struct vnic_pkt *pkt, uint32_t l4_off, uint16_t csum_off)
{
	const uint8_t *ip = pkt->data + pkt->l2_len;
	vnic_wsum_t sum;
	uint16_t check;

	if (unlikely(l4_off > pkt->len || pkt->len - l4_off < (uint32_t)csum_off + sizeof(check)))
		return -EINVAL;
	if (pkt->l3_proto == VNIC_ETH_P_IP)
		sum = vnic_csum_pseudo4(ip + 12, ip + 16, pkt->l4_proto, pkt->len - l4_off);
	else if (pkt->l3_proto == VNIC_ETH_P_IPV6)
		sum = vnic_csum_pseudo6(ip + 8, ip + 24, pkt->l4_proto, pkt->len - l4_off);
	else
		return -EINVAL;
	check = (uint16_t)~vnic_csum_fold(sum);
	memcpy(pkt->data + l4_off + csum_off, &check, sizeof(check));
	pkt->ip_summed = VNIC_CSUM_PARTIAL;
	pkt->csum_start = (uint16_t)l4_off;
	pkt->csum_offset = csum_off;
	return 0;
}

int vnic_csum_help(struct vnic_pkt *pkt)
{
	uint32_t start = pkt->csum_start;
	uint32_t field = start + pkt->csum_offset;
	uint16_t check;

	if (pkt->ip_summed != VNIC_CSUM_PARTIAL)
		return 0;
	/* The field must lie wholly inside the packet; start <= field follows. */
	if (unlikely(field > pkt->len || pkt->len - field < sizeof(check)))
		return -EINVAL;
	check = vnic_csum_fold(vnic_csum_partial(pkt->data + start, pkt->len - start, 0));
	/*
	 * The protocol is not known here. 0xffff is the same value as 0 in
	 * ones'-complement, so it verifies for TCP too, and for UDP a stored 0
	 * would mean "no checksum".
	 */
	if (check == 0)
		check = 0xffff;
	st16(pkt->data + field, check);
	pkt->ip_summed = VNIC_CSUM_NONE;
	return 0;
}

const char *vnic_csum_impl_name(void)
{
	return csum_impl_get()->name;
}

/* -EINVAL for NULL, -ENOTSUP for a name that is unknown or not usable on this CPU. */
int vnic_csum_impl_select(const char *name)
{
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(csum_impls) / sizeof(csum_impls[0]); i++) {
		if (strcmp(name, csum_impls[i]->name))
			continue;
		if (!csum_impls[i]->supported())
			return -ENOTSUP;
		__atomic_store_n(&csum_cur, csum_impls[i], __ATOMIC_RELAXED);
		return 0;
	}
	return -ENOTSUP;
}
