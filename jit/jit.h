/* Everything jit/ offers: lowered TIR -> LLVM IR (LLVM-C only), optimisation for the
 * host CPU, object emission, the ORC LLJIT engine, and the compile driver that turns a
 * Relax `main` made of call_tir bindings into an executable.
 *
 * Compile path, in steps a disk cache can slot between:
 *   PrimFunc --tj_tir_lower--> lowered TIR --tj_jit_emit_object--> object bytes
 *            (+ canonical text, the cache key)  --tj_jit_add_object--> code address
 *
 * Kernels follow the runtime's kernel ABI (runtime/kernel.h): the C signature and the
 * helpers they call back, including how a failed allocation is counted. */
#ifndef TJ_JIT_JIT_H
#define TJ_JIT_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/module.h"
#include "runtime/executable.h"
#include "support/status.h"
#include "transforms/tir/schedule.h"

typedef struct tj_jit tj_jit_t;

/* Counters; times are wall-clock milliseconds. */
typedef struct tj_jit_stats {
  int kernels_requested; /* PrimFunc compilations asked for (one per distinct callee per module) */
  int kernels_compiled;  /* of which actually compiled (not found in the in-memory table) */
  int kernels_loaded;    /* of which loaded from the object cache instead */
  double lower_ms;       /* TIR lowering */
  double codegen_ms;     /* LLVM IR build + verify */
  double optimize_ms;    /* LLVMRunPasses */
  double emit_ms;        /* object emission */
  double link_ms;        /* add object + lookup */
  double total_ms;       /* the whole tj_jit_compile_module call(s) */
} tj_jit_stats_t;

/* Where the object cache sends its warnings and debug lines for one compile call (the
 * library never prints). `emit` may be NULL: messages are dropped. */
typedef enum tj_jit_msg_kind { TJ_JIT_MSG_WARNING, TJ_JIT_MSG_DEBUG } tj_jit_msg_kind_t;
typedef struct tj_jit_messages {
  void (*emit)(void *ctx, tj_jit_msg_kind_t kind, const char *text);
  void *ctx;
  bool debug; /* also one line per cache lookup (key component hashes, hit or miss) */
} tj_jit_messages_t;

typedef struct tj_jit_options {
  int opt_level;          /* 0..3 (LLVM default<Ox> and codegen level); default 3 */
  tj_jit_stats_t *stats;  /* optional: receives this call's counters on success */
  bool no_schedule;       /* lower without the CPU schedule (transforms/tir/schedule.h) */
  /* The default float mode, the inverse of tvmjit_module_options_t.strict_float:
   * float32/64 within rounding of the IR, not bit-exact: multiply-adds may become FMA
   * (schedule fp_contract) and a conv's reduction may be reordered (schedule
   * reorder_reductions). */
  bool relaxed_float;
  const tj_jit_messages_t *messages; /* optional: cache warnings and debug lines */
  bool no_cache;          /* bypass the object cache (the in-memory table still applies) */
  /* Kernels repack constant weights on every call, as they do non-constant ones, instead
   * of reading a copy packed once when the executable is made (runtime/prepack.h). */
  bool no_prepack;
  /* Constants' data is used in place, not copied into the executable: the module's IR
   * (and any data its constants borrow) outlives the executable. */
  bool borrow_constants;
  /* tj_jit_compile_module only: told of each constant's data that the executable does
   * not read once it is packed (its kernels read only packed copies), right after the
   * copies are made; the caller may free it, best into the allocator's cache when
   * `reuse` (runtime/prepack_set.h). NULL: not told. */
  void (*release_constant)(void *ctx, const void *data, bool reuse);
  void *release_ctx;
} tj_jit_options_t;

/* Initialises LLVM's native target once per process and creates one LLJIT. */
tj_status_t *tj_jit_create(tj_jit_t **out_jit);
/* Frees the JIT and all its code: executables made by it must be freed first. */
void tj_jit_free(tj_jit_t *jit);
/* Cumulative counters of this JIT. */
void tj_jit_get_stats(const tj_jit_t *jit, tj_jit_stats_t *out_stats);

