// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the control socket's request parser,
 * vnic_ctl_parse_request (src/app/ctl.c): the input is whatever a client
 * sent before the server stopped reading (a newline, EOF, or its buffer of
 * VNIC_CTL_LINE_MAX + 2 bytes full), the same call the server thread makes.
 *
 * Checked against a deliberately plain reference of docs/STATS.md's rules
 * (first newline ends the line, one CR before it dropped, 1..256 printable
 * ASCII bytes, then exactly "ping", "stats" or "stats json"), answer and
 * reason alike; bytes after the line never matter. libFuzzer hands over an
 * exactly sized copy, so a read past it is AddressSanitizer's to report.
 *
 * Corpus: fuzz/corpus/ctl_request/.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "app/app.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			__builtin_trap();                                                          \
	} while (0)

/* The server's answers (docs/STATS.md: stable, scripts match them). */
static const char *const err_empty = "error: empty request";
static const char *const err_long = "error: request longer than 256 bytes";
static const char *const err_bytes = "error: request has control or non-ASCII bytes";
static const char *const err_unknown = "error: unknown command (ping, stats, stats json)";

static enum vnic_ctl_req reference(const uint8_t *b, size_t n, const char **why)
{
	size_t end = 0, i;

	while (end < n && b[end] != '\n')
		end++;
	if (end > 0 && b[end - 1] == '\r')
		end--;
	*why = NULL;
	if (end > 256) {
		*why = err_long;
		return VNIC_CTL_REQ_BAD;
	}
	if (end == 0) {
		*why = err_empty;
		return VNIC_CTL_REQ_BAD;
	}
	for (i = 0; i < end; i++) {
		if (b[i] < ' ' || b[i] > '~') {
			*why = err_bytes;
			return VNIC_CTL_REQ_BAD;
		}
	}
	if (end == strlen("ping") && !memcmp(b, "ping", end))
		return VNIC_CTL_REQ_PING;
	if (end == strlen("stats") && !memcmp(b, "stats", end))
		return VNIC_CTL_REQ_STATS;
	if (end == strlen("stats json") && !memcmp(b, "stats json", end))
		return VNIC_CTL_REQ_STATS_JSON;
	*why = err_unknown;
	return VNIC_CTL_REQ_BAD;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why, *want_why;
	enum vnic_ctl_req got, want;
	const uint8_t *nl;

	/* the server's buffer: it never reads more */
	if (size > VNIC_CTL_LINE_MAX + 2)
		return -1;
	got = vnic_ctl_parse_request((const char *)data, size, &why);
	want = reference(data, size, &want_why);
	CHECK(got == want);
	if (want == VNIC_CTL_REQ_BAD)
		CHECK(why && !strcmp(why, want_why));
	else
		CHECK(!why);

	/* what follows the first newline is never looked at */
	nl = size ? memchr(data, '\n', size) : NULL;
	if (nl) {
		size_t line = (size_t)(nl - data) + 1;

		CHECK(vnic_ctl_parse_request((const char *)data, line, &why) == got);
	}
	return 0;
}
