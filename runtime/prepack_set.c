/* The packed constant weights of one executable (prepack_set.h): one packed copy per
 * distinct (constant, layout), found by a linear search over the copies made so far (a
 * model has a few dozen), all packed together in pieces on the current pool. */
#include "runtime/prepack_set.h"

#include <string.h>

#include "runtime/thread_pool.h"
#include "support/alloc.h"

typedef struct packed_weight {
  const void *source; /* the constant's data */
  tj_prepack_desc_t desc;
  const tj_packed_call_t *call; /* the first call that reads it so, for messages */
  const tj_value_desc_t *weight;
  size_t bytes;
  int value;            /* in the executable */
  void *data;
  bool source_released; /* nothing reads the source but packed copies: offered to `release` after this item */
  bool source_reused;   /* ... and a later item's packed copy fits in its block */
  bool fits_freed;      /* this item's packed copy is the one a freed source's block was kept for */
} packed_weight_t;

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "packing constants: out of memory"); }

static void release_packed(void *p) { tj_aligned_free(p); }

static bool same_desc(const tj_prepack_desc_t *a, const tj_prepack_desc_t *b) { return memcmp(a, b, sizeof *a) == 0; }

/* The packing of weight `w` for read `r`, as runtime/prepack.h describes it. */
static tj_prepack_desc_t prepack_desc(const tj_value_desc_t *w, const tj_packed_read_t *r) {
  tj_prepack_desc_t d;
  memset(&d, 0, sizeof d); /* compared with memcmp */
  d.ndim = w->ndim;
  for (int i = 0; i < w->ndim; i++) d.shape[i] = w->shape[i], d.perm[i] = r->perm[i];
  d.lanes = r->lanes;
  d.from = w->dtype;
  d.to = r->to;
  d.winograd_m = r->winograd_m;
  return d;
}

/* The packed copy for read `r` of call `c`: an earlier one of the same constant and
 * layout, else a new item (sized, not packed yet). */
static tj_status_t *find_or_add(const tj_packed_call_t *c, const tj_packed_read_t *r, const tj_value_desc_t *w,
                                packed_weight_t *items, int *n_items, int *out_at) {
  if (w->kind != TJ_VALUE_CONSTANT || !w->const_data)
    return tj_status_new(TJ_ERR_INTERNAL, "binding '%s': '%s' reads '%s' packed, but it is not a constant", c->binding,
                         c->kernel, w->name);
  tj_prepack_desc_t d = prepack_desc(w, r);
  for (int k = 0; k < *n_items; k++)
    if (items[k].source == w->const_data && same_desc(&items[k].desc, &d)) return *out_at = k, NULL;
  size_t bytes;
  TJ_RETURN_IF_ERROR(
      tj_status_annotate(tj_prepack_bytes(&d, &bytes), "binding '%s': packing '%s'", c->binding, w->name));
  items[*n_items] = (packed_weight_t){w->const_data, d, c, w, bytes, -1, NULL, false, false, false};
  *out_at = (*n_items)++;
  return NULL;
}

/* A piece of one packed weight (parts [begin, end) of it). */
typedef struct pack_piece {
  const packed_weight_t *item;
  int64_t begin, end;
} pack_piece_t;

typedef struct pack_job {
  const pack_piece_t *pieces;
} pack_job_t;

static void pack_pieces(int64_t begin, int64_t end, void *ctx) {
  const pack_job_t *job = ctx;
  for (int64_t i = begin; i < end; i++) {
    const pack_piece_t *p = &job->pieces[i];
    /* cannot fail: find_or_add checked the description (tj_prepack_bytes) */
    tj_status_free(tj_prepack_run_parts(&p->item->desc, p->item->source, p->item->data, p->begin, p->end));
  }
}

/* Pieces of about this many packed bytes: each of ResNet-18's large weights (three of
 * 9.4 MB) then splits evenly over the pool's threads. */
#define PIECE_BYTES ((size_t)256 << 10)

/* Packs one item, in pieces on the calling thread's current pool (the instance's, set
 * around compiles by api/driver.c; inline without one). `pieces` has room for
 * tj_prepack_parts(item) of them. */