/* Compiles every PrimFunc that `function` (normally "main") calls and builds the
 * executable: main's params are INPUT values, call_tir results INTERMEDIATE, returned
 * values OUTPUT, one call per call_tir binding, then the memory plan. Structurally
 * identical PrimFuncs compile once per JIT (table keyed by tj_struct_hash_prim_func and
 * the lowered kernel's canonical text). The executable uses code owned by `jit`.
 * Thread-safe: several threads may compile with one JIT. */
tj_status_t *tj_jit_compile_module(tj_jit_t *jit, const tj_module_t *m, const char *function,
                                   const tj_jit_options_t *opts, tj_executable_t **out_exe);

/* A compiled function whose shapes may have symbolic dims: its kernels compiled once
 * (each takes the values of its buffers' shape vars as trailing int64s, see
 * transforms/tir/shape_params.h) and main's call list with shapes as expressions of
 * main's vars. An executable for one binding of those vars is made without compiling
 * (tj_jit_program_instantiate: shapes evaluated, each call's scalars computed, memory
 * planned). tj_jit_compile_module is compile + instantiate for a static function.
 * The program points into `m` (which must outlive it) and uses code owned by `jit`. */
typedef struct tj_jit_program tj_jit_program_t;
tj_status_t *tj_jit_compile_program(tj_jit_t *jit, const tj_module_t *m, const char *function,
                                    const tj_jit_options_t *opts, tj_jit_program_t **out_program);
void tj_jit_program_free(tj_jit_program_t *program);
/* main's symbolic vars (each a dim of a parameter by itself), in order of appearance. */
int tj_jit_program_num_vars(const tj_jit_program_t *program);
const tj_tir_expr_t *const *tj_jit_program_vars(const tj_jit_program_t *program);
/* The executable for values[k] of var k (NULL when there are none). Thread-safe. */
tj_status_t *tj_jit_program_instantiate(const tj_jit_program_t *program, const int64_t *values,
                                        tj_executable_t **out_exe);

/* ---- one kernel ---- */
typedef struct tj_jit_kernel {
  const char *symbol;  /* owned by the JIT */
  void (*fn)(void);
  int n_buffers, n_scalars;
} tj_jit_kernel_t;

/* Lowers, compiles and links one PrimFunc (or finds it in the table); `name` is the
 * PrimFunc's name, used for the symbol and messages. */
tj_status_t *tj_jit_compile_prim_func(tj_jit_t *jit, const tj_prim_func_t *f, const char *name,
                                      const tj_jit_options_t *opts, tj_jit_kernel_t *out_kernel);

/* An object file for one lowered kernel, and the text that identifies it. */
typedef struct tj_jit_object {
  char *symbol;         /* the kernel's symbol in the object */
  char *canonical_text; /* lowered kernel, vars numbered: equal text = same kernel */
  void *bytes;          /* the ELF object */
  size_t size;
  int n_buffers, n_scalars;
  /* What the executable needs besides the code (jit/kernel_meta.c), kept with the object
   * in the disk cache; opaque to the cache. */
  void *meta;
  size_t meta_size;
} tj_jit_object_t;
void tj_jit_object_free(tj_jit_object_t *obj); /* frees the fields, not obj itself */

/* XXH3-128 of everything in an un-lowered PrimFunc and its name (jit/func_digest.c):
 * the kernel's part of the cache key. False when out of memory. */
bool tj_jit_func_digest(const tj_prim_func_t *f, const char *name, uint8_t out_digest[16]);

/* The canonical text of a lowered PrimFunc (caller frees with tj_free); NULL on OOM.
 * Variable and buffer names are replaced by their definition order; literals exact. */
char *tj_jit_kernel_text(const tj_prim_func_t *lowered);

/* Host target description, fixed per process: triple, CPU name and feature string
 * (part of any cache key). */
const char *tj_jit_host_triple(void);
const char *tj_jit_host_cpu(void);
const char *tj_jit_host_features(void);
/* The widest SIMD register the host has, in bits: 512 (AVX-512F), 256 (AVX/AVX2) or 128. */
int tj_jit_host_vector_bits(void);
/* Whether the host has float16 vector arithmetic (AVX512-FP16). */
bool tj_jit_host_native_f16(void);
/* Whether the host has bfloat16 dot products (AVX512-BF16: vdpbf16ps). */
bool tj_jit_host_bf16(void);
/* The width of the host's floating-point units (tj_tir_schedule_options_t.datapath_bits):
 * 256 when CPUID Fn8000_001A reports a 256-bit datapath and no 512-bit one (AMD Zen 4),
 * else 0 (full width); TVMJIT_DATAPATH_BITS=256|512 overrides it (A/B runs, tests). */
