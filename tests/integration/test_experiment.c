// SPDX-License-Identifier: MIT
/*
 * `vnic experiment NAME --short`: every experiment runs into a folder of its
 * own under a temporary directory, and its CSV shows the direction its
 * netdev thread argues for (docs/SEEDS.md) wherever a counter decides it
 * rather than the clock: direct sends only with tx-submit=auto, fewer
 * replenish calls per poll with low, header descriptors in both hdr-build
 * modes, software checksums only with sw-direct, no GRO merge with list,
 * tx_done at xmit only with orphan, one DQL completion per round with
 * per-round. Rates are never asserted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"
#include "app/experiment.h"
#include "app/plot.h"

enum { MAX_COLS = 256, MAX_ROWS = 16 };

/* A CSV file with a header line, every cell a string. */
struct csv {
	char *text;
	unsigned int ncols, nrows;
	char *head[MAX_COLS];
	char *cell[MAX_ROWS][MAX_COLS];
};

static char tmpdir[] = "/tmp/vnic-test-experiment-XXXXXX";

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Splits one line in place into cells; returns how many. */
static unsigned int split(char *line, char **out, unsigned int max)
{
	unsigned int n = 0;

	while (line && n < max) {
		char *comma = strchr(line, ',');

		out[n++] = line;
		if (comma)
			*comma++ = '\0';
		line = comma;
	}
	return n;
}

/* The experiment whose results the checks read: tmpdir/NAME/. */
static const char *current;

/* Loads tmpdir/current/name, whose first column must be first. */
static void csv_load_first(struct csv *c, const char *name, const char *first)
{
	char path[1024], *line, *next;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%s/%s", tmpdir, current, name);
	c->text = slurp(path);
	assert_non_null(c->text);
	line = c->text;
	next = strchr(line, '\n');
	assert_non_null(next);
	*next++ = '\0';
	c->ncols = split(line, c->head, MAX_COLS);
	assert_true(c->ncols > 3);
	assert_string_equal(c->head[0], first);
	for (line = next; line && *line && c->nrows < MAX_ROWS; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		assert_int_equal(split(line, c->cell[c->nrows], MAX_COLS), c->ncols);
		c->nrows++;
	}
	assert_true(c->nrows > 0);
}

/* A summary CSV: one row per case. */
static void csv_load(struct csv *c, const char *name)
{
	csv_load_first(c, name, "case");
}

static void csv_free(struct csv *c)
{
	free(c->text);
}

/* The value of column col in the row of workload and variant (the test fails if absent). */
static double val(const struct csv *c, const char *workload, const char *variant, const char *col)
{
	unsigned int k, r;

	for (k = 0; k < c->ncols; k++)
		if (!strcmp(c->head[k], col))
			break;
	assert_true(k < c->ncols);
	for (r = 0; r < c->nrows; r++)
		if (!strcmp(c->cell[r][1], workload) && !strcmp(c->cell[r][2], variant))
			return strtod(c->cell[r][k], NULL);
	fail_msg("no row %s %s", workload, variant);
	return 0;
}

static bool exists(const char *name)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/%s", tmpdir, current, name);
	return !stat(path, &st) && st.st_size > 0;
}

/*
 * Runs `vnic experiment name --short [extra]` into tmpdir/FOLDER; its
 * markdown into tmpdir/FOLDER.md.
 */
