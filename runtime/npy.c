/* .npy reader and writer. The format (numpy/lib/format.py): the magic "\x93NUMPY", a
 * major and minor version byte, the header length (uint16 for 1.0, uint32 for 2.0/3.0,
 * little-endian), then the header: a Python dict literal
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by '\n', and then the raw C-order data.
 * Every field is checked against the file before anything is allocated from it. */
#include "runtime/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/alloc.h"
#include "support/strbuf.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader assumes a little-endian host"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_SUPPORTED_HINT                                                                  \
  "tvmjit reads float16/32/64, bfloat16 ('<V2', ml_dtypes), int8/16/32/64, uint8/16/32/64 " \
  "and bool in little-endian "                                                          \
  "order; convert with e.g. a.astype(np.float32)"

typedef struct npy_header {
  tj_dtype_t dtype;
  int ndim;
  int64_t shape[TJ_MAX_NDIM];
  size_t nbytes;
} npy_header_t;

/* ---- the dtype table ---- */

static const struct {
  char kind;
  int size;
  tj_dtype_t dtype;
  const char *descr;
} npy_types[] = {
    {'f', 2, {TJ_DT_FLOAT, 16, 1}, "<f2"}, {'f', 4, {TJ_DT_FLOAT, 32, 1}, "<f4"},
    {'f', 8, {TJ_DT_FLOAT, 64, 1}, "<f8"}, {'i', 1, {TJ_DT_INT, 8, 1}, "|i1"},
    {'i', 2, {TJ_DT_INT, 16, 1}, "<i2"},   {'i', 4, {TJ_DT_INT, 32, 1}, "<i4"},
    {'i', 8, {TJ_DT_INT, 64, 1}, "<i8"},   {'u', 1, {TJ_DT_UINT, 8, 1}, "|u1"},
    {'u', 2, {TJ_DT_UINT, 16, 1}, "<u2"},  {'u', 4, {TJ_DT_UINT, 32, 1}, "<u4"},
    {'u', 8, {TJ_DT_UINT, 64, 1}, "<u8"},  {'b', 1, {TJ_DT_BOOL, 1, 1}, "|b1"},
    /* numpy has no bfloat16: ml_dtypes' bfloat16 arrays are saved as 2 opaque bytes,
     * '<V2' (a plain void array says '|V2'); np.load gives them back as void, and
     * a.view(ml_dtypes.bfloat16) or a.view(np.uint16) reads the bits. */
    {'V', 2, {TJ_DT_BFLOAT, 16, 1}, "<V2"},
};
#define NPY_N_TYPES (sizeof npy_types / sizeof npy_types[0])

const char *tj_npy_descr(tj_dtype_t dtype) {
  for (size_t i = 0; i < NPY_N_TYPES; i++)
    if (tj_dtype_eq(npy_types[i].dtype, dtype)) return npy_types[i].descr;
  return NULL;
}

/* Maps a descr string to a dtype; the message explains any refusal. */
static tj_status_t *npy_dtype_from_descr(const char *name, const char *descr, tj_dtype_t *out_dtype) {
  if (strcmp(descr, "bfloat16") == 0) return *out_dtype = TJ_BF16, NULL;
  char order = descr[0];
  if (order == '\0' || !strchr("<>|=", order))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: dtype '%s' is not supported; " NPY_SUPPORTED_HINT, name, descr);
  char kind = descr[1];
  if (kind == 'O')
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "%s: object arrays ('%s') are not supported: they hold Python objects, not numbers; "
                         "save a numeric array, e.g. np.save(path, a.astype(np.float32))",
                         name, descr);
  char *end;
  long size = kind ? strtol(descr + 2, &end, 10) : 0;
  bool well_formed = kind && descr[2] >= '0' && descr[2] <= '9' && *end == '\0';
  if (well_formed && kind == 'V' && size == 2) { /* '<V2' or '|V2' */
    *out_dtype = TJ_BF16;
    return NULL;
  }
  for (size_t i = 0; well_formed && i < NPY_N_TYPES; i++) {
    if (npy_types[i].kind != kind || npy_types[i].size != size) continue;
    if (size > 1 && order == '>')
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                           "%s: big-endian arrays ('%s') are not supported; save with a.astype('%s')", name, descr,
                           npy_types[i].descr);
    if (size > 1 && order == '|') break; /* a multi-byte type needs a byte order */
    *out_dtype = npy_types[i].dtype;
    return NULL;
  }
  return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: dtype '%s' is not supported; " NPY_SUPPORTED_HINT, name, descr);
}

