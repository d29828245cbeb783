// SPDX-License-Identifier: MIT
/*
 * Tracing: hit count and inclusive time per call path, per thread.
 *
 * Each thread that traces owns a struct trace_thread: a trie of the call
 * paths it has seen (node = path, child[slot] = the path one call deeper)
 * and the stack of paths now active. A point's slot is its index in the
 * process-wide table of points, given at its first traced begin. Only that thread writes it, so the
 * counters are plain loads and stores; they are relaxed atomics only so
 * that a report taken from another thread while traffic runs is race-free
 * (a snapshot, as with the counters). A new path is filled in before the
 * release store that links it to its parent, so a reader that follows the
 * link with acquire sees it whole.
 *
 * The registry (a list of the tables and the table of points, under a
 * mutex) is touched when a point or a thread first traces, when a thread
 * exits (its totals are folded into the "retired" trie, so a report after
 * the cpu threads have stopped still has them), and by reset and report:
 * never per packet.
 *
 * Reset bumps a generation instead of writing into tables it does not own:
 * a table whose generation is old is skipped by reports and zeroed by its
 * owner at its next begin.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "core/core.h"

_Atomic bool vnic_trace_active;

enum { ROOT = 0, NO_NODE = 0, NO_POINT = VNIC_TRACE_SLOTS };

static_assert(VNIC_TRACE_SLOTS < VNIC_TRACE_NO_SLOT, "a slot + 1 fits below the no-slot mark");

/* One call path. Node 0 of a trie is the root: no point, never a child. */
struct tnode {
	uint64_t hits; /* relaxed atomics: written by the owner only */
	uint64_t ticks;
	uint16_t child[VNIC_TRACE_SLOTS]; /* NO_NODE, or the callee's path; release/acquire */
	uint16_t parent;
	uint8_t point; /* the point's slot; NO_POINT at the root */
	uint8_t depth; /* 1 for a top-level point */
};

struct trace_thread {
	struct trace_thread *next; /* registry list, under reg.lock */
	uint32_t gen;		   /* the reset generation the table belongs to */
	uint32_t depth;
	uint16_t stack[VNIC_TRACE_DEPTH];
	uint16_t nnodes;    /* relaxed atomic: the reader bounds its walk by it */
	uint64_t lost;	    /* begins not recorded: too deep or too many paths */
	uint64_t unmatched; /* ends whose begin was not on the stack */
	struct tnode nodes[VNIC_TRACE_PATHS];
};

/* A trie that grows (the retired totals, a report's merge). */
struct trie {
	struct tnode *nodes;
	unsigned int n, cap;
};

static struct {
	pthread_mutex_t lock;
	pthread_once_t once;
	pthread_key_t key;
	bool key_ok;
	struct trace_thread *threads;
	/* slot -> point; an entry, once set, never changes */
	const struct vnic_trace_point *points[VNIC_TRACE_SLOTS];
	unsigned int npoints;
	struct trie retired;
	uint64_t retired_lost, retired_unmatched;
	unsigned int retired_threads; /* exited threads folded into retired */
	_Atomic uint32_t gen;
	/* ns = ticks * ns_per_tick; written at enable, under lock */
	double ns_per_tick;
	bool tsc;
} reg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
	.ns_per_tick = 1.0,
};

static __thread struct trace_thread *self;

/* --- clock ------------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The TSC is not serialising: an out-of-order read may move by a few dozen
 * cycles, noise against the hundreds a traced function takes, and cheaper
 * than rdtscp or a fence on every point.
 */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return mono_ns();
#endif
}

#if defined(__x86_64__)
/*
 * A (tsc, ns) pair read as close together as we can: the ns read bracketed
 * by two tsc reads, the tightest of a few tries (a preemption in between
 * would otherwise skew the rate).
 */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t a = __rdtsc(), n = mono_ns(), b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

static void calibrate(void)
{
	uint64_t t0, n0, t1, n1;

	clock_pair(&t0, &n0);
	while (mono_ns() - n0 < 2000000)
		;
	clock_pair(&t1, &n1);
	if (t1 > t0 && n1 > n0) {
		reg.ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
		reg.tsc = true;
	}
}
#else
static void calibrate(void)
{
	reg.ns_per_tick = 1.0;
	reg.tsc = false;
}
#endif

