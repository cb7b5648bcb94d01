/* What the compile driver (jit/compile.c) collects while it walks a Relax main: values,
 * kernel slots and calls. Shared with the rewrites of that list that live in files of
 * their own (jit/channel_groups.c). Internal to the JIT. */
#ifndef TVMJIT_JIT_BUILD_H
#define TVMJIT_JIT_BUILD_H

#include "jit/internal.h"
#include "transforms/tir/lower.h"
#include "transforms/tir/shape_params.h"

/* A kernel's key, in the disk cache and in the table: the un-lowered PrimFunc (after
 * its shape vars became params) and its name, the schedule options, and the rest of
 * tj_jit_cache_key_parts. Made before lowering, so a kernel found by it is not lowered:
 * that saved 10-13 ms of ResNet-18's ~75 ms start from the cache (Ice Lake host). */
typedef struct cache_key {
  char schedule[256];
  char func[33];
  uint8_t hash[16];
} cache_key_t;

/* A kernel that was in neither cache while main was walked: compiled with the others
 * after the walk, on several threads (emit_parallel.c), then stored, added to the JIT
 * and given to the slots that wait for it. */
typedef struct pending_kernel {
  tj_arena_t *arena; /* holds `lowered` */
  const tj_prim_func_t *lowered;
  const char *name;
  uint64_t hash;
  char *text, *symbol;
  cache_key_t key;
  tj_tir_prepacks_t prepacks;
  tj_jit_kernel_t k; /* once compiled */
} pending_kernel_t;

typedef struct kernel_queue {
  pending_kernel_t *items;
  int n, cap;
} kernel_queue_t;

/* A Relax var's runtime value(s): one id, or several for a tuple. */
typedef struct var_values {
  const tj_rx_expr_t *var;
  int n;
  int *ids;
} var_values_t;

typedef struct pending_call {
  int kernel; /* index into build_t.kernels */
  int n_args;
  int *args;
  int n_out;  /* the last n_out args are the call's results */
  /* call_tir's tir_vars, evaluated with the binding when the executable is made; the
   * kernel's shape params follow them, read off the arguments' shapes */
  int n_tir_vars;
  const tj_tir_expr_t *const *tir_vars;
  const char *binding;
} pending_call_t;

/* How many row counts a row-independent kernel is compiled at (chunk_rows in
 * jit/compile.c). */
enum { N_CHUNKS = 3 };

typedef struct kernel_slot {
  const char *name;
  const tj_prim_func_t *prim;
  uint64_t struct_hash;
  tj_jit_kernel_t k;
  int pending; /* >= 0: k's code is queue item `pending`, compiled after the walk */
  int n_shape; /* trailing scalars that are shape vars (shape_params.h) */
  tj_tir_shape_param_t shape[TJ_TIR_MAX_SHAPE_PARAMS];
  /* > 0: row-independent along its one shape var (row_split.h), compiled at
   * chunk_rows[i] rows as chunk[i] (scalar: the row offset); `k` is then only the ABI
   * the call is checked against and has no code. */
  int n_chunks;
  tj_jit_kernel_t chunk[N_CHUNKS];
  int64_t rows[N_CHUNKS]; /* of chunk[i], largest first, the last 1 */
  /* Bit p: param p is a constant at the calls this slot serves; the weights among them
   * that the kernel reads packed, made once per executable (runtime/prepack.h). Their
   * buffers follow the call's own in k's ABI. */
  uint64_t constant_params;
  tj_tir_prepacks_t prepacks;
} kernel_slot_t;

typedef struct build {
  tj_jit_t *jit;
  const tj_module_t *mod;
  const char *function;
  const tj_jit_options_t *opts; /* may be NULL; the caller's, only while compiling */
  bool borrow_constants;        /* opts->borrow_constants, kept for every instantiate */
  int opt_level;
  bool schedule;
  LLVMTargetMachineRef tm;
  tj_jit_stats_t acc;
  kernel_queue_t queue; /* kernels to compile once main is walked */
  tj_arena_t *arena; /* everything below */
  tj_value_desc_t *values;
  int n_values, cap_values;
  var_values_t *vars;
  int n_vars, cap_vars;
  pending_call_t *calls;
  int n_calls, cap_calls;
  kernel_slot_t *kernels;
  int n_kernels, cap_kernels;
  /* Outputs that are a copy of a value (a parameter or constant returned directly, or a
   * value returned twice): output position i copies value copies[i], -1 = none. */
  int *copies;
  int n_copies, cap_copies;
  /* Symbolic values: shapes[i] is value i's struct info when its shape has vars (NULL:
   * static), evaluated with the binding of main's vars (sig_vars) per executable. */
  const tj_sinfo_t **shapes;
  int cap_shapes;
  int n_sig_vars;
  const tj_tir_expr_t *sig_vars[TJ_TIR_MAX_SHAPE_PARAMS];
} build_t;

/* A value for a tensor struct info (`what` names it in errors); a symbolic shape is
 * evaluated per binding. */
tj_status_t *tj_build_new_value(build_t *bd, const char *name, const tj_sinfo_t *sinfo, tj_value_kind_t kind, int index,
                                const char *what, int *out_id);

/* The kernel slot for PrimFunc f named `callee`, compiled or queued unless an equal one
 * with the same constant params exists. */
tj_status_t *tj_build_kernel_for_prim(build_t *bd, const char *callee, const tj_prim_func_t *f,
                                      uint64_t constant_params, int *out_slot);

/* Every pair of calls that can run by channel groups does (jit/channel_groups.c). */
tj_status_t *tj_build_group_channels(build_t *bd);

#endif
