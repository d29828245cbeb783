// SPDX-License-Identifier: MIT
/*
 * DQL against the algorithm of docs/MECHANISMS.md section 1.
 *
 * Two kinds of check. Small scripted tables whose expected limits are worked
 * out by hand in the comments, each run at several counter bases so that the
 * u32 counters wrap in the middle of the script. And a reference model
 * written straight from the text with unbounded 64-bit counters, driven in
 * lockstep with vnic_dql over scripted and random workloads; it also gives
 * the numbers for the once-per-round versus per-entry comparison.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"
#include "support.h"

/* Counter bases: none, the u32 wrap in mid-script, and the signed midpoint. */
static const uint32_t bases[] = {0, UINT32_MAX - 499, 0x7fffff00u};

/* Restart dql with every running counter at base (as if base bytes had passed). */
static void dql_setup(struct vnic_dql *dql, uint64_t hold, uint32_t base, uint64_t t0)
{
	vnic_dql_init(dql, hold);
	vnic_dql_reset(dql, t0);
	dql->num_queued = base;
	dql->num_completed = base;
	dql->prev_num_queued = base;
	dql->adj_limit = dql->limit + base;
}

enum op_kind { OP_END, OP_QUEUE, OP_COMPLETE, OP_LIMIT, OP_AVAIL, OP_MIN, OP_MAX };

struct op {
	enum op_kind kind;
	int64_t arg; /* bytes, expected value or configured min/max */
	uint64_t t;  /* OP_COMPLETE: now */
};

/* clang-format off */
#define Q(n) { OP_QUEUE, (n), 0 }
#define C(n, time) { OP_COMPLETE, (n), (time) }
#define LIMIT(v) { OP_LIMIT, (v), 0 }
#define AVAIL(v) { OP_AVAIL, (v), 0 }
/* clang-format on */

struct dql_case {
	const char *name;
	uint64_t hold;
	struct op ops[24];
};

/* All cases start at t = 0 with the hold window opening there. */
/* clang-format off */
static const struct dql_case cases[] = {
	{
		"starts at zero: the first enqueue is over the limit",
		1000,
		{ LIMIT(0), AVAIL(0), Q(1), AVAIL(-1), { OP_END, 0, 0 } },
	},
	{
		/*
		 * limit 0, queue 100, complete 100: inflight 100 > limit, so
		 * ovlimit = 100, and nothing is left in progress: starved.
		 * limit += (completed 100 - prev_num_queued 0) + prev_ovlimit 0
		 * = 100. adj_limit = 100 + 100, avail = 200 - 100 = 100.
		 */
		"starvation: drained while over the limit",
		1000,
		{ Q(100), C(100, 1), LIMIT(100), AVAIL(100), { OP_END, 0, 0 } },
	},
	{
		/*
		 * Q300: over limit 0. C100 at t1: ovlimit 300, 200 still in
		 * progress, prev_inprogress 0: neither branch; limit stays 0,
		 * prev_ovlimit = 300, prev_num_queued = 300, completed 100.
		 * Q50 (queued 350). C250 at t2: completed 350 >= prev 300 and
		 * prev_ovlimit 300: starved since the last call.
		 * limit += (350 - 300) + 300 = 350. avail = 350 + 350 - 350 = 350.
		 */
		"starvation since the last call adds the previous overshoot",
		1000,
		{ Q(300), C(100, 1), LIMIT(0), AVAIL(-200), Q(50), C(250, 2), LIMIT(350),
		  AVAIL(350), { OP_END, 0, 0 } },
	},
	{
		/*
		 * Get limit 1000 by starvation at t10 (hold window restarts
		 * at 10, ends after 1010). Refill to 1000 in flight and keep it
		 * there: each completion is followed by as many bytes queued.
		 * C100 t20: prev_inprogress 0 (all was complete last time): no
		 * change. C300 t30: busy throughout; slack = 1000 - 2*300 = 400,
		 * lowest 400, but t30 is inside the window: limit stays 1000.
		 * C100 t1010: slack 1000 - 200 = 800, lowest stays 400; t1010 is
		 * not after 1010: still 1000. C100 t1011: slack 800, after the
		 * window: limit = 1000 - lowest 400 = 600 (not 1000 - 800: the
		 * least slack of the window counts, not the last).
		 */
		"busy queue shrinks by the lowest slack, only after the hold time",
		1000,
		{ Q(1000), C(1000, 10), LIMIT(1000), Q(1000), C(100, 20), Q(100), LIMIT(1000),
		  C(300, 30), Q(300), LIMIT(1000), C(100, 1010), Q(100), LIMIT(1000),
		  C(100, 1011), LIMIT(600), { OP_END, 0, 0 } },
	},
	{
		/*
		 * Limit 1000 at t10. Q700 + Q500: 1200 in flight, last object
		 * 500. C100 t20: ovlimit 200, prev_inprogress 0: no change;
		 * prev_ovlimit 200, prev_last_obj_cnt 500. C800 t1011: busy
		 * (1100 in flight, 300 left, 1100 of the previous still to go);
		 * slack = max(0, 1000 + 200 - 1600) = 0, but the last object's
		 * part below the overshoot, 500 - 200 = 300, is slack too:
		 * limit = 1000 - 300 = 700.
		 */
		"slack of the last object when over the limit",
		1000,
		{ Q(1000), C(1000, 10), Q(700), Q(500), C(100, 20), LIMIT(1000), C(800, 1011),
		  LIMIT(700), { OP_END, 0, 0 } },
	},
	{
		/* As "starvation" but max 60: 100 is clamped to 60. avail 60 + 100 - 100. */
		"clamp to max_limit",
		1000,
		{ { OP_MAX, 60, 0 }, Q(100), C(100, 1), LIMIT(60), AVAIL(60), { OP_END, 0, 0 } },
	},
	{
		/* The shrinking case with min 800: 600 is clamped up to 800. */
		"clamp to min_limit",
		1000,
		{ { OP_MIN, 800, 0 }, Q(1000), C(1000, 10), LIMIT(1000), Q(1000), C(100, 20),
		  Q(100), C(300, 30), Q(300), C(100, 1011), LIMIT(800), { OP_END, 0, 0 } },
	},
	{
		/* Completing more than is in flight is cut to what is (100). */
		"over-completion is cut to inflight",
		1000,
		{ Q(100), C(500, 1), LIMIT(100), AVAIL(100), Q(50), AVAIL(50), { OP_END, 0, 0 } },
	},
};
/* clang-format on */

