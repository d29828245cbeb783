// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for what the driver sends the device on the sub-CRQs
 * (src/device/tx.c, rx.c): hostile tx descriptors, header descriptors
 * (0x11, 0x12), checksum and LSO flags, map ids, iobas and lengths into the
 * driver's long-term buffers, direct or in indirect batches; and hostile rx
 * buffer adds, into which the device then writes the frames it receives.
 * A fake driver sends them through a real hv (fz_dev, fuzz/harness.c) and
 * plays the far end of the cable. The device is brought up once per
 * configuration; each input starts with its rings empty. Layout:
 *
 *	byte 0	the device: bit 0 the default one (MTU 1500, cautious header
 *		mask) or MTU 9000 with the exact mask, offloads without headers
 *		dropped, LSO MSS down to 64, no UDP/IPv6 checksum nor IPv6 LSO
 *	then records, up to MAX_RECORDS, by the low 4 bits of a tag byte
 *	(tag bit 4 picks LTB 2 over LTB 1 where an LTB is named):
 *	0 WRITE	  offset (BE24), count (BE16), that many bytes into the LTB
 *	1, 11 FRAME offset (BE24), kind, payload (BE16), pattern: a well-formed
 *		  frame (tag bit 5: L4 checksum left partial), "the frame"
 *	2, 10 DESC a tx descriptor for the frame: flags1, mss (BE16),
 *		  n_crq_elem (0: one plus the header descriptors that follow it),
 *		  then a byte saying which fields come raw or nudged: bit 0
 *		  flags2, bit 1 n_sge, bit 2 dma_reg (BE16), bit 3 ioba (BE64,
 *		  relative to the LTB region), bit 4 ioba plus a signed BE16,
 *		  bit 5 length plus a signed BE16, bit 6 length (BE32)
 *	3 HDRS	  header descriptors for the frame: the layers (VNIC_HDR_DESC_L*
 *		  byte), then a change (byte) and its value (byte): total length,
 *		  L2/L3/L4 length, last extension's length, one extension fewer or
 *		  more, a type, the flag byte
 *	4 RAW	  32 bytes as they are (valid bit set)
 *	5, 14 FLUSH the entries so far: direct if one (unless tag bit 4), else
 *		  one indirect batch through the DMA-mapped array
 *	6, 15 RUN the device runs
 *	7 LINK	  LOGICAL_LINK_STATE down, and up again (tag bit 4: up only at
 *		  the end of the input)
 *	8, 12 RXADD an rx buffer add: map id, offset (BE24, into the LTB region,
 *		  gaps included), length the login response's plus a signed
 *		  byte (tag bit 5: a BE24 of its own)
 *	9, 13 INJECT a frame on the wire towards the device: kind, payload
 *		  (BE16), pattern (tag bit 4: a count (BE16) and that many bytes
 *		  instead), then (tag bit 5) an offset (BE16) and a byte to xor
 *		  there
 *
 * Every tx entry that is not a header descriptor carries a sequence number
 * as its correlator. Checked: each of them that the hv took is completed
 * exactly once, in order, five at most per entry; the completion rcs match
 * the drop counters by reason (txN_drop_<reason> and the rc the protocol
 * gives it); what reaches the wire is what the successes promised: a plain
 * frame byte for byte, a checksum-offload frame with only its L4 checksum
 * changed and valid, an LSO superpacket as many valid segments as it holds,
 * none longer than the MTU allows (the cable drops none). Each received
 * frame goes to the oldest rx buffer that is valid (map id registered,
 * inside its LTB, as long as the login response asked) and long enough, or
 * is dropped by a counted reason; its completion names that buffer, its
 * length and the checksum flags the frame deserves, and the buffer holds
 * the frame. The LTBs share one DMA mapping with poisoned gaps around them:
 * a read or a write outside a registered LTB is AddressSanitizer's to
 * report even where the hv would translate it.
 *
 * Corpus: fuzz/corpus/dev_subcrq/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum {
	MAX_RECORDS = 256,
	BATCH_MAX = VNIC_MAX_IND_DESCS + VNIC_MAX_TX_ELEMS,
	SUBMIT_MAX = 8192,
	FRAMES_MAX = 16384,
	LOG_BYTES = 16 << 20,
	RC_MAX = VNIC_RC_UNSUPPORTEDOPTION + 1,
};

/* A leader entry the hv took: what its completion and frames must match. */
struct submitted {
	uint32_t seq;
	uint8_t type;
	uint8_t flags1;
	uint16_t mss;
	uint16_t dma_reg;
	uint64_t ioba;
	uint32_t len;
	uint32_t snap; /* success: its bytes as the device read them, in the snapshot log */
};

struct frame_rec {
	uint32_t off, len;
};

struct variant {
	struct fz_dev e;
	uint32_t mtu;
	bool ready;
};

static struct variant vars[2];

