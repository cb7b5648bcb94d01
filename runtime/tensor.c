#include "runtime/tensor.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/alloc.h"

/* Shared validation of new/wrap: rank in range, dims non-negative, size fits ptrdiff_t. */
static tj_status_t *tj_tensor_check_shape(tj_dtype_t dtype, int ndim, const int64_t *shape, size_t *out_nbytes) {
  char dbuf[TJ_DTYPE_BUFSIZE];
  if (ndim < 0 || ndim > TJ_MAX_NDIM)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tensor rank %d is out of range: tvmjit supports 0 to %d dimensions",
                         ndim, TJ_MAX_NDIM);
  if (ndim > 0 && !shape)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tensor of rank %d needs a shape", ndim);
  size_t elem = tj_dtype_bytes(dtype);
  if (elem == 0 || dtype.code == TJ_DT_HANDLE)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "a tensor cannot hold elements of type %s",
                         tj_dtype_str(dtype, dbuf));
  size_t total = elem;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tensor dimension %d is negative (%lld)", i,
                           (long long)shape[i]);
    /* Bounded by PTRDIFF_MAX, not SIZE_MAX: every partial product must also fit the
     * int64_t of tj_tensor_numel, even when a later dimension is 0 (an empty
     * (1, 12, 4e17, 3, 0) array from a .npy overflowed it). */
    if (shape[i] > 0 && total > (size_t)PTRDIFF_MAX / (uint64_t)shape[i])
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tensor of type %s with %d dimensions is too large to address",
                           tj_dtype_str(dtype, dbuf), ndim);
    total *= (size_t)shape[i];
  }
  *out_nbytes = total;
  return NULL;
}

static tj_tensor_t *tj_tensor_shell(tj_dtype_t dtype, int ndim, const int64_t *shape) {
  tj_tensor_t *t = tj_calloc(1, sizeof *t);
  if (!t) return NULL;
  t->dtype = dtype;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  return t;
}

tj_status_t *tj_tensor_new(tj_dtype_t dtype, int ndim, const int64_t *shape, tj_tensor_t **out_tensor) {
  TJ_RETURN_IF_ERROR(tj_tensor_new_uninit(dtype, ndim, shape, out_tensor));
  memset((*out_tensor)->data, 0, tj_tensor_nbytes(*out_tensor));
  return NULL;
}

tj_status_t *tj_tensor_new_uninit(tj_dtype_t dtype, int ndim, const int64_t *shape, tj_tensor_t **out_tensor) {
  size_t nbytes;
  TJ_RETURN_IF_ERROR(tj_tensor_check_shape(dtype, ndim, shape, &nbytes));
  tj_tensor_t *t = tj_tensor_shell(dtype, ndim, shape);
  if (!t) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor");
  t->data = tj_aligned_alloc(nbytes);
  if (!t->data) {
    tj_free(t);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes of tensor data", nbytes);
  }
  t->owns_data = true;
  *out_tensor = t;
  return NULL;
}

tj_status_t *tj_tensor_wrap(tj_dtype_t dtype, int ndim, const int64_t *shape, void *data, tj_tensor_t **out_tensor) {
  size_t nbytes;
  TJ_RETURN_IF_ERROR(tj_tensor_check_shape(dtype, ndim, shape, &nbytes));
  if (!data && nbytes > 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "cannot wrap a NULL pointer as a tensor of %zu bytes", nbytes);
  tj_tensor_t *t = tj_tensor_shell(dtype, ndim, shape);
  if (!t) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor");
  t->data = data;
  t->owns_data = false;
  *out_tensor = t;
  return NULL;
}

void tj_tensor_free(tj_tensor_t *t) {
  if (!t) return;
  if (t->owns_data) tj_aligned_free(t->data);
  tj_free(t);
}

void tj_tensor_free_uncached(tj_tensor_t *t) {
  if (!t) return;
  if (t->owns_data) tj_free(t->data); /* tj_aligned_alloc's blocks are malloc's */
  tj_free(t);
}

