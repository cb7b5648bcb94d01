/* An executable: compiled kernels, the list of calls that runs Relax `main`, and a
 * static memory plan. Built by jit/ (or by tests with interpreter kernels); run by the
 * executor. Immutable once built, so tj_executable_run may be called from several
 * threads at once: each run gets its own intermediate storage. */
#ifndef TJ_RUNTIME_EXECUTABLE_H
#define TJ_RUNTIME_EXECUTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernel.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"
#include "support/status.h"

typedef enum tj_value_kind {
  TJ_VALUE_INPUT,        /* a parameter of main; `index` = parameter position */
  TJ_VALUE_CONSTANT,     /* data in const_data */
  TJ_VALUE_INTERMEDIATE, /* lives in the per-run workspace at `offset` */
  TJ_VALUE_OUTPUT,       /* returned to the caller; `index` = output position */
  TJ_VALUE_VIEW,         /* bytes [offset, offset + nbytes) of the value `index` (added before it):
                          * a run of channels of a tensor that one call of a channel group
                          * writes (jit/compile.c); it keeps that value live where it is used */
} tj_value_kind_t;

typedef struct tj_value_desc {
  const char *name;  /* the Relax var name, for messages and --print-memory-plan */
  tj_dtype_t dtype;
  int ndim;
  int64_t shape[TJ_MAX_NDIM];
  tj_value_kind_t kind;
  int index;
  size_t offset;     /* INTERMEDIATE: byte offset in the workspace (64-byte aligned); VIEW: in its value */
  size_t nbytes;
  const void *const_data;
} tj_value_desc_t;

typedef struct tj_call {
  int kernel;
  int n_args;
  const int *args;          /* value ids, one per buffer parameter */
  const int64_t *scalars;   /* n_scalars values of the kernel */
  const char *binding;      /* the Relax binding name, for messages */
} tj_call_t;

typedef struct tj_executable tj_executable_t;

/* ---- building (used by jit/ and tests) ---- */
tj_status_t *tj_executable_create(tj_executable_t **out_exe);
void tj_executable_free(tj_executable_t *exe);
/* Adds a kernel (runtime/kernel.h: the call convention) and prepares its cif; returns
 * its id in *out_id. The executable does
 * not own `fn`'s code (the JIT does); `owner` is released by tj_executable_free through
 * `release` (may be NULL). */
tj_status_t *tj_executable_add_kernel(tj_executable_t *exe, const char *name, void (*fn)(void), int n_buffers,
                                      int n_scalars, int *out_id);
/* Copies `desc` (and its name). `nbytes` and `offset` are computed here (a non-zero
 * nbytes must match dtype and shape). A constant's `const_data` is borrowed: it must
 * outlive the executable (pass it to tj_executable_own to have it freed with it). */
tj_status_t *tj_executable_add_value(tj_executable_t *exe, const tj_value_desc_t *desc, int *out_id);
tj_status_t *tj_executable_add_call(tj_executable_t *exe, int kernel, int n_args, const int *args,
                                    const int64_t *scalars, const char *binding);
/* Keeps `resource` alive as long as the executable and releases it at free. */
tj_status_t *tj_executable_own(tj_executable_t *exe, void *resource, void (*release)(void *));
/* Makes output `position` a fresh copy of value `value` (an input, constant or
 * intermediate, or an OUTPUT value already returned at another position), so that
 * `return data` or `return (x, x)` never hands the caller aliased memory. Values of
 * kind TJ_VALUE_OUTPUT define their own position through `index`. */
tj_status_t *tj_executable_set_output(tj_executable_t *exe, int position, int value);
/* Plans intermediate storage by liveness (values whose lifetimes do not overlap share
 * bytes) once all calls are added. */
tj_status_t *tj_executable_plan_memory(tj_executable_t *exe);

/* The pool that parallel loops of the kernels run on during tj_executable_run (set as
 * the running thread's current pool for the run); NULL (the default) leaves the
 * caller's current pool. Not owned. Set it before the executable is shared. */
void tj_executable_set_thread_pool(tj_executable_t *exe, tj_thread_pool_t *pool);

/* ---- inspection ---- */
int tj_executable_num_inputs(const tj_executable_t *exe);
int tj_executable_num_outputs(const tj_executable_t *exe);
const tj_value_desc_t *tj_executable_input(const tj_executable_t *exe, int i);
const tj_value_desc_t *tj_executable_output(const tj_executable_t *exe, int i);
/* Value `id` as added (with its planned offset), or NULL for a bad id. */
const tj_value_desc_t *tj_executable_value(const tj_executable_t *exe, int id);
int tj_executable_num_values(const tj_executable_t *exe);
int tj_executable_num_calls(const tj_executable_t *exe);
int tj_executable_num_kernels(const tj_executable_t *exe);
size_t tj_executable_workspace_bytes(const tj_executable_t *exe);
size_t tj_executable_unplanned_bytes(const tj_executable_t *exe);
/* Run states (workspace and pointer tables) allocated so far. A finished run leaves its
 * state for the next one, so calls one after another make one; overlapping calls make
 * one each; a failed run frees its state. For tests. */
long tj_executable_run_states_made(const tj_executable_t *exe);
/* Human-readable memory plan (each intermediate's slot, total vs unplanned); the caller
 * frees it with tj_free. NULL when out of memory. */
char *tj_executable_memory_plan_text(const tj_executable_t *exe);

/* ---- running ---- */
/* Checks each input's dtype and shape (message names the parameter, expected and
 * given), allocates outputs (caller frees each *out_outputs[i] with tj_tensor_free)
 * and runs the calls in order. The workspace of the last finished run is reused, so a
 * call after the first allocates only its outputs (tj_executable_run_into: nothing). A kernel whose temporary storage cannot be allocated
 * stops the run with an out-of-memory status naming its call. Thread-safe. */
tj_status_t *tj_executable_run(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs,
                               int n_outputs, tj_tensor_t **out_outputs);
/* The same, with a monotonic clock around each call: call_ms[c] receives call c's
 * wall time in milliseconds (num_calls entries; NULL: no clock, as tj_executable_run). */
tj_status_t *tj_executable_run_timed(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs,
                                     int n_outputs, tj_tensor_t **out_outputs, double *call_ms);
/* The same, writing output position o into dest[o] (the caller's storage, borrowed: its
 * dtype and shape must be the output's, its data dense row-major) instead of allocating:
 * out_outputs is not used and may be NULL. A destination that overlaps an input gives
 * unspecified results. */
tj_status_t *tj_executable_run_into(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs,
                                    int n_outputs, const tj_tensor_t *const *dest, tj_tensor_t **out_outputs,
                                    double *call_ms);
/* The kernel that call c runs (its PrimFunc's name), NULL when c is out of range. */
const char *tj_executable_call_kernel(const tj_executable_t *exe, int c);

#endif
