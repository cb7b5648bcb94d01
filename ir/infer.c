/* Struct-info inference for every Relax expression kind (TVM's Normalizer rules).
 * Calls to operators delegate to the op registry; call_tir-like calls return their
 * out_sinfo exactly, as TVM does (the verifier is what compares it with the callee). */
#include <string.h>

#include "ir/op.h"
#include "ir/sinfo.h"

#define OOM() tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory while inferring struct info")

static tj_status_t *sinfo_of(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  if (!e) return tj_status_new(TJ_ERR_INTERNAL, "struct info inference: missing sub-expression");
  if (e->sinfo) return *out = e->sinfo, NULL;
  return tj_rx_infer_sinfo(ctx, e, out);
}

static const char *expr_name(const tj_rx_expr_t *e) {
  if (!e) return "?";
  switch (e->kind) {
    case TJ_RX_VAR: case TJ_RX_DATAFLOW_VAR: case TJ_RX_GLOBAL_VAR:
      return e->var.name ? e->var.name : "?";
    case TJ_RX_OP:
      return e->op.name;
    case TJ_RX_EXTERN_FUNC:
      return e->string_imm;
    default:
      return tj_rx_expr_kind_name(e->kind);
  }
}

static tj_status_t *infer_tuple(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  int n = e->tuple.n;
  const tj_sinfo_t **fields = TJ_ARENA_ARRAY(ctx->arena, const tj_sinfo_t *, n > 0 ? n : 1);
  if (!fields) return OOM();
  for (int i = 0; i < n; i++)
    TJ_RETURN_IF_ERROR(tj_status_annotate(sinfo_of(ctx, e->tuple.fields[i], &fields[i]), "in tuple field %d", i));
  const tj_sinfo_t *s = tj_sinfo_tuple(ctx->arena, n, fields);
  if (!s) return OOM();
  return *out = s, NULL;
}

static tj_status_t *infer_get_item(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  const tj_sinfo_t *t;
  TJ_RETURN_IF_ERROR(sinfo_of(ctx, e->get_item.tuple, &t));
  int i = e->get_item.index;
  if (t->kind != TJ_SINFO_TUPLE) {
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_sinfo_format_short(&sb, t);
    tj_status_t *s = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "'%s'[%d]: tuple get-item on a value that is not a tuple (%s)",
                                   expr_name(e->get_item.tuple), i, sb.data ? sb.data : "?");
    tj_strbuf_free(&sb);
    return s;
  }
  if (i < 0 || i >= t->tuple.n)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "'%s'[%d]: index out of range for a tuple of %d field%s",
                         expr_name(e->get_item.tuple), i, t->tuple.n, t->tuple.n == 1 ? "" : "s");
  const tj_sinfo_t *f = t->tuple.fields[i] ? t->tuple.fields[i] : tj_sinfo_object(ctx->arena);
  if (!f) return OOM();
  *out = f;
  return NULL;
}

/* Ops whose result is their sinfo argument, whatever the callee does. */
static bool is_dps_call(const char *op) {
  return strcmp(op, "relax.call_tir") == 0 || strcmp(op, "relax.call_tir_inplace") == 0 ||
         strcmp(op, "relax.call_dps_packed") == 0 || strcmp(op, "relax.call_tir_with_grad") == 0 ||
         strcmp(op, "relax.call_pure_packed") == 0 || strcmp(op, "relax.call_packed") == 0;
}

/* The sinfo_args of a call as one sinfo: one entry as is, several as a tuple. */
static tj_status_t *sinfo_args_result(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  const tj_sinfo_t *s;
  if (e->call.n_sinfo_args == 0) s = tj_sinfo_object(ctx->arena);
  else if (e->call.n_sinfo_args == 1) s = e->call.sinfo_args[0];
  else s = tj_sinfo_tuple(ctx->arena, e->call.n_sinfo_args, e->call.sinfo_args);
  if (!s) return OOM();
  return *out = s, NULL;
}

