/* json.h: a small streaming JSON writer for --json output (objects, arrays, scalars). */
#ifndef SLAB_JSON_H
#define SLAB_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *out;
	int depth;
	int first[32];          /* no element written yet at this depth */
	int after_key;
};

void json_init(struct json *j, FILE *out);
void json_object_begin(struct json *j, const char *key);  /* key NULL inside arrays / top */
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *val);
void json_string_n(struct json *j, const char *key, const char *val, size_t len);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_double(struct json *j, const char *key, double val);
void json_bool(struct json *j, const char *key, int val);
void json_null(struct json *j, const char *key);
/* Ends the document with a newline. */
void json_finish(struct json *j);

#endif
