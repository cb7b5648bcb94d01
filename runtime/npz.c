/* .npz archives through libzip (a file is read through runtime/npz_file_source.c, pread with no per-read seek). Reading: each member (after a size sanity check) is
 * streamed through the .npy reader, its data straight into the tensor; a stored
 * (uncompressed) member is read raw and its CRC checked here with libdeflate. Writing: the archive is built in a libzip memory
 * source and then written with the .npy writer's temp-file-and-rename. */
#include "runtime/npz.h"

#include <stdio.h>
#include <string.h>
#include <libdeflate.h>
#include <zip.h>

#include "runtime/npy.h"
#include "runtime/npz_file_source.h"
#include "support/alloc.h"
#include "support/strbuf.h"

struct tj_npz {
  char *source;          /* file name for messages */
  int n;
  char **names;
  tj_tensor_t **tensors;
};

void tj_npz_free(tj_npz_t *npz) {
  if (!npz) return;
  for (int i = 0; i < npz->n; i++) {
    tj_free(npz->names[i]);
    tj_tensor_free(npz->tensors[i]);
  }
  tj_free(npz->names);
  tj_free(npz->tensors);
  tj_free(npz->source);
  tj_free(npz);
}

int tj_npz_count(const tj_npz_t *npz) { return npz->n; }

const char *tj_npz_name(const tj_npz_t *npz, int i) { return i >= 0 && i < npz->n ? npz->names[i] : NULL; }

const tj_tensor_t *tj_npz_tensor(const tj_npz_t *npz, int i) {
  return i >= 0 && i < npz->n ? npz->tensors[i] : NULL;
}

const tj_tensor_t *tj_npz_find(const tj_npz_t *npz, const char *key) {
  for (int i = 0; i < npz->n; i++)
    if (strcmp(npz->names[i], key) == 0) return npz->tensors[i];
  return NULL;
}

tj_status_t *tj_npz_get(const tj_npz_t *npz, const char *key, const tj_tensor_t **out_tensor) {
  const tj_tensor_t *t = tj_npz_find(npz, key);
  if (t) {
    *out_tensor = t;
    return NULL;
  }
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; i < npz->n; i++) tj_strbuf_printf(&sb, "%s%s", i ? ", " : "", npz->names[i]);
  char *keys = tj_strbuf_take(&sb);
  tj_status_t *s = tj_status_new(TJ_ERR_NOT_FOUND, "%s: no array named '%s'; the archive holds: %s", npz->source, key,
                                 npz->n == 0 ? "(nothing)" : keys ? keys : "?");
  tj_free(keys);
  return s;
}

tj_tensor_t *tj_npz_take(tj_npz_t *npz, int i) {
  if (i < 0 || i >= npz->n) return NULL;
  tj_tensor_t *t = npz->tensors[i];
  npz->tensors[i] = NULL;
  return t;
}

/* ---- reading ---- */

static tj_status_t *npz_zip_error(const char *name, const char *what, zip_error_t *err) {
  return tj_status_new(TJ_ERR_IO, "%s: %s: %s", name, what, zip_error_strerror(err));
}

/* Deflate expands at most ~1032:1; a member claiming more is corrupt (or a zip bomb), so
 * it is refused before its declared size is allocated. Its compressed bytes lie inside
 * the archive, so a compressed size beyond the archive's is a lie too (without this
 * check a 600-byte archive made us allocate 1.9 GB). */
static bool npz_size_plausible(const zip_stat_t *st, zip_uint64_t archive_size) {
  if (!(st->valid & ZIP_STAT_SIZE) || !(st->valid & ZIP_STAT_COMP_SIZE)) return false;
  if (st->size > SIZE_MAX / 2 || st->comp_size > archive_size) return false;
  if ((st->valid & ZIP_STAT_COMP_METHOD) && st->comp_method == ZIP_CM_STORE) return st->size == st->comp_size;
  return st->size <= st->comp_size * 1100 + 4096;
}

