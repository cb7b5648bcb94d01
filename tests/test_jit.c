/* jit/compile.c: Relax main of call_tir bindings -> executable, the in-memory kernel
 * table, unsupported-construct statuses, and the seed network against a naive C
 * reference with float16-per-op semantics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/module.h"
#include "ir/text/parse.h"
#include "jit/cache.h"
#include "jit/jit.h"
#include "jit_test_kernels.h"
#include "runtime/executable.h"
#include "runtime/tensor.h"
#include "support/alloc.h"
#include "project.h"
#include "testutil.h"
#include "transforms/transforms.h"

/* ---------------- hand-built modules ---------------- */

static const tj_sinfo_t *tensor_sinfo(tj_arena_t *a, tj_dtype_t dt, int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  return tj_sinfo_tensor_static(a, dt, 2, dims);
}

/* main(x, y): lv = relu(x); out = add(lv, y); return out  (float16 [4, 8]) */
static tj_module_t *relu_add_module(tj_arena_t *a, const char *relu_name, const char *add_name,
                                    bool second_relu_named_differently) {
  const tj_sinfo_t *si = tensor_sinfo(a, TJ_F16, 4, 8);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", si), *y = tj_rx_var(a, "y", si);
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", si), *lv1 = tj_rx_dataflow_var(a, "lv1", si);
  const tj_rx_expr_t *out = tj_rx_var(a, "out", si);
  const char *relu2 = second_relu_named_differently ? "relu_again" : relu_name;
  const tj_rx_expr_t *args_relu[1] = {x}, *args_relu2[1] = {lv}, *args_add[2] = {lv1, y};
  tj_rx_binding_t binds[3] = {
      {lv, tj_rx_make_call_tir(a, tj_rx_global_var(a, relu_name), 1, args_relu, si, NULL), NULL},
      {lv1, tj_rx_make_call_tir(a, tj_rx_global_var(a, relu2), 1, args_relu2, si, NULL), NULL},
      {out, tj_rx_make_call_tir(a, tj_rx_global_var(a, add_name), 2, args_add, si, NULL), NULL},
  };
  tj_rx_block_t block = {true, 3, tj_arena_memdup(a, binds, sizeof binds)};
  tj_rx_func_t *fn = TJ_ARENA_NEW(a, tj_rx_func_t);
  const tj_rx_expr_t *params[2] = {x, y};
  fn->n_params = 2;
  fn->params = tj_arena_memdup(a, params, sizeof params);
  fn->body = tj_rx_seq(a, 1, tj_arena_memdup(a, &block, sizeof block), out);
  fn->is_pure = true;
  tj_func_entry_t funcs[4] = {
      {"main", false, NULL, fn},
      {relu_name, true, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_MAX, false), NULL},
      {add_name, true, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true), NULL},
      {"relu_again", true, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_MAX, false), NULL},
  };
  return tj_module_new(a, second_relu_named_differently ? 4 : 3, funcs, NULL);
}

static uint16_t ref_relu(uint16_t h) { return tj_half_to_float(h) > 0.0f ? h : tj_float_to_half(0.0f); }
static uint16_t ref_add(uint16_t a, uint16_t b) { return tj_float_to_half(tj_half_to_float(a) + tj_half_to_float(b)); }

static tj_tensor_t *random_half_tensor(int ndim, const int64_t *shape, float lo, float hi, unsigned *seed) {
  tj_tensor_t *t = NULL;
  TU_OK(tj_tensor_new(TJ_F16, ndim, shape, &t));
  uint16_t *d = t->data;
  for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
    *seed = *seed * 1103515245u + 12345u;
    float u = (float)((*seed >> 8) & 0xffff) / 65535.0f;
    d[i] = tj_float_to_half(lo + (hi - lo) * u);
  }
  return t;
}

START_TEST(relu_add_module_runs_and_matches_reference) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = relu_add_module(a, "relu", "add", false);
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_stats_t st;
  tj_jit_options_t opts = {3, &st};
  tj_executable_t *exe = NULL;
  TU_OK(tj_jit_compile_module(jit, m, "main", &opts, &exe));
  ck_assert_int_eq(st.kernels_compiled, 2);
  ck_assert_int_eq(tj_executable_num_inputs(exe), 2);
  ck_assert_int_eq(tj_executable_num_outputs(exe), 1);
  ck_assert_int_eq(tj_executable_num_calls(exe), 3);
  int64_t shape[2] = {4, 8};
  unsigned seed = 11;
  tj_tensor_t *x = random_half_tensor(2, shape, -2, 2, &seed), *y = random_half_tensor(2, shape, -2, 2, &seed);
  const tj_tensor_t *inputs[2] = {x, y};
  tj_tensor_t *out = NULL;
  TU_OK(tj_executable_run(exe, 2, inputs, 1, &out));
  const uint16_t *xd = x->data, *yd = y->data, *od = out->data;
  for (int i = 0; i < 32; i++) ck_assert_uint_eq(od[i], ref_add(ref_relu(ref_relu(xd[i])), yd[i]));
  tj_tensor_free(out);
  tj_tensor_free(x);
  tj_tensor_free(y);
  tj_executable_free(exe);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