/* ---- the header dict ---- */

typedef struct npy_lexer {
  const char *p, *end;
  const char *name;      /* file name for messages */
  const char *text;      /* the whole header, for messages */
  size_t text_len;
} npy_lexer_t;

/* "malformed header" status quoting (a printable excerpt of) the header. */
static tj_status_t *npy_malformed(const npy_lexer_t *lx, const char *why) {
  char excerpt[96];
  size_t n = lx->text_len < sizeof excerpt - 4 ? lx->text_len : sizeof excerpt - 4;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)lx->text[i];
    excerpt[i] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  while (n > 0 && excerpt[n - 1] == ' ') n--;
  excerpt[n] = '\0';
  if (lx->text_len > sizeof excerpt - 4) strcat(excerpt, "...");
  return tj_status_new(TJ_ERR_IO, "%s: malformed .npy header: %s (header: \"%s\")", lx->name, why, excerpt);
}

static void npy_skip_space(npy_lexer_t *lx) {
  while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r')) lx->p++;
}

static bool npy_accept(npy_lexer_t *lx, char c) {
  npy_skip_space(lx);
  if (lx->p < lx->end && *lx->p == c) {
    lx->p++;
    return true;
  }
  return false;
}

static bool npy_accept_word(npy_lexer_t *lx, const char *word) {
  npy_skip_space(lx);
  size_t n = strlen(word);
  if ((size_t)(lx->end - lx->p) < n || memcmp(lx->p, word, n) != 0) return false;
  lx->p += n;
  return true;
}

/* A quoted string without escapes into buf. */
static tj_status_t *npy_string(npy_lexer_t *lx, char *buf, size_t cap) {
  npy_skip_space(lx);
  if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"')) return npy_malformed(lx, "expected a quoted string");
  char quote = *lx->p++;
  size_t n = 0;
  while (lx->p < lx->end && *lx->p != quote) {
    if (*lx->p == '\\') return npy_malformed(lx, "escape sequences are not expected in header strings");
    if (n + 1 >= cap) return npy_malformed(lx, "string too long");
    buf[n++] = *lx->p++;
  }
  if (lx->p >= lx->end) return npy_malformed(lx, "unterminated string");
  lx->p++;
  buf[n] = '\0';
  return NULL;
}

static tj_status_t *npy_parse_descr(npy_lexer_t *lx, npy_header_t *hdr) {
  npy_skip_space(lx);
  if (lx->p < lx->end && *lx->p == '[')
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "%s: structured (record) arrays are not supported; save each field as its own array",
                         lx->name);
  char descr[32];
  TJ_RETURN_IF_ERROR(npy_string(lx, descr, sizeof descr));
  return npy_dtype_from_descr(lx->name, descr, &hdr->dtype);
}

static tj_status_t *npy_parse_bool(npy_lexer_t *lx, bool *out_value) {
  if (npy_accept_word(lx, "True")) return *out_value = true, NULL;
  if (npy_accept_word(lx, "False")) return *out_value = false, NULL;
  return npy_malformed(lx, "'fortran_order' must be True or False");
}

static tj_status_t *npy_parse_dim(npy_lexer_t *lx, int64_t *out_dim) {
  npy_skip_space(lx);
  if (lx->p < lx->end && *lx->p == '-') return npy_malformed(lx, "negative dimension in 'shape'");
  if (lx->p >= lx->end || *lx->p < '0' || *lx->p > '9') return npy_malformed(lx, "expected an integer in 'shape'");
  int64_t v = 0;
  while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9') {
    int digit = *lx->p++ - '0';
    if (v > (INT64_MAX - digit) / 10) return npy_malformed(lx, "dimension in 'shape' does not fit in 64 bits");
    v = v * 10 + digit;
  }
  if (lx->p < lx->end && *lx->p == 'L') lx->p++; /* Python 2 long literal */
  *out_dim = v;
  return NULL;
}

