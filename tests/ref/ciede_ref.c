/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_ciede.c,
 * sharing no code with libqgpu/src/feature/ciede.c / ciede.cl. Where the two implement the same
 * step, `duplicates` pairs them: that repeat is the point (two implementations held against each
 * other), not something to fold. */
/* Plain-C reference of libvmaf's ciede (libvmaf 3.2.0, src/feature/ciede.c,
 * itself a port of av-metrics' CIEDE2000). Written for clarity. It keeps
 * libvmaf's precision choices (the Y'CbCr -> Lab conversion in double with
 * the f(t) values stored as float, the CIEDE2000 terms stored as float with
 * double intermediates, the mean in double) so that it can be held against
 * the golden values. */
#include "ciede_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* sRGB-style transfer (threshold 10/255, exponent 2.4), to linear light */
static double to_linear(double c)
{
    if (c > 10.0 / 255.0)
        return pow((c + 0.055) * (1.0 / 1.055), 2.4);
    return c * (1.0 / 12.92);
}

/* CIE Lab's f(t): cube root above (6/29)^3, linear below; libvmaf keeps
 * the result as float */
static float lab_f(double t)
{
    if (t > 216.0 / 24389.0)
        return (float)pow(t, 1.0 / 3.0);
    return (float)((24389.0 / 27.0 * t + 16.0) * (1.0 / 116.0));
}

void ciede_ref_lab(double y, double u, double v, int bitdepth, float lab[3])
{
    const double scale = (double)(1 << (bitdepth - 8));
    /* limited range: Y' 16..235, Cb/Cr 16..240 (x scale above 8 bits) */
    double yn = (y - 16.0 * scale) * (1.0 / (219.0 * scale));
    double un = (u - 128.0 * scale) * (1.0 / (224.0 * scale));
    double vn = (v - 128.0 * scale) * (1.0 / (224.0 * scale));

    /* BT.709 Y'CbCr -> R'G'B' */
    double r = to_linear(yn + 1.28033 * vn);
    double g = to_linear(yn - 0.21482 * un - 0.38059 * vn);
    double b = to_linear(yn + 2.12798 * un);

    /* linear sRGB -> XYZ (D65) */
    double X = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    double Y = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    double Z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;

    /* XYZ -> Lab, white point D65 (0.95047, 1, 1.08883) */
    float fx = lab_f(X * (1.0 / 0.95047));
    float fy = lab_f(Y);
    float fz = lab_f(Z * (1.0 / 1.08883));
    lab[0] = (float)(116.0 * fy - 16.0);
    lab[1] = (float)(500.0 * ((double)fx - fy));
    lab[2] = (float)(200.0 * ((double)fy - fz));
}

/* hue angle in [0, 2 pi); 0 for a neutral colour */
static float hue_angle(float b, float a)
{
    if (b == 0.0f && a == 0.0f)
        return 0.0f;
    float h = (float)atan2(b, a);
    if (h < 0.0f)
        h = (float)(h + 2.0 * M_PI);
    return h;
}

float ciede_ref_de2000(const float lab1[3], const float lab2[3])
{
    /* libvmaf's weights: kL = 0.65, kC = 1, kH = 4 */
    const float kl = 0.65f, kc = 1.0f, kh = 4.0f;
    const float l1 = lab1[0], a1 = lab1[1], b1 = lab1[2];
    const float l2 = lab2[0], a2 = lab2[1], b2 = lab2[2];

    float dl = l2 - l1;
    float lbar = (l1 + l2) / 2;
    float c1 = (float)sqrt((double)a1 * a1 + (double)b1 * b1);
    float c2 = (float)sqrt((double)a2 * a2 + (double)b2 * b2);
    float cbar = (c1 + c2) / 2;
    double c7 = pow(cbar, 7);
    double g = 1.0 - sqrt(c7 / (c7 + pow(25.0, 7)));
    float ap1 = (float)(a1 + (a1 / 2) * g);
    float ap2 = (float)(a2 + (a2 / 2) * g);
    float cp1 = (float)sqrt((double)ap1 * ap1 + (double)b1 * b1);
    float cp2 = (float)sqrt((double)ap2 * ap2 + (double)b2 * b2);
    float cpbar = (cp1 + cp2) / 2;
    float dc = cp2 - cp1;
    double lm = (double)(lbar - 50);
    float sl = (float)(1.0 + (0.015 * lm * lm) / sqrt(20.0 + lm * lm));
    float sc = (float)(1.0 + 0.045 * cpbar);
    float h1 = hue_angle(b1, ap1);
    float h2 = hue_angle(b2, ap2);

    /* hue difference, taken the short way round (0 when a chroma is 0) */
    float dh;
    if (c1 == 0.0f || c2 == 0.0f)
        dh = 0.0f;
    else if (fabsf(h1 - h2) <= M_PI)
        dh = h2 - h1;
    else if (h2 <= h1)
        dh = (float)((h2 - h1) + 2.0 * M_PI);
    else
        dh = (float)((h2 - h1) - 2.0 * M_PI);
    float dH = (float)(2.0 * sqrt(cp1 * cp2) * sin(dh / 2.0));

    /* mean hue */
    float hbar = fabs(h1 - h2) > M_PI ? (float)(((h1 + h2) + 2.0 * M_PI) / 2.0)
                                      : (float)((h1 + h2) / 2.0);
    float t = (float)(1.0 - 0.17 * cos(hbar - M_PI / 6.0) + 0.24 * cos(2.0 * hbar) +
                      0.32 * cos(3.0 * hbar + M_PI / 30.0) -
                      0.20 * cos(4.0 * hbar - 7.0 * M_PI / 20.0));
    float sh = (float)(1.0 + 0.015 * cpbar * t);

    /* rotation term */
    float hdeg = (float)(hbar * (180.0 / M_PI));
    float x = (float)((hdeg - 275.0) * (1.0 / 25.0));
    float cp7 = powf(cpbar, 7);
    float rot_angle = (float)((float)(60.0 * exp(-powf(x, 2))) * (M_PI / 180.0));
    float rt = (float)(-2.0 * sqrt(cp7 / (cp7 + powf(25.0f, 7))) * sin(rot_angle));

    float ll = dl / (kl * sl);
    float cc = dc / (kc * sc);
    float hh = dH / (kh * sh);
    return (float)sqrt((double)ll * ll + (double)cc * cc + (double)hh * hh + rt * cc * hh);
}

