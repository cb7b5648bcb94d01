/* relax.einsum (TVM's src/relax/op/tensor/linear_algebra.cc): operands in a tuple, the
 * `subscripts` equation; output shape from topi's InferEinsumShape (a label's extent is
 * the broadcast of the extents it meets). kNever (no policy registered). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ir/op/common.h"
#include "ir/op/einsum.h"

static bool add_label(char *s, char c) {
  size_t n = strlen(s);
  if (n >= TJ_EINSUM_MAX_LABELS) return false;
  s[n] = c;
  s[n + 1] = '\0';
  return true;
}

/* Without "->" the output is every label seen once, sorted (FromString's label_counts). */
static void implicit_output(tj_einsum_eq_t *q) {
  int count[256] = {0};
  for (int i = 0; i < q->n_inputs; i++)
    for (const char *p = q->inputs[i]; *p; p++) count[(unsigned char)*p]++;
  for (int c = 0; c < 256; c++)
    if (count[c] == 1) add_label(q->output, (char)c);
}

static void reduce_labels(tj_einsum_eq_t *q) {
  bool seen[256] = {false};
  for (int i = 0; i < q->n_inputs; i++)
    for (const char *p = q->inputs[i]; *p; p++) seen[(unsigned char)*p] = true;
  for (const char *p = q->output; *p; p++) seen[(unsigned char)*p] = false;
  for (int c = 0; c < 256; c++)
    if (seen[c]) add_label(q->reduce, (char)c);
}

bool tj_einsum_parse(const char *eq, tj_einsum_eq_t *q, char *err, int n) {
  memset(q, 0, sizeof *q);
  char cur[TJ_EINSUM_MAX_LABELS + 1] = "";
  bool arrow = false;
  for (const char *p = eq; *p; p++) {
    if (*p == ' ') continue;
    if (*p == '-' || *p == ',') {
      if (*p == '-' && (arrow || p[1] != '>')) return snprintf(err, (size_t)n, "invalid arrow in '%s'", eq), false;
      if (*p == ',' && arrow) return snprintf(err, (size_t)n, "',' after '->' in '%s'", eq), false;
      if (q->n_inputs == TJ_EINSUM_MAX_OPERANDS)
        return snprintf(err, (size_t)n, "more than %d operands", TJ_EINSUM_MAX_OPERANDS), false;
      memcpy(q->inputs[q->n_inputs++], cur, sizeof cur);
      cur[0] = '\0';
      if (*p == '-') arrow = true, p++;
      continue;
    }
    if (*p == '.')
      return snprintf(err, (size_t)n, "ellipsis ('...') in '%s' is not supported by tvmjit; spell the dimensions "
                      "out with letters", eq), false;
    if (!isalpha((unsigned char)*p))
      return snprintf(err, (size_t)n, "invalid character '%c' in equation '%s'", *p, eq), false;
    if (!add_label(cur, *p)) return snprintf(err, (size_t)n, "more than %d labels in one subscript", TJ_EINSUM_MAX_LABELS), false;
  }
  if (arrow) {
    memcpy(q->output, cur, sizeof cur);
  } else {
    if (q->n_inputs == TJ_EINSUM_MAX_OPERANDS)
      return snprintf(err, (size_t)n, "more than %d operands", TJ_EINSUM_MAX_OPERANDS), false;
    memcpy(q->inputs[q->n_inputs++], cur, sizeof cur);
    implicit_output(q);
  }
  for (const char *p = q->output; *p; p++) {
    bool found = false;
    for (int i = 0; i < q->n_inputs && !found; i++) found = strchr(q->inputs[i], *p) != NULL;
    if (!found) return snprintf(err, (size_t)n, "output label '%c' appears in no input of '%s'", *p, eq), false;
  }
  reduce_labels(q);
  return true;
}

static const char *const einsum_attrs[] = {"subscripts", NULL};
static const char *const einsum_args[] = {"operands"};

static tj_status_t *normalize_einsum(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("einsum", given, einsum_attrs));
  const char *s;
  TJ_RETURN_IF_ERROR(tj_op_read_str("einsum", given, "subscripts", NULL, &s));
  if (!s) return tj_op_error("einsum: the subscripts attribute is required, e.g. subscripts=\"ij,jk->ik\"");
  tj_einsum_eq_t q;
  char err[160];
  if (!tj_einsum_parse(s, &q, err, sizeof err)) return tj_op_error("einsum: %s", err);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "subscripts", tj_attr_str(tj_arena_strdup(arena, s)));
  return tj_attr_builder_finish(arena, &b, out);
}

