/*
 * psnr_hvs: libvmaf's PSNR-HVS-M (third_party/xiph/psnr_hvs.c, from Daala).
 *
 * Three launches per frame, each covering the three planes:
 *
 * psnr_hvs_blocks: two work-items per 8x8 block, one per picture (blocks
 *   on a 7-sample step; each plane's numbered from a multiple of 32). They
 *   compute the block's 64 masked, CSF-weighted squared DCT errors with
 *   exactly libvmaf's single-precision operations and order (contraction
 *   off, correctly rounded divide/sqrt requested at build time), and store
 *   them in scan order (through a __local tile, so that a group's stores
 *   are consecutive), and the sums of its two chunks of HVS_CHUNK terms.
 *
 * Then the terms are added up. libvmaf adds them one by one into a single
 * float, and the rounding of that running sum moves the score by up to
 * 1.4e-3 dB (1080p) from an exact sum, so the sum is reproduced bit for
 * bit, in parallel where it can be: while the running sum s stays inside
 * one binade [2^e, 2^(e+1)), fl(s + t) = s + round(t / u) * u with
 * u = ulp(s), so a run of terms adds exactly as an integer count of ulps.
 * A term cannot be added that way when it is >= 2^e, when it is a rounding
 * tie (whose direction depends on the running sum's parity), or where the
 * sum leaves its binade.
 *
 * psnr_hvs_ulps: for every chunk, first the binades the running sum will
 *   be in when the walk reaches it: the sum of the plane's chunk sums
 *   before it in any order, whose binade is the sequential sum's or a
 *   neighbour (only these binades' choice depends on it: a wrong guess
 *   slows the walk down, it never changes its result); then for each of the
 *   HVS_WIN binades below the chunk's top, the chunk's ulp count and
 *   whether it has a term that cannot be added in bulk (all SMs; this is
 *   where the per-term work is: each term is loaded once and counted at the
 *   HVS_WIN binades).
 * psnr_hvs_walk: one work-group per plane walks the chunks: a round adds
 *   the chunks it can at the running sum's binade (a scan of their counts);
 *   the first chunk it cannot is walked in rounds of 4 terms per work-item
 *   (loaded once into __local memory), and the 4 terms where a round stops
 *   (the sum changes binade there, or a tie) are added one by one. About
 *   70 rounds for 1080p luma (2.7 M terms), about 40 of them loading
 *   nothing from global memory. The result is identical to the sequential
 *   loop.
 */
#pragma OPENCL FP_CONTRACT OFF

#define HVS_WG 64          /* work-items per group, block kernel */
#define HVS_BPG (HVS_WG / 2) /* blocks per group, block kernel (2 work-items each) */
#define WALK_WG 256        /* work-items per group: ulps and walk kernels */
#define HVS_CHUNK 1024     /* terms per chunk of the ulp tables */
#define CHUNK_BLOCKS (HVS_CHUNK / 64) /* blocks per chunk */
#define HVS_WIN 4          /* binades per chunk in the ulp tables: the chunk's
                              prefix binade e, e + 1 above it, e - 1 and e - 2 */
#define HVS_PART (WALK_WG / HVS_WIN) /* work-items adding one binade's counts */
#if WALK_WG != 256
#error "psnr_hvs_walk's scan takes 8 steps (an even count: its sums end in pre's first half)"
#endif
#if HVS_BPG != 2 * CHUNK_BLOCKS
#error "psnr_hvs_blocks' groups make two chunks each"
#endif
#if HVS_WIN != 4
#error "psnr_hvs_walk reads a chunk's table rows as int4 and 2 long2"
#endif
#define TERM_STEP (HVS_CHUNK / WALK_WG) /* terms per work-item in a term round */
#define TILE_ROW 65        /* elements per row of the block kernel's __local
                              tiles: a block's 64 values and one of padding */

#if QG_HBD
typedef ushort sample_t;
#else
typedef uchar sample_t;
#endif

/* Halving toward zero: Daala's OD_DCT_RSHIFT(a, 1). */
static inline int half_tz(int a)
{
    return (a + (a < 0)) >> 1;
}

/* a * k / 2^s, rounded: the lifting steps of the Daala DCT */
static inline int mulr(int a, int k, int s)
{
    return (a * k + (1 << (s - 1))) >> s;
}

