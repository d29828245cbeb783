// SPDX-License-Identifier: MIT
/*
 * The one table of options that describe a vNIC pair: its shape (queues,
 * MTU, rings), the driver's policies, the device, the hypervisor's cost
 * model and the cable. `vnic bench`, `vnic link` and `vnic experiment` all
 * parse them here, so a name means the same thing everywhere; each command
 * adds only its own options around them.
 *
 * Choice lists are not typed here: they come from the name tables of the
 * layers that own the enums (vnic_drv_*_name, vnic_deliver_mode_name,
 * vnic_dev_hdr_mask_name), walked from value 0 until the table answers
 * "unknown". Value 0 is the default of every policy, so help lists the
 * default first.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_SET */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app.h"

struct topo_opt;

typedef int (*opt_parse_fn)(const struct topo_opt *d, const char *arg,
			    struct vnic_topo_config *c);
typedef void (*opt_show_fn)(const struct topo_opt *d, const struct vnic_topo_config *c,
			    char *buf, size_t len);

struct topo_opt {
	const char *name;	/* the long option, without "--" */
	const char *meta;	/* the value in help ("N"); NULL: a flag, or a choice */
	const char *help;
	enum vnic_topo_opt_group group;
	opt_parse_fn parse;
	opt_show_fn show;	/* the value in force, as the option would take it */
	/* numbers: where the value goes, its range, and a scale (us -> ns) */
	size_t off;
	size_t off2;		/* a second field that takes the same value, or 0 */
	uint64_t min, max;
	uint64_t scale;
	double dmin, dmax;
	/* flags: the value the field takes */
	bool flag_value;
	/* choices */
	const char *(*choice_name)(unsigned int v);
	unsigned int (*choice_get)(const struct vnic_topo_config *c);
	void (*choice_set)(struct vnic_topo_config *c, unsigned int v);
};

#define FIELD(p, d, off) ((void *)((char *)(p) + (d)->off))
#define CFIELD(p, d, off) ((const void *)((const char *)(p) + (d)->off))

/* --- numbers ---------------------------------------------------------------- */

static int parse_u32(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	char opt[48];
	uint32_t v;
	int err;

	snprintf(opt, sizeof(opt), "--%s", d->name);
	err = vnic_arg_u32(opt, arg, (uint32_t)d->min, (uint32_t)d->max, &v);
	if (err)
		return err;
	*(uint32_t *)FIELD(c, d, off) = v;
	if (d->off2)
		*(uint32_t *)FIELD(c, d, off2) = v;
	return 0;
}

static void show_u32(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%" PRIu32, *(const uint32_t *)CFIELD(c, d, off));
}

/* A u64 field kept in units of 1/scale of the option's (us on the command line, ns inside). */
static int parse_u64(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	char opt[48];
	uint64_t v;
	int err;

	snprintf(opt, sizeof(opt), "--%s", d->name);
	err = vnic_arg_u64(opt, arg, d->min, d->max, &v);
	if (err)
		return err;
	*(uint64_t *)FIELD(c, d, off) = v * (d->scale ? d->scale : 1);
	return 0;
}

static void show_u64(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%" PRIu64,
		 *(const uint64_t *)CFIELD(c, d, off) / (d->scale ? d->scale : 1));
}

static int parse_si(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	char opt[48];

	snprintf(opt, sizeof(opt), "--%s", d->name);
	return vnic_arg_si(opt, arg, (uint64_t *)FIELD(c, d, off));
}

static int parse_double(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	char opt[48];

	snprintf(opt, sizeof(opt), "--%s", d->name);
	return vnic_arg_double(opt, arg, d->dmin, d->dmax, (double *)FIELD(c, d, off));
}

static void show_double(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
			size_t len)
{
	snprintf(buf, len, "%g", *(const double *)CFIELD(c, d, off));
}

/* --- flags ------------------------------------------------------------------ */

static int parse_flag(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	(void)arg;
	*(bool *)FIELD(c, d, off) = d->flag_value;
	return 0;
}

static void show_flag(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
		      size_t len)
{
	bool set = *(const bool *)CFIELD(c, d, off) == d->flag_value;

	snprintf(buf, len, "%s", set ? "on" : "off");
}

