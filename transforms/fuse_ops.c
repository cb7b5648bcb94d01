/* FuseOps (docs/semantics.md §4): builds TVM's indexed forward graph of every
 * Relax function (params, then each dataflow binding, in program order), partitions
 * it with the post-dominator rules of transforms/graph_partitioner.c, and turns every group of
 * more than one binding into a private Relax function with {"Primitive": 1}, called
 * where the group's bindings stood. Structurally equal grouped functions share one
 * GlobalVar. A group whose results nobody uses is dropped (TVM #14354). */
#include <stdint.h>
#include <string.h>

#include "ir/op.h"
#include "ir/rx_mutator.h"
#include "ir/visit.h"
#include "ir/struct_equal.h"
#include "support/strbuf.h"
#include "support/map.h"
#include "support/vec.h"
#include "transforms/graph_partitioner.h"
#include "transforms/transforms.h"

#define OOM() tj_status_new(TJ_ERR_OUT_OF_MEMORY, "FuseOps: out of memory")

/* A function being built from one group (TVM's FunctionCreator). */
typedef struct creator {
  tj_ptr_vec_t bindings; /* const tj_rx_binding_t * */
  tj_ptr_vec_t args;     /* caller expressions passed in, first-use order */
  tj_ptr_vec_t params;   /* the new params, parallel to args */
  tj_ptr_vec_t defined;  /* vars bound inside the group */
  tj_ptr_vec_t outputs;  /* vars the rest of the function needs */
  tj_strbuf_t name;
  const tj_rx_func_t *func; /* NULL: no outputs, the group is dead */
  const char *gv_name;
  const tj_rx_expr_t *last_var; /* the var of the group's last binding */
  bool has_call;                /* at least one binding calls something */
} creator_t;

/* Per-group bookkeeping for the re-emission order. */
typedef struct group_info {
  tj_ptr_vec_t bindings; /* in this block */
  tj_ptr_vec_t deps;     /* group_info_t * this group reads from, first-use order */
  bool visited;
  creator_t *creator;    /* NULL for single-binding groups */
} group_info_t;

typedef struct fuse_ctx {
  const tj_pass_context_t *pc;
  tj_arena_t *a;
  tj_module_t *mod;  /* the module being built (fused functions are added to it) */
  tj_fwd_graph_t graph;
  tj_map_t node_of; /* expr -> node index + 1 */
  tj_map_t model_params; /* params at index >= num_input */
  const tj_rx_func_t *func; /* the function being fused */
  tj_fuse_group_t **groups;
  int n_const_params;
} fuse_ctx_t;

/* ---------------- graph construction ---------------- */

static int node_index(const fuse_ctx_t *c, const tj_rx_expr_t *e) {
  return (int)(intptr_t)tj_map_get(&c->node_of, e) - 1;
}

static bool set_node(fuse_ctx_t *c, const tj_rx_expr_t *e, int idx) {
  return tj_map_put(&c->node_of, e, (void *)(intptr_t)(idx + 1));
}

static int add_node(fuse_ctx_t *c, const tj_rx_expr_t *e, tj_op_pattern_t p, bool extern_ref) {
  int idx = tj_fwd_graph_add_node(&c->graph, p, extern_ref);
  if (idx < 0 || !set_node(c, e, idx)) return -1;
  return idx;
}

typedef struct leaf_edge {
  int node;
  tj_op_pattern_t pattern;
} leaf_edge_t;

typedef TJ_VEC(leaf_edge_t) leaf_list_t;

static bool is_const_leaf(const tj_rx_expr_t *e) {
  return e->kind == TJ_RX_CONSTANT || e->kind == TJ_RX_SHAPE_EXPR || e->kind == TJ_RX_PRIM_VALUE ||
         e->kind == TJ_RX_STRING_IMM || e->kind == TJ_RX_DATA_TYPE_IMM;
}