/* Daala's 8-point forward DCT (od_bin_fdct8) on v[o], v[o+st], ... */
static void fdct8(int *v, int o, int st)
{
    int t0 = v[o], t4 = v[o + st], t2 = v[o + 2 * st], t6 = v[o + 3 * st];
    int t7 = v[o + 4 * st], t3 = v[o + 5 * st], t5 = v[o + 6 * st], t1 = v[o + 7 * st];
    int t1h, t4h, t6h;

    t1 = t0 - t1;
    t1h = half_tz(t1);
    t0 -= t1h;
    t4 += t5;
    t4h = half_tz(t4);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= half_tz(t3);
    t6 += t7;
    t6h = half_tz(t6);
    t7 = t6h - t7;
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    /* 13573/32768 ~ sqrt(2) - 1, 11585/16384 ~ sqrt(1/2) */
    t0 -= mulr(t4, 13573, 15);
    t4 += mulr(t0, 11585, 14);
    t0 -= mulr(t4, 13573, 15);
    /* 21895/32768 ~ (1 - cos(3pi/8)) / sin(3pi/8), 15137/16384 ~ sin(3pi/8) */
    t6 -= mulr(t2, 21895, 15);
    t2 += mulr(t6, 15137, 14);
    t6 -= mulr(t2, 21895, 15);
    /* 19195/32768 ~ 2 - sqrt(2), 7489/8192 ~ sqrt(2) - 1/2 */
    t3 += mulr(t5, 19195, 15);
    t5 += mulr(t3, 11585, 14);
    t3 -= mulr(t5, 7489, 13);
    t7 = half_tz(t5) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    /* 3227/32768 ~ (1 - cos(pi/16)) / sin(pi/16), 6393/32768 ~ sin(pi/16) */
    t7 += mulr(t1, 3227, 15);
    t1 -= mulr(t7, 6393, 15);
    t7 += mulr(t1, 3227, 15);
    /* 2485/8192 ~ (1 - cos(3pi/16)) / sin(3pi/16), 18205/32768 ~ sin(3pi/16) */
    t5 += mulr(t3, 2485, 13);
    t3 -= mulr(t5, 18205, 15);
    t5 += mulr(t3, 2485, 13);

    v[o] = t0;
    v[o + st] = t1;
    v[o + 2 * st] = t2;
    v[o + 3 * st] = t3;
    v[o + 4 * st] = t4;
    v[o + 5 * st] = t5;
    v[o + 6 * st] = t6;
    v[o + 7 * st] = t7;
}

/* 2-D DCT in place: columns, then rows (od_bin_fdct8x8's order). The
 * column pass leaves column c's coefficients in column c, so the row pass
 * transforms rows: same values as Daala's transposed intermediate. */
static void fdct8x8(int *v)
{
    for (int c = 0; c < 8; c++)
        fdct8(v, c, 8);
    for (int r = 0; r < 8; r++)
        fdct8(v, r * 8, 1);
}

/* Variance ratio of a block (sum of quadrant variances / block variance),
 * in libvmaf's float order. */
static float var_ratio(const int *v)
{
    float gmean = 0.0f, gvar = 0.0f;
    float means[4] = {0.0f, 0.0f, 0.0f, 0.0f}, vars[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int q = (i >> 2) + ((j >> 2) << 1);
            gmean += (float)v[i * 8 + j];
            means[q] += (float)v[i * 8 + j];
        }
    gmean /= 64.0f;
    for (int q = 0; q < 4; q++)
        means[q] /= 16.0f;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int q = (i >> 2) + ((j >> 2) << 1);
            float dg = (float)v[i * 8 + j] - gmean;
            float dq = (float)v[i * 8 + j] - means[q];
            gvar += dg * dg;
            vars[q] += dq * dq;
        }
    gvar *= (1.0f / 63.0f) * 64.0f;
    for (int q = 0; q < 4; q++)
        vars[q] *= (1.0f / 15.0f) * 16.0f;
    if (gvar > 0.0f)
        gvar = (vars[0] + vars[1] + vars[2] + vars[3]) / gvar;
    return gvar;
}

/* Masking strength of a block from its DCT coefficients. */
static float masking(const int *coef, float ratio, __constant const float *mask)
{
    float energy = 0.0f;
    for (int k = 1; k < 64; k++)
        energy += (float)(coef[k] * coef[k]) * mask[k];
    return sqrt(energy * ratio) * 0.03125f;
}

