/* numareport.h: numa-probe's outputs, the layout read by topo.c and the matrices measured by
 * membench.c, as text tables or JSON. */
#ifndef SLAB_NUMAREPORT_H
#define SLAB_NUMAREPORT_H

#include "json.h"
#include "membench.h"
#include "topo.h"

/* The layout's tables, to standard output, in this order. */
void numa_print_nodes(const struct slab_topo_info *ti);
void numa_print_cpu(const struct slab_topo_info *ti);
void numa_print_pci(const struct slab_topo_info *ti);
void numa_print_advice(const struct slab_topo_info *ti);

/* The bandwidth and latency matrices of r, with the notes on how they were measured. */
void numa_print_measure(const struct slab_topo_info *ti, const struct slab_membench_result *r);

/* The layout, and the matrices, as members of the JSON object j has open. */
void numa_json_topology(struct json *j, const struct slab_topo_info *ti);
void numa_json_measure(struct json *j, const struct slab_topo_info *ti,
		       const struct slab_membench_result *r);

/* Memory ran out while printing: a cell or a line is missing from what was printed. */
int numa_report_out_of_memory(void);

#endif