static tj_status_t *ret_of_func_sinfo(const tj_infer_ctx_t *ctx, const tj_sinfo_t *f, const tj_sinfo_t **out) {
  const tj_sinfo_t *r = (f && f->kind == TJ_SINFO_FUNC && f->func.ret) ? f->func.ret : tj_sinfo_object(ctx->arena);
  if (!r) return OOM();
  return *out = r, NULL;
}

/* A call of a Relax function: its return struct info with the callee's symbolic
 * variables replaced by the arguments' (TVM's DeriveCallRetStructInfo). */
static tj_status_t *call_ret_in_caller_terms(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t *f,
                                             const tj_sinfo_t **out) {
  if (!f || f->kind != TJ_SINFO_FUNC || f->func.n_params != e->call.n_args) return ret_of_func_sinfo(ctx, f, out);
  const tj_sinfo_t **args = TJ_ARENA_ARRAY(ctx->arena, const tj_sinfo_t *, e->call.n_args + 1);
  if (!args) return OOM();
  for (int i = 0; i < e->call.n_args; i++) TJ_RETURN_IF_ERROR(sinfo_of(ctx, e->call.args[i], &args[i]));
  const tj_sinfo_t *r = tj_sinfo_derive_call_ret(ctx->arena, f, e->call.n_args, args);
  if (!r) return OOM();
  return *out = r, NULL;
}

static tj_status_t *infer_op_call(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  const char *name = e->call.callee->op.name;
  const tj_op_def_t *op = tj_op_lookup(name);
  if (is_dps_call(name) && !op) return sinfo_args_result(ctx, e, out);
  if (!op || !op->infer)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "struct info of a call to operator '%s': the operator is not supported "
                         "(not in the op registry)", name);
  for (int i = 0; i < e->call.n_args; i++)
    if (!e->call.args[i]) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "call to '%s': argument %d is missing", name, i);
  return op->infer(ctx, e, out);
}

static tj_status_t *infer_call(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  const tj_rx_expr_t *callee = e->call.callee;
  switch (callee->kind) {
    case TJ_RX_OP:
      return infer_op_call(ctx, e, out);
    case TJ_RX_GLOBAL_VAR: {
      const tj_sinfo_t *f = ctx->global_sinfo ? ctx->global_sinfo(ctx->global_ctx, callee->var.name) : NULL;
      return call_ret_in_caller_terms(ctx, e, f ? f : callee->sinfo, out);
    }
    case TJ_RX_EXTERN_FUNC:
      return sinfo_args_result(ctx, e, out);
    default: {
      const tj_sinfo_t *f;
      TJ_RETURN_IF_ERROR(sinfo_of(ctx, callee, &f));
      if (f->kind != TJ_SINFO_FUNC && f->kind != TJ_SINFO_OBJECT) {
        tj_strbuf_t sb;
        tj_strbuf_init(&sb);
        tj_sinfo_format_short(&sb, f);
        tj_status_t *s = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "call of '%s', which is not a function (%s)",
                                       expr_name(callee), sb.data ? sb.data : "?");
        tj_strbuf_free(&sb);
        return s;
      }
      return ret_of_func_sinfo(ctx, f, out);
    }
  }
}

static tj_status_t *infer_if(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out) {
  const tj_sinfo_t *t, *f;
  TJ_RETURN_IF_ERROR(tj_status_annotate(sinfo_of(ctx, e->if_.then_branch, &t), "in the then branch"));
  TJ_RETURN_IF_ERROR(tj_status_annotate(sinfo_of(ctx, e->if_.else_branch, &f), "in the else branch"));
  const tj_sinfo_t *s = tj_sinfo_lub(ctx->arena, t, f);
  if (!s) return OOM();
  return *out = s, NULL;
}