/* TVM's VisitLeaf: tuples are looked through; vars and literals become edges. */
static bool visit_leaf(fuse_ctx_t *c, const tj_rx_expr_t *e, tj_op_pattern_t p, leaf_list_t *out) {
  if (e->kind == TJ_RX_TUPLE) {
    for (int i = 0; i < e->tuple.n; i++)
      if (!visit_leaf(c, e->tuple.fields[i], p, out)) return false;
    return true;
  }
  int idx = node_index(c, e);
  if (idx < 0) {
    if (is_const_leaf(e)) {
      idx = add_node(c, e, TJ_PATTERN_OPAQUE, false);
    } else if (tj_rx_is_var(e)) {
      /* defined outside any dataflow block: an external input, never fused */
      idx = add_node(c, e, TJ_PATTERN_OPAQUE, true);
    } else {
      return true; /* GlobalVar, Op, ExternFunc: not data */
    }
    if (idx < 0) return false;
  }
  return tj_vec_push(out, ((leaf_edge_t){idx, p}));
}

typedef struct collect_ctx {
  fuse_ctx_t *c;
  leaf_list_t *out;
  bool ok;
} collect_ctx_t;

static bool collect_leaves_expr(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  collect_ctx_t *cc = v->ctx;
  if (def) return true;
  if (tj_rx_is_var(e) || e->kind == TJ_RX_CONSTANT) {
    if (!visit_leaf(cc->c, e, TJ_PATTERN_OPAQUE, cc->out)) cc->ok = false;
    return false;
  }
  return e->kind != TJ_RX_FUNCTION;
}

static tj_op_pattern_t callee_pattern(const fuse_ctx_t *c, const tj_call_tir_view_t *v) {
  if (v->callee->kind != TJ_RX_GLOBAL_VAR) return TJ_PATTERN_OPAQUE;
  const tj_prim_func_t *f = tj_module_find_prim(c->mod, v->callee->var.name);
  const tj_attr_value_t *attr = f ? tj_attrs_get(f->attrs, "op_pattern") : NULL;
  if (!attr || attr->kind != TJ_ATTR_INT) return TJ_PATTERN_OPAQUE;
  int64_t k = attr->i;
  if (k < 0 || k > TJ_PATTERN_OPAQUE) return TJ_PATTERN_OPAQUE;
  return (tj_op_pattern_t)k;
}

/* The binding's node pattern and the edges into it (TVM's GraphCreator). */
static bool binding_edges(fuse_ctx_t *c, const tj_rx_binding_t *b, tj_op_pattern_t *out_pattern, leaf_list_t *l) {
  const tj_rx_expr_t *value = b->value;
  tj_call_tir_view_t view;
  if (b->match_cast) {
    *out_pattern = TJ_PATTERN_OPAQUE;
  } else if (tj_rx_as_call_tir_or_inplace(value, &view)) {
    *out_pattern = callee_pattern(c, &view);
    for (int i = 0; i < view.n_args; i++)
      if (!visit_leaf(c, view.args[i], *out_pattern, l)) return false;
    return true;
  } else if (value->kind == TJ_RX_CALL) {
    *out_pattern = TJ_PATTERN_OPAQUE;
    for (int i = 0; i < value->call.n_args; i++)
      if (!visit_leaf(c, value->call.args[i], TJ_PATTERN_OPAQUE, l)) return false;
    return true;
  } else if (value->kind == TJ_RX_TUPLE_GET_ITEM) {
    /* pulling a weight out of a packed parameter tuple stays alone (TVM #17198) */
    *out_pattern = tj_map_get(&c->model_params, value->get_item.tuple) ? TJ_PATTERN_OPAQUE
                                                                            : TJ_PATTERN_INJECTIVE;
    return visit_leaf(c, value->get_item.tuple, *out_pattern, l);
  } else {
    *out_pattern = TJ_PATTERN_OPAQUE;
  }
  collect_ctx_t cc = {c, l, true};
  tj_rx_visitor_t v = {.expr = collect_leaves_expr, .ctx = &cc};
  tj_rx_visit_expr(&v, value);
  return cc.ok;
}