static tj_status_t *npy_parse_shape(npy_lexer_t *lx, npy_header_t *hdr) {
  if (!npy_accept(lx, '(')) return npy_malformed(lx, "'shape' must be a tuple such as (3, 4)");
  hdr->ndim = 0;
  while (!npy_accept(lx, ')')) {
    int64_t dim = 0;
    TJ_RETURN_IF_ERROR(npy_parse_dim(lx, &dim));
    if (hdr->ndim == TJ_MAX_NDIM)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: the array has more than %d dimensions; tvmjit supports at most %d",
                           lx->name, TJ_MAX_NDIM, TJ_MAX_NDIM);
    hdr->shape[hdr->ndim++] = dim;
    if (npy_accept(lx, ',')) continue;
    if (npy_accept(lx, ')')) break;
    return npy_malformed(lx, "expected ',' or ')' in 'shape'");
  }
  return NULL;
}

/* Parses the dict; each of the three keys must appear exactly once and no other. */
static tj_status_t *npy_parse_dict(npy_lexer_t *lx, npy_header_t *hdr) {
  bool seen_descr = false, seen_order = false, seen_shape = false, fortran = false;
  if (!npy_accept(lx, '{')) return npy_malformed(lx, "expected '{'");
  while (!npy_accept(lx, '}')) {
    char key[32];
    TJ_RETURN_IF_ERROR(npy_string(lx, key, sizeof key));
    if (!npy_accept(lx, ':')) return npy_malformed(lx, "expected ':' after a key");
    bool *seen;
    if (strcmp(key, "descr") == 0) {
      seen = &seen_descr;
      if (!*seen) TJ_RETURN_IF_ERROR(npy_parse_descr(lx, hdr));
    } else if (strcmp(key, "fortran_order") == 0) {
      seen = &seen_order;
      if (!*seen) TJ_RETURN_IF_ERROR(npy_parse_bool(lx, &fortran));
    } else if (strcmp(key, "shape") == 0) {
      seen = &seen_shape;
      if (!*seen) TJ_RETURN_IF_ERROR(npy_parse_shape(lx, hdr));
    } else {
      return npy_malformed(lx, "unexpected key (only 'descr', 'fortran_order' and 'shape' are allowed)");
    }
    if (*seen) return npy_malformed(lx, "duplicate key");
    *seen = true;
    if (npy_accept(lx, ',')) continue;
    if (npy_accept(lx, '}')) break;
    return npy_malformed(lx, "expected ',' or '}' after a value");
  }
  npy_skip_space(lx);
  if (lx->p != lx->end) {
    /* numpy pads with spaces and a final '\n'; tolerate NULs some writers use, nothing else. */
    while (lx->p < lx->end && *lx->p == '\0') lx->p++;
    if (lx->p != lx->end) return npy_malformed(lx, "unexpected text after the dict");
  }
  if (!seen_descr || !seen_order || !seen_shape)
    return npy_malformed(lx, !seen_descr ? "missing key 'descr'" : !seen_order ? "missing key 'fortran_order'"
                                                                                : "missing key 'shape'");
  if (fortran && hdr->ndim >= 2)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "%s: Fortran-order arrays are not supported; save with np.ascontiguousarray(a)", lx->name);
  return NULL;
}

static void npy_shape_str(const npy_header_t *hdr, char *buf, size_t cap) {
  size_t pos = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < hdr->ndim && pos < cap; i++)
    pos += (size_t)snprintf(buf + pos, cap - pos, "%s%lld", i ? ", " : "", (long long)hdr->shape[i]);
  if (pos < cap) snprintf(buf + pos, cap - pos, hdr->ndim == 1 ? ",)" : ")");
}

static tj_status_t *npy_compute_nbytes(const char *name, npy_header_t *hdr) {
  size_t total = tj_dtype_bytes(hdr->dtype);
  for (int i = 0; i < hdr->ndim; i++) {
    uint64_t d = (uint64_t)hdr->shape[i];
    if (d != 0 && total > SIZE_MAX / d) {
      char sbuf[256];
      npy_shape_str(hdr, sbuf, sizeof sbuf);
      return tj_status_new(TJ_ERR_IO, "%s: shape %s is too large to address (a corrupt or lying header)", name, sbuf);
    }
    total *= (size_t)d;
  }
  hdr->nbytes = total;
  return NULL;
}

