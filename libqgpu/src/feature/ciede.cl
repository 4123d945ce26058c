/*
 * ciede: libvmaf's CIEDE2000 (src/feature/ciede.c): every pixel's
 * Y'CbCr (limited-range BT.709) -> R'G'B' -> linear RGB -> XYZ (D65) -> Lab
 * for reference and distorted picture, then dE00 with kL = 0.65, kC = 1,
 * kH = 4; the score is 45 - 20 log10(mean dE00).
 *
 * All in float (no fp64), with the built-in transcendentals replaced by
 * vectorisable arithmetic (see pow_2_4 below).
 *
 * One launch a frame: a work-group covers a CIEDE_TW x (CIEDE_TH * CIEDE_ROWS)
 * tile, each work-item CIEDE_ROWS pixels of one column; the group's float
 * sum goes to results[results_index + group] and the host adds the groups
 * in double.
 *
 * Chroma: `compat` = 0 reads the nearest chroma sample (x >> ssx, y >> ssy)
 * of the full (ceil-size) planes. `compat` = 1 reproduces libvmaf's reading:
 * its chroma planes are floor-size with rows padded by zeros to a multiple
 * of 32 samples, Cb then Cr in one zeroed allocation, and output pixel
 * (i, j) reads row i / 2 (4:2:0 and 4:2:2) at column j / 2 (4:2:0) or j
 * (4:2:2) of that padded memory, running on linearly past the row (and, for
 * the last row of odd-height 4:2:0, past the plane; beyond the allocation it
 * reads unknown memory, taken as 0 here).
 */
#define CIEDE_TW 64
#define CIEDE_TH 4
#define CIEDE_ROWS 4

#if QG_HBD
typedef ushort sample_t;
#else
typedef uchar sample_t;
#endif

#define PI_F 3.14159265358979323846f

/*
 * Division. Built without -cl-fp32-correctly-rounded-divide-sqrt, NVIDIA's
 * OpenCL compiles `/` to div.full.f32 and native_divide to div.approx.f32.
 * For a denominator of magnitude 2^-126 .. 2^126 (or 0, or a subnormal)
 * both are the same instructions: the numerator times MUFU.RCP of the
 * denominator, both scaled by 2^24 first for a denominator below 2^-126;
 * div.full.f32 only adds the test and the scaling by 1/4 of denominators
 * above 2^126 (ptxas of CUDA 13.0, sm_90: 8 instructions against 5). Every
 * denominator here is far below 2^126 (the largest, cp^7 + 25^7, stays
 * under 1e22 even for the most saturated inputs), so on NVIDIA (CIEDE_NATIVE_DIV) native_divide gives the very same
 * quotients with 3 instructions fewer for each of the 46 divisions of a
 * pixel pair. Elsewhere native_divide may be less accurate than `/`: other
 * devices keep `/`.
 */
#if CIEDE_NATIVE_DIV
#define DIV(a, b) native_divide((a), (b))
#else
#define DIV(a, b) ((a) / (b))
#endif

/*
 * The transcendental functions below are written out in plain arithmetic:
 * PoCL's powr, cbrt, atan2, sin/cos and exp calls made this kernel ~25x
 * slower (13 s instead of 0.5 s for a 1080p frame on this 2-core machine),
 * while these vectorise. Each is accurate to a few float ulps, like the
 * built-ins (the corpus scores moved by < 5e-7 dB when they replaced them).
 */

/* x^2.4 = a^(6/5) with a = x^2, for x in about [0.01, 4]: a^(1/5) by an
 * exponent-bits guess and three Halley steps (cubic convergence:
 * 1e-1 -> 1e-3 -> 1e-9), then a^(1/5) * a; within ~5 ulp. */
static inline float pow_2_4(float x)
{
    float a = x * x;
    float y = as_float(as_uint(a) / 5u + 0x32cccccdu); /* a > 0: as int's quotient */
    for (int i = 0; i < 3; i++) {
        float y5 = (y * y) * (y * y) * y;
        y = DIV(y * (4.0f * y5 + 6.0f * a), 6.0f * y5 + 4.0f * a);
    }
    return a * y;
}

/* cube root of t > 0: exponent-bits guess, two Halley steps, one Newton
 * step to settle the last bit. */
