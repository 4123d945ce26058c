/*
 * The work-groups of ssim.cl's two-tile kernels, for float_ssim (ssim.c)
 * and float_ms_ssim (ms_ssim.c).
 */
#ifndef QGPU_FEATURE_SSIM_TILES_H
#define QGPU_FEATURE_SSIM_TILES_H

/* ssim_tiles_raw and ssim_tiles_float2 take two tile rows of a column per
 * work-group (the last alone when the rows are odd): the work-groups for
 * `tiles` tiles in rows of tiles_x. */
static inline int ssim_two_row_groups(int tiles_x, int tiles)
{
    int tiles_y = tiles / tiles_x;
    return tiles_x * ((tiles_y + 1) / 2);
}

#endif
