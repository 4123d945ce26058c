/*
 * CSF factors of libvmaf's integer ADM (libvmaf 3.2.0): Watson 1997
 * quantisation steps (integer_adm.h / integer_adm.c dwt_quant_step), the
 * Barten CSF of HDR-VDP-2 and the blended Barten/Watson tables
 * (barten_csf_tools.h). Host-side only; the float/double types of every
 * step follow libvmaf so the factors have the same bits.
 */
#ifndef QGPU_ADM_CSF_TABLES_H
#define QGPU_ADM_CSF_TABLES_H

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Watson et al. 1997, Y channel parameters and basis amplitudes (Table IV/V),
 * as stored (float) in integer_adm.h. */
static const float WATSON_A = 0.495f, WATSON_K = 0.466f, WATSON_F0 = 0.401f;
static const float WATSON_G[4] = {1.501f, 1.0f, 0.534f, 1.0f};
static const float WATSON_AMP[4][4] = {{0.62171f, 0.67234f, 0.72709f, 0.67234f},
                                       {0.34537f, 0.41317f, 0.49428f, 0.41317f},
                                       {0.18004f, 0.22727f, 0.28688f, 0.22727f},
                                       {0.091401f, 0.11792f, 0.15214f, 0.11792f}};

static float watson_quant_step(int lambda, int theta, double nvd, int rdh)
{
    float r = nvd * rdh * M_PI / 180.0;
    float temp = log10(pow(2.0, lambda + 1) * WATSON_F0 * WATSON_G[theta] / r);
    float e = WATSON_K * temp * temp; /* float product, as libvmaf 3.2.0 */
    float q = 2.0 * WATSON_A * pow(10.0, e) / WATSON_AMP[lambda][theta];
    return q;
}

/* Barten CSF as simplified in HDR-VDP-2 (barten_csf_tools.h). */
static const float BARTEN_ANCHORS[6] = {0.002f, 0.02f, 0.2f, 2.0f, 20.0f, 150.0f};
static const float BARTEN_PARAMS[6][5] = {{0.0160737f, 0.991265f, 3.74038f, 0.50722f, 4.46044f},
                                          {0.383873f, 0.800889f, 3.54104f, 0.682505f, 4.94958f},
                                          {0.929301f, 0.476505f, 4.37453f, 0.750315f, 5.28678f},
                                          {1.29776f, 0.405782f, 4.40602f, 0.935314f, 5.61425f},
                                          {1.49222f, 0.334278f, 3.79542f, 1.07327f, 6.4635f},
                                          {1.46213f, 0.394533f, 2.7755f, 1.16577f, 7.45665f}};
static const float BARTEN_SA[4] = {30.162f, 4.0627f, 1.6596f, 0.2712f};
static const float BARTEN_MTF_A[4] = {0.424838596301290f, 0.572435103936480f,
                                      0.000167576239164937f, 0.00255872352306433f};
static const float BARTEN_MTF_B[4] = {0.028f, 0.37f, 37.0f, 360.0f};

static float lerp_f(float lp, float lv, float rp, float rv, float sp)
{
    return lv + ((rv - lv) / (rp - lp)) * (sp - lp);
}

static float barten_rod_cone(float lum)
{
    return BARTEN_SA[0] * pow(pow(BARTEN_SA[1] / lum, BARTEN_SA[2]) + 1, -BARTEN_SA[3]);
}

static float barten_mtf(float f)
{
    float m = 0.0f;
    for (int i = 0; i < 4; i++)
        m = m + BARTEN_MTF_A[i] * exp(-BARTEN_MTF_B[i] * f);
    return m;
}

static float barten_csf(int lambda, double nvd, int rdh, double lum, double scale)
{
    float r = nvd * rdh * M_PI / 180.0;
    float f = r / pow(2, lambda + 1);
    double cl = lum > BARTEN_ANCHORS[5] ? BARTEN_ANCHORS[5]
                : lum < BARTEN_ANCHORS[0] ? BARTEN_ANCHORS[0] : lum;
    int li = 0, ri = 0;
    for (int i = 0; i < 5; i++) {
        if (cl >= BARTEN_ANCHORS[i] && cl <= BARTEN_ANCHORS[i + 1]) {
            li = i;
            ri = i + 1;
            break;
        }
    }
    float lp = log10(BARTEN_ANCHORS[li]), rp = log10(BARTEN_ANCHORS[ri]), sp = log10(cl);
    float p0 = lerp_f(lp, BARTEN_PARAMS[li][1], rp, BARTEN_PARAMS[ri][1], sp);
    float p1 = lerp_f(lp, BARTEN_PARAMS[li][2], rp, BARTEN_PARAMS[ri][2], sp);
    float p2 = lerp_f(lp, BARTEN_PARAMS[li][3], rp, BARTEN_PARAMS[ri][3], sp);
    float p3 = lerp_f(lp, BARTEN_PARAMS[li][4], rp, BARTEN_PARAMS[ri][4], sp);
    float a = 1.0f + pow(p0 * f, p1);
    float b = 1.0f / pow(1 - exp(-pow(f / 7, 2)), p2);
    float csf = p3 / pow(a * b, 0.5);
    return csf * barten_mtf(f) * barten_rod_cone(lum) * scale;
}

