/*
 * Log files in libvmaf's layouts (JSON, XML, CSV, SUB), so tools that parse
 * libvmaf logs read ours. Values print as libvmaf prints them: "%.6f", or
 * "%.16f" when a non-zero value has more than six leading fractional zeros;
 * NaN and infinities as null (JSON) or "nan"/"inf" (others). Numbers always
 * use '.' (the C numeric locale, whatever the host program set).
 *
 * Every string (score names, the device name, extra fields) is escaped for
 * its format: JSON string escapes, XML character references (names that
 * are not XML names, used as attribute names in <frame>, are encoded as
 * _xHHHH_), RFC 4180 quoting in CSV; in every format a byte sequence that
 * is not UTF-8 becomes U+FFFD.
 *
 * A log whose target is a regular file (or does not exist yet) is written
 * to a temporary file in the same directory and renamed over the target
 * once complete and synced, so a failed write (full disk, file size limit,
 * I/O error) leaves the previous file, or none, never a truncated log.
 * Other targets (stdout, devices, FIFOs, a file with several hard links,
 * a file in a directory we cannot create files in) are written in place;
 * every write error is still reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "c_locale.h"
#include "internal.h"

/* ------------------------------------------------------------ strings */

/* The next code point of UTF-8 text (advancing *s), or -1 for a byte that
 * does not start a valid sequence (overlong, surrogate, > U+10FFFF,
 * truncated), which then advances one byte. */
static long next_code_point(const unsigned char **s)
{
    const unsigned char *p = *s;
    long cp;
    int n;
    if (p[0] < 0x80) {
        *s = p + 1;
        return p[0];
    }
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 1, cp = p[0] & 0x1F;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        n = 2, cp = p[0] & 0x0F;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        n = 3, cp = p[0] & 0x07;
    else
        goto invalid;
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            goto invalid;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        goto invalid;
    *s = p + n + 1;
    return cp;
invalid:
    *s = p + 1;
    return -1;
}

static void put_code_point(FILE *f, long cp)
{
    if (cp < 0x80) {
        fputc((int)cp, f);
    } else if (cp < 0x800) {
        fputc((int)(0xC0 | cp >> 6), f);
        fputc((int)(0x80 | (cp & 0x3F)), f);
    } else if (cp < 0x10000) {
        fputc((int)(0xE0 | cp >> 12), f);
        fputc((int)(0x80 | (cp >> 6 & 0x3F)), f);
        fputc((int)(0x80 | (cp & 0x3F)), f);
    } else {
        fputc((int)(0xF0 | cp >> 18), f);
        fputc((int)(0x80 | (cp >> 12 & 0x3F)), f);
        fputc((int)(0x80 | (cp >> 6 & 0x3F)), f);
        fputc((int)(0x80 | (cp & 0x3F)), f);
    }
}

#define REPLACEMENT 0xFFFD

/* JSON string, quoted. */
static void print_json_string(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    fputc('"', f);
    while (*s) {
        long cp = next_code_point(&s);
        if (cp == '"' || cp == '\\')
            fprintf(f, "\\%c", (int)cp);
        else if (cp >= 0 && cp < 0x20)
            fprintf(f, "\\u%04lx", cp);
        else
            put_code_point(f, cp < 0 ? REPLACEMENT : cp);
    }
    fputc('"', f);
}

/* Characters XML 1.0 can hold at all. */
static int xml_char(long cp)
{
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
}

/* XML attribute value (between double quotes). */
static void print_xml_attr(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        long cp = next_code_point(&s);
        switch (cp) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\t': fputs("&#9;", f); break;
        case '\n': fputs("&#10;", f); break;
        case '\r': fputs("&#13;", f); break;
        default: put_code_point(f, cp < 0 || !xml_char(cp) ? REPLACEMENT : cp);
        }
    }
}

/* An XML attribute name: characters a name cannot hold (and a leading
 * digit, '-' or '.') are written as _xHHHH_, as XmlConvert.EncodeName
 * does, so different names stay different; "_x" itself is encoded too. */
