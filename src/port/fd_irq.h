/* SPDX-License-Identifier: MIT */
/*
 * Internal to src/port: a wire's receive "interrupt" on a file descriptor,
 * shared by the AF_PACKET and AF_XDP wires (afpacket.c, afxdp.c).
 *
 * The fd is registered on the receiving device's cpu, edge-triggered, and
 * stays watched: the kernel wakes the socket for every frame it queues, and
 * each wake-up is an edge. The mask is a flag: the cpu's run on an edge while
 * the device's rx irq is armed disarms it and calls wire->notify once (the
 * device's NAPI schedule); an edge while masked is ignored, the NAPI being
 * on its way to the ring. What landed between the device's last peek and its
 * re-arm raised its edge while masked: the NAPI's re-arm check (the wire's
 * irq pending(), which looks at the ring) finds it. Everything here runs on
 * that cpu: no atomics.
 */
#ifndef VNIC_PORT_FD_IRQ_H
#define VNIC_PORT_FD_IRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "port.h"

struct vnic_fd_irq {
	struct vnic_poller poller;
	struct vnic_wire *wire;
	uint64_t *notifies; /* the wire's counter of notifications */
	bool (*ready)(struct vnic_fd_irq *irq); /* the ring holds a frame not yet taken */
	struct vnic_cpu_spin_src spin;		/* a busy-polling cpu's look at the ring */
	int fd;
	bool armed;
};

/*
 * Before cpu starts: registers a poller named name (kept by the cpu: it
 * must outlive it) and fd, watched from then on, masked. notifies is the
 * wire's counter of notifications, ready its look at the ring. 0 or what
 * vnic_cpu_add and vnic_cpu_add_fd return.
 */
int vnic_fd_irq_init(struct vnic_fd_irq *irq, struct vnic_cpu *cpu, struct vnic_wire *wire, int fd,
		     const char *name, uint64_t *notifies, bool (*ready)(struct vnic_fd_irq *irq));
/*
 * Before cpu starts, after init: a busy-polling cpu looks at the ring
 * (ready()) on every turn of its spin instead of asking epoll about fd, no
 * syscall a look (vnic_cpu_fd_look_by_src). For a ring whose producer the
 * kernel publishes before it wakes the socket: an AF_PACKET ring's status
 * words, an AF_XDP RX ring's producer index. 0 or what
 * vnic_cpu_add_spin_src and vnic_cpu_fd_look_by_src return.
 */
int vnic_fd_irq_spin_init(struct vnic_fd_irq *irq, struct vnic_cpu *cpu);
/* The wire's irq enable (on) and disable (off), on cpu. */
void vnic_fd_irq_arm(struct vnic_fd_irq *irq, bool on);

#endif /* VNIC_PORT_FD_IRQ_H */