/* --- faults ----------------------------------------------------------------- */

/* A spec of src/hv's grammar (docs/FAULTS.md) into the whole configuration. */
static int parse_fault(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	struct vnic_fault_cfg f;

	if (vnic_fault_parse(arg, &f)) {
		fprintf(vnic_arg_err(), "vnic: --%s: %s\n", d->name, vnic_fault_strerror());
		return -EINVAL;
	}
	*(struct vnic_fault_cfg *)FIELD(c, d, off) = f;
	return 0;
}

static void show_fault(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
		       size_t len)
{
	if (vnic_fault_format(CFIELD(c, d, off), buf, len))
		snprintf(buf, len, "?");
}

/* --- pinning ---------------------------------------------------------------- */

/* "adaptive", "none", "auto", or a core per cpu thread: "0,1". Cores are checked at start. */
static int parse_pin(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	struct vnic_topo_pin p = { .mode = VNIC_PIN_LIST };
	char opt[48], one[16];
	const char *at = arg;

	snprintf(opt, sizeof(opt), "--%s", d->name);
	if (!strcmp(arg, "none") || !strcmp(arg, "auto") || !strcmp(arg, "adaptive")) {
		c->pin = (struct vnic_topo_pin){ .mode = *arg == 'n'	       ? VNIC_PIN_NONE
							 : !strcmp(arg, "auto") ? VNIC_PIN_AUTO
										: VNIC_PIN_ADAPTIVE };
		return 0;
	}
	for (;;) {
		size_t len = strcspn(at, ",");
		uint32_t core;
		int err;

		if (p.n == VNIC_TOPO_SIDES || !len || len >= sizeof(one))
			break;
		memcpy(one, at, len);
		one[len] = '\0';
		err = vnic_arg_u32(opt, one, 0, CPU_SETSIZE - 1, &core);
		if (err)
			return err;
		p.core[p.n++] = (int)core;
		at += len;
		if (!*at) {
			c->pin = p;
			return 0;
		}
		at++; /* the comma */
	}
	fprintf(vnic_arg_err(),
		"vnic: %s: '%s' is not adaptive, none, auto or a core per thread (\"0,1\")\n",
		opt, arg);
	return -EINVAL;
}

static void show_pin(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
		     size_t len)
{
	(void)d;
	if (c->pin.mode != VNIC_PIN_LIST) {
		snprintf(buf, len, "%s",
			 c->pin.mode == VNIC_PIN_AUTO	  ? "auto"
			 : c->pin.mode == VNIC_PIN_ADAPTIVE ? "adaptive"
							    : "none");
		return;
	}
	if (c->pin.n == 1)
		snprintf(buf, len, "%d", c->pin.core[0]);
	else
		snprintf(buf, len, "%d,%d", c->pin.core[0], c->pin.core[1]);
}

/* --- choices ---------------------------------------------------------------- */

static bool choice_valid(const struct topo_opt *d, unsigned int v)
{
	return strcmp(d->choice_name(v), "unknown") != 0;
}

/* "a|b|c" into buf. */
static void choice_list(const struct topo_opt *d, const char *sep, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned int v = 0; choice_valid(d, v) && at < len; v++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", v ? sep : "", d->choice_name(v));
}

static int parse_choice(const struct topo_opt *d, const char *arg, struct vnic_topo_config *c)
{
	char opt[48], list[128];

	for (unsigned int v = 0; arg && choice_valid(d, v); v++) {
		if (!strcmp(arg, d->choice_name(v))) {
			d->choice_set(c, v);
			return 0;
		}
	}
	snprintf(opt, sizeof(opt), "--%s", d->name);
	choice_list(d, ", ", list, sizeof(list));
	return vnic_arg_bad_choice(opt, arg ? arg : "", list);
}

static void show_choice(const struct topo_opt *d, const struct vnic_topo_config *c, char *buf,
			size_t len)
{
	snprintf(buf, len, "%s", d->choice_name(d->choice_get(c)));
}

