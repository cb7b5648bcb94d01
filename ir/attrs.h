/* Attribute values and dictionaries: function attrs (`T.func_attr`, `R.func_attr`),
 * module attrs and operator attrs (conv2d strides, ...). Immutable, arena-owned. */
#ifndef TJ_IR_ATTRS_H
#define TJ_IR_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

#include "support/arena.h"
#include "support/dtype.h"

typedef enum tj_attr_kind {
  TJ_ATTR_NONE = 0, /* Python None */
  TJ_ATTR_INT,      /* IntImm; `dtype` says int32/int64/bool (T.bool(True) and True both bool) */
  TJ_ATTR_FLOAT,    /* FloatImm */
  TJ_ATTR_STR,      /* string */
  TJ_ATTR_LIST,     /* list or tuple */
  TJ_ATTR_DICT,     /* nested dict */
  TJ_ATTR_DTYPE,    /* a data type value, e.g. out_dtype="float16" stored as dtype */
  TJ_ATTR_BUFFER,   /* a TIR buffer of the same PrimFunc, as in TVM's block attr
                       {"layout_free_placeholders": [B]}; compared by correspondence */
} tj_attr_kind_t;

typedef struct tj_attr_value tj_attr_value_t;
typedef struct tj_attrs tj_attrs_t;
struct tj_buffer;

struct tj_attr_value {
  tj_attr_kind_t kind;
  tj_dtype_t dtype; /* INT: int32/int64/bool; FLOAT: float32/64; DTYPE: the value */
  union {
    int64_t i;
    double f;
    const char *s;
    struct {
      int n;
      const tj_attr_value_t *items;
    } list;
    const tj_attrs_t *dict;
    const struct tj_buffer *buffer;
  };
};

/* An ordered dictionary. Lookups are by key; equality ignores order (as TVM's Map). */
struct tj_attrs {
  int n;
  const char *const *keys;
  const tj_attr_value_t *values;
};

const tj_attr_value_t *tj_attrs_get(const tj_attrs_t *attrs, const char *key);
/* Convenience readers with a default when the key is missing or of another kind. */
int64_t tj_attrs_get_int(const tj_attrs_t *attrs, const char *key, int64_t dflt);
const char *tj_attrs_get_str(const tj_attrs_t *attrs, const char *key, const char *dflt);
/* Returns a new dictionary with key set (replaced or appended). */
const tj_attrs_t *tj_attrs_set(tj_arena_t *arena, const tj_attrs_t *attrs, const char *key,
                               tj_attr_value_t value);
const tj_attrs_t *tj_attrs_remove(tj_arena_t *arena, const tj_attrs_t *attrs, const char *key);
tj_attr_value_t tj_attr_int(int64_t v);  /* int32 */
tj_attr_value_t tj_attr_bool(bool v);
tj_attr_value_t tj_attr_str(const char *s);
bool tj_attr_value_equal(const tj_attr_value_t *a, const tj_attr_value_t *b);
bool tj_attrs_equal(const tj_attrs_t *a, const tj_attrs_t *b); /* NULL == empty */

#endif
