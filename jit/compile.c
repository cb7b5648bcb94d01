/* The compile driver: PrimFunc -> kernel (with the in-memory table), and a Relax
 * `main` made of call_tir bindings -> executable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ir/struct_equal.h"
#include "jit/build.h"
#include "runtime/prepack_set.h"
#include "support/alloc.h"
#include "support/strbuf.h"
#include "transforms/legalize/legalize.h"
#include "transforms/tir/lower.h"
#include "transforms/tir/row_split.h"
#include "transforms/tir/shape_params.h"

static void stats_add(tj_jit_stats_t *into, const tj_jit_stats_t *d) {
  into->kernels_requested += d->kernels_requested;
  into->kernels_compiled += d->kernels_compiled;
  into->kernels_loaded += d->kernels_loaded;
  into->lower_ms += d->lower_ms;
  into->codegen_ms += d->codegen_ms;
  into->optimize_ms += d->optimize_ms;
  into->emit_ms += d->emit_ms;
  into->link_ms += d->link_ms;
  into->total_ms += d->total_ms;
}

/* ---------------- one kernel ---------------- */

/* Caller holds jit->lock. Entries loaded from the disk cache have no text. */
static const tj_jit_entry_t *find_entry(const tj_jit_t *jit, uint64_t hash, const char *text) {
  for (int i = 0; i < jit->n_entries; i++)
    if (jit->entries[i].text && jit->entries[i].text_hash == hash && strcmp(jit->entries[i].text, text) == 0)
      return &jit->entries[i];
  return NULL;
}

/* Caller holds jit->lock. */
static const tj_jit_entry_t *find_entry_by_key(const tj_jit_t *jit, const uint8_t key[16]) {
  for (int i = 0; i < jit->n_entries; i++)
    if (memcmp(jit->entries[i].key, key, 16) == 0) return &jit->entries[i];
  return NULL;
}

static void entry_to_kernel(const tj_jit_entry_t *e, tj_jit_kernel_t *out, tj_tir_prepacks_t *out_prepacks) {
  *out = (tj_jit_kernel_t){e->symbol, e->fn, e->n_buffers, e->n_scalars};
  *out_prepacks = e->prepacks;
}

/* "tvmjit_<name>_<hash>" with the name reduced to C identifier characters. */
static char *make_symbol(const char *name, uint64_t hash) {
  size_t n = strlen(name);
  char *s = tj_malloc(n + 32);
  if (!s) return NULL;
  int len = snprintf(s, n + 32, "tvmjit_");
  for (size_t i = 0; i < n && i < 64; i++) {
    char ch = name[i];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    s[len++] = ok ? ch : '_';
  }
  snprintf(s + len, 24, "_%016llx", (unsigned long long)hash);
  return s;
}

/* Caller holds jit->lock; takes `text` and `symbol` on success. */
static tj_status_t *insert_entry(tj_jit_t *jit, const tj_jit_entry_t *e, const tj_jit_entry_t **out) {
  if (jit->n_entries == jit->cap_entries) {
    int cap = jit->cap_entries ? jit->cap_entries * 2 : 16;
    tj_jit_entry_t *p = tj_realloc(jit->entries, sizeof(*p) * (size_t)cap);
    if (!p) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "JIT kernel table: out of memory");
    jit->entries = p;
    jit->cap_entries = cap;
  }
  jit->entries[jit->n_entries] = *e;
  *out = &jit->entries[jit->n_entries++];
  return NULL;
}

/* Caller holds jit->lock. The entry of `key` for the code of `same` (another key whose
 * kernel lowered to the same text), with its own packed weights' descriptions. */
static tj_status_t *insert_alias(tj_jit_t *jit, const uint8_t key[16], const tj_jit_entry_t *same,
                                 const tj_tir_prepacks_t *prepacks, const tj_jit_entry_t **out) {
  tj_jit_entry_t e = *same;
  memcpy(e.key, key, 16);
  e.text = NULL;
  e.text_hash = 0;
  e.symbol = tj_strdup(same->symbol);
  e.prepacks = *prepacks;
  if (!e.symbol) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "JIT kernel table: out of memory");
  tj_status_t *s = insert_entry(jit, &e, out);
  if (s) tj_free(e.symbol);
  return s;
}

void tj_jit_set_object_cache(tj_jit_t *jit, const tj_jit_object_cache_t *cache) {
  pthread_mutex_lock(&jit->lock);
  if (cache) jit->cache = *cache;
  else memset(&jit->cache, 0, sizeof jit->cache);
  pthread_mutex_unlock(&jit->lock);
}


/* The object cache hooks for this compile (none with opts->no_cache). */
static tj_jit_object_cache_t cache_of(tj_jit_t *jit, const tj_jit_options_t *opts) {
  pthread_mutex_lock(&jit->lock);
  tj_jit_object_cache_t cache = jit->cache;
  pthread_mutex_unlock(&jit->lock);
  if (opts && opts->no_cache) memset(&cache, 0, sizeof cache);
  return cache;
}


/* Every schedule option, as text. Lowering reads nothing else but the PrimFunc (the
 * options come from the host's features and the environment: tj_jit_schedule_options). */
_Static_assert(sizeof(tj_tir_schedule_options_t) == 40,
               "tj_tir_schedule_options_t changed: put the new option in the cache key (schedule_text)");
static void schedule_text(const tj_tir_schedule_options_t *o, char *out, size_t len) {
  snprintf(out, len,
           "enabled=%d vector_bits=%d conv_tile=%d datapath_bits=%d fp_contract=%d reorder_reductions=%d winograd=%d "
           "native_f16=%d bf16_dot=%d constant_params=%016llx prepacked=%d",
           o->enabled, o->vector_bits, o->conv_tile, o->datapath_bits, o->fp_contract, o->reorder_reductions,
           o->winograd, o->native_f16, o->bf16_dot, (unsigned long long)o->constant_params, o->prepacked != NULL);
}

/* The symbol's hash: from the key, so kernels of two keys that lower alike, each
 * compiled by another process and both loaded from the disk cache into one JIT, do not
 * define the same symbol (the table cannot tell: a loaded kernel has no lowered text). */
static uint64_t key_word(const cache_key_t *key) {
  uint64_t w;
  memcpy(&w, key->hash, sizeof w);
  return w;
}

static int key_parts(const cache_key_t *key, int opt_level, tj_jit_key_part_t *parts) {
  return tj_jit_cache_key_parts(key->schedule, key->func, opt_level, parts);
}

static bool make_key(const tj_prim_func_t *f, const char *name, const tj_tir_schedule_options_t *sched, int opt_level,
                     cache_key_t *out) {
  uint8_t digest[16];
  if (!tj_jit_func_digest(f, name, digest)) return false;
  for (int i = 0; i < 16; i++) snprintf(out->func + 2 * i, 3, "%02x", digest[i]);
  schedule_text(sched, out->schedule, sizeof out->schedule);
  tj_jit_key_part_t parts[TJ_JIT_KEY_PARTS];
  tj_jit_cache_key_hash(parts, key_parts(out, opt_level, parts), out->hash);
  return true;
}

/* The object for a kernel from the disk cache, with the descriptions of the weights it
 * reads packed (checked against `f`, the un-lowered PrimFunc); false on a miss, an
 * unusable entry (warned about) or no cache. */
static bool load_cached(tj_jit_t *jit, const char *name, const tj_prim_func_t *f, const cache_key_t *key,
                        const tj_jit_options_t *opts, int opt_level, tj_jit_stats_t *acc, tj_jit_object_t *out,
                        tj_tir_prepacks_t *out_prepacks) {
  tj_jit_object_cache_t cache = cache_of(jit, opts);
  if (!cache.load) return false;
  tj_jit_key_part_t parts[TJ_JIT_KEY_PARTS];
  tj_jit_cache_lookup_t lookup = {name, parts, key_parts(key, opt_level, parts), opts ? opts->messages : NULL,
                                  key->hash};
  tj_jit_object_t obj = {0};
  char why[256];
  if (cache.load(cache.ctx, &lookup, &obj) && obj.symbol && obj.bytes) {
    if (tj_jit_meta_decode(obj.meta, obj.meta_size, f, obj.n_buffers, obj.n_scalars, out_prepacks, why, sizeof why)) {
      acc->kernels_loaded++;
      *out = obj;
      return true;
    }
    tj_jit_say(opts ? opts->messages : NULL, TJ_JIT_MSG_WARNING,
               "cache entry for kernel '%s' is unusable: %s; recompiling and replacing it", name, why);
  }
  tj_jit_object_free(&obj);
  return false;
}

/* Offers a freshly compiled object, with its packed weights' descriptions, to the disk
 * cache under `key`. */