int tj_jit_host_datapath_bits(void);
/* The CPU schedule the JIT applies on this host: vector width and native float16 from
 * the host; relaxed_float (tj_jit_options_t) turns on FMA contraction and reordered conv
 * reductions. */
tj_tir_schedule_options_t tj_jit_schedule_options(bool enabled, bool relaxed_float);

/* Builds the LLVM module for a lowered kernel, verifies, optimises and emits an object
 * (one target machine per call, so threads may call this concurrently). */
tj_status_t *tj_jit_emit_object(const tj_prim_func_t *lowered, const char *symbol, int opt_level,
                                tj_jit_object_t *out_obj);
/* The unoptimised (or optimised, opt_level > 0) LLVM IR text, for debugging and tests.
 * Caller frees with tj_free. */
tj_status_t *tj_jit_llvm_ir(const tj_prim_func_t *lowered, const char *symbol, int opt_level, char **out_ir);
/* Adds an object to the JIT and looks its kernel up. Copies the bytes. */
tj_status_t *tj_jit_add_object(tj_jit_t *jit, const tj_jit_object_t *obj, void (**out_fn)(void));

/* ---- the slot for an object cache (the disk cache, jit/cache.h, plugs in here) ----
 * On a table miss the driver builds the key parts (tj_jit_cache_key_parts) and their
 * hash, and calls load; on a hit the object is added to the JIT as if freshly compiled (its symbol must
 * be the one stored with it). After a real compile it calls store. Hooks must be
 * thread-safe; load fills *out_obj with tj_malloc'd fields (symbol, bytes;
 * canonical_text may be NULL) and the stored n_buffers/n_scalars, and returns true on a
 * hit. A damaged entry must simply be a miss (with a warning through `messages`). */
typedef struct tj_jit_key_part {
  const char *name;  /* "tvmjit", "llvm", "triple", "cpu", "features", "opt", ... */
  const char *value;
} tj_jit_key_part_t;
enum { TJ_JIT_KEY_PARTS = 10 };
typedef struct tj_jit_cache_lookup {
  const char *name;                 /* the kernel's PrimFunc name, for messages */
  const tj_jit_key_part_t *parts;   /* everything that decides the object's bytes */
  int n_parts;
  const tj_jit_messages_t *messages; /* may be NULL */
  /* tj_jit_cache_key_hash of the parts, hashed once per kernel by the driver and used
   * for its load and its store; NULL: the hook hashes the parts itself. */
  const uint8_t *key;
} tj_jit_cache_lookup_t;
typedef struct tj_jit_object_cache {
  bool (*load)(void *ctx, const tj_jit_cache_lookup_t *lookup, tj_jit_object_t *out_obj);
  void (*store)(void *ctx, const tj_jit_cache_lookup_t *lookup, const tj_jit_object_t *obj);
  void *ctx;
} tj_jit_object_cache_t;
/* Installs (or with NULL removes) the cache; copied. Call before compiling. */
void tj_jit_set_object_cache(tj_jit_t *jit, const tj_jit_object_cache_t *cache);
/* The key parts of a kernel: format version, tvmjit version and build id (so any change
 * to the schedules, lowering or codegen changes every key), LLVM version, triple, CPU,
 * features, opt level, codegen options (code and reloc model), then the schedule
 * options as text and the digest of the un-lowered PrimFunc (tj_jit_func_digest, as
 * hex), both borrowed. Fills `parts` (TJ_JIT_KEY_PARTS entries) and returns how many.
 * Anything that changes the emitted object or what lowering returns must be one of
 * these parts: add it here when adding an option. Values other than the last two are
 * static strings. */
int tj_jit_cache_key_parts(const char *schedule, const char *func, int opt_level, tj_jit_key_part_t *parts);
/* XXH3-128 over the parts (names and values, length-prefixed). */
void tj_jit_cache_key_hash(const tj_jit_key_part_t *parts, int n_parts, uint8_t out_key[16]);

#endif
