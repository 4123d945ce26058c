/* Deliberately independent reference: written from libvmaf's arithmetic for
 * tests/test_ssimulacra2.c, sharing no code with libqgpu/src/feature/ssimulacra2.c /
 * ssimulacra2.cl. Where the two implement the same step, `duplicates` pairs them: that repeat is
 * the point (two implementations held against each other), not something to fold. */
/*
 * Plain-C reference of ssimulacra2 (see ssimulacra2_ref.h). Slow and simple:
 * whole float planes, one stage after the other.
 *
 * Constants are libjxl's (tools/ssimulacra2.cc, lib/jxl/opsin_params.h,
 * lib/jxl/gauss_blur.cc); the YUV conversion, the LUT-based sRGB EOTF and the
 * Newton cube root are those of the lusoris/vmaf fork's extractor
 * (libvmaf/src/feature/ssimulacra2.c, ssimulacra2_math.h), whose output is
 * the golden reference.
 */
#include "ssimulacra2_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libjxl tools/ssimulacra2.cc, Msssim::Score() weights. */
static const double ref_weights[108] = {
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

double ssimulacra2_ref_pool(const double norms[108])
{
    double s = 0.0;
    for (int i = 0; i < 108; i++)
        s += ref_weights[i] * fabs(norms[i]);
    s *= 0.9562382616834844;
    s = 2.326765642916932 * s - 0.020884521182843837 * s * s +
        6.248496625763138e-05 * s * s * s;
    if (s > 0.0)
        return 100.0 - 10.0 * pow(s, 0.6276336467831387);
    return 100.0;
}

/* ---- the fork's deterministic helpers ---------------------------------- */

static float ref_cbrt(float x, unsigned variant)
{
    if (variant & SS2_REF_CBRT_LIBM)
        return x <= 0.0f ? 0.0f : cbrtf(x);
    if (x <= 0.0f)
        return 0.0f;
    union {
        float f;
        uint32_t i;
    } u;
    u.f = x;
    u.i = u.i / 3u + 0x2a5137a0u; /* exponent / 3 starting guess */
    float y = u.f;
    for (int k = 0; k < 2; k++) {
        float y2 = y * y;
        float q = x / y2;
        float t = 2.0f * y + q;
        y = t * (1.0f / 3.0f);
    }
    return y;
}

static void make_eotf_lut(float lut[1024])
{
    for (int i = 0; i < 1024; i++) {
        double x = i / 1023.0;
        double v = x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4);
        lut[i] = (float)v;
    }
}

static float ref_eotf(float x, const float lut[1024], unsigned variant)
{
    if (variant & SS2_REF_EOTF_POW) {
        double v = x;
        if (v <= 0.0)
            return 0.0f;
        if (v >= 1.0)
            return 1.0f;
        return (float)(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4));
    }
    if (x <= 0.0f)
        return 0.0f;
    if (x >= 1.0f)
        return 1.0f;
    float idx = x * 1023.0f;
    int i = (int)idx;
    float frac = idx - (float)i;
    float a = lut[i], b = lut[i + 1];
    float d = b - a;
    float t = d * frac;
    return a + t;
}

/* ---- YUV -> linear RGB --------------------------------------------------- */

static int chroma_size(int luma, int sub)
{
    return sub ? (luma + 1) / 2 : luma;
}

