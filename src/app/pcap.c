// SPDX-License-Identifier: MIT
/*
 * `vnic link --pcap FILE` and `vnic bench --pcap FILE`: a mirror on the
 * wire (contract in pcap_int.h).
 *
 * The mirror wraps a device's wire, so it sees exactly what crosses it:
 * frames after segmentation and checksum insertion on the way out, frames as
 * the wire delivered them on the way in, whatever the host port or the
 * backing device is. Frames are copied on the device's thread into a
 * single-producer single-consumer ring of fixed slots, one ring per wrapped
 * wire, and a writer thread of its own drains the rings into libpcap's
 * dumper, so the datapath never makes a syscall or takes a lock for the
 * capture. A full ring drops the frame from the capture only (counted), never
 * from the wire; or, lossless, makes the device's thread wait for the writer,
 * which slows that whole side of the link down to the writer's pace.
 *
 * Only snaplen bytes of a frame are copied: the ring then holds more frames
 * and the writer writes fewer bytes, which is what lets a capture of headers
 * keep up with a multi-Gbit/s stream. The record keeps the frame's length.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcap_int.h"

#ifdef VNIC_HAVE_PCAP
#include <pcap/pcap.h>

enum {
	RING_BYTES = 8 << 20,	/* per wrapped wire: 5k whole frames at MTU 1500, 32k of 128 B */
	RING_MIN_SLOTS = 256,
	PEEK_MAX = 256,		/* rx frames remembered between peek and release */
	WRITER_IDLE_NS = 1000000,
	WRITER_BUF = 1 << 20,	/* stdio buffer of the file: one write() per MiB */
	LOSSLESS_NAP_NS = 20000,	/* a waiting producer looks again this often */
};

struct slot_hdr {
	uint64_t ts_ns;		/* vnic_now_ns() at the copy */
	uint32_t len;		/* the frame's length on the wire */
	uint32_t caplen;	/* bytes kept */
};

struct ring {
	_Atomic uint32_t head vnic_cacheline_aligned; /* producer */
	uint64_t dropped;	/* producer's counters (vnic_ctr_*) */
	uint64_t waits;
	uint64_t wait_ns;
	_Atomic uint32_t tail vnic_cacheline_aligned; /* consumer */
	uint32_t mask;
	uint32_t slot_size;	/* header + snaplen, 64-byte multiple */
	uint8_t *mem;
};

struct pcap_wire {
	struct vnic_wire w;		/* what the device is given */
	struct vnic_wire_ops ops;
	struct vnic_irq_ops irq;
	struct vnic_wire *inner;
	struct vnic_pcap *pc;
	bool mirror_tx, mirror_rx;
	unsigned int npeeked;
	struct vnic_pkt *peeked[PEEK_MAX];
	struct ring ring;
};

struct vnic_pcap {
	pcap_t *p;
	pcap_dumper_t *d;
	uint32_t snaplen;
	uint64_t count;			/* frames to write; 0: no limit */
	bool lossless;
	int64_t wall_offset_ns;		/* CLOCK_REALTIME - vnic_now_ns() at open */
	pthread_t writer;
	_Atomic bool stop;
	_Atomic bool done;		/* the writer wrote count frames: producers stop copying */
	bool started;			/* before traffic; then read only */
	bool stopped;			/* the writer has ended (vnic_pcap_stop) */
	_Atomic uint64_t written;	/* the writer's */
	unsigned int nwires;
	struct pcap_wire *wires[VNIC_PCAP_MAX_WIRES];
};

/*
 * Producer side. ring_space reads the consumer's tail with acquire so the
 * consumer's reads of a slot happen before the producer overwrites it;
 * ring_publish stores head with release so a slot's bytes are visible before
 * the consumer can see the slot.
 */
static uint32_t ring_space(struct ring *r, uint32_t head)
{
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);

	return r->mask + 1 - (head - tail);
}

static void ring_publish(struct ring *r, uint32_t head)
{
	atomic_store_explicit(&r->head, head, memory_order_release);
}

