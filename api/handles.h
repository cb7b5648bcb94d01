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

typedef struct tj_specialization tj_specialization_t;

struct tvmjit_function {
  char *name;
  tj_executable_t *exe; /* NULL for a symbolic function: see `specs` */
  /* The signature: the executable's, or a symbolic function's with -1 for symbolic dims. */
  int n_inputs, n_outputs;
  tj_value_desc_t *inputs, *outputs;
  /* A symbolic function (api/specialize.h) is compiled once per binding of its vars, on
   * the first call with those shapes; `module` owns the IR it is specialised from. */
  struct tvmjit_module *module;
  tj_specialization_t *specs;
  /* Compiled once for every size (jit.h's program): specs then hold one executable per
   * binding, made without compiling. NULL: specialised per binding (the fallback). */
  struct tj_jit_program *program;
  tvmjit_dtype_t *input_dtypes, *output_dtypes; /* public dtypes, cached */
  char *memory_plan;
  double flops; /* one call's float operations, -1 when unknown */
  struct tvmjit_function *next;
};

/* A handle for t; takes t (freed when the handle cannot be made). */
tj_status_t *tj_api_wrap_tensor(tj_tensor_t *t, tvmjit_tensor_t **out);
bool tj_api_internal_dtype(tvmjit_dtype_t d, tj_dtype_t *out);
/* The executable that runs f on these inputs: f's own, or a symbolic function's
 * specialisation to their shapes (compiled on first use). */
tj_status_t *tj_api_function_executable(const tvmjit_function_t *f, int n_inputs, const tj_tensor_t *const *inputs,
                                        tj_executable_t **out_exe);

#endif
