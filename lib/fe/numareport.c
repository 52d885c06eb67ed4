/* numareport.c: numa-probe's outputs: the layout as tables (nodes, CPU and caches, PCIe
 * devices, advice and warnings), the measured matrices with their notes, and the JSON of
 * both. Prints to standard output. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "errfmt.h"
#include "json.h"
#include "membench.h"
#include "numareport.h"
#include "topo.h"

/* A report printed while memory ran out is missing cells or lines: printing goes on, and
 * main says so and exits 1. */
static int out_of_memory;

static void *checked(void *p)
{
	if (p == NULL)
		out_of_memory = 1;
	return p;
}

/* ---- a text table: columns as wide as their widest cell, two spaces apart ----------------- */

struct table {
	unsigned ncols;
	const char *align;      /* 'l' or 'r' per column; NULL: the first left, the rest right */
	int all_left;           /* or every column left-aligned */
	char **cells;           /* row by row; NULL cells print as "-" */
	unsigned nrows;
};

static void table_init(struct table *t, unsigned ncols, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->align = align;
}

static int table_right(const struct table *t, unsigned c)
{
	if (t->all_left)
		return 0;
	return t->align ? t->align[c] == 'r' : c > 0;
}

/* A row from an array of t->ncols strings (copied). */
static void table_row_v(struct table *t, char *const *row)
{
	char **grown = checked(realloc(t->cells,
				       (size_t)(t->nrows + 1) * t->ncols * sizeof(*t->cells)));

	if (grown == NULL)
		return;
	t->cells = grown;
	for (unsigned c = 0; c < t->ncols; c++)
		t->cells[(size_t)t->nrows * t->ncols + c] = row[c] ? checked(strdup(row[c])) : NULL;
	t->nrows++;
}

/* A row of t->ncols strings given as arguments (at most 10). */
static void table_row(struct table *t, ...)
{
	char *row[10];
	va_list ap;

	va_start(ap, t);
	for (unsigned c = 0; c < t->ncols && c < 10; c++)
		row[c] = va_arg(ap, char *);
	va_end(ap);
	table_row_v(t, row);
}

static void table_print(struct table *t)
{
	size_t *w = checked(calloc(t->ncols ? t->ncols : 1, sizeof(*w)));

	for (unsigned r = 0; w != NULL && r < t->nrows; r++)
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *s = t->cells[(size_t)r * t->ncols + c];
			size_t len = s ? cli_fputs_escaped(s, NULL) : 1;

			if (len > w[c])
				w[c] = len;
		}
	for (unsigned r = 0; w != NULL && r < t->nrows; r++) {
		char *const *row = t->cells + (size_t)r * t->ncols;
		unsigned last = t->ncols;

		/* Empty cells at the end of a row print nothing, not blanks. */
		while (last > 0 && row[last - 1] != NULL && row[last - 1][0] == '\0')
			last--;
		fputs("  ", stdout);
		for (unsigned c = 0; c < last; c++) {
			const char *s = row[c] ? row[c] : "-";
			size_t len = cli_fputs_escaped(s, NULL);

			if (c)
				fputs("  ", stdout);
			/* Names come from the tree: escaped, they cannot split a row or drive
			 * a terminal. */
			if (table_right(t, c))
				printf("%*s", (int)(w[c] - len), "");
			cli_fputs_escaped(s, stdout);
			if (!table_right(t, c) && c + 1 < last)
				printf("%*s", (int)(w[c] - len), "");
		}
		putchar('\n');
	}
	for (size_t i = 0; i < (size_t)t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
	t->cells = NULL;
	t->nrows = 0;
}

/* ---- text --------------------------------------------------------------------------------- */

static void asprintf_or_null(char **out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* *out is a new string, or NULL (printed as "-") when out of memory. */
static void asprintf_or_null(char **out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(out, fmt, ap) < 0) {
		*out = NULL;
		out_of_memory = 1;
	}
	va_end(ap);
}