/*
 * Consumer side, the mirror image: acquire on head before reading slots,
 * release on tail after reading them.
 */
static uint32_t ring_ready(struct ring *r, uint32_t tail)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) - tail;
}

static void ring_consume(struct ring *r, uint32_t tail)
{
	atomic_store_explicit(&r->tail, tail, memory_order_release);
}

static struct slot_hdr *ring_slot(struct ring *r, uint32_t i)
{
	return (struct slot_hdr *)(void *)(r->mem + (size_t)(i & r->mask) * r->slot_size);
}

/*
 * Lossless: the ring is full, so the producer (a device's thread, and the
 * whole side of the link that runs on it) waits until the writer has made
 * room. It naps rather than spins: on a small machine the writer may need
 * this very core. 0 when the writer will make no more room (the count is
 * reached, or it is stopping): the frame is then left out after all.
 */
static uint32_t ring_wait(struct pcap_wire *pw, uint32_t head)
{
	const struct timespec nap = { 0, LOSSLESS_NAP_NS };
	struct vnic_pcap *pc = pw->pc;
	struct ring *r = &pw->ring;
	uint64_t t0 = vnic_now_ns();
	uint32_t space;

	vnic_ctr_inc(&r->waits);
	while (!(space = ring_space(r, head))) {
		if (!pc->started || atomic_load_explicit(&pc->done, memory_order_relaxed) ||
		    atomic_load_explicit(&pc->stop, memory_order_relaxed))
			break;
		nanosleep(&nap, NULL);
	}
	vnic_ctr_add(&r->wait_ns, vnic_now_ns() - t0);
	return space;
}

/*
 * The wrapper's producer: copy the first snaplen bytes of frames[0..n)
 * into the ring; what does not fit is left out (counted), or waited for.
 */
static void mirror(struct pcap_wire *pw, struct vnic_pkt *const *frames, unsigned int n)
{
	struct vnic_pcap *pc = pw->pc;
	struct ring *r = &pw->ring;
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t space = ring_space(r, head);
	uint32_t snap = pc->snaplen;
	uint64_t now = vnic_now_ns();
	unsigned int i;

	if (atomic_load_explicit(&pc->done, memory_order_relaxed))
		return;
	for (i = 0; i < n; i++, space--) {
		struct slot_hdr *h;
		uint32_t len = frames[i]->len;

		if (vnic_unlikely(!space)) {
			if (!pc->lossless)
				break;
			/* what is copied so far goes to the writer first */
			ring_publish(r, head);
			space = ring_wait(pw, head);
			if (!space)
				break;
		}
		h = ring_slot(r, head++);
		h->ts_ns = now;
		h->len = len;
		h->caplen = len < snap ? len : snap;
		memcpy(h + 1, frames[i]->data, h->caplen);
	}
	if (i < n)
		vnic_ctr_add(&r->dropped, n - i);
	if (i)
		ring_publish(r, head);
}

static struct pcap_wire *to_pw(struct vnic_wire *w)
{
	return vnic_container_of(w, struct pcap_wire, w);
}

static unsigned int pw_tx_reserve(struct vnic_wire *w, struct vnic_pkt **slots, unsigned int n)
{
	struct vnic_wire *in = to_pw(w)->inner;

	return in->ops->tx_reserve(in, slots, n);
}

static void pw_tx_commit(struct vnic_wire *w, struct vnic_pkt **slots, unsigned int n,
			 unsigned int reserved)
{
	struct pcap_wire *pw = to_pw(w);

	if (pw->mirror_tx && n)
		mirror(pw, slots, n);
	pw->inner->ops->tx_commit(pw->inner, slots, n, reserved);
}