/* Broadcast of two extents as topi's GetBroadcastedExtent (NULL: they cannot). */
static const tj_tir_expr_t *broadcast_extent(const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  int64_t x, y;
  bool ka = tj_tir_is_const_int(a, &x), kb = tj_tir_is_const_int(b, &y);
  if (ka && kb) return x == y || y == 1 ? a : x == 1 ? b : NULL;
  return ka ? b : a;
}

static tj_status_t *label_extents(const tj_einsum_eq_t *q, const tj_sinfo_t *t, const tj_tir_expr_t **ext) {
  for (int i = 0; i < q->n_inputs; i++) {
    const tj_sinfo_t *f = t->tuple.fields[i];
    if ((int)strlen(q->inputs[i]) != f->tensor.ndim)
      return tj_op_error("einsum: operand %d is %d-d but its subscript '%s' has %d labels", i, f->tensor.ndim,
                         q->inputs[i], (int)strlen(q->inputs[i]));
    for (int d = 0; d < f->tensor.ndim; d++) {
      unsigned char c = (unsigned char)q->inputs[i][d];
      const tj_tir_expr_t *e = ext[c] ? broadcast_extent(ext[c], f->tensor.shape[d]) : f->tensor.shape[d];
      if (!e) return tj_op_error("einsum: label '%c' has extents that cannot be broadcast (operand %d, dim %d)", c, i, d);
      ext[c] = e;
    }
  }
  return NULL;
}

static tj_status_t *infer_einsum(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *t = call->call.args[0]->sinfo;
  if (!t || t->kind != TJ_SINFO_TUPLE)
    return tj_op_error("einsum: the operands must be a tuple of tensors, e.g. R.einsum((x, y), \"ij,jk->ik\")");
  tj_einsum_eq_t q;
  char err[160];
  const tj_attr_value_t *sv = tj_attrs_get(call->call.attrs, "subscripts");
  if (!sv || sv->kind != TJ_ATTR_STR || !tj_einsum_parse(sv->s, &q, err, sizeof err))
    return tj_op_error("einsum: bad subscripts");
  if (q.n_inputs != t->tuple.n)
    return tj_op_error("einsum: the equation has %d operands but %d tensors are given", q.n_inputs, t->tuple.n);
  tj_dtype_t dt = {0};
  char b0[TJ_DTYPE_BUFSIZE], b1[TJ_DTYPE_BUFSIZE];
  bool shapes = true;
  for (int i = 0; i < t->tuple.n; i++) {
    const tj_sinfo_t *f = t->tuple.fields[i];
    if (!tj_sinfo_is_tensor(f)) return tj_op_error("einsum: operand %d is not a tensor", i);
    if (i > 0 && !tj_dtype_eq(dt, f->tensor.dtype))
      return tj_op_error("einsum: operand %d is %s but operand 0 is %s; all must have the same dtype", i,
                         tj_dtype_str(f->tensor.dtype, b0), tj_dtype_str(dt, b1));
    dt = f->tensor.dtype;
    shapes &= f->tensor.ndim >= 0 && (f->tensor.ndim == 0 || f->tensor.shape);
  }
  int nout = (int)strlen(q.output);
  const char *vdev = t->tuple.n ? t->tuple.fields[0]->tensor.vdevice : NULL;
  if (!shapes) return *out = tj_op_tensor_sinfo(ctx->arena, dt, nout, NULL, vdev), NULL;
  const tj_tir_expr_t *ext[256] = {NULL}, *shape[TJ_EINSUM_MAX_LABELS];
  TJ_RETURN_IF_ERROR(label_extents(&q, t, ext));
  for (int i = 0; i < nout; i++) shape[i] = ext[(unsigned char)q.output[i]];
  *out = tj_op_tensor_sinfo(ctx->arena, dt, nout, shape, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "einsum: out of memory");
}

const tj_op_def_t tj_op_einsum = {
    .name = "relax.einsum", .script_name = "R.einsum", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_einsum, .infer = infer_einsum,
    .arg_names = einsum_args, .positional_attrs = einsum_attrs, .dtypes = "any (all operands alike)",
    .notes = "letters only: an ellipsis ('...') is rejected; accumulates in the operand dtype as topi.einsum",
};