static unsigned sample_at(const QgpuPicture *p, int plane, int x, int y)
{
    const uint8_t *row = (const uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
    if (p->bitdepth > 8)
        return (unsigned)row[2 * x] | ((unsigned)row[2 * x + 1] << 8);
    return row[x];
}

/* The fork's nearest sampling: x>>1 when the plane is exactly half the
 * luma size, x * pw / lw otherwise (odd sizes). */
static int chroma_index(int x, int pw, int lw)
{
    int s;
    if (pw == lw)
        s = x;
    else if (pw * 2 == lw)
        s = x >> 1;
    else
        s = (int)((int64_t)x * pw / lw);
    if (s >= pw)
        s = pw - 1;
    return s;
}

static void to_linear(const QgpuPicture *p, int yuv_matrix, const float lut[1024],
                      unsigned variant, float *out)
{
    const int w = p->width, h = p->height;
    const size_t n = (size_t)w * h;
    const int cw = chroma_size(w, p->layout != QGPU_LAYOUT_444);
    const int ch = chroma_size(h, p->layout == QGPU_LAYOUT_420);
    const float inv_peak = 1.0f / (float)((1u << p->bitdepth) - 1u);
    const int bt709 = yuv_matrix == 0 || yuv_matrix == 2;
    const int limited = yuv_matrix == 0 || yuv_matrix == 1;
    const float kr = bt709 ? 0.2126f : 0.299f;
    const float kg = bt709 ? 0.7152f : 0.587f;
    const float kb = bt709 ? 0.0722f : 0.114f;
    const float cr_r = 2.0f * (1.0f - kr);
    const float cb_b = 2.0f * (1.0f - kb);
    const float cb_g = -(2.0f * kb * (1.0f - kb)) / kg;
    const float cr_g = -(2.0f * kr * (1.0f - kr)) / kg;
    const float y_scale = limited ? 255.0f / 219.0f : 1.0f;
    const float c_scale = limited ? 255.0f / 224.0f : 1.0f;
    const float y_off = limited ? 16.0f / 255.0f : 0.0f;
    for (int y = 0; y < h; y++) {
        const int sy = chroma_index(y, ch, h);
        for (int x = 0; x < w; x++) {
            const int sx = chroma_index(x, cw, w);
            float Y = (float)sample_at(p, 0, x, y) * inv_peak;
            float U = (float)sample_at(p, 1, sx, sy) * inv_peak;
            float V = (float)sample_at(p, 2, sx, sy) * inv_peak;
            float Yn = (Y - y_off) * y_scale;
            float Un = (U - 0.5f) * c_scale;
            float Vn = (V - 0.5f) * c_scale;
            float rgb[3];
            float t;
            t = cr_r * Vn;
            rgb[0] = Yn + t;
            t = cb_g * Un;
            rgb[1] = Yn + t;
            t = cr_g * Vn;
            rgb[1] = rgb[1] + t;
            t = cb_b * Un;
            rgb[2] = Yn + t;
            for (int c = 0; c < 3; c++) {
                float v = rgb[c] < 0.0f ? 0.0f : rgb[c] > 1.0f ? 1.0f : rgb[c];
                out[c * n + (size_t)y * w + x] = ref_eotf(v, lut, variant);
            }
        }
    }
}

/* ---- linear RGB -> XYB (libjxl opsin_params.h, MakePositiveXYB) ---------- */

static void to_xyb(const float *lin, float *xyb, size_t n, unsigned variant)
{
    const float m00 = 0.30f, m02 = 0.078f, m10 = 0.23f, m12 = 0.078f;
    const float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f;
    const float bias = 0.0037930732552754493f;
    const float m01 = 1.0f - m00 - m02;
    const float m11 = 1.0f - m10 - m12;
    const float m22 = 1.0f - m20 - m21;
    const float cbias = ref_cbrt(bias, variant);
    for (size_t i = 0; i < n; i++) {
        const float r = lin[i], g = lin[n + i], b = lin[2 * n + i];
        float t0, t1;
        t0 = m00 * r; t1 = m01 * g; float l = t0 + t1; t0 = m02 * b; l = l + t0; l = l + bias;
        t0 = m10 * r; t1 = m11 * g; float m = t0 + t1; t0 = m12 * b; m = m + t0; m = m + bias;
        t0 = m20 * r; t1 = m21 * g; float s = t0 + t1; t0 = m22 * b; s = s + t0; s = s + bias;
        if (l < 0.0f) l = 0.0f;
        if (m < 0.0f) m = 0.0f;
        if (s < 0.0f) s = 0.0f;
        const float L = ref_cbrt(l, variant) - cbias;
        const float M = ref_cbrt(m, variant) - cbias;
        const float S = ref_cbrt(s, variant) - cbias;
        const float X = 0.5f * (L - M);
        const float Y = 0.5f * (L + M);
        float tx = X * 14.0f;
        xyb[i] = tx + 0.42f;
        xyb[n + i] = Y + 0.01f;
        xyb[2 * n + i] = (S - Y) + 0.55f;
    }
}

/* ---- 2x2 box downsample, edge replicated ---------------------------------- */

static void downsample(const float *in, int iw, int ih, float *out, int ow, int oh)
{
    for (int c = 0; c < 3; c++) {
        const float *ip = in + (size_t)c * iw * ih;
        float *op = out + (size_t)c * ow * oh;
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                int x0 = 2 * ox, y0 = 2 * oy;
                int x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
                int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1;
                float s = ip[y0 * iw + x0] + ip[y0 * iw + x1];
                s = s + ip[y1 * iw + x0];
                s = s + ip[y1 * iw + x1];
                op[oy * ow + ox] = s * 0.25f;
            }
    }
}