static struct {
	struct variant *v;
	union vnic_subcrq_entry batch[BATCH_MAX];
	bool autoelem[BATCH_MAX];
	unsigned int nb;
	struct submitted sub[SUBMIT_MAX];
	uint8_t rcs[SUBMIT_MAX];
	unsigned int nsub, ncomp;
	uint32_t seq;
	uint8_t *log, *snaps;
	size_t log_used, snaps_used;
	struct frame_rec frames[FRAMES_MAX];
	unsigned int nframes, frames_seen;
	bool log_full; /* too much to keep: counts checked, not contents */
	bool dirty;    /* the LTB changed under descriptors not yet completed */
	/* the frame DESC and HDRS describe */
	unsigned int fmap;
	uint32_t foff, flen;
} st;

/* --- rx: what the device must make of the buffers and frames it is given -------------- */

enum {
	RX_BUFS = 8192,	  /* valid buffers posted and not yet used, at most two rings' worth */
	RX_FRAMES = 4096, /* frames injected in one input */
	RX_LOG = 8 << 20,
};

struct rx_buf_m {
	uint64_t corr;
	uint64_t ioba;
	uint32_t len;
};

struct rx_delivery {
	uint64_t corr;
	uint64_t ioba;
	uint32_t len;
	uint32_t frame; /* in the frame log */
	uint8_t flags;
};

static struct {
	struct rx_buf_m bufs[RX_BUFS]; /* oldest first, a ring */
	unsigned int head, n;
	uint8_t *log;
	size_t log_used;
	uint32_t pending[RX_FRAMES], pending_len[RX_FRAMES]; /* injected, not yet run */
	unsigned int npending;
	struct rx_delivery expect[RX_FRAMES];
	unsigned int nexpect, ngot;
	uint64_t no_buffer, too_big, link_down;
	uint64_t corr;
	bool link_up;
	bool posted;	  /* an rx add was sent this input: the device forgets them at the end */
	bool overwritten; /* the LTB written after a frame was delivered into it */
} rx;

/* --- what the device sends back ------------------------------------------------------- */

static void on_frame(void *ctx, const uint8_t *frame, uint32_t len)
{
	(void)ctx;
	st.frames_seen++;
	if (st.log_full || st.nframes == FRAMES_MAX || st.log_used + len > LOG_BYTES) {
		st.log_full = true;
		return;
	}
	memcpy(st.log + st.log_used, frame, len);
	st.frames[st.nframes].off = (uint32_t)st.log_used;
	st.frames[st.nframes++].len = len;
	st.log_used += len;
}

static const uint8_t *src_of(const struct submitted *s);

/*
 * A success's bytes, copied as the device read them: nothing writes the
 * LTB between its read and this completion (both happen in one run).
 */
static void snapshot(struct submitted *s)
{
	if (s->type != VNIC_TX_DESC || st.snaps_used + s->len > LOG_BYTES) {
		st.log_full = true;
		return;
	}
	memcpy(st.snaps + st.snaps_used, src_of(s), s->len);
	s->snap = (uint32_t)st.snaps_used;
	st.snaps_used += s->len;
}

static void on_txcomp(void *ctx, const struct vnic_tx_comp *c)
{
	(void)ctx;
	FZ_CHECK(c->num_comps >= 1 && c->num_comps <= VNIC_TX_COMP_MAX);
	for (unsigned int i = 0; i < c->num_comps; i++) {
		uint32_t corr = vnic_be32_get(&c->correlators[i]);
		uint16_t rc = vnic_be16_get(&c->rcs[i]);

		/* one completion per descriptor, in the order they were sent */
		FZ_CHECK(st.ncomp < st.nsub);
		FZ_CHECK(corr == st.sub[st.ncomp].seq);
		FZ_CHECK(rc < RC_MAX);
		if (rc == VNIC_RC_SUCCESS && !st.log_full)
			snapshot(&st.sub[st.ncomp]);
		st.rcs[st.ncomp++] = (uint8_t)rc;
	}
}

/* What the device reports of a frame (PROTOCOL.md section 8.5): what it can verify. */
static uint8_t rx_flags(const uint8_t *f, uint32_t len)
{
	uint8_t flags = VNIC_RXC_END_FRAME;
	struct vnic_hdrs h;

	if (vnic_parse_frame(f, len, &h) != VNIC_PARSE_OK)
		return flags;
	if (h.l3_proto == VNIC_ETH_P_IPV6 ||
	    (h.l3_proto == VNIC_ETH_P_IP && vnic_csum_ip4_ok(f + h.l3_off, h.l3_len)))
		flags |= VNIC_RXC_IP_CHKSUM_GOOD;
	if ((h.l4_proto == VNIC_IPPROTO_TCP || h.l4_proto == VNIC_IPPROTO_UDP) &&
	    (h.flags & VNIC_HDRS_F_L4) && !(h.flags & VNIC_HDRS_F_FRAG) && vnic_csum_l4_ok(f, &h))
		flags |= VNIC_RXC_TCP_UDP_CHKSUM_GOOD;
	return flags;
}

