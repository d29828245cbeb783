// SPDX-License-Identifier: MIT
/*
 * The two hosts of a workload: set up together (nothing is registered with a
 * cpu until both are known to fit, since a cpu cannot drop a poller), started
 * and stopped together through flags their pollers read. Start reads the
 * netdevs again: what a driver negotiated when it opened (offloads, MTU,
 * queues) is known only then. Spread over queue pairs (struct work_pairs),
 * a pair of hosts per queue pair, all set up before any is registered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "work_int.h"

static unsigned int free_poller_slots(const struct vnic_cpu *cpu)
{
	return VNIC_CPU_MAX_POLLERS - cpu->npollers;
}

/* Both hosts, nothing registered yet. */
static int pair_setup(struct work_pair *p, struct vnic_netdev *adev, struct vnic_pkt_pool *apool,
		      struct vnic_netdev *bdev, struct vnic_pkt_pool *bpool, unsigned int nconns,
		      const struct vnic_tcpl_opts *opts, const struct tcpl_app *aapp,
		      const struct tcpl_app *bapp, void *app_ctx, const struct work_queue *wq)
{
	static const struct vnic_tcpl_opts defaults;
	int err;

	memset(p, 0, sizeof(*p));
	if (!adev || !bdev || adev == bdev || !apool || !bpool || apool == bpool)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	err = vnic_tcpl_host_init(&p->a, adev, apool, nconns, true, opts, aapp, app_ctx, &p->ctl,
				  wq);
	if (err)
		return err;
	err = vnic_tcpl_host_init(&p->b, bdev, bpool, nconns, false, opts, bapp, app_ctx, &p->ctl,
				  wq);
	if (err)
		vnic_tcpl_host_fini(&p->a);
	return err;
}

/*
 * Whether every host of pairs[0..n) can have its poller: vnic_cpu_add
 * refuses a started cpu, and a cpu cannot drop a poller, so this is known
 * before any is added. 0, -EBUSY or -ENOSPC.
 */
static int pairs_room(const struct work_pair *pairs, unsigned int n)
{
	for (unsigned int i = 0; i < 2 * n; i++) {
		const struct vnic_cpu *cpu = (i & 1 ? &pairs[i / 2].b : &pairs[i / 2].a)->cpu;
		unsigned int want = 0;

		if (cpu->thread)
			return -EBUSY;
		for (unsigned int j = 0; j < 2 * n; j++)
			want += (j & 1 ? &pairs[j / 2].b : &pairs[j / 2].a)->cpu == cpu;
		if (free_poller_slots(cpu) < want)
			return -ENOSPC;
	}
	return 0;
}

/* Cannot fail: pairs_room said the cpus are idle and have room. */
static void pair_register(struct work_pair *p, const char *aname, const char *bname)
{
	vnic_tcpl_host_pair(&p->a, &p->b);
	(void)vnic_tcpl_host_register(&p->a, aname);
	(void)vnic_tcpl_host_register(&p->b, bname);
}

int vnic_work_pair_init(struct work_pair *p, struct vnic_netdev *adev, struct vnic_pkt_pool *apool,
			struct vnic_netdev *bdev, struct vnic_pkt_pool *bpool, unsigned int nconns,
			const struct vnic_tcpl_opts *opts, const struct tcpl_app *aapp,
			const struct tcpl_app *bapp, void *app_ctx, const char *aname,
			const char *bname, const struct work_queue *wq)
{
	int err = pair_setup(p, adev, apool, bdev, bpool, nconns, opts, aapp, bapp, app_ctx, wq);

	if (err)
		return err;
	err = pairs_room(p, 1);
	if (err) {
		vnic_work_pair_fini(p);
		return err;
	}
	pair_register(p, aname, bname);
	return 0;
}

void vnic_work_pair_fini(struct work_pair *p)
{
	vnic_tcpl_host_fini(&p->a);
	vnic_tcpl_host_fini(&p->b);
}

/* The pollers read what start configured only after they see this. */
static void publish_started(struct work_pair *p)
{
	/* Release: the hosts' netdev-derived configuration (sync) is written
	 * on this thread; the pollers acquire the flag before using it. */
	atomic_store_explicit(&p->ctl.started, 1, memory_order_release);
}

void vnic_work_pair_start(struct work_pair *p)
{
	/* Once: a second sync would race with the running pollers. Only the
	 * starting thread writes the flag, so a relaxed look suffices. */
	if (atomic_load_explicit(&p->ctl.started, memory_order_relaxed))
		return;
	vnic_tcpl_host_sync(&p->a, &p->b);
	vnic_tcpl_host_sync(&p->b, &p->a);
	publish_started(p);
	vnic_poller_schedule(&p->a.poller);
	vnic_poller_schedule(&p->b.poller);
}

void vnic_work_pair_stop(struct work_pair *p)
{
	atomic_store_explicit(&p->ctl.stop, 1, memory_order_release);
	vnic_poller_schedule(&p->a.poller);
	vnic_poller_schedule(&p->b.poller);
}