/* Adapters from each owner's typed name function and enum field to the table's. */
#define CHOICE(fn, namefn, type, field)                                                            \
	static const char *fn##_name(unsigned int v)                                               \
	{                                                                                          \
		return namefn((type)v);                                                            \
	}                                                                                          \
	static unsigned int fn##_get(const struct vnic_topo_config *c)                             \
	{                                                                                          \
		return (unsigned int)c->field;                                                     \
	}                                                                                          \
	static void fn##_set(struct vnic_topo_config *c, unsigned int v)                           \
	{                                                                                          \
		c->field = (type)v;                                                                \
	}

CHOICE(rx_replenish, vnic_drv_rx_replenish_name, enum vnic_drv_rx_replenish, drv.rx_replenish)
CHOICE(tx_hdr_build, vnic_drv_tx_hdr_build_name, enum vnic_drv_tx_hdr_build, drv.tx_hdr_build)
CHOICE(tx_submit, vnic_drv_tx_submit_name, enum vnic_drv_tx_submit, drv.tx_submit)
CHOICE(bql_complete, vnic_drv_bql_complete_name, enum vnic_drv_bql_complete, drv.bql_complete)
CHOICE(tx_csum, vnic_drv_tx_csum_name, enum vnic_drv_tx_csum, drv.tx_csum)
CHOICE(rx_deliver, vnic_deliver_mode_name, enum vnic_deliver_mode, drv.rx_deliver)
CHOICE(tx_reclaim, vnic_drv_tx_reclaim_name, enum vnic_drv_tx_reclaim, drv.tx_reclaim)
CHOICE(tx_buf, vnic_drv_tx_buf_name, enum vnic_drv_tx_buf, drv.tx_buf)
CHOICE(rx_agg, vnic_drv_rx_agg_name, enum vnic_drv_rx_agg, drv.rx_agg)
CHOICE(hdr_mask, vnic_dev_hdr_mask_name, enum vnic_dev_hdr_mask, dev.hdr_mask)
CHOICE(spin, vnic_cpu_spin_name, enum vnic_cpu_spin, spin)
CHOICE(doorbell, vnic_hv_doorbell_name, enum vnic_hv_doorbell, doorbell)

/* --- the table -------------------------------------------------------------- */

#define OFF(f) offsetof(struct vnic_topo_config, f)

#define U32(n, m, h, g, f, lo, hi)                                                                 \
	{ .name = n, .meta = m, .help = h, .group = g, .parse = parse_u32, .show = show_u32,       \
	  .off = OFF(f), .min = lo, .max = hi }
#define U32_2(n, m, h, g, f, f2, lo, hi)                                                           \
	{ .name = n, .meta = m, .help = h, .group = g, .parse = parse_u32, .show = show_u32,       \
	  .off = OFF(f), .off2 = OFF(f2), .min = lo, .max = hi }
#define U64(n, m, h, g, f, lo, hi, sc)                                                             \
	{ .name = n, .meta = m, .help = h, .group = g, .parse = parse_u64, .show = show_u64,       \
	  .off = OFF(f), .min = lo, .max = hi, .scale = sc }
#define DBL(n, m, h, g, f, lo, hi)                                                                 \
	{ .name = n, .meta = m, .help = h, .group = g, .parse = parse_double,                      \
	  .show = show_double, .off = OFF(f), .dmin = lo, .dmax = hi }
#define FLAG(n, h, g, f, v)                                                                        \
	{ .name = n, .help = h, .group = g, .parse = parse_flag, .show = show_flag,                \
	  .off = OFF(f), .flag_value = v }
