/* The digest of an un-lowered PrimFunc: XXH3-128 over a complete serialization of it,
 * the part of the disk cache key that stands for the kernel (jit/cache_key.c).
 *
 * A start from the cache used to lower every kernel only to print the lowered text its
 * key hashed: 10-13 ms of ResNet-18's ~75 ms cached start on the Ice Lake host. Lowering
 * is a pure function of the PrimFunc, its name and the schedule options (all in the
 * key), so the function as FuseTIR left it identifies the kernel as well, and costs one
 * walk of a tree a fraction of the lowered one's size.
 *
 * Safety rests on completeness: every field of every node is serialized, names
 * included (lowering may read them; sharing across differently named kernels is not
 * worth the risk), vars and buffers by the order they are first met (pointer
 * identity), literals bit for bit. The static asserts below break the build when a
 * node type gains a field: add the field here, then update the size. */
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "jit/jit.h"
#include "support/map.h"

_Static_assert(sizeof(tj_tir_expr_t) == 32, "tj_tir_expr_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_tir_stmt_t) == 56, "tj_tir_stmt_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_buffer_t) == 72, "tj_buffer_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_block_t) == 104, "tj_block_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_iter_var_t) == 32, "tj_iter_var_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_buffer_region_t) == 24, "tj_buffer_region_t changed: serialize it in func_digest.c");
_Static_assert(sizeof(tj_match_buffer_t) == 32, "tj_match_buffer_t changed: serialize it in func_digest.c");
_Static_assert(sizeof(tj_prim_func_t) == 40, "tj_prim_func_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_attr_value_t) == 24, "tj_attr_value_t changed: serialize the new field in func_digest.c");
_Static_assert(sizeof(tj_dtype_t) == 4, "tj_dtype_t changed: serialize the new field in func_digest.c");
_Static_assert(TJ_TIR_EXPR_KIND_COUNT == 29 && TJ_TIR_STMT_KIND_COUNT == 8,
               "a TIR node kind was added: serialize it in func_digest.c");

typedef struct digest {
  XXH3_state_t st;
  tj_map_t ids; /* var or buffer node -> its number + 1 */
  uint64_t n;
  bool failed; /* out of memory in the map */
} digest_t;

static void put(digest_t *d, const void *p, size_t n) { XXH3_128bits_update(&d->st, p, n); }
static void put_u64(digest_t *d, uint64_t v) { put(d, &v, sizeof v); }
static void put_tag(digest_t *d, char tag) { put(d, &tag, 1); }

/* Length-prefixed, so no two string sequences serialize alike; NULL differs from "". */
static void put_str(digest_t *d, const char *s) {
  put_u64(d, s ? strlen(s) + 1 : 0);
  if (s) put(d, s, strlen(s));
}

static void put_dtype(digest_t *d, tj_dtype_t t) { put_u64(d, ((uint64_t)t.code << 32) | ((uint64_t)t.bits << 16) | t.lanes); }

/* A node's number; *first says whether it was met just now (its definition follows). */
static uint64_t node_id(digest_t *d, const void *node, bool *first) {
  uintptr_t id = (uintptr_t)tj_map_get(&d->ids, node);
  *first = id == 0;
  if (id) return id - 1;
  if (!tj_map_put(&d->ids, node, (void *)(uintptr_t)(d->n + 1))) d->failed = true;
  return d->n++;
}

static void put_expr(digest_t *d, const tj_tir_expr_t *e);
static void put_stmt(digest_t *d, const tj_tir_stmt_t *s);
static void put_attrs(digest_t *d, const tj_attrs_t *a);

static void put_exprs(digest_t *d, int n, const tj_tir_expr_t *const *v) {
  put_u64(d, v ? (uint64_t)n : UINT64_MAX);
  for (int i = 0; v && i < n; i++) put_expr(d, v[i]);
}

/* A buffer: its number, and everything about it the first time it is met. */
static void put_buffer(digest_t *d, const tj_buffer_t *b) {
  if (!b) return put_tag(d, 'n');
  bool first;
  put_tag(d, 'B');
  put_u64(d, node_id(d, b, &first));
  if (!first) return;
  put_str(d, b->name);
  put_dtype(d, b->dtype);
  put_exprs(d, b->ndim, b->shape);
  put_exprs(d, b->ndim, b->strides);
  put_expr(d, b->elem_offset);
  put_str(d, b->scope);
  put_u64(d, (uint64_t)b->n_axis_separators);
  if (b->n_axis_separators > 0) put(d, b->axis_separators, sizeof *b->axis_separators * (size_t)b->n_axis_separators);
  put_expr(d, b->data);
}

static void put_attr_value(digest_t *d, const tj_attr_value_t *v) {
  put_u64(d, (uint64_t)v->kind);
  put_dtype(d, v->dtype);
  switch (v->kind) {
    case TJ_ATTR_NONE: break;
    case TJ_ATTR_INT: put_u64(d, (uint64_t)v->i); break;
    case TJ_ATTR_FLOAT: put(d, &v->f, sizeof v->f); break;
    case TJ_ATTR_STR: put_str(d, v->s); break;
    case TJ_ATTR_LIST:
      put_u64(d, (uint64_t)v->list.n);
      for (int i = 0; i < v->list.n; i++) put_attr_value(d, &v->list.items[i]);
      break;
    case TJ_ATTR_DICT: put_attrs(d, v->dict); break;
    case TJ_ATTR_DTYPE: break;
    case TJ_ATTR_BUFFER: put_buffer(d, v->buffer); break;
  }
}

/* In their order: order cannot change a kernel, and a different order only misses. */
static void put_attrs(digest_t *d, const tj_attrs_t *a) {
  put_u64(d, a ? (uint64_t)a->n : UINT64_MAX);
  for (int i = 0; a && i < a->n; i++) {
    put_str(d, a->keys[i]);
    put_attr_value(d, &a->values[i]);
  }
}

static void put_expr(digest_t *d, const tj_tir_expr_t *e) {
  if (!e) return put_tag(d, 'n');
  put_tag(d, 'e');
  put_u64(d, (uint64_t)e->kind);
  put_dtype(d, e->dtype);
  switch (e->kind) {
    case TJ_TIR_INT_IMM: put_u64(d, (uint64_t)e->int_imm); return;
    case TJ_TIR_FLOAT_IMM: put(d, &e->float_imm, sizeof e->float_imm); return; /* bits: -0.0 and 0.0 differ */
    case TJ_TIR_STRING_IMM: put_str(d, e->string_imm); return;
    case TJ_TIR_VAR: {
      bool first;
      put_u64(d, node_id(d, e, &first));
      if (first) put_str(d, e->var.name);
      return;
    }
    case TJ_TIR_NOT: case TJ_TIR_CAST: put_expr(d, e->unary.operand); return;
    case TJ_TIR_SELECT:
      put_expr(d, e->select.cond);
      put_expr(d, e->select.true_value);
      put_expr(d, e->select.false_value);
      return;
    case TJ_TIR_BUFFER_LOAD:
      put_buffer(d, e->load.buffer);
      put_exprs(d, e->load.n_indices, e->load.indices);
      return;
    case TJ_TIR_LET:
      put_expr(d, e->let.var);
      put_expr(d, e->let.value);
      put_expr(d, e->let.body);
      return;
    case TJ_TIR_CALL:
      put_str(d, e->call.op);
      put_exprs(d, e->call.n_args, e->call.args);
      return;
    case TJ_TIR_RAMP:
      put_expr(d, e->ramp.base);
      put_expr(d, e->ramp.stride);
      return;
    case TJ_TIR_BROADCAST: put_expr(d, e->broadcast.value); return;
    default: /* the binary kinds */
      put_expr(d, e->binary.a);
      put_expr(d, e->binary.b);
      return;
  }
}

static void put_region(digest_t *d, const tj_buffer_region_t *r) {
  put_buffer(d, r->buffer);
  put_u64(d, r->ranges ? (uint64_t)r->ndim : UINT64_MAX);
  for (int i = 0; r->ranges && i < r->ndim; i++) {
    put_expr(d, r->ranges[i].min);
    put_expr(d, r->ranges[i].extent);
  }
}

static void put_block(digest_t *d, const tj_block_t *b) {
  if (!b) return put_tag(d, 'n');
  put_tag(d, 'k');
  put_str(d, b->name);
  put_u64(d, (uint64_t)b->n_iter_vars);
  for (int i = 0; i < b->n_iter_vars; i++) {
    put_expr(d, b->iter_vars[i].var);
    put_expr(d, b->iter_vars[i].dom.min);
    put_expr(d, b->iter_vars[i].dom.extent);
    put_u64(d, (uint64_t)b->iter_vars[i].kind);
  }
  put_u64(d, (uint64_t)b->n_reads);
  for (int i = 0; i < b->n_reads; i++) put_region(d, &b->reads[i]);
  put_u64(d, (uint64_t)b->n_writes);
  for (int i = 0; i < b->n_writes; i++) put_region(d, &b->writes[i]);
  put_u64(d, (uint64_t)b->n_alloc_buffers);
  for (int i = 0; i < b->n_alloc_buffers; i++) put_buffer(d, b->alloc_buffers[i]);
  put_u64(d, (uint64_t)b->n_match_buffers);
  for (int i = 0; i < b->n_match_buffers; i++) {
    put_buffer(d, b->match_buffers[i].buffer);
    put_region(d, &b->match_buffers[i].source);
  }
  put_stmt(d, b->init);
  put_stmt(d, b->body);
  put_attrs(d, b->annotations);
}

static void put_stmt(digest_t *d, const tj_tir_stmt_t *s) {
  if (!s) return put_tag(d, 'n');
  put_tag(d, 's');
  put_u64(d, (uint64_t)s->kind);
  switch (s->kind) {
    case TJ_TIR_FOR:
      put_expr(d, s->loop.var);
      put_expr(d, s->loop.min);
      put_expr(d, s->loop.extent);
      put_u64(d, (uint64_t)s->loop.kind);
      put_attrs(d, s->loop.annotations);
      put_stmt(d, s->loop.body);
      return;
    case TJ_TIR_BLOCK_REALIZE:
      put_exprs(d, s->realize.n_iter_values, s->realize.iter_values);
      put_expr(d, s->realize.predicate);
      put_block(d, s->realize.block);
      return;
    case TJ_TIR_BUFFER_STORE:
      put_buffer(d, s->store.buffer);
      put_exprs(d, s->store.n_indices, s->store.indices);
      put_expr(d, s->store.value);
      return;
    case TJ_TIR_LET_STMT:
      put_expr(d, s->let.var);
      put_expr(d, s->let.value);
      put_stmt(d, s->let.body);
      return;
    case TJ_TIR_IF:
      put_expr(d, s->if_.cond);
      put_stmt(d, s->if_.then_stmt);
      put_stmt(d, s->if_.else_stmt);
      return;
    case TJ_TIR_SEQ:
      put_u64(d, (uint64_t)s->seq.n);
      for (int i = 0; i < s->seq.n; i++) put_stmt(d, s->seq.stmts[i]);
      return;
    case TJ_TIR_EVALUATE: put_expr(d, s->evaluate.value); return;
    case TJ_TIR_ALLOCATE:
      put_buffer(d, s->allocate.buffer);
      put_stmt(d, s->allocate.body);
      return;
    case TJ_TIR_STMT_KIND_COUNT: return;
  }
}

bool tj_jit_func_digest(const tj_prim_func_t *f, const char *name, uint8_t out_digest[16]) {
  digest_t d = {.ids = TJ_PTR_MAP(NULL)};
  XXH3_INITSTATE(&d.st);
  XXH3_128bits_reset(&d.st);
  put_str(&d, "tvmjit-prim-func-v1");
  put_str(&d, name);
  put_u64(&d, (uint64_t)f->n_params);
  for (int i = 0; i < f->n_params; i++) {
    put_expr(&d, f->params[i]);
    put_buffer(&d, f->buffer_map ? f->buffer_map[i] : NULL);
  }
  put_attrs(&d, f->attrs);
  put_stmt(&d, f->body);
  tj_map_free(&d.ids);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&d.st));
  memcpy(out_digest, c.digest, 16);
  return !d.failed;
}