/* ---- the fixed prefix ---- */

/* Reads magic, version and header length from the first `avail` bytes of a `total`-byte
 * file. On success the header occupies [*out_start, *out_start + *out_len). */
static tj_status_t *npy_parse_prefix(const unsigned char *b, size_t avail, size_t total, const char *name,
                                     size_t *out_start, size_t *out_len) {
  size_t magic_avail = avail < NPY_MAGIC_LEN ? avail : NPY_MAGIC_LEN;
  if (total == 0) return tj_status_new(TJ_ERR_IO, "%s: empty file; expected a .npy file written by np.save", name);
  if (memcmp(b, NPY_MAGIC, magic_avail) != 0)
    return tj_status_new(TJ_ERR_IO, "%s: not a .npy file (it does not start with \\x93NUMPY); write it with np.save",
                         name);
  if (total < 10) return tj_status_new(TJ_ERR_IO, "%s: truncated .npy file (%zu bytes, no header)", name, total);
  int major = b[6], minor = b[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "%s: unsupported .npy format version %d.%d; tvmjit reads versions 1.0, 2.0 and 3.0", name,
                         major, minor);
  size_t start, len;
  if (major == 1) {
    start = 10;
    len = (size_t)b[8] | (size_t)b[9] << 8;
  } else {
    if (total < 12 || avail < 12)
      return tj_status_new(TJ_ERR_IO, "%s: truncated .npy file (%zu bytes, no header)", name, total);
    start = 12;
    len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
  }
  if (len > total - start)
    return tj_status_new(TJ_ERR_IO, "%s: header length %zu goes beyond the end of the file (%zu bytes); the file is truncated or corrupt",
                         name, len, total);
  *out_start = start;
  *out_len = len;
  return NULL;
}

/* Parses the header text and checks that exactly the data it announces follows it. */
static tj_status_t *npy_parse_header(const char *text, size_t len, size_t data_avail, const char *name,
                                     npy_header_t *out_hdr) {
  npy_header_t hdr = {0};
  npy_lexer_t lx = {text, text + len, name, text, len};
  TJ_RETURN_IF_ERROR(npy_parse_dict(&lx, &hdr));
  TJ_RETURN_IF_ERROR(npy_compute_nbytes(name, &hdr));
  if (data_avail != hdr.nbytes) {
    char sbuf[256], dbuf[TJ_DTYPE_BUFSIZE];
    npy_shape_str(&hdr, sbuf, sizeof sbuf);
    if (data_avail < hdr.nbytes)
      return tj_status_new(TJ_ERR_IO,
                           "%s: truncated .npy file: shape %s of %s needs %zu bytes of data but only %zu follow the header",
                           name, sbuf, tj_dtype_str(hdr.dtype, dbuf), hdr.nbytes, data_avail);
    return tj_status_new(TJ_ERR_IO,
                         "%s: %zu unexpected bytes after the array: shape %s of %s needs %zu bytes of data but %zu follow the header",
                         name, data_avail - hdr.nbytes, sbuf, tj_dtype_str(hdr.dtype, dbuf), hdr.nbytes, data_avail);
  }
  *out_hdr = hdr;
  return NULL;
}

/* ---- loading ---- */

tj_status_t *tj_npy_load_bytes(const void *data, size_t len, const char *name, tj_tensor_t **out_tensor) {
  const unsigned char *b = data;
  if (!name) name = "<memory>";
  if (!b && len) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: no data", name);
  size_t start = 0, hlen = 0; /* set by npy_parse_prefix; GCC 12 cannot see it */
  TJ_RETURN_IF_ERROR(npy_parse_prefix(b, len, len, name, &start, &hlen));
  npy_header_t hdr;
  TJ_RETURN_IF_ERROR(npy_parse_header((const char *)b + start, hlen, len - start - hlen, name, &hdr));
  tj_tensor_t *t;
  /* not zeroed first: the copy fills every byte (hdr.nbytes is the tensor's size) */
  TJ_RETURN_IF_ERROR(tj_status_annotate(tj_tensor_new_uninit(hdr.dtype, hdr.ndim, hdr.shape, &t), "%s", name));
  if (hdr.nbytes) memcpy(t->data, b + start + hlen, hdr.nbytes);
  *out_tensor = t;
  return NULL;
}

