/* SPDX-License-Identifier: MIT */
/*
 * Faults on demand (docs/FAULTS.md): the spec grammar, its parser and
 * printer, and the seeded generator every injection point draws from.
 *
 * The configuration is plain data: the hv applies the hcall and CRQ items
 * (subcrq.c, crq.c), the device the scheduled ones (src/device). Each
 * injection point keeps its own generator state, written by the one thread
 * that owns the point, so a run with the same seed and the same sequence of
 * events draws the same faults.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv/hv_priv.h"

/* --- generator --------------------------------------------------------------- */

/* splitmix64: one add and a mix per draw; any seed (0 too) gives a full-period stream. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void vnic_fault_rng_init(struct vnic_fault_rng *r, uint64_t seed, uint64_t stream)
{
	r->s = mix(seed ^ mix(stream + 0x9e3779b97f4a7c15ull));
}

uint64_t vnic_fault_rng_next(struct vnic_fault_rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix(r->s);
}

bool vnic_fault_roll(struct vnic_fault_rng *r, double p)
{
	if (p <= 0)
		return false;
	if (p >= 1)
		return true;
	/* 53 random bits against p: exact for every double in (0, 1) */
	return (double)(vnic_fault_rng_next(r) >> 11) * 0x1p-53 < p;
}

/* --- the spec ---------------------------------------------------------------- */

static _Thread_local char last_error[128];

const char *vnic_fault_strerror(void)
{
	return last_error;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

enum item_kind { K_PROB, K_DUR, K_U32, K_U64 };

struct item {
	const char *name;
	enum item_kind kind;
	size_t off;
	uint64_t min, max; /* K_U32, K_U64 */
};

#define ITEM(n, k, f, lo, hi)                                                                      \
	{                                                                                          \
		n, k, offsetof(struct vnic_fault_cfg, f), lo, hi                                   \
	}

/* In the order vnic_fault_format prints them. */
static const struct item items[] = {
	ITEM("seed", K_U64, seed, 0, UINT64_MAX),
	ITEM("hcall-busy", K_PROB, hcall_busy, 0, 0),
	ITEM("hcall-dropped", K_PROB, hcall_dropped, 0, 0),
	ITEM("hcall-closed", K_PROB, hcall_closed, 0, 0),
	ITEM("ind-param-above", K_U32, ind_param_above, 1, VNIC_MAX_IND_DESCS - 1),
	ITEM("crq-loss", K_PROB, crq_loss, 0, 0),
	ITEM("crq-dup", K_PROB, crq_dup, 0, 0),
	ITEM("reset-every", K_DUR, reset_every_ns, 0, 0),
	ITEM("failover-every", K_DUR, failover_every_ns, 0, 0),
	ITEM("down-for", K_DUR, down_ns, 0, 0),
	ITEM("err-ind-every", K_DUR, err_ind_every_ns, 0, 0),
	ITEM("err-ind-fatal", K_PROB, err_ind_fatal, 0, 0),
	ITEM("link-flap-every", K_DUR, link_flap_every_ns, 0, 0),
	ITEM("link-down-for", K_DUR, link_down_ns, 0, 0),
};

enum { NITEMS = sizeof(items) / sizeof(items[0]) };

/* Longest a duration may be: an hour, so that deadlines never wrap. */
#define DUR_MAX_NS 3600000000000ull

static int parse_prob(const char *name, const char *v, double *out)
{
	char *end;
	double p;

	errno = 0;
	p = strtod(v, &end);
	if (end == v || *end || errno || isnan(p))
		return fail("%s: '%s' is not a probability", name, v);
	if (p < 0 || p > 1)
		return fail("%s: %s is not between 0 and 1", name, v);
	*out = p;
	return 0;
}

static int parse_dur(const char *name, const char *v, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	char *end;
	double n;
	size_t i;

	errno = 0;
	n = strtod(v, &end);
	if (end == v || errno || isnan(n) || n < 0)
		return fail("%s: '%s' is not a duration", name, v);
	if (!*end)
		return fail("%s: '%s' needs a unit: ns, us, ms or s", name, v);
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		n *= (double)units[i].ns;
		if (n > (double)DUR_MAX_NS)
			return fail("%s: %s is longer than an hour", name, v);
		*out = (uint64_t)(n + 0.5);
		return 0;
	}
	return fail("%s: '%s' is not a unit: ns, us, ms or s", name, end);
}

static int parse_uint(const struct item *it, const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (*v == '-' || *v == '+')
		return fail("%s: '%s' is not a number", it->name, v);
	errno = 0;
	n = strtoull(v, &end, 0);
	if (end == v || *end || errno)
		return fail("%s: '%s' is not a number", it->name, v);
	if (n < it->min || n > it->max)
		return fail("%s: %s is not in %" PRIu64 "..%" PRIu64, it->name, v, it->min,
			    it->max);
	*out = n;
	return 0;
}

static int parse_item(struct vnic_fault_cfg *c, const char *name, size_t nlen, const char *v)
{
	char *base = (char *)c;
	uint64_t n;
	size_t i;
	int err;

	for (i = 0; i < NITEMS; i++) {
		const struct item *it = &items[i];

		if (strlen(it->name) != nlen || strncmp(it->name, name, nlen))
			continue;
		if (!*v)
			return fail("%s: no value", it->name);
		switch (it->kind) {
		case K_PROB:
			return parse_prob(it->name, v, (double *)(base + it->off));
		case K_DUR:
			return parse_dur(it->name, v, (uint64_t *)(base + it->off));
		case K_U32:
			err = parse_uint(it, v, &n);
			if (!err)
				*(uint32_t *)(base + it->off) = (uint32_t)n;
			return err;
		case K_U64:
			return parse_uint(it, v, (uint64_t *)(base + it->off));
		}
	}
	return fail("'%.*s' is not a fault (see docs/FAULTS.md)", (int)nlen, name);
}

