// SPDX-License-Identifier: MIT
/* A wire's receive "interrupt" on a file descriptor (contract in fd_irq.h). */
#include <sys/epoll.h>

#include "fd_irq.h"

static void watch(struct vnic_fd_irq *irq, uint32_t events)
{
	if (irq->watching != events && vnic_cpu_mod_fd(irq->cpu, irq->fd, events) == 0)
		irq->watching = events;
}

void vnic_fd_irq_arm(struct vnic_fd_irq *irq, bool on)
{
	irq->armed = on;
	watch(irq, on ? EPOLLIN : 0);
}

/* The "interrupt": the fd is readable and the receiver sleeps. */
static int fd_irq_poll(struct vnic_poller *p, int budget)
{
	struct vnic_fd_irq *irq = vnic_container_of(p, struct vnic_fd_irq, poller);

	(void)budget;
	if (!irq->armed) {
		watch(irq, 0);
		return 0;
	}
	vnic_fd_irq_arm(irq, false);
	vnic_ctr_add(irq->notifies, 1);
	if (irq->wire->notify)
		irq->wire->notify(irq->wire->notify_ctx);
	return 0;
}

int vnic_fd_irq_init(struct vnic_fd_irq *irq, struct vnic_cpu *cpu, struct vnic_wire *wire, int fd,
		     const char *name, uint64_t *notifies)
{
	int err;

	irq->cpu = cpu;
	irq->wire = wire;
	irq->notifies = notifies;
	irq->fd = fd;
	irq->armed = false;
	irq->watching = 0;
	err = vnic_cpu_add(cpu, &irq->poller, name, fd_irq_poll);
	if (err)
		return err;
	/* watched only while the receiver's irq is armed */
	return vnic_cpu_add_fd(cpu, fd, 0, &irq->poller);
}
