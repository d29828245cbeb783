// SPDX-License-Identifier: MIT
/*
 * Network namespaces and the handful of rtnetlink requests `vnic link` makes.
 *
 * Plain rtnetlink rather than libmnl: link needs six request shapes (get a
 * link by name, move it, set MTU and up, add an address, dump addresses)
 * and one multicast group (RTNLGRP_LINK, to see a TAP's MTU changed),
 * each a fixed header plus two or three attributes and an ACK. That is a
 * page of code with the kernel's own uapi headers, while libmnl would add a
 * build dependency (libmnl-dev) and a runtime one for no fewer lines here.
 *
 * Namespaces follow iproute2's convention (ip-netns(8)): a namespace is kept
 * alive by a bind mount of its nsfs inode on /run/netns/NAME, and
 * /run/netns itself is a shared mount point so the bind mounts propagate to
 * mount namespaces created later (ip netns exec makes one per command).
 */
#define _GNU_SOURCE /* unshare, setns */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link_int.h"

/* ---------------------------------------------------------------------------
 * Namespaces
 * ------------------------------------------------------------------------- */

static int ns_path(const char *name, char *buf, size_t len)
{
	/* One path component, as ip netns insists: no '/', not "." or "..". */
	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s/%s", VNIC_NETNS_RUN_DIR, name) >= len)
		return -EINVAL;
	return 0;
}

/*
 * Makes /run/netns a shared mount point, bind-mounting it onto itself first
 * if it is not a mount point yet (mount(MS_SHARED) then fails with EINVAL).
 * Same steps as iproute2's netns_add.
 */
static int make_run_dir(void)
{
	if (mkdir(VNIC_NETNS_RUN_DIR, 0755) && errno != EEXIST)
		return -errno;
	for (int tries = 0; tries < 2; tries++) {
		if (!mount("", VNIC_NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL))
			return 0;
		if (errno != EINVAL || tries)
			return -errno;
		if (mount(VNIC_NETNS_RUN_DIR, VNIC_NETNS_RUN_DIR, "none", MS_BIND | MS_REC, NULL))
			return -errno;
	}
	return 0;
}

struct ns_make {
	const char *path;
	int err;
};

/*
 * In a thread of its own: unshare(CLONE_NEWNET) moves only the calling
 * thread into the new namespace, and the thread ends right after pinning the
 * namespace with the bind mount, so no other thread ever runs in it.
 */
static void *ns_make_thread(void *arg)
{
	struct ns_make *m = arg;

	if (unshare(CLONE_NEWNET))
		m->err = -errno;
	else if (mount("/proc/thread-self/ns/net", m->path, "none", MS_BIND, NULL))
		m->err = -errno;
	return NULL;
}

int vnic_netns_create(const char *name)
{
	struct ns_make m = { 0 };
	char path[256];
	pthread_t th;
	int err, fd;

	err = ns_path(name, path, sizeof(path));
	if (err)
		return err;
	err = make_run_dir();
	if (err)
		return err;
	/* O_EXCL: the name is ours alone from here, or taken. */
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	m.path = path;
	err = -pthread_create(&th, NULL, ns_make_thread, &m);
	if (!err) {
		pthread_join(th, NULL);
		err = m.err;
	}
	if (err)
		unlink(path);
	return err;
}

bool vnic_netns_name_ok(const char *name)
{
	char path[256];

	return ns_path(name, path, sizeof(path)) == 0;
}

