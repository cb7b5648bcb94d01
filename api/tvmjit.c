/* The public API (include/tvmjit.h): a thin layer over ir/, transforms/, jit/ and runtime/. */
#include "tvmjit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/driver.h"
#include "api/fold_eval.h"
#include "api/handles.h"
#include "api/specialize.h"
#include "ir/flops.h"
#include "ir/visit.h"
#include "jit/cache.h"
#include "jit/jit.h"
#include "runtime/executable.h"
#include "runtime/npy.h"
#include "runtime/npz.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"
#include "support/alloc.h"
#include "support/strbuf.h"
#include "transforms/transforms.h"
#include "transforms/pass_manager.h"

/* ---------------------------------------------------------------- status */

tvmjit_code_t tvmjit_status_code(const tvmjit_status_t *status) { return (tvmjit_code_t)tj_status_code(status); }
const char *tvmjit_status_message(tvmjit_status_t *status) { return tj_status_text(status); }
void tvmjit_status_free(tvmjit_status_t *status) { tj_status_free(status); }

/* ---------------------------------------------------------------- tensors */

static const char *const dtype_names[] = {"float16", "float32", "float64", "int8",   "int16",  "int32",
                                          "int64",   "uint8",   "uint16",  "uint32", "uint64", "bool",
                                          "bfloat16"};
enum { N_DTYPES = sizeof dtype_names / sizeof dtype_names[0] };

const char *tvmjit_dtype_name(tvmjit_dtype_t dtype) {
  return (unsigned)dtype < N_DTYPES ? dtype_names[dtype] : "unknown";
}

int tvmjit_dtype_from_name(const char *name, tvmjit_dtype_t *out_dtype) {
  for (int i = 0; i < N_DTYPES; i++)
    if (strcmp(dtype_names[i], name) == 0) return *out_dtype = (tvmjit_dtype_t)i, 0;
  return -1;
}

bool tj_api_internal_dtype(tvmjit_dtype_t d, tj_dtype_t *out) {
  return (unsigned)d < N_DTYPES && tj_dtype_parse(dtype_names[d], out);
}

static tvmjit_dtype_t to_public_dtype(tj_dtype_t d) {
  char buf[TJ_DTYPE_BUFSIZE];
  tvmjit_dtype_t out = TVMJIT_FLOAT32;
  tvmjit_dtype_from_name(tj_dtype_str(d, buf), &out);
  return out;
}

tj_status_t *tj_api_wrap_tensor(tj_tensor_t *t, tvmjit_tensor_t **out) {
  tvmjit_tensor_t *p = tj_malloc(sizeof *p);
  if (!p) {
    tj_tensor_free(t);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor handle");
  }
  p->t = t;
  p->managed = NULL;
  *out = p;
  return NULL;
}

static tj_status_t *check_shape_args(tvmjit_dtype_t dtype, int ndim, const int64_t *shape, tj_dtype_t *out_dt) {
  if (!tj_api_internal_dtype(dtype, out_dt)) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "unknown dtype %d", (int)dtype);
  if (ndim < 0 || ndim > TVMJIT_MAX_NDIM)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "ndim %d is out of range 0..%d", ndim, TVMJIT_MAX_NDIM);
  if (ndim > 0 && !shape) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "shape is NULL");
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "dimension %d is negative (%lld)", i, (long long)shape[i]);
  return NULL;
}

tvmjit_status_t *tvmjit_tensor_new(tvmjit_dtype_t dtype, int ndim, const int64_t *shape, tvmjit_tensor_t **out_tensor) {
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(check_shape_args(dtype, ndim, shape, &dt));
  tj_tensor_t *t;
  TJ_RETURN_IF_ERROR(tj_tensor_new(dt, ndim, shape, &t));
  return tj_api_wrap_tensor(t, out_tensor);
}

tvmjit_status_t *tvmjit_tensor_wrap(tvmjit_dtype_t dtype, int ndim, const int64_t *shape, void *data,
                                    tvmjit_tensor_t **out_tensor) {
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(check_shape_args(dtype, ndim, shape, &dt));
  if (!data) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_tensor_wrap: data is NULL");
  tj_tensor_t *t;
  TJ_RETURN_IF_ERROR(tj_tensor_wrap(dt, ndim, shape, data, &t));
  return tj_api_wrap_tensor(t, out_tensor);
}

void tvmjit_tensor_free(tvmjit_tensor_t *tensor) {
  if (!tensor) return;
  tj_tensor_free(tensor->t);
  if (tensor->managed && tensor->managed->deleter) tensor->managed->deleter(tensor->managed);
  tj_free(tensor);
}

tvmjit_dtype_t tvmjit_tensor_dtype(const tvmjit_tensor_t *tensor) { return to_public_dtype(tensor->t->dtype); }
int tvmjit_tensor_ndim(const tvmjit_tensor_t *tensor) { return tensor->t->ndim; }
const int64_t *tvmjit_tensor_shape(const tvmjit_tensor_t *tensor) { return tensor->t->shape; }
void *tvmjit_tensor_data(const tvmjit_tensor_t *tensor) { return tensor->t->data; }
size_t tvmjit_tensor_nbytes(const tvmjit_tensor_t *tensor) { return tj_tensor_nbytes(tensor->t); }