START_TEST(identical_prim_funcs_compile_once_per_jit) {
  tj_arena_t *a = tj_arena_create();
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_stats_t st;
  tj_jit_options_t opts = {3, &st};
  tj_executable_t *exe = NULL;
  /* relu and relu_again are separate but identical PrimFuncs: one compile. */
  TU_OK(tj_jit_compile_module(jit, relu_add_module(a, "relu", "add", true), "main", &opts, &exe));
  ck_assert_int_eq(st.kernels_compiled, 2);
  tj_executable_free(exe);
  /* A second module with the same kernels under other names: nothing to compile. */
  TU_OK(tj_jit_compile_module(jit, relu_add_module(a, "my_relu", "my_add", false), "main", &opts, &exe));
  ck_assert_int_eq(st.kernels_requested, 2);
  ck_assert_int_eq(st.kernels_compiled, 0);
  tj_executable_free(exe);
  tj_jit_stats_t total;
  tj_jit_get_stats(jit, &total);
  ck_assert_int_eq(total.kernels_compiled, 2);
  /* The same PrimFunc through the single-kernel entry point: the same code. */
  tj_jit_kernel_t k1, k2;
  TU_OK(tj_jit_compile_prim_func(jit, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_MAX, false), "relu", NULL, &k1));
  TU_OK(tj_jit_compile_prim_func(jit, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_MAX, false), "other", NULL, &k2));
  ck_assert_ptr_eq((void *)k1.fn, (void *)k2.fn);
  ck_assert_str_eq(k1.symbol, k2.symbol);
  tj_jit_get_stats(jit, &total);
  ck_assert_int_eq(total.kernels_compiled, 2);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

/* An in-memory stand-in for the disk cache: one slot. */
typedef struct fake_cache {
  uint8_t key[16];
  bool full;
  char features[1024];
  tj_jit_object_t obj;
  int loads, hits, stores;
} fake_cache_t;

static bool fake_load(void *ctx, const tj_jit_cache_lookup_t *lk, tj_jit_object_t *out) {
  fake_cache_t *c = ctx;
  uint8_t key[16];
  tj_jit_cache_key_hash(lk->parts, lk->n_parts, key);
  c->loads++;
  if (!c->full || memcmp(c->key, key, 16) != 0) return false;
  c->hits++;
  *out = (tj_jit_object_t){tj_strdup(c->obj.symbol), NULL, tj_malloc(c->obj.size), c->obj.size, c->obj.n_buffers,
                           c->obj.n_scalars, tj_malloc(c->obj.meta_size), c->obj.meta_size};
  memcpy(out->bytes, c->obj.bytes, c->obj.size);
  memcpy(out->meta, c->obj.meta, c->obj.meta_size);
  return true;
}

static void fake_store(void *ctx, const tj_jit_cache_lookup_t *lk, const tj_jit_object_t *obj) {
  fake_cache_t *c = ctx;
  c->stores++;
  tj_jit_object_free(&c->obj);
  tj_jit_cache_key_hash(lk->parts, lk->n_parts, c->key);
  c->full = true;
  for (int i = 0; i < lk->n_parts; i++)
    if (strcmp(lk->parts[i].name, "features") == 0) snprintf(c->features, sizeof c->features, "%s", lk->parts[i].value);
  c->obj = (tj_jit_object_t){tj_strdup(obj->symbol), NULL, tj_malloc(obj->size), obj->size, obj->n_buffers,
                             obj->n_scalars, tj_malloc(obj->meta_size), obj->meta_size};
  memcpy(c->obj.bytes, obj->bytes, obj->size);
  memcpy(c->obj.meta, obj->meta, obj->meta_size);
}