static void store_cached(tj_jit_t *jit, const char *name, const cache_key_t *key, const tj_jit_options_t *opts,
                         int opt_level, tj_jit_object_t *obj, const tj_tir_prepacks_t *prepacks) {
  tj_jit_object_cache_t cache = cache_of(jit, opts);
  if (!cache.store) return;
  tj_free(obj->meta);
  obj->meta = NULL;
  tj_status_t *s = tj_jit_meta_encode(prepacks, &obj->meta, &obj->meta_size);
  if (s) {
    tj_status_free(s); /* not cached: the kernel is still used */
    return;
  }
  tj_jit_key_part_t parts[TJ_JIT_KEY_PARTS];
  tj_jit_cache_lookup_t lookup = {name, parts, key_parts(key, opt_level, parts), opts ? opts->messages : NULL,
                                  key->hash};
  cache.store(cache.ctx, &lookup, obj);
}

/* Adds a kernel's object to the JIT and to the table under `key` (unless another
 * thread added the same kernel meanwhile: its code is used); takes the object's
 * strings. */
static tj_status_t *add_kernel(tj_jit_t *jit, tj_jit_object_t *obj, const cache_key_t *key, uint64_t hash,
                               const tj_tir_prepacks_t *prepacks, tj_jit_stats_t *acc, tj_jit_kernel_t *out) {
  double t1 = tj_jit_now_ms();
  pthread_mutex_lock(&jit->lock);
  const tj_jit_entry_t *hit = find_entry_by_key(jit, key->hash);
  tj_status_t *s = NULL;
  if (!hit && obj->canonical_text && (hit = find_entry(jit, hash, obj->canonical_text)))
    s = insert_alias(jit, key->hash, hit, prepacks, &hit);
  void (*fn)(void) = NULL;
  if (!hit && !s) s = tj_jit_add_object_locked(jit, obj, &fn);
  if (!hit && !s) {
    tj_jit_entry_t e = {.text_hash = hash, .text = obj->canonical_text, .symbol = obj->symbol, .fn = fn,
                        .n_buffers = obj->n_buffers, .n_scalars = obj->n_scalars, .prepacks = *prepacks};
    memcpy(e.key, key->hash, 16);
    s = insert_entry(jit, &e, &hit);
    if (!s) obj->canonical_text = NULL, obj->symbol = NULL;
  }
  tj_tir_prepacks_t unused;
  if (!s) entry_to_kernel(hit, out, &unused);
  pthread_mutex_unlock(&jit->lock);
  acc->link_ms += tj_jit_now_ms() - t1;
  return s;
}

/* ---------------- kernels compiled together ---------------- */


static void queue_free(kernel_queue_t *q) {
  for (int i = 0; i < q->n; i++) {
    tj_arena_free(q->items[i].arena);
    tj_free(q->items[i].text);
    tj_free(q->items[i].symbol);
  }
  tj_free(q->items);
  memset(q, 0, sizeof *q);
}

static int queue_find_key(const kernel_queue_t *q, const uint8_t key[16]) {
  for (int i = 0; i < q->n; i++)
    if (memcmp(q->items[i].key.hash, key, 16) == 0) return i;
  return -1;
}

static int queue_find_text(const kernel_queue_t *q, uint64_t hash, const char *text) {
  for (int i = 0; i < q->n; i++)
    if (q->items[i].hash == hash && strcmp(q->items[i].text, text) == 0) return i;
  return -1;
}

/* The kernel's ABI without compiling it: buffers first, then scalars (codegen.c). */
static tj_jit_kernel_t abi_of(const tj_prim_func_t *low) {
  tj_jit_kernel_t k = {0};
  for (int i = 0; i < low->n_params; i++) (low->buffer_map && low->buffer_map[i]) ? k.n_buffers++ : k.n_scalars++;
  return k;
}

/* Takes the arena and the text on success. */
static tj_status_t *queue_push(kernel_queue_t *q, tj_arena_t *arena, const tj_prim_func_t *low, const char *name,
                               uint64_t hash, char *text, const cache_key_t *key, const tj_tir_prepacks_t *prepacks,
                               int *out_index) {
  if (q->n == q->cap) {
    int cap = q->cap ? q->cap * 2 : 16;
    pending_kernel_t *p = tj_realloc(q->items, sizeof *p * (size_t)cap);
    if (!p) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "compiling '%s': out of memory", name);
    q->items = p;
    q->cap = cap;
  }
  char *symbol = make_symbol(name, key_word(key));
  if (!symbol) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "compiling '%s': out of memory", name);
  q->items[q->n] = (pending_kernel_t){arena, low, name, hash, text, symbol, *key, *prepacks, abi_of(low)};
  *out_index = q->n++;
  return NULL;
}

static int longest_first(const void *a, const void *b) {
  const tj_jit_job_t *x = a, *y = b;
  return x->cost < y->cost ? 1 : x->cost > y->cost ? -1 : x->order - y->order;
}

static int by_queue_order(const void *a, const void *b) {
  return ((const tj_jit_job_t *)a)->order - ((const tj_jit_job_t *)b)->order;
}

/* Compiles every queued kernel (in parallel), then in queue order offers each to the
 * disk cache and adds it to the JIT. The first failure is returned. */
static tj_status_t *compile_queue(tj_jit_t *jit, kernel_queue_t *q, const tj_jit_options_t *opts, int opt_level,
                                  LLVMTargetMachineRef tm, tj_jit_stats_t *acc) {
  if (!q->n) return NULL;
  tj_jit_job_t *jobs = tj_calloc((size_t)q->n, sizeof *jobs);
  if (!jobs) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "JIT compile: out of memory");
  for (int i = 0; i < q->n; i++) jobs[i] = (tj_jit_job_t){.lowered = q->items[i].lowered, .symbol = q->items[i].symbol, .order = i,
                            .cost = strlen(q->items[i].text)};
  /* Longest first (text length: about the code's size), so no thread ends with a big
   * kernel alone while the others wait. */
  qsort(jobs, (size_t)q->n, sizeof *jobs, longest_first);
  tj_jit_emit_parallel(jobs, q->n, opt_level, tm);
  qsort(jobs, (size_t)q->n, sizeof *jobs, by_queue_order);
  tj_status_t *s = NULL;
  for (int i = 0; i < q->n; i++) {
    pending_kernel_t *p = &q->items[i];
    acc->codegen_ms += jobs[i].acc.codegen_ms;
    acc->optimize_ms += jobs[i].acc.optimize_ms;
    acc->emit_ms += jobs[i].acc.emit_ms;
    if (!s && jobs[i].status) s = tj_status_annotate(jobs[i].status, "compiling PrimFunc '%s'", p->name);
    else tj_status_free(jobs[i].status);
    if (s) {
      tj_jit_object_free(&jobs[i].obj);
      continue;
    }
    acc->kernels_compiled++;
    store_cached(jit, p->name, &p->key, opts, opt_level, &jobs[i].obj, &p->prepacks);
    s = add_kernel(jit, &jobs[i].obj, &p->key, p->hash, &p->prepacks, acc, &p->k);
    tj_jit_object_free(&jobs[i].obj);
  }
  tj_free(jobs);
  return s;
}

/* ---------------- one kernel ---------------- */

/* The kernel of `key` when this process has it: in the table, or queued (*out_pending
 * then says where; `out` has its ABI but no code yet). */
static bool find_known(tj_jit_t *jit, const cache_key_t *key, kernel_queue_t *queue, tj_jit_kernel_t *out,
                       int *out_pending, tj_tir_prepacks_t *out_prepacks) {
  pthread_mutex_lock(&jit->lock);
  const tj_jit_entry_t *hit = find_entry_by_key(jit, key->hash);
  if (hit) entry_to_kernel(hit, out, out_prepacks);
  pthread_mutex_unlock(&jit->lock);
  int queued = hit || !queue ? -1 : queue_find_key(queue, key->hash);
  if (queued >= 0) {
    *out = queue->items[queued].k;
    *out_prepacks = queue->items[queued].prepacks;
    *out_pending = queued;
  }
  return hit || queued >= 0;
}

/* Lowers `f` (its shape vars already params) and gets its code: a table entry of the
 * same lowered text, a queued kernel of that text, else (queue) queued, or (no queue)
 * compiled, stored and added. *out_prepacks: what lowering said. */
