/* net.c: objects over HTTP(S) and S3 through libcurl (net.h): the URL and its AWS
 * configuration, a pool of kept-alive connections per object, ranged reads and stats with
 * retries, and uploads (S3 multipart with parts in flight, or one chunked PUT). libcurl speaks
 * the protocols and signs (CURLOPT_AWS_SIGV4); this file decides what to ask and what an
 * answer means. */
#include "deadline.h"
#include "md5.h"
#include "net.h"
#include "slab.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONNECTIONS     16u
#define DEFAULT_RETRIES         8
#define DEFAULT_TIMEOUT         300.0   /* seconds */
#define CONNECT_TIMEOUT_MS      10000L
/* A transfer that moves less than a byte a second for this long is stalled: an attempt that
 * failed, not a wait as long as the call's whole budget. */
#define STALL_SECONDS           30L
#define S3_KEY_MAX              1024    /* bytes of an object key (UTF-8), S3's limit */
#define BACKOFF_BASE_MS         100u
#define BACKOFF_CAP_MS          5000u
#define SMALL_MAX               (64u << 10)     /* XML answers and error bodies kept */
#define INI_MAX                 (1u << 20)      /* a larger ~/.aws file is not read whole */
/* S3 takes at most 10000 parts, each but the last at least 5 MiB. Parts of 8 MiB, doubled
 * every 1000 parts so that an object of any size S3 takes fits (80 GB in 8 MiB parts). */
#define PART_SIZE               ((size_t)8 << 20)
#define PART_MAX                10000u
#define PART_GROW_EVERY         1000u
/* Each part in flight holds its buffer: at most this many whatever config.connections. */
#define PARTS_IN_FLIGHT_MAX     8u
#define STREAM_RING             ((size_t)1 << 20)
#define ABORT_BUDGET            30.0    /* seconds an abort may spend telling the server */

static pthread_once_t net_once = PTHREAD_ONCE_INIT;
static CURLcode net_init_rc;

/* curl_global_init is not thread safe: once, for the process, never undone (another user
 * of libcurl in the process may still need it). */
static void net_init(void)
{
	net_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* ---- Strings ------------------------------------------------------------------------------ */

/* A growing string; a failed allocation is remembered and reported once, by sb_take(). */
struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
};

static void sb_addn(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_add(struct sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		b->oom = 1;     /* only short pieces go through here */
	else
		sb_addn(b, tmp, (size_t)n);
}

/* S3's URI encoding: every byte but the unreserved ones (and '/' in a key's path) as %XX,
 * upper case, which is also the form SigV4's canonical request wants. */
static void sb_enc(struct sbuf *b, const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char e[3] = { '%', hex[ch >> 4], hex[ch & 15] };

		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.' || ch == '~' || (ch == '/' && keep_slash))
			sb_addn(b, s, 1);
		else
			sb_addn(b, e, 3);
	}
}

/* The string, the caller's to free; NULL when memory ran out. */
static char *sb_take(struct sbuf *b)
{
	char *p = b->p;

	if (b->oom || !p) {
		free(p);
		p = b->oom ? NULL : strdup("");
	}
	memset(b, 0, sizeof(*b));
	return p;
}

/* Is a query parameter named [s, e) one that carries a credential: a presigned URL's
 * signature, key id or session token (S3's X-Amz-Signature, X-Amz-Credential,
 * X-Amz-Security-Token, Signature and AWSAccessKeyId; GCS's X-Goog-*; Azure's sig), or a
 * server's own token, key or password? Showing a harmless one masked costs nothing. */
static int secret_param(const char *s, const char *e)
{
	static const char *const words[] = { "sig", "credential", "token", "secret", "pass",
					      "key", "auth" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i]);

		for (const char *p = s; p + n <= e; p++)
			if (strncasecmp(p, words[i], n) == 0)
				return 1;
	}
	return 0;
}

/* url with its userinfo ("user:pass@") shown as "***@", and the value of each query
 * parameter that carries a credential (secret_param()) as "***": what messages, the log and
 * the cache's files name. A password with a '/', '?' or '#' not percent-encoded ends the
 * host early to a URL parser, and the URL is refused as bad: its message shows it up to the
 * first '@' masked all the same. Cut to fit len. */
static void mask_into(char *buf, size_t len, const char *url)
{
	const char *a = strstr(url, "://"), *end, *at = NULL, *p, *q;
	size_t n = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
#define PUT(s, l) \
	do { \
		size_t l_ = (l); \
		if (n + 1 < len) { \
			l_ = l_ < len - 1 - n ? l_ : len - 1 - n; \
			memcpy(buf + n, (s), l_); \
			n += l_; \
			buf[n] = '\0'; \
		} \
	} while (0)
	if (a) {
		a += 3;
		end = a + strcspn(a, "/?#");
		for (p = a; p < end; p++)
			if (*p == '@')
				at = p;
		if (!at && strchr(end, '@')) {
			CURLU *u = curl_url();

			if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
				at = strchr(end, '@');
			curl_url_cleanup(u);
		}
	}
	if (at) {
		PUT(url, (size_t)(a - url));
		PUT("***", 3);
		p = at;
	} else {
		p = url;
	}
	/* The query: up to the fragment, parameters separated by '&' (or ';'). An s3://
	 * URL has none: a '?' there is the key's. */
	q = strncasecmp(url, "s3://", 5) == 0 ? NULL : strchr(at ? at : a ? a : url, '?');
	if (!q) {
		PUT(p, strlen(p));
		return;
	}
	PUT(p, (size_t)(q + 1 - p));
	for (p = q + 1; *p && *p != '#';) {
		const char *pe = p + strcspn(p, "&;#"), *eq = memchr(p, '=', (size_t)(pe - p));

		if (eq && secret_param(p, eq)) {
			PUT(p, (size_t)(eq + 1 - p));
			PUT("***", 3);
		} else {
			PUT(p, (size_t)(pe - p));
		}
		p = pe;
		if (*p == '&' || *p == ';') {
			PUT(p, 1);
			p++;
		}
	}
	PUT(p, strlen(p));
#undef PUT
}

/* Masking makes a value of fewer than three bytes "***": at most three bytes more for
 * each parameter, which takes at least one ('&'). */
static char *mask_dup(const char *url)
{
	size_t len = 4 * strlen(url) + 4;
	char *p = malloc(len);

	if (p)
		mask_into(p, len, url);
	return p;
}

static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t' || **s == '\r' || **s == '\n'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r' ||
			   (*e)[-1] == '\n'))
		(*e)--;
}

/* The text of the first <tag>...</tag> in xml, entities decoded, into out: 1, or 0 when
 * there is none. A substring search: S3's answers are flat and small. */
static int xml_tag(const char *xml, const char *tag, char *out, size_t cap)
{
	static const struct { const char *ent; char ch; } ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' },
		{ "&apos;", '\'' },
	};
	char open[64], close[64];
	const char *s, *e;
	size_t n = 0;

	if (!xml || cap == 0)
		return 0;
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	s = strstr(xml, open);
	if (!s)
		return 0;
	s += strlen(open);
	e = strstr(s, close);
	if (!e)
		return 0;
	while (s < e && n + 1 < cap) {
		size_t i;

		for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
			size_t l = strlen(ents[i].ent);

			if ((size_t)(e - s) >= l && memcmp(s, ents[i].ent, l) == 0) {
				out[n++] = ents[i].ch;
				s += l;
				break;
			}
		}
		if (i == sizeof(ents) / sizeof(ents[0])) {
			out[n++] = *s == '\n' || *s == '\r' ? ' ' : *s;
			s++;
		}
	}
	out[n] = '\0';
	return 1;
}

/* ---- ~/.aws/credentials and ~/.aws/config ------------------------------------------------- */

/* A config file's text, NUL-terminated, in *out; *out stays NULL when the file does not
 * exist. 0, or -errno. */
static int load_text(const char *path, char **out)
{
	size_t len = 0, cap = 4096;
	char *p;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	p = malloc(cap);
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			char *q;

			if (cap >= INI_MAX)
				break;
			q = realloc(p, cap * 2);
			if (!q) {
				free(p);
				close(fd);
				return -ENOMEM;
			}
			p = q;
			cap *= 2;
		}
		n = read(fd, p + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(p);
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	p[len] = '\0';
	/* A UTF-8 byte order mark, as some Windows editors write: not part of the first line. */
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		memmove(p, p + 3, len - 2);
	*out = p;
	return 0;
}

/* Is the section header [s, e) the profile's? In the credentials file a section is the
 * profile's name; in the config file it is "profile NAME", or "default" for the default. */
static int section_is(const char *s, const char *e, const char *profile, int config)
{
	size_t plen = strlen(profile);

	trim(&s, &e);
	if (config && (size_t)(e - s) > 7 && memcmp(s, "profile", 7) == 0 &&
	    (s[7] == ' ' || s[7] == '\t')) {
		s += 7;
		trim(&s, &e);
	} else if (config && strcmp(profile, "default") != 0) {
		return 0;
	}
	return (size_t)(e - s) == plen && memcmp(s, profile, plen) == 0;
}

/* The value of key in the profile's section of an AWS INI text, a new string; NULL when it
 * is not there (*oom set when memory ran out). A nested setting (an indented "k = v" under
 * "s3 =") is asked for as "s3.k". key NULL: "" when the section is there at all. Like
 * botocore's reader: no inline comments, the last of a repeated key wins. */
static char *ini_get(const char *text, const char *profile, int config, const char *key,
		     int *oom)
{
	const char *p = text, *vs = NULL, *ve = NULL;
	char parent[64] = "";
	int in = 0, found = 0;

	while (p && *p) {
		const char *eol = strchr(p, '\n'), *s = p, *e = eol ? eol : p + strlen(p), *eq;
		int indented = *s == ' ' || *s == '\t';
		char name[160];

		p = eol ? eol + 1 : e;
		trim(&s, &e);
		if (s == e || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			const char *close = memchr(s, ']', (size_t)(e - s));

			in = close && section_is(s + 1, close, profile, config);
			parent[0] = '\0';
			if (in && !key) {
				found = 1;
				break;
			}
			continue;
		}
		eq = memchr(s, '=', (size_t)(e - s));
		if (!in || !eq)
			continue;
		{
			const char *ks = s, *ke = eq, *xs = eq + 1, *xe = e;

			trim(&ks, &ke);
			trim(&xs, &xe);
			if (indented && parent[0]) {
				snprintf(name, sizeof(name), "%s.%.*s", parent, (int)(ke - ks), ks);
			} else {
				snprintf(name, sizeof(name), "%.*s", (int)(ke - ks), ks);
				parent[0] = '\0';
				if (xs == xe && (size_t)(ke - ks) < sizeof(parent))
					snprintf(parent, sizeof(parent), "%.*s", (int)(ke - ks), ks);
			}
			if (key && strcmp(name, key) == 0) {
				vs = xs;
				ve = xe;
				found = 1;
			}
		}
	}
	if (!found)
		return NULL;
	{
		char *v = key ? strndup(vs, (size_t)(ve - vs)) : strdup("");

		if (!v)
			*oom = 1;
		return v;
	}
}

