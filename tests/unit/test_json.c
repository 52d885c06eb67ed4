/* test_json.c: unit tests of lib/fe/json.c: exact pretty-printed layout, string escaping and
 * the replacement of invalid UTF-8, numbers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "unit.h"

static char *text;
static size_t text_len;
static FILE *mem;

static void start(struct json *j)
{
	free(text);
	text = NULL;
	mem = open_memstream(&text, &text_len);
	if (mem == NULL) {
		perror("open_memstream");
		exit(1);
	}
	json_init(j, mem);
}

/* Ends the document and returns all that was written. */
static const char *finish(struct json *j)
{
	json_finish(j);
	fclose(mem);
	mem = NULL;
	return text;
}

/* One string value alone: its rendering, without the final newline. */
static const char *str_n(const char *s, size_t len)
{
	static char buf[256];
	struct json j;
	size_t n;

	start(&j);
	json_string_n(&j, NULL, s, len);
	finish(&j);
	n = strlen(text);
	if (n > 0 && n < sizeof(buf)) {
		memcpy(buf, text, n - 1);
		buf[n - 1] = '\0';
	} else {
		buf[0] = '\0';
	}
	return buf;
}

static const char *str(const char *s)
{
	return str_n(s, strlen(s));
}

static const char *dbl(double v)
{
	static char buf[64];
	struct json j;

	start(&j);
	json_double(&j, NULL, v);
	finish(&j);
	snprintf(buf, sizeof(buf), "%s", text);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void test_nested(void)
{
	struct json j;

	start(&j);
	json_object_begin(&j, NULL);
	json_string(&j, "path", "shard-000.slab");
	json_u64(&j, "page_size", 4096);
	json_i64(&j, "delta", -5);
	json_bool(&j, "ok", 1);
	json_bool(&j, "bad", 0);
	json_null(&j, "none");
	json_array_begin(&j, "pages");
	json_u64(&j, NULL, 1);
	json_u64(&j, NULL, 2);
	json_object_begin(&j, NULL);
	json_string(&j, "k", "v");
	json_object_end(&j);
	json_array_begin(&j, NULL);
	json_array_end(&j);
	json_array_end(&j);
	json_object_begin(&j, "options");
	json_object_end(&j);
	json_object_begin(&j, "inner");
	json_object_begin(&j, "deeper");
	json_u64(&j, "x", 18446744073709551615ULL);
	json_i64(&j, "y", INT64_MIN);
	json_object_end(&j);
	json_object_end(&j);
	json_object_end(&j);
	CHECK_STR(finish(&j),
		"{\n"
		"  \"path\": \"shard-000.slab\",\n"
		"  \"page_size\": 4096,\n"
		"  \"delta\": -5,\n"
		"  \"ok\": true,\n"
		"  \"bad\": false,\n"
		"  \"none\": null,\n"
		"  \"pages\": [\n"
		"    1,\n"
		"    2,\n"
		"    {\n"
		"      \"k\": \"v\"\n"
		"    },\n"
		"    []\n"
		"  ],\n"
		"  \"options\": {},\n"
		"  \"inner\": {\n"
		"    \"deeper\": {\n"
		"      \"x\": 18446744073709551615,\n"
		"      \"y\": -9223372036854775808\n"
		"    }\n"
		"  }\n"
		"}\n");
	CHECK(j.depth == 0);
}

static void test_empty_and_top(void)
{
	struct json j;

	start(&j);
	json_object_begin(&j, NULL);
	json_object_end(&j);
	CHECK_STR(finish(&j), "{}\n");

	start(&j);
	json_array_begin(&j, NULL);
	json_array_end(&j);
	CHECK_STR(finish(&j), "[]\n");

	start(&j);
	json_array_begin(&j, NULL);
	json_string(&j, NULL, "a");
	json_array_end(&j);
	CHECK_STR(finish(&j), "[\n  \"a\"\n]\n");

	start(&j);
	json_u64(&j, NULL, 7);
	CHECK_STR(finish(&j), "7\n");

	start(&j);
	json_string(&j, NULL, NULL);
	CHECK_STR(finish(&j), "null\n");

	/* An unbalanced end writes nothing rather than walking off the stack. */
	start(&j);
	json_object_end(&j);
	CHECK_STR(finish(&j), "\n");
}

static void test_escape(void)
{
	struct json j;

	CHECK_STR(str(""), "\"\"");
	CHECK_STR(str("plain"), "\"plain\"");
	CHECK_STR(str("say \"hi\""), "\"say \\\"hi\\\"\"");
	CHECK_STR(str("C:\\dir\\"), "\"C:\\\\dir\\\\\"");
	CHECK_STR(str("a\nb\tc\rd\be\ff"), "\"a\\nb\\tc\\rd\\be\\ff\"");
	CHECK_STR(str("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
	CHECK_STR(str("/"), "\"/\"");
	CHECK_STR(str_n("a\0b", 3), "\"a\\u0000b\"");

	/* Keys are escaped the same way. */
	start(&j);
	json_object_begin(&j, NULL);
	json_u64(&j, "we\"ird\n", 1);
	json_object_end(&j);
	CHECK_STR(finish(&j), "{\n  \"we\\\"ird\\n\": 1\n}\n");
}

static void test_utf8(void)
{
	/* Well-formed: passed through as it is. */
	CHECK_STR(str("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	CHECK_STR(str("\xe2\x82\xac 5"), "\"\xe2\x82\xac 5\"");
	CHECK_STR(str("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
	CHECK_STR(str("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");                 /* U+D7FF */
	CHECK_STR(str("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");         /* U+10FFFF */

	/* Well-formed, but acting on a terminal: C1 controls and bidirectional controls. */
	CHECK_STR(str("\xc2\x80\xc2\x9b" "2J\xc2\x9f\xc2\xa0"), "\"\\u0080\\u009b2J\\u009f\xc2\xa0\"");
	CHECK_STR(str("a\xe2\x80\xaa\xe2\x80\xae" "b"), "\"a\\u202a\\u202eb\"");
	CHECK_STR(str("\xe2\x81\xa6\xe2\x81\xa9"), "\"\\u2066\\u2069\"");
	/* Their neighbours pass: U+2029, U+202F, U+2065, U+206A. */
	CHECK_STR(str("\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa"),
		  "\"\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\"");

	/* Ill-formed: one U+FFFD per maximal subpart. */
	CHECK_STR(str("a\xff" "b"), "\"a\\ufffdb\"");
	CHECK_STR(str("\x80"), "\"\\ufffd\"");
	CHECK_STR(str("\xc3"), "\"\\ufffd\"");                              /* cut short at end */
	CHECK_STR(str("\xc3(x"), "\"\\ufffd(x\"");
	CHECK_STR(str("\xe2\x82"), "\"\\ufffd\"");
	CHECK_STR(str("\xe2\x82x"), "\"\\ufffdx\"");
	CHECK_STR(str("\xc0\xaf"), "\"\\ufffd\\ufffd\"");                   /* overlong '/' */
	CHECK_STR(str("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"");        /* overlong */
	CHECK_STR(str("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");        /* surrogate */
	CHECK_STR(str("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
	CHECK_STR(str("\xf5\x80"), "\"\\ufffd\\ufffd\"");
	CHECK_STR(str("\xf0\x9f\x98"), "\"\\ufffd\"");
	CHECK_STR(str("\xf0\x9f\x98" "\xc3\xa9"), "\"\\ufffd\xc3\xa9\"");
	/* A NUL inside a counted string does not end a sequence early or late. */
	CHECK_STR(str_n("\xc3\0", 2), "\"\\ufffd\\u0000\"");
}

static void test_double(void)
{
	CHECK_STR(dbl(0.0), "0");
	CHECK_STR(dbl(-0.0), "-0");
	CHECK_STR(dbl(1.0), "1");
	CHECK_STR(dbl(3.0), "3");
	CHECK_STR(dbl(0.1), "0.1");
	CHECK_STR(dbl(1.5), "1.5");
	CHECK_STR(dbl(-2.25), "-2.25");
	CHECK_STR(dbl(123456.789), "123456.789");
	CHECK_STR(dbl(1.0 / 3), "0.3333333333333333");
	CHECK_STR(dbl(100.0), "100");
	CHECK_STR(dbl(2.5e6), "2500000");
	CHECK_STR(dbl(-1200.0), "-1200");
	CHECK_STR(dbl(1e16), "10000000000000000");
	CHECK_STR(dbl(1e17), "1e+17");
	CHECK_STR(dbl(1e20), "1e+20");
	CHECK_STR(dbl(0.0001), "0.0001");
	CHECK_STR(dbl(1.5e-7), "1.5e-07");
	CHECK_STR(dbl(NAN), "null");
	CHECK_STR(dbl(INFINITY), "null");
	CHECK_STR(dbl(-INFINITY), "null");
	/* Whatever it prints reads back exactly. */
	CHECK(strtod(dbl(0.1 + 0.2), NULL) == 0.1 + 0.2);
	CHECK(strtod(dbl(5e-324), NULL) == 5e-324);
	CHECK(strtod(dbl(1.7976931348623157e308), NULL) == 1.7976931348623157e308);
}

static void test_deep(void)
{
	struct json j;
	int i;
	char *want, *p;

	/* Deeper than first[] holds: commas and layout still right. */
	start(&j);
	for (i = 0; i < 40; i++)
		json_array_begin(&j, NULL);
	json_u64(&j, NULL, 1);
	for (i = 0; i < 40; i++) {
		json_array_end(&j);
		if (i < 39)
			json_u64(&j, NULL, 2);
	}
	finish(&j);

	want = malloc(64 * 1024);
	CHECK(want != NULL);
	if (want == NULL)
		return;
	p = want;
	for (i = 0; i < 40; i++)
		p += sprintf(p, "%*s[\n", 2 * i, "");
	p += sprintf(p, "%*s1\n", 80, "");
	for (i = 39; i >= 0; i--) {
		p += sprintf(p, "%*s]", 2 * i, "");
		p += sprintf(p, i > 0 ? ",\n%*s2\n" : "\n", 2 * i, "");
	}
	CHECK_STR(text, want);
	free(want);
}

int main(void)
{
	test_nested();
	test_empty_and_top();
	test_escape();
	test_utf8();
	test_double();
	test_deep();
	free(text);
	return UNIT_DONE();
}
