/* json.c: the streaming JSON writer behind every --json: pretty-printed with two-space
 * indentation, always valid JSON whatever bytes the strings hold. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

/*
 * Layout:
 *
 *	{
 *	  "name": "shard-000.slab",
 *	  "pages": [
 *	    1,
 *	    2
 *	  ],
 *	  "options": {}
 *	}
 *
 * An empty object or array is "{}" or "[]" on one line.
 *
 * first[] is indexed by depth, clamped to its last slot: a parent's flag is always 0 once a
 * child container has begun (the child is one of its elements), so levels sharing the last
 * slot still get their commas right, and nesting deeper than the array is merely unusual.
 */
#define FIRST_SLOTS ((int)(sizeof(((struct json *)0)->first) / sizeof(int)))

static int *first_flag(struct json *j)
{
	return &j->first[j->depth < FIRST_SLOTS ? j->depth : FIRST_SLOTS - 1];
}

static void indent(struct json *j)
{
	int i;

	for (i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/*
 * A JSON string of len bytes: valid JSON whatever they are, and nothing in it that acts on a
 * terminal when the output is read there: control bytes (DEL too), C1 controls and the
 * bidirectional controls of cli_unsafe_codepoint() as \uXXXX (a parser reads the same
 * string), ill-formed UTF-8 as U+FFFD.
 */
static void put_string(FILE *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	putc('"', out);
	while (i < len) {
		unsigned char c = s[i];
		const char *esc = NULL;
		char ubuf[8];
		int k;

		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(ubuf, sizeof(ubuf), "\\u%04x", c);
				esc = ubuf;
			}
			break;
		}
		if (esc != NULL) {
			k = 1;
		} else {
			k = cli_utf8_seq(s + i, len - i);
			if (k < 0) {
				esc = "\\ufffd";
				k = -k;
			} else if (k > 1 && cli_unsafe_codepoint(cli_utf8_value(s + i, k))) {
				snprintf(ubuf, sizeof(ubuf), "\\u%04x", (unsigned)cli_utf8_value(s + i, k));
				esc = ubuf;
			}
		}
		if (esc == NULL) {
			/* Plain bytes go out in runs, not one putc each. */
			run += (size_t)k;
			i += (size_t)k;
			continue;
		}
		fwrite(s + i - run, 1, run, out);
		run = 0;
		fputs(esc, out);
		i += (size_t)k;
	}
	fwrite(s + i - run, 1, run, out);
	putc('"', out);
}

/* Comma, newline and indentation before a value, then its key if it has one. */
static void prefix(struct json *j, const char *key)
{
	int *first = first_flag(j);

	/* Several top-level values (not one document) go one after another, no comma. */
	if (!*first && j->depth > 0)
		putc(',', j->out);
	if (j->depth > 0 || !*first)
		putc('\n', j->out);
	*first = 0;
	indent(j);
	if (key != NULL) {
		put_string(j->out, key, strlen(key));
		fputs(": ", j->out);
		j->after_key = 1;
	}
}

static void done(struct json *j)
{
	j->after_key = 0;
}

void json_init(struct json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->first[0] = 1;
}

static void begin(struct json *j, const char *key, int open)
{
	prefix(j, key);
	putc(open, j->out);
	done(j);
	j->depth++;
	*first_flag(j) = 1;
}

static void end(struct json *j, int close)
{
	int empty;

	/* Unbalanced end: a caller bug; writing nothing keeps the memory safe. */
	if (j->depth == 0)
		return;
	empty = *first_flag(j);
	j->depth--;
	*first_flag(j) = 0;
	if (!empty) {
		putc('\n', j->out);
		indent(j);
	}
	putc(close, j->out);
}

void json_object_begin(struct json *j, const char *key)
{
	begin(j, key, '{');
}

void json_object_end(struct json *j)
{
	end(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	begin(j, key, '[');
}

void json_array_end(struct json *j)
{
	end(j, ']');
}

void json_string(struct json *j, const char *key, const char *val)
{
	if (val == NULL) {
		json_null(j, key);
		return;
	}
	json_string_n(j, key, val, strlen(val));
}

void json_string_n(struct json *j, const char *key, const char *val, size_t len)
{
	prefix(j, key);
	put_string(j->out, val, len);
	done(j);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	prefix(j, key);
	fprintf(j->out, "%" PRIu64, val);
	done(j);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	prefix(j, key);
	fprintf(j->out, "%" PRId64, val);
	done(j);
}

/*
 * The shortest "%.*g" that reads back as the same double: 0.1 prints "0.1", not the
 * "0.10000000000000001" of %.17g, and nothing is lost. Integral values print without a point
 * ("3"); %g would print 100 as "1e+02", so below 1e17 the precision is widened to keep plain
 * digits. Larger and tiny values keep exponent form ("1e+20", "1.5e-07"), valid JSON too.
 */
void json_double(struct json *j, const char *key, double val)
{
	char buf[40], *p;
	int prec, exp10;

	if (!isfinite(val)) {
		json_null(j, key);
		return;
	}
	/* 17 significant digits always read back, so the loop ends by then. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, val);
		if (strtod(buf, NULL) == val)
			break;
	}
	p = strchr(buf, 'e');
	if (p != NULL) {
		exp10 = atoi(p + 1);
		if (exp10 >= prec && exp10 < 17)
			snprintf(buf, sizeof(buf), "%.*g", exp10 + 1, val);
	}
	/* A locale with a decimal comma would make invalid JSON. */
	for (p = buf; *p != '\0'; p++)
		if (*p == ',')
			*p = '.';
	prefix(j, key);
	fputs(buf, j->out);
	done(j);
}

void json_bool(struct json *j, const char *key, int val)
{
	prefix(j, key);
	fputs(val ? "true" : "false", j->out);
	done(j);
}

void json_null(struct json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->out);
	done(j);
}

/* Not flushed here: the tool's cli_close_stdout() flushes and says why a write failed, which
 * a flush here would leave it to guess (the error's errno gone). */
void json_finish(struct json *j)
{
	putc('\n', j->out);
}
