// SPDX-License-Identifier: MIT
/*
 * `vnic show` and `vnic set` on a running instance (bench or link), through
 * its control socket: what the vNICs negotiated and the settings in force;
 * and changes with the names and values of the command line (the shared
 * option table, opts.c), as ethtool changes a running NIC.
 *
 * How a change reaches the running vNICs:
 *   - live, at once: the driver's policies (vnic_drv_set_policies runs them
 *     on the driver's own thread), the busy-poll of every cpu thread (the
 *     sides' and, with --queues N spread, q2...), the cable's rate, delay,
 *     loss, reorder, corrupt and seed, the device's drop-missing-hdrs and
 *     interrupt coalescing (rx-usecs ... adaptive-tx), the faults;
 *   - through a reset of the driver: mtu, tx-entries, rx-entries, queues
 *     (change-param, as ibmvnic's do_change_param_reset), and hdr-mask (the
 *     device announces a new mask: the driver negotiates again);
 *   - not at all while running (threads, dev-queues, ind-descs, the cost
 *     model, ...): a one-line error naming the option to restart with.
 * Every pair is checked before anything changes: one bad value and nothing
 * changes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"

enum {
	LIVE_TIMEOUT_NS = 5000000000ull,	/* a driver answers a change within this */
	LIVE_MAX_PAIRS = 32,
};

/* How an option changes while the instance runs. */
enum live_how { HOW_NEVER, HOW_POLICY, HOW_CPU, HOW_CABLE, HOW_DEVICE, HOW_RESET, HOW_FAULT };

static const struct {
	const char *name;
	enum live_how how;
} live_opts[] = {
	{ "rx-replenish", HOW_POLICY }, { "tx-hdr-build", HOW_POLICY },
	{ "tx-submit", HOW_POLICY },	{ "bql-complete", HOW_POLICY },
	{ "tx-csum", HOW_POLICY },	{ "rx-deliver", HOW_POLICY },
	{ "tx-reclaim", HOW_POLICY },	{ "reclaim-us", HOW_POLICY },
	{ "tx-buf", HOW_POLICY },	{ "rx-agg", HOW_POLICY },
	{ "busy-poll", HOW_CPU },	{ "busy-poll-us", HOW_CPU },
	{ "rate", HOW_CABLE },		{ "delay-us", HOW_CABLE },
	{ "loss", HOW_CABLE },		{ "reorder", HOW_CABLE },
	{ "corrupt", HOW_CABLE },	{ "seed", HOW_CABLE },
	{ "drop-missing-hdrs", HOW_DEVICE }, { "hdr-mask", HOW_DEVICE },
	{ "rx-usecs", HOW_DEVICE },	{ "rx-frames", HOW_DEVICE },
	{ "tx-usecs", HOW_DEVICE },	{ "tx-frames", HOW_DEVICE },
	{ "adaptive-rx", HOW_DEVICE },	{ "adaptive-tx", HOW_DEVICE },
	{ "mtu", HOW_RESET },		{ "queues", HOW_RESET },
	{ "tx-entries", HOW_RESET },	{ "rx-entries", HOW_RESET },
	{ "fault", HOW_FAULT },
};

static enum live_how how_of(const char *name)
{
	for (unsigned int i = 0; i < sizeof(live_opts) / sizeof(live_opts[0]); i++)
		if (!strcmp(live_opts[i].name, name))
			return live_opts[i].how;
	return HOW_NEVER;
}

/* --- show ------------------------------------------------------------------------- */

static uint64_t drv_ctr(const struct vnic_live *l, unsigned int s, const char *name)
{
	uint64_t v = 0;

	vnic_drv_counter(l->drv[s], name, &v);
	return v;
}

static const char *const side_names[VNIC_TOPO_SIDES] = { "a", "b" };

/* What side s negotiated, as its driver counts it. */
struct negotiated {
	uint64_t txq, rxq, txe, rxe, mtu, ind, cur_ind, offloads, carrier;
};