/*
 * One picture's part of a block: its samples, variance ratio, DCT and
 * masking strength. The coefficients go to coef[0..63], the masking
 * strength to *m.
 */
static void block_coefs(__global const sample_t *pic, ulong off, int pitch, int x0, int y0,
                        __constant const float *mask, __local int *coef, __local float *m)
{
    int v[64];
    for (int i = 0; i < 8; i++) {
        ulong row = off + (ulong)(y0 + i) * pitch + x0;
        for (int j = 0; j < 8; j++)
            v[i * 8 + j] = pic[row + j];
    }
    float ratio = var_ratio(v);
    fdct8x8(v);
    *m = masking(v, ratio, mask);
    for (int k = 0; k < 64; k++)
        coef[k] = v[k];
}

/*
 * Two work-items per block: work-item 2b + p of the group does block b's
 * picture p (0 reference, 1 distorted) up to its DCT and masking strength,
 * then terms p * 32 .. p * 32 + 31 of the block from both pictures'
 * coefficients (__local). Every term is computed by the same operations as
 * in one work-item: only which work-item does them changes.
 *
 * tables: [plane][0] = csf (64), [plane][1] = mask (64), 128 floats a plane.
 * Plane p's nb_p blocks are numbered from start_p, a multiple of HVS_BPG
 * (the numbers after its last block are left unused), so that a group's
 * blocks are one plane's and make two chunks; its block b sits at block
 * column b % nbx_p, row b / nbx_p. terms[64 * block + k] gets the block's
 * terms (through a __local tile, so that the group's stores are
 * consecutive); chunk_sums[chunk] the sum of the chunk's terms, in any
 * order (only its size matters: psnr_hvs_ulps).
 */
