// SPDX-License-Identifier: MIT
/*
 * A struct vnic_wire on a socket, framed as QEMU's stream and dgram network
 * backends frame it (contract in port.h, "Socket wire"; the spec string is
 * sockwire_spec.c's).
 *
 * One thread: the wire's cpu is the device's, so rx, tx, the irq ops and the
 * connection's life all run on it and share the socket without a lock.
 *
 * The data socket keeps one fd number for the wire's life, because a cpu
 * registers its fds before it starts and never takes a new one: a new
 * connection is dup3()'d onto that number, and a lost one is replaced by a
 * placeholder (an unconnected unix socket, never watched: recv and send on
 * it fail). The fd is taken out of the epoll set (watch 0) before every
 * swap, so no registration outlives the file it was made for.
 *
 * rx, stream: one recv fills the free tail of a 256 KiB buffer; rx_peek
 * walks the length fields from the first unreleased frame and hands out the
 * complete frames as packets wrapping the buffer (the device copies each
 * into a posted buffer anyway). The bytes of a frame cut by the end of a
 * read stay where they are, and the buffer is only compacted (the cut frame
 * moved to its start) at the beginning of a peek, when no frame is handed
 * out, and only when that frame could not complete in the room left. A bad
 * frame is dropped and counted only while it leads, so it is counted once
 * however often a peek looks at it; a peek stops in front of one.
 *
 * rx, dgram: recvmmsg into 32 buffers of 64 KiB; a datagram the kernel
 * merged (UDP_GRO) is split at its segment size, and every frame is checked
 * on its own. tx, dgram: runs of equal frames go as UDP_SEGMENT messages,
 * 64 messages per sendmmsg.
 *
 * tx: every slot is free between calls: a commit sends at once or drops.
 * A stream writes the length field into the 4 bytes of headroom in front of
 * each frame, so one iovec per frame; a short write keeps the rest of its
 * one frame in `pend` (the rest of the batch is dropped as full), and that
 * rest goes out before anything else, when the socket is writable again
 * (EPOLLOUT runs the poller) or at the next commit. QEMU's sender finishes
 * a frame the same way (it remembers how far it got), so either end may be
 * QEMU.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "port.h"

enum {
	SW_RBUF = 256 << 10,		 /* stream receive buffer: one recv fills it */
	SW_RX_SHELLS = 64,		 /* frames one peek may return */
	SW_TX_SLOTS = VNIC_GSO_MAX_SEGS, /* a device reserves up to a superpacket's segments */
	SW_TX_BATCH = 64,		 /* frames per sendmsg / sendmmsg */
	SW_HEADROOM = VNIC_SOCKWIRE_LEN_BYTES,
	SW_BACKLOG = 8,
	SW_MIN_MTU = 68,
	/* socket buffers for unix streams and UDP: a burst of superpackets' segments */
	SW_SOCKBUF = 4 << 20,
	SW_DG_BUFS = 32,   /* datagrams per recvmmsg */
	SW_DG_BUF = 65536, /* room for a GRO'd datagram: 64 KiB of UDP payload at most */
	SW_DG_SEGS = 64,   /* frames a GRO'd datagram holds at most (the kernel merges 64) */
	SW_DG_FRAMES = SW_DG_BUFS * SW_DG_SEGS,
	SW_GSO_SEGS = 64,     /* frames per GSO send (UDP_MAX_SEGMENTS of older kernels) */
	SW_GSO_BYTES = 65000, /* payload per GSO send: below IPv4's largest datagram */
};

/* A UDP_SEGMENT or UDP_GRO control message: one int (GRO) or one u16 (GSO). */
union sw_cmsg {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

struct sw_dframe {
	uint8_t *data;
	uint32_t len;
};

static_assert(SW_RBUF >= 2 * (VNIC_SOCKWIRE_LEN_BYTES + VNIC_SOCKWIRE_MAX_LEN),
	      "a cut frame of the largest length must fit after compaction, with room to read");

enum sw_state {
	SW_DOWN,       /* no connection: a client waits for its retry, a server listens */
	SW_CONNECTING, /* a client's connect in progress */
	SW_UP,	       /* a peer (dgram: always) */
};

struct sw_rx_stats {
	uint64_t frames, bytes, drop_too_long, drop_runt, drop_zero_len, drop_bad_len,
		drop_eof_mid_frame, broken_streams, errors, syscalls, notifies;
};

struct sw_tx_stats {
	uint64_t frames, bytes, drop_mtu, drop_no_peer, drop_full, drop_error, syscalls,
		short_writes, full;
};

struct sw_conn_stats {
	uint64_t connects, reconnects, connect_errors, disconnects, connected;
};

struct sw_wire {
	struct vnic_wire wire;
	struct vnic_cpu *cpu;
	enum vnic_sockwire_kind kind;
	bool stream;
	bool server;
	int fd;	   /* the data socket's number, for the wire's life */
	int lfd;   /* a server's listening socket, or -1 */
	int spare; /* the placeholder dup'ed onto fd while there is no connection */
	struct sockaddr_storage addr; /* a client's peer, a server's own */
	socklen_t addrlen;
	char path[VNIC_SOCKWIRE_PATH_MAX]; /* a unix server's socket file */
	dev_t path_dev;
	ino_t path_ino;

	/* the connection and the notification: cpu's thread */
	struct vnic_poller poller vnic_cacheline_aligned;
	enum sw_state state;
	bool ever_up;
	bool armed;
	uint32_t watching, lwatching;
	uint64_t backoff_ns;
	uint64_t retry_ns; /* a client's next attempt */
	struct sw_conn_stats conn;
	char name[32];

	/* rx */
	uint8_t *rbuf; /* stream: the receive buffer; dgram: the slots */
	uint32_t rd;   /* stream: the first unreleased frame's length field */
	uint32_t wr;   /* stream: the end of what was read */
	uint32_t skip; /* stream: bytes of a too-long frame still to come */
	bool rx_more;  /* the last read filled what it was given: more may wait */
	unsigned int peeked;
	unsigned int dn, dcur; /* dgram: good frames read, and released */
	bool gso;	       /* dgram: equal frames leave as one UDP_SEGMENT send */
	struct sw_rx_stats rx;
	uint32_t ends[SW_RX_SHELLS]; /* stream: where each peeked frame ends */
	struct vnic_pkt shells[SW_RX_SHELLS];
	struct sw_dframe *dfr; /* dgram: the good frames of the last read, in order */
	struct mmsghdr rmsgs[SW_DG_BUFS];
	struct iovec riovs[SW_DG_BUFS];
	union sw_cmsg rctl[SW_DG_BUFS];

