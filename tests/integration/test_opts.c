// SPDX-License-Identifier: MIT
/*
 * Command-line parsing of `vnic bench`, `vnic link` and `vnic experiment`:
 * the shared option table (opts.c) means the same in all three, every bad
 * input gets -EINVAL, good ones land where they should.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_SET */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"
#include "app/experiment.h"

enum cmd { BENCH, LINK, EXPERIMENT };

/* Splits line at spaces and hands it to the command's parser; the parsers keep pointers into buf. */
static int parse_as(enum cmd cmd, const char *line, void *o)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	switch (cmd) {
	case BENCH:
		return vnic_bench_parse(argc, argv, o);
	case LINK:
		return vnic_link_parse(argc, argv, o);
	case EXPERIMENT:
		return vnic_experiment_parse(argc, argv, o);
	}
	return -1;
}

static int parse(struct vnic_bench_opts *o, const char *line)
{
	return parse_as(BENCH, line, o);
}

/* stderr to /dev/null around a call: the parsers explain every refusal there. */
static FILE *quiet_stderr(void)
{
	FILE *saved = stderr;

	stderr = fopen("/dev/null", "w");
	return saved;
}

static void loud_stderr(FILE *saved)
{
	fclose(stderr);
	stderr = saved;
}

static void test_rejects_bad_arguments(void **state)
{
	static const char *const bad[] = {
		"bench",				/* no workload */
		"bench udp",				/* unknown workload */
		"bench rr --sessions 0",
		"bench rr --sessions 100000",
		"bench rr --sessions x",
		"bench rr --sessions -3",
		"bench rr --size 0",
		"bench rr --duration 0",
		"bench rr --duration forever",
		"bench rr --mtu 67",
		"bench rr --mtu 9001",
		"bench rr --queues 0",
		"bench rr --queues 17",
		"bench rr --ind-descs 129",
		"bench rr --tx-submit sometimes",
		"bench rr --rx-replenish never",
		"bench rr --tx-csum hw",
		"bench rr --rx-deliver batch",
		"bench rr --tx-reclaim late",
		"bench rr --bql-complete once",
		"bench rr --tx-hdr-build memcpy",
		"bench rr --hdr-mask loose",
		"bench rr --loss 0.9",
		"bench rr --loss -1",
		"bench rr --rate 10X",
		"bench rr --no-such-option",
		"bench rr --sessions",			/* missing value */
		"bench rr --pcap-lossless",		/* shapes a capture: needs --pcap */
		"bench rr --pcap x --snaplen 13",	/* shorter than an Ethernet header */
		"bench rr --pcap x --pcap-count 0",
		"bench rr --pcap x --cable-tso",	/* a capture keeps MTU frames */
		"bench rr stray",
	};
	struct vnic_bench_opts o;

	(void)state;
	/* the parser explains each refusal on stderr; keep the test log short */
	FILE *saved = stderr;

	stderr = fopen("/dev/null", "w");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = parse(&o, bad[i]);

		if (err != -EINVAL) {
			fclose(stderr);
			stderr = saved;
			fail_msg("accepted: '%s' (%d)", bad[i], err);
		}
	}
	fclose(stderr);
	stderr = saved;
}