static unsigned int pw_rx_peek(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n)
{
	struct pcap_wire *pw = to_pw(w);
	unsigned int got = pw->inner->ops->rx_peek(pw->inner, frames, n);

	/*
	 * A peek always starts at the oldest unreleased frame, so the frames
	 * remembered from an earlier peek are a prefix of these: remember the
	 * latest view and mirror at release, once per frame.
	 */
	if (pw->mirror_rx) {
		pw->npeeked = got < PEEK_MAX ? got : PEEK_MAX;
		memcpy(pw->peeked, frames, pw->npeeked * sizeof(frames[0]));
	}
	return got;
}

static void pw_rx_release(struct vnic_wire *w, unsigned int n)
{
	struct pcap_wire *pw = to_pw(w);

	if (pw->mirror_rx && n) {
		unsigned int m = n < pw->npeeked ? n : pw->npeeked;

		mirror(pw, pw->peeked, m);
		memmove(pw->peeked, pw->peeked + m, (pw->npeeked - m) * sizeof(pw->peeked[0]));
		pw->npeeked -= m;
	}
	pw->inner->ops->rx_release(pw->inner, n);
}

static uint64_t pw_rx_next_ns(struct vnic_wire *w)
{
	struct vnic_wire *in = to_pw(w)->inner;

	return in->ops->rx_next_ns ? in->ops->rx_next_ns(in) : 0;
}

/* The device arms the wrapper with irq_ctx = the wrapper: pass on to the inner wire. */
static void pw_irq_enable(void *ctx)
{
	struct vnic_wire *in = to_pw(ctx)->inner;

	in->ops->rx_irq->enable(in);
}

static void pw_irq_disable(void *ctx)
{
	struct vnic_wire *in = to_pw(ctx)->inner;

	in->ops->rx_irq->disable(in);
}

static bool pw_irq_pending(void *ctx)
{
	struct vnic_wire *in = to_pw(ctx)->inner;

	return in->ops->rx_irq->pending(in);
}

/* The inner wire's notification, to whoever the device set on the wrapper. */
static void pw_notify(void *ctx)
{
	struct pcap_wire *pw = ctx;

	if (pw->w.notify)
		pw->w.notify(pw->w.notify_ctx);
}

static uint32_t round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

struct vnic_wire *vnic_pcap_wrap(struct vnic_pcap *pc, struct vnic_wire *wire, bool mirror_tx,
				 bool mirror_rx)
{
	struct pcap_wire *pw;
	uint32_t slots;

	if (pc->nwires >= VNIC_PCAP_MAX_WIRES)
		return NULL;
	pw = aligned_alloc(VNIC_CACHELINE, (sizeof(*pw) + VNIC_CACHELINE - 1) & ~(size_t)63);
	if (!pw)
		return NULL;
	memset(pw, 0, sizeof(*pw));
	pw->inner = wire;
	pw->pc = pc;
	pw->mirror_tx = mirror_tx;
	pw->mirror_rx = mirror_rx;
	pw->ring.slot_size = (uint32_t)(sizeof(struct slot_hdr) + pc->snaplen + 63) & ~63u;
	slots = RING_BYTES / pw->ring.slot_size;
	slots = slots < RING_MIN_SLOTS ? RING_MIN_SLOTS : round_up_pow2(slots + 1) / 2;
	pw->ring.mask = slots - 1;
	pw->ring.mem = aligned_alloc(VNIC_CACHELINE, (size_t)slots * pw->ring.slot_size);
	if (!pw->ring.mem) {
		free(pw);
		return NULL;
	}
	pw->ops = *wire->ops;
	pw->ops.tx_reserve = pw_tx_reserve;
	pw->ops.tx_commit = pw_tx_commit;
	pw->ops.rx_peek = pw_rx_peek;
	pw->ops.rx_release = pw_rx_release;
	pw->ops.rx_next_ns = pw_rx_next_ns;
	/* a mirror keeps MTU frames on the wire: no cable tso through it (the ops take the cable's end) */
	pw->ops.tx_gso_max = NULL;
	pw->ops.rx_gso_take = NULL;
	if (wire->ops->rx_irq) {
		pw->irq.enable = pw_irq_enable;
		pw->irq.disable = pw_irq_disable;
		pw->irq.pending = pw_irq_pending;
		pw->ops.rx_irq = &pw->irq;
	}
	pw->w.ops = &pw->ops;
	pw->w.priv = wire->priv;
	pw->w.mtu = wire->mtu;
	pw->w.frame_size = wire->frame_size;
	pw->w.gso_max_size = wire->gso_max_size;
	wire->notify = pw_notify;
	wire->notify_ctx = pw;
	pc->wires[pc->nwires++] = pw;
	return &pw->w;
}

