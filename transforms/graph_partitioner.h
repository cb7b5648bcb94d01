/* Operator fusion support shared by AnnotateTIROpPattern and FuseOps
 * (docs/semantics.md §3, §4): the op pattern kinds, the TIR pattern analyser, and
 * TVM's graph partitioner (indexed forward graph, post-dominator tree, three-phase
 * fusion with union-find groups). The graph is abstract: nodes are indices in post-DFS
 * (program) order, so the Relax side only has to build it. */
#ifndef TJ_TRANSFORMS_GRAPH_PARTITIONER_H
#define TJ_TRANSFORMS_GRAPH_PARTITIONER_H

#include <stdbool.h>

#include "ir/tir.h"
#include "support/arena.h"
#include "support/vec.h"

/* TVM's OpPatternKind; the order matters ("<=" comparisons throughout fusion). */
typedef enum tj_op_pattern {
  TJ_PATTERN_ELEMWISE = 0,
  TJ_PATTERN_BROADCAST = 1,
  TJ_PATTERN_INJECTIVE = 2,
  TJ_PATTERN_COMM_REDUCE = 3,
  TJ_PATTERN_OUT_EWISE_FUSABLE = 4,
  TJ_PATTERN_TUPLE = 7,
  TJ_PATTERN_OPAQUE = 8,
} tj_op_pattern_t;

const char *tj_op_pattern_name(tj_op_pattern_t p); /* "kElemWise", ... */

/* The pattern of a PrimFunc as TVM's PatternKindAnalyzer computes it (§3.3). Never
 * fails: anything it does not recognise is Opaque. */
tj_op_pattern_t tj_analyze_op_pattern(const tj_prim_func_t *f);

/* ---- indexed forward graph ---- */
typedef struct tj_fg_edge {
  int node;                /* the consumer */
  tj_op_pattern_t pattern; /* the consumer's pattern */
} tj_fg_edge_t;

typedef struct tj_fg_node {
  tj_op_pattern_t pattern;
  bool extern_ref;
  TJ_VEC(tj_fg_edge_t) outputs; /* in insertion order, in the graph's arena */
} tj_fg_node_t;

typedef struct tj_fwd_graph {
  tj_arena_t *arena;
  TJ_VEC(tj_fg_node_t) nodes; /* index = post-DFS order */
} tj_fwd_graph_t;

void tj_fwd_graph_init(tj_fwd_graph_t *g, tj_arena_t *arena);
/* Returns the new node index, or -1 when out of memory. */
int tj_fwd_graph_add_node(tj_fwd_graph_t *g, tj_op_pattern_t pattern, bool extern_ref);
bool tj_fwd_graph_add_edge(tj_fwd_graph_t *g, int from, int to, tj_op_pattern_t pattern);

/* ---- partition ---- */
typedef struct tj_fuse_group {
  struct tj_fuse_group *parent; /* union-find; NULL for a root */
  tj_op_pattern_t pattern;
  int num_nodes;
  int anchor;                   /* node index of the OutEWiseFusable anchor, or -1 */
} tj_fuse_group_t;

/* Runs TVM's GraphPartitioner on g (opt_level 0: every node stays alone). On success
 * *out_groups holds one group pointer per node (arena-owned); use tj_fuse_group_root
 * to find the group a node belongs to. Returns false when out of memory. */
bool tj_partition_graph(const tj_fwd_graph_t *g, int opt_level, int max_depth, tj_fuse_group_t ***out_groups);
tj_fuse_group_t *tj_fuse_group_root(tj_fuse_group_t *g);

#endif
