// SPDX-License-Identifier: MIT
/*
 * The two hosts of a workload: set up together (nothing is registered with a
 * cpu until both are known to fit, since a cpu cannot drop a poller), started
 * and stopped together through flags their pollers read. Start reads the
 * netdevs again: what a driver negotiated when it opened (offloads, MTU,
 * queues) is known only then.
 */
#include <errno.h>
#include <string.h>

#include "work_int.h"

static unsigned int free_poller_slots(const struct vnic_cpu *cpu)
{
	return VNIC_CPU_MAX_POLLERS - cpu->npollers;
}

int vnic_work_pair_init(struct work_pair *p, struct vnic_netdev *adev, struct vnic_pkt_pool *apool,
			struct vnic_netdev *bdev, struct vnic_pkt_pool *bpool, unsigned int nconns,
			const struct vnic_tcpl_opts *opts, const struct tcpl_app *aapp,
			const struct tcpl_app *bapp, void *app_ctx, const char *aname,
			const char *bname)
{
	static const struct vnic_tcpl_opts defaults;
	int err;

	memset(p, 0, sizeof(*p));
	if (!adev || !bdev || adev == bdev || !apool || !bpool || apool == bpool)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	err = vnic_tcpl_host_init(&p->a, adev, apool, nconns, true, opts, aapp, app_ctx, &p->ctl);
	if (err)
		return err;
	err = vnic_tcpl_host_init(&p->b, bdev, bpool, nconns, false, opts, bapp, app_ctx, &p->ctl);
	if (err)
		goto err_fini_a;
	/* vnic_cpu_add refuses a started cpu; better to know before. */
	if (p->a.cpu->thread || p->b.cpu->thread) {
		err = -EBUSY;
		goto err_fini_b;
	}
	if (free_poller_slots(p->a.cpu) < (p->a.cpu == p->b.cpu ? 2u : 1u) ||
	    free_poller_slots(p->b.cpu) < 1) {
		err = -ENOSPC;
		goto err_fini_b;
	}
	vnic_tcpl_host_pair(&p->a, &p->b);
	/* Cannot fail now: the cpus are idle and have room. */
	(void)vnic_tcpl_host_register(&p->a, aname);
	(void)vnic_tcpl_host_register(&p->b, bname);
	return 0;

err_fini_b:
	vnic_tcpl_host_fini(&p->b);
err_fini_a:
	vnic_tcpl_host_fini(&p->a);
	return err;
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
