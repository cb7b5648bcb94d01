/* Graphviz DOT of a Relax function's dataflow (ir/dot.h).
 *
 * Every binding that computes something is a node: a kernel call (R.call_tir) shows the
 * kernel, its op pattern and its output; an operator call (before LegalizeOps) shows the
 * operator. A call of a fused function (FuseOps' output, before FuseTIR) is a cluster
 * holding the calls inside it, with edges from the outer arguments to the inner uses, so
 * a picture taken after FuseOps shows the groups and one taken after FuseTIR shows the
 * kernels. Variables that only rename or pick a tuple field are looked through. */
#include "ir/dot.h"

#include <string.h>

#include "ir/sinfo.h"
#include "support/alloc.h"

/* Which node stands for a variable: a small table, one entry per binding. */
typedef struct var_node {
  const tj_rx_expr_t *var;
  int node; /* -1: none (a constant, a shape) */
} var_node_t;

typedef struct dot_ctx {
  const tj_module_t *module;
  tj_strbuf_t *out;
  var_node_t *vars;
  int n_vars, cap_vars;
  int n_nodes, n_clusters;
  bool oom;
} dot_ctx_t;

static void bind_var(dot_ctx_t *c, const tj_rx_expr_t *var, int node) {
  if (c->n_vars == c->cap_vars) {
    int cap = c->cap_vars ? 2 * c->cap_vars : 64;
    var_node_t *grown = tj_realloc(c->vars, sizeof *grown * (size_t)cap);
    if (!grown) {
      c->oom = true;
      return;
    }
    c->vars = grown;
    c->cap_vars = cap;
  }
  c->vars[c->n_vars++] = (var_node_t){var, node};
}

static int node_of(const dot_ctx_t *c, const tj_rx_expr_t *e) {
  for (int i = c->n_vars - 1; i >= 0; i--)
    if (c->vars[i].var == e) return c->vars[i].node;
  return -1;
}

/* TVM's OpPatternKind names, as AnnotateTIROpPattern stores them. */
static const char *pattern_name(int64_t kind) {
  switch (kind) {
    case 0: return "ElemWise";
    case 1: return "Broadcast";
    case 2: return "Injective";
    case 3: return "CommReduce";
    case 4: return "OutEWiseFusable";
    case 7: return "Tuple";
    case 8: return "Opaque";
    default: return NULL;
  }
}

/* Text inside a DOT string: quotes and backslashes escaped. */
static void put_escaped(tj_strbuf_t *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') tj_strbuf_append_n(out, "\\", 1);
    tj_strbuf_append_n(out, s, 1);
  }
}

static void put_sinfo(tj_strbuf_t *out, const tj_sinfo_t *s) {
  if (!s) return;
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_sinfo_format_short(&sb, s);
  char *text = tj_strbuf_take(&sb);
  if (text) put_escaped(out, text);
  tj_free(text);
}

/* A node: id, the first label line ("var = callee" for a binding, so that the memory
 * plan's value names can be found in the picture) and the struct info below it. */
static int emit_node(dot_ctx_t *c, const char *indent, const char *shape, const char *var, const char *title,
                     const char *detail, const tj_sinfo_t *sinfo) {
  int id = c->n_nodes++;
  tj_strbuf_printf(c->out, "%sn%d [shape=%s, label=\"", indent, id, shape);
  if (var) {
    put_escaped(c->out, var);
    tj_strbuf_append(c->out, " = ");
  }
  put_escaped(c->out, title);
  if (detail) {
    tj_strbuf_append(c->out, "\\n");
    put_escaped(c->out, detail);
  }
  if (sinfo) {
    tj_strbuf_append(c->out, "\\n");
    put_sinfo(c->out, sinfo);
  }
  tj_strbuf_append(c->out, "\"];\n");
  return id;
}

static void emit_edges(dot_ctx_t *c, const char *indent, int n_args, const tj_rx_expr_t *const *args, int to) {
  for (int i = 0; i < n_args; i++) {
    if (args[i]->kind == TJ_RX_TUPLE) {
      emit_edges(c, indent, args[i]->tuple.n, args[i]->tuple.fields, to);
      continue;
    }
    int from = node_of(c, args[i]);
    if (from >= 0) tj_strbuf_printf(c->out, "%sn%d -> n%d;\n", indent, from, to);
  }
}

static void emit_function_body(dot_ctx_t *c, const tj_rx_func_t *f, const char *indent);

/* A call of a fused (Primitive) Relax function: its bindings in a cluster, its params
 * standing for the outer arguments. Returns the node of its result. */
static int emit_fused_call(dot_ctx_t *c, const char *name, const tj_rx_func_t *f, int n_args,
                           const tj_rx_expr_t *const *args) {
  int cluster = c->n_clusters++;
  tj_strbuf_printf(c->out, "  subgraph cluster_%d {\n    style=rounded; color=gray50; label=\"", cluster);
  put_escaped(c->out, name);
  tj_strbuf_append(c->out, "\";\n");
  for (int i = 0; i < f->n_params && i < n_args; i++) bind_var(c, f->params[i], node_of(c, args[i]));
  emit_function_body(c, f, "    ");
  tj_strbuf_append(c->out, "  }\n");
  return node_of(c, f->body->seq.body);
}

