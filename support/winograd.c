/* Winograd transform matrices (winograd.h). */
#include "support/winograd.h"

#include <stddef.h>

/* Points 0, 1, -1 and infinity: every coefficient is 0, +-1 or +-1/2 (exact in float). */
static const tj_winograd_t F2 = {
    2,
    4,
    {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
    {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
    {{1, 1, 1, 0}, {0, 1, -1, -1}},
};

/* Points 0, 1, -1, 2, -2 and infinity, as in Lavin & Gray's F(4x4, 3x3). */
static const tj_winograd_t F4 = {
    4,
    6,
    {{4, 0, -5, 0, 1, 0},
     {0, -4, -4, 1, 1, 0},
     {0, 4, -4, -1, 1, 0},
     {0, -2, -1, 2, 1, 0},
     {0, 2, -1, -2, 1, 0},
     {0, 4, 0, -5, 0, 1}},
    {{1.0 / 4, 0, 0},
     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
     {1.0 / 24, 1.0 / 12, 1.0 / 6},
     {1.0 / 24, -1.0 / 12, 1.0 / 6},
     {0, 0, 1}},
    {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}},
};

const tj_winograd_t *tj_winograd(int m) { return m == 2 ? &F2 : m == 4 ? &F4 : NULL; }

/* Separable: t = G g (alpha x 3), then u = t G^T; 162 multiply-adds per kernel instead
 * of 648 for the four-fold sum (ResNet-18 transforms 65 K kernels at every load). */
void tj_winograd_weight(const tj_winograd_t *w, const float *g, float *u) {
  double t[TJ_WINOGRAD_MAX_ALPHA][3];
  for (int a = 0; a < w->alpha; a++)
    for (int j = 0; j < 3; j++) t[a][j] = w->g[a][0] * g[j] + w->g[a][1] * g[3 + j] + w->g[a][2] * g[6 + j];
  for (int a = 0; a < w->alpha; a++)
    for (int b = 0; b < w->alpha; b++)
      u[a * w->alpha + b] = (float)(t[a][0] * w->g[b][0] + t[a][1] * w->g[b][1] + t[a][2] * w->g[b][2]);
}
