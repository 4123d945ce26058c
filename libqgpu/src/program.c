/*
 * Kernel programs: built from the sources embedded at build time, cached
 * as device binaries under $XDG_CACHE_HOME/qgpu (or ~/.cache/qgpu), keyed
 * by a hash of device + driver + build options + source. QGPU_NO_CACHE=1
 * disables the cache. A cache entry that fails any check is rebuilt and
 * rewritten; the cache can never make a run fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CACHE_MAGIC "QGPUBIN1"

/* FNV-1a, 64 bit: a content hash, not a security measure. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t hash_string(uint64_t h, const char *s)
{
    return hash_bytes(h, s, strlen(s) + 1);
}

static int cache_dir(char *out, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    const char *no_cache = getenv("QGPU_NO_CACHE");
    if (no_cache && *no_cache && strcmp(no_cache, "0"))
        return -1;
    int n;
    if (xdg && *xdg)
        n = snprintf(out, len, "%s/qgpu", xdg);
    else if (home && *home)
        n = snprintf(out, len, "%s/.cache/qgpu", home);
    else
        return -1;
    /* a path too long for us (or the system) means no cache, never a cut
     * one that names another directory */
    return n < 0 || (size_t)n + 64 >= len ? -1 : 0;
}

/* mkdir -p for the cache directory (its parent may not exist either). */
static int make_dirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) && errno != EEXIST)
        return -1;
    return 0;
}

/* Reads a cached binary; returns a malloc'ed buffer or NULL. */
static unsigned char *cache_load(const char *path, uint64_t key, size_t *size)
{
    /* non-blocking open and a regular-file check: a FIFO or device put
     * where an entry should be must not block or feed the build */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    FILE *f;
    char magic[8];
    uint64_t header[3];
    unsigned char *data = NULL;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "rb"))) {
        close(fd);
        return NULL;
    }
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, CACHE_MAGIC, 8) ||
        fread(header, sizeof(uint64_t), 3, f) != 3 || header[0] != key || header[1] == 0 ||
        header[1] > (256u << 20))
        goto fail;
    data = malloc(header[1]);
    if (!data || fread(data, 1, header[1], f) != header[1] ||
        hash_bytes(14695981039346656037ULL, data, header[1]) != header[2])
        goto fail;
    fclose(f);
    *size = header[1];
    return data;
fail:
    free(data);
    fclose(f);
    return NULL;
}

/* Writes a binary atomically (temporary file + rename); errors ignored. */
static void cache_store(QgpuContext *ctx, const char *dir, const char *path, uint64_t key,
                        cl_program program)
{
    size_t size = 0;
    unsigned char *data;
    char tmp[1200];
    FILE *f;
    uint64_t header[3];

    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) !=
            CL_SUCCESS ||
        size == 0)
        return;
    data = malloc(size);
    if (!data)
        return;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data, NULL) !=
            CL_SUCCESS ||
        make_dirs(dir)) {
        free(data);
        return;
    }
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    f = fopen(tmp, "wb");
    if (f) {
        header[0] = key;
        header[1] = size;
        header[2] = hash_bytes(14695981039346656037ULL, data, size);
        int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 &&
                 fwrite(header, sizeof(uint64_t), 3, f) == 3 &&
                 fwrite(data, 1, size, f) == size;
        ok = (fclose(f) == 0) && ok;
        if (!ok || rename(tmp, path))
            remove(tmp);
        else
            qgpu_log(ctx, QGPU_LOG_DEBUG, "cached kernel binary %s", path);
    }
    free(data);
}

static int build_log_error(QgpuContext *ctx, cl_program program, const char *name,
                           cl_int status)
{
    char *log = NULL;
    size_t len = 0;
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    if (len)
        log = calloc(1, len + 1);
    if (log)
        clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
    qgpu_error(ctx, QGPU_ERR_BUILD, "building %s.cl for %s failed (%s):\n%s", name,
               ctx->device_name, qgpu_cl_status_name(status), log ? log : "(no build log)");
    free(log);
    return QGPU_ERR_BUILD;
}

static int build_from_source(QgpuContext *ctx, const char *name, const char *source,
                             const char *options, cl_program *out)
{
    cl_int status;
    cl_program program = clCreateProgramWithSource(ctx->cl, 1, &source, NULL, &status);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clCreateProgramWithSource");
    status = clBuildProgram(program, 1, &ctx->device, options, NULL, NULL);
    if (status != CL_SUCCESS) {
        int err = build_log_error(ctx, program, name, status);
        clReleaseProgram(program);
        return err;
    }
    *out = program;
    return 0;
}

