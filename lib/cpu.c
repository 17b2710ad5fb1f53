/*
 * What the processor can do (cpu.h): from glibc's table of the features it
 * found at start where there is one, else from CPUID, asked once.
 */
#include "xg.h"
#include "cpu.h"
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define FROM_LIBC 1
#else
#include <cpuid.h>
#define FROM_CPUID 1
#endif
#endif

#ifdef FROM_CPUID
static int probe_sha_ni(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b >> 29) & 1;
}
#endif

int xg_cpu_sha_ni(void)
{
#if defined(FROM_LIBC)
	return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1);
#elif defined(FROM_CPUID)
	static int known = -1;
	int v = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (v < 0) {
		v = probe_sha_ni();
		__atomic_store_n(&known, v, __ATOMIC_RELAXED);
	}
	return v;
#else
	return 0;
#endif
}