static void print_xml_name(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    int first = 1;
    if (!*s)
        fputs("_x0000_", f);
    while (*s) {
        long cp = next_code_point(&s);
        int ok = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_' ||
                 (cp >= 0xC0 && cp != 0xD7 && cp != 0xF7 && xml_char(cp) && cp != 0xFFFD);
        if (!first)
            ok = ok || (cp >= '0' && cp <= '9') || cp == '-' || cp == '.';
        if (cp == '_' && *s == 'x')
            ok = 0;
        if (ok)
            put_code_point(f, cp);
        else
            fprintf(f, "_x%04lX_", cp < 0 ? (long)REPLACEMENT : cp);
        first = 0;
    }
}

/* CSV field (RFC 4180): quoted when it holds a comma, quote or line break. */
static void print_csv_field(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    int quote = strpbrk(text, ",\"\r\n") != NULL;
    if (quote)
        fputc('"', f);
    while (*s) {
        long cp = next_code_point(&s);
        if (cp == '"')
            fputs("\"\"", f);
        else
            put_code_point(f, cp < 0 ? REPLACEMENT : cp);
    }
    if (quote)
        fputc('"', f);
}

/* SUB (MicroDVD) has no escapes: '|' (its separator), braces and control
 * characters become '_'. */
static void print_sub_text(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        long cp = next_code_point(&s);
        if (cp == '|' || cp == '{' || cp == '}' || (cp >= 0 && cp < 0x20) || cp == 0x7F)
            fputc('_', f);
        else
            put_code_point(f, cp < 0 ? REPLACEMENT : cp);
    }
}

/* ------------------------------------------------------------- values */

static void print_value(FILE *f, double v, int json)
{
    if (isnan(v) || isinf(v)) {
        if (json)
            fputs("null", f);
        else
            fputs(isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"), f);
        return;
    }
    if (v != 0.0 && fabs(v) < 1e-6)
        fprintf(f, "%.16f", v);
    else
        fprintf(f, "%.6f", v);
}

/* An extra field's value: a string, an integer when the number is one,
 * else as scores print. */
static void print_field_value(FILE *f, const QgpuLogField *field, int json)
{
    double v = field->number;
    if (field->string) {
        if (json)
            print_json_string(f, field->string);
        else
            print_xml_attr(f, field->string);
    } else if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0) {
        fprintf(f, "%.0f", v);
    } else {
        print_value(f, v, json);
    }
}

static const char *const pool_names[4] = {"min", "max", "mean", "harmonic_mean"};
static const int pool_methods[4] = {QGPU_POOL_MIN, QGPU_POOL_MAX, QGPU_POOL_MEAN,
                                    QGPU_POOL_HARMONIC_MEAN};

/* Frames a log with --subsample N lists (libvmaf: every index i % N == 0). */
#define SKIPPED(i, sub) ((sub) > 1 && (i) % (sub))

/* ------------------------------------------------------------ formats */

/* One frame's scores as JSON object members, "frameNum": N, "metrics":
 * {...}, with the given white space: after "frameNum", before the first
 * and between the other metrics, and the closing braces. */
static void write_json_frame(const QgpuContext *ctx, FILE *f, unsigned i, const char *space,
                             const char *first, const char *sep, const char *close)
{
    fprintf(f, "\"frameNum\": %u,%s\"metrics\": {", i, space);
    for (int k = 0; k < ctx->scores.nb_names; k++) {
        fputs(k ? sep : first, f);
        print_json_string(f, ctx->scores.names[k]);
        fputs(": ", f);
        print_value(f, qgpu_score_value(ctx, k, i), 1);
    }
    fputs(close, f);
}

