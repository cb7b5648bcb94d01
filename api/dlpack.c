/* DLPack in and out of the public API: dtype mapping, tensors handed over without a
 * copy, and calls on DLTensors (by name, strided, into the caller's outputs). */
#include <string.h>

#include "api/handles.h"
#include "support/alloc.h"

/* tvmjit dtypes in the order of tvmjit_dtype_t, as DLPack (code, bits). */
static const DLDataType dl_dtypes[] = {
    {kDLFloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLInt, 8, 1},  {kDLInt, 16, 1},  {kDLInt, 32, 1},
    {kDLInt, 64, 1},   {kDLUInt, 8, 1},   {kDLUInt, 16, 1},  {kDLUInt, 32, 1}, {kDLUInt, 64, 1}, {TVMJIT_DL_BOOL, 8, 1},
    {kDLBfloat, 16, 1},
};
enum { N_DL_DTYPES = sizeof dl_dtypes / sizeof dl_dtypes[0] };

DLDataType tvmjit_dtype_to_dlpack(tvmjit_dtype_t dtype) {
  return (unsigned)dtype < N_DL_DTYPES ? dl_dtypes[dtype] : (DLDataType){kDLOpaqueHandle, 0, 0};
}

int tvmjit_dtype_from_dlpack(DLDataType dl, tvmjit_dtype_t *out_dtype) {
  if (dl.lanes != 1) return -1;
  if (dl.code == kDLUInt && dl.bits == 1) return *out_dtype = TVMJIT_BOOL, 0; /* TVM's bool */
  for (int i = 0; i < N_DL_DTYPES; i++)
    if (dl_dtypes[i].code == dl.code && dl_dtypes[i].bits == dl.bits) return *out_dtype = (tvmjit_dtype_t)i, 0;
  return -1;
}

/* ---------------------------------------------------------------- checking a DLTensor */

static const char *dl_type_str(DLDataType dl, char *buf, size_t len) {
  static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat", "complex", "bool"};
  snprintf(buf, len, "%s%u%s", dl.code < 7 ? codes[dl.code] : "code?", dl.bits, dl.lanes == 1 ? "" : "xN");
  return buf;
}

/* The DLTensor as tvmjit sees it: checked device, dtype and rank. `what` names it in
 * messages ("input 'x'", "output 0"). */
static tj_status_t *dl_check(const DLTensor *dl, const char *what, tj_dtype_t *out_dtype) {
  if (!dl) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s is NULL", what);
  if (dl->device.device_type != kDLCPU && dl->device.device_type != kDLCUDAHost)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s lives on DLPack device type %d; tvmjit runs on the CPU: copy it to "
                         "host memory first (e.g. tensor.cpu())", what, (int)dl->device.device_type);
  tvmjit_dtype_t pub;
  char buf[32];
  if (tvmjit_dtype_from_dlpack(dl->dtype, &pub) != 0 || !tj_api_internal_dtype(pub, out_dtype))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s has dtype %s, which tvmjit does not support; convert it (e.g. to "
                         "float32) first", what, dl_type_str(dl->dtype, buf, sizeof buf));
  if (dl->ndim < 0 || dl->ndim > TJ_MAX_NDIM)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s has %d dimensions; tvmjit supports at most %d", what, dl->ndim, TJ_MAX_NDIM);
  for (int i = 0; i < dl->ndim; i++)
    if (dl->shape[i] < 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: dimension %d is negative", what, i);
  return NULL;
}

static int64_t dl_numel(const DLTensor *dl) {
  int64_t n = 1;
  for (int i = 0; i < dl->ndim; i++) n *= dl->shape[i];
  return n;
}

/* Dense row-major: no strides, or strides equal to the row-major ones (dimensions of
 * extent 1 may have any stride, as PyTorch leaves them). */
static bool dl_is_dense(const DLTensor *dl) {
  if (!dl->strides || dl_numel(dl) == 0) return true;
  int64_t expect = 1;
  for (int i = dl->ndim - 1; i >= 0; i--) {
    if (dl->shape[i] != 1 && dl->strides[i] != expect) return false;
    expect *= dl->shape[i];
  }
  return true;
}

static void *dl_data(const DLTensor *dl) { return (char *)dl->data + dl->byte_offset; }

static size_t dl_elem_size(const DLTensor *dl) { return (size_t)(dl->dtype.bits + 7) / 8; } /* TVM's bool: 1 bit, 1 byte */

