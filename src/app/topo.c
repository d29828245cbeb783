// SPDX-License-Identifier: MIT
/*
 * The embedded topology of `vnic bench`: two vNICs back to back on the
 * in-process cable, one cpu thread per side; with --queues N a cpu thread
 * per queue pair of both vNICs instead, as `vnic link --queues N` runs.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_SET */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app.h"

static const char *const side_name[VNIC_TOPO_SIDES] = { "a", "b" };

void vnic_topo_config_default(struct vnic_topo_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	vnic_drv_config_default(&cfg->drv);
	vnic_dev_config_default(&cfg->dev);
	cfg->cable.mtu = cfg->drv.mtu;
	cfg->hv_max_ind_descs = 128;
	/*
	 * A cross-cpu wake-up costs 10-12 us here (docs/BENCHMARKS.md,
	 * "Reference figures"); spinning this long first keeps a busy
	 * request/response exchange awake.
	 */
	cfg->busy_poll_ns = 50000;
	cfg->spin = VNIC_CPU_SPIN_ADAPTIVE;
	cfg->threads = VNIC_TOPO_SIDES;
	cfg->pin.mode = VNIC_PIN_ADAPTIVE;
	cfg->spinners = VNIC_TOPO_SIDES;
	cfg->host_pkts = 1024;
	cfg->host_buf_size = VNIC_PKT_MAX_LEN + 256;
	cfg->reconnect_timeout_ns = VNIC_SPLIT_RECONNECT_DEFAULT_S * 1000000000ull;
	vnic_fault_cfg_default(&cfg->fault);
}

/*
 * The host's pool offered to every tx queue, so that --tx-buf map can send
 * superpackets from it (at any time: the policy changes live). Shared with
 * vnic link.
 */
int vnic_topo_tx_pools(struct vnic_netdev *nd, const struct vnic_pkt_pool *pool)
{
	unsigned int q;
	int err;

	for (q = 0; q < nd->num_tx_queues; q++) {
		err = vnic_netdev_tx_pool(nd, q, pool);
		if (err)
			return err;
	}
	return 0;
}

/* Side s's cpu: its own, or side a's when one thread runs both sides. */
static struct vnic_cpu *side_cpu(struct vnic_topo *t, unsigned int s)
{
	return &t->cpu[t->cfg.threads == 1 ? 0 : s];
}

unsigned int vnic_topo_queue_layout(const struct vnic_topo_config *cfg, const char *one_wire,
				    const char **why)
{
	unsigned int n = cfg->drv.tx_queues;
	long cpus = cfg->online_cpus ? (long)cfg->online_cpus : sysconf(_SC_NPROCESSORS_ONLN);

	*why = NULL;
	if (n < 2)
		return 0;
	if (one_wire)
		*why = one_wire;
	else if (cfg->threads < 2)
		*why = "--threads 1 runs both sides on one thread";
	else if (cfg->drv.rx_queues != n)
		*why = "as many rx queues as tx queues are needed";
	else if (cfg->dev.max_tx_queues < n || cfg->dev.max_rx_queues < n)
		*why = "the device grants fewer queues (--dev-queues)";
	else if (cfg->drv.tx_reclaim == VNIC_DRV_RECLAIM_NAPI)
		*why = "--tx-reclaim napi reclaims a tx queue on another queue's cpu";
	else if (cpus > 0 && n > (unsigned long)cpus)
		*why = "more queue pairs than cpus";
	return *why ? 0 : n;
}

const char *vnic_topo_queue_cpu_name(unsigned int q)
{
	static const char *const names[VNIC_MAX_QUEUES] = {
		"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7",
		"q8", "q9", "q10", "q11", "q12", "q13", "q14", "q15",
	};

	return q < VNIC_MAX_QUEUES ? names[q] : "q?";
}

/*
 * --queues N: the per-queue layout where every piece has a queue per
 * pair, else the sides' threads, and one line saying why (once a process:
 * --repeat and --compare build the topology again for every round).
 */
static unsigned int queue_layout(const struct vnic_topo_config *cfg)
{
	static bool said;
	const char *one_wire = NULL, *why;
	unsigned int n;

	if (cfg->split)
		one_wire = "--split has the devices and a cable of one ring pair in the server";
	else if (cfg->wrap_wire)
		one_wire = "--pcap captures one wire, not one per queue pair";
	n = vnic_topo_queue_layout(cfg, one_wire, &why);
	if (why && !said) {
		fprintf(stderr, "vnic: --queues %u: the queue pairs stay on the sides' threads: %s\n",
			cfg->drv.tx_queues, why);
		said = true;
	}
	return n;
}

