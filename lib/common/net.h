/* net.h: objects over HTTP(S) and S3, through libcurl and nothing else: ranged reads of an
 * object, and uploads of a stream into one. The only file that includes <curl/curl.h> is
 * net.c; the rest of the library sees this interface.
 *
 * URLs: http://host[:port]/path, https://..., and s3://bucket/key. An S3 object's endpoint,
 * region, credentials and addressing come from struct slab_net_config first, then the
 * environment (AWS_ENDPOINT_URL, AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE,
 * AWS_CONFIG_FILE), then ~/.aws/credentials and ~/.aws/config (the profile's section);
 * requests are signed with SigV4 by libcurl (CURLOPT_AWS_SIGV4), or sent unsigned when no
 * credentials are found or the config asks for anonymous access.
 *
 * An http(s) server's redirects are followed to http:// and https://, from https:// to https://
 * only; an S3 server's are not.
 *
 * Messages name the URL as given and never hold a credential. Nothing here prints. */
#ifndef SLAB_NET_H
#define SLAB_NET_H

#include "error.h"

#include <stddef.h>
#include <stdint.h>

/* Is this name a URL this interface takes (http://, https://, s3://)? */
int slab_net_is_url(const char *name);

/* url with its userinfo ("user:pass@") shown as "***@" and the values of the http(s) query
 * parameters that carry a credential (a presigned URL's X-Amz-Signature, X-Amz-Credential,
 * X-Amz-Security-Token, ...: any whose name holds "sig", "credential", "token", "secret",
 * "pass", "key" or "auth") as "***", into buf: what a message may name. */
void slab_net_mask(char *buf, size_t len, const char *url);

/* Is endpoint one s3:// requests can be sent to: http:// or https://, a host, maybe a port
 * and a path, and nothing else (a query, a fragment or a user name would be dropped from
 * every request)? 0, or -1 with the reason in why ("a query string has no place in it
 * (want ...)"). slab_net_open() refuses such an endpoint, wherever it came from. */
int slab_net_check_endpoint(const char *endpoint, char *why, size_t len);

enum slab_net_addressing {
	SLAB_NET_ADDR_AUTO = 0,         /* virtual-host on AWS's own endpoint, path-style on
					 * any other (what S3-compatible servers expect) */
	SLAB_NET_ADDR_PATH = 1,         /* https://endpoint/bucket/key */
	SLAB_NET_ADDR_VIRTUAL = 2,      /* https://bucket.endpoint/key */
};

