// SPDX-License-Identifier: MIT
/*
 * The two hosts of a workload: set up together (nothing is registered with a
 * cpu until both are known to fit, since a cpu cannot drop a poller), started
 * and stopped together through flags their pollers read.
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

void vnic_work_pair_start(struct work_pair *p)
{
	atomic_store_explicit(&p->ctl.started, 1, memory_order_release);
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