#define CHOOSE(n, h, g, fn)                                                                        \
	{ .name = n, .help = h, .group = g, .parse = parse_choice, .show = show_choice,            \
	  .choice_name = fn##_name, .choice_get = fn##_get, .choice_set = fn##_set }

static_assert(sizeof(unsigned int) == sizeof(uint32_t), "queue counts are parsed as u32");

static const struct topo_opt table[] = {
	/* the vNIC */
	U32_2("queues", "N", "queue pairs to negotiate", VNIC_OPTG_VNIC, drv.tx_queues,
	      drv.rx_queues, 1, VNIC_MAX_QUEUES),
	U32_2("mtu", "N", "L3 MTU", VNIC_OPTG_VNIC, drv.mtu, cable.mtu, VNIC_DRV_MIN_MTU,
	      VNIC_DRV_MAX_MTU),
	U32("tx-entries", "N", "descriptors per tx queue", VNIC_OPTG_VNIC, drv.tx_entries, 16,
	    VNIC_MAX_SUBCRQ_ENTRIES),
	U32("rx-entries", "N", "rx buffers per rx queue", VNIC_OPTG_VNIC, drv.rx_entries, 16,
	    VNIC_MAX_SUBCRQ_ENTRIES),
	U32("ind-descs", "N", "descriptors per indirect send", VNIC_OPTG_VNIC, drv.max_ind_descs,
	    1, VNIC_MAX_IND_DESCS),
	FLAG("no-tso", "the vNIC offers no TSO: the host sends MSS frames", VNIC_OPTG_VNIC,
	     drv.tso, false),
	FLAG("no-bql", "byte queue limits off", VNIC_OPTG_VNIC, drv.bql, false),
	U64("busy-poll-us", "N", "cpu spin before sleeping, us, at most", VNIC_OPTG_VNIC,
	    busy_poll_ns, 0, 1000000, 1000),
	CHOOSE("busy-poll", "spin as idles suggest (halt-polling), or always the most",
	       VNIC_OPTG_VNIC, spin),
	CHOOSE("doorbell", "split: the partner's interrupts by eventfd, or seen by a spinning cpu",
	       VNIC_OPTG_VNIC, doorbell),
	U32("threads", "1|2", "datapath threads: a side each, or both sides on one",
	    VNIC_OPTG_VNIC, threads, 1, 2),
	U32("spinners", "1|2", "datapath threads that may busy-poll at once", VNIC_OPTG_VNIC,
	    spinners, 1, 2),
	{ .name = "pin", .meta = "CORES",
	  .help = "cpu threads on cores: adaptive (apart while idle), none, auto or a list: 0,1",
	  .group = VNIC_OPTG_VNIC, .parse = parse_pin, .show = show_pin },
	/* the driver's policies */
	CHOOSE("rx-replenish", "rx buffer replenish (ibmvnic rr 1/7)", VNIC_OPTG_POLICY,
	       rx_replenish),
	CHOOSE("tx-hdr-build", "header descriptors built (ibmvnic rr 2/7, 3/7)", VNIC_OPTG_POLICY,
	       tx_hdr_build),
	CHOOSE("tx-submit", "send a lone packet direct (ibmvnic rr 5/7)", VNIC_OPTG_POLICY,
	       tx_submit),
	CHOOSE("bql-complete", "BQL completion (ibmvnic rr 6/7)", VNIC_OPTG_POLICY, bql_complete),
	CHOOSE("tx-csum", "checksum offload and the direct path (ibmvnic rr 7/7)",
	       VNIC_OPTG_POLICY, tx_csum),
	CHOOSE("rx-deliver", "rx delivery to the host (dpaa2-eth rx list)", VNIC_OPTG_POLICY,
	       rx_deliver),
	CHOOSE("tx-reclaim", "tx completion reclaim (bcmgenet orphan)", VNIC_OPTG_POLICY,
	       tx_reclaim),
	U64("reclaim-us", "N", "tx-reclaim=lazy timer, us", VNIC_OPTG_POLICY, drv.reclaim_ns, 1,
	    10000000, 1000),
	CHOOSE("tx-buf", "superpackets copied into the LTB, or sent from the host's buffer",
	       VNIC_OPTG_POLICY, tx_buf),
	CHOOSE("rx-agg", "GRO aggregates copied whole, or segments chained (a TAP host)",
	       VNIC_OPTG_POLICY, rx_agg),
	/* the device */
	CHOOSE("hdr-mask", "headers the device asks for with checksum offload", VNIC_OPTG_DEVICE,
	       hdr_mask),
	FLAG("drop-missing-hdrs", "drop offload sends that lack the headers asked for",
	     VNIC_OPTG_DEVICE, dev.drop_missing_hdrs, true),
	U32_2("dev-queues", "N", "most queues the device grants", VNIC_OPTG_DEVICE,
	      dev.max_tx_queues, dev.max_rx_queues, 1, VNIC_MAX_QUEUES),
	/* completion interrupt coalescing, ethtool -C's names (docs/MECHANISMS.md section 9) */
	U32("rx-usecs", "N", "rx completion interrupt at most N us after the first; 0 off",
	    VNIC_OPTG_DEVICE, dev.coal.rx_usecs, 0, VNIC_DEV_COAL_MAX_USECS),
	U32("rx-frames", "N", "rx completion interrupt every N completions; 0 off",
	    VNIC_OPTG_DEVICE, dev.coal.rx_frames, 0, VNIC_DEV_COAL_MAX_FRAMES),
	U32("tx-usecs", "N", "tx completion interrupt at most N us after the first; 0 off",
	    VNIC_OPTG_DEVICE, dev.coal.tx_usecs, 0, VNIC_DEV_COAL_MAX_USECS),
	U32("tx-frames", "N", "tx completion interrupt every N completions; 0 off",
	    VNIC_OPTG_DEVICE, dev.coal.tx_frames, 0, VNIC_DEV_COAL_MAX_FRAMES),
	FLAG("adaptive-rx", "rx coalescing chosen by the rates (net_dim), not rx-usecs/frames",
	     VNIC_OPTG_DEVICE, dev.coal.adaptive_rx, true),
	FLAG("adaptive-tx", "tx coalescing chosen by the rates (net_dim), not tx-usecs/frames",
	     VNIC_OPTG_DEVICE, dev.coal.adaptive_tx, true),
	/* the hypervisor's cost model */
	U64("cost-direct-ns", "N", "per send_subcrq hcall", VNIC_OPTG_COST, cost.hcall_direct_ns,
	    0, 1000000000, 1),
	U64("cost-indirect-ns", "N", "per send_subcrq_indirect hcall", VNIC_OPTG_COST,
	    cost.hcall_indirect_ns, 0, 1000000000, 1),
	U64("cost-crq-ns", "N", "per CRQ message", VNIC_OPTG_COST, cost.hcall_crq_ns, 0,
	    1000000000, 1),
	U64("cost-dma-ns-per-kib", "N", "per KiB copied through the DMA window", VNIC_OPTG_COST,
	    cost.dma_ns_per_kib, 0, 1000000000, 1),
	U64("cost-irq-ns", "N", "per interrupt delivered", VNIC_OPTG_COST, cost.irq_ns, 0,
	    1000000000, 1),
	/* the cable */
	{ .name = "rate", .meta = "BPS", .help = "line rate, bit/s with k/M/G; 0 = unlimited",
	  .group = VNIC_OPTG_CABLE, .parse = parse_si, .show = show_u64,
	  .off = OFF(cable.rate_bps) },
	U64("delay-us", "N", "one-way delay, us", VNIC_OPTG_CABLE, cable.delay_ns, 0, 10000000,
	    1000),
	DBL("loss", "P", "probability a frame is lost", VNIC_OPTG_CABLE, cable.loss, 0, 0.5),
	DBL("reorder", "P", "probability a frame is held back behind the next",
	    VNIC_OPTG_CABLE, cable.reorder, 0, 0.5),
	DBL("corrupt", "P", "probability a bit of a frame is flipped", VNIC_OPTG_CABLE,
	    cable.corrupt, 0, 0.5),
	U64("seed", "N", "random seed of loss, reorder and corrupt", VNIC_OPTG_CABLE, cable.seed,
	    0, UINT64_MAX, 1),
	FLAG("cable-tso", "TSO superframes whole between vNICs that negotiate large receive",
	     VNIC_OPTG_CABLE, cable.tso, true),
	/* faults on demand */
	{ .name = "fault", .meta = "SPEC",
	  .help = "faults on demand, NAME=VALUE,... (docs/FAULTS.md)",
	  .group = VNIC_OPTG_FAULT, .parse = parse_fault, .show = show_fault, .off = OFF(fault) },
};

enum { NOPTS = sizeof(table) / sizeof(table[0]) };
static_assert((int)NOPTS <= (int)VNIC_TOPO_OPTS_MAX, "VNIC_TOPO_OPTS_MAX is too small");

static const char *const group_title[VNIC_OPTG_COUNT] = {
	[VNIC_OPTG_VNIC] = "vNIC",
	[VNIC_OPTG_POLICY] = "driver policies",
	[VNIC_OPTG_DEVICE] = "device",
	[VNIC_OPTG_COST] = "cost model, ns (all 0 by default)",
	[VNIC_OPTG_CABLE] = "cable",
	[VNIC_OPTG_FAULT] = "faults",
};

static const struct topo_opt *by_name(const char *name)
{
	for (unsigned int i = 0; i < NOPTS; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

static bool wanted(const struct topo_opt *d, unsigned int groups)
{
	return groups & (1u << d->group);
}

/* --- the API ---------------------------------------------------------------- */

unsigned int vnic_topo_opts_longopts(struct option *out, unsigned int max, unsigned int groups)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NOPTS && n < max; i++) {
		if (!wanted(&table[i], groups))
			continue;
		out[n].name = table[i].name;
		out[n].has_arg = table[i].parse == parse_flag ? no_argument : required_argument;
		out[n].flag = NULL;
		out[n].val = VNIC_TOPO_OPT_BASE + (int)i;
		n++;
	}
	return n;
}

bool vnic_topo_opt_is(int c)
{
	return c >= VNIC_TOPO_OPT_BASE && c < VNIC_TOPO_OPT_BASE + (int)NOPTS;
}

int vnic_topo_opt_parse(int c, const char *arg, struct vnic_topo_config *cfg,
			unsigned int *groups_set)
{
	const struct topo_opt *d;
	int err;

	if (!vnic_topo_opt_is(c))
		return -EINVAL;
	d = &table[c - VNIC_TOPO_OPT_BASE];
	err = d->parse(d, arg, cfg);
	if (!err && groups_set)
		*groups_set |= 1u << d->group;
	return err;
}

int vnic_topo_opt_set(const char *name, const char *value, struct vnic_topo_config *cfg)
{
	const struct topo_opt *d = name ? by_name(name) : NULL;

	if (!d) {
		fprintf(vnic_arg_err(),
			"vnic: '%s' is not a vNIC, policy, device, cost, cable or fault option\n",
			name ? name : "");
		return -ENOENT;
	}
	if (d->parse == parse_flag) {
		/* a flag by name takes on/off, so that it can be compared both ways */
		if (!strcmp(value, "on") || !strcmp(value, "off")) {
			*(bool *)FIELD(cfg, d, off) = !strcmp(value, "on") == d->flag_value;
			return 0;
		}
		return vnic_arg_bad_choice(d->name, value, "on, off");
	}
	return d->parse(d, value, cfg);
}

int vnic_topo_opt_show(const char *name, const struct vnic_topo_config *cfg, char *buf,
		       size_t len)
{
	const struct topo_opt *d = by_name(name);

	if (!d)
		return -ENOENT;
	d->show(d, cfg, buf, len);
	return 0;
}

unsigned int vnic_topo_opt_names(unsigned int groups, const char **out, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NOPTS; i++) {
		if (!wanted(&table[i], groups))
			continue;
		if (n < max)
			out[n] = table[i].name;
		n++;
	}
	return n;
}

