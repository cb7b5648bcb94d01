/* The allocation and VM operators of TVM's src/relax/op/op.cc (python/tvm/relax/op/
 * builtin, memory, vm): relax.builtin.alloc_tensor and stop_lift_params, relax.memory.*
 * (alloc_storage, alloc_tensor, kill_storage, kill_tensor) and relax.vm.* (alloc_storage,
 * alloc_tensor, kill_object, call_tir_dyn). TVM's lowering passes (StaticPlanBlockMemory,
 * VMBuiltinLower) introduce them; a script may also write them. They parse, infer, verify
 * and print with TVM's meaning; none has a legalization, and tvmjit's executor plans its
 * own memory, so a function that calls one is not run (the compiler reports the op as
 * unsupported).
 *
 * Their arguments are Relax exprs, not attrs (TVM passes dtype as a DataTypeImm, device
 * indices and offsets as PrimValues, scopes as StringImms); complete_args does what TVM's
 * Python constructors do: strings become DataTypeImm/StringImm and defaults are filled. */
#include <string.h>

#include "ir/op/common.h"
#include "ir/sinfo.h"

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory"); }

/* A dtype argument written as a string becomes a DataTypeImm. */
static tj_status_t *dtype_arg(const tj_infer_ctx_t *ctx, const char *op, const tj_rx_expr_t **arg) {
  if (!*arg || (*arg)->kind != TJ_RX_STRING_IMM) return NULL;
  tj_dtype_t dt;
  if (!tj_dtype_parse((*arg)->string_imm, &dt))
    return tj_op_error("%s: dtype \"%s\" is not a data type such as \"float32\"", op, (*arg)->string_imm);
  return (*arg = tj_rx_dtype_imm(ctx->arena, dt)) ? NULL : oom();
}

/* A missing storage scope is "global", TVM's default. */
static tj_status_t *scope_arg(const tj_infer_ctx_t *ctx, int *n_args, const tj_rx_expr_t **args, int i) {
  if (*n_args <= i) *n_args = i + 1;
  if (args[i]) return NULL;
  return (args[i] = tj_rx_string_imm(ctx->arena, "global")) ? NULL : oom();
}

static tj_status_t *complete_builtin_alloc_tensor(const tj_infer_ctx_t *ctx, int *n_args, const tj_rx_expr_t **args) {
  if (*n_args < 3) return NULL; /* the count check names what is missing */
  TJ_RETURN_IF_ERROR(dtype_arg(ctx, "alloc_tensor", &args[1]));
  return scope_arg(ctx, n_args, args, 3);
}

static tj_status_t *complete_memory_alloc_storage(const tj_infer_ctx_t *ctx, int *n_args, const tj_rx_expr_t **args) {
  return *n_args == 4 ? dtype_arg(ctx, "alloc_storage", &args[3]) : NULL;
}

static tj_status_t *complete_vm_alloc_storage(const tj_infer_ctx_t *ctx, int *n_args, const tj_rx_expr_t **args) {
  if (*n_args < 3) return NULL;
  TJ_RETURN_IF_ERROR(dtype_arg(ctx, "alloc_storage", &args[2]));
  return scope_arg(ctx, n_args, args, 3);
}

static tj_status_t *complete_alloc_tensor_in_storage(const tj_infer_ctx_t *ctx, int *n_args,
                                                     const tj_rx_expr_t **args) {
  return *n_args == 4 ? dtype_arg(ctx, "alloc_tensor", &args[3]) : NULL;
}

/* ---------------- struct info ---------------- */

static tj_dtype_t dtype_of_arg(const tj_rx_expr_t *call, int i) {
  const tj_rx_expr_t *a = call->call.args[i];
  return a->kind == TJ_RX_DATA_TYPE_IMM ? a->dtype_imm : (tj_dtype_t){0};
}

static tj_status_t *expect_kind(const char *op, const tj_rx_expr_t *call, int i, tj_rx_expr_kind_t kind, const char *what) {
  if (call->call.args[i]->kind == kind) return NULL;
  return tj_op_error("%s: argument %d must be %s", op, i, what);
}