/* The cpus of queue pairs 2 and up (0 and 1 are the sides'), as the sides' are set up. */
static int extra_cpus(struct vnic_topo *t)
{
	int err;

	t->qcpu[0] = &t->cpu[0];
	t->qcpu[1] = &t->cpu[1];
	for (unsigned int q = VNIC_TOPO_SIDES; q < t->spread; q++) {
		struct vnic_cpu *c = &t->extra_cpu[t->nextra];

		err = vnic_cpu_init(c, vnic_topo_queue_cpu_name(q), t->cfg.busy_poll_ns);
		if (err)
			return err;
		t->nextra++;
		vnic_cpu_set_spin(c, t->cfg.spin);
		if (t->cfg.spinners < t->cfg.threads)
			vnic_cpu_set_spin_group(c, &t->spin_group);
		t->qcpu[q] = c;
	}
	return 0;
}

unsigned int vnic_topo_host_pools(struct vnic_topo *t, unsigned int s,
				  struct vnic_pkt_pool *pools[VNIC_MAX_QUEUES])
{
	pools[0] = &t->host_pool[s];
	for (unsigned int q = 1; q < t->spread; q++)
		pools[q] = &t->qpool[s][q];
	return t->spread ? t->spread : 1;
}

/*
 * spread: a host pool per queue pair, since a pool is used on one cpu (the
 * host allocates from it, xmit frees into it on the tx cpu), each offered
 * to its own tx queue for --tx-buf map.
 */
static int queue_pools(struct vnic_topo *t, unsigned int s)
{
	struct vnic_netdev *nd = vnic_drv_netdev(t->drv[s]);
	int err;

	for (unsigned int q = 1; q < t->spread; q++) {
		err = vnic_pkt_pool_init(&t->qpool[s][q], t->cfg.host_pkts, t->cfg.host_buf_size,
					 128);
		if (err)
			return err;
	}
	for (unsigned int q = 0; q < nd->num_tx_queues && q < VNIC_MAX_QUEUES; q++) {
		err = vnic_netdev_tx_pool(nd, q, q && q < t->spread ? &t->qpool[s][q]
								     : &t->host_pool[s]);
		if (err)
			return err;
	}
	return 0;
}

/* The driver's side of the vNIC and its host's pool: the same in both layouts. */
static int create_drv(struct vnic_topo *t, unsigned int s)
{
	struct vnic_drv_config dcfg = t->cfg.drv;
	int err;

	dcfg.cpu = side_cpu(t, s);
	for (unsigned int q = 0; q < t->spread; q++)
		dcfg.queue_cpu[q] = t->qcpu[q];
	dcfg.name = s ? "vnic-b" : "vnic-a";
	/* a standing server on a switch gave each side a MAC of its own among its clients */
	if (t->split.has_mac)
		memcpy(dcfg.mac, t->split.mac[s], sizeof(dcfg.mac));
	else
		dcfg.mac[5] = (uint8_t)(0x10 + s);
	err = vnic_drv_create(&t->drv[s], t->hv[s], &dcfg);
	if (err)
		return err;
	err = vnic_pkt_pool_init(&t->host_pool[s], t->cfg.host_pkts, t->cfg.host_buf_size, 128);
	if (err)
		return err;
	/*
	 * split: the host's pool is this process's heap, which the server does
	 * not map; not offered, so --tx-buf map copies as the default does.
	 */
	if (t->cfg.split)
		return 0;
	if (t->spread)
		return queue_pools(t, s);
	return vnic_topo_tx_pools(vnic_drv_netdev(t->drv[s]), &t->host_pool[s]);
}

/*
 * split: the client's half of side s's hv, its doorbells on the side's cpu;
 * the device is the server process's (server.c).
 */
static int create_side_split(struct vnic_topo *t, unsigned int s)
{
	int err;

	err = vnic_hv_create_split_client(&t->hv[s], t->cfg.hv_max_ind_descs, &t->cfg.cost,
					  VNIC_HV_SPLIT_POOL_DEFAULT);
	if (err)
		return err;
	vnic_hv_split_set_doorbell(t->hv[s], t->cfg.doorbell);
	err = vnic_hv_split_attach_cpu(t->hv[s], side_cpu(t, s));
	if (err)
		return err;
	return create_drv(t, s);
}