/* A path from the environment, "~/" expanded as the AWS tools do, or HOME/.aws/name. */
static char *aws_path(const char *env, const char *name)
{
	const char *v = getenv(env), *home = getenv("HOME");
	struct sbuf b = { 0 };

	if (v && *v) {
		if (v[0] == '~' && v[1] == '/' && home) {
			sb_add(&b, home);
			sb_add(&b, v + 1);
		} else {
			sb_add(&b, v);
		}
	} else if (home && *home) {
		sb_add(&b, home);
		sb_add(&b, "/.aws/");
		sb_add(&b, name);
	} else {
		return NULL;
	}
	return sb_take(&b);
}

/* ---- Objects ------------------------------------------------------------------------------ */

/* One pooled connection: a curl handle keeps its connection open between requests. */
struct conn {
	struct conn *next;
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
};

struct slab_net_object {
	char *url;                      /* as given */
	char *shown;                    /* as given, userinfo masked: what messages name */
	char *req;                      /* what requests go to (S3: endpoint, bucket, key) */
	int s3;
	char *sigv4;                    /* "aws:amz:REGION:s3"; NULL: unsigned */
	char *unsigned_why;             /* unsigned for want of credentials: where none were */
	char *key_id, *secret;
	char *token_hdr;                /* "x-amz-security-token: ..." or NULL */
	char *region;
	char *ca_bundle;                /* $AWS_CA_BUNDLE: the CAs a server's certificate is
					 * checked against, instead of the system's */
	unsigned connections;
	int retries;
	double timeout;
	long stall;                     /* seconds: on_progress()'s stall limit */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;            /* a connection came back */
	struct conn *idle;
	unsigned made;
	pid_t pid;                      /* the process the pool's connections are this one's */
	atomic_uint_least64_t requests, retried, bytes;
	atomic_int cancel;              /* slab_net_cancel(): reads cut off and not retried */
	uint64_t size;                  /* the object's size, as slab_net_stat() found it */
	int size_known;
};

static char *dup_nonempty(const char *a, const char *b, const char *c, int *oom)
{
	const char *v = a && *a ? a : b && *b ? b : c && *c ? c : NULL;
	char *p;

	if (!v)
		return NULL;
	p = strdup(v);
	if (!p)
		*oom = 1;
	return p;
}

/* A bucket name that can be the first label of a host name (virtual-host addressing). Dots
 * are refused too: a name with dots does not match a TLS wildcard certificate. */
static int dns_bucket(const char *b)
{
	size_t n = strlen(b);

	if (n < 3 || n > 63 || b[0] == '-' || b[n - 1] == '-')
		return 0;
	for (; *b; b++)
		if (!((*b >= 'a' && *b <= 'z') || (*b >= '0' && *b <= '9') || *b == '-'))
			return 0;
	return 1;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcasecmp(s + n - t, tail) == 0;
}

void slab_net_mask(char *buf, size_t len, const char *url)
{
	mask_into(buf, len, url);
}

/* Parse endpoint into u (set already): 0, or -1 and why (see slab_net_check_endpoint()). */
static int endpoint_parse(CURLU *u, const char *endpoint, char *why, size_t len)
{
	static const char want[] = "want http://HOST[:PORT][/PATH] or https://...";
	char *scheme = NULL, *host = NULL, *user = NULL;
	CURLUcode uc;
	int ret = -1;

	uc = curl_url_set(u, CURLUPART_URL, endpoint, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
	if (strncasecmp(endpoint, "http://", 7) != 0 && strncasecmp(endpoint, "https://", 8) != 0)
		snprintf(why, len, "not an http:// or https:// URL");
	else if (uc != CURLUE_OK || !*host)
		snprintf(why, len, "%s (%s)", uc != CURLUE_OK ? curl_url_strerror(uc) : "no host", want);
	/* Each would be dropped from every request: S3's requests carry a query of their
	 * own, and their credentials are signed, never sent in the URL. */
	else if (strchr(endpoint, '?'))
		snprintf(why, len, "a query string has no place in it (%s)", want);
	else if (strchr(endpoint, '#'))
		snprintf(why, len, "a fragment has no place in it (%s)", want);
	else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK)
		snprintf(why, len, "a user name has no place in it: credentials come from the "
			 "environment or a profile (%s)", want);
	else
		ret = 0;
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	return ret;
}

int slab_net_check_endpoint(const char *endpoint, char *why, size_t len)
{
	CURLU *u = curl_url();
	int ret;

	if (!u) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	ret = endpoint_parse(u, endpoint, why, len);
	curl_url_cleanup(u);
	return ret;
}

/* The object's request URL from the endpoint, the bucket, the key and the addressing. */
static int s3_request_url(struct slab_net_object *o, const char *endpoint, const char *bucket,
			  const char *key, int addressing, struct slab_err *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
	struct sbuf b = { 0 };
	char why[256] = "out of memory";
	size_t plen;
	int virt, ret = SLAB_ERR_INVAL;

	if (!u)
		return slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
	if (endpoint_parse(u, endpoint, why, sizeof(why)) < 0 ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		char shown[512];

		mask_into(shown, sizeof(shown), endpoint);
		slab_fail(err, SLAB_ERR_INVAL, o->shown, "bad S3 endpoint '%s': %s", shown, why);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL;
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		path = NULL;
	plen = path ? strlen(path) : 0;
	while (plen && path[plen - 1] == '/')
		plen--;
	virt = addressing == SLAB_NET_ADDR_VIRTUAL ||
	       (addressing == SLAB_NET_ADDR_AUTO && dns_bucket(bucket) &&
		(ends_with(host, ".amazonaws.com") || ends_with(host, ".amazonaws.com.cn")));
	sb_add(&b, scheme);
	sb_add(&b, "://");
	if (virt) {
		sb_add(&b, bucket);
		sb_add(&b, ".");
	}
	sb_add(&b, host);
	if (port) {
		sb_add(&b, ":");
		sb_add(&b, port);
	}
	if (plen)
		sb_addn(&b, path, plen);
	sb_add(&b, "/");
	if (!virt) {
		sb_enc(&b, bucket, 0);
		sb_add(&b, "/");
	}
	sb_enc(&b, key, 1);
	o->req = sb_take(&b);
	ret = o->req ? 0 : slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(u);
	return ret;
}

/* Resolve an s3:// URL: bucket and key, then the configuration in the order net.h gives. */
static int resolve_s3(struct slab_net_object *o, const struct slab_net_config *cf,
		      struct slab_err *err)
{
	const char *rest = o->url + 5, *slash = strchr(rest, '/');
	char *bucket = NULL, *cred_path = NULL, *conf_path = NULL, *cred = NULL, *conf = NULL;
	char *endpoint = NULL, *style = NULL, *key_id = NULL, *secret = NULL, *token = NULL;
	char *cregion = NULL;
	const char *profile, *from = NULL;
	int explicit_profile, oom = 0, addressing = cf->addressing, ret = SLAB_ERR_INVAL, e;

	if (!*rest || slash == rest)
		return slab_fail(err, SLAB_ERR_INVAL, o->shown, "no bucket in S3 URL "
				 "(want s3://BUCKET/KEY)");
	if (!slash || !slash[1])
		return slab_fail(err, SLAB_ERR_INVAL, o->shown, "no key in S3 URL "
				 "(want s3://BUCKET/KEY)");
	/* S3's limit, said before a pack's whole output is made for a PUT it would refuse. */
	if (strlen(slash + 1) > S3_KEY_MAX)
		return slab_fail(err, SLAB_ERR_INVAL, o->shown, "S3 key of %zu bytes: at most %d",
				 strlen(slash + 1), S3_KEY_MAX);
	bucket = strndup(rest, (size_t)(slash - rest));
	if (!bucket)
		return slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
	for (const char *p = bucket; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '.' || *p == '_')) {
			slab_fail(err, SLAB_ERR_INVAL, o->shown, "bad bucket name '%s'", bucket);
			goto out;
		}
	}
	if (addressing < SLAB_NET_ADDR_AUTO || addressing > SLAB_NET_ADDR_VIRTUAL) {
		slab_fail(err, SLAB_ERR_INVAL, o->shown, "bad S3 addressing %d", addressing);
		goto out;
	}
	explicit_profile = (cf->profile && *cf->profile) ||
			   (getenv("AWS_PROFILE") && *getenv("AWS_PROFILE"));
	profile = cf->profile && *cf->profile ? cf->profile :
		  explicit_profile ? getenv("AWS_PROFILE") : "default";

	/* The files; a missing one is no error, an unreadable one is (silently going
	 * anonymous would make a 403 out of a permission problem). */
	cred_path = aws_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
	conf_path = aws_path("AWS_CONFIG_FILE", "config");
	if (cred_path && (e = load_text(cred_path, &cred)) < 0) {
		ret = slab_fail(err, e == -ENOMEM ? SLAB_ERR_NOMEM : SLAB_ERR_IO, o->shown,
				"cannot read '%s': %s", cred_path, strerror(-e));
		goto out;
	}
	if (conf_path && (e = load_text(conf_path, &conf)) < 0) {
		ret = slab_fail(err, e == -ENOMEM ? SLAB_ERR_NOMEM : SLAB_ERR_IO, o->shown,
				"cannot read '%s': %s", conf_path, strerror(-e));
		goto out;
	}
	if (explicit_profile && strcmp(profile, "default") != 0) {
		char *c1 = ini_get(cred, profile, 0, NULL, &oom);
		char *c2 = ini_get(conf, profile, 1, NULL, &oom);
		int there = c1 || c2;

		free(c1);
		free(c2);
		if (!there && !oom) {
			slab_fail(err, SLAB_ERR_INVAL, o->shown, "no profile '%s' in '%s' or '%s'",
				  profile, cred_path ? cred_path : "~/.aws/credentials",
				  conf_path ? conf_path : "~/.aws/config");
			goto out;
		}
	}

	cregion = ini_get(conf, profile, 1, "region", &oom);
	o->region = dup_nonempty(cf->region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"), &oom);
	if (!o->region && !oom)
		o->region = dup_nonempty(cregion, "us-east-1", NULL, &oom);
	if (oom)
		goto nomem;
	for (const char *p = o->region; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-') ||
		    strlen(o->region) > 60) {
			slab_fail(err, SLAB_ERR_INVAL, o->shown, "bad region '%s'", o->region);
			goto out;
		}
	}

	endpoint = dup_nonempty(cf->s3_endpoint, getenv("AWS_ENDPOINT_URL_S3"),
				getenv("AWS_ENDPOINT_URL"), &oom);
	if (!endpoint && !oom) {
		endpoint = ini_get(conf, profile, 1, "s3.endpoint_url", &oom);
		if (!endpoint && !oom)
			endpoint = ini_get(conf, profile, 1, "endpoint_url", &oom);
	}
	if (!endpoint && !oom) {
		struct sbuf b = { 0 };

		sb_printf(&b, "https://s3.%s.amazonaws.com", o->region);
		endpoint = sb_take(&b);
		oom = !endpoint;
	}
	if (oom)
		goto nomem;

	if (addressing == SLAB_NET_ADDR_AUTO) {
		style = ini_get(conf, profile, 1, "s3.addressing_style", &oom);
		if (oom)
			goto nomem;
		if (style && strcmp(style, "path") == 0) {
			addressing = SLAB_NET_ADDR_PATH;
		} else if (style && strcmp(style, "virtual") == 0) {
			addressing = SLAB_NET_ADDR_VIRTUAL;
		} else if (style && *style && strcmp(style, "auto") != 0) {
			slab_fail(err, SLAB_ERR_INVAL, o->shown,
				  "bad addressing_style '%s' in '%s' (path, virtual or auto)", style,
				  conf_path);
			goto out;
		}
	}

	/* Credentials: the environment's pair, else the profile's in the credentials file,
	 * else in the config file; a session token only from where its pair came from. */
	if (!cf->anonymous) {
		const char *ek = getenv("AWS_ACCESS_KEY_ID"), *es = getenv("AWS_SECRET_ACCESS_KEY");

		if (ek && *ek && es && *es) {
			key_id = dup_nonempty(ek, NULL, NULL, &oom);
			secret = dup_nonempty(es, NULL, NULL, &oom);
			token = dup_nonempty(getenv("AWS_SESSION_TOKEN"), NULL, NULL, &oom);
		} else {
			for (int i = 0; i < 2 && !key_id && !secret && !oom; i++) {
				const char *text = i ? conf : cred;

				key_id = ini_get(text, profile, i, "aws_access_key_id", &oom);
				secret = ini_get(text, profile, i, "aws_secret_access_key", &oom);
				from = i ? conf_path : cred_path;
				if (key_id || secret)
					token = ini_get(text, profile, i, "aws_session_token", &oom);
			}
		}
		if (oom)
			goto nomem;
		if ((key_id && *key_id) != (secret && *secret)) {
			slab_fail(err, SLAB_ERR_INVAL, o->shown, "profile '%s' in '%s' has %s but no %s",
				  profile, from ? from : "?",
				  key_id && *key_id ? "aws_access_key_id" : "aws_secret_access_key",
				  key_id && *key_id ? "aws_secret_access_key" : "aws_access_key_id");
			goto out;
		}
	}
	if (key_id && *key_id) {
		struct sbuf b = { 0 };

		sb_printf(&b, "aws:amz:%s:s3", o->region);
		o->sigv4 = sb_take(&b);
		o->key_id = key_id;
		o->secret = secret;
		key_id = secret = NULL;
		if (token && *token) {
			sb_add(&b, "x-amz-security-token: ");
			sb_add(&b, token);
			o->token_hdr = sb_take(&b);
			if (!o->token_hdr)
				goto nomem;
		}
		if (!o->sigv4)
			goto nomem;
	} else if (!cf->anonymous) {
		struct sbuf b = { 0 };

		sb_printf(&b, "no credentials for profile '%s' in the environment, '%s' or '%s'",
			  profile, cred_path ? cred_path : "~/.aws/credentials",
			  conf_path ? conf_path : "~/.aws/config");
		if (!(o->unsigned_why = sb_take(&b)))
			goto nomem;
	}
	ret = s3_request_url(o, endpoint, bucket, slash + 1, addressing, err);
	goto out;
