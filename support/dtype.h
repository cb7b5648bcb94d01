/* Scalar and vector data types with TVM's names: "float16", "bfloat16", "int64", "bool",
 * "float32x16" (16 lanes), "handle", "void". bfloat16 has its own code (as in DLPack), so
 * that code testing `tj_dtype_is_float` for IEEE arithmetic never mistakes it for float16. */
#ifndef TJ_SUPPORT_DTYPE_H
#define TJ_SUPPORT_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum tj_dtype_code {
  TJ_DT_INT = 0,
  TJ_DT_UINT = 1,
  TJ_DT_FLOAT = 2,
  TJ_DT_HANDLE = 3,
  TJ_DT_BOOL = 4,
  TJ_DT_VOID = 5,   /* also "unknown" in Relax struct info */
  TJ_DT_BFLOAT = 6, /* "bfloat16": float32's exponent, 7 mantissa bits (TVM's kDLBfloat) */
} tj_dtype_code_t;

typedef struct tj_dtype {
  uint8_t code;   /* tj_dtype_code_t */
  uint8_t bits;   /* 1 for bool, 64 for handle, 0 for void */
  uint16_t lanes; /* 1 for scalars */
} tj_dtype_t;

#define TJ_DTYPE_BUFSIZE 32

static inline tj_dtype_t tj_dtype_make(tj_dtype_code_t code, int bits, int lanes) {
  tj_dtype_t d = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  return d;
}
#define TJ_F16 tj_dtype_make(TJ_DT_FLOAT, 16, 1)
#define TJ_F32 tj_dtype_make(TJ_DT_FLOAT, 32, 1)
#define TJ_F64 tj_dtype_make(TJ_DT_FLOAT, 64, 1)
#define TJ_I32 tj_dtype_make(TJ_DT_INT, 32, 1)
#define TJ_I64 tj_dtype_make(TJ_DT_INT, 64, 1)
#define TJ_BOOL tj_dtype_make(TJ_DT_BOOL, 1, 1)
#define TJ_HANDLE tj_dtype_make(TJ_DT_HANDLE, 64, 1)
#define TJ_VOID tj_dtype_make(TJ_DT_VOID, 0, 1)
#define TJ_BF16 tj_dtype_make(TJ_DT_BFLOAT, 16, 1)

/* Parses a TVM dtype name; returns false for an unknown name. */
bool tj_dtype_parse(const char *name, tj_dtype_t *out_dtype);
/* Writes the TVM name into buf (at least TJ_DTYPE_BUFSIZE bytes) and returns buf. */
const char *tj_dtype_str(tj_dtype_t dtype, char *buf);
bool tj_dtype_eq(tj_dtype_t a, tj_dtype_t b);
/* Storage bytes of one element (bool is 1 byte), lanes included. */
size_t tj_dtype_bytes(tj_dtype_t dtype);
static inline bool tj_dtype_is_float(tj_dtype_t d) { return d.code == TJ_DT_FLOAT; }
/* float16/32/64 or bfloat16: the dtypes of real numbers (TVM's DataType::is_floating_point). */
static inline bool tj_dtype_is_floating(tj_dtype_t d) { return d.code == TJ_DT_FLOAT || d.code == TJ_DT_BFLOAT; }
/* The largest finite value of a floating dtype (bfloat16: 0x7f7f = 3.3895e38). */
double tj_dtype_float_max(tj_dtype_t d);
static inline bool tj_dtype_is_int(tj_dtype_t d) { return d.code == TJ_DT_INT || d.code == TJ_DT_UINT; }
static inline bool tj_dtype_is_void(tj_dtype_t d) { return d.code == TJ_DT_VOID; }
tj_dtype_t tj_dtype_with_lanes(tj_dtype_t d, int lanes);
tj_dtype_t tj_dtype_element(tj_dtype_t d);

/* IEEE binary16 conversions (round to nearest even), used by the interpreter and
 * the .npy tools. */
float tj_half_to_float(uint16_t h);
uint16_t tj_float_to_half(float f);
/* bfloat16 is the upper half of a float32; narrowing rounds to nearest even and keeps
 * NaNs quiet NaNs. */
float tj_bfloat_to_float(uint16_t b);
uint16_t tj_float_to_bfloat(float f);

#endif
