// SPDX-License-Identifier: MIT
/*
 * `vnic bench rr|stream`: run a built-in workload across the embedded
 * topology for a while and report rate, latency, CPU and the key counters.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app.h"


enum {
	OPT_SESSIONS = 256, OPT_FLOWS, OPT_SIZE, OPT_REQ_SIZE, OPT_RESP_SIZE, OPT_DURATION,
	OPT_QUEUES, OPT_MTU, OPT_ENTRIES, OPT_RX_ENTRIES, OPT_IND_DESCS, OPT_IPV6, OPT_NO_TSO,
	OPT_NO_CSUM, OPT_TSQ, OPT_WINDOW, OPT_BUSY_POLL, OPT_JSON, OPT_QUIET,
	OPT_RX_REPLENISH, OPT_TX_HDR_BUILD, OPT_TX_SUBMIT, OPT_BQL_COMPLETE, OPT_TX_CSUM,
	OPT_RX_DELIVER, OPT_TX_RECLAIM, OPT_RECLAIM_US, OPT_NO_BQL,
	OPT_HDR_MASK, OPT_DROP_MISSING, OPT_DEV_QUEUES,
	OPT_COST_DIRECT, OPT_COST_INDIRECT, OPT_COST_CRQ, OPT_COST_DMA, OPT_COST_IRQ,
	OPT_RATE, OPT_DELAY, OPT_LOSS, OPT_REORDER, OPT_CORRUPT, OPT_SEED, OPT_HELP,
	OPT_TRACE, OPT_NAME, OPT_NO_CTL, OPT_SAMPLE_MS, OPT_SAMPLES,
};

static const struct option long_opts[] = {
	{ "sessions", required_argument, NULL, OPT_SESSIONS },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "req-size", required_argument, NULL, OPT_REQ_SIZE },
	{ "resp-size", required_argument, NULL, OPT_RESP_SIZE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "tx-entries", required_argument, NULL, OPT_ENTRIES },
	{ "rx-entries", required_argument, NULL, OPT_RX_ENTRIES },
	{ "ind-descs", required_argument, NULL, OPT_IND_DESCS },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "no-tso", no_argument, NULL, OPT_NO_TSO },
	{ "no-csum", no_argument, NULL, OPT_NO_CSUM },
	{ "tsq-bytes", required_argument, NULL, OPT_TSQ },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "busy-poll-us", required_argument, NULL, OPT_BUSY_POLL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "rx-replenish", required_argument, NULL, OPT_RX_REPLENISH },
	{ "tx-hdr-build", required_argument, NULL, OPT_TX_HDR_BUILD },
	{ "tx-submit", required_argument, NULL, OPT_TX_SUBMIT },
	{ "bql-complete", required_argument, NULL, OPT_BQL_COMPLETE },
	{ "tx-csum", required_argument, NULL, OPT_TX_CSUM },
	{ "rx-deliver", required_argument, NULL, OPT_RX_DELIVER },
	{ "tx-reclaim", required_argument, NULL, OPT_TX_RECLAIM },
	{ "reclaim-us", required_argument, NULL, OPT_RECLAIM_US },
	{ "no-bql", no_argument, NULL, OPT_NO_BQL },
	{ "hdr-mask", required_argument, NULL, OPT_HDR_MASK },
	{ "drop-missing-hdrs", no_argument, NULL, OPT_DROP_MISSING },
	{ "dev-queues", required_argument, NULL, OPT_DEV_QUEUES },
	{ "cost-direct-ns", required_argument, NULL, OPT_COST_DIRECT },
	{ "cost-indirect-ns", required_argument, NULL, OPT_COST_INDIRECT },
	{ "cost-crq-ns", required_argument, NULL, OPT_COST_CRQ },
	{ "cost-dma-ns-per-kib", required_argument, NULL, OPT_COST_DMA },
	{ "cost-irq-ns", required_argument, NULL, OPT_COST_IRQ },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "delay-us", required_argument, NULL, OPT_DELAY },
	{ "loss", required_argument, NULL, OPT_LOSS },
	{ "reorder", required_argument, NULL, OPT_REORDER },
	{ "corrupt", required_argument, NULL, OPT_CORRUPT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "no-ctl", no_argument, NULL, OPT_NO_CTL },
	{ "sample-ms", required_argument, NULL, OPT_SAMPLE_MS },
	{ "samples", required_argument, NULL, OPT_SAMPLES },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
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
	      "  --no-tso, --no-csum the host sends MSS frames / complete checksums\n"
	      "vNIC:\n"
	      "  --queues N          queue pairs to negotiate (1)\n"
	      "  --mtu N             L3 MTU, 68..9000 (1500)\n"
	      "  --tx-entries N, --rx-entries N   descriptors per queue (512)\n"
	      "  --ind-descs N       indirect descriptors per send, 1..128 (16)\n"
	      "  --no-bql            byte queue limits off\n"
	      "  --busy-poll-us N    cpu spin before sleeping (50)\n"
	      "policies (default first):\n"
	      "  --rx-replenish low|always      --tx-hdr-build direct|copy\n"
	      "  --tx-submit auto|indirect      --bql-complete per-round|per-entry\n"
	      "  --tx-csum sw-direct|hw-headers|hw-noheaders\n"
	      "  --rx-deliver gro-list|gro|list --tx-reclaim irq|lazy|napi|orphan\n"
	      "  --reclaim-us N      tx-reclaim=lazy timer (1000)\n"
	      "device:\n"
	      "  --hdr-mask cautious|exact      --drop-missing-hdrs\n"
	      "  --dev-queues N      most queues the device grants (4)\n"
	      "cost model (ns, all 0 by default):\n"
	      "  --cost-direct-ns --cost-indirect-ns --cost-crq-ns --cost-dma-ns-per-kib --cost-irq-ns\n"
	      "cable:\n"
	      "  --rate BPS (k/M/G)  --delay-us N  --loss P  --reorder P  --corrupt P  --seed N\n"
	      "output:\n"
	      "  --json              one JSON object on stdout (docs/BENCH_JSON.md)\n"
	      "  --quiet             no per-second lines on stderr\n"
	      "  --trace             time the datapath functions; nested report (docs/TRACING.md)\n"
	      "  --sample-ms N       sample BQL, queue depths and throughput every N ms (0 = off)\n"
	      "  --samples FILE.csv  write the samples there (sampling every 10 ms unless set)\n"
	      "control socket (docs/STATS.md; 'vnic stats' reads it):\n"
	      "  --name NAME         instance name (bench-PID)   --no-ctl  no control socket\n",
	      f);
}

static int parse_policy(int c, const char *s, struct vnic_drv_config *d)
{
	switch (c) {
	case OPT_RX_REPLENISH:
		return vnic_drv_rx_replenish_parse(s, &d->rx_replenish) ?
			       vnic_arg_bad_choice("--rx-replenish", s, "low, always") : 0;
	case OPT_TX_HDR_BUILD:
		return vnic_drv_tx_hdr_build_parse(s, &d->tx_hdr_build) ?
			       vnic_arg_bad_choice("--tx-hdr-build", s, "direct, copy") : 0;
	case OPT_TX_SUBMIT:
		return vnic_drv_tx_submit_parse(s, &d->tx_submit) ?
			       vnic_arg_bad_choice("--tx-submit", s, "auto, indirect") : 0;
	case OPT_BQL_COMPLETE:
		return vnic_drv_bql_complete_parse(s, &d->bql_complete) ?
			       vnic_arg_bad_choice("--bql-complete", s, "per-round, per-entry") : 0;
	case OPT_TX_CSUM:
		return vnic_drv_tx_csum_parse(s, &d->tx_csum) ?
			       vnic_arg_bad_choice("--tx-csum", s, "sw-direct, hw-headers, hw-noheaders") : 0;
	case OPT_RX_DELIVER:
		return vnic_deliver_mode_parse(s, &d->rx_deliver) ?
			       vnic_arg_bad_choice("--rx-deliver", s, "gro-list, gro, list") : 0;
	case OPT_TX_RECLAIM:
		return vnic_drv_tx_reclaim_parse(s, &d->tx_reclaim) ?
			       vnic_arg_bad_choice("--tx-reclaim", s, "irq, lazy, napi, orphan") : 0;
	}
	return -EINVAL;
}

static int parse_opt(int c, const char *a, struct vnic_bench_opts *o)
{
	struct vnic_topo_config *t = &o->topo;
	uint64_t v;
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
		break;
	case OPT_QUEUES:
		err = vnic_arg_u64("--queues", a, 1, VNIC_MAX_QUEUES, &v);
		t->drv.tx_queues = t->drv.rx_queues = (unsigned int)v;
		break;
	case OPT_MTU:
		err = vnic_arg_u32("--mtu", a, VNIC_DRV_MIN_MTU, VNIC_DRV_MAX_MTU, &t->drv.mtu);
		t->cable.mtu = t->drv.mtu;
		break;
	case OPT_ENTRIES:
		err = vnic_arg_u32("--tx-entries", a, 16, VNIC_MAX_SUBCRQ_ENTRIES, &t->drv.tx_entries);
		break;
	case OPT_RX_ENTRIES:
		err = vnic_arg_u32("--rx-entries", a, 16, VNIC_MAX_SUBCRQ_ENTRIES, &t->drv.rx_entries);
		break;
	case OPT_IND_DESCS:
		err = vnic_arg_u32("--ind-descs", a, 1, VNIC_MAX_IND_DESCS, &t->drv.max_ind_descs);
		break;
	case OPT_IPV6:
		o->rr.tcp.ipv6 = o->st.tcp.ipv6 = true;
		break;
	case OPT_NO_TSO:
		o->rr.tcp.no_tso = o->st.tcp.no_tso = true;
		t->drv.tso = false;
		break;
	case OPT_NO_CSUM:
		o->rr.tcp.no_csum_offload = o->st.tcp.no_csum_offload = true;
		break;
	case OPT_TSQ:
		err = vnic_arg_u32("--tsq-bytes", a, 1, 1u << 30, &o->st.tcp.tsq_bytes);
		o->rr.tcp.tsq_bytes = o->st.tcp.tsq_bytes;
		break;
	case OPT_WINDOW:
		err = vnic_arg_u32("--window", a, 1, 1u << 30, &o->st.tcp.window);
		o->rr.tcp.window = o->st.tcp.window;
		break;
	case OPT_BUSY_POLL:
		err = vnic_arg_u64("--busy-poll-us", a, 0, 1000000, &v);
		t->busy_poll_ns = v * 1000;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_QUIET:
		o->quiet = true;
		break;
	case OPT_RECLAIM_US:
		err = vnic_arg_u64("--reclaim-us", a, 1, 10000000, &v);
		t->drv.reclaim_ns = v * 1000;
		break;
	case OPT_NO_BQL:
		t->drv.bql = false;
		break;
	case OPT_HDR_MASK:
		if (!strcmp(a, "cautious"))
			t->dev.hdr_mask = VNIC_DEV_HDRS_CAUTIOUS;
		else if (!strcmp(a, "exact"))
			t->dev.hdr_mask = VNIC_DEV_HDRS_EXACT;
		else
			err = vnic_arg_bad_choice("--hdr-mask", a, "cautious, exact");
		break;
	case OPT_DROP_MISSING:
		t->dev.drop_missing_hdrs = true;
		break;
	case OPT_DEV_QUEUES:
		err = vnic_arg_u32("--dev-queues", a, 1, VNIC_MAX_QUEUES, &t->dev.max_tx_queues);
		t->dev.max_rx_queues = t->dev.max_tx_queues;
		break;
	case OPT_COST_DIRECT:
		err = vnic_arg_u64("--cost-direct-ns", a, 0, 1000000000, &t->cost.hcall_direct_ns);
		break;
	case OPT_COST_INDIRECT:
		err = vnic_arg_u64("--cost-indirect-ns", a, 0, 1000000000,
				   &t->cost.hcall_indirect_ns);
		break;
	case OPT_COST_CRQ:
		err = vnic_arg_u64("--cost-crq-ns", a, 0, 1000000000, &t->cost.hcall_crq_ns);
		break;
	case OPT_COST_DMA:
		err = vnic_arg_u64("--cost-dma-ns-per-kib", a, 0, 1000000000,
				   &t->cost.dma_ns_per_kib);
		break;
	case OPT_COST_IRQ:
		err = vnic_arg_u64("--cost-irq-ns", a, 0, 1000000000, &t->cost.irq_ns);
		break;
	case OPT_RATE:
		err = vnic_arg_si("--rate", a, &t->cable.rate_bps);
		break;
	case OPT_DELAY:
		err = vnic_arg_u64("--delay-us", a, 0, 10000000, &v);
		t->cable.delay_ns = v * 1000;
		break;
	case OPT_LOSS:
		err = vnic_arg_double("--loss", a, 0, 0.5, &t->cable.loss);
		break;
	case OPT_REORDER:
		err = vnic_arg_double("--reorder", a, 0, 0.5, &t->cable.reorder);
		break;
	case OPT_CORRUPT:
		err = vnic_arg_double("--corrupt", a, 0, 0.5, &t->cable.corrupt);
		break;
	case OPT_SEED:
		err = vnic_arg_u64("--seed", a, 0, UINT64_MAX, &t->cable.seed);
		break;
	case OPT_TRACE:
		o->trace = true;
		break;
	case OPT_NAME:
		if (!vnic_ctl_name_valid(a)) {
			fprintf(stderr, "vnic: --name: '%s' is not 1..63 of A-Z a-z 0-9 . _ - "
					"(no leading '.')\n", a);
			err = -EINVAL;
		}
		o->ctl_name = a;
		break;
	case OPT_NO_CTL:
		o->ctl = false;
		break;
	case OPT_SAMPLE_MS:
		err = vnic_arg_u32("--sample-ms", a, 0, 60000, &o->sample_ms);
		break;
	case OPT_SAMPLES:
		o->samples_path = a;
		break;
	default:
		err = parse_policy(c, a, &t->drv);
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

int vnic_bench_parse(int argc, char **argv, struct vnic_bench_opts *o)
{
	bool sample_ms_set = false;	/* so that --samples alone turns sampling on */
	int c, err;

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
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage(stdout);
			return 1;
		}
		if (c == '?') {
			if (optopt)
				fprintf(stderr, "vnic bench: option '%s' needs a value\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "vnic bench: unknown option '%s'\n", argv[optind - 1]);
			return -EINVAL;
		}
		err = parse_opt(c, optarg, o);
		if (err)
			return err;
		sample_ms_set |= c == OPT_SAMPLE_MS;
	}
	if (optind < argc) {
		fprintf(stderr, "vnic bench: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->topo.drv.tso && !o->topo.drv.csum)
		o->topo.drv.tso = false;
	if (o->samples_path && !sample_ms_set)
		o->sample_ms = 10;
	if (o->samples_path && !o->sample_ms) {
		fputs("vnic bench: --samples needs sampling on (--sample-ms above 0)\n", stderr);
		return -EINVAL;
	}
	if (o->ctl_name && !o->ctl) {
		fputs("vnic bench: --name names the control socket; --no-ctl turns it off\n",
		      stderr);
		return -EINVAL;
	}
	return 0;
}

/* Set by Ctrl-C in `vnic bench`: the run ends early and reports what it did. */
static volatile sig_atomic_t bench_interrupted;

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void results(struct vnic_bench_run *r, struct vnic_work_results *res)
{
	if (r->rr)
		vnic_rr_results(r->rr, res);
	else
		vnic_stream_results(r->st, res);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !bench_interrupted)
		;
}

