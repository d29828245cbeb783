// SPDX-License-Identifier: MIT
/*
 * Plots for `vnic experiment`, drawn by gnuplot from the CSV files the
 * experiments write. gnuplot rather than matplotlib: one small Debian
 * package (gnuplot-nox has the cairo PNG terminal) and no Python in the
 * toolchain; the scripts it reads are plain text that stay next to the
 * PNGs, so anyone can redraw a figure from its CSV.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "plot.h"

extern char **environ;

/*
 * Runs gnuplot with args in dir (NULL: here), its output to /dev/null if
 * quiet. 0, -ENOENT (not found) or -EIO.
 */
static int run_gnuplot(char *const argv[], const char *dir, bool quiet)
{
	posix_spawn_file_actions_t fa;
	int err, status;
	pid_t pid;

	err = posix_spawn_file_actions_init(&fa);
	if (err)
		return -err;
	if (quiet) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	}
	if (dir)
		err = posix_spawn_file_actions_addchdir_np(&fa, dir);
	if (err) {
		posix_spawn_file_actions_destroy(&fa);
		return -err;
	}
	err = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return err == ENOENT ? -ENOENT : -err;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

const char *vnic_plot_terminal(void)
{
	static const char *const terms[] = {"pngcairo", "png"};
	static bool probed;
	static const char *term;

	if (probed)
		return term;
	probed = true;
	for (unsigned int i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		char cmd[64];
		char *argv[] = {"gnuplot", "-e", cmd, NULL};
		int err;

		snprintf(cmd, sizeof(cmd), "set terminal %s", terms[i]);
		err = run_gnuplot(argv, NULL, true);
		if (err == -ENOENT)
			break;
		if (!err) {
			term = terms[i];
			break;
		}
	}
	return term;
}

/* A gnuplot single-quoted string: only the quote itself needs escaping (doubled). */
static void put_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/*
 * A file of the script's own folder (where the PNG goes) by its name alone,
 * so that the folder can be moved or copied and the script still redraws
 * it; any other file by its path as given.
 */
static void put_file(FILE *f, const char *png, const char *path)
{
	const char *slash = strrchr(png, '/');
	size_t dir = slash ? (size_t)(slash - png) + 1 : 0;

	put_str(f, dir && !strncmp(path, png, dir) && !strchr(path + dir, '/') ? path + dir : path);
}

/* "dir/name.png" -> "dir/name.gp". -ENAMETOOLONG or -EINVAL if not a .png name. */
static int script_path(const char *png, char *buf, size_t len)
{
	size_t n = strlen(png);

	if (n < 5 || strcmp(png + n - 4, ".png"))
		return -EINVAL;
	if (n - 4 + 4 > len)
		return -ENAMETOOLONG;
	memcpy(buf, png, n - 4);
	memcpy(buf + n - 4, ".gp", 4);
	return 0;
}

/*
 * The terminal and the common style. The terminal line names pngcairo even
 * when the plot is not drawn (no gnuplot here), so the script stays usable
 * elsewhere.
 */
static void preamble(FILE *f, const char *png, int width, int height)
{
	const char *term = vnic_plot_terminal();

	fputs("# Written by `vnic experiment`. Redraw with `gnuplot NAME.gp` in this folder:\n"
	      "# the files below are named relative to it.\n",
	      f);
	fprintf(f, "set terminal %s size %d,%d noenhanced%s\n", term ? term : "pngcairo", width,
		height, term && !strcmp(term, "png") ? "" : " font 'sans,10'");
	fputs("set output ", f);
	put_file(f, png, png);
	fputs("\nset datafile separator ','\n"
	      "set grid ytics\n"
	      "set border 3\n"
	      "set tics nomirror\n"
	      /* colour-blind-safe palette (Okabe-Ito) */
	      "set linetype 1 lc rgb '#0072b2' lw 2\n"
	      "set linetype 2 lc rgb '#d55e00' lw 2\n"
	      "set linetype 3 lc rgb '#009e73' lw 2\n"
	      "set linetype 4 lc rgb '#cc79a7' lw 2\n"
	      "set linetype 5 lc rgb '#e69f00' lw 2\n"
	      "set linetype 6 lc rgb '#56b4e9' lw 2\n"
	      "set linetype 7 lc rgb '#000000' lw 2\n"
	      "set linetype 8 lc rgb '#f0e442' lw 2\n",
	      f);
}

/* The multiplot with the chart's title above every panel. */
static void multiplot(FILE *f, unsigned int rows, unsigned int cols, const char *title)
{
	fprintf(f, "set multiplot layout %u,%u", rows, cols);
	if (title) {
		fputs(" title ", f);
		put_str(f, title);
	}
	fputc('\n', f);
}