static void run_in(const char *name, const char *folder, char *extra0, char *extra1)
{
	char md[512], out[512];
	char *argv[] = {"experiment", (char *)name, "--short", "--quiet", "--out", out,
			"--md",	      md,	    extra0,    extra1,	  NULL};
	char *text;
	char title[64], path[1200];

	current = folder;
	snprintf(out, sizeof(out), "%s/%s", tmpdir, folder);
	snprintf(md, sizeof(md), "%s/%s.md", tmpdir, folder);
	assert_int_equal(vnic_cmd_experiment(extra1 ? 10 : 8, argv), 0);

	/* the markdown has the experiment's section, linking to files that exist */
	text = slurp(md);
	assert_non_null(text);
	snprintf(title, sizeof(title), "## `%s`", name);
	assert_non_null(strstr(text, title));
	assert_non_null(strstr(text, "| vnic: "));
	free(text);

	snprintf(title, sizeof(title), "%s.csv", name);
	assert_true(exists(title));
	snprintf(title, sizeof(title), "%s.gp", name);
	assert_true(exists(title));
	/* the script names its files relative to its folder: it redraws wherever the folder goes */
	snprintf(path, sizeof(path), "%s/%s.gp", out, name);
	text = slurp(path);
	assert_non_null(text);
	snprintf(title, sizeof(title), "set output '%s.png'", name);
	assert_non_null(strstr(text, title));
	assert_null(strstr(text, tmpdir));
	free(text);
	snprintf(title, sizeof(title), "%s.png", name);
	if (vnic_plot_terminal())
		assert_true(exists(title));
	else
		print_message("gnuplot not installed: %s not checked\n", title);
}

static void run(const char *name)
{
	run_in(name, name, NULL, NULL);
}

/* Every row: no byte off the pattern, no bad checksum. */
static void no_errors(const struct csv *c)
{
	for (unsigned int r = 0; r < c->nrows; r++)
		assert_true(val(c, c->cell[r][1], c->cell[r][2], "errors") == 0);
}

static void test_replenish(void **state)
{
	struct csv c;

	(void)state;
	run("replenish");
	csv_load(&c, "replenish.csv");
	no_errors(&c);
	assert_true(val(&c, "rr150", "always", "rx_polls") > 0);
	assert_true(val(&c, "rr150", "low", "rx_replenish_per_1k_polls") <
		    val(&c, "rr150", "always", "rx_replenish_per_1k_polls"));
	/* traced: the poll and its replenish were timed */
	assert_true(val(&c, "rr150", "low", "napi_poll_hits") > 0);
	csv_free(&c);
	assert_true(exists("replenish_trace.csv"));
	assert_true(exists("replenish_trace.txt"));
}

static void test_hdr_build(void **state)
{
	struct csv c;

	(void)state;
	run("hdr-build");
	csv_load(&c, "hdr-build.csv");
	no_errors(&c);
	assert_true(val(&c, "stream1", "copy", "tx_hdr_descs") > 0);
	assert_true(val(&c, "stream1", "direct", "tx_hdr_descs") > 0);
	assert_true(val(&c, "stream1", "copy", "hdr_build_hits") > 0);
	assert_true(val(&c, "stream1", "direct", "hdr_build_hits") > 0);
	csv_free(&c);
}

static void test_direct(void **state)
{
	struct csv c;

	(void)state;
	run("direct");
	csv_load(&c, "direct.csv");
	no_errors(&c);
	/* one session: every request is alone, so auto sends it direct */
	assert_true(val(&c, "rr1", "auto", "tx_direct_packets") > 0);
	assert_true(val(&c, "rr1", "indirect", "tx_direct_packets") == 0);
	assert_true(val(&c, "rr150", "indirect", "tx_direct_packets") == 0);
	assert_true(val(&c, "rr1", "indirect", "tx_batched_packets") > 0);
	assert_true(val(&c, "rr1", "auto", "send_direct_hits") > 0);
	assert_true(val(&c, "rr1", "indirect", "send_direct_hits") == 0);
	csv_free(&c);
}

/*
 * --split: the same cases with the devices in a server process. The
 * counters decide as in-process; the files are named -split, and neither
 * a traced row nor a trace file is written (tracing reads the devices).
 */
static void test_direct_split(void **state)
{
	char md[512], out[512];
	char *argv[] = {"experiment", "direct", "--short", "--quiet", "--split", "--out",
			out,	      "--md",	  md,	      NULL};
	struct csv c;
	char *text;

	(void)state;
	current = "direct-split";
	snprintf(out, sizeof(out), "%s/%s", tmpdir, current);
	snprintf(md, sizeof(md), "%s/%s.md", tmpdir, current);
	assert_int_equal(vnic_cmd_experiment(9, argv), 0);
	text = slurp(md);
	assert_non_null(text);
	assert_non_null(strstr(text, "direct --short --split"));
	assert_non_null(strstr(text, "Split: the devices"));
	assert_non_null(strstr(text, "| direct packets, side A (counter) |"));
	assert_null(strstr(text, "(traced"));
	free(text);
	csv_load(&c, "direct-split.csv");
	no_errors(&c);
	assert_true(val(&c, "rr1", "auto", "tx_direct_packets") > 0);
	assert_true(val(&c, "rr1", "indirect", "tx_direct_packets") == 0);
	assert_true(val(&c, "rr1", "indirect", "tx_batched_packets") > 0);
	csv_free(&c);
	assert_false(exists("direct-split_trace.csv"));
	assert_false(exists("direct.csv"));
}