/* A member is read either through libzip (zf: inflated, CRC checked by libzip) or raw
 * (parts: a stored member's bytes as two windows, [0, n-1) and [n-1, n), CRC checked
 * here). libzip checks the CRC of any read of a whole stored member, even with
 * ZIP_FL_COMPRESSED, and of no read of a part: two parts make it skip its check. */
typedef struct npz_member_reader {
  zip_file_t *zf;
  zip_source_t *parts[2];
  bool opened[2];
  int part;          /* the part being read */
  uint32_t crc;      /* raw: CRC-32 of the bytes read so far */
  const char *where; /* "archive:member" */
} npz_member_reader_t;

static zip_int64_t npz_read_some(npz_member_reader_t *r, void *buf, size_t n) {
  if (r->zf) return zip_fread(r->zf, buf, n);
  for (; r->part < 2; r->part++) {
    zip_int64_t got = zip_source_read(r->parts[r->part], buf, n);
    if (got > 0) r->crc = (uint32_t)libdeflate_crc32(r->crc, buf, (size_t)got);
    if (got != 0) return got;
  }
  return 0;
}

static const char *npz_read_error(const npz_member_reader_t *r) {
  return r->zf ? zip_file_strerror(r->zf) : zip_error_strerror(zip_source_error(r->parts[r->part < 2 ? r->part : 1]));
}

/* Bytes asked of libzip at a time: a raw member's CRC then reads each piece while it is
 * still in the cache (L2 is 1.25 MB on the Ice Lake host). In one piece, the CRC of a
 * 9 MB weight read it back from memory. */
#define NPZ_READ_PIECE ((size_t)256 << 10)

/* Exactly n bytes of the member. */
static tj_status_t *npz_read_exact(void *ctx, void *buf, size_t n) {
  npz_member_reader_t *r = ctx;
  size_t done = 0;
  while (done < n) {
    size_t want = n - done < NPZ_READ_PIECE ? n - done : NPZ_READ_PIECE;
    zip_int64_t got = npz_read_some(r, (char *)buf + done, want);
    if (got < 0) return tj_status_new(TJ_ERR_IO, "%s: cannot read member: %s", r->where, npz_read_error(r));
    if (got == 0)
      return tj_status_new(TJ_ERR_IO, "%s: member holds %zu bytes but the archive says more; the archive is corrupt",
                           r->where, done);
    done += (size_t)got;
  }
  return NULL;
}

/* The member must end where its header says: reading past it finds the end, and only
 * then does libzip compare the CRC (a CRC error is reported here); a raw member's CRC
 * is compared here. */
static tj_status_t *npz_check_end(npz_member_reader_t *r, const zip_stat_t *st) {
  char extra;
  zip_int64_t got = npz_read_some(r, &extra, 1);
  if (got < 0) return tj_status_new(TJ_ERR_IO, "%s: cannot read member: %s", r->where, npz_read_error(r));
  if (got > 0)
    return tj_status_new(TJ_ERR_IO, "%s: member holds more than the %llu bytes the archive says; the archive is corrupt",
                         r->where, (unsigned long long)st->size);
  if (!r->zf && r->crc != st->crc)
    return tj_status_new(TJ_ERR_IO,
                         "%s: CRC error: the member's data has CRC-32 %08x but the archive records %08x; the archive "
                         "is damaged",
                         r->where, (unsigned)r->crc, (unsigned)st->crc);
  return NULL;
}

/* A stored member's bytes are its data. Reading them raw replaces libzip's CRC through
 * zlib's crc32 (3.2 GB/s of thread CPU time here, a third of reading ResNet-18's 47 MB
 * archive) with libdeflate's (7.4 GB/s, same 32 MB buffer). Encrypted members and
 * members of under two bytes (corrupt: no .npy is that short) go through libzip. */