static cl_program build_from_binary(QgpuContext *ctx, const unsigned char *data, size_t size,
                                    const char *options)
{
    cl_int status, binary_status;
    cl_program program = clCreateProgramWithBinary(ctx->cl, 1, &ctx->device, &size, &data,
                                                   &binary_status, &status);
    if (status != CL_SUCCESS || binary_status != CL_SUCCESS) {
        if (program)
            clReleaseProgram(program);
        return NULL;
    }
    if (clBuildProgram(program, 1, &ctx->device, options, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(program);
        return NULL;
    }
    return program;
}

int qgpu_program_build(QgpuContext *ctx, const char *name, const char *source,
                       const char *extra_options, cl_program *out)
{
    char options[1024], dir[1024], path[1100];
    uint64_t key;
    int use_cache;

    snprintf(options, sizeof(options), "-cl-std=CL1.2 %s", extra_options ? extra_options : "");
    key = hash_string(14695981039346656037ULL, ctx->device_cache_id);
    key = hash_string(key, options);
    key = hash_string(key, source);
    use_cache = cache_dir(dir, sizeof(dir)) == 0;
    if (use_cache) {
        size_t size = 0;
        unsigned char *data;
        snprintf(path, sizeof(path), "%s/%s-%016" PRIx64 ".bin", dir, name, key);
        data = cache_load(path, key, &size);
        if (data) {
            cl_program program = build_from_binary(ctx, data, size, options);
            free(data);
            if (program) {
                *out = program;
                return 0;
            }
            qgpu_log(ctx, QGPU_LOG_INFO, "cache entry %s unusable, rebuilding", path);
        }
    }
    /* The first build from source can take many seconds (NVIDIA: ~1 s a
     * program); say why the first frames are slow, once a context. */
    if (!ctx->compile_noted) {
        ctx->compile_noted = true;
        if (use_cache)
            qgpu_log(ctx, QGPU_LOG_INFO, "compiling kernels for %s, once; cached in %s",
                     ctx->device_name, dir);
        else
            qgpu_log(ctx, QGPU_LOG_INFO, "compiling kernels for %s (no cache: QGPU_NO_CACHE "
                     "is set or HOME is not)", ctx->device_name);
    }
    int err = build_from_source(ctx, name, source, options, out);
    if (!err && use_cache)
        cache_store(ctx, dir, path, key, *out);
    return err;
}

/* Appends (key, program) to a list; the list takes the program's
 * reference. */
static int list_add(QgpuContext *ctx, QgpuProgram **list, int *count, const char *key,
                    cl_program program)
{
    QgpuProgram *grown = realloc(*list, (*count + 1) * sizeof(*grown));
    char *copy = strdup(key);
    if (grown)
        *list = grown;
    if (!grown || !copy) {
        free(copy);
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    grown[*count].key = copy;
    grown[*count].program = program;
    (*count)++;
    return 0;
}

static cl_program list_find(const QgpuProgram *list, int count, const char *key)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(list[i].key, key))
            return list[i].program;
    return NULL;
}

/* common.cl, then the program's file from its line 1 (build logs then give
 * the file's own line numbers). */
static int build_named(QgpuContext *ctx, const char *name, const char *options,
                       cl_program *program)
{
    const char *source = qgpu_kernel_source(name), *prelude = qgpu_kernel_source("common");
    char *full;
    int err;
    if (!source || !prelude)
        return qgpu_error(ctx, QGPU_ERR_BUILD, "no embedded kernel source %s.cl",
                          source ? "common" : name);
    full = malloc(strlen(prelude) + strlen(source) + sizeof("#line 1\n"));
    if (!full)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    strcpy(full, prelude);
    strcat(full, "#line 1\n");
    strcat(full, source);
    err = qgpu_program_build(ctx, name, full, options, program);
    free(full);
    return err;
}

/* A context's program: from its own list, else (qgpu_open_shared) from the
 * shared device's, else built; a program built on a shared device goes to
 * its list too (built once per device, under its lock). */
int qgpu_program_get(QgpuContext *ctx, const char *name, const char *options,
                     cl_program *program)
{
    char key[512];
    QgpuProgram **shared = NULL;
    int *nb_shared = NULL, err = 0;

    snprintf(key, sizeof(key), "%s|%s", name, options ? options : "");
    if ((*program = list_find(ctx->programs, ctx->nb_programs, key)))
        return 0;
    if (ctx->shared)
        shared = qgpu_shared_programs(ctx->shared, &nb_shared);
    if (shared && (*program = list_find(*shared, *nb_shared, key)))
        clRetainProgram(*program);
    else if (!(err = build_named(ctx, name, options, program)) && shared) {
        if ((err = list_add(ctx, shared, nb_shared, key, *program)))
            clReleaseProgram(*program);
        else
            clRetainProgram(*program); /* one for the device, one for the context */
    }
    if (shared)
        qgpu_shared_unlock(ctx->shared);
    if (!err && (err = list_add(ctx, &ctx->programs, &ctx->nb_programs, key, *program)))
        clReleaseProgram(*program);
    return err;
}

void qgpu_programs_release(QgpuContext *ctx)
{
    for (int i = 0; i < ctx->nb_programs; i++) {
        clReleaseProgram(ctx->programs[i].program);
        free(ctx->programs[i].key);
    }
    free(ctx->programs);
    ctx->programs = NULL;
    ctx->nb_programs = 0;
}
