/*
 * b2frame: symbol visibility macros, as c-blosc2's <blosc2/blosc2-export.h> provides them.
 *
 * BLOSC_EXPORT marks the public API. It expands to nothing for consumers; a library build that
 * defines BLOSC_SHARED_LIBRARY gets the platform's export attribute.
 */
#ifndef BLOSC_BLOSC2_BLOSC2_EXPORT_H
#define BLOSC_BLOSC2_BLOSC2_EXPORT_H

#if defined(BLOSC_SHARED_LIBRARY)
#  if defined(_MSC_VER)
#    define BLOSC_EXPORT __declspec(dllexport)
#  elif defined(_WIN32) || defined(__CYGWIN__)
#    define BLOSC_EXPORT __attribute__((dllexport))
#  elif defined(__GNUC__) || defined(__clang__)
#    define BLOSC_EXPORT __attribute__((visibility("default")))
#  else
#    define BLOSC_EXPORT
#  endif
#else
#  define BLOSC_EXPORT
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__MINGW32__)
#  define BLOSC_NO_EXPORT __attribute__((visibility("hidden")))
#else
#  define BLOSC_NO_EXPORT
#endif

#if defined(BLOSC_TESTING)
#  undef BLOSC_NO_EXPORT
#  define BLOSC_NO_EXPORT BLOSC_EXPORT
#endif

#endif /* BLOSC_BLOSC2_BLOSC2_EXPORT_H */