static tj_status_t *build_graph(fuse_ctx_t *c, const tj_rx_func_t *f) {
  for (int i = 0; i < f->n_params; i++)
    if (add_node(c, f->params[i], TJ_PATTERN_OPAQUE, true) < 0) return OOM();
  const tj_attr_value_t *num_input = tj_attrs_get(f->attrs, "num_input");
  if (num_input && num_input->kind == TJ_ATTR_INT)
    for (int i = (int)num_input->i; i < f->n_params; i++)
      if (i >= 0 && !tj_map_put(&c->model_params, f->params[i], (void *)1)) return OOM();
  const tj_rx_expr_t *body = f->body;
  if (!body || body->kind != TJ_RX_SEQ) return NULL;
  for (int bi = 0; bi < body->seq.n_blocks; bi++) {
    const tj_rx_block_t *blk = &body->seq.blocks[bi];
    if (!blk->is_dataflow) continue; /* ordinary blocks may be impure: never fused */
    for (int i = 0; i < blk->n_bindings; i++) {
      const tj_rx_binding_t *b = &blk->bindings[i];
      leaf_list_t leaves = {.arena = c->a};
      tj_op_pattern_t p;
      if (!binding_edges(c, b, &p, &leaves)) return OOM();
      int idx = add_node(c, b->var, p, b->var->kind != TJ_RX_DATAFLOW_VAR);
      if (idx < 0) return OOM();
      for (int k = 0; k < leaves.n; k++)
        if (!tj_fwd_graph_add_edge(&c->graph, leaves.items[k].node, idx, leaves.items[k].pattern)) return OOM();
    }
  }
  return NULL;
}

static tj_fuse_group_t *group_of(const fuse_ctx_t *c, const tj_rx_expr_t *e) {
  int idx = node_index(c, e);
  return idx < 0 ? NULL : tj_fuse_group_root(c->groups[idx]);
}

/* ---------------- grouped functions ---------------- */

static creator_t *new_creator(tj_arena_t *a) {
  creator_t *cr = TJ_ARENA_NEW(a, creator_t);
  if (cr) cr->bindings.arena = cr->args.arena = cr->params.arena = cr->defined.arena = cr->outputs.arena = a;
  return cr;
}

/* TVM's CheckDefAndUpdateParam: an expression from outside the group becomes a param. */
static bool add_param(fuse_ctx_t *c, creator_t *cr, const tj_rx_expr_t *e) {
  if (tj_ptr_vec_find(&cr->args, e) >= 0) return true;
  if (tj_rx_is_var(e)) {
    if (tj_ptr_vec_find(&cr->defined, e) >= 0) return true;
  } else if (e->kind != TJ_RX_CONSTANT) {
    return true; /* shapes, prim values, strings: kept inline */
  }
  const char *name = tj_rx_is_var(e) ? e->var.name : tj_arena_printf(c->a, "param_%d", c->n_const_params++);
  const tj_sinfo_t *sinfo = e->sinfo;
  if (!sinfo && e->kind == TJ_RX_CONSTANT)
    sinfo = tj_sinfo_tensor_static(c->a, e->constant.dtype, e->constant.ndim, e->constant.shape);
  const tj_rx_expr_t *param = name ? tj_rx_var(c->a, name, sinfo) : NULL;
  return param && tj_vec_push(&cr->args, e) && tj_vec_push(&cr->params, param);
}

static void append_callee_name(creator_t *cr, const char *name) {
  if (strncmp(name, "fused_", 6) == 0) name += 6;
  tj_strbuf_append(&cr->name, "_");
  tj_strbuf_append(&cr->name, name);
}