/* The range a number takes, where it says something: "68..9000". */
static void range(const struct topo_opt *d, char *buf, size_t len)
{
	buf[0] = '\0';
	if (d->parse == parse_u32)
		snprintf(buf, len, ", %" PRIu64 "..%" PRIu64, d->min, d->max);
	else if (d->parse == parse_double)
		snprintf(buf, len, ", %g..%g", d->dmin, d->dmax);
}

/* "  --name VALUE" padded to the help column, then help, range and the default. */
static void usage_line(FILE *f, const struct topo_opt *d, const struct vnic_topo_config *def)
{
	char left[160], val[64], list[128], rng[48];
	const char *value = d->meta;

	if (d->parse == parse_choice) {
		choice_list(d, "|", list, sizeof(list));
		value = list;
	}
	snprintf(left, sizeof(left), "  --%s%s%s", d->name, value ? " " : "", value ? value : "");
	if (strlen(left) > 21)
		fprintf(f, "%s\n%-22s", left, "");
	else
		fprintf(f, "%-22s", left);
	d->show(d, def, val, sizeof(val));
	range(d, rng, sizeof(rng));
	if (d->parse == parse_flag)
		fprintf(f, "%s\n", d->help);
	else
		fprintf(f, "%s%s (%s)\n", d->help, rng, val);
}