/* --- registry ----------------------------------------------------------------- */

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void st(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static uint16_t child_of(const struct tnode *n, unsigned int tp)
{
	return __atomic_load_n(&n->child[tp], __ATOMIC_ACQUIRE);
}

static void node_init(struct tnode *n, unsigned int point, uint16_t parent, uint8_t depth)
{
	memset(n, 0, sizeof(*n));
	n->point = (uint8_t)point;
	n->parent = parent;
	n->depth = depth;
}

static int trie_reserve(struct trie *t, unsigned int need)
{
	struct tnode *nodes;
	unsigned int cap;

	if (need <= t->cap)
		return 0;
	cap = t->cap ? t->cap : 64;
	while (cap < need)
		cap *= 2;
	nodes = realloc(t->nodes, cap * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	t->cap = cap;
	return 0;
}

static int trie_init(struct trie *t)
{
	t->nodes = NULL;
	t->n = t->cap = 0;
	if (trie_reserve(t, 64))
		return -ENOMEM;
	node_init(&t->nodes[ROOT], NO_POINT, ROOT, 0);
	t->n = 1;
	return 0;
}

static void trie_free(struct trie *t)
{
	free(t->nodes);
	t->nodes = NULL;
	t->n = t->cap = 0;
}

/*
 * Adds the subtree of src (a trie of nsrc nodes, possibly being written by
 * its owner) at node s into dst at node d. Recursion depth is bounded by
 * VNIC_TRACE_DEPTH.
 */
static int trie_merge(struct trie *dst, unsigned int d, const struct tnode *src, unsigned int nsrc,
		      unsigned int s)
{
	for (unsigned int tp = 0; tp < VNIC_TRACE_SLOTS; tp++) {
		unsigned int sc = child_of(&src[s], tp), dc;

		if (sc == NO_NODE || sc >= nsrc)
			continue;
		dc = dst->nodes[d].child[tp];
		if (dc == NO_NODE) {
			if (dst->n >= UINT16_MAX || trie_reserve(dst, dst->n + 1))
				return -ENOMEM;
			dc = dst->n++;
			node_init(&dst->nodes[dc], tp, (uint16_t)d,
				  (uint8_t)(dst->nodes[d].depth + 1));
			dst->nodes[d].child[tp] = (uint16_t)dc;
		}
		dst->nodes[dc].hits += ld(&src[sc].hits);
		dst->nodes[dc].ticks += ld(&src[sc].ticks);
		if (trie_merge(dst, dc, src, nsrc, sc))
			return -ENOMEM;
	}
	return 0;
}

static unsigned int thread_nodes(const struct trace_thread *t)
{
	return __atomic_load_n(&t->nnodes, __ATOMIC_ACQUIRE);
}

static bool thread_current(const struct trace_thread *t)
{
	return __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) ==
	       atomic_load_explicit(&reg.gen, memory_order_acquire);
}

/* Thread exit: fold the table into the retired totals, then free it. */
static void thread_exit(void *arg)
{
	struct trace_thread *t = arg, **pp;

	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (thread_current(t)) {
		if (!reg.retired.nodes && trie_init(&reg.retired))
			reg.retired_lost++;
		else if (trie_merge(&reg.retired, ROOT, t->nodes, t->nnodes, ROOT))
			reg.retired_lost++;
		reg.retired_lost += t->lost;
		reg.retired_unmatched += t->unmatched;
		if (t->nnodes > 1)
			reg.retired_threads++;
	}
	pthread_mutex_unlock(&reg.lock);
	if (self == t)
		self = NULL;
	free(t);
}

static void key_create(void)
{
	reg.key_ok = pthread_key_create(&reg.key, thread_exit) == 0;
}

static struct trace_thread *thread_register(void)
{
	struct trace_thread *t;

	pthread_once(&reg.once, key_create);
	if (!reg.key_ok)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	node_init(&t->nodes[ROOT], NO_POINT, ROOT, 0);
	t->nnodes = 1;
	pthread_mutex_lock(&reg.lock);
	t->gen = atomic_load_explicit(&reg.gen, memory_order_relaxed);
	t->next = reg.threads;
	reg.threads = t;
	pthread_mutex_unlock(&reg.lock);
	/* On failure the table is never folded at exit, but stays registered and reported. */
	(void)pthread_setspecific(reg.key, t);
	self = t;
	return t;
}

/* Owner only: a reset happened since this table was last written. */
static void thread_zero(struct trace_thread *t, uint32_t gen)
{
	unsigned int n = t->nnodes;

	for (unsigned int i = 0; i < n; i++) {
		st(&t->nodes[i].hits, 0);
		st(&t->nodes[i].ticks, 0);
	}
	t->lost = 0;
	t->unmatched = 0;
	__atomic_store_n(&t->gen, gen, __ATOMIC_RELEASE);
}

/* --- points ------------------------------------------------------------------------ */

/* Once per point: the next free slot, or VNIC_TRACE_NO_SLOT for good. */
static unsigned int point_register(struct vnic_trace_point *tp)
{
	unsigned int slot;

	pthread_mutex_lock(&reg.lock);
	slot = tp->slot;
	if (!slot) {
		if (reg.npoints < VNIC_TRACE_SLOTS) {
			reg.points[reg.npoints] = tp;
			slot = ++reg.npoints;
		} else {
			slot = VNIC_TRACE_NO_SLOT;
		}
		/* release: a thread that sees the slot sees reg.points[] filled */
		__atomic_store_n(&tp->slot, (uint8_t)slot, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&reg.lock);
	return slot;
}

/* tp's slot, registering it on first use; NO_POINT if it has none. */
static unsigned int point_slot(struct vnic_trace_point *tp)
{
	unsigned int slot = __atomic_load_n(&tp->slot, __ATOMIC_ACQUIRE);

	if (vnic_unlikely(!slot))
		slot = point_register(tp);
	return slot == VNIC_TRACE_NO_SLOT ? NO_POINT : slot - 1;
}

/* --- the slow paths --------------------------------------------------------------- */

uint64_t vnic_trace_begin_slow(struct vnic_trace_point *tp)
{
	struct trace_thread *t = self;
	unsigned int slot;
	uint32_t gen;
	uint16_t cur, idx;
	uint64_t now;

	if (vnic_unlikely(!tp))
		return 0;
	if (vnic_unlikely(!t)) {
		t = thread_register();
		if (!t)
			return 0;
	}
	gen = atomic_load_explicit(&reg.gen, memory_order_relaxed);
	if (vnic_unlikely(t->gen != gen))
		thread_zero(t, gen);
	slot = point_slot(tp);
	if (vnic_unlikely(t->depth >= VNIC_TRACE_DEPTH || slot == NO_POINT)) {
		st(&t->lost, t->lost + 1);
		return 0;
	}
	cur = t->depth ? t->stack[t->depth - 1] : ROOT;
	idx = t->nodes[cur].child[slot];
	if (vnic_unlikely(idx == NO_NODE)) {
		if (t->nnodes >= VNIC_TRACE_PATHS) {
			st(&t->lost, t->lost + 1);
			return 0;
		}
		idx = t->nnodes;
		node_init(&t->nodes[idx], slot, cur, (uint8_t)(t->depth + 1));
		__atomic_store_n(&t->nnodes, (uint16_t)(idx + 1), __ATOMIC_RELEASE);
		__atomic_store_n(&t->nodes[cur].child[slot], idx, __ATOMIC_RELEASE);
	}
	t->stack[t->depth++] = idx;
	/* Last, so the bookkeeping above is not counted in this point's time. */
	now = ticks();
	return now ? now : 1;
}

void vnic_trace_end_slow(const struct vnic_trace_point *tp, uint64_t t0)
{
	uint64_t now = ticks();
	struct trace_thread *t = self;
	unsigned int slot;
	struct tnode *n;
	uint32_t d;

	if (vnic_unlikely(!t))
		return;
	/* A point never begun here has no slot, or one no frame holds: unmatched. */
	slot = tp ? __atomic_load_n(&tp->slot, __ATOMIC_RELAXED) : 0;
	slot = slot && slot != VNIC_TRACE_NO_SLOT ? slot - 1 : NO_POINT;
	/*
	 * The innermost frame of tp. Anything above it lost its end (a caller
	 * bug): drop those frames so one slip does not skew every later path.
	 */
	for (d = t->depth; d > 0; d--)
		if (t->nodes[t->stack[d - 1]].point == slot)
			break;
	if (vnic_unlikely(d == 0)) {
		st(&t->unmatched, t->unmatched + 1);
		return;
	}
	if (vnic_unlikely(d != t->depth))
		st(&t->unmatched, t->unmatched + (t->depth - d));
	t->depth = d - 1;
	n = &t->nodes[t->stack[d - 1]];
	st(&n->hits, n->hits + 1);
	st(&n->ticks, n->ticks + (now > t0 ? now - t0 : 0));
}

/* --- control ---------------------------------------------------------------------- */

void vnic_trace_enable(bool on)
{
	if (on) {
		pthread_mutex_lock(&reg.lock);
		calibrate();
		pthread_mutex_unlock(&reg.lock);
	}
	atomic_store_explicit(&vnic_trace_active, on, memory_order_release);
}

void vnic_trace_reset(void)
{
	pthread_mutex_lock(&reg.lock);
	atomic_fetch_add_explicit(&reg.gen, 1, memory_order_acq_rel);
	trie_free(&reg.retired);
	reg.retired_lost = 0;
	reg.retired_unmatched = 0;
	reg.retired_threads = 0;
	pthread_mutex_unlock(&reg.lock);
}

/* --- reports ------------------------------------------------------------------------ */

struct snapshot {
	struct trie trie;
	const struct vnic_trace_point *points[VNIC_TRACE_SLOTS]; /* slot -> point */
	uint64_t *sub_hits; /* hits in each node's subtree, itself included */
	unsigned int threads;
	uint64_t lost, unmatched;
	double ns_per_tick;
	bool tsc;
};

static uint64_t subtree_hits(struct snapshot *s, unsigned int i)
{
	uint64_t h = s->trie.nodes[i].hits;

	for (unsigned int tp = 0; tp < VNIC_TRACE_SLOTS; tp++)
		if (s->trie.nodes[i].child[tp] != NO_NODE)
			h += subtree_hits(s, s->trie.nodes[i].child[tp]);
	s->sub_hits[i] = h;
	return h;
}

static int snapshot_take(struct snapshot *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = trie_init(&s->trie);
	if (err)
		return err;
	pthread_mutex_lock(&reg.lock);
	for (struct trace_thread *t = reg.threads; t && !err; t = t->next) {
		if (!thread_current(t))
			continue;
		err = trie_merge(&s->trie, ROOT, t->nodes, thread_nodes(t), ROOT);
		s->lost += ld(&t->lost);
		s->unmatched += ld(&t->unmatched);
		if (thread_nodes(t) > 1)
			s->threads++;
	}
	if (!err && reg.retired.nodes)
		err = trie_merge(&s->trie, ROOT, reg.retired.nodes, reg.retired.n, ROOT);
	s->lost += reg.retired_lost;
	s->unmatched += reg.retired_unmatched;
	s->threads += reg.retired_threads;
	s->ns_per_tick = reg.ns_per_tick;
	s->tsc = reg.tsc;
	memcpy(s->points, reg.points, sizeof(s->points));
	pthread_mutex_unlock(&reg.lock);
	if (!err) {
		s->sub_hits = calloc(s->trie.n, sizeof(*s->sub_hits));
		if (!s->sub_hits)
			err = -ENOMEM;
	}
	if (err) {
		trie_free(&s->trie);
		return err;
	}
	subtree_hits(s, ROOT);
	return 0;
}

static void snapshot_free(struct snapshot *s)
{
	trie_free(&s->trie);
	free(s->sub_hits);
}

static uint64_t node_ns(const struct snapshot *s, const struct tnode *n)
{
	return (uint64_t)((double)n->ticks * s->ns_per_tick + 0.5);
}

static const char *node_name(const struct snapshot *s, const struct tnode *n)
{
	if (n->point >= VNIC_TRACE_SLOTS || !s->points[n->point])
		return "unknown";
	return s->points[n->point]->name;
}

/*
 * Depth-first, callees in name order (slots are handed out in whatever
 * order threads first trace: not an order to show); visit(i, parent_row)
 * gets the row it makes.
 */
static void walk(const struct snapshot *s, unsigned int i, int parent_row, unsigned int *row,
		 void (*visit)(const struct snapshot *s, unsigned int i, int parent_row,
			       unsigned int row, void *ctx),
		 void *ctx)
{
	unsigned int kids[VNIC_TRACE_SLOTS], n = 0;

	for (unsigned int tp = 0; tp < VNIC_TRACE_SLOTS; tp++) {
		unsigned int c = s->trie.nodes[i].child[tp], k;
		const char *name;

		if (c == NO_NODE || !s->sub_hits[c])
			continue;
		name = node_name(s, &s->trie.nodes[c]);
		for (k = n; k > 0 && strcmp(node_name(s, &s->trie.nodes[kids[k - 1]]), name) > 0;
		     k--)
			kids[k] = kids[k - 1];
		kids[k] = c;
		n++;
	}
	for (unsigned int k = 0; k < n; k++) {
		unsigned int me = (*row)++;

		visit(s, kids[k], parent_row, me, ctx);
		walk(s, kids[k], (int)me, row, visit, ctx);
	}
}

struct rows_ctx {
	struct vnic_trace_row *out;
	unsigned int max;
};

static void row_visit(const struct snapshot *s, unsigned int i, int parent_row, unsigned int row,
		      void *ctx)
{
	struct rows_ctx *rc = ctx;
	const struct tnode *n = &s->trie.nodes[i];
	struct vnic_trace_row *r;

	if (row >= rc->max)
		return;
	r = &rc->out[row];
	r->point = s->points[n->point];
	r->name = node_name(s, n);
	r->parent = n->parent == ROOT ? "" : node_name(s, &s->trie.nodes[n->parent]);
	r->parent_row = parent_row;
	r->depth = n->depth - 1u;
	r->hits = n->hits;
	r->total_ns = node_ns(s, n);
	r->avg_ns = n->hits ? r->total_ns / n->hits : 0;
}

unsigned int vnic_trace_rows(struct vnic_trace_row *out, unsigned int max)
{
	struct rows_ctx rc = {.out = out, .max = out ? max : 0};
	struct snapshot s;
	unsigned int rows = 0;

	if (snapshot_take(&s))
		return 0;
	walk(&s, ROOT, -1, &rows, row_visit, &rc);
	snapshot_free(&s);
	return rows;
}

enum { NAME_COL = 28 };

static void report_visit(const struct snapshot *s, unsigned int i, int parent_row, unsigned int row,
			 void *ctx)
{
	const struct tnode *n = &s->trie.nodes[i];
	unsigned int indent = 2u * (n->depth - 1u);
	uint64_t ns = node_ns(s, n);
	FILE *f = ctx;

	(void)parent_row;
	(void)row;
	fprintf(f, "  %*s%-*s = %14.2f us / %10" PRIu64 " hits = avg %9.3f us", (int)indent, "",
		(int)(NAME_COL - indent), node_name(s, n), (double)ns / 1e3, n->hits,
		n->hits ? (double)ns / 1e3 / (double)n->hits : 0.0);
	if (n->parent != ROOT) {
		uint64_t pns = node_ns(s, &s->trie.nodes[n->parent]);

		if (pns)
			fprintf(f, "  (%5.1f%% of %s)", 100.0 * (double)ns / (double)pns,
				node_name(s, &s->trie.nodes[n->parent]));
	}
	fputc('\n', f);
}

void vnic_trace_report(FILE *f)
{
	struct snapshot s;
	unsigned int rows = 0;

	if (snapshot_take(&s)) {
		fprintf(f, "trace: out of memory\n");
		return;
	}
	fprintf(f, "trace: inclusive time per call path, callees indented under their caller\n"
		   "trace: a caller's time includes its callees'; hit counts differ from line to\n"
		   "trace: line, so compare totals and never add averages\n");
	walk(&s, ROOT, -1, &rows, report_visit, f);
	if (!rows)
		fprintf(f, "  (nothing recorded: was tracing enabled?)\n");
	if (s.tsc)
		fprintf(f, "trace: clock rdtsc, %.3f GHz calibrated against CLOCK_MONOTONIC",
			1.0 / s.ns_per_tick);
	else
		fprintf(f, "trace: clock CLOCK_MONOTONIC");
	fprintf(f, "; %u thread%s", s.threads, s.threads == 1 ? "" : "s");
	if (s.lost || s.unmatched)
		fprintf(f,
			"; not recorded: %" PRIu64 " (deeper than %d or over %d paths), "
			"%" PRIu64 " unmatched ends",
			s.lost, VNIC_TRACE_DEPTH, VNIC_TRACE_PATHS, s.unmatched);
	fputc('\n', f);
	snapshot_free(&s);
}
