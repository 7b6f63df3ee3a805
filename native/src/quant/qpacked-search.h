#pragma once
// The scale search of one qpacked-v2 group (qpacked.h gives the algorithm): the scalar reference and an AVX2 path that
// runs the ten candidates side by side, four to a vector of doubles, with the reference's sums in its order, and finds
// each nearest level by comparing the quotient in float, eight lanes at once, where that cannot differ from comparing
// it in double (elsewhere it divides and compares in double). Both give the same codes and scale bits. The packer
// spends nearly all its time here.
#include <cmath>
#include <cstdint>

namespace rt {

/**
 * Each candidate's refit scale d1 and squared error E (NaN where its FP16 scale is not finite, or where the group is
 * all zero), for tests: the two searches must agree on these bit for bit, not only on the winner.
 */
struct qpacked_search_trace {
  double d1[10];
  double err[10];
  /** Every entry NaN, as a search starts. */
  void clear();
};

/** The first index of the largest |x[c]| of a group: its value m sets the first scales m / candidate. */
inline int qpacked_largest_index(const float * x, int group) {
  int imax = 0;
  for (int c = 1; c < group; ++c) {
    if (std::fabs(x[c]) > std::fabs(x[imax])) imax = c;
  }
  return imax;
}

/** Codes u[0..group) and FP16 scale bits of group x (group even), as qpacked.h specifies. */
void qpacked_search_group_scalar(const float * x, int group, uint8_t * u, uint16_t * h, qpacked_search_trace * trace = nullptr);

/** The same on the AVX2 path (a build or CPU without it: false, nothing written). */
bool qpacked_search_group_avx2(const float * x, int group, uint8_t * u, uint16_t * h, qpacked_search_trace * trace = nullptr);

}  // namespace rt