static const char *i64_text(int64_t v, char *buf, size_t len)
{
	if (v < 0)
		return "-";
	snprintf(buf, len, "%lld", (long long)v);
	return buf;
}

static const char *bytes_text(int64_t v, char *buf, size_t len)
{
	if (v < 0)
		return "-";
	return cli_human_size((uint64_t)v, buf, len);
}

static const char *node_kind(const struct slab_topo_node *nd)
{
	if (nd->cpus.n > 0)
		return nd->mem_total > 0 ? "cpus+memory" : nd->mem_total == 0 ? "cpus-only" : "cpus";
	return nd->mem_total > 0 ? "memory-only" : nd->mem_total == 0 ? "empty" : "unknown";
}

void numa_print_nodes(const struct slab_topo_info *ti)
{
	struct table t;
	char a[32], b[32], id[16];

	printf("Nodes\n");
	table_init(&t, 5, "lllll");
	table_row(&t, "node", "cpus", "memory", "free", "kind");
	for (unsigned i = 0; i < ti->nnodes; i++) {
		const struct slab_topo_node *nd = &ti->nodes[i];

		snprintf(id, sizeof(id), "%d", nd->id);
		table_row(&t, id, nd->cpulist && *nd->cpulist ? nd->cpulist : "-",
			  bytes_text(nd->mem_total, a, sizeof(a)), bytes_text(nd->mem_free, b, sizeof(b)),
			  node_kind(nd));
	}
	table_print(&t);
	if (!ti->numa_known)
		printf("  the kernel reports no NUMA nodes: one node 0 assumed\n");

	printf("\nDistances\n");
	{
		char **row = checked(calloc(ti->nnodes + 1, sizeof(*row)));

		table_init(&t, ti->nnodes + 1, NULL);
		for (unsigned r = 0; row != NULL && r <= ti->nnodes; r++) {
			for (unsigned c = 0; c <= ti->nnodes; c++) {
				const int *dist = r ? ti->nodes[r - 1].distance : NULL;

				if (r == 0 && c == 0)
					row[c] = checked(strdup("node"));
				else if (r == 0 || c == 0)
					asprintf_or_null(&row[c], "%d", ti->nodes[(r ? r : c) - 1].id);
				else if (dist != NULL && dist[c - 1] >= 0)
					asprintf_or_null(&row[c], "%d", dist[c - 1]);
				else
					row[c] = NULL;
			}
			table_row_v(&t, row);
			for (unsigned c = 0; c <= ti->nnodes; c++) {
				free(row[c]);
				row[c] = NULL;
			}
		}
		table_print(&t);
		free(row);
	}

	printf("\nHuge pages\n");
	table_init(&t, 5, "lrrrr");
	table_row(&t, "node", "2M-reserved", "2M-free", "1G-reserved", "1G-free");
	for (unsigned i = 0; i < ti->nnodes; i++) {
		const struct slab_topo_node *nd = &ti->nodes[i];
		char c1[32], c2[32], c3[32], c4[32];

		snprintf(id, sizeof(id), "%d", nd->id);
		table_row(&t, id, i64_text(nd->huge_2m_total, c1, sizeof(c1)),
			  i64_text(nd->huge_2m_free, c2, sizeof(c2)),
			  i64_text(nd->huge_1g_total, c3, sizeof(c3)),
			  i64_text(nd->huge_1g_free, c4, sizeof(c4)));
	}
	table_print(&t);
	cli_printf_escaped(stdout, "  transparent huge pages: %s (defrag: %s)",
			   ti->thp_enabled[0] ? ti->thp_enabled : "unknown",
			   ti->thp_defrag[0] ? ti->thp_defrag : "unknown");
	putchar('\n');
}