tvmjit_status_t *tvmjit_tensor_convert(const tvmjit_tensor_t *src, tvmjit_tensor_t *dst) {
  const tj_tensor_t *s = src->t;
  tj_tensor_t *d = dst->t;
  if (s->ndim != d->ndim || memcmp(s->shape, d->shape, sizeof(int64_t) * (size_t)s->ndim) != 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_tensor_convert: shapes differ");
  int64_t n = tj_tensor_numel(s);
  for (int64_t i = 0; i < n; i++) tj_tensor_set_f64(d, i, tj_tensor_get_f64(s, i));
  return NULL;
}

/* ---------------------------------------------------------------- npy / npz */

tvmjit_status_t *tvmjit_tensor_load_npy(const char *path, tvmjit_tensor_t **out_tensor) {
  tj_tensor_t *t;
  TJ_RETURN_IF_ERROR(tj_npy_load(path, &t));
  return tj_api_wrap_tensor(t, out_tensor);
}

tvmjit_status_t *tvmjit_tensor_save_npy(const char *path, const tvmjit_tensor_t *tensor) {
  return tj_npy_save(path, tensor->t);
}

void tvmjit_npz_free(int count, char **names, tvmjit_tensor_t **tensors) {
  for (int i = 0; i < count; i++) {
    if (names) tj_free(names[i]);
    if (tensors) tvmjit_tensor_free(tensors[i]);
  }
  tj_free(names);
  tj_free(tensors);
}

tvmjit_status_t *tvmjit_npz_load(const char *path, int *out_count, char ***out_names, tvmjit_tensor_t ***out_tensors) {
  tj_npz_t *npz;
  TJ_RETURN_IF_ERROR(tj_npz_load(path, &npz));
  int n = tj_npz_count(npz);
  char **names = tj_calloc((size_t)n + 1, sizeof *names);
  tvmjit_tensor_t **tensors = tj_calloc((size_t)n + 1, sizeof *tensors);
  tj_status_t *st = (names && tensors) ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
  for (int i = 0; i < n && !st; i++) {
    if (!(names[i] = tj_strdup(tj_npz_name(npz, i)))) st = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
    else st = tj_api_wrap_tensor(tj_npz_take(npz, i), &tensors[i]);
  }
  tj_npz_free(npz);
  if (st) {
    tvmjit_npz_free(n, names, tensors);
    return st;
  }
  *out_count = n;
  *out_names = names;
  *out_tensors = tensors;
  return NULL;
}

tvmjit_status_t *tvmjit_npz_save(const char *path, int count, const char *const *names,
                                 const tvmjit_tensor_t *const *tensors) {
  const tj_tensor_t **inner = tj_calloc((size_t)count + 1, sizeof *inner);
  if (!inner) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory writing %s", path);
  for (int i = 0; i < count; i++) inner[i] = tensors[i]->t;
  tj_status_t *st = tj_npz_save(path, count, names, inner, false);
  tj_free(inner);
  return st;
}

/* ---------------------------------------------------------------- instance */

struct tvmjit_instance {
  tj_jit_t *jit;
  tj_thread_pool_t *pool; /* parallel loops of every function of the instance */
  tj_disk_cache_t *cache; /* NULL: the cache is off */
};

static bool env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

void tvmjit_instance_options_init(tvmjit_instance_options_t *options) {
  memset(options, 0, sizeof *options);
  options->cache.enable = !env_is("TVMJIT_CACHE", "0");
}

tvmjit_status_t *tvmjit_instance_create(const tvmjit_instance_options_t *options, tvmjit_instance_t **out_instance) {
  tvmjit_instance_options_t defaults;
  if (!options) {
    tvmjit_instance_options_init(&defaults);
    options = &defaults;
  }
  tvmjit_instance_t *inst = tj_calloc(1, sizeof *inst);
  if (!inst) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory creating the instance");
  tj_status_t *st = tj_thread_pool_create(options->num_threads, &inst->pool);
  if (!st && options->cache.enable) {
    tj_disk_cache_options_t co = {options->cache.directory, options->cache.max_bytes};
    st = tj_disk_cache_open(&co, &inst->cache);
  }
  if (!st) st = tj_jit_create(&inst->jit);
  if (st) {
    tj_disk_cache_close(inst->cache);
    tj_thread_pool_free(inst->pool);
    tj_free(inst);
    return st;
  }
  if (inst->cache) {
    tj_jit_object_cache_t hooks;
    tj_disk_cache_hooks(inst->cache, &hooks);
    tj_jit_set_object_cache(inst->jit, &hooks);
  }
  *out_instance = inst;
  return NULL;
}

void tvmjit_instance_free(tvmjit_instance_t *instance) {
  if (!instance) return;
  tj_jit_free(instance->jit);
  tj_thread_pool_free(instance->pool);
  tj_disk_cache_close(instance->cache);
  tj_free(instance);
  tj_alloc_release_cached(); /* large blocks kept for reuse across runs */
}

/* ---------------------------------------------------------------- cache maintenance */

static tj_status_t *cache_dir_or_default(const char *directory, char *out, size_t len) {
  char *dir = NULL;
  if (!directory) TJ_RETURN_IF_ERROR(tj_cache_default_dir(&dir));
  int n = snprintf(out, len, "%s", directory ? directory : dir);
  tj_free(dir);
  if (n < 0 || (size_t)n >= len) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "cache directory name is too long");
  return NULL;
}

tvmjit_status_t *tvmjit_cache_info(const char *directory, tvmjit_cache_info_t *out_info) {
  tvmjit_cache_info_t info;
  memset(&info, 0, sizeof info);
  TJ_RETURN_IF_ERROR(cache_dir_or_default(directory, info.directory, sizeof info.directory));
  tj_cache_info_t ci;
  TJ_RETURN_IF_ERROR(tj_cache_info(info.directory, &ci));
  info.exists = ci.exists;
  info.entries = ci.entries;
  info.bytes = ci.bytes;
  info.runs = ci.runs;
  info.hits = ci.hits;
  info.misses = ci.misses;
  *out_info = info;
  return NULL;
}

tvmjit_status_t *tvmjit_cache_clear(const char *directory, int *out_removed, uint64_t *out_bytes) {
  char dir[4096];
  TJ_RETURN_IF_ERROR(cache_dir_or_default(directory, dir, sizeof dir));
  int removed = 0;
  uint64_t bytes = 0;
  tj_status_t *st = tj_cache_clear(dir, &removed, &bytes);
  if (out_removed) *out_removed = removed;
  if (out_bytes) *out_bytes = bytes;
  return st;
}