/*
 * The frames injected since the last run, against the buffers: the oldest
 * valid buffer takes the next frame if it is long enough; else the frame is
 * dropped and the buffer stays. Call before every run of the device.
 */
static void rx_predict(void)
{
	for (unsigned int i = 0; i < rx.npending; i++) {
		uint32_t off = rx.pending[i], len = rx.pending_len[i];
		struct rx_buf_m *b = &rx.bufs[rx.head % RX_BUFS];
		struct rx_delivery *d;

		if (!rx.link_up) {
			rx.link_down++;
			continue;
		}
		if (!rx.n) {
			rx.no_buffer++;
			continue;
		}
		if (len > b->len) {
			rx.too_big++;
			continue;
		}
		d = &rx.expect[rx.nexpect++];
		d->corr = b->corr;
		d->ioba = b->ioba;
		d->len = len;
		d->frame = off;
		d->flags = rx_flags(rx.log + off, len);
		rx.head++;
		rx.n--;
	}
	rx.npending = 0;
}

static void on_rxcomp(void *ctx, const struct vnic_rx_comp *c)
{
	const struct rx_delivery *d;

	(void)ctx;
	FZ_CHECK(rx.ngot < rx.nexpect);
	d = &rx.expect[rx.ngot++];
	FZ_CHECK(vnic_be64_get(&c->correlator) == d->corr);
	FZ_CHECK(vnic_be32_get(&c->len) == d->len);
	FZ_CHECK(vnic_be16_get(&c->off_frame_data) == 0);
	FZ_CHECK(vnic_be16_get(&c->rc) == VNIC_RC_SUCCESS);
	FZ_CHECK(c->flags == d->flags);
}

/* Runs the device with what it was given so far foreseen. */
static void run_dev(void)
{
	rx_predict();
	FZ_CHECK(fz_dev_run(&st.v->e));
}

static bool overlap(uint64_t a, uint32_t alen, uint64_t b, uint32_t blen)
{
	return a < b + blen && b < a + alen;
}

/* Each buffer holds the frame delivered into it, unless a later one went over it. */
static void rx_check_data(void)
{
	const struct fz_dev *e = &st.v->e;

	if (rx.overwritten)
		return;
	for (unsigned int i = 0; i < rx.nexpect; i++) {
		const struct rx_delivery *d = &rx.expect[i];
		bool later = false;

		for (unsigned int j = i + 1; j < rx.nexpect && !later; j++)
			later = overlap(d->ioba, d->len, rx.expect[j].ioba, rx.expect[j].len);
		if (!later)
			FZ_CHECK(!memcmp(e->ltb + (d->ioba - e->ltb_ioba), rx.log + d->frame,
					 d->len));
	}
}

static void setup(unsigned int i)
{
	struct variant *v = &vars[i];
	struct vnic_dev_config cfg;

	vnic_dev_config_default(&cfg);
	v->mtu = 1500;
	if (i) {
		cfg.hdr_mask = VNIC_DEV_HDRS_EXACT;
		cfg.drop_missing_hdrs = true;
		cfg.min_lso_mss = VNIC_DEV_MIN_LSO_MSS;
		v->mtu = 9000;
	}
	fz_dev_create(&v->e, &cfg, v->mtu, true);
	v->e.on_frame = on_frame;
	v->e.on_txcomp = on_txcomp;
	v->e.on_rxcomp = on_rxcomp;
	/* UDP/IPv6 checksum (offload byte 13) and IPv6 LSO (byte 15) off in the second */
	fz_dev_bringup(&v->e, 1, 1, i ? 64 : 256, v->mtu, i ? (1u << 5 | 1u << 7) : 0);
	if (!st.log) {
		st.log = malloc(LOG_BYTES);
		st.snaps = malloc(LOG_BYTES);
		rx.log = malloc(RX_LOG);
		FZ_CHECK(st.log && st.snaps && rx.log);
	}
	v->ready = true;
}

/* --- the driver's memory -------------------------------------------------------------- */

static uint32_t ltb_off(unsigned int map)
{
	return map == FZ_LTB2_MAP ? FZ_LTB2_OFF : FZ_LTB1_OFF;
}

static uint32_t ltb_len(unsigned int map)
{
	return map == FZ_LTB2_MAP ? FZ_LTB2_LEN : FZ_LTB1_LEN;
}

static void rec_write(struct fz_in *in, unsigned int map)
{
	uint32_t off = fz_u24(in) % ltb_len(map), n = fz_u16(in);
	uint8_t *base = st.v->e.ltb + ltb_off(map);

	if (n > ltb_len(map) - off)
		n = ltb_len(map) - off;
	fz_bytes(in, base + off, n);
	st.dirty |= st.ncomp < st.nsub;
	rx.overwritten |= rx.nexpect > 0;
}

