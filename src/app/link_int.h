/* SPDX-License-Identifier: MIT */
/*
 * Private to src/app: the pieces of `vnic link`.
 *
 *   netlink.c  network namespaces (as iproute2 names them, under /run/netns)
 *              and the few rtnetlink requests link needs (ifindex, move into
 *              a namespace, MTU, up, addresses), on plain AF_NETLINK sockets
 *   link.c     the command: options, the topology, set-up and teardown
 *
 * Everything here is setup and control path: 0 or -errno, no messages
 * printed (the command turns errors into one line for the user). The pcap
 * mirror, which link shares with the bench runner, is in pcap_int.h.
 */
#ifndef VNIC_APP_LINK_INT_H
#define VNIC_APP_LINK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

/* ---------------------------------------------------------------------------
 * Network namespaces (netlink.c)
 * ------------------------------------------------------------------------- */

#define VNIC_NETNS_RUN_DIR "/run/netns"

/*
 * Creates the named namespace the way `ip netns add` does, so `ip netns exec
 * NAME` and `ip -n NAME` work on it: an empty file /run/netns/NAME with the
 * namespace bind-mounted onto it (from a helper thread that unshares its
 * network namespace; the caller's own namespace is untouched). 0, -EEXIST
 * (the name is taken), -EINVAL (not a valid name), or another -errno.
 */
int vnic_netns_create(const char *name);
/* Whether NAME is a name the functions here take (one path component, as ip netns insists). */
bool vnic_netns_name_ok(const char *name);
/* Opens /run/netns/NAME (O_RDONLY, O_CLOEXEC). fd or -errno (-ENOENT: no such namespace). */
int vnic_netns_open(const char *name);
/* Unmounts and removes /run/netns/NAME: the namespace dies with its last user. 0 or -errno. */
int vnic_netns_delete(const char *name);

/* ---------------------------------------------------------------------------
 * rtnetlink (netlink.c)
 * ------------------------------------------------------------------------- */

struct vnic_nl {
	int fd;
	uint32_t seq;
	uint32_t portid;
};

struct vnic_nl_addr {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned int prefix;
};

/*
 * A route socket in the network namespace netns_fd (-1: the caller's). The
 * socket stays in that namespace for its whole life, whatever thread uses
 * it later. 0 or -errno.
 */
int vnic_nl_open(struct vnic_nl *nl, int netns_fd);
void vnic_nl_close(struct vnic_nl *nl);
/* ifindex (> 0) of the interface called name, or -errno (-ENODEV: none). */
int vnic_nl_link_index(struct vnic_nl *nl, const char *name);
/* Moves ifindex into the namespace netns_fd, renamed to new_name if not NULL. */
int vnic_nl_link_move(struct vnic_nl *nl, int ifindex, int netns_fd, const char *new_name);
/* MTU (0: unchanged) and administrative state. */
int vnic_nl_link_set(struct vnic_nl *nl, int ifindex, uint32_t mtu, bool up);
/* What link reads of an interface. */
struct vnic_nl_link {
	uint32_t mtu;
	uint32_t flags;		/* IFF_* */
	uint16_t type;		/* ARPHRD_*: the link layer (ifi_type) */
};

/* Reads the MTU, IFF_* flags and link type of ifindex. 0, -ENODEV or -errno. */
int vnic_nl_link_get(struct vnic_nl *nl, int ifindex, struct vnic_nl_link *out);
/* Sets the MTU of ifindex, nothing else. 0 or the kernel's -errno. */
int vnic_nl_link_set_mtu(struct vnic_nl *nl, int ifindex, uint32_t mtu);

/*
 * A non-blocking route socket in the namespace netns_fd (-1: the caller's)
 * that receives the kernel's link events (RTNLGRP_LINK: every RTM_NEWLINK,
 * whoever changed the link), for a poll loop. Not for requests. 0 or -errno.
 */
int vnic_nl_open_link_events(struct vnic_nl *nl, int netns_fd);
typedef void (*vnic_nl_link_fn)(void *ctx, int ifindex, const struct vnic_nl_link *li);
/*
 * Reads every pending event of such a socket, without waiting, and calls fn
 * for each link (mtu 0 when the event has none). 0 when none is left,
 * -ENOBUFS when the kernel dropped events for want of room (read the state
 * again with vnic_nl_link_get), or another -errno.
 */
int vnic_nl_link_events(struct vnic_nl *nl, vnic_nl_link_fn fn, void *ctx);
/* Adds the address; IPv6 without duplicate address detection, so it is usable at once. */
int vnic_nl_addr_add(struct vnic_nl *nl, int ifindex, const struct vnic_nl_addr *a);
/* The ifindex holding address a (any prefix) in the socket's namespace, 0 if none, or -errno. */
int vnic_nl_addr_owner(struct vnic_nl *nl, const struct vnic_nl_addr *a);
/* "10.0.0.1/24" or "fd00::1/64" of the given family. 0 or -EINVAL. */
int vnic_nl_addr_parse(const char *s, int family, struct vnic_nl_addr *a);
/* The address without its prefix, for messages. */
const char *vnic_nl_addr_str(const struct vnic_nl_addr *a, char *buf, unsigned int len);

#endif /* VNIC_APP_LINK_INT_H */