static void run_case(const struct dql_case *c, uint32_t base)
{
	struct vnic_dql dql;
	const struct op *op;

	dql_setup(&dql, c->hold, base, 0);
	for (op = c->ops; op->kind != OP_END; op++) {
		switch (op->kind) {
		case OP_QUEUE:
			vnic_dql_queued(&dql, (uint32_t)op->arg);
			break;
		case OP_COMPLETE:
			vnic_dql_completed(&dql, (uint32_t)op->arg, op->t);
			break;
		case OP_LIMIT:
			if (dql.limit != (uint32_t)op->arg)
				fail_msg("%s (base %u): limit %u, expected %lld", c->name, base,
					 dql.limit, (long long)op->arg);
			break;
		case OP_AVAIL:
			if (vnic_dql_avail(&dql) != op->arg)
				fail_msg("%s (base %u): avail %d, expected %lld", c->name, base,
					 vnic_dql_avail(&dql), (long long)op->arg);
			break;
		case OP_MIN:
			dql.min_limit = (uint32_t)op->arg;
			break;
		case OP_MAX:
			dql.max_limit = (uint32_t)op->arg;
			break;
		case OP_END:
			break;
		}
	}
}

static void test_table(void **state)
{
	size_t i, b;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
			run_case(&cases[i], bases[b]);
}

static void test_init_and_reset(void **state)
{
	struct vnic_dql dql;

	(void)state;
	vnic_dql_init(&dql, 5);
	assert_int_equal(dql.max_limit, VNIC_DQL_MAX_LIMIT);
	assert_int_equal(dql.max_limit, 1879048192u);
	assert_int_equal(dql.min_limit, 0);
	assert_int_equal(dql.limit, 0);
	assert_int_equal(dql.slack_hold_time_ns, 5);
	vnic_dql_queued(&dql, 100);
	vnic_dql_completed(&dql, 100, vnic_now_ns());
	vnic_dql_queued(&dql, 70);
	assert_int_equal(dql.limit, 100);
	assert_int_equal(vnic_dql_inflight(&dql), 70);

	/* After a reset the limit is min_limit again and avail counts from it. */
	dql.min_limit = 40;
	vnic_dql_reset(&dql, 77);
	assert_int_equal(dql.limit, 40);
	assert_int_equal(vnic_dql_inflight(&dql), 0);
	assert_int_equal(vnic_dql_avail(&dql), 40);
	assert_int_equal(dql.lowest_slack, UINT32_MAX);
	assert_int_equal(dql.slack_start_time_ns, 77);
}

