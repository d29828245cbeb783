// SPDX-License-Identifier: MIT
/*
 * `vnic bench rr|stream`: run a built-in workload across the embedded
 * topology for a while and report rate, latency, CPU and the key counters.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "pcap_int.h"

enum {
	OPT_SESSIONS = 256, OPT_FLOWS, OPT_SIZE, OPT_REQ_SIZE, OPT_RESP_SIZE, OPT_DURATION,
	OPT_IPV6, OPT_NO_CSUM, OPT_TSQ, OPT_WINDOW, OPT_TRACE, OPT_REPEAT, OPT_COMPARE,
	OPT_NAME, OPT_NO_CTL, OPT_SAMPLE_MS, OPT_SAMPLES, OPT_SPLIT, OPT_SERVER, OPT_RECONNECT,
	OPT_PCAP, /* then the other pcap options, in vnic_arg_pcap's order */
	OPT_PCAP_END = OPT_PCAP + VNIC_PCAP_OPTS,
};

/* bench's own options; the vNIC's come from the shared table (opts.c). */
static const struct option own_opts[] = {
	{ "sessions", required_argument, NULL, OPT_SESSIONS },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "req-size", required_argument, NULL, OPT_REQ_SIZE },
	{ "resp-size", required_argument, NULL, OPT_RESP_SIZE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "no-csum", no_argument, NULL, OPT_NO_CSUM },
	{ "split", no_argument, NULL, OPT_SPLIT },
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "reconnect-timeout", required_argument, NULL, OPT_RECONNECT },
	{ "tsq-bytes", required_argument, NULL, OPT_TSQ },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "no-ctl", no_argument, NULL, OPT_NO_CTL },
	{ "sample-ms", required_argument, NULL, OPT_SAMPLE_MS },
	{ "samples", required_argument, NULL, OPT_SAMPLES },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "snaplen", required_argument, NULL, OPT_PCAP + 1 },
	{ "pcap-count", required_argument, NULL, OPT_PCAP + 2 },
	{ "pcap-lossless", no_argument, NULL, OPT_PCAP + 3 },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	struct vnic_bench_opts def;

	vnic_bench_opts_default(&def, VNIC_WL_RR);
	fputs("usage: vnic bench rr|stream [options]\n"
	      "workload:\n"
	      "  --sessions N        rr sessions, one transaction outstanding each (1)\n"
	      "  --flows N           stream flows (1)\n"
	      "  --size N            rr request and response size / stream bytes per flow\n"
	      "                      (stream: the run ends when every flow has sent it;\n"
	      "                      0 = until the duration ends) (rr: 1, stream: 0)\n"
	      "  --req-size N, --resp-size N\n"
	      "  --duration S        seconds of traffic (5)\n"
	      "  --ipv6              IPv6 instead of IPv4\n"
	      "  --tsq-bytes N       per-flow bytes between xmit and tx completion (262144)\n"
	      "  --window N          per-connection window (1048576)\n"
	      "  --no-csum           the host sends complete checksums\n"
	      "  --split             the devices and the cable in a server process of their\n"
	      "                      own: the hcalls cross shared memory and eventfds (a\n"
	      "                      stream: add --rx-entries 2048, docs/BENCHMARKS.md)\n"
	      "  --server PATH       as --split, the server a standing 'vnic server --listen\n"
	      "                      PATH' rather than a process forked for the run\n"
	      "  --reconnect-timeout S  --server: how long to try to reach a server that\n"
	      "                      went away before the run fails (30)\n"
	      "queues: --queues N runs queue pair q of both vNICs on thread q over cable ring q,\n"
	      "  a host of the workload on each: the sessions (flows) are split in blocks, so\n"
	      "  --sessions N (--flows N) or more use every queue pair (N at most the cpus; not\n"
	      "  with --split, --pcap or --threads 1, where the queues stay on the sides'\n"
	      "  threads and the flows are hashed over them; a line says why)\n",
	      f);
	vnic_topo_opts_usage(f, VNIC_OPTG_ALL, &def.topo);
	fputs("comparisons (docs/BENCHMARKS.md, \"Comparing policies\"):\n"
	      "  --compare NAME=A,B[,C...]   one case per value of any option above, the cases\n"
	      "                      alternating round by round; medians, spread, the ratio\n"
	      "                      to the first with a 95% interval, and a verdict\n"
	      "  --repeat N          rounds of every case (--compare: 5), 1..100; alone: the one\n"
	      "                      case N times. Rounds last --duration, 1 s unless given\n"
	      "output:\n"
	      "  --json              one JSON object on stdout (docs/BENCH_JSON.md)\n"
	      "  --quiet             no interval lines on stderr\n"
	      "  --trace             time the datapath functions; nested report (docs/TRACING.md)\n"
	      "  --sample-ms N       sample BQL, queue depths and throughput every N ms (0 = off)\n"
	      "  --samples FILE.csv  write the samples there (sampling every 10 ms unless set)\n"
	      "  --pcap FILE         write every frame on the cable, both ways, to FILE (pcap)\n"
	      "  --snaplen N         bytes kept of each frame (default: whole frames)\n"
	      "  --pcap-count N      stop capturing after N frames\n"
	      "  --pcap-lossless     slow the cable down rather than leave frames out\n"
	      "control socket (docs/STATS.md; 'vnic stats' reads it):\n"
	      "  --name NAME         instance name (bench-PID)   --no-ctl  no control socket\n",
	      f);
}

