#ifndef XG_H
#define XG_H
/*
 * The one header every libxg and cmd/ source file includes first: the system
 * headers we use everywhere, libxg's core, and the banned-function list last.
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

#include "banned.h"
#endif