static const tj_sinfo_t *global_var_sinfo(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e) {
  const tj_sinfo_t *s = ctx->global_sinfo ? ctx->global_sinfo(ctx->global_ctx, e->var.name) : NULL;
  if (s) return s;
  if (e->sinfo) return e->sinfo;
  return tj_sinfo_func(ctx->arena, -1, NULL, tj_sinfo_object(ctx->arena), false);
}

tj_status_t *tj_rx_infer_sinfo(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out_sinfo) {
  if (!ctx || !ctx->arena || !e)
    return tj_status_new(TJ_ERR_INTERNAL, "tj_rx_infer_sinfo: missing context, arena or expression");
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *s = NULL;
  switch (e->kind) {
    case TJ_RX_VAR: case TJ_RX_DATAFLOW_VAR:
      if (!e->sinfo)
        return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "var '%s' has no struct info", e->var.name ? e->var.name : "?");
      return *out_sinfo = e->sinfo, NULL;
    case TJ_RX_GLOBAL_VAR:
      s = global_var_sinfo(ctx, e);
      break;
    case TJ_RX_TUPLE:
      return infer_tuple(ctx, e, out_sinfo);
    case TJ_RX_TUPLE_GET_ITEM:
      return infer_get_item(ctx, e, out_sinfo);
    case TJ_RX_CALL:
      return infer_call(ctx, e, out_sinfo);
    case TJ_RX_CONSTANT:
      s = tj_sinfo_tensor_static(a, e->constant.dtype, e->constant.ndim, e->constant.shape);
      break;
    case TJ_RX_SHAPE_EXPR:
      s = tj_sinfo_shape(a, e->shape_expr.n, e->shape_expr.values);
      if (s && !s->shape.values) ((tj_sinfo_t *)s)->shape.values = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, 1);
      break;
    case TJ_RX_PRIM_VALUE:
      s = tj_sinfo_prim(a, e->prim_value.value->dtype, e->prim_value.value);
      break;
    case TJ_RX_OP: case TJ_RX_STRING_IMM: case TJ_RX_DATA_TYPE_IMM:
      s = tj_sinfo_object(a);
      break;
    case TJ_RX_EXTERN_FUNC:
      s = tj_sinfo_func(a, -1, NULL, tj_sinfo_object(a), false);
      break;
    case TJ_RX_IF:
      return infer_if(ctx, e, out_sinfo);
    case TJ_RX_SEQ:
      return sinfo_of(ctx, e->seq.body, out_sinfo);
    case TJ_RX_FUNCTION:
      s = tj_rx_func_sinfo(a, e->function);
      break;
    default:
      return tj_status_new(TJ_ERR_INTERNAL, "struct info inference: unknown expression kind %d", (int)e->kind);
  }
  if (!s) return OOM();
  *out_sinfo = s;
  return NULL;
}

const tj_sinfo_t *tj_rx_func_sinfo(tj_arena_t *arena, const tj_rx_func_t *f) {
  if (!arena || !f) return NULL;
  const tj_sinfo_t **params = TJ_ARENA_ARRAY(arena, const tj_sinfo_t *, f->n_params > 0 ? f->n_params : 1);
  if (!params) return NULL;
  for (int i = 0; i < f->n_params; i++) {
    const tj_sinfo_t *p = f->params[i] ? f->params[i]->sinfo : NULL;
    params[i] = p ? p : tj_sinfo_object(arena);
    if (!params[i]) return NULL;
  }
  const tj_sinfo_t *ret = f->ret_sinfo;
  if (!ret && f->body) {
    tj_infer_ctx_t ctx = {.arena = arena};
    tj_status_t *st = sinfo_of(&ctx, f->body, &ret);
    if (st) {
      /* The body cannot be typed in isolation (e.g. it calls module functions):
       * the return stays unknown, as an Object. */
      tj_status_free(st);
      ret = NULL;
    }
  }
  if (!ret) ret = tj_sinfo_object(arena);
  if (!ret) return NULL;
  return tj_sinfo_func(arena, f->n_params, params, ret, f->is_pure);
}
