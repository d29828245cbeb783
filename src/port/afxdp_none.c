// SPDX-License-Identifier: MIT
/*
 * The AF_XDP wire when vnic is built without libxdp and libbpf (CMake found
 * no libxdp-dev, libbpf-dev): the same symbols, and every create says
 * -EOPNOTSUPP, so callers need no build-time switch of their own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "port.h"

int vnic_afxdp_create(struct vnic_wire **w, const char *ifname, const struct vnic_afxdp_config *cfg,
		      struct vnic_cpu *rx_cpu)
{
	(void)ifname;
	(void)cfg;
	(void)rx_cpu;
	if (w)
		*w = NULL;
	return -EOPNOTSUPP;
}

void vnic_afxdp_destroy(struct vnic_wire *w)
{
	(void)w;
}

void vnic_afxdp_stats(const struct vnic_wire *w, struct vnic_afxdp_stats *st)
{
	(void)w;
	memset(st, 0, sizeof(*st));
}

unsigned int vnic_afxdp_counters(const struct vnic_wire *w, struct vnic_counter *out,
				 unsigned int max)
{
	(void)w;
	(void)out;
	(void)max;
	return 0;
}

const char *vnic_afxdp_mode_name(const struct vnic_wire *w)
{
	(void)w;
	return "unavailable";
}

const char *vnic_afxdp_mode_note(const struct vnic_wire *w)
{
	(void)w;
	return "";
}

void vnic_afxdp_last_error(char *buf, size_t len)
{
	if (len)
		snprintf(buf, len,
			 "vnic was built without libxdp (apt-get install libxdp-dev libbpf-dev)");
}

bool vnic_afxdp_available(void)
{
	return false;
}