/* ---------------------------------------------------------------- modules */

struct tvmjit_module {
  tvmjit_instance_t *instance;
  tj_arena_t *arena;
  const tj_module_t *ir;     /* after the passes */
  const tj_module_t *parsed; /* before them: what a symbolic function is specialised from */
  char *passes, *mixed_precision; /* the pipeline, run again for each specialisation */
  char *report;
  /* Cache settings and the message sink for compiles (options copied at load). */
  bool use_cache, cache_debug;
  void (*on_message)(void *user, tvmjit_message_kind_t kind, const char *text);
  void *message_user;
  pthread_mutex_t messages_lock; /* guards messages: compiles may run on other threads */
  tj_strbuf_t messages;
  int opt_level;        /* of the kernels, from the options */
  pthread_mutex_t lock; /* guards functions and report: lookups compile lazily */
  tvmjit_function_t *functions;
  bool no_schedule;
  bool no_prepack;
  bool relaxed_float;
  bool bound_params; /* BindParams ran: main's signature is the parsed one minus those */
  /* Tensors handed over by tvmjit_module_adopt_tensor; a freed one keeps its data's
   * range, so later compiles can tell they would read it. */
  struct adopted {
    tvmjit_tensor_t *tensor; /* NULL once freed */
    const unsigned char *data;
    size_t nbytes;
  } *adopted;
  int n_adopted, cap_adopted;
  int n_released; /* freed once packed, for the report */
  size_t released_bytes;
};

void tvmjit_module_options_init(tvmjit_module_options_t *options) {
  memset(options, 0, sizeof *options);
  options->passes = "default";
  options->verify_each = 1;
  options->use_cache = 1;
  options->cache_debug = env_is("TVMJIT_CACHE_DEBUG", "1");
  options->opt_level = 2;
}

/* The JIT's message sink for this module: collected, and passed on to on_message. */
static void module_message(void *ctx, tj_jit_msg_kind_t kind, const char *text) {
  tvmjit_module_t *mod = ctx;
  pthread_mutex_lock(&mod->messages_lock);
  tj_strbuf_printf(&mod->messages, "%s%s\n", kind == TJ_JIT_MSG_WARNING ? "warning: " : "", text);
  pthread_mutex_unlock(&mod->messages_lock);
  if (mod->on_message)
    mod->on_message(mod->message_user, kind == TJ_JIT_MSG_WARNING ? TVMJIT_MESSAGE_WARNING : TVMJIT_MESSAGE_DEBUG,
                    text);
}

const char *tvmjit_module_messages(const tvmjit_module_t *module) {
  tvmjit_module_t *m = (tvmjit_module_t *)module;
  pthread_mutex_lock(&m->messages_lock);
  const char *text = m->messages.data ? m->messages.data : "";
  pthread_mutex_unlock(&m->messages_lock);
  return text;
}

/* The pass report kept for tvmjit_module_report: per-pass times with time_passes. */
static tj_status_t *keep_report(tvmjit_module_t *mod, const tvmjit_module_options_t *o, const tj_pass_report_t *r) {
  const char *text = o->time_passes ? tj_pass_report_text(mod->arena, r) : "";
  mod->report = tj_strdup(text ? text : "");
  return mod->report ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
}

static tj_status_t *module_new(tvmjit_instance_t *instance, const tvmjit_module_options_t *options,
                               tvmjit_module_t **out_module) {
  if (options->opt_level < 0 || options->opt_level > 3)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "opt_level %d is out of range: use 0, 1, 2 or 3", options->opt_level);
  tvmjit_module_t *mod = tj_calloc(1, sizeof *mod);
  tj_arena_t *arena = mod ? tj_arena_create() : NULL;
  if (!arena) {
    tj_free(mod);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  }
  mod->instance = instance;
  mod->arena = arena;
  mod->no_schedule = options->no_schedule != 0;
  mod->no_prepack = options->no_prepack != 0;
  mod->relaxed_float = options->strict_float == 0;
  mod->opt_level = options->opt_level;
  pthread_mutex_init(&mod->lock, NULL);
  pthread_mutex_init(&mod->messages_lock, NULL);
  tj_strbuf_init(&mod->messages);
  mod->use_cache = options->use_cache != 0;
  mod->cache_debug = options->cache_debug != 0;
  mod->on_message = options->on_message;
  mod->message_user = options->message_user;
  *out_module = mod;
  return NULL;
}

static tj_status_t *keep_pipeline(tvmjit_module_t *mod, const tvmjit_module_options_t *o) {
  mod->passes = o->passes ? tj_arena_strdup(mod->arena, o->passes) : NULL;
  mod->mixed_precision = o->mixed_precision ? tj_arena_strdup(mod->arena, o->mixed_precision) : NULL;
  if ((o->passes && !mod->passes) || (o->mixed_precision && !mod->mixed_precision))
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  return NULL;
}

/* The module's kernel options, as compile_function passes them to the JIT. */
static tj_jit_options_t module_jit_options(const tvmjit_module_t *module) {
  bool cached = module->use_cache && module->instance->cache;
  return (tj_jit_options_t){.opt_level = module->opt_level, .no_cache = !cached, .no_schedule = module->no_schedule,
                            .no_prepack = module->no_prepack, .relaxed_float = module->relaxed_float};
}

/* BindParams' tensors (options->bind_params) for the driver, in the module's arena, and
 * FoldConstant's evaluator: the module's JIT with its kernel options. */