static bool append_binding(fuse_ctx_t *c, creator_t *cr, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *value = b->value;
  tj_call_tir_view_t view;
  bool ok = true;
  cr->has_call |= value->kind == TJ_RX_CALL;
  if (tj_rx_as_call_tir_or_inplace(value, &view)) {
    append_callee_name(cr, view.callee->kind == TJ_RX_GLOBAL_VAR ? view.callee->var.name : view.callee->string_imm);
    for (int i = 0; i < view.n_args && ok; i++) ok = add_param(c, cr, view.args[i]);
  } else if (value->kind == TJ_RX_CALL) {
    const tj_rx_expr_t *callee = value->call.callee;
    if (callee->kind == TJ_RX_OP) {
      const char *n = strncmp(callee->op.name, "relax.", 6) == 0 ? callee->op.name + 6 : callee->op.name;
      tj_strbuf_append(&cr->name, "_");
      for (const char *p = n; *p; p++) tj_strbuf_append_n(&cr->name, *p == '.' ? "_" : p, 1);
    } else if (callee->kind == TJ_RX_GLOBAL_VAR) {
      append_callee_name(cr, callee->var.name);
    }
    for (int i = 0; i < value->call.n_args && ok; i++) ok = add_param(c, cr, value->call.args[i]);
  } else if (value->kind == TJ_RX_TUPLE_GET_ITEM) {
    ok = add_param(c, cr, value->get_item.tuple);
  } else if (value->kind == TJ_RX_TUPLE) {
    for (int i = 0; i < value->tuple.n && ok; i++) ok = add_param(c, cr, value->tuple.fields[i]);
  } else if (tj_rx_is_var(value)) {
    ok = add_param(c, cr, value);
  }
  ok = ok && tj_vec_push(&cr->defined, b->var);
  if (ok && b->var->kind != TJ_RX_DATAFLOW_VAR && tj_ptr_vec_find(&cr->outputs, b->var) < 0)
    ok = tj_vec_push(&cr->outputs, b->var);
  cr->last_var = b->var;
  return ok && tj_vec_push(&cr->bindings, b);
}

static const tj_rx_expr_t *new_var_like(fuse_ctx_t *c, const tj_rx_expr_t *v, bool dataflow) {
  return dataflow ? tj_rx_dataflow_var(c->a, v->var.name, v->sinfo) : tj_rx_var(c->a, v->var.name, v->sinfo);
}

/* A constant argument lifted to a param (TVM's lift_constants) is replaced by that
 * param inside the function; the remap table holds it like an outside var. */
static const tj_rx_expr_t *lifted_constant(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  if (e->kind != TJ_RX_CONSTANT) return e;
  const tj_rx_expr_t *param = tj_map_get(&m->remap, e);
  return param ? param : e;
}

static tj_status_t *create_function(fuse_ctx_t *c, creator_t *cr) {
  if (cr->outputs.n == 0) return NULL; /* dead group (TVM warns and drops it) */
  tj_arena_t *a = c->a;
  /* The group's values are rewritten with params for outside inputs and new inner vars. */
  tj_rx_mutator_t rw;
  tj_rx_mutator_init(&rw, a, "FuseOps");
  rw.post = lifted_constant;
  for (int i = 0; i < cr->args.n; i++)
    if (!tj_rx_mutator_remap(&rw, cr->args.items[i], cr->params.items[i])) return rw.error;
  tj_rx_binding_t *bindings = TJ_ARENA_ARRAY(a, tj_rx_binding_t, cr->bindings.n);
  const tj_rx_expr_t **outs = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, cr->outputs.n);
  if (!bindings || !outs) return OOM();
  for (int i = 0; i < cr->bindings.n; i++) {
    const tj_rx_binding_t *b = cr->bindings.items[i];
    int out_idx = tj_ptr_vec_find(&cr->outputs, b->var);
    const tj_rx_expr_t *var = new_var_like(c, b->var, out_idx < 0);
    const tj_rx_expr_t *value = tj_rx_mutate_expr(&rw, b->value);
    if (rw.error) return rw.error;
    if (!var || !tj_rx_mutator_remap(&rw, b->var, var)) return var ? rw.error : OOM();
    bindings[i] = (tj_rx_binding_t){var, value, b->match_cast};
    if (out_idx >= 0) outs[out_idx] = var;
  }
  const tj_rx_expr_t *result = outs[0];
  if (cr->outputs.n > 1) {
    const tj_sinfo_t **fields = TJ_ARENA_ARRAY(a, const tj_sinfo_t *, cr->outputs.n);
    if (!fields) return OOM();
    for (int i = 0; i < cr->outputs.n; i++) fields[i] = outs[i]->sinfo;
    result = tj_rx_with_sinfo(a, tj_rx_tuple(a, cr->outputs.n, outs), tj_sinfo_tuple(a, cr->outputs.n, fields));
  }
  tj_rx_block_t block = {true, cr->bindings.n, bindings};
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  if (!result || !f) return OOM();
  f->n_params = cr->params.n;
  f->params = (const tj_rx_expr_t *const *)cr->params.items;
  f->ret_sinfo = result->sinfo;
  f->body = tj_rx_seq(a, 1, &block, result);
  f->attrs = tj_attrs_set(a, NULL, "Primitive", tj_attr_int(1));
  f->is_pure = true;
  if (!f->body || !f->attrs) return OOM();
  cr->func = f;
  return NULL;
}

