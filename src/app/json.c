// SPDX-License-Identifier: MIT
/* A streaming JSON writer: objects, strings, numbers. Enough for reports. */
#include <math.h>
#include <stdio.h>

#include "app.h"

static void indent(struct vnic_json *j)
{
	if (j->compact)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void put_key(struct vnic_json *j, const char *key)
{
	if (j->need_comma)
		fputc(',', j->f);
	indent(j);
	j->need_comma = true;
	if (!key)
		return;
	fputc('"', j->f);
	for (const char *p = key; *p; p++) {
		/* Keys and values come from our own tables and user strings: escape both. */
		if (*p == '"' || *p == '\\')
			fputc('\\', j->f);
		if ((unsigned char)*p < 0x20)
			fprintf(j->f, "\\u%04x", (unsigned char)*p);
		else
			fputc(*p, j->f);
	}
	fputs("\": ", j->f);
}

void vnic_json_begin(struct vnic_json *j, FILE *f)
{
	j->f = f;
	j->depth = 1;
	j->need_comma = false;
	j->compact = false;
	fputc('{', f);
}

void vnic_json_begin_line(struct vnic_json *j, FILE *f)
{
	vnic_json_begin(j, f);
	j->compact = true;
}

void vnic_json_end(struct vnic_json *j)
{
	j->depth = 0;
	indent(j);
	fputs("}\n", j->f);
	fflush(j->f);
}

void vnic_json_object(struct vnic_json *j, const char *key)
{
	put_key(j, key);
	fputc('{', j->f);
	j->depth++;
	j->need_comma = false;
}

void vnic_json_close(struct vnic_json *j)
{
	j->depth--;
	indent(j);
	fputc('}', j->f);
	j->need_comma = true;
}

void vnic_json_array(struct vnic_json *j, const char *key)
{
	put_key(j, key);
	fputc('[', j->f);
	j->depth++;
	j->need_comma = false;
}

void vnic_json_array_close(struct vnic_json *j)
{
	bool empty = !j->need_comma;

	j->depth--;
	if (!empty)
		indent(j);
	fputc(']', j->f);
	j->need_comma = true;
}

void vnic_json_str(struct vnic_json *j, const char *key, const char *v)
{
	put_key(j, key);
	fputc('"', j->f);
	for (const char *p = v ? v : ""; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->f, "\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			fprintf(j->f, "\\u%04x", (unsigned char)*p);
		else
			fputc(*p, j->f);
	}
	fputc('"', j->f);
}

void vnic_json_u64(struct vnic_json *j, const char *key, uint64_t v)
{
	put_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void vnic_json_double(struct vnic_json *j, const char *key, double v)
{
	put_key(j, key);
	/* JSON has no NaN or infinity. */
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.6g", v);
}

void vnic_json_bool(struct vnic_json *j, const char *key, bool v)
{
	put_key(j, key);
	fputs(v ? "true" : "false", j->f);
}