void vnic_fault_cfg_default(struct vnic_fault_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->down_ns = VNIC_FAULT_DEFAULT_DOWN_NS;
	c->link_down_ns = VNIC_FAULT_DEFAULT_LINK_DOWN_NS;
}

int vnic_fault_parse(const char *spec, struct vnic_fault_cfg *out)
{
	struct vnic_fault_cfg c;
	char buf[512];
	char *p, *item, *save = NULL;

	last_error[0] = '\0';
	if (!spec || !out)
		return fail("no spec");
	if (strlen(spec) >= sizeof(buf))
		return fail("the spec is longer than %zu characters", sizeof(buf) - 1);
	vnic_fault_cfg_default(&c);
	/* "" and "none" turn every fault off */
	if (!*spec || !strcmp(spec, "none")) {
		*out = c;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (p = buf; (item = strtok_r(p, ",", &save)); p = NULL) {
		char *eq = strchr(item, '=');
		int err;

		if (!eq)
			return fail("'%s' is not NAME=VALUE", item);
		err = parse_item(&c, item, (size_t)(eq - item), eq + 1);
		if (err)
			return err;
	}
	if (c.hcall_busy + c.hcall_dropped + c.hcall_closed > 1)
		return fail("hcall-busy, hcall-dropped and hcall-closed add up to more than 1");
	if (c.crq_loss + c.crq_dup > 1)
		return fail("crq-loss and crq-dup add up to more than 1");
	if ((c.reset_every_ns && c.down_ns >= c.reset_every_ns) ||
	    (c.failover_every_ns && c.down_ns >= c.failover_every_ns))
		return fail("down-for must be shorter than reset-every and failover-every");
	if (c.link_flap_every_ns && c.link_down_ns >= c.link_flap_every_ns)
		return fail("link-down-for must be shorter than link-flap-every");
	*out = c;
	return 0;
}

static void put_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns % 1000000000u == 0)
		snprintf(buf, len, "%" PRIu64 "s", ns / 1000000000u);
	else if (ns % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "ms", ns / 1000000);
	else if (ns % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "us", ns / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
}

/* The shortest form that reads back as the same double: 0.1, not 0.10000000000000001. */
static void put_prob(char *buf, size_t len, double p)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, p);
		if (strtod(buf, NULL) == p)
			return;
	}
}

/* An item worth printing: set, and not the default of an item that needs another. */
static bool item_set(const struct vnic_fault_cfg *c, const struct item *it)
{
	const char *base = (const char *)c;

	switch (it->kind) {
	case K_PROB:
		return *(const double *)(base + it->off) > 0;
	case K_DUR:
		if (it->off == offsetof(struct vnic_fault_cfg, down_ns))
			return c->down_ns != VNIC_FAULT_DEFAULT_DOWN_NS;
		if (it->off == offsetof(struct vnic_fault_cfg, link_down_ns))
			return c->link_down_ns != VNIC_FAULT_DEFAULT_LINK_DOWN_NS;
		return *(const uint64_t *)(base + it->off) != 0;
	case K_U32:
		return *(const uint32_t *)(base + it->off) != 0;
	case K_U64:
		return it->off == offsetof(struct vnic_fault_cfg, seed)
			       ? c->seed != 1
			       : *(const uint64_t *)(base + it->off);
	}
	return false;
}

bool vnic_fault_any(const struct vnic_fault_cfg *c)
{
	return vnic_fault_hv_any(c) || vnic_fault_dev_any(c);
}

bool vnic_fault_hv_any(const struct vnic_fault_cfg *c)
{
	return c->hcall_busy > 0 || c->hcall_dropped > 0 || c->hcall_closed > 0 ||
	       c->ind_param_above || c->crq_loss > 0 || c->crq_dup > 0;
}

bool vnic_fault_dev_any(const struct vnic_fault_cfg *c)
{
	return c->reset_every_ns || c->failover_every_ns || c->err_ind_every_ns ||
	       c->link_flap_every_ns;
}

int vnic_fault_format(const struct vnic_fault_cfg *c, char *buf, size_t len)
{
	const char *base = (const char *)c;
	size_t at = 0;
	size_t i;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (!vnic_fault_any(c)) {
		snprintf(buf, len, "none");
		return 0;
	}
	for (i = 0; i < NITEMS; i++) {
		const struct item *it = &items[i];
		char v[32];
		int n;

		if (!item_set(c, it))
			continue;
		switch (it->kind) {
		case K_PROB:
			put_prob(v, sizeof(v), *(const double *)(base + it->off));
			break;
		case K_DUR:
			put_dur(v, sizeof(v), *(const uint64_t *)(base + it->off));
			break;
		case K_U32:
			snprintf(v, sizeof(v), "%" PRIu32, *(const uint32_t *)(base + it->off));
			break;
		case K_U64:
			snprintf(v, sizeof(v), "%" PRIu64, *(const uint64_t *)(base + it->off));
			break;
		}
		n = snprintf(buf + at, len - at, "%s%s=%s", at ? "," : "", it->name, v);
		if (n < 0 || (size_t)n >= len - at)
			return -ENOSPC;
		at += (size_t)n;
	}
	return 0;
}