static inline float cbrt_pos(float t)
{
    float y = as_float(as_uint(t) / 3u + 709921077u); /* t > 0 */
    for (int i = 0; i < 2; i++) {
        float y3 = y * y * y;
        y = DIV(y * (y3 + 2.0f * t), 2.0f * y3 + t);
    }
    return y - DIV(y * y * y - t, 3.0f * y * y);
}

static inline float to_linear(float c)
{
    /* sRGB-style transfer, threshold 10/255, exponent 2.4; both sides are
     * computed so that the select vectorises */
    float p = pow_2_4(fmax((c + 0.055f) * (1.0f / 1.055f), 0.01f));
    return c > 10.0f / 255.0f ? p : c * (1.0f / 12.92f);
}

static inline float lab_f(float t)
{
    /* CIE Lab f(t): cube root above (6/29)^3, else (kappa t + 16) / 116 */
    float r = cbrt_pos(fmax(t, 1e-3f));
    return t > 216.0f / 24389.0f ? r : ((24389.0f / 27.0f) * t + 16.0f) * (1.0f / 116.0f);
}

static float3 to_lab(float y, float u, float v, float scale)
{
    float yn = (y - 16.0f * scale) * (1.0f / (219.0f * scale));
    float un = (u - 128.0f * scale) * (1.0f / (224.0f * scale));
    float vn = (v - 128.0f * scale) * (1.0f / (224.0f * scale));
    /* BT.709 */
    float r = to_linear(yn + 1.28033f * vn);
    float g = to_linear(yn - 0.21482f * un - 0.38059f * vn);
    float b = to_linear(yn + 2.12798f * un);
    /* linear sRGB -> XYZ, D65 white (0.95047, 1, 1.08883) */
    float X = r * 0.4124564390896921f + g * 0.357576077643909f + b * 0.18043748326639894f;
    float Y = r * 0.21267285140562248f + g * 0.715152155287818f + b * 0.07217499330655958f;
    float Z = r * 0.019333895582329317f + g * 0.119192025881303f + b * 0.9503040785363677f;
    float fx = lab_f(X * (1.0f / 0.95047f));
    float fy = lab_f(Y);
    float fz = lab_f(Z * (1.0f / 1.08883f));
    return (float3)(116.0f * fy - 16.0f, 500.0f * (fx - fy), 200.0f * (fy - fz));
}

/* atan2 without a library call (PoCL's is slow): octant reduction to
 * |z| <= tan(pi/8), then the atan series to z^17 (relative error < 1e-8). */
static inline float atan2_f(float y, float x)
{
    float ax = fabs(x), ay = fabs(y);
    float mx = fmax(ax, ay), mn = fmin(ax, ay);
    float z = mx > 0.0f ? DIV(mn, mx) : 0.0f;
    int big = z > 0.41421356237309503f;
    z = big ? DIV(z - 1.0f, z + 1.0f) : z;
    float u = z * z;
    float p = 1.0f / 17.0f;
    p = p * u - 1.0f / 15.0f;
    p = p * u + 1.0f / 13.0f;
    p = p * u - 1.0f / 11.0f;
    p = p * u + 1.0f / 9.0f;
    p = p * u - 1.0f / 7.0f;
    p = p * u + 1.0f / 5.0f;
    p = p * u - 1.0f / 3.0f;
    p = p * u + 1.0f;
    float r = (big ? PI_F / 4.0f : 0.0f) + z * p;
    r = ay > ax ? PI_F / 2.0f - r : r;
    r = x < 0.0f ? PI_F - r : r;
    return y < 0.0f ? -r : r;
}

/* sin(x) for |x| <= pi/2: the series to x^15 (error < 1e-10). */
static inline float sin_small(float x)
{
    float u = x * x;
    float p = -1.0f / 1307674368000.0f;
    p = p * u + 1.0f / 6227020800.0f;
    p = p * u - 1.0f / 39916800.0f;
    p = p * u + 1.0f / 362880.0f;
    p = p * u - 1.0f / 5040.0f;
    p = p * u + 1.0f / 120.0f;
    p = p * u - 1.0f / 6.0f;
    return x + x * u * p;
}

/* exp(-v) for v >= 0: 2^-(v log2 e) split into 2^-n * 2^-f, 2^-f by its
 * series to degree 8 (error < 1e-8). */