/* ---- libjxl recursive Gaussian (Charalampidis 2016), sigma 1.5 ------------ */

typedef struct RefIir {
    float n2[3], d1[3];
    int radius;
} RefIir;

static void make_iir(RefIir *g, double sigma)
{
    const double radius = round(3.2795 * sigma + 0.2546);
    const double pi = 3.14159265358979323846;
    const double w[3] = {pi / (2.0 * radius), 3.0 * pi / (2.0 * radius), 5.0 * pi / (2.0 * radius)};
    const double p1 = 1.0 / tan(0.5 * w[0]), p3 = -1.0 / tan(0.5 * w[1]),
                 p5 = 1.0 / tan(0.5 * w[2]);
    const double r1 = p1 * p1 / sin(w[0]), r3 = -p3 * p3 / sin(w[1]), r5 = p5 * p5 / sin(w[2]);
    double rho[3];
    for (int i = 0; i < 3; i++)
        rho[i] = exp(-0.5 * sigma * sigma * w[i] * w[i]) * (1.0 / radius);
    const double d13 = p1 * r3 - r1 * p3, d35 = p3 * r5 - r3 * p5, d51 = p5 * r1 - r5 * p1;
    const double z15 = d35 * (1.0 / d13), z35 = d51 * (1.0 / d13);
    const double A[3][3] = {{p1, p3, p5}, {r1, r3, r5}, {z15, z35, 1.0}};
    const double gam[3] = {1.0, radius * radius - sigma * sigma, z15 * rho[0] + z35 * rho[1] + rho[2]};
#define DET3(M)                                                                                  \
    ((M)[0][0] * ((M)[1][1] * (M)[2][2] - (M)[1][2] * (M)[2][1]) -                               \
     (M)[0][1] * ((M)[1][0] * (M)[2][2] - (M)[1][2] * (M)[2][0]) +                               \
     (M)[0][2] * ((M)[1][0] * (M)[2][1] - (M)[1][1] * (M)[2][0]))
    const double inv_det = 1.0 / DET3(A);
    for (int col = 0; col < 3; col++) {
        double M[3][3];
        memcpy(M, A, sizeof(M));
        for (int i = 0; i < 3; i++)
            M[i][col] = gam[i];
        const double beta = DET3(M) * inv_det;
        g->n2[col] = (float)(-beta * cos(w[col] * (radius + 1.0)));
        g->d1[col] = (float)(-2.0 * cos(w[col]));
    }
#undef DET3
    g->radius = (int)radius;
}

/* One line: out[n] = sum of three 2nd-order recursions fed with
 * in[n-N-1] + in[n+N-1] (zero outside), n from -N+1. */