static void write_json(const QgpuContext *ctx, FILE *f, double fps, unsigned sub,
                       const QgpuLogField *fields, int nb_fields)
{
    int first = 1;
    int n = ctx->scores.nb_names;
    fprintf(f, "{\n  \"version\": \"%s\",\n  \"fps\": %.2f,\n  \"device\": ", qgpu_version(),
            fps);
    print_json_string(f, ctx->device_name);
    for (int i = 0; i < nb_fields; i++) {
        fputs(",\n  ", f);
        print_json_string(f, fields[i].name);
        fputs(": ", f);
        print_field_value(f, &fields[i], 1);
    }
    fputs(",\n  \"frames\": [", f);
    for (unsigned i = 0; i < ctx->finalized; i++) {
        if (SKIPPED(i, sub))
            continue;
        fprintf(f, "%s\n    {\n      ", first ? "" : ",");
        first = 0;
        write_json_frame(ctx, f, i, "\n      ", "\n        ", ",\n        ", "\n      }\n    }");
    }
    fputs("\n  ],\n  \"pooled_metrics\": {", f);
    for (int k = 0; k < n; k++) {
        fputs(k ? ",\n    " : "\n    ", f);
        print_json_string(f, ctx->scores.names[k]);
        fputs(": {", f);
        for (int m = 0; m < 4; m++) {
            double v = NAN;
            /* over the logged frames only, as libvmaf pools */
            qgpu_get_pooled_subsampled(ctx, ctx->scores.names[k], pool_methods[m], sub, &v);
            fprintf(f, "%s\n      \"%s\": ", m ? "," : "", pool_names[m]);
            print_value(f, v, 1);
        }
        fputs("\n    }", f);
    }
    fputs("\n  },\n  \"aggregate_metrics\": {", f);
    for (int k = 0; k < ctx->scores.nb_agg; k++) {
        fputs(k ? ",\n    " : "\n    ", f);
        print_json_string(f, ctx->scores.agg_names[k]);
        fputs(": ", f);
        print_value(f, ctx->scores.agg_values[k], 1);
    }
    fputs("\n  }\n}\n", f);
}

static void write_xml(const QgpuContext *ctx, FILE *f, double fps, unsigned sub,
                      const QgpuLogField *fields, int nb_fields)
{
    int n = ctx->scores.nb_names;
    fprintf(f, "<VMAF version=\"%s\">\n", qgpu_version());
    fprintf(f, "  <params qualityWidth=\"%d\" qualityHeight=\"%d\" />\n", ctx->fmt.width,
            ctx->fmt.height);
    fprintf(f, "  <fyi fps=\"%.2f\" device=\"", fps);
    print_xml_attr(f, ctx->device_name);
    fputc('"', f);
    for (int i = 0; i < nb_fields; i++) {
        fputc(' ', f);
        print_xml_name(f, fields[i].name);
        fputs("=\"", f);
        print_field_value(f, &fields[i], 0);
        fputc('"', f);
    }
    fputs(" />\n  <frames>\n", f);
    for (unsigned i = 0; i < ctx->finalized; i++) {
        if (SKIPPED(i, sub))
            continue;
        fprintf(f, "    <frame frameNum=\"%u\"", i);
        for (int k = 0; k < n; k++) {
            fputc(' ', f);
            print_xml_name(f, ctx->scores.names[k]);
            fputs("=\"", f);
            print_value(f, qgpu_score_value(ctx, k, i), 0);
            fputc('"', f);
        }
        fputs(" />\n", f);
    }
    fputs("  </frames>\n  <pooled_metrics>\n", f);
    for (int k = 0; k < n; k++) {
        fputs("    <metric name=\"", f);
        print_xml_attr(f, ctx->scores.names[k]);
        fputc('"', f);
        for (int m = 0; m < 4; m++) {
            double v = NAN;
            /* over the logged frames only, as libvmaf pools */
            qgpu_get_pooled_subsampled(ctx, ctx->scores.names[k], pool_methods[m], sub, &v);
            fprintf(f, " %s=\"", pool_names[m]);
            print_value(f, v, 0);
            fputc('"', f);
        }
        fputs(" />\n", f);
    }
    fputs("  </pooled_metrics>\n  <aggregate_metrics", f);
    for (int k = 0; k < ctx->scores.nb_agg; k++) {
        fputc(' ', f);
        print_xml_name(f, ctx->scores.agg_names[k]);
        fputs("=\"", f);
        print_value(f, ctx->scores.agg_values[k], 0);
        fputc('"', f);
    }
    fputs(" />\n</VMAF>\n", f);
}

static void write_csv(const QgpuContext *ctx, FILE *f, unsigned sub)
{
    int n = ctx->scores.nb_names;
    fputs("Frame,", f);
    for (int k = 0; k < n; k++) {
        print_csv_field(f, ctx->scores.names[k]);
        fputc(',', f);
    }
    fputc('\n', f);
    for (unsigned i = 0; i < ctx->finalized; i++) {
        if (SKIPPED(i, sub))
            continue;
        fprintf(f, "%u,", i);
        for (int k = 0; k < n; k++) {
            print_value(f, qgpu_score_value(ctx, k, i), 0);
            fputc(',', f);
        }
        fputc('\n', f);
    }
}

