/* Internal to the operator registry (ir/op/): helpers the op families share. */
#ifndef TJ_IR_OP_COMMON_H
#define TJ_IR_OP_COMMON_H

#include <stdbool.h>

#include "ir/op.h"
#include "support/strbuf.h"

#define TJ_OP_MAX_ATTRS 16
#define TJ_OP_MAX_NDIM 16

tj_status_t *tj_op_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- attrs ---- */
/* Collects canonical attrs in TVM's print order. */
typedef struct tj_attr_builder {
  int n;
  const char *keys[TJ_OP_MAX_ATTRS];
  tj_attr_value_t values[TJ_OP_MAX_ATTRS];
} tj_attr_builder_t;
void tj_attr_builder_add(tj_attr_builder_t *b, const char *key, tj_attr_value_t value);
tj_status_t *tj_attr_builder_finish(tj_arena_t *arena, const tj_attr_builder_t *b, const tj_attrs_t **out);

/* Error when `given` holds a key not in `valid` (NULL-ended). */
tj_status_t *tj_op_check_attr_names(const char *op, const tj_attrs_t *given, const char *const *valid);
/* Reads an int list attr: an INT or LIST of INTs (TVM accepts `strides=1`); NONE or
 * missing gives *out_n = 0. Values land in out (at most max). */
tj_status_t *tj_op_read_ints(const char *op, const tj_attrs_t *given, const char *key, int max, int64_t *out,
                             int *out_n);
tj_status_t *tj_op_read_int(const char *op, const tj_attrs_t *given, const char *key, int64_t dflt,
                            int64_t *out);
tj_status_t *tj_op_read_bool(const char *op, const tj_attrs_t *given, const char *key, bool dflt, bool *out);
/* Adds an optional axis attr to b as TVM keeps it: None when missing or None, else one
 * int (`list` false) or a list of ints (an int becomes a one-element list), of `dtype`. */
tj_status_t *tj_op_add_optional_axes(tj_arena_t *arena, tj_attr_builder_t *b, const char *op, const tj_attrs_t *given,
                                     const char *key, bool list, tj_dtype_t dtype);
tj_status_t *tj_op_read_float(const char *op, const tj_attrs_t *given, const char *key, double dflt,
                              double *out);
tj_status_t *tj_op_read_str(const char *op, const tj_attrs_t *given, const char *key, const char *dflt,
                            const char **out);
/* STR or DTYPE; NONE, "" and "void" give void. */
tj_status_t *tj_op_read_dtype(const char *op, const tj_attrs_t *given, const char *key, tj_dtype_t *out);
tj_attr_value_t tj_op_int_list(tj_arena_t *arena, int n, const int64_t *values, tj_dtype_t item_dtype);
tj_attr_value_t tj_op_dtype_attr(tj_dtype_t dtype);
/* Reads back canonical attrs. */
int tj_op_attr_ints(const tj_attrs_t *attrs, const char *key, int64_t *out, int max);
tj_dtype_t tj_op_attr_dtype(const tj_attrs_t *attrs, const char *key);

/* ---- struct info ---- */
/* The tensor sinfo of arg i, or an error "<op>: <what> must be a tensor, got ...". */
tj_status_t *tj_op_tensor_arg(const char *op, const tj_rx_expr_t *call, int i, const char *what,
                              const tj_sinfo_t **out);
/* Appends "16x3x3x8" (symbolic dims by name) to sb. */
void tj_op_format_shape(tj_strbuf_t *sb, int ndim, const tj_tir_expr_t *const *shape);
void tj_op_format_dim(tj_strbuf_t *sb, const tj_tir_expr_t *d);
/* TVM's InferBinaryArithOpOutDtype: void if either is void, error if they differ. */
tj_status_t *tj_op_common_dtype(const char *op, tj_dtype_t a, tj_dtype_t b, tj_dtype_t *out);
/* vdevice of the first tensor arg that has one. */
const char *tj_op_vdevice(const tj_sinfo_t *a, const tj_sinfo_t *b);
const tj_sinfo_t *tj_op_tensor_sinfo(tj_arena_t *arena, tj_dtype_t dtype, int ndim,
                                     const tj_tir_expr_t *const *shape, const char *vdevice);
/* Numpy broadcasting of two shapes; *out_known false when a pair of symbolic dims
 * cannot be decided (the result then has only ndim). */
tj_status_t *tj_op_broadcast(const char *op, tj_arena_t *arena, int n0, const tj_tir_expr_t *const *s0, int n1,
                             const tj_tir_expr_t *const *s1, const tj_tir_expr_t **out_shape, bool *out_known);
/* The kAlways rebuild of conv and matmul (TVM's FInferMixedPrecision for them): the
 * same call with attr out_dtype set; no sinfo yet. NULL when out of memory. */
const tj_rx_expr_t *tj_op_mixed_set_out_dtype(tj_arena_t *arena, const tj_rx_expr_t *call, tj_dtype_t out_dtype);

/* Normalises an axis in [-ndim, ndim) to [0, ndim). */
tj_status_t *tj_op_axis(const char *op, int64_t axis, int ndim, int *out);
/* Whether `layout` is a permutation of `letters` ("NHWC" of "NCHW", "OIW" of "OIW"). */
bool tj_op_layout_is(const char *layout, const char *letters);
/* Where `letter` sits in `layout` (it must be there: check with tj_op_layout_is). */
int tj_op_layout_pos(const char *layout, char letter);

/* Attr normalisation shared with the gradient ops (ir/op/grad.c): Pool2DAttrs as the
 * 2-d pools keep them (pooling.c), NLLLossAttrs as nll_loss does (nn_loss.c); `op`
 * names the op in messages. */
tj_status_t *tj_op_normalize_pool2d_attrs(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                          const tj_attrs_t **out);
tj_status_t *tj_op_normalize_nll_attrs(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                       const tj_attrs_t **out);
/* ScatterCollectiveAttrs and their inference, shared by R.ccl.scatter_from_worker0
 * and R.dist.redistribute_replica_to_shard (ccl.c). */
tj_status_t *tj_op_normalize_scatter_attrs(const char *op, bool axis_required, tj_arena_t *arena,
                                           const tj_attrs_t *given, const tj_attrs_t **out);
tj_status_t *tj_op_infer_scatter(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, bool check_axis0,
                                 const tj_sinfo_t **out);

#endif