void numa_print_cpu(const struct slab_topo_info *ti)
{
	struct table t;

	printf("\nCPU\n");
	cli_printf_escaped(stdout, "  model:    %s", ti->model ? ti->model : "unknown");
	putchar('\n');
	if (ti->online.n && ti->online_list && *ti->online_list)
		printf("  cpus:     %u online (%s)\n", ti->online.n, ti->online_list);
	else if (ti->online.n)
		printf("  cpus:     %u\n", ti->online.n);
	else
		printf("  cpus:     unknown\n");
	if (ti->sockets)
		printf("  sockets:  %u\n", ti->sockets);
	else
		printf("  sockets:  unknown\n");
	if (ti->cores && ti->sockets && ti->cores % ti->sockets == 0)
		printf("  cores:    %u (%u per socket)\n", ti->cores, ti->cores / ti->sockets);
	else if (ti->cores)
		printf("  cores:    %u\n", ti->cores);
	else
		printf("  cores:    unknown\n");
	if (ti->threads_per_core)
		printf("  threads:  %u per core (SMT %s)\n", ti->threads_per_core,
		       ti->threads_per_core > 1 ? "on" : "off");
	else
		printf("  threads:  unknown\n");

	printf("\nCaches\n");
	if (ti->ncaches == 0) {
		printf("  unknown\n");
		return;
	}
	table_init(&t, 4, "llrr");
	table_row(&t, "cache", "size", "count", "cpus-each");
	for (unsigned i = 0; i < ti->ncaches; i++) {
		const struct slab_topo_cache *c = &ti->caches[i];
		char size[32], count[16], each[16];

		snprintf(count, sizeof(count), "%u", c->instances);
		snprintf(each, sizeof(each), "%u", c->cpus_each);
		table_row(&t, c->name, cli_human_size(c->size, size, sizeof(size)), count, each);
	}
	table_print(&t);
}

static const char *link_text(const struct slab_pci_link *l, char *buf, size_t len)
{
	char w[16];
	int gen = slab_pci_gen(l->gts);

	if (l->gts <= 0 && l->width == 0)
		return "-";
	if (l->width)
		snprintf(w, sizeof(w), "x%u", l->width);
	else
		snprintf(w, sizeof(w), "x?");
	if (gen)
		snprintf(buf, len, "Gen%d%s", gen, w);
	else if (l->gts > 0)
		snprintf(buf, len, "%.1fGT/s%s", l->gts, w);
	else
		snprintf(buf, len, "?%s", w);
	return buf;
}

static const char *gbs_text(const struct slab_pci_link *l, char *buf, size_t len)
{
	double g = slab_pci_link_gbs(l);

	if (g <= 0)
		return "-";
	snprintf(buf, len, "%.1f%s", g, slab_pci_gen(l->gts) == 6 ? "~" : "");
	return buf;
}

static char *join(char *const *names, unsigned n, const char *sep)
{
	size_t len = 1;
	char *s;

	for (unsigned i = 0; i < n; i++)
		len += strlen(names[i]) + strlen(sep);
	s = checked(malloc(len));
	if (s == NULL)
		return NULL;
	s[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		if (i)
			strcat(s, sep);
		strcat(s, names[i]);
	}
	return s;
}

static unsigned count_strs(char *const *arr)
{
	unsigned n = 0;

	while (arr != NULL && arr[n] != NULL)
		n++;
	return n;
}

void numa_print_pci(const struct slab_topo_info *ti)
{
	struct table t;
	int gen6 = 0;

	printf("\nPCIe devices\n");
	if (ti->npci == 0) {
		printf("  none found (GPUs 03xx, accelerators 12xx, NVMe 0108, Ethernet 0200, "
		       "InfiniBand 0207)\n");
		return;
	}
	table_init(&t, 10, "llllllllll");
	table_row(&t, "address", "kind", "id", "driver", "node", "link", "max", "GB/s", "names",
		  "");
	for (unsigned i = 0; i < ti->npci; i++) {
		const struct slab_topo_pci *d = &ti->pci[i];
		char id[16], node[16], cur[32], max[32], gbs[32], *names;

		snprintf(id, sizeof(id), "%04x:%04x", d->vendor, d->device);
		if (d->numa_known)
			snprintf(node, sizeof(node), "%d", d->numa_node);
		else
			snprintf(node, sizeof(node), "-");
		names = d->nnames ? join(d->names, d->nnames, ",") : NULL;
		table_row(&t, d->addr, slab_pci_kind_name(d->kind), id, d->driver, node,
			  link_text(&d->cur, cur, sizeof(cur)), link_text(&d->max, max, sizeof(max)),
			  gbs_text(&d->cur, gbs, sizeof(gbs)), names,
			  slab_pci_downgraded(d) ? "DOWNGRADED" : "");
		free(names);
		gen6 |= slab_pci_gen(d->cur.gts) == 6;
	}
	table_print(&t);
	if (gen6)
		printf("  ~ Gen6 (64 GT/s, FLIT mode) bandwidth is approximate\n");
}

