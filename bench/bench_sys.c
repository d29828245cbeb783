// SPDX-License-Identifier: MIT
/*
 * The machine's own costs, under every design choice that trades a wake-up
 * for a spin or a copy (docs/BENCHMARKS.md, "Physical limits"). No vnic code
 * runs here: these are the floors vnic builds on.
 *
 * Usage: bench_sys [--time S | --iters N] [--reps R] [--cpus A[,B]] [--json]
 *
 *   --time S    each repetition of each case lasts about S seconds (default
 *               0.1; 0.001 to 60): a first run of each case measures its cost
 *               and sets its iteration count
 *   --iters N   N calls, copies or round trips per repetition in every case
 *               (1 to 1e9)
 *   --reps R    repetitions (default 7; 1 to 101)
 *   --cpus A,B  the two cpus to pin to (default: the first two this process
 *               may run on). Everything runs on A except the partner of a
 *               two-cpu case, which runs on B. With one cpu (--cpus A, or
 *               only one allowed) the two-cpu cases are skipped and say so.
 *   --json      one JSON object on stdout instead of the table
 *
 * The cases:
 * - null syscall: syscall(SYS_getppid), ns per call: the least any trip into
 *   the kernel costs. In a PVM guest (pvm_* options in /proc/cmdline) the
 *   guest kernel runs deprivileged and each syscall reaches it through the
 *   hypervisor's switcher.
 * - memcpy 64 KiB, cache-hot: between two buffers that stay in cache.
 * - memcpy 64 KiB, 256 MiB region: from one 64 KiB chunk of the region to
 *   the chunk half a region away, both walking on by a chunk each copy, so
 *   source and destination come from DRAM.
 * - eventfd, pipe, futex ping-pong: one thread hands a token to the other,
 *   which sleeps until it arrives and hands it back; us per round trip. On
 *   two cpus each hand-off is a cross-vCPU wake-up (an IPI; in a VM, a trip
 *   through the hypervisor); on one cpu it is a context switch.
 * - pipe ping-pong, processes: the same between a parent and a forked child;
 *   on one cpu each switch also changes address space, which the threads'
 *   case beside it does not.
 * - spun-on flag: the two threads on two cpus poll one shared cache line; a
 *   round trip is the line moving there and back, no kernel at all.
 *
 * Each repetition runs every case once, in turn, so the drift of a shared
 * machine reaches all cases alike. The table gives, per case, the median of
 * the repetitions and their min and max.
 *
 * The JSON object: "cpus" (A and B, or A), "reps", "time_s" (null with
 * --iters), "cases": one object per case with "name", "cpus" (the cpus it ran
 * on), "iters" (per repetition), "ns_median", "ns_min", "ns_max" (per call,
 * copy or round trip) and, for a memcpy, "gb_s_median", "gb_s_min",
 * "gb_s_max"; a case that did not run has "skipped" (why) instead of figures.
 *
 * Run a Release build on an idle machine:
 *	./build-rel/bench/bench_sys
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
	COPY_LEN = 64 << 10,
	REGION_LEN = 256 << 20,
	REGION_CHUNKS = REGION_LEN / COPY_LEN,
	MAX_REPS = 101,
	WARMUP_RTT = 64, /* round trips before each timed run: both sides awake */
	CALIB_MIN_ITERS = 16,
};

enum kind { CASE_SYSCALL, CASE_COPY_HOT, CASE_COPY_DRAM, CASE_PINGPONG };

enum chan { CHAN_EVENTFD, CHAN_PIPE, CHAN_FUTEX, CHAN_SPIN };

struct sys_case {
	const char *name;  /* JSON */
	const char *label; /* table */
	enum kind kind;
	enum chan chan;
	bool two_cpus;	     /* partner on cpu B */
	bool process;	     /* partner is a forked child, not a thread */
	const char *skipped; /* why it did not run, or NULL */
	uint64_t iters;	     /* per repetition */
	double ns[MAX_REPS]; /* per call, copy or round trip, one per repetition */
};

