/* tvmjit.h: the one public header of tvmjit, a JIT runtime for TVMScript tensor programs.
 *
 * Tutorial: load a model, make tensors, call, read the result, free.
 *
 *   #include <tvmjit.h>
 *
 *   tvmjit_instance_t *inst = NULL;
 *   tvmjit_module_t *mod = NULL;
 *   tvmjit_function_t *main_fn = NULL;
 *   tvmjit_status_t *st = tvmjit_instance_create(NULL, &inst);   // LLVM, threads, cache
 *
 *   tvmjit_module_options_t opts;
 *   tvmjit_module_options_init(&opts);       // passes "default", no mixed precision
 *   if (!st) st = tvmjit_module_load_file(inst, "model.rx", &opts, &mod);  // parse+passes+JIT
 *   if (!st) st = tvmjit_module_get_function(mod, "main", &main_fn);
 *
 *   int64_t shape[4] = {16, 32, 32, 16};
 *   tvmjit_tensor_t *x = NULL;               // wraps my_data without copying
 *   if (!st) st = tvmjit_tensor_wrap(TVMJIT_FLOAT16, 4, shape, my_data, &x);
 *   ...                                      // one tensor per parameter of main
 *   tvmjit_tensor_t *y = NULL;
 *   if (!st) st = tvmjit_function_call(main_fn, n_inputs, inputs, 1, &y);
 *   if (!st) use(tvmjit_tensor_data(y));     // y owns its memory
 *
 *   if (st) { fprintf(stderr, "%s\n", tvmjit_status_message(st)); tvmjit_status_free(st); }
 *   tvmjit_tensor_free(y); tvmjit_tensor_free(x);
 *   tvmjit_module_free(mod);                 // also frees main_fn
 *   tvmjit_instance_free(inst);
 *
 * Conventions: every fallible call returns a status, NULL on success; a non-NULL status
 * belongs to the caller, who frees it with tvmjit_status_free. Output parameters
 * (out_*) are written only on success. The library never prints and never aborts on bad
 * input. Thread safety is stated on each handle.
 */
#ifndef TVMJIT_H
#define TVMJIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <dlpack/dlpack.h> /* Debian: libdlpack-dev; the DLPack ABI (0.6 and later) */