void numa_print_advice(const struct slab_topo_info *ti)
{
	printf("\nAdvice\n");
	if (ti->nadvice == 0)
		printf("  no GPU or accelerator found: no loader binding to suggest\n");
	for (unsigned i = 0; i < ti->nadvice; i++) {
		const struct slab_topo_advice *a = &ti->advice[i];
		char *names = a->dev->nnames ? join(a->dev->names, a->dev->nnames, " ") : NULL;
		char *nvme = join(a->nvme, count_strs(a->nvme), " ");
		char *net = join(a->network, count_strs(a->network), " ");

		cli_printf_escaped(stdout, "  %s %s%s%s, node %d: %s", a->dev->addr,
				   slab_pci_kind_name(a->dev->kind), names ? " " : "",
				   names ? names : "", a->node, a->numactl);
		putchar('\n');
		if (a->cpu_node < 0) {
			printf("    the kernel does not know this device's node: no binding to "
			       "suggest\n");
		} else {
			printf("    ");
			if (a->node < 0)
				printf("one node only; ");
			else if (a->cpu_node != a->node || a->mem_node != a->node)
				printf("nearest to node %d: ", a->node);
			printf("CPUs %s", a->cpus && *a->cpus ? a->cpus : "-");
			cli_printf_escaped(stdout, "; NVMe on node %d: %s", a->cpu_node,
					   nvme && *nvme ? nvme : "none");
			cli_printf_escaped(stdout, "; network on node %d: %s", a->cpu_node,
					   net && *net ? net : "none");
			putchar('\n');
		}
		free(names);
		free(nvme);
		free(net);
	}

	printf("\nWarnings\n");
	if (ti->nwarnings == 0)
		printf("  none\n");
	for (unsigned i = 0; i < ti->nwarnings; i++) {
		/* Messages quote names and text from the tree. */
		cli_printf_escaped(stdout, "  %s: %s",
				   ti->warnings[i].level == SLAB_TOPO_WARNING ? "warning" : "note",
				   ti->warnings[i].message);
		putchar('\n');
	}
}

/* ---- measurements ------------------------------------------------------------------------- */

