/*
 * b2frame: ids of c-blosc2's globally registered filter plugins (not shipped by b2frame).
 */
#ifndef BLOSC_BLOSC2_FILTERS_REGISTRY_H
#define BLOSC_BLOSC2_FILTERS_REGISTRY_H

enum {
  BLOSC_FILTER_NDCELL = 32,
  BLOSC_FILTER_NDMEAN = 33,
  BLOSC_FILTER_BYTEDELTA_BUGGY = 34,
  BLOSC_FILTER_BYTEDELTA = 35,
  BLOSC_FILTER_INT_TRUNC = 36,
};

#endif /* BLOSC_BLOSC2_FILTERS_REGISTRY_H */
