/* SPDX-License-Identifier: MIT */
/*
 * The attach message of the split transport (docs/PROTOCOL.md section 13):
 * how a client hands one hv's shared memory and doorbells to the server, on
 * a unix stream socket, the four fds in one SCM_RIGHTS message. The server
 * checks the header and the fds before it maps anything (shm.c); a message
 * that is not exactly what it should be is refused whole and its fds closed.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hv/hv_priv.h"

enum {
	ATTACH_MAGIC = 0x76686174,	/* "vhat" */
	ATTACH_VERSION = 1,
};

/* Host byte order: both ends are on one machine, and one build. */
struct attach_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t nfds;			/* VNIC_HV_SPLIT_FDS */
	uint32_t max_ind_descs;		/* the client's idea of the hv's limit */
	uint32_t reserved;		/* 0 */
	uint64_t pool_size;
};

static_assert(sizeof(struct attach_msg) == 24, "attach message layout");

int vnic_hv_split_send(int sock, const struct vnic_hv *hv)
{
	int fds[VNIC_HV_SPLIT_FDS];
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} ctl;
	struct attach_msg m = { .magic = ATTACH_MAGIC, .version = ATTACH_VERSION,
				.nfds = VNIC_HV_SPLIT_FDS, .max_ind_descs = hv->max_ind_descs };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;

	if (!vnic_hv_split_fds(hv, fds, &m.pool_size))
		return -EINVAL;
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(m) ? 0 : -EIO;
}

/* Every fd a message carried, in order, however many: the caller closes what it refuses. */
static unsigned int take_fds(struct msghdr *mh, int *fds, unsigned int max)
{
	unsigned int n = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t len;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		len = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < len; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (n < max)
				fds[n] = fd;
			else
				close(fd);
			n++;
		}
	}
	return n;
}

int vnic_hv_split_recv(int sock, struct vnic_hv **hv, uint32_t max_ind_descs,
		       const struct vnic_hv_cost *cost)
{
	int fds[VNIC_HV_SPLIT_FDS];
	union {
		/* room for more than we take: extra fds are received, then closed */
		char buf[CMSG_SPACE(4 * sizeof(fds))];
		struct cmsghdr align;
	} ctl;
	struct attach_msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	unsigned int nfds;
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	nfds = take_fds(&mh, fds, VNIC_HV_SPLIT_FDS);
	if (n == 0 && !nfds)
		return -ECONNRESET;
	if (n != (ssize_t)sizeof(m) || (mh.msg_flags & MSG_CTRUNC) || m.magic != ATTACH_MAGIC ||
	    m.version != ATTACH_VERSION || m.nfds != VNIC_HV_SPLIT_FDS || m.reserved ||
	    nfds != VNIC_HV_SPLIT_FDS || m.max_ind_descs != max_ind_descs) {
		for (unsigned int i = 0; i < nfds && i < VNIC_HV_SPLIT_FDS; i++)
			close(fds[i]);
		return -EPROTO;
	}
	/* the fds are the server half's from here, or closed by it */
	return vnic_hv_create_split_server(hv, max_ind_descs, cost, fds, m.pool_size);
}
