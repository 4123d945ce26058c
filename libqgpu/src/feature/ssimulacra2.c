/*
 * ssimulacra2: SSIMULACRA 2 as the lusoris/vmaf fork's `ssimulacra2`
 * extractor computes it (libvmaf/src/feature/ssimulacra2.c, a port of libjxl
 * tools/ssimulacra2.cc): YUV -> linear sRGB (option yuv_matrix), XYB,
 * 6-scale pyramid, recursive Gaussian (sigma 1.5), SSIM and edge-difference
 * maps, 108 weighted L1/L4 norms, polynomial + power transform.
 *
 * Everything per pixel runs on the device (ssimulacra2.cl); the
 * host only turns the 108 sums into norms and the score, in double.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define SS2_SCALES 6
#define SS2_MIN_SIZE 8   /* the reference stops at a scale smaller than 8x8 */
#define SS2_SUMS 108     /* 6 scales x 3 channels x 6 sums */
/* as in ssimulacra2.cl */
#define HB_ROWS 32
#define SS2_MAXR 8       /* largest recursion radius the kernels are built for */
#define VB_COLS 32
#define RD_WG 64
#define PY_T 32
#define SS2_G 9          /* geometry fields per scale: */
enum { G_W, G_H, G_OFF, G_HG0, G_VG0, G_VGN, G_POFF, G_HOFF, G_NEED };

static const QgpuFeatureOutput ssimulacra2_outputs[] = {
    {.name = "ssimulacra2"},
    {.name = NULL},
};

typedef struct Ss2State {
    /* option */
    int yuv_matrix;
    /* geometry */
    int scales;
    int w[SS2_SCALES], h[SS2_SCALES];
    int hgroups, vgroups;          /* work-groups of the merged passes, all scales */
    cl_int geom[SS2_SCALES * SS2_G]; /* as read by the kernels (G_* fields) */
    /* conversion constants (float, as the reference computes them) */
    float yuv[8];
    float n2[3], d1[3];
    int radius;
    int fp64;                      /* map values and sums in double (else float-float) */
    /* OpenCL */
    cl_kernel k_pyramid, k_hblur, k_vblur, k_reduce;
    cl_mem lut, geom_buf;
    struct Ss2Lane {               /* per lane: written by every frame */
        cl_mem xyb1, xyb2, hbuf, partials;
    } lane[QGPU_MAX_LANES];
    size_t offset;                 /* in the slot results */
    int score_id;
} Ss2State;

static const QgpuOptionDef ss2_options[] = {
    {"yuv_matrix", NULL, QGPU_OPT_INT, offsetof(Ss2State, yuv_matrix), 0, NULL, 0, 3, 0,
     "YUV->RGB matrix: 0 = BT.709 limited (default), 1 = BT.601 limited, 2 = BT.709 full, "
     "3 = BT.601 full"},
    {NULL},
};

/* libjxl tools/ssimulacra2.cc, Msssim::Score(): weights of the 108 norms,
 * ordered ((channel * 6 + scale) * 2 + (L1, L4)) * 3 + (ssim, ringing, blur). */
static const double ss2_weights[SS2_SUMS] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0,
    0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271,
    0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0, 1.8422455520539298,
    11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833,
    0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
    0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0,
    7.466890328078848, 0.0, 17.445833984131262, 0.0006235601634041466, 0.0, 0.0,
    6.683678146179332, 0.00037724407979611296, 1.027889937768264, 225.20515300849274, 0.0,
    0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757,
    0.0004485436923833408, 0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0,
    8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682,
    0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0,
    0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
};

/* The map terms the score uses at scale `scale`: bit c * 3 + t (channel c;
 * t = 0 SSIM, 1 ringing, 2 blurring) is set when the L1 or the L4 norm of
 * that term has a non-zero weight. A term whose two weights are 0 adds
 * 0 * |norm| = +0 to the score whatever its sums are, as long as they are
 * finite (d >= 0 with a denominator that holds C2 = 0.0009 beside two
 * variances, e a ratio of two numbers >= 1), so the kernels skip it: its
 * sums stay 0 and the score is bit-identical. At scale 0 the X and B
 * channels use no SSIM term, so their blurs need only mu1 and mu2 (2 of
 * the 5 quantities) and their maps no SSIM division (doc/metrics/
 * ssimulacra2.md). Index as in ss2_collect. */
