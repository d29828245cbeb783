// SPDX-License-Identifier: MIT
/*
 * The switch of `vnic server --switch`, driven by hand (no cpu, no device):
 * flooding of unknown, broadcast and multicast destinations, learning,
 * ageing, a full MAC table, a station that moves, a port that goes away
 * (its MACs forgotten, frames queued to it dropped and counted), bad
 * lengths on either side, the doorbell only when armed, and a port owned
 * by a forked process that is killed while it sends.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "port/port.h"
#include "port/switch_int.h"

enum { NPORTS = 4, LEN = 100 };

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mcast[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};

struct sw {
	struct vnic_switch *sw;
	struct vnic_wire *w[NPORTS];
	uint8_t mac[NPORTS][6];
};

static void sw_open(struct sw *t, uint64_t aging_ns)
{
	struct vnic_switch_cfg cfg = { .ports = NPORTS, .aging_ns = aging_ns };

	memset(t, 0, sizeof(*t));
	assert_int_equal(vnic_switch_create(&t->sw, &cfg), 0);
	for (unsigned int p = 0; p < NPORTS; p++) {
		vnic_switch_port_mac(p, t->mac[p]);
		assert_int_equal(vnic_switch_port_claim(t->sw, p), 0);
		assert_int_equal(vnic_switch_port_open(t->sw, p, NULL, &t->w[p]), 0);
	}
}

static void sw_close(struct sw *t)
{
	for (unsigned int p = 0; p < NPORTS; p++)
		vnic_switch_port_close(t->w[p]);
	vnic_switch_destroy(t->sw);
}

/* One frame of len bytes from port `from`: dst, src, IPv4 type, payload starting with id. */
static void send_len(struct sw *t, unsigned int from, const uint8_t *dst, const uint8_t *src,
		     uint8_t id, uint32_t len)
{
	struct vnic_wire *w = t->w[from];
	struct vnic_pkt *slot;

	assert_int_equal(w->ops->tx_reserve(w, &slot, 1), 1);
	memcpy(slot->data, dst, 6);
	memcpy(slot->data + 6, src, 6);
	slot->data[12] = 0x08;
	slot->data[13] = 0x00;
	if (len > VNIC_ETH_HLEN)
		memset(slot->data + VNIC_ETH_HLEN, id, len - VNIC_ETH_HLEN);
	slot->len = len;
	w->ops->tx_commit(w, &slot, 1, 1);
}

static void send(struct sw *t, unsigned int from, const uint8_t *dst, uint8_t id)
{
	send_len(t, from, dst, t->mac[from], id, LEN);
}

/* Frames waiting at port p, all released; their ids (first payload byte) in ids[]. */
static unsigned int recv_ids(struct sw *t, unsigned int p, uint8_t *ids, unsigned int max)
{
	struct vnic_wire *w = t->w[p];
	struct vnic_pkt *f[64];
	unsigned int n = w->ops->rx_peek(w, f, 64);

	for (unsigned int i = 0; i < n && i < max; i++) {
		assert_int_equal(f[i]->len, LEN);
		ids[i] = f[i]->data[VNIC_ETH_HLEN];
	}
	w->ops->rx_release(w, n);
	return n;
}

static unsigned int recv_n(struct sw *t, unsigned int p)
{
	uint8_t ids[64];

	return recv_ids(t, p, ids, 64);
}

static struct vnic_switch_port_stats stats_of(struct sw *t, unsigned int p)
{
	struct vnic_switch_port_stats st;

	vnic_switch_port_stats(t->w[p], &st);
	return st;
}

static void test_flood_then_learn(void **state)
{
	struct sw t;
	uint8_t id;

	(void)state;
	sw_open(&t, 0);
	/* nobody knows port 1's MAC yet: every other port gets it */
	send(&t, 0, t.mac[1], 7);
	for (unsigned int p = 1; p < NPORTS; p++) {
		assert_int_equal(recv_ids(&t, p, &id, 1), 1);
		assert_int_equal(id, 7);
	}
	assert_int_equal(recv_n(&t, 0), 0);
	assert_int_equal(stats_of(&t, 0).flooded, 1);
	assert_int_equal(stats_of(&t, 0).forwarded, NPORTS - 1);
	assert_int_equal(stats_of(&t, 0).learned, 1);
	/* port 0 was learned from that frame: the answer goes to it alone */
	send(&t, 1, t.mac[0], 8);
	assert_int_equal(recv_ids(&t, 0, &id, 1), 1);
	assert_int_equal(id, 8);
	assert_int_equal(recv_n(&t, 2) + recv_n(&t, 3), 0);
	/* and now port 1 is known too */
	send(&t, 0, t.mac[1], 9);
	assert_int_equal(recv_ids(&t, 1, &id, 1), 1);
	assert_int_equal(id, 9);
	assert_int_equal(recv_n(&t, 2) + recv_n(&t, 3), 0);
	assert_int_equal(stats_of(&t, 0).flooded, 1);
	/* a frame to the port it came from goes nowhere */
	send_len(&t, 0, t.mac[0], t.mac[0], 1, LEN);
	assert_int_equal(stats_of(&t, 0).drop_local, 1);
	assert_int_equal(recv_n(&t, 1) + recv_n(&t, 2) + recv_n(&t, 3), 0);
	sw_close(&t);
}