	/* tx */
	struct vnic_pkt_pool pool vnic_cacheline_aligned;
	struct vnic_pkt *slots[SW_TX_SLOTS];
	unsigned int reserved;
	uint8_t *pend; /* stream: the rest of a frame a short write left */
	uint32_t pend_off, pend_len;
	struct sw_tx_stats tx;
	uint32_t flen[SW_TX_BATCH]; /* stream: bytes of each frame of a batch, with its length */
	uint8_t hdrs[SW_TX_BATCH][VNIC_SOCKWIRE_LEN_BYTES]; /* when a frame has no headroom */
	struct iovec iovs[2 * SW_TX_BATCH];
	struct mmsghdr msgs[SW_TX_BATCH];
	unsigned int mframes[SW_TX_BATCH]; /* dgram: frames in each message */
	union sw_cmsg tctl[SW_TX_BATCH];
};

static struct sw_wire *to_sw(struct vnic_wire *w)
{
	return vnic_container_of(w, struct sw_wire, wire);
}

/* Everything runs on the device's cpu: checked where a cpu runs us at all. */
static void on_our_cpu(const struct sw_wire *s)
{
	assert(!vnic_cpu_self() || vnic_cpu_self() == s->cpu);
	(void)s;
}

static uint32_t be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---- what the fds are watched for ------------------------------------------------- */

/*
 * Level-triggered (core.h, "fd sources"): the data socket while connecting
 * (EPOLLOUT: the connect finished), while the receiver sleeps (EPOLLIN), and
 * while a short write's rest waits (EPOLLOUT); the listener while nobody is
 * connected. Not watched, an fd is out of the epoll set.
 */
static void watch(struct sw_wire *s)
{
	uint32_t ev = 0, lev = 0;

	if (s->state == SW_CONNECTING)
		ev = EPOLLOUT;
	else if (s->state == SW_UP)
		ev = (s->armed ? EPOLLIN : 0) | (s->pend_len ? EPOLLOUT : 0);
	if (s->lfd >= 0 && s->state == SW_DOWN)
		lev = EPOLLIN;
	if (ev != s->watching && vnic_cpu_mod_fd(s->cpu, s->fd, ev) == 0)
		s->watching = ev;
	if (s->lfd >= 0 && lev != s->lwatching && vnic_cpu_mod_fd(s->cpu, s->lfd, lev) == 0)
		s->lwatching = lev;
}

static void unwatch_fd(struct sw_wire *s)
{
	if (s->watching && vnic_cpu_mod_fd(s->cpu, s->fd, 0) == 0)
		s->watching = 0;
}

/* ---- the connection ----------------------------------------------------------------- */

/* Puts sock (ours from here) at the data socket's number. */
static int swap_in(struct sw_wire *s, int sock)
{
	int err = 0;

	unwatch_fd(s);
	if (dup3(sock, s->fd, O_CLOEXEC) < 0)
		err = -errno;
	close(sock);
	return err;
}

/* The connection goes; the placeholder takes its number (and closes it). */
static void swap_out(struct sw_wire *s)
{
	unwatch_fd(s);
	if (dup3(s->spare, s->fd, O_CLOEXEC) < 0)
		shutdown(s->fd, SHUT_RDWR); /* EMFILE cannot happen here; never leave it open */
}

static void retry_later(struct sw_wire *s)
{
	s->retry_ns = vnic_now_ns() + s->backoff_ns;
	vnic_poller_set_timer(&s->poller, s->retry_ns);
	s->backoff_ns *= 2;
	if (s->backoff_ns > VNIC_SOCKWIRE_BACKOFF_MAX_NS)
		s->backoff_ns = VNIC_SOCKWIRE_BACKOFF_MAX_NS;
}

static void conn_up(struct sw_wire *s)
{
	s->state = SW_UP;
	vnic_ctr_inc(&s->conn.connects);
	if (s->ever_up)
		vnic_ctr_inc(&s->conn.reconnects);
	s->ever_up = true;
	vnic_ctr_set(&s->conn.connected, 1);
	s->backoff_ns = VNIC_SOCKWIRE_BACKOFF_MIN_NS;
	/* data may have come with the connection: the next peek reads */
	s->rx_more = true;
	watch(s);
}

static void connect_failed(struct sw_wire *s)
{
	vnic_ctr_inc(&s->conn.connect_errors);
	swap_out(s);
	s->state = SW_DOWN;
	retry_later(s);
	watch(s);
}

static void nodelay(struct sw_wire *s, int sock)
{
	int one = 1;

	/* frames are written whole, in batches: Nagle would only hold back the last */
	if (s->kind == VNIC_SOCKWIRE_STREAM_TCP)
		setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void bufsize(int sock)
{
	int v = SW_SOCKBUF;

	/* past rmem_max/wmem_max only with CAP_NET_ADMIN: else what the limit allows */
	if (setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)))
		setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	if (setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

static void connect_start(struct sw_wire *s)
{
	int sock = socket(s->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (sock < 0 || swap_in(s, sock)) {
		vnic_ctr_inc(&s->conn.connect_errors);
		retry_later(s);
		return;
	}
	nodelay(s, s->fd);
	if (s->kind == VNIC_SOCKWIRE_STREAM_UNIX)
		bufsize(s->fd);
	if (connect(s->fd, (struct sockaddr *)&s->addr, s->addrlen) == 0) {
		conn_up(s);
	} else if (errno == EINPROGRESS) {
		s->state = SW_CONNECTING;
		watch(s);
	} else {
		connect_failed(s);
	}
}

/* The poller ran while connecting: done (either way), or not yet. */
static void connect_check(struct sw_wire *s)
{
	struct pollfd p = {.fd = s->fd, .events = POLLOUT};
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, 0) != 1)
		return;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		connect_failed(s);
	else
		conn_up(s);
}

static void accept_one(struct sw_wire *s)
{
	int sock = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (sock < 0)
		return; /* EAGAIN, or a peer that left before we took it */
	nodelay(s, sock);
	if (s->kind == VNIC_SOCKWIRE_STREAM_UNIX)
		bufsize(sock);
	if (swap_in(s, sock)) {
		vnic_ctr_inc(&s->conn.connect_errors);
		return;
	}
	conn_up(s);
}

/*
 * The stream ended (EOF, an error, a broken frame) while bytes of it are
 * still in the buffer: the complete frames stay to be delivered, whatever
 * follows the last of them is cut. Counted here, once, with the reason.
 */
static bool cut_tail(struct sw_wire *s)
{
	uint32_t at = s->rd;
	bool broken = false;

	if (s->skip) {
		vnic_ctr_inc(&s->rx.drop_eof_mid_frame);
		s->skip = 0;
		broken = true;
	}
	while (at < s->wr) {
		uint32_t have = s->wr - at, len;

		if (have < VNIC_SOCKWIRE_LEN_BYTES) {
			vnic_ctr_inc(&s->rx.drop_eof_mid_frame);
			broken = true;
			break;
		}
		len = be32_get(s->rbuf + at);
		if (!len || len > VNIC_SOCKWIRE_MAX_LEN) {
			vnic_ctr_inc(len ? &s->rx.drop_bad_len : &s->rx.drop_zero_len);
			broken = true;
			break;
		}
		if (have - VNIC_SOCKWIRE_LEN_BYTES < len) {
			vnic_ctr_inc(&s->rx.drop_eof_mid_frame);
			broken = true;
			break;
		}
		at += VNIC_SOCKWIRE_LEN_BYTES + len;
	}
	s->wr = at;
	return broken;
}

/* The connection is over: count why, keep the whole frames, and start again. */
static void conn_down(struct sw_wire *s, bool broken)
{
	if (s->state != SW_UP)
		return;
	if (s->stream && cut_tail(s))
		broken = true;
	if (broken)
		vnic_ctr_inc(&s->rx.broken_streams);
	swap_out(s);
	s->state = SW_DOWN;
	s->pend_len = 0;
	s->rx_more = false;
	vnic_ctr_inc(&s->conn.disconnects);
	vnic_ctr_set(&s->conn.connected, 0);
	if (s->lfd < 0) {
		s->backoff_ns = VNIC_SOCKWIRE_BACKOFF_MIN_NS;
		retry_later(s);
	}
	watch(s);
}

/* ---- rx, stream ------------------------------------------------------------------- */

enum fr {
	FR_OK,
	FR_SHORT, /* not all there yet */
	FR_RUNT,
	FR_TOO_LONG, /* known from its length field alone */
	FR_ZERO,
	FR_BAD_LEN,
};

/* What the length field at `at` announces; *len its value. */
static enum fr frame_at(const struct sw_wire *s, uint32_t at, uint32_t *len)
{
	uint32_t have = s->wr - at, l;

