/**
 * The packed INT4 format this version writes and reads (native/src/quant/qpacked.h): the packer's manifest records
 * both, and preparation reuses a packed folder only when they match.
 */
export const QPACKED_FORMAT = 'qpacked-v2';
export const QPACKED_CODEBOOK = 'hq4nl';