static tj_status_t *lower_and_obtain(tj_jit_t *jit, tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                     const cache_key_t *key, tj_tir_schedule_options_t *sched,
                                     const tj_jit_options_t *opts, int opt_level, LLVMTargetMachineRef tm,
                                     tj_jit_stats_t *acc, kernel_queue_t *queue, int *out_pending,
                                     tj_jit_kernel_t *out, tj_tir_prepacks_t *out_prepacks, bool *out_arena_taken) {
  double t0 = tj_jit_now_ms();
  const tj_prim_func_t *low = NULL;
  sched->prepacked = sched->constant_params ? out_prepacks : NULL;
  tj_status_t *s = tj_tir_lower_scheduled(arena, f, name, sched, &low);
  char *text = s ? NULL : tj_jit_kernel_text(low);
  if (!s && !text) s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "compiling '%s': out of memory", name);
  acc->lower_ms += tj_jit_now_ms() - t0;
  if (s) return s;
  uint64_t hash = XXH3_64bits(text, strlen(text));
  pthread_mutex_lock(&jit->lock);
  const tj_jit_entry_t *hit = find_entry(jit, hash, text);
  if (hit) s = insert_alias(jit, key->hash, hit, out_prepacks, &hit);
  if (hit && !s) *out = (tj_jit_kernel_t){hit->symbol, hit->fn, hit->n_buffers, hit->n_scalars};
  pthread_mutex_unlock(&jit->lock);
  int queued = hit || !queue ? -1 : queue_find_text(queue, hash, text);
  if (hit || queued >= 0 || s) {
    if (!s)
      tj_jit_say(opts ? opts->messages : NULL, TJ_JIT_MSG_DEBUG,
                 "cache: %s: in-memory hit (compiled earlier by this process)", name);
    if (queued >= 0) *out = abi_of(low), *out_pending = queued;
    tj_free(text);
    return s;
  }
  if (queue) {
    *out = abi_of(low);
    s = queue_push(queue, arena, low, name, hash, text, key, out_prepacks, out_pending);
    if (!s) *out_arena_taken = true;
    else tj_free(text);
    return s;
  }
  tj_jit_object_t obj = {0};
  char *symbol = make_symbol(name, key_word(key));
  s = symbol ? tj_jit_emit_object_with(low, symbol, opt_level, tm, &obj, acc)
             : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "compiling '%s': out of memory", name);
  tj_free(symbol);
  tj_free(text);
  if (!s) acc->kernels_compiled++;
  if (!s) store_cached(jit, name, key, opts, opt_level, &obj, out_prepacks);
  if (!s) s = add_kernel(jit, &obj, key, hash, out_prepacks, acc, out);
  tj_jit_object_free(&obj);
  return s;
}

/* The kernel for f: from the table (by its key), queued earlier, from the disk cache,
 * else lowered and then found by its lowered text, queued or compiled with `tm`. With
 * a queue, a kernel in neither cache is queued (*out_pending is its index, and `out`
 * has its ABI but no code yet); else *out_pending is -1. Times go to `acc`. Shape vars
 * become trailing scalars (shape_params.h): *out_n_shape of them, described in
 * out_shape (room for TJ_TIR_MAX_SHAPE_PARAMS; both may be NULL). */
static tj_status_t *compile_kernel(tj_jit_t *jit, const tj_prim_func_t *f, const char *name,
                                   const tj_jit_options_t *opts, int opt_level, bool schedule,
                                   LLVMTargetMachineRef tm, tj_jit_stats_t *acc, kernel_queue_t *queue,
                                   int *out_pending, tj_jit_kernel_t *out, int *out_n_shape,
                                   tj_tir_shape_param_t *out_shape, uint64_t constant_params,
                                   tj_tir_prepacks_t *out_prepacks) {
  double t0 = tj_jit_now_ms();
  int pending = -1;
  tj_tir_prepacks_t prepacks = {.n = 0};
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "compiling '%s': out of memory", name);
  tj_tir_schedule_options_t sched = tj_jit_schedule_options(schedule, opts && opts->relaxed_float);
  /* Weights constant at every call are packed by the executable, once (schedule_prepack.c). */
  sched.constant_params = opts && opts->no_prepack ? 0 : constant_params;
  sched.prepacked = sched.constant_params ? &prepacks : NULL;
  tj_tir_shape_param_t shape[TJ_TIR_MAX_SHAPE_PARAMS];
  int n_shape = 0;
  cache_key_t key;
  tj_status_t *s = tj_tir_expose_shape_params(arena, f, name, &f, &n_shape, shape);
  if (!s && !make_key(f, name, &sched, opt_level, &key))
    s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "compiling '%s': out of memory", name);
  acc->lower_ms += tj_jit_now_ms() - t0;
  acc->kernels_requested++;
  bool arena_taken = false;
  tj_jit_object_t obj = {0};
  if (s || find_known(jit, &key, queue, out, &pending, &prepacks)) {
    if (!s)
      tj_jit_say(opts ? opts->messages : NULL, TJ_JIT_MSG_DEBUG,
                 "cache: %s: in-memory hit (compiled earlier by this process)", name);
  } else if (load_cached(jit, name, f, &key, opts, opt_level, acc, &obj, &prepacks)) {
    s = add_kernel(jit, &obj, &key, 0, &prepacks, acc, out);
  } else {
    s = lower_and_obtain(jit, arena, f, name, &key, &sched, opts, opt_level, tm, acc, queue, &pending, out, &prepacks,
                         &arena_taken);
  }
  tj_jit_object_free(&obj);
  if (!arena_taken) tj_arena_free(arena);
  if (s) return s;
  if (out_n_shape) *out_n_shape = n_shape;
  if (out_shape) memcpy(out_shape, shape, sizeof shape[0] * (size_t)n_shape);
  if (out_pending) *out_pending = pending;
  if (out_prepacks) *out_prepacks = prepacks;
  return NULL;
}

static int opt_level_of(const tj_jit_options_t *opts) { return opts ? opts->opt_level : 3; }
static bool schedule_of(const tj_jit_options_t *opts) { return !opts || !opts->no_schedule; }

static void publish_stats(tj_jit_t *jit, const tj_jit_options_t *opts, tj_jit_stats_t *acc, double t0) {
  acc->total_ms = tj_jit_now_ms() - t0;
  pthread_mutex_lock(&jit->lock);
  stats_add(&jit->stats, acc);
  pthread_mutex_unlock(&jit->lock);
  if (opts && opts->stats) *opts->stats = *acc;
}

tj_status_t *tj_jit_compile_prim_func(tj_jit_t *jit, const tj_prim_func_t *f, const char *name,
                                      const tj_jit_options_t *opts, tj_jit_kernel_t *out_kernel) {
  double t0 = tj_jit_now_ms();
  LLVMTargetMachineRef tm;
  TJ_RETURN_IF_ERROR(tj_jit_target_machine(opt_level_of(opts), &tm));
  tj_jit_stats_t acc = {0};
  tj_jit_kernel_t k;
  tj_status_t *s =
      compile_kernel(jit, f, name, opts, opt_level_of(opts), schedule_of(opts), tm, &acc, NULL, NULL, &k, NULL, NULL,
                     0, NULL);
  LLVMDisposeTargetMachine(tm);
  if (s) return tj_status_annotate(s, "compiling PrimFunc '%s'", name);
  publish_stats(jit, opts, &acc, t0);
  *out_kernel = k;
  return NULL;
}

/* ---------------- a Relax main -> executable ---------------- */


/* The row counts a row-independent kernel is compiled at, largest first; any n is a sum
 * of them (the last is 1). Few large chunks matter: a dense layer's schedule packs its
 * weights once per call, and at s = 128 four 32-row calls ran BERT's FFN matmuls 1.8x
 * slower than one 128-row call (bench/symbolic_vs_static.sh). 16 covers s = 16..127 in
 * a few calls. Three compiles per kernel, once, against one per size. */
static const int64_t chunk_rows[] = {128, 16, 1};
_Static_assert(sizeof chunk_rows / sizeof chunk_rows[0] == N_CHUNKS, "N_CHUNKS in jit/build.h");
/* Loop iterations per row from which a kernel is compiled at 1 row only (see
 * compile_chunks): ResNet-18's convs have 10^7..10^8 per image, a BERT dense layer's row
 * 6 * 10^5..2.4 * 10^6. */
#define ROW_WORK_ALONE 8000000


struct tj_jit_program {
  build_t bd;
};

/* Grows an arena array by doubling (old storage stays in the arena). */
static bool grow(tj_arena_t *a, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int cap2 = *cap ? *cap * 2 : 16;
  while (cap2 < need) cap2 *= 2;
  void *p = tj_arena_alloc(a, elem * (size_t)cap2);
  if (!p) return false;
  if (*cap) memcpy(p, *arr, elem * (size_t)*cap);
  *arr = p;
  *cap = cap2;
  return true;
}
#define GROW(bd, field, n_field, cap_field) \
  grow((bd)->arena, (void **)&(bd)->field, &(bd)->cap_field, (bd)->n_field + 1, sizeof(*(bd)->field))

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "JIT compile: out of memory"); }

static const char *var_name(const tj_rx_expr_t *v) { return v && v->var.name ? v->var.name : "?"; }

static const var_values_t *find_var(const build_t *bd, const tj_rx_expr_t *var) {
  for (int i = bd->n_vars - 1; i >= 0; i--)
    if (bd->vars[i].var == var) return &bd->vars[i];
  return NULL;
}

static tj_status_t *bind_var(build_t *bd, const tj_rx_expr_t *var, int n, const int *ids) {
  int *copy = TJ_ARENA_ARRAY(bd->arena, int, n > 0 ? n : 1);
  if (!copy || !GROW(bd, vars, n_vars, cap_vars)) return oom();
  if (n) memcpy(copy, ids, sizeof(int) * (size_t)n);
  bd->vars[bd->n_vars++] = (var_values_t){var, n, copy};
  return NULL;
}

/* A symbolic shape must be computable from main's vars alone: evaluating it with every
 * var set to 1 tells (a var bound elsewhere, e.g. by match_cast, fails). */