/*
 * While parsing: the options (first, as the parser sets --quiet and --json
 * in them), and whether --sample-ms was given (--samples alone turns it on).
 */
struct bench_parse {
	struct vnic_bench_opts o;
	bool sample_ms_set;
	bool duration_set;
	bool reconnect_set;
};

static int parse_opt(void *ctx, int c, const char *a)
{
	struct bench_parse *p = ctx;
	struct vnic_bench_opts *o = &p->o;
	uint64_t v;
	double secs;
	int err = 0;

	switch (c) {
	case OPT_SESSIONS:
		err = vnic_arg_u64("--sessions", a, 1, VNIC_WORK_MAX_CONNS, &v);
		o->rr.sessions = (unsigned int)v;
		break;
	case OPT_FLOWS:
		err = vnic_arg_u64("--flows", a, 1, VNIC_WORK_MAX_CONNS, &v);
		o->st.flows = (unsigned int)v;
		break;
	case OPT_SIZE:
		err = vnic_arg_u64("--size", a, 0, UINT64_MAX / 2, &v);
		if (!err && o->wl == VNIC_WL_RR && (v == 0 || v > (1u << 20))) {
			fprintf(stderr, "vnic: --size: rr messages are 1..1048576 bytes\n");
			err = -EINVAL;
		}
		o->rr.req_size = o->rr.resp_size = (uint32_t)v;
		o->st.bytes = v;
		break;
	case OPT_REQ_SIZE:
		err = vnic_arg_u32("--req-size", a, 1, 1u << 20, &o->rr.req_size);
		break;
	case OPT_RESP_SIZE:
		err = vnic_arg_u32("--resp-size", a, 1, 1u << 20, &o->rr.resp_size);
		break;
	case OPT_DURATION:
		err = vnic_arg_double("--duration", a, 0.05, 86400, &o->duration_s);
		p->duration_set = true;
		break;
	case OPT_IPV6:
		o->rr.tcp.ipv6 = o->st.tcp.ipv6 = true;
		break;
	case OPT_NO_CSUM:
		o->rr.tcp.no_csum_offload = o->st.tcp.no_csum_offload = true;
		break;
	case OPT_SPLIT:
		o->topo.split = true;
		break;
	case OPT_SERVER:
		err = vnic_arg_path("--server", a);
		o->topo.split = true;
		o->topo.server_path = a;
		break;
	case OPT_RECONNECT:
		err = vnic_arg_double("--reconnect-timeout", a, 0.01, 86400, &secs);
		o->topo.reconnect_timeout_ns = (uint64_t)(secs * 1e9);
		p->reconnect_set = true;
		break;
	case OPT_TSQ:
		err = vnic_arg_u32("--tsq-bytes", a, 1, 1u << 30, &o->st.tcp.tsq_bytes);
		o->rr.tcp.tsq_bytes = o->st.tcp.tsq_bytes;
		break;
	case OPT_WINDOW:
		err = vnic_arg_u32("--window", a, 1, 1u << 30, &o->st.tcp.window);
		o->rr.tcp.window = o->st.tcp.window;
		break;
	case OPT_TRACE:
		o->trace = true;
		break;
	case OPT_NAME:
		err = vnic_arg_ctl_name("--name", a);
		o->ctl_name = a;
		break;
	case OPT_NO_CTL:
		o->ctl = false;
		break;
	case OPT_SAMPLE_MS:
		err = vnic_arg_u32("--sample-ms", a, 0, 60000, &o->sample_ms);
		p->sample_ms_set = true;
		break;
	case OPT_SAMPLES:
		o->samples_path = a;
		err = vnic_arg_path("--samples", a);
		break;
	case OPT_PCAP:
	case OPT_PCAP + 1:
	case OPT_PCAP + 2:
	case OPT_PCAP + 3:
		err = vnic_arg_pcap((unsigned int)(c - OPT_PCAP), a, &o->pcap);
		break;
	case OPT_REPEAT:
		err = vnic_arg_u64("--repeat", a, 1, VNIC_CMP_MAX_ROUNDS, &v);
		o->repeat = (unsigned int)v;
		break;
	case OPT_COMPARE:
		if (o->compare) {
			fputs("vnic: --compare: one option at a time\n", stderr);
			err = -EINVAL;
		}
		o->compare = a;
		break;
	default:
		err = vnic_topo_opt_parse(c, a, &o->topo, NULL);
		break;
	}
	return err;
}

