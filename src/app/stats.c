// SPDX-License-Identifier: MIT
/*
 * `vnic stats [NAME]`: the counters of a running `vnic bench` or `vnic link`,
 * read over its control socket (ctl.c, docs/STATS.md); and `vnic show
 * [NAME]` and `vnic set NAME KEY VALUE...`, its settings (live.c).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"

enum { STATS_TIMEOUT_MS = 3000 };

struct stats_opts {
	const char *name;
	bool all;
	bool json;
	bool watch;
};

struct ctr {
	char *name; /* into the answer buffer */
	uint64_t value;
};

struct snap {
	char *text; /* the answer, cut into names in place */
	struct ctr *c;
	size_t n;
	uint64_t t_ns;
};

static volatile sig_atomic_t stop_watch;

static void usage(FILE *f)
{
	fputs("usage: vnic stats [NAME] [--all] [--json] [--watch]\n"
	      "  NAME     the instance ('vnic bench --name', default bench-PID / link-PID);\n"
	      "           optional when exactly one instance runs\n"
	      "  --all    show counters that are zero too\n"
	      "  --json   the raw JSON object the instance sends\n"
	      "  --watch  refresh every second with per-second deltas, until Ctrl-C\n",
	      f);
}

static int parse(int argc, char **argv, struct stats_opts *o)
{
	static const struct option opts[] = {
		{"all", no_argument, NULL, 'a'},
		{"json", no_argument, NULL, 'j'},
		{"watch", no_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0;	/* afresh: tests parse many lines in one process */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'w':
			o->watch = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "vnic stats: unknown option '%s' (vnic stats --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->name = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "vnic stats: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->name && !vnic_ctl_name_valid(o->name)) {
		fprintf(stderr, "vnic stats: '%s' is not an instance name (A-Z a-z 0-9 . _ -)\n",
			o->name);
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Finding the instance
 * ------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool answers(const char *name)
{
	char path[256], *out;
	bool ok;

	if (vnic_ctl_path(name, path, sizeof(path)) ||
	    vnic_ctl_request(path, "ping", STATS_TIMEOUT_MS, &out, NULL))
		return false;
	ok = !strcmp(out, "pong\n");
	free(out);
	return ok;
}

/*
 * The live instances (those that answer a ping; a file left by one that died
 * does not count), sorted. Their count, or -errno.
 */
static int instances(char ***names)
{
	char dir[256];
	struct dirent *e;
	char **v = NULL;
	int n = 0, err;
	DIR *d;

	*names = NULL;
	err = vnic_ctl_dir(dir, sizeof(dir), false);
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char **nv;

		if (len <= 5 || strcmp(e->d_name + len - 5, ".sock"))
			continue;
		e->d_name[len - 5] = '\0';
		if (!vnic_ctl_name_valid(e->d_name) || !answers(e->d_name))
			continue;
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv || !(nv[n] = strdup(e->d_name))) {
			v = nv ? nv : v;
			err = -ENOMEM;
			break;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (err) {
		for (int i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return err;
	}
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*names = v;
	return n;
}

/* The one instance to talk to: 0, or the exit status after saying why (as cmd). */
static int pick_as(const char *cmd, const struct stats_opts *o, char *path, size_t len)
{
	char dir[256], **names;
	int n, i, status;

	if (o->name) {
		if (vnic_ctl_path(o->name, path, len)) {
			fprintf(stderr, "%s: '%s': name too long\n", cmd, o->name);
			return 2;
		}
		return 0;
	}
	n = instances(&names);
	if (n < 0) {
		fprintf(stderr, "%s: listing instances: %s\n", cmd, strerror(-n));
		return 1;
	}
	if (n == 1) {
		status = vnic_ctl_path(names[0], path, len) ? 1 : 0;
		free(names[0]);
		free(names);
		return status;
	}
	if (vnic_ctl_dir(dir, sizeof(dir), false))
		snprintf(dir, sizeof(dir), "?");
	if (!n) {
		fprintf(stderr, "%s: no vnic instance is running (no socket answers in %s)\n", cmd,
			dir);
		return 1;
	}
	fprintf(stderr, "%s: %d instances are running; name one:", cmd, n);
	for (i = 0; i < n; i++) {
		fprintf(stderr, " %s", names[i]);
		free(names[i]);
	}
	fputc('\n', stderr);
	free(names);
	return 2;
}

static int pick(const struct stats_opts *o, char *path, size_t len)
{
	return pick_as("vnic stats", o, path, len);
}

/* ---------------------------------------------------------------------------
 * Reading and printing
 * ------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_ctr(const void *a, const void *b)
{
	return strcmp(((const struct ctr *)a)->name, ((const struct ctr *)b)->name);
}

static void snap_free(struct snap *s)
{
	free(s->text);
	free(s->c);
	memset(s, 0, sizeof(*s));
}

/* Cuts "name value" lines into counters, sorted by name. 0 or -EPROTO / -ENOMEM. */
static int snap_parse(struct snap *s)
{
	size_t lines = 0, cap;
	char *p, *line;

	if (!strncmp(s->text, "error:", 6))
		return -EPROTO;
	for (p = s->text; *p; p++)
		lines += *p == '\n';
	cap = lines + 1;
	s->c = calloc(cap, sizeof(*s->c));
	if (!s->c)
		return -ENOMEM;
	for (line = strtok_r(s->text, "\n", &p); line; line = strtok_r(NULL, "\n", &p)) {
		char *sp = strrchr(line, ' '), *end;

		if (!sp || sp == line || s->n >= cap)
			return -EPROTO;
		*sp = '\0';
		errno = 0;
		s->c[s->n].value = strtoull(sp + 1, &end, 10);
		if (errno || *end || end == sp + 1)
			return -EPROTO;
		s->c[s->n++].name = line;
	}
	qsort(s->c, s->n, sizeof(*s->c), cmp_ctr);
	return 0;
}

static int fetch(const char *path, const char *req, char **out)
{
	return vnic_ctl_request(path, req, STATS_TIMEOUT_MS, out, NULL);
}

/* A request failed: one line on stderr (as cmd), the exit status. */
static int fail_as(const char *cmd, const struct stats_opts *o, const char *path, int err)
{
	if (err == -ENOENT || err == -ECONNREFUSED) {
		fprintf(stderr, "%s: no instance %s%s%s (nothing answers at %s)\n", cmd,
			o->name ? "named '" : "", o->name ? o->name : "", o->name ? "'" : "", path);
		return 1;
	}
	if (err == -EPROTO) {
		fprintf(stderr, "%s: %s answered something that is not counters\n", cmd, path);
		return 1;
	}
	fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(-err));
	return 1;
}

static int fail(const struct stats_opts *o, const char *path, int err)
{
	return fail_as("vnic stats", o, path, err);
}

static int take(const char *path, struct snap *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = fetch(path, "stats", &s->text);
	s->t_ns = now_ns();
	if (!err)
		err = snap_parse(s);
	if (err)
		snap_free(s);
	return err;
}

static int name_width(const struct snap *s, bool all)
{
	int w = 8;

	for (size_t i = 0; i < s->n; i++) {
		int len = (int)strlen(s->c[i].name);

		if ((all || s->c[i].value) && len > w)
			w = len;
	}
	return w;
}

static void print_plain(const struct snap *s, bool all)
{
	int w = name_width(s, all);

	for (size_t i = 0; i < s->n; i++)
		if (all || s->c[i].value)
			printf("%-*s %20" PRIu64 "\n", w, s->c[i].name, s->c[i].value);
}

static const struct ctr *find(const struct snap *s, const char *name)
{
	struct ctr key = {.name = (char *)name};

	return bsearch(&key, s->c, s->n, sizeof(*s->c), cmp_ctr);
}

static void print_watch(const char *path, const struct snap *cur, const struct snap *prev, bool all,
			bool tty)
{
	double dt = prev ? (double)(cur->t_ns - prev->t_ns) / 1e9 : 0;
	int w = name_width(cur, all);

	if (tty)
		fputs("\033[H\033[2J", stdout);
	else
		putchar('\n');
	printf("%s  (every 1 s, Ctrl-C stops)\n", path);
	printf("%-*s %20s %16s\n", w, "counter", "value", "per second");
	for (size_t i = 0; i < cur->n; i++) {
		const struct ctr *c = &cur->c[i], *p = prev ? find(prev, c->name) : NULL;

		if (!all && !c->value)
			continue;
		if (p && dt > 0)
			/* signed: gauges (bql_limit, *_used, *_free) go down too */
			printf("%-*s %20" PRIu64 " %16.1f\n", w, c->name, c->value,
			       ((double)c->value - (double)p->value) / dt);
		else
			printf("%-*s %20" PRIu64 " %16s\n", w, c->name, c->value, "-");
	}
	fflush(stdout);
}

static void on_sigint(int sig)
{
	(void)sig;
	stop_watch = 1;
}

static int watch(const struct stats_opts *o, const char *path)
{
	struct sigaction sa = {.sa_handler = on_sigint};
	struct snap cur, prev = {0};
	bool tty = isatty(STDOUT_FILENO);
	int err, rounds = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop_watch) {
		struct timespec ts = {1, 0};

		if (o->json) {
			char *out;

			err = fetch(path, "stats json", &out);
			if (!err) {
				fputs(out, stdout);
				fflush(stdout);
				free(out);
			}
		} else {
			err = take(path, &cur);
			if (!err) {
				print_watch(path, &cur, rounds ? &prev : NULL, o->all, tty);
				snap_free(&prev);
				prev = cur;
			}
		}
		if (err) {
			snap_free(&prev);
			if (!rounds)
				return fail(o, path, err);
			/* The instance ended its run: that ends the watch. */
			fprintf(stderr, "vnic stats: %s stopped answering\n", path);
			return 0;
		}
		rounds++;
		/* No SA_RESTART: Ctrl-C cuts the sleep short. */
		nanosleep(&ts, NULL);
	}
	snap_free(&prev);
	return 0;
}

int vnic_cmd_stats(int argc, char **argv)
{
	struct stats_opts o;
	struct snap s;
	char path[256], *out;
	int err;

	err = parse(argc, argv, &o);
	if (err > 0)
		return 0;
	if (err)
		return 2;
	err = pick(&o, path, sizeof(path));
	if (err)
		return err;
	if (o.watch)
		return watch(&o, path);
	if (o.json) {
		err = fetch(path, "stats json", &out);
		if (err)
			return fail(&o, path, err);
		fputs(out, stdout);
		free(out);
		return 0;
	}
	err = take(path, &s);
	if (err)
		return fail(&o, path, err);
	print_plain(&s, o.all);
	snap_free(&s);
	return 0;
}

/* ---------------------------------------------------------------------------
 * `vnic show [NAME] [-j]` and `vnic set NAME KEY VALUE...`
 * ------------------------------------------------------------------------- */

/* A change-param reset renegotiates everything: give it time. */
enum { SET_TIMEOUT_MS = 20000 };

static void show_usage(FILE *f)
{
	fputs("usage: vnic show [NAME] [-j|--json]\n"
	      "  what a running bench or link negotiated (channels, rings, MTU, offloads,\n"
	      "  BQL limits) and every setting in force, and which can change live\n"
	      "  NAME     the instance; optional when exactly one instance runs\n"
	      "  --json   one JSON object (-j)\n"
	      "  --help   this text\n",
	      f);
}

int vnic_cmd_show(int argc, char **argv)
{
	struct stats_opts o = { 0 };
	char path[256], *out;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			o.json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			show_usage(stdout);
			return 0;
		} else if (argv[i][0] != '-' && !o.name) {
			o.name = argv[i];
		} else {
			fprintf(stderr, "vnic show: unexpected argument '%s'\n", argv[i]);
			show_usage(stderr);
			return 2;
		}
	}
	err = pick_as("vnic show", &o, path, sizeof(path));
	if (err)
		return err;
	err = vnic_ctl_request(path, o.json ? "show json" : "show", STATS_TIMEOUT_MS, &out, NULL);
	if (err)
		return fail_as("vnic show", &o, path, err);
	fputs(out, strncmp(out, "error:", 6) ? stdout : stderr);
	err = strncmp(out, "error:", 6) ? 0 : 1;
	free(out);
	return err;
}

