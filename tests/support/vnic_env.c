// SPDX-License-Identifier: MIT
/* The shared part of the device and driver test benches (see vnic_env.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vnic_env.h"

void vnic_env_create(struct vnic_env *v, const struct vnic_env_cfg *cfg)
{
	unsigned int i;

	assert_true(cfg->ncpus >= 1 && cfg->ncpus <= VNIC_ENV_MAX_CPUS);
	assert_true(cfg->nends >= 1 && cfg->nends <= VNIC_ENV_MAX_ENDS);
	memset(v, 0, sizeof(*v));
	v->ncpus = cfg->ncpus;
	v->nends = cfg->nends;
	for (i = 0; i < v->ncpus; i++)
		assert_int_equal(vnic_cpu_init(&v->cpu[i], cfg->cpu_names[i], 0), 0);
	assert_int_equal(vnic_cable_create(&v->cable, cfg->cable), 0);
	for (i = 0; i < v->nends; i++) {
		struct vnic_dev_config dc;
		unsigned int q;

		assert_true(cfg->dev_cpu[i] < v->ncpus);
		assert_int_equal(vnic_hv_create(&v->hv[i], VNIC_MAX_IND_DESCS, NULL), 0);
		if (cfg->dev[i])
			dc = *cfg->dev[i];
		else
			vnic_dev_config_default(&dc);
		/* a cable with a ring pair per queue pair: the device takes each as a wire */
		for (q = 1; cfg->cable && q < cfg->cable->queues; q++)
			dc.queue_wire[q] = vnic_cable_queue_end(v->cable, i, q);
		assert_int_equal(vnic_dev_create(&v->dev[i], v->hv[i], vnic_cable_end(v->cable, i),
						 &v->cpu[cfg->dev_cpu[i]], &dc),
				 0);
	}
	assert_int_equal(
		vnic_pkt_pool_init(&v->pool, cfg->pool_pkts, cfg->pool_size, cfg->pool_headroom),
		0);
}

void vnic_env_start(struct vnic_env *v)
{
	for (unsigned int i = 0; i < v->ncpus; i++)
		assert_int_equal(vnic_cpu_start(&v->cpu[i]), 0);
	v->threads = true;
}

void vnic_env_stop(struct vnic_env *v)
{
	for (unsigned int i = 0; i < v->ncpus; i++)
		vnic_cpu_stop(&v->cpu[i]);
}

void vnic_env_destroy(struct vnic_env *v)
{
	unsigned int i;

	for (i = 0; i < v->nends; i++)
		vnic_dev_destroy(v->dev[i]);
	for (i = 0; i < v->ncpus; i++)
		vnic_cpu_fini(&v->cpu[i]);
	vnic_cable_destroy(v->cable);
	for (i = 0; i < v->nends; i++)
		vnic_hv_destroy(v->hv[i]);
	assert_int_equal(v->pool.nfree, v->pool.count);
	vnic_pkt_pool_fini(&v->pool);
}

unsigned int vnic_env_cpus(struct vnic_env *v, struct vnic_cpu **cpus)
{
	for (unsigned int i = 0; i < v->ncpus; i++)
		cpus[i] = &v->cpu[i];
	return v->ncpus;
}

/*
 * Nothing scheduled, and no timer due soon. A timer further away than
 * VNIC_ENV_IDLE_HORIZON_NS is a watchdog's tick, not work in progress: the
 * driver's tx watchdog keeps one armed for as long as the link is up.
 */
static bool idle(void *ctx)
{
	struct vnic_env *v = ctx;
	uint64_t now = vnic_now_ns();

	for (unsigned int c = 0; c < v->ncpus; c++) {
		struct vnic_cpu *cpu = &v->cpu[c];

		if (atomic_load(&cpu->pending))
			return false;
		for (unsigned int i = 0; i < cpu->npollers; i++) {
			uint64_t d = cpu->pollers[i]->deadline_ns;

			if (d && (int64_t)(d - now) < (int64_t)VNIC_ENV_IDLE_HORIZON_NS)
				return false;
		}
	}
	return true;
}

bool vnic_env_run(struct vnic_env *v)
{
	struct vnic_cpu *cpus[VNIC_ENV_MAX_CPUS];
	unsigned int n = vnic_env_cpus(v, cpus);

	if (v->threads)
		return true;
	return vnic_cpus_run_until(cpus, n, idle, v, 2000000000ull) == 0;
}

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

void vnic_env_run_for(struct vnic_env *v, uint64_t ns)
{
	struct vnic_cpu *cpus[VNIC_ENV_MAX_CPUS];
	unsigned int n = vnic_env_cpus(v, cpus);

	vnic_cpus_run_until(cpus, n, never, NULL, ns);
}

uint64_t vnic_env_dev_ctr(struct vnic_env *v, unsigned int end, const char *name)
{
	uint64_t val = 0;

	if (vnic_dev_counter(v->dev[end], name, &val))
		fail_msg("no device counter %s", name);
	return val;
}

struct vnic_pkt *vnic_env_pkt(struct vnic_env *v)
{
	struct vnic_pkt *p = vnic_pkt_alloc(&v->pool);

	assert_non_null(p);
	return p;
}
