/* What a cached kernel needs beside its code: the descriptions of the weights it reads
 * packed (tj_tir_prepack_t), which lowering returns and the executable packs by. A start
 * from the disk cache no longer lowers (jit/func_digest.c), so they are stored with the
 * object and checked, on load, against the un-lowered PrimFunc and the object's ABI.
 *
 * Layout (native byte order: the key holds the triple): "TJKM", a version, the count,
 * then per weight its fields as int64. */
#include <stdio.h>
#include <string.h>

#include "jit/internal.h"
#include "support/alloc.h"

#define META_MAGIC "TJKM"
#define META_VERSION 1
enum { FIELDS = 8 + TJ_TIR_PREPACK_MAX_DIMS }; /* per weight */

static size_t meta_size(int n) { return 8 + sizeof(int64_t) * (1 + (size_t)n * FIELDS); }

tj_status_t *tj_jit_meta_encode(const tj_tir_prepacks_t *p, void **out_meta, size_t *out_size) {
  int n = p ? p->n : 0;
  size_t size = meta_size(n);
  unsigned char *m = tj_malloc(size);
  if (!m) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(m, META_MAGIC, 4);
  uint32_t version = META_VERSION;
  memcpy(m + 4, &version, 4);
  int64_t *v = (int64_t *)(void *)(m + 8);
  *v++ = n;
  for (int i = 0; i < n; i++) {
    const tj_tir_prepack_t *pp = &p->items[i];
    *v++ = pp->param, *v++ = pp->packed_param, *v++ = pp->ndim, *v++ = pp->lanes;
    *v++ = ((int64_t)pp->dtype.code << 32) | ((int64_t)pp->dtype.bits << 16) | pp->dtype.lanes;
    *v++ = pp->winograd_m, *v++ = pp->source_unread, *v++ = 0;
    for (int k = 0; k < TJ_TIR_PREPACK_MAX_DIMS; k++) *v++ = pp->perm[k];
  }
  *out_meta = m;
  *out_size = size;
  return NULL;
}

static bool fail(char *why, size_t why_len, const char *what) {
  snprintf(why, why_len, "its kernel description %s", what);
  return false;
}

static bool is_permutation(const int *perm, int n) {
  bool seen[TJ_TIR_PREPACK_MAX_DIMS] = {false};
  for (int k = 0; k < n; k++) {
    if (perm[k] < 0 || perm[k] >= n || seen[perm[k]]) return false;
    seen[perm[k]] = true;
  }
  return true;
}

/* One weight's description, checked against the PrimFunc it packs for. */
static bool decode_one(const int64_t *v, const tj_prim_func_t *f, int index, tj_tir_prepack_t *out) {
  tj_tir_prepack_t pp = {0};
  if (v[0] < 0 || v[0] >= f->n_params || !f->buffer_map || !f->buffer_map[v[0]]) return false;
  pp.param = (int)v[0];
  if (v[1] != (int64_t)f->n_params + index) return false;
  pp.packed_param = (int)v[1];
  if (v[2] != f->buffer_map[pp.param]->ndim || v[2] < 1 || v[2] > TJ_TIR_PREPACK_MAX_DIMS) return false;
  pp.ndim = (int)v[2];
  if (v[3] < 1 || v[3] > 4096) return false;
  pp.lanes = v[3];
  pp.dtype = (tj_dtype_t){(uint8_t)(v[4] >> 32), (uint8_t)(v[4] >> 16), (uint16_t)v[4]};
  if (v[4] >> 40 || pp.dtype.bits == 0 || pp.dtype.lanes != 1) return false;
  if (v[5] != 0 && v[5] != 2 && v[5] != 4) return false;
  pp.winograd_m = (int)v[5];
  if (v[6] != 0 && v[6] != 1) return false;
  pp.source_unread = v[6] == 1;
  for (int k = 0; k < TJ_TIR_PREPACK_MAX_DIMS; k++) {
    if (v[8 + k] < -1 || v[8 + k] >= TJ_TIR_PREPACK_MAX_DIMS) return false;
    pp.perm[k] = (int)v[8 + k];
  }
  if (pp.winograd_m == 0 && !is_permutation(pp.perm, pp.ndim)) return false;
  *out = pp;
  return true;
}

bool tj_jit_meta_decode(const void *meta, size_t size, const tj_prim_func_t *f, int n_buffers, int n_scalars,
                        tj_tir_prepacks_t *out, char *why, size_t why_len) {
  const unsigned char *m = meta;
  uint32_t version = 0;
  int64_t n = -1;
  if (m && size >= 16) memcpy(&version, m + 4, 4), memcpy(&n, m + 8, 8);
  if (!m || size < 16 || memcmp(m, META_MAGIC, 4) != 0 || version != META_VERSION) return fail(why, why_len, "is missing");
  if (n < 0 || n > TJ_TIR_MAX_PREPACKS || size != meta_size((int)n)) return fail(why, why_len, "is malformed");
  int buffers = 0;
  for (int i = 0; i < f->n_params; i++) buffers += f->buffer_map && f->buffer_map[i] ? 1 : 0;
  if (n_buffers != buffers + n || n_scalars != f->n_params - buffers)
    return fail(why, why_len, "does not match the kernel's parameters");
  tj_tir_prepacks_t p = {.n = (int)n};
  for (int i = 0; i < n; i++) {
    int64_t v[FIELDS];
    memcpy(v, m + 16 + sizeof v * (size_t)i, sizeof v);
    if (!decode_one(v, f, i, &p.items[i])) return fail(why, why_len, "does not match the kernel's parameters");
  }
  *out = p;
  return true;
}