static tj_status_t *check_symbolic_shape(build_t *bd, const tj_sinfo_t *sinfo, const char *what, const char *name,
                                         int *out_ndim) {
  int64_t ones[TJ_TIR_MAX_SHAPE_PARAMS], d;
  for (int i = 0; i < TJ_TIR_MAX_SHAPE_PARAMS; i++) ones[i] = 1;
  bool ok = sinfo->tensor.shape && sinfo->tensor.ndim >= 0;
  for (int i = 0; ok && i < sinfo->tensor.ndim; i++)
    ok = tj_tir_eval_int_bound(sinfo->tensor.shape[i], bd->n_sig_vars, bd->sig_vars, ones, &d);
  if (!ok)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s '%s' has a shape that main's parameters do not determine", what, name);
  *out_ndim = sinfo->tensor.ndim;
  return NULL;
}

/* A value for a tensor struct info; a symbolic shape is evaluated per binding. */
tj_status_t *tj_build_new_value(build_t *bd, const char *name, const tj_sinfo_t *sinfo, tj_value_kind_t kind, int index,
                                const char *what, int *out_id) {
  int64_t dims[8];
  int ndim = 0;
  if (!tj_sinfo_is_tensor(sinfo))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s '%s' is not a tensor; the JIT only passes tensors", what, name);
  bool symbolic = !tj_sinfo_static_shape(sinfo, &ndim, dims);
  if (symbolic) TJ_RETURN_IF_ERROR(check_symbolic_shape(bd, sinfo, what, name, &ndim));
  if (sinfo->tensor.dtype.code == TJ_DT_VOID)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s '%s' has an unknown dtype; the JIT needs one", what, name);
  if (ndim > TJ_MAX_NDIM) return tj_status_new(TJ_ERR_UNSUPPORTED, "%s '%s' has rank %d (at most %d)", what, name, ndim, TJ_MAX_NDIM);
  if (!GROW(bd, values, n_values, cap_values)) return oom();
  if (!grow(bd->arena, (void **)&bd->shapes, &bd->cap_shapes, bd->n_values + 1, sizeof *bd->shapes)) return oom();
  bd->shapes[bd->n_values] = symbolic ? sinfo : NULL;
  tj_value_desc_t *v = &bd->values[bd->n_values];
  memset(v, 0, sizeof *v);
  v->name = name;
  v->dtype = sinfo->tensor.dtype;
  v->ndim = ndim;
  size_t n = tj_dtype_bytes(v->dtype);
  for (int i = 0; i < ndim; i++) {
    v->shape[i] = symbolic ? 0 : dims[i];
    n *= symbolic ? 0 : (size_t)dims[i];
  }
  v->nbytes = n;
  v->kind = kind;
  v->index = index;
  *out_id = bd->n_values++;
  return NULL;
}

/* The value id of one call argument (a var bound to a single tensor, or a constant). */
static tj_status_t *single_value(build_t *bd, const tj_rx_expr_t *e, const char *binding, int *out_id) {
  if (e->kind == TJ_RX_CONSTANT) {
    const tj_sinfo_t *si = e->sinfo ? e->sinfo
                                     : tj_sinfo_tensor_static(bd->arena, e->constant.dtype, e->constant.ndim, e->constant.shape);
    TJ_RETURN_IF_ERROR(tj_build_new_value(bd, "constant", si, TJ_VALUE_CONSTANT, 0, "constant", out_id));
    if (!e->constant.data)
      return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': a constant without data (metadata[...])", binding);
    if (e->constant.nbytes != bd->values[*out_id].nbytes)
      return tj_status_new(TJ_ERR_VERIFY, "binding '%s': constant has %zu bytes, its type needs %zu", binding,
                           e->constant.nbytes, bd->values[*out_id].nbytes);
    bd->values[*out_id].const_data = e->constant.data;
    return NULL;
  }
  if (!tj_rx_is_var(e))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': call_tir argument is a %s; the JIT needs a variable",
                         binding, tj_rx_expr_kind_name(e->kind));
  const var_values_t *vv = find_var(bd, e);
  if (!vv) return tj_status_new(TJ_ERR_VERIFY, "binding '%s': variable '%s' is used before it is defined", binding, var_name(e));
  if (vv->n != 1)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': '%s' is a tuple; pass its fields", binding, var_name(e));
  *out_id = vv->ids[0];
  return NULL;
}

/* A row-independent kernel (row_split.h) compiled at each chunk size; false (nothing
 * kept) when f is not one or a chunk does not compile: the generic kernel serves then. */
static bool compile_chunks(build_t *bd, const tj_prim_func_t *f, const char *callee, kernel_slot_t *slot) {
  const tj_prim_func_t *exposed;
  tj_status_t *s = tj_tir_expose_shape_params(bd->arena, f, callee, &exposed, &slot->n_shape, slot->shape);
  if (s || slot->n_shape != 1 || !tj_tir_rows_independent(f, slot->shape[0].var)) {
    tj_status_free(s);
    return false;
  }
  /* A row with this much work (a conv over one image) keeps the threads busy alone: one
   * chunk size, so a CNN with a symbolic batch compiles each kernel once, not three times. */
  int first = tj_tir_row_work(f, slot->shape[0].var) >= ROW_WORK_ALONE ? N_CHUNKS - 1 : 0;
  slot->n_chunks = 0;
  for (int i = first; i < N_CHUNKS && !s; i++) {
    const tj_prim_func_t *chunk = NULL;
    s = tj_tir_row_chunk(bd->arena, f, slot->shape[0].var, chunk_rows[i], &chunk);
    /* compiled now, not queued: a chunk that does not compile falls back to the generic kernel */
    if (!s) s = compile_kernel(bd->jit, chunk, callee, bd->opts, bd->opt_level, bd->schedule, bd->tm, &bd->acc,
                               NULL, NULL, &slot->chunk[slot->n_chunks], NULL, NULL, 0, NULL);
    slot->rows[slot->n_chunks++] = chunk_rows[i];
  }
  if (s) {
    tj_status_free(s);
    slot->n_chunks = 0;
    return false;
  }
  slot->k = (tj_jit_kernel_t){NULL, NULL, slot->chunk[0].n_buffers, 1};
  return true;
}

/* The kernel slot for a PrimFunc: by name, else a structurally equal one already
 * compiled in this module, else compile it. */
static tj_status_t *kernel_for(build_t *bd, const char *callee, uint64_t constant_params, int *out_slot) {
  for (int i = 0; i < bd->n_kernels; i++)
    if (strcmp(bd->kernels[i].name, callee) == 0 && bd->kernels[i].constant_params == constant_params)
      return *out_slot = i, NULL;
  const tj_prim_func_t *f = tj_module_find_prim(bd->mod, callee);
  if (!f) return tj_status_new(TJ_ERR_NOT_FOUND, "PrimFunc '%s' is not in the module", callee);
  return tj_build_kernel_for_prim(bd, callee, f, constant_params, out_slot);
}

/* The kernel slot for PrimFunc f named `callee` (not yet looked up by name). */
tj_status_t *tj_build_kernel_for_prim(build_t *bd, const char *callee, const tj_prim_func_t *f,
                                      uint64_t constant_params, int *out_slot) {
  uint64_t h = tj_struct_hash_prim_func(f);
  kernel_slot_t slot = {.name = callee, .prim = f, .struct_hash = h, .pending = -1, .constant_params = constant_params};
  bool found = false;
  for (int i = 0; i < bd->n_kernels && !found; i++)
    if (bd->kernels[i].struct_hash == h && bd->kernels[i].constant_params == constant_params &&
        tj_struct_equal_prim_func(bd->kernels[i].prim, f, NULL, 0)) {
      /* the same code, but the shape vars are f's own nodes */
      TJ_RETURN_IF_ERROR(tj_tir_expose_shape_params(bd->arena, f, callee, &(const tj_prim_func_t *){NULL},
                                                    &slot.n_shape, slot.shape));
      slot.k = bd->kernels[i].k;
      slot.pending = bd->kernels[i].pending;
      slot.n_chunks = bd->kernels[i].n_chunks;
      memcpy(slot.chunk, bd->kernels[i].chunk, sizeof slot.chunk);
      memcpy(slot.rows, bd->kernels[i].rows, sizeof slot.rows);
      slot.prepacks = bd->kernels[i].prepacks;
      found = true;
    }
  if (!found && !compile_chunks(bd, f, callee, &slot)) {
    tj_status_t *s =
        compile_kernel(bd->jit, f, callee, bd->opts, bd->opt_level, bd->schedule, bd->tm, &bd->acc, &bd->queue,
                       &slot.pending, &slot.k, &slot.n_shape, slot.shape, constant_params, &slot.prepacks);
    if (s) return tj_status_annotate(s, "compiling PrimFunc '%s'", callee);
  }
  if (!GROW(bd, kernels, n_kernels, cap_kernels)) return oom();
  bd->kernels[bd->n_kernels] = slot;
  *out_slot = bd->n_kernels++;
  return NULL;
}