static int create_side(struct vnic_topo *t, unsigned int s)
{
	struct vnic_wire *wire = vnic_cable_end(t->cable, s);
	struct vnic_dev_config vcfg = t->cfg.dev;
	int err;

	err = vnic_hv_create(&t->hv[s], t->cfg.hv_max_ind_descs, &t->cfg.cost);
	if (err)
		return err;
	if (t->cfg.wrap_wire) {
		wire = t->cfg.wrap_wire(t->cfg.wrap_ctx, s, wire);
		if (!wire)
			return -ENOMEM;
	}
	/* one seed, a stream per side: the two sides do not fail in step */
	err = vnic_hv_set_faults(t->hv[s], &t->cfg.fault, s);
	if (err)
		return err;
	vcfg.fault = t->cfg.fault;
	vcfg.fault.seed = t->cfg.fault.seed * 2 + s;
	if (t->spread) {
		/* queue pair q on cpu q and on cable ring q: device B's rx queue q is A's tx queue q */
		vcfg.max_tx_queues = vcfg.max_rx_queues = t->spread;
		for (unsigned int q = 0; q < t->spread; q++) {
			vcfg.queue_cpu[q] = t->qcpu[q];
			if (q)
				vcfg.queue_wire[q] = vnic_cable_queue_end(t->cable, s, q);
		}
	}
	err = vnic_dev_create(&t->dev[s], t->hv[s], wire, side_cpu(t, s), &vcfg);
	if (err)
		return err;
	return create_drv(t, s);
}

/*
 * What the server process cannot do for this runner yet: each of these
 * reaches into the devices or the cable from the client's threads.
 */
static int split_check(const struct vnic_topo_config *cfg)
{
	if (cfg->wrap_wire) {
		fprintf(stderr, "vnic: --split: the cable is in the server process: no --pcap\n");
		return -EINVAL;
	}
	if (vnic_fault_any(&cfg->fault)) {
		fprintf(stderr, "vnic: --split: --fault is not available in split mode yet\n");
		return -EINVAL;
	}
	return 0;
}

static int create_split(struct vnic_topo *t)
{
	int err;

	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = create_side_split(t, s);
		if (err)
			return err;
	}
	err = vnic_split_attach(&t->split, t->hv);
	if (err) {
		fprintf(stderr, "vnic: --split: the server refused the attach: %s\n",
			strerror(-err == EAGAIN ? ETIMEDOUT : -err));
		t->said = true;
		return err;
	}
	/*
	 * A standing server may go away and come back: side a's cpu watches for
	 * it (the control cpu). A forked one is the run's own: it is not
	 * forked again (a fork of a process whose threads run copies locks
	 * held by them), and its loss fails the run.
	 */
	if (t->cfg.server_path)
		err = vnic_split_watch(&t->split, &t->cpu[0], t->hv, t->cfg.server_path, &t->cfg);
	return err;
}

int vnic_topo_pin_cores(const struct vnic_topo_config *cfg, int core[VNIC_TOPO_SIDES])
{
	unsigned int threads = cfg->threads == 1 ? 1 : VNIC_TOPO_SIDES;
	cpu_set_t allowed;
	unsigned int s, n = 0;

	for (s = 0; s < VNIC_TOPO_SIDES; s++)
		core[s] = -1;
	/* adaptive: no core of their own to start with (struct vnic_place) */
	if (cfg->pin.mode == VNIC_PIN_NONE || cfg->pin.mode == VNIC_PIN_ADAPTIVE)
		return 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		fprintf(stderr, "vnic: --pin: sched_getaffinity: %s\n", strerror(errno));
		return -EINVAL;
	}
	if (cfg->pin.mode == VNIC_PIN_AUTO) {
		/* A core per thread, or none: two threads on one core would take turns. */
		if ((unsigned int)CPU_COUNT(&allowed) < threads)
			return 0;
		for (int c = 0; c < CPU_SETSIZE && n < threads; c++)
			if (CPU_ISSET((unsigned int)c, &allowed))
				core[n++] = c;
		return 0;
	}
	if (cfg->pin.n != threads) {
		fprintf(stderr, "vnic: --pin names %u core%s for %u cpu thread%s\n", cfg->pin.n,
			cfg->pin.n == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
		return -EINVAL;
	}
	for (s = 0; s < threads; s++) {
		if (!CPU_ISSET((unsigned int)cfg->pin.core[s], &allowed)) {
			fprintf(stderr, "vnic: --pin: core %d is not one this process may run on\n",
				cfg->pin.core[s]);
			return -EINVAL;
		}
		core[s] = cfg->pin.core[s];
	}
	return 0;
}