START_TEST(object_cache_slot_serves_a_fresh_jit) {
  tj_arena_t *a = tj_arena_create();
  fake_cache_t fc = {0};
  tj_jit_object_cache_t cache = {fake_load, fake_store, &fc};
  tj_jit_stats_t st;
  tj_jit_options_t opts = {3, &st};
  tj_jit_kernel_t k;
  tj_jit_t *jit1, *jit2;
  TU_OK(tj_jit_create(&jit1));
  tj_jit_set_object_cache(jit1, &cache);
  TU_OK(tj_jit_compile_prim_func(jit1, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true), "add", &opts, &k));
  ck_assert_int_eq(st.kernels_compiled, 1);
  ck_assert_int_eq(fc.stores, 1);
  ck_assert_str_eq(fc.features, tj_jit_host_features());
  tj_jit_free(jit1);
  TU_OK(tj_jit_create(&jit2));
  tj_jit_set_object_cache(jit2, &cache);
  TU_OK(tj_jit_compile_prim_func(jit2, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true), "add", &opts, &k));
  ck_assert_int_eq(st.kernels_compiled, 0);
  ck_assert_int_eq(st.kernels_loaded, 1);
  ck_assert_int_eq(fc.hits, 1);
  uint16_t x[32], y[32], o[32];
  for (int i = 0; i < 32; i++) {
    x[i] = tj_float_to_half((float)i * 0.3f);
    y[i] = tj_float_to_half(1.0f / (float)(i + 1));
  }
  ((void (*)(void *, void *, void *))k.fn)(x, y, o);
  for (int i = 0; i < 32; i++) ck_assert_uint_eq(o[i], ref_add(x[i], y[i]));
  tj_jit_free(jit2);
  tj_jit_object_free(&fc.obj);
  tj_arena_free(a);
}
END_TEST

/* A cache that records the key of each lookup and never hits. */
typedef struct key_log {
  int n;
  uint8_t keys[4][16];
} key_log_t;

static bool logging_load(void *ctx, const tj_jit_cache_lookup_t *lk, tj_jit_object_t *out) {
  (void)out;
  key_log_t *l = ctx;
  if (l->n < 4) memcpy(l->keys[l->n], lk->key, 16);
  l->n++;
  return false;
}
static void logging_store(void *ctx, const tj_jit_cache_lookup_t *lk, const tj_jit_object_t *obj) {
  (void)ctx, (void)lk, (void)obj;
}

/* The disk cache key of f compiled as `name` with `opts`, in a fresh JIT (so the
 * in-memory table does not answer first); f is built anew each time, in a new arena. */
static void key_of(tj_prim_func_t *(*make)(tj_arena_t *), const char *name, tj_jit_options_t opts, uint8_t out[16]) {
  tj_arena_t *a = tj_arena_create();
  key_log_t log = {0};
  tj_jit_object_cache_t cache = {logging_load, logging_store, &log};
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_set_object_cache(jit, &cache);
  tj_jit_kernel_t k;
  TU_OK(tj_jit_compile_prim_func(jit, make(a), name, &opts, &k));
  ck_assert_int_eq(log.n, 1);
  memcpy(out, log.keys[0], 16);
  tj_jit_free(jit);
  tj_arena_free(a);
}

static tj_prim_func_t *add_4x8(tj_arena_t *a) { return tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true); }
static tj_prim_func_t *add_4x9(tj_arena_t *a) { return tk_elementwise(a, TJ_F16, 4, 9, TJ_TIR_ADD, true); }
static tj_prim_func_t *add_4x8_f32(tj_arena_t *a) { return tk_elementwise(a, TJ_F32, 4, 8, TJ_TIR_ADD, true); }
static tj_prim_func_t *max_4x8(tj_arena_t *a) { return tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_MAX, true); }

/* A kernel is found in the disk cache by its un-lowered PrimFunc, its name and every
 * option lowering and codegen read, so a start from the cache does not lower it; a
 * stale object must then never match: any change of the function (its shape, dtype or
 * op, as a changed pipeline would make), of its name, of a schedule option or of the
 * opt level changes the key, and the same function built again keeps it. (A changed
 * schedule or code generator changes the library's build id, another part of the key:
 * test_cache.) */
START_TEST(the_cache_key_follows_the_function_and_every_option) {
  tj_jit_options_t base = {.opt_level = 3, .relaxed_float = true};
  uint8_t k0[16], k[16];
  key_of(add_4x8, "add", base, k0);
  key_of(add_4x8, "add", base, k);
  ck_assert_msg(memcmp(k0, k, 16) == 0, "the same function built twice has two keys");
  struct {
    const char *what;
    tj_prim_func_t *(*make)(tj_arena_t *);
    const char *name;
    tj_jit_options_t opts;
  } changes[] = {
      {"a shape", add_4x9, "add", base},
      {"a dtype", add_4x8_f32, "add", base},
      {"the op", max_4x8, "add", base},
      {"the name", add_4x8, "add2", base},
      {"strict float (schedule fp_contract, reorder, winograd)", add_4x8, "add", {.opt_level = 3}},
      {"no schedule", add_4x8, "add", {.opt_level = 3, .relaxed_float = true, .no_schedule = true}},
      {"the opt level", add_4x8, "add", {.opt_level = 2, .relaxed_float = true}},
  };
  for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
    key_of(changes[i].make, changes[i].name, changes[i].opts, k);
    ck_assert_msg(memcmp(k0, k, 16) != 0, "changing %s keeps the key", changes[i].what);
  }
}
END_TEST