static void negotiated_of(const struct vnic_live *l, unsigned int s, struct negotiated *n)
{
	n->txq = drv_ctr(l, s, "neg_tx_queues");
	n->rxq = drv_ctr(l, s, "neg_rx_queues");
	n->txe = drv_ctr(l, s, "neg_tx_entries");
	n->rxe = drv_ctr(l, s, "neg_rx_entries");
	n->mtu = drv_ctr(l, s, "neg_mtu");
	n->ind = drv_ctr(l, s, "neg_ind_descs");
	n->cur_ind = drv_ctr(l, s, "cur_ind_descs");
	n->offloads = drv_ctr(l, s, "offloads");
	n->carrier = drv_ctr(l, s, "carrier");
}

/* The coalescing in force on side s's device, as ethtool -c shows it. */
static void show_coalesce(const struct vnic_live *l, unsigned int s, FILE *f)
{
	struct vnic_dev_coalesce c = l->cfg->dev.coal;

	/* split: the device is the server's, and its settings are fixed: the config's */
	if (l->dev[s])
		vnic_dev_coalesce_get(l->dev[s], &c);
	fprintf(f, "  coalescing   rx-usecs %u rx-frames %u adaptive-rx %s, tx-usecs %u "
		   "tx-frames %u adaptive-tx %s\n",
		c.rx_usecs, c.rx_frames, c.adaptive_rx ? "on" : "off", c.tx_usecs, c.tx_frames,
		c.adaptive_tx ? "on" : "off");
}

static bool coalesce_differs(const struct vnic_dev_coalesce *a, const struct vnic_dev_coalesce *b)
{
	return a->rx_usecs != b->rx_usecs || a->rx_frames != b->rx_frames ||
	       a->tx_usecs != b->tx_usecs || a->tx_frames != b->tx_frames ||
	       a->adaptive_rx != b->adaptive_rx || a->adaptive_tx != b->adaptive_tx;
}

/* What set last asked of cpu thread i, and the spin its thread has taken up (spin_limit_ns). */
struct thread_poll {
	const char *name;
	uint64_t busy_poll_ns, spin_limit_ns;
	enum vnic_cpu_spin mode;
};

static void thread_poll_of(const struct vnic_live *l, unsigned int i, struct thread_poll *t)
{
	const struct vnic_cpu *cpu = l->cpu[i];

	t->name = cpu->name ? cpu->name : "?";
	vnic_cpu_busy_poll(cpu, &t->busy_poll_ns, &t->mode);
	t->spin_limit_ns = vnic_ctr_read(&cpu->stats.spin_limit_ns);
}

static void show_threads_text(const struct vnic_live *l, FILE *f)
{
	struct thread_poll t;

	for (unsigned int i = 0; i < l->ncpus && i < VNIC_MAX_QUEUES; i++) {
		thread_poll_of(l, i, &t);
		fprintf(f,
			"thread %s: busy-poll-us %" PRIu64 " busy-poll %s, spinning up to %" PRIu64
			" ns now\n",
			t.name, t.busy_poll_ns / 1000, vnic_cpu_spin_name(t.mode), t.spin_limit_ns);
	}
}

static void show_threads_json(const struct vnic_live *l, struct vnic_json *j)
{
	struct thread_poll t;

	vnic_json_array(j, "threads");
	for (unsigned int i = 0; i < l->ncpus && i < VNIC_MAX_QUEUES; i++) {
		thread_poll_of(l, i, &t);
		vnic_json_object(j, NULL);
		vnic_json_str(j, "thread", t.name);
		vnic_json_u64(j, "busy_poll_us", t.busy_poll_ns / 1000);
		vnic_json_str(j, "busy_poll", vnic_cpu_spin_name(t.mode));
		vnic_json_u64(j, "spin_limit_ns", t.spin_limit_ns);
		vnic_json_close(j);
	}
	vnic_json_array_close(j);
}

