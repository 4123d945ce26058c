/*
 * ciede: libvmaf's CIEDE2000 extractor (libvmaf 3.2.0, src/feature/ciede.c).
 *
 *   ciede2000 = 45 - 20 log10(mean over all luma pixels of dE00)
 *
 * with limited-range BT.709 Y'CbCr -> Lab for every input and libvmaf's
 * weights kL = 0.65, kC = 1, kH = 4. Per-pixel work in float on the device
 * (ciede.cl), per-work-group float sums, total in double here.
 *
 * Option libvmaf_422_compat (default false): by default chroma is read at
 * its correct nearest-neighbour position. libvmaf reads subsampled chroma
 * with its axes mixed up, which matters for 4:2:2 (and for the last
 * column/row of odd-size 4:2:0); with libvmaf_422_compat=true the device
 * reproduces that reading so that old libvmaf numbers can be matched. The
 * option does not rename the output: it is still ciede2000.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define CIEDE_TW 64 /* as in ciede.cl */
#define CIEDE_TH 4
#define CIEDE_ROWS 4

static const QgpuFeatureOutput ciede_outputs[] = {
    {.name = "ciede2000"},
    {.name = NULL},
};

typedef struct CiedeState {
    /* options */
    bool libvmaf_422_compat;
    /* state */
    cl_kernel kernel;
    int groups_x, groups_y;
    size_t offset;
    int id;
} CiedeState;

static const QgpuOptionDef ciede_options[] = {
    {"libvmaf_422_compat", NULL, QGPU_OPT_BOOL, offsetof(CiedeState, libvmaf_422_compat), 0,
     NULL, 0, 1, 0,
     "read subsampled chroma as libvmaf does (axes mixed up for 4:2:2) to match its numbers"},
    {NULL},
};

static int ciede_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    CiedeState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program program;
    char options[128];
    int err;

    if (fmt->nb_planes != 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "ciede: needs chroma planes (4:0:0 is not supported, as in libvmaf)");
    if (s->libvmaf_422_compat && fmt->layout != QGPU_LAYOUT_444 &&
        (fmt->vmaf_plane_w[1] == 0 || fmt->vmaf_plane_h[1] == 0))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "ciede: libvmaf_422_compat needs libvmaf's floor-size chroma planes to "
                          "be non-empty (at least 2x2 for 4:2:0, 2 wide for 4:2:2), got %dx%d",
                          fmt->width, fmt->height);
    s->groups_x = (fmt->width + CIEDE_TW - 1) / CIEDE_TW;
    s->groups_y = (fmt->height + CIEDE_TH * CIEDE_ROWS - 1) / (CIEDE_TH * CIEDE_ROWS);
    if ((err = qgpu_output_register(f, 0, &s->id)))
        return err;
    /* NVIDIA (cl_nv_compiler_options): native_divide, the same quotients as
     * `/` there (ciede.cl, DIV) in fewer instructions */
    snprintf(options, sizeof(options), "-DQG_HBD=%d -DCIEDE_NATIVE_DIV=%d", fmt->bitdepth > 8,
             qgpu_device_has_extension(ctx, "cl_nv_compiler_options"));
    err = qgpu_program_get(ctx, "ciede", options, &program);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "ciede_tiles", &s->kernel);
    if (!err)
        err = qgpu_results_reserve(ctx, sizeof(float) * (size_t)s->groups_x * s->groups_y,
                                   &s->offset);
    return err;
}

static int ciede_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    CiedeState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    size_t local[2] = {CIEDE_TW, CIEDE_TH};
    size_t global[2] = {(size_t)s->groups_x * CIEDE_TW, (size_t)s->groups_y * CIEDE_TH};
    const QgpuArg args[] = {
        qgpu_arg_mem("ref", slot->ref),
        qgpu_arg_mem("dist", slot->dist),
        qgpu_arg_int("w", fmt->width),
        qgpu_arg_int("h", fmt->height),
        qgpu_arg_int("pitch0", fmt->plane_w[0]),
        qgpu_arg_uint("off0", (cl_uint)(fmt->plane_offset[0] / fmt->bytes_per_sample)),
        qgpu_arg_int("cpitch", fmt->plane_w[1]),
        qgpu_arg_uint("off1", (cl_uint)(fmt->plane_offset[1] / fmt->bytes_per_sample)),
        qgpu_arg_uint("off2", (cl_uint)(fmt->plane_offset[2] / fmt->bytes_per_sample)),
        qgpu_arg_int("ssx", fmt->layout != QGPU_LAYOUT_444),
        qgpu_arg_int("ssy", fmt->layout == QGPU_LAYOUT_420),
        /* 4:4:4 is read directly by libvmaf as well */
        qgpu_arg_int("compat", s->libvmaf_422_compat && fmt->layout != QGPU_LAYOUT_444),
        qgpu_arg_int("cw", fmt->vmaf_plane_w[1]),
        qgpu_arg_int("ch", fmt->vmaf_plane_h[1]),
        qgpu_arg_float("scale", (cl_float)(1 << (fmt->bitdepth - 8))),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index", (cl_uint)(s->offset / sizeof(float))),
    };
    return qgpu_launch(f->ctx, slot, s->kernel, "ciede: ciede_tiles", args,
                       QGPU_ARRAY_SIZE(args), 2, global, local);
}

static int ciede_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    CiedeState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    const float *partial = (const float *)((const unsigned char *)slot->results_host + s->offset);
    double sum = 0.0;
    for (int g = 0; g < s->groups_x * s->groups_y; g++)
        sum += partial[g];
    double mean = sum / ((double)fmt->width * fmt->height);
    int err = qgpu_score_set(f->ctx, s->id, slot->frame_index, 45.0 - 20.0 * log10(mean));
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void ciede_uninit(QgpuFeature *f)
{
    CiedeState *s = f->priv;
    qgpu_kernel_release(&s->kernel);
}

const QgpuFeatureClass qgpu_feature_ciede = {
    .name = "ciede",
    .outputs = ciede_outputs,
    .options = ciede_options,
    .priv_size = sizeof(CiedeState),
    .flags = QGPU_FEATURE_NEEDS_CHROMA | QGPU_FEATURE_LANES, /* only slot buffers */
    .lookahead = 0,
    .init = ciede_init,
    .enqueue = ciede_enqueue,
    .collect = ciede_collect,
    .uninit = ciede_uninit,
};