nomem:
	ret = slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
out:
	if (secret)
		explicit_bzero(secret, strlen(secret));
	if (token)
		explicit_bzero(token, strlen(token));
	if (cred)
		explicit_bzero(cred, strlen(cred));
	if (conf)
		explicit_bzero(conf, strlen(conf));
	free(bucket);
	free(cred_path);
	free(conf_path);
	free(cred);
	free(conf);
	free(endpoint);
	free(style);
	free(key_id);
	free(secret);
	free(token);
	free(cregion);
	return ret;
}

static int resolve_http(struct slab_net_object *o, struct slab_err *err)
{
	CURLU *u = curl_url();
	char *host = NULL;
	CURLUcode uc;
	int ret = 0;

	if (!u)
		return slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
	uc = curl_url_set(u, CURLUPART_URL, o->url, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
	if (uc != CURLUE_OK)
		ret = slab_fail(err, SLAB_ERR_INVAL, o->shown, "bad URL: %s", curl_url_strerror(uc));
	else if (!*host)
		ret = slab_fail(err, SLAB_ERR_INVAL, o->shown, "no host in URL");
	curl_free(host);
	curl_url_cleanup(u);
	if (ret < 0)
		return ret;
	o->req = strdup(o->url);
	return o->req ? 0 : slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
}

int slab_net_is_url(const char *name)
{
	return name && (strncasecmp(name, "http://", 7) == 0 || strncasecmp(name, "https://", 8) == 0 ||
			strncasecmp(name, "s3://", 5) == 0);
}

int slab_net_open(struct slab_net_object **out, const char *url, const struct slab_net_config *c,
		  struct slab_err *err)
{
	static const struct slab_net_config defaults;
	struct slab_net_object *o;
	const char *ca;
	int ret;

	*out = NULL;
	if (!c)
		c = &defaults;
	if (!slab_net_is_url(url)) {
		char shown[512];

		mask_into(shown, sizeof(shown), url ? url : "");
		return slab_fail(err, SLAB_ERR_INVAL, shown, "not an http://, https:// or s3:// URL");
	}
	pthread_once(&net_once, net_init);
	if (net_init_rc != CURLE_OK)
		return slab_fail(err, SLAB_ERR_IO, NULL, "cannot initialise libcurl: %s",
				 curl_easy_strerror(net_init_rc));
	o = calloc(1, sizeof(*o));
	if (!o)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory");
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cond, NULL);
	atomic_init(&o->cancel, 0);
	o->pid = getpid();
	o->connections = c->connections ? c->connections : DEFAULT_CONNECTIONS;
	o->retries = c->retries < 0 ? DEFAULT_RETRIES : c->retries;
	/* Over a week (infinity too) is a week, the tools' bound: the deadline's milliseconds
	 * must fit a long. */
	o->timeout = c->timeout > 0 ? fmin(c->timeout, SLAB_NET_MAX_TIMEOUT) : DEFAULT_TIMEOUT;
	/* A stall is a quarter of the budget at most, leaving room to retry within it. */
	o->stall = o->timeout / 4 < STALL_SECONDS ? (long)(o->timeout / 4) : STALL_SECONDS;
	if (o->stall < 1)
		o->stall = 1;
	o->log = c->log;
	o->log_arg = c->log_arg;
	o->url = strdup(url);
	o->shown = mask_dup(url);
	ca = getenv("AWS_CA_BUNDLE");
	if (ca && *ca)
		o->ca_bundle = strdup(ca);
	if (!o->url || !o->shown || (ca && *ca && !o->ca_bundle)) {
		ret = slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory");
		goto fail;
	}
	o->s3 = strncasecmp(url, "s3://", 5) == 0;
	ret = o->s3 ? resolve_s3(o, c, err) : resolve_http(o, err);
	if (ret < 0)
		goto fail;
	*out = o;
	return 0;
fail:
	slab_net_close(o);
	return ret;
}

static void after_fork(struct slab_net_object *o);

void slab_net_close(struct slab_net_object *o)
{
	if (!o)
		return;
	after_fork(o);          /* a child's close leaves the parent's connections alone */
	while (o->idle) {
		struct conn *cn = o->idle;

		o->idle = cn->next;
		curl_easy_cleanup(cn->h);
		free(cn);
	}
	if (o->secret)
		explicit_bzero(o->secret, strlen(o->secret));
	if (o->token_hdr)
		explicit_bzero(o->token_hdr, strlen(o->token_hdr));
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->cond);
	free(o->url);
	free(o->shown);
	free(o->req);
	free(o->sigv4);
	free(o->unsigned_why);
	free(o->key_id);
	free(o->secret);
	free(o->token_hdr);
	free(o->region);
	free(o->ca_bundle);
	free(o);
}

const char *slab_net_url(const struct slab_net_object *o)
{
	return o->shown;
}

const char *slab_net_request_url(const struct slab_net_object *o)
{
	return o->req;
}

const char *slab_net_signer(const struct slab_net_object *o, char *buf, size_t len)
{
	if (!o->sigv4)
		snprintf(buf, len, "%s", "unsigned");
	else
		snprintf(buf, len, "%s as %s%s", o->sigv4, o->key_id,
			 o->token_hdr ? " with a session token" : "");
	return buf;
}

void slab_net_stats(const struct slab_net_object *o, struct slab_net_stats *st)
{
	st->requests = atomic_load(&o->requests);
	st->retries = atomic_load(&o->retried);
	st->bytes = atomic_load(&o->bytes);
}

/* In a fork() child (a DataLoader's worker, say) the pool's connections are the parent's
 * sockets and TLS sessions, still the parent's to use, and its lock may have been held by a
 * thread the child does not have: the child leaves them alone (not even a cleanup, which
 * could write to them) and starts a pool of its own. One thread of a child at a time makes
 * its first request, as after any fork(). */
static void after_fork(struct slab_net_object *o)
{
	if (o->pid == getpid())
		return;
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cond, NULL);
	o->idle = NULL;
	o->made = 0;
	o->pid = getpid();
}

/* A connection from the pool, waiting while all are in use; NULL when memory ran out. */
static struct conn *conn_get(struct slab_net_object *o)
{
	struct conn *cn = NULL;

	after_fork(o);
	pthread_mutex_lock(&o->lock);
	while (!o->idle && o->made >= o->connections)
		pthread_cond_wait(&o->cond, &o->lock);
	if (o->idle) {
		cn = o->idle;
		o->idle = cn->next;
	} else {
		o->made++;
	}
	pthread_mutex_unlock(&o->lock);
	if (cn)
		return cn;
	cn = calloc(1, sizeof(*cn));
	if (cn)
		cn->h = curl_easy_init();
	if (!cn || !cn->h) {
		free(cn);
		pthread_mutex_lock(&o->lock);
		o->made--;
		pthread_cond_signal(&o->cond);
		pthread_mutex_unlock(&o->lock);
		return NULL;
	}
	return cn;
}

