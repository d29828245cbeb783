// SPDX-License-Identifier: MIT
/* The `vnic` command: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "app.h"

static void usage(FILE *f)
{
	fputs("usage: vnic <command> [options]\n"
	      "commands:\n"
	      "  bench rr|stream   run a built-in workload across two vNICs on an in-process cable\n"
	      "  stats [NAME]      the counters of a running bench or link (--json, --watch)\n"
	      "  link              two network namespaces joined by vnic, for real traffic (root)\n"
	      "  experiment NAME   a seed's before and after policies side by side, with plots\n"
	      "  help              this text; 'vnic bench --help' for the options of bench\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "bench"))
		return vnic_cmd_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "experiment"))
		return vnic_cmd_experiment(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return vnic_cmd_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "link"))
		return vnic_cmd_link(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "vnic: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
