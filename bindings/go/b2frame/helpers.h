/* Field accessors cgo cannot express directly (arrays of struct pointers). */
#ifndef B2FRAME_GO_HELPERS_H
#define B2FRAME_GO_HELPERS_H
#include <blosc2.h>

static inline const char *b2f_meta_name(blosc2_schunk *s, int i) {
  return s->metalayers[i] ? s->metalayers[i]->name : NULL;
}
static inline const char *b2f_vlmeta_name(blosc2_schunk *s, int i) {
  return s->vlmetalayers[i] ? s->vlmetalayers[i]->name : NULL;
}
#endif
