/*
 * A small pool of threads for host work that may finish later than the
 * call that starts it (speed_chroma's per-frame statistics): tasks go into
 * a FIFO, helper threads run them, and the owner waits for one task when
 * it needs its result (helping with queued tasks meanwhile). The staging
 * copies (copy_pool.c) are built on it too: one task per helper thread.
 */
#ifndef QGPU_TASK_POOL_H
#define QGPU_TASK_POOL_H

typedef struct QgpuTask {
    void (*run)(void *arg);
    void *arg;
    /* owned by the pool */
    int done;
    struct QgpuTask *next;
} QgpuTask;

typedef struct QgpuTaskPool QgpuTaskPool;

/* nb_threads helper threads (<= 0: *pool = NULL, tasks run at submit).
 * Returns 0 or -1 (out of memory, no thread could start). */
int qgpu_task_pool_create(QgpuTaskPool **pool, int nb_threads);
/* Runs what is still queued, then stops and joins the threads. */
void qgpu_task_pool_destroy(QgpuTaskPool **pool);
/* Queues task (run and arg set by the caller; the task must stay valid
 * until waited for). pool NULL: runs it now. */
void qgpu_task_pool_submit(QgpuTaskPool *pool, QgpuTask *task);
/* The same for tasks[0 .. n-1], queued at once (one lock, all helpers
 * woken). */
void qgpu_task_pool_submit_all(QgpuTaskPool *pool, QgpuTask *tasks, int n);
/* Returns once task has run; the calling thread runs queued tasks while
 * it waits. */
void qgpu_task_pool_wait(QgpuTaskPool *pool, QgpuTask *task);
/* Helper threads running (0 for NULL). */
int qgpu_task_pool_threads(const QgpuTaskPool *pool);
/* $env_name if set (a count, 0 allowed), else half the cores minus one,
 * between min and max. */
int qgpu_pool_threads_setting(const char *env_name, int min, int max);
/* qgpu_pool_threads_setting(env_name, 1, max) */
int qgpu_task_pool_default_threads(const char *env_name, int max);

#endif