__kernel __attribute__((reqd_work_group_size(HVS_WG, 1, 1)))
void psnr_hvs_blocks(__global const sample_t *ref, __global const sample_t *dist,
                     int pitch0, uint off0, int nbx0,
                     int pitch1, uint off1, int nbx1,
                     int pitch2, uint off2, int nbx2,
                     int start1, int start2, int nb0, int nb1, int nb2,
                     __constant const float *tables, __global float *terms,
                     __global float *chunk_sums)
{
    /* rows of 65: the work-items of a warp, at the same k, hit different
     * banks */
    __local int coef[HVS_BPG * 2 * TILE_ROW];
    __local float mstr[HVS_BPG * 2];
    __local float half_sum[HVS_BPG * 2];
    __local float tile[HVS_BPG * TILE_ROW];
    int lid = get_local_id(0);
    int lb = lid / 2, p = lid % 2;
    int group_first = get_group_id(0) * HVS_BPG;

    int plane, pitch, nbx, first, nb;
    uint off;
    if (group_first < start1) {
        plane = 0; pitch = pitch0; off = off0; nbx = nbx0; first = 0; nb = nb0;
    } else if (group_first < start2) {
        plane = 1; pitch = pitch1; off = off1; nbx = nbx1; first = start1; nb = nb1;
    } else {
        plane = 2; pitch = pitch2; off = off2; nbx = nbx2; first = start2; nb = nb2;
    }
    int local_blk = group_first - first + lb;
    int nblk = clamp(nb - (group_first - first), 0, HVS_BPG);
    __constant const float *csf = tables + plane * 128;
    __constant const float *mask = csf + 64;
    __local int *cref = coef + (2 * lb) * TILE_ROW, *cdist = coef + (2 * lb + 1) * TILE_ROW;

    if (lb < nblk) {
        int x0 = (local_blk % nbx) * 7, y0 = (local_blk / nbx) * 7;
        block_coefs(p ? dist : ref, off, pitch, x0, y0, mask, coef + lid * TILE_ROW,
                    &mstr[lid]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float bsum = 0.0f;
    if (lb < nblk) {
        float ms = mstr[2 * lb], md = mstr[2 * lb + 1];
        float m = md > ms ? md : ms;
        for (int k = p * 32; k < p * 32 + 32; k++) {
            float err = (float)abs(cref[k] - cdist[k]);
            if (k != 0) {
                /* errors under the masking threshold are not seen */
                float thr = m / mask[k];
                err = err < thr ? 0.0f : err - thr;
            }
            float e = err * csf[k];
            tile[lb * TILE_ROW + k] = e * e;
            bsum += e * e;
        }
    }
    half_sum[lid] = bsum;
    barrier(CLK_LOCAL_MEM_FENCE);

    /* work-item h < 2 adds chunk h's 32 half-block sums (zeros past the
     * plane's last block) */
    if (lid < 2) {
        float cs = 0.0f;
        for (int i = 0; i < 2 * CHUNK_BLOCKS; i++)
            cs += half_sum[lid * 2 * CHUNK_BLOCKS + i];
        chunk_sums[get_group_id(0) * 2 + lid] = cs;
    }
    __global float *out = terms + (ulong)group_first * 64;
    for (int i = lid; i < nblk * 64; i += HVS_WG)
        out[i] = tile[(i / 64) * TILE_ROW + i % 64];
}

/* Ulps of the binade of exponent field e that a term of exponent field et
 * (1 for a subnormal) and mantissa mt (with its implicit bit) rounds to,
 * or -1 when the term cannot be added in bulk (rounding tie, or t >= 2^e). */
static inline long ulps_at(int et, uint mt, int e)
{
    int dsh = e - et;            /* t / u = mt * 2^-dsh */
    if (dsh <= 0)
        return -1;
    if (dsh > 25)
        return 0;                /* below a quarter ulp */
    uint q = mt >> dsh, r = mt & ((1u << dsh) - 1u), hu = 1u << (dsh - 1);
    if (r == hu)
        return -1;
    return (long)q + (r > hu);
}

/* ulps_at() for the ulps kernel's HVS_WIN binades e = top - j of a term,
 * in 32-bit arithmetic without branches. The binades where it gives -1
 * are found once per term, as a mask (bit j): dsh = lim - j <= 0 (lim =
 * top - et), and the one tie: the low dsh bits of mt are 100..0 where
 * dsh - 1 is mt's count of trailing zeros; ebad holds the binades with
 * e < 1. The count at binade j: with d = dsh clamped to [1, 31] and hu =
 * 2^(d-1), (mt + hu) >> d is q + (r > hu) wherever r != hu, and 0 for
 * dsh > 25 (mt < 2^24). Integers: the same counts and flags as ulps_at()
 * (checked on the host for every mantissa, dsh from -3 to 45 and tops
 * from 1 to 254). */
static inline uint ulps_bad_mask(int lim, uint mt, uint ebad)
{
    const uint all = (1u << HVS_WIN) - 1u;
    uint bad = ebad | (lim <= 0 ? all : lim < HVS_WIN ? (all << lim) & all : 0u);
    int jt = lim - 1 - (31 - (int)clz(mt & (0u - mt)));
    return bad | (jt >= 0 && jt < HVS_WIN ? 1u << jt : 0u);
}

static inline uint ulps_count(int lim, uint mt, int j)
{
    int d = clamp(lim - j, 1, 31);
    return (mt + (1u << (d - 1))) >> d;
}

/* A term's exponent field and mantissa as ulps_at() takes them. */
static inline void term_parts(uint tb, int *et, uint *mt)
{
    *et = (tb >> 23) & 0xff;
    *mt = tb & 0x7fffff;
    if (*et == 0)
        *et = 1;                 /* subnormal term */
    else
        *mt |= 0x800000;
}

/* ulps_at() of term bits tb */
static inline long ulps_of(uint tb, int e)
{
    int et;
    uint mt;
    term_parts(tb, &et, &mt);
    return ulps_at(et, mt, e);
}

/* Terms of plane `plane`: the first one's index and their count. */
static inline void plane_range(int plane, int start1, int start2, int nb0, int nb1, int nb2,
                               ulong *first, ulong *n)
{
    int b0 = plane == 0 ? 0 : plane == 1 ? start1 : start2;
    int nb = plane == 0 ? nb0 : plane == 1 ? nb1 : nb2;
    *first = (ulong)b0 * 64;
    *n = (ulong)nb * 64;
}

/*
 * One work-group per chunk (plane p's chunks are numbered from
 * cstart_p = start_p / CHUNK_BLOCKS; the numbers past its last chunk do
 * nothing). First the chunk's top: ctop[chunk] = the exponent field of the
 * sum of the plane's terms before the chunk (its chunk sums added in any
 * order) + 1, the top of the chunk's HVS_WIN binades. The walk reaches the
 * chunk with the sequential sum of the same terms, which differs from that
 * sum by its rounding only: its binade is the same or a neighbour (only
 * these binades' choice depends on it: a wrong guess slows the walk down,
 * it never changes its result).
 *
 * ulps[chunk * HVS_WIN + j] = the chunk's ulp count at binade e = ctop - j;
 * flags[...] bit 0: a term cannot be added in bulk at e (or e < 1), bit 1:
 * the chunk has a non-zero term.
 *
 * Work-item i loads terms i, i + 256, i + 512, i + 768 of the chunk (so
 * the group's loads are consecutive) and counts each at the HVS_WIN
 * binades; the counts are then added per binade through __local memory.
 * They are integers and the flags bits: the order in which they are put
 * together cannot change the chunk's totals.
 */
#define LU_ROW (WALK_WG + 16) /* row of lu: binades j and j + 1 in other banks */

__kernel __attribute__((reqd_work_group_size(WALK_WG, 1, 1)))
void psnr_hvs_ulps(__global const float *terms, int start1, int start2, int nb0, int nb1,
                   int nb2, __global const float *chunk_sums, __global int *ctop,
                   __global long *ulps, __global int *flags)
{
    __local uint lu[HVS_WIN * LU_ROW];
    __local int lf[WALK_WG];
    __local long lsum[WALK_WG];
    __local int lor[WALK_WG];
    __local float lpre[WALK_WG];
    int chunk = get_group_id(0), lid = get_local_id(0);
    int cstart1 = start1 / CHUNK_BLOCKS, cstart2 = start2 / CHUNK_BLOCKS;
    int plane = chunk < cstart1 ? 0 : chunk < cstart2 ? 1 : 2;
    int cfirst = plane == 0 ? 0 : plane == 1 ? cstart1 : cstart2;
    ulong first, n;
    plane_range(plane, start1, start2, nb0, nb1, nb2, &first, &n);
    __global const float *t = terms + first;
    ulong lo = (ulong)(chunk - cfirst) * HVS_CHUNK;
    if (lo >= n)
        return;                  /* past the plane's last chunk: the whole group */
    ulong hi = min(lo + HVS_CHUNK, n);

    /* the chunk's terms first: their loads do not wait for the top */
    uint tbs[TERM_STEP];
    for (int k = 0; k < TERM_STEP; k++) {
        ulong i = lo + (ulong)(k * WALK_WG + lid);
        tbs[k] = i < hi ? as_uint(t[i]) : 0u;
    }

    /* the sum of the plane's chunk sums before this chunk, in any order */
    float ps = 0.0f;
    for (int c = cfirst + lid; c < chunk; c += WALK_WG)
        ps += chunk_sums[c];
    lpre[lid] = ps;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = WALK_WG / 2; off > 0; off >>= 1) {
        if (lid < off)
            lpre[lid] += lpre[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int top = min((int)((as_uint(lpre[0]) >> 23) & 0xff) + 1, 254);
    if (lid == 0)
        ctop[chunk] = top;

    /* at most 4 terms of < 2^24 ulps each: a uint holds a work-item's count */
    uint u[HVS_WIN];
    for (int j = 0; j < HVS_WIN; j++)
        u[j] = 0;
    int bad = 0, any = 0;   /* bad: bit j for binade top - j */
    uint ebad = 0;          /* the binades e = top - j < 1 */
    for (int j = 0; j < HVS_WIN; j++)
        ebad |= (uint)(top - j < 1) << j;
    for (int k = 0; k < TERM_STEP; k++) {
        uint tb = tbs[k];
        if (tb == 0)
            continue;
        int et;
        uint mt;
        term_parts(tb, &et, &mt);
        any = 1;
        uint tbad = ulps_bad_mask(top - et, mt, ebad);
        bad |= tbad;
        int lim = top - et;
        if (lim >= HVS_WIN) {
            /* every binade's d = lim - j >= 1: the count (mt + 2^(d-1)) >> d
             * is ((mt >> (d - 1)) + 1) >> 1, and mt >> (d - 1) halves from
             * one binade to the next (0 once d > 24: mt < 2^24) */
            uint q = mt >> min(lim - HVS_WIN, 31);
#pragma unroll
            for (int j = HVS_WIN - 1; j >= 0; j--) {
                u[j] += (tbad >> j) & 1u ? 0u : (q + 1u) >> 1;
                q >>= 1;
            }
        } else {
#pragma unroll
            for (int j = 0; j < HVS_WIN; j++)
                u[j] += (tbad >> j) & 1u ? 0u : ulps_count(lim, mt, j);
        }
    }
#pragma unroll
    for (int j = 0; j < HVS_WIN; j++)
        lu[j * LU_ROW + lid] = u[j];
    lf[lid] = bad | (any << HVS_WIN);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* work-items j * HVS_PART .. (j + 1) * HVS_PART - 1 add binade j's
     * counts, WALK_WG / HVS_PART each */
    int j = lid / HVS_PART, part = lid % HVS_PART;
    int e = top - j;
    long su = 0;
    int fo = 0;
    for (int i = 0; i < WALK_WG / HVS_PART; i++) {
        su += lu[j * LU_ROW + part + HVS_PART * i];
        fo |= lf[part + HVS_PART * i];
    }
    lsum[lid] = su;
    lor[lid] = ((fo >> j) & 1) | (e < 1) | (((fo >> HVS_WIN) & 1) << 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = HVS_PART / 2; off > 0; off >>= 1) {
        if (part < off) {
            lsum[lid] += lsum[lid + off];
            lor[lid] |= lor[lid + off];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (part == 0) {
        ulps[(ulong)chunk * HVS_WIN + j] = lsum[lid];
        flags[(ulong)chunk * HVS_WIN + j] = lor[lid];
    }
}

/* The running sum s after the first k pieces of a scan, their ulps (pre,
 * the scan's inclusive prefix sums) added in bulk: they keep s in its
 * binade. */
static inline float bulk_add(float s, int k, __local const uint *pre)
{
    uint sb = as_uint(s);
    int e = (sb >> 23) & 0xff;
    if (k == 0 || e == 0)
        return s;
    uint m = (sb & 0x7fffff) | 0x800000;
    return as_float((sb & 0xff800000u) | ((m + pre[k - 1]) & 0x7fffffu));
}

/* A piece's ulp count as the walk's scan adds it: at most 2^23. A larger
 * count stops the round at that piece or before it whatever its size
 * (the mantissa m >= 2^23 plus the prefix sum >= 2^23 reaches 2^24), and
 * the counts before the stop are all below 2^23, so the clamp changes no
 * stop and no bulk sum; 256 clamped counts add up to at most 2^31. */
#define SCAN_MAX 0x800000u

/*
 * One work-group per plane, in rounds. In a chunk round, work-item i looks
 * at chunk c0 + i and takes its ulp count at the running sum's binade (bad
 * when that binade is outside the chunk's table, the chunk has a term that
 * cannot be added in bulk, or, for a zero sum, any non-zero term). The
 * chunk where a chunk round stops is added by term rounds: work-item i
 * holds TERM_STEP of its terms (loaded once into __local memory, by the
 * chunk's first term round) and counts their ulps at the running sum's
 * binade. In every round an inclusive scan of the counts tells how many
 * leading pieces can be added in bulk (no bad piece, mantissa below 2^24
 * at the end); the work-item of the piece where it stops (the last one if
 * none does) adds them, and in a term round the TERM_STEP terms where the
 * scan stopped (the sum changes binade there, or a tie)
 * one by one; the next term round counts the pieces after them at the new
 * binade, until the chunk is added; then the walk is back to chunk rounds.
 */
__kernel __attribute__((reqd_work_group_size(WALK_WG, 1, 1)))
void psnr_hvs_walk(__global const float *terms, int start1, int start2, int nb0, int nb1,
                   int nb2, __global const float *chunk_sums, __global const int *ctop,
                   __global const long *ulps, __global const int *flags,
                   __global float *results, uint results_index)
{
    __local uint pre[2 * WALK_WG]; /* the scan's two buffers, used in turn */
    __local uint tl[WALK_WG * TERM_STEP];
    __local float run;
    __local ulong next;
    __local int term_start;   /* chunk round: 0; term round: first piece + 1 */
    int plane = get_group_id(0), lid = get_local_id(0);
    int cfirst = plane == 0 ? 0 : plane == 1 ? start1 / CHUNK_BLOCKS : start2 / CHUNK_BLOCKS;
    ulong first, n;
    plane_range(plane, start1, start2, nb0, nb1, nb2, &first, &n);
    ulong nch = (n + HVS_CHUNK - 1) / HVS_CHUNK;
    __global const float *t = terms + first;

    if (lid == 0) {
        run = 0.0f;
        next = 0;
        term_start = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) {
        ulong pos = next;
        if (pos >= n)
            break;
        int ts = term_start;
        float s = run;
        uint sb = as_uint(s);
        int e = (sb >> 23) & 0xff;   /* 0 for zero and subnormal sums */
        uint m = e ? (sb & 0x7fffff) | 0x800000 : 0u;
        long u = 0;
        int bad = 0;
        if (!ts) {
            ulong c = pos / HVS_CHUNK + (ulong)lid;
            if (c < nch) {
                /* the chunk's top and its whole rows, loaded together */
                ulong at = (ulong)cfirst + c;
                int j = ctop[at] - e;
                int4 fl = ((__global const int4 *)flags)[at];
                long2 ul0 = ((__global const long2 *)ulps)[2 * at];
                long2 ul1 = ((__global const long2 *)ulps)[2 * at + 1];
                if (e == 0) {
                    bad = (fl.s0 >> 1) & 1;       /* adding zeros keeps the sum */
                } else if (j < 0 || j >= HVS_WIN) {
                    bad = 1;
                } else {
                    bad = (j == 0 ? fl.s0 : j == 1 ? fl.s1 : j == 2 ? fl.s2 : fl.s3) & 1;
                    u = j == 0 ? ul0.s0 : j == 1 ? ul0.s1 : j == 2 ? ul1.s0 : ul1.s1;
                }
            }
        } else {
            if (ts == 1) {
                /* the chunk's first term round: its terms into tl (zeros
                 * past the plane's end leave the sum as it is) */
                ulong lo = pos + (ulong)lid * TERM_STEP;
                for (int q = 0; q < TERM_STEP; q++)
                    tl[lid * TERM_STEP + q] = lo + q < n ? as_uint(t[lo + q]) : 0u;
            }
            if (lid >= ts - 1) {
                for (int q = 0; q < TERM_STEP; q++) {
                    uint tb = tl[lid * TERM_STEP + q];
                    if (tb != 0) {
                        long v = e ? ulps_of(tb, e) : -1;
                        bad |= v < 0;
                        u += v < 0 ? 0 : v;
                    }
                }
            }
        }
        /* A piece that cannot be added in bulk counts SCAN_MAX: with the
         * mantissa taken as >= 2^23 (2^23 for a zero or subnormal sum,
         * whose other pieces count 0), the prefix sum then reaches 2^24
         * there, so the stop condition mc + pre[i] >= 2^24 holds from the
         * round's first stop on and nowhere before it. */
        uint mc = e ? m : SCAN_MAX;
        /* inclusive scan, one barrier a step: step i reads one half of
         * pre and writes the other; after the 8 steps (an even count) the
         * sums are in the first half, pre[0 .. WALK_WG - 1] */
        pre[lid] = bad || u >= SCAN_MAX ? SCAN_MAX : (uint)u;
        barrier(CLK_LOCAL_MEM_FENCE);
        int src = 0;
        for (int off = 1; off < WALK_WG; off <<= 1) {
            uint v = pre[src + lid];
            if (lid >= off)
                v += pre[src + lid - off];
            src ^= WALK_WG;
            pre[src + lid] = v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        int stop = mc + pre[lid] >= 0x1000000u;
        int stop_before = lid > 0 && mc + pre[lid - 1] >= 0x1000000u;
        /* the round's first stop k is added by its work-item (by the last
         * one, k = WALK_WG, where no piece stops) */
        if ((stop && !stop_before) || (lid == WALK_WG - 1 && !stop)) {
            int k = stop ? lid : WALK_WG;
            s = bulk_add(s, k, pre);
            ulong nxt;
            if (!ts) {
                /* a chunk that stops the round is added by term rounds */
                nxt = pos + (ulong)k * HVS_CHUNK;
                term_start = k < WALK_WG;
            } else {
                if (k < WALK_WG) {
                    for (int q = 0; q < TERM_STEP; q++)
                        s = s + as_float(tl[k * TERM_STEP + q]);
                }
                /* pieces left after the stop: the same chunk again */
                term_start = k + 1 < WALK_WG ? k + 2 : 0;
                nxt = term_start ? pos : pos + HVS_CHUNK;
            }
            run = s;
            next = min(nxt, n);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        results[results_index + plane] = run;
}
