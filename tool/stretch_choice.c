/* The stretch a CPU session takes on the CPU path (stretch_choice.h). */
#include "stretch_choice.h"

int stretch_choose_in_time(const StretchView *st, int n, int after, unsigned pos,
                           double own_rate, double rate, double margin)
{
    /* the session's seconds per frame over the own decoder's */
    double ratio = own_rate > 0.0 && rate > 0.0 ? own_rate / rate : 1.0;
    for (int k = after + 1; k < n; k++) {
        double lead;
        if (k < 0 || !st[k].free || st[k].first <= pos)
            continue;
        lead = (double)(st[k].first - pos); /* frames the own decoder reads first */
        if ((double)st[k].frames * ratio * margin <= lead)
            return k;
    }
    return -1;
}
