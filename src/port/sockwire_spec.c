// SPDX-License-Identifier: MIT
/*
 * The socket wire's spec string (contract in port.h, "Socket wire"): pure,
 * no I/O, no name resolution (that is create's).
 *
 *   stream:unix:PATH[,server]
 *   stream:tcp:HOST:PORT[,server]
 *   dgram:udp:LHOST:LPORT,RHOST:RPORT
 */
#include <stddef.h>
#include <string.h>

#include "port.h"

static const char *const spec_err_str[VNIC_SOCKWIRE_SPEC_MAX] = {
	[VNIC_SOCKWIRE_SPEC_OK] = "ok",
	[VNIC_SOCKWIRE_SPEC_FRAMING] = "the framing is 'stream:' or 'dgram:'",
	[VNIC_SOCKWIRE_SPEC_TRANSPORT] =
		"a stream goes over 'unix:' or 'tcp:', a dgram over 'udp:'",
	[VNIC_SOCKWIRE_SPEC_PATH] = "the socket path is empty or longer than 107 bytes",
	[VNIC_SOCKWIRE_SPEC_HOST] =
		"a host is empty, too long, or an IPv6 literal without its brackets ([::1]:5000)",
	[VNIC_SOCKWIRE_SPEC_PORT] = "a port is not a number in 1..65535 (0 only to listen or bind)",
	[VNIC_SOCKWIRE_SPEC_REMOTE] = "a dgram wire needs ',RHOST:RPORT' after its own address",
	[VNIC_SOCKWIRE_SPEC_OPTION] = "only ',server' may follow a stream's address",
};

const char *vnic_sockwire_spec_err_str(enum vnic_sockwire_spec_err err)
{
	return (unsigned int)err < VNIC_SOCKWIRE_SPEC_MAX ? spec_err_str[err] : "unknown";
}

/* A decimal port in s[0..len): no sign, no leading junk, 0..65535. */
static bool port_of(const char *s, size_t len, uint16_t *port)
{
	uint32_t v = 0;

	if (!len || len > 5)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/*
 * HOST:PORT in s[0..len), HOST maybe a bracketed IPv6 literal. Port 0 only
 * when zero_ok (an address to listen on or bind).
 */
static enum vnic_sockwire_spec_err host_port(const char *s, size_t len, bool zero_ok,
					     struct vnic_sockwire_host *h)
{
	const char *host = s, *colon;
	size_t hlen;

	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (!close || close == s + 1)
			return VNIC_SOCKWIRE_SPEC_HOST;
		host = s + 1;
		hlen = (size_t)(close - host);
		colon = close + 1;
		if (colon >= s + len || *colon != ':')
			return VNIC_SOCKWIRE_SPEC_PORT;
	} else {
		colon = NULL;
		for (size_t i = len; i-- > 0;)
			if (s[i] == ':') {
				colon = s + i;
				break;
			}
		if (!colon)
			return VNIC_SOCKWIRE_SPEC_PORT;
		hlen = (size_t)(colon - s);
		/* a colon left in the host: an IPv6 literal that needs its brackets */
		if (memchr(s, ':', hlen))
			return VNIC_SOCKWIRE_SPEC_HOST;
	}
	if (!hlen || hlen >= sizeof(h->host))
		return VNIC_SOCKWIRE_SPEC_HOST;
	for (size_t i = 0; i < hlen; i++)
		if (host[i] == ',' || host[i] == ' ' || host[i] == '[' || host[i] == ']' ||
		    (unsigned char)host[i] < 0x21)
			return VNIC_SOCKWIRE_SPEC_HOST;
	if (!port_of(colon + 1, (size_t)(s + len - colon - 1), &h->port) || (!h->port && !zero_ok))
		return VNIC_SOCKWIRE_SPEC_PORT;
	memcpy(h->host, host, hlen);
	h->host[hlen] = '\0';
	return VNIC_SOCKWIRE_SPEC_OK;
}

/* Takes a trailing ",server" off rest (its length *len) for a stream. */
static bool take_server(const char *rest, size_t *len)
{
	static const char suffix[] = ",server";
	size_t sl = sizeof(suffix) - 1;

	if (*len >= sl && !memcmp(rest + *len - sl, suffix, sl)) {
		*len -= sl;
		return true;
	}
	return false;
}

static enum vnic_sockwire_spec_err parse_unix(const char *rest, struct vnic_sockwire_spec *o)
{
	size_t len = strlen(rest);

	o->kind = VNIC_SOCKWIRE_STREAM_UNIX;
	o->server = take_server(rest, &len);
	if (!len || len >= sizeof(o->path))
		return VNIC_SOCKWIRE_SPEC_PATH;
	memcpy(o->path, rest, len);
	o->path[len] = '\0';
	return VNIC_SOCKWIRE_SPEC_OK;
}

static enum vnic_sockwire_spec_err parse_tcp(const char *rest, struct vnic_sockwire_spec *o)
{
	size_t len = strlen(rest);
	const char *comma;

	o->kind = VNIC_SOCKWIRE_STREAM_TCP;
	o->server = take_server(rest, &len);
	/* a comma left after the address is an option we do not know */
	comma = memchr(rest, ',', len);
	if (comma)
		return VNIC_SOCKWIRE_SPEC_OPTION;
	return host_port(rest, len, o->server, &o->local);
}

static enum vnic_sockwire_spec_err parse_udp(const char *rest, struct vnic_sockwire_spec *o)
{
	const char *comma = strchr(rest, ',');
	enum vnic_sockwire_spec_err err;

	o->kind = VNIC_SOCKWIRE_DGRAM_UDP;
	if (!comma)
		return VNIC_SOCKWIRE_SPEC_REMOTE;
	err = host_port(rest, (size_t)(comma - rest), true, &o->local);
	if (err)
		return err;
	if (strchr(comma + 1, ','))
		return VNIC_SOCKWIRE_SPEC_OPTION;
	if (!comma[1])
		return VNIC_SOCKWIRE_SPEC_REMOTE;
	return host_port(comma + 1, strlen(comma + 1), false, &o->remote);
}

enum vnic_sockwire_spec_err vnic_sockwire_parse(const char *s, struct vnic_sockwire_spec *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return VNIC_SOCKWIRE_SPEC_FRAMING;
	if (!strncmp(s, "stream:", 7)) {
		s += 7;
		if (!strncmp(s, "unix:", 5))
			return parse_unix(s + 5, out);
		if (!strncmp(s, "tcp:", 4))
			return parse_tcp(s + 4, out);
		return VNIC_SOCKWIRE_SPEC_TRANSPORT;
	}
	if (!strncmp(s, "dgram:", 6)) {
		s += 6;
		if (!strncmp(s, "udp:", 4))
			return parse_udp(s + 4, out);
		return VNIC_SOCKWIRE_SPEC_TRANSPORT;
	}
	return VNIC_SOCKWIRE_SPEC_FRAMING;
}