int vnic_topo_create(struct vnic_topo *t, const struct vnic_topo_config *cfg)
{
	int core[VNIC_TOPO_SIDES];
	unsigned int s;
	bool said;
	int err;

	memset(t, 0, sizeof(*t));
	t->cfg = *cfg;
	t->split.sock = -1;
	err = vnic_topo_pin_cores(cfg, core);
	if (err)
		return err;
	if (!t->cfg.cable.mtu || t->cfg.cable.mtu < t->cfg.drv.mtu)
		t->cfg.cable.mtu = t->cfg.drv.mtu;
	if (t->cfg.split) {
		/* first: the server process starts with nothing of ours but the socket */
		err = split_check(&t->cfg);
		if (!err && t->cfg.server_path)
			err = vnic_split_connect(&t->split, t->cfg.server_path, &t->cfg);
		else if (!err)
			err = vnic_split_fork(&t->split, &t->cfg);
		/* each of these says why in a line of its own */
		t->said = err != 0;
		if (err)
			return err;
	}
	vnic_cpu_spin_group_init(&t->spin_group, t->cfg.spinners);
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = vnic_cpu_init(&t->cpu[s], side_name[s], t->cfg.busy_poll_ns);
		if (err)
			goto err_destroy;
		vnic_cpu_set_spin(&t->cpu[s], t->cfg.spin);
		if (t->cfg.spinners < t->cfg.threads)
			vnic_cpu_set_spin_group(&t->cpu[s], &t->spin_group);
		err = vnic_cpu_pin(&t->cpu[s], core[s]);
		if (err)
			goto err_destroy;
	}
	t->spread = queue_layout(&t->cfg);
	if (t->spread) {
		err = extra_cpus(t);
		if (err)
			goto err_destroy;
	}
	/* spread: a ring pair per queue pair */
	t->cfg.cable.queues = t->spread ? t->spread : 1;
	if (t->cfg.split) {
		err = create_split(t);
		if (err)
			goto err_destroy;
		return 0;
	}
	err = vnic_cable_create(&t->cable, &t->cfg.cable);
	if (err)
		goto err_destroy;
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = create_side(t, s);
		if (err)
			goto err_destroy;
	}
	return 0;

err_destroy:
	said = t->said;
	vnic_topo_destroy(t);
	t->said = said;
	return err;
}

/* Both sides' hypervisor and device faults, on or off (any thread). */
static void faults_enable(struct vnic_topo *t, bool on)
{
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		if (t->hv[s])
			vnic_hv_faults_enable(t->hv[s], on);
		if (t->dev[s])
			vnic_dev_faults_enable(t->dev[s], on);
	}
}

/*
 * --pin adaptive places two threads that run in this process: with one
 * there is nothing to place, and in split mode each side's partner is a
 * thread of the server process, whose CPU the placement would count as
 * another process's.
 */
static bool placed(const struct vnic_topo *t)
{
	return t->cfg.pin.mode == VNIC_PIN_ADAPTIVE && t->cfg.threads == VNIC_TOPO_SIDES &&
	       !t->cfg.split;
}

int vnic_topo_start(struct vnic_topo *t)
{
	unsigned int s;
	int err;

	/* before the threads run: the look at the machine must not see them */
	if (placed(t))
		vnic_place_init(&t->place, &t->cpu[0], &t->cpu[1]);
	/* With one thread, cpu b stays idle: every poller of both sides is on cpu a. */
	for (s = 0; s < t->cfg.threads && s < VNIC_TOPO_SIDES; s++) {
		err = vnic_cpu_start(&t->cpu[s]);
		if (err)
			goto err_stop;
		t->started = true;
	}
	for (s = 0; s < t->nextra; s++) {
		err = vnic_cpu_start(&t->extra_cpu[s]);
		if (err)
			goto err_stop;
	}
	if (placed(t))
		vnic_place_start(&t->place);
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		err = vnic_drv_open(t->drv[s], NULL, 0, 0);
		if (err) {
			fprintf(stderr, "vnic: opening driver %s: %s\n", side_name[s],
				strerror(-err));
			goto err_stop;
		}
	}
	/* faults from here: a bring-up that fails on purpose measures nothing */
	faults_enable(t, true);
	return 0;