void vnic_bench_opts_default(struct vnic_bench_opts *o, enum vnic_workload wl)
{
	memset(o, 0, sizeof(*o));
	o->wl = wl;
	vnic_topo_config_default(&o->topo);
	o->duration_s = 5;
	o->rr.sessions = 1;
	o->rr.req_size = o->rr.resp_size = 1;
	o->st.flows = 1;
}

/* What the options imply for each other, once all are read. 0 or -EINVAL. */
static int settle(struct vnic_bench_opts *o, bool sample_ms_set, bool duration_set)
{
	if (o->repeat || o->compare) {
		if (o->trace || o->samples_path || o->sample_ms || o->ctl_name || o->pcap.path) {
			fputs("vnic bench: --trace, --samples, --sample-ms, --pcap and --name are "
			      "for one run, not for --repeat or --compare\n",
			      stderr);
			return -EINVAL;
		}
		if (!o->repeat)
			o->repeat = VNIC_CMP_DEFAULT_ROUNDS;
		if (!duration_set)
			o->duration_s = VNIC_CMP_DEFAULT_ROUND_S;
	}
	/* A vNIC without TSO makes both hosts send MSS frames. */
	if (!o->topo.drv.tso)
		o->rr.tcp.no_tso = o->st.tcp.no_tso = true;
	if (o->topo.drv.tso && !o->topo.drv.csum)
		o->topo.drv.tso = false;
	if (o->samples_path && !sample_ms_set)
		o->sample_ms = 10;
	if (o->samples_path && !o->sample_ms) {
		fputs("vnic bench: --samples needs sampling on (--sample-ms above 0)\n", stderr);
		return -EINVAL;
	}
	if (vnic_pcap_opts_check("vnic bench", &o->pcap, o->topo.cable.tso))
		return -EINVAL;
	if (o->topo.split && (o->trace || o->sample_ms || o->pcap.path)) {
		fputs("vnic bench: --trace, --sample-ms, --samples and --pcap look into the "
		      "devices, which --split puts in another process\n",
		      stderr);
		return -EINVAL;
	}
	return vnic_opts_check_ctl("vnic bench", o->ctl_name, o->ctl);
}

static const struct vnic_opts_cmd bench_cmd = {
	"vnic bench", own_opts, VNIC_OPTG_ALL, usage, offsetof(struct bench_parse, o.quiet),
	offsetof(struct bench_parse, o.json), parse_opt,
};

int vnic_bench_parse(int argc, char **argv, struct vnic_bench_opts *o)
{
	struct bench_parse p = { .sample_ms_set = false, .duration_set = false,
				 .reconnect_set = false };
	int err;

	vnic_bench_opts_default(o, VNIC_WL_RR);
	/* The command serves its counters; library users (tests, experiments) opt in. */
	o->ctl = true;
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && !strcmp(argv[1], "--help")) {
			usage(stdout);
			return 1;
		}
		fputs("vnic bench: which workload? rr or stream\n", stderr);
		usage(stderr);
		return -EINVAL;
	}
	if (!strcmp(argv[1], "rr")) {
		o->wl = VNIC_WL_RR;
	} else if (!strcmp(argv[1], "stream")) {
		o->wl = VNIC_WL_STREAM;
	} else {
		fprintf(stderr, "vnic bench: unknown workload '%s' (rr, stream)\n", argv[1]);
		return -EINVAL;
	}
	/* The workload stands where getopt expects the program's name. */
	p.o = *o;
	err = vnic_opts_parse(&bench_cmd, argc - 1, argv + 1, &p);
	*o = p.o;
	if (!err && p.reconnect_set && !o->topo.server_path) {
		fputs("vnic bench: --reconnect-timeout is for a client of a standing server "
		      "(--server PATH)\n", stderr);
		return -EINVAL;
	}
	return err ? err : settle(o, p.sample_ms_set, p.duration_set);
}

