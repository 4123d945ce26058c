/* A batch job's command line: see job_args.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_args.h"
#include "options.h"

static const char *format_flag(const char *output)
{
    const char *dot = strrchr(output, '.');
    if (dot && !strcmp(dot, ".json"))
        return "--json";
    if (dot && !strcmp(dot, ".csv"))
        return "--csv";
    if (dot && (!strcmp(dot, ".sub") || !strcmp(dot, ".srt")))
        return "--sub";
    return "--xml";
}

static void add_arg(json_object *a, const char *s)
{
    json_object_array_add(a, json_object_new_string(s));
}

/* What decides a job's scores besides its inputs: the log format, models,
 * features, the job's options and the batch's. */
json_object *job_args(const Job *j, char **tool_args, int nb_tool_args)
{
    json_object *a = json_object_new_array();
    add_arg(a, format_flag(j->output));
    for (int i = 0; i < j->nb_models; i++) {
        add_arg(a, "-m");
        add_arg(a, j->models[i]);
    }
    for (int i = 0; i < j->nb_features; i++) {
        add_arg(a, "--feature");
        add_arg(a, j->features[i]);
    }
    for (int i = 0; i < j->nb_options; i++)
        add_arg(a, j->options[i]);
    for (int i = 0; i < nb_tool_args; i++)
        add_arg(a, tool_args[i]);
    return a;
}

/* The child's command line (pointers into job and args; free the array
 * only). */
char **job_argv(const char *exe, const Job *j, json_object *args, const char *device,
                         const char *summary)
{
    size_t n = json_object_array_length(args), k = 0;
    char **argv = calloc(n + 16, sizeof(*argv));
    if (!argv)
        return NULL;
    argv[k++] = (char *)exe;
    argv[k++] = "-q";
    argv[k++] = "-r";
    argv[k++] = j->ref;
    argv[k++] = "-d";
    argv[k++] = j->dis;
    argv[k++] = "-o";
    argv[k++] = j->output;
    if (device) {
        argv[k++] = "--device";
        argv[k++] = (char *)device;
    }
    if (summary) {
        argv[k++] = "--job-summary";
        argv[k++] = (char *)summary;
    }
    for (size_t i = 0; i < n; i++)
        argv[k++] = (char *)json_object_get_string(json_object_array_get_idx(args, i));
    argv[k] = NULL;
    return argv;
}

/* The job's command line through the tool's own parser, before anything
 * runs: a bad option is a usage error of the list, not n failed jobs; an
 * option the batch sets itself (-r -d -o --device --log-stream) is refused. */
int job_args_check(const char *exe, const char *list_path, const Job *j, json_object *args)
{
    char **argv = job_argv(exe, j, args, "auto", "summary");
    const char *clash = NULL;
    Options opts;
    int argc = 0, ret;
    if (!argv)
        return EXIT_INTERNAL;
    while (argv[argc])
        argc++;
    ret = options_parse(argc, argv, &opts);
    if (!ret) {
        if (opts.reference != j->ref || opts.distorted != j->dis)
            clash = "-r/-d";
        else if (opts.output != j->output)
            clash = "-o";
        else if (strcmp(opts.device, "auto"))
            clash = "--device";
        else if (opts.log_stream)
            clash = "--log-stream";
        else if (strcmp(opts.job_summary, "summary"))
            clash = "--job-summary";
    }
    free(argv);
    if (ret || clash) {
        if (clash)
            fprintf(stderr, "qgpu batch: %s:%d: %s is set by the batch (ref, dis, output; "
                    "--device and --log-stream of qgpu batch), not in a job's options\n",
                    list_path, j->line, clash);
        else
            fprintf(stderr, "qgpu batch: %s:%d: the job's options are not valid (above)\n",
                    list_path, j->line);
        return EXIT_USAGE;
    }
    return 0;
}