int vnic_netns_open(const char *name)
{
	char path[256];
	int err = ns_path(name, path, sizeof(path));
	int fd;

	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int vnic_netns_delete(const char *name)
{
	char path[256];
	int err = ns_path(name, path, sizeof(path));

	if (err)
		return err;
	/* Lazy: a process still inside (ip netns exec) keeps the namespace itself. */
	if (umount2(path, MNT_DETACH) && errno != EINVAL)
		return -errno;
	if (unlink(path))
		return -errno;
	return 0;
}

/* ---------------------------------------------------------------------------
 * rtnetlink
 * ------------------------------------------------------------------------- */

enum { NL_BUF = 16384 };

struct nl_req {
	struct nlmsghdr nh;
	char body[1024];
};

static void *req_tail(struct nl_req *r)
{
	return (char *)&r->nh + NLMSG_ALIGN(r->nh.nlmsg_len);
}

static int add_attr(struct nl_req *r, unsigned short type, const void *data, size_t len)
{
	size_t alen = RTA_LENGTH(len);
	struct rtattr *rta;

	if (NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(alen) > sizeof(*r))
		return -E2BIG;
	rta = req_tail(r);
	rta->rta_type = type;
	rta->rta_len = (unsigned short)alen;
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	r->nh.nlmsg_len = (uint32_t)(NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(alen));
	return 0;
}

static void req_init(struct nl_req *r, uint16_t type, uint16_t flags, const void *hdr, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	memcpy(NLMSG_DATA(&r->nh), hdr, len);
}

/* Runs in a thread that entered the target namespace: the socket stays there. */
struct nl_sock_make {
	int netns_fd;
	int fd;
	int err;
};

static void *nl_sock_thread(void *arg)
{
	struct nl_sock_make *m = arg;

	if (setns(m->netns_fd, CLONE_NEWNET)) {
		m->err = -errno;
		return NULL;
	}
	m->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (m->fd < 0)
		m->err = -errno;
	return NULL;
}

/* A route socket in netns_fd's namespace (-1: ours), bound to the multicast groups given. */
static int nl_open(struct vnic_nl *nl, int netns_fd, uint32_t groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
	socklen_t slen = sizeof(sa);
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = -1;
	if (netns_fd >= 0) {
		/* A helper thread, so the caller's namespace never changes. */
		struct nl_sock_make m = { .netns_fd = netns_fd, .fd = -1 };
		pthread_t th;
		int err = -pthread_create(&th, NULL, nl_sock_thread, &m);

		if (err)
			return err;
		pthread_join(th, NULL);
		if (m.err)
			return m.err;
		nl->fd = m.fd;
	} else {
		nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
		if (nl->fd < 0)
			return -errno;
	}
	/* Errors carry only the header of the failed request, not all of it. */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &slen)) {
		int err = -errno;

		vnic_nl_close(nl);
		return err;
	}
	nl->portid = sa.nl_pid;
	nl->seq = 1;
	return 0;
}

int vnic_nl_open(struct vnic_nl *nl, int netns_fd)
{
	struct timeval rcv_timeout = { .tv_sec = 5 };
	int err = nl_open(nl, netns_fd, 0);

	/* Set-up must never hang on a kernel that does not answer. */
	if (!err)
		setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &rcv_timeout, sizeof(rcv_timeout));
	return err;
}

int vnic_nl_open_link_events(struct vnic_nl *nl, int netns_fd)
{
	int err = nl_open(nl, netns_fd, RTMGRP_LINK);

	/* Read from a poll loop: a read never waits. */
	if (!err && fcntl(nl->fd, F_SETFL, fcntl(nl->fd, F_GETFL) | O_NONBLOCK)) {
		err = -errno;
		vnic_nl_close(nl);
	}
	return err;
}

void vnic_nl_close(struct vnic_nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

typedef int (*nl_msg_fn)(const struct nlmsghdr *nh, void *ctx);

/*
 * Sends r and reads the answer up to its end: the ACK (NLMSG_ERROR with
 * error 0) of a plain request, NLMSG_DONE of a dump. Every message of ours
 * before that goes to fn. 0, or the kernel's -errno, or fn's non-zero.
 */
static int nl_talk(struct vnic_nl *nl, struct nl_req *r, nl_msg_fn fn, void *ctx)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint32_t seq = nl->seq++;
	int ret = 0;
	char *buf;

	r->nh.nlmsg_seq = seq;
	/* An ACK ends every answer, even a GET's single reply (a dump ends with DONE). */
	r->nh.nlmsg_flags |= NLM_F_ACK;
	if (sendto(nl->fd, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	buf = malloc(NL_BUF);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = recv(nl->fd, buf, NL_BUF, 0);
		struct nlmsghdr *nh;
		size_t left;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		left = (size_t)n;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_seq != seq || nh->nlmsg_pid != nl->portid)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				goto out;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					ret = -EPROTO;
				else if (!ret)
					ret = e->error;
				goto out;
			}
			if (fn && !ret)
				ret = fn(nh, ctx);
		}
	}