static tj_status_t *bind_options(tvmjit_module_t *mod, const tvmjit_module_options_t *o, tj_driver_passes_t *passes,
                                 tj_jit_options_t *eval_opts, tj_fold_eval_t *eval) {
  if (o->n_bind_params <= 0) return NULL;
  if (!o->bind_param_names || !o->bind_params)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "bind_params: n_bind_params is %d but the names or tensors are NULL",
                         o->n_bind_params);
  tj_bound_param_t *b = TJ_ARENA_ARRAY(mod->arena, tj_bound_param_t, o->n_bind_params);
  if (!b) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < o->n_bind_params; i++) {
    const tvmjit_tensor_t *t = o->bind_params[i];
    if (!t || !o->bind_param_names[i])
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "bind_params: entry %d has a NULL name or tensor", i);
    b[i] = (tj_bound_param_t){o->bind_param_names[i], t->t->dtype, t->t->ndim, t->t->shape, t->t->data,
                              tj_tensor_nbytes(t->t)};
  }
  *eval_opts = module_jit_options(mod);
  *eval = (tj_fold_eval_t){mod->instance->jit, eval_opts};
  passes->n_bound = o->n_bind_params;
  passes->bound = b;
  passes->bind_skip_unknown = o->bind_params_skip_unknown != 0;
  passes->eval = tj_fold_eval_jit;
  passes->eval_user = eval;
  mod->bound_params = true;
  return NULL;
}

typedef struct uses_data {
  const unsigned char *begin, *end;
  bool found;
} uses_data_t;

static bool constant_in(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  (void)def;
  uses_data_t *u = v->ctx;
  if (e->kind == TJ_RX_CONSTANT && e->constant.data) {
    const unsigned char *d = e->constant.data;
    if (d < u->end && d + e->constant.nbytes > u->begin) u->found = true;
  }
  return !u->found;
}

/* Whether a Relax function of the module (`only` NULL: any) has a constant in
 * [data, data + nbytes). */
static bool reads_range(const tvmjit_module_t *module, const char *only, const unsigned char *data, size_t nbytes) {
  uses_data_t u = {data, data + nbytes, false};
  tj_rx_visitor_t v = {.expr = constant_in, .ctx = &u};
  for (int i = 0; i < module->ir->n_funcs && !u.found; i++)
    if (!module->ir->funcs[i].is_prim && (!only || strcmp(module->ir->funcs[i].name, only) == 0))
      tj_rx_visit_func(&v, module->ir->funcs[i].relax);
  return u.found;
}

int tvmjit_module_uses_tensor(const tvmjit_module_t *module, const tvmjit_tensor_t *tensor) {
  if (!module || !tensor || !module->ir) return 0;
  return reads_range(module, NULL, tvmjit_tensor_data(tensor), tvmjit_tensor_nbytes(tensor));
}

tvmjit_status_t *tvmjit_module_adopt_tensor(tvmjit_module_t *module, tvmjit_tensor_t *tensor) {
  if (!module) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_module_adopt_tensor: NULL module");
  if (!tensor) return NULL;
  if (!tvmjit_module_uses_tensor(module, tensor)) {
    tvmjit_tensor_free(tensor);
    return NULL;
  }
  pthread_mutex_lock(&module->lock);
  tj_status_t *st = NULL;
  if (module->n_adopted == module->cap_adopted) {
    int cap = module->cap_adopted ? 2 * module->cap_adopted : 16;
    struct adopted *p = tj_realloc(module->adopted, sizeof *p * (size_t)cap);
    if (!p) st = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "tvmjit_module_adopt_tensor: out of memory");
    else module->adopted = p, module->cap_adopted = cap;
  }
  if (!st)
    module->adopted[module->n_adopted++] =
        (struct adopted){tensor, tvmjit_tensor_data(tensor), tvmjit_tensor_nbytes(tensor)};
  pthread_mutex_unlock(&module->lock);
  return st;
}

/* tvmjit_tensor_free, with the data given back to the system instead of the allocator's
 * cache of large blocks (support/alloc.h), which would keep it resident: a weight freed
 * at load is gone for good. ResNet-18's cached start, Ice Lake host, 5 alternating runs
 * each: peak RSS 144 MiB through the cache (few packed weights have a freed weight's
 * size), 129 MiB without, compile CPU time no higher (median 77 vs 89 ms, noisy). */
static void tensor_free_uncached(tvmjit_tensor_t *tensor) {
  tj_tensor_free_uncached(tensor->t);
  if (tensor->managed && tensor->managed->deleter) tensor->managed->deleter(tensor->managed);
  tj_free(tensor);
}

/* The packer's hook (runtime/prepack_set.h) during the module's first compile: frees
 * the adopted tensor whose data nothing reads any more; into the allocator's cache when
 * a weight packed later will take its block. */
static void release_adopted(void *ctx, const void *data, bool reuse) {
  tvmjit_module_t *module = ctx;
  for (int i = 0; i < module->n_adopted; i++)
    if (module->adopted[i].tensor && module->adopted[i].data == data) {
      if (reuse) tvmjit_tensor_free(module->adopted[i].tensor); /* a weight packed next takes its block */
      else tensor_free_uncached(module->adopted[i].tensor);
      module->adopted[i].tensor = NULL;
      module->n_released++;
      module->released_bytes += module->adopted[i].nbytes;
    }
}

/* The report's line for the weights freed once packed. */
static tj_status_t *append_released(tvmjit_module_t *module) {
  if (!module->n_released) return NULL;
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_append(&sb, module->report ? module->report : "");
  tj_strbuf_printf(&sb, "weights: %d bound weights (%.1f MB) freed once packed\n", module->n_released,
                   (double)module->released_bytes / 1e6);
  char *text = tj_strbuf_take(&sb);
  if (!text) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  tj_free(module->report);
  module->report = text;
  return NULL;
}