/*
 * Writes the oldest ready frame of all rings (each ring is in time order, so
 * the heads are enough). Returns false when every ring is empty.
 */
static bool write_one(struct vnic_pcap *pc)
{
	struct pcap_wire *best = NULL;
	struct slot_hdr *bh = NULL;
	struct pcap_pkthdr ph;
	uint64_t ts;

	for (unsigned int i = 0; i < pc->nwires; i++) {
		struct ring *r = &pc->wires[i]->ring;
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		struct slot_hdr *h;

		if (!ring_ready(r, tail))
			continue;
		h = ring_slot(r, tail);
		if (!bh || h->ts_ns < bh->ts_ns) {
			best = pc->wires[i];
			bh = h;
		}
	}
	if (!best)
		return false;
	/* Nanosecond pcap: libpcap stores tv_usec as nanoseconds for this precision. */
	ts = (uint64_t)((int64_t)bh->ts_ns + pc->wall_offset_ns);
	ph.ts.tv_sec = (time_t)(ts / 1000000000u);
	ph.ts.tv_usec = (suseconds_t)(ts % 1000000000u);
	ph.caplen = bh->caplen;
	ph.len = bh->len;
	/* Past the count, frames still on their way are consumed unwritten. */
	if (!atomic_load_explicit(&pc->done, memory_order_relaxed)) {
		uint64_t w = atomic_load_explicit(&pc->written, memory_order_relaxed) + 1;

		pcap_dump((u_char *)pc->d, &ph, (const u_char *)(bh + 1));
		atomic_store_explicit(&pc->written, w, memory_order_relaxed);
		if (pc->count && w >= pc->count) {
			atomic_store_explicit(&pc->done, true, memory_order_relaxed);
			pcap_dump_flush(pc->d);
		}
	}
	ring_consume(&best->ring, atomic_load_explicit(&best->ring.tail, memory_order_relaxed) + 1);
	return true;
}

static void *writer_thread(void *arg)
{
	struct vnic_pcap *pc = arg;
	struct timespec idle = { 0, WRITER_IDLE_NS };

	for (;;) {
		/* Read stop before draining: frames published before it are all written. */
		bool stopping = atomic_load_explicit(&pc->stop, memory_order_acquire);
		unsigned int n = 0;

		while (write_one(pc))
			n++;
		if (stopping)
			break;
		if (!n) {
			pcap_dump_flush(pc->d);
			nanosleep(&idle, NULL);
		}
	}
	pcap_dump_flush(pc->d);
	return NULL;
}

bool vnic_pcap_supported(void)
{
	return true;
}

int vnic_pcap_open(struct vnic_pcap **out, FILE *f, uint32_t snaplen,
		   const struct vnic_pcap_opts *o, char *errbuf)
{
	struct vnic_pcap *pc;
	struct timespec rt;
	int err;

	errbuf[0] = '\0';
	pc = calloc(1, sizeof(*pc));
	if (!pc) {
		err = -ENOMEM;
		goto err_fclose;
	}
	pc->snaplen = snaplen;
	pc->count = o->count;
	pc->lossless = o->lossless;
	pc->p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
						     PCAP_TSTAMP_PRECISION_NANO);
	if (!pc->p) {
		err = -ENOMEM;
		goto err_free;
	}
	/* Before the first write: the file header goes through it too. */
	setvbuf(f, NULL, _IOFBF, WRITER_BUF);
	pc->d = pcap_dump_fopen(pc->p, f);
	if (!pc->d) {
		snprintf(errbuf, 256, "%s", pcap_geterr(pc->p));
		err = -EIO;
		goto err_close;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	pc->wall_offset_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - (int64_t)vnic_now_ns();
	*out = pc;
	return 0;

err_close:
	pcap_close(pc->p);
err_free:
	free(pc);
err_fclose:
	fclose(f);
	return err;
}