static int ss2_need(int scale)
{
    int need = 0;
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < 3; t++) {
            const int l1 = ((c * SS2_SCALES + scale) * 2 + 0) * 3 + t;
            const int l4 = ((c * SS2_SCALES + scale) * 2 + 1) * 3 + t;
            if (ss2_weights[l1] != 0.0 || ss2_weights[l4] != 0.0)
                need |= 1 << (c * 3 + t);
        }
    return need;
}

#define SS2_BIAS 0.0037930732552754493f /* the opsin bias (as in ssimulacra2.cl) */

/* The kernels' cube root (ss2_cbrt in ssimulacra2.cl: the fork's exponent
 * trick and two Newton steps) of one value, in IEEE single on the host:
 * the pyramid subtracts the cube root of the opsin bias from every cube
 * root, and computing it in each work-item cost two correctly rounded
 * divisions there. Each step is kept an IEEE single operation (volatile),
 * so the value is the kernel's own, bit for bit. */
static float ss2_cbrt_host(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    u = u / 3u + 0x2a5137a0u;
    float y0;
    memcpy(&y0, &u, sizeof(y0));
    volatile float y = y0, t;
    for (int k = 0; k < 2; k++) {
        volatile float y2 = y * y;
        volatile float q = x / y2;
        t = 2.0f * y;
        t = t + q;
        y = t * (1.0f / 3.0f);
    }
    return y;
}

/* libjxl lib/jxl/gauss_blur.cc CreateRecursiveGaussian (Charalampidis 2016,
 * "Recursive Implementation of the Gaussian Filter Using Truncated Cosine
 * Functions"), in double, rounded to float as the reference does. */
static void ss2_make_iir(Ss2State *s, double sigma)
{
    const double pi = 3.14159265358979323846;
    const double radius = round(3.2795 * sigma + 0.2546);
    const double om[3] = {pi / (2.0 * radius), 3.0 * pi / (2.0 * radius),
                          5.0 * pi / (2.0 * radius)};
    const double p1 = 1.0 / tan(0.5 * om[0]), p3 = -1.0 / tan(0.5 * om[1]),
                 p5 = 1.0 / tan(0.5 * om[2]);
    const double r1 = p1 * p1 / sin(om[0]), r3 = -p3 * p3 / sin(om[1]),
                 r5 = p5 * p5 / sin(om[2]);
    double rho[3];
    for (int i = 0; i < 3; i++)
        rho[i] = exp(-0.5 * sigma * sigma * om[i] * om[i]) * (1.0 / radius);
    const double d13 = p1 * r3 - r1 * p3, d35 = p3 * r5 - r3 * p5, d51 = p5 * r1 - r5 * p1;
    const double z15 = d35 * (1.0 / d13), z35 = d51 * (1.0 / d13);
    const double a[3][3] = {{p1, p3, p5}, {r1, r3, r5}, {z15, z35, 1.0}};
    const double gam[3] = {1.0, radius * radius - sigma * sigma,
                           z15 * rho[0] + z35 * rho[1] + rho[2]};
    /* Cramer's rule, cofactor expansion along the first row */
#define SS2_DET3(m)                                                                              \
    ((m)[0][0] * ((m)[1][1] * (m)[2][2] - (m)[1][2] * (m)[2][1]) -                               \
     (m)[0][1] * ((m)[1][0] * (m)[2][2] - (m)[1][2] * (m)[2][0]) +                               \
     (m)[0][2] * ((m)[1][0] * (m)[2][1] - (m)[1][1] * (m)[2][0]))
    const double inv_det = 1.0 / SS2_DET3(a);
    for (int col = 0; col < 3; col++) {
        double m[3][3];
        memcpy(m, a, sizeof(m));
        for (int i = 0; i < 3; i++)
            m[i][col] = gam[i];
        const double beta = SS2_DET3(m) * inv_det;
        s->n2[col] = (float)(-beta * cos(om[col] * (radius + 1.0)));
        s->d1[col] = (float)(-2.0 * cos(om[col]));
    }
#undef SS2_DET3
    s->radius = (int)radius;
}

