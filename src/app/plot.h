/* SPDX-License-Identifier: MIT */
/*
 * src/app/plot.c: PNG plots of CSV files, drawn by gnuplot. Internal to the
 * app layer (used by experiment.c).
 *
 * Each plot is written as a gnuplot script next to its PNG (NAME.gp beside
 * NAME.png), then gnuplot is run on it: the script stays, so a plot can be
 * redrawn or restyled by hand from the CSV without vnic. The CSV files
 * must have a header line: columns are named, never numbered.
 */
#ifndef VNIC_APP_PLOT_H
#define VNIC_APP_PLOT_H

#include <stdbool.h>

enum { VNIC_PLOT_MAX_PANELS = 6, VNIC_PLOT_MAX_LINES = 8 };

/*
 * The PNG terminal gnuplot has here: "pngcairo", else "png" (libgd), else
 * NULL (no gnuplot in PATH, or neither terminal). Probed once per process
 * (the first call runs gnuplot); later calls are free. Not thread-safe.
 */
const char *vnic_plot_terminal(void);

/* One panel of a bar chart: one bar per CSV row, its height the column. */
struct vnic_plot_bars {
	const char *title;  /* panel title, e.g. "transactions/s" */
	const char *column; /* CSV column of the heights */
};

/*
 * A bar chart of csv, one panel per entry of panels (at most
 * VNIC_PLOT_MAX_PANELS, side by side), bars labelled by the label_column
 * of each row and coloured by color_column (a small integer: 0 is the
 * first colour; NULL colours by row). 0, -ENOENT (no gnuplot: nothing
 * drawn, the script is still written), -EINVAL, -EIO (gnuplot failed), or
 * the errno of writing the script.
 */
int vnic_plot_bar_chart(const char *png, const char *title, const char *csv,
			const char *label_column, const char *color_column,
			const struct vnic_plot_bars *panels, unsigned int npanels);

/* One line of a line chart: y against x, both CSV columns. */
struct vnic_plot_line {
	const char *csv;
	const char *x;	   /* column of x */
	const char *y;	   /* column of y */
	const char *title; /* legend */
	bool steps;	   /* per-interval values, x the interval's middle: drawn as
			    * steps a whole interval wide (histeps) */
};

struct vnic_plot_panel {
	const char *title;
	const char *xlabel;
	const char *ylabel;
	const struct vnic_plot_line *lines;
	unsigned int nlines; /* at most VNIC_PLOT_MAX_LINES */
};

/*
 * Line charts, the panels stacked top to bottom with the same x range.
 * Same returns as vnic_plot_bar_chart.
 */
int vnic_plot_line_chart(const char *png, const char *title, const struct vnic_plot_panel *panels,
			 unsigned int npanels);

#endif /* VNIC_APP_PLOT_H */