static void show_text(const struct vnic_live *l, FILE *f)
{
	const char *names[VNIC_TOPO_OPTS_MAX];
	unsigned int n = vnic_topo_opt_names(VNIC_OPTG_ALL, names, VNIC_TOPO_OPTS_MAX);
	char val[256], key[48];

	for (unsigned int s = 0; s < l->nsides; s++) {
		struct negotiated g;

		negotiated_of(l, s, &g);
		fprintf(f, "side %s: carrier %s\n", side_names[s], g.carrier ? "on" : "off");
		fprintf(f, "  channels     tx %" PRIu64 " rx %" PRIu64 "\n", g.txq, g.rxq);
		fprintf(f, "  rings        tx %" PRIu64 " rx %" PRIu64 "\n", g.txe, g.rxe);
		fprintf(f, "  mtu          %" PRIu64 "\n", g.mtu);
		fprintf(f, "  ind-descs    %" PRIu64 " negotiated, %" PRIu64 " in use\n", g.ind,
			g.cur_ind);
		fprintf(f, "  offloads     0x%" PRIx64 " (csum-ipv4 %s, csum-ipv6 %s, lso-ipv4 %s, "
			   "lso-ipv6 %s)\n",
			g.offloads, g.offloads & 1 ? "on" : "off", g.offloads & 2 ? "on" : "off",
			g.offloads & 4 ? "on" : "off", g.offloads & 8 ? "on" : "off");
		for (unsigned int q = 0; q < g.txq; q++) {
			snprintf(key, sizeof(key), "tx%u_bql_limit", q);
			fprintf(f, "  bql          tx%u limit %" PRIu64 "\n", q, drv_ctr(l, s, key));
		}
		show_coalesce(l, s, f);
	}
	show_threads_text(l, f);
	fprintf(f, "settings:\n");
	for (unsigned int i = 0; i < n && i < VNIC_TOPO_OPTS_MAX; i++) {
		if (vnic_topo_opt_show(names[i], l->cfg, val, sizeof(val)))
			continue;
		fprintf(f, "  %-20s %-22s %s\n", names[i], val,
			how_of(names[i]) == HOW_NEVER	  ? "(fixed while running)"
			: how_of(names[i]) == HOW_RESET ? "(changes through a reset)"
							: "(live)");
	}
}

static void show_json(const struct vnic_live *l, FILE *f)
{
	const char *names[VNIC_TOPO_OPTS_MAX];
	unsigned int n = vnic_topo_opt_names(VNIC_OPTG_ALL, names, VNIC_TOPO_OPTS_MAX);
	struct vnic_json j;
	char val[256], key[48];

	vnic_json_begin(&j, f);
	vnic_json_array(&j, "sides");
	for (unsigned int s = 0; s < l->nsides; s++) {
		struct negotiated g;

		negotiated_of(l, s, &g);
		vnic_json_object(&j, NULL);
		vnic_json_str(&j, "side", side_names[s]);
		vnic_json_bool(&j, "carrier", g.carrier);
		vnic_json_u64(&j, "tx_queues", g.txq);
		vnic_json_u64(&j, "rx_queues", g.rxq);
		vnic_json_u64(&j, "tx_entries", g.txe);
		vnic_json_u64(&j, "rx_entries", g.rxe);
		vnic_json_u64(&j, "mtu", g.mtu);
		vnic_json_u64(&j, "ind_descs", g.ind);
		vnic_json_u64(&j, "ind_descs_in_use", g.cur_ind);
		vnic_json_u64(&j, "offloads", g.offloads);
		vnic_json_array(&j, "bql_limit");
		for (unsigned int q = 0; q < g.txq; q++) {
			snprintf(key, sizeof(key), "tx%u_bql_limit", q);
			vnic_json_u64(&j, NULL, drv_ctr(l, s, key));
		}
		vnic_json_array_close(&j);
		vnic_json_close(&j);
	}
	vnic_json_array_close(&j);
	show_threads_json(l, &j);
	vnic_json_object(&j, "settings");
	for (unsigned int i = 0; i < n && i < VNIC_TOPO_OPTS_MAX; i++)
		if (!vnic_topo_opt_show(names[i], l->cfg, val, sizeof(val)))
			vnic_json_str(&j, names[i], val);
	vnic_json_close(&j);
	vnic_json_end(&j);
}