/* ---------------------------------------------------------------------------
 * Reference model: the text of docs/MECHANISMS.md section 1, with counters that
 * never wrap, max(0, x) spelled out, and no attempt at speed.
 * ------------------------------------------------------------------------- */

struct ref_dql {
	int64_t queued, completed_total, limit, prev_ovlimit, prev_queued, prev_last_obj;
	int64_t last_obj, lowest_slack, min_limit, max_limit;
	uint64_t slack_start, hold;
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void ref_init(struct ref_dql *r, uint64_t hold, uint64_t t0)
{
	memset(r, 0, sizeof(*r));
	r->lowest_slack = UINT32_MAX;
	r->max_limit = VNIC_DQL_MAX_LIMIT;
	r->hold = hold;
	r->slack_start = t0;
}

static void ref_queued(struct ref_dql *r, int64_t n)
{
	r->last_obj = n;
	r->queued += n;
}

static int64_t ref_avail(const struct ref_dql *r)
{
	return r->limit + r->completed_total - r->queued;
}

static void ref_completed(struct ref_dql *r, int64_t count, uint64_t now)
{
	int64_t completed = r->completed_total + count;
	int64_t ovlimit = max64(0, r->queued - r->completed_total - r->limit);
	int64_t inprogress = r->queued - completed;
	int64_t prev_inprogress = r->prev_queued - r->completed_total;
	int all_prev_completed = completed >= r->prev_queued;
	int64_t limit = r->limit;

	if ((ovlimit > 0 && inprogress == 0) || (r->prev_ovlimit > 0 && all_prev_completed)) {
		limit += max64(0, completed - r->prev_queued) + r->prev_ovlimit;
		r->slack_start = now;
		r->lowest_slack = UINT32_MAX;
	} else if (inprogress != 0 && prev_inprogress != 0 && !all_prev_completed) {
		int64_t slack = max64(0, limit + r->prev_ovlimit - 2 * count);
		int64_t last = r->prev_ovlimit ? max64(0, r->prev_last_obj - r->prev_ovlimit) : 0;

		slack = max64(slack, last);
		if (slack < r->lowest_slack)
			r->lowest_slack = slack;
		if (now > r->slack_start + r->hold) {
			limit = max64(0, limit - r->lowest_slack);
			r->slack_start = now;
			r->lowest_slack = UINT32_MAX;
		}
	}
	if (limit > r->max_limit)
		limit = r->max_limit;
	if (limit < r->min_limit)
		limit = r->min_limit;
	if (limit != r->limit)
		ovlimit = 0;
	r->limit = limit;
	r->prev_ovlimit = ovlimit;
	r->prev_last_obj = r->last_obj;
	r->completed_total = completed;
	r->prev_queued = r->queued;
}

static void expect_same(const struct vnic_dql *d, const struct ref_dql *r, const char *what,
			unsigned int step)
{
	if ((int64_t)d->limit != r->limit || (int64_t)vnic_dql_avail(d) != ref_avail(r) ||
	    (int64_t)vnic_dql_inflight(d) != r->queued - r->completed_total)
		fail_msg("%s step %u: limit %u/%lld avail %d/%lld", what, step, d->limit,
			 (long long)r->limit, vnic_dql_avail(d), (long long)ref_avail(r));
}

/*
 * A device that finishes at most cap bytes per interrupt interval, and a
 * sender that keeps BQL full (queues pkt-byte packets while avail >= 0, as a
 * qdisc does until STACK_XOFF). Each interval's completions are reported
 * either in one call (the ibmvnic fix) or one call per packet (per tx
 * completion entry, before the fix). Returns the final limit; *idle gets the
 * device capacity left unused over the second half of the run.
 */
struct workload {
	uint32_t pkt, cap, rounds;
	uint64_t hold;
};

static uint32_t simulate(const struct workload *w, bool per_entry, uint32_t base, uint64_t *idle)
{
	struct vnic_dql d;
	struct ref_dql r;
	unsigned int round;

	dql_setup(&d, w->hold, base, 0);
	ref_init(&r, w->hold, 0);
	*idle = 0;
	for (round = 1; round <= w->rounds; round++) {
		uint32_t inflight = vnic_dql_inflight(&d);
		uint32_t done = (inflight < w->cap ? inflight : w->cap) / w->pkt * w->pkt;
		uint32_t i;

		if (round > w->rounds / 2)
			*idle += w->cap - done;
		if (per_entry) {
			for (i = 0; i < done / w->pkt; i++) {
				vnic_dql_completed(&d, w->pkt, round);
				ref_completed(&r, w->pkt, round);
				expect_same(&d, &r, "per-entry", round);
			}
		} else if (done) {
			vnic_dql_completed(&d, done, round);
			ref_completed(&r, done, round);
			expect_same(&d, &r, "per-round", round);
		}
		/* The backlog is bounded so that a huge limit cannot loop forever. */
		for (i = 0; i < 4 * w->cap / w->pkt && vnic_dql_avail(&d) >= 0; i++) {
			vnic_dql_queued(&d, w->pkt);
			ref_queued(&r, w->pkt);
		}
		expect_same(&d, &r, per_entry ? "per-entry send" : "per-round send", round);
	}
	return d.limit;
}

/*
 * docs/MECHANISMS.md section 1, "Why once per completion round": with
 * one call per entry each call's count is one packet, so the
 * slack (limit - 2 * count) looks huge and the hold windows cut the limit
 * down, below what the device drains per interval. The device then runs
 * dry in some intervals. Reported once per round, the limit settles where
 * the device never idles. Both runs are checked step by step against the
 * reference model, which is where the numbers come from.
 */
static void test_once_per_round_beats_per_entry(void **state)
{
	const struct workload w = {.pkt = 100, .cap = 1000, .rounds = 5000, .hold = 20};
	size_t b;

	(void)state;
	for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		uint64_t idle_round, idle_entry;
		uint32_t per_round = simulate(&w, false, bases[b], &idle_round);
		uint32_t per_entry = simulate(&w, true, bases[b], &idle_entry);

		print_message("base %u: limit per round %u (idle %llu), per entry %u (idle %llu)\n",
			      bases[b], per_round, (unsigned long long)idle_round, per_entry,
			      (unsigned long long)idle_entry);
		assert_true(per_entry < per_round);
		/* Once per round the limit covers an interval's worth of bytes. */
		assert_true(per_round >= w.cap);
		assert_int_equal(idle_round, 0);
		/* Per entry it does not, and the device goes idle for it. */
		assert_true(per_entry < w.cap);
		assert_true(idle_entry > 0);
	}
}

