/* qgpu batch's command line: see batch_options.h and doc/batch.md. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_options.h"
#include "jobs.h"
#include "options.h"

static void batch_usage(FILE *f)
{
    fprintf(f,
            "Usage: qgpu batch JOBS [--device all|SPEC[,SPEC...]] [--jobs N] [--shard I/N|slurm]\n"
            "                  [--isolate thread|process] [--log-stream FILE|-] [--force] [-q]\n"
            "                  [-- TOOL OPTIONS...]\n"
            "       qgpu batch-merge JOBS [-o FILE|-] [-q] [-- TOOL OPTIONS...]\n"
            "Scores every pair of the job list JOBS (CSV with a header ref,dis,output\n"
            "[,model][,features][,options], or JSON lines with those keys), each into its\n"
            "own log, several at a time on each device; a re-run skips the jobs already\n"
            "complete. TOOL OPTIONS after -- apply to every job (e.g. -- --feature psnr).\n\n"
            "      --device SPEC    all (every GPU, else every device), one device or a\n"
            "                       comma list (0:0,0:1); default auto\n"
            "      --jobs N         jobs at a time on each device (default 8)\n"
            "      --isolate MODE   thread: the jobs in threads of this process, sharing\n"
            "                       each device (default); process: a process per job\n"
            "                       (a job that crashes takes no other with it; slower)\n"
            "      --shard I/N      only the jobs whose position in the list, mod N, is I;\n"
            "                       slurm: I and N from the Slurm job array\n"
            "      --log-stream F   JSON lines: each job's start and end, then the batch's\n"
            "      --force          re-run jobs that are already complete\n"
            "  -o FILE              batch-merge: the combined summary (default stdout)\n"
            "  -q, --quiet          no progress lines\n\n"
            "Exit status: 0 every job done, 2 usage (options, job list), 4 a --device that\n"
            "opens no device, 6 a job failed (batch) or is not done (batch-merge), 128+N\n"
            "stopped by signal N.\n"
            "See doc/batch.md.\n");
}

int batch_options_parse(int argc, char **argv, BatchOptions *o)
{
    enum { OPT_DEVICE = 256, OPT_JOBS, OPT_SHARD, OPT_LOG_STREAM, OPT_FORCE, OPT_ISOLATE,
           OPT_HELP };
    static const struct option long_options[] = {
        {"device", required_argument, NULL, OPT_DEVICE},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"log-stream", required_argument, NULL, OPT_LOG_STREAM},
        {"force", no_argument, NULL, OPT_FORCE},
        {"isolate", required_argument, NULL, OPT_ISOLATE},
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    char err[512], *end;
    int c, n = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            n = i;
            o->tool_args = argv + i + 1;
            o->nb_tool_args = argc - i - 1;
            break;
        }
    o->per_device = 8; /* the best measured on an H200 (doc/batch.md, Throughput) */
    o->shard_count = 1;
    opterr = 0;
    optind = 0; /* a fresh scan (glibc) */
    while ((c = getopt_long(n, argv, ":o:q", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_JOBS:
            errno = 0;
            o->per_device = (int)strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || o->per_device < 1 || o->per_device > 64) {
                fprintf(stderr, "qgpu batch: --jobs %s: expected a whole number, 1 to 64\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_SHARD:
            o->shard_spec = optarg;
            if (jobs_parse_shard(optarg, &o->shard_index, &o->shard_count, err, sizeof(err))) {
                fprintf(stderr, "qgpu batch: %s\n", err);
                return EXIT_USAGE;
            }
            break;
        case OPT_LOG_STREAM: o->log_stream = optarg; break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_ISOLATE:
            if (strcmp(optarg, "thread") && strcmp(optarg, "process")) {
                fprintf(stderr, "qgpu batch: --isolate %s: expected thread or process\n",
                        optarg);
                return EXIT_USAGE;
            }
            o->isolate = !strcmp(optarg, "process");
            break;
        case 'o': o->output = optarg; break;
        case 'q': o->quiet = 1; break;
        case OPT_HELP: batch_usage(stdout); return -1;
        case ':':
            fprintf(stderr, "qgpu batch: %s needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "qgpu batch: unknown option %s (qgpu batch --help; options for "
                    "every job go after --)\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != n - 1) {
        fprintf(stderr, "qgpu batch: %s\n", optind >= n ? "no job list (qgpu batch JOBS)"
                                                         : "one job list, please");
        return EXIT_USAGE;
    }
    o->jobs_path = argv[optind];
    if (o->merge ? o->log_stream || o->force || o->shard_spec || o->device || o->isolate
                 : o->output != NULL) {
        fprintf(stderr, "qgpu batch: %s\n", o->merge ? "batch-merge takes -o, -q and the "
                "job list (with the batch's -- options)" : "-o is batch-merge's; the logs "
                "are the job list's outputs");
        return EXIT_USAGE;
    }
    return 0;
}
