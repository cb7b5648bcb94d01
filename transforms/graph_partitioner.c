/* TVM's GraphPartitioner over an indexed forward graph (docs/semantics.md §4.2-4.4):
 * post-dominator tree, then three fusion phases over union-find groups. */
#include "transforms/graph_partitioner.h"

#include <string.h>

void tj_fwd_graph_init(tj_fwd_graph_t *g, tj_arena_t *arena) {
  memset(g, 0, sizeof(*g));
  g->arena = arena;
  g->nodes.arena = arena;
}

int tj_fwd_graph_add_node(tj_fwd_graph_t *g, tj_op_pattern_t pattern, bool extern_ref) {
  tj_fg_node_t n = {.pattern = pattern, .extern_ref = extern_ref, .outputs = {.arena = g->arena}};
  return tj_vec_push(&g->nodes, n) ? g->nodes.n - 1 : -1;
}

bool tj_fwd_graph_add_edge(tj_fwd_graph_t *g, int from, int to, tj_op_pattern_t pattern) {
  return tj_vec_push(&g->nodes.items[from].outputs, ((tj_fg_edge_t){to, pattern}));
}

/* ---------- post-dominator tree ---------- */
typedef struct dom_node {
  struct dom_node *parent;
  int depth;
  tj_op_pattern_t pattern; /* max pattern on the way to the parent */
  int gnode;
} dom_node_t;

static tj_op_pattern_t pmax(tj_op_pattern_t a, tj_op_pattern_t b) { return a > b ? a : b; }

static dom_node_t *lca2(dom_node_t *l, dom_node_t *r, tj_op_pattern_t *pattern) {
  while (l != r) {
    if (!l || !r) return NULL;
    if (l->depth < r->depth) {
      *pattern = pmax(*pattern, r->pattern);
      r = r->parent;
    } else if (r->depth < l->depth) {
      *pattern = pmax(*pattern, l->pattern);
      l = l->parent;
    } else {
      *pattern = pmax(*pattern, l->pattern);
      *pattern = pmax(*pattern, r->pattern);
      l = l->parent;
      r = r->parent;
    }
  }
  return l;
}

static dom_node_t *lca_of_outputs(dom_node_t *tree, const tj_fg_node_t *n, tj_op_pattern_t *pattern) {
  if (n->outputs.n == 0) return NULL;
  dom_node_t *parent = &tree[n->outputs.items[0].node];
  *pattern = pmax(*pattern, n->outputs.items[0].pattern);
  for (int i = 1; i < n->outputs.n; i++) {
    parent = lca2(parent, &tree[n->outputs.items[i].node], pattern);
    *pattern = pmax(*pattern, n->outputs.items[i].pattern);
  }
  return parent;
}

static dom_node_t *post_dom_tree(const tj_fwd_graph_t *g) {
  dom_node_t *tree = TJ_ARENA_ARRAY(g->arena, dom_node_t, g->nodes.n + 1);
  if (!tree) return NULL;
  for (int i = g->nodes.n - 1; i >= 0; i--) {
    dom_node_t *t = &tree[i];
    const tj_fg_node_t *n = &g->nodes.items[i];
    t->gnode = i;
    if (n->extern_ref) {
      t->depth = 1;
      t->parent = NULL;
      t->pattern = TJ_PATTERN_OPAQUE;
    } else {
      tj_op_pattern_t p = TJ_PATTERN_ELEMWISE;
      dom_node_t *parent = lca_of_outputs(tree, n, &p);
      t->depth = parent ? parent->depth + 1 : 1;
      t->parent = parent;
      t->pattern = p;
    }
  }
  return tree;
}

/* ---------- partitioner ---------- */
tj_fuse_group_t *tj_fuse_group_root(tj_fuse_group_t *g) {
  tj_fuse_group_t *root = g;
  while (root->parent) root = root->parent;
  while (g != root) { /* path compression */
    tj_fuse_group_t *next = g->parent;
    g->parent = root;
    g = next;
  }
  return root;
}

