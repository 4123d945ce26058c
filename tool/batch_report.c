/* What a batch tells: see batch_report.h. */
#include <string.h>

#include "batch_report.h"

json_object *report_job_line(const char *event, const Job *job)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "event", json_object_new_string(event));
    json_object_object_add(o, "job", json_object_new_int(job->index));
    json_object_object_add(o, "line", json_object_new_int(job->line));
    json_object_object_add(o, "ref", json_object_new_string(job->ref));
    json_object_object_add(o, "dis", json_object_new_string(job->dis));
    json_object_object_add(o, "output", json_object_new_string(job->output));
    return o;
}

void report_add_result(json_object *line, json_object *res)
{
    /* the result's "device" is the device's name: the line's "device" is
     * the selector the batch gave the job */
    static const char *const keys[] = {"frames", "seconds", "fps", "setup_seconds", "device",
                                       "device_ms", "decode_errors", "pooled"};
    static const char *const names[] = {"frames", "seconds", "fps", "setup_seconds",
                                        "device_name", "device_ms", "decode_errors", "pooled"};
    json_object *v;
    if (!res)
        return;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (json_object_object_get_ex(res, keys[i], &v))
            json_object_object_add(line, names[i], json_object_get(v));
}

unsigned long long report_frames(json_object *res)
{
    json_object *v;
    if (!res || !json_object_object_get_ex(res, "frames", &v))
        return 0;
    return (unsigned long long)json_object_get_int64(v);
}

double report_device_ms(json_object *res)
{
    json_object *v;
    if (!res || !json_object_object_get_ex(res, "device_ms", &v))
        return -1.0;
    return json_object_get_double(v);
}

const char *report_text(json_object *line)
{
    return json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN |
                                                JSON_C_TO_STRING_NOSLASHESCAPE);
}