static void conn_put(struct slab_net_object *o, struct conn *cn)
{
	pthread_mutex_lock(&o->lock);
	cn->next = o->idle;
	o->idle = cn;
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&o->lock);
}

/* ---- One request -------------------------------------------------------------------------- */

enum { XF_OK, XF_RETRY, XF_FATAL };

/* A request and, per attempt, what came back. */
struct xfer {
	const char *method;             /* GET HEAD PUT POST DELETE */
	const char *url;
	int ranged;                     /* Range: bytes=off-(off+len-1) */
	uint64_t off, len;
	unsigned char *sink;            /* a ranged GET's body goes here (len bytes) */
	const unsigned char *body;      /* PUT and POST */
	size_t body_len;
	size_t (*read_fn)(char *, size_t, size_t, void *);     /* PUT of unknown length */
	void *read_arg;
	const char *content_type;
	const char *etag_want;          /* NULL or "": any */
	uint64_t size_want;             /* a 206's Content-Range total must be this ... */
	int size_known;                 /* ... when this is set */
	int head;                       /* stat's HEAD: a 4xx is an answer, not a failure */
	int stat_get;                   /* stat's GET of byte 0: the size is what counts */
	int check_error_body;           /* CompleteMultipartUpload: a 200 may hold an <Error> */
	int stream;                     /* no total timeout and no stall limit (a slow writer) */
	atomic_int *stop;               /* set: cut the transfer off */
	const char *unsigned_why;       /* attempt(): the object's, for http_failure() */

	long status;
	int has_etag, etag_long;
	char etag[SLAB_NET_ETAG_MAX + 1];
	char crange[160];
	int has_clen;
	uint64_t clen;
	int checked;                    /* the response's head was checked */
	uint64_t got;
	size_t sent;
	char *small;                    /* an error or XML body, NUL-terminated */
	size_t small_len;
	int cut;                        /* we cut the transfer off: outcome, code and why set */
	/* The stall check (on_progress): bytes moved by win_start, and the limit in seconds
	 * (0: none); stalled once it found the attempt moved less than a byte a second. */
	double win_start;
	curl_off_t win_bytes;
	long stall;
	int stalled;
	int outcome, code, changed;
	long long retry_after;          /* seconds the answer's Retry-After asks for; 0: none */
	double ms;
	char why[640];
};

static void xfer_clear(struct xfer *x)
{
	free(x->small);
	x->small = NULL;
	x->small_len = 0;
	x->status = 0;
	x->has_etag = x->etag_long = 0;
	x->etag[0] = x->crange[0] = '\0';
	x->has_clen = 0;
	x->clen = 0;
	x->checked = 0;
	x->got = 0;
	x->sent = 0;
	x->cut = 0;
	x->stalled = 0;
	x->win_start = now_s();
	x->win_bytes = 0;
	x->outcome = XF_OK;
	x->code = 0;
	x->changed = 0;
	x->retry_after = 0;
	x->why[0] = '\0';
}

static int set_why(struct xfer *x, int outcome, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int set_why(struct xfer *x, int outcome, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	x->outcome = outcome;
	x->code = code;
	return outcome;
}

static int retryable_status(long status)
{
	return status == 408 || status == 429 || (status >= 500 && status != 501);
}

/* "HTTP 404 NoSuchKey", with S3's message too when the failure is final and the message
 * says more than the code ("HTTP 403 SignatureDoesNotMatch: The request signature ..."). */
static int http_failure(struct xfer *x)
{
	char code[96] = "", msg[320] = "";
	int retry = retryable_status(x->status);
	/* A refusal of a request sent unsigned for want of credentials says where none were
	 * (S3 says 403 AccessDenied; some servers 400 or 401). */
	const char *why = x->unsigned_why && x->status >= 400 && x->status <= 403 ?
			  x->unsigned_why : NULL;

	xml_tag(x->small, "Code", code, sizeof(code));
	if (!retry && x->status != 404)
		xml_tag(x->small, "Message", msg, sizeof(msg));
	return set_why(x, retry ? XF_RETRY : XF_FATAL,
		       x->status == 404 ? SLAB_ERR_NOTFOUND : SLAB_ERR_IO, "HTTP %ld%s%s%s%s%s%s%s",
		       x->status, *code ? " " : "", code, *msg ? ": " : "", msg,
		       why ? " (sent unsigned: " : "", why ? why : "", why ? ")" : "");
}

static int parse_u64(const char *s, const char **end, uint64_t *v)
{
	char *e;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (errno)
		return -1;
	*end = e;
	return 0;
}

/* The total of a Content-Range ("bytes A-B/T" or "bytes * /T"): 0, or -1 (none, or "*"). */
static int crange_total(const char *cr, uint64_t *total)
{
	const char *slash = strrchr(cr, '/'), *e;

	if (strncasecmp(cr, "bytes ", 6) != 0 || !slash || parse_u64(slash + 1, &e, total) < 0 || *e)
		return -1;
	return 0;
}

/* Is the answer to a ranged GET from another object than the one opened: another ETag, or
 * (where the server sends none) another total size than slab_net_stat() found? The size from
 * a Content-Range's total, or S3's <ActualObjectSize> of an InvalidRange error. Sets x's
 * outcome (SLAB_ERR_CHANGED, never retried) and returns 1 when it is. */
static int changed(struct xfer *x)
{
	char actual[32];
	uint64_t total;
	const char *e;
	int have = crange_total(x->crange, &total) == 0;

	/* A 200 carries the whole object: its length is the object's size. */
	if (!have && x->status == 200 && x->has_clen) {
		total = x->clen;
		have = 1;
	}
	if (!have && x->small && xml_tag(x->small, "ActualObjectSize", actual, sizeof(actual)))
		have = parse_u64(actual, &e, &total) == 0 && !*e;
	if (x->etag_want && *x->etag_want && x->has_etag && strcmp(x->etag, x->etag_want) != 0) {
		set_why(x, XF_FATAL, SLAB_ERR_CHANGED,
			"the object changed while in use (ETag %s, was %s)", x->etag, x->etag_want);
	} else if (x->size_known && have && total != x->size_want) {
		/* The size the object had when it was opened: where the server sends no ETag,
		 * the only sign it was replaced by another (of another size). */
		set_why(x, XF_FATAL, SLAB_ERR_CHANGED,
			"the object changed while in use (%llu bytes, was %llu)",
			(unsigned long long)total, (unsigned long long)x->size_want);
	} else {
		return 0;
	}
	x->changed = 1;
	return 1;
}

/* The head of a 2xx answer to a ranged GET, checked before a byte of its body is taken:
 * from the object opened (changed()), the range asked for, or the whole object where that
 * was asked for (and it is the object opened: changed() checked its size). */
static int check_head(struct xfer *x)
{
	uint64_t total;

	if ((x->status == 206 || x->status == 200) && changed(x))
		return x->outcome;
	if (x->status == 206) {
		char want[64];
		size_t n = (size_t)snprintf(want, sizeof(want), "bytes %llu-%llu/",
					    (unsigned long long)x->off,
					    (unsigned long long)(x->off + x->len - 1));
		const char *rest = x->crange + n;

		if (!x->crange[0])
			return set_why(x, XF_RETRY, SLAB_ERR_IO, "no Content-Range in a 206 answer");
		/* Asking again will not make a short object longer. */
		if (crange_total(x->crange, &total) == 0 && x->off + x->len > total)
			return set_why(x, XF_FATAL, SLAB_ERR_IO, "past the end of the object, %llu "
				       "bytes long", (unsigned long long)total);
		if (strncasecmp(x->crange, want, n) != 0 ||
		    !(strcmp(rest, "*") == 0 || (*rest && strspn(rest, "0123456789") == strlen(rest))))
			return set_why(x, XF_RETRY, SLAB_ERR_IO, "Content-Range '%s' is not the "
				       "range asked for", x->crange);
	} else if (x->status == 200) {
		/* A 200 to a range that is the whole object is fine (RFC 9110 lets a server
		 * send it); anything else is the whole object where part was asked for. A
		 * server that does not do ranges will not start to: asking again only fetches
		 * the whole object again. */
		if (!x->stat_get && !(x->off == 0 && x->has_clen && x->clen == x->len))
			return set_why(x, XF_FATAL, SLAB_ERR_IO, "server ignored the Range header");
	} else if (!(x->stat_get && x->status == 416)) {
		return set_why(x, XF_FATAL, SLAB_ERR_IO, "HTTP %ld to a ranged GET", x->status);
	}
	return XF_OK;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	const char *s = p, *e = p + len, *colon, *vs, *ve;

	trim(&s, &e);
	if (e - s >= 5 && strncmp(s, "HTTP/", 5) == 0) {
		const char *sp = memchr(s, ' ', (size_t)(e - s));

		/* A new answer (after a 100 Continue): forget the last one's headers. */
		x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		x->has_etag = x->etag_long = 0;
		x->etag[0] = x->crange[0] = '\0';
		x->has_clen = 0;
		return len;
	}
	colon = memchr(s, ':', (size_t)(e - s));
	if (!colon)
		return len;
	vs = colon + 1;
	ve = e;
	trim(&vs, &ve);
#define IS(name) \
	((size_t)(colon - s) == sizeof(name) - 1 && strncasecmp(s, name, sizeof(name) - 1) == 0)
	if (IS("etag")) {
		x->has_etag = 1;
		x->etag_long = ve - vs > SLAB_NET_ETAG_MAX;
		snprintf(x->etag, sizeof(x->etag), "%.*s", (int)(ve - vs), vs);
	} else if (IS("content-range")) {
		snprintf(x->crange, sizeof(x->crange), "%.*s", (int)(ve - vs), vs);
	} else if (IS("content-length")) {
		const char *end;

		x->has_clen = parse_u64(vs, &end, &x->clen) == 0 && end == ve;
	}
#undef IS
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	int ok = x->status >= 200 && x->status < 300;

	if (x->sink && ok) {
		if (!x->checked) {
			x->checked = 1;
			if (check_head(x) != XF_OK) {
				x->cut = 1;
				return 0;
			}
			if (x->stat_get) {
				/* The size is in the head: the body (maybe the whole object,
				 * where the server ignored the Range) is not wanted. */
				x->cut = 1;
				x->outcome = XF_OK;
				return 0;
			}
		}
		if (len > x->len - x->got) {
			x->cut = 1;
			set_why(x, XF_RETRY, SLAB_ERR_IO, "the server sent more than the %llu bytes "
				"asked for", (unsigned long long)x->len);
			return 0;
		}
		memcpy(x->sink + x->got, p, len);
		x->got += len;
		return len;
	}
	if (x->small_len < SMALL_MAX) {
		size_t take = len < SMALL_MAX - x->small_len ? len : SMALL_MAX - x->small_len;
		char *q = realloc(x->small, x->small_len + take + 1);

		if (q) {
			memcpy(q + x->small_len, p, take);
			x->small_len += take;
			q[x->small_len] = '\0';
			x->small = q;
		}
	}
	return len;
}

static size_t on_read_mem(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t room = size * n, left = x->body_len - x->sent;

	if (x->stop && atomic_load(x->stop))
		return CURL_READFUNC_ABORT;
	if (room > left)
		room = left;
	if (room)
		memcpy(p, x->body + x->sent, room);
	x->sent += room;
	return room;
}

/* libcurl rewinds a body it must send again (a kept-alive connection the server had closed). */
static int on_seek_mem(void *arg, curl_off_t off, int origin)
{
	struct xfer *x = arg;

	if (origin != SEEK_SET || off < 0 || (uint64_t)off > x->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	x->sent = (size_t)off;
	return CURL_SEEKFUNC_OK;
}

/* Called about once a second, and as bytes move. The stall check: an attempt that moves
 * less than a byte a second over x->stall seconds has stalled. The window restarts whenever
 * it has seen that many bytes, so a transfer that stops is caught x->stall seconds after its
 * last bytes (libcurl's own low-speed check averages over several seconds and catches it
 * up to six later, when a short --timeout has run out). */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct xfer *x = arg;

	(void)dt, (void)ut;
	if (x->stop && atomic_load(x->stop))
		return 1;
	if (x->stall > 0) {
		curl_off_t moved = dn + un;
		double t = now_s();

		if (moved - x->win_bytes >= (curl_off_t)x->stall) {
			x->win_start = t;
			x->win_bytes = moved;
		} else if (t - x->win_start >= (double)x->stall) {
			x->stalled = 1;
			return 1;
		}
	}
	return 0;
}

/* A failure of the transport worth another attempt: the network or the server may recover.
 * The rest (a bad URL, TLS certificate trouble, no memory) would fail the same way again. */
static int transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
	case CURLE_QUIC_CONNECT_ERROR:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_SEND_FAIL_REWIND:
	case CURLE_AGAIN:
		return 1;
	default:
		return 0;
	}
}

