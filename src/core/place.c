/* SPDX-License-Identifier: MIT */
/*
 * vnic_place: two cpu threads that feed each other on cores of their own
 * while the machine is otherwise idle, and the scheduler's to place when
 * it is not (the header's "Placement" section; docs/MECHANISMS.md section
 * 11).
 *
 * Everything here runs on the caller's thread a few times a second: two
 * small /proc reads per thread and one of /proc/stat per look, an affinity
 * call per change. The cpu threads themselves are never asked anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

enum vnic_place_act vnic_place_decide(const struct vnic_place_in *in, unsigned int *quiet)
{
	unsigned int shift, need;
	bool busy;

	*quiet = 0;
	if (in->cores < 2)
		return in->pinned ? VNIC_PLACE_UNPIN : VNIC_PLACE_STAY;
	busy = in->others_milli >= VNIC_PLACE_BUSY_MILLI ||
	       (in->pinned && in->wait_permille >= VNIC_PLACE_WAIT_PERMILLE);
	if (busy)
		return in->pinned ? VNIC_PLACE_UNPIN : VNIC_PLACE_STAY;
	if (in->others_milli < 0 || in->others_milli > VNIC_PLACE_QUIET_MILLI)
		return VNIC_PLACE_STAY;
	*quiet = in->quiet + 1;
	shift = in->unpins < VNIC_PLACE_HOLD_SHIFT_MAX ? in->unpins : VNIC_PLACE_HOLD_SHIFT_MAX;
	need = (unsigned int)VNIC_PLACE_QUIET_WINDOWS << shift;
	if (!in->pinned && *quiet >= need)
		return VNIC_PLACE_PIN;
	return VNIC_PLACE_STAY;
}

bool vnic_place_first(unsigned int cores, int others_runnable)
{
	return cores >= 2 && others_runnable == 0;
}

/*
 * The first line of /proc/stat (busy ticks: user, nice, system, irq and
 * softirq; not idle, iowait or steal) and its procs_running (tasks running
 * or runnable now, the reader among them). false when unreadable.
 */
static bool read_stat(uint64_t *busy_ticks, int *running)
{
	unsigned long long v[8] = { 0 };
	char line[256];
	bool have = false;
	FILE *f = fopen("/proc/stat", "re");

	*running = -1;
	if (!f)
		return false;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) == 8) {
		*busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6];
		have = true;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "procs_running %d", running) == 1)
			break;
	fclose(f);
	return have;
}