	if (have < VNIC_SOCKWIRE_LEN_BYTES)
		return FR_SHORT;
	l = be32_get(s->rbuf + at);
	*len = l;
	if (vnic_unlikely(!l))
		return FR_ZERO;
	if (vnic_unlikely(l > VNIC_SOCKWIRE_MAX_LEN))
		return FR_BAD_LEN;
	if (vnic_unlikely(l > s->wire.frame_size))
		return FR_TOO_LONG;
	if (have - VNIC_SOCKWIRE_LEN_BYTES < l)
		return FR_SHORT;
	return vnic_unlikely(l < VNIC_ETH_HLEN) ? FR_RUNT : FR_OK;
}

static void empty_rbuf(struct sw_wire *s)
{
	s->rd = s->wr = 0;
}

/* Bytes just read that belong to a too-long frame being skipped. */
static void skip_read(struct sw_wire *s)
{
	uint32_t n = s->wr - s->rd;

	if (n > s->skip)
		n = s->skip;
	s->rd += n;
	s->skip -= n;
	if (s->rd == s->wr)
		empty_rbuf(s);
}

/* The leading frame is bad: counted and gone (for a broken stream, the connection too). */
static void drop_lead(struct sw_wire *s, enum fr why, uint32_t len)
{
	uint32_t have = s->wr - s->rd - VNIC_SOCKWIRE_LEN_BYTES;

	switch (why) {
	case FR_RUNT:
		vnic_ctr_inc(&s->rx.drop_runt);
		s->rd += VNIC_SOCKWIRE_LEN_BYTES + len;
		break;
	case FR_TOO_LONG:
		vnic_ctr_inc(&s->rx.drop_too_long);
		if (have >= len) {
			s->rd += VNIC_SOCKWIRE_LEN_BYTES + len;
		} else {
			/* the framing holds: skip its bytes as they come */
			s->skip = len - have;
			empty_rbuf(s);
		}
		break;
	default:
		vnic_ctr_inc(why == FR_ZERO ? &s->rx.drop_zero_len : &s->rx.drop_bad_len);
		empty_rbuf(s);
		conn_down(s, true);
		break;
	}
	if (s->rd == s->wr)
		empty_rbuf(s);
}

/* One recv into the free tail. false: nothing more now (EAGAIN, no room, gone). */
static bool stream_read(struct sw_wire *s)
{
	uint32_t room = SW_RBUF - s->wr;
	ssize_t r;

	if (s->state != SW_UP) {
		s->rx_more = false;
		return false;
	}
	if (!room) {
		s->rx_more = true;
		return false;
	}
	r = recv(s->fd, s->rbuf + s->wr, room, MSG_DONTWAIT);
	vnic_ctr_inc(&s->rx.syscalls);
	if (r > 0) {
		s->wr += (uint32_t)r;
		s->rx_more = (uint32_t)r == room;
		if (s->skip)
			skip_read(s);
		return true;
	}
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		s->rx_more = errno == EINTR;
		return s->rx_more;
	}
	if (r < 0)
		vnic_ctr_inc(&s->rx.errors);
	conn_down(s, false); /* the peer's EOF, or a reset */
	return false;
}

/*
 * At the start of a peek, nothing handed out: an empty buffer starts over,
 * and a leading frame that could not complete in the room left moves to
 * the start (at most one frame of bytes).
 */
static void compact(struct sw_wire *s)
{
	uint32_t len;

	if (s->rd == s->wr) {
		empty_rbuf(s);
		return;
	}
	if (!s->rd || SW_RBUF - s->rd >= VNIC_SOCKWIRE_LEN_BYTES + VNIC_SOCKWIRE_MAX_LEN ||
	    frame_at(s, s->rd, &len) != FR_SHORT)
		return;
	memmove(s->rbuf, s->rbuf + s->rd, s->wr - s->rd);
	s->wr -= s->rd;
	s->rd = 0;
}

static void shell_set(struct vnic_pkt *p, uint8_t *data, uint32_t len)
{
	memset(p, 0, sizeof(*p));
	p->head = data;
	p->data = data;
	p->len = len;
	p->buf_size = len;
}

static unsigned int stream_peek(struct sw_wire *s, struct vnic_pkt **frames, unsigned int n)
{
	uint32_t at, len = 0;
	unsigned int got = 0;

	compact(s);
	at = s->rd;
	for (;;) {
		while (got < n) {
			enum fr why = frame_at(s, at, &len);

			if (vnic_likely(why == FR_OK)) {
				shell_set(&s->shells[got], s->rbuf + at + VNIC_SOCKWIRE_LEN_BYTES,
					  len);
				at += VNIC_SOCKWIRE_LEN_BYTES + len;
				s->ends[got] = at;
				frames[got] = &s->shells[got];
				got++;
				continue;
			}
			if (why == FR_SHORT)
				break;
			/* a bad frame behind good ones waits until it leads */
			if (got)
				goto out;
			drop_lead(s, why, len);
			at = s->rd;
		}
		if (got == n || !stream_read(s))
			break;
		/* nothing handed out yet: a skip may have moved (or emptied) the start */
		if (!got)
			at = s->rd;
	}
out:
	s->peeked = got;
	return got;
}