/*
 * Runs for the duration (or until Ctrl-C or r->stop), taking the samples and printing a
 * line a second on stderr for long runs. A late wake-up skips the samples it
 * missed rather than bunch them up, so samples stay about a period apart.
 */
/* Frames put on the cable so far, both ways. */
static uint64_t wire_frames(const struct vnic_topo *t)
{
	struct vnic_cable_stats cs;
	uint64_t n = 0;

	for (unsigned int dir = 0; dir < 2; dir++) {
		vnic_cable_stats(t->cable, dir, &cs);
		n += cs.tx_frames;
	}
	return n;
}

/* No descriptor in flight on any tx queue of either driver, no frame on the cable. */
static bool tx_rings_idle(const struct vnic_topo *t)
{
	struct vnic_cable_stats cs;
	char name[32];
	uint64_t used;

	for (unsigned int dir = 0; dir < 2; dir++) {
		vnic_cable_stats(t->cable, dir, &cs);
		if (cs.rx_frames != cs.tx_frames)
			return false;
	}

	for (unsigned int s = 0; s < VNIC_TOPO_SIDES; s++) {
		for (unsigned int q = 0; q < VNIC_MAX_QUEUES; q++) {
			snprintf(name, sizeof(name), "tx%u_used", q);
			if (vnic_drv_counter(t->drv[s], name, &used))
				break;
			if (used)
				return false;
		}
	}
	return true;
}