/* f compiled as "add" with TVMJIT_WINOGRAD=`winograd` in `jit`, its disk cache `dir`. */
static void compile_with_winograd(tj_jit_t *jit, tj_arena_t *a, const char *winograd, tj_jit_stats_t *st,
                                  tj_jit_kernel_t *k) {
  setenv("TVMJIT_WINOGRAD", winograd, 1);
  tj_jit_options_t opts = {.opt_level = 3, .relaxed_float = true, .stats = st};
  TU_OK(tj_jit_compile_prim_func(jit, add_4x8(a), "add", &opts, k));
  unsetenv("TVMJIT_WINOGRAD");
}

/* Two keys, one lowered text: an elementwise kernel is not changed by the Winograd
 * option, which is in its key. Objects of both keys, compiled by other processes (here:
 * other JITs), are loaded into one JIT: each has a symbol of its own (made from its key),
 * so the second does not collide with the first. */
START_TEST(two_keys_of_one_lowered_kernel_load_into_one_jit) {
  tj_arena_t *a = tj_arena_create();
  char dir[256];
  snprintf(dir, sizeof dir, "%s", tu_make_tmp_dir("tj_jit_two_keys"));
  tj_disk_cache_options_t o = {dir, 1 << 24};
  tj_disk_cache_t *disk;
  TU_OK(tj_disk_cache_open(&o, &disk));
  tj_jit_object_cache_t hooks;
  tj_disk_cache_hooks(disk, &hooks);
  tj_jit_stats_t st;
  tj_jit_kernel_t k1, k2;
  const char *modes[2] = {"1", "0"};
  for (int i = 0; i < 2; i++) { /* fill the cache, one fresh JIT per mode */
    tj_jit_t *jit;
    TU_OK(tj_jit_create(&jit));
    tj_jit_set_object_cache(jit, &hooks);
    compile_with_winograd(jit, a, modes[i], &st, &k1);
    ck_assert_int_eq(st.kernels_compiled, 1);
    tj_jit_free(jit);
  }
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_set_object_cache(jit, &hooks);
  compile_with_winograd(jit, a, "1", &st, &k1);
  ck_assert_int_eq(st.kernels_loaded, 1);
  compile_with_winograd(jit, a, "0", &st, &k2);
  ck_assert_int_eq(st.kernels_loaded, 1);
  ck_assert_str_ne(k1.symbol, k2.symbol);
  uint16_t x[32], y[32], o1[32], o2[32];
  for (int i = 0; i < 32; i++) x[i] = tj_float_to_half((float)i * 0.25f), y[i] = tj_float_to_half(1.5f);
  ((void (*)(void *, void *, void *))k1.fn)(x, y, o1);
  ((void (*)(void *, void *, void *))k2.fn)(x, y, o2);
  for (int i = 0; i < 32; i++) {
    ck_assert_uint_eq(o1[i], ref_add(x[i], y[i]));
    ck_assert_uint_eq(o2[i], o1[i]);
  }
  tj_jit_free(jit);
  tj_disk_cache_close(disk);
  tu_remove_tree(dir);
  tj_arena_free(a);
}
END_TEST

static void count_warnings(void *ctx, tj_jit_msg_kind_t kind, const char *text) {
  (void)text;
  if (kind == TJ_JIT_MSG_WARNING) (*(int *)ctx)++;
}

/* A hit does not lower the kernel, so the entry carries what lowering returned besides
 * the code (the packed weights' descriptions); an entry whose description does not fit
 * the kernel is not used: a warning, and the kernel is compiled. */
START_TEST(a_cached_kernel_with_a_wrong_description_is_recompiled) {
  tj_arena_t *a = tj_arena_create();
  fake_cache_t fc = {0};
  tj_jit_object_cache_t cache = {fake_load, fake_store, &fc};
  int warnings = 0;
  tj_jit_messages_t msgs = {count_warnings, &warnings, false};
  tj_jit_stats_t st;
  tj_jit_options_t opts = {.opt_level = 3, .stats = &st, .messages = &msgs};
  tj_jit_kernel_t k;
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_set_object_cache(jit, &cache);
  TU_OK(tj_jit_compile_prim_func(jit, add_4x8(a), "add", &opts, &k));
  tj_jit_free(jit);
  ck_assert_int_eq(fc.stores, 1);
  ck_assert_uint_ge(fc.obj.meta_size, 16);
  int64_t n = 1; /* it now claims a packed weight the kernel does not have */
  memcpy((char *)fc.obj.meta + 8, &n, sizeof n);
  TU_OK(tj_jit_create(&jit));
  tj_jit_set_object_cache(jit, &cache);
  TU_OK(tj_jit_compile_prim_func(jit, add_4x8(a), "add", &opts, &k));
  ck_assert_int_eq(fc.hits, 1);
  ck_assert_int_eq(st.kernels_loaded, 0);
  ck_assert_int_eq(st.kernels_compiled, 1);
  ck_assert_int_eq(warnings, 1);
  tj_jit_free(jit);
  tj_jit_object_free(&fc.obj);
  tj_arena_free(a);
}
END_TEST