static void stream_release(struct sw_wire *s, unsigned int n)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < n; i++)
		bytes += s->shells[i].len;
	if (n) {
		s->rd = s->ends[n - 1];
		if (s->rd == s->wr)
			empty_rbuf(s);
	}
	vnic_ctr_add(&s->rx.frames, n);
	vnic_ctr_add(&s->rx.bytes, bytes);
}

/* ---- rx, dgram -------------------------------------------------------------------- */

/* The segment size of a datagram the kernel merged (UDP_GRO), or 0. */
static uint32_t gro_size(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		int v;

		if (c->cmsg_level != SOL_UDP || c->cmsg_type != UDP_GRO ||
		    c->cmsg_len < CMSG_LEN(sizeof(v)))
			continue;
		memcpy(&v, CMSG_DATA(c), sizeof(v));
		return v > 0 ? (uint32_t)v : 0;
	}
	return 0;
}

/*
 * Datagram i into frames: one, or with UDP_GRO the equal segments it was
 * merged from (the last may be shorter), each checked on its own.
 */
static void dgram_split(struct sw_wire *s, unsigned int i)
{
	struct mmsghdr *m = &s->rmsgs[i];
	uint8_t *p = s->riovs[i].iov_base;
	uint32_t len = m->msg_len, seg = gro_size(&m->msg_hdr);
	unsigned int kept = 0;

	if (vnic_unlikely(m->msg_hdr.msg_flags & MSG_TRUNC)) {
		vnic_ctr_inc(&s->rx.drop_too_long);
		return;
	}
	if (!seg || seg > len)
		seg = len;
	for (uint32_t off = 0; off < len; off += seg) {
		uint32_t fl = len - off < seg ? len - off : seg;

		if (vnic_unlikely(fl > s->wire.frame_size)) {
			vnic_ctr_inc(&s->rx.drop_too_long);
		} else if (vnic_unlikely(fl < VNIC_ETH_HLEN)) {
			vnic_ctr_inc(&s->rx.drop_runt);
		} else if (vnic_unlikely(kept == SW_DG_SEGS)) {
			/* more than the kernel ever merges: not ours to guess at */
			vnic_ctr_inc(&s->rx.errors);
		} else {
			s->dfr[s->dn].data = p + off;
			s->dfr[s->dn].len = fl;
			s->dn++;
			kept++;
		}
	}
}

/* One recvmmsg into every buffer; the good frames are listed in dfr[]. */
static void dgram_read(struct sw_wire *s)
{
	int r;

	s->dn = s->dcur = 0;
	for (unsigned int i = 0; i < SW_DG_BUFS; i++) {
		struct msghdr *mh = &s->rmsgs[i].msg_hdr;

		mh->msg_flags = 0;
		mh->msg_control = s->rctl[i].buf;
		mh->msg_controllen = sizeof(s->rctl[i].buf);
	}
	do {
		r = recvmmsg(s->fd, s->rmsgs, SW_DG_BUFS, MSG_DONTWAIT, NULL);
		vnic_ctr_inc(&s->rx.syscalls);
		/* ECONNREFUSED: an ICMP error for an earlier send, reported once */
	} while (r < 0 && (errno == EINTR || errno == ECONNREFUSED));
	if (r <= 0) {
		if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			vnic_ctr_inc(&s->rx.errors);
		s->rx_more = false;
		return;
	}
	s->rx_more = r == SW_DG_BUFS;
	for (unsigned int i = 0; i < (unsigned int)r; i++)
		dgram_split(s, i);
}

static unsigned int dgram_peek(struct sw_wire *s, struct vnic_pkt **frames, unsigned int n)
{
	unsigned int got = 0;

	if (s->dcur == s->dn)
		dgram_read(s);
	for (; got < n && s->dcur + got < s->dn; got++) {
		const struct sw_dframe *f = &s->dfr[s->dcur + got];

		shell_set(&s->shells[got], f->data, f->len);
		frames[got] = &s->shells[got];
	}
	s->peeked = got;
	return got;
}

static void dgram_release(struct sw_wire *s, unsigned int n)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < n; i++)
		bytes += s->shells[i].len;
	s->dcur += n;
	vnic_ctr_add(&s->rx.frames, n);
	vnic_ctr_add(&s->rx.bytes, bytes);
}

/* ---- rx ops ----------------------------------------------------------------------- */

static unsigned int sw_rx_peek(struct vnic_wire *w, struct vnic_pkt **frames, unsigned int n)
{
	struct sw_wire *s = to_sw(w);

	on_our_cpu(s);
	if (n > SW_RX_SHELLS)
		n = SW_RX_SHELLS;
	s->peeked = 0;
	if (!n)
		return 0;
	return s->stream ? stream_peek(s, frames, n) : dgram_peek(s, frames, n);
}

static void sw_rx_release(struct vnic_wire *w, unsigned int n)
{
	struct sw_wire *s = to_sw(w);

	if (n > s->peeked)
		n = s->peeked;
	if (s->stream)
		stream_release(s, n);
	else
		dgram_release(s, n);
	s->peeked = 0;
}

/* A frame (or a bad one to drop) is in the buffer, or the socket may hold more. */
static bool rx_ready(const struct sw_wire *s)
{
	uint32_t len;

	if (s->rx_more)
		return true;
	if (!s->stream)
		return s->dcur < s->dn;
	return frame_at(s, s->rd, &len) != FR_SHORT;
}

/* Nothing is ever in flight but not ready: ready now (1) or nothing (0). */
static uint64_t sw_rx_next_ns(struct vnic_wire *w)
{
	return rx_ready(to_sw(w)) ? 1 : 0;
}

/* ---- notification ----------------------------------------------------------------- */

static void sw_irq_enable(void *ctx)
{
	struct sw_wire *s = to_sw(ctx);

	s->armed = true;
	watch(s);
}

static void sw_irq_disable(void *ctx)
{
	struct sw_wire *s = to_sw(ctx);

	s->armed = false;
	watch(s);
}

/*
 * What the buffer holds only: epoll is level-triggered, so bytes that reach
 * the socket between the device's last peek and its re-arm are reported by
 * the next epoll look (as for the AF_PACKET wire).
 */