static void write_sub(const QgpuContext *ctx, FILE *f, unsigned sub)
{
    int n = ctx->scores.nb_names;
    for (unsigned i = 0; i < ctx->finalized; i++) {
        if (SKIPPED(i, sub))
            continue;
        fprintf(f, "{%u}{%u}frame: %u|", i, i + 1, i);
        for (int k = 0; k < n; k++) {
            print_sub_text(f, ctx->scores.names[k]);
            fputs(": ", f);
            print_value(f, qgpu_score_value(ctx, k, i), 0);
            fputc('|', f);
        }
        fputc('\n', f);
    }
}

static void write_log(const QgpuContext *ctx, FILE *f, const QgpuLogOptions *o)
{
    QgpuCLocale locale;
    double fps = isfinite(o->fps) ? o->fps : 0.0; /* "unknown": NaN/inf are not JSON */
    const QgpuLogField *fields = o->nb_fields > 0 ? o->fields : NULL;
    int nb_fields = fields ? o->nb_fields : 0;
    qgpu_c_locale_begin(&locale);
    switch (o->format) {
    case QGPU_LOG_FORMAT_JSON: write_json(ctx, f, fps, o->subsample, fields, nb_fields); break;
    case QGPU_LOG_FORMAT_XML: write_xml(ctx, f, fps, o->subsample, fields, nb_fields); break;
    case QGPU_LOG_FORMAT_CSV: write_csv(ctx, f, o->subsample); break;
    default: write_sub(ctx, f, o->subsample); break;
    }
    qgpu_c_locale_end(&locale);
}

/* ----------------------------------------------------- the log's file */

/* Where and how a log is written: in place (tmp NULL) or through tmp. */
typedef struct LogTarget {
    char *final;   /* the file the log ends up in (symbolic links followed) */
    char *tmp;     /* temporary file in the same directory, renamed to final */
    FILE *f;
} LogTarget;

static int io_error(const QgpuContext *ctx, const char *what, const char *path, int err)
{
    return qgpu_error((QgpuContext *)ctx, QGPU_ERR_IO, "%s %s: %s", what, path,
                      strerror(err));
}

/* A temporary file next to final, created with 0666 & ~umask (the mode a
 * new log gets), or with the mode of the file it replaces. */
static int open_temporary(LogTarget *t, const struct stat *old)
{
    static unsigned counter;
    const char *slash = strrchr(t->final, '/');
    size_t dir_len = slash ? (size_t)(slash - t->final) + 1 : 0;
    size_t len = strlen(t->final) + 64;
    int fd = -1;
    t->tmp = malloc(len);
    if (!t->tmp)
        return ENOMEM;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        unsigned r = (unsigned)time(NULL) ^ (unsigned)clock() ^ (++counter * 2654435761u);
        snprintf(t->tmp, len, "%.*s.%s.%ld-%08x.tmp", (int)dir_len, t->final,
                 t->final + dir_len, (long)getpid(), r);
        fd = open(t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int err = errno;
        free(t->tmp);
        t->tmp = NULL;
        return err;
    }
    if (old)
        (void)fchmod(fd, old->st_mode & 07777);
    t->f = fdopen(fd, "w");
    if (!t->f) {
        int err = errno;
        close(fd);
        unlink(t->tmp);
        free(t->tmp);
        t->tmp = NULL;
        return err;
    }
    return 0;
}