static int sample(const QgpuPicture *pic, int p, int x, int y)
{
    const uint8_t *row = (const uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p];
    /* byte reads: rows of an odd byte stride are not 2-byte aligned (UBSan) */
    return pic->bitdepth > 8 ? row[2 * x] | row[2 * x + 1] << 8 : row[x];
}

/* libvmaf's chroma memory: the floor-size Cb plane then the Cr plane, rows
 * padded with zeros to a multiple of 32 samples, one zeroed allocation. */
typedef struct VmafChroma {
    int *buf;
    size_t size;      /* samples in both planes */
    size_t plane;     /* samples in one plane */
    int stride;
} VmafChroma;

static int vmaf_chroma_init(VmafChroma *c, const QgpuPicture *pic, int cw, int ch)
{
    c->stride = (cw + 31) / 32 * 32;
    c->plane = (size_t)c->stride * ch;
    c->size = 2 * c->plane;
    c->buf = calloc(c->size ? c->size : 1, sizeof(int));
    if (!c->buf)
        return -1;
    for (int p = 0; p < 2; p++)
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                c->buf[p * c->plane + (size_t)y * c->stride + x] = sample(pic, 1 + p, x, y);
    return 0;
}

/* libvmaf's upsampling: output row i reads chroma row i/2 (4:2:0 and 4:2:2),
 * column j/2 for 4:2:0 but j for 4:2:2; reads run on linearly through the
 * padded memory. Past the allocation libvmaf reads unknown memory (odd
 * heights): taken as 0 here. */
static int vmaf_chroma_at(const VmafChroma *c, int layout, int p, int i, int j)
{
    size_t col = layout == QGPU_LAYOUT_420 ? (size_t)(j / 2) : (size_t)j;
    size_t idx = (size_t)(p - 1) * c->plane + (size_t)(i / 2) * c->stride + col;
    return idx < c->size ? c->buf[idx] : 0;
}

double ciede_ref(const QgpuPicture *ref, const QgpuPicture *dist, int chroma_mode)
{
    const QgpuPicture *pics[2] = {ref, dist};
    const int w = ref->width, h = ref->height, layout = ref->layout;
    const int ssx = layout != QGPU_LAYOUT_444, ssy = layout == QGPU_LAYOUT_420;
    const int emulate = chroma_mode == CIEDE_REF_LIBVMAF && layout != QGPU_LAYOUT_444;
    VmafChroma vc[2];
    memset(vc, 0, sizeof(vc));
    if (emulate)
        for (int k = 0; k < 2; k++)
            if (vmaf_chroma_init(&vc[k], pics[k], w >> ssx, h >> ssy) < 0) {
                free(vc[0].buf);
                return NAN;
            }

    double sum = 0.0;
    for (int i = 0; i < h; i++) {
        for (int j = 0; j < w; j++) {
            float lab[2][3];
            for (int k = 0; k < 2; k++) {
                int y = sample(pics[k], 0, j, i), u, v;
                if (emulate) {
                    u = vmaf_chroma_at(&vc[k], layout, 1, i, j);
                    v = vmaf_chroma_at(&vc[k], layout, 2, i, j);
                } else {
                    u = sample(pics[k], 1, j >> ssx, i >> ssy);
                    v = sample(pics[k], 2, j >> ssx, i >> ssy);
                }
                ciede_ref_lab(y, u, v, ref->bitdepth, lab[k]);
            }
            sum += ciede_ref_de2000(lab[0], lab[1]);
        }
    }
    free(vc[0].buf);
    free(vc[1].buf);
    return 45.0 - 20.0 * log10(sum / ((double)w * h));
}