enum { NPOLICIES = 16 };

/* Sum over queues and both sides of a per-queue driver counter: dir "tx"/"rx", name after "txN_". */
static uint64_t sum_q(const struct vnic_topo *t, const char *dir, const char *name)
{
	char full[VNIC_COUNTER_NAME_MAX + 16];
	uint64_t sum = 0;

	for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
		for (const char *side = "ab"; *side; side++) {
			snprintf(full, sizeof(full), "drv_%c.%s%u_%s", *side, dir, q, name);
			sum += vnic_topo_counter(t, full);
		}
	}
	return sum;
}

struct key_counter {
	const char *label;
	const char *dir;
	const char *name;
};

static const struct key_counter key_counters[] = {
	{ "direct sends", "tx", "direct_packets" },
	{ "batched (indirect) packets", "tx", "batched_packets" },
	{ "indirect flushes", "tx", "indirect_flushes" },
	{ "header descriptors", "tx", "hdr_descs" },
	{ "software checksums", "tx", "csum_sw" },
	{ "tx completion rounds", "tx", "completion_rounds" },
	{ "BQL completed calls", "tx", "bql_completed_calls" },
	{ "queue stops", "tx", "stops" },
	{ "rx interrupts", "rx", "interrupts" },
	{ "NAPI polls", "rx", "polls" },
	{ "replenish calls", "rx", "replenish_calls" },
	{ "GRO merged", "rx", "gro_merged" },
	{ "list batches", "rx", "list_batches" },
};

/* Every cpu thread of the run, named as its counters are (cpu_a., cpu_q2.): at least the sides'. */
static unsigned int report_threads(const struct vnic_bench_run *r)
{
	unsigned int n = r->nthreads < VNIC_MAX_QUEUES ? r->nthreads : VNIC_MAX_QUEUES;

	return n < VNIC_TOPO_SIDES ? VNIC_TOPO_SIDES : n;
}

/* "(threads a X s, b Y s, q2 Z s, of which spin ...; work turns ...)", a figure per thread. */
static void print_thread_cpu(const struct vnic_bench_run *r, FILE *f)
{
	unsigned int i, n = report_threads(r);

	fputs("(threads", f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %s %.3f s", i ? "," : "", vnic_bench_thread_name(i),
			r->thread_cpu_s[i]);
	fputs(", of which spin", f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %.3f s", i ? "," : "", r->spin_cpu_s[i]);
	fputs("; work turns", f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %.3f s", i ? "," : "", r->work_turn_s[i]);
	fputs(")\n", f);
}

/* "wake-ups cpu a / b / q2    N / M / K": each thread's cpu_X.wakeups. */
static void print_wakeups(const struct vnic_bench_run *r, FILE *f)
{
	unsigned int i, n = report_threads(r);
	char label[128] = "wake-ups cpu", name[32];
	size_t at = strlen(label);

	for (i = 0; i < n && at < sizeof(label); i++)
		at += (size_t)snprintf(label + at, sizeof(label) - at, "%s %s", i ? " /" : "",
				       vnic_bench_thread_name(i));
	fprintf(f, "    %-28s", label);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "cpu_%s.wakeups", vnic_bench_thread_name(i));
		fprintf(f, i ? " / %" PRIu64 : " %12" PRIu64, vnic_topo_counter(&r->topo, name));
	}
	fputc('\n', f);
}