/* Notes that qualify the figures, in text and JSON alike. */
static unsigned measure_notes(const struct slab_topo_info *ti, const struct slab_membench_result *r,
			      char notes[][256], unsigned max)
{
	unsigned n = 0;
	char a[32], b[32];

	/* Below 4 times the last-level caches, some loads hit in them. */
	if (n < max && slab_membench_llc_bytes(ti) == 0)
		snprintf(notes[n++], 256, "the sizes of the caches are unknown (sysfs lists none): "
			 "the %s buffer may be partly served by them",
			 cli_human_size(r->size, a, sizeof(a)));
	else if (n < max && r->size < 4 * slab_membench_llc_bytes(ti))
		snprintf(notes[n++], 256, "the %s buffer is not well above the last-level caches "
			 "(%s in all): the figures are partly the caches'",
			 cli_human_size(r->size, a, sizeof(a)),
			 cli_human_size(slab_membench_llc_bytes(ti), b, sizeof(b)));
	if (n < max && r->busy >= 0.25)
		snprintf(notes[n++], 256, "the CPUs were %.0f%% busy with other work just before "
			 "measuring: the figures are lower and more spread than on an idle machine",
			 r->busy * 100);
	if (n < max && !r->bound)
		snprintf(notes[n++], 256, "the kernel has no NUMA support: buffers are not bound "
			 "(one node)");
	for (unsigned c = 0; c < r->ncols && n < max; c++) {
		const struct slab_membench_cell *cell = &r->cells[c];

		if (cell->on_node >= 0 && cell->on_node < 0.99)
			snprintf(notes[n++], 256, "only %.0f%% of the sampled pages are on node %d: "
				 "its figures mix nodes", cell->on_node * 100, r->col_node[c]);
		else if (n < max && cell->huge >= 0 && cell->huge < 0.5 && r->size >= (32u << 20))
			snprintf(notes[n++], 256, "%.0f%% of the buffer on node %d is in huge pages: "
				 "latency includes TLB misses", cell->huge * 100, r->col_node[c]);
	}
	for (unsigned row = 0; row < r->nrows && n < max; row++) {
		const struct slab_membench_cell *cell = &r->cells[(size_t)row * r->ncols];
		const struct slab_topo_node *nd = slab_topo_node(ti, r->row_node[row]);

		if (cell->threads > nd->cpus.n)
			snprintf(notes[n++], 256, "%u threads share the %u %s of node %d",
				 cell->threads, nd->cpus.n, slab_plural(nd->cpus.n, "CPU", "CPUs"),
				 r->row_node[row]);
	}
	return n;
}

static void stat_text(const struct slab_membench_stat *s, int ok, int decimals, char *buf,
		      size_t len)
{
	if (!ok)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f [%.*f-%.*f]", decimals, s->median, decimals, s->min,
			 decimals, s->max);
}

static void print_matrix(const struct slab_membench_result *r, const char *title, int bw)
{
	struct table t;
	char **row = checked(calloc(r->ncols + 1, sizeof(*row)));

	table_init(&t, r->ncols + 1, NULL);
	t.all_left = 1;         /* cells are "median [min-max]" */
	for (unsigned i = 0; row != NULL && i <= r->nrows; i++) {
		for (unsigned c = 0; c <= r->ncols; c++) {
			char cell[96];

			if (i == 0 && c == 0)
				snprintf(cell, sizeof(cell), "%s", title);
			else if (i == 0)
				snprintf(cell, sizeof(cell), "node %d", r->col_node[c - 1]);
			else if (c == 0)
				snprintf(cell, sizeof(cell), "node %d", r->row_node[i - 1]);
			else {
				const struct slab_membench_cell *x = &r->cells[(size_t)(i - 1) * r->ncols + c - 1];
				stat_text(bw ? &x->bw : &x->lat, x->ok, bw ? 2 : 1, cell, sizeof(cell));
			}
			row[c] = checked(strdup(cell));
		}
		table_row_v(&t, row);
		for (unsigned c = 0; c <= r->ncols; c++) {
			free(row[c]);
			row[c] = NULL;
		}
	}
	table_print(&t);
	free(row);
}

