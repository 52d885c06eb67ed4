/* test_net.c: the HTTP(S)/S3 transport (lib/common/net.c) without a real server: URLs and
 * their errors, the S3 configuration from the environment and from ~/.aws files in a
 * temporary HOME (profile, region, endpoint, addressing, as the request URL and the signer),
 * that no message or log line holds a secret, retries against a closed port, and the checks
 * of a ranged GET's answer against a canned server on 127.0.0.1. */
#include "md5.h"
#include "net.h"
#include "slab.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char home[] = "/tmp/slab-test-net-XXXXXX";

static int has(const char *s, const char *part)
{
	return s && strstr(s, part) != NULL;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	CHECK(fclose(f) == 0);
}

/* Every variable the configuration reads, unset; HOME the test's. */
static void clean_env(void)
{
	static const char *vars[] = {
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	setenv("HOME", home, 1);
}

/* A port on 127.0.0.1 nothing listens on: bound, then closed. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Open url with cf; its request URL and signer into url_out / signer (may be NULL). */
static int open_as(const char *url, const struct slab_net_config *cf, char *req, size_t reqlen,
		   char *signer, size_t slen, struct slab_err *e)
{
	struct slab_net_object *o;
	int ret = slab_net_open(&o, url, cf, e);

	if (ret == 0) {
		if (req)
			snprintf(req, reqlen, "%s", slab_net_request_url(o));
		if (signer)
			slab_net_signer(o, signer, slen);
		slab_net_close(o);
	}
	return ret;
}

/* ---- URLs --------------------------------------------------------------------------------- */

static void test_urls(void)
{
	struct slab_err e = { "" };
	struct slab_net_object *o;
	char req[512];

	clean_env();
	CHECK(slab_net_is_url("http://h/x"));
	CHECK(slab_net_is_url("https://h/x"));
	CHECK(slab_net_is_url("s3://b/k"));
	CHECK(slab_net_is_url("S3://b/k"));
	CHECK(!slab_net_is_url("/data/x.slab"));
	CHECK(!slab_net_is_url("ftp://h/x"));
	CHECK(!slab_net_is_url(NULL));

	CHECK(open_as("s3://b", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK_STR(e.text, "'s3://b': no key in S3 URL (want s3://BUCKET/KEY)");
	CHECK(open_as("s3://b/", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK_STR(e.text, "'s3://b/': no key in S3 URL (want s3://BUCKET/KEY)");
	CHECK(open_as("s3:///k", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK_STR(e.text, "'s3:///k': no bucket in S3 URL (want s3://BUCKET/KEY)");
	CHECK(open_as("s3://", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "no bucket"));
	CHECK(open_as("s3://b?x/k", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK_STR(e.text, "'s3://b?x/k': bad bucket name 'b?x'");
	{
		/* S3's key limit, 1024 bytes: refused at open, not at the PUT after a whole pack */
		char url[1200] = "s3://b/";

		memset(url + 7, 'k', 1024);
		url[7 + 1024] = '\0';
		CHECK(open_as(url, NULL, NULL, 0, NULL, 0, &e) == 0);
		strcat(url, "k");
		CHECK(open_as(url, NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
		CHECK(has(e.text, "': S3 key of 1025 bytes: at most 1024"));
	}
	CHECK(open_as("ftp://h/x", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK_STR(e.text, "'ftp://h/x': not an http://, https:// or s3:// URL");
	CHECK(open_as("http://", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "'http://': "));

	/* An http(s) URL is taken as given; userinfo never appears in what names it. */
	CHECK(open_as("http://127.0.0.1:8080/a/../b.slab?x=1", NULL, req, sizeof(req), NULL, 0,
		      &e) == 0);
	CHECK_STR(req, "http://127.0.0.1:8080/a/../b.slab?x=1");
	CHECK(slab_net_open(&o, "https://joe:pw1234@host.example/x.slab", NULL, &e) == 0);
	CHECK_STR(slab_net_url(o), "https://***@host.example/x.slab");
	CHECK_STR(slab_net_request_url(o), "https://joe:pw1234@host.example/x.slab");
	slab_net_close(o);
	CHECK(open_as("https://joe:pw1234@", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(!has(e.text, "pw1234"));
	/* A password with a '#', '/' or '?' not encoded: a bad URL, and still masked. */
	CHECK(open_as("https://joe:pw#1234@host.example/x.slab", NULL, NULL, 0, NULL, 0, &e) ==
	      SLAB_ERR_INVAL);
	CHECK(has(e.text, "'https://***@host.example/x.slab': bad URL: "));
	CHECK(open_as("https://joe:p/w?1234@host.example/x.slab", NULL, NULL, 0, NULL, 0, &e) ==
	      SLAB_ERR_INVAL);
	CHECK(has(e.text, "'https://***@host.example/x.slab': bad URL: "));
	/* A presigned URL's credentials are in its query: their values masked, the rest kept;
	 * an s3:// URL has no query (a '?' is the key's). */
	{
		char m[256];

		slab_net_mask(m, sizeof(m), "https://h/k?X-Amz-Credential=AKIA%2Fx&X-Amz-Date=1"
			      "&X-Amz-Signature=ab;sig=&Key=1&x=2#frag?sig=3");
		CHECK_STR(m, "https://h/k?X-Amz-Credential=***&X-Amz-Date=1&X-Amz-Signature=***;"
			  "sig=***&Key=***&x=2#frag?sig=3");
		slab_net_mask(m, sizeof(m), "http://u:p@h/k?token=t");
		CHECK_STR(m, "http://***@h/k?token=***");
		slab_net_mask(m, sizeof(m), "s3://b/a?key=v");
		CHECK_STR(m, "s3://b/a?key=v");
		slab_net_mask(m, 12, "http://h/k?sig=s");
		CHECK_STR(m, "http://h/k?");
		CHECK(slab_net_open(&o, "http://h/k?sig=a&b=c&pass=", NULL, &e) == 0);
		CHECK_STR(slab_net_url(o), "http://h/k?sig=***&b=c&pass=***");
		slab_net_close(o);
	}
	/* An '@' in the path of a good URL is the path's. */
	CHECK(slab_net_open(&o, "http://host.example/a@b.slab", NULL, &e) == 0);
	CHECK_STR(slab_net_url(o), "http://host.example/a@b.slab");
	slab_net_close(o);
	slab_net_close(NULL);
}

/* ---- Configuration ------------------------------------------------------------------------ */

static void test_env(void)
{
	struct slab_net_config cf = { 0 };
	struct slab_err e = { "" };
	char req[512], sg[256];

	clean_env();
	/* AWS's regional endpoint, virtual-host; unsigned without credentials. */
	CHECK(open_as("s3://bkt/x.slab", NULL, req, sizeof(req), sg, sizeof(sg), &e) == 0);
	CHECK_STR(req, "https://bkt.s3.us-east-1.amazonaws.com/x.slab");
	CHECK_STR(sg, "unsigned");
	/* Keys encoded per segment; a bucket with dots or capitals goes path-style. */
	CHECK(open_as("s3://bkt/a b/c+d~e_f.slab", NULL, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://bkt.s3.us-east-1.amazonaws.com/a%20b/c%2Bd~e_f.slab");
	CHECK(open_as("s3://my.bkt/%41/../k", NULL, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://s3.us-east-1.amazonaws.com/my.bkt/%2541/../k");

	setenv("AWS_DEFAULT_REGION", "ap-east-1", 1);
	CHECK(open_as("s3://bkt/x", NULL, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://bkt.s3.ap-east-1.amazonaws.com/x");
	setenv("AWS_REGION", "eu-west-1", 1);
	CHECK(open_as("s3://bkt/x", NULL, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://bkt.s3.eu-west-1.amazonaws.com/x");
	cf.region = "us-west-2";
	CHECK(open_as("s3://bkt/x", &cf, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://bkt.s3.us-west-2.amazonaws.com/x");
	cf.addressing = SLAB_NET_ADDR_PATH;
	CHECK(open_as("s3://bkt/x", &cf, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://s3.us-west-2.amazonaws.com/bkt/x");
	cf.region = "bad region";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK_STR(e.text, "'s3://bkt/x': bad region 'bad region'");
	cf.region = NULL;
	cf.addressing = 7;
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	cf.addressing = 0;

	/* Another endpoint: path-style unless asked. */
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000", 1);
	CHECK(open_as("s3://bkt/d/x.slab", NULL, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "http://127.0.0.1:9000/bkt/d/x.slab");
	cf.s3_endpoint = "http://s3.localhost:9001/";
	cf.addressing = SLAB_NET_ADDR_VIRTUAL;
	CHECK(open_as("s3://bkt/d/x.slab", &cf, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "http://bkt.s3.localhost:9001/d/x.slab");
	cf.addressing = SLAB_NET_ADDR_AUTO;
	cf.s3_endpoint = "https://minio.example/s3";
	CHECK(open_as("s3://bkt/x", &cf, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "https://minio.example/s3/bkt/x");
	cf.s3_endpoint = "ftp://x";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "'s3://bkt/x': bad S3 endpoint 'ftp://x'"));
	cf.s3_endpoint = "localhost:9000";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	/* What every request would drop: refused, wherever the endpoint came from. */
	cf.s3_endpoint = "http://127.0.0.1:9000/?x=1";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "'s3://bkt/x': bad S3 endpoint 'http://127.0.0.1:9000/?x=1': a query "
		  "string has no place in it (want http://HOST[:PORT][/PATH] or https://...)"));
	cf.s3_endpoint = "http://127.0.0.1:9000/s3#top";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "a fragment has no place in it"));
	cf.s3_endpoint = "http://joe:pw1234@127.0.0.1:9000";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "bad S3 endpoint 'http://***@127.0.0.1:9000': a user name has no place"));
	CHECK(!has(e.text, "pw1234"));
	cf.s3_endpoint = NULL;
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000?x", 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "a query string has no place in it"));
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000", 1);

	/* Credentials from the environment: a pair, and a token with it. */
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "unsigned");      /* no secret: no pair */
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "aws:amz:eu-west-1:s3 as AKIDENV");
	setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "aws:amz:eu-west-1:s3 as AKIDENV with a session token");
	cf.anonymous = 1;
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "unsigned");
	clean_env();
}

static void test_files(void)
{
	struct slab_net_config cf = { 0 };
	struct slab_err e = { "" };
	char path[256], req[512], sg[256];

	clean_env();
	snprintf(path, sizeof(path), "%s/.aws", home);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/.aws/credentials", home);
	write_file(path,
		   "# comment\n"
		   "[default]\n"
		   "aws_access_key_id = AKIDDEFAULT\n"
		   "aws_secret_access_key = SECRETDEFAULT\n"
		   "\n"
		   "[work]\r\n"
		   "aws_access_key_id=AKIDWORK\r\n"
		   "aws_secret_access_key=SECRETWORK\r\n"
		   "aws_session_token = TOKENWORK\r\n"
		   "[half]\n"
		   "aws_access_key_id = AKIDHALF\n");
	snprintf(path, sizeof(path), "%s/.aws/config", home);
	write_file(path,
		   "[default]\n"
		   "region = ap-south-1\n"
		   "\n"
		   "[profile work]\n"
		   "region = eu-central-1\n"
		   "endpoint_url = http://s3.localhost:9000\n"
		   "s3 =\n"
		   "  addressing_style = virtual\n"
		   "  other = 1\n"
		   "output = json\n"
		   "[profile cfgonly]\n"
		   "aws_access_key_id = AKIDCFG\n"
		   "aws_secret_access_key = SECRETCFG\n"
		   "[profile s3ep]\n"
		   "endpoint_url = http://global.example:1\n"
		   "s3 =\n"
		   "    endpoint_url = http://s3only.example:2\n"
		   "[profile oddstyle]\n"
		   "s3 =\n"
		   "  addressing_style = sideways\n"
		   "[work]\n"
		   "region = xx-wrong-1\n");

	CHECK(open_as("s3://bkt/x", NULL, req, sizeof(req), sg, sizeof(sg), &e) == 0);
	CHECK_STR(req, "https://bkt.s3.ap-south-1.amazonaws.com/x");
	CHECK_STR(sg, "aws:amz:ap-south-1:s3 as AKIDDEFAULT");

	setenv("AWS_PROFILE", "work", 1);
	CHECK(open_as("s3://bkt/x", NULL, req, sizeof(req), sg, sizeof(sg), &e) == 0);
	CHECK_STR(req, "http://bkt.s3.localhost:9000/x");
	CHECK_STR(sg, "aws:amz:eu-central-1:s3 as AKIDWORK with a session token");
	/* The environment's region wins over the profile's; the config's profile over
	 * $AWS_PROFILE; the config's addressing over the file's. */
	setenv("AWS_REGION", "sa-east-1", 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "aws:amz:sa-east-1:s3 as AKIDWORK with a session token");
	unsetenv("AWS_REGION");
	cf.addressing = SLAB_NET_ADDR_PATH;
	CHECK(open_as("s3://bkt/x", &cf, req, sizeof(req), NULL, 0, &e) == 0);
	CHECK_STR(req, "http://s3.localhost:9000/bkt/x");
	cf.addressing = 0;
	cf.profile = "default";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "aws:amz:ap-south-1:s3 as AKIDDEFAULT");
	cf.profile = "cfgonly";
	CHECK(open_as("s3://bkt/x", &cf, req, sizeof(req), sg, sizeof(sg), &e) == 0);
	CHECK_STR(req, "https://bkt.s3.us-east-1.amazonaws.com/x");
	CHECK_STR(sg, "aws:amz:us-east-1:s3 as AKIDCFG");
	cf.profile = "s3ep";
	CHECK(open_as("s3://bkt/x", &cf, req, sizeof(req), sg, sizeof(sg), &e) == 0);
	CHECK_STR(req, "http://s3only.example:2/bkt/x");
	CHECK_STR(sg, "unsigned");
	cf.profile = "oddstyle";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "bad addressing_style 'sideways'"));
	cf.profile = "half";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "profile 'half' in '"));
	CHECK(has(e.text, "has aws_access_key_id but no aws_secret_access_key"));
	cf.profile = "nope";
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, NULL, 0, &e) == SLAB_ERR_INVAL);
	CHECK(has(e.text, "no profile 'nope' in '"));
	cf.profile = NULL;

	/* Environment pair over the files; anonymous reads no credentials at all. */
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "aws:amz:eu-central-1:s3 as AKIDENV");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	cf.anonymous = 1;
	CHECK(open_as("s3://bkt/x", &cf, NULL, 0, sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "unsigned");
	cf.anonymous = 0;
	unsetenv("AWS_PROFILE");

	/* Other files through the environment ("~/" is HOME); a file that cannot be read
	 * is an error, not a silent anonymous access. */
	snprintf(path, sizeof(path), "%s/other", home);
	write_file(path, "[default]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = S\n");
	setenv("AWS_SHARED_CREDENTIALS_FILE", "~/other", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
	CHECK(open_as("s3://bkt/x", NULL, req, sizeof(req), sg, sizeof(sg), &e) == 0);
	CHECK_STR(sg, "aws:amz:us-east-1:s3 as AKIDOTHER");
	setenv("AWS_SHARED_CREDENTIALS_FILE", home, 1);
	CHECK(open_as("s3://bkt/x", NULL, NULL, 0, NULL, 0, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "cannot read '"));
	CHECK(has(e.text, "Is a directory"));
	CHECK(unlink(path) == 0);
	clean_env();
}

/* ---- Requests that fail --------------------------------------------------------------------- */

struct logbuf {
	pthread_mutex_t lock;
	char text[16384];
	int lines;
};

static void log_line(void *arg, const char *line)
{
	struct logbuf *l = arg;
	size_t n;

	pthread_mutex_lock(&l->lock);
	n = strlen(l->text);
	snprintf(l->text + n, sizeof(l->text) - n, "%s\n", line);
	l->lines++;
	pthread_mutex_unlock(&l->lock);
}

static void test_closed_port(void)
{
	struct logbuf lb = { PTHREAD_MUTEX_INITIALIZER, "", 0 };
	struct slab_net_config cf = { .retries = 2, .timeout = 20, .log = log_line, .log_arg = &lb };
	struct slab_net_object *o;
	struct slab_net_upload *u;
	struct slab_net_stats st;
	struct slab_err e = { "" };
	char url[256], ep[128], etag[SLAB_NET_ETAG_MAX + 1], buf[4096];
	uint64_t size;
	int port = closed_port();

	clean_env();
	snprintf(url, sizeof(url), "http://joe:pw1234@127.0.0.1:%d/x.slab", port);
	CHECK(slab_net_open(&o, url, &cf, &e) == 0);
	CHECK(slab_net_read(o, 0, sizeof(buf), buf, NULL, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "'http://***@127.0.0.1:"));
	CHECK(has(e.text, "/x.slab': bytes 0-4095: gave up after 3 attempts in "));
	CHECK(has(e.text, " s: last: Connection refused"));
	CHECK(!has(e.text, "pw1234"));
	slab_net_stats(o, &st);
	CHECK(st.requests == 3 && st.retries == 2 && st.bytes == 0);
	CHECK(lb.lines == 3);
	CHECK(has(lb.text, "GET http://***@127.0.0.1:"));
	CHECK(has(lb.text, "/x.slab bytes=0-4095: Connection refused, "));
	CHECK(has(lb.text, "retrying in "));
	CHECK(!has(lb.text, "pw1234"));
	CHECK(slab_net_stat(o, &size, etag, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "gave up after 3 attempts"));
	slab_net_close(o);

	/* Signed S3 requests: neither the secret nor the token in a message or a log line. */
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
	cf.s3_endpoint = ep;
	cf.retries = 0;
	lb.text[0] = '\0';
	CHECK(slab_net_open(&o, "s3://bkt/x.slab", &cf, &e) == 0);
	CHECK(slab_net_read(o, 4096, 10, buf, "\"abc\"", &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "'s3://bkt/x.slab': bytes 4096-4105: gave up after 1 attempt in "));
	CHECK(!has(e.text, "ENVSECRET") && !has(e.text, "ENVTOKEN"));
	slab_net_close(o);

	/* Uploads fail the same way, S3 (one PUT) and HTTP (the chunked PUT). */
	CHECK(slab_net_upload_open(&u, "s3://bkt/up.slab", &cf, &e) == 0);
	CHECK(slab_net_upload_write(u, "hello", 5, &e) == 0);
	CHECK(slab_net_upload_finish(u, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "'s3://bkt/up.slab': PUT: gave up after 1 attempt"));
	slab_net_upload_abort(u);
	CHECK(slab_net_upload_open(&u, url, &cf, &e) == 0);
	CHECK(slab_net_upload_write(u, "hello", 5, &e) == 0 || has(e.text, "Connection refused"));
	CHECK(slab_net_upload_finish(u, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "PUT: Connection refused"));
	slab_net_upload_abort(u);
	CHECK(!has(e.text, "pw1234"));
	CHECK(slab_net_upload_open(&u, url, &cf, &e) == 0);
	slab_net_upload_abort(u);
	slab_net_upload_abort(NULL);
	CHECK(!has(lb.text, "ENVSECRET") && !has(lb.text, "ENVTOKEN") && !has(lb.text, "pw1234"));
	clean_env();
}

/* ---- A canned server -------------------------------------------------------------------- */

/* Answers connection i with reply[i] and closes it; keeps each request's head. */
struct canned {
	int fd, port;
	const char *reply[8];
	int n, served;
	char request[8][2048];
	pthread_t thread;
};

static void *canned_main(void *arg)
{
	struct canned *c = arg;

	for (c->served = 0; c->served < c->n; c->served++) {
		int fd = accept(c->fd, NULL, NULL);
		char *req = c->request[c->served], scratch[512];
		size_t got = 0;

		if (fd < 0)
			break;
		while (got + 1 < sizeof(c->request[0]) && !strstr(req, "\r\n\r\n")) {
			ssize_t r = read(fd, req + got, sizeof(c->request[0]) - 1 - got);

			if (r <= 0)
				break;
			got += (size_t)r;
			req[got] = '\0';
		}
		/* A client gone already is the test's to notice. */
		(void)!write(fd, c->reply[c->served], strlen(c->reply[c->served]));
		shutdown(fd, SHUT_WR);
		/* Let the client read to the end before the socket goes away. */
		while (read(fd, scratch, sizeof(scratch)) > 0)
			;
		close(fd);
	}
	return NULL;
}

static void canned_start(struct canned *c)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(c->fd >= 0 && bind(c->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(c->fd, 8) == 0);
	CHECK(getsockname(c->fd, (struct sockaddr *)&a, &len) == 0);
	c->port = ntohs(a.sin_port);
	CHECK(pthread_create(&c->thread, NULL, canned_main, c) == 0);
}

static void canned_stop(struct canned *c)
{
	shutdown(c->fd, SHUT_RDWR);
	pthread_join(c->thread, NULL);
	close(c->fd);
}

/* Read bytes 2-5 of an object (its ETag "e1") from a server answering replies in turn. */
static int canned_read(struct canned *c, const char *const *replies, int n, int s3, char *got,
		       struct slab_err *e)
{
	struct slab_net_config cf = { .retries = n - 1, .timeout = 20, .connections = 2 };
	struct slab_net_object *o;
	char url[128], ep[64];
	int ret;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < n; i++)
		c->reply[i] = replies[i];
	c->n = n;
	canned_start(c);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", c->port);
	snprintf(url, sizeof(url), s3 ? "s3://bkt/o.slab" : "%s/o.slab", ep);
	cf.s3_endpoint = ep;
	CHECK(slab_net_open(&o, url, &cf, e) == 0);
	ret = slab_net_read(o, 2, 4, got, "\"e1\"", e);
	slab_net_close(o);
	canned_stop(c);
	return ret;
}

#define H(status) "HTTP/1.1 " status "\r\nConnection: close\r\n"

static void test_answers(void)
{
	static const char ok[] = H("206 Partial Content") "ETag: \"e1\"\r\n"
		"Content-Range: bytes 2-5/10\r\nContent-Length: 4\r\n\r\ncdef";
	static const char whole[] = H("200 OK") "ETag: \"e1\"\r\nContent-Length: 10\r\n\r\nabcdefghij";
	static const char wrong[] = H("206 Partial Content") "Content-Range: bytes 0-3/10\r\n"
		"Content-Length: 4\r\n\r\nabcd";
	static const char shortb[] = H("206 Partial Content") "Content-Range: bytes 2-5/10\r\n"
		"Content-Length: 4\r\n\r\ncd";
	static const char changed[] = H("206 Partial Content") "ETag: \"e2\"\r\n"
		"Content-Range: bytes 2-5/10\r\nContent-Length: 4\r\n\r\ncdef";
	static const char nokey[] = H("404 Not Found") "Content-Type: application/xml\r\n\r\n"
		"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The specified key "
		"does not exist.</Message></Error>";
	static const char denied[] = H("403 Forbidden") "\r\n<Error><Code>SignatureDoesNotMatch"
		"</Code><Message>The request signature we calculated does not match &amp; so on"
		"</Message></Error>";
	static const char slow[] = H("503 Slow Down") "\r\n<Error><Code>SlowDown</Code>"
		"<Message>Please reduce your request rate.</Message></Error>";
	static const char moved[] = H("301 Moved Permanently") "Location: /elsewhere.slab\r\n"
		"Content-Length: 89\r\n\r\n<Error><Code>PermanentRedirect</Code><Message>Use the "
		"bucket's endpoint</Message></Error>";
	struct canned c;
	struct slab_err e = { "" };
	char got[5] = "";

	clean_env();
	{
		const char *r[] = { ok };

		CHECK(canned_read(&c, r, 1, 1, got, &e) == 0);
		CHECK(memcmp(got, "cdef", 4) == 0);
		CHECK(has(c.request[0], "GET /bkt/o.slab HTTP/1.1\r\n"));
		CHECK(has(c.request[0], "\r\nRange: bytes=2-5\r\n"));
		CHECK(has(c.request[0], "\r\nx-amz-content-sha256: UNSIGNED-PAYLOAD\r\n"));
		/* Signed as the default profile of test_files' ~/.aws says; the secret is
		 * in no header. */
		CHECK(has(c.request[0], "\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIDDEFAULT/"));
		CHECK(has(c.request[0], "/ap-south-1/s3/aws4_request, SignedHeaders=host;range;"
			  "x-amz-content-sha256;x-amz-date, Signature="));
		CHECK(!has(c.request[0], "SECRETDEFAULT"));
	}
	{
		/* A wrong Content-Range, a short body: cut off, retried, then the right answer. */
		const char *r[] = { wrong, shortb, ok };

		memset(got, 0, sizeof(got));
		CHECK(canned_read(&c, r, 3, 0, got, &e) == 0);
		CHECK(memcmp(got, "cdef", 4) == 0);
		CHECK(c.served == 3);
	}
	{
		/* A plain server's redirect is followed, the Range kept; S3's is an error. */
		const char *r[] = { moved, ok };

		memset(got, 0, sizeof(got));
		CHECK(canned_read(&c, r, 2, 0, got, &e) == 0);
		CHECK(memcmp(got, "cdef", 4) == 0);
		CHECK(has(c.request[1], "GET /elsewhere.slab HTTP/1.1\r\n"));
		CHECK(has(c.request[1], "\r\nRange: bytes=2-5\r\n"));
		CHECK(canned_read(&c, r, 2, 1, got, &e) == SLAB_ERR_IO);
		CHECK_STR(e.text, "'s3://bkt/o.slab': HTTP 301 PermanentRedirect: Use the bucket's "
			  "endpoint (bytes 2-5)");
	}
	{
		const char *r[] = { wrong, wrong };

		CHECK(canned_read(&c, r, 2, 0, got, &e) == SLAB_ERR_IO);
		CHECK(has(e.text, "/o.slab': bytes 2-5: gave up after 2 attempts in "));
		CHECK(has(e.text, ": last: Content-Range 'bytes 0-3/10' is not the range asked for"));
	}
	{
		/* A server ignoring Range will go on ignoring it: not asked again. */
		const char *r[] = { whole, ok };

		CHECK(canned_read(&c, r, 2, 0, got, &e) == SLAB_ERR_IO);
		CHECK(has(e.text, "/o.slab': server ignored the Range header (bytes 2-5)"));
		CHECK(c.served == 1);
	}
	{
		const char *r[] = { shortb };

		CHECK(canned_read(&c, r, 1, 0, got, &e) == SLAB_ERR_IO);
		CHECK(has(e.text, ": last: short body: 2 of 4 bytes") ||
		      has(e.text, "transfer closed with 2 bytes remaining"));
	}
	{
		const char *r[] = { changed, ok };

		CHECK(canned_read(&c, r, 2, 1, got, &e) == SLAB_ERR_CHANGED);
		CHECK_STR(e.text, "'s3://bkt/o.slab': the object changed while in use "
			  "(ETag \"e2\", was \"e1\")");
		CHECK(c.served == 1);
	}
	{
		const char *r[] = { nokey, ok };

		CHECK(canned_read(&c, r, 2, 1, got, &e) == SLAB_ERR_NOTFOUND);
		CHECK_STR(e.text, "'s3://bkt/o.slab': HTTP 404 NoSuchKey (bytes 2-5)");
		CHECK(c.served == 1);
	}
	{
		const char *r[] = { denied, ok };

		CHECK(canned_read(&c, r, 2, 1, got, &e) == SLAB_ERR_IO);
		CHECK_STR(e.text, "'s3://bkt/o.slab': HTTP 403 SignatureDoesNotMatch: The request "
			  "signature we calculated does not match & so on (bytes 2-5)");
	}
	{
		const char *r[] = { slow, slow };

		CHECK(canned_read(&c, r, 2, 1, got, &e) == SLAB_ERR_IO);
		CHECK(has(e.text, "'s3://bkt/o.slab': bytes 2-5: gave up after 2 attempts in "));
		CHECK(has(e.text, " s: last: HTTP 503 SlowDown"));
	}
}

/* stat: HEAD, and where HEAD is refused a GET of the first byte. */
static void test_stat(void)
{
	static const char head[] = H("200 OK") "ETag: \"abc\"\r\nContent-Length: 1234\r\n\r\n";
	static const char refused[] = H("405 Method Not Allowed") "Content-Length: 0\r\n\r\n";
	static const char first[] = H("206 Partial Content") "ETag: W/\"w\"\r\n"
		"Content-Range: bytes 0-0/99\r\nContent-Length: 1\r\n\r\nx";
	static const char nokey[] = H("404 Not Found") "Content-Length: 0\r\n\r\n";
	static const char nokey_body[] = H("404 Not Found") "\r\n<Error><Code>NoSuchBucket"
		"</Code></Error>";
	struct slab_net_config cf = { .retries = 0, .timeout = 20 };
	const struct { const char *r[2]; int n, s3, ret; uint64_t size; const char *etag, *text; } t[] = {
		{ { head }, 1, 0, 0, 1234, "\"abc\"", NULL },
		{ { refused, first }, 2, 0, 0, 99, "W/\"w\"", NULL },
		{ { nokey }, 1, 0, SLAB_ERR_NOTFOUND, 0, NULL, "/o.slab': HTTP 404" },
		{ { nokey, nokey_body }, 2, 1, SLAB_ERR_NOTFOUND, 0, NULL,
		  "'s3://bkt/o.slab': HTTP 404 NoSuchBucket" },
	};

	clean_env();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct canned c = { 0 };
		struct slab_net_object *o;
		struct slab_err e = { "" };
		char url[128], ep[64], etag[SLAB_NET_ETAG_MAX + 1] = "";
		uint64_t size = 0;

		c.reply[0] = t[i].r[0];
		c.reply[1] = t[i].r[1];
		c.n = t[i].n;
		canned_start(&c);
		snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", c.port);
		snprintf(url, sizeof(url), t[i].s3 ? "s3://bkt/o.slab" : "%s/o.slab", ep);
		cf.s3_endpoint = ep;
		CHECK(slab_net_open(&o, url, &cf, &e) == 0);
		CHECK(slab_net_stat(o, &size, etag, &e) == t[i].ret);
		if (t[i].ret == 0) {
			CHECK(size == t[i].size);
			CHECK_STR(etag, t[i].etag);
		} else {
			CHECK(has(e.text, t[i].text));
		}
		CHECK(has(c.request[0], "HEAD /"));
		if (t[i].n > 1)
			CHECK(has(c.request[1], "\r\nRange: bytes=0-0\r\n"));
		slab_net_close(o);
		canned_stop(&c);
	}
}

/* A failed write is final: finish must not store what was buffered as the whole object. */
static void test_upload_failure(void)
{
	static const char denied[] = H("403 Forbidden") "Content-Length: 61\r\n\r\n"
		"<Error><Code>AccessDenied</Code><Message>No</Message></Error>";
	static const char stored[] = H("200 OK") "ETag: \"x\"\r\nContent-Length: 0\r\n\r\n";
	struct slab_net_config cf = { .retries = 0, .timeout = 20 };
	struct canned c = { .reply = { denied, stored }, .n = 2 };
	struct slab_net_upload *u;
	struct slab_err e = { "" };
	char ep[64];
	size_t len = (9u << 20);
	char *buf = calloc(1, len);

	clean_env();
	canned_start(&c);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", c.port);
	cf.s3_endpoint = ep;
	CHECK(buf && slab_net_upload_open(&u, "s3://bkt/up.slab", &cf, &e) == 0);
	CHECK(slab_net_upload_write(u, buf, len, &e) == SLAB_ERR_IO);
	CHECK_STR(e.text, "'s3://bkt/up.slab': HTTP 403 AccessDenied: No (CreateMultipartUpload)");
	e.text[0] = '\0';
	CHECK(slab_net_upload_write(u, buf, 1, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "AccessDenied"));
	CHECK(slab_net_upload_finish(u, &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "AccessDenied"));
	slab_net_upload_abort(u);
	canned_stop(&c);
	CHECK(c.served == 1);
	CHECK(has(c.request[0], "POST /bkt/up.slab?uploads= HTTP/1.1\r\n"));
	free(buf);
}

static void test_md5(void)
{
	static const struct { const char *in; size_t n; const char *hex; } v[] = {
		{ "", 0, "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", 1, "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", 3, "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", 14, "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  80, "57edf4a22be3c955ac49da2e2107b67a" },
	};
	char a[120], hex[33];
	unsigned char d[16];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		slab_md5(v[i].in, v[i].n, d);
		for (int k = 0; k < 16; k++)
			snprintf(hex + 2 * k, 3, "%02x", d[k]);
		CHECK_STR(hex, v[i].hex);
	}
	/* Lengths where the padding takes a second block, or just does not. */
	memset(a, 'a', sizeof(a));
	slab_md5(a, 56, d);
	CHECK(d[0] == 0x3b && d[15] == 0x18);
	slab_md5(a, 64, d);
	CHECK(d[0] == 0x01 && d[15] == 0x67);
	slab_md5(a, 119, d);
	CHECK(d[0] == 0x8a && d[15] == 0x13);
}

/* A CompleteMultipartUpload whose answer was lost, sent again and answered 404 NoSuchUpload
 * (AWS's answer once the first one completed the upload): done when the object at the key has
 * the ETag the parts make, else the error. The same at the first attempt (libcurl may have
 * sent it before, unseen). */
static void test_complete_again(void)
{
	static const char created[] = H("200 OK") "Content-Length: 86\r\n\r\n"
		"<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>";
	static const char part1[] = H("200 OK") "ETag: \"0123456789abcdef0123456789abcdef\"\r\n"
		"Content-Length: 0\r\n\r\n";
	static const char part2[] = H("200 OK") "ETag: \"fedcba9876543210fedcba9876543210\"\r\n"
		"Content-Length: 0\r\n\r\n";
	static const char lost[] = H("200 OK") "Content-Length: 200\r\n\r\n<Complete";
	static const char gone[] = H("404 Not Found") "Content-Length: 63\r\n\r\n"
		"<Error><Code>NoSuchUpload</Code><Message>gone</Message></Error>";
	/* md5(the two parts' MD5s), "-2" */
	static const char theirs[] = H("200 OK")
		"ETag: \"b871e39d1a3258ca21654616395f5079-2\"\r\nContent-Length: 9437184\r\n\r\n";
	static const char another[] = H("200 OK")
		"ETag: \"b871e39d1a3258ca21654616395f5078-2\"\r\nContent-Length: 9437184\r\n\r\n";
	static const char aborted[] = H("204 No Content") "\r\n";
	const char *head[] = { theirs, another, another };
	struct slab_net_config cf = { .retries = 2, .timeout = 20, .connections = 1 };
	size_t len = (9u << 20);
	char *buf = calloc(1, len), ep[64];

	clean_env();
	CHECK(buf != NULL);
	for (int i = 0; i < 3 && buf; i++) {
		/* 0: the object is the parts'; 1: another; 2: another, NoSuchUpload at once */
		struct canned c = { .reply = { created, part1, part2, lost, gone, head[i], aborted },
				    .n = i ? 7 : 6 };
		struct slab_net_upload *u;
		struct slab_err e = { "" };
		int ret, at;

		if (i == 2) {
			c.reply[3] = gone;
			c.reply[4] = another;
			c.reply[5] = aborted;
			c.n = 6;
		}
		canned_start(&c);
		snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", c.port);
		cf.s3_endpoint = ep;
		CHECK(slab_net_upload_open(&u, "s3://bkt/up.slab", &cf, &e) == 0);
		CHECK(slab_net_upload_write(u, buf, len, &e) == 0);
		ret = slab_net_upload_finish(u, &e);
		slab_net_upload_abort(u);
		canned_stop(&c);
		CHECK(c.served == c.n);
		at = i == 2 ? 4 : 5;
		CHECK(has(c.request[at], "HEAD /bkt/up.slab HTTP/1.1\r\n"));
		if (i == 0) {
			CHECK(ret == 0);
		} else {
			CHECK(has(c.request[c.n - 1], "DELETE /bkt/up.slab?uploadId=u1 HTTP/1.1\r\n"));
			CHECK(ret == SLAB_ERR_NOTFOUND);
			CHECK_STR(e.text, "'s3://bkt/up.slab': HTTP 404 NoSuchUpload "
				  "(CompleteMultipartUpload)");
		}
	}
	free(buf);
}

/* A 503 or 429 that says when to come back (Retry-After) is not asked again sooner; one that
 * asks for more than the time left is given up on at once, saying so. */
static void test_retry_after(void)
{
	static const char busy[] = H("503 Service Unavailable") "Retry-After: 1\r\n"
		"Content-Length: 0\r\n\r\n";
	static const char later[] = H("429 Too Many Requests") "Retry-After: 3600\r\n"
		"Content-Length: 0\r\n\r\n";
	static const char ok[] = H("206 Partial Content") "ETag: \"e1\"\r\n"
		"Content-Range: bytes 2-5/10\r\nContent-Length: 4\r\n\r\ncdef";
	struct logbuf lb = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct slab_net_config cf = { .retries = 3, .timeout = 60, .log = log_line, .log_arg = &lb };
	struct canned c = { .reply = { busy, ok, later }, .n = 3 };
	struct slab_net_object *o;
	struct slab_err e = { "" };
	char url[128], got[4];

	clean_env();
	canned_start(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/o.slab", c.port);
	CHECK(slab_net_open(&o, url, &cf, &e) == 0);
	CHECK(slab_net_read(o, 2, 4, got, "\"e1\"", &e) == 0);
	CHECK(memcmp(got, "cdef", 4) == 0);
	CHECK(has(lb.text, ": HTTP 503, ") && has(lb.text, " ms; retrying in 1000 ms\n"));
	CHECK(slab_net_read(o, 2, 4, got, "\"e1\"", &e) == SLAB_ERR_IO);
	CHECK(has(e.text, "bytes 2-5: gave up after 1 attempt in ") &&
	      has(e.text, " s: last: HTTP 429 (Retry-After: 3600 s, more than the time left)"));
	slab_net_close(o);
	canned_stop(&c);
	CHECK(c.served == 3);
}

int main(void)
{
	char path[256];

	CHECK(mkdtemp(home) != NULL);
	test_urls();
	test_env();
	test_files();
	test_closed_port();
	test_answers();
	test_stat();
	test_upload_failure();
	test_md5();
	test_complete_again();
	test_retry_after();
	snprintf(path, sizeof(path), "%s/.aws/credentials", home);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.aws/config", home);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.aws", home);
	rmdir(path);
	CHECK(rmdir(home) == 0);
	return UNIT_DONE();
}
