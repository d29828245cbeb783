// SPDX-License-Identifier: MIT
/*
 * The machine's own floor under a latency tail: one thread per CPU, each
 * pinned, does nothing but read the monotonic clock in a loop and counts
 * the gaps between two reads. A gap is time the thread did not run: an
 * interrupt, another task, or (in a VM) the hypervisor running something
 * else on the vCPU, which the guest's steal time does not always show.
 * No vnic code runs here; whatever this sees, a round trip of vnic sees too.
 *
 * Usage: bench_jitter [-d SECONDS]   (default 2; 1 to 60)
 *
 * Prints, per CPU, gaps a second over 10, 20, 50, 100 and 500 us and the
 * longest. A transaction of p50 T that lands on a gap of G takes T + G:
 * when gaps over 5T happen more often than once in a thousand transactions,
 * p99.9 / p50 cannot be 5 on this machine, whatever the datapath does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N_EDGES = 5, MAX_CPUS = 256 };

static const uint64_t edge_ns[N_EDGES] = { 10000, 20000, 50000, 100000, 500000 };

struct jitter {
	int cpu;
	uint64_t run_ns;
	uint64_t over[N_EDGES];
	uint64_t max_gap_ns;
	int err;
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void count_gap(struct jitter *j, uint64_t gap)
{
	for (int i = 0; i < N_EDGES && gap > edge_ns[i]; i++)
		j->over[i]++;
	if (gap > j->max_gap_ns)
		j->max_gap_ns = gap;
}

static void *jitter_thread(void *arg)
{
	struct jitter *j = arg;
	cpu_set_t set;
	uint64_t start, prev, now;

	CPU_ZERO(&set);
	CPU_SET(j->cpu, &set);
	j->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (j->err)
		return NULL;
	start = prev = mono_ns();
	do {
		now = mono_ns();
		count_gap(j, now - prev);
		prev = now;
	} while (now - start < j->run_ns);
	return NULL;
}

static int parse_seconds(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 60)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int main(int argc, char **argv)
{
	static struct jitter j[MAX_CPUS];
	static pthread_t t[MAX_CPUS];
	unsigned int seconds = 2, n = 0;
	cpu_set_t allowed;
	int opt;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd' || parse_seconds(optarg, &seconds)) {
			fprintf(stderr, "usage: bench_jitter [-d SECONDS (1-60)]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "bench_jitter: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("bench_jitter: sched_getaffinity");
		return 1;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && n < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		j[n] = (struct jitter){ .cpu = cpu, .run_ns = seconds * 1000000000ull };
		if (pthread_create(&t[n], NULL, jitter_thread, &j[n])) {
			fprintf(stderr, "bench_jitter: cannot start a thread for cpu %d\n", cpu);
			return 1;
		}
		n++;
	}
	printf("| cpu | gaps/s > 10 us | > 20 us | > 50 us | > 100 us | > 500 us | longest, us |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (j[i].err) {
			fprintf(stderr, "bench_jitter: cpu %d: %s\n", j[i].cpu, strerror(j[i].err));
			return 1;
		}
		printf("| %d |", j[i].cpu);
		for (int e = 0; e < N_EDGES; e++)
			printf(" %.0f |", (double)j[i].over[e] / seconds);
		printf(" %.1f |\n", (double)j[i].max_gap_ns / 1e3);
	}
	return 0;
}