/* YUV -> R'G'B' constants as the fork computes them, in float:
 * R = Y + 2(1-kr) V, G = Y - 2kb(1-kb)/kg U - 2kr(1-kr)/kg V, B = Y + 2(1-kb) U,
 * samples / (2^bpc - 1); limited range Y' = (v - 16/255) * 255/219,
 * C = (v - 0.5) * 255/224 at every bit depth. */
static void ss2_make_yuv(Ss2State *s, int bitdepth)
{
    const int bt709 = s->yuv_matrix == 0 || s->yuv_matrix == 2;
    const int limited = s->yuv_matrix == 0 || s->yuv_matrix == 1;
    const float kr = bt709 ? 0.2126f : 0.299f;
    const float kg = bt709 ? 0.7152f : 0.587f;
    const float kb = bt709 ? 0.0722f : 0.114f;
    const float peak = (float)((1u << bitdepth) - 1u);
    volatile float t; /* keep each step an IEEE single operation */
    s->yuv[0] = 1.0f / peak;
    s->yuv[1] = limited ? 16.0f / 255.0f : 0.0f;
    s->yuv[2] = limited ? 255.0f / 219.0f : 1.0f;
    s->yuv[3] = limited ? 255.0f / 224.0f : 1.0f;
    t = 1.0f - kr;
    s->yuv[4] = 2.0f * t; /* cr_r */
    t = 2.0f * kb;
    t = t * (1.0f - kb);
    s->yuv[5] = -t / kg;  /* cb_g */
    t = 2.0f * kr;
    t = t * (1.0f - kr);
    s->yuv[6] = -t / kg;  /* cr_g */
    t = 1.0f - kb;
    s->yuv[7] = 2.0f * t; /* cb_b */
}

