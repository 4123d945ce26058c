/*
 * Pairs whose device copies are still running (inflight.h).
 */
#include <string.h>
#include <time.h>

#include "inflight.h"

void inflight_init(Inflight *f)
{
    memset(f, 0, sizeof(*f));
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The event's state: CL_COMPLETE, a negative error, or a positive state
 * (still running). */
static cl_int state_of(cl_event event)
{
    cl_int state;
    cl_int status = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(state),
                                   &state, NULL);
    return status == CL_SUCCESS ? state : status;
}

/* Frees the oldest pair; wait: after its copies completed, else only when
 * they did. 1 freed, 0 still running, -1 freed but its copies failed. */
static int retire_oldest(Inflight *f, int wait)
{
    cl_event event = f->copied[f->head];
    cl_int state = state_of(event);
    if (state > CL_COMPLETE) {
        double t;
        if (!wait)
            return 0;
        t = seconds();
        state = clWaitForEvents(1, &event) == CL_SUCCESS ? CL_COMPLETE : state_of(event);
        f->wait_seconds += seconds() - t;
        if (state > CL_COMPLETE) /* the wait failed but the event did not say why */
            state = CL_INVALID_EVENT;
    }
    clReleaseEvent(event);
    reader_release(&f->pair[f->head]);
    f->copied[f->head] = NULL;
    f->head = (f->head + 1) % INFLIGHT_MAX;
    f->count--;
    return state == CL_COMPLETE ? 1 : -1;
}

int inflight_add(Inflight *f, FramePair *pair, cl_event copied)
{
    int ret = 0, r;
    while (f->count > 0 && (r = retire_oldest(f, f->count == INFLIGHT_MAX)) != 0)
        if (r < 0)
            ret = -1;
    f->pair[(f->head + f->count) % INFLIGHT_MAX] = *pair;
    f->copied[(f->head + f->count) % INFLIGHT_MAX] = copied;
    f->count++;
    memset(pair, 0, sizeof(*pair));
    return ret;
}

int inflight_drain(Inflight *f)
{
    int ret = 0;
    while (f->count > 0)
        if (retire_oldest(f, 1) < 0)
            ret = -1;
    return ret;
}
