/* Canonical text of a lowered kernel: the key that says "same kernel" across modules
 * (and, later, across processes for the disk cache). Variables are numbered in the
 * order they are first met, so names never matter; every node prints its dtype and
 * literals print exactly (%a), so different kernels never print the same text.
 *
 * It is made for every kernel of every load, cache hit or not, so it avoids printf
 * (integers and dtypes are formatted by hand, dtype names remembered) and finds a var's
 * number in a hash map: this took 20 ms of ResNet-18's 36 ms cached JIT time. */
#include <inttypes.h>
#include <string.h>

#include "jit/jit.h"
#include "support/alloc.h"
#include "support/map.h"
#include "support/strbuf.h"
#include "transforms/tir/lower.h"

enum { DTYPE_MEMO = 8 };

typedef struct text_ctx {
  tj_strbuf_t sb;
  tj_map_t ids; /* var node -> its number + 1 */
  int n;
  bool failed;
  int n_dtypes; /* dtype names already formatted, most kernels use two or three */
  tj_dtype_t dtypes[DTYPE_MEMO];
  char dtype_names[DTYPE_MEMO][TJ_DTYPE_BUFSIZE + 1]; /* with the leading ':' */
} text_ctx_t;

static void put_int(text_ctx_t *c, int64_t v) {
  char buf[24], *p = buf + sizeof buf;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do *--p = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0) *--p = '-';
  tj_strbuf_append_n(&c->sb, p, (size_t)(buf + sizeof buf - p));
}

static int var_id(text_ctx_t *c, const tj_tir_expr_t *v) {
  uintptr_t id = (uintptr_t)tj_map_get(&c->ids, v);
  if (id) return (int)(id - 1);
  if (!tj_map_put(&c->ids, v, (void *)(uintptr_t)(c->n + 1))) {
    c->failed = true;
    return -1;
  }
  return c->n++;
}

/* "v<number>" or "b<number>" */
static void put_id(text_ctx_t *c, char prefix, const tj_tir_expr_t *v) {
  tj_strbuf_append_n(&c->sb, &prefix, 1);
  put_int(c, var_id(c, v));
}

static void put_dtype(text_ctx_t *c, tj_dtype_t d) {
  for (int i = 0; i < c->n_dtypes; i++)
    if (tj_dtype_eq(c->dtypes[i], d)) return tj_strbuf_append(&c->sb, c->dtype_names[i]);
  char buf[TJ_DTYPE_BUFSIZE + 1];
  buf[0] = ':';
  tj_dtype_str(d, buf + 1);
  tj_strbuf_append(&c->sb, buf);
  if (c->n_dtypes == DTYPE_MEMO) return;
  c->dtypes[c->n_dtypes] = d;
  memcpy(c->dtype_names[c->n_dtypes++], buf, sizeof buf);
}

static void put_expr(text_ctx_t *c, const tj_tir_expr_t *e);

static void put_buffer_ref(text_ctx_t *c, const tj_buffer_t *b) { put_id(c, 'b', b->data); }

static void put_buffer_decl(text_ctx_t *c, const tj_buffer_t *b) {
  tj_strbuf_append(&c->sb, "(buffer ");
  put_buffer_ref(c, b);
  put_dtype(c, b->dtype);
  tj_strbuf_append(&c->sb, " ");
  tj_strbuf_append(&c->sb, b->scope ? b->scope : "global");
  for (int i = 0; i < b->ndim; i++) {
    tj_strbuf_append(&c->sb, " ");
    put_expr(c, b->shape[i]);
  }
  tj_strbuf_append(&c->sb, ")");
}

static void put_exprs(text_ctx_t *c, int n, const tj_tir_expr_t *const *es) {
  for (int i = 0; i < n; i++) {
    tj_strbuf_append(&c->sb, " ");
    put_expr(c, es[i]);
  }
}