static void test_accepts_and_sets(void **state)
{
	struct vnic_bench_opts o;

	(void)state;
	assert_int_equal(parse(&o, "bench stream --flows 4 --mtu 9000 --queues 2 --rate 100M "
				   "--loss 0.01 --tx-reclaim lazy --rx-deliver list --hdr-mask exact "
				   "--tx-csum hw-headers --duration 1.5 --json"),
			 0);
	assert_int_equal(o.wl, VNIC_WL_STREAM);
	assert_int_equal(o.st.flows, 4);
	assert_int_equal(o.topo.drv.mtu, 9000);
	assert_int_equal(o.topo.cable.mtu, 9000);
	assert_int_equal(o.topo.drv.tx_queues, 2);
	assert_int_equal(o.topo.drv.rx_queues, 2);
	assert_true(o.topo.cable.rate_bps == 100000000ull);
	assert_true(o.topo.cable.loss > 0.0099 && o.topo.cable.loss < 0.0101);
	assert_int_equal(o.topo.drv.tx_reclaim, VNIC_DRV_RECLAIM_LAZY);
	assert_int_equal(o.topo.drv.rx_deliver, VNIC_DELIVER_LIST);
	assert_int_equal(o.topo.dev.hdr_mask, VNIC_DEV_HDRS_EXACT);
	assert_int_equal(o.topo.drv.tx_csum, VNIC_DRV_CSUM_HW_HEADERS);
	assert_true(o.duration_s > 1.49 && o.duration_s < 1.51);
	assert_true(o.json);

	assert_int_equal(parse(&o, "bench rr --sessions 150 --size 8900 --no-tso"), 0);
	assert_int_equal(o.wl, VNIC_WL_RR);
	assert_int_equal(o.rr.sessions, 150);
	assert_int_equal(o.rr.req_size, 8900);
	assert_int_equal(o.rr.resp_size, 8900);
	assert_false(o.topo.drv.tso);
	/* defaults are the "after" policies */
	assert_int_equal(o.topo.drv.tx_submit, VNIC_DRV_SUBMIT_AUTO);
	assert_int_equal(o.topo.drv.rx_replenish, VNIC_DRV_REPLENISH_LOW);
	assert_int_equal(o.topo.drv.bql_complete, VNIC_DRV_BQL_PER_ROUND);
	assert_int_equal(o.topo.drv.rx_deliver, VNIC_DELIVER_GRO_LIST);
}

/* The table's options, prefixed with each command's own words. */
static const char *const prefix[] = {
	[BENCH] = "bench rr",
	[LINK] = "link",
	[EXPERIMENT] = "experiment bql",
};

union any_opts {
	struct vnic_bench_opts b;
	struct vnic_link_opts l;
	struct xp_opts x;
};

static const struct vnic_topo_config *topo_of(enum cmd cmd, const union any_opts *o)
{
	return cmd == BENCH ? &o->b.topo : cmd == LINK ? &o->l.topo : &o->x.base;
}

/* Every command takes the whole table with the same meaning. */
static void test_table_in_every_command(void **state)
{
	static union any_opts o;

	(void)state;
	for (enum cmd cmd = BENCH; cmd <= EXPERIMENT; cmd++) {
		char line[1024];
		const struct vnic_topo_config *t = topo_of(cmd, &o);

		snprintf(line, sizeof(line),
			 "%s --queues 3 --mtu 4000 --tx-entries 256 --rx-entries 1024 --ind-descs 32 "
			 "--no-tso --no-bql --busy-poll-us 7 --busy-poll fixed --doorbell spin --threads 1 "
			 "--spinners 1 --pin 0 "
			 "--rx-replenish always --tx-hdr-build "
			 "copy --tx-submit indirect --bql-complete per-entry --tx-csum hw-noheaders "
			 "--rx-deliver gro --tx-reclaim napi --reclaim-us 250 --hdr-mask exact "
			 "--drop-missing-hdrs --dev-queues 2 --cost-direct-ns 11 --cost-indirect-ns "
			 "12 --cost-crq-ns 13 --cost-dma-ns-per-kib 14 --cost-irq-ns 15",
			 prefix[cmd]);
		assert_int_equal(parse_as(cmd, line, &o), 0);
		assert_int_equal(t->drv.tx_queues, 3);
		assert_int_equal(t->drv.rx_queues, 3);
		assert_int_equal(t->drv.mtu, 4000);
		assert_int_equal(t->cable.mtu, 4000);
		assert_int_equal(t->drv.tx_entries, 256);
		assert_int_equal(t->drv.rx_entries, 1024);
		assert_int_equal(t->drv.max_ind_descs, 32);
		assert_false(t->drv.tso);
		assert_false(t->drv.bql);
		assert_true(t->busy_poll_ns == 7000);
		assert_int_equal(t->spin, VNIC_CPU_SPIN_FIXED);
		assert_int_equal(t->doorbell, VNIC_HV_DOORBELL_SPIN);
		assert_int_equal(t->threads, 1);
		assert_int_equal(t->spinners, 1);
		assert_int_equal(t->pin.mode, VNIC_PIN_LIST);
		assert_int_equal(t->pin.n, 1);
		assert_int_equal(t->pin.core[0], 0);
		assert_int_equal(t->drv.rx_replenish, VNIC_DRV_REPLENISH_ALWAYS);
		assert_int_equal(t->drv.tx_hdr_build, VNIC_DRV_HDR_COPY);
		assert_int_equal(t->drv.tx_submit, VNIC_DRV_SUBMIT_INDIRECT);
		assert_int_equal(t->drv.bql_complete, VNIC_DRV_BQL_PER_ENTRY);
		assert_int_equal(t->drv.tx_csum, VNIC_DRV_CSUM_HW_NOHEADERS);
		assert_int_equal(t->drv.rx_deliver, VNIC_DELIVER_GRO);
		assert_int_equal(t->drv.tx_reclaim, VNIC_DRV_RECLAIM_NAPI);
		assert_true(t->drv.reclaim_ns == 250000);
		assert_int_equal(t->dev.hdr_mask, VNIC_DEV_HDRS_EXACT);
		assert_true(t->dev.drop_missing_hdrs);
		assert_int_equal(t->dev.max_tx_queues, 2);
		assert_int_equal(t->dev.max_rx_queues, 2);
		assert_true(t->cost.hcall_direct_ns == 11 && t->cost.hcall_indirect_ns == 12 &&
			    t->cost.hcall_crq_ns == 13 && t->cost.dma_ns_per_kib == 14 &&
			    t->cost.irq_ns == 15);

		snprintf(line, sizeof(line),
			 "%s --rate 2.5G --delay-us 30 --loss 0.02 --reorder 0.03 --corrupt 0.001 "
			 "--seed 99",
			 prefix[cmd]);
		assert_int_equal(parse_as(cmd, line, &o), 0);
		assert_true(t->cable.rate_bps == 2500000000ull);
		assert_true(t->cable.delay_ns == 30000);
		assert_true(t->cable.loss > 0.0199 && t->cable.loss < 0.0201);
		assert_true(t->cable.reorder > 0.0299 && t->cable.reorder < 0.0301);
		assert_true(t->cable.corrupt > 0.00099 && t->cable.corrupt < 0.00101);
		assert_true(t->cable.seed == 99);
		/* untouched options keep their defaults */
		assert_int_equal(t->drv.tx_submit, VNIC_DRV_SUBMIT_AUTO);
		assert_int_equal(t->drv.rx_deliver, VNIC_DELIVER_GRO_LIST);
		assert_true(t->drv.tso);
	}
}