static int ss2_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    Ss2State *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program program;
    int err;

    if (fmt->nb_planes != 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "ssimulacra2: needs colour (4:2:0, 4:2:2 or 4:4:4), got gray");
    if (fmt->width < SS2_MIN_SIZE || fmt->height < SS2_MIN_SIZE)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "ssimulacra2: %dx%d is too small, width and height must be >= %d",
                          fmt->width, fmt->height, SS2_MIN_SIZE);

    /* scales: as the reference, halve (rounding up) while both sides >= 8 */
    int64_t pixels = 0, parts = 0;
    s->scales = 0;
    s->hgroups = s->vgroups = 0;
    for (int w = fmt->width, h = fmt->height; s->scales < SS2_SCALES &&
         w >= SS2_MIN_SIZE && h >= SS2_MIN_SIZE; w = (w + 1) / 2, h = (h + 1) / 2) {
        int i = s->scales++;
        cl_int *g = s->geom + i * SS2_G;
        const int vgn = (w + VB_COLS - 1) / VB_COLS;
        s->w[i] = w;
        s->h[i] = h;
        g[G_W] = w;
        g[G_H] = h;
        g[G_OFF] = (cl_int)(3 * pixels);
        g[G_HOFF] = (cl_int)(15 * pixels);
        g[G_HG0] = s->hgroups;
        g[G_VG0] = s->vgroups;
        g[G_VGN] = vgn;
        g[G_POFF] = (cl_int)parts;
        g[G_NEED] = ss2_need(i);
        pixels += (int64_t)w * h;
        parts += 3 * 6 * vgn;
        s->hgroups += (h + HB_ROWS - 1) / HB_ROWS;
        s->vgroups += vgn;
    }
    if (15 * pixels > INT32_MAX)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED, "ssimulacra2: %dx%d is too large",
                          fmt->width, fmt->height);
    ss2_make_iir(s, 1.5);
    if (s->radius > SS2_MAXR)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED, "ssimulacra2: IIR radius %d too large",
                          s->radius);
    ss2_make_yuv(s, fmt->bitdepth);

    if ((err = qgpu_output_register(f, 0, &s->score_id)))
        return err;

    /* the recursion's radius as a constant of the program (SS2_N); and
     * -cl-fp32-correctly-rounded-divide-sqrt where the device has it, else
     * the kernel corrects its quotients with fma remainders */
    /* the map values and their sums in double where the device has fp64
     * (the reference's own arithmetic, and far fewer instructions than
     * float-float where fp64 is fast); QGPU_SS2_FP64=0/1 forces one path
     * (tests, measurements) */
    s->fp64 = qgpu_fp64_variant(ctx, "QGPU_SS2_FP64", 0, 1);
    /* NVIDIA (cl_nv_compiler_options): ss2_hblur in at most 128 registers.
     * The compiler took 162, two of its work-groups per SM; at 128 three
     * fit, and with four lanes other frames' work runs beside it
     * (doc/performance.md, issue #21, wt-ss2g). Since wt-ss2h the driver
     * takes 72 registers without the cap and 104 with it, and the pass was
     * a little shorter with it (0.130 against 0.126 ms one lane, one run
     * each, wt-ss2i). The cap is program-wide but binds only ss2_hblur:
     * NVIDIA's compiler ignores it for kernels with a reqd_work_group_size,
     * which ss2_hblur alone does not declare (ss2_vblur_maps at 96 spilled;
     * ptxas gives it 116 registers, no spill, since wt-ss2k skipped the
     * unweighted terms: 128 with 8 bytes spilled before). */
    /* the samples' size (SS2_BPS) and the cube root of the opsin bias
     * (SS2_CBIAS, a hex float: the kernel's own value, see
     * ss2_cbrt_host) are constants of the program too */
    char opts[256];
    snprintf(opts, sizeof(opts), "-DSS2_N=%d -DSS2_FP64=%d -DSS2_BPS=%d -DSS2_CBIAS=%af%s%s",
             s->radius, s->fp64, fmt->bytes_per_sample, ss2_cbrt_host(SS2_BIAS),
             qgpu_fp32_correctly_rounded(ctx)
                 ? " -cl-fp32-correctly-rounded-divide-sqrt -DSS2_NATIVE_DIV"
                 : "",
             qgpu_device_has_extension(ctx, "cl_nv_compiler_options")
                 ? " -cl-nv-maxrregcount=128"
                 : "");
    err = qgpu_program_get(ctx, "ssimulacra2", opts, &program);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "ss2_pyramid", &s->k_pyramid);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "ss2_hblur", &s->k_hblur);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "ss2_vblur_maps", &s->k_vblur);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "ss2_reduce", &s->k_reduce);
    if (err)
        return err;

    /* sRGB EOTF table: LUT[i] = eotf(i / 1023) in double, rounded to float
     * (the fork's ssimulacra2_eotf_lut.h, generated the same way), stored
     * as the pairs (LUT[i], LUT[i + 1]), i = 0 .. 1022, that ss2_eotf
     * reads with one load */
    float lut[1024], pairs[2 * 1023];
    for (int i = 0; i < 1024; i++) {
        double x = i / 1023.0;
        lut[i] = (float)(x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4));
    }
    for (int i = 0; i < 1023; i++) {
        pairs[2 * i] = lut[i];
        pairs[2 * i + 1] = lut[i + 1];
    }
    err = qgpu_buffer_upload(ctx, sizeof(pairs), pairs, &s->lut, "ssimulacra2: transfer table");
    if (!err)
        err = qgpu_buffer_upload(ctx, sizeof(s->geom), s->geom, &s->geom_buf,
                                 "ssimulacra2: geometry");
    const size_t planes = 3 * (size_t)pixels * sizeof(float);
    for (int i = 0; i < qgpu_lanes(ctx) && !err; i++) {
        struct Ss2Lane *b = &s->lane[i];
        err = qgpu_buffer_create(ctx, planes, &b->xyb1);
        if (!err)
            err = qgpu_buffer_create(ctx, planes, &b->xyb2);
        if (!err) /* horizontal pass output: 5 quantities x 3 channels, every scale */
            err = qgpu_buffer_create(ctx, 5 * planes, &b->hbuf);
        if (!err) /* a sum is 8 bytes: a double or a float-float pair */
            err = qgpu_buffer_create(ctx, (size_t)parts * 8, &b->partials);
    }
    if (!err)
        err = qgpu_results_reserve(ctx, SS2_SUMS * 8, &s->offset);
    return err;
}