/* A ping-pong case: name, label, channel, on two cpus, partner a process. */
#define PINGPONG(n, l, ch, two, proc) \
	{.name = n, .label = l, .kind = CASE_PINGPONG, .chan = ch, .two_cpus = two, .process = proc}

static struct sys_case cases[] = {
	{.name = "syscall_getppid", .label = "null syscall, getppid", .kind = CASE_SYSCALL},
	{.name = "memcpy_64k_hot", .label = "memcpy 64 KiB, cache-hot", .kind = CASE_COPY_HOT},
	{.name = "memcpy_64k_dram", .label = "memcpy 64 KiB, 256 MiB region",
	 .kind = CASE_COPY_DRAM},
	PINGPONG("eventfd_threads_2cpu", "eventfd ping-pong, threads", CHAN_EVENTFD, true, false),
	PINGPONG("eventfd_threads_1cpu", "eventfd ping-pong, threads", CHAN_EVENTFD, false, false),
	PINGPONG("pipe_threads_2cpu", "pipe ping-pong, threads", CHAN_PIPE, true, false),
	PINGPONG("pipe_threads_1cpu", "pipe ping-pong, threads", CHAN_PIPE, false, false),
	PINGPONG("pipe_processes_2cpu", "pipe ping-pong, processes", CHAN_PIPE, true, true),
	PINGPONG("pipe_processes_1cpu", "pipe ping-pong, processes", CHAN_PIPE, false, true),
	PINGPONG("futex_threads_2cpu", "futex ping-pong, threads", CHAN_FUTEX, true, false),
	PINGPONG("futex_threads_1cpu", "futex ping-pong, threads", CHAN_FUTEX, false, false),
	PINGPONG("spin_threads_2cpu", "spun-on flag, threads", CHAN_SPIN, true, false),
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

struct bench_cfg {
	int cpu[2];
	int ncpus; /* 1: cpu[1] unused */
	unsigned int reps;
	double time_s;	/* 0 with --iters */
	uint64_t iters; /* 0 with --time */
	bool json;
};

/* The copies' buffers, allocated and touched before any timing. */
struct copy_mem {
	uint8_t *src, *dst; /* hot */
	uint8_t *region;
	size_t chunk; /* next source chunk of the region */
};

static volatile long sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- null syscall and memcpy -------------------------------------------- */

static uint64_t run_syscall(uint64_t iters)
{
	uint64_t t0 = now_ns(), t;
	long acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += syscall(SYS_getppid);
	t = now_ns() - t0;
	sink += acc;
	return t;
}

/*
 * The copy's result is never read: this tells the compiler that memory may
 * be, so it can neither drop a copy nor merge two of the same bytes.
 */
static inline void keep_memory(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

/* The length goes through a volatile so the compiler cannot inline a fixed-size copy. */
static volatile size_t copy_len = COPY_LEN;

static uint64_t run_copy_hot(struct copy_mem *m, uint64_t iters)
{
	size_t len = copy_len;
	uint64_t t0 = now_ns();

	for (uint64_t i = 0; i < iters; i++) {
		memcpy(m->dst, m->src, len);
		keep_memory(m->dst);
	}
	return now_ns() - t0;
}

static uint64_t run_copy_dram(struct copy_mem *m, uint64_t iters)
{
	size_t len = copy_len, c = m->chunk;
	uint64_t t0 = now_ns(), t;

	for (uint64_t i = 0; i < iters; i++) {
		uint8_t *dst =
			m->region + ((c + REGION_CHUNKS / 2) % REGION_CHUNKS) * (size_t)COPY_LEN;

		memcpy(dst, m->region + c * (size_t)COPY_LEN, len);
		keep_memory(dst);
		c = (c + 1) % REGION_CHUNKS;
	}
	t = now_ns() - t0;
	m->chunk = c;
	return t;
}

/*
 * One mapping for the three buffers, kept out of forked children: a fork
 * write-protects every page the parent has, and the first write to each one
 * afterwards faults. On a shadow-paging guest (PVM) such a fault costs tens
 * of us, so after the processes' ping-pong a DRAM copy would time 16 faults.
 */
static int copy_mem_init(struct copy_mem *m)
{
	size_t len = REGION_LEN + 2 * COPY_LEN;
	uint8_t *p;
	int err;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
		 0);
	if (p == MAP_FAILED)
		return -errno;
	if (madvise(p, len, MADV_DONTFORK)) {
		err = -errno;
		munmap(p, len);
		return err;
	}
	m->region = p;
	m->src = p + REGION_LEN;
	m->dst = m->src + COPY_LEN;
	m->chunk = 0;
	/* MAP_POPULATE faulted every page in; none is left the shared zero page. */
	memset(p, 0x5a, len);
	return 0;
}

static void copy_mem_fini(struct copy_mem *m)
{
	munmap(m->region, REGION_LEN + 2 * COPY_LEN);
}

/* ---- ping-pong ------------------------------------------------------------ */

/*
 * One round trip's token. An eventfd adds what is written and a read takes
 * the sum, a pipe passes the 8 bytes whole (under PIPE_BUF): with one token
 * in flight both read back exactly what was written.
 */
enum { TOKEN = 1, TOKEN_STOP = 2 };

struct pingpong {
	/*
	 * futex and spin: odd while the token is with the partner. The main
	 * side writes odd values, the partner even ones, so each side knows
	 * what it waits for without reading the other's state.
	 */
	_Alignas(64) _Atomic uint32_t seq;
	_Atomic bool stop;
	enum chan chan;
	int tx[2];	  /* main to partner: read end, write end */
	int rx[2];	  /* partner to main */
	pid_t child;	  /* a process partner */
	pthread_t thread; /* a thread partner */
	int partner_err;  /* written by the thread, read after the join */
};

struct chan_ops {
	int (*ping_n)(struct pingpong *pp, uint64_t n); /* main: n round trips */
	int (*serve)(struct pingpong *pp);		/* partner: until stopped */
	int (*stop)(struct pingpong *pp);		/* main: tell the partner to leave */
};

/* In a spin loop, as vnic_cpu_relax (src/core/core.h): a vnic spin waits the same way. */
#if defined(__x86_64__) || defined(__i386__)
static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}
#elif defined(__aarch64__)
static inline void cpu_relax(void)
{
	__asm__ __volatile__("yield" ::: "memory");
}
#else
static inline void cpu_relax(void)
{
	__asm__ __volatile__("" ::: "memory");
}
#endif