/* The table's checks hold in every command: a bad value is -EINVAL everywhere. */
static void test_table_rejects_in_every_command(void **state)
{
	static const char *const bad[] = {
		"--queues 0",	      "--queues 17",	    "--mtu 67",	      "--mtu 9001",
		"--tx-entries 15",    "--ind-descs 129",    "--tx-submit x",  "--rx-deliver batch",
		"--hdr-mask loose",   "--loss 0.51",	    "--rate 1Q",      "--busy-poll-us -1",
		"--cost-irq-ns y",    "--reclaim-us 0",	    "--dev-queues 17", "--seed",
		"--threads 3",	      "--threads 0",	    "--busy-poll always",
		"--spinners 0",	      "--spinners 3",
		"--pin x",	      "--pin 0,",	    "--pin ,1",	      "--pin 0,1,0",
		"--pin -1",	      "--pin 99999",	    "--pin 0;1",      "--pin",
	};
	static union any_opts o;
	FILE *saved = quiet_stderr();

	(void)state;
	for (enum cmd cmd = BENCH; cmd <= EXPERIMENT; cmd++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char line[256];
			int err;

			snprintf(line, sizeof(line), "%s %s", prefix[cmd], bad[i]);
			err = parse_as(cmd, line, &o);
			if (err != -EINVAL) {
				loud_stderr(saved);
				fail_msg("accepted: '%s' (%d)", line, err);
			}
		}
	}
	loud_stderr(saved);
}

/*
 * --pin into a core per cpu thread: a list must name one per thread and only
 * cores the process may use; auto pins only when there is a core per thread.
 */
