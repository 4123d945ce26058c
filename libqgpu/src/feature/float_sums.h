/* The luma-sum kernels of float_misc.cl (float_psnr's SSE,
 * float_moment's four moments) share one signature and one launch shape:
 * (ref, dist, luma offset, bytes per sample, w, h, results, index), one
 * FLOAT_SUMS_WG-wide work-group per group of rows. */
#ifndef QGPU_FLOAT_SUMS_H
#define QGPU_FLOAT_SUMS_H

#include <stddef.h>

#include "feature.h"

#define FLOAT_SUMS_WG 256 /* as FM_WG in float_misc.cl */

/* Sets the arguments and enqueues `kernel` over `groups` work-groups,
 * writing at byte `offset` of the slot's results. `what` names it in errors
 * and profiles (a string literal). */
int qgpu_float_sums_run(QgpuFeature *f, QgpuSlot *slot, cl_kernel kernel, int w, int h,
                        int groups, size_t offset, const char *what);

#endif
