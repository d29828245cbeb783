// SPDX-License-Identifier: MIT
/*
 * Strict number parsing for the command line (the whole string or an
 * error), the pcap options both commands take, and output files opened
 * before a run.
 */
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"

/*
 * Where the parse helpers say why they refused: stderr, or per thread a
 * stream of the caller's (the control socket answers `vnic set` with it).
 */
static __thread FILE *err_sink;

FILE *vnic_arg_err(void)
{
	return err_sink ? err_sink : stderr;
}

void vnic_arg_err_to(FILE *f)
{
	err_sink = f;
}

int vnic_arg_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-') {
		fprintf(vnic_arg_err(), "vnic: %s: expected a non-negative integer, got '%s'\n", opt,
			s ? s : "");
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(vnic_arg_err(), "vnic: %s: '%s' is not an integer\n", opt, s);
		return -EINVAL;
	}
	if (v < min || v > max) {
		fprintf(vnic_arg_err(), "vnic: %s: %llu is out of range [%" PRIu64 ", %" PRIu64 "]\n", opt, v,
			min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int vnic_arg_si(const char *opt, const char *s, uint64_t *out)
{
	double v, mult = 1;
	char *end;

	if (!s || !*s || *s == '-') {
		fprintf(vnic_arg_err(), "vnic: %s: expected a non-negative number, got '%s'\n", opt,
			s ? s : "");
		return -EINVAL;
	}
	errno = 0;
	v = strtod(s, &end);
	switch (*end) {
	case 'k': case 'K': mult = 1e3; end++; break;
	case 'm': case 'M': mult = 1e6; end++; break;
	case 'g': case 'G': mult = 1e9; end++; break;
	default: break;
	}
	if (errno || *end || !isfinite(v) || v < 0 || v * mult > 1e18) {
		fprintf(vnic_arg_err(), "vnic: %s: '%s' is not a number (suffixes k, M, G)\n", opt, s);
		return -EINVAL;
	}
	*out = (uint64_t)(v * mult);
	return 0;
}

int vnic_arg_double(const char *opt, const char *s, double min, double max, double *out)
{
	double v;
	char *end;

	errno = 0;
	v = s ? strtod(s, &end) : 0;
	if (!s || !*s || errno || *end || !isfinite(v)) {
		fprintf(vnic_arg_err(), "vnic: %s: '%s' is not a number\n", opt, s ? s : "");
		return -EINVAL;
	}
	if (v < min || v > max) {
		fprintf(vnic_arg_err(), "vnic: %s: %g is out of range [%g, %g]\n", opt, v, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int vnic_arg_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = vnic_arg_u64(opt, s, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int vnic_arg_bad_choice(const char *opt, const char *s, const char *choices)
{
	fprintf(vnic_arg_err(), "vnic: %s: '%s' is not one of %s\n", opt, s, choices);
	return -EINVAL;
}

int vnic_arg_ctl_name(const char *opt, const char *s)
{
	if (vnic_ctl_name_valid(s))
		return 0;
	fprintf(vnic_arg_err(), "vnic: %s: '%s' is not 1..63 of A-Z a-z 0-9 . _ - (no leading '.')\n", opt,
		s);
	return -EINVAL;
}

int vnic_arg_path(const char *opt, const char *s)
{
	if (!s || !*s) {
		fprintf(vnic_arg_err(), "vnic: %s: an empty file name\n", opt);
		return -EINVAL;
	}
	return 0;
}

int vnic_arg_pcap(unsigned int i, const char *arg, struct vnic_pcap_opts *p)
{
	switch (i) {
	case 0:
		p->path = arg;
		return vnic_arg_path("--pcap", arg);
	case 1:
		/* an Ethernet header at least; a frame on a 9000-byte wire fits in 64 KiB */
		return vnic_arg_u32("--snaplen", arg, 14, 65535, &p->snaplen);
	case 2:
		return vnic_arg_u64("--pcap-count", arg, 1, UINT64_MAX / 2, &p->count);
	case 3:
		p->lossless = true;
		return 0;
	default:
		return -EINVAL;
	}
}

int vnic_pcap_opts_check(const char *cmd, const struct vnic_pcap_opts *p, bool cable_tso)
{
	const char *which = p->snaplen ? "--snaplen" : p->count ? "--pcap-count" :
			    p->lossless ? "--pcap-lossless" : NULL;

	if (which && !p->path) {
		fprintf(stderr, "%s: %s shapes the capture: it needs --pcap FILE\n", cmd, which);
		return -EINVAL;
	}
	/* the mirror records what the other device receives, so it keeps MTU frames on the cable */
	if (p->path && cable_tso) {
		fprintf(stderr, "%s: --pcap keeps MTU frames on the cable, so no superframes cross "
			"it while it captures: give --cable-tso or --pcap, not both\n", cmd);
		return -EINVAL;
	}
	return 0;
}

FILE *vnic_out_open(const char *cmd, const char *opt, const char *path)
{
	return vnic_out_open_mode(cmd, opt, path, false);
}

FILE *vnic_out_open_mode(const char *cmd, const char *opt, const char *path, bool owner_only)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	FILE *f = NULL;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, owner_only ? 0600 : 0666);
	/* An existing file keeps its mode on O_CREAT: a capture must not stay readable. */
	if (fd >= 0 && owner_only && fchmod(fd, 0600)) {
		err = errno;
		close(fd);
		fprintf(stderr, "%s: %s %s: %s\n", cmd, opt, path, strerror(err));
		return NULL;
	}
	if (fd >= 0) {
		f = fdopen(fd, "w");
		if (f)
			return f;
		close(fd);
	}
	err = errno;
	if (err == EISDIR || (!stat(path, &st) && S_ISDIR(st.st_mode)))
		fprintf(stderr, "%s: %s %s: a directory; give a file name\n", cmd, opt, path);
	else if (err == ENOENT && slash)
		fprintf(stderr, "%s: %s %s: no folder %.*s\n", cmd, opt, path,
			slash == path ? 1 : (int)(slash - path), path);
	else if (err == ENOTDIR)
		fprintf(stderr, "%s: %s %s: a part of the path is not a folder\n", cmd, opt, path);
	else
		fprintf(stderr, "%s: %s %s: %s\n", cmd, opt, path, strerror(err));
	return NULL;
}