/* Writes the script with fill(), then draws it. */
static int draw(const char *png, void (*fill)(FILE *f, const void *ctx), const void *ctx)
{
	size_t len = strlen(png) + 1;
	char *gp = malloc(len);
	char *argv[] = {"gnuplot", gp, NULL};
	FILE *f;
	int err;

	if (!gp)
		return -ENOMEM;
	err = script_path(png, gp, len);
	if (err)
		goto out;
	f = fopen(gp, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	fill(f, ctx);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && vnic_plot_terminal()) {
		char *slash = strrchr(gp, '/');

		/* the script names its files relative to its folder: run it there */
		if (slash) {
			*slash = '\0';
			argv[1] = slash + 1;
		}
		err = run_gnuplot(argv, slash ? (slash == gp ? "/" : gp) : NULL, false);
	} else if (!err) {
		err = -ENOENT;
	}
out:
	free(gp);
	return err;
}

struct bar_ctx {
	const char *png, *title, *csv, *label, *color;
	const struct vnic_plot_bars *p;
	unsigned int n;
};

static void fill_bars(FILE *f, const void *arg)
{
	const struct bar_ctx *c = arg;

	preamble(f, c->png, 380 * (int)c->n + 80, 440);
	fputs("set style fill solid 0.75 border -1\n"
	      "set boxwidth 0.7\n"
	      "set yrange [0:*]\n"
	      "set offsets 0.5, 0.5, 0, 0\n"
	      "set xtics rotate by -30 left\n"
	      "set format y '%.3g'\n"
	      "set bmargin 6\n",
	      f);
	multiplot(f, 1, c->n, c->title);
	for (unsigned int i = 0; i < c->n; i++) {
		fputs("set title ", f);
		put_str(f, c->p[i].title);
		fputs("\nplot ", f);
		put_file(f, c->png, c->csv);
		if (c->color)
			fprintf(f, " using 0:(column('%s')):(int(column('%s'))%%8+1)",
				c->p[i].column, c->color);
		else
			fprintf(f, " using 0:(column('%s')):(int($0)%%8+1)", c->p[i].column);
		fprintf(f, ":xtic(stringcolumn('%s')) with boxes lc variable notitle, \\\n  ''",
			c->label);
		fprintf(f,
			" using 0:(column('%s')):(sprintf('%%.3g', column('%s')))"
			" with labels offset 0,0.7 notitle\n",
			c->p[i].column, c->p[i].column);
	}
	fputs("unset multiplot\n", f);
}

int vnic_plot_bar_chart(const char *png, const char *title, const char *csv,
			const char *label_column, const char *color_column,
			const struct vnic_plot_bars *panels, unsigned int npanels)
{
	struct bar_ctx c = {png, title, csv, label_column, color_column, panels, npanels};

	if (!npanels || npanels > VNIC_PLOT_MAX_PANELS)
		return -EINVAL;
	return draw(png, fill_bars, &c);
}

struct line_ctx {
	const char *png, *title;
	const struct vnic_plot_panel *p;
	unsigned int n;
};

static void fill_lines(FILE *f, const void *arg)
{
	const struct line_ctx *c = arg;

	preamble(f, c->png, 1000, 300 * (int)c->n + 60);
	fputs("set key outside right top\n"
	      "set yrange [0:*]\n"
	      "set format y '%.3g'\n",
	      f);
	multiplot(f, c->n, 1, c->title);
	for (unsigned int i = 0; i < c->n; i++) {
		const struct vnic_plot_panel *p = &c->p[i];

		fputs("set title ", f);
		put_str(f, p->title ? p->title : "");
		fputs("\nset xlabel ", f);
		put_str(f, p->xlabel ? p->xlabel : "");
		fputs("\nset ylabel ", f);
		put_str(f, p->ylabel ? p->ylabel : "");
		fputs("\nplot ", f);
		for (unsigned int l = 0; l < p->nlines; l++) {
			const struct vnic_plot_line *ln = &p->lines[l];

			if (l)
				fputs(", \\\n  ", f);
			put_file(f, c->png, ln->csv);
			fprintf(f, " using (column('%s')):(column('%s')) with %s lt %u title ",
				ln->x, ln->y, ln->steps ? "histeps" : "lines", l + 1);
			put_str(f, ln->title ? ln->title : ln->y);
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
}

int vnic_plot_line_chart(const char *png, const char *title, const struct vnic_plot_panel *panels,
			 unsigned int npanels)
{
	struct line_ctx c = {png, title, panels, npanels};

	if (!npanels || npanels > VNIC_PLOT_MAX_PANELS)
		return -EINVAL;
	for (unsigned int i = 0; i < npanels; i++)
		if (!panels[i].nlines || panels[i].nlines > VNIC_PLOT_MAX_LINES)
			return -EINVAL;
	return draw(png, fill_lines, &c);
}