static bool npz_read_raw(const zip_stat_t *st) {
  return (st->valid & ZIP_STAT_COMP_METHOD) && st->comp_method == ZIP_CM_STORE && (st->valid & ZIP_STAT_CRC) &&
         (st->valid & ZIP_STAT_ENCRYPTION_METHOD) && st->encryption_method == ZIP_EM_NONE && st->size >= 2;
}

static tj_status_t *npz_open_member(zip_t *za, zip_uint64_t idx, const zip_stat_t *st, npz_member_reader_t *r) {
  if (!npz_read_raw(st)) {
    r->zf = zip_fopen_index(za, idx, 0);
    return r->zf ? NULL : npz_zip_error(r->where, "cannot open member", zip_get_error(za));
  }
  for (int k = 0; k < 2; k++) {
    zip_uint64_t start = k ? st->size - 1 : 0;
    r->parts[k] = zip_source_zip(za, za, idx, 0, start, k ? 1 : (zip_int64_t)(st->size - 1));
    if (!r->parts[k]) return npz_zip_error(r->where, "cannot open member", zip_get_error(za));
    if (zip_source_open(r->parts[k]) < 0)
      return npz_zip_error(r->where, "cannot open member", zip_source_error(r->parts[k]));
    r->opened[k] = true;
  }
  r->crc = (uint32_t)libdeflate_crc32(0, NULL, 0);
  return NULL;
}

static void npz_close_member(npz_member_reader_t *r) {
  if (r->zf) zip_fclose(r->zf);
  for (int k = 0; k < 2; k++) {
    if (r->opened[k]) zip_source_close(r->parts[k]);
    if (r->parts[k]) zip_source_free(r->parts[k]);
  }
}

/* Reads member idx straight into its tensor (the .npy reader allocates it from the
 * header): no buffer of the whole member and no second copy. On ResNet-18's 47 MB of
 * stored members that copy and its fresh pages were ~25% of the read in perf. */
static tj_status_t *npz_read_member(zip_t *za, zip_uint64_t idx, zip_uint64_t archive_size, const char *archive,
                                    const char *member, tj_tensor_t **out_tensor) {
  char *where = tj_malloc(strlen(archive) + strlen(member) + 2);
  if (!where) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", archive);
  sprintf(where, "%s:%s", archive, member);
  zip_stat_t st;
  tj_status_t *s = NULL;
  npz_member_reader_t r = {.where = where};
  tj_tensor_t *t = NULL;
  if (zip_stat_index(za, idx, 0, &st) != 0 || !npz_size_plausible(&st, archive_size))
    s = tj_status_new(TJ_ERR_IO, "%s: corrupt archive member (implausible or missing size)", where);
  else
    s = npz_open_member(za, idx, &st, &r);
  if (!s) s = tj_npy_load_reader(npz_read_exact, &r, (size_t)st.size, where, &t);
  if (!s) s = npz_check_end(&r, &st);
  npz_close_member(&r);
  if (s) tj_tensor_free(t);
  else *out_tensor = t;
  tj_free(where);
  return s;
}

/* numpy's key for a member: its name without ".npy". */
static char *npz_key_of(const char *member) {
  size_t n = strlen(member);
  if (n > 4 && strcmp(member + n - 4, ".npy") == 0) n -= 4;
  char *key = tj_malloc(n + 1);
  if (key) {
    memcpy(key, member, n);
    key[n] = '\0';
  }
  return key;
}

