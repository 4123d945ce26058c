/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_psnr.c,
 * sharing no code with libqgpu/src/feature/psnr.c / psnr.cl. Where the two implement the same
 * step, `duplicates` pairs them: that repeat is the point (two implementations held against each
 * other), not something to fold. */
#include <math.h>

#include "psnr_ref.h"
#include "test_util.h"

uint64_t psnr_ref_sse(const QgpuPicture *ref, const QgpuPicture *dist, int plane, int *w, int *h)
{
    int ss_x = plane && (ref->layout == QGPU_LAYOUT_420 || ref->layout == QGPU_LAYOUT_422);
    int ss_y = plane && ref->layout == QGPU_LAYOUT_420;
    uint64_t sse = 0;
    *w = ss_x ? ref->width / 2 : ref->width;
    *h = ss_y ? ref->height / 2 : ref->height;
    for (int y = 0; y < *h; y++)
        for (int x = 0; x < *w; x++) {
            int64_t e = (int64_t)test_sample(ref, plane, x, y) - test_sample(dist, plane, x, y);
            sse += (uint64_t)(e * e);
        }
    return sse;
}

double psnr_ref_plane(const QgpuPicture *ref, const QgpuPicture *dist, int plane)
{
    int w, h;
    uint64_t sse = psnr_ref_sse(ref, dist, plane, &w, &h);
    double peak = ref->bitdepth == 8 ? 255.0 : (double)((1 << ref->bitdepth) - 1);
    double mse = (double)sse / ((double)w * h);
    double psnr = 10.0 * log10(peak * peak / fmax(mse, 1e-16));
    return fmin(psnr, 6.0 * ref->bitdepth + 12.0);
}