/* EINTR and EAGAIN (the word already moved on) both mean: look again. */
static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* Called on every hand-off, waiter or not: the case measures the blocking path. */
static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * eventfd and pipe. A failed or short read or write is an error: neither
 * happens on a live pipe or eventfd without signal handlers, and a child
 * that dies closes its ends, which the parent reads as end of file.
 */
static int fd_ping_n(struct pingpong *pp, uint64_t n)
{
	uint64_t v = TOKEN;

	for (uint64_t i = 0; i < n; i++) {
		if (write(pp->tx[1], &v, sizeof(v)) != (ssize_t)sizeof(v) ||
		    read(pp->rx[0], &v, sizeof(v)) != (ssize_t)sizeof(v))
			return -EIO;
	}
	return 0;
}

static int fd_serve(struct pingpong *pp)
{
	uint64_t v;

	for (;;) {
		if (read(pp->tx[0], &v, sizeof(v)) != (ssize_t)sizeof(v))
			return -EIO;
		if (v != TOKEN)
			return 0;
		if (write(pp->rx[1], &v, sizeof(v)) != (ssize_t)sizeof(v))
			return -EIO;
	}
}

static int fd_stop(struct pingpong *pp)
{
	uint64_t v = TOKEN_STOP;

	return write(pp->tx[1], &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : -EIO;
}

/* futex: the release store hands the token over, the acquire load takes it. */
static int futex_ping_n(struct pingpong *pp, uint64_t n)
{
	uint32_t s = atomic_load_explicit(&pp->seq, memory_order_relaxed);

	for (uint64_t i = 0; i < n; i++, s += 2) {
		atomic_store_explicit(&pp->seq, s + 1, memory_order_release);
		futex_wake(&pp->seq);
		while (atomic_load_explicit(&pp->seq, memory_order_acquire) == s + 1)
			futex_wait(&pp->seq, s + 1);
	}
	return 0;
}

static int futex_serve(struct pingpong *pp)
{
	uint32_t s = 0;

	for (;;) {
		while (atomic_load_explicit(&pp->seq, memory_order_acquire) == s)
			futex_wait(&pp->seq, s);
		if (atomic_load_explicit(&pp->stop, memory_order_relaxed))
			return 0;
		s += 2;
		atomic_store_explicit(&pp->seq, s, memory_order_release);
		futex_wake(&pp->seq);
	}
}

/* The stop flag is stored before the release of seq, so the partner's acquire sees it. */
static int flag_stop(struct pingpong *pp)
{
	uint32_t s = atomic_load_explicit(&pp->seq, memory_order_relaxed);

	atomic_store_explicit(&pp->stop, true, memory_order_relaxed);
	atomic_store_explicit(&pp->seq, s + 1, memory_order_release);
	if (pp->chan == CHAN_FUTEX)
		futex_wake(&pp->seq);
	return 0;
}

static int spin_ping_n(struct pingpong *pp, uint64_t n)
{
	uint32_t s = atomic_load_explicit(&pp->seq, memory_order_relaxed);

	for (uint64_t i = 0; i < n; i++, s += 2) {
		atomic_store_explicit(&pp->seq, s + 1, memory_order_release);
		while (atomic_load_explicit(&pp->seq, memory_order_acquire) == s + 1)
			cpu_relax();
	}
	return 0;
}

static int spin_serve(struct pingpong *pp)
{
	uint32_t s = 0;

	for (;;) {
		while (atomic_load_explicit(&pp->seq, memory_order_acquire) == s)
			cpu_relax();
		if (atomic_load_explicit(&pp->stop, memory_order_relaxed))
			return 0;
		s += 2;
		atomic_store_explicit(&pp->seq, s, memory_order_release);
	}
}

static const struct chan_ops chans[] = {
	[CHAN_EVENTFD] = {fd_ping_n, fd_serve, fd_stop},
	[CHAN_PIPE] = {fd_ping_n, fd_serve, fd_stop},
	[CHAN_FUTEX] = {futex_ping_n, futex_serve, flag_stop},
	[CHAN_SPIN] = {spin_ping_n, spin_serve, flag_stop},
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void pingpong_close(struct pingpong *pp)
{
	if (pp->chan == CHAN_EVENTFD) {
		/* One eventfd per direction, both ends. */
		close_fd(&pp->tx[0]);
		close_fd(&pp->rx[0]);
		return;
	}
	close_fd(&pp->tx[0]);
	close_fd(&pp->tx[1]);
	close_fd(&pp->rx[0]);
	close_fd(&pp->rx[1]);
}

static int pingpong_open(struct pingpong *pp, enum chan chan)
{
	int err;

	memset(pp, 0, sizeof(*pp));
	atomic_init(&pp->seq, 0);
	atomic_init(&pp->stop, false);
	pp->chan = chan;
	pp->tx[0] = pp->tx[1] = pp->rx[0] = pp->rx[1] = -1;
	switch (chan) {
	case CHAN_EVENTFD:
		pp->tx[0] = pp->tx[1] = eventfd(0, EFD_CLOEXEC);
		if (pp->tx[0] < 0)
			return -errno;
		pp->rx[0] = pp->rx[1] = eventfd(0, EFD_CLOEXEC);
		if (pp->rx[0] < 0)
			goto err_close;
		return 0;
	case CHAN_PIPE:
		if (pipe2(pp->tx, O_CLOEXEC))
			return -errno;
		if (pipe2(pp->rx, O_CLOEXEC))
			goto err_close;
		return 0;
	case CHAN_FUTEX:
	case CHAN_SPIN:
		return 0;
	}
	return -EINVAL;
err_close:
	err = -errno;
	pingpong_close(pp);
	return err;
}

static void *partner_thread(void *arg)
{
	struct pingpong *pp = arg;

	pp->partner_err = chans[pp->chan].serve(pp);
	return NULL;
}

static int start_thread(struct pingpong *pp, int cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_attr_init(&attr);
	if (err)
		return -err;
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(&pp->thread, &attr, partner_thread, pp);
	pthread_attr_destroy(&attr);
	return -err;
}

/* The child keeps only its own ends, so that its exit reads as end of file here. */
static int start_child(struct pingpong *pp, int cpu)
{
	cpu_set_t set;

	pp->child = fork();
	if (pp->child < 0)
		return -errno;
	if (pp->child == 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		close_fd(&pp->tx[1]);
		close_fd(&pp->rx[0]);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(2);
		_exit(fd_serve(pp) ? 1 : 0);
	}
	close_fd(&pp->tx[0]);
	close_fd(&pp->rx[1]);
	return 0;
}

static int join_partner(struct pingpong *pp, bool process)
{
	int status;

	if (!process) {
		pthread_join(pp->thread, NULL);
		return pp->partner_err;
	}
	if (waitpid(pp->child, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* Round trips of one case; setup, warm-up and stop are outside the timed part. */
static int run_pingpong(const struct sys_case *c, const struct bench_cfg *cfg, uint64_t iters,
			uint64_t *ns)
{
	const struct chan_ops *ops = &chans[c->chan];
	int cpu = cfg->cpu[c->two_cpus ? 1 : 0];
	struct pingpong pp;
	uint64_t t0;
	int err, err2;

	err = pingpong_open(&pp, c->chan);
	if (err)
		return err;
	err = c->process ? start_child(&pp, cpu) : start_thread(&pp, cpu);
	if (err)
		goto close_chan;
	err = ops->ping_n(&pp, WARMUP_RTT);
	if (!err) {
		t0 = now_ns();
		err = ops->ping_n(&pp, iters);
		*ns = now_ns() - t0;
	}
	/* A child that is gone fails the stop write (EPIPE): its join still says why. */
	err2 = ops->stop(&pp);
	if (!err)
		err = err2;
	err2 = join_partner(&pp, c->process);
	if (!err)
		err = err2;
close_chan:
	pingpong_close(&pp);
	return err;
}

/* ---- cases, repetitions, statistics --------------------------------------- */

static int run_case(const struct sys_case *c, const struct bench_cfg *cfg, struct copy_mem *m,
		    uint64_t iters, uint64_t *ns)
{
	switch (c->kind) {
	case CASE_SYSCALL:
		*ns = run_syscall(iters);
		return 0;
	case CASE_COPY_HOT:
		*ns = run_copy_hot(m, iters);
		return 0;
	case CASE_COPY_DRAM:
		*ns = run_copy_dram(m, iters);
		return 0;
	case CASE_PINGPONG:
		return run_pingpong(c, cfg, iters, ns);
	}
	return -EINVAL;
}

/*
 * With --time: runs of 16, 64, 256... iterations until one lasts an eighth of
 * the target, then the count that fills the target at that run's speed. With
 * --iters: one run of an eighth of the count, to warm caches and branch
 * predictors as the calibration does.
 */
static int calibrate(struct sys_case *c, const struct bench_cfg *cfg, struct copy_mem *m)
{
	double target_ns = cfg->time_s * 1e9, per;
	uint64_t iters = CALIB_MIN_ITERS, ns = 0;
	int err;

	if (cfg->iters) {
		c->iters = cfg->iters;
		return run_case(c, cfg, m, cfg->iters / 8 + 1, &ns);
	}
	for (;;) {
		err = run_case(c, cfg, m, iters, &ns);
		if (err)
			return err;
		if ((double)ns >= target_ns / 8 || iters >= 1000000000ull / 4)
			break;
		iters *= 4;
	}
	per = (double)(ns ? ns : 1) / (double)iters;
	c->iters = (uint64_t)(target_ns / per);
	if (c->iters < 1)
		c->iters = 1;
	if (c->iters > 1000000000ull)
		c->iters = 1000000000ull;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct stats {
	double median, min, max;
};

static struct stats case_stats(const struct sys_case *c, unsigned int reps)
{
	double v[MAX_REPS];
	struct stats st;

	memcpy(v, c->ns, reps * sizeof(v[0]));
	qsort(v, reps, sizeof(v[0]), cmp_double);
	st.min = v[0];
	st.max = v[reps - 1];
	st.median = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
	return st;
}

static int case_failed(const struct sys_case *c, int err)
{
	fprintf(stderr, "bench_sys: %s: %s\n", c->name, strerror(-err));
	return err;
}

static int run_all(const struct bench_cfg *cfg, struct copy_mem *m)
{
	uint64_t ns;
	int err;

	for (size_t i = 0; i < N_CASES; i++) {
		if (cases[i].two_cpus && cfg->ncpus < 2) {
			cases[i].skipped = "one cpu";
			continue;
		}
		err = calibrate(&cases[i], cfg, m);
		if (err)
			return case_failed(&cases[i], err);
	}
	for (unsigned int r = 0; r < cfg->reps; r++) {
		for (size_t i = 0; i < N_CASES; i++) {
			if (cases[i].skipped)
				continue;
			err = run_case(&cases[i], cfg, m, cases[i].iters, &ns);
			if (err)
				return case_failed(&cases[i], err);
			cases[i].ns[r] = (double)ns / (double)cases[i].iters;
		}
	}
	return 0;
}

/* ---- output ----------------------------------------------------------------- */

static bool is_copy(const struct sys_case *c)
{
	return c->kind == CASE_COPY_HOT || c->kind == CASE_COPY_DRAM;
}

static void print_cpus(const struct sys_case *c, const struct bench_cfg *cfg, const char *sep)
{
	printf("%d", cfg->cpu[0]);
	if (c->two_cpus && cfg->ncpus > 1)
		printf("%s%d", sep, cfg->cpu[1]);
}

/* A copy's GB/s from its ns per copy: the fastest copy is the most GB/s. */
static void print_table_row(const struct sys_case *c, const struct bench_cfg *cfg)
{
	struct stats st;

	printf("| %s | ", c->label);
	if (c->skipped) {
		printf("- | skipped: %s | | | |\n", c->skipped);
		return;
	}
	print_cpus(c, cfg, ",");
	st = case_stats(c, cfg->reps);
	if (c->kind == CASE_SYSCALL) {
		printf(" | %.0f | %.0f | %.0f | ns per call |\n", st.median, st.min, st.max);
		return;
	}
	if (!is_copy(c)) {
		printf(" | %.3f | %.3f | %.3f | us per round trip |\n", st.median / 1e3,
		       st.min / 1e3, st.max / 1e3);
		return;
	}
	printf(" | %.3f | %.3f | %.3f | us per copy |\n", st.median / 1e3, st.min / 1e3,
	       st.max / 1e3);
	printf("| %s | ", c->label);
	print_cpus(c, cfg, ",");
	printf(" | %.1f | %.1f | %.1f | GB/s |\n", COPY_LEN / st.median, COPY_LEN / st.max,
	       COPY_LEN / st.min);
}

static void print_table(const struct bench_cfg *cfg)
{
	printf("bench_sys: cpu %d", cfg->cpu[0]);
	if (cfg->ncpus > 1)
		printf(" and %d", cfg->cpu[1]);
	if (cfg->iters)
		printf(", %u repetitions of %llu iterations\n\n", cfg->reps,
		       (unsigned long long)cfg->iters);
	else
		printf(", %u repetitions of about %g s per case\n\n", cfg->reps, cfg->time_s);
	printf("| case | cpus | median | min | max | unit |\n");
	printf("|---|---|---:|---:|---:|---|\n");
	for (size_t i = 0; i < N_CASES; i++)
		print_table_row(&cases[i], cfg);
}

static void print_json_case(const struct sys_case *c, const struct bench_cfg *cfg)
{
	struct stats st;

	printf("{\"name\": \"%s\", \"cpus\": [", c->name);
	print_cpus(c, cfg, ", ");
	if (c->skipped) {
		printf("], \"skipped\": \"%s\"}", c->skipped);
		return;
	}
	st = case_stats(c, cfg->reps);
	printf("], \"iters\": %llu, \"ns_median\": %.1f, \"ns_min\": %.1f, \"ns_max\": %.1f",
	       (unsigned long long)c->iters, st.median, st.min, st.max);
	if (is_copy(c))
		printf(", \"gb_s_median\": %.2f, \"gb_s_min\": %.2f, \"gb_s_max\": %.2f",
		       COPY_LEN / st.median, COPY_LEN / st.max, COPY_LEN / st.min);
	printf("}");
}

static void print_json(const struct bench_cfg *cfg)
{
	printf("{\"cpus\": [%d", cfg->cpu[0]);
	if (cfg->ncpus > 1)
		printf(", %d", cfg->cpu[1]);
	printf("], \"reps\": %u, \"time_s\": ", cfg->reps);
	if (cfg->iters)
		printf("null");
	else
		printf("%g", cfg->time_s);
	printf(", \"cases\": [");
	for (size_t i = 0; i < N_CASES; i++) {
		printf("%s\n  ", i ? "," : "");
		print_json_case(&cases[i], cfg);
	}
	printf("\n]}\n");
}

/* ---- options ---------------------------------------------------------------- */

static const char usage[] =
	"usage: bench_sys [--time S | --iters N] [--reps R] [--cpus A[,B]] [--json]\n"
	"  --time S    seconds per repetition of each case (default 0.1; 0.001 to 60)\n"
	"  --iters N   calls, copies or round trips per repetition (1 to 1000000000)\n"
	"  --reps R    repetitions (default 7; 1 to 101)\n"
	"  --cpus A,B  the cpus to pin to (default: the first two allowed); one cpu\n"
	"              skips the two-cpu cases\n"
	"  --json      one JSON object instead of the table\n";

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_time(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.001 && v <= 60))
		return -EINVAL;
	*out = v;
	return 0;
}

static int cpus_syntax(const char *s, struct bench_cfg *cfg)
{
	const char *comma = strchr(s, ',');
	char first[16];
	uint64_t v;

	if (!comma) {
		cfg->ncpus = 1;
		if (parse_u64(s, 0, CPU_SETSIZE - 1, &v))
			return -EINVAL;
		cfg->cpu[0] = (int)v;
	} else {
		if ((size_t)(comma - s) >= sizeof(first))
			return -EINVAL;
		memcpy(first, s, (size_t)(comma - s));
		first[comma - s] = '\0';
		cfg->ncpus = 2;
		if (parse_u64(first, 0, CPU_SETSIZE - 1, &v))
			return -EINVAL;
		cfg->cpu[0] = (int)v;
		if (parse_u64(comma + 1, 0, CPU_SETSIZE - 1, &v) || (int)v == cfg->cpu[0])
			return -EINVAL;
		cfg->cpu[1] = (int)v;
	}
	return 0;
}

/* "A" or "A,B", each a cpu this process may run on, B not A. */
static int parse_cpus(const char *s, const cpu_set_t *allowed, struct bench_cfg *cfg)
{
	if (cpus_syntax(s, cfg)) {
		fprintf(stderr, "bench_sys: --cpus wants A or A,B, two different cpus: '%s'\n", s);
		return -EINVAL;
	}
	for (int i = 0; i < cfg->ncpus; i++) {
		if (!CPU_ISSET(cfg->cpu[i], allowed)) {
			fprintf(stderr, "bench_sys: cpu %d is not one this process may run on\n",
				cfg->cpu[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static void default_cpus(const cpu_set_t *allowed, struct bench_cfg *cfg)
{
	cfg->ncpus = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && cfg->ncpus < 2; cpu++)
		if (CPU_ISSET(cpu, allowed))
			cfg->cpu[cfg->ncpus++] = cpu;
}

static int parse_args(int argc, char **argv, struct bench_cfg *cfg)
{
	static const struct option opts[] = {
		{"time", required_argument, NULL, 't'},
		{"iters", required_argument, NULL, 'n'},
		{"reps", required_argument, NULL, 'r'},
		{"cpus", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *cpus = NULL;
	bool timed = false;
	cpu_set_t allowed;
	int opt, idx = 0;
	uint64_t v;

	*cfg = (struct bench_cfg){.reps = 7, .time_s = 0.1};
	while ((opt = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		switch (opt) {
		case 't':
			if (parse_time(optarg, &cfg->time_s))
				goto bad_value;
			timed = true;
			break;
		case 'n':
			if (parse_u64(optarg, 1, 1000000000ull, &cfg->iters))
				goto bad_value;
			break;
		case 'r':
			if (parse_u64(optarg, 1, MAX_REPS, &v))
				goto bad_value;
			cfg->reps = (unsigned int)v;
			break;
		case 'c':
			cpus = optarg;
			break;
		case 'j':
			cfg->json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "bench_sys: unexpected argument '%s'\n%s", argv[optind], usage);
		return -EINVAL;
	}
	if (timed && cfg->iters) {
		fprintf(stderr, "bench_sys: --time and --iters exclude each other\n");
		return -EINVAL;
	}
	if (cfg->iters)
		cfg->time_s = 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("bench_sys: sched_getaffinity");
		return -errno;
	}
	if (!cpus) {
		default_cpus(&allowed, cfg);
		return 0;
	}
	return parse_cpus(cpus, &allowed, cfg);
bad_value:
	fprintf(stderr, "bench_sys: bad value '%s' for --%s\n%s", optarg, opts[idx].name, usage);
	return -EINVAL;
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int main(int argc, char **argv)
{
	struct bench_cfg cfg;
	struct copy_mem mem;
	int err;

	err = parse_args(argc, argv, &cfg);
	if (err)
		return err > 0 ? 0 : 2;
	/* A child that is gone makes a write fail with EPIPE, not kill the run. */
	signal(SIGPIPE, SIG_IGN);
	err = pin_self(cfg.cpu[0]);
	if (err) {
		fprintf(stderr, "bench_sys: cannot pin to cpu %d: %s\n", cfg.cpu[0],
			strerror(-err));
		return 1;
	}
	err = copy_mem_init(&mem);
	if (err) {
		fprintf(stderr, "bench_sys: cannot map the copies' %d MiB: %s\n", REGION_LEN >> 20,
			strerror(-err));
		return 1;
	}
	err = run_all(&cfg, &mem);
	copy_mem_fini(&mem);
	if (err)
		return 1;
	if (cfg.json)
		print_json(&cfg);
	else
		print_table(&cfg);
	return 0;
}