static inline float exp_neg(float v)
{
    float w = fmin(v * 1.4426950408889634f, 126.0f);
    float n = floor(w), f = (n - w) * 0.6931471805599453f; /* ln of 2^-frac */
    float p = 1.0f / 40320.0f;
    p = p * f + 1.0f / 5040.0f;
    p = p * f + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    return p * as_float((127 - (int)n) << 23);
}

/* sin and cos of x in [0, 4 pi): quadrant reduction (pi/2 in two parts),
 * then the series on |r| <= pi/4. */
static inline float sincos_f(float x, float *c)
{
    float k = rint(x * 0.6366197723675814f);
    float r = (x - k * 1.5707963705062866f) + k * 4.371139000186243e-08f;
    float u = r * r;
    float sp = -1.0f / 39916800.0f;
    sp = sp * u + 1.0f / 362880.0f;
    sp = sp * u - 1.0f / 5040.0f;
    sp = sp * u + 1.0f / 120.0f;
    sp = sp * u - 1.0f / 6.0f;
    float sr = r + r * u * sp;
    float cp = 1.0f / 479001600.0f;
    cp = cp * u - 1.0f / 3628800.0f;
    cp = cp * u + 1.0f / 40320.0f;
    cp = cp * u - 1.0f / 720.0f;
    cp = cp * u + 1.0f / 24.0f;
    cp = cp * u - 0.5f;
    float cr = 1.0f + u * cp;
    int q = (int)k & 3;
    float sn = q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr;
    *c = q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr;
    return sn;
}

static inline float hue(float b, float a)
{
    if (b == 0.0f && a == 0.0f)
        return 0.0f;
    float h = atan2_f(b, a);
    return h < 0.0f ? h + 2.0f * PI_F : h;
}

static float de2000(float3 c1, float3 c2)
{
    const float kl = 0.65f, kc = 1.0f, kh = 4.0f;
    const float p25_7 = 6103515625.0f; /* 25^7 */
    float dl = c2.x - c1.x;
    float lbar = (c1.x + c2.x) * 0.5f;
    float ch1 = sqrt(c1.y * c1.y + c1.z * c1.z);
    float ch2 = sqrt(c2.y * c2.y + c2.z * c2.z);
    float cbar = (ch1 + ch2) * 0.5f;
    float cb2 = cbar * cbar, cb7 = (cb2 * cb2) * (cb2 * cbar);
    float g = 1.0f - sqrt(DIV(cb7, cb7 + p25_7));
    float ap1 = c1.y + c1.y * 0.5f * g;
    float ap2 = c2.y + c2.y * 0.5f * g;
    float cp1 = sqrt(ap1 * ap1 + c1.z * c1.z);
    float cp2 = sqrt(ap2 * ap2 + c2.z * c2.z);
    float cpbar = (cp1 + cp2) * 0.5f;
    float dc = cp2 - cp1;
    float lm = lbar - 50.0f;
    float sl = 1.0f + DIV(0.015f * lm * lm, sqrt(20.0f + lm * lm));
    float sc = 1.0f + 0.045f * cpbar;
    float h1 = hue(c1.z, ap1), h2 = hue(c2.z, ap2);
    float dh;
    if (ch1 == 0.0f || ch2 == 0.0f)
        dh = 0.0f;
    else if (fabs(h1 - h2) <= PI_F)
        dh = h2 - h1;
    else if (h2 <= h1)
        dh = h2 - h1 + 2.0f * PI_F;
    else
        dh = h2 - h1 - 2.0f * PI_F;
    float dH = 2.0f * sqrt(cp1 * cp2) * sin_small(dh * 0.5f);
    float hbar = fabs(h1 - h2) > PI_F ? (h1 + h2 + 2.0f * PI_F) * 0.5f : (h1 + h2) * 0.5f;
    /* T from one sine/cosine pair: multiple angles by recurrence, the
     * constant phase shifts by the addition formulas */
    float hc, hs = sincos_f(hbar, &hc);
    float c2h = 2.0f * hc * hc - 1.0f, s2h = 2.0f * hs * hc;
    float c3h = hc * (4.0f * hc * hc - 3.0f), s3h = hs * (3.0f - 4.0f * hs * hs);
    float c4h = 2.0f * c2h * c2h - 1.0f, s4h = 2.0f * s2h * c2h;
    /* cos/sin of pi/6, pi/30, 7 pi/20 */
    const float c6 = 0.8660254037844386f, s6 = 0.5f;
    const float c30 = 0.9945218953682733f, s30 = 0.10452846326765347f;
    const float c720 = 0.45399049973954675f, s720 = 0.8910065241883679f;
    float t = 1.0f - 0.17f * (hc * c6 + hs * s6) + 0.24f * c2h +
              0.32f * (c3h * c30 - s3h * s30) - 0.20f * (c4h * c720 + s4h * s720);
    float sh = 1.0f + 0.015f * cpbar * t;
    float x = (hbar * (180.0f / PI_F) - 275.0f) * (1.0f / 25.0f);
    float cq2 = cpbar * cpbar, cp7 = (cq2 * cq2) * (cq2 * cpbar);
    float rt = -2.0f * sqrt(DIV(cp7, cp7 + p25_7)) * sin_small((60.0f * exp_neg(x * x)) * (PI_F / 180.0f));
    float ll = DIV(dl, kl * sl);
    float cc = DIV(dc, kc * sc);
    float hh = DIV(dH, kh * sh);
    return sqrt(ll * ll + cc * cc + hh * hh + rt * cc * hh);
}