static void test_bql(void **state)
{
	struct csv c;

	(void)state;
	run("bql");
	csv_load(&c, "bql.csv");
	no_errors(&c);
	assert_true(val(&c, "rr150", "per-round", "tx_completion_rounds") > 0);
	assert_true(val(&c, "rr150", "per-round", "tx_bql_completed_calls") ==
		    val(&c, "rr150", "per-round", "tx_completion_rounds"));
	assert_true(val(&c, "rr150", "per-entry", "tx_bql_completed_calls") >=
		    val(&c, "rr150", "per-entry", "tx_completion_rounds"));
	csv_free(&c);
	/* the sampled series, with the columns the plot draws */
	csv_load_first(&c, "bql_rr150_per-round.csv", "t_s");
	assert_string_equal(c.head[5], "tx0_bql_limit");
	assert_string_equal(c.head[6], "tx0_bql_inflight");
	csv_free(&c);
}

static void test_csum(void **state)
{
	static const char *const wl[] = {"rr8900", "rr1B"};
	struct csv c;

	(void)state;
	run("csum");
	csv_load(&c, "csum.csv");
	no_errors(&c);
	for (unsigned int w = 0; w < 2; w++) {
		assert_true(val(&c, wl[w], "sw-direct", "tx_csum_sw") > 0);
		assert_true(val(&c, wl[w], "hw-headers", "tx_csum_sw") == 0);
		assert_true(val(&c, wl[w], "hw-noheaders", "tx_csum_sw") == 0);
		/* headers asked for: never direct; without them, direct */
		assert_true(val(&c, wl[w], "hw-headers", "tx_direct_packets") == 0);
		assert_true(val(&c, wl[w], "hw-noheaders", "tx_direct_packets") > 0);
		/* only the unsafe variant sends an offload without the headers asked for */
		assert_true(val(&c, wl[w], "hw-noheaders", "dev_csum_missing_hdrs") > 0);
		assert_true(val(&c, wl[w], "hw-headers", "dev_csum_missing_hdrs") == 0);
		assert_true(val(&c, wl[w], "sw-direct", "dev_csum_missing_hdrs") == 0);
		assert_true(val(&c, wl[w], "sw-direct", "csum_help_hits") > 0);
		assert_true(val(&c, wl[w], "hw-headers", "csum_help_hits") == 0);
	}
	csv_free(&c);
}

static void test_gro(void **state)
{
	struct csv c;

	(void)state;
	run("gro");
	csv_load(&c, "gro.csv");
	no_errors(&c);
	assert_true(val(&c, "stream4", "list", "rx_gro_merged") == 0);
	assert_true(val(&c, "stream4", "gro", "rx_gro_merged") > 0);
	assert_true(val(&c, "stream4", "gro-list", "rx_gro_merged") > 0);
	/* receive-side CPU was measured on side B's thread */
	assert_true(val(&c, "stream4", "list", "cpu_b_s") > 0);
	csv_free(&c);
}

static void test_reclaim(void **state)
{
	static const char *const others[] = {"lazy", "irq", "napi", "lazy-1ms"};
	struct csv c;

	(void)state;
	run("reclaim");
	csv_load(&c, "reclaim.csv");
	no_errors(&c);
	assert_true(val(&c, "stream1", "orphan", "tx_orphaned") > 0);
	for (unsigned int i = 0; i < 4; i++)
		assert_true(val(&c, "stream1", others[i], "tx_orphaned") == 0);
	/* lazy looks at completions only on its timer here (the ring never fills) */
	assert_true(val(&c, "stream1", "lazy", "tx_timer_reclaims") > 0);
	assert_true(val(&c, "stream1", "irq", "tx_timer_reclaims") == 0);
	csv_free(&c);
	assert_true(exists("reclaim_intervals.csv"));
	assert_true(exists("reclaim_stream1_lazy.csv"));
}