err_stop:
	vnic_topo_stop(t);
	return err;
}

void vnic_topo_place(struct vnic_topo *t, uint64_t now_ns)
{
	if (t->started && t->place.on)
		vnic_place_check(&t->place, now_ns);
}

int vnic_topo_stop(struct vnic_topo *t)
{
	int first = 0;
	unsigned int s;

	/* before the drivers close: no reconnect races with their goodbye */
	vnic_split_watch_stop(&t->split);
	if (!t->started)
		return 0;
	faults_enable(t, false);
	/* open or not: a driver in the middle of a reset gives everything back too */
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		int err = t->drv[s] ? vnic_drv_close(t->drv[s], NULL, 0, 0) : 0;

		if (err && !first)
			first = err;
	}
	for (s = 0; s < VNIC_TOPO_SIDES; s++)
		vnic_cpu_stop(&t->cpu[s]);
	for (s = 0; s < t->nextra; s++)
		vnic_cpu_stop(&t->extra_cpu[s]);
	/* the threads are gone: nothing is left to place (the counters stay) */
	t->place.on = false;
	t->started = false;
	return first;
}

void vnic_topo_destroy(struct vnic_topo *t)
{
	unsigned int s;

	vnic_topo_stop(t);
	for (s = 0; s < VNIC_TOPO_SIDES; s++)
		if (t->drv[s])
			vnic_drv_destroy(t->drv[s]);
	/* after the drivers, which say goodbye on the CRQ; before the hvs it maps */
	if (t->cfg.split && t->split.sock >= 0)
		vnic_split_stop(&t->split);
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		if (t->dev[s])
			vnic_dev_destroy(t->dev[s]);
		if (t->hv[s])
			vnic_hv_destroy(t->hv[s]);
		if (t->host_pool[s].count)
			vnic_pkt_pool_fini(&t->host_pool[s]);
		for (unsigned int q = 1; q < VNIC_MAX_QUEUES; q++)
			if (t->qpool[s][q].count)
				vnic_pkt_pool_fini(&t->qpool[s][q]);
	}
	if (t->cable)
		vnic_cable_destroy(t->cable);
	for (s = 0; s < VNIC_TOPO_SIDES; s++)
		if (t->cpu[s].name)
			vnic_cpu_fini(&t->cpu[s]);
	for (s = 0; s < t->nextra; s++)
		vnic_cpu_fini(&t->extra_cpu[s]);
	memset(t, 0, sizeof(*t));
}

bool vnic_topo_gave_up(const struct vnic_topo *t)
{
	return t->cfg.split && vnic_split_gave_up(&t->split);
}

struct vnic_netdev *vnic_topo_netdev(struct vnic_topo *t, unsigned int side)
{
	return vnic_drv_netdev(t->drv[side]);
}

/* Appends src[0..n) to out under prefix; returns the new total. */
static unsigned int add_prefixed(struct vnic_counter *out, unsigned int max, unsigned int at,
				 const char *prefix, const struct vnic_counter *src, unsigned int n)
{
	size_t plen = strlen(prefix);

	for (unsigned int i = 0; i < n; i++, at++) {
		size_t nlen = strnlen(src[i].name, sizeof(src[i].name));

		if (at >= max)
			continue;
		/* Names are short by design; cut rather than overflow if one is not. */
		if (plen + nlen >= sizeof(out[at].name))
			nlen = sizeof(out[at].name) - plen - 1;
		memcpy(out[at].name, prefix, plen);
		memcpy(out[at].name + plen, src[i].name, nlen);
		out[at].name[plen + nlen] = '\0';
		out[at].value = src[i].value;
	}
	return at;
}

enum { COUNTERS_PER_OBJECT = 1024 };

/* Per thread: the control socket's thread and the main thread may both ask. */
static _Thread_local struct vnic_counter tmp[COUNTERS_PER_OBJECT];

unsigned int vnic_counters_drv(const struct vnic_drv *drv, const char *prefix,
			       struct vnic_counter *out, unsigned int max, unsigned int at)
{
	unsigned int n = vnic_drv_counters(drv, tmp, COUNTERS_PER_OBJECT);