static void rec_frame(struct fz_in *in, unsigned int map, bool partial)
{
	uint32_t off = fz_u24(in) % ltb_len(map);
	uint8_t kind, pattern;
	uint16_t payload;

	kind = fz_u8(in);
	payload = fz_u16(in);
	pattern = fz_u8(in);
	st.fmap = map;
	st.foff = off;
	st.flen = fz_frame(st.v->e.ltb + ltb_off(map) + off, ltb_len(map) - off,
			   (enum fz_frame_kind)(kind % FZ_KINDS), payload, pattern, partial, NULL,
			   NULL);
	st.dirty |= st.ncomp < st.nsub;
	rx.overwritten |= rx.nexpect > 0;
}

/* --- rx buffers and frames ------------------------------------------------------------ */

/* Valid as the device checks a buffer when it takes it (PROTOCOL.md section 8.6). */
static bool rx_buf_valid(uint8_t map, uint64_t ioba, uint32_t len)
{
	uint64_t base = st.v->e.ltb_ioba + ltb_off(map);

	if (map != FZ_LTB1_MAP && map != FZ_LTB2_MAP)
		return false;
	if (len < st.v->e.rx_buf_size)
		return false;
	return ioba >= base && ioba - base < ltb_len(map) && len <= ltb_len(map) - (ioba - base);
}

static void rec_rxadd(struct fz_in *in, bool raw_len)
{
	struct fz_dev *e = &st.v->e;
	uint8_t map = fz_u8(in);
	uint64_t ioba = e->ltb_ioba + fz_u24(in) % FZ_LTB_REGION;
	uint32_t len = raw_len ? fz_u24(in) : e->rx_buf_size + (uint32_t)(int32_t)(int8_t)fz_u8(in);
	union vnic_subcrq_entry x;

	memset(&x, 0, sizeof(x));
	x.rx_add.first = VNIC_SUBCRQ_VALID;
	vnic_be64_put(&x.rx_add.correlator, 0xadd0000000000000ull | rx.corr);
	vnic_be32_put(&x.rx_add.ioba, (uint32_t)ioba);
	x.rx_add.map_id = map;
	vnic_be24_put(&x.rx_add.len, len & VNIC_RX_ADD_MAX_LEN);
	if (vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, e->rxadd[0], &x) != VNIC_H_SUCCESS)
		return;
	rx.posted = true;
	if (rx_buf_valid(map, ioba, len & VNIC_RX_ADD_MAX_LEN)) {
		struct rx_buf_m *b = &rx.bufs[(rx.head + rx.n++) % RX_BUFS];

		FZ_CHECK(rx.n <= RX_BUFS);
		b->corr = 0xadd0000000000000ull | rx.corr;
		b->ioba = ioba;
		b->len = len;
	}
	rx.corr++;
}

static void rec_inject(struct fz_in *in, bool raw, bool flip)
{
	uint8_t *f = rx.log + rx.log_used;
	size_t room = RX_LOG - rx.log_used;
	uint32_t len, mtu = st.v->mtu;

	if (raw) {
		len = fz_u16(in);
		if (len > room)
			len = (uint32_t)room;
		fz_bytes(in, f, len);
	} else {
		uint8_t kind = fz_u8(in);
		uint16_t payload = fz_u16(in);

		len = fz_frame(f, (uint32_t)(room < 0xffffffffu ? room : 0xffffffffu),
			       (enum fz_frame_kind)(kind % FZ_KINDS), payload, fz_u8(in), false,
			       NULL, NULL);
	}
	if (flip) {
		uint16_t off = fz_u16(in);
		uint8_t x = fz_u8(in);

		if (len)
			f[off % len] ^= x;
	}
	/* what the cable carries: an Ethernet header, at most the MTU behind it */
	if (len < VNIC_ETH_HLEN || len > mtu + VNIC_ETH_HLEN || rx.npending == RX_FRAMES ||
	    rx.nexpect + rx.npending >= RX_FRAMES)
		return;
	if (!fz_dev_inject(&st.v->e, f, len))
		return;
	rx.pending[rx.npending] = (uint32_t)rx.log_used;
	rx.pending_len[rx.npending++] = len;
	rx.log_used += len;
}

/* --- entries -------------------------------------------------------------------------- */

static union vnic_subcrq_entry *add_entry(void)
{
	if (st.nb == BATCH_MAX)
		return NULL;
	st.autoelem[st.nb] = false;
	memset(&st.batch[st.nb], 0, sizeof(st.batch[0]));
	return &st.batch[st.nb++];
}