typedef struct partitioner {
  const tj_fwd_graph_t *graph;
  tj_fuse_group_t **groups;
  unsigned char *visited;
} partitioner_t;

typedef bool (*path_cond_fn)(tj_op_pattern_t kind, bool is_sink);

static bool cond_le_broadcast(tj_op_pattern_t k, bool is_sink) {
  (void)is_sink;
  return k <= TJ_PATTERN_BROADCAST;
}

static bool cond_le_injective(tj_op_pattern_t k, bool is_sink) {
  (void)is_sink;
  return k <= TJ_PATTERN_INJECTIVE;
}

/* Elemwise/broadcast ops on parallel branches may join; the sink may already be a
 * reduction or an OutEWiseFusable group. */
static bool cond_elemwise_sink(tj_op_pattern_t k, bool is_sink) {
  if (!is_sink) return k <= TJ_PATTERN_INJECTIVE;
  return k <= TJ_PATTERN_BROADCAST || k == TJ_PATTERN_COMM_REDUCE || k == TJ_PATTERN_INJECTIVE ||
         k == TJ_PATTERN_OUT_EWISE_FUSABLE;
}

static void clear_visited(partitioner_t *p) { memset(p->visited, 0, (size_t)p->graph->nodes.n); }

static bool check_path_rec(partitioner_t *p, int src, int sink, path_cond_fn cond) {
  if (p->visited[src]) return true;
  p->visited[src] = 1;
  tj_fuse_group_t *g = tj_fuse_group_root(p->groups[src]);
  if (!cond(g->pattern, src == sink)) return false;
  if (src == sink) return true;
  const tj_fg_node_t *n = &p->graph->nodes.items[src];
  for (int i = 0; i < n->outputs.n; i++)
    if (!check_path_rec(p, n->outputs.items[i].node, sink, cond)) return false;
  return true;
}

static bool check_path(partitioner_t *p, int src, int sink, path_cond_fn cond) {
  clear_visited(p);
  const tj_fg_node_t *n = &p->graph->nodes.items[src];
  for (int i = 0; i < n->outputs.n; i++)
    if (!check_path_rec(p, n->outputs.items[i].node, sink, cond)) return false;
  return true;
}

static void merge_from_to(tj_fuse_group_t *child, tj_fuse_group_t *parent) {
  child = tj_fuse_group_root(child);
  parent = tj_fuse_group_root(parent);
  if (child == parent) return;
  parent->num_nodes += child->num_nodes;
  child->parent = parent;
  if (child->anchor >= 0) {
    /* TVM aborts when both patterns exceed Broadcast; the fusion rules never produce
     * that, and taking the max keeps the result conservative if they ever did. */
    parent->anchor = child->anchor;
    parent->pattern = pmax(child->pattern, parent->pattern);
  }
}

static void commit_fuse_rec(partitioner_t *p, int src, int sink, tj_fuse_group_t *target) {
  if (src == sink || p->visited[src]) return;
  p->visited[src] = 1;
  merge_from_to(p->groups[src], target);
  const tj_fg_node_t *n = &p->graph->nodes.items[src];
  for (int i = 0; i < n->outputs.n; i++) commit_fuse_rec(p, n->outputs.items[i].node, sink, target);
}

static void commit_fuse(partitioner_t *p, int src, int sink) {
  clear_visited(p);
  commit_fuse_rec(p, src, sink, p->groups[sink]);
}

static int count_nodes_upto_sink(partitioner_t *p, int src, int sink) {
  if (src == sink || p->visited[src]) return 0;
  p->visited[src] = 1;
  int sum = p->groups[src]->num_nodes;
  const tj_fg_node_t *n = &p->graph->nodes.items[src];
  for (int i = 0; i < n->outputs.n; i++) sum += count_nodes_upto_sink(p, n->outputs.items[i].node, sink);
  return sum;
}

