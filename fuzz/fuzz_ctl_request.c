// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the control socket's request parser,
 * vnic_ctl_parse_request (src/app/ctl.c): the input is whatever a client
 * sent before the server stopped reading (a newline, EOF, or its buffer of
 * VNIC_CTL_LINE_MAX + 2 bytes full), the same call the server thread makes.
 *
 * Checked against a deliberately plain reference of docs/STATS.md's rules
 * (first newline ends the line, one CR before it dropped, 1..256 printable
 * ASCII bytes, then exactly "ping", "stats", "stats json", "show", "show
 * json", or "set " and more), answer and reason alike, with the client's
 * side open and shut; bytes after the line never matter. libFuzzer hands over an
 * exactly sized copy, so a read past it is AddressSanitizer's to report.
 *
 * Corpus: fuzz/corpus/ctl_request/.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "app/app.h"

#include "check.h"

/* The server's answers (docs/STATS.md: stable, scripts match them). */
static const char *const err_empty = "error: empty request";
static const char *const err_long = "error: request longer than 256 bytes";
static const char *const err_bytes = "error: request has control or non-ASCII bytes";
static const char *const err_unknown =
	"error: unknown command (ping, stats, stats json, show, show json, set KEY VALUE...)";

static bool is_line(const uint8_t *b, size_t end, const char *cmd)
{
	return end == strlen(cmd) && !memcmp(b, cmd, end);
}

static enum vnic_ctl_req reference(const uint8_t *b, size_t n, bool eof, const char **why)
{
	size_t end = 0, i;

	*why = NULL;
	while (end < n && b[end] != '\n')
		end++;
	if (end == n) {
		/* no newline: the server's buffer full, or the line still coming */
		if (n >= VNIC_CTL_LINE_MAX + 2) {
			*why = err_long;
			return VNIC_CTL_REQ_BAD;
		}
		if (!eof)
			return VNIC_CTL_REQ_MORE;
	}
	if (end > 0 && b[end - 1] == '\r')
		end--;
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
	if (is_line(b, end, "ping"))
		return VNIC_CTL_REQ_PING;
	if (is_line(b, end, "stats"))
		return VNIC_CTL_REQ_STATS;
	if (is_line(b, end, "stats json"))
		return VNIC_CTL_REQ_STATS_JSON;
	if (is_line(b, end, "show"))
		return VNIC_CTL_REQ_SHOW;
	if (is_line(b, end, "show json"))
		return VNIC_CTL_REQ_SHOW_JSON;
	if (end > 4 && !memcmp(b, "set ", 4))
		return VNIC_CTL_REQ_SET;
	*why = err_unknown;
	return VNIC_CTL_REQ_BAD;
}

static enum vnic_ctl_req parse_checked(const uint8_t *data, size_t size, bool eof)
{
	const char *why, *want_why;
	enum vnic_ctl_req got, want;

	got = vnic_ctl_parse_request((const char *)data, size, eof, &why);
	want = reference(data, size, eof, &want_why);
	FZ_CHECK(got == want);
	if (want == VNIC_CTL_REQ_BAD)
		FZ_CHECK(why && !strcmp(why, want_why));
	else
		FZ_CHECK(!why);
	return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum vnic_ctl_req open, closed;
	const uint8_t *nl;

	/* the server's buffer: it never reads more */
	if (size > VNIC_CTL_LINE_MAX + 2)
		return -1;
	open = parse_checked(data, size, false);
	closed = parse_checked(data, size, true);
	/* EOF only ends a line that had not ended */
	FZ_CHECK(closed != VNIC_CTL_REQ_MORE);
	FZ_CHECK(open == VNIC_CTL_REQ_MORE || open == closed);

	/* what follows the first newline is never looked at */
	nl = size ? memchr(data, '\n', size) : NULL;
	if (nl) {
		size_t line = (size_t)(nl - data) + 1;
		const char *why;

		FZ_CHECK(open != VNIC_CTL_REQ_MORE);
		FZ_CHECK(vnic_ctl_parse_request((const char *)data, line, false, &why) == open);
	}
	return 0;
}
