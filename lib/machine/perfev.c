/* perfev.c: dTLB-load-misses and page walks of the calling thread through perf_event_open(2),
 * as one group so both count over the same instants; honest about why they may be absent. */
#include <errno.h>
#include <fcntl.h>
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
#include "slab.h"
#include "sysfs.h"

struct slab_perfev {
	int leader;                     /* dTLB-load-misses; -1 when not open */
	int walk;                       /* page walks; -1 when absent */
	const char *walk_name;
	char err[400];                  /* why the counters, or the page walks, are absent */
};

/* This thread, any CPU; in the group of GROUP (-1: a new group). */
static long sys_perf_event_open(struct perf_event_attr *attr, int group)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid_level(void)
{
	int64_t v;

	if (slab_sysfs_i64(NULL, "proc/sys/kernel/perf_event_paranoid", &v) < 0 ||
	    v < -1000 || v > 1000)
		return 99;
	return (int)v;
}

static int have_pmu(void)
{
	int fd;

	/* Hybrid Intel parts name theirs cpu_core and cpu_atom. */
	fd = slab_sysfs_openat(NULL, "sys/bus/event_source/devices/cpu", O_PATH);
	if (fd < 0)
		fd = slab_sysfs_openat(NULL, "sys/bus/event_source/devices/cpu_core", O_PATH);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void explain(int err, char *why, size_t len)
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
static int amd_zen(void)
{
	char text[4096];        /* the first CPU's vendor_id and cpu family lines */
	int amd = 0, family = 0;

	if (slab_sysfs_read(NULL, "proc/cpuinfo", text, sizeof(text)) < 0)
		return 0;
	for (char *line = text; line != NULL && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		if (strncmp(line, "vendor_id", 9) == 0) {
			size_t end = strcspn(line, "\n");

			amd = memmem(line, end, "AuthenticAMD", 12) != NULL ||
			      memmem(line, end, "HygonGenuine", 12) != NULL;
		} else if (strncmp(line, "cpu family", 10) == 0) {
			const char *colon = strchr(line, ':');
			family = colon != NULL ? atoi(colon + 1) : 0;
		} else if (line[0] == '\n') {
			break;          /* the first CPU is enough */
		}
	}
	return amd && family >= 0x17;
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config, int leader)
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

struct slab_perfev *slab_perfev_new(void)
{
	struct slab_perfev *p = calloc(1, sizeof(*p));

	if (p != NULL)
		p->leader = p->walk = -1;
	return p;
}

int slab_perfev_open(struct slab_perfev *p)
{
	struct perf_event_attr a;
	long fd;

	if (p->leader >= 0) {
		snprintf(p->err, sizeof(p->err), "counters open already");
		return SLAB_ERR_INVAL;
	}
	attr_init(&a, PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB |
		  (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16), 1);
	fd = sys_perf_event_open(&a, -1);
	if (fd < 0) {
		explain(errno, p->err, sizeof(p->err));
		return SLAB_ERR_IO;
	}
	p->leader = (int)fd;
	if (!amd_zen()) {
		snprintf(p->err, sizeof(p->err), "no known page-walk event for this CPU");
		return 0;
	}
	attr_init(&a, PERF_TYPE_RAW, 0xf045, 0);
	fd = sys_perf_event_open(&a, p->leader);
	if (fd < 0) {
		snprintf(p->err, sizeof(p->err), "raw event 0xf045: %s", strerror(errno));
		return 0;
	}
	p->walk = (int)fd;
	p->walk_name = "L2 DTLB misses (page walks), raw event 0xf045";
	return 0;
}

const char *slab_perfev_walk_event(const struct slab_perfev *p)
{
	return p->walk >= 0 ? p->walk_name : NULL;
}

const char *slab_perfev_error(const struct slab_perfev *p)
{
	return p->err;
}

void slab_perfev_start(struct slab_perfev *p)
{
	ioctl(p->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void slab_perfev_stop(struct slab_perfev *p)
{
	ioctl(p->leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void slab_perfev_read(struct slab_perfev *p, double *dtlb, double *walks)
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

void slab_perfev_close(struct slab_perfev *p)
{
	if (p == NULL)
		return;
	if (p->walk >= 0)
		close(p->walk);
	if (p->leader >= 0)
		close(p->leader);
	free(p);
}
