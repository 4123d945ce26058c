/* Deliberately independent reference: written from libvmaf's arithmetic for
 * tests/test_psnr_hvs.c, sharing no code with libqgpu/src/feature/psnr_hvs.c / psnr_hvs.cl.
 * Where the two implement the same step, `duplicates` pairs them: that repeat is the point (two
 * implementations held against each other), not something to fold. */
/* Plain-C reference of libvmaf's psnr_hvs (libvmaf 3.2.0,
 * src/feature/third_party/xiph/psnr_hvs.c: Xiph/Daala PSNR-HVS-M).
 * Written for clarity; it keeps libvmaf's float arithmetic (single
 * precision statistics and thresholds) so that it can be compared with the
 * golden values, and it can accumulate the final sum either as libvmaf does
 * (one float, in scan order) or in double. */
#include "psnr_hvs_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Contrast sensitivity tables of libvmaf's psnr_hvs.c (Daala's
 * "normalized inverse quantization matrix for 8x8 DCT at the point of
 * transparency"): luma, and the 4:2:0 Cb / Cr tables, which libvmaf uses for
 * chroma whatever the subsampling. Indexed [vertical freq][horizontal freq]. */
static const float csf_tables[3][8][8] = {
    { /* Y */
        {1.6193873005f, 2.2901594831f, 2.08509755623f, 1.48366094411f, 1.00227514334f, 0.678296995242f, 0.466224900598f, 0.3265091542f},
        {2.2901594831f, 1.94321815382f, 2.04793073064f, 1.68731108984f, 1.2305666963f, 0.868920337363f, 0.61280991668f, 0.436405793551f},
        {2.08509755623f, 2.04793073064f, 1.34329019223f, 1.09205635862f, 0.875748795257f, 0.670882927016f, 0.501731932449f, 0.372504254596f},
        {1.48366094411f, 1.68731108984f, 1.09205635862f, 0.772819797575f, 0.605636379554f, 0.48309405692f, 0.380429446972f, 0.295774038565f},
        {1.00227514334f, 1.2305666963f, 0.875748795257f, 0.605636379554f, 0.448996256676f, 0.352889268808f, 0.283006984131f, 0.226951348204f},
        {0.678296995242f, 0.868920337363f, 0.670882927016f, 0.48309405692f, 0.352889268808f, 0.27032073436f, 0.215017739696f, 0.17408067321f},
        {0.466224900598f, 0.61280991668f, 0.501731932449f, 0.380429446972f, 0.283006984131f, 0.215017739696f, 0.168869545842f, 0.136153931001f},
        {0.3265091542f, 0.436405793551f, 0.372504254596f, 0.295774038565f, 0.226951348204f, 0.17408067321f, 0.136153931001f, 0.109083846276f},
    },
    { /* Cb (4:2:0 table) */
        {1.91113096927f, 2.46074210438f, 1.18284184739f, 1.14982565193f, 1.05017074788f, 0.898018824055f, 0.74725392039f, 0.615105596242f},
        {2.46074210438f, 1.58529308355f, 1.21363250036f, 1.38190029285f, 1.33100189972f, 1.17428548929f, 0.996404342439f, 0.830890433625f},
        {1.18284184739f, 1.21363250036f, 0.978712413627f, 1.02624506078f, 1.03145147362f, 0.960060382087f, 0.849823426169f, 0.731221236837f},
        {1.14982565193f, 1.38190029285f, 1.02624506078f, 0.861317501629f, 0.801821139099f, 0.751437590932f, 0.685398513368f, 0.608694761374f},
        {1.05017074788f, 1.33100189972f, 1.03145147362f, 0.801821139099f, 0.676555426187f, 0.605503172737f, 0.55002013668f, 0.495804539034f},
        {0.898018824055f, 1.17428548929f, 0.960060382087f, 0.751437590932f, 0.605503172737f, 0.514674450957f, 0.454353482512f, 0.407050308965f},
        {0.74725392039f, 0.996404342439f, 0.849823426169f, 0.685398513368f, 0.55002013668f, 0.454353482512f, 0.389234902883f, 0.342353999733f},
        {0.615105596242f, 0.830890433625f, 0.731221236837f, 0.608694761374f, 0.495804539034f, 0.407050308965f, 0.342353999733f, 0.295530605237f},
    },
    { /* Cr (4:2:0 table) */
        {2.03871978502f, 2.62502345193f, 1.26180942886f, 1.11019789803f, 1.01397751469f, 0.867069376285f, 0.721500455585f, 0.593906509971f},
        {2.62502345193f, 1.69112867013f, 1.17180569821f, 1.3342742857f, 1.28513006198f, 1.13381474809f, 0.962064122248f, 0.802254508198f},
        {1.26180942886f, 1.17180569821f, 0.944981930573f, 0.990876405848f, 0.995903384143f, 0.926972725286f, 0.820534991409f, 0.706020324706f},
        {1.11019789803f, 1.3342742857f, 0.990876405848f, 0.831632933426f, 0.77418706195f, 0.725539939514f, 0.661776842059f, 0.587716619023f},
        {1.01397751469f, 1.28513006198f, 0.995903384143f, 0.77418706195f, 0.653238524286f, 0.584635025748f, 0.531064164893f, 0.478717061273f},
        {0.867069376285f, 1.13381474809f, 0.926972725286f, 0.725539939514f, 0.584635025748f, 0.496936637883f, 0.438694579826f, 0.393021669543f},
        {0.721500455585f, 0.962064122248f, 0.820534991409f, 0.661776842059f, 0.531064164893f, 0.438694579826f, 0.375820256136f, 0.330555063063f},
        {0.593906509971f, 0.802254508198f, 0.706020324706f, 0.587716619023f, 0.478717061273f, 0.393021669543f, 0.330555063063f, 0.285345396658f},
    },
};