/* Chroma sample of plane p (1 or 2) at libvmaf's virtual index vi of its
 * padded floor-size layout (see above). */
static inline float vmaf_chroma(__global const sample_t *pic, uint off1, uint off2, int cpitch,
                                int cw, int cstride, uint plane_len, uint vi)
{
    if (vi >= 2 * plane_len)
        return 0.0f;
    uint off = off1;
    if (vi >= plane_len) {
        vi -= plane_len;
        off = off2;
    }
    uint r = vi / cstride, c = vi % cstride;
    return c < (uint)cw ? (float)pic[off + (ulong)r * cpitch + c] : 0.0f;
}

__kernel __attribute__((reqd_work_group_size(CIEDE_TW, CIEDE_TH, 1)))
void ciede_tiles(__global const sample_t *ref, __global const sample_t *dist,
                 int w, int h, int pitch0, uint off0, int cpitch, uint off1, uint off2,
                 int ssx, int ssy, int compat, int cw, int ch, float scale,
                 __global float *results, uint results_index)
{
    __local float sums[CIEDE_TW * CIEDE_TH];
    int x = get_global_id(0);
    int lid = get_local_id(1) * CIEDE_TW + get_local_id(0);
    int y0 = (get_group_id(1) * CIEDE_TH + get_local_id(1)) * CIEDE_ROWS;
    int cstride = (cw + 31) & ~31;
    uint plane_len = (uint)cstride * ch;
    float acc = 0.0f;

    if (x < w) {
        for (int y = y0; y < min(y0 + CIEDE_ROWS, h); y++) {
            ulong li = off0 + (ulong)y * pitch0 + x;
            float ru, rv, du, dv;
            if (compat) {
                /* libvmaf halves the column only for 4:2:0 (ssy) */
                uint vi = (uint)(y >> 1) * cstride + (uint)(x >> ssy);
                ru = vmaf_chroma(ref, off1, off2, cpitch, cw, cstride, plane_len, vi);
                rv = vmaf_chroma(ref, off1, off2, cpitch, cw, cstride, plane_len, vi + plane_len);
                du = vmaf_chroma(dist, off1, off2, cpitch, cw, cstride, plane_len, vi);
                dv = vmaf_chroma(dist, off1, off2, cpitch, cw, cstride, plane_len, vi + plane_len);
            } else {
                ulong ci = (ulong)(y >> ssy) * cpitch + (x >> ssx);
                ru = ref[off1 + ci];
                rv = ref[off2 + ci];
                du = dist[off1 + ci];
                dv = dist[off2 + ci];
            }
            float3 c1 = to_lab(ref[li], ru, rv, scale);
            float3 c2 = to_lab(dist[li], du, dv, scale);
            acc += de2000(c1, c2);
        }
    }
    sums[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = CIEDE_TW * CIEDE_TH / 2; step > 0; step >>= 1) {
        if (lid < step)
            sums[lid] += sums[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        results[results_index + get_group_id(1) * get_num_groups(0) + get_group_id(0)] = sums[0];
}