static void print_text(const struct vnic_bench_run *r, FILE *f)
{
	const struct vnic_bench_opts *o = r->o;
	const struct vnic_topo *t = &r->topo;
	struct vnic_work_summary s;
	struct vnic_kv kv[NPOLICIES];
	static struct vnic_counter all[4096];
	unsigned int n, i, np;

	vnic_work_summarize(&r->res, r->elapsed_ns, &s);
	np = vnic_topo_policies(&o->topo, kv, NPOLICIES);
	if (o->wl == VNIC_WL_RR)
		fprintf(f,
			"vnic bench rr: %u sessions, %u/%u bytes, %.1f s, MTU %u, %u queue(s)%s\n",
			o->rr.sessions, o->rr.req_size, o->rr.resp_size, s.seconds, o->topo.drv.mtu,
			o->topo.drv.tx_queues, t->spread ? ", a thread each" : "");
	else
		fprintf(f, "vnic bench stream: %u flow(s), %.1f s, MTU %u, %u queue(s)%s\n",
			o->st.flows, s.seconds, o->topo.drv.mtu, o->topo.drv.tx_queues,
			t->spread ? ", a thread each" : "");
	vnic_machine_print(f, &r->machine, o->cmdline);
	fprintf(f, "  policies:");
	for (i = 0; i < np && i < NPOLICIES; i++)
		fprintf(f, " %s=%s", kv[i].key, kv[i].value);
	fprintf(f,
		"\n  cost model (ns): direct %" PRIu64 " indirect %" PRIu64 " crq %" PRIu64
		" dma/KiB %" PRIu64 " irq %" PRIu64 "\n",
		o->topo.cost.hcall_direct_ns, o->topo.cost.hcall_indirect_ns,
		o->topo.cost.hcall_crq_ns, o->topo.cost.dma_ns_per_kib, o->topo.cost.irq_ns);
	if (o->wl == VNIC_WL_RR) {
		fprintf(f, "  rate      %12.0f transactions/s  (%" PRIu64 " in all)\n", s.tps,
			r->res.transactions);
		fprintf(f, "  latency   p50 %.1f us  p99 %.1f us  p99.9 %.1f us\n",
			s.lat_p50_ns / 1e3, s.lat_p99_ns / 1e3, s.lat_p999_ns / 1e3);
		fprintf(f, "  work cpu  %.0f ns per transaction  ", vnic_bench_work_ns_per_txn(r));
		print_thread_cpu(r, f);
		fprintf(f, "  cpu       %.3f s, whole process  (%.2f us per transaction)\n",
			r->cpu_s, r->res.transactions ? r->cpu_s * 1e6 / r->res.transactions : 0);
	} else {
		fprintf(f, "  rate      %12.3f Gbit/s of payload  (%" PRIu64 " bytes)\n", s.gbps,
			r->res.bytes);
		fprintf(f, "  work cpu  %.0f ns per GB  ", vnic_bench_work_ns_per_gb(r));
		print_thread_cpu(r, f);
		fprintf(f, "  cpu       %.3f s, whole process  (%.3f s per GB)\n", r->cpu_s,
			r->res.bytes ? r->cpu_s / (r->res.bytes / 1e9) : 0);
	}
	fprintf(f,
		"  errors    payload %" PRIu64 "  bad csum %" PRIu64 "  lost %" PRIu64
		"  retransmits %" PRIu64 "  tx dropped %" PRIu64 "\n",
		r->res.err.payload, r->res.err.bad_csum, r->res.err.lost, r->res.err.retransmits,
		r->res.err.tx_dropped);
	fprintf(f,
		"  recovery  fast retransmits %" PRIu64 "  sack recovered %" PRIu64
		"  probes %" PRIu64 "  timeouts %" PRIu64 "  spurious %" PRIu64 "\n",
		r->res.err.fast_retransmits, r->res.err.sack_recovered, r->res.err.probes,
		r->res.err.timeouts, r->res.err.spurious);
	fprintf(f, "  pools     %s after quiesce\n", r->pools_full ? "full" : "NOT FULL");
	if (r->sampler)
		fprintf(f, "  samples   %zu every %" PRIu32 " ms%s%s\n", r->series.count,
			o->sample_ms, o->samples_path ? " -> " : "",
			o->samples_path ? o->samples_path : "");
	if (r->pcap) {
		struct vnic_pcap_stats ps;

		vnic_pcap_stats(r->pcap, &ps);
		fprintf(f, "  pcap      %" PRIu64 " frames -> %s, %" PRIu64 " left out (ring full)",
			ps.written, o->pcap.path, ps.left_out);
		if (o->pcap.lossless)
			fprintf(f, "; the cable waited %" PRIu64 " times, %.3f s", ps.waits,
				ps.wait_ns / 1e9);
		fputc('\n', f);
	}
	fprintf(f, "  counters (both sides):\n");
	for (i = 0; i < sizeof(key_counters) / sizeof(key_counters[0]); i++)
		fprintf(f, "    %-28s %12" PRIu64 "\n", key_counters[i].label,
			sum_q(t, key_counters[i].dir, key_counters[i].name));
	fprintf(f, "    %-28s %12" PRIu64 " / %" PRIu64 "\n", "BQL limit a / b",
		vnic_topo_counter(t, "drv_a.tx0_bql_limit"),
		vnic_topo_counter(t, "drv_b.tx0_bql_limit"));
	print_wakeups(r, f);
	fprintf(f, "    %-28s %12" PRIu64 "\n", "hcalls direct",
		vnic_topo_counter(t, "hv_a.send_subcrq") +
			vnic_topo_counter(t, "hv_b.send_subcrq"));
	fprintf(f, "    %-28s %12" PRIu64 "\n", "hcalls indirect",
		vnic_topo_counter(t, "hv_a.send_subcrq_indirect") +
			vnic_topo_counter(t, "hv_b.send_subcrq_indirect"));
	/* Every drop, whatever its layer, when it happened. */
	n = vnic_topo_counters(t, all, 4096);
	for (i = 0; i < n && i < 4096; i++)
		if (all[i].value && (strstr(all[i].name, "drop") || strstr(all[i].name, "bad_")) &&
		    strncmp(all[i].name, "cable.ring", 10))	/* a ring's: in the sums */
			fprintf(f, "    %-40s %12" PRIu64 "\n", all[i].name, all[i].value);
}