	return add_prefixed(out, max, at, prefix, tmp, n < COUNTERS_PER_OBJECT ? n : COUNTERS_PER_OBJECT);
}

unsigned int vnic_counters_dev(const struct vnic_dev *dev, const char *prefix,
			       struct vnic_counter *out, unsigned int max, unsigned int at)
{
	unsigned int n = vnic_dev_counters(dev, tmp, COUNTERS_PER_OBJECT);

	return add_prefixed(out, max, at, prefix, tmp, n < COUNTERS_PER_OBJECT ? n : COUNTERS_PER_OBJECT);
}

unsigned int vnic_counters_hv(const struct vnic_hv *hv, const char *prefix,
			      struct vnic_counter *out, unsigned int max, unsigned int at)
{
	struct vnic_hv_stats hs;
	unsigned int n = 0;

	vnic_hv_stats(hv, &hs);
#define HV(f) snprintf(tmp[n].name, sizeof(tmp[n].name), "%s", #f), tmp[n++].value = hs.f
	HV(send_crq);
	HV(send_subcrq);
	HV(send_subcrq_indirect);
	HV(indirect_entries);
	HV(rc_parameter);
	HV(rc_busy);
	HV(rc_closed);
	HV(rc_dropped);
	HV(dma_bad_translation);
	HV(indirect_max);
	HV(fault_busy);
	HV(fault_dropped);
	HV(fault_closed);
	HV(fault_ind_param);
	HV(fault_crq_lost);
	HV(fault_crq_dup);
	HV(split_bad_ring);
	HV(split_irq_spurious);
	HV(split_doorbells);
	HV(split_doorbells_skipped);
	HV(split_partner_lost);
#undef HV
	return add_prefixed(out, max, at, prefix, tmp, n);
}

/* One direction's cable counters (a ring's or their sums) into tmp[]: how many. */
static unsigned int cable_stats_table(const struct vnic_cable_stats *cs)
{
	unsigned int n = 0;

#define CS(f) snprintf(tmp[n].name, sizeof(tmp[n].name), "%s", #f), tmp[n++].value = cs->f
	CS(tx_frames);
	CS(tx_bytes);
	CS(rx_frames);
	CS(drop_mtu);
	CS(drop_loss);
	CS(reordered);
	CS(corrupted);
	CS(tx_full);
	CS(notifies);
	CS(tx_super);
	CS(drop_super);
#undef CS
	return n;
}

unsigned int vnic_counters_cable(const struct vnic_cable *cable, unsigned int dir,
				 struct vnic_counter *out, unsigned int max, unsigned int at)
{
	struct vnic_cable_stats cs;
	unsigned int n;

	vnic_cable_stats(cable, dir, &cs);
	n = cable_stats_table(&cs);
	return add_prefixed(out, max, at, dir ? "cable.ba_" : "cable.ab_", tmp, n);
}

unsigned int vnic_counters_cable_rings(const struct vnic_cable *cable, struct vnic_counter *out,
				       unsigned int max, unsigned int at)
{
	struct vnic_cable_cfg cfg;
	char prefix[32];

	vnic_cable_config_get(cable, &cfg);
	for (unsigned int q = 0; cfg.queues > 1 && q < cfg.queues; q++) {
		for (unsigned int dir = 0; dir < 2; dir++) {
			struct vnic_cable_stats cs;
			unsigned int n;

			vnic_cable_queue_stats(cable, dir, q, &cs);
			n = cable_stats_table(&cs);
			snprintf(prefix, sizeof(prefix), "cable.ring%u.%s_", q, dir ? "ba" : "ab");
			at = add_prefixed(out, max, at, prefix, tmp, n);
		}
	}
	return at;
}

unsigned int vnic_counters_cpu(const struct vnic_cpu *cpu, const char *prefix,
			       struct vnic_counter *out, unsigned int max, unsigned int at)
{
	unsigned int n = vnic_cpu_counters(cpu, tmp, COUNTERS_PER_OBJECT);

	return add_prefixed(out, max, at, prefix, tmp, n < COUNTERS_PER_OBJECT ? n : COUNTERS_PER_OBJECT);
}

/*
 * split: what lives in the server process (devices, cable, the server's
 * halves of the hvs and its cpus) is asked for on the socket and appended.
 */
static unsigned int split_counters(const struct vnic_topo *t, struct vnic_counter *out,
				   unsigned int max, unsigned int at)
{
	int n;

	at = vnic_split_client_counters(&t->split, out, max, at);
	if (at >= max)
		return at;
	n = vnic_split_counters((struct vnic_split *)&t->split, out + at, max - at);
	return n < 0 ? at : at + (unsigned int)n;
}