static void iir_line(const RefIir *g, const float *in, ptrdiff_t istride, float *out,
                     ptrdiff_t ostride, int len, unsigned variant)
{
    float p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0};
    const int N = g->radius;
    for (int n = -N + 1; n < len; n++) {
        const int l = n - N - 1, r = n + N - 1;
        const float lv = l >= 0 ? in[l * istride] : 0.0f;
        const float rv = r < len ? in[r * istride] : 0.0f;
        const float sum = lv + rv;
        float o[3];
        for (int k = 0; k < 3; k++) {
            float a = g->n2[k] * sum;
            float b = g->d1[k] * p1[k];
            o[k] = (a - b) - p2[k];
            if (variant & SS2_REF_IIR_FMA)
                o[k] = fmaf(g->n2[k], sum, -b) - p2[k];
            p2[k] = p1[k];
            p1[k] = o[k];
        }
        if (n >= 0)
            out[n * ostride] = (o[0] + o[1]) + o[2];
    }
}

static void blur(const RefIir *g, const float *in, float *out, float *tmp, int w, int h,
                 unsigned variant)
{
    for (int y = 0; y < h; y++)
        iir_line(g, in + (size_t)y * w, 1, tmp + (size_t)y * w, 1, w, variant);
    for (int x = 0; x < w; x++)
        iir_line(g, tmp + x, w, out + x, w, h, variant);
}

/* ---- one scale: SSIM map and edge-difference maps ------------------------- */

static double quartic(double x)
{
    x *= x;
    return x * x;
}

static void score_scale(const RefIir *g, const float *x1, const float *x2, int w, int h,
                        unsigned variant, int scale, double norms[108])
{
    const size_t n = (size_t)w * h;
    float *buf = malloc(sizeof(float) * n * 7);
    if (!buf) {
        for (int i = 0; i < 108; i++)
            norms[i] = NAN;
        return;
    }
    float *prod = buf, *tmp = buf + n, *mu1 = buf + 2 * n, *mu2 = buf + 3 * n,
          *s11 = buf + 4 * n, *s22 = buf + 5 * n, *s12 = buf + 6 * n;
    for (int c = 0; c < 3; c++) {
        const float *a = x1 + c * n, *b = x2 + c * n;
        blur(g, a, mu1, tmp, w, h, variant);
        blur(g, b, mu2, tmp, w, h, variant);
        for (size_t i = 0; i < n; i++)
            prod[i] = a[i] * a[i];
        blur(g, prod, s11, tmp, w, h, variant);
        for (size_t i = 0; i < n; i++)
            prod[i] = b[i] * b[i];
        blur(g, prod, s22, tmp, w, h, variant);
        for (size_t i = 0; i < n; i++)
            prod[i] = a[i] * b[i];
        blur(g, prod, s12, tmp, w, h, variant);

        double sum[6] = {0, 0, 0, 0, 0, 0}; /* ssim L1, L4, art L1, L4, det L1, L4 */
        float fsum[6] = {0, 0, 0, 0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            const float m1 = mu1[i], m2 = mu2[i];
            const float m11 = m1 * m1, m22 = m2 * m2, m12 = m1 * m2;
            const float df = m1 - m2;
            const float num_m = 1.0f - df * df;
            const float num_s = 2.0f * (s12[i] - m12) + 0.0009f;
            const float den_s = ((s11[i] - m11) + (s22[i] - m22)) + 0.0009f;
            double d;
            double ed1, ed2;
            if (variant & SS2_REF_EDGE_DOUBLE_SUB) {
                ed1 = fabs((double)a[i] - (double)m1);
                ed2 = fabs((double)b[i] - (double)m2);
            } else {
                ed1 = fabsf(a[i] - m1);
                ed2 = fabsf(b[i] - m2);
            }
            if (variant & SS2_REF_MAPS_FLOAT) {
                float df2 = 1.0f - num_m * num_s / den_s;
                if (df2 < 0.0f)
                    df2 = 0.0f;
                float e = (1.0f + (float)ed2) / (1.0f + (float)ed1) - 1.0f;
                float art = e > 0.0f ? e : 0.0f, det = e < 0.0f ? -e : 0.0f;
                fsum[0] += df2;
                fsum[1] += df2 * df2 * df2 * df2;
                fsum[2] += art;
                fsum[3] += art * art * art * art;
                fsum[4] += det;
                fsum[5] += det * det * det * det;
                continue;
            }
            d = 1.0 - ((double)num_m * (double)num_s / (double)den_s);
            if (variant & SS2_REF_PIXEL_FLOAT) {
                float q = num_m * num_s;
                q = q / den_s;
                d = 1.0f - q;
            }
            if (d < 0.0)
                d = 0.0;
            sum[0] += d;
            sum[1] += quartic(d);
            double e = (1.0 + ed2) / (1.0 + ed1) - 1.0;
            if (variant & SS2_REF_PIXEL_FLOAT) {
                float num = 1.0f + (float)ed2, den = 1.0f + (float)ed1;
                float qe = num / den;
                e = qe - 1.0f;
            }
            const double art = e > 0.0 ? e : 0.0, det = e < 0.0 ? -e : 0.0;
            sum[2] += art;
            sum[3] += quartic(art);
            sum[4] += det;
            sum[5] += quartic(det);
        }
        if (variant & SS2_REF_MAPS_FLOAT)
            for (int k = 0; k < 6; k++)
                sum[k] = fsum[k];
        const double inv = 1.0 / (double)n;
        for (int k = 0; k < 3; k++) { /* ssim, ringing (art), blurring (det) */
            const int base = ((c * 6 + scale) * 2) * 3 + k;
            norms[base] = inv * sum[2 * k];                 /* L1 */
            norms[base + 3] = sqrt(sqrt(inv * sum[2 * k + 1])); /* L4 */
        }
    }
    free(buf);
}