/* main(x): out = add(x, C) with C a constant [4, 8] float16. */
static tj_module_t *add_constant_module(tj_arena_t *a, const uint16_t *c_data) {
  const tj_sinfo_t *si = tensor_sinfo(a, TJ_F16, 4, 8);
  int64_t shape[2] = {4, 8};
  const tj_rx_expr_t *x = tj_rx_var(a, "x", si), *out = tj_rx_var(a, "out", si);
  const tj_rx_expr_t *c = tj_rx_constant(a, TJ_F16, 2, shape, c_data, 32 * sizeof(uint16_t));
  const tj_rx_expr_t *args[2] = {x, c};
  tj_rx_binding_t bind = {out, tj_rx_make_call_tir(a, tj_rx_global_var(a, "add"), 2, args, si, NULL), NULL};
  tj_rx_block_t block = {true, 1, tj_arena_memdup(a, &bind, sizeof bind)};
  tj_rx_func_t *fn = TJ_ARENA_NEW(a, tj_rx_func_t);
  fn->n_params = 1;
  fn->params = tj_arena_memdup(a, &x, sizeof x);
  fn->body = tj_rx_seq(a, 1, tj_arena_memdup(a, &block, sizeof block), out);
  fn->is_pure = true;
  tj_func_entry_t funcs[2] = {{"main", false, NULL, fn},
                              {"add", true, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true), NULL}};
  return tj_module_new(a, 2, funcs, NULL);
}

static const void *constant_data_of(const tj_executable_t *exe) {
  for (int i = 0; i < tj_executable_num_values(exe); i++)
    if (tj_executable_value(exe, i)->kind == TJ_VALUE_CONSTANT) return tj_executable_value(exe, i)->const_data;
  return NULL;
}

/* borrow_constants: the executable reads the module's constant in place (a bound
 * ResNet-18 would otherwise copy its 47 MB of weights at every load) when it is 64-byte
 * aligned, as the caller's tensors are; without the option, or unaligned, a copy. */
START_TEST(borrowed_constants_are_used_in_place) {
  tj_arena_t *a = tj_arena_create();
  uint16_t c_data[32];
  for (int i = 0; i < 32; i++) c_data[i] = tj_float_to_half((float)i);
  tj_module_t *m = add_constant_module(a, c_data);
  const tj_rx_func_t *fn = tj_module_find_relax(m, "main");
  tj_rx_expr_t *c = (tj_rx_expr_t *)fn->body->seq.blocks[0].bindings[0].value->call.args[1]->tuple.fields[1];
  uint16_t *aligned = tj_aligned_alloc(2 * sizeof c_data); /* room to move it off alignment */
  memcpy(aligned, c_data, sizeof c_data);
  c->constant.data = aligned; /* as BindParams points at the caller's tensor */
  const void *in_ir = aligned;
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_options_t opts = {.opt_level = 2, .borrow_constants = true};
  tj_executable_t *exe = NULL;
  TU_OK(tj_jit_compile_module(jit, m, "main", &opts, &exe));
  ck_assert_ptr_eq(constant_data_of(exe), in_ir);
  tj_executable_free(exe);
  opts.borrow_constants = false;
  TU_OK(tj_jit_compile_module(jit, m, "main", &opts, &exe));
  ck_assert_ptr_nonnull(constant_data_of(exe));
  ck_assert_ptr_ne(constant_data_of(exe), in_ir);
  ck_assert_int_eq(memcmp(constant_data_of(exe), c_data, sizeof c_data), 0);
  tj_executable_free(exe);
  /* an unaligned constant (FoldConstant's, in the IR arena) is copied to aligned memory */
  opts.borrow_constants = true;
  c->constant.data = memmove((char *)aligned + 2, aligned, sizeof c_data);
  TU_OK(tj_jit_compile_module(jit, m, "main", &opts, &exe));
  ck_assert_ptr_ne(constant_data_of(exe), c->constant.data);
  ck_assert_uint_eq((uintptr_t)constant_data_of(exe) % 64, 0);
  ck_assert_int_eq(memcmp(constant_data_of(exe), c_data, sizeof c_data), 0);
  tj_executable_free(exe);
  tj_jit_free(jit);
  tj_aligned_free(aligned);
  tj_arena_free(a);
}
END_TEST

