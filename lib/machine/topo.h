/* topo.h: the machine's layout as the kernel reports it in sysfs and procfs (NUMA nodes,
 * CPUs and caches, huge pages, PCIe devices that matter for loading data) and the advice that
 * follows from it. Everything is read under a root folder, so tests run on hand-made trees.
 * Never prints. */
#ifndef SLAB_TOPO_H
#define SLAB_TOPO_H

#include <stddef.h>
#include <stdint.h>

/* A sorted list of CPU or node ids, parsed from the kernel's "0-15,32-47" form. */
struct slab_idlist {
	unsigned n;
	unsigned *id;
};

struct slab_topo_node {
	int id;
	char *cpulist;          /* as the kernel writes it; "" for a node without CPUs */
	struct slab_idlist cpus;
	int64_t mem_total;      /* bytes; -1 unknown */
	int64_t mem_free;       /* bytes; -1 unknown */
	int *distance;          /* to nodes[0 .. nnodes-1], in the info's order; -1 unknown */
	int64_t huge_2m_total, huge_2m_free;    /* 2 MiB pages reserved, free; -1 unknown */
	int64_t huge_1g_total, huge_1g_free;    /* 1 GiB pages */
};

struct slab_topo_cache {
	unsigned level;         /* 1, 2, 3, ... */
	const char *type;       /* "data", "instruction" or "unified" */
	char name[8];           /* "L1d", "L1i", "L2", "L3" (as lscpu) */
	uint64_t size;          /* bytes of one instance */
	unsigned instances;     /* distinct shared_cpu_list values among online CPUs */
	unsigned cpus_each;     /* CPUs sharing one instance (the largest such count) */
};

/* The PCIe devices numa-probe reports, by class code. */
enum slab_pci_kind {
	SLAB_PCI_GPU,           /* 0x03xx: VGA, 3D, other display controllers ... */
	SLAB_PCI_DISPLAY,       /* ... unless a BMC's or a hypervisor's display (not for compute) */
	SLAB_PCI_ACCEL,         /* 0x12xx: processing accelerators */
	SLAB_PCI_NVME,          /* 0x0108 */
	SLAB_PCI_ETHERNET,      /* 0x0200 */
	SLAB_PCI_INFINIBAND,    /* 0x0207 */
};

/* One end of a link's state: speed (GT/s, 0 unknown) and width (lanes, 0 unknown). */
struct slab_pci_link {
	double gts;
	unsigned width;
};

struct slab_topo_pci {
	char addr[32];          /* "0000:17:00.0" */
	enum slab_pci_kind kind;
	unsigned class_code;    /* 24 bits, 0x030200 */
	unsigned vendor, device;
	char *driver;           /* NULL when no driver is bound */
	int numa_node;          /* -1: the kernel does not know (or says so) */
	int numa_known;         /* 0: no numa_node file at all, or one of junk */
	int numa_invalid;       /* its numa_node holds what the kernel never writes */
	char *local_cpus;       /* local_cpulist, NULL unknown */
	struct slab_pci_link cur, max;
	int has_link;           /* any of the four link files was there */
	char **names;           /* block devices, network interfaces, /dev/nvidiaN, DRM cards */
	unsigned nnames;
};

/* What a loader feeding one GPU or accelerator should bind to. */
struct slab_topo_advice {
	const struct slab_topo_pci *dev;
	int node;               /* the device's node, -1 unknown */
	int cpu_node;           /* CPUs: the device's node or the nearest with CPUs; -1 all */
	int mem_node;           /* memory: cpu_node or the nearest to it with memory; -1 all */
	char numactl[64];       /* "numactl --cpunodebind=0 --membind=0" */
	const char *cpus;       /* the CPUs that gives: the node's cpulist, or NULL */
	char **nvme;            /* NVMe block devices on cpu_node, NULL-terminated */
	char **network;         /* network interfaces and InfiniBand devices on cpu_node */
};

enum slab_topo_level { SLAB_TOPO_NOTE, SLAB_TOPO_WARNING };

struct slab_topo_warning {
	enum slab_topo_level level;
	const char *code;       /* stable: "gpu_nvme_remote", "link_downgraded", ... */
	char *message;
};

struct slab_topo_info {
	struct slab_topo_node *nodes;   /* by id */
	unsigned nnodes;
	int numa_known;         /* 0: no node folders (a kernel without NUMA): one node 0 assumed */

	char *model;            /* NULL unknown */
	struct slab_idlist online;      /* online CPUs */
	char *online_list;      /* as the kernel writes it */
	unsigned sockets, cores, threads_per_core;      /* 0 unknown */
	struct slab_topo_cache *caches; /* by level, then d, i, unified */
	unsigned ncaches;

	char thp_enabled[32];   /* the bracketed choice: "always", "madvise", "never"; "" unknown */
	char thp_defrag[32];

	struct slab_topo_pci *pci;      /* by address */
	unsigned npci;

	struct slab_topo_advice *advice;        /* one per GPU / accelerator, in pci order */
	unsigned nadvice;
	struct slab_topo_warning *warnings;
	unsigned nwarnings;
};

struct slab_topo;

/* A new context; NULL only when out of memory. */
struct slab_topo *slab_topo_new(void);

/* Called for each file or folder that could not be read (missing ones are normal). */
void slab_topo_set_missing(struct slab_topo *t, void (*fn)(const char *path, int err, void *arg),
			   void *arg);

/* Read everything under root ("/" for this machine), then work out advice and warnings.
 * Missing files leave fields unknown. 0; SLAB_ERR_IO when root is not a readable folder or
 * holds no sys/devices/system; SLAB_ERR_NOMEM. Once per context. */
int slab_topo_read(struct slab_topo *t, const char *root);

/* Valid after a successful read, until slab_topo_close(). */
const struct slab_topo_info *slab_topo_info(const struct slab_topo *t);
const char *slab_topo_error(const struct slab_topo *t);
/* Accepts NULL. */
void slab_topo_close(struct slab_topo *t);

/* The node with this id, or NULL. */
const struct slab_topo_node *slab_topo_node(const struct slab_topo_info *ti, int id);

/* The largest CPU id a list may name: kernels have at most 8192 CPUs (NR_CPUS), and a list
 * naming ids by the million would cost seconds to read CPU by CPU. */
#define SLAB_IDLIST_MAX_ID 65535u

/* "0-3,8" into a sorted list (duplicates dropped). 0; SLAB_ERR_CORRUPT on anything the kernel
 * does not write (junk, an empty piece, "3-1", blanks inside); SLAB_ERR_LIMIT for an id past
 * SLAB_IDLIST_MAX_ID (or more ids in all than that allows); SLAB_ERR_NOMEM. "" and "\n" give
 * an empty list. */
int slab_idlist_parse(const char *s, struct slab_idlist *out);
void slab_idlist_free(struct slab_idlist *l);

/* PCIe: the generation of a speed in GT/s (1..6, 0 unknown), the bytes per second one lane
 * carries in each direction after line encoding (8b/10b to Gen2, 128b/130b Gen3-5, FLIT Gen6
 * approximately), and the link's total in GB/s (0 unknown). */
int slab_pci_gen(double gts);
double slab_pci_lane_gbs(double gts);
double slab_pci_link_gbs(const struct slab_pci_link *l);
/* Below its maximum speed or width, both known. */
int slab_pci_downgraded(const struct slab_topo_pci *d);
/* "gpu", "display", "accelerator", "nvme", "ethernet", "infiniband". */
const char *slab_pci_kind_name(enum slab_pci_kind k);

#endif
