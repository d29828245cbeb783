// SPDX-License-Identifier: MIT
/*
 * `vnic bench --repeat/--compare`: the verdict (deterministic, on made-up
 * rounds), the JSON a comparison writes (every round, the ratio, its
 * interval, the path the counters show), and the command lines refused.
 * Rates are never asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app/app.h"

/* --- the verdict on made-up rounds ---------------------------------------------- */

static void test_same_path_whatever_the_rates(void **state)
{
	/* 20 % apart, but the counters say both took the same path */
	const double a[5] = { 100, 101, 99, 100, 102 }, b[5] = { 120, 121, 119, 122, 118 };
	const uint64_t pa[1] = { 0 }, pb[1] = { 0 };
	struct vnic_cmp_verdict v;

	(void)state;
	vnic_cmp_judge(a, b, 5, pa, pb, 1, &v);
	assert_true(v.path_known && v.same_path);
	assert_string_equal(v.text, "same path: no measurable difference");
	/* the interval is still computed, and excludes 1 here */
	assert_true(v.lo > 1.1 && v.hi < 1.3);

	/* non-zero in both is the same path too */
	const uint64_t qa[2] = { 5, 0 }, qb[2] = { 7000, 0 };

	vnic_cmp_judge(a, b, 5, qa, qb, 2, &v);
	assert_true(v.same_path);
}

static void test_different_path(void **state)
{
	const double a[5] = { 100, 101, 99, 100, 102 }, b[5] = { 120, 121, 119, 122, 118 };
	const uint64_t pa[1] = { 4000 }, pb[1] = { 0 };
	struct vnic_cmp_verdict v;

	(void)state;
	vnic_cmp_judge(a, b, 5, pa, pb, 1, &v);
	assert_true(v.path_known);
	assert_false(v.same_path);
	assert_string_equal(v.text, "higher");
	assert_true(v.ratio > 1.15 && v.ratio < 1.25);
	assert_true(v.lo > 1);

	vnic_cmp_judge(b, a, 5, pb, pa, 1, &v);
	assert_string_equal(v.text, "lower");
	assert_true(v.hi < 1);
}

static void test_noise_is_no_difference(void **state)
{
	/* the same rate with round-to-round noise either way */
	const double a[6] = { 100, 104, 97, 101, 99, 103 }, b[6] = { 102, 99, 101, 98, 103, 100 };
	struct vnic_cmp_verdict v, again;

	(void)state;
	vnic_cmp_judge(a, b, 6, NULL, NULL, 0, &v);
	assert_false(v.path_known);
	assert_true(v.lo <= 1 && v.hi >= 1);
	assert_string_equal(v.text, "no measurable difference");
	/* a fixed seed: the same rounds give the same interval */
	vnic_cmp_judge(a, b, 6, NULL, NULL, 0, &again);
	assert_true(again.lo == v.lo && again.hi == v.hi && again.ratio == v.ratio);
}

static void test_too_few_rounds(void **state)
{
	const double a[2] = { 100, 101 }, b[2] = { 150, 151 };
	struct vnic_cmp_verdict v;

	(void)state;
	vnic_cmp_judge(a, b, 2, NULL, NULL, 0, &v);
	assert_string_equal(v.text, "too few rounds to tell (--repeat 3 or more)");
}

/* --- the command ------------------------------------------------------------------- */

static char out_path[] = "/tmp/vnic-test-compare-XXXXXX";

