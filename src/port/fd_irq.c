// SPDX-License-Identifier: MIT
/* A wire's receive "interrupt" on a file descriptor (contract in fd_irq.h). */
#include <sys/epoll.h>

#include "fd_irq.h"

/*
 * Masking is this flag alone: the fd stays in the cpu's epoll set, so an
 * arm and a disarm cost no epoll_ctl, which would be two syscalls per
 * notification: per frame received, on a request/response.
 */
void vnic_fd_irq_arm(struct vnic_fd_irq *irq, bool on)
{
	irq->armed = on;
}

/* The "interrupt": a frame arrived (an edge) while the receiver sleeps. */
static int fd_irq_poll(struct vnic_poller *p, int budget)
{
	struct vnic_fd_irq *irq = vnic_container_of(p, struct vnic_fd_irq, poller);

	(void)budget;
	/*
	 * masked: the device's NAPI is polling the ring, or will (pending()).
	 * Armed, the ring holds a frame: epoll reports an edge only if the
	 * socket's poll, asked again then, finds one (fd_irq.h).
	 */
	if (!irq->armed)
		return 0;
	irq->armed = false;
	vnic_ctr_add(irq->notifies, 1);
	if (irq->wire->notify)
		irq->wire->notify(irq->wire->notify_ctx);
	return 0;
}

int vnic_fd_irq_init(struct vnic_fd_irq *irq, struct vnic_cpu *cpu, struct vnic_wire *wire, int fd,
		     const char *name, uint64_t *notifies, bool (*ready)(struct vnic_fd_irq *irq))
{
	int err;

	irq->wire = wire;
	irq->notifies = notifies;
	irq->ready = ready;
	irq->fd = fd;
	irq->armed = false;
	err = vnic_cpu_add(cpu, &irq->poller, name, fd_irq_poll);
	if (err)
		return err;
	/*
	 * Edge-triggered, and watched from now on: the kernel wakes the socket
	 * for every frame it queues (sk_data_ready), each wake-up an edge, so
	 * a frame that lands while we are masked is reported once and ignored
	 * (the NAPI polls the ring), and one that lands after the NAPI's
	 * re-arm is a new edge. A level-triggered fd left in the set would be
	 * reported on every look while the ring holds frames the NAPI has not
	 * taken yet.
	 */
	return vnic_cpu_add_fd(cpu, fd, EPOLLIN | EPOLLET, &irq->poller);
}

/*
 * A spinning cpu's look: a frame landed that the device has not been told
 * of. Masked, its NAPI is on its way to the ring (as for an edge). A hit
 * runs the irq's poller, as the socket's edge would; that edge, still
 * queued, is reported by a later epoll_wait only while the ring still
 * holds a frame (epoll polls the socket again to report it), and then the
 * irq is masked, its NAPI on the way: ignored (fd_irq.h).
 */
static bool fd_irq_spin_peek(struct vnic_cpu_spin_src *src)
{
	struct vnic_fd_irq *irq = vnic_container_of(src, struct vnic_fd_irq, spin);

	return irq->armed && irq->ready(irq);
}

int vnic_fd_irq_spin_init(struct vnic_fd_irq *irq, struct vnic_cpu *cpu)
{
	int err;

	/* The kernel wakes the socket for every frame whether we spin or not: no flag to raise. */
	irq->spin.polling = NULL;
	irq->spin.peek = fd_irq_spin_peek;
	irq->spin.poller = &irq->poller;
	err = vnic_cpu_add_spin_src(cpu, &irq->spin);
	if (err)
		return err;
	return vnic_cpu_fd_look_by_src(cpu, irq->fd);
}