/* What an attempt came to, once curl_easy_perform returned rc. */
static int conclude(struct conn *cn, struct xfer *x, CURLcode rc)
{
	if (x->cut)
		return x->outcome;
	if (rc != CURLE_OK) {
		long os = 0;
		char buf[256], *where = NULL;
		const char *why = cn->errbuf[0] ? cn->errbuf : curl_easy_strerror(rc);
		size_t n;

		/* "Failed to connect to ... : Couldn't connect to server" hides the reason
		 * the system gave: that one says what happened. */
		if (rc == CURLE_COULDNT_CONNECT &&
		    curl_easy_getinfo(cn->h, CURLINFO_OS_ERRNO, &os) == CURLE_OK && os)
			why = strerror_r((int)os, buf, sizeof(buf));
		if (rc == CURLE_ABORTED_BY_CALLBACK && x->stalled) {
			n = (size_t)snprintf(buf, sizeof(buf), "stalled: less than a byte a second "
					     "for %ld s", x->stall);
			return set_why(x, XF_RETRY, SLAB_ERR_IO, "%.*s", (int)n, buf);
		}
		if (rc == CURLE_ABORTED_BY_CALLBACK && x->stop && atomic_load(x->stop))
			why = "aborted";
		/* A redirect refused (another scheme, or down from https://): where to. */
		if (rc == CURLE_UNSUPPORTED_PROTOCOL &&
		    curl_easy_getinfo(cn->h, CURLINFO_EFFECTIVE_URL, &where) == CURLE_OK && where &&
		    strcmp(where, x->url) != 0) {
			char shown[512];

			mask_into(shown, sizeof(shown), where);
			return set_why(x, XF_FATAL, SLAB_ERR_IO, "redirected to '%s', not followed "
				       "(http:// and https:// are, and from https:// only https://)",
				       shown);
		}
		n = strlen(why);
		while (n && (why[n - 1] == '\n' || why[n - 1] == '\r'))
			n--;
		return set_why(x, transient(rc) ? XF_RETRY : XF_FATAL, SLAB_ERR_IO, "%.*s", (int)n,
			       why);
	}
	if (x->status < 200 || x->status >= 300) {
		if (x->stat_get && x->status == 416)
			return XF_OK;
		if (x->head && x->status >= 300 && !retryable_status(x->status))
			return XF_OK;
		/* A range within the size the object had, refused as past its end: the object
		 * was replaced by a shorter one (its size said where the server says it). */
		if (x->sink && !x->stat_get && x->status == 416) {
			if (changed(x))
				return x->outcome;
			if (x->size_known && x->off + x->len <= x->size_want) {
				x->changed = 1;
				return set_why(x, XF_FATAL, SLAB_ERR_CHANGED, "the object changed while "
					       "in use (shorter than the %llu bytes it was)",
					       (unsigned long long)x->size_want);
			}
		}
		return http_failure(x);
	}
	if (x->sink) {
		if (!x->checked) {
			x->checked = 1;
			if (check_head(x) != XF_OK)
				return x->outcome;
		}
		if (!x->stat_get && x->got != x->len)
			return set_why(x, XF_RETRY, SLAB_ERR_IO, "short body: %llu of %llu bytes",
				       (unsigned long long)x->got, (unsigned long long)x->len);
	}
	if (x->check_error_body && x->small && strstr(x->small, "<Error>")) {
		char code[96] = "", msg[320] = "";

		xml_tag(x->small, "Code", code, sizeof(code));
		xml_tag(x->small, "Message", msg, sizeof(msg));
		if (strcmp(code, "InternalError") == 0 || strcmp(code, "SlowDown") == 0 ||
		    strcmp(code, "ServiceUnavailable") == 0)
			return set_why(x, XF_RETRY, SLAB_ERR_IO, "HTTP %ld %s", x->status, code);
		return set_why(x, XF_FATAL, SLAB_ERR_IO, "HTTP %ld %s%s%s", x->status,
			       *code ? code : "Error", *msg ? ": " : "", msg);
	}
	return XF_OK;
}