static int ss2_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    static const char *const yuv_names[8] = {"inv_peak", "y_off", "y_scale", "c_scale",
                                             "cr_r",     "cb_g",  "cr_g",    "cb_b"};
    Ss2State *s = f->priv;
    const struct Ss2Lane *b = &s->lane[slot->lane];
    const QgpuVideoFormat *fmt = f->fmt;
    const int bps = fmt->bytes_per_sample;
    cl_float4 n2 = {{s->n2[0], s->n2[1], s->n2[2], 0.0f}};
    cl_float4 d1 = {{s->d1[0], s->d1[1], s->d1[2], 0.0f}};
    QgpuArg args[24];
    int n = 0, err;

    /* the pyramid: YUV -> linear RGB -> 2x2 boxes, XYB of every scale */
    args[n++] = qgpu_arg_mem("ref", slot->ref);
    args[n++] = qgpu_arg_mem("dist", slot->dist);
    args[n++] = qgpu_arg_int("cw", fmt->plane_w[1]);
    args[n++] = qgpu_arg_int("ch", fmt->plane_h[1]);
    /* in samples, < 2^32 (a picture of < 2^31 / 15 pixels, ss2_init) */
    args[n++] = qgpu_arg_uint("off0", (cl_uint)(fmt->plane_offset[0] / bps));
    args[n++] = qgpu_arg_uint("off1", (cl_uint)(fmt->plane_offset[1] / bps));
    args[n++] = qgpu_arg_uint("off2", (cl_uint)(fmt->plane_offset[2] / bps));
    for (int i = 0; i < 8; i++)
        args[n++] = qgpu_arg_float(yuv_names[i], s->yuv[i]);
    args[n++] = qgpu_arg_mem("lut", s->lut);
    args[n++] = qgpu_arg_mem("geom", s->geom_buf);
    args[n++] = qgpu_arg_int("scales", s->scales);
    args[n++] = qgpu_arg_mem("xyb1", b->xyb1);
    args[n++] = qgpu_arg_mem("xyb2", b->xyb2);
    size_t lp[2] = {PY_T / 2, PY_T / 2};
    size_t gp[2] = {(size_t)(fmt->width + PY_T - 1) / PY_T * (PY_T / 2),
                    (size_t)(fmt->height + PY_T - 1) / PY_T * (PY_T / 2)};
    err = qgpu_launch(f->ctx, slot, s->k_pyramid, "ssimulacra2: ss2_pyramid", args, n, 2, gp,
                      lp);
    if (err)
        return err;

    /* horizontal recursive Gaussian, every scale */
    {
        size_t lh[3] = {HB_ROWS, 5, 1};
        size_t gh[3] = {(size_t)s->hgroups * HB_ROWS, 5, 3};
        const QgpuArg hargs[] = {
            qgpu_arg_mem("xyb1", b->xyb1),
            qgpu_arg_mem("xyb2", b->xyb2),
            qgpu_arg_mem("geom", s->geom_buf),
            qgpu_arg_int("scales", s->scales),
            qgpu_arg_value("n2v", sizeof(n2), &n2),
            qgpu_arg_value("d1v", sizeof(d1), &d1),
            qgpu_arg_mem("hbuf", b->hbuf),
        };
        err = qgpu_launch(f->ctx, slot, s->k_hblur, "ssimulacra2: ss2_hblur", hargs,
                          QGPU_ARRAY_SIZE(hargs), 3, gh, lh);
        if (err)
            return err;
    }

    /* vertical recursive Gaussian + SSIM / edge maps + partial sums */
    {
        size_t lv[3] = {VB_COLS, 5, 1};
        size_t gv[3] = {(size_t)s->vgroups * VB_COLS, 5, 3};
        const QgpuArg vargs[] = {
            qgpu_arg_mem("hbuf", b->hbuf),
            qgpu_arg_mem("xyb1", b->xyb1),
            qgpu_arg_mem("xyb2", b->xyb2),
            qgpu_arg_mem("geom", s->geom_buf),
            qgpu_arg_int("scales", s->scales),
            qgpu_arg_value("n2v", sizeof(n2), &n2),
            qgpu_arg_value("d1v", sizeof(d1), &d1),
            qgpu_arg_mem("partials", b->partials),
        };
        err = qgpu_launch(f->ctx, slot, s->k_vblur, "ssimulacra2: ss2_vblur_maps", vargs,
                          QGPU_ARRAY_SIZE(vargs), 3, gv, lv);
        if (err)
            return err;
    }

    size_t lr = RD_WG, gr = (size_t)RD_WG * SS2_SUMS;
    const QgpuArg rargs[] = {
        qgpu_arg_mem("partials", b->partials),
        qgpu_arg_mem("geom", s->geom_buf),
        qgpu_arg_int("scales", s->scales),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index", (cl_uint)(s->offset / 8)),
    };
    return qgpu_launch(f->ctx, slot, s->k_reduce, "ssimulacra2: ss2_reduce", rargs,
                       QGPU_ARRAY_SIZE(rargs), 1, &gr, &lr);
}