/* BlockBuilder.AddFunction: reuse a structurally equal function, else a fresh name. */
static tj_status_t *add_function(fuse_ctx_t *c, creator_t *cr) {
  for (int i = 0; i < c->mod->n_funcs; i++) {
    const tj_func_entry_t *e = &c->mod->funcs[i];
    if (!e->is_prim && tj_struct_equal_rx_func(e->relax, cr->func, NULL, 0)) {
      cr->gv_name = e->name;
      return NULL;
    }
  }
  const char *base = cr->name.data ? cr->name.data : "fused";
  const char *name = tj_module_unique_name(c->a, c->mod, base);
  tj_func_entry_t entry = {.name = name, .is_prim = false, .relax = cr->func};
  tj_module_t *m = name ? tj_module_with_func(c->a, c->mod, entry) : NULL;
  if (!m) return OOM();
  c->mod = m;
  cr->gv_name = name;
  return NULL;
}

/* ---------------- rewriting one dataflow block ---------------- */

typedef struct block_ctx {
  fuse_ctx_t *c;
  tj_map_t info;   /* group -> group_info_t */
  tj_ptr_vec_t order;  /* group_info_t * in first-binding order (may repeat) */
  tj_rx_mutator_t *rw; /* the block builder the new bindings go to */
} block_ctx_t;

static group_info_t *info_of(block_ctx_t *bc, tj_fuse_group_t *g) {
  group_info_t *gi = tj_map_get(&bc->info, g);
  if (gi) return gi;
  gi = TJ_ARENA_NEW(bc->c->a, group_info_t);
  if (!gi) return NULL;
  gi->bindings.arena = gi->deps.arena = bc->c->a;
  if (!tj_map_put(&bc->info, g, gi)) return NULL;
  return gi;
}

typedef struct boundary_ctx {
  block_ctx_t *bc;
  group_info_t *cur;
  tj_fuse_group_t *cur_group;
  bool ok;
} boundary_ctx_t;

/* TVM's CollectFuncBoundary: a var made by another group is that group's output. */
static bool boundary_expr(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  boundary_ctx_t *bd = v->ctx;
  if (def || !tj_rx_is_var(e)) return e->kind != TJ_RX_FUNCTION;
  tj_fuse_group_t *producer = group_of(bd->bc->c, e);
  if (!producer || producer == bd->cur_group) return true;
  group_info_t *pi = info_of(bd->bc, producer);
  if (!pi) return bd->ok = false;
  if (tj_ptr_vec_find(&bd->cur->deps, pi) < 0 && !tj_vec_push(&bd->cur->deps, pi))
    return bd->ok = false;
  if (pi->creator && tj_ptr_vec_find(&pi->creator->outputs, e) < 0 &&
      !tj_vec_push(&pi->creator->outputs, e))
    return bd->ok = false;
  return true;
}

static bool emit(block_ctx_t *bc, const tj_rx_expr_t *var, const tj_rx_expr_t *value) {
  return tj_rx_emit(bc->rw, var, value, NULL);
}

/* The call to the grouped function replaces the group's bindings; its results keep
 * the identity of the vars they replace, so later uses need no remapping. */