int vnic_pcap_start(struct vnic_pcap *pc)
{
	int err = -pthread_create(&pc->writer, NULL, writer_thread, pc);

	pc->started = !err;
	return err;
}

void vnic_pcap_stats(const struct vnic_pcap *pc, struct vnic_pcap_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < pc->nwires; i++) {
		const struct ring *r = &pc->wires[i]->ring;

		st->left_out += vnic_ctr_read(&r->dropped);
		st->waits += vnic_ctr_read(&r->waits);
		st->wait_ns += vnic_ctr_read(&r->wait_ns);
	}
	st->written = atomic_load_explicit(&((struct vnic_pcap *)pc)->written,
					   memory_order_relaxed);
}

void vnic_pcap_stop(struct vnic_pcap *pc)
{
	if (!pc || !pc->started || pc->stopped)
		return;
	atomic_store_explicit(&pc->stop, true, memory_order_release);
	pthread_join(pc->writer, NULL);
	pc->stopped = true;
}

void vnic_pcap_close(struct vnic_pcap *pc)
{
	if (!pc)
		return;
	vnic_pcap_stop(pc);
	pcap_dump_close(pc->d);
	pcap_close(pc->p);
	/* The inner wires are not touched: they may be gone already. */
	for (unsigned int i = 0; i < pc->nwires; i++) {
		free(pc->wires[i]->ring.mem);
		free(pc->wires[i]);
	}
	free(pc);
}

#else /* !VNIC_HAVE_PCAP: built without libpcap-dev */

bool vnic_pcap_supported(void)
{
	return false;
}

int vnic_pcap_open(struct vnic_pcap **pc, FILE *f, uint32_t snaplen,
		   const struct vnic_pcap_opts *o, char *errbuf)
{
	(void)pc;
	(void)snaplen;
	(void)o;
	fclose(f);
	snprintf(errbuf, 256, "vnic was built without libpcap (apt-get install libpcap-dev, rebuild)");
	return -ENOTSUP;
}

int vnic_pcap_start(struct vnic_pcap *pc)
{
	(void)pc;
	return -ENOTSUP;
}

struct vnic_wire *vnic_pcap_wrap(struct vnic_pcap *pc, struct vnic_wire *wire, bool mirror_tx,
				 bool mirror_rx)
{
	(void)pc;
	(void)wire;
	(void)mirror_tx;
	(void)mirror_rx;
	return NULL;
}

void vnic_pcap_stats(const struct vnic_pcap *pc, struct vnic_pcap_stats *st)
{
	(void)pc;
	memset(st, 0, sizeof(*st));
}

void vnic_pcap_stop(struct vnic_pcap *pc)
{
	(void)pc;
}

void vnic_pcap_close(struct vnic_pcap *pc)
{
	(void)pc;
}

#endif /* VNIC_HAVE_PCAP */

uint32_t vnic_pcap_snaplen(const struct vnic_pcap_opts *o, uint32_t frame_size)
{
	return o->snaplen && o->snaplen < frame_size ? o->snaplen : frame_size;
}

unsigned int vnic_pcap_counters(const struct vnic_pcap *pc, struct vnic_counter *out,
				unsigned int max)
{
	static const char *const names[] = { "written", "left_out", "waits", "wait_us" };
	struct vnic_pcap_stats st;
	uint64_t v[4];
	unsigned int n = 0;

	vnic_pcap_stats(pc, &st);
	v[0] = st.written;
	v[1] = st.left_out;
	v[2] = st.waits;
	v[3] = st.wait_ns / 1000;
	for (unsigned int i = 0; i < 4; i++)
		vnic_counter_put(out, max, &n, names[i], v[i]);
	return n;
}
