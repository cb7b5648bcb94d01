#include "support/dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_bits_lanes(const char *s, int *bits, int *lanes) {
  char *end;
  long b = strtol(s, &end, 10);
  if (end == s || b <= 0 || b > 64) return false;
  long l = 1;
  if (*end == 'x') {
    const char *ls = end + 1;
    l = strtol(ls, &end, 10);
    if (end == ls || l <= 0 || l > 65535) return false;
  }
  if (*end) return false;
  *bits = (int)b;
  *lanes = (int)l;
  return true;
}

bool tj_dtype_parse(const char *name, tj_dtype_t *out_dtype) {
  static const struct { const char *prefix; tj_dtype_code_t code; } prefixes[] = {
      {"float", TJ_DT_FLOAT}, {"uint", TJ_DT_UINT}, {"int", TJ_DT_INT}};
  if (strcmp(name, "bool") == 0) return *out_dtype = TJ_BOOL, true;
  if (strncmp(name, "bfloat", 6) == 0) { /* TVM accepts only 16 bits, any lane count */
    int bits, lanes;
    if (!parse_bits_lanes(name + 6, &bits, &lanes) || bits != 16) return false;
    return *out_dtype = tj_dtype_make(TJ_DT_BFLOAT, 16, lanes), true;
  }
  if (strcmp(name, "handle") == 0) return *out_dtype = TJ_HANDLE, true;
  if (strcmp(name, "void") == 0 || name[0] == '\0') return *out_dtype = TJ_VOID, true;
  if (strncmp(name, "boolx", 5) == 0) {
    char *end;
    long l = strtol(name + 5, &end, 10);
    if (*end || l <= 0 || l > 65535) return false;
    *out_dtype = tj_dtype_make(TJ_DT_BOOL, 1, (int)l);
    return true;
  }
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t n = strlen(prefixes[i].prefix);
    if (strncmp(name, prefixes[i].prefix, n) != 0) continue;
    int bits, lanes;
    if (!parse_bits_lanes(name + n, &bits, &lanes)) return false;
    if (prefixes[i].code == TJ_DT_FLOAT && bits != 16 && bits != 32 && bits != 64) return false;
    if (prefixes[i].code != TJ_DT_FLOAT && bits != 8 && bits != 16 && bits != 32 && bits != 64 &&
        !(prefixes[i].code == TJ_DT_UINT && bits == 1))
      return false;
    *out_dtype = tj_dtype_make(prefixes[i].code, bits, lanes);
    if (out_dtype->code == TJ_DT_UINT && bits == 1) out_dtype->code = TJ_DT_BOOL;
    return true;
  }
  return false;
}

const char *tj_dtype_str(tj_dtype_t d, char *buf) {
  const char *base = "void";
  switch ((tj_dtype_code_t)d.code) {
    case TJ_DT_INT: base = "int"; break;
    case TJ_DT_UINT: base = "uint"; break;
    case TJ_DT_FLOAT: base = "float"; break;
    case TJ_DT_BFLOAT: base = "bfloat"; break;
    case TJ_DT_HANDLE: snprintf(buf, TJ_DTYPE_BUFSIZE, "handle"); return buf;
    case TJ_DT_BOOL:
      if (d.lanes > 1) snprintf(buf, TJ_DTYPE_BUFSIZE, "boolx%u", (unsigned)d.lanes);
      else snprintf(buf, TJ_DTYPE_BUFSIZE, "bool");
      return buf;
    case TJ_DT_VOID: snprintf(buf, TJ_DTYPE_BUFSIZE, "void"); return buf;
  }
  if (d.lanes > 1) snprintf(buf, TJ_DTYPE_BUFSIZE, "%s%ux%u", base, (unsigned)d.bits, (unsigned)d.lanes);
  else snprintf(buf, TJ_DTYPE_BUFSIZE, "%s%u", base, (unsigned)d.bits);
  return buf;
}

bool tj_dtype_eq(tj_dtype_t a, tj_dtype_t b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

size_t tj_dtype_bytes(tj_dtype_t d) {
  size_t elem = d.code == TJ_DT_BOOL ? 1 : (size_t)(d.bits + 7) / 8;
  return elem * d.lanes;
}

double tj_dtype_float_max(tj_dtype_t d) {
  if (d.code == TJ_DT_BFLOAT) return 3.3895313892515355e38;
  if (d.bits == 16) return 65504.0;
  return d.bits == 32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
}

tj_dtype_t tj_dtype_with_lanes(tj_dtype_t d, int lanes) {
  d.lanes = (uint16_t)lanes;
  return d;
}

tj_dtype_t tj_dtype_element(tj_dtype_t d) { return tj_dtype_with_lanes(d, 1); }

float tj_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        exp--;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t tj_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) /* inf or nan */
    return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to inf */
  if (absx < 0x38800000u) { /* result is subnormal or zero */
    if (absx < 0x33000000u) return sign; /* below half the smallest subnormal */
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e; /* 14..24 */
    uint32_t half_m = m >> (shift);
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1))) half_m++;
    return (uint16_t)(sign | half_m);
  }
  uint32_t h = ((absx >> 13) - ((127 - 15) << 10));
  uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

float tj_bfloat_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t tj_float_to_bfloat(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* NaN stays a quiet NaN */
  uint32_t round = 0x7fffu + ((x >> 16) & 1u); /* ties go to the even result */
  return (uint16_t)((x + round) >> 16);
}