/*
 * "trace": [ {row}, ... ]. The writer has no arrays, so the brackets are put
 * here, laid out as it lays out objects.
 */
static void json_trace(struct vnic_json *j)
{
	unsigned int n = vnic_trace_rows(NULL, 0), got = 0, i;
	struct vnic_trace_row *rows = n ? calloc(n, sizeof(*rows)) : NULL;

	/* Tracing may still add paths between the two calls: use what fitted. */
	if (rows) {
		got = vnic_trace_rows(rows, n);
		if (got > n)
			got = n;
	}
	vnic_json_array(j, "trace");
	for (i = 0; i < got; i++) {
		vnic_json_object(j, NULL);
		vnic_json_str(j, "name", rows[i].name);
		vnic_json_str(j, "parent", rows[i].parent);
		vnic_json_u64(j, "depth", rows[i].depth);
		vnic_json_u64(j, "hits", rows[i].hits);
		vnic_json_u64(j, "total_ns", rows[i].total_ns);
		vnic_json_u64(j, "avg_ns", rows[i].avg_ns);
		vnic_json_close(j);
	}
	vnic_json_array_close(j);
	free(rows);
}

static void json_intervals(struct vnic_json *j, const struct vnic_bench_run *r)
{
	vnic_json_array(j, "intervals");
	for (size_t i = 0; i < r->nintervals; i++) {
		const struct vnic_bench_interval *iv = &r->intervals[i];

		vnic_json_object(j, NULL);
		vnic_json_double(j, "t_s", iv->t_s);
		vnic_json_double(j, "dt_s", iv->dt_s);
		vnic_json_u64(j, "transactions", iv->transactions);
		vnic_json_u64(j, "bytes", iv->bytes);
		vnic_json_double(j, "tps", vnic_bench_interval_tps(iv));
		vnic_json_double(j, "gbps", vnic_bench_interval_gbps(iv));
		vnic_json_u64(j, "errors", iv->errors);
		vnic_json_close(j);
	}
	vnic_json_array_close(j);
}

/* Each cpu thread's name and figures, in the same order: a, b, then q2... */
static void json_threads(struct vnic_json *j, const struct vnic_bench_run *r)
{
	unsigned int i, n = report_threads(r);

	vnic_json_array(j, "thread_names");
	for (i = 0; i < n; i++)
		vnic_json_str(j, NULL, vnic_bench_thread_name(i));
	vnic_json_array_close(j);
	vnic_json_array(j, "thread_cpu_s");
	for (i = 0; i < n; i++)
		vnic_json_double(j, NULL, r->thread_cpu_s[i]);
	vnic_json_array_close(j);
	vnic_json_array(j, "spin_cpu_s");
	for (i = 0; i < n; i++)
		vnic_json_double(j, NULL, r->spin_cpu_s[i]);
	vnic_json_array_close(j);
	vnic_json_array(j, "work_turn_s");
	for (i = 0; i < n; i++)
		vnic_json_double(j, NULL, r->work_turn_s[i]);
	vnic_json_array_close(j);
}