static void test_broadcast_multicast_flood(void **state)
{
	struct sw t;

	(void)state;
	sw_open(&t, 0);
	/* known or not, a group address floods */
	send(&t, 1, t.mac[2], 1);
	send(&t, 2, t.mac[1], 1);
	for (unsigned int p = 0; p < NPORTS; p++)
		recv_n(&t, p);
	send(&t, 2, bcast, 2);
	send(&t, 2, mcast, 3);
	assert_int_equal(recv_n(&t, 0), 2);
	assert_int_equal(recv_n(&t, 1), 2);
	assert_int_equal(recv_n(&t, 3), 2);
	assert_int_equal(recv_n(&t, 2), 0);
	assert_int_equal(stats_of(&t, 2).flooded, 2);
	/* a group address as the source is not a station: dropped, not learned */
	send_len(&t, 3, t.mac[0], mcast, 4, LEN);
	assert_int_equal(stats_of(&t, 3).drop_bad_src, 1);
	assert_int_equal(vnic_switch_lookup(t.sw, mcast, vnic_now_ns()), -1);
	sw_close(&t);
}

static void test_aging(void **state)
{
	const uint8_t m[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct sw t;
	bool moved;

	(void)state;
	sw_open(&t, 1000);
	assert_int_equal(vnic_switch_learn(t.sw, m, 2, 5000, &moved), 1);
	assert_int_equal(vnic_switch_lookup(t.sw, m, 5000), 2);
	assert_int_equal(vnic_switch_lookup(t.sw, m, 6000), 2);
	assert_int_equal(vnic_switch_lookup(t.sw, m, 6001), -1);
	/* seen again: refreshed, not a new entry */
	assert_int_equal(vnic_switch_learn(t.sw, m, 2, 6500, &moved), 0);
	assert_false(moved);
	assert_int_equal(vnic_switch_lookup(t.sw, m, 7400), 2);
	sw_close(&t);
}

static void test_move(void **state)
{
	struct sw t;
	uint8_t id;

	(void)state;
	sw_open(&t, 0);
	send(&t, 0, bcast, 1);
	assert_int_equal(vnic_switch_lookup(t.sw, t.mac[0], vnic_now_ns()), 0);
	/* port 0's station shows up behind port 3 */
	send_len(&t, 3, bcast, t.mac[0], 2, LEN);
	assert_int_equal(vnic_switch_lookup(t.sw, t.mac[0], vnic_now_ns()), 3);
	assert_int_equal(stats_of(&t, 3).moves, 1);
	for (unsigned int p = 0; p < NPORTS; p++)
		recv_n(&t, p);
	send(&t, 1, t.mac[0], 5);
	assert_int_equal(recv_ids(&t, 3, &id, 1), 1);
	assert_int_equal(id, 5);
	assert_int_equal(recv_n(&t, 0), 0);
	/* and back at once: port 0 learnt it moments ago, yet takes it back */
	send(&t, 0, bcast, 6);
	assert_int_equal(vnic_switch_lookup(t.sw, t.mac[0], vnic_now_ns()), 0);
	assert_int_equal(stats_of(&t, 0).moves, 1);
	sw_close(&t);
}

static void test_table_full(void **state)
{
	uint8_t m[6] = {0x02, 0, 0, 0, 0, 0}, unknown[6];
	unsigned int full = 0, learned = 0;
	uint64_t now = vnic_now_ns();
	struct sw t;
	bool moved;
	int r;

	(void)state;
	sw_open(&t, 0);
	/* more stations than entries: some find no room, none fails the switch */
	for (unsigned int i = 0; i < 2 * VNIC_SWITCH_MACS; i++) {
		m[4] = (uint8_t)(i >> 8);
		m[5] = (uint8_t)i;
		r = vnic_switch_learn(t.sw, m, 1, now, &moved);
		if (r == -ENOSPC) {
			full++;
			memcpy(unknown, m, 6);
		} else {
			assert_int_equal(r, 1);
			learned++;
		}
	}
	assert_true(full >= VNIC_SWITCH_MACS);
	assert_true(learned <= VNIC_SWITCH_MACS);
	assert_true(learned > VNIC_SWITCH_MACS / 2);
	/* a frame from a station with no room floods, and so does one to it */
	send_len(&t, 2, unknown, unknown, 1, LEN);
	assert_int_equal(stats_of(&t, 2).learn_full, 1);
	assert_int_equal(stats_of(&t, 2).flooded, 1);
	assert_int_equal(recv_n(&t, 0) + recv_n(&t, 1) + recv_n(&t, 3), NPORTS - 1);
	sw_close(&t);
}

static void test_port_goes_away(void **state)
{
	struct vnic_switch_stats st;
	struct sw t;

	(void)state;
	sw_open(&t, 0);
	send(&t, 2, bcast, 1);
	send(&t, 0, t.mac[2], 2);
	send(&t, 0, t.mac[2], 3);
	assert_int_equal(vnic_switch_lookup(t.sw, t.mac[2], vnic_now_ns()), 2);
	/* port 2's child ends with two frames queued to it */
	vnic_switch_port_close(t.w[2]);
	t.w[2] = NULL;
	vnic_switch_port_release(t.sw, 2);
	vnic_switch_stats(t.sw, &st);
	assert_int_equal(st.ports_released, 1);
	assert_int_equal(st.macs_forgotten, 1);
	assert_int_equal(st.dead_frames, 2);
	assert_int_equal(vnic_switch_lookup(t.sw, t.mac[2], vnic_now_ns()), -1);
	/* unknown again: flooded to the ports in use, not to the free one */
	for (unsigned int p = 0; p < NPORTS; p++)
		if (t.w[p])
			recv_n(&t, p);
	send(&t, 0, t.mac[2], 4);
	assert_int_equal(recv_n(&t, 1) + recv_n(&t, 3), 2);
	assert_int_equal(stats_of(&t, 0).forwarded, 2 + 2);
	/* a new client on the port starts with nothing queued */
	assert_int_equal(vnic_switch_port_open(t.sw, 2, NULL, &t.w[2]), -EINVAL);
	assert_int_equal(vnic_switch_port_claim(t.sw, 2), 0);
	assert_int_equal(vnic_switch_port_claim(t.sw, 2), -EBUSY);
	assert_int_equal(vnic_switch_port_open(t.sw, 2, NULL, &t.w[2]), 0);
	assert_int_equal(recv_n(&t, 2), 0);
	assert_int_equal(stats_of(&t, 2).rx_stale, 0);
	sw_close(&t);
}

static void test_bad_lengths(void **state)
{
	struct sw t;
	struct sw_ring *r;
	uint8_t ids[8];

	(void)state;
	sw_open(&t, 0);
	send(&t, 1, bcast, 1);
	send(&t, 0, bcast, 1);
	for (unsigned int p = 0; p < NPORTS; p++)
		recv_n(&t, p);
	/* the device's own: a runt and a frame over the MTU go nowhere */
	send_len(&t, 0, t.mac[1], t.mac[0], 1, VNIC_ETH_HLEN - 1);
	send_len(&t, 0, t.mac[1], t.mac[0], 1, VNIC_SWITCH_MTU + VNIC_ETH_HLEN + VNIC_VLAN_HLEN + 1);
	assert_int_equal(stats_of(&t, 0).drop_mtu, 2);
	assert_int_equal(recv_n(&t, 1), 0);
	/* a length scribbled in shared memory: the slot is skipped, the frames after it are not */
	send(&t, 0, t.mac[1], 2);
	send(&t, 0, t.mac[1], 3);
	send(&t, 0, t.mac[1], 4);
	r = ring(t.sw, 0, 1);
	slot(r, atomic_load(&r->tail))->len = 5;
	slot(r, atomic_load(&r->tail) + 1)->len = 1u << 30;
	assert_int_equal(recv_ids(&t, 1, ids, 8), 1);
	assert_int_equal(ids[0], 4);
	assert_int_equal(stats_of(&t, 1).rx_bad_len, 2);
	/* a head no producer could have written: the ring is emptied, nothing read */
	send(&t, 0, t.mac[1], 5);
	atomic_store(&r->head, atomic_load(&r->tail) + VNIC_SWITCH_RING_SLOTS + 7);
	assert_int_equal(recv_n(&t, 1), 0);
	assert_int_equal(stats_of(&t, 1).rx_bad_index, 1);
	sw_close(&t);
}

static void test_ring_full(void **state)
{
	struct sw t;

	(void)state;
	sw_open(&t, 0);
	send(&t, 1, bcast, 1);
	recv_n(&t, 0);
	recv_n(&t, 2);
	recv_n(&t, 3);
	for (unsigned int i = 0; i < VNIC_SWITCH_RING_SLOTS + 3; i++)
		send(&t, 0, t.mac[1], (uint8_t)i);
	assert_int_equal(stats_of(&t, 0).drop_full, 3);
	assert_int_equal(recv_n(&t, 1) + recv_n(&t, 1) + recv_n(&t, 1) + recv_n(&t, 1) +
				 recv_n(&t, 1),
			 VNIC_SWITCH_RING_SLOTS);
	sw_close(&t);
}

static void test_doorbell_when_armed(void **state)
{
	struct sw t;
	uint64_t v;

	(void)state;
	sw_open(&t, 0);
	send(&t, 0, bcast, 1);
	assert_int_equal(stats_of(&t, 0).doorbells, 0);
	assert_true(t.w[1]->ops->rx_irq->pending(t.w[1]));
	recv_n(&t, 1);
	assert_false(t.w[1]->ops->rx_irq->pending(t.w[1]));
	t.w[1]->ops->rx_irq->enable(t.w[1]);
	send(&t, 0, bcast, 2);
	send(&t, 0, bcast, 3);
	/* one ring for the arm, whatever follows it */
	assert_int_equal(stats_of(&t, 0).doorbells, 1);
	assert_int_equal(read(t.sw->efd[1], &v, sizeof(v)), (ssize_t)sizeof(v));
	assert_int_equal(v, 1);
	assert_int_equal(read(t.sw->efd[2], &v, sizeof(v)), -1);
	sw_close(&t);
}

/* A port in a child process, killed while it sends: the parent releases it and the rest go on. */
static void test_killed_child(void **state)
{
	struct vnic_switch_stats st;
	struct sw t;
	uint8_t id;
	pid_t pid;
	int status;

	(void)state;
	sw_open(&t, 0);
	vnic_switch_port_close(t.w[3]);
	t.w[3] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct vnic_wire *w;

		if (vnic_switch_port_open(t.sw, 3, NULL, &w))
			_exit(1);
		t.w[3] = w;
		send(&t, 3, bcast, 9);
		/* two frames for port 0, then wait for the end */
		send(&t, 3, t.mac[0], 10);
		for (;;)
			pause();
	}
	/* both flooded (port 0 is not known yet): port 2 sees them once sent */
	for (unsigned int got = 0, i = 0; got < 2; i++) {
		assert_true(i < 10000);
		got += recv_n(&t, 2);
		usleep(1000);
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(recv_n(&t, 0), 2);
	/* frames to the dead child's MAC, queued before the parent reaped it */
	send(&t, 0, t.mac[3], 11);
	vnic_switch_port_release(t.sw, 3);
	vnic_switch_stats(t.sw, &st);
	assert_int_equal(st.macs_forgotten, 1);
	assert_int_equal(st.dead_frames, 1);
	/* the others still talk */
	send(&t, 1, t.mac[0], 12);
	assert_int_equal(recv_ids(&t, 0, &id, 1), 1);
	assert_int_equal(id, 12);
	sw_close(&t);
}

static void test_bad_config(void **state)
{
	struct vnic_switch_cfg cfg = { .ports = 1 };
	struct vnic_switch *sw;
	uint8_t mac[6];

	(void)state;
	assert_int_equal(vnic_switch_create(&sw, &cfg), -EINVAL);
	cfg.ports = VNIC_SWITCH_MAX_PORTS + 1;
	assert_int_equal(vnic_switch_create(&sw, &cfg), -EINVAL);
	assert_int_equal(vnic_switch_create(&sw, NULL), -EINVAL);
	vnic_switch_port_mac(258, mac);
	/* locally administered unicast, the port in the last two bytes */
	assert_int_equal(mac[0], 0x02);
	assert_int_equal(mac[4], 1);
	assert_int_equal(mac[5], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_then_learn),
		cmocka_unit_test(test_broadcast_multicast_flood),
		cmocka_unit_test(test_aging),
		cmocka_unit_test(test_move),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_port_goes_away),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_ring_full),
		cmocka_unit_test(test_doorbell_when_armed),
		cmocka_unit_test(test_killed_child),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