static bool emit_group_call(block_ctx_t *bc, creator_t *cr) {
  fuse_ctx_t *c = bc->c;
  tj_arena_t *a = c->a;
  const tj_rx_expr_t *gv = tj_rx_global_var(a, cr->gv_name);
  const tj_rx_expr_t *call = gv ? tj_rx_call(a, gv, cr->args.n, (const tj_rx_expr_t *const *)cr->args.items,
                                             NULL, 0, NULL)
                                : NULL;
  call = tj_rx_with_sinfo(a, call, cr->func->ret_sinfo);
  if (!call) return false;
  if (cr->outputs.n == 1) return emit(bc, cr->outputs.items[0], call);
  bool dataflow = cr->last_var->kind == TJ_RX_DATAFLOW_VAR;
  const tj_rx_expr_t *tuple_var =
      dataflow ? tj_rx_dataflow_var(a, "lv", call->sinfo) : tj_rx_var(a, "lv", call->sinfo);
  if (!emit(bc, tuple_var, call)) return false;
  for (int i = 0; i < cr->bindings.n; i++) {
    const tj_rx_binding_t *b = cr->bindings.items[i];
    int idx = tj_ptr_vec_find(&cr->outputs, b->var);
    if (idx < 0) continue;
    const tj_rx_expr_t *item = tj_rx_with_sinfo(a, tj_rx_get_item(a, tuple_var, idx), b->var->sinfo);
    if (!emit(bc, b->var, item)) return false;
  }
  return true;
}

static void emit_group(block_ctx_t *bc, group_info_t *gi) {
  if (gi->visited || bc->rw->error) return;
  gi->visited = true;
  for (int i = 0; i < gi->deps.n; i++) emit_group(bc, (group_info_t *)gi->deps.items[i]);
  if (bc->rw->error) return;
  if (!gi->creator) {
    for (int i = 0; i < gi->bindings.n; i++) {
      const tj_rx_binding_t *b = gi->bindings.items[i];
      tj_rx_emit(bc->rw, b->var, b->value, b->match_cast);
    }
    return;
  }
  if (gi->creator->func && !emit_group_call(bc, gi->creator)) tj_rx_mutator_oom(bc->rw);
}

static tj_status_t *fuse_block(fuse_ctx_t *c, tj_rx_mutator_t *rw, const tj_rx_block_t *blk) {
  block_ctx_t bc = {.c = c, .info = TJ_PTR_MAP(c->a), .order = {.arena = c->a}, .rw = rw};
  tj_ptr_vec_t creators = {.arena = c->a};
  /* Step 1: bindings per group, and a function creator for multi-binding groups. */
  for (int i = 0; i < blk->n_bindings; i++) {
    const tj_rx_binding_t *b = &blk->bindings[i];
    tj_fuse_group_t *g = group_of(c, b->var);
    group_info_t *gi = g ? info_of(&bc, g) : NULL;
    if (!gi || !tj_vec_push(&gi->bindings, b) || !tj_vec_push(&bc.order, gi)) return OOM();
    if (g->num_nodes > 1) {
      if (!gi->creator) {
        gi->creator = new_creator(c->a);
        if (!gi->creator || !tj_vec_push(&creators, gi->creator)) return OOM();
        tj_strbuf_init(&gi->creator->name);
        tj_strbuf_append(&gi->creator->name, "fused");
      }
      if (!append_binding(c, gi->creator, b)) return OOM();
    }
  }
  /* A group of tuple plumbing only (get-items of get-items) computes nothing: its
   * bindings stay as they are instead of becoming a function with no kernel. */
  for (int i = 0; i < bc.order.n; i++) {
    group_info_t *gi = (group_info_t *)bc.order.items[i];
    if (gi->creator && !gi->creator->has_call) gi->creator->func = NULL, gi->creator = NULL;
  }
  /* Step 2: group outputs and dependencies. */
  for (int i = 0; i < blk->n_bindings; i++) {
    const tj_rx_binding_t *b = &blk->bindings[i];
    tj_fuse_group_t *g = group_of(c, b->var);
    boundary_ctx_t bd = {&bc, info_of(&bc, g), g, true};
    tj_rx_visitor_t v = {.expr = boundary_expr, .ctx = &bd};
    tj_rx_visit_expr(&v, b->value);
    if (!bd.ok) return OOM();
  }
  /* Step 3: build and add the grouped functions. */
  tj_status_t *st = NULL;
  for (int i = 0; i < creators.n && !st; i++) {
    creator_t *cr = (creator_t *)creators.items[i];
    if (!cr->has_call) continue;
    bool name_failed = cr->name.failed;
    st = name_failed ? OOM() : create_function(c, cr);
    if (!st && cr->func) st = add_function(c, cr);
  }
  for (int i = 0; i < creators.n; i++) tj_strbuf_free(&((creator_t *)creators.items[i])->name);
  if (st) return st;
  /* Step 4: re-emit in a topological order of group dependencies. */
  for (int i = 0; i < bc.order.n && !rw->error; i++) emit_group(&bc, (group_info_t *)bc.order.items[i]);
  return NULL;
}

