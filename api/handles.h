/* The public API's handle types, shared by the files of api/ (tvmjit.c: tensors,
 * modules, functions; dlpack.c: DLPack in and out). Not installed. */
#ifndef TJ_API_HANDLES_H
#define TJ_API_HANDLES_H

#include "runtime/executable.h"
#include "runtime/tensor.h"
#include "tvmjit.h"

struct tvmjit_tensor {
  tj_tensor_t *t;
  /* Set when the data belongs to a DLPack producer (tvmjit_tensor_from_dlpack): its
   * deleter runs when the tensor is freed. */
  DLManagedTensor *managed;
};

struct tvmjit_function {
  char *name;
  tj_executable_t *exe;
  tvmjit_dtype_t *input_dtypes, *output_dtypes; /* public dtypes, cached */
  char *memory_plan;
  double flops; /* one call's float operations, -1 when unknown */
  struct tvmjit_function *next;
};

/* A handle for t; takes t (freed when the handle cannot be made). */
tj_status_t *tj_api_wrap_tensor(tj_tensor_t *t, tvmjit_tensor_t **out);
bool tj_api_internal_dtype(tvmjit_dtype_t d, tj_dtype_t *out);

#endif