/* `archive_size`: the archive's length in bytes (bounds each member's compressed size). */
static tj_status_t *npz_read_all(zip_t *za, zip_uint64_t archive_size, const char *name, tj_npz_t **out_npz) {
  zip_int64_t count = zip_get_num_entries(za, 0);
  if (count < 0) return tj_status_new(TJ_ERR_IO, "%s: cannot list the archive", name);
  if (count > (1 << 20)) return tj_status_new(TJ_ERR_IO, "%s: implausible number of members (%lld)", name, (long long)count);
  tj_npz_t *npz = tj_calloc(1, sizeof *npz);
  if (!npz) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  npz->source = tj_strdup(name);
  npz->names = tj_calloc((size_t)count + 1, sizeof *npz->names);
  npz->tensors = tj_calloc((size_t)count + 1, sizeof *npz->tensors);
  tj_status_t *s = NULL;
  if (!npz->source || !npz->names || !npz->tensors) s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  for (zip_int64_t i = 0; !s && i < count; i++) {
    const char *member = zip_get_name(za, (zip_uint64_t)i, 0);
    if (!member) {
      s = npz_zip_error(name, "cannot read a member name", zip_get_error(za));
      break;
    }
    size_t mlen = strlen(member);
    if (mlen > 0 && member[mlen - 1] == '/') continue; /* a directory entry holds no array */
    char *key = npz_key_of(member);
    if (!key) {
      s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
      break;
    }
    if (tj_npz_find(npz, key)) {
      s = tj_status_new(TJ_ERR_IO, "%s: the archive holds two arrays named '%s'", name, key);
      tj_free(key);
      break;
    }
    tj_tensor_t *t = NULL;
    s = npz_read_member(za, (zip_uint64_t)i, archive_size, name, member, &t);
    if (s) {
      tj_free(key);
      break;
    }
    npz->names[npz->n] = key;
    npz->tensors[npz->n] = t;
    npz->n++;
  }
  if (s) {
    tj_npz_free(npz);
    return s;
  }
  *out_npz = npz;
  return NULL;
}

tj_status_t *tj_npz_load(const char *path, tj_npz_t **out_npz) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t *src = tj_npz_file_source(path, &err);
  zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY, &err) : NULL;
  if (!za) {
    tj_status_t *s = tj_status_new(TJ_ERR_IO, "%s: cannot open as a .npz (zip) archive: %s", path, zip_error_strerror(&err));
    if (src) zip_source_free(src);
    zip_error_fini(&err);
    return s;
  }
  zip_error_fini(&err);
  zip_stat_t st;
  zip_uint64_t size = zip_source_stat(src, &st) == 0 && (st.valid & ZIP_STAT_SIZE) ? st.size : ZIP_UINT64_MAX;
  tj_status_t *s = npz_read_all(za, size, path, out_npz);
  zip_discard(za); /* also frees src */
  return s;
}

tj_status_t *tj_npz_load_bytes(const void *data, size_t len, const char *name, tj_npz_t **out_npz) {
  if (!name) name = "<memory>";
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t *src = zip_source_buffer_create(data, len, 0, &err);
  if (!src) {
    tj_status_t *s = npz_zip_error(name, "cannot read", &err);
    zip_error_fini(&err);
    return s;
  }
  zip_t *za = zip_open_from_source(src, ZIP_RDONLY, &err);
  if (!za) {
    tj_status_t *s = npz_zip_error(name, "cannot open as a .npz (zip) archive", &err);
    zip_source_free(src);
    zip_error_fini(&err);
    return s;
  }
  zip_error_fini(&err);
  tj_status_t *s = npz_read_all(za, (zip_uint64_t)len, name, out_npz);
  zip_discard(za); /* also frees src */
  return s;
}

/* ---- writing ---- */

static tj_status_t *npz_check_names(const char *path, int n, const char *const *names) {
  for (int i = 0; i < n; i++) {
    if (!names[i] || !names[i][0] || strchr(names[i], '/'))
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: array name '%s' must be non-empty and contain no '/'", path,
                           names[i] ? names[i] : "(null)");
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: two arrays are named '%s'", path, names[i]);
  }
  return NULL;
}