/* Random enqueues and partial completions, lockstep with the model, across the wrap. */
static void test_random_against_model(void **state)
{
	uint64_t seed = 0x5eed;
	size_t b;

	(void)state;
	for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct vnic_dql d;
		struct ref_dql r;
		uint64_t now = 0;
		unsigned int step;

		dql_setup(&d, 50, bases[b], 0);
		ref_init(&r, 50, 0);
		for (step = 0; step < 200000; step++) {
			uint64_t x = vnic_test_rand_next(&seed);
			uint32_t inflight = vnic_dql_inflight(&d);

			now += x % 7;
			if ((x >> 8) % 3 || !inflight) {
				uint32_t n = 1 + (uint32_t)((x >> 16) % 9000);

				vnic_dql_queued(&d, n);
				ref_queued(&r, n);
			} else {
				uint32_t n = (x >> 20) % 4 ? 1 + (uint32_t)((x >> 24) % inflight)
							   : inflight;

				vnic_dql_completed(&d, n, now);
				ref_completed(&r, n, now);
			}
			expect_same(&d, &r, "random", step);
			/* Keep the in-flight bytes bounded, as BQL would. */
			if (vnic_dql_inflight(&d) > 1000000) {
				vnic_dql_completed(&d, vnic_dql_inflight(&d), now);
				ref_completed(&r, r.queued - r.completed_total, now);
				expect_same(&d, &r, "drain", step);
			}
		}
	}
}

/*
 * The counters read inflight from another thread, without a snapshot: a
 * reset zeroing both counters between its two loads looks like more
 * completed than queued. That must read as 0, not as 4 GiB in flight; a
 * difference across the u32 wrap is still a real one.
 */
static void test_inflight_never_negative(void **state)
{
	struct vnic_dql dql;

	(void)state;
	vnic_dql_init(&dql, 5);
	dql.num_completed = 150;
	dql.num_queued = 100;
	assert_int_equal(vnic_dql_inflight(&dql), 0);
	dql.num_completed = UINT32_MAX - 4;
	dql.num_queued = 5;
	assert_int_equal(vnic_dql_inflight(&dql), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_and_reset),
		cmocka_unit_test(test_inflight_never_negative),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_once_per_round_beats_per_entry),
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