void numa_print_measure(const struct slab_topo_info *ti, const struct slab_membench_result *r)
{
	char a[32], notes[16][256];
	unsigned nn = measure_notes(ti, r, notes, 16), threads = 0;
	int same = 1;

	for (size_t i = 0; i < (size_t)r->nrows * r->ncols; i++) {
		if (!r->cells[i].threads)
			continue;
		if (threads && r->cells[i].threads != threads)
			same = 0;
		threads = r->cells[i].threads;
	}
	printf("\nMeasurements\n");
	printf("  method: a %s buffer on each memory node (mbind MPOL_BIND, transparent huge\n"
	       "    pages asked for, every page touched first); each figure: 1 warm-up run\n"
	       "    discarded, then %u run%s of at least %.2f s; median [min-max]\n",
	       cli_human_size(r->size, a, sizeof(a)), r->repeat, r->repeat == 1 ? "" : "s",
	       r->seconds);
	if (same && threads)
		printf("  bandwidth: %u thread%s on the row node's CPUs read the buffer sequentially\n",
		       threads, threads == 1 ? "" : "s");
	else
		printf("  bandwidth: a thread per CPU of the row's node reads the buffer sequentially\n");
	printf("    (64-bit loads), each its own share; GB/s (10^9 bytes/s), all together\n");
	printf("  latency: one thread on the row node's first CPU follows a random cycle of\n"
	       "    pointers, one per %u-byte line of the buffer; ns per load\n", SLAB_MEMBENCH_LINE);
	printf("  rows: CPU node; columns: memory node\n\n");
	print_matrix(r, "bandwidth GB/s", 1);
	printf("\n");
	print_matrix(r, "latency ns", 0);
	printf("\n  placement:");
	for (unsigned c = 0; c < r->ncols; c++) {
		const struct slab_membench_cell *x = &r->cells[c];

		printf("%s node %d: ", c ? ";" : "", r->col_node[c]);
		if (x->on_node >= 0)
			printf("%.0f%% of sampled pages on the node", x->on_node * 100);
		else
			printf("pages' node unknown");
		if (x->huge >= 0)
			printf(", %.0f%% in huge pages", x->huge * 100);
	}
	printf("\n");
	for (unsigned i = 0; i < nn; i++)
		printf("  note: %s\n", notes[i]);
	for (size_t i = 0; i < (size_t)r->nrows * r->ncols; i++)
		if (!r->cells[i].ok)
			printf("  not measured: CPU node %d, memory node %d: %s\n",
			       r->row_node[i / r->ncols], r->col_node[i % r->ncols], r->cells[i].error);
}

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_i64_or_null(struct json *j, const char *key, int64_t v)
{
	if (v < 0)
		json_null(j, key);
	else
		json_i64(j, key, v);
}

static double round3(double v)
{
	return round(v * 1000) / 1000;
}

static void json_link(struct json *j, const char *key, const struct slab_pci_link *l)
{
	int gen = slab_pci_gen(l->gts);

	json_object_begin(j, key);
	if (l->gts > 0)
		json_double(j, "gt_s", l->gts);
	else
		json_null(j, "gt_s");
	if (l->width)
		json_u64(j, "width", l->width);
	else
		json_null(j, "width");
	if (gen)
		json_i64(j, "generation", gen);
	else
		json_null(j, "generation");
	if (slab_pci_link_gbs(l) > 0)
		json_double(j, "gb_per_s", round3(slab_pci_link_gbs(l)));
	else
		json_null(j, "gb_per_s");
	json_object_end(j);
}

static void json_strs(struct json *j, const char *key, char *const *arr, unsigned n)
{
	json_array_begin(j, key);
	for (unsigned i = 0; i < n; i++)
		json_string(j, NULL, arr[i]);
	json_array_end(j);
}