/* A function compiled after weights were freed must not read them. */
static tj_status_t *check_not_released(const tvmjit_module_t *module, const char *name) {
  for (int i = 0; i < module->n_adopted; i++)
    if (!module->adopted[i].tensor && reads_range(module, name, module->adopted[i].data, module->adopted[i].nbytes))
      return tj_status_new(TJ_ERR_UNSUPPORTED,
                           "'%s' reads a bound weight that was freed once the first function compiled had packed it "
                           "(tvmjit_module_adopt_tensor): load the module again to compile '%s'",
                           name, name);
  return NULL;
}

/* `text` NULL: read the file `name`; else `name` (may be NULL) names the text in messages. */
static tj_status_t *module_load(tvmjit_instance_t *instance, const char *name, const char *text, size_t length,
                                const tvmjit_module_options_t *options, tvmjit_module_t **out_module) {
  tvmjit_module_options_t defaults;
  if (!options) {
    tvmjit_module_options_init(&defaults);
    options = &defaults;
  }
  tvmjit_module_t *mod = NULL;
  TJ_RETURN_IF_ERROR(module_new(instance, options, &mod));
  tj_pass_instruments_t ins = {
      .print_before = options->print_ir_before,
      .print_after = options->print_ir_after_all ? "*" : options->print_ir_after,
      .print_file = options->ir_dump,
      .time_passes = options->time_passes != 0,
      .verify_each = options->verify_each != 0,
  };
  tj_driver_passes_t passes = {options->passes, options->mixed_precision, &ins};
  tj_jit_options_t eval_opts;
  tj_fold_eval_t eval;
  tj_status_t *st = bind_options(mod, options, &passes, &eval_opts, &eval);
  if (st) {
    tvmjit_module_free(mod);
    return st;
  }
  tj_pass_report_t report = {0};
  st = tj_driver_load(mod->arena, text && !name ? "<string>" : name, text, length, &passes, &mod->ir,
                                   &report, &mod->parsed);
  if (!st) st = keep_report(mod, options, &report);
  if (!st) st = keep_pipeline(mod, options);
  if (st) {
    tvmjit_module_free(mod);
    return st;
  }
  *out_module = mod;
  return NULL;
}

tvmjit_status_t *tvmjit_module_load_string(tvmjit_instance_t *instance, const char *name, const char *text,
                                           size_t length, const tvmjit_module_options_t *options,
                                           tvmjit_module_t **out_module) {
  if (!instance || !text) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_module_load_string: NULL argument");
  return module_load(instance, name, text, length, options, out_module);
}

tvmjit_status_t *tvmjit_module_load_file(tvmjit_instance_t *instance, const char *path,
                                         const tvmjit_module_options_t *options, tvmjit_module_t **out_module) {
  if (!instance || !path) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_module_load_file: NULL argument");
  return module_load(instance, path, NULL, 0, options, out_module);
}

struct tj_specialization {
  tj_shape_binding_t binding;
  tj_arena_t *arena; /* the specialised IR, which the executable's names point into */
  tj_executable_t *exe;
  tj_specialization_t *next;
};

static void specialization_free(tj_specialization_t *s) {
  tj_executable_free(s->exe);
  tj_arena_free(s->arena);
  tj_free(s);
}

static void function_free(tvmjit_function_t *f) {
  for (tj_specialization_t *s = f->specs, *next; s; s = next) {
    next = s->next;
    specialization_free(s);
  }
  tj_jit_program_free(f->program);
  tj_free(f->inputs);
  tj_free(f->outputs);
  tj_executable_free(f->exe);
  tj_free(f->name);
  tj_free(f->input_dtypes);
  tj_free(f->output_dtypes);
  tj_free(f->memory_plan);
  tj_free(f);
}

void tvmjit_module_free(tvmjit_module_t *module) {
  if (!module) return;
  for (tvmjit_function_t *f = module->functions, *next; f; f = next) {
    next = f->next;
    function_free(f);
  }
  for (int i = 0; i < module->n_adopted; i++) tvmjit_tensor_free(module->adopted[i].tensor);
  tj_free(module->adopted);
  tj_free(module->report);
  tj_arena_free(module->arena);
  pthread_mutex_destroy(&module->lock);
  pthread_mutex_destroy(&module->messages_lock);
  tj_strbuf_free(&module->messages);
  tj_free(module);
}

/* Not locked: the report is appended to by lookups and by a symbolic function's first
 * call at each shape, which callers finish first. */
const char *tvmjit_module_report(const tvmjit_module_t *module) { return module->report ? module->report : ""; }

/* ---------------------------------------------------------------- functions */

/* f's signature (inputs, outputs and their public dtypes) from n_in/n_out descriptors. */
static tj_status_t *set_signature(tvmjit_function_t *f, int n_in, const tj_value_desc_t *in, int n_out,
                                  const tj_value_desc_t *out) {
  f->n_inputs = n_in;
  f->n_outputs = n_out;
  f->inputs = tj_calloc((size_t)n_in + 1, sizeof *f->inputs);
  f->outputs = tj_calloc((size_t)n_out + 1, sizeof *f->outputs);
  f->input_dtypes = tj_calloc((size_t)n_in + 1, sizeof *f->input_dtypes);
  f->output_dtypes = tj_calloc((size_t)n_out + 1, sizeof *f->output_dtypes);
  if (!f->inputs || !f->outputs || !f->input_dtypes || !f->output_dtypes)
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n_in; i++) f->input_dtypes[i] = to_public_dtype((f->inputs[i] = in[i]).dtype);
  for (int i = 0; i < n_out; i++) f->output_dtypes[i] = to_public_dtype((f->outputs[i] = out[i]).dtype);
  return NULL;
}

static tj_status_t *describe_function(tvmjit_function_t *f) {
  int ni = tj_executable_num_inputs(f->exe), no = tj_executable_num_outputs(f->exe);
  tj_value_desc_t *in = tj_calloc((size_t)ni + 1, sizeof *in), *out = tj_calloc((size_t)no + 1, sizeof *out);
  for (int i = 0; in && i < ni; i++) in[i] = *tj_executable_input(f->exe, i);
  for (int i = 0; out && i < no; i++) out[i] = *tj_executable_output(f->exe, i);
  f->memory_plan = tj_executable_memory_plan_text(f->exe);
  tj_status_t *st = in && out && f->memory_plan ? set_signature(f, ni, in, no, out)
                                                : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  tj_free(in);
  tj_free(out);
  return st;
}