/* Runs `vnic bench ARGS` with stdout into out_path; returns the exit status. */
static int bench_to_file(const char *line)
{
	char buf[512], *argv[32];
	int argc = 0, saved, fd, rc;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(out_path, O_WRONLY | O_TRUNC);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	rc = vnic_cmd_bench(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	return rc;
}

static char *slurp(void)
{
	FILE *f = fopen(out_path, "r");
	char *text = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(text);
	assert_true(fread(text, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	return text;
}

static unsigned int count(const char *text, const char *what)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* One session: every request is alone, so auto sends direct and indirect never does. */
static void test_compare_json(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(bench_to_file("bench rr --sessions 1 --compare tx-submit=auto,indirect "
				       "--repeat 3 --duration 0.1 --json --quiet"),
			 0);
	text = slurp();
	assert_int_equal(text[0], '{');
	assert_non_null(strstr(text, "\"compare\": \"tx-submit\""));
	assert_non_null(strstr(text, "\"commit\": \""));
	assert_non_null(strstr(text, "\"command\": \"vnic bench rr --sessions 1 --compare"));
	assert_non_null(strstr(text, "\"case\": \"tx-submit=auto\""));
	assert_non_null(strstr(text, "\"case\": \"tx-submit=indirect\""));
	/* every round of both cases, each with its rate and its path counter */
	assert_int_equal(count(text, "\"p50_us\": "), 6);
	/* six rounds, and the verdict's path: [first, other] summed */
	assert_int_equal(count(text, "\"direct_packets\": "), 6 + 1);
	/* one verdict, against the first, with its interval; the paths differ */
	assert_int_equal(count(text, "\"against_first\": "), 1);
	assert_non_null(strstr(text, "\"ci_low\": "));
	assert_non_null(strstr(text, "\"same_path\": false"));
	assert_non_null(strstr(text, "\"verdict\": \""));
	assert_null(strstr(text, "same path: no measurable difference"));
	free(text);
}

/*
 * Each round starts one case further on: with two cases over two rounds the
 * first case runs first, then last (seq 0 and 3), the second in between.
 */
static void test_rounds_rotate(void **state)
{
	const char *first, *second;
	char *text;

	(void)state;
	assert_int_equal(bench_to_file("bench rr --sessions 1 --compare tx-submit=auto,indirect "
				       "--repeat 2 --duration 0.1 --json --quiet"),
			 0);
	text = slurp();
	first = strstr(text, "\"case\": \"tx-submit=auto\"");
	second = strstr(text, "\"case\": \"tx-submit=indirect\"");
	assert_non_null(first);
	assert_non_null(second);
	assert_true(first < second);
	assert_non_null(strstr(first, "\"seq\": 0,"));
	assert_non_null(strstr(first, "\"seq\": 3,"));
	assert_true(strstr(first, "\"seq\": 0,") < second);
	assert_true(strstr(first, "\"seq\": 3,") < second);
	assert_non_null(strstr(second, "\"seq\": 1,"));
	assert_non_null(strstr(second, "\"seq\": 2,"));
	free(text);
}

/* --repeat alone: the one case, its rounds and spread, no verdict. */
static void test_repeat_json(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(bench_to_file("bench stream --repeat 3 --duration 0.1 --json --quiet"), 0);
	text = slurp();
	assert_non_null(strstr(text, "\"case\": \"as given\""));
	assert_non_null(strstr(text, "\"unit\": \"Gbit/s\""));
	assert_int_equal(count(text, "\"work_cpu_ns\": "), 3 + 1);	/* rounds + spread */
	assert_null(strstr(text, "against_first"));
	free(text);
}

/*
 * A round that carried nothing runs again, twice as long: at 150 ms each way
 * a transaction takes 0.3 s at least, so the 0.1 s round and the 0.2 s one
 * after it carry none, and the round kept is the third or fourth run.
 */
static void test_floor(void **state)
{
	const char *again;
	char *text;

	(void)state;
	assert_int_equal(bench_to_file("bench rr --repeat 1 --duration 0.1 --delay-us 150000 "
				       "--json --quiet"),
			 0);
	text = slurp();
	again = strstr(text, "\"runs_again\": ");
	assert_non_null(again);
	assert_true(strtoul(again + strlen("\"runs_again\": "), NULL, 10) >= 2);
	assert_int_equal(count(text, "\"p50_us\": "), 1);
	free(text);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"bench rr --compare no-such=1,2",
		"bench rr --compare tx-submit=auto",
		"bench rr --compare tx-submit=auto,never",
		"bench rr --compare tx-submit",
		"bench rr --repeat 0",
		"bench rr --repeat 101",
		"bench rr --repeat 3 --trace",
		"bench rr --compare tx-submit=auto,indirect --samples x.csv",
		"bench rr --compare mtu=1500,9000 --compare loss=0,0.01",
	};
	FILE *saved = stderr;

	(void)state;
	stderr = fopen("/dev/null", "w");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = bench_to_file(bad[i]);

		if (rc == 0) {
			fclose(stderr);
			stderr = saved;
			fail_msg("accepted: '%s'", bad[i]);
		}
	}
	fclose(stderr);
	stderr = saved;
}

static int setup(void **state)
{
	int fd = mkstemp(out_path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(out_path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_path_whatever_the_rates),
		cmocka_unit_test(test_different_path),
		cmocka_unit_test(test_noise_is_no_difference),
		cmocka_unit_test(test_too_few_rounds),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_compare_json),
		cmocka_unit_test(test_rounds_rotate),
		cmocka_unit_test(test_repeat_json),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