static void print_json(const struct vnic_bench_run *r, FILE *f)
{
	const struct vnic_bench_opts *o = r->o;
	struct vnic_work_summary s;
	struct vnic_kv kv[NPOLICIES];
	static struct vnic_counter all[4096];
	struct vnic_json j;
	unsigned int n, i, np;

	vnic_work_summarize(&r->res, r->elapsed_ns, &s);
	np = vnic_topo_policies(&o->topo, kv, NPOLICIES);
	vnic_json_begin(&j, f);
	vnic_json_str(&j, "workload", o->wl == VNIC_WL_RR ? "rr" : "stream");
	vnic_machine_json(&j, &r->machine, o->cmdline);
	if (o->wl == VNIC_WL_RR) {
		vnic_json_u64(&j, "sessions", o->rr.sessions);
		vnic_json_u64(&j, "req_size", o->rr.req_size);
		vnic_json_u64(&j, "resp_size", o->rr.resp_size);
	} else {
		vnic_json_u64(&j, "flows", o->st.flows);
	}
	vnic_json_double(&j, "duration_s", s.seconds);
	vnic_json_u64(&j, "mtu", o->topo.drv.mtu);
	vnic_json_u64(&j, "queues", o->topo.drv.tx_queues);
	vnic_json_u64(&j, "queue_threads", r->topo.spread);
	vnic_json_u64(&j, "transactions", r->res.transactions);
	vnic_json_double(&j, "rate_tps", s.tps);
	vnic_json_u64(&j, "bytes", r->res.bytes);
	vnic_json_double(&j, "gbps", s.gbps);
	vnic_json_object(&j, "latency_us");
	vnic_json_double(&j, "p50", s.lat_p50_ns / 1e3);
	vnic_json_double(&j, "p99", s.lat_p99_ns / 1e3);
	vnic_json_double(&j, "p999", s.lat_p999_ns / 1e3);
	vnic_json_double(&j, "mean", s.lat_mean_ns / 1e3);
	vnic_json_close(&j);
	vnic_json_double(&j, "cpu_s", r->cpu_s);
	json_threads(&j, r);
	vnic_json_double(&j, "work_cpu_s", vnic_bench_work_cpu_s(r));
	vnic_json_double(&j, "work_cpu_ns_per_txn", vnic_bench_work_ns_per_txn(r));
	vnic_json_double(&j, "work_cpu_ns_per_gb", vnic_bench_work_ns_per_gb(r));
	vnic_json_bool(&j, "pools_full", r->pools_full);
	vnic_json_str(&j, "close_error", r->close_err ? strerror(-r->close_err) : "");
	vnic_json_object(&j, "errors");
	vnic_json_u64(&j, "payload", r->res.err.payload);
	vnic_json_u64(&j, "bad_csum", r->res.err.bad_csum);
	vnic_json_u64(&j, "lost", r->res.err.lost);
	vnic_json_u64(&j, "ooo", r->res.err.ooo);
	vnic_json_u64(&j, "ooo_dropped", r->res.err.ooo_dropped);
	vnic_json_u64(&j, "dup", r->res.err.dup);
	vnic_json_u64(&j, "retransmits", r->res.err.retransmits);
	vnic_json_u64(&j, "fast_retransmits", r->res.err.fast_retransmits);
	vnic_json_u64(&j, "sack_recovered", r->res.err.sack_recovered);
	vnic_json_u64(&j, "probes", r->res.err.probes);
	vnic_json_u64(&j, "spurious", r->res.err.spurious);
	vnic_json_u64(&j, "timeouts", r->res.err.timeouts);
	vnic_json_u64(&j, "bad_hdr", r->res.err.bad_hdr);
	vnic_json_u64(&j, "no_conn", r->res.err.no_conn);
	vnic_json_u64(&j, "tx_dropped", r->res.err.tx_dropped);
	vnic_json_close(&j);
	vnic_json_object(&j, "policies");
	for (i = 0; i < np && i < NPOLICIES; i++)
		vnic_json_str(&j, kv[i].key, kv[i].value);
	vnic_json_close(&j);
	vnic_json_object(&j, "cost_model_ns");
	vnic_json_u64(&j, "hcall_direct", o->topo.cost.hcall_direct_ns);
	vnic_json_u64(&j, "hcall_indirect", o->topo.cost.hcall_indirect_ns);
	vnic_json_u64(&j, "hcall_crq", o->topo.cost.hcall_crq_ns);
	vnic_json_u64(&j, "dma_per_kib", o->topo.cost.dma_ns_per_kib);
	vnic_json_u64(&j, "irq", o->topo.cost.irq_ns);
	vnic_json_close(&j);
	vnic_json_object(&j, "cable");
	vnic_json_u64(&j, "rate_bps", o->topo.cable.rate_bps);
	vnic_json_u64(&j, "delay_ns", o->topo.cable.delay_ns);
	vnic_json_double(&j, "loss", o->topo.cable.loss);
	vnic_json_double(&j, "reorder", o->topo.cable.reorder);
	vnic_json_double(&j, "corrupt", o->topo.cable.corrupt);
	vnic_json_close(&j);
	vnic_json_object(&j, "counters");
	vnic_json_u64(&j, "work.tx_pkts", r->res.tx_pkts);
	vnic_json_u64(&j, "work.tx_segs", r->res.tx_segs);
	vnic_json_u64(&j, "work.rx_pkts", r->res.rx_pkts);
	vnic_json_u64(&j, "work.rx_segs", r->res.rx_segs);
	vnic_json_u64(&j, "work.tsq_throttled", r->res.tsq_throttled);
	vnic_json_u64(&j, "work.tsq_max", r->res.tsq_max);
	n = vnic_topo_counters(&r->topo, all, 4096);
	for (i = 0; i < n && i < 4096; i++)
		vnic_json_u64(&j, all[i].name, all[i].value);
	if (r->pcap) {
		n = vnic_pcap_counters(r->pcap, all, 4096);
		for (i = 0; i < n && i < 4096; i++) {
			char name[VNIC_COUNTER_NAME_MAX + 8];

			snprintf(name, sizeof(name), "pcap.%.*s", VNIC_COUNTER_NAME_MAX - 1, all[i].name);
			vnic_json_u64(&j, name, all[i].value);
		}
	}
	vnic_json_close(&j);
	if (r->pcap) {
		struct vnic_pcap_stats ps;

		vnic_pcap_stats(r->pcap, &ps);
		vnic_json_object(&j, "pcap");
		vnic_json_str(&j, "file", o->pcap.path);
		vnic_json_u64(&j, "written", ps.written);
		vnic_json_u64(&j, "left_out", ps.left_out);
		vnic_json_close(&j);
	}
	json_intervals(&j, r);
	if (o->trace)
		json_trace(&j);
	vnic_json_end(&j);
}

