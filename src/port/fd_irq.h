/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/port: a wire's receive "interrupt" on a file descriptor,
 * shared by the AF_PACKET and AF_XDP wires (afpacket.c, afxdp.c).
 *
 * The fd is registered on the receiving device's cpu and watched (EPOLLIN)
 * only while the device's rx irq is armed; the cpu's run on readiness
 * disarms it, stops watching and calls wire->notify once (the device's NAPI
 * schedule). epoll is level-triggered, so what became ready between the
 * device's last peek and its re-arm is reported by the next look; the
 * wire's own irq pending() checks its ring as well. Everything here runs on
 * that cpu: no atomics.
 */
#ifndef VNIC_PORT_FD_IRQ_H
#define VNIC_PORT_FD_IRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "port.h"

struct vnic_fd_irq {
	struct vnic_poller poller;
	struct vnic_cpu *cpu;
	struct vnic_wire *wire;
	uint64_t *notifies; /* the wire's counter of notifications */
	int fd;
	bool armed;
	uint32_t watching;
};

/*
 * Before cpu starts: registers a poller named name (kept by the cpu: it
 * must outlive it) and fd, not watched yet. 0 or what vnic_cpu_add and
 * vnic_cpu_add_fd return.
 */
int vnic_fd_irq_init(struct vnic_fd_irq *irq, struct vnic_cpu *cpu, struct vnic_wire *wire, int fd,
		     const char *name, uint64_t *notifies);
/* The wire's irq enable (on) and disable (off), on cpu. */
void vnic_fd_irq_arm(struct vnic_fd_irq *irq, bool on);

#endif /* VNIC_PORT_FD_IRQ_H */