/* A disk cache that never hits and counts what it is offered. The driver hashes each
 * kernel's key once: the load and the store of a kernel are given the same key, the
 * hash of their parts. */
typedef struct counting_cache {
  int loads, stores;
  uint8_t loaded[8][16];
} counting_cache_t;

static void check_given_key(const tj_jit_cache_lookup_t *lk) {
  ck_assert_ptr_nonnull(lk->key);
  uint8_t key[16];
  tj_jit_cache_key_hash(lk->parts, lk->n_parts, key);
  ck_assert(memcmp(key, lk->key, 16) == 0);
}

static bool counting_load(void *ctx, const tj_jit_cache_lookup_t *lk, tj_jit_object_t *out) {
  (void)out;
  counting_cache_t *c = ctx;
  check_given_key(lk);
  if (c->loads < 8) memcpy(c->loaded[c->loads], lk->key, 16);
  c->loads++;
  return false;
}
static void counting_store(void *ctx, const tj_jit_cache_lookup_t *lk, const tj_jit_object_t *obj) {
  counting_cache_t *c = ctx;
  ck_assert_ptr_nonnull(obj->bytes);
  check_given_key(lk);
  bool loaded = false;
  for (int i = 0; i < c->loads && i < 8; i++) loaded |= memcmp(c->loaded[i], lk->key, 16) == 0;
  ck_assert_msg(loaded, "a kernel was stored under a key its load was not given");
  c->stores++;
}

/* Kernels missing from both caches are compiled after main's walk, together, on
 * several threads: each distinct kernel once, each offered to the cache once, and the
 * executable calls the right code. */
START_TEST(kernels_compiled_together_on_two_threads) {
  setenv("TVMJIT_COMPILE_THREADS", "2", 1);
  tj_arena_t *a = tj_arena_create();
  counting_cache_t counts = {0};
  tj_jit_object_cache_t cache = {counting_load, counting_store, &counts};
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_set_object_cache(jit, &cache);
  tj_jit_stats_t st;
  tj_jit_options_t opts = {.opt_level = 2, .stats = &st};
  tj_executable_t *exe = NULL;
  TU_OK(tj_jit_compile_module(jit, relu_add_module(a, "relu", "add", true), "main", &opts, &exe));
  ck_assert_int_eq(st.kernels_requested, 2);
  ck_assert_int_eq(st.kernels_compiled, 2);
  ck_assert_int_eq(counts.loads, 2);
  ck_assert_int_eq(counts.stores, 2);
  int64_t shape[2] = {4, 8};
  unsigned seed = 7;
  tj_tensor_t *x = random_half_tensor(2, shape, -2, 2, &seed), *y = random_half_tensor(2, shape, -2, 2, &seed);
  const tj_tensor_t *in[2] = {x, y};
  tj_tensor_t *out[1] = {NULL};
  TU_OK(tj_executable_run(exe, 2, in, 1, out));
  const uint16_t *xs = x->data, *ys = y->data, *os = out[0]->data;
  for (int i = 0; i < 32; i++) ck_assert_uint_eq(os[i], ref_add(ref_relu(ref_relu(xs[i])), ys[i]));
  tj_tensor_free(out[0]);
  tj_tensor_free(x);
  tj_tensor_free(y);
  tj_executable_free(exe);
  tj_jit_free(jit);
  tj_arena_free(a);
  unsetenv("TVMJIT_COMPILE_THREADS");
}
END_TEST

START_TEST(unlowered_op_binding_is_unsupported_with_the_fix) {
  tj_arena_t *a = tj_arena_create();
  const tj_sinfo_t *si = tensor_sinfo(a, TJ_F16, 4, 8);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", si), *lv = tj_rx_var(a, "lv", si);
  tj_rx_binding_t bind = {lv, tj_rx_call(a, tj_rx_op(a, "relax.nn.conv2d"), 1, &x, NULL, 0, NULL), NULL};
  tj_rx_block_t block = {true, 1, &bind};
  tj_rx_func_t fn = {1, &x, NULL, tj_rx_seq(a, 1, &block, lv), NULL, true};
  tj_func_entry_t entry = {"main", false, NULL, &fn};
  tj_module_t *m = tj_module_new(a, 1, &entry, NULL);
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_executable_t *exe = NULL;
  tj_status_t *s = tj_jit_compile_module(jit, m, "main", NULL, &exe);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_UNSUPPORTED);
  ck_assert_str_eq(tj_status_message(s), "binding 'lv': R.nn.conv2d is not lowered; run with --passes default or LegalizeOps");
  ck_assert_ptr_null(exe);
  tj_status_free(s);
  /* No function of that name. */
  s = tj_jit_compile_module(jit, m, "nope", NULL, &exe);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_NOT_FOUND);
  tj_status_free(s);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