/* A tensor whose shape is the shape argument `i`: its values when known, else its ndim. */
static tj_status_t *tensor_of_shape_arg(const tj_infer_ctx_t *ctx, const char *op, const tj_rx_expr_t *call, int i,
                                        tj_dtype_t dtype, const tj_sinfo_t **out) {
  const tj_rx_expr_t *shape = call->call.args[i];
  const tj_sinfo_t *s = shape->sinfo;
  const tj_sinfo_t *r;
  if (shape->kind == TJ_RX_SHAPE_EXPR) r = tj_sinfo_tensor(ctx->arena, dtype, shape->shape_expr.n, shape->shape_expr.values);
  else if (s && s->kind == TJ_SINFO_SHAPE) r = tj_sinfo_tensor(ctx->arena, dtype, s->shape.ndim, s->shape.values);
  else return tj_op_error("%s: the shape (argument %d) must be a shape", op, i);
  return (*out = r) ? NULL : oom();
}

/* TVM's InferStructInfoAllocateTensor: the shape must be a ShapeExpr, the dtype a DataTypeImm. */
static tj_status_t *infer_builtin_alloc_tensor(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                               const tj_sinfo_t **out) {
  TJ_RETURN_IF_ERROR(expect_kind("alloc_tensor", call, 0, TJ_RX_SHAPE_EXPR, "a shape expression (R.shape([...]))"));
  TJ_RETURN_IF_ERROR(expect_kind("alloc_tensor", call, 1, TJ_RX_DATA_TYPE_IMM, "a dtype"));
  return tensor_of_shape_arg(ctx, "alloc_tensor", call, 0, dtype_of_arg(call, 1), out);
}

/* TVM's InferStructInfoMemAllocTensor: the shape is any expr of shape struct info. */
static tj_status_t *infer_memory_alloc_tensor(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                              const tj_sinfo_t **out) {
  return tensor_of_shape_arg(ctx, "alloc_tensor", call, 2, dtype_of_arg(call, 3), out);
}

/* TVM's InferStructInfoVMAllocTensor: as memory.alloc_tensor, any-ndim when the shape is unknown. */
static tj_status_t *infer_vm_alloc_tensor(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                          const tj_sinfo_t **out) {
  const tj_sinfo_t *s = call->call.args[2]->sinfo;
  if (call->call.args[2]->kind == TJ_RX_SHAPE_EXPR || (s && s->kind == TJ_SINFO_SHAPE))
    return tensor_of_shape_arg(ctx, "alloc_tensor", call, 2, dtype_of_arg(call, 3), out);
  return (*out = tj_sinfo_tensor(ctx->arena, dtype_of_arg(call, 3), -1, NULL)) ? NULL : oom();
}

static tj_status_t *infer_object(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)call;
  return (*out = tj_sinfo_object(ctx->arena)) ? NULL : oom();
}

static tj_status_t *infer_void(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)call;
  return (*out = tj_sinfo_tuple(ctx->arena, 0, NULL)) ? NULL : oom();
}

/* TVM's InferStructInfoUnaryArith<false>: the input tensor's struct info. */
static tj_status_t *infer_stop_lift_params(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                           const tj_sinfo_t **out) {
  (void)ctx;
  return tj_op_tensor_arg("stop_lift_params", call, 0, "x", out);
}

/* ---------------- the ops ---------------- */

static const char *const builtin_alloc_tensor_args[] = {"shape", "dtype", "runtime_device_index", "storage_scope"};

const tj_op_def_t tj_op_builtin_alloc_tensor = {
    .name = "relax.builtin.alloc_tensor", .script_name = "R.builtin.alloc_tensor", .min_args = 4, .max_args = 4,
    .mp_policy = TJ_MP_NEVER, .infer = infer_builtin_alloc_tensor, .arg_names = builtin_alloc_tensor_args,
    .complete_args = complete_builtin_alloc_tensor, .notes = "parses and verifies; not run",
};