/* A stream of a fixed size ends when every flow has delivered it all. */
static bool stream_done(struct vnic_bench_run *r)
{
	struct vnic_work_results cur;

	if (!r->st || !r->o->st.bytes)
		return false;
	vnic_stream_results(r->st, &cur);
	return cur.bytes >= r->o->st.bytes * r->o->st.flows;
}

static void run_for(struct vnic_bench_run *r)
{
	uint64_t start = vnic_now_ns(), end = start + (uint64_t)(r->o->duration_s * 1e9);
	uint64_t period = r->sampler ? r->series.period_ns : 0;
	uint64_t next_sample = start, next_sec = start + 1000000000u, t_prev = start;
	bool progress = r->o->duration_s > 2 && !r->o->quiet;
	struct vnic_work_results prev = { 0 }, cur;
	unsigned int sec = 0;
	uint64_t now = start;

	for (;;) {
		uint64_t wake;

		now = vnic_now_ns();
		if (period && now >= next_sample) {
			results(r, &cur);
			vnic_sampler_take(r->sampler, now - start, &cur);
			/* On the grid when on time; never closer than half a period. */
			next_sample += period;
			if (next_sample < now + period / 2)
				next_sample = now + period / 2;
		}
		if (now >= next_sec) {
			if (progress) {
				double dt = (double)(now - t_prev) / 1e9;

				results(r, &cur);
				fprintf(stderr,
					"[%3u s] %10.0f tps %8.3f Gbit/s  errors %" PRIu64 "\n",
					++sec, (double)(cur.transactions - prev.transactions) / dt,
					(double)(cur.bytes - prev.bytes) * 8 / dt / 1e9,
					cur.err.payload + cur.err.bad_csum);
				prev = cur;
			}
			t_prev = now;
			next_sec = now + 1000000000u;
		}
		if (now >= end || bench_interrupted ||
		    atomic_load_explicit(&r->stop, memory_order_relaxed) || stream_done(r))
			break;
		/* Wake at least every 0.1 s to see a stop request. */
		wake = now + 100000000u;
		if (end < wake)
			wake = end;
		if (next_sec < wake)
			wake = next_sec;
		if (period && next_sample < wake)
			wake = next_sample;
		if (wake > now)
			sleep_ns(wake - now);
	}
	r->elapsed_ns = now - start;
}