enum { MAX_SCALARS = 128 };

/* The kernel's scalar vars in ABI order: its own scalar params (tir_vars), then the
 * shape vars appended by shape_params.h. */
static int kernel_scalar_vars(const kernel_slot_t *slot, const tj_tir_expr_t **out) {
  int n = 0;
  const tj_prim_func_t *f = slot->prim;
  for (int i = 0; i < f->n_params; i++)
    if (!f->buffer_map || !f->buffer_map[i]) out[n++] = f->params[i];
  for (int k = 0; k < slot->n_shape; k++) out[n++] = slot->shape[k].var;
  return n;
}

/* Checks one buffer parameter against the value passed for it. `scalars` NULL (while
 * walking main): dims that depend on the kernel's vars or the value's symbolic shape are
 * left to the check made with the call's scalars when the executable is made. */
static tj_status_t *check_param(const char *binding, const kernel_slot_t *slot, int buffer_index,
                                const tj_value_desc_t *v, bool v_symbolic, const int64_t *scalars) {
  const tj_prim_func_t *f = slot->prim;
  const tj_buffer_t *buf = NULL;
  for (int i = 0, k = 0; i < f->n_params; i++)
    if (f->buffer_map && f->buffer_map[i] && k++ == buffer_index) buf = f->buffer_map[i];
  char b1[TJ_DTYPE_BUFSIZE], b2[TJ_DTYPE_BUFSIZE];
  if (!buf) return NULL;
  if (!tj_dtype_eq(buf->dtype, v->dtype))
    return tj_status_new(TJ_ERR_VERIFY, "binding '%s': '%s' parameter '%s' is %s but gets '%s' of %s", binding,
                         slot->name, buf->name, tj_dtype_str(buf->dtype, b1), v->name, tj_dtype_str(v->dtype, b2));
  const tj_tir_expr_t *vars[MAX_SCALARS];
  if (scalars && slot->k.n_scalars > MAX_SCALARS)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': '%s' takes more than %d scalars", binding, slot->name,
                         MAX_SCALARS);
  int n_vars = scalars ? kernel_scalar_vars(slot, vars) : 0;
  bool same = buf->ndim == v->ndim;
  for (int i = 0; same && i < buf->ndim; i++) {
    int64_t d;
    if (tj_tir_eval_int_bound(buf->shape[i], n_vars, vars, scalars, &d)) same = v_symbolic && !scalars ? true : d == v->shape[i];
    else if (scalars)
      return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': '%s' parameter '%s' dim %d is not determined by the call",
                           binding, slot->name, buf->name, i);
  }
  if (!same)
    return tj_status_new(TJ_ERR_VERIFY, "binding '%s': '%s' parameter '%s' and the value '%s' have different shapes",
                         binding, slot->name, buf->name, v->name);
  return NULL;
}

/* Bit p set: the callee's param p gets a constant at this call (a bound weight or a
 * folded constant), so the kernel may read it packed once (schedule_prepack.c). Only for
 * a static kernel: a row-split one is compiled at several row counts. */
static uint64_t constant_params(const build_t *bd, const char *callee, const tj_call_tir_view_t *view) {
  const tj_prim_func_t *f = tj_module_find_prim(bd->mod, callee);
  if (!f || !f->buffer_map || (bd->opts && bd->opts->no_prepack)) return 0;
  uint64_t mask = 0;
  for (int p = 0, arg = 0; p < f->n_params && p < 64 && arg < view->n_args; p++) {
    if (!f->buffer_map[p]) continue;
    const tj_rx_expr_t *e = view->args[arg++];
    const var_values_t *vv = e->kind == TJ_RX_CONSTANT ? NULL : find_var(bd, e);
    bool constant = e->kind == TJ_RX_CONSTANT ||
                    (vv && vv->n == 1 && bd->values[vv->ids[0]].kind == TJ_VALUE_CONSTANT);
    int64_t elems;
    if (constant && tj_buffer_static_size(f->buffer_map[p], &elems)) mask |= (uint64_t)1 << p;
  }
  return mask;
}

static const char *op_display_name(const char *op) {
  return strncmp(op, "relax.", 6) == 0 ? op + 6 : op;
}

static tj_status_t *add_call_tir(build_t *bd, const tj_rx_binding_t *bind, const tj_call_tir_view_t *view) {
  const char *binding = var_name(bind->var);
  if (view->callee->kind != TJ_RX_GLOBAL_VAR)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': call_tir of an external function is not supported", binding);
  const char *callee = view->callee->var.name;
  int slot = 0;
  TJ_RETURN_IF_ERROR(tj_status_annotate(kernel_for(bd, callee, constant_params(bd, callee, view), &slot),
                                        "binding '%s'", binding));
  const kernel_slot_t *ks = &bd->kernels[slot];
  const tj_jit_kernel_t *k = &ks->k;
  int n_packed = ks->prepacks.n;
  /* Scalars: tir_vars (expressions of main's vars), then the kernel's shape vars. */
  int n_tir_vars = view->tir_vars ? view->tir_vars->shape_expr.n : 0;
  if (n_tir_vars + ks->n_shape != k->n_scalars)
    return tj_status_new(TJ_ERR_VERIFY, "binding '%s': '%s' takes %d scalar(s), call_tir passes %d", binding, callee,
                         k->n_scalars - ks->n_shape, n_tir_vars);
  int64_t ones[TJ_TIR_MAX_SHAPE_PARAMS], probe;
  for (int i = 0; i < TJ_TIR_MAX_SHAPE_PARAMS; i++) ones[i] = 1;
  for (int i = 0; i < n_tir_vars; i++)
    if (!tj_tir_eval_int_bound(view->tir_vars->shape_expr.values[i], bd->n_sig_vars, bd->sig_vars, ones, &probe))
      return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': tir_vars[%d] is not determined by main's parameters",
                           binding, i);
  /* Outputs: one tensor, or a tuple of tensors. */
  const tj_sinfo_t *out = view->out_sinfo;
  int n_out = out && out->kind == TJ_SINFO_TUPLE ? out->tuple.n : 1;
  if (view->n_args + n_out + n_packed != k->n_buffers)
    return tj_status_new(TJ_ERR_VERIFY, "binding '%s': '%s' takes %d buffers, call_tir passes %d inputs and %d outputs",
                         binding, callee, k->n_buffers - n_packed, view->n_args, n_out);
  int *args = TJ_ARENA_ARRAY(bd->arena, int, k->n_buffers + 1);
  if (!args) return oom();
  for (int i = 0; i < view->n_args; i++)
    TJ_RETURN_IF_ERROR(single_value(bd, view->args[i], binding, &args[i]));
  for (int i = 0; i < n_out; i++) {
    const tj_sinfo_t *si = out->kind == TJ_SINFO_TUPLE ? out->tuple.fields[i] : out;
    const char *name = n_out == 1 ? binding : tj_arena_printf(bd->arena, "%s[%d]", binding, i);
    if (!name) return oom();
    TJ_RETURN_IF_ERROR(tj_status_annotate(tj_build_new_value(bd, name, si, TJ_VALUE_INTERMEDIATE, 0, "call_tir result", &args[view->n_args + i]),
                                          "binding '%s'", binding));
  }
  for (int i = 0; i < k->n_buffers - n_packed; i++)
    TJ_RETURN_IF_ERROR(check_param(binding, ks, i, &bd->values[args[i]], bd->shapes[args[i]] != NULL, NULL));
  if (!GROW(bd, calls, n_calls, cap_calls)) return oom();
  bd->calls[bd->n_calls++] = (pending_call_t){slot, k->n_buffers - n_packed, args, n_out, n_tir_vars,
                                              n_tir_vars ? view->tir_vars->shape_expr.values : NULL, binding};
  return bind_var(bd, bind->var, n_out, args + view->n_args);
}

/* The external function a packed or DPS call names, or NULL for other calls. */
static const char *external_symbol(const tj_rx_expr_t *v) {
  if (v->kind != TJ_RX_CALL) return NULL;
  if (v->call.callee->kind == TJ_RX_EXTERN_FUNC) return v->call.callee->string_imm; /* R.call_packed */
  if (v->call.callee->kind != TJ_RX_OP || v->call.n_args < 1) return NULL;
  const char *op = v->call.callee->op.name;
  if (strcmp(op, "relax.call_dps_packed") && strcmp(op, "relax.call_pure_packed") && strcmp(op, "relax.call_tir")) return NULL;
  const tj_rx_expr_t *f = v->call.args[0];
  if (f->kind == TJ_RX_EXTERN_FUNC) return f->string_imm;
  return tj_rx_is_var(f) ? "(an R.ExternFunc variable)" : NULL;
}

/* Calls that leave the compiled graph: tvmjit has no packed-function registry, so it
 * says which function the model needs instead of failing on a generic binding. */