static void pack_item(const packed_weight_t *it, pack_piece_t *pieces) {
  int64_t parts = tj_prepack_parts(&it->desc), per = parts ? (int64_t)(it->bytes / (size_t)parts) : 1;
  int64_t step = per >= (int64_t)PIECE_BYTES ? 1 : (int64_t)PIECE_BYTES / (per ? per : 1), n = 0;
  for (int64_t b = 0; b < parts; b += step) pieces[n++] = (pack_piece_t){it, b, b + step < parts ? b + step : parts};
  pack_job_t job = {pieces};
  tj_thread_pool_parallel_for(tj_thread_pool_current(), n, pack_pieces, &job);
}

/* Each packed weight in its own block, owned by exe, allocated just before it is
 * packed, and each source nothing else reads offered to `release` right after its last
 * copy, so a caller that frees it (tvmjit_module_adopt_tensor) never holds a weight
 * both unpacked and packed beyond the one being packed: ResNet-18's cached start peaked
 * at 170 MiB RSS with all of them held, 129 without (Ice Lake host). Not one block for
 * all: blocks the caller freed after the passes (BERT's untransposed weights, 2.4 and
 * 9.4 MB) are kept for reuse (support/alloc.h) and serve packed weights of their size; a
 * single 28 MB block took fresh memory instead and raised BERT's peak RSS from 114 to
 * 139 MiB. */
static tj_status_t *pack_all(tj_arena_t *arena, tj_executable_t *exe, packed_weight_t *items, int n_items,
                             const tj_prepack_release_t *release) {
  int64_t most = 1;
  for (int k = 0; k < n_items; k++) most = tj_prepack_parts(&items[k].desc) > most ? tj_prepack_parts(&items[k].desc) : most;
  pack_piece_t *pieces = TJ_ARENA_ARRAY(arena, pack_piece_t, most);
  if (!pieces) return oom();
  for (int k = 0; k < n_items; k++) {
    packed_weight_t *it = &items[k];
    it->data = tj_aligned_alloc(it->bytes ? it->bytes : 1);
    if (!it->data) return oom();
    tj_advise_huge_pages(it->data, it->bytes); /* fresh memory the packing faults in */
    tj_status_t *s = tj_executable_own(exe, it->data, release_packed);
    if (s) {
      tj_aligned_free(it->data);
      return s;
    }
    tj_value_desc_t v = {.name = it->weight->name, .dtype = it->desc.to, .ndim = tj_prepack_ndim(&it->desc),
                         .kind = TJ_VALUE_CONSTANT, .nbytes = it->bytes, .const_data = it->data};
    tj_prepack_shape(&it->desc, v.shape);
    TJ_RETURN_IF_ERROR(tj_executable_add_value(exe, &v, &it->value));
    pack_item(it, pieces);
    if (it->source_released && release && release->fn) release->fn(release->ctx, it->source, it->source_reused);
  }
  return NULL;
}

/* Pairs each released source with the first later item whose packed copy its block can
 * hold (1 to 2 times that copy's size, as support/alloc.h's cache hands blocks out):
 * that copy then takes the block instead of fresh memory. ResNet-18: the second and
 * third 512x512 convs take the blocks of the first and second, the classifier one of
 * the 256-channel convs' (~21 of 57 MB). */
static void plan_reuse(packed_weight_t *items, int n_items) {
  for (int k = 0; k < n_items; k++) {
    if (!items[k].source_released) continue;
    size_t have = items[k].weight->nbytes;
    for (int j = k + 1; j < n_items && !items[k].source_reused; j++)
      if (!items[j].fits_freed && items[j].bytes <= have && have / 2 <= items[j].bytes)
        items[j].fits_freed = items[k].source_reused = true;
  }
}

/* Whether constant v's bytes overlap [lo, hi). */
static bool value_overlaps(const tj_value_desc_t *v, const char *lo, const char *hi) {
  const char *p = v->const_data;
  return v->kind == TJ_VALUE_CONSTANT && p && p < hi && lo < p + (v->nbytes ? v->nbytes : 1);
}

