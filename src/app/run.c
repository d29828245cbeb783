// SPDX-License-Identifier: MIT
/*
 * The bench runner: one run of a built-in workload across the embedded
 * topology, the way `vnic bench` and every round of `vnic experiment` do
 * it. It builds the topology and the workload, starts the optional parts
 * (control socket, sampler, trace, pcap), runs for the duration while it records
 * one interval a second, stops the traffic, waits until what is in flight
 * has landed, and stops the threads. The topology stays for its counters
 * until vnic_bench_cleanup.
 *
 * CPU is read twice: the whole process (getrusage), and each side's cpu
 * thread on its own clock (pthread_getcpuclockid), so that a report can give
 * the receive side's share alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "app.h"
#include "pcap_int.h"

/* Set from a signal handler: the run ends early and reports what it did. */
static volatile sig_atomic_t interrupted;

void vnic_bench_interrupt(void)
{
	interrupted = 1;
}

static double process_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !interrupted)
		;
}

static void results(const struct vnic_bench_run *r, struct vnic_work_results *res)
{
	if (r->rr)
		vnic_rr_results(r->rr, res);
	else
		vnic_stream_results(r->st, res);
}

static bool quiesced(const struct vnic_bench_run *r)
{
	return r->rr ? vnic_rr_quiesced(r->rr) : vnic_stream_quiesced(r->st);
}

/* Frames put on the cable so far, both ways. */
static uint64_t wire_frames(const struct vnic_topo *t)
{
	struct vnic_cable_stats cs;
	uint64_t n = 0;

	for (unsigned int dir = 0; dir < 2; dir++) {
		vnic_topo_cable_stats(t, dir, &cs);
		n += cs.tx_frames;
	}
	return n;
}

/* No descriptor in flight on any tx queue of either driver, no frame on the cable. */
static bool tx_rings_idle(const struct vnic_topo *t)
{
	struct vnic_cable_stats cs;
	char name[32];
	uint64_t used;

	for (unsigned int dir = 0; dir < 2; dir++) {
		vnic_topo_cable_stats(t, dir, &cs);
		if (cs.rx_frames != cs.tx_frames)
			return false;
	}

	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
			snprintf(name, sizeof(name), "tx%u_used", q);
			if (vnic_drv_counter(t->drv[s], name, &used))
				break;
			if (used)
				return false;
		}
	}
	return true;
}

/* A stream of a fixed size ends when every flow has delivered it all. */
static bool stream_done(const struct vnic_bench_run *r)
{
	struct vnic_work_results cur;

	if (!r->st || !r->o->st.bytes)
		return false;
	vnic_stream_results(r->st, &cur);
	return cur.bytes >= r->o->st.bytes * r->o->st.flows;
}

/* --- intervals ---------------------------------------------------------------- */

/* One interval ends at now: recorded, and printed on stderr unless quiet. */
static void interval_end(struct vnic_bench_run *r, uint64_t start, uint64_t t_prev, uint64_t now,
			 struct vnic_work_results *prev)
{
	struct vnic_work_results cur;
	struct vnic_bench_interval *iv;

	if (now <= t_prev || r->nintervals >= r->intervals_cap)
		return;
	results(r, &cur);
	iv = &r->intervals[r->nintervals++];
	iv->t_s = (double)(now - start) / 1e9;
	iv->dt_s = (double)(now - t_prev) / 1e9;
	iv->transactions = cur.transactions - prev->transactions;
	iv->bytes = cur.bytes - prev->bytes;
	iv->errors = cur.err.payload + cur.err.bad_csum - prev->err.payload - prev->err.bad_csum;
	*prev = cur;
	if (r->o->quiet)
		return;
	/* rr's rate is transactions, a stream's is bytes: each prints its own. */
	if (r->rr)
		fprintf(stderr, "[%6.1f s] %12.0f tps          errors %" PRIu64 "\n", iv->t_s,
			vnic_bench_interval_tps(iv), iv->errors);
	else
		fprintf(stderr, "[%6.1f s] %12.3f Gbit/s       errors %" PRIu64 "\n", iv->t_s,
			vnic_bench_interval_gbps(iv), iv->errors);
}

double vnic_bench_interval_tps(const struct vnic_bench_interval *iv)
{
	return iv->dt_s > 0 ? (double)iv->transactions / iv->dt_s : 0;
}

