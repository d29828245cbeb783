/* SPDX-License-Identifier: MIT */
/*
 * The spin-peek sequence of a backing wire (tests/port/test_afpacket.c,
 * test_afxdp.c): a spinning cpu's look at the wire's receive ring, its spin
 * source, checked without the cpu running. Each test creates its wire on a
 * cpu that is not started and hands over what differs between the two
 * harnesses: how a frame is sent onto the wire and taken from it, and how
 * the wire's notifications are counted.
 */
#ifndef VNIC_TEST_SPIN_PEEK_H
#define VNIC_TEST_SPIN_PEEK_H

#include <stdint.h>

#include "core/core.h"

struct vnic_test_peek {
	struct vnic_cpu *cpu;	/* the wire's cpu: initialised, never started */
	struct vnic_wire *w;	/* created on cpu; its notify is set here */
	int s;			/* a raw socket on the far end of the wire */
	uint64_t guard_ns;	/* hang guard of each wait */
	/* sends the test's frame id on s */
	void (*send)(int s, uint32_t id);
	/* peeks until frame id came (hang guard), checks it and releases it */
	void (*take)(struct vnic_wire *w, uint32_t id);
	/* the wire's rx_notifies counter */
	uint64_t (*notifies)(struct vnic_wire *w);
};

/*
 * The peek sees a frame only while the irq is armed, and its hit notifies
 * through the irq's poller. The frame's edge, still queued, is not
 * reported once the frame was taken (epoll asks the socket again): no
 * second notification on an empty ring, and the irq stays armed for the
 * next frame, which notifies. Sends frames 0 and 1 and takes both.
 */
void vnic_test_spin_peek(const struct vnic_test_peek *t);

#endif /* VNIC_TEST_SPIN_PEEK_H */