void numa_json_topology(struct json *j, const struct slab_topo_info *ti)
{
	char hex[16];

	json_bool(j, "numa_known", ti->numa_known);
	json_array_begin(j, "nodes");
	for (unsigned i = 0; i < ti->nnodes; i++) {
		const struct slab_topo_node *nd = &ti->nodes[i];

		json_object_begin(j, NULL);
		json_i64(j, "id", nd->id);
		json_string(j, "cpus", nd->cpulist ? nd->cpulist : "");
		json_u64(j, "cpu_count", nd->cpus.n);
		json_i64_or_null(j, "memory_bytes", nd->mem_total);
		json_i64_or_null(j, "memory_free_bytes", nd->mem_free);
		json_array_begin(j, "distances");
		for (unsigned k = 0; k < ti->nnodes; k++)
			json_i64_or_null(j, NULL, nd->distance ? nd->distance[k] : -1);
		json_array_end(j);
		json_object_begin(j, "hugepages_2m");
		json_i64_or_null(j, "reserved", nd->huge_2m_total);
		json_i64_or_null(j, "free", nd->huge_2m_free);
		json_object_end(j);
		json_object_begin(j, "hugepages_1g");
		json_i64_or_null(j, "reserved", nd->huge_1g_total);
		json_i64_or_null(j, "free", nd->huge_1g_free);
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_begin(j, "transparent_hugepage");
	json_string(j, "enabled", ti->thp_enabled[0] ? ti->thp_enabled : NULL);
	json_string(j, "defrag", ti->thp_defrag[0] ? ti->thp_defrag : NULL);
	json_object_end(j);

	json_object_begin(j, "cpu");
	json_string(j, "model", ti->model);
	json_string(j, "online", ti->online_list ? ti->online_list : "");
	json_u64(j, "count", ti->online.n);
	if (ti->sockets)
		json_u64(j, "sockets", ti->sockets);
	else
		json_null(j, "sockets");
	if (ti->cores)
		json_u64(j, "cores", ti->cores);
	else
		json_null(j, "cores");
	if (ti->threads_per_core)
		json_u64(j, "threads_per_core", ti->threads_per_core);
	else
		json_null(j, "threads_per_core");
	json_object_end(j);

	json_array_begin(j, "caches");
	for (unsigned i = 0; i < ti->ncaches; i++) {
		const struct slab_topo_cache *c = &ti->caches[i];

		json_object_begin(j, NULL);
		json_string(j, "name", c->name);
		json_u64(j, "level", c->level);
		json_string(j, "type", c->type);
		json_u64(j, "size_bytes", c->size);
		json_u64(j, "count", c->instances);
		json_u64(j, "cpus_each", c->cpus_each);
		json_object_end(j);
	}
	json_array_end(j);

	json_array_begin(j, "pci_devices");
	for (unsigned i = 0; i < ti->npci; i++) {
		const struct slab_topo_pci *d = &ti->pci[i];

		json_object_begin(j, NULL);
		json_string(j, "address", d->addr);
		json_string(j, "kind", slab_pci_kind_name(d->kind));
		snprintf(hex, sizeof(hex), "0x%06x", d->class_code);
		json_string(j, "class", hex);
		snprintf(hex, sizeof(hex), "0x%04x", d->vendor);
		json_string(j, "vendor", hex);
		snprintf(hex, sizeof(hex), "0x%04x", d->device);
		json_string(j, "device", hex);
		json_string(j, "driver", d->driver);
		if (d->numa_known)
			json_i64(j, "numa_node", d->numa_node);
		else
			json_null(j, "numa_node");
		json_string(j, "local_cpus", d->local_cpus);
		if (d->has_link) {
			json_object_begin(j, "link");
			json_link(j, "current", &d->cur);
			json_link(j, "max", &d->max);
			json_bool(j, "downgraded", slab_pci_downgraded(d));
			json_object_end(j);
		} else {
			json_null(j, "link");
		}
		json_strs(j, "names", d->names, d->nnames);
		json_object_end(j);
	}
	json_array_end(j);

	json_array_begin(j, "advice");
	for (unsigned i = 0; i < ti->nadvice; i++) {
		const struct slab_topo_advice *a = &ti->advice[i];

		json_object_begin(j, NULL);
		json_string(j, "device", a->dev->addr);
		json_string(j, "kind", slab_pci_kind_name(a->dev->kind));
		json_strs(j, "names", a->dev->names, a->dev->nnames);
		json_i64(j, "numa_node", a->node);
		if (a->cpu_node >= 0)
			json_i64(j, "cpu_node", a->cpu_node);
		else
			json_null(j, "cpu_node");
		if (a->mem_node >= 0)
			json_i64(j, "memory_node", a->mem_node);
		else
			json_null(j, "memory_node");
		json_string(j, "cpus", a->cpus);
		json_string(j, "numactl", a->numactl);
		json_strs(j, "nvme", a->nvme, count_strs(a->nvme));
		json_strs(j, "network", a->network, count_strs(a->network));
		json_object_end(j);
	}
	json_array_end(j);

	json_array_begin(j, "warnings");
	for (unsigned i = 0; i < ti->nwarnings; i++) {
		json_object_begin(j, NULL);
		json_string(j, "level", ti->warnings[i].level == SLAB_TOPO_WARNING ? "warning" : "note");
		json_string(j, "code", ti->warnings[i].code);
		json_string(j, "message", ti->warnings[i].message);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_stat(struct json *j, const struct slab_membench_stat *s, int ok, unsigned threads)
{
	if (!ok) {
		json_null(j, NULL);
		return;
	}
	json_object_begin(j, NULL);
	json_double(j, "median", round3(s->median));
	json_double(j, "min", round3(s->min));
	json_double(j, "max", round3(s->max));
	json_array_begin(j, "runs");
	for (unsigned i = 0; i < s->nruns; i++)
		json_double(j, NULL, round3(s->runs[i]));
	json_array_end(j);
	if (threads)
		json_u64(j, "threads", threads);
	json_object_end(j);
}

void numa_json_measure(struct json *j, const struct slab_topo_info *ti,
		       const struct slab_membench_result *r)
{
	char notes[16][256];
	unsigned nn = measure_notes(ti, r, notes, 16);

	json_object_begin(j, "measurements");
	json_u64(j, "buffer_bytes", r->size);
	json_u64(j, "line_bytes", SLAB_MEMBENCH_LINE);
	json_u64(j, "warmup_runs", 1);
	json_u64(j, "runs", r->repeat);
	json_double(j, "seconds_per_run", r->seconds);
	json_bool(j, "bound", r->bound);
	if (r->busy >= 0)
		json_double(j, "cpu_busy_before", round3(r->busy));
	else
		json_null(j, "cpu_busy_before");
	json_array_begin(j, "cpu_nodes");
	for (unsigned i = 0; i < r->nrows; i++)
		json_i64(j, NULL, r->row_node[i]);
	json_array_end(j);
	json_array_begin(j, "memory_nodes");
	for (unsigned i = 0; i < r->ncols; i++)
		json_i64(j, NULL, r->col_node[i]);
	json_array_end(j);
	for (int bw = 1; bw >= 0; bw--) {
		json_array_begin(j, bw ? "bandwidth_gb_per_s" : "latency_ns");
		for (unsigned row = 0; row < r->nrows; row++) {
			json_array_begin(j, NULL);
			for (unsigned c = 0; c < r->ncols; c++) {
				const struct slab_membench_cell *x = &r->cells[(size_t)row * r->ncols + c];
				json_stat(j, bw ? &x->bw : &x->lat, x->ok, bw ? x->threads : 0);
			}
			json_array_end(j);
		}
		json_array_end(j);
	}
	json_array_begin(j, "pages_on_node");
	for (unsigned c = 0; c < r->ncols; c++) {
		if (r->cells[c].on_node >= 0)
			json_double(j, NULL, round3(r->cells[c].on_node));
		else
			json_null(j, NULL);
	}
	json_array_end(j);
	json_array_begin(j, "huge_page_share");
	for (unsigned c = 0; c < r->ncols; c++) {
		if (r->cells[c].huge >= 0)
			json_double(j, NULL, round3(r->cells[c].huge));
		else
			json_null(j, NULL);
	}
	json_array_end(j);
	json_array_begin(j, "errors");
	for (size_t i = 0; i < (size_t)r->nrows * r->ncols; i++) {
		if (r->cells[i].ok)
			continue;
		json_object_begin(j, NULL);
		json_i64(j, "cpu_node", r->row_node[i / r->ncols]);
		json_i64(j, "memory_node", r->col_node[i % r->ncols]);
		json_string(j, "message", r->cells[i].error);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "notes");
	for (unsigned i = 0; i < nn; i++)
		json_string(j, NULL, notes[i]);
	json_array_end(j);
	json_object_end(j);
}

int numa_report_out_of_memory(void)
{
	return out_of_memory;
}
