// SPDX-License-Identifier: MIT
/*
 * What the machine was doing while a figure was taken: the load average and
 * /proc/stat at the start and at the end of a run, and how much CPU went to
 * other processes meanwhile. A report carries it so that a reader can tell
 * when not to trust a figure; a run on a busy machine says so.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app.h"

/* The cpu line of /proc/stat: busy (everything but idle and iowait), steal, all. */
static void read_stat(struct vnic_machine_snap *s)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	s->have_stat = false;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		/* user nice system idle iowait irq softirq steal (guest time is in user) */
		s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		s->busy = s->total - v[3] - v[4];
		s->steal = v[7];
		s->have_stat = true;
	}
	fclose(f);
}

static double process_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void vnic_machine_snap(struct vnic_machine_snap *s)
{
	double load[1] = { -1 };

	memset(s, 0, sizeof(*s));
	s->wall = time(NULL);
	s->t_ns = vnic_now_ns();
	if (getloadavg(load, 1) == 1)
		s->load1 = load[0];
	else
		s->load1 = -1;
	read_stat(s);
	s->proc_cpu_s = process_cpu_s();
}

void vnic_machine_report(const struct vnic_machine_snap *a, const struct vnic_machine_snap *b,
			 struct vnic_machine *m)
{
	double secs = (double)(b->t_ns - a->t_ns) / 1e9, tick = (double)sysconf(_SC_CLK_TCK);
	struct tm tm;

	memset(m, 0, sizeof(*m));
	m->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->load_start = a->load1;
	m->load_end = b->load1;
	if (localtime_r(&a->wall, &tm))
		strftime(m->start, sizeof(m->start), "%Y-%m-%dT%H:%M:%S%z", &tm);
	if (a->have_stat && b->have_stat && b->total > a->total && secs > 0 && tick > 0) {
		double busy_s = (double)(b->busy - a->busy) / tick;

		m->steal_pct = 100.0 * (double)(b->steal - a->steal) / (double)(b->total - a->total);
		/* What ran besides us: all the busy CPU less our own, per second of the run. */
		m->others_cpus = (busy_s - (b->proc_cpu_s - a->proc_cpu_s)) / secs;
		if (m->others_cpus < 0)
			m->others_cpus = 0;
		m->have_stat = true;
	}
	m->busy = m->have_stat && (m->others_cpus > VNIC_MACHINE_BUSY_CPUS ||
				   m->steal_pct > VNIC_MACHINE_BUSY_STEAL_PCT);
}

void vnic_machine_print(FILE *f, const struct vnic_machine *m, const char *cmdline)
{
	fprintf(f, "  machine   %s, %d cpus, started %s, load %.2f -> %.2f", vnic_version_string(),
		m->cpus, m->start, m->load_start, m->load_end);
	if (m->have_stat)
		fprintf(f, ", steal %.1f %%, others %.2f cpus", m->steal_pct, m->others_cpus);
	fputc('\n', f);
	if (cmdline)
		fprintf(f, "  command   %s\n", cmdline);
	if (m->busy)
		fprintf(f, "  WARNING   the machine was busy beyond this run (other processes used "
			   "%.2f cpus on average, steal %.1f %%): do not trust these figures\n",
			m->others_cpus, m->steal_pct);
}

void vnic_machine_json(struct vnic_json *j, const struct vnic_machine *m, const char *cmdline)
{
	vnic_json_object(j, "machine");
	vnic_json_str(j, "version", vnic_version());
	vnic_json_str(j, "commit", vnic_git_commit());
	if (cmdline)
		vnic_json_str(j, "command", cmdline);
	vnic_json_str(j, "start", m->start);
	vnic_json_u64(j, "cpus", (uint64_t)m->cpus);
	vnic_json_double(j, "load_start", m->load_start);
	vnic_json_double(j, "load_end", m->load_end);
	if (m->have_stat) {
		vnic_json_double(j, "steal_pct", m->steal_pct);
		vnic_json_double(j, "others_cpus", m->others_cpus);
	}
	vnic_json_bool(j, "busy", m->busy);
	vnic_json_close(j);
}

char *vnic_cmdline(int argc, char **argv)
{
	size_t len = sizeof("vnic");
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, "vnic");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}