/* The function's own dataflow blocks are partitioned; anything else (ordinary blocks,
 * blocks nested in If branches, which are not in the graph) is kept. */
static void fuse_block_hook(tj_rx_mutator_t *rw, const tj_rx_block_t *blk) {
  fuse_ctx_t *c = rw->ctx;
  const tj_rx_expr_t *body = c->func->body;
  if (blk->is_dataflow && blk >= body->seq.blocks && blk < body->seq.blocks + body->seq.n_blocks) {
    tj_status_t *st = fuse_block(c, rw, blk);
    if (st) tj_rx_mutator_fail(rw, st);
    return;
  }
  for (int i = 0; i < blk->n_bindings && !rw->error; i++) tj_rx_mutator_default_binding(rw, &blk->bindings[i]);
}

static tj_status_t *fuse_function(fuse_ctx_t *c, const tj_rx_func_t *f, int opt_level, const tj_rx_func_t **out) {
  tj_fwd_graph_init(&c->graph, c->a);
  c->node_of = TJ_PTR_MAP(c->a);
  c->model_params = TJ_PTR_MAP(c->a);
  c->n_const_params = 0;
  *out = f;
  if (!f->body || f->body->kind != TJ_RX_SEQ) return NULL;
  TJ_RETURN_IF_ERROR(build_graph(c, f));
  if (!tj_partition_graph(&c->graph, opt_level, c->pc->fuse_max_depth, &c->groups)) return OOM();
  tj_rx_mutator_t rw;
  tj_rx_mutator_init(&rw, c->a, "FuseOps");
  rw.block = fuse_block_hook;
  rw.ctx = c;
  c->func = f;
  const tj_rx_func_t *nf = tj_rx_mutate_func(&rw, f);
  if (rw.error) return rw.error;
  *out = nf;
  return NULL;
}

static bool skip_function(const tj_rx_func_t *f) {
  return tj_attrs_get_int(f->attrs, "Primitive", 0) != 0 || tj_attrs_get(f->attrs, "Codegen") != NULL;
}

tj_status_t *tj_fuse_ops(const tj_pass_context_t *ctx, const tj_module_t *in, int fuse_opt_level,
                         const tj_module_t **out) {
  int opt_level = fuse_opt_level < 0 ? ctx->opt_level : fuse_opt_level;
  if (opt_level <= 0) {
    *out = in; /* every node is its own group: nothing changes */
    return NULL;
  }
  fuse_ctx_t c = {.pc = ctx, .a = ctx->arena};
  c.mod = tj_module_new(ctx->arena, in->n_funcs, in->funcs, in->attrs);
  if (!c.mod) return OOM();
  c.mod->global_infos = in->global_infos;
  for (int i = 0; i < in->n_funcs; i++) {
    const tj_func_entry_t *e = &in->funcs[i];
    if (e->is_prim || skip_function(e->relax)) continue;
    const tj_rx_func_t *nf;
    tj_status_t *st = fuse_function(&c, e->relax, opt_level, &nf);
    if (st) return tj_status_annotate(st, "FuseOps: in function '%s'", e->name);
    tj_func_entry_t ne = *e;
    ne.relax = nf;
    tj_module_t *m = tj_module_with_func(ctx->arena, c.mod, ne);
    if (!m) return OOM();
    c.mod = m;
  }
  *out = c.mod;
  return NULL;
}
