/*
 * Parallel row copies into the pinned staging buffers.
 *
 * At 1080p and above one memcpy thread (about 10-13 GB/s) is slower than the
 * pinned host-to-device copy (about 54 GB/s on an H100/H200), so qgpu_submit
 * would be bound by its own memcpy. A few persistent threads (a task pool,
 * task_pool.c, given one task per helper for every job) split the rows of
 * every plane between them and the calling thread.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "copy_pool.h"
#include "task_pool.h"

#define ROWS_PER_CHUNK 16

struct QgpuCopyPool {
    QgpuTaskPool *threads;  /* NULL: copies in the calling thread */
    int nb_helpers;
    QgpuTask *helpers;      /* one per helper thread, queued for every job */
    /* the current job */
    const QgpuCopyTask *tasks;
    int nb_tasks;
    int chunks_per_task[QGPU_COPY_MAX_TASKS];
    int total_chunks;
    atomic_int next_chunk;
};

/* Copies chunks until none is left. */
static void work(QgpuCopyPool *pool)
{
    for (;;) {
        int chunk = atomic_fetch_add(&pool->next_chunk, 1), t = 0;
        if (chunk >= pool->total_chunks)
            return;
        while (chunk >= pool->chunks_per_task[t]) {
            chunk -= pool->chunks_per_task[t];
            t++;
        }
        const QgpuCopyTask *task = &pool->tasks[t];
        int first = chunk * ROWS_PER_CHUNK;
        int last = first + ROWS_PER_CHUNK < task->rows ? first + ROWS_PER_CHUNK : task->rows;
        if (task->src_stride == (ptrdiff_t)task->row_bytes) {
            memcpy(task->dst + task->row_bytes * first, task->src + task->src_stride * first,
                   task->row_bytes * (last - first));
            continue;
        }
        for (int y = first; y < last; y++)
            memcpy(task->dst + task->row_bytes * y, task->src + task->src_stride * y,
                   task->row_bytes);
    }
}

static void work_task(void *opaque)
{
    work(opaque);
}

int qgpu_copy_pool_create(QgpuCopyPool **out, int nb_threads)
{
    QgpuCopyPool *pool;
    *out = NULL;
    if (nb_threads <= 0)
        return 0; /* no pool: copies run in the calling thread */
    pool = calloc(1, sizeof(*pool));
    if (pool)
        pool->helpers = calloc(nb_threads, sizeof(*pool->helpers));
    if (!pool || !pool->helpers) {
        free(pool);
        return -1;
    }
    /* no thread could start: the pool copies in the calling thread */
    if (qgpu_task_pool_create(&pool->threads, nb_threads) == 0)
        pool->nb_helpers = qgpu_task_pool_threads(pool->threads);
    for (int i = 0; i < pool->nb_helpers; i++) {
        pool->helpers[i].run = work_task;
        pool->helpers[i].arg = pool;
    }
    *out = pool;
    return 0;
}

void qgpu_copy_pool_destroy(QgpuCopyPool **ppool)
{
    QgpuCopyPool *pool = *ppool;
    if (!pool)
        return;
    qgpu_task_pool_destroy(&pool->threads);
    free(pool->helpers);
    free(pool);
    *ppool = NULL;
}

void qgpu_copy_pool_run(QgpuCopyPool *pool, const QgpuCopyTask *tasks, int nb_tasks)
{
    QgpuCopyPool inline_pool;
    if (nb_tasks > QGPU_COPY_MAX_TASKS)
        nb_tasks = QGPU_COPY_MAX_TASKS;
    if (!pool || pool->nb_helpers == 0) {
        /* no helper: same chunking, all in this thread */
        memset(&inline_pool, 0, sizeof(inline_pool));
        pool = &inline_pool;
    }
    pool->tasks = tasks;
    pool->nb_tasks = nb_tasks;
    pool->total_chunks = 0;
    for (int t = 0; t < nb_tasks; t++) {
        pool->chunks_per_task[t] = (tasks[t].rows + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK;
        pool->total_chunks += pool->chunks_per_task[t];
    }
    atomic_store(&pool->next_chunk, 0);
    /* every helper takes chunks from the same counter, the caller too */
    qgpu_task_pool_submit_all(pool->threads, pool->helpers, pool->nb_helpers);
    work(pool);
    for (int i = 0; i < pool->nb_helpers; i++)
        qgpu_task_pool_wait(pool->threads, &pool->helpers[i]);
}

int qgpu_copy_pool_default_threads(void)
{
    /* helpers besides the caller: half the cores, at most 6. Measured on a
     * 16-core H200 machine, psnr 1080p 8-bit, depth 4 (doc/performance.md):
     * 3 helpers 5108 fps, 5: 5639, 7: 5829. */
    return qgpu_pool_threads_setting("QGPU_COPY_THREADS", 0, 6);
}