/*
 * --short holds each round to a floor, not to its 0.2 s. At 4 Mbit/s the
 * cable delivers 500 kB a second at most, so a round carries the 512 KiB
 * floor only once it has lasted 1.05 s: the first three tries (0.2, 0.4
 * and 0.8 s) fall short and run again, and what a case keeps carried the
 * floor, unless it was the last try (VNIC_FLOOR_TRIES, 1.6 s), which is
 * kept whatever it carried. Either way it lasted 0.8 s or more, however
 * late a loaded machine ends a round: a round's seconds are those it ran,
 * and a round that ran long carried more, so the cable's rate, not the
 * scheduler, bounds what a round of any length can carry.
 */
static void test_short_floor(void **state)
{
	const double last_s = 0.2 * (1u << (VNIC_FLOOR_TRIES - 1));
	struct csv c;

	(void)state;
	run_in("hdr-build", "floor", "--rate", "4M");
	csv_load(&c, "hdr-build.csv");
	no_errors(&c);
	for (unsigned int r = 0; r < c.nrows; r++) {
		const char *v = c.cell[r][2];

		assert_true(val(&c, "stream1", v, "seconds") >= 0.8);
		assert_true(val(&c, "stream1", v, "bytes") >= XP_SHORT_MIN_BYTES ||
			    val(&c, "stream1", v, "seconds") >= last_s);
	}
	csv_free(&c);
}

static void test_rejects_bad_arguments(void **state)
{
	static const char *const bad[][4] = {
		{"experiment", NULL},
		{"experiment", "nosuch", NULL},
		{"experiment", "bql", "--nosuch", NULL},
		{"experiment", "bql", "--duration", "0"},
		{"experiment", "bql", "--cost-direct-ns", "x"},
		{"experiment", "bql", "stray", NULL},
		/* traced or sampled throughout: cannot run split */
		{"experiment", "csum", "--split", NULL},
		{"experiment", "reclaim", "--server", "/nonexistent/sock"},
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[5] = {NULL};
		int argc = 0;

		while (argc < 4 && bad[i][argc]) {
			argv[argc] = (char *)bad[i][argc];
			argc++;
		}
		assert_int_equal(vnic_cmd_experiment(argc, argv), 2);
	}
}

static int argc_of(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/* Results are never written over: a folder with files, or an --md file, needs --force. */
static void test_never_overwrites(void **state)
{
	char out[512], out2[512], md[512], keep[600];
	char *again[] = {"experiment", "bql", "--short", "--quiet", "--no-plots",
			 "--out", out, NULL};
	char *md_again[] = {"experiment", "bql", "--short", "--quiet", "--no-plots",
			    "--out", out2, "--md", md, NULL};
	char *forced[] = {"experiment", "bql", "--short", "--quiet", "--no-plots",
			  "--out", out, "--force", NULL};
	FILE *f;
	char *text;

	(void)state;
	current = "kept";
	snprintf(out, sizeof(out), "%s/kept", tmpdir);
	snprintf(out2, sizeof(out2), "%s/kept-new", tmpdir);
	snprintf(md, sizeof(md), "%s/kept.md", tmpdir);
	snprintf(keep, sizeof(keep), "%s/bql.csv", out);
	assert_int_equal(mkdir(out, 0700), 0);
	f = fopen(keep, "w");
	assert_non_null(f);
	fputs("committed results\n", f);
	fclose(f);
	f = fopen(md, "w");
	assert_non_null(f);
	fputs("committed markdown\n", f);
	fclose(f);

	assert_int_equal(vnic_cmd_experiment(argc_of(again), again), 1);
	text = slurp(keep);
	assert_non_null(text);
	assert_string_equal(text, "committed results\n");
	free(text);
	assert_int_equal(vnic_cmd_experiment(argc_of(md_again), md_again), 1);
	text = slurp(md);
	assert_string_equal(text, "committed markdown\n");
	free(text);

	/* asked for: written over */
	assert_int_equal(vnic_cmd_experiment(argc_of(forced), forced), 0);
	text = slurp(keep);
	assert_non_null(text);
	assert_non_null(strstr(text, "case,workload,variant"));
	free(text);
}

/* Without --out, a new folder experiment-NAME-TIME in the current directory. */
static void test_default_out(void **state)
{
	char cwd[512], *argv[] = {"experiment", "bql", "--short", "--quiet", "--no-plots", NULL};
	char sub[512], where[600];
	struct dirent *e;
	unsigned int found = 0;
	DIR *d;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(sub, sizeof(sub), "%s/cwd", tmpdir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(vnic_cmd_experiment(argc_of(argv), argv), 0);
	assert_int_equal(chdir(cwd), 0);
	d = opendir(sub);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "experiment-bql-", 15))
			continue;
		found++;
		snprintf(where, sizeof(where), "cwd/%s", e->d_name);
	}
	closedir(d);
	assert_int_equal(found, 1);
	current = where;
	assert_true(exists("bql.csv"));
}