static bool quiesced(struct vnic_bench_run *r)
{
	return r->rr ? vnic_rr_quiesced(r->rr) : vnic_stream_quiesced(r->st);
}

unsigned int vnic_bench_counters(void *run, struct vnic_counter *out, unsigned int max)
{
	struct vnic_bench_run *r = run;
	struct vnic_work_results res;
	unsigned int n = 0;

	results(r, &res);
#define W(f)                                                                                       \
	do {                                                                                       \
		if (n < max) {                                                                     \
			snprintf(out[n].name, sizeof(out[n].name), "work.%s", #f);                 \
			out[n].value = res.f;                                                      \
		}                                                                                  \
		n++;                                                                               \
	} while (0)
	W(transactions);
	W(bytes);
	W(tx_pkts);
	W(tx_segs);
	W(tx_bytes);
	W(rx_pkts);
	W(rx_segs);
	W(tsq_throttled);
	W(tsq_max);
#undef W
	return n + vnic_topo_counters(&r->topo, n < max ? out + n : NULL, n < max ? max - n : 0);
}

/* The optional parts of a run: control socket, sampler. 0 or -errno (message printed). */
static int extras_start(struct vnic_bench_run *r)
{
	const struct vnic_bench_opts *o = r->o;
	char name[VNIC_CTL_NAME_MAX];
	int err;

	if (o->ctl) {
		if (o->ctl_name)
			snprintf(name, sizeof(name), "%s", o->ctl_name);
		else
			vnic_ctl_default_name(name, sizeof(name), "bench");
		err = vnic_ctl_serve_start(&r->ctl, name, vnic_bench_counters, r);
		if (err == -EADDRINUSE) {
			fprintf(stderr, "vnic bench: an instance named '%s' is running\n", name);
			return err;
		}
		/* A bench is still worth running without its socket, unless it was named. */
		if (err && o->ctl_name) {
			fprintf(stderr, "vnic bench: control socket '%s': %s\n", name,
				strerror(-err));
			return err;
		}
		if (err && !o->quiet)
			fprintf(stderr, "vnic bench: no control socket (%s); running without\n",
				strerror(-err));
	}
	if (o->sample_ms) {
		err = vnic_series_init(&r->series, (uint64_t)o->sample_ms * 1000000u,
				       o->duration_s);
		if (err) {
			fprintf(stderr, "vnic bench: sampler: %s\n", strerror(-err));
			return err;
		}
	}
	return 0;
}

int vnic_bench_run(struct vnic_bench_run *r)
{
	struct vnic_topo *t = &r->topo;
	int err;
	double cpu0;

	err = vnic_topo_create(t, &r->o->topo);
	if (err) {
		fprintf(stderr, "vnic bench: building the topology: %s\n", strerror(-err));
		return err;
	}
	if (r->o->wl == VNIC_WL_RR)
		err = vnic_rr_create(&r->rr, vnic_topo_netdev(t, 0), &t->host_pool[0],
				     vnic_topo_netdev(t, 1), &t->host_pool[1], &r->o->rr);
	else
		err = vnic_stream_create(&r->st, vnic_topo_netdev(t, 0), &t->host_pool[0],
					 vnic_topo_netdev(t, 1), &t->host_pool[1], &r->o->st);
	if (err) {
		fprintf(stderr, "vnic bench: creating the workload: %s\n", strerror(-err));
		goto out;
	}
	err = extras_start(r);
	if (err)
		goto out;
	err = vnic_topo_start(t);
	if (err)
		goto out;
	if (r->o->sample_ms) {
		err = vnic_sampler_create(&r->sampler, &r->series, t);
		if (err) {
			fprintf(stderr, "vnic bench: sampler: %s\n", strerror(-err));
			goto out;
		}
	}
	if (r->o->trace) {
		vnic_trace_reset();
		vnic_trace_enable(true);
	}

	cpu0 = cpu_seconds();
	if (r->rr)
		vnic_rr_start(r->rr);
	else
		vnic_stream_start(r->st);
	run_for(r);
	results(r, &r->res);
	r->cpu_s = cpu_seconds() - cpu0;
	if (r->o->trace)
		vnic_trace_enable(false);
	if (r->rr)
		vnic_rr_stop(r->rr);
	else
		vnic_stream_stop(r->st);
	/*
	 * Let what is in flight land, so the pools can be checked full: the
	 * hosts first (all data acknowledged), then the drivers (the last pure
	 * ACKs may still sit in a tx ring, their tx_done already called when
	 * the driver orphans).
	 */
	for (int i = 0; i < 2000 && !quiesced(r); i++)
		sleep_ns(1000000);
	r->quiesced = quiesced(r);
	/*
	 * Then until the wire has been quiet for a while: a late pure ACK or
	 * timer-driven segment still on its way would otherwise meet a peer
	 * whose link is already down and be dropped there.
	 */
	for (int i = 0, quiet = 0; i < 2000 && quiet < 10; i++) {
		uint64_t before = wire_frames(t);

		sleep_ns(1000000);
		quiet = tx_rings_idle(t) && wire_frames(t) == before ? quiet + 1 : 0;
	}
	err = vnic_topo_stop(t);
	if (err)
		fprintf(stderr, "vnic bench: closing: %s\n", strerror(-err));
	r->pools_full = vnic_drv_pools_full(t->drv[0]) && vnic_drv_pools_full(t->drv[1]);
	/* The socket goes with the traffic: reports read the counters from here on. */
	vnic_ctl_serve_stop(r->ctl);
	r->ctl = NULL;
	return 0;
out:
	vnic_ctl_serve_stop(r->ctl);
	r->ctl = NULL;
	return err;
}

void vnic_bench_cleanup(struct vnic_bench_run *r)
{
	vnic_ctl_serve_stop(r->ctl);
	r->ctl = NULL;
	vnic_topo_stop(&r->topo);
	vnic_sampler_destroy(r->sampler);
	r->sampler = NULL;
	vnic_series_fini(&r->series);
	if (r->rr)
		vnic_rr_destroy(r->rr);
	if (r->st)
		vnic_stream_destroy(r->st);
	vnic_topo_destroy(&r->topo);
}

/* The policies in force, as name/value pairs. */
static void policies(const struct vnic_topo_config *c, const char *kv[][2])
{
	const struct vnic_drv_config *d = &c->drv;

	kv[0][0] = "rx-replenish", kv[0][1] = vnic_drv_rx_replenish_name(d->rx_replenish);
	kv[1][0] = "tx-hdr-build", kv[1][1] = vnic_drv_tx_hdr_build_name(d->tx_hdr_build);
	kv[2][0] = "tx-submit", kv[2][1] = vnic_drv_tx_submit_name(d->tx_submit);
	kv[3][0] = "bql-complete", kv[3][1] = vnic_drv_bql_complete_name(d->bql_complete);
	kv[4][0] = "tx-csum", kv[4][1] = vnic_drv_tx_csum_name(d->tx_csum);
	kv[5][0] = "rx-deliver", kv[5][1] = vnic_deliver_mode_name(d->rx_deliver);
	kv[6][0] = "tx-reclaim", kv[6][1] = vnic_drv_tx_reclaim_name(d->tx_reclaim);
	kv[7][0] = "hdr-mask", kv[7][1] = c->dev.hdr_mask == VNIC_DEV_HDRS_EXACT ? "exact" : "cautious";
}

enum { NPOLICIES = 8 };

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

static void print_text(const struct vnic_bench_run *r)
{
	const struct vnic_bench_opts *o = r->o;
	const struct vnic_topo *t = &r->topo;
	struct vnic_work_summary s;
	const char *kv[NPOLICIES][2];
	static struct vnic_counter all[4096];
	unsigned int n, i;

	vnic_work_summarize(&r->res, r->elapsed_ns, &s);
	policies(&o->topo, kv);
	if (o->wl == VNIC_WL_RR)
		printf("vnic bench rr: %u sessions, %u/%u bytes, %.1f s, MTU %u, %u queue(s)\n",
		       o->rr.sessions, o->rr.req_size, o->rr.resp_size, s.seconds, o->topo.drv.mtu,
		       o->topo.drv.tx_queues);
	else
		printf("vnic bench stream: %u flow(s), %.1f s, MTU %u, %u queue(s)\n", o->st.flows,
		       s.seconds, o->topo.drv.mtu, o->topo.drv.tx_queues);
	printf("  policies:");
	for (i = 0; i < NPOLICIES; i++)
		printf(" %s=%s", kv[i][0], kv[i][1]);
	printf("\n  cost model (ns): direct %" PRIu64 " indirect %" PRIu64 " crq %" PRIu64
	       " dma/KiB %" PRIu64 " irq %" PRIu64 "\n",
	       o->topo.cost.hcall_direct_ns, o->topo.cost.hcall_indirect_ns,
	       o->topo.cost.hcall_crq_ns, o->topo.cost.dma_ns_per_kib, o->topo.cost.irq_ns);
	if (o->wl == VNIC_WL_RR) {
		printf("  rate      %12.0f transactions/s  (%" PRIu64 " in all)\n", s.tps,
		       r->res.transactions);
		printf("  latency   p50 %.1f us  p99 %.1f us  p99.9 %.1f us\n", s.lat_p50_ns / 1e3,
		       s.lat_p99_ns / 1e3, s.lat_p999_ns / 1e3);
		printf("  cpu       %.3f s  (%.2f us per transaction)\n", r->cpu_s,
		       r->res.transactions ? r->cpu_s * 1e6 / r->res.transactions : 0);
	} else {
		printf("  rate      %12.3f Gbit/s of payload  (%" PRIu64 " bytes)\n", s.gbps,
		       r->res.bytes);
		printf("  cpu       %.3f s  (%.3f s per GB)\n", r->cpu_s,
		       r->res.bytes ? r->cpu_s / (r->res.bytes / 1e9) : 0);
	}
	printf("  errors    payload %" PRIu64 "  bad csum %" PRIu64 "  lost %" PRIu64
	       "  retransmits %" PRIu64 "  tx dropped %" PRIu64 "\n",
	       r->res.err.payload, r->res.err.bad_csum, r->res.err.lost, r->res.err.retransmits,
	       r->res.err.tx_dropped);
	printf("  pools     %s after quiesce\n", r->pools_full ? "full" : "NOT FULL");
	if (r->sampler)
		printf("  samples   %zu every %" PRIu32 " ms%s%s\n", r->series.count, o->sample_ms,
		       o->samples_path ? " -> " : "", o->samples_path ? o->samples_path : "");
	printf("  counters (both sides):\n");
	for (i = 0; i < sizeof(key_counters) / sizeof(key_counters[0]); i++)
		printf("    %-28s %12" PRIu64 "\n", key_counters[i].label,
		       sum_q(t, key_counters[i].dir, key_counters[i].name));
	printf("    %-28s %12" PRIu64 " / %" PRIu64 "\n", "BQL limit a / b",
	       vnic_topo_counter(t, "drv_a.tx0_bql_limit"),
	       vnic_topo_counter(t, "drv_b.tx0_bql_limit"));
	printf("    %-28s %12" PRIu64 " / %" PRIu64 "\n", "wake-ups cpu a / b",
	       vnic_topo_counter(t, "cpu_a.wakeups"), vnic_topo_counter(t, "cpu_b.wakeups"));
	printf("    %-28s %12" PRIu64 "\n", "hcalls direct",
	       vnic_topo_counter(t, "hv_a.send_subcrq") + vnic_topo_counter(t, "hv_b.send_subcrq"));
	printf("    %-28s %12" PRIu64 "\n", "hcalls indirect",
	       vnic_topo_counter(t, "hv_a.send_subcrq_indirect") +
		       vnic_topo_counter(t, "hv_b.send_subcrq_indirect"));
	/* Every drop, whatever its layer, when it happened. */
	n = vnic_topo_counters(t, all, 4096);
	for (i = 0; i < n && i < 4096; i++)
		if (all[i].value && (strstr(all[i].name, "drop") || strstr(all[i].name, "bad_")))
			printf("    %-40s %12" PRIu64 "\n", all[i].name, all[i].value);
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

static void print_json(const struct vnic_bench_run *r)
{
	const struct vnic_bench_opts *o = r->o;
	struct vnic_work_summary s;
	const char *kv[NPOLICIES][2];
	static struct vnic_counter all[4096];
	struct vnic_json j;
	unsigned int n, i;

	vnic_work_summarize(&r->res, r->elapsed_ns, &s);
	policies(&o->topo, kv);
	vnic_json_begin(&j, stdout);
	vnic_json_str(&j, "workload", o->wl == VNIC_WL_RR ? "rr" : "stream");
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
	vnic_json_bool(&j, "pools_full", r->pools_full);
	vnic_json_object(&j, "errors");
	vnic_json_u64(&j, "payload", r->res.err.payload);
	vnic_json_u64(&j, "bad_csum", r->res.err.bad_csum);
	vnic_json_u64(&j, "lost", r->res.err.lost);
	vnic_json_u64(&j, "ooo", r->res.err.ooo);
	vnic_json_u64(&j, "dup", r->res.err.dup);
	vnic_json_u64(&j, "retransmits", r->res.err.retransmits);
	vnic_json_u64(&j, "timeouts", r->res.err.timeouts);
	vnic_json_u64(&j, "bad_hdr", r->res.err.bad_hdr);
	vnic_json_u64(&j, "no_conn", r->res.err.no_conn);
	vnic_json_u64(&j, "tx_dropped", r->res.err.tx_dropped);
	vnic_json_close(&j);
	vnic_json_object(&j, "policies");
	for (i = 0; i < NPOLICIES; i++)
		vnic_json_str(&j, kv[i][0], kv[i][1]);
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
	vnic_json_close(&j);
	if (o->trace)
		json_trace(&j);
	vnic_json_end(&j);
}

static void interrupted(int sig)
{
	(void)sig;
	bench_interrupted = 1;
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
	int err;

	err = vnic_bench_parse(argc, argv, &o);
	if (err > 0)
		return 0;
	if (err)
		return 2;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fputs("vnic bench: out of memory\n", stderr);
		return 1;
	}
	r->o = &o;
	on_interrupt();
	err = vnic_bench_run(r);
	if (!err) {
		if (o.json) {
			print_json(r);
		} else {
			print_text(r);
			if (o.trace) {
				putchar('\n');
				vnic_trace_report(stdout);
			}
		}
		if (o.samples_path) {
			err = vnic_series_write_csv(&r->series, o.samples_path);
			if (err)
				fprintf(stderr, "vnic bench: writing %s: %s\n", o.samples_path,
					strerror(-err));
		}
	}
	vnic_bench_cleanup(r);
	free(r);
	return err ? 1 : 0;
}