/* Maps the whole pages of a large array before the read fills them: one madvise
 * (MADV_POPULATE_WRITE, Linux 5.14) instead of a page fault per 4 KiB page taken inside
 * the read's copy. The pages are cleared either way; what goes is the fault entry and
 * exit for each. A block the allocator reused is mapped already: populating it again
 * cost 2.7 ms for 47 MB (a lookup per page), so a block whose first page is resident
 * (mincore) is left alone. On older kernels the call fails and changes nothing. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define NPY_PREFAULT_MIN ((size_t)64 << 10)
static void npy_prefault(void *data, size_t nbytes) {
  if (nbytes < NPY_PREFAULT_MIN) return;
  size_t page = 4096;
  uintptr_t lo = ((uintptr_t)data + page - 1) & ~(uintptr_t)(page - 1);
  uintptr_t hi = ((uintptr_t)data + nbytes) & ~(uintptr_t)(page - 1);
  unsigned char resident = 0;
  if (hi <= lo || (mincore((void *)lo, page, &resident) == 0 && (resident & 1))) return;
  (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

/* Reads header then data straight into the tensor through `read` (exactly n bytes or an
 * error), so a large file or archive member is not held twice. The 12 bytes read for
 * the prefix may already hold the start of the header (version 1.0 has a 10-byte
 * prefix), or of the data when the header is shorter than that. */
tj_status_t *tj_npy_load_reader(tj_npy_read_fn read, void *ctx, size_t total, const char *name,
                                tj_tensor_t **out_tensor) {
  unsigned char prefix[12];
  size_t avail = total < sizeof prefix ? total : sizeof prefix;
  TJ_RETURN_IF_ERROR(read(ctx, prefix, avail));
  size_t start = 0, hlen = 0; /* set by npy_parse_prefix; GCC 12 cannot see it */
  TJ_RETURN_IF_ERROR(npy_parse_prefix(prefix, avail, total, name, &start, &hlen));
  size_t extra = avail - start, in_header = extra < hlen ? extra : hlen, in_data = extra - in_header;
  char *text = tj_malloc(hlen + 1);
  if (!text) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory reading the header", name);
  memcpy(text, prefix + start, in_header);
  npy_header_t hdr;
  tj_status_t *s = read(ctx, text + in_header, hlen - in_header);
  if (!s) s = npy_parse_header(text, hlen, total - start - hlen, name, &hdr);
  tj_free(text);
  if (s) return s;
  tj_tensor_t *t;
  /* not zeroed first: the read fills every byte, or the tensor is freed */
  TJ_RETURN_IF_ERROR(tj_status_annotate(tj_tensor_new_uninit(hdr.dtype, hdr.ndim, hdr.shape, &t), "%s", name));
  tj_advise_huge_pages(t->data, hdr.nbytes); /* fresh memory the read faults in */
  npy_prefault(t->data, hdr.nbytes);
  if (in_data) memcpy(t->data, prefix + start + in_header, in_data); /* <= hdr.nbytes: the sizes matched */
  s = read(ctx, (unsigned char *)t->data + in_data, hdr.nbytes - in_data);
  if (s) {
    tj_tensor_free(t);
    return s;
  }
  *out_tensor = t;
  return NULL;
}

typedef struct npy_file_reader {
  FILE *f;
  const char *path;
} npy_file_reader_t;

static tj_status_t *npy_read_file(void *ctx, void *buf, size_t n) {
  const npy_file_reader_t *r = ctx;
  if (n && fread(buf, 1, n, r->f) != n)
    return tj_status_new(TJ_ERR_IO, "%s: read failed: %s", r->path,
                         ferror(r->f) ? strerror(errno) : "unexpected end of file");
  return NULL;
}

static tj_status_t *npy_load_stream(FILE *f, size_t total, const char *path, tj_tensor_t **out_tensor) {
  npy_file_reader_t r = {f, path};
  return tj_npy_load_reader(npy_read_file, &r, total, path, out_tensor);
}