struct slab_net_config {
	const char *s3_endpoint;        /* NULL: $AWS_ENDPOINT_URL, else AWS's regional one */
	const char *profile;            /* NULL: $AWS_PROFILE, else "default" */
	const char *region;             /* NULL: environment, profile, else us-east-1 */
	int addressing;                 /* enum slab_net_addressing */
	int anonymous;                  /* never sign (public buckets) */
	unsigned connections;           /* requests in flight at most; 0: 16 */
	int retries;                    /* attempts after the first failed one; < 0: 8 */
	double timeout;                 /* seconds one call may take, retries included; 0: 300 */
	/* -v: one line per request and per retry ("GET URL bytes=A-B: 206, 1.2 ms"), never a
	 * credential; NULL: none. Called from any thread; must be thread safe. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
};

/* Counters of an object handle (thread safe, cumulative). */
struct slab_net_stats {
	uint64_t requests;              /* requests sent, retries included */
	uint64_t retries;               /* of those, retries after a failure */
	uint64_t bytes;                 /* body bytes received (GET) or sent (PUT) */
};

/* One remote object and a pool of up to config.connections connections to its server,
 * kept open between requests. Thread safe: several threads may read at once, each call
 * taking a connection from the pool (waiting while all are in use). */
struct slab_net_object;

/* Parse url and resolve its configuration (no request is made). 0 and *out, or
 * SLAB_ERR_INVAL (not a URL, s3:// without bucket or key, a bad endpoint) or SLAB_ERR_NOMEM,
 * the reason in *err naming the URL. c may be NULL (all defaults). */
int slab_net_open(struct slab_net_object **out, const char *url, const struct slab_net_config *c,
		  struct slab_err *err);
/* Accepts NULL. */
void slab_net_close(struct slab_net_object *o);
/* The URL as given (what messages name), masked as slab_net_mask() masks it. */
const char *slab_net_url(const struct slab_net_object *o);

/* The URL the object's requests go to (s3://: the endpoint, virtual-host or path-style, the
 * key encoded: the local cache is named by it), and, for tests, how they are signed, into
 * buf: "unsigned", or
 * "aws:amz:REGION:s3 as KEYID[ with a session token]" (never the secret). */
const char *slab_net_request_url(const struct slab_net_object *o);
const char *slab_net_signer(const struct slab_net_object *o, char *buf, size_t len);

/* ETags are at most this long with the quotes; a longer one is an error. */
#define SLAB_NET_ETAG_MAX 128

/* Size and ETag of the object (a HEAD request, or a ranged GET of its first byte where
 * HEAD is refused): 0, or an error: SLAB_ERR_NOTFOUND for 404 (NoSuchKey, NoSuchBucket:
 * the server's code in the message), SLAB_ERR_IO for the rest (403 AccessDenied,
 * SignatureDoesNotMatch, a refused connection after the retries, ...). etag gets "" when
 * the server sends none. */
int slab_net_stat(struct slab_net_object *o, uint64_t *size, char etag[SLAB_NET_ETAG_MAX + 1],
		  struct slab_err *err);

/* Read exactly len bytes from offset off into buf (a ranged GET, "Range: bytes=off-(off+len-1)").
 * When etag is not NULL and not "", an ETag in the response must be that one: a different one
 * is SLAB_ERR_CHANGED (the object was replaced), never retried (a response without an ETag is
 * taken as it is); so is an answer that gives the object another size than the one
 * slab_net_stat() found: a 206's Content-Range total, a 200's length, a 416's Content-Range
 * or S3 ActualObjectSize (a range past the end of an object replaced by a shorter one).
 * Retried with capped exponential
 * backoff and jitter (never sooner than an answer's Retry-After asks; one that asks for more
 * than the time left ends the retries), up to config.retries times and config.timeout
 * seconds in all: a
 * refused or reset connection, a timeout, 5xx, 429, a short body, a Content-Range that is not
 * the one asked for, a 200 with the whole object to a ranged request (the transfer is cut off
 * at once; a range that is the whole object takes a 200). Not retried: 4xx but 408 and 429
 * (403 and 404 fail at once with the server's error code: "HTTP 404 NoSuchKey"). The final
 * error names the URL, the byte range, the attempts and the last HTTP status or the
 * transport's reason. 0, or a negative SLAB_ERR_* with *err. */
int slab_net_read(struct slab_net_object *o, uint64_t off, uint64_t len, void *buf,
		  const char *etag, struct slab_err *err);

void slab_net_stats(const struct slab_net_object *o, struct slab_net_stats *st);

/* on: the object's reads in progress are cut off (within a second: libcurl's progress
 * callback), retried no more, and new ones fail at once ("aborted"), until it is called again
 * with 0. For a loader stopping its threads while a fetch stalls. Any thread. */
void slab_net_cancel(struct slab_net_object *o, int on);

/* ---- Uploads ---------------------------------------------------------------------------- */

/* A stream written into one object, which appears only when slab_net_upload_finish()
 * succeeds. S3: a multipart upload (parts of 8 MiB, several in flight, each retried;
 * slab_net_upload_abort() aborts it on the server; up to config.connections parts, at most 8,
 * in flight, each holding its 8 MiB; an object of one part or less is one PUT); HTTP(S): one
 * PUT with chunked transfer encoding, not retried (the server stores it when the body is
 * complete; an aborted PUT is cut off; a server that takes no data for config.timeout fails
 * the write). */
struct slab_net_upload;

int slab_net_upload_open(struct slab_net_upload **out, const char *url,
			 const struct slab_net_config *c, struct slab_err *err);
/* The bytes, in order; buffered. 0 or a negative error with *err. */
int slab_net_upload_write(struct slab_net_upload *u, const void *buf, size_t len,
			  struct slab_err *err);
/* Send what is left and complete the object. 0, or an error after aborting on the server
 * what was started (best effort). Either way u is then freed with slab_net_upload_abort().
 * A CompleteMultipartUpload answered 404 NoSuchUpload (a completion sent before, its answer
 * lost, completed it) succeeds when a HEAD finds the object with the ETag the parts make. */
int slab_net_upload_finish(struct slab_net_upload *u, struct slab_err *err);
/* Free u, first aborting on the server what was started and not completed by
 * slab_net_upload_finish() (best effort). Accepts NULL. */
void slab_net_upload_abort(struct slab_net_upload *u);
/* For a process that must go now (a signal), from any thread while others write or finish:
 * what is in flight is cut off (within a second), nothing more is sent, and an S3 multipart
 * upload started is aborted on the server (best effort, once the parts in flight are cut off,
 * so that none arrives after the abort). The writer's calls fail from then on ("upload
 * cancelled"); u stays the caller's to free with slab_net_upload_abort(), which waits for
 * a cancel at work. A completion already at the
 * server when the cancel comes may still make the object. */
void slab_net_upload_cancel(struct slab_net_upload *u);

#endif
