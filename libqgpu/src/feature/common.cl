/*
 * The prelude of every kernel program (program.c builds it before the
 * program's own file): helpers several metrics share. OpenCL C 1.2.
 *
 * Edge mirroring. Filters read past the picture's edges; libvmaf's
 * extractors mirror the index back inside, with three different rules.
 * Each rule reflects once and then clamps: one reflection covers every tap
 * of every pixel inside the picture (the metrics check their minimum
 * sizes), and the clamp keeps the reads of work-items outside the picture,
 * whose results are never used, inside the buffer.
 */

/* The edge sample is not repeated: -1 -> 1, n -> n - 2 ("reflect 101"):
 * libvmaf's integer and float VIF, motion, SpEED. */
static inline int mirror_skip_edge(int i, int n)
{
    if (i < 0)
        i = -i;
    if (i >= n)
        i = 2 * (n - 1) - i;
    return clamp(i, 0, n - 1);
}

/* The edge sample is repeated: -1 -> 0, n -> n - 1: libvmaf's SSIM and
 * MS-SSIM filters. */
static inline int mirror_repeat_edge(int i, int n)
{
    if (i < 0)
        i = -1 - i;
    if (i >= n)
        i = 2 * n - 1 - i;
    return clamp(i, 0, n - 1);
}

/* Not repeated at the start, repeated at the end: -1 -> 1, n -> n - 1:
 * libvmaf's ADM (its DWT index tables and contrast masking) and ANSNR. */
static inline int mirror_skip_start_edge(int i, int n)
{
    if (i < 0)
        i = -i;
    if (i >= n)
        i = 2 * n - 1 - i;
    return clamp(i, 0, n - 1);
}
