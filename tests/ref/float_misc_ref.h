/* Deliberately independent reference for tests/test_float_misc.c (see float_misc_ref.c). */
/* Plain-C references of libvmaf's float_motion, float_psnr, float_ansnr and
 * float_moment (libvmaf 3.2.0), written for clarity: the same single-
 * precision arithmetic in the same order as libvmaf's C code. Pictures are
 * one luma plane of `bitdepth`-bit samples (uint8 for 8 bit, else uint16)
 * with a row pitch of `stride` samples. */
#ifndef FLOAT_MISC_REF_H
#define FLOAT_MISC_REF_H

typedef struct FloatMotionRefOptions {
    int force_zero;
    double fps_weight;   /* 1.0 */
    double blend_factor; /* 1.0 */
    double blend_offset; /* 40.0 */
    int filter_size;     /* 5; 1 = no blur */
    double max_val;      /* 10000.0 */
    int add_uv;          /* add the motion of the chroma planes */
    int add_scale1;      /* add the motion of the half-size luma */
} FloatMotionRefOptions;

void float_motion_ref_default_options(FloatMotionRefOptions *o);

/* motion, motion2, motion3 of every frame of a clip of n reference
 * pictures: planes[3 * i + p] is plane p of frame i, w[p] x h[p] samples,
 * packed (pitch w[p]); chroma is read only with add_uv. */
void float_motion_ref_clip(const void *const *planes, unsigned n, const int w[3], const int h[3],
                           int bitdepth, const FloatMotionRefOptions *o, double *motion,
                           double *motion2, double *motion3);

double float_psnr_ref(const void *ref, const void *dis, int w, int h, int stride, int bitdepth);

/* moments[0..3] = ref1st, dis1st, ref2nd, dis2nd */
void float_moment_ref(const void *ref, const void *dis, int w, int h, int stride, int bitdepth,
                      double moments[4]);

void float_ansnr_ref(const void *ref, const void *dis, int w, int h, int stride, int bitdepth,
                     double *ansnr, double *anpsnr);

#endif
