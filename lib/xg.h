#ifndef XG_H
#define XG_H
/*
 * The one header every libxg and cmd/ source file includes first: the system
 * headers we use everywhere, libxg's core, one macro, and the
 * banned-function list last.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "alloc.h"
#include "buf.h"
#include "json.h"
#include "rec.h"
#include "fs.h"
#include "path.h"
#include "opt.h"
#include "prog.h"
#include "clock.h"
#include "redact.h"
#include "steer.h"

/* A macro's value as a string literal: XG_STR(XG_TOOL_MAX_LINES). */
#define XG_STR_(x) #x
#define XG_STR(x) XG_STR_(x)

#include "banned.h"
#endif