static void rec_desc(struct fz_in *in)
{
	union vnic_subcrq_entry *x = add_entry();
	uint8_t flags1 = fz_u8(in), nelem, t;
	uint16_t mss = fz_u16(in);
	uint64_t ioba = st.v->e.ltb_ioba + ltb_off(st.fmap) + st.foff;
	uint32_t len = st.flen;
	uint16_t map = (uint16_t)st.fmap;

	nelem = fz_u8(in);
	t = fz_u8(in);
	if (!x)
		return;
	x->tx.first = VNIC_SUBCRQ_VALID;
	x->tx.type = VNIC_TX_DESC;
	x->tx.flags1 = flags1;
	vnic_be16_put(&x->tx.mss, mss);
	x->tx.n_crq_elem = nelem;
	st.autoelem[st.nb - 1] = !nelem;
	x->tx.n_sge = 1;
	if (t & 1)
		x->tx.flags2 = fz_u8(in);
	if (t & 2)
		x->tx.n_sge = fz_u8(in);
	if (t & 4)
		map = fz_u16(in);
	if (t & 8) {
		uint64_t hi = fz_u32(in);

		ioba = st.v->e.ltb_ioba + (hi << 32 | fz_u32(in));
	}
	if (t & 16)
		ioba += (uint64_t)(int64_t)(int16_t)fz_u16(in);
	if (t & 32)
		len += (uint32_t)(int32_t)(int16_t)fz_u16(in);
	if (t & 64)
		len = fz_u32(in);
	vnic_be16_put(&x->tx.dma_reg, map);
	vnic_be64_put(&x->tx.ioba, ioba);
	vnic_be32_put(&x->tx.sge_len, len);
}

enum hdr_change {
	HC_NONE,
	HC_TOTAL,
	HC_L2,
	HC_L3,
	HC_L4,
	HC_EXT_LEN,
	HC_FEWER,
	HC_MORE,
	HC_TYPE,
	HC_FLAG,
	HC_MAX,
};

/* Up to len bytes of src at hdr + n, as far as VNIC_MAX_HDR_BYTES; how many. */
static uint32_t hdr_append(uint8_t *hdr, uint32_t n, const uint8_t *src, uint32_t len)
{
	if (len > VNIC_MAX_HDR_BYTES - n)
		len = VNIC_MAX_HDR_BYTES - n;
	memcpy(hdr + n, src, len);
	return len;
}

/* The requested layers of the frame, concatenated, in header descriptors (PROTOCOL.md 8.2). */
static void rec_hdrs(struct fz_in *in)
{
	uint8_t flag = fz_u8(in) & (VNIC_HDR_DESC_L2 | VNIC_HDR_DESC_L3 | VNIC_HDR_DESC_L4);
	uint8_t change = fz_u8(in) % HC_MAX, val = fz_u8(in);
	const uint8_t *frame = st.v->e.ltb + ltb_off(st.fmap) + st.foff;
	uint8_t hdr[VNIC_MAX_HDR_BYTES];
	union vnic_subcrq_entry *d[1 + VNIC_MAX_HDR_EXT_DESCS + 1];
	uint32_t n = 0, l2 = 0, l3 = 0, l4 = 0, off, k = 0, i;
	struct vnic_hdrs h;

	if (st.flen && vnic_parse_frame(frame, st.flen, &h) == VNIC_PARSE_OK) {
		l2 = h.l2_len;
		l3 = h.l3_len;
		l4 = h.l4_len;
	}
	/* headers longer than descriptors carry (IPv6 extensions) are cut */
	if (flag & VNIC_HDR_DESC_L2)
		n += hdr_append(hdr, n, frame, l2);
	if (flag & VNIC_HDR_DESC_L3)
		n += hdr_append(hdr, n, frame + l2, l3);
	if (flag & VNIC_HDR_DESC_L4)
		n += hdr_append(hdr, n, frame + l2 + l3, l4);
	if (!(d[k] = add_entry()))
		return;
	d[k]->hdr.first = VNIC_SUBCRQ_VALID;
	d[k]->hdr.type = VNIC_HDR_DESC;
	d[k]->hdr.len = (uint8_t)n;
	d[k]->hdr.l2_len = (uint8_t)l2;
	vnic_be16_put(&d[k]->hdr.l3_len, (uint16_t)l3);
	d[k]->hdr.l4_len = (uint8_t)l4;
	d[k]->hdr.flag = flag;
	memcpy(d[k]->hdr.data, hdr, n < VNIC_HDR_DESC_BYTES ? n : VNIC_HDR_DESC_BYTES);
	k++;
	for (off = VNIC_HDR_DESC_BYTES; off < n; off += VNIC_HDR_EXT_BYTES) {
		uint32_t m = n - off < VNIC_HDR_EXT_BYTES ? n - off : VNIC_HDR_EXT_BYTES;

		if (!(d[k] = add_entry()))
			return;
		d[k]->hdr_ext.first = VNIC_SUBCRQ_VALID;
		d[k]->hdr_ext.type = VNIC_HDR_EXT_DESC;
		d[k]->hdr_ext.len = (uint8_t)m;
		memcpy(d[k]->hdr_ext.data, hdr + off, m);
		k++;
	}
	switch ((enum hdr_change)change) {
	case HC_NONE:
		break;
	case HC_TOTAL:
		d[0]->hdr.len += val;
		break;
	case HC_L2:
		d[0]->hdr.l2_len += val;
		break;
	case HC_L3:
		vnic_be16_put(&d[0]->hdr.l3_len, (uint16_t)(l3 + (int8_t)val));
		break;
	case HC_L4:
		d[0]->hdr.l4_len += val;
		break;
	case HC_EXT_LEN:
		d[k - 1]->hdr_ext.len += val; /* the header descriptor's len if it is alone */
		break;
	case HC_FEWER:
		if (k > 1)
			st.nb--;
		break;
	case HC_MORE:
		if ((d[k] = add_entry())) {
			d[k]->hdr_ext.first = VNIC_SUBCRQ_VALID;
			d[k]->hdr_ext.type = VNIC_HDR_EXT_DESC;
			d[k]->hdr_ext.len = val % (VNIC_HDR_EXT_BYTES + 1);
		}
		break;
	case HC_TYPE:
		i = val % k;
		d[i]->generic.type = (uint8_t)(val >> 4 | 0x10);
		break;
	case HC_FLAG:
		d[0]->hdr.flag = val;
		break;
	case HC_MAX:
		break;
	}
}