/* The thread's time waiting on a run queue so far, ns (its schedstat's second field). */
static uint64_t read_wait(int tid)
{
	unsigned long long run = 0, wait = 0;
	char path[64];
	FILE *f;

	if (tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

static uint64_t self_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The process's cores: the main thread's mask, which the placement never changes. */
static unsigned int allowed_cores(cpu_set_t *set, int core[2])
{
	unsigned int n = 0;

	core[0] = core[1] = -1;
	if (sched_getaffinity(0, sizeof(*set), set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET((unsigned int)c, set))
			core[n++] = c;
	return (unsigned int)CPU_COUNT(set);
}

void vnic_place_init(struct vnic_place *p, struct vnic_cpu *a, struct vnic_cpu *b)
{
	uint64_t ticks = 0;
	cpu_set_t set;
	int running;

	/*
	 * Field by field, p->stats left alone: a control socket may read the
	 * counters already (they start at 0 with the struct they live in).
	 */
	p->cpu[0] = a;
	p->cpu[1] = b;
	p->cores = allowed_cores(&set, p->core);
	p->on = true;
	p->quiet = 0;
	p->t_ns = p->busy_ticks = p->self_ns = 0;
	p->wait_ns[0] = p->wait_ns[1] = 0;
	p->have_stat = false;
	/* the reader is the one running task of ours before the cpus start */
	read_stat(&ticks, &running);
	p->pinned = vnic_place_first(p->cores, running < 0 ? -1 : running - 1);
}

/* Thread i on core (pin) or on every core the process may use. 0 or an errno. */
static int apply_one(struct vnic_place *p, unsigned int i, bool pin)
{
	const pthread_t *th = p->cpu[i]->thread;
	cpu_set_t set;

	if (!th)
		return EINVAL;
	if (pin) {
		CPU_ZERO(&set);
		CPU_SET((unsigned int)p->core[i], &set);
	} else if (sched_getaffinity(0, sizeof(set), &set)) {
		return errno;
	}
	return pthread_setaffinity_np(*th, sizeof(set), &set);
}

static void apply(struct vnic_place *p, bool pin)
{
	if (apply_one(p, 0, pin) || apply_one(p, 1, pin)) {
		/* a cpuset changed under us: leave the threads to the scheduler for good */
		vnic_ctr_inc(&p->stats.errors);
		apply_one(p, 0, false);
		apply_one(p, 1, false);
		p->on = false;
		p->pinned = false;
		vnic_ctr_set(&p->stats.pinned, 0);
		return;
	}
	p->pinned = pin;
	vnic_ctr_inc(pin ? &p->stats.pins : &p->stats.unpins);
	vnic_ctr_set(&p->stats.pinned, pin);
}

/* The look's starting point: the clock, the machine's busy ticks, our CPU, the waits. */
static void mark(struct vnic_place *p, uint64_t now_ns)
{
	int running;

	p->t_ns = now_ns;
	p->have_stat = read_stat(&p->busy_ticks, &running);
	p->self_ns = self_cpu_ns();
	for (unsigned int i = 0; i < 2; i++)
		p->wait_ns[i] = read_wait(vnic_cpu_tid(p->cpu[i]));
}

void vnic_place_start(struct vnic_place *p)
{
	if (!p->on)
		return;
	if (p->pinned) {
		p->pinned = false;
		apply(p, true);
	}
	mark(p, vnic_now_ns());
}

/* Per mille of the window: what part of dt_ns the ns took (0 for no window). */
static int permille(int64_t ns, uint64_t dt_ns)
{
	if (!dt_ns || ns <= 0)
		return 0;
	return (int)((uint64_t)ns * 1000 / dt_ns);
}

void vnic_place_check(struct vnic_place *p, uint64_t now_ns)
{
	struct vnic_place_in in = { .pinned = p->pinned, .cores = p->cores,
				    .quiet = p->quiet, .others_milli = -1 };
	uint64_t dt = now_ns - p->t_ns, ticks = p->busy_ticks, self = p->self_ns;
	uint64_t wait[2] = { p->wait_ns[0], p->wait_ns[1] };
	long hz = sysconf(_SC_CLK_TCK);
	bool had = p->have_stat;
	enum vnic_place_act act;

	if (!p->on || !dt)
		return;
	vnic_ctr_inc(&p->stats.checks);
	mark(p, now_ns);
	in.unpins = (unsigned int)vnic_ctr_read(&p->stats.unpins);
	if (had && p->have_stat && hz > 0) {
		int64_t busy_ns = (int64_t)((p->busy_ticks - ticks) * (1000000000ull / (uint64_t)hz));

		in.others_milli = permille(busy_ns - (int64_t)(p->self_ns - self), dt);
	}
	for (unsigned int i = 0; i < 2; i++) {
		int w = permille((int64_t)(p->wait_ns[i] - wait[i]), dt);

		if (w > in.wait_permille)
			in.wait_permille = w;
	}
	act = vnic_place_decide(&in, &p->quiet);
	if (act != VNIC_PLACE_STAY)
		apply(p, act == VNIC_PLACE_PIN);
}

unsigned int vnic_place_counters(const struct vnic_place *p, struct vnic_counter *out,
				 unsigned int max)
{
	const struct vnic_place_stats *st = &p->stats;
	unsigned int n = 0;

	vnic_counter_put(out, max, &n, "pinned", vnic_ctr_read(&st->pinned));
	vnic_counter_put(out, max, &n, "pins", vnic_ctr_read(&st->pins));
	vnic_counter_put(out, max, &n, "unpins", vnic_ctr_read(&st->unpins));
	vnic_counter_put(out, max, &n, "checks", vnic_ctr_read(&st->checks));
	vnic_counter_put(out, max, &n, "errors", vnic_ctr_read(&st->errors));
	return n;
}