/* Halving that rounds toward zero (Daala's OD_DCT_RSHIFT(a, 1)). */
static int half_toward_zero(int a)
{
    return (a + (a < 0)) >> 1;
}

/* Multiply by k / 2^s with rounding: the lifting steps of the Daala DCT. */
static int mul_round(int a, int k, int s)
{
    return (a * k + (1 << (s - 1))) >> s;
}

/* One 8-point Daala forward DCT (od_bin_fdct8), a sequence of lifting steps
 * whose constants approximate sqrt(2) - 1, sqrt(1/2), and the sines/tangents
 * of pi/16, 3pi/16, 3pi/8 (see the comments in Daala's dct.c). */
static void fdct8(const int x[8], int y[8])
{
    int t0 = x[0], t4 = x[1], t2 = x[2], t6 = x[3];
    int t7 = x[4], t3 = x[5], t5 = x[6], t1 = x[7];
    int t1h, t4h, t6h;

    t1 = t0 - t1;
    t1h = half_toward_zero(t1);
    t0 -= t1h;
    t4 += t5;
    t4h = half_toward_zero(t4);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= half_toward_zero(t3);
    t6 += t7;
    t6h = half_toward_zero(t6);
    t7 = t6h - t7;

    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;

    t0 -= mul_round(t4, 13573, 15);
    t4 += mul_round(t0, 11585, 14);
    t0 -= mul_round(t4, 13573, 15);

    t6 -= mul_round(t2, 21895, 15);
    t2 += mul_round(t6, 15137, 14);
    t6 -= mul_round(t2, 21895, 15);

    t3 += mul_round(t5, 19195, 15);
    t5 += mul_round(t3, 11585, 14);
    t3 -= mul_round(t5, 7489, 13);
    t7 = half_toward_zero(t5) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;

    t7 += mul_round(t1, 3227, 15);
    t1 -= mul_round(t7, 6393, 15);
    t7 += mul_round(t1, 3227, 15);

    t5 += mul_round(t3, 2485, 13);
    t3 -= mul_round(t5, 18205, 15);
    t5 += mul_round(t3, 2485, 13);

    y[0] = t0; y[1] = t1; y[2] = t2; y[3] = t3;
    y[4] = t4; y[5] = t5; y[6] = t6; y[7] = t7;
}

void psnr_hvs_ref_fdct8x8(const int in[64], int out[64])
{
    int tmp[64], col[8], res[8];
    /* columns first: tmp[c][u] = vertical frequency u of column c */
    for (int c = 0; c < 8; c++) {
        for (int r = 0; r < 8; r++)
            col[r] = in[r * 8 + c];
        fdct8(col, res);
        for (int u = 0; u < 8; u++)
            tmp[c * 8 + u] = res[u];
    }
    /* then rows: out[u][v] */
    for (int u = 0; u < 8; u++) {
        for (int c = 0; c < 8; c++)
            col[c] = tmp[c * 8 + u];
        fdct8(col, res);
        for (int v = 0; v < 8; v++)
            out[u * 8 + v] = res[v];
    }
}

static int sample_at(const void *data, ptrdiff_t stride, int bitdepth, int x, int y)
{
    const uint8_t *row = (const uint8_t *)data + y * stride;
    /* byte reads: rows of an odd byte stride are not 2-byte aligned (UBSan) */
    return bitdepth > 8 ? row[2 * x] | row[2 * x + 1] << 8 : row[x];
}

/* Masking energy of a block: the variance-normalised AC energy weighted by
 * the masking table (libvmaf's s_mask / d_mask), in float as libvmaf. */