double vnic_bench_interval_gbps(const struct vnic_bench_interval *iv)
{
	return iv->dt_s > 0 ? (double)iv->bytes * 8 / iv->dt_s / 1e9 : 0;
}

/*
 * Runs for the duration (or until interrupted, r->stop, or a sized stream
 * is done), taking the samples and closing an interval every second and at
 * the end. A late wake-up skips the samples it missed rather than bunch
 * them up, so samples stay about a period apart.
 */
static void run_for(struct vnic_bench_run *r)
{
	uint64_t start = vnic_now_ns(), end = start + (uint64_t)(r->o->duration_s * 1e9);
	uint64_t period = r->sampler ? r->series.period_ns : 0;
	uint64_t next_sample = start, next_sec = start + 1000000000u, t_prev = start;
	uint64_t next_place = start + VNIC_PLACE_PERIOD_NS;
	struct vnic_work_results prev = { 0 }, cur;
	uint64_t now = start;

	for (;;) {
		uint64_t wake;

		now = vnic_now_ns();
		if (period && now >= next_sample) {
			results(r, &cur);
			vnic_sampler_take(r->sampler, now - start, &cur);
			/* On the grid when on time; never closer than half a period. */
			next_sample += period;
			if (next_sample < now + period / 2)
				next_sample = now + period / 2;
		}
		if (now >= end || interrupted ||
		    atomic_load_explicit(&r->stop, memory_order_relaxed) || stream_done(r) ||
		    vnic_topo_gave_up(&r->topo))
			break;
		/* --pin adaptive: a look at the machine a few times a second, never per packet */
		if (now >= next_place) {
			vnic_topo_place(&r->topo, now);
			next_place = now + VNIC_PLACE_PERIOD_NS;
		}
		if (now >= next_sec) {
			interval_end(r, start, t_prev, now, &prev);
			t_prev = now;
			next_sec = now + 1000000000u;
		}
		/* Wake at least every 0.1 s to see a stop request. */
		wake = now + 100000000u;
		if (end < wake)
			wake = end;
		if (next_sec < wake)
			wake = next_sec;
		if (period && next_sample < wake)
			wake = next_sample;
		if (next_place < wake)
			wake = next_place;
		if (wake > now)
			sleep_ns(wake - now);
	}
	/* The last interval, however short: a run of 1.5 s reports two. */
	interval_end(r, start, t_prev, now, &prev);
	r->elapsed_ns = now - start;
}

/* --- counters ---------------------------------------------------------------- */

unsigned int vnic_bench_counters(void *run, struct vnic_counter *out, unsigned int max)
{
	struct vnic_bench_run *r = run;
	struct vnic_work_results res;
	unsigned int n = 0;

	results(r, &res);
#define W(f)                                                                                       \
	do {                                                                                       \
		if (n < max) {                                                                     \
			snprintf(out[n].name, sizeof(out[n].name), "work.%s", #f);                 \
			out[n].value = res.f;                                                      \
		}                                                                                  \
		n++;                                                                               \
	} while (0)
	W(transactions);
	W(bytes);
	W(tx_pkts);
	W(tx_segs);
	W(tx_bytes);
	W(rx_pkts);
	W(rx_segs);
	W(tsq_throttled);
	W(tsq_max);
#undef W
	n += vnic_topo_counters(&r->topo, n < max ? out + n : NULL, n < max ? max - n : 0);
	if (r->pcap) {
		struct vnic_counter pc[8];
		unsigned int m = vnic_pcap_counters(r->pcap, pc, 8);

		for (unsigned int i = 0; i < m && i < 8; i++, n++) {
			if (n >= max)
				continue;
			snprintf(out[n].name, sizeof(out[n].name), "pcap.%.40s", pc[i].name);
			out[n].value = pc[i].value;
		}
	}
	return n;
}

/* --- show and set, on the control socket's thread ---------------------------------- */

static void live_fill(struct vnic_bench_run *r)
{
	struct vnic_topo *t = &r->topo;
	struct vnic_live *l = &r->live;

	memset(l, 0, sizeof(*l));
	r->live_cfg = r->o->topo;
	l->cfg = &r->live_cfg;
	l->nsides = VNIC_TOPO_SIDES;
	l->ncpus = r->o->topo.threads == 1 ? 1 : VNIC_TOPO_SIDES;
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		l->drv[s] = t->drv[s];
		l->dev[s] = t->dev[s];
		l->hv[s] = t->hv[s];
		l->cpu[s] = &t->cpu[s];
	}
	/* --queues N spread: the threads of queue pairs 2 and up too */
	for (unsigned int i = 0; i < t->nextra && l->ncpus < VNIC_MAX_QUEUES; i++)
		l->cpu[l->ncpus++] = &t->extra_cpu[i];
	l->cable = t->cable;
	/* The built-in workloads take the MTU and the queues when they start. */
	l->mtu_live = l->queues_live = false;
	l->why_fixed = "the built-in workloads take it when they start";
}

