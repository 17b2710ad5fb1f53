#ifndef XG_BANNED_H
#define XG_BANNED_H
/*
 * Functions that invite buffer overflows or hidden state.  Use xg_buf, the
 * bounded snprintf, or a hand-written scanner instead.  Included last by
 * xg.h, after the system headers, so any use is a compile error.
 */
#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)

#endif