static float block_masking(const int pix[64], const float mask[8][8])
{
    float gmean = 0.0f, gvar = 0.0f, means[4] = {0}, vars[4] = {0};
    int coef[64];
    float energy = 0.0f;

    /* quadrant index: 0 top-left, 1 bottom-left, 2 top-right, 3 bottom-right */
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int q = (i >= 4) + 2 * (j >= 4);
            gmean += (float)pix[i * 8 + j];
            means[q] += (float)pix[i * 8 + j];
        }
    gmean /= 64.0f;
    for (int q = 0; q < 4; q++)
        means[q] /= 16.0f;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int q = (i >= 4) + 2 * (j >= 4);
            float dg = (float)pix[i * 8 + j] - gmean;
            float dq = (float)pix[i * 8 + j] - means[q];
            gvar += dg * dg;
            vars[q] += dq * dq;
        }
    /* unbiased variances: * (1/63) * 64 and * (1/15) * 16, as libvmaf
     * writes them (the constant is rounded to float first) */
    gvar *= 1.0f / 63.0f * 64.0f;
    for (int q = 0; q < 4; q++)
        vars[q] *= 1.0f / 15.0f * 16.0f;
    if (gvar > 0.0f)
        gvar = (vars[0] + vars[1] + vars[2] + vars[3]) / gvar;

    psnr_hvs_ref_fdct8x8(pix, coef);
    for (int i = 0; i < 8; i++)
        for (int j = (i == 0); j < 8; j++)
            energy += (float)(coef[i * 8 + j] * coef[i * 8 + j]) * mask[i][j];
    /* sqrt in double then scaled by 1/32, stored as float */
    return (float)(sqrt((double)(energy * gvar)) / 32.0);
}

double psnr_hvs_ref_plane(const void *ref, ptrdiff_t ref_stride, const void *dist,
                          ptrdiff_t dist_stride, int w, int h, int bitdepth, int plane,
                          int sum_mode)
{
    const float(*csf)[8] = csf_tables[plane];
    float mask[8][8];
    float sum_f = 0.0f;
    double sum_d = 0.0;
    int count = 0;

    /* masking table: (csf * 0.3885746225901003)^2, computed in double */
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            double m = (double)csf[i][j] * 0.3885746225901003;
            mask[i][j] = (float)(m * m);
        }

    /* 8x8 blocks on a 7-pixel step, while the block fits */
    for (int by = 0; by + 7 < h; by += 7) {
        for (int bx = 0; bx + 7 < w; bx += 7) {
            int ps[64], pd[64], cs[64], cd[64];
            for (int i = 0; i < 8; i++)
                for (int j = 0; j < 8; j++) {
                    ps[i * 8 + j] = sample_at(ref, ref_stride, bitdepth, bx + j, by + i);
                    pd[i * 8 + j] = sample_at(dist, dist_stride, bitdepth, bx + j, by + i);
                }
            float ms = block_masking(ps, mask);
            float md = block_masking(pd, mask);
            float m = md > ms ? md : ms;
            psnr_hvs_ref_fdct8x8(ps, cs);
            psnr_hvs_ref_fdct8x8(pd, cd);
            for (int i = 0; i < 8; i++)
                for (int j = 0; j < 8; j++) {
                    float err = (float)abs(cs[i * 8 + j] - cd[i * 8 + j]);
                    if (i != 0 || j != 0) {
                        /* errors below the masking threshold are invisible */
                        float thr = m / mask[i][j];
                        err = err < thr ? 0.0f : err - thr;
                    }
                    float term = (err * csf[i][j]) * (err * csf[i][j]);
                    sum_f += term;
                    sum_d += term;
                    count++;
                }
        }
    }

    float r = sum_mode == PSNR_HVS_REF_SUM_FLOAT_SEQ ? sum_f : (float)sum_d;
    int maxval = (1 << bitdepth) - 1;
    r /= (float)count;
    r /= (float)(maxval * maxval);
    return r;
}

static double to_db(double mse)
{
    return -10.0 * log10(mse);
}

void psnr_hvs_ref(const QgpuPicture *ref, const QgpuPicture *dist, int sum_mode,
                  double out[4])
{
    double mse[3];
    for (int p = 0; p < 3; p++) {
        int w = ref->width, h = ref->height;
        if (p > 0) {
            if (ref->layout != QGPU_LAYOUT_444)
                w /= 2;
            if (ref->layout == QGPU_LAYOUT_420)
                h /= 2;
        }
        mse[p] = psnr_hvs_ref_plane(ref->data[p], ref->stride[p], dist->data[p],
                                    dist->stride[p], w, h, ref->bitdepth, p, sum_mode);
        out[p] = to_db(mse[p]);
    }
    out[3] = to_db(0.8 * mse[0] + 0.1 * (mse[1] + mse[2]));
}