/* Adds member "<name>.npy"; the encoded bytes are kept in *out_buf until the archive is closed. */
static tj_status_t *npz_add_member(zip_t *za, const char *path, const char *name, const tj_tensor_t *t, bool compress,
                                   void **out_buf) {
  size_t len;
  TJ_RETURN_IF_ERROR(tj_status_annotate(tj_npy_encode(t, out_buf, &len), "%s: array '%s'", path, name));
  char *member = tj_malloc(strlen(name) + 5);
  if (!member) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  sprintf(member, "%s.npy", name);
  tj_status_t *s = NULL;
  zip_source_t *zs = zip_source_buffer(za, *out_buf, len, 0);
  zip_int64_t idx = zs ? zip_file_add(za, member, zs, ZIP_FL_ENC_UTF_8) : -1;
  if (idx < 0) {
    s = npz_zip_error(path, "cannot add a member", zip_get_error(za));
    if (zs) zip_source_free(zs);
  } else if (zip_set_file_compression(za, (zip_uint64_t)idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0) {
    s = npz_zip_error(path, "cannot set compression", zip_get_error(za));
  }
  tj_free(member);
  return s;
}

/* Copies the finished in-memory archive out of its source. */
static tj_status_t *npz_source_bytes(zip_source_t *src, const char *path, void **out_data, size_t *out_len) {
  if (zip_source_open(src) < 0) return npz_zip_error(path, "cannot read the built archive", zip_source_error(src));
  tj_status_t *s = NULL;
  zip_int64_t len = -1;
  unsigned char *buf = NULL;
  if (zip_source_seek(src, 0, SEEK_END) < 0 || (len = zip_source_tell(src)) < 0 || zip_source_seek(src, 0, SEEK_SET) < 0)
    s = npz_zip_error(path, "cannot size the built archive", zip_source_error(src));
  else if (!(buf = tj_malloc((size_t)len)))
    s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  else if (zip_source_read(src, buf, (zip_uint64_t)len) != len)
    s = npz_zip_error(path, "cannot read the built archive", zip_source_error(src));
  zip_source_close(src);
  if (s) {
    tj_free(buf);
    return s;
  }
  *out_data = buf;
  *out_len = (size_t)len;
  return NULL;
}

tj_status_t *tj_npz_save(const char *path, int n, const char *const *names, const tj_tensor_t *const *tensors,
                         bool compress) {
  if (n < 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: negative array count", path);
  TJ_RETURN_IF_ERROR(npz_check_names(path, n, names));
  if (n == 0) {
    /* libzip deletes an archive with no members; numpy writes the bare end record. */
    static const unsigned char empty_zip[22] = {'P', 'K', 5, 6};
    return tj_npy_write_file_atomic(path, empty_zip, sizeof empty_zip);
  }
  void **bufs = tj_calloc((size_t)n + 1, sizeof *bufs);
  if (!bufs) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  zip_error_t err;
  zip_error_init(&err);
  tj_status_t *s = NULL;
  zip_t *za = NULL;
  zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &err);
  if (!src) s = npz_zip_error(path, "cannot create an archive", &err);
  else if (!(za = zip_open_from_source(src, ZIP_TRUNCATE, &err))) s = npz_zip_error(path, "cannot create an archive", &err);
  if (za) zip_source_keep(src); /* keep the bytes after zip_close */
  for (int i = 0; !s && i < n; i++) s = npz_add_member(za, path, names[i], tensors[i], compress, &bufs[i]);
  if (za && s) zip_discard(za);
  else if (za && zip_close(za) != 0) {
    s = npz_zip_error(path, "cannot build the archive", zip_get_error(za));
    zip_discard(za);
  }
  void *data = NULL;
  size_t len = 0;
  if (!s) s = npz_source_bytes(src, path, &data, &len);
  if (!s) s = tj_npy_write_file_atomic(path, data, len);
  tj_free(data);
  if (src) zip_source_free(src);
  for (int i = 0; i < n; i++) tj_free(bufs[i]);
  tj_free(bufs);
  zip_error_fini(&err);
  return s;
}