static bool is_hdr_type(uint8_t type)
{
	return type == VNIC_HDR_DESC || type == VNIC_HDR_EXT_DESC;
}

static void flush(bool indirect)
{
	struct fz_dev *e = &st.v->e;
	unsigned int i, n = st.nb;
	long rc;

	if (!n)
		return;
	st.nb = 0;
	for (i = 0; i < n; i++) {
		union vnic_subcrq_entry *x = &st.batch[i];
		unsigned int j = i + 1;

		if (is_hdr_type(x->generic.type))
			continue;
		/* the correlator (tx descriptor bytes 12..15): a sequence number */
		vnic_be32_put(&x->tx.correlator, st.seq + i);
		if (st.autoelem[i]) {
			while (j < n && is_hdr_type(st.batch[j].generic.type))
				j++;
			x->tx.n_crq_elem = (uint8_t)(j - i);
		}
	}
	if (n == 1 && !indirect) {
		rc = vnic_hv_send_subcrq(e->hv, VNIC_HV_CLIENT, e->txsubm[0], &st.batch[0]);
	} else {
		/* more than the array holds: the hv refuses the count before reading it */
		memcpy(e->ind, st.batch,
		       (size_t)(n < VNIC_MAX_IND_DESCS ? n : VNIC_MAX_IND_DESCS) *
			       sizeof(st.batch[0]));
		rc = vnic_hv_send_subcrq_indirect(e->hv, VNIC_HV_CLIENT, e->txsubm[0], e->ind_ioba,
						  n);
	}
	if (rc != VNIC_H_SUCCESS)
		return;
	for (i = 0; i < n; i++) {
		const union vnic_subcrq_entry *x = &st.batch[i];
		struct submitted *s;

		if (is_hdr_type(x->generic.type))
			continue;
		FZ_CHECK(st.nsub < SUBMIT_MAX);
		s = &st.sub[st.nsub++];
		s->seq = st.seq + i;
		s->type = x->generic.type;
		s->flags1 = x->tx.flags1;
		s->mss = vnic_be16_get(&x->tx.mss);
		s->dma_reg = vnic_be16_get(&x->tx.dma_reg);
		s->ioba = vnic_be64_get(&x->tx.ioba);
		s->len = vnic_be32_get(&x->tx.sge_len);
	}
	st.seq += n;
}

static void link(uint8_t state)
{
	struct vnic_crq m;

	/* what waits is handled while the link is as it was */
	run_dev();
	if (state == VNIC_LINK_DOWN) {
		/* the device forgets every rx buffer, taken or not */
		rx.head = rx.n = 0;
		rx.link_up = false;
	} else {
		rx.link_up = true;
	}
	memset(&m, 0, sizeof(m));
	m.first = VNIC_CRQ_CMD_RSP;
	m.cmd = VNIC_CMD_LOGICAL_LINK_STATE;
	m.link_state.state = state;
	FZ_CHECK(fz_dev_cmd(&st.v->e, &m) == VNIC_RC_SUCCESS);
}

/* --- the checks ----------------------------------------------------------------------- */

/* Per drop reason (device.h, txN_drop_<reason>): the rc docs/PROTOCOL.md section 3 gives it. */
static const struct {
	const char *name;
	uint8_t rc;
} reasons[] = {
	{"bad_type", VNIC_RC_PARAMETER},
	{"bad_n_sge", VNIC_RC_PARAMETER},
	{"bad_n_elem", VNIC_RC_PARAMETER},
	{"hdrs_incomplete", VNIC_RC_PARAMETER},
	{"bad_hdr_desc", VNIC_RC_PARAMETER},
	{"bad_flags", VNIC_RC_PARAMETER},
	{"unsupported", VNIC_RC_UNSUPPORTEDOPTION},
	{"bad_mss", VNIC_RC_PARAMETER},
	{"bad_map_id", VNIC_RC_INVALIDIOBA},
	{"bad_ioba", VNIC_RC_INVALIDIOBA},
	{"bad_len", VNIC_RC_INVALIDLENGTH},
	{"len_past_ltb", VNIC_RC_INVALIDLENGTH},
	{"bad_headers", VNIC_RC_PARAMETER},
	{"hdr_len_mismatch", VNIC_RC_PARAMETER},
	{"missing_hdrs", VNIC_RC_PARAMETER},
	{"gso_failed", VNIC_RC_PARAMETER},
	{"link_down", VNIC_RC_ABORTED},
};

