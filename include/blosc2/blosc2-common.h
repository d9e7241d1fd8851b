/*
 * b2frame: small portability macros that c-blosc2 programs get from <blosc2/blosc2-common.h>.
 */
#ifndef BLOSC_BLOSC2_BLOSC2_COMMON_H
#define BLOSC_BLOSC2_BLOSC2_COMMON_H

#include "blosc2-export.h"

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#  define BLOSC_GCC_VERSION (__GNUC__ * 100 + __GNUC_MINOR__)
#  define BLOSC_UNUSED_VAR __attribute__((unused))
#else
#  define BLOSC_UNUSED_VAR
#endif

#define BLOSC_UNUSED_PARAM(x) ((void)(x))

#if defined(_MSC_VER) && !defined(__cplusplus)
#  define inline __inline
#endif

/* Targets where unaligned loads are slow or trap define BLOSC_STRICT_ALIGN. */
#if !defined(BLOSC_STRICT_ALIGN)
#  if !(defined(__i386__) || defined(__i486__) || defined(__i586__) || defined(__i686__) || \
        defined(__amd64) || defined(__x86_64__) || defined(_M_IX86) || defined(_M_X64) ||    \
        defined(_X86_) || defined(__I86__) || defined(__386) || defined(_ARCH_PPC) ||       \
        defined(__PPC__) || (defined(__ARM_FEATURE_UNALIGNED) && defined(__ARM64_ARCH_8__)))
#    define BLOSC_STRICT_ALIGN
#  endif
#endif

/* c-blosc2 programs may use SIMD intrinsics without including these themselves. */
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif
#if defined(__AVX2__) || defined(__AVX512F__) || defined(__AVX512BW__)
#  include <immintrin.h>
#endif

#endif /* BLOSC_BLOSC2_BLOSC2_COMMON_H */
