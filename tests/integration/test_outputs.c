// SPDX-License-Identifier: MIT
/*
 * What `vnic bench` writes besides its report. Every output path is opened
 * before the traffic starts, so a directory or a missing folder costs one
 * line and exit status 1 at once, not a whole run; and --pcap writes a
 * capture that reads back record for record: the pcap format read here by
 * hand, and by tshark when it is installed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vnic-test-outputs-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	/* the control sockets go here too, not to the real /run/vnic */
	return setenv("XDG_RUNTIME_DIR", tmpdir, 1);
}

static int teardown_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

struct cmd_result {
	int status;
	double seconds;
	char err[1024];		/* what it printed on stderr */
	unsigned int lines;	/* ... in so many lines */
};

/* Runs `vnic bench` with the words of line, stderr caught. */
static void bench_cmd(const char *line, struct cmd_result *res)
{
	static char buf[1024];
	char errpath[128], *argv[32], *save;
	int argc = 0, fd, saved, saved_out, null;
	uint64_t t0;
	ssize_t n;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 31; t = strtok_r(NULL, " ", &save))
		argv[argc++] = strcmp(t, "''") ? t : (char *)"";
	argv[argc] = NULL;
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmpdir);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	fflush(stdout);
	saved = dup(STDERR_FILENO);
	saved_out = dup(STDOUT_FILENO);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(saved >= 0 && saved_out >= 0 && null >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	/* the report of a run that does start is not what is looked at */
	assert_int_equal(dup2(null, STDOUT_FILENO), STDOUT_FILENO);
	t0 = vnic_now_ns();
	res->status = vnic_cmd_bench(argc, argv);
	res->seconds = (double)(vnic_now_ns() - t0) / 1e9;
	fflush(stderr);
	fflush(stdout);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	assert_int_equal(dup2(saved_out, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	close(saved_out);
	close(null);
	n = pread(fd, res->err, sizeof(res->err) - 1, 0);
	close(fd);
	res->err[n > 0 ? n : 0] = '\0';
	res->lines = 0;
	for (const char *p = res->err; *p; p++)
		res->lines += *p == '\n';
	print_message("vnic %s -> exit %d after %.2f s: %s", line, res->status, res->seconds,
		      res->err[0] ? res->err : "(nothing on stderr)\n");
}

/*
 * A bad output path: exit status 1, one line that names the option and the
 * path and says why, and no run: the 30 s of traffic asked for never start.
 */
static void expect_refused_at_once(const char *line, const char *want)
{
	struct cmd_result res;

	bench_cmd(line, &res);
	assert_int_equal(res.status, 1);
	assert_int_equal(res.lines, 1);
	if (!strstr(res.err, want))
		fail_msg("'%s' does not say '%s'", res.err, want);
	assert_true(res.seconds < 10);
}

static void test_samples_checked_before_the_run(void **state)
{
	char line[256], want[192];
	struct cmd_result res;
	struct stat st;

	(void)state;
	/* a directory */
	snprintf(line, sizeof(line), "bench rr --duration 30 --quiet --no-ctl --samples %s", tmpdir);
	snprintf(want, sizeof(want), "vnic bench: --samples %s: a directory", tmpdir);
	expect_refused_at_once(line, want);
	/* a folder that does not exist: nothing is created either */
	snprintf(line, sizeof(line),
		 "bench rr --duration 30 --quiet --no-ctl --samples %s/missing/s.csv", tmpdir);
	snprintf(want, sizeof(want), "--samples %s/missing/s.csv: no folder %s/missing", tmpdir,
		 tmpdir);
	expect_refused_at_once(line, want);
	snprintf(line, sizeof(line), "%s/missing", tmpdir);
	assert_int_equal(stat(line, &st), -1);
	/* an empty name is a bad argument */
	bench_cmd("bench rr --duration 30 --quiet --no-ctl --samples ''", &res);
	assert_int_equal(res.status, 2);
	assert_true(res.seconds < 10);
	/* a good path is still written, at the end of the run */
	snprintf(line, sizeof(line), "bench rr --duration 0.3 --quiet --no-ctl --samples %s/s.csv",
		 tmpdir);
	bench_cmd(line, &res);
	assert_int_equal(res.status, 0);
	snprintf(line, sizeof(line), "%s/s.csv", tmpdir);
	assert_int_equal(stat(line, &st), 0);
	assert_true(st.st_size > 100);
}

static void test_pcap_checked_before_the_run(void **state)
{
	char line[256], want[192];
	struct cmd_result res;

	(void)state;
	snprintf(line, sizeof(line), "bench stream --duration 30 --quiet --no-ctl --pcap %s",
		 tmpdir);
	snprintf(want, sizeof(want), "vnic bench: --pcap %s: a directory", tmpdir);
	expect_refused_at_once(line, want);
	snprintf(line, sizeof(line),
		 "bench stream --duration 30 --quiet --no-ctl --pcap %s/no/w.pcap", tmpdir);
	snprintf(want, sizeof(want), "--pcap %s/no/w.pcap: no folder %s/no", tmpdir, tmpdir);
	expect_refused_at_once(line, want);
	/* the options that shape a capture need one */
	bench_cmd("bench stream --duration 30 --quiet --no-ctl --snaplen 64", &res);
	assert_int_equal(res.status, 2);
	assert_non_null(strstr(res.err, "--snaplen shapes the capture: it needs --pcap FILE"));
}

/* ---------------------------------------------------------------------------
 * A capture read back
 * ------------------------------------------------------------------------- */

static uint64_t counter(const struct vnic_bench_run *r, const char *name)
{
	static struct vnic_counter all[8192];
	unsigned int n = vnic_bench_counters((void *)r, all, 8192);
	const struct vnic_counter *c = vnic_counter_find(all, n < 8192 ? n : 8192, name);

	if (!c)
		fail_msg("no counter %s", name);
	return c ? c->value : 0;
}

struct pcap_read {
	uint32_t magic, snaplen, linktype;
	uint64_t records, truncated;
	uint32_t max_caplen;
};

/*
 * The pcap format (a 24-byte file header, then a 16-byte header per record)
 * read by hand, every record checked: caplen = min(len, snaplen).
 */
static void read_pcap(const char *path, struct pcap_read *pr)
{
	uint32_t fh[6], rh[4];
	static uint8_t data[65536];
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	memset(pr, 0, sizeof(*pr));
	assert_int_equal(fread(fh, 4, 6, f), 6);
	pr->magic = fh[0];
	pr->snaplen = fh[4];
	pr->linktype = fh[5];
	while (fread(rh, 4, 4, f) == 4) {
		uint32_t caplen = rh[2], len = rh[3];

		assert_true(caplen <= pr->snaplen);
		assert_int_equal(caplen, len < pr->snaplen ? len : pr->snaplen);
		assert_int_equal(fread(data, 1, caplen, f), caplen);
		assert_true(rh[1] < 1000000000u);	/* nanoseconds */
		pr->records++;
		pr->truncated += len > caplen;
		if (caplen > pr->max_caplen)
			pr->max_caplen = caplen;
	}
	assert_true(feof(f));
	fclose(f);
}

/* Frames tshark counts in path (io,stat over the whole file), or -1 without tshark. */
static int64_t tshark_frames(const char *path, bool *tcp)
{
	char cmd[512], line[256];
	int64_t frames = -1;
	FILE *p;

	*tcp = false;
	if (system("command -v tshark >/dev/null 2>&1"))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "tshark -r '%s' -q -o tcp.analyze_sequence_numbers:FALSE -z io,phs 2>&1", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		long long n;

		if (sscanf(line, " eth frames:%lld", &n) == 1)
			frames = n;
		if (strstr(line, " tcp "))
			*tcp = true;
	}
	assert_int_equal(pclose(p), 0);
	return frames;
}

static void test_bench_pcap_reads_back(void **state)
{
	struct vnic_bench_run *r = calloc(1, sizeof(*r));
	static struct vnic_bench_opts o;
	char line[256], path[128];
	struct pcap_read pr;
	uint64_t written;
	int64_t frames;
	bool tcp;

	(void)state;
	if (!vnic_pcap_supported())
		skip();
	assert_non_null(r);
	snprintf(path, sizeof(path), "%s/wire.pcap", tmpdir);
	snprintf(line, sizeof(line), "bench stream --duration 0.5 --quiet --no-ctl --pcap %s "
		 "--snaplen 96 --pcap-lossless", path);
	{
		static char buf[256];
		char *argv[16], *save;
		int argc = 0;

		snprintf(buf, sizeof(buf), "%s", line);
		for (char *t = strtok_r(buf, " ", &save); t && argc < 15;
		     t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
		argv[argc] = NULL;
		assert_int_equal(vnic_bench_parse(argc, argv, &o), 0);
	}
	assert_string_equal(o.pcap.path, path);
	assert_int_equal(o.pcap.snaplen, 96);
	assert_true(o.pcap.lossless);
	r->o = &o;
	assert_int_equal(vnic_bench_run(r), 0);
	written = counter(r, "pcap.written");
	print_message("%" PRIu64 " frames captured, %" PRIu64 " left out, %" PRIu64
		      " waits; %" PRIu64 " on the cable\n",
		      written, counter(r, "pcap.left_out"), counter(r, "pcap.waits"),
		      counter(r, "cable.ab_tx_frames") + counter(r, "cable.ba_tx_frames"));
	/* lossless: every frame the cable carried, each way */
	assert_int_equal(counter(r, "pcap.left_out"), 0);
	assert_int_equal(written, counter(r, "cable.ab_tx_frames") +
					  counter(r, "cable.ba_tx_frames"));
	assert_true(written > 1000);

	read_pcap(path, &pr);
	assert_int_equal(pr.magic, 0xa1b23c4d);	/* nanosecond timestamps */
	assert_int_equal(pr.linktype, 1);	/* Ethernet */
	assert_int_equal(pr.snaplen, 96);
	assert_int_equal(pr.records, written);
	assert_int_equal(pr.max_caplen, 96);
	assert_true(pr.truncated > 0);		/* the data frames, cut to their headers */

	frames = tshark_frames(path, &tcp);
	if (frames < 0) {
		print_message("no tshark: the capture was read by hand only\n");
	} else {
		assert_int_equal(frames, (int64_t)written);
		assert_true(tcp);
	}
	vnic_bench_cleanup(r);
	free(r);
}

/* --pcap-count: the capture stops after so many frames, the run goes on. */
static void test_bench_pcap_count(void **state)
{
	struct vnic_bench_run *r = calloc(1, sizeof(*r));
	static struct vnic_bench_opts o;
	struct pcap_read pr;
	char path[128];

	(void)state;
	if (!vnic_pcap_supported())
		skip();
	assert_non_null(r);
	snprintf(path, sizeof(path), "%s/count.pcap", tmpdir);
	vnic_bench_opts_default(&o, VNIC_WL_RR);
	o.quiet = true;
	o.pcap.path = path;
	o.pcap.count = 50;
	/* Traffic well past the count: longer runs if a loaded machine made too little. */
	for (o.duration_s = 0.3;; o.duration_s *= 4) {
		memset(r, 0, sizeof(*r));
		r->o = &o;
		assert_int_equal(vnic_bench_run(r), 0);
		if (r->res.transactions > 100)
			break;
		vnic_bench_cleanup(r);
		assert_true(o.duration_s < 5);
	}
	assert_int_equal(counter(r, "pcap.written"), 50);
	assert_int_equal(counter(r, "pcap.left_out"), 0);
	read_pcap(path, &pr);
	assert_int_equal(pr.records, 50);
	vnic_bench_cleanup(r);
	free(r);
}

/* A capture holds other people's traffic: mode 0600, whatever the umask or the file was. */
static void test_pcap_owner_only(void **state)
{
	struct vnic_bench_run *r = calloc(1, sizeof(*r));
	static struct vnic_bench_opts o;
	char path[128];
	struct stat st;
	FILE *f;

	(void)state;
	if (!vnic_pcap_supported())
		skip();
	assert_non_null(r);
	snprintf(path, sizeof(path), "%s/private.pcap", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	vnic_bench_opts_default(&o, VNIC_WL_RR);
	o.duration_s = 0.1;
	o.quiet = true;
	o.pcap.path = path;
	o.pcap.count = 10;
	r->o = &o;
	assert_int_equal(vnic_bench_run(r), 0);
	vnic_bench_cleanup(r);
	free(r);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(st.st_size > 24); /* the header and some records */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_checked_before_the_run),
		cmocka_unit_test(test_pcap_owner_only),
		cmocka_unit_test(test_pcap_checked_before_the_run),
		cmocka_unit_test(test_bench_pcap_reads_back),
		cmocka_unit_test(test_bench_pcap_count),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