enum { NREASONS = sizeof(reasons) / sizeof(reasons[0]) };

struct ctrs {
	uint64_t packets, lso_packets, lso_segments, drops[NREASONS], drop_mtu;
	uint64_t rx_frames, rx_no_buffer, rx_too_big, rx_link_down;
};

/* Per configuration, as the last input left them: one counter read per input. */
static struct ctrs last[2];

static void ctrs_read(struct ctrs *c)
{
	struct fz_dev *e = &st.v->e;
	struct vnic_cable_stats cs;
	char name[64];

	fz_dev_snap(e);
	c->packets = fz_dev_ctr(e, "tx0_packets");
	c->lso_packets = fz_dev_ctr(e, "tx0_lso_packets");
	c->lso_segments = fz_dev_ctr(e, "tx0_lso_segments");
	for (unsigned int i = 0; i < NREASONS; i++) {
		snprintf(name, sizeof(name), "tx0_drop_%s", reasons[i].name);
		c->drops[i] = fz_dev_ctr(e, name);
	}
	c->rx_frames = fz_dev_ctr(e, "rx0_frames");
	c->rx_no_buffer = fz_dev_ctr(e, "rx0_drop_no_buffer");
	c->rx_too_big = fz_dev_ctr(e, "rx0_drop_too_big");
	c->rx_link_down = fz_dev_ctr(e, "rx_drop_link_down");
	vnic_cable_stats(e->cable, 0, &cs);
	c->drop_mtu = cs.drop_mtu;
}

static const uint8_t *src_of(const struct submitted *s)
{
	uint64_t base = st.v->e.ltb_ioba + ltb_off(s->dma_reg);

	FZ_CHECK(s->dma_reg == FZ_LTB1_MAP || s->dma_reg == FZ_LTB2_MAP);
	FZ_CHECK(s->ioba >= base && s->ioba - base + s->len <= ltb_len(s->dma_reg));
	return st.v->e.ltb + ltb_off(s->dma_reg) + (s->ioba - base);
}

/* Segments the device makes of the superpacket, worked out as the protocol says. */
static int lso_segments(const struct submitted *s, const uint8_t *src)
{
	struct vnic_pkt in;

	memset(&in, 0, sizeof(in));
	in.head = in.data = (uint8_t *)src;
	in.len = in.buf_size = s->len;
	FZ_CHECK(vnic_parse_pkt(&in) == VNIC_PARSE_OK);
	if (in.l4_proto == VNIC_IPPROTO_UDP) {
		in.gso_type = VNIC_GSO_UDP_L4;
	} else {
		in.gso_type = in.l3_proto == VNIC_ETH_P_IP ? VNIC_GSO_TCPV4 : VNIC_GSO_TCPV6;
		if (src[in.l2_len + in.l3_len + 13] & VNIC_TCP_CWR)
			in.gso_type |= VNIC_GSO_TCP_ECN;
	}
	in.gso_size = s->mss;
	return vnic_gso_count(&in);
}

/*
 * The L4 checksum is the device's, always. The IPv4 header checksum is too
 * for segments it builds; on a checksum-offload frame it stays the
 * driver's (the device offers no IPv4 header checksum offload).
 */
static void check_l4(const uint8_t *f, uint32_t len, struct vnic_hdrs *h, bool ip4_ours)
{
	FZ_CHECK(vnic_parse_frame(f, len, h) == VNIC_PARSE_OK);
	FZ_CHECK(h->flags & VNIC_HDRS_F_L4);
	FZ_CHECK(vnic_csum_l4_ok(f, h));
	if (ip4_ours && h->l3_proto == VNIC_ETH_P_IP)
		FZ_CHECK(vnic_csum_ip4_ok(f + h->l3_off, h->l3_len));
}