static bool sw_irq_pending(void *ctx)
{
	return rx_ready(to_sw(ctx));
}

static const struct vnic_irq_ops sw_irq_ops = {
	.enable = sw_irq_enable,
	.disable = sw_irq_disable,
	.pending = sw_irq_pending,
};

static bool flush_pending(struct sw_wire *s);

/*
 * The fds' poller and the retry timer: connects, accepts, finishes a short
 * write, and is the receiver's "interrupt" (a run that finds the socket not
 * readable after all notifies for nothing: the device peeks and re-arms).
 */
static int sw_io_poll(struct vnic_poller *p, int budget)
{
	struct sw_wire *s = vnic_container_of(p, struct sw_wire, poller);

	(void)budget;
	if (s->state == SW_CONNECTING)
		connect_check(s);
	else if (s->state == SW_DOWN && s->lfd >= 0)
		accept_one(s);
	else if (s->state == SW_DOWN && (int64_t)(vnic_now_ns() - s->retry_ns) >= 0)
		connect_start(s);
	if (s->state == SW_UP && s->pend_len)
		flush_pending(s);
	if (s->state == SW_UP && s->armed) {
		s->armed = false;
		vnic_ctr_inc(&s->rx.notifies);
		if (s->wire.notify)
			s->wire.notify(s->wire.notify_ctx);
	}
	watch(s);
	return 0;
}

/* ---- tx ----------------------------------------------------------------------------- */

static unsigned int sw_tx_reserve(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n)
{
	struct sw_wire *s = to_sw(w);

	/* every slot is free between calls: commit sends or drops at once */
	if (n > SW_TX_SLOTS) {
		vnic_ctr_inc(&s->tx.full);
		n = SW_TX_SLOTS;
	}
	for (unsigned int i = 0; i < n; i++) {
		vnic_pkt_reset(s->slots[i]);
		out[i] = s->slots[i];
	}
	s->reserved = n;
	return n;
}

static bool tx_frame_ok(const struct sw_wire *s, const struct vnic_pkt *pkt)
{
	uint64_t off = (uint64_t)(pkt->data - pkt->head);
	uint32_t l2 = VNIC_ETH_HLEN;
	uint16_t type;

	if (pkt->data < pkt->head || off + pkt->len > pkt->buf_size || pkt->len < VNIC_ETH_HLEN)
		return false;
	type = (uint16_t)(pkt->data[12] << 8 | pkt->data[13]);
	if (type == VNIC_ETH_P_8021Q || type == VNIC_ETH_P_8021AD)
		l2 += VNIC_VLAN_HLEN;
	return pkt->len <= s->wire.mtu + l2;
}