static void put_expr(text_ctx_t *c, const tj_tir_expr_t *e) {
  tj_strbuf_t *sb = &c->sb;
  switch (e->kind) {
    case TJ_TIR_INT_IMM: put_int(c, e->int_imm); put_dtype(c, e->dtype); return;
    case TJ_TIR_FLOAT_IMM: tj_strbuf_printf(sb, "%a", e->float_imm); put_dtype(c, e->dtype); return;
    case TJ_TIR_STRING_IMM: tj_strbuf_printf(sb, "\"%s\"", e->string_imm); return;
    case TJ_TIR_VAR: put_id(c, 'v', e); put_dtype(c, e->dtype); return;
    default: break;
  }
  tj_strbuf_append(sb, "(");
  tj_strbuf_append(sb, tj_tir_expr_kind_name(e->kind));
  put_dtype(c, e->dtype);
  switch (e->kind) {
    case TJ_TIR_NOT: case TJ_TIR_CAST: put_exprs(c, 1, &e->unary.operand); break;
    case TJ_TIR_SELECT:
      put_exprs(c, 1, &e->select.cond);
      put_exprs(c, 1, &e->select.true_value);
      put_exprs(c, 1, &e->select.false_value);
      break;
    case TJ_TIR_BUFFER_LOAD:
      tj_strbuf_append(sb, " ");
      put_buffer_ref(c, e->load.buffer);
      put_exprs(c, e->load.n_indices, e->load.indices);
      break;
    case TJ_TIR_LET:
      put_exprs(c, 1, &e->let.var);
      put_exprs(c, 1, &e->let.value);
      put_exprs(c, 1, &e->let.body);
      break;
    case TJ_TIR_CALL:
      tj_strbuf_append(sb, " ");
      tj_strbuf_append(sb, e->call.op);
      put_exprs(c, e->call.n_args, e->call.args);
      break;
    case TJ_TIR_RAMP:
      put_exprs(c, 1, &e->ramp.base);
      put_exprs(c, 1, &e->ramp.stride);
      break;
    case TJ_TIR_BROADCAST: put_exprs(c, 1, &e->broadcast.value); break;
    default:
      put_exprs(c, 1, &e->binary.a);
      put_exprs(c, 1, &e->binary.b);
      break;
  }
  tj_strbuf_append(sb, ")");
}

static void put_stmt(text_ctx_t *c, const tj_tir_stmt_t *s) {
  tj_strbuf_t *sb = &c->sb;
  if (!s) {
    tj_strbuf_append(sb, " ()");
    return;
  }
  tj_strbuf_append(sb, " ");
  switch (s->kind) {
    case TJ_TIR_FOR:
      tj_strbuf_append(sb, "(for");
      put_int(c, (int)s->loop.kind);
      put_exprs(c, 1, &s->loop.var);
      put_exprs(c, 1, &s->loop.min);
      put_exprs(c, 1, &s->loop.extent);
      put_stmt(c, s->loop.body);
      break;
    case TJ_TIR_BUFFER_STORE:
      tj_strbuf_append(sb, "(store ");
      put_buffer_ref(c, s->store.buffer);
      put_exprs(c, s->store.n_indices, s->store.indices);
      put_exprs(c, 1, &s->store.value);
      break;
    case TJ_TIR_LET_STMT:
      tj_strbuf_append(sb, "(let");
      put_exprs(c, 1, &s->let.var);
      put_exprs(c, 1, &s->let.value);
      put_stmt(c, s->let.body);
      break;
    case TJ_TIR_IF:
      tj_strbuf_append(sb, "(if");
      put_exprs(c, 1, &s->if_.cond);
      put_stmt(c, s->if_.then_stmt);
      put_stmt(c, s->if_.else_stmt);
      break;
    case TJ_TIR_SEQ:
      tj_strbuf_append(sb, "(seq");
      for (int i = 0; i < s->seq.n; i++) put_stmt(c, s->seq.stmts[i]);
      break;
    case TJ_TIR_EVALUATE:
      tj_strbuf_append(sb, "(eval");
      put_exprs(c, 1, &s->evaluate.value);
      break;
    case TJ_TIR_ALLOCATE:
      tj_strbuf_append(sb, "(alloc ");
      put_buffer_decl(c, s->allocate.buffer);
      put_stmt(c, s->allocate.body);
      break;
    default:
      tj_strbuf_append(sb, "(stmt"); /* not in lowered TIR */
      put_int(c, (int)s->kind);
      break;
  }
  tj_strbuf_append(sb, ")");
}

char *tj_jit_kernel_text(const tj_prim_func_t *f) {
  text_ctx_t c = {.ids = TJ_PTR_MAP(NULL)};
  tj_strbuf_init(&c.sb);
  tj_strbuf_append(&c.sb, "(prim_func (params");
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    tj_strbuf_append(&c.sb, " ");
    if (b) {
      var_id(&c, f->params[i]);
      put_buffer_decl(&c, b);
    } else {
      put_expr(&c, f->params[i]);
    }
  }
  tj_strbuf_append(&c.sb, ")");
  if (tj_attrs_get_int(f->attrs, TJ_ATTR_FP_CONTRACT, 0)) tj_strbuf_append(&c.sb, " (fp_contract)");
  put_stmt(&c, f->body);
  tj_strbuf_append(&c.sb, ")");
  tj_map_free(&c.ids);
  if (c.failed) {
    tj_strbuf_free(&c.sb);
    return NULL;
  }
  return tj_strbuf_take(&c.sb);
}
