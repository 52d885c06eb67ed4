/* errfmt.c: "'SUBJECT': message" into a fixed buffer, naming both whatever their lengths. */
#include "errfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void slab_verrf(char *buf, size_t len, const char *subject, const char *fmt, va_list ap)
{
	size_t slen = strlen(subject), mlen, room, keep, head, tail, pre, move;
	char *p;

	if (len < 16) {
		vsnprintf(buf, len, fmt, ap);
		return;
	}
	/* The message first, then moved up behind the subject. */
	vsnprintf(buf, len, fmt, ap);
	mlen = strlen(buf);
	/* "'" + subject + "': " + message + NUL; the subject gets at least half the buffer. */
	room = len > mlen + 5 ? len - mlen - 5 : 0;
	if (room < len / 2)
		room = len / 2 - 5;
	keep = slen <= room ? slen : room;
	/* Shortened, the start (its folder) and the end (its name) tell most; "..." between. */
	head = keep < slen ? (keep - 3) / 2 : keep;
	tail = keep < slen ? keep - 3 - head : 0;
	pre = 1 + keep + 3;
	move = mlen < len - 1 - pre ? mlen : len - 1 - pre;
	memmove(buf + pre, buf, move);
	buf[pre + move] = '\0';
	p = buf;
	*p++ = '\'';
	memcpy(p, subject, head);
	p += head;
	if (keep < slen) {
		memcpy(p, "...", 3);
		memcpy(p + 3, subject + slen - tail, tail);
		p += 3 + tail;
	}
	memcpy(p, "': ", 3);
}

const char *slab_size_text(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v == floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
	return buf;
}
