#ifndef XG_RUN_TOOLS_INT_H
#define XG_RUN_TOOLS_INT_H
/*
 * Shared between tools.c and tools-files.c; not for the loop, which uses
 * run/tools.h.
 */
#include "json.h"

struct xg_tool_ctx;

/* {"ok": ok, "output": output}; consumes output. */
jv xg_tool_result(int ok, jv output);
/* A result with ok false and a formatted output. */
__attribute__((format(printf, 1, 2)))
jv xg_tool_fail(const char *fmt, ...);

/* mkdir -p of path's parent directory, quietly (errno set): the caller
 * reports. */
int xg_tool_mkdir_parents(const char *path);

/* The file tools; args is borrowed. */
jv xg_tool_read(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_write(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_edit(const struct xg_tool_ctx *ctx, jv args);

#endif