/* Copies the elements of an ndim-dimensional array between two layouts given by strides
 * in elements (either side may be strided). */
static void copy_strided(char *dst, const int64_t *dst_strides, const char *src, const int64_t *src_strides, int ndim,
                         const int64_t *shape, size_t elem) {
  if (ndim == 0) {
    memcpy(dst, src, elem);
    return;
  }
  if (ndim == 1 && dst_strides[0] == 1 && src_strides[0] == 1) {
    memcpy(dst, src, (size_t)shape[0] * elem);
    return;
  }
  for (int64_t i = 0; i < shape[0]; i++)
    copy_strided(dst + i * dst_strides[0] * (int64_t)elem, dst_strides + 1, src + i * src_strides[0] * (int64_t)elem,
                 src_strides + 1, ndim - 1, shape + 1, elem);
}

static void row_major_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) strides[i] = s, s *= shape[i];
}

/* A tensor with the DLTensor's contents: a view of its memory when it is dense, else a
 * dense copy. The caller frees it with tj_tensor_free. */
static tj_status_t *dl_to_tensor(const DLTensor *dl, const char *what, tj_tensor_t **out) {
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(dl_check(dl, what, &dt));
  if (!dl->data && dl_numel(dl) > 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s has no data", what);
  if (dl_is_dense(dl)) return tj_tensor_wrap(dt, dl->ndim, dl->shape, dl_data(dl), out);
  TJ_RETURN_IF_ERROR(tj_tensor_new_uninit(dt, dl->ndim, dl->shape, out));
  int64_t dense[TJ_MAX_NDIM];
  row_major_strides(dl->ndim, dl->shape, dense);
  copy_strided((*out)->data, dense, dl_data(dl), dl->strides, dl->ndim, dl->shape, dl_elem_size(dl));
  return NULL;
}

/* ---------------------------------------------------------------- tensors */

static void managed_delete(DLManagedTensor *managed) {
  tvmjit_tensor_free(managed->manager_ctx);
  tj_free(managed);
}

tvmjit_status_t *tvmjit_tensor_to_dlpack(tvmjit_tensor_t *tensor, DLManagedTensor **out_managed) {
  if (!tensor || !out_managed) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_tensor_to_dlpack: NULL argument");
  DLManagedTensor *m = tj_calloc(1, sizeof *m);
  if (!m) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory exporting a tensor to DLPack");
  tj_tensor_t *t = tensor->t;
  m->dl_tensor = (DLTensor){.data = t->data, .device = {kDLCPU, 0}, .ndim = t->ndim,
                            .dtype = tvmjit_dtype_to_dlpack(tvmjit_tensor_dtype(tensor)), .shape = t->shape};
  m->manager_ctx = tensor;
  m->deleter = managed_delete;
  *out_managed = m;
  return NULL;
}

tvmjit_status_t *tvmjit_tensor_from_dlpack(DLManagedTensor *managed, tvmjit_tensor_t **out_tensor) {
  if (!managed || !out_tensor) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_tensor_from_dlpack: NULL argument");
  const DLTensor *dl = &managed->dl_tensor;
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(dl_check(dl, "the DLPack tensor", &dt));
  if (!dl_is_dense(dl))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "the DLPack tensor is strided; make it contiguous first, or pass it to "
                         "tvmjit_function_call_dlpack, which copies it");
  if (!dl->data && dl_numel(dl) > 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "the DLPack tensor has no data");
  tj_tensor_t *t;
  TJ_RETURN_IF_ERROR(tj_tensor_wrap(dt, dl->ndim, dl->shape, dl_data(dl), &t));
  TJ_RETURN_IF_ERROR(tj_api_wrap_tensor(t, out_tensor));
  (*out_tensor)->managed = managed;
  return NULL;
}

/* ---------------------------------------------------------------- calls */

int tvmjit_function_input_index(const tvmjit_function_t *function, const char *name) {
  for (int i = 0; name && i < function->n_inputs; i++)
    if (strcmp(function->inputs[i].name, name) == 0) return i;
  return -1;
}