static void set_usage(FILE *f)
{
	fputs("usage: vnic set NAME KEY VALUE [KEY VALUE...]\n"
	      "  changes a running bench or link: KEY is an option of the vNIC table without\n"
	      "  its dashes (tx-submit, loss, mtu, fault, ...; 'vnic show NAME' lists them\n"
	      "  and which can change live); a flag takes on or off. Policies, busy-poll,\n"
	      "  the cable and faults change at once; mtu, rings and hdr-mask through a\n"
	      "  reset of the drivers. One bad value and nothing changes.\n"
	      "  --help   this text\n",
	      f);
}

int vnic_cmd_set(int argc, char **argv)
{
	struct stats_opts o = { 0 };
	char path[256], req[VNIC_CTL_LINE_MAX + 1], *out;
	size_t at;
	int err;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		set_usage(stdout);
		return 0;
	}
	if (argc < 4 || (argc - 2) % 2) {
		fputs("vnic set: NAME, then KEY VALUE pairs\n", stderr);
		set_usage(stderr);
		return 2;
	}
	o.name = argv[1];
	at = (size_t)snprintf(req, sizeof(req), "set");
	for (int i = 2; i < argc && at < sizeof(req); i++) {
		if (strchr(argv[i], ' ') || !argv[i][0]) {
			fprintf(stderr, "vnic set: '%s': a key or value is one word\n", argv[i]);
			return 2;
		}
		at += (size_t)snprintf(req + at, sizeof(req) - at, " %s", argv[i]);
	}
	if (at >= sizeof(req)) {
		fprintf(stderr, "vnic set: more than %d bytes of settings at once\n",
			VNIC_CTL_LINE_MAX);
		return 2;
	}
	err = pick_as("vnic set", &o, path, sizeof(path));
	if (err)
		return err;
	err = vnic_ctl_request(path, req, SET_TIMEOUT_MS, &out, NULL);
	if (err)
		return fail_as("vnic set", &o, path, err);
	fputs(out, strncmp(out, "error:", 6) ? stdout : stderr);
	err = strstr(out, "error:") ? 1 : 0;
	free(out);
	return err;
}