out:
	free(buf);
	return ret;
}

static int link_index_msg(const struct nlmsghdr *nh, void *ctx)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);

	if (nh->nlmsg_type == RTM_NEWLINK && !*(int *)ctx)
		*(int *)ctx = ifi->ifi_index;
	return 0;
}

int vnic_nl_link_index(struct vnic_nl *nl, const char *name)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_req r;
	int idx = 0, err;

	if (strlen(name) >= IFNAMSIZ)
		return -ENODEV;
	req_init(&r, RTM_GETLINK, 0, &ifi, sizeof(ifi));
	err = add_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	if (!err)
		err = nl_talk(nl, &r, link_index_msg, &idx);
	if (err)
		return err;
	return idx > 0 ? idx : -ENODEV;
}

int vnic_nl_link_move(struct vnic_nl *nl, int ifindex, int netns_fd, const char *new_name)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	uint32_t fd = (uint32_t)netns_fd;
	struct nl_req r;
	int err;

	req_init(&r, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	err = add_attr(&r, IFLA_NET_NS_FD, &fd, sizeof(fd));
	if (!err && new_name)
		err = add_attr(&r, IFLA_IFNAME, new_name, strlen(new_name) + 1);
	return err ? err : nl_talk(nl, &r, NULL, NULL);
}

int vnic_nl_link_set(struct vnic_nl *nl, int ifindex, uint32_t mtu, bool up)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_index = ifindex,
		.ifi_flags = up ? IFF_UP : 0,
		.ifi_change = IFF_UP,
	};
	struct nl_req r;
	int err = 0;

	req_init(&r, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	if (mtu)
		err = add_attr(&r, IFLA_MTU, &mtu, sizeof(mtu));
	return err ? err : nl_talk(nl, &r, NULL, NULL);
}

int vnic_nl_link_set_mtu(struct vnic_nl *nl, int ifindex, uint32_t mtu)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	struct nl_req r;
	int err;

	req_init(&r, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	err = add_attr(&r, IFLA_MTU, &mtu, sizeof(mtu));
	return err ? err : nl_talk(nl, &r, NULL, NULL);
}

struct link_info {
	int ifindex;		/* 0: any */
	struct vnic_nl_link *out;
	bool seen;
};

static bool link_parse(const struct nlmsghdr *nh, int *ifindex, struct vnic_nl_link *li)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	const struct rtattr *rta;
	int len;

	if (nh->nlmsg_type != RTM_NEWLINK || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return false;
	memset(li, 0, sizeof(*li));
	*ifindex = ifi->ifi_index;
	li->flags = ifi->ifi_flags;
	li->type = ifi->ifi_type;
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	for (rta = IFLA_RTA(ifi); RTA_OK(rta, len); rta = RTA_NEXT(rta, len))
		if (rta->rta_type == IFLA_MTU && RTA_PAYLOAD(rta) >= sizeof(uint32_t))
			memcpy(&li->mtu, RTA_DATA(rta), sizeof(uint32_t));
	return true;
}

static int link_info_msg(const struct nlmsghdr *nh, void *ctx)
{
	struct link_info *li = ctx;
	struct vnic_nl_link one;
	int idx;

	if (!link_parse(nh, &idx, &one) || (li->ifindex && idx != li->ifindex))
		return 0;
	*li->out = one;
	li->seen = true;
	return 0;
}

int vnic_nl_link_get(struct vnic_nl *nl, int ifindex, struct vnic_nl_link *out)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	struct link_info li = { .ifindex = ifindex, .out = out };
	struct nl_req r;
	int err;

	req_init(&r, RTM_GETLINK, 0, &ifi, sizeof(ifi));
	err = nl_talk(nl, &r, link_info_msg, &li);
	if (err)
		return err;
	return li.seen ? 0 : -ENODEV;
}