/* The rest of a short write's frame. true: all of it is out. */
static bool flush_pending(struct sw_wire *s)
{
	while (s->pend_len) {
		ssize_t r = send(s->fd, s->pend + s->pend_off, s->pend_len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		vnic_ctr_inc(&s->tx.syscalls);
		if (r > 0) {
			s->pend_off += (uint32_t)r;
			s->pend_len -= (uint32_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		conn_down(s, false);
		return false;
	}
	return true;
}

/* Keeps the unsent part of frame i (its first `sent` bytes are out). */
static void keep_rest(struct sw_wire *s, const struct iovec *iov, unsigned int niov, uint32_t sent)
{
	uint32_t at = 0;

	s->pend_off = s->pend_len = 0;
	for (unsigned int k = 0; k < niov; k++) {
		uint32_t l = (uint32_t)iov[k].iov_len;

		if (sent < l) {
			memcpy(s->pend + at, (const uint8_t *)iov[k].iov_base + sent, l - sent);
			at += l - sent;
			sent = 0;
		} else {
			sent -= l;
		}
	}
	s->pend_len = at;
	vnic_ctr_inc(&s->tx.short_writes);
}

/*
 * Sends the batch's n frames (niov iovecs, fiov[i] the first of frame i),
 * counting what leaves and what is dropped. false: the socket took less
 * than all of it (full, or the connection went): nothing more now.
 */
static bool stream_send(struct sw_wire *s, unsigned int n, unsigned int niov,
			const unsigned int *fiov)
{
	struct msghdr mh = {.msg_iov = s->iovs, .msg_iovlen = niov};
	unsigned int i = 0;
	uint64_t bytes = 0;
	ssize_t r;

	do {
		r = sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		vnic_ctr_inc(&s->tx.syscalls);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			vnic_ctr_add(&s->tx.drop_full, n);
		} else {
			vnic_ctr_add(&s->tx.drop_error, n);
			conn_down(s, false);
		}
		return false;
	}
	for (; i < n && (size_t)r >= s->flen[i]; i++) {
		r -= (ssize_t)s->flen[i];
		bytes += s->flen[i] - VNIC_SOCKWIRE_LEN_BYTES;
	}
	if (i < n && r > 0) {
		keep_rest(s, &s->iovs[fiov[i]], (i + 1 < n ? fiov[i + 1] : niov) - fiov[i],
			  (uint32_t)r);
		bytes += s->flen[i] - VNIC_SOCKWIRE_LEN_BYTES;
		i++;
	}
	vnic_ctr_add(&s->tx.frames, i);
	vnic_ctr_add(&s->tx.bytes, bytes);
	vnic_ctr_add(&s->tx.drop_full, n - i);
	return i == n && !s->pend_len;
}

/* The iovecs of one frame with its length field in front; returns how many. */
static unsigned int frame_iov(struct sw_wire *s, struct vnic_pkt *pkt, unsigned int b,
			      struct iovec *iov)
{
	if (vnic_pkt_headroom(pkt) >= VNIC_SOCKWIRE_LEN_BYTES) {
		be32_put(pkt->data - VNIC_SOCKWIRE_LEN_BYTES, pkt->len);
		iov[0].iov_base = pkt->data - VNIC_SOCKWIRE_LEN_BYTES;
		iov[0].iov_len = pkt->len + VNIC_SOCKWIRE_LEN_BYTES;
		return 1;
	}
	be32_put(s->hdrs[b], pkt->len);
	iov[0].iov_base = s->hdrs[b];
	iov[0].iov_len = VNIC_SOCKWIRE_LEN_BYTES;
	iov[1].iov_base = pkt->data;
	iov[1].iov_len = pkt->len;
	return 2;
}

static void stream_commit(struct sw_wire *s, unsigned int n)
{
	unsigned int fiov[SW_TX_BATCH];
	unsigned int i = 0, b = 0, niov = 0;

	if (s->pend_len && !flush_pending(s))
		goto drop_rest;
	for (; i < n; i++) {
		struct vnic_pkt *pkt = s->slots[i];

		if (vnic_unlikely(!tx_frame_ok(s, pkt))) {
			vnic_ctr_inc(&s->tx.drop_mtu);
			continue;
		}
		fiov[b] = niov;
		s->flen[b] = pkt->len + VNIC_SOCKWIRE_LEN_BYTES;
		niov += frame_iov(s, pkt, b, &s->iovs[niov]);
		if (++b < SW_TX_BATCH && i + 1 < n)
			continue;
		if (!stream_send(s, b, niov, fiov)) {
			i++;
			goto drop_rest;
		}
		b = niov = 0;
	}
	return;

drop_rest:
	/* whole frames only: every one after what the socket took */
	vnic_ctr_add(s->state == SW_UP ? &s->tx.drop_full : &s->tx.drop_no_peer, n - i);
	watch(s);
}

/* Message k carries mframes[k] frames of seg bytes (the last may be shorter). */
static void gso_control(struct sw_wire *s, unsigned int k, uint16_t seg)
{
	struct msghdr *mh = &s->msgs[k].msg_hdr;
	struct cmsghdr *c;

	if (s->mframes[k] < 2) {
		mh->msg_control = NULL;
		mh->msg_controllen = 0;
		return;
	}
	mh->msg_control = s->tctl[k].buf;
	mh->msg_controllen = CMSG_SPACE(sizeof(seg));
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
}

static unsigned int frames_from(const struct sw_wire *s, unsigned int k, unsigned int n)
{
	unsigned int f = 0;

	while (k < n)
		f += s->mframes[k++];
	return f;
}

/* Sends msgs[0..n) of a dgram wire; a message the kernel refuses is dropped. */
static void dgram_send(struct sw_wire *s, unsigned int n)
{
	unsigned int done = 0;
	uint64_t bytes = 0, sent = 0;

	while (done < n) {
		int r = sendmmsg(s->fd, s->msgs + done, n - done, MSG_DONTWAIT);

		vnic_ctr_inc(&s->tx.syscalls);
		if (r > 0) {
			for (unsigned int k = done; k < done + (unsigned int)r; k++) {
				bytes += s->msgs[k].msg_len;
				sent += s->mframes[k];
			}
			done += (unsigned int)r;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			/* the socket buffer is full: the rest of the batch would find it so too */
			vnic_ctr_add(&s->tx.drop_full, frames_from(s, done, n));
			break;
		}
		/*
		 * A path whose MTU is below a frame takes no GSO send (EINVAL):
		 * one datagram per frame from now on, which IP may fragment.
		 */
		if (s->mframes[done] > 1 && (errno == EINVAL || errno == EMSGSIZE || errno == EIO))
			s->gso = false;
		/* ECONNREFUSED: nobody at RHOST:RPORT when an earlier datagram arrived */
		vnic_ctr_add(errno == ECONNREFUSED ? &s->tx.drop_no_peer : &s->tx.drop_error,
			     s->mframes[done]);
		done++;
	}
	vnic_ctr_add(&s->tx.frames, sent);
	vnic_ctr_add(&s->tx.bytes, bytes);
}

/*
 * Runs of frames of one length (and a shorter one to end a run) leave as
 * one GSO send each: the kernel cuts it into one datagram per frame, on the
 * wire or, over loopback, at a receiver without UDP_GRO. Up to SW_TX_BATCH
 * messages per sendmmsg.
 */
static void dgram_commit(struct sw_wire *s, unsigned int n)
{
	unsigned int m = 0, niov = 0;
	uint32_t seg = 0, bytes = 0;
	bool open = false;

	for (unsigned int i = 0; i < n; i++) {
		struct vnic_pkt *pkt = s->slots[i];

		if (vnic_unlikely(!tx_frame_ok(s, pkt))) {
			vnic_ctr_inc(&s->tx.drop_mtu);
			continue;
		}
		if (open && pkt->len <= seg && s->mframes[m - 1] < SW_GSO_SEGS &&
		    bytes + pkt->len <= SW_GSO_BYTES && niov < 2 * SW_TX_BATCH) {
			s->msgs[m - 1].msg_hdr.msg_iovlen++;
			s->mframes[m - 1]++;
			bytes += pkt->len;
			open = pkt->len == seg;
		} else {
			if (m == SW_TX_BATCH || niov == 2 * SW_TX_BATCH) {
				gso_control(s, m - 1, (uint16_t)seg);
				dgram_send(s, m);
				m = niov = 0;
			}
			if (m)
				gso_control(s, m - 1, (uint16_t)seg);
			s->msgs[m].msg_hdr.msg_iov = &s->iovs[niov];
			s->msgs[m].msg_hdr.msg_iovlen = 1;
			s->mframes[m++] = 1;
			seg = bytes = pkt->len;
			open = s->gso;
		}
		s->iovs[niov].iov_base = pkt->data;
		s->iovs[niov++].iov_len = pkt->len;
	}
	if (m) {
		gso_control(s, m - 1, (uint16_t)seg);
		dgram_send(s, m);
	}
}

static void sw_tx_commit(struct vnic_wire *w, struct vnic_pkt **out, unsigned int n,
			 unsigned int reserved)
{
	struct sw_wire *s = to_sw(w);

	(void)out;
	(void)reserved;
	on_our_cpu(s);
	/* our own record of the slots is used; out[] only says how many */
	if (n > s->reserved)
		n = s->reserved;
	s->reserved = 0;
	if (!n)
		return;
	if (s->state != SW_UP) {
		/* nobody at the other end: as on a cable without a peer */
		vnic_ctr_add(&s->tx.drop_no_peer, n);
		return;
	}
	if (s->stream)
		stream_commit(s, n);
	else
		dgram_commit(s, n);
}

static const struct vnic_wire_ops sw_wire_ops = {
	.tx_reserve = sw_tx_reserve,
	.tx_commit = sw_tx_commit,
	.rx_peek = sw_rx_peek,
	.rx_release = sw_rx_release,
	.rx_next_ns = sw_rx_next_ns,
	.rx_irq = &sw_irq_ops,
};

/* ---- setup ------------------------------------------------------------------------ */

/* HOST:PORT into addr; family AF_UNSPEC or the one it must have. */
static int resolve(const struct vnic_sockwire_host *h, int socktype, int family, bool passive,
		   struct sockaddr_storage *addr, socklen_t *len)
{
	struct addrinfo hints = {
		.ai_family = family,
		.ai_socktype = socktype,
		.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
	};
	struct addrinfo *res;
	char port[8];

	snprintf(port, sizeof(port), "%u", h->port);
	if (getaddrinfo(h->host, port, &hints, &res) || !res)
		return -EADDRNOTAVAIL;
	if (res->ai_addrlen > sizeof(*addr)) {
		freeaddrinfo(res);
		return -EADDRNOTAVAIL;
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int unix_addr(struct sw_wire *s, const char *path)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&s->addr;
	size_t len = strlen(path);

	if (!len || len >= sizeof(un->sun_path))
		return -EINVAL;
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, path, len);
	s->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	return 0;
}

/*
 * A socket file at PATH nobody listens on (a server killed before it could
 * remove it) is removed; one that answers is another's: -EADDRINUSE.
 */
static int unix_stale(struct sw_wire *s)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct stat st;
	int err;

	if (probe < 0)
		return -errno;
	err = connect(probe, (struct sockaddr *)&s->addr, s->addrlen) ? errno : 0;
	close(probe);
	if (err != ECONNREFUSED)
		return -EADDRINUSE;
	if (lstat(s->path, &st) || !S_ISSOCK(st.st_mode))
		return -EADDRINUSE;
	return unlink(s->path) ? -errno : 0;
}

static int listen_on(struct sw_wire *s)
{
	int one = 1;
	struct stat st;

	s->lfd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		return -errno;
	if (s->kind == VNIC_SOCKWIRE_STREAM_TCP)
		setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&s->addr, s->addrlen)) {
		int err = -errno;

		if (err != -EADDRINUSE || s->kind != VNIC_SOCKWIRE_STREAM_UNIX)
			return err;
		err = unix_stale(s);
		if (err)
			return err;
		if (bind(s->lfd, (struct sockaddr *)&s->addr, s->addrlen))
			return -errno;
	}
	if (s->kind == VNIC_SOCKWIRE_STREAM_UNIX && !stat(s->path, &st)) {
		s->path_dev = st.st_dev;
		s->path_ino = st.st_ino;
	}
	if (listen(s->lfd, SW_BACKLOG))
		return -errno;
	return 0;
}