static int emit_call(dot_ctx_t *c, const char *indent, const char *var, const tj_rx_expr_t *value) {
  tj_call_tir_view_t view;
  if (tj_rx_as_call_tir(value, &view)) {
    const char *callee = view.callee->kind == TJ_RX_GLOBAL_VAR ? view.callee->var.name : view.callee->string_imm;
    const tj_prim_func_t *pf = view.callee->kind == TJ_RX_GLOBAL_VAR ? tj_module_find_prim(c->module, callee) : NULL;
    const char *pattern = pf ? pattern_name(tj_attrs_get_int(pf->attrs, "op_pattern", -1)) : NULL;
    int id = emit_node(c, indent, "box", var, callee, pattern, view.out_sinfo);
    emit_edges(c, indent, view.n_args, view.args, id);
    return id;
  }
  const tj_rx_expr_t *callee = value->call.callee;
  if (callee->kind == TJ_RX_GLOBAL_VAR) {
    const tj_rx_func_t *f = tj_module_find_relax(c->module, callee->var.name);
    if (f && f->body && f->body->kind == TJ_RX_SEQ && strlen(indent) == 2)
      return emit_fused_call(c, callee->var.name, f, value->call.n_args, value->call.args);
  }
  const char *title = callee->kind == TJ_RX_OP ? callee->op.name : callee->kind == TJ_RX_GLOBAL_VAR ? callee->var.name : "call";
  if (strncmp(title, "relax.", 6) == 0) title += 6;
  int id = emit_node(c, indent, "box", var, title, NULL, value->sinfo);
  emit_edges(c, indent, value->call.n_args, value->call.args, id);
  return id;
}

/* The node standing for a binding's value; renames and tuple picks are looked through. */
static int emit_value(dot_ctx_t *c, const char *indent, const char *var, const tj_rx_expr_t *value) {
  switch (value->kind) {
    case TJ_RX_CALL: return emit_call(c, indent, var, value);
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR: return node_of(c, value);
    case TJ_RX_TUPLE_GET_ITEM: return node_of(c, value->get_item.tuple);
    case TJ_RX_CONSTANT: return emit_node(c, indent, "note", var, "constant", NULL, value->sinfo);
    case TJ_RX_TUPLE: {
      int id = emit_node(c, indent, "point", NULL, "", NULL, NULL);
      emit_edges(c, indent, value->tuple.n, value->tuple.fields, id);
      return id;
    }
    default: return -1;
  }
}

static void emit_function_body(dot_ctx_t *c, const tj_rx_func_t *f, const char *indent) {
  const tj_rx_expr_t *seq = f->body;
  if (!seq || seq->kind != TJ_RX_SEQ) return;
  for (int b = 0; b < seq->seq.n_blocks && !c->oom; b++) {
    const tj_rx_block_t *block = &seq->seq.blocks[b];
    for (int i = 0; i < block->n_bindings; i++) {
      const tj_rx_binding_t *bd = &block->bindings[i];
      bind_var(c, bd->var, emit_value(c, indent, bd->var->var.name, bd->value));
    }
  }
}

static void emit_params(dot_ctx_t *c, const tj_rx_func_t *f) {
  int n_inputs = (int)tj_attrs_get_int(f->attrs, "num_input", f->n_params);
  for (int i = 0; i < f->n_params; i++) {
    const tj_rx_expr_t *p = f->params[i];
    bind_var(c, p, emit_node(c, "  ", i < n_inputs ? "ellipse" : "cylinder", NULL, p->var.name, NULL, p->sinfo));
  }
}

char *tj_dot_function(const tj_module_t *m, const char *func_name, const char *note) {
  const tj_rx_func_t *f = tj_module_find_relax(m, func_name);
  if (!f) return NULL;
  tj_strbuf_t out;
  tj_strbuf_init(&out);
  dot_ctx_t c = {.module = m, .out = &out};
  tj_strbuf_append(&out, "digraph ");
  tj_strbuf_append(&out, "\"");
  put_escaped(&out, func_name);
  tj_strbuf_append(&out, "\" {\n  rankdir=TB; node [fontname=\"Helvetica\", fontsize=10];\n");
  emit_params(&c, f);
  emit_function_body(&c, f, "  ");
  const tj_rx_expr_t *result = f->body && f->body->kind == TJ_RX_SEQ ? f->body->seq.body : NULL;
  int from = result ? node_of(&c, result) : -1;
  if (from < 0 && result) from = emit_value(&c, "  ", NULL, result);
  int sink = emit_node(&c, "  ", "doublecircle", NULL, "output", NULL, NULL);
  if (from >= 0) tj_strbuf_printf(&out, "  n%d -> n%d;\n", from, sink);
  if (note && *note) {
    tj_strbuf_append(&out, "  note [shape=note, fontname=\"Courier\", label=\"");
    for (const char *p = note; *p; p++) {
      if (*p == '\n') tj_strbuf_append(&out, "\\l");
      else put_escaped(&out, (char[2]){*p, 0});
    }
    tj_strbuf_append(&out, "\\l\"];\n");
  }
  tj_strbuf_append(&out, "}\n");
  tj_free(c.vars);
  if (c.oom) {
    tj_strbuf_free(&out);
    return NULL;
  }
  return tj_strbuf_take(&out);
}