int64_t tj_tensor_numel(const tj_tensor_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

size_t tj_tensor_nbytes(const tj_tensor_t *t) { return (size_t)tj_tensor_numel(t) * tj_dtype_bytes(t->dtype); }

const char *tj_tensor_type_str(tj_dtype_t dtype, int ndim, const int64_t *shape, char *buf, size_t len) {
  if (!buf || len == 0) return buf;
  char dbuf[TJ_DTYPE_BUFSIZE];
  size_t pos = 0;
  int n = snprintf(buf, len, "%s[", tj_dtype_str(dtype, dbuf));
  for (int i = 0; i < ndim && n >= 0; i++) {
    pos += (size_t)n;
    if (pos >= len) return buf;
    n = snprintf(buf + pos, len - pos, "%s%lld", i ? ", " : "", (long long)shape[i]);
  }
  if (n < 0) return buf;
  pos += (size_t)n;
  if (pos < len) snprintf(buf + pos, len - pos, "]");
  return buf;
}

/* Element access by dtype. Integers go through int64/uint64 so that values beyond 2^53
 * are converted by the C rules rather than reinterpreted. */
double tj_tensor_get_f64(const tj_tensor_t *t, int64_t i) {
  const char *p = t->data;
  switch ((tj_dtype_code_t)t->dtype.code) {
    case TJ_DT_BFLOAT: return tj_bfloat_to_float(((const uint16_t *)p)[i]);
    case TJ_DT_FLOAT:
      if (t->dtype.bits == 16) return tj_half_to_float(((const uint16_t *)p)[i]);
      if (t->dtype.bits == 32) return ((const float *)p)[i];
      return ((const double *)p)[i];
    case TJ_DT_INT:
      switch (t->dtype.bits) {
        case 8: return ((const int8_t *)p)[i];
        case 16: return ((const int16_t *)p)[i];
        case 32: return ((const int32_t *)p)[i];
        default: return (double)((const int64_t *)p)[i];
      }
    case TJ_DT_UINT:
      switch (t->dtype.bits) {
        case 8: return ((const uint8_t *)p)[i];
        case 16: return ((const uint16_t *)p)[i];
        case 32: return ((const uint32_t *)p)[i];
        default: return (double)((const uint64_t *)p)[i];
      }
    case TJ_DT_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

/* Float-to-integer conversion that never hits C's undefined behaviour: NaN becomes 0 and
 * out-of-range values saturate. */
static int64_t tj_tensor_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

static uint64_t tj_tensor_to_u64(double v) {
  if (v != v || v <= 0) return 0;
  if (v >= 18446744073709551615.0) return UINT64_MAX;
  return (uint64_t)v;
}

void tj_tensor_set_f64(tj_tensor_t *t, int64_t i, double v) {
  char *p = t->data;
  switch ((tj_dtype_code_t)t->dtype.code) {
    case TJ_DT_BFLOAT: ((uint16_t *)p)[i] = tj_float_to_bfloat((float)v); return;
    case TJ_DT_FLOAT:
      if (t->dtype.bits == 16) ((uint16_t *)p)[i] = tj_float_to_half((float)v);
      else if (t->dtype.bits == 32) ((float *)p)[i] = (float)v;
      else ((double *)p)[i] = v;
      return;
    case TJ_DT_INT: {
      int64_t x = tj_tensor_to_i64(v);
      switch (t->dtype.bits) {
        case 8: ((int8_t *)p)[i] = (int8_t)x; return;
        case 16: ((int16_t *)p)[i] = (int16_t)x; return;
        case 32: ((int32_t *)p)[i] = (int32_t)x; return;
        default: ((int64_t *)p)[i] = x; return;
      }
    }
    case TJ_DT_UINT: {
      uint64_t x = tj_tensor_to_u64(v);
      switch (t->dtype.bits) {
        case 8: ((uint8_t *)p)[i] = (uint8_t)x; return;
        case 16: ((uint16_t *)p)[i] = (uint16_t)x; return;
        case 32: ((uint32_t *)p)[i] = (uint32_t)x; return;
        default: ((uint64_t *)p)[i] = x; return;
      }
    }
    case TJ_DT_BOOL: ((uint8_t *)p)[i] = v != 0; return;
    default: return;
  }
}