/* libjxl Msssim::Score(): weighted norms, then the fitted polynomial and
 * power transform (constants from tools/ssimulacra2.cc). */
static double ss2_pool(const double norms[SS2_SUMS])
{
    double x = 0.0;
    for (int i = 0; i < SS2_SUMS; i++)
        x += ss2_weights[i] * fabs(norms[i]);
    x *= 0.9562382616834844;
    x = 2.326765642916932 * x - 0.020884521182843837 * x * x +
        6.248496625763138e-05 * x * x * x;
    return x > 0.0 ? 100.0 - 10.0 * pow(x, 0.6276336467831387) : 100.0;
}

/* Sum j of the results: a double, or a float-float pair whose two halves
 * are added in double. */
static double ss2_sum(const Ss2State *s, const unsigned char *sums, int j)
{
    if (s->fp64) {
        double d;
        memcpy(&d, sums + 8 * j, sizeof(d));
        return d;
    }
    float p[2];
    memcpy(p, sums + 8 * j, sizeof(p));
    return (double)p[0] + (double)p[1];
}

static int ss2_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    Ss2State *s = f->priv;
    const unsigned char *sums = (const unsigned char *)slot->results_host + s->offset;
    double norms[SS2_SUMS] = {0};

    /* sum (scale * 3 + c) * 6 + k: k = ssim L1, L4, ringing L1, L4, blur L1, L4 */
    for (int i = 0; i < s->scales; i++) {
        const double inv = 1.0 / ((double)s->w[i] * s->h[i]);
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 6; k++) {
                const double sum = ss2_sum(s, sums, (i * 3 + c) * 6 + k);
                const int term = k / 2, l4 = k % 2;
                const int idx = ((c * SS2_SCALES + i) * 2 + l4) * 3 + term;
                norms[idx] = l4 ? sqrt(sqrt(inv * sum)) : inv * sum;
            }
    }
    return qgpu_score_set(f->ctx, s->score_id, slot->frame_index, ss2_pool(norms));
}

static void ss2_uninit(QgpuFeature *f)
{
    Ss2State *s = f->priv;
    qgpu_kernel_release(&s->k_pyramid);
    qgpu_kernel_release(&s->k_hblur);
    qgpu_kernel_release(&s->k_vblur);
    qgpu_kernel_release(&s->k_reduce);
    qgpu_buffer_release(&s->lut);
    qgpu_buffer_release(&s->geom_buf);
    for (int i = 0; i < QGPU_MAX_LANES; i++) {
        qgpu_buffer_release(&s->lane[i].xyb1);
        qgpu_buffer_release(&s->lane[i].xyb2);
        qgpu_buffer_release(&s->lane[i].hbuf);
        qgpu_buffer_release(&s->lane[i].partials);
    }
}

const QgpuFeatureClass qgpu_feature_ssimulacra2 = {
    .name = "ssimulacra2",
    .outputs = ssimulacra2_outputs,
    .options = ss2_options,
    .priv_size = sizeof(Ss2State),
    .flags = QGPU_FEATURE_NEEDS_CHROMA | QGPU_FEATURE_LANES,
    .lookahead = 0,
    .dynamic_flags = NULL,
    .init = ss2_init,
    .enqueue = ss2_enqueue,
    .collect = ss2_collect,
    .flush = NULL,
    .uninit = ss2_uninit,
};
