/* The transform matrices of Winograd's minimal filtering F(m x m, 3x3) (Lavin & Gray
 * 2015), shared by the schedule rule that computes convs with them
 * (transforms/tir/schedule_winograd.c) and the weight transform done once at load
 * (runtime/prepack.c). */
#ifndef TJ_SUPPORT_WINOGRAD_H
#define TJ_SUPPORT_WINOGRAD_H

#define TJ_WINOGRAD_MAX_ALPHA 6

typedef struct tj_winograd {
  int m, alpha; /* outputs per tile side; input tile side m + 2 */
  double bt[TJ_WINOGRAD_MAX_ALPHA][TJ_WINOGRAD_MAX_ALPHA]; /* B^T, alpha x alpha */
  double g[TJ_WINOGRAD_MAX_ALPHA][3];                      /* G, alpha x 3 */
  double at[TJ_WINOGRAD_MAX_ALPHA][TJ_WINOGRAD_MAX_ALPHA]; /* A^T, m x alpha */
} tj_winograd_t;

/* F(2x2, 3x3) or F(4x4, 3x3); NULL for another m. */
const tj_winograd_t *tj_winograd(int m);

/* u[a * alpha + b] = (G g G^T)[a, b] for one 3x3 kernel g (row-major), in double,
 * rounded once. */
void tj_winograd_weight(const tj_winograd_t *w, const float *g, float *u);

#endif