static void live_ready(struct vnic_bench_run *r, bool ready)
{
	pthread_mutex_lock(&r->live_lock);
	r->live_ready = ready;
	pthread_mutex_unlock(&r->live_lock);
}

static void bench_show(void *ctx, FILE *f, bool json)
{
	struct vnic_bench_run *r = ctx;

	pthread_mutex_lock(&r->live_lock);
	if (r->live_ready)
		vnic_live_show(&r->live, f, json);
	else
		fputs("error: the traffic is not running\n", f);
	pthread_mutex_unlock(&r->live_lock);
}

static int bench_set(void *ctx, char *args, FILE *f)
{
	struct vnic_bench_run *r = ctx;
	int err = -EAGAIN;

	pthread_mutex_lock(&r->live_lock);
	if (r->live_ready)
		err = vnic_live_set(&r->live, args, f);
	else
		fputs("error: the traffic is not running\n", f);
	pthread_mutex_unlock(&r->live_lock);
	return err;
}

const struct vnic_ctl_ops vnic_bench_ctl_ops = { .show = bench_show, .set = bench_set };

/* --- the run ----------------------------------------------------------------- */

/* The optional parts of a run: control socket, sampler, intervals. 0 or -errno (message printed). */
static int extras_start(struct vnic_bench_run *r)
{
	const struct vnic_bench_opts *o = r->o;
	char name[VNIC_CTL_NAME_MAX];
	int err;

	r->intervals_cap = (size_t)o->duration_s + 2;
	r->intervals = calloc(r->intervals_cap, sizeof(*r->intervals));
	if (!r->intervals) {
		fputs("vnic bench: out of memory\n", stderr);
		return -ENOMEM;
	}
	if (o->ctl) {
		if (o->ctl_name)
			snprintf(name, sizeof(name), "%s", o->ctl_name);
		else
			vnic_ctl_default_name(name, sizeof(name), "bench");
		err = vnic_ctl_serve_start(&r->ctl, name, vnic_bench_counters, &vnic_bench_ctl_ops, r);
		if (err == -EADDRINUSE) {
			fprintf(stderr, "vnic bench: an instance named '%s' is running\n", name);
			return err;
		}
		/* A bench is still worth running without its socket, unless it was named. */
		if (err && o->ctl_name) {
			fprintf(stderr, "vnic bench: control socket '%s': %s\n", name,
				strerror(-err));
			return err;
		}
		if (err && !o->quiet)
			fprintf(stderr, "vnic bench: no control socket (%s); running without\n",
				strerror(-err));
	}
	if (o->sample_ms) {
		err = vnic_series_init(&r->series, (uint64_t)o->sample_ms * 1000000u,
				       o->duration_s);
		if (err) {
			fprintf(stderr, "vnic bench: sampler: %s\n", strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Each side's transmissions are one direction of the cable: mirror what each commits. */
static struct vnic_wire *wrap_end(void *ctx, unsigned int side, struct vnic_wire *end)
{
	(void)side;
	return vnic_pcap_wrap(ctx, end, true, false);
}

/*
 * --pcap: the capture (its file, opened by the caller or here), and the
 * hook that wraps each cable end as the topology is built. 0 or -errno
 * (message printed).
 */
static int capture_open(struct vnic_bench_run *r, struct vnic_topo_config *tc)
{
	const struct vnic_pcap_opts *po = &r->o->pcap;
	uint32_t mtu = tc->cable.mtu > tc->drv.mtu ? tc->cable.mtu : tc->drv.mtu;
	FILE *f = r->pcap_file;
	char errbuf[256];
	int err;

	r->pcap_file = NULL; /* the capture's from here on */
	if (!f)
		f = vnic_out_open_mode("vnic bench", "--pcap", po->path, true);
	if (!f)
		return -EIO;
	err = vnic_pcap_open(&r->pcap, f,
			     vnic_pcap_snaplen(po, mtu + VNIC_ETH_HLEN + VNIC_VLAN_HLEN), po,
			     errbuf);
	if (err) {
		fprintf(stderr, "vnic bench: --pcap %s: %s\n", po->path,
			errbuf[0] ? errbuf : strerror(-err));
		return err;
	}
	tc->wrap_wire = wrap_end;
	tc->wrap_ctx = r->pcap;
	return 0;
}

/* Each side's cpu thread clock, where the thread has one. */
static void thread_clocks(const struct vnic_topo *t, clockid_t *clk, bool *have)
{
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		const pthread_t *th = t->cpu[s].thread;

		have[s] = th && !pthread_getcpuclockid(*th, &clk[s]);
	}
}

/* What the side's cpu thread says of its time so far: spin, work turns. */
struct side_clock {
	double cpu_s, spin_s, work_s;
};

static void side_clocks(const struct vnic_topo *t, const clockid_t *clk, const bool *have,
			struct side_clock *c)
{
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		const struct vnic_cpu_stats *st = &t->cpu[s].stats;

		c[s].cpu_s = have[s] ? clock_s(clk[s]) : 0;
		c[s].spin_s = (double)vnic_ctr_read(&st->spin_ns) / 1e9;
		c[s].work_s = (double)vnic_ctr_read(&st->work_ns) / 1e9;
	}
}

/*
 * split: each side's work is its client thread's and its server thread's.
 * false (c zeroed) when there is no server or it did not answer.
 */
static bool split_clocks(const struct vnic_topo *t, struct side_clock *c)
{
	double cpu[VNIC_TOPO_SIDES], spin[VNIC_TOPO_SIDES], work[VNIC_TOPO_SIDES];

	memset(c, 0, VNIC_TOPO_SIDES * sizeof(*c));
	if (!t->cfg.split || vnic_topo_split_cpu(t, cpu, spin, work))
		return false;
	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		c[s].cpu_s = cpu[s];
		c[s].spin_s = spin[s];
		c[s].work_s = work[s];
	}
	return true;
}

static uint64_t ns_of(double s)
{
	return s > 0 ? (uint64_t)(s * 1e9) : 0;
}

/* The threads of queue pairs 2 and up (--queues 3 and more): what side_clocks reads of a side's. */
static void extra_clocks(const struct vnic_topo *t, struct side_clock *c)
{
	for (unsigned int i = 0; i < t->nextra; i++) {
		const struct vnic_cpu *cpu = &t->extra_cpu[i];
		const pthread_t *th = cpu->thread;
		clockid_t clk;

		c[i].cpu_s = th && !pthread_getcpuclockid(*th, &clk) ? clock_s(clk) : 0;
		c[i].spin_s = (double)vnic_ctr_read(&cpu->stats.spin_ns) / 1e9;
		c[i].work_s = (double)vnic_ctr_read(&cpu->stats.work_ns) / 1e9;
	}
}

/* Their figures between two readings, after the sides' (thread 2 is q2's). */
static void extra_figures(struct vnic_bench_run *r, const struct side_clock *c0,
			  const struct side_clock *c1)
{
	for (unsigned int i = 0; i < r->topo.nextra && VNIC_TOPO_SIDES + i < VNIC_MAX_QUEUES; i++) {
		unsigned int th = VNIC_TOPO_SIDES + i;

		r->thread_cpu_s[th] = c1[i].cpu_s - c0[i].cpu_s;
		r->spin_cpu_s[th] = c1[i].spin_s - c0[i].spin_s;
		r->work_turn_s[th] = c1[i].work_s - c0[i].work_s;
	}
}

/* The traffic itself, with the CPU it took. */
static void measure(struct vnic_bench_run *r)
{
	struct side_clock c0[VNIC_TOPO_SIDES], c1[VNIC_TOPO_SIDES];
	struct side_clock srv0[VNIC_TOPO_SIDES], srv1[VNIC_TOPO_SIDES];
	clockid_t clk[VNIC_TOPO_SIDES];
	bool have[VNIC_TOPO_SIDES];
	struct vnic_machine_snap m0, m1;
	/* the threads beyond a and b, two readings each (on the heap: the frame stays small) */
	struct side_clock *x0 = calloc(2 * (r->topo.nextra + 1), sizeof(*x0));
	struct side_clock *x1 = x0 ? x0 + r->topo.nextra + 1 : NULL;
	double cpu0;
	unsigned int s;

	vnic_machine_snap(&m0);
	if (x0)
		extra_clocks(&r->topo, x0);
	thread_clocks(&r->topo, clk, have);
	split_clocks(&r->topo, srv0);
	cpu0 = process_cpu_s();
	side_clocks(&r->topo, clk, have, c0);
	if (r->rr)
		vnic_rr_start(r->rr);
	else
		vnic_stream_start(r->st);
	run_for(r);
	results(r, &r->res);
	r->cpu_s = process_cpu_s() - cpu0;
	side_clocks(&r->topo, clk, have, c1);
	memset(r->thread_cpu_s, 0, sizeof(r->thread_cpu_s));
	memset(r->spin_cpu_s, 0, sizeof(r->spin_cpu_s));
	memset(r->work_turn_s, 0, sizeof(r->work_turn_s));
	r->nthreads = VNIC_TOPO_SIDES + r->topo.nextra;
	if (x0) {
		extra_clocks(&r->topo, x1);
		extra_figures(r, x0, x1);
	}
	free(x0);
	/* a server that answered once but not twice adds nothing */
	if (!split_clocks(&r->topo, srv1))
		memset(srv0, 0, sizeof(srv0));
	for (s = 0; s < VNIC_TOPO_SIDES; s++) {
		r->thread_cpu_s[s] = c1[s].cpu_s - c0[s].cpu_s + srv1[s].cpu_s - srv0[s].cpu_s;
		r->spin_cpu_s[s] = c1[s].spin_s - c0[s].spin_s + srv1[s].spin_s - srv0[s].spin_s;
		r->work_turn_s[s] = c1[s].work_s - c0[s].work_s + srv1[s].work_s - srv0[s].work_s;
	}
	vnic_machine_snap(&m1);
	vnic_machine_report(&m0, &m1, &r->machine);
}

double vnic_bench_side_work_cpu_s(const struct vnic_bench_run *r, unsigned int thread)
{
	if (thread >= r->nthreads || thread >= VNIC_MAX_QUEUES)
		return 0;
	return (double)vnic_cpu_work_cpu_ns(ns_of(r->work_turn_s[thread]),
					    ns_of(r->thread_cpu_s[thread]),
					    ns_of(r->spin_cpu_s[thread])) / 1e9;
}

double vnic_bench_work_cpu_s(const struct vnic_bench_run *r)
{
	double w = 0;

	for (unsigned int i = 0; i < r->nthreads && i < VNIC_MAX_QUEUES; i++)
		w += vnic_bench_side_work_cpu_s(r, i);
	return w;
}

const char *vnic_bench_thread_name(unsigned int i)
{
	static const char *const sides[VNIC_TOPO_SIDES] = { "a", "b" };

	return i < VNIC_TOPO_SIDES ? sides[i] : vnic_topo_queue_cpu_name(i);
}

double vnic_bench_work_ns_per_txn(const struct vnic_bench_run *r)
{
	return r->res.transactions ? vnic_bench_work_cpu_s(r) * 1e9 / (double)r->res.transactions
				   : 0;
}

double vnic_bench_work_ns_per_gb(const struct vnic_bench_run *r)
{
	return r->res.bytes ? vnic_bench_work_cpu_s(r) * 1e9 / ((double)r->res.bytes / 1e9) : 0;
}

/*
 * Let what is in flight land, so the pools can be checked full: the hosts
 * first (all data acknowledged), then the drivers (the last pure ACKs may
 * still sit in a tx ring, their tx_done already called when the driver
 * orphans). Then until the wire has been quiet for a while: a late pure
 * ACK or timer-driven segment still on its way would otherwise meet a peer
 * whose link is already down and be dropped there.
 */
static void drain(struct vnic_bench_run *r)
{
	const struct vnic_topo *t = &r->topo;

	for (int i = 0; i < 2000 && !quiesced(r); i++)
		sleep_ns(1000000);
	r->quiesced = quiesced(r);
	for (int i = 0, quiet = 0; i < 2000 && quiet < 10; i++) {
		uint64_t before = wire_frames(t);

		sleep_ns(1000000);
		quiet = tx_rings_idle(t) && wire_frames(t) == before ? quiet + 1 : 0;
	}
}

/*
 * The workload, over the topology's queue pairs when they are spread (a
 * host pair per queue pair, each on its queue's cpu), with the sessions or
 * flows split among them: a queue pair gets none when there are fewer.
 */
static int workload_create(struct vnic_bench_run *r)
{
	static bool said;
	struct vnic_topo *t = &r->topo;
	struct vnic_pkt_pool *pa[VNIC_MAX_QUEUES], *pb[VNIC_MAX_QUEUES];
	unsigned int n = vnic_topo_host_pools(t, 0, pa);
	bool rr = r->o->wl == VNIC_WL_RR;
	unsigned int conns = rr ? r->o->rr.sessions : r->o->st.flows;

	vnic_topo_host_pools(t, 1, pb);
	if (conns < n) {
		if (!said && !r->o->quiet)
			fprintf(stderr, "vnic bench: --queues %u: %u %s%s use%s %u queue pair%s: "
				"--%s %u or more spread over all\n", n, conns,
				rr ? "session" : "flow", conns == 1 ? "" : "s", conns == 1 ? "s" : "",
				conns, conns == 1 ? "" : "s", rr ? "sessions" : "flows", n);
		said = true;
		n = conns ? conns : 1;
	}
	if (rr)
		return vnic_rr_create_queues(&r->rr, n, vnic_topo_netdev(t, 0), pa,
					     vnic_topo_netdev(t, 1), pb, &r->o->rr);
	return vnic_stream_create_queues(&r->st, n, vnic_topo_netdev(t, 0), pa,
					 vnic_topo_netdev(t, 1), pb, &r->o->st);
}

int vnic_bench_run(struct vnic_bench_run *r)
{
	struct vnic_topo_config tc = r->o->topo;
	struct vnic_topo *t = &r->topo;
	int err;

	pthread_mutex_init(&r->live_lock, NULL);
	r->live_ready = false;
	if (r->o->pcap.path) {
		err = capture_open(r, &tc);
		if (err)
			return err;
	}
	err = vnic_topo_create(t, &tc);
	if (err) {
		if (!t->said)
			fprintf(stderr, "vnic bench: building the topology: %s\n", strerror(-err));
		return err;
	}
	err = workload_create(r);
	if (err) {
		fprintf(stderr, "vnic bench: creating the workload: %s\n", strerror(-err));
		goto out;
	}
	err = extras_start(r);
	if (err)
		goto out;
	if (r->pcap) {
		err = vnic_pcap_start(r->pcap);
		if (err) {
			fprintf(stderr, "vnic bench: --pcap: writer thread: %s\n", strerror(-err));
			goto out;
		}
	}
	err = vnic_topo_start(t);
	if (err) {
		fprintf(stderr, "vnic bench: starting: %s\n", strerror(-err));
		goto out;
	}
	live_fill(r);
	live_ready(r, true);
	if (r->o->sample_ms) {
		err = vnic_sampler_create(&r->sampler, &r->series, t);
		if (err) {
			fprintf(stderr, "vnic bench: sampler: %s\n", strerror(-err));
			goto out;
		}
	}
	if (r->o->trace) {
		vnic_trace_reset();
		vnic_trace_enable(true);
	}
	measure(r);
	if (r->o->trace)
		vnic_trace_enable(false);
	/* the server is gone for good, and the run with it: said in one line already */
	if (vnic_topo_gave_up(t)) {
		err = -EHOSTDOWN;
		goto out;
	}
	/* No change from the control socket from here on: the topology goes down. */
	live_ready(r, false);
	if (r->rr)
		vnic_rr_stop(r->rr);
	else
		vnic_stream_stop(r->st);
	drain(r);
	r->close_err = vnic_topo_stop(t);
	/* the threads are stopped: the latency of every queue pair in one histogram */
	if (r->rr)
		vnic_rr_gather(r->rr);
	r->pools_full = vnic_drv_pools_full(t->drv[0]) && vnic_drv_pools_full(t->drv[1]);
	/* Every frame the cable carried is in the file before the report counts them. */
	vnic_pcap_stop(r->pcap);
	/* The socket goes with the traffic: reports read the counters from here on. */
	vnic_ctl_serve_stop(r->ctl);
	r->ctl = NULL;
	return 0;
out:
	live_ready(r, false);
	vnic_ctl_serve_stop(r->ctl);
	r->ctl = NULL;
	return err;
}

void vnic_bench_cleanup(struct vnic_bench_run *r)
{
	if (r->o)
		pthread_mutex_destroy(&r->live_lock);
	vnic_ctl_serve_stop(r->ctl);
	r->ctl = NULL;
	vnic_topo_stop(&r->topo);
	vnic_sampler_destroy(r->sampler);
	r->sampler = NULL;
	vnic_series_fini(&r->series);
	free(r->intervals);
	r->intervals = NULL;
	r->nintervals = r->intervals_cap = 0;
	if (r->rr)
		vnic_rr_destroy(r->rr);
	if (r->st)
		vnic_stream_destroy(r->st);
	r->rr = NULL;
	r->st = NULL;
	vnic_topo_destroy(&r->topo);
	/* After the devices: they held the wrapped wires. */
	vnic_pcap_close(r->pcap);
	r->pcap = NULL;
	if (r->pcap_file)
		fclose(r->pcap_file);
	r->pcap_file = NULL;
}

/* What a run carried: transactions (rr) or bytes (stream). */
static uint64_t carried(const struct vnic_bench_run *r)
{
	return r->o->wl == VNIC_WL_RR ? r->res.transactions : r->res.bytes;
}

static bool below_floor(const struct vnic_bench_floor *f, const struct vnic_bench_run *r)
{
	return f && carried(r) < (r->o->wl == VNIC_WL_RR ? f->transactions : f->bytes);
}

/* The progress line of a run: which case, which round, how long, and why again. */
static void progress(const struct vnic_bench_rounds *rr, unsigned int i, unsigned int round,
		     const struct vnic_bench_opts *o, const uint64_t *short_of)
{
	if (!rr->progress)
		return;
	fprintf(stderr, "%s: %-24s round %u/%u, %.2g s", rr->progress,
		rr->labels ? rr->labels[i] : "", round + 1, rr->rounds, o->duration_s);
	if (short_of)
		fprintf(stderr, " (again: the last carried %" PRIu64 " %s)", *short_of,
			o->wl == VNIC_WL_RR ? "transactions" : "bytes");
	fputc('\n', stderr);
}

/* Case i's turn in a round: run again, twice as long, while below the floor. */
static int turn(const struct vnic_bench_rounds *rr, unsigned int i, unsigned int round)
{
	struct vnic_bench_opts o = rr->cases[i];
	uint64_t last = 0;

	for (unsigned int try = 0;; try++) {
		struct vnic_bench_run *r = calloc(1, sizeof(*r));
		bool again;
		int err;

		if (!r)
			return -ENOMEM;
		progress(rr, i, round, &o, try ? &last : NULL);
		r->o = &o;
		err = vnic_bench_run(r);
		again = !err && try + 1 < VNIC_FLOOR_TRIES && below_floor(rr->floor, r);
		if (!err && !again)
			err = rr->done(rr->ctx, i, round, r);
		last = carried(r);
		vnic_bench_cleanup(r);
		free(r);
		if (err)
			return err;
		if (interrupted)
			return -EINTR;
		if (!again)
			return 0;
		rr->floor->again++;
		o.duration_s *= 2;
	}
}

int vnic_bench_rounds(const struct vnic_bench_rounds *rr)
{
	for (unsigned int round = 0; round < rr->rounds; round++) {
		for (unsigned int k = 0; k < rr->ncases; k++) {
			/*
			 * Each round starts one case further on: a case always last
			 * would always follow the same neighbour's topology teardown
			 * and cache state, a bias no number of rounds averages out.
			 */
			int err = turn(rr, (k + round) % rr->ncases, round);

			if (err)
				return err;
		}
	}
	return 0;
}