void vnic_topo_opts_usage(FILE *f, unsigned int groups, const struct vnic_topo_config *def)
{
	for (unsigned int g = 0; g < VNIC_OPTG_COUNT; g++) {
		if (!(groups & (1u << g)))
			continue;
		fprintf(f, "%s:\n", group_title[g]);
		for (unsigned int i = 0; i < NOPTS; i++)
			if (table[i].group == g)
				usage_line(f, &table[i], def);
	}
}

unsigned int vnic_topo_policies(const struct vnic_topo_config *cfg, struct vnic_kv *out,
				unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NOPTS; i++) {
		if (table[i].parse != parse_choice)
			continue;
		if (n < max) {
			out[n].key = table[i].name;
			out[n].value = table[i].choice_name(table[i].choice_get(cfg));
		}
		n++;
	}
	return n;
}

/* getopt's own message is off (opterr = 0): one line of ours for each mistake. */
static int getopt_error(const char *cmd, int argc, char **argv)
{
	const char *arg = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "";

	if (optopt)
		fprintf(stderr, "%s: option '%s' needs a value\n", cmd, arg);
	else
		fprintf(stderr, "%s: unknown option '%s'\n", cmd, arg);
	return -EINVAL;
}

/* The options every command takes, with one meaning. */
enum { OPT_HELP = 0x2000, OPT_QUIET, OPT_JSON };