static const char *const stop_lift_params_args[] = {"x"};

const tj_op_def_t tj_op_builtin_stop_lift_params = {
    .name = "relax.builtin.stop_lift_params", .script_name = "R.builtin.stop_lift_params", .min_args = 1,
    .max_args = 1, .mp_policy = TJ_MP_NEVER, .infer = infer_stop_lift_params, .arg_names = stop_lift_params_args,
    .notes = "parses and verifies; not run",
};

static const char *const memory_alloc_storage_args[] = {"size", "virtual_device_index", "storage_scope", "dtype"};

const tj_op_def_t tj_op_memory_alloc_storage = {
    .name = "relax.memory.alloc_storage", .script_name = "R.memory.alloc_storage", .min_args = 4, .max_args = 4,
    .mp_policy = TJ_MP_NEVER, .infer = infer_object, .arg_names = memory_alloc_storage_args,
    .complete_args = complete_memory_alloc_storage, .notes = "parses and verifies; not run",
};

static const char *const alloc_tensor_in_storage_args[] = {"storage", "offset", "shape", "dtype"};

const tj_op_def_t tj_op_memory_alloc_tensor = {
    .name = "relax.memory.alloc_tensor", .script_name = "R.memory.alloc_tensor", .min_args = 4, .max_args = 4,
    .mp_policy = TJ_MP_NEVER, .infer = infer_memory_alloc_tensor, .arg_names = alloc_tensor_in_storage_args,
    .complete_args = complete_alloc_tensor_in_storage, .notes = "parses and verifies; not run",
};

static const char *const kill_storage_args[] = {"storage"};

const tj_op_def_t tj_op_memory_kill_storage = {
    .name = "relax.memory.kill_storage", .script_name = "R.memory.kill_storage", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .infer = infer_void, .arg_names = kill_storage_args,
    .notes = "parses and verifies; not run",
};

static const char *const kill_tensor_args[] = {"tensor"};

const tj_op_def_t tj_op_memory_kill_tensor = {
    .name = "relax.memory.kill_tensor", .script_name = "R.memory.kill_tensor", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .infer = infer_void, .arg_names = kill_tensor_args,
    .notes = "parses and verifies; not run",
};

/* Python's order (MakeVMAllocStorage): size, runtime_device_index, dtype, storage_scope. */
static const char *const vm_alloc_storage_args[] = {"size", "runtime_device_index", "dtype", "storage_scope"};

const tj_op_def_t tj_op_vm_alloc_storage = {
    .name = "relax.vm.alloc_storage", .script_name = "R.vm.alloc_storage", .min_args = 4, .max_args = 4,
    .mp_policy = TJ_MP_NEVER, .infer = infer_object, .arg_names = vm_alloc_storage_args,
    .complete_args = complete_vm_alloc_storage, .notes = "parses and verifies; not run",
};

const tj_op_def_t tj_op_vm_alloc_tensor = {
    .name = "relax.vm.alloc_tensor", .script_name = "R.vm.alloc_tensor", .min_args = 4, .max_args = 4,
    .mp_policy = TJ_MP_NEVER, .infer = infer_vm_alloc_tensor, .arg_names = alloc_tensor_in_storage_args,
    .complete_args = complete_alloc_tensor_in_storage, .notes = "parses and verifies; not run",
};

static const char *const kill_object_args[] = {"obj"};

const tj_op_def_t tj_op_vm_kill_object = {
    .name = "relax.vm.kill_object", .script_name = "R.vm.kill_object", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .infer = infer_void, .arg_names = kill_object_args,
    .notes = "parses and verifies; not run",
};

static const char *const call_tir_dyn_args[] = {"func", "args"};

const tj_op_def_t tj_op_vm_call_tir_dyn = {
    .name = "relax.vm.call_tir_dyn", .script_name = "R.vm.call_tir_dyn", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_NEVER, .infer = infer_void, .arg_names = call_tir_dyn_args,
    .notes = "parses and verifies; not run",
};
