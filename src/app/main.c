// SPDX-License-Identifier: MIT
/* The `vnic` command: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "version.h"

static void usage(FILE *f)
{
	fputs("usage: vnic <command> [options]\n"
	      "commands:\n"
	      "  bench rr|stream   run a built-in workload across two vNICs on an in-process cable\n"
	      "  stats [NAME]      the counters of a running bench or link (--json, --watch)\n"
	      "  show [NAME]       what a running bench or link negotiated, and its settings\n"
	      "  set NAME K V...   change a running bench or link: policies, cable, mtu, faults\n"
	      "  link              two network namespaces joined by vnic, for real traffic (root)\n"
	      "  server            a standing server many 'vnic bench --server' clients attach to\n"
	      "  experiment NAME   a patch's before and after policies side by side, with plots\n"
	      "  version           the version and the git commit vnic was built from\n"
	      "  help              this text; 'vnic COMMAND --help' for the options of a command,\n"
	      "                    'man vnic' for all of them\n"
	      "options:\n"
	      "  --version         the same as 'vnic version'\n",
	      f);
}

static const char version_usage[] =
	"usage: vnic version   (or vnic --version)\n"
	"prints \"vnic VERSION (git COMMIT)\": COMMIT is the abbreviated git commit the\n"
	"binary was built from, with -dirty if tracked files had uncommitted changes,\n"
	"or unknown when it was built outside a git checkout\n";

/* `vnic version` takes no options; --help is accepted as everywhere else. */
static int cmd_version(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			fputs(version_usage, stdout);
			return 0;
		}
		fprintf(stderr, "vnic version: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	puts(vnic_version_string());
	return 0;
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
	if (!strcmp(argv[1], "show"))
		return vnic_cmd_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "set"))
		return vnic_cmd_set(argc - 1, argv + 1);
	if (!strcmp(argv[1], "link"))
		return vnic_cmd_link(argc - 1, argv + 1);
	if (!strcmp(argv[1], "server"))
		return vnic_cmd_server(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "vnic: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