int vnic_nl_link_events(struct vnic_nl *nl, vnic_nl_link_fn fn, void *ctx)
{
	char *buf = malloc(NL_BUF);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct sockaddr_nl from = { 0 };
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(nl->fd, buf, NL_BUF, MSG_DONTWAIT, (struct sockaddr *)&from,
				     &flen);
		const struct nlmsghdr *nh;
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* ENOBUFS: the kernel dropped events; the caller reads the state again. */
			if (n < 0 && errno != EAGAIN)
				ret = -errno;
			break;
		}
		/* An event comes from the kernel (port 0); anything a process sends is not one. */
		if (from.nl_pid != 0)
			continue;
		left = (size_t)n;
		for (nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, left);
		     nh = NLMSG_NEXT(nh, left)) {
			struct vnic_nl_link li;
			int idx;

			if (link_parse(nh, &idx, &li))
				fn(ctx, idx, &li);
		}
	}
	free(buf);
	return ret;
}

static unsigned int addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

int vnic_nl_addr_add(struct vnic_nl *nl, int ifindex, const struct vnic_nl_addr *a)
{
	struct ifaddrmsg ifa = {
		.ifa_family = (uint8_t)a->family,
		.ifa_prefixlen = (uint8_t)a->prefix,
		/*
		 * Without DAD an IPv6 address is usable the moment it is added,
		 * instead of tentative for a second or more; both ends are ours.
		 */
		.ifa_flags = a->family == AF_INET6 ? IFA_F_NODAD : 0,
		.ifa_scope = RT_SCOPE_UNIVERSE,
		.ifa_index = (uint32_t)ifindex,
	};
	struct nl_req r;
	int err;

	req_init(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof(ifa));
	err = add_attr(&r, IFA_LOCAL, a->addr, addr_len(a->family));
	if (!err)
		err = add_attr(&r, IFA_ADDRESS, a->addr, addr_len(a->family));
	return err ? err : nl_talk(nl, &r, NULL, NULL);
}

struct addr_find {
	const struct vnic_nl_addr *want;
	int ifindex;
};

static int addr_find_msg(const struct nlmsghdr *nh, void *ctx)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	struct addr_find *f = ctx;
	unsigned int alen = addr_len(f->want->family);
	const struct rtattr *rta;
	int len;

	if (nh->nlmsg_type != RTM_NEWADDR || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)) ||
	    ifa->ifa_family != f->want->family || f->ifindex)
		return 0;
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)));
	for (rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		/* IFA_LOCAL is the interface's address; IFA_ADDRESS the peer's on p2p links. */
		if ((rta->rta_type == IFA_LOCAL || rta->rta_type == IFA_ADDRESS) &&
		    RTA_PAYLOAD(rta) == alen && !memcmp(RTA_DATA(rta), f->want->addr, alen)) {
			f->ifindex = (int)ifa->ifa_index;
			break;
		}
	}
	return 0;
}

int vnic_nl_addr_owner(struct vnic_nl *nl, const struct vnic_nl_addr *a)
{
	struct ifaddrmsg ifa = { .ifa_family = (uint8_t)a->family };
	struct addr_find f = { .want = a };
	struct nl_req r;
	int err;

	req_init(&r, RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof(ifa));
	err = nl_talk(nl, &r, addr_find_msg, &f);
	return err ? err : f.ifindex;
}

int vnic_nl_addr_parse(const char *s, int family, struct vnic_nl_addr *a)
{
	unsigned int max = family == AF_INET6 ? 128 : 32;
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	unsigned long prefix;
	char *end;
	size_t n;

	memset(a, 0, sizeof(*a));
	a->family = family;
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (!n || n >= INET6_ADDRSTRLEN)
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(family, buf, a->addr) != 1)
		return -EINVAL;
	if (!slash) {
		a->prefix = max;
		return 0;
	}
	prefix = strtoul(slash + 1, &end, 10);
	if (!slash[1] || *end || prefix > max)
		return -EINVAL;
	a->prefix = (unsigned int)prefix;
	return 0;
}

const char *vnic_nl_addr_str(const struct vnic_nl_addr *a, char *buf, unsigned int len)
{
	if (!inet_ntop(a->family, a->addr, buf, len))
		snprintf(buf, len, "?");
	return buf;
}
