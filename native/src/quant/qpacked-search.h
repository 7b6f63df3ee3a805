#pragma once
// The scale search of one qpacked-v2 group (qpacked.h gives the algorithm): the scalar reference and an AVX2 path that
// runs the ten candidates side by side, four to a vector, each lane doing the reference's double operations in its
// order, so both give the same codes and scale bits. The packer spends nearly all its time here.
#include <cstdint>

namespace rt {

/** Codes u[0..group) and FP16 scale bits of group x (group even), as qpacked.h specifies. */
void qpacked_search_group_scalar(const float * x, int group, uint8_t * u, uint16_t * h);

/** The same on the AVX2 path (a build or CPU without it: false, nothing written). */
bool qpacked_search_group_avx2(const float * x, int group, uint8_t * u, uint16_t * h);

}  // namespace rt