void vnic_live_show(const struct vnic_live *l, FILE *f, bool json)
{
	if (json)
		show_json(l, f);
	else
		show_text(l, f);
}

/* --- set -------------------------------------------------------------------------- */

/* The pairs of "KEY VALUE KEY VALUE..." in place. Returns the number of pairs, or -1. */
static int split_pairs(char *args, char **keys, char **vals, FILE *f)
{
	char *save = NULL, *w;
	int n = 0;

	for (w = strtok_r(args, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n == LIVE_MAX_PAIRS) {
			fprintf(f, "error: at most %d settings at once\n", LIVE_MAX_PAIRS);
			return -1;
		}
		keys[n] = w;
		vals[n] = strtok_r(NULL, " ", &save);
		if (!vals[n]) {
			fprintf(f, "error: %s: no value\n", w);
			return -1;
		}
		n++;
	}
	if (!n)
		fputs("error: set what? (set KEY VALUE...)\n", f);
	return n ? n : -1;
}

/*
 * Checks every pair against the table and against what can change now, into
 * want. vnic_topo_opt_set prints its reason on stderr; the client gets it
 * here. 0 or -EINVAL (one line written).
 */
static int check_pairs(const struct vnic_live *l, char **keys, char **vals, int n,
		       struct vnic_topo_config *want, FILE *f)
{
	for (int i = 0; i < n; i++) {
		enum live_how how = how_of(keys[i]);
		char msg[200] = "";
		FILE *why = fmemopen(msg, sizeof(msg) - 1, "w");
		int rc;

		/* The table says why a value is refused; the client gets it, not our stderr. */
		vnic_arg_err_to(why);
		rc = vnic_topo_opt_set(keys[i], vals[i], want);
		vnic_arg_err_to(NULL);
		if (why)
			fclose(why);
		if (rc) {
			const char *m = strncmp(msg, "vnic: ", 6) ? msg : msg + 6;

			fprintf(f, "error: %s%s", *m ? m : "bad value",
				*m && m[strlen(m) - 1] == '\n' ? "" : "\n");
			return -EINVAL;
		}
		if (how == HOW_NEVER) {
			fprintf(f, "error: %s cannot change while running: restart with --%s %s\n",
				keys[i], keys[i], vals[i]);
			return -EINVAL;
		}
		if ((how == HOW_CABLE || how == HOW_DEVICE || how == HOW_FAULT) && !l->dev[0]) {
			fprintf(f, "error: %s lives in the server process (--split): restart "
				   "with --%s %s\n", keys[i], keys[i], vals[i]);
			return -EINVAL;
		}
		if (how == HOW_CABLE && !l->cable) {
			fprintf(f, "error: %s shapes the cable, and this instance has none "
				   "(--backing or --wire)\n", keys[i]);
			return -EINVAL;
		}
		if ((!strcmp(keys[i], "queues") && !l->queues_live) ||
		    (!strcmp(keys[i], "mtu") && !l->mtu_live)) {
			fprintf(f, "error: %s cannot change while running here (%s): restart with "
				   "--%s %s\n", keys[i], l->why_fixed ? l->why_fixed : "fixed",
				keys[i], vals[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static bool policies_differ(const struct vnic_drv_config *a, const struct vnic_drv_config *b)
{
	return a->rx_replenish != b->rx_replenish || a->tx_hdr_build != b->tx_hdr_build ||
	       a->tx_submit != b->tx_submit || a->bql_complete != b->bql_complete ||
	       a->tx_csum != b->tx_csum || a->rx_deliver != b->rx_deliver ||
	       a->tx_reclaim != b->tx_reclaim || a->reclaim_ns != b->reclaim_ns ||
	       a->tx_buf != b->tx_buf || a->rx_agg != b->rx_agg;
}

static bool cable_differs(const struct vnic_cable_cfg *a, const struct vnic_cable_cfg *b)
{
	return a->rate_bps != b->rate_bps || a->delay_ns != b->delay_ns || a->loss != b->loss ||
	       a->reorder != b->reorder || a->corrupt != b->corrupt || a->seed != b->seed;
}

/* Until every driver runs at mtu again after its change-param reset: 0 or -ETIMEDOUT. */
static int wait_mtu(const struct vnic_live *l, uint32_t mtu)
{
	uint64_t end = vnic_now_ns() + LIVE_TIMEOUT_NS;

	for (;;) {
		unsigned int s, ok = 0;

		for (s = 0; s < l->nsides; s++)
			ok += drv_ctr(l, s, "neg_mtu") == mtu && drv_ctr(l, s, "carrier");
		if (ok == l->nsides)
			return 0;
		if (vnic_now_ns() > end)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 5000000 };

		nanosleep(&ts, NULL);
	}
}

/* Applies what differs from l->cfg, in the order that can fail least harmfully. 0 or -errno. */
static int apply(struct vnic_live *l, const struct vnic_topo_config *want, FILE *f)
{
	struct vnic_topo_config *cur = l->cfg;
	unsigned int s;
	int err;

	if (policies_differ(&cur->drv, &want->drv)) {
		for (s = 0; s < l->nsides; s++) {
			err = vnic_drv_set_policies(l->drv[s], &want->drv, LIVE_TIMEOUT_NS);
			if (err) {
				fprintf(f, "error: side %s: the policies: %s\n", side_names[s],
					strerror(-err));
				return err;
			}
		}
		cur->drv.rx_replenish = want->drv.rx_replenish;
		cur->drv.tx_hdr_build = want->drv.tx_hdr_build;
		cur->drv.tx_submit = want->drv.tx_submit;
		cur->drv.bql_complete = want->drv.bql_complete;
		cur->drv.tx_csum = want->drv.tx_csum;
		cur->drv.rx_deliver = want->drv.rx_deliver;
		cur->drv.tx_reclaim = want->drv.tx_reclaim;
		cur->drv.reclaim_ns = want->drv.reclaim_ns;
		cur->drv.tx_buf = want->drv.tx_buf;
		cur->drv.rx_agg = want->drv.rx_agg;
		fputs("ok: policies changed, live\n", f);
	}
	if (cur->busy_poll_ns != want->busy_poll_ns || cur->spin != want->spin) {
		for (s = 0; s < l->ncpus; s++)
			vnic_cpu_set_busy_poll(l->cpu[s], want->busy_poll_ns, want->spin);
		cur->busy_poll_ns = want->busy_poll_ns;
		cur->spin = want->spin;
		fputs("ok: busy-poll changed, live\n", f);
	}
	if (l->cable && cable_differs(&cur->cable, &want->cable)) {
		struct vnic_cable_cfg c;

		vnic_cable_config_get(l->cable, &c);
		c.rate_bps = want->cable.rate_bps;
		c.delay_ns = want->cable.delay_ns;
		c.loss = want->cable.loss;
		c.reorder = want->cable.reorder;
		c.corrupt = want->cable.corrupt;
		c.seed = want->cable.seed;
		err = vnic_cable_set(l->cable, &c);
		if (err) {
			fprintf(f, "error: the cable: %s\n", strerror(-err));
			return err;
		}
		cur->cable.rate_bps = c.rate_bps;
		cur->cable.delay_ns = c.delay_ns;
		cur->cable.loss = c.loss;
		cur->cable.reorder = c.reorder;
		cur->cable.corrupt = c.corrupt;
		cur->cable.seed = c.seed;
		fputs("ok: cable changed, live\n", f);
	}
	if (memcmp(&cur->fault, &want->fault, sizeof(cur->fault))) {
		for (s = 0; s < l->nsides; s++) {
			err = vnic_hv_set_faults(l->hv[s], &want->fault, s);
			if (!err)
				err = vnic_dev_set_faults(l->dev[s], &want->fault);
			if (err) {
				fprintf(f, "error: side %s: the faults: %s\n", side_names[s],
					strerror(-err));
				return err;
			}
		}
		cur->fault = want->fault;
		fputs("ok: faults changed, live\n", f);
	}
	if (cur->dev.drop_missing_hdrs != want->dev.drop_missing_hdrs ||
	    cur->dev.hdr_mask != want->dev.hdr_mask) {
		bool reneg = cur->dev.hdr_mask != want->dev.hdr_mask;

		for (s = 0; s < l->nsides; s++) {
			err = vnic_dev_set(l->dev[s], want->dev.hdr_mask, want->dev.drop_missing_hdrs);
			if (err) {
				fprintf(f, "error: side %s: the device: %s\n", side_names[s],
					strerror(-err));
				return err;
			}
		}
		cur->dev.hdr_mask = want->dev.hdr_mask;
		cur->dev.drop_missing_hdrs = want->dev.drop_missing_hdrs;
		fprintf(f, "ok: device changed, %s\n",
			reneg ? "the drivers negotiate again (a reset)" : "live");
	}
	if (coalesce_differs(&cur->dev.coal, &want->dev.coal)) {
		for (s = 0; s < l->nsides; s++) {
			err = vnic_dev_set_coalesce(l->dev[s], &want->dev.coal);
			if (err) {
				fprintf(f, "error: side %s: coalescing: %s\n", side_names[s],
					strerror(-err));
				return err;
			}
		}
		cur->dev.coal = want->dev.coal;
		fputs("ok: coalescing changed, live\n", f);
	}
	if (cur->drv.mtu != want->drv.mtu || cur->drv.tx_queues != want->drv.tx_queues ||
	    cur->drv.tx_entries != want->drv.tx_entries ||
	    cur->drv.rx_entries != want->drv.rx_entries) {
		struct vnic_drv_params p = {
			.mtu = want->drv.mtu,
			.tx_queues = want->drv.tx_queues,
			.rx_queues = want->drv.rx_queues,
			.tx_entries = want->drv.tx_entries,
			.rx_entries = want->drv.rx_entries,
		};

		if (l->cable && want->drv.mtu > cur->cable.mtu) {
			fprintf(f, "error: mtu %u is above what the cable carries (%u): restart with "
				   "--mtu %u\n",
				want->drv.mtu, cur->cable.mtu, want->drv.mtu);
			return -EINVAL;
		}
		/* A smaller MTU reaches the hosts first, a larger one last: no frame too big. */
		if (l->host_mtu && want->drv.mtu < cur->drv.mtu) {
			err = l->host_mtu(l->host_ctx, want->drv.mtu);
			if (err) {
				fprintf(f, "error: the hosts' MTU: %s\n", strerror(-err));
				return err;
			}
		}
		for (s = 0; s < l->nsides; s++) {
			err = vnic_drv_change_param(l->drv[s], &p);
			if (err) {
				fprintf(f, "error: side %s: change-param: %s\n", side_names[s],
					strerror(-err));
				return err;
			}
		}
		if (l->host_mtu && want->drv.mtu > cur->drv.mtu) {
			err = wait_mtu(l, want->drv.mtu);
			if (!err)
				err = l->host_mtu(l->host_ctx, want->drv.mtu);
			if (err) {
				fprintf(f, "error: the hosts' MTU: %s\n", strerror(-err));
				return err;
			}
		}
		cur->drv.mtu = want->drv.mtu;
		cur->drv.tx_queues = want->drv.tx_queues;
		cur->drv.rx_queues = want->drv.rx_queues;
		cur->drv.tx_entries = want->drv.tx_entries;
		cur->drv.rx_entries = want->drv.rx_entries;
		fputs("ok: mtu, queues or rings changed: the drivers reset (change-param)\n", f);
	}
	return 0;
}

int vnic_live_set(struct vnic_live *l, char *args, FILE *f)
{
	char *keys[LIVE_MAX_PAIRS], *vals[LIVE_MAX_PAIRS];
	struct vnic_topo_config *want = malloc(sizeof(*want));
	int n, err;

	if (!want) {
		fputs("error: out of memory\n", f);
		return -ENOMEM;
	}
	*want = *l->cfg;
	n = split_pairs(args, keys, vals, f);
	err = n < 0 ? -EINVAL : check_pairs(l, keys, vals, n, want, f);
	if (!err)
		err = apply(l, want, f);
	free(want);
	return err;
}
