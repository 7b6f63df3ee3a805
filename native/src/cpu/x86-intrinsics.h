#pragma once
// <immintrin.h> for the CPU kernels with AVX-512 paths (compiled with per-function target attributes, so every x86-64
// build carries them). GCC 12's AVX-512 headers build some results from _mm512_undefined_*(), which its own flow
// analysis then reports as uninitialised; those reports are switched off for the including file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