static tj_status_t *unsupported_call(const char *binding, const tj_rx_expr_t *v) {
  const char *symbol = external_symbol(v);
  const char *op = v->call.callee->kind == TJ_RX_OP ? op_display_name(v->call.callee->op.name) : "call_packed";
  /* LegalizeOps emits this for R.dynamic_strided_slice and DecomposeOpsForInference for
   * R.tensor_to_shape: a later shape is read from a tensor's values at run time. */
  if (symbol && strcmp(symbol, "vm.builtin.tensor_to_shape") == 0)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': the shape of a later tensor is read from tensor values at "
                         "run time (vm.builtin.tensor_to_shape, from R.dynamic_strided_slice or R.tensor_to_shape); "
                         "tvmjit's runtime needs every shape known from main's inputs and cannot run data-dependent "
                         "shapes yet", binding);
  if (symbol)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': R.%s calls the external function '%s', which tvmjit does "
                         "not provide (it runs PrimFuncs of the module through R.call_tir only)", binding, op, symbol);
  if (tj_rx_is_op_call(v, "relax.print") || tj_rx_is_op_call(v, "relax.assert_op"))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': R.%s has an effect at run time, which the JIT does not "
                         "support yet; remove it to run the model", binding, op);
  return NULL;
}

/* The value's static shape and dtype must satisfy the cast; each symbolic dimension of
 * the cast takes the value's extent (the same variable the same extent). The JIT's
 * shapes are static and the inputs are checked against them on every run, so checking
 * here is checking every run. */
static tj_status_t *check_match_cast(build_t *bd, const char *binding, const tj_rx_expr_t *value,
                                     const tj_sinfo_t *cast) {
  const tj_sinfo_t *s = value->sinfo;
  if (cast->kind == TJ_SINFO_OBJECT) return NULL;
  if (!tj_sinfo_is_tensor(cast) || !tj_sinfo_is_tensor(s))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': R.match_cast of a non-tensor value", binding);
  int64_t dims[8];
  int ndim = 0;
  if (!tj_sinfo_static_shape(s, &ndim, dims))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': R.match_cast of a value whose shape is not static", binding);
  if (cast->tensor.dtype.code != TJ_DT_VOID && !tj_dtype_eq(cast->tensor.dtype, s->tensor.dtype)) {
    char a[TJ_DTYPE_BUFSIZE], b[TJ_DTYPE_BUFSIZE];
    return tj_status_new(TJ_ERR_VERIFY, "binding '%s': R.match_cast to dtype %s, but the value is %s", binding,
                         tj_dtype_str(cast->tensor.dtype, a), tj_dtype_str(s->tensor.dtype, b));
  }
  if (cast->tensor.ndim >= 0 && cast->tensor.ndim != ndim)
    return tj_status_new(TJ_ERR_VERIFY, "binding '%s': R.match_cast to rank %d, but the value has rank %d", binding,
                         cast->tensor.ndim, ndim);
  for (int i = 0; cast->tensor.shape && i < ndim; i++) {
    const tj_tir_expr_t *d = cast->tensor.shape[i];
    int64_t want;
    if (tj_tir_is_const_int(d, &want) && want != dims[i])
      return tj_status_new(TJ_ERR_VERIFY, "binding '%s': R.match_cast wants dimension %d to be %lld, the value has %lld",
                           binding, i, (long long)want, (long long)dims[i]);
    if (d->kind != TJ_TIR_VAR) continue;
    for (int j = 0; j < i; j++)
      if (cast->tensor.shape[j] == d && dims[j] != dims[i])
        return tj_status_new(TJ_ERR_VERIFY, "binding '%s': R.match_cast binds '%s' to both %lld and %lld", binding,
                             d->var.name, (long long)dims[j], (long long)dims[i]);
  }
  (void)bd;
  return NULL;
}

static tj_status_t *add_binding(build_t *bd, const tj_rx_binding_t *bind) {
  const char *binding = var_name(bind->var);
  const tj_rx_expr_t *v = bind->value;
  tj_call_tir_view_t view;
  if (bind->match_cast) {
    if (!tj_rx_is_var(v))
      return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': R.match_cast of a %s; bind the value to a variable first",
                           binding, tj_rx_expr_kind_name(v->kind));
    TJ_RETURN_IF_ERROR(check_match_cast(bd, binding, v, bind->match_cast));
  }
  if (v->kind == TJ_RX_CALL) {
    tj_status_t *ext = unsupported_call(binding, v);
    if (ext) return ext;
  }
  if (tj_rx_as_call_tir(v, &view)) return add_call_tir(bd, bind, &view);
  if (tj_rx_is_var(v)) {
    const var_values_t *src = find_var(bd, v);
    if (!src) return tj_status_new(TJ_ERR_VERIFY, "binding '%s': '%s' is used before it is defined", binding, var_name(v));
    return bind_var(bd, bind->var, src->n, src->ids);
  }
  if (v->kind == TJ_RX_TUPLE) {
    int *ids = TJ_ARENA_ARRAY(bd->arena, int, v->tuple.n + 1);
    if (!ids) return oom();
    for (int i = 0; i < v->tuple.n; i++) TJ_RETURN_IF_ERROR(single_value(bd, v->tuple.fields[i], binding, &ids[i]));
    return bind_var(bd, bind->var, v->tuple.n, ids);
  }
  if (v->kind == TJ_RX_TUPLE_GET_ITEM) {
    const var_values_t *src = tj_rx_is_var(v->get_item.tuple) ? find_var(bd, v->get_item.tuple) : NULL;
    if (!src || v->get_item.index < 0 || v->get_item.index >= src->n)
      return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': tuple item %d of something that is not a known tuple",
                           binding, v->get_item.index);
    return bind_var(bd, bind->var, 1, &src->ids[v->get_item.index]);
  }
  if (v->kind == TJ_RX_CONSTANT) {
    int id;
    TJ_RETURN_IF_ERROR(single_value(bd, v, binding, &id));
    return bind_var(bd, bind->var, 1, &id);
  }
  if (v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_OP && strncmp(v->call.callee->op.name, "relax.call_", 11) == 0)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': R.%s is not supported by the JIT (only R.call_tir)",
                         binding, op_display_name(v->call.callee->op.name));
  if (v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_OP && !tj_legalizer_lookup(v->call.callee->op.name))
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "binding '%s': R.%s cannot run in tvmjit: LegalizeOps keeps it (TVM's VM or runtime "
                         "implements it) and the JIT runs call_tir bindings only",
                         binding, op_display_name(v->call.callee->op.name));
  if (v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_OP)
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "binding '%s': R.%s is not lowered; run with --passes default or LegalizeOps", binding,
                         op_display_name(v->call.callee->op.name));
  if (v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_GLOBAL_VAR)
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "binding '%s': calls '%s' directly; the JIT runs call_tir bindings only (run LegalizeOps, "
                         "or inline the Relax function)",
                         binding, v->call.callee->var.name);
  return tj_status_new(TJ_ERR_UNSUPPORTED, "binding '%s': a %s binding is not supported by the JIT", binding,
                       tj_rx_expr_kind_name(v->kind));
}

/* Marks the returned values as outputs, in order. */
static tj_status_t *mark_outputs(build_t *bd, const tj_rx_expr_t *ret) {
  int n = 0;
  const int *ids = NULL;
  const var_values_t *vv = NULL;
  if (tj_rx_is_var(ret)) {
    vv = find_var(bd, ret);
    if (!vv) return tj_status_new(TJ_ERR_VERIFY, "%s returns '%s', which is not defined", bd->function, var_name(ret));
    ids = vv->ids;
    n = vv->n;
  } else if (ret->kind == TJ_RX_TUPLE) {
    int *t = TJ_ARENA_ARRAY(bd->arena, int, ret->tuple.n + 1);
    if (!t) return oom();
    for (int i = 0; i < ret->tuple.n; i++) TJ_RETURN_IF_ERROR(single_value(bd, ret->tuple.fields[i], "return", &t[i]));
    ids = t;
    n = ret->tuple.n;
  } else {
    return tj_status_new(TJ_ERR_UNSUPPORTED, "%s returns a %s; the JIT returns a variable or a tuple of variables",
                         bd->function, tj_rx_expr_kind_name(ret->kind));
  }
  bd->copies = TJ_ARENA_ARRAY(bd->arena, int, n + 1);
  if (!bd->copies) return oom();
  bd->n_copies = n;
  for (int i = 0; i < n; i++) {
    tj_value_desc_t *v = &bd->values[ids[i]];
    bd->copies[i] = -1;
    if (v->kind != TJ_VALUE_INTERMEDIATE) {
      /* a parameter or constant returned as is, or a value returned twice: the caller
       * gets its own copy (outputs never alias inputs or each other) */
      bd->copies[i] = ids[i];
      continue;
    }
    v->kind = TJ_VALUE_OUTPUT;
    v->index = i;
  }
  return NULL;
}