/*
 * UDP GSO and GRO where the kernel has them (4.18, 5.0): a run of equal
 * frames is one send and, over loopback or from a NIC that merges, one
 * receive; the frames themselves cross as one datagram each, as QEMU
 * expects them.
 */
static void offloads(struct sw_wire *s)
{
	int zero = 0, one = 1;

	s->gso = !setsockopt(s->fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero));
	setsockopt(s->fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
}

static int dgram_open(struct sw_wire *s, const struct vnic_sockwire_spec *spec)
{
	struct sockaddr_storage local;
	socklen_t llen;
	int err;

	err = resolve(&spec->local, SOCK_DGRAM, AF_UNSPEC, true, &local, &llen);
	if (err)
		return err;
	err = resolve(&spec->remote, SOCK_DGRAM, local.ss_family, false, &s->addr, &s->addrlen);
	if (err)
		return err;
	s->fd = socket(local.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	bufsize(s->fd);
	offloads(s);
	if (bind(s->fd, (struct sockaddr *)&local, llen))
		return -errno;
	/* connected: only RHOST:RPORT's datagrams are received */
	if (connect(s->fd, (struct sockaddr *)&s->addr, s->addrlen))
		return -errno;
	s->state = SW_UP;
	vnic_ctr_set(&s->conn.connected, 1);
	return 0;
}

static int stream_open(struct sw_wire *s, const struct vnic_sockwire_spec *spec)
{
	int err;

	s->spare = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->spare < 0)
		return -errno;
	s->fd = fcntl(s->spare, F_DUPFD_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	if (spec->kind == VNIC_SOCKWIRE_STREAM_UNIX) {
		err = unix_addr(s, spec->path);
		if (err)
			return err;
	} else {
		if (!spec->server && !spec->local.port)
			return -EINVAL;
		err = resolve(&spec->local, SOCK_STREAM, AF_UNSPEC, spec->server, &s->addr,
			      &s->addrlen);
		if (err)
			return err;
	}
	if (spec->server) {
		snprintf(s->path, sizeof(s->path), "%s",
			 spec->kind == VNIC_SOCKWIRE_STREAM_UNIX ? spec->path : "");
		return listen_on(s);
	}
	return 0;
}

static int tx_init(struct sw_wire *s)
{
	int err = vnic_pkt_pool_init(&s->pool, SW_TX_SLOTS, s->wire.frame_size + SW_HEADROOM,
				     SW_HEADROOM);

	if (err)
		return err;
	if (vnic_pkt_alloc_bulk(&s->pool, s->slots, SW_TX_SLOTS) != SW_TX_SLOTS)
		return -ENOMEM;
	for (unsigned int i = 0; i < SW_TX_BATCH; i++) {
		memset(&s->msgs[i], 0, sizeof(s->msgs[i]));
		s->msgs[i].msg_hdr.msg_iov = &s->iovs[i];
		s->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	if (s->stream) {
		s->pend = malloc(s->wire.frame_size + VNIC_SOCKWIRE_LEN_BYTES);
		if (!s->pend)
			return -ENOMEM;
	}
	return 0;
}

static int rx_init(struct sw_wire *s)
{
	s->rbuf = malloc(s->stream ? SW_RBUF : (size_t)SW_DG_BUFS * SW_DG_BUF);
	if (!s->rbuf)
		return -ENOMEM;
	if (s->stream)
		return 0;
	s->dfr = calloc(SW_DG_FRAMES, sizeof(*s->dfr));
	if (!s->dfr)
		return -ENOMEM;
	for (unsigned int i = 0; i < SW_DG_BUFS; i++) {
		memset(&s->rmsgs[i], 0, sizeof(s->rmsgs[i]));
		s->riovs[i].iov_base = s->rbuf + (size_t)i * SW_DG_BUF;
		s->riovs[i].iov_len = SW_DG_BUF;
		s->rmsgs[i].msg_hdr.msg_iov = &s->riovs[i];
		s->rmsgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

/* Only the file we made: a server started after us on PATH keeps its own. */
static void unlink_ours(const struct sw_wire *s)
{
	struct stat st;

	if (s->kind == VNIC_SOCKWIRE_STREAM_UNIX && s->path[0] && s->path_ino &&
	    !lstat(s->path, &st) && st.st_dev == s->path_dev && st.st_ino == s->path_ino)
		unlink(s->path);
}

static void sw_free(struct sw_wire *s)
{
	if (s->lfd >= 0) {
		unlink_ours(s);
		close(s->lfd);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->spare >= 0)
		close(s->spare);
	if (s->pool.count)
		vnic_pkt_pool_fini(&s->pool);
	free(s->pend);
	free(s->rbuf);
	free(s->dfr);
	free(s);
}

static int register_fds(struct sw_wire *s)
{
	int err;

	snprintf(s->name, sizeof(s->name), "sockwire-%s",
		 s->kind == VNIC_SOCKWIRE_DGRAM_UDP    ? "udp"
		 : s->kind == VNIC_SOCKWIRE_STREAM_TCP ? "tcp"
						       : "unix");
	err = vnic_cpu_add(s->cpu, &s->poller, s->name, sw_io_poll);
	if (err)
		return err;
	/* watched only while there is something to wait for (watch()) */
	err = vnic_cpu_add_fd(s->cpu, s->fd, 0, &s->poller);
	if (err)
		return err;
	if (s->lfd >= 0) {
		err = vnic_cpu_add_fd(s->cpu, s->lfd, EPOLLIN, &s->poller);
		if (err)
			return err;
		s->lwatching = EPOLLIN;
	}
	return 0;
}

int vnic_sockwire_create(struct vnic_wire **w, const struct vnic_sockwire_spec *spec, uint32_t mtu,
			 struct vnic_cpu *cpu)
{
	struct sw_wire *s;
	int err;

	if (!w || !spec || !cpu)
		return -EINVAL;
	*w = NULL;
	if (mtu < SW_MIN_MTU || mtu > VNIC_CABLE_MAX_MTU)
		return -EINVAL;
	if (spec->kind < VNIC_SOCKWIRE_STREAM_UNIX || spec->kind > VNIC_SOCKWIRE_DGRAM_UDP)
		return -EINVAL;
	if (cpu->thread)
		return -EBUSY;
	s = aligned_alloc(VNIC_CACHELINE, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->fd = s->lfd = s->spare = -1;
	s->cpu = cpu;
	s->kind = spec->kind;
	s->stream = spec->kind != VNIC_SOCKWIRE_DGRAM_UDP;
	s->server = s->stream && spec->server;
	s->state = SW_DOWN;
	s->wire.ops = &sw_wire_ops;
	s->wire.priv = s;
	s->wire.mtu = mtu;
	s->wire.frame_size = mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN;
	err = tx_init(s);
	if (err)
		goto err_free;
	err = rx_init(s);
	if (err)
		goto err_free;
	err = s->stream ? stream_open(s, spec) : dgram_open(s, spec);
	if (err)
		goto err_free;
	err = register_fds(s);
	if (err)
		goto err_free;
	if (s->stream && !s->server) {
		/* the first attempt: as soon as the cpu runs */
		s->backoff_ns = VNIC_SOCKWIRE_BACKOFF_MIN_NS;
		s->retry_ns = vnic_now_ns();
		vnic_poller_set_timer(&s->poller, s->retry_ns);
	}
	*w = &s->wire;
	return 0;

err_free:
	sw_free(s);
	return err;
}

void vnic_sockwire_destroy(struct vnic_wire *w)
{
	if (w)
		sw_free(to_sw(w));
}

int vnic_sockwire_local_port(const struct vnic_wire *w)
{
	const struct sw_wire *s = vnic_container_of((struct vnic_wire *)w, struct sw_wire, wire);
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	int fd = s->kind == VNIC_SOCKWIRE_DGRAM_UDP ? s->fd : s->lfd;

	if (s->kind == VNIC_SOCKWIRE_STREAM_UNIX || fd < 0)
		return 0;
	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return -errno;
	if (a.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a)->sin_port);
	if (a.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a)->sin6_port);
	return 0;
}

void vnic_sockwire_stats(const struct vnic_wire *w, struct vnic_sockwire_stats *st)
{
	const struct sw_wire *s = vnic_container_of((struct vnic_wire *)w, struct sw_wire, wire);

	memset(st, 0, sizeof(*st));
	st->rx_frames = vnic_ctr_read(&s->rx.frames);
	st->rx_bytes = vnic_ctr_read(&s->rx.bytes);
	st->rx_drop_too_long = vnic_ctr_read(&s->rx.drop_too_long);
	st->rx_drop_runt = vnic_ctr_read(&s->rx.drop_runt);
	st->rx_drop_zero_len = vnic_ctr_read(&s->rx.drop_zero_len);
	st->rx_drop_bad_len = vnic_ctr_read(&s->rx.drop_bad_len);
	st->rx_drop_eof_mid_frame = vnic_ctr_read(&s->rx.drop_eof_mid_frame);
	st->rx_broken_streams = vnic_ctr_read(&s->rx.broken_streams);
	st->rx_errors = vnic_ctr_read(&s->rx.errors);
	st->rx_syscalls = vnic_ctr_read(&s->rx.syscalls);
	st->rx_notifies = vnic_ctr_read(&s->rx.notifies);
	st->tx_frames = vnic_ctr_read(&s->tx.frames);
	st->tx_bytes = vnic_ctr_read(&s->tx.bytes);
	st->tx_drop_mtu = vnic_ctr_read(&s->tx.drop_mtu);
	st->tx_drop_no_peer = vnic_ctr_read(&s->tx.drop_no_peer);
	st->tx_drop_full = vnic_ctr_read(&s->tx.drop_full);
	st->tx_drop_error = vnic_ctr_read(&s->tx.drop_error);
	st->tx_syscalls = vnic_ctr_read(&s->tx.syscalls);
	st->tx_short_writes = vnic_ctr_read(&s->tx.short_writes);
	st->tx_full = vnic_ctr_read(&s->tx.full);
	st->connects = vnic_ctr_read(&s->conn.connects);
	st->reconnects = vnic_ctr_read(&s->conn.reconnects);
	st->connect_errors = vnic_ctr_read(&s->conn.connect_errors);
	st->disconnects = vnic_ctr_read(&s->conn.disconnects);
	st->connected = vnic_ctr_read(&s->conn.connected);
}

unsigned int vnic_sockwire_counters(const struct vnic_wire *w, struct vnic_counter *out,
				    unsigned int max)
{
	struct vnic_sockwire_stats st;
	unsigned int n = 0;

	vnic_sockwire_stats(w, &st);
#define C(f) vnic_counter_put(out, max, &n, #f, st.f)
	C(rx_frames);
	C(rx_bytes);
	C(rx_drop_too_long);
	C(rx_drop_runt);
	C(rx_drop_zero_len);
	C(rx_drop_bad_len);
	C(rx_drop_eof_mid_frame);
	C(rx_broken_streams);
	C(rx_errors);
	C(rx_syscalls);
	C(rx_notifies);
	C(tx_frames);
	C(tx_bytes);
	C(tx_drop_mtu);
	C(tx_drop_no_peer);
	C(tx_drop_full);
	C(tx_drop_error);
	C(tx_syscalls);
	C(tx_short_writes);
	C(tx_full);
	C(connects);
	C(reconnects);
	C(connect_errors);
	C(disconnects);
	C(connected);
#undef C
	return n;
}
