/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_motion.c,
 * sharing no code with libqgpu/src/feature/motion.c / motion.cl. Where the two implement the
 * same step, `duplicates` pairs them: that repeat is the point (two implementations held against
 * each other), not something to fold. */
/*
 * Plain-C reference of libvmaf's integer motion (libvmaf 3.2.0,
 * integer_motion.c / integer_motion.h / motion_blend_tools.h), written from
 * the algorithm:
 * - d = prev - cur (reference luma only), vertical 5-tap filter
 *   {3571, 16004, 26386, 16004, 3571}: v = (sum f*d + 2^(bpc-1)) >> bpc
 *   (arithmetic shift), horizontal: (sum f*v + 32768) >> 16, borders mirrored
 *   without repeating the edge (-k -> k, n-1+k -> n-1-k); SAD = sum |result|.
 * - sad score = min(SAD / 256 / (w*h) * fps_weight, max_val); frame 0 (and
 *   frame 1 with the five-frame window, which compares frame i with i-2) 0.
 * - motion2/motion3 at flush: see motion_ref_clip().
 * - motion_legacy (libvmaf <= v3.0.0, git 2b2cf9c, integer_motion.c of those
 *   commits): blur(prev) and blur(cur) each on their own, same filter and
 *   shifts on non-negative sums, the bottom/right borders mirrored repeating
 *   the edge (n-1+k -> n-k); SAD = sum |blur(prev) - blur(cur)|; score
 *   (float)(SAD / 256.) / (w*h) in single precision.
 */
#include "motion_ref.h"

#include <stdlib.h>

static const int32_t motion_taps[5] = {3571, 16004, 26386, 16004, 3571};

static int mirror(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * (n - 1) - i;
    return i;
}

static int32_t sample(const void *p, ptrdiff_t idx, int bpc)
{
    return bpc == 8 ? ((const uint8_t *)p)[idx] : ((const uint16_t *)p)[idx];
}

uint64_t motion_ref_sad(const void *prev, const void *cur, int w, int h, ptrdiff_t stride,
                        int bpc)
{
    int64_t *v = malloc((size_t)w * h * sizeof(int64_t));
    if (!v)
        abort();
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int64_t a = 0;
            for (int k = 0; k < 5; k++) {
                ptrdiff_t idx = (ptrdiff_t)mirror(i - 2 + k, h) * stride + j;
                a += motion_taps[k] * (int64_t)(sample(prev, idx, bpc) - sample(cur, idx, bpc));
            }
            v[(size_t)i * w + j] = (a + ((int64_t)1 << (bpc - 1))) >> bpc;
        }
    uint64_t sad = 0;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int64_t a = 0;
            for (int k = 0; k < 5; k++)
                a += motion_taps[k] * v[(size_t)i * w + mirror(j - 2 + k, w)];
            int64_t r = (a + 32768) >> 16;
            sad += (uint64_t)(r < 0 ? -r : r);
        }
    free(v);
    return sad;
}

static int mirror_legacy(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - 1 - i;
    return i;
}

/* One frame blurred as libvmaf <= v3.0.0 did: 16-bit results. */
static uint16_t *blur_legacy(const void *pic, int w, int h, ptrdiff_t stride, int bpc)
{
    uint32_t *tmp = malloc((size_t)w * h * sizeof(uint32_t));
    uint16_t *out = malloc((size_t)w * h * sizeof(uint16_t));
    if (!tmp || !out)
        abort();
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            uint64_t a = 0;
            for (int k = 0; k < 5; k++)
                a += (uint64_t)motion_taps[k] *
                     (uint64_t)sample(pic, (ptrdiff_t)mirror_legacy(i - 2 + k, h) * stride + j, bpc);
            tmp[(size_t)i * w + j] = (uint32_t)((a + (1u << (bpc - 1))) >> bpc);
        }
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            uint64_t a = 0;
            for (int k = 0; k < 5; k++)
                a += (uint64_t)motion_taps[k] * tmp[(size_t)i * w + mirror_legacy(j - 2 + k, w)];
            out[(size_t)i * w + j] = (uint16_t)((a + 32768) >> 16);
        }
    free(tmp);
    return out;
}

uint64_t motion_ref_sad_legacy(const void *prev, const void *cur, int w, int h,
                               ptrdiff_t stride, int bpc)
{
    uint16_t *a = blur_legacy(prev, w, h, stride, bpc), *b = blur_legacy(cur, w, h, stride, bpc);
    uint64_t sad = 0;
    for (size_t i = 0; i < (size_t)w * h; i++)
        sad += (uint64_t)abs((int)a[i] - (int)b[i]);
    free(a);
    free(b);
    return sad;
}

void motion_ref_default_options(MotionRefOptions *o)
{
    o->force_zero = 0;
    o->blend_factor = 1.0;
    o->blend_offset = 40.0;
    o->fps_weight = 1.0;
    o->max_val = 10000.0;
    o->five_frame_window = 0;
    o->moving_average = 0;
    o->legacy = 0;
}

static double min_d(double a, double b)
{
    return a < b ? a : b;
}

/* motion_blend_tools.h */
static double blend(double x, double factor, double offset)
{
    return x * factor + (1 - factor) * min_d(offset, x);
}

void motion_ref_clip(const void *const *frames, unsigned n, int w, int h, ptrdiff_t stride,
                     int bpc, const MotionRefOptions *o, double *sad, double *motion2,
                     double *motion3)
{
    const unsigned gap = o->five_frame_window ? 2 : 1;  /* frames compared: i and i-gap */
    for (unsigned i = 0; i < n; i++) {
        sad[i] = 0.0;
        if (o->force_zero || i < gap)
            continue;
        double raw;
        if (o->legacy) {
            uint64_t s = motion_ref_sad_legacy(frames[i - gap], frames[i], w, h, stride, bpc);
            float scaled = (float)(s / 256.);
            raw = scaled / (float)(unsigned)(w * h);
        } else {
            uint64_t s = motion_ref_sad(frames[i - gap], frames[i], w, h, stride, bpc);
            raw = (double)s / 256. / (unsigned)(w * h);
        }
        sad[i] = min_d(raw * o->fps_weight, o->max_val);
    }
    /* motion2[i]: smaller of the SADs around frame i (i+1, and i with the
     * three-frame window or i-1 with the five-frame one, when that is a real
     * SAD); the last frame takes its own SAD. */
    double stamp = 0.0;
    if (n > gap)
        stamp = min_d(blend(sad[gap], o->blend_factor, o->blend_offset), o->max_val);
    double prev = 0.0;
    for (unsigned i = 0; i < n; i++) {
        double m2;
        if (i < gap) {
            m2 = 0.0;
        } else if (i + 1 >= n) {
            m2 = sad[i];
        } else {
            unsigned lo = i - (gap - 1);
            m2 = lo >= gap ? min_d(sad[lo], sad[i + 1]) : sad[i + 1];
        }
        motion2[i] = m2;
        if (i < gap) {
            motion3[i] = stamp;
            prev = stamp;
        } else {
            double p = min_d(blend(m2, o->blend_factor, o->blend_offset), o->max_val);
            motion3[i] = o->moving_average ? (p + prev) / 2.0 : p;
            prev = p;
        }
    }
}
