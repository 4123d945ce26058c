/* Per-kernel device times (QGPU_PROFILE=1): each kernel's event is kept
 * with its slot and read when the slot's frame is collected, so profiling
 * adds no wait inside a frame. Also the context's counters (stats.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int qgpu_profile_add_event(QgpuContext *ctx, QgpuSlot *slot, const char *what, cl_event event)
{
    QgpuSlotProfile *p = &slot->profile;
    if (p->count == p->cap) {
        int cap = p->cap ? p->cap * 2 : 32;
        cl_event *events = realloc(p->events, cap * sizeof(*events));
        const char **names;
        if (!events) {
            clReleaseEvent(event);
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        }
        p->events = events;
        names = realloc(p->names, cap * sizeof(*names));
        if (!names) {
            clReleaseEvent(event);
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        }
        p->names = names;
        p->cap = cap;
    }
    p->events[p->count] = event;
    p->names[p->count] = what;
    p->count++;
    return 0;
}

static QgpuProfileEntry *entry_for(QgpuContext *ctx, const char *what)
{
    QgpuProfileEntry *list;
    for (int i = 0; i < ctx->nb_profile; i++)
        if (!strncmp(ctx->profile[i].name, what, sizeof(ctx->profile[i].name) - 1))
            return &ctx->profile[i];
    list = realloc(ctx->profile, (ctx->nb_profile + 1) * sizeof(*list));
    if (!list)
        return NULL;
    ctx->profile = list;
    memset(&list[ctx->nb_profile], 0, sizeof(*list));
    snprintf(list[ctx->nb_profile].name, sizeof(list->name), "%s", what);
    return &list[ctx->nb_profile++];
}

void qgpu_profile_collect(QgpuContext *ctx, QgpuSlot *slot)
{
    QgpuSlotProfile *p = &slot->profile;
    for (int i = 0; i < p->count; i++) {
        cl_ulong start = 0, end = 0;
        QgpuProfileEntry *e = entry_for(ctx, p->names[i]);
        cl_int st = CL_SUCCESS;
        /* a time not available yet (seen on NVIDIA with several contexts
         * busy: START failed, END set, a launch of weeks) is waited for
         * once; one still missing is not counted */
        for (int tries = 0; tries < 2; tries++) {
            st = clGetEventProfilingInfo(p->events[i], CL_PROFILING_COMMAND_START,
                                         sizeof(start), &start, NULL);
            if (st == CL_SUCCESS)
                st = clGetEventProfilingInfo(p->events[i], CL_PROFILING_COMMAND_END,
                                             sizeof(end), &end, NULL);
            if (st == CL_SUCCESS || clWaitForEvents(1, &p->events[i]) != CL_SUCCESS)
                break;
        }
        clReleaseEvent(p->events[i]);
        if (e && st == CL_SUCCESS && start && end >= start) {
            e->total_ms += (end - start) * 1e-6;
            e->count++;
        }
    }
    p->count = 0;
}

void qgpu_profile_slot_free(QgpuSlot *slot)
{
    QgpuSlotProfile *p = &slot->profile;
    for (int i = 0; i < p->count; i++)
        clReleaseEvent(p->events[i]);
    free(p->events);
    free(p->names);
    memset(p, 0, sizeof(*p));
}

void qgpu_profile_free(QgpuContext *ctx)
{
    free(ctx->profile);
    ctx->profile = NULL;
    ctx->nb_profile = 0;
}

int qgpu_get_device_time(const QgpuContext *ctx, double *ms)
{
    double total = 0.0;
    if (!ctx || !ms)
        return QGPU_ERR_INVALID_ARG;
    if (!ctx->profiling)
        return QGPU_ERR_STATE;
    for (int i = 0; i < ctx->nb_profile; i++)
        total += ctx->profile[i].total_ms;
    *ms = total;
    return 0;
}

void qgpu_stats_get(const QgpuContext *ctx, QgpuStats *stats)
{
    stats->launches = ctx->launches;
    stats->upload_bytes = ctx->upload_bytes;
    stats->profiling = ctx->profiling;
    stats->nb_profile = ctx->nb_profile;
    stats->profile = ctx->profile;
    stats->frames_from_host = ctx->frames_from_host;
    stats->frames_from_pinned = ctx->frames_from_pinned;
    stats->cl = ctx->cl;
    stats->device = ctx->device;
}
