/* Callbacks that run while blosc2_schunk_append_buffer compresses a chunk read the super-chunk
 * they compress for, as c-blosc2 allows (its test_urcodecs): a registered user codec calls
 * blosc2_vlmeta_get and blosc2_meta_get, a prefilter calls blosc2_vlmeta_get and
 * blosc2_schunk_decompress_chunk of the previous chunk (which runs the codec's decoder, which
 * reads the vlmetalayer too), with 1 and 2 threads, on a plain super-chunk and a cframe file.
 * Every value read is checked. A mutation from the prefilter on the calling thread fails with
 * BLOSC2_ERROR_FAILURE instead of deadlocking, and the append still works. */
#include <pthread.h>
#include <stdatomic.h>

#include "blosc2.h"
#include "harness.h"

enum { ITEMS = 8192, CHUNKBYTES = ITEMS * 4, BLOCKBYTES = 4096, NCHUNKS = 4, CODEC = 244, META = 111 };

static atomic_int bad, enc_calls, dec_calls, pre_calls;
static blosc2_schunk *current;
static int64_t expect_nchunk;
static pthread_t main_thread;
static int mutation_rc;

static void fill(int32_t *b, int chunk) {
  for (int j = 0; j < ITEMS; j++) b[j] = chunk * ITEMS + j;
}

static void check_vlmeta(blosc2_schunk *sc) {
  uint8_t *content = NULL;
  int32_t len = 0;
  if (blosc2_vlmeta_get(sc, "arange", &content, &len) < 0 || len != 1 || content[0] != 222) bad++;
  free(content);
}

static int encoder(const uint8_t *in, int32_t in_len, uint8_t *out, int32_t out_len, uint8_t meta,
                   blosc2_cparams *cparams, const void *chunk) {
  (void)chunk;
  enc_calls++;
  blosc2_schunk *sc = cparams->schunk;
  if (sc == NULL || meta != META || out_len < 8 || in_len < 8) return BLOSC2_ERROR_FAILURE;
  check_vlmeta(sc);
  uint8_t *m = NULL;
  int32_t mlen = 0;
  if (blosc2_meta_get(sc, "m", &m, &mlen) < 0 || mlen != 5 || memcmp(m, "meta!", 5) != 0) bad++;
  free(m);
  const int32_t *v = (const int32_t *)in;
  int32_t step = v[1] - v[0];
  for (int i = 1; i < in_len / 4; i++)
    if (v[i] - v[i - 1] != step) return BLOSC2_ERROR_FAILURE;
  memcpy(out, &v[0], 4);
  memcpy(out + 4, &step, 4);
  return 8;
}

static int decoder(const uint8_t *in, int32_t in_len, uint8_t *out, int32_t out_len, uint8_t meta,
                   blosc2_dparams *dparams, const void *chunk) {
  (void)chunk;
  dec_calls++;
  if (dparams->schunk == NULL || meta != META || in_len < 8) return BLOSC2_ERROR_FAILURE;
  check_vlmeta(dparams->schunk);
  int32_t start, step;
  memcpy(&start, in, 4);
  memcpy(&step, in + 4, 4);
  int32_t *o = (int32_t *)out;
  for (int i = 0; i < out_len / 4; i++) o[i] = start + i * step;
  return out_len;
}

static int prefilter(blosc2_prefilter_params *p) {
  pre_calls++;
  blosc2_schunk *sc = current;
  if (p->nchunk != expect_nchunk) bad++;
  check_vlmeta(sc);
  if (expect_nchunk > 0) {
    int32_t back[ITEMS], want[ITEMS];
    fill(want, (int)expect_nchunk - 1);
    int rc = blosc2_schunk_decompress_chunk(sc, expect_nchunk - 1, back, CHUNKBYTES);
    if (rc != CHUNKBYTES || memcmp(back, want, CHUNKBYTES) != 0) bad++;
  }
  if (pthread_equal(pthread_self(), main_thread) && mutation_rc == 1) {
    uint8_t v = 7;
    mutation_rc = blosc2_vlmeta_update(sc, "arange", &v, 1, NULL);
  }
  memcpy(p->output, p->input, (size_t)p->output_size);
  return 0;
}

static void run_case(const char *urlpath, int nthreads) {
  bad = enc_calls = dec_calls = pre_calls = 0;
  mutation_rc = 1;
  main_thread = pthread_self();
  blosc2_remove_urlpath(urlpath);
  blosc2_prefilter_params pp = {0};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = CODEC;
  cp.compcode_meta = META;
  for (int i = 0; i < BLOSC2_MAX_FILTERS; i++) cp.filters[i] = 0;
  cp.blocksize = BLOCKBYTES;
  cp.nthreads = (int16_t)nthreads;
  cp.prefilter = prefilter;
  cp.preparams = &pp;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)nthreads;
  blosc2_storage st = {.contiguous = urlpath != NULL, .urlpath = (char *)urlpath, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK_NOT_NULL(sc);
  uint8_t m[5] = {'m', 'e', 't', 'a', '!'}, vl = 222;
  CHECK_OK(blosc2_meta_add(sc, "m", m, 5));
  CHECK_OK(blosc2_vlmeta_add(sc, "arange", &vl, 1, NULL));
  current = sc;
  int32_t data[ITEMS];
  for (int i = 0; i < NCHUNKS; i++) {
    expect_nchunk = i;
    fill(data, i);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, CHUNKBYTES), i + 1);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(pre_calls >= NCHUNKS * (CHUNKBYTES / BLOCKBYTES));
  CHECK(enc_calls >= NCHUNKS * (CHUNKBYTES / BLOCKBYTES));
  CHECK(dec_calls > 0);
  if (nthreads == 1) CHECK_EQ_INT(mutation_rc, BLOSC2_ERROR_FAILURE);
  else CHECK(mutation_rc == 1 || mutation_rc == BLOSC2_ERROR_FAILURE);
  check_vlmeta(sc); /* unchanged by the refused update */
  CHECK_EQ_INT(bad, 0);
  for (int i = 0; i < NCHUNKS; i++) {
    int32_t back[ITEMS];
    fill(data, i);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, i, back, CHUNKBYTES), CHUNKBYTES);
    CHECK(memcmp(back, data, CHUNKBYTES) == 0);
  }
  CHECK(sc->cbytes < NCHUNKS * 400); /* the codec stored 8 bytes per block */
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(urlpath);
}

static void test_reentrant_reads_during_append(void) {
  blosc2_codec codec = {.compcode = CODEC, .compname = "ct_arange", .complib = CODEC, .version = 1,
                        .encoder = encoder, .decoder = decoder};
  CHECK_OK(blosc2_register_codec(&codec));
  for (int nthreads = 1; nthreads <= 2; nthreads++) {
    run_case(NULL, nthreads);
    if (harness_current_failed) return;
    run_case("ct_reentrant.b2frame", nthreads);
    if (harness_current_failed) return;
  }
}

int main(void) {
  blosc2_init();
  RUN(test_reentrant_reads_during_append);
  blosc2_destroy();
  return harness_summary();
}