START_TEST(symbolic_shape_is_unsupported) {
  tj_arena_t *a = tj_arena_create();
  const tj_tir_expr_t *dims[2] = {tj_tir_var(a, "n", TJ_I64), tk_i64(a, 8)};
  const tj_sinfo_t *si = tj_sinfo_tensor(a, TJ_F16, 2, dims);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", si), *lv = tj_rx_var(a, "lv", si);
  tj_rx_binding_t bind = {lv, tj_rx_make_call_tir(a, tj_rx_global_var(a, "relu"), 1, &x, si, NULL), NULL};
  tj_rx_block_t block = {true, 1, &bind};
  tj_rx_func_t fn = {1, &x, NULL, tj_rx_seq(a, 1, &block, lv), NULL, true};
  tj_func_entry_t entries[2] = {{"main", false, NULL, &fn},
                                {"relu", true, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_MAX, false), NULL}};
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_executable_t *exe = NULL;
  tj_status_t *s = tj_jit_compile_module(jit, tj_module_new(a, 2, entries, NULL), "main", NULL, &exe);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "'x'"));
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "symbolic"));
  tj_status_free(s);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

/* ---------------- the seed network ---------------- */

enum { N = 16, H = 32, W = 32, C = 16, K = 16 };
static float h2f_table[65536];

static void init_h2f(void) {
  for (int i = 0; i < 65536; i++) h2f_table[i] = tj_half_to_float((uint16_t)i);
}
static inline float h2f(uint16_t h) { return h2f_table[h]; }