/* Barten/Watson blend tables (barten_csf_tools.h), [mae][table][theta][scale]. */
static const float BLEND[2][8][2][4] = {
    {
        {{0.01183f, 0.025026f, 0.04295f, 0.058621f}, {0.004302f, 0.011778f, 0.023918f, 0.035901f}},
        {{0.004212f, 0.014809f, 0.029642f, 0.047464f}, {0.000984f, 0.005852f, 0.0146f, 0.027574f}},
        {{0.00226f, 0.01183f, 0.025026f, 0.04295f}, {0.000479f, 0.004302f, 0.011778f, 0.023918f}},
        {{0.000092f, 0.004212f, 0.014809f, 0.029642f}, {0.000050f, 0.000984f, 0.005852f, 0.0146f}},
        {{0.018715f, 0.035637f, 0.052798f, 0.061509f}, {0.007999f, 0.018396f, 0.031851f, 0.037718f}},
        {{0.010144f, 0.022561f, 0.040309f, 0.05672f}, {0.003463f, 0.010282f, 0.021839f, 0.034641f}},
        {{0.027961f, 0.045875f, 0.060275f, 0.056234f}, {0.013572f, 0.026277f, 0.036959f, 0.034511f}},
        {{0.016781f, 0.032822f, 0.05032f, 0.061594f}, {0.00691f, 0.016545f, 0.029917f, 0.037777f}},
    },
    {
        {{0.011249f, 0.022606f, 0.035930f, 0.045673f}, {0.004097f, 0.010921f, 0.021430f, 0.031313f}},
        {{0.004052f, 0.013939f, 0.026298f, 0.038833f}, {0.000927f, 0.005544f, 0.013415f, 0.024515f}},
        {{0.002166f, 0.011249f, 0.022606f, 0.035930f}, {0.000447f, 0.004097f, 0.010921f, 0.021430f}},
        {{0.000077f, 0.004052f, 0.013939f, 0.026298f}, {0.000045f, 0.000927f, 0.005544f, 0.013415f}},
        {{0.017329f, 0.030870f, 0.042134f, 0.047410f}, {0.007509f, 0.016707f, 0.028072f, 0.032722f}},
        {{0.009689f, 0.020577f, 0.034162f, 0.044523f}, {0.003302f, 0.009579f, 0.019661f, 0.030318f}},
        {{0.024969f, 0.037825f, 0.046676f, 0.043974f}, {0.012511f, 0.023424f, 0.032139f, 0.030166f}},
        {{0.015665f, 0.028766f, 0.040612f, 0.047483f}, {0.006514f, 0.015107f, 0.026476f, 0.032776f}},
    }};

static float blend_csf(int mae, int scale, int theta, double nvd, int rdh)
{
    int t;
    if (rdh == 1080 && nvd == 3.0)
        t = 0;
    else if (rdh == 1080 && nvd == 5.0)
        t = 1;
    else if (rdh == 2160 && nvd == 1.5)
        t = 0; /* same pixels per degree as 1080 @ 3H */
    else if (rdh == 2160 && nvd == 3.0)
        t = 2;
    else if (rdh == 2160 && nvd == 5.0)
        t = 3;
    else if (rdh == 720 && nvd == 3.0)
        t = 4;
    else if (rdh == 720 && nvd == 5.0)
        t = 5;
    else if (rdh == 480 && nvd == 3.0)
        t = 6;
    else if (rdh == 480 && nvd == 5.0)
        t = 7;
    else
        return -22.0f; /* libvmaf returns -EINVAL as the factor */
    return BLEND[mae][t][theta][scale];
}

/* factor[0] for h and v, factor[1] for d. */
static void adm_csf_factors(int csf_mode, double nvd, int rdh, double csf_scale,
                            double csf_diag_scale, int scale, float f[2])
{
    switch (csf_mode) {
    case 1:
        f[0] = barten_csf(scale, nvd, rdh, 100.0, csf_scale);
        f[1] = barten_csf(scale, nvd, rdh, 100.0, csf_diag_scale);
        break;
    case 2:
    case 3:
        f[0] = blend_csf(csf_mode == 3, scale, 0, nvd, rdh);
        f[1] = blend_csf(csf_mode == 3, scale, 1, nvd, rdh);
        break;
    default:
        f[0] = 1.0f / watson_quant_step(scale, 1, nvd, rdh);
        f[1] = 1.0f / watson_quant_step(scale, 2, nvd, rdh);
        break;
    }
}

#endif /* QGPU_ADM_CSF_TABLES_H */