tj_status_t *tj_npy_load(const char *path, tj_tensor_t **out_tensor) {
  FILE *f = fopen(path, "rb");
  if (!f) return tj_status_new(TJ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  tj_status_t *s = NULL;
  if (fstat(fileno(f), &st) != 0) s = tj_status_new(TJ_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
  else if (S_ISDIR(st.st_mode)) s = tj_status_new(TJ_ERR_IO, "%s: is a directory; give a .npy file", path);
  else if (!S_ISREG(st.st_mode)) s = tj_status_new(TJ_ERR_IO, "%s: not a regular file", path);
  else s = npy_load_stream(f, (size_t)st.st_size, path, out_tensor);
  fclose(f);
  return s;
}

/* ---- writing ---- */

tj_status_t *tj_npy_encode(const tj_tensor_t *t, void **out_data, size_t *out_len) {
  char dbuf[TJ_DTYPE_BUFSIZE];
  const char *descr = tj_npy_descr(t->dtype);
  if (!descr)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "a tensor of type %s cannot be stored in a .npy file",
                         tj_dtype_str(t->dtype, dbuf));
  if (t->ndim < 0 || t->ndim > TJ_MAX_NDIM)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tensor rank %d is out of range", t->ndim);
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < t->ndim; i++) tj_strbuf_printf(&sb, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  tj_strbuf_append(&sb, t->ndim == 1 ? ",), }" : "), }");
  /* Pad with spaces so that magic + version + length + header is a multiple of 64
   * (numpy's alignment), ending in '\n'. */
  size_t prefix = 10;
  while (!sb.failed && (prefix + sb.len + 1) % 64 != 0) tj_strbuf_append(&sb, " "); /* a failed append adds nothing */
  tj_strbuf_append(&sb, "\n");
  char *header = tj_strbuf_take(&sb);
  if (!header) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory encoding a .npy header");
  size_t hlen = strlen(header), nbytes = tj_tensor_nbytes(t);
  unsigned char *buf = hlen <= 65535 ? tj_malloc(prefix + hlen + nbytes) : NULL;
  if (!buf) {
    tj_free(header);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory encoding a .npy file of %zu bytes", nbytes);
  }
  memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  memcpy(buf + prefix, header, hlen);
  if (nbytes) memcpy(buf + prefix + hlen, t->data, nbytes);
  tj_free(header);
  *out_data = buf;
  *out_len = prefix + hlen + nbytes;
  return NULL;
}

static tj_status_t *npy_write_all(int fd, const void *data, size_t len, const char *tmp) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return tj_status_new(TJ_ERR_IO, "%s: write failed: %s", tmp, n < 0 ? strerror(errno) : "no progress");
    p += n;
    len -= (size_t)n;
  }
  return NULL;
}

tj_status_t *tj_npy_write_file_atomic(const char *path, const void *data, size_t len) {
  size_t plen = strlen(path);
  char *tmp = tj_malloc(plen + sizeof ".tmp.XXXXXX");
  if (!tmp) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
  int fd = mkstemp(tmp);
  if (fd < 0) {
    tj_status_t *s = tj_status_new(TJ_ERR_IO, "%s: cannot create the file: %s; its directory must exist and be writable", path,
                                   strerror(errno));
    tj_free(tmp);
    return s;
  }
  tj_status_t *s = npy_write_all(fd, data, len, tmp);
  /* mkstemp makes the file 0600; give it the usual permissions of a data file. */
  if (!s && fchmod(fd, 0644) != 0) s = tj_status_new(TJ_ERR_IO, "%s: chmod failed: %s", tmp, strerror(errno));
  if (!s && fsync(fd) != 0) s = tj_status_new(TJ_ERR_IO, "%s: fsync failed: %s", tmp, strerror(errno));
  if (close(fd) != 0 && !s) s = tj_status_new(TJ_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
  if (!s && rename(tmp, path) != 0) s = tj_status_new(TJ_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
  if (s) unlink(tmp);
  tj_free(tmp);
  return s;
}

tj_status_t *tj_npy_save(const char *path, const tj_tensor_t *t) {
  void *buf;
  size_t len;
  TJ_RETURN_IF_ERROR(tj_status_annotate(tj_npy_encode(t, &buf, &len), "%s", path));
  tj_status_t *s = tj_npy_write_file_atomic(path, buf, len);
  tj_free(buf);
  return s;
}