#ifdef __cplusplus
extern "C" {
#endif

/* libtvmjit is compiled with hidden visibility: what this header declares is what it
 * exports (a host compiled with -fvisibility=hidden still links against it). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---------------------------------------------------------------- status */

typedef enum tvmjit_code {
  TVMJIT_OK = 0,
  TVMJIT_INVALID_ARGUMENT = 1, /* bad value from the caller: shape, dtype, option */
  TVMJIT_PARSE_ERROR = 2,      /* malformed TVMScript */
  TVMJIT_VERIFY_ERROR = 3,     /* ill-formed module, or a pass broke it */
  TVMJIT_UNSUPPORTED = 4,      /* valid input tvmjit does not handle */
  TVMJIT_IO_ERROR = 5,         /* file system or file format */
  TVMJIT_OUT_OF_MEMORY = 6,
  TVMJIT_NOT_FOUND = 7,        /* unknown function, parameter or key */
  TVMJIT_INTERNAL = 8,         /* a bug in tvmjit: please report it */
  TVMJIT_COMPILE_ERROR = 9,    /* LLVM failed */
} tvmjit_code_t;

/* An error: a code, a message and the context each layer added. */
typedef struct tj_status tvmjit_status_t;

tvmjit_code_t tvmjit_status_code(const tvmjit_status_t *status);
/* The full message, outermost context first. Owned by the status. */
const char *tvmjit_status_message(tvmjit_status_t *status);
void tvmjit_status_free(tvmjit_status_t *status);

/* ---------------------------------------------------------------- tensors */

typedef enum tvmjit_dtype {
  TVMJIT_FLOAT16, TVMJIT_FLOAT32, TVMJIT_FLOAT64,
  TVMJIT_INT8, TVMJIT_INT16, TVMJIT_INT32, TVMJIT_INT64,
  TVMJIT_UINT8, TVMJIT_UINT16, TVMJIT_UINT32, TVMJIT_UINT64,
  TVMJIT_BOOL,
  TVMJIT_BFLOAT16, /* float32's upper 16 bits; .npy files hold it as '<V2' (ml_dtypes' convention) */
} tvmjit_dtype_t;

#define TVMJIT_MAX_NDIM 8

/* A dense row-major array. Either owns 64-byte aligned memory (tvmjit_tensor_new, and
 * every output) or borrows the caller's memory (tvmjit_tensor_wrap: no copy; the caller
 * keeps it alive and frees it). A tensor may be read by several threads at once. */
typedef struct tvmjit_tensor tvmjit_tensor_t;

/* A new zero-filled tensor. */
tvmjit_status_t *tvmjit_tensor_new(tvmjit_dtype_t dtype, int ndim, const int64_t *shape,
                                   tvmjit_tensor_t **out_tensor);
/* Wraps `data` (ndim <= TVMJIT_MAX_NDIM; at least numel * element-size bytes). */
tvmjit_status_t *tvmjit_tensor_wrap(tvmjit_dtype_t dtype, int ndim, const int64_t *shape, void *data,
                                    tvmjit_tensor_t **out_tensor);
void tvmjit_tensor_free(tvmjit_tensor_t *tensor); /* NULL is fine; never frees borrowed data */
tvmjit_dtype_t tvmjit_tensor_dtype(const tvmjit_tensor_t *tensor);
int tvmjit_tensor_ndim(const tvmjit_tensor_t *tensor);
const int64_t *tvmjit_tensor_shape(const tvmjit_tensor_t *tensor);
void *tvmjit_tensor_data(const tvmjit_tensor_t *tensor);
size_t tvmjit_tensor_nbytes(const tvmjit_tensor_t *tensor);
/* Copies src into dst (same shape), converting each element to dst's dtype
 * (float16 rounds to nearest even). */
tvmjit_status_t *tvmjit_tensor_convert(const tvmjit_tensor_t *src, tvmjit_tensor_t *dst);
/* TVM's name of a dtype ("float16") and the reverse (returns 0 on success, -1 if unknown). */
const char *tvmjit_dtype_name(tvmjit_dtype_t dtype);
int tvmjit_dtype_from_name(const char *name, tvmjit_dtype_t *out_dtype);

/* .npy files (format 1-3, little-endian, C order) and .npz archives. Writes go to a
 * temporary file renamed into place: a failure never leaves a half-written file. */
tvmjit_status_t *tvmjit_tensor_load_npy(const char *path, tvmjit_tensor_t **out_tensor);
tvmjit_status_t *tvmjit_tensor_save_npy(const char *path, const tvmjit_tensor_t *tensor);
/* Loads every member of an .npz; names are the member names without ".npy". The arrays
 * and names belong to the caller: free with tvmjit_npz_free. */
tvmjit_status_t *tvmjit_npz_load(const char *path, int *out_count, char ***out_names,
                                 tvmjit_tensor_t ***out_tensors);
void tvmjit_npz_free(int count, char **names, tvmjit_tensor_t **tensors);
tvmjit_status_t *tvmjit_npz_save(const char *path, int count, const char *const *names,
                                 const tvmjit_tensor_t *const *tensors);

/* ---------------------------------------------------------------- instance */

/* Process-level state: LLVM initialisation, the JIT, the thread pool, the kernel cache.
 * Create one per process (or per independent user) and share it; loading modules into
 * one instance from several threads is safe. */
typedef struct tvmjit_instance tvmjit_instance_t;

/* The kernel cache. Compiled kernels are kept on disk, one object file per kernel, so
 * a second process that loads the same model compiles nothing. The key covers the
 * lowered kernel, the CPU (name and every feature), LLVM, this build of tvmjit and every
 * codegen option; entries are checked (magic, version, key, length, checksum) and a bad
 * one is reported as a warning, recompiled and replaced. Processes may share a directory.
 *
 * SECURITY: the cache directory holds machine code that is run without further checks.
 * It is trusted code: whoever can write it can run code in your process. Keep it
 * private (tvmjit creates it with mode 0700) and never point it at a directory others
 * can write. */
typedef struct tvmjit_cache_options {
  int enable;            /* default 1; 0 when the environment has TVMJIT_CACHE=0 */
  /* NULL: TVMJIT_CACHE_DIR, else $XDG_CACHE_HOME/tvmjit, else $HOME/.cache/tvmjit. */
  const char *directory;
  /* Size cap; least recently used entries go first. 0: TVMJIT_CACHE_MAX_BYTES (a byte
   * count, or with K, M, G: "512M"), else 256 MiB. */
  uint64_t max_bytes;
} tvmjit_cache_options_t;

typedef struct tvmjit_instance_options {
  int num_threads;        /* threads for parallel loops, caller included (1..1024);
                             0 = TVMJIT_NUM_THREADS or the number of cores. Results are
                             the same bits for any count. */
  tvmjit_cache_options_t cache;
} tvmjit_instance_options_t;

void tvmjit_instance_options_init(tvmjit_instance_options_t *options);
/* options may be NULL (defaults). */
tvmjit_status_t *tvmjit_instance_create(const tvmjit_instance_options_t *options,
                                        tvmjit_instance_t **out_instance);
/* Free after every module of the instance. */
void tvmjit_instance_free(tvmjit_instance_t *instance);

/* ---------------------------------------------------------------- modules */

typedef enum tvmjit_message_kind { TVMJIT_MESSAGE_WARNING, TVMJIT_MESSAGE_DEBUG } tvmjit_message_kind_t;

typedef struct tvmjit_module_options {
  /* Pass pipeline: "default" (DispatchSortScan, LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR),
   * "none", or a list in TVM's spelling: "ToMixedPrecision(out_dtype=\"float16\"),LegalizeOps". */
  const char *passes;
  /* NULL, "float32" or "float16": put ToMixedPrecision(out_dtype=...) first; "bfloat16":
   * ToMixedPrecision(out_dtype="float32", storage_dtype="bfloat16") (bfloat16 storage). */
  const char *mixed_precision;
  int verify_each;               /* run the verifier after every pass (default 1) */
  /* Instruments: where to print IR (NULL = nowhere) and which. */
  FILE *ir_dump;
  const char *print_ir_before;   /* a pass name, or NULL */
  const char *print_ir_after;    /* a pass name, or NULL */
  int print_ir_after_all;
  int time_passes;               /* collect per-pass times, see tvmjit_module_report */
  int no_schedule;               /* 1: kernels as plain loops, without the CPU schedule */
  /* 0 (default): float32/float64 arithmetic as TVM compiles it: a * b + c may become
   * one fused multiply-add (TVM's LLVM target uses FP-op fusion "fast"), and a conv's
   * reduction may take its terms in another order (as TVM's schedules reorder reduction
   * loops). Results are within rounding of the IR's operations, not bit-identical to
   * them. 1: every float32/float64 operation rounded on its own, in the IR's order, as
   * the reference interpreter computes (about 1.3x slower convs). float16 is always
   * computed exactly as written: its rounding after every operation is its semantics. */
  int strict_float;
  /* Kernel cache (see tvmjit_cache_options_t). use_cache = 0 compiles every kernel of
   * this module, without reading or writing the instance's cache (default 1).
   * cache_debug adds a message per kernel lookup: hit or miss, the key and a hash of
   * each key component (default: 1 when TVMJIT_CACHE_DEBUG=1). */
  int use_cache;
  int cache_debug;
  /* Messages (warnings such as a damaged cache entry, and debug lines) also go to
   * on_message when set, as they happen, possibly from the thread that compiles; they
   * are always collected in tvmjit_module_messages. The library never prints. */
  void (*on_message)(void *user, tvmjit_message_kind_t kind, const char *text);
  void *message_user;
  /* LLVM optimisation level of the kernels, 0..3 (default 2). 0 compiles several times
   * faster and runs slower, with the same results bit for bit (no fast-math at any level). */
  int opt_level;
  /* BindParams + FoldConstant (TVM's passes): the tensors bind_params[i] become
   * constants of `main` in place of its parameters named bind_param_names[i] (which
   * leave main's signature), and every computation on constants alone is folded at
   * load time (e.g. a transposed weight, batch_norm's scale). The default pipeline is
   * then LegalizeOps, AnnotateTIROpPattern, FoldConstant, DeadCodeElimination, FuseOps,
   * FuseTIR; an explicit `passes` list gets BindParams in front and should name
   * FoldConstant. The tensors are borrowed, not copied (weights are most of a model's
   * memory): keep them alive and unchanged until the module is freed, except those
   * tvmjit_module_uses_tensor reports unused once the module is loaded, or hand them to
   * the module (tvmjit_module_adopt_tensor), which frees each when it can. A name
   * that is no parameter of main is an error, unless bind_params_skip_unknown is 1.
   * Not for functions with symbolic dims (loading fails naming the function). */
  int n_bind_params;
  const char *const *bind_param_names;
  const tvmjit_tensor_t *const *bind_params;
  int bind_params_skip_unknown;
  /* 1: kernels repack their constant (bound or folded) weights on every call, as they
   * do weights passed as inputs, instead of reading a copy packed once when the function
   * is compiled (default 0; for comparison: the outputs are the same bits either way).
   * Last, so that hosts mirroring this struct (python/tvmjit/_capi.py) keep its layout. */
  int no_prepack;
} tvmjit_module_options_t;

/* A compiled model: the IR after the passes, the JIT'd kernels and executables of its
 * functions. Looking functions up and calling them from several threads at once is
 * safe; free the module only after every call has returned. */
typedef struct tvmjit_module tvmjit_module_t;

void tvmjit_module_options_init(tvmjit_module_options_t *options);
/* Reads, verifies, runs the passes and compiles. options may be NULL (defaults). */
tvmjit_status_t *tvmjit_module_load_file(tvmjit_instance_t *instance, const char *path,
                                         const tvmjit_module_options_t *options, tvmjit_module_t **out_module);
/* The same from text in memory; `name` is used in messages (like a file name). */
tvmjit_status_t *tvmjit_module_load_string(tvmjit_instance_t *instance, const char *name, const char *text,
                                           size_t length, const tvmjit_module_options_t *options,
                                           tvmjit_module_t **out_module);
void tvmjit_module_free(tvmjit_module_t *module);
/* 1 when the loaded module still reads `tensor`'s data: a bind_params tensor that
 * became a constant of the compiled model. 0 for one the passes only computed other
 * constants from (a weight that FoldConstant transposed) or that is no parameter: the
 * caller may free such a tensor once the module is loaded (the `tvmjit` command does, so
 * a BERT layer's 28 MB of untransposed weights are not held beside the transposed
 * ones). Thread-safe. */
int tvmjit_module_uses_tensor(const tvmjit_module_t *module, const tvmjit_tensor_t *tensor);
/* Hands a bind_params tensor to the module, for a caller that holds its weights only to
 * bind them (the `tvmjit` command does): the module frees it as soon as nothing needs
 * its data. That is at once when the module does not read it (as
 * tvmjit_module_uses_tensor); when the first function compiled reads it only through
 * copies packed for its kernels, right after those are made (so a start never holds
 * each weight twice: ResNet-18's peak RSS drops by about the size of its weights);
 * else with the module. A function compiled later that reads a freed weight fails
 * (TVMJIT_UNSUPPORTED): load the module again, or do not hand its weights over. On
 * success the caller must not use or free the tensor any more; on an error (a NULL
 * module, out of memory) it stays the caller's. Call it before the module's first function is looked
 * up, from the thread that loaded it. */
tvmjit_status_t *tvmjit_module_adopt_tensor(tvmjit_module_t *module, tvmjit_tensor_t *tensor);
/* Pass times and compile statistics (kernels compiled, cache hits, milliseconds) as text
 * owned by the module. */
const char *tvmjit_module_report(const tvmjit_module_t *module);
/* Warnings ("warning: ..." lines) and debug lines ("cache: ...") of compiling the
 * module's functions so far, one per line; text owned by the module. A warning never
 * means a wrong result: the run went on correctly without the cache. */
const char *tvmjit_module_messages(const tvmjit_module_t *module);

/* ---------------------------------------------------------------- cache maintenance */

typedef struct tvmjit_cache_info {
  char directory[4096];
  int exists;              /* the directory exists */
  int entries;             /* cached kernels */
  uint64_t bytes;          /* their total size */
  int runs;                /* runs counted below (the last 20 that used the cache) */
  uint64_t hits, misses;   /* kernel lookups of those runs */
} tvmjit_cache_info_t;

/* directory NULL: the default (see tvmjit_cache_options_t). */
tvmjit_status_t *tvmjit_cache_info(const char *directory, tvmjit_cache_info_t *out_info);
/* Removes every cached kernel and the run log (nothing else in the directory). */
tvmjit_status_t *tvmjit_cache_clear(const char *directory, int *out_removed, uint64_t *out_bytes);

/* ---------------------------------------------------------------- functions */

/* A Relax function of a module, ready to call. Owned by the module (do not free).
 * tvmjit_function_call is thread-safe and reentrant.
 *
 * Symbolic shapes: a function whose parameters have symbolic dims (`R.Tensor(("n", 4))`)
 * is compiled on its first call with each distinct set of values of its vars, which the
 * call binds from the inputs' shapes; later calls with those values compile nothing.
 * Its input/output info shows symbolic dims as -1; the outputs of a call carry their
 * shapes. Inputs that disagree ("n" 3 in one input, 4 in another) are
 * TVMJIT_INVALID_ARGUMENT naming the input, the dim and the var. */
typedef struct tvmjit_function tvmjit_function_t;

tvmjit_status_t *tvmjit_module_get_function(tvmjit_module_t *module, const char *name,
                                            tvmjit_function_t **out_function);
int tvmjit_function_num_inputs(const tvmjit_function_t *function);
int tvmjit_function_num_outputs(const tvmjit_function_t *function);
/* Name, dtype and shape of input i (pointers owned by the function; -1 for a symbolic
 * dim). Returns -1 when i is out of range. */
int tvmjit_function_input_info(const tvmjit_function_t *function, int i, const char **out_name,
                               tvmjit_dtype_t *out_dtype, int *out_ndim, const int64_t **out_shape);
int tvmjit_function_output_info(const tvmjit_function_t *function, int i, tvmjit_dtype_t *out_dtype,
                                int *out_ndim, const int64_t **out_shape);
/* The static memory plan: each intermediate's slot and size, and the total against
 * the unplanned total. Text owned by the function. */
const char *tvmjit_function_memory_plan(const tvmjit_function_t *function);
/* Floating-point operations of one call, counted from the TIR of its kernels after the
 * passes: float +, -, *, /, min, max, compares and math intrinsics count 1 per lane (a
 * multiply-add is 2), per loop iteration; index arithmetic, casts, loads and stores
 * count nothing. -1 when unknown (symbolic loop extents, operators not lowered). */
double tvmjit_function_flops(const tvmjit_function_t *function);
/* Runs the function. inputs: one tensor per parameter, in order; each is checked against
 * the parameter's dtype and shape. out_outputs receives n_outputs new tensors owned by
 * the caller. */
tvmjit_status_t *tvmjit_function_call(const tvmjit_function_t *function, int n_inputs,
                                      const tvmjit_tensor_t *const *inputs, int n_outputs,
                                      tvmjit_tensor_t **out_outputs);
/* Profiling: the kernel calls one call of the function makes, in order, and a call
 * that also times each of them. */
int tvmjit_function_num_kernel_calls(const tvmjit_function_t *function);
/* The name of the kernel (PrimFunc) that kernel call i runs; NULL when i is out of range. */
const char *tvmjit_function_kernel_call_name(const tvmjit_function_t *function, int i);
/* tvmjit_function_call that also writes kernel call i's wall time in milliseconds to
 * out_call_ms[i] (room for tvmjit_function_num_kernel_calls entries). */
tvmjit_status_t *tvmjit_function_call_profiled(const tvmjit_function_t *function, int n_inputs,
                                               const tvmjit_tensor_t *const *inputs, int n_outputs,
                                               tvmjit_tensor_t **out_outputs, double *out_call_ms);

/* ---------------------------------------------------------------- DLPack */

/* Tensors that hosts already have (PyTorch, numpy, other runtimes) in and out without a
 * copy, through DLPack's stable ABI. Only CPU memory (kDLCPU, kDLCUDAHost) is accepted. */

/* DLPack's code for bool (kDLBool of DLPack 0.8; dlpack.h 0.6 does not name it). */
#define TVMJIT_DL_BOOL 6

/* The DLPack dtype of a tvmjit dtype (bool: TVMJIT_DL_BOOL, 8 bits, as PyTorch and
 * numpy export it). */
DLDataType tvmjit_dtype_to_dlpack(tvmjit_dtype_t dtype);
/* 0, or -1 when tvmjit has no such dtype (complex, lanes > 1). kDLBfloat/16 is TVMJIT_BFLOAT16. Accepts bool
 * as TVMJIT_DL_BOOL/8 and as TVM's kDLUInt/1. */
int tvmjit_dtype_from_dlpack(DLDataType dl, tvmjit_dtype_t *out_dtype);

/* Hands tensor over as a DLManagedTensor (no copy): on success tensor belongs to
 * *out_managed, whose deleter frees it; the caller must not free tensor. */
tvmjit_status_t *tvmjit_tensor_to_dlpack(tvmjit_tensor_t *tensor, DLManagedTensor **out_managed);
/* A tensor over a DLPack producer's dense CPU memory (no copy). On success the tensor
 * owns `managed` and calls its deleter in tvmjit_tensor_free; on error the caller keeps
 * it. Strided (non-dense) tensors are refused here: tvmjit_function_call_dlpack
 * accepts them. */
tvmjit_status_t *tvmjit_tensor_from_dlpack(DLManagedTensor *managed, tvmjit_tensor_t **out_tensor);

/* The position of the parameter called `name`, -1 when there is none. */
int tvmjit_function_input_index(const tvmjit_function_t *function, const char *name);
/* Runs the function on DLPack tensors. input_names: NULL to pass the inputs in
 * parameter order, else inputs[i] binds the parameter named input_names[i] (each
 * parameter exactly once, any order). Dense inputs are read in place; strided ones
 * (any strides, e.g. a transposed view) are copied to dense memory first. outputs:
 * the caller's tensors, one per result, with the result's dtype and shape: dense ones
 * are written in place (no allocation, no copy), strided ones through a copy. */
tvmjit_status_t *tvmjit_function_call_dlpack(const tvmjit_function_t *function, int n_inputs,
                                             const char *const *input_names, const DLTensor *const *inputs,
                                             int n_outputs, DLTensor *const *outputs);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* TVMJIT_H */