/* A symbolic function: its signature from the Relax params, -1 for symbolic dims;
 * nothing is compiled until a call binds the vars. */
static tj_status_t *describe_symbolic(tvmjit_module_t *module, tvmjit_function_t *f, const tj_rx_func_t *rx) {
  int ni, no;
  tj_value_desc_t *in, *out;
  TJ_RETURN_IF_ERROR(tj_signature_describe(module->arena, rx, false, &ni, &in));
  TJ_RETURN_IF_ERROR(tj_signature_describe(module->arena, rx, true, &no, &out));
  f->module = module;
  f->flops = -1;
  f->memory_plan = tj_strdup("memory plan: made per input shape (the function has symbolic dims)\n");
  return f->memory_plan ? set_signature(f, ni, in, no, out) : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
}

static tj_status_t *append_stats(tvmjit_module_t *module, const tj_jit_stats_t *s) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_append(&sb, module->report ? module->report : "");
  tj_strbuf_printf(&sb,
                   "jit: %d kernels requested, %d compiled, %d loaded from cache; %.1f ms (lower %.1f, "
                   "codegen %.1f, optimize %.1f, emit %.1f, link %.1f)\n",
                   s->kernels_requested, s->kernels_compiled, s->kernels_loaded, s->total_ms, s->lower_ms,
                   s->codegen_ms, s->optimize_ms, s->emit_ms, s->link_ms);
  char *text = tj_strbuf_take(&sb);
  if (!text) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  tj_free(module->report);
  module->report = text;
  return NULL;
}

static tj_status_t *get_function_locked(tvmjit_module_t *module, const char *name, tvmjit_function_t **out_function);

tvmjit_status_t *tvmjit_module_get_function(tvmjit_module_t *module, const char *name,
                                            tvmjit_function_t **out_function) {
  if (!module || !name) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_module_get_function: NULL argument");
  pthread_mutex_lock(&module->lock);
  tj_status_t *st = get_function_locked(module, name, out_function);
  pthread_mutex_unlock(&module->lock);
  return st;
}

/* "no Relax function 'x' (its Relax functions: main, ...)": the fix is one of those. */
static tj_status_t *not_found(const tj_module_t *m, const char *name) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; i < m->n_funcs; i++)
    if (!m->funcs[i].is_prim) tj_strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", m->funcs[i].name);
  tj_status_t *st = tj_status_new(TJ_ERR_NOT_FOUND, "the module has no Relax function '%s' (its Relax functions: %s)",
                                  name, sb.data && !sb.failed ? sb.data : "none");
  tj_strbuf_free(&sb);
  return st;
}

/* JIT-compiles Relax function `name` of the lowered module `m` with the module's options. */
static tj_status_t *compile_function(tvmjit_module_t *module, const tj_module_t *m, const char *name,
                                     tj_executable_t **out_exe) {
  tj_jit_stats_t stats = {0};
  /* Default O2, not O3: measured on the seed, O3 kernels ran about 2x slower (113-129 ms vs
   * 43-55 ms a run) and compiled slower (781 vs 482 ms), mostly from over-unrolling. */
  tj_jit_messages_t messages = {module_message, module, module->cache_debug};
  bool cached = module->use_cache && module->instance->cache;
  if (!cached && module->cache_debug)
    module_message(module, TJ_JIT_MSG_DEBUG,
                   module->instance->cache ? "cache: off for this module (use_cache = 0)"
                                           : "cache: off (TVMJIT_CACHE=0, --no-cache or cache.enable = 0)");
  /* borrow_constants: the module's arena (or the specialisation's) outlives the
   * executable, and bound weights are the caller's, kept as long as the module. */
  tj_jit_options_t opts = {.opt_level = module->opt_level, .stats = &stats, .messages = &messages, .no_cache = !cached,
                           .no_schedule = module->no_schedule, .no_prepack = module->no_prepack,
                           .relaxed_float = module->relaxed_float, .borrow_constants = true};
  /* Adopted weights may go as they are packed, unless an executable made earlier
   * borrows them. */
  if (module->n_adopted && !module->functions && m == module->ir) {
    opts.release_constant = release_adopted;
    opts.release_ctx = module;
  }
  tj_status_t *st = tj_driver_compile(module->instance->jit, m, name, &opts, module->instance->pool, out_exe);
  if (!st) st = append_stats(module, &stats);
  if (!st && opts.release_constant) st = append_released(module);
  return st;
}

/* One compile for every binding (jit.h's program). What the program cannot express
 * (a var bound by match_cast, a shape var only inside expressions) is specialised per
 * binding instead, as before: slower to warm up, never wrong. */
static tj_status_t *compile_symbolic(tvmjit_module_t *module, tvmjit_function_t *f) {
  tj_jit_stats_t stats = {0};
  tj_jit_messages_t messages = {module_message, module, module->cache_debug};
  bool cached = module->use_cache && module->instance->cache;
  tj_jit_options_t opts = {.opt_level = module->opt_level, .stats = &stats, .messages = &messages, .no_cache = !cached,
                           .no_schedule = module->no_schedule, .no_prepack = module->no_prepack,
                           .relaxed_float = module->relaxed_float};
  tj_status_t *st = tj_jit_compile_program(module->instance->jit, module->ir, f->name, &opts, &f->program);
  if (st && tj_status_code(st) == TJ_ERR_UNSUPPORTED) {
    if (module->cache_debug) module_message(module, TJ_JIT_MSG_DEBUG, tj_status_text(st));
    tj_status_free(st);
    f->program = NULL;
    return NULL;
  }
  if (st) return st;
  tj_free(f->memory_plan);
  f->memory_plan = tj_strdup("memory plan: made once per binding of the symbolic vars (the function has symbolic dims)\n");
  if (!f->memory_plan) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  return append_stats(module, &stats);
}