/* The successes, in order, against the frames, in order. */
static void check_frames(void)
{
	unsigned int f = 0;

	for (unsigned int i = 0; i < st.nsub; i++) {
		const struct submitted *s = &st.sub[i];
		const uint8_t *src, *w;
		struct vnic_hdrs h;
		uint32_t coff;

		if (st.rcs[i])
			continue;
		FZ_CHECK(s->type == VNIC_TX_DESC);
		src = st.snaps + s->snap;
		if (s->flags1 & VNIC_TX_LSO) {
			int n = lso_segments(s, src);

			FZ_CHECK(n >= 1 && f + (unsigned int)n <= st.nframes);
			for (int k = 0; k < n; k++, f++) {
				w = st.log + st.frames[f].off;
				check_l4(w, st.frames[f].len, &h, true);
				FZ_CHECK(st.frames[f].len <= st.v->mtu + h.l2_len);
			}
			continue;
		}
		FZ_CHECK(f < st.nframes && st.frames[f].len == s->len);
		w = st.log + st.frames[f++].off;
		if (!(s->flags1 & VNIC_TX_CHKSUM_OFFLOAD)) {
			FZ_CHECK(!memcmp(w, src, s->len));
			continue;
		}
		/* only the L4 checksum is the device's */
		check_l4(w, s->len, &h, false);
		coff = h.l4_off + (h.l4_proto == VNIC_IPPROTO_TCP ? 16 : 6);
		FZ_CHECK(!memcmp(w, src, coff));
		FZ_CHECK(!memcmp(w + coff + 2, src + coff + 2, s->len - coff - 2));
	}
	FZ_CHECK(f == st.nframes);
}

static void check(const struct ctrs *a, const struct ctrs *b)
{
	uint64_t hist[RC_MAX] = {0}, want[RC_MAX] = {0};
	unsigned int i;

	FZ_CHECK(st.ncomp == st.nsub);
	for (i = 0; i < st.ncomp; i++)
		hist[st.rcs[i]]++;
	want[VNIC_RC_SUCCESS] = b->packets - a->packets;
	for (i = 0; i < NREASONS; i++)
		want[reasons[i].rc] += b->drops[i] - a->drops[i];
	for (i = 0; i < RC_MAX; i++)
		FZ_CHECK(hist[i] == want[i]);
	/* one frame per plain or checksum packet, one per segment of a superpacket */
	FZ_CHECK(st.frames_seen == (b->packets - a->packets) - (b->lso_packets - a->lso_packets) +
					   (b->lso_segments - a->lso_segments));
	FZ_CHECK(b->drop_mtu == a->drop_mtu);
	if (!st.dirty && !st.log_full)
		check_frames();
	/* every frame delivered or dropped as foreseen */
	FZ_CHECK(rx.ngot == rx.nexpect);
	FZ_CHECK(b->rx_frames - a->rx_frames == rx.nexpect);
	FZ_CHECK(b->rx_no_buffer - a->rx_no_buffer == rx.no_buffer);
	FZ_CHECK(b->rx_too_big - a->rx_too_big == rx.too_big);
	FZ_CHECK(b->rx_link_down - a->rx_link_down == rx.link_down);
	rx_check_data();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	unsigned int v = fz_u8(&in) & 1, n;
	bool down = false;
	struct ctrs a, b;

	if (!vars[v].ready) {
		setup(v);
		st.v = &vars[v];
		ctrs_read(&last[v]);
	}
	st.v = &vars[v];
	st.nb = st.nsub = st.ncomp = 0;
	st.nframes = st.frames_seen = 0;
	st.log_used = st.snaps_used = 0;
	st.log_full = st.dirty = false;
	st.fmap = FZ_LTB1_MAP;
	st.foff = st.flen = 0;
	rx.head = rx.n = rx.npending = rx.nexpect = rx.ngot = 0;
	rx.no_buffer = rx.too_big = rx.link_down = 0;
	rx.log_used = 0;
	rx.link_up = true;
	rx.posted = rx.overwritten = false;
	a = last[v];

	for (n = 0; n < MAX_RECORDS && in.left; n++) {
		uint8_t tag = fz_u8(&in);
		unsigned int map = (tag & 16) ? FZ_LTB2_MAP : FZ_LTB1_MAP;

		switch (tag & 15) {
		case 0:
			rec_write(&in, map);
			break;
		case 1:
		case 11:
			rec_frame(&in, map, tag & 32);
			break;
		case 2:
		case 10:
			rec_desc(&in);
			break;
		case 3:
			rec_hdrs(&in);
			break;
		case 4: {
			union vnic_subcrq_entry *x = add_entry();

			if (x) {
				fz_bytes(&in, x->raw, sizeof(x->raw));
				x->first |= VNIC_SUBCRQ_VALID;
			}
			break;
		}
		case 5:
		case 14:
			flush(tag & 16);
			break;
		case 6:
		case 15:
			run_dev();
			break;
		case 7:
			link(VNIC_LINK_DOWN);
			down = tag & 16;
			if (!down)
				link(VNIC_LINK_UP);
			break;
		case 8:
		case 12:
			rec_rxadd(&in, tag & 32);
			break;
		default:
			rec_inject(&in, tag & 16, tag & 32);
			break;
		}
	}
	flush(st.nb > 1);
	run_dev();
	/*
	 * The buffers posted are forgotten, the link up: the next input finds
	 * none (a link-down forgets what is posted then, not what comes after).
	 */
	if (down || rx.posted || rx.n) {
		link(VNIC_LINK_DOWN);
		link(VNIC_LINK_UP);
	}
	ctrs_read(&b);
	check(&a, &b);
	last[v] = b;
	return 0;
}