bool vnic_work_pair_quiesced(const struct work_pair *p)
{
	return vnic_tcpl_host_quiet(&p->a) && vnic_tcpl_host_quiet(&p->b);
}

void vnic_work_pair_results(const struct work_pair *p, struct vnic_work_results *r)
{
	memset(r, 0, sizeof(*r));
	vnic_tcpl_host_results(&p->a, r);
	vnic_tcpl_host_results(&p->b, r);
}

void vnic_work_pair_set_origin(struct work_pair *p, uint32_t iss_a, uint32_t iss_b, uint64_t off)
{
	unsigned int i;

	for (i = 0; i < p->a.nconns; i++) {
		vnic_tcpl_conn_set_origin(&p->a.conns[i], iss_a - i * 0x10000u, off);
		vnic_tcpl_conn_set_origin(&p->b.conns[i], iss_b - i * 0x10000u, off);
	}
	for (i = 0; i < p->a.nconns; i++) {
		vnic_tcpl_conn_key(&p->a.conns[i], &p->b.keys[i]);
		vnic_tcpl_conn_key(&p->b.conns[i], &p->a.keys[i]);
	}
}

/* ---- a workload spread over queue pairs ---------------------------------- */

int vnic_work_pairs_init(struct work_pairs *ps, unsigned int n, struct vnic_netdev *adev,
			 struct vnic_pkt_pool *const *apools, struct vnic_netdev *bdev,
			 struct vnic_pkt_pool *const *bpools, unsigned int nconns,
			 const struct vnic_tcpl_opts *opts, const struct tcpl_app *aapp,
			 const struct tcpl_app *bapp, void *app_ctx, const char *aname,
			 const char *bname)
{
	struct work_queue wq = { .mux = { &ps->mux[0], &ps->mux[1] } };
	unsigned int q;
	int err;

	memset(ps, 0, sizeof(*ps));
	if (!n || n > HOST_MAX_QUEUES || n > nconns)
		return -EINVAL;
	ps->pair = aligned_alloc(VNIC_CACHELINE, n * sizeof(*ps->pair));
	if (!ps->pair)
		return -ENOMEM;
	/* blocks of connections, the first ones a connection larger */
	for (q = 0; q < n; q++) {
		unsigned int k = nconns / n + (q < nconns % n);

		wq.q = q;
		/* one pair: a host per netdev, as the workload always ran */
		err = pair_setup(&ps->pair[q], adev, apools[q], bdev, bpools[q], k, opts, aapp,
				 bapp, app_ctx, n > 1 ? &wq : NULL);
		if (err)
			goto err_fini;
		ps->n = q + 1;
		wq.base += k;
	}
	err = pairs_room(ps->pair, n);
	if (err)
		goto err_fini;
	for (q = 0; q < n; q++)
		pair_register(&ps->pair[q], aname, bname);
	return 0;

err_fini:
	vnic_work_pairs_fini(ps);
	return err;
}

void vnic_work_pairs_fini(struct work_pairs *ps)
{
	for (unsigned int q = 0; q < ps->n; q++)
		vnic_work_pair_fini(&ps->pair[q]);
	free(ps->pair);
	memset(ps, 0, sizeof(*ps));
}

void vnic_work_pairs_start(struct work_pairs *ps)
{
	for (unsigned int q = 0; q < ps->n; q++)
		vnic_work_pair_start(&ps->pair[q]);
}

void vnic_work_pairs_stop(struct work_pairs *ps)
{
	for (unsigned int q = 0; q < ps->n; q++)
		vnic_work_pair_stop(&ps->pair[q]);
}

bool vnic_work_pairs_quiesced(const struct work_pairs *ps)
{
	for (unsigned int q = 0; q < ps->n; q++)
		if (!vnic_work_pair_quiesced(&ps->pair[q]))
			return false;
	return true;
}

void vnic_work_pairs_results(const struct work_pairs *ps, struct vnic_work_results *r)
{
	memset(r, 0, sizeof(*r));
	for (unsigned int q = 0; q < ps->n; q++) {
		vnic_tcpl_host_results(&ps->pair[q].a, r);
		vnic_tcpl_host_results(&ps->pair[q].b, r);
	}
	for (unsigned int m = 0; m < 2; m++)
		for (unsigned int q = 0; q < HOST_MAX_QUEUES; q++)
			r->err.rx_overflow += vnic_ctr_read(&ps->mux[m].stray[q]);
}

const struct tcpl_conn *vnic_work_pairs_b_conn(const struct work_pairs *ps, unsigned int i)
{
	for (unsigned int q = 0; q < ps->n; q++) {
		const struct vnic_tcpl_host *b = &ps->pair[q].b;

		if (i >= b->base && i - b->base < b->nconns)
			return &b->conns[i - b->base];
	}
	return NULL;
}
