/* Weights packed by the kernel's caller, once, instead of by the kernel on every call.
 *
 * The conv/matmul rule (schedule_conv.c) repacks a weight whose vector dim is not its
 * innermost into [F / L, other dims, L]. When the weight is a constant of the model
 * (opts->constant_params, from the compile driver), that copy is the same on every call:
 * the kernel instead takes the packed weight as one more buffer parameter, and the caller
 * makes it once at load (runtime/prepack.c) from the description left in
 * opts->prepacked. The kernel's loads of the packed buffer are the ones it made from its
 * own copy, so its outputs are the same bits. */
#include <string.h>

#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

static bool packable_dtype(tj_dtype_t from, tj_dtype_t to) {
  if (from.lanes != 1 || to.lanes != 1) return false;
  if (tj_dtype_eq(from, to)) return true;
  return from.code == TJ_DT_FLOAT && from.bits == 16 && to.code == TJ_DT_FLOAT && to.bits == 32;
}

static bool same_packing(const tj_tir_prepack_t *a, const tj_tir_prepack_t *b) {
  if (a->param != b->param || a->ndim != b->ndim || a->lanes != b->lanes || !tj_dtype_eq(a->dtype, b->dtype) ||
      a->winograd_m != b->winograd_m)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->perm[i] != b->perm[i]) return false;
  return true;
}

const tj_buffer_t *tj_sched_prepack(tj_sched_ctx_t *c, const tj_tir_prepack_t *want, const tj_buffer_t *to) {
  tj_tir_prepacks_t *out = c->opts->prepacked;
  if (!out || want->param < 0 || want->param >= 64 || !(c->opts->constant_params >> want->param & 1)) return NULL;
  const tj_buffer_t *w = c->func->buffer_map[want->param];
  if (want->ndim > TJ_TIR_PREPACK_MAX_DIMS || !packable_dtype(w->dtype, want->dtype)) return NULL;
  for (int i = 0; i < out->n; i++)
    if (out->items[i].param == want->param) return same_packing(&out->items[i], want) ? c->prepack_buf[i] : NULL;
  if (out->n == TJ_TIR_MAX_PREPACKS) return NULL;
  out->items[out->n] = *want;
  out->items[out->n].packed_param = -1; /* set when the params are appended */
  c->prepack_buf[out->n++] = to;
  return to;
}

typedef struct find_load {
  const tj_buffer_t *buf;
  bool found;
} find_load_t;

static bool find_load_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  find_load_t *f = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD && e->load.buffer == f->buf) f->found = true;
  return !f->found;
}

static bool reads(const tj_tir_stmt_t *body, const tj_buffer_t *buf) {
  find_load_t f = {buf, false};
  tj_tir_visitor_t v = {.expr = find_load_expr, .ctx = &f};
  tj_tir_visit_stmt(&v, body);
  return f.found;
}

tj_status_t *tj_sched_append_prepacked(tj_sched_ctx_t *c, const char *name, tj_prim_func_t *nf) {
  tj_tir_prepacks_t *out = c->opts->prepacked;
  if (!out || !out->n) return NULL;
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(c->arena, const tj_tir_expr_t *, nf->n_params + out->n);
  const tj_buffer_t **bmap = TJ_ARENA_ARRAY(c->arena, const tj_buffer_t *, nf->n_params + out->n);
  if (!params || !bmap) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "scheduling '%s': out of memory", name);
  memcpy(params, nf->params, sizeof *params * (size_t)nf->n_params);
  memcpy(bmap, nf->buffer_map, sizeof *bmap * (size_t)nf->n_params);
  for (int i = 0; i < out->n; i++) {
    tj_tir_prepack_t *p = &out->items[i];
    p->packed_param = nf->n_params + i;
    p->source_unread = !reads(nf->body, nf->buffer_map[p->param]);
    params[p->packed_param] = c->prepack_buf[i]->data;
    bmap[p->packed_param] = c->prepack_buf[i];
  }
  nf->n_params += out->n;
  nf->params = params;
  nf->buffer_map = bmap;
  return NULL;
}