double ssimulacra2_ref(const QgpuPicture *ref, const QgpuPicture *dist, int yuv_matrix,
                       unsigned variant, double norms_out[108])
{
    if (ref->layout == QGPU_LAYOUT_400 || dist->layout == QGPU_LAYOUT_400)
        return NAN;
    int w = ref->width, h = ref->height;
    const size_t n0 = (size_t)w * h;
    float lut[1024];
    make_eotf_lut(lut);
    RefIir g;
    make_iir(&g, 1.5);
    float *lin1 = malloc(sizeof(float) * 3 * n0), *lin2 = malloc(sizeof(float) * 3 * n0);
    float *x1 = malloc(sizeof(float) * 3 * n0), *x2 = malloc(sizeof(float) * 3 * n0);
    float *down = malloc(sizeof(float) * 3 * n0);
    double norms[108];
    for (int i = 0; i < 108; i++)
        norms[i] = 0.0;
    double score = NAN;
    if (lin1 && lin2 && x1 && x2 && down) {
        to_linear(ref, yuv_matrix, lut, variant, lin1);
        to_linear(dist, yuv_matrix, lut, variant, lin2);
        for (int scale = 0; scale < 6; scale++) {
            if (w < 8 || h < 8)
                break;
            to_xyb(lin1, x1, (size_t)w * h, variant);
            to_xyb(lin2, x2, (size_t)w * h, variant);
            score_scale(&g, x1, x2, w, h, variant, scale, norms);
            const int ow = (w + 1) / 2, oh = (h + 1) / 2;
            downsample(lin1, w, h, down, ow, oh);
            memcpy(lin1, down, sizeof(float) * 3 * ow * oh);
            downsample(lin2, w, h, down, ow, oh);
            memcpy(lin2, down, sizeof(float) * 3 * ow * oh);
            w = ow;
            h = oh;
        }
        score = ssimulacra2_ref_pool(norms);
        if (norms_out)
            memcpy(norms_out, norms, sizeof(norms));
    }
    free(lin1);
    free(lin2);
    free(x1);
    free(x2);
    free(down);
    return score;
}
