/*
 * The work-groups of ssim.cl's stacked-tile kernels, for float_ssim
 * (ssim.c) and float_ms_ssim (ms_ssim.c).
 */
#ifndef QGPU_FEATURE_SSIM_TILES_H
#define QGPU_FEATURE_SSIM_TILES_H

/* Tiles a work-group stacks: ssim_tiles_raw (SSIM of the uploaded
 * samples) and ssim_tiles_float_stack (MS-SSIM's scales 1..4); ssim.cl
 * gets them as -DSSIM_STACK_RAW / -DSSIM_STACK_FLOAT (at most 8, and a
 * work-group's __local memory grows with them: 39 KB at 4). */
#define SSIM_STACK_RAW_TILES 4
#define SSIM_STACK_FLOAT_TILES 4
#define SSIM_PAIR_COLUMNS 0

static inline int ssim_stack_raw(void)
{
    return SSIM_STACK_RAW_TILES;
}

static inline int ssim_stack_float(void)
{
    return SSIM_STACK_FLOAT_TILES;
}

/* The work-groups for `tiles` tiles in rows of tiles_x, a column's tile
 * rows taken `stack` at a time (the last group of a column may take fewer). */
static inline int ssim_stack_groups(int tiles_x, int tiles, int stack)
{
    int tiles_y = tiles / tiles_x;
    return tiles_x * ((tiles_y + stack - 1) / stack);
}

#endif
