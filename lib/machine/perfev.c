/* perfev.c: dTLB-load-misses and page walks of the calling thread through perf_event_open(2),
 * as one group so both count over the same instants; honest about why they may be absent. */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfev.h"

struct perfev {
	int leader;                     /* dTLB-load-misses */
	int walk;                       /* page walks; -1 when absent */
	const char *walk_name;
	char walk_why[200];
};

/* This thread, any CPU; in the group of GROUP (-1: a new group). */
static long
sys_perf_event_open(struct perf_event_attr *attr, int group)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static int
paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 99;

	if (f != NULL) {
		if (fscanf(f, "%d", &v) != 1)
			v = 99;
		fclose(f);
	}
	return v;
}

static int
have_pmu(void)
{
	struct stat st;

	/* Hybrid Intel parts name theirs cpu_core and cpu_atom. */
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
}

static void
explain(int err, char *why, size_t len)
{
	int level = paranoid_level();

	if (err == EACCES || err == EPERM)
		snprintf(why, len, "perf_event_open: %s; perf_event_paranoid=%d: lower it "
			 "(sysctl kernel.perf_event_paranoid=1) or run with CAP_PERFMON",
			 strerror(err), level);
	else if (err == ENOSYS)
		snprintf(why, len, "perf_event_open: this kernel has no perf events");
	else if (!have_pmu())
		snprintf(why, len, "perf_event_open: %s; no hardware PMU exposed "
			 "(no /sys/bus/event_source/devices/cpu), as in many VMs; "
			 "perf_event_paranoid=%d", strerror(err), level);
	else
		snprintf(why, len, "perf_event_open: %s; this CPU or VM has no dTLB-load-misses "
			 "event; perf_event_paranoid=%d", strerror(err), level);
}

/*
 * Page walks have no generic perf event. AMD family 17h and later (Zen) count L2 DTLB
 * misses, each of which starts a walk, as PMCx045 with unit mask 0xf0 (Linux maps its
 * generic dTLB-load-misses there too). Intel moved DTLB_LOAD_MISSES.WALK_COMPLETED
 * between generations (event 0x08, then 0x12), so without a model table it is left out
 * rather than guessed.
 */
static int
amd_zen(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	int amd = 0, family = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "vendor_id", 9) == 0)
			amd = strstr(line, "AuthenticAMD") != NULL ||
			      strstr(line, "HygonGenuine") != NULL;
		else if (strncmp(line, "cpu family", 10) == 0) {
			const char *colon = strchr(line, ':');
			family = colon != NULL ? atoi(colon + 1) : 0;
		} else if (line[0] == '\n') {
			break;          /* the first CPU is enough */
		}
	}
	fclose(f);
	return amd && family >= 0x17;
}

static void
attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config, int leader)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->disabled = leader;           /* members follow the leader */
	a->exclude_kernel = 1;          /* allowed at perf_event_paranoid=2 */
	a->exclude_hv = 1;
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING;
}

struct perfev *
perfev_open(char *why, size_t len)
{
	struct perf_event_attr a;
	struct perfev *p;
	long fd;

	attr_init(&a, PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB |
		  (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16), 1);
	fd = sys_perf_event_open(&a, -1);
	if (fd < 0) {
		explain(errno, why, len);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		close((int)fd);
		snprintf(why, len, "out of memory");
		return NULL;
	}
	p->leader = (int)fd;
	p->walk = -1;
	if (!amd_zen()) {
		snprintf(p->walk_why, sizeof(p->walk_why),
			 "no known page-walk event for this CPU");
		return p;
	}
	attr_init(&a, PERF_TYPE_RAW, 0xf045, 0);
	fd = sys_perf_event_open(&a, p->leader);
	if (fd < 0) {
		snprintf(p->walk_why, sizeof(p->walk_why), "raw event 0xf045: %s", strerror(errno));
		return p;
	}
	p->walk = (int)fd;
	p->walk_name = "L2 DTLB misses (page walks), raw event 0xf045";
	return p;
}

const char *
perfev_walk_event(const struct perfev *p, char *why, size_t len)
{
	if (p->walk >= 0)
		return p->walk_name;
	snprintf(why, len, "%s", p->walk_why);
	return NULL;
}

void
perfev_start(struct perfev *p)
{
	ioctl(p->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void
perfev_stop(struct perfev *p)
{
	ioctl(p->leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void
perfev_read(struct perfev *p, double *dtlb, double *walks)
{
	/* PERF_FORMAT_GROUP: nr, time_enabled, time_running, then one value per event. */
	uint64_t buf[3 + 2];
	ssize_t n;
	double scale;

	*dtlb = NAN;
	*walks = NAN;
	n = read(p->leader, buf, sizeof(buf));
	if (n < (ssize_t)(4 * sizeof(uint64_t)) || buf[0] < 1)
		return;
	if (buf[1] == 0) {
		scale = 0;              /* never enabled yet: nothing counted */
	} else if (buf[2] == 0) {
		return;                 /* enabled but never on the PMU: unknown */
	} else {
		/* Multiplexed with other users' events: counted part of the time, scaled up. */
		scale = (double)buf[1] / (double)buf[2];
	}
	*dtlb = (double)buf[3] * scale;
	if (p->walk >= 0 && buf[0] >= 2 && n >= (ssize_t)(5 * sizeof(uint64_t)))
		*walks = (double)buf[4] * scale;
}

void
perfev_close(struct perfev *p)
{
	if (p == NULL)
		return;
	if (p->walk >= 0)
		close(p->walk);
	close(p->leader);
	free(p);
}