static const struct option common_opts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

/* common, own (ended by an all-zero entry), the table's groups; ended by an all-zero entry. */
static void merge(struct option *out, unsigned int max, const struct option *own,
		  unsigned int groups)
{
	unsigned int n = 0;

	for (unsigned int i = 0; common_opts[i].name && n + 1 < max; i++)
		out[n++] = common_opts[i];
	for (unsigned int i = 0; own && own[i].name && n + 1 < max; i++)
		out[n++] = own[i];
	n += vnic_topo_opts_longopts(out + n, max - n - 1, groups);
	memset(&out[n], 0, sizeof(out[n]));
}

static int common_opt(const struct vnic_opts_cmd *cmd, int c, void *opts)
{
	switch (c) {
	case OPT_HELP:
		cmd->usage(stdout);
		return 1;
	case OPT_QUIET:
		*(bool *)((char *)opts + cmd->quiet_off) = true;
		return 0;
	case OPT_JSON:
		*(bool *)((char *)opts + cmd->json_off) = true;
		return 0;
	}
	return cmd->opt(opts, c, optarg);
}

int vnic_opts_parse(const struct vnic_opts_cmd *cmd, int argc, char **argv, void *opts)
{
	/* Too big for the stack frame limit; a command line is parsed on one thread. */
	static struct option lo[VNIC_TOPO_OPTS_MAX + 64];
	int c, err;

	merge(lo, sizeof(lo) / sizeof(lo[0]), cmd->own, cmd->groups);
	optind = 0;	/* afresh each call: tests parse many lines in one process */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == '?')
			return getopt_error(cmd->name, argc, argv);
		err = common_opt(cmd, c, opts);
		if (err)
			return err;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", cmd->name, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

const char *vnic_opts_long_name(int c)
{
	return vnic_topo_opt_is(c) ? table[c - VNIC_TOPO_OPT_BASE].name : NULL;
}

int vnic_opts_check_ctl(const char *cmd, const char *ctl_name, bool ctl)
{
	if (!ctl_name || ctl)
		return 0;
	fprintf(stderr, "%s: --name names the control socket; --no-ctl turns it off\n", cmd);
	return -EINVAL;
}
