#ifndef XG_CPU_H
#define XG_CPU_H
/*
 * What the processor can do, for the hashes' fast paths (sha1.c,
 * sha256.c).  The C library read CPUID once when the process started and
 * is asked here; asking CPUID again would cost a virtual machine an exit
 * to its host each time.
 */

/* 1 when the x86-64 SHA extensions are there with the SSSE3 and SSE4.1
 * their callers use (SHA-NI), else 0. */
int xg_cpu_sha_ni(void);

#endif