/* conv2d2: NHWC data, OHWI weight, pad 1, float16 accumulation in TVM's order ry, rx, rc. */
static void ref_conv_relu(const uint16_t *data, const uint16_t *w, uint16_t *out, bool relu) {
  for (int n = 0; n < N; n++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        for (int f = 0; f < K; f++) {
          uint16_t acc = tj_float_to_half(0.0f);
          for (int ry = 0; ry < 3; ry++)
            for (int rx = 0; rx < 3; rx++)
              for (int rc = 0; rc < C; rc++) {
                int py = y + ry - 1, px = x + rx - 1;
                uint16_t p = (py >= 0 && py < H && px >= 0 && px < W) ? data[((n * H + py) * W + px) * C + rc]
                                                                      : tj_float_to_half(0.0f);
                uint16_t prod = tj_float_to_half(h2f(p) * h2f(w[((f * 3 + ry) * 3 + rx) * C + rc]));
                acc = tj_float_to_half(h2f(acc) + h2f(prod));
              }
          out[((n * H + y) * W + x) * K + f] = relu ? ref_relu(acc) : acc;
        }
}

/* layer_norm as the seed writes it: f32 sums, f32 normalisation, f16 affine. */
static void ref_layer_norm(const uint16_t *x, const uint16_t *gamma, const uint16_t *beta, uint16_t *out) {
  for (int p = 0; p < N * H * W; p++) {
    float s0 = 0.0f, s1 = 0.0f;
    for (int k = 0; k < C; k++) {
      float v = h2f(x[p * C + k]);
      s0 = s0 + v;
      float sq = v * v;
      s1 = s1 + sq;
    }
    float mean = s0 * 0.0625f;
    float var = s1 * 0.0625f - mean * (s0 * 0.0625f) + (float)1.0000000000000001e-05;
    float inv = 1.0f / sqrtf(var);
    for (int k = 0; k < C; k++) {
      float norm = (h2f(x[p * C + k]) - s0 * 0.0625f) * inv;
      uint16_t h = tj_float_to_half(norm);
      uint16_t g = tj_float_to_half(h2f(h) * h2f(gamma[k]));
      out[p * C + k] = tj_float_to_half(h2f(g) + h2f(beta[k]));
    }
  }
}

static tj_module_t *parse_seed(tj_arena_t *a) {
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_file(a, tu_project_path(TU_SEED_MODEL), &m);
  if (s && tj_status_code(s) == TJ_ERR_UNSUPPORTED) {
    printf("seed test: parser not available (%s), skipped\n", tj_status_text(s));
    tj_status_free(s);
    return NULL;
  }
  TU_OK(s);
  return m;
}

static int count_mismatches(const uint16_t *got, const uint16_t *want, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += got[i] != want[i];
  return bad;
}

START_TEST(seed_network_is_bit_exact_against_f16_reference) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_seed(a);
  if (!m) {
    tj_arena_free(a);
    return;
  }
  init_h2f();
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_jit_stats_t st;
  tj_jit_options_t opts = {3, &st};
  tj_executable_t *exe = NULL;
  TU_OK(tj_jit_compile_module(jit, m, "main", &opts, &exe));
  ck_assert_int_eq(st.kernels_compiled, 3); /* conv2d2, relu, layer_norm; conv2d2 used 3 times */
  ck_assert_int_eq(tj_executable_num_calls(exe), 7);
  printf("seed: %d kernels compiled in %.1f ms (lower %.1f, codegen %.1f, opt %.1f, emit %.1f, link %.1f)\n",
         st.kernels_compiled, st.total_ms, st.lower_ms, st.codegen_ms, st.optimize_ms, st.emit_ms, st.link_ms);
  int64_t act[4] = {N, H, W, C}, wsh[4] = {K, 3, 3, C}, vec[1] = {C};
  unsigned seed = 1234;
  tj_tensor_t *in[6] = {random_half_tensor(4, act, -1, 1, &seed),    random_half_tensor(4, wsh, -0.25f, 0.25f, &seed),
                        random_half_tensor(4, wsh, -0.25f, 0.25f, &seed), random_half_tensor(4, wsh, -0.25f, 0.25f, &seed),
                        random_half_tensor(1, vec, 0.5f, 1.5f, &seed), random_half_tensor(1, vec, -0.5f, 0.5f, &seed)};
  tj_tensor_t *out = NULL;
  TU_OK(tj_executable_run(exe, 6, (const tj_tensor_t *const *)in, 1, &out));
  int64_t n = (int64_t)N * H * W * C;
  uint16_t *t1 = malloc((size_t)n * 2), *t2 = malloc((size_t)n * 2);
  ref_conv_relu(in[0]->data, in[1]->data, t1, true);
  ref_conv_relu(t1, in[2]->data, t2, true);
  ref_layer_norm(t2, in[4]->data, in[5]->data, t1);
  ref_conv_relu(t1, in[3]->data, t2, true);
  ck_assert_int_eq(count_mismatches(out->data, t2, n), 0);
  int nonzero = 0;
  for (int64_t i = 0; i < n; i++) nonzero += t2[i] != 0;
  ck_assert_int_gt(nonzero, n / 4); /* the data is not trivially zero after the relus */
  /* The same network after the default pipeline (fused conv2d+relu kernels). */
  tj_pass_context_t pc;
  tj_pass_context_init(&pc, a);
  const tj_module_t *fm = m;
  TU_OK(tj_legalize_ops(&pc, fm, &fm));
  TU_OK(tj_annotate_tir_op_pattern(&pc, fm, &fm));
  TU_OK(tj_fuse_ops(&pc, fm, -1, &fm));
  TU_OK(tj_fuse_tir(&pc, fm, &fm));
  TU_OK(tj_dead_code_elimination(&pc, fm, &fm));
  tj_executable_t *fexe = NULL;
  TU_OK(tj_jit_compile_module(jit, fm, "main", &opts, &fexe));
  tj_tensor_t *fout = NULL;
  TU_OK(tj_executable_run(fexe, 6, (const tj_tensor_t *const *)in, 1, &fout));
  ck_assert_int_eq(tj_executable_num_calls(fexe), 4);
  ck_assert_int_eq(count_mismatches(fout->data, t2, n), 0);
  tj_tensor_free(fout);
  tj_executable_free(fexe);
  free(t1);
  free(t2);
  tj_tensor_free(out);
  for (int i = 0; i < 6; i++) tj_tensor_free(in[i]);
  tj_executable_free(exe);
  /* Compiling the seed again in this process compiles nothing. */
  TU_OK(tj_jit_compile_module(jit, m, "main", &opts, &exe));
  ck_assert_int_eq(st.kernels_compiled, 0);
  tj_executable_free(exe);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("jit");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, relu_add_module_runs_and_matches_reference);
  tcase_add_test(tc, the_cache_key_follows_the_function_and_every_option);
  tcase_add_test(tc, a_cached_kernel_with_a_wrong_description_is_recompiled);
  tcase_add_test(tc, two_keys_of_one_lowered_kernel_load_into_one_jit);
  tcase_add_test(tc, identical_prim_funcs_compile_once_per_jit);
  tcase_add_test(tc, object_cache_slot_serves_a_fresh_jit);
  tcase_add_test(tc, borrowed_constants_are_used_in_place);
  tcase_add_test(tc, kernels_compiled_together_on_two_threads);
  tcase_add_test(tc, unlowered_op_binding_is_unsupported_with_the_fix);
  tcase_add_test(tc, symbolic_shape_is_unsupported);
  tcase_add_test(tc, seed_network_is_bit_exact_against_f16_reference);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