static int count_fused_nodes_with_new_child(partitioner_t *p, int child, int dom_parent) {
  clear_visited(p);
  return tj_fuse_group_root(p->groups[dom_parent])->num_nodes + count_nodes_upto_sink(p, child, dom_parent);
}

static void run_fuse(partitioner_t *p, const dom_node_t *tree, int phase, int max_depth) {
  for (int nid = 0; nid < p->graph->nodes.n; nid++) {
    tj_fuse_group_t *g = p->groups[nid];
    const dom_node_t *dom = &tree[nid];
    if (g->pattern == TJ_PATTERN_OPAQUE || !dom->parent) continue;
    int dom_parent = dom->parent->gnode;
    if (count_fused_nodes_with_new_child(p, nid, dom_parent) > max_depth) continue;
    tj_fuse_group_t *parent_group = p->groups[dom_parent];
    if (phase == 2) {
      /* fuse injective ops into intermediate tuples */
      if (g->pattern > TJ_PATTERN_INJECTIVE) continue;
      tj_fuse_group_t *dom_root = tj_fuse_group_root(parent_group);
      if (dom_root->pattern == TJ_PATTERN_TUPLE) continue;
      if (parent_group->pattern == TJ_PATTERN_TUPLE && dom_root->pattern <= TJ_PATTERN_INJECTIVE &&
          check_path(p, nid, dom_parent, cond_le_injective))
        commit_fuse(p, nid, dom_parent);
      continue;
    }
    if (tj_fuse_group_root(g) == tj_fuse_group_root(parent_group)) continue;
    if (parent_group->pattern == TJ_PATTERN_TUPLE) continue;
    if (g->pattern == TJ_PATTERN_OUT_EWISE_FUSABLE) {
      if (phase != 0) continue;
      if (dom->pattern == TJ_PATTERN_ELEMWISE && check_path(p, nid, dom_parent, cond_le_broadcast))
        commit_fuse(p, nid, dom_parent);
    } else if (g->pattern <= TJ_PATTERN_BROADCAST) {
      if ((dom->pattern <= TJ_PATTERN_INJECTIVE || dom->pattern == TJ_PATTERN_COMM_REDUCE) &&
          check_path(p, nid, dom_parent, cond_elemwise_sink))
        commit_fuse(p, nid, dom_parent);
    } else if (g->pattern == TJ_PATTERN_INJECTIVE || g->pattern == TJ_PATTERN_TUPLE) {
      /* deferred to phase 1 so that an anchor always finishes fusing first */
      if (phase != 1) continue;
      if (check_path(p, nid, dom_parent, cond_le_injective)) commit_fuse(p, nid, dom_parent);
    }
    /* CommReduce never initiates a fusion. */
  }
}

bool tj_partition_graph(const tj_fwd_graph_t *g, int opt_level, int max_depth, tj_fuse_group_t ***out_groups) {
  int n = g->nodes.n;
  tj_fuse_group_t **groups = TJ_ARENA_ARRAY(g->arena, tj_fuse_group_t *, n + 1);
  tj_fuse_group_t *storage = TJ_ARENA_ARRAY(g->arena, tj_fuse_group_t, n + 1);
  unsigned char *visited = TJ_ARENA_ARRAY(g->arena, unsigned char, n + 1);
  if (!groups || !storage || !visited) return false;
  for (int i = 0; i < n; i++) {
    groups[i] = &storage[i];
    storage[i].pattern = g->nodes.items[i].pattern;
    storage[i].num_nodes = 1;
    storage[i].anchor = g->nodes.items[i].pattern == TJ_PATTERN_OUT_EWISE_FUSABLE ? i : -1;
  }
  if (opt_level > 0 && n > 0) {
    dom_node_t *tree = post_dom_tree(g);
    if (!tree) return false;
    partitioner_t p = {g, groups, visited};
    for (int phase = 0; phase < 3; phase++) run_fuse(&p, tree, phase, max_depth);
  }
  *out_groups = groups;
  return true;
}