/* main's vars: every param dim that is a var by itself (api/specialize.c binds them). */
static tj_status_t *collect_sig_vars(build_t *bd, const tj_rx_func_t *fn) {
  for (int i = 0; i < fn->n_params; i++) {
    const tj_sinfo_t *s = fn->params[i]->sinfo;
    for (int d = 0; tj_sinfo_is_tensor(s) && s->tensor.shape && d < s->tensor.ndim; d++) {
      const tj_tir_expr_t *e = s->tensor.shape[d];
      bool known = false;
      for (int k = 0; k < bd->n_sig_vars; k++) known |= bd->sig_vars[k] == e;
      if (e->kind != TJ_TIR_VAR || known) continue;
      if (bd->n_sig_vars == TJ_TIR_MAX_SHAPE_PARAMS)
        return tj_status_new(TJ_ERR_UNSUPPORTED, "'%s' has more than %d symbolic vars", bd->function,
                             TJ_TIR_MAX_SHAPE_PARAMS);
      bd->sig_vars[bd->n_sig_vars++] = e;
    }
  }
  return NULL;
}

static tj_status_t *walk_function(build_t *bd, const tj_rx_func_t *fn) {
  TJ_RETURN_IF_ERROR(collect_sig_vars(bd, fn));
  for (int i = 0; i < fn->n_params; i++) {
    int id;
    const tj_rx_expr_t *p = fn->params[i];
    TJ_RETURN_IF_ERROR(tj_build_new_value(bd, var_name(p), p->sinfo, TJ_VALUE_INPUT, i, "parameter", &id));
    TJ_RETURN_IF_ERROR(bind_var(bd, p, 1, &id));
  }
  const tj_rx_expr_t *body = fn->body;
  if (!body || body->kind != TJ_RX_SEQ)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "the body of '%s' is not a sequence of bindings", bd->function);
  for (int b = 0; b < body->seq.n_blocks; b++)
    for (int i = 0; i < body->seq.blocks[b].n_bindings; i++)
      TJ_RETURN_IF_ERROR(add_binding(bd, &body->seq.blocks[b].bindings[i]));
  return mark_outputs(bd, body->seq.body);
}


static void release_const(void *p) { tj_aligned_free(p); }

/* The value descriptor of value i under the binding (values[k] of sig_vars[k]). */
static tj_status_t *bound_value(const build_t *bd, int i, const int64_t *values, tj_value_desc_t *out) {
  *out = bd->values[i];
  const tj_sinfo_t *s = bd->shapes[i];
  if (!s) return NULL;
  for (int d = 0; d < out->ndim; d++)
    if (!tj_tir_eval_int_bound(s->tensor.shape[d], bd->n_sig_vars, bd->sig_vars, values, &out->shape[d]) ||
        out->shape[d] < 0)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "'%s': dim %d of '%s' is negative or not computable for these shapes",
                           bd->function, d, out->name);
  out->nbytes = 0; /* computed by tj_executable_add_value */
  return NULL;
}

/* Call c's scalars: its tir_vars under the binding, then each shape var read off the
 * argument that names it. */
static tj_status_t *bound_scalars(const build_t *bd, const pending_call_t *c, const int64_t *values,
                                  const tj_value_desc_t *descs, int64_t *out) {
  const kernel_slot_t *ks = &bd->kernels[c->kernel];
  for (int i = 0; i < c->n_tir_vars; i++)
    if (!tj_tir_eval_int_bound(c->tir_vars[i], bd->n_sig_vars, bd->sig_vars, values, &out[i]))
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "binding '%s': tir_vars[%d] is not computable", c->binding, i);
  for (int k = 0; k < ks->n_shape; k++) {
    const tj_value_desc_t *v = &descs[c->args[ks->shape[k].buffer]];
    out[c->n_tir_vars + k] = ks->shape[k].dim < v->ndim ? v->shape[ks->shape[k].dim] : 0;
  }
  for (int j = 0; j < c->n_args; j++)
    TJ_RETURN_IF_ERROR(check_param(c->binding, ks, j, &descs[c->args[j]], false, out));
  return NULL;
}

/* ---- constant weights packed once per executable (runtime/prepack_set.h) ---- */

/* The call argument index of param p of a kernel (its buffers in param order). */
static int arg_of_param(const tj_prim_func_t *f, int p) {
  int arg = 0;
  for (int i = 0; i < p; i++) arg += f->buffer_map && f->buffer_map[i] ? 1 : 0;
  return arg;
}

/* The weights call c's kernel reads packed, as the packer describes them. */
static tj_status_t *packed_reads(const kernel_slot_t *ks, tj_arena_t *arena, tj_packed_read_t **out) {
  *out = NULL;
  if (!ks->prepacks.n) return NULL;
  tj_packed_read_t *reads = TJ_ARENA_ARRAY(arena, tj_packed_read_t, ks->prepacks.n);
  if (!reads) return oom();
  for (int p = 0; p < ks->prepacks.n; p++) {
    const tj_tir_prepack_t *pp = &ks->prepacks.items[p];
    tj_packed_read_t r = {.arg = arg_of_param(ks->prim, pp->param), .lanes = pp->lanes, .to = pp->dtype,
                          .winograd_m = pp->winograd_m, .source_unread = pp->source_unread};
    for (int k = 0; k < TJ_MAX_NDIM && k < TJ_TIR_PREPACK_MAX_DIMS; k++) r.perm[k] = pp->perm[k];
    reads[p] = r;
  }
  *out = reads;
  return NULL;
}

/* Packs the constants the calls' kernels read packed (runtime/prepack_set.h). */
static tj_status_t *pack_constants(const build_t *bd, tj_arena_t *arena, const tj_value_desc_t *descs,
                                   tj_executable_t *exe, const tj_prepack_release_t *release, tj_prepack_set_t *out) {
  tj_packed_call_t *calls = TJ_ARENA_ARRAY(arena, tj_packed_call_t, bd->n_calls + 1);
  int *copy_uses = TJ_ARENA_ARRAY(arena, int, bd->n_values + 1);
  if (!calls || !copy_uses) return oom();
  memset(copy_uses, 0, sizeof *copy_uses * (size_t)(bd->n_values + 1));
  for (int i = 0; i < bd->n_copies; i++)
    if (bd->copies[i] >= 0) copy_uses[bd->copies[i]]++;
  for (int i = 0; i < bd->n_calls; i++) {
    const pending_call_t *c = &bd->calls[i];
    const kernel_slot_t *ks = &bd->kernels[c->kernel];
    tj_packed_read_t *reads;
    TJ_RETURN_IF_ERROR(packed_reads(ks, arena, &reads));
    calls[i] = (tj_packed_call_t){c->binding, ks->name, c->n_args, c->args, ks->prepacks.n, reads};
  }
  return tj_prepack_set_build(arena, bd->n_calls, calls, bd->n_values, descs, copy_uses, exe, release, out);
}

/* Call i's arguments with its kernel's packed weights appended. */
static tj_status_t *add_packed_args(const build_t *bd, const tj_prepack_set_t *ps, int i, int **args,
                                    tj_arena_t *arena) {
  const pending_call_t *c = &bd->calls[i];
  int n = bd->kernels[c->kernel].prepacks.n;
  if (!n) return NULL;
  int *all = TJ_ARENA_ARRAY(arena, int, c->n_args + n);
  if (!all) return oom();
  memcpy(all, *args, sizeof *all * (size_t)c->n_args);
  for (int p = 0; p < n; p++) all[c->n_args + p] = ps->value_of_read[i][p];
  *args = all;
  return NULL;
}

/* A row-independent kernel over n rows: the largest chunks first, each call told its
 * first row. */
static tj_status_t *add_chunk_calls(tj_executable_t *exe, const kernel_slot_t *ks, const int *ids,
                                    const pending_call_t *c, const int *args, int64_t n) {
  int64_t offset = 0;
  for (int j = 0; j < ks->n_chunks; j++)
    for (; n - offset >= ks->rows[j]; offset += ks->rows[j])
      TJ_RETURN_IF_ERROR(tj_executable_add_call(exe, ids[j], c->n_args, args, &offset, c->binding));
  return NULL;
}

/* used[v]: value v is an input, an output, a constant, or read or written by a call
 * (an intermediate that channel groups replaced by their scratch is none of these). */
static void mark_used(const build_t *bd, bool *used) {
  for (int v = 0; v < bd->n_values; v++) used[v] = bd->values[v].kind != TJ_VALUE_INTERMEDIATE;
  for (int c = 0; c < bd->n_calls; c++)
    for (int a = 0; a < bd->calls[c].n_args; a++) used[bd->calls[c].args[a]] = true;
  for (int i = 0; i < bd->n_copies; i++)
    if (bd->copies[i] >= 0) used[bd->copies[i]] = true;
}

/* The executable from the collected values, kernels and calls, with main's vars bound
 * to `values` (none for a static function). */