/* One attempt of x on a pooled connection, within deadline (0: none). */
static int attempt(struct slab_net_object *o, struct conn *cn, struct xfer *x, double deadline)
{
	CURL *h = cn->h;
	struct curl_slist *hl = NULL, *t;
	char line[96];
	double t0 = now_s();
	long left = deadline > 0 ? (long)((deadline - t0) * 1000) : 0;
	CURLcode rc;
	int r;

	xfer_clear(x);
	x->unsigned_why = o->unsigned_why;
	if (deadline > 0 && left < 1)
		left = 1;
	curl_easy_reset(h);
	cn->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cn->errbuf);
	if (curl_easy_setopt(h, CURLOPT_URL, x->url) != CURLE_OK)
		return set_why(x, XF_FATAL, SLAB_ERR_NOMEM, "out of memory");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_bundle)
		curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_bundle);
	if (!o->s3) {
		/* A plain server may send a reader elsewhere (credentials are not sent
		 * along to another host), but not from https:// down to http://, where
		 * the answer could be anybody's. S3's redirects say the endpoint or region
		 * is wrong, and a signed request cannot follow them: that is the error. */
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(h, CURLOPT_MAXREDIRS, 8L);
		curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR,
				 strncasecmp(x->url, "https://", 8) == 0 ? "https" : "http,https");
	}
	/* The URL as given: an S3 key "a/../b" is a key, not a path to tidy. */
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "slab/" SLAB_VERSION_STRING);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 left && left < CONNECT_TIMEOUT_MS ? left : CONNECT_TIMEOUT_MS);
	x->stall = x->stream ? 0 : o->stall;
	if (!x->stream)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, left);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	if (x->stop || x->stall) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	if (o->sigv4) {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, o->sigv4);
		curl_easy_setopt(h, CURLOPT_USERNAME, o->key_id);
		curl_easy_setopt(h, CURLOPT_PASSWORD, o->secret);
	}
	if (strcmp(x->method, "HEAD") == 0) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (strcmp(x->method, "PUT") == 0) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		if (x->read_fn) {
			curl_easy_setopt(h, CURLOPT_READFUNCTION, x->read_fn);
			curl_easy_setopt(h, CURLOPT_READDATA, x->read_arg);
			/* Chunked transfer encoding is HTTP/1.1's. */
			curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
		} else {
			curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read_mem);
			curl_easy_setopt(h, CURLOPT_READDATA, x);
			curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek_mem);
			curl_easy_setopt(h, CURLOPT_SEEKDATA, x);
			curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body_len);
		}
	} else if (strcmp(x->method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->body ? (const char *)x->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
	} else if (strcmp(x->method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, x->method);
	}

	/* Headers, all of them signed by libcurl along with Host and X-Amz-Date. S3 wants
	 * x-amz-content-sha256 on every request; UNSIGNED-PAYLOAD spares hashing bodies. */
	if (x->ranged) {
		snprintf(line, sizeof(line), "Range: bytes=%llu-%llu", (unsigned long long)x->off,
			 (unsigned long long)(x->off + x->len - 1));
		hl = curl_slist_append(hl, line);
		if (!hl)
			goto nomem;
	}
	if (o->s3) {
		t = curl_slist_append(hl, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
		if (!t)
			goto nomem;
		hl = t;
	}
	if (o->token_hdr) {
		t = curl_slist_append(hl, o->token_hdr);
		if (!t)
			goto nomem;
		hl = t;
	}
	if (x->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", x->content_type);
		t = curl_slist_append(hl, line);
		if (!t)
			goto nomem;
		hl = t;
	}
	if (x->read_fn) {
		t = curl_slist_append(hl, "Transfer-Encoding: chunked");
		if (!t)
			goto nomem;
		hl = t;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);

	rc = curl_easy_perform(h);
	r = conclude(cn, x, rc);
	{
		curl_off_t ra = 0;

		if (r == XF_RETRY && x->status &&
		    curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
			x->retry_after = (long long)ra;
	}
	x->ms = (now_s() - t0) * 1000;
	atomic_fetch_add(&o->requests, 1);
	atomic_fetch_add(&o->bytes, (uint64_t)x->got + (r == XF_OK ? x->sent : 0));
	/* The header list goes with the request; the handle must not keep pointing at it. */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hl);
	return r;
nomem:
	curl_slist_free_all(hl);
	return set_why(x, XF_FATAL, SLAB_ERR_NOMEM, "out of memory");
}

/* The log's line for an attempt: "GET URL bytes=A-B: 206, 1.2 ms", the URL without
 * userinfo and never a header (the signature and the token are in those). */
static void log_attempt(struct slab_net_object *o, const struct xfer *x, int r, int retry_ms)
{
	char url[512], range[64] = "", res[700], line[1400];

	if (!o->log)
		return;
	mask_into(url, sizeof(url), x->url);
	if (x->ranged)
		snprintf(range, sizeof(range), " bytes=%llu-%llu", (unsigned long long)x->off,
			 (unsigned long long)(x->off + x->len - 1));
	if (r == XF_OK)
		snprintf(res, sizeof(res), "%ld", x->status);
	else
		snprintf(res, sizeof(res), "%s", x->why);
	if (retry_ms >= 0)
		snprintf(line, sizeof(line), "%s %s%s: %s, %.1f ms; retrying in %d ms", x->method, url,
			 range, res, x->ms, retry_ms);
	else
		snprintf(line, sizeof(line), "%s %s%s: %s, %.1f ms", x->method, url, range, res, x->ms);
	o->log(o->log_arg, line);
}

/* x with retries: capped exponential backoff with full jitter, within o->retries and the
 * budget (seconds; 0: o->timeout). what names the request in messages ("bytes 0-4095"), or
 * NULL. 0, or a negative SLAB_ERR_* with err. */
static int run(struct slab_net_object *o, struct xfer *x, const char *what, double budget,
	       struct slab_err *err)
{
	double t0 = now_s(), deadline = t0 + (budget > 0 ? budget : o->timeout);
	/* Jitter apart from other threads' retries: the time and this stack frame's place. */
	unsigned seed = (unsigned)(t0 * 1e6) ^ (unsigned)((uintptr_t)&t0 >> 4);
	int attempts = 0, r;

	if (x->stop && atomic_load(x->stop))
		return slab_fail(err, SLAB_ERR_IO, o->shown, "%s%saborted", what ? what : "",
				 what ? ": " : "");
	for (;;) {
		struct conn *cn = conn_get(o);
		unsigned span, delay;
		int too_late;

		if (!cn)
			return slab_fail(err, SLAB_ERR_NOMEM, o->shown, "out of memory");
		if (attempts)
			atomic_fetch_add(&o->retried, 1);
		r = attempt(o, cn, x, deadline);
		conn_put(o, cn);
		attempts++;
		if (r == XF_OK) {
			log_attempt(o, x, r, -1);
			return 0;
		}
		if (r == XF_FATAL) {
			log_attempt(o, x, r, -1);
			if (x->changed || !what)
				return slab_fail(err, x->code, o->shown, "%s", x->why);
			return slab_fail(err, x->code, o->shown, "%s (%s)", x->why, what);
		}
		span = attempts - 1 < 16 ? BACKOFF_BASE_MS << (attempts - 1) : BACKOFF_CAP_MS;
		if (span > BACKOFF_CAP_MS)
			span = BACKOFF_CAP_MS;
		delay = (unsigned)rand_r(&seed) % (span + 1);
		/* A server that says when to come back (503, 429: Retry-After) is not asked
		 * sooner; one that asks for more than the budget has left is given up on. */
		too_late = x->retry_after > 0 && now_s() + (double)x->retry_after >= deadline;
		if (x->retry_after > 0 && !too_late && (double)x->retry_after * 1000 > delay)
			delay = (unsigned)x->retry_after * 1000;
		if (attempts > o->retries || too_late || now_s() + delay / 1000.0 >= deadline ||
		    (x->stop && atomic_load(x->stop))) {
			size_t n = strlen(x->why);

			if (too_late && attempts <= o->retries)
				snprintf(x->why + n, sizeof(x->why) - n, " (Retry-After: %lld s, more "
					 "than the time left)", x->retry_after);
			log_attempt(o, x, r, -1);
			break;
		}
		log_attempt(o, x, r, (int)delay);
		/* In slices: a cancel cuts a long wait short too. */
		for (unsigned left = delay, step; left && !(x->stop && atomic_load(x->stop));
		     left -= step) {
			step = left < 200 ? left : 200;
			sleep_ms(step);
		}
	}
	return slab_fail(err, SLAB_ERR_IO, o->shown,
			 "%s%sgave up after %d attempt%s in %.1f s: last: %s", what ? what : "",
			 what ? ": " : "", attempts, attempts == 1 ? "" : "s", now_s() - t0, x->why);
}

void slab_net_cancel(struct slab_net_object *o, int on)
{
	atomic_store(&o->cancel, on != 0);
}

int slab_net_read(struct slab_net_object *o, uint64_t off, uint64_t len, void *buf,
		  const char *etag, struct slab_err *err)
{
	struct xfer x = { 0 };
	char what[64];
	int ret;

	if (len == 0)
		return 0;
	if (off + len < off)
		return slab_fail(err, SLAB_ERR_INVAL, o->shown, "bad range: %llu bytes at %llu",
				 (unsigned long long)len, (unsigned long long)off);
	snprintf(what, sizeof(what), "bytes %llu-%llu", (unsigned long long)off,
		 (unsigned long long)(off + len - 1));
	x.method = "GET";
	x.url = o->req;
	x.ranged = 1;
	x.off = off;
	x.len = len;
	x.sink = buf;
	x.stop = &o->cancel;
	x.etag_want = etag;
	x.size_want = o->size;
	x.size_known = o->size_known;
	ret = run(o, &x, what, 0, err);
	free(x.small);
	return ret;
}

int slab_net_stat(struct slab_net_object *o, uint64_t *size, char etag[SLAB_NET_ETAG_MAX + 1],
		  struct slab_err *err)
{
	struct xfer x = { 0 };
	unsigned char byte;
	int ret;

	x.method = "HEAD";
	x.url = o->req;
	x.head = 1;
	ret = run(o, &x, NULL, 0, err);
	if (ret < 0)
		goto out;
	if (x.status >= 200 && x.status < 300 && x.has_clen) {
		*size = x.clen;
	} else if ((x.status == 404 || x.status == 410) && !o->s3) {
		/* Nothing there: nothing more to learn from a plain server's GET. */
		ret = http_failure(&x) == XF_OK ? 0 : slab_fail(err, x.code, o->shown, "%s", x.why);
		goto out;
	} else {
		/* HEAD refused (405, 501; 403 too: a presigned URL is signed for GET alone), or
		 * no length, or an S3 failure: a HEAD answer has no body to carry the server's
		 * error code, a GET's has. */
		memset(&x, 0, sizeof(x));
		x.method = "GET";
		x.url = o->req;
		x.ranged = 1;
		x.off = 0;
		x.len = 1;
		x.sink = &byte;
		x.stat_get = 1;
		ret = run(o, &x, NULL, 0, err);
		if (ret < 0)
			goto out;
		if (x.status == 200 && x.has_clen) {
			*size = x.clen;
		} else if ((x.status == 206 || x.status == 416) && crange_total(x.crange, size) == 0) {
			;
		} else {
			ret = slab_fail(err, SLAB_ERR_IO, o->shown, "the server gave no size "
					"(HTTP %ld, Content-Range '%s')", x.status, x.crange);
			goto out;
		}
	}
	if (x.etag_long) {
		ret = slab_fail(err, SLAB_ERR_IO, o->shown, "ETag longer than %d bytes",
				SLAB_NET_ETAG_MAX);
		goto out;
	}
	snprintf(etag, SLAB_NET_ETAG_MAX + 1, "%s", x.etag);
	o->size = *size;
	o->size_known = 1;
out:
	free(x.small);
	return ret;
}

/* ---- Uploads ------------------------------------------------------------------------------ */

struct part {
	struct part *next;
	unsigned number;
	unsigned char *buf;
	size_t len;
};

struct slab_net_upload {
	struct slab_net_object *o;
	pthread_mutex_t lock;
	pthread_cond_t cond;            /* anything below changed */
	atomic_int stop;                /* aborting: cut transfers off */
	int failed;                     /* the first failure's code, 0: none ... */
	struct slab_err ferr;           /* ... and its text */

	/* S3: a multipart upload, created when the first part is full. */
	char *upload_id;                /* URL-encoded */
	unsigned char *cur;             /* the part being filled */
	size_t cur_len, cur_cap;
	unsigned parts;                 /* handed to the workers (numbers 1..parts) */
	char **etags;                   /* by part number - 1, from the workers */
	unsigned etags_cap;
	struct part *queue, *queue_tail;
	unsigned inflight, max_inflight;
	unsigned sending;               /* parts a worker is sending now */
	int creating;                   /* CreateMultipartUpload in flight */
	int cancelling;                 /* slab_net_upload_cancel() at work: u must stay */
	int aborted;                    /* the server was told: AbortMultipartUpload sent */
	int finished;                   /* slab_net_upload_finish() succeeded: nothing to abort */
	pthread_t workers[PARTS_IN_FLIGHT_MAX];
	unsigned nworkers;
	int closing;

	/* HTTP(S): one chunked PUT, fed through a ring by the thread running it. */
	int started, eof, done, result;
	pthread_t thread;
	unsigned char *ring;
	size_t ring_head, ring_fill;
	uint64_t streamed;
	struct xfer sx;
};

static size_t part_size(unsigned number)
{
	unsigned grow = (number - 1) / PART_GROW_EVERY;

	return PART_SIZE << (grow < 9 ? grow : 9);
}

/* The URL of the object with a query (already in SigV4's canonical form: keys sorted,
 * values encoded, '=' always). */
static char *upload_url(struct slab_net_upload *u, const char *query)
{
	struct sbuf b = { 0 };

	sb_add(&b, u->o->req);
	sb_add(&b, "?");
	sb_add(&b, query);
	return sb_take(&b);
}

static int fail_nomem(struct slab_net_upload *u, struct slab_err *err)
{
	return slab_fail(err, SLAB_ERR_NOMEM, u->o->shown, "out of memory");
}

static int s3_create(struct slab_net_upload *u, struct slab_err *err)
{
	struct xfer x = { 0 };
	char *url = upload_url(u, "uploads=");
	char id[1024];
	struct sbuf b = { 0 };
	int ret;

	if (!url)
		return fail_nomem(u, err);
	/* slab_net_upload_cancel() waits for a create in flight, then aborts what it made. */
	pthread_mutex_lock(&u->lock);
	if (atomic_load(&u->stop)) {
		pthread_mutex_unlock(&u->lock);
		free(url);
		return slab_fail(err, SLAB_ERR_IO, u->o->shown, "CreateMultipartUpload: aborted");
	}
	u->creating = 1;
	pthread_mutex_unlock(&u->lock);
	x.method = "POST";
	x.url = url;
	x.content_type = "application/octet-stream";
	x.stop = &u->stop;
	ret = run(u->o, &x, "CreateMultipartUpload", 0, err);
	if (ret == 0 && !xml_tag(x.small, "UploadId", id, sizeof(id)))
		ret = slab_fail(err, SLAB_ERR_IO, u->o->shown,
				"no UploadId in the answer to CreateMultipartUpload");
	if (ret == 0)
		sb_enc(&b, id, 0);
	pthread_mutex_lock(&u->lock);
	if (ret == 0) {
		u->upload_id = sb_take(&b);
		if (!u->upload_id)
			ret = fail_nomem(u, err);
	}
	u->creating = 0;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	free(x.small);
	free(url);
	return ret;
}

/* PUT one part, retried; its ETag in *etag (the caller's to free). */
static int s3_put_part(struct slab_net_upload *u, const struct part *p, char **etag,
		       struct slab_err *err)
{
	struct xfer x = { 0 };
	struct sbuf b = { 0 };
	char what[48], *url, *q;
	int ret;

	sb_printf(&b, "partNumber=%u&uploadId=", p->number);
	sb_add(&b, u->upload_id);
	q = sb_take(&b);
	url = q ? upload_url(u, q) : NULL;
	free(q);
	if (!url)
		return fail_nomem(u, err);
	snprintf(what, sizeof(what), "part %u", p->number);
	x.method = "PUT";
	x.url = url;
	x.body = p->buf;
	x.body_len = p->len;
	x.stop = &u->stop;
	ret = run(u->o, &x, what, 0, err);
	if (ret == 0 && !x.has_etag)
		ret = slab_fail(err, SLAB_ERR_IO, u->o->shown, "no ETag in the answer to part %u",
				p->number);
	if (ret == 0) {
		*etag = strdup(x.etag);
		if (!*etag)
			ret = fail_nomem(u, err);
	}
	free(x.small);
	free(url);
	return ret;
}

static void *part_worker(void *arg)
{
	struct slab_net_upload *u = arg;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		struct part *p;
		struct slab_err e = { "" };
		char *etag = NULL;
		int skip, r = 0;

		while (!u->queue && !u->closing && !atomic_load(&u->stop))
			pthread_cond_wait(&u->cond, &u->lock);
		if (atomic_load(&u->stop) || !u->queue)
			break;
		p = u->queue;
		u->queue = p->next;
		if (!u->queue)
			u->queue_tail = NULL;
		skip = u->failed != 0;
		u->sending += !skip;
		pthread_mutex_unlock(&u->lock);
		if (!skip)
			r = s3_put_part(u, p, &etag, &e);
		pthread_mutex_lock(&u->lock);
		u->sending -= !skip;
		if (r < 0 && !u->failed) {
			u->failed = r;
			slab_fail_from(&u->ferr, r, e.text);
		}
		if (r == 0 && !skip)
			u->etags[p->number - 1] = etag;
		u->inflight--;
		pthread_cond_broadcast(&u->cond);
		free(p->buf);
		free(p);
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

static int upload_failed(struct slab_net_upload *u, struct slab_err *err)
{
	int code;

	pthread_mutex_lock(&u->lock);
	code = u->failed;
	if (code)
		slab_fail_from(err, code, u->ferr.text);
	pthread_mutex_unlock(&u->lock);
	return code;
}

/* Hand the filled part to the workers (creating the upload and them first), waiting while
 * the most parts are in flight. */
static int submit_part(struct slab_net_upload *u, struct slab_err *err)
{
	struct part *p;
	int ret;

	if (!u->upload_id) {
		ret = s3_create(u, err);
		if (ret < 0)
			return ret;
		int e = 0;

		for (unsigned i = 0; i < u->max_inflight && !e; i++) {
			e = pthread_create(&u->workers[i], NULL, part_worker, u);
			u->nworkers += !e;
		}
		if (!u->nworkers)
			return slab_fail(err, SLAB_ERR_IO, u->o->shown, "cannot start a thread: %s",
					 strerror(e));
	}
	if (u->parts == PART_MAX)
		return slab_fail(err, SLAB_ERR_LIMIT, u->o->shown, "more than %u parts: too large "
				 "for one S3 object", PART_MAX);
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail_nomem(u, err);
	pthread_mutex_lock(&u->lock);
	if (u->parts == u->etags_cap) {
		unsigned cap = u->etags_cap ? u->etags_cap * 2 : 64;
		char **e = realloc(u->etags, cap * sizeof(*e));

		if (!e) {
			pthread_mutex_unlock(&u->lock);
			free(p);
			return fail_nomem(u, err);
		}
		memset(e + u->etags_cap, 0, (cap - u->etags_cap) * sizeof(*e));
		u->etags = e;
		u->etags_cap = cap;
	}
	while (u->inflight >= u->nworkers && !u->failed)
		pthread_cond_wait(&u->cond, &u->lock);
	if (u->failed) {
		ret = slab_fail_from(err, u->failed, u->ferr.text);
		pthread_mutex_unlock(&u->lock);
		free(p);
		return ret;
	}
	p->number = ++u->parts;
	p->buf = u->cur;
	p->len = u->cur_len;
	if (u->queue_tail)
		u->queue_tail->next = p;
	else
		u->queue = p;
	u->queue_tail = p;
	u->inflight++;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	u->cur = NULL;
	u->cur_len = u->cur_cap = 0;
	return 0;
}

static void stop_workers(struct slab_net_upload *u, int abort)
{
	pthread_mutex_lock(&u->lock);
	u->closing = 1;
	if (abort)
		atomic_store(&u->stop, 1);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	for (unsigned i = 0; i < u->nworkers; i++)
		pthread_join(u->workers[i], NULL);
	u->nworkers = 0;
}

/* The ETag S3 gives the object its parts make: the MD5 of their MD5s (each part's ETag, in
 * hex), then "-" and how many there are, quoted. 0, or -1 when a part's ETag is not an MD5
 * (an encrypted bucket's, say: nothing to compare then). */
static int multipart_etag(const struct slab_net_upload *u, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char *md5s = malloc((size_t)u->parts * 16 + 1), sum[16];
	char digest[33];

	if (!md5s)
		return -1;
	for (unsigned i = 0; i < u->parts; i++) {
		const char *t = u->etags[i];
		size_t n = t ? strlen(t) : 0;

		if (n == 34 && t[0] == '"' && t[33] == '"') {
			t++;
			n -= 2;
		}
		if (n != 32 || strspn(t, "0123456789abcdefABCDEF") < 32) {
			free(md5s);
			return -1;
		}
		for (unsigned k = 0; k < 16; k++) {
			char pair[3] = { t[2 * k], t[2 * k + 1], '\0' };

			md5s[16 * i + k] = (unsigned char)strtoul(pair, NULL, 16);
		}
	}
	slab_md5(md5s, (size_t)u->parts * 16, sum);
	free(md5s);
	for (unsigned k = 0; k < 16; k++) {
		digest[2 * k] = hex[sum[k] >> 4];
		digest[2 * k + 1] = hex[sum[k] & 15];
	}
	digest[32] = '\0';
	snprintf(out, len, "\"%s-%u\"", digest, u->parts);
	return 0;
}

/* A CompleteMultipartUpload answered 404 NoSuchUpload: one sent before may have completed the
 * upload at the server, its answer lost on the way (AWS answers so once it is complete). Sent
 * before by us after a failed attempt, or by libcurl itself, which sends a request again,
 * unseen, when a kept-alive connection closes without an answer: so the first attempt is
 * no proof. Is the object at the key now the one these parts make (its ETag theirs)? */
static int completed_before(struct slab_net_upload *u, const struct xfer *x)
{
	char code[96] = "", want[64], etag[SLAB_NET_ETAG_MAX + 1];
	struct slab_err e;
	uint64_t size;

	if (x->status != 404 || !xml_tag(x->small, "Code", code, sizeof(code)) ||
	    strcmp(code, "NoSuchUpload") != 0 || multipart_etag(u, want, sizeof(want)) < 0)
		return 0;
	return slab_net_stat(u->o, &size, etag, &e) == 0 && strcasecmp(etag, want) == 0;
}

static int s3_complete(struct slab_net_upload *u, struct slab_err *err)
{
	struct sbuf b = { 0 };
	struct xfer x = { 0 };
	char *url, *xml, *q;
	int ret;

	sb_add(&b, "uploadId=");
	sb_add(&b, u->upload_id);
	q = sb_take(&b);
	url = q ? upload_url(u, q) : NULL;
	free(q);
	sb_add(&b, "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
	for (unsigned i = 0; i < u->parts; i++) {
		sb_printf(&b, "<Part><PartNumber>%u</PartNumber><ETag>", i + 1);
		for (const char *s = u->etags[i]; s && *s; s++) {
			if (*s == '&')
				sb_add(&b, "&amp;");
			else if (*s == '<')
				sb_add(&b, "&lt;");
			else if (*s == '>')
				sb_add(&b, "&gt;");
			else
				sb_addn(&b, s, 1);
		}
		sb_add(&b, "</ETag></Part>");
	}
	sb_add(&b, "</CompleteMultipartUpload>");
	xml = sb_take(&b);
	if (!url || !xml) {
		free(url);
		free(xml);
		return fail_nomem(u, err);
	}
	x.method = "POST";
	x.url = url;
	x.body = (const unsigned char *)xml;
	x.body_len = strlen(xml);
	x.content_type = "application/xml";
	x.check_error_body = 1;
	x.stop = &u->stop;
	ret = run(u->o, &x, "CompleteMultipartUpload", 0, err);
	if (ret < 0 && completed_before(u, &x))
		ret = 0;
	free(x.small);
	free(xml);
	free(url);
	return ret;
}

/* AbortMultipartUpload of u->upload_id, best effort (within ABORT_BUDGET). The caller set
 * u->aborted: the id is set, and stays until u is freed. */
static void abort_request(struct slab_net_upload *u)
{
	struct sbuf b = { 0 };
	struct slab_err e;
	struct xfer x = { 0 };
	char *url, *q;

	sb_add(&b, "uploadId=");
	sb_add(&b, u->upload_id);
	q = sb_take(&b);
	url = q ? upload_url(u, q) : NULL;
	free(q);
	if (!url)
		return;
	x.method = "DELETE";
	x.url = url;
	run(u->o, &x, "AbortMultipartUpload", ABORT_BUDGET, &e);
	free(x.small);
	free(url);
}

static void s3_abort(struct slab_net_upload *u)
{
	stop_workers(u, 1);
	pthread_mutex_lock(&u->lock);
	while (u->cancelling)
		pthread_cond_wait(&u->cond, &u->lock);
	if (!u->upload_id || u->aborted) {
		pthread_mutex_unlock(&u->lock);
		return;
	}
	u->aborted = 1;
	pthread_mutex_unlock(&u->lock);
	abort_request(u);
}

/* The stream's read callback: the ring's bytes as the writer puts them there. */
static size_t stream_read(char *p, size_t size, size_t n, void *arg)
{
	struct slab_net_upload *u = arg;
	size_t room = size * n, take;

	pthread_mutex_lock(&u->lock);
	while (!u->ring_fill && !u->eof && !atomic_load(&u->stop))
		pthread_cond_wait(&u->cond, &u->lock);
	if (atomic_load(&u->stop)) {
		pthread_mutex_unlock(&u->lock);
		return CURL_READFUNC_ABORT;
	}
	take = u->ring_fill < room ? u->ring_fill : room;
	if (take > STREAM_RING - u->ring_head)
		take = STREAM_RING - u->ring_head;
	memcpy(p, u->ring + u->ring_head, take);
	u->ring_head = (u->ring_head + take) % STREAM_RING;
	u->ring_fill -= take;
	u->streamed += take;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return take;
}

static void *stream_main(void *arg)
{
	struct slab_net_upload *u = arg;
	struct conn *cn = conn_get(u->o);
	int r;

	if (!cn) {
		r = set_why(&u->sx, XF_FATAL, SLAB_ERR_NOMEM, "out of memory");
	} else {
		r = attempt(u->o, cn, &u->sx, 0);
		conn_put(u->o, cn);
		if (r == XF_OK)
			atomic_fetch_add(&u->o->bytes, u->streamed);
		log_attempt(u->o, &u->sx, r, -1);
	}
	pthread_mutex_lock(&u->lock);
	u->done = 1;
	u->result = r;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

static int stream_start(struct slab_net_upload *u, struct slab_err *err)
{
	int e;

	if (u->started)
		return 0;
	u->sx.method = "PUT";
	u->sx.url = u->o->req;
	u->sx.read_fn = stream_read;
	u->sx.read_arg = u;
	u->sx.stream = 1;
	u->sx.stop = &u->stop;
	e = pthread_create(&u->thread, NULL, stream_main, u);
	if (e)
		return slab_fail(err, SLAB_ERR_IO, u->o->shown, "cannot start a thread: %s",
				 strerror(e));
	u->started = 1;
	return 0;
}

/* The PUT ended before its body did, or failed: its reason. */
static int stream_failure(struct slab_net_upload *u, struct slab_err *err)
{
	if (u->result == XF_OK)
		return slab_fail(err, SLAB_ERR_IO, u->o->shown, "PUT: the server answered HTTP %ld "
				 "before the body was complete", u->sx.status);
	return slab_fail(err, u->sx.code ? u->sx.code : SLAB_ERR_IO, u->o->shown, "PUT: %s", u->sx.why);
}

static int stream_write(struct slab_net_upload *u, const unsigned char *p, size_t len,
			struct slab_err *err)
{
	struct timespec until;
	int ret = 0;

	ret = stream_start(u, err);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&u->lock);
	slab_deadline(&until, u->o->timeout);
	while (len) {
		size_t room = STREAM_RING - u->ring_fill, tail, n;

		if (u->done) {
			ret = stream_failure(u, err);
			break;
		}
		if (!room) {
			/* The server takes nothing: a stall, after config.timeout. */
			if (pthread_cond_timedwait(&u->cond, &u->lock, &until) == ETIMEDOUT &&
			    u->ring_fill == STREAM_RING && !u->done) {
				ret = slab_fail(err, SLAB_ERR_IO, u->o->shown, "PUT: the server took no "
						"data for %.0f s", u->o->timeout);
				break;
			}
			continue;
		}
		tail = (u->ring_head + u->ring_fill) % STREAM_RING;
		n = len < room ? len : room;
		if (n > STREAM_RING - tail)
			n = STREAM_RING - tail;
		memcpy(u->ring + tail, p, n);
		u->ring_fill += n;
		p += n;
		len -= n;
		pthread_cond_broadcast(&u->cond);
		slab_deadline(&until, u->o->timeout);
	}
	pthread_mutex_unlock(&u->lock);
	return ret;
}

static void upload_free(struct slab_net_upload *u)
{
	/* A cancel from another thread is still telling the server: u is in use. */
	pthread_mutex_lock(&u->lock);
	while (u->cancelling)
		pthread_cond_wait(&u->cond, &u->lock);
	pthread_mutex_unlock(&u->lock);
	while (u->queue) {
		struct part *p = u->queue;

		u->queue = p->next;
		free(p->buf);
		free(p);
	}
	for (unsigned i = 0; i < u->parts && u->etags; i++)
		free(u->etags[i]);
	free(u->etags);
	free(u->upload_id);
	free(u->cur);
	free(u->ring);
	free(u->sx.small);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	slab_net_close(u->o);
	free(u);
}

int slab_net_upload_open(struct slab_net_upload **out, const char *url,
			 const struct slab_net_config *c, struct slab_err *err)
{
	struct slab_net_upload *u;
	struct slab_net_object *o;
	pthread_condattr_t ca;
	int ret;

	*out = NULL;
	ret = slab_net_open(&o, url, c, err);
	if (ret < 0)
		return ret;
	u = calloc(1, sizeof(*u));
	if (!u) {
		slab_net_close(o);
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory");
	}
	u->o = o;
	pthread_mutex_init(&u->lock, NULL);
	/* The stream's writer waits with a deadline: on the monotonic clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->cond, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&u->stop, 0);
	u->max_inflight = o->connections < PARTS_IN_FLIGHT_MAX ? o->connections : PARTS_IN_FLIGHT_MAX;
	if (!o->s3) {
		u->ring = malloc(STREAM_RING);
		if (!u->ring) {
			upload_free(u);
			return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory");
		}
	}
	*out = u;
	return 0;
}

static int s3_write(struct slab_net_upload *u, const unsigned char *p, size_t len,
		    struct slab_err *err)
{
	int ret;

	while (len) {
		size_t n;

		if (!u->cur) {
			u->cur_cap = part_size(u->parts + 1);
			u->cur = malloc(u->cur_cap);
			if (!u->cur)
				return fail_nomem(u, err);
			u->cur_len = 0;
		}
		n = len < u->cur_cap - u->cur_len ? len : u->cur_cap - u->cur_len;
		memcpy(u->cur + u->cur_len, p, n);
		u->cur_len += n;
		p += n;
		len -= n;
		/* Full: sent when more comes, so that an object of exactly one part is one PUT. */
		if (len && u->cur_len == u->cur_cap) {
			ret = submit_part(u, err);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

int slab_net_upload_write(struct slab_net_upload *u, const void *buf, size_t len,
			  struct slab_err *err)
{
	int ret = upload_failed(u, err);

	if (ret < 0)
		return ret;
	if (!len)
		return 0;
	ret = u->o->s3 ? s3_write(u, buf, len, err) : stream_write(u, buf, len, err);
	if (ret < 0) {
		/* Bytes were lost: finishing now would store a truncated object. */
		pthread_mutex_lock(&u->lock);
		if (!u->failed) {
			u->failed = ret;
			slab_fail_from(&u->ferr, ret, err->text);
		}
		pthread_mutex_unlock(&u->lock);
	}
	return ret;
}

static int s3_finish(struct slab_net_upload *u, struct slab_err *err)
{
	int ret = upload_failed(u, err);

	if (ret < 0)
		return ret;
	if (!u->upload_id) {
		/* One part's worth or less: one PUT. */
		struct xfer x = { 0 };

		x.method = "PUT";
		x.url = u->o->req;
		x.body = u->cur;
		x.body_len = u->cur_len;
		x.content_type = "application/octet-stream";
		x.stop = &u->stop;
		ret = run(u->o, &x, "PUT", 0, err);
		free(x.small);
		return ret;
	}
	if (u->cur_len) {
		ret = submit_part(u, err);
		if (ret < 0)
			return ret;
	}
	stop_workers(u, 0);
	ret = upload_failed(u, err);
	if (ret < 0)
		return ret;
	return s3_complete(u, err);
}

static int stream_finish(struct slab_net_upload *u, struct slab_err *err)
{
	int ret = upload_failed(u, err);

	if (ret < 0)
		return ret;
	ret = stream_start(u, err);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&u->lock);
	u->eof = 1;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	u->started = 0;
	if (u->result != XF_OK)
		return stream_failure(u, err);
	if (u->ring_fill)
		return slab_fail(err, SLAB_ERR_IO, u->o->shown, "PUT: the server answered HTTP %ld "
				 "before the body was complete", u->sx.status);
	return 0;
}

/* What was started on the server, given up (best effort); u stays. */
static void abort_remote(struct slab_net_upload *u)
{
	if (u->o->s3) {
		s3_abort(u);
	} else if (u->started) {
		pthread_mutex_lock(&u->lock);
		atomic_store(&u->stop, 1);
		pthread_cond_broadcast(&u->cond);
		pthread_mutex_unlock(&u->lock);
		pthread_join(u->thread, NULL);
		u->started = 0;
	}
}

int slab_net_upload_finish(struct slab_net_upload *u, struct slab_err *err)
{
	int ret = u->o->s3 ? s3_finish(u, err) : stream_finish(u, err);

	if (ret < 0) {
		abort_remote(u);
		return ret;
	}
	if (u->o->s3)
		stop_workers(u, 0);
	u->finished = 1;
	return 0;
}

void slab_net_upload_cancel(struct slab_net_upload *u)
{
	int send = 0;

	pthread_mutex_lock(&u->lock);
	if (u->cancelling || (u->aborted && u->o->s3)) {
		pthread_mutex_unlock(&u->lock);
		return;
	}
	u->cancelling = 1;
	atomic_store(&u->stop, 1);
	if (!u->failed) {
		u->failed = SLAB_ERR_IO;
		slab_fail(&u->ferr, SLAB_ERR_IO, u->o->shown, "upload cancelled");
	}
	pthread_cond_broadcast(&u->cond);
	/* Parts and a create in flight are cut off (within a second): once they are, the
	 * upload they belong to is known, and no part of it arrives after the abort. */
	while (u->creating || u->sending)
		pthread_cond_wait(&u->cond, &u->lock);
	if (u->o->s3 && u->upload_id && !u->aborted)
		u->aborted = send = 1;
	pthread_mutex_unlock(&u->lock);
	if (send)
		abort_request(u);
	pthread_mutex_lock(&u->lock);
	u->cancelling = 0;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

void slab_net_upload_abort(struct slab_net_upload *u)
{
	if (!u)
		return;
	if (!u->finished)
		abort_remote(u);
	upload_free(u);
}
