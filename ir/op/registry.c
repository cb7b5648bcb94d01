/* The operator registry: the ops of ir/op/table.def, lookups by name, and the call
 * builder the parser uses. Nothing here names an operator. */
#include "ir/op.h"

#include <string.h>

#include "ir/op/common.h"

static const tj_op_def_t *const registry[] = {
#define TJ_OP(ident, family, legalize) &tj_op_##ident,
#include "ir/op/table.def"
#undef TJ_OP
};
#define N_OPS ((int)(sizeof registry / sizeof registry[0]))

static const char *const families[] = {
#define TJ_OP(ident, family, legalize) #family,
#include "ir/op/table.def"
#undef TJ_OP
};

const char *tj_op_family(const tj_op_def_t *def) {
  for (int i = 0; i < N_OPS; i++)
    if (registry[i] == def) return families[i];
  return NULL;
}

const tj_op_def_t *tj_op_lookup(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < N_OPS; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const tj_op_def_t *tj_op_lookup_script(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < N_OPS; i++)
    if (strcmp(registry[i]->script_name, name) == 0) return registry[i];
  return NULL;
}

/* Levenshtein distance, for names of at most 63 characters (longer: "far"). */
static int edit_distance(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  if (na > 63 || nb > 63) return 1 << 20;
  int row[64];
  for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[nb];
}

const char *tj_op_suggest(const char *script_name) {
  if (!script_name) return NULL;
  const char *best = NULL;
  int best_d = 1 << 20;
  for (int i = 0; i < N_OPS; i++) {
    int d = edit_distance(script_name, registry[i]->script_name);
    if (d < best_d) best_d = d, best = registry[i]->script_name;
  }
  int limit = (int)strlen(script_name) / 3;
  return best_d <= (limit > 2 ? limit : 2) ? best : NULL;
}

const tj_op_def_t *const *tj_op_all(int *out_n) {
  *out_n = N_OPS;
  return registry;
}

int tj_op_call_mp_policy(const tj_rx_expr_t *call) {
  if (!call || call->kind != TJ_RX_CALL || call->call.callee->kind != TJ_RX_OP) return -1;
  const tj_op_def_t *def = tj_op_lookup(call->call.callee->op.name);
  return def ? (int)def->mp_policy : (int)TJ_MP_NEVER;
}

static const char *short_name(const tj_op_def_t *def) {
  const char *dot = strrchr(def->name, '.');
  return dot ? dot + 1 : def->name;
}

static tj_status_t *check_arg_count(const tj_op_def_t *def, int n) {
  if (n >= def->min_args && n <= def->max_args) return NULL;
  if (def->min_args == def->max_args)
    return tj_op_error("%s: takes %d arguments, got %d", short_name(def), def->min_args, n);
  return tj_op_error("%s: takes %d to %d arguments, got %d", short_name(def), def->min_args, def->max_args, n);
}

tj_status_t *tj_op_infer_call(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out_sinfo) {
  if (call->kind != TJ_RX_CALL || call->call.callee->kind != TJ_RX_OP)
    return tj_status_new(TJ_ERR_INTERNAL, "tj_op_infer_call: not a call to an op");
  const tj_op_def_t *def = tj_op_lookup(call->call.callee->op.name);
  if (!def) return tj_status_new(TJ_ERR_UNSUPPORTED, "operator '%s' is not supported", call->call.callee->op.name);
  TJ_RETURN_IF_ERROR(check_arg_count(def, call->call.n_args));
  return def->infer(ctx, call, out_sinfo);
}

/* Literal leaves get their obvious struct info so that ops can read it. */
static const tj_rx_expr_t *with_leaf_sinfo(tj_arena_t *arena, const tj_rx_expr_t *e) {
  if (e->sinfo) return e;
  switch (e->kind) {
    case TJ_RX_SHAPE_EXPR:
      return tj_rx_with_sinfo(arena, e, tj_sinfo_shape(arena, e->shape_expr.n, e->shape_expr.values));
    case TJ_RX_PRIM_VALUE:
      return tj_rx_with_sinfo(arena, e, tj_sinfo_prim(arena, e->prim_value.value->dtype, e->prim_value.value));
    case TJ_RX_CONSTANT:
      return tj_rx_with_sinfo(arena, e,
                              tj_sinfo_tensor_static(arena, e->constant.dtype, e->constant.ndim, e->constant.shape));
    default: return e;
  }
}

tj_status_t *tj_op_build_call(const tj_infer_ctx_t *ctx, const tj_op_def_t *def, int n_args,
                              const tj_rx_expr_t *const *args, const tj_attrs_t *given,
                              const tj_rx_expr_t **out_call) {
  tj_arena_t *arena = ctx->arena;
  const tj_attrs_t *attrs = NULL;
  if (def->normalize_attrs) {
    TJ_RETURN_IF_ERROR(def->normalize_attrs(arena, given, &attrs));
  } else if (given && given->n > 0) {
    return tj_op_error("%s: takes no attributes, got '%s'", short_name(def), given->keys[0]);
  }
  const tj_rx_expr_t *fixed[8] = {0};
  if (n_args > 8) return tj_op_error("%s: too many arguments (%d)", short_name(def), n_args);
  for (int i = 0; i < n_args; i++) fixed[i] = args[i];
  if (def->complete_args && n_args <= def->max_args) TJ_RETURN_IF_ERROR(def->complete_args(ctx, &n_args, fixed));
  for (int i = 0; i < n_args; i++) {
    if (!fixed[i])
      return tj_op_error("%s: argument %d%s%s%s is missing", short_name(def), i, def->arg_names ? " ('" : "",
                         def->arg_names ? def->arg_names[i] : "", def->arg_names ? "')" : "");
    if (!(fixed[i] = with_leaf_sinfo(arena, fixed[i])))
      return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory building a call");
  }
  if (def->canonicalize_args && n_args >= def->min_args && n_args <= def->max_args)
    TJ_RETURN_IF_ERROR(def->canonicalize_args(ctx, n_args, fixed));
  TJ_RETURN_IF_ERROR(check_arg_count(def, n_args));
  const tj_rx_expr_t *call = tj_rx_call(arena, tj_rx_op(arena, def->name), n_args, fixed, attrs, 0, NULL);
  if (!call) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory building a call");
  *out_call = call;
  return NULL;
}

tj_status_t *tj_op_make_call(const tj_infer_ctx_t *ctx, const tj_op_def_t *def, int n_args,
                             const tj_rx_expr_t *const *args, const tj_attrs_t *given,
                             const tj_rx_expr_t **out_call) {
  const tj_rx_expr_t *call = NULL;
  TJ_RETURN_IF_ERROR(tj_op_build_call(ctx, def, n_args, args, given, &call));
  tj_arena_t *arena = ctx->arena;
  const tj_sinfo_t *sinfo = NULL;
  TJ_RETURN_IF_ERROR(tj_op_infer_call(ctx, call, &sinfo));
  const tj_rx_expr_t *out = tj_rx_with_sinfo(arena, call, sinfo);
  if (!out) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory building a call");
  *out_call = out;
  return NULL;
}