unsigned int vnic_topo_counters(const struct vnic_topo *t, struct vnic_counter *out,
				unsigned int max)
{
	unsigned int at = 0, s;
	char prefix[32];

	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		snprintf(prefix, sizeof(prefix), "drv_%s.", side_name[s]);
		at = vnic_counters_drv(t->drv[s], prefix, out, max, at);
		if (t->dev[s]) {
			snprintf(prefix, sizeof(prefix), "dev_%s.", side_name[s]);
			at = vnic_counters_dev(t->dev[s], prefix, out, max, at);
		}
		snprintf(prefix, sizeof(prefix), "hv_%s.", side_name[s]);
		at = vnic_counters_hv(t->hv[s], prefix, out, max, at);
		if (t->cable)
			at = vnic_counters_cable(t->cable, s, out, max, at);
		snprintf(prefix, sizeof(prefix), "cpu_%s.", side_name[s]);
		at = vnic_counters_cpu(&t->cpu[s], prefix, out, max, at);
	}
	if (t->cable)
		at = vnic_counters_cable_rings(t->cable, out, max, at);
	for (s = 0; s < t->nextra; s++) {
		snprintf(prefix, sizeof(prefix), "cpu_%s.", t->extra_cpu[s].name);
		at = vnic_counters_cpu(&t->extra_cpu[s], prefix, out, max, at);
	}
	at = add_prefixed(out, max, at, "place.", tmp,
			  vnic_place_counters(&t->place, tmp, COUNTERS_PER_OBJECT));
	if (t->cfg.split)
		at = split_counters(t, out, max, at);
	return at;
}

/* The server's counter srv_cpu_SIDE.FIELD of all[0..n), ns, in seconds; 0 if absent. */
static double srv_cpu_s(const struct vnic_counter *all, unsigned int n, unsigned int side,
			const char *field)
{
	char name[VNIC_COUNTER_NAME_MAX];
	const struct vnic_counter *e;

	snprintf(name, sizeof(name), "srv_cpu_%s.%s", side_name[side], field);
	e = vnic_counter_find(all, n, name);
	return e ? (double)e->value / 1e9 : 0;
}

int vnic_topo_split_cpu(const struct vnic_topo *t, double cpu_s[VNIC_TOPO_SIDES],
			double spin_s[VNIC_TOPO_SIDES], double work_s[VNIC_TOPO_SIDES])
{
	static _Thread_local struct vnic_counter all[4 * COUNTERS_PER_OBJECT];
	int n = vnic_split_counters((struct vnic_split *)&t->split, all, 4 * COUNTERS_PER_OBJECT);

	if (n < 0)
		return n;
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		cpu_s[s] = srv_cpu_s(all, (unsigned int)n, s, "thread_cpu_ns");
		spin_s[s] = srv_cpu_s(all, (unsigned int)n, s, "spin_ns");
		work_s[s] = srv_cpu_s(all, (unsigned int)n, s, "work_ns");
	}
	return 0;
}

int vnic_topo_cable_stats(const struct vnic_topo *t, unsigned int dir,
			  struct vnic_cable_stats *cs)
{
	char name[VNIC_COUNTER_NAME_MAX];
	const char *d = dir ? "ba" : "ab";

	memset(cs, 0, sizeof(*cs));
	if (!t->cfg.split) {
		vnic_cable_stats(t->cable, dir, cs);
		return 0;
	}
	snprintf(name, sizeof(name), "cable.%s_tx_frames", d);
	cs->tx_frames = vnic_topo_counter(t, name);
	snprintf(name, sizeof(name), "cable.%s_rx_frames", d);
	cs->rx_frames = vnic_topo_counter(t, name);
	return 0;
}

uint64_t vnic_topo_counter(const struct vnic_topo *t, const char *name)
{
	static _Thread_local struct vnic_counter all[4 * COUNTERS_PER_OBJECT];
	unsigned int n = vnic_topo_counters(t, all, 4 * COUNTERS_PER_OBJECT);
	const struct vnic_counter *e =
		vnic_counter_find(all, n < 4 * COUNTERS_PER_OBJECT ? n : 4 * COUNTERS_PER_OBJECT, name);

	return e ? e->value : 0;
}
