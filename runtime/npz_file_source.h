/* A libzip source that reads an archive file with pread(2).
 *
 * zip_open's own file source goes through stdio: an fseeko (an lseek, and the stdio
 * buffer dropped) before every read, about 1,000 for ResNet-18's 47 MB params.npz.
 * This source keeps the position itself, so a seek is an assignment and a read is one
 * pread straight into the caller's buffer (the tensor, for a stored member). */
#ifndef TJ_RUNTIME_NPZ_FILE_SOURCE_H
#define TJ_RUNTIME_NPZ_FILE_SOURCE_H

#include <zip.h>

/* Opens `path` for reading and wraps it in a seekable source; the source owns the file
 * descriptor (closed when libzip frees the source). NULL with *err set (errno in the
 * system part) when the file cannot be opened or stat'ed. */
zip_source_t *tj_npz_file_source(const char *path, zip_error_t *err);

#endif
