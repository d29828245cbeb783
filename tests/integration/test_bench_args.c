// SPDX-License-Identifier: MIT
/* `vnic bench` argument parsing: every bad input gets -EINVAL, good ones land. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"

static int parse(struct vnic_bench_opts *o, const char *line)
{
	char buf[512], *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return vnic_bench_parse(argc, argv, o);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rejects_bad_arguments),
		cmocka_unit_test(test_accepts_and_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