/* --json: one object on stdout with every case and each direction. */
static void test_json(void **state)
{
	char out[512], path[600];
	char *argv[] = {"experiment", "direct", "--short", "--quiet", "--no-plots", "--json",
			"--out", out, NULL};
	int saved, fd;
	char *text;

	(void)state;
	snprintf(out, sizeof(out), "%s/json", tmpdir);
	snprintf(path, sizeof(path), "%s/json.out", tmpdir);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	assert_int_equal(vnic_cmd_experiment(argc_of(argv), argv), 0);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	text = slurp(path);
	assert_non_null(text);
	assert_int_equal(text[0], '{');
	assert_non_null(strstr(text, "\"experiments\": ["));
	assert_non_null(strstr(text, "\"case\": \"rr1 auto\""));
	assert_non_null(strstr(text, "\"case\": \"rr150 indirect\""));
	assert_non_null(strstr(text, "\"tx_direct_packets\": "));
	assert_non_null(strstr(text, "\"directions\": ["));
	assert_null(strstr(text, "| vnic: "));	/* no markdown on stdout */
	free(text);
}

/* A figure that asks for a counter nobody keeps is an error, not a zero. */
static void test_unknown_counter(void **state)
{
	static struct xp x;
	struct vnic_counter ctr[2] = {{"drv_a.tx0_direct_packets", 7},
				      {"drv_a.tx1_direct_packets", 5}};
	struct xp_case *c = &x.cases[0];

	(void)state;
	memset(&x, 0, sizeof(x));
	x.e = &vnic_xp_direct;
	c->x = &x;
	c->ctr = ctr;
	c->nctr = 2;
	assert_int_equal(xp_txa(c, "direct_packets"), 12);
	assert_int_equal(vnic_xp_ctr(c, "drv_a.tx1_direct_packets"), 5);
	assert_int_equal(x.err, 0);
	assert_int_equal(xp_txa(c, "no_such_counter"), 0);
	assert_int_equal(x.err, -ENOENT);
	x.err = 0;
	assert_int_equal(vnic_xp_ctr(c, "drv_b.tx0_direct_packets"), 0);
	assert_int_equal(x.err, -ENOENT);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* rm -r of what the tests wrote (two levels: tmpdir/NAME/FILE). */
static void remove_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) && depth < 3)
			remove_tree(path, depth + 1);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(tmpdir, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rejects_bad_arguments),
		cmocka_unit_test(test_unknown_counter),
		cmocka_unit_test(test_never_overwrites),
		cmocka_unit_test(test_default_out),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_replenish),
		cmocka_unit_test(test_hdr_build),
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_direct_split),
		cmocka_unit_test(test_bql),
		cmocka_unit_test(test_csum),
		cmocka_unit_test(test_gro),
		cmocka_unit_test(test_reclaim),
		cmocka_unit_test(test_short_floor),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