static tj_status_t *get_function_locked(tvmjit_module_t *module, const char *name, tvmjit_function_t **out_function) {
  for (tvmjit_function_t *f = module->functions; f; f = f->next)
    if (strcmp(f->name, name) == 0) return *out_function = f, NULL;
  if (!tj_module_find_relax(module->ir, name)) return not_found(module->ir, name);
  tvmjit_function_t *f = tj_calloc(1, sizeof *f);
  if (!f || !(f->name = tj_strdup(name))) {
    tj_free(f);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  }
  const tj_rx_func_t *parsed = tj_module_find_relax(module->parsed, name);
  tj_status_t *st = NULL;
  if (parsed && tj_signature_is_symbolic(parsed) && module->bound_params) {
    st = tj_status_new(TJ_ERR_UNSUPPORTED,
                       "'%s' has symbolic dims: binding parameters (bind_params) is supported for static shapes "
                       "only; load the module without bind_params",
                       name);
  } else if (parsed && tj_signature_is_symbolic(parsed)) {
    st = describe_symbolic(module, f, parsed);
    if (!st) st = compile_symbolic(module, f);
  } else {
    st = check_not_released(module, name);
    if (!st) st = compile_function(module, module->ir, name, &f->exe);
    if (!st) st = describe_function(f);
    if (!st && !tj_flops_relax_func(module->ir, name, &f->flops)) f->flops = -1;
  }
  if (st) {
    function_free(f); /* the JIT's message already says "JIT-compiling 'name'" */
    return st;
  }
  f->next = module->functions;
  module->functions = f;
  *out_function = f;
  return NULL;
}

/* ---------------------------------------------------------------- symbolic functions */

static tj_specialization_t *find_specialization(const tvmjit_function_t *f, const tj_shape_binding_t *b) {
  for (tj_specialization_t *s = f->specs; s; s = s->next)
    if (s->binding.n == b->n && memcmp(s->binding.values, b->values, sizeof b->values[0] * (size_t)b->n) == 0) return s;
  return NULL;
}

/* BindSymbolicVars on the parsed module, the module's passes, then the JIT. Every
 * specialisation stays compiled for the function's lifetime (calls may still use it). */
static tj_status_t *specialize(tvmjit_function_t *f, const tj_shape_binding_t *b, tj_specialization_t **out) {
  tvmjit_module_t *module = f->module;
  tj_specialization_t *s = tj_calloc(1, sizeof *s);
  if (!s || !(s->arena = tj_arena_create())) {
    tj_free(s);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  }
  s->binding = *b;
  const tj_module_t *bound = NULL, *lowered = NULL;
  tj_driver_passes_t passes = {module->passes, module->mixed_precision, NULL};
  tj_status_t *st = tj_bind_symbolic_vars(s->arena, module->parsed, f->name, b->n, b->vars, b->values, &bound);
  if (!st) st = tj_driver_run_passes(s->arena, &passes, bound, &lowered, NULL);
  if (!st) st = compile_function(module, lowered, f->name, &s->exe);
  if (st) {
    specialization_free(s);
    return st;
  }
  s->next = f->specs;
  f->specs = s;
  *out = s;
  return NULL;
}

/* The program's executable for binding b: made once per binding (no compile), kept for
 * the function's lifetime so that repeated calls at one size plan nothing. */
static tj_status_t *instantiate(tvmjit_function_t *f, const tj_shape_binding_t *b, tj_specialization_t **out) {
  int n = tj_jit_program_num_vars(f->program);
  const tj_tir_expr_t *const *vars = tj_jit_program_vars(f->program);
  int64_t values[TJ_MAX_SYMBOLIC_VARS];
  for (int k = 0; k < n && k < TJ_MAX_SYMBOLIC_VARS; k++) {
    values[k] = -1;
    for (int j = 0; j < b->n; j++)
      if (b->vars[j] == vars[k]) values[k] = b->values[j];
  }
  tj_specialization_t *s = tj_calloc(1, sizeof *s);
  if (!s) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  s->binding = *b;
  tj_status_t *st = tj_jit_program_instantiate(f->program, values, &s->exe);
  if (st) {
    tj_free(s);
    return st;
  }
  tj_executable_set_thread_pool(s->exe, f->module->instance->pool);
  s->next = f->specs;
  f->specs = s;
  *out = s;
  return NULL;
}

tj_status_t *tj_api_function_executable(const tvmjit_function_t *function, int n_inputs, const tj_tensor_t *const *inputs,
                                        tj_executable_t **out_exe) {
  tvmjit_function_t *f = (tvmjit_function_t *)function; /* the specialisations are a cache */
  if (f->exe) return *out_exe = f->exe, NULL;
  if (f->program) {
    tj_shape_binding_t b;
    TJ_RETURN_IF_ERROR(tj_signature_bind(tj_module_find_relax(f->module->ir, f->name), n_inputs, inputs, &b));
    pthread_mutex_lock(&f->module->lock);
    tj_specialization_t *s = find_specialization(f, &b);
    tj_status_t *st = s ? NULL : instantiate(f, &b, &s);
    pthread_mutex_unlock(&f->module->lock);
    if (!st) *out_exe = s->exe;
    return st;
  }
  tj_shape_binding_t b;
  TJ_RETURN_IF_ERROR(tj_signature_bind(tj_module_find_relax(f->module->parsed, f->name), n_inputs, inputs, &b));
  pthread_mutex_lock(&f->module->lock);
  tj_specialization_t *s = find_specialization(f, &b);
  tj_status_t *st = s ? NULL : specialize(f, &b, &s);
  pthread_mutex_unlock(&f->module->lock);
  if (!st) *out_exe = s->exe;
  return st;
}