/* slots[p] = the DLTensor for parameter p, by position or by name. */
static tj_status_t *order_inputs(const tvmjit_function_t *f, int n, const char *const *names, const DLTensor *const *inputs,
                                 const DLTensor **slots) {
  int want = f->n_inputs;
  if (n != want) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "'%s' takes %d input(s), %d given", f->name, want, n);
  for (int i = 0; i < n; i++) {
    int p = names ? tvmjit_function_input_index(f, names[i]) : i;
    if (p < 0) return tj_status_new(TJ_ERR_NOT_FOUND, "'%s' has no parameter '%s'", f->name, names[i] ? names[i] : "(NULL)");
    if (slots[p]) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "parameter '%s' is given twice", names[i]);
    if (!inputs[i]) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input %d is NULL", i);
    slots[p] = inputs[i];
  }
  return NULL;
}

/* Where the run writes output o: the caller's memory when it is dense, else a dense
 * temporary copied back after the run (*needs_copy). */
static tj_status_t *bind_output(const tj_executable_t *exe, int o, DLTensor *dl, tj_tensor_t **out, bool *needs_copy) {
  char what[32];
  snprintf(what, sizeof what, "output %d", o);
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(dl_check(dl, what, &dt));
  const tj_value_desc_t *d = tj_executable_output(exe, o);
  *needs_copy = !dl_is_dense(dl);
  if (!*needs_copy) {
    if (!dl->data && dl_numel(dl) > 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s has no data", what);
    return tj_tensor_wrap(dt, dl->ndim, dl->shape, dl_data(dl), out); /* the run checks dtype and shape */
  }
  return tj_tensor_new_uninit(d->dtype, d->ndim, d->shape, out);
}

static void copy_back(const tj_tensor_t *t, DLTensor *dl) {
  int64_t dense[TJ_MAX_NDIM];
  row_major_strides(t->ndim, t->shape, dense);
  copy_strided(dl_data(dl), dl->strides, t->data, dense, t->ndim, t->shape, dl_elem_size(dl));
}

static tj_status_t *call_dlpack(const tvmjit_function_t *f, int n_in, const char *const *names, const DLTensor *const *inputs,
                                int n_out, DLTensor *const *outputs, tj_tensor_t **in, tj_tensor_t **out, bool *copy) {
  const DLTensor **slots = tj_calloc((size_t)n_in + 1, sizeof *slots);
  tj_status_t *st = slots ? order_inputs(f, n_in, names, inputs, slots) : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int p = 0; p < n_in && !st; p++) {
    char what[160];
    snprintf(what, sizeof what, "input '%s'", f->inputs[p].name);
    st = dl_to_tensor(slots[p], what, &in[p]);
  }
  tj_free(slots);
  int want = f->n_outputs;
  if (!st && n_out != want)
    st = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "'%s' returns %d output(s), %d destination(s) given", f->name, want, n_out);
  tj_executable_t *exe = NULL;
  if (!st) st = tj_api_function_executable(f, n_in, (const tj_tensor_t *const *)in, &exe);
  for (int o = 0; o < n_out && !st; o++) st = bind_output(exe, o, outputs[o], &out[o], &copy[o]);
  if (!st) st = tj_executable_run_into(exe, n_in, (const tj_tensor_t *const *)in, n_out, (const tj_tensor_t *const *)out, NULL, NULL);
  for (int o = 0; o < n_out && !st; o++)
    if (copy[o] && tj_tensor_nbytes(out[o]) > 0) copy_back(out[o], outputs[o]);
  return st;
}

tvmjit_status_t *tvmjit_function_call_dlpack(const tvmjit_function_t *function, int n_inputs,
                                             const char *const *input_names, const DLTensor *const *inputs,
                                             int n_outputs, DLTensor *const *outputs) {
  if (!function || n_inputs < 0 || n_outputs < 0 || (n_inputs > 0 && !inputs) || (n_outputs > 0 && !outputs))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_function_call_dlpack: NULL or negative argument");
  tj_tensor_t **in = tj_calloc((size_t)n_inputs + 1, sizeof *in);
  tj_tensor_t **out = tj_calloc((size_t)n_outputs + 1, sizeof *out);
  bool *copy = tj_calloc((size_t)n_outputs + 1, sizeof *copy);
  tj_status_t *st = in && out && copy ? call_dlpack(function, n_inputs, input_names, inputs, n_outputs, outputs, in, out, copy)
                                      : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; in && i < n_inputs; i++) tj_tensor_free(in[i]);
  for (int o = 0; out && o < n_outputs; o++) tj_tensor_free(out[o]);
  tj_free(in);
  tj_free(out);
  tj_free(copy);
  return st ? tj_status_annotate(st, "calling '%s'", function->name) : NULL;
}