static tj_status_t *build_executable(const build_t *bd, tj_arena_t *arena, const int64_t *values,
                                     const tj_prepack_release_t *release, tj_executable_t *exe) {
  int *value_ids = TJ_ARENA_ARRAY(arena, int, bd->n_values + 1);
  int *kernel_ids = TJ_ARENA_ARRAY(arena, int, (bd->n_kernels + 1) * N_CHUNKS);
  tj_value_desc_t *descs = TJ_ARENA_ARRAY(arena, tj_value_desc_t, bd->n_values + 1);
  if (!value_ids || !kernel_ids || !descs) return oom();
  for (int i = 0; i < bd->n_values; i++) TJ_RETURN_IF_ERROR(bound_value(bd, i, values, &descs[i]));
  tj_prepack_set_t packed;
  TJ_RETURN_IF_ERROR(pack_constants(bd, arena, descs, exe, release, &packed));
  bool *used = TJ_ARENA_ARRAY(arena, bool, bd->n_values + 1);
  if (!used) return oom();
  mark_used(bd, used);
  for (int i = 0; i < bd->n_values; i++) {
    tj_value_desc_t d = descs[i];
    value_ids[i] = -1;
    if (!used[i]) continue; /* the intermediate of a pair run by channel groups */
    if (d.kind == TJ_VALUE_VIEW) d.index = value_ids[d.index];
    if (packed.unread_source && packed.unread_source[i]) {
      /* Only packed copies of it are read: the executable keeps no copy of its own. */
      d.const_data = packed.unread_source[i];
      TJ_RETURN_IF_ERROR(tj_executable_add_value(exe, &d, &value_ids[i]));
      continue;
    }
    /* Borrowed only when 64-byte aligned like every other tensor (bound weights are read
     * by vector loads): the caller's tensors are, FoldConstant's results in the IR's
     * arena are not and get an aligned copy, as every constant did before borrowing. */
    bool borrow = bd->borrow_constants && (uintptr_t)d.const_data % 64 == 0;
    if (d.kind == TJ_VALUE_CONSTANT && !borrow) {
      void *copy = tj_aligned_alloc(d.nbytes ? d.nbytes : 1);
      if (!copy) return oom();
      memcpy(copy, d.const_data, d.nbytes);
      TJ_RETURN_IF_ERROR(tj_executable_own(exe, copy, release_const));
      d.const_data = copy;
    }
    TJ_RETURN_IF_ERROR(tj_executable_add_value(exe, &d, &value_ids[i]));
  }
  bool *called = TJ_ARENA_ARRAY(arena, bool, bd->n_kernels + 1);
  if (!called) return oom();
  memset(called, 0, sizeof *called * (size_t)(bd->n_kernels + 1));
  for (int i = 0; i < bd->n_calls; i++) called[bd->calls[i].kernel] = true;
  for (int i = 0; i < bd->n_kernels; i++) {
    const kernel_slot_t *ks = &bd->kernels[i];
    if (!called[i]) continue; /* replaced by its channel groups' kernels */
    for (int j = 0; j < (ks->n_chunks ? ks->n_chunks : 1); j++) {
      const tj_jit_kernel_t *k = ks->n_chunks ? &ks->chunk[j] : &ks->k;
      TJ_RETURN_IF_ERROR(
          tj_executable_add_kernel(exe, ks->name, k->fn, k->n_buffers, k->n_scalars, &kernel_ids[i * N_CHUNKS + j]));
    }
  }
  for (int i = 0; i < bd->n_calls; i++) {
    const pending_call_t *c = &bd->calls[i];
    int *args = TJ_ARENA_ARRAY(arena, int, c->n_args + 1);
    int64_t *scalars = TJ_ARENA_ARRAY(arena, int64_t, bd->kernels[c->kernel].k.n_scalars + 1);
    if (!args || !scalars) return oom();
    TJ_RETURN_IF_ERROR(bound_scalars(bd, c, values, descs, scalars));
    for (int j = 0; j < c->n_args; j++) args[j] = value_ids[c->args[j]];
    TJ_RETURN_IF_ERROR(add_packed_args(bd, &packed, i, &args, arena));
    if (bd->kernels[c->kernel].n_chunks)
      TJ_RETURN_IF_ERROR(add_chunk_calls(exe, &bd->kernels[c->kernel], kernel_ids + c->kernel * N_CHUNKS, c, args,
                                         scalars[0]));
    else
      TJ_RETURN_IF_ERROR(tj_executable_add_call(exe, kernel_ids[c->kernel * N_CHUNKS],
                                                c->n_args + bd->kernels[c->kernel].prepacks.n, args, scalars,
                                                c->binding));
  }
  for (int i = 0; i < bd->n_copies; i++)
    if (bd->copies[i] >= 0) TJ_RETURN_IF_ERROR(tj_executable_set_output(exe, i, value_ids[bd->copies[i]]));
  return tj_executable_plan_memory(exe);
}

/* Slots whose kernel was queued get its code (their ABI is already the kernel's). */
static void take_queued_code(build_t *bd) {
  for (int i = 0; i < bd->n_kernels; i++) {
    kernel_slot_t *ks = &bd->kernels[i];
    if (ks->pending < 0) continue;
    const tj_jit_kernel_t *k = &bd->queue.items[ks->pending].k;
    ks->k.symbol = k->symbol;
    ks->k.fn = k->fn;
    ks->pending = -1;
  }
}

void tj_jit_program_free(tj_jit_program_t *p) {
  if (!p) return;
  tj_arena_free(p->bd.arena);
  tj_free(p);
}

tj_status_t *tj_jit_compile_program(tj_jit_t *jit, const tj_module_t *m, const char *function,
                                    const tj_jit_options_t *opts, tj_jit_program_t **out_program) {
  double t0 = tj_jit_now_ms();
  function = function ? function : "main";
  const tj_rx_func_t *fn = tj_module_find_relax(m, function);
  if (!fn) return tj_status_new(TJ_ERR_NOT_FOUND, "the module has no Relax function '%s' to compile", function);
  tj_jit_program_t *p = tj_calloc(1, sizeof *p);
  if (!p) return oom();
  build_t *bd = &p->bd;
  *bd = (build_t){.jit = jit, .mod = m, .function = function, .opts = opts, .opt_level = opt_level_of(opts),
                  .schedule = schedule_of(opts), .borrow_constants = opts && opts->borrow_constants};
  bd->arena = tj_arena_create();
  tj_status_t *s = bd->arena ? tj_jit_target_machine(bd->opt_level, &bd->tm) : oom();
  if (!s) s = walk_function(bd, fn);
  if (!s) s = tj_build_group_channels(bd);
  if (!s) s = compile_queue(jit, &bd->queue, opts, bd->opt_level, bd->tm, &bd->acc);
  if (!s) take_queued_code(bd);
  queue_free(&bd->queue);
  if (bd->tm) LLVMDisposeTargetMachine(bd->tm);
  bd->tm = NULL;
  bd->opts = NULL; /* the caller's: not kept */
  if (s) {
    tj_jit_program_free(p);
    return tj_status_annotate(s, "JIT-compiling '%s'", function);
  }
  publish_stats(jit, opts, &bd->acc, t0);
  *out_program = p;
  return NULL;
}

int tj_jit_program_num_vars(const tj_jit_program_t *p) { return p->bd.n_sig_vars; }
const tj_tir_expr_t *const *tj_jit_program_vars(const tj_jit_program_t *p) { return p->bd.sig_vars; }

static tj_status_t *instantiate(const tj_jit_program_t *p, const int64_t *values, const tj_prepack_release_t *release,
                                tj_executable_t **out_exe) {
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return oom();
  tj_executable_t *exe = NULL;
  tj_status_t *s = tj_executable_create(&exe);
  if (!s) s = build_executable(&p->bd, arena, values, release, exe);
  tj_arena_free(arena);
  if (s) {
    tj_executable_free(exe);
    return tj_status_annotate(s, "JIT-compiling '%s'", p->bd.function);
  }
  *out_exe = exe;
  return NULL;
}

tj_status_t *tj_jit_program_instantiate(const tj_jit_program_t *p, const int64_t *values, tj_executable_t **out_exe) {
  return instantiate(p, values, NULL, out_exe);
}

static const char *first_symbolic(const build_t *bd) {
  for (int i = 0; i < bd->n_values; i++)
    if (bd->shapes[i]) return bd->values[i].name;
  return "?";
}

tj_status_t *tj_jit_compile_module(tj_jit_t *jit, const tj_module_t *m, const char *function,
                                   const tj_jit_options_t *opts, tj_executable_t **out_exe) {
  tj_jit_program_t *p = NULL;
  TJ_RETURN_IF_ERROR(tj_jit_compile_program(jit, m, function, opts, &p));
  tj_status_t *s = NULL;
  if (p->bd.n_sig_vars)
    s = tj_status_new(TJ_ERR_UNSUPPORTED,
                      "JIT-compiling '%s': parameter '%s' has symbolic dims; compile it as a program and bind its "
                      "vars per call (tj_jit_compile_program)",
                      p->bd.function, first_symbolic(&p->bd));
  /* One executable only, so a weight it reads only packed may go once packed. */
  tj_prepack_release_t release = {opts ? opts->release_constant : NULL, opts ? opts->release_ctx : NULL};
  if (!s) s = instantiate(p, NULL, &release, out_exe);
  tj_jit_program_free(p);
  return s;
}
