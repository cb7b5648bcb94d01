/* A seekable, read-only libzip source over a file descriptor, read with pread. */
#include "runtime/npz_file_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/alloc.h"

typedef struct npz_file {
  int fd;
  zip_uint64_t size;
  zip_uint64_t pos;
  zip_error_t error;
} npz_file_t;

/* Reads up to n bytes at the position (all of them unless the file ends). */
static zip_int64_t npz_file_read(npz_file_t *f, void *buf, zip_uint64_t n) {
  if (f->pos >= f->size) return 0;
  if (n > f->size - f->pos) n = f->size - f->pos;
  if (n > (zip_uint64_t)1 << 30) n = (zip_uint64_t)1 << 30; /* pread moves at most ~2 GB */
  zip_uint64_t done = 0;
  while (done < n) {
    ssize_t got = pread(f->fd, (char *)buf + done, (size_t)(n - done), (off_t)(f->pos + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      zip_error_set(&f->error, ZIP_ER_READ, errno);
      return -1;
    }
    if (got == 0) break; /* the file shrank under us: a short read, libzip reports it */
    done += (zip_uint64_t)got;
  }
  f->pos += done;
  return (zip_int64_t)done;
}

static zip_int64_t npz_file_seek(npz_file_t *f, void *data, zip_uint64_t len) {
  zip_int64_t to = zip_source_seek_compute_offset(f->pos, f->size, data, len, &f->error);
  if (to < 0) return -1;
  f->pos = (zip_uint64_t)to;
  return 0;
}

static zip_int64_t npz_file_stat(npz_file_t *f, void *data, zip_uint64_t len) {
  if (len < sizeof(zip_stat_t)) {
    zip_error_set(&f->error, ZIP_ER_INVAL, 0);
    return -1;
  }
  zip_stat_t *st = data;
  zip_stat_init(st);
  st->size = f->size;
  st->valid |= ZIP_STAT_SIZE;
  return sizeof(zip_stat_t);
}

static zip_int64_t npz_file_callback(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd) {
  npz_file_t *f = ud;
  switch (cmd) {
  case ZIP_SOURCE_OPEN:
    f->pos = 0;
    return 0;
  case ZIP_SOURCE_READ:
    return npz_file_read(f, data, len);
  case ZIP_SOURCE_CLOSE:
    return 0;
  case ZIP_SOURCE_STAT:
    return npz_file_stat(f, data, len);
  case ZIP_SOURCE_ERROR:
    return zip_error_to_data(&f->error, data, len);
  case ZIP_SOURCE_FREE:
    close(f->fd);
    zip_error_fini(&f->error);
    tj_free(f);
    return 0;
  case ZIP_SOURCE_SEEK:
    return npz_file_seek(f, data, len);
  case ZIP_SOURCE_TELL:
    return (zip_int64_t)f->pos;
  case ZIP_SOURCE_ACCEPT_EMPTY: /* an empty file is no archive, as with zip_open */
    return 0;
  case ZIP_SOURCE_SUPPORTS:
    return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                          ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
                                          ZIP_SOURCE_ACCEPT_EMPTY, ZIP_SOURCE_SUPPORTS, -1);
  default:
    zip_error_set(&f->error, ZIP_ER_OPNOTSUPP, 0);
    return -1;
  }
}

zip_source_t *tj_npz_file_source(const char *path, zip_error_t *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    zip_error_set(err, errno == ENOENT ? ZIP_ER_NOENT : ZIP_ER_OPEN, errno);
    return NULL;
  }
  struct stat st;
  int bad = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  if (bad) {
    zip_error_set(err, ZIP_ER_READ, bad);
    close(fd);
    return NULL;
  }
  npz_file_t *f = tj_calloc(1, sizeof *f);
  if (!f) {
    zip_error_set(err, ZIP_ER_MEMORY, 0);
    close(fd);
    return NULL;
  }
  f->fd = fd;
  f->size = (zip_uint64_t)st.st_size;
  zip_error_init(&f->error);
  zip_source_t *src = zip_source_function_create(npz_file_callback, f, err);
  if (!src) {
    close(fd);
    zip_error_fini(&f->error);
    tj_free(f);
  }
  return src;
}
