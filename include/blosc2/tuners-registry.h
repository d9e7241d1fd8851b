/*
 * b2frame: ids of c-blosc2's globally registered tuner plugins (not shipped by b2frame).
 */
#ifndef BLOSC_BLOSC2_TUNERS_REGISTRY_H
#define BLOSC_BLOSC2_TUNERS_REGISTRY_H

enum {
  BLOSC_BTUNE = 32,
};

#endif /* BLOSC_BLOSC2_TUNERS_REGISTRY_H */
