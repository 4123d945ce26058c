/* Per-kernel device times (QGPU_PROFILE=1): each kernel's event is kept
 * with its slot and read when the slot's frame is collected, so profiling
 * adds no wait inside a frame. Also the context's counters (stats.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int qgpu_profile_add_event(QgpuContext *ctx, const char *what, cl_event event)
{
    int s = ctx->current_slot;
    if (ctx->prof_count[s] == ctx->prof_cap[s]) {
        int cap = ctx->prof_cap[s] ? ctx->prof_cap[s] * 2 : 32;
        cl_event *events = realloc(ctx->prof_events[s], cap * sizeof(*events));
        const char **names;
        if (!events) {
            clReleaseEvent(event);
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        }
        ctx->prof_events[s] = events;
        names = realloc(ctx->prof_names[s], cap * sizeof(*names));
        if (!names) {
            clReleaseEvent(event);
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        }
        ctx->prof_names[s] = names;
        ctx->prof_cap[s] = cap;
    }
    ctx->prof_events[s][ctx->prof_count[s]] = event;
    ctx->prof_names[s][ctx->prof_count[s]] = what;
    ctx->prof_count[s]++;
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

void qgpu_profile_collect(QgpuContext *ctx, int slot)
{
    for (int i = 0; i < ctx->prof_count[slot]; i++) {
        cl_ulong start = 0, end = 0;
        QgpuProfileEntry *e = entry_for(ctx, ctx->prof_names[slot][i]);
        clGetEventProfilingInfo(ctx->prof_events[slot][i], CL_PROFILING_COMMAND_START,
                                sizeof(start), &start, NULL);
        clGetEventProfilingInfo(ctx->prof_events[slot][i], CL_PROFILING_COMMAND_END,
                                sizeof(end), &end, NULL);
        clReleaseEvent(ctx->prof_events[slot][i]);
        if (e && end >= start) {
            e->total_ms += (end - start) * 1e-6;
            e->count++;
        }
    }
    ctx->prof_count[slot] = 0;
}

void qgpu_profile_free(QgpuContext *ctx)
{
    for (int s = 0; s < QGPU_MAX_SLOTS; s++) {
        for (int i = 0; i < ctx->prof_count[s]; i++)
            clReleaseEvent(ctx->prof_events[s][i]);
        free(ctx->prof_events[s]);
        free(ctx->prof_names[s]);
    }
    free(ctx->profile);
}

void qgpu_stats_get(const QgpuContext *ctx, QgpuStats *stats)
{
    stats->launches = ctx->launches;
    stats->upload_bytes = ctx->upload_bytes;
    stats->profiling = ctx->profiling;
    stats->nb_profile = ctx->nb_profile;
    stats->profile = ctx->profile;
    stats->cl = ctx->cl;
    stats->device = ctx->device;
}