void vnic_bench_report(const struct vnic_bench_run *r, FILE *f)
{
	if (r->o->json)
		print_json(r, f);
	else
		print_text(r, f);
}

static void interrupted(int sig)
{
	(void)sig;
	vnic_bench_interrupt();
}

/*
 * The first Ctrl-C ends the run early (the report covers what ran, and the
 * control socket is removed); a second one kills as usual.
 */
static void on_interrupt(void)
{
	struct sigaction sa = { .sa_handler = interrupted, .sa_flags = (int)SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int vnic_cmd_bench(int argc, char **argv)
{
	struct vnic_bench_opts o;
	struct vnic_bench_run *r;
	FILE *samples = NULL;
	char *cmdline;
	int err, ret = 1;

	err = vnic_bench_parse(argc, argv, &o);
	if (err > 0)
		return 0;
	if (err)
		return 2;
	o.cmdline = cmdline = vnic_cmdline(argc, argv);
	on_interrupt();
	if (o.repeat) {
		err = vnic_bench_compare(&o, o.compare, o.repeat);
		free(cmdline);
		return err ? 1 : 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		fputs("vnic bench: out of memory\n", stderr);
		free(cmdline);
		return 1;
	}
	r->o = &o;
	/* Every output is opened before the run: a bad path fails now, not after it. */
	if (o.samples_path) {
		samples = vnic_out_open("vnic bench", "--samples", o.samples_path);
		if (!samples)
			goto out;
	}
	if (o.pcap.path) {
		if (!vnic_pcap_supported()) {
			fputs("vnic bench: --pcap: vnic was built without libpcap (apt-get install "
			      "libpcap-dev, rebuild)\n", stderr);
			goto out;
		}
		r->pcap_file = vnic_out_open_mode("vnic bench", "--pcap", o.pcap.path, true);
		if (!r->pcap_file)
			goto out;
	}
	err = vnic_bench_run(r);
	if (!err && r->machine.busy)
		fprintf(stderr, "vnic bench: WARNING: other processes used %.2f cpus on average "
				"during the run (steal %.1f %%): these figures are not to be trusted\n",
			r->machine.others_cpus, r->machine.steal_pct);
	if (!err) {
		vnic_bench_report(r, stdout);
		if (!o.json && o.trace) {
			putchar('\n');
			vnic_trace_report(stdout);
		}
		if (samples) {
			err = vnic_series_write_csv_file(&r->series, samples);
			if (fclose(samples) && !err)
				err = -errno;
			samples = NULL;
			if (err)
				fprintf(stderr, "vnic bench: writing %s: %s\n", o.samples_path,
					strerror(-err));
		}
	}
	/*
	 * The figures stand (the traffic had ended), but a driver that did not
	 * close left something behind: a script must not take the run for clean.
	 */
	if (!err && r->close_err) {
		fprintf(stderr, "vnic bench: the drivers did not close: %s\n",
			strerror(-r->close_err));
		err = r->close_err;
	}
	ret = err ? 1 : 0;
out:
	if (samples)
		fclose(samples);
	vnic_bench_cleanup(r);
	free(r);
	free(cmdline);
	return ret;
}