/* The bytes [source, *end) a release of `source` would give up: the largest constant
 * that starts there. Channel groups (jit/compile.c) make constants that are slices of
 * another, so a source's block can hold other values' data. */
static const char *source_end(const void *source, int n_values, const tj_value_desc_t *values) {
  const char *end = (const char *)source + 1;
  for (int v = 0; v < n_values; v++)
    if (values[v].kind == TJ_VALUE_CONSTANT && values[v].const_data == source &&
        (const char *)source + values[v].nbytes > end)
      end = (const char *)source + values[v].nbytes;
  return end;
}

/* Whether item k's source can be given up after it: no later item packs from its bytes
 * and every value in them is read only through packed copies. */
static bool source_releasable(const packed_weight_t *items, int n_items, int k, int n_values,
                              const tj_value_desc_t *values, const int *unread, const int *uses) {
  const char *lo = items[k].source, *hi = source_end(lo, n_values, values);
  for (int j = k + 1; j < n_items; j++)
    if (value_overlaps(items[j].weight, lo, hi)) return false;
  for (int v = 0; v < n_values; v++)
    if (value_overlaps(&values[v], lo, hi) && unread[v] != uses[v]) return false;
  return true;
}

tj_status_t *tj_prepack_set_build(tj_arena_t *arena, int n_calls, const tj_packed_call_t *calls, int n_values,
                                  const tj_value_desc_t *values, const int *other_uses, tj_executable_t *exe,
                                  const tj_prepack_release_t *release, tj_prepack_set_t *out) {
  memset(out, 0, sizeof *out);
  int total = 0, n_items = 0;
  for (int i = 0; i < n_calls; i++) total += calls[i].n_reads;
  if (!total) return NULL;
  packed_weight_t *items = TJ_ARENA_ARRAY(arena, packed_weight_t, total);
  out->n_calls = n_calls;
  out->value_of_read = TJ_ARENA_ARRAY(arena, int *, n_calls);
  out->unread_source = TJ_ARENA_ARRAY(arena, const void *, n_values);
  int *uses = TJ_ARENA_ARRAY(arena, int, n_values), *unread = TJ_ARENA_ARRAY(arena, int, n_values);
  if (!items || !out->value_of_read || !out->unread_source || !uses || !unread) return oom();
  memset(out->unread_source, 0, sizeof *out->unread_source * (size_t)n_values);
  memset(unread, 0, sizeof *unread * (size_t)n_values);
  for (int v = 0; v < n_values; v++) uses[v] = other_uses ? other_uses[v] : 0;
  for (int i = 0; i < n_calls; i++) { /* value_of_read holds item indices until pack_all */
    const tj_packed_call_t *c = &calls[i];
    for (int j = 0; j < c->n_args; j++) uses[c->args[j]]++;
    out->value_of_read[i] = c->n_reads ? TJ_ARENA_ARRAY(arena, int, c->n_reads) : NULL;
    if (c->n_reads && !out->value_of_read[i]) return oom();
    for (int p = 0; p < c->n_reads; p++) {
      TJ_RETURN_IF_ERROR(find_or_add(c, &c->reads[p], &values[c->args[c->reads[p].arg]], items, &n_items,
                                     &out->value_of_read[i][p]));
      if (c->reads[p].source_unread) unread[c->args[c->reads[p].arg]]++;
    }
  }
  for (int k = 0; k < n_items; k++)
    items[k].source_released = source_releasable(items, n_items, k, n_values, values, unread, uses);
  plan_reuse(items, n_items);
  TJ_RETURN_IF_ERROR(pack_all(arena, exe, items, n_items, release));
  for (int i = 0; i < n_calls; i++)
    for (int p = 0; p < calls[i].n_reads; p++) {
      const packed_weight_t *it = &items[out->value_of_read[i][p]];
      int v = calls[i].args[calls[i].reads[p].arg];
      out->value_of_read[i][p] = it->value;
      if (calls[i].reads[p].source_unread) out->unread_source[v] = it->data;
    }
  for (int v = 0; v < n_values; v++)
    if (unread[v] != uses[v]) out->unread_source[v] = NULL;
  return NULL;
}