/* The executable whose kernel calls describe f: its own, or its first specialisation
 * (NULL before the first call). */
static const tj_executable_t *describing_executable(const tvmjit_function_t *f) {
  if (f->exe) return f->exe;
  pthread_mutex_lock(&f->module->lock);
  const tj_specialization_t *s = f->specs;
  while (s && s->next) s = s->next;
  pthread_mutex_unlock(&f->module->lock);
  return s ? s->exe : NULL;
}

int tvmjit_function_num_inputs(const tvmjit_function_t *function) { return function->n_inputs; }

int tvmjit_function_num_outputs(const tvmjit_function_t *function) { return function->n_outputs; }

int tvmjit_function_input_info(const tvmjit_function_t *function, int i, const char **out_name,
                               tvmjit_dtype_t *out_dtype, int *out_ndim, const int64_t **out_shape) {
  if (i < 0 || i >= function->n_inputs) return -1;
  const tj_value_desc_t *d = &function->inputs[i];
  if (out_name) *out_name = d->name;
  if (out_dtype) *out_dtype = function->input_dtypes[i];
  if (out_ndim) *out_ndim = d->ndim;
  if (out_shape) *out_shape = d->shape;
  return 0;
}

int tvmjit_function_output_info(const tvmjit_function_t *function, int i, tvmjit_dtype_t *out_dtype, int *out_ndim,
                                const int64_t **out_shape) {
  if (i < 0 || i >= function->n_outputs) return -1;
  const tj_value_desc_t *d = &function->outputs[i];
  if (out_dtype) *out_dtype = function->output_dtypes[i];
  if (out_ndim) *out_ndim = d->ndim;
  if (out_shape) *out_shape = d->shape;
  return 0;
}

const char *tvmjit_function_memory_plan(const tvmjit_function_t *function) { return function->memory_plan; }

double tvmjit_function_flops(const tvmjit_function_t *function) { return function->flops; }

int tvmjit_function_num_kernel_calls(const tvmjit_function_t *function) {
  const tj_executable_t *exe = describing_executable(function);
  return exe ? tj_executable_num_calls(exe) : 0;
}

const char *tvmjit_function_kernel_call_name(const tvmjit_function_t *function, int i) {
  const tj_executable_t *exe = describing_executable(function);
  return exe ? tj_executable_call_kernel(exe, i) : NULL;
}

tvmjit_status_t *tvmjit_function_call(const tvmjit_function_t *function, int n_inputs,
                                      const tvmjit_tensor_t *const *inputs, int n_outputs,
                                      tvmjit_tensor_t **out_outputs) {
  return tvmjit_function_call_profiled(function, n_inputs, inputs, n_outputs, out_outputs, NULL);
}

/* Up to this many inputs and outputs, a call keeps its argument tables on the stack (a
 * one-relu model's call made 3 of its 9 allocations for them). */
enum { CALL_STACK_ARGS = 16 };

/* The output handles, allocated before the run so that nothing can fail after it (a
 * finished run keeps its workspace for the next call: runtime/executable.h). */
static tj_status_t *alloc_output_handles(int n_outputs, tvmjit_tensor_t **handles) {
  for (int i = 0; i < n_outputs; i++) {
    handles[i] = tj_calloc(1, sizeof *handles[i]);
    if (!handles[i]) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor handle");
  }
  return NULL;
}

tvmjit_status_t *tvmjit_function_call_profiled(const tvmjit_function_t *function, int n_inputs,
                                               const tvmjit_tensor_t *const *inputs, int n_outputs,
                                               tvmjit_tensor_t **out_outputs, double *out_call_ms) {
  if (!function || (n_inputs > 0 && !inputs) || (n_outputs > 0 && !out_outputs))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tvmjit_function_call: NULL argument");
  int want_out = function->n_outputs;
  if (n_outputs != want_out)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "'%s' returns %d output(s), but room for %d was given", function->name,
                         want_out, n_outputs);
  const tj_tensor_t *in_stack[CALL_STACK_ARGS];
  tj_tensor_t *out_stack[CALL_STACK_ARGS] = {0};
  tvmjit_tensor_t *handles_stack[CALL_STACK_ARGS] = {0};
  bool small_in = n_inputs <= CALL_STACK_ARGS, small_out = n_outputs <= CALL_STACK_ARGS;
  const tj_tensor_t **in = small_in ? in_stack : tj_calloc((size_t)n_inputs + 1, sizeof *in);
  tj_tensor_t **out = small_out ? out_stack : tj_calloc((size_t)n_outputs + 1, sizeof *out);
  tvmjit_tensor_t **handles = small_out ? handles_stack : tj_calloc((size_t)n_outputs + 1, sizeof *handles);
  tj_status_t *st = (in && out && handles) ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n_inputs && !st; i++) {
    if (!inputs[i]) st = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input %d is NULL", i);
    else in[i] = inputs[i]->t;
  }
  tj_executable_t *exe = NULL;
  if (!st) st = tj_api_function_executable(function, n_inputs, in, &exe);
  if (!st) st = alloc_output_handles(n_outputs, handles);
  if (!st) st = tj_executable_run_timed(exe, n_inputs, in, n_outputs, out, out_call_ms);
  if (!st)
    for (int i = 0; i < n_outputs; i++) {
      handles[i]->t = out[i];
      out_outputs[i] = handles[i];
    }
  else if (handles)
    for (int i = 0; i < n_outputs; i++) tj_free(handles[i]);
  if (!small_in) tj_free(in);
  if (!small_out) {
    tj_free(out);
    tj_free(handles);
  }
  return st ? tj_status_annotate(st, "calling '%s'", function->name) : NULL;
}