static void test_pin_cores(void **state)
{
	int core[VNIC_TOPO_SIDES], err_count, err_outside, ncores;
	int first = -1, second = -1, outside = -1;
	struct vnic_topo_config c;
	char one[16], two[32], buf[32];
	cpu_set_t allowed;
	FILE *saved;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	ncores = CPU_COUNT(&allowed);
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &allowed)) {
			if (outside < 0)
				outside = i;
		} else if (first < 0) {
			first = i;
		} else if (second < 0) {
			second = i;
		}
	}
	assert_true(first >= 0 && outside >= 0);

	vnic_topo_config_default(&c);
	assert_int_equal(vnic_topo_pin_cores(&c, core), 0);
	/* the default, adaptive: no core of their own to start with (struct vnic_place) */
	assert_int_equal(c.pin.mode, VNIC_PIN_ADAPTIVE);
	assert_int_equal(core[0], -1);
	assert_int_equal(core[1], -1);
	assert_int_equal(vnic_topo_opt_show("pin", &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "adaptive");

	assert_int_equal(vnic_topo_opt_set("pin", "auto", &c), 0);
	assert_int_equal(vnic_topo_pin_cores(&c, core), 0);
	assert_int_equal(core[0], ncores >= 2 ? first : -1);
	assert_int_equal(core[1], ncores >= 2 ? second : -1);
	c.threads = 1;
	assert_int_equal(vnic_topo_pin_cores(&c, core), 0);
	assert_int_equal(core[0], first);
	assert_int_equal(core[1], -1);

	snprintf(one, sizeof(one), "%d", first);
	assert_int_equal(vnic_topo_opt_set("pin", one, &c), 0);
	assert_int_equal(vnic_topo_pin_cores(&c, core), 0);
	assert_int_equal(core[0], first);
	assert_int_equal(core[1], -1);

	snprintf(two, sizeof(two), "%d,%d", first, outside);
	saved = quiet_stderr();
	c.threads = 2;
	err_count = vnic_topo_pin_cores(&c, core); /* one core for two threads */
	(void)vnic_topo_opt_set("pin", two, &c);
	err_outside = vnic_topo_pin_cores(&c, core); /* a core the process may not use */
	loud_stderr(saved);
	assert_int_equal(err_count, -EINVAL);
	assert_int_equal(err_outside, -EINVAL);

	assert_int_equal(vnic_topo_opt_show("pin", &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, two);
	assert_int_equal(vnic_topo_opt_set("pin", "none", &c), 0);
	assert_int_equal(vnic_topo_opt_show("pin", &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "none");
	assert_int_equal(c.pin.mode, VNIC_PIN_NONE);
	assert_int_equal(vnic_topo_opt_set("pin", "adaptive", &c), 0);
	assert_int_equal(c.pin.mode, VNIC_PIN_ADAPTIVE);
	assert_int_equal(vnic_topo_pin_cores(&c, core), 0);
	assert_int_equal(core[0], -1);
	assert_int_equal(core[1], -1);
}

/* What only link takes, and what it refuses. */
static void test_link_own(void **state)
{
	static const char *const bad[] = {
		"link --backing eth0 --loss 0.1",	/* no cable behind a backing */
		"link --ns-a x --ns-b x",
		"link --ifname 0123456789abcdefXYZ",
		"link --name .hidden",
		"link --no-ctl --name n1",
		"link --sessions 3",			/* bench's */
		"link --snaplen 128",			/* needs --pcap */
		"link --pcap-count 5",
		"link --pcap x --snaplen 65536",
		"link --cable-tso --pcap x",		/* a capture keeps MTU frames */
		"link stray",
		"link --profile fast",			/* no such profile */
		"link --profile latency --profile throughput",
		"link --profile latency --queues 0",	/* an override is checked as ever */
	};
	struct vnic_link_opts o;
	FILE *saved;

	(void)state;
	assert_int_equal(parse_as(LINK, "link", &o), 0);
	/* link's own defaults: no busy poll, two threads, both namespaces made */
	assert_true(o.topo.busy_poll_ns == 0);
	assert_int_equal(o.topo.threads, 2);
	assert_int_equal(o.topo.spinners, 2);
	assert_string_equal(o.ns[0], "vnic-a");
	assert_false(o.ns_given[0]);
	assert_false(o.json);

	assert_int_equal(parse_as(LINK, "link --ns-a red --new-ns-b blue --threads 1 --no-csum "
				  "--json --interval-json --backing veth0 --mtu 9000 --duration 2",
				  &o),
			 0);
	assert_string_equal(o.ns[0], "red");
	assert_true(o.ns_given[0]);
	assert_string_equal(o.ns[1], "blue");
	assert_false(o.ns_given[1]);
	assert_int_equal(o.topo.threads, 1);
	assert_false(o.topo.drv.csum);
	assert_false(o.topo.drv.tso);	/* no TSO without checksum offload */
	assert_true(o.json && o.interval_json);
	assert_string_equal(o.backing, "veth0");
	assert_int_equal(o.topo.drv.mtu, 9000);
	assert_null(o.pcap.path);

	assert_int_equal(parse_as(LINK, "link --pcap w.pcap --snaplen 128 --pcap-count 1000 "
				  "--pcap-lossless", &o), 0);
	assert_string_equal(o.pcap.path, "w.pcap");
	assert_int_equal(o.pcap.snaplen, 128);
	assert_int_equal(o.pcap.count, 1000);
	assert_true(o.pcap.lossless);
	assert_int_equal(parse_as(LINK, "link --pcap w.pcap", &o), 0);
	assert_int_equal(o.pcap.snaplen, 0);	/* whole frames */
	assert_false(o.pcap.lossless);
	/* --split forks the server; --server names a standing one, split as well */
	assert_false(o.topo.split);
	assert_int_equal(parse_as(LINK, "link --split", &o), 0);
	assert_true(o.topo.split);
	assert_null(o.topo.server_path);
	assert_int_equal(parse_as(LINK, "link --server /run/vnic-srv.sock", &o), 0);
	assert_true(o.topo.split);
	assert_string_equal(o.topo.server_path, "/run/vnic-srv.sock");

	/* --profile: its set, an option beside it overriding it, in either order */
	assert_int_equal(parse_as(LINK, "link --profile throughput", &o), 0);
	assert_int_equal(o.topo.drv.tx_queues, 2);
	assert_int_equal(o.topo.drv.rx_queues, 2);
	assert_int_equal(o.topo.drv.tx_buf, VNIC_DRV_TXBUF_MAP);
	assert_int_equal(o.topo.drv.rx_agg, VNIC_DRV_AGG_FRAGS);
	assert_true(o.topo.cable.tso);
	assert_true(o.topo.busy_poll_ns == 0);
	assert_int_equal(parse_as(LINK, "link --tx-buf copy --profile throughput --queues 1", &o), 0);
	assert_int_equal(o.topo.drv.tx_queues, 1);
	assert_int_equal(o.topo.drv.tx_buf, VNIC_DRV_TXBUF_COPY);
	assert_int_equal(o.topo.drv.rx_agg, VNIC_DRV_AGG_FRAGS);
	/* no cable behind a backing: the profile leaves --cable-tso out, and is not refused */
	assert_int_equal(parse_as(LINK, "link --profile throughput --backing veth0", &o), 0);
	assert_false(o.topo.cable.tso);
	assert_int_equal(o.topo.drv.tx_buf, VNIC_DRV_TXBUF_MAP);
	/* nor while a capture mirrors the cable */
	assert_int_equal(parse_as(LINK, "link --profile throughput --pcap x", &o), 0);
	assert_false(o.topo.cable.tso);
	assert_int_equal(o.topo.drv.rx_agg, VNIC_DRV_AGG_FRAGS);
	assert_int_equal(parse_as(LINK, "link --profile latency", &o), 0);
	assert_int_equal(o.topo.drv.tx_queues, 2);
	assert_true(o.topo.busy_poll_ns == 50000);
	assert_false(o.topo.cable.tso);
	assert_int_equal(o.topo.drv.tx_buf, VNIC_DRV_TXBUF_COPY);
	assert_int_equal(parse_as(LINK, "link --busy-poll-us 20 --profile latency", &o), 0);
	assert_true(o.topo.busy_poll_ns == 20000);

	saved = quiet_stderr();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = parse_as(LINK, bad[i], &o);

		if (err != -EINVAL) {
			loud_stderr(saved);
			fail_msg("accepted: '%s' (%d)", bad[i], err);
		}
	}
	loud_stderr(saved);
}

/* What only experiment takes: where results go, and the groups given. */
static void test_experiment_own(void **state)
{
	static struct xp_opts o;
	FILE *saved;

	(void)state;
	assert_int_equal(parse_as(EXPERIMENT, "experiment gro --short --out /tmp/x --force --json "
				  "--cost-direct-ns 2000 --mtu 9000",
				  &o),
			 0);
	assert_true(o.short_run && o.force && o.json);
	assert_string_equal(o.out_dir, "/tmp/x");
	assert_true(o.groups_set & (1u << VNIC_OPTG_COST));
	assert_true(o.groups_set & (1u << VNIC_OPTG_VNIC));
	assert_false(o.groups_set & (1u << VNIC_OPTG_POLICY));
	assert_non_null(strstr(o.given, "--cost-direct-ns 2000"));
	assert_non_null(strstr(o.given, "--mtu 9000"));

	/* no --out: a new folder named after the experiment */
	assert_int_equal(parse_as(EXPERIMENT, "experiment gro", &o), 0);
	assert_int_equal(strncmp(o.out_dir, "experiment-gro-", 15), 0);
	assert_int_equal(o.groups_set, 0);

	saved = quiet_stderr();
	assert_int_equal(parse_as(EXPERIMENT, "experiment gro --duration 0", &o), -EINVAL);
	assert_int_equal(parse_as(EXPERIMENT, "experiment gro --sessions 2", &o), -EINVAL);
	assert_int_equal(parse_as(EXPERIMENT, "experiment gro stray", &o), -EINVAL);
	loud_stderr(saved);
}

/* By name, for comparisons and live changes: set, show, flags as on/off. */
static void test_by_name(void **state)
{
	struct vnic_topo_config c;
	struct vnic_kv kv[16];
	const char *names[64];
	char buf[64];
	unsigned int n;
	FILE *saved;

	(void)state;
	vnic_topo_config_default(&c);
	assert_int_equal(vnic_topo_opt_set("tx-submit", "indirect", &c), 0);
	assert_int_equal(c.drv.tx_submit, VNIC_DRV_SUBMIT_INDIRECT);
	assert_int_equal(vnic_topo_opt_show("tx-submit", &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "indirect");
	assert_int_equal(vnic_topo_opt_set("no-tso", "on", &c), 0);
	assert_false(c.drv.tso);
	assert_int_equal(vnic_topo_opt_show("no-tso", &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "on");
	assert_int_equal(vnic_topo_opt_set("no-tso", "off", &c), 0);
	assert_true(c.drv.tso);
	assert_int_equal(vnic_topo_opt_set("busy-poll-us", "20", &c), 0);
	assert_int_equal(vnic_topo_opt_show("busy-poll-us", &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "20");

	saved = quiet_stderr();
	assert_int_equal(vnic_topo_opt_set("no-such", "1", &c), -ENOENT);
	assert_int_equal(vnic_topo_opt_set("tx-submit", "never", &c), -EINVAL);
	assert_int_equal(vnic_topo_opt_set("no-tso", "yes", &c), -EINVAL);
	loud_stderr(saved);
	assert_int_equal(c.drv.tx_submit, VNIC_DRV_SUBMIT_INDIRECT);	/* nothing changed */

	/* every choice is listed with its value, from the owners' name tables */
	n = vnic_topo_policies(&c, kv, 16);
	assert_int_equal(n, 12);
	assert_string_equal(kv[0].key, "busy-poll");
	assert_string_equal(kv[0].value, "adaptive");
	assert_string_equal(kv[1].key, "doorbell");
	assert_string_equal(kv[1].value, "eventfd");
	assert_string_equal(kv[4].key, "tx-submit");
	assert_string_equal(kv[4].value, "indirect");
	n = vnic_topo_opt_names(1u << VNIC_OPTG_POLICY, names, 64);
	assert_int_equal(n, 10);
	n = vnic_topo_opt_names(VNIC_OPTG_ALL, names, 64);
	assert_true(n > 25 && n <= VNIC_TOPO_OPTS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rejects_bad_arguments),
		cmocka_unit_test(test_accepts_and_sets),
		cmocka_unit_test(test_table_in_every_command),
		cmocka_unit_test(test_table_rejects_in_every_command),
		cmocka_unit_test(test_pin_cores),
		cmocka_unit_test(test_link_own),
		cmocka_unit_test(test_experiment_own),
		cmocka_unit_test(test_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