/* Opens the log's target: 0 or a QGPU_ERR_IO with the message set. */
static int open_target(const QgpuContext *ctx, const char *path, LogTarget *t)
{
    struct stat st, real_st;
    int exists = stat(path, &st) == 0;
    int err;
    memset(t, 0, sizeof(*t));
    if (!exists && errno != ENOENT)
        return io_error(ctx, "cannot write log", path, errno);
    if (exists && S_ISDIR(st.st_mode))
        return io_error(ctx, "cannot write log", path, EISDIR);
    /* in place: devices, FIFOs, sockets, several hard links, and files
     * that are not what their name resolves to (/proc/self/fd/N of a
     * deleted or anonymous file) */
    if (exists && (!S_ISREG(st.st_mode) || st.st_nlink != 1))
        goto in_place;
    if (exists) {
        t->final = realpath(path, NULL);
        if (!t->final || stat(t->final, &real_st) || real_st.st_dev != st.st_dev ||
            real_st.st_ino != st.st_ino) {
            free(t->final);
            t->final = NULL;
            goto in_place;
        }
    } else {
        t->final = strdup(path);
        if (!t->final)
            return qgpu_error((QgpuContext *)ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    err = open_temporary(t, exists ? &st : NULL);
    if (err == 0)
        return 0;
    free(t->final);
    t->final = NULL;
    if (!exists) /* the directory does not take new files: the log cannot be created */
        return io_error(ctx, "cannot write log", path, err);
in_place:
    t->f = fopen(path, "w");
    if (!t->f)
        return io_error(ctx, "cannot write log", path, errno);
    return 0;
}

/* Completes the log: flushed, synced and renamed; 0 or QGPU_ERR_IO. The
 * temporary file is removed on any error. */
static int close_target(const QgpuContext *ctx, const char *path, LogTarget *t)
{
    int err = 0;
    errno = 0;
    if (fflush(t->f) || ferror(t->f))
        err = errno ? errno : EIO;
    if (!err && t->tmp && fsync(fileno(t->f)) && errno != EINVAL && errno != EROFS)
        err = errno;
    errno = 0;
    if (fclose(t->f) && !err)
        err = errno ? errno : EIO;
    t->f = NULL;
    if (t->tmp) {
        if (!err && rename(t->tmp, t->final))
            err = errno;
        if (err)
            unlink(t->tmp);
    }
    free(t->tmp);
    free(t->final);
    memset(t, 0, sizeof(*t));
    if (err)
        return io_error(ctx, "error writing log", path, err);
    return 0;
}

/* ----------------------------------------------------------- the API */

int qgpu_write_log_ex(const QgpuContext *ctx, const char *path, const QgpuLogOptions *opts)
{
    LogTarget t;
    int ret;
    if (!ctx || !path || !*path || !opts || opts->format < QGPU_LOG_FORMAT_JSON ||
        opts->format > QGPU_LOG_FORMAT_SUB || opts->nb_fields < 0 ||
        (opts->nb_fields > 0 && !opts->fields))
        return QGPU_ERR_INVALID_ARG;
    for (int i = 0; i < opts->nb_fields; i++)
        if (!opts->fields[i].name)
            return QGPU_ERR_INVALID_ARG;
    if (!strcmp(path, "-")) {
        errno = 0;
        write_log(ctx, stdout, opts);
        if (fflush(stdout) || ferror(stdout)) {
            int err = errno ? errno : EIO;
            clearerr(stdout);
            return io_error(ctx, "error writing log to", "stdout", err);
        }
        return 0;
    }
    if ((ret = open_target(ctx, path, &t)))
        return ret;
    write_log(ctx, t.f, opts);
    return close_target(ctx, path, &t);
}

int qgpu_write_log(const QgpuContext *ctx, const char *path, int format, double fps)
{
    return qgpu_write_log_subsampled(ctx, path, format, fps, 1);
}

int qgpu_write_log_subsampled(const QgpuContext *ctx, const char *path, int format, double fps,
                              unsigned subsample)
{
    QgpuLogOptions o = {format, fps, subsample, NULL, 0};
    return qgpu_write_log_ex(ctx, path, &o);
}

int qgpu_frame_json(const QgpuContext *ctx, unsigned frame, char *buf, size_t len)
{
    QgpuCLocale locale;
    char *text = NULL;
    size_t size = 0;
    FILE *f;
    if (!ctx || (!buf && len))
        return QGPU_ERR_INVALID_ARG;
    if (frame >= ctx->finalized)
        return qgpu_error((QgpuContext *)ctx, QGPU_ERR_INVALID_ARG,
                          "frame %u is not final (%u final)", frame, ctx->finalized);
    f = open_memstream(&text, &size);
    if (!f)
        return qgpu_error((QgpuContext *)ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    qgpu_c_locale_begin(&locale);
    fputc('{', f);
    write_json_frame(ctx, f, frame, " ", "", ", ", "}}");
    qgpu_c_locale_end(&locale);
    if (fclose(f) || !text) {
        free(text);
        return qgpu_error((QgpuContext *)ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    if (len)
        snprintf(buf, len, "%s", text);
    free(text);
    return size > INT_MAX ? QGPU_ERR_NO_MEMORY : (int)size;
}
