/*
 * Host task pool (see task_pool.h): one mutex, a FIFO of tasks, one
 * condition for "a task was queued" and one for "a task finished".
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "task_pool.h"

struct QgpuTaskPool {
    pthread_t *threads;
    int nb_threads;
    pthread_mutex_t lock;
    pthread_cond_t queued;
    pthread_cond_t finished;
    QgpuTask *head, *tail;
    int quit;
};

/* Takes the oldest queued task; lock held. */
static QgpuTask *pop(QgpuTaskPool *pool)
{
    QgpuTask *task = pool->head;
    if (task) {
        pool->head = task->next;
        if (!pool->head)
            pool->tail = NULL;
        task->next = NULL;
    }
    return task;
}

/* Runs a popped task without the lock and marks it done; lock held on
 * entry and on return. */
static void run_task(QgpuTaskPool *pool, QgpuTask *task)
{
    pthread_mutex_unlock(&pool->lock);
    task->run(task->arg);
    pthread_mutex_lock(&pool->lock);
    task->done = 1;
    pthread_cond_broadcast(&pool->finished);
}

static void *worker(void *opaque)
{
    QgpuTaskPool *pool = opaque;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        QgpuTask *task = pop(pool);
        if (task) {
            run_task(pool, task);
            continue;
        }
        if (pool->quit)
            break;
        pthread_cond_wait(&pool->queued, &pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

int qgpu_task_pool_create(QgpuTaskPool **out, int nb_threads)
{
    QgpuTaskPool *pool;
    *out = NULL;
    if (nb_threads <= 0)
        return 0;
    pool = calloc(1, sizeof(*pool));
    if (!pool)
        return -1;
    pool->threads = calloc(nb_threads, sizeof(*pool->threads));
    if (!pool->threads || pthread_mutex_init(&pool->lock, NULL)) {
        free(pool->threads);
        free(pool);
        return -1;
    }
    pthread_cond_init(&pool->queued, NULL);
    pthread_cond_init(&pool->finished, NULL);
    for (int i = 0; i < nb_threads; i++) {
        if (pthread_create(&pool->threads[i], NULL, worker, pool))
            break;
        pool->nb_threads++;
    }
    *out = pool;
    if (pool->nb_threads == 0) {
        qgpu_task_pool_destroy(out);
        return -1;
    }
    return 0;
}

void qgpu_task_pool_destroy(QgpuTaskPool **ppool)
{
    QgpuTaskPool *pool = *ppool;
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->quit = 1; /* workers empty the queue first */
    pthread_cond_broadcast(&pool->queued);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->nb_threads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->queued);
    pthread_cond_destroy(&pool->finished);
    pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
    free(pool);
    *ppool = NULL;
}

void qgpu_task_pool_submit(QgpuTaskPool *pool, QgpuTask *task)
{
    qgpu_task_pool_submit_all(pool, task, 1);
}

void qgpu_task_pool_submit_all(QgpuTaskPool *pool, QgpuTask *tasks, int n)
{
    for (int i = 0; i < n; i++) {
        tasks[i].done = 0;
        tasks[i].next = NULL;
        if (!pool) {
            tasks[i].run(tasks[i].arg);
            tasks[i].done = 1;
        }
    }
    if (!pool || n <= 0)
        return;
    pthread_mutex_lock(&pool->lock);
    for (int i = 0; i < n; i++) {
        if (pool->tail)
            pool->tail->next = &tasks[i];
        else
            pool->head = &tasks[i];
        pool->tail = &tasks[i];
    }
    if (n == 1)
        pthread_cond_signal(&pool->queued);
    else
        pthread_cond_broadcast(&pool->queued);
    pthread_mutex_unlock(&pool->lock);
}

void qgpu_task_pool_wait(QgpuTaskPool *pool, QgpuTask *task)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    while (!task->done) {
        QgpuTask *other = pop(pool);
        if (other)
            run_task(pool, other);
        else
            pthread_cond_wait(&pool->finished, &pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
}

int qgpu_task_pool_threads(const QgpuTaskPool *pool)
{
    return pool ? pool->nb_threads : 0;
}

int qgpu_pool_threads_setting(const char *env_name, int min, int max)
{
    const char *env = env_name ? getenv(env_name) : NULL;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n;
    if (env && *env)
        return atoi(env);
    n = cpus > 0 ? (int)(cpus / 2 - 1) : min;
    return n < min ? min : n > max ? max : n;
}

int qgpu_task_pool_default_threads(const char *env_name, int max)
{
    return qgpu_pool_threads_setting(env_name, 1, max);
}
